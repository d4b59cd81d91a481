//! Random conformance cases: for one kernel and one workgroup shape, the per-workgroup case words
//! (opcode, uniform argument, ballot operand) and the per-invocation inputs (predicate, lane
//! argument, value bits).
//!
//! Values are drawn per op class: movement ops and integer ops get arbitrary bits (NaN payloads,
//! -0.0, infinities and denormals included — they must move bit for bit); float add/mul get finite
//! values that cannot overflow in any summation order; float min/max get normal values with NaNs,
//! infinities and signed zeros but no denormals (a device may flush those in arithmetic).

use crate::conform::glsl::{Entry, KernelSpec, CASE_WORDS, IN_WORDS};
use crate::model::{BinOp, Op, ScalarType, SubgroupSize, ValueType, WorkgroupShape};
use half::f16;
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Everything one dispatch needs.
#[derive(Clone, Debug)]
pub struct Batch {
    /// the workgroup shape
    pub shape: WorkgroupShape,
    /// number of workgroups (one case each)
    pub workgroups: u32,
    /// `CASE_WORDS` per workgroup
    pub cases: Vec<u32>,
    /// `IN_WORDS` per invocation
    pub inputs: Vec<u32>,
}

/// The workgroup shapes every op is run with: (S,1,1), (2S,1,1), 3×5×7 (a partial last subgroup
/// unless S divides 105, which no power of two > 1 does) and a 2D shape (8, 2S/8, 1).
pub fn shapes(size: SubgroupSize) -> Vec<WorkgroupShape> {
    let s = size.get();
    let two_d = if s >= 4 {
        WorkgroupShape::new(8, (2 * s / 8).max(1), 1)
    } else {
        WorkgroupShape::new(2, 2, 1)
    };
    [
        WorkgroupShape::new(s, 1, 1),
        WorkgroupShape::new(2 * s, 1, 1),
        WorkgroupShape::new(3, 5, 7),
        two_d,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A 64-bit seed for one (kernel, shape, size) from the run's seed.
pub fn batch_seed(seed: u64, spec: &KernelSpec, shape: WorkgroupShape, size: SubgroupSize) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for b in format!("{}|{}|{}", spec.name(), shape, size).bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01B3);
    }
    h
}

/// Generates `subgroups_per_op` subgroups' worth of workgroups for every op of `spec`.
pub fn generate(
    spec: &KernelSpec,
    shape: WorkgroupShape,
    size: SubgroupSize,
    subgroups_per_op: usize,
    seed: u64,
) -> Batch {
    let mut rng = XorShiftRng::seed_from_u64(batch_seed(seed, spec, shape, size));
    let inv = shape.invocations() as usize;
    let per_wg = inv.div_ceil(size.lanes());
    // Clustered ops have one entry per cluster size: share the op's cases among them.
    let mut plan: Vec<usize> = Vec::new();
    for (i, e) in spec.entries.iter().enumerate() {
        let siblings = spec.entries.iter().filter(|x| x.op == e.op).count();
        let subgroups = subgroups_per_op.div_ceil(siblings);
        for _ in 0..subgroups.div_ceil(per_wg).max(1) {
            plan.push(i);
        }
    }
    let mut cases = Vec::with_capacity(plan.len() * CASE_WORDS);
    let mut inputs = Vec::with_capacity(plan.len() * inv * IN_WORDS);
    for &i in &plan {
        let e = spec.entries[i];
        let (uarg, ballot) = uniform_args(&mut rng, e, size);
        cases.push(i as u32);
        cases.push(uarg);
        cases.extend_from_slice(&ballot);
        let preds = predicates(&mut rng, inv, size.lanes());
        let lane_args = lane_args(&mut rng, e, size, inv);
        let values = values(&mut rng, e, spec.ty, inv);
        for k in 0..inv {
            inputs.push(preds[k] as u32);
            inputs.push(lane_args[k]);
            inputs.extend_from_slice(&values[k]);
        }
    }
    Batch {
        shape,
        workgroups: plan.len() as u32,
        cases,
        inputs,
    }
}

