//! Executing the value instructions for the lanes of a flow: scalar arithmetic, comparisons and
//! conversions (`exec_scalar`), composites, matrices, bit fields and extended instructions
//! (`exec_composite`). Each operation is one call of a generic entry point of `lanes.rs` naming its
//! scalar function; `ops.rs` routes every instruction here or to its memory, image or subgroup
//! executor.

use crate::model::LaneMask;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::Wg;
use crate::spirv::inst::*;
use crate::spirv::memory::Ptr;
use crate::spirv::prov::{Cause, Taint};
use crate::spirv::scalar::{self, f_get, mask, ScalarUndef};

impl Wg<'_, '_> {
    /// Executes a scalar instruction (arithmetic, comparison, logic, pointer comparison,
    /// conversion) for the lanes of `set`.
    pub(crate) fn exec_scalar(&mut self, inst: &Inst, set: &[LaneMask], loc: LocId) {
        match inst {
            Inst::IntBin { .. } => self.int_bin_op(inst, set, loc),
            Inst::IntCmp { .. } => self.int_cmp_op(inst, set, loc),
            Inst::FloatBin { .. } => self.float_bin_op(inst, set),
            Inst::IntUn { op, w, n, d, a } => {
                let (op, w) = (*op, *w);
                self.map1(set, *n, *d, *a, loc, |x| Ok(scalar::int_un(op, w, x)));
            }
            Inst::FloatCmp { op, w, n, d, a, b } => {
                let w = *w;
                macro_rules! fc {
                    ($($o:ident),*) => {
                        match op {
                            $(FloatCmp::$o => self.map2(set, *n, *d, *a, *b, Taint::NONE, loc, |x, y| Ok(scalar::float_cmp(FloatCmp::$o, w, x, y) as u64)),)*
                        }
                    };
                }
                fc!(
                    OrdEq, UnordEq, OrdNe, UnordNe, OrdLt, UnordLt, OrdGt, UnordGt, OrdLe, UnordLe,
                    OrdGe, UnordGe
                );
            }
            Inst::FloatNeg { w, n, d, a } => {
                let w = *w;
                self.map1(set, *n, *d, *a, loc, |x| Ok(scalar::float_neg(w, x)));
            }
            Inst::FloatClass { inf, w, n, d, a } => {
                let (inf, w) = (*inf, *w);
                self.map1(set, *n, *d, *a, loc, |x| {
                    let f = f_get(w, x);
                    Ok(if inf { f.is_infinite() } else { f.is_nan() } as u64)
                });
            }
            Inst::LogicBin { op, n, d, a, b } => {
                let op = *op;
                // false && x, true || x: the defined operand decides.
                let absorbs = move |v: u64, _: bool| match op {
                    LogicBin::And => v == 0,
                    LogicBin::Or => v != 0,
                    _ => false,
                };
                self.map2_absorb(
                    set,
                    *n,
                    *d,
                    *a,
                    *b,
                    loc,
                    |x, y| {
                        let (x, y) = (x != 0, y != 0);
                        Ok(match op {
                            LogicBin::And => x && y,
                            LogicBin::Or => x || y,
                            LogicBin::Eq => x == y,
                            LogicBin::Ne => x != y,
                        } as u64)
                    },
                    absorbs,
                );
            }
            Inst::LogicNot { n, d, a } => {
                self.map1(set, *n, *d, *a, loc, |x| Ok((x == 0) as u64));
            }
            Inst::AnyAll { all, n, d, a } => self.any_all(set, *all, *n, *d, *a),
            Inst::PtrCmp { d, a, b, ne } => {
                let ne = *ne;
                self.map2(set, 1, *d, *a, *b, Taint::NONE, loc, move |x, y| {
                    Ok(((Ptr::from_bits(x).place() == Ptr::from_bits(y).place()) != ne) as u64)
                });
            }
            Inst::PtrDiff { d, a, b, stride, w } => {
                let (stride, w) = (*stride as i64, *w);
                self.map2(set, 1, *d, *a, *b, Taint::NONE, loc, move |x, y| {
                    let (x, y) = (Ptr::from_bits(x), Ptr::from_bits(y));
                    if x.obj() != y.obj() || x.oob() || y.oob() {
                        return Err(ScalarUndef::PointersApart);
                    }
                    let diff = x.off() as i64 - y.off() as i64;
                    Ok((diff / stride.max(1)) as u64 & mask(w))
                });
            }
            Inst::Conv {
                op,
                from,
                to,
                n,
                d,
                a,
            } => {
                let (op, from, to) = (*op, *from, *to);
                self.map1(set, *n, *d, *a, loc, |x| scalar::convert(op, from, to, x));
                // An inexact conversion's result is compared as what it is: a float as a float,
                // an integer (a float converted to one) as a number, within one.
                if self.regs.dirty(*d) {
                    let (lanes, nl, db) = (self.lanes, self.n, self.regs.base(*d));
                    let taint = &mut self.regs.taint;
                    let to_float = to.is_float();
                    for c in 0..*n as usize {
                        let row = &mut taint[db + c * lanes..db + (c + 1) * lanes];
                        crate::spirv::exec::each_lane(set, nl, |s| {
                            row[s] = if to_float {
                                row[s].as_float_bits()
                            } else {
                                row[s].as_number()
                            }
                        });
                    }
                }
                // Only the float side of a conversion can hold a denormal: an integer's bits are
                // not a float's.
                let float = |r: Reg, s: crate::spirv::types::Scalar| {
                    s.is_float().then_some((r, s.bits() as u8))
                };
                let rows: smallvec::SmallVec<[(Reg, u8); 2]> = [float(*a, from), float(*d, to)]
                    .into_iter()
                    .flatten()
                    .collect();
                if !rows.is_empty() {
                    self.denormals_in(set, *n, *d, &rows);
                }
                if op == Conv::QuantizeF16 {
                    self.quantized_to_zero(set, *n, *d, *a);
                }
            }
            _ => unreachable!("not a scalar instruction"),
        }
    }

