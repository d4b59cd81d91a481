//! Rules of the model's catalogue and call checking that the mutation run (`cargo mutants` on
//! `src/model`, docs/mutation-testing.md) found unchecked outside the doc examples: each test is
//! named after the rule it holds, with the rule's source.

use crate::support;
use lockstep::model::*;
use support::*;

// An op takes exactly the arguments of its GLSL built-in (GL_KHR_shader_subgroup.txt, 8.18: e.g.
// `subgroupElect()` has none, `subgroupShuffle(value, id)` an id): an argument the built-in does not
// have is refused, one per kind of argument.
#[test]
fn an_argument_the_builtin_does_not_take_is_refused() {
    let s = size(8);
    let elect = lookup("elect").unwrap();
    let given = [
        (
            "id",
            Args {
                id: Some(LaneArg::Uniform(0)),
                ..Args::default()
            },
        ),
        (
            "mask",
            Args {
                mask: Some(LaneArg::Uniform(0)),
                ..Args::default()
            },
        ),
        (
            "delta",
            Args {
                delta: Some(LaneArg::Uniform(1)),
                ..Args::default()
            },
        ),
        (
            "index",
            Args {
                index: Some(LaneArg::Uniform(0)),
                ..Args::default()
            },
        ),
        (
            "cluster",
            Args {
                cluster: Some(2),
                ..Args::default()
            },
        ),
        (
            "ballot",
            Args {
                ballot: Some(Ballot(1)),
                ..Args::default()
            },
        ),
    ];
    for (name, args) in given {
        match OpCall::new(elect, s, args) {
            Err(ModelError::UnexpectedArgument { op, arg }) => {
                assert_eq!(op, "elect");
                assert_eq!(arg, name);
            }
            other => panic!("elect with a {name}: {other:?}"),
        }
    }
    // The same arguments where the built-in has them are accepted.
    assert!(OpCall::new(lookup("shuffle").unwrap(), s, with_id(1)).is_ok());
    assert!(OpCall::new(lookup("shuffle_up").unwrap(), s, with_delta(1)).is_ok());
    assert!(OpCall::new(lookup("clustered_add").unwrap(), s, with_cluster(2)).is_ok());
    assert!(OpCall::new(lookup("inverse_ballot").unwrap(), s, with_ballot(1)).is_ok());
}

// `OpCall::set_lane_arg` replaces the call's lane argument (the id of a shuffle here), so that the
// next evaluation reads the new lanes: subgroupShuffle returns the value of the invocation whose
// id is `id` (GL_KHR_shader_subgroup.txt, 8.18).
#[test]
fn a_new_lane_argument_changes_which_lanes_are_read() {
    let s = size(4);
    let mut c = OpCall::new(
        lookup("shuffle").unwrap(),
        s,
        Args {
            id: Some(LaneArg::PerLane(vec![3, 2, 1, 0])),
            ..Args::default()
        },
    )
    .unwrap();
    let vals = [10u32, 11, 12, 13];
    let got: Vec<u32> = eval_u32(&c, 0xf, &vals).iter().map(u32_of).collect();
    assert_eq!(got, [13, 12, 11, 10]);
    c.set_lane_arg(LaneArg::PerLane(vec![1, 1, 2, 2])).unwrap();
    let got: Vec<u32> = eval_u32(&c, 0xf, &vals).iter().map(u32_of).collect();
    assert_eq!(got, [11, 11, 12, 12]);
    c.set_lane_arg(LaneArg::Uniform(3)).unwrap();
    let got: Vec<u32> = eval_u32(&c, 0xf, &vals).iter().map(u32_of).collect();
    assert_eq!(got, [13; 4]);
}

