#version 450
// Both ways of a branch on a never-written variable compute the same float: 2a == a + a exactly.
layout(local_size_x = 64) in;
layout(binding = 0) buffer B { float b[]; };
void main() {
  float u;
  uint i = gl_GlobalInvocationID.x;
  float a = float(i) * 0.37;
  float r;
  if (u > 0.5) { r = a * 2.0; } else { r = a + a; }
  b[i] = r;
}
