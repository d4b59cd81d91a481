//! Samplers: the state a `VkSampler` holds and the texel-selection rules of Vulkan's "Texel
//! Filtering" and "Wrapping Operation" (Vulkan, Image Operations), Vulkan-free so that the
//! interpreter and the device runner read one description.
//!
//! One mip level is modelled (the images lockstep binds have one), so level selection always picks
//! level 0; what the level of detail still decides is the filter: `λ ≤ 0` magnifies (`mag`),
//! otherwise minifies (`min`) (Vulkan, "Level-of-Detail Operation" and "Texel Filtering").
//!
//! **What is pinned down.** A device snaps the texel-space coordinate to `2^subTexelPrecisionBits`
//! divisions of a texel ("Sub-texel values calculated during image sampling will snap to these
//! locations", Vulkan, Limits, `subTexelPrecisionBits`, at least 4). So
//! - *nearest*: a coordinate within half a division below a texel boundary may select either
//!   texel; where those texels hold different values the result is not pinned down
//!   ([`Taps::alt`]);
//! - *linear*: a weight that is not a multiple of `2^-4` may be snapped; where the texels it
//!   weighs differ the result is only bounded, not pinned down ([`Taps::exact`]); otherwise the
//!   weighted sum is exact up to float rounding (compared within the float tolerance).

use std::fmt;

/// The sub-texel precision every Vulkan device has at least (`subTexelPrecisionBits`, Vulkan,
/// "Required Limits": 4).
pub(crate) const SUB_TEXEL_BITS: u32 = 4;

/// `VkFilter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// `VK_FILTER_NEAREST`
    Nearest,
    /// `VK_FILTER_LINEAR`
    Linear,
}

/// `VkSamplerAddressMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// `VK_SAMPLER_ADDRESS_MODE_REPEAT`
    Repeat,
    /// `VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT`
    MirroredRepeat,
    /// `VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE`
    ClampToEdge,
    /// `VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER`
    ClampToBorder,
    /// `VK_SAMPLER_ADDRESS_MODE_MIRROR_CLAMP_TO_EDGE` (Vulkan 1.2 `samplerMirrorClampToEdge`)
    MirrorClampToEdge,
}

/// `VkBorderColor` (the six core ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BorderColor {
    /// (0, 0, 0, 0) as floats
    FloatTransparentBlack,
    /// (0, 0, 0, 0) as integers
    IntTransparentBlack,
    /// (0, 0, 0, 1) as floats
    FloatOpaqueBlack,
    /// (0, 0, 0, 1) as integers
    IntOpaqueBlack,
    /// (1, 1, 1, 1) as floats
    FloatOpaqueWhite,
    /// (1, 1, 1, 1) as integers
    IntOpaqueWhite,
}

impl BorderColor {
    /// The border texel's components, and whether they are integers.
    pub fn rgba(self) -> ([f64; 4], bool) {
        match self {
            BorderColor::FloatTransparentBlack => ([0.0; 4], false),
            BorderColor::IntTransparentBlack => ([0.0; 4], true),
            BorderColor::FloatOpaqueBlack => ([0.0, 0.0, 0.0, 1.0], false),
            BorderColor::IntOpaqueBlack => ([0.0, 0.0, 0.0, 1.0], true),
            BorderColor::FloatOpaqueWhite => ([1.0; 4], false),
            BorderColor::IntOpaqueWhite => ([1.0; 4], true),
        }
    }
}

/// A sampler's state (`VkSamplerCreateInfo` without anisotropy, comparison and mipmapping, which
/// one-level images do not use).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    /// `magFilter`
    pub mag: Filter,
    /// `minFilter`
    pub min: Filter,
    /// `addressModeU`, `V`, `W`
    pub address: [AddressMode; 3],
    /// `borderColor`
    pub border: BorderColor,
    /// `unnormalizedCoordinates`
    pub unnormalized: bool,
    /// `minLod`
    pub min_lod: f32,
    /// `maxLod`
    pub max_lod: f32,
}

// The LOD bounds compare by their bits, so a sampler is a key (the device runner's descriptors).
impl Eq for Sampler {}

impl std::hash::Hash for Sampler {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (
            self.mag,
            self.min,
            self.address,
            self.border,
            self.unnormalized,
        )
            .hash(h);
        (self.min_lod.to_bits(), self.max_lod.to_bits()).hash(h);
    }
}

impl Default for Sampler {
    /// Amber's defaults (`SAMPLER` without attributes): nearest filtering, repeat, transparent
    /// black, normalized coordinates, LOD range 0 to 1.
    fn default() -> Self {
        Sampler {
            mag: Filter::Nearest,
            min: Filter::Nearest,
            address: [AddressMode::Repeat; 3],
            border: BorderColor::FloatTransparentBlack,
            unnormalized: false,
            min_lod: 0.0,
            max_lod: 1.0,
        }
    }
}

