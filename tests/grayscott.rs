//! Gray-Scott: the definition (shared/GRAYSCOTT.md), agreement of every backend with the reference,
//! the model's proof obligations (no undefined value reaches an output; broken layouts are caught),
//! the GPU backend on the machine's Vulkan device (lavapipe in CI), and the CLI's checks.
//!
//! GPU tests fail without a Vulkan device unless `LOCKSTEP_SKIP_DEVICE_TESTS=1` (then they skip
//! and say so): the policy of `tests/support/mod.rs`.

use lockstep::grayscott::layout::{Shape, Tile, Tiling};
use lockstep::grayscott::model::ModelSim;
use lockstep::grayscott::model_tile::TileSim;
use lockstep::grayscott::reference::{step_clear, Reference};
use lockstep::grayscott::*;
use proptest::prelude::*;

fn params(feed: f32, kill: f32, dt: f32) -> Params {
    Params::new(feed, kill, dt).unwrap()
}

fn reference_after(d: Domain, p: Params, steps: u32) -> Fields {
    let mut r = Reference::new(d, p);
    r.advance(steps).unwrap();
    r.fields().unwrap()
}

/// Domain sizes that matter: 1, tiny, primes (never a multiple of a subgroup's or workgroup's
/// output), powers of two and their neighbours, anything up to 300.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(1usize),
        2usize..=4,
        prop::sample::select(vec![5usize, 7, 13, 29, 31, 37, 61, 67, 127, 131, 257, 293]),
        prop::sample::select(vec![
            8usize, 15, 16, 17, 30, 32, 33, 62, 64, 65, 126, 128, 256
        ]),
        1usize..=300,
    ]
}

/// F and k in the usual ranges, dt in (0, 1].
fn any_params() -> impl Strategy<Value = Params> {
    (0.0f32..=0.1, 0.0f32..=0.1, 0.1f32..=1.0).prop_map(|(f, k, dt)| params(f, k, dt))
}

// ---------------------------------------------------------------------------------------------
// The definition

// GRAYSCOTT.md, "Initial condition": rows (7R/16).saturating_sub(4) .. (8R/16).saturating_sub(4),
// cols 7C/16 .. 8C/16. For the course's 1080 × 1920: rows 468..536, cols 840..960.
#[test]
fn initial_condition_is_the_defined_rectangle() {
    let d = Domain::new(1080, 1920).unwrap();
    assert_eq!(d.seed_rect(), (468..536, 840..960));
    let f = Fields::initial(d);
    assert_eq!(f.u.iter().filter(|&&x| x == 0.0).count(), 68 * 120);
    assert_eq!(f.u[(468, 840)], 0.0);
    assert_eq!(f.v[(535, 959)], 1.0);
    assert_eq!((f.u[(467, 840)], f.v[(467, 840)]), (1.0, 0.0));
    assert_eq!((f.u[(468, 960)], f.v[(468, 960)]), (1.0, 0.0));
    // Small domains: the saturating subtraction empties the rectangle.
    assert_eq!(Domain::new(1, 1).unwrap().seed_rect(), (0..0, 0..0));
    assert_eq!(Domain::new(16, 16).unwrap().seed_rect(), (3..4, 7..8));
}

// GRAYSCOTT.md, "One step" and "Boundary": on a 1×3 domain of U = 1, V = 0 (the seed rectangle is
// empty), a neighbour outside reads 0 and contributes w·(0 − 1). Corner cells have only their
// inner neighbour (w = 0.5) inside: full_u = −(3 − 0.5) = −2.5, du = 0.1·(−2.5) = −0.25,
// U' = 0.75. The middle cell has two (0.5 each): full_u = −2, U' = 1 − 0.2 = 0.8. V stays 0
// (uv2 = 0, Dv·0, (F + k)·0).
#[test]
fn zero_padding_boundary_matches_hand_computation() {
    let d = Domain::new(1, 3).unwrap();
    let p = Params::default();
    let f = step_clear(&p, &Fields::initial(d));
    assert_eq!(f.u.as_slice().unwrap(), &[0.75f32, 0.8, 0.75]);
    assert!(f.v.iter().all(|&x| x == 0.0));
    assert_eq!(reference_after(d, p, 1), f);
    // 1×1: all eight neighbours outside, full_u = −3, U' = 1 − 0.3 = 0.7.
    let one = step_clear(&p, &Fields::initial(Domain::new(1, 1).unwrap()));
    assert_eq!((one.u[(0, 0)], one.v[(0, 0)]), (0.7, 0.0));
}

/// One step of `f` by the plain transcription and by the fast reference (padded rows, SIMD).
fn both_references(f: &Fields, p: Params) -> [Fields; 2] {
    let mut fast = Reference::from_fields(f, p);
    fast.advance(1).unwrap();
    [step_clear(&p, f), fast.fields().unwrap()]
}

fn assert_cell(f: &Fields, at: (usize, usize), want: (f32, f32), what: &str) {
    let got = (f.u[at], f.v[at]);
    assert!(
        (got.0 - want.0).abs() <= 1e-6 && (got.1 - want.1).abs() <= 1e-6,
        "{what} {at:?}: got (U, V) = {got:?}, worked by hand {want:?}"
    );
}

