//! The Gray-Scott reaction-diffusion simulation of the GPU course, computed by three backends that
//! must agree: a CPU [`reference`](mod@self::reference), the course's subgroup kernel run lane by lane on lockstep's
//! [`model`](crate::model) ([`model`](mod@self::model)), and GLSL kernels on a Vulkan device (`gpu`,
//! with the `vulkan` feature).
//!
//! The definition (parameters, stencil, zero-padding boundary, initial condition) is the one in
//! `shared/GRAYSCOTT.md`; every backend computes exactly this:
//!
//! ```text
//! full_u = Σ_{3x3} w · (u_nb − u)        full_v = Σ_{3x3} w · (v_nb − v)
//! uv2    = u · v · v
//! du     = Du · full_u − uv2 + F · (1 − u)
//! dv     = Dv · full_v + uv2 − (F + k) · v
//! u'     = u + du · dt                    v'     = v + dv · dt
//! ```
//!
//! with a neighbour outside the domain reading U = V = 0. The CPU backends store each field with
//! that zero ring around it (a [`Padded`] grid, like the course's GPU buffers), so that the stencil
//! needs no bounds checks.
//!
//! ```
//! use lockstep::grayscott::{reference::Reference, Domain, Params, Simulation};
//! let mut sim = Reference::new(Domain::new(64, 48).unwrap(), Params::default());
//! sim.advance(10).unwrap();
//! let f = sim.fields().unwrap();
//! assert_eq!(f.v.dim(), (64, 48));
//! ```

use ndarray::Array2;

#[cfg(feature = "vulkan")]
pub mod gpu;
pub mod layout;
pub mod model;
pub mod model_tile;
pub mod output;
pub mod reference;

/// Diffusion rate of U (GRAYSCOTT.md, "Fields and parameters").
pub(crate) const DIFFUSION_U: f32 = 0.1;
/// Diffusion rate of V (GRAYSCOTT.md).
pub(crate) const DIFFUSION_V: f32 = 0.05;
/// Default feed rate F (the course's CLI default).
pub(crate) const DEFAULT_FEED: f32 = 0.014;
/// Default kill rate k (the course's CLI default).
pub(crate) const DEFAULT_KILL: f32 = 0.054;
/// Default time step.
pub(crate) const DEFAULT_DT: f32 = 1.0;
/// Default rows (the course's CLI default).
pub(crate) const DEFAULT_ROWS: usize = 1080;
/// Default columns (the course's CLI default).
pub(crate) const DEFAULT_COLS: usize = 1920;
/// Default steps between two images (the course: 34 extra steps between images, so 35 per image).
pub(crate) const DEFAULT_STEPS_PER_IMAGE: u32 = 35;
/// Default number of images (the course's CLI default).
pub(crate) const DEFAULT_IMAGES: u32 = 1000;

/// The 3×3 stencil weights (Oono-Puri), row-major: `WEIGHTS[dy + 1][dx + 1]`.
pub(crate) const WEIGHTS: [[f32; 3]; 3] = [[0.25, 0.5, 0.25], [0.5, 0.0, 0.5], [0.25, 0.5, 0.25]];

/// The largest padded grid any backend accepts, in cells: GPU kernels index the padded fields with
/// 32-bit unsigned integers and the CPU backends keep four padded f32 fields in memory.
pub const MAX_PADDED_CELLS: u64 = 1 << 31;

/// How far a backend may differ from the reference, in absolute value, on U and V (both in [0, 1]),
/// for runs of at most [`AGREEMENT_MAX_STEPS`] steps.
///
/// Why this number (measured, see `docs/grayscott.md`, "Agreement"): the CPU backends and lavapipe
/// compute the definition bit for bit (spread 0). A device that contracts `a · b + c` into FMAs (as
/// NVIDIA's compiler does; SPIR-V allows it) rounds differently. Emulating that on the CPU
/// ([`update_cell_contracted`]) over 300 random domains up to 101×101 with F, k in [0, 0.1] and dt
/// in [0.1, 1] gave at most 4.8e-7 after 100 steps, 2.5e-6 after 200 and 2.7e-6 after 500 (2.8e-6
/// for the course's F, k on 48×40). 1e-4 is 35 times the worst drift measured, and still 50 times
/// smaller than what a layout bug does in one step (a wrong neighbour moves a cell near a front by
/// Du · w · ΔU ≈ 0.1 · 0.5 · 0.1 = 5e-3).
pub const AGREEMENT_TOLERANCE: f32 = 1e-4;

