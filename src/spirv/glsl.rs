//! The GLSL.std.450 extended instructions compute shaders use, per lane.
//!
//! Functions the Vulkan precision tables require exactly (rounding to integral values, abs, sign,
//! min/max/clamp, step, the integer bit searches, half-float and double packing) are computed
//! exactly; the others are computed in f64 and rounded once, and the executor marks them inexact
//! ([`Ext::exact`]). Inputs for which the GLSL.std.450 specification says "the result is undefined"
//! (sqrt of a negative number, min/max with a NaN, clamp with min > max, …) give `Some(reason)`.

use crate::spirv::inst::Ext;
use crate::spirv::scalar::{f_get, f_put, mask, sext};
use crate::spirv::types::Scalar;
use half::f16;

/// The result of one lane: `Ok(None)` defined, `Ok(Some(why))` undefined by the spec.
pub type ExtResult = Result<Option<&'static str>, String>;

/// The per-lane helpers of every group of functions: `fl(k, c)` reads component `c` of operand
/// `k` as a float, `put(v)` writes one, `undef(why)` records the first reason a result is undefined
/// (in `undefined`).
macro_rules! lane_fns {
    ($w:ident, $x:ident, $fl:ident, $put:ident, $undefined:ident, $undef:ident) => {
        #[allow(unused_variables)]
        let $fl = |k: usize, c: usize| f_get($w, $x[k][c]);
        #[allow(unused_variables)]
        let $put = |v: f64| f_put($w, v);
        #[allow(unused_mut)]
        let mut $undefined: Option<&'static str> = None;
        #[allow(unused_variables, unused_mut)]
        let mut $undef = |why: &'static str| {
            $undefined.get_or_insert(why);
        };
    };
}

/// Evaluates `f` on operands `x[k][c]` (operand k, component c) of `n` components of scalar `s`,
/// writing the result's slots into `out`.
pub fn eval(f: Ext, s: Scalar, n: u32, x: &[[u64; 16]; 3], out: &mut [u64; 16]) -> ExtResult {
    let w = s.bits() as u8;
    let n = n as usize;
    use Ext::*;
    Ok(match f {
        Round | RoundEven | Trunc | FAbs | FSign | Floor | Ceil | Fract | Radians | Degrees
        | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
        | Exp | Log | Exp2 | Log2 | Sqrt | InverseSqrt => float1(f, w, n, x, out),
        Atan2 | Pow | FMin | FMax | NMin | NMax | Step | Ldexp | FClamp | NClamp | FMix
        | SmoothStep | Fma => float2(f, w, n, x, out),
        SAbs | SSign | FindILsb | FindSMsb | FindUMsb | UMin | UMax | SMin | SMax | UClamp
        | SClamp | Length | Distance | Normalize => int_and_length(f, w, n, x, out),
        Determinant | MatrixInverse | ModfStruct | FrexpStruct | FaceForward | Reflect
        | Refract | Cross => matrix_and_geometry(f, w, n, x, out),
        PackHalf2x16 | UnpackHalf2x16 | PackUnorm4x8 | PackSnorm4x8 | PackUnorm2x16
        | PackSnorm2x16 | UnpackUnorm4x8 | UnpackSnorm4x8 | UnpackUnorm2x16 | UnpackSnorm2x16
        | PackDouble2x32 | UnpackDouble2x32 => {
            packing(f, x, out);
            None
        }
    })
}

/// Component-wise functions of one float operand.
fn float1(
    f: Ext,
    w: u8,
    n: usize,
    x: &[[u64; 16]; 3],
    out: &mut [u64; 16],
) -> Option<&'static str> {
    lane_fns!(w, x, fl, put, undefined, undef);
    use Ext::*;
    match f {
        Round | RoundEven | Trunc | FAbs | FSign | Floor | Ceil | Fract | Radians | Degrees
        | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh
        | Exp | Log | Exp2 | Log2 | Sqrt | InverseSqrt => {
            for c in 0..n {
                let v = fl(0, c);
                let r = match f {
                    Round => v.round(),
                    RoundEven => v.round_ties_even(),
                    Trunc => v.trunc(),
                    FAbs => v.abs(),
                    FSign => {
                        if v > 0.0 {
                            1.0
                        } else if v < 0.0 {
                            -1.0
                        } else {
                            v
                        }
                    }
                    Floor => v.floor(),
                    Ceil => v.ceil(),
                    Fract => v - v.floor(),
                    Radians => v * (std::f64::consts::PI / 180.0),
                    Degrees => v * (180.0 / std::f64::consts::PI),
                    Sin => v.sin(),
                    Cos => v.cos(),
                    Tan => v.tan(),
                    Asin | Acos => {
                        if v.abs() > 1.0 {
                            undef("asin/acos of |x| > 1 (GLSL.std.450: result undefined)");
                        }
                        if f == Asin {
                            v.asin()
                        } else {
                            v.acos()
                        }
                    }
                    Atan => v.atan(),
                    Sinh => v.sinh(),
                    Cosh => v.cosh(),
                    Tanh => v.tanh(),
                    Asinh => v.asinh(),
                    Acosh => {
                        if v < 1.0 {
                            undef("acosh of x < 1 (GLSL.std.450: result undefined)");
                        }
                        v.acosh()
                    }
                    Atanh => {
                        if v.abs() >= 1.0 {
                            undef("atanh of |x| >= 1 (GLSL.std.450: result undefined)");
                        }
                        v.atanh()
                    }
                    Exp => v.exp(),
                    Log | Log2 => {
                        if v <= 0.0 {
                            undef("log of x <= 0 (GLSL.std.450: result undefined)");
                        }
                        if f == Log {
                            v.ln()
                        } else {
                            v.log2()
                        }
                    }
                    Exp2 => v.exp2(),
                    Sqrt => {
                        if v < 0.0 {
                            undef("sqrt of x < 0 (GLSL.std.450: result undefined)");
                        }
                        v.sqrt()
                    }
                    _ => {
                        if v <= 0.0 {
                            undef("inversesqrt of x <= 0 (GLSL.std.450: result undefined)");
                        }
                        1.0 / v.sqrt()
                    }
                };
                // Exactly rounded functions must round in the operand's own precision: f32 ops on
                // an f32-exact input give f32-exact results through f64 (floor, abs, …).
                out[c] = put(r);
            }
        }
        _ => unreachable!("{f:?} is not routed to float1"),
    }
    undefined
}

