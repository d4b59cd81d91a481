//! Comparing what the device wrote with what the model says, lane by lane.
//!
//! For every subgroup the device reports (grouped by the subgroupBroadcastFirst key), the model is
//! fed the device's own active ballot, the lanes' values and arguments, and its outcome is compared:
//! bit for bit where the spec demands it, by numeric equality for float min/max (±0 are both correct
//! minima), within the order-independent error bound for float add/mul (see [`tolerance`]).
//! Undefined lanes are not compared; what the device returned there is classified and counted.

use crate::conform::cases::Batch;
use crate::conform::glsl::{
    case, component_bits, input, out, Entry, KernelSpec, CASE_WORDS, IN_WORDS, MARKER, OUT_WORDS,
    SENTINEL,
};
use crate::model::{
    evaluate, info, ArgSources, Args, Ballot, BinOp, Exactness, LaneArg, LaneMask, LaneOrder, Op,
    OpCall, Outcome, Reason, ResultKind, Scalar, ScalarType, Scan, SubgroupSize, Value, ValueType,
    WorkgroupLayout, WorkgroupShape,
};
use std::collections::{BTreeMap, HashMap};

/// Identifies one row of the results: op, type, subgroup size, workgroup shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKey {
    /// catalogue name
    pub op: String,
    /// value type (`-` for ops without a value)
    pub ty: String,
    /// subgroup size
    pub size: u32,
    /// workgroup shape
    pub shape: [u32; 3],
}

/// Counts for one row.
#[derive(Clone, Debug, Default)]
pub struct RowStats {
    /// subgroups compared
    pub cases: u64,
    /// subgroups where every lane agreed
    pub passed: u64,
    /// subgroups with at least one disagreeing lane
    pub failed: u64,
    /// lanes compared (defined results)
    pub lane_checks: u64,
    /// failed subgroups whose active inputs held a NaN (known deviations may be NaN-specific)
    pub failed_with_nan: u64,
}

/// One lane where model and device disagree, with everything needed to reproduce it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Mismatch {
    /// catalogue name
    pub op: String,
    /// value type
    pub ty: String,
    /// subgroup size
    pub size: u32,
    /// workgroup shape
    pub workgroup: [u32; 3],
    /// workgroup index in the dispatch
    pub workgroup_index: u32,
    /// gl_SubgroupID the device reported
    pub subgroup_id: u32,
    /// the lane (gl_SubgroupInvocationID)
    pub lane: u32,
    /// what the model says (value, or the rule that was broken)
    pub expected: String,
    /// what the device returned
    pub actual: String,
    /// expected bits (hex words)
    pub expected_bits: String,
    /// actual bits (hex words)
    pub actual_bits: String,
    /// why it is a mismatch (bits differ, outside tolerance, unwritten result, …)
    pub why: String,
    /// the subgroup as a `lockstep eval …` command line
    pub eval: String,
    /// the kernel's name
    pub kernel: String,
    /// the GLSL statement that ran
    pub glsl: String,
}

/// What a device returned in undefined lanes of one (op, reason).
#[derive(Clone, Debug, Default)]
pub struct UndefStats {
    /// undefined lanes seen
    pub lanes: u64,
    /// pattern → lanes
    pub patterns: BTreeMap<&'static str, u64>,
    /// most frequent returned values (text) → lanes, capped
    pub values: HashMap<String, u64>,
}

/// Everything learnt from one or more batches.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// per row
    pub rows: BTreeMap<RowKey, RowStats>,
    /// first mismatches (capped per row)
    pub mismatches: Vec<Mismatch>,
    /// per (op, reason key)
    pub undefined: BTreeMap<(String, &'static str), UndefStats>,
    /// workgroup layouts the device used: (shape, layout name) → workgroups
    pub layouts: BTreeMap<(String, String), u64>,
    /// lanes compared
    pub lane_checks: u64,
}

/// How many mismatches are kept per row (all are counted).
pub(crate) const MISMATCHES_PER_ROW: usize = 3;

