//! The course's subgroup kernel executed lane by lane on lockstep's reference model — the proof that
//! a layout never lets an undefined shuffle result reach an output cell.
//!
//! Each step runs every workgroup of the dispatch the GPU would run, subgroup by subgroup, exactly as
//! the GLSL kernels in `shaders/grayscott/` do:
//!
//! 1. each lane computes its position ([`Shape::item_pos`]); lanes outside the padded grid, and
//!    subgroups whose row is past the data, exit (they are inactive for what follows);
//! 2. each active lane loads its top, centre and bottom values (from global memory, or for
//!    [`Tiling::Shared`] from the workgroup's shared-memory cache where a neighbouring subgroup
//!    loaded them);
//! 3. left and right neighbours come from `subgroupShuffleUp(x, 1)` and `subgroupShuffleDown(x, 1)`,
//!    evaluated with the model's gather rules ([`crate::model::GatherPlan`]: the source lane of
//!    every lane, from [`crate::model::gather_source`]): a lane whose source is outside the
//!    subgroup or inactive gets an *undefined* result ([`crate::model::GatherPlan::undefined`]),
//!    never a guessed value; a defined result is the value of the source lane, which for a relative
//!    shuffle is one offset away ([`crate::model::GatherPlan::offset`]) and is read there in place;
//! 4. output lanes compute the update with the reference's own arithmetic and write their cell.
//!
//! Every layout puts a subgroup's lanes on consecutive cells of one row (lane `l` at `(x0 + l, y)`;
//! a test checks it), so the active lanes are a prefix of the subgroup and loads and stores move as
//! row slices; the shuffles — what the proof rests on — are evaluated by the model, per lane. A
//! full subgroup away from the edges takes a fast path: the undefined lanes of both shuffles on a
//! full subgroup are checked against the output lanes once per step, each subgroup's position,
//! loads and rows are checked as it runs, and its output lanes join a run of such subgroups whose
//! cells follow one another. A run is computed in one vectorised call that reads each lane's values
//! where the lane loaded them (the input does not change during a step) and its neighbours' at the
//! shuffles' offsets, and its writes are checked once for the whole run (which subgroup wrote a
//! cell twice is still named). The other subgroups are computed up to 32 at a time from copies of
//! their lanes' values.
//!
//! The step fails with [`GrayScottError::UndefinedReachedCell`] if an output depends on an undefined
//! value (a shuffle from outside the subgroup or from an inactive lane, or a shared-memory slot no
//! lane wrote), and with [`GrayScottError::Layout`] if a cell is written twice or never, a write lands
//! outside the domain, or a load reads outside the padded buffer. A step that succeeds is therefore a
//! proof, for that domain and shape, that the layout is sound; and its values are bit-identical to
//! the reference's.
//!
//! ```
//! use lockstep::grayscott::{model::ModelSim, layout::{Tiling, Shape}, Domain, Params, Simulation};
//! let d = Domain::new(3, 10).unwrap();
//! let mut ok = ModelSim::new(d, Params::default(), Shape::new(Tiling::OneD, 4, 8)?)?;
//! ok.advance(2)?;
//! let mut broken = ModelSim::new(d, Params::default(), Shape::new(Tiling::NoBorder, 4, 8)?)?;
//! let e = broken.advance(1).unwrap_err().to_string();
//! assert!(e.starts_with("undefined value reached cell (0, 0) at step 1"), "{e}");
//! # Ok::<(), lockstep::grayscott::GrayScottError>(())
//! ```

use super::layout::{Shape, Tiling};
use super::reference::{cells_fn, CellsFn};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::model::{
    evaluate_typed, lookup, Args, GatherPlan, LaneArg, LaneMask, OpCall, Outcome, SubgroupSize,
};
use rayon::prelude::*;
use std::sync::Mutex;

/// The six values a lane shuffles: U and V of its top, centre and bottom cells.
type Column = [f32; 6];

/// Lanes of margin on each side of a subgroup's values in a [`Batch`]: a lane's shuffled value is
/// read in place at the shuffle's offset (`GatherPlan::offset`), so each subgroup's lanes carry a
/// margin for the out-of-range sources of its undefined lanes. The largest offset the kernel uses.
const MARGIN: usize = 1;

/// Subgroups whose updates are computed together (one call of the vectorised cell update).
const BATCH: usize = 32;

/// The loaded values of up to [`BATCH`] subgroups, and their updates: subgroup `b`'s lane `l` is
/// at `b · stride + MARGIN + l` of each row (`stride = S + 2 · MARGIN`), its left and right
/// neighbours at the shuffles' offsets from there. Their writes wait in `pending` until the batch is
/// computed.
struct Batch {
    stride: usize,
    /// U and V of the top, centre and bottom rows (U in `rows[2k]`, V in `rows[2k + 1]`)
    rows: [Vec<f32>; 6],
    out_u: Vec<f32>,
    out_v: Vec<f32>,
    /// (index in the band's output, first output lane, cells) per batched subgroup
    pending: Vec<(usize, usize, usize)>,
    /// the output lanes of consecutive full subgroups whose three rows are rows of the input,
    /// computed in place (see [`Run`])
    run: Run,
    /// the workgroup and subgroup of each subgroup in the run, in order (each gives it
    /// `S − 2 · BORDER_SIZE` cells), to name a lane in an error
    ids: Vec<([u32; 2], u32)>,
}