/// Component-wise functions of two or three float operands.
fn float2(
    f: Ext,
    w: u8,
    n: usize,
    x: &[[u64; 16]; 3],
    out: &mut [u64; 16],
) -> Option<&'static str> {
    lane_fns!(w, x, fl, put, undefined, undef);
    use Ext::*;
    match f {
        Atan2 | Pow | FMin | FMax | NMin | NMax | Step | Ldexp => {
            for c in 0..n {
                let (a, b) = (fl(0, c), fl(1, c));
                out[c] = match f {
                    Atan2 => {
                        if a == 0.0 && b == 0.0 {
                            undef("atan(0, 0) (GLSL.std.450 Atan2: result undefined)");
                        }
                        put(a.atan2(b))
                    }
                    Pow => {
                        if a < 0.0 || (a == 0.0 && b <= 0.0) {
                            undef("pow(x, y) with x < 0, or x = 0 and y <= 0 (GLSL.std.450: result undefined)");
                        }
                        put(a.powf(b))
                    }
                    FMin | FMax => {
                        if a.is_nan() || b.is_nan() {
                            undef("FMin/FMax with a NaN operand (GLSL.std.450: result undefined)");
                        }
                        // y if y < x else x (FMin); exact: pick the operand's own bits.
                        let pick_b = if f == FMin {
                            min_lt(b, a)
                        } else {
                            min_lt(a, b)
                        };
                        if pick_b {
                            x[1][c]
                        } else {
                            x[0][c]
                        }
                    }
                    NMin | NMax => {
                        // The non-NaN operand if one is NaN.
                        if a.is_nan() {
                            x[1][c]
                        } else if b.is_nan() {
                            x[0][c]
                        } else {
                            let pick_b = if f == NMin {
                                min_lt(b, a)
                            } else {
                                min_lt(a, b)
                            };
                            if pick_b {
                                x[1][c]
                            } else {
                                x[0][c]
                            }
                        }
                    }
                    Step => put(if b < a { 0.0 } else { 1.0 }),
                    _ => {
                        // Ldexp: x * 2^exp, exp an integer operand (sign-extended to 64 bits by
                        // the caller). GLSL.std.450 Ldexp: "If exp is greater than +128 (single
                        // precision) or +1024 (double precision), the resulting value is
                        // undefined"; so is a product "too large to be represented in the
                        // floating-point type" (it keeps x's bits, so it is representable exactly
                        // when it is at most the type's largest value).
                        let e = x[1][c] as i64;
                        let r = ldexp(a, e);
                        // "If exp is less than -126 (single precision) or -1022 (double
                        // precision), the value returned may be flushed to zero": one of two
                        // values, not pinned down (unless it is zero anyway).
                        let (min_exp, max_exp, largest) = match w {
                            64 => (-1022, 1024, f64::MAX),
                            32 => (-126, 128, f32::MAX as f64),
                            _ => (i64::MIN, i64::MAX, half::f16::MAX.to_f64()),
                        };
                        if e > max_exp {
                            undef("ldexp with exp > 128 (single precision) or 1024 (double) (GLSL.std.450 Ldexp: result undefined)");
                        } else if a.is_finite() && r.abs() > largest {
                            undef("ldexp whose product is too large for its type (GLSL.std.450 Ldexp: result undefined)");
                        } else if e < min_exp && r != 0.0 {
                            undef("ldexp with exp < -126 (single precision) or -1022 (double): the result may be flushed to zero (GLSL.std.450 Ldexp)");
                        }
                        put(r)
                    }
                };
            }
        }
        FClamp | NClamp | FMix | SmoothStep | Fma => {
            for c in 0..n {
                let (a, b, cc) = (fl(0, c), fl(1, c), fl(2, c));
                out[c] = match f {
                    FClamp | NClamp => {
                        if b > cc {
                            undef("clamp with minVal > maxVal (GLSL.std.450: result undefined)");
                        }
                        if f == FClamp && (a.is_nan() || b.is_nan() || cc.is_nan()) {
                            undef("FClamp with a NaN operand (GLSL.std.450: result undefined)");
                        }
                        // min(max(x, minVal), maxVal), picking operand bits; NClamp: "The
                        // semantics used by min() and max() are those of NMin and NMax" — a NaN
                        // operand gives way to the other (FClamp's NaNs are undefined above).
                        let lo = if a.is_nan() || (!b.is_nan() && min_lt(a, b)) {
                            x[1][c]
                        } else {
                            x[0][c]
                        };
                        let lov = f_get(w, lo);
                        if lov.is_nan() || (!cc.is_nan() && min_lt(cc, lov)) {
                            x[2][c]
                        } else {
                            lo
                        }
                    }
                    FMix => put(a * (1.0 - cc) + b * cc),
                    SmoothStep => {
                        if a >= b {
                            undef(
                                "smoothstep with edge0 >= edge1 (GLSL.std.450: result undefined)",
                            );
                        }
                        let t = ((cc - a) / (b - a)).clamp(0.0, 1.0);
                        put(t * t * (3.0 - 2.0 * t))
                    }
                    _ => put(a.mul_add(b, cc)),
                };
            }
        }
        _ => unreachable!("{f:?} is not routed to float2"),
    }
    undefined
}

/// The order FMin, FMax, NMin and NMax (and the clamps built on them) compare by: `<`, with -0
/// below +0 — GLSL.std.450 FMin: "Result is y if y < x, otherwise x. -0 compares less than +0"
/// (FMax, NMin and NMax say the same). Whether a device keeps that sign is another matter: see
/// `Wg::ext` (the sign of zero may be ignored unless `SignedZeroInfNanPreserve`).
fn min_lt(a: f64, b: f64) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && b.is_sign_positive())
}

