//! The inputs the docs show for each operation, and the search that finds every undefined case.
//!
//! Only *inputs* are chosen here (subgroup size, active lanes, lane values, arguments); every result
//! on a page comes from [`crate::model::evaluate`]. The inputs are derived from the op's catalogue
//! entry (category, argument kinds, value types), so a new operation gets tables without new code
//! here; a few ops get an extra, hand-picked illustration (the spec's worked examples, NaN handling).

use crate::model::{
    evaluate, ArgKind, Args, BinOp, Category, LaneArg, LaneMask, ModelError, Op, OpCall, OpInfo,
    Outcome, Reason, ResultKind, ScalarType, SubgroupSize, Value, ValueType,
};

/// One evaluation to show: an operation with its subgroup size, active lanes, lane values and
/// arguments. Evaluate it with [`Example::evaluate`]; reproduce it with [`Example::command`].
#[derive(Clone, Debug)]
pub struct Example {
    /// The catalogue entry.
    pub op: &'static OpInfo,
    /// The subgroup size.
    pub size: SubgroupSize,
    /// The active lanes.
    pub active: LaneMask,
    /// The value type (`None` for ops without a value operand).
    pub ty: Option<ValueType>,
    /// One value per lane (empty for ops without a value operand).
    pub values: Vec<Value>,
    /// The arguments besides the value.
    pub args: Args,
}

/// An example with the heading and the sentence the page shows above its table.
#[derive(Clone, Debug)]
pub struct Illustration {
    /// The table's heading, e.g. "Full subgroup".
    pub title: String,
    /// What to look at, if anything needs saying.
    pub note: Option<String>,
    /// The inputs.
    pub example: Example,
}

/// One way an operation's result can be undefined, with an example that the model evaluates to it.
#[derive(Clone, Debug)]
pub struct UndefinedCase {
    /// [`Reason::key`] of the case.
    pub key: &'static str,
    /// An example in which lane [`UndefinedCase::lane`] is undefined for this reason.
    pub example: Example,
    /// The first lane undefined for this reason.
    pub lane: u32,
    /// The model's reason for that lane.
    pub reason: Reason,
    /// Index into [`illustrations`] when one of the op's illustrations already shows the case.
    pub shown_in: Option<usize>,
}

/// Digits of pi: small, varied values whose sums, products, minima and bit patterns are easy to check.
const PI_DIGITS: [u32; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];

/// The subgroup size an op is shown at: 8, or 16 where clusters or rotations need room to show.
pub fn default_size(op: &OpInfo) -> SubgroupSize {
    let n = match op.category {
        Category::Clustered | Category::Rotate => 16,
        Category::Basic
        | Category::Vote
        | Category::Ballot
        | Category::Arithmetic
        | Category::Shuffle
        | Category::ShuffleRelative
        | Category::Quad => 8,
    };
    SubgroupSize::new(n).expect("8 and 16 are valid subgroup sizes")
}

/// The divergent active mask used on every page: lanes 0, 3 and 5 inactive at size 8
/// (`0xd6`), and a mix with one lane inactive per cluster of 4 or more at size 16 (`0xb7d6`).
pub fn divergent_mask(size: SubgroupSize) -> LaneMask {
    let m: u128 = match size.get() {
        1 => 0x1,
        2 => 0x2,
        4 => 0x6,
        8 => 0xd6,
        16 => 0xb7d6,
        n => {
            // Repeat the 16-lane pattern.
            let mut m = 0u128;
            for k in 0..n / 16 {
                m |= 0xb7d6 << (16 * k);
            }
            m
        }
    };
    LaneMask(m)
}

fn u32s(values: impl IntoIterator<Item = u32>) -> (Option<ValueType>, Vec<Value>) {
    (
        Some(ValueType::U32),
        values.into_iter().map(Value::u32).collect(),
    )
}

fn bools(values: impl IntoIterator<Item = bool>) -> (Option<ValueType>, Vec<Value>) {
    (
        Some(ValueType::BOOL),
        values.into_iter().map(Value::bool).collect(),
    )
}

fn f32s(values: impl IntoIterator<Item = f32>) -> (Option<ValueType>, Vec<Value>) {
    (
        Some(ValueType::scalar(ScalarType::F32)),
        values.into_iter().map(|x| Value::of([x])).collect(),
    )
}

