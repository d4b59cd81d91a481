//! The op catalogue: every subgroup operation described once, as data.
//!
//! Dispatch in the evaluator, the CLI names, the GLSL the device runs, the conformance test matrix
//! and the generated docs all read this one table. Adding an operation means adding an [`Op`] variant,
//! its entry in [`catalogue`], and its rule in `model::eval` (see docs/architecture.md).

use crate::model::error::ModelError;
use crate::model::scalar::BinOp;
use crate::model::types::{TypeClass, ValueType};
use std::fmt;
use std::sync::OnceLock;

/// Reduce, inclusive scan or exclusive scan.
///
/// ```
/// use lockstep::model::{lookup, BinOp, Op, Scan};
/// assert_eq!(lookup("subgroupExclusiveAdd").unwrap().op, Op::Arithmetic(BinOp::Add, Scan::Exclusive));
/// assert_eq!(lookup("subgroupMul").unwrap().op, Op::Arithmetic(BinOp::Mul, Scan::Reduce));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scan {
    /// every active lane gets the reduction of all active lanes
    Reduce,
    /// lane k gets x(0) op … op x(k) over active lanes
    Inclusive,
    /// lane k gets x(0) op … op x(k-1); the first active lane gets the identity
    Exclusive,
}

/// The direction of a quad swap.
///
/// ```
/// use lockstep::model::QuadDir;
/// // A diagonal swap exchanges quad lanes 0 and 3, 1 and 2: lane id ^ 3.
/// assert_eq!(QuadDir::Diagonal.xor(), 3);
/// assert_eq!(5 ^ QuadDir::Vertical.xor(), 7);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuadDir {
    /// 0↔1, 2↔3
    Horizontal,
    /// 0↔2, 1↔3
    Vertical,
    /// 0↔3, 1↔2
    Diagonal,
}

impl QuadDir {
    /// The xor applied to the lane id.
    pub fn xor(self) -> u32 {
        match self {
            QuadDir::Horizontal => 1,
            QuadDir::Vertical => 2,
            QuadDir::Diagonal => 3,
        }
    }
}

/// A `gl_Subgroup*Mask` built-in.
///
/// ```
/// use lockstep::model::{lookup, MaskKind, Op};
/// assert_eq!(lookup("gl_SubgroupLtMask").unwrap().op, Op::LaneMask(MaskKind::Lt));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskKind {
    /// bit index == id
    Eq,
    /// bit index >= id
    Ge,
    /// bit index > id
    Gt,
    /// bit index <= id
    Le,
    /// bit index < id
    Lt,
}

/// Every operation of the catalogue.
///
/// ```
/// use lockstep::model::{info, Op};
/// assert_eq!(info(Op::ShuffleDown).glsl, "subgroupShuffleDown");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// subgroupElect
    Elect,
    /// gl_SubgroupSize
    SubgroupSize,
    /// gl_SubgroupInvocationID
    InvocationId,
    /// gl_Subgroup{Eq,Ge,Gt,Le,Lt}Mask
    LaneMask(MaskKind),
    /// gl_NumSubgroups (workgroup-level)
    NumSubgroups,
    /// gl_SubgroupID (workgroup-level)
    SubgroupId,
    /// subgroupAll
    All,
    /// subgroupAny
    Any,
    /// subgroupAllEqual
    AllEqual,
    /// subgroupBallot
    Ballot,
    /// subgroupInverseBallot
    InverseBallot,
    /// subgroupBallotBitExtract
    BallotBitExtract,
    /// subgroupBallot{,Inclusive,Exclusive}BitCount
    BallotBitCount(Scan),
    /// subgroupBallotFindLSB
    BallotFindLsb,
    /// subgroupBallotFindMSB
    BallotFindMsb,
    /// subgroupBroadcast
    Broadcast,
    /// subgroupBroadcastFirst
    BroadcastFirst,
    /// subgroup{,Inclusive,Exclusive}{Add,Mul,…}
    Arithmetic(BinOp, Scan),
    /// subgroupShuffle
    Shuffle,
    /// subgroupShuffleXor
    ShuffleXor,
    /// subgroupShuffleUp
    ShuffleUp,
    /// subgroupShuffleDown
    ShuffleDown,
    /// subgroupClustered{Add,…}
    Clustered(BinOp),
    /// subgroupQuadBroadcast
    QuadBroadcast,
    /// subgroupQuadSwap{Horizontal,Vertical,Diagonal}
    QuadSwap(QuadDir),
    /// subgroupRotate
    Rotate,
    /// subgroupClusteredRotate
    ClusteredRotate,
}

impl Op {
    /// The binary operator of a reduction, scan or clustered operation (`None` for the others).
    ///
    /// ```
    /// use lockstep::model::{BinOp, Op, Scan};
    /// assert_eq!(Op::Arithmetic(BinOp::Min, Scan::Inclusive).binop(), Some(BinOp::Min));
    /// assert_eq!(Op::Shuffle.binop(), None);
    /// ```
    pub fn binop(self) -> Option<BinOp> {
        match self {
            Op::Arithmetic(b, _) | Op::Clustered(b) => Some(b),
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
            | Op::ClusteredRotate => None,
        }
    }
}

