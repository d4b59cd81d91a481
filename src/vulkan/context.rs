//! A device context built once and reused: instance, device, compute queue, allocators; plus
//! kernels (compute pipelines) and dispatch.

use crate::vulkan::caps::{device_rank, device_type_name, driver_string, Capabilities, DeviceInfo};
use crate::vulkan::VkError;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vulkano::buffer::{Buffer, BufferContents, BufferCreateInfo, BufferUsage, Subbuffer};
use vulkano::command_buffer::allocator::StandardCommandBufferAllocator;
use vulkano::command_buffer::{AutoCommandBufferBuilder, CommandBufferUsage, CopyBufferInfo};
use vulkano::descriptor_set::allocator::StandardDescriptorSetAllocator;
use vulkano::descriptor_set::{DescriptorSet, WriteDescriptorSet};
use vulkano::device::physical::PhysicalDevice;
use vulkano::device::{
    Device, DeviceCreateInfo, DeviceExtensions, DeviceFeatures, Queue, QueueCreateInfo, QueueFlags,
};
use vulkano::instance::{Instance, InstanceCreateFlags, InstanceCreateInfo, InstanceExtensions};
use vulkano::memory::allocator::{AllocationCreateInfo, MemoryTypeFilter, StandardMemoryAllocator};
use vulkano::pipeline::compute::ComputePipelineCreateInfo;
use vulkano::pipeline::layout::PipelineDescriptorSetLayoutCreateInfo;
use vulkano::pipeline::{
    ComputePipeline, Pipeline, PipelineBindPoint, PipelineCreateFlags, PipelineLayout,
    PipelineShaderStageCreateInfo,
};
use vulkano::shader::{ShaderModule, ShaderModuleCreateInfo, SpecializationConstant};
use vulkano::sync::GpuFuture;
use vulkano::{Validated, VulkanLibrary};

/// A specialization constant value.
#[derive(Clone, Copy, Debug)]
pub enum SpecValue {
    /// `uint`
    U32(u32),
    /// `int`
    I32(i32),
    /// `float`
    F32(f32),
    /// `bool`
    Bool(bool),
}

impl From<SpecValue> for SpecializationConstant {
    fn from(v: SpecValue) -> Self {
        match v {
            SpecValue::U32(x) => SpecializationConstant::U32(x),
            SpecValue::I32(x) => SpecializationConstant::I32(x),
            SpecValue::F32(x) => SpecializationConstant::F32(x),
            SpecValue::Bool(x) => SpecializationConstant::Bool(x),
        }
    }
}

/// How to build a kernel.
#[derive(Clone, Debug, Default)]
pub struct KernelOptions {
    /// Specialization constants by id.
    pub spec: Vec<(u32, SpecValue)>,
    /// `requiredSubgroupSize` (needs size control for compute).
    pub required_subgroup_size: Option<u32>,
}

/// One dispatch: the buffers bound at bindings 0, 1, … of set 0, and the workgroup counts.
pub type Pass = (Vec<Subbuffer<[u8]>>, [u32; 3]);

/// A compute pipeline ready to dispatch.
#[derive(Clone)]
pub struct Kernel {
    pipeline: Arc<ComputePipeline>,
}

/// A device with everything needed to run compute work on it.
pub struct Context {
    /// the device
    pub device: Arc<Device>,
    /// a compute queue
    pub queue: Arc<Queue>,
    /// buffer memory
    pub memory: Arc<StandardMemoryAllocator>,
    /// command buffers
    pub commands: Arc<StandardCommandBufferAllocator>,
    /// descriptor sets
    pub descriptors: Arc<StandardDescriptorSetAllocator>,
    /// what the device supports
    pub caps: Capabilities,
    /// name, type, driver, …
    pub info: DeviceInfo,
}

fn instance() -> Result<Arc<Instance>, VkError> {
    let library = VulkanLibrary::new().map_err(|e| VkError::NoLoader(e.to_string()))?;
    let wanted = InstanceExtensions {
        khr_portability_enumeration: true,
        khr_get_physical_device_properties2: true,
        ..InstanceExtensions::empty()
    };
    let enabled = wanted.intersection(library.supported_extensions());
    let flags = if enabled.khr_portability_enumeration {
        InstanceCreateFlags::ENUMERATE_PORTABILITY
    } else {
        InstanceCreateFlags::empty()
    };
    Instance::new(
        library,
        InstanceCreateInfo {
            flags,
            enabled_extensions: enabled,
            ..Default::default()
        },
    )
    .map_err(|e| VkError::NoDevice(format!(" (creating a Vulkan instance failed: {e})")))
}

