//! The CPU reference: f32, double-buffered, rows in parallel with rayon, no subgroup logic — the
//! oracle the other backends are checked against.
//!
//! Two implementations of one definition: [`step_clear`] is the definition transcribed cell by cell
//! (bounds checks for the zero boundary, no parallelism, no tricks), and [`Reference`] is the fast
//! one (padded grids, one vectorisable loop per row, rows split over rayon's threads, AVX2 when the
//! CPU has it, two steps fused per pass over memory). Both call [`super::update_cell`] with the same operands in the same
//! order, so they agree bit for bit (a test checks it).

use super::{update_cell, Domain, Fields, GrayScottError, Padded, Params, Simulation};
use rayon::prelude::*;

/// One step of the definition, transcribed as plainly as possible: every neighbour outside the
/// domain reads 0.
pub fn step_clear(p: &Params, input: &Fields) -> Fields {
    let (rows, cols) = input.u.dim();
    let at = |a: &ndarray::Array2<f32>, r: isize, c: isize| -> f32 {
        if r < 0 || c < 0 || r >= rows as isize || c >= cols as isize {
            0.0
        } else {
            a[(r as usize, c as usize)]
        }
    };
    let mut out = input.clone();
    for r in 0..rows {
        for c in 0..cols {
            let mut u = [[0.0f32; 3]; 3];
            let mut v = [[0.0f32; 3]; 3];
            for dy in 0..3 {
                for dx in 0..3 {
                    let (rr, cc) = (r as isize + dy as isize - 1, c as isize + dx as isize - 1);
                    u[dy][dx] = at(&input.u, rr, cc);
                    v[dy][dx] = at(&input.v, rr, cc);
                }
            }
            let (nu, nv) = update_cell(p, &u, &v);
            out.u[(r, c)] = nu;
            out.v[(r, c)] = nv;
        }
    }
    out
}

