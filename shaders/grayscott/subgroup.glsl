// The subgroup part of the course's kernels (seed 003, "First implementation: 1D workgroups"):
// each subgroup loads gl_SubgroupSize consecutive cells of a row; its first and last lanes
// (BORDER_SIZE) only load and shuffle, the others produce an output. Subgroups overlap by 2 cells.

// Number of input-only work-items on each side of a subgroup
const uint BORDER_SIZE = 1;

// Maximal number of output data points per subgroup
uint subgroup_output_size() {
    return gl_SubgroupSize - 2 * BORDER_SIZE;
}

// Truth that this work-item is within the output region of the subgroup. Necessary, not
// sufficient: its position must also be inside the data (before data_end_pos()).
bool is_subgroup_output() {
    return (gl_SubgroupInvocationID >= BORDER_SIZE)
        && (gl_SubgroupInvocationID < BORDER_SIZE + subgroup_output_size());
}

// Maximal number of output data points per workgroup
uint workgroup_output_size() {
    return gl_NumSubgroups * subgroup_output_size();
}

// Data from the work-item on the right in the current subgroup: undefined if there is none or it
// is inactive (such work-items never produce an output; lockstep's model proves it).
vec2 shuffle_from_right(vec2 data) {
    return vec2(subgroupShuffleDown(data.x, 1), subgroupShuffleDown(data.y, 1));
}

// Data from the work-item on the left in the current subgroup (same caveat).
vec2 shuffle_from_left(vec2 data) {
    return vec2(subgroupShuffleUp(data.x, 1), subgroupShuffleUp(data.y, 1));
}

// Left, centre and right values of one row of the stencil, the centre one loaded by this lane.
void add_row(inout vec2 full_uv, vec2 uv, vec2 centre, uint y) {
    vec2 stencil_uvs[3];
    stencil_uvs[1] = centre;
    stencil_uvs[0] = shuffle_from_left(stencil_uvs[1]);
    stencil_uvs[2] = shuffle_from_right(stencil_uvs[1]);
    const mat3 weights = stencil_weights();
    for (uint x = 0; x < 3; ++x) {
        full_uv += weights[x][y] * (stencil_uvs[x] - uv);
    }
}
