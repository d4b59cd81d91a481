//! `OpInfo::tangled`: does an operation's result depend on which invocations execute it together?
//!
//! One test per operation, named after it, with the sentence of the spec that decides it. Each test
//! checks the catalogue's answer and then the model's behaviour behind it: at subgroup size 8, lane 3
//! is evaluated under every active set that contains it (128 sets). A tangled operation must give
//! lane 3 a different outcome under some of them; an untangled one the same outcome under all.

use lockstep::model::*;

/// The lane whose result is watched (not lane 0, so that "the lowest active lane" can change).
const LANE: u32 = 3;

/// For each of two sets of lane values, lane 3's outcomes under every active set that contains
/// lane 3 (128 sets), for `name` with fixed arguments.
fn outcomes_of_lane_3(name: &str) -> Vec<Vec<Outcome>> {
    let info = lookup(name).unwrap();
    let size = SubgroupSize::new(8).unwrap();
    let src = ArgSources {
        uniform: 1,
        per_lane: LaneArg::Uniform(1),
        cluster: 4,
        ballot: Ballot(0b1011_0110),
    };
    let call = OpCall::new(info, size, Args::from_sources(info, &src)).unwrap();
    // Values in no order (so that a minimum or maximum can come from any lane), and bools both
    // ways round (so that `all` and `any` can go either way at lane 3).
    let value_sets: Vec<Vec<Value>> = if !info.has_value() {
        vec![Vec::new()]
    } else if info.accepts(ValueType::U32) {
        [[5, 9, 2, 7, 1, 8, 3, 6], [4, 0, 6, 1, 9, 3, 7, 2]]
            .iter()
            .map(|v| v.iter().map(|&x| Value::u32(x)).collect())
            .collect()
    } else {
        [0, 1]
            .iter()
            .map(|&k| (0..8).map(|l| Value::bool(l % 2 == k)).collect())
            .collect()
    };
    value_sets
        .iter()
        .map(|values| {
            (0u128..256)
                .filter(|m| m >> LANE & 1 == 1)
                .map(|m| evaluate(&call, LaneMask(m), values).unwrap()[LANE as usize])
                .collect()
        })
        .collect()
}

/// Checks the catalogue's answer and the model's behaviour for a subgroup-level operation.
fn check(name: &str, tangled: bool) {
    assert_eq!(lookup(name).unwrap().tangled(), tangled, "{name}");
    let varies = outcomes_of_lane_3(name)
        .iter()
        .any(|seen| seen.iter().any(|o| *o != seen[0]));
    assert_eq!(
        varies,
        tangled,
        "{name}: lane 3's outcome {} with the active set",
        if varies { "changes" } else { "does not change" }
    );
}

/// Names every test below, so that a new catalogue operation without a test is caught.
macro_rules! tangle_tests {
    ($($test:ident: $name:literal => $tangled:literal;)*) => {
        $(#[test]
        fn $test() {
            check($name, $tangled);
        })*
        const COVERED: &[&str] = &[$($name),*];
    };
}

