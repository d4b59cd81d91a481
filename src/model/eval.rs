//! The semantics: each operation's rule, written once over typed lanes, and the three ways to run it
//! (one subgroup with typed values, one subgroup with dynamic [`Value`]s, rayon batches).
//!
//! Rules are grouped by shape. *Gathers* (broadcasts, shuffles, quad, rotate) are a source-lane
//! function: the result is the source's value if the source is an active lane of the subgroup, and
//! undefined (with the reason) otherwise. *Reductions and scans* (arithmetic, clustered) fold the
//! active lanes in increasing lane order. *Votes*, *ballots* and *basic* ops are closed forms.

use crate::model::call::OpCall;
use crate::model::catalogue::{MaskKind, Op, ResultKind, Scan};
use crate::model::error::ModelError;
use crate::model::outcome::{Outcome, Reason};
use crate::model::params::{Ballot, LaneMask};
use crate::model::scalar::{BinOp, Elem, Scalar};
use crate::model::types::{ScalarType, TypeClass, ValueType};
use crate::model::value::Value;
use rayon::prelude::*;

/// Where results go. The evaluator calls exactly one method per active lane and none for inactive lanes.
///
/// ```
/// use lockstep::model::{lookup, run, Args, Ballot, LaneArg, LaneMask, OpCall, Reason, Sink, SubgroupSize};
/// // A sink that only counts undefined lanes — no allocation per lane.
/// #[derive(Default)]
/// struct Count { undefined: u32 }
/// impl Sink<[u32; 1]> for Count {
///     fn value(&mut self, _: u32, _: [u32; 1]) {}
///     fn boolean(&mut self, _: u32, _: bool) {}
///     fn uint(&mut self, _: u32, _: u32) {}
///     fn ballot(&mut self, _: u32, _: Ballot) {}
///     fn undefined(&mut self, _: u32, _: Reason) { self.undefined += 1 }
/// }
/// let s = SubgroupSize::new(8).unwrap();
/// let call = OpCall::new(lookup("shuffle_down").unwrap(), s,
///     Args { delta: Some(LaneArg::Uniform(2)), ..Args::default() }).unwrap();
/// let values: Vec<[u32; 1]> = (0..8).map(|i| [i]).collect();
/// let mut count = Count::default();
/// run(&call, s.full_mask(), &values, &mut count);
/// assert_eq!(count.undefined, 2); // lanes 6 and 7 read past lane 7
/// ```
pub trait Sink<E> {
    /// A defined value of the operand's own type.
    fn value(&mut self, lane: u32, v: E);
    /// A defined bool.
    fn boolean(&mut self, lane: u32, b: bool);
    /// A defined uint.
    fn uint(&mut self, lane: u32, x: u32);
    /// A defined uvec4.
    fn ballot(&mut self, lane: u32, b: Ballot);
    /// An undefined result.
    fn undefined(&mut self, lane: u32, why: Reason);
    /// A vector result of which only the components in the bit mask `components` are undefined
    /// (a component-wise min or max whose values are all NaN in those components), `v` holding
    /// every component; `why` names the first. A sink that keeps one outcome per lane (the
    /// default) takes the whole lane as undefined.
    fn partly_undefined(&mut self, lane: u32, v: E, components: u32, why: Reason) {
        let _ = (v, components);
        self.undefined(lane, why)
    }
}

/// Runs `call` on one subgroup whose active lanes are `active`, with typed lane values `input`
/// (one per lane; empty for ops without a value operand). Values of inactive lanes are never read.
///
/// The caller guarantees `input.len() == size` for value ops and that the type is accepted
/// ([`evaluate`] and [`evaluate_batch`] check both).
#[inline]
pub fn run<S: Scalar, const N: usize, K: Sink<[S; N]>>(
    call: &OpCall,
    active: LaneMask,
    input: &[[S; N]],
    sink: &mut K,
) {
    let size = call.size();
    let n = size.get();
    let active = active.and(size.full_mask());
    let arg = call.lane_arg();
    match call.op() {
        // ---- gathers: result = value of the source lane (rules in `gather_source`) ----
        Op::Broadcast
        | Op::BroadcastFirst
        | Op::Shuffle
        | Op::ShuffleXor
        | Op::ShuffleUp
        | Op::ShuffleDown
        | Op::QuadBroadcast
        | Op::QuadSwap(_)
        | Op::Rotate
        | Op::ClusteredRotate => gather_each(call, active, input, sink),
        // ---- reductions and scans over active lanes ----
        Op::Arithmetic(b, scan) => fold_op(b, scan, active, input, sink),
        Op::Clustered(b) => {
            let c = call.cluster().get();
            let cmask = LaneMask::first(c).0;
            for k in 0..n / c {
                let set = LaneMask(active.0 & (cmask << (k * c)));
                if !set.is_empty() {
                    fold_op(b, Scan::Reduce, set, input, sink);
                }
            }
        }
        // ---- votes ----
        Op::All | Op::Any => {
            let truth = active
                .iter()
                .filter(|&l| input[l as usize][0].to_bits() != 0)
                .count();
            let r = if call.op() == Op::All {
                truth == active.count() as usize
            } else {
                truth > 0
            };
            active.iter().for_each(|l| sink.boolean(l, r));
        }
        Op::AllEqual => all_equal(active, input, sink),
        // ---- ballots ----
        Op::Ballot => {
            let mut b = 0u128;
            for l in active.iter() {
                if input[l as usize][0].to_bits() != 0 {
                    b |= 1 << l;
                }
            }
            active.iter().for_each(|l| sink.ballot(l, Ballot(b)));
        }
        Op::InverseBallot => {
            let b = call.ballot();
            active.iter().for_each(|l| sink.boolean(l, b.bit(l)));
        }
        Op::BallotBitExtract => {
            let b = call.ballot();
            for l in active.iter() {
                let i = arg.at(l);
                if i >= n {
                    sink.undefined(l, Reason::IndexOutOfRange { index: i, size: n });
                } else {
                    sink.boolean(l, b.bit(i));
                }
            }
        }
        Op::BallotBitCount(_) => {
            let b = call.ballot().0;
            for l in active.iter() {
                let m = b & ballot_bits(call, l).map_or(0, |m| m.0);
                sink.uint(l, m.count_ones());
            }
        }
        Op::BallotFindLsb | Op::BallotFindMsb => {
            // the bits FindLSB/MSB read are the same for every lane (`ballot_bits`)
            let b = LaneMask(call.ballot().0 & ballot_bits(call, 0).map_or(0, |m| m.0));
            let r = if call.op() == Op::BallotFindLsb {
                b.lowest()
            } else {
                b.highest()
            };
            for l in active.iter() {
                match r {
                    Some(x) => sink.uint(l, x),
                    None => sink.undefined(l, Reason::NoBitSet),
                }
            }
        }
        // ---- basic ----
        Op::Elect => {
            let first = active.lowest();
            active
                .iter()
                .for_each(|l| sink.boolean(l, Some(l) == first));
        }
        Op::SubgroupSize => active.iter().for_each(|l| sink.uint(l, n)),
        Op::InvocationId => active.iter().for_each(|l| sink.uint(l, l)),
        Op::LaneMask(k) => {
            let full = size.full_mask().0;
            for l in active.iter() {
                let m = match k {
                    MaskKind::Eq => 1u128 << l,
                    MaskKind::Ge => full & !LaneMask::first(l).0,
                    MaskKind::Gt => full & !LaneMask::first(l + 1).0,
                    MaskKind::Le => LaneMask::first(l + 1).0,
                    MaskKind::Lt => LaneMask::first(l).0,
                };
                sink.ballot(l, Ballot(m));
            }
        }
        // Workgroup built-ins never reach here: OpCall::new rejects them (see model::workgroup).
        Op::NumSubgroups | Op::SubgroupId => {}
    }
}

