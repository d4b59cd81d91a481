//! Every worked example in the spec texts, as a test, with its citation.

use crate::support;
use lockstep::model::*;
use support::*;

// GL_KHR_shader_subgroup.txt, 3.8 (clustered operations): size 8, cluster 2,
// [42, 13, -56, 0, 128, -1, 7, 3.5] -> [55, 55, -56, -56, 127, 127, 10.5, 10.5].
#[test]
fn clustered_add_worked_example() {
    let c = call("subgroupClusteredAdd", 8, with_cluster(2));
    let out = eval_f32(&c, 0xff, &[42.0, 13.0, -56.0, 0.0, 128.0, -1.0, 7.0, 3.5]);
    let got: Vec<f32> = out.iter().map(f32_of).collect();
    assert_eq!(got, [55.0, 55.0, -56.0, -56.0, 127.0, 127.0, 10.5, 10.5]);
}

// vk_rotate_proposal.adoc, Problem Statement (and SPV_KHR_subgroup_rotate overview): "a subgroup of
// size 16, a rotation by 2 would, when executed by the invocation identified by id 0, return the
// value from the invocation identified by id 2 … executed by … id 14, … from … id 0".
#[test]
fn rotate_by_two_at_size_sixteen() {
    let c = call("subgroupRotate", 16, with_delta(2));
    let vals: Vec<u32> = (100..116).collect();
    let out = eval_u32(&c, 0xffff, &vals);
    assert_eq!(u32_of(&out[0]), 102);
    assert_eq!(u32_of(&out[14]), 100);
    for (l, o) in out.iter().enumerate() {
        assert_eq!(u32_of(o), 100 + ((l as u32 + 2) % 16));
    }
}

// vk_rotate_proposal.adoc, Problem Statement: "A rotation by (SubgroupSize - N) rotates values 'up' N".
#[test]
fn rotate_by_size_minus_n_rotates_up() {
    let c = call("rotate", 16, with_delta(16 - 3));
    let vals: Vec<u32> = (0..16).collect();
    let out = eval_u32(&c, 0xffff, &vals);
    for l in 0..16u32 {
        assert_eq!(u32_of(&out[l as usize]), (l + 16 - 3) % 16);
    }
}

// GL_KHR_shader_subgroup_rotate.txt, 8.18: "When the addition of gl_SubgroupInvocationID and delta
// results in overflow, its result will be the low-order 32 bits of the correct result".
#[test]
fn rotate_delta_overflow_wraps_at_32_bits() {
    let c = call("rotate", 8, with_delta(u32::MAX)); // id + 2^32 - 1 = id - 1 (mod 2^32)
    let out = eval_u32(&c, 0xff, &[10, 11, 12, 13, 14, 15, 16, 17]);
    assert_eq!(u32_of(&out[0]), 17);
    assert_eq!(u32_of(&out[3]), 12);
}

// vk_rotate_proposal.adoc, Proposal: clustered rotate reads
// (id - id % clusterSize) + ((id % clusterSize + delta) % clusterSize).
#[test]
fn clustered_rotate_stays_within_its_cluster() {
    let c = call(
        "subgroupClusteredRotate",
        16,
        Args {
            delta: Some(LaneArg::Uniform(3)),
            cluster: Some(4),
            ..Args::default()
        },
    );
    let vals: Vec<u32> = (0..16).collect();
    let out = eval_u32(&c, 0xffff, &vals);
    for l in 0..16u32 {
        assert_eq!(u32_of(&out[l as usize]), (l - l % 4) + (l % 4 + 3) % 4);
    }
}

// GL_KHR_shader_subgroup.txt, 8.18: the quad swap diagrams
//   horizontal: a|b c|d -> b|a d|c;  vertical: -> c|d a|b;  diagonal: -> d|c b|a.
#[test]
fn quad_swaps_follow_the_diagrams() {
    let vals = [0xa, 0xb, 0xc, 0xd];
    for (op, want) in [
        ("subgroupQuadSwapHorizontal", [0xb, 0xa, 0xd, 0xc]),
        ("subgroupQuadSwapVertical", [0xc, 0xd, 0xa, 0xb]),
        ("subgroupQuadSwapDiagonal", [0xd, 0xc, 0xb, 0xa]),
    ] {
        let out = eval_u32(&call(op, 4, Args::default()), 0xf, &vals);
        let got: Vec<u32> = out.iter().map(u32_of).collect();
        assert_eq!(got, want, "{op}");
    }
}

// GL_KHR_shader_subgroup.txt, 8.18: subgroupQuadBroadcast returns the value of the invocation in
// the quad whose id % 4 == id argument.
#[test]
fn quad_broadcast_reads_within_each_quad() {
    let vals: Vec<u32> = (0..8).map(|i| 10 * i).collect();
    let out = eval_u32(&call("quad_broadcast", 8, with_id(2)), 0xff, &vals);
    let got: Vec<u32> = out.iter().map(u32_of).collect();
    assert_eq!(got, [20, 20, 20, 20, 60, 60, 60, 60]);
}

