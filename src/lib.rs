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
//!
//! # Checking a kernel of your own from `cargo test`
//!
//! The library API is a handful of names at the crate root: compile a kernel ([`compile`] or
//! [`load`]), give its buffers ([`HostBuffer`]) to a [`KernelJob`], [`KernelJob::check`] it on the
//! model (or [`KernelJob::check_on`] a Vulkan device), and read the [`Report`]:
//!
//! ```
//! # #[cfg(feature = "glsl")] {
//! use lockstep::{compile, HostBuffer, JobBuffer, KernelJob, SourceLang, SourceOptions};
//! let src = "#version 450
//! #extension GL_KHR_shader_subgroup_arithmetic : require
//! layout(local_size_x = 8) in;
//! layout(binding = 0) buffer B { uint v[]; };
//! void main() { v[gl_GlobalInvocationID.x] = subgroupAdd(v[gl_GlobalInvocationID.x]); }";
//! let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
//! let mut job = KernelJob::new(module);
//! job.buffers.push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[1u32; 8])));
//! let report = job.check(8).unwrap();
//! assert!(report.ok(), "{}", report.text());
//! // every lane of the one subgroup of 8 holds the sum, 8
//! assert_eq!(report.buffers[0].exact, 8);
//! # }
//! ```
//!
//! A kernel with a race is not ok, and says where:
//!
//! ```
//! # #[cfg(feature = "glsl")] {
//! use lockstep::{compile, HostBuffer, JobBuffer, KernelJob, SourceLang, SourceOptions};
//! let src = "#version 450
//! layout(local_size_x = 8) in;
//! layout(binding = 0) buffer B { uint v[]; };
//! void main() { v[0] = gl_LocalInvocationID.x; }";
//! let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
//! let mut job = KernelJob::new(module);
//! job.buffers.push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; 8])));
//! let report = job.check(8).unwrap();
//! assert!(!report.ok());
//! assert!(report.text().contains("race"), "{}", report.text());
//! # }
//! ```
//!
//! Building without the Vulkan backend (`default-features = false, features = ["glsl"]`) keeps a
//! downstream crate's build free of vulkano; `examples/kernel-test/` is such a crate.
#![warn(missing_docs)]

pub use kernel::run::{JobBuffer, KernelError, KernelJob, Report, Tolerance};
pub use kernel::{compile, load, HostBuffer, SourceLang, SourceOptions, SpirvModule};
pub use model::SubgroupSize;

pub mod amber;
pub mod cli;
#[cfg(feature = "vulkan")]
pub mod conform;
pub(crate) mod docs;
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
