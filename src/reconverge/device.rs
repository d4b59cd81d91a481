//! Programs on a Vulkan device: what a device must support, compiling, dispatching, and
//! [`VulkanDevice`], the device a [`campaign`](crate::reconverge::campaign) runs on.
//!
//! A batch of programs becomes one shader (workgroup `k` runs program `k`), compiled *without*
//! optimisation so that spirv-opt cannot restructure the control flow whose reconvergence is under
//! test, then one dispatch of as many workgroups. With [`Setup::parametric`], programs of one shape
//! share one copy of the code and read their parameters from a second buffer (binding 1).

use crate::model::SubgroupSize;
pub use crate::reconverge::campaign::Setup;
use crate::reconverge::campaign::{compare_batch, Device, Times};
use crate::reconverge::compare::Comparison;
use crate::reconverge::glsl::{parametric_shader, shader, COUNTER_WORDS, SENTINEL};
use crate::reconverge::mode::Mode;
use crate::reconverge::program::Program;
use crate::vulkan::{Capabilities, Context, GlslError, Kernel, KernelOptions, VkError};
use std::sync::Arc;
use std::time::Instant;

impl Setup {
    /// The setup for the device of `ctx`.
    pub fn for_device(ctx: &Context, mode: Mode) -> Setup {
        Setup::new(mode, ctx.caps.subgroup_size)
    }
}

/// How a campaign runs on a device unless told otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    /// shapes per shader: a batch is this many times `--variants` programs
    pub shapes: usize,
    /// contexts (logical devices) opened
    pub contexts: usize,
}

impl Defaults {
    /// A CPU device (lavapipe): one shape per shader — llvmpipe's compile time grows faster than
    /// the shader — and two contexts, since lavapipe compiles a pipeline on its queue's thread
    /// when it first runs it (one queue would compile on one core).
    pub const CPU: Defaults = Defaults {
        shapes: 1,
        contexts: 2,
    };
    /// A GPU: the driver compiles in vkCreateComputePipelines, on the calling thread, and its
    /// compile time grows with the code: four shapes per shader and two contexts were the fastest
    /// on the H100 (docs/reconvergence.md).
    pub const GPU: Defaults = Defaults {
        shapes: 4,
        contexts: 2,
    };

    /// The defaults for `ctx`'s device.
    pub fn for_device(ctx: &Context) -> Defaults {
        if ctx.info.device_type == "cpu" {
            Defaults::CPU
        } else {
            Defaults::GPU
        }
    }
}

/// Why the device cannot run `mode` (`None` if it can).
pub fn unsupported(caps: &Capabilities, mode: Mode) -> Option<String> {
    let ops = &caps.ops;
    if !caps.compute {
        return Some("subgroup operations are not supported in compute shaders".into());
    }
    let missing: Vec<&str> = [
        (ops.basic, "basic"),
        (ops.vote, "vote"),
        (ops.ballot, "ballot"),
        (ops.arithmetic, "arithmetic"),
        (ops.shuffle_relative, "shuffle_relative"),
    ]
    .into_iter()
    .filter(|(b, _)| !b)
    .map(|(_, n)| n)
    .collect();
    if !missing.is_empty() {
        return Some(format!(
            "subgroup operation categories missing: {}",
            missing.join(", ")
        ));
    }
    match mode {
        Mode::Maximal if !caps.maximal_reconvergence => Some(
            "shaderMaximalReconvergence is not supported (VK_KHR_shader_maximal_reconvergence)"
                .into(),
        ),
        Mode::Sucf if !caps.subgroup_uniform_control_flow => Some(
            "shaderSubgroupUniformControlFlow is not supported \
             (VK_KHR_shader_subgroup_uniform_control_flow)"
                .into(),
        ),
        _ => None,
    }
}

/// Compiles a compute shader to SPIR-V 1.3 for Vulkan 1.1 with optimisation off, uncached (every
/// random program is new).
pub fn compile(source: &str, name: &str) -> Result<Arc<Vec<u32>>, GlslError> {
    crate::vulkan::compile_uncached(source, name, false)
}

/// The GLSL of the shader running `programs` under `setup`, and its parameter buffer's words if
/// [`Setup::parametric`].
pub fn source(setup: &Setup, programs: &[Program]) -> (String, Option<Vec<u32>>) {
    if setup.parametric {
        let s = parametric_shader(programs, setup.mode, setup.shape, setup.layout);
        (s.glsl, Some(s.params))
    } else {
        let glsl = shader(programs, setup.mode, setup.shape, setup.layout);
        (glsl, None)
    }
}

/// A kernel built for a batch of programs, with the parameter buffer's words it reads (if
/// parametric).
pub struct Prepared {
    /// the pipeline
    pub kernel: Kernel,
    /// the parameter buffer (binding 1), if parametric
    pub params: Option<Vec<u32>>,
}

