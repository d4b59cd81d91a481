//! The conformance suite on the default Vulkan device (lavapipe in CI): model == device per
//! category (proptest, shrinking to a minimal case), unsupported categories reported as such, and
//! proof that the suite can fail — injected faults are reported with the lane that differs.
//!
//! These tests need a Vulkan device. Without one they fail with a message; set
//! LOCKSTEP_SKIP_DEVICE_TESTS=1 to skip them explicitly. PROPTEST_CASES raises the case count.

use lockstep::conform::glsl::Fault;
use lockstep::conform::run::{run, ConformOptions, SizeChoice};
use lockstep::conform::single::{Case, CaseRunner};
use lockstep::model::*;
use lockstep::vulkan::Context;
use proptest::prelude::*;
use std::sync::OnceLock;

use crate::support;

fn ctx() -> Option<&'static Context> {
    support::shared_device()
}

fn runner() -> Option<&'static CaseRunner<'static>> {
    static R: OnceLock<Option<CaseRunner<'static>>> = OnceLock::new();
    R.get_or_init(|| ctx().map(|c| CaseRunner::new(c, None)))
        .as_ref()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12)
}

fn size_of(c: &Context) -> SubgroupSize {
    SubgroupSize::new(c.caps.subgroup_size as u64).unwrap()
}

/// Types the properties draw from: every scalar, and vectors of several widths.
fn test_types() -> Vec<ValueType> {
    [
        "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "u32x2",
        "f32x3", "i16x4", "f64x2", "boolx4",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect()
}

fn supported(c: &Context, o: &OpInfo, ty: Option<ValueType>) -> bool {
    let v12 = c.device.api_version() >= vulkano::Version::V1_2;
    lockstep::conform::run::unsupported_reason(&c.caps, v12, o, ty).is_none()
}

/// Component bits for `op` on scalar `s`, by how its result is compared: arbitrary bits for
/// bit-exact results; for float add/mul values bounded so no summation order overflows; for
/// float min/max no denormals (a device may flush them).
fn component(op: Op, s: ScalarType) -> BoxedStrategy<u64> {
    let to = move |x: f64| match s {
        ScalarType::F16 => half::f16::from_f64(x).to_bits() as u64,
        ScalarType::F32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    };
    match info(op).exactness(Some(ValueType::scalar(s))) {
        Exactness::Tolerance if op.binop() == Some(BinOp::Mul) => (0.9375..1.0625f64, any::<bool>())
            .prop_map(move |(x, n)| to(if n { -x } else { x }))
            .boxed(),
        Exactness::Tolerance => (-100.0..100.0f64).prop_map(to).boxed(),
        Exactness::MinMaxFloat => prop_oneof![
            8 => (-1000.0..1000.0f64).prop_map(to),
            1 => Just(to(f64::NAN)),
            1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(0.0), Just(-0.0)].prop_map(to),
        ]
        .boxed(),
        Exactness::Bits => any::<u64>().boxed(),
    }
}