/// The longest run [`AGREEMENT_TOLERANCE`] holds for. Beyond a few thousand steps the pattern
/// dynamics amplify rounding differences exponentially (measured on 128×128 with the course's F,
/// k: 1.5e-6 after 1000 steps, 5e-4 after 3500, 0.8 after 10000), so no fixed bound can compare
/// long runs of differently-rounding backends.
pub const AGREEMENT_MAX_STEPS: u64 = 500;

/// What can go wrong in a simulation, each naming the rule that was broken.
#[derive(Debug, thiserror::Error)]
pub enum GrayScottError {
    /// A domain with no cell, or one too large.
    #[error("domain {rows}×{cols} is invalid: {rule}")]
    Domain {
        /// rows asked for
        rows: usize,
        /// columns asked for
        cols: usize,
        /// the rule
        rule: &'static str,
    },
    /// A parameter out of its range.
    #[error("{name} = {value} is invalid: {rule}")]
    Param {
        /// which parameter
        name: &'static str,
        /// the value given
        value: f32,
        /// the rule
        rule: &'static str,
    },
    /// A kernel configuration the layout cannot run (workgroup, subgroup sizes).
    #[error("{0}")]
    Config(String),
    /// The device lacks something the kernel needs.
    #[error("the device cannot run the {variant} kernel: {why}")]
    Requirement {
        /// which variant
        variant: &'static str,
        /// what is missing
        why: String,
    },
    /// The subgroup kernel run on the model let an undefined value reach an output cell.
    #[error("undefined value reached cell ({row}, {col}) at step {step}: {why}")]
    UndefinedReachedCell {
        /// data row (0-based)
        row: usize,
        /// data column (0-based)
        col: usize,
        /// step (1-based) whose output it is
        step: u64,
        /// where the undefined value came from
        why: String,
    },
    /// The model found a layout fault other than an undefined value: a cell never written or
    /// written twice, a write outside the domain, a read outside a buffer.
    #[error("layout fault at step {step}: {what}")]
    Layout {
        /// step (1-based)
        step: u64,
        /// the fault
        what: String,
    },
    /// A Vulkan failure.
    #[cfg(feature = "vulkan")]
    #[error(transparent)]
    Vulkan(#[from] crate::vulkan::VkError),
}

/// The simulation parameters (GRAYSCOTT.md): feed rate F, kill rate k, time step dt, diffusion rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// feed rate F
    pub feed: f32,
    /// kill rate k
    pub kill: f32,
    /// time step dt
    pub dt: f32,
    /// diffusion rate of U
    pub du: f32,
    /// diffusion rate of V
    pub dv: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            feed: DEFAULT_FEED,
            kill: DEFAULT_KILL,
            dt: DEFAULT_DT,
            du: DIFFUSION_U,
            dv: DIFFUSION_V,
        }
    }
}

impl Params {
    /// Checked parameters with the default diffusion rates: F and k finite and in `0..=1`, dt finite
    /// and in `(0, 10]`.
    ///
    /// ```
    /// use lockstep::grayscott::Params;
    /// assert!(Params::new(0.03, 0.06, 1.0).is_ok());
    /// let e = Params::new(0.03, 0.06, 0.0).unwrap_err().to_string();
    /// assert!(e.contains("dt = 0 is invalid"));
    /// ```
    pub fn new(feed: f32, kill: f32, dt: f32) -> Result<Params, GrayScottError> {
        let check = |name, value: f32, ok: bool, rule| {
            if value.is_finite() && ok {
                Ok(())
            } else {
                Err(GrayScottError::Param { name, value, rule })
            }
        };
        check(
            "feed rate F",
            feed,
            (0.0..=1.0).contains(&feed),
            "it must be a finite number in 0..=1",
        )?;
        check(
            "kill rate k",
            kill,
            (0.0..=1.0).contains(&kill),
            "it must be a finite number in 0..=1",
        )?;
        check(
            "dt",
            dt,
            dt > 0.0 && dt <= 10.0,
            "the time step must be a finite number in (0, 10]",
        )?;
        Ok(Params {
            feed,
            kill,
            dt,
            ..Params::default()
        })
    }
}

/// A checked grid size: at least one row and one column, at most [`MAX_PADDED_CELLS`] cells once
/// the zero ring is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Domain {
    rows: usize,
    cols: usize,
}

