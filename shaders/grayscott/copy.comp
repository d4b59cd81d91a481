#version 450
// The memory ceiling: copy U and V (read 8 bytes, write 8 bytes per cell), the traffic a one-pass
// stencil kernel cannot go below. A compute shader, not vkCmdCopyBuffer: on the H100 the transfer
// command moved only ~840 GB/s (GRAYSCOTT.md), which would make every kernel look faster than the
// memory allows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(local_size_x_id = 0) in;

void main() {
    const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint i = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= UV_WIDTH * UV_HEIGHT) {
        return;
    }
    out_u[i] = in_u[i];
    out_v[i] = in_v[i];
}