/// Updates `n = out_u.len()` cells, cell `i` having the 3×3 neighbourhoods `u[dy][dx][i]`,
/// `v[dy][dx][i]` (each operand a slice of at least `n` values).
///
/// Written so that LLVM vectorises it: the operands are cut to `n` first, so the loop has no bounds
/// checks and no branches. The reference passes shifted views of three padded rows; the model
/// passes what its shuffles returned.
#[inline(always)]
pub fn update_cells(
    p: &Params,
    u: [[&[f32]; 3]; 3],
    v: [[&[f32]; 3]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    let n = out_u.len().min(out_v.len());
    // Named sub-slices of length n: no array adaptors inside the loop (they do not inline there),
    // and no bounds checks.
    let [[ua, ub, uc], [ud, ue, uf], [ug, uh, ui]] = u;
    let [[va, vb, vc], [vd, ve, vf], [vg, vh, vi]] = v;
    let (ua, ub, uc, ud, ue, uf, ug, uh, ui) = (
        &ua[..n],
        &ub[..n],
        &uc[..n],
        &ud[..n],
        &ue[..n],
        &uf[..n],
        &ug[..n],
        &uh[..n],
        &ui[..n],
    );
    let (va, vb, vc, vd, ve, vf, vg, vh, vi) = (
        &va[..n],
        &vb[..n],
        &vc[..n],
        &vd[..n],
        &ve[..n],
        &vf[..n],
        &vg[..n],
        &vh[..n],
        &vi[..n],
    );
    let (out_u, out_v) = (&mut out_u[..n], &mut out_v[..n]);
    for i in 0..n {
        let un = [
            [ua[i], ub[i], uc[i]],
            [ud[i], ue[i], uf[i]],
            [ug[i], uh[i], ui[i]],
        ];
        let vn = [
            [va[i], vb[i], vc[i]],
            [vd[i], ve[i], vf[i]],
            [vg[i], vh[i], vi[i]],
        ];
        let (nu, nv) = update_cell(p, &un, &vn);
        out_u[i] = nu;
        out_v[i] = nv;
    }
}

/// [`update_cells`] compiled for AVX2 (chosen at run time). Rust never contracts `a * b + c` into an
/// FMA, so this computes exactly what the baseline build computes, only 8 lanes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn update_cells_avx2(
    p: &Params,
    u: [[&[f32]; 3]; 3],
    v: [[&[f32]; 3]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    update_cells(p, u, v, out_u, out_v)
}

/// [`update_cells`] compiled for AVX-512 (16 lanes; same operations, same results).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn update_cells_avx512(
    p: &Params,
    u: [[&[f32]; 3]; 3],
    v: [[&[f32]; 3]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    update_cells(p, u, v, out_u, out_v)
}

fn update_cells_baseline(
    p: &Params,
    u: [[&[f32]; 3]; 3],
    v: [[&[f32]; 3]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    update_cells(p, u, v, out_u, out_v)
}

/// The instruction sets the CPU kernels are compiled for, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// the baseline build (SSE2 on x86-64; whatever the target has elsewhere)
    Portable,
    /// x86-64 with AVX2 (8 lanes of f32)
    Avx2,
    /// x86-64 with AVX-512F (16 lanes of f32)
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU has, lowered by the environment variable
    /// `LOCKSTEP_CPU_ISA` (`portable`, `avx2` or `avx512`: never above what the CPU has), and by
    /// `LOCKSTEP_NO_AVX512` (any value).
    pub fn detect() -> Isa {
        #[allow(unused_mut)]
        let mut have = Isa::Portable;
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                have = Isa::Avx2;
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::env::var_os("LOCKSTEP_NO_AVX512").is_none()
            {
                have = Isa::Avx512;
            }
        }
        let cap = match std::env::var("LOCKSTEP_CPU_ISA").as_deref() {
            Ok("portable") => Isa::Portable,
            Ok("avx2") => Isa::Avx2,
            _ => Isa::Avx512,
        };
        have.min(cap)
    }

    /// `portable`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

/// The CPU and its vector instruction sets, for benchmark tables: the model name from
/// `/proc/cpuinfo` (where there is one), the widest x86 vector extension it has, and the path the
/// reference takes ([`Isa::detect`]).
pub fn cpu_description() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    #[cfg(target_arch = "x86_64")]
    let isa = match (
        std::arch::is_x86_feature_detected!("avx512f"),
        std::arch::is_x86_feature_detected!("avx2"),
    ) {
        (true, _) => "x86-64 with AVX-512F",
        (false, true) => "x86-64 with AVX2, no AVX-512",
        _ => "x86-64 without AVX2",
    };
    #[cfg(not(target_arch = "x86_64"))]
    let isa = std::env::consts::ARCH;
    format!(
        "{model}, {} threads ({isa}); reference path: {}",
        rayon::current_num_threads(),
        Isa::detect().name()
    )
}

/// [`update_cells`] as a function pointer, for the best instruction set this CPU has.
pub(crate) type CellsFn = fn(&Params, [[&[f32]; 3]; 3], [[&[f32]; 3]; 3], &mut [f32], &mut [f32]);

/// The fastest [`update_cells`] for runs of exactly `n` cells: the widest vector width of
/// [`Isa::detect`] that divides `n` (16 lanes with AVX-512, 8 with AVX2, else the portable build), so
/// that no cell falls into the loop's scalar remainder. The model computes its subgroups (4..=128
/// lanes) with it.
pub(crate) fn cells_fn_for(n: usize) -> CellsFn {
    let isa = Isa::detect();
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 && n.is_multiple_of(16) {
            return |p, u, v, ou, ov| {
                // SAFETY: the CPU has AVX-512F (Isa::detect checked it).
                unsafe { update_cells_avx512(p, u, v, ou, ov) }
            };
        }
        if isa >= Isa::Avx2 && n.is_multiple_of(8) {
            return |p, u, v, ou, ov| {
                // SAFETY: the CPU has AVX2 (Isa::detect checked it).
                unsafe { update_cells_avx2(p, u, v, ou, ov) }
            };
        }
    }
    let _ = (n, isa);
    update_cells_baseline
}

