//! Running any compute module on the device: named entry point, storage and uniform buffers in
//! any descriptor sets, push constants, specialization constants, a required subgroup size and
//! full subgroups; every buffer read back.
//!
//! Before the driver sees the module, its requirements are read with rspirv (capabilities,
//! extensions, execution modes, group operations on extended types, dynamic broadcast ids,
//! clustered rotate, the SPIR-V version, the workgroup size) and compared with the device's
//! [`Capabilities`](crate::vulkan::Capabilities): what the device lacks is
//! [`VkError::Unsupported`] naming the feature, what the caller got wrong (a missing buffer, a
//! buffer smaller than its block, push constants of the wrong size, an unknown entry point or
//! specialization constant) is [`VkError::Input`].

use crate::vulkan::context::format_validated;
use crate::vulkan::images::Bound;
use crate::vulkan::reflect::{reflect, Reflection, SpecConstant};
use crate::vulkan::{Context, VkError};
use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vulkano::buffer::{Buffer, BufferCreateInfo, BufferUsage, Subbuffer};
use vulkano::command_buffer::{AutoCommandBufferBuilder, CommandBufferUsage};
use vulkano::descriptor_set::layout::DescriptorType;
use vulkano::descriptor_set::DescriptorSet;
use vulkano::memory::allocator::{AllocationCreateInfo, MemoryTypeFilter};
use vulkano::pipeline::compute::ComputePipelineCreateInfo;
use vulkano::pipeline::layout::PipelineDescriptorSetLayoutCreateInfo;
use vulkano::pipeline::{
    ComputePipeline, Pipeline, PipelineBindPoint, PipelineLayout, PipelineShaderStageCreateInfo,
};
use vulkano::shader::spirv::ExecutionModel;
use vulkano::shader::{EntryPoint, ShaderModule, ShaderModuleCreateInfo, SpecializationConstant};
use vulkano::sync::GpuFuture;
use vulkano::{Validated, VulkanError, VulkanObject};

/// How a buffer is bound: a storage buffer (`buffer` block, `StorageBuffer` storage class) or a
/// uniform buffer (`uniform` block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DescriptorKind {
    /// VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
    Storage,
    /// VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
    Uniform,
    /// VK_DESCRIPTOR_TYPE_STORAGE_IMAGE: the bytes are its texels
    StorageImage(crate::vulkan::ImageBinding),
    /// VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER of this format
    StorageTexelBuffer(crate::words::texel::TexelFormat),
    /// VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER of this format
    UniformTexelBuffer(crate::words::texel::TexelFormat),
    /// VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE: the bytes are its texels
    SampledImage(crate::vulkan::ImageBinding),
    /// VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER: the bytes are its texels
    CombinedImageSampler(crate::vulkan::ImageBinding, crate::words::sampler::Sampler),
    /// VK_DESCRIPTOR_TYPE_SAMPLER (no bytes)
    Sampler(crate::words::sampler::Sampler),
}

impl DescriptorKind {
    fn name(self) -> &'static str {
        match self {
            DescriptorKind::Storage => "storage buffer",
            DescriptorKind::Uniform => "uniform buffer",
            DescriptorKind::StorageImage(_) => "storage image",
            DescriptorKind::StorageTexelBuffer(_) => "storage texel buffer",
            DescriptorKind::UniformTexelBuffer(_) => "uniform texel buffer",
            DescriptorKind::SampledImage(_) => "sampled image",
            DescriptorKind::CombinedImageSampler(..) => "combined image sampler",
            DescriptorKind::Sampler(_) => "sampler",
        }
    }

    /// The same kind of descriptor (whatever image or format it carries)?
    fn same_kind(self, other: DescriptorKind) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// One buffer of a dispatch: where it is bound and its initial bytes.
#[derive(Clone, Debug)]
pub struct BoundBuffer {
    /// descriptor set
    pub set: u32,
    /// binding within the set
    pub binding: u32,
    /// storage or uniform (must match the module's declaration)
    pub kind: DescriptorKind,
    /// initial contents (at least one byte, at least the block's declared size)
    pub data: Vec<u8>,
    /// the element of an array of descriptors at this binding (0 for a plain binding)
    pub element: u32,
    /// the same memory as `buffers[i]` (an earlier one), behind this descriptor too: one device
    /// buffer bound at both (`data` must still be its contents, for the size checks)
    pub alias_of: Option<usize>,
    /// the bytes this descriptor sees: a range of `data` (with `alias_of`: of that buffer's
    /// `data`); `None`: all of them — one buffer behind descriptors over different ranges
    pub view: Option<std::ops::Range<usize>>,
}

