//! Errors of the reference model: every one names the rule that the input broke.

use crate::model::types::{TypeError, ValueType};

/// An invalid parameter or operand, rejected before any evaluation.
///
/// ```
/// use lockstep::model::{lookup, Args, ModelError, OpCall, SubgroupSize};
/// let e = OpCall::new(lookup("clustered_add").unwrap(), SubgroupSize::new(8).unwrap(),
///     Args { cluster: Some(16), ..Args::default() }).unwrap_err();
/// assert_eq!(e, ModelError::InvalidClusterSize { cluster: 16, size: 8 });
/// assert!(e.to_string().contains("at most the subgroup size 8"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// GL_KHR_shader_subgroup, 7.1: gl_SubgroupSize is a power of 2, at most 128.
    #[error("subgroup size {0} is invalid: it must be a power of two in 1..=128 (gl_SubgroupSize is always a power of 2 and at most 128)")]
    InvalidSubgroupSize(u64),
    /// Clustered operations: the cluster size is a power of two, at least 1, at most the subgroup size.
    #[error("cluster size {cluster} is invalid: it must be a power of two, at least 1 and at most the subgroup size {size} (GL_KHR_shader_subgroup, clustered operations)")]
    InvalidClusterSize {
        /// requested cluster size
        cluster: u64,
        /// subgroup size
        size: u32,
    },
    /// subgroupQuadBroadcast takes a constant quad index 0..=3.
    #[error("quad index {0} is invalid: subgroupQuadBroadcast takes a constant index in 0..=3")]
    InvalidQuadIndex(u64),
    /// A lane mask with bits at or above the subgroup size.
    #[error("lane mask 0x{mask:x} has bits at or above the subgroup size {size}: lanes are numbered 0..{size}")]
    MaskBeyondSize {
        /// the mask
        mask: u128,
        /// subgroup size
        size: u32,
    },
    /// A lane number outside the subgroup.
    #[error("lane {lane} is out of range: a subgroup of size {size} has lanes 0..{size}")]
    LaneOutOfRange {
        /// the lane
        lane: u64,
        /// subgroup size
        size: u32,
    },
    /// Vectors have 2, 3 or 4 components.
    #[error("{0} components: a value has 1 to 4 components")]
    InvalidComponents(u32),
    /// Unknown type name.
    #[error("unknown type '{0}': use bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, optionally with x2/x3/x4 (or the GLSL names: uint, vec4, f16vec2, …)")]
    UnknownType(String),
    /// A lane value that does not parse as its type.
    #[error("bad {ty} value '{text}': {why}")]
    BadValue {
        /// what was given
        text: String,
        /// expected type
        ty: ValueType,
        /// the rule it broke
        why: String,
    },
    /// Unknown operation name.
    #[error("unknown operation '{name}'{}", suggest(.suggestions))]
    UnknownOp {
        /// what was given
        name: String,
        /// the nearest catalogue names
        suggestions: Vec<String>,
    },
    /// A value type the operation does not take.
    #[error("{op} does not take {ty}: it takes {takes}")]
    TypeNotAccepted {
        /// op name
        op: &'static str,
        /// the type given
        ty: ValueType,
        /// description of the accepted types
        takes: &'static str,
    },
    /// An argument the operation needs is missing.
    #[error("{op} needs the argument '{arg}' ({what})")]
    MissingArgument {
        /// op name
        op: &'static str,
        /// argument name
        arg: &'static str,
        /// what it is
        what: &'static str,
    },
    /// An argument the operation does not take.
    #[error("{op} takes no argument '{arg}'")]
    UnexpectedArgument {
        /// op name
        op: &'static str,
        /// argument name
        arg: &'static str,
    },
    /// A per-lane argument where the operation requires a dynamically uniform one.
    #[error("{op}: '{arg}' must be dynamically uniform (one value for the whole subgroup), got one per lane")]
    NotUniform {
        /// op name
        op: &'static str,
        /// argument name
        arg: &'static str,
    },
    /// Wrong number of per-lane values.
    #[error("{what}: expected one per lane ({size} for subgroup size {size}), got {got}")]
    WrongLaneCount {
        /// which list
        what: &'static str,
        /// subgroup size
        size: u32,
        /// how many were given
        got: usize,
    },
    /// A per-lane value list of the wrong type.
    #[error("lane {lane} holds a {got} value but the operation was given type {expected}")]
    MixedTypes {
        /// lane
        lane: usize,
        /// expected type
        expected: ValueType,
        /// type found
        got: ValueType,
    },
    /// A workgroup dimension of zero or a workgroup too large.
    #[error("workgroup shape {x}x{y}x{z} is invalid: every dimension is at least 1 and the total at most {max} invocations")]
    InvalidWorkgroup {
        /// width
        x: u32,
        /// height
        y: u32,
        /// depth
        z: u32,
        /// largest total the model accepts
        max: u32,
    },
    /// A lane layout that cannot map this workgroup.
    #[error("layout {layout} cannot map workgroup {shape}: {why}")]
    InvalidLayout {
        /// layout name
        layout: String,
        /// workgroup shape
        shape: String,
        /// the rule
        why: &'static str,
    },
    /// A ballot literal of more than 128 bits or not hex.
    #[error("bad ballot '{0}': a ballot is one hex number of at most 128 bits (lane i = bit i)")]
    BadBallot(String),
}

fn suggest(s: &[String]) -> String {
    if s.is_empty() {
        " (run `lockstep ops` for the list)".to_string()
    } else {
        format!(" (did you mean {}?)", s.join(", "))
    }
}

impl From<TypeError> for ModelError {
    fn from(e: TypeError) -> Self {
        match e {
            TypeError::InvalidComponents(n) => ModelError::InvalidComponents(n),
            TypeError::UnknownType(t) => ModelError::UnknownType(t),
        }
    }
}
