//! The semantics of SPIR-V's scalar instructions, once, on raw bit patterns: integers as the low
//! `w` bits of a `u64`, floats as their IEEE bits, bools as 0/1. The executor's lane loops and the
//! specialization-constant folder both call these, so each rule is written once.
//!
//! Floats are computed correctly rounded in their own precision and never contracted (the
//! reference a device is compared against); where the Vulkan precision rules let a device differ
//! (division, the transcendental functions, contraction of a multiply into an add, denormals), the
//! executor marks the result *inexact* instead of guessing the device's choice. `f16` arithmetic is
//! done in `f64` and rounded once, which is exact for add, sub and mul and correctly rounded for div
//! (53 ≥ 2·11 + 2 bits: double rounding is innocuous).
//!
//! Results the specs leave undefined are returned as `Err(Undefined…)` with the rule.

use crate::spirv::inst::{Conv, FloatBin, FloatCmp};
use crate::spirv::types::Scalar;
use half::f16;

pub use crate::words::float::{f_get, f_put};
pub use crate::words::int::{int_bin, int_cmp, int_un, mask, sext, ScalarUndef};

/// Is the float of width `w` a denormal (subnormal, non-zero)?
#[inline(always)]
pub fn is_denormal(w: u8, x: u64) -> bool {
    // Exponent bits zero and significand not: the magnitude's bits are 1 ..= the significand
    // mask, so magnitude − 1 (wrapping: zero goes to the top) is below the mask — one compare.
    // At 16 and 32 bits in 32-bit arithmetic: a lane loop of them vectorises (no 64-bit compare
    // in the baseline x86-64 vector set).
    let (abs_mask, man_mask) = match w {
        16 => (0x7fffu32, 0x03ffu32),
        32 => (0x7fff_ffff, 0x007f_ffff),
        _ => return (x & 0x7fff_ffff_ffff_ffff).wrapping_sub(1) < 0x000f_ffff_ffff_ffff,
    };
    (x as u32 & abs_mask).wrapping_sub(1) < man_mask
}

/// A float binary operation, correctly rounded and uncontracted.
#[inline(always)]
pub fn float_bin(op: FloatBin, w: u8, a: u64, b: u64) -> u64 {
    if w == 32 {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        let r = match op {
            FloatBin::Add => x + y,
            FloatBin::Sub => x - y,
            FloatBin::Mul => x * y,
            FloatBin::Div => x / y,
            FloatBin::Rem => x % y,
            FloatBin::Mod => fmod_floor32(x, y),
        };
        return r.to_bits() as u64;
    }
    let (x, y) = (f_get(w, a), f_get(w, b));
    let r = match op {
        FloatBin::Add => x + y,
        FloatBin::Sub => x - y,
        FloatBin::Mul => x * y,
        FloatBin::Div => x / y,
        FloatBin::Rem => x % y,
        FloatBin::Mod => {
            let r = x % y;
            if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                r + y
            } else {
                r
            }
        }
    };
    f_put(w, r)
}

#[inline(always)]
fn fmod_floor32(x: f32, y: f32) -> f32 {
    // OpFMod: the sign of a non-zero result is the sign of the divisor.
    let r = x % y;
    if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
        r + y
    } else {
        r
    }
}

/// A float comparison.
#[inline(always)]
pub fn float_cmp(op: FloatCmp, w: u8, a: u64, b: u64) -> bool {
    let (x, y) = if w == 32 {
        (
            f32::from_bits(a as u32) as f64,
            f32::from_bits(b as u32) as f64,
        )
    } else {
        (f_get(w, a), f_get(w, b))
    };
    let un = x.is_nan() || y.is_nan();
    match op {
        FloatCmp::OrdEq => !un && x == y,
        FloatCmp::UnordEq => un || x == y,
        FloatCmp::OrdNe => !un && x != y,
        FloatCmp::UnordNe => un || x != y,
        FloatCmp::OrdLt => !un && x < y,
        FloatCmp::UnordLt => un || x < y,
        FloatCmp::OrdGt => !un && x > y,
        FloatCmp::UnordGt => un || x > y,
        FloatCmp::OrdLe => !un && x <= y,
        FloatCmp::UnordLe => un || x <= y,
        FloatCmp::OrdGe => !un && x >= y,
        FloatCmp::UnordGe => un || x >= y,
    }
}

