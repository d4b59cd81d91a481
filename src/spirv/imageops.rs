//! Storage image and texel buffer instructions on the machine: reads, writes, size queries and
//! texel pointers, each texel component going through the memory layer ([`Wg::read_scalar`],
//! [`Wg::write_scalar`]) so that taint, races and happens-before are those of buffers. The format
//! conversions and the coordinate rule live in [`crate::spirv::image`].

use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::Wg;
use crate::spirv::ids::{LocId, ObjectId};
use crate::spirv::image::{self, Extent, TexelFormat};
use crate::spirv::inst::Reg;
use crate::spirv::memory::{Ptr, Space};
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::spirv::types::{ImageType, Scalar};

/// One lane's view of an image access: the image, its texel format and extent.
pub(crate) struct Target {
    pub(crate) obj: ObjectId,
    pub(crate) ty: ImageType,
    pub(crate) extent: Extent,
}

impl Wg<'_, '_> {
    /// Writes `d`'s first `n` components for every active lane from `f(lane)` (values and taints),
    /// keeping the register clean where no taint results.
    pub(crate) fn each_result(
        &mut self,
        flow: &Flow,
        d: Reg,
        n: u8,
        mut f: impl FnMut(&mut Self, usize) -> Result<([u64; 4], [Taint; 4]), SpirvError>,
    ) -> Result<(), SpirvError> {
        let (lanes, nl) = (self.lanes, self.n);
        let db = self.regs.base(d);
        let was_dirty = self.regs.dirty(d);
        self.regs.make_dirty(d);
        let mut any_t = false;
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * nl + l as usize;
                let (vals, taint) = f(self, s)?;
                for c in 0..n as usize {
                    self.regs.vals[db + c * lanes + s] = vals[c];
                    self.regs.taint[db + c * lanes + s] = taint[c];
                    any_t |= !taint[c].is_none();
                }
            }
        }
        if !any_t && !was_dirty {
            self.regs.set_clean(d);
        }
        Ok(())
    }

    /// The image lane `s`'s handle in `img` names, with the taint of the handle.
    pub(crate) fn image_of(&self, img: Reg, s: usize) -> Result<(Target, Taint), SpirvError> {
        let ib = self.regs.base(img);
        let p = Ptr::from_bits(self.regs.vals[ib + s]);
        let t = if self.regs.dirty(img) {
            self.regs.taint[ib + s]
        } else {
            Taint::NONE
        };
        let obj = p.obj();
        let o = self
            .k
            .objects
            .get(obj.index())
            .ok_or_else(|| SpirvError::malformed("an image handle that names no image"))?;
        let ty = o
            .image
            .ok_or_else(|| SpirvError::malformed(format!("{} used as an image", o.name)))?;
        let extent = self
            .d
            .extents
            .get(obj.index())
            .copied()
            .flatten()
            .or_else(|| self.d.buffers[obj.index()].as_ref().and_then(|b| b.extent))
            .ok_or_else(|| SpirvError::Setup(format!("no image bound for {}", o.name)))?;
        Ok((Target { obj, ty, extent }, t))
    }

    /// Lane `s`'s coordinate in `coord` as (x, y, z-or-layer), with its taint.
    fn coord_of(&self, ty: &ImageType, coord: Reg, cw: u8, s: usize) -> ([i64; 3], Taint) {
        let (cb, lanes) = (self.regs.base(coord), self.lanes);
        let dirty = self.regs.dirty(coord);
        let n = ty.dim.coords() as usize;
        let mut xyz = [0i64; 3];
        let mut t = Taint::NONE;
        let get = |c: usize| {
            let v = self.regs.vals[cb + c * lanes + s];
            let sh = 64 - cw as u32;
            (
                ((v << sh) as i64) >> sh,
                if dirty {
                    self.regs.taint[cb + c * lanes + s]
                } else {
                    Taint::NONE
                },
            )
        };
        for (c, x) in xyz.iter_mut().enumerate().take(n) {
            let (v, ct) = get(c);
            *x = v;
            t = combine(t, ct);
        }
        if ty.arrayed {
            let (v, ct) = get(n);
            xyz[2] = v;
            t = combine(t, ct);
        }
        (xyz, t)
    }

    fn sample_of(&self, sample: Option<Reg>, sw: u8, s: usize) -> (i64, Taint) {
        let Some(r) = sample else {
            return (0, Taint::NONE);
        };
        let b = self.regs.base(r);
        let v = self.regs.vals[b + s];
        let sh = 64 - sw as u32;
        let t = if self.regs.dirty(r) {
            self.regs.taint[b + s]
        } else {
            Taint::NONE
        };
        (((v << sh) as i64) >> sh, t)
    }

    fn outside(
        &mut self,
        t: &Target,
        xyz: [i64; 3],
        sample: i64,
        write: bool,
        loc: LocId,
    ) -> Taint {
        let o = &self.k.objects[t.obj.index()];
        let n = t.ty.dim.coords() as usize + t.ty.arrayed as usize;
        let c: Vec<String> = xyz[..n.min(3)].iter().map(|v| v.to_string()).collect();
        let e = t.extent;
        let why = format!(
            "texel ({}){} is outside the {}x{}x{}{} image {}: integer texel coordinate validation fails{}",
            c.join(", "),
            if t.ty.ms { format!(" sample {sample}") } else { String::new() },
            e.width,
            e.height,
            e.depth,
            if t.ty.ms { format!(" ({} samples)", e.samples) } else { String::new() },
            o.name,
            if write {
                ""
            } else {
                ", and without robustImageAccess the replaced texel's value is undefined (Vulkan, Image Operations, Texel Replacement)"
            }
        );
        self.prov(Cause::Image { why }, loc, Taint::NONE)
    }

    /// The raw components of the texel at byte `off` of image `t` (from its view's start), and their
    /// taint.
    pub(crate) fn texel_raw(
        &mut self,
        t: &Target,
        off: u32,
        s: usize,
        loc: LocId,
    ) -> ([u64; 4], Taint) {
        // (a texel buffer over part of a buffer: its texels start at its view)
        let off = off + self.d.view(t.obj).0;
        let f = t.ty.format;
        let mut raw = [0u64; 4];
        let mut taint = Taint::NONE;
        match f.packed {
            Some(_) => {
                let (v, tt) = self.read_scalar(t.obj, Space::Global, off, uint(32), s, loc);
                raw = image::unpack(&f, &(v as u32).to_le_bytes());
                taint = tt;
            }
            None => {
                let cb = f.comp.bits() as u32 / 8;
                for (c, r) in raw.iter_mut().enumerate().take(f.comps as usize) {
                    let (v, tt) = self.read_scalar(
                        t.obj,
                        Space::Global,
                        off + c as u32 * cb,
                        uint(cb * 8),
                        s,
                        loc,
                    );
                    *r = v;
                    taint = combine(taint, tt);
                }
            }
        }
        (raw, taint)
    }

    /// `OpImageRead` / `OpImageFetch`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn image_read(
        &mut self,
        flow: &Flow,
        d: Reg,
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Option<Reg>,
        n: u8,
        w: u8,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        self.each_result(flow, d, n, |wg, s| {
            let (t, ht) = wg.image_of(img, s)?;
            let (xyz, ct) = wg.coord_of(&t.ty, coord, cw, s);
            let (smp, st) = wg.sample_of(sample, 32, s);
            let at = combine(combine(ht, ct), st);
            Ok(match t.extent.index(xyz, smp) {
                _ if is_undefined(at) => ([0u64; 4], [at; 4]),
                None => ([0u64; 4], [wg.outside(&t, xyz, smp, false, loc); 4]),
                Some(i) => {
                    let off = (i * t.ty.format.texel_bytes() as u64) as u32;
                    let (raw, rt) = wg.texel_raw(&t, off, s, loc);
                    let base = combine(rt, at);
                    let mut v = [0u64; 4];
                    let mut tt = [base; 4];
                    for c in 0..4 {
                        let (bits, inexact) = image::read_component(&t.ty.format, c, raw[c], w);
                        v[c] = bits;
                        if inexact {
                            tt[c] = base.inexact();
                        }
                    }
                    (v, tt)
                }
            })
        })
    }

    /// `OpImageWrite`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn image_write(
        &mut self,
        flow: &Flow,
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Option<Reg>,
        texel: Reg,
        n: u8,
        w: u8,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let (lanes, nl) = (self.lanes, self.n);
        let vb = self.regs.base(texel);
        let vdirty = self.regs.dirty(texel);
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * nl + l as usize;
                let (t, ht) = self.image_of(img, s)?;
                let o = &self.k.objects[t.obj.index()];
                if o.read_only {
                    return Err(SpirvError::malformed(format!(
                        "OpImageWrite to {}, which the shader cannot write (NonWritable or a sampled image)",
                        o.name
                    )));
                }
                let (xyz, ct) = self.coord_of(&t.ty, coord, cw, s);
                let (smp, st) = self.sample_of(sample, 32, s);
                let at = combine(combine(ht, ct), st);
                if is_undefined(at) {
                    // Which texel is written is not pinned down.
                    self.store_through_undefined_pointer(t.obj, Space::Global, at, loc, s);
                    continue;
                }
                // Texel Output Validation Operations: a texel outside the image is not written.
                let Some(i) = t.extent.index(xyz, smp) else {
                    continue;
                };
                let f: TexelFormat = t.ty.format;
                let off = (i * f.texel_bytes() as u64) as u32 + self.d.view(t.obj).0;
                let mut raw = [0u64; 4];
                let mut taints = [at; 4];
                for c in 0..f.comps as usize {
                    if c >= n as usize {
                        taints[c] = self.prov(
                            Cause::Image {
                                why: format!(
                                    "OpImageWrite gives {n} components, the format {} stores {}",
                                    f.vk, f.comps
                                ),
                            },
                            loc,
                            Taint::NONE,
                        );
                        continue;
                    }
                    let v = self.regs.vals[vb + c * lanes + s];
                    let vt = if vdirty {
                        self.regs.taint[vb + c * lanes + s]
                    } else {
                        Taint::NONE
                    };
                    let (r, inexact, why) = image::write_component(&f, c, v, w);
                    raw[c] = r;
                    let mut tt = combine(vt, at);
                    if let Some(why) = why {
                        tt = combine(self.prov(Cause::Image { why }, loc, Taint::NONE), tt);
                    }
                    if inexact {
                        // a texel component the format rounds: one of the two nearest (an
                        // integer of a normalized format: within one)
                        tt = tt.inexact().as_number();
                    }
                    taints[c] = tt;
                }
                let store = |wg: &mut Self, t: Taint| {
                    let t = wg.write_taint(s, t);
                    if t.has_prov() {
                        wg.stored_link(t, loc)
                    } else {
                        t
                    }
                };
                match f.packed {
                    Some(_) => {
                        let word =
                            u32::from_le_bytes(image::pack(&f, &raw).try_into().unwrap_or([0; 4]));
                        let all = taints[..f.comps as usize]
                            .iter()
                            .fold(Taint::NONE, |a, b| combine(a, *b));
                        let tw = store(self, all);
                        self.write_scalar(
                            t.obj,
                            Space::Global,
                            off,
                            uint(32),
                            s,
                            word as u64,
                            tw,
                            loc,
                        );
                    }
                    None => {
                        let cb = f.comp.bits() as u32 / 8;
                        for c in 0..f.comps as usize {
                            let tc = store(self, taints[c]);
                            self.write_scalar(
                                t.obj,
                                Space::Global,
                                off + c as u32 * cb,
                                uint(cb * 8),
                                s,
                                raw[c],
                                tc,
                                loc,
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `OpImageQuerySize`, `OpImageQuerySizeLod` (`what` 0), `OpImageQuerySamples` (1) and
    /// `OpImageQueryLevels` (2). Bound images have one level: a size asked of another level is
    /// undefined (SPIR-V, `OpImageQuerySizeLod`: "Level of Detail … must be less than the number
    /// of levels").
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn image_query(
        &mut self,
        flow: &Flow,
        d: Reg,
        img: Reg,
        what: u8,
        lod: Option<Reg>,
        n: u8,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        self.each_result(flow, d, n, |wg, s| {
            let (t, mut ht) = wg.image_of(img, s)?;
            let e = t.extent;
            if let Some(l) = lod {
                let (level, lt) = wg.sample_of(Some(l), 32, s);
                ht = combine(ht, lt);
                if level != 0 && !is_undefined(ht) {
                    let why = format!(
                        "the size of level {level} of {}, which has one level: the level of detail must be less than the number of levels (SPIR-V, OpImageQuerySizeLod)",
                        wg.k.objects[t.obj.index()].name
                    );
                    ht = wg.prov(Cause::Image { why }, loc, ht);
                }
            }
            let v: [u64; 3] = if what == 1 {
                [e.samples as u64, 0, 0]
            } else if what == 2 {
                [1, 0, 0]
            } else {
                // Width, then height (2D, 3D, 1D arrays: layers), then depth or layers.
                match (t.ty.dim.coords(), t.ty.arrayed) {
                    (1, false) => [e.width as u64, 0, 0],
                    (1, true) => [e.width as u64, e.depth as u64, 0],
                    _ => [e.width as u64, e.height as u64, e.depth as u64],
                }
            };
            Ok(([v[0], v[1], v[2], 0], [ht; 4]))
        })
    }

    /// `OpImageTexelPointer`: a pointer into the image's bytes for an atomic (out of bounds where
    /// the coordinate fails validation).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn texel_pointer(
        &mut self,
        flow: &Flow,
        d: Reg,
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Reg,
        sw: u8,
    ) -> Result<(), SpirvError> {
        self.each_result(flow, d, 1, |wg, s| {
            let (t, ht) = wg.image_of(img, s)?;
            let (xyz, ct) = wg.coord_of(&t.ty, coord, cw, s);
            let (smp, st) = wg.sample_of(t.ty.ms.then_some(sample), sw, s);
            let at = combine(combine(ht, ct), st);
            let p = match t.extent.index(xyz, smp) {
                Some(i) => Ptr::new(t.obj, (i * t.ty.format.texel_bytes() as u64) as u32),
                None => Ptr::new(t.obj, 0).out_of_bounds(),
            };
            Ok(([p.bits(), 0, 0, 0], [at; 4]))
        })
    }
}

fn uint(bits: u32) -> Scalar {
    Scalar::Int {
        width: bits as u8,
        signed: false,
    }
}