impl Stats {
    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: Stats) {
        for (k, v) in o.rows {
            let r = self.rows.entry(k).or_default();
            r.cases += v.cases;
            r.passed += v.passed;
            r.failed += v.failed;
            r.lane_checks += v.lane_checks;
            r.failed_with_nan += v.failed_with_nan;
        }
        for m in o.mismatches {
            let same = self
                .mismatches
                .iter()
                .filter(|x| {
                    x.op == m.op && x.ty == m.ty && x.size == m.size && x.workgroup == m.workgroup
                })
                .count();
            if same < MISMATCHES_PER_ROW {
                self.mismatches.push(m);
            }
        }
        for (k, v) in o.undefined {
            let u = self.undefined.entry(k).or_default();
            u.lanes += v.lanes;
            for (p, n) in v.patterns {
                *u.patterns.entry(p).or_default() += n;
            }
            for (val, n) in v.values {
                if u.values.len() < 64 || u.values.contains_key(&val) {
                    *u.values.entry(val).or_default() += n;
                }
            }
        }
        for (k, v) in o.layouts {
            *self.layouts.entry(k).or_default() += v;
        }
        self.lane_checks += o.lane_checks;
    }
}

/// One invocation's output record.
#[derive(Clone, Copy, Debug)]
struct Rec {
    written: u32,
    subgroup_id: u32,
    lane: u32,
    key: u32,
    size: u32,
    active: u128,
    /// the result's words: low halves of its components, then high halves
    result: [u32; 8],
    num_subgroups: u32,
}

fn rec(words: &[u32]) -> Rec {
    let word4 = |at: usize| [words[at], words[at + 1], words[at + 2], words[at + 3]];
    let mut result = [0u32; 8];
    result[..4].copy_from_slice(&words[out::RESULT_LO..out::RESULT_LO + 4]);
    result[4..].copy_from_slice(&words[out::RESULT_HI..out::RESULT_HI + 4]);
    Rec {
        written: words[out::WRITTEN],
        subgroup_id: words[out::SUBGROUP_ID],
        lane: words[out::LANE],
        key: words[out::KEY],
        size: words[out::SIZE],
        active: Ballot::from_words(word4(out::ACTIVE)).0,
        result,
        num_subgroups: words[out::NUM_SUBGROUPS],
    }
}

/// A value of `ty` from low words at `lo` and high words at `hi` of `words`.
fn value_from_words(ty: ValueType, words: &[u32], lo: usize, hi: usize) -> Value {
    let bits: Vec<u64> = (0..ty.components())
        .map(|c| component_bits(words, lo, hi, c))
        .collect();
    Value::from_bits(ty, &bits)
}

fn result_value(kind: ResultKind, ty: Option<ValueType>, w: &[u32; 8]) -> Value {
    match kind {
        ResultKind::SameAsValue => value_from_words(ty.unwrap_or(ValueType::U32), w, 0, 4),
        ResultKind::Bool => Value::bool(w[0] != 0),
        ResultKind::Uint => Value::u32(w[0]),
        ResultKind::Uvec4 => Value::ballot(Ballot::from_words([w[0], w[1], w[2], w[3]])),
    }
}

fn hex_words(v: &Value) -> String {
    let parts: Vec<String> = v.bits().iter().map(|b| format!("0x{b:x}")).collect();
    parts.join(":")
}