/// The GL_KHR_shader_subgroup_* category (and rotate), as the docs and reports group operations.
///
/// ```
/// use lockstep::model::{lookup, Category};
/// let c: Category = "shuffle_relative".parse().unwrap();
/// assert_eq!(c, Category::ShuffleRelative);
/// assert_eq!(c.name(), "shuffle-relative");
/// assert_eq!(c.glsl_extension(), "GL_KHR_shader_subgroup_shuffle_relative");
/// assert_eq!(lookup("shuffle_up").unwrap().category, c);
/// assert!("warp".parse::<Category>().unwrap_err().contains("one of basic, vote"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// GL_KHR_shader_subgroup_basic
    Basic,
    /// GL_KHR_shader_subgroup_vote
    Vote,
    /// GL_KHR_shader_subgroup_ballot
    Ballot,
    /// GL_KHR_shader_subgroup_arithmetic
    Arithmetic,
    /// GL_KHR_shader_subgroup_shuffle
    Shuffle,
    /// GL_KHR_shader_subgroup_shuffle_relative
    ShuffleRelative,
    /// GL_KHR_shader_subgroup_clustered
    Clustered,
    /// GL_KHR_shader_subgroup_quad
    Quad,
    /// GL_KHR_shader_subgroup_rotate
    Rotate,
}

impl Category {
    /// All categories in docs order.
    pub const ALL: [Category; 9] = [
        Category::Basic,
        Category::Vote,
        Category::Ballot,
        Category::Arithmetic,
        Category::Shuffle,
        Category::ShuffleRelative,
        Category::Clustered,
        Category::Quad,
        Category::Rotate,
    ];

    /// `basic`, `shuffle-relative`, …
    pub fn name(self) -> &'static str {
        match self {
            Category::Basic => "basic",
            Category::Vote => "vote",
            Category::Ballot => "ballot",
            Category::Arithmetic => "arithmetic",
            Category::Shuffle => "shuffle",
            Category::ShuffleRelative => "shuffle-relative",
            Category::Clustered => "clustered",
            Category::Quad => "quad",
            Category::Rotate => "rotate",
        }
    }

    /// The Vulkan feature that enables it: a `VK_SUBGROUP_FEATURE_*_BIT`, or for rotate
    /// `shaderSubgroupRotate`.
    pub fn vulkan_feature(self) -> &'static str {
        match self {
            Category::Basic => "VK_SUBGROUP_FEATURE_BASIC_BIT",
            Category::Vote => "VK_SUBGROUP_FEATURE_VOTE_BIT",
            Category::Ballot => "VK_SUBGROUP_FEATURE_BALLOT_BIT",
            Category::Arithmetic => "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT",
            Category::Shuffle => "VK_SUBGROUP_FEATURE_SHUFFLE_BIT",
            Category::ShuffleRelative => "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT",
            Category::Clustered => "VK_SUBGROUP_FEATURE_CLUSTERED_BIT",
            Category::Quad => "VK_SUBGROUP_FEATURE_QUAD_BIT",
            Category::Rotate => "shaderSubgroupRotate (VK_KHR_shader_subgroup_rotate)",
        }
    }

    /// The GLSL extension that enables it.
    pub fn glsl_extension(self) -> &'static str {
        match self {
            Category::Basic => "GL_KHR_shader_subgroup_basic",
            Category::Vote => "GL_KHR_shader_subgroup_vote",
            Category::Ballot => "GL_KHR_shader_subgroup_ballot",
            Category::Arithmetic => "GL_KHR_shader_subgroup_arithmetic",
            Category::Shuffle => "GL_KHR_shader_subgroup_shuffle",
            Category::ShuffleRelative => "GL_KHR_shader_subgroup_shuffle_relative",
            Category::Clustered => "GL_KHR_shader_subgroup_clustered",
            Category::Quad => "GL_KHR_shader_subgroup_quad",
            Category::Rotate => "GL_KHR_shader_subgroup_rotate",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Category {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().replace('_', "-").to_ascii_lowercase();
        Category::ALL
            .into_iter()
            .find(|c| c.name() == t)
            .ok_or_else(|| {
                format!(
                    "unknown category '{s}': one of {}",
                    Category::ALL.map(|c| c.name()).join(", ")
                )
            })
    }
}

/// The Vulkan device feature an operation needs: the feature of its category (or of another
/// category: the lane masks need the ballot bit), or the clustered-rotate feature.
///
/// ```
/// use lockstep::model::{lookup, Category, Feature};
/// let f = lookup("subgroupClusteredRotate").unwrap().features;
/// assert_eq!(f, [Feature::Category(Category::Rotate), Feature::RotateClustered]);
/// assert_eq!(Feature::Category(Category::Quad).vulkan_name(), "VK_SUBGROUP_FEATURE_QUAD_BIT");
/// assert_eq!(lookup("gl_SubgroupEqMask").unwrap().features, [Feature::Category(Category::Ballot)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Feature {
    /// The feature that enables a category ([`Category::vulkan_feature`]).
    Category(Category),
    /// VK_KHR_shader_subgroup_rotate: shaderSubgroupRotateClustered
    RotateClustered,
}

impl Feature {
    /// The Vulkan spelling.
    pub fn vulkan_name(self) -> &'static str {
        match self {
            Feature::Category(c) => c.vulkan_feature(),
            Feature::RotateClustered => {
                "shaderSubgroupRotateClustered (VK_KHR_shader_subgroup_rotate)"
            }
        }
    }
}

