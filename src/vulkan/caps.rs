//! What a device can do, read once from vulkano's properties, features and extensions.

use serde::Serialize;
use std::sync::Arc;
use vulkano::device::physical::{PhysicalDevice, PhysicalDeviceType, SubgroupFeatures};
use vulkano::shader::ShaderStages;

/// Subgroup operation categories (VkSubgroupFeatureFlags) and the rotate features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SubgroupOps {
    /// BASIC
    pub basic: bool,
    /// VOTE
    pub vote: bool,
    /// ARITHMETIC
    pub arithmetic: bool,
    /// BALLOT
    pub ballot: bool,
    /// SHUFFLE
    pub shuffle: bool,
    /// SHUFFLE_RELATIVE
    pub shuffle_relative: bool,
    /// CLUSTERED
    pub clustered: bool,
    /// QUAD
    pub quad: bool,
    /// PARTITIONED_NV
    pub partitioned: bool,
    /// shaderSubgroupRotate (VK_KHR_shader_subgroup_rotate or Vulkan 1.4)
    pub rotate: bool,
    /// shaderSubgroupRotateClustered
    pub rotate_clustered: bool,
}

impl SubgroupOps {
    /// Names of the supported categories, in Vulkan order.
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.basic, "basic"),
            (self.vote, "vote"),
            (self.arithmetic, "arithmetic"),
            (self.ballot, "ballot"),
            (self.shuffle, "shuffle"),
            (self.shuffle_relative, "shuffle_relative"),
            (self.clustered, "clustered"),
            (self.quad, "quad"),
            (self.partitioned, "partitioned"),
            (self.rotate, "rotate"),
            (self.rotate_clustered, "rotate_clustered"),
        ]
        .into_iter()
        .filter(|(b, _)| *b)
        .map(|(_, n)| n)
        .collect()
    }
}

/// Everything lockstep needs to know about a device's subgroup support.
///
/// `Default` is a device with nothing (every feature off, every limit 0), for tests to start from.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Capabilities {
    /// default subgroupSize
    pub subgroup_size: u32,
    /// minSubgroupSize (= subgroup_size without size control)
    pub min_subgroup_size: u32,
    /// maxSubgroupSize
    pub max_subgroup_size: u32,
    /// subgroupSizeControl and compute in requiredSubgroupSizeStages
    pub size_control: bool,
    /// computeFullSubgroups
    pub full_subgroups: bool,
    /// maxComputeWorkgroupSubgroups
    pub max_workgroup_subgroups: u32,
    /// maxComputeWorkGroupInvocations
    pub max_workgroup_invocations: u32,
    /// maxComputeWorkGroupSize
    pub max_workgroup_size: [u32; 3],
    /// subgroupSupportedStages
    pub stages: Vec<&'static str>,
    /// compute is among the supported stages
    pub compute: bool,
    /// subgroupSupportedOperations and rotate
    pub ops: SubgroupOps,
    /// shaderMaximalReconvergence
    pub maximal_reconvergence: bool,
    /// shaderSubgroupUniformControlFlow
    pub subgroup_uniform_control_flow: bool,
    /// subgroupBroadcastDynamicId (broadcast ids that are dynamically uniform, not constant)
    pub broadcast_dynamic_id: bool,
    /// shaderSubgroupExtendedTypes (subgroup ops on 8/16/64-bit types and f16)
    pub subgroup_extended_types: bool,
    /// shaderInt8
    pub int8: bool,
    /// shaderInt16
    pub int16: bool,
    /// shaderInt64
    pub int64: bool,
    /// shaderFloat16
    pub float16: bool,
    /// shaderFloat64
    pub float64: bool,
    /// storageBuffer8BitAccess (VK_KHR_8bit_storage)
    pub storage_buffer_8bit: bool,
    /// uniformAndStorageBuffer8BitAccess
    pub uniform_and_storage_buffer_8bit: bool,
    /// storagePushConstant8
    pub storage_push_constant_8bit: bool,
    /// storageBuffer16BitAccess (VK_KHR_16bit_storage)
    pub storage_buffer_16bit: bool,
    /// uniformAndStorageBuffer16BitAccess
    pub uniform_and_storage_buffer_16bit: bool,
    /// storagePushConstant16
    pub storage_push_constant_16bit: bool,
    /// vulkanMemoryModel (VK_KHR_vulkan_memory_model)
    pub vulkan_memory_model: bool,
    /// vulkanMemoryModelDeviceScope
    pub vulkan_memory_model_device_scope: bool,
    /// shaderBufferInt64Atomics (VK_KHR_shader_atomic_int64)
    pub buffer_int64_atomics: bool,
    /// shaderSharedInt64Atomics
    pub shared_int64_atomics: bool,
    /// variablePointersStorageBuffer (VK_KHR_variable_pointers)
    pub variable_pointers_storage_buffer: bool,
    /// variablePointers
    pub variable_pointers: bool,
    /// workgroupMemoryExplicitLayout (VK_KHR_workgroup_memory_explicit_layout)
    pub workgroup_memory_explicit_layout: bool,
    /// shaderStorageImageMultisample
    pub storage_image_multisample: bool,
    /// shaderStorageImageExtendedFormats
    pub storage_image_extended_formats: bool,
    /// shaderImageInt64Atomics (VK_EXT_shader_image_atomic_int64)
    pub image_int64_atomics: bool,
    /// workgroupMemoryExplicitLayout8BitAccess
    pub workgroup_memory_explicit_layout_8bit: bool,
    /// workgroupMemoryExplicitLayout16BitAccess
    pub workgroup_memory_explicit_layout_16bit: bool,
    /// shaderZeroInitializeWorkgroupMemory (VK_KHR_zero_initialize_workgroup_memory)
    pub zero_initialize_workgroup_memory: bool,
    /// The VkPhysicalDeviceFloatControlsProperties members that are true, by their Vulkan names
    /// (`shaderDenormPreserveFloat16`, …)
    pub float_controls: Vec<&'static str>,
    /// apiVersion as (major, minor)
    pub api_version: (u32, u32),
}

