//! Storage images and texel buffers: texel formats, where a texel lies in an image's bytes, and the
//! conversions between a format's stored components and the four components a shader reads or
//! writes (Vulkan, "Image Operations": *Texel Input Operations* and *Texel Output Operations*).
//!
//! To the interpreter an image is an object of global memory (`Storage::Image`) whose bytes
//! are its texels, tightly packed: x fastest, then y, then z (3D) or the array layer, then — for a
//! multisampled image — the sample index outermost within a texel: texel `(x, y, z)`, sample `s` at
//! index `((z·H + y)·W + x)·S + s`. Reads and writes go through the memory layer one component at a
//! time (same taint, same race shadow, same happens-before as buffers), so a race on an image is
//! found the way a race on a buffer is.
//!
//! The rules modelled (Vulkan 1.3, chapter 16, "Image Operations"):
//! - *Integer Texel Coordinate Validation*: coordinates (or a sample index) outside the image fail
//!   validation. A **read** of such a texel gets *texel replacement*, whose value is undefined
//!   unless `robustImageAccess` is enabled (the model enables no robustness: undefined, with the
//!   coordinate in the reason). A **write** of such a texel "has no effect" (*Texel Output
//!   Validation Operations*): defined, nothing changes.
//! - *Format conversion*: UNORM `c / (2^b − 1)`, SNORM `max(c / (2^(b−1) − 1), −1)` on input; on
//!   output the value is clamped and converted with "one of the two nearest" integers allowed
//!   (*Fixed-Point Data Conversion*: the model rounds to nearest and marks the value *inexact*: a
//!   device may store the other neighbour), float16 rounding likewise inexact. Components the format
//!   lacks read as 0 for G and B and 1 for A (*Conversion to RGBA*).
//! - An integer written to an integer format whose components it does not fit: the texel output
//!   conversion gives no rule for it, so the stored value is undefined (named, not guessed).

use rspirv::spirv::ImageFormat as F;

/// How a format stores one component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Comp {
    /// IEEE float of this many bits (16 or 32)
    Float(u8),
    /// unsigned normalized, bits
    Unorm(u8),
    /// signed normalized, bits
    Snorm(u8),
    /// unsigned integer, bits
    Uint(u8),
    /// signed integer, bits
    Sint(u8),
    /// unsigned float of this many bits: a 5-bit exponent (bias 15) and `bits − 5` mantissa bits,
    /// no sign (Vulkan, "Unsigned 11-Bit / 10-Bit Floating-Point Numbers")
    Ufloat(u8),
}

impl Comp {
    /// Bits of the component.
    pub fn bits(self) -> u8 {
        match self {
            Comp::Float(b)
            | Comp::Unorm(b)
            | Comp::Snorm(b)
            | Comp::Uint(b)
            | Comp::Sint(b)
            | Comp::Ufloat(b) => b,
        }
    }

    /// Does the shader see it as a float (float, UNORM, SNORM)?
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Comp::Float(_) | Comp::Unorm(_) | Comp::Snorm(_) | Comp::Ufloat(_)
        )
    }
}

/// A texel format the interpreter runs: the SPIR-V `ImageFormat` and the matching `VkFormat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TexelFormat {
    /// the SPIR-V name (`Rgba8`)
    pub spirv: &'static str,
    /// the Vulkan name without `VK_FORMAT_` (`R8G8B8A8_UNORM`), as Amber spells it
    pub vk: &'static str,
    /// components stored (1..=4)
    pub comps: u8,
    /// how each is stored (all the same in the formats modelled)
    pub comp: Comp,
    /// bits of each component, when they differ (`Rgb10A2`: 10, 10, 10, 2; packed in one word)
    pub packed: Option<[u8; 4]>,
}

impl TexelFormat {
    /// Bytes per texel.
    pub fn texel_bytes(&self) -> u32 {
        match self.packed {
            Some(p) => p.iter().map(|&b| b as u32).sum::<u32>() / 8,
            None => self.comps as u32 * self.comp.bits() as u32 / 8,
        }
    }

    /// Bytes per memory unit (taint and race records): a component, or the packed word.
    pub fn unit(&self) -> u32 {
        match self.packed {
            Some(_) => self.texel_bytes().min(4),
            None => (self.comp.bits() as u32 / 8).clamp(1, 4),
        }
    }