/// Output lanes of full subgroups, one after another, that read every value from the input grids
/// (global memory, or a cache slot holding an input row): each lane's top, centre and bottom values
/// are at `top`, `mid` and `bot` plus the lane's place in the run, its left and right neighbours
/// at the shuffles' offsets from there (`GatherPlan::offset`: lane `l` of a subgroup holds the cell
/// `l` to the right of lane 0, so the lane `offset` away holds the cell `offset` away). A subgroup
/// whose output lanes continue the run — every index at the run's end — joins it, so that a row of
/// interior subgroups is one call of the cell update, reading the input where it lies.
#[derive(Clone, Copy, Default)]
struct Run {
    top: usize,
    mid: usize,
    bot: usize,
    /// index in the band's output
    out: usize,
    /// index in the band's stamps
    stamp: usize,
    cells: usize,
}

/// Per-thread scratch space: the batch and a row of workgroups' shared memory.
struct Workspace {
    batch: Batch,
    /// `uv_cache` of the shared variant, for every workgroup of a chunk of a row: U and V per
    /// invocation, and per subgroup the mask of lanes that wrote their slot (an unwritten slot
    /// holds no defined value).
    cache_u: Vec<f32>,
    cache_v: Vec<f32>,
    cache_written: Vec<u128>,
    /// per slot, where in the input grids a whole subgroup's slot was loaded from, or [`COPIED`]:
    /// the input does not change during a step, so such a slot is read there instead of being
    /// copied (the same values; only partial slots are copied into `cache_u`/`cache_v`)
    cache_src: Vec<usize>,
    /// per workgroup of the chunk: every subgroup stored a whole row (none at the domain's edge),
    /// so no slot was filled one by one — every slot is written and holds the input row its
    /// subgroup loaded (`cache_written`/`cache_src` of the workgroup are not used)
    wg_full: Vec<bool>,
    subgroups: usize,
    /// workgroups per chunk of a row (see `workgroup_row`)
    chunk: u32,
}

impl Workspace {
    /// `groups` workgroups per row of workgroups.
    fn new(shape: &Shape, groups: u32) -> Workspace {
        // Workgroups per chunk of a row: 128 KiB of shared memory for the shared layout (L2-sized,
        // and long enough runs of each row for the prefetchers).
        let chunk = if shape.layout == Tiling::Shared {
            (16384 / shape.workgroup).clamp(1, groups.max(1))
        } else {
            groups.max(1)
        };
        let cached = if shape.layout == Tiling::Shared {
            chunk as usize
        } else {
            0
        };
        let stride = shape.subgroup as usize + 2 * MARGIN;
        let row = || vec![0.0f32; BATCH * stride];
        Workspace {
            batch: Batch {
                stride,
                rows: std::array::from_fn(|_| row()),
                out_u: row(),
                out_v: row(),
                pending: Vec::with_capacity(BATCH),
                run: Run::default(),
                ids: Vec::new(),
            },
            cache_u: vec![0.0; cached * shape.workgroup as usize],
            cache_v: vec![0.0; cached * shape.workgroup as usize],
            cache_written: vec![0; cached * shape.subgroups() as usize],
            cache_src: vec![COPIED; cached * shape.subgroups() as usize],
            wg_full: vec![false; cached],
            subgroups: shape.subgroups() as usize,
            chunk,
        }
    }

    /// Index of subgroup `sg` of the chunk's workgroup `gx` in the cache, in subgroups.
    #[inline(always)]
    fn slot(&self, gx: u32, sg: u32) -> usize {
        gx as usize * self.subgroups + sg as usize
    }
}

/// The first `n` U and V values of cache slot `slot` (`s` lanes per slot) of a workspace's
/// `cache_u`, `cache_v` and `cache_src`: where a whole subgroup stored them, the input row it
/// loaded them from.
#[inline(always)]
fn cache_row<'a>(
    (cu, cv, src): (&'a [f32], &'a [f32], &[usize]),
    c: &'a StepCtx,
    slot: usize,
    s: usize,
    n: usize,
) -> [&'a [f32]; 2] {
    match src[slot] {
        COPIED => {
            let base = slot * s;
            [&cu[base..base + n], &cv[base..base + n]]
        }
        i => [&c.u[i..i + n], &c.v[i..i + n]],
    }
}

/// [`Workspace::cache_src`] of a slot whose values are in the cache itself.
const COPIED: usize = usize::MAX;

