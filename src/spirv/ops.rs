//! Executing one instruction for the lanes of a flow: the value loops (one per slot, over
//! contiguous lanes) and the taint loops beside them, which run only when an operand or the result
//! carries taint.

use crate::model::LaneMask;
use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{each_lane, Wg};
use crate::spirv::inst::*;
use crate::spirv::lanes::taint_rank;
use crate::spirv::memory::Ptr;
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::spirv::regs::{each_span, same_on};
use crate::spirv::scalar::{self, mask, sext, ScalarUndef};
use crate::spirv::types::Scalar;

impl Wg<'_, '_> {
    /// Executes `inst` (not calls or barriers) for the lanes of `flow`: the value instructions
    /// through their family's executor (`exec_scalar`, `exec_composite` in `values.rs`), memory,
    /// image and subgroup instructions here.
    pub(crate) fn exec(&mut self, inst: &Inst, loc: LocId, flow: &Flow) -> Result<(), SpirvError> {
        let set = &flow.set[..];
        match inst {
            Inst::IntBin { .. }
            | Inst::IntCmp { .. }
            | Inst::IntUn { .. }
            | Inst::FloatBin { .. }
            | Inst::FloatCmp { .. }
            | Inst::FloatNeg { .. }
            | Inst::FloatClass { .. }
            | Inst::LogicBin { .. }
            | Inst::LogicNot { .. }
            | Inst::AnyAll { .. }
            | Inst::PtrCmp { .. }
            | Inst::PtrDiff { .. }
            | Inst::Conv { .. } => self.exec_scalar(inst, set, loc),
            Inst::Select { .. }
            | Inst::Bitcast { .. }
            | Inst::Move { .. }
            | Inst::Insert { .. }
            | Inst::Construct { .. }
            | Inst::Shuffle { .. }
            | Inst::ExtractDyn { .. }
            | Inst::InsertDyn { .. }
            | Inst::TimesScalar { .. }
            | Inst::MatTimesVec { .. }
            | Inst::VecTimesMat { .. }
            | Inst::MatTimesMat { .. }
            | Inst::Outer { .. }
            | Inst::Transpose { .. }
            | Inst::Dot { .. }
            | Inst::IntPair { .. }
            | Inst::IntDot { .. }
            | Inst::BitField { .. }
            | Inst::Ext { .. } => self.exec_composite(inst, set, loc)?,
            Inst::ExtOut {
                frexp,
                w,
                n,
                d,
                x,
                ptr,
                plan,
            } => self.ext_out(flow, *frexp, *w, *n, *d, *x, *ptr, *plan, loc)?,
            Inst::Load { d, ptr, plan } => self.load(flow, *d, *ptr, *plan, loc)?,
            Inst::Store { ptr, v, plan } => self.store(flow, *ptr, *v, *plan, loc)?,
            Inst::CarriedStore { v, c } => self.carried_store(flow, *v, c, loc)?,
            Inst::CarriedLoad { d, c } => self.carried_load(flow, *d, c, loc)?,
            Inst::CopyMemory {
                dst,
                src,
                plan,
                tmp,
            } => {
                self.load(flow, *tmp, *src, *plan, loc)?;
                self.store(flow, *dst, *tmp, *plan, loc)?;
            }
            Inst::AccessChain { d, base, steps } => self.access_chain(set, *d, *base, steps, loc),
            Inst::AddrChain { d, base, steps } => self.addr_chain(set, *d, *base, steps),
            Inst::Resolve {
                d,
                addr,
                bytes,
                align,
                write,
            } => self.resolve(flow, *d, *addr, (*bytes, *align), *write, loc),
            Inst::ArrayLength {
                d,
                ptr,
                offset,
                stride,
            } => self.array_length(set, *d, *ptr, *offset, *stride),
            Inst::Atomic {
                op,
                s,
                d,
                ptr,
                v,
                cmp,
                scope,
                sem,
            } => {
                self.interaction();
                self.atomic(flow, *op, *s, *d, *ptr, *v, *cmp, *scope, *sem, loc)?
            }
            Inst::Group(g, d) => {
                self.interaction();
                self.group(flow, g, *d, loc)?
            }
            Inst::ImageRead {
                d,
                img,
                coord,
                cw,
                sample,
                n,
                w,
            } => self.image_read(flow, *d, *img, *coord, *cw, *sample, *n, *w, loc)?,
            Inst::ImageWrite {
                img,
                coord,
                cw,
                sample,
                texel,
                n,
                w,
            } => self.image_write(flow, *img, *coord, *cw, *sample, *texel, *n, *w, loc)?,
            Inst::ImageQuery {
                d,
                img,
                what,
                lod,
                n,
                w: _,
            } => self.image_query(flow, *d, *img, *what, *lod, *n, loc)?,
            Inst::SampledImage { d, img, smp } => self.sampled_image(flow, *d, *img, *smp)?,
            Inst::ImageSample {
                d,
                img,
                coord,
                lod,
                n,
                w,
                int,
            } => self.image_sample(flow, *d, *img, *coord, *lod, *n, *w, *int, loc)?,
            Inst::TexelPointer {
                d,
                img,
                coord,
                cw,
                sample,
                sw,
            } => self.texel_pointer(flow, *d, *img, *coord, *cw, *sample, *sw)?,
            Inst::Undef { d, n } => {
                let p = self.undefined(Cause::Undef, loc);
                self.fill_taint(set, *d, 0, *n, p);
            }
            Inst::Clock { d, n, device } => self.clock(set, *d, *n, *device, loc),
            Inst::Printf { args, p } => self.printf(set, args, p, loc),
            Inst::Call { .. }
            | Inst::Barrier { .. }
            | Inst::MemoryBarrier { .. }
            | Inst::EnterLocals { .. }
            | Inst::CallReturn { .. } => {
                unreachable!("calls, inlined calls and barriers are executed by the block loop")
            }
        }
        Ok(())
    }

