//! A user's kernel run on the model and on a device, and compared element by element: bit for bit
//! where the model's value is defined, exact and order-independent; within a tolerance where the
//! precision rules let a device differ (inexact); and listed with its chain, not compared, where it
//! is undefined, order-dependent or racy.
//!
//! ```
//! use lockstep::kernel::{run::{JobBuffer, KernelJob, Tolerance}, HostBuffer, SpirvModule, SourceLang, TargetEnv};
//! use lockstep::model::SubgroupSize;
//! // The compiled example kernel: b[gl_GlobalInvocationID.x] = gl_SubgroupInvocationID.
//! let module = SpirvModule {
//!     words: lockstep::spirv::examples::lane_ids(), lang: SourceLang::SpirvBinary,
//!     name: "lane_ids.spv".into(), target_env: TargetEnv::Vulkan1_1, source_text: None,
//! };
//! let mut job = KernelJob::new(module);
//! job.workgroups = [2, 1, 1];
//! job.buffers.push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; 16])));
//! let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
//! // Model only (a device run would pass `Some(&device_bytes)`):
//! let report = job.compare(&model, None, Tolerance::default());
//! assert!(report.ok(), "{}", report.text());
//! assert_eq!(report.buffers[0].exact, 16);
//! assert_eq!(model.run.buffers[0].bytes[4..8], 1u32.to_le_bytes());
//! ```

pub(crate) use crate::kernel::buffers::binding_name;
pub use crate::kernel::buffers::JobBuffer;
use crate::kernel::buffers::{element_size, HostBuffer};
pub(crate) use crate::kernel::images::{bound_image_type, extent_of_shape};
pub use crate::kernel::report::{
    BufferReport, FailPolicy, Finding, FindingKind, Report, GROUP_ITEMS, TEXT_PRINTS,
};
use crate::kernel::source::SpirvModule;
pub use crate::kernel::tolerance::Tolerance;
use crate::model::{LaneOrder, ScalarType, SubgroupSize, Value, ValueType};
use crate::reconverge::Mode;
use crate::spirv::{
    self, BufferInput, DecodeOptions, Kernel, ModelRun, RunConfig, SpecInput, SpirvError,
    WordStatus,
};
pub use crate::words::address::{AddressPatch, Place};

/// Why a kernel could not be run.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// bad input: the module, the buffers or the parameters (exit 64)
    #[error("{0}")]
    Input(String),
    /// the model refused the module or its bindings, or stopped running it: the interpreter's
    /// error, whose kind says which (`SpirvError::Stopped`, an infinite loop, …: exit 1;
    /// malformed or unsupported SPIR-V, bindings that do not fit: exit 64)
    #[error(transparent)]
    Model(#[from] SpirvError),
    /// the device cannot run it (exit 0 with a note, or 2)
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// a device error (exit 70)
    #[error("{0}")]
    Device(String),
}

/// Everything one dispatch of a kernel needs.
#[derive(Clone, Debug)]
pub struct KernelJob {
    /// the module
    pub module: SpirvModule,
    /// entry point (default: the module's only compute entry point, or `main`)
    pub entry: Option<String>,
    /// buffers bound to descriptors: where each is bound, and its contents
    pub buffers: Vec<JobBuffer>,
    /// push constants
    pub push: Option<HostBuffer>,
    /// specialization constants: SpecId and the value as text (typed by the module)
    pub spec: Vec<(u32, String)>,
    /// workgroup counts
    pub workgroups: [u32; 3],
    /// which local invocations form a subgroup on the model
    pub layout: LaneOrder,
    /// with [`LaneOrder::Device`]: where each invocation (by row-major local index) runs, as the
    /// device placed it ([`probe_layout`])
    pub placements: Option<std::sync::Arc<[crate::model::Placement]>>,
    /// the reconvergence model (default: what the module declares)
    pub mode: Option<Mode>,
    /// lane-instructions one workgroup may execute on the model
    pub max_steps: u64,
    /// workgroup orders the model tries where workgroups interact (see
    /// [`RunConfig::schedules`]); [`spirv::DEFAULT_SCHEDULES`] by default
    pub schedules: u32,
    /// buffers with no descriptor, reached only through their device address
    /// (GL_EXT_buffer_reference): name and contents
    pub unbound: Vec<(String, HostBuffer)>,
    /// device addresses the host writes into buffers and push constants (`@NAME` in a
    /// `values:` spec)
    pub addresses: Vec<AddressPatch>,
    /// the addresses a device gave those buffers ([`KernelJob::run_device`]): the model then
    /// uses the same ones, so that address arithmetic gives the same bits; `None`: the model's
    /// own ([`crate::spirv::Addressing::model_bases`])
    pub device_bases: Option<Vec<(Place, u64)>>,
    /// samplers: (descriptor set, binding, state) of a sampler, or of an image with its sampler
    /// (a combined image sampler, whose texels are the buffer at the same binding)
    pub samplers: Vec<(u32, u32, crate::words::sampler::Sampler)>,
    /// descriptors given as the model binds them, after those `buffers` and `samplers` make:
    /// what an Amber script says of a binding beyond its set, binding and bytes (an element of an
    /// array of descriptors, a window of a buffer several descriptors share, bytes an earlier
    /// dispatch left undefined, an image's extent and format, a combined image's sampler)
    pub(crate) descriptors: Vec<BufferInput>,
}

