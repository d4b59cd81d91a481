//! How the course's subgroup kernel maps workgroups, subgroups and lanes onto cells: the one
//! description that both the model backend (which runs it lane by lane) and the GPU host code (which
//! sizes its dispatches with it) use.
//!
//! Coordinates are those of the padded grid (the data starts at (1, 1), `DATA_START_POS` in the
//! course). A subgroup of `S` lanes loads `S` consecutive cells of a row and produces the `S − 2`
//! in the middle: its first and last lanes (`BORDER_SIZE = 1`) only load and shuffle. Consecutive
//! subgroups therefore overlap by two cells.

use super::{Domain, GrayScottError};

/// Where the course's subgroup kernel puts its subgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tiling {
    /// 1D workgroups along a row; a workgroup's subgroups produce consecutive stretches of that row
    /// ("First implementation: 1D workgroups").
    OneD,
    /// 1D workgroups whose subgroups are stacked vertically, one output row each
    /// (`item_y = WorkGroupID.y · NumSubgroups + SubgroupID`, "Guaranteeing 2D cache locality").
    Stacked,
    /// Stacked, and the top/bottom rows come from a shared-memory cache filled by the neighbouring
    /// subgroups of the workgroup ("Shared memory, take 2").
    Shared,
    /// **Deliberately broken**: like [`Tiling::OneD`] but without border lanes (every lane is an
    /// output, subgroups do not overlap), so the first and last lanes use undefined shuffle results.
    /// Exists to show that the model catches it; there is no GPU kernel for it.
    NoBorder,
    /// **Deliberately broken**: [`Tiling::Stacked`] exactly as the course's text writes it, where
    /// work-items exit only outside the padded grid. When the row count is not a multiple of the
    /// subgroups per workgroup, a subgroup lands on the bottom zero ring and loads the row below
    /// it — one row past the buffer. The model reports the read; the GPU kernels exit such
    /// subgroups (they produce nothing).
    StackedOverread,
    /// **Deliberately broken**: like [`Tiling::OneD`], but each subgroup starts `S − 3` cells after
    /// the one before instead of `S − 2`, so that its first output cell is the previous subgroup's
    /// last. The model reports the cell written twice; there is no GPU kernel for it.
    Overlap,
    /// **Deliberately broken**: like [`Tiling::OneD`], but each subgroup starts `S − 1` cells after
    /// the one before, so that one cell between them is never written. The model reports it; there
    /// is no GPU kernel for it.
    Gap,
}

impl Tiling {
    /// Every layout, the broken ones last.
    pub const ALL: [Tiling; 7] = [
        Tiling::OneD,
        Tiling::Stacked,
        Tiling::Shared,
        Tiling::NoBorder,
        Tiling::StackedOverread,
        Tiling::Overlap,
        Tiling::Gap,
    ];

    /// The correct layouts (those with a GPU kernel).
    pub const CORRECT: [Tiling; 3] = [Tiling::OneD, Tiling::Stacked, Tiling::Shared];

    /// The name used on the command line and in benchmark names.
    pub fn name(self) -> &'static str {
        match self {
            Tiling::OneD => "subgroup-1d",
            Tiling::Stacked => "subgroup-stacked",
            Tiling::Shared => "subgroup-shared",
            Tiling::NoBorder => "broken-no-border",
            Tiling::StackedOverread => "broken-stacked-overread",
            Tiling::Overlap => "broken-overlap",
            Tiling::Gap => "broken-gap",
        }
    }

    /// Parses [`Tiling::name`].
    pub fn parse(s: &str) -> Option<Tiling> {
        Tiling::ALL.into_iter().find(|l| l.name() == s)
    }

    /// Input-only lanes on each side of a subgroup (`BORDER_SIZE`).
    pub fn border(self) -> u32 {
        match self {
            Tiling::NoBorder => 0,
            _ => 1,
        }
    }

    /// True for the layouts whose subgroups are stacked.
    pub fn stacked(self) -> bool {
        matches!(
            self,
            Tiling::Stacked | Tiling::Shared | Tiling::StackedOverread
        )
    }

    /// True for the deliberately broken layouts (model only).
    pub fn is_broken(self) -> bool {
        matches!(
            self,
            Tiling::NoBorder | Tiling::StackedOverread | Tiling::Overlap | Tiling::Gap
        )
    }

    /// Cells from one subgroup's first lane to the next's, along a row of a layout that is not
    /// stacked, for subgroups of `outputs` output lanes: `outputs` (they tile the row), except in
    /// the broken [`Tiling::Overlap`] and [`Tiling::Gap`].
    #[inline(always)]
    fn advance(self, outputs: i64) -> i64 {
        match self {
            Tiling::Overlap => outputs - 1,
            Tiling::Gap => outputs + 1,
            _ => outputs,
        }
    }

    /// The first padded row at which work-items exit: past the data (`data_end_pos().y`) for the
    /// kernels in `shaders/grayscott/`, past the padded grid for the course's literal text.
    pub fn exit_row(self, padded_rows: i64) -> i64 {
        match self {
            Tiling::StackedOverread => padded_rows,
            _ => padded_rows - 1,
        }
    }
}