// Only ops with a lane argument (id, mask, delta, index, quad index) take one: a clustered
// reduction's cluster size is a constant of the call, not a lane argument (GL_KHR_shader_subgroup.txt,
// 8.18: "clusterSize must be a compile-time constant"), and elect has no argument at all.
#[test]
fn only_ops_with_a_lane_argument_take_a_new_one() {
    let s = size(8);
    let mut clustered = OpCall::new(lookup("clustered_add").unwrap(), s, with_cluster(2)).unwrap();
    assert!(matches!(
        clustered.set_lane_arg(LaneArg::Uniform(4)),
        Err(ModelError::UnexpectedArgument { .. })
    ));
    let mut elect = OpCall::plain(Op::Elect, s).unwrap();
    assert!(matches!(
        elect.set_lane_arg(LaneArg::Uniform(1)),
        Err(ModelError::UnexpectedArgument { .. })
    ));
    for (name, args) in [
        ("shuffle", with_id(0)),
        (
            "shuffle_xor",
            Args {
                mask: Some(LaneArg::Uniform(1)),
                ..Args::default()
            },
        ),
        ("shuffle_up", with_delta(1)),
        ("rotate", with_delta(1)),
        ("broadcast", with_id(0)),
    ] {
        let mut c = OpCall::new(lookup(name).unwrap(), s, args).unwrap();
        assert!(c.set_lane_arg(LaneArg::Uniform(2)).is_ok(), "{name}");
        assert_eq!(c.lane_arg(), &LaneArg::Uniform(2), "{name}");
    }
    // The id of a broadcast must be dynamically uniform (GL_KHR_shader_subgroup.txt, 8.18:
    // "id must be dynamically uniform within the subgroup"): a per-lane one is refused.
    let mut b = OpCall::new(lookup("broadcast").unwrap(), s, with_id(0)).unwrap();
    assert!(matches!(
        b.set_lane_arg(LaneArg::PerLane(vec![0; 8])),
        Err(ModelError::NotUniform { .. })
    ));
}

// How a device result is compared (docs/conformance.md, "The float add/mul bound" and the table
// above it): float add and mul — reductions, both scans and clustered — within the bound, because
// GL_KHR_shader_subgroup 8.18 leaves the method implementation defined; float min and max as
// numbers (+0 and −0 both correct, issue 5 of the extension: NaN operands skipped); every other
// result, and every integer one, bit for bit.
#[test]
fn float_add_and_mul_are_compared_within_a_bound_min_max_as_numbers_the_rest_bit_for_bit() {
    let f32t: ValueType = "f32".parse().unwrap();
    let f64t: ValueType = "f64".parse().unwrap();
    let vec2: ValueType = "vec2".parse().unwrap();
    for prefix in ["", "inclusive_", "exclusive_", "clustered_"] {
        for (op, want) in [
            ("add", Exactness::Tolerance),
            ("mul", Exactness::Tolerance),
            ("min", Exactness::MinMaxFloat),
            ("max", Exactness::MinMaxFloat),
        ] {
            let info = lookup(&format!("{prefix}{op}")).unwrap();
            for t in [f32t, f64t, vec2] {
                assert_eq!(info.exactness(Some(t)), want, "{prefix}{op} on {t:?}");
            }
            for t in [ValueType::U32, "i32".parse().unwrap()] {
                assert_eq!(
                    info.exactness(Some(t)),
                    Exactness::Bits,
                    "{prefix}{op} on {t:?}"
                );
            }
        }
    }
    for op in [
        "shuffle",
        "broadcast",
        "rotate",
        "quad_swap_horizontal",
        "and",
    ] {
        let info = lookup(op).unwrap();
        let t = if op == "and" { ValueType::U32 } else { f32t };
        assert_eq!(info.exactness(Some(t)), Exactness::Bits, "{op}");
    }
    // The op's binary operation is what decides it.
    assert_eq!(
        lookup("exclusive_mul").unwrap().op.binop(),
        Some(BinOp::Mul)
    );
    assert_eq!(
        lookup("clustered_max").unwrap().op.binop(),
        Some(BinOp::Max)
    );
    assert_eq!(lookup("shuffle").unwrap().op.binop(), None);
}

// A category prints as its CLI name and parses back (the names `lockstep ops --category` takes).
#[test]
fn a_category_prints_as_the_name_it_parses_from() {
    for c in Category::ALL {
        let text = c.to_string();
        assert_eq!(text, c.name());
        assert_eq!(text.parse::<Category>().unwrap(), c);
    }
}