fn physical_devices() -> Result<Vec<Arc<PhysicalDevice>>, VkError> {
    let inst = instance()?;
    let list: Vec<_> = inst
        .enumerate_physical_devices()
        .map_err(|e| VkError::vk("enumerating devices", e))?
        .collect();
    if list.is_empty() {
        return Err(VkError::NoDevice(String::new()));
    }
    Ok(list)
}

fn describe(index: usize, pd: &Arc<PhysicalDevice>) -> DeviceInfo {
    let p = pd.properties();
    DeviceInfo {
        index,
        name: p.device_name.clone(),
        device_type: device_type_name(p.device_type),
        api_version: format!("{}", p.api_version),
        driver: driver_string(pd),
        capabilities: Capabilities::of(pd),
    }
}

/// Every Vulkan device found.
pub fn list_devices() -> Result<Vec<DeviceInfo>, VkError> {
    Ok(physical_devices()?
        .iter()
        .enumerate()
        .map(|(i, pd)| describe(i, pd))
        .collect())
}

impl Context {
    /// Every Vulkan device found (name, type, API version, driver, subgroup capabilities).
    pub fn list() -> Result<Vec<DeviceInfo>, VkError> {
        list_devices()
    }

    /// Opens device `index`, or the preferred one (discrete > integrated > virtual > CPU) when `None`,
    /// with every optional feature and extension lockstep can use that the device has.
    pub fn new(index: Option<usize>) -> Result<Context, VkError> {
        let pds = physical_devices()?;
        let (i, pd) = match index {
            Some(i) => (
                i,
                pds.get(i).cloned().ok_or(VkError::DeviceIndex {
                    index: i,
                    count: pds.len(),
                })?,
            ),
            None => pds
                .iter()
                .enumerate()
                .min_by_key(|(_, p)| device_rank(p.properties().device_type))
                .map(|(i, p)| (i, p.clone()))
                .ok_or(VkError::NoDevice(String::new()))?,
        };
        let qfi = pd
            .queue_family_properties()
            .iter()
            .position(|q| q.queue_flags.contains(QueueFlags::COMPUTE))
            .ok_or_else(|| VkError::vk("choosing a queue", "the device has no compute queue"))?
            as u32;
        let (ext, feat) = enabled_extensions_and_features(&pd);
        let (device, mut queues) = Device::new(
            pd.clone(),
            DeviceCreateInfo {
                queue_create_infos: vec![QueueCreateInfo {
                    queue_family_index: qfi,
                    ..Default::default()
                }],
                enabled_extensions: ext,
                enabled_features: feat,
                ..Default::default()
            },
        )
        .map_err(|e| VkError::vk("creating the device", e))?;
        let queue = queues
            .next()
            .ok_or_else(|| VkError::vk("creating the device", "no queue returned"))?;
        Ok(Context {
            memory: Arc::new(StandardMemoryAllocator::new_default(device.clone())),
            commands: Arc::new(StandardCommandBufferAllocator::new(
                device.clone(),
                Default::default(),
            )),
            descriptors: Arc::new(StandardDescriptorSetAllocator::new(
                device.clone(),
                Default::default(),
            )),
            caps: Capabilities::of(&pd),
            info: describe(i, &pd),
            device,
            queue,
        })
    }

