//! The GPU backend: the course's kernels in `shaders/grayscott/`, embedded in the binary, compiled
//! at run time by shaderc (once per process) and specialised (domain size and parameters are
//! specialization constants), dispatched through [`crate::vulkan::Context`].
//!
//! Variants: `naive` (2D workgroups, every neighbour loaded from memory, no subgroup operation), the
//! three subgroup layouts of [`Tiling`] (`subgroup-1d`, `subgroup-stacked`, `subgroup-shared`) on
//! planar storage (U and V in separate buffers), and two kernels on interleaved storage (one `vec2`
//! per cell, so that a lane loads both values of a cell at once): `subgroup-stacked-uv` (the
//! stacked layout) and `subgroup-tile` ([`Tile`]: each lane keeps a column of cells in registers
//! and advances them `T` steps per trip through memory). The subgroup variants need Vulkan 1.1,
//! subgroup operations in compute shaders, SHUFFLE_RELATIVE and subgroups of at least 4 lanes;
//! [`Plan::new`] checks all of it, and the workgroup and subgroup sizes, before anything is built.
//!
//! [`CopyCeiling`] measures the memory ceiling with several copy kernels ([`CopyKind`]): scalar,
//! `vec4` loads and stores with several vec4s in flight per invocation, grid-stride loops, planar
//! and interleaved; the benchmark takes the fastest as the ceiling.

pub use super::layout::Tile;
use super::layout::{Shape, Tiling};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::vulkan::{Capabilities, Context, Kernel, KernelOptions, Pass, SpecValue, VkError};
use std::time::Duration;
use vulkano::buffer::Subbuffer;

/// The course's shaders, compiled at run time from the sources embedded in the binary (with their
/// `#include`s), once per process: the same shaderc as users' kernels, no build-time proc macro.
mod shaders {
    use crate::vulkan::{compile_glsl_with, GlslOptions, TargetEnv, VkError};
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    use vulkano::device::Device;
    use vulkano::shader::{ShaderModule, ShaderModuleCreateInfo};

    /// Every file of `shaders/grayscott/`, by name.
    const FILES: &[(&str, &str)] = &[
        (
            "naive.comp",
            include_str!("../../shaders/grayscott/naive.comp"),
        ),
        (
            "subgroup_1d.comp",
            include_str!("../../shaders/grayscott/subgroup_1d.comp"),
        ),
        (
            "subgroup_stacked.comp",
            include_str!("../../shaders/grayscott/subgroup_stacked.comp"),
        ),
        (
            "subgroup_shared.comp",
            include_str!("../../shaders/grayscott/subgroup_shared.comp"),
        ),
        (
            "subgroup_stacked_uv.comp",
            include_str!("../../shaders/grayscott/subgroup_stacked_uv.comp"),
        ),
        (
            "subgroup_tile.comp",
            include_str!("../../shaders/grayscott/subgroup_tile.comp"),
        ),
        (
            "copy.comp",
            include_str!("../../shaders/grayscott/copy.comp"),
        ),
        (
            "copy_vec4.comp",
            include_str!("../../shaders/grayscott/copy_vec4.comp"),
        ),
        (
            "copy_uv.comp",
            include_str!("../../shaders/grayscott/copy_uv.comp"),
        ),
        (
            "common.glsl",
            include_str!("../../shaders/grayscott/common.glsl"),
        ),
        (
            "common_uv.glsl",
            include_str!("../../shaders/grayscott/common_uv.glsl"),
        ),
        (
            "params.glsl",
            include_str!("../../shaders/grayscott/params.glsl"),
        ),
        (
            "subgroup.glsl",
            include_str!("../../shaders/grayscott/subgroup.glsl"),
        ),
    ];

    /// Compiled shaders by name.
    type Cache = Mutex<HashMap<&'static str, Arc<Vec<u32>>>>;

