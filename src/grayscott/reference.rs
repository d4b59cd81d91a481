//! The CPU reference: f32, double-buffered, rows in parallel with rayon, no subgroup logic — the
//! oracle the other backends are checked against.
//!
//! Two implementations of one definition: [`step_clear`] is the definition transcribed cell by cell
//! (bounds checks for the zero boundary, no parallelism, no tricks), and [`Reference`] is the fast
//! one (padded grids, one vectorisable loop per row, rows split over rayon's threads, AVX2 when the
//! CPU has it). Both call [`update_cell`](super::update_cell) with the same operands in the same
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

fn update_cells_baseline(
    p: &Params,
    u: [[&[f32]; 3]; 3],
    v: [[&[f32]; 3]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    update_cells(p, u, v, out_u, out_v)
}

/// [`update_cells`] as a function pointer, for the best instruction set this CPU has.
pub type CellsFn = fn(&Params, [[&[f32]; 3]; 3], [[&[f32]; 3]; 3], &mut [f32], &mut [f32]);

/// The fastest [`update_cells`] this CPU runs (AVX2 if present, else the baseline build).
pub fn cells_fn() -> CellsFn {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return |p, u, v, ou, ov| {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { update_cells_avx2(p, u, v, ou, ov) }
        };
    }
    update_cells_baseline
}

/// The nine shifted views of three rows (`rows[dy][dx..]`) that [`update_cells`] takes.
#[inline(always)]
pub fn neighbourhood(rows: [&[f32]; 3]) -> [[&[f32]; 3]; 3] {
    rows.map(|r| [r, &r[1.min(r.len())..], &r[2.min(r.len())..]])
}

/// How a step writes its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stores {
    /// Ordinary stores: the output stays in cache (best while the state fits in it).
    Cached,
    /// Non-temporal (streaming) stores on x86-64: the output goes to memory without first being
    /// read into the cache. A step then moves 16 bytes per cell (read U, V; write U, V) instead of
    /// 24 (the write-allocate reads the old output lines first) — what a large memcpy moves.
    Streaming,
}

impl Stores {
    /// `Streaming` once the four fields no longer fit in a 32 MiB last-level cache.
    pub fn for_domain(d: Domain) -> Stores {
        let bytes = 16 * d.padded_rows() as u64 * d.padded_cols() as u64;
        if bytes > 32 << 20 {
            Stores::Streaming
        } else {
            Stores::Cached
        }
    }
}

/// Cells computed into a stack buffer before being streamed out.
const CHUNK: usize = 512;

/// Copies `src` into `dst` with non-temporal stores (16-byte aligned `movntps`, plain stores for
/// the unaligned ends). Values are copied bit for bit.
#[cfg(target_arch = "x86_64")]
fn stream(src: &[f32], dst: &mut [f32]) {
    use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
    let n = src.len().min(dst.len());
    let mut k = 0;
    while k < n && !(dst[k..].as_ptr() as usize).is_multiple_of(16) {
        dst[k] = src[k];
        k += 1;
    }
    while k + 4 <= n {
        // SAFETY: k + 4 <= n bounds both slices; dst[k] is 16-byte aligned (loop above); SSE is
        // part of every x86-64 CPU.
        unsafe { _mm_stream_ps(dst.as_mut_ptr().add(k), _mm_loadu_ps(src.as_ptr().add(k))) };
        k += 4;
    }
    dst[k..n].copy_from_slice(&src[k..n]);
}

#[cfg(not(target_arch = "x86_64"))]
fn stream(src: &[f32], dst: &mut [f32]) {
    dst.copy_from_slice(src);
}

/// Orders this thread's non-temporal stores before anything that follows (rayon's join then
/// publishes them to the other threads).
fn store_fence() {
    // SAFETY: sfence has no operands; SSE is part of every x86-64 CPU.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// One row through a small buffer, then streamed out.
fn row_streaming(
    cells: CellsFn,
    p: &Params,
    u: [&[f32]; 3],
    v: [&[f32]; 3],
    out_u: &mut [f32],
    out_v: &mut [f32],
) {
    let n = out_u.len().min(out_v.len());
    let mut tu = [0.0f32; CHUNK];
    let mut tv = [0.0f32; CHUNK];
    let mut i = 0;
    while i < n {
        let m = (n - i).min(CHUNK);
        let (cu, cv) = (u.map(|r| &r[i..i + m + 2]), v.map(|r| &r[i..i + m + 2]));
        cells(
            p,
            neighbourhood(cu),
            neighbourhood(cv),
            &mut tu[..m],
            &mut tv[..m],
        );
        stream(&tu[..m], &mut out_u[i..i + m]);
        stream(&tv[..m], &mut out_v[i..i + m]);
        i += m;
    }
}

/// One step on padded grids: `out` gets the update of `input` (the rings stay as they are, i.e. 0).
/// Bands of rows are distributed over rayon's threads.
pub fn step_padded(p: &Params, input: [&Padded; 2], out: [&mut Padded; 2], stores: Stores) {
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
                fn rows(a: &[f32], r: usize, w: usize) -> [&[f32]; 3] {
                    [
                        &a[(r - 1) * w..r * w],
                        &a[r * w..(r + 1) * w],
                        &a[(r + 1) * w..(r + 2) * w],
                    ]
                }
                let cols = d.cols;
                let (u, v) = (rows(iu, r, w), rows(iv, r, w));
                let (ru, rv) = (&mut ru[1..cols + 1], &mut rv[1..cols + 1]);
                match stores {
                    Stores::Cached => cells(p, neighbourhood(u), neighbourhood(v), ru, rv),
                    Stores::Streaming => row_streaming(cells, p, u, v, ru, rv),
                }
            }
            if stores == Stores::Streaming {
                store_fence();
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
    stores: Stores,
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
            stores: Stores::for_domain(f.domain()),
            cur,
            next,
            steps: 0,
        }
    }

    /// Chooses how steps write (default: [`Stores::for_domain`]); the values are the same.
    pub fn with_stores(mut self, stores: Stores) -> Reference {
        self.stores = stores;
        self
    }

    /// One step, without the trait's `Result`.
    pub fn step(&mut self) {
        let [nu, nv] = &mut self.next;
        step_padded(
            &self.params,
            [&self.cur[0], &self.cur[1]],
            [nu, nv],
            self.stores,
        );
        std::mem::swap(&mut self.cur, &mut self.next);
        self.steps += 1;
    }
}

impl Simulation for Reference {
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError> {
        for _ in 0..steps {
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
            "reference (CPU, {} rayon threads, {} stores), {}",
            rayon::current_num_threads(),
            match self.stores {
                Stores::Cached => "cached",
                Stores::Streaming => "streaming",
            },
            self.cur[0].domain
        )
    }
}
