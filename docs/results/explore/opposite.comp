#version 450
layout(local_size_x = 8) in;
layout(binding = 0) buffer B { uint b[]; };
void main() {
  uint u;
  uint i = gl_LocalInvocationIndex;
  if (u > 5u) { if (i == 0u) { b[0] = 1u; } } else { if (i == 1u) { b[0] = 1u; } }
}
