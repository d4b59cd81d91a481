//! The GPU backend: the course's kernels in `shaders/grayscott/`, compiled at build time by
//! `vulkano_shaders::shader!` and specialised at run time (domain size and parameters are
//! specialization constants), dispatched through [`crate::vulkan::Context`].
//!
//! Variants: `naive` (2D workgroups, every neighbour loaded from memory, no subgroup operation), and
//! the three subgroup layouts of [`Tiling`] (`subgroup-1d`, `subgroup-stacked`, `subgroup-shared`).
//! The subgroup variants need Vulkan 1.1, subgroup operations in compute shaders, SHUFFLE_RELATIVE
//! and subgroups of at least 4 lanes; [`Plan::new`] checks all of it, and the workgroup and
//! subgroup sizes, before anything is built.

use super::layout::{Shape, Tiling};
use super::{Domain, Fields, GrayScottError, Padded, Params, Simulation};
use crate::vulkan::{Capabilities, Context, Kernel, KernelOptions, Pass, SpecValue, VkError};
use std::time::Duration;
use vulkano::buffer::Subbuffer;

#[allow(missing_docs)]
mod shaders {
    vulkano_shaders::shader! {
        shaders: {
            naive: { ty: "compute", path: "shaders/grayscott/naive.comp" },
            subgroup_1d: { ty: "compute", path: "shaders/grayscott/subgroup_1d.comp" },
            subgroup_stacked: { ty: "compute", path: "shaders/grayscott/subgroup_stacked.comp" },
            subgroup_shared: { ty: "compute", path: "shaders/grayscott/subgroup_shared.comp" },
            copy: { ty: "compute", path: "shaders/grayscott/copy.comp" },
        },
        spirv_version: "1.3",
        vulkan_version: "1.1",
        generate_structs: false,
    }
}

/// A GPU kernel variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// 2D workgroups, loads only.
    Naive,
    /// One of the course's subgroup layouts (not the broken ones, which have no kernel).
    Subgroup(Tiling),
}