// An unknown op name is one clear error that suggests the nearest names (at most 3, within a third
// of the name's length, at most one edit worse than the best), or points to `lockstep ops`.
#[test]
fn an_unknown_op_suggests_only_near_names() {
    let suggestions = |n: &str| match lookup(n) {
        Err(ModelError::UnknownOp { suggestions, .. }) => suggestions,
        other => panic!("{n}: {other:?}"),
    };
    assert_eq!(suggestions("shuffle_dwn"), ["shuffle_down"]);
    assert_eq!(
        suggestions("exclusive_adx"),
        ["exclusive_add", "exclusive_and", "exclusive_max"]
    );
    // 4 edits from "quad_swap_diagonal", within 14 / 3.
    assert_eq!(suggestions("quad_swap_diag"), ["quad_swap_diagonal"]);
    // Nothing within 2 edits of "zzzz".
    assert!(suggestions("zzzz").is_empty());
    let with = lookup("shufle_down").unwrap_err().to_string();
    assert!(with.contains("(did you mean shuffle_down?)"), "{with}");
    let without = lookup("zzzz").unwrap_err().to_string();
    assert!(
        without.contains("(run `lockstep ops` for the list)"),
        "{without}"
    );
}

// A batch of subgroups gives every subgroup the result it gets alone — also past the first rayon
// task, whose size is a whole number of subgroups (16384 lanes): at 128 lanes, 300 subgroups span
// three tasks. Checked for a gather (rotate) and two ops through the general path (an inclusive scan,
// a clustered reduction), each against `evaluate_typed` one subgroup at a time.
#[test]
fn a_batch_gives_every_subgroup_its_own_result_across_tasks() {
    let s = size(128);
    let groups = 300;
    let lanes = s.lanes();
    let inputs: Vec<[u32; 1]> = (0..groups * lanes)
        .map(|i| [(i as u32).wrapping_mul(2654435761) >> 7])
        .collect();
    let actives: Vec<LaneMask> = (0..groups)
        .map(|g| {
            if g % 3 == 0 {
                s.full_mask()
            } else {
                LaneMask(s.full_mask().0 ^ (1u128 << (g % 128)))
            }
        })
        .collect();
    for c in [
        call("rotate", 128, with_delta(5)),
        call("inclusive_add", 128, Args::default()),
        call("clustered_max", 128, with_cluster(4)),
    ] {
        let mut out = BatchOutput::for_call(&c, groups);
        evaluate_batch(&c, &actives, &inputs, &mut out).unwrap();
        for (g, a) in actives.iter().enumerate() {
            let single = evaluate_typed(&c, *a, &inputs[g * lanes..(g + 1) * lanes]).unwrap();
            for (l, o) in single.iter().enumerate() {
                let i = g * lanes + l;
                let got = Value::of(out.values[i]);
                match o {
                    Outcome::Defined(want) => {
                        assert_eq!(&got, want, "{} subgroup {g} lane {l}", c.info().name);
                        assert!(!out.undefined[g].has(l as u32));
                    }
                    Outcome::Undefined(_) => assert!(out.undefined[g].has(l as u32)),
                    Outcome::Inactive => {}
                }
            }
        }
    }
}

// A batch's output must have one result per lane of every subgroup and one undefined mask per
// subgroup (what `BatchOutput::for_call` allocates); either one short is refused, not half-filled.
#[test]
fn a_batch_output_of_the_wrong_size_is_refused() {
    let c = call("inclusive_add", 8, Args::default());
    let inputs: Vec<[u32; 1]> = (0..16).map(|i| [i]).collect();
    let actives = [size(8).full_mask(); 2];
    let mut short_values = BatchOutput::<[u32; 1]>::for_call(&c, 2);
    short_values.values.pop();
    assert!(matches!(
        evaluate_batch(&c, &actives, &inputs, &mut short_values),
        Err(ModelError::WrongLaneCount { .. })
    ));
    let mut short_masks = BatchOutput::<[u32; 1]>::for_call(&c, 2);
    short_masks.undefined.pop();
    assert!(matches!(
        evaluate_batch(&c, &actives, &inputs, &mut short_masks),
        Err(ModelError::WrongLaneCount { .. })
    ));
    let mut right = BatchOutput::<[u32; 1]>::for_call(&c, 2);
    assert!(evaluate_batch(&c, &actives, &inputs, &mut right).is_ok());
}