    /// Bits of component `c` (`c < comps`).
    pub fn comp_bits(&self, c: usize) -> u8 {
        match self.packed {
            Some(p) => p[c],
            None => self.comp.bits(),
        }
    }

    /// The format of a SPIR-V `ImageFormat`, or why it is not modelled.
    pub fn of_spirv(f: F) -> Result<TexelFormat, String> {
        FORMATS
            .iter()
            .find(|(s, _)| *s == f)
            .map(|(_, t)| *t)
            .ok_or_else(|| match f {
                F::Unknown => "a storage image of Unknown format (shaderStorageImageReadWithoutFormat / WriteWithoutFormat): the model needs the format in the module".to_string(),
                other => format!("the texel format {other:?} is not modelled"),
            })
    }

    /// The plain format of `comps` (1..=4) components of `bits` bits each, of numeric `mode`
    /// `"UINT"`, `"SINT"` or `"SFLOAT"` (`R32G32B32A32_SFLOAT` for 4, 32, SFLOAT), if modelled.
    pub fn plain(comps: usize, bits: u32, mode: &str) -> Option<TexelFormat> {
        if !(1..=4).contains(&comps) {
            return None;
        }
        let channels: String = ["R", "G", "B", "A"][..comps]
            .iter()
            .map(|c| format!("{c}{bits}"))
            .collect();
        Self::of_vk(&format!("{channels}_{mode}"))
    }

    /// The format of a `VkFormat` name (`R8G8B8A8_UNORM`, with or without `VK_FORMAT_`).
    pub fn of_vk(name: &str) -> Option<TexelFormat> {
        let n = name.strip_prefix("VK_FORMAT_").unwrap_or(name);
        FORMATS.iter().map(|(_, t)| *t).find(|t| t.vk == n)
    }
}

const fn fmt(spirv: &'static str, vk: &'static str, comps: u8, comp: Comp) -> TexelFormat {
    TexelFormat {
        spirv,
        vk,
        comps,
        comp,
        packed: None,
    }
}