// GRAYSCOTT.md, "One step", worked by hand with U and V both non-zero, so that the reaction terms
// (u·v², F·(1 − u), (F + k)·v) count; defaults Du = 0.1, Dv = 0.05, F = 0.014, k = 0.054, dt = 1.
//
// A 3×3 domain with U = 0.5, V = 0.25 everywhere; uv2 = 0.5 · 0.25 · 0.25 = 0.03125.
// - Centre (1,1): every neighbour equals the cell, so full_u = full_v = 0:
//   du = 0 − 0.03125 + 0.014 · 0.5 = −0.02425 → U' = 0.47575;
//   dv = 0 + 0.03125 − 0.068 · 0.25 = 0.01425 → V' = 0.26425.
// - Corner (0,0): the neighbours inside (weights 0.5, 0.5, 0.25) equal the cell; those outside
//   (weights 0.25 + 0.5 + 0.25 + 0.5 + 0.25 = 1.75) read 0:
//   full_u = 1.75 · (0 − 0.5) = −0.875, full_v = 1.75 · (0 − 0.25) = −0.4375;
//   du = 0.1 · (−0.875) − 0.03125 + 0.007 = −0.11175 → U' = 0.38825;
//   dv = 0.05 · (−0.4375) + 0.03125 − 0.017 = −0.007625 → V' = 0.242375.
// - Edge (0,1): outside weights 0.25 + 0.5 + 0.25 = 1: full_u = −0.5, full_v = −0.25;
//   du = −0.05 − 0.02425 = −0.07425 → U' = 0.42575; dv = −0.0125 + 0.01425 = 0.00175 → V' = 0.25175.
#[test]
fn a_uniform_mixed_state_reacts_as_worked_by_hand() {
    let d = Domain::new(3, 3).unwrap();
    let f = Fields {
        u: ndarray::Array2::from_elem((3, 3), 0.5),
        v: ndarray::Array2::from_elem((3, 3), 0.25),
    };
    for (g, what) in both_references(&f, Params::default())
        .iter()
        .zip(["plain", "fast"])
    {
        assert_eq!(g.domain(), d);
        assert_cell(g, (1, 1), (0.47575, 0.26425), what);
        assert_cell(g, (0, 0), (0.38825, 0.242375), what);
        assert_cell(g, (2, 2), (0.38825, 0.242375), what);
        assert_cell(g, (0, 1), (0.42575, 0.25175), what);
        assert_cell(g, (1, 2), (0.42575, 0.25175), what);
    }
}

// GRAYSCOTT.md, "One step", worked by hand where the stencil and the reaction both move V: a 1×3
// domain with U = (0.5, 1, 0.5), V = (0.25, 0.5, 0.25). The middle cell has its left and right
// neighbours inside (weight 0.5 each) and six outside (weight 2 in all, reading 0):
//   full_u = 0.5 · (0.5 − 1) · 2 + 2 · (0 − 1) = −2.5,
//   full_v = 0.5 · (0.25 − 0.5) · 2 + 2 · (0 − 0.5) = −1.25,
//   uv2 = 1 · 0.5 · 0.5 = 0.25,
//   du = 0.1 · (−2.5) − 0.25 + 0.014 · (1 − 1) = −0.5 → U' = 0.5,
//   dv = 0.05 · (−1.25) + 0.25 − 0.068 · 0.5 = 0.1535 → V' = 0.6535.
// The left cell: its right neighbour (0.5 weight) is inside, 2.5 of weight outside:
//   full_u = 0.5 · (1 − 0.5) + 2.5 · (0 − 0.5) = −1, full_v = 0.5 · 0.25 + 2.5 · (−0.25) = −0.5,
//   uv2 = 0.03125, du = −0.1 − 0.03125 + 0.007 = −0.12425 → U' = 0.37575,
//   dv = −0.025 + 0.03125 − 0.017 = −0.01075 → V' = 0.23925.
#[test]
fn a_peak_of_u_and_v_diffuses_and_reacts_as_worked_by_hand() {
    let f = Fields {
        u: ndarray::Array2::from_shape_vec((1, 3), vec![0.5, 1.0, 0.5]).unwrap(),
        v: ndarray::Array2::from_shape_vec((1, 3), vec![0.25, 0.5, 0.25]).unwrap(),
    };
    for (g, what) in both_references(&f, Params::default())
        .iter()
        .zip(["plain", "fast"])
    {
        assert_cell(g, (0, 1), (0.5, 0.6535), what);
        assert_cell(g, (0, 0), (0.37575, 0.23925), what);
        assert_cell(g, (0, 2), (0.37575, 0.23925), what);
    }
}