/// The (op, type) pairs of `cat` the properties draw from that `c` supports.
fn supported_pairs(
    c: Option<&Context>,
    cat: Category,
) -> Vec<(&'static OpInfo, Option<ValueType>)> {
    let mut pairs = Vec::new();
    for o in catalogue()
        .iter()
        .filter(|o| o.category == cat && !o.is_workgroup_level())
    {
        let tys: Vec<Option<ValueType>> = if o.has_value() {
            test_types()
                .into_iter()
                .filter(|t| o.accepts(*t))
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        for t in tys {
            if c.is_some_and(|c| supported(c, o, t)) {
                pairs.push((o, t));
            }
        }
    }
    pairs
}

/// Why `c` runs none of `cat`'s operations, if it runs none: the distinct reasons.
fn unsupported_category(c: &Context, cat: Category) -> Option<String> {
    if !supported_pairs(Some(c), cat).is_empty() {
        return None;
    }
    let v12 = c.device.api_version() >= vulkano::Version::V1_2;
    let mut why: Vec<String> = catalogue()
        .iter()
        .filter(|o| o.category == cat)
        .filter_map(|o| {
            let ty = o.types.types().first().copied();
            lockstep::conform::run::unsupported_reason(&c.caps, v12, o, ty)
        })
        .collect();
    why.sort();
    why.dedup();
    Some(why.join("; "))
}

/// A random case of an op in `cat` that the device supports, on a (S,1,1) or (2S,1,1) workgroup
/// (only drawn when the device supports one).
fn case_in(cat: Category) -> impl Strategy<Value = Case> {
    let c = ctx();
    let size = c.map(size_of).unwrap_or(SubgroupSize::new(8).unwrap());
    let pairs = supported_pairs(c, cat);
    let n = size.get();
    (any::<prop::sample::Index>(), 1u32..=2).prop_flat_map(move |(i, mult)| {
        let (o, ty) = *i.get(&pairs);
        let inv = (n * mult) as usize;
        let comp = component(o.op, ty.map(|t| t.scalar_type()).unwrap_or(ScalarType::U32));
        let values = proptest::collection::vec(proptest::array::uniform4(comp), inv);
        let preds = proptest::collection::vec(prop_oneof![3 => Just(true), 1 => Just(false)], inv);
        let largs = proptest::collection::vec(
            prop_oneof![6 => 0..n, 1 => n..2 * n, 1 => any::<u32>()],
            inv,
        );
        let uarg = if o.args.contains(&ArgKind::QuadIndex) {
            (0u32..4).boxed()
        } else {
            prop_oneof![4 => 0..n, 1 => any::<u32>()].boxed()
        };
        let cluster = (0..=n.trailing_zeros()).prop_map(|k| 1u32 << k);
        (values, preds, largs, uarg, any::<u128>(), cluster)
            .prop_map(
                move |(values, preds, lane_args, uniform_arg, ballot, cluster)| Case {
                    op: o.op,
                    ty,
                    cluster: Some(cluster),
                    size,
                    shape: WorkgroupShape::new(n * mult, 1, 1).unwrap(),
                    preds,
                    values,
                    lane_args,
                    uniform_arg,
                    ballot,
                },
            )
            .boxed()
    })
}

fn check(case: Case) -> Result<(), TestCaseError> {
    let r = runner().expect("the property runs only with a device");
    let st = r
        .run(&case)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // A failure is accepted only where a documented deviation of this driver explains it
    // (src/conform/known.rs), exactly as `lockstep conform` reports it.
    let driver = &ctx().expect("a runner implies a device").info.driver;
    let failed: u64 = st
        .rows
        .iter()
        .filter(|(k, v)| lockstep::conform::known::explain(driver, k, v).is_none())
        .map(|(_, v)| v.failed)
        .sum();
    prop_assert_eq!(failed, 0, "device and model disagree: {:#?}", st.mismatches);
    Ok(())
}

/// Model == device over random cases of one category; a category the device runs none of is
/// reported *unsupported* with the reason, never passed with zero cases (the unsupported ones are
/// counted, and checked against the device's features, by the test after the properties).
fn model_equals_device(name: &str, cat: Category) {
    let Some(c) = ctx() else { return };
    if let Some(why) = unsupported_category(c, cat) {
        eprintln!(
            "{name}: UNSUPPORTED on {} (0 cases run): {why}",
            c.info.name
        );
        assert!(!why.is_empty(), "{name}: unsupported without a reason");
        return;
    }
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    if let Err(e) = runner.run(&case_in(cat), check) {
        panic!("{name}: {e}");
    }
}

macro_rules! model_equals_device {
    ($($name:ident => $cat:expr_2021),* $(,)?) => {$(
        #[test]
        fn $name() {
            model_equals_device(stringify!($name), $cat);
        }
    )*};
}

model_equals_device! {
    model_equals_device_basic => Category::Basic,
    model_equals_device_vote => Category::Vote,
    model_equals_device_ballot => Category::Ballot,
    model_equals_device_arithmetic => Category::Arithmetic,
    model_equals_device_shuffle => Category::Shuffle,
    model_equals_device_shuffle_relative => Category::ShuffleRelative,
    model_equals_device_clustered => Category::Clustered,
    model_equals_device_quad => Category::Quad,
    model_equals_device_rotate => Category::Rotate,
}

// The categories whose properties report unsupported are exactly those whose Vulkan feature the
// device lacks, read from its capabilities directly: none is skipped by mistake, none passes empty.
#[test]
fn unsupported_properties_are_counted_and_are_the_categories_the_device_lacks() {
    let Some(c) = ctx() else { return };
    let has = |cat: Category| match cat {
        Category::Basic => c.caps.ops.basic,
        Category::Vote => c.caps.ops.vote,
        Category::Ballot => c.caps.ops.ballot,
        Category::Arithmetic => c.caps.ops.arithmetic,
        Category::Shuffle => c.caps.ops.shuffle,
        Category::ShuffleRelative => c.caps.ops.shuffle_relative,
        Category::Clustered => c.caps.ops.clustered,
        Category::Quad => c.caps.ops.quad,
        Category::Rotate => c.caps.ops.rotate,
    };
    let unsupported: Vec<Category> = Category::ALL
        .into_iter()
        .filter(|&cat| unsupported_category(c, cat).is_some())
        .collect();
    let lacking: Vec<Category> = Category::ALL.into_iter().filter(|&cat| !has(cat)).collect();
    assert_eq!(unsupported, lacking);
    eprintln!(
        "{} of {} category properties unsupported on {}: {:?}",
        unsupported.len(),
        Category::ALL.len(),
        c.info.name,
        unsupported
    );
}

fn full_case(c: &Context, op: &str, ty: &str, lane_arg: u32) -> Case {
    let size = size_of(c);
    let n = size.get() as usize;
    Case {
        op: lookup(op).unwrap().op,
        ty: Some(ty.parse().unwrap()),
        cluster: None,
        size,
        shape: WorkgroupShape::new(size.get(), 1, 1).unwrap(),
        preds: vec![true; n],
        values: (0..n as u64).map(|i| [10 + i; 4]).collect(),
        lane_args: vec![lane_arg; n],
        uniform_arg: 0,
        ballot: 0,
    }
}

fn faulty(c: &'static Context, fault: Fault, case: &Case) -> lockstep::conform::compare::Stats {
    CaseRunner::new(c, Some(fault)).run(case).unwrap()
}

// Proof the suite can fail: a wrong answer from one lane is reported, naming that lane.
#[test]
fn a_wrong_answer_from_one_lane_is_reported_with_the_lane() {
    let Some(c) = ctx() else { return };
    let st = faulty(
        c,
        Fault::WrongLane(3),
        &full_case(c, "shuffle_xor", "u32", 1),
    );
    assert_eq!(st.rows.values().map(|r| r.failed).sum::<u64>(), 1);
    let m = &st.mismatches[0];
    assert_eq!((m.op.as_str(), m.lane), ("shuffle_xor", 3));
    assert_eq!(m.expected, "12"); // lane 3 reads lane 2's value 12
    assert_eq!(m.actual, "13");
    assert!(
        m.eval.starts_with("lockstep eval shuffle_xor --size"),
        "{}",
        m.eval
    );
}

// A wrong identity for exclusive scans shows up in the first active lane.
#[test]
fn a_wrong_exclusive_scan_identity_is_reported_at_the_first_active_lane() {
    let Some(c) = ctx() else { return };
    let mut case = full_case(c, "exclusive_add", "i32", 0);
    case.preds[0] = false; // lane 1 is the first active lane
    let st = faulty(c, Fault::WrongIdentity, &case);
    let m = &st.mismatches[0];
    assert_eq!(
        (
            m.op.as_str(),
            m.lane,
            m.expected.as_str(),
            m.actual.as_str()
        ),
        ("exclusive_add", 1, "0", "1")
    );
}

// An off-by-one shuffle_down is reported at a lane whose correct source is defined.
#[test]
fn an_off_by_one_shuffle_is_reported() {
    let Some(c) = ctx() else { return };
    let st = faulty(
        c,
        Fault::OffByOneShuffle,
        &full_case(c, "shuffle_down", "f32", 1),
    );
    let m = &st.mismatches[0];
    assert_eq!((m.op.as_str(), m.lane), ("shuffle_down", 0));
    assert_eq!(m.why, "bits differ");
}

// Outputs are pre-filled with a sentinel: a lane that never writes is caught.
#[test]
fn an_unwritten_result_is_caught_by_the_sentinel() {
    let Some(c) = ctx() else { return };
    let st = faulty(
        c,
        Fault::NoWrite(2),
        &full_case(c, "broadcast_first", "u32", 0),
    );
    let m = &st.mismatches[0];
    assert_eq!(m.lane, 2);
    assert!(m.why.contains("unwritten result"), "{}", m.why);
}

// The same cases without a fault pass (so the failures above come from the faults).
#[test]
fn the_fault_cases_pass_without_the_fault() {
    let Some(r) = runner() else { return };
    let c = ctx().unwrap();
    for (op, ty, a) in [
        ("shuffle_xor", "u32", 1),
        ("exclusive_add", "i32", 0),
        ("shuffle_down", "f32", 1),
        ("broadcast_first", "u32", 0),
    ] {
        let st = r.run(&full_case(c, op, ty, a)).unwrap();
        assert_eq!(
            st.rows.values().map(|r| r.failed).sum::<u64>(),
            0,
            "{op}: {:#?}",
            st.mismatches
        );
        assert!(st.lane_checks > 0);
    }
}

// A feature the device lacks is `unsupported` with the reason, never a failure (lavapipe: clustered, rotate).
#[test]
fn missing_features_are_reported_unsupported_with_the_reason() {
    let Some(c) = ctx() else { return };
    let opts = ConformOptions {
        categories: Some(vec![Category::Clustered, Category::Rotate]),
        types: Some(vec!["u32".parse().unwrap()]),
        cases: 8,
        ..ConformOptions::default()
    };
    let rep = run(c, &opts, &|_| {}).unwrap();
    if !c.caps.ops.clustered {
        assert!(rep
            .unsupported
            .iter()
            .any(|u| u.op == "clustered_add" && u.reason.contains("CLUSTERED")));
    }
    if !c.caps.ops.rotate {
        assert!(rep
            .unsupported
            .iter()
            .any(|u| u.op == "rotate" && u.reason.contains("shaderSubgroupRotate")));
    }
    assert!(rep.passed(), "{}", lockstep::conform::report::text(&rep));
}

// A small run of whole categories through the batch path: every shape, including the partial
// last subgroup (3x5x7) and the 2D shape, and the workgroup built-ins.
#[test]
fn a_small_run_over_all_shapes_passes_and_reports_json_and_junit() {
    let Some(c) = ctx() else { return };
    let opts = ConformOptions {
        categories: Some(vec![Category::Basic, Category::Vote, Category::Quad]),
        types: Some(vec![
            "u32".parse().unwrap(),
            "f16x2".parse().unwrap(),
            "bool".parse().unwrap(),
        ]),
        cases: 24,
        sizes: SizeChoice::Default,
        ..ConformOptions::default()
    };
    let rep = run(c, &opts, &|_| {}).unwrap();
    assert!(rep.passed(), "{}", lockstep::conform::report::text(&rep));
    // Every failing row must be a documented deviation of this driver (lavapipe: src/conform/known.rs).
    for (k, v) in &rep.stats.rows {
        if v.failed > 0 {
            assert!(
                rep.known(k).is_some(),
                "{k:?} failed without a known deviation"
            );
        }
    }
    let shapes: std::collections::BTreeSet<[u32; 3]> =
        rep.stats.rows.keys().map(|k| k.shape).collect();
    assert!(shapes.contains(&[3, 5, 7]), "{shapes:?}");
    assert!(rep.stats.rows.keys().any(|k| k.op == "subgroup_id"));
    let j = lockstep::conform::report::json(&rep, "lockstep conform");
    for k in ["device", "results", "undefined_observed", "summary"] {
        assert!(j.get(k).is_some(), "{k}");
    }
    assert_eq!(j["summary"]["failed_unexplained"], 0);
    let r0 = &j["results"][0];
    for k in [
        "op",
        "type",
        "subgroup_size",
        "workgroup",
        "cases",
        "passed",
        "failed",
        "status",
        "reason",
    ] {
        assert!(r0.get(k).is_some(), "{k}");
    }
    let x = lockstep::conform::report::junit(&rep);
    assert!(x.starts_with("<?xml") && x.contains("<testsuite name=\"quad\""));
}
