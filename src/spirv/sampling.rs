//! Sampled images on the machine: `OpSampledImage` and the filtered reads of
//! `OpImageSampleExplicitLod`/`ImplicitLod`. Every texel a filter reads goes through the memory
//! layer ([`Wg::texel_raw`]), so taint, races and happens-before are those of any image read; the
//! filtering and wrapping rules, and what a device's sub-texel precision leaves open, live in
//! [`crate::words::sampler`].

use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::Wg;
use crate::spirv::ids::{LocId, ObjectId};
use crate::spirv::image;
use crate::spirv::imageops::Target;
use crate::spirv::inst::Reg;
use crate::spirv::memory::Ptr;
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::words::sampler::{self, Filter, Sampler, Taps};

/// One filter's result for one lane.
struct Filtered {
    /// components (floats, or integers as f64)
    v: [f64; 4],
    /// taint of the texels read (and of the conversion)
    t: Taint,
    /// why the value is not pinned down, if it is not
    open: Option<String>,
    /// exact up to float rounding (a weighted sum, a normalized conversion)
    inexact: bool,
}

impl Wg<'_, '_> {
    /// Lane `s`'s value of slot `c` of `r`, with its taint.
    fn lane(&self, r: Reg, c: usize, s: usize) -> (u64, Taint) {
        let i = self.regs.row(r, c) + s;
        let t = if self.regs.dirty(r) {
            self.regs.taint[i]
        } else {
            Taint::NONE
        };
        (self.regs.vals[i], t)
    }

    /// `OpSampledImage`: the image's handle naming the sampler.
    pub(crate) fn sampled_image(
        &mut self,
        flow: &Flow,
        d: Reg,
        img: Reg,
        smp: Reg,
    ) -> Result<(), SpirvError> {
        self.each_result(flow, d, 1, |wg, s| {
            let (i, it) = wg.lane(img, 0, s);
            let (p, pt) = wg.lane(smp, 0, s);
            let h = Ptr::sampled(Ptr::from_bits(i).obj(), Ptr::from_bits(p).obj());
            Ok(([h.bits(), 0, 0, 0], [combine(it, pt); 4]))
        })
    }

    /// The sampler a sampled image's handle names.
    fn sampler_of(&self, t: &Target, handle: u64) -> Result<Sampler, SpirvError> {
        let obj: ObjectId = Ptr::from_bits(handle).sampler().unwrap_or(t.obj);
        self.d
            .samplers
            .get(obj.index())
            .copied()
            .flatten()
            .ok_or_else(|| {
                SpirvError::Setup(format!(
                    "no sampler bound for {}",
                    self.k.objects.get(obj.index()).map_or("?", |o| &o.name)
                ))
            })
    }