impl KernelJob {
    /// How reports name buffer `b`: with its element (`binding 1[0]`) where another buffer of the
    /// job is bound at the same binding (an array of descriptors), else as [`JobBuffer::name`].
    pub(crate) fn label(&self, b: &JobBuffer) -> String {
        let array = self
            .buffers
            .iter()
            .any(|o| (o.set, o.binding) == (b.set, b.binding) && o.element != b.element);
        match array {
            true => format!("{}[{}]", binding_name(b.set, b.binding), b.element),
            false => b.name(),
        }
    }
}

/// A device run's buffers (bound ones, then unbound ones) and the device addresses the
/// addressed buffers had.
#[cfg(feature = "vulkan")]
pub(crate) type DeviceRun = (Vec<Vec<u8>>, Vec<(Place, u64)>);

/// The model's side of a run.
pub struct ModelSide {
    /// the decoded kernel
    pub kernel: Kernel,
    /// the run
    pub run: ModelRun,
    /// the model used
    pub mode: Mode,
    /// the subgroup size used
    pub size: u32,
}

impl KernelJob {
    /// A job with no buffers, one workgroup, row-major lanes, the declared model.
    pub fn new(module: SpirvModule) -> KernelJob {
        KernelJob {
            module,
            entry: None,
            buffers: Vec::new(),
            push: None,
            spec: Vec::new(),
            workgroups: [1, 1, 1],
            layout: LaneOrder::ROW_MAJOR,
            placements: None,
            mode: None,
            max_steps: spirv::DEFAULT_MAX_STEPS,
            schedules: spirv::DEFAULT_SCHEDULES,
            unbound: Vec::new(),
            addresses: Vec::new(),
            device_bases: None,
            samplers: Vec::new(),
            descriptors: Vec::new(),
        }
    }

    /// Decodes the module for this job's entry point and specialization constants.
    pub fn decode(&self) -> Result<Kernel, KernelError> {
        let k = spirv::decode(
            &self.module.words,
            &DecodeOptions {
                keep_calls: false,
                keep_variables: false,
                keep_loops: false,
                entry: self.entry.clone(),
                spec: self
                    .spec
                    .iter()
                    .map(|(id, v)| (*id, SpecInput::Text(v.clone())))
                    .collect(),
                name: self.module.name.clone(),
                // WGSL's memory model: every storage and workgroup access can communicate.
                all_non_private: self.module.lang == crate::kernel::SourceLang::Wgsl,
                names: crate::kernel::source::source_names(
                    self.module.lang,
                    self.module.source_text.as_deref(),
                    &self.module.words,
                ),
            },
        )?;
        for (id, _) in &self.spec {
            if !k.spec_ids.iter().any(|(s, _)| s == id) {
                let have: Vec<String> = k
                    .spec_ids
                    .iter()
                    .map(|(s, t)| format!("{s} ({t})"))
                    .collect();
                return Err(KernelError::Input(format!(
                    "--spec {id}: the module has no specialization constant with SpecId {id} (it has: {})",
                    if have.is_empty() { "none".into() } else { have.join(", ") }
                )));
            }
        }
        Ok(k)
    }

