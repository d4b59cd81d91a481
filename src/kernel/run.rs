//! A user's kernel run on the model and on a device, and compared element by element: bit for bit
//! where the model's value is defined, exact and order-independent; within a tolerance where the
//! precision rules let a device differ (inexact); and listed with its chain, not compared, where it
//! is undefined, order-dependent or racy.
//!
//! ```
//! use lockstep::kernel::{run::{KernelJob, Tolerance}, HostBuffer, SpirvModule, SourceLang, TargetEnv};
//! use lockstep::model::SubgroupSize;
//! // The compiled example kernel: b[gl_GlobalInvocationID.x] = gl_SubgroupInvocationID.
//! let module = SpirvModule {
//!     words: lockstep::spirv::examples::lane_ids(), lang: SourceLang::SpirvBinary,
//!     name: "lane_ids.spv".into(), target_env: TargetEnv::Vulkan1_1, source_text: None,
//! };
//! let mut job = KernelJob::new(module);
//! job.workgroups = [2, 1, 1];
//! job.buffers.push((0, 0, HostBuffer::from_slice(&[0u32; 16])));
//! let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
//! // Model only (a device run would pass `Some(&device_bytes)`):
//! let report = job.compare(&model, None, Tolerance::default());
//! assert!(report.ok(), "{}", report.text());
//! assert_eq!(report.buffers[0].exact, 16);
//! assert_eq!(model.run.buffers[0].bytes[4..8], 1u32.to_le_bytes());
//! ```

use crate::kernel::buffers::{element_size, HostBuffer};
use crate::kernel::source::SpirvModule;
use crate::model::{LaneOrder, ScalarType, SubgroupSize, Value, ValueType};
use crate::reconverge::Mode;
use crate::spirv::{
    self, BufferInput, DecodeOptions, Kernel, ModelRun, RunConfig, SpecInput, SpirvError,
    WordStatus,
};
use serde_json::json;
use std::fmt::Write;

/// Why a kernel could not be run.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// bad input: the module, the buffers or the parameters (exit 64)
    #[error("{0}")]
    Input(String),
    /// the interpreter stopped (an infinite loop, …) (exit 1)
    #[error("{0}")]
    Stopped(String),
    /// the device cannot run it (exit 0 with a note, or 2)
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// a device error (exit 70)
    #[error("{0}")]
    Device(String),
}

impl From<SpirvError> for KernelError {
    fn from(e: SpirvError) -> Self {
        match e {
            SpirvError::Stopped { .. } => KernelError::Stopped(e.to_string()),
            _ => KernelError::Input(e.to_string()),
        }
    }
}

/// Everything one dispatch of a kernel needs.
#[derive(Clone, Debug)]
pub struct KernelJob {
    /// the module
    pub module: SpirvModule,
    /// entry point (default: the module's only compute entry point, or `main`)
    pub entry: Option<String>,
    /// buffers: (descriptor set, binding, contents)
    pub buffers: Vec<(u32, u32, HostBuffer)>,
    /// push constants
    pub push: Option<HostBuffer>,
    /// specialization constants: SpecId and the value as text (typed by the module)
    pub spec: Vec<(u32, String)>,
    /// workgroup counts
    pub workgroups: [u32; 3],
    /// which local invocations form a subgroup on the model
    pub layout: LaneOrder,
    /// the reconvergence model (default: what the module declares)
    pub mode: Option<Mode>,
    /// lane-instructions one workgroup may execute on the model
    pub max_steps: u64,
}

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

/// How far an inexact float may be from the model's value: `|d − m| ≤ abs + rel · max(|d|, |m|)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// relative part
    pub rel: f64,
    /// absolute part
    pub abs: f64,
}

