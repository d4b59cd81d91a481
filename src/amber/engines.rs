//! The two [`Backend`]s: the model (the SPIR-V interpreter, [`crate::spirv`]) and a Vulkan device
//! ([`crate::vulkan::Context::run_module`]). Both get the same SPIR-V module for a shader — compiled
//! once per file by [`crate::kernel::compile`] — so a difference between them is a difference in
//! what runs it, not in the code.

use super::backend::{
    Annotation, AnnotationKind, Backend, BackendError, BackendKind, Dispatch, DispatchOutput,
};
use super::parse::Unsupported;
use super::script::{BindingKind, RequiredSize, Script, Shader, ShaderCode};
use crate::kernel::run::{KernelError, KernelJob};
use crate::kernel::{HostBuffer, SourceLang, SourceOptions, SpirvModule, TargetEnv};
use crate::model::ScalarType;
use crate::model::SubgroupSize;
use crate::reconverge::Mode;
use crate::spirv::report::Verdicts;
use crate::spirv::{self, BufferInput, DecodeOptions, SpecInput, WordStatus};
use std::collections::HashMap;

/// A compiled shader's key: its name, its text and the target environment asked for.
type CompileKey = (String, String, Option<TargetEnv>);

/// SPIR-V words of a shader, compiled once per (source, format, target).
#[derive(Default)]
struct Compiled {
    cache: HashMap<CompileKey, Vec<u32>>,
}

impl Compiled {
    fn words(&mut self, script_name: &str, s: &Shader) -> Result<Vec<u32>, BackendError> {
        let (text, lang) = match &s.code {
            // hex and binary modules need no compiler (and their source text keys nothing)
            ShaderCode::SpirvWords(w) => return Ok(w.clone()),
            ShaderCode::Glsl(text) => (text, SourceLang::Glsl),
            ShaderCode::SpirvAsm(text) => (text, SourceLang::SpirvAsm),
        };
        let key = (s.source.clone(), s.format.to_string(), s.target_env);
        if let Some(w) = self.cache.get(&key) {
            return Ok(w.clone());
        }
        let opts = SourceOptions {
            name: format!("{script_name}:{}", s.name),
            target_env: s.target_env,
            ..SourceOptions::default()
        };
        let words = crate::kernel::compile(text, lang, &opts)
            .map_err(|e| {
                let msg = e.to_string();
                BackendError::BadInput {
                    line: shader_line(&msg, s).or(Some(s.line)),
                    message: format!("SHADER {}: {msg}", s.name),
                }
            })?
            .words;
        self.cache.insert(key, words.clone());
        Ok(words)
    }
}

impl Compiled {
    /// The words of pipeline `p`'s shader `s`, through the pipeline's `SHADER_OPTIMIZATION`
    /// passes when it has any: both backends run the optimized module.
    fn pipeline_words(
        &mut self,
        script_name: &str,
        s: &Shader,
        p: &super::script::Pipeline,
    ) -> Result<Vec<u32>, BackendError> {
        let words = self.words(script_name, s)?;
        if p.optimizations.is_empty() {
            return Ok(words);
        }
        optimize(&words, &p.optimizations).map_err(|e| match e {
            OptError::Missing(m) => BackendError::Unsupported(m),
            OptError::Failed(m) => BackendError::BadInput {
                line: Some(p.line),
                message: format!("SHADER_OPTIMIZATION of {}: {m}", s.name),
            },
        })
    }
}

enum OptError {
    /// no optimizer here
    Missing(String),
    /// the optimizer refused the module or a flag
    Failed(String),
}