type R = XorShiftRng;

fn uniform_args(rng: &mut R, e: Entry, size: SubgroupSize) -> (u32, [u32; 4]) {
    let s = size.get();
    let uarg = match e.op {
        Op::Broadcast => {
            if rng.random_bool(0.9) {
                rng.random_range(0..s)
            } else {
                rng.random_range(s..s + 8)
            }
        }
        Op::QuadBroadcast => rng.random_range(0..4),
        Op::Rotate | Op::ClusteredRotate => {
            if rng.random_bool(0.7) {
                rng.random_range(0..2 * s)
            } else {
                rng.random()
            }
        }
        _ => 0,
    };
    let full: u128 = size.full_mask().0;
    let ballot: u128 = match rng.random_range(0..20) {
        0..=11 => rng.random(),
        12..=13 => 0,
        14..=16 => 1u128 << rng.random_range(0..s),
        17 if s < 128 => rng.random::<u128>() & !full,
        _ => !0,
    };
    let w = [
        ballot as u32,
        (ballot >> 32) as u32,
        (ballot >> 64) as u32,
        (ballot >> 96) as u32,
    ];
    (uarg, w)
}

/// Per-invocation predicates for one workgroup: full, random density, one lane per subgroup-sized
/// block, or alternating (block and lane guesses assume a linear layout; the device's actual
/// active lanes are recorded anyway).
fn predicates(rng: &mut R, inv: usize, s: usize) -> Vec<bool> {
    match rng.random_range(0..20) {
        0..=9 => vec![true; inv],
        10..=15 => {
            let p: f64 = rng.random_range(0.3..0.95);
            (0..inv).map(|_| rng.random_bool(p)).collect()
        }
        16..=17 => {
            let lane = rng.random_range(0..s);
            (0..inv).map(|k| k % s == lane).collect()
        }
        _ => {
            let parity = rng.random_range(0..2);
            (0..inv).map(|k| k % 2 == parity).collect()
        }
    }
}

/// One lane argument: mostly in range, sometimes past the subgroup (undefined cases), rarely any u32.
fn lane_arg(rng: &mut R, op: Op, s: u32) -> u32 {
    let r = rng.random_range(0..100);
    match op {
        Op::Shuffle | Op::BallotBitExtract => match r {
            0..=84 => rng.random_range(0..s),
            85..=94 => rng.random_range(s..s + 4),
            _ => rng.random(),
        },
        Op::ShuffleXor => match r {
            0..=84 => rng.random_range(0..s),
            85..=94 => rng.random_range(s..2 * s),
            _ => rng.random(),
        },
        Op::ShuffleUp | Op::ShuffleDown => match r {
            0..=49 => rng.random_range(0..s.min(4)),
            50..=79 => rng.random_range(0..s),
            80..=94 => rng.random_range(s..2 * s),
            _ => rng.random(),
        },
        _ => 0,
    }
}