/// One physical device, as `lockstep devices` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// index for `--device`
    pub index: usize,
    /// deviceName
    pub name: String,
    /// discrete, integrated, virtual, cpu, other
    #[serde(rename = "type")]
    pub device_type: &'static str,
    /// apiVersion
    pub api_version: String,
    /// driverName and driverInfo (or the raw driverVersion)
    pub driver: String,
    /// subgroup capabilities
    pub capabilities: Capabilities,
}

pub(crate) fn device_type_name(t: PhysicalDeviceType) -> &'static str {
    match t {
        PhysicalDeviceType::DiscreteGpu => "discrete",
        PhysicalDeviceType::IntegratedGpu => "integrated",
        PhysicalDeviceType::VirtualGpu => "virtual",
        PhysicalDeviceType::Cpu => "cpu",
        _ => "other",
    }
}

/// Preference when no `--device` is given: discrete > integrated > virtual > CPU > other.
pub(crate) fn device_rank(t: PhysicalDeviceType) -> u32 {
    match t {
        PhysicalDeviceType::DiscreteGpu => 0,
        PhysicalDeviceType::IntegratedGpu => 1,
        PhysicalDeviceType::VirtualGpu => 2,
        PhysicalDeviceType::Cpu => 3,
        _ => 4,
    }
}

fn stage_names(s: ShaderStages) -> Vec<&'static str> {
    [
        (ShaderStages::VERTEX, "vertex"),
        (ShaderStages::TESSELLATION_CONTROL, "tessellation_control"),
        (
            ShaderStages::TESSELLATION_EVALUATION,
            "tessellation_evaluation",
        ),
        (ShaderStages::GEOMETRY, "geometry"),
        (ShaderStages::FRAGMENT, "fragment"),
        (ShaderStages::COMPUTE, "compute"),
        (ShaderStages::TASK, "task"),
        (ShaderStages::MESH, "mesh"),
        (ShaderStages::RAYGEN, "raygen"),
    ]
    .into_iter()
    .filter(|(f, _)| s.contains(*f))
    .map(|(_, n)| n)
    .collect()
}

pub(crate) fn driver_string(pd: &PhysicalDevice) -> String {
    let p = pd.properties();
    match (&p.driver_name, &p.driver_info) {
        (Some(n), Some(i)) if !i.is_empty() => format!("{n} {i}"),
        (Some(n), _) => n.clone(),
        _ => format!("driver version 0x{:x}", p.driver_version),
    }
}

