//! A kernel's comparison as reported: per buffer what was compared and what was explained, the
//! findings grouped by kind and explanation, the text for people (the lines `debugPrintfEXT`
//! printed among it) and the JSON.

use crate::kernel::buffers::descriptor_name;
use crate::kernel::tolerance::Tolerance;
use crate::model::ScalarType;
use crate::reconverge::Mode;
use serde_json::json;
use std::fmt::Write;

/// One buffer's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferReport {
    /// descriptor set ([`crate::spirv::UNBOUND_SET`] for a buffer with no descriptor)
    pub set: u32,
    /// binding (for a buffer with no descriptor, its index among [`KernelJob::unbound`](crate::kernel::run::KernelJob::unbound))
    pub binding: u32,
    /// the element of an array of descriptors (0 for a plain binding)
    pub element: u32,
    /// how reports name it: `binding 1`, `binding 1.2`, `binding 1[3]`, `buffer NAME (no
    /// descriptor)`
    pub name: String,
    /// element type (from the buffer given)
    pub dtype: ScalarType,
    /// elements
    pub elements: usize,
    /// defined and exact (compared bit for bit)
    pub exact: usize,
    /// defined and inexact (compared within the tolerance)
    pub inexact: usize,
    /// undefined (not compared)
    pub undefined: usize,
    /// order-dependent (not compared)
    pub order_dependent: usize,
    /// racy (not compared)
    pub racy: usize,
    /// compared and different
    pub mismatches: usize,
}

/// What a finding of a report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FindingKind {
    /// two unordered accesses, one a write, that leave different values (a data race)
    Race,
    /// a workgroup barrier some invocations did not reach
    DivergentBarrier,
    /// an access outside its variable
    OutOfBounds,
    /// an invocation executed `OpUnreachable`: "Behavior is undefined if this instruction is
    /// executed" (SPIR-V 1.6, 3.52.17)
    Unreachable,
    /// model and device disagree on a defined element
    Mismatch,
    /// an element holds a racy value
    Racy,
    /// an element holds an undefined value
    Undefined,
    /// an invocation branched on an undefined value: a warning, an error with `--strict` —
    /// SPIR-V gives an undefined value *some* value and makes no branch on one undefined
    /// behaviour; what the branch leaves undefined in a buffer fails as that element
    LostPath,
    /// a loop waits for a value another workgroup writes (no forward-progress guarantee): a
    /// warning, an error with `--strict` (a wait that never ends in the model's schedule stops the
    /// run instead)
    SpinWait,
    /// a data race whose two sides leave the same value (every order leaves that value, which is
    /// kept and compared): an error — "Applications must ensure that no data races occur"
    /// (Appendix B, Data Race) knows no exception for a value — a warning with
    /// `--allow-same-value-races`
    SameValueRace,
    /// an element's value depends on the order of atomics: explained, not wrong
    OrderDependent,
    /// lines `debugPrintfEXT` printed on the model: shown, never failing
    Print,
}

impl FindingKind {
    /// The name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Race => "race",
            FindingKind::DivergentBarrier => "divergent_barrier",
            FindingKind::OutOfBounds => "out_of_bounds",
            FindingKind::Unreachable => "unreachable",
            FindingKind::Mismatch => "mismatch",
            FindingKind::Racy => "racy",
            FindingKind::Undefined => "undefined",
            FindingKind::LostPath => "lost_path",
            FindingKind::SpinWait => "spin_wait",
            FindingKind::SameValueRace => "same_value_race",
            FindingKind::OrderDependent => "order_dependent",
            FindingKind::Print => "printf",
        }
    }

    /// Does a finding of this kind fail the run under `policy`?
    pub fn fails(self, policy: FailPolicy) -> bool {
        match self {
            FindingKind::OrderDependent | FindingKind::Print => false,
            FindingKind::SameValueRace => !policy.allow_same_value_races,
            FindingKind::SpinWait => policy.spin_waits,
            FindingKind::LostPath => policy.lost_paths,
            _ => true,
        }
    }
}

/// The findings whose failing is a choice: the rest always fail (or, explained, never do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailPolicy {
    /// a spin-wait on another workgroup fails the run (`--strict`); by default a warning: Vulkan
    /// gives no forward-progress guarantee between workgroups, but a device that runs them all at
    /// once gets past it
    pub spin_waits: bool,
    /// a branch on an undefined value fails the run (`--strict`); by default a warning: the
    /// invocation takes one way or the other, and what that leaves undefined in a buffer fails
    /// as that element
    pub lost_paths: bool,
    /// a race whose two sides leave the same value is a warning (`--allow-same-value-races`); by
    /// default it fails, as every data race does: "Applications must ensure that no data races
    /// occur" (Appendix B, Data Race), and the validation layers' race detector reports it too
    pub allow_same_value_races: bool,
}