// A gather's plan, worked by hand from GL_KHR_shader_subgroup.txt 8.18: subgroupShuffleUp(value,
// delta) reads invocation id − delta and subgroupShuffleDown id + delta, undefined where that id is
// outside the subgroup or the invocation there is inactive; a relative shuffle reads the lane a
// fixed offset away (−delta up, +delta down), other gathers have no single offset; a defined
// result carries what its source lane held.
#[test]
fn a_gather_plan_names_its_offset_and_its_undefined_and_carried_lanes() {
    let up2 = GatherPlan::new(&call("shuffle_up", 8, with_delta(2))).unwrap();
    let down1 = GatherPlan::new(&call("shuffle_down", 8, with_delta(1))).unwrap();
    assert_eq!(up2.offset(), Some(-2));
    assert_eq!(down1.offset(), Some(1));
    // Not one run of lanes reading one run: no offset.
    let rotate = GatherPlan::new(&call("rotate", 8, with_delta(3))).unwrap();
    assert_eq!(rotate.offset(), None);
    let xor = Args {
        mask: Some(LaneArg::Uniform(1)),
        ..Args::default()
    };
    assert_eq!(
        GatherPlan::new(&call("shuffle_xor", 8, xor))
            .unwrap()
            .offset(),
        None
    );
    let first = GatherPlan::new(&call("broadcast_first", 8, Args::default())).unwrap();
    assert_eq!(first.offset(), None);
    // Not a gather at all.
    assert!(GatherPlan::new(&call("inclusive_add", 8, Args::default())).is_none());

    // Full subgroup: shuffle_up by 2 leaves lanes 0 and 1 undefined, shuffle_down by 1 lane 7.
    let full = size(8).full_mask();
    assert_eq!(up2.undefined(full), LaneMask(0b0000_0011));
    assert_eq!(down1.undefined(full), LaneMask(0b1000_0000));
    // Lane 2 inactive: lane 4 reads it (undefined); lane 2 itself has no result to judge.
    let a = LaneMask(0b1111_1011);
    assert_eq!(up2.undefined(a), LaneMask(0b0001_0011));
    // Lanes outside the subgroup in the mask are ignored.
    assert_eq!(
        up2.undefined(LaneMask(a.0 | 1 << 20)),
        LaneMask(0b0001_0011)
    );
    // broadcast_first reads the lowest active lane: never undefined while a lane is active.
    assert_eq!(first.undefined(a), LaneMask::EMPTY);

    // shuffle_down by 1: lane 2 reads lane 3, so a mark on lane 3 is carried to lane 2 — unless
    // lane 2 is inactive; lane 7's undefined result carries nothing.
    assert_eq!(down1.carried(full, LaneMask(1 << 3)), LaneMask(1 << 2));
    assert_eq!(
        down1.carried(LaneMask(full.0 & !(1 << 2)), LaneMask(1 << 3)),
        LaneMask::EMPTY
    );
    assert_eq!(down1.carried(full, LaneMask::EMPTY), LaneMask::EMPTY);
    // broadcast_first carries the mark of the lowest active lane to every active lane.
    assert_eq!(first.carried(a, LaneMask(1)), a);
}

// subgroupBallot's result goes to the active invocations only; the batch leaves an inactive lane's
// slot as it was (BatchOutput: "inactive lanes keep what was there").
#[test]
fn a_ballot_in_a_batch_writes_only_the_active_lanes() {
    let c = call("ballot", 8, Args::default());
    let inputs: Vec<[bool; 1]> = (0..16).map(|i| [i % 3 == 0]).collect();
    let actives = [LaneMask(0b0111_1110), size(8).full_mask()];
    let mut out = BatchOutput::<[bool; 1]>::for_call(&c, 2);
    out.ballots.fill(Ballot(0xdead));
    evaluate_batch(&c, &actives, &inputs, &mut out).unwrap();
    // Subgroup 0: lanes 3 and 6 hold true and are active.
    for l in 0..8 {
        let want = if actives[0].has(l) {
            Ballot(1 << 3 | 1 << 6)
        } else {
            Ballot(0xdead)
        };
        assert_eq!(out.ballots[l as usize], want, "lane {l}");
    }
    // Subgroup 1 (inputs 8..16: true at 9, 12, 15 → lanes 1, 4, 7), every lane active.
    assert!(out.ballots[8..]
        .iter()
        .all(|&b| b == Ballot(1 << 1 | 1 << 4 | 1 << 7)));
}