/// The lane a gather op reads for `lane`, or why its result is undefined whichever lanes are
/// active; the caller still checks that the source lane is active. `first` is the lowest active
/// lane (subgroupBroadcastFirst). `None` for ops that are not gathers.
///
/// ```
/// use lockstep::model::{gather_source, lookup, Args, LaneArg, OpCall, Reason, SubgroupSize};
/// let s = SubgroupSize::new(8).unwrap();
/// let up = OpCall::new(lookup("shuffle_up").unwrap(), s,
///     Args { delta: Some(LaneArg::Uniform(2)), ..Args::default() }).unwrap();
/// assert_eq!(gather_source(&up, 5, 0), Some(Ok(3)));
/// assert_eq!(gather_source(&up, 1, 0), Some(Err(Reason::DeltaExceedsId { delta: 2, id: 1 })));
/// ```
#[inline(always)]
pub fn gather_source(call: &OpCall, lane: u32, first: u32) -> Option<Result<u32, Reason>> {
    source_of(call.op(), call, lane, first)
}

/// What a gather op gives `lane` when the lanes of `active` run it: `Ok(source)`, the lane whose
/// value it reads, or why the result is undefined — [`gather_source`]'s rules, then the source's
/// being active. The rule [`run`] follows, for a caller that moves the values itself. `None` for
/// ops that are not gathers.
///
/// ```
/// use lockstep::model::{gather_result, lookup, Args, LaneArg, LaneMask, OpCall, Reason, SubgroupSize};
/// let s = SubgroupSize::new(8).unwrap();
/// let down = OpCall::new(lookup("shuffle_down").unwrap(), s,
///     Args { delta: Some(LaneArg::Uniform(1)), ..Args::default() }).unwrap();
/// assert_eq!(gather_result(&down, LaneMask::first(8), 2), Some(Ok(3)));
/// assert_eq!(gather_result(&down, LaneMask::first(3), 2), Some(Err(Reason::SourceInactive { source: 3 })));
/// ```
pub fn gather_result(call: &OpCall, active: LaneMask, lane: u32) -> Option<Result<u32, Reason>> {
    let active = active.and(call.size().full_mask());
    let first = active.lowest().unwrap_or(0);
    gather_source(call, lane, first).map(|s| resolve(s, active))
}

/// [`gather_source`] with the operation given apart from `call` (it is `call.op()`), so that a
/// caller that matched on it already runs one arm (a loop per operation, [`gather_each`]).
#[inline(always)]
fn source_of(op: Op, call: &OpCall, lane: u32, first: u32) -> Option<Result<u32, Reason>> {
    let n = call.size().get();
    let arg = call.lane_arg();
    let l = lane;
    Some(match op {
        // GL_KHR_shader_subgroup 8.18: the lane whose id is `id`; undefined if id >= size.
        Op::Broadcast => in_range(arg.at(0) as u64, n),
        // The active lane with the lowest id.
        Op::BroadcastFirst => Ok(first),
        // The lane `id` (per lane); undefined if >= size.
        Op::Shuffle => in_range(arg.at(l) as u64, n),
        // The lane id ^ mask; undefined if >= size.
        Op::ShuffleXor => in_range((l ^ arg.at(l)) as u64, n),
        // The lane id - delta; undefined if delta > id.
        Op::ShuffleUp => {
            let d = arg.at(l);
            if d > l {
                Err(Reason::DeltaExceedsId { delta: d, id: l })
            } else {
                Ok(l - d)
            }
        }
        // The lane id + delta (no 32-bit overflow); undefined if >= size.
        Op::ShuffleDown => in_range(l as u64 + arg.at(l) as u64, n),
        // Lane (id & ~3) + index of the quad.
        Op::QuadBroadcast => in_range(((l & !3) + call.quad_index().get()) as u64, n),
        // Lane id ^ 1, 2 or 3.
        Op::QuadSwap(d) => in_range((l ^ d.xor()) as u64, n),
        // SPV_KHR_subgroup_rotate, with the subgroup or the cluster as the rotation group.
        Op::Rotate => Ok(rotate_source(l, arg.at(0), n)),
        Op::ClusteredRotate => Ok(rotate_source(l, arg.at(0), call.cluster().get())),
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
        | Op::Arithmetic(..)
        | Op::Clustered(_) => return None,
    })
}

