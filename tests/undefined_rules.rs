//! One test per undefined rule in the spec texts (specs/RULES.md lists them), plus the
//! invalid parameters that are rejected at construction.

use crate::support;
use lockstep::model::*;
use support::*;

const V8: [u32; 8] = [10, 11, 12, 13, 14, 15, 16, 17];

// GL_KHR_shader_subgroup.txt, 8.18 subgroupBroadcast: "If the id is an inactive invocation … an undefined value".
#[test]
fn broadcast_from_an_inactive_lane_is_undefined() {
    let out = eval_u32(&call("broadcast", 8, with_id(3)), 0b1111_0111, &V8);
    assert!(out
        .iter()
        .enumerate()
        .all(|(l, o)| l == 3 || reason(o) == Reason::SourceInactive { source: 3 }));
    assert_eq!(out[3], Outcome::Inactive);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupBroadcast: "… or is greater than or equal to gl_SubgroupSize".
#[test]
fn broadcast_past_the_subgroup_size_is_undefined() {
    let out = eval_u32(&call("broadcast", 8, with_id(8)), 0xff, &V8);
    assert_eq!(
        reason(&out[0]),
        Reason::SourceOutOfRange { source: 8, size: 8 }
    );
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffle: undefined if the id is inactive.
#[test]
fn shuffle_from_an_inactive_lane_is_undefined() {
    let args = Args {
        id: Some(LaneArg::PerLane(vec![1, 0, 3, 2, 5, 4, 7, 6])),
        ..Args::default()
    };
    let out = eval_u32(&call("shuffle", 8, args), 0b1111_1110, &V8);
    assert_eq!(reason(&out[1]), Reason::SourceInactive { source: 0 });
    assert_eq!(u32_of(&out[2]), 13);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffle: undefined if id >= gl_SubgroupSize.
#[test]
fn shuffle_past_the_subgroup_size_is_undefined() {
    let out = eval_u32(&call("shuffle", 8, with_id(1000)), 0xff, &V8);
    assert_eq!(
        reason(&out[5]),
        Reason::SourceOutOfRange {
            source: 1000,
            size: 8
        }
    );
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleXor: "If the calculated index is an inactive
// invocation or is greater than or equal to gl_SubgroupSize, an undefined value is returned".
#[test]
fn shuffle_xor_to_a_lane_past_the_size_or_inactive_is_undefined() {
    let args = Args {
        mask: Some(LaneArg::Uniform(8)),
        ..Args::default()
    };
    let out = eval_u32(&call("shuffle_xor", 8, args), 0xff, &V8);
    assert_eq!(
        reason(&out[2]),
        Reason::SourceOutOfRange {
            source: 10,
            size: 8
        }
    );
    let args = Args {
        mask: Some(LaneArg::Uniform(1)),
        ..Args::default()
    };
    let out = eval_u32(&call("shuffle_xor", 8, args), 0b1111_1101, &V8);
    assert_eq!(reason(&out[0]), Reason::SourceInactive { source: 1 });
    assert_eq!(u32_of(&out[3]), 12);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleUp: "If gl_SubgroupInvocationID minus delta … is
// less than zero, an undefined value is returned".
#[test]
fn shuffle_up_past_the_first_lane_is_undefined() {
    let out = eval_u32(&call("shuffle_up", 8, with_delta(3)), 0xff, &V8);
    assert_eq!(reason(&out[1]), Reason::DeltaExceedsId { delta: 3, id: 1 });
    assert_eq!(u32_of(&out[3]), 10);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleUp: "… is an inactive invocation … undefined".
#[test]
fn shuffle_up_from_an_inactive_lane_is_undefined() {
    let out = eval_u32(&call("shuffle_up", 8, with_delta(1)), 0b1111_1011, &V8);
    assert_eq!(reason(&out[3]), Reason::SourceInactive { source: 2 });
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleDown: "If gl_SubgroupInvocationID plus delta …
// is greater than or equal to gl_SubgroupSize, an undefined value is returned".
#[test]
fn shuffle_down_past_the_last_lane_is_undefined() {
    let out = eval_u32(&call("shuffle_down", 8, with_delta(2)), 0xff, &V8);
    assert_eq!(
        reason(&out[6]),
        Reason::SourceOutOfRange { source: 8, size: 8 }
    );
    assert_eq!(u32_of(&out[5]), 17);
    // id + delta is computed without 32-bit overflow.
    let out = eval_u32(&call("shuffle_down", 8, with_delta(u32::MAX)), 0xff, &V8);
    assert_eq!(
        reason(&out[1]),
        Reason::SourceOutOfRange {
            source: u32::MAX as u64 + 1,
            size: 8
        }
    );
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleDown: "… is an inactive invocation … undefined".
#[test]
fn shuffle_down_from_an_inactive_lane_is_undefined() {
    let out = eval_u32(&call("shuffle_down", 8, with_delta(1)), 0b0111_1111, &V8);
    assert_eq!(reason(&out[6]), Reason::SourceInactive { source: 7 });
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupQuadBroadcast: "If the id is an inactive invocation … undefined".
#[test]
fn quad_broadcast_from_an_inactive_lane_is_undefined() {
    let out = eval_u32(&call("quad_broadcast", 8, with_id(1)), 0b1111_1101, &V8);
    assert_eq!(reason(&out[0]), Reason::SourceInactive { source: 1 });
    assert_eq!(u32_of(&out[4]), 15);
}

// specs/RULES.md (Quad): reading an inactive lane through a quad swap is undefined.
#[test]
fn quad_swaps_from_an_inactive_lane_are_undefined() {
    for (op, partner) in [
        ("quad_swap_horizontal", 1),
        ("quad_swap_vertical", 2),
        ("quad_swap_diagonal", 3),
    ] {
        let out = eval_u32(
            &call(op, 4, Args::default()),
            0b1111 & !(1 << partner),
            &V8[..4],
        );
        assert_eq!(
            reason(&out[0]),
            Reason::SourceInactive { source: partner },
            "{op}"
        );
    }
}

// A quad needs lanes (id & ~3) + 0..3; in a subgroup of size 1 or 2 the partner lane does not exist.
#[test]
fn quad_partners_beyond_a_tiny_subgroup_are_undefined() {
    let out = eval_u32(
        &call("quad_swap_vertical", 2, Args::default()),
        0b11,
        &[1, 2],
    );
    assert_eq!(
        reason(&out[0]),
        Reason::SourceOutOfRange { source: 2, size: 2 }
    );
    let out = eval_u32(
        &call("quad_swap_horizontal", 2, Args::default()),
        0b11,
        &[1, 2],
    );
    assert_eq!(u32_of(&out[0]), 2);
}

// GL_KHR_shader_subgroup_rotate.txt, 8.18: "If the selected invocation is inactive, an undefined value is returned."
#[test]
fn rotate_from_an_inactive_lane_is_undefined() {
    let out = eval_u32(&call("rotate", 8, with_delta(1)), 0b1111_1110, &V8);
    assert_eq!(reason(&out[7]), Reason::SourceInactive { source: 0 });
    let c = call(
        "clustered_rotate",
        8,
        Args {
            delta: Some(LaneArg::Uniform(1)),
            cluster: Some(4),
            ..Args::default()
        },
    );
    let out = eval_u32(&c, 0b1110_1111, &V8);
    assert_eq!(reason(&out[7]), Reason::SourceInactive { source: 4 });
    assert_eq!(u32_of(&out[3]), 10);
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupBallotFindLSB/MSB: "If value is 0, an undefined value is returned".
#[test]
fn find_lsb_and_msb_of_an_empty_ballot_are_undefined() {
    for op in ["ballot_find_lsb", "ballot_find_msb"] {
        let out = eval_none(&call(op, 8, with_ballot(0)), 0xff);
        assert_eq!(reason(&out[0]), Reason::NoBitSet, "{op}");
        // Bits beyond gl_SubgroupSize are ignored, so a ballot with only those bits set is empty too.
        let out = eval_none(&call(op, 8, with_ballot(1 << 9)), 0xff);
        assert_eq!(reason(&out[0]), Reason::NoBitSet, "{op}");
    }
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupBallotBitExtract: "If index is greater than or equal to
// gl_SubgroupSize, an undefined result is returned".
#[test]
fn ballot_bit_extract_past_the_size_is_undefined() {
    let args = Args {
        ballot: Some(Ballot(!0)),
        index: Some(LaneArg::Uniform(8)),
        ..Args::default()
    };
    let out = eval_none(&call("ballot_bit_extract", 8, args), 0xff);
    assert_eq!(
        reason(&out[0]),
        Reason::IndexOutOfRange { index: 8, size: 8 }
    );
}

// GL_KHR_shader_subgroup.txt, 3.8: "If all values that are used by the current invocation are NaN,
// then the result is undefined" — for reductions, inclusive and exclusive prefixes and clusters.
#[test]
fn min_and_max_over_only_nans_are_undefined() {
    let n = f32::NAN;
    let out = eval_f32(&call("max", 4, Args::default()), 0b1101, &[n, 1.0, n, n]);
    assert_eq!(reason(&out[0]), Reason::AllNaN { component: 0 });
    // The one non-NaN value sits in an inactive lane: it is not "used", so the result is undefined.
    let out = eval_f32(&call("min", 4, Args::default()), 0b1101, &[n, 1.0, n, n]);
    assert_eq!(reason(&out[0]), Reason::AllNaN { component: 0 });
    let out = eval_f32(&call("min", 4, Args::default()), 0b1111, &[n, 1.0, n, n]);
    assert_eq!(f32_of(&out[0]), 1.0);
    let inc = eval_f32(
        &call("inclusive_min", 4, Args::default()),
        0xf,
        &[n, n, 2.0, n],
    );
    assert_eq!(reason(&inc[1]), Reason::AllNaN { component: 0 });
    assert_eq!(f32_of(&inc[3]), 2.0);
    let exc = eval_f32(
        &call("exclusive_max", 4, Args::default()),
        0xf,
        &[n, n, 2.0, n],
    );
    assert_eq!(f32_of(&exc[0]), f32::NEG_INFINITY); // identity, defined
    assert_eq!(reason(&exc[2]), Reason::AllNaN { component: 0 });
    let cl = eval_f32(
        &call("clustered_min", 4, with_cluster(2)),
        0xf,
        &[n, n, 2.0, n],
    );
    assert_eq!(reason(&cl[0]), Reason::AllNaN { component: 0 });
    assert_eq!(f32_of(&cl[3]), 2.0);
    // Vectors are component-wise: one all-NaN component makes the lane undefined and names it.
    let v = vec![[1.0f32, n], [2.0, n]];
    let out = evaluate_typed(&call("max", 2, Args::default()), LaneMask(0b11), &v).unwrap();
    assert_eq!(reason(&out[0]), Reason::AllNaN { component: 1 });
}

// subgroupAllEqual over floats: SPIR-V does not say whether OpGroupNonUniformAllEqual uses ordered,
// unordered or bitwise equality. With a NaN present they disagree (unordered: NaN equals anything —
// lavapipe answers true for [1, NaN, 1, 1]); with +0.0 and -0.0 numeric and bitwise disagree. The
// model reports undefined there, and a defined answer everywhere else.
#[test]
fn all_equal_with_nans_or_signed_zeros_is_undefined() {
    let c = call("all_equal", 4, Args::default());
    let out = evaluate_typed(&c, LaneMask(0xf), &[[0.0f32], [-0.0], [0.0], [0.0]]).unwrap();
    assert_eq!(reason(&out[0]), Reason::AllEqualSignedZeros);
    let out = evaluate_typed(&c, LaneMask(0xf), &[[f32::NAN]; 4]).unwrap();
    assert_eq!(reason(&out[0]), Reason::AllEqualWithNaN);
    // A NaN next to other numbers: unordered equality says equal, ordered and bitwise say not.
    let out = evaluate_typed(&c, LaneMask(0xf), &[[f32::NAN], [1.0], [1.0], [1.0]]).unwrap();
    assert_eq!(reason(&out[0]), Reason::AllEqualWithNaN);
    // Without NaN or signed zeros the answer is defined, e.g. false for different numbers…
    let out = evaluate_typed(&c, LaneMask(0xf), &[[2.0f32], [1.0], [1.0], [1.0]]).unwrap();
    assert!(!bool_of(&out[0]));
    // …and a NaN in an inactive lane does not count.
    let out = evaluate_typed(&c, LaneMask(0b1110), &[[f32::NAN], [1.0], [1.0], [1.0]]).unwrap();
    assert!(bool_of(&out[1]));
}

// Vectors: a NaN in one component does not make the answer undefined when another component, with
// no NaN, already differs between lanes — the vectors are unequal under every reading (found by the
// `catalogue` fuzz target: all_equal on f32x3 with a NaN in component 2 and different x values).
#[test]
fn all_equal_on_vectors_is_false_when_a_nan_free_component_differs() {
    let c = call("all_equal", 4, Args::default());
    let n = f32::NAN;
    let v = [
        [1.0f32, 0.0, n],
        [2.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
    ];
    let out = evaluate_typed(&c, LaneMask(0xf), &v).unwrap();
    assert!(out.iter().all(|o| !bool_of(o)), "{out:?}");
    // The differing component itself holds the NaN: the readings disagree again.
    let v = [[n, 0.0], [2.0, 0.0], [1.0, 0.0], [1.0, 0.0]];
    let out = evaluate_typed(&c, LaneMask(0xf), &v).unwrap();
    assert_eq!(reason(&out[0]), Reason::AllEqualWithNaN);
    // Signed zeros in one component, a plain difference in another: false.
    let v = [[0.0f32, 1.0], [-0.0, 2.0], [0.0, 1.0], [0.0, 1.0]];
    let out = evaluate_typed(&c, LaneMask(0xf), &v).unwrap();
    assert!(!bool_of(&out[0]));
}

// GL_KHR_shader_subgroup.txt, 3.8 (rev. 4): a cluster size greater than gl_SubgroupSize is undefined
// behaviour; clusterSize must be a power of 2 and at least 1 — rejected at construction.
#[test]
fn invalid_cluster_sizes_are_rejected_at_construction() {
    for (c, n) in [(16, 8), (3, 8), (0, 8)] {
        let e =
            OpCall::new(lookup("clustered_add").unwrap(), size(n), with_cluster(c)).unwrap_err();
        assert!(matches!(e, ModelError::InvalidClusterSize { .. }), "{e}");
    }
}

// GL_KHR_shader_subgroup.txt, 8.18 subgroupQuadBroadcast: id must be an integral constant (SPIR-V
// <= 1.4) and a quad has 4 invocations — index 4 and above is rejected.
#[test]
fn quad_index_four_is_rejected_at_construction() {
    let e = OpCall::new(lookup("quad_broadcast").unwrap(), size(8), with_id(4)).unwrap_err();
    assert_eq!(e, ModelError::InvalidQuadIndex(4));
}

// GL_KHR_shader_subgroup.txt, 8.18: subgroupBroadcast's id must be constant / dynamically uniform;
// GL_KHR_shader_subgroup_rotate.txt: delta must be dynamically uniform. Per-lane values are rejected.
#[test]
fn per_lane_values_for_uniform_arguments_are_rejected() {
    let per_lane = Some(LaneArg::PerLane((0..8).collect()));
    let e = OpCall::new(
        lookup("broadcast").unwrap(),
        size(8),
        Args {
            id: per_lane.clone(),
            ..Args::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, ModelError::NotUniform { arg: "id", .. }));
    let e = OpCall::new(
        lookup("rotate").unwrap(),
        size(8),
        Args {
            delta: per_lane,
            ..Args::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, ModelError::NotUniform { arg: "delta", .. }));
}

// Active masks name lanes of the subgroup only.
#[test]
fn active_masks_beyond_the_size_are_rejected() {
    let e = evaluate_typed(
        &call("broadcast_first", 4, Args::default()),
        LaneMask(0x10),
        &[[1u32]; 4],
    )
    .unwrap_err();
    assert!(matches!(e, ModelError::MaskBeyondSize { .. }));
}