/// The fastest [`update_cells`] of [`Isa::detect`], for long rows (AVX-512, else AVX2, else the
/// portable build).
pub(crate) fn cells_fn() -> CellsFn {
    match Isa::detect() {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => |p, u, v, ou, ov| {
            // SAFETY: the CPU has AVX-512F (Isa::detect checked it).
            unsafe { update_cells_avx512(p, u, v, ou, ov) }
        },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => |p, u, v, ou, ov| {
            // SAFETY: the CPU has AVX2 (Isa::detect checked it).
            unsafe { update_cells_avx2(p, u, v, ou, ov) }
        },
        _ => update_cells_baseline,
    }
}

/// The nine shifted views of three rows (`rows[dy][dx..]`) that [`update_cells`] takes.
#[inline(always)]
pub(crate) fn neighbourhood(rows: [&[f32]; 3]) -> [[&[f32]; 3]; 3] {
    rows.map(|r| [r, &r[1.min(r.len())..], &r[2.min(r.len())..]])
}

/// Padded rows r-1, r, r+1 of a grid `w` values wide.
#[inline(always)]
fn rows(a: &[f32], r: usize, w: usize) -> [&[f32]; 3] {
    [
        &a[(r - 1) * w..r * w],
        &a[r * w..(r + 1) * w],
        &a[(r + 1) * w..(r + 2) * w],
    ]
}

/// One step on padded grids: `out` gets the update of `input` (the rings stay as they are, i.e. 0).
/// Bands of rows are distributed over rayon's threads.
pub fn step_padded(p: &Params, input: [&Padded; 2], out: [&mut Padded; 2]) {
    let d = input[0].domain;
    let w = d.padded_cols();
    let cells = cells_fn();
    let (iu, iv) = (&input[0].data, &input[1].data);
    let [ou, ov] = out;
    // Interior rows 1..=rows of the outputs, one chunk per row; padded row r reads rows r-1..=r+1.
    let ou = &mut ou.data[w..(d.rows + 1) * w];
    let ov = &mut ov.data[w..(d.rows + 1) * w];
    // A band of rows per task keeps rayon's overhead well below the work (a row is ~1 µs).
    let band = (4096 / w).clamp(1, 64);
    ou.par_chunks_mut(band * w)
        .zip(ov.par_chunks_mut(band * w))
        .enumerate()
        .for_each(|(b, (bu, bv))| {
            for (k, (ru, rv)) in bu.chunks_mut(w).zip(bv.chunks_mut(w)).enumerate() {
                let r = b * band + k + 1; // padded row
                let cols = d.cols;
                cells(
                    p,
                    neighbourhood(rows(iu, r, w)),
                    neighbourhood(rows(iv, r, w)),
                    &mut ru[1..cols + 1],
                    &mut rv[1..cols + 1],
                );
            }
        });
}

