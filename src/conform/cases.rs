//! Random conformance cases: for one case group and one workgroup shape, the per-workgroup case
//! words (opcode, uniform argument, ballot operand) and the per-invocation inputs (predicate, lane
//! argument, value bits).
//!
//! Arguments are drawn by their [`ArgKind`]: lane ids, masks, deltas and bit indices mostly in
//! range and sometimes past the subgroup (the undefined cases). Values are drawn by how the result
//! is compared ([`Exactness`]): bit-exact ops get arbitrary bits (NaN payloads, -0.0, infinities and
//! denormals included — they must move bit for bit); float add/mul get finite values that cannot
//! overflow in any summation order; float min/max get normal values with NaNs, infinities and
//! signed zeros but no denormals (a device may flush those in arithmetic).

use crate::conform::glsl::{
    case, case_record, input_record, CaseGroup, Entry, CASE_WORDS, IN_WORDS,
};
use crate::model::{
    ArgKind, BinOp, Exactness, Op, ScalarType, SubgroupSize, ValueType, WorkgroupShape,
};
use half::f16;
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Everything one dispatch needs.
#[derive(Clone, Debug, PartialEq, Eq)]
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

impl Batch {
    /// An empty batch of `shape`.
    pub fn empty(shape: WorkgroupShape) -> Batch {
        Batch {
            shape,
            workgroups: 0,
            cases: Vec::new(),
            inputs: Vec::new(),
        }
    }

    /// Appends `other`'s workgroups (of the same shape), adding `opcode_base` to their opcodes:
    /// the cases of one group become those of its entries in a kernel of several groups.
    pub fn append(&mut self, other: &Batch, opcode_base: u32) {
        debug_assert_eq!(self.shape, other.shape);
        for c in other.cases.chunks(CASE_WORDS) {
            let mut c = c.to_vec();
            c[case::OPCODE] += opcode_base;
            self.cases.extend_from_slice(&c);
        }
        self.inputs.extend_from_slice(&other.inputs);
        self.workgroups += other.workgroups;
    }
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

/// A 64-bit seed for one (case group, shape, size) from the run's seed.
pub(crate) fn batch_seed(
    seed: u64,
    group: &CaseGroup,
    shape: WorkgroupShape,
    size: SubgroupSize,
) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for b in format!("{}|{}|{}", group.name(), shape, size).bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01B3);
    }
    h
}

