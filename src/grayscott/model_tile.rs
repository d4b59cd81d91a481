//! The register-tile kernel (`shaders/grayscott/subgroup_tile.comp`, [`Tile`]) executed lane by lane
//! on lockstep's reference model: the proof that advancing `T` steps per trip through memory never
//! lets an undefined shuffle result — or a value of the wrong step — reach a written cell.
//!
//! Each pass runs every workgroup of the dispatch a GPU would run, every subgroup of `S` lanes as the
//! kernel does:
//!
//! 1. lane `l` holds column `x0 + l`, rows `y0 .. y0 + R` ([`Tile::origin`]); a subgroup whose
//!    first output row is below the data exits (uniformly);
//! 2. every lane loads its `R` cells, cells outside the data reading 0 (no load);
//! 3. step `s = 1..=T` updates rows `s .. R − s`: left and right neighbours come from
//!    `subgroupShuffleUp/Down(·, 1)` on the full subgroup, evaluated with the model's gather rules
//!    ([`GatherPlan`]); the update is the reference's arithmetic; a cell outside the data is set
//!    to 0;
//! 4. lanes `T .. S − T` inside the data write rows `T .. R − T` that are inside the data.
//!
//! Every value carries two marks, per lane and row: *undefined* (it depends on a shuffle that read
//! no lane, i.e. the model's undefined result) and *stale* (it depends on a row the kernel did not
//! advance to the current step). A constant (a load, or the 0 set outside the data) has neither;
//! an update has the union of its nine inputs' marks, a defined shuffle result its source lane's.
//! A pass fails with [`GrayScottError::UndefinedReachedCell`] if a written cell is undefined, and
//! with [`GrayScottError::Layout`] if it is stale, a cell is written twice or never, or a load falls
//! outside the padded buffer. A pass that succeeds proves, for that domain, subgroup size,
//! workgroup size and tile, that the kernel writes every cell exactly once with the exact result
//! of `T` steps — and the values are bit-identical to the reference's (tests check both).
//!
//! ```
//! use lockstep::grayscott::{layout::Tile, model_tile::TileSim, Domain, Params, Simulation};
//! let d = Domain::new(20, 30).unwrap();
//! let mut sim = TileSim::new(d, Params::default(), 8, 16, Tile { steps: 3, rows: 10 })?;
//! sim.advance(7)?; // two passes of 3 steps, one of 1
//! # Ok::<(), lockstep::grayscott::GrayScottError>(())
//! ```

use super::layout::Tile;
use super::reference::{cells_fn_for, CellsFn};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::model::{lookup, Args, GatherPlan, LaneArg, LaneMask, OpCall, SubgroupSize};
use rayon::prelude::*;

/// The tile kernel on the model.
pub struct TileSim {
    params: Params,
    subgroup: u32,
    workgroup: u32,
    tile: Tile,
    cur: [Padded; 2],
    next: [Padded; 2],
    stamps: Vec<u64>,
    passes: u64,
    steps: u64,
    up: GatherPlan,
    down: GatherPlan,
    halo_fault: bool,
}

/// One subgroup's registers: `rows × S` values of U and V (row-major), and per row the lanes whose
/// value is undefined or stale.
struct Regs {
    u: Vec<f32>,
    v: Vec<f32>,
    undefined: Vec<u128>,
    stale: Vec<u128>,
    /// shuffled values and marks, per row: left (from `shuffle_up`) and right (`shuffle_down`)
    lu: Vec<f32>,
    lv: Vec<f32>,
    ru: Vec<f32>,
    rv: Vec<f32>,
    l_und: Vec<u128>,
    l_stale: Vec<u128>,
    r_und: Vec<u128>,
    r_stale: Vec<u128>,
    /// the step's new rows
    nu: Vec<f32>,
    nv: Vec<f32>,
    flags: Vec<u8>,
    flags_out: Vec<u8>,
}