// GL_KHR_shader_subgroup.txt, 3.8: the identity table I() for exclusive scans.
#[test]
fn exclusive_scan_of_the_first_active_lane_is_the_identity_of_the_table() {
    let f = |op: &str| {
        f32_of(&eval_f32(&call(op, 4, Args::default()), 0b0110, &[9.0, 5.0, 6.0, 7.0])[1])
    };
    assert_eq!(f("exclusive_add").to_bits(), 0.0f32.to_bits()); // +0.0
    assert_eq!(f("exclusive_mul"), 1.0);
    assert_eq!(f("exclusive_min"), f32::INFINITY);
    assert_eq!(f("exclusive_max"), f32::NEG_INFINITY);
    let i = |op: &str| {
        let v: Vec<[i32; 1]> = vec![[9], [5], [6], [7]];
        let out = evaluate_typed(&call(op, 4, Args::default()), LaneMask(0b0110), &v).unwrap();
        out[1].value().unwrap().component_bits(0) as u32 as i32
    };
    assert_eq!(i("exclusive_min"), i32::MAX); // INT_MAX
    assert_eq!(i("exclusive_max"), i32::MIN); // INT_MIN
    assert_eq!(i("exclusive_and"), !0); // ~0
    assert_eq!(i("exclusive_or"), 0);
    assert_eq!(i("exclusive_xor"), 0);
    let u = |op: &str| u32_of(&eval_u32(&call(op, 4, Args::default()), 0b0110, &[9, 5, 6, 7])[1]);
    assert_eq!(u("exclusive_min"), u32::MAX); // UINT_MAX
    assert_eq!(u("exclusive_max"), 0);
    let b = |op: &str| {
        let v = vec![[false], [false], [true], [true]];
        let out = evaluate_typed(&call(op, 4, Args::default()), LaneMask(0b0110), &v).unwrap();
        bool_of(&out[1])
    };
    assert!(b("exclusive_and")); // true
    assert!(!b("exclusive_or")); // false
    assert!(!b("exclusive_xor")); // false
}

// GL_KHR_shader_subgroup.txt, 3.8: inclusive scan = [x(0), x(0) op x(1), …] and exclusive scan =
// [I(), x(0), x(0) op x(1), …] over the active invocations in increasing id order.
#[test]
fn scans_follow_the_definition_over_active_lanes() {
    let vals = [3, 100, 4, 5, 100, 6];
    let active = 0b101101;
    let inc = eval_u32(
        &call("subgroupInclusiveAdd", 8, Args::default()),
        active,
        &[vals.as_slice(), &[0, 0]].concat(),
    );
    let exc = eval_u32(
        &call("subgroupExclusiveAdd", 8, Args::default()),
        active,
        &[vals.as_slice(), &[0, 0]].concat(),
    );
    assert_eq!([0, 2, 3, 5].map(|l| u32_of(&inc[l])), [3, 7, 12, 18]);
    assert_eq!([0, 2, 3, 5].map(|l| u32_of(&exc[l])), [0, 3, 7, 12]);
    assert_eq!(inc[1], Outcome::Inactive);
}

