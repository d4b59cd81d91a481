#version 450
// The course's stacked kernel (subgroup_stacked.comp) on interleaved storage (common_uv.glsl): one
// 8-byte load per row and lane instead of two 4-byte ones. Layout, shuffles and exits are those of
// subgroup_stacked.comp, which lockstep's model proves sound (Layout::Stacked).
// The course's stacked kernel: 1D workgroups whose subgroups are stacked vertically, one output
// row each, so that a workgroup covers a 2D block ("Guaranteeing 2D cache locality").
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#include "common_uv.glsl"
#include "subgroup.glsl"

layout(local_size_x = 128) in;
layout(local_size_x_id = 0) in;

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
    // Work-items outside the padded grid exit, and so do whole subgroups below the data: the
    // course's text lets a subgroup on the bottom zero ring load the row below it, one row past
    // the buffer (lockstep's model reports that read).
    const uvec2 pos = work_item_pos();
    if (pos.x >= padded_end_pos().x || pos.y >= data_end_pos().y) {
        return;
    }
    const vec2 uv = read(pos);
    const uvec2 top = pos - uvec2(0, 1);
    vec2 full_uv = vec2(0.0);
    for (uint y = 0; y < 3; ++y) {
        add_row(full_uv, uv, read(top + uvec2(0, y)), y);
    }
    if (!is_subgroup_output() || any(greaterThanEqual(pos, data_end_pos()))) {
        return;
    }
    write(pos, react(uv, full_uv));
}