/// An argument besides the value.
///
/// ```
/// use lockstep::model::{lookup, ArgKind};
/// let rotate = lookup("rotate").unwrap();
/// assert_eq!(rotate.args, [ArgKind::Delta { uniform: true }]);
/// assert_eq!(rotate.args[0].name(), "delta");
/// assert!(rotate.args[0].uniform()); // rotate's delta must be dynamically uniform
/// assert!(!lookup("shuffle_down").unwrap().args[0].uniform());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A lane id (`id`); `uniform` when the spec requires it dynamically uniform.
    Id {
        /// must be the same in every lane
        uniform: bool,
    },
    /// The xor mask of subgroupShuffleXor (`mask`), per lane.
    Mask,
    /// A lane distance (`delta`), uniform for rotate.
    Delta {
        /// must be the same in every lane
        uniform: bool,
    },
    /// The constant cluster size (`cluster`).
    Cluster,
    /// The constant quad index of subgroupQuadBroadcast (`id`, 0..=3).
    QuadIndex,
    /// The uniform `uvec4` operand of the ballot bit operations (`ballot`).
    Ballot,
    /// The bit index of subgroupBallotBitExtract (`index`), per lane.
    Index,
    /// The workgroup shape and lane layout (`workgroup`, `layout`) of the workgroup built-ins.
    Workgroup,
}

impl ArgKind {
    /// One argument of each name, for going over the fields of [`Args`](crate::model::Args)
    /// (the uniformity flags as no op in particular has them).
    pub const ALL: [ArgKind; 8] = [
        ArgKind::Id { uniform: false },
        ArgKind::Mask,
        ArgKind::Delta { uniform: false },
        ArgKind::Cluster,
        ArgKind::QuadIndex,
        ArgKind::Ballot,
        ArgKind::Index,
        ArgKind::Workgroup,
    ];

    /// True for the kinds held as a [`LaneArg`](crate::model::LaneArg) in a call: id, mask,
    /// delta, index and the quad index.
    pub fn is_lane_arg(self) -> bool {
        match self {
            ArgKind::Id { .. }
            | ArgKind::Mask
            | ArgKind::Delta { .. }
            | ArgKind::Index
            | ArgKind::QuadIndex => true,
            ArgKind::Cluster | ArgKind::Ballot | ArgKind::Workgroup => false,
        }
    }

    /// The parameter as the GLSL declaration spells it (GL_KHR_shader_subgroup.txt, 8.18);
    /// empty for the workgroup, which is no parameter.
    pub fn glsl_param(self) -> &'static str {
        match self {
            ArgKind::Id { .. } | ArgKind::QuadIndex => "uint id",
            ArgKind::Mask => "uint mask",
            ArgKind::Delta { .. } => "uint delta",
            ArgKind::Cluster => "uint clusterSize",
            ArgKind::Index => "uint index",
            ArgKind::Ballot => "uvec4 value",
            ArgKind::Workgroup => "",
        }
    }

    /// The argument's name (and CLI flag).
    pub fn name(self) -> &'static str {
        match self {
            ArgKind::Id { .. } | ArgKind::QuadIndex => "id",
            ArgKind::Mask => "mask",
            ArgKind::Delta { .. } => "delta",
            ArgKind::Cluster => "cluster",
            ArgKind::Ballot => "ballot",
            ArgKind::Index => "index",
            ArgKind::Workgroup => "workgroup",
        }
    }

    /// What it is, for help and errors.
    pub fn describe(self) -> &'static str {
        match self {
            ArgKind::Id { uniform: true } => "a lane id, dynamically uniform",
            ArgKind::Id { uniform: false } => "a lane id per lane (or one for all)",
            ArgKind::Mask => "an xor mask per lane (or one for all)",
            ArgKind::Delta { uniform: true } => "a lane distance, dynamically uniform",
            ArgKind::Delta { uniform: false } => "a lane distance per lane (or one for all)",
            ArgKind::Cluster => "a constant power-of-two cluster size <= subgroup size",
            ArgKind::QuadIndex => "a constant quad index 0..=3",
            ArgKind::Ballot => "a uvec4 ballot, one hex number of up to 128 bits",
            ArgKind::Index => "a bit index per lane (or one for all)",
            ArgKind::Workgroup => "a workgroup shape X,Y,Z and a lane layout",
        }
    }

    /// Must the argument be the same in every lane?
    pub fn uniform(self) -> bool {
        match self {
            ArgKind::Id { uniform } | ArgKind::Delta { uniform } => uniform,
            ArgKind::Mask | ArgKind::Index => false,
            ArgKind::Cluster | ArgKind::QuadIndex | ArgKind::Ballot | ArgKind::Workgroup => true,
        }
    }
}

/// The type of an operation's result.
///
/// ```
/// use lockstep::model::{lookup, ResultKind, ValueType};
/// let ballot = lookup("subgroupBallot").unwrap();
/// assert_eq!(ballot.result, ResultKind::Uvec4);
/// assert_eq!(ballot.result.result_type(Some(ValueType::BOOL)), ValueType::UVEC4);
/// let t: ValueType = "f16x3".parse().unwrap();
/// assert_eq!(ResultKind::SameAsValue.result_type(Some(t)), t);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultKind {
    /// The value's own type.
    SameAsValue,
    /// `bool`
    Bool,
    /// `uint`
    Uint,
    /// `uvec4`
    Uvec4,
}

impl ResultKind {
    /// The result type for value type `value` (`None` for ops without a value).
    pub fn result_type(self, value: Option<ValueType>) -> ValueType {
        match self {
            ResultKind::SameAsValue => value.unwrap_or(ValueType::U32),
            ResultKind::Bool => ValueType::BOOL,
            ResultKind::Uint => ValueType::U32,
            ResultKind::Uvec4 => ValueType::UVEC4,
        }
    }
}