impl Batch {
    /// Checks that the run's cells are written once this step (its subgroups' cells are distinct,
    /// each having joined at the run's end, so a cell stamped already was written by an earlier
    /// subgroup), then computes them in place (see [`Run`]) and starts an empty run.
    fn flush_run(&mut self, c: &StepCtx, band: &mut Band) -> Result<(), GrayScottError> {
        let r = std::mem::take(&mut self.run);
        let n = r.cells;
        if n == 0 {
            return Ok(());
        }
        let twice = stamp_once(&mut band.stamps[r.stamp..r.stamp + n], c.step as u8);
        if let Some(i) = twice {
            let b = c.shape.layout.border();
            let per = c.shape.subgroup - 2 * b;
            let (wg, sg) = self.ids[i / per as usize];
            let (cols, at) = (c.domain.cols(), r.stamp + i);
            self.ids.clear();
            return Err(GrayScottError::Layout {
                step: c.step,
                what: format!(
                    "cell ({}, {}) is written twice (again by {})",
                    band.first_row + at / cols,
                    at % cols,
                    who(wg, sg, b + i as u32 % per)
                ),
            });
        }
        self.ids.clear();
        fn rows<'g>(g: &'g [f32], r: &Run, [l, rt]: [i64; 2]) -> [[&'g [f32]; 3]; 3] {
            let n = r.cells;
            let at = |i: usize, offset: i64| (i as i64 + offset) as usize;
            let three = |i: usize| [&g[at(i, l)..], &g[i..i + n], &g[at(i, rt)..]];
            [three(r.top), three(r.mid), three(r.bot)]
        }
        let offsets = [c.left_offset, c.right_offset];
        (c.cells)(
            &c.params,
            rows(c.u, &r, offsets),
            rows(c.v, &r, offsets),
            &mut band.u[r.out..r.out + n],
            &mut band.v[r.out..r.out + n],
        );
        Ok(())
    }

    /// Computes the pending subgroups' updates (every lane and margin of the batch in one
    /// vectorised call, with the reference's arithmetic) and stores their output lanes.
    fn flush(&mut self, c: &StepCtx, band: &mut Band) -> Result<(), GrayScottError> {
        self.flush_run(c, band)?;
        let used = self.pending.len();
        if used == 0 {
            return Ok(());
        }
        let n = used * self.stride - 2 * MARGIN;
        let at = |offset: i64| (MARGIN as i64 + offset) as usize;
        let (l, r) = (at(c.left_offset), at(c.right_offset));
        let m = &self.rows;
        let rows = |k: usize| [&m[k][l..l + n], &m[k][MARGIN..MARGIN + n], &m[k][r..r + n]];
        (c.cells)(
            &c.params,
            [rows(0), rows(2), rows(4)],
            [rows(1), rows(3), rows(5)],
            &mut self.out_u[..n],
            &mut self.out_v[..n],
        );
        for (b, &(i, first, count)) in self.pending.iter().enumerate() {
            // Output index j holds lane j − b · stride of subgroup b (j = b · stride + lane).
            let j = b * self.stride + first;
            copy_lanes(&mut band.u[i..i + count], &self.out_u[j..j + count]);
            copy_lanes(&mut band.v[i..i + count], &self.out_v[j..j + count]);
        }
        self.pending.clear();
        Ok(())
    }
}

/// What one parallel task may write: a band of data rows of the outputs.
struct Band<'a> {
    first_row: usize,
    /// data rows in the band
    rows: usize,
    u: &'a mut [f32],
    v: &'a mut [f32],
    stamps: &'a mut [u8],
}

/// Everything a step reads.
struct StepCtx<'a> {
    shape: Shape,
    params: Params,
    domain: Domain,
    u: &'a [f32],
    v: &'a [f32],
    up: &'a OpCall,
    down: &'a OpCall,
    up_plan: &'a GatherPlan,
    down_plan: &'a GatherPlan,
    cells: CellsFn,
    step: u64,
    /// where `shuffle_up` / `shuffle_down` read, relative to the lane (`GatherPlan::offset`)
    left_offset: i64,
    right_offset: i64,
    /// subgroups per workgroup
    n_sg: u32,
    /// on a full subgroup, no output lane (`is_subgroup_output()`) gets an undefined shuffle
    full_ok: bool,
}

/// The subgroup kernel on the model, at one [`Shape`].
pub struct ModelSim {
    params: Params,
    shape: Shape,
    cur: [Padded; 2],
    next: [Padded; 2],
    /// per data cell, the step that last wrote it, modulo 256: every step checks that each cell
    /// was written once, so after a step every stamp is that step's and a cell this step misses
    /// still holds the previous one
    stamps: Vec<u8>,
    steps: u64,
    up: OpCall,
    down: OpCall,
    up_plan: GatherPlan,
    down_plan: GatherPlan,
    offsets: [i64; 2],
    /// workspaces kept from step to step (a fresh one per rayon job would map and fault in its
    /// pages again at every step)
    pool: Mutex<Vec<Workspace>>,
}