impl Regs {
    fn new(rows: usize, s: usize) -> Regs {
        let z = || vec![0.0f32; rows * s];
        let m = || vec![0u128; rows];
        Regs {
            u: z(),
            v: z(),
            undefined: m(),
            stale: m(),
            lu: z(),
            lv: z(),
            ru: z(),
            rv: z(),
            l_und: m(),
            l_stale: m(),
            r_und: m(),
            r_stale: m(),
            nu: z(),
            nv: z(),
            flags: vec![0; s],
            flags_out: vec![0; s],
        }
    }
}

/// What a pass reads.
struct PassCtx<'a> {
    tile: Tile,
    s: u32,
    n: u32,
    params: Params,
    domain: Domain,
    u: &'a [f32],
    v: &'a [f32],
    up: &'a GatherPlan,
    down: &'a GatherPlan,
    cells: CellsFn,
    pass: u64,
    /// steps done before this pass
    step0: u64,
    /// lanes and rows left unwritten on each side (T; T − 1 for the broken kernel)
    halo: usize,
}

impl TileSim {
    /// Starts from the initial condition, with subgroups of `subgroup` lanes (a power of two in
    /// 4..=128) and workgroups of `workgroup` invocations (a multiple of it, ≤ 1024).
    pub fn new(
        domain: Domain,
        params: Params,
        subgroup: u32,
        workgroup: u32,
        tile: Tile,
    ) -> Result<TileSim, GrayScottError> {
        TileSim::from_fields(&Fields::initial(domain), params, subgroup, workgroup, tile)
    }

    /// Starts from given fields.
    pub fn from_fields(
        f: &Fields,
        params: Params,
        subgroup: u32,
        workgroup: u32,
        tile: Tile,
    ) -> Result<TileSim, GrayScottError> {
        // The course layouts' size rules (power of two in 4..=128, a multiple, ≤ 1024), then the
        // tile's own.
        super::layout::Shape::new(super::layout::Tiling::Stacked, subgroup, workgroup)?;
        tile.check(subgroup)?;
        let model_err = |e: crate::model::ModelError| GrayScottError::Config(e.to_string());
        let size = SubgroupSize::new(subgroup as u64).map_err(model_err)?;
        let plan = |name| -> Result<GatherPlan, GrayScottError> {
            let args = Args {
                delta: Some(LaneArg::Uniform(1)),
                ..Args::default()
            };
            let call =
                OpCall::new(lookup(name).map_err(model_err)?, size, args).map_err(model_err)?;
            GatherPlan::new(&call).ok_or_else(|| {
                GrayScottError::Config(format!("{name} is not a gather (model bug)"))
            })
        };
        let cur = [Padded::from_array(&f.u), Padded::from_array(&f.v)];
        Ok(TileSim {
            params,
            subgroup,
            workgroup,
            tile,
            next: cur.clone(),
            stamps: vec![0; f.domain().cells()],
            cur,
            passes: 0,
            steps: 0,
            up: plan("shuffle_up")?,
            down: plan("shuffle_down")?,
            halo_fault: false,
        })
    }

    /// **Deliberately broken**: the kernel with its writes one lane and one row further into the
    /// halo on each side (lanes `T − 1 .. S − T + 1`, rows `T − 1 .. R − T + 1`), to show that the
    /// model catches it: the outermost written lanes depend on undefined shuffle results, the
    /// outermost rows on rows not advanced to the last step.
    pub fn broken_writes_halo(mut self) -> TileSim {
        self.halo_fault = true;
        self
    }

