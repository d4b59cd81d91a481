//! The float add/mul tolerance of the conformance suite (docs/conformance.md) holds for any
//! evaluation order: sums and products of random f16/f32 terms computed in increasing lane order
//! (the model) and in a random order or a random binary tree (what a device may do) differ by no
//! more than `tolerance`.

use lockstep::conform::compare::tolerance;
use lockstep::model::{BinOp, ScalarType};
use proptest::prelude::*;

/// Rounds to the type after every operation.
fn round(s: ScalarType, x: f64) -> f64 {
    match s {
        ScalarType::F16 => half::f16::from_f64(x).to_f64(),
        ScalarType::F32 => x as f32 as f64,
        _ => x,
    }
}

fn combine(op: BinOp, s: ScalarType, a: f64, b: f64) -> f64 {
    round(s, if op == BinOp::Add { a + b } else { a * b })
}

fn linear(op: BinOp, s: ScalarType, xs: &[f64]) -> f64 {
    xs[1..].iter().fold(xs[0], |a, &x| combine(op, s, a, x))
}

/// A binary tree over `xs` whose split points come from `splits`.
fn tree(op: BinOp, s: ScalarType, xs: &[f64], splits: &[usize]) -> f64 {
    if xs.len() == 1 {
        return xs[0];
    }
    let k = 1 + splits.first().copied().unwrap_or(0) % (xs.len() - 1);
    let rest = splits.get(1..).unwrap_or(&[]);
    combine(
        op,
        s,
        tree(op, s, &xs[..k], rest),
        tree(op, s, &xs[k..], rest),
    )
}

fn terms(op: BinOp) -> BoxedStrategy<f64> {
    if op == BinOp::Add {
        (-100.0..100.0f64).boxed()
    } else {
        (0.9375..1.0625f64, any::<bool>())
            .prop_map(|(x, n)| if n { -x } else { x })
            .boxed()
    }
}

fn case() -> impl Strategy<Value = (BinOp, ScalarType, Vec<f64>)> {
    (
        prop_oneof![Just(BinOp::Add), Just(BinOp::Mul)],
        prop_oneof![Just(ScalarType::F16), Just(ScalarType::F32)],
    )
        .prop_flat_map(|(op, s)| {
            proptest::collection::vec(terms(op), 1..128)
                .prop_map(move |xs| (op, s, xs.into_iter().map(|x| round(s, x)).collect()))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn the_bound_holds_for_any_order(
        (op, s, xs) in case(),
        perm_seed in any::<u64>(),
        splits in proptest::collection::vec(any::<usize>(), 128),
    ) {
        let model = linear(op, s, &xs);
        // A random permutation (xorshift Fisher-Yates from perm_seed) summed linearly, and random trees.
        let mut perm = xs.clone();
        let mut st = perm_seed | 1;
        for i in (1..perm.len()).rev() {
            st ^= st << 13;
            st ^= st >> 7;
            st ^= st << 17;
            perm.swap(i, (st % (i as u64 + 1)) as usize);
        }
        for device in [linear(op, s, &perm), tree(op, s, &perm, &splits), tree(op, s, &xs, &splits)] {
            let tol = tolerance(op, s, &xs, model);
            prop_assert!((device - model).abs() <= tol, "{op:?} {s:?} n={} model {model} device {device} tol {tol}", xs.len());
        }
    }
}