/// A group of findings of a report: one kind, in one buffer (for elements), for one reason, with
/// how many there were and the first few of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// what it is about
    pub kind: FindingKind,
    /// the buffer (set, binding, element of an array of descriptors), for element findings
    pub buffer: Option<(u32, u32, u32)>,
    /// source line, where known
    pub line: Option<u32>,
    /// the explanation the group shares (the chain, or the first occurrence)
    pub why: String,
    /// the first elements or occurrences (at most [`GROUP_ITEMS`])
    pub items: Vec<String>,
    /// occurrences in all
    pub count: u64,
}

/// What makes findings of a report one group: kind, buffer, explanation.
type GroupOf = (FindingKind, Option<(u32, u32, u32)>, String);

/// Items a report keeps per group (the count goes on).
pub const GROUP_ITEMS: usize = 64;

/// Lines of each `debugPrintfEXT` the text report shows.
pub const TEXT_PRINTS: usize = 32;

/// Groups a report prints (all of them are in the JSON).
pub(crate) const TEXT_GROUPS: usize = 40;

/// The comparison of a kernel's run on the model (and a device).
#[derive(Clone, Debug)]
pub struct Report {
    /// the kernel's name
    pub kernel: String,
    /// the reconvergence model
    pub mode: Mode,
    /// subgroup size
    pub subgroup_size: u32,
    /// workgroup counts
    pub workgroups: [u32; 3],
    /// invocations run
    pub invocations: u64,
    /// lane-instructions the model executed
    pub lane_instructions: u64,
    /// per buffer
    pub buffers: Vec<BufferReport>,
    /// the findings, grouped (every group, however many occurrences)
    pub findings: Vec<Finding>,
    /// group of each (kind, buffer, explanation)
    pub(crate) index: std::collections::HashMap<GroupOf, usize>,
    /// a device was compared
    pub device: bool,
    /// the tolerance used for inexact elements
    pub tolerance: Tolerance,
    /// which findings fail the run beyond those that always do
    pub policy: FailPolicy,
}

impl Report {
    /// Adds `count` occurrences with `items` to the group (kind, buffer, why).
    pub(crate) fn add_group(
        &mut self,
        kind: FindingKind,
        buffer: Option<(u32, u32, u32)>,
        line: Option<u32>,
        why: String,
        items: &[String],
        count: u64,
    ) {
        let key = (kind, buffer, why);
        let i = match self.index.get(&key) {
            Some(i) => *i,
            None => {
                self.findings.push(Finding {
                    kind,
                    buffer,
                    line,
                    why: key.2.clone(),
                    items: Vec::new(),
                    count: 0,
                });
                self.index.insert(key, self.findings.len() - 1);
                self.findings.len() - 1
            }
        };
        let g = &mut self.findings[i];
        g.count += count;
        for it in items {
            if g.items.len() < GROUP_ITEMS {
                g.items.push(it.clone());
            }
        }
    }

    /// Occurrences of findings in all.
    /// Occurrences of findings (the lines `debugPrintfEXT` printed are not findings of the run).
    pub fn findings_total(&self) -> u64 {
        self.findings
            .iter()
            .filter(|f| f.kind != FindingKind::Print)
            .map(|f| f.count)
            .sum()
    }

    /// Occurrences that fail the run.
    pub fn failing(&self) -> u64 {
        self.findings
            .iter()
            .filter(|f| f.kind.fails(self.policy))
            .map(|f| f.count)
            .sum()
    }

    /// Model and device agree and nothing undefined or racy reached a buffer, and there was no
    /// race, divergent barrier or out-of-bounds access. Order-dependent elements (an atomic's
    /// returned value, and what it decides) are explained, not failures: the program asked for an
    /// order the device picks; a spin-wait, and with `allow_same_value_races` a race whose sides
    /// store the same value, are warnings ([`FailPolicy`]).
    pub fn ok(&self) -> bool {
        self.failing() == 0
    }