/// The active lanes whose *values* the result of `lane` is computed from, for the operations that
/// combine values ([`gather_source`] gives the one lane of a gather): a reduction reads every
/// active lane, an inclusive scan the active lanes up to `lane`, an exclusive scan those before it
/// (GL_KHR_shader_subgroup, 8.19), a clustered operation the active lanes of `lane`'s cluster;
/// votes and ballots read every active lane. `None` for gathers and for operations without a value.
///
/// ```
/// use lockstep::model::{info, value_lanes, Args, BinOp, LaneMask, Op, OpCall, Scan, SubgroupSize};
/// let s = SubgroupSize::new(8).unwrap();
/// let scan = OpCall::new(info(Op::Arithmetic(BinOp::Add, Scan::Exclusive)), s, Args::default()).unwrap();
/// assert_eq!(value_lanes(&scan, 3, LaneMask(0xff)), Some(LaneMask(0b111)));
/// ```
pub fn value_lanes(call: &OpCall, lane: u32, active: LaneMask) -> Option<LaneMask> {
    let below = |l: u32| {
        LaneMask(if l >= 128 {
            u128::MAX
        } else {
            (1u128 << l) - 1
        })
    };
    Some(match call.op() {
        Op::Arithmetic(_, Scan::Inclusive) => active.and(below(lane + 1)),
        Op::Arithmetic(_, Scan::Exclusive) => active.and(below(lane)),
        Op::Arithmetic(_, Scan::Reduce) | Op::All | Op::Any | Op::AllEqual | Op::Ballot => active,
        Op::Clustered(_) => {
            let c = call.cluster().get();
            let start = lane / c * c;
            active.and(below(start + c)).minus(below(start))
        }
        _ => return None,
    })
}

/// The bits of the ballot operand that the result of `lane` is computed from, for the operations
/// that read a ballot (`None` for the others). GL_KHR_shader_subgroup, 8.18: subgroupBallotBitCount,
/// subgroupBallotFindLSB and subgroupBallotFindMSB consider "only the bottom gl_SubgroupSize bits"
/// (SPIR-V: "only the bits in Value required to represent all bits of the group's invocations");
/// subgroupBallotInclusiveBitCount the bits at or below the lane's gl_SubgroupInvocationID,
/// subgroupBallotExclusiveBitCount those below it; subgroupBallotBitExtract bit `index` (none when
/// index >= gl_SubgroupSize: that result is undefined); subgroupInverseBallot the bit at the lane's
/// own id. A bit outside the mask cannot change the result, so an undefined word of the ballot
/// that holds none of them leaves the result defined.
///
/// ```
/// use lockstep::model::{ballot_bits, info, Args, Ballot, LaneMask, Op, OpCall, Scan, SubgroupSize};
/// let s = SubgroupSize::new(8).unwrap();
/// let args = Args { ballot: Some(Ballot(!0)), ..Args::default() };
/// let count = OpCall::new(info(Op::BallotBitCount(Scan::Reduce)), s, args.clone()).unwrap();
/// assert_eq!(ballot_bits(&count, 3), Some(LaneMask(0xff)));
/// let incl = OpCall::new(info(Op::BallotBitCount(Scan::Inclusive)), s, args).unwrap();
/// assert_eq!(ballot_bits(&incl, 3), Some(LaneMask(0b1111)));
/// ```
pub fn ballot_bits(call: &OpCall, lane: u32) -> Option<LaneMask> {
    let low = call.size().full_mask();
    Some(match call.op() {
        Op::BallotBitCount(Scan::Reduce) | Op::BallotFindLsb | Op::BallotFindMsb => low,
        Op::BallotBitCount(Scan::Inclusive) => low.and(LaneMask::first(lane + 1)),
        Op::BallotBitCount(Scan::Exclusive) => low.and(LaneMask::first(lane)),
        Op::BallotBitExtract => {
            let i = call.lane_arg().at(lane);
            if i < call.size().get() {
                LaneMask::EMPTY.with(i)
            } else {
                LaneMask::EMPTY
            }
        }
        Op::InverseBallot => LaneMask::EMPTY.with(lane),
        _ => return None,
    })
}

/// The source lane of a rotation within groups of `g` lanes (SPV_KHR_subgroup_rotate):
/// `((id + delta) & (g - 1)) + (id & !(g - 1))`, with the addition wrapping at 32 bits.
///
/// ```
/// use lockstep::model::rotate_source;
/// // vk_rotate_proposal.adoc: size 16, rotate by 2 — lane 0 reads lane 2, lane 14 reads lane 0.
/// assert_eq!(rotate_source(0, 2, 16), 2);
/// assert_eq!(rotate_source(14, 2, 16), 0);
/// // Clusters of 4: lane 7 (cluster 4..8) rotated by 1 reads lane 4.
/// assert_eq!(rotate_source(7, 1, 4), 4);
/// // The addition wraps at 32 bits.
/// assert_eq!(rotate_source(1, u32::MAX, 8), 0);
/// ```
#[inline(always)]
pub fn rotate_source(lane: u32, delta: u32, g: u32) -> u32 {
    (lane.wrapping_add(delta) & (g - 1)) + (lane & !(g - 1))
}

#[inline(always)]
fn in_range(src: u64, n: u32) -> Result<u32, Reason> {
    if src < n as u64 {
        Ok(src as u32)
    } else {
        Err(Reason::SourceOutOfRange {
            source: src,
            size: n,
        })
    }
}

