//! Loads, stores and atomics: per lane, through the lane's pointer, with bounds checks, taint and
//! the race detector's shadow; and the built-in inputs written at the start of a workgroup.

use crate::model::{evaluate, info, LaneMask, Op, OpCall, Outcome};
use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{each_lane, Finding, Wg};
use crate::spirv::inst::*;
use crate::spirv::mem::{self, unordered, ATOMIC_WHEN, MANY, OOB};
use crate::spirv::prov::{combine, Cause, INEXACT, PROV};
use crate::spirv::scalar::{self, mask};
use crate::spirv::types::{Scalar, Storage};
use rspirv::spirv::BuiltIn;
use std::sync::atomic::Ordering::Relaxed;

/// Where an object's words live.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    Lane,
    Shared,
    Global,
}

fn space(s: Storage) -> Space {
    match s {
        Storage::Function | Storage::Private | Storage::Input => Space::Lane,
        Storage::Workgroup => Space::Shared,
        _ => Space::Global,
    }
}

/// One word access decided per lane: the word index in its space, the bit shift and width within
/// the word (sub-word scalars), for a scalar of `bytes` at byte `at` of the object.
#[inline(always)]
fn word_of(at: u32) -> (usize, u32) {
    ((at / 4) as usize, (at % 4) * 8)
}

impl Wg<'_, '_> {
    fn obj_size(&self, obj: u32) -> u64 {
        let o = &self.k.objects[obj as usize];
        match space(o.storage) {
            Space::Global => self.d.buffers[obj as usize]
                .as_ref()
                .map(|b| b.size as u64)
                .unwrap_or(0),
            _ => o.size as u64,
        }
    }

    fn oob(&mut self, obj: u32, offset: u64, loc: LocId, s: usize, write: bool) -> u32 {
        self.d.find(Finding::OutOfBounds {
            object: obj,
            offset,
            loc,
            slot: self.who(s) - 1,
            write,
        });
        let o = &self.k.objects[obj as usize];
        self.prov(
            Cause::OutOfBounds {
                var: o.name.clone(),
                offset,
                size: self.obj_size(obj),
            },
            loc,
            0,
        )
    }

    /// Reads one word of object `obj` (word index `w` within it) for lane `s`; records the read in
    /// the race shadow. Returns (bits, taint).
    #[inline(always)]
    fn read_word(
        &mut self,
        obj: u32,
        sp: Space,
        w: usize,
        s: usize,
        loc: LocId,
        atomic: bool,
    ) -> (u32, u32) {
        match sp {
            Space::Lane => {
                let base = self.k.objects[obj as usize].base as usize;
                let i = (base + w) * self.lanes + s;
                (self.lmem[i], self.ltaint[i])
            }
            Space::Shared => {
                let i = self.k.objects[obj as usize].base as usize + w;
                let (me, when) = (
                    self.who(s),
                    self.when(s) | if atomic { ATOMIC_WHEN } else { 0 },
                );
                let (lpw, n) = (self.d.lanes_per_wg, self.n as u32);
                let (ww, wwhen) = (self.s_w_who[i], self.s_w_when[i]);
                let mut raced = 0;
                if ww != 0
                    && !(atomic && wwhen & ATOMIC_WHEN != 0)
                    && unordered(ww, wwhen, me, when, lpw, n)
                {
                    raced = self.race(
                        obj,
                        w,
                        (ww - 1, self.s_w_loc[i], true),
                        (me - 1, loc, false),
                    );
                }
                let r = self.s_r_who[i];
                self.s_r_who[i] = if r == 0 || r == me { me } else { MANY };
                self.s_r_when[i] = when;
                self.s_r_loc[i] = loc;
                (self.smem[i], combine(raced, self.staint[i]))
            }
            Space::Global => {
                let d = self.d;
                let Some(b) = d.buffers[obj as usize].as_ref() else {
                    return (0, 0);
                };
                let mut raced = 0;
                if let Some(sh) = &b.shadow {
                    let (me, when) = (
                        self.who(s),
                        self.when(s) | if atomic { ATOMIC_WHEN } else { 0 },
                    );
                    let (lpw, n) = (d.lanes_per_wg, self.n as u32);
                    let ww = sh.w_who[w].load(Relaxed);
                    if ww != 0 {
                        let wwhen = sh.w_when[w].load(Relaxed);
                        if !(atomic && wwhen & ATOMIC_WHEN != 0)
                            && unordered(ww, wwhen, me, when, lpw, n)
                        {
                            let wl = sh.w_loc[w].load(Relaxed);
                            raced = self.race(obj, w, (ww - 1, wl, true), (me - 1, loc, false));
                        }
                    }
                    let r = sh.r_who[w].load(Relaxed);
                    if r != me && r != MANY {
                        sh.r_who[w].store(if r == 0 { me } else { MANY }, Relaxed);
                    }
                    sh.r_when[w].store(when, Relaxed);
                    sh.r_loc[w].store(loc, Relaxed);
                }
                (
                    b.vals[w].load(Relaxed),
                    combine(raced, b.taint[w].load(Relaxed)),
                )
            }
        }
    }

