//! The Vulkan backend: device discovery, capabilities, run-time GLSL compilation and compute dispatch.
//!
//! It knows nothing of the reference model: capabilities are plain data here, and the conformance
//! layer maps the model's operations onto them.

mod bind;
mod caps;
mod context;
mod images;
mod module;
mod reflect;
mod requirements;

pub use crate::words::compile::{
    assemble_spirv, compile_glsl, compile_glsl_with, compile_uncached, GlslError, GlslOptions,
    IncludeResolver, TargetEnv, MAX_INCLUDE_DEPTH,
};
pub(crate) use caps::DeviceInfo;
pub use caps::{Capabilities, SubgroupOps};
pub use context::{Context, Kernel, Pass};
pub(crate) use context::{KernelOptions, SpecValue};
pub(crate) use images::{vk_format, ImageBinding};
pub(crate) use module::declared_block_sizes;
pub use module::{BoundBuffer, DescriptorKind, ModuleDispatch, ModuleOutput, MODULE_TIMEOUT};
pub use reflect::SpecConstant;

/// A Vulkan failure, with enough context to act on.
#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// No Vulkan loader (libvulkan) could be loaded.
    #[error("no Vulkan loader found ({0}); install libvulkan1 and a driver (e.g. mesa-vulkan-drivers for lavapipe)")]
    NoLoader(String),
    /// The loader found no physical device.
    #[error("no Vulkan device found{0}; install a driver (e.g. mesa-vulkan-drivers for lavapipe) or check VK_DRIVER_FILES / VK_ICD_FILENAMES")]
    NoDevice(String),
    /// `--device N` beyond the list.
    #[error(
        "device index {index} is out of range: {count} device(s) found (see `lockstep devices`)"
    )]
    DeviceIndex {
        /// requested index
        index: usize,
        /// number of devices
        count: usize,
    },
    /// A shader failed to compile.
    #[error("{0}")]
    Compile(#[from] GlslError),
    /// The device lacks a feature, extension or limit the work needs (named, with its Vulkan
    /// name): not a failure of the device, a fact about it.
    #[error("unsupported by the device: {0}")]
    Unsupported(String),
    /// The work asked of the device does not fit the module (a missing or too small buffer,
    /// push constants of the wrong size, an unknown entry point, malformed SPIR-V, …).
    #[error("{0}")]
    Input(String),
    /// A Vulkan call failed.
    #[error("{what}: {detail}")]
    Vulkan {
        /// what was being done
        what: String,
        /// the driver's or vulkano's message
        detail: String,
    },
}

impl VkError {
    /// Wraps any displayable error with what was being done.
    pub fn vk(what: impl Into<String>, e: impl std::fmt::Display) -> VkError {
        VkError::Vulkan {
            what: what.into(),
            detail: e.to_string(),
        }
    }

    /// True when the device lacks something the work needs ([`VkError::Unsupported`]).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, VkError::Unsupported(_))
    }

    /// True when there is no loader or no device (the CLI's exit code 2).
    pub fn is_no_device(&self) -> bool {
        matches!(self, VkError::NoLoader(_) | VkError::NoDevice(_))
    }
}