impl Default for Tolerance {
    /// rel 1e-5 (about 80 ulp of f32), abs 1e-6: roomy for a handful of contracted or reordered
    /// operations, tight enough that a wrong formula shows.
    fn default() -> Self {
        Tolerance {
            rel: 1e-5,
            abs: 1e-6,
        }
    }
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
            mode: None,
            max_steps: spirv::DEFAULT_MAX_STEPS,
        }
    }

    /// Decodes the module for this job's entry point and specialization constants.
    pub fn decode(&self) -> Result<Kernel, KernelError> {
        let k = spirv::decode(
            &self.module.words,
            &DecodeOptions {
                entry: self.entry.clone(),
                spec: self
                    .spec
                    .iter()
                    .map(|(id, v)| (*id, SpecInput::Text(v.clone())))
                    .collect(),
                name: self.module.name.clone(),
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
        let kernel = self.decode()?;
        let mode = self.mode.unwrap_or(kernel.declared_mode);
        let cfg = RunConfig {
            size,
            layout: self.layout,
            mode,
            workgroups: self.workgroups,
            max_steps: self.max_steps,
            lost_paths_end: true,
        };
        let inputs: Vec<BufferInput> = self
            .buffers
            .iter()
            .map(|(set, binding, b)| BufferInput {
                set: *set,
                binding: *binding,
                bytes: b.bytes.clone(),
                undefined: Vec::new(),
            })
            .collect();
        let push = self.push.as_ref().map(|p| p.bytes.as_slice());
        let run = spirv::run_model_with_progress(&kernel, cfg, &inputs, push, progress)?;
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
            findings_total: 0,
            failing: 0,
            device: device.is_some(),
            tolerance: tol,
        };
        for f in &r.findings {
            report.push(Finding {
                kind: finding_kind(f),
                set: None,
                binding: None,
                index: None,
                line: finding_line(r, f),
                why: r.finding_text(f),
                device: None,
            });
        }
        let unkept = r.finding_count.saturating_sub(r.findings.len() as u64);
        report.findings_total += unkept;
        report.failing += unkept;
        for (bi, (set, binding, host)) in self.buffers.iter().enumerate() {
            let Some(out) = r
                .buffers
                .iter()
                .find(|b| b.set == *set && b.binding == *binding)
            else {
                continue;
            };
            let es = element_size(host.dtype);
            let n = host.bytes.len() / es.max(1);
            let mut br = BufferReport {
                set: *set,
                binding: *binding,
                dtype: host.dtype,
                elements: n,
                exact: 0,
                inexact: 0,
                undefined: 0,
                order_dependent: 0,
                racy: 0,
                mismatches: 0,
            };
            let dev = device.and_then(|d| d.get(bi));
            for i in 0..n {
                let (w0, w1) = (i * es, i * es + es - 1);
                let taint = (w0..=w1)
                    .map(|b| out.taint.get(b).copied().unwrap_or(0))
                    .fold(0, crate::spirv::prov::combine);
                let status = r.status(taint);
                let bits = |b: &[u8]| -> u64 {
                    let mut x = [0u8; 8];
                    x[..es].copy_from_slice(&b[i * es..(i + 1) * es]);
                    u64::from_le_bytes(x)
                };
                let mbits = bits(&out.bytes);
                let name = format!("{}[{i}]", binding_name(*set, *binding));
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
                            let same = if inexact && host.dtype.is_float() {
                                within(host.dtype, mbits, dbits, tol)
                            } else {
                                mbits == dbits
                            };
                            if !same {
                                br.mismatches += 1;
                                let writer = out.writer.get(w0).copied().unwrap_or((0, 0));
                                let who = if writer.0 == 0 {
                                    "not written by the kernel on the model (initial value)"
                                        .to_string()
                                } else {
                                    format!(
                                        "written by {} at {}",
                                        r.invocation_text(writer.0),
                                        r.at(writer.1)
                                    )
                                };
                                report.push(Finding {
                                    kind: "mismatch",
                                    set: Some(*set),
                                    binding: Some(*binding),
                                    index: Some(i),
                                    line: (writer.0 != 0).then(|| r.line(writer.1)).flatten(),
                                    device: Some(show(host.dtype, dbits)),
                                    why: format!(
                                        "{name}: model {} device {}{}; {who}",
                                        show(host.dtype, mbits),
                                        show(host.dtype, dbits),
                                        if inexact {
                                            format!(" (inexact: beyond the tolerance rel {:e} abs {:e})", tol.rel, tol.abs)
                                        } else {
                                            String::new()
                                        }
                                    ),
                                });
                            }
                        }
                    }
                    WordStatus::Undefined(chain)
                    | WordStatus::OrderDependent(chain)
                    | WordStatus::Racy(chain) => {
                        let kind = match status {
                            WordStatus::Undefined(_) => {
                                br.undefined += 1;
                                "undefined"
                            }
                            WordStatus::OrderDependent(_) => {
                                br.order_dependent += 1;
                                "order_dependent"
                            }
                            _ => {
                                br.racy += 1;
                                "race"
                            }
                        };
                        report.push(Finding {
                            kind,
                            set: Some(*set),
                            binding: Some(*binding),
                            index: Some(i),
                            line: None,
                            why: format!("{name} ← {chain}"),
                            device: dev.map(|d| show(host.dtype, bits(d))),
                        });
                    }
                }
            }
            report.buffers.push(br);
        }
        report
    }
}