/// The gathers (every lane's source by [`gather_source`]'s rules), one loop per operation: the
/// operation is a constant in each loop, not matched again for every lane.
#[inline(always)]
fn gather_each<E: Copy, K: Sink<E>>(call: &OpCall, active: LaneMask, input: &[E], sink: &mut K) {
    let first = active.lowest().unwrap_or(0);
    macro_rules! by_op {
        ($($o:ident),*) => {
            match call.op() {
                $(Op::$o => gather(active, input, sink, |l| {
                    source_of(Op::$o, call, l, first).unwrap_or(Ok(l))
                }),)*
                op => gather(active, input, sink, |l| {
                    source_of(op, call, l, first).unwrap_or(Ok(l))
                }),
            }
        };
    }
    by_op!(
        Broadcast,
        BroadcastFirst,
        Shuffle,
        ShuffleXor,
        ShuffleUp,
        ShuffleDown,
        QuadBroadcast,
        Rotate,
        ClusteredRotate
    )
}

fn gather<E: Copy, K: Sink<E>>(
    active: LaneMask,
    input: &[E],
    sink: &mut K,
    src: impl Fn(u32) -> Result<u32, Reason>,
) {
    for l in active.iter() {
        match resolve(src(l), active) {
            Ok(s) => sink.value(l, input[s as usize]),
            Err(r) => sink.undefined(l, r),
        }
    }
}

/// A gather's result for a lane whose source is `src` ([`gather_source`]'s rules): the source's
/// value where that lane is active, undefined otherwise (GL_KHR_shader_subgroup: a value read
/// from an inactive invocation is undefined).
#[inline(always)]
fn resolve(src: Result<u32, Reason>, active: LaneMask) -> Result<u32, Reason> {
    match src {
        Ok(s) if active.has(s) => Ok(s),
        Ok(s) => Err(Reason::SourceInactive { source: s }),
        Err(r) => Err(r),
    }
}

#[inline]
fn fold_op<S: Scalar, const N: usize, K: Sink<[S; N]>>(
    b: BinOp,
    scan: Scan,
    set: LaneMask,
    input: &[[S; N]],
    sink: &mut K,
) {
    // Min/max over floats: a NaN result means every value used was NaN — undefined by the spec.
    let nan_check = S::TYPE.is_float() && matches!(b, BinOp::Min | BinOp::Max);
    macro_rules! go {
        ($f:expr_2021) => {
            fold(set, input, sink, scan, [S::identity(b); N], nan_check, $f)
        };
    }
    match b {
        BinOp::Add => go!(S::add),
        BinOp::Mul => go!(S::mul),
        BinOp::Min => go!(S::min),
        BinOp::Max => go!(S::max),
        BinOp::And => go!(S::and),
        BinOp::Or => go!(S::or),
        BinOp::Xor => go!(S::xor),
    }
}

#[inline(always)]
fn fold<S: Scalar, const N: usize, K: Sink<[S; N]>>(
    set: LaneMask,
    input: &[[S; N]],
    sink: &mut K,
    scan: Scan,
    identity: [S; N],
    nan_check: bool,
    f: impl Fn(S, S) -> S,
) {
    let comb = |a: [S; N], x: [S; N]| -> [S; N] {
        let mut r = a;
        for i in 0..N {
            r[i] = f(a[i], x[i]);
        }
        r
    };
    let mut emit = |l: u32, v: [S; N]| {
        if nan_check && let Some(c) = v.iter().position(|c| c.is_nan()) {
            // GL_KHR_shader_subgroup: min and max are "performed component-wise across the
            // vector", so only the components whose every value is NaN are undefined.
            let nan = v
                .iter()
                .enumerate()
                .filter(|(_, x)| x.is_nan())
                .fold(0u32, |m, (i, _)| m | 1 << i);
            return sink.partly_undefined(l, v, nan, Reason::AllNaN { component: c as u8 });
        }
        sink.value(l, v)
    };
    // Increasing lane order, starting from the first value (not the identity): the spec lists the
    // scans as [x(0), x(0) op x(1), …] and the exclusive scan as [I(), x(0), …].
    let mut acc: Option<[S; N]> = None;
    match scan {
        Scan::Reduce => {
            for l in set.iter() {
                let x = input[l as usize];
                acc = Some(acc.map_or(x, |a| comb(a, x)));
            }
            if let Some(r) = acc {
                set.iter().for_each(|l| emit(l, r));
            }
        }
        Scan::Inclusive => {
            for l in set.iter() {
                let x = input[l as usize];
                let r = acc.map_or(x, |a| comb(a, x));
                acc = Some(r);
                emit(l, r);
            }
        }
        Scan::Exclusive => {
            for l in set.iter() {
                let x = input[l as usize];
                emit(l, acc.unwrap_or(identity));
                acc = Some(acc.map_or(x, |a| comb(a, x)));
            }
        }
    }
}

fn all_equal<S: Scalar, const N: usize, K: Sink<[S; N]>>(
    active: LaneMask,
    input: &[[S; N]],
    sink: &mut K,
) {
    let Some(first) = active.lowest() else { return };
    let x0 = input[first as usize];
    // Per component: every value numerically equal to the first lane's, and any NaN.
    let mut numeric_c = [true; N];
    let mut nan_c = [false; N];
    let mut bitwise = true;
    for l in active.iter() {
        let x = input[l as usize];
        for i in 0..N {
            numeric_c[i] &= x[i].numeric_eq(x0[i]);
            bitwise &= x[i].to_bits() == x0[i].to_bits();
            nan_c[i] |= x[i].is_nan();
        }
    }
    let numeric = numeric_c.iter().all(|&e| e);
    let nan = nan_c.iter().any(|&n| n);
    // A component with no NaN whose values differ as numbers (and so as bits) makes the values
    // unequal under every reading of "equal", whatever the other components hold.
    let differs = (0..N).any(|i| !nan_c[i] && !numeric_c[i]);
    // Integers and bools: every reading of "equal" agrees. Floats: SPIR-V does not say whether
    // OpGroupNonUniformAllEqual uses ordered, unordered (NaN equals anything) or bitwise equality;
    // with a NaN present they give different answers, and signed zeros split numeric from bitwise.
    for l in active.iter() {
        if differs {
            sink.boolean(l, false)
        } else if nan {
            sink.undefined(l, Reason::AllEqualWithNaN)
        } else if numeric != bitwise {
            sink.undefined(l, Reason::AllEqualSignedZeros)
        } else {
            sink.boolean(l, numeric)
        }
    }
}