    fn compiled() -> &'static Cache {
        static C: OnceLock<Cache> = OnceLock::new();
        C.get_or_init(Default::default)
    }

    /// The SPIR-V of `name` (SPIR-V 1.3 for Vulkan 1.1, as the GPU runs it).
    pub fn words(name: &'static str) -> Result<Arc<Vec<u32>>, VkError> {
        if let Some(w) = compiled().lock().ok().and_then(|c| c.get(name).cloned()) {
            return Ok(w);
        }
        let text = FILES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                VkError::vk("compiling a Gray-Scott shader", format!("no shader {name}"))
            })?;
        let include = |req: &str, _: bool, _: &str, _: usize| -> Result<(String, String), String> {
            FILES
                .iter()
                .find(|(n, _)| *n == req)
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .ok_or_else(|| format!("no file {req} in shaders/grayscott"))
        };
        let opts = GlslOptions {
            env: TargetEnv::Vulkan1_1,
            defines: &[],
            debug_info: false,
            include: Some(&include),
        };
        let w = Arc::new(
            compile_glsl_with(text, name, &opts)
                .map_err(|e| VkError::vk("compiling a Gray-Scott shader", e))?,
        );
        if let Ok(mut c) = compiled().lock() {
            c.insert(name, w.clone());
        }
        Ok(w)
    }

    /// `name` loaded on `dev`.
    pub fn load(name: &'static str, dev: Arc<Device>) -> Result<Arc<ShaderModule>, VkError> {
        let w = words(name)?;
        // SAFETY: the words are SPIR-V shaderc produced from the project's own shaders, which the
        // tests run on lavapipe and the H100; vulkano checks the module's declarations.
        unsafe { ShaderModule::new(dev, ShaderModuleCreateInfo::new(&w)) }.map_err(|e| match e {
            vulkano::Validated::Error(e) => VkError::vk(format!("loading {name}"), e),
            vulkano::Validated::ValidationError(v) => VkError::vk(format!("loading {name}"), v),
        })
    }
}

/// A GPU kernel variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// 2D workgroups, loads only.
    Naive,
    /// One of the course's subgroup layouts (not the broken ones, which have no kernel).
    Subgroup(Tiling),
    /// The course's stacked layout on interleaved storage (`subgroup_stacked_uv.comp`).
    StackedUv,
    /// Register tiles, several steps per pass (`subgroup_tile.comp`).
    Tile(Tile),
}

impl Variant {
    /// Every variant with a kernel (the tile kernel at [`Tile::DEFAULT`]).
    pub const ALL: [Variant; 6] = [
        Variant::Naive,
        Variant::Subgroup(Tiling::OneD),
        Variant::Subgroup(Tiling::Stacked),
        Variant::Subgroup(Tiling::Shared),
        Variant::StackedUv,
        Variant::Tile(Tile::DEFAULT),
    ];

    /// Command-line name (for the tile kernel without its parameters: see [`Variant::label`]).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::Subgroup(l) => l.name(),
            Variant::StackedUv => "subgroup-stacked-uv",
            Variant::Tile(_) => "subgroup-tile",
        }
    }

    /// The name with the tile's parameters, as [`Variant::parse`] reads it:
    /// `subgroup-tile-t{steps}-r{rows}`; the other variants' [`Variant::name`].
    pub fn label(self) -> String {
        match self {
            Variant::Tile(t) => t.name(),
            v => v.name().to_string(),
        }
    }

    /// Parses [`Variant::name`] and [`Variant::label`]: `subgroup-tile` is [`Tile::DEFAULT`],
    /// `subgroup-tile-t{T}` has `T` steps per pass and the default rows, `subgroup-tile-t{T}-r{R}`
    /// both. The tile's sizes are checked by [`Plan::new`].
    ///
    /// ```
    /// use lockstep::grayscott::gpu::{Tile, Variant};
    /// assert_eq!(Variant::parse("subgroup-tile-t4-r32"), Some(Variant::Tile(Tile { steps: 4, rows: 32 })));
    /// assert_eq!(Variant::parse("subgroup-tile"), Some(Variant::Tile(Tile::DEFAULT)));
    /// assert_eq!(Variant::parse("subgroup-tile-t"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Variant> {
        if let Some(t) = Tile::parse(s) {
            return Some(Variant::Tile(t));
        }
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// The default workgroup: 16×16 for `naive` (the course's 2D default), 128 for the subgroup
    /// variants (the course's default: a multiple of every subgroup size up to 128).
    pub fn default_workgroup(self) -> [u32; 2] {
        match self {
            Variant::Naive => [16, 16],
            _ => [128, 1],
        }
    }

    /// True for the kernels on interleaved storage (one `vec2` of U, V per cell).
    pub fn interleaved(self) -> bool {
        matches!(self, Variant::StackedUv | Variant::Tile(_))
    }

    /// Steps one dispatch advances.
    pub fn steps_per_pass(self) -> u32 {
        match self {
            Variant::Tile(t) => t.steps,
            _ => 1,
        }
    }
}

/// Index of each specialization constant (see `shaders/grayscott/common.glsl`).
mod spec {
    pub const WORKGROUP_X: u32 = 0;
    pub const WORKGROUP_Y: u32 = 1;
    pub const UV_WIDTH: u32 = 2;
    pub const UV_HEIGHT: u32 = 3;
    pub const FEED_RATE: u32 = 4;
    pub const KILL_RATE: u32 = 5;
    pub const DELTA_T: u32 = 6;
    pub const DIFFUSION_RATE_U: u32 = 7;
    pub const DIFFUSION_RATE_V: u32 = 8;
    pub const STEPS: u32 = 9;
    pub const TILE_ROWS: u32 = 10;
    pub const UV_PITCH: u32 = 11;
    pub const COPY_ITEMS: u32 = 12;
}