    /// Builds a kernel from SPIR-V words.
    pub fn kernel(&self, spirv: &[u32], opts: &KernelOptions) -> Result<Kernel, VkError> {
        // SAFETY: the words come from shaderc and are valid SPIR-V; vulkano
        // validates the module's requirements against the enabled features.
        let module =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(spirv)) }
                .map_err(|e| VkError::vk("loading the shader module", format_validated(e)))?;
        self.kernel_from_module(module, opts)
    }

    /// Builds a kernel from SPIR-V words with `VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT`: a
    /// driver that honours it compiles faster and runs unoptimised code.
    pub fn kernel_unoptimized(
        &self,
        spirv: &[u32],
        opts: &KernelOptions,
    ) -> Result<Kernel, VkError> {
        // SAFETY: as in `kernel`.
        let module =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(spirv)) }
                .map_err(|e| VkError::vk("loading the shader module", format_validated(e)))?;
        self.build_kernel(module, opts, PipelineCreateFlags::DISABLE_OPTIMIZATION)
    }

    /// Builds a kernel from a loaded module.
    pub fn kernel_from_module(
        &self,
        module: Arc<ShaderModule>,
        opts: &KernelOptions,
    ) -> Result<Kernel, VkError> {
        self.build_kernel(module, opts, PipelineCreateFlags::empty())
    }

    fn build_kernel(
        &self,
        module: Arc<ShaderModule>,
        opts: &KernelOptions,
        flags: PipelineCreateFlags,
    ) -> Result<Kernel, VkError> {
        let entry = module
            .specialize(opts.spec.iter().map(|(k, v)| (*k, (*v).into())).collect())
            .map_err(|e| VkError::vk("specializing the shader", e))?
            .entry_point("main")
            .ok_or_else(|| VkError::vk("loading the shader", "no entry point 'main'"))?;
        let mut stage = PipelineShaderStageCreateInfo::new(entry);
        stage.required_subgroup_size = opts.required_subgroup_size;
        let layout = PipelineLayout::new(
            self.device.clone(),
            PipelineDescriptorSetLayoutCreateInfo::from_stages([&stage])
                .into_pipeline_layout_create_info(self.device.clone())
                .map_err(|e| VkError::vk("creating the pipeline layout", e))?,
        )
        .map_err(|e| VkError::vk("creating the pipeline layout", format_validated(e)))?;
        let mut info = ComputePipelineCreateInfo::stage_layout(stage, layout);
        info.flags = flags;
        Ok(Kernel {
            pipeline: self.compute_pipeline(info)?,
        })
    }

    /// Creates a compute pipeline, passing over vulkano 0.35's known false positives (see
    /// `vulkano_false_positive`).
    pub(crate) fn compute_pipeline(
        &self,
        info: ComputePipelineCreateInfo,
    ) -> Result<Arc<ComputePipeline>, VkError> {
        match ComputePipeline::new(self.device.clone(), None, info.clone()) {
            Ok(p) => Ok(p),
            Err(Validated::ValidationError(v)) if self.vulkano_false_positive(&v) => {
                // SAFETY: the create info passed every other check; the one failed check is a
                // vulkano 0.35 bug whose actual rule `vulkano_false_positive` checks itself.
                unsafe { ComputePipeline::new_unchecked(self.device.clone(), None, info) }
                    .map_err(|e| VkError::vk("creating the compute pipeline", e))
            }
            Err(e) => Err(VkError::vk(
                "creating the compute pipeline",
                format_validated(e),
            )),
        }
    }

    /// Whether a failed vulkano 0.35 pipeline check is one of its known false positives for a
    /// compute pipeline, where the rule the VUID states does hold:
    /// - VUID-RuntimeSpirv-None-06342 (quad operations need subgroupQuadOperationsInAllStages):
    ///   vulkano does not exempt GLCompute, which the rule does.
    /// - VUID-RuntimeSpirv-SubgroupUniformControlFlowKHR-06379 (the SUCF execution mode needs the
    ///   feature and the stage among the subgroup-supported stages): vulkano reads the
    ///   `supported_stages` property of VkPhysicalDeviceSubgroupProperties, which it leaves unset
    ///   on Vulkan ≥ 1.2 devices (it queries VkPhysicalDeviceVulkan11Properties, whose
    ///   `subgroup_supported_stages` it fills, instead). Seen on the NVIDIA H200 (Vulkan 1.4).
    ///   The rule is checked here against the enabled feature and `subgroup_supported_stages`.
    fn vulkano_false_positive(&self, v: &vulkano::ValidationError) -> bool {
        if v.vuids.contains(&"VUID-RuntimeSpirv-None-06342") {
            return true;
        }
        v.vuids
            .contains(&"VUID-RuntimeSpirv-SubgroupUniformControlFlowKHR-06379")
            && self
                .device
                .enabled_features()
                .shader_subgroup_uniform_control_flow
            && self.caps.compute
    }

    /// A host-visible storage buffer filled from `data` (readable after a dispatch).
    pub fn host_buffer<T: BufferContents + Copy>(
        &self,
        data: &[T],
    ) -> Result<Subbuffer<[T]>, VkError> {
        Buffer::from_iter(
            self.memory.clone(),
            BufferCreateInfo {
                usage: BufferUsage::STORAGE_BUFFER
                    | BufferUsage::TRANSFER_SRC
                    | BufferUsage::TRANSFER_DST,
                ..Default::default()
            },
            AllocationCreateInfo {
                memory_type_filter: MemoryTypeFilter::PREFER_HOST
                    | MemoryTypeFilter::HOST_RANDOM_ACCESS,
                ..Default::default()
            },
            data.iter().copied(),
        )
        .map_err(|e| VkError::vk("allocating a buffer", format_validated(e)))
    }

    /// A device-local storage buffer of `len` elements (contents undefined until written).
    pub fn device_buffer<T: BufferContents>(&self, len: u64) -> Result<Subbuffer<[T]>, VkError> {
        self.device_slice(
            len,
            BufferUsage::STORAGE_BUFFER,
            "allocating a device buffer",
        )
    }

    /// A device-local buffer of `len` elements for `usage` (and transfers both ways); `what` names
    /// the allocation in an error.
    pub(crate) fn device_slice<T: BufferContents>(
        &self,
        len: u64,
        usage: BufferUsage,
        what: &str,
    ) -> Result<Subbuffer<[T]>, VkError> {
        Buffer::new_slice(
            self.memory.clone(),
            BufferCreateInfo {
                usage: usage | BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST,
                ..Default::default()
            },
            AllocationCreateInfo {
                memory_type_filter: MemoryTypeFilter::PREFER_DEVICE,
                ..Default::default()
            },
            len,
        )
        .map_err(|e| VkError::vk(what, format_validated(e)))
    }

    /// Copies `src` into `dst` (transfer command) and waits.
    pub fn copy<T: BufferContents>(
        &self,
        src: &Subbuffer<[T]>,
        dst: &Subbuffer<[T]>,
    ) -> Result<(), VkError> {
        let mut b = AutoCommandBufferBuilder::primary(
            self.commands.clone(),
            self.queue.queue_family_index(),
            CommandBufferUsage::OneTimeSubmit,
        )
        .map_err(|e| VkError::vk("recording a copy", format_validated(e)))?;
        b.copy_buffer(CopyBufferInfo::buffers(src.clone(), dst.clone()))
            .map_err(|e| VkError::vk("recording a copy", e))?;
        self.submit(b).map(|_| ())
    }

    /// Dispatches `kernel` once per entry of `passes` (each a list of buffers bound at bindings
    /// 0, 1, … of set 0, and a group count), all in one command buffer, and waits. Returns the
    /// wall time from submission to completion.
    pub fn dispatch(&self, kernel: &Kernel, passes: &[Pass]) -> Result<Duration, VkError> {
        let layout = kernel.pipeline.layout().clone();
        let set_layout =
            layout.set_layouts().first().cloned().ok_or_else(|| {
                VkError::vk("binding buffers", "the kernel has no descriptor set 0")
            })?;
        let mut b = AutoCommandBufferBuilder::primary(
            self.commands.clone(),
            self.queue.queue_family_index(),
            CommandBufferUsage::OneTimeSubmit,
        )
        .map_err(|e| VkError::vk("recording a dispatch", format_validated(e)))?;
        b.bind_pipeline_compute(kernel.pipeline.clone())
            .map_err(|e| VkError::vk("binding the pipeline", e))?;
        for (buffers, groups) in passes {
            let set = DescriptorSet::new(
                self.descriptors.clone(),
                set_layout.clone(),
                buffers
                    .iter()
                    .enumerate()
                    .map(|(i, buf)| WriteDescriptorSet::buffer(i as u32, buf.clone())),
                [],
            )
            .map_err(|e| VkError::vk("creating a descriptor set", format_validated(e)))?;
            b.bind_descriptor_sets(PipelineBindPoint::Compute, layout.clone(), 0, set)
                .map_err(|e| VkError::vk("binding buffers", e))?;
            // SAFETY: the kernels index their buffers within the bounds the host sized them for.
            unsafe { b.dispatch(*groups) }.map_err(|e| VkError::vk("recording a dispatch", e))?;
        }
        self.submit(b)
    }

    fn submit(
        &self,
        b: AutoCommandBufferBuilder<vulkano::command_buffer::PrimaryAutoCommandBuffer>,
    ) -> Result<Duration, VkError> {
        let cb = b
            .build()
            .map_err(|e| VkError::vk("building a command buffer", format_validated(e)))?;
        let t = Instant::now();
        vulkano::sync::now(self.device.clone())
            .then_execute(self.queue.clone(), cb)
            .map_err(|e| VkError::vk("submitting work", e))?
            .then_signal_fence_and_flush()
            .map_err(|e| VkError::vk("submitting work", format_validated(e)))?
            .wait(None)
            .map_err(|e| VkError::vk("waiting for the device", format_validated(e)))?;
        Ok(t.elapsed())
    }
}