/// A workspace taken from [`ModelSim::pool`] for one rayon job, and given back when the job ends.
struct Lease<'a> {
    ws: Option<Workspace>,
    pool: &'a Mutex<Vec<Workspace>>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let (Some(ws), Ok(mut pool)) = (self.ws.take(), self.pool.lock()) {
            pool.push(ws);
        }
    }
}

impl ModelSim {
    /// Starts from the initial condition.
    pub fn new(domain: Domain, params: Params, shape: Shape) -> Result<ModelSim, GrayScottError> {
        ModelSim::from_fields(&Fields::initial(domain), params, shape)
    }

    /// Starts from given fields.
    pub fn from_fields(
        f: &Fields,
        params: Params,
        shape: Shape,
    ) -> Result<ModelSim, GrayScottError> {
        let cur = [Padded::from_array(&f.u), Padded::from_array(&f.v)];
        let model_err = |e: crate::model::ModelError| GrayScottError::Config(e.to_string());
        let size = SubgroupSize::new(shape.subgroup as u64).map_err(model_err)?;
        let call = |name| -> Result<OpCall, GrayScottError> {
            let args = Args {
                delta: Some(LaneArg::Uniform(1)),
                ..Args::default()
            };
            OpCall::new(lookup(name).map_err(model_err)?, size, args).map_err(model_err)
        };
        let (up, down) = (call("shuffle_up")?, call("shuffle_down")?);
        let plan = |c: &OpCall| {
            GatherPlan::new(c).ok_or_else(|| {
                GrayScottError::Config(format!("{} is not a gather (model bug)", c.info().name))
            })
        };
        let (up_plan, down_plan) = (plan(&up)?, plan(&down)?);
        // A relative shuffle by 1 reads the lane beside: the workspace keeps MARGIN lanes for it.
        let offset = |p: &GatherPlan, c: &OpCall| {
            p.offset()
                .filter(|o| o.unsigned_abs() as usize <= MARGIN)
                .ok_or_else(|| {
                    GrayScottError::Config(format!(
                        "{} by 1 does not read a lane beside (model bug)",
                        c.info().name
                    ))
                })
        };
        let offsets = [offset(&up_plan, &up)?, offset(&down_plan, &down)?];
        Ok(ModelSim {
            params,
            shape,
            next: cur.clone(),
            stamps: vec![0; f.domain().cells()],
            cur,
            steps: 0,
            up_plan,
            down_plan,
            offsets,
            up,
            down,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// The kernel shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// One step; on error the state is left as it was before the step.
    pub fn step(&mut self) -> Result<(), GrayScottError> {
        let shape = self.shape;
        let domain = self.cur[0].domain;
        let step = self.steps + 1;
        let grid = shape.grid(domain);
        let w = domain.padded_cols();
        let cols = domain.cols();
        let rpw = shape.rows_per_workgroup_row();
        // Workgroup rows per task: enough cells per task to dwarf rayon's overhead.
        let k = (8192 / (rpw * cols)).max(1);
        let band_rows = rpw * k;
        let tasks = domain.rows().div_ceil(band_rows);
        if (grid[1] as usize).div_ceil(k) != tasks {
            return Err(GrayScottError::Layout {
                step,
                what: format!(
                    "{} rows of workgroups do not tile {} data rows",
                    grid[1],
                    domain.rows()
                ),
            });
        }
        let ctx = StepCtx {
            shape,
            params: self.params,
            domain,
            u: &self.cur[0].data,
            v: &self.cur[1].data,
            up: &self.up,
            down: &self.down,
            up_plan: &self.up_plan,
            down_plan: &self.down_plan,
            cells: cells_fn(),
            step,
            left_offset: self.offsets[0],
            right_offset: self.offsets[1],
            n_sg: shape.subgroups(),
            full_ok: {
                let full = LaneMask::first(shape.subgroup);
                let undefined = self.up_plan.undefined(full).0 | self.down_plan.undefined(full).0;
                let b = shape.layout.border();
                let outputs = LaneMask::first(shape.subgroup - b).0 & !LaneMask::first(b).0;
                undefined & outputs == 0
            },
        };
        let [nu, nv] = &mut self.next;
        let ou = &mut nu.data[w..(domain.rows() + 1) * w];
        let ov = &mut nv.data[w..(domain.rows() + 1) * w];
        let results: Vec<Result<(), GrayScottError>> = ou
            .par_chunks_mut(band_rows * w)
            .zip(ov.par_chunks_mut(band_rows * w))
            .zip(self.stamps.par_chunks_mut(band_rows * cols))
            .enumerate()
            .map_init(
                || {
                    let ws = self.pool.lock().ok().and_then(|mut p| p.pop());
                    Lease {
                        ws: Some(ws.unwrap_or_else(|| Workspace::new(&shape, grid[0]))),
                        pool: &self.pool,
                    }
                },
                |lease, (b, ((u, v), stamps))| {
                    let ws = lease.ws.as_mut().expect("a leased workspace");
                    // A workspace serves many bands: nothing of an earlier (failed) band is pending.
                    ws.batch.pending.clear();
                    ws.batch.run = Run::default();
                    ws.batch.ids.clear();
                    let mut band = Band {
                        first_row: b * band_rows,
                        rows: stamps.len() / cols,
                        u,
                        v,
                        stamps,
                    };
                    let gy_end = ((b + 1) * k).min(grid[1] as usize);
                    for gy in b * k..gy_end {
                        workgroup_row(&ctx, gy as u32, grid[0], ws, &mut band)?;
                    }
                    ws.batch.flush(&ctx, &mut band)
                },
            )
            .collect();
        results.into_iter().collect::<Result<(), _>>()?;
        // Every cell stamped by this step (a vectorised scan, then the first miss if there is one).
        let stamp = step as u8;
        let missed = self
            .stamps
            .par_chunks(1 << 16)
            .any(|ch| ch.iter().fold(0u8, |acc, &t| acc | (t ^ stamp)) != 0);
        if let Some(i) = missed
            .then(|| self.stamps.iter().position(|&s| s != stamp))
            .flatten()
        {
            return Err(GrayScottError::Layout {
                step,
                what: format!("cell ({}, {}) was never written", i / cols, i % cols),
            });
        }
        std::mem::swap(&mut self.cur, &mut self.next);
        self.steps = step;
        Ok(())
    }
}

fn who(wg: [u32; 2], sg: u32, lane: u32) -> String {
    format!(
        "lane {lane} of subgroup {sg} in workgroup ({}, {})",
        wg[0], wg[1]
    )
}

/// Global loads of `n` consecutive cells of padded row `y` from column `x`, checked against the
/// padded buffer: a read outside it is a fault, not a value.
#[inline(always)]
fn load_row<'a>(
    c: &StepCtx<'a>,
    x: i64,
    y: i64,
    n: usize,
    who: impl Fn() -> String,
) -> Result<(&'a [f32], &'a [f32]), GrayScottError> {
    let (w, h) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    if x < 0 || y < 0 || x + n as i64 > w || y >= h {
        let (bx, by) = if y < 0 || y >= h {
            (x.max(0), y)
        } else {
            (x.max(w), y)
        };
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "{} reads padded cell ({by}, {bx}), outside the {h}×{w} buffer",
                who()
            ),
        });
    }
    let i = (y * w + x) as usize;
    Ok((&c.u[i..i + n], &c.v[i..i + n]))
}

