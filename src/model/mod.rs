//! The reference model of Vulkan/GLSL subgroup semantics (no Vulkan types in here).
//!
//! Start with [`catalogue`] (every operation as data), build an [`OpCall`] for a subgroup size, and
//! evaluate it with [`evaluate`] (one subgroup, each lane's [`Outcome`]) or [`evaluate_batch`]
//! (many subgroups in parallel). Workgroup built-ins live in [`WorkgroupLayout`].
//!
//! ```
//! use lockstep::model::*;
//! // GL_KHR_shader_subgroup.txt, clustered operations: the worked subgroupClusteredAdd example.
//! let size = SubgroupSize::new(8).unwrap();
//! let call = OpCall::new(lookup("subgroupClusteredAdd").unwrap(), size,
//!     Args { cluster: Some(2), ..Args::default() }).unwrap();
//! let x = [42.0f32, 13.0, -56.0, 0.0, 128.0, -1.0, 7.0, 3.5].map(|v| [v]);
//! let out = evaluate_typed(&call, size.full_mask(), &x).unwrap();
//! let got: Vec<f32> = out.iter().map(|o| o.value().unwrap().component_f64(0) as f32).collect();
//! assert_eq!(got, [55.0, 55.0, -56.0, -56.0, 127.0, 127.0, 10.5, 10.5]);
//! ```

mod call;
mod catalogue;
mod error;
mod eval;
mod outcome;
mod params;
mod scalar;
mod types;
mod value;
mod workgroup;

pub use call::{ArgSources, Args, LaneArg, OpCall};
pub use catalogue::{
    catalogue, info, lookup, ArgKind, Category, Exactness, Feature, MaskKind, Op, OpInfo, QuadDir,
    ResultKind, Scan,
};
pub use error::ModelError;
pub use eval::{
    ballot_bits, evaluate, evaluate_batch, evaluate_typed, gather_result, gather_source,
    rotate_source, run, value_lanes, BatchOutput, GatherPlan, Sink,
};
pub use outcome::{Outcome, Reason, ReasonDoc};
pub use params::{Ballot, ClusterSize, LaneMask, QuadIndex, SubgroupSize};
pub use scalar::{BinOp, Elem, Scalar};
pub use types::{ScalarType, TypeClass, TypeError, ValueType};
pub use value::Value;
pub use workgroup::{LaneOrder, Placement, WorkgroupLayout, WorkgroupShape, MAX_INVOCATIONS};
