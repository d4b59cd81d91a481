// Interleaved storage: one buffer of (U, V) pairs per field pair, (UV_HEIGHT × UV_PITCH) vec2
// row-major, zero ring included, so that a lane fetches both values of a cell with one 8-byte load.
// UV_PITCH ≥ UV_WIDTH is the row stride in cells (even, so that two cells form an aligned vec4); the
// columns past UV_WIDTH are zero and never written. Parameters, geometry and the cell update are in
// params.glsl.
#include "params.glsl"

layout(constant_id = 11) const uint UV_PITCH = 1922;

layout(set = 0, binding = 0) restrict readonly buffer InputUV { vec2 in_uv[]; };
layout(set = 0, binding = 1) restrict writeonly buffer OutputUV { vec2 out_uv[]; };

vec2 read(uvec2 pos) {
    return in_uv[pos.y * UV_PITCH + pos.x];
}

void write(uvec2 pos, vec2 uv) {
    out_uv[pos.y * UV_PITCH + pos.x] = uv;
}
