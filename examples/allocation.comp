#version 450
// Seed 001's allocation kernel, the rewritten version: one atomicAdd per subgroup reserves a slot
// for every invocation that needs one. `needs_space` comes from a buffer. Without
// [[subgroup_uniform_control_flow]], base Vulkan pins the subgroupElect branch's reconvergence down
// only where the whole workgroup entered `if (subgroupAny(...))` together.
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_ballot : enable
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;
// Free should be initialized to 0. (The seed keeps `free` and `data` in one buffer; apart, the
// model can say that `free` ends the same whatever order the subgroups ran their atomicAdd in,
// while where each subgroup's slice lands in `data` depends on it.)
layout(set = 0, binding = 0) buffer FREE {
  uint free;
} b;
layout(set = 0, binding = 1) readonly buffer NEEDS {
  uint needs[];
} n;
layout(set = 0, binding = 2) buffer DATA {
  uint data[];
} d;
void main() {
  bool needs_space = n.needs[gl_GlobalInvocationID.x] != 0;
  if (subgroupAny(needs_space)) {
    // gl_SubgroupSize may be larger than the actual subgroup size so
    // calculate the actual subgroup size.
    uvec4 mask = subgroupBallot(needs_space);
    uint size = subgroupBallotBitCount(mask);
    uint base = 0;
    if (subgroupElect()) {
      // "free" tracks the next free slot for writes.
      base = atomicAdd(b.free, size);
    }
    // Broadcast the base index to other invocations in the subgroup.
    base = subgroupBroadcastFirst(base);
    // Calculate the offset from "base" for each invocation.
    uint offset = subgroupBallotExclusiveBitCount(mask);
    if (needs_space) {
      // Write the data in the allocated slot for each invocation that requested space.
      d.data[base + offset] = gl_GlobalInvocationID.x + 100;
    }
  }
}