impl fmt::Display for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mag {:?}, min {:?}, address {:?}/{:?}/{:?}{}",
            self.mag,
            self.min,
            self.address[0],
            self.address[1],
            self.address[2],
            if self.unnormalized {
                ", unnormalized"
            } else {
                ""
            }
        )
    }
}

impl Filter {
    /// The AmberScript / Vulkan name without prefix: `nearest`, `linear`.
    pub fn parse(s: &str) -> Option<Filter> {
        match s {
            "nearest" => Some(Filter::Nearest),
            "linear" => Some(Filter::Linear),
            _ => None,
        }
    }
}

impl AddressMode {
    /// The AmberScript name: `repeat`, `mirrored_repeat`, `clamp_to_edge`, `clamp_to_border`,
    /// `mirror_clamp_to_edge`.
    pub fn parse(s: &str) -> Option<AddressMode> {
        match s {
            "repeat" => Some(AddressMode::Repeat),
            "mirrored_repeat" => Some(AddressMode::MirroredRepeat),
            "clamp_to_edge" => Some(AddressMode::ClampToEdge),
            "clamp_to_border" => Some(AddressMode::ClampToBorder),
            "mirror_clamp_to_edge" => Some(AddressMode::MirrorClampToEdge),
            _ => None,
        }
    }

    /// Wraps integer texel coordinate `i` into an axis of `size` texels (Vulkan, "Wrapping
    /// Operation"); `None`: the border texel.
    pub fn wrap(self, i: i64, size: u32) -> Option<i64> {
        let n = size.max(1) as i64;
        let mirror = |a: i64| if a >= 0 { a } else { -(1 + a) };
        match self {
            AddressMode::Repeat => Some(i.rem_euclid(n)),
            AddressMode::MirroredRepeat => Some((n - 1) - mirror(i.rem_euclid(2 * n) - n)),
            AddressMode::ClampToEdge => Some(i.clamp(0, n - 1)),
            AddressMode::ClampToBorder => (0..n).contains(&i).then_some(i),
            AddressMode::MirrorClampToEdge => Some(mirror(i).clamp(0, n - 1)),
        }
    }
}

impl BorderColor {
    /// The AmberScript name: `float_transparent_black`, `int_opaque_white`, ….
    pub fn parse(s: &str) -> Option<BorderColor> {
        Some(match s {
            "float_transparent_black" => BorderColor::FloatTransparentBlack,
            "int_transparent_black" => BorderColor::IntTransparentBlack,
            "float_opaque_black" => BorderColor::FloatOpaqueBlack,
            "int_opaque_black" => BorderColor::IntOpaqueBlack,
            "float_opaque_white" => BorderColor::FloatOpaqueWhite,
            "int_opaque_white" => BorderColor::IntOpaqueWhite,
            _ => return None,
        })
    }
}

impl std::str::FromStr for Sampler {
    type Err = String;

    /// `lockstep run --sampler`'s text: comma-separated items, each a filter (`nearest`,
    /// `linear`: both filters), an address mode (`repeat`, `clamp_to_edge`, …: all three axes),
    /// `unnormalized`, or `KEY=VALUE` with KEY `mag`, `min`, `u`, `v`, `w`, `border`, `min_lod`,
    /// `max_lod`. Unspecified: [`Sampler::default`].
    ///
    /// ```
    /// use lockstep::words::sampler::{AddressMode, Filter, Sampler};
    /// let s: Sampler = "linear,clamp_to_edge,u=repeat".parse().unwrap();
    /// assert_eq!((s.mag, s.min), (Filter::Linear, Filter::Linear));
    /// assert_eq!(s.address, [AddressMode::Repeat, AddressMode::ClampToEdge, AddressMode::ClampToEdge]);
    /// assert!("linear,cubic".parse::<Sampler>().unwrap_err().contains("cubic"));
    /// ```
    fn from_str(text: &str) -> Result<Sampler, String> {
        let mut s = Sampler::default();
        for item in text.split(',').map(str::trim) {
            if let Some(f) = Filter::parse(item) {
                (s.mag, s.min) = (f, f);
                continue;
            }
            if let Some(m) = AddressMode::parse(item) {
                s.address = [m; 3];
                continue;
            }
            if item == "unnormalized" {
                s.unnormalized = true;
                continue;
            }
            let bad = || {
                format!(
                    "sampler item '{item}': a filter (nearest, linear), an address mode (repeat, mirrored_repeat, clamp_to_edge, clamp_to_border, mirror_clamp_to_edge), unnormalized, or KEY=VALUE with KEY mag, min, u, v, w, border, min_lod, max_lod"
                )
            };
            let (k, v) = item.split_once('=').ok_or_else(bad)?;
            match k {
                "mag" | "min" => {
                    let f = Filter::parse(v).ok_or_else(bad)?;
                    if k == "mag" {
                        s.mag = f;
                    } else {
                        s.min = f;
                    }
                }
                "u" | "v" | "w" => {
                    let a = ["u", "v", "w"].iter().position(|x| *x == k).unwrap_or(0);
                    s.address[a] = AddressMode::parse(v).ok_or_else(bad)?;
                }
                "border" => s.border = BorderColor::parse(v).ok_or_else(bad)?,
                "min_lod" | "max_lod" => {
                    let x: f32 = v.parse().map_err(|_| bad())?;
                    if k == "min_lod" {
                        s.min_lod = x;
                    } else {
                        s.max_lod = x;
                    }
                }
                _ => return Err(bad()),
            }
        }
        if s.max_lod < s.min_lod {
            return Err(format!(
                "max_lod {} is below min_lod {} (Vulkan: maxLod must be at least minLod)",
                s.max_lod, s.min_lod
            ));
        }
        Ok(s)
    }
}

