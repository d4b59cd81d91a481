#version 450
// GraphicsFuzz's shape: a loop that returns 42 on either side of a branch on an uninitialised
// limiter; every invocation of every workgroup writes its own element.
layout(local_size_x = 32) in;
layout(binding = 0) buffer B { float b[]; };
float f() {
  float s = 0.0;
  for (int i = 5; i < 800; i++) {
    int limiter;
    for (int j = 0; j < 20; j++) {
      if (limiter >= 5) { s += 1.0; break; }
      return 42.0;
    }
    if (float(i) <= s) { break; }
    return 42.0;
  }
  return s;
}
void main() { b[gl_GlobalInvocationID.x] = f(); }