/// Integer functions, and lengths and normalization of float vectors.
fn int_and_length(
    f: Ext,
    w: u8,
    n: usize,
    x: &[[u64; 16]; 3],
    out: &mut [u64; 16],
) -> Option<&'static str> {
    lane_fns!(w, x, fl, put, undefined, undef);
    use Ext::*;
    match f {
        SAbs | SSign | FindILsb | FindSMsb | FindUMsb => {
            for c in 0..n {
                let v = x[0][c] & mask(w);
                let i = sext(w, v);
                out[c] = match f {
                    SAbs => i.unsigned_abs() & mask(w),
                    SSign => (i.signum() as u64) & mask(w),
                    FindILsb => {
                        if v == 0 {
                            mask(w)
                        } else {
                            v.trailing_zeros() as u64
                        }
                    }
                    FindUMsb => {
                        if v == 0 {
                            mask(w)
                        } else {
                            63 - v.leading_zeros() as u64
                        }
                    }
                    _ => {
                        // Most significant bit that differs from the sign bit.
                        let u = if i < 0 { !v & mask(w) } else { v };
                        if u == 0 {
                            mask(w)
                        } else {
                            63 - u.leading_zeros() as u64
                        }
                    }
                };
            }
        }
        UMin | UMax | SMin | SMax => {
            for c in 0..n {
                let (a, b) = (x[0][c] & mask(w), x[1][c] & mask(w));
                out[c] = match f {
                    UMin => a.min(b),
                    UMax => a.max(b),
                    SMin => {
                        if sext(w, b) < sext(w, a) {
                            b
                        } else {
                            a
                        }
                    }
                    _ => {
                        if sext(w, b) > sext(w, a) {
                            b
                        } else {
                            a
                        }
                    }
                };
            }
        }
        UClamp | SClamp => {
            for c in 0..n {
                let (v, lo, hi) = (x[0][c] & mask(w), x[1][c] & mask(w), x[2][c] & mask(w));
                out[c] = if f == UClamp {
                    if lo > hi {
                        undef("clamp with minVal > maxVal (GLSL.std.450: result undefined)");
                    }
                    v.max(lo).min(hi)
                } else {
                    let (vi, li, hi2) = (sext(w, v), sext(w, lo), sext(w, hi));
                    if li > hi2 {
                        undef("clamp with minVal > maxVal (GLSL.std.450: result undefined)");
                    }
                    (vi.max(li).min(hi2) as u64) & mask(w)
                };
            }
        }
        Length | Distance | Normalize => {
            let mut sq = 0.0;
            let mut diff = [0.0f64; 16];
            for c in 0..n {
                let v = if f == Distance {
                    fl(0, c) - fl(1, c)
                } else {
                    fl(0, c)
                };
                diff[c] = v;
                sq += v * v;
            }
            let len = sq.sqrt();
            match f {
                Normalize => {
                    if len == 0.0 {
                        undef("normalize of a zero vector (division by a zero length)");
                    }
                    for c in 0..n {
                        out[c] = put(diff[c] / len);
                    }
                }
                _ => out[0] = put(len),
            }
        }
        _ => unreachable!("{f:?} is not routed to int_and_length"),
    }
    undefined
}

/// Matrices, struct results and geometric functions.
fn matrix_and_geometry(
    f: Ext,
    w: u8,
    n: usize,
    x: &[[u64; 16]; 3],
    out: &mut [u64; 16],
) -> Option<&'static str> {
    lane_fns!(w, x, fl, put, undefined, undef);
    use Ext::*;
    match f {
        Determinant | MatrixInverse => {
            // A square n×n matrix, column-major: element (column c, row r) in slot c * n + r.
            // Computed in f64 and rounded once; the precision tables give these no bound of their
            // own (derived from other operations): inexact.
            let m: Vec<f64> = (0..n * n).map(|i| fl(0, i)).collect();
            let at = |r: usize, c: usize| m[c * n + r];
            let det = determinant(
                &(0..n)
                    .map(|r| (0..n).map(|c| at(r, c)).collect())
                    .collect::<Vec<Vec<f64>>>(),
            );
            if f == Determinant {
                out[0] = put(det);
            } else {
                if det == 0.0 {
                    undef("inverse of a singular matrix (GLSL.std.450 MatrixInverse: result undefined)");
                }
                // Adjugate over the determinant: each element a cofactor.
                for r in 0..n {
                    for c in 0..n {
                        let minor: Vec<Vec<f64>> = (0..n)
                            .filter(|&i| i != c)
                            .map(|i| (0..n).filter(|&j| j != r).map(|j| at(i, j)).collect())
                            .collect();
                        let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
                        out[c * n + r] = put(sign * determinant(&minor) / det);
                    }
                }
            }
        }
        ModfStruct | FrexpStruct => {
            for c in 0..n {
                let v = fl(0, c);
                if f == ModfStruct {
                    let (frac, whole) = modf(v);
                    out[c] = put(frac);
                    out[n + c] = put(whole);
                } else {
                    let (m, e) = frexp(v);
                    out[c] = put(m);
                    // sign-extended; the caller masks it to the exponent's width
                    out[n + c] = e as u64;
                }
            }
        }
        FaceForward | Reflect | Refract => {
            // GLSL 4.60 §8.5 (GLSL.std.450 FaceForward, Reflect, Refract), in f64, rounded once.
            let dot = |a: usize, b: usize| (0..n).map(|c| fl(a, c) * fl(b, c)).sum::<f64>();
            match f {
                FaceForward => {
                    // N if dot(Nref, I) < 0, else -N
                    let sign = if dot(2, 1) < 0.0 { 1.0 } else { -1.0 };
                    for c in 0..n {
                        out[c] = put(sign * fl(0, c));
                    }
                }
                Reflect => {
                    // I - 2 dot(N, I) N
                    let d = dot(1, 0);
                    for c in 0..n {
                        out[c] = put(fl(0, c) - 2.0 * d * fl(1, c));
                    }
                }
                _ => {
                    // k = 1 - eta² (1 - dot(N, I)²); 0 if k < 0, else eta I - (eta dot(N, I) + √k) N
                    let eta = fl(2, 0);
                    let d = dot(1, 0);
                    let k = 1.0 - eta * eta * (1.0 - d * d);
                    for c in 0..n {
                        out[c] = put(if k < 0.0 {
                            0.0
                        } else {
                            eta * fl(0, c) - (eta * d + k.sqrt()) * fl(1, c)
                        });
                    }
                }
            }
        }
        Cross => {
            let (a, b) = (
                [fl(0, 0), fl(0, 1), fl(0, 2)],
                [fl(1, 0), fl(1, 1), fl(1, 2)],
            );
            out[0] = put(a[1] * b[2] - b[1] * a[2]);
            out[1] = put(a[2] * b[0] - b[2] * a[0]);
            out[2] = put(a[0] * b[1] - b[0] * a[1]);
        }
        _ => unreachable!("{f:?} is not routed to matrix_and_geometry"),
    }
    undefined
}