    /// Executes a composite, matrix, bit-field or extended instruction for the lanes of `set`.
    pub(crate) fn exec_composite(
        &mut self,
        inst: &Inst,
        set: &[LaneMask],
        loc: LocId,
    ) -> Result<(), SpirvError> {
        match inst {
            Inst::Select {
                n,
                d,
                c,
                vector_cond,
                a,
                b,
            } => self.select(set, *n, *d, *c, *vector_cond, *a, *b),
            Inst::Bitcast { from, to, d, a } => self.bitcast(set, from, to, *d, *a),
            Inst::Move { d, a, off, n } => self.move_slots(set, *d, *a, *off, *n),
            Inst::Insert {
                d,
                obj,
                comp,
                off,
                n,
                total,
            } => {
                self.move_slots(set, *d, *obj, 0, *total);
                self.move_into(set, *d, *off, *comp, 0, *n);
            }
            Inst::Construct { d, parts } => {
                let mut at = 0;
                for &(r, k) in parts.iter() {
                    self.move_into(set, *d, at, r, 0, k);
                    at += k;
                }
            }
            Inst::Shuffle { d, sel, loc } => {
                for (k, s) in sel.iter().enumerate() {
                    match s {
                        Some((r, slot)) => self.move_into(set, *d, k as u32, *r, *slot, 1),
                        None => {
                            let p = self.undefined(Cause::UndefComponent, *loc);
                            self.fill_taint(set, *d, k as u32, 1, p);
                        }
                    }
                }
            }
            Inst::ExtractDyn {
                d,
                v,
                idx,
                idx_w,
                count,
            } => self.extract_dyn(set, *d, *v, *idx, *idx_w, *count, loc),
            Inst::InsertDyn {
                d,
                v,
                comp,
                idx,
                idx_w,
                count,
            } => {
                self.move_slots(set, *d, *v, 0, *count);
                self.insert_dyn(set, *d, *comp, *idx, *idx_w, *count, loc);
            }
            Inst::TimesScalar { w, n, d, v, s } => self.times_scalar(set, *w, *n, *d, *v, *s),
            Inst::MatTimesVec { .. }
            | Inst::VecTimesMat { .. }
            | Inst::MatTimesMat { .. }
            | Inst::Outer { .. }
            | Inst::Transpose { .. }
            | Inst::Dot { .. } => self.matrix_op(inst, set),
            Inst::IntPair { op, w, n, d, a, b } => self.int_pair(set, *op, *w, *n, *d, *a, *b),
            Inst::IntDot { .. } => self.int_dot(inst, set, loc),
            Inst::BitField {
                op,
                w,
                n,
                d,
                base,
                insert,
                offset,
                count,
            } => self.bit_field(set, *op, *w, *n, *d, *base, *insert, *offset, *count, loc),
            Inst::Ext {
                f,
                s,
                w1,
                n,
                d,
                args,
                nargs,
                relaxed,
            } => self.ext(set, *f, *s, *w1, *n, *d, args, *nargs, *relaxed, loc)?,
            _ => unreachable!("not a composite instruction"),
        }
        Ok(())
    }