impl Domain {
    /// Checks `rows × cols`.
    ///
    /// ```
    /// use lockstep::grayscott::Domain;
    /// assert_eq!(Domain::new(1080, 1920).unwrap().cells(), 1080 * 1920);
    /// assert!(Domain::new(0, 5).unwrap_err().to_string().contains("at least one row"));
    /// ```
    pub fn new(rows: usize, cols: usize) -> Result<Domain, GrayScottError> {
        let err = |rule| Err(GrayScottError::Domain { rows, cols, rule });
        if rows == 0 || cols == 0 {
            return err("it needs at least one row and one column");
        }
        let padded = (rows as u64 + 2).checked_mul(cols as u64 + 2);
        if padded.is_none_or(|p| p > MAX_PADDED_CELLS) {
            return err("(rows + 2) × (cols + 2) must be at most 2^31 cells (32-bit GPU indexing)");
        }
        Ok(Domain { rows, cols })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Cells (`rows × cols`).
    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Width of the padded grid (`cols + 2`).
    pub fn padded_cols(&self) -> usize {
        self.cols + 2
    }

    /// Height of the padded grid (`rows + 2`).
    pub fn padded_rows(&self) -> usize {
        self.rows + 2
    }

    /// The rectangle where the initial condition has U = 0, V = 1 (GRAYSCOTT.md, "Initial
    /// condition"): rows `(7R/16).saturating_sub(4) .. (8R/16).saturating_sub(4)`, columns
    /// `7C/16 .. 8C/16`, half-open, integer division.
    pub fn seed_rect(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let (r, c) = (self.rows, self.cols);
        (
            (7 * r / 16).saturating_sub(4)..(8 * r / 16).saturating_sub(4),
            7 * c / 16..8 * c / 16,
        )
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}", self.rows, self.cols)
    }
}

/// U and V as `rows × cols` arrays (no padding): what every backend returns.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    /// U concentrations
    pub u: Array2<f32>,
    /// V concentrations
    pub v: Array2<f32>,
}

impl Fields {
    /// The initial condition: U = 1, V = 0 everywhere except [`Domain::seed_rect`], where U = 0, V = 1.
    pub fn initial(domain: Domain) -> Fields {
        let (rr, cr) = domain.seed_rect();
        let u = Array2::from_shape_fn((domain.rows, domain.cols), |(r, c)| {
            if rr.contains(&r) && cr.contains(&c) {
                0.0
            } else {
                1.0
            }
        });
        let v = u.mapv(|x| 1.0 - x);
        Fields { u, v }
    }

    /// The domain these fields cover.
    pub fn domain(&self) -> Domain {
        let (rows, cols) = self.u.dim();
        Domain { rows, cols }
    }

    /// The largest absolute difference between `self` and `other`, over U and V (infinity if a value
    /// is NaN in one and not the other or the shapes differ), with where it is.
    pub fn max_abs_diff(&self, other: &Fields) -> Difference {
        let mut worst = Difference::default();
        if self.u.dim() != other.u.dim() {
            worst.value = f32::INFINITY;
            return worst;
        }
        for (field, a, b) in [("u", &self.u, &other.u), ("v", &self.v, &other.v)] {
            for ((pos, &x), &y) in a.indexed_iter().zip(b.iter()) {
                let d = if x.is_nan() || y.is_nan() {
                    if x.is_nan() && y.is_nan() {
                        0.0
                    } else {
                        f32::INFINITY
                    }
                } else {
                    (x - y).abs()
                };
                if d > worst.value || (d.is_infinite() && worst.value.is_finite()) {
                    worst = Difference {
                        value: d,
                        field,
                        row: pos.0,
                        col: pos.1,
                    };
                }
            }
        }
        worst
    }
}

/// The largest difference between two [`Fields`] and where it is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Difference {
    /// |a − b|
    pub value: f32,
    /// "u" or "v"
    pub field: &'static str,
    /// row
    pub row: usize,
    /// column
    pub col: usize,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{:e}", self.value)
        } else {
            write!(
                f,
                "{:e} ({} at ({}, {}))",
                self.value, self.field, self.row, self.col
            )
        }
    }
}

/// A field stored with the one-cell zero ring of the GPU course (`DATA_START_POS` = (1, 1)):
/// `(rows + 2) × (cols + 2)` values, row-major; the ring is 0 and never written.
#[derive(Clone, Debug, PartialEq)]
pub struct Padded {
    /// row-major values, ring included
    pub data: Vec<f32>,
    /// the domain inside the ring
    pub domain: Domain,
}

impl Padded {
    /// A zero grid.
    pub fn zeros(domain: Domain) -> Padded {
        Padded {
            data: vec![0.0; domain.padded_rows() * domain.padded_cols()],
            domain,
        }
    }

