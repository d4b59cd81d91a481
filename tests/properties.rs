//! Properties of the model over random sizes, masks, values and arguments (proptest).

use crate::support;
use lockstep::model::*;
use proptest::prelude::*;
use support::*;

fn sizes() -> impl Strategy<Value = SubgroupSize> {
    (0u32..8).prop_map(|k| SubgroupSize::new(1 << k).unwrap())
}

fn mask_for(s: SubgroupSize) -> impl Strategy<Value = LaneMask> {
    any::<u128>().prop_map(move |m| LaneMask(m & s.full_mask().0))
}

fn nonempty_mask_for(s: SubgroupSize) -> impl Strategy<Value = LaneMask> {
    mask_for(s).prop_map(move |m| if m.is_empty() { LaneMask(1) } else { m })
}

/// Random arguments for `info` at size `s` (in range and out of range), each kind from its source.
fn args_for(info: &'static OpInfo, s: SubgroupSize) -> impl Strategy<Value = Args> {
    let n = s.get();
    let one = move || prop_oneof![4 => 0..n + 2, 1 => any::<u32>()];
    // The uniform source also gives the quad index, a constant in 0..=3.
    let uniform = if info.args.contains(&ArgKind::QuadIndex) {
        (0u32..4).boxed()
    } else {
        one().boxed()
    };
    let per_lane = prop_oneof![
        one().prop_map(LaneArg::Uniform),
        proptest::collection::vec(one(), n as usize).prop_map(LaneArg::PerLane)
    ];
    let cluster = (0..=n.trailing_zeros()).prop_map(|k| 1u64 << k);
    (uniform, per_lane, cluster, any::<u128>()).prop_map(
        move |(uniform, per_lane, cluster, ballot)| {
            let src = ArgSources {
                uniform,
                per_lane,
                cluster,
                ballot: Ballot(ballot),
            };
            Args::from_sources(info, &src)
        },
    )
}

/// A random valid call of any subgroup-level op, with a value type it takes.
fn any_call() -> impl Strategy<Value = (OpCall, ValueType)> {
    let ops: Vec<&'static OpInfo> = catalogue()
        .iter()
        .filter(|o| !o.is_workgroup_level())
        .collect();
    (
        proptest::sample::select(ops),
        sizes(),
        any::<prop::sample::Index>(),
    )
        .prop_flat_map(|(info, s, ti)| {
            let types = info.types.types();
            let ty = if types.is_empty() {
                ValueType::U32
            } else {
                *ti.get(&types)
            };
            args_for(info, s).prop_map(move |a| (OpCall::new(info, s, a).unwrap(), ty))
        })
}

/// A call, its value type, two sets of lane values and an active-mask seed.
fn any_case() -> impl Strategy<Value = (OpCall, ValueType, Vec<Value>, Vec<Value>, u128)> {
    any_call().prop_flat_map(|(c, ty)| {
        let n = c.size().lanes();
        (
            Just(c),
            Just(ty),
            values(ty, n),
            values(ty, n),
            any::<u128>(),
        )
    })
}

fn values(ty: ValueType, n: usize) -> impl Strategy<Value = Vec<Value>> {
    proptest::collection::vec(proptest::collection::vec(any::<u64>(), 4), n)
        .prop_map(move |v| v.iter().map(|b| Value::from_bits(ty, b)).collect())
}

fn u32s(n: usize) -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(any::<u32>(), n)
}

