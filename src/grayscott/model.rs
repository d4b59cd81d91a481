//! The course's subgroup kernel executed lane by lane on lockstep's reference model — the proof that
//! a layout never lets an undefined shuffle result reach an output cell.
//!
//! Each step runs every workgroup of the dispatch the GPU would run, subgroup by subgroup, exactly as
//! the GLSL kernels in `shaders/grayscott/` do:
//!
//! 1. each lane computes its position ([`Shape::item_pos`]); lanes outside the padded grid, and
//!    subgroups whose row is past the data, exit (they are inactive for what follows);
//! 2. each active lane loads its top, centre and bottom values (from global memory, or for
//!    [`Layout::Shared`] from the workgroup's shared-memory cache where a neighbouring subgroup
//!    loaded them);
//! 3. left and right neighbours come from `subgroupShuffleUp(x, 1)` and `subgroupShuffleDown(x, 1)`,
//!    evaluated by [`model::run`](crate::model::run): a lane whose source is outside the subgroup
//!    or inactive gets an *undefined* result, never a guessed value;
//! 4. output lanes compute the update with the reference's own arithmetic and write their cell.
//!
//! The step fails with [`GrayScottError::UndefinedReachedCell`] if an output depends on an undefined
//! value (a shuffle from outside the subgroup or from an inactive lane, or a shared-memory slot no
//! lane wrote), and with [`GrayScottError::Layout`] if a cell is written twice or never, a write lands
//! outside the domain, or a load reads outside the padded buffer. A step that succeeds is therefore a
//! proof, for that domain and shape, that the layout is sound; and its values are bit-identical to
//! the reference's.
//!
//! ```
//! use lockstep::grayscott::{model::ModelSim, layout::{Layout, Shape}, Domain, Params, Simulation};
//! let d = Domain::new(3, 10).unwrap();
//! let mut ok = ModelSim::new(d, Params::default(), Shape::new(Layout::OneD, 4, 8)?)?;
//! ok.advance(2)?;
//! let mut broken = ModelSim::new(d, Params::default(), Shape::new(Layout::NoBorder, 4, 8)?)?;
//! let e = broken.advance(1).unwrap_err().to_string();
//! assert!(e.starts_with("undefined value reached cell (0, 0) at step 1"), "{e}");
//! # Ok::<(), lockstep::grayscott::GrayScottError>(())
//! ```

use super::layout::{Layout, Shape};
use super::reference::{cells_fn, CellsFn};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::model::{
    evaluate_typed, lookup, run, Args, Ballot, LaneArg, LaneMask, OpCall, Outcome, Reason, Sink,
    SubgroupSize,
};
use rayon::prelude::*;

/// The six values a lane shuffles: U and V of its top, centre and bottom cells.
type Column = [f32; 6];

/// Receives a shuffle's results straight into structure-of-arrays form (one array per component),
/// and records undefined lanes as a mask.
struct ColumnSink<'a> {
    out: &'a mut [Vec<f32>; 6],
    undefined: u128,
    unexpected: bool,
}

impl Sink<Column> for ColumnSink<'_> {
    #[inline(always)]
    fn value(&mut self, lane: u32, v: Column) {
        for (o, x) in self.out.iter_mut().zip(v) {
            o[lane as usize] = x;
        }
    }
    #[inline(always)]
    fn undefined(&mut self, lane: u32, _why: Reason) {
        self.undefined |= 1u128 << lane;
    }
    // A shuffle only ever produces values of its operand's type.
    fn boolean(&mut self, _: u32, _: bool) {
        self.unexpected = true;
    }
    fn uint(&mut self, _: u32, _: u32) {
        self.unexpected = true;
    }
    fn ballot(&mut self, _: u32, _: Ballot) {
        self.unexpected = true;
    }
}

/// Per-thread scratch space for one subgroup and one workgroup's shared memory.
struct Workspace {
    input: Vec<Column>,
    centre: [Vec<f32>; 6],
    left: [Vec<f32>; 6],
    right: [Vec<f32>; 6],
    out_u: Vec<f32>,
    out_v: Vec<f32>,
    /// `uv_cache` of the shared variant, `None` where no lane wrote.
    cache: Vec<Option<[f32; 2]>>,
}