/// The lane values an op is shown with: booleans for the bool ops, digits of pi for reductions,
/// `100 + lane` for everything that moves values (so a result names the lane it came from).
fn default_values(op: &OpInfo, size: SubgroupSize) -> (Option<ValueType>, Vec<Value>) {
    let lanes = 0..size.get();
    match op.op {
        // Lane 3 (inactive in the divergent mask) is the odd one out.
        Op::All => bools(lanes.map(|l| l != 3)),
        Op::Any => bools(lanes.map(|l| l == 3)),
        Op::AllEqual => u32s(lanes.map(|l| if l == 3 { 9 } else { 5 })),
        Op::Ballot => bools(
            lanes.map(|l| [true, false, true, true, false, true, false, true][l as usize % 8]),
        ),
        Op::Arithmetic(..) | Op::Clustered(_) => u32s(lanes.map(|l| PI_DIGITS[l as usize % 16])),
        Op::Broadcast
        | Op::BroadcastFirst
        | Op::Shuffle
        | Op::ShuffleXor
        | Op::ShuffleUp
        | Op::ShuffleDown
        | Op::QuadBroadcast
        | Op::QuadSwap(_)
        | Op::Rotate
        | Op::ClusteredRotate => u32s(lanes.map(|l| 100 + l)),
        Op::Elect
        | Op::SubgroupSize
        | Op::InvocationId
        | Op::LaneMask(_)
        | Op::NumSubgroups
        | Op::SubgroupId
        | Op::InverseBallot
        | Op::BallotBitExtract
        | Op::BallotBitCount(_)
        | Op::BallotFindLsb
        | Op::BallotFindMsb => (None, Vec::new()),
    }
}

fn default_args(op: &OpInfo, size: SubgroupSize) -> Args {
    let n = size.get();
    let mut a = Args::default();
    for &kind in op.args {
        match kind {
            ArgKind::Id { uniform: true } => a.id = Some(LaneArg::Uniform(2.min(n - 1))),
            ArgKind::Id { uniform: false } => {
                a.id = Some(LaneArg::PerLane((0..n).map(|l| n - 1 - l).collect()))
            }
            ArgKind::QuadIndex => a.id = Some(LaneArg::Uniform(1)),
            ArgKind::Mask => a.mask = Some(LaneArg::Uniform(1)),
            ArgKind::Delta { .. } => {
                // The rotate proposal's example rotates by 2.
                let d = if op.op == Op::Rotate { 2 } else { 1 };
                a.delta = Some(LaneArg::Uniform(d))
            }
            ArgKind::Cluster => a.cluster = Some(4.min(n as u64)),
            ArgKind::Index => a.index = Some(LaneArg::Uniform(2.min(n - 1))),
            ArgKind::Ballot => {
                // Bits 0,2,4,5,7 — and for the counts and searches bit 8 too, which lies above a
                // subgroup of 8 and must be ignored (GL_KHR_shader_subgroup.txt, 3.8, ballot bits).
                let search = op.op == Op::BallotFindLsb || op.op == Op::BallotFindMsb;
                let b: u128 = if search {
                    0x1b4 // the lowest set bit is not bit 0
                } else if op.result == ResultKind::Uint {
                    0x1b5 // the bit counts
                } else {
                    0xb5
                };
                a.ballot = Some(crate::model::Ballot(b));
            }
            ArgKind::Workgroup => {}
        }
    }
    a
}

impl Example {
    /// The op's full-subgroup example: its default size, every lane active, default values and arguments.
    pub fn full(op: &'static OpInfo) -> Example {
        Example::at_size(op, default_size(op))
    }

    /// The default example at another subgroup size.
    pub fn at_size(op: &'static OpInfo, size: SubgroupSize) -> Example {
        let (ty, values) = default_values(op, size);
        Example {
            op,
            size,
            active: size.full_mask(),
            ty,
            values,
            args: default_args(op, size),
        }
    }

    /// The same example with other active lanes.
    pub fn with_active(mut self, active: LaneMask) -> Example {
        self.active = active;
        self
    }

    /// The validated call.
    pub fn call(&self) -> Result<OpCall, ModelError> {
        OpCall::new(self.op, self.size, self.args.clone())
    }

    /// Each lane's outcome, as the model evaluates it.
    pub fn evaluate(&self) -> Result<Vec<Outcome>, ModelError> {
        evaluate(&self.call()?, self.active, &self.values)
    }