/// Generates `subgroups_per_op` subgroups' worth of workgroups for every op of `group` (opcodes
/// index the group's entries).
pub fn generate(
    group: &CaseGroup,
    shape: WorkgroupShape,
    size: SubgroupSize,
    subgroups_per_op: usize,
    seed: u64,
) -> Batch {
    let mut rng = XorShiftRng::seed_from_u64(batch_seed(seed, group, shape, size));
    let inv = shape.invocations() as usize;
    let per_wg = inv.div_ceil(size.lanes());
    // Clustered ops have one entry per cluster size: share the op's cases among them.
    let mut plan: Vec<usize> = Vec::new();
    for (i, e) in group.entries.iter().enumerate() {
        let siblings = group.entries.iter().filter(|x| x.op == e.op).count();
        let subgroups = subgroups_per_op.div_ceil(siblings);
        for _ in 0..subgroups.div_ceil(per_wg).max(1) {
            plan.push(i);
        }
    }
    let mut cases = Vec::with_capacity(plan.len() * CASE_WORDS);
    let mut inputs = Vec::with_capacity(plan.len() * inv * IN_WORDS);
    for &i in &plan {
        let e = group.entries[i];
        let (uarg, ballot) = uniform_args(&mut rng, e, size);
        cases.extend_from_slice(&case_record(i as u32, uarg, ballot));
        let preds = predicates(&mut rng, inv, size.lanes());
        let lane_args = lane_args(&mut rng, e, size, inv);
        let values = values(&mut rng, e, inv);
        for k in 0..inv {
            inputs.extend_from_slice(&input_record(preds[k], lane_args[k], values[k]));
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
    let mut uarg = 0;
    for &kind in e.info().args {
        match kind {
            // A broadcast id: mostly a lane of the subgroup, sometimes past it.
            ArgKind::Id { uniform: true } => {
                uarg = if rng.random_bool(0.9) {
                    rng.random_range(0..s)
                } else {
                    rng.random_range(s..s + 8)
                }
            }
            ArgKind::QuadIndex => uarg = rng.random_range(0..4),
            // A rotation: mostly within two turns, sometimes any uint (the addition wraps).
            ArgKind::Delta { uniform: true } => {
                uarg = if rng.random_bool(0.7) {
                    rng.random_range(0..2 * s)
                } else {
                    rng.random()
                }
            }
            ArgKind::Id { uniform: false }
            | ArgKind::Delta { uniform: false }
            | ArgKind::Mask
            | ArgKind::Index
            | ArgKind::Cluster
            | ArgKind::Ballot
            | ArgKind::Workgroup => {}
        }
    }
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

/// One lane argument of the op's per-lane kind: mostly in range, sometimes past the subgroup
/// (undefined cases), rarely any u32. The first draw is made for every op (0 without such an
/// argument), so that a seed gives the cases it always gave.
fn lane_arg(rng: &mut R, e: Entry, s: u32) -> u32 {
    let r = rng.random_range(0..100);
    let kind = e
        .info()
        .args
        .iter()
        .copied()
        .find(|k| k.is_lane_arg() && !k.uniform());
    match kind {
        Some(ArgKind::Id { .. } | ArgKind::Index) => match r {
            0..=84 => rng.random_range(0..s),
            85..=94 => rng.random_range(s..s + 4),
            _ => rng.random(),
        },
        Some(ArgKind::Mask) => match r {
            0..=84 => rng.random_range(0..s),
            85..=94 => rng.random_range(s..2 * s),
            _ => rng.random(),
        },
        Some(ArgKind::Delta { .. }) => match r {
            0..=49 => rng.random_range(0..s.min(4)),
            50..=79 => rng.random_range(0..s),
            80..=94 => rng.random_range(s..2 * s),
            _ => rng.random(),
        },
        Some(ArgKind::QuadIndex | ArgKind::Cluster | ArgKind::Ballot | ArgKind::Workgroup)
        | None => 0,
    }
}

fn lane_args(rng: &mut R, e: Entry, size: SubgroupSize, inv: usize) -> Vec<u32> {
    if rng.random_bool(0.5) {
        vec![lane_arg(rng, e, size.get()); inv]
    } else {
        (0..inv).map(|_| lane_arg(rng, e, size.get())).collect()
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

/// How an entry's values are drawn, from how its result is compared.
fn class_of(e: Entry, ty: ValueType) -> Class {
    // subgroupAllEqual compares the lanes' values: independent draws are almost never equal.
    if e.op == Op::AllEqual {
        return Class::AllEqual;
    }
    match e.info().exactness(Some(ty)) {
        Exactness::Tolerance if e.op.binop() == Some(BinOp::Mul) => Class::MulLike,
        Exactness::Tolerance => Class::AddLike,
        Exactness::MinMaxFloat => Class::MinMax,
        Exactness::Bits => Class::Bits,
    }
}

fn draw_value(rng: &mut R, sc: ScalarType, n: usize, class: Class) -> [u64; 4] {
    let mut v = [0u64; 4];
    for c in v.iter_mut().take(n) {
        *c = scalar_bits(rng, sc, class);
    }
    v
}

/// Value bits (per component) for every invocation of one workgroup.
fn values(rng: &mut R, e: Entry, inv: usize) -> Vec<[u64; 4]> {
    let Some(ty) = e.ty else {
        return vec![[0; 4]; inv];
    };
    let class = class_of(e, ty);
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
