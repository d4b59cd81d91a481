//! A float register slot's bits and its value: every width (16, 32, 64) through `f64`, which
//! holds each exactly. The interpreter's arithmetic (`spirv::scalar`) and its printf
//! (`spirv::printf`) read floats through these.

use half::f16;

/// A float as f64 (exact for every width).
#[inline(always)]
pub fn f_get(w: u8, x: u64) -> f64 {
    match w {
        16 => f16::from_bits(x as u16).to_f64(),
        32 => f32::from_bits(x as u32) as f64,
        _ => f64::from_bits(x),
    }
}

/// An f64 rounded to nearest into a float of width `w`.
#[inline(always)]
pub fn f_put(w: u8, x: f64) -> u64 {
    match w {
        16 => f16::from_f64(x).to_bits() as u64,
        32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}