    /// One pass of `steps` steps (at most the tile's), with the tile's rows; on error the state is
    /// left as it was.
    pub fn pass(&mut self, steps: u32) -> Result<(), GrayScottError> {
        let tile = Tile {
            steps,
            rows: self.tile.rows,
        };
        tile.check(self.subgroup)?;
        let domain = self.cur[0].domain;
        let (s, n) = (self.subgroup, self.workgroup / self.subgroup);
        let grid = tile.grid(domain, s, n);
        let pass = self.passes + 1;
        let ctx = PassCtx {
            tile,
            s,
            n,
            params: self.params,
            domain,
            u: &self.cur[0].data,
            v: &self.cur[1].data,
            up: &self.up,
            down: &self.down,
            cells: cells_fn_for(s as usize),
            pass,
            step0: self.steps,
            halo: steps as usize - usize::from(self.halo_fault),
        };
        let w = domain.padded_cols();
        let cols = domain.cols();
        // A row of workgroups writes data rows [gy · n · (R − 2T), (gy + 1) · n · (R − 2T)).
        let band = (n * tile.outputs(s)[1]) as usize;
        let [nu, nv] = &mut self.next;
        let ou = &mut nu.data[w..(domain.rows() + 1) * w];
        let ov = &mut nv.data[w..(domain.rows() + 1) * w];
        if (grid[1] as usize) != domain.rows().div_ceil(band) {
            return Err(GrayScottError::Layout {
                step: self.steps + steps as u64,
                what: format!(
                    "{} rows of workgroups do not tile {} data rows",
                    grid[1],
                    domain.rows()
                ),
            });
        }
        let results: Vec<Result<(), GrayScottError>> = ou
            .par_chunks_mut(band * w)
            .zip(ov.par_chunks_mut(band * w))
            .zip(self.stamps.par_chunks_mut(band * cols))
            .enumerate()
            .map(|(gy, ((u, v), stamps))| {
                let mut regs = Regs::new(tile.rows as usize, s as usize);
                let mut out = Out {
                    first_row: gy * band,
                    u,
                    v,
                    stamps,
                };
                for gx in 0..grid[0] {
                    for sg in 0..n {
                        subgroup(&ctx, [gx, gy as u32], sg, &mut regs, &mut out)?;
                    }
                }
                Ok(())
            })
            .collect();
        results.into_iter().collect::<Result<(), _>>()?;
        if let Some(i) = self.stamps.iter().position(|&p| p != pass) {
            return Err(GrayScottError::Layout {
                step: self.steps + steps as u64,
                what: format!("cell ({}, {}) was never written", i / cols, i % cols),
            });
        }
        std::mem::swap(&mut self.cur, &mut self.next);
        self.passes = pass;
        self.steps += steps as u64;
        Ok(())
    }
}

/// The band of output rows one row of workgroups may write.
struct Out<'a> {
    first_row: usize,
    u: &'a mut [f32],
    v: &'a mut [f32],
    stamps: &'a mut [u64],
}

fn who(wg: [u32; 2], sg: u32, lane: u32) -> String {
    format!(
        "lane {lane} of subgroup {sg} in workgroup ({}, {})",
        wg[0], wg[1]
    )
}

/// Lanes whose cell `(x0 + l, y)` lies inside the data, as a mask.
fn data_lanes(c: &PassCtx, x0: i64, y: i64) -> u128 {
    let (rows, cols) = (c.domain.rows() as i64, c.domain.cols() as i64);
    if y < 1 || y > rows {
        return 0;
    }
    let lo = (1 - x0).clamp(0, c.s as i64) as u32;
    let hi = (cols + 1 - x0).clamp(0, c.s as i64) as u32;
    LaneMask::first(hi).0 & !LaneMask::first(lo).0
}

/// The 3×3 neighbourhood of row `j` (rows of `s` lanes) from the left-shuffled, own and
/// right-shuffled values: what [`super::reference::update_cells`] takes.
fn neighbours(lmr: [&[f32]; 3], j: usize, s: usize) -> [[&[f32]; 3]; 3] {
    let row = |k: usize| lmr.map(|x| &x[k * s..(k + 1) * s]);
    [row(j - 1), row(j), row(j + 1)]
}

/// The lanes whose (defined) shuffle result comes from a lane marked in `marks`.
fn carried(
    plan: &GatherPlan,
    active: LaneMask,
    marks: u128,
    flags: &mut [u8],
    out: &mut [u8],
) -> u128 {
    if marks == 0 {
        return 0;
    }
    for (l, f) in flags.iter_mut().enumerate() {
        *f = ((marks >> l) & 1) as u8;
    }
    out.fill(0);
    let undefined = plan.apply(active, flags, out).0;
    let mut m = 0u128;
    for (l, &f) in out.iter().enumerate() {
        if f != 0 && (undefined >> l) & 1 == 0 {
            m |= 1 << l;
        }
    }
    m
}