/// Machine epsilon of a float type.
pub(crate) fn epsilon(s: ScalarType) -> f64 {
    match s {
        ScalarType::F16 => f64::powi(2.0, -10),
        ScalarType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

fn smallest_normal(s: ScalarType) -> f64 {
    match s {
        ScalarType::F16 => f64::powi(2.0, -14),
        ScalarType::F32 => f32::MIN_POSITIVE as f64,
        _ => f64::MIN_POSITIVE,
    }
}

/// The tolerance for a float add/mul over the `terms` values one lane's result combines.
///
/// Any evaluation order of a sum of n terms has |error| ≤ (n−1)·ε·Σ|xᵢ| (a product: relative
/// (n−1)·ε), so model and device — each within that of the exact value — differ by at most twice
/// that; plus n·(smallest normal) for denormals a device may flush to zero. See docs/conformance.md.
pub fn tolerance(op: BinOp, s: ScalarType, terms: &[f64], model: f64) -> f64 {
    let n = terms.len().max(1) as f64;
    let eps = epsilon(s);
    let flush = n * smallest_normal(s);
    match op {
        BinOp::Mul => 2.0 * (n - 1.0) * eps * model.abs() * 1.001 + flush,
        _ => 2.0 * (n - 1.0) * eps * terms.iter().map(|x| x.abs()).sum::<f64>() + flush,
    }
}

/// The lanes whose values an arithmetic lane result combines.
fn terms_lanes(op: Op, active: LaneMask, lane: u32, cluster: u32) -> LaneMask {
    match op {
        Op::Arithmetic(_, Scan::Reduce) => active,
        Op::Arithmetic(_, Scan::Inclusive) => active.and(LaneMask::first(lane + 1)),
        Op::Arithmetic(_, Scan::Exclusive) => active.and(LaneMask::first(lane)),
        Op::Clustered(_) => {
            let base = lane & !(cluster - 1);
            LaneMask(active.0 & (LaneMask::first(cluster).0 << base))
        }
        // Not folds (only folds are compared within a tolerance): every active lane.
        Op::Elect
        | Op::SubgroupSize
        | Op::InvocationId
        | Op::LaneMask(_)
        | Op::NumSubgroups
        | Op::SubgroupId
        | Op::All
        | Op::Any
        | Op::AllEqual
        | Op::Ballot
        | Op::InverseBallot
        | Op::BallotBitExtract
        | Op::BallotBitCount(_)
        | Op::BallotFindLsb
        | Op::BallotFindMsb
        | Op::Broadcast
        | Op::BroadcastFirst
        | Op::Shuffle
        | Op::ShuffleXor
        | Op::ShuffleUp
        | Op::ShuffleDown
        | Op::QuadBroadcast
        | Op::QuadSwap(_)
        | Op::Rotate
        | Op::ClusteredRotate => active,
    }
}

/// Compares a float add/mul result component-wise within [`tolerance`].
fn within_tolerance(
    e: Entry,
    ty: ValueType,
    inputs: &[Value],
    terms: LaneMask,
    model: &Value,
    dev: &Value,
) -> bool {
    let Some(b) = e.op.binop() else {
        return model == dev;
    };
    for c in 0..ty.components() {
        let m = model.component_f64(c);
        let d = dev.component_f64(c);
        if m.is_nan() || d.is_nan() || m.is_infinite() || d.is_infinite() {
            if !(m.is_nan() && d.is_nan() || m == d) {
                return false;
            }
            continue;
        }
        let xs: Vec<f64> = terms
            .iter()
            .map(|l| inputs[l as usize].component_f64(c))
            .collect();
        if (m - d).abs() > tolerance(b, ty.scalar_type(), &xs, m) {
            return false;
        }
    }
    true
}

fn identity_value(op: Op, ty: ValueType) -> Option<Value> {
    let b = op.binop()?;
    macro_rules! id {
        ($t:ty) => {{
            let one = Scalar::to_bits(<$t as Scalar>::identity(b));
            Some(Value::from_bits(ty, &[one; 4]))
        }};
    }
    match ty.scalar_type() {
        ScalarType::Bool => id!(bool),
        ScalarType::I8 => id!(i8),
        ScalarType::U8 => id!(u8),
        ScalarType::I16 => id!(i16),
        ScalarType::U16 => id!(u16),
        ScalarType::I32 => id!(i32),
        ScalarType::U32 => id!(u32),
        ScalarType::I64 => id!(i64),
        ScalarType::U64 => id!(u64),
        ScalarType::F16 => id!(half::f16),
        ScalarType::F32 => id!(f32),
        ScalarType::F64 => id!(f64),
    }
}

/// The `lockstep eval …` line that reproduces one subgroup.
fn eval_line(call: &OpCall, active: LaneMask, ty: Option<ValueType>, values: &[Value]) -> String {
    let info = call.info();
    let mut s = format!("lockstep eval {} --size {}", info.name, call.size());
    if let Some(t) = ty {
        s += &format!(" --type {t}");
        let vals: Vec<String> = values
            .iter()
            .map(|v| {
                if t.scalar_type().is_float() {
                    (0..t.components())
                        .map(|c| format!("0x{:x}", v.component_bits(c)))
                        .collect::<Vec<_>>()
                        .join(":")
                } else {
                    v.to_string()
                }
            })
            .collect();
        s += &format!(" --values {}", vals.join(","));
    }
    s += &format!(" --active {active}");
    let a = call.args();
    for (name, v) in [
        ("id", &a.id),
        ("mask", &a.mask),
        ("delta", &a.delta),
        ("index", &a.index),
    ] {
        if let Some(v) = v {
            s += &format!(" --{name} {v}");
        }
    }
    if let Some(c) = a.cluster {
        s += &format!(" --cluster {c}");
    }
    if let Some(b) = a.ballot {
        s += &format!(" --ballot 0x{:x}", b.0);
    }
    s
}

/// Everything fixed for one batch.
pub struct BatchCtx<'a> {
    /// the kernel
    pub spec: &'a KernelSpec,
    /// its name
    pub kernel: String,
    /// subgroup size the pipeline requested (or the device default)
    pub size: SubgroupSize,
}

/// Compares one batch's output words with the model.
pub fn compare_batch(ctx: &BatchCtx<'_>, batch: &Batch, out_words: &[u32]) -> Stats {
    use rayon::prelude::*;
    let inv = batch.shape.invocations() as usize;
    (0..batch.workgroups as usize)
        .into_par_iter()
        .fold(Stats::default, |mut st, wg| {
            compare_workgroup(ctx, batch, out_words, wg, inv, &mut st);
            st
        })
        .reduce(Stats::default, |mut a, b| {
            a.merge(b);
            a
        })
}

fn row_key(e: Entry, size: u32, shape: WorkgroupShape) -> RowKey {
    RowKey {
        op: info(e.op).name.clone(),
        ty: e.ty.map(|t| t.to_string()).unwrap_or_else(|| "-".into()),
        size,
        shape: [shape.x, shape.y, shape.z],
    }
}

/// Where a comparison runs: the batch, the result row, the batch entry and the workgroup.
#[derive(Clone, Copy)]
struct Site<'a> {
    ctx: &'a BatchCtx<'a>,
    key: &'a RowKey,
    e: Entry,
    wg: usize,
}