// A lane's outcome is one of three (docs/architecture.md: "undefined is a typed outcome"): only an
// undefined one says so — shuffle_down by 1 at 4 lanes with lane 3 inactive: lanes 0 and 1 read
// active lanes (defined), lane 2 reads the inactive lane 3 (undefined, GL_KHR_shader_subgroup.txt
// 8.18), lane 3 has no result.
#[test]
fn only_an_undefined_outcome_reports_itself_undefined() {
    let out = eval_u32(
        &call("shuffle_down", 4, with_delta(1)),
        0b0111,
        &[1, 2, 3, 4],
    );
    assert!(!out[0].is_undefined() && out[0].value().is_some());
    assert!(!out[1].is_undefined() && out[1].value().is_some());
    assert!(out[2].is_undefined() && out[2].value().is_none());
    assert!(matches!(out[3], Outcome::Inactive) && !out[3].is_undefined());
}

// A lane mask is a set of lanes 0..128 (a subgroup has at most 128 invocations,
// GL_KHR_shader_subgroup.txt 8.18 on gl_SubgroupSize): lane 128 and beyond are never in it, and
// adding a lane that is already there leaves the set as it is.
#[test]
fn a_lane_mask_is_a_set_of_at_most_128_lanes() {
    let all = LaneMask(u128::MAX);
    assert!(all.has(127));
    assert!(!all.has(128));
    assert!(!all.has(u32::MAX));
    let m = LaneMask(0b101);
    assert_eq!(m.with(0), m);
    assert_eq!(m.with(2), m);
    assert_eq!(m.with(1), LaneMask(0b111));
    assert_eq!(LaneMask::EMPTY.with(127), LaneMask(1 << 127));
}

// Set union of lane masks keeps a lane both sides hold; a ballot (the uvec4 of
// GL_KHR_shader_subgroup.txt 8.18: lane i is bit i % 32 of component i / 32) has 128 bits and no
// bit 128.
#[test]
fn a_union_keeps_shared_lanes_and_a_ballot_has_128_bits() {
    assert_eq!(LaneMask(0b011).or(LaneMask(0b110)), LaneMask(0b111));
    assert_eq!(LaneMask(0b1).or(LaneMask(0b1)), LaneMask(0b1));
    let b = Ballot(u128::MAX);
    assert!(b.bit(127));
    assert!(!b.bit(128));
    assert!(!b.bit(u32::MAX));
    assert_eq!(
        Ballot::from_words([1, 2, 4, 8]),
        Ballot(1 | 2 << 32 | 4 << 64 | 8 << 96)
    );
    // Printed as the uvec4, component 0 first: lane 33 is bit 1 of component 1.
    assert_eq!(Ballot(1 << 33).to_string(), "(0x0,0x2,0x0,0x0)");
    assert_eq!(
        Ballot(u128::MAX).to_string(),
        "(0xffffffff,0xffffffff,0xffffffff,0xffffffff)"
    );
}

fn eval_bool(c: &OpCall, active: u128, vals: &[bool]) -> Vec<bool> {
    let v: Vec<[bool; 1]> = vals.iter().map(|&x| [x]).collect();
    evaluate_typed(c, LaneMask(active), &v)
        .unwrap()
        .iter()
        .map(|o| match o {
            Outcome::Defined(v) => v.component_bits(0) != 0,
            other => panic!("{other:?}"),
        })
        .collect()
}

