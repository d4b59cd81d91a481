#version 450
// Several steps per trip through memory (temporal blocking) with subgroup shuffles, on interleaved
// storage (common_uv.glsl).
//
// Each lane holds one column of TILE_ROWS cells (U, V) in registers: lane l of a subgroup owns
// column x0 + l, rows y0 .. y0 + TILE_ROWS - 1. A step takes the top and bottom neighbours from the
// lane's own registers and the left and right ones from subgroupShuffleUp/Down(·, 1). Lane 0 has no
// left source and the last lane no right one, so after step s the lanes 0 .. s-1 and S-s .. S-1 hold
// values that depend on undefined shuffle results; the top and bottom rows have no neighbour above or
// below, so step s is computed only for rows s .. TILE_ROWS-1-s. After STEPS = T steps the lanes
// T .. S-1-T and rows T .. TILE_ROWS-1-T hold exact results, and only they are written: a subgroup
// produces (S − 2T) × (TILE_ROWS − 2T) cells after T steps from one load and one store of each.
// Every cell outside the data (the zero ring and beyond) is 0 at every step, as the definition's
// boundary requires: it is loaded as 0 and set to 0 again after each step.
//
// Tiles overlap by 2T columns and 2T rows; a workgroup's subgroups are stacked vertically. No
// shared memory and no barrier: each subgroup is independent. STEPS = 1 is a one-step kernel whose
// lanes each produce TILE_ROWS − 2 cells of a column (vertical neighbours from registers), with a
// sliding window of three rows instead of the array (one_step).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#include "common_uv.glsl"

layout(local_size_x = 128) in;
layout(local_size_x_id = 0) in;
layout(constant_id = 9) const uint STEPS = 2;        // T: steps per pass
layout(constant_id = 10) const uint TILE_ROWS = 16;  // rows each lane holds (> 2T)

// The left and right neighbours, from the lanes beside this one (undefined in lane 0 and the last
// lane respectively: such values never reach a written cell).
vec2 from_left(vec2 x) {
    return subgroupShuffleUp(x, 1);
}

vec2 from_right(vec2 x) {
    return subgroupShuffleDown(x, 1);
}

// (U, V) of padded cell (x, y) when it is a data cell, else 0 (the zero ring and beyond).
vec2 load(int x, int y, bool data_col, int last_row) {
    return data_col && y >= 1 && y <= last_row ? read(uvec2(x, y)) : vec2(0.0);
}

// Σ w · (nb − c) in the definition's order: top row left to right, then the middle row, then the
// bottom row (the centre's weight is 0).
vec2 stencil(vec2 up_l, vec2 up, vec2 up_r, vec2 c_l, vec2 c, vec2 c_r, vec2 dn_l, vec2 dn, vec2 dn_r) {
    vec2 full = vec2(0.0);
    full += 0.25 * (up_l - c);
    full += 0.5 * (up - c);
    full += 0.25 * (up_r - c);
    full += 0.5 * (c_l - c);
    full += 0.5 * (c_r - c);
    full += 0.25 * (dn_l - c);
    full += 0.5 * (dn - c);
    full += 0.25 * (dn_r - c);
    return full;
}

// The same sum regrouped for the wavefront, which is bound by its instructions per cell: the weights
// sum to 3, so Σ w · (nb − c) = 0.25 · (corners) + 0.5 · (edges) − 3 · c — 9 operations per field
// instead of 16 (with FMA). Not the definition's order: it rounds differently, within the kernels'
// tolerance (docs/grayscott.md), as FMA contraction already does on the GPU.
vec2 stencil_regrouped(vec2 up_l, vec2 up, vec2 up_r, vec2 c_l, vec2 c, vec2 c_r, vec2 dn_l, vec2 dn,
                       vec2 dn_r) {
    const vec2 corners = (up_l + up_r) + (dn_l + dn_r);
    const vec2 edges = (up + dn) + (c_l + c_r);
    return 0.25 * corners + 0.5 * edges - 3.0 * c;
}

