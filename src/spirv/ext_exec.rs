//! The GLSL.std.450 extended instructions, executed for the lanes of a flow: each lane's operands
//! handed to `glsl::eval` (the functions' one definition), the result's taint per component, the
//! cases the spec leaves undefined named per lane, and the results whose bits a device may choose
//! (inexact functions, denormals, the sign of a zero from min/max) marked inexact.

use crate::model::LaneMask;
use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{each_lane, Wg};
use crate::spirv::inst::*;
use crate::spirv::prov::{combine, Cause, Taint};
use crate::spirv::scalar::{f_get, f_put, mask, sext};
use crate::spirv::types::Scalar;

impl Wg<'_, '_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ext(
        &mut self,
        set: &[LaneMask],
        f: Ext,
        s: Scalar,
        w1: u8,
        n: u32,
        d: Reg,
        args: &[Reg; 3],
        nargs: u8,
        relaxed: bool,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let (lanes, nl) = (self.lanes, self.n);
        let w = s.bits() as u8;
        // An inexact integer result (floats packed into normalized integers) is a number; every
        // other inexact result is a float.
        let packs = matches!(
            f,
            Ext::PackSnorm4x8 | Ext::PackUnorm4x8 | Ext::PackSnorm2x16 | Ext::PackUnorm2x16
        );
        let extra = match (!f.exact() || relaxed, !packs) {
            (true, true) => Taint::INEXACT,
            (true, false) => Taint::INEXACT.as_number(),
            _ => Taint::NONE,
        };
        let dn = self.regs.slots(d);
        let na = nargs as usize;
        let any_t = args[..na].iter().any(|r| self.regs.dirty(*r));
        // Min, max and clamp pick an operand, -0 below +0 (GLSL.std.450 FMin: "-0 compares less
        // than +0"); but unless the entry point declares SignedZeroInfNanPreserve for this width,
        // Vulkan lets a device ignore the sign of a zero (lavapipe gives -0 for max(+0, -0)). A
        // zero result beside an operand zero of the other sign is then compared as a number
        // (inexact), as the catalogue compares subgroup min/max (`Exactness::MinMaxFloat`).
        let zero_sign = matches!(
            f,
            Ext::FMin | Ext::FMax | Ext::NMin | Ext::NMax | Ext::FClamp | Ext::NClamp
        ) && s.is_float()
            && self.zero_sign_ignorable(w);
        if any_t || !extra.is_none() || zero_sign {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let aoff: Vec<(usize, u32, bool)> = args[..na]
            .iter()
            .map(|r| (self.regs.base(*r), self.regs.slots(*r), self.regs.dirty(*r)))
            .collect();
        let db = self.regs.base(d);
        let mut out = [0u64; 16];
        let mut x = [[0u64; 16]; 3];
        let mut failed = None;
        // A component-wise function: each result component's taint is its operands' same
        // component's (a scalar operand's reaches every component); otherwise the lane's.
        let per_comp = f.componentwise();
        let mut undefined: Vec<(usize, Option<usize>, &'static str)> = Vec::new();
        {
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |sl| {
                let mut t = extra;
                let mut tc = [Taint::NONE; 16];
                for (k, &(ab, an, at)) in aoff.iter().enumerate() {
                    for c in 0..an.min(16) as usize {
                        x[k][c] = vals[ab + c * lanes + sl];
                        if at {
                            let tk = taint[ab + c * lanes + sl];
                            if per_comp && an > 1 {
                                tc[c] = combine(tc[c], tk);
                            } else {
                                t = combine(t, tk);
                            }
                        }
                    }
                }
                if f == Ext::Ldexp {
                    // The exponent as a 64-bit integer, whatever its width (8 to 64 bits).
                    for c in 0..16 {
                        x[1][c] = sext(w1.max(8), x[1][c]) as u64;
                    }
                }
                match crate::spirv::glsl::eval(f, s, n, &x, &mut out) {
                    Err(e) => {
                        failed = Some(e);
                        return;
                    }
                    Ok(Some(why)) if per_comp => {
                        // Which components are outside the domain: each on its own.
                        let mut named = false;
                        for c in 0..(n as usize).min(16) {
                            let mut xc = [[0u64; 16]; 3];
                            for (k, &(_, an, _)) in aoff.iter().enumerate() {
                                xc[k][0] = x[k][if an > 1 { c } else { 0 }];
                            }
                            let mut o = [0u64; 16];
                            if let Ok(Some(w)) = crate::spirv::glsl::eval(f, s, 1, &xc, &mut o) {
                                undefined.push((sl, Some(c), w));
                                named = true;
                            }
                        }
                        if !named {
                            undefined.push((sl, None, why));
                        }
                    }
                    Ok(Some(why)) => undefined.push((sl, None, why)),
                    Ok(None) => {}
                }
                if zero_sign {
                    let sign = 1u64 << (w - 1);
                    let zero = |v: u64| v & mask(w) & !sign == 0;
                    for c in 0..(n as usize).min(16) {
                        let other = |k: usize| x[k][if aoff[k].1 > 1 { c } else { 0 }];
                        if zero(out[c])
                            && (0..na).any(|k| zero(other(k)) && (other(k) ^ out[c]) & sign != 0)
                        {
                            tc[c] = tc[c].inexact();
                        }
                    }
                }
                for c in 0..dn.min(16) as usize {
                    vals[db + c * lanes + sl] = out[c];
                    if td {
                        taint[db + c * lanes + sl] = combine(tc[c], t);
                    }
                }
            });
        }
        if let Some(e) = failed {
            return Err(SpirvError::unsupported(e));
        }
        if f == Ext::FrexpStruct {
            self.mask_exponents(set, d, n as usize, w1);
        }
        for (sl, comp, why) in undefined {
            let p = self.prov(Cause::Glsl { why }, loc, Taint::NONE);
            self.regs.make_dirty(d);
            let comps = comp.map_or(0..dn as usize, |c| c..c + 1);
            for c in comps {
                self.regs.taint[db + c * lanes + sl] = p | Taint::INEXACT;
            }
        }
        if s.is_float() {
            // The float operands and the result; an integer operand's bits are not a float's.
            let rows: smallvec::SmallVec<[(Reg, u8); 4]> = (0..na)
                .filter(|&k| !f.int_arg(k))
                .map(|k| (args[k], w))
                .chain(std::iter::once((d, w)))
                .collect();
            self.denormals_in(set, dn.min(n), d, &rows);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn ext_out(
        &mut self,
        flow: &Flow,
        frexp: bool,
        w: u8,
        n: u32,
        d: Reg,
        x: Reg,
        ptr: Reg,
        plan: PlanId,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        // modf(x, out whole) / frexp(x, out exp): the second result goes through memory. Compute
        // both into the scratch register layout: d gets the first, a temporary the second.
        let (lanes, nl) = (self.lanes, self.n);
        let (db, xb) = (self.regs.base(d), self.regs.base(x));
        let tx = self.regs.dirty(x);
        if tx {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let mut second = vec![0u64; n as usize * lanes];
        let mut second_t = vec![Taint::NONE; n as usize * lanes];
        {
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            for c in 0..n as usize {
                each_lane(&flow.set, nl, |s| {
                    let v = f_get(w, vals[xb + c * lanes + s]);
                    let (a, b) = if frexp {
                        let (m, e) = crate::spirv::glsl::frexp(v);
                        (m, (e as u64) & 0xffff_ffff)
                    } else {
                        let (frac, whole) = crate::spirv::glsl::modf(v);
                        (frac, f_put(w, whole))
                    };
                    vals[db + c * lanes + s] = f_put(w, a);
                    second[c * lanes + s] = b;
                    if tx {
                        second_t[c * lanes + s] = taint[xb + c * lanes + s];
                    }
                    if td {
                        taint[db + c * lanes + s] = if tx {
                            taint[xb + c * lanes + s]
                        } else {
                            Taint::NONE
                        };
                    }
                });
            }
        }
        self.store_values(flow, ptr, plan, loc, &second, &second_t)
    }

    /// FrexpStruct's exponent member (slots `n..2n` of `d`), sign-extended by `glsl::eval`, cut to
    /// its integer width `w1`. Hygiene only: every reader of an integer register masks it to its
    /// width first (`int_bin`, the conversions, comparisons, bitcasts, stores), so no result
    /// depends on the bits above it (`spirv::a_vector_frexp_struct_gives_a_32_bit_exponent_in_every_component`).
    fn mask_exponents(&mut self, set: &[LaneMask], d: Reg, n: usize, w1: u8) {
        let (lanes, nl, db) = (self.lanes, self.n, self.regs.base(d));
        let dn = self.regs.slots(d) as usize;
        each_lane(set, nl, |sl| {
            for c in n..(2 * n).min(dn) {
                self.regs.vals[db + c * lanes + sl] &= mask(w1);
            }
        });
    }
}