// On bools, subgroupAnd/Or/Xor and their scans are the logical operations
// (GL_KHR_shader_subgroup.txt 8.18 maps them to OpGroupNonUniformLogicalAnd/Or/Xor), over the active
// invocations — worked by hand for 4 lanes holding true, true, false, true.
#[test]
fn bitwise_ops_on_bools_are_the_logical_ones() {
    let v = [true, true, false, true];
    let all_true = [true; 4];
    let f = |op: &str, vals: &[bool]| eval_bool(&call(op, 4, Args::default()), 0xf, vals);
    assert_eq!(f("and", &v), [false; 4]);
    assert_eq!(f("and", &all_true), [true; 4]);
    assert_eq!(f("or", &v), [true; 4]);
    assert_eq!(f("or", &[false; 4]), [false; 4]);
    // Three trues: odd.
    assert_eq!(f("xor", &v), [true; 4]);
    assert_eq!(f("xor", &all_true), [false; 4]);
    assert_eq!(f("inclusive_and", &v), [true, true, false, false]);
    assert_eq!(
        f("inclusive_or", &[false, false, true, false]),
        [false, false, true, true]
    );
    assert_eq!(f("inclusive_xor", &v), [true, false, false, true]);
    // Exclusive scans start from the identity: true for and, false for or and xor.
    assert_eq!(f("exclusive_and", &v), [true, true, true, false]);
    assert_eq!(
        f("exclusive_or", &[false, true, false, false]),
        [false, false, true, true]
    );
    assert_eq!(f("exclusive_xor", &v), [false, true, false, false]);
    // Lane 2 inactive: the and of the active lanes is true.
    let and = evaluate_typed(
        &call("and", 4, Args::default()),
        LaneMask(0b1011),
        &v.map(|x| [x]),
    )
    .unwrap();
    assert_eq!(and[0], Outcome::Defined(Value::bool(true)));
    // Clustered by 2: (true, true) and (false, true).
    let c = call("clustered_and", 4, with_cluster(2));
    assert_eq!(eval_bool(&c, 0xf, &v), [true, true, false, false]);
    let c = call("clustered_xor", 4, with_cluster(2));
    assert_eq!(eval_bool(&c, 0xf, &v), [false, false, true, true]);
}

// The scalar kinds of GLSL (GL_KHR_shader_subgroup.txt 8.18 genType/genIType/genUType/genBType, with
// the 8/16/64-bit types of GL_EXT_shader_explicit_arithmetic_types): bool is neither integer nor
// float; i8..i64 are the signed integers, u8..u64 the unsigned ones.
#[test]
fn each_scalar_type_is_of_exactly_one_kind() {
    use ScalarType::*;
    for t in ScalarType::ALL {
        let (float, int, signed) = match t {
            Bool => (false, false, false),
            I8 | I16 | I32 | I64 => (false, true, true),
            U8 | U16 | U32 | U64 => (false, true, false),
            F16 | F32 | F64 => (true, false, false),
        };
        assert_eq!(t.is_float(), float, "{t}");
        assert_eq!(t.is_integer(), int, "{t}");
        assert_eq!(t.is_signed_integer(), signed, "{t}");
    }
}

// A value keeps the bits its scalar is wide and clears the rest: all 64 for the 64-bit types.
#[test]
fn a_value_keeps_exactly_the_bits_of_its_width() {
    for (t, keep) in [
        (ScalarType::U64, u64::MAX),
        (ScalarType::I64, u64::MAX),
        (ScalarType::F64, u64::MAX),
        (ScalarType::U32, 0xffff_ffff),
        (ScalarType::F16, 0xffff),
        (ScalarType::I8, 0xff),
        (ScalarType::Bool, 1),
    ] {
        let v = Value::from_bits(ValueType::scalar(t), &[u64::MAX]);
        assert_eq!(v.component_bits(0), keep, "{t}");
    }
}

fn value(ty: &str, text: &str) -> Value {
    Value::parse(ty.parse().unwrap(), text).unwrap()
}