    /// Runs the kernel on the model at subgroup size `size`; `progress(done, total)` is called
    /// from time to time with workgroups finished.
    pub fn run_model(
        &self,
        size: SubgroupSize,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<ModelSide, KernelError> {
        self.run_model_decoded(self.decode()?, size, progress)
    }

    /// [`KernelJob::run_model`] on a kernel decoded once (a sweep over subgroup sizes decodes the
    /// module once, not once per size).
    pub fn run_model_decoded(
        &self,
        kernel: Kernel,
        size: SubgroupSize,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<ModelSide, KernelError> {
        self.check_samplers(&kernel)?;
        let mode = self.mode.unwrap_or(kernel.declared_mode);
        let mut cfg = RunConfig::new(size, self.workgroups);
        cfg.layout = self.layout;
        cfg.placements = self.placements.clone();
        cfg.mode = mode;
        cfg.max_steps = self.max_steps;
        cfg.schedules = self.schedules;
        let bases = self.addressing_bases();
        let inputs: Vec<BufferInput> = self
            .buffers
            .iter()
            .enumerate()
            .map(|(i, jb)| {
                let b = &jb.host;
                let bound = kernel
                    .objects
                    .iter()
                    .find(|o| o.binding == Some((jb.set, jb.binding)) && o.element == jb.element)
                    .and_then(|o| o.image.as_ref())
                    .map(|t| {
                        let t = bound_image_type(t, b)?;
                        Ok((extent_of_shape(&t, &b.shape)?, t))
                    })
                    .transpose()
                    .map_err(|e: String| {
                        KernelError::Input(format!("--buffer {}: {e}", jb.name()))
                    })?;
                let (image, format) = match bound {
                    Some((e, t)) => (Some(e), Some(t.format)),
                    None => (None, None),
                };
                Ok(BufferInput {
                    set: jb.set,
                    binding: jb.binding,
                    bytes: self.patched(Place::Bound(i), &b.bytes, &bases)?,
                    undefined: Vec::new(),
                    element: jb.element,
                    image,
                    alias_of: None,
                    format,
                    sampler: self.sampler_at(jb.set, jb.binding),
                    window: None,
                })
            })
            .collect::<Result<_, KernelError>>()?;
        // Samplers alone (no texels): a descriptor without memory each.
        let mut inputs = inputs;
        for (set, binding, smp) in &self.samplers {
            if !self
                .buffers
                .iter()
                .any(|b| (b.set, b.binding) == (*set, *binding))
            {
                inputs.push(BufferInput {
                    set: *set,
                    binding: *binding,
                    sampler: Some(*smp),
                    ..BufferInput::default()
                });
            }
        }
        inputs.extend(self.descriptors.iter().cloned());
        let push = match &self.push {
            Some(p) => Some(self.patched(Place::Push, &p.bytes, &bases)?),
            None => None,
        };
        let mut addressing = spirv::Addressing::default();
        for (p, base) in &bases {
            match p {
                Place::Bound(i) => addressing.bound.push((*i, *base)),
                Place::Unbound(i) => {
                    let (name, b) = &self.unbound[*i];
                    addressing.unbound.push((
                        name.clone(),
                        self.patched(*p, &b.bytes, &bases)?,
                        *base,
                    ))
                }
                Place::Push => {}
            }
        }
        let run = spirv::run_model_addressed(
            &kernel,
            cfg,
            &inputs,
            push.as_deref(),
            &addressing,
            progress,
        )?;
        Ok(ModelSide {
            kernel,
            run,
            mode,
            size: size.get(),
        })
    }

    /// Compares the model's buffers with a device's (`device[i]` = the bytes of `buffers[i]` after
    /// the device ran; `None` for a model-only report).
    pub fn compare(&self, model: &ModelSide, device: Option<&[Vec<u8>]>, tol: Tolerance) -> Report {
        let r = &model.run;
        let mut report = Report {
            kernel: self.module.name.clone(),
            mode: model.mode,
            subgroup_size: model.size,
            workgroups: self.workgroups,
            invocations: r.invocations,
            lane_instructions: r.lane_instructions,
            buffers: Vec::new(),
            findings: Vec::new(),
            index: std::collections::HashMap::new(),
            device: device.is_some(),
            tolerance: tol,
            policy: FailPolicy::default(),
        };
        for g in &r.groups {
            let Some(first) = g.examples.first() else {
                continue;
            };
            let kind = finding_kind(first);
            let (why, items) = r.group_text(g);
            let why = crate::kernel::hints::with_hint(why, first, &model.kernel, &self.buffers);
            let line = finding_line(r, first);
            report.add_group(kind, None, line, why, &items, g.count);
        }
        // The one verdict policy, shared with Amber.
        let mut verdicts = crate::spirv::report::Verdicts::new(r);
        // Bound buffers, then those without a descriptor (at UNBOUND_SET, by index): the order
        // of the device's buffers.
        let all: Vec<(u32, u32, u32, &HostBuffer, String)> = self
            .buffers
            .iter()
            .map(|b| (b.set, b.binding, b.element, &b.host, self.label(b)))
            .chain(self.unbound.iter().enumerate().map(|(i, (name, h))| {
                (
                    spirv::UNBOUND_SET,
                    i as u32,
                    0,
                    h,
                    format!("buffer {name} (no descriptor)"),
                )
            }))
            .collect();
        for (bi, &(set, binding, element, host, ref label)) in all.iter().enumerate() {
            let Some(out) = r
                .buffers
                .iter()
                .find(|b| (b.set, b.binding, b.element) == (set, binding, element))
            else {
                continue;
            };
            let es = element_size(host.dtype);
            let n = host.bytes.len() / es.max(1);
            let mut br = BufferReport {
                set,
                binding,
                element,
                name: label.clone(),
                dtype: host.dtype,
                elements: n,
                exact: 0,
                inexact: 0,
                undefined: 0,
                order_dependent: 0,
                racy: 0,
                mismatches: 0,
            };
            // A device buffer of another length (a multisampled image cannot be read back) is
            // not compared.
            let dev = device
                .and_then(|d| d.get(bi))
                .filter(|d| d.len() == host.bytes.len());
            let at = Some((set, binding, element));
            for i in 0..n {
                let status = verdicts.of(out, i * es..(i + 1) * es);
                let bits = |b: &[u8]| -> u64 {
                    let mut x = [0u8; 8];
                    x[..es].copy_from_slice(&b[i * es..(i + 1) * es]);
                    u64::from_le_bytes(x)
                };
                let mbits = bits(&out.bytes);
                let name = r.names.describe(out.object, (i * es) as u64);
                match &status {
                    WordStatus::Exact | WordStatus::Inexact => {
                        let inexact = status == WordStatus::Inexact;
                        if inexact {
                            br.inexact += 1;
                        } else {
                            br.exact += 1;
                        }
                        if let Some(d) = dev {
                            let dbits = bits(d);
                            let allow = Allow {
                                inexact,
                                float_bits: inexact
                                    && out.taint_of(i * es..(i + 1) * es).is_float_bits(),
                                zero_sign: model.kernel.zero_sign_ignorable(host.dtype.bits()),
                            };
                            let same = agrees(host.dtype, allow, mbits, dbits, tol);
                            if !same {
                                br.mismatches += 1;
                                let (item, why, line) = mismatch(
                                    r,
                                    out,
                                    i * es,
                                    &name,
                                    host.dtype,
                                    (mbits, dbits),
                                    (inexact, allow.float_bits),
                                    tol,
                                );
                                report.add_group(FindingKind::Mismatch, at, line, why, &[item], 1);
                            }
                        }
                    }
                    WordStatus::Undefined(chain)
                    | WordStatus::OrderDependent(chain)
                    | WordStatus::Racy(chain) => {
                        let kind = match status {
                            WordStatus::Undefined(_) => {
                                br.undefined += 1;
                                FindingKind::Undefined
                            }
                            WordStatus::OrderDependent(_) => {
                                br.order_dependent += 1;
                                FindingKind::OrderDependent
                            }
                            _ => {
                                br.racy += 1;
                                FindingKind::Racy
                            }
                        };
                        let item = match dev {
                            Some(d) => format!("{name} (device: {})", show(host.dtype, bits(d))),
                            None => name,
                        };
                        report.add_group(kind, at, None, chain.clone(), &[item], 1);
                    }
                }
            }
            report.buffers.push(br);
        }
        report
    }
}

/// A value of type `t` from its bits, for people.
pub fn show(t: ScalarType, bits: u64) -> String {
    Value::from_bits(ValueType::scalar(t), &[bits]).to_string()
}

/// The device's value `d` within `tol` of the model's `m` (the expected one), a NaN only of a NaN.
/// The float type of `t`'s width, where there is one (an integer holding a float's bits).
fn float_of_width(t: ScalarType) -> Option<ScalarType> {
    [ScalarType::F16, ScalarType::F32, ScalarType::F64]
        .into_iter()
        .find(|f| f.bits() == t.bits())
}

fn within(t: ScalarType, m: u64, d: u64, tol: Tolerance) -> bool {
    let v = |x: u64| Value::from_bits(ValueType::scalar(t), &[x]).component_f64(0);
    let (m, d) = (v(m), v(d));
    if m.is_nan() || d.is_nan() {
        return m.is_nan() && d.is_nan();
    }
    m == d || tol.within(d, m)
}

fn finding_kind(f: &crate::spirv::Finding) -> FindingKind {
    use crate::spirv::{Finding as F, RaceClass};
    match f {
        F::Race {
            class: RaceClass::SameValue,
            ..
        } => FindingKind::SameValueRace,
        F::Race { .. } => FindingKind::Race,
        F::DivergentBarrier { .. } => FindingKind::DivergentBarrier,
        F::OutOfBounds { .. } => FindingKind::OutOfBounds,
        F::LostPath { .. } => FindingKind::LostPath,
        F::Unreachable { .. } => FindingKind::Unreachable,
        F::SpinWait { .. } => FindingKind::SpinWait,
        F::Print { .. } => FindingKind::Print,
    }
}

fn finding_line(r: &ModelRun, f: &crate::spirv::Finding) -> Option<u32> {
    let loc = match f {
        crate::spirv::Finding::Race { b, .. } => b.1,
        crate::spirv::Finding::DivergentBarrier { loc, .. }
        | crate::spirv::Finding::OutOfBounds { loc, .. }
        | crate::spirv::Finding::LostPath { loc, .. }
        | crate::spirv::Finding::Unreachable { loc }
        | crate::spirv::Finding::SpinWait { loc, .. }
        | crate::spirv::Finding::Print { loc, .. } => *loc,
    };
    r.line(loc)
}

/// A specialization constant's text as the type the module declares (`u32`, `f32`, `bool`, …).
#[cfg(feature = "vulkan")]
fn spec_constant(
    id: u32,
    ty: &str,
    text: &str,
) -> Result<crate::vulkan::SpecConstant, KernelError> {
    use crate::vulkan::SpecConstant as C;
    let vt: ValueType = ty.parse().map_err(|_| {
        KernelError::Input(format!(
            "specialization constant {id} has type {ty}, which lockstep cannot pass"
        ))
    })?;
    let v = Value::parse(vt, text)
        .map_err(|e| KernelError::Input(format!("--spec {id}={text}: {e}")))?;
    let b = v.component_bits(0);
    Ok(match vt.scalar_type() {
        ScalarType::Bool => C::Bool(b != 0),
        ScalarType::I8 => C::I8(b as i8),
        ScalarType::U8 => C::U8(b as u8),
        ScalarType::I16 => C::I16(b as i16),
        ScalarType::U16 => C::U16(b as u16),
        ScalarType::I32 => C::I32(b as i32),
        ScalarType::U32 => C::U32(b as u32),
        ScalarType::I64 => C::I64(b as i64),
        ScalarType::U64 => C::U64(b),
        ScalarType::F16 => C::F16(b as u16),
        ScalarType::F32 => C::F32(f32::from_bits(b as u32)),
        ScalarType::F64 => C::F64(f64::from_bits(b)),
    })
}

#[cfg(feature = "vulkan")]
impl KernelJob {
    /// Runs the kernel once on a device, at subgroup size `size` (required through subgroup size
    /// control when it is not the device's default); returns every buffer's bytes afterwards, in
    /// the order of [`KernelJob::buffers`] then of [`KernelJob::unbound`], and the device
    /// addresses the addressed buffers had (for [`KernelJob::device_bases`]).
    pub fn run_device(
        &self,
        ctx: &crate::vulkan::Context,
        kernel: &Kernel,
        size: u32,
    ) -> Result<DeviceRun, KernelError> {
        use crate::spirv::types::Storage;
        use crate::vulkan::{BoundBuffer, DescriptorKind, ModuleDispatch, VkError};
        let mut buffers = Vec::new();
        for jb in &self.buffers {
            let (set, binding, b) = (&jb.set, &jb.binding, &jb.host);
            let obj = kernel
                .objects
                .iter()
                .find(|o| o.binding == Some((*set, *binding)) && o.element == jb.element);
            let kind = match obj {
                Some(o) => match (o.storage, o.image) {
                    (Storage::Uniform, _) => DescriptorKind::Uniform,
                    (Storage::Image, Some(t)) => {
                        let t = bound_image_type(&t, b).map_err(|e| {
                            KernelError::Input(format!("--buffer {}: {e}", jb.name()))
                        })?;
                        use crate::spirv::types::ImageDim;
                        match t.dim {
                            ImageDim::Buffer if t.storage => {
                                DescriptorKind::StorageTexelBuffer(t.format)
                            }
                            ImageDim::Buffer => DescriptorKind::UniformTexelBuffer(t.format),
                            dim => {
                                let ib = crate::vulkan::ImageBinding {
                                    format: t.format,
                                    extent: extent_of_shape(&t, &b.shape).map_err(|e| {
                                        KernelError::Input(format!("--buffer {}: {e}", jb.name()))
                                    })?,
                                    dims: dim.coords() as u8,
                                    arrayed: t.arrayed,
                                };
                                match (o.sampler, self.sampler_at(*set, *binding)) {
                                    (true, Some(smp)) => {
                                        DescriptorKind::CombinedImageSampler(ib, smp)
                                    }
                                    _ if !t.storage => DescriptorKind::SampledImage(ib),
                                    _ => DescriptorKind::StorageImage(ib),
                                }
                            }
                        }
                    }
                    _ => DescriptorKind::Storage,
                },
                None => DescriptorKind::Storage,
            };
            buffers.push(BoundBuffer {
                set: *set,
                binding: *binding,
                kind,
                data: b.bytes.clone(),
                element: jb.element,
                alias_of: None,
                view: None,
            });
        }
        // Samplers alone, after the buffers (they come back with no bytes, removed below).
        self.check_samplers(kernel)?;
        let n_bound = buffers.len();
        for (set, binding, smp) in &self.samplers {
            if !self
                .buffers
                .iter()
                .any(|b| (b.set, b.binding) == (*set, *binding))
            {
                buffers.push(BoundBuffer {
                    set: *set,
                    binding: *binding,
                    kind: DescriptorKind::Sampler(*smp),
                    data: Vec::new(),
                    element: 0,
                    alias_of: None,
                    view: None,
                });
            }
        }
        let n_samplers = buffers.len() - n_bound;
        let mut spec = Vec::new();
        for (id, text) in &self.spec {
            let ty = kernel
                .spec_ids
                .iter()
                .find(|(s, _)| s == id)
                .map(|(_, t)| t.as_str())
                .unwrap_or("u32");
            spec.push((*id, spec_constant(*id, ty, text)?));
        }
        let entry = kernel.entry_name.clone();
        let d = ModuleDispatch {
            spirv: &self.module.words,
            entry: &entry,
            buffers,
            push_constants: self
                .push
                .as_ref()
                .map(|p| p.bytes.clone())
                .unwrap_or_default(),
            spec,
            workgroups: self.workgroups,
            required_subgroup_size: ctx.caps.required_size(size),
            full_subgroups: false,
            unbound: self.unbound.iter().map(|(_, b)| b.bytes.clone()).collect(),
            addresses: self.addresses.clone(),
        };
        match ctx.run_module(&d) {
            Ok(mut out) => {
                out.buffers.drain(n_bound..n_bound + n_samplers);
                Ok((out.buffers, out.bases))
            }
            Err(VkError::Unsupported(s)) => Err(KernelError::Unsupported(s)),
            Err(VkError::Input(s)) => Err(KernelError::Input(s)),
            Err(e) => Err(KernelError::Device(e.to_string())),
        }
    }
}

/// The lane layout the model should run in to match a device: a layout of the model's own when the
/// device's is one of them, else the device's placements ([`LaneOrder::Device`]); with a note when
/// the device's `gl_SubgroupID` numbering disagrees with how it really grouped the invocations.
#[cfg(feature = "vulkan")]
#[derive(Clone, Debug)]
pub struct ProbedLayout {
    /// the layout
    pub layout: LaneOrder,
    /// with [`LaneOrder::Device`], the placements
    pub placements: Option<std::sync::Arc<[crate::model::Placement]>>,
    /// what the device does that no layout can match
    pub note: Option<String>,
}

/// Learns how `ctx` places the invocations of a `shape` workgroup in subgroups at subgroup size
/// `size` (a probe dispatch, once per device, shape and size: the answer is cached).
///
/// The subgroups are told apart by `subgroupBroadcastFirst(gl_LocalInvocationIndex)`, not by
/// `gl_SubgroupID`, and numbered in the order of their `gl_SubgroupID` (then of their first
/// invocation), each invocation at its `gl_SubgroupInvocationID`.
#[cfg(feature = "vulkan")]
pub fn probe_layout(
    ctx: &crate::vulkan::Context,
    shape: [u32; 3],
    size: u32,
) -> Result<ProbedLayout, KernelError> {
    use crate::model::{Placement, WorkgroupLayout, WorkgroupShape};
    use std::collections::{BTreeMap, HashMap};
    use std::sync::{Mutex, OnceLock};
    type Key = (String, String, [u32; 3], u32);
    static CACHE: OnceLock<Mutex<HashMap<Key, ProbedLayout>>> = OnceLock::new();
    let key = (ctx.info.name.clone(), ctx.info.driver.clone(), shape, size);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(p);
    }
    let wg = WorkgroupShape::new(shape[0], shape[1], shape[2])
        .map_err(|e| KernelError::Input(e.to_string()))?;
    let sg = SubgroupSize::new(size as u64).map_err(|e| KernelError::Input(e.to_string()))?;
    let recs = ctx.probe_lane_layout(shape, size).map_err(|e| match e {
        // The kernel's own dispatch would be refused the same way: not a device failure.
        crate::vulkan::VkError::Unsupported(m) => KernelError::Unsupported(m),
        e => KernelError::Device(format!("probing the device's lane layout: {e}")),
    })?;
    // Subgroups by their first invocation; numbered by (gl_SubgroupID, first invocation).
    let mut groups: BTreeMap<u32, u32> = BTreeMap::new();
    for r in &recs {
        let e = groups.entry(r.leader).or_insert(r.subgroup_id);
        *e = (*e).min(r.subgroup_id);
    }
    let mut order: Vec<(u32, u32)> = groups.iter().map(|(&l, &id)| (id, l)).collect();
    order.sort();
    let rank: HashMap<u32, u32> = order
        .iter()
        .enumerate()
        .map(|(k, &(_, l))| (l, k as u32))
        .collect();
    let placements: Vec<Placement> = recs
        .iter()
        .map(|r| Placement {
            subgroup: rank[&r.leader],
            lane: r.lane,
        })
        .collect();
    let table = WorkgroupLayout::from_placements(wg, sg, &placements).map_err(|e| {
        KernelError::Device(format!(
            "the device's lane layout for {}x{}x{} at size {size} is not one a model can run: {e}",
            shape[0], shape[1], shape[2]
        ))
    })?;
    let renumbered = recs
        .iter()
        .zip(&placements)
        .any(|(r, p)| r.subgroup_id != p.subgroup);
    let note = renumbered.then(|| {
        format!(
            "the device ran {} subgroups but numbered them with {} distinct gl_SubgroupID values; the model numbers them 0..{}",
            table.num_subgroups(),
            recs.iter().map(|r| r.subgroup_id).collect::<std::collections::BTreeSet<_>>().len(),
            table.num_subgroups()
        )
    });
    let own = LaneOrder::all().into_iter().find(|l| {
        WorkgroupLayout::new(wg, sg, *l).is_ok_and(|w| w.placements() == table.placements())
    });
    let probed = match own {
        Some(l) => ProbedLayout {
            layout: l,
            placements: None,
            note,
        },
        None => ProbedLayout {
            layout: LaneOrder::Device,
            placements: Some(placements.into()),
            note,
        },
    };
    if let Ok(mut c) = cache.lock() {
        c.insert(key, probed.clone());
    }
    Ok(probed)
}

/// What the comparison of one element allows beyond equal bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Allow {
    /// the value is inexact: within the tolerance (a float) or within one (a number)
    pub inexact: bool,
    /// an inexact value is a float's bits ([`crate::spirv::Taint::is_float_bits`])
    pub float_bits: bool,
    /// a float zero of either sign is the same value (the kernel does not declare
    /// `SignedZeroInfNanPreserve` for its width: [`crate::spirv::Kernel`]'s flags)
    pub zero_sign: bool,
}