/// [`fail`] for a failure with no expected/actual value (a structural problem).
fn fail_plain(st: &mut Stats, site: Site<'_>, subgroup_id: u32, lane: u32, why: String) {
    fail(st, site, subgroup_id, lane, None, None, why, String::new());
}

#[allow(clippy::too_many_arguments)]
fn fail(
    st: &mut Stats,
    site: Site<'_>,
    subgroup_id: u32,
    lane: u32,
    expected: Option<&Value>,
    actual: Option<&Value>,
    why: String,
    eval: String,
) {
    let Site { ctx, key, e, wg } = site;
    let row: Vec<&Mismatch> = st
        .mismatches
        .iter()
        .filter(|m| {
            m.op == key.op && m.ty == key.ty && m.size == key.size && m.workgroup == key.shape
        })
        .collect();
    // Keep the first failing lane of the first few subgroups of each row.
    if row.len() >= MISMATCHES_PER_ROW
        || row
            .iter()
            .any(|m| m.workgroup_index == wg as u32 && m.subgroup_id == subgroup_id)
    {
        return;
    }
    st.mismatches.push(Mismatch {
        op: key.op.clone(),
        ty: key.ty.clone(),
        size: key.size,
        workgroup: key.shape,
        workgroup_index: wg as u32,
        subgroup_id,
        lane,
        expected: expected
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into()),
        actual: actual.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
        expected_bits: expected.map(hex_words).unwrap_or_default(),
        actual_bits: actual.map(hex_words).unwrap_or_default(),
        why,
        eval,
        kernel: ctx.kernel.clone(),
        glsl: crate::conform::glsl::op_statement(e),
    });
}