/// A checked kernel shape: subgroup size `S` (a power of two in 4..=128) and 1D workgroup size `W`
/// (a multiple of `S`, at most 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// the layout
    pub layout: Tiling,
    /// lanes per subgroup (`S`)
    pub subgroup: u32,
    /// invocations per workgroup (`W`)
    pub workgroup: u32,
}

/// The most invocations per workgroup the layouts accept (the usual `maxComputeWorkGroupInvocations`).
pub(crate) const MAX_WORKGROUP: u32 = 1024;

impl Shape {
    /// Checks the sizes against the kernel's rules.
    ///
    /// ```
    /// use lockstep::grayscott::layout::{Tiling, Shape};
    /// assert!(Shape::new(Tiling::OneD, 32, 128).is_ok());
    /// let e = Shape::new(Tiling::OneD, 32, 48).unwrap_err().to_string();
    /// assert!(e.contains("multiple of the subgroup size"));
    /// assert!(Shape::new(Tiling::OneD, 2, 8).is_err());
    /// ```
    pub fn new(layout: Tiling, subgroup: u32, workgroup: u32) -> Result<Shape, GrayScottError> {
        if !subgroup.is_power_of_two() || !(4..=128).contains(&subgroup) {
            return Err(GrayScottError::Config(format!(
                "subgroup size {subgroup} is invalid: the {} kernel needs a power of two in 4..=128 \
                 (gl_SubgroupSize is a power of two ≤ 128, and one border lane on each side leaves \
                 at least 2 outputs from 4 lanes)",
                layout.name()
            )));
        }
        if workgroup == 0 || !workgroup.is_multiple_of(subgroup) {
            return Err(GrayScottError::Config(format!(
                "workgroup size {workgroup} is invalid: it must be a non-zero multiple of the \
                 subgroup size {subgroup} (the {} kernel assumes full subgroups)",
                layout.name()
            )));
        }
        if workgroup > MAX_WORKGROUP {
            return Err(GrayScottError::Config(format!(
                "workgroup size {workgroup} is invalid: at most {MAX_WORKGROUP} invocations"
            )));
        }
        Ok(Shape {
            layout,
            subgroup,
            workgroup,
        })
    }

    /// Subgroups per workgroup (`gl_NumSubgroups`).
    #[inline(always)]
    pub fn subgroups(&self) -> u32 {
        // The subgroup size is a power of two (Shape::new): a shift, not a division (the model
        // asks for every subgroup).
        self.workgroup >> self.subgroup.trailing_zeros()
    }

    /// Cells produced by a full subgroup (`S − 2·BORDER_SIZE`).
    pub fn subgroup_outputs(&self) -> u32 {
        self.subgroup - 2 * self.layout.border()
    }

    /// Workgroup counts `[x, y]` that cover `domain`.
    ///
    /// ```
    /// use lockstep::grayscott::{layout::{Tiling, Shape}, Domain};
    /// let d = Domain::new(100, 100).unwrap();
    /// // 4 subgroups of 8 lanes produce 4 × 6 = 24 cells of a row: ceil(100 / 24) = 5 workgroups.
    /// assert_eq!(Shape::new(Tiling::OneD, 8, 32).unwrap().grid(d), [5, 100]);
    /// // Stacked: 6 cells wide, 4 rows tall: ceil(100 / 6) = 17, ceil(100 / 4) = 25.
    /// assert_eq!(Shape::new(Tiling::Stacked, 8, 32).unwrap().grid(d), [17, 25]);
    /// ```
    pub fn grid(&self, domain: Domain) -> [u32; 2] {
        let (rows, cols) = (domain.rows() as u64, domain.cols() as u64);
        let out = self.subgroup_outputs() as u64;
        let n = self.subgroups() as u64;
        let [x, y] = if self.layout.stacked() {
            [cols.div_ceil(out), rows.div_ceil(n)]
        } else {
            [
                cols.div_ceil(self.layout.advance(out as i64) as u64 * n),
                rows,
            ]
        };
        [x.min(u32::MAX as u64) as u32, y.min(u32::MAX as u64) as u32]
    }