/// A checked kernel configuration for one device: everything needed to build and dispatch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// the variant
    pub variant: Variant,
    /// workgroup shape `[x, y]` (`y` = 1 for the subgroup variants)
    pub workgroup: [u32; 2],
    /// the subgroup size the kernel runs at (the device's default unless one was required)
    pub subgroup: u32,
    /// `requiredSubgroupSize` for the pipeline (only with subgroup size control)
    pub required_subgroup: Option<u32>,
    /// the subgroup layout's shape (`None` for naive and the tile kernel, whose geometry is its
    /// [`Tile`])
    pub shape: Option<Shape>,
}

fn requirement(variant: Variant, why: impl Into<String>) -> GrayScottError {
    GrayScottError::Requirement {
        variant: variant.name(),
        why: why.into(),
    }
}

impl Plan {
    /// Checks `variant` with an optional workgroup shape and subgroup size against a device with
    /// capabilities `caps` and API version `api` (major, minor).
    ///
    /// Rules: the subgroup variants need Vulkan ≥ 1.1, subgroup operations in compute shaders,
    /// SHUFFLE_RELATIVE and a subgroup size ≥ 4; a requested subgroup size other than the device's
    /// default needs subgroup size control and must lie in [min, max]; the workgroup must be 1D, a
    /// multiple of the subgroup size and within the device's limits. `naive` takes a 2D workgroup
    /// and no subgroup size.
    pub fn new(
        caps: &Capabilities,
        api: (u32, u32),
        variant: Variant,
        workgroup: Option<[u32; 2]>,
        subgroup: Option<u32>,
    ) -> Result<Plan, GrayScottError> {
        let wg = workgroup.unwrap_or(variant.default_workgroup());
        let invocations = wg[0] as u64 * wg[1] as u64;
        if wg[0] == 0 || wg[1] == 0 {
            return Err(GrayScottError::Config(format!(
                "workgroup {}x{} is invalid: both sizes must be at least 1",
                wg[0], wg[1]
            )));
        }
        if invocations > caps.max_workgroup_invocations as u64
            || wg[0] > caps.max_workgroup_size[0]
            || wg[1] > caps.max_workgroup_size[1]
        {
            return Err(GrayScottError::Config(format!(
                "workgroup {}x{} is too large for the device: at most {} invocations and {}x{}",
                wg[0],
                wg[1],
                caps.max_workgroup_invocations,
                caps.max_workgroup_size[0],
                caps.max_workgroup_size[1]
            )));
        }
        let layout = match variant {
            Variant::Naive => {
                if let Some(s) = subgroup {
                    return Err(GrayScottError::Config(format!(
                        "--subgroup-size {s} does not apply: the naive kernel uses no subgroup operation"
                    )));
                }
                return Ok(Plan {
                    variant,
                    workgroup: wg,
                    subgroup: caps.subgroup_size,
                    required_subgroup: None,
                    shape: None,
                });
            }
            Variant::Subgroup(l) if l.is_broken() => {
                return Err(requirement(
                    variant,
                    "it is a deliberately broken layout that only the model backend runs",
                ))
            }
            Variant::Subgroup(l) => l,
            // The same positions, shuffles and exits as the stacked kernel.
            Variant::StackedUv => Tiling::Stacked,
            // Only for the workgroup and subgroup size checks below (a multiple of the subgroup
            // size, a power of two in 4..=128); its own geometry is checked after them.
            Variant::Tile(_) => Tiling::Stacked,
        };
        if api < (1, 1) {
            return Err(requirement(
                variant,
                format!(
                    "it needs Vulkan 1.1 (subgroup operations); the device has {}.{}",
                    api.0, api.1
                ),
            ));
        }
        if !caps.compute {
            return Err(requirement(
                variant,
                "the device has no subgroup operations in compute shaders",
            ));
        }
        if !caps.ops.shuffle_relative {
            return Err(requirement(
                variant,
                "the device lacks SHUFFLE_RELATIVE subgroup operations (subgroupShuffleUp/Down)",
            ));
        }
        if wg[1] != 1 {
            return Err(GrayScottError::Config(format!(
                "workgroup {}x{} is invalid for {}: the subgroup kernels use 1D workgroups \
                 (the layout of a 2D workgroup into subgroups is undefined)",
                wg[0],
                wg[1],
                variant.name()
            )));
        }
        let (s, required) = match subgroup {
            None => (caps.subgroup_size, None),
            Some(s) if s == caps.subgroup_size && !caps.size_control => (s, None),
            Some(s) => {
                if !caps.size_control {
                    return Err(GrayScottError::Config(format!(
                        "subgroup size {s} is not supported: the device runs subgroups of {} lanes \
                         and has no subgroup size control for compute shaders",
                        caps.subgroup_size
                    )));
                }
                if !s.is_power_of_two() || s < caps.min_subgroup_size || s > caps.max_subgroup_size
                {
                    return Err(GrayScottError::Config(format!(
                        "subgroup size {s} is not supported: the device can require a power of two \
                         in {}..={}",
                        caps.min_subgroup_size, caps.max_subgroup_size
                    )));
                }
                (s, Some(s))
            }
        };
        if s < 4 {
            return Err(requirement(
                variant,
                format!("it needs subgroups of at least 4 lanes; the device's have {s}"),
            ));
        }
        let shape = Shape::new(layout, s, wg[0])?;
        if required.is_some()
            && caps.max_workgroup_subgroups > 0
            && shape.subgroups() > caps.max_workgroup_subgroups
        {
            return Err(GrayScottError::Config(format!(
                "workgroup size {} is too large at subgroup size {s}: the device allows at most {} \
                 subgroups per workgroup",
                wg[0], caps.max_workgroup_subgroups
            )));
        }
        if let Variant::Tile(t) = variant {
            t.check(s)?;
        }
        Ok(Plan {
            variant,
            workgroup: wg,
            subgroup: s,
            required_subgroup: required,
            shape: match variant {
                Variant::Tile(_) => None,
                _ => Some(shape),
            },
        })
    }