impl Variant {
    /// Every variant with a kernel.
    pub const ALL: [Variant; 4] = [
        Variant::Naive,
        Variant::Subgroup(Tiling::OneD),
        Variant::Subgroup(Tiling::Stacked),
        Variant::Subgroup(Tiling::Shared),
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::Subgroup(l) => l.name(),
        }
    }

    /// Parses [`Variant::name`].
    pub fn parse(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// The default workgroup: 16×16 for `naive` (the course's 2D default), 128 for the subgroup
    /// variants (the course's default: a multiple of every subgroup size up to 128).
    pub fn default_workgroup(self) -> [u32; 2] {
        match self {
            Variant::Naive => [16, 16],
            Variant::Subgroup(_) => [128, 1],
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
    /// the subgroup layout's shape (`None` for naive)
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
        Ok(Plan {
            variant,
            workgroup: wg,
            subgroup: s,
            required_subgroup: required,
            shape: Some(shape),
        })
    }

    /// Workgroup counts that cover `domain`.
    pub fn groups(&self, domain: Domain) -> [u32; 3] {
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
        match self.shape {
            Some(_) => format!("workgroup{}/subgroup{}", self.workgroup[0], self.subgroup),
            None => format!("workgroup{}x{}", self.workgroup[0], self.workgroup[1]),
        }
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.shape {
            Some(_) => write!(
                f,
                "{}, workgroup {}, subgroup {}{}",
                self.variant.name(),
                self.workgroup[0],
                self.subgroup,
                if self.required_subgroup.is_some() {
                    " (required)"
                } else {
                    ""
                }
            ),
            None => write!(
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

fn validated<E: std::fmt::Display>(what: &str, e: vulkano::Validated<E>) -> VkError {
    match e {
        vulkano::Validated::Error(e) => VkError::vk(what, e),
        vulkano::Validated::ValidationError(v) => VkError::vk(what, v),
    }
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
    ]
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
    let module = match plan.variant {
        Variant::Naive => shaders::load_naive(dev),
        Variant::Subgroup(Tiling::OneD) => shaders::load_subgroup_1d(dev),
        Variant::Subgroup(Tiling::Stacked) => shaders::load_subgroup_stacked(dev),
        // Plan::new refused every other layout.
        Variant::Subgroup(_) => shaders::load_subgroup_shared(dev),
    }
    .map_err(|e| validated(&format!("loading the {} shader", plan.variant.name()), e))?;
    let spec = declared(&module, spec_constants(domain, params, plan.workgroup));
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

/// Four padded device buffers (U, V in; U, V out), swapped every step.
struct Fields4 {
    bufs: [Subbuffer<[f32]>; 4],
    domain: Domain,
}

impl Fields4 {
    fn upload(ctx: &Context, f: &Fields) -> Result<Fields4, VkError> {
        let domain = f.domain();
        let len = (domain.padded_rows() * domain.padded_cols()) as u64;
        let bufs = [
            ctx.device_buffer::<f32>(len)?,
            ctx.device_buffer::<f32>(len)?,
            ctx.device_buffer::<f32>(len)?,
            ctx.device_buffer::<f32>(len)?,
        ];
        // Both pairs get the zero ring: it is never written, and each pair is read in turn.
        for (k, a) in [&f.u, &f.v].into_iter().enumerate() {
            let host = ctx.host_buffer(&Padded::from_array(a).data)?;
            ctx.copy(&host, &bufs[k])?;
            ctx.copy(&host, &bufs[k + 2])?;
        }
        Ok(Fields4 { bufs, domain })
    }

    /// Binding lists for a step reading pair `parity` and writing the other.
    fn pass(&self, parity: usize, groups: [u32; 3]) -> Pass {
        let (i, o) = if parity == 0 { (0, 2) } else { (2, 0) };
        let b = &self.bufs;
        (
            vec![
                b[i].clone().into_bytes(),
                b[i + 1].clone().into_bytes(),
                b[o].clone().into_bytes(),
                b[o + 1].clone().into_bytes(),
            ],
            groups,
        )
    }

    /// Runs `steps` passes of `kernel` starting from pair `parity`; returns the device wall time.
    fn run(
        &self,
        ctx: &Context,
        kernel: &Kernel,
        groups: [u32; 3],
        parity: usize,
        steps: u32,
    ) -> Result<Duration, VkError> {
        let mut total = Duration::ZERO;
        let mut done = 0;
        while done < steps {
            let n = (steps - done).min(PASSES_PER_SUBMIT);
            let passes: Vec<Pass> = (0..n)
                .map(|i| self.pass((parity + (done + i) as usize) % 2, groups))
                .collect();
            total += ctx.dispatch(kernel, &passes)?;
            done += n;
        }
        Ok(total)
    }

    fn download(&self, ctx: &Context, parity: usize) -> Result<Fields, VkError> {
        let len = (self.domain.padded_rows() * self.domain.padded_cols()) as u64;
        let mut out = Vec::with_capacity(2);
        for k in 0..2 {
            let host = ctx.host_buffer(&vec![0.0f32; len as usize])?;
            ctx.copy(&self.bufs[2 * parity + k], &host)?;
            let data = host
                .read()
                .map_err(|e| VkError::vk("reading results back", e))?
                .to_vec();
            out.push(
                Padded {
                    data,
                    domain: self.domain,
                }
                .to_array(),
            );
        }
        let v = out.pop().unwrap_or_default();
        let u = out.pop().unwrap_or_default();
        Ok(Fields { u, v })
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
    kernel: Kernel,
    fields: Fields4,
    groups: [u32; 3],
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
        let fields = Fields4::upload(ctx, f)?;
        Ok(GpuSim {
            ctx,
            groups: plan.groups(domain),
            plan,
            kernel,
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

    /// Runs `steps` steps and returns the time from submission to completion.
    pub fn advance_timed(&mut self, steps: u32) -> Result<Duration, GrayScottError> {
        let t = self
            .fields
            .run(self.ctx, &self.kernel, self.groups, self.parity, steps)?;
        self.parity = (self.parity + steps as usize) % 2;
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

/// The memory ceiling on the device: a compute shader that copies U and V (16 bytes of traffic per
/// cell, like one step), over the same padded buffers a simulation uses.
pub struct CopyCeiling<'c> {
    ctx: &'c Context,
    kernel: Kernel,
    fields: Fields4,
    groups: [u32; 3],
    parity: usize,
}

impl<'c> CopyCeiling<'c> {
    /// Sets up the copy for `domain` (buffers filled with the initial condition).
    pub fn new(ctx: &'c Context, domain: Domain) -> Result<CopyCeiling<'c>, GrayScottError> {
        const W: u32 = 256;
        let module = shaders::load_copy(ctx.device.clone())
            .map_err(|e| validated("loading the copy shader", e))?;
        let spec = declared(&module, spec_constants(domain, &Params::default(), [W, 1]));
        let kernel = ctx.kernel_from_module(
            module,
            &KernelOptions {
                spec,
                required_subgroup_size: None,
            },
        )?;
        let fields = Fields4::upload(ctx, &Fields::initial(domain))?;
        let cells = (domain.padded_rows() * domain.padded_cols()) as u64;
        let groups = cells.div_ceil(W as u64);
        let x = groups.min(32768);
        let groups = [x as u32, groups.div_ceil(x) as u32, 1];
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
}