/// One workgroup of a batch as the device returned it.
struct Workgroup<'a> {
    /// one output record per invocation (local index order)
    recs: Vec<Rec>,
    /// the batch's input words
    inputs: &'a [u32],
    /// index of the workgroup's first invocation in the batch
    base: usize,
    /// the device's subgroups: invocations (local indices) by subgroupBroadcastFirst key
    groups: BTreeMap<u32, Vec<usize>>,
}

impl Workgroup<'_> {
    /// Invocation `k`'s input words.
    fn input(&self, k: usize) -> &[u32] {
        let at = (self.base + k) * IN_WORDS;
        &self.inputs[at..at + IN_WORDS]
    }

    fn predicate(&self, k: usize) -> bool {
        self.input(k)[input::PREDICATE] != 0
    }
}

/// What one subgroup's lanes held: which invocation each lane is, their values and arguments.
struct Lanes {
    /// invocation (local index) at each lane, `None` for a lane no invocation reported
    lane_of: Vec<Option<usize>>,
    /// value per lane (zero where no invocation; empty without a value operand)
    values: Vec<Value>,
    /// per-lane argument (zero where no invocation)
    largs: Vec<u32>,
    /// gl_SubgroupID the first invocation reported
    subgroup_id: u32,
}

/// A defined lane's comparison and an undefined lane's observation, counted per subgroup.
#[derive(Default)]
struct Tally {
    lane_checks: u64,
    /// (reason, what the device returned, the lane's own value, the source lane's value)
    undefined: Vec<(Reason, Value, Option<Value>, Option<Value>)>,
}

fn compare_workgroup(
    ctx: &BatchCtx<'_>,
    batch: &Batch,
    out_words: &[u32],
    wg: usize,
    inv: usize,
    st: &mut Stats,
) {
    let case = &batch.cases[wg * CASE_WORDS..(wg + 1) * CASE_WORDS];
    let Some(e) = ctx.spec.entry(case[case::OPCODE]) else {
        return; // not an opcode of the kernel: the batch was built for another
    };
    let key = row_key(e, ctx.size.get(), batch.shape);
    let site = Site {
        ctx,
        key: &key,
        e,
        wg,
    };
    let w = read_workgroup(batch, out_words, wg, inv);
    st.rows.entry(key.clone()).or_default().cases += w.groups.len() as u64;
    if e.info().is_workgroup_level() {
        let ok = check_workgroup_builtins(site, batch.shape, &w.recs, &w.groups, st);
        let row = st.rows.entry(key).or_default();
        if ok {
            row.passed += w.groups.len() as u64;
        } else {
            row.failed += w.groups.len() as u64;
        }
        return;
    }
    let ballot = Ballot::from_words([
        case[case::BALLOT],
        case[case::BALLOT + 1],
        case[case::BALLOT + 2],
        case[case::BALLOT + 3],
    ]);
    let (mut failed, mut failed_nan) = (0u64, 0u64);
    let mut tally = Tally::default();
    for members in w.groups.values() {
        let lanes = match place_lanes(site, &w, members, st) {
            Some(l) => l,
            None => {
                failed += 1;
                continue;
            }
        };
        let (sets, mut bad) = active_sets(site, &w, &lanes, st);
        for (active, executing) in sets {
            let args = Args::from_sources(
                e.info(),
                &ArgSources {
                    uniform: case[case::UNIFORM],
                    per_lane: LaneArg::PerLane(lanes.largs.clone()),
                    cluster: e.cluster.unwrap_or(1) as u64,
                    ballot,
                },
            );
            bad |= !check_lanes(
                site,
                &w,
                &lanes,
                LaneMask(active),
                &executing,
                args,
                &mut tally,
                st,
            );
        }
        if bad {
            failed += 1;
            failed_nan += u64::from(held_nan(&w, &lanes));
        }
    }
    let row = st.rows.entry(key.clone()).or_default();
    row.failed += failed;
    row.passed += w.groups.len() as u64 - failed;
    row.lane_checks += tally.lane_checks;
    row.failed_with_nan += failed_nan;
    st.lane_checks += tally.lane_checks;
    record_undefined(&key, e, tally.undefined, st);
}