/// Builds the kernel that runs `programs`, one per workgroup.
pub fn prepare(ctx: &Context, setup: &Setup, programs: &[Program]) -> Result<Prepared, VkError> {
    let (src, params) = source(setup, programs);
    let words = compile(&src, "reconverge")?;
    Ok(Prepared {
        kernel: ctx.kernel(&words, &KernelOptions::default())?,
        params,
    })
}

/// Dispatches `kernel` (built by [`prepare`] for `programs` workgroups, reading `params` if
/// parametric) on a buffer pre-filled with [`SENTINEL`] (counters 0) and returns the buffer as
/// [`RecordLayout::buffer_words`] lays it out.
///
/// [`RecordLayout::buffer_words`]: crate::reconverge::glsl::RecordLayout::buffer_words
pub fn dispatch(
    ctx: &Context,
    setup: &Setup,
    kernel: &Kernel,
    params: Option<&[u32]>,
    programs: usize,
) -> Result<Vec<u32>, VkError> {
    let mut init = vec![
        SENTINEL;
        setup
            .layout
            .buffer_words(programs, setup.shape.invocations() as usize)
    ];
    init[..programs * COUNTER_WORDS].fill(0);
    let buf = ctx.host_buffer(&init)?;
    let mut buffers = vec![buf.clone().into_bytes()];
    if let Some(p) = params {
        buffers.push(ctx.host_buffer(p)?.into_bytes());
    }
    ctx.dispatch(kernel, &[(buffers, [programs as u32, 1, 1])])?;
    let data = buf
        .read()
        .map_err(|e| VkError::vk("reading the results", e))?;
    Ok(data.to_vec())
}

/// The subgroup size of `ctx`'s device.
pub fn subgroup_size(ctx: &Context) -> Result<SubgroupSize, VkError> {
    SubgroupSize::new(ctx.caps.subgroup_size as u64)
        .map_err(|e| VkError::vk("reading the subgroup size", e))
}

/// Dispatches `kernel` (built by [`prepare`] for `programs`) and compares every workgroup.
pub fn run(
    ctx: &Context,
    setup: &Setup,
    kernel: &Prepared,
    programs: &[Program],
) -> Result<Vec<Comparison>, VkError> {
    let words = dispatch(
        ctx,
        setup,
        &kernel.kernel,
        kernel.params.as_deref(),
        programs.len(),
    )?;
    Ok(compare_batch(setup, subgroup_size(ctx)?, programs, &words))
}

/// Builds and runs `programs` (one batch).
pub fn run_programs(
    ctx: &Context,
    setup: &Setup,
    programs: &[Program],
) -> Result<Vec<Comparison>, VkError> {
    let kernel = prepare(ctx, setup, programs)?;
    run(ctx, setup, &kernel, programs)
}

/// A Vulkan device for [`campaign::run`](crate::reconverge::campaign::run): one or more
/// contexts (logical devices, each with its own queue) on one physical device; worker `w` uses
/// context `w % contexts`. lavapipe compiles a pipeline's code on its queue's thread when it first
/// runs it, so more than one context lets it compile on more than one core.
pub struct VulkanDevice<'a> {
    contexts: &'a [Context],
    setup: Setup,
    size: SubgroupSize,
    unoptimized: bool,
}

impl<'a> VulkanDevice<'a> {
    /// Runs `setup` on `contexts` (at least one, all on the same physical device).
    pub fn new(contexts: &'a [Context], setup: Setup) -> Result<VulkanDevice<'a>, VkError> {
        let first = contexts
            .first()
            .ok_or_else(|| VkError::vk("opening the device", "no context"))?;
        Ok(VulkanDevice {
            contexts,
            setup,
            size: subgroup_size(first)?,
            unoptimized: false,
        })
    }

    /// Creates pipelines with `VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT`: a driver that honours
    /// it spends less time compiling, but the device then runs code built differently from what
    /// kernels normally run (an option for measuring, off by default).
    pub fn unoptimized(mut self, on: bool) -> Self {
        self.unoptimized = on;
        self
    }
}

impl Device for VulkanDevice<'_> {
    type Error = VkError;

    fn run(
        &self,
        worker: usize,
        programs: &[Program],
        times: &mut Times,
    ) -> Result<Vec<u32>, VkError> {
        let ctx = &self.contexts[worker % self.contexts.len()];
        let setup = &self.setup;
        let t = Instant::now();
        let (src, params) = source(setup, programs);
        let t1 = Instant::now();
        let words = compile(&src, "reconverge")?;
        let t2 = Instant::now();
        let kernel = if self.unoptimized {
            ctx.kernel_unoptimized(&words, &KernelOptions::default())?
        } else {
            ctx.kernel(&words, &KernelOptions::default())?
        };
        let t3 = Instant::now();
        let out = dispatch(ctx, setup, &kernel, params.as_deref(), programs.len())?;
        let t4 = Instant::now();
        times.glsl += t1 - t;
        times.shaderc += t2 - t1;
        times.pipeline += t3 - t2;
        times.dispatch += t4 - t3;
        Ok(out)
    }

    fn subgroup_size(&self) -> SubgroupSize {
        self.size
    }
}