/// The vulkano form of a specialization constant.
fn vulkano(c: &SpecConstant) -> SpecializationConstant {
    match *c {
        SpecConstant::Bool(b) => SpecializationConstant::Bool(b),
        SpecConstant::I32(x) => SpecializationConstant::I32(x),
        SpecConstant::U32(x) => SpecializationConstant::U32(x),
        SpecConstant::F32(x) => SpecializationConstant::F32(x),
        SpecConstant::I64(x) => SpecializationConstant::I64(x),
        SpecConstant::U64(x) => SpecializationConstant::U64(x),
        SpecConstant::F64(x) => SpecializationConstant::F64(x),
        SpecConstant::I16(x) => SpecializationConstant::I16(x),
        SpecConstant::U16(x) => SpecializationConstant::U16(x),
        SpecConstant::I8(x) => SpecializationConstant::I8(x),
        SpecConstant::U8(x) => SpecializationConstant::U8(x),
        SpecConstant::F16(x) => SpecializationConstant::F16(half::f16::from_bits(x)),
    }
}

fn spec_type_name(c: &SpecializationConstant) -> &'static str {
    match c {
        SpecializationConstant::Bool(_) => "bool",
        SpecializationConstant::U8(_) => "u8",
        SpecializationConstant::U16(_) => "u16",
        SpecializationConstant::U32(_) => "u32",
        SpecializationConstant::U64(_) => "u64",
        SpecializationConstant::I8(_) => "i8",
        SpecializationConstant::I16(_) => "i16",
        SpecializationConstant::I32(_) => "i32",
        SpecializationConstant::I64(_) => "i64",
        SpecializationConstant::F16(_) => "f16",
        SpecializationConstant::F32(_) => "f32",
        SpecializationConstant::F64(_) => "f64",
    }
}

/// One dispatch of a module.
#[derive(Clone, Debug)]
pub struct ModuleDispatch<'a> {
    /// the module's words
    pub spirv: &'a [u32],
    /// the compute entry point's name
    pub entry: &'a str,
    /// the buffers, each at its (set, binding); those the entry point does not use are returned
    /// unchanged
    pub buffers: Vec<BoundBuffer>,
    /// the push constant block's bytes (its size must be the block's), empty for none
    pub push_constants: Vec<u8>,
    /// specialization constants by id
    pub spec: Vec<(u32, SpecConstant)>,
    /// workgroup counts
    pub workgroups: [u32; 3],
    /// `requiredSubgroupSize` (subgroup size control)
    pub required_subgroup_size: Option<u32>,
    /// `VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT`
    pub full_subgroups: bool,
    /// buffers with no descriptor, reached only through their device address
    /// (GL_EXT_buffer_reference); they come back after the bound ones in
    /// [`ModuleOutput::buffers`]
    pub unbound: Vec<Vec<u8>>,
    /// device addresses to write into the buffers and push constants before the dispatch, once
    /// the driver has given them (`vkGetBufferDeviceAddress`)
    pub addresses: Vec<crate::words::address::AddressPatch>,
}

/// What a dispatch left in its buffers.
#[derive(Clone, Debug)]
pub struct ModuleOutput {
    /// every buffer's bytes after the dispatch, in the order of [`ModuleDispatch::buffers`]
    pub buffers: Vec<Vec<u8>>,
    /// wall time of the dispatch alone (submission to completion; uploads and read-back excluded)
    pub elapsed: Duration,
    /// the device address of every buffer [`ModuleDispatch::addresses`] addresses, and of every
    /// unbound buffer
    pub bases: Vec<(crate::words::address::Place, u64)>,
}

/// The bytes each buffer binding's block declares (its fixed part where it ends in a runtime
/// array), by (set, binding), for the module's entry point `entry` under `spec`: what a buffer
/// bound there must hold at least for [`Context::run_module`] to accept it.
pub fn declared_block_sizes(
    spirv: &[u32],
    entry: &str,
    spec: &[(u32, SpecConstant)],
) -> Result<HashMap<(u32, u32), u64>, VkError> {
    let module = crate::words::read(spirv)
        .map_err(|e| input(format!("the module is not valid SPIR-V: {e}")))?
        .module;
    let refl = reflect(&module, entry, spec).map_err(input)?;
    Ok(refl
        .bindings
        .iter()
        .filter_map(|(k, b)| b.size.map(|s| (*k, s)))
        .collect())
}

/// How long [`Context::run_module`] waits for one submission before giving up.
pub const MODULE_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) fn unsupported(what: impl Into<String>) -> VkError {
    VkError::Unsupported(what.into())
}

pub(crate) fn input(what: impl Into<String>) -> VkError {
    VkError::Input(what.into())
}