    /// An integer binary operation: one loop per operation (the op a constant inside each).
    fn int_bin_op(&mut self, inst: &Inst, set: &[LaneMask], loc: LocId) {
        let Inst::IntBin { op, w, n, d, a, b } = inst else {
            unreachable!("IntBin is routed here")
        };
        // One loop per operation (the op is a constant inside each), one definition in
        // `scalar::int_bin`.
        let w = *w;
        macro_rules! ib {
            ($($o:ident),*) => {
                match op {
                    $(IntBin::$o => self.map2(set, *n, *d, *a, *b, Taint::NONE, loc, |x, y| scalar::int_bin(IntBin::$o, w, x, y)),)*
                }
            };
        }
        let m = mask(w);
        match op {
            // 0 & x, ~0 | x, 0 * x: the defined operand decides.
            IntBin::And => self.map2_absorb(
                set,
                *n,
                *d,
                *a,
                *b,
                loc,
                |x, y| scalar::int_bin(IntBin::And, w, x, y),
                |v, _| v & m == 0,
            ),
            IntBin::Or => self.map2_absorb(
                set,
                *n,
                *d,
                *a,
                *b,
                loc,
                |x, y| scalar::int_bin(IntBin::Or, w, x, y),
                |v, _| v & m == m,
            ),
            IntBin::Mul => self.map2_absorb(
                set,
                *n,
                *d,
                *a,
                *b,
                loc,
                |x, y| scalar::int_bin(IntBin::Mul, w, x, y),
                |v, _| v & m == 0,
            ),
            _ => ib!(Add, Sub, Mul, UDiv, SDiv, UMod, SRem, SMod, Shl, ShrL, ShrA, And, Or, Xor),
        }
    }

    /// An integer comparison; a defined extreme decides some of them alone.
    fn int_cmp_op(&mut self, inst: &Inst, set: &[LaneMask], loc: LocId) {
        let Inst::IntCmp { op, w, n, d, a, b } = inst else {
            unreachable!("IntCmp is routed here")
        };
        let w = *w;
        // The operation and (for 32 bits) the width constant in each lane loop.
        macro_rules! ic {
            ($w:expr_2021; $($o:ident),*) => {
                match op {
                    $(IntCmp::$o => self.map2(set, *n, *d, *a, *b, Taint::NONE, loc, |x, y| Ok(scalar::int_cmp(IntCmp::$o, $w, x, y) as u64)),)*
                }
            };
        }
        macro_rules! absorb {
            ($dec:ident, $w:expr_2021; $($o:ident),*) => {
                match op {
                    $(IntCmp::$o => self.map2_absorb(set, *n, *d, *a, *b, loc, |x, y| Ok(scalar::int_cmp(IntCmp::$o, $w, x, y) as u64), $dec),)*
                }
            };
        }
        // A comparison a defined extreme decides (`0 > x` unsigned is false for every x).
        let m = mask(w);
        let smin = 1u64 << (w - 1);
        let smax = m >> 1;
        let op = *op;
        let decides = move |v: u64, is_a: bool| -> bool {
            let v = v & m;
            match (op, is_a) {
                (IntCmp::UGt, true) | (IntCmp::ULe, true) => v == 0,
                (IntCmp::ULt, false) | (IntCmp::UGe, false) => v == 0,
                (IntCmp::UGe, true) | (IntCmp::ULt, true) => v == m,
                (IntCmp::ULe, false) | (IntCmp::UGt, false) => v == m,
                (IntCmp::SGt, true) | (IntCmp::SLe, true) => v == smin,
                (IntCmp::SLt, false) | (IntCmp::SGe, false) => v == smin,
                (IntCmp::SGe, true) | (IntCmp::SLt, true) => v == smax,
                (IntCmp::SLe, false) | (IntCmp::SGt, false) => v == smax,
                _ => false,
            }
        };
        match (matches!(op, IntCmp::Eq | IntCmp::Ne), w == 32) {
            (true, true) => ic!(32; Eq, Ne, UGt, SGt, UGe, SGe, ULt, SLt, ULe, SLe),
            (true, false) => ic!(w; Eq, Ne, UGt, SGt, UGe, SGe, ULt, SLt, ULe, SLe),
            (false, true) => absorb!(decides, 32; Eq, Ne, UGt, SGt, UGe, SGe, ULt, SLt, ULe, SLe),
            (false, false) => absorb!(decides, w; Eq, Ne, UGt, SGt, UGe, SGe, ULt, SLt, ULe, SLe),
        }
    }