/// How a device result is compared with the model's defined value.
///
/// ```
/// use lockstep::model::{lookup, Exactness, ValueType};
/// let f32t: ValueType = "f32".parse().unwrap();
/// assert_eq!(lookup("add").unwrap().exactness(Some(f32t)), Exactness::Tolerance);
/// assert_eq!(lookup("min").unwrap().exactness(Some(f32t)), Exactness::MinMaxFloat);
/// assert_eq!(lookup("add").unwrap().exactness(Some(ValueType::U32)), Exactness::Bits);
/// assert_eq!(lookup("shuffle").unwrap().exactness(Some(f32t)), Exactness::Bits);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exactness {
    /// Bit for bit, NaN payloads and -0.0 included.
    Bits,
    /// Float min/max: equal as numbers, so +0.0 and -0.0 are interchangeable (either is a correct
    /// minimum of {+0, -0}); NaN never results (all-NaN sets are undefined).
    MinMaxFloat,
    /// Float add/mul: within the order-independent error bound of docs/conformance.md.
    Tolerance,
}

/// One catalogue entry.
///
/// ```
/// use lockstep::model::{lookup, ValueType};
/// let op = lookup("ballot_bit_extract").unwrap();
/// assert_eq!((op.name.as_str(), op.glsl.as_str()), ("ballot_bit_extract", "subgroupBallotBitExtract"));
/// assert!(!op.has_value()); // its operands are arguments: a ballot and an index
/// assert!(op.arg("index").is_some() && op.arg("delta").is_none());
/// assert!(lookup("subgroup_id").unwrap().is_workgroup_level());
/// assert!(lookup("and").unwrap().accepts(ValueType::BOOL));
/// assert_eq!(op.spec, "GL_KHR_shader_subgroup.txt, 8.18");
/// ```
#[derive(Clone, Debug)]
pub struct OpInfo {
    /// The operation.
    pub op: Op,
    /// Snake-case name (`shuffle_down`), the CLI name.
    pub name: String,
    /// GLSL built-in (`subgroupShuffleDown`, `gl_SubgroupEqMask`).
    pub glsl: String,
    /// Category.
    pub category: Category,
    /// The Vulkan features it needs (all of them).
    pub features: &'static [Feature],
    /// Arguments besides the value.
    pub args: &'static [ArgKind],
    /// Value types it takes.
    pub types: TypeClass,
    /// Its result type.
    pub result: ResultKind,
    /// The rule in one sentence, for docs.
    pub rule: String,
    /// Where the rule is written.
    pub spec: &'static str,
    /// The SPIR-V instructions that perform it (SPIR-V 3.42.24, Non-Uniform Instructions;
    /// SPV_KHR_subgroup_rotate), one per kind of value where SPIR-V splits them (`OpGroupNonUniformIAdd`,
    /// `…FAdd`); the scan of an arithmetic operation is its `GroupOperation` operand. Empty for the
    /// built-in variables (`gl_SubgroupSize`, the masks, …), which are `BuiltIn` decorations.
    pub spirv: &'static [rspirv::spirv::Op],
}

/// The SPIR-V instructions that perform `op` ([`OpInfo::spirv`]).
fn spirv_of(op: Op) -> &'static [rspirv::spirv::Op] {
    use rspirv::spirv::Op as S;
    let fold = |b: BinOp| -> &'static [S] {
        match b {
            BinOp::Add => &[S::GroupNonUniformIAdd, S::GroupNonUniformFAdd],
            BinOp::Mul => &[S::GroupNonUniformIMul, S::GroupNonUniformFMul],
            BinOp::Min => &[
                S::GroupNonUniformSMin,
                S::GroupNonUniformUMin,
                S::GroupNonUniformFMin,
            ],
            BinOp::Max => &[
                S::GroupNonUniformSMax,
                S::GroupNonUniformUMax,
                S::GroupNonUniformFMax,
            ],
            BinOp::And => &[S::GroupNonUniformBitwiseAnd, S::GroupNonUniformLogicalAnd],
            BinOp::Or => &[S::GroupNonUniformBitwiseOr, S::GroupNonUniformLogicalOr],
            BinOp::Xor => &[S::GroupNonUniformBitwiseXor, S::GroupNonUniformLogicalXor],
        }
    };
    match op {
        Op::Elect => &[S::GroupNonUniformElect],
        Op::SubgroupSize
        | Op::InvocationId
        | Op::LaneMask(_)
        | Op::NumSubgroups
        | Op::SubgroupId => &[],
        // and the SPV_KHR_subgroup_vote / SPV_KHR_shader_ballot forms (GL_ARB_shader_group_vote,
        // GL_ARB_shader_ballot): the same operation on the invocations that execute the same
        // dynamic instance, with the scope implied
        Op::All => &[S::GroupNonUniformAll, S::SubgroupAllKHR],
        Op::Any => &[S::GroupNonUniformAny, S::SubgroupAnyKHR],
        Op::AllEqual => &[S::GroupNonUniformAllEqual, S::SubgroupAllEqualKHR],
        Op::Ballot => &[S::GroupNonUniformBallot, S::SubgroupBallotKHR],
        Op::InverseBallot => &[S::GroupNonUniformInverseBallot],
        Op::BallotBitExtract => &[S::GroupNonUniformBallotBitExtract],
        Op::BallotBitCount(_) => &[S::GroupNonUniformBallotBitCount],
        Op::BallotFindLsb => &[S::GroupNonUniformBallotFindLSB],
        Op::BallotFindMsb => &[S::GroupNonUniformBallotFindMSB],
        // OpSubgroupReadInvocationKHR: "The Index must be the same for all active invocations in
        // the subgroup, otherwise the results are undefined" (SPV_KHR_shader_ballot)
        Op::Broadcast => &[S::GroupNonUniformBroadcast, S::SubgroupReadInvocationKHR],
        Op::BroadcastFirst => &[
            S::GroupNonUniformBroadcastFirst,
            S::SubgroupFirstInvocationKHR,
        ],
        Op::Arithmetic(b, _) | Op::Clustered(b) => fold(b),
        Op::Shuffle => &[S::GroupNonUniformShuffle],
        Op::ShuffleXor => &[S::GroupNonUniformShuffleXor],
        Op::ShuffleUp => &[S::GroupNonUniformShuffleUp],
        Op::ShuffleDown => &[S::GroupNonUniformShuffleDown],
        Op::QuadBroadcast => &[S::GroupNonUniformQuadBroadcast],
        Op::QuadSwap(_) => &[S::GroupNonUniformQuadSwap],
        Op::Rotate | Op::ClusteredRotate => &[S::GroupNonUniformRotateKHR],
    }
}

