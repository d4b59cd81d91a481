#version 450
// The Vulkan Subgroup Tutorial's "fancy reduction" with subgroupShuffleXor (seeds/000), as a
// compute kernel on integers: a butterfly over the subgroup, the loop bounded by 128 (the largest
// subgroup) with a break at gl_SubgroupSize, as the tutorial explains. Every invocation then checks
// the butterfly against subgroupAdd and writes 1 where they agree.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) readonly buffer In {
  uint x[];
};
layout(std430, set = 0, binding = 1) buffer Out {
  uint ok[];
};
void main() {
  uint temp = x[gl_GlobalInvocationID.x];
  for (uint i = 1; i <= 128; i *= 2) {
    if (gl_SubgroupSize == i) {
      break;
    }
    uint other = subgroupShuffleXor(temp, i);
    temp = temp + other;
  }
  ok[gl_GlobalInvocationID.x] = temp == subgroupAdd(x[gl_GlobalInvocationID.x]) ? 1 : 0;
}
