//! Storage images and texel buffers: `OpImageRead`, `OpImageFetch` (texel buffers), `OpImageWrite`,
//! `OpImageQuerySize`, `OpImageQuerySamples`, `OpImageTexelPointer` and `OpImage`; sampled images:
//! `OpSampledImage`, `OpImageSampleExplicitLod`/`ImplicitLod`, `OpImageQuerySizeLod`,
//! `OpImageQueryLevels`
//! ([`Family::Image`]; executed by `imageops.rs`, the rules in [`crate::spirv::image`]).

use super::*;
use rspirv::spirv::ImageOperands;

impl Decoder<'_> {
    /// The image type behind value or pointer `id` (an image, a sampled image of a texel buffer, or
    /// a pointer to either).
    fn image_behind(&self, id: u32) -> Result<ImageType, SpirvError> {
        let mut t = self.type_of_value(id)?;
        loop {
            match self.types.get(t) {
                Type::Image(it) => return Ok(*it),
                Type::SampledImage(i) => t = *i,
                Type::Pointer { pointee, .. } => t = *pointee,
                _ => return Err(SpirvError::malformed(format!("%{id} is not an image"))),
            }
        }
    }

    /// The width of the integer coordinate (or sample) `id`.
    fn int_width(&self, id: u32, what: &str) -> Result<u8, SpirvError> {
        match self.sv_of(id)? {
            (Scalar::Int { width, .. }, _) => Ok(width),
            _ => Err(unsupported(format!(
                "{what} that is not an integer (only integer texel coordinates address a storage image or texel buffer)"
            ))),
        }
    }

    /// The `Sample` image operand after `from`, if any; other operands than `Sample`, `Lod` 0 and
    /// the memory-model texel flags are not interpreted.
    fn sample_operand(&mut self, i: &Instruction, from: usize) -> Result<Option<Reg>, SpirvError> {
        let Some(Operand::ImageOperands(m)) = i.operands.get(from) else {
            return Ok(None);
        };
        let known = ImageOperands::SAMPLE
            | ImageOperands::LOD
            | ImageOperands::NON_PRIVATE_TEXEL
            | ImageOperands::VOLATILE_TEXEL
            | ImageOperands::MAKE_TEXEL_AVAILABLE
            | ImageOperands::MAKE_TEXEL_VISIBLE
            | ImageOperands::SIGN_EXTEND
            | ImageOperands::ZERO_EXTEND;
        if !known.contains(*m) {
            return Err(unsupported(format!(
                "{} with image operands {m:?}",
                op_name(i.class.opcode)
            )));
        }
        // Operands follow in the order of their bits.
        let mut k = from + 1;
        let mut sample = None;
        if m.contains(ImageOperands::LOD) {
            let lod = id_at(i, k)?;
            if !matches!(self.ids.get(&lod), Some(Id::Const(c)) if c.bits.iter().all(|&b| b == 0) && !c.any_undef())
            {
                return Err(unsupported(
                    "a texel fetch at a level of detail other than 0",
                ));
            }
            k += 1;
        }
        if m.contains(ImageOperands::SAMPLE) {
            sample = Some(self.value(id_at(i, k)?)?);
        }
        Ok(sample)
    }

    /// The level of detail of an image sample: the `Lod` operand of an explicit-LOD sample (a
    /// `Grad` one, offsets and minimum LOD are not interpreted), nothing for an implicit one (whose
    /// `Bias` only moves a level of detail a compute shader does not define).
    fn lod_operand(
        &mut self,
        i: &Instruction,
        from: usize,
        explicit: bool,
    ) -> Result<Option<Reg>, SpirvError> {
        let m = match i.operands.get(from) {
            Some(Operand::ImageOperands(m)) => *m,
            _ if explicit => {
                return Err(SpirvError::malformed(
                    "OpImageSampleExplicitLod without image operands",
                ))
            }
            _ => return Ok(None),
        };
        let known = ImageOperands::LOD
            | ImageOperands::BIAS
            | ImageOperands::NON_PRIVATE_TEXEL
            | ImageOperands::VOLATILE_TEXEL
            | ImageOperands::MAKE_TEXEL_VISIBLE;
        if !known.contains(m) {
            return Err(unsupported(format!(
                "{} with image operands {m:?} (Lod and Bias are interpreted)",
                op_name(i.class.opcode)
            )));
        }
        if explicit && !m.contains(ImageOperands::LOD) {
            return Err(SpirvError::malformed(
                "OpImageSampleExplicitLod without a Lod operand",
            ));
        }
        if m.contains(ImageOperands::LOD) {
            return Ok(Some(self.value(id_at(i, from + 1)?)?));
        }
        Ok(None)
    }

    /// An image instruction ([`Family::Image`]).
    pub(super) fn image_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(Some(match op {
            SOp::Image => {
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                Inst::Move { d, a, off: 0, n: 1 }
            }
            SOp::ImageRead | SOp::ImageFetch => {
                self.image_behind(id_at(i, 0)?)?;
                let (cid, rt) = (id_at(i, 1)?, i.result_type.unwrap_or(0));
                let (sc, n) = self
                    .types
                    .scalar_vector(self.ty(rt)?)
                    .ok_or_else(|| SpirvError::malformed("an image read of a non-vector type"))?;
                let sample = self.sample_operand(i, 2)?;
                if op == SOp::ImageRead {
                    let np = texel_non_private(i, 2);
                    self.note_private(id_at(i, 0)?, Storage::Image, np, private_side::READ);
                }
                Inst::ImageRead {
                    d: self.reg(rid)?,
                    img: self.arg(i, 0)?,
                    coord: self.value(cid)?,
                    cw: self.int_width(cid, "a texel coordinate")?,
                    sample,
                    n: n.min(4) as u8,
                    w: sc.bits() as u8,
                }
            }
            SOp::ImageWrite => {
                self.image_behind(id_at(i, 0)?)?;
                let (cid, tid) = (id_at(i, 1)?, id_at(i, 2)?);
                let (sc, n) = self.sv_of(tid)?;
                let sample = self.sample_operand(i, 3)?;
                let np = texel_non_private(i, 3);
                self.note_private(id_at(i, 0)?, Storage::Image, np, private_side::WRITE);
                Inst::ImageWrite {
                    img: self.arg(i, 0)?,
                    coord: self.value(cid)?,
                    cw: self.int_width(cid, "a texel coordinate")?,
                    sample,
                    texel: self.value(tid)?,
                    n: n.min(4) as u8,
                    w: sc.bits() as u8,
                }
            }
            SOp::ImageQuerySize
            | SOp::ImageQuerySizeLod
            | SOp::ImageQuerySamples
            | SOp::ImageQueryLevels => {
                self.image_behind(id_at(i, 0)?)?;
                let (sc, n) = self
                    .types
                    .scalar_vector(self.ty(i.result_type.unwrap_or(0))?)
                    .ok_or_else(|| SpirvError::malformed("an image query of a non-vector type"))?;
                Inst::ImageQuery {
                    d: self.reg(rid)?,
                    img: self.arg(i, 0)?,
                    what: match op {
                        SOp::ImageQuerySamples => 1,
                        SOp::ImageQueryLevels => 2,
                        _ => 0,
                    },
                    lod: match op {
                        SOp::ImageQuerySizeLod => Some(self.arg(i, 1)?),
                        _ => None,
                    },
                    n: n.min(3) as u8,
                    w: sc.bits() as u8,
                }
            }
            SOp::SampledImage => Inst::SampledImage {
                d: self.reg(rid)?,
                img: self.arg(i, 0)?,
                smp: self.arg(i, 1)?,
            },
            SOp::ImageSampleExplicitLod | SOp::ImageSampleImplicitLod => {
                let it = self.image_behind(id_at(i, 0)?)?;
                if it.dim == ImageDim::Buffer {
                    return Err(SpirvError::malformed(
                        "a texel buffer sampled through a sampler (texel buffers are read with OpImageFetch)",
                    ));
                }
                let cid = id_at(i, 1)?;
                match self.sv_of(cid)? {
                    (Scalar::Float { width: 32 }, _) => {}
                    _ => {
                        return Err(unsupported(
                            "a sampled-image coordinate that is not a 32-bit float vector",
                        ))
                    }
                }
                let rt = i.result_type.unwrap_or(0);
                let (sc, n) = self
                    .types
                    .scalar_vector(self.ty(rt)?)
                    .ok_or_else(|| SpirvError::malformed("an image sample of a non-vector type"))?;
                let lod = self.lod_operand(i, 2, op == SOp::ImageSampleExplicitLod)?;
                Inst::ImageSample {
                    d: self.reg(rid)?,
                    img: self.arg(i, 0)?,
                    coord: self.value(cid)?,
                    lod,
                    n: n.min(4) as u8,
                    w: sc.bits() as u8,
                    int: !sc.is_float(),
                }
            }
            SOp::ImageTexelPointer => {
                self.image_behind(id_at(i, 0)?)?;
                let (cid, sid) = (id_at(i, 1)?, id_at(i, 2)?);
                // The pointer's layout: the texel's scalar, as an atomic on it reads it.
                self.ptr_layout.insert(rid, MatrixLayout::default());
                Inst::TexelPointer {
                    d: self.reg(rid)?,
                    img: self.value(id_at(i, 0)?)?,
                    coord: self.value(cid)?,
                    cw: self.int_width(cid, "a texel coordinate")?,
                    sample: self.value(sid)?,
                    sw: self.int_width(sid, "a sample index")?,
                }
            }
            other => return Err(misrouted(other, "image")),
        }))
    }
}

/// Whether the image operands at `k` carry `NonPrivateTexel` (Vulkan memory model).
fn texel_non_private(i: &Instruction, k: usize) -> bool {
    matches!(i.operands.get(k), Some(Operand::ImageOperands(m)) if m.contains(ImageOperands::NON_PRIVATE_TEXEL))
}