    /// `Inst::CarriedStore`: the value copied into the variable's register, and the lanes noted
    /// as holding it there; stored to memory too once a path is lost (then memory is what the
    /// bodies as written read, and `Wg::spill` has already written what the register held).
    fn carried_store(
        &mut self,
        flow: &Flow,
        v: Reg,
        c: &CarriedAccess,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        if self.ever_lost {
            self.store(flow, c.ptr, v, c.plan, loc)?;
        } else {
            let at = self.carried_at(c.var as usize);
            let masks = &mut self.carried_mask[at];
            for (m, s) in masks.iter_mut().zip(&flow.set) {
                *m |= s.0;
            }
        }
        self.move_slots(&flow.set, c.rv, v, 0, c.n);
        Ok(())
    }

    /// `Inst::CarriedLoad`: the lanes that stored the variable in its register read it there, the
    /// others (and every lane once a path is lost) read memory — what a load from memory would
    /// give each of them.
    fn carried_load(
        &mut self,
        flow: &Flow,
        d: Reg,
        c: &CarriedAccess,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        if self.ever_lost {
            return self.load(flow, d, c.ptr, c.plan, loc);
        }
        let masks = &self.carried_mask[self.carried_at(c.var as usize)];
        if flow.set.iter().zip(masks).all(|(s, m)| s.0 & !m == 0) {
            self.move_slots(&flow.set, d, c.rv, 0, c.n);
            return Ok(());
        }
        let stored: crate::reconverge::PerGroup<LaneMask> = flow
            .set
            .iter()
            .zip(masks)
            .map(|(s, m)| LaneMask(s.0 & m))
            .collect();
        self.load(flow, d, c.ptr, c.plan, loc)?;
        if stored.iter().any(|m| !m.is_empty()) {
            self.move_slots(&stored, d, c.rv, 0, c.n);
        }
        Ok(())
    }

    /// `OpReadClockKHR`: the lane-instructions the workgroup has run so far — a count that only
    /// grows along an invocation's path, as a clock does (SPV_KHR_shader_clock) — marked
    /// order-dependent: what a device's clock reads depends on when it ran the instruction, so
    /// nothing computed from it is compared, and its path is one legal execution's.
    pub(super) fn clock(&mut self, set: &[LaneMask], d: Reg, n: u32, device: bool, loc: LocId) {
        let t = self
            .prov(Cause::Clock { device }, loc, Taint::NONE)
            .order_dependent();
        self.regs.make_dirty(d);
        let (lanes, nl, now) = (self.lanes, self.n, self.steps);
        let db = self.regs.base(d);
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        for c in 0..n as usize {
            let row = db + c * lanes;
            // one 64-bit slot, or the two 32-bit halves, low first
            let v = if n == 1 {
                now
            } else {
                (now >> (32 * c)) & 0xffff_ffff
            };
            each_lane(set, nl, |s| {
                vals[row + s] = v;
                taint[row + s] = t;
            });
        }
    }

