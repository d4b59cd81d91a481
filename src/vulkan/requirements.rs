//! What a module and a dispatch need of the device, checked before anything is created: the
//! SPIR-V version, capabilities, execution modes, extensions, subgroup size control, workgroup
//! size and count limits.

use crate::vulkan::module::{input, unsupported, ModuleDispatch};
use crate::vulkan::reflect::Reflection;
use crate::vulkan::{Context, VkError};
use rspirv::spirv::{Capability, ExecutionMode};

impl Context {
    /// What the module and the dispatch need of the device, against its capabilities: each
    /// missing one *unsupported*, named as Vulkan names it; bad input an error.
    pub(crate) fn check_requirements(
        &self,
        r: &Reflection,
        d: &ModuleDispatch,
    ) -> Result<(), VkError> {
        let caps = &self.caps;
        let api = caps.api_version;
        let (major, minor) = r.version;
        let needed_api = match (major, minor) {
            (1, 0..=3) => (1, 1),
            (1, 4 | 5) => (1, 2),
            (1, 6) => (1, 3),
            _ => {
                return Err(input(format!(
                    "SPIR-V version {major}.{minor} is not one Vulkan accepts (1.0 to 1.6)"
                )))
            }
        };
        if api < needed_api {
            return Err(unsupported(format!(
                "SPIR-V {major}.{minor} modules (Vulkan {}.{}; the device has Vulkan {}.{})",
                needed_api.0, needed_api.1, api.0, api.1
            )));
        }
        let mut subgroup_ops = false;
        for c in &r.capabilities {
            if let Some((ok, name)) = capability_need(*c, caps) {
                if !ok {
                    return Err(unsupported(name));
                }
                subgroup_ops |= matches!(
                    c,
                    Capability::GroupNonUniform
                        | Capability::GroupNonUniformVote
                        | Capability::GroupNonUniformArithmetic
                        | Capability::GroupNonUniformBallot
                        | Capability::GroupNonUniformShuffle
                        | Capability::GroupNonUniformShuffleRelative
                        | Capability::GroupNonUniformClustered
                        | Capability::GroupNonUniformQuad
                        | Capability::GroupNonUniformPartitionedEXT
                        | Capability::GroupNonUniformRotateKHR
                );
            }
        }
        if subgroup_ops && !caps.compute {
            return Err(unsupported(
                "subgroup operations in compute shaders (subgroupSupportedStages lacks COMPUTE)",
            ));
        }
        for m in &r.modes {
            match m {
                ExecutionMode::SubgroupUniformControlFlowKHR if !caps.subgroup_uniform_control_flow => {
                    return Err(unsupported(
                        "shaderSubgroupUniformControlFlow (VK_KHR_shader_subgroup_uniform_control_flow)",
                    ))
                }
                ExecutionMode::MaximallyReconvergesKHR if !caps.maximal_reconvergence => {
                    return Err(unsupported(
                        "shaderMaximalReconvergence (VK_KHR_shader_maximal_reconvergence)",
                    ))
                }
                _ => {}
            }
        }
        for e in &r.extensions {
            let missing = match e.as_str() {
                "SPV_KHR_subgroup_rotate" if !caps.ops.rotate => {
                    Some("shaderSubgroupRotate (VK_KHR_shader_subgroup_rotate)")
                }
                "SPV_KHR_maximal_reconvergence" if !caps.maximal_reconvergence => {
                    Some("shaderMaximalReconvergence (VK_KHR_shader_maximal_reconvergence)")
                }
                "SPV_KHR_subgroup_uniform_control_flow" if !caps.subgroup_uniform_control_flow => {
                    Some("shaderSubgroupUniformControlFlow (VK_KHR_shader_subgroup_uniform_control_flow)")
                }
                _ => None,
            };
            if let Some(m) = missing {
                return Err(unsupported(m));
            }
        }
        if r.clustered_rotate && !caps.ops.rotate_clustered {
            return Err(unsupported(
                "shaderSubgroupRotateClustered (VK_KHR_shader_subgroup_rotate), for OpGroupNonUniformRotateKHR with a cluster size",
            ));
        }
        if let Some(op) = r.extended_type_op
            && !caps.subgroup_extended_types
        {
            return Err(unsupported(format!(
                    "shaderSubgroupExtendedTypes (VK_KHR_shader_subgroup_extended_types), for Op{op} on an 8/16/64-bit integer or 16-bit float"
                )));
        }
        if let Some(op) = r.dynamic_broadcast {
            if r.version < (1, 5) {
                return Err(input(format!(
                    "Op{op} with a lane id that is not a constant needs a SPIR-V 1.5 module; this one is {major}.{minor}"
                )));
            }
            if !caps.broadcast_dynamic_id {
                return Err(unsupported(format!(
                    "subgroupBroadcastDynamicId (Vulkan 1.2), for Op{op} with a lane id that is not a constant"
                )));
            }
        }
        self.check_dispatch_limits(r, d)
    }