impl Context {
    /// Runs one dispatch of `d` and reads every buffer back, after the checks of
    /// [`Context::check_module`] and of the buffers and push constants against the pipeline
    /// (a missing buffer, one smaller than its block, push constants of another size: each a
    /// [`VkError::Input`] naming the binding and the sizes). Waits at most [`MODULE_TIMEOUT`]
    /// for each submission. Runs on the default device (lavapipe without a GPU):
    ///
    /// ```
    /// use lockstep::vulkan::{BoundBuffer, Context, DescriptorKind, ModuleDispatch};
    /// let glsl = "#version 450\n\
    ///     layout(local_size_x = 64) in;\n\
    ///     layout(set = 0, binding = 0) buffer B { uint a[]; };\n\
    ///     layout(push_constant) uniform P { uint k; };\n\
    ///     void main() { a[gl_GlobalInvocationID.x] *= k; }\n";
    /// let words = lockstep::vulkan::compile_glsl(glsl, "scale", false).unwrap();
    /// let ctx = Context::new(None).unwrap();
    /// let data: Vec<u8> = (0..64u32).flat_map(|x| x.to_le_bytes()).collect();
    /// let out = ctx.run_module(&ModuleDispatch {
    ///     spirv: &words,
    ///     entry: "main",
    ///     buffers: vec![BoundBuffer { set: 0, binding: 0, kind: DescriptorKind::Storage, data,
    ///                                 element: 0, alias_of: None, view: None }],
    ///     push_constants: 3u32.to_le_bytes().to_vec(),
    ///     spec: vec![],
    ///     workgroups: [1, 1, 1],
    ///     required_subgroup_size: None,
    ///     full_subgroups: false, unbound: vec![], addresses: vec![],
    /// }).unwrap();
    /// assert_eq!(&out.buffers[0][4..8], &3u32.to_le_bytes()); // a[1] = 1 * 3
    /// ```
    pub fn run_module(&self, d: &ModuleDispatch) -> Result<ModuleOutput, VkError> {
        self.run_module_with_timeout(d, MODULE_TIMEOUT)
    }

    /// [`Context::run_module`] with another limit on each submission. After a timeout the
    /// device is still busy with the dispatch and this context cannot be used again.
    pub fn run_module_with_timeout(
        &self,
        d: &ModuleDispatch,
        timeout: Duration,
    ) -> Result<ModuleOutput, VkError> {
        let refl = self.reflect_and_check(d)?;
        let push_end = push_end(&refl, d);
        let (pipeline, entry) = self.module_pipeline(d, push_end)?;
        self.check_bindings(d, &refl, &entry)?;
        self.dispatch_module(d, &pipeline, &entry, push_end, timeout)
    }

    /// The checks [`Context::run_module`] makes before creating anything on the device: the
    /// module parses, the entry point is a compute one, the device supports what the module
    /// and the dispatch need, the specialization constants exist with the declared types.
    /// `Ok` does not promise the dispatch succeeds (buffers are checked against the pipeline).
    pub fn check_module(&self, d: &ModuleDispatch) -> Result<(), VkError> {
        self.reflect_and_check(d).map(|_| ())
    }

    fn reflect_and_check(&self, d: &ModuleDispatch) -> Result<Reflection, VkError> {
        let module = crate::words::read(d.spirv)
            .map_err(|e| input(format!("the module is not valid SPIR-V: {e}")))?
            .module;
        let refl = reflect(&module, d.entry, &d.spec).map_err(input)?;
        self.check_requirements(&refl, d)?;
        Ok(refl)
    }

