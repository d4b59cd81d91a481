//! The machine layer's generic entry points: an operation on registers for the lanes of a flow,
//! one loop per slot over contiguous lanes for the values and, only when an operand or the result
//! carries taint, one beside it for the taints — the per-operation taint policy (the first
//! operand's cause wins; a deciding operand absorbs the other) applied here, once, so that each
//! operation in `ops.rs` is one line naming its scalar function.

use crate::model::LaneMask;
use crate::reconverge::Flow;
use crate::spirv::exec::{each_lane, Wg};
use crate::spirv::inst::*;
use crate::spirv::prov::{Cause, Taint};
pub(crate) use crate::spirv::regs::{each_span, rows3};
use crate::spirv::scalar::{self, ScalarUndef};

impl Wg<'_, '_> {
    /// Sets the taint of slots `off..off+n` of `d` to `t` for the lanes of `set`.
    pub(crate) fn fill_taint(&mut self, set: &[LaneMask], d: Reg, off: u32, n: u32, t: Taint) {
        self.regs.make_dirty(d);
        let (lanes, nl) = (self.lanes, self.n);
        let db = self.regs.base(d);
        for c in off..off + n {
            let row = db + c as usize * lanes;
            let taint = &mut self.regs.taint;
            each_lane(set, nl, |s| taint[row + s] = t);
        }
    }

