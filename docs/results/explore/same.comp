#version 450
layout(local_size_x = 8) in;
layout(binding = 0) buffer B { uint b[]; };
void main() {
  uint u;
  uint i = gl_LocalInvocationIndex;
  if (u > 5u) { b[i] = i * 3u; } else { b[i] = i + i + i; }
}