/// Do the model's `mbits` and the device's `dbits` of an element of `dtype` agree: bit for bit
/// (a float's zero of either sign where `allow.zero_sign`), or for an inexact value within the
/// tolerance (a float, or a float's bits read as an integer) or within one (an integer converted
/// from a float: a normalized texel component may be "one of the two nearest" integers, Vulkan,
/// Fixed-Point Data Conversion)?
pub(crate) fn agrees(
    dtype: ScalarType,
    allow: Allow,
    mbits: u64,
    dbits: u64,
    tol: Tolerance,
) -> bool {
    let Allow {
        inexact,
        float_bits,
        zero_sign,
    } = allow;
    if inexact && dtype.is_float() {
        within(dtype, mbits, dbits, tol)
    } else if let (true, Some(f)) = (inexact && float_bits, float_of_width(dtype)) {
        // An inexact float's bits read as an integer (`floatBitsToUint`, or a float stored in a
        // buffer given an integer type): a device's float may differ from the model's within the
        // tolerance, its bits then by any amount.
        within(f, mbits, dbits, tol)
    } else if inexact {
        // An inexact integer: a float converted to a normalized texel
        // component, where "one of the two nearest" integers may be stored
        // (Vulkan, Fixed-Point Data Conversion), or a float converted to
        // an integer: within one.
        let (m, d) = (
            Value::from_bits(ValueType::scalar(dtype), &[mbits]),
            Value::from_bits(ValueType::scalar(dtype), &[dbits]),
        );
        (m.component_f64(0) - d.component_f64(0)).abs() <= 1.0
    } else if zero_sign && dtype.is_float() {
        let magnitude = !(1u64 << (dtype.bits() - 1)) & (u64::MAX >> (64 - dtype.bits()));
        mbits == dbits || (mbits & magnitude == 0 && dbits & magnitude == 0)
    } else {
        mbits == dbits
    }
}