impl OpInfo {
    /// Does it take a value of type `t`?
    pub fn accepts(&self, t: ValueType) -> bool {
        self.types.accepts(t)
    }

    /// Does it take a value at all?
    pub fn has_value(&self) -> bool {
        self.types != TypeClass::NoValue
    }

    /// Its argument of kind `k`, if any.
    pub fn arg(&self, name: &str) -> Option<ArgKind> {
        self.args.iter().copied().find(|a| a.name() == name)
    }

    /// Does the result depend on which invocations execute the operation together (its *tangle*,
    /// SPV_KHR_maximal_reconvergence)? False for the operations whose result is a function of the
    /// lane's own id, the subgroup size, uniform operands or the workgroup alone: the ballot bit
    /// operations on a given ballot, the size, id and mask built-ins, the workgroup built-ins.
    /// True for every operation that reads other lanes or the set of active lanes. Where control
    /// flow leaves the tangle unpinned, only tangled operations are undefined
    /// ([`Reason::UnpinnedTangle`](crate::model::Reason::UnpinnedTangle)).
    ///
    /// ```
    /// use lockstep::model::lookup;
    /// assert!(lookup("subgroupElect").unwrap().tangled()); // the lowest *active* lane
    /// assert!(!lookup("subgroupBallotBitCount").unwrap().tangled()); // bits of its operand
    /// ```
    pub fn tangled(&self) -> bool {
        match self.op {
            Op::SubgroupSize
            | Op::InvocationId
            | Op::LaneMask(_)
            | Op::NumSubgroups
            | Op::SubgroupId
            | Op::InverseBallot
            | Op::BallotBitExtract
            | Op::BallotBitCount(_)
            | Op::BallotFindLsb
            | Op::BallotFindMsb => false,
            Op::Elect
            | Op::All
            | Op::Any
            | Op::AllEqual
            | Op::Ballot
            | Op::Broadcast
            | Op::BroadcastFirst
            | Op::Arithmetic(..)
            | Op::Shuffle
            | Op::ShuffleXor
            | Op::ShuffleUp
            | Op::ShuffleDown
            | Op::Clustered(_)
            | Op::QuadBroadcast
            | Op::QuadSwap(_)
            | Op::Rotate
            | Op::ClusteredRotate => true,
        }
    }

    /// Workgroup-level ops (NumSubgroups, SubgroupID) are evaluated per workgroup, not per subgroup.
    pub fn is_workgroup_level(&self) -> bool {
        self.args.contains(&ArgKind::Workgroup)
    }

    /// How a device result for value type `t` is compared.
    pub fn exactness(&self, t: Option<ValueType>) -> Exactness {
        let float =
            t.is_some_and(|t| t.scalar_type().is_float()) && self.result == ResultKind::SameAsValue;
        match (self.op.binop(), float) {
            (Some(BinOp::Add | BinOp::Mul), true) => Exactness::Tolerance,
            (Some(BinOp::Min | BinOp::Max), true) => Exactness::MinMaxFloat,
            _ => Exactness::Bits,
        }
    }
}

const GL: &str = "GL_KHR_shader_subgroup.txt, 8.18";
const GL_VARS: &str = "GL_KHR_shader_subgroup.txt, 7.1";
const ROT: &str = "GL_KHR_shader_subgroup_rotate.txt, 8.18; SPV_KHR_subgroup_rotate";

#[allow(clippy::too_many_arguments)] // one positional row per catalogue entry reads as a table
fn entry(
    op: Op,
    name: impl Into<String>,
    glsl: impl Into<String>,
    category: Category,
    features: &'static [Feature],
    args: &'static [ArgKind],
    types: TypeClass,
    result: ResultKind,
    rule: impl Into<String>,
    spec: &'static str,
) -> OpInfo {
    OpInfo {
        op,
        name: name.into(),
        glsl: glsl.into(),
        category,
        features,
        args,
        types,
        result,
        rule: rule.into(),
        spec,
        spirv: spirv_of(op),
    }
}

/// The result of folding with `b`, as the rule sentences name it.
fn noun(b: BinOp) -> &'static str {
    match b {
        BinOp::Add => "sum",
        BinOp::Mul => "product",
        BinOp::Min => "minimum",
        BinOp::Max => "maximum",
        BinOp::And => "bitwise (bool: logical) and",
        BinOp::Or => "bitwise (bool: logical) or",
        BinOp::Xor => "bitwise (bool: logical) xor",
    }
}