/// Runs one subgroup of one pass.
fn subgroup(
    c: &PassCtx,
    wg: [u32; 2],
    sg: u32,
    r: &mut Regs,
    out: &mut Out,
) -> Result<(), GrayScottError> {
    let (t, rows, s) = (c.tile.steps as usize, c.tile.rows as usize, c.s as usize);
    let (x0, y0) = c.tile.origin(wg, sg, c.s, c.n);
    let last_row = c.domain.rows() as i64;
    if y0 + t as i64 > last_row {
        return Ok(());
    }
    let full = LaneMask::first(c.s);
    let (pw, ph) = (c.domain.padded_cols() as i64, c.domain.padded_rows() as i64);
    // Loads: the cells inside the data; 0 elsewhere.
    for j in 0..rows {
        let y = y0 + j as i64;
        let data = data_lanes(c, x0, y);
        let (ru, rv) = (&mut r.u[j * s..(j + 1) * s], &mut r.v[j * s..(j + 1) * s]);
        ru.fill(0.0);
        rv.fill(0.0);
        if data != 0 {
            let lo = data.trailing_zeros() as i64;
            let hi = 128 - data.leading_zeros() as i64;
            let (xa, xb) = (x0 + lo, x0 + hi);
            if y < 0 || y >= ph || xa < 0 || xb > pw {
                return Err(GrayScottError::Layout {
                    step: c.step0 + t as u64,
                    what: format!(
                        "{} reads padded cell ({y}, {xa}), outside the {ph}×{pw} buffer",
                        who(wg, sg, lo as u32)
                    ),
                });
            }
            let i = (y * pw + xa) as usize;
            let n = (hi - lo) as usize;
            ru[lo as usize..hi as usize].copy_from_slice(&c.u[i..i + n]);
            rv[lo as usize..hi as usize].copy_from_slice(&c.v[i..i + n]);
        }
        r.undefined[j] = 0;
        r.stale[j] = 0;
    }
    for step in 1..=t {
        // Shuffles of the rows this step reads: step − 1 .. rows − step.
        for k in step - 1..=rows - step {
            let (a, b) = (k * s, (k + 1) * s);
            r.l_und[k] = c.up.apply(full, &r.u[a..b], &mut r.lu[a..b]).0;
            c.up.apply(full, &r.v[a..b], &mut r.lv[a..b]);
            r.r_und[k] = c.down.apply(full, &r.u[a..b], &mut r.ru[a..b]).0;
            c.down.apply(full, &r.v[a..b], &mut r.rv[a..b]);
            // A defined shuffle carries the marks of the lane it read.
            let (und_k, stale_k) = (r.undefined[k], r.stale[k]);
            let (fl, fo) = (&mut r.flags, &mut r.flags_out);
            r.l_und[k] |= carried(c.up, full, und_k, fl, fo);
            r.l_stale[k] = carried(c.up, full, stale_k, fl, fo);
            r.r_und[k] |= carried(c.down, full, und_k, fl, fo);
            r.r_stale[k] = carried(c.down, full, stale_k, fl, fo);
        }
        // The update of rows step .. rows − step, every lane (a whole subgroup: no remainder).
        for j in step..rows - step {
            let (nu, nv) = (&mut r.nu[j * s..(j + 1) * s], &mut r.nv[j * s..(j + 1) * s]);
            (c.cells)(
                &c.params,
                neighbours([&r.lu, &r.u, &r.ru], j, s),
                neighbours([&r.lv, &r.v, &r.rv], j, s),
                nu,
                nv,
            );
        }
        // Marks of the new rows, then the rows themselves (in place, as the kernel's window does).
        let mut und_new = vec![0u128; rows];
        let mut stale_new = vec![0u128; rows];
        for j in 0..rows {
            let data = data_lanes(c, x0, y0 + j as i64);
            if j < step || j >= rows - step {
                // Not advanced: its value is of an earlier step, except outside the data (0 at
                // every step... only if it was set so, which the load and every update did).
                und_new[j] = r.undefined[j];
                stale_new[j] = r.stale[j] | (data & full.0);
                continue;
            }
            let mut und = 0u128;
            let mut stale = 0u128;
            for k in j - 1..=j + 1 {
                und |= r.undefined[k] | r.l_und[k] | r.r_und[k];
                stale |= r.stale[k] | r.l_stale[k] | r.r_stale[k];
            }
            und_new[j] = und & data;
            stale_new[j] = stale & data;
        }
        for j in step..rows - step {
            let data = data_lanes(c, x0, y0 + j as i64);
            let a = j * s;
            for l in 0..s {
                let inside = (data >> l) & 1 == 1;
                r.u[a + l] = if inside { r.nu[a + l] } else { 0.0 };
                r.v[a + l] = if inside { r.nv[a + l] } else { 0.0 };
            }
        }
        r.undefined.copy_from_slice(&und_new);
        r.stale.copy_from_slice(&stale_new);
    }
    write_tile(c, wg, sg, (x0, y0), r, out)
}