// STEPS = 1: the same tile (column x, rows y0 .. y0 + TILE_ROWS - 1, rows 1 .. TILE_ROWS - 2 written
// by lanes 1 .. S - 2), without the register array: a window of three rows slides down the column,
// the rows loaded four iterations ahead (q0 .. q3: four loads in flight per lane), each cell written as soon as it is computed. Every lane
// runs every iteration (the shuffles need the whole subgroup); only the write is per lane.
void one_step(int x, int y0, bool data_col, bool out_lane, int last_row) {
    const int R = int(TILE_ROWS);
    vec2 up = load(x, y0, data_col, last_row);
    vec2 c = load(x, y0 + 1, data_col, last_row);
    vec2 q0 = load(x, y0 + 2, data_col, last_row);
    vec2 q1 = load(x, y0 + 3, data_col, last_row);
    vec2 q2 = load(x, y0 + 4, data_col, last_row);
    vec2 q3 = load(x, y0 + 5, data_col, last_row);
    vec2 up_l = from_left(up);
    vec2 up_r = from_right(up);
    vec2 c_l = from_left(c);
    vec2 c_r = from_right(c);
    // y0 + j > last_row is the same for every lane of the subgroup: a uniform exit.
    for (int j = 1; j < R - 1 && y0 + j <= last_row; ++j) {
        const vec2 dn = q0;
        q0 = q1;
        q1 = q2;
        q2 = q3;
        if (j + 5 < R) {
            q3 = load(x, y0 + j + 5, data_col, last_row);
        }
        const vec2 dn_l = from_left(dn);
        const vec2 dn_r = from_right(dn);
        if (out_lane && data_col) {
            write(uvec2(x, y0 + j), react(c, stencil(up_l, up, up_r, c_l, c, c_r, dn_l, dn, dn_r)));
        }
        up = c;
        up_l = c_l;
        up_r = c_r;
        c = dn;
        c_l = dn_l;
        c_r = dn_r;
    }
}

// STEPS = 2 .. WAVE_MAX_STEPS: a wavefront down the column instead of the register array. Level s
// holds the values after s steps; window s holds the last three rows of level s (with their left and
// right neighbours, shuffled once when the row enters). Row i of the tile enters level 0 when it is
// loaded; once a window holds three rows, its middle row advances one step and enters the next
// level (rows are loaded four iterations ahead, as in one_step) — so level s of tile row j is computed from level s − 1 of rows j − 1, j, j + 1, as the
// definition says, for j = s .. TILE_ROWS − 1 − s (the shrinking valid region), and level T of row
// j is written. Each window fills in the same iteration on every lane: the conditions below are
// uniform in the subgroup, and so are the shuffles under them.
const int WAVE_MAX_STEPS = 4;

struct Window {
    vec2 up, up_l, up_r, c, c_l, c_r;
    int rows;  // rows of the level seen so far (the window is full from 2 on)
};

// Feeds row (v, its left and right neighbours) of level s − 1 into window w; once the window is
// full, returns true and the level-s value of its middle row y (0 outside the data: the boundary
// ring is 0 at every step).
bool feed(inout Window w, vec2 v, vec2 v_l, vec2 v_r, int y, bool data_col, int last_row,
          out vec2 next) {
    const bool full = w.rows >= 2;
    next = vec2(0.0);
    if (full && data_col && y >= 1 && y <= last_row) {
        next = react(w.c, stencil_regrouped(w.up_l, w.up, w.up_r, w.c_l, w.c, w.c_r, v_l, v, v_r));
    }
    w.up = w.c;
    w.up_l = w.c_l;
    w.up_r = w.c_r;
    w.c = v;
    w.c_l = v_l;
    w.c_r = v_r;
    w.rows += 1;
    return full;
}

