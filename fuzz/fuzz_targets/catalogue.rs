//! Fuzz target 2: arbitrary operation, type, subgroup size, active mask, lane values and arguments
//! through the op catalogue (`lockstep::model::evaluate`), against a naive per-lane
//! implementation written here from the spec texts, separately from the model.
//!
//! The naive version computes each lane on its own, straight from the rule (no shared gather or
//! fold code), with its own float helpers (f16 by hand). Results must agree lane by lane:
//! inactive ↔ inactive, undefined ↔ undefined with the same reason, defined ↔ defined with the
//! same bits — except float min/max, compared as numbers (±0 interchangeable, the model's
//! Exactness::MinMaxFloat), and float add/mul where any NaN matches any NaN.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use lockstep::model::{
    catalogue, evaluate, ArgKind, Args, Ballot, BinOp, LaneArg, LaneMask, MaskKind, Op, OpCall,
    Outcome, Reason, ScalarType, Scan, SubgroupSize, Value, ValueType,
};

// ---- naive scalar arithmetic on raw bits ----

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // subnormal: man * 2^-24
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
    } else if exp == 31 {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | (((exp - 15 + 127) as u32) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// Round-to-nearest-even f32 → f16, by hand.
fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00; // overflow (65520 rounds up to inf)
    }
    if a < 6.103_515_6e-5 {
        // subnormal range: multiples of 2^-24
        let q = a * 16_777_216.0; // exact in f32 for these magnitudes
        let r = q.round_ties_even();
        return sign | r as u16;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127;
    let man = b & 0x7f_ffff;
    let mut m = man >> 13;
    let rest = man & 0x1fff;
    let mut he = (e + 15) as u32;
    if rest > 0x1000 || (rest == 0x1000 && m & 1 == 1) {
        m += 1;
        if m == 0x400 {
            m = 0;
            he += 1;
        }
    }
    if he >= 31 {
        return sign | 0x7c00;
    }
    sign | ((he as u16) << 10) | m as u16
}

fn is_nan(t: ScalarType, b: u64) -> bool {
    match t {
        ScalarType::F16 => (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0,
        ScalarType::F32 => f32::from_bits(b as u32).is_nan(),
        ScalarType::F64 => f64::from_bits(b).is_nan(),
        _ => false,
    }
}

fn as_f64(t: ScalarType, b: u64) -> f64 {
    match t {
        ScalarType::F16 => f16_to_f32(b as u16) as f64,
        ScalarType::F32 => f32::from_bits(b as u32) as f64,
        _ => f64::from_bits(b),
    }
}

fn width(t: ScalarType) -> u32 {
    match t {
        ScalarType::Bool => 1,
        ScalarType::I8 | ScalarType::U8 => 8,
        ScalarType::I16 | ScalarType::U16 | ScalarType::F16 => 16,
        ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 32,
        _ => 64,
    }
}

fn mask_bits(t: ScalarType, b: u64) -> u64 {
    let w = width(t);
    if w == 64 {
        b
    } else {
        b & ((1u64 << w) - 1)
    }
}

fn signed(t: ScalarType, b: u64) -> i64 {
    let w = width(t);
    ((b << (64 - w)) as i64) >> (64 - w)
}

fn is_signed(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
    )
}

fn is_float(t: ScalarType) -> bool {
    matches!(t, ScalarType::F16 | ScalarType::F32 | ScalarType::F64)
}

/// `a op b` on one component.
fn binop(op: BinOp, t: ScalarType, a: u64, b: u64) -> u64 {
    if is_float(t) {
        let fl = |f32op: fn(f32, f32) -> f32, f64op: fn(f64, f64) -> f64| -> u64 {
            match t {
                ScalarType::F16 => {
                    f32_to_f16(f32op(f16_to_f32(a as u16), f16_to_f32(b as u16))) as u64
                }
                ScalarType::F32 => {
                    f32op(f32::from_bits(a as u32), f32::from_bits(b as u32)).to_bits() as u64
                }
                _ => f64op(f64::from_bits(a), f64::from_bits(b)).to_bits(),
            }
        };
        return match op {
            BinOp::Add => fl(|x, y| x + y, |x, y| x + y),
            BinOp::Mul => fl(|x, y| x * y, |x, y| x * y),
            // "if for any two values of them is a NaN, the other is chosen"
            BinOp::Min | BinOp::Max => {
                if is_nan(t, a) {
                    b
                } else if is_nan(t, b) {
                    a
                } else {
                    let (x, y) = (as_f64(t, a), as_f64(t, b));
                    let take_a = if op == BinOp::Min { x <= y } else { x >= y };
                    if take_a {
                        a
                    } else {
                        b
                    }
                }
            }
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
        };
    }
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Min | BinOp::Max => {
            let less = if is_signed(t) {
                signed(t, a) < signed(t, b)
            } else {
                mask_bits(t, a) < mask_bits(t, b)
            };
            if (op == BinOp::Min) == less {
                a
            } else {
                b
            }
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
    };
    mask_bits(t, r)
}

fn identity(op: BinOp, t: ScalarType) -> u64 {
    let ones = mask_bits(t, !0);
    match (op, t) {
        (BinOp::Add | BinOp::Or | BinOp::Xor, _) => 0,
        (BinOp::And, _) => ones,
        (BinOp::Mul, ScalarType::F16) => 0x3c00,
        (BinOp::Mul, ScalarType::F32) => 1f32.to_bits() as u64,
        (BinOp::Mul, ScalarType::F64) => 1f64.to_bits(),
        (BinOp::Mul, _) => 1,
        (BinOp::Min, ScalarType::F16) => 0x7c00,
        (BinOp::Min, ScalarType::F32) => f32::INFINITY.to_bits() as u64,
        (BinOp::Min, ScalarType::F64) => f64::INFINITY.to_bits(),
        (BinOp::Max, ScalarType::F16) => 0xfc00,
        (BinOp::Max, ScalarType::F32) => f32::NEG_INFINITY.to_bits() as u64,
        (BinOp::Max, ScalarType::F64) => f64::NEG_INFINITY.to_bits(),
        (BinOp::Min, ScalarType::Bool) => 1,
        (BinOp::Max, ScalarType::Bool) => 0,
        (BinOp::Min, _) => {
            if is_signed(t) {
                ones >> 1
            } else {
                ones
            }
        }
        (BinOp::Max, _) => {
            if is_signed(t) {
                mask_bits(t, 1u64 << (width(t) - 1))
            } else {
                0
            }
        }
    }
}

// ---- the naive per-lane rules ----

struct Case {
    size: u32,
    active: u128,
    ty: Option<ValueType>,
    values: Vec<Value>,
    arg: Option<LaneArg>,
    cluster: u32,
    quad: u32,
    ballot: u128,
}

impl Case {
    fn act(&self, l: u32) -> bool {
        l < 128 && (self.active >> l) & 1 == 1
    }
    fn arg(&self, l: u32) -> u32 {
        match &self.arg {
            Some(LaneArg::Uniform(v)) => *v,
            Some(LaneArg::PerLane(v)) => v[l as usize],
            None => 0,
        }
    }
    fn low(&self) -> u128 {
        if self.size >= 128 {
            !0
        } else {
            (1u128 << self.size) - 1
        }
    }
    fn ballot_words(b: u128) -> Value {
        Value::of([
            b as u32,
            (b >> 32) as u32,
            (b >> 64) as u32,
            (b >> 96) as u32,
        ])
    }

    /// Reads lane `src` for lane `l` (a gather): the rule shared by every shuffle-like op.
    fn read(&self, src: u64) -> Outcome {
        if src >= self.size as u64 {
            return Outcome::Undefined(Reason::SourceOutOfRange {
                source: src,
                size: self.size,
            });
        }
        if !self.act(src as u32) {
            return Outcome::Undefined(Reason::SourceInactive { source: src as u32 });
        }
        Outcome::Defined(self.values[src as usize])
    }

    /// Folds the values of `lanes` (increasing) component-wise.
    fn fold(&self, op: BinOp, lanes: &[u32], start_identity: bool) -> Outcome {
        let ty = self.ty.expect("a value op");
        let t = ty.scalar_type();
        let n = ty.components();
        let mut acc: Option<Vec<u64>> = if start_identity && lanes.is_empty() {
            Some(vec![identity(op, t); n])
        } else {
            None
        };
        for &l in lanes {
            let x = self.values[l as usize].bits().to_vec();
            acc = Some(match acc {
                None => x,
                Some(a) => (0..n).map(|i| binop(op, t, a[i], x[i])).collect(),
            });
        }
        let acc = acc.unwrap_or_else(|| vec![identity(op, t); n]);
        if is_float(t) && matches!(op, BinOp::Min | BinOp::Max) {
            if let Some(c) = acc.iter().position(|b| is_nan(t, *b)) {
                return Outcome::Undefined(Reason::AllNaN { component: c as u8 });
            }
        }
        Outcome::Defined(Value::from_bits(ty, &acc))
    }

    fn lane(&self, op: Op, l: u32) -> Outcome {
        if l >= self.size || !self.act(l) {
            return Outcome::Inactive;
        }
        let n = self.size;
        let active: Vec<u32> = (0..n).filter(|&i| self.act(i)).collect();
        let first = active[0];
        let truthy = |i: u32| self.values[i as usize].component_bits(0) != 0;
        match op {
            Op::Elect => Outcome::Defined(Value::bool(l == first)),
            Op::SubgroupSize => Outcome::Defined(Value::u32(n)),
            Op::InvocationId => Outcome::Defined(Value::u32(l)),
            Op::LaneMask(k) => {
                let mut b = 0u128;
                for i in 0..n {
                    let on = match k {
                        MaskKind::Eq => i == l,
                        MaskKind::Ge => i >= l,
                        MaskKind::Gt => i > l,
                        MaskKind::Le => i <= l,
                        MaskKind::Lt => i < l,
                    };
                    if on {
                        b |= 1 << i;
                    }
                }
                Outcome::Defined(Self::ballot_words(b))
            }
            Op::All => Outcome::Defined(Value::bool(active.iter().all(|&i| truthy(i)))),
            Op::Any => Outcome::Defined(Value::bool(active.iter().any(|&i| truthy(i)))),
            Op::AllEqual => {
                // Every pair of active lanes, component by component (the model scans against the
                // first active lane). Three readings of float equality — ordered, unordered (NaN
                // equals anything), bitwise — must agree for a defined answer; a NaN-free component
                // whose values differ makes every reading say "unequal".
                let ty = self.ty.expect("value");
                let t = ty.scalar_type();
                let (mut numeric, mut bitwise, mut nan, mut differs) = (true, true, false, false);
                for c in 0..ty.components() {
                    let col: Vec<u64> = active
                        .iter()
                        .map(|&i| self.values[i as usize].component_bits(c))
                        .collect();
                    let col_nan = is_float(t) && col.iter().any(|&a| is_nan(t, a));
                    nan |= col_nan;
                    for &a in &col {
                        for &b in &col {
                            bitwise &= a == b;
                            let eq = if is_float(t) {
                                as_f64(t, a) == as_f64(t, b)
                            } else {
                                a == b
                            };
                            numeric &= eq;
                            differs |= !col_nan && !eq;
                        }
                    }
                }
                if differs {
                    Outcome::Defined(Value::bool(false))
                } else if nan {
                    Outcome::Undefined(Reason::AllEqualWithNaN)
                } else if numeric != bitwise {
                    Outcome::Undefined(Reason::AllEqualSignedZeros)
                } else {
                    Outcome::Defined(Value::bool(numeric))
                }
            }
            Op::Ballot => {
                let b = active
                    .iter()
                    .filter(|&&i| truthy(i))
                    .fold(0u128, |b, &i| b | 1 << i);
                Outcome::Defined(Self::ballot_words(b))
            }
            Op::InverseBallot => Outcome::Defined(Value::bool((self.ballot >> l) & 1 == 1)),
            Op::BallotBitExtract => {
                let i = self.arg(l);
                if i >= n {
                    Outcome::Undefined(Reason::IndexOutOfRange { index: i, size: n })
                } else {
                    Outcome::Defined(Value::bool((self.ballot >> i) & 1 == 1))
                }
            }
            Op::BallotBitCount(scan) => {
                let b = self.ballot & self.low();
                let count = (0..n)
                    .filter(|&i| (b >> i) & 1 == 1)
                    .filter(|&i| match scan {
                        Scan::Reduce => true,
                        Scan::Inclusive => i <= l,
                        Scan::Exclusive => i < l,
                    })
                    .count();
                Outcome::Defined(Value::u32(count as u32))
            }
            Op::BallotFindLsb | Op::BallotFindMsb => {
                let set: Vec<u32> = (0..n).filter(|&i| (self.ballot >> i) & 1 == 1).collect();
                let r = if op == Op::BallotFindLsb {
                    set.first()
                } else {
                    set.last()
                };
                match r {
                    Some(&x) => Outcome::Defined(Value::u32(x)),
                    None => Outcome::Undefined(Reason::NoBitSet),
                }
            }
            Op::Broadcast => self.read(self.arg(0) as u64),
            Op::BroadcastFirst => self.read(first as u64),
            Op::Shuffle => self.read(self.arg(l) as u64),
            Op::ShuffleXor => self.read((l ^ self.arg(l)) as u64),
            Op::ShuffleUp => {
                let d = self.arg(l);
                if d > l {
                    Outcome::Undefined(Reason::DeltaExceedsId { delta: d, id: l })
                } else {
                    self.read((l - d) as u64)
                }
            }
            Op::ShuffleDown => self.read(l as u64 + self.arg(l) as u64),
            Op::QuadBroadcast => self.read(((l & !3) + self.quad) as u64),
            Op::QuadSwap(d) => self.read((l ^ d.xor()) as u64),
            Op::Rotate | Op::ClusteredRotate => {
                let g = if op == Op::Rotate { n } else { self.cluster };
                let src = (l.wrapping_add(self.arg(0)) & (g - 1)) + (l & !(g - 1));
                self.read(src as u64)
            }
            Op::Arithmetic(b, scan) => {
                let lanes: Vec<u32> = active
                    .iter()
                    .copied()
                    .filter(|&i| match scan {
                        Scan::Reduce => true,
                        Scan::Inclusive => i <= l,
                        Scan::Exclusive => i < l,
                    })
                    .collect();
                self.fold(b, &lanes, scan == Scan::Exclusive)
            }
            Op::Clustered(b) => {
                let c = self.cluster;
                let lo = l / c * c;
                let lanes: Vec<u32> = active
                    .iter()
                    .copied()
                    .filter(|&i| i >= lo && i < lo + c)
                    .collect();
                self.fold(b, &lanes, false)
            }
            Op::NumSubgroups | Op::SubgroupId => Outcome::Inactive,
        }
    }
}

fn same(op: Op, ty: Option<ValueType>, a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Inactive, Outcome::Inactive) => true,
        (Outcome::Undefined(x), Outcome::Undefined(y)) => x == y,
        (Outcome::Defined(x), Outcome::Defined(y)) => {
            if x.ty() != y.ty() {
                return false;
            }
            let t = x.ty().scalar_type();
            let float_result = ty.is_some_and(|v| is_float(v.scalar_type())) && is_float(t);
            (0..x.ty().components()).all(|c| {
                let (p, q) = (x.component_bits(c), y.component_bits(c));
                match op {
                    Op::Arithmetic(BinOp::Min | BinOp::Max, _)
                    | Op::Clustered(BinOp::Min | BinOp::Max)
                        if float_result =>
                    {
                        as_f64(t, p) == as_f64(t, q)
                    }
                    Op::Arithmetic(BinOp::Add | BinOp::Mul, _)
                    | Op::Clustered(BinOp::Add | BinOp::Mul)
                        if float_result =>
                    {
                        p == q || (is_nan(t, p) && is_nan(t, q))
                    }
                    _ => p == q,
                }
            })
        }
        _ => false,
    }
}