    /// A float binary operation, inexact where its precision is not exact.
    fn float_bin_op(&mut self, inst: &Inst, set: &[LaneMask]) {
        let Inst::FloatBin {
            op,
            w,
            n,
            d,
            a,
            b,
            contract,
            relaxed,
        } = inst
        else {
            unreachable!("FloatBin is routed here")
        };
        let w = *w;
        // Division, remainder and modulo have ULP bounds (Vulkan precision tables); an add
        // fed by a multiply may be fused; RelaxedPrecision may compute at lower precision.
        let inexact =
            *contract || *relaxed || matches!(op, FloatBin::Div | FloatBin::Rem | FloatBin::Mod);
        let extra = if inexact { Taint::INEXACT } else { Taint::NONE };
        macro_rules! fb {
            ($w:expr_2021; $($o:ident),*) => {
                match op {
                    $(FloatBin::$o => self.map2_float(set, *n, *d, *a, (*b, false, true), extra, $w, |x, y| scalar::float_bin(FloatBin::$o, $w, x, y)),)*
                }
            };
        }
        if w == 32 {
            fb!(32; Add, Sub, Mul, Div, Rem, Mod);
        } else {
            fb!(w; Add, Sub, Mul, Div, Rem, Mod);
        }
    }

    /// A matrix or vector product, outer product, transpose or dot product.
    fn matrix_op(&mut self, inst: &Inst, set: &[LaneMask]) {
        match inst {
            Inst::MatTimesVec {
                w,
                rows,
                cols,
                d,
                m,
                v,
            } => {
                // d[r] = Σ_c m[c][r] · v[c]
                let (rows, cols) = (*rows, *cols);
                self.linear(set, *w, *d, rows, |r| {
                    (0..cols).map(|c| ((*m, c * rows + r), (*v, c))).collect()
                });
            }
            Inst::VecTimesMat {
                w,
                rows,
                cols,
                d,
                v,
                m,
            } => {
                // d[c] = Σ_r v[r] · m[c][r]
                let (rows, cols) = (*rows, *cols);
                self.linear(set, *w, *d, cols, |c| {
                    (0..rows).map(|r| ((*v, r), (*m, c * rows + r))).collect()
                });
            }
            Inst::MatTimesMat {
                w,
                rows,
                inner,
                cols,
                d,
                a,
                b,
            } => {
                // d[c][r] = Σ_k a[k][r] · b[c][k]
                let (rows, inner) = (*rows, *inner);
                self.linear(set, *w, *d, rows * cols, |o| {
                    let (c, r) = (o / rows, o % rows);
                    (0..inner)
                        .map(|k| ((*a, k * rows + r), (*b, c * inner + k)))
                        .collect()
                });
            }
            Inst::Outer {
                w,
                rows,
                cols: _,
                d,
                a,
                b,
            } => {
                // d[c][r] = a[r] · b[c]  (one product: correctly rounded)
                let (rows, cols) = (*rows, self.regs.slots(*d) / *rows);
                let w = *w;
                for c in 0..cols {
                    for r in 0..rows {
                        self.map2_slots(
                            set,
                            *d,
                            c * rows + r,
                            *a,
                            r,
                            *b,
                            c,
                            Taint::NONE,
                            |x, y| scalar::float_bin(FloatBin::Mul, w, x, y),
                        );
                    }
                }
            }
            Inst::Transpose { rows, cols, d, m } => {
                for c in 0..*cols {
                    for r in 0..*rows {
                        // d has `rows` columns of `cols` components: d[r][c] = m[c][r]
                        self.move_into(set, *d, r * cols + c, *m, c * rows + r, 1);
                    }
                }
            }
            Inst::Dot { w, n, d, a, b } => {
                let n = *n;
                self.linear(set, *w, *d, 1, |_| {
                    (0..n).map(|i| ((*a, i), (*b, i))).collect()
                });
            }
            _ => unreachable!("not a matrix instruction"),
        }
    }