pub(crate) fn format_validated<E: std::fmt::Display>(e: Validated<E>) -> String {
    match e {
        Validated::Error(e) => e.to_string(),
        Validated::ValidationError(v) => v.to_string(),
    }
}

/// Every device feature lockstep can use (enabled where the device has it).
fn wanted_features() -> DeviceFeatures {
    DeviceFeatures {
        subgroup_size_control: true,
        compute_full_subgroups: true,
        shader_int8: true,
        shader_int16: true,
        shader_int64: true,
        shader_float16: true,
        shader_float64: true,
        storage_buffer8_bit_access: true,
        storage_buffer16_bit_access: true,
        uniform_and_storage_buffer8_bit_access: true,
        uniform_and_storage_buffer16_bit_access: true,
        storage_push_constant8: true,
        storage_push_constant16: true,
        vulkan_memory_model: true,
        vulkan_memory_model_device_scope: true,
        shader_buffer_int64_atomics: true,
        shader_shared_int64_atomics: true,
        shader_subgroup_extended_types: true,
        shader_subgroup_rotate: true,
        shader_subgroup_rotate_clustered: true,
        shader_maximal_reconvergence: true,
        shader_subgroup_uniform_control_flow: true,
        subgroup_broadcast_dynamic_id: true,
        variable_pointers: true,
        variable_pointers_storage_buffer: true,
        workgroup_memory_explicit_layout: true,
        workgroup_memory_explicit_layout_scalar_block_layout: true,
        workgroup_memory_explicit_layout8_bit_access: true,
        workgroup_memory_explicit_layout16_bit_access: true,
        shader_zero_initialize_workgroup_memory: true,
        // LocalSizeId (glslang's `local_size_x_id` for Vulkan 1.3)
        maintenance4: true,
        shader_storage_image_multisample: true,
        // storage images the shader declares without a format (`Unknown`)
        shader_storage_image_read_without_format: true,
        shader_storage_image_write_without_format: true,
        shader_storage_image_extended_formats: true,
        shader_image_int64_atomics: true,
        // GL_EXT_buffer_reference (PhysicalStorageBuffer64 modules)
        buffer_device_address: true,
        // arrays of descriptors indexed by a value (`bufs[i]`), and by one that differs between
        // invocations (GL_EXT_nonuniform_qualifier's `bufs[nonuniformEXT(i)]`)
        shader_uniform_buffer_array_dynamic_indexing: true,
        shader_storage_buffer_array_dynamic_indexing: true,
        shader_sampled_image_array_dynamic_indexing: true,
        shader_storage_image_array_dynamic_indexing: true,
        shader_uniform_texel_buffer_array_dynamic_indexing: true,
        shader_storage_texel_buffer_array_dynamic_indexing: true,
        shader_uniform_buffer_array_non_uniform_indexing: true,
        shader_storage_buffer_array_non_uniform_indexing: true,
        shader_sampled_image_array_non_uniform_indexing: true,
        shader_storage_image_array_non_uniform_indexing: true,
        shader_uniform_texel_buffer_array_non_uniform_indexing: true,
        shader_storage_texel_buffer_array_non_uniform_indexing: true,
        // GL_EXT_shader_atomic_float (atomicAdd, atomicExchange of floats) and
        // GL_EXT_shader_atomic_float2 (atomicMin, atomicMax, and 16-bit floats)
        shader_buffer_float32_atomics: true,
        shader_buffer_float32_atomic_add: true,
        shader_buffer_float64_atomics: true,
        shader_buffer_float64_atomic_add: true,
        shader_shared_float32_atomics: true,
        shader_shared_float32_atomic_add: true,
        shader_shared_float64_atomics: true,
        shader_shared_float64_atomic_add: true,
        shader_image_float32_atomics: true,
        shader_image_float32_atomic_add: true,
        shader_buffer_float16_atomics: true,
        shader_buffer_float16_atomic_add: true,
        shader_buffer_float16_atomic_min_max: true,
        shader_buffer_float32_atomic_min_max: true,
        shader_buffer_float64_atomic_min_max: true,
        shader_shared_float16_atomics: true,
        shader_shared_float16_atomic_add: true,
        shader_shared_float16_atomic_min_max: true,
        shader_shared_float32_atomic_min_max: true,
        shader_shared_float64_atomic_min_max: true,
        shader_image_float32_atomic_min_max: true,
        // GL_ARB_shader_clock and GL_EXT_shader_realtime_clock (`clockARB()`,
        // `clockRealtimeEXT()`)
        shader_subgroup_clock: true,
        shader_device_clock: true,
        // GL_EXT_integer_dot_product (`dotPacked4x8EXT`, …)
        shader_integer_dot_product: true,
        ..DeviceFeatures::empty()
    }
}