/// `b` (set 0) or `s.b`.
fn binding_name(set: u32, binding: u32) -> String {
    if set == 0 {
        format!("binding {binding}")
    } else {
        format!("binding {set}.{binding}")
    }
}

fn show(t: ScalarType, bits: u64) -> String {
    Value::from_bits(ValueType::scalar(t), &[bits]).to_string()
}

fn within(t: ScalarType, a: u64, b: u64, tol: Tolerance) -> bool {
    let v = |x: u64| Value::from_bits(ValueType::scalar(t), &[x]).component_f64(0);
    let (x, y) = (v(a), v(b));
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x == y {
        return true;
    }
    (x - y).abs() <= tol.abs + tol.rel * x.abs().max(y.abs())
}

fn finding_kind(f: &crate::spirv::Finding) -> &'static str {
    match f {
        crate::spirv::Finding::Race { .. } => "race",
        crate::spirv::Finding::DivergentBarrier { .. } => "divergent_barrier",
        crate::spirv::Finding::OutOfBounds { .. } => "out_of_bounds",
        crate::spirv::Finding::LostPath { .. } => "undefined",
        crate::spirv::Finding::Unreachable { .. } => "undefined",
    }
}

fn finding_line(r: &ModelRun, f: &crate::spirv::Finding) -> Option<u32> {
    let loc = match f {
        crate::spirv::Finding::Race { b, .. } => b.1,
        crate::spirv::Finding::DivergentBarrier { loc, .. }
        | crate::spirv::Finding::OutOfBounds { loc, .. }
        | crate::spirv::Finding::LostPath { loc, .. }
        | crate::spirv::Finding::Unreachable { loc } => *loc,
    };
    r.line(loc)
}

/// One buffer's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferReport {
    /// descriptor set
    pub set: u32,
    /// binding
    pub binding: u32,
    /// element type (from the buffer given)
    pub dtype: ScalarType,
    /// elements
    pub elements: usize,
    /// defined and exact (compared bit for bit)
    pub exact: usize,
    /// defined and inexact (compared within the tolerance)
    pub inexact: usize,
    /// undefined (not compared)
    pub undefined: usize,
    /// order-dependent (not compared)
    pub order_dependent: usize,
    /// racy (not compared)
    pub racy: usize,
    /// compared and different
    pub mismatches: usize,
}

/// One finding of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// `undefined`, `order_dependent`, `race`, `divergent_barrier`, `out_of_bounds`, `mismatch`
    pub kind: &'static str,
    /// the buffer, for element findings
    pub set: Option<u32>,
    /// the binding
    pub binding: Option<u32>,
    /// the element
    pub index: Option<usize>,
    /// source line, where known
    pub line: Option<u32>,
    /// the explanation (the chain)
    pub why: String,
    /// what the device wrote there, for element findings of a run with a device
    pub device: Option<String>,
}

