#version 450
// The course's stacked kernel with a shared-memory cache ("Shared memory, take 2"): every
// work-item stores the value it loaded; top/bottom rows come from the neighbouring subgroups'
// stores, and from global memory only at the workgroup's top and bottom edges.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#include "common.glsl"
#include "subgroup.glsl"

layout(local_size_x = 128) in;
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WORKGROUP_SIZE = 128;

// Shared memory storage for inter-subgroup data exchange
shared float uv_cache[2][WORKGROUP_SIZE];

void set_uv_cache(vec2 uv) {
    uv_cache[0][gl_LocalInvocationID.x] = uv.x;
    uv_cache[1][gl_LocalInvocationID.x] = uv.y;
}

// The (U, V) value saved by the same lane of the subgroup y_offset rows away. barrier() first.
vec2 get_uv_cache(int y_offset) {
    const int shared_pos = int(gl_LocalInvocationID.x) + y_offset * int(gl_SubgroupSize);
    return vec2(uv_cache[0][shared_pos], uv_cache[1][shared_pos]);
}

uvec2 work_item_pos() {
    const uint first_x = DATA_START_POS.x - BORDER_SIZE;
    const uint item_x = gl_WorkGroupID.x * subgroup_output_size()
                      + gl_SubgroupInvocationID
                      + first_x;
    const uint item_y = gl_WorkGroupID.y * gl_NumSubgroups
                      + gl_SubgroupID
                      + DATA_START_POS.y;
    return uvec2(item_x, item_y);
}

void main() {
    // Load and share our (U, V) value, if any; nobody may exit before the barrier.
    const uvec2 pos = work_item_pos();
    vec2 uv = vec2(0.0);
    const bool is_valid_input = all(lessThan(pos, padded_end_pos()));
    if (is_valid_input) {
        uv = read(pos);
        set_uv_cache(uv);
    }
    barrier();
    // A subgroup on the bottom zero ring has stored its row for the subgroup above; it has no
    // output, and its own bottom row would be past the buffer.
    if (!is_valid_input || pos.y >= data_end_pos().y) {
        return;
    }
    vec2 full_uv = vec2(0.0);
    for (int y = -1; y <= 1; ++y) {
        vec2 centre;
        if (y == 0) {
            centre = uv;
        } else {
            // Subgroup-uniform branch: the row above/below is in the cache if another subgroup of
            // this workgroup loaded it, otherwise it comes from (possibly cached) global memory.
            const int target_subgroup = int(gl_SubgroupID) + y;
            if (target_subgroup >= 0 && target_subgroup < int(gl_NumSubgroups)) {
                centre = get_uv_cache(y);
            } else {
                centre = read(uvec2(pos.x, uint(int(pos.y) + y)));
            }
        }
        add_row(full_uv, uv, centre, uint(y + 1));
    }
    if (!is_subgroup_output() || any(greaterThanEqual(pos, data_end_pos()))) {
        return;
    }
    write(pos, react(uv, full_uv));
}