/// Collects [`Outcome`]s (lanes not written stay inactive).
struct OutcomeSink(Vec<Outcome>);

impl<S: Scalar, const N: usize> Sink<[S; N]> for OutcomeSink {
    fn value(&mut self, lane: u32, v: [S; N]) {
        self.0[lane as usize] = Outcome::Defined(Value::of(v));
    }
    fn boolean(&mut self, lane: u32, b: bool) {
        self.0[lane as usize] = Outcome::Defined(Value::bool(b));
    }
    fn uint(&mut self, lane: u32, x: u32) {
        self.0[lane as usize] = Outcome::Defined(Value::u32(x));
    }
    fn ballot(&mut self, lane: u32, b: Ballot) {
        self.0[lane as usize] = Outcome::Defined(Value::ballot(b));
    }
    fn undefined(&mut self, lane: u32, why: Reason) {
        self.0[lane as usize] = Outcome::Undefined(why);
    }
}

/// Evaluates one subgroup with typed values and returns each lane's [`Outcome`].
///
/// ```
/// use lockstep::model::{evaluate_typed, lookup, Args, LaneArg, LaneMask, OpCall, Outcome, SubgroupSize, Value};
/// let s = SubgroupSize::new(4).unwrap();
/// let call = OpCall::new(lookup("shuffle_down").unwrap(), s,
///     Args { delta: Some(LaneArg::Uniform(1)), ..Args::default() }).unwrap();
/// let out = evaluate_typed(&call, s.full_mask(), &[[10u32], [11], [12], [13]]).unwrap();
/// assert_eq!(out[0], Outcome::Defined(Value::u32(11)));
/// assert!(out[3].is_undefined()); // 3 + 1 >= 4
/// ```
pub fn evaluate_typed<S: Scalar, const N: usize>(
    call: &OpCall,
    active: LaneMask,
    input: &[[S; N]],
) -> Result<Vec<Outcome>, ModelError> {
    check_operands(call, active, <[S; N] as Elem>::VALUE_TYPE, input.len())?;
    let mut sink = OutcomeSink(vec![Outcome::Inactive; call.size().lanes()]);
    run(call, active, input, &mut sink);
    Ok(sink.0)
}

fn check_operands(
    call: &OpCall,
    active: LaneMask,
    ty: ValueType,
    len: usize,
) -> Result<(), ModelError> {
    let size = call.size();
    LaneMask::within(active.0, size)?;
    let info = call.info();
    if info.has_value() {
        if !info.accepts(ty) {
            return Err(ModelError::TypeNotAccepted {
                op: info.name.as_str(),
                ty,
                takes: info.types.describe(),
            });
        }
        if len != size.lanes() {
            return Err(ModelError::WrongLaneCount {
                what: "values",
                size: size.get(),
                got: len,
            });
        }
    }
    Ok(())
}

/// Dispatches a generic function over the 48 (scalar, components) combinations of a [`ValueType`].
macro_rules! per_n {
    ($S:ty, $n:expr_2021, $f:ident, ($($a:expr_2021),*)) => {
        match $n {
            1 => $f::<$S, 1>($($a),*),
            2 => $f::<$S, 2>($($a),*),
            3 => $f::<$S, 3>($($a),*),
            _ => $f::<$S, 4>($($a),*),
        }
    };
}
macro_rules! dispatch_type {
    ($vt:expr_2021, $f:ident, $args:tt) => {
        match $vt.scalar_type() {
            ScalarType::Bool => per_n!(bool, $vt.components(), $f, $args),
            ScalarType::I8 => per_n!(i8, $vt.components(), $f, $args),
            ScalarType::U8 => per_n!(u8, $vt.components(), $f, $args),
            ScalarType::I16 => per_n!(i16, $vt.components(), $f, $args),
            ScalarType::U16 => per_n!(u16, $vt.components(), $f, $args),
            ScalarType::I32 => per_n!(i32, $vt.components(), $f, $args),
            ScalarType::U32 => per_n!(u32, $vt.components(), $f, $args),
            ScalarType::I64 => per_n!(i64, $vt.components(), $f, $args),
            ScalarType::U64 => per_n!(u64, $vt.components(), $f, $args),
            ScalarType::F16 => per_n!(half::f16, $vt.components(), $f, $args),
            ScalarType::F32 => per_n!(f32, $vt.components(), $f, $args),
            ScalarType::F64 => per_n!(f64, $vt.components(), $f, $args),
        }
    };
}

fn evaluate_values<S: Scalar, const N: usize>(
    call: &OpCall,
    active: LaneMask,
    values: &[Value],
) -> Result<Vec<Outcome>, ModelError> {
    let ty = <[S; N] as Elem>::VALUE_TYPE;
    let typed: Vec<[S; N]> = values
        .iter()
        .enumerate()
        .map(|(lane, v)| {
            v.to_typed::<S, N>().ok_or(ModelError::MixedTypes {
                lane,
                expected: ty,
                got: v.ty(),
            })
        })
        .collect::<Result<_, _>>()?;
    evaluate_typed(call, active, &typed)
}