    /// `OpImageSampleExplicitLod` / `OpImageSampleImplicitLod`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn image_sample(
        &mut self,
        flow: &Flow,
        d: Reg,
        img: Reg,
        coord: Reg,
        lod: Option<Reg>,
        n: u8,
        w: u8,
        int: bool,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        self.each_result(flow, d, n, |wg, s| {
            let (t, ht) = wg.image_of(img, s)?;
            let smp = wg.sampler_of(&t, wg.lane(img, 0, s).0)?;
            let dims = t.ty.dim.coords() as usize;
            let mut at = ht;
            let mut c = [0f64; 4];
            for (k, x) in c.iter_mut().enumerate().take(dims + t.ty.arrayed as usize) {
                let (v, vt) = wg.lane(coord, k, s);
                *x = f32::from_bits(v as u32) as f64;
                // A coordinate's float rounding (an inexact coordinate) moves it far less than
                // the half sub-texel division within which a device may select another texel
                // (for images up to 65536 texels wide), which `filter` already allows for.
                at = combine(at, vt.without_inexact());
            }
            // The filter the level of detail selects (Vulkan, "Texel Filtering": λ ≤ 0 magnifies).
            let filters: Vec<Filter> = match lod {
                Some(l) => {
                    let (v, lt) = wg.lane(l, 0, s);
                    at = combine(at, lt.without_inexact());
                    let lambda = (f32::from_bits(v as u32)).clamp(smp.min_lod, smp.max_lod);
                    vec![if lambda > 0.0 { smp.min } else { smp.mag }]
                }
                // An implicit level of detail needs derivatives, which a compute shader has only
                // with a derivative group: both filters, unless the sampler's range decides.
                None if smp.max_lod <= 0.0 || smp.mag == smp.min => vec![smp.mag],
                None if smp.min_lod > 0.0 => vec![smp.min],
                None => vec![smp.mag, smp.min],
            };
            if is_undefined(at) {
                return Ok(([0; 4], [at; 4]));
            }
            let mut results = Vec::with_capacity(2);
            for f in &filters {
                results.push(wg.filter(&t, &smp, *f, c, int, s, loc));
            }
            let mut r = results.swap_remove(0);
            if let Some(other) = results.first()
                && (other.v.map(f64::to_bits) != r.v.map(f64::to_bits) || other.open.is_some())
            {
                r.open = Some(format!(
                    "an implicit level of detail in a compute shader (SPIR-V: ImplicitLod needs derivatives, which GLCompute has only with a derivative group) chooses between the {:?} and {:?} filters of the sampler, and they give different values here",
                    smp.mag, smp.min
                ));
            }
            let mut taint = combine(r.t, at);
            if let Some(why) = r.open {
                taint = wg.prov(Cause::Image { why }, loc, taint);
            } else if r.inexact {
                taint = taint.inexact();
            }
            let bits = r.v.map(|x| {
                if int {
                    (x as i64 as u64) & crate::spirv::scalar::mask(w)
                } else {
                    image::float_bits(x, w)
                }
            });
            Ok((bits, [taint; 4]))
        })
    }

    /// Filter `f` of sampler `smp` over image `t` at coordinate `c` (array layer last) for lane
    /// `s` (Vulkan, "Texel Filtering", "Wrapping Operation", "Texel Replacement").
    #[allow(clippy::too_many_arguments)]
    fn filter(
        &mut self,
        t: &Target,
        smp: &Sampler,
        f: Filter,
        c: [f64; 4],
        int: bool,
        s: usize,
        loc: LocId,
    ) -> Filtered {
        let e = t.extent;
        let dims = t.ty.dim.coords() as usize;
        let size = [e.width, e.height, e.depth];
        let name = self.k.objects[t.obj.index()].name.clone();
        if f == Filter::Linear && (int || !t.ty.format.comp.is_float()) {
            return Filtered {
                v: [0.0; 4],
                t: Taint::NONE,
                open: Some(format!(
                    "linear filtering of {name}, whose format {} is not filterable (VUID-vkCmdDispatch-magFilter-04553: the view's format features must include SAMPLED_IMAGE_FILTER_LINEAR)",
                    t.ty.format.vk
                )),
                inexact: false,
            };
        }
        let layer = if t.ty.arrayed {
            sampler::layer(c[dims], e.depth)
        } else {
            0
        };
        let mut taps: Vec<Taps> = Vec::with_capacity(dims);
        for (a, &n) in size.iter().enumerate().take(dims) {
            let u = if smp.unnormalized {
                c[a]
            } else {
                c[a] * n as f64
            };
            taps.push(sampler::taps(u, f));
        }
        let mut out = Filtered {
            v: [0.0; 4],
            t: Taint::NONE,
            open: None,
            inexact: false,
        };
        // Every combination of the axes' taps: their texels and weights.
        let combos = taps.iter().map(|t| t.n).product::<usize>();
        let mut first: Option<[u64; 4]> = None;
        let mut all_same = true;
        for k in 0..combos {
            let (mut xyz, mut wgt, mut rest) = ([0i64, 0, layer], 1.0f64, k);
            for (a, tp) in taps.iter().enumerate() {
                let j = rest % tp.n;
                rest /= tp.n;
                xyz[a] = tp.i[j];
                wgt *= tp.w[j];
            }
            let (v, tt, inexact) = self.texel_at(t, smp, xyz, s, loc);
            out.t = combine(out.t, tt);
            out.inexact |= inexact;
            let bits = v.map(f64::to_bits);
            all_same &= first.is_none_or(|b| b == bits);
            first.get_or_insert(bits);
            for (o, x) in out.v.iter_mut().zip(v) {
                *o += wgt * x;
            }
        }
        if f == Filter::Linear {
            out.inexact |= combos > 1;
            if !all_same && taps.iter().any(|t| !t.exact) {
                out.open = Some(format!(
                    "linear filtering of {name} with a weight that is not a multiple of 1/16: a device snaps it to its subTexelPrecisionBits (at least 4, Vulkan, Limits), so the value is bounded by the texels it weighs, not pinned down"
                ));
            }
            return out;
        }
        // Nearest: a coordinate just below a texel boundary may select the next texel.
        for (a, tp) in taps.iter().enumerate() {
            let Some(alt) = tp.alt else { continue };
            let mut xyz = [taps[0].i[0], 0, layer];
            for (b, tb) in taps.iter().enumerate().skip(1) {
                xyz[b] = tb.i[0];
            }
            xyz[a] = alt;
            let (v, tt, _) = self.texel_at(t, smp, xyz, s, loc);
            out.t = combine(out.t, tt);
            if v.map(f64::to_bits) != out.v.map(f64::to_bits) {
                out.open = Some(format!(
                    "nearest filtering of {name} at a coordinate within 1/32 of a texel below the boundary between texels {} and {alt} of axis {a}: a device snaps coordinates to its subTexelPrecisionBits (at least 4, Vulkan, Limits) and may select either, which hold different values",
                    tp.i[0]
                ));
            }
        }
        out
    }

    /// The texel at integer coordinate `xyz` after wrapping (the border color outside a
    /// clamp-to-border axis), as f64 components, with its taint and whether the conversion was
    /// inexact.
    fn texel_at(
        &mut self,
        t: &Target,
        smp: &Sampler,
        xyz: [i64; 3],
        s: usize,
        loc: LocId,
    ) -> ([f64; 4], Taint, bool) {
        let e = t.extent;
        let dims = t.ty.dim.coords() as usize;
        let size = [e.width, e.height, e.depth];
        let mut at = xyz;
        for a in 0..dims {
            match smp.address[a].wrap(xyz[a], size[a]) {
                Some(i) => at[a] = i,
                // Texel Replacement: a border texel is the border color.
                None => return (smp.border.rgba().0, Taint::NONE, false),
            }
        }
        let Some(i) = e.index(at, 0) else {
            return ([0.0; 4], Taint::NONE, false);
        };
        let f = t.ty.format;
        let off = (i * f.texel_bytes() as u64) as u32;
        let (raw, tt) = self.texel_raw(t, off, s, loc);
        let mut v = [0f64; 4];
        let mut inexact = false;
        for (c, x) in v.iter_mut().enumerate() {
            let (bits, ix) = image::read_component(&f, c, raw[c], 64);
            inexact |= ix;
            *x = if f.comp.is_float() {
                f64::from_bits(bits)
            } else {
                bits as i64 as f64
            };
        }
        (v, tt, inexact)
    }
}