    pub(super) fn any_all(&mut self, set: &[LaneMask], all: bool, n: u32, d: Reg, a: Reg) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab) = (self.regs.base(d), self.regs.base(a));
        let ta = self.regs.dirty(a);
        if ta {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        each_lane(set, nl, |s| {
            let mut r = all;
            let mut t = Taint::NONE;
            // A component that decides the result whatever the others are (a true one for
            // OpAny, a false one for OpAll) — the least tainted such one gives the result's
            // taint, as `true || x` (an undefined value is some value of its type, SPIR-V 2.2.2).
            let mut decider: Option<Taint> = None;
            for c in 0..n as usize {
                let v = vals[ab + c * lanes + s] != 0;
                r = if all { r && v } else { r || v };
                if ta {
                    let ct = taint[ab + c * lanes + s];
                    t = combine(t, ct);
                    if v != all && decider.is_none_or(|d| taint_rank(ct) < taint_rank(d)) {
                        decider = Some(ct);
                    }
                }
            }
            vals[db + s] = r as u64;
            if td {
                taint[db + s] = match decider {
                    Some(d) if taint_rank(d) < taint_rank(t) => d,
                    _ => t,
                };
            }
        });
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn select(
        &mut self,
        set: &[LaneMask],
        n: u32,
        d: Reg,
        c: Reg,
        vector_cond: bool,
        a: Reg,
        b: Reg,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, cb, ab, bb) = (
            self.regs.base(d),
            self.regs.base(c),
            self.regs.base(a),
            self.regs.base(b),
        );
        let (tc, ta, tb) = (self.regs.dirty(c), self.regs.dirty(a), self.regs.dirty(b));
        if tc || ta || tb {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        for k in 0..n as usize {
            let cr = cb + if vector_cond { k * lanes } else { 0 };
            let (dr, ar, br) = (db + k * lanes, ab + k * lanes, bb + k * lanes);
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let pick_a = vals[cr + s] != 0;
                vals[dr + s] = if pick_a { vals[ar + s] } else { vals[br + s] };
                if td {
                    let tv = if pick_a {
                        if ta {
                            taint[ar + s]
                        } else {
                            Taint::NONE
                        }
                    } else if tb {
                        taint[br + s]
                    } else {
                        Taint::NONE
                    };
                    let tcs = if tc { taint[cr + s] } else { Taint::NONE };
                    let other = match (pick_a, tb, ta) {
                        (true, true, _) => taint[br + s],
                        (false, _, true) => taint[ar + s],
                        _ => Taint::NONE,
                    };
                    taint[dr + s] = if tcs.has_prov()
                        && vals[ar + s] == vals[br + s]
                        && !tv.has_prov()
                        && !other.has_prov()
                    {
                        // Both objects hold the same defined value: whichever an undefined or
                        // order-dependent condition picks (OpSelect picks one of them), the
                        // result is that value — the condition cannot change it.
                        combine(tv, other)
                    } else {
                        // An undefined condition makes the selected value undefined too.
                        combine(tcs, tv)
                    };
                }
            });
        }
    }

    pub(super) fn bitcast(
        &mut self,
        set: &[LaneMask],
        from: &[Scalar],
        to: &[Scalar],
        d: Reg,
        a: Reg,
    ) {
        // Reinterpret: concatenate the source slots' bits (little-endian), cut into the result's.
        // SPIR-V OpBitcast: a component of the type with fewer components "maps its lower-ordered
        // bits to the lower-numbered components" of the other — so a result component's taint is
        // that of the source components whose bits it takes, and no other's.
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab) = (self.regs.base(d), self.regs.base(a));
        let ta = self.regs.dirty(a);
        if ta {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        // Each result component's source components (a range: bits are concatenated in order);
        // a vector has at most 16 components.
        let mut spans = [(0usize, 0usize); 16];
        {
            let mut starts = [0u32; 16];
            let mut b = 0u32;
            for (k, sc) in from.iter().enumerate().take(16) {
                starts[k] = b;
                b += sc.bits();
            }
            let starts = &starts[..from.len().min(16)];
            let mut at = 0u32;
            for (c, sc) in to.iter().enumerate().take(16) {
                let end = at + sc.bits();
                let first = starts.iter().rposition(|&x| x <= at).unwrap_or(0);
                let last = starts.iter().rposition(|&x| x < end).unwrap_or(first);
                at = end;
                spans[c] = (first, last + 1);
            }
        }
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        each_lane(set, nl, |s| {
            let mut acc: u128 = 0;
            let mut bits = 0u32;
            // The source's taint, read before any result component is written.
            let mut ts = [Taint::NONE; 16];
            for (c, sc) in from.iter().enumerate() {
                acc |= ((vals[ab + c * lanes + s] & mask(sc.bits() as u8)) as u128) << bits;
                bits += sc.bits();
                if ta {
                    ts[c.min(15)] = taint[ab + c * lanes + s];
                }
            }
            let mut at = 0u32;
            for (c, sc) in to.iter().enumerate() {
                vals[db + c * lanes + s] = ((acc >> at) as u64) & mask(sc.bits() as u8);
                at += sc.bits();
                if td {
                    let (lo, hi) = spans[c.min(15)];
                    let t = ts[lo.min(15)..hi.min(16)]
                        .iter()
                        .fold(Taint::NONE, |t, &k| combine(t, k));
                    // Bits keep what they are: a float's read as an integer are still compared
                    // as that float ([`Taint::is_float_bits`]); any bits read as a float are a
                    // float's.
                    taint[db + c * lanes + s] = if sc.is_float() { t.as_float_bits() } else { t };
                }
            }
        });
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn extract_dyn(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        v: Reg,
        idx: Reg,
        idx_w: u8,
        count: u32,
        loc: LocId,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, vb, ib) = (self.regs.base(d), self.regs.base(v), self.regs.base(idx));
        let (tv, ti) = (self.regs.dirty(v), self.regs.dirty(idx));
        self.regs.make_dirty(d);
        let mut bad: Vec<(usize, u64)> = Vec::new();
        {
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let i = vals[ib + s] & mask(idx_w);
                let it = if ti { taint[ib + s] } else { Taint::NONE };
                if i >= count as u64 {
                    bad.push((s, i));
                    return;
                }
                let src = vb + i as usize * lanes + s;
                vals[db + s] = vals[src];
                taint[db + s] = combine(it, if tv { taint[src] } else { Taint::NONE });
            });
        }
        for (s, i) in bad {
            // SPIR-V OpVectorExtractDynamic: "behavior is undefined if Index's value is less than
            // zero or greater than or equal to the number of components".
            let p = self.prov(
                Cause::IndexOutOfRange {
                    index: i,
                    len: count,
                },
                loc,
                Taint::NONE,
            );
            self.regs.taint[db + s] = p;
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert_dyn(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        comp: Reg,
        idx: Reg,
        idx_w: u8,
        count: u32,
        loc: LocId,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let (db, cb, ib) = (self.regs.base(d), self.regs.base(comp), self.regs.base(idx));
        let (tc, ti) = (self.regs.dirty(comp), self.regs.dirty(idx));
        self.regs.make_dirty(d);
        let mut bad: Vec<(usize, u64)> = Vec::new();
        {
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let i = vals[ib + s] & mask(idx_w);
                if i >= count as u64 {
                    bad.push((s, i));
                    return;
                }
                let it = if ti { taint[ib + s] } else { Taint::NONE };
                let dst = db + i as usize * lanes + s;
                vals[dst] = vals[cb + s];
                taint[dst] = combine(it, if tc { taint[cb + s] } else { Taint::NONE });
                if it.has_prov() {
                    // Which component changed is unknown: every component is undefined.
                    for c in 0..count as usize {
                        taint[db + c * lanes + s] = combine(it, taint[db + c * lanes + s]);
                    }
                }
            });
        }
        for (s, i) in bad {
            let p = self.prov(
                Cause::IndexOutOfRange {
                    index: i,
                    len: count,
                },
                loc,
                Taint::NONE,
            );
            for c in 0..count as usize {
                self.regs.taint[db + c * lanes + s] = p;
            }
        }
    }

    pub(super) fn times_scalar(&mut self, set: &[LaneMask], w: u8, n: u32, d: Reg, v: Reg, s: Reg) {
        // The scalar is not checked for denormals here (as before this one-pass form).
        // One loop per width, the width a constant inside it (as `Wg::float_bin_op`).
        if w == 32 {
            self.map2_float(set, n, d, v, (s, true, false), Taint::NONE, 32, |x, y| {
                scalar::float_bin(FloatBin::Mul, 32, x, y)
            });
        } else {
            self.map2_float(set, n, d, v, (s, true, false), Taint::NONE, w, |x, y| {
                scalar::float_bin(FloatBin::Mul, w, x, y)
            });
        }
    }

    /// `d[o] = Σ_k x·y` over the pairs `terms(o)`, for `outs` results: products and sums rounded
    /// in turn (uncontracted), and marked inexact (a device may contract and reorder them).
    pub(super) fn linear(
        &mut self,
        set: &[LaneMask],
        w: u8,
        d: Reg,
        outs: u32,
        terms: impl Fn(u32) -> Vec<((Reg, u32), (Reg, u32))>,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        self.regs.make_dirty(d);
        let db = self.regs.base(d);
        for o in 0..outs {
            let t = terms(o);
            let rows: Vec<(usize, bool, usize, bool)> = t
                .iter()
                .map(|((a, ac), (b, bc))| {
                    (
                        self.regs.base(*a) + *ac as usize * lanes,
                        self.regs.dirty(*a),
                        self.regs.base(*b) + *bc as usize * lanes,
                        self.regs.dirty(*b),
                    )
                })
                .collect();
            let dr = db + o as usize * lanes;
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let mut acc: Option<u64> = None;
                let mut tt = Taint::INEXACT;
                for &(ar, ta, br, tb) in &rows {
                    let p = scalar::float_bin(FloatBin::Mul, w, vals[ar + s], vals[br + s]);
                    acc = Some(match acc {
                        None => p,
                        Some(x) => scalar::float_bin(FloatBin::Add, w, x, p),
                    });
                    if ta {
                        tt = combine(tt, taint[ar + s]);
                    }
                    if tb {
                        tt = combine(tt, taint[br + s]);
                    }
                }
                vals[dr + s] = acc.unwrap_or(0);
                taint[dr + s] = tt;
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn int_pair(
        &mut self,
        set: &[LaneMask],
        op: IntPair,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    ) {
        // The result struct: member 0 = n slots (low / sum / difference), member 1 = n slots.
        let (lanes, nl) = (self.lanes, self.n);
        let (db, ab, bb) = (self.regs.base(d), self.regs.base(a), self.regs.base(b));
        let (ta, tb) = (self.regs.dirty(a), self.regs.dirty(b));
        if ta || tb {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let m = mask(w);
        for c in 0..n as usize {
            let (lo, hi) = (db + c * lanes, db + (n as usize + c) * lanes);
            let (ar, br) = (ab + c * lanes, bb + c * lanes);
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            each_lane(set, nl, |s| {
                let (x, y) = (vals[ar + s] & m, vals[br + s] & m);
                let (l, h) = match op {
                    IntPair::AddCarry => {
                        let r = x as u128 + y as u128;
                        ((r as u64) & m, ((r >> w) & 1) as u64)
                    }
                    IntPair::SubBorrow => ((x.wrapping_sub(y)) & m, (x < y) as u64),
                    IntPair::UMulExtended => {
                        let r = x as u128 * y as u128;
                        ((r as u64) & m, ((r >> w) as u64) & m)
                    }
                    IntPair::SMulExtended => {
                        let r = sext(w, x) as i128 * sext(w, y) as i128;
                        ((r as u64) & m, ((r >> w) as u64) & m)
                    }
                };
                vals[lo + s] = l;
                vals[hi + s] = h;
                if td {
                    let t = combine(
                        if ta { taint[ar + s] } else { Taint::NONE },
                        if tb { taint[br + s] } else { Taint::NONE },
                    );
                    taint[lo + s] = t;
                    taint[hi + s] = t;
                }
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn bit_field(
        &mut self,
        set: &[LaneMask],
        op: BitField,
        w: u8,
        n: u32,
        d: Reg,
        base: Reg,
        insert: Reg,
        offset: Reg,
        count: Reg,
        loc: LocId,
    ) {
        let (lanes, nl) = (self.lanes, self.n);
        let regs = [base, insert, offset, count];
        let any_t = regs.iter().any(|r| self.regs.dirty(*r));
        if any_t {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let offs: Vec<usize> = regs.iter().map(|r| self.regs.base(*r)).collect();
        let dirt: Vec<bool> = regs.iter().map(|r| self.regs.dirty(*r)).collect();
        let db = self.regs.base(d);
        let m = mask(w);
        self.errs.clear();
        for c in 0..n as usize {
            let (vals, taint, errs) = (&mut self.regs.vals, &mut self.regs.taint, &mut self.errs);
            each_lane(set, nl, |s| {
                let row = |k: usize| offs[k] + c * lanes + s;
                let x = vals[row(0)] & m;
                // Offset and Count are scalars (slot 0) for every component.
                let o = vals[offs[2] + s];
                let k = vals[offs[3] + s];
                let r = if o + k > w as u64 {
                    errs.push((s, c as u32, ScalarUndef::BitFieldOutOfRange));
                    0
                } else {
                    let fm = if k == 64 { !0 } else { ((1u64 << k) - 1) << o };
                    match op {
                        BitField::Insert => (x & !fm) | ((vals[row(1)] << o) & fm),
                        BitField::UExtract => (x & fm) >> o,
                        BitField::SExtract => {
                            if k == 0 {
                                0
                            } else {
                                (sext(k as u8, (x & fm) >> o) as u64) & m
                            }
                        }
                    }
                };
                vals[db + c * lanes + s] = r & m;
                if td {
                    let mut t = Taint::NONE;
                    for kk in 0..4 {
                        if dirt[kk] {
                            let i = if kk >= 2 { offs[kk] + s } else { row(kk) };
                            t = combine(t, taint[i]);
                        }
                    }
                    taint[db + c * lanes + s] = t;
                }
            });
        }
        self.scalar_errors(d, loc);
    }

    /// `d = base` stepped by `steps`, one step at a time for every lane (a row of running
    /// offsets in `d`, out-of-bounds flags in the scratch row): the per-lane work of a step is a
    /// few arithmetic instructions, with no dispatch on the step inside the lane loop. An array of
    /// descriptors (a step that changes the object) goes lane by lane.
    fn access_chain(&mut self, set: &[LaneMask], d: Reg, base: Reg, steps: &[Step], loc: LocId) {
        if steps.len() > 8 {
            return self.access_chain_long(set, d, base, steps, loc);
        }
        if steps.iter().any(|s| matches!(s, Step::Descriptor { .. })) {
            return self.access_chain_lanes(set, d, base, steps, loc);
        }
        if let Some(first) = self.uniform_chain(set, base, steps) {
            // Every active lane computes the same pointer: compute it for one, copy it to the rest.
            let v = self.chain_lane(first, base, steps);
            let (db, lanes) = (self.regs.base(d), self.lanes);
            let row = &mut self.regs.vals[db..db + lanes];
            each_span(set, self.n, |r| row[r].fill(v));
            if self.regs.dirty(d) {
                // Clean inputs: no lane's pointer carries taint.
                let t = &mut self.regs.taint[db..db + lanes];
                each_span(set, self.n, |r| t[r].fill(Taint::NONE));
            }
            return;
        }
        self.access_chain_steps(set, d, base, steps)
    }

    /// The first active lane of `set` (its workgroup-wide slot), where the base and every index of
    /// an access chain hold the same value, without taint, in every active lane (the chain then
    /// gives every lane the same pointer); `None` otherwise.
    fn uniform_chain(&self, set: &[LaneMask], base: Reg, steps: &[Step]) -> Option<usize> {
        let lanes = self.lanes;
        // A constant (a variable's pointer, a folded chain) is the same in every lane.
        let same = |r: Reg| {
            let b = self.regs.base(r);
            !self.regs.dirty(r)
                && (self.consts[r.index()]
                    || same_on(set, self.n, &self.regs.vals[b..b + lanes]).is_some())
        };
        let uniform = same(base)
            && steps.iter().all(|s| match s {
                Step::Const(_) => true,
                Step::Dyn { index, .. } => same(*index),
                Step::Descriptor { .. } => false,
            });
        if !uniform {
            return None;
        }
        let g = set.iter().position(|m| m.0 != 0)?;
        let l = set[g].0.trailing_zeros();
        Some(g * self.n + l as usize)
    }

    /// One dynamic step of a chain: the pointer, flagged out of bounds where index `i` is, and the
    /// running offset moved by `i` elements of `stride` bytes (wrapping: a negative index too).
    #[inline(always)]
    fn dyn_step(p: Ptr, off: u64, i: i64, stride: u32, len: Option<u32>, elem: bool) -> (Ptr, u64) {
        let p = if Step::out_of_bounds(i, len, elem) {
            p.out_of_bounds()
        } else {
            p
        };
        (p, off.wrapping_add((i as u64).wrapping_mul(stride as u64)))
    }

    /// The pointer bits lane `s` (workgroup-wide) computes by an access chain of at most 8 steps
    /// through no descriptor, the rules of [`Wg::access_chain_steps`] for one lane (taint aside).
    fn chain_lane(&self, s: usize, base: Reg, steps: &[Step]) -> u64 {
        let vals = &self.regs.vals;
        let mut p = Ptr::from_bits(vals[self.regs.base(base) + s]);
        let mut off = p.off() as u64;
        for st in steps {
            match *st {
                Step::Const(c) => off = off.wrapping_add(c as u64),
                Step::Dyn {
                    index,
                    width,
                    signed,
                    stride,
                    len,
                    elem,
                } => {
                    let i = Step::index(vals[self.regs.base(index) + s], width, signed);
                    (p, off) = Self::dyn_step(p, off, i, stride, len, elem);
                }
                Step::Descriptor { .. } => {
                    unreachable!("chains through descriptors go lane by lane")
                }
            }
        }
        p.at(off).bits()
    }

    /// [`Wg::access_chain`] of at most 8 steps through no descriptor, for the lanes of `set`.
    fn access_chain_steps(&mut self, set: &[LaneMask], d: Reg, base: Reg, steps: &[Step]) {
        let nl = self.n;
        let (db, bb) = (self.regs.base(d), self.regs.base(base));
        let tb = self.regs.dirty(base);
        if tb
            || steps
                .iter()
                .any(|s| matches!(s, Step::Dyn { index, .. } if self.regs.dirty(*index)))
        {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        if !td && self.access_chain_one_index(set, d, base, steps) {
            return;
        }
        let mut rows = [(0usize, false); 8];
        for (k, st) in steps.iter().enumerate() {
            if let Step::Dyn { index, .. } = st {
                rows[k] = (self.regs.base(*index), self.regs.dirty(*index));
            }
        }
        // Each lane's entries are written before they are read: no need to clear them. `from`
        // keeps the base pointer (flagged there as steps go out of bounds), `acc` the running
        // offset; both apart from the register file, so that each pass is one loop over slices.
        let lanes = self.lanes;
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.len() < 2 * lanes {
            scratch.resize(2 * lanes, 0);
        }
        let (from, acc) = scratch.split_at_mut(lanes);
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        each_span(set, nl, |r| {
            from[r.clone()].copy_from_slice(&vals[bb + r.start..bb + r.end]);
            for (a, &p) in acc[r.clone()].iter_mut().zip(&from[r.clone()]) {
                *a = Ptr::from_bits(p).off() as u64;
            }
            if td {
                if tb {
                    taint.copy_within(bb + r.start..bb + r.end, db + r.start);
                } else {
                    taint[db + r.start..db + r.end].fill(Taint::NONE);
                }
            }
        });
        let mut konst = 0u64;
        for (k, st) in steps.iter().enumerate() {
            match *st {
                Step::Const(c) => konst = konst.wrapping_add(c as u64),
                Step::Dyn {
                    width,
                    signed,
                    stride,
                    len,
                    elem,
                    ..
                } => {
                    let (row, dt) = rows[k];
                    each_span(set, nl, |r| {
                        let idx = &vals[row + r.start..row + r.end];
                        let it = acc[r.clone()].iter_mut().zip(&mut from[r.clone()]).zip(idx);
                        for ((a, f), &x) in it {
                            let i = Step::index(x, width, signed);
                            let (p, o) =
                                Self::dyn_step(Ptr::from_bits(*f), *a, i, stride, len, elem);
                            (*f, *a) = (p.bits(), o);
                        }
                        if dt {
                            for s in r {
                                taint[db + s] = combine(taint[db + s], taint[row + s]);
                            }
                        }
                    });
                }
                Step::Descriptor { .. } => {
                    unreachable!("chains through descriptors go lane by lane")
                }
            }
        }
        each_span(set, nl, |r| {
            let it = vals[db + r.start..db + r.end]
                .iter_mut()
                .zip(&from[r.clone()])
                .zip(&acc[r]);
            for ((d, &f), &a) in it {
                *d = Ptr::from_bits(f).at(a.wrapping_add(konst)).bits();
            }
        });
        self.scratch = scratch;
    }

    /// [`Wg::access_chain_steps`] in one pass over the lanes where no operand carries taint and
    /// one step is dynamic (an index into a buffer's array: the common chain): the same pointer
    /// bits as the general passes. `false` (nothing done) for any other chain.
    fn access_chain_one_index(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        base: Reg,
        steps: &[Step],
    ) -> bool {
        let mut konst = 0u64;
        let mut one = None;
        for st in steps {
            match *st {
                Step::Const(c) => konst = konst.wrapping_add(c as u64),
                Step::Dyn {
                    index,
                    width,
                    signed,
                    stride,
                    len,
                    elem,
                } if one.is_none() => one = Some((index, width, signed, stride, len, elem)),
                _ => return false,
            }
        }
        let Some((index, width, signed, stride, len, elem)) = one else {
            return false;
        };
        let (db, bb, ib) = (
            self.regs.base(d),
            self.regs.base(base),
            self.regs.base(index),
        );
        let Some((dv, bv, iv)) =
            crate::spirv::regs::rows3(&mut self.regs.vals, db, bb, ib, self.lanes)
        else {
            return false;
        };
        each_span(set, self.n, |r| {
            let it = dv[r.clone()].iter_mut().zip(&bv[r.clone()]).zip(&iv[r]);
            for ((dst, &p), &x) in it {
                let p = Ptr::from_bits(p);
                let i = Step::index(x, width, signed);
                let (p, off) = Self::dyn_step(p, p.off() as u64, i, stride, len, elem);
                *dst = p.at(off.wrapping_add(konst)).bits();
            }
        });
        true
    }

    /// [`Wg::access_chain`] lane by lane, every step for one lane before the next (chains through
    /// an array of descriptors, whose steps change the object).
    fn access_chain_lanes(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        base: Reg,
        steps: &[Step],
        loc: LocId,
    ) {
        let nl = self.n;
        let (db, bb) = (self.regs.base(d), self.regs.base(base));
        let tb = self.regs.dirty(base);
        let any_dyn_t = steps.iter().any(|s| {
            matches!(s, Step::Dyn { index, .. } | Step::Descriptor { index, .. } if self.regs.dirty(*index))
        });
        let not_uniform = self.nonuniform_descriptors(set, base, steps, loc);
        if tb || any_dyn_t || not_uniform.iter().any(|(m, _)| m.0 != 0) {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        // Register rows of the dynamic indices, resolved once (no allocation for short chains).
        let mut rows = [(0usize, false); 8];
        for (k, st) in steps.iter().enumerate() {
            if let Step::Dyn { index, .. } | Step::Descriptor { index, .. } = st {
                rows[k] = (self.regs.base(*index), self.regs.dirty(*index));
            }
        }
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        each_lane(set, nl, |s| {
            let p = Ptr::from_bits(vals[bb + s]);
            let mut obj = p.obj();
            let mut off = p.off() as u64;
            let mut oob = p.oob();
            // An index past the array of descriptors (the pointer then names the element).
            let mut past = None;
            let mut t = if tb { taint[bb + s] } else { Taint::NONE };
            // The index register of step k, sign-extended when signed; its taint joins `t`.
            let index = |k: usize, width: u8, signed: bool, t: &mut Taint| -> i64 {
                let (row, dt) = rows[k];
                if dt {
                    *t = combine(*t, taint[row + s]);
                }
                Step::index(vals[row + s], width, signed)
            };
            for (k, st) in steps.iter().enumerate() {
                match st {
                    Step::Const(c) => off += *c as u64,
                    Step::Descriptor {
                        width,
                        signed,
                        count,
                        ..
                    } => {
                        let i = index(k, *width, *signed, &mut t);
                        if i < 0 || i >= *count as i64 {
                            oob = true;
                            past = Some(i);
                        } else {
                            obj = ObjectId::new(obj.get() + i as u32);
                        }
                    }
                    Step::Dyn {
                        width,
                        signed,
                        stride,
                        len,
                        elem,
                        ..
                    } => {
                        let i = index(k, *width, *signed, &mut t);
                        if Step::out_of_bounds(i, *len, *elem) {
                            oob = true;
                        }
                        off = off.wrapping_add((i as u64).wrapping_mul(*stride as u64));
                    }
                }
            }
            if off > u32::MAX as u64 {
                oob = true;
                off = Ptr::FAR as u64;
            }
            let q = match past {
                _ if p.past_array_index().is_some() => p,
                Some(i) => Ptr::past_array(obj, i),
                None if oob => Ptr::new(obj, off as u32).out_of_bounds(),
                None => Ptr::new(obj, off as u32),
            };
            vals[db + s] = q.bits();
            if td {
                taint[db + s] = t;
            }
        });
        for (g, (m, p)) in not_uniform.iter().enumerate() {
            for l in m.iter() {
                let at = db + g * nl + l as usize;
                self.regs.taint[at] = combine(self.regs.taint[at], *p);
            }
        }
    }

    /// Vulkan's rule for an array of descriptors indexed without the `NonUniform` decoration:
    /// "If an instruction loads from or stores to a resource (including atomics and image
    /// instructions) and the resource descriptor being accessed is not dynamically uniform, then
    /// the operand corresponding to that resource (e.g. the pointer or sampled image operand) must
    /// be decorated with NonUniform" (VUID-RuntimeSpirv-NonUniform-06274). Per subgroup of
    /// `set`: where the invocations executing the chain together hold different defined indices,
    /// those invocations (their mask) and the cause their pointers take — undefined, for a device
    /// may take one invocation's descriptor for all of them (a scalar descriptor load). Empty when
    /// the chain is decorated, or every subgroup's index is uniform. The check is per subgroup:
    /// the invocations the interpreter knows to execute one dynamic instance together.
    fn nonuniform_descriptors(
        &self,
        set: &[LaneMask],
        base: Reg,
        steps: &[Step],
        loc: LocId,
    ) -> Vec<(LaneMask, Taint)> {
        let Some(&Step::Descriptor {
            index,
            width,
            signed,
            ..
        }) = steps.iter().find(|s| {
            matches!(
                s,
                Step::Descriptor {
                    nonuniform: false,
                    ..
                }
            )
        })
        else {
            return Vec::new();
        };
        let (nl, row, dirty) = (self.n, self.regs.base(index), self.regs.dirty(index));
        let bb = self.regs.base(base);
        let mut out = Vec::new();
        for (g, m) in set.iter().enumerate() {
            // The first defined index, and the first that differs from it (an undefined index
            // makes its own lane's pointer undefined, with its own cause).
            let mut first: Option<(u32, i64)> = None;
            let mut other = None;
            for l in m.iter() {
                let s = g * nl + l as usize;
                if dirty && is_undefined(self.regs.taint[row + s]) {
                    continue;
                }
                let i = Step::index(self.regs.vals[row + s], width, signed);
                match first {
                    None => first = Some((l, i)),
                    Some((_, f)) if f != i => {
                        other = Some((l, i));
                        break;
                    }
                    Some(_) => {}
                }
            }
            let (Some((la, ia)), Some((lb, ib))) = (first, other) else {
                continue;
            };
            let obj = Ptr::from_bits(self.regs.vals[bb + g * nl + la as usize]).obj();
            let name = &self.k.objects[obj.index()].name;
            let cause = Cause::NonUniformDescriptor {
                array: name.strip_suffix("[0]").unwrap_or(name).to_string(),
                lanes: [(la, ia), (lb, ib)],
            };
            if out.is_empty() {
                out = vec![(LaneMask(0), Taint::NONE); set.len()];
            }
            out[g] = (*m, self.prov(cause, loc, Taint::NONE));
        }
        out
    }

    /// An access chain of more than 8 steps: the same, one step at a time.
    fn access_chain_long(
        &mut self,
        set: &[LaneMask],
        d: Reg,
        base: Reg,
        steps: &[Step],
        loc: LocId,
    ) {
        self.access_chain(set, d, base, &steps[..8], loc);
        let mut rest = &steps[8..];
        while !rest.is_empty() {
            let k = rest.len().min(8);
            self.access_chain(set, d, d, &rest[..k], loc);
            rest = &rest[k..];
        }
    }

    fn array_length(&mut self, set: &[LaneMask], d: Reg, ptr: Reg, offset: u32, stride: u32) {
        let (lanes, nl) = (self.lanes, self.n);
        let _ = lanes;
        let (db, pb) = (self.regs.base(d), self.regs.base(ptr));
        let sizes: Vec<u32> = (0..self.d.buffers.len())
            .map(|i| self.d.view(crate::spirv::ids::ObjectId::new(i as u32)).1)
            .collect();
        let vals = &mut self.regs.vals;
        each_lane(set, nl, |s| {
            let obj = Ptr::from_bits(vals[pb + s]).obj().index();
            let size = sizes.get(obj).copied().unwrap_or(0);
            vals[db + s] = (size.saturating_sub(offset) / stride.max(1)) as u64;
        });
    }
}