impl Capabilities {
    /// Reads the capabilities of `pd`.
    pub fn of(pd: &Arc<PhysicalDevice>) -> Capabilities {
        let p = pd.properties();
        let f = pd.supported_features();
        let e = pd.supported_extensions();
        let ops = p.subgroup_supported_operations.unwrap_or_default();
        let stages = p.subgroup_supported_stages.unwrap_or_default();
        let size = p.subgroup_size.unwrap_or(1);
        let size_control = f.subgroup_size_control
            && p.required_subgroup_size_stages
                .is_some_and(|s| s.contains(ShaderStages::COMPUTE));
        let rotate_ext =
            e.khr_shader_subgroup_rotate || pd.api_version() >= vulkano::Version::major_minor(1, 4);
        Capabilities {
            subgroup_size: size,
            min_subgroup_size: if size_control {
                p.min_subgroup_size.unwrap_or(size)
            } else {
                size
            },
            max_subgroup_size: if size_control {
                p.max_subgroup_size.unwrap_or(size)
            } else {
                size
            },
            size_control,
            full_subgroups: f.compute_full_subgroups,
            max_workgroup_subgroups: p.max_compute_workgroup_subgroups.unwrap_or(0),
            max_workgroup_invocations: p.max_compute_work_group_invocations,
            max_workgroup_size: p.max_compute_work_group_size,
            stages: stage_names(stages),
            compute: stages.contains(ShaderStages::COMPUTE),
            ops: SubgroupOps {
                basic: ops.contains(SubgroupFeatures::BASIC),
                vote: ops.contains(SubgroupFeatures::VOTE),
                arithmetic: ops.contains(SubgroupFeatures::ARITHMETIC),
                ballot: ops.contains(SubgroupFeatures::BALLOT),
                shuffle: ops.contains(SubgroupFeatures::SHUFFLE),
                shuffle_relative: ops.contains(SubgroupFeatures::SHUFFLE_RELATIVE),
                clustered: ops.contains(SubgroupFeatures::CLUSTERED),
                quad: ops.contains(SubgroupFeatures::QUAD),
                partitioned: ops.contains(SubgroupFeatures::PARTITIONED),
                rotate: rotate_ext && f.shader_subgroup_rotate,
                rotate_clustered: rotate_ext && f.shader_subgroup_rotate_clustered,
            },
            maximal_reconvergence: e.khr_shader_maximal_reconvergence
                && f.shader_maximal_reconvergence,
            subgroup_uniform_control_flow: e.khr_shader_subgroup_uniform_control_flow
                && f.shader_subgroup_uniform_control_flow,
            broadcast_dynamic_id: f.subgroup_broadcast_dynamic_id,
            subgroup_extended_types: f.shader_subgroup_extended_types,
            int8: f.shader_int8,
            int16: f.shader_int16,
            int64: f.shader_int64,
            float16: f.shader_float16,
            float64: f.shader_float64,
            storage_buffer_8bit: f.storage_buffer8_bit_access,
            uniform_and_storage_buffer_8bit: f.uniform_and_storage_buffer8_bit_access,
            storage_push_constant_8bit: f.storage_push_constant8,
            storage_buffer_16bit: f.storage_buffer16_bit_access,
            uniform_and_storage_buffer_16bit: f.uniform_and_storage_buffer16_bit_access,
            storage_push_constant_16bit: f.storage_push_constant16,
            vulkan_memory_model: f.vulkan_memory_model,
            vulkan_memory_model_device_scope: f.vulkan_memory_model_device_scope,
            buffer_int64_atomics: f.shader_buffer_int64_atomics,
            shared_int64_atomics: f.shader_shared_int64_atomics,
            variable_pointers_storage_buffer: f.variable_pointers_storage_buffer,
            variable_pointers: f.variable_pointers,
            workgroup_memory_explicit_layout: e.khr_workgroup_memory_explicit_layout
                && f.workgroup_memory_explicit_layout,
            storage_image_multisample: f.shader_storage_image_multisample,
            storage_image_extended_formats: f.shader_storage_image_extended_formats,
            image_int64_atomics: e.ext_shader_image_atomic_int64 && f.shader_image_int64_atomics,
            workgroup_memory_explicit_layout_8bit: e.khr_workgroup_memory_explicit_layout
                && f.workgroup_memory_explicit_layout8_bit_access,
            workgroup_memory_explicit_layout_16bit: e.khr_workgroup_memory_explicit_layout
                && f.workgroup_memory_explicit_layout16_bit_access,
            zero_initialize_workgroup_memory: f.shader_zero_initialize_workgroup_memory,
            float_controls: [
                (
                    "shaderSignedZeroInfNanPreserveFloat16",
                    p.shader_signed_zero_inf_nan_preserve_float16,
                ),
                (
                    "shaderSignedZeroInfNanPreserveFloat32",
                    p.shader_signed_zero_inf_nan_preserve_float32,
                ),
                (
                    "shaderSignedZeroInfNanPreserveFloat64",
                    p.shader_signed_zero_inf_nan_preserve_float64,
                ),
                (
                    "shaderDenormPreserveFloat16",
                    p.shader_denorm_preserve_float16,
                ),
                (
                    "shaderDenormPreserveFloat32",
                    p.shader_denorm_preserve_float32,
                ),
                (
                    "shaderDenormPreserveFloat64",
                    p.shader_denorm_preserve_float64,
                ),
                (
                    "shaderDenormFlushToZeroFloat16",
                    p.shader_denorm_flush_to_zero_float16,
                ),
                (
                    "shaderDenormFlushToZeroFloat32",
                    p.shader_denorm_flush_to_zero_float32,
                ),
                (
                    "shaderDenormFlushToZeroFloat64",
                    p.shader_denorm_flush_to_zero_float64,
                ),
                (
                    "shaderRoundingModeRTEFloat16",
                    p.shader_rounding_mode_rte_float16,
                ),
                (
                    "shaderRoundingModeRTEFloat32",
                    p.shader_rounding_mode_rte_float32,
                ),
                (
                    "shaderRoundingModeRTEFloat64",
                    p.shader_rounding_mode_rte_float64,
                ),
                (
                    "shaderRoundingModeRTZFloat16",
                    p.shader_rounding_mode_rtz_float16,
                ),
                (
                    "shaderRoundingModeRTZFloat32",
                    p.shader_rounding_mode_rtz_float32,
                ),
                (
                    "shaderRoundingModeRTZFloat64",
                    p.shader_rounding_mode_rtz_float64,
                ),
            ]
            .into_iter()
            .filter(|(_, on)| on.unwrap_or(false))
            .map(|(n, _)| n)
            .collect(),
            api_version: (pd.api_version().major, pd.api_version().minor),
        }
    }

