//! Random programs (or the seed 001 kernels) on a Vulkan device, compared with the executor; a
//! failing program is shrunk to a minimal one and printed as GLSL.
//!
//! A batch of programs becomes one shader (workgroup `k` runs program `k`), compiled *without*
//! optimisation so that spirv-opt cannot restructure the control flow whose reconvergence is under
//! test, then one dispatch of as many workgroups. Batches are compiled and turned into pipelines in
//! parallel (rayon) and dispatched one after another.

use crate::model::{SubgroupSize, WorkgroupShape};
use crate::reconverge::compare::{compare, Comparison};
use crate::reconverge::exec::Mode;
use crate::reconverge::gen::Shrunk;
use crate::reconverge::glsl::{shader, RecordLayout, COUNTER_WORDS, SENTINEL};
use crate::reconverge::program::Program;
use crate::vulkan::{Capabilities, Context, GlslError, Kernel, KernelOptions, VkError};
use proptest::strategy::ValueTree;
use rayon::prelude::*;
use std::sync::Arc;

/// How programs run on the device.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// the reconvergence model requested (and compared against)
    pub mode: Mode,
    /// the workgroup shape
    pub shape: WorkgroupShape,
    /// where records go
    pub layout: RecordLayout,
}

impl Setup {
    /// 128 invocations in a line, 64 records each: four subgroups of 32 on an H100, sixteen of 8
    /// on lavapipe.
    pub fn new(mode: Mode, subgroup_size: u32) -> Setup {
        Setup {
            mode,
            shape: WorkgroupShape { x: 128, y: 1, z: 1 },
            layout: RecordLayout::new(64, subgroup_size),
        }
    }

    /// The setup for the device of `ctx`.
    pub fn for_device(ctx: &Context, mode: Mode) -> Setup {
        Setup::new(mode, ctx.caps.subgroup_size)
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

/// Builds the kernel that runs `programs`, one per workgroup.
pub fn prepare(ctx: &Context, setup: &Setup, programs: &[Program]) -> Result<Kernel, VkError> {
    let src = shader(programs, setup.mode, setup.shape, setup.layout);
    let words = compile(&src, "reconverge")?;
    ctx.kernel(&words, &KernelOptions::default())
}

/// Dispatches `kernel` (built by [`prepare`] for `programs`) and compares every workgroup.
pub fn run(
    ctx: &Context,
    setup: &Setup,
    kernel: &Kernel,
    programs: &[Program],
) -> Result<Vec<Comparison>, VkError> {
    let k = programs.len();
    let per = setup.shape.invocations() as usize * setup.layout.stride_words();
    let head = k * COUNTER_WORDS;
    let mut init = vec![
        SENTINEL;
        setup
            .layout
            .buffer_words(k, setup.shape.invocations() as usize)
    ];
    init[..head].fill(0);
    let buf = ctx.host_buffer(&init)?;
    ctx.dispatch(
        kernel,
        &[(vec![buf.clone().into_bytes()], [k as u32, 1, 1])],
    )?;
    let size = SubgroupSize::new(ctx.caps.subgroup_size as u64)
        .map_err(|e| VkError::vk("reading the subgroup size", e))?;
    let data = buf
        .read()
        .map_err(|e| VkError::vk("reading the results", e))?;
    let (c, r) = data.split_at(head);
    Ok(programs
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            compare(
                p,
                setup.mode,
                setup.shape,
                size,
                setup.layout,
                &r[i * per..(i + 1) * per],
                &c[i * COUNTER_WORDS..(i + 1) * COUNTER_WORDS],
            )
        })
        .collect())
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

/// Builds the kernels of several batches in parallel (GLSL, shaderc, pipeline creation).
pub fn prepare_all(
    ctx: &Context,
    setup: &Setup,
    batches: &[Vec<Program>],
) -> Result<Vec<Kernel>, VkError> {
    batches.par_iter().map(|b| prepare(ctx, setup, b)).collect()
}

/// Shrinks a failing program on the device (see [`crate::reconverge::gen::shrink`]): each
/// candidate runs alone; stops after `max_steps` device runs or at `deadline`.
pub fn shrink(
    ctx: &Context,
    setup: &Setup,
    tree: &mut dyn ValueTree<Value = Program>,
    first: Comparison,
    max_steps: u32,
    deadline: Option<std::time::Instant>,
) -> Result<Shrunk, VkError> {
    crate::reconverge::gen::shrink(tree, first, max_steps, deadline, |p| {
        Ok(run_programs(ctx, setup, std::slice::from_ref(p))?
            .pop()
            .unwrap_or_default())
    })
}