/// The extensions and features a context enables on `pd`: every one lockstep can use that the
/// device supports, in the extension form only where the device's version lacks the core form.
fn enabled_extensions_and_features(
    pd: &Arc<vulkano::device::physical::PhysicalDevice>,
) -> (DeviceExtensions, DeviceFeatures) {
    let want_ext = DeviceExtensions {
        khr_shader_subgroup_rotate: true,
        khr_shader_maximal_reconvergence: true,
        khr_shader_subgroup_uniform_control_flow: true,
        ext_subgroup_size_control: true,
        khr_shader_subgroup_extended_types: true,
        khr_shader_float16_int8: true,
        khr_8bit_storage: true,
        khr_16bit_storage: true,
        khr_storage_buffer_storage_class: true,
        khr_vulkan_memory_model: true,
        khr_shader_atomic_int64: true,
        nv_shader_subgroup_partitioned: true,
        khr_variable_pointers: true,
        khr_workgroup_memory_explicit_layout: true,
        khr_zero_initialize_workgroup_memory: true,
        khr_spirv_1_4: true,
        khr_shader_float_controls: true,
        khr_maintenance4: true,
        ext_shader_image_atomic_int64: true,
        ext_descriptor_indexing: true,
        ext_shader_atomic_float: true,
        ext_shader_atomic_float2: true,
        khr_shader_clock: true,
        // GL_EXT_debug_printf's NonSemantic.DebugPrintf instructions
        khr_shader_non_semantic_info: true,
        khr_shader_integer_dot_product: true,
        // GL_ARB_shader_ballot's and GL_ARB_shader_group_vote's SPIR-V (SubgroupBallotKHR,
        // SubgroupVoteKHR: `gl_SubGroupSizeARB` in kernels written for OpenGL); deprecated by
        // Vulkan 1.2 but not promoted, so enabled wherever the device has them
        ext_shader_subgroup_ballot: true,
        ext_shader_subgroup_vote: true,
        ..DeviceExtensions::empty()
    };
    let mut ext = want_ext.intersection(pd.supported_extensions());
    // Promoted to core in 1.1-1.3: only enable the extension form on older devices.
    let v = pd.api_version();
    if v >= vulkano::Version::V1_3 {
        ext.ext_subgroup_size_control = false;
    }
    if v >= vulkano::Version::V1_3 {
        ext.khr_zero_initialize_workgroup_memory = false;
        ext.khr_maintenance4 = false;
        ext.khr_shader_non_semantic_info = false;
        ext.khr_shader_integer_dot_product = false;
    }
    if v >= vulkano::Version::V1_2 {
        ext.ext_descriptor_indexing = false;
        ext.khr_spirv_1_4 = false;
        ext.khr_shader_float_controls = false;
        ext.khr_shader_subgroup_extended_types = false;
        ext.khr_shader_float16_int8 = false;
        ext.khr_8bit_storage = false;
        ext.khr_vulkan_memory_model = false;
        ext.khr_shader_atomic_int64 = false;
    }
    if v >= vulkano::Version::V1_1 {
        ext.khr_variable_pointers = false;
        ext.khr_16bit_storage = false;
        ext.khr_storage_buffer_storage_class = false;
    }
    let want_feat = wanted_features();
    let mut feat = want_feat.intersection(pd.supported_features());
    if !ext.khr_shader_subgroup_rotate && v < vulkano::Version::V1_4 {
        feat.shader_subgroup_rotate = false;
        feat.shader_subgroup_rotate_clustered = false;
    }
    if !ext.khr_shader_maximal_reconvergence {
        feat.shader_maximal_reconvergence = false;
    }
    if !ext.khr_workgroup_memory_explicit_layout {
        feat.workgroup_memory_explicit_layout = false;
        feat.workgroup_memory_explicit_layout_scalar_block_layout = false;
        feat.workgroup_memory_explicit_layout8_bit_access = false;
        feat.workgroup_memory_explicit_layout16_bit_access = false;
    }
    if !ext.khr_zero_initialize_workgroup_memory && v < vulkano::Version::V1_3 {
        feat.shader_zero_initialize_workgroup_memory = false;
    }
    if !ext.khr_shader_subgroup_uniform_control_flow {
        feat.shader_subgroup_uniform_control_flow = false;
    }
    if !ext.khr_maintenance4 && v < vulkano::Version::V1_3 {
        feat.maintenance4 = false;
    }
    if !ext.ext_shader_image_atomic_int64 {
        feat.shader_image_int64_atomics = false;
    }
    drop_extension_features(&mut feat, &ext, v);
    (ext, feat)
}