    /// The `lockstep eval` arguments that reproduce this example (without the program name).
    pub fn argv(&self) -> Vec<String> {
        let mut v = vec![
            "eval".to_string(),
            self.op.name.clone(),
            "--size".into(),
            self.size.to_string(),
        ];
        if let Some(t) = self.ty
            && t != ValueType::U32
        {
            v.extend(["--type".into(), t.to_string()]);
        }
        if self.active != self.size.full_mask() {
            v.extend(["--active".into(), self.active.to_string()]);
        }
        if !self.values.is_empty() {
            let s: Vec<String> = self.values.iter().map(|x| x.to_string()).collect();
            v.extend(["--values".into(), s.join(",")]);
        }
        let a = &self.args;
        for (flag, arg) in [
            ("--id", &a.id),
            ("--mask", &a.mask),
            ("--delta", &a.delta),
            ("--index", &a.index),
        ] {
            if let Some(x) = arg {
                v.extend([flag.to_string(), x.to_string()]);
            }
        }
        if let Some(c) = a.cluster {
            v.extend(["--cluster".into(), c.to_string()]);
        }
        if let Some(b) = a.ballot {
            v.extend(["--ballot".into(), format!("0x{:x}", b.0)]);
        }
        v
    }

    /// The command line that reproduces this example.
    pub fn command(&self) -> String {
        let mut s = "lockstep".to_string();
        for a in self.argv() {
            s.push(' ');
            s.push_str(&a);
        }
        s
    }

    /// The settings in one line: `size 8 · type u32 · delta 1 · active 0xd6 (lanes 1, 2, 4, 6, 7)`.
    pub fn settings(&self) -> String {
        let mut parts = vec![format!("size {}", self.size)];
        if let Some(t) = self.ty {
            parts.push(format!("type {t} (`{}`)", t.glsl()));
        }
        let a = &self.args;
        for (name, arg) in [
            ("id", &a.id),
            ("mask", &a.mask),
            ("delta", &a.delta),
            ("index", &a.index),
        ] {
            match arg {
                Some(LaneArg::Uniform(x)) => parts.push(format!("{name} {x}")),
                Some(LaneArg::PerLane(_)) => parts.push(format!("{name} per lane (row `{name}`)")),
                None => {}
            }
        }
        if let Some(c) = a.cluster {
            parts.push(format!("cluster size {c}"));
        }
        if let Some(b) = a.ballot {
            parts.push(format!("ballot 0x{:x}", b.0));
        }
        if self.active == self.size.full_mask() {
            parts.push("all lanes active".into());
        } else {
            let lanes: Vec<String> = self.active.iter().map(|l| l.to_string()).collect();
            parts.push(format!(
                "active {} (lane{} {})",
                self.active,
                if lanes.len() == 1 { "" } else { "s" },
                lanes.join(", ")
            ));
        }
        parts.join(" · ")
    }
}

/// The illustrations of an operation: a full subgroup, a divergent one (same inputs, lanes
/// inactive), and for some ops an extra one (the spec's worked example, NaN handling).
/// Workgroup built-ins (`num_subgroups`, `subgroup_id`) have none: their page shows layouts instead.
pub fn illustrations(op: &'static OpInfo) -> Vec<Illustration> {
    if op.is_workgroup_level() {
        return Vec::new();
    }
    let full = Example::full(op);
    let size = full.size;
    let div = full.clone().with_active(divergent_mask(size));
    let inactive: Vec<String> = size
        .full_mask()
        .minus(div.active)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let mut v = vec![
        Illustration {
            title: "Full subgroup".into(),
            note: full_note(op),
            example: full,
        },
        Illustration {
            title: "Divergent subgroup".into(),
            note: Some(format!(
                "The same inputs with lanes {} inactive, as inside a branch they did not take.",
                inactive.join(", ")
            )),
            example: div,
        },
    ];
    v.extend(extra_illustrations(op));
    v
}