// The JSON form of a value (`lockstep eval --json`, conform's JSON report): a bool or a number per
// component, 64-bit integers exact, non-finite floats as "nan", "inf", "-inf", vectors as arrays.
#[test]
fn a_value_in_json_is_a_bool_or_an_exact_number_per_component() {
    use serde_json::json;
    assert_eq!(value("bool", "true").to_json(), json!(true));
    assert_eq!(value("bool", "false").to_json(), json!(false));
    assert_eq!(
        value("u64", "18446744073709551615").to_json(),
        json!(18446744073709551615u64)
    );
    assert_eq!(
        value("i64", "-9223372036854775808").to_json(),
        json!(-9223372036854775808i64)
    );
    // 2^53 + 1: not a double, still exact.
    assert_eq!(
        value("i64", "9007199254740993").to_json(),
        json!(9007199254740993i64)
    );
    assert_eq!(value("i32", "-5").to_json(), json!(-5));
    assert_eq!(value("u8", "200").to_json(), json!(200));
    assert_eq!(value("f32", "1.5").to_json(), json!(1.5));
    assert_eq!(value("f32", "nan").to_json(), json!("nan"));
    assert_eq!(value("f32", "inf").to_json(), json!("inf"));
    assert_eq!(value("f64", "-inf").to_json(), json!("-inf"));
    assert_eq!(value("uvec3", "1:2:3").to_json(), json!([1, 2, 3]));
}

// A value's text (`lockstep eval --values`, reports): components joined by ':'; its debug form
// names the type.
#[test]
fn a_value_prints_its_components_joined_by_colons() {
    assert_eq!(value("uvec3", "1:2:3").to_string(), "1:2:3");
    assert_eq!(value("u32", "7").to_string(), "7");
    assert_eq!(format!("{:?}", Value::u32(5)), "u32(5)");
}

// Integer text must lie in the type's range, both ends included; raw float bits must fit the
// float's width.
#[test]
fn integer_text_is_checked_against_the_types_range_and_float_bits_against_its_width() {
    let ok = |ty: &str, t: &str| Value::parse(ty.parse().unwrap(), t).is_ok();
    assert!(ok("u8", "255") && !ok("u8", "256") && ok("u8", "0") && !ok("u8", "-1"));
    assert!(ok("i8", "127") && ok("i8", "-128") && !ok("i8", "128") && !ok("i8", "-129"));
    assert!(ok("u64", "18446744073709551615") && !ok("u64", "18446744073709551616"));
    assert!(ok("f32", "0xffffffff") && !ok("f32", "0x100000000"));
    assert!(ok("f16", "0xffff") && !ok("f16", "0x10000"));
    assert!(ok("f64", "0xffffffffffffffff"));
}

// A workgroup shape is written X, XxY or XxYxZ (the CLI's --workgroup); missing sizes are 1, as in
// GLSL's local_size_x/y/z defaults. A linear lane order prints its axes fastest first and parses
// back.
#[test]
fn a_workgroup_shape_defaults_missing_sizes_to_one_and_lane_orders_round_trip() {
    let shape = |t: &str| t.parse::<WorkgroupShape>().unwrap();
    assert_eq!(shape("64"), WorkgroupShape::new(64, 1, 1).unwrap());
    assert_eq!(shape("8x4"), WorkgroupShape::new(8, 4, 1).unwrap());
    assert_eq!(shape("8,4,2"), WorkgroupShape::new(8, 4, 2).unwrap());
    assert!("8x4x2x1".parse::<WorkgroupShape>().is_err());
    for (order, text) in [
        (LaneOrder::Linear([0, 1, 2]), "row-major"),
        (LaneOrder::Linear([1, 0, 2]), "column-major"),
        (LaneOrder::Linear([2, 0, 1]), "zxy"),
        (LaneOrder::Linear([1, 2, 0]), "yzx"),
        (LaneOrder::Quads, "quads"),
    ] {
        assert_eq!(order.to_string(), text);
        assert_eq!(text.parse::<LaneOrder>().unwrap(), order, "{text}");
    }
    // The two common orders also go by their axis names.
    assert_eq!("xyz".parse::<LaneOrder>().unwrap(), LaneOrder::ROW_MAJOR);
    assert_eq!("YXZ".parse::<LaneOrder>().unwrap(), LaneOrder::COLUMN_MAJOR);
    assert!("xxz".parse::<LaneOrder>().is_err());
    assert!("diagonal".parse::<LaneOrder>().is_err());
}
