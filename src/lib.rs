//! lockstep: what exactly does a subgroup operation do, and does my GPU do it?
//!
//! - [`model`]: the reference model of every GL_KHR_shader_subgroup operation (plus rotate), with
//!   undefined results as typed outcomes.
//! - [`amber`]: AmberScript compute tests (the Vulkan CTS format) read, run on a backend, checked.
//! - [`kernel`]: users' own kernels: GLSL, SPIR-V or WGSL sources to one SPIR-V module, and
//!   their buffers (`.npy` files and specs such as `random:f32:1024:7`).
//! - [`reconverge`]: divergence and reconvergence — structured programs executed on the model under
//!   maximal / subgroup-uniform / core reconvergence, and fuzzed against a device.
//! - [`spirv`]: a SPIR-V interpreter on the model — a user's compute shader run lane by lane, with
//!   undefined, order-dependent and racy values tracked to the buffers they reach.
#![warn(missing_docs)]

pub mod amber;
pub mod cli;
#[cfg(feature = "vulkan")]
pub mod conform;
pub mod docs;
pub mod files;
pub mod grayscott;
pub mod kernel;
pub mod merge;
pub mod model;
pub mod reconverge;
pub mod shard;
pub mod spirv;
pub mod text;
#[cfg(feature = "vulkan")]
pub mod vulkan;
pub mod words;