    /// A vulkano error while loading or building: a missing feature vulkano knows of is
    /// unsupported, anything else a Vulkan error.
    fn vulkano_error<E: std::fmt::Display>(&self, what: &str, e: Validated<E>) -> VkError {
        match e {
            Validated::ValidationError(v) if !v.requires_one_of.is_empty() => unsupported(format!(
                "{}{} ({})",
                if v.context.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", v.context)
                },
                v.problem,
                v.requires_one_of
            )),
            e => VkError::vk(what, format_validated(e)),
        }
    }

    fn module_pipeline(
        &self,
        d: &ModuleDispatch,
        push_end: u32,
    ) -> Result<(Arc<ComputePipeline>, EntryPoint), VkError> {
        // vulkano reads the module (and again when specializing it) with assertions of its own;
        // a module that passed rspirv may still break one, which must not take the process
        // down.
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.module_pipeline_unguarded(d, push_end)
        }))
            .unwrap_or_else(|_| {
                Err(input(
                    "vulkano could not read the module (it failed one of vulkano's internal assertions); check the module with spirv-val",
                ))
            })
    }

    fn module_pipeline_unguarded(
        &self,
        d: &ModuleDispatch,
        push_end: u32,
    ) -> Result<(Arc<ComputePipeline>, EntryPoint), VkError> {
        // vulkano reads the module with asserts of its own; a module that passed rspirv may
        // still break one of them, which must not take the process down.
        // SAFETY: the words parsed as SPIR-V (rspirv) and vulkano checks the module's
        // capabilities and extensions against the enabled features.
        let loaded =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(d.spirv)) };
        let module = loaded.map_err(|e| self.vulkano_error("loading the shader module", e))?;
        let declared = module.specialization_constants();
        let mut seen = HashSet::new();
        let mut spec = HashMap::new();
        for (id, v) in &d.spec {
            if !seen.insert(*id) {
                return Err(input(format!(
                    "specialization constant {id} is given twice"
                )));
            }
            let mut value = vulkano(v);
            // Vulkan specializes bytes by SpecId: a 32-bit integer given for a 32-bit integer of
            // the other signedness is the same bits (glslang declares an `int` and a `uint`
            // constant with one SpecId when `local_size_x_id` names an `int` constant).
            value = match (declared.get(id), value) {
                (Some(SpecializationConstant::U32(_)), SpecializationConstant::I32(x)) => {
                    SpecializationConstant::U32(x as u32)
                }
                (Some(SpecializationConstant::I32(_)), SpecializationConstant::U32(x)) => {
                    SpecializationConstant::I32(x as i32)
                }
                (_, v) => v,
            };
            match declared.get(id) {
                None => {
                    let mut ids: Vec<_> = declared.keys().collect();
                    ids.sort();
                    return Err(input(format!(
                        "the module has no specialization constant {id} (it has: {})",
                        if ids.is_empty() {
                            "none".to_string()
                        } else {
                            ids.iter()
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    )));
                }
                Some(def) if !value.eq_type(def) => {
                    return Err(input(format!(
                        "specialization constant {id} is {} in the module, given as {}",
                        spec_type_name(def),
                        spec_type_name(&value)
                    )))
                }
                Some(_) => {}
            }
            spec.insert(*id, value);
        }
        let specialized = module
            .specialize(spec.into_iter().collect())
            .map_err(|e| input(format!("specializing the module: {e}")))?;
        let entry = specialized
            .entry_point_with_execution(d.entry, ExecutionModel::GLCompute)
            .ok_or_else(|| {
                input(format!(
                    "the module has no compute entry point '{}'",
                    d.entry
                ))
            })?;
        let mut stage = PipelineShaderStageCreateInfo::new(entry.clone());
        stage.required_subgroup_size = d.required_subgroup_size;
        let mut layout_info = PipelineDescriptorSetLayoutCreateInfo::from_stages([&stage]);
        // A push constant block with 8/16-bit members can end off a 4-byte boundary (6 bytes),
        // and a push constant range's size must be a multiple of 4 (VUID-VkPushConstantRange-
        // size-00297): the range covers the block, rounded up — the block as this crate's
        // reflection lays it out (vulkano 0.35 sizes a matrix without its stride: 36 bytes for
        // a `mat3` of column stride 16, whose last column ends at 44) and the bytes given.
        for r in layout_info.push_constant_ranges.iter_mut() {
            r.size = (r.offset + r.size).max(push_end).next_multiple_of(4) - r.offset;
        }
        let layout = PipelineLayout::new(
            self.device.clone(),
            layout_info
                .into_pipeline_layout_create_info(self.device.clone())
                .map_err(|e| VkError::vk("creating the pipeline layout", e))?,
        )
        .map_err(|e| self.vulkano_error("creating the pipeline layout", e))?;
        let info = ComputePipelineCreateInfo::stage_layout(stage, layout);
        let pipeline = if d.full_subgroups {
            // vulkano 0.35 has no REQUIRE_FULL_SUBGROUPS flag: the pipeline is created through
            // ash; `check_requirements` checked the flag's rules (feature, local size multiple).
            self.full_subgroup_pipeline(&entry, info)?
        } else {
            self.compute_pipeline(info)?
        };
        Ok((pipeline, entry))
    }

    fn full_subgroup_pipeline(
        &self,
        entry: &EntryPoint,
        info: ComputePipelineCreateInfo,
    ) -> Result<Arc<ComputePipeline>, VkError> {
        use ash::vk;
        let name = std::ffi::CString::new(entry.info().name.as_str())
            .map_err(|_| input("the entry point's name contains a NUL character"))?;
        let mut entries = Vec::new();
        let mut data = Vec::new();
        let mut ids: Vec<_> = entry.module().specialization_info().iter().collect();
        ids.sort_by_key(|(id, _)| **id);
        for (id, value) in ids {
            let bytes = value.as_bytes();
            entries.push(vk::SpecializationMapEntry {
                constant_id: *id,
                offset: data.len() as u32,
                size: bytes.len(),
            });
            data.extend_from_slice(bytes);
        }
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let mut size_info = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(info.stage.required_subgroup_size.unwrap_or(0));
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS)
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(entry.module().base_module().handle())
            .name(&name);
        if !entries.is_empty() {
            stage = stage.specialization_info(&spec_info);
        }
        if info.stage.required_subgroup_size.is_some() {
            stage = stage.push_next(&mut size_info);
        }
        let create = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(info.layout.handle());
        let mut handle = vk::Pipeline::null();
        let fns = self.device.fns();
        // SAFETY: every handle is alive (held by `entry` and `info`), the structures point at
        // locals that outlive the call, and the device has computeFullSubgroups enabled (checked
        // in `check_requirements`, enabled by `Context::new` whenever supported).
        let result = unsafe {
            (fns.v1_0.create_compute_pipelines)(
                self.device.handle(),
                vk::PipelineCache::null(),
                1,
                &create,
                std::ptr::null(),
                &mut handle,
            )
        };
        if result != vk::Result::SUCCESS {
            return Err(VkError::vk(
                "creating the compute pipeline (full subgroups)",
                VulkanError::from(result),
            ));
        }
        // SAFETY: `handle` was just created from `info`'s stage and layout.
        Ok(unsafe { ComputePipeline::from_handle(self.device.clone(), handle, info) })
    }

    fn check_bindings(
        &self,
        d: &ModuleDispatch,
        r: &Reflection,
        entry: &EntryPoint,
    ) -> Result<(), VkError> {
        let mut given = HashMap::new();
        for (i, b) in d.buffers.iter().enumerate() {
            if given.insert((b.set, b.binding, b.element), i).is_some() {
                return Err(input(format!(
                    "binding {}.{}{} is given twice",
                    b.set,
                    b.binding,
                    if b.element > 0 {
                        format!(" element {}", b.element)
                    } else {
                        String::new()
                    }
                )));
            }
        }
        let props = self.device.physical_device().properties();
        let mut used: Vec<_> = entry
            .info()
            .descriptor_binding_requirements
            .iter()
            .collect();
        used.sort_by_key(|(k, _)| **k);
        for (&(set, binding), req) in used {
            let info = r.bindings.get(&(set, binding));
            let name = info.map(|i| i.name.as_str()).unwrap_or("?");
            let kind = if req
                .descriptor_types
                .contains(&DescriptorType::StorageBuffer)
            {
                DescriptorKind::Storage
            } else if req
                .descriptor_types
                .contains(&DescriptorType::UniformBuffer)
            {
                DescriptorKind::Uniform
            } else if req.descriptor_types.iter().any(|t| {
                matches!(
                    t,
                    DescriptorType::StorageImage
                        | DescriptorType::StorageTexelBuffer
                        | DescriptorType::UniformTexelBuffer
                        | DescriptorType::SampledImage
                        | DescriptorType::CombinedImageSampler
                        | DescriptorType::Sampler
                )
            }) {
                let Some(&i) = given.get(&(set, binding, 0)) else {
                    return Err(input(format!(
                        "binding {set}.{binding} (`{name}`, a {:?} descriptor) is used by entry point '{}' but nothing was given for it",
                        req.descriptor_types.first(),
                        d.entry
                    )));
                };
                self.check_image_binding(
                    &d.buffers[i],
                    (set, binding),
                    name,
                    req.descriptor_types.first(),
                )?;
                continue;
            } else {
                return Err(input(format!(
                    "binding {set}.{binding} (`{name}`) is a {:?} descriptor; lockstep binds storage and uniform buffers only",
                    req.descriptor_types.first()
                )));
            };
            let Some(count) = req.descriptor_count else {
                return Err(input(format!(
                    "binding {set}.{binding} (`{name}`) is a runtime-sized array of descriptors; lockstep binds arrays of a known length"
                )));
            };
            let array = count != 1 || info.is_some_and(|i| i.array);
            for element in 0..count {
                let Some(&i) = given.get(&(set, binding, element)) else {
                    return Err(input(format!(
                    "binding {set}.{binding}{} ({} `{name}`) is used by entry point '{}' but no buffer was given for it",
                    if array { format!(" element {element}") } else { String::new() },
                    kind.name(),
                    d.entry
                )));
                };
                let b = &d.buffers[i];
                if !b.kind.same_kind(kind) {
                    return Err(input(format!(
                        "binding {set}.{binding} (`{name}`) is a {} in the module, given as a {}",
                        kind.name(),
                        b.kind.name()
                    )));
                }
                if b.data.is_empty() {
                    return Err(input(format!(
                        "binding {set}.{binding} (`{name}`): the buffer is empty"
                    )));
                }
                if let Some(size) = info.and_then(|i| i.size).filter(|_| !array)
                    && (b.data.len() as u64) < size
                {
                    let what = if info.is_some_and(|i| i.runtime_array) {
                        "declares before its runtime array"
                    } else {
                        "declares"
                    };
                    return Err(input(format!(
                        "binding {set}.{binding} (`{name}`): the buffer has {} bytes, fewer than the {size} bytes the block {what}",
                        b.data.len()
                    )));
                }
                let max = match kind {
                    DescriptorKind::Uniform => props.max_uniform_buffer_range as u64,
                    _ => props.max_storage_buffer_range as u64,
                };
                if b.data.len() as u64 > max {
                    return Err(unsupported(format!(
                        "binding {set}.{binding}: a {}-byte {}: the device's limit is {max} bytes",
                        b.data.len(),
                        kind.name()
                    )));
                }
            }
        }
        check_push_constants(d, r, entry)
    }

    /// An image, texel-buffer or sampler binding the module uses: given as the kind the module
    /// declares, of a format the device runs, its bytes its extent's texels.
    fn check_image_binding(
        &self,
        b: &BoundBuffer,
        (set, binding): (u32, u32),
        name: &str,
        declared: Option<&DescriptorType>,
    ) -> Result<(), VkError> {
        let want = match declared {
            Some(DescriptorType::StorageImage) => "storage image",
            Some(DescriptorType::StorageTexelBuffer) => "storage texel buffer",
            Some(DescriptorType::SampledImage) => "sampled image",
            Some(DescriptorType::CombinedImageSampler) => "combined image sampler",
            Some(DescriptorType::Sampler) => "sampler",
            _ => "uniform texel buffer",
        };
        if b.kind.name() != want {
            return Err(input(format!(
                "binding {set}.{binding} (`{name}`) is a {want} in the module, given as a {}",
                b.kind.name()
            )));
        }
        if let DescriptorKind::StorageImage(ib)
        | DescriptorKind::SampledImage(ib)
        | DescriptorKind::CombinedImageSampler(ib, _) = b.kind
        {
            let f = &ib.format;
            if crate::vulkan::vk_format(f).is_none() {
                return Err(unsupported(format!("images of format {}", f.vk)));
            }
            if ib.extent.samples > 1 && !self.caps.storage_image_multisample {
                return Err(unsupported(
                    "shaderStorageImageMultisample, for a multisampled storage image",
                ));
            }
            if ib.extent.texels().checked_mul(f.texel_bytes() as u64) != Some(b.data.len() as u64) {
                return Err(input(format!(
                    "binding {set}.{binding} (`{name}`): the image's {} bytes are not its {}x{}x{} texels of {}",
                    b.data.len(), ib.extent.width, ib.extent.height, ib.extent.depth, f.vk
                )));
            }
        }
        Ok(())
    }

    /// A device buffer for a binding; `addressed`: with a device address too.
    /// A storage and uniform buffer of `len` bytes (with a device address where `addressed`; a
    /// texel buffer too where `texel`: one memory behind descriptors of both kinds).
    pub(crate) fn module_buffer(
        &self,
        len: u64,
        addressed: bool,
        texel: bool,
    ) -> Result<Subbuffer<[u8]>, VkError> {
        let mut usage = BufferUsage::STORAGE_BUFFER | BufferUsage::UNIFORM_BUFFER;
        if texel {
            usage |= BufferUsage::STORAGE_TEXEL_BUFFER | BufferUsage::UNIFORM_TEXEL_BUFFER;
        }
        if addressed {
            usage |= BufferUsage::SHADER_DEVICE_ADDRESS;
        }
        self.device_slice(len, usage, "allocating a device buffer")
    }

    pub(crate) fn staging(&self, data: &[u8]) -> Result<Subbuffer<[u8]>, VkError> {
        Buffer::from_iter(
            self.memory.clone(),
            BufferCreateInfo {
                usage: BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST,
                ..Default::default()
            },
            AllocationCreateInfo {
                memory_type_filter: MemoryTypeFilter::PREFER_HOST
                    | MemoryTypeFilter::HOST_RANDOM_ACCESS,
                ..Default::default()
            },
            data.iter().copied(),
        )
        .map_err(|e| VkError::vk("allocating a staging buffer", format_validated(e)))
    }

    fn dispatch_module(
        &self,
        d: &ModuleDispatch,
        pipeline: &Arc<ComputePipeline>,
        entry: &EntryPoint,
        push_end: u32,
        timeout: Duration,
    ) -> Result<ModuleOutput, VkError> {
        use crate::words::address::{self, Place};
        let reqs = &entry.info().descriptor_binding_requirements;
        let addressed = address::addressed(&d.addresses);
        if (!addressed.is_empty() || !d.unbound.is_empty())
            && !self.device.enabled_features().buffer_device_address
        {
            return Err(unsupported(
                "bufferDeviceAddress (Vulkan 1.2), for buffers reached through device addresses",
            ));
        }
        let used = |set: u32, binding: u32| reqs.contains_key(&(set, binding));
        let (mut bound, views) = self.bind_resources(d, &used, &addressed)?;
        // Buffers without a descriptor: after the bound ones, at index d.buffers.len() + j.
        for (j, data) in d.unbound.iter().enumerate() {
            let stage = self.staging(data)?;
            let dev = self.module_buffer(data.len() as u64, true, false)?;
            bound.push((d.buffers.len() + j, stage, Bound::Buffer(dev)));
        }
        let n_bound = d.buffers.len();
        let place_of = |i: usize| {
            if i < n_bound {
                Place::Bound(i)
            } else {
                Place::Unbound(i - n_bound)
            }
        };
        // The driver's addresses, written where the host puts them.
        let mut bases = Vec::new();
        for (i, _, dev) in &bound {
            let p = place_of(*i);
            if let (Bound::Buffer(dev), true) = (
                dev,
                addressed.contains(&p) || matches!(p, Place::Unbound(_)),
            ) {
                let a = dev
                    .device_address()
                    .map_err(|e| VkError::vk("getting a buffer's device address", e))?;
                bases.push((p, a.get()));
            }
        }
        let base = |p: Place| bases.iter().find(|(q, _)| *q == p).map(|(_, a)| *a);
        for (i, stage, _) in &bound {
            let mut w = stage
                .write()
                .map_err(|e| VkError::vk("writing a staging buffer", e))?;
            address::apply(&d.addresses, place_of(*i), &mut w, &base).map_err(input)?;
        }
        let mut push_constants = d.push_constants.clone();
        address::apply(&d.addresses, Place::Push, &mut push_constants, &base).map_err(input)?;
        let builder = || {
            AutoCommandBufferBuilder::primary(
                self.commands.clone(),
                self.queue.queue_family_index(),
                CommandBufferUsage::OneTimeSubmit,
            )
            .map_err(|e| VkError::vk("recording commands", format_validated(e)))
        };
        if !bound.is_empty() {
            let mut up = builder()?;
            for (_, stage, dev) in &bound {
                dev.copy(&mut up, stage, true)?;
            }
            self.submit_with_timeout(up, timeout)?;
        }

        let layout = pipeline.layout().clone();
        let mut b = builder()?;
        b.bind_pipeline_compute(pipeline.clone())
            .map_err(|e| VkError::vk("binding the pipeline", e))?;
        for (set, set_layout) in layout.set_layouts().iter().enumerate() {
            if set_layout.bindings().is_empty() {
                continue;
            }
            let writes = self.descriptor_writes(d, &bound, &views, &used, set as u32)?;
            let ds = DescriptorSet::new(self.descriptors.clone(), set_layout.clone(), writes, [])
                .map_err(|e| VkError::vk("creating a descriptor set", format_validated(e)))?;
            b.bind_descriptor_sets(PipelineBindPoint::Compute, layout.clone(), set as u32, ds)
                .map_err(|e| VkError::vk("binding descriptor sets", e))?;
        }
        if let Some(range) = entry.info().push_constant_requirements {
            let start = range.offset as usize;
            let end = (start + range.size as usize).max(push_end as usize);
            let mut bytes = push_constants.clone();
            bytes.resize(end.next_multiple_of(4).max(bytes.len()), 0);
            for off in (start..end).step_by(4) {
                let chunk = [bytes[off], bytes[off + 1], bytes[off + 2], bytes[off + 3]];
                b.push_constants(layout.clone(), off as u32, chunk)
                    .map_err(|e| VkError::vk("setting push constants", e))?;
            }
        }
        // SAFETY: every buffer the entry point uses is bound and at least as large as its
        // block's fixed part (`check_bindings`); indexing past that is the kernel's own
        // behaviour, which robust drivers contain and which the model reports.
        unsafe { b.dispatch(d.workgroups) }.map_err(dispatch_error)?;
        let elapsed = self.submit_with_timeout(b, timeout)?;

        if !bound.is_empty() {
            let mut down = builder()?;
            for (_, stage, dev) in &bound {
                dev.copy(&mut down, stage, false)?;
            }
            self.submit_with_timeout(down, timeout)?;
        }
        let mut buffers: Vec<Vec<u8>> = d
            .buffers
            .iter()
            .map(|b| b.data.clone())
            .chain(d.unbound.iter().cloned())
            .collect();
        for (i, stage, dev) in &bound {
            if matches!(dev, Bound::Sampler(_)) {
                continue;
            }
            if let Bound::Image(_, ib, _) = dev
                && ib.extent.samples > 1
            {
                // Not readable: a multisampled image cannot be copied to a buffer.
                buffers[*i] = Vec::new();
                continue;
            }
            let all = stage
                .read()
                .map_err(|e| VkError::vk("reading a buffer back", e))?;
            // (a view of a shared buffer: the bytes its descriptor sees)
            buffers[*i] = match views.get(i) {
                Some(v) => all[v.start as usize..v.end as usize].to_vec(),
                None => all.to_vec(),
            };
        }
        Ok(ModuleOutput {
            buffers,
            elapsed,
            bases,
        })
    }

    /// Submits `b` and waits at most `timeout`; returns the time from submission to completion.
    fn submit_with_timeout(
        &self,
        b: AutoCommandBufferBuilder<vulkano::command_buffer::PrimaryAutoCommandBuffer>,
        timeout: Duration,
    ) -> Result<Duration, VkError> {
        let cb = b
            .build()
            .map_err(|e| VkError::vk("building a command buffer", format_validated(e)))?;
        let t = Instant::now();
        let future = vulkano::sync::now(self.device.clone())
            .then_execute(self.queue.clone(), cb)
            .map_err(|e| VkError::vk("submitting work", e))?
            .then_signal_fence_and_flush()
            .map_err(|e| VkError::vk("submitting work", format_validated(e)))?;
        match future.wait(Some(timeout)) {
            Ok(()) => Ok(t.elapsed()),
            Err(e) => {
                // Dropping the future would wait for the fence without a limit: the work and
                // its resources are left to the driver.
                std::mem::forget(future);
                let detail = match e {
                    Validated::Error(VulkanError::Timeout) => format!(
                        "the work did not finish within {} s (an endless loop?); this device context cannot be used again",
                        timeout.as_secs_f64()
                    ),
                    e => format_validated(e),
                };
                Err(VkError::vk("waiting for the device", detail))
            }
        }
    }
}