/// Lanes of subgroup `sg` that pass the kernel's first test (inside the padded grid and, for the
/// kernels in `shaders/grayscott/`, on a row of the data): a prefix `0..n` of the subgroup, since
/// a subgroup's lanes sit on consecutive cells of one row ([`Shape::item_pos`]).
#[inline(always)]
fn active_lanes(c: &StepCtx, x0: i64, y: i64, below: i64) -> usize {
    let pw = c.domain.padded_cols() as i64;
    if y >= below || x0 >= pw {
        0
    } else {
        ((pw - x0) as usize).min(c.shape.subgroup as usize)
    }
}

/// Runs the row `gy` of `groups` workgroups. Workgroups are independent (their only shared state is
/// their own shared memory), so the order does not change what the model proves: here the row is
/// taken in chunks of workgroups; in a chunk, every workgroup's shared-memory cache is filled first
/// (`set_uv_cache()`, then the `barrier()`), then the subgroups run one data row at a time across
/// the chunk's workgroups, so that the loads walk along rows of memory (and the cache stays small).
fn workgroup_row(
    c: &StepCtx,
    gy: u32,
    groups: u32,
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let shape = &c.shape;
    let s = shape.subgroup as usize;
    let ph = c.domain.padded_rows() as i64;
    let n_sg = shape.subgroups();
    let chunk = ws.chunk;
    for g0 in (0..groups).step_by(chunk as usize) {
        let g1 = (g0 + chunk).min(groups);
        if shape.layout == Tiling::Shared {
            // set_uv_cache(): every lane inside the padded grid stores its value; barrier().
            // Workgroup by workgroup, so that the slots are filled in the order they are laid out.
            let pw = c.domain.padded_cols() as i64;
            for gx in g0..g1 {
                // A stacked workgroup's subgroups share their columns: if the first and the last
                // are whole rows inside the padded grid, every one is.
                let (xf, yf) = shape.item_pos([gx, gy], 0, 0);
                let (_, yl) = shape.item_pos([gx, gy], n_sg - 1, 0);
                let whole = xf >= 0 && xf + s as i64 <= pw && yf >= 0 && yl < ph;
                ws.wg_full[(gx - g0) as usize] = whole;
                if whole {
                    continue;
                }
                for sg in 0..n_sg {
                    let wg = [gx, gy];
                    let (x0, y) = shape.item_pos(wg, sg, 0);
                    let n = active_lanes(c, x0, y, ph);
                    let slot = ws.slot(gx - g0, sg);
                    let base = slot * s;
                    ws.cache_written[slot] = 0;
                    ws.cache_src[slot] = COPIED;
                    if n == s && x0 >= 0 && y >= 0 {
                        // The whole subgroup inside the padded grid (active_lanes): no checks,
                        // and no copy — the slot holds this row of the (unchanging) input.
                        ws.cache_src[slot] = y as usize * c.domain.padded_cols() + x0 as usize;
                        ws.cache_written[slot] = LaneMask::first(n as u32).0;
                    } else if n > 0 {
                        let (u, v) = load_row(c, x0, y, n, || who(wg, sg, 0))?;
                        copy_lanes(&mut ws.cache_u[base..], u);
                        copy_lanes(&mut ws.cache_v[base..], v);
                        ws.cache_written[slot] = LaneMask::first(n as u32).0;
                    }
                }
            }
        }
        if shape.layout.stacked() {
            for sg in 0..n_sg {
                for gx in g0..g1 {
                    visit(c, [gx, gy], gx - g0, sg, ws, band)?;
                }
            }
        } else {
            for gx in g0..g1 {
                for sg in 0..n_sg {
                    visit(c, [gx, gy], gx - g0, sg, ws, band)?;
                }
            }
        }
    }
    Ok(())
}