    /// Workgroup counts that cover `domain`.
    pub fn groups(&self, domain: Domain) -> [u32; 3] {
        if let Variant::Tile(t) = self.variant {
            let [x, y] = t.grid(domain, self.subgroup, self.workgroup[0] / self.subgroup);
            return [x, y, 1];
        }
        match self.shape {
            Some(shape) => {
                let [x, y] = shape.grid(domain);
                [x, y, 1]
            }
            None => [
                (domain.cols() as u32).div_ceil(self.workgroup[0]),
                (domain.rows() as u32).div_ceil(self.workgroup[1]),
                1,
            ],
        }
    }

    /// `workgroup{W}` (or `workgroup{X}x{Y}` for naive), plus `/subgroup{S}` for the subgroup
    /// variants: the course's benchmark naming.
    pub fn bench_label(&self) -> String {
        match self.variant {
            Variant::Naive => format!("workgroup{}x{}", self.workgroup[0], self.workgroup[1]),
            _ => format!("workgroup{}/subgroup{}", self.workgroup[0], self.subgroup),
        }
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.variant {
            Variant::Subgroup(_) | Variant::StackedUv | Variant::Tile(_) => write!(
                f,
                "{}, workgroup {}, subgroup {}{}",
                self.variant.label(),
                self.workgroup[0],
                self.subgroup,
                if self.required_subgroup.is_some() {
                    " (required)"
                } else {
                    ""
                }
            ),
            Variant::Naive => write!(
                f,
                "naive, workgroup {}x{}",
                self.workgroup[0], self.workgroup[1]
            ),
        }
    }
}

/// The device's API version as (major, minor).
pub fn api_version(ctx: &Context) -> (u32, u32) {
    let v = ctx.device.physical_device().api_version();
    (v.major, v.minor)
}

fn spec_constants(domain: Domain, params: &Params, wg: [u32; 2]) -> Vec<(u32, SpecValue)> {
    vec![
        (spec::WORKGROUP_X, SpecValue::U32(wg[0])),
        (spec::WORKGROUP_Y, SpecValue::U32(wg[1])),
        (spec::UV_WIDTH, SpecValue::U32(domain.padded_cols() as u32)),
        (spec::UV_HEIGHT, SpecValue::U32(domain.padded_rows() as u32)),
        (spec::FEED_RATE, SpecValue::F32(params.feed)),
        (spec::KILL_RATE, SpecValue::F32(params.kill)),
        (spec::DELTA_T, SpecValue::F32(params.dt)),
        (spec::DIFFUSION_RATE_U, SpecValue::F32(params.du)),
        (spec::DIFFUSION_RATE_V, SpecValue::F32(params.dv)),
        (spec::UV_PITCH, SpecValue::U32(uv_pitch(domain) as u32)),
    ]
}

/// The row stride, in cells, of interleaved storage: the padded width rounded up to an even number,
/// so that every row starts on a 16-byte boundary pair of cells (`common_uv.glsl`).
pub fn uv_pitch(domain: Domain) -> usize {
    domain.padded_cols().next_multiple_of(2)
}

