//! Known device deviations: mismatches that were investigated and found to be the device's
//! behaviour, not a model bug. A matching failing row is reported as a known deviation (with this
//! explanation) and does not fail the run unless `--strict` is given; anything else still fails.
//! Each entry names the driver, the ops and shapes, what the device does, and where it was seen.

use crate::conform::compare::RowKey;

/// One documented deviation.
#[derive(Clone, Copy, Debug)]
pub struct Known {
    /// substring of the device's driver string
    pub driver: &'static str,
    /// catalogue op names
    pub ops: &'static [&'static str],
    /// does it apply to this row (size, workgroup shape)?
    pub applies: fn(&RowKey) -> bool,
    /// what the device does
    pub what: &'static str,
    /// where and when it was seen
    pub seen: &'static str,
}

/// Every known deviation.
pub const KNOWN: &[Known] = &[Known {
    driver: "llvmpipe",
    ops: &["num_subgroups", "subgroup_id"],
    applies: |k| k.shape[0] % k.size != 0,
    what: "lavapipe runs each x-row of a workgroup whose width is not a multiple of the subgroup \
           size as its own SIMD group (a 3x5x7 workgroup at size 8 runs 35 groups of 3 lanes, as \
           subgroupBallot and subgroupBroadcastFirst show) but numbers gl_SubgroupID as \
           local index / 8 and reports gl_NumSubgroups = 13: several subgroups share one \
           gl_SubgroupID and (gl_SubgroupID, gl_SubgroupInvocationID) pairs repeat. Subgroup \
           operations themselves act on the 3-lane groups consistently and agree with the model.",
    seen: "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6, 2026-11-21",
}];

/// The known deviation that explains a failing row on this driver, if any.
pub fn explain(driver: &str, row: &RowKey) -> Option<&'static Known> {
    KNOWN
        .iter()
        .find(|k| driver.contains(k.driver) && k.ops.contains(&row.op.as_str()) && (k.applies)(row))
}