fn full_note(op: &OpInfo) -> Option<String> {
    let s = match op.op {
        Op::Rotate => {
            "The example of vk_rotate_proposal.adoc (Problem Statement): in a subgroup of 16, \
            a rotation by 2 gives lane 0 the value of lane 2 and lane 14 the value of lane 0."
        }
        Op::BallotBitCount(_) => {
            "Bit 8 of the ballot lies above gl_SubgroupSize (8) and is not counted \
            (GL_KHR_shader_subgroup.txt, 3.8: bits beyond the subgroup are ignored)."
        }
        Op::BallotFindLsb | Op::BallotFindMsb => {
            "Bit 8 of the ballot lies above gl_SubgroupSize (8) and is \
            ignored (GL_KHR_shader_subgroup.txt, 3.8)."
        }
        Op::Arithmetic(_, crate::model::Scan::Exclusive) => {
            "The first active lane gets the identity I() \
            (GL_KHR_shader_subgroup.txt, 3.8, identity table)."
        }
        Op::LaneMask(_) => "Results are uvec4 bit masks, shown as one hex number (lane i = bit i).",
        Op::Elect
        | Op::SubgroupSize
        | Op::InvocationId
        | Op::NumSubgroups
        | Op::SubgroupId
        | Op::All
        | Op::Any
        | Op::AllEqual
        | Op::Ballot
        | Op::InverseBallot
        | Op::BallotBitExtract
        | Op::Broadcast
        | Op::BroadcastFirst
        | Op::Arithmetic(_, crate::model::Scan::Reduce | crate::model::Scan::Inclusive)
        | Op::Shuffle
        | Op::ShuffleXor
        | Op::ShuffleUp
        | Op::ShuffleDown
        | Op::Clustered(_)
        | Op::QuadBroadcast
        | Op::QuadSwap(_)
        | Op::ClusteredRotate => return None,
    };
    Some(s.to_string())
}

fn extra_illustrations(op: &'static OpInfo) -> Vec<Illustration> {
    let mut v = Vec::new();
    if op.op == Op::Clustered(BinOp::Add) {
        // GL_KHR_shader_subgroup.txt, 3.8: the worked subgroupClusteredAdd example.
        let size = SubgroupSize::new(8).expect("valid size");
        let (ty, values) = f32s([42.0, 13.0, -56.0, 0.0, 128.0, -1.0, 7.0, 3.5]);
        v.push(Illustration {
            title: "Worked example (GL_KHR_shader_subgroup.txt, 3.8)".into(),
            note: Some(
                "The spec's example: gl_SubgroupSize 8, cluster size 2, every lane active; the spec \
                 gives the result [55.0, 55.0, -56.0, -56.0, 127.0, 127.0, 10.5, 10.5]."
                    .into(),
            ),
            example: Example {
                op,
                size,
                active: size.full_mask(),
                ty,
                values,
                args: Args {
                    cluster: Some(2),
                    ..Args::default()
                },
            },
        });
    }
    if matches!(
        op.op,
        Op::Arithmetic(BinOp::Min | BinOp::Max, _) | Op::Clustered(BinOp::Min | BinOp::Max)
    ) {
        let size = default_size(op);
        let nan = f32::NAN;
        let pattern = [
            nan, 2.5, nan, -1.0, 4.0, nan, 0.5, 3.0, nan, nan, nan, nan, 1.5, -2.0, nan, 8.0,
        ];
        let (ty, values) = f32s(pattern.into_iter().take(size.lanes()));
        v.push(Illustration {
            title: "Floats with NaNs".into(),
            note: Some(
                "A NaN operand is ignored and the other value chosen; where every value a lane's \
                 result uses is NaN, the result is undefined (GL_KHR_shader_subgroup.txt, 3.8)."
                    .into(),
            ),
            example: Example {
                op,
                size,
                active: size.full_mask(),
                ty,
                values,
                args: default_args(op, size),
            },
        });
    }
    v
}

/// Candidate inputs for the undefined-case search, simplest first: the op's own size, then the tiny
/// subgroups (2 and 1 lanes); default values, then float values with NaNs and signed zeros; the
/// default arguments, then arguments at and past the subgroup's edge; all lanes, then fewer.
fn candidates(op: &'static OpInfo) -> Vec<Example> {
    let mut out = Vec::new();
    let sizes = [default_size(op).get(), 2, 1];
    for n in sizes {
        let size = SubgroupSize::new(n as u64).expect("valid size");
        let base = Example::at_size(op, size);
        let mut value_sets = vec![(base.ty, base.values.clone())];
        if op.has_value() && op.accepts(ValueType::scalar(ScalarType::F32)) {
            let nan = f32::NAN;
            let lanes = 0..n;
            value_sets.push(f32s(lanes.clone().map(|_| nan)));
            value_sets.push(f32s(lanes.clone().map(|l| {
                if l % 2 == 0 {
                    nan
                } else {
                    l as f32
                }
            })));
            value_sets.push(f32s(lanes.map(|l| if l % 2 == 0 { 0.0 } else { -0.0 })));
        }
        let mut arg_sets = vec![Args::default()];
        for &kind in op.args {
            let variants: Vec<Args> = arg_variants(kind, &base.args, n);
            arg_sets = arg_sets
                .iter()
                .flat_map(|a| variants.iter().map(move |v| merge(a, v)))
                .collect();
        }
        let full = size.full_mask();
        let mut masks = vec![
            full,
            divergent_mask(size),
            full.minus(LaneMask(1 << (n - 1))),
            full.minus(LaneMask(1)),
            LaneMask(1),
        ];
        masks.retain(|m| !m.is_empty());
        masks.dedup();
        for (ty, values) in &value_sets {
            for args in &arg_sets {
                for &active in &masks {
                    out.push(Example {
                        op,
                        size,
                        active,
                        ty: *ty,
                        values: values.clone(),
                        args: args.clone(),
                    });
                }
            }
        }
    }
    out
}