    /// Writes one word (bits under `wmask`) with taint `t` for lane `s`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn write_word(
        &mut self,
        obj: u32,
        sp: Space,
        w: usize,
        s: usize,
        bits: u32,
        wmask: u32,
        t: u32,
        loc: LocId,
        atomic: bool,
    ) {
        match sp {
            Space::Lane => {
                let base = self.k.objects[obj as usize].base as usize;
                let i = (base + w) * self.lanes + s;
                self.lmem[i] = (self.lmem[i] & !wmask) | (bits & wmask);
                self.ltaint[i] = if wmask == !0 {
                    t
                } else {
                    combine(t, self.ltaint[i])
                };
            }
            Space::Shared => {
                let i = self.k.objects[obj as usize].base as usize + w;
                let (me, when) = (
                    self.who(s),
                    self.when(s) | if atomic { ATOMIC_WHEN } else { 0 },
                );
                let (lpw, n) = (self.d.lanes_per_wg, self.n as u32);
                let (ww, wwhen) = (self.s_w_who[i], self.s_w_when[i]);
                let both_atomic = |x: u32| atomic && x & ATOMIC_WHEN != 0;
                let mut raced = 0;
                if ww != 0 && !both_atomic(wwhen) && unordered(ww, wwhen, me, when, lpw, n) {
                    raced = self.race(obj, w, (ww - 1, self.s_w_loc[i], true), (me - 1, loc, true));
                }
                let (rw, rwhen) = (self.s_r_who[i], self.s_r_when[i]);
                if rw != 0 && !both_atomic(rwhen) && unordered(rw, rwhen, me, when, lpw, n) {
                    let other = if rw == MANY { me } else { rw };
                    if other != me || rw == MANY {
                        raced = self.race(
                            obj,
                            w,
                            (other - 1, self.s_r_loc[i], false),
                            (me - 1, loc, true),
                        );
                    }
                }
                let t = combine(raced, t);
                self.s_w_who[i] = me;
                self.s_w_when[i] = when;
                self.s_w_loc[i] = loc;
                self.smem[i] = (self.smem[i] & !wmask) | (bits & wmask);
                self.staint[i] = if wmask == !0 {
                    t
                } else {
                    combine(t, self.staint[i])
                };
            }
            Space::Global => {
                let d = self.d;
                let Some(b) = d.buffers[obj as usize].as_ref() else {
                    return;
                };
                let mut raced = 0;
                if let Some(sh) = &b.shadow {
                    let (me, when) = (
                        self.who(s),
                        self.when(s) | if atomic { ATOMIC_WHEN } else { 0 },
                    );
                    let (lpw, n) = (d.lanes_per_wg, self.n as u32);
                    let both_atomic = |x: u32| atomic && x & ATOMIC_WHEN != 0;
                    let ww = sh.w_who[w].swap(me, Relaxed);
                    let wwhen = sh.w_when[w].swap(when, Relaxed);
                    let wl = sh.w_loc[w].swap(loc, Relaxed);
                    if ww != 0 && !both_atomic(wwhen) && unordered(ww, wwhen, me, when, lpw, n) {
                        raced = self.race(obj, w, (ww - 1, wl, true), (me - 1, loc, true));
                    }
                    let rw = sh.r_who[w].load(Relaxed);
                    if rw != 0 {
                        let rwhen = sh.r_when[w].load(Relaxed);
                        if !both_atomic(rwhen) && unordered(rw, rwhen, me, when, lpw, n) && rw != me
                        {
                            let other = if rw == MANY { me } else { rw };
                            let rl = sh.r_loc[w].load(Relaxed);
                            raced = self.race(obj, w, (other - 1, rl, false), (me - 1, loc, true));
                        }
                    }
                }
                let t = combine(raced, t);
                if wmask == !0 {
                    b.vals[w].store(bits, Relaxed);
                    b.taint[w].store(t, Relaxed);
                } else {
                    let _ = b.vals[w].fetch_update(Relaxed, Relaxed, |old| {
                        Some((old & !wmask) | (bits & wmask))
                    });
                    let _ = b.taint[w].fetch_update(Relaxed, Relaxed, |old| Some(combine(t, old)));
                }
            }
        }
    }

    fn race(&mut self, obj: u32, w: usize, a: (u32, LocId, bool), b: (u32, LocId, bool)) -> u32 {
        // The raced word's final value depends on the order: taint it.
        let p = self.prov(Cause::Race, b.1, 0);
        let o = &self.k.objects[obj as usize];
        match space(o.storage) {
            Space::Shared => {
                let i = o.base as usize + w;
                self.staint[i] = combine(self.staint[i], p);
            }
            Space::Global => {
                if let Some(buf) = self.d.buffers[obj as usize].as_ref() {
                    let _ =
                        buf.taint[w].fetch_update(Relaxed, Relaxed, |old| Some(combine(old, p)));
                }
            }
            Space::Lane => {}
        }
        self.d.find(Finding::Race {
            object: obj,
            offset: (w * 4) as u32,
            a,
            b,
        });
        p
    }

    /// Reads a scalar of kind `sc` at byte `at` of `obj`: (bits, taint).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn read_scalar(
        &mut self,
        obj: u32,
        sp: Space,
        at: u32,
        sc: Scalar,
        s: usize,
        loc: LocId,
        atomic: bool,
    ) -> (u64, u32) {
        let (w, shift) = word_of(at);
        match sc.bytes() {
            8 => {
                let (lo, t0) = self.read_word(obj, sp, w, s, loc, atomic);
                let (hi, t1) = self.read_word(obj, sp, w + 1, s, loc, atomic);
                (lo as u64 | (hi as u64) << 32, combine(t0, t1))
            }
            4 => {
                let (v, t) = self.read_word(obj, sp, w, s, loc, atomic);
                (v as u64, t)
            }
            k => {
                let (v, t) = self.read_word(obj, sp, w, s, loc, atomic);
                ((v >> shift) as u64 & mask(k as u8 * 8), t)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn write_scalar(
        &mut self,
        obj: u32,
        sp: Space,
        at: u32,
        sc: Scalar,
        s: usize,
        v: u64,
        t: u32,
        loc: LocId,
        atomic: bool,
    ) {
        let (w, shift) = word_of(at);
        match sc.bytes() {
            8 => {
                self.write_word(obj, sp, w, s, v as u32, !0, t, loc, atomic);
                self.write_word(obj, sp, w + 1, s, (v >> 32) as u32, !0, t, loc, atomic);
            }
            4 => self.write_word(obj, sp, w, s, v as u32, !0, t, loc, atomic),
            k => {
                let m = (mask(k as u8 * 8) as u32) << shift;
                self.write_word(obj, sp, w, s, (v as u32) << shift, m, t, loc, atomic)
            }
        }
    }

    /// The pointer every active lane holds, if they all hold the same defined one (the common case
    /// for variables and constant access chains), else `None`.
    fn uniform_pointer(&self, flow: &Flow, ptr: Reg) -> Option<u64> {
        if self.dirty[ptr as usize] {
            return None;
        }
        let pb = self.off[ptr as usize];
        let mut first: Option<u64> = None;
        let mut same = true;
        each_lane(&flow.set, self.n, |s| {
            let p = self.vals[pb + s];
            match first {
                None => first = Some(p),
                Some(f) => same &= f == p,
            }
        });
        if same {
            first
        } else {
            None
        }
    }

    /// `d = *ptr` with `plan`.
    pub(crate) fn load(
        &mut self,
        flow: &Flow,
        d: Reg,
        ptr: Reg,
        plan: PlanId,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let plan = &k.plans[plan as usize];
        let (lanes, n) = (self.lanes, self.n);
        let (db, pb) = (self.off[d as usize], self.off[ptr as usize]);
        // Fast path: one pointer into per-invocation memory, in bounds — a row copy per slot.
        if let Some(p) = self.uniform_pointer(flow, ptr) {
            let obj = mem::ptr_obj(p);
            let o = &k.objects[obj as usize];
            let off = mem::ptr_off(p);
            if p & OOB == 0
                && space(o.storage) == Space::Lane
                && off as u64 + plan.size as u64 <= o.size as u64
            {
                let mut any_t = false;
                for &(sc, so) in plan.slots.iter() {
                    let (w, shift) = word_of(off + so);
                    let row = (o.base as usize + w) * lanes;
                    each_lane(&flow.set, n, |s| any_t |= self.ltaint[row + s] != 0);
                    if sc.bytes() == 8 {
                        each_lane(&flow.set, n, |s| any_t |= self.ltaint[row + lanes + s] != 0);
                    }
                    let _ = shift;
                }
                if any_t {
                    self.make_dirty(d);
                }
                let td = self.dirty[d as usize];
                for (c, &(sc, so)) in plan.slots.iter().enumerate() {
                    let (w, shift) = word_of(off + so);
                    let row = (o.base as usize + w) * lanes;
                    let dr = db + c * lanes;
                    let (vals, taint, lmem, ltaint) =
                        (&mut self.vals, &mut self.taint, &self.lmem, &self.ltaint);
                    match sc.bytes() {
                        4 => each_lane(&flow.set, n, |s| {
                            vals[dr + s] = if sc == Scalar::Bool {
                                (lmem[row + s] != 0) as u64
                            } else {
                                lmem[row + s] as u64
                            };
                            if td {
                                taint[dr + s] = ltaint[row + s];
                            }
                        }),
                        8 => each_lane(&flow.set, n, |s| {
                            vals[dr + s] =
                                lmem[row + s] as u64 | (lmem[row + lanes + s] as u64) << 32;
                            if td {
                                taint[dr + s] = combine(ltaint[row + s], ltaint[row + lanes + s]);
                            }
                        }),
                        b => {
                            let m = mask(b as u8 * 8);
                            each_lane(&flow.set, n, |s| {
                                vals[dr + s] = (lmem[row + s] >> shift) as u64 & m;
                                if td {
                                    taint[dr + s] = ltaint[row + s];
                                }
                            })
                        }
                    }
                }
                return Ok(());
            }
        }
        let tp = self.dirty[ptr as usize];
        let was_dirty = self.dirty[d as usize];
        self.make_dirty(d);
        let mut any_t = tp;
        for g in 0..self.groups {
            let m = flow.set[g];
            for l in m.iter() {
                let s = g * n + l as usize;
                let p = self.vals[pb + s];
                let pt = if tp { self.taint[pb + s] } else { 0 };
                let obj = mem::ptr_obj(p);
                let off = mem::ptr_off(p);
                if pt & PROV != 0 {
                    // An undefined pointer: which memory is read is unknown.
                    for c in 0..plan.slots.len() {
                        self.vals[db + c * lanes + s] = 0;
                        self.taint[db + c * lanes + s] = pt;
                    }
                    continue;
                }
                let sp = space(k.objects[obj as usize].storage);
                let size = self.obj_size(obj);
                if p & OOB != 0 || off as u64 + plan.size as u64 > size {
                    let pr = self.oob(obj, off as u64, loc, s, false);
                    for c in 0..plan.slots.len() {
                        self.vals[db + c * lanes + s] = 0;
                        self.taint[db + c * lanes + s] = pr;
                    }
                    any_t = true;
                    continue;
                }
                for (c, &(sc, o)) in plan.slots.iter().enumerate() {
                    let (v, t) = self.read_scalar(obj, sp, off + o, sc, s, loc, false);
                    let v = if sc == Scalar::Bool {
                        (v != 0) as u64
                    } else {
                        v
                    };
                    self.vals[db + c * lanes + s] = v;
                    self.taint[db + c * lanes + s] = combine(pt, t);
                    any_t |= t != 0;
                }
            }
        }
        if !any_t && !was_dirty {
            // Nothing tainted and nothing was: every taint of `d` is zero (make_dirty zeroed the
            // rows), so the register can stay on the fast path.
            self.dirty[d as usize] = false;
        }
        Ok(())
    }

    /// `*ptr = v` with `plan`.
    pub(crate) fn store(
        &mut self,
        flow: &Flow,
        ptr: Reg,
        v: Reg,
        plan_id: PlanId,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let plan = &k.plans[plan_id as usize];
        let (lanes, n) = (self.lanes, self.n);
        let vb = self.off[v as usize];
        let tv = self.dirty[v as usize];
        // Fast path: one pointer into per-invocation memory, in bounds, no lost lane.
        if let Some(p) = self.uniform_pointer(flow, ptr) {
            let obj = mem::ptr_obj(p);
            let o = &k.objects[obj as usize];
            let off = mem::ptr_off(p);
            if p & OOB == 0
                && space(o.storage) == Space::Lane
                && o.storage != Storage::Input
                && off as u64 + plan.size as u64 <= o.size as u64
                && !self.any_lost
            {
                for (c, &(sc, so)) in plan.slots.iter().enumerate() {
                    let (w, shift) = word_of(off + so);
                    let row = (o.base as usize + w) * lanes;
                    let vr = vb + c * lanes;
                    let (vals, taint, lmem, ltaint) =
                        (&self.vals, &self.taint, &mut self.lmem, &mut self.ltaint);
                    match sc.bytes() {
                        4 => each_lane(&flow.set, n, |s| {
                            lmem[row + s] = vals[vr + s] as u32;
                            ltaint[row + s] = if tv { taint[vr + s] } else { 0 };
                        }),
                        8 => each_lane(&flow.set, n, |s| {
                            lmem[row + s] = vals[vr + s] as u32;
                            lmem[row + lanes + s] = (vals[vr + s] >> 32) as u32;
                            let t = if tv { taint[vr + s] } else { 0 };
                            ltaint[row + s] = t;
                            ltaint[row + lanes + s] = t;
                        }),
                        b => {
                            let m = (mask(b as u8 * 8) as u32) << shift;
                            each_lane(&flow.set, n, |s| {
                                lmem[row + s] =
                                    (lmem[row + s] & !m) | (((vals[vr + s] as u32) << shift) & m);
                                let t = if tv { taint[vr + s] } else { 0 };
                                ltaint[row + s] = combine(t, ltaint[row + s]);
                            })
                        }
                    }
                }
                return Ok(());
            }
        }
        self.store_from(flow, ptr, plan_id, loc, |wg, c, s| {
            let i = vb + c * lanes + s;
            (wg.vals[i], if tv { wg.taint[i] } else { 0 })
        })
    }

    /// Stores per-lane values (`vals[c * lanes + s]`, slot c) through `ptr` with `plan`.
    pub(crate) fn store_values(
        &mut self,
        flow: &Flow,
        ptr: Reg,
        plan: PlanId,
        loc: LocId,
        vals: &[u64],
        taint: &[u32],
    ) -> Result<(), SpirvError> {
        let lanes = self.lanes;
        self.store_from(flow, ptr, plan, loc, |_, c, s| {
            (vals[c * lanes + s], taint[c * lanes + s])
        })
    }

    /// Stores slot `c` of lane `s` as `value(self, c, s)` = (bits, taint) through `ptr`, lane by lane.
    fn store_from(
        &mut self,
        flow: &Flow,
        ptr: Reg,
        plan: PlanId,
        loc: LocId,
        value: impl Fn(&Self, usize, usize) -> (u64, u32),
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let plan = &k.plans[plan as usize];
        let n = self.n;
        let pb = self.off[ptr as usize];
        let tp = self.dirty[ptr as usize];
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * n + l as usize;
                let p = self.vals[pb + s];
                let pt = if tp { self.taint[pb + s] } else { 0 };
                let obj = mem::ptr_obj(p);
                let off = mem::ptr_off(p);
                let o = &k.objects[obj as usize];
                if o.read_only && o.storage != Storage::StorageBuffer {
                    return Err(SpirvError::malformed(format!(
                        "a store to the read-only {} variable {}",
                        o.storage.name(),
                        o.name
                    )));
                }
                let sp = space(o.storage);
                if pt & PROV != 0 {
                    self.store_through_undefined_pointer(obj, sp, pt, loc);
                    continue;
                }
                if p & OOB != 0 || off as u64 + plan.size as u64 > self.obj_size(obj) {
                    self.oob(obj, off as u64, loc, s, true);
                    continue;
                }
                for (c, &(sc, o)) in plan.slots.iter().enumerate() {
                    let (v, vt) = value(self, c, s);
                    // What a lost invocation writes is not pinned down; its own variables too where
                    // its lost path can end (RunConfig::lost_paths_end) and they be read again.
                    let t0 = combine(pt, vt);
                    let mut t = if sp == Space::Lane && !self.d.cfg.lost_paths_end {
                        t0
                    } else {
                        self.write_taint(s, t0)
                    };
                    // Chains name the stores that move a value between invocations (shared memory
                    // and buffers); a store to the invocation's own variables is not a link.
                    if t & PROV != 0 && sp != Space::Lane {
                        t = self.stored_link(t, loc);
                    }
                    self.write_scalar(obj, sp, off + o, sc, s, v, t, loc, false);
                }
            }
        }
        Ok(())
    }

    /// A provenance link "stored here" in front of `t`'s cause.
    pub(crate) fn stored_link(&mut self, t: u32, loc: LocId) -> u32 {
        let p = self.prov(Cause::Stored, loc, t & PROV);
        p | (t & INEXACT)
    }

    fn store_through_undefined_pointer(&mut self, obj: u32, sp: Space, pt: u32, loc: LocId) {
        let p = self.prov(Cause::UndefinedPointer, loc, pt);
        let o = &self.k.objects[obj as usize];
        match sp {
            Space::Lane => {
                for w in o.base..o.base + o.words {
                    let row = w as usize * self.lanes;
                    for s in 0..self.lanes {
                        self.ltaint[row + s] = combine(p, self.ltaint[row + s]);
                    }
                }
            }
            Space::Shared => {
                for w in o.base..o.base + o.words {
                    self.staint[w as usize] = combine(p, self.staint[w as usize]);
                }
            }
            Space::Global => {
                if let Some(b) = self.d.buffers[obj as usize].as_ref() {
                    for t in &b.taint {
                        let _ = t.fetch_update(Relaxed, Relaxed, |old| Some(combine(p, old)));
                    }
                }
            }
        }
    }

    /// An atomic operation, lane by lane in lane order (one order a device may pick; the values
    /// returned are tagged order-dependent).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn atomic(
        &mut self,
        flow: &Flow,
        op: AtomicOp,
        sc: Scalar,
        d: Option<Reg>,
        ptr: Reg,
        v: Option<Reg>,
        cmp: Option<Reg>,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let (lanes, n) = (self.lanes, self.n);
        let _ = lanes;
        let pb = self.off[ptr as usize];
        let order = self.prov(Cause::AtomicOrder, loc, 0);
        if let Some(d) = d {
            self.make_dirty(d);
        }
        let w = sc.bits() as u8;
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * n + l as usize;
                let p = self.vals[pb + s];
                let pt = if self.dirty[ptr as usize] {
                    self.taint[pb + s]
                } else {
                    0
                };
                let obj = mem::ptr_obj(p);
                let off = mem::ptr_off(p);
                let sp = space(k.objects[obj as usize].storage);
                let arg = |wg: &Self, r: Option<Reg>| -> (u64, u32) {
                    match r {
                        Some(r) => {
                            let i = wg.off[r as usize] + s;
                            (
                                wg.vals[i],
                                if wg.dirty[r as usize] { wg.taint[i] } else { 0 },
                            )
                        }
                        None => (0, 0),
                    }
                };
                let (x, tx) = arg(self, v);
                let (c, tc) = arg(self, cmp);
                if pt & PROV != 0 {
                    self.store_through_undefined_pointer(obj, sp, pt, loc);
                    if let Some(d) = d {
                        let i = self.off[d as usize] + s;
                        self.taint[i] = pt;
                    }
                    continue;
                }
                if p & OOB != 0 || off as u64 + sc.bytes() as u64 > self.obj_size(obj) {
                    let pr = self.oob(obj, off as u64, loc, s, op != AtomicOp::Load);
                    if let Some(d) = d {
                        let i = self.off[d as usize] + s;
                        self.taint[i] = pr;
                    }
                    continue;
                }
                // Workgroups run on several threads: a buffer atomic's read-modify-write holds the
                // lock of its 8-byte stripe (shared memory belongs to one workgroup, one thread).
                let _guard = if sp == Space::Global {
                    Some(crate::spirv::exec::atomic_lock(obj, off))
                } else {
                    None
                };
                let (old, told) = self.read_scalar(obj, sp, off, sc, s, loc, true);
                let m = mask(w);
                let new = match op {
                    AtomicOp::Load => None,
                    AtomicOp::Store | AtomicOp::Exchange => Some(x & m),
                    AtomicOp::CompareExchange => Some(if old & m == c & m { x & m } else { old }),
                    AtomicOp::Inc => Some(old.wrapping_add(1) & m),
                    AtomicOp::Dec => Some(old.wrapping_sub(1) & m),
                    AtomicOp::Add => Some(old.wrapping_add(x) & m),
                    AtomicOp::Sub => Some(old.wrapping_sub(x) & m),
                    AtomicOp::SMin => Some(if scalar::sext(w, x) < scalar::sext(w, old) {
                        x & m
                    } else {
                        old
                    }),
                    AtomicOp::UMin => Some((x & m).min(old)),
                    AtomicOp::SMax => Some(if scalar::sext(w, x) > scalar::sext(w, old) {
                        x & m
                    } else {
                        old
                    }),
                    AtomicOp::UMax => Some((x & m).max(old)),
                    AtomicOp::And => Some(old & x),
                    AtomicOp::Or => Some(old | x),
                    AtomicOp::Xor => Some(old ^ x),
                    AtomicOp::FAdd => Some(scalar::float_bin(FloatBin::Add, w, old, x)),
                    AtomicOp::FMin | AtomicOp::FMax => {
                        let (a, b) = (scalar::f_get(w, old), scalar::f_get(w, x));
                        let r = if op == AtomicOp::FMin {
                            a.min(b)
                        } else {
                            a.max(b)
                        };
                        Some(scalar::f_put(w, r))
                    }
                };
                if let Some(nv) = new {
                    // The final value: order-independent for commuting integer ops; otherwise it
                    // depends on which invocation went last; float adds round in order.
                    let mut t = combine(told, combine(tx, tc));
                    if !op.commutes() && op != AtomicOp::FAdd {
                        t = combine(t, order);
                    }
                    if op == AtomicOp::FAdd {
                        t |= INEXACT;
                    }
                    let t = self.write_taint(s, t);
                    let t = if t & PROV != 0 && t & PROV != order {
                        self.stored_link(t, loc)
                    } else {
                        t
                    };
                    self.write_scalar(obj, sp, off, sc, s, nv, t, loc, true);
                }
                if let Some(d) = d {
                    let i = self.off[d as usize] + s;
                    self.vals[i] = old;
                    self.taint[i] = combine(told, order);
                }
            }
        }
        Ok(())
    }

    /// Fills a built-in input variable for every lane of the workgroup: the subgroup built-ins
    /// from the model (one definition), the ids from the workgroup layout.
    pub(crate) fn fill_builtin(&mut self, obj: ObjectId) -> Result<(), SpirvError> {
        let k = self.k;
        let o = &k.objects[obj as usize];
        let Some(b) = o.builtin else {
            return Ok(());
        };
        let (lanes, n) = (self.lanes, self.n);
        let size = self.d.cfg.size;
        let wgs = self.d.cfg.workgroups;
        let ls = k.local_size;
        let subgroups = self.d.map.subgroups() as u32;
        // Per lane: the value's u32 components.
        let put = |wg: &mut Self, s: usize, comps: &[u32]| {
            for (c, v) in comps.iter().enumerate() {
                let i = (o.base as usize + c) * lanes + s;
                wg.lmem[i] = *v;
                wg.ltaint[i] = 0;
            }
        };
        // The subgroup built-ins a model op defines, evaluated on a full subgroup.
        let from_model = |op: Op| -> Result<Vec<Outcome>, SpirvError> {
            let call = OpCall::new(info(op), size, Default::default())
                .map_err(|e| SpirvError::Setup(e.to_string()))?;
            evaluate(&call, size.full_mask(), &[]).map_err(|e| SpirvError::Setup(e.to_string()))
        };
        let model_vals = match b {
            BuiltIn::SubgroupSize => Some(from_model(Op::SubgroupSize)?),
            BuiltIn::SubgroupLocalInvocationId => Some(from_model(Op::InvocationId)?),
            BuiltIn::SubgroupEqMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Eq))?),
            BuiltIn::SubgroupGeMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Ge))?),
            BuiltIn::SubgroupGtMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Gt))?),
            BuiltIn::SubgroupLeMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Le))?),
            BuiltIn::SubgroupLtMask => Some(from_model(Op::LaneMask(crate::model::MaskKind::Lt))?),
            _ => None,
        };
        for g in 0..self.groups {
            for l in 0..n {
                let s = g * n + l;
                let inv = self.d.map.invocation(g as u32, l as u32);
                let local = inv
                    .map(|i| self.d.map.shape().local_id(i))
                    .unwrap_or([0; 3]);
                let comps: Vec<u32> = match b {
                    BuiltIn::LocalInvocationId => local.to_vec(),
                    BuiltIn::LocalInvocationIndex => vec![inv.unwrap_or(0)],
                    BuiltIn::WorkgroupId => self.wg_id.to_vec(),
                    BuiltIn::NumWorkgroups => wgs.to_vec(),
                    BuiltIn::GlobalInvocationId => {
                        (0..3).map(|a| self.wg_id[a] * ls[a] + local[a]).collect()
                    }
                    BuiltIn::WorkgroupSize => ls.to_vec(),
                    BuiltIn::NumSubgroups => vec![subgroups],
                    BuiltIn::SubgroupId => vec![g as u32],
                    _ => match &model_vals {
                        Some(v) => match v[l] {
                            Outcome::Defined(x) => x.bits().iter().map(|b| *b as u32).collect(),
                            _ => vec![0],
                        },
                        None => {
                            return Err(SpirvError::unsupported(format!(
                                "the built-in {b:?} (not a compute built-in)"
                            )))
                        }
                    },
                };
                put(self, s, &comps);
            }
        }
        let _ = LaneMask::EMPTY;
        Ok(())
    }
}
