#version 450
// A memory ceiling on planar storage: copy U and V as vec4s (16-byte loads and stores), COPY_ITEMS
// vec4s of each field per invocation in a grid-stride loop (COPY_ITEMS = 1: one vec4 per
// invocation). The host allocates every field buffer rounded up to a whole number of vec4s.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "params.glsl"

layout(local_size_x = 256) in;
layout(local_size_x_id = 0) in;
layout(constant_id = 12) const uint COPY_ITEMS = 1;

layout(set = 0, binding = 0) restrict readonly buffer InputU { vec4 in_u[]; };
layout(set = 0, binding = 1) restrict readonly buffer InputV { vec4 in_v[]; };
layout(set = 0, binding = 2) restrict writeonly buffer OutputU { vec4 out_u[]; };
layout(set = 0, binding = 3) restrict writeonly buffer OutputV { vec4 out_v[]; };

void main() {
    const uint n = (UV_WIDTH * UV_HEIGHT + 3) / 4;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    // COPY_ITEMS loads in flight before the first store; then the next batch, grid-stride.
    for (uint i = gl_GlobalInvocationID.x; i < n; i += COPY_ITEMS * stride) {
        vec4 u[COPY_ITEMS];
        vec4 v[COPY_ITEMS];
        [[unroll]] for (uint k = 0; k < COPY_ITEMS; ++k) {
            const uint j = i + k * stride;
            if (j < n) { u[k] = in_u[j]; }
            if (j < n) { v[k] = in_v[j]; }
        }
        [[unroll]] for (uint k = 0; k < COPY_ITEMS; ++k) {
            const uint j = i + k * stride;
            if (j < n) { out_u[j] = u[k]; }
            if (j < n) { out_v[j] = v[k]; }
        }
    }
}
