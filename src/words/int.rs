//! SPIR-V's integer and boolean scalar semantics on raw bit patterns (integers as the low `w`
//! bits of a `u64`, bools as 0/1), once: the interpreter's lanes, its specialization-constant
//! folding and the device runner's reading of a module ([`crate::words::facts`]) all call these.
//! Results the specs leave undefined are `Err` with the rule.

/// Integer binary operations (on bit patterns of width `w`; signed ones say so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum IntBin {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    Shl,
    ShrL,
    ShrA,
    And,
    Or,
    Xor,
}

/// Integer comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum IntCmp {
    Eq,
    Ne,
    UGt,
    SGt,
    UGe,
    SGe,
    ULt,
    SLt,
    ULe,
    SLe,
}

/// Integer unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum IntUn {
    Neg,
    Not,
    BitCount,
    BitReverse,
}

/// Why a scalar result is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarUndef {
    /// integer division or remainder by zero
    DivideByZero,
    /// signed division overflow (`INT_MIN / -1`)
    SignedOverflow,
    /// a shift by at least the bit width
    ShiftOutOfRange {
        /// the shift amount
        shift: u64,
        /// the bit width
        width: u8,
    },
    /// a float converted to an integer type that cannot represent it
    ConversionOutOfRange,
    /// a bit-field offset + count beyond the width
    BitFieldOutOfRange,
    /// `OpPtrDiff` of pointers into different objects
    PointersApart,
    /// an accumulating integer dot product whose products or sums overflow its result type
    DotProductOverflow,
}

impl std::fmt::Display for ScalarUndef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScalarUndef::DivideByZero => f.write_str("integer division by zero"),
            ScalarUndef::SignedOverflow => f.write_str("signed division overflow (INT_MIN / -1)"),
            ScalarUndef::ShiftOutOfRange { shift, width } => {
                write!(f, "shift by {shift} >= bit width {width}")
            }
            ScalarUndef::ConversionOutOfRange => {
                f.write_str("float to integer conversion of a value the integer type cannot hold")
            }
            ScalarUndef::BitFieldOutOfRange => f.write_str("bit field offset + count > bit width"),
            ScalarUndef::DotProductOverflow => f.write_str(
                "an integer dot product with saturating accumulation whose products or sums overflow the result type before the accumulation (SPV_KHR_integer_dot_product: \"the result of the instruction is undefined\")",
            ),
            ScalarUndef::PointersApart => f.write_str(
                "OpPtrDiff of pointers into different objects (SPIR-V: both must point into the same array)",
            ),
        }
    }
}

/// Mask of the low `w` bits.
#[inline(always)]
pub fn mask(w: u8) -> u64 {
    if w >= 64 {
        !0
    } else {
        (1u64 << w) - 1
    }
}

/// Sign-extends the low `w` bits.
#[inline(always)]
pub fn sext(w: u8, x: u64) -> i64 {
    let s = 64 - w as u32;
    ((x << s) as i64) >> s
}

/// One operand of an integer dot product: `n` components of `cw` bits (signed or not), or with
/// `packed` four 8-bit components in the low 32 bits of the one word, component 0 lowest.
#[derive(Clone, Copy, Debug)]
pub struct DotOperand<'a> {
    /// the components' words (one word when packed)
    pub words: &'a [u64],
    /// each component's width in bits (8 when packed)
    pub cw: u8,
    /// the components are signed
    pub signed: bool,
    /// the packed 4×8-bit form
    pub packed: bool,
}

impl DotOperand<'_> {
    /// The components, extended to 128 bits.
    fn components(&self) -> impl Iterator<Item = i128> + '_ {
        let ext = |x: u64, w: u8, s: bool| -> i128 {
            if s {
                sext(w, x) as i128
            } else {
                (x & mask(w)) as i128
            }
        };
        let per = if self.packed { 4 } else { 1 };
        self.words
            .iter()
            .flat_map(move |&x| (0..per).map(move |k| ext(x >> (8 * k), self.cw, self.signed)))
    }
}

