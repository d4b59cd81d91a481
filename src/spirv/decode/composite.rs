//! Composites (construct, extract, insert, shuffle, copy) and the matrix family (products,
//! extended integer arithmetic, bit fields).

use super::*;

impl Decoder<'_> {
    /// Composites: copies, extracts, inserts, constructs, shuffles and dynamic vector access
    /// ([`Family::Composite`]).
    pub(super) fn composite_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::CopyObject | SOp::CopyLogical => {
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                if let Some(l) = self.ptr_layout.get(&id_at(i, 0)?).copied() {
                    self.ptr_layout.insert(rid, l);
                }
                Some(Inst::Move {
                    d,
                    a,
                    off: 0,
                    n: self.reg_slots[d.index()],
                })
            }
            SOp::CompositeExtract => {
                let src = id_at(i, 0)?;
                let lits = lits_from(i, 1);
                let (off, n) = self.composite_path(self.type_of_value(src)?, &lits)?;
                let (d, a) = (self.reg(rid)?, self.value(src)?);
                check_ssa!(d, a);
                Some(Inst::Move { d, a, off, n })
            }
            SOp::CompositeInsert => {
                let comp = id_at(i, 0)?;
                let obj = id_at(i, 1)?;
                let lits = lits_from(i, 2);
                let (off, n) = self.composite_path(self.type_of_value(obj)?, &lits)?;
                let (d, c, o) = (self.reg(rid)?, self.value(comp)?, self.value(obj)?);
                check_ssa!(d, c, o);
                Some(Inst::Insert {
                    d,
                    obj: o,
                    comp: c,
                    off,
                    n,
                    total: self.reg_slots[d.index()],
                })
            }
            SOp::CompositeConstruct => {
                let d = self.reg(rid)?;
                let mut parts = Vec::new();
                let mut total = 0;
                for k in 0..i.operands.len() {
                    let r = self.arg(i, k)?;
                    check_ssa!(d, r);
                    let n = self.reg_slots[r.index()];
                    total += n;
                    parts.push((r, n));
                }
                if total != self.reg_slots[d.index()] {
                    return Err(SpirvError::malformed(
                        "OpCompositeConstruct with the wrong number of components",
                    ));
                }
                Some(Inst::Construct {
                    d,
                    parts: parts.into_boxed_slice(),
                })
            }
            SOp::VectorShuffle => {
                let d = self.reg(rid)?;
                let (a, b) = (self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let na = self.reg_slots[a.index()];
                let nb = self.reg_slots[b.index()];
                let sel = lits_from(i, 2)
                    .into_iter()
                    .map(|s| {
                        if s == u32::MAX {
                            Ok(None)
                        } else if s < na {
                            Ok(Some((a, s)))
                        } else if s - na < nb {
                            Ok(Some((b, s - na)))
                        } else {
                            Err(SpirvError::malformed(format!(
                                "OpVectorShuffle component {s}"
                            )))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Some(Inst::Shuffle {
                    d,
                    sel: sel.into_boxed_slice(),
                    loc: self.current_loc(),
                })
            }
            SOp::VectorExtractDynamic => {
                let (_, count) = self.sv_of(id_at(i, 0)?)?;
                let (iw, _) = self.sv_of(id_at(i, 1)?)?;
                let (d, v, idx) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, v, idx);
                Some(Inst::ExtractDyn {
                    d,
                    v,
                    idx,
                    idx_w: iw.bits() as u8,
                    count,
                })
            }
            SOp::VectorInsertDynamic => {
                let (_, count) = self.sv_of(id_at(i, 0)?)?;
                let (iw, _) = self.sv_of(id_at(i, 2)?)?;
                let (d, v, comp, idx) = (
                    self.reg(rid)?,
                    self.arg(i, 0)?,
                    self.arg(i, 1)?,
                    self.arg(i, 2)?,
                );
                check_ssa!(d, v, comp, idx);
                Some(Inst::InsertDyn {
                    d,
                    v,
                    comp,
                    idx,
                    idx_w: iw.bits() as u8,
                    count,
                })
            }
            other => return Err(misrouted(other, "composite")),
        })
    }

    /// Vector and matrix products, extended integer arithmetic and bit fields ([`Family::Matrix`]).
    pub(super) fn matrix_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::VectorTimesScalar | SOp::MatrixTimesScalar => {
                let d = self.reg(rid)?;
                let (v, s) = (self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, v, s);
                let w = self.scalar_of(self.type_of_value(id_at(i, 1)?)?)?.bits() as u8;
                Some(Inst::TimesScalar {
                    w,
                    n: self.reg_slots[d.index()],
                    d,
                    v,
                    s,
                })
            }
            SOp::MatrixTimesVector
            | SOp::VectorTimesMatrix
            | SOp::MatrixTimesMatrix
            | SOp::OuterProduct
            | SOp::Transpose
            | SOp::Dot => {
                return self.matrix_op(i).map(Some);
            }
            SOp::SDot
            | SOp::UDot
            | SOp::SUDot
            | SOp::SDotAccSat
            | SOp::UDotAccSat
            | SOp::SUDotAccSat => self.int_dot(i)?,
            SOp::IAddCarry | SOp::ISubBorrow | SOp::UMulExtended | SOp::SMulExtended => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let o = match op {
                    SOp::IAddCarry => IntPair::AddCarry,
                    SOp::ISubBorrow => IntPair::SubBorrow,
                    SOp::UMulExtended => IntPair::UMulExtended,
                    _ => IntPair::SMulExtended,
                };
                Some(Inst::IntPair {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                    b,
                })
            }
            SOp::BitFieldInsert | SOp::BitFieldSExtract | SOp::BitFieldUExtract => {
                let (sc, n) = self.result_sv(i)?;
                let d = self.reg(rid)?;
                let base = self.arg(i, 0)?;
                let (insert, offset, count) = if op == SOp::BitFieldInsert {
                    (self.arg(i, 1)?, self.arg(i, 2)?, self.arg(i, 3)?)
                } else {
                    (base, self.arg(i, 1)?, self.arg(i, 2)?)
                };
                check_ssa!(d, base, insert, offset, count);
                let o = match op {
                    SOp::BitFieldInsert => BitField::Insert,
                    SOp::BitFieldSExtract => BitField::SExtract,
                    _ => BitField::UExtract,
                };
                Some(Inst::BitField {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    base,
                    insert,
                    offset,
                    count,
                })
            }
            other => return Err(misrouted(other, "matrix")),
        })
    }

    /// `OpSDot`, `OpUDot`, `OpSUDot` and their `…AccSat` forms (SPV_KHR_integer_dot_product):
    /// two vectors of integers of one width, or two 32-bit integers with the packed 4×8-bit
    /// format operand; the accumulator, where there is one, of the result's type.
    fn int_dot(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let name = op_name(op);
        let (rs, rn) = self.result_sv(i)?;
        let Scalar::Int { width: w, .. } = rs else {
            return Err(SpirvError::malformed(format!(
                "{name}: the result must be an integer scalar"
            )));
        };
        let sat = matches!(op, SOp::SDotAccSat | SOp::UDotAccSat | SOp::SUDotAccSat);
        let packed = i
            .operands
            .iter()
            .any(|o| matches!(o, Operand::PackedVectorFormat(_)));
        let (a_id, b_id) = (id_at(i, 0)?, id_at(i, 1)?);
        let ((sa, na), (sb, nb)) = (self.sv_of(a_id)?, self.sv_of(b_id)?);
        let cw = sa.bits();
        let ok = rn == 1
            && matches!(sa, Scalar::Int { .. })
            && sa.bits() == sb.bits()
            && matches!(sb, Scalar::Int { .. })
            && na == nb
            && if packed {
                cw == 32 && na == 1
            } else {
                // a scalar is a vector only with the packed format operand
                na >= 2 && u32::from(w) >= cw
            };
        if !ok {
            return Err(SpirvError::malformed(format!(
                "{name}: the operands must be vectors of integers of one width no wider than the result, or 32-bit integers in the packed 4x8-bit format (SPV_KHR_integer_dot_product)"
            )));
        }
        let signed = match op {
            SOp::SDot | SOp::SDotAccSat => (true, true),
            SOp::UDot | SOp::UDotAccSat => (false, false),
            _ => (true, false),
        };
        let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
        check_ssa!(d, a, b);
        let acc = if sat { Some(self.arg(i, 2)?) } else { None };
        Ok(Some(Inst::IntDot {
            d,
            a,
            b,
            acc,
            n: na,
            cw: if packed { 8 } else { cw as u8 },
            packed,
            signed,
            w,
            // SPIR-V: "signed saturating addition" for OpSDotAccSat and OpSUDotAccSat,
            // unsigned for OpUDotAccSat
            rsigned: signed.0,
        }))
    }
}