/// The workgroup's records, grouped into the device's subgroups by their key.
fn read_workgroup<'a>(batch: &'a Batch, out_words: &[u32], wg: usize, inv: usize) -> Workgroup<'a> {
    let recs: Vec<Rec> = (0..inv)
        .map(|k| {
            let g = wg * inv + k;
            rec(&out_words[g * OUT_WORDS..(g + 1) * OUT_WORDS])
        })
        .collect();
    let mut groups: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (k, r) in recs.iter().enumerate() {
        groups.entry(r.key).or_default().push(k);
    }
    Workgroup {
        recs,
        inputs: &batch.inputs,
        base: wg * inv,
        groups,
    }
}

/// Places one subgroup's invocations on their lanes (checking the size and lane ids the device
/// reported) and reads their values and arguments; `None` (failures recorded) if the placement
/// is impossible.
fn place_lanes(
    site: Site<'_>,
    w: &Workgroup<'_>,
    members: &[usize],
    st: &mut Stats,
) -> Option<Lanes> {
    let n = site.ctx.size.get();
    let mut lane_of: Vec<Option<usize>> = vec![None; n as usize];
    let mut bad = false;
    for &k in members {
        let r = w.recs[k];
        let structural = if r.size != n {
            Some(format!(
                "device reported gl_SubgroupSize {} but the pipeline required {n}",
                r.size
            ))
        } else if r.lane >= n {
            Some(format!(
                "gl_SubgroupInvocationID {} >= gl_SubgroupSize {n}",
                r.lane
            ))
        } else if lane_of[r.lane as usize].is_some() {
            Some(format!(
                "two invocations of one subgroup report lane {}",
                r.lane
            ))
        } else {
            None
        };
        match structural {
            Some(why) => {
                fail_plain(st, site, r.subgroup_id, r.lane, why);
                bad = true;
            }
            None => lane_of[r.lane as usize] = Some(k),
        }
    }
    if bad {
        return None;
    }
    // Lane values and per-lane arguments (lanes with no invocation: zero).
    let values: Vec<Value> = match site.e.ty {
        Some(t) => lane_of
            .iter()
            .map(|k| match k {
                Some(k) => value_from_words(t, w.input(*k), input::VALUE_LO, input::VALUE_HI),
                None => Value::from_bits(t, &[0; 4]),
            })
            .collect(),
        None => Vec::new(),
    };
    let largs = lane_of
        .iter()
        .map(|k| k.map(|k| w.input(k)[input::LANE_ARG]).unwrap_or(0))
        .collect();
    Some(Lanes {
        lane_of,
        values,
        largs,
        subgroup_id: w.recs[members[0]].subgroup_id,
    })
}

/// The device's active set at the operation, per executing lane (normally one set), after
/// checking each lane's marker and ballot against its predicate. Returns the sets and whether a
/// check failed.
fn active_sets(
    site: Site<'_>,
    w: &Workgroup<'_>,
    lanes: &Lanes,
    st: &mut Stats,
) -> (BTreeMap<u128, Vec<u32>>, bool) {
    let full = site.ctx.size.full_mask().0;
    let sg = lanes.subgroup_id;
    let mut sets: BTreeMap<u128, Vec<u32>> = BTreeMap::new();
    let mut bad = false;
    for (l, k) in lanes.lane_of.iter().enumerate() {
        let (l, Some(k)) = (l as u32, *k) else {
            continue;
        };
        let r = w.recs[k];
        let why = match (w.predicate(k), r.written) {
            (true, MARKER) if r.active >> l & 1 == 0 || r.active & !full != 0 => Some(format!(
                "the ballot of active lanes 0x{:x} is impossible for lane {l}",
                r.active
            )),
            (true, MARKER) => {
                sets.entry(r.active).or_default().push(l);
                None
            }
            (true, SENTINEL) => Some(
                "unwritten result: the lane's predicate was true but its output still holds the \
                 sentinel"
                    .to_string(),
            ),
            (true, other) => Some(format!("corrupt marker 0x{other:x}")),
            (false, SENTINEL) => None,
            (false, _) => Some("an invocation whose predicate was false wrote a result".into()),
        };
        if let Some(why) = why {
            fail_plain(st, site, sg, l, why);
            bad = true;
        }
    }
    (sets, bad)
}

