#version 450
// A bug `lockstep run` explains: each invocation adds its right-hand neighbour's value, read with
// subgroupShuffleDown(x, 1). The last invocation of every subgroup reads a lane past the end of
// the subgroup: the result there is undefined (GL_KHR_shader_subgroup: "If the value of delta is
// greater than or equal to gl_SubgroupSize... the result is undefined"), and the model says which
// element, why, and what the device wrote there anyway.
#extension GL_KHR_shader_subgroup_shuffle_relative : enable
layout(local_size_x = 16) in;
layout(std430, set = 0, binding = 0) readonly buffer In {
  float x[];
};
layout(std430, set = 0, binding = 1) writeonly buffer Out {
  float y[];
};
void main() {
  uint i = gl_GlobalInvocationID.x;
  float right = subgroupShuffleDown(x[i], 1);
  y[i] = x[i] + right;
}
