//! Known device deviations: mismatches that were investigated and found to be the device's
//! behaviour, not a model bug. A matching failing row is reported as a known deviation (with this
//! explanation) and does not fail the run unless `--strict` is given; anything else still fails.
//! Each entry names the driver, the ops and shapes, what the device does, and where it was seen.

use crate::conform::compare::{RowKey, RowStats};

/// One documented deviation.
#[derive(Clone, Copy, Debug)]
pub struct Known {
    /// substring of the device's driver string
    pub driver: &'static str,
    /// catalogue op names
    pub ops: &'static [&'static str],
    /// does it explain this failing row (its key and counts)?
    pub applies: fn(&RowKey, &RowStats) -> bool,
    /// what the device does
    pub what: &'static str,
    /// where and when it was seen
    pub seen: &'static str,
}

/// Every known deviation.
pub(crate) const KNOWN: &[Known] = &[
    Known {
        driver: "llvmpipe",
        ops: &["num_subgroups", "subgroup_id"],
        applies: |k, _| k.shape[0] % k.size != 0,
        what:
            "lavapipe runs each x-row of a workgroup whose width is not a multiple of the subgroup \
           size as its own SIMD group (a 3x5x7 workgroup at size 8 runs 35 groups of 3 lanes, as \
           subgroupBallot and subgroupBroadcastFirst show) but numbers gl_SubgroupID as \
           local index / 8 and reports gl_NumSubgroups = 13: several subgroups share one \
           gl_SubgroupID and (gl_SubgroupID, gl_SubgroupInvocationID) pairs repeat. Subgroup \
           operations themselves act on the 3-lane groups consistently and agree with the model.",
        seen: "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6, 2026-11-21",
    },
    Known {
        driver: "llvmpipe",
        ops: MIN_MAX,
        // Only rows of f16 types where every failing subgroup had a NaN among its active values.
        applies: |k, r| k.ty.starts_with("f16") && r.failed_with_nan == r.failed,
        what: "lavapipe's float16 subgroup min/max do not skip a NaN operand: the running result \
           becomes NaN and the fold continues from the next value (min over -575.5, NaN, 343.5, \
           -458.25 gives -458.25), where GL_KHR_shader_subgroup (3.8, Issue 5) requires the \
           non-NaN operand to be chosen. float32 and float64 follow the rule.",
        seen: "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6, 2026-11-21",
    },
    Known {
        driver: "NVIDIA",
        ops: MIN_MAX,
        // Only rows of f16 and f64 types where every failing subgroup had a NaN among its values.
        applies: |k, r| {
            (k.ty.starts_with("f16") || k.ty.starts_with("f64")) && r.failed_with_nan == r.failed
        },
        what: "NVIDIA's float16 and float64 subgroup min/max propagate a NaN operand instead of \
           choosing the other value (clustered_min over a cluster of zeros and one NaN gives NaN), \
           where GL_KHR_shader_subgroup (3.8, Issue 5) and SPIR-V OpGroupNonUniformFMin/FMax \
           require the non-NaN operand. float32 follows the rule.",
        seen: "NVIDIA H100 80GB HBM3 and H200, driver 580.159.04, Vulkan 1.4.312, 2026-11-21",
    },
];

/// The min/max family: reductions, scans and clustered.
const MIN_MAX: &[&str] = &[
    "min",
    "max",
    "inclusive_min",
    "inclusive_max",
    "exclusive_min",
    "exclusive_max",
    "clustered_min",
    "clustered_max",
];

/// The known deviation that explains a failing row on this driver, if any.
pub fn explain(driver: &str, row: &RowKey, stats: &RowStats) -> Option<&'static Known> {
    KNOWN.iter().find(|k| {
        driver.contains(k.driver) && k.ops.contains(&row.op.as_str()) && (k.applies)(row, stats)
    })
}