/// Every format modelled (the storage-image formats of SPIR-V's `ImageFormat`).
pub(crate) const FORMATS: &[(F, TexelFormat)] = &[
    (
        F::Rgba32f,
        fmt("Rgba32f", "R32G32B32A32_SFLOAT", 4, Comp::Float(32)),
    ),
    (
        F::Rgba16f,
        fmt("Rgba16f", "R16G16B16A16_SFLOAT", 4, Comp::Float(16)),
    ),
    (F::R32f, fmt("R32f", "R32_SFLOAT", 1, Comp::Float(32))),
    (F::Rg32f, fmt("Rg32f", "R32G32_SFLOAT", 2, Comp::Float(32))),
    (F::Rg16f, fmt("Rg16f", "R16G16_SFLOAT", 2, Comp::Float(16))),
    (F::R16f, fmt("R16f", "R16_SFLOAT", 1, Comp::Float(16))),
    (F::Rgba8, fmt("Rgba8", "R8G8B8A8_UNORM", 4, Comp::Unorm(8))),
    (
        F::Rgba8Snorm,
        fmt("Rgba8Snorm", "R8G8B8A8_SNORM", 4, Comp::Snorm(8)),
    ),
    (
        F::Rgba16,
        fmt("Rgba16", "R16G16B16A16_UNORM", 4, Comp::Unorm(16)),
    ),
    (F::Rg16, fmt("Rg16", "R16G16_UNORM", 2, Comp::Unorm(16))),
    (F::Rg8, fmt("Rg8", "R8G8_UNORM", 2, Comp::Unorm(8))),
    (F::R16, fmt("R16", "R16_UNORM", 1, Comp::Unorm(16))),
    (F::R8, fmt("R8", "R8_UNORM", 1, Comp::Unorm(8))),
    (
        F::Rgba16Snorm,
        fmt("Rgba16Snorm", "R16G16B16A16_SNORM", 4, Comp::Snorm(16)),
    ),
    (
        F::Rg16Snorm,
        fmt("Rg16Snorm", "R16G16_SNORM", 2, Comp::Snorm(16)),
    ),
    (
        F::Rg8Snorm,
        fmt("Rg8Snorm", "R8G8_SNORM", 2, Comp::Snorm(8)),
    ),
    (
        F::R16Snorm,
        fmt("R16Snorm", "R16_SNORM", 1, Comp::Snorm(16)),
    ),
    (F::R8Snorm, fmt("R8Snorm", "R8_SNORM", 1, Comp::Snorm(8))),
    (
        F::Rgba32i,
        fmt("Rgba32i", "R32G32B32A32_SINT", 4, Comp::Sint(32)),
    ),
    (
        F::Rgba16i,
        fmt("Rgba16i", "R16G16B16A16_SINT", 4, Comp::Sint(16)),
    ),
    (F::Rgba8i, fmt("Rgba8i", "R8G8B8A8_SINT", 4, Comp::Sint(8))),
    (F::R32i, fmt("R32i", "R32_SINT", 1, Comp::Sint(32))),
    (F::Rg32i, fmt("Rg32i", "R32G32_SINT", 2, Comp::Sint(32))),
    (F::Rg16i, fmt("Rg16i", "R16G16_SINT", 2, Comp::Sint(16))),
    (F::Rg8i, fmt("Rg8i", "R8G8_SINT", 2, Comp::Sint(8))),
    (F::R16i, fmt("R16i", "R16_SINT", 1, Comp::Sint(16))),
    (F::R8i, fmt("R8i", "R8_SINT", 1, Comp::Sint(8))),
    (
        F::Rgba32ui,
        fmt("Rgba32ui", "R32G32B32A32_UINT", 4, Comp::Uint(32)),
    ),
    (
        F::Rgba16ui,
        fmt("Rgba16ui", "R16G16B16A16_UINT", 4, Comp::Uint(16)),
    ),
    (
        F::Rgba8ui,
        fmt("Rgba8ui", "R8G8B8A8_UINT", 4, Comp::Uint(8)),
    ),
    (F::R32ui, fmt("R32ui", "R32_UINT", 1, Comp::Uint(32))),
    (F::Rg32ui, fmt("Rg32ui", "R32G32_UINT", 2, Comp::Uint(32))),
    (F::Rg16ui, fmt("Rg16ui", "R16G16_UINT", 2, Comp::Uint(16))),
    (F::Rg8ui, fmt("Rg8ui", "R8G8_UINT", 2, Comp::Uint(8))),
    (F::R16ui, fmt("R16ui", "R16_UINT", 1, Comp::Uint(16))),
    (F::R8ui, fmt("R8ui", "R8_UINT", 1, Comp::Uint(8))),
    (F::R64ui, fmt("R64ui", "R64_UINT", 1, Comp::Uint(64))),
    (F::R64i, fmt("R64i", "R64_SINT", 1, Comp::Sint(64))),
    (
        F::Rgb10A2,
        TexelFormat {
            spirv: "Rgb10A2",
            vk: "A2B10G10R10_UNORM_PACK32",
            comps: 4,
            comp: Comp::Unorm(10),
            packed: Some([10, 10, 10, 2]),
        },
    ),
    (
        F::R11fG11fB10f,
        TexelFormat {
            spirv: "R11fG11fB10f",
            vk: "B10G11R11_UFLOAT_PACK32",
            comps: 3,
            comp: Comp::Ufloat(11),
            packed: Some([11, 11, 10, 0]),
        },
    ),
    (
        F::Rgb10a2ui,
        TexelFormat {
            spirv: "Rgb10a2ui",
            vk: "A2B10G10R10_UINT_PACK32",
            comps: 4,
            comp: Comp::Uint(10),
            packed: Some([10, 10, 10, 2]),
        },
    ),
];

/// The kind of component `c` of `f` (packed formats: the kind with that component's bits).
fn kind(f: &TexelFormat, c: usize) -> Comp {
    let b = f.comp_bits(c);
    match f.comp {
        Comp::Float(_) => Comp::Float(b),
        Comp::Unorm(_) => Comp::Unorm(b),
        Comp::Snorm(_) => Comp::Snorm(b),
        Comp::Uint(_) => Comp::Uint(b),
        Comp::Sint(_) => Comp::Sint(b),
        Comp::Ufloat(_) => Comp::Ufloat(b),
    }
}

