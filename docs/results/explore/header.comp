#version 450
// A variable set before a branch on a never-written value, used after the merge past a barrier.
layout(local_size_x = 64) in;
layout(binding = 0) buffer B { uint b[]; };
shared uint t[64];
void main() {
  uint u;
  uint i = gl_GlobalInvocationID.x;
  if (u > 5u) { t[gl_LocalInvocationIndex] = 1u; }
  barrier();
  b[i] = i * 7u;
}
