//! lockstep: what exactly does a subgroup operation do, and does my GPU do it?
//!
//! - [`model`]: the reference model of every GL_KHR_shader_subgroup operation (plus rotate), with
//!   undefined results as typed outcomes.
#![warn(missing_docs)]

pub mod cli;
#[cfg(feature = "vulkan")]
pub mod conform;
pub mod docs;
pub mod grayscott;
pub mod model;
#[cfg(feature = "vulkan")]
pub mod vulkan;