/// The value of an unsigned float of `bits` bits (5-bit exponent, bias 15).
pub(crate) fn ufloat_value(raw: u64, bits: u8) -> f64 {
    let m = bits as u32 - 5;
    let (e, f) = ((raw >> m) & 31, raw & ((1 << m) - 1));
    let frac = f as f64 / (1u64 << m) as f64;
    match e {
        0 => frac * 2f64.powi(-14),
        31 if f == 0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac) * 2f64.powi(e as i32 - 15),
    }
}

/// An unsigned float of `bits` bits for `x` (Vulkan, "Unsigned 11-Bit Floating-Point Numbers",
/// and the 10-bit one: finite values round to the closest representable finite value — an
/// implementation may instead round toward zero, so a value between two is *inexact* — negative
/// values and −∞ become 0, finite values above the largest become the largest, +∞ stays, NaN is a
/// NaN): (raw bits, inexact).
pub(crate) fn ufloat_bits(x: f64, bits: u8) -> (u64, bool) {
    let m = bits as u32 - 5;
    let max_raw = (30u64 << m) | ((1 << m) - 1);
    if x.is_nan() {
        // which NaN is the device's
        return ((31 << m) | (1 << (m - 1)), true);
    }
    if x <= 0.0 {
        return (0, false);
    }
    if x == f64::INFINITY {
        return (31 << m, false);
    }
    if x >= ufloat_value(max_raw, bits) {
        return (max_raw, false);
    }
    let e = (x.log2().floor() as i32).max(-14);
    let scale = 2f64.powi(e - m as i32);
    let mut q = (x / scale).round_ties_even() as u64;
    let mut e = e;
    if q == 2 << m {
        e += 1;
        q = 1 << m;
    }
    let raw = if q >= 1 << m {
        (((e + 15) as u64) << m) | (q - (1 << m))
    } else {
        q
    };
    let raw = raw.min(max_raw);
    (raw, ufloat_value(raw, bits) != x)
}

/// What a shader reads for one component: the bits of a scalar of `width` bits (float for float,
/// UNORM and SNORM formats; integer otherwise), and whether a device may compute a different float
/// (the normalized conversions and float16 widening are exact in the model; the division of the
/// normalized conversion is a float operation with the precision rules' latitude).
pub(crate) fn read_component(f: &TexelFormat, c: usize, raw: u64, width: u8) -> (u64, bool) {
    if c >= f.comps as usize {
        // Conversion to RGBA: missing G and B are 0, missing A is 1.
        let one = c == 3;
        return match (f.comp.is_float(), one) {
            (_, false) => (0, false),
            (true, true) => (float_bits(1.0, width), false),
            (false, true) => (1, false),
        };
    }
    let k = kind(f, c);
    let b = k.bits() as u32;
    match k {
        Comp::Float(16) => {
            let x = half::f16::from_bits(raw as u16).to_f64();
            (float_bits(x, width), false)
        }
        Comp::Float(_) => {
            let x = f32::from_bits(raw as u32) as f64;
            (float_bits(x, width), false)
        }
        Comp::Unorm(_) => {
            let m = (1u64 << b) - 1;
            let x = raw as f64 / m as f64;
            (float_bits(x, width), raw != 0 && raw != m)
        }
        Comp::Snorm(_) => {
            let v = sign_extend(raw, b);
            let m = (1i64 << (b - 1)) - 1;
            let x = (v as f64 / m as f64).max(-1.0);
            (float_bits(x, width), v.abs() < m && v != 0)
        }
        Comp::Uint(_) => (raw & mask(width as u32), false),
        Comp::Sint(_) => (sign_extend(raw, b) as u64 & mask(width as u32), false),
        Comp::Ufloat(bits) => (float_bits(ufloat_value(raw, bits), width), false),
    }
}