tangle_tests! {
    // GL_KHR_shader_subgroup.txt, 8.18, subgroupElect: "returns true for exactly one invocation out
    // of the set of active invocations ... the active invocation with the lowest gl_SubgroupInvocationID".
    // subgroupAll / subgroupAny / subgroupAllEqual: "for all active invocations", "for any active
    // invocation", "for all active invocations is equal".
    elect_depends_on_the_active_set: "elect" => true;
    all_depends_on_the_active_set: "all" => true;
    any_depends_on_the_active_set: "any" => true;
    all_equal_depends_on_the_active_set: "all_equal" => true;

    // 7.1: gl_SubgroupSize "is the number of invocations within a subgroup", gl_SubgroupInvocationID
    // "the index of an invocation within a subgroup", and the gl_Subgroup??Mask bits are given by
    // "bit index == / >= / > / <= / < gl_SubgroupInvocationID": none names the active invocations.
    subgroup_size_is_the_same_whoever_is_active: "subgroup_size" => false;
    invocation_id_is_the_same_whoever_is_active: "invocation_id" => false;
    eq_mask_is_the_same_whoever_is_active: "eq_mask" => false;
    ge_mask_is_the_same_whoever_is_active: "ge_mask" => false;
    gt_mask_is_the_same_whoever_is_active: "gt_mask" => false;
    le_mask_is_the_same_whoever_is_active: "le_mask" => false;
    lt_mask_is_the_same_whoever_is_active: "lt_mask" => false;

    // 8.18, subgroupBallot: "Bits corresponding to inactive invocations are set to zero".
    // subgroupInverseBallot: "true if the bit in <value> that corresponds to the current invocation's
    // gl_SubgroupInvocationID in <value> is true". subgroupBallotBitExtract: "true if the bit in <value>
    // that corresponds to <index> ... is 1". subgroupBallot{,Inclusive,Exclusive}BitCount: "the number
    // of bits that are set to 1 in the bits used to hold the subgroup invocations of <value>" (for
    // invocations with a lower, or equal to / lower, gl_SubgroupInvocationID). subgroupBallotFindLSB/MSB:
    // "the bit number of the least / most significant bit set to 1 ... of <value>". Only `ballot` reads
    // which invocations are active; the others read their operand.
    ballot_depends_on_the_active_set: "ballot" => true;
    inverse_ballot_reads_only_its_operand: "inverse_ballot" => false;
    ballot_bit_extract_reads_only_its_operand: "ballot_bit_extract" => false;
    ballot_bit_count_reads_only_its_operand: "ballot_bit_count" => false;
    ballot_inclusive_bit_count_reads_only_its_operand: "ballot_inclusive_bit_count" => false;
    ballot_exclusive_bit_count_reads_only_its_operand: "ballot_exclusive_bit_count" => false;
    ballot_find_lsb_reads_only_its_operand: "ballot_find_lsb" => false;
    ballot_find_msb_reads_only_its_operand: "ballot_find_msb" => false;

    // 8.18, subgroupBroadcast: "If the <id> is an inactive invocation ... an undefined value is
    // returned"; subgroupBroadcastFirst: "the <value> from the active invocation with the lowest
    // gl_SubgroupInvocationID"; subgroupShuffle, ShuffleXor, ShuffleUp, ShuffleDown: "If the <id> /
    // calculated index / ... is an inactive invocation ... an undefined value is returned".
    broadcast_depends_on_the_active_set: "broadcast" => true;
    broadcast_first_depends_on_the_active_set: "broadcast_first" => true;
    shuffle_depends_on_the_active_set: "shuffle" => true;
    shuffle_xor_depends_on_the_active_set: "shuffle_xor" => true;
    shuffle_up_depends_on_the_active_set: "shuffle_up" => true;
    shuffle_down_depends_on_the_active_set: "shuffle_down" => true;

    // 8.18, the arithmetic functions: "the summation / multiplication / minimum / maximum / AND / OR /
    // XOR of all active invocation-provided <value>s" (inclusive and exclusive: of the active
    // invocations with a lower, or equal to / lower, id).
    add_depends_on_the_active_set: "add" => true;
    mul_depends_on_the_active_set: "mul" => true;
    min_depends_on_the_active_set: "min" => true;
    max_depends_on_the_active_set: "max" => true;
    and_depends_on_the_active_set: "and" => true;
    or_depends_on_the_active_set: "or" => true;
    xor_depends_on_the_active_set: "xor" => true;
    inclusive_add_depends_on_the_active_set: "inclusive_add" => true;
    inclusive_mul_depends_on_the_active_set: "inclusive_mul" => true;
    inclusive_min_depends_on_the_active_set: "inclusive_min" => true;
    inclusive_max_depends_on_the_active_set: "inclusive_max" => true;
    inclusive_and_depends_on_the_active_set: "inclusive_and" => true;
    inclusive_or_depends_on_the_active_set: "inclusive_or" => true;
    inclusive_xor_depends_on_the_active_set: "inclusive_xor" => true;
    exclusive_add_depends_on_the_active_set: "exclusive_add" => true;
    exclusive_mul_depends_on_the_active_set: "exclusive_mul" => true;
    exclusive_min_depends_on_the_active_set: "exclusive_min" => true;
    exclusive_max_depends_on_the_active_set: "exclusive_max" => true;
    exclusive_and_depends_on_the_active_set: "exclusive_and" => true;
    exclusive_or_depends_on_the_active_set: "exclusive_or" => true;
    exclusive_xor_depends_on_the_active_set: "exclusive_xor" => true;

    // 8.18, the clustered functions: "of all active invocation-provided <value>s within a cluster".
    clustered_add_depends_on_the_active_set: "clustered_add" => true;
    clustered_mul_depends_on_the_active_set: "clustered_mul" => true;
    clustered_min_depends_on_the_active_set: "clustered_min" => true;
    clustered_max_depends_on_the_active_set: "clustered_max" => true;
    clustered_and_depends_on_the_active_set: "clustered_and" => true;
    clustered_or_depends_on_the_active_set: "clustered_or" => true;
    clustered_xor_depends_on_the_active_set: "clustered_xor" => true;

    // 8.18, subgroupQuadBroadcast: "If the <id> is an inactive invocation ... an undefined value is
    // returned"; the quad swaps: SPIR-V OpGroupNonUniformQuadSwap, "If an active invocation reads
    // value from an inactive invocation, the resulting value is undefined".
    quad_broadcast_depends_on_the_active_set: "quad_broadcast" => true;
    quad_swap_horizontal_depends_on_the_active_set: "quad_swap_horizontal" => true;
    quad_swap_vertical_depends_on_the_active_set: "quad_swap_vertical" => true;
    quad_swap_diagonal_depends_on_the_active_set: "quad_swap_diagonal" => true;

    // GL_KHR_shader_subgroup_rotate.txt, 8.18: subgroupRotate / subgroupClusteredRotate return the
    // value of another invocation; SPV_KHR_subgroup_rotate: "If the selected lane is inactive, the
    // value is undefined".
    rotate_depends_on_the_active_set: "rotate" => true;
    clustered_rotate_depends_on_the_active_set: "clustered_rotate" => true;
}

// 7.1: gl_NumSubgroups is "the number of subgroups within the local workgroup" and gl_SubgroupID
// "the index of the subgroup within the local workgroup": properties of the workgroup and of
// where an invocation was placed, not of which invocations are active. (The model evaluates them
// per workgroup, from the shape and lane order alone: `WorkgroupLayout` takes no active set.)
#[test]
fn the_workgroup_built_ins_are_the_same_whoever_is_active() {
    for name in ["num_subgroups", "subgroup_id"] {
        let info = lookup(name).unwrap();
        assert!(info.is_workgroup_level() && !info.tangled(), "{name}");
    }
}

#[test]
fn every_operation_has_a_tangle_test() {
    for op in catalogue() {
        let tested = COVERED.contains(&op.name.as_str())
            || ["num_subgroups", "subgroup_id"].contains(&op.name.as_str());
        assert!(tested, "{} has no test in tests/tangled.rs", op.name);
    }
}