/// Evaluates the model on one active set and compares the lanes that executed with it. Returns
/// false if a defined lane disagrees (or the model rejects the call).
#[allow(clippy::too_many_arguments)]
fn check_lanes(
    site: Site<'_>,
    w: &Workgroup<'_>,
    lanes: &Lanes,
    active: LaneMask,
    executing: &[u32],
    args: Args,
    tally: &mut Tally,
    st: &mut Stats,
) -> bool {
    let e = site.e;
    let info = e.info();
    let ty = e.ty;
    let model = OpCall::new(info, site.ctx.size, args)
        .and_then(|call| evaluate(&call, active, &lanes.values).map(|o| (call, o)));
    let (call, outcomes) = match model {
        Ok(m) => m,
        Err(err) => {
            fail_plain(
                st,
                site,
                lanes.subgroup_id,
                executing[0],
                format!("internal: {err}"),
            );
            return false;
        }
    };
    let exact = info.exactness(ty);
    let mut ok = true;
    for &l in executing {
        let k = lanes.lane_of[l as usize].expect("an executing lane has an invocation");
        let dev = result_value(info.result, ty, &w.recs[k].result);
        match outcomes[l as usize] {
            Outcome::Inactive => {}
            Outcome::Defined(want) => {
                tally.lane_checks += 1;
                let same = match exact {
                    Exactness::Bits => want == dev,
                    Exactness::MinMaxFloat => (0..want.ty().components())
                        .all(|c| want.component_f64(c) == dev.component_f64(c)),
                    Exactness::Tolerance => within_tolerance(
                        e,
                        ty.unwrap_or(ValueType::U32),
                        &lanes.values,
                        terms_lanes(e.op, active, l, e.cluster.unwrap_or(1)),
                        &want,
                        &dev,
                    ),
                };
                if !same {
                    let why = match exact {
                        Exactness::Bits => "bits differ",
                        Exactness::MinMaxFloat => "values differ (min/max: compared as numbers)",
                        Exactness::Tolerance => "outside the error bound for any summation order",
                    };
                    fail(
                        st,
                        site,
                        lanes.subgroup_id,
                        l,
                        Some(&want),
                        Some(&dev),
                        why.to_string(),
                        eval_line(&call, active, ty, &lanes.values),
                    );
                    ok = false;
                }
            }
            Outcome::Undefined(reason) => {
                let own = ty.map(|_| lanes.values[l as usize]);
                let src = match reason {
                    Reason::SourceInactive { source } => {
                        ty.and_then(|_| lanes.values.get(source as usize).copied())
                    }
                    Reason::SourceOutOfRange { .. }
                    | Reason::DeltaExceedsId { .. }
                    | Reason::AllNaN { .. }
                    | Reason::NoBitSet
                    | Reason::IndexOutOfRange { .. }
                    | Reason::AllEqualWithNaN
                    | Reason::AllEqualSignedZeros
                    | Reason::UnpinnedTangle { .. } => None,
                };
                tally.undefined.push((reason, dev, own, src));
            }
        }
    }
    ok
}

/// Did an executing lane of a failed subgroup hold a NaN? (Known deviations may be NaN-specific.)
fn held_nan(w: &Workgroup<'_>, lanes: &Lanes) -> bool {
    lanes.lane_of.iter().enumerate().any(|(l, k)| {
        k.is_some_and(|k| w.predicate(k))
            && lanes
                .values
                .get(l)
                .is_some_and(|v| (0..v.ty().components()).any(|c| v.component_f64(c).is_nan()))
    })
}