/// What is stored for one component written as the bits `v` of a scalar of `width` bits (float
/// for float-like formats): (raw component bits, inexact, why undefined).
pub(crate) fn write_component(
    f: &TexelFormat,
    c: usize,
    v: u64,
    width: u8,
) -> (u64, bool, Option<String>) {
    let k = kind(f, c);
    let b = k.bits() as u32;
    let x = || match width {
        16 => half::f16::from_bits(v as u16).to_f64(),
        64 => f64::from_bits(v),
        _ => f32::from_bits(v as u32) as f64,
    };
    match k {
        Comp::Float(16) => {
            let h = half::f16::from_f64(x());
            (h.to_bits() as u64, h.to_f64() != x() && !x().is_nan(), None)
        }
        Comp::Float(_) => ((x() as f32).to_bits() as u64, width == 64, None),
        Comp::Ufloat(bits) => {
            let (raw, inexact) = ufloat_bits(x(), bits);
            (raw, inexact, None)
        }
        Comp::Unorm(_) => {
            let m = ((1u64 << b) - 1) as f64;
            let f = x();
            let f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
            let r = (f * m).round_ties_even();
            (r as u64, r != f * m, None)
        }
        Comp::Snorm(_) => {
            let m = ((1i64 << (b - 1)) - 1) as f64;
            let f = x();
            let f = if f.is_nan() { 0.0 } else { f.clamp(-1.0, 1.0) };
            let r = (f * m).round_ties_even();
            ((r as i64) as u64 & mask(b), r != f * m, None)
        }
        Comp::Uint(_) => {
            let v = v & mask(width as u32);
            let fits = b >= 64 || v < 1u64 << b;
            let why = (!fits).then(|| {
                format!(
                    "{v} does not fit the {b}-bit unsigned components of {} (Vulkan, Texel Output Format Conversion, gives no rule for it)",
                    f.vk
                )
            });
            (v & mask(b), false, why)
        }
        Comp::Sint(_) => {
            let s = sign_extend(v, width as u32);
            let fits = b >= 64 || (-(1i64 << (b - 1))..(1i64 << (b - 1))).contains(&s);
            let why = (!fits).then(|| {
                format!(
                    "{s} does not fit the {b}-bit signed components of {} (Vulkan, Texel Output Format Conversion, gives no rule for it)",
                    f.vk
                )
            });
            (s as u64 & mask(b), false, why)
        }
    }
}

/// Splits a texel's bytes into raw component values.
pub(crate) fn unpack(f: &TexelFormat, bytes: &[u8]) -> [u64; 4] {
    let mut out = [0u64; 4];
    match f.packed {
        Some(p) => {
            let w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64;
            let mut sh = 0;
            for (c, &b) in p.iter().enumerate() {
                out[c] = (w >> sh) & mask(b as u32);
                sh += b as u32;
            }
        }
        None => {
            let cb = f.comp.bits() as usize / 8;
            for (c, o) in out.iter_mut().enumerate().take(f.comps as usize) {
                let mut x = [0u8; 8];
                x[..cb].copy_from_slice(&bytes[c * cb..(c + 1) * cb]);
                *o = u64::from_le_bytes(x);
            }
        }
    }
    out
}

/// Joins raw component values into a texel's bytes.
pub(crate) fn pack(f: &TexelFormat, comps: &[u64; 4]) -> Vec<u8> {
    match f.packed {
        Some(p) => {
            let mut w = 0u64;
            let mut sh = 0;
            for (c, &b) in p.iter().enumerate() {
                w |= (comps[c] & mask(b as u32)) << sh;
                sh += b as u32;
            }
            (w as u32).to_le_bytes().to_vec()
        }
        None => {
            let cb = f.comp.bits() as usize / 8;
            let mut out = Vec::with_capacity(cb * f.comps as usize);
            for c in comps.iter().take(f.comps as usize) {
                out.extend_from_slice(&c.to_le_bytes()[..cb]);
            }
            out
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        !0
    } else {
        (1u64 << bits) - 1
    }
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let sh = 64 - bits;
        ((v << sh) as i64) >> sh
    }
}

/// The bits of `x` as a float of `width` bits (16, 32 or 64), rounded to nearest even.
pub(crate) fn float_bits(x: f64, width: u8) -> u64 {
    match width {
        16 => half::f16::from_f64(x).to_bits() as u64,
        64 => x.to_bits(),
        _ => (x as f32).to_bits() as u64,
    }
}