/// Packing and unpacking (exact: every result is defined).
fn packing(f: Ext, x: &[[u64; 16]; 3], out: &mut [u64; 16]) {
    use Ext::*;
    match f {
        PackHalf2x16 => {
            let lo = f16::from_f32(f32::from_bits(x[0][0] as u32)).to_bits() as u64;
            let hi = f16::from_f32(f32::from_bits(x[0][1] as u32)).to_bits() as u64;
            out[0] = lo | hi << 16;
        }
        UnpackHalf2x16 => {
            let v = x[0][0];
            out[0] = f16::from_bits(v as u16).to_f32().to_bits() as u64;
            out[1] = f16::from_bits((v >> 16) as u16).to_f32().to_bits() as u64;
        }
        PackUnorm4x8 | PackSnorm4x8 | PackUnorm2x16 | PackSnorm2x16 => {
            let (k, bits, signed) = match f {
                PackUnorm4x8 => (4, 8, false),
                PackSnorm4x8 => (4, 8, true),
                PackUnorm2x16 => (2, 16, false),
                _ => (2, 16, true),
            };
            let mut r = 0u64;
            for c in 0..k {
                let v = f32::from_bits(x[0][c] as u32) as f64;
                let q = if signed {
                    let m = ((1u64 << (bits - 1)) - 1) as f64;
                    ((v.clamp(-1.0, 1.0) * m).round() as i64 as u64) & mask(bits)
                } else {
                    let m = ((1u64 << bits) - 1) as f64;
                    (v.clamp(0.0, 1.0) * m).round() as u64
                };
                r |= q << (c as u32 * bits as u32);
            }
            out[0] = r;
        }
        UnpackUnorm4x8 | UnpackSnorm4x8 | UnpackUnorm2x16 | UnpackSnorm2x16 => {
            let (k, bits, signed) = match f {
                UnpackUnorm4x8 => (4, 8u8, false),
                UnpackSnorm4x8 => (4, 8, true),
                UnpackUnorm2x16 => (2, 16, false),
                _ => (2, 16, true),
            };
            for c in 0..k {
                let q = (x[0][0] >> (c as u32 * bits as u32)) & mask(bits);
                let v = if signed {
                    let m = ((1u64 << (bits - 1)) - 1) as f64;
                    (sext(bits, q) as f64 / m).clamp(-1.0, 1.0)
                } else {
                    q as f64 / ((1u64 << bits) - 1) as f64
                };
                out[c] = (v as f32).to_bits() as u64;
            }
        }
        PackDouble2x32 => out[0] = (x[0][0] & 0xffff_ffff) | (x[0][1] << 32),
        UnpackDouble2x32 => {
            out[0] = x[0][0] & 0xffff_ffff;
            out[1] = x[0][0] >> 32;
        }
        _ => unreachable!("{f:?} is not routed to packing"),
    }
}

/// The determinant of a square matrix given as rows (cofactor expansion; at most 4×4 here).
fn determinant(rows: &[Vec<f64>]) -> f64 {
    let n = rows.len();
    match n {
        0 => 1.0,
        1 => rows[0][0],
        2 => rows[0][0] * rows[1][1] - rows[0][1] * rows[1][0],
        _ => (0..n)
            .map(|c| {
                let minor: Vec<Vec<f64>> = rows[1..]
                    .iter()
                    .map(|row| (0..n).filter(|&j| j != c).map(|j| row[j]).collect())
                    .collect();
                let sign = if c % 2 == 0 { 1.0 } else { -1.0 };
                sign * rows[0][c] * determinant(&minor)
            })
            .sum(),
    }
}

/// `modf`: the fractional and the whole part, both with the sign of `v` (GLSL.std.450 Modf);
/// of an infinity, a zero and the infinity; of a NaN, NaN twice.
pub fn modf(v: f64) -> (f64, f64) {
    if v.is_infinite() {
        return (0.0f64.copysign(v), v);
    }
    let whole = v.trunc();
    ((v - whole).copysign(v), whole)
}

/// `frexp`: the significand in [0.5, 1) in magnitude and the exponent, `v = m · 2^e` (GLSL.std.450
/// Frexp); of a zero, an infinity or a NaN, the value itself and 0. Read from the IEEE 754 fields
/// (a subnormal scaled into the normal range first), so it is exact across the whole range —
/// `2^e` itself overflows for the largest doubles.
pub fn frexp(v: f64) -> (f64, i64) {
    if v == 0.0 || !v.is_finite() {
        return (v, 0);
    }
    let (v, scaled) = if v.is_subnormal() {
        (v * 2f64.powi(64), -64)
    } else {
        (v, 0)
    };
    const EXP: u64 = 0x7ff << 52;
    let bits = v.to_bits();
    let biased = ((bits & EXP) >> 52) as i64;
    // the significand with the exponent field of [0.5, 1): 1022 biased
    let m = f64::from_bits((bits & !EXP) | (1022 << 52));
    (m, biased - 1022 + scaled)
}