/// Interesting float bit patterns, to reach NaN, ±0, ±inf, subnormals and rounding.
fn value_bits(u: &mut Unstructured, t: ScalarType) -> Result<u64> {
    if is_float(t) && u.ratio(1u8, 2u8)? {
        let special: &[f64] = &[
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            3.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-40,
            65504.0,
            1e30,
        ];
        let x = special[u.choose_index(special.len())?];
        return Ok(match t {
            ScalarType::F16 => f32_to_f16(x as f32) as u64,
            ScalarType::F32 => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        });
    }
    if u.ratio(1u8, 3u8)? {
        return Ok(u.int_in_range(0u64..=4)?);
    }
    u.arbitrary()
}

fn run(u: &mut Unstructured) -> Result<()> {
    let ops: Vec<_> = catalogue()
        .iter()
        .filter(|o| !o.is_workgroup_level())
        .collect();
    let info = ops[u.choose_index(ops.len())?];
    let size = 1u32 << u.int_in_range(0u32..=7)?;
    let sz = SubgroupSize::new(size as u64).expect("power of two");
    let low = if size >= 128 {
        !0u128
    } else {
        (1u128 << size) - 1
    };
    let mut active: u128 = u.arbitrary::<u128>()? & low;
    if active == 0 {
        active = 1;
    }
    let ty = if info.has_value() {
        let types = info.types.types();
        Some(types[u.choose_index(types.len())?])
    } else {
        None
    };
    let mut values = Vec::new();
    if let Some(t) = ty {
        for _ in 0..size {
            let bits: Vec<u64> = (0..t.components())
                .map(|_| value_bits(u, t.scalar_type()))
                .collect::<Result<_>>()?;
            values.push(Value::from_bits(t, &bits));
        }
    }
    let mut args = Args::default();
    let mut case = Case {
        size,
        active,
        ty,
        values: values.clone(),
        arg: None,
        cluster: 1,
        quad: 0,
        ballot: 0,
    };
    let small = |u: &mut Unstructured| -> Result<u32> {
        Ok(if u.ratio(3u8, 4u8)? {
            u.int_in_range(0..=size * 2)?
        } else {
            u.arbitrary()?
        })
    };
    for &k in info.args {
        match k {
            ArgKind::Id { .. } | ArgKind::Mask | ArgKind::Delta { .. } | ArgKind::Index => {
                let a = if k.uniform() || u.ratio(1u8, 2u8)? {
                    LaneArg::Uniform(small(u)?)
                } else {
                    LaneArg::PerLane((0..size).map(|_| small(u)).collect::<Result<_>>()?)
                };
                case.arg = Some(a.clone());
                match k {
                    ArgKind::Id { .. } => args.id = Some(a),
                    ArgKind::Mask => args.mask = Some(a),
                    ArgKind::Delta { .. } => args.delta = Some(a),
                    _ => args.index = Some(a),
                }
            }
            ArgKind::QuadIndex => {
                case.quad = u.int_in_range(0..=3)?;
                args.id = Some(LaneArg::Uniform(case.quad));
            }
            ArgKind::Cluster => {
                case.cluster = 1 << u.int_in_range(0..=size.trailing_zeros())?;
                args.cluster = Some(case.cluster as u64);
            }
            ArgKind::Ballot => {
                case.ballot = u.arbitrary()?;
                args.ballot = Some(Ballot(case.ballot));
            }
            ArgKind::Workgroup => return Ok(()),
        }
    }
    let call = OpCall::new(info, sz, args).expect("arguments built to the op's rules");
    let model = evaluate(&call, LaneMask(active), &values).expect("valid operands");
    assert_eq!(model.len(), size as usize);
    let result_type = info.result.result_type(ty);
    for l in 0..size {
        let naive = case.lane(info.op, l);
        let got = &model[l as usize];
        if let Outcome::Defined(v) = got {
            assert_eq!(v.ty(), result_type, "{}: result type", info.name);
        }
        assert!(
            same(info.op, ty, got, &naive),
            "{} size {size} type {:?} active {active:#x} lane {l}: model {got:?}, naive {naive:?}",
            info.name,
            ty.map(|t| t.to_string())
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