/// Keeps the constants the module declares (the subgroup kernels have no `local_size_y_id`, the
/// copy kernel no reaction parameters): specialising an undeclared constant is an error.
fn declared(
    module: &std::sync::Arc<vulkano::shader::ShaderModule>,
    mut spec: Vec<(u32, SpecValue)>,
) -> Vec<(u32, SpecValue)> {
    let have = module.specialization_constants();
    spec.retain(|(id, _)| have.contains_key(id));
    spec
}

fn build_kernel(
    ctx: &Context,
    plan: &Plan,
    domain: Domain,
    params: &Params,
) -> Result<Kernel, VkError> {
    let dev = ctx.device.clone();
    let module = shaders::load(
        match plan.variant {
            Variant::Naive => "naive.comp",
            Variant::Subgroup(Tiling::OneD) => "subgroup_1d.comp",
            Variant::Subgroup(Tiling::Stacked) => "subgroup_stacked.comp",
            // Plan::new refused every other layout.
            Variant::Subgroup(_) => "subgroup_shared.comp",
            Variant::StackedUv => "subgroup_stacked_uv.comp",
            Variant::Tile(_) => "subgroup_tile.comp",
        },
        dev,
    )?;
    let mut spec = spec_constants(domain, params, plan.workgroup);
    if let Variant::Tile(t) = plan.variant {
        spec.push((spec::STEPS, SpecValue::U32(t.steps)));
        spec.push((spec::TILE_ROWS, SpecValue::U32(t.rows)));
    }
    let spec = declared(&module, spec);
    ctx.kernel_from_module(
        module,
        &KernelOptions {
            spec,
            required_subgroup_size: plan.required_subgroup,
        },
    )
}

/// Passes per command buffer: long runs are split so that no single submission runs for long.
const PASSES_PER_SUBMIT: u32 = 256;

/// The padded fields on the device, two sets swapped every pass: planar (U in, V in, U out, V out:
/// four buffers of the padded grid, each rounded up to whole vec4s for the vec4 copy) or interleaved
/// (UV in, UV out: `(U, V)` pairs with row stride [`uv_pitch`]).
struct DeviceFields {
    bufs: Vec<Subbuffer<[f32]>>,
    interleaved: bool,
    domain: Domain,
}

impl DeviceFields {
    /// Floats in one buffer.
    fn len(domain: Domain, interleaved: bool) -> usize {
        if interleaved {
            2 * uv_pitch(domain) * domain.padded_rows()
        } else {
            (domain.padded_rows() * domain.padded_cols()).next_multiple_of(4)
        }
    }

    fn upload(ctx: &Context, f: &Fields, interleaved: bool) -> Result<DeviceFields, VkError> {
        let domain = f.domain();
        let len = DeviceFields::len(domain, interleaved);
        let count = if interleaved { 2 } else { 4 };
        let bufs = (0..count)
            .map(|_| ctx.device_buffer::<f32>(len as u64))
            .collect::<Result<Vec<_>, _>>()?;
        // Both sets get the zero ring (and the padding past it): it is never written, and each
        // set is read in turn.
        let hosts: Vec<Vec<f32>> = if interleaved {
            let (u, v) = (Padded::from_array(&f.u), Padded::from_array(&f.v));
            let (w, pitch) = (domain.padded_cols(), uv_pitch(domain));
            let mut data = vec![0.0f32; len];
            for r in 0..domain.padded_rows() {
                for c in 0..w {
                    data[2 * (r * pitch + c)] = u.data[r * w + c];
                    data[2 * (r * pitch + c) + 1] = v.data[r * w + c];
                }
            }
            vec![data]
        } else {
            [&f.u, &f.v]
                .into_iter()
                .map(|a| {
                    let mut data = Padded::from_array(a).data;
                    data.resize(len, 0.0);
                    data
                })
                .collect()
        };
        let half = count / 2;
        for (k, data) in hosts.iter().enumerate() {
            let host = ctx.host_buffer(data)?;
            ctx.copy(&host, &bufs[k])?;
            ctx.copy(&host, &bufs[k + half])?;
        }
        Ok(DeviceFields {
            bufs,
            interleaved,
            domain,
        })
    }

    /// Binding list for a pass reading set `parity` and writing the other.
    fn pass(&self, parity: usize, groups: [u32; 3]) -> Pass {
        let half = self.bufs.len() / 2;
        let (i, o) = if parity == 0 { (0, half) } else { (half, 0) };
        let b = &self.bufs;
        let list = (i..i + half)
            .chain(o..o + half)
            .map(|k| b[k].clone().into_bytes())
            .collect();
        (list, groups)
    }