/// Stamps `stamps` with `stamp` unless one of them already has it (a cell written twice this step):
/// then returns its index and stamps nothing. Without calls to `memset`, for the same reason as
/// [`copy_lanes`].
#[inline(always)]
fn stamp_once(stamps: &mut [u8], stamp: u8) -> Option<usize> {
    let n = stamps.len();
    if stamps.iter().fold(false, |seen, &t| seen | (t == stamp)) {
        return stamps.iter().position(|&t| t == stamp);
    }
    let mut k = 0;
    while k + 8 <= n {
        stamps[k..k + 8].copy_from_slice(&[stamp; 8]);
        k += 8;
    }
    let tail = &mut stamps[k..];
    for i in 0..7 {
        if i < tail.len() {
            tail[i] = stamp;
        }
    }
    None
}

/// Copies `src` into the start of `dst` without a call to `memcpy`: the runs here are a subgroup
/// long (4..=128 values), where the library call costs more than the copy.
#[inline(always)]
fn copy_lanes(dst: &mut [f32], src: &[f32]) {
    let n = src.len();
    let dst = &mut dst[..n];
    let mut k = 0;
    while k + 8 <= n {
        let chunk: &[f32; 8] = src[k..k + 8].try_into().expect("8 values");
        dst[k..k + 8].copy_from_slice(chunk);
        k += 8;
    }
    // At most 7 left: a fixed trip count, so that the compiler keeps it a loop of moves.
    let (d, s) = (&mut dst[k..], &src[k..]);
    for i in 0..7 {
        if i < s.len() {
            d[i] = s[i];
        }
    }
}

/// True when the subgroup at `(x0, y)`, all of whose lanes are active, needs none of the checks
/// [`subgroup`] makes for the edges: its three rows lie inside the padded buffer, its output lanes
/// inside the data, and every cache slot it reads was written.
#[inline(always)]
fn interior(c: &StepCtx, ws: &Workspace, x0: i64, y: i64, chunk_gx: u32, sg: u32) -> bool {
    let (pw, ph) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    let (s, b) = (c.shape.subgroup as i64, c.shape.layout.border() as i64);
    let inside = y >= 1 && y + 1 < ph && x0 >= 0 && x0 + s <= pw && x0 + b >= 1 && x0 + s - b < pw;
    if !inside {
        return false;
    }
    if c.shape.layout != Tiling::Shared {
        return true;
    }
    let full = LaneMask::first(c.shape.subgroup).0;
    ws.wg_full[chunk_gx as usize]
        || [sg.wrapping_sub(1), sg + 1].into_iter().all(|t| {
            t >= c.n_sg || ws.cache_written[chunk_gx as usize * ws.subgroups + t as usize] == full
        })
}

/// Where lane 0's top, centre and bottom values lie in the input grids, when the subgroup at
/// `(x0, y)` takes the fast path: all its lanes active, the undefined lanes of both shuffles on a
/// full subgroup none of the output lanes (`StepCtx::full_ok`), [`interior`] (no value read is
/// undefined), and each row read from global memory or from a cache slot that holds an input row.
#[inline(always)]
fn fast_rows(
    c: &StepCtx,
    ws: &Workspace,
    x0: i64,
    y: i64,
    chunk_gx: u32,
    sg: u32,
) -> Option<[usize; 3]> {
    let s = c.shape.subgroup as usize;
    let ph = c.domain.padded_rows() as i64;
    let n = active_lanes(c, x0, y, c.shape.layout.exit_row(ph));
    if n != s || !c.full_ok || !interior(c, ws, x0, y, chunk_gx, sg) {
        return None;
    }
    let w = c.domain.padded_cols();
    let source = |dy: i64| -> Option<usize> {
        let target = sg as i64 + dy;
        let cached =
            dy != 0 && c.shape.layout == Tiling::Shared && target >= 0 && target < c.n_sg as i64;
        if cached && !ws.wg_full[chunk_gx as usize] {
            let slot = chunk_gx as usize * ws.subgroups + target as usize;
            Some(ws.cache_src[slot]).filter(|&i| i != COPIED)
        } else {
            // Global memory, or the slot of a whole workgroup: the same row of the input.
            // Inside the padded buffer (interior()).
            Some((y + dy) as usize * w + x0 as usize)
        }
    };
    Some([source(-1)?, source(0)?, source(1)?])
}