/// A float negation (flips the sign bit, NaNs included).
#[inline(always)]
pub fn float_neg(w: u8, a: u64) -> u64 {
    a ^ (1u64 << (w - 1))
}

/// A conversion between scalar types.
#[inline(always)]
pub fn convert(op: Conv, from: Scalar, to: Scalar, a: u64) -> Result<u64, ScalarUndef> {
    let fw = from.bits() as u8;
    let tw = to.bits() as u8;
    Ok(match op {
        Conv::UConvert => a & mask(fw) & mask(tw),
        Conv::SConvert => sext(fw, a) as u64 & mask(tw),
        Conv::FConvert => f_put(tw, f_get(fw, a)),
        Conv::QuantizeF16 => {
            // OpQuantizeToF16: to f16 and back; too small becomes a signed zero, too large inf.
            let h = f16::from_f32(f32::from_bits(a as u32));
            let h = if h.to_bits() & 0x7c00 == 0 && h.to_bits() & 0x03ff != 0 {
                if h.is_sign_negative() {
                    f16::NEG_ZERO
                } else {
                    f16::ZERO
                }
            } else {
                h
            };
            h.to_f32().to_bits() as u64
        }
        Conv::UToF => f_put_u(tw, a & mask(fw)),
        Conv::SToF => f_put_i(tw, sext(fw, a)),
        Conv::FToU | Conv::FToS => {
            let x = f_get(fw, a).trunc();
            let signed = op == Conv::FToS;
            let (lo, hi) = if signed {
                (-(2f64.powi(tw as i32 - 1)), 2f64.powi(tw as i32 - 1))
            } else {
                (0.0, 2f64.powi(tw as i32))
            };
            // Vulkan: the result is undefined when the value does not fit the integer type.
            if x.is_nan() || x < lo || x >= hi {
                return Err(ScalarUndef::ConversionOutOfRange);
            }
            if signed {
                (x as i64) as u64 & mask(tw)
            } else {
                x as u64
            }
        }
    })
}

/// An unsigned integer rounded to nearest into a float of width `w` (one rounding).
fn f_put_u(w: u8, x: u64) -> u64 {
    match w {
        32 => (x as f32).to_bits() as u64,
        64 => (x as f64).to_bits(),
        // u64 → f16 through f64 could round twice; f16's range ends at 65504, so any integer that
        // needs rounding in f64 (> 2^53) is infinity in f16 either way.
        _ => f16::from_f64(x as f64).to_bits() as u64,
    }
}