/// An out-of-bounds finding ("out-of-bounds read of X at byte N by WHO at LOC") split into what
/// differs per invocation ("byte N by WHO") and what a group of them shares ("out-of-bounds read of
/// X at LOC"), so that a loop reading past a buffer reads as one line.
fn oob_parts(f: &Finding) -> Option<(String, String)> {
    if f.kind != "out_of_bounds" {
        return None;
    }
    let (what, rest) = f.why.split_once(" at byte ")?;
    let (byte_who, loc) = rest.rsplit_once(" at ")?;
    Some((format!("byte {byte_who}"), format!("{what} at {loc}")))
}

/// Most findings a report keeps (the counts go on).
pub const MAX_REPORT_FINDINGS: usize = 10_000;

/// The comparison of a kernel's run on the model (and a device).
#[derive(Clone, Debug)]
pub struct Report {
    /// the kernel's name
    pub kernel: String,
    /// the reconvergence model
    pub mode: Mode,
    /// subgroup size
    pub subgroup_size: u32,
    /// workgroup counts
    pub workgroups: [u32; 3],
    /// invocations run
    pub invocations: u64,
    /// lane-instructions the model executed
    pub lane_instructions: u64,
    /// per buffer
    pub buffers: Vec<BufferReport>,
    /// findings (at most [`MAX_REPORT_FINDINGS`])
    pub findings: Vec<Finding>,
    /// findings, kept or not
    pub findings_total: u64,
    /// findings that fail the run (all but `order_dependent`, which are explained, not wrong)
    pub failing: u64,
    /// a device was compared
    pub device: bool,
    /// the tolerance used for inexact elements
    pub tolerance: Tolerance,
}

impl Report {
    fn push(&mut self, f: Finding) {
        self.findings_total += 1;
        if f.kind != "order_dependent" {
            self.failing += 1;
        }
        if self.findings.len() < MAX_REPORT_FINDINGS {
            self.findings.push(f);
        }
    }

    /// Model and device agree and nothing undefined or racy reached a buffer, and there was no
    /// race, divergent barrier or out-of-bounds access. Order-dependent elements (an atomic's
    /// returned value, and what it decides) are explained, not failures: the program asked for an
    /// order the device picks.
    pub fn ok(&self) -> bool {
        self.failing == 0
    }