fn arg_variants(kind: ArgKind, default: &Args, n: u32) -> Vec<Args> {
    let one = |f: &dyn Fn(&mut Args)| {
        let mut a = Args::default();
        f(&mut a);
        a
    };
    match kind {
        ArgKind::Id { uniform } => {
            let mut v = vec![one(&|a| a.id = default.id.clone())];
            v.push(one(&|a| a.id = Some(LaneArg::Uniform(n))));
            if uniform {
                v.push(one(&|a| a.id = Some(LaneArg::Uniform(3.min(n - 1)))));
            }
            v
        }
        ArgKind::QuadIndex => (0..4)
            .map(|i| one(&|a| a.id = Some(LaneArg::Uniform(i))))
            .collect(),
        ArgKind::Mask => vec![
            one(&|a| a.mask = default.mask.clone()),
            one(&|a| a.mask = Some(LaneArg::Uniform(n))),
        ],
        ArgKind::Delta { .. } => vec![
            one(&|a| a.delta = default.delta.clone()),
            one(&|a| a.delta = Some(LaneArg::Uniform(n))),
        ],
        ArgKind::Index => vec![
            one(&|a| a.index = default.index.clone()),
            one(&|a| a.index = Some(LaneArg::Uniform(n))),
        ],
        ArgKind::Ballot => {
            let mut v = vec![one(&|a| a.ballot = default.ballot)];
            if n < 128 {
                // Only a bit above the subgroup: as good as no bit at all (the case to show).
                v.push(one(&|a| a.ballot = Some(crate::model::Ballot(1 << n))));
            }
            v.push(one(&|a| a.ballot = Some(crate::model::Ballot(0))));
            v
        }
        ArgKind::Cluster => vec![one(&|a| a.cluster = default.cluster)],
        ArgKind::Workgroup => vec![Args::default()],
    }
}

fn merge(a: &Args, b: &Args) -> Args {
    Args {
        id: b.id.clone().or_else(|| a.id.clone()),
        mask: b.mask.clone().or_else(|| a.mask.clone()),
        delta: b.delta.clone().or_else(|| a.delta.clone()),
        index: b.index.clone().or_else(|| a.index.clone()),
        cluster: b.cluster.or(a.cluster),
        ballot: b.ballot.or(a.ballot),
    }
}

/// Every way the op's result can be undefined, each with the first example (in the order of
/// [`illustrations`], then a search over sizes, values, arguments and active masks) that the model
/// evaluates to it, in the order of [`ReasonDoc::order`](crate::model::ReasonDoc::order).
pub fn undefined_cases(op: &'static OpInfo) -> Vec<UndefinedCase> {
    let mut found: Vec<UndefinedCase> = Vec::new();
    let mut record = |ex: &Example, shown_in: Option<usize>| {
        let Ok(out) = ex.evaluate() else { return };
        for (lane, o) in out.iter().enumerate() {
            if let Outcome::Undefined(r) = o
                && !found.iter().any(|c| c.key == r.key())
            {
                found.push(UndefinedCase {
                    key: r.key(),
                    example: ex.clone(),
                    lane: lane as u32,
                    reason: *r,
                    shown_in,
                });
            }
        }
    };
    for (i, ill) in illustrations(op).iter().enumerate() {
        record(&ill.example, Some(i));
    }
    if !op.is_workgroup_level() {
        for ex in candidates(op) {
            record(&ex, None);
        }
    }
    found.sort_by_key(|c| c.reason.doc().order);
    found
}