/// The integer dot product of `a` and `b` (SPV_KHR_integer_dot_product: `OpSDot`, `OpUDot`,
/// `OpSUDot`), in a result of `w` bits: "the low-order N bits of the correct result R, where N is
/// the result width and R is computed with enough precision to avoid overflow and underflow". With
/// an accumulator (`(value, signed)`: the `…AccSat` forms) the sum plus the accumulator,
/// saturated to the result's range (signed or unsigned as the accumulator is) — and there "if any
/// of the multiplications or additions, with the exception of the final accumulation, overflow or
/// underflow, the result of the instruction is undefined". The additions' order is the
/// implementation's, and every subset of the products is the start of some order, so a sum
/// overflows in some order exactly when a product, the sum of the positive products or that of
/// the negative ones leaves the result's range.
pub fn int_dot(
    a: DotOperand,
    b: DotOperand,
    w: u8,
    acc: Option<(u64, bool)>,
) -> Result<u64, ScalarUndef> {
    let Some((c, signed)) = acc else {
        // the low bits of the exact sum: wrapping in i128 keeps them
        let r = a
            .components()
            .zip(b.components())
            .fold(0i128, |s, (x, y)| s.wrapping_add(x.wrapping_mul(y)));
        return Ok((r as u64) & mask(w));
    };
    let (lo, hi) = if signed {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    };
    let (mut pos, mut neg) = (0i128, 0i128);
    for (x, y) in a.components().zip(b.components()) {
        // components of at most 64 bits: a product that overflows i128 is far out of range
        let p = x.checked_mul(y).filter(|p| (lo..=hi).contains(p));
        let Some(p) = p else {
            return Err(ScalarUndef::DotProductOverflow);
        };
        // each of at most 16 terms is within the range, so the sums stay far inside i128
        if p > 0 {
            pos += p;
        } else {
            neg += p;
        }
    }
    if pos > hi || neg < lo {
        return Err(ScalarUndef::DotProductOverflow);
    }
    let c = if signed {
        sext(w, c) as i128
    } else {
        (c & mask(w)) as i128
    };
    Ok(((pos + neg + c).clamp(lo, hi) as u64) & mask(w))
}

/// An integer binary operation.
#[inline(always)]
pub fn int_bin(op: IntBin, w: u8, a: u64, b: u64) -> Result<u64, ScalarUndef> {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    Ok(match op {
        IntBin::Add => a.wrapping_add(b) & m,
        IntBin::Sub => a.wrapping_sub(b) & m,
        IntBin::Mul => a.wrapping_mul(b) & m,
        IntBin::UDiv => {
            if b == 0 {
                return Err(ScalarUndef::DivideByZero);
            }
            a / b
        }
        IntBin::UMod => {
            if b == 0 {
                return Err(ScalarUndef::DivideByZero);
            }
            a % b
        }
        IntBin::SDiv | IntBin::SRem | IntBin::SMod => {
            let (x, y) = (sext(w, a), sext(w, b));
            if y == 0 {
                return Err(ScalarUndef::DivideByZero);
            }
            if y == -1 && x == sext(w, 1u64 << (w - 1)) {
                return Err(ScalarUndef::SignedOverflow);
            }
            let r = match op {
                IntBin::SDiv => x / y,
                IntBin::SRem => x % y,
                _ => {
                    // OpSMod: the sign of the result is the sign of the divisor.
                    let r = x % y;
                    if r != 0 && ((r < 0) != (y < 0)) {
                        r + y
                    } else {
                        r
                    }
                }
            };
            r as u64 & m
        }
        IntBin::Shl | IntBin::ShrL | IntBin::ShrA => {
            // SPIR-V: "the result is undefined if Shift is greater than or equal to the bit width".
            if b >= w as u64 {
                return Err(ScalarUndef::ShiftOutOfRange { shift: b, width: w });
            }
            match op {
                IntBin::Shl => (a << b) & m,
                IntBin::ShrL => a >> b,
                _ => (sext(w, a) >> b) as u64 & m,
            }
        }
        IntBin::And => a & b,
        IntBin::Or => a | b,
        IntBin::Xor => a ^ b,
    })
}

/// An integer comparison.
#[inline(always)]
pub fn int_cmp(op: IntCmp, w: u8, a: u64, b: u64) -> bool {
    let m = mask(w);
    let (ua, ub) = (a & m, b & m);
    let (sa, sb) = (sext(w, ua), sext(w, ub));
    match op {
        IntCmp::Eq => ua == ub,
        IntCmp::Ne => ua != ub,
        IntCmp::UGt => ua > ub,
        IntCmp::SGt => sa > sb,
        IntCmp::UGe => ua >= ub,
        IntCmp::SGe => sa >= sb,
        IntCmp::ULt => ua < ub,
        IntCmp::SLt => sa < sb,
        IntCmp::ULe => ua <= ub,
        IntCmp::SLe => sa <= sb,
    }
}

/// An integer unary operation.
#[inline(always)]
pub fn int_un(op: IntUn, w: u8, a: u64) -> u64 {
    let m = mask(w);
    let a = a & m;
    match op {
        IntUn::Neg => a.wrapping_neg() & m,
        IntUn::Not => !a & m,
        IntUn::BitCount => a.count_ones() as u64,
        IntUn::BitReverse => a.reverse_bits() >> (64 - w as u32),
    }
}