fn build() -> Vec<OpInfo> {
    use ArgKind as A;
    use Category as C;
    use ResultKind as R;
    // `F::Quad` reads as "the quad feature" in the rows below.
    #[allow(non_snake_case, non_upper_case_globals)]
    mod F {
        use super::{Category, Feature};
        pub const Basic: Feature = Feature::Category(Category::Basic);
        pub const Vote: Feature = Feature::Category(Category::Vote);
        pub const Ballot: Feature = Feature::Category(Category::Ballot);
        pub const Arithmetic: Feature = Feature::Category(Category::Arithmetic);
        pub const Shuffle: Feature = Feature::Category(Category::Shuffle);
        pub const ShuffleRelative: Feature = Feature::Category(Category::ShuffleRelative);
        pub const Clustered: Feature = Feature::Category(Category::Clustered);
        pub const Quad: Feature = Feature::Category(Category::Quad);
        pub const Rotate: Feature = Feature::Category(Category::Rotate);
        pub const RotateClustered: Feature = Feature::RotateClustered;
    }
    use TypeClass as T;
    let mut v = vec![
        entry(
            Op::Elect,
            "elect",
            "subgroupElect",
            C::Basic,
            &[F::Basic],
            &[],
            T::NoValue,
            R::Bool,
            "true in exactly one lane, the active lane with the lowest id",
            GL,
        ),
        entry(
            Op::SubgroupSize,
            "subgroup_size",
            "gl_SubgroupSize",
            C::Basic,
            &[F::Basic],
            &[],
            T::NoValue,
            R::Uint,
            "the number of invocations in the subgroup, a power of two <= 128",
            GL_VARS,
        ),
        entry(
            Op::InvocationId,
            "invocation_id",
            "gl_SubgroupInvocationID",
            C::Basic,
            &[F::Basic],
            &[],
            T::NoValue,
            R::Uint,
            "the lane's index in the subgroup, 0..gl_SubgroupSize-1",
            GL_VARS,
        ),
    ];
    for (k, n, g, rel) in [
        (MaskKind::Eq, "eq_mask", "gl_SubgroupEqMask", "=="),
        (MaskKind::Ge, "ge_mask", "gl_SubgroupGeMask", ">="),
        (MaskKind::Gt, "gt_mask", "gl_SubgroupGtMask", ">"),
        (MaskKind::Le, "le_mask", "gl_SubgroupLeMask", "<="),
        (MaskKind::Lt, "lt_mask", "gl_SubgroupLtMask", "<"),
    ] {
        v.push(entry(Op::LaneMask(k), n, g, C::Basic, &[F::Ballot], &[], T::NoValue, R::Uvec4,
            format!("bit i is set when i {rel} the lane's id and i < gl_SubgroupSize (bits >= size are 0, Vulkan interfaces chapter)"),
            GL_VARS));
    }
    v.push(entry(
        Op::NumSubgroups,
        "num_subgroups",
        "gl_NumSubgroups",
        C::Basic,
        &[F::Basic],
        &[A::Workgroup],
        T::NoValue,
        R::Uint,
        "the number of subgroups in the workgroup; with a linear layout ceil(invocations / size)",
        GL_VARS,
    ));
    v.push(entry(Op::SubgroupId, "subgroup_id", "gl_SubgroupID", C::Basic, &[F::Basic], &[A::Workgroup], T::NoValue, R::Uint,
        "the index of the invocation's subgroup in the workgroup, 0..gl_NumSubgroups-1; which invocations share a subgroup depends on the layout", GL_VARS));
    v.extend([
        entry(Op::All, "all", "subgroupAll", C::Vote, &[F::Vote], &[], T::Bool, R::Bool,
            "true when the value is true in every active lane", GL),
        entry(Op::Any, "any", "subgroupAny", C::Vote, &[F::Vote], &[], T::Bool, R::Bool,
            "true when the value is true in some active lane", GL),
        entry(Op::AllEqual, "all_equal", "subgroupAllEqual", C::Vote, &[F::Vote], &[], T::Any, R::Bool,
            "true when every active lane holds an equal value (component-wise); with floats, a NaN or both signed zeros make it undefined here", GL),
        entry(Op::Ballot, "ballot", "subgroupBallot", C::Ballot, &[F::Ballot], &[], T::Bool, R::Uvec4,
            "bit i is set when lane i is active and its value is true; bits of inactive lanes are 0", GL),
        entry(Op::InverseBallot, "inverse_ballot", "subgroupInverseBallot", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Bool,
            "the bit of the (uniform) ballot at the lane's own id", GL),
        entry(Op::BallotBitExtract, "ballot_bit_extract", "subgroupBallotBitExtract", C::Ballot, &[F::Ballot], &[A::Ballot, A::Index], T::NoValue, R::Bool,
            "bit `index` of the ballot; undefined when index >= gl_SubgroupSize", GL),
        entry(Op::BallotBitCount(Scan::Reduce), "ballot_bit_count", "subgroupBallotBitCount", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Uint,
            "the number of set bits among the low gl_SubgroupSize bits", GL),
        entry(Op::BallotBitCount(Scan::Inclusive), "ballot_inclusive_bit_count", "subgroupBallotInclusiveBitCount", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Uint,
            "the number of set bits at positions <= the lane's id", GL),
        entry(Op::BallotBitCount(Scan::Exclusive), "ballot_exclusive_bit_count", "subgroupBallotExclusiveBitCount", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Uint,
            "the number of set bits at positions < the lane's id", GL),
        entry(Op::BallotFindLsb, "ballot_find_lsb", "subgroupBallotFindLSB", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Uint,
            "the lowest set bit among the low gl_SubgroupSize bits; undefined when none is set", GL),
        entry(Op::BallotFindMsb, "ballot_find_msb", "subgroupBallotFindMSB", C::Ballot, &[F::Ballot], &[A::Ballot], T::NoValue, R::Uint,
            "the highest set bit among the low gl_SubgroupSize bits; undefined when none is set", GL),
        entry(Op::Broadcast, "broadcast", "subgroupBroadcast", C::Ballot, &[F::Ballot], &[A::Id { uniform: true }], T::Any, R::SameAsValue,
            "the value of lane `id` (dynamically uniform); undefined when that lane is inactive or id >= gl_SubgroupSize", GL),
        entry(Op::BroadcastFirst, "broadcast_first", "subgroupBroadcastFirst", C::Ballot, &[F::Ballot], &[], T::Any, R::SameAsValue,
            "the value of the active lane with the lowest id", GL),
    ]);
    for scan in [Scan::Reduce, Scan::Inclusive, Scan::Exclusive] {
        for b in BinOp::ALL {
            let (name, glsl, rule) = match scan {
                Scan::Reduce => (b.name().to_string(), format!("subgroup{}", b.glsl()),
                    format!("the {} of the values of all active lanes", noun(b))),
                Scan::Inclusive => (format!("inclusive_{}", b.name()), format!("subgroupInclusive{}", b.glsl()),
                    format!("the {} of the values of the active lanes with id <= the lane's id", noun(b))),
                Scan::Exclusive => (format!("exclusive_{}", b.name()), format!("subgroupExclusive{}", b.glsl()),
                    format!("the {} of the values of the active lanes with id < the lane's id; the first active lane gets the identity", noun(b))),
            };
            v.push(entry(
                Op::Arithmetic(b, scan),
                name,
                glsl,
                C::Arithmetic,
                &[F::Arithmetic],
                &[],
                b.types(),
                R::SameAsValue,
                rule,
                GL,
            ));
        }
    }
    v.extend([
        entry(Op::Shuffle, "shuffle", "subgroupShuffle", C::Shuffle, &[F::Shuffle], &[A::Id { uniform: false }], T::Any, R::SameAsValue,
            "the value of lane `id`; undefined when that lane is inactive or id >= gl_SubgroupSize", GL),
        entry(Op::ShuffleXor, "shuffle_xor", "subgroupShuffleXor", C::Shuffle, &[F::Shuffle], &[A::Mask], T::Any, R::SameAsValue,
            "the value of lane (id ^ mask); undefined when that lane is inactive or >= gl_SubgroupSize", GL),
        entry(Op::ShuffleUp, "shuffle_up", "subgroupShuffleUp", C::ShuffleRelative, &[F::ShuffleRelative], &[A::Delta { uniform: false }], T::Any, R::SameAsValue,
            "the value of lane (id - delta); undefined when delta > id or that lane is inactive", GL),
        entry(Op::ShuffleDown, "shuffle_down", "subgroupShuffleDown", C::ShuffleRelative, &[F::ShuffleRelative], &[A::Delta { uniform: false }], T::Any, R::SameAsValue,
            "the value of lane (id + delta); undefined when id + delta >= gl_SubgroupSize or that lane is inactive", GL),
    ]);
    for b in BinOp::ALL {
        v.push(entry(Op::Clustered(b), format!("clustered_{}", b.name()), format!("subgroupClustered{}", b.glsl()),
            C::Clustered, &[F::Clustered], &[A::Cluster], b.types(), R::SameAsValue,
            format!("the {} of the values of the active lanes of the lane's cluster (lanes [x, x+n) with x a multiple of the cluster size n)", noun(b)), GL));
    }
    v.push(entry(Op::QuadBroadcast, "quad_broadcast", "subgroupQuadBroadcast", C::Quad, &[F::Quad], &[A::QuadIndex], T::Any, R::SameAsValue,
        "the value of lane (id & ~3) + index of the lane's quad; undefined when that lane is inactive", GL));
    for (d, n, g, rule) in [
        (QuadDir::Horizontal, "quad_swap_horizontal", "subgroupQuadSwapHorizontal", "swaps within each quad 0<->1 and 2<->3 (reads lane id ^ 1); undefined when that lane is inactive"),
        (QuadDir::Vertical, "quad_swap_vertical", "subgroupQuadSwapVertical", "swaps within each quad 0<->2 and 1<->3 (reads lane id ^ 2); undefined when that lane is inactive"),
        (QuadDir::Diagonal, "quad_swap_diagonal", "subgroupQuadSwapDiagonal", "swaps within each quad 0<->3 and 1<->2 (reads lane id ^ 3); undefined when that lane is inactive"),
    ] {
        v.push(entry(Op::QuadSwap(d), n, g, C::Quad, &[F::Quad], &[], T::Any, R::SameAsValue, rule, GL));
    }
    v.extend([
        entry(Op::Rotate, "rotate", "subgroupRotate", C::Rotate, &[F::Rotate], &[A::Delta { uniform: true }], T::Any, R::SameAsValue,
            "the value of lane (id + delta) mod gl_SubgroupSize (delta unsigned, dynamically uniform); undefined when that lane is inactive", ROT),
        entry(Op::ClusteredRotate, "clustered_rotate", "subgroupClusteredRotate", C::Rotate, &[F::Rotate, F::RotateClustered], &[A::Delta { uniform: true }, A::Cluster], T::Any, R::SameAsValue,
            "the value of lane ((id + delta) & (n-1)) + (id & ~(n-1)) for cluster size n; undefined when that lane is inactive", ROT),
    ]);
    v
}