    /// `OpSDot`, `OpUDot`, `OpSUDot` and the `…AccSat` forms, lane by lane: the arithmetic is
    /// [`crate::words::int::int_dot`]; the result's taint is every operand component's, or
    /// undefined where an accumulating form overflows before its accumulation.
    fn int_dot(&mut self, inst: &Inst, set: &[LaneMask], loc: LocId) {
        let Inst::IntDot {
            d,
            a,
            b,
            acc,
            n,
            cw,
            packed,
            signed,
            w,
            rsigned,
        } = *inst
        else {
            unreachable!("IntDot is routed here")
        };
        use crate::words::int::{int_dot, DotOperand};
        let (lanes, nl, n) = (self.lanes, self.n, n as usize);
        let dirty = |r: Reg| self.regs.dirty(r);
        let (ta, tb, tc) = (dirty(a), dirty(b), acc.is_some_and(dirty));
        // an accumulating form may overflow: its result may be undefined
        let overflow =
            acc.map(|_| self.undefined(Cause::Scalar(ScalarUndef::DotProductOverflow), loc));
        if ta || tb || tc || overflow.is_some() {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let (db, ab, bb) = (self.regs.base(d), self.regs.base(a), self.regs.base(b));
        let cb = acc.map(|r| self.regs.base(r));
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        let (mut xa, mut xb) = (vec![0u64; n], vec![0u64; n]);
        crate::spirv::exec::each_lane(set, nl, |s| {
            let mut t = Taint::NONE;
            for c in 0..n {
                xa[c] = vals[ab + c * lanes + s];
                xb[c] = vals[bb + c * lanes + s];
                if ta {
                    t = t.combine(taint[ab + c * lanes + s]);
                }
                if tb {
                    t = t.combine(taint[bb + c * lanes + s]);
                }
            }
            let op = |words, signed| DotOperand {
                words,
                cw,
                signed,
                packed,
            };
            let c = cb.map(|cb| {
                if tc {
                    t = t.combine(taint[cb + s]);
                }
                (vals[cb + s], rsigned)
            });
            match int_dot(op(&xa, signed.0), op(&xb, signed.1), w, c) {
                Ok(v) => vals[db + s] = v,
                Err(_) => {
                    vals[db + s] = 0;
                    t = t.combine(overflow.unwrap_or(Taint::NONE));
                }
            }
            if td {
                taint[db + s] = t;
            }
        });
    }
}

impl Wg<'_, '_> {
    /// `debugPrintfEXT` for the lanes of `set`: each lane's line, formatted from its values (an
    /// undefined component prints `undefined`), becomes a
    /// [`Finding::Print`](crate::spirv::Finding::Print) of its invocation — lane by lane in the
    /// order the lanes run, which the report sorts by invocation.
    pub(crate) fn printf(&mut self, set: &[LaneMask], args: &[Reg], p: &Print, loc: LocId) {
        let seq = self.steps;
        let mut lines = Vec::new();
        crate::spirv::exec::each_lane(set, self.n, |s| {
            let values: Vec<Vec<crate::spirv::printf::Component>> = args
                .iter()
                .zip(p.types.iter())
                .map(|(&r, &(scalar, n))| {
                    let dirty = self.regs.dirty(r);
                    (0..n as usize)
                        .map(|c| {
                            let at = self.regs.row(r, c) + s;
                            crate::spirv::printf::Component {
                                bits: self.regs.vals[at],
                                scalar,
                                undefined: dirty && self.regs.taint[at].is_undefined(),
                            }
                        })
                        .collect()
                })
                .collect();
            lines.push((s, p.format.print(&values)));
        });
        for (s, text) in lines {
            let lost = !self.lost_taint[s].is_none();
            self.d.find(crate::spirv::Finding::Print {
                loc,
                slot: self.who(s) - 1,
                seq,
                text,
                lost,
            });
        }
    }
}
