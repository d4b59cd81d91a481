//! lockstep: what exactly does a subgroup operation do, and does my GPU do it?
//!
//! - [`model`]: the reference model of every GL_KHR_shader_subgroup operation (plus rotate), with
//!   undefined results as typed outcomes.
//! - [`reconverge`]: divergence and reconvergence — structured programs executed on the model under
//!   maximal / subgroup-uniform / core reconvergence, and fuzzed against a device.
#![warn(missing_docs)]

pub mod cli;
#[cfg(feature = "vulkan")]
pub mod conform;
pub mod docs;
pub mod grayscott;
pub mod model;
pub mod reconverge;
pub mod text;
#[cfg(feature = "vulkan")]
pub mod vulkan;