void wavefront(int x, int y0, bool data_col, bool out_lane, int last_row) {
    const int T = int(STEPS);
    const int R = int(TILE_ROWS);
    Window w0, w1, w2, w3;  // levels 0 .. WAVE_MAX_STEPS - 1 (named: no array in local memory)
    w0.rows = 0;
    w1.rows = 0;
    w2.rows = 0;
    w3.rows = 0;
    vec2 q0 = load(x, y0, data_col, last_row);
    vec2 q1 = load(x, y0 + 1, data_col, last_row);
    vec2 q2 = load(x, y0 + 2, data_col, last_row);
    vec2 q3 = load(x, y0 + 3, data_col, last_row);
    // Tile row i enters level 0; level T of row i − T leaves. Past the data the subgroup stops
    // (y0 + i − T > last_row is uniform).
    for (int i = 0; i < R && y0 + i - T <= last_row; ++i) {
        vec2 v = q0;
        q0 = q1;
        q1 = q2;
        q2 = q3;
        if (i + 4 < R) {
            q3 = load(x, y0 + i + 4, data_col, last_row);
        }
        // v is level s of row i − s; window s's middle row is one above it.
        bool more = true;
#define LEVEL(s, w) \
        if (s < T && more) { \
            const vec2 v_l = from_left(v); \
            const vec2 v_r = from_right(v); \
            vec2 up_level; \
            more = feed(w, v, v_l, v_r, y0 + i - s - 1, data_col, last_row, up_level); \
            v = up_level; \
        }
        LEVEL(0, w0)
        LEVEL(1, w1)
        LEVEL(2, w2)
        LEVEL(3, w3)
#undef LEVEL
        // v is now level T of row i − T when every window was full.
        if (more && out_lane && data_col && y0 + i - T <= last_row) {
            write(uvec2(x, y0 + i - T), v);
        }
    }
}

void main() {
    const int T = int(STEPS);
    const int R = int(TILE_ROWS);
    const int S = int(gl_SubgroupSize);
    const int lane = int(gl_SubgroupInvocationID);
    // Padded coordinates: the data is columns 1 .. last_col and rows 1 .. last_row.
    const int last_col = int(UV_WIDTH) - 2;
    const int last_row = int(UV_HEIGHT) - 2;
    const int x = int(gl_WorkGroupID.x) * (S - 2 * T) + lane + 1 - T;
    const int y0 = (int(gl_WorkGroupID.y) * int(gl_NumSubgroups) + int(gl_SubgroupID)) * (R - 2 * T) + 1 - T;
    // A subgroup whose first output row is below the data produces nothing (a uniform exit).
    if (y0 + T > last_row) {
        return;
    }
    const bool data_col = x >= 1 && x <= last_col;
    if (STEPS == 1) {
        one_step(x, y0, data_col, lane >= 1 && lane < S - 1, last_row);
        return;
    }
    if (T <= WAVE_MAX_STEPS) {
        wavefront(x, y0, data_col, lane >= T && lane < S - T, last_row);
        return;
    }

    vec2 t[TILE_ROWS];
    [[unroll]] for (int j = 0; j < R; ++j) {
        const int y = y0 + j;
        t[j] = vec2(0.0);
        if (data_col && y >= 1 && y <= last_row) {
            t[j] = read(uvec2(x, y));
        }
    }

    [[unroll]] for (int s = 1; s <= T; ++s) {
        // Step s of rows s .. R-1-s from step s-1 of rows s-1 .. R-s, top to bottom, in place: the
        // window (up, c, dn) holds the previous step's values of rows j-1, j, j+1.
        vec2 up = t[s - 1];
        vec2 up_l = from_left(up);
        vec2 up_r = from_right(up);
        vec2 c = t[s];
        vec2 c_l = from_left(c);
        vec2 c_r = from_right(c);
        [[unroll]] for (int j = s; j < R - s; ++j) {
            const vec2 dn = t[j + 1];
            const vec2 dn_l = from_left(dn);
            const vec2 dn_r = from_right(dn);
            const vec2 full = stencil(up_l, up, up_r, c_l, c, c_r, dn_l, dn, dn_r);
            const int y = y0 + j;
            t[j] = vec2(0.0);
            if (data_col && y >= 1 && y <= last_row) {
                t[j] = react(c, full);
            }
            up = c;
            up_l = c_l;
            up_r = c_r;
            c = dn;
            c_l = dn_l;
            c_r = dn_r;
        }
    }

    if (lane < T || lane >= S - T || !data_col) {
        return;
    }
    [[unroll]] for (int j = T; j < R - T; ++j) {
        const int y = y0 + j;
        if (y <= last_row) {
            write(uvec2(x, y), t[j]);
        }
    }
}