    /// Runs `passes` passes of `kernel` starting from set `parity`; returns the device wall time.
    fn run(
        &self,
        ctx: &Context,
        kernel: &Kernel,
        groups: [u32; 3],
        parity: usize,
        passes: u32,
    ) -> Result<Duration, VkError> {
        let mut total = Duration::ZERO;
        let mut done = 0;
        while done < passes {
            let n = (passes - done).min(PASSES_PER_SUBMIT);
            let list: Vec<Pass> = (0..n)
                .map(|i| self.pass((parity + (done + i) as usize) % 2, groups))
                .collect();
            total += ctx.dispatch(kernel, &list)?;
            done += n;
        }
        Ok(total)
    }

    fn download(&self, ctx: &Context, parity: usize) -> Result<Fields, VkError> {
        let domain = self.domain;
        let len = DeviceFields::len(domain, self.interleaved);
        let half = self.bufs.len() / 2;
        let mut host_data = Vec::with_capacity(half);
        for k in 0..half {
            let host = ctx.host_buffer(&vec![0.0f32; len])?;
            ctx.copy(&self.bufs[half * parity + k], &host)?;
            host_data.push(
                host.read()
                    .map_err(|e| VkError::vk("reading results back", e))?
                    .to_vec(),
            );
        }
        let (w, cells) = (
            domain.padded_cols(),
            domain.padded_rows() * domain.padded_cols(),
        );
        let padded = |data: Vec<f32>| Padded { data, domain }.to_array();
        if self.interleaved {
            let pitch = uv_pitch(domain);
            let data = host_data.pop().unwrap_or_default();
            let (mut u, mut v) = (vec![0.0f32; cells], vec![0.0f32; cells]);
            for r in 0..domain.padded_rows() {
                for c in 0..w {
                    u[r * w + c] = data[2 * (r * pitch + c)];
                    v[r * w + c] = data[2 * (r * pitch + c) + 1];
                }
            }
            Ok(Fields {
                u: padded(u),
                v: padded(v),
            })
        } else {
            let mut v = host_data.pop().unwrap_or_default();
            let mut u = host_data.pop().unwrap_or_default();
            u.truncate(cells);
            v.truncate(cells);
            Ok(Fields {
                u: padded(u),
                v: padded(v),
            })
        }
    }
}

/// A simulation on a Vulkan device.
///
/// ```no_run
/// use lockstep::grayscott::{gpu::{GpuSim, Plan, Variant, api_version}, Domain, Params, Simulation};
/// use lockstep::vulkan::Context;
/// let ctx = Context::new(None)?;
/// let plan = Plan::new(&ctx.caps, api_version(&ctx), Variant::parse("subgroup-stacked").unwrap(), None, None)?;
/// let mut sim = GpuSim::new(&ctx, Domain::new(256, 256)?, Params::default(), plan)?;
/// sim.advance(100)?;
/// println!("{:?}", sim.fields()?.v.sum());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GpuSim<'c> {
    ctx: &'c Context,
    plan: Plan,
    params: Params,
    /// The kernel of `plan` and, for the tile kernel, those that finish a run whose step count is
    /// not a multiple of its steps per pass: (steps per pass, kernel, workgroup counts).
    kernels: Vec<(u32, Kernel, [u32; 3])>,
    fields: DeviceFields,
    parity: usize,
    steps: u64,
    device_time: Duration,
}

impl<'c> GpuSim<'c> {
    /// Builds the kernel and uploads the initial condition.
    pub fn new(
        ctx: &'c Context,
        domain: Domain,
        params: Params,
        plan: Plan,
    ) -> Result<GpuSim<'c>, GrayScottError> {
        GpuSim::from_fields(ctx, &Fields::initial(domain), params, plan)
    }

    /// Builds the kernel and uploads `f`.
    pub fn from_fields(
        ctx: &'c Context,
        f: &Fields,
        params: Params,
        plan: Plan,
    ) -> Result<GpuSim<'c>, GrayScottError> {
        let domain = f.domain();
        let kernel = build_kernel(ctx, &plan, domain, &params)?;
        let fields = DeviceFields::upload(ctx, f, plan.variant.interleaved())?;
        Ok(GpuSim {
            ctx,
            kernels: vec![(plan.variant.steps_per_pass(), kernel, plan.groups(domain))],
            plan,
            params,
            fields,
            parity: 0,
            steps: 0,
            device_time: Duration::ZERO,
        })
    }

    /// The configuration.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The kernel advancing `steps` per pass (built on first use for the tile kernel's remainders).
    fn kernel_for(&mut self, steps: u32) -> Result<usize, GrayScottError> {
        if let Some(i) = self.kernels.iter().position(|k| k.0 == steps) {
            return Ok(i);
        }
        let Variant::Tile(t) = self.plan.variant else {
            return Err(GrayScottError::Config(format!(
                "{} has no {steps}-step kernel",
                self.plan
            )));
        };
        // Fewer steps than the plan's, same rows: the plan's checks still hold.
        let plan = Plan {
            variant: Variant::Tile(Tile {
                steps,
                rows: t.rows,
            }),
            ..self.plan.clone()
        };
        let domain = self.fields.domain;
        let kernel = build_kernel(self.ctx, &plan, domain, &self.params)?;
        self.kernels.push((steps, kernel, plan.groups(domain)));
        Ok(self.kernels.len() - 1)
    }

    /// Runs `steps` steps and returns the time from submission to completion (kernels built on the
    /// way are not counted).
    pub fn advance_timed(&mut self, steps: u32) -> Result<Duration, GrayScottError> {
        let per_pass = self.plan.variant.steps_per_pass();
        let mut t = Duration::ZERO;
        for (passes, size) in [(steps / per_pass, per_pass), (1, steps % per_pass)] {
            if passes == 0 || size == 0 {
                continue;
            }
            let k = self.kernel_for(size)?;
            let (_, kernel, groups) = &self.kernels[k];
            t += self
                .fields
                .run(self.ctx, kernel, *groups, self.parity, passes)?;
            self.parity = (self.parity + passes as usize) % 2;
        }
        self.steps += steps as u64;
        self.device_time += t;
        Ok(t)
    }

    /// Total submission-to-completion time of every step so far.
    pub fn device_time(&self) -> Duration {
        self.device_time
    }
}