    /// The dispatch's sizes against the device's limits: the required subgroup size, full
    /// subgroups, the workgroup size and the workgroup count.
    fn check_dispatch_limits(&self, r: &Reflection, d: &ModuleDispatch) -> Result<(), VkError> {
        let caps = &self.caps;
        if let Some(s) = d.required_subgroup_size {
            if !caps.size_control {
                return Err(unsupported(
                    "a required subgroup size: subgroupSizeControl (VK_EXT_subgroup_size_control) with compute in requiredSubgroupSizeStages",
                ));
            }
            if !s.is_power_of_two() {
                return Err(input(format!(
                    "required subgroup size {s} is not a power of two"
                )));
            }
            if s < caps.min_subgroup_size || s > caps.max_subgroup_size {
                return Err(unsupported(format!(
                    "required subgroup size {s}: the device's compute subgroup sizes are {} to {}",
                    caps.min_subgroup_size, caps.max_subgroup_size
                )));
            }
        }
        if d.full_subgroups && !caps.full_subgroups {
            return Err(unsupported(
                "computeFullSubgroups (VK_EXT_subgroup_size_control)",
            ));
        }
        if let Some(ls) = r.local_size {
            let n = ls.iter().fold(1u64, |a, &x| a.saturating_mul(x as u64));
            for (i, axis) in ["x", "y", "z"].iter().enumerate() {
                if ls[i] > caps.max_workgroup_size[i] {
                    return Err(unsupported(format!(
                        "local_size_{axis} = {}: maxComputeWorkGroupSize[{i}] is {}",
                        ls[i], caps.max_workgroup_size[i]
                    )));
                }
            }
            if n > caps.max_workgroup_invocations as u64 {
                return Err(unsupported(format!(
                    "a workgroup of {n} invocations: maxComputeWorkGroupInvocations is {}",
                    caps.max_workgroup_invocations
                )));
            }
            if let Some(s) = d.required_subgroup_size
                && n > s as u64 * caps.max_workgroup_subgroups as u64
            {
                return Err(unsupported(format!(
                        "a workgroup of {n} invocations at subgroup size {s}: maxComputeWorkgroupSubgroups is {}",
                        caps.max_workgroup_subgroups
                    )));
            }
            if d.full_subgroups {
                // VUID-VkPipelineShaderStageCreateInfo-flags-02758 and -02759.
                let (multiple, of) = match d.required_subgroup_size {
                    Some(s) => (s, "the required subgroup size"),
                    None => (caps.max_subgroup_size, "maxSubgroupSize"),
                };
                if multiple > 0 && ls[0] % multiple != 0 {
                    // Whether this holds depends on the device's subgroup size: unsupported here,
                    // not bad input (the same module is fine on a device whose size divides it).
                    return Err(unsupported(format!(
                        "full subgroups need local_size_x to be a multiple of {of} ({multiple}); it is {} (VUID-VkPipelineShaderStageCreateInfo-flags-02758/02759)",
                        ls[0]
                    )));
                }
            }
        } else if d.full_subgroups {
            return Err(input(
                "full subgroups need the workgroup size to be known, and it could not be read from the module",
            ));
        }
        let max_count = self
            .device
            .physical_device()
            .properties()
            .max_compute_work_group_count;
        for i in 0..3 {
            if d.workgroups[i] > max_count[i] {
                return Err(unsupported(format!(
                    "{} workgroups along {}: maxComputeWorkGroupCount is {:?}",
                    d.workgroups[i],
                    ["x", "y", "z"][i],
                    max_count
                )));
            }
        }
        Ok(())
    }
}

