// Planar storage: U and V in two buffers each, (UV_HEIGHT × UV_WIDTH) floats row-major, zero ring
// included. Parameters, geometry and the cell update are in params.glsl.
#include "params.glsl"

layout(set = 0, binding = 0) restrict readonly buffer InputU { float in_u[]; };
layout(set = 0, binding = 1) restrict readonly buffer InputV { float in_v[]; };
layout(set = 0, binding = 2) restrict writeonly buffer OutputU { float out_u[]; };
layout(set = 0, binding = 3) restrict writeonly buffer OutputV { float out_v[]; };

vec2 read(uvec2 pos) {
    const uint i = pos.y * UV_WIDTH + pos.x;
    return vec2(in_u[i], in_v[i]);
}

void write(uvec2 pos, vec2 uv) {
    const uint i = pos.y * UV_WIDTH + pos.x;
    out_u[i] = uv.x;
    out_v[i] = uv.y;
}