impl Simulation for GpuSim<'_> {
    fn advance(&mut self, steps: u32) -> Result<(), GrayScottError> {
        self.advance_timed(steps).map(|_| ())
    }

    fn fields(&mut self) -> Result<Fields, GrayScottError> {
        Ok(self.fields.download(self.ctx, self.parity)?)
    }

    fn steps_done(&self) -> u64 {
        self.steps
    }

    fn describe(&self) -> String {
        format!(
            "gpu ({}) on {}, {}",
            self.plan, self.ctx.info.name, self.fields.domain
        )
    }
}

/// A copy kernel measuring the memory ceiling: each moves the 16 bytes per cell of one step (read
/// U and V, write U and V) over the same padded buffers a simulation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyKind {
    /// `copy.comp`: one float of U and one of V per invocation, planar (the first ceiling).
    Scalar,
    /// `copy_vec4.comp`: planar, vec4 loads and stores, `items` vec4s of each field in flight per
    /// invocation; `grid` workgroups of 256 in a grid-stride loop, or (`None`) as many as cover
    /// the buffers.
    Vec4 {
        /// vec4s per field per invocation and loop trip
        items: u32,
        /// a fixed number of workgroups
        grid: Option<u32>,
    },
    /// `copy_uv.comp`: the same on interleaved storage (two cells per vec4).
    Uv {
        /// vec4s per invocation and loop trip
        items: u32,
        /// a fixed number of workgroups
        grid: Option<u32>,
    },
}

impl CopyKind {
    /// The kinds the benchmark measures by default.
    pub const DEFAULTS: [CopyKind; 7] = [
        CopyKind::Scalar,
        CopyKind::Vec4 {
            items: 1,
            grid: None,
        },
        CopyKind::Vec4 {
            items: 4,
            grid: None,
        },
        CopyKind::Vec4 {
            items: 1,
            grid: Some(2048),
        },
        CopyKind::Uv {
            items: 1,
            grid: None,
        },
        CopyKind::Uv {
            items: 4,
            grid: None,
        },
        CopyKind::Uv {
            items: 1,
            grid: Some(2048),
        },
    ];

    /// The benchmark name: `gpu-copy` (scalar), `gpu-copy-vec4[-x{items}][-grid{G}]`,
    /// `gpu-copy-uv[-x{items}][-grid{G}]`; [`CopyKind::parse`] reads it back.
    ///
    /// ```
    /// use lockstep::grayscott::gpu::CopyKind;
    /// for k in CopyKind::DEFAULTS {
    ///     assert_eq!(CopyKind::parse(&k.name()), Some(k));
    /// }
    /// assert_eq!(CopyKind::parse("gpu-copy-uv-x8-grid512").map(|k| k.name()).as_deref(), Some("gpu-copy-uv-x8-grid512"));
    /// ```
    pub fn name(&self) -> String {
        let (base, items, grid) = match *self {
            CopyKind::Scalar => return "gpu-copy".into(),
            CopyKind::Vec4 { items, grid } => ("gpu-copy-vec4", items, grid),
            CopyKind::Uv { items, grid } => ("gpu-copy-uv", items, grid),
        };
        let mut s = base.to_string();
        if items != 1 {
            s += &format!("-x{items}");
        }
        if let Some(g) = grid {
            s += &format!("-grid{g}");
        }
        s
    }