/// `ldexp`: `v · 2^e` rounded once (GLSL.std.450 Ldexp: "x · 2^exp"), for every `e`: the
/// significand scaled to its final exponent in two exact steps, the last one rounding where the
/// result is subnormal; past the largest double an infinity, below half the smallest a zero, with
/// `v`'s sign. A zero, an infinity or a NaN is itself.
pub fn ldexp(v: f64, e: i64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let (m, ev) = frexp(v);
    let t = ev.saturating_add(e);
    if t > 1024 {
        return f64::INFINITY.copysign(v);
    }
    if t < -1080 {
        return 0f64.copysign(v);
    }
    let t = t as i32;
    // m · 2^(t/2) is a normal double (|t/2| ≤ 540), exact; the second step rounds once
    m * 2f64.powi(t / 2) * 2f64.powi(t - t / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    // GLSL.std.450 Frexp: "x = significand · 2^exponent", the significand's magnitude in
    // [0.5, 1.0); a zero gives 0 and 0. Across the whole double range, the subnormals and the
    // largest values (whose 2^e overflows) among them.
    #[test]
    fn frexp_splits_every_finite_double_into_a_significand_in_a_half_to_one_and_an_exponent() {
        for (v, m, e) in [
            (1.0, 0.5, 1),
            (-3.0, -0.75, 2),
            (0.1, 0.8, -3),
            (1.0 - f64::EPSILON / 2.0, 1.0 - f64::EPSILON / 2.0, 0),
            (2f64.powi(1023), 0.5, 1024),
            (f64::MAX, f64::MAX / 2f64.powi(1023) / 2.0, 1024),
            (f64::MIN_POSITIVE, 0.5, -1021),
            (f64::from_bits(1), 0.5, -1073),
            (-f64::from_bits(3), -0.75, -1072),
        ] {
            assert_eq!(frexp(v), (m, e), "{v:e}");
            // m · 2^e in two exact steps (2^e alone overflows or underflows at the ends)
            let (e1, e2) = (e as i32 / 2, e as i32 - e as i32 / 2);
            assert_eq!(m * 2f64.powi(e1) * 2f64.powi(e2), v, "{v:e}");
        }
        assert_eq!(frexp(0.0), (0.0, 0));
        assert_eq!(frexp(f64::INFINITY), (f64::INFINITY, 0));
    }

    // GLSL.std.450 Ldexp: x · 2^exp, one correctly rounded result whatever the exponent: the
    // smallest subnormal scaled up past 2^1023, a large value scaled into the subnormals (one
    // rounding: 1.1 · 2^-1060 keeps the bits a subnormal holds), overflow and underflow with the
    // sign kept, a zero scaled by any exponent still zero.
    #[test]
    fn ldexp_scales_by_any_power_of_two_rounding_once() {
        let tiny = f64::from_bits(1); // 2^-1074
        assert_eq!(ldexp(tiny, 2090), 2f64.powi(1016));
        assert_eq!(ldexp(tiny, 1074), 1.0);
        assert_eq!(ldexp(1.5, -1), 0.75);
        assert_eq!(ldexp(-3.0, 4), -48.0);
        assert_eq!(ldexp(f64::MAX, -1), f64::MAX / 2.0);
        assert_eq!(ldexp(1.0, 1024), f64::INFINITY);
        assert_eq!(ldexp(-1.0, 5000), f64::NEG_INFINITY);
        assert_eq!(ldexp(1.0, -1075), 0.0);
        assert_eq!(ldexp(1.5, -1075), tiny); // 0.75 ulp of the subnormals: rounds up
        assert!(ldexp(-1.0, -4000).is_sign_negative() && ldexp(-1.0, -4000) == 0.0);
        assert_eq!(ldexp(0.0, 5000), 0.0);
        // 1.1 · 2^-1060: subnormal with 14 significant bits; the exact value rounded once
        let v = 1.1f64 * 2f64.powi(-1000);
        let want = f64::from_bits(((1.1f64 * 2f64.powi(14)).round()) as u64);
        assert_eq!(ldexp(v, -60), want);
    }

    fn f32s(v: &[f32]) -> [[u64; 16]; 3] {
        let mut x = [[0u64; 16]; 3];
        for (k, a) in v.iter().enumerate() {
            x[k][0] = a.to_bits() as u64;
        }
        x
    }

    // GLSL.std.450, the functions of one float operand, each by its definition: a value inside
    // its domain gives the function's value (the constants are the functions' values from
    // tables, rounded to f32; Round of 2.7 because which way Round takes 0.5 is the
    // implementation's), and a value outside it — the domain each definition names: "Result is
    // undefined if |x| > 1" (Asin, Acos), "x < 1" (Acosh), "|x| ≥ 1" (Atanh), "x ≤ 0" (Log, Log2,
    // InverseSqrt), "x < 0" (Sqrt) — an undefined result with its reason. Two components per
    // call: the in-domain value and its negation or a second point, so each component is
    // computed from its own operand.
    #[test]
    fn every_one_operand_float_function_is_its_definition_and_undefined_outside_its_domain() {
        use std::f64::consts::{E, FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, LN_2, PI};
        let cases: [(Ext, [f32; 2], [f64; 2]); 28] = [
            (Ext::Round, [2.7, -2.7], [3.0, -3.0]),
            (Ext::RoundEven, [2.5, 3.5], [2.0, 4.0]),
            (Ext::Trunc, [-2.7, 2.7], [-2.0, 2.0]),
            (Ext::FAbs, [-2.5, 2.5], [2.5, 2.5]),
            (Ext::FSign, [-2.5, 0.0], [-1.0, 0.0]),
            (Ext::Floor, [-2.5, 2.5], [-3.0, 2.0]),
            (Ext::Ceil, [-2.5, 2.5], [-2.0, 3.0]),
            (Ext::Fract, [2.75, -2.75], [0.75, 0.25]),
            (Ext::Radians, [180.0, 90.0], [PI, FRAC_PI_2]),
            (Ext::Degrees, [std::f32::consts::PI, 0.0], [180.0, 0.0]),
            (
                Ext::Sin,
                [0.5, -0.5],
                [0.479_425_538_604_203, -0.479_425_538_604_203],
            ),
            (Ext::Cos, [0.5, 0.0], [0.877_582_561_890_372_8, 1.0]),
            (Ext::Tan, [0.5, 0.0], [0.546_302_489_843_790_5, 0.0]),
            (Ext::Asin, [0.5, 1.0], [FRAC_PI_6, FRAC_PI_2]),
            (Ext::Acos, [0.5, 1.0], [FRAC_PI_3, 0.0]),
            (Ext::Atan, [1.0, -1.0], [FRAC_PI_4, -FRAC_PI_4]),
            (
                Ext::Sinh,
                [1.0, -1.0],
                [1.175_201_193_643_801_4, -1.175_201_193_643_801_4],
            ),
            (Ext::Cosh, [1.0, 0.0], [1.543_080_634_815_243_7, 1.0]),
            (
                Ext::Tanh,
                [1.0, -1.0],
                [0.761_594_155_955_764_9, -0.761_594_155_955_764_9],
            ),
            (Ext::Asinh, [1.0, 0.0], [0.881_373_587_019_543, 0.0]),
            (Ext::Acosh, [2.0, 1.0], [1.316_957_896_924_816_6, 0.0]),
            (
                Ext::Atanh,
                [0.5, -0.5],
                [0.549_306_144_334_054_9, -0.549_306_144_334_054_9],
            ),
            (Ext::Exp, [1.0, 0.0], [E, 1.0]),
            (Ext::Log, [2.0, 1.0], [LN_2, 0.0]),
            (Ext::Exp2, [3.0, -1.0], [8.0, 0.5]),
            (Ext::Log2, [8.0, 0.5], [3.0, -1.0]),
            (Ext::Sqrt, [2.25, 0.0], [1.5, 0.0]),
            (Ext::InverseSqrt, [4.0, 0.25], [0.5, 2.0]),
        ];
        let f32t = Scalar::Float { width: 32 };
        for (f, x, want) in cases {
            let mut ops = [[0u64; 16]; 3];
            ops[0][0] = x[0].to_bits() as u64;
            ops[0][1] = x[1].to_bits() as u64;
            let mut out = [0u64; 16];
            let r = eval(f, f32t, 2, &ops, &mut out).unwrap();
            assert_eq!(r, None, "{f:?}{x:?} is inside the domain");
            for c in 0..2 {
                assert_eq!(
                    f32::from_bits(out[c] as u32),
                    want[c] as f32,
                    "{f:?}({})",
                    x[c]
                );
            }
        }
        let outside: [(Ext, f32); 9] = [
            (Ext::Asin, 1.5),
            (Ext::Acos, -1.5),
            (Ext::Acosh, 0.5),
            (Ext::Atanh, 1.0),
            (Ext::Atanh, -1.0),
            (Ext::Log, 0.0),
            (Ext::Log2, -1.0),
            (Ext::Sqrt, -1.0),
            (Ext::InverseSqrt, 0.0),
        ];
        for (f, x) in outside {
            let mut ops = [[0u64; 16]; 3];
            ops[0][0] = x.to_bits() as u64;
            let mut out = [0u64; 16];
            let why = eval(f, f32t, 1, &ops, &mut out).unwrap();
            assert!(
                why.is_some_and(|w| w.contains("GLSL.std.450")),
                "{f:?}({x}): {why:?}"
            );
        }
    }

    const F32: Scalar = Scalar::Float { width: 32 };
    const U32: Scalar = Scalar::Int {
        width: 32,
        signed: false,
    };

    /// `f` on `n` components: operand k's components are `ops[k]` (raw slots); the result's
    /// slots and the reason it is undefined, if it is.
    fn run(f: Ext, s: Scalar, n: u32, ops: &[Vec<u64>]) -> ([u64; 16], Option<&'static str>) {
        let mut x = [[0u64; 16]; 3];
        for (k, o) in ops.iter().enumerate() {
            x[k][..o.len()].copy_from_slice(o);
        }
        let mut out = [0u64; 16];
        let why = eval(f, s, n, &x, &mut out).unwrap();
        (out, why)
    }

    fn b32(v: &[f32]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits() as u64).collect()
    }

    fn f32_of(out: &[u64]) -> Vec<f32> {
        out.iter().map(|&b| f32::from_bits(b as u32)).collect()
    }

    // GLSL.std.450, the float functions of two and three operands, each by its definition (two
    // components: each from its own operands): Atan2 "the arc tangent of y/x" in the quadrant of
    // the signs, Pow x^y, FMin/FMax "y if y < x"/"y if x < y", NMin/NMax the same but "if exactly
    // one of the operands is a NaN, the other operand is the result", Step "0.0 if x < edge",
    // Ldexp x·2^exp, FClamp/NClamp "min(max(x, minVal), maxVal)" (NClamp with NMin and NMax),
    // FMix x·(1−a)+y·a, SmoothStep t²(3−2t) of t = clamp((x−edge0)/(edge1−edge0), 0, 1), Fma
    // a·b+c. Outside each domain the definition names, an undefined result with its reason.
    #[test]
    fn every_float_function_of_two_or_three_operands_is_its_definition() {
        use std::f32::consts::{FRAC_PI_4, PI};
        let nan = f32::NAN;
        let cases: Vec<(Ext, Vec<[f32; 2]>, [f32; 2])> = vec![
            (
                Ext::Atan2,
                vec![[1.0, 1.0], [1.0, -1.0]],
                [FRAC_PI_4, 3.0 * PI / 4.0],
            ),
            (Ext::Pow, vec![[2.0, 4.0], [3.0, 0.5]], [8.0, 2.0]),
            (Ext::Pow, vec![[0.0, 9.0], [1.0, 0.5]], [0.0, 3.0]),
            (Ext::FMin, vec![[1.0, 3.0], [2.0, -1.0]], [1.0, -1.0]),
            (Ext::FMax, vec![[1.0, 3.0], [2.0, -1.0]], [2.0, 3.0]),
            (Ext::NMin, vec![[nan, 1.0], [2.0, 2.0]], [2.0, 1.0]),
            (Ext::NMin, vec![[2.0, 3.0], [nan, 2.0]], [2.0, 2.0]),
            (Ext::NMax, vec![[nan, 1.0], [2.0, 2.0]], [2.0, 2.0]),
            (Ext::NMax, vec![[2.0, 3.0], [nan, 2.0]], [2.0, 3.0]),
            (Ext::Step, vec![[1.0, 1.0], [0.5, 1.0]], [0.0, 1.0]),
            (
                Ext::FClamp,
                vec![[5.0, 0.0], [1.0, 1.0], [3.0, 3.0]],
                [3.0, 1.0],
            ),
            (
                Ext::FClamp,
                vec![[2.0, 3.0], [1.0, 1.0], [3.0, 3.0]],
                [2.0, 3.0],
            ),
            (
                Ext::NClamp,
                vec![[nan, 2.0], [1.0, nan], [3.0, 3.0]],
                [1.0, 2.0],
            ),
            (
                Ext::NClamp,
                vec![[5.0, 0.0], [1.0, 1.0], [nan, 3.0]],
                [5.0, 1.0],
            ),
            (
                Ext::FMix,
                vec![[1.0, 0.0], [3.0, 10.0], [0.5, 0.25]],
                [2.0, 2.5],
            ),
            (
                Ext::SmoothStep,
                vec![[0.0, 0.0], [2.0, 2.0], [1.0, 3.0]],
                [0.5, 1.0],
            ),
            (
                Ext::SmoothStep,
                vec![[0.0, 0.0], [4.0, 4.0], [1.0, -1.0]],
                [0.156_25, 0.0],
            ),
            (
                Ext::Fma,
                vec![[2.0, 1.5], [3.0, 2.0], [1.0, -1.0]],
                [7.0, 2.0],
            ),
        ];
        for (f, ops, want) in cases {
            let ops: Vec<Vec<u64>> = ops.iter().map(|o| b32(o)).collect();
            let (out, why) = run(f, F32, 2, &ops);
            assert_eq!(why, None, "{f:?}");
            assert_eq!(f32_of(&out[..2]), want, "{f:?}");
        }
        // Ldexp: the exponent an integer operand, sign-extended (-2 as 64 bits).
        let (out, why) = run(
            Ext::Ldexp,
            F32,
            2,
            &[b32(&[1.5, 1.0]), vec![3, (-2i64) as u64]],
        );
        assert_eq!((f32_of(&out[..2]), why), (vec![12.0, 0.25], None));
        let undefined: Vec<(Ext, Vec<f32>)> = vec![
            (Ext::Atan2, vec![0.0, 0.0]),
            (Ext::Pow, vec![-1.0, 2.0]),
            (Ext::Pow, vec![0.0, 0.0]),
            (Ext::Pow, vec![0.0, -1.0]),
            (Ext::FMax, vec![nan, 1.0]),
            (Ext::FMin, vec![1.0, nan]),
            (Ext::FClamp, vec![2.0, 3.0, 1.0]),
            (Ext::FClamp, vec![nan, 1.0, 3.0]),
            (Ext::NClamp, vec![2.0, 3.0, 1.0]),
            (Ext::SmoothStep, vec![2.0, 2.0, 1.0]),
            (Ext::SmoothStep, vec![3.0, 2.0, 1.0]),
        ];
        for (f, ops) in undefined {
            let ops: Vec<Vec<u64>> = ops.iter().map(|o| b32(&[*o])).collect();
            let (_, why) = run(f, F32, 1, &ops);
            assert!(
                why.is_some_and(|w| w.contains("GLSL.std.450")),
                "{f:?}: {why:?}"
            );
        }
    }

    // GLSL.std.450, the integer functions (32-bit; -1 is 0xffffffff): SAbs, SSign (-1, 0, 1),
    // FindILsb / FindUMsb ("If Value is 0, -1 is returned"), FindSMsb of a negative value (the
    // highest 0 bit), UMin/UMax unsigned, SMin/SMax signed, UClamp/SClamp min(max(x, minVal),
    // maxVal) in their signedness, undefined where minVal > maxVal in it; Length, Distance and
    // Normalize of float vectors.
    #[test]
    fn every_integer_and_length_function_is_its_definition() {
        let m1 = 0xffff_ffffu64;
        let m5 = (-5i32) as u32 as u64;
        let cases: Vec<(Ext, Vec<Vec<u64>>, [u64; 2])> = vec![
            (Ext::SAbs, vec![vec![m5, 7]], [5, 7]),
            (Ext::SSign, vec![vec![m5, 0]], [m1, 0]),
            (Ext::SSign, vec![vec![7, 0x8000_0000]], [1, m1]),
            (Ext::FindILsb, vec![vec![0b1000, 0]], [3, m1]),
            (Ext::FindUMsb, vec![vec![0x100, 0]], [8, m1]),
            (Ext::FindUMsb, vec![vec![0x8000_0000, 1]], [31, 0]),
            (
                Ext::FindSMsb,
                vec![vec![(-16i32) as u32 as u64, 0x100]],
                [3, 8],
            ),
            (Ext::UMin, vec![vec![m1, 1], vec![1, 2]], [1, 1]),
            (Ext::UMax, vec![vec![m1, 1], vec![1, 2]], [m1, 2]),
            (Ext::SMin, vec![vec![m1, 1], vec![1, 2]], [m1, 1]),
            (Ext::SMax, vec![vec![m1, 1], vec![1, 2]], [1, 2]),
            (
                Ext::UClamp,
                vec![vec![5, m1], vec![1, 1], vec![3, 3]],
                [3, 3],
            ),
            (
                Ext::UClamp,
                vec![vec![0, 2], vec![1, 1], vec![3, 3]],
                [1, 2],
            ),
            (
                Ext::SClamp,
                vec![vec![5, m1], vec![1, 1], vec![3, 3]],
                [3, 1],
            ),
            (
                Ext::SClamp,
                vec![vec![2, m5], vec![m1, m1], vec![3, 3]],
                [2, m1],
            ),
        ];
        for (f, ops, want) in cases {
            let (out, why) = run(f, U32, 2, &ops);
            assert_eq!((out[0], out[1], why), (want[0], want[1], None), "{f:?}");
        }
        // minVal > maxVal in the function's own signedness: 1 > -1 signed, not unsigned.
        let (_, why) = run(Ext::SClamp, U32, 1, &[vec![2], vec![1], vec![m1]]);
        assert!(why.is_some(), "SClamp(2, 1, -1)");
        let (out, why) = run(Ext::UClamp, U32, 1, &[vec![2], vec![1], vec![m1]]);
        assert_eq!((out[0], why), (2, None), "UClamp(2, 1, 0xffffffff)");
        let (_, why) = run(Ext::UClamp, U32, 1, &[vec![2], vec![3], vec![1]]);
        assert!(why.is_some(), "UClamp(2, 3, 1)");
        // Length, Distance, Normalize: |(3, 4)| = 5, |(4, 6) − (1, 2)| = 5, (3, 4)/5.
        let (out, why) = run(Ext::Length, F32, 2, &[b32(&[3.0, 4.0])]);
        assert_eq!((f32_of(&out[..1]), why), (vec![5.0], None));
        let (out, _) = run(Ext::Distance, F32, 2, &[b32(&[4.0, 6.0]), b32(&[1.0, 2.0])]);
        assert_eq!(f32_of(&out[..1]), [5.0]);
        let (out, why) = run(Ext::Normalize, F32, 2, &[b32(&[3.0, 4.0])]);
        assert_eq!((f32_of(&out[..2]), why), (vec![0.6, 0.8], None));
        let (_, why) = run(Ext::Normalize, F32, 2, &[b32(&[0.0, 0.0])]);
        assert!(why.is_some(), "normalize of a zero vector");
    }

    // GLSL.std.450 Determinant and MatrixInverse (column-major: slot c·n + r is column c, row r;
    // 2×2, 3×3 and 4×4, values worked by hand), ModfStruct (fraction and whole part, both with
    // x's sign), FrexpStruct (x = m·2^e, |m| in [0.5, 1)), FaceForward ("N if dot(Nref, I) < 0,
    // otherwise −N"), Reflect (I − 2·dot(N, I)·N), Refract (k = 1 − eta²(1 − dot(N, I)²); 0 if
    // k < 0, else eta·I − (eta·dot(N, I) + √k)·N) and Cross.
    #[test]
    fn every_matrix_and_geometric_function_is_its_definition() {
        let det = |n: u32, cols: &[f32]| {
            let (out, why) = run(Ext::Determinant, F32, n, &[b32(cols)]);
            assert_eq!(why, None);
            f32::from_bits(out[0] as u32)
        };
        // rows (1 2; 3 4): columns (1, 3), (2, 4)
        assert_eq!(det(2, &[1.0, 3.0, 2.0, 4.0]), -2.0);
        // (2 0 1; 0 3 0; 1 0 4): 2·12 + 1·(0 − 3) = 21
        assert_eq!(det(3, &[2.0, 0.0, 1.0, 0.0, 3.0, 0.0, 1.0, 0.0, 4.0]), 21.0);
        // (1 0 0 1; 0 2 0 0; 0 0 3 0; 2 0 0 4): 2·3·(1·4 − 1·2) = 12
        let m4 = [
            1.0, 0.0, 0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 1.0, 0.0, 0.0, 4.0,
        ];
        assert_eq!(det(4, &m4), 12.0);
        // inverse of (1 2; 3 4) = (−2 1; 1.5 −0.5): columns (−2, 1.5), (1, −0.5)
        let (out, why) = run(Ext::MatrixInverse, F32, 2, &[b32(&[1.0, 3.0, 2.0, 4.0])]);
        assert_eq!((f32_of(&out[..4]), why), (vec![-2.0, 1.5, 1.0, -0.5], None));
        let (_, why) = run(Ext::MatrixInverse, F32, 2, &[b32(&[1.0, 2.0, 2.0, 4.0])]);
        assert!(why.is_some(), "inverse of a singular matrix");
        // Modf: (2.75, −2.75) → fractions (0.75, −0.75), whole parts (2, −2)
        let (out, _) = run(Ext::ModfStruct, F32, 2, &[b32(&[2.75, -2.75])]);
        assert_eq!(f32_of(&out[..4]), [0.75, -0.75, 2.0, -2.0]);
        // Frexp: 8 = 0.5·2⁴, −3 = −0.75·2²
        let (out, _) = run(Ext::FrexpStruct, F32, 2, &[b32(&[8.0, -3.0])]);
        assert_eq!(f32_of(&out[..2]), [0.5, -0.75]);
        assert_eq!(out[2..4], [4, 2]);
        // FaceForward(N = (0, 1), I = (1, −1), Nref = ±(0, 1))
        let ff = |nref: f32| {
            let ops = [b32(&[0.0, 1.0]), b32(&[1.0, -1.0]), b32(&[0.0, nref])];
            f32_of(&run(Ext::FaceForward, F32, 2, &ops).0[..2])
        };
        assert_eq!(ff(1.0), [0.0, 1.0]);
        assert_eq!(ff(-1.0), [0.0, -1.0]);
        // Reflect(I = (1, −1), N = (0, 1)) = (1, 1)
        let (out, _) = run(Ext::Reflect, F32, 2, &[b32(&[1.0, -1.0]), b32(&[0.0, 1.0])]);
        assert_eq!(f32_of(&out[..2]), [1.0, 1.0]);
        // Refract(I = (0.6, −0.8), N = (0, 1), eta): 0.5 gives (0.3, −0.4 − (√0.91 − 0.4));
        // 2 gives k = 1 − 4·0.36 < 0, the zero vector.
        let refract = |eta: f32| {
            let ops = [b32(&[0.6, -0.8]), b32(&[0.0, 1.0]), b32(&[eta])];
            f32_of(&run(Ext::Refract, F32, 2, &ops).0[..2])
        };
        let r = refract(0.5);
        assert!(
            (r[0] - 0.3).abs() < 1e-6 && (r[1] + 0.953_939_2).abs() < 1e-6,
            "{r:?}"
        );
        assert_eq!(refract(2.0), [0.0, 0.0]);
        // k = 0 exactly (I ⟂ N, eta = 1) is not below 0: eta·I − (eta·0 + √0)·N = I (grazing).
        let ops = [b32(&[1.0, 0.0]), b32(&[0.0, 1.0]), b32(&[1.0])];
        assert_eq!(f32_of(&run(Ext::Refract, F32, 2, &ops).0[..2]), [1.0, 0.0]);
        // Cross((1, 2, 3), (4, 5, 6)) = (−3, 6, −3)
        let (out, _) = run(
            Ext::Cross,
            F32,
            3,
            &[b32(&[1.0, 2.0, 3.0]), b32(&[4.0, 5.0, 6.0])],
        );
        assert_eq!(f32_of(&out[..3]), [-3.0, 6.0, -3.0]);
    }

    // GLSL.std.450 packing: the first component in the least significant bits; Unorm
    // round(clamp(c, 0, 1)·(2^bits − 1)), Snorm round(clamp(c, −1, 1)·(2^(bits−1) − 1)) (values
    // chosen away from .5, whose rounding direction is the implementation's); unpacking
    // q/(2^bits − 1) and clamp(q/(2^(bits−1) − 1), −1, 1); half floats by IEEE binary16; doubles
    // as two words, low first.
    #[test]
    fn every_packing_function_is_its_definition() {
        let pack = |f: Ext, v: &[f32]| run(f, F32, v.len() as u32, &[b32(v)]).0[0];
        assert_eq!(pack(Ext::PackHalf2x16, &[1.0, -2.0]), 0xc000_3c00);
        assert_eq!(pack(Ext::PackUnorm4x8, &[0.0, 0.2, 1.0, 2.0]), 0xffff_3300);
        assert_eq!(
            pack(Ext::PackSnorm4x8, &[-1.0, 0.2, 1.0, -2.0]),
            0x817f_1981
        );
        assert_eq!(pack(Ext::PackUnorm2x16, &[0.2, 1.0]), 0xffff_3333);
        assert_eq!(pack(Ext::PackSnorm2x16, &[-1.0, 0.2]), 0x1999_8001);
        let unpack = |f: Ext, v: u64, k: usize| f32_of(&run(f, U32, 1, &[vec![v]]).0[..k]);
        assert_eq!(unpack(Ext::UnpackHalf2x16, 0xc000_3c00, 2), [1.0, -2.0]);
        assert_eq!(
            unpack(Ext::UnpackUnorm4x8, 0xffff_3300, 4),
            [0.0, 0.2, 1.0, 1.0]
        );
        assert_eq!(
            unpack(Ext::UnpackSnorm4x8, 0x7f80_0181, 4),
            [-1.0, (1.0f64 / 127.0) as f32, -1.0, 1.0]
        );
        assert_eq!(unpack(Ext::UnpackUnorm2x16, 0xffff_3333, 2), [0.2, 1.0]);
        assert_eq!(unpack(Ext::UnpackSnorm2x16, 0x7fff_8000, 2), [-1.0, 1.0]);
        let (out, _) = run(
            Ext::PackDouble2x32,
            U32,
            2,
            &[vec![0x1122_3344, 0x5566_7788]],
        );
        assert_eq!(out[0], 0x5566_7788_1122_3344);
        let (out, _) = run(
            Ext::UnpackDouble2x32,
            U32,
            1,
            &[vec![0x5566_7788_1122_3344]],
        );
        assert_eq!(out[..2], [0x1122_3344, 0x5566_7788]);
    }

    #[test]
    fn sqrt_of_a_negative_number_is_undefined() {
        // GLSL.std.450 Sqrt: "Result is undefined if x < 0."
        let mut out = [0u64; 16];
        let r = eval(
            Ext::Sqrt,
            Scalar::Float { width: 32 },
            1,
            &f32s(&[-1.0]),
            &mut out,
        );
        assert!(r.unwrap().is_some());
        let r = eval(
            Ext::Sqrt,
            Scalar::Float { width: 32 },
            1,
            &f32s(&[4.0]),
            &mut out,
        );
        assert_eq!((r.unwrap(), f32::from_bits(out[0] as u32)), (None, 2.0));
    }

    #[test]
    fn fmin_with_a_nan_is_undefined_but_nmin_picks_the_number() {
        // GLSL.std.450 FMin: "result is undefined if one of the operands is a NaN"; NMin: "if
        // exactly one of the operands is a NaN, the other operand is the result".
        let mut out = [0u64; 16];
        let x = f32s(&[f32::NAN, 2.0]);
        assert!(
            eval(Ext::FMin, Scalar::Float { width: 32 }, 1, &x, &mut out)
                .unwrap()
                .is_some()
        );
        assert!(
            eval(Ext::NMin, Scalar::Float { width: 32 }, 1, &x, &mut out)
                .unwrap()
                .is_none()
        );
        assert_eq!(f32::from_bits(out[0] as u32), 2.0);
    }

    #[test]
    fn find_msb_of_zero_and_minus_one_is_minus_one() {
        // GLSL.std.450 FindSMsb: "If Value is 0 or -1, -1 is returned."
        let mut out = [0u64; 16];
        let s = Scalar::Int {
            width: 32,
            signed: true,
        };
        let mut x = [[0u64; 16]; 3];
        x[0][0] = 0xffff_ffff;
        eval(Ext::FindSMsb, s, 1, &x, &mut out).unwrap();
        assert_eq!(out[0], 0xffff_ffff);
        x[0][0] = 0x10;
        eval(Ext::FindSMsb, s, 1, &x, &mut out).unwrap();
        assert_eq!(out[0], 4);
    }
}