/// The whole catalogue, in docs order.
///
/// ```
/// use lockstep::model::{catalogue, Category};
/// let ops = catalogue();
/// assert!(ops.iter().any(|o| o.name == "shuffle_down" && o.glsl == "subgroupShuffleDown"));
/// assert_eq!(ops.iter().filter(|o| o.category == Category::Clustered).count(), 7);
/// ```
pub fn catalogue() -> &'static [OpInfo] {
    static CAT: OnceLock<Vec<OpInfo>> = OnceLock::new();
    CAT.get_or_init(build)
}

/// The entry of `op`.
///
/// ```
/// use lockstep::model::{info, BinOp, Op};
/// assert_eq!(info(Op::Clustered(BinOp::Min)).name, "clustered_min");
/// ```
pub fn info(op: Op) -> &'static OpInfo {
    // Looked up by every subgroup instruction an interpreted kernel executes: a map built once
    // from the catalogue (the first entry of an operation, as a search in order finds it), not a
    // search of ~90 entries per call.
    type Index = std::collections::HashMap<Op, usize, foldhash::fast::FixedState>;
    static INDEX: OnceLock<Index> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m = Index::default();
        for (i, o) in catalogue().iter().enumerate() {
            m.entry(o.op).or_insert(i);
        }
        m
    });
    let i = index
        .get(&op)
        .expect("every Op variant has a catalogue entry (checked by a test)");
    &catalogue()[*i]
}

