// Shared by every Gray-Scott kernel: parameters (specialization constants), the padded grid's
// geometry and the update of one cell. The buffers and their read()/write() are in common.glsl (U and
// V in two buffers, "planar") and common_uv.glsl (U and V interleaved, one vec2 per cell). The
// definition is ../../../shared/GRAYSCOTT.md (see docs/grayscott.md).
//
// The fields are stored with a one-cell ring of zeros around the data (DATA_START_POS = (1, 1)),
// as in the GPU course: a neighbour outside the domain reads 0. The ring is never written.

// Specialization constants 0 and 1 are the workgroup shape (local_size_x_id / local_size_y_id).
layout(constant_id = 2) const uint UV_WIDTH = 1922;   // padded columns (cols + 2)
layout(constant_id = 3) const uint UV_HEIGHT = 1082;  // padded rows (rows + 2)
layout(constant_id = 4) const float FEED_RATE = 0.014;
layout(constant_id = 5) const float KILL_RATE = 0.054;
layout(constant_id = 6) const float DELTA_T = 1.0;
layout(constant_id = 7) const float DIFFUSION_RATE_U = 0.1;
layout(constant_id = 8) const float DIFFUSION_RATE_V = 0.05;

const uvec2 DATA_START_POS = uvec2(1, 1);

// First position past the padded grid.
uvec2 padded_end_pos() {
    return uvec2(UV_WIDTH, UV_HEIGHT);
}

// First position past the data (the right/bottom zero ring starts here).
uvec2 data_end_pos() {
    return padded_end_pos() - DATA_START_POS;
}

// Oono-Puri stencil weights. The matrix is symmetric, so weights[x][y] == weights[y][x].
mat3 stencil_weights() {
    return mat3(
        0.25, 0.5, 0.25,
        0.5,  0.0, 0.5,
        0.25, 0.5, 0.25
    );
}

// Reaction and time step, given the stencil sums full_uv = Σ w · (uv_nb − uv).
vec2 react(vec2 uv, vec2 full_uv) {
    const float uv_square = uv.x * uv.y * uv.y;
    const float du = DIFFUSION_RATE_U * full_uv.x - uv_square + FEED_RATE * (1.0 - uv.x);
    const float dv = DIFFUSION_RATE_V * full_uv.y + uv_square - (FEED_RATE + KILL_RATE) * uv.y;
    return uv + vec2(du, dv) * DELTA_T;
}
