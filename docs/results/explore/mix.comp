#version 450
layout(local_size_x = 8) in;
layout(binding = 0) buffer B { uint b[]; };
void main() {
  uint u;
  uint i = gl_LocalInvocationIndex;
  b[i] = mix(i * 2u, i * 2u, u > 5u);
}