/// Classifies what the device returned in undefined lanes (own value, the source's value, zero,
/// the identity, other) and keeps the most common values.
fn record_undefined(
    key: &RowKey,
    e: Entry,
    undefined: Vec<(Reason, Value, Option<Value>, Option<Value>)>,
    st: &mut Stats,
) {
    let ident = e.ty.and_then(|t| identity_value(e.op, t));
    for (reason, dev, own, src) in undefined {
        let u = st
            .undefined
            .entry((key.op.clone(), reason.key()))
            .or_default();
        u.lanes += 1;
        let zero = dev.bits().iter().all(|b| *b == 0);
        let pattern = if own == Some(dev) {
            "own_value"
        } else if src == Some(dev) {
            "source_value"
        } else if zero {
            "zero"
        } else if ident == Some(dev) {
            "identity"
        } else {
            "other"
        };
        *u.patterns.entry(pattern).or_default() += 1;
        let text = format!("{} {}", dev.ty(), dev);
        if u.values.len() < 64 || u.values.contains_key(&text) {
            *u.values.entry(text).or_default() += 1;
        }
    }
}

/// gl_NumSubgroups / gl_SubgroupID: the device's placement must be a valid one (every (subgroup,
/// lane) used once, ids below gl_NumSubgroups, gl_NumSubgroups uniform and equal to the number of
/// subgroups seen, one id per subgroup); which of the model's layouts it matches is recorded.
fn check_workgroup_builtins(
    site: Site<'_>,
    shape: WorkgroupShape,
    recs: &[Rec],
    groups: &BTreeMap<u32, Vec<usize>>,
    st: &mut Stats,
) -> bool {
    let Site { ctx, e, .. } = site;
    let mut ok = true;
    let num = recs[0].num_subgroups;
    let mut ids = std::collections::BTreeSet::new();
    for members in groups.values() {
        let id = recs[members[0]].subgroup_id;
        for &k in members {
            let r = recs[k];
            let problem = if r.num_subgroups != num {
                Some(format!(
                    "gl_NumSubgroups is {} here but {num} in invocation 0",
                    r.num_subgroups
                ))
            } else if r.subgroup_id != id {
                Some(format!(
                    "gl_SubgroupID {} differs within one subgroup (first lane says {id})",
                    r.subgroup_id
                ))
            } else if r.written == MARKER
                && r.result[0] != if e.op == Op::NumSubgroups { num } else { id }
            {
                Some(format!(
                    "{} returned {} but the built-in variable read {}",
                    info(e.op).glsl,
                    r.result[0],
                    if e.op == Op::NumSubgroups { num } else { id }
                ))
            } else {
                None
            };
            if let Some(why) = problem {
                fail_plain(st, site, r.subgroup_id, r.lane, why);
                ok = false;
            }
        }
        if !ids.insert(id) {
            fail_plain(
                st,
                site,
                id,
                0,
                format!("gl_SubgroupID {id} is used by two subgroups"),
            );
            ok = false;
        }
        if id >= num {
            fail_plain(
                st,
                site,
                id,
                0,
                format!("gl_SubgroupID {id} >= gl_NumSubgroups {num}"),
            );
            ok = false;
        }
    }
    if num as usize != groups.len() {
        fail_plain(
            st,
            site,
            0,
            0,
            format!(
                "gl_NumSubgroups is {num} but the workgroup ran in {} subgroups",
                groups.len()
            ),
        );
        ok = false;
    }
    // Which model layout reproduces the device's (subgroup id, lane) for every invocation?
    let layout = LaneOrder::all()
        .into_iter()
        .filter_map(|l| WorkgroupLayout::new(shape, ctx.size, l).ok())
        .find(|w| {
            recs.iter().enumerate().all(|(i, r)| {
                let p = w.placement(i as u32);
                p.subgroup == r.subgroup_id && p.lane == r.lane
            })
        })
        .map(|w| w.layout().to_string())
        .unwrap_or_else(|| "none of the model's layouts".to_string());
    *st.layouts.entry((shape.to_string(), layout)).or_default() += 1;
    ok
}