/// The extent of a bound image: width, height, depth (or array layers), samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// width in texels
    pub width: u32,
    /// height (1 for 1D images and texel buffers)
    pub height: u32,
    /// depth of a 3D image, or array layers (1 otherwise)
    pub depth: u32,
    /// samples per texel (1 unless multisampled)
    pub samples: u32,
}

impl Extent {
    /// A single-sample extent.
    pub fn new(width: u32, height: u32, depth: u32) -> Extent {
        Extent {
            width,
            height,
            depth,
            samples: 1,
        }
    }

    /// Texels (times samples) in the image.
    pub fn texels(&self) -> u64 {
        (self.width as u64)
            .saturating_mul(self.height as u64)
            .saturating_mul(self.depth as u64)
            .saturating_mul(self.samples as u64)
    }

    /// The texel index of coordinate `xyz` and sample `s`, or `None` where integer texel coordinate
    /// validation fails (a coordinate or sample index outside the image).
    pub fn index(&self, xyz: [i64; 3], s: i64) -> Option<u64> {
        let inside = |v: i64, n: u32| (0..n as i64).contains(&v);
        if !(inside(xyz[0], self.width)
            && inside(xyz[1], self.height)
            && inside(xyz[2], self.depth)
            && inside(s, self.samples))
        {
            return None;
        }
        let t = (xyz[2] as u64 * self.height as u64 + xyz[1] as u64) * self.width as u64
            + xyz[0] as u64;
        Some(t * self.samples as u64 + s as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: F) -> TexelFormat {
        TexelFormat::of_spirv(x).unwrap()
    }

    /// Vulkan, "Fixed-Point Data Conversion": UNORM c → c / (2^b − 1); float → UNORM clamps to
    /// [0, 1] and takes one of the two nearest integers (the model: nearest, marked inexact when
    /// f·(2^b − 1) is not an integer).
    #[test]
    fn unorm_conversions_follow_fixed_point_data_conversion() {
        let rgba8 = f(F::Rgba8);
        let (b, inexact) = read_component(&rgba8, 0, 255, 32);
        assert_eq!((f32::from_bits(b as u32), inexact), (1.0, false));
        let (b, inexact) = read_component(&rgba8, 0, 51, 32);
        assert_eq!((f32::from_bits(b as u32), inexact), (0.2, true));
        let (b, _) = read_component(&rgba8, 1, 0, 32);
        assert_eq!(f32::from_bits(b as u32), 0.0);
        assert_eq!(
            write_component(&rgba8, 0, 1.0f32.to_bits() as u64, 32),
            (255, false, None)
        );
        assert_eq!(
            write_component(&rgba8, 0, 2.5f32.to_bits() as u64, 32),
            (255, false, None)
        );
        assert_eq!(
            write_component(&rgba8, 0, (-1.0f32).to_bits() as u64, 32),
            (0, false, None)
        );
        assert_eq!(
            write_component(&rgba8, 0, 0.5f32.to_bits() as u64, 32),
            (128, true, None)
        );
        assert_eq!(
            write_component(&rgba8, 0, f32::NAN.to_bits() as u64, 32).0,
            0
        );
    }

    /// Vulkan, "Fixed-Point Data Conversion": SNORM c → max(c / (2^(b−1) − 1), −1), so both −128
    /// and −127 read as −1.
    #[test]
    fn snorm_reads_clamp_the_most_negative_value_to_minus_one() {
        let s8 = f(F::R8Snorm);
        for raw in [0x80u64, 0x81] {
            let (b, _) = read_component(&s8, 0, raw, 32);
            assert_eq!(f32::from_bits(b as u32), -1.0);
        }
        assert_eq!(
            write_component(&s8, 0, (-1.0f32).to_bits() as u64, 32).0,
            0x81
        );
    }

    /// Vulkan, "Conversion to RGBA": components the format lacks read as G = B = 0, A = 1.
    #[test]
    fn missing_components_read_as_zero_zero_one() {
        let r32ui = f(F::R32ui);
        assert_eq!(read_component(&r32ui, 1, 0, 32), (0, false));
        assert_eq!(read_component(&r32ui, 3, 0, 32), (1, false));
        let r32f = f(F::R32f);
        assert_eq!(read_component(&r32f, 3, 0, 32).0, 1.0f32.to_bits() as u64);
    }

    #[test]
    fn an_integer_that_does_not_fit_its_component_is_undefined_not_truncated_silently() {
        let u8f = f(F::R8ui);
        assert!(write_component(&u8f, 0, 300, 32).2.is_some());
        assert_eq!(write_component(&u8f, 0, 200, 32), (200, false, None));
        let i8f = f(F::R8i);
        assert_eq!(
            write_component(&i8f, 0, (-5i32) as u32 as u64, 32),
            (0xfb, false, None)
        );
        assert!(write_component(&i8f, 0, 200, 32).2.is_some());
    }

    // Vulkan, "Unsigned 11-Bit Floating-Point Numbers" / "Unsigned 10-Bit …": 5-bit exponent
    // (bias 15) and 6 / 5 mantissa bits; a conversion rounds finite values to the closest
    // representable one (or toward zero: inexact), turns negative values and −∞ into 0, finite
    // values above the largest (65024 / 64512) into the largest, keeps +∞, and a NaN is a NaN.
    #[test]
    fn unsigned_floats_follow_the_11_and_10_bit_conversion_rules() {
        assert_eq!(ufloat_bits(1.0, 11), (15 << 6, false));
        assert_eq!(ufloat_value(15 << 6, 11), 1.0);
        assert_eq!(ufloat_bits(49.0, 11), ((15 + 5) << 6 | 0b100010, false));
        assert_eq!(ufloat_bits(-3.0, 11), (0, false));
        assert_eq!(ufloat_bits(f64::NEG_INFINITY, 10), (0, false));
        assert_eq!(ufloat_bits(f64::INFINITY, 11), (31 << 6, false));
        assert_eq!(ufloat_value((30 << 6) | 63, 11), 65024.0);
        assert_eq!(ufloat_value((30 << 5) | 31, 10), 64512.0);
        assert_eq!(ufloat_bits(1e6, 11), ((30 << 6) | 63, false));
        assert_eq!(ufloat_bits(1e6, 10), ((30 << 5) | 31, false));
        // the smallest denormal, 2^-14 · 1/64, and a value between two representable ones
        assert_eq!(ufloat_bits(2f64.powi(-20), 11), (1, false));
        let (third, inexact) = ufloat_bits(1.0 / 3.0, 11);
        assert!(inexact && (ufloat_value(third, 11) - 1.0 / 3.0).abs() < 1.0 / 3.0 / 64.0);
        let (nan, inexact) = ufloat_bits(f64::NAN, 10);
        assert!(ufloat_value(nan, 10).is_nan() && inexact);
        // B10G11R11_UFLOAT_PACK32: R in bits 0..11, G in 11..22, B in 22..32
        let p = f(F::R11fG11fB10f);
        assert_eq!(p.texel_bytes(), 4);
        let w = u32::from_le_bytes(pack(&p, &[1, 2, 3, 0]).try_into().unwrap());
        assert_eq!(w, 1 | 2 << 11 | 3 << 22);
        assert_eq!(unpack(&p, &w.to_le_bytes())[..3], [1, 2, 3]);
    }

    #[test]
    fn packed_formats_split_and_join_their_word() {
        let p = f(F::Rgb10A2);
        let w = 1023u32 | 5 << 10 | 7 << 20 | 3 << 30;
        let c = unpack(&p, &w.to_le_bytes());
        assert_eq!(c, [1023, 5, 7, 3]);
        assert_eq!(pack(&p, &c), w.to_le_bytes());
        assert_eq!(p.texel_bytes(), 4);
    }

    /// Vulkan, "Integer Texel Coordinate Validation": a coordinate or sample index outside the
    /// image fails validation.
    #[test]
    fn texel_coordinates_outside_the_image_fail_validation() {
        let e = Extent {
            width: 4,
            height: 2,
            depth: 1,
            samples: 2,
        };
        assert_eq!(e.index([3, 1, 0], 1), Some(15));
        assert_eq!(e.index([4, 0, 0], 0), None);
        assert_eq!(e.index([0, -1, 0], 0), None);
        assert_eq!(e.index([0, 0, 0], 2), None);
        assert_eq!(e.index([0, 0, 0], -1), None);
    }
}