fn vals_of(c: &OpCall, v: &[Value]) -> Vec<Value> {
    if c.info().has_value() {
        v.to_vec()
    } else {
        Vec::new()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // GL_KHR_shader_subgroup.txt, 3.8: operations act on active invocations only.
    #[test]
    fn results_never_depend_on_values_held_by_inactive_lanes((c, _ty, v1, mut v2, seed) in any_case()) {
        let active = LaneMask(seed & c.size().full_mask().0);
        for l in active.iter() {
            v2[l as usize] = v1[l as usize];
        }
        let o1 = evaluate(&c, active, &vals_of(&c, &v1)).unwrap();
        let o2 = evaluate(&c, active, &vals_of(&c, &v2)).unwrap();
        prop_assert_eq!(o1, o2);
    }

    // Inactive lanes never get a result; active lanes always get one (defined or undefined).
    #[test]
    fn exactly_the_active_lanes_have_outcomes((c, _ty, v, _v2, seed) in any_case()) {
        let active = LaneMask(seed & c.size().full_mask().0);
        let out = evaluate(&c, active, &vals_of(&c, &v)).unwrap();
        for (l, o) in out.iter().enumerate() {
            prop_assert_eq!(active.has(l as u32), *o != Outcome::Inactive);
        }
    }

    // GL_KHR_shader_subgroup.txt, 3.8: exclusive = [I, x0, x0 op x1, …], inclusive = [x0, x0 op x1, …]:
    // the exclusive result of an active lane is the inclusive result of the previous active lane.
    #[test]
    fn exclusive_scan_shifted_by_one_active_lane_is_the_inclusive_scan(
        s in sizes(), op in proptest::sample::select(BinOp::ALL.to_vec()), seed in any::<u128>(), v in u32s(128),
    ) {
        let active = LaneMask(seed & s.full_mask().0);
        let inc = eval_u32(&call(&format!("inclusive_{}", op.name()), s.get() as u64, Args::default()), active.0, &v[..s.lanes()]);
        let exc = eval_u32(&call(&format!("exclusive_{}", op.name()), s.get() as u64, Args::default()), active.0, &v[..s.lanes()]);
        let lanes: Vec<u32> = active.iter().collect();
        for w in lanes.windows(2) {
            prop_assert_eq!(&exc[w[1] as usize], &inc[w[0] as usize]);
        }
    }

    // The last active lane's inclusive scan covers every active lane: it equals the reduction.
    #[test]
    fn the_last_active_lanes_inclusive_scan_is_the_reduction(
        s in sizes(), op in proptest::sample::select(BinOp::ALL.to_vec()), seed in any::<u128>(), v in proptest::collection::vec(-1e3f32..1e3, 128),
    ) {
        let active = LaneMask(seed & s.full_mask().0);
        prop_assume!(!active.is_empty());
        let name = op.name();
        let v: Vec<[i32; 1]> = v[..s.lanes()].iter().map(|x| [*x as i32]).collect();
        let inc = evaluate_typed(&call(&format!("inclusive_{name}"), s.get() as u64, Args::default()), active, &v).unwrap();
        let red = evaluate_typed(&call(name, s.get() as u64, Args::default()), active, &v).unwrap();
        let last = active.highest().unwrap() as usize;
        for l in active.iter() {
            prop_assert_eq!(&red[l as usize], &inc[last]);
        }
    }

    // GL_KHR_shader_subgroup.txt, 8.18: the clustered ops reduce "all active invocation-provided
    // <value>s within a cluster"; a cluster of the whole subgroup is the plain reduction of all
    // active invocations. Both are checked against the fold written out below (increasing lane
    // order, as 3.8 lists the operations), not against each other: they share the model's fold.
    #[test]
    fn a_clustered_op_with_cluster_equal_to_size_is_the_plain_op(
        s in sizes(), op in proptest::sample::select(BinOp::ALL.to_vec()),
        scalar in proptest::sample::select(vec![ScalarType::Bool, ScalarType::U8, ScalarType::I32, ScalarType::F32]),
        seed in any::<u128>(), bits in proptest::collection::vec(any::<u64>(), 128),
    ) {
        let ty = ValueType::scalar(scalar);
        prop_assume!(op.types().accepts(ty));
        let active = LaneMask(seed & s.full_mask().0);
        // Floats: finite values only (the NaN rules have tests of their own).
        let values: Vec<Value> = bits[..s.lanes()]
            .iter()
            .map(|&b| match scalar {
                ScalarType::F32 => Value::of([(b % 2001) as f32 / 8.0 - 125.0]),
                _ => Value::from_bits(ty, &[b]),
            })
            .collect();
        let n = s.get() as u64;
        let cl = evaluate(&call(&format!("clustered_{}", op.name()), n, with_cluster(n)), active, &values).unwrap();
        let plain = evaluate(&call(op.name(), n, Args::default()), active, &values).unwrap();
        let want = naive_fold(op, active.iter().map(|l| values[l as usize]).collect());
        for l in 0..s.get() {
            let expected = if active.has(l) { Outcome::Defined(want.unwrap()) } else { Outcome::Inactive };
            prop_assert_eq!(cl[l as usize], expected, "clustered, lane {}", l);
            prop_assert_eq!(plain[l as usize], expected, "plain, lane {}", l);
        }
    }

    // GL_KHR_shader_subgroup.txt, 8.18 subgroupShuffleXor: (id ^ m) ^ m = id, so on a full mask
    // applying the same xor twice gives every lane its own value back.
    #[test]
    fn shuffle_xor_twice_is_the_identity_on_a_full_mask(s in sizes(), m in any::<u32>(), v in u32s(128)) {
        let m = m & (s.get() - 1);
        let c = call("shuffle_xor", s.get() as u64, Args { mask: Some(LaneArg::Uniform(m)), ..Args::default() });
        let once: Vec<u32> = eval_u32(&c, s.full_mask().0, &v[..s.lanes()]).iter().map(u32_of).collect();
        let twice: Vec<u32> = eval_u32(&c, s.full_mask().0, &once).iter().map(u32_of).collect();
        prop_assert_eq!(&twice[..], &v[..s.lanes()]);
    }

    // SPV_KHR_subgroup_rotate: the source is (id + delta) mod G, so rotations compose additively.
    #[test]
    fn rotate_a_then_b_is_rotate_a_plus_b_on_a_full_mask(s in sizes(), a in any::<u32>(), b in any::<u32>(), v in u32s(128)) {
        let n = s.get() as u64;
        let full = s.full_mask().0;
        let ra: Vec<u32> = eval_u32(&call("rotate", n, with_delta(a)), full, &v[..s.lanes()]).iter().map(u32_of).collect();
        let rab: Vec<u32> = eval_u32(&call("rotate", n, with_delta(b)), full, &ra).iter().map(u32_of).collect();
        let direct: Vec<u32> = eval_u32(&call("rotate", n, with_delta(a.wrapping_add(b))), full, &v[..s.lanes()]).iter().map(u32_of).collect();
        prop_assert_eq!(rab, direct);
    }

    // GL_KHR_shader_subgroup.txt, 8.18: subgroupBallotBitCount(subgroupBallot(p)) counts the active lanes with p.
    #[test]
    fn ballot_bit_count_of_a_ballot_counts_the_active_lanes_with_p(s in sizes(), seed in any::<u128>(), p in any::<u128>()) {
        let active = LaneMask(seed & s.full_mask().0);
        prop_assume!(!active.is_empty());
        let preds: Vec<[bool; 1]> = (0..s.get()).map(|l| [(p >> l) & 1 == 1]).collect();
        let b = evaluate_typed(&call("ballot", s.get() as u64, Args::default()), active, &preds).unwrap();
        let ballot = ballot_of(&b[active.lowest().unwrap() as usize]);
        let cnt = eval_none(&call("ballot_bit_count", s.get() as u64, with_ballot(ballot)), active.0);
        let want = active.iter().filter(|&l| preds[l as usize][0]).count() as u32;
        for l in active.iter() {
            prop_assert_eq!(u32_of(&cnt[l as usize]), want);
        }
    }

    // GL_KHR_shader_subgroup.txt, 8.18 subgroupElect: true in exactly the lowest active lane.
    #[test]
    fn elect_is_true_in_exactly_the_lowest_active_lane(s in sizes(), active in sizes().prop_flat_map(nonempty_mask_for)) {
        let active = LaneMask(active.0 & s.full_mask().0);
        prop_assume!(!active.is_empty());
        let out = eval_none(&call("elect", s.get() as u64, Args::default()), active.0);
        let winners: Vec<u32> = active.iter().filter(|&l| bool_of(&out[l as usize])).collect();
        prop_assert_eq!(winners, vec![active.lowest().unwrap()]);
    }

    // GL_KHR_shader_subgroup.txt, 8.18: subgroupBroadcastFirst = the value of the lowest active lane
    // = subgroupShuffle(value, lowest active id).
    #[test]
    fn broadcast_first_is_shuffle_from_the_lowest_active_lane(s in sizes(), seed in any::<u128>(), v in u32s(128)) {
        let active = LaneMask(seed & s.full_mask().0);
        prop_assume!(!active.is_empty());
        let first = eval_u32(&call("broadcast_first", s.get() as u64, Args::default()), active.0, &v[..s.lanes()]);
        let shuf = eval_u32(&call("shuffle", s.get() as u64, with_id(active.lowest().unwrap())), active.0, &v[..s.lanes()]);
        prop_assert_eq!(first, shuf);
    }

    // evaluate_batch (rayon, typed columns) agrees with evaluate (one subgroup, outcomes): u32 lanes.
    #[test]
    fn batches_agree_with_single_subgroup_evaluation((c, _ty) in any_call(), seeds in proptest::collection::vec(any::<u128>(), 1..40), v in u32s(40 * 128)) {
        let info = c.info();
        prop_assume!(!info.has_value() || info.accepts(ValueType::U32));
        let n = c.size().lanes();
        let actives: Vec<LaneMask> = seeds.iter().map(|s| LaneMask(s & c.size().full_mask().0)).collect();
        let inputs: Vec<[u32; 1]> = if info.has_value() { v[..actives.len() * n].iter().map(|x| [*x]).collect() } else { vec![] };
        check_batch(&c, &actives, &inputs)?;
    }

    // The same for bool lanes (ballot, votes, bool gathers and bitwise ops).
    #[test]
    fn batches_agree_with_single_subgroup_evaluation_on_bools((c, _ty) in any_call(), seeds in proptest::collection::vec(any::<u128>(), 1..40), v in proptest::collection::vec(any::<bool>(), 40 * 128)) {
        let info = c.info();
        prop_assume!(info.has_value() && info.accepts(ValueType::BOOL));
        let n = c.size().lanes();
        let actives: Vec<LaneMask> = seeds.iter().map(|s| LaneMask(s & c.size().full_mask().0)).collect();
        let inputs: Vec<[bool; 1]> = v[..actives.len() * n].iter().map(|x| [*x]).collect();
        check_batch(&c, &actives, &inputs)?;
    }

    // Value text round-trips for every type (the CLI's --values and the reports rely on it).
    #[test]
    fn values_round_trip_through_text(ty in proptest::sample::select(ValueType::all().collect::<Vec<_>>()), bits in proptest::collection::vec(any::<u64>(), 4)) {
        let v = Value::from_bits(ty, &bits);
        let text: Vec<String> = (0..ty.components()).map(|i| {
            if ty.scalar_type().is_float() { format!("0x{:x}", v.component_bits(i)) } else { v.component_string(i) }
        }).collect();
        prop_assert_eq!(Value::parse(ty, &text.join(":")).unwrap(), v);
    }
}

/// Runs `inputs` as a batch and checks every subgroup against single-subgroup evaluation.
fn check_batch<S: Scalar, const N: usize>(
    c: &OpCall,
    actives: &[LaneMask],
    inputs: &[[S; N]],
) -> Result<(), TestCaseError> {
    let info = c.info();
    let n = c.size().lanes();
    let mut out = BatchOutput::for_call(c, actives.len());
    evaluate_batch(c, actives, inputs, &mut out).unwrap();
    for (g, a) in actives.iter().enumerate() {
        let single = evaluate_typed(
            c,
            *a,
            if inputs.is_empty() {
                &[]
            } else {
                &inputs[g * n..(g + 1) * n]
            },
        )
        .unwrap();
        for (l, o) in single.iter().enumerate() {
            let i = g * n + l;
            match o {
                Outcome::Inactive => {}
                Outcome::Undefined(_) => prop_assert!(out.undefined[g].has(l as u32)),
                Outcome::Defined(want) => {
                    prop_assert!(!out.undefined[g].has(l as u32));
                    let got = match info.result {
                        ResultKind::SameAsValue => Value::of(out.values[i]),
                        ResultKind::Bool => Value::bool(out.bools[i]),
                        ResultKind::Uint => Value::u32(out.uints[i]),
                        ResultKind::Uvec4 => Value::ballot(out.ballots[i]),
                    };
                    prop_assert_eq!(&got, want);
                }
            }
        }
    }
    Ok(())
}

/// The reduction of `xs` with `op`, folded left to right with Rust's own operators: integers wrap,
/// bools are logical, floats (finite here) round in f32.
fn naive_fold(op: BinOp, xs: Vec<Value>) -> Option<Value> {
    let first = *xs.first()?;
    let ty = first.ty();
    let r = xs.iter().skip(1).fold(first, |a, x| {
        let (a, x) = (a.component_bits(0), x.component_bits(0));
        let bits = match ty.scalar_type() {
            ScalarType::Bool => {
                let (a, x) = (a != 0, x != 0);
                (match op {
                    BinOp::And => a & x,
                    BinOp::Or => a | x,
                    BinOp::Xor => a ^ x,
                    BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max => {
                        unreachable!("bools take no {op:?}")
                    }
                }) as u64
            }
            ScalarType::U8 => {
                let (a, x) = (a as u8, x as u8);
                (match op {
                    BinOp::Add => a.wrapping_add(x),
                    BinOp::Mul => a.wrapping_mul(x),
                    BinOp::Min => Ord::min(a, x),
                    BinOp::Max => Ord::max(a, x),
                    BinOp::And => a & x,
                    BinOp::Or => a | x,
                    BinOp::Xor => a ^ x,
                }) as u64
            }
            ScalarType::I32 => {
                let (a, x) = (a as u32 as i32, x as u32 as i32);
                (match op {
                    BinOp::Add => a.wrapping_add(x),
                    BinOp::Mul => a.wrapping_mul(x),
                    BinOp::Min => Ord::min(a, x),
                    BinOp::Max => Ord::max(a, x),
                    BinOp::And => a & x,
                    BinOp::Or => a | x,
                    BinOp::Xor => a ^ x,
                }) as u32 as u64
            }
            ScalarType::F32 => {
                let (a, x) = (f32::from_bits(a as u32), f32::from_bits(x as u32));
                (match op {
                    BinOp::Add => a + x,
                    BinOp::Mul => a * x,
                    BinOp::Min => f32::min(a, x),
                    BinOp::Max => f32::max(a, x),
                    BinOp::And | BinOp::Or | BinOp::Xor => unreachable!("floats take no {op:?}"),
                })
                .to_bits() as u64
            }
            other => unreachable!("not drawn: {other}"),
        };
        Value::from_bits(ty, &[bits])
    });
    Some(r)
}