    /// `a` (rows × cols) with the zero ring around it.
    pub fn from_array(a: &Array2<f32>) -> Padded {
        let (rows, cols) = a.dim();
        let domain = Domain { rows, cols };
        let mut p = Padded::zeros(domain);
        let w = domain.padded_cols();
        for (r, row) in a.rows().into_iter().enumerate() {
            let dst = &mut p.data[(r + 1) * w + 1..(r + 1) * w + 1 + cols];
            for (d, s) in dst.iter_mut().zip(row.iter()) {
                *d = *s;
            }
        }
        p
    }

    /// The domain without the ring.
    pub fn to_array(&self) -> Array2<f32> {
        let w = self.domain.padded_cols();
        Array2::from_shape_fn((self.domain.rows, self.domain.cols), |(r, c)| {
            self.data[(r + 1) * w + c + 1]
        })
    }
}

/// A running simulation: any backend.
pub trait Simulation {
    /// Runs `steps` more steps.
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError>;
    /// The current U and V.
    fn fields(&mut self) -> Result<Fields, GrayScottError>;
    /// Steps run so far.
    fn steps_done(&self) -> u64;
    /// A short description (backend, variant, sizes) for reports.
    fn describe(&self) -> String;
}

/// The update of one cell from its 3×3 neighbourhoods of U and V (`[dy + 1][dx + 1]`), exactly as
/// in the definition: the stencil sum in row-major order, then the reaction terms left to right.
/// Every CPU backend calls this (or [`reference::update_cells`], which inlines it), so that they agree
/// bit for bit.
///
/// The centre weight is 0, and for finite values `0 · (u − u)` adds exactly `+0`, so the centre
/// term is left out of the sum.
///
/// ```
/// use lockstep::grayscott::{update_cell, Params};
/// // A lone cell with U = 1, V = 0 and zero neighbours (a 1×1 domain): full_u = Σw·(0 − 1) = −3,
/// // du = 0.1·(−3) − 0 + F·(1 − 1) = −0.3, so U' = 0.7 and V stays 0.
/// let u = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]];
/// let v = [[0.0; 3]; 3];
/// assert_eq!(update_cell(&Params::default(), &u, &v), (0.7, 0.0));
/// ```
#[inline(always)]
pub fn update_cell(p: &Params, u: &[[f32; 3]; 3], v: &[[f32; 3]; 3]) -> (f32, f32) {
    let (uc, vc) = (u[1][1], v[1][1]);
    let mut full_u = 0.0f32;
    let mut full_v = 0.0f32;
    for dy in 0..3 {
        for dx in 0..3 {
            if dy == 1 && dx == 1 {
                continue;
            }
            full_u += WEIGHTS[dy][dx] * (u[dy][dx] - uc);
            full_v += WEIGHTS[dy][dx] * (v[dy][dx] - vc);
        }
    }
    react(p, uc, vc, full_u, full_v)
}

/// The reaction and time step, given the stencil sums (the second half of [`update_cell`]).
#[inline(always)]
pub(crate) fn react(p: &Params, u: f32, v: f32, full_u: f32, full_v: f32) -> (f32, f32) {
    let uv2 = u * v * v;
    let du = p.du * full_u - uv2 + p.feed * (1.0 - u);
    let dv = p.dv * full_v + uv2 - (p.feed + p.kill) * v;
    (u + du * p.dt, v + dv * p.dt)
}

/// [`update_cell`] as a GPU compiler that contracts every `a · b + c` into a fused multiply-add
/// computes it (SPIR-V allows contraction unless a result is decorated `NoContraction`): the stencil
/// sum as `fma(w, nb − c, acc)`, then `fma(Du, full_u, −uv2)`, `fma(F, 1 − u, ·)`, `fma(du, dt, u)`.
/// Not a backend: it measures how far a contracting device may drift from the reference (see
/// `docs/grayscott.md`, "Agreement").
#[inline(always)]
pub fn update_cell_contracted(p: &Params, u: &[[f32; 3]; 3], v: &[[f32; 3]; 3]) -> (f32, f32) {
    let (uc, vc) = (u[1][1], v[1][1]);
    let mut full_u = 0.0f32;
    let mut full_v = 0.0f32;
    for dy in 0..3 {
        for dx in 0..3 {
            full_u = WEIGHTS[dy][dx].mul_add(u[dy][dx] - uc, full_u);
            full_v = WEIGHTS[dy][dx].mul_add(v[dy][dx] - vc, full_v);
        }
    }
    let uv2 = uc * vc * vc;
    let du = p.feed.mul_add(1.0 - uc, p.du.mul_add(full_u, -uv2));
    let dv = (-(p.feed + p.kill)).mul_add(vc, p.dv.mul_add(full_v, uv2));
    (du.mul_add(p.dt, uc), dv.mul_add(p.dt, vc))
}
