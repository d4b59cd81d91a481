//! A crate with a GPU kernel: a workgroup reduction through shared memory and subgroup adds.
//! Its tests (`tests/reduce.rs`) check the kernel with lockstep on the model.

/// The kernel's GLSL source.
pub const REDUCE: &str = include_str!("../kernels/reduce.comp");