    /// `d[c] = f(a[c], b[c])` for slots `0..n`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn map2(
        &mut self,
        set: &[LaneMask],
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
        extra: Taint,
        loc: LocId,
        f: impl Fn(u64, u64) -> Result<u64, ScalarUndef>,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab, bb) = (self.regs.base(d), self.regs.base(a), self.regs.base(b));
        let (ta, tb, td) = self.regs.dirty2(d, a, b, extra);
        self.errs.clear();
        for c in 0..n as usize {
            let (dr, ar, br) = (db + c * lanes, ab + c * lanes, bb + c * lanes);
            let errs = &mut self.errs;
            let mut put = |s: usize, r| value_or_record(errs, s, c, r);
            match rows3(&mut self.regs.vals, dr, ar, br, lanes) {
                Some((dv, av, bv)) => each_span(set, nl, |r| {
                    let s0 = r.start;
                    let it = dv[r.clone()].iter_mut().zip(&av[r.clone()]).zip(&bv[r]);
                    for (i, ((d, &x), &y)) in it.enumerate() {
                        *d = put(s0 + i, f(x, y));
                    }
                }),
                None => {
                    let vals = &mut self.regs.vals;
                    each_lane(set, nl, |s| {
                        vals[dr + s] = put(s, f(vals[ar + s], vals[br + s]))
                    });
                }
            }
            if td {
                self.regs.taint2(set, nl, (dr, ar, br), (ta, tb), extra);
            }
        }
        self.scalar_errors(d, loc);
    }

    /// [`Wg::map2`] for operations whose result one operand can decide alone (`0 & x`, `0 > x`
    /// unsigned, `false && x`, …: `absorbs(value, is_a)`): the result is then the same for every
    /// value of the other operand, so it carries only the deciding operand's taint — defined where
    /// that one is, whatever the spec leaves the other.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn map2_absorb(
        &mut self,
        set: &[LaneMask],
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
        loc: LocId,
        f: impl Fn(u64, u64) -> Result<u64, ScalarUndef>,
        absorbs: impl Fn(u64, bool) -> bool,
    ) {
        self.map2(set, n, d, a, b, Taint::NONE, loc, f);
        let (ta, tb) = (self.regs.dirty(a), self.regs.dirty(b));
        if !(ta || tb) {
            return;
        }
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab, bb) = (self.regs.base(d), self.regs.base(a), self.regs.base(b));
        let rank = taint_rank;
        for c in 0..n as usize {
            let (dr, ar, br) = (db + c * lanes, ab + c * lanes, bb + c * lanes);
            let (vals, taint) = (&self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let x = if ta { taint[ar + s] } else { Taint::NONE };
                let y = if tb { taint[br + s] } else { Taint::NONE };
                let mut best = taint[dr + s];
                if absorbs(vals[ar + s], true) && rank(x) < rank(best) {
                    best = x;
                }
                if absorbs(vals[br + s], false) && rank(y) < rank(best) {
                    best = y;
                }
                taint[dr + s] = best | x.inexact_part() | y.inexact_part();
            });
        }
    }

    /// `d[dc] = f(a[ac], b[bc])` for one slot of each.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn map2_slots(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        dc: u32,
        a: Reg,
        ac: u32,
        b: Reg,
        bc: u32,
        extra: Taint,
        f: impl Fn(u64, u64) -> u64,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let dr = self.regs.base(d) + dc as usize * lanes;
        let ar = self.regs.base(a) + ac as usize * lanes;
        let br = self.regs.base(b) + bc as usize * lanes;
        let (ta, tb, td) = self.regs.dirty2(d, a, b, extra);
        match rows3(&mut self.regs.vals, dr, ar, br, lanes) {
            Some((dv, av, bv)) => each_span(set, nl, |r| {
                let it = dv[r.clone()].iter_mut().zip(&av[r.clone()]).zip(&bv[r]);
                for ((d, &x), &y) in it {
                    *d = f(x, y);
                }
            }),
            None => {
                let vals = &mut self.regs.vals;
                each_lane(set, nl, |s| vals[dr + s] = f(vals[ar + s], vals[br + s]));
            }
        }
        if td {
            self.regs.taint2(set, nl, (dr, ar, br), (ta, tb), extra);
        }
    }

    /// A float operation `d[c] = f(a[c], b[c])` (`b[0]` for every slot where `b_scalar`) for
    /// slots `0..n`, whose results and operands of width `w` are checked for denormals in the same
    /// pass over the lanes: where any is one and the module does not preserve denormals,
    /// [`Wg::denormals`] marks those lanes inexact (`b` checked only where `check_b`). A result
    /// whose every lane `extra` marks inexact already needs no check.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn map2_float(
        &mut self,
        set: &[LaneMask],
        n: u32,
        d: Reg,
        a: Reg,
        (b, b_scalar, check_b): (Reg, bool, bool),
        extra: Taint,
        w: u8,
        f: impl Fn(u64, u64) -> u64,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab, bb) = (self.regs.base(d), self.regs.base(a), self.regs.base(b));
        let (ta, tb, td) = self.regs.dirty2(d, a, b, extra);
        let check = self.denorm_flushable(w) && !extra.is_inexact();
        let den = |x: u64| scalar::is_denormal(w, x);
        let mut any = false;
        for c in 0..n as usize {
            let br = if b_scalar { bb } else { bb + c * lanes };
            let (dr, ar) = (db + c * lanes, ab + c * lanes);
            match rows3(&mut self.regs.vals, dr, ar, br, lanes) {
                Some((dv, av, bv)) if check => each_span(set, nl, |r| {
                    let it = dv[r.clone()].iter_mut().zip(&av[r.clone()]).zip(&bv[r]);
                    for ((d, &x), &y) in it {
                        let v = f(x, y);
                        *d = v;
                        any |= den(x) | (check_b & den(y)) | den(v);
                    }
                }),
                Some((dv, av, bv)) => each_span(set, nl, |r| {
                    let it = dv[r.clone()].iter_mut().zip(&av[r.clone()]).zip(&bv[r]);
                    for ((d, &x), &y) in it {
                        *d = f(x, y);
                    }
                }),
                None => {
                    let vals = &mut self.regs.vals;
                    each_lane(set, nl, |s| {
                        let (x, y) = (vals[ar + s], vals[br + s]);
                        let v = f(x, y);
                        vals[dr + s] = v;
                        any |= check & (den(x) | (check_b & den(y)) | den(v));
                    });
                }
            }
            if td {
                self.regs.taint2(set, nl, (dr, ar, br), (ta, tb), extra);
            }
        }
        if any {
            if check_b {
                self.denormals(set, n, d, &[a, b], w);
            } else {
                self.denormals(set, n, d, &[a], w);
            }
        }
    }

    /// `d[c] = f(a[c])` for slots `0..n`.
    #[inline(always)]
    pub(crate) fn map1(
        &mut self,
        set: &[LaneMask],
        n: u32,
        d: Reg,
        a: Reg,
        loc: LocId,
        f: impl Fn(u64) -> Result<u64, ScalarUndef>,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab) = (self.regs.base(d), self.regs.base(a));
        let ta = self.regs.dirty(a);
        if ta {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        self.errs.clear();
        for c in 0..n as usize {
            let (dr, ar) = (db + c * lanes, ab + c * lanes);
            let errs = &mut self.errs;
            let mut put = |s: usize, r| value_or_record(errs, s, c, r);
            match rows3(&mut self.regs.vals, dr, ar, ar, lanes) {
                Some((dv, av, _)) => each_span(set, nl, |r| {
                    let s0 = r.start;
                    for (i, (d, &x)) in dv[r.clone()].iter_mut().zip(&av[r]).enumerate() {
                        *d = put(s0 + i, f(x));
                    }
                }),
                None => {
                    let vals = &mut self.regs.vals;
                    each_lane(set, nl, |s| vals[dr + s] = put(s, f(vals[ar + s])));
                }
            }
            if td {
                // combine(x, NONE) is x: the one-operand policy is the two-operand one.
                self.regs
                    .taint2(set, nl, (dr, ar, ar), (ta, false), Taint::NONE);
            }
        }
        self.scalar_errors(d, loc);
    }

    /// Taints the lanes whose scalar rule said "undefined" (collected in `errs`).
    pub(crate) fn scalar_errors(&mut self, d: Reg, loc: LocId) {
        if self.errs.is_empty() {
            return;
        }
        self.regs.make_dirty(d);
        let errs = std::mem::take(&mut self.errs);
        let db = self.regs.base(d);
        for &(s, c, e) in &errs {
            let p = self.prov(Cause::Scalar(e), loc, Taint::NONE);
            let i = db + c as usize * self.lanes + s;
            self.regs.taint[i] = p | self.regs.taint[i].inexact_part();
        }
        self.errs = errs;
        self.errs.clear();
    }

    /// Marks results inexact where a denormal is an operand or the result and the module does not
    /// preserve denormals (a device may flush them to zero: Vulkan, "Floating-Point Computation"):
    /// every register here holds floats of width `w`.
    pub(crate) fn denormals(&mut self, set: &[LaneMask], n: u32, d: Reg, srcs: &[Reg], w: u8) {
        let rows: smallvec::SmallVec<[(Reg, u8); 4]> = srcs
            .iter()
            .chain(std::iter::once(&d))
            .map(|&r| (r, w))
            .collect();
        self.denormals_in(set, n, d, &rows);
    }

    /// Marks `d`'s slots `0..n` inexact in the lanes where one of the float registers `rows`
    /// (each with its width) holds a denormal of a width the module does not preserve (as
    /// [`Wg::denormals`]); an integer operand or result is not among `rows` — its bits are not a
    /// float's (a conversion's `1u` is not the denormal `0x00000001`).
    pub(crate) fn denormals_in(&mut self, set: &[LaneMask], n: u32, d: Reg, rows: &[(Reg, u8)]) {
        let rows: smallvec::SmallVec<[(Reg, u8); 4]> = rows
            .iter()
            .copied()
            .filter(|&(_, w)| self.denorm_flushable(w))
            .collect();
        if rows.is_empty() {
            return;
        }
        let (lanes, nl) = (self.lanes, self.n);
        let mut any = false;
        for c in 0..n as usize {
            for &(r, w) in &rows {
                let row = self.regs.base(r) + c * lanes;
                let vals = &self.regs.vals[row..row + lanes];
                any |= match w {
                    32 => any_lane(set, nl, vals, |v| scalar::is_denormal(32, v)),
                    _ => any_lane(set, nl, vals, |v| scalar::is_denormal(w, v)),
                };
            }
        }
        if !any {
            return;
        }
        self.regs.make_dirty(d);
        for c in 0..n as usize {
            let dr = self.regs.base(d) + c * lanes;
            for &(r, w) in &rows {
                let row = self.regs.base(r) + c * lanes;
                let (vals, taint) = (&self.regs.vals, &mut self.regs.taint);
                each_lane(set, nl, |s| {
                    if scalar::is_denormal(w, vals[row + s]) {
                        taint[dr + s] |= Taint::INEXACT;
                    }
                });
            }
        }
    }

    /// OpQuantizeToF16's zeros: "If the magnitude of Value is too small to represent as a
    /// normalized 16-bit floating-point value, the result may be either +0 or -0" — the sign is
    /// not pinned down, so such a result is inexact (compared within a tolerance, where the two
    /// zeros are equal), not exact. `a` holds the 32-bit operands, `d` the results.
    pub(crate) fn quantized_to_zero(&mut self, set: &[LaneMask], n: u32, d: Reg, a: Reg) {
        let (lanes, nl) = (self.lanes, self.n);
        let zero = |v: u64| v as u32 & 0x7fff_ffff == 0;
        for c in 0..n as usize {
            let (dr, ar) = (self.regs.base(d) + c * lanes, self.regs.base(a) + c * lanes);
            let vals = &self.regs.vals;
            if !any_lane(set, nl, &vals[dr..dr + lanes], zero) {
                continue;
            }
            self.regs.make_dirty(d);
            let (vals, taint) = (&self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                if zero(vals[dr + s]) && !zero(vals[ar + s]) {
                    taint[dr + s] |= Taint::INEXACT;
                }
            });
        }
    }

    /// Copies `n` slots of `a` from `off` into `d` from 0.
    pub(crate) fn move_slots(&mut self, set: &[LaneMask], d: Reg, a: Reg, off: u32, n: u32) {
        self.move_into(set, d, 0, a, off, n)
    }

    /// `d[doff..doff+n] = a[aoff..aoff+n]`.
    pub(crate) fn move_into(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        doff: u32,
        a: Reg,
        aoff: u32,
        n: u32,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let ta = self.regs.dirty(a);
        if ta {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let (db, ab) = (self.regs.base(d), self.regs.base(a));
        for c in 0..n as usize {
            let dr = db + (doff as usize + c) * lanes;
            let ar = ab + (aoff as usize + c) * lanes;
            let vals = &mut self.regs.vals;
            each_span(set, nl, |r| {
                vals.copy_within(ar + r.start..ar + r.end, dr + r.start)
            });
            if td {
                let taint = &mut self.regs.taint;
                if ta {
                    each_span(set, nl, |r| {
                        taint.copy_within(ar + r.start..ar + r.end, dr + r.start)
                    });
                } else {
                    each_span(set, nl, |r| {
                        taint[dr + r.start..dr + r.end].fill(Taint::NONE)
                    });
                }
            }
        }
    }

    /// Copies `n` slots from `a` to `d` for the lanes of `set`.
    pub(crate) fn copy_reg(&mut self, d: Reg, a: Reg, n: u32, set: &[LaneMask]) {
        let lanes = self.lanes;
        let (db, ab) = (self.regs.base(d), self.regs.base(a));
        let ad = self.regs.dirty(a);
        if ad {
            self.regs.make_dirty(d);
        }
        let dd = self.regs.dirty(d);
        let nl = self.n;
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        for c in 0..n as usize {
            let (dr, ar) = (db + c * lanes, ab + c * lanes);
            each_span(set, nl, |r| {
                vals.copy_within(ar + r.start..ar + r.end, dr + r.start);
                if dd {
                    if ad {
                        taint.copy_within(ar + r.start..ar + r.end, dr + r.start);
                    } else {
                        taint[dr + r.start..dr + r.end].fill(Taint::NONE);
                    }
                }
            });
        }
    }

    /// The `Function` variables of function `f` as a call finds them, in the lanes of `flow`:
    /// uninitialised, or holding their initializer.
    pub(crate) fn reset_locals(&mut self, f: FuncIdx, flow: &Flow) {
        let k = self.k;
        for &obj in &k.funcs[f as usize].locals {
            let o = &k.objects[obj.index()];
            let u = self.d.uninit[obj.index()];
            // A carried variable's register no longer holds what memory does in these lanes.
            let var = k.carried_of[obj.index()];
            if var != u32::MAX {
                self.spill(var as usize, Some(&flow.set), false);
                let at = self.carried_at(var as usize);
                for (m, set) in self.carried_mask[at].iter_mut().zip(&flow.set) {
                    *m &= !set.0;
                }
            }
            let lanes = self.lanes;
            let n = self.n;
            for w in o.taint_units() {
                let row = w * lanes;
                let lt = &mut self.ltaint[row..row + lanes];
                each_span(&flow.set, n, |r| lt[r].fill(u));
            }
            if let Some(init) = o.init {
                self.init_lane_object(obj, init, Some(flow));
            }
        }
    }
}

