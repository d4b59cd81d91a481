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
}