#[test]
fn bad_domains_and_parameters_name_their_rule() {
    let e = Domain::new(0, 10).unwrap_err().to_string();
    assert!(e.contains("at least one row and one column"), "{e}");
    let e = Domain::new(100_000, 100_000).unwrap_err().to_string();
    assert!(e.contains("at most 2^31 cells"), "{e}");
    let e = Params::new(f32::NAN, 0.05, 1.0).unwrap_err().to_string();
    assert!(e.contains("feed rate F = NaN is invalid"), "{e}");
    let e = Params::new(0.01, -0.5, 1.0).unwrap_err().to_string();
    assert!(e.contains("kill rate k = -0.5 is invalid"), "{e}");
    let e = Params::new(0.01, 0.05, 0.0).unwrap_err().to_string();
    assert!(e.contains("dt = 0 is invalid"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    // The fast reference (padded rows, rayon, AVX2 / AVX-512) computes exactly the plain
    // transcription.
    #[test]
    fn fast_reference_equals_the_plain_transcription(
        rows in 1usize..=40, cols in prop_oneof![1usize..=40, 500usize..=1100], steps in 1u32..=4,
        p in any_params()
    ) {
        let d = Domain::new(rows, cols).unwrap();
        let mut plain = Fields::initial(d);
        for _ in 0..steps {
            plain = step_clear(&p, &plain);
        }
        prop_assert_eq!(reference_after(d, p, steps), plain);
    }

    /// The fused two-step pass splits the rows into bands of ≥ 32 whose edge rows of the
    /// intermediate step are computed twice: tall domains (several bands, a short last one) and
    /// odd step counts (a single step after the pairs) must still match the definition bit for bit.
    #[test]
    fn fused_steps_equal_the_plain_transcription_across_bands(
        rows in 33usize..=200, cols in 1usize..=24, steps in 1u32..=5, p in any_params()
    ) {
        let d = Domain::new(rows, cols).unwrap();
        let mut plain = Fields::initial(d);
        for _ in 0..steps {
            plain = step_clear(&p, &plain);
        }
        prop_assert_eq!(reference_after(d, p, steps), plain);
    }
}

// ---------------------------------------------------------------------------------------------
// Agreement tolerance: why AGREEMENT_TOLERANCE is what it is

/// One step computed the way a compiler that contracts every a·b + c into an FMA computes it.
fn step_contracted(p: &Params, f: &Fields) -> Fields {
    let (rows, cols) = f.u.dim();
    let (pu, pv) = (Padded::from_array(&f.u), Padded::from_array(&f.v));
    let w = cols + 2;
    let mut out = f.clone();
    for r in 0..rows {
        for c in 0..cols {
            let mut u = [[0.0f32; 3]; 3];
            let mut v = [[0.0f32; 3]; 3];
            for dy in 0..3 {
                for dx in 0..3 {
                    u[dy][dx] = pu.data[(r + dy) * w + c + dx];
                    v[dy][dx] = pv.data[(r + dy) * w + c + dx];
                }
            }
            let (a, b) = update_cell_contracted(p, &u, &v);
            out.u[(r, c)] = a;
            out.v[(r, c)] = b;
        }
    }
    out
}

// The measurement behind the tolerance, repeated: FMA contraction (what NVIDIA's compiler does)
// moves the result, by far less than the tolerance, over the longest run the tolerance is for.
#[test]
fn fma_contraction_spread_stays_well_within_the_tolerance() {
    let cases = [
        (params(0.014, 0.054, 1.0), 48, 40),
        (params(0.0333, 0.0661, 0.53), 55, 58),
        (params(0.0108, 0.0512, 0.88), 61, 47),
    ];
    for (i, (p, rows, cols)) in cases.into_iter().enumerate() {
        let d = Domain::new(rows, cols).unwrap();
        let mut r = Reference::new(d, p);
        let mut c = Fields::initial(d);
        for _ in 0..AGREEMENT_MAX_STEPS {
            r.step();
            c = step_contracted(&p, &c);
        }
        let spread = r.fields().unwrap().max_abs_diff(&c);
        assert!(
            spread.value <= AGREEMENT_TOLERANCE / 10.0,
            "case {i}: {spread} after {AGREEMENT_MAX_STEPS} steps"
        );
        if i == 0 {
            // It is not zero: a contracting device needs a tolerance; an exact comparison would fail.
            assert!(spread.value > 0.0, "FMA contraction changed nothing?");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The model backend

fn model_after(d: Domain, p: Params, shape: Shape, steps: u32) -> Result<Fields, GrayScottError> {
    let mut m = ModelSim::new(d, p, shape)?;
    m.advance(steps)?;
    m.fields()
}

const SIZES: [u32; 6] = [4, 8, 16, 32, 64, 128];

// Every correct layout at every subgroup size, on the domains where edges meet: 1×1, 1×N, N×1, and
// one that is a multiple of nothing. Ok(..) is the proof that no undefined value reached an output
// and every cell was written once; the values are the reference's, bit for bit.
#[test]
fn model_proves_every_layout_at_every_subgroup_size() {
    let p = Params::default();
    for (rows, cols) in [(1, 1), (1, 150), (150, 1), (17, 23)] {
        let d = Domain::new(rows, cols).unwrap();
        let expect = reference_after(d, p, 2);
        for layout in Tiling::CORRECT {
            for s in SIZES {
                for w in [s, 2 * s, 4 * s] {
                    let shape = Shape::new(layout, s, w).unwrap();
                    let got = model_after(d, p, shape, 2)
                        .unwrap_or_else(|e| panic!("{shape} on {d}: {e}"));
                    assert!(got == expect, "{shape} on {d} differs from the reference");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn model_equals_reference_bit_for_bit(
        rows in dim(), cols in dim(), steps in 1u32..=4, p in any_params(),
        layout in prop::sample::select(Tiling::CORRECT.to_vec()),
        s in prop::sample::select(SIZES.to_vec()), k in 1u32..=4,
    ) {
        // Keep the debug-build test fast: at most ~6000 cells.
        let cols = cols.min((6000 / rows).max(1));
        let d = Domain::new(rows, cols).unwrap();
        let shape = Shape::new(layout, s, s * k).unwrap();
        let got = model_after(d, p, shape, steps);
        prop_assert!(got.is_ok(), "{shape} on {d}: {}", got.unwrap_err());
        prop_assert_eq!(got.unwrap(), reference_after(d, p, steps));
    }
}

// A layout without border lanes: lane 0 of the first subgroup takes its left neighbours from
// subgroupShuffleUp(x, 1), undefined for lane 0 (GL_KHR_shader_subgroup: shuffle up with delta >
// gl_SubgroupInvocationID). It outputs data cell (0, 0).
#[test]
fn model_reports_undefined_value_reaching_a_cell_without_border_lanes() {
    let d = Domain::new(3, 10).unwrap();
    for s in [4, 8, 32] {
        let shape = Shape::new(Tiling::NoBorder, s, s).unwrap();
        let e = model_after(d, Params::default(), shape, 1).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("undefined value reached cell (0, 0) at step 1: lane 0 of subgroup 0 in workgroup (0, 0)"),
            "{msg}"
        );
        assert!(msg.contains("delta 1 > lane id 0"), "{msg}");
        assert!(
            matches!(
                e,
                GrayScottError::UndefinedReachedCell {
                    row: 0,
                    col: 0,
                    step: 1,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}

// The stacked kernel as the course's text writes it (work-items exit only outside the padded grid):
// with 10 rows and 4 subgroups per workgroup, the third workgroup row's subgroups sit on padded rows
// 9..12; the one on row 11 (the bottom zero ring) loads row 12, past the 12-row buffer.
#[test]
fn model_reports_the_course_stacked_kernel_reading_past_the_buffer() {
    let d = Domain::new(10, 9).unwrap();
    let shape = Shape::new(Tiling::StackedOverread, 8, 32).unwrap();
    let e = model_after(d, Params::default(), shape, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lane 0 of subgroup 2 in workgroup (0, 2) reads padded cell (12, 0), outside the 12×11 buffer"),
        "{e}"
    );
    // With a row count that is a multiple of the subgroups per workgroup it is right, by luck.
    let d = Domain::new(12, 9).unwrap();
    assert_eq!(
        model_after(d, Params::default(), shape, 3).unwrap(),
        reference_after(d, Params::default(), 3)
    );
}

// Subgroups that start S − 3 cells apart (Tiling::Overlap): subgroup 0's output lanes 1..=S − 2 write
// data columns 0..=S − 3, and the next subgroup's lane 1 writes column S − 3 again. Subgroups
// S − 1 apart (Tiling::Gap) leave column S − 2 unwritten. The domains put the second subgroup
// past the edge (a partial subgroup: the general path) and well inside (the fast path, whose
// writes are checked a run at a time), with one and with four subgroups per workgroup.
#[test]
fn model_reports_a_cell_written_twice_and_a_cell_never_written() {
    for s in [4u32, 8, 32] {
        let k = s as usize;
        for (rows, cols) in [(1, k - 1), (3, k + 8), (17, 300)] {
            let d = Domain::new(rows, cols).unwrap();
            for (w, second) in [
                (s, "subgroup 0 in workgroup (1, 0)"),
                (4 * s, "subgroup 1 in workgroup (0, 0)"),
            ] {
                let shape = Shape::new(Tiling::Overlap, s, w).unwrap();
                let e = model_after(d, Params::default(), shape, 1).unwrap_err();
                let want = format!(
                    "layout fault at step 1: cell (0, {}) is written twice (again by lane 1 of {second})",
                    k - 3
                );
                assert_eq!(e.to_string(), want, "{rows}×{cols}, S = {s}, W = {w}");
                let shape = Shape::new(Tiling::Gap, s, w).unwrap();
                let e = model_after(d, Params::default(), shape, 1).unwrap_err();
                assert_eq!(
                    e.to_string(),
                    format!(
                        "layout fault at step 1: cell (0, {}) was never written",
                        k - 2
                    ),
                    "{rows}×{cols}, S = {s}, W = {w}"
                );
            }
        }
    }
}

// What the model's row-slice loads rely on (and what the course's work_item_pos() gives): lane l
// of any subgroup sits l cells right of lane 0, on the same row.
// ---------------------------------------------------------------------------------------------
// The register-tile kernel (several steps per pass) on the model

fn tile_after(
    d: Domain,
    p: Params,
    s: u32,
    w: u32,
    tile: Tile,
    steps: u32,
) -> Result<Fields, GrayScottError> {
    let mut m = TileSim::new(d, p, s, w, tile)?;
    m.advance(steps)?;
    m.fields()
}

/// (subgroup size, steps per pass T < S / 2, rows per lane R > 2T).
fn tile_shape() -> impl Strategy<Value = (u32, Tile)> {
    prop::sample::select(vec![4u32, 8, 16, 32, 64, 128]).prop_flat_map(|s| {
        (1u32..=((s - 1) / 2).min(6)).prop_flat_map(move |t| {
            (2 * t + 1..=2 * t + 12).prop_map(move |rows| (s, Tile { steps: t, rows }))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    // Issue 12, §2: the tile kernel advancing T steps per pass, run lane by lane on the model,
    // proves that no undefined or stale value reaches a written cell and that every cell is written
    // once per pass — and computes the reference's values bit for bit (the last pass of a run
    // whose step count is not a multiple of T has fewer steps).
    #[test]
    fn model_proves_the_tile_kernel_and_equals_the_reference(
        rows in dim(), cols in dim(), steps in 1u32..=9, p in any_params(),
        (s, tile) in tile_shape(), k in 1u32..=4,
    ) {
        let d = Domain::new(rows, cols).unwrap();
        let got = tile_after(d, p, s, s * k, tile, steps);
        prop_assert!(got.is_ok(), "{s} lanes, {tile:?}: {}", got.unwrap_err());
        prop_assert_eq!(got.unwrap(), reference_after(d, p, steps));
    }
}

// The wavefront path's bound on T is one number, stated in the shader and in `Tile`: the rows rule of
// `Tile::check` depends on it.
#[test]
fn the_wavefront_bound_is_the_shaders() {
    let text = std::fs::read_to_string("shaders/grayscott/subgroup_tile.comp").unwrap();
    let want = format!("const int WAVE_MAX_STEPS = {};", Tile::WAVE_MAX_STEPS);
    assert!(text.contains(&want), "{want} not in subgroup_tile.comp");
    assert_eq!(
        text.matches("LEVEL(").count() - 1,
        Tile::WAVE_MAX_STEPS as usize
    );
}

// A tile kernel that writes one lane and one row further into its halo is caught: the outermost
// lanes depend on undefined shuffle results, the outermost rows were not advanced to the last step.
#[test]
fn model_catches_a_tile_writing_into_its_halo() {
    let tile = Tile { steps: 2, rows: 10 };
    let p = Params::default();
    // Wide enough that the extra right lane (4 + 2 = 6 of 8) is a data column.
    let d = Domain::new(20, 30).unwrap();
    let m = TileSim::new(d, p, 8, 16, tile)
        .unwrap()
        .broken_writes_halo();
    let e = run_broken(m).to_string();
    assert!(e.starts_with("undefined value reached cell (0, 4) at step 2: lane 6 of subgroup 0 in workgroup (0, 0)"), "{e}");
    assert!(
        e.contains("subgroupShuffleUp/Down(·, 1) that read no lane"),
        "{e}"
    );
    // Exactly 8 − 4 = 4 columns: the extra lanes land on the zero ring, the extra rows do not.
    let d = Domain::new(18, 4).unwrap();
    let m = TileSim::new(d, p, 8, 16, tile)
        .unwrap()
        .broken_writes_halo();
    let e = run_broken(m).to_string();
    assert!(e.starts_with("layout fault at step 2: lane 2 of subgroup 0 in workgroup (0, 0) writes cell (6, 0) from a row not advanced to step 2"), "{e}");
    // The same tile without the fault is proven.
    assert!(tile_after(d, p, 8, 16, tile, 5).is_ok());
}

fn run_broken(mut m: TileSim) -> GrayScottError {
    m.advance(2).unwrap_err()
}

// subgroup-stacked-uv is proven by the model as Tiling::Stacked: its shader must be the stacked
// kernel's, line for line, except for the storage it includes (and comments).
#[test]
fn the_interleaved_stacked_kernel_is_the_stacked_kernel_on_other_storage() {
    let code = |name: &str| -> Vec<String> {
        let path = format!("{}/shaders/grayscott/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(|l| l.replace("\"common_uv.glsl\"", "\"common.glsl\""))
            .collect()
    };
    assert_eq!(
        code("subgroup_stacked_uv.comp"),
        code("subgroup_stacked.comp")
    );
}

#[test]
fn every_layout_puts_a_subgroup_on_consecutive_cells_of_one_row() {
    for layout in Tiling::ALL {
        for s in SIZES {
            let shape = Shape::new(layout, s, 4 * s).unwrap();
            for wg in [[0, 0], [3, 5], [17, 2]] {
                for sg in 0..shape.subgroups() {
                    let (x0, y0) = shape.item_pos(wg, sg, 0);
                    for lane in 0..s {
                        assert_eq!(shape.item_pos(wg, sg, lane), (x0 + lane as i64, y0));
                    }
                }
            }
        }
    }
}

#[test]
fn kernel_shapes_are_checked() {
    let e = Shape::new(Tiling::OneD, 2, 8).unwrap_err().to_string();
    assert!(e.contains("subgroup size 2 is invalid"), "{e}");
    let e = Shape::new(Tiling::OneD, 24, 48).unwrap_err().to_string();
    assert!(e.contains("power of two in 4..=128"), "{e}");
    let e = Shape::new(Tiling::Stacked, 32, 48).unwrap_err().to_string();
    assert!(
        e.contains(
            "workgroup size 48 is invalid: it must be a non-zero multiple of the subgroup size 32"
        ),
        "{e}"
    );
    assert!(Shape::new(Tiling::Shared, 4, 2048).is_err());
}

// ---------------------------------------------------------------------------------------------
// The GPU backend

#[cfg(feature = "vulkan")]
mod gpu {
    use super::*;
    use lockstep::grayscott::gpu::{api_version, CopyCeiling, CopyKind, GpuSim, Plan, Variant};
    use lockstep::vulkan::{Capabilities, Context, SubgroupOps};

    fn device() -> Option<&'static Context> {
        crate::support::shared_device()
    }

    fn caps(size: u32) -> Capabilities {
        Capabilities {
            subgroup_size: size,
            min_subgroup_size: size,
            max_subgroup_size: size,
            size_control: false,
            full_subgroups: false,
            max_workgroup_subgroups: 32,
            max_workgroup_invocations: 1024,
            max_workgroup_size: [1024, 1024, 64],
            stages: vec!["compute"],
            compute: true,
            ops: SubgroupOps {
                basic: true,
                shuffle_relative: true,
                ..SubgroupOps::default()
            },
            maximal_reconvergence: false,
            subgroup_uniform_control_flow: false,
            subgroup_extended_types: false,
            broadcast_dynamic_id: false,
            int8: false,
            int16: false,
            int64: false,
            float16: false,
            float64: false,
            ..Capabilities::default()
        }
    }

    const STACKED: Variant = Variant::Subgroup(Tiling::Stacked);

    // Issue 4, §1: Vulkan 1.1, SHUFFLE_RELATIVE and subgroups of at least 4 lanes, each with a clear
    // error; naive needs none of them.
    #[test]
    fn device_requirements_are_checked_with_a_clear_error() {
        let e = Plan::new(&caps(32), (1, 0), STACKED, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs Vulkan 1.1"), "{e}");
        let mut no_shuffle = caps(32);
        no_shuffle.ops.shuffle_relative = false;
        let e = Plan::new(&no_shuffle, (1, 3), STACKED, None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lacks SHUFFLE_RELATIVE"), "{e}");
        let e = Plan::new(&caps(2), (1, 3), STACKED, Some([64, 1]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 4 lanes"), "{e}");
        let mut bare = caps(1);
        bare.ops = SubgroupOps::default();
        bare.compute = false;
        let plan = Plan::new(&bare, (1, 0), Variant::Naive, Some([8, 8]), None).unwrap();
        assert_eq!(plan.workgroup, [8, 8]);
    }

    #[test]
    fn workgroup_and_subgroup_sizes_are_checked() {
        let c = caps(32);
        let e = Plan::new(&c, (1, 3), STACKED, Some([48, 1]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of the subgroup size 32"), "{e}");
        let e = Plan::new(&c, (1, 3), STACKED, Some([64, 2]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("use 1D workgroups"), "{e}");
        let e = Plan::new(&c, (1, 3), STACKED, None, Some(16))
            .unwrap_err()
            .to_string();
        assert!(e.contains("subgroup size 16 is not supported"), "{e}");
        assert!(e.contains("no subgroup size control"), "{e}");
        let e = Plan::new(&c, (1, 3), Variant::Naive, None, Some(32))
            .unwrap_err()
            .to_string();
        assert!(e.contains("naive kernel uses no subgroup operation"), "{e}");
        let e = Plan::new(&c, (1, 3), Variant::Naive, Some([64, 64]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large for the device"), "{e}");
        let mut sc = caps(32);
        sc.size_control = true;
        sc.min_subgroup_size = 16;
        sc.max_subgroup_size = 64;
        let p = Plan::new(&sc, (1, 3), STACKED, Some([128, 1]), Some(16)).unwrap();
        assert_eq!((p.subgroup, p.required_subgroup), (16, Some(16)));
        let e = Plan::new(&sc, (1, 3), STACKED, Some([1024, 1]), Some(16))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 32 subgroups per workgroup"), "{e}");
        let e = Plan::new(&sc, (1, 3), STACKED, None, Some(8))
            .unwrap_err()
            .to_string();
        assert!(e.contains("power of two in 16..=64"), "{e}");
        let e = Plan::new(&c, (1, 3), Variant::Subgroup(Tiling::NoBorder), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("deliberately broken"), "{e}");
    }

    // The tile kernel's own rules, each with its reason; its workgroup counts cover the domain
    // with (S − 2T) columns and (rows − 2T) rows per subgroup.
    #[test]
    fn tile_sizes_are_checked() {
        let c = caps(32);
        let tile = |steps, rows| Variant::Tile(Tile { steps, rows });
        let err = |v| {
            Plan::new(&c, (1, 3), v, Some([64, 1]), None)
                .unwrap_err()
                .to_string()
        };
        assert!(err(tile(0, 8)).contains("at least 1 step per pass"));
        assert!(err(tile(4, 8)).contains("must exceed 2 × 4 steps"));
        assert!(err(tile(5, 65)).contains("at most 64 rows"));
        assert!(err(tile(4, 1025)).contains("at most 1024 rows"));
        assert!(err(tile(16, 40)).contains("subgroups of 32 lanes leave no output lane"));
        let p = Plan::new(&c, (1, 3), tile(3, 16), Some([128, 1]), None).unwrap();
        // 26 columns and 4 subgroups × 10 rows per workgroup.
        assert_eq!(p.groups(Domain::new(100, 27).unwrap()), [2, 3, 1]);
        assert_eq!(p.bench_label(), "workgroup128/subgroup32");
        assert_eq!(
            p.to_string(),
            "subgroup-tile-t3-r16, workgroup 128, subgroup 32"
        );
        assert_eq!(
            Variant::parse("subgroup-tile-t3"),
            Some(tile(3, Tile::DEFAULT.rows))
        );
        for v in [
            "subgroup-tile-x",
            "subgroup-tile-t-r4",
            "subgroup-tile-t2-r",
            "subgroup-tile-t99999",
        ] {
            assert_eq!(Variant::parse(v), None, "{v}");
        }
    }

    // Every copy kernel measured as a ceiling copies exactly (planar and interleaved storage, the
    // tail past the last whole vec4, grid-stride loops that wrap several times).
    #[test]
    fn every_copy_ceiling_copies_its_input() {
        let Some(ctx) = device() else { return };
        let mut kinds = CopyKind::DEFAULTS.to_vec();
        kinds.push(CopyKind::Vec4 {
            items: 3,
            grid: Some(1),
        });
        kinds.push(CopyKind::Uv {
            items: 2,
            grid: Some(3),
        });
        for (rows, cols) in [(1, 1), (5, 7), (31, 33)] {
            let d = Domain::new(rows, cols).unwrap();
            for &k in &kinds {
                let mut copy = CopyCeiling::with_kind(ctx, d, k).unwrap();
                assert_eq!(
                    copy.copy_once().unwrap(),
                    Fields::initial(d),
                    "{} on {d}",
                    k.name()
                );
            }
        }
    }

    // The real device: a subgroup size it cannot run is refused before anything is built.
    #[test]
    fn the_device_refuses_a_subgroup_size_it_cannot_run() {
        let Some(ctx) = device() else { return };
        let bad = ctx.caps.max_subgroup_size * 2;
        let e = Plan::new(
            &ctx.caps,
            api_version(ctx),
            STACKED,
            Some([256, 1]),
            Some(bad),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&format!("subgroup size {bad} is not supported")),
            "{e}"
        );
    }

    fn gpu_after(
        ctx: &Context,
        d: Domain,
        p: Params,
        plan: Plan,
        steps: u32,
    ) -> Result<Fields, GrayScottError> {
        let mut g = GpuSim::new(ctx, d, p, plan)?;
        g.advance(steps)?;
        g.fields()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10))]

        // Issue 4, §2: every GPU variant agrees with the reference within AGREEMENT_TOLERANCE.
        #[test]
        fn gpu_variants_agree_with_the_reference(
            rows in dim(), cols in dim(), steps in 1u32..=24, p in any_params(),
            k in 1u32..=8, nx in prop::sample::select(vec![1u32, 4, 8, 16, 32]),
            ny in prop::sample::select(vec![1u32, 3, 8, 16]),
            tile in (1u32..=3).prop_flat_map(|t| (Just(t), 2 * t + 1..=20)),
        ) {
            let Some(ctx) = device() else { return Ok(()) };
            let d = Domain::new(rows, cols).unwrap();
            let expect = reference_after(d, p, steps);
            let s = ctx.caps.subgroup_size;
            // lavapipe computes the definition's operations one by one (no FMA contraction, no
            // reassociation): there every variant in the definition's order must match the
            // reference bit for bit.
            let exact = ctx.info.name.contains("llvmpipe");
            let mut variants = Variant::ALL.to_vec();
            let (t, r) = tile;
            if 2 * t < s {
                variants.push(Variant::Tile(Tile { steps: t, rows: r }));
            }
            for v in variants {
                let wg = match v {
                    Variant::Naive => [nx, ny],
                    _ => [s * k, 1],
                };
                let plan = Plan::new(&ctx.caps, api_version(ctx), v, Some(wg), None);
                prop_assert!(plan.is_ok(), "{}: {}", v.name(), plan.unwrap_err());
                let plan = plan.unwrap();
                let got = gpu_after(ctx, d, p, plan.clone(), steps);
                prop_assert!(got.is_ok(), "{plan}: {}", got.unwrap_err());
                let diff = got.unwrap().max_abs_diff(&expect);
                prop_assert!(
                    diff.value <= AGREEMENT_TOLERANCE,
                    "{plan} on {d}, {steps} steps: {diff}"
                );
                // The wavefront sums the stencil regrouped (Tile::regrouped): within the tolerance.
                let bitwise = exact && !matches!(v, Variant::Tile(t) if t.regrouped());
                prop_assert!(
                    !bitwise || diff.value == 0.0,
                    "{plan} on {d}, {steps} steps: {diff} on lavapipe, which computes exactly"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The CLI

mod cli {
    use crate::support::cmd::CargoBin;
    use std::process::Command;

    fn lockstep() -> Command {
        Command::cargo_bin("lockstep").unwrap()
    }

    fn run(args: &[&str]) -> (i32, String, String) {
        let o = lockstep().args(args).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into(),
            String::from_utf8_lossy(&o.stderr).into(),
        )
    }

    // Issue 4, §3: bad input is refused before any work, with one line naming the rule.
    #[test]
    fn bad_input_is_refused_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let out = out.to_str().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let under_file = file.join("sub");
        let cases: Vec<(Vec<&str>, &str)> = vec![
            (vec!["--rows", "0"], "at least one row and one column"),
            (vec!["--cols", "0"], "at least one row and one column"),
            (vec!["--steps", "0"], "--steps 0 is invalid"),
            (vec!["--images", "0"], "--images 0 is invalid"),
            (vec!["--feed", "-0.1"], "feed rate F = -0.1 is invalid"),
            (vec!["--kill", "nan"], "kill rate k = NaN is invalid"),
            (vec!["--dt", "0"], "dt = 0 is invalid"),
            (vec!["--variant", "naive"], "--variant does not apply to the reference backend"),
            (
                vec!["--backend", "model", "--subgroup-size", "8", "--workgroup-size", "12"],
                "workgroup size 12 is invalid: it must be a non-zero multiple of the subgroup size 8",
            ),
            (
                vec!["--backend", "model", "--subgroup-size", "6"],
                "subgroup size 6 is invalid",
            ),
            (
                vec!["--backend", "model", "--variant", "diagonal"],
                "unknown model variant 'diagonal'",
            ),
            (vec!["--workgroup-size", "8x"], "--workgroup-size '8x' is invalid"),
            (
                vec!["--backend", "model", "--check", "--steps", "100", "--images", "6"],
                "--check with 600 steps is invalid",
            ),
            (vec!["--output", under_file.to_str().unwrap()], "the output directory must be writable"),
        ];
        for (args, want) in cases {
            // Small defaults, unless the case sets the flag itself (clap refuses repeats).
            let mut all = vec!["grayscott"];
            for (flag, value) in [
                ("--rows", "20"),
                ("--cols", "20"),
                ("--images", "2"),
                ("--output", out),
            ] {
                if !args.contains(&flag) {
                    all.extend_from_slice(&[flag, value]);
                }
            }
            all.extend_from_slice(&args);
            let (code, stdout, stderr) = run(&all);
            assert_eq!(code, 64, "{args:?}: {stderr}");
            assert!(stderr.contains(want), "{args:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
            assert!(stdout.is_empty(), "{args:?}");
            let pictures = std::fs::read_dir(dir.path().join("out"))
                .map(|d| d.count())
                .unwrap_or(0);
            assert_eq!(pictures, 0, "{args:?} wrote files before failing");
        }
    }

    // 40000 × 50000 cells with the model and --check need about 120 GiB (every grid of both
    // backends); refused up front instead of aborting mid-run when memory runs out.
    #[test]
    fn a_domain_too_large_for_memory_is_refused_up_front() {
        let available_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                let l = t
                    .lines()
                    .find(|l| l.starts_with("MemAvailable:"))?
                    .to_string();
                l.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map(|kb| kb >> 20);
        match available_gib {
            Some(gib) if gib < 100 => {
                let (code, _, stderr) = run(&[
                    "grayscott",
                    "--backend",
                    "model",
                    "--check",
                    "--rows",
                    "40000",
                    "--cols",
                    "50000",
                    "--images",
                    "2",
                    "--no-output",
                ]);
                assert_eq!(code, 64, "{stderr}");
                assert!(stderr.contains("GiB of memory for this run"), "{stderr}");
            }
            other => eprintln!("SKIPPED: {other:?} GiB available, enough to start the run"),
        }
    }

    #[cfg(feature = "vulkan")]
    #[test]
    fn gpu_bad_sizes_are_refused() {
        if crate::support::device().is_none() {
            return;
        }
        let (code, _, stderr) = run(&[
            "grayscott",
            "--backend",
            "gpu",
            "--variant",
            "subgroup-1d",
            "--rows",
            "20",
            "--cols",
            "20",
            "--workgroup-size",
            "3",
            "--no-output",
        ]);
        assert_eq!(code, 64, "{stderr}");
        assert!(stderr.contains("multiple of the subgroup size"), "{stderr}");
        let (code, _, stderr) = run(&[
            "grayscott",
            "--backend",
            "gpu",
            "--rows",
            "20",
            "--cols",
            "20",
            "--subgroup-size",
            "256",
            "--no-output",
        ]);
        assert_eq!(code, 64, "{stderr}");
        assert!(
            stderr.contains("subgroup size 256 is not supported"),
            "{stderr}"
        );
    }

    // A run writes one picture per image and the final fields, which are the reference's.
    #[test]
    fn a_run_writes_pictures_and_final_fields() {
        use lockstep::grayscott::{reference::Reference, Domain, Params, Simulation};
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let (code, stdout, stderr) = run(&[
            "grayscott",
            "--rows",
            "33",
            "--cols",
            "47",
            "--steps",
            "5",
            "--images",
            "3",
            "--feed",
            "0.03",
            "--kill",
            "0.06",
            "--output",
            out,
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("throughput:"), "{stdout}");
        assert!(stdout.contains("Gelem/s"), "{stdout}");
        for i in 0..3 {
            let img = image::open(dir.path().join(format!("v-{i:04}.png"))).unwrap();
            assert_eq!((img.width(), img.height()), (47, 33));
        }
        assert!(!dir.path().join("v-0003.png").exists());
        let u: ndarray::Array2<f32> =
            ndarray_npy::read_npy(dir.path().join("u-final.npy")).unwrap();
        let v: ndarray::Array2<f32> =
            ndarray_npy::read_npy(dir.path().join("v-final.npy")).unwrap();
        let mut r = Reference::new(
            Domain::new(33, 47).unwrap(),
            Params::new(0.03, 0.06, 1.0).unwrap(),
        );
        r.advance(15).unwrap();
        let f = r.fields().unwrap();
        assert_eq!((u, v), (f.u, f.v));
    }

    #[test]
    fn broken_layouts_on_the_model_exit_with_their_fault() {
        let (code, _, stderr) = run(&[
            "grayscott",
            "--backend",
            "model",
            "--variant",
            "broken-no-border",
            "--rows",
            "5",
            "--cols",
            "40",
            "--subgroup-size",
            "8",
            "--no-output",
        ]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("undefined value reached cell (0, 0) at step 1"),
            "{stderr}"
        );
        // Subgroups of 8 lanes 5 cells apart write data column 5 twice; 7 apart skip column 6.
        for (variant, want) in [
            ("broken-overlap", "error: layout fault at step 1: cell (0, 5) is written twice (again by lane 1 of subgroup 1 in workgroup (0, 0))\n"),
            ("broken-gap", "error: layout fault at step 1: cell (0, 6) was never written\n"),
        ] {
            let (code, stdout, stderr) = run(&[
                "grayscott", "--backend", "model", "--variant", variant, "--rows", "5", "--cols",
                "40", "--subgroup-size", "8", "--workgroup-size", "32", "--no-output",
            ]);
            assert_eq!((code, stderr.as_str()), (1, want), "{stdout}");
        }
    }

    // The model runs the tile kernel (and the interleaved stacked kernel, as the stacked one) and
    // checks it against the reference; impossible tiles are bad input.
    #[test]
    fn the_model_runs_the_tile_kernel() {
        let (code, stdout, stderr) = run(&[
            "grayscott",
            "--backend",
            "model",
            "--variant",
            "subgroup-tile-t3-r10",
            "--rows",
            "23",
            "--cols",
            "41",
            "--subgroup-size",
            "8",
            "--workgroup-size",
            "16",
            "--steps",
            "7",
            "--images",
            "2",
            "--check",
            "--no-output",
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.contains("model (subgroup-tile-t3-r10, workgroup 16, subgroup 8)"),
            "{stdout}"
        );
        assert!(
            stdout.contains("max |Δ| vs reference = 0e0 over 14 steps"),
            "{stdout}"
        );
        let (code, stdout, stderr) = run(&[
            "grayscott",
            "--backend",
            "model",
            "--variant",
            "subgroup-stacked-uv",
            "--rows",
            "9",
            "--cols",
            "9",
            "--subgroup-size",
            "4",
            "--steps",
            "3",
            "--images",
            "1",
            "--check",
            "--no-output",
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.contains("model (subgroup-stacked, workgroup 128, subgroup 4)"),
            "{stdout}"
        );
        let (code, _, stderr) = run(&[
            "grayscott",
            "--backend",
            "model",
            "--variant",
            "subgroup-tile-t4-r16",
            "--subgroup-size",
            "8",
            "--no-output",
        ]);
        assert_eq!(code, 64, "{stderr}");
        assert!(
            stderr.contains("subgroups of 8 lanes leave no output lane"),
            "{stderr}"
        );
    }

    #[cfg(feature = "vulkan")]
    #[test]
    fn gpu_check_agrees_with_the_reference() {
        if crate::support::device().is_none() {
            return;
        }
        for v in [
            "naive",
            "subgroup-1d",
            "subgroup-stacked",
            "subgroup-shared",
        ] {
            let (code, stdout, stderr) = run(&[
                "grayscott",
                "--backend",
                "gpu",
                "--variant",
                v,
                "--rows",
                "61",
                "--cols",
                "67",
                "--steps",
                "10",
                "--images",
                "3",
                "--check",
                "--no-output",
            ]);
            assert_eq!(code, 0, "{v}: {stderr}");
            assert!(stdout.contains(": agree"), "{v}: {stdout}");
        }
    }
}