fn lane_args(rng: &mut R, e: Entry, size: SubgroupSize, inv: usize) -> Vec<u32> {
    if rng.random_bool(0.5) {
        vec![lane_arg(rng, e.op, size.get()); inv]
    } else {
        (0..inv).map(|_| lane_arg(rng, e.op, size.get())).collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Bits,
    AllEqual,
    AddLike,
    MulLike,
    MinMax,
}

fn class_of(op: Op, ty: ValueType) -> Class {
    let float = ty.scalar_type().is_float();
    match op {
        Op::AllEqual => Class::AllEqual,
        Op::Arithmetic(b, _) | Op::Clustered(b) if float => match b {
            BinOp::Add => Class::AddLike,
            BinOp::Mul => Class::MulLike,
            _ => Class::MinMax,
        },
        _ => Class::Bits,
    }
}

fn draw_value(rng: &mut R, sc: ScalarType, n: usize, class: Class) -> [u32; 8] {
    let mut w = [0u32; 8];
    for c in 0..n {
        let b = scalar_bits(rng, sc, class);
        w[2 * c] = b as u32;
        w[2 * c + 1] = (b >> 32) as u32;
    }
    w
}

/// Value words (2 per component, 8 in all) for every invocation of one workgroup.
fn values(rng: &mut R, e: Entry, ty: Option<ValueType>, inv: usize) -> Vec<[u32; 8]> {
    let Some(ty) = ty else {
        return vec![[0; 8]; inv];
    };
    let class = class_of(e.op, ty);
    let (sc, n) = (ty.scalar_type(), ty.components());
    if class == Class::AllEqual {
        // subgroupAllEqual needs equal values to be interesting: all equal, all but one, or random.
        let base = draw_value(rng, sc, n, class);
        return match rng.random_range(0..10) {
            0..=3 => vec![base; inv],
            4..=5 => {
                let odd = rng.random_range(0..inv);
                let other = draw_value(rng, sc, n, class);
                (0..inv)
                    .map(|k| if k == odd { other } else { base })
                    .collect()
            }
            _ => (0..inv).map(|_| draw_value(rng, sc, n, class)).collect(),
        };
    }
    (0..inv).map(|_| draw_value(rng, sc, n, class)).collect()
}

fn float_bits(sc: ScalarType, x: f64) -> u64 {
    match sc {
        ScalarType::F16 => f16::from_f64(x).to_bits() as u64,
        ScalarType::F32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

fn signed(rng: &mut R, x: f64) -> f64 {
    if rng.random_bool(0.5) {
        x
    } else {
        -x
    }
}

fn scalar_bits(rng: &mut R, sc: ScalarType, class: Class) -> u64 {
    let width = sc.bits();
    let mask = if width == 64 {
        !0u64
    } else {
        (1u64 << width) - 1
    };
    if sc == ScalarType::Bool {
        return rng.random_range(0..2u64);
    }
    if !sc.is_float() {
        return match rng.random_range(0..10) {
            0..=2 => rng.random_range(0..16u64),
            3 => mask, // -1 / the maximum
            _ => rng.random::<u64>() & mask,
        };
    }
    match class {
        // Finite, |x| <= 100: no sum of 128 terms overflows even f16 (65504) in any order.
        Class::AddLike => {
            let scale = if rng.random_bool(0.25) { 0.01 } else { 1.0 };
            float_bits(sc, rng.random_range(-100.0..100.0) * scale)
        }
        // 1 ± 1/16: a product of 128 terms stays within f16's range in any order.
        Class::MulLike => {
            let x = 1.0 + rng.random_range(-1.0..1.0) / 16.0;
            let x = signed(rng, x);
            float_bits(sc, x)
        }
        Class::MinMax => match rng.random_range(0..20) {
            0..=1 => float_bits(sc, f64::NAN),
            2 => {
                let x = signed(rng, f64::INFINITY);
                float_bits(sc, x)
            }
            3 => {
                let x = signed(rng, 0.0);
                float_bits(sc, x)
            }
            _ => float_bits(sc, rng.random_range(-1000.0..1000.0)),
        },
        Class::Bits | Class::AllEqual => match rng.random_range(0..10) {
            0..=4 => float_bits(sc, rng.random_range(-1000.0..1000.0)),
            5..=6 => rng.random::<u64>() & mask,
            7 => {
                let x = signed(rng, 0.0);
                float_bits(sc, x)
            }
            8 => {
                let x = signed(rng, f64::INFINITY);
                float_bits(sc, x)
            }
            _ => {
                // A NaN with a random payload (quiet bit set so it stays a NaN everywhere).
                let (exp, quiet) = match sc {
                    ScalarType::F16 => (0x7c00u64, 0x0200u64),
                    ScalarType::F32 => (0x7f80_0000, 0x0040_0000),
                    _ => (0x7ff0_0000_0000_0000, 0x0008_0000_0000_0000),
                };
                let payload = rng.random::<u64>() & (quiet - 1);
                (exp | quiet | payload) & mask
            }
        },
    }
}