    /// Subgroup sizes a compute pipeline can require: the default alone without size control,
    /// otherwise every power of two in [min, max].
    pub fn selectable_sizes(&self) -> Vec<u32> {
        if !self.size_control {
            return vec![self.subgroup_size];
        }
        let mut v = Vec::new();
        let mut s = self.min_subgroup_size.max(1);
        while s <= self.max_subgroup_size {
            v.push(s);
            s *= 2;
        }
        v
    }

    /// The `requiredSubgroupSize` a compute pipeline run at subgroup size `size` asks for: none
    /// at the device's default size (such a pipeline needs no subgroup size control), `size`
    /// otherwise (VK_EXT_subgroup_size_control).
    pub fn required_size(&self, size: u32) -> Option<u32> {
        (size != self.subgroup_size).then_some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::Capabilities;

    #[test]
    fn a_pipeline_asks_for_a_subgroup_size_only_where_it_is_not_the_default() {
        let caps = Capabilities {
            subgroup_size: 32,
            min_subgroup_size: 16,
            max_subgroup_size: 64,
            size_control: true,
            ..Default::default()
        };
        assert_eq!(caps.required_size(32), None);
        assert_eq!(caps.required_size(16), Some(16));
        assert_eq!(caps.required_size(64), Some(64));
        assert_eq!(caps.selectable_sizes(), [16, 32, 64]);
        let fixed = Capabilities {
            subgroup_size: 8,
            ..Default::default()
        };
        assert_eq!(fixed.selectable_sizes(), [8]);
        assert_eq!(fixed.required_size(8), None);
    }
}
