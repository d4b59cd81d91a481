#version 450
// Naive kernel: 2D workgroups, every neighbour loaded from global memory, no subgroup operation.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

void main() {
    const uvec2 pos = gl_GlobalInvocationID.xy + DATA_START_POS;
    if (any(greaterThanEqual(pos, data_end_pos()))) {
        return;
    }
    const vec2 uv = read(pos);
    const uvec2 topleft = pos - uvec2(1, 1);
    const mat3 weights = stencil_weights();
    vec2 full_uv = vec2(0.0);
    for (uint y = 0; y < 3; ++y) {
        for (uint x = 0; x < 3; ++x) {
            full_uv += weights[x][y] * (read(topleft + uvec2(x, y)) - uv);
        }
    }
    write(pos, react(uv, full_uv));
}