/// A mismatch's item, reason and line: the element's name and both values, who wrote it on the
/// model (at byte `byte` of `out`) and where.
#[allow(clippy::too_many_arguments)]
fn mismatch(
    r: &spirv::ModelRun,
    out: &spirv::report::BufferOutput,
    byte: usize,
    name: &str,
    dtype: ScalarType,
    (mbits, dbits): (u64, u64),
    (inexact, float_bits): (bool, bool),
    tol: Tolerance,
) -> (String, String, Option<u32>) {
    let writer = out.writer_at(byte);
    let who = if writer.0 == 0 {
        "not written by the kernel on the model (initial value)".to_string()
    } else {
        format!("written at {}", r.at(writer.1))
    };
    let item = format!(
        "{name}: model {} device {}{}",
        show(dtype, mbits),
        show(dtype, dbits),
        if writer.0 == 0 {
            String::new()
        } else {
            format!(" (by {})", r.invocation_text(writer.0))
        }
    );
    let why = format!(
        "model and device differ{}; {who}",
        if inexact {
            format!(
                " beyond the tolerance (rel {:e}, abs {:e}) for an inexact value{}",
                tol.rel,
                tol.abs,
                if float_bits {
                    " (a float's bits, compared as that float)"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        }
    );
    let line = (writer.0 != 0).then(|| r.line(writer.1)).flatten();
    (item, why, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    // What the comparison calls equal: an element the spec defines exactly (an integer, or a float
    // the spec pins to the bit) only bit for bit; an inexact float within the tolerance; an
    // inexact integer (a float converted to a normalized texel component: "one of the two
    // nearest", Vulkan, Fixed-Point Data Conversion) within one.
    #[test]
    fn an_exact_element_agrees_bit_for_bit_and_an_inexact_one_within_its_bound() {
        let tol = Tolerance::default();
        let (one, next) = (1.0f32.to_bits() as u64, (1.0f32.to_bits() + 1) as u64);
        let exact = Allow::default();
        let inexact = Allow {
            inexact: true,
            ..exact
        };
        let float_bits = Allow {
            float_bits: true,
            ..inexact
        };
        assert!(!agrees(ScalarType::F32, exact, one, next, tol));
        assert!(agrees(ScalarType::F32, exact, one, one, tol));
        assert!(agrees(ScalarType::F32, inexact, one, next, tol));
        assert!(!agrees(ScalarType::U32, exact, 5, 6, tol));
        assert!(agrees(ScalarType::U32, inexact, 5, 6, tol));
        assert!(!agrees(ScalarType::U32, inexact, 5, 7, tol));
        // An inexact float's bits read as an integer (`floatBitsToUint`) agree where the floats
        // do: 1.0 and the float 40 ulps above it (4.8e-6 apart, within the default relative
        // 1e-5), +0 and -0; not 1.0 and 1.001 — nor two small integers, which as floats would be
        // denormals within the absolute tolerance, where the integer is not marked as bits.
        let (far, zero, minus_zero) = (1.001f32.to_bits() as u64, 0u64, 0x8000_0000u64);
        assert!(agrees(ScalarType::U32, float_bits, one, one + 40, tol));
        assert!(!agrees(ScalarType::U32, inexact, one, one + 40, tol));
        assert!(agrees(ScalarType::U32, float_bits, zero, minus_zero, tol));
        assert!(agrees(ScalarType::I32, float_bits, zero, minus_zero, tol));
        assert!(!agrees(ScalarType::U32, float_bits, one, far, tol));
        assert!(!agrees(ScalarType::U32, inexact, 5, 500, tol));
        let (d1, d2) = (1.0f64.to_bits(), 1.0f64.to_bits() + (1 << 20));
        assert!(agrees(ScalarType::U64, float_bits, d1, d2, tol));
        assert!(!agrees(ScalarType::U64, exact, d1, d2, tol));
        // Without SignedZeroInfNanPreserve a device may ignore a zero's sign (Vulkan, "Precision
        // and Operation of SPIR-V Instructions"): +0 and -0 agree as floats of every width, and
        // nothing else does that did not; with the mode, and for integers, they differ.
        let zero_sign = Allow {
            zero_sign: true,
            ..exact
        };
        assert!(agrees(ScalarType::F32, zero_sign, zero, minus_zero, tol));
        assert!(agrees(ScalarType::F64, zero_sign, 0, 1 << 63, tol));
        assert!(agrees(ScalarType::F16, zero_sign, 0x8000, 0, tol));
        assert!(!agrees(ScalarType::F32, zero_sign, zero, 1, tol));
        assert!(!agrees(
            ScalarType::F32,
            zero_sign,
            minus_zero,
            0x8000_0001,
            tol
        ));
        assert!(!agrees(ScalarType::F32, exact, zero, minus_zero, tol));
        assert!(!agrees(ScalarType::U32, zero_sign, zero, minus_zero, tol));
    }
}