/// The subgroup's writes after its steps: lanes t .. s − t inside the data, rows t .. rows − t
/// inside the data — each cell once, from a row advanced to the last step, with no undefined
/// shuffle behind it, in the rows its workgroup row owns.
fn write_tile(
    c: &PassCtx,
    wg: [u32; 2],
    sg: u32,
    (x0, y0): (i64, i64),
    r: &Regs,
    out: &mut Out,
) -> Result<(), GrayScottError> {
    let (t, rows, s) = (c.tile.steps as usize, c.tile.rows as usize, c.s as usize);
    let last_row = c.domain.rows() as i64;
    let h = c.halo;
    let out_lanes = LaneMask::first((s - h) as u32).0 & !LaneMask::first(h as u32).0;
    let cols = c.domain.cols();
    let band_rows = out.stamps.len() / cols;
    let w = c.domain.padded_cols();
    let step = c.step0 + t as u64;
    for j in h..rows - h {
        let y = y0 + j as i64;
        if y > last_row {
            break;
        }
        if y < 1 {
            continue;
        }
        let lanes = out_lanes & data_lanes(c, x0, y);
        if lanes == 0 {
            continue;
        }
        let data_row = (y - 1) as usize;
        if let Some(l) = LaneMask(r.undefined[j] & lanes).lowest() {
            return Err(GrayScottError::UndefinedReachedCell {
                row: data_row,
                col: (x0 + l as i64 - 1) as usize,
                step,
                why: format!(
                    "{} writes row {j} of its tile after {t} steps, which depends on a \
                     subgroupShuffleUp/Down(·, 1) that read no lane (undefined: outside the subgroup)",
                    who(wg, sg, l)
                ),
            });
        }
        if let Some(l) = LaneMask(r.stale[j] & lanes).lowest() {
            return Err(GrayScottError::Layout {
                step,
                what: format!(
                    "{} writes cell ({data_row}, {}) from a row not advanced to step {step}",
                    who(wg, sg, l),
                    x0 + l as i64 - 1
                ),
            });
        }
        if data_row < out.first_row || data_row >= out.first_row + band_rows {
            return Err(GrayScottError::Layout {
                step,
                what: format!(
                    "{} writes row {data_row}, outside the rows its workgroup row owns",
                    who(wg, sg, lanes.trailing_zeros())
                ),
            });
        }
        let local = data_row - out.first_row;
        for l in LaneMask(lanes).iter() {
            let col = (x0 + l as i64 - 1) as usize;
            let stamp = &mut out.stamps[local * cols + col];
            if *stamp == c.pass {
                return Err(GrayScottError::Layout {
                    step,
                    what: format!(
                        "cell ({data_row}, {col}) is written twice (again by {})",
                        who(wg, sg, l)
                    ),
                });
            }
            *stamp = c.pass;
            let i = local * w + col + 1;
            out.u[i] = r.u[j * s + l as usize];
            out.v[i] = r.v[j * s + l as usize];
        }
    }
    Ok(())
}

impl Simulation for TileSim {
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError> {
        let t = self.tile.steps;
        for _ in 0..steps / t {
            self.pass(t)?;
        }
        if !steps.is_multiple_of(t) {
            self.pass(steps % t)?;
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
            "model (subgroup-tile-t{}-r{}, workgroup {}, subgroup {}), {}",
            self.tile.steps, self.tile.rows, self.workgroup, self.subgroup, self.cur[0].domain
        )
    }
}