    /// Data rows written by one row of workgroups (1 side by side, `NumSubgroups` stacked).
    pub fn rows_per_workgroup_row(&self) -> usize {
        if self.layout.stacked() {
            self.subgroups() as usize
        } else {
            1
        }
    }

    /// The padded-grid position `(x, y)` of `lane` of subgroup `sg` in workgroup `wg`
    /// (the course's `work_item_pos()`).
    #[inline(always)]
    pub fn item_pos(&self, wg: [u32; 2], sg: u32, lane: u32) -> (i64, i64) {
        let b = self.layout.border() as i64;
        let out = self.subgroup_outputs() as i64;
        let first_x = 1 - b; // DATA_START_POS.x − BORDER_SIZE
        let (wx, wy) = (wg[0] as i64, wg[1] as i64);
        if self.layout.stacked() {
            (
                wx * out + lane as i64 + first_x,
                wy * self.subgroups() as i64 + sg as i64 + 1,
            )
        } else {
            (
                (wx * self.subgroups() as i64 + sg as i64) * self.layout.advance(out)
                    + lane as i64
                    + first_x,
                wy + 1,
            )
        }
    }

    /// True for a lane that produces an output if its position is inside the data
    /// (the course's `is_subgroup_output()`).
    #[inline(always)]
    pub fn is_output_lane(&self, lane: u32) -> bool {
        let b = self.layout.border();
        lane >= b && lane < b + self.subgroup_outputs()
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, workgroup {}, subgroup {}",
            self.layout.name(),
            self.workgroup,
            self.subgroup
        )
    }
}

/// The register-tile kernel's parameters (`shaders/grayscott/subgroup_tile.comp`, run on the model by
/// [`super::model_tile`]): each lane holds
/// a column of `rows` cells and the subgroup advances them `steps` steps (`T`) per trip through
/// memory. A subgroup of `S` lanes produces `(S − 2T) × (rows − 2T)` cells per pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    /// steps per pass (`T` ≥ 1)
    pub steps: u32,
    /// rows each lane holds (`> 2T`)
    pub rows: u32,
}

impl Tile {
    /// The default tile: 2 steps per pass, 16 rows per lane.
    pub const DEFAULT: Tile = Tile { steps: 2, rows: 16 };
    /// The most rows a lane may hold when it keeps them all in registers (2 floats per row): the
    /// kernel's register-array path, `T` > [`Tile::WAVE_MAX_STEPS`].
    pub const MAX_ROWS: u32 = 64;
    /// The most steps per pass of the wavefront path (`shaders/grayscott/subgroup_tile.comp`,
    /// `WAVE_MAX_STEPS`), which keeps three rows per step in registers, whatever the rows per lane.
    pub const WAVE_MAX_STEPS: u32 = 4;
    /// The most rows per lane of the wavefront path (and of `T` = 1): a bound on the work of one
    /// subgroup, not on its registers.
    pub const WAVE_MAX_ROWS: u32 = 1024;