/// What one invocation of a lane-layout probe saw: its `gl_SubgroupID`, its
/// `gl_SubgroupInvocationID`, and the `gl_LocalInvocationIndex` of its subgroup's first active
/// invocation (`subgroupBroadcastFirst`), which names the subgroup it really ran in even where a
/// driver numbers `gl_SubgroupID` wrongly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneRecord {
    /// `gl_SubgroupID`
    pub subgroup_id: u32,
    /// `gl_SubgroupInvocationID`
    pub lane: u32,
    /// `subgroupBroadcastFirst(gl_LocalInvocationIndex)`
    pub leader: u32,
}

const LAYOUT_PROBE: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) buffer Out { uvec4 o[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  o[i] = uvec4(gl_SubgroupID, gl_SubgroupInvocationID, subgroupBroadcastFirst(i), 1u);
}
"#;

impl Context {
    /// How this device places the invocations of a `shape` workgroup in subgroups at subgroup
    /// size `size` (required through size control when it is not the default, as
    /// `lockstep run` dispatches): one record per invocation, by `gl_LocalInvocationIndex`.
    pub fn probe_lane_layout(
        &self,
        shape: [u32; 3],
        size: u32,
    ) -> Result<Vec<LaneRecord>, VkError> {
        let words = crate::vulkan::compile_glsl(LAYOUT_PROBE, "layout-probe.comp", false)
            .map_err(|e| VkError::Input(format!("the layout probe: {e}")))?;
        let n = (shape[0] * shape[1] * shape[2]) as usize;
        let d = ModuleDispatch {
            spirv: &words,
            entry: "main",
            buffers: vec![BoundBuffer {
                set: 0,
                binding: 0,
                kind: DescriptorKind::Storage,
                data: vec![0u8; 16 * n],
                element: 0,
                alias_of: None,
                view: None,
            }],
            push_constants: Vec::new(),
            spec: (0..3)
                .map(|k| (k as u32, SpecConstant::U32(shape[k])))
                .collect(),
            workgroups: [1, 1, 1],
            required_subgroup_size: self.caps.required_size(size),
            full_subgroups: false,
            unbound: Vec::new(),
            addresses: Vec::new(),
        };
        let out = self.run_module(&d)?;
        let b = out
            .buffers
            .first()
            .ok_or_else(|| VkError::Input("the layout probe wrote nothing".into()))?;
        let word =
            |k: usize| u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
        (0..n)
            .map(|i| {
                if word(4 * i + 3) != 1 {
                    return Err(VkError::Input(format!(
                        "the layout probe: invocation {i} of {}x{}x{} did not run",
                        shape[0], shape[1], shape[2]
                    )));
                }
                Ok(LaneRecord {
                    subgroup_id: word(4 * i),
                    lane: word(4 * i + 1),
                    leader: word(4 * i + 2),
                })
            })
            .collect()
    }
}

/// Where the push constants end: the block as reflected, or the bytes given where they are
/// more (Amber gives a block's padding too; the pipeline's range covers what is pushed).
fn push_end(r: &Reflection, d: &ModuleDispatch) -> u32 {
    r.push_size.unwrap_or(0).max(d.push_constants.len() as u64) as u32
}

/// The push constants given against the module's block (or the range the entry point uses).
fn check_push_constants(
    d: &ModuleDispatch,
    r: &Reflection,
    entry: &EntryPoint,
) -> Result<(), VkError> {
    let block = r.push_size;
    let used = entry.info().push_constant_requirements;
    match (block, used) {
        (None, None) if !d.push_constants.is_empty() => Err(input(format!(
            "{} bytes of push constants were given, but the module has no push constant block",
            d.push_constants.len()
        ))),
        (Some(size), _) => {
            // More bytes than the block (its padding to a stride, as Amber's scripts give it)
            // are pushed and unused; fewer are refused (they would leave members undefined).
            let n = d.push_constants.len() as u64;
            if n < size {
                Err(input(format!(
                    "the push constant block is {size} bytes, but {n} bytes were given"
                )))
            } else {
                Ok(())
            }
        }
        (None, Some(range)) => {
            let size = range.offset as u64 + range.size as u64;
            if d.push_constants.len() as u64 != size {
                Err(input(format!(
                    "the push constant block is {size} bytes, but {} bytes were given",
                    d.push_constants.len()
                )))
            } else {
                Ok(())
            }
        }
        (None, None) => Ok(()),
    }
}

/// The error of recording a dispatch: a storage image the shader declares without a format
/// (`Unknown`) needs a view format this device can read or write that way
/// (VUID-vkCmdDispatch-OpTypeImage-06423/06424) — a device limit, not the user's error.
fn dispatch_error<E: std::fmt::Display>(e: E) -> VkError {
    let t = e.to_string();
    if t.contains("WITHOUT_FORMAT") {
        VkError::Unsupported(format!(
            "a storage image the shader declares without a format is read or written through a view whose format this device cannot use that way (declare the image's format in the shader, e.g. `layout(rgba32f)`): {t}"
        ))
    } else {
        VkError::vk("recording the dispatch", t)
    }
}
