#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// One workgroup of 64 sums its 64 inputs: a subgroup add, one partial per subgroup in shared
// memory, a barrier, then the first invocation adds the partials.
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer In { uint data[]; };
layout(binding = 1) buffer Out { uint total[]; };
shared uint partial[64];
void main() {
    uint i = gl_LocalInvocationID.x;
    uint s = subgroupAdd(data[gl_GlobalInvocationID.x]);
    if (subgroupElect()) {
        partial[gl_SubgroupID] = s;
    }
#ifndef FORGET_BARRIER
    barrier();
#endif
    if (i == 0u) {
        uint sum = 0u;
        for (uint k = 0u; k < gl_NumSubgroups; ++k) {
            sum += partial[k];
        }
        total[gl_WorkGroupID.x] = sum;
    }
}