/// Does `f` hold for the value of some lane of `set` in `row` (one register row)? A subgroup whose
/// lanes are all in `set` is scanned without a branch per lane.
#[inline(always)]
fn any_lane(set: &[LaneMask], n: usize, row: &[u64], f: impl Fn(u64) -> bool) -> bool {
    let mut any = false;
    each_span(set, n, |r| {
        any |= row[r].iter().fold(false, |a, &v| a | f(v))
    });
    any
}

/// The value a scalar rule gave lane `s`, slot `c`; where the rule said "undefined", 0 and the
/// reason recorded in `errs` (for `Wg::scalar_errors` to taint).
#[inline(always)]
fn value_or_record(
    errs: &mut Vec<(usize, u32, ScalarUndef)>,
    s: usize,
    c: usize,
    r: Result<u64, ScalarUndef>,
) -> u64 {
    match r {
        Ok(v) => v,
        Err(e) => {
            errs.push((s, c as u32, e));
            0
        }
    }
}

/// How tainted a value is: defined (0) < order-dependent (1) < undefined (2). An operation whose
/// result one operand decides (`true || x`) takes the least tainted deciding operand's taint.
#[inline]
pub(crate) fn taint_rank(t: Taint) -> u8 {
    if crate::spirv::prov::is_undefined(t) {
        2
    } else if t.has_prov() {
        1
    } else {
        0
    }
}