/// A SPIR-V capability, the device support it needs and that support's name.
fn capability_need(
    c: Capability,
    caps: &crate::vulkan::Capabilities,
) -> Option<(bool, &'static str)> {
    let o = &caps.ops;
    Some(match c {
        Capability::GroupNonUniform => (o.basic, "subgroup basic operations (VK_SUBGROUP_FEATURE_BASIC_BIT)"),
        Capability::GroupNonUniformVote => (o.vote, "subgroup vote operations (VK_SUBGROUP_FEATURE_VOTE_BIT)"),
        Capability::GroupNonUniformArithmetic => (o.arithmetic, "subgroup arithmetic operations (VK_SUBGROUP_FEATURE_ARITHMETIC_BIT)"),
        Capability::GroupNonUniformBallot => (o.ballot, "subgroup ballot operations (VK_SUBGROUP_FEATURE_BALLOT_BIT)"),
        Capability::GroupNonUniformShuffle => (o.shuffle, "subgroup shuffle operations (VK_SUBGROUP_FEATURE_SHUFFLE_BIT)"),
        Capability::GroupNonUniformShuffleRelative => (o.shuffle_relative, "subgroup relative shuffle operations (VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT)"),
        Capability::GroupNonUniformClustered => (o.clustered, "subgroup clustered operations (VK_SUBGROUP_FEATURE_CLUSTERED_BIT)"),
        Capability::GroupNonUniformQuad => (o.quad, "subgroup quad operations (VK_SUBGROUP_FEATURE_QUAD_BIT)"),
        Capability::GroupNonUniformPartitionedEXT => (o.partitioned, "subgroup partitioned operations (VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV, VK_NV_shader_subgroup_partitioned)"),
        Capability::GroupNonUniformRotateKHR => (o.rotate, "shaderSubgroupRotate (VK_KHR_shader_subgroup_rotate)"),
        Capability::Int8 => (caps.int8, "shaderInt8"),
        Capability::Int16 => (caps.int16, "shaderInt16"),
        Capability::Int64 => (caps.int64, "shaderInt64"),
        Capability::Float16 => (caps.float16, "shaderFloat16 (VK_KHR_shader_float16_int8)"),
        Capability::Float64 => (caps.float64, "shaderFloat64"),
        Capability::StorageBuffer8BitAccess => (caps.storage_buffer_8bit, "storageBuffer8BitAccess (VK_KHR_8bit_storage)"),
        Capability::UniformAndStorageBuffer8BitAccess => (caps.uniform_and_storage_buffer_8bit, "uniformAndStorageBuffer8BitAccess (VK_KHR_8bit_storage)"),
        Capability::StoragePushConstant8 => (caps.storage_push_constant_8bit, "storagePushConstant8 (VK_KHR_8bit_storage)"),
        Capability::StorageBuffer16BitAccess => (caps.storage_buffer_16bit, "storageBuffer16BitAccess (VK_KHR_16bit_storage)"),
        Capability::UniformAndStorageBuffer16BitAccess => (caps.uniform_and_storage_buffer_16bit, "uniformAndStorageBuffer16BitAccess (VK_KHR_16bit_storage)"),
        Capability::StoragePushConstant16 => (caps.storage_push_constant_16bit, "storagePushConstant16 (VK_KHR_16bit_storage)"),
        Capability::VulkanMemoryModel => (caps.vulkan_memory_model, "vulkanMemoryModel (VK_KHR_vulkan_memory_model)"),
        Capability::VulkanMemoryModelDeviceScope => (caps.vulkan_memory_model_device_scope, "vulkanMemoryModelDeviceScope (VK_KHR_vulkan_memory_model)"),
        Capability::VariablePointersStorageBuffer => (caps.variable_pointers_storage_buffer, "variablePointersStorageBuffer (VK_KHR_variable_pointers)"),
        Capability::VariablePointers => (caps.variable_pointers, "variablePointers (VK_KHR_variable_pointers)"),
        Capability::WorkgroupMemoryExplicitLayoutKHR => (caps.workgroup_memory_explicit_layout, "workgroupMemoryExplicitLayout (VK_KHR_workgroup_memory_explicit_layout)"),
        Capability::WorkgroupMemoryExplicitLayout8BitAccessKHR => (caps.workgroup_memory_explicit_layout_8bit, "workgroupMemoryExplicitLayout8BitAccess (VK_KHR_workgroup_memory_explicit_layout)"),
        Capability::WorkgroupMemoryExplicitLayout16BitAccessKHR => (caps.workgroup_memory_explicit_layout_16bit, "workgroupMemoryExplicitLayout16BitAccess (VK_KHR_workgroup_memory_explicit_layout)"),
        Capability::StorageImageMultisample => (caps.storage_image_multisample, "shaderStorageImageMultisample"),
        Capability::StorageImageExtendedFormats => (caps.storage_image_extended_formats, "shaderStorageImageExtendedFormats"),
        // The H100 offers it, but vulkano 0.35's reflection fails an internal assertion reading
        // such a module (found on the CTS's storage_image_r64* files, 2026-11-27): unsupported,
        // named, rather than a crash of the device runner.
        Capability::Int64ImageEXT => (false, "64-bit integer storage images (Int64ImageEXT): vulkano 0.35 cannot read a module that declares them, so the device runner does not run them"),
        Capability::Int64Atomics => (
            caps.buffer_int64_atomics || caps.shared_int64_atomics,
            "shaderBufferInt64Atomics or shaderSharedInt64Atomics (VK_KHR_shader_atomic_int64)",
        ),
        _ => return None,
    })
}
