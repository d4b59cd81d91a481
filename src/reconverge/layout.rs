//! Layout dependence: run a kernel under every distinct lane layout the model offers for a
//! workgroup shape and report whether its results depend on the layout.
//!
//! Vulkan does not say how a 2D workgroup is cut into subgroups (../shared/specs/README.md,
//! "Layout"; seed 003, "Undefined 2D layout"): row-major, column-major and 2×2 quads are all valid.
//! A kernel whose per-invocation results differ between them relies on something the spec does not
//! promise.

use crate::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use crate::reconverge::exec::{execute, ExecError, Execution, LaneMap, Mode, Val};
use crate::reconverge::program::Program;

/// One place where two layouts disagree.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutDifference {
    /// local invocation id (x, y, z)
    pub invocation: [u32; 3],
    /// index of the record in the invocation's sequence
    pub record: usize,
    /// the record's tag (0 when the sequences differ in length)
    pub tag: u32,
    /// what each layout gave (in [`LayoutReport::layouts`] order)
    pub values: Vec<String>,
}

/// Results of one kernel under every distinct layout.
#[derive(Clone, Debug)]
pub struct LayoutReport {
    /// the workgroup shape
    pub shape: WorkgroupShape,
    /// the subgroup size
    pub size: SubgroupSize,
    /// the model in force
    pub mode: Mode,
    /// the layouts run (those giving distinct placements)
    pub layouts: Vec<LaneOrder>,
    /// each layout's execution
    pub executions: Vec<Execution>,
    /// where results differ (empty: the kernel does not depend on the layout)
    pub differences: Vec<LayoutDifference>,
}

impl LayoutReport {
    /// Does any invocation's result depend on the layout?
    pub fn depends_on_layout(&self) -> bool {
        !self.differences.is_empty()
    }

    /// One line per difference (at most `max`), after a summary line.
    pub fn summary(&self, max: usize) -> String {
        let names: Vec<String> = self.layouts.iter().map(|l| l.to_string()).collect();
        let mut s = format!(
            "workgroup {} · subgroup size {} · {} · layouts {}: {}\n",
            self.shape,
            self.size,
            self.mode,
            names.join(", "),
            if self.depends_on_layout() {
                format!(
                    "DEPENDS on the layout ({} differences)",
                    self.differences.len()
                )
            } else {
                "independent of the layout".to_string()
            }
        );
        for d in self.differences.iter().take(max) {
            s += &format!(
                "  invocation ({},{},{}) record {} (tag {}): {}\n",
                d.invocation[0],
                d.invocation[1],
                d.invocation[2],
                d.record,
                d.tag,
                names
                    .iter()
                    .zip(&d.values)
                    .map(|(n, v)| format!("{n} {v}"))
                    .collect::<Vec<_>>()
                    .join(" · ")
            );
        }
        s
    }
}

/// Two records agree if both are undefined, both atomic results (their values are order-dependent
/// under every layout), or defined and equal.
fn same(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Defined(x), Val::Defined(y)) => x == y,
        (Val::Undefined(_), Val::Undefined(_)) => true,
        (Val::Atomic { plus: p, .. }, Val::Atomic { plus: q, .. }) => p == q,
        (Val::OrderDependent, Val::OrderDependent) => true,
        _ => false,
    }
}

/// Runs `program` on `shape` under every layout of [`LaneOrder::distinct_for`] and compares every
/// invocation's records.
///
/// ```
/// use lockstep::model::{SubgroupSize, WorkgroupShape};
/// use lockstep::reconverge::{layout::layout_dependence, Mode, Operand, Program, SgOp, Stmt};
/// // subgroupAdd(gl_LocalInvocationID.x) on a 4x4 workgroup with subgroups of 4: a row sum under
/// // row-major, but a column of equal x under column-major.
/// let p = Program { main: vec![Stmt::Op { tag: 1, op: SgOp::add(Operand::X), dst: None }],
///     functions: vec![] };
/// let r = layout_dependence(&p, WorkgroupShape::new(4, 4, 1).unwrap(),
///     SubgroupSize::new(4).unwrap(), Mode::Base).unwrap();
/// assert!(r.depends_on_layout());
/// ```
pub fn layout_dependence(
    program: &Program,
    shape: WorkgroupShape,
    size: SubgroupSize,
    mode: Mode,
) -> Result<LayoutReport, ExecError> {
    let layouts = LaneOrder::distinct_for(shape, size);
    let mut executions = Vec::with_capacity(layouts.len());
    for &l in &layouts {
        let wg =
            WorkgroupLayout::new(shape, size, l).map_err(|e| ExecError::Model(e.to_string()))?;
        executions.push(execute(program, &LaneMap::new(&wg), mode)?);
    }
    let mut differences = Vec::new();
    for i in 0..shape.invocations() as usize {
        let seqs: Vec<&[crate::reconverge::Record]> = executions
            .iter()
            .map(|e| &e.records[i][..e.lost_at[i].unwrap_or(e.records[i].len())])
            .collect();
        let len = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        for k in 0..len {
            let recs: Vec<Option<&crate::reconverge::Record>> =
                seqs.iter().map(|s| s.get(k)).collect();
            let first = recs[0];
            let agree = recs.iter().all(|r| match (r, first) {
                (Some(a), Some(b)) => a.tag == b.tag && same(&a.value, &b.value),
                (None, None) => true,
                _ => false,
            });
            if !agree {
                differences.push(LayoutDifference {
                    invocation: shape.local_id(i as u32),
                    record: k,
                    tag: first.map_or(0, |r| r.tag),
                    values: recs
                        .iter()
                        .map(|r| r.map_or("(no record)".to_string(), |r| r.value.to_string()))
                        .collect(),
                });
            }
        }
    }
    Ok(LayoutReport {
        shape,
        size,
        mode,
        layouts,
        executions,
        differences,
    })
}
