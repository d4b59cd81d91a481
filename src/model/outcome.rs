//! The result of one lane: inactive, a defined value, or undefined with the reason.

use crate::model::types::Value;
use std::fmt;

/// Why a lane's result is undefined — the rule from the spec texts, with the lane numbers involved.
///
/// ```
/// use lockstep::model::Reason;
/// let r = Reason::SourceOutOfRange { source: 8, size: 8 };
/// assert_eq!(r.to_string(), "source lane 8 >= subgroup size 8");
/// assert_eq!(r.key(), "source_out_of_range");
/// assert_eq!(Reason::DeltaExceedsId { delta: 3, id: 1 }.to_string(), "delta 3 > lane id 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The lane the value comes from did not execute the operation.
    SourceInactive {
        /// source lane
        source: u32,
    },
    /// The computed source lane is not in the subgroup (shuffle id, xor result, broadcast id, id + delta ≥ size).
    SourceOutOfRange {
        /// computed source lane (may exceed 32 bits for id + delta)
        source: u64,
        /// subgroup size
        size: u32,
    },
    /// shuffle_up with delta greater than the lane's own id (source lane would be negative).
    DeltaExceedsId {
        /// delta
        delta: u32,
        /// the lane's id
        id: u32,
    },
    /// min/max where every value used by this lane is NaN (component given).
    AllNaN {
        /// vector component
        component: u8,
    },
    /// ballot_find_lsb/msb of a ballot with no bit set among the subgroup's lanes.
    NoBitSet,
    /// ballot_bit_extract with index ≥ subgroup size.
    IndexOutOfRange {
        /// index
        index: u32,
        /// subgroup size
        size: u32,
    },
    /// all_equal over floats where a NaN is present: equality with NaN is not pinned down for this op.
    AllEqualWithNaN,
    /// all_equal over floats where +0.0 and -0.0 both occur: numeric and bitwise equality disagree.
    AllEqualSignedZeros,
    /// The set of invocations that execute the operation together (its *tangle*) is not pinned
    /// down by the reconvergence guarantees in force (core uniform control flow, SPV_KHR_subgroup_
    /// uniform_control_flow, SPV_KHR_maximal_reconvergence); `construct` is the program construct
    /// (an id of a `reconverge::Program`) where control flow diverged without a guaranteed
    /// reconvergence.
    UnpinnedTangle {
        /// id of the construct where the guarantee was lost
        construct: u32,
    },
}

impl Reason {
    /// A stable short key, for grouping in reports (`source_inactive`, `no_bit_set`, …).
    pub fn key(&self) -> &'static str {
        match self {
            Reason::SourceInactive { .. } => "source_inactive",
            Reason::SourceOutOfRange { .. } => "source_out_of_range",
            Reason::DeltaExceedsId { .. } => "delta_exceeds_id",
            Reason::AllNaN { .. } => "all_nan",
            Reason::NoBitSet => "no_bit_set",
            Reason::IndexOutOfRange { .. } => "index_out_of_range",
            Reason::AllEqualWithNaN => "all_equal_nan",
            Reason::AllEqualSignedZeros => "all_equal_signed_zeros",
            Reason::UnpinnedTangle { .. } => "unpinned_tangle",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::SourceInactive { source } => write!(f, "source lane {source} is inactive"),
            Reason::SourceOutOfRange { source, size } => {
                write!(f, "source lane {source} >= subgroup size {size}")
            }
            Reason::DeltaExceedsId { delta, id } => write!(f, "delta {delta} > lane id {id}"),
            Reason::AllNaN { component } => {
                write!(f, "every value used is NaN (component {component})")
            }
            Reason::NoBitSet => f.write_str("no bit set"),
            Reason::IndexOutOfRange { index, size } => {
                write!(f, "index {index} >= subgroup size {size}")
            }
            Reason::AllEqualWithNaN => f.write_str(
                "a NaN is among the values (ordered, unordered and bitwise equality disagree)",
            ),
            Reason::AllEqualSignedZeros => f.write_str(
                "+0.0 and -0.0 are both among the values (numeric and bitwise equality disagree)",
            ),
            Reason::UnpinnedTangle { construct } => write!(
                f,
                "the invocations executing this together are not pinned down: control flow \
                 diverged at #{construct} and the reconvergence guarantees in force do not \
                 reconverge it here"
            ),
        }
    }
}

/// One lane's result.
///
/// ```
/// use lockstep::model::{Outcome, Reason, Value};
/// let lanes = [
///     Outcome::Defined(Value::u32(7)),
///     Outcome::Undefined(Reason::NoBitSet),
///     Outcome::Inactive,
/// ];
/// let shown: Vec<String> = lanes.iter().map(|o| o.to_string()).collect();
/// assert_eq!(shown, ["7", "undef", "-"]);
/// assert_eq!(lanes[0].value(), Some(Value::u32(7)));
/// assert!(lanes[1].is_undefined() && lanes[1].value().is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// The lane did not execute the operation: it has no result.
    Inactive,
    /// The spec defines the result.
    Defined(Value),
    /// The spec leaves the result undefined, for this reason.
    Undefined(Reason),
}

impl Outcome {
    /// The defined value, if any.
    pub fn value(&self) -> Option<Value> {
        match self {
            Outcome::Defined(v) => Some(*v),
            _ => None,
        }
    }

    /// True for an undefined result.
    pub fn is_undefined(&self) -> bool {
        matches!(self, Outcome::Undefined(_))
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Inactive => f.write_str("-"),
            Outcome::Defined(v) => write!(f, "{v}"),
            Outcome::Undefined(_) => f.write_str("undef"),
        }
    }
}