    /// The summary for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} invocations ({}×{}×{} workgroups), subgroup size {}, {} reconvergence; {} lane-instructions on the model",
            self.kernel,
            self.invocations,
            self.workgroups[0],
            self.workgroups[1],
            self.workgroups[2],
            self.subgroup_size,
            self.mode,
            self.lane_instructions
        );
        let mut rows = vec![[
            "buffer",
            "type",
            "elements",
            "exact",
            "inexact",
            "undefined",
            "order-dep.",
            "racy",
            if self.device {
                "model ≠ device"
            } else {
                "(no device)"
            },
        ]
        .map(String::from)
        .to_vec()];
        for b in &self.buffers {
            rows.push(vec![
                b.name.clone(),
                b.dtype.to_string(),
                b.elements.to_string(),
                b.exact.to_string(),
                b.inexact.to_string(),
                b.undefined.to_string(),
                b.order_dependent.to_string(),
                b.racy.to_string(),
                if self.device {
                    b.mismatches.to_string()
                } else {
                    "-".into()
                },
            ]);
        }
        s += &crate::text::table(&rows);
        // Groups by severity (what fails before what explains), each group once, with its count
        // and its first elements; every group is in the JSON.
        s += &self.prints_text();
        let mut order: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.kind != FindingKind::Print)
            .collect();
        order.sort_by_key(|f| f.kind);
        if !order.is_empty() {
            s += "\nfindings:\n";
        }
        for f in order.iter().take(TEXT_GROUPS) {
            let where_ = match f.buffer {
                Some((set, binding, element)) => format!(
                    "{} ",
                    self.buffers
                        .iter()
                        .find(|b| (b.set, b.binding, b.element) == (set, binding, element))
                        .map(|b| b.name.clone())
                        .unwrap_or_else(|| descriptor_name(set, binding, element))
                ),
                None => String::new(),
            };
            if f.items.is_empty() {
                let times = if f.count > 1 {
                    format!(" ({} times)", f.count)
                } else {
                    String::new()
                };
                let _ = writeln!(s, "  [{}] {}{}{times}", f.kind.name(), where_, f.why);
            } else {
                let shown: Vec<&str> = f.items.iter().take(4).map(|h| h.as_str()).collect();
                let more = if f.count > shown.len() as u64 {
                    format!(" and {} more", f.count - shown.len() as u64)
                } else {
                    String::new()
                };
                if f.buffer.is_some() {
                    let _ = writeln!(
                        s,
                        "  [{}] {}{}{more} ← {}",
                        f.kind.name(),
                        where_,
                        shown.join(", "),
                        f.why
                    );
                } else {
                    let _ = writeln!(
                        s,
                        "  [{}] {} — {}{more}",
                        f.kind.name(),
                        f.why,
                        shown.join("; ")
                    );
                }
            }
        }
        if order.len() > TEXT_GROUPS {
            let _ = writeln!(
                s,
                "  … {} more groups of findings (see --json)",
                order.len() - TEXT_GROUPS
            );
        }
        let _ = writeln!(
            s,
            "result: {}",
            if self.ok() {
                match (self.device, self.findings_total() > 0) {
                    (true, false) => "PASS (model and device agree; nothing undefined reached a buffer)",
                    (false, false) => "PASS (model only; nothing undefined reached a buffer)",
                    (true, true) => "PASS (model and device agree where the order of atomics does not decide; the findings above are explained or warnings; nothing undefined reached a buffer)",
                    (false, true) => "PASS (model only; the findings above are explained or warnings; nothing undefined reached a buffer)",
                }
            } else {
                "FAIL"
            }
        );
        s
    }

    /// What `debugPrintfEXT` printed on the model, each line with its invocation, per
    /// instruction in the order of the source ([`TEXT_PRINTS`] lines each; all kept in the JSON).
    fn prints_text(&self) -> String {
        let mut s = String::new();
        let mut prints: Vec<&Finding> = self
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Print)
            .collect();
        prints.sort_by_key(|f| f.line);
        for f in prints {
            let _ = writeln!(
                s,
                "{} ({} line{}):",
                f.why,
                f.count,
                if f.count == 1 { "" } else { "s" }
            );
            for it in f.items.iter().take(TEXT_PRINTS) {
                let _ = writeln!(s, "  {it}");
            }
            let shown = f.items.len().min(TEXT_PRINTS) as u64;
            if f.count > shown {
                let _ = writeln!(
                    s,
                    "  … {} more (the first {} in the JSON)",
                    f.count - shown,
                    f.items.len()
                );
            }
        }
        s
    }

    /// The JSON report (issue 9 §5's shape).
    pub fn json(&self) -> serde_json::Value {
        json!({
            "kernel": self.kernel,
            "mode": self.mode.name(),
            "subgroup_size": self.subgroup_size,
            "workgroups": self.workgroups,
            "invocations": self.invocations,
            "lane_instructions": self.lane_instructions,
            "device": self.device,
            "tolerance": {"rel": self.tolerance.rel, "abs": self.tolerance.abs},
            "ok": self.ok(),
            "buffers": self.buffers.iter().map(|b| json!({
                "set": b.set, "binding": b.binding, "element": b.element, "name": b.name, "type": b.dtype.name(), "elements": b.elements,
                "exact": b.exact, "inexact": b.inexact, "undefined": b.undefined,
                "order_dependent": b.order_dependent, "racy": b.racy, "mismatches": b.mismatches,
            })).collect::<Vec<_>>(),
            "findings": self.findings.iter().map(|f| json!({
                "kind": f.kind.name(), "set": f.buffer.map(|b| b.0), "binding": f.buffer.map(|b| b.1),
                "element": f.buffer.map(|b| b.2),
                "line": f.line, "why": f.why, "count": f.count, "items": f.items,
                "fails": f.kind.fails(self.policy),
            })).collect::<Vec<_>>(),
            "findings_total": self.findings_total(),
            "strict": self.policy.spin_waits,
            "same_value_races_fail": !self.policy.allow_same_value_races,
        })
    }
}
