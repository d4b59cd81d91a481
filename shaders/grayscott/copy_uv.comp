#version 450
// A memory ceiling on interleaved storage (common_uv.glsl): copy the (U, V) pairs as vec4s (two
// cells per 16-byte load and store), COPY_ITEMS vec4s per invocation in a grid-stride loop. The
// pitch UV_PITCH is even, so a padded grid is a whole number of vec4s.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "params.glsl"

layout(local_size_x = 256) in;
layout(local_size_x_id = 0) in;
layout(constant_id = 11) const uint UV_PITCH = 1922;
layout(constant_id = 12) const uint COPY_ITEMS = 1;

layout(set = 0, binding = 0) restrict readonly buffer InputUV { vec4 in_uv[]; };
layout(set = 0, binding = 1) restrict writeonly buffer OutputUV { vec4 out_uv[]; };

void main() {
    const uint n = UV_PITCH * UV_HEIGHT / 2;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    // COPY_ITEMS loads in flight before the first store; then the next batch, grid-stride.
    for (uint i = gl_GlobalInvocationID.x; i < n; i += COPY_ITEMS * stride) {
        vec4 uv[COPY_ITEMS];
        [[unroll]] for (uint k = 0; k < COPY_ITEMS; ++k) {
            const uint j = i + k * stride;
            if (j < n) { uv[k] = in_uv[j]; }
        }
        [[unroll]] for (uint k = 0; k < COPY_ITEMS; ++k) {
            const uint j = i + k * stride;
            if (j < n) { out_uv[j] = uv[k]; }
        }
    }
}