    /// Parses [`CopyKind::name`].
    pub fn parse(s: &str) -> Option<CopyKind> {
        if s == "gpu-copy" {
            return Some(CopyKind::Scalar);
        }
        let (uv, rest) = if let Some(r) = s.strip_prefix("gpu-copy-vec4") {
            (false, r)
        } else {
            (true, s.strip_prefix("gpu-copy-uv")?)
        };
        let (mut items, mut grid) = (1, None);
        for part in rest.split('-').skip(1) {
            if let Some(x) = part.strip_prefix('x') {
                items = x.parse().ok().filter(|&n| (1..=16).contains(&n))?;
            } else if let Some(g) = part.strip_prefix("grid") {
                grid = Some(g.parse().ok().filter(|&n| n >= 1)?);
            } else {
                return None;
            }
        }
        if !rest.is_empty() && !rest.starts_with('-') {
            return None;
        }
        Some(if uv {
            CopyKind::Uv { items, grid }
        } else {
            CopyKind::Vec4 { items, grid }
        })
    }

    fn interleaved(&self) -> bool {
        matches!(self, CopyKind::Uv { .. })
    }
}

/// The memory ceiling on the device: a compute shader that copies U and V (16 bytes of traffic per
/// cell, like one step), over the same padded buffers a simulation uses.
pub struct CopyCeiling<'c> {
    ctx: &'c Context,
    kernel: Kernel,
    fields: DeviceFields,
    groups: [u32; 3],
    parity: usize,
}

impl<'c> CopyCeiling<'c> {
    /// Sets up the scalar copy ([`CopyKind::Scalar`]) for `domain`.
    pub fn new(ctx: &'c Context, domain: Domain) -> Result<CopyCeiling<'c>, GrayScottError> {
        CopyCeiling::with_kind(ctx, domain, CopyKind::Scalar)
    }

    /// Sets up the copy `kind` for `domain` (buffers filled with the initial condition).
    pub fn with_kind(
        ctx: &'c Context,
        domain: Domain,
        kind: CopyKind,
    ) -> Result<CopyCeiling<'c>, GrayScottError> {
        const W: u32 = 256;
        let dev = ctx.device.clone();
        let (name, items) = match kind {
            CopyKind::Scalar => ("copy.comp", 1),
            CopyKind::Vec4 { items, .. } => ("copy_vec4.comp", items),
            CopyKind::Uv { items, .. } => ("copy_uv.comp", items),
        };
        let module = shaders::load(name, dev)?;
        if !(1..=16).contains(&items) {
            return Err(GrayScottError::Config(format!(
                "{}: 1..=16 vec4s per invocation",
                kind.name()
            )));
        }
        let mut spec = spec_constants(domain, &Params::default(), [W, 1]);
        spec.push((spec::COPY_ITEMS, SpecValue::U32(items)));
        let spec = declared(&module, spec);
        let kernel = ctx.kernel_from_module(
            module,
            &KernelOptions {
                spec,
                required_subgroup_size: None,
            },
        )?;
        let fields = DeviceFields::upload(ctx, &Fields::initial(domain), kind.interleaved())?;
        let groups = match kind {
            CopyKind::Scalar => {
                let cells = (domain.padded_rows() * domain.padded_cols()) as u64;
                let groups = cells.div_ceil(W as u64);
                let x = groups.min(32768);
                [x as u32, groups.div_ceil(x) as u32, 1]
            }
            CopyKind::Vec4 { grid, .. } | CopyKind::Uv { grid, .. } => {
                let vec4s = DeviceFields::len(domain, kind.interleaved()) as u64 / 4;
                let need = vec4s.div_ceil(W as u64 * items as u64);
                // The grid-stride loop covers whatever the grid does not.
                let x = grid.map_or(need, |g| g as u64).clamp(1, 65535);
                [x as u32, 1, 1]
            }
        };
        Ok(CopyCeiling {
            ctx,
            kernel,
            fields,
            groups,
            parity: 0,
        })
    }

    /// Copies `steps` times (alternating directions) and returns the time from submission to
    /// completion.
    pub fn run(&mut self, steps: u32) -> Result<Duration, GrayScottError> {
        let t = self
            .fields
            .run(self.ctx, &self.kernel, self.groups, self.parity, steps)?;
        self.parity = (self.parity + steps as usize) % 2;
        Ok(t)
    }

    /// Copies once and reads the copy back (for tests: the copy must reproduce its input).
    pub fn copy_once(&mut self) -> Result<Fields, GrayScottError> {
        self.run(1)?;
        Ok(self.fields.download(self.ctx, self.parity)?)
    }
}
