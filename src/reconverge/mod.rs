//! Divergence and reconvergence: structured programs run on the model under the three
//! reconvergence models, and the same programs run on a device and compared.
//!
//! - [`program`]: the AST of structured programs (if/else, loops with break/continue, switch,
//!   return, calls; subgroup operations, atomics and stores, each recorded under a tag).
//! - [`flow`]: the reconvergence rules (which lanes execute together, what each model pins down),
//!   shared with the SPIR-V interpreter.
//! - [`exec`]: the workgroup executor, lane by lane, under [`Mode::Maximal`], [`Mode::Sucf`] or
//!   [`Mode::Base`]; results the model does not pin down are [`Val::Undefined`] with
//!   [`crate::model::Reason::UnpinnedTangle`].
//! - [`seed001`]: the allocation kernel of VK_KHR_shader_subgroup_uniform_control_flow and its fixed
//!   version, and the lane-by-lane trace the docs show.
//! - [`layout`]: does a kernel's result depend on the lane layout of a 2D workgroup?
//! - [`params`]: a program's parameters (masks, salts, operand constants) apart from its shape, so
//!   programs of one shape can share a compiled shader.
//! - [`gen`]: a proptest strategy of random programs, and variants of one shape.
//! - [`glsl`]: a program (or a batch of them) as a GLSL compute shader.
//! - [`compare`]: a device's records against the executor's.
//! - [`campaign`]: many programs through a device — generate, build, run, compare, shrink — on
//!   several threads.
//! - `device` (feature `vulkan`): programs on a Vulkan device.

pub mod campaign;
pub mod compare;
#[cfg(feature = "vulkan")]
pub mod device;
pub mod exec;
pub mod flow;
pub mod r#gen;
pub mod glsl;
pub mod layout;
pub mod mode;
pub mod params;
pub mod program;
pub mod seed001;

pub use exec::{
    execute, execute_with, AtomicOp, ExecError, Execution, LaneMap, Limits, Mode, NoObserver,
    Observer, OpEvent, Record, Val,
};
pub use flow::{Flow, Lost, PerGroup};
pub use params::Param;
pub use program::{
    Case, Cond, Form, Input, Operand, Program, ProgramError, Reg, Selector, SgOp, Stmt, Trips,
    COUNTERS, MAX_TRIPS, OPS, REGS,
};