/// A signed integer rounded to nearest into a float of width `w` (one rounding).
fn f_put_i(w: u8, x: i64) -> u64 {
    match w {
        32 => (x as f32).to_bits() as u64,
        64 => (x as f64).to_bits(),
        _ => f16::from_f64(x as f64).to_bits() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unordered_comparisons_are_true_with_a_nan() {
        let nan = f32::NAN.to_bits() as u64;
        let one = 1f32.to_bits() as u64;
        assert!(float_cmp(FloatCmp::UnordEq, 32, nan, one));
        assert!(!float_cmp(FloatCmp::OrdEq, 32, nan, one));
        assert!(float_cmp(FloatCmp::OrdNe, 32, 0, one));
    }

    #[test]
    fn float_to_int_out_of_range_is_undefined() {
        let f = Scalar::Float { width: 32 };
        let u = Scalar::Int {
            width: 32,
            signed: false,
        };
        assert_eq!(
            convert(Conv::FToU, f, u, (-1.0f32).to_bits() as u64),
            Err(ScalarUndef::ConversionOutOfRange)
        );
        assert_eq!(convert(Conv::FToU, f, u, 3.9f32.to_bits() as u64), Ok(3));
        // OpConvertFToS: a signed 32-bit integer holds −2³¹ … 2³¹ − 1
        let i = Scalar::Int {
            width: 32,
            signed: true,
        };
        let big = 2f32.powi(31);
        assert_eq!(
            convert(Conv::FToS, f, i, big.to_bits() as u64),
            Err(ScalarUndef::ConversionOutOfRange)
        );
        assert_eq!(
            convert(Conv::FToS, f, i, (-big).to_bits() as u64),
            Ok(0x8000_0000)
        );
        assert_eq!(
            convert(Conv::FToS, f, i, (-2.0 * big).to_bits() as u64),
            Err(ScalarUndef::ConversionOutOfRange)
        );
    }

    /// SPIR-V OpFDiv, OpFRem ("the sign of a non-0 result comes from Operand 1") and OpFMod
    /// ("the sign … comes from Operand 2") at 16 and 64 bits, as at 32: 7 / 2 = 3.5, −7 rem 2 =
    /// −1, −7 mod 2 = 1, 7 mod −2 = −1 (values worked by hand, every one exact in both widths).
    #[test]
    fn division_remainder_and_modulo_at_16_and_64_bits() {
        for w in [16u8, 32, 64] {
            let f = |x: f64| f_put(w, x);
            let op = |o, x, y| f_get(w, float_bin(o, w, f(x), f(y)));
            assert_eq!(op(FloatBin::Div, 7.0, 2.0), 3.5, "{w}");
            assert_eq!(op(FloatBin::Div, 1.0, 8.0), 0.125, "{w}");
            assert_eq!(op(FloatBin::Rem, -7.0, 2.0), -1.0, "{w}");
            assert_eq!(op(FloatBin::Mod, -7.0, 2.0), 1.0, "{w}");
            assert_eq!(op(FloatBin::Mod, 7.0, -2.0), -1.0, "{w}");
            assert_eq!(op(FloatBin::Sub, 7.0, 2.0), 5.0, "{w}");
            assert_eq!(op(FloatBin::Mul, 7.0, 2.0), 14.0, "{w}");
        }
    }

    #[test]
    fn f16_arithmetic_rounds_once() {
        let a = f_put(16, 1.0);
        let b = f_put(16, 2f64.powi(-11)); // half an ulp of 1.0: ties to even, stays 1.0
        assert_eq!(float_bin(FloatBin::Add, 16, a, b), a);
        assert!(is_denormal(16, 1));
        assert!(!is_denormal(32, 0));
    }

    /// IEEE 754 subnormals (the Rust and `half` definitions) at every width: every f16, the f32
    /// and f64 boundaries (±0, the smallest and largest subnormal, the smallest normal, ±∞, NaN),
    /// and bits above the width ignored.
    #[test]
    fn is_denormal_is_subnormal_at_every_width() {
        for b in 0..=u16::MAX {
            let want = half::f16::from_bits(b).classify() == std::num::FpCategory::Subnormal;
            assert_eq!(is_denormal(16, b as u64), want, "f16 {b:#06x}");
            assert_eq!(
                is_denormal(16, b as u64 | 0xdead_0000),
                want,
                "f16 {b:#06x}, high bits"
            );
        }
        let f32s = [
            0u32,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x7f80_0000,
            0x7fc0_0000,
            0x3f80_0000,
        ];
        for b in f32s.into_iter().flat_map(|b| [b, b | 0x8000_0000]) {
            let want = f32::from_bits(b).is_subnormal();
            assert_eq!(is_denormal(32, b as u64), want, "f32 {b:#010x}");
            assert_eq!(
                is_denormal(32, b as u64 | 0xffff_0000_0000),
                want,
                "f32 {b:#010x}"
            );
        }
        let f64s = [
            0u64,
            1,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x7ff0_0000_0000_0000,
        ];
        for b in f64s.into_iter().flat_map(|b| [b, b | 1 << 63]) {
            assert_eq!(
                is_denormal(64, b),
                f64::from_bits(b).is_subnormal(),
                "f64 {b:#x}"
            );
        }
    }
}