    /// The summary for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} invocations ({}×{}×{} workgroups), subgroup size {}, {} reconvergence; {} lane-instructions on the model",
            self.kernel,
            self.invocations,
            self.workgroups[0],
            self.workgroups[1],
            self.workgroups[2],
            self.subgroup_size,
            self.mode,
            self.lane_instructions
        );
        let mut rows = vec![[
            "buffer",
            "type",
            "elements",
            "exact",
            "inexact",
            "undefined",
            "order-dep.",
            "racy",
            if self.device {
                "model ≠ device"
            } else {
                "(no device)"
            },
        ]
        .map(String::from)
        .to_vec()];
        for b in &self.buffers {
            rows.push(vec![
                binding_name(b.set, b.binding),
                b.dtype.to_string(),
                b.elements.to_string(),
                b.exact.to_string(),
                b.inexact.to_string(),
                b.undefined.to_string(),
                b.order_dependent.to_string(),
                b.racy.to_string(),
                if self.device {
                    b.mismatches.to_string()
                } else {
                    "-".into()
                },
            ]);
        }
        s += &crate::text::table(&rows);
        // Group element findings by their explanation without the element name, so that a
        // thousand cells undefined for one reason read as one line.
        let mut groups: Vec<(String, &'static str, Vec<String>)> = Vec::new();
        for f in &self.findings {
            let (head, rest) = match (f.index, f.why.split_once(" ← ")) {
                (Some(_), Some((h, r))) if f.kind != "mismatch" => (
                    match &f.device {
                        Some(d) => format!("{h} (device: {d})"),
                        None => h.to_string(),
                    },
                    r.to_string(),
                ),
                _ => match oob_parts(f) {
                    Some((head, rest)) => (head, rest),
                    None => (String::new(), f.why.clone()),
                },
            };
            match groups.iter_mut().find(|g| g.0 == rest && g.1 == f.kind) {
                Some(g) => g.2.push(head),
                None => groups.push((rest, f.kind, vec![head])),
            }
        }
        if !groups.is_empty() {
            s += "\nfindings:\n";
        }
        for (why, kind, heads) in groups.iter().take(50) {
            let heads: Vec<&String> = heads.iter().filter(|h| !h.is_empty()).collect();
            if heads.is_empty() {
                let _ = writeln!(s, "  [{kind}] {why}");
            } else {
                let shown: Vec<&str> = heads.iter().take(4).map(|h| h.as_str()).collect();
                let more = if heads.len() > 4 {
                    format!(" and {} more", heads.len() - 4)
                } else {
                    String::new()
                };
                let _ = writeln!(s, "  [{kind}] {}{more} ← {why}", shown.join(", "));
            }
        }
        if groups.len() > 50 {
            let _ = writeln!(
                s,
                "  … {} more kinds of finding (see --json)",
                groups.len() - 50
            );
        }
        let kept = self.findings.len() as u64;
        if self.findings_total > kept {
            let _ = writeln!(
                s,
                "  ({} findings in all; the first {kept} are kept)",
                self.findings_total
            );
        }
        let _ = writeln!(
            s,
            "result: {}",
            if self.ok() {
                match (self.device, self.findings_total > 0) {
                    (true, false) => "PASS (model and device agree; nothing undefined reached a buffer)",
                    (false, false) => "PASS (model only; nothing undefined reached a buffer)",
                    (true, true) => "PASS (model and device agree where the order of atomics does not decide; nothing undefined reached a buffer)",
                    (false, true) => "PASS (model only; order-dependent elements explained above; nothing undefined reached a buffer)",
                }
            } else {
                "FAIL"
            }
        );
        s
    }

    /// The JSON report (issue 9 §5's shape).
    pub fn json(&self) -> serde_json::Value {
        json!({
            "kernel": self.kernel,
            "mode": self.mode.name(),
            "subgroup_size": self.subgroup_size,
            "workgroups": self.workgroups,
            "invocations": self.invocations,
            "lane_instructions": self.lane_instructions,
            "device": self.device,
            "tolerance": {"rel": self.tolerance.rel, "abs": self.tolerance.abs},
            "ok": self.ok(),
            "buffers": self.buffers.iter().map(|b| json!({
                "set": b.set, "binding": b.binding, "type": b.dtype.name(), "elements": b.elements,
                "exact": b.exact, "inexact": b.inexact, "undefined": b.undefined,
                "order_dependent": b.order_dependent, "racy": b.racy, "mismatches": b.mismatches,
            })).collect::<Vec<_>>(),
            "findings": self.findings.iter().map(|f| json!({
                "kind": f.kind, "set": f.set, "binding": f.binding, "index": f.index,
                "line": f.line, "why": f.why, "device": f.device,
            })).collect::<Vec<_>>(),
            "findings_total": self.findings_total,
        })
    }
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
    /// the order of [`KernelJob::buffers`].
    pub fn run_device(
        &self,
        ctx: &crate::vulkan::Context,
        kernel: &Kernel,
        size: u32,
    ) -> Result<Vec<Vec<u8>>, KernelError> {
        use crate::spirv::types::Storage;
        use crate::vulkan::{BoundBuffer, DescriptorKind, ModuleDispatch, VkError};
        let mut buffers = Vec::new();
        for (set, binding, b) in &self.buffers {
            let kind = kernel
                .objects
                .iter()
                .find(|o| o.binding == Some((*set, *binding)))
                .map(|o| match o.storage {
                    Storage::Uniform => DescriptorKind::Uniform,
                    _ => DescriptorKind::Storage,
                })
                .unwrap_or(DescriptorKind::Storage);
            buffers.push(BoundBuffer {
                set: *set,
                binding: *binding,
                kind,
                data: b.bytes.clone(),
            });
        }
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
            required_subgroup_size: (size != ctx.caps.subgroup_size).then_some(size),
            full_subgroups: false,
        };
        match ctx.run_module(&d) {
            Ok(out) => Ok(out.buffers),
            Err(VkError::Unsupported(s)) => Err(KernelError::Unsupported(s)),
            Err(VkError::Input(s)) => Err(KernelError::Input(s)),
            Err(e) => Err(KernelError::Device(e.to_string())),
        }
    }
}