/// Clears the features of extensions the device lacks (where its version has no core form).
fn drop_extension_features(feat: &mut DeviceFeatures, ext: &DeviceExtensions, v: vulkano::Version) {
    if !ext.ext_shader_atomic_float {
        feat.shader_buffer_float32_atomics = false;
        feat.shader_buffer_float32_atomic_add = false;
        feat.shader_buffer_float64_atomics = false;
        feat.shader_buffer_float64_atomic_add = false;
        feat.shader_shared_float32_atomics = false;
        feat.shader_shared_float32_atomic_add = false;
        feat.shader_shared_float64_atomics = false;
        feat.shader_shared_float64_atomic_add = false;
        feat.shader_image_float32_atomics = false;
        feat.shader_image_float32_atomic_add = false;
    }
    if !ext.ext_shader_atomic_float2 {
        feat.shader_buffer_float16_atomics = false;
        feat.shader_buffer_float16_atomic_add = false;
        feat.shader_buffer_float16_atomic_min_max = false;
        feat.shader_buffer_float32_atomic_min_max = false;
        feat.shader_buffer_float64_atomic_min_max = false;
        feat.shader_shared_float16_atomics = false;
        feat.shader_shared_float16_atomic_add = false;
        feat.shader_shared_float16_atomic_min_max = false;
        feat.shader_shared_float32_atomic_min_max = false;
        feat.shader_shared_float64_atomic_min_max = false;
        feat.shader_image_float32_atomic_min_max = false;
    }
    if !ext.khr_shader_clock {
        feat.shader_subgroup_clock = false;
        feat.shader_device_clock = false;
    }
    if !ext.khr_shader_integer_dot_product && v < vulkano::Version::V1_3 {
        feat.shader_integer_dot_product = false;
    }
    if !ext.ext_descriptor_indexing && v < vulkano::Version::V1_2 {
        feat.shader_uniform_texel_buffer_array_dynamic_indexing = false;
        feat.shader_storage_texel_buffer_array_dynamic_indexing = false;
        feat.shader_uniform_buffer_array_non_uniform_indexing = false;
        feat.shader_storage_buffer_array_non_uniform_indexing = false;
        feat.shader_sampled_image_array_non_uniform_indexing = false;
        feat.shader_storage_image_array_non_uniform_indexing = false;
        feat.shader_uniform_texel_buffer_array_non_uniform_indexing = false;
        feat.shader_storage_texel_buffer_array_non_uniform_indexing = false;
    }
}