/// The fast path of a subgroup that [`fast_rows`] admits: no value it reads is undefined, so what
/// remains is to check where it writes and to add its output lanes to the run (see [`Run`]); the
/// run checks that each cell is written once.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn join(
    c: &StepCtx,
    x0: i64,
    y: i64,
    [top, mid, bot]: [usize; 3],
    wg: [u32; 2],
    sg: u32,
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let s = c.shape.subgroup as usize;
    let b = c.shape.layout.border() as usize;
    let (row, col0) = (y as usize - 1, x0 as usize + b - 1);
    if row < band.first_row || row >= band.first_row + band.rows {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "{} writes row {row}, outside the rows its workgroup row owns",
                who(wg, sg, b as u32)
            ),
        });
    }
    let local = row - band.first_row;
    let count = s - 2 * b;
    let out = local * c.domain.padded_cols() + col0 + 1;
    let stamp = local * c.domain.cols() + col0;
    let batch = &mut ws.batch;
    let run = &batch.run;
    let end = run.cells;
    // Lane b's values are b lanes along each row. (Compared one by one: an array comparison
    // stores the values and reloads them as a vector.)
    let continues = end > 0
        && out == run.out + end
        && stamp == run.stamp + end
        && mid + b == run.mid + end
        && top + b == run.top + end
        && bot + b == run.bot + end;
    if !continues {
        batch.flush_run(c, band)?;
        batch.run = Run {
            top: top + b,
            mid: mid + b,
            bot: bot + b,
            out,
            stamp,
            cells: 0,
        };
    }
    batch.run.cells += count;
    batch.ids.push((wg, sg));
    Ok(())
}

/// Runs subgroup `sg` of workgroup `wg`: the fast path ([`join`]) where [`fast_rows`] admits it,
/// else [`subgroup`], after the run so far (whose writes come first).
#[inline(always)]
fn visit(
    c: &StepCtx,
    wg: [u32; 2],
    chunk_gx: u32,
    sg: u32,
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let (x0, y) = c.shape.item_pos(wg, sg, 0);
    if let Some(rows) = fast_rows(c, ws, x0, y, chunk_gx, sg) {
        return join(c, x0, y, rows, wg, sg, ws, band);
    }
    ws.batch.flush_run(c, band)?;
    subgroup(c, wg, chunk_gx, sg, ws, band)
}

