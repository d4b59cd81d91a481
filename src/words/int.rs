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
