//! The result of one lane: inactive, a defined value, or undefined with the reason.

use crate::model::catalogue::{Category, OpInfo};
use crate::model::value::Value;
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
    /// down by the reconvergence guarantees in force. The evaluator never yields it (it is given
    /// the tangle as its active mask); the executors of control flow (`reconverge`, the SPIR-V
    /// interpreter) do, for the [`tangled`](crate::model::OpInfo::tangled) operations. It lives
    /// here beside the other reasons because it is a reason an *operation's* result is undefined,
    /// and every lane result, whoever computes it, is an [`Outcome`]. The guarantees (core
    /// uniform control flow, SPV_KHR_subgroup_uniform_control_flow, SPV_KHR_maximal_reconvergence)
    /// are applied in one place, `reconverge::flow`. `construct` is the program construct (an id
    /// of a `reconverge::Program`, or of the interpreted module) where control flow diverged
    /// without a guaranteed reconvergence.
    UnpinnedTangle {
        /// id of the construct where the guarantee was lost
        construct: u32,
    },
}

/// What the docs and reports say about one [`Reason`]: everything about a variant in one place.
///
/// ```
/// use lockstep::model::{lookup, Reason};
/// let d = Reason::NoBitSet.doc();
/// assert_eq!((d.key, d.order, d.adjective), ("no_bit_set", 4, "empty-ballot"));
/// assert!(d.rule.contains("no bit of the ballot is set"));
/// let swap = lookup("quad_swap_vertical").unwrap();
/// assert!((Reason::SourceInactive { source: 1 }.doc().source)(swap).starts_with("SPIR-V OpGroupNonUniformQuadSwap"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ReasonDoc {
    /// A stable short key, for grouping in reports and JSON (`source_inactive`, `no_bit_set`, …).
    pub key: &'static str,
    /// Where the docs list it among the reasons (0 first).
    pub order: u8,
    /// When the reason applies, in words.
    pub rule: &'static str,
    /// As an adjective for "… of out-of-range shuffle_down cases".
    pub adjective: &'static str,
    /// Where the rule is written, for an operation (most reasons cite the op's own section).
    pub source: fn(&OpInfo) -> String,
}

impl Reason {
    /// One reason of each kind (with example lane numbers), in docs order.
    pub const ALL: [Reason; 9] = [
        Reason::SourceOutOfRange { source: 8, size: 8 },
        Reason::SourceInactive { source: 0 },
        Reason::DeltaExceedsId { delta: 1, id: 0 },
        Reason::IndexOutOfRange { index: 8, size: 8 },
        Reason::NoBitSet,
        Reason::AllNaN { component: 0 },
        Reason::AllEqualWithNaN,
        Reason::AllEqualSignedZeros,
        Reason::UnpinnedTangle { construct: 0 },
    ];

    /// Its key, order, rule, adjective and source — written beside each other, per variant.
    pub fn doc(&self) -> ReasonDoc {
        fn op_spec(op: &OpInfo) -> String {
            op.spec.to_string()
        }
        match self {
            Reason::SourceOutOfRange { .. } => ReasonDoc {
                key: "source_out_of_range",
                order: 0,
                rule: "the lane read from is not in the subgroup: its id is ≥ gl_SubgroupSize",
                adjective: "out-of-range",
                source: |op| {
                    if op.category == Category::Quad {
                        "the model: in a subgroup of 1 or 2 lanes the quad's other lanes do not \
                         exist; no spec text covers it"
                            .into()
                    } else {
                        op.spec.to_string()
                    }
                },
            },
            Reason::SourceInactive { .. } => ReasonDoc {
                key: "source_inactive",
                order: 1,
                rule: "the lane read from is inactive",
                adjective: "inactive-source",
                source: |op| {
                    // GLSL says nothing of inactive lanes for the swaps; SPIR-V does.
                    if op.category == Category::Quad && op.args.is_empty() {
                        "SPIR-V OpGroupNonUniformQuadSwap: \"If an active invocation reads value \
                         from an inactive invocation, the resulting value is undefined\""
                            .into()
                    } else {
                        op.spec.to_string()
                    }
                },
            },
            Reason::DeltaExceedsId { .. } => ReasonDoc {
                key: "delta_exceeds_id",
                order: 2,
                rule: "delta > gl_SubgroupInvocationID: the lane read from would lie below lane 0",
                adjective: "delta-past-lane-0",
                source: op_spec,
            },
            Reason::IndexOutOfRange { .. } => ReasonDoc {
                key: "index_out_of_range",
                order: 3,
                rule: "index ≥ gl_SubgroupSize",
                adjective: "index-out-of-range",
                source: op_spec,
            },
            Reason::NoBitSet => ReasonDoc {
                key: "no_bit_set",
                order: 4,
                rule: "no bit of the ballot is set among its low gl_SubgroupSize bits",
                adjective: "empty-ballot",
                source: op_spec,
            },
            Reason::AllNaN { .. } => ReasonDoc {
                key: "all_nan",
                order: 5,
                rule: "every value the lane's result is computed from is NaN",
                adjective: "all-NaN",
                source: |_| "GL_KHR_shader_subgroup.txt, 3.8, minimum and maximum".into(),
            },
            Reason::AllEqualWithNaN => ReasonDoc {
                key: "all_equal_nan",
                order: 6,
                rule: "a NaN is among the active values and no NaN-free vector component already \
                       differs: ordered equality says unequal, unordered equality (NaN equals \
                       anything) says equal, bitwise equality depends on the bits",
                adjective: "NaN",
                source: |_| ALL_EQUAL_READING.into(),
            },
            Reason::AllEqualSignedZeros => ReasonDoc {
                key: "all_equal_signed_zeros",
                order: 7,
                rule: "the values are equal as numbers but not as bits because +0.0 and -0.0 \
                       both occur",
                adjective: "signed-zero",
                source: |_| ALL_EQUAL_READING.into(),
            },
            Reason::UnpinnedTangle { .. } => ReasonDoc {
                key: "unpinned_tangle",
                order: 8,
                rule: "control flow diverged and the reconvergence guarantees in force do not say \
                       which invocations execute the operation together (its tangle)",
                adjective: "unpinned-tangle",
                source: |_| {
                    "SPV_KHR_maximal_reconvergence.asciidoc, Tangle; \
                     SPV_KHR_subgroup_uniform_control_flow.asciidoc"
                        .into()
                },
            },
        }
    }

    /// [`ReasonDoc::key`].
    pub fn key(&self) -> &'static str {
        self.doc().key
    }

    /// The reason of [`Reason::ALL`] with this key (example lane numbers), if any.
    ///
    /// ```
    /// use lockstep::model::Reason;
    /// assert_eq!(Reason::from_key("no_bit_set"), Some(Reason::NoBitSet));
    /// assert_eq!(Reason::from_key("no such key"), None);
    /// ```
    pub fn from_key(key: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.key() == key)
    }
}

const ALL_EQUAL_READING: &str = "the model's reading: GL_KHR_shader_subgroup.txt, 8.18 does not \
    say which equality subgroupAllEqual uses for floats";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_has_a_unique_key_and_its_place_in_the_docs_order() {
        for (i, r) in Reason::ALL.iter().enumerate() {
            let d = r.doc();
            assert_eq!(
                d.order as usize, i,
                "{}: Reason::ALL is in docs order",
                d.key
            );
            assert_eq!(Reason::from_key(d.key), Some(*r));
            assert!(!d.rule.is_empty() && !d.adjective.is_empty());
        }
        let mut keys: Vec<&str> = Reason::ALL.iter().map(|r| r.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), Reason::ALL.len());
    }
}