/// Finds an operation by its catalogue name or GLSL name; unknown names get the nearest suggestions.
///
/// ```
/// use lockstep::model::{lookup, Op};
/// assert_eq!(lookup("subgroupShuffleDown").unwrap().op, Op::ShuffleDown);
/// assert_eq!(lookup("shuffle_down").unwrap().op, Op::ShuffleDown);
/// let e = lookup("shufle_down").unwrap_err().to_string();
/// assert!(e.contains("did you mean shuffle_down"), "{e}");
/// ```
pub fn lookup(name: &str) -> Result<&'static OpInfo, ModelError> {
    let n = name.trim();
    if let Some(o) = catalogue().iter().find(|o| o.name == n || o.glsl == n) {
        return Ok(o);
    }
    // No op name is near 64 characters: longer input gets no suggestions, which also keeps the
    // quadratic edit distance off pathological input (found by the eval_cli fuzz target as a slow unit).
    if n.chars().count() > MAX_SUGGESTIBLE_NAME {
        return Err(ModelError::UnknownOp {
            name: n.to_string(),
            suggestions: Vec::new(),
        });
    }
    let lower = n.to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = catalogue()
        .iter()
        .map(|o| {
            let d = edit_distance(&lower, &o.name)
                .min(edit_distance(&lower, &o.glsl.to_ascii_lowercase()));
            (d, o.name.as_str())
        })
        .collect();
    scored.sort();
    let best = scored.first().map(|s| s.0).unwrap_or(usize::MAX);
    let limit = (n.len() / 3).max(2);
    let suggestions = scored
        .iter()
        .filter(|(d, _)| *d <= limit && *d <= best + 1)
        .take(3)
        .map(|(_, s)| s.to_string())
        .collect();
    Err(ModelError::UnknownOp {
        name: n.to_string(),
        suggestions,
    })
}

/// Unknown names longer than this get no "did you mean" suggestions.
const MAX_SUGGESTIBLE_NAME: usize = 64;

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    // The suggestions' distance is Levenshtein's: the fewest single-character insertions, deletions
    // and substitutions (kitten → sitting: k→s, e→i, +g).
    #[test]
    fn edit_distance_is_the_levenshtein_distance() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("flaw", "lawn"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("shuffle", "shuffle"), 0);
        assert_eq!(edit_distance("ab", "ba"), 2);
    }

    #[test]
    fn names_and_glsl_names_are_unique() {
        let mut names = HashSet::new();
        let mut glsl = HashSet::new();
        for o in catalogue() {
            assert!(names.insert(o.name.clone()), "duplicate {}", o.name);
            assert!(glsl.insert(o.glsl.clone()), "duplicate {}", o.glsl);
            assert_eq!(info(o.op).name, o.name);
        }
    }

    #[test]
    fn every_op_name_is_short_enough_for_suggestions() {
        for o in catalogue() {
            assert!(o.name.len() <= MAX_SUGGESTIBLE_NAME && o.glsl.len() <= MAX_SUGGESTIBLE_NAME);
        }
    }

    #[test]
    fn an_overlong_unknown_name_is_rejected_without_suggestions() {
        // The eval_cli fuzz target's slow unit: 127 op names joined by commas as one name.
        let long = vec!["ballot_find_msb"; 127].join(",");
        match lookup(&long) {
            Err(ModelError::UnknownOp { name, suggestions }) => {
                assert_eq!(name, long);
                assert!(suggestions.is_empty());
            }
            other => panic!("{other:?}"),
        }
        // A near miss of normal length still gets its suggestion.
        match lookup("ballot_find_mbs") {
            Err(ModelError::UnknownOp { suggestions, .. }) => {
                assert_eq!(
                    suggestions.first().map(String::as_str),
                    Some("ballot_find_msb")
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_catalogue_has_every_operation_of_the_issue() {
        // basic 10, vote 3, ballot 10, arithmetic 21, shuffle 2 + relative 2, clustered 7, quad 4, rotate 2
        assert_eq!(catalogue().len(), 10 + 3 + 10 + 21 + 4 + 7 + 4 + 2);
    }

    #[test]
    fn bitwise_ops_take_no_floats_and_arithmetic_no_bools() {
        let and = lookup("subgroupAnd").unwrap();
        assert!(!and.accepts("f32".parse().unwrap()));
        assert!(and.accepts("bool".parse().unwrap()));
        let add = lookup("inclusive_add").unwrap();
        assert!(!add.accepts("bvec2".parse().unwrap()));
        assert!(add.accepts("f16vec3".parse().unwrap()));
    }
}
