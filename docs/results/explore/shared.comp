#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// A reduction and a barrier before a branch on a never-written variable; both ways store 2x.
layout(local_size_x = 64) in;
layout(binding = 0) buffer B { uint b[]; };
shared uint t[64];
void main() {
  uint u;
  uint i = gl_LocalInvocationIndex;
  t[i] = subgroupAdd(i);
  barrier();
  uint x = t[(i + 1u) % 64u];
  if (u > 5u) { b[gl_GlobalInvocationID.x] = x * 2u; } else { b[gl_GlobalInvocationID.x] = x + x; }
}