/// The texels one axis of a filter reads at texel-space coordinate `u`, with their weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Taps {
    /// integer texel coordinates (before wrapping): one for nearest, two for linear
    pub i: [i64; 2],
    /// their weights
    pub w: [f64; 2],
    /// how many (1 or 2)
    pub n: usize,
    /// nearest: the other texel a device may select, `u` being within half a sub-texel division
    /// below a texel boundary
    pub alt: Option<i64>,
    /// linear: the weights are multiples of `2^-SUB_TEXEL_BITS`, which every device represents
    pub exact: bool,
}

/// The taps of filter `f` along one axis at texel-space coordinate `u` (`s × size` for normalized
/// coordinates; Vulkan, "Texel Filtering": nearest `i = ⌊u⌋`; linear `i0 = ⌊u − ½⌋`, `i1 = i0 + 1`,
/// `α = frac(u − ½)`, weights `1 − α` and `α`).
pub(crate) fn taps(u: f64, f: Filter) -> Taps {
    let division = (1u64 << SUB_TEXEL_BITS) as f64;
    match f {
        Filter::Nearest => {
            let i = u.floor() as i64;
            let near = (u + 0.5 / division).floor() as i64;
            Taps {
                i: [i, i],
                w: [1.0, 0.0],
                n: 1,
                alt: (near != i).then_some(near),
                exact: true,
            }
        }
        Filter::Linear => {
            let v = u - 0.5;
            let i0 = v.floor();
            let a = v - i0;
            Taps {
                i: [i0 as i64, i0 as i64 + 1],
                w: [1.0 - a, a],
                n: 2,
                alt: None,
                exact: (a * division).fract() == 0.0,
            }
        }
    }
}

/// The layer an array coordinate `a` selects among `layers` (Vulkan, "Unnormalized Texel Coordinate
/// Operations": `clamp(RNE(a), 0, layers − 1)`).
pub fn layer(a: f64, layers: u32) -> i64 {
    let r = a.round_ties_even();
    if r.is_nan() {
        return 0;
    }
    (r.max(0.0) as i64).min(layers.max(1) as i64 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vulkan, "Wrapping Operation": repeat `i mod size`; mirrored repeat
    /// `(size − 1) − mirror((i mod 2·size) − size)`; clamp to edge `clamp(i, 0, size − 1)`;
    /// clamp to border: outside is the border; mirror clamp to edge `clamp(mirror(i), 0, size − 1)`.
    #[test]
    fn wrapping_follows_the_vulkan_wrapping_operation() {
        let w = |m: AddressMode| (-5..9).map(|i| m.wrap(i, 4)).collect::<Vec<_>>();
        let s = |v: &[i64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(
            w(AddressMode::Repeat),
            s(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0])
        );
        assert_eq!(
            w(AddressMode::MirroredRepeat),
            s(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0])
        );
        assert_eq!(
            w(AddressMode::ClampToEdge),
            s(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3])
        );
        assert_eq!(
            w(AddressMode::MirrorClampToEdge),
            s(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3])
        );
        let b = w(AddressMode::ClampToBorder);
        assert_eq!(b[4], None);
        assert_eq!(&b[5..9], &s(&[0, 1, 2, 3])[..]);
        assert_eq!(b[9], None);
    }

    /// Vulkan, "Texel Filtering": nearest takes `⌊u⌋`; linear weighs `⌊u − ½⌋` and the next texel by
    /// `1 − α` and `α`. Within half a sub-texel division below a boundary, nearest may go either
    /// way (`subTexelPrecisionBits` ≥ 4); a linear weight off the 1/16 grid may be snapped.
    #[test]
    fn taps_follow_texel_filtering_and_sub_texel_precision() {
        let t = taps(2.5, Filter::Nearest);
        assert_eq!((t.i[0], t.n, t.alt), (2, 1, None));
        assert_eq!(taps(2.99, Filter::Nearest).alt, Some(3));
        assert_eq!(taps(2.0, Filter::Nearest).alt, None);
        let l = taps(2.75, Filter::Linear);
        assert_eq!((l.i, l.w, l.exact), ([2, 3], [0.75, 0.25], true));
        assert!(!taps(2.6, Filter::Linear).exact);
        assert_eq!(layer(1.5, 4), 2);
        assert_eq!(layer(2.5, 4), 2);
        assert_eq!(layer(-3.0, 4), 0);
        assert_eq!(layer(9.0, 4), 3);
    }
}