    /// Parses the kernel's name with its parameters: `subgroup-tile` is [`Tile::DEFAULT`],
    /// `subgroup-tile-t{T}` has `T` steps per pass and the default rows, `subgroup-tile-t{T}-r{R}`
    /// both (checked later, by [`Tile::check`]).
    ///
    /// ```
    /// use lockstep::grayscott::layout::Tile;
    /// assert_eq!(Tile::parse("subgroup-tile-t4-r32"), Some(Tile { steps: 4, rows: 32 }));
    /// assert_eq!(Tile::parse("subgroup-tile"), Some(Tile::DEFAULT));
    /// assert_eq!(Tile::parse("subgroup-tile-t"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Tile> {
        if s == "subgroup-tile" {
            return Some(Tile::DEFAULT);
        }
        let rest = s.strip_prefix("subgroup-tile-t")?;
        let (t, r) = match rest.split_once("-r") {
            Some((t, r)) => (t, Some(r)),
            None => (rest, None),
        };
        let num = |x: &str| -> Option<u32> {
            if x.is_empty() || x.len() > 4 || !x.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            x.parse().ok()
        };
        Some(Tile {
            steps: num(t)?,
            rows: match r {
                Some(r) => num(r)?,
                None => Tile::DEFAULT.rows,
            },
        })
    }

    /// `subgroup-tile-t{T}-r{R}`, what [`Tile::parse`] reads.
    pub fn name(self) -> String {
        format!("subgroup-tile-t{}-r{}", self.steps, self.rows)
    }

    /// Cells a subgroup of `s` lanes writes per pass: `[columns, rows]` = `[s − 2T, rows − 2T]`.
    pub fn outputs(self, s: u32) -> [u32; 2] {
        [s - 2 * self.steps, self.rows - 2 * self.steps]
    }

    /// Workgroup counts `[x, y]` that cover `domain` with subgroups of `s` lanes, `n` stacked per
    /// workgroup (the kernel's `gl_NumWorkGroups`).
    ///
    /// ```
    /// use lockstep::grayscott::{layout::Tile, Domain};
    /// // 32 − 4 = 28 columns and 4 × (16 − 4) = 48 rows per workgroup.
    /// let t = Tile { steps: 2, rows: 16 };
    /// assert_eq!(t.grid(Domain::new(100, 57).unwrap(), 32, 4), [3, 3]);
    /// ```
    pub fn grid(self, domain: Domain, s: u32, n: u32) -> [u32; 2] {
        let [ox, oy] = self.outputs(s);
        let x = (domain.cols() as u64).div_ceil(ox as u64);
        let y = (domain.rows() as u64).div_ceil(oy as u64 * n as u64);
        [x.min(u32::MAX as u64) as u32, y.min(u32::MAX as u64) as u32]
    }

    /// The padded position `(x, y)` of lane 0's first row in subgroup `sg` of workgroup `wg`
    /// (`n` subgroups of `s` lanes per workgroup): lane `l` holds column `x + l`, rows `y ..
    /// y + rows` (the kernel's `x` and `y0`).
    #[inline(always)]
    pub fn origin(self, wg: [u32; 2], sg: u32, s: u32, n: u32) -> (i64, i64) {
        let [ox, oy] = self.outputs(s);
        let t = self.steps as i64;
        (
            wg[0] as i64 * ox as i64 + 1 - t,
            (wg[1] as i64 * n as i64 + sg as i64) * oy as i64 + 1 - t,
        )
    }

    /// Does the kernel sum the stencil regrouped (`stencil_regrouped` in `subgroup_tile.comp`: the
    /// wavefront path, `T` = 2 ..= [`Tile::WAVE_MAX_STEPS`])? Its results then round differently
    /// from the definition's order — within the GPU kernels' tolerance, not bit for bit even on a
    /// device that contracts nothing.
    pub fn regrouped(self) -> bool {
        (2..=Tile::WAVE_MAX_STEPS).contains(&self.steps)
    }

    /// The tile kernel's own rules, at subgroup size `s`: `T ≥ 1`, more rows than `2T` (rows `T` from
    /// the top and bottom are the halo), at most [`Tile::WAVE_MAX_ROWS`] rows for `T` ≤
    /// [`Tile::WAVE_MAX_STEPS`] and [`Tile::MAX_ROWS`] above it, and more lanes than `2T`.
    pub fn check(self, s: u32) -> Result<(), GrayScottError> {
        let t = self;
        let bad = |why: String| {
            Err(GrayScottError::Config(format!(
                "subgroup-tile-t{}-r{} is invalid: {why}",
                t.steps, t.rows
            )))
        };
        if t.steps == 0 {
            return bad("it needs at least 1 step per pass".into());
        }
        if t.steps > Tile::WAVE_MAX_STEPS && t.rows > Tile::MAX_ROWS {
            return bad(format!(
                "above {} steps per pass a lane holds its rows in registers: at most {} rows",
                Tile::WAVE_MAX_STEPS,
                Tile::MAX_ROWS
            ));
        }
        if t.rows > Tile::WAVE_MAX_ROWS {
            return bad(format!(
                "a lane works through at most {} rows",
                Tile::WAVE_MAX_ROWS
            ));
        }
        if t.rows <= 2 * t.steps {
            return bad(format!(
                "the rows per lane must exceed 2 × {} steps (a halo of {} rows above and below the outputs)",
                t.steps, t.steps
            ));
        }
        if s <= 2 * t.steps {
            return bad(format!(
                "subgroups of {s} lanes leave no output lane at {} steps per pass (it needs more than \
                 {} lanes: {} on each side only feed the shuffles)",
                t.steps,
                2 * t.steps,
                t.steps
            ));
        }
        Ok(())
    }
}
