//! Storage images and texel buffers: `OpImageRead`, `OpImageFetch` (texel buffers), `OpImageWrite`,
//! `OpImageQuerySize`, `OpImageQuerySamples`, `OpImageTexelPointer` and `OpImage`
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
                let it = self.image_behind(id_at(i, 0)?)?;
                if op == SOp::ImageFetch && it.dim != ImageDim::Buffer {
                    return Err(unsupported(
                        "OpImageFetch of a sampled image other than a texel buffer",
                    ));
                }
                let (cid, rt) = (id_at(i, 1)?, i.result_type.unwrap_or(0));
                let (sc, n) = self
                    .types
                    .scalar_vector(self.ty(rt)?)
                    .ok_or_else(|| SpirvError::malformed("an image read of a non-vector type"))?;
                let sample = self.sample_operand(i, 2)?;
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
            SOp::ImageQuerySize | SOp::ImageQuerySamples => {
                self.image_behind(id_at(i, 0)?)?;
                let (sc, n) = self
                    .types
                    .scalar_vector(self.ty(i.result_type.unwrap_or(0))?)
                    .ok_or_else(|| SpirvError::malformed("an image query of a non-vector type"))?;
                Inst::ImageQuery {
                    d: self.reg(rid)?,
                    img: self.arg(i, 0)?,
                    samples: op == SOp::ImageQuerySamples,
                    n: n.min(3) as u8,
                    w: sc.bits() as u8,
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
