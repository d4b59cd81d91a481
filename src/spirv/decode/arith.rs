//! Scalar and vector arithmetic, comparisons and conversions.

use super::*;

impl Decoder<'_> {
    pub(super) fn int2(&mut self, i: &Instruction, op: IntBin) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, false)?;
        Ok(Some(Inst::IntBin { op, w, n, d, a, b }))
    }

    pub(super) fn icmp(&mut self, i: &Instruction, op: IntCmp) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, true)?;
        Ok(Some(Inst::IntCmp { op, w, n, d, a, b }))
    }

    pub(super) fn fbin(
        &mut self,
        i: &Instruction,
        o: FloatBin,
    ) -> Result<Option<Inst>, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let (sc, n) = self.result_sv(i)?;
        let (ai, bi) = (id_at(i, 0)?, id_at(i, 1)?);
        let contract = matches!(o, FloatBin::Add | FloatBin::Sub)
            && !self.has_deco(rid, Decoration::NoContraction)
            && (self.is_contractible(ai) || self.is_contractible(bi));
        let (d, a, b) = (self.reg(rid)?, self.value(ai)?, self.value(bi)?);
        check_ssa!(d, a, b);
        Ok(Some(Inst::FloatBin {
            op: o,
            w: sc.bits() as u8,
            n,
            d,
            a,
            b,
            contract,
            relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
        }))
    }

    pub(super) fn fcmp(
        &mut self,
        i: &Instruction,
        op: FloatCmp,
    ) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, true)?;
        Ok(Some(Inst::FloatCmp { op, w, n, d, a, b }))
    }

    pub(super) fn conv(&mut self, i: &Instruction, o: Conv) -> Result<Option<Inst>, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let (to, n) = self.result_sv(i)?;
        let (from, _) = self.sv_of(id_at(i, 0)?)?;
        let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
        check_ssa!(d, a);
        Ok(Some(Inst::Conv {
            op: o,
            from,
            to,
            n,
            d,
            a,
        }))
    }

    /// Integer and float arithmetic and comparisons, `OpUndef` ([`Family::Arith`]).
    pub(super) fn scalar_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::Undef => {
                let d = self.reg(rid)?;
                Some(Inst::Undef {
                    d,
                    n: self.reg_slots[d.index()],
                })
            }
            SOp::ReadClockKHR => {
                // SPV_KHR_shader_clock: a 64-bit unsigned integer, or a vector of two 32-bit ones
                let (sc, n) = self.result_sv(i)?;
                let (w, int) = (sc.bits(), matches!(sc, Scalar::Int { signed: false, .. }));
                if !int || !((w == 64 && n == 1) || (w == 32 && n == 2)) {
                    return Err(SpirvError::malformed(
                        "OpReadClockKHR: the result must be a 64-bit unsigned integer or a vector of two 32-bit ones (SPV_KHR_shader_clock)",
                    ));
                }
                let scope = self.const_u32(id_at(i, 0)?)?;
                Some(Inst::Clock {
                    d: self.reg(rid)?,
                    n,
                    device: scope == rspirv::spirv::Scope::Device as u32,
                })
            }
            SOp::IAdd => self.int2(i, IntBin::Add)?,
            SOp::ISub => self.int2(i, IntBin::Sub)?,
            SOp::IMul => self.int2(i, IntBin::Mul)?,
            SOp::UDiv => self.int2(i, IntBin::UDiv)?,
            SOp::SDiv => self.int2(i, IntBin::SDiv)?,
            SOp::UMod => self.int2(i, IntBin::UMod)?,
            SOp::SRem => self.int2(i, IntBin::SRem)?,
            SOp::SMod => self.int2(i, IntBin::SMod)?,
            SOp::ShiftLeftLogical => self.int2(i, IntBin::Shl)?,
            SOp::ShiftRightLogical => self.int2(i, IntBin::ShrL)?,
            SOp::ShiftRightArithmetic => self.int2(i, IntBin::ShrA)?,
            SOp::BitwiseAnd => self.int2(i, IntBin::And)?,
            SOp::BitwiseOr => self.int2(i, IntBin::Or)?,
            SOp::BitwiseXor => self.int2(i, IntBin::Xor)?,
            SOp::IEqual => self.icmp(i, IntCmp::Eq)?,
            SOp::INotEqual => self.icmp(i, IntCmp::Ne)?,
            SOp::UGreaterThan => self.icmp(i, IntCmp::UGt)?,
            SOp::SGreaterThan => self.icmp(i, IntCmp::SGt)?,
            SOp::UGreaterThanEqual => self.icmp(i, IntCmp::UGe)?,
            SOp::SGreaterThanEqual => self.icmp(i, IntCmp::SGe)?,
            SOp::ULessThan => self.icmp(i, IntCmp::ULt)?,
            SOp::SLessThan => self.icmp(i, IntCmp::SLt)?,
            SOp::ULessThanEqual => self.icmp(i, IntCmp::ULe)?,
            SOp::SLessThanEqual => self.icmp(i, IntCmp::SLe)?,
            SOp::SNegate | SOp::Not | SOp::BitCount | SOp::BitReverse => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                let o = match op {
                    SOp::SNegate => IntUn::Neg,
                    SOp::Not => IntUn::Not,
                    SOp::BitCount => IntUn::BitCount,
                    _ => IntUn::BitReverse,
                };
                Some(Inst::IntUn {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::FAdd => self.fbin(i, FloatBin::Add)?,
            SOp::FSub => self.fbin(i, FloatBin::Sub)?,
            SOp::FMul => self.fbin(i, FloatBin::Mul)?,
            SOp::FDiv => self.fbin(i, FloatBin::Div)?,
            SOp::FRem => self.fbin(i, FloatBin::Rem)?,
            SOp::FMod => self.fbin(i, FloatBin::Mod)?,
            SOp::FNegate => {
                let (sc, n) = self.result_sv(i)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::FloatNeg {
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::IsNan | SOp::IsInf => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::FloatClass {
                    inf: op == SOp::IsInf,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::FOrdEqual => self.fcmp(i, FloatCmp::OrdEq)?,
            SOp::FUnordEqual => self.fcmp(i, FloatCmp::UnordEq)?,
            SOp::FOrdNotEqual => self.fcmp(i, FloatCmp::OrdNe)?,
            SOp::FUnordNotEqual => self.fcmp(i, FloatCmp::UnordNe)?,
            SOp::FOrdLessThan => self.fcmp(i, FloatCmp::OrdLt)?,
            SOp::FUnordLessThan => self.fcmp(i, FloatCmp::UnordLt)?,
            SOp::FOrdGreaterThan => self.fcmp(i, FloatCmp::OrdGt)?,
            SOp::FUnordGreaterThan => self.fcmp(i, FloatCmp::UnordGt)?,
            SOp::FOrdLessThanEqual => self.fcmp(i, FloatCmp::OrdLe)?,
            SOp::FUnordLessThanEqual => self.fcmp(i, FloatCmp::UnordLe)?,
            SOp::FOrdGreaterThanEqual => self.fcmp(i, FloatCmp::OrdGe)?,
            SOp::FUnordGreaterThanEqual => self.fcmp(i, FloatCmp::UnordGe)?,
            other => return Err(misrouted(other, "arith")),
        })
    }

    /// Logical operations, any/all and selection ([`Family::Logic`]).
    pub(super) fn logic_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::LogicalAnd | SOp::LogicalOr | SOp::LogicalEqual | SOp::LogicalNotEqual => {
                let (_, n) = self.result_sv(i)?;
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let o = match op {
                    SOp::LogicalAnd => LogicBin::And,
                    SOp::LogicalOr => LogicBin::Or,
                    SOp::LogicalEqual => LogicBin::Eq,
                    _ => LogicBin::Ne,
                };
                Some(Inst::LogicBin { op: o, n, d, a, b })
            }
            SOp::LogicalNot => {
                let (_, n) = self.result_sv(i)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::LogicNot { n, d, a })
            }
            SOp::Any | SOp::All => {
                let (_, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::AnyAll {
                    all: op == SOp::All,
                    n,
                    d,
                    a,
                })
            }
            SOp::Select => {
                let d = self.reg(rid)?;
                let n = self.reg_slots[d.index()];
                let cid = id_at(i, 0)?;
                let (_, cn) = self.sv_of(cid)?;
                let (c, a, b) = (self.value(cid)?, self.arg(i, 1)?, self.arg(i, 2)?);
                check_ssa!(d, c, a, b);
                Some(Inst::Select {
                    n,
                    d,
                    c,
                    vector_cond: cn > 1,
                    a,
                    b,
                })
            }
            other => return Err(misrouted(other, "logic")),
        })
    }

    /// Conversions, bit casts, and pointer/integer conversions ([`Family::Convert`]).
    pub(super) fn convert_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::ConvertFToU => self.conv(i, Conv::FToU)?,
            SOp::ConvertFToS => self.conv(i, Conv::FToS)?,
            SOp::ConvertSToF => self.conv(i, Conv::SToF)?,
            SOp::ConvertUToF => self.conv(i, Conv::UToF)?,
            SOp::UConvert => self.conv(i, Conv::UConvert)?,
            SOp::SConvert => self.conv(i, Conv::SConvert)?,
            SOp::FConvert => self.conv(i, Conv::FConvert)?,
            SOp::QuantizeToF16 => self.conv(i, Conv::QuantizeF16)?,
            SOp::Bitcast => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let from_t = self.type_of_value(id_at(i, 0)?)?;
                // A device address (PhysicalStorageBuffer) is 64 bits like any integer; a
                // logical pointer has no bits to reinterpret.
                let logical = |t: TypeId| {
                    matches!(self.types.get(t), Type::Pointer { storage, .. }
                        if *storage != Storage::PhysicalStorageBuffer)
                };
                if logical(t) || logical(from_t) {
                    return Err(unsupported("OpBitcast of a logical pointer"));
                }
                let to = self.types.slot_kinds(t)?;
                let from = self.types.slot_kinds(from_t)?;
                let bytes = |v: &[Scalar]| v.iter().map(|s| s.bits()).sum::<u32>();
                if bytes(&to) != bytes(&from) {
                    return Err(SpirvError::malformed(
                        "OpBitcast between types of different sizes",
                    ));
                }
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::Bitcast {
                    from: from.into(),
                    to: to.into(),
                    d,
                    a,
                })
            }
            SOp::ConvertUToPtr | SOp::ConvertPtrToU => {
                // A `PhysicalStorageBuffer` pointer's value is its 64-bit device address: the
                // conversion is the integer's, zero-extended or truncated (SPIR-V 3.42.11).
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let from_t = self.type_of_value(id_at(i, 0)?)?;
                let width = |t: TypeId| match self.types.get(t) {
                    Type::Pointer {
                        storage: Storage::PhysicalStorageBuffer,
                        ..
                    } => Ok(64),
                    Type::Scalar(Scalar::Int { width, .. }) => Ok(*width),
                    Type::Pointer { storage, .. } => Err(unsupported(format!(
                        "{} of a {} pointer (only PhysicalStorageBuffer pointers have addresses)",
                        op_name(op),
                        storage.name()
                    ))),
                    _ => Err(SpirvError::malformed(format!(
                        "{} of a type other than an integer or pointer",
                        op_name(op)
                    ))),
                };
                let (tw, fw) = (width(t)?, width(from_t)?);
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                if tw == fw {
                    Some(Inst::Move { d, a, off: 0, n: 1 })
                } else {
                    Some(Inst::Conv {
                        op: Conv::UConvert,
                        from: Scalar::Int {
                            width: fw,
                            signed: false,
                        },
                        to: Scalar::Int {
                            width: tw,
                            signed: false,
                        },
                        n: 1,
                        d,
                        a,
                    })
                }
            }
            other => return Err(misrouted(other, "convert")),
        })
    }
}
