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
//!    every lane, from [`crate::model::gather_source`]): a lane whose
//!    source is outside the subgroup or inactive gets an *undefined* result, never a guessed value;
//! 4. output lanes compute the update with the reference's own arithmetic and write their cell.
//!
//! Every layout puts a subgroup's lanes on consecutive cells of one row (lane `l` at `(x0 + l, y)`;
//! a test checks it), so the active lanes are a prefix of the subgroup and loads and stores move as
//! row slices; the shuffles — what the proof rests on — are evaluated by the model, per lane.
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
use super::reference::{cells_fn_for, CellsFn};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::model::{
    evaluate_typed, lookup, Args, GatherPlan, LaneArg, LaneMask, OpCall, Outcome, SubgroupSize,
};
use rayon::prelude::*;

/// The six values a lane shuffles: U and V of its top, centre and bottom cells.
type Column = [f32; 6];

/// Lanes in a subgroup, at most (gl_SubgroupSize ≤ 128).
const LANES: usize = 128;

/// One array per component of [`Column`], indexed by lane.
type Soa = [[f32; LANES]; 6];

/// Per-thread scratch space for one subgroup and one workgroup's shared memory.
struct Workspace {
    centre: Box<Soa>,
    left: Box<Soa>,
    right: Box<Soa>,
    out_u: [f32; LANES],
    out_v: [f32; LANES],
    /// `uv_cache` of the shared variant: U and V per invocation of the workgroup, and per subgroup
    /// the mask of lanes that wrote their slot (an unwritten slot holds no defined value).
    cache_u: Vec<f32>,
    cache_v: Vec<f32>,
    cache_written: Vec<u128>,
}

impl Workspace {
    fn new(shape: &Shape) -> Workspace {
        let soa = || Box::new([[0.0f32; LANES]; 6]);
        Workspace {
            centre: soa(),
            left: soa(),
            right: soa(),
            out_u: [0.0; LANES],
            out_v: [0.0; LANES],
            cache_u: vec![0.0; shape.workgroup as usize],
            cache_v: vec![0.0; shape.workgroup as usize],
            cache_written: vec![0; shape.subgroups() as usize],
        }
    }
}

/// What one parallel task may write: a band of data rows of the outputs.
struct Band<'a> {
    first_row: usize,
    u: &'a mut [f32],
    v: &'a mut [f32],
    stamps: &'a mut [u64],
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
}