// GL_KHR_shader_subgroup.txt, 3.8: ballot bit packing — "the first invocation is represented in
// bit 0 of the first vector component"; lane i is bit i%32 of component i/32.
#[test]
fn ballot_packs_lane_i_into_bit_i_mod_32_of_component_i_div_32() {
    let c = call("subgroupBallot", 128, Args::default());
    let vals: Vec<[bool; 1]> = (0..128).map(|l| [l == 0 || l == 33 || l == 127]).collect();
    let out = evaluate_typed(&c, LaneMask(!0), &vals).unwrap();
    let words = out[5].value().unwrap();
    assert_eq!(words.bits(), &[1, 2, 0, 0x8000_0000]);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupBallot: with every active value true the result has the
// bits of exactly the active invocations; with every value false, zero; inactive bits are 0.
#[test]
fn ballot_of_all_true_is_the_active_set_and_of_all_false_is_zero() {
    let c = call("ballot", 16, Args::default());
    let active = 0b1010_0110_1100_0011u128;
    let t = evaluate_typed(&c, LaneMask(active), &[[true]; 16]).unwrap();
    let f = evaluate_typed(&c, LaneMask(active), &[[false]; 16]).unwrap();
    assert_eq!(ballot_of(&t[0]), active);
    assert_eq!(ballot_of(&f[0]), 0);
}

// GL_KHR_shader_subgroup.txt, 7.1: the gl_Subgroup??Mask equations; bits >= size are 0.
#[test]
fn lane_masks_follow_the_table() {
    let n = 8;
    for (op, f) in [
        (
            "gl_SubgroupEqMask",
            (|b: u32, id: u32| b == id) as fn(u32, u32) -> bool,
        ),
        ("gl_SubgroupGeMask", |b, id| b >= id),
        ("gl_SubgroupGtMask", |b, id| b > id),
        ("gl_SubgroupLeMask", |b, id| b <= id),
        ("gl_SubgroupLtMask", |b, id| b < id),
    ] {
        let out = eval_none(&call(op, n, Args::default()), 0xff);
        for id in 0..n as u32 {
            let want: u128 = (0..128)
                .filter(|&b| b < n as u32 && f(b, id))
                .map(|b| 1u128 << b)
                .sum();
            assert_eq!(ballot_of(&out[id as usize]), want, "{op} lane {id}");
        }
    }
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupElect: "The invocation chosen is the active invocation
// with the lowest gl_SubgroupInvocationID".
#[test]
fn elect_chooses_the_lowest_active_lane() {
    let out = eval_none(&call("subgroupElect", 8, Args::default()), 0b1011_0100);
    assert!(bool_of(&out[2]));
    assert!(!bool_of(&out[4]) && !bool_of(&out[5]) && !bool_of(&out[7]));
    assert_eq!(out[0], Outcome::Inactive);
}

// GL_KHR_shader_subgroup.txt, 3.8 and Issue 5: "if for any two values of them is a NaN, the other is chosen".
#[test]
fn min_and_max_choose_the_non_nan_operand() {
    let vals = [f32::NAN, 3.0, f32::NAN, -2.0];
    assert_eq!(
        f32_of(&eval_f32(&call("subgroupMin", 4, Args::default()), 0xf, &vals)[0]),
        -2.0
    );
    assert_eq!(
        f32_of(&eval_f32(&call("subgroupMax", 4, Args::default()), 0xf, &vals)[0]),
        3.0
    );
    let inc = eval_f32(
        &call("subgroupInclusiveMin", 4, Args::default()),
        0xf,
        &vals,
    );
    assert_eq!(f32_of(&inc[1]), 3.0);
}

// GL_KHR_shader_subgroup.txt, 8.18: ballot bit counts and find LSB/MSB use only the low
// gl_SubgroupSize bits ("the bits used to hold the subgroup invocations").
#[test]
fn ballot_bit_ops_ignore_bits_beyond_the_subgroup_size() {
    let b = (1u128 << 100) | (1 << 9) | (1 << 3) | (1 << 1);
    let cnt = eval_none(&call("ballot_bit_count", 16, with_ballot(b)), 0xffff);
    assert_eq!(u32_of(&cnt[0]), 3);
    let inc = eval_none(
        &call("ballot_inclusive_bit_count", 16, with_ballot(b)),
        0xffff,
    );
    let exc = eval_none(
        &call("ballot_exclusive_bit_count", 16, with_ballot(b)),
        0xffff,
    );
    assert_eq!((u32_of(&inc[3]), u32_of(&exc[3])), (2, 1));
    assert_eq!(
        u32_of(&eval_none(&call("ballot_find_msb", 16, with_ballot(b)), 0xffff)[0]),
        9
    );
    assert_eq!(
        u32_of(&eval_none(&call("ballot_find_lsb", 16, with_ballot(b)), 0xffff)[0]),
        1
    );
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupInverseBallot: true when the bit at the invocation's own id is set.
#[test]
fn inverse_ballot_reads_the_own_bit() {
    let out = eval_none(&call("inverse_ballot", 8, with_ballot(0b1010_0001)), 0xff);
    let got: Vec<bool> = out.iter().map(bool_of).collect();
    assert_eq!(got, [true, false, false, false, false, true, false, true]);
}

// GL_KHR_shader_subgroup.txt, 3.8: "In a compute shader, invocations may be inactive within a
// subgroup if the local workgroup size is not a multiple of the subgroup size" — 3x5x7 = 105
// invocations in subgroups of 8: 14 subgroups, the last with one active lane.
#[test]
fn a_partial_last_subgroup_has_inactive_upper_lanes() {
    let w = WorkgroupLayout::new(
        WorkgroupShape::new(3, 5, 7).unwrap(),
        size(8),
        LaneOrder::ROW_MAJOR,
    )
    .unwrap();
    assert_eq!(w.num_subgroups(), 14);
    assert_eq!(w.active(13), LaneMask(1));
    assert_eq!(w.active(12), LaneMask(0xff));
    // gl_SubgroupID ranges over 0..gl_NumSubgroups (GL_KHR_shader_subgroup.txt, 7.1).
    assert!(w.placements().iter().all(|p| p.subgroup < 14 && p.lane < 8));
}

// GL_KHR_shader_subgroup.txt, 7.1: "gl_SubgroupSize ... its value is always a power of 2. The
// maximum gl_SubgroupSize supported ... is 128."
#[test]
fn subgroup_sizes_are_powers_of_two_up_to_128() {
    for n in 0..300u64 {
        assert_eq!(
            SubgroupSize::new(n).is_ok(),
            n.is_power_of_two() && n <= 128,
            "{n}"
        );
    }
}