/// Two steps in one pass over memory (temporal blocking): `out` gets the update of the update of
/// `input`, bit for bit what two calls of [`step_padded`] give (every cell of both steps is computed
/// by the same cell function from the same operands). Each rayon task owns a band of output rows and
/// keeps the intermediate step's rows it needs in a ring of three rows, so the intermediate grid
/// never goes to memory: a pair of steps reads U, V once and writes them once, where two single
/// steps read and write them twice. The two intermediate rows at a band's edges are computed by
/// both neighbouring bands (bands of ≥ 32 rows keep that under 7%).
pub fn step2_padded(p: &Params, input: [&Padded; 2], out: [&mut Padded; 2]) {
    let d = input[0].domain;
    let w = d.padded_cols();
    let cols = d.cols;
    let cells = cells_fn();
    let (iu, iv) = (&input[0].data, &input[1].data);
    let [ou, ov] = out;
    let ou = &mut ou.data[w..(d.rows + 1) * w];
    let ov = &mut ov.data[w..(d.rows + 1) * w];
    let threads = rayon::current_num_threads().max(1);
    // At least 32 rows per band (redundant edge rows), at most enough bands to balance the threads.
    let band = d.rows.div_ceil(threads * 4).max(32);
    let zero = vec![0.0f32; w];
    /// Rows r-1, r, r+1 of a ring of three rows (row i in slot i % 3).
    fn ring(m: &[f32], r: usize, w: usize) -> [&[f32]; 3] {
        let at = |i: usize| &m[(i % 3) * w..(i % 3 + 1) * w];
        [at(r - 1), at(r), at(r + 1)]
    }
    ou.par_chunks_mut(band * w)
        .zip(ov.par_chunks_mut(band * w))
        .enumerate()
        .for_each(|(b, (bu, bv))| {
            // The intermediate step's padded rows r0-1 ..= r1+1, three at a time: padded row i
            // lives in slot i % 3. Its ring columns stay 0 (only 1..=cols is written).
            let mut mu = vec![0.0f32; 3 * w];
            let mut mv = vec![0.0f32; 3 * w];
            let first = b * band + 1; // first padded output row of the band
            let mid_row = |i: usize, mu: &mut [f32], mv: &mut [f32]| {
                let s = (i % 3) * w;
                let (su, sv) = (&mut mu[s..s + w], &mut mv[s..s + w]);
                if i == 0 || i > d.rows {
                    // Outside the domain: the zero boundary.
                    su.copy_from_slice(&zero);
                    sv.copy_from_slice(&zero);
                } else {
                    cells(
                        p,
                        neighbourhood(rows(iu, i, w)),
                        neighbourhood(rows(iv, i, w)),
                        &mut su[1..cols + 1],
                        &mut sv[1..cols + 1],
                    );
                }
            };
            mid_row(first - 1, &mut mu, &mut mv);
            mid_row(first, &mut mu, &mut mv);
            for (k, (ru, rv)) in bu.chunks_mut(w).zip(bv.chunks_mut(w)).enumerate() {
                let r = first + k;
                mid_row(r + 1, &mut mu, &mut mv);
                cells(
                    p,
                    neighbourhood(ring(&mu, r, w)),
                    neighbourhood(ring(&mv, r, w)),
                    &mut ru[1..cols + 1],
                    &mut rv[1..cols + 1],
                );
            }
        });
}

/// The fast reference backend: two pairs of padded grids, swapped every step.
///
/// ```
/// use lockstep::grayscott::{reference::{step_clear, Reference}, Domain, Fields, Params, Simulation};
/// let d = Domain::new(7, 5).unwrap();
/// let mut fast = Reference::new(d, Params::default());
/// fast.advance(1).unwrap();
/// assert_eq!(fast.fields().unwrap(), step_clear(&Params::default(), &Fields::initial(d)));
/// ```
pub struct Reference {
    params: Params,
    cur: [Padded; 2],
    next: [Padded; 2],
    steps: u64,
}

impl Reference {
    /// Starts from the initial condition.
    pub fn new(domain: Domain, params: Params) -> Reference {
        Reference::from_fields(&Fields::initial(domain), params)
    }

    /// Starts from given fields.
    pub fn from_fields(f: &Fields, params: Params) -> Reference {
        let cur = [Padded::from_array(&f.u), Padded::from_array(&f.v)];
        let next = cur.clone();
        Reference {
            params,
            cur,
            next,
            steps: 0,
        }
    }

    /// One step, without the trait's `Result`.
    pub fn step(&mut self) {
        let [nu, nv] = &mut self.next;
        step_padded(&self.params, [&self.cur[0], &self.cur[1]], [nu, nv]);
        std::mem::swap(&mut self.cur, &mut self.next);
        self.steps += 1;
    }

    /// Two steps in one pass over memory ([`step2_padded`]); the same bits as two [`Reference::step`]s.
    pub fn step2(&mut self) {
        let [nu, nv] = &mut self.next;
        step2_padded(&self.params, [&self.cur[0], &self.cur[1]], [nu, nv]);
        std::mem::swap(&mut self.cur, &mut self.next);
        self.steps += 2;
    }
}

impl Simulation for Reference {
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError> {
        for _ in 0..steps / 2 {
            self.step2();
        }
        if steps % 2 == 1 {
            self.step();
        }
        Ok(())
    }

    fn fields(&mut self) -> Result<Fields, GrayScottError> {
        Ok(Fields {
            u: self.cur[0].to_array(),
            v: self.cur[1].to_array(),
        })
    }

    fn steps_done(&self) -> u64 {
        self.steps
    }

    fn describe(&self) -> String {
        format!(
            "reference (CPU, {} rayon threads), {}",
            rayon::current_num_threads(),
            self.cur[0].domain
        )
    }
}
