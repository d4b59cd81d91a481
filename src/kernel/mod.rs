//! Users' own kernels: sources turned into one SPIR-V module ([`source`]) and the buffers they run
//! on ([`buffers`]).
//!
//! Both the interpreter and the device get the same module: GLSL, SPIR-V assembly, SPIR-V binary
//! or WGSL in, SPIR-V words out. Buffers come from `.npy` files or short specs
//! (`zeros:u32:1024`, `random:f32:1024:7`, …) and go back out as `.npy` files. See
//! `docs/kernels.md` for what is accepted and why.

mod addresses;
pub mod buffers;
mod check;
mod hints;
pub(crate) mod images;
mod report;
pub mod run;
pub mod source;
mod tolerance;

pub use buffers::JobBuffer;
pub use buffers::{
    element_size, read_npy, write_npy, AddressRef, BindingSpec, BufferError, BufferSpec,
    HostBuffer, MAX_BUFFER_BYTES,
};
pub use source::{compile, load, SourceError, SourceLang, SourceOptions, SpirvModule, TargetEnv};
pub use tolerance::Tolerance;
