//! The integration tests, one test binary: each file under `tests/` is a module of it (`cargo test
//! --release --test suite kernel::` runs the tests of `tests/kernel.rs`). One binary instead of one
//! per file: lockstep, vulkano and naga are linked once, not 29 times, and the long tests of one
//! file (lavapipe at three subgroup sizes, the device pages) run beside the others instead of after
//! them (issue 22: `./test` on a fresh machine).

mod amber;
mod amber_coverage;
mod buffer_reference;
mod cli;
#[cfg(feature = "vulkan")]
mod conform;
mod device_pages;
mod docs;
#[cfg(feature = "vulkan")]
mod examples;
mod fidelity;
mod grayscott;
mod images;
mod inlining;
mod instructions;
mod kernel;
mod lavapipe_sizes;
#[cfg(feature = "vulkan")]
mod library;
mod memory_model;
mod memory_scopes;
mod model_rules;
#[cfg(feature = "vulkan")]
mod module_run;
mod promotion;
mod properties;
mod reconverge;
mod samplers;
mod shard;
mod spec_examples;
mod spirv;
mod spirv_grayscott;
mod spirv_reconverge;
#[cfg(feature = "vulkan")]
mod spirv_support;
mod support;
mod tangled;
#[cfg(feature = "vulkan")]
mod tolerance;
mod undefined_rules;
mod unrolling;
mod verdicts;