/// Bool as bits.
#[inline(always)]
pub fn b(x: bool) -> u64 {
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPV_KHR_integer_dot_product: the packed 4×8-bit form has component 0 in the low byte; a
    /// result without an accumulator is the low bits of the exact sum; the `…AccSat` forms add
    /// the accumulator and clamp to the result type's range. Values worked by hand.
    #[test]
    fn integer_dot_products_extend_by_signedness_wrap_to_the_result_and_saturate_with_an_accumulator(
    ) {
        let op = |words: &'static [u64], cw: u8, signed: bool, packed: bool| DotOperand {
            words,
            cw,
            signed,
            packed,
        };
        // (1, −2, 3, −4) and (5, 6, 7, 8), packed
        let a = &[0xFC03_FE01u64][..];
        let b = &[0x0807_0605u64][..];
        let m32 = |x: i64| x as u64 & mask(32);
        // signed: 5 − 12 + 21 − 32 = −18
        let d = |a, b| int_dot(a, b, 32, None).unwrap();
        assert_eq!(d(op(a, 8, true, true), op(b, 8, true, true)), m32(-18));
        // unsigned: 1·5 + 254·6 + 3·7 + 252·8 = 3566
        assert_eq!(d(op(a, 8, false, true), op(b, 8, false, true)), 3566);
        // signed × unsigned: (1 − 2 + 3 − 4) · 255 = −510
        let ff = &[0xFFFF_FFFFu64][..];
        assert_eq!(d(op(a, 8, true, true), op(ff, 8, false, true)), m32(-510));
        // an 8-bit result of (100, 100)·(100, 100) = 20000: its low 8 bits, 32
        let h = &[100u64, 100][..];
        let r = int_dot(op(h, 8, true, false), op(h, 8, true, false), 8, None);
        assert_eq!(r, Ok(32));
        // saturating: −18 + i32::MIN clamps to i32::MIN; 2147483392 − 18 does not clamp
        let s = |x, y| int_dot(op(a, 8, true, true), op(b, 8, true, true), 32, Some((x, y)));
        assert_eq!(s(0x8000_0000, true), Ok(0x8000_0000));
        assert_eq!(s(0x7FFF_FF00, true), Ok(m32(0x7FFF_FF00 - 18)));
        let u = |x| {
            int_dot(
                op(a, 8, false, true),
                op(b, 8, false, true),
                32,
                Some((x, false)),
            )
        };
        assert_eq!(u(0xFFFF_FFF0), Ok(0xFFFF_FFFF));
        assert_eq!(u(10), Ok(3576));
        // 2147483392 + 3566 is past i32::MAX
        let su = |x| {
            int_dot(
                op(a, 8, false, true),
                op(b, 8, false, true),
                32,
                Some((x, true)),
            )
        };
        assert_eq!(su(0x7FFF_FF00), Ok(0x7FFF_FFFF));
        // ... but a product or a sum past the result's range before the accumulation is
        // undefined: 100·100 in 8 bits; 0x10000·0x8000 = 2^31 in a signed 32-bit result; and
        // 2^30 + 2^30 (positive products, whatever order the additions take), even though
        // the whole sum 2^30 + 2^30 − 2^30 fits
        assert_eq!(
            int_dot(
                op(h, 8, true, false),
                op(h, 8, true, false),
                8,
                Some((0, true))
            ),
            Err(ScalarUndef::DotProductOverflow)
        );
        let big = &[0x1_0000u64][..];
        let half = &[0x8000u64][..];
        assert_eq!(
            int_dot(
                op(big, 32, true, false),
                op(half, 32, true, false),
                32,
                Some((0, true))
            ),
            Err(ScalarUndef::DotProductOverflow)
        );
        let v = &[0x4000_0000u64, 0x4000_0000, 0xC000_0000][..];
        let ones = &[1u64, 1, 1][..];
        assert_eq!(
            int_dot(
                op(v, 32, true, false),
                op(ones, 32, true, false),
                32,
                Some((0, true))
            ),
            Err(ScalarUndef::DotProductOverflow)
        );
        // without an accumulator the same sum is its low 32 bits: 2^30
        assert_eq!(
            int_dot(op(v, 32, true, false), op(ones, 32, true, false), 32, None),
            Ok(0x4000_0000)
        );
    }

    #[test]
    fn shifts_by_the_width_or_more_are_undefined() {
        // SPIR-V OpShiftLeftLogical: "The result is undefined if Shift is greater than or equal to
        // the bit width of the components of Base."
        assert_eq!(
            int_bin(IntBin::Shl, 32, 1, 32),
            Err(ScalarUndef::ShiftOutOfRange {
                shift: 32,
                width: 32
            })
        );
        assert_eq!(int_bin(IntBin::Shl, 32, 1, 31), Ok(0x8000_0000));
        assert_eq!(int_bin(IntBin::ShrA, 8, 0x80, 7), Ok(0xff));
    }

    #[test]
    fn smod_takes_the_sign_of_the_divisor_and_srem_of_the_dividend() {
        // SPIR-V OpSMod / OpSRem: -7 mod 3 = 2, -7 rem 3 = -1.
        let m7 = (-7i64) as u64 & mask(32);
        assert_eq!(int_bin(IntBin::SMod, 32, m7, 3), Ok(2));
        assert_eq!(
            int_bin(IntBin::SRem, 32, m7, 3),
            Ok((-1i64) as u64 & mask(32))
        );
        assert_eq!(
            int_bin(IntBin::SDiv, 32, 0x8000_0000, 0xffff_ffff),
            Err(ScalarUndef::SignedOverflow)
        );
        assert_eq!(
            int_bin(IntBin::UDiv, 32, 1, 0),
            Err(ScalarUndef::DivideByZero)
        );
    }
}