/// Evaluates one subgroup with dynamically typed values: `values` holds one value per lane (all of
/// one type the op takes), or is empty for ops without a value operand.
///
/// ```
/// use lockstep::model::{evaluate, lookup, LaneMask, OpCall, Outcome, SubgroupSize, Value, ValueType};
/// let s = SubgroupSize::new(4).unwrap();
/// let call = OpCall::new(lookup("subgroupInclusiveAdd").unwrap(), s, Default::default()).unwrap();
/// let vals: Vec<Value> = [1u32, 2, 3, 4].map(Value::u32).to_vec();
/// let out = evaluate(&call, LaneMask(0b1011), &vals).unwrap();
/// assert_eq!(out[3], Outcome::Defined(Value::u32(1 + 2 + 4)));
/// assert_eq!(out[2], Outcome::Inactive);
/// ```
pub fn evaluate(
    call: &OpCall,
    active: LaneMask,
    values: &[Value],
) -> Result<Vec<Outcome>, ModelError> {
    let ty = match (values.first(), call.info().types) {
        (_, TypeClass::NoValue) => ValueType::U32,
        (Some(v), _) => v.ty(),
        (None, _) => {
            return Err(ModelError::WrongLaneCount {
                what: "values",
                size: call.size().get(),
                got: 0,
            })
        }
    };
    if call.info().types == TypeClass::NoValue {
        return evaluate_typed::<u32, 1>(call, active, &[]);
    }
    dispatch_type!(ty, evaluate_values, (call, active, values))
}

/// The typed result columns of a batch. Only the column of the op's result kind is filled; it has
/// one entry per lane of every subgroup. Inactive lanes keep what was there; the value in an
/// undefined lane is unspecified (the `undefined` masks say which lanes those are).
///
/// ```
/// use lockstep::model::{lookup, BatchOutput, OpCall, SubgroupSize};
/// let call = OpCall::new(lookup("elect").unwrap(), SubgroupSize::new(4).unwrap(), Default::default()).unwrap();
/// let out = BatchOutput::<[u32; 1]>::for_call(&call, 3);
/// assert_eq!(out.bools.len(), 12); // elect returns bool: only that column is allocated
/// assert!(out.values.is_empty() && out.uints.is_empty());
/// assert_eq!(out.undefined.len(), 3);
/// ```
#[derive(Clone, Debug, Default)]
pub struct BatchOutput<E> {
    /// Results of ops that return the operand's type.
    pub values: Vec<E>,
    /// Results of ops that return `bool`.
    pub bools: Vec<bool>,
    /// Results of ops that return `uint`.
    pub uints: Vec<u32>,
    /// Results of ops that return `uvec4`.
    pub ballots: Vec<Ballot>,
    /// Per subgroup: the lanes whose result is undefined.
    pub undefined: Vec<LaneMask>,
}

impl<S: Scalar, const N: usize> BatchOutput<[S; N]> {
    /// Output columns for `subgroups` subgroups of `call` (only its result column is allocated).
    pub fn for_call(call: &OpCall, subgroups: usize) -> Self {
        let n = subgroups * call.size().lanes();
        let mut o = BatchOutput {
            values: Vec::new(),
            bools: Vec::new(),
            uints: Vec::new(),
            ballots: Vec::new(),
            undefined: vec![LaneMask::EMPTY; subgroups],
        };
        match call.info().result {
            ResultKind::SameAsValue => o.values = vec![[S::from_bits(0); N]; n],
            ResultKind::Bool => o.bools = vec![false; n],
            ResultKind::Uint => o.uints = vec![0; n],
            ResultKind::Uvec4 => o.ballots = vec![Ballot(0); n],
        }
        o
    }
}

struct ColumnSink<'a, E> {
    values: &'a mut [E],
    bools: &'a mut [bool],
    uints: &'a mut [u32],
    ballots: &'a mut [Ballot],
    undefined: LaneMask,
}

impl<'a, S: Scalar, const N: usize> Sink<[S; N]> for ColumnSink<'a, [S; N]> {
    #[inline(always)]
    fn value(&mut self, lane: u32, v: [S; N]) {
        self.values[lane as usize] = v;
    }
    #[inline(always)]
    fn boolean(&mut self, lane: u32, b: bool) {
        self.bools[lane as usize] = b;
    }
    #[inline(always)]
    fn uint(&mut self, lane: u32, x: u32) {
        self.uints[lane as usize] = x;
    }
    #[inline(always)]
    fn ballot(&mut self, lane: u32, b: Ballot) {
        self.ballots[lane as usize] = b;
    }
    #[inline(always)]
    fn undefined(&mut self, lane: u32, _why: Reason) {
        self.undefined = self.undefined.with(lane);
    }
}