/// Runs one subgroup: loads, shuffles, updates and writes.
fn subgroup(
    c: &StepCtx,
    wg: [u32; 2],
    chunk_gx: u32,
    sg: u32,
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let shape = &c.shape;
    let s = shape.subgroup as usize;
    let (pw, ph) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    // Positions: lane l sits at (x0 + l, y).
    let (x0, y) = shape.item_pos(wg, sg, 0);
    let n = active_lanes(c, x0, y, shape.layout.exit_row(ph));
    if n == 0 {
        return Ok(());
    }
    let mask = LaneMask::first(n as u32);
    // Lanes whose own top or bottom value is undefined (an unwritten cache slot).
    let mut own_undefined = 0u128;
    // This subgroup's place in the batch (taken only if it has outputs, below).
    let lane0 = ws.batch.pending.len() * ws.batch.stride + MARGIN;
    // Rows 0, 1, 2 = top, centre, bottom (U in rows[2k], V in rows[2k + 1], lane l at lane0 + l):
    // from global memory, or from the cache slots of the subgroup above / below.
    for (k, dy) in [-1i64, 0, 1].into_iter().enumerate() {
        let target = sg as i64 + dy;
        let cached = dy != 0
            && shape.layout == Tiling::Shared
            && target >= 0
            && target < shape.subgroups() as i64;
        let (cu, cv) = ws.batch.rows.split_at_mut(2 * k + 1);
        let (cu, cv) = (&mut cu[2 * k][lane0..], &mut cv[0][lane0..]);
        if cached {
            // get_uv_cache(dy): the same lane of the subgroup dy rows away. An unwritten slot
            // holds whatever the workspace held: undefined, and marked so.
            let slot = chunk_gx as usize * ws.subgroups + target as usize;
            let [u, v] = if ws.wg_full[chunk_gx as usize] {
                let i = (y + dy) as usize * pw as usize + x0 as usize;
                [&c.u[i..i + n], &c.v[i..i + n]]
            } else {
                own_undefined |= !ws.cache_written[slot] & mask.0;
                cache_row((&ws.cache_u, &ws.cache_v, &ws.cache_src), c, slot, s, n)
            };
            copy_lanes(cu, u);
            copy_lanes(cv, v);
        } else {
            let (u, v) = load_row(c, x0, y + dy, n, || who(wg, sg, 0))?;
            copy_lanes(cu, u);
            copy_lanes(cv, v);
        }
    }
    // subgroupShuffleUp/Down(x, 1) of each of the six values, by the model's gather rules
    // (`GatherPlan`: the source lane of every lane, from `gather_source`). Where a result is
    // defined it is the value `offset` lanes away, read in place below; where it is not (the same
    // lanes for every component) no value is read for an output.
    let undef_left = c.up_plan.undefined(mask).0;
    let undef_right = c.down_plan.undefined(mask).0;
    // A defined shuffle still carries an undefined value if its source lane held one.
    let own = LaneMask(own_undefined);
    let tainted = undef_left
        | undef_right
        | own_undefined
        | c.up_plan.carried(mask, own).0
        | c.down_plan.carried(mask, own).0;

    // Output lanes: is_subgroup_output(), active, and left of data_end_pos().
    let b = shape.layout.border() as usize;
    let first = b;
    let end = (s - b).min(n).min((pw - 1 - x0).max(0) as usize);
    if first >= end {
        return Ok(());
    }
    let (col0, row) = (x0 + first as i64 - 1, y - 1);
    if col0 < 0 || row < 0 {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "{} writes padded cell ({y}, {}) on the zero ring",
                who(wg, sg, first as u32),
                x0 + first as i64
            ),
        });
    }
    let out_mask = LaneMask::first(end as u32).0 & !LaneMask::first(first as u32).0;
    if let Some(lane) = LaneMask(tainted & out_mask).lowest() {
        return Err(GrayScottError::UndefinedReachedCell {
            row: row as usize,
            col: (x0 + lane as i64 - 1) as usize,
            step: c.step,
            why: explain(
                c,
                wg,
                sg,
                lane,
                mask,
                &ws.batch,
                lane0,
                undef_left,
                undef_right,
                own_undefined,
            ),
        });
    }
    let (row, col0) = (row as usize, col0 as usize);
    let cols = c.domain.cols();
    if row < band.first_row || row >= band.first_row + band.rows {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "{} writes row {row}, outside the rows its workgroup row owns",
                who(wg, sg, first as u32)
            ),
        });
    }
    let local = row - band.first_row;
    let count = end - first;
    let stamps = &mut band.stamps[local * cols + col0..local * cols + col0 + count];
    if let Some(i) = stamp_once(stamps, c.step as u8) {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "cell ({row}, {}) is written twice (again by {})",
                col0 + i,
                who(wg, sg, (first + i) as u32)
            ),
        });
    }
    // The update, with the reference's own arithmetic, when the batch is full: the output lanes'
    // shuffles are defined (checked above), their left and right neighbours are read at the
    // shuffles' offsets.
    let w = c.domain.padded_cols();
    ws.batch.pending.push((local * w + col0 + 1, first, count));
    if ws.batch.pending.len() == BATCH {
        ws.batch.flush(c, band)?;
    }
    Ok(())
}

/// Why `lane`'s output is undefined, in words (the slow path: re-evaluates the shuffle with full
/// outcomes to get the model's reason).
#[allow(clippy::too_many_arguments)]
fn explain(
    c: &StepCtx,
    wg: [u32; 2],
    sg: u32,
    lane: u32,
    mask: LaneMask,
    batch: &Batch,
    lane0: usize,
    undef_left: u128,
    undef_right: u128,
    own: u128,
) -> String {
    let bit = 1u128 << lane;
    let m = &batch.rows;
    let input: Vec<Column> = (0..c.shape.subgroup as usize)
        .map(|l| l + lane0)
        .map(|l| [m[0][l], m[1][l], m[2][l], m[3][l], m[4][l], m[5][l]])
        .collect();
    let reason = |call: &OpCall| -> String {
        match evaluate_typed(call, mask, &input) {
            Ok(o) => match o.get(lane as usize) {
                Some(Outcome::Undefined(r)) => r.to_string(),
                Some(other) => format!("outcome {other}"),
                None => "no outcome".into(),
            },
            Err(e) => e.to_string(),
        }
    };
    let w = who(wg, sg, lane);
    if undef_left & bit != 0 {
        format!(
            "{w} takes its left neighbours from subgroupShuffleUp(x, 1), which is undefined there ({})",
            reason(c.up)
        )
    } else if undef_right & bit != 0 {
        format!(
            "{w} takes its right neighbours from subgroupShuffleDown(x, 1), which is undefined there ({})",
            reason(c.down)
        )
    } else if own & bit != 0 {
        format!("{w} reads its top or bottom value from a shared-memory slot that no lane wrote")
    } else {
        format!(
            "{w} shuffles in a value that its neighbour lane read from a shared-memory slot no lane wrote"
        )
    }
}

impl Simulation for ModelSim {
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError> {
        for _ in 0..steps {
            self.step()?;
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
        format!("model ({}), {}", self.shape, self.cur[0].domain)
    }
}