/// The subgroup kernel on the model, at one [`Shape`].
pub struct ModelSim {
    params: Params,
    shape: Shape,
    cur: [Padded; 2],
    next: [Padded; 2],
    stamps: Vec<u64>,
    steps: u64,
    up: OpCall,
    down: OpCall,
    up_plan: GatherPlan,
    down_plan: GatherPlan,
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
        Ok(ModelSim {
            params,
            shape,
            next: cur.clone(),
            stamps: vec![0; f.domain().cells()],
            cur,
            steps: 0,
            up_plan: plan(&up)?,
            down_plan: plan(&down)?,
            up,
            down,
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
            cells: cells_fn_for(shape.subgroup as usize),
            step,
        };
        let [nu, nv] = &mut self.next;
        let ou = &mut nu.data[w..(domain.rows() + 1) * w];
        let ov = &mut nv.data[w..(domain.rows() + 1) * w];
        let results: Vec<Result<(), GrayScottError>> = ou
            .par_chunks_mut(band_rows * w)
            .zip(ov.par_chunks_mut(band_rows * w))
            .zip(self.stamps.par_chunks_mut(band_rows * cols))
            .enumerate()
            .map(|(b, ((u, v), stamps))| {
                let mut ws = Workspace::new(&shape);
                let mut band = Band {
                    first_row: b * band_rows,
                    u,
                    v,
                    stamps,
                };
                let gy_end = ((b + 1) * k).min(grid[1] as usize);
                for gy in b * k..gy_end {
                    for gx in 0..grid[0] {
                        workgroup(&ctx, [gx, gy as u32], &mut ws, &mut band)?;
                    }
                }
                Ok(())
            })
            .collect();
        results.into_iter().collect::<Result<(), _>>()?;
        if let Some(i) = self.stamps.iter().position(|&s| s != step) {
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

/// Runs one workgroup.
fn workgroup(
    c: &StepCtx,
    wg: [u32; 2],
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let shape = &c.shape;
    let s = shape.subgroup as usize;
    let ph = c.domain.padded_rows() as i64;
    if shape.layout == Tiling::Shared {
        // set_uv_cache(): every lane inside the padded grid stores its value; barrier().
        for sg in 0..shape.subgroups() {
            let (x0, y) = shape.item_pos(wg, sg, 0);
            let n = active_lanes(c, x0, y, ph);
            let base = sg as usize * s;
            ws.cache_written[sg as usize] = 0;
            if n > 0 {
                let (u, v) = load_row(c, x0, y, n, || who(wg, sg, 0))?;
                ws.cache_u[base..base + n].copy_from_slice(u);
                ws.cache_v[base..base + n].copy_from_slice(v);
                ws.cache_written[sg as usize] = LaneMask::first(n as u32).0;
            }
        }
    }
    for sg in 0..shape.subgroups() {
        subgroup(c, wg, sg, ws, band)?;
    }
    Ok(())
}

/// Runs one subgroup: loads, shuffles, updates and writes.
fn subgroup(
    c: &StepCtx,
    wg: [u32; 2],
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
    let active = LaneMask::first(n as u32).0;
    // Lanes whose own top or bottom value is undefined (an unwritten cache slot).
    let mut own_undefined = 0u128;
    // Rows 0, 1, 2 = top, centre, bottom (U in ws.centre[2k], V in ws.centre[2k + 1]): from
    // global memory, or from the cache slots of the subgroup above / below.
    for (k, dy) in [-1i64, 0, 1].into_iter().enumerate() {
        let target = sg as i64 + dy;
        let cached = dy != 0
            && shape.layout == Tiling::Shared
            && target >= 0
            && target < shape.subgroups() as i64;
        let (cu, cv) = ws.centre.split_at_mut(2 * k + 1);
        let (cu, cv) = (&mut cu[2 * k], &mut cv[0]);
        if cached {
            // get_uv_cache(dy): the same lane of the subgroup dy rows away.
            let base = target as usize * s;
            cu[..n].copy_from_slice(&ws.cache_u[base..base + n]);
            cv[..n].copy_from_slice(&ws.cache_v[base..base + n]);
            let unwritten = !ws.cache_written[target as usize] & LaneMask::first(n as u32).0;
            own_undefined |= unwritten;
            for lane in LaneMask(unwritten).iter() {
                cu[lane as usize] = f32::NAN;
                cv[lane as usize] = f32::NAN;
            }
        } else {
            let (u, v) = load_row(c, x0, y + dy, n, || who(wg, sg, 0))?;
            cu[..n].copy_from_slice(u);
            cv[..n].copy_from_slice(v);
        }
    }
    let mask = LaneMask(active);
    // subgroupShuffleUp/Down(x, 1) of each of the six values, by the model's gather rules
    // (`GatherPlan`: the source lane of every lane, from `gather_source`); the undefined lanes are
    // the same for every component.
    let centre = &ws.centre;
    let shuffle = |plan: &GatherPlan, out: &mut Soa| -> u128 {
        let mut undefined = 0;
        for (o, x) in out.iter_mut().zip(centre.iter()) {
            undefined = plan.apply(mask, &x[..s], &mut o[..s]).0;
        }
        undefined
    };
    let undef_left = shuffle(c.up_plan, &mut ws.left);
    let undef_right = shuffle(c.down_plan, &mut ws.right);
    // A defined shuffle still carries an undefined value if its source lane held one.
    let tainted = undef_left
        | undef_right
        | own_undefined
        | ((own_undefined << 1) & active)
        | (own_undefined >> 1);

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
                ws,
                undef_left,
                undef_right,
                own_undefined,
            ),
        });
    }
    let (row, col0) = (row as usize, col0 as usize);
    let cols = c.domain.cols();
    let band_rows = band.stamps.len() / cols;
    if row < band.first_row || row >= band.first_row + band_rows {
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
    if let Some(i) = stamps.iter().position(|&t| t == c.step) {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "cell ({row}, {}) is written twice (again by {})",
                col0 + i,
                who(wg, sg, (first + i) as u32)
            ),
        });
    }
    stamps.fill(c.step);
    // The update of every lane (a whole vector width: no scalar remainder) with the reference's own
    // arithmetic; only the output lanes are stored.
    let (l, m, r) = (&ws.left, &ws.centre, &ws.right);
    let rows = |k: usize| [&l[k][..s], &m[k][..s], &r[k][..s]];
    (c.cells)(
        &c.params,
        [rows(0), rows(2), rows(4)],
        [rows(1), rows(3), rows(5)],
        &mut ws.out_u[..s],
        &mut ws.out_v[..s],
    );
    let w = c.domain.padded_cols();
    let i = local * w + col0 + 1;
    band.u[i..i + count].copy_from_slice(&ws.out_u[first..end]);
    band.v[i..i + count].copy_from_slice(&ws.out_v[first..end]);
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
    ws: &Workspace,
    undef_left: u128,
    undef_right: u128,
    own: u128,
) -> String {
    let bit = 1u128 << lane;
    let m = &ws.centre;
    let input: Vec<Column> = (0..c.shape.subgroup as usize)
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