/// Evaluates many independent subgroups of the same call in parallel (rayon): subgroup `g` has
/// active lanes `actives[g]` and values `inputs[g*size .. (g+1)*size]` (`inputs` empty for ops
/// without a value operand). Results go to `out`'s column for the op's result kind, plus the
/// per-subgroup undefined mask; reasons are not kept (re-run one subgroup with [`evaluate`] for them).
///
/// ```
/// use lockstep::model::{evaluate_batch, lookup, Args, BatchOutput, LaneArg, LaneMask, OpCall, SubgroupSize};
/// let s = SubgroupSize::new(4).unwrap();
/// let call = OpCall::new(lookup("rotate").unwrap(), s,
///     Args { delta: Some(LaneArg::Uniform(1)), ..Args::default() }).unwrap();
/// let inputs: Vec<[u32; 1]> = (0..8).map(|i| [i]).collect();
/// let mut out = BatchOutput::for_call(&call, 2);
/// evaluate_batch(&call, &[s.full_mask(), LaneMask(0b0111)], &inputs, &mut out).unwrap();
/// assert_eq!(out.values[..4], [[1], [2], [3], [0]]);
/// assert_eq!(out.undefined[1], LaneMask(0b0100)); // lane 2 reads lane 3, inactive
/// ```
pub fn evaluate_batch<S: Scalar, const N: usize>(
    call: &OpCall,
    actives: &[LaneMask],
    inputs: &[[S; N]],
    out: &mut BatchOutput<[S; N]>,
) -> Result<(), ModelError> {
    let size = call.size();
    let lanes = size.lanes();
    let groups = actives.len();
    let info = call.info();
    if info.has_value() {
        check_operands(call, LaneMask::EMPTY, <[S; N] as Elem>::VALUE_TYPE, lanes)?;
        if inputs.len() != groups * lanes {
            return Err(ModelError::WrongLaneCount {
                what: "batch values",
                size: size.get(),
                got: inputs.len(),
            });
        }
    }
    for a in actives {
        LaneMask::within(a.0, size)?;
    }
    let need = groups * lanes;
    let have = match info.result {
        ResultKind::SameAsValue => out.values.len(),
        ResultKind::Bool => out.bools.len(),
        ResultKind::Uint => out.uints.len(),
        ResultKind::Uvec4 => out.ballots.len(),
    };
    if have != need || out.undefined.len() != groups {
        return Err(ModelError::WrongLaneCount {
            what: "batch output (use BatchOutput::for_call)",
            size: size.get(),
            got: have,
        });
    }
    // Within a batch the call is fixed, so a gather's source lane for each lane is too (only the
    // active mask varies): look it up once instead of per subgroup.
    let gather_plan = GatherPlan::new(call);
    let is_ballot = call.op() == Op::Ballot;
    let full = size.full_mask().0;
    // Chunks of subgroups per rayon task: large enough to amortise scheduling.
    let per_task = (16384 / lanes).max(1);
    let chunk = per_task * lanes;
    let BatchOutput {
        values,
        bools,
        uints,
        ballots,
        undefined,
    } = out;
    fn chunks<T: Send>(v: &mut [T], chunk: usize, groups: usize, per_task: usize) -> Vec<&mut [T]> {
        if v.is_empty() {
            let tasks = groups.div_ceil(per_task);
            (0..tasks).map(|_| <&mut [T]>::default()).collect()
        } else {
            v.chunks_mut(chunk).collect()
        }
    }
    let cv = chunks(values, chunk, groups, per_task);
    let cb = chunks(bools, chunk, groups, per_task);
    let cu = chunks(uints, chunk, groups, per_task);
    let cg = chunks(ballots, chunk, groups, per_task);
    cv.into_par_iter()
        .zip(cb)
        .zip(cu)
        .zip(cg)
        .zip(undefined.par_chunks_mut(per_task))
        .zip(actives.par_chunks(per_task))
        .enumerate()
        .for_each(|(t, (((((v, b), u), g), und), act))| {
            for (k, a) in act.iter().enumerate() {
                let base = k * lanes;
                let input: &[[S; N]] = if inputs.is_empty() {
                    &[]
                } else {
                    let off = (t * per_task + k) * lanes;
                    &inputs[off..off + lanes]
                };
                if let Some(plan) = &gather_plan {
                    und[k] = plan.apply(*a, input, &mut v[base..base + lanes]);
                    continue;
                }
                if is_ballot {
                    // subgroupBallot: one branchless pass builds the mask; every active lane gets it.
                    let act = a.0 & full;
                    let mut m = 0u128;
                    for (l, x) in input.iter().enumerate() {
                        m |= ((x[0].to_bits() & 1) as u128) << l;
                    }
                    let r = Ballot(m & act);
                    let out = &mut g[base..base + lanes];
                    if act == full {
                        out.fill(r);
                    } else {
                        for l in LaneMask(act).iter() {
                            out[l as usize] = r;
                        }
                    }
                    und[k] = LaneMask::EMPTY;
                    continue;
                }
                let mut sink = ColumnSink {
                    values: sub_slice(&mut *v, base, lanes),
                    bools: sub_slice(&mut *b, base, lanes),
                    uints: sub_slice(&mut *u, base, lanes),
                    ballots: sub_slice(&mut *g, base, lanes),
                    undefined: LaneMask::EMPTY,
                };
                run(call, *a, input, &mut sink);
                und[k] = sink.undefined;
            }
        });
    Ok(())
}

/// A gather (broadcast, shuffles, quad, rotate) prepared once for a call: the source lane of every
/// lane by [`gather_source`]'s rules, so that applying it to many subgroups costs one table lookup
/// per lane. [`GatherPlan::apply`] gives what [`run`] gives — defined where the source is in range
/// and active, undefined elsewhere (property tests check the batch path built on it against
/// [`evaluate`]).
///
/// ```
/// use lockstep::model::{lookup, Args, GatherPlan, LaneArg, LaneMask, OpCall, SubgroupSize};
/// let down = OpCall::new(lookup("shuffle_down")?, SubgroupSize::new(4)?, Args {
///     delta: Some(LaneArg::Uniform(1)), ..Args::default() })?;
/// let plan = GatherPlan::new(&down).unwrap();
/// let mut out = [0.0f32; 4];
/// let undefined = plan.apply(LaneMask::first(4), &[10.0, 11.0, 12.0, 13.0], &mut out);
/// assert_eq!(&out[..3], &[11.0, 12.0, 13.0]);
/// assert_eq!(undefined, LaneMask(0b1000)); // lane 3 reads lane 4: outside the subgroup
/// # Ok::<(), lockstep::model::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GatherPlan {
    /// source lane per lane (the lane itself where the source is out of range)
    src: Vec<u32>,
    /// lanes whose source is in range
    valid: u128,
    /// subgroupBroadcastFirst: the source is the lowest active lane of each subgroup
    first: bool,
    full: u128,
    /// (first valid lane, its source, count) when the valid lanes read a contiguous block
    shift: Option<(usize, usize, usize)>,
}