impl Workspace {
    fn new(shape: &Shape) -> Workspace {
        let s = shape.subgroup as usize;
        let soa = || std::array::from_fn(|_| vec![0.0f32; s]);
        Workspace {
            input: vec![[0.0; 6]; s],
            centre: soa(),
            left: soa(),
            right: soa(),
            out_u: vec![0.0; s],
            out_v: vec![0.0; s],
            cache: vec![None; shape.workgroup as usize],
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
        Ok(ModelSim {
            params,
            shape,
            next: cur.clone(),
            stamps: vec![0; f.domain().cells()],
            cur,
            steps: 0,
            up: call("shuffle_up")?,
            down: call("shuffle_down")?,
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
            cells: cells_fn(),
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

/// A global load, checked against the padded buffer (a read outside it is a fault, not a value).
#[inline(always)]
fn load(c: &StepCtx, x: i64, y: i64, who: impl Fn() -> String) -> Result<[f32; 2], GrayScottError> {
    let (w, h) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    if x < 0 || y < 0 || x >= w || y >= h {
        return Err(GrayScottError::Layout {
            step: c.step,
            what: format!(
                "{} reads padded cell ({y}, {x}), outside the {h}×{w} buffer",
                who()
            ),
        });
    }
    let i = (y * w + x) as usize;
    Ok([c.u[i], c.v[i]])
}

fn who(wg: [u32; 2], sg: u32, lane: u32) -> String {
    format!(
        "lane {lane} of subgroup {sg} in workgroup ({}, {})",
        wg[0], wg[1]
    )
}

/// Runs one workgroup.
fn workgroup(
    c: &StepCtx,
    wg: [u32; 2],
    ws: &mut Workspace,
    band: &mut Band,
) -> Result<(), GrayScottError> {
    let shape = &c.shape;
    let s = shape.subgroup;
    let n_sg = shape.subgroups();
    let (pw, ph) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    if shape.layout == Layout::Shared {
        // set_uv_cache(): every lane inside the padded grid stores its value; barrier().
        for sg in 0..n_sg {
            for lane in 0..s {
                let (x, y) = shape.item_pos(wg, sg, lane);
                let slot = (sg * s + lane) as usize;
                ws.cache[slot] = if x < pw && y < ph {
                    Some(load(c, x, y, || who(wg, sg, lane))?)
                } else {
                    None
                };
            }
        }
    }
    for sg in 0..n_sg {
        subgroup(c, wg, sg, ws, band)?;
    }
    Ok(())
}

/// Where a lane's top or bottom value comes from in the shared variant: the cache slot of the
/// same lane in the neighbouring subgroup, or global memory at the workgroup's edge.
enum Vertical {
    Global,
    Cache(usize),
}

#[inline(always)]
fn vertical(c: &StepCtx, sg: u32, lane: u32, dy: i32) -> Vertical {
    let target = sg as i64 + dy as i64;
    if c.shape.layout == Layout::Shared && target >= 0 && target < c.shape.subgroups() as i64 {
        Vertical::Cache((target as u32 * c.shape.subgroup + lane) as usize)
    } else {
        Vertical::Global
    }
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
    let s = shape.subgroup;
    let (pw, ph) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    let mut active = 0u128;
    // Lanes whose own top or bottom value is undefined (an unwritten cache slot).
    let mut own_undefined = 0u128;
    for lane in 0..s {
        let (x, y) = shape.item_pos(wg, sg, lane);
        // Exit: outside the padded grid, or on a row past the data (the whole subgroup then).
        if x >= pw || y >= shape.layout.exit_row(ph) {
            continue;
        }
        active |= 1u128 << lane;
        let mut col = [0.0f32; 6];
        for (k, dy) in [-1i32, 0, 1].into_iter().enumerate() {
            let value = match vertical(c, sg, lane, dy) {
                _ if dy == 0 => Some(load(c, x, y, || who(wg, sg, lane))?),
                Vertical::Global => Some(load(c, x, y + dy as i64, || who(wg, sg, lane))?),
                Vertical::Cache(slot) => ws.cache[slot],
            };
            match value {
                Some([u, v]) => {
                    col[2 * k] = u;
                    col[2 * k + 1] = v;
                }
                None => {
                    own_undefined |= 1u128 << lane;
                    col[2 * k] = f32::NAN;
                    col[2 * k + 1] = f32::NAN;
                }
            }
        }
        ws.input[lane as usize] = col;
        for (k, x) in col.into_iter().enumerate() {
            ws.centre[k][lane as usize] = x;
        }
    }
    if active == 0 {
        return Ok(());
    }
    let mask = LaneMask(active);
    let shuffle = |call: &OpCall, out: &mut [Vec<f32>; 6]| -> Result<u128, GrayScottError> {
        let mut sink = ColumnSink {
            out,
            undefined: 0,
            unexpected: false,
        };
        run(call, mask, &ws.input, &mut sink);
        if sink.unexpected {
            return Err(GrayScottError::Layout {
                step: c.step,
                what: "a shuffle returned a value of the wrong type (model bug)".into(),
            });
        }
        Ok(sink.undefined)
    };
    let undef_left = shuffle(c.up, &mut ws.left)?;
    let undef_right = shuffle(c.down, &mut ws.right)?;
    // A defined shuffle still carries an undefined value if its source lane held one.
    let tainted = undef_left
        | undef_right
        | own_undefined
        | ((own_undefined << 1) & active)
        | (own_undefined >> 1);

    let n = s as usize;
    let (l, m, r) = (&ws.left, &ws.centre, &ws.right);
    let u = [
        [&l[0][..], &m[0][..], &r[0][..]],
        [&l[2][..], &m[2][..], &r[2][..]],
        [&l[4][..], &m[4][..], &r[4][..]],
    ];
    let v = [
        [&l[1][..], &m[1][..], &r[1][..]],
        [&l[3][..], &m[3][..], &r[3][..]],
        [&l[5][..], &m[5][..], &r[5][..]],
    ];
    (c.cells)(&c.params, u, v, &mut ws.out_u[..n], &mut ws.out_v[..n]);

    let cols = c.domain.cols();
    for lane in LaneMask(active).iter() {
        if !shape.is_output_lane(lane) {
            continue;
        }
        let (x, y) = shape.item_pos(wg, sg, lane);
        if x >= pw - 1 {
            continue; // right of the data: is_subgroup_output() holds but pos >= data_end_pos()
        }
        if x < 1 || y < 1 {
            return Err(GrayScottError::Layout {
                step: c.step,
                what: format!(
                    "{} writes padded cell ({y}, {x}) on the zero ring",
                    who(wg, sg, lane)
                ),
            });
        }
        let (row, col) = ((y - 1) as usize, (x - 1) as usize);
        if tainted & (1u128 << lane) != 0 {
            return Err(GrayScottError::UndefinedReachedCell {
                row,
                col,
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
        let band_rows = band.stamps.len() / cols;
        if row < band.first_row || row >= band.first_row + band_rows {
            return Err(GrayScottError::Layout {
                step: c.step,
                what: format!(
                    "{} writes row {row}, outside the rows its workgroup row owns",
                    who(wg, sg, lane)
                ),
            });
        }
        let local = row - band.first_row;
        let stamp = &mut band.stamps[local * cols + col];
        if *stamp == c.step {
            return Err(GrayScottError::Layout {
                step: c.step,
                what: format!(
                    "cell ({row}, {col}) is written twice (again by {})",
                    who(wg, sg, lane)
                ),
            });
        }
        *stamp = c.step;
        let w = c.domain.padded_cols();
        let i = local * w + col + 1;
        band.u[i] = ws.out_u[lane as usize];
        band.v[i] = ws.out_v[lane as usize];
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
    ws: &Workspace,
    undef_left: u128,
    undef_right: u128,
    own: u128,
) -> String {
    let bit = 1u128 << lane;
    let reason = |call: &OpCall| -> String {
        match evaluate_typed(call, mask, &ws.input) {
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