/// Runs SPIRV-Tools' optimizer (`spirv-opt`, from the `spirv-tools` package that the set-up
/// installs) with Amber's pass flags on `words`, for the module's own SPIR-V version.
fn optimize(words: &[u32], flags: &[String]) -> Result<Vec<u32>, OptError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    let stem = format!(
        "lockstep-opt-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let (src, dst) = (
        dir.join(format!("{stem}.in.spv")),
        dir.join(format!("{stem}.out.spv")),
    );
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&src, bytes)
        .map_err(|e| OptError::Failed(format!("writing {}: {e}", src.display())))?;
    let version = words.get(1).copied().unwrap_or(0x0001_0000);
    let env = format!(
        "--target-env=spv{}.{}",
        (version >> 16) & 0xff,
        (version >> 8) & 0xff
    );
    let out = std::process::Command::new("spirv-opt")
        .arg(&env)
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&dst)
        .output();
    let _ = std::fs::remove_file(&src);
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(OptError::Missing(
                "SHADER_OPTIMIZATION needs SPIRV-Tools' optimizer `spirv-opt` (Debian package spirv-tools), which is not installed".into(),
            ))
        }
        Err(e) => return Err(OptError::Failed(format!("running spirv-opt: {e}"))),
    };
    let result = if out.status.success() {
        std::fs::read(&dst)
            .map_err(|e| OptError::Failed(format!("reading spirv-opt's output: {e}")))
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
    } else {
        Err(OptError::Failed(format!(
            "spirv-opt {} failed: {}",
            flags.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    };
    let _ = std::fs::remove_file(&dst);
    result
}

/// The script line of a compiler message's `name:LINE:` (the shader's line + LINE − 1).
fn shader_line(msg: &str, s: &Shader) -> Option<usize> {
    if s.file.is_some() {
        // The message names the line of the file; the script's line is the SHADER command.
        return Some(s.line);
    }
    let rest = msg.split(&format!("{}:", s.name)).nth(1)?;
    let n: usize = rest.split(':').next()?.trim().parse().ok()?;
    Some(s.source_line + n.max(1) - 1)
}

/// The model: the SPIR-V interpreter at one subgroup size, under the shaders' declared
/// reconvergence model or a forced one.
pub struct ModelBackend {
    mode: Option<Mode>,
    size: SubgroupSize,
    /// the size was asked for (reports then label the run with it)
    explicit_size: bool,
    compiled: Compiled,
    script_name: String,
}

impl ModelBackend {
    /// A model backend (default subgroup size: 32, the H100's).
    pub fn new(mode: Option<Mode>, size: Option<SubgroupSize>) -> ModelBackend {
        ModelBackend {
            mode,
            explicit_size: size.is_some(),
            size: size.unwrap_or(SubgroupSize::new(32).expect("32 is a subgroup size")),
            compiled: Compiled::default(),
            script_name: "script".into(),
        }
    }

    /// Names the file whose dispatches follow (for shader names in messages).
    pub fn set_file(&mut self, name: &str) {
        self.script_name = name.to_string();
    }
}

impl Backend for ModelBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Model
    }

    fn forced_mode(&self) -> Option<Mode> {
        self.mode
    }

    fn model_size(&self) -> Option<u32> {
        self.explicit_size.then_some(self.size.get())
    }

    fn requirements(&self, script: &Script) -> Result<(), Unsupported> {
        // The model has every feature and extension a compute script can ask for except those
        // outside the interpreter's subset, listed here or reported by the dispatch. Of the float
        // controls it computes correctly rounded to nearest even, keeps signed zeros, infinities,
        // NaNs and denormals (a denormal result is inexact where flushing is allowed): it lacks
        // the round-towards-zero mode.
        for f in &script.device_features {
            let lacks = match f.name.rsplit('.').next().unwrap_or(&f.name) {
                "bufferDeviceAddress" => {
                    Some("physical storage buffer pointers are not interpreted")
                }
                "cooperativeMatrix" => Some("cooperative matrices are not modelled"),
                "longVector" => {
                    Some("vectors of more than 4 components (SPV_EXT_long_vector) are not modelled")
                }
                "rayTracingPipeline" | "accelerationStructure" => {
                    Some("ray tracing is not compute")
                }
                _ => None,
            };
            if let Some(why) = lacks {
                return Err(Unsupported {
                    line: Some(f.line),
                    command: "DEVICE_FEATURE".into(),
                    reason: format!("the model lacks {}: {why}", f.name),
                    graphics: false,
                });
            }
        }
        for p in &script.device_properties {
            if p.name.contains("RoundingModeRTZ") {
                return Err(Unsupported {
                    line: Some(p.line),
                    command: "DEVICE_PROPERTY".into(),
                    reason: format!(
                        "the model lacks {}: it rounds to nearest even (RoundingModeRTZ is not modelled)",
                        p.name
                    ),
                    graphics: false,
                });
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError> {
        let words = self
            .compiled
            .pipeline_words(&self.script_name, d.shader, d.pipeline)?;
        let spec = d
            .pipeline
            .specializations
            .iter()
            .map(|s| (s.id, SpecInput::Bits(s.bits as u64)))
            .collect();
        let k = spirv::decode(
            &words,
            &DecodeOptions {
                keep_calls: false,
                keep_variables: false,
                keep_loops: false,
                entry: Some(d.pipeline.entry_point.clone()),
                spec,
                name: d.shader.name.clone(),
                all_non_private: false,
                names: match &d.shader.code {
                    ShaderCode::SpirvAsm(text) => crate::kernel::source::source_names(
                        SourceLang::SpirvAsm,
                        Some(text),
                        &words,
                    ),
                    _ => Vec::new(),
                },
            },
        )
        .map_err(|e| match e {
            spirv::SpirvError::Unsupported { .. } => BackendError::Unsupported(e.to_string()),
            _ => BackendError::BadInput {
                line: Some(d.pipeline.line),
                message: e.to_string(),
            },
        })?;
        let size = match d.pipeline.subgroup.required_size {
            Some(RequiredSize::Size(n)) => {
                SubgroupSize::new(n as u64).map_err(|e| BackendError::BadInput {
                    line: Some(d.pipeline.subgroup.line),
                    message: e.to_string(),
                })?
            }
            _ => self.size,
        };
        if d.pipeline.subgroup.fully_populated == Some(true)
            && !k.local_size[0].is_multiple_of(size.get())
        {
            // Valid usage, not a script error: the same file is fine where the subgroup size
            // divides the local size. At this size no device may run it (the dispatch would be
            // undefined behaviour), so the model does not either.
            return Err(BackendError::Unsupported(format!(
                "line {}: FULLY_POPULATED on with local_size_x {} at subgroup size {}: Vulkan requires the local size in X to be a multiple of the subgroup size for full subgroups (VUID-VkPipelineShaderStageCreateInfo-flags-02759)",
                d.pipeline.subgroup.line,
                k.local_size[0],
                size.get()
            )));
        }
        let mode = self.mode.unwrap_or(k.declared_mode);
        let (inputs, push) = model_inputs(&k, d);
        // The run as `lockstep run` makes it: one job, the descriptors as the script binds them
        // (the module is decoded above, with the script's specialization constants as bits).
        let mut job = KernelJob::new(SpirvModule {
            words,
            lang: SourceLang::SpirvBinary,
            name: d.shader.name.clone(),
            target_env: d.shader.target_env.unwrap_or(TargetEnv::Vulkan1_1),
            source_text: None,
        });
        job.entry = Some(d.pipeline.entry_point.clone());
        job.workgroups = d.workgroups;
        job.mode = Some(mode);
        job.push = push.map(|p| HostBuffer {
            dtype: ScalarType::U8,
            shape: vec![p.len()],
            bytes: p,
        });
        job.descriptors = inputs.iter().map(|(_, _, b)| b.clone()).collect();
        let model = job.run_model_decoded(k, size, None).map_err(|e| match e {
            KernelError::Model(e @ spirv::SpirvError::Unsupported { .. }) => {
                BackendError::Unsupported(e.to_string())
            }
            KernelError::Model(e @ spirv::SpirvError::Stopped { .. }) => {
                BackendError::Failed(e.to_string())
            }
            e => BackendError::BadInput {
                line: Some(d.line),
                message: e.to_string(),
            },
        })?;
        let run = &model.run;
        let mut verdicts = Verdicts::new(run);
        let mut out: Vec<Vec<u8>> = d.buffers.iter().map(|b| b.bytes.to_vec()).collect();
        let mut ann: Vec<Vec<Annotation>> =
            d.buffers.iter().map(|b| b.annotations.to_vec()).collect();
        for (idx, w, input) in inputs.iter().filter(|i| i.0 != usize::MAX) {
            let Some(o) = run.buffers.iter().find(|b| {
                b.set == input.set && b.binding == input.binding && b.element == input.element
            }) else {
                continue;
            };
            let n = w.len().min(o.bytes.len());
            out[*idx][w.start..w.start + n].copy_from_slice(&o.bytes[..n]);
            let list = annotations_of(&mut verdicts, o);
            // What the script knew of these bytes before is replaced by what the run left.
            let (_, mut keep) = super::backend::split_annotations(&ann[*idx], w);
            keep.extend(list.into_iter().map(|a| Annotation {
                bytes: a.bytes.start + w.start..a.bytes.end + w.start,
                ..a
            }));
            keep.sort_by_key(|a| (a.bytes.start, a.bytes.end));
            ann[*idx] = keep;
        }
        Ok(DispatchOutput {
            buffers: out,
            annotations: ann,
            mode: Some(mode),
        })
    }
}

/// A Vulkan device through the module runner.
#[cfg(feature = "vulkan")]
pub struct DeviceBackend {
    ctx: crate::vulkan::Context,
    compiled: Compiled,
    script_name: String,
    /// a subgroup size every pipeline is created with (through subgroup size control) unless the
    /// script asks for its own (`lockstep amber --subgroup-size` on a device that offers several)
    forced_size: Option<u32>,
}

#[cfg(feature = "vulkan")]
impl DeviceBackend {
    /// Opens device `index` (or the preferred one).
    pub fn new(index: Option<usize>) -> Result<DeviceBackend, crate::vulkan::VkError> {
        Ok(DeviceBackend {
            ctx: crate::vulkan::Context::new(index)?,
            compiled: Compiled::default(),
            script_name: "script".into(),
            forced_size: None,
        })
    }

    /// Creates every pipeline at subgroup size `size` (required through subgroup size control
    /// when it is not the device's default) unless the script names its own.
    pub fn with_size(mut self, size: u32) -> Result<DeviceBackend, String> {
        let c = &self.ctx.caps;
        if size == c.subgroup_size {
            self.forced_size = Some(size);
            return Ok(self);
        }
        if !c.size_control || !(c.min_subgroup_size..=c.max_subgroup_size).contains(&size) {
            return Err(format!(
                "subgroup size {size}: {} runs compute at {} only{}",
                self.ctx.info.name,
                if c.size_control && c.min_subgroup_size != c.max_subgroup_size {
                    format!("{}..{}", c.min_subgroup_size, c.max_subgroup_size)
                } else {
                    c.subgroup_size.to_string()
                },
                if c.size_control {
                    ""
                } else {
                    " (no subgroup size control)"
                }
            ));
        }
        self.forced_size = Some(size);
        Ok(self)
    }

    /// The subgroup sizes this device can run a compute pipeline at: its default first, then
    /// the others subgroup size control offers.
    pub fn sizes(&self) -> Vec<u32> {
        let c = &self.ctx.caps;
        let mut v = vec![c.subgroup_size];
        if c.size_control {
            v.extend(
                (0..8)
                    .map(|k| 1u32 << k)
                    .filter(|n| (c.min_subgroup_size..=c.max_subgroup_size).contains(n))
                    .filter(|n| *n != c.subgroup_size),
            );
        }
        v
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.ctx.info.name
    }

    /// Names the file whose dispatches follow.
    pub fn set_file(&mut self, name: &str) {
        self.script_name = name.to_string();
    }
}

/// Whether the device has a `DEVICE_FEATURE` Amber names (`Struct.member` or a bare name).
#[cfg(feature = "vulkan")]
fn has_feature(caps: &crate::vulkan::Capabilities, name: &str) -> Option<bool> {
    let member = name.rsplit('.').next().unwrap_or(name);
    Some(match member {
        "subgroupSizeControl" => caps.size_control,
        "computeFullSubgroups" => caps.full_subgroups,
        "shaderSubgroupUniformControlFlow" => caps.subgroup_uniform_control_flow,
        "shaderMaximalReconvergence" => caps.maximal_reconvergence,
        "shaderSubgroupExtendedTypes" => caps.subgroup_extended_types,
        "shaderInt8" => caps.int8,
        "shaderInt16" => caps.int16,
        "shaderInt64" => caps.int64,
        "shaderFloat16" => caps.float16,
        "shaderFloat64" => caps.float64,
        "shaderSubgroupRotate" => caps.ops.rotate,
        "shaderSubgroupRotateClustered" => caps.ops.rotate_clustered,
        "storageBuffer8BitAccess" => caps.storage_buffer_8bit,
        "uniformAndStorageBuffer8BitAccess" => caps.uniform_and_storage_buffer_8bit,
        "storagePushConstant8" => caps.storage_push_constant_8bit,
        "storageBuffer16BitAccess" => caps.storage_buffer_16bit,
        "uniformAndStorageBuffer16BitAccess" => caps.uniform_and_storage_buffer_16bit,
        "storagePushConstant16" => caps.storage_push_constant_16bit,
        "variablePointers" => caps.variable_pointers,
        "variablePointersStorageBuffer" => caps.variable_pointers_storage_buffer,
        "workgroupMemoryExplicitLayout" => caps.workgroup_memory_explicit_layout,
        "workgroupMemoryExplicitLayout8BitAccess" => caps.workgroup_memory_explicit_layout_8bit,
        "workgroupMemoryExplicitLayout16BitAccess" => caps.workgroup_memory_explicit_layout_16bit,
        "shaderZeroInitializeWorkgroupMemory" => caps.zero_initialize_workgroup_memory,
        "vulkanMemoryModel" => caps.vulkan_memory_model,
        "vulkanMemoryModelDeviceScope" => caps.vulkan_memory_model_device_scope,
        "shaderBufferInt64Atomics" => caps.buffer_int64_atomics,
        "shaderSharedInt64Atomics" => caps.shared_int64_atomics,
        "shaderStorageImageMultisample" => caps.storage_image_multisample,
        "shaderStorageImageExtendedFormats" => caps.storage_image_extended_formats,
        "shaderImageInt64Atomics" => caps.image_int64_atomics,
        // Amber's pseudo-features for VkPhysicalDeviceSubgroupProperties
        "compute" if name.starts_with("SubgroupSupportedStages") => caps.compute,
        "basic" => caps.ops.basic,
        "vote" => caps.ops.vote,
        "arithmetic" => caps.ops.arithmetic,
        "ballot" => caps.ops.ballot,
        "shuffle" => caps.ops.shuffle,
        "shuffleRelative" => caps.ops.shuffle_relative,
        "clustered" => caps.ops.clustered,
        "quad" => caps.ops.quad,
        _ => return None,
    })
}

#[cfg(feature = "vulkan")]
impl Backend for DeviceBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Device
    }

    fn device_name(&self) -> Option<String> {
        Some(format!("{} ({})", self.ctx.info.name, self.ctx.info.driver))
    }

    fn model_size(&self) -> Option<u32> {
        self.forced_size
    }

    fn forced_mode(&self) -> Option<Mode> {
        None
    }

    fn requirements(&self, script: &Script) -> Result<(), Unsupported> {
        let caps = &self.ctx.caps;
        for f in &script.device_features {
            match has_feature(caps, &f.name) {
                Some(true) => {}
                Some(false) => {
                    return Err(Unsupported {
                        line: Some(f.line),
                        command: "DEVICE_FEATURE".into(),
                        reason: format!("{} lacks {}", self.ctx.info.name, f.name),
                        graphics: false,
                    })
                }
                None => {
                    return Err(Unsupported {
                        line: Some(f.line),
                        command: "DEVICE_FEATURE".into(),
                        reason: format!("lockstep does not know the feature {}", f.name),
                        graphics: false,
                    })
                }
            }
        }
        for p in &script.device_properties {
            let member = p.name.rsplit('.').next().unwrap_or(&p.name);
            if !caps.float_controls.contains(&member) {
                return Err(Unsupported {
                    line: Some(p.line),
                    command: "DEVICE_PROPERTY".into(),
                    reason: format!("{} lacks {}", self.ctx.info.name, p.name),
                    graphics: false,
                });
            }
        }
        let exts = self.ctx.device.physical_device().supported_extensions();
        for e in &script.device_extensions {
            let has = exts.into_iter().any(|(n, on)| on && n == e.name);
            if !has {
                return Err(Unsupported {
                    line: Some(e.line),
                    command: "DEVICE_EXTENSION".into(),
                    reason: format!("{} lacks {}", self.ctx.info.name, e.name),
                    graphics: false,
                });
            }
        }
        let iexts = self.ctx.device.instance().enabled_extensions();
        for e in &script.instance_extensions {
            let has = iexts.into_iter().any(|(n, on)| on && n == e.name);
            if !has {
                return Err(Unsupported {
                    line: Some(e.line),
                    command: "INSTANCE_EXTENSION".into(),
                    reason: format!("the Vulkan instance lockstep creates lacks {}", e.name),
                    graphics: false,
                });
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError> {
        use crate::vulkan::{BoundBuffer, DescriptorKind, ModuleDispatch, SpecConstant, VkError};
        let words = self
            .compiled
            .pipeline_words(&self.script_name, d.shader, d.pipeline)?;
        let mut buffers = Vec::new();
        let mut order: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        let mut push = Vec::new();
        // One buffer behind several descriptors is one device buffer over the span they see; the
        // first descriptor bound owns it, each one a view of it.
        let span = |idx: usize| {
            d.bindings
                .iter()
                .filter(|x| x.buffer == idx && x.kind.slot().is_some())
                .fold(None::<std::ops::Range<usize>>, |acc, x| {
                    Some(match acc {
                        None => x.window.clone(),
                        Some(a) => a.start.min(x.window.start)..a.end.max(x.window.end),
                    })
                })
        };
        // (data, alias_of, view) of binding `b` given the bindings placed before it.
        let place = |b: &super::backend::DispatchBinding,
                     order: &[(usize, std::ops::Range<usize>)]| {
            let db = &d.buffers[b.buffer];
            let w = b.window.clone();
            let hull = span(b.buffer).unwrap_or_else(|| w.clone());
            let view = w.start - hull.start..w.end - hull.start;
            match order.iter().position(|o| o.0 == b.buffer) {
                // (its own bytes still, for the size checks)
                Some(root) => (db.bytes[w].to_vec(), Some(root), Some(view)),
                None => (
                    db.bytes[hull.clone()].to_vec(),
                    None,
                    (w != hull).then_some(view),
                ),
            }
        };
        for b in &d.bindings {
            let (set, binding, kind) = match b.kind {
                BindingKind::PushConstant => {
                    push = d.buffers[b.buffer].bytes.to_vec();
                    continue;
                }
                BindingKind::Storage { set, binding } => (set, binding, DescriptorKind::Storage),
                BindingKind::Uniform { set, binding } => (set, binding, DescriptorKind::Uniform),
                BindingKind::StorageImage { set, binding }
                | BindingKind::SampledImage { set, binding }
                | BindingKind::CombinedImageSampler { set, binding, .. }
                | BindingKind::TexelBuffer { set, binding, .. } => {
                    (set, binding, image_descriptor(d, b)?)
                }
            };
            // The descriptor's window: the shader sees the buffer from the offset (the same
            // buffer bound earlier, e.g. twice in one array: its view).
            let (data, alias_of, view) = place(b, &order);
            buffers.push(BoundBuffer {
                set,
                binding,
                kind,
                data,
                element: b.element,
                alias_of,
                view,
            });
            order.push((b.buffer, b.window.clone()));
        }
        // Samplers (`BIND SAMPLER`), after the buffers (they come back with no bytes).
        for sb in &d.pipeline.samplers {
            buffers.push(BoundBuffer {
                set: sb.set,
                binding: sb.binding,
                kind: DescriptorKind::Sampler(d.script.samplers[sb.sampler].sampler),
                data: Vec::new(),
                element: 0,
                alias_of: None,
                view: None,
            });
        }
        let spec = d
            .pipeline
            .specializations
            .iter()
            .map(|s| {
                use super::types::Scalar as A;
                let c = match s.scalar {
                    A::I32 => SpecConstant::I32(s.bits as i32),
                    A::F32 => SpecConstant::F32(f32::from_bits(s.bits)),
                    _ => SpecConstant::U32(s.bits),
                };
                (s.id, c)
            })
            .collect::<Vec<_>>();
        // A buffer shorter than its block (Amber sizes a buffer by the data a script writes,
        // VkScript's `uniform ubo 0:0 int 16 1` makes 20 bytes for a 32-byte block) is bound
        // zero-padded to the block's size and read back at its own size: the shader's accesses
        // past the script's bytes are the model's out-of-bounds findings, whatever the device
        // returns for them.
        let declared = crate::vulkan::declared_block_sizes(&words, &d.pipeline.entry_point, &spec)
            .unwrap_or_default();
        let mut lengths = Vec::with_capacity(buffers.len());
        for b in buffers.iter_mut() {
            lengths.push(b.data.len());
            if let Some(&size) = declared.get(&(b.set, b.binding))
                && (b.data.len() as u64) < size
                && size <= crate::amber::MAX_BUFFER_BYTES as u64
            {
                b.data.resize(size as usize, 0);
            }
        }
        let caps = &self.ctx.caps;
        let required = match d.pipeline.subgroup.required_size {
            Some(RequiredSize::Size(n)) => Some(n),
            Some(RequiredSize::Min) => Some(caps.min_subgroup_size),
            Some(RequiredSize::Max) => Some(caps.max_subgroup_size),
            None => self.forced_size.filter(|s| *s != caps.subgroup_size),
        };
        let md = ModuleDispatch {
            spirv: &words,
            entry: &d.pipeline.entry_point,
            buffers,
            push_constants: push,
            spec,
            workgroups: d.workgroups,
            required_subgroup_size: required,
            full_subgroups: d.pipeline.subgroup.fully_populated == Some(true),
            unbound: Vec::new(),
            addresses: Vec::new(),
        };
        let out = self.ctx.run_module(&md).map_err(|e| match e {
            VkError::Unsupported(m) => BackendError::Unsupported(m),
            VkError::Input(m) => BackendError::BadInput {
                line: Some(d.line),
                message: m,
            },
            other => BackendError::Failed(other.to_string()),
        })?;
        let mut bytes: Vec<Vec<u8>> = d.buffers.iter().map(|b| b.bytes.to_vec()).collect();
        for (k, (idx, w)) in order.iter().enumerate() {
            if let Some(b) = out.buffers.get(k) {
                let n = lengths[k].min(b.len()).min(w.len());
                bytes[*idx][w.start..w.start + n].copy_from_slice(&b[..n]);
            }
        }
        Ok(DispatchOutput {
            buffers: bytes,
            annotations: Vec::new(),
            mode: None,
        })
    }
}

/// The model's inputs of a dispatch: each binding the shader declares as a `BufferInput` (with
/// the script buffer it shows and the window of it), the samplers it declares, and the push
/// constants. One buffer behind several descriptors is one memory: the span from the first byte
/// any of them sees to the last, each descriptor a view of it.
#[allow(clippy::type_complexity)]
fn model_inputs(
    k: &spirv::Kernel,
    d: &Dispatch<'_>,
) -> (
    Vec<(usize, std::ops::Range<usize>, BufferInput)>,
    Option<Vec<u8>>,
) {
    let mut inputs = Vec::new();
    let mut push = None;
    let declared = |b: &super::backend::DispatchBinding| {
        b.kind.slot().is_some_and(|slot| {
            k.objects
                .iter()
                .any(|o| o.binding == Some(slot) && o.element == b.element)
        })
    };
    let span = |idx: usize| {
        d.bindings
            .iter()
            .filter(|x| x.buffer == idx && declared(x))
            .fold(None::<std::ops::Range<usize>>, |acc, x| {
                Some(match acc {
                    None => x.window.clone(),
                    Some(a) => a.start.min(x.window.start)..a.end.max(x.window.end),
                })
            })
    };
    for b in &d.bindings {
        let db = &d.buffers[b.buffer];
        let w = b.window.clone();
        let hull = span(b.buffer).unwrap_or_else(|| w.clone());
        let undefined = super::backend::split_annotations(db.annotations, &hull)
            .0
            .into_iter()
            .filter(|a| a.kind != AnnotationKind::Inexact)
            .map(|a| (a.bytes, a.why))
            .collect();
        let view = (w != hull).then(|| w.start - hull.start..w.end - hull.start);
        match b.kind {
            BindingKind::Storage { set, binding }
            | BindingKind::Uniform { set, binding }
            | BindingKind::StorageImage { set, binding }
            | BindingKind::SampledImage { set, binding }
            | BindingKind::CombinedImageSampler { set, binding, .. }
            | BindingKind::TexelBuffer { set, binding, .. } => {
                // A binding the shader does not declare is left alone (as on a device).
                if k.objects
                    .iter()
                    .any(|o| o.binding == Some((set, binding)) && o.element == b.element)
                {
                    // One buffer's bytes behind an earlier descriptor too: the same memory.
                    let alias_of = inputs.iter().position(
                        |(idx, _, i): &(usize, std::ops::Range<usize>, BufferInput)| {
                            *idx == b.buffer && i.alias_of.is_none()
                        },
                    );
                    inputs.push((
                        b.buffer,
                        w.clone(),
                        BufferInput {
                            set,
                            binding,
                            bytes: if alias_of.is_some() {
                                Vec::new()
                            } else {
                                db.bytes[hull.clone()].to_vec()
                            },
                            undefined,
                            element: b.element,
                            // an IMAGE's extent; a texel buffer's follows from its bytes
                            image: db.decl.image.map(|i| i.extent),
                            alias_of,
                            // the view's format, for a module that declares none
                            format: db
                                .decl
                                .image
                                .map(|i| i.format)
                                .or(db.decl.texel)
                                .or_else(|| super::types::texel_format(&db.decl.data_type)),
                            sampler: match b.kind {
                                BindingKind::CombinedImageSampler { sampler, .. } => {
                                    d.script.samplers.get(sampler).map(|x| x.sampler)
                                }
                                _ => None,
                            },
                            window: view,
                        },
                    ));
                }
            }
            BindingKind::PushConstant => push = Some(db.bytes.to_vec()),
        }
    }
    // Samplers (`BIND SAMPLER`) the shader declares: descriptors without memory.
    for sb in &d.pipeline.samplers {
        if k.objects
            .iter()
            .any(|o| o.binding == Some((sb.set, sb.binding)))
        {
            inputs.push((
                usize::MAX,
                0..0,
                BufferInput {
                    set: sb.set,
                    binding: sb.binding,
                    sampler: d.script.samplers.get(sb.sampler).map(|x| x.sampler),
                    ..BufferInput::default()
                },
            ));
        }
    }
    (inputs, push)
}

/// The annotations of a buffer the model wrote: each run of units with one undefined or
/// order-dependent verdict, with its reason.
fn annotations_of(verdicts: &mut Verdicts<'_>, o: &spirv::report::BufferOutput) -> Vec<Annotation> {
    let mut list: Vec<Annotation> = Vec::new();
    let unit = o.unit.max(1) as usize;
    for u in 0..o.taint.len() {
        let bytes = u * unit..((u + 1) * unit).min(o.bytes.len());
        let (kind, why) = match verdicts.of(o, u * unit..(u + 1) * unit) {
            WordStatus::Exact | WordStatus::Inexact => continue,
            WordStatus::Undefined(c) | WordStatus::Racy(c) => (AnnotationKind::Undefined, c),
            WordStatus::OrderDependent(c) => (AnnotationKind::OrderDependent, c),
        };
        match list.last_mut() {
            Some(a) if a.kind == kind && a.why == why && a.bytes.end == bytes.start => {
                a.bytes.end = bytes.end
            }
            _ => list.push(Annotation { bytes, kind, why }),
        }
    }
    list
}

/// The device descriptor of an image, sampled image, combined image sampler or texel buffer
/// binding.
#[cfg(feature = "vulkan")]
fn image_descriptor(
    d: &Dispatch<'_>,
    b: &super::backend::DispatchBinding,
) -> Result<crate::vulkan::DescriptorKind, BackendError> {
    use crate::vulkan::DescriptorKind;
    let db = &d.buffers[b.buffer];
    let image = |i: super::script::Image| crate::vulkan::ImageBinding {
        format: i.format,
        extent: i.extent,
        dims: i.dims,
        arrayed: false,
    };
    Ok(match (b.kind, db.decl.image) {
        (BindingKind::StorageImage { .. }, Some(i)) => DescriptorKind::StorageImage(image(i)),
        (BindingKind::SampledImage { .. }, Some(i)) => DescriptorKind::SampledImage(image(i)),
        (BindingKind::CombinedImageSampler { sampler, .. }, Some(i)) => {
            DescriptorKind::CombinedImageSampler(image(i), d.script.samplers[sampler].sampler)
        }
        (BindingKind::TexelBuffer { storage, .. }, None) => {
            let f = db
                .decl
                .texel
                .or_else(|| super::types::texel_format(&db.decl.data_type))
                .ok_or_else(|| {
                    BackendError::Unsupported(format!(
                        "{} ({}) as a texel buffer: no texel format of that data type is run",
                        db.decl.name, db.decl.data_type
                    ))
                })?;
            if storage {
                DescriptorKind::StorageTexelBuffer(f)
            } else {
                DescriptorKind::UniformTexelBuffer(f)
            }
        }
        _ => {
            return Err(BackendError::BadInput {
                line: Some(d.line),
                message: format!("{} cannot be bound as {}", db.decl.name, b.kind),
            })
        }
    })
}