impl GatherPlan {
    /// The plan of a gather; `None` when `call` is not a gather.
    pub fn new(call: &OpCall) -> Option<GatherPlan> {
        let n = call.size().get();
        // `None`: not a gather at all.
        let _lane0 = gather_source(call, 0, 0)?;
        let mut src = Vec::with_capacity(n as usize);
        let mut valid = 0u128;
        for l in 0..n {
            match gather_source(call, l, 0) {
                Some(Ok(s)) => {
                    src.push(s);
                    valid |= 1 << l;
                }
                _ => src.push(l),
            }
        }
        debug_assert!(
            src.iter().all(|&s| s < n),
            "gather sources stay in the subgroup"
        );
        // A relative shuffle (or any gather) whose in-range lanes are one contiguous run reading
        // a contiguous run of sources: a block copy on a full subgroup.
        let shift = (valid != 0)
            .then(|| {
                let lo = valid.trailing_zeros();
                let hi = 128 - valid.leading_zeros(); // one past the highest valid lane
                let run = if hi - lo == 128 {
                    u128::MAX
                } else {
                    ((1u128 << (hi - lo)) - 1) << lo
                };
                let d = src[lo as usize] as i64 - lo as i64;
                (valid == run && (lo..hi).all(|l| src[l as usize] as i64 - l as i64 == d))
                    .then(|| (lo as usize, src[lo as usize] as usize, (hi - lo) as usize))
            })
            .flatten();
        Some(GatherPlan {
            src,
            valid,
            first: call.op() == Op::BroadcastFirst,
            full: call.size().full_mask().0,
            shift,
        })
    }

    /// When every in-range lane reads the lane `offset` away (a relative shuffle: `shuffle_up` by
    /// `d` has offset `−d`), that offset: lane `l`'s result is lane `l + offset`'s value wherever
    /// it is defined ([`GatherPlan::undefined`] says where). `None` for other gathers.
    pub fn offset(&self) -> Option<i64> {
        if self.first {
            return None;
        }
        // `shift` is set only when the in-range lanes are one run reading one run.
        self.shift.map(|(dst, src, _)| src as i64 - dst as i64)
    }

    /// The lane `lane` reads when the lanes of `active` run the gather, whether or not that lane
    /// is active; `None` where [`gather_source`] puts the source out of range (or gives a reason).
    #[inline(always)]
    pub fn source(&self, lane: u32, active: LaneMask) -> Option<u32> {
        if self.first {
            return Some(active.and(LaneMask(self.full)).lowest().unwrap_or(0));
        }
        ((self.valid >> lane) & 1 == 1).then(|| self.src[lane as usize])
    }

    /// The lanes of `active` whose result is undefined (the rule of [`GatherPlan::apply`], without
    /// the values): the source is out of range or inactive.
    #[inline(always)]
    pub fn undefined(&self, active: LaneMask) -> LaneMask {
        let a = active.0 & self.full;
        if self.first {
            return LaneMask::EMPTY;
        }
        if a == self.full {
            return LaneMask(a & !self.valid);
        }
        let mut und = 0u128;
        for l in LaneMask(a).iter() {
            let s = self.src[l as usize];
            if (self.valid >> l) & 1 == 0 || (a >> s) & 1 == 0 {
                und |= 1 << l;
            }
        }
        LaneMask(und)
    }

    /// The lanes of `active` with a defined result read from a lane of `marked` (e.g. lanes
    /// holding a value that is itself undefined: a defined shuffle carries its source's value).
    #[inline(always)]
    pub fn carried(&self, active: LaneMask, marked: LaneMask) -> LaneMask {
        if marked.0 == 0 {
            return LaneMask::EMPTY;
        }
        let defined = active.0 & self.full & !self.undefined(active).0;
        let mut out = 0u128;
        for l in LaneMask(defined).iter() {
            let s = if self.first {
                active.lowest().unwrap_or(l)
            } else {
                self.src[l as usize]
            };
            if (marked.0 >> s) & 1 == 1 {
                out |= 1 << l;
            }
        }
        LaneMask(out)
    }

    /// Writes the defined results of one subgroup and returns its undefined lanes (the same rule
    /// as [`run`]: defined when the source is in range and active). Undefined lanes may be written.
    /// `input` and `out` hold one element per lane of the subgroup.
    #[inline(always)]
    pub fn apply<E: Copy>(&self, active: LaneMask, input: &[E], out: &mut [E]) -> LaneMask {
        let a = active.0 & self.full;
        if self.first {
            if let Some(f) = active.lowest() {
                let x = input[f as usize];
                for l in LaneMask(a).iter() {
                    out[l as usize] = x;
                }
            }
            return LaneMask::EMPTY;
        }
        if a == self.full && input.len() == self.src.len() && out.len() == self.src.len() {
            if let Some((dst, src, len)) = self.shift {
                // Lanes outside the block are the undefined ones (returned below), left as they were.
                out[dst..dst + len].copy_from_slice(&input[src..src + len]);
                return LaneMask(a & !self.valid);
            }
            for (o, &s) in out.iter_mut().zip(&self.src) {
                // SAFETY: every entry of `src` is < the subgroup size (GatherPlan::new keeps
                // `gather_source`'s in-range lanes and the lane itself otherwise), and `input` has
                // exactly that many lanes (checked just above).
                *o = unsafe { *input.get_unchecked(s as usize) };
            }
            return LaneMask(a & !self.valid);
        }
        let mut und = 0u128;
        for l in LaneMask(a).iter() {
            let s = self.src[l as usize];
            if (self.valid >> l) & 1 == 1 && (a >> s) & 1 == 1 {
                out[l as usize] = input[s as usize];
            } else {
                und |= 1 << l;
            }
        }
        LaneMask(und)
    }
}

#[inline(always)]
fn sub_slice<T>(s: &mut [T], base: usize, lanes: usize) -> &mut [T] {
    if s.is_empty() {
        s
    } else {
        &mut s[base..base + lanes]
    }
}
