//! Loads, stores, copies and atomics: per lane, through the lane's pointer, with bounds checks and
//! taint, every access to memory other invocations can reach passing through the race shadow and
//! happens-before of [`crate::spirv::memory`]; and the built-in inputs written at the start of a
//! workgroup.

use crate::reconverge::Flow;
use crate::spirv::atomics::AtomicAcc;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{each_lane, Finding, PastArray, RaceClass, Wg};
use crate::spirv::inst::*;
use crate::spirv::lanes::each_span;
use crate::spirv::memory::clock::{flags, Access, Now};
use crate::spirv::memory::{get_bits, get_taint, put_bits, put_taint, units, Hits, Kind, Vals};
use crate::spirv::memory::{watch, LateWhy, Ptr, Space};
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::spirv::regs::{rows3, same_on};
use crate::spirv::scalar::mask;
use crate::spirv::types::{Scalar, Storage};
use std::sync::atomic::Ordering::Relaxed;

impl<'d> Wg<'d, '_> {
    pub(super) fn obj_size(&self, obj: ObjectId) -> u64 {
        let o = &self.k.objects[obj.index()];
        match Space::of(o.storage) {
            Space::Global => self.d.view(obj).1 as u64,
            _ => o.size as u64,
        }
    }

    /// An access through pointer `p` outside its object (at byte `offset`: `p`'s own offset, or
    /// the one the access reaches past the end), or through an index past an array of
    /// descriptors: the finding, and the cause of what a read returns.
    pub(super) fn oob(&mut self, p: Ptr, offset: u64, loc: LocId, s: usize, write: bool) -> Taint {
        let obj = p.obj();
        let o = &self.k.objects[obj.index()];
        let past_array = p.past_array_index().map(|index| PastArray {
            index,
            count: o.descriptors,
        });
        let cause = match past_array {
            Some(pa) => Cause::PastArray {
                element: crate::spirv::report::element_name(&o.name, pa.index),
                count: pa.count,
            },
            None => Cause::OutOfBounds {
                var: o.name.clone(),
                offset,
                size: self.obj_size(obj),
            },
        };
        self.d.find(Finding::OutOfBounds {
            object: obj,
            offset: if past_array.is_some() { 0 } else { offset },
            past_array,
            loc,
            slot: self.who(s) - 1,
            write,
        });
        self.prov(cause, loc, Taint::NONE)
    }

    /// Where `obj`'s bytes start in its buffer's memory (a descriptor over part of a buffer that
    /// others see too); 0 outside buffer memory.
    #[inline(always)]
    pub(crate) fn view_base(&self, obj: ObjectId, sp: Space) -> u32 {
        if sp == Space::Global {
            self.d.view(obj).0
        } else {
            0
        }
    }

    /// Is `obj` a storage image or texel buffer (memory of the image family)?
    #[inline(always)]
    pub(super) fn is_image(&self, obj: ObjectId) -> bool {
        self.k
            .objects
            .get(obj.index())
            .is_some_and(|o| o.storage == Storage::Image)
    }

    /// The bytes per unit of `obj` in its space (buffers keep their own).
    #[inline(always)]
    pub(super) fn unit_of(&self, obj: ObjectId, sp: Space) -> u32 {
        match sp {
            Space::Global => self.d.buffers[obj.index()]
                .as_ref()
                .map(|b| b.unit)
                .unwrap_or(4),
            _ => self.k.objects[obj.index()].unit,
        }
    }

    /// The raw bits of `bytes` at byte `at` of `obj`, as lane `s` sees them (no shadow, no taint).
    #[inline(always)]
    pub(super) fn raw_get(&self, obj: ObjectId, sp: Space, at: u32, bytes: u32, s: usize) -> u64 {
        let o = &self.k.objects[obj.index()];
        match sp {
            Space::Lane => {
                let (base, lanes) = (o.base as usize, self.lanes);
                get_bits(at, bytes, |w| self.lmem[(base + w) * lanes + s])
            }
            Space::Shared => {
                let base = o.base as usize;
                get_bits(at, bytes, |w| self.smem[base + w])
            }
            Space::Global => match self.d.buffers[obj.index()].as_ref() {
                Some(b) => b.get(at, bytes),
                None => 0,
            },
        }
    }

    /// The taint of `bytes` at byte `at` of `obj` for lane `s`.
    #[inline(always)]
    pub(super) fn raw_taint(
        &self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        bytes: u32,
        s: usize,
    ) -> Taint {
        let o = &self.k.objects[obj.index()];
        match sp {
            Space::Lane => {
                let (tb, lanes) = (o.tbase as usize, self.lanes);
                get_taint(units(at, bytes, o.unit), |u| {
                    self.ltaint[(tb + u) * lanes + s]
                })
            }
            Space::Shared => {
                let tb = o.tbase as usize;
                get_taint(units(at, bytes, o.unit), |u| self.staint[tb + u])
            }
            Space::Global => match self.d.buffers[obj.index()].as_ref() {
                Some(b) => b.get_taint(at, bytes),
                None => Taint::NONE,
            },
        }
    }

    /// Writes bits and taint of `bytes` at byte `at` of `obj` for lane `s` (no shadow).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn raw_put(
        &mut self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        bytes: u32,
        s: usize,
        v: u64,
        t: Taint,
    ) {
        let o = &self.k.objects[obj.index()];
        match sp {
            Space::Lane => {
                let (base, tb, lanes) = (o.base as usize, o.tbase as usize, self.lanes);
                let lmem = &mut self.lmem;
                put_bits(at, bytes, v, |w, bits, m| {
                    let i = (base + w) * lanes + s;
                    lmem[i] = (lmem[i] & !m) | bits;
                });
                let lt = &mut self.ltaint;
                let get = |u: usize| lt[(tb + u) * lanes + s];
                let mut sets = Vec::new();
                put_taint(at, bytes, o.unit, t, get, |u, x| sets.push((u, x)));
                for (u, x) in sets {
                    self.ltaint[(tb + u) * lanes + s] = x;
                }
            }
            Space::Shared => {
                let (base, tb) = (o.base as usize, o.tbase as usize);
                let smem = &mut self.smem;
                put_bits(at, bytes, v, |w, bits, m| {
                    smem[base + w] = (smem[base + w] & !m) | bits;
                });
                let st = &mut self.staint;
                let mut sets = Vec::new();
                put_taint(
                    at,
                    bytes,
                    o.unit,
                    t,
                    |u| st[tb + u],
                    |u, x| sets.push((u, x)),
                );
                for (u, x) in sets {
                    self.staint[tb + u] = x;
                }
            }
            Space::Global => {
                if let Some(b) = self.d.buffers[obj.index()].as_ref() {
                    b.put(at, bytes, v);
                    b.put_taint(at, bytes, t);
                }
            }
        }
    }

    /// Records the last writer of a buffer access (for reports).
    #[inline(always)]
    pub(super) fn note_writer(
        &self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        bytes: u32,
        s: usize,
        loc: LocId,
    ) {
        if sp == Space::Global
            && let Some(b) = self.d.buffers[obj.index()].as_ref()
        {
            b.wrote(units(at, bytes, b.unit), self.who(s), loc);
            if self.d.choices.is_some() {
                b.wrote_first(units(at, bytes, b.unit), self.who(s));
            }
        }
    }

    /// The race shadow and happens-before around one access of lane `s` to `bytes` at byte `at` of
    /// `obj` (shared or global memory): checks it against earlier accesses and records it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hook(
        &mut self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        bytes: u32,
        s: usize,
        loc: LocId,
        kind: Kind,
        atomic: Option<AtomicAcc>,
        vals: Vals,
    ) -> Hits {
        let same = vals.same;
        let Some(f) = sp.family(self.is_image(obj)) else {
            return Hits::default();
        };
        if !self.d.cfg.race_checks {
            // Race checks off (`RunConfig::race_checks`): no shadow, nothing found.
            return Hits::default();
        }
        let unit = self.unit_of(obj, sp);
        let us = units(at, bytes, unit);
        let who = self.who(s);
        if sp == Space::Global && !self.d.ordered() {
            // A parallel run: only find out whether another invocation touches what this one
            // writes (or wrote what it reads); the ordered run checks it in full.
            if let Some(b) = self.d.buffers[obj.index()].as_ref()
                && b.writable
                && !match atomic {
                    Some(a) if a.free != 0 => b.claim_commuting(us, a.free),
                    _ => b.claim(us, who, kind != Kind::Read),
                }
            {
                self.d.need_ordered();
            }
            return Hits::default();
        }
        let g = s / self.n;
        let mut fl = 0;
        if let Some(a) = atomic {
            fl |= flags::ATOMIC
                | (a.scope as u32) << flags::SCOPE_SHIFT
                | (a.class & 15) << flags::CLASS_SHIFT;
        }
        if same {
            fl |= flags::SAME;
        }
        let side = if kind == Kind::Read {
            crate::spirv::inst::private_side::READ
        } else {
            crate::spirv::inst::private_side::WRITE
        };
        if atomic.is_none()
            && self
                .k
                .private
                .get(loc.index())
                .is_some_and(|p| p & side != 0)
        {
            fl |= flags::PRIVATE;
        }
        let me = Access {
            who,
            loc,
            epoch: self.wg_epoch[f as usize],
            sg: self.sg_epoch[g][f as usize],
            clock: self.clock[s],
            flags: fl,
            bars: self.bars,
        };
        let now = Now {
            who,
            wg: self.wg_linear,
            sg_index: g as u32,
            lanes_per_wg: self.d.lanes_per_wg,
            sg_lanes: self.n as u32,
            epoch: me.epoch,
            sg: me.sg,
            knows: self.knows[s].as_deref(),
        };
        let scope = atomic.map(|a| a.scope);
        let mut hits = Hits {
            interval: me.interval(),
            ..Hits::default()
        };
        let shadow = match sp {
            Space::Shared => Some(&mut self.sshadow),
            Space::Global => {
                let owner = self.d.owner_of(obj).index();
                self.gshadow.get_mut(owner).and_then(|x| x.as_mut())
            }
            Space::Lane => None,
        };
        let Some(shadow) = shadow else {
            return hits;
        };
        let tb = if sp == Space::Shared {
            self.k.objects[obj.index()].tbase as usize
        } else {
            0
        };
        for u in us.clone() {
            shadow.access_into(tb + u, kind, f, &now, me, scope, &mut hits);
        }
        // Units raced on are watched in the next run; there, a write finds every read it races
        // with ([`crate::spirv::memory::watch`]).
        let space = if sp == Space::Shared {
            watch::SHARED
        } else {
            self.d.owner_of(obj).index() as u32
        };
        if hits.race.is_some() && us.len() <= 64 {
            for u in us.clone() {
                self.d.watch_unit((space, (tb + u) as u32));
            }
        }
        if !self.d.any_watch.load(Relaxed) {
            return hits;
        }
        let d = self.d;
        let access = watch::Accessing {
            me,
            now: &now,
            f,
            scope,
            obj,
            at,
            writes: kind != Kind::Read,
            vals,
        };
        let raced = self
            .rlog
            .access(|k| d.watched(k), (space, tb, us, unit), &access);
        for x in raced {
            let (r, private, same, u) = x;
            // The pair the shadow found is reported by the access's own path.
            let shadow_found = hits
                .race
                .is_some_and(|(o, _)| o.who == r.acc.who && o.loc == r.acc.loc);
            if !shadow_found {
                self.race(r.obj, u * unit, r.acc, false, s, loc, true, (same, private));
            }
            if !same {
                self.d.mark_late(watch::late_key(&x), LateWhy::Race);
            }
        }
        hits
    }

    /// Reports a race found by an access (`b`: this one) and returns the taint it gives the value
    /// read or the memory written: none when both sides leave the same value (`same`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn race(
        &mut self,
        obj: ObjectId,
        at: u32,
        other: Access,
        other_wrote: bool,
        s: usize,
        loc: LocId,
        wrote: bool,
        (same, private): (bool, bool),
    ) -> Taint {
        let class = if same {
            RaceClass::SameValue
        } else {
            RaceClass::Value
        };
        let same_wg = (other.who - 1) / self.d.lanes_per_wg == self.wg_linear;
        self.d.find(Finding::Race {
            object: obj,
            // named from the start of what `obj` sees (a view of a shared buffer)
            offset: at.saturating_sub(self.d.view(obj).0),
            a: (other.who - 1, other.loc, other_wrote),
            b: (self.who(s) - 1, loc, wrote),
            class,
            fence_missing: !private && same_wg && other.bars != self.bars,
            private,
        });
        if same {
            Taint::NONE
        } else {
            self.prov(Cause::Race, loc, Taint::NONE)
        }
    }

    /// Loads a scalar of kind `sc` at byte `at` of `obj` for lane `s`: (bits, taint).
    #[inline(always)]
    pub(crate) fn read_scalar(
        &mut self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        sc: Scalar,
        s: usize,
        loc: LocId,
    ) -> (u64, Taint) {
        let bytes = sc.bytes();
        if sp == Space::Global && !self.d.ordered() {
            // A parallel run: the value, and (writable buffers) who reads it.
            let Some(b) = self.d.buffers[obj.index()].as_ref() else {
                return (0, Taint::NONE);
            };
            // No read of a buffer is found late in a parallel run: a late read is found by the
            // race shadow, which only the ordered run keeps for buffers, and a dispatch once run
            // in order stays in order ([`Dispatch::run`]).
            let (v, t) = (b.get(at, bytes), b.get_taint(at, bytes));
            if b.writable && !b.claim(units(at, bytes, b.unit), self.who(s), false) {
                self.d.need_ordered();
            }
            return (v, t);
        }
        let v = self.raw_get(obj, sp, at, bytes, s);
        let mut t = self.raw_taint(obj, sp, at, bytes, s);
        if sp == Space::Lane {
            return (v, t);
        }
        let vals = Vals {
            read: Some(v),
            ..Vals::default()
        };
        let hits = self.hook(obj, sp, at, bytes, s, loc, Kind::Read, None, vals);
        if let Some((other, _)) = hits.race {
            let same = other.flags & flags::SAME != 0;
            let r = self.race(obj, at, other, true, s, loc, false, (same, hits.private));
            t = combine(r, t);
        }
        if self
            .d
            .late_read(
                loc,
                self.who(s),
                obj,
                at / self.unit_of(obj, sp),
                hits.interval,
            )
            .is_some()
        {
            // A later write, unordered with this read, changed what it read (found in an earlier
            // run of this dispatch).
            t = combine(self.prov(Cause::Race, loc, Taint::NONE), t);
        }
        (v, t)
    }

    /// Writes a scalar of kind `sc` at byte `at` of `obj` for lane `s`, value `v` with taint `t`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn write_scalar(
        &mut self,
        obj: ObjectId,
        sp: Space,
        at: u32,
        sc: Scalar,
        s: usize,
        v: u64,
        t: Taint,
        loc: LocId,
    ) {
        let bytes = sc.bytes();
        if sp == Space::Lane {
            self.raw_put(obj, sp, at, bytes, s, v, t);
            return;
        }
        let m = if bytes >= 8 {
            !0
        } else {
            mask(bytes as u8 * 8)
        };
        let same = self.raw_get(obj, sp, at, bytes, s) == v & m;
        let vals = Vals {
            same,
            read: None,
            write: Some(v & m),
        };
        let hits = self.hook(obj, sp, at, bytes, s, loc, Kind::Write, None, vals);
        let mut t = t;
        match hits.race {
            Some((other, true)) => {
                t = combine(
                    self.race(obj, at, other, true, s, loc, true, (same, hits.private)),
                    t,
                );
            }
            // An earlier read, unordered with this write: its value was one of two. Reported
            // here; the next run, which watches the unit, finds it and every other read this
            // write could have changed ([`crate::spirv::memory::watch`]) and marks them late.
            Some((other, false)) => {
                self.race(obj, at, other, false, s, loc, true, (same, hits.private));
            }
            None => {}
        }
        self.raw_put(obj, sp, at, bytes, s, v, t);
        self.note_writer(obj, sp, at, bytes, s, loc);
    }

    /// The pointer every active lane holds, if they all hold the same defined one (the common case
    /// for variables and constant access chains), else `None`.
    fn uniform_pointer(&self, flow: &Flow, ptr: Reg) -> Option<Ptr> {
        if self.regs.dirty(ptr) {
            return None;
        }
        let pb = self.regs.base(ptr);
        if self.consts[ptr.index()] {
            // A constant (a variable, a folded access chain): one pointer in every lane.
            return flow
                .set
                .iter()
                .any(|m| m.0 != 0)
                .then(|| Ptr::from_bits(self.regs.vals[pb]));
        }
        same_on(&flow.set, self.n, &self.regs.vals[pb..pb + self.lanes]).map(Ptr::from_bits)
    }

    /// The pointer register `ptr` holds at index `i` (its row's lane), and that value's taint.
    #[inline(always)]
    pub(crate) fn lane_pointer(&self, ptr: Reg, i: usize) -> (Ptr, Taint) {
        (
            Ptr::from_bits(self.regs.vals[i]),
            self.regs.taint_at(ptr, i),
        )
    }

    /// The buffer every active lane's pointer points into, in a parallel run, where every active
    /// lane's pointer is defined, into that one buffer (a `Global` object with a bound buffer of
    /// 32-bit units), word-aligned and in bounds, and the plan is of 32-bit scalars: the object,
    /// its buffer and where its bytes start there. `None` where any of that does not hold (the
    /// lane-by-lane path decides).
    fn one_buffer_words(
        &self,
        flow: &Flow,
        ptr: Reg,
        plan: &Plan,
    ) -> Option<(ObjectId, &'d crate::spirv::memory::Buffer, u32)> {
        if self.regs.dirty(ptr) || self.d.ordered() {
            return None;
        }
        if !plan
            .slots
            .iter()
            .all(|&(sc, so)| sc.bytes() == 4 && sc != Scalar::Bool && so % 4 == 0)
        {
            return None;
        }
        let (lanes, n) = (self.lanes, self.n);
        let pb = self.regs.base(ptr);
        let prow = &self.regs.vals[pb..pb + lanes];
        let first = flow
            .set
            .iter()
            .enumerate()
            .find(|(_, m)| m.0 != 0)
            .map(|(g, m)| Ptr::from_bits(prow[g * n + m.0.trailing_zeros() as usize]))?;
        let obj = first.obj();
        if Space::of(self.k.objects[obj.index()].storage) != Space::Global {
            return None;
        }
        let d = self.d;
        let b = d.buffers[obj.index()].as_ref()?;
        if b.unit != 4 {
            return None;
        }
        let size = self.obj_size(obj);
        // Every lane: the same object, in bounds, aligned (`&`, not `&&`: one loop without a
        // branch per lane, which the compiler vectorises).
        let mut ok = true;
        each_span(&flow.set, n, |r| {
            for &bits in &prow[r] {
                let p = Ptr::from_bits(bits);
                ok &= (p.obj() == obj)
                    & !p.oob()
                    & p.off().is_multiple_of(4)
                    & (p.off() as u64 + plan.size as u64 <= size);
            }
        });
        ok.then(|| (obj, &**b, self.view_base(obj, Space::Global)))
    }

    /// [`Wg::load`] from a buffer no invocation of the dispatch writes ([`Wg::one_buffer_words`]):
    /// the lane-by-lane path's result (the words and their taints; nothing to record in a shadow;
    /// no late read to find) in one loop per slot. `false` (nothing done) otherwise.
    fn load_read_only_buffer(&mut self, flow: &Flow, d: Reg, ptr: Reg, plan: &Plan) -> bool {
        if self.d.any_late.load(Relaxed) {
            return false;
        }
        let Some((_, b, base)) = self.one_buffer_words(flow, ptr, plan) else {
            return false;
        };
        if b.writable {
            return false;
        }
        let (lanes, n) = (self.lanes, self.n);
        let (pb, db) = (self.regs.base(ptr), self.regs.base(d));
        if pb + lanes > db && db + plan.slots.len() * lanes > pb {
            return false;
        }
        let was_dirty = self.regs.dirty(d);
        self.regs.make_dirty(d);
        let mut any_t = false;
        for (c, &(_, so)) in plan.slots.iter().enumerate() {
            let dr = db + c * lanes;
            let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
            let trow = &mut taint[dr..dr + lanes];
            let (vd, pv, _) = rows3(vals, dr, pb, pb, lanes).expect("registers apart");
            each_span(&flow.set, n, |r| {
                for ((d, t), &p) in vd[r.clone()]
                    .iter_mut()
                    .zip(&mut trow[r.clone()])
                    .zip(&pv[r])
                {
                    let w = ((Ptr::from_bits(p).off() + base + so) / 4) as usize;
                    *d = b.vals[w].load(Relaxed) as u64;
                    *t = Taint::from_bits(b.taint[w].load(Relaxed));
                    any_t |= !t.is_none();
                }
            });
        }
        if !any_t && !was_dirty {
            self.regs.set_clean(d);
        }
        true
    }

    /// [`Wg::store`] into a buffer the shader may write ([`Wg::one_buffer_words`]): what the
    /// lane-by-lane path does there in a parallel run — the store's taint (a lost lane's, a
    /// "stored here" link), the parallel run's claim on each unit (the ordered run keeps the full
    /// shadow), the word and its taint, the last (and first) writer — lane by lane in the same
    /// order, without its per-lane dispatch. `false` (nothing done) otherwise.
    fn store_buffer_words(
        &mut self,
        flow: &Flow,
        ptr: Reg,
        v: Reg,
        plan: &Plan,
        loc: LocId,
    ) -> bool {
        let Some((obj, b, base)) = self.one_buffer_words(flow, ptr, plan) else {
            return false;
        };
        if !b.writable || self.k.objects[obj.index()].refuses_write("").is_some() {
            return false;
        }
        let (lanes, n) = (self.lanes, self.n);
        let (pb, vb, tv) = (self.regs.base(ptr), self.regs.base(v), self.regs.dirty(v));
        let (checks, firsts) = (self.d.cfg.race_checks, self.d.choices.is_some());
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * n + l as usize;
                let at = Ptr::from_bits(self.regs.vals[pb + s]).off() + base;
                let who = self.who(s);
                for (c, &(_, so)) in plan.slots.iter().enumerate() {
                    let i = vb + c * lanes + s;
                    let vt = if tv { self.regs.taint[i] } else { Taint::NONE };
                    let mut t = self.write_taint(s, vt);
                    if t.has_prov() {
                        t = self.stored_link(t, loc);
                    }
                    let u = ((at + so) / 4) as usize;
                    if checks && !b.claim(u..u + 1, who, true) {
                        self.d.need_ordered();
                    }
                    b.vals[u].store(self.regs.vals[i] as u32, Relaxed);
                    b.taint[u].store(t.bits(), Relaxed);
                    b.wrote(u..u + 1, who, loc);
                    if firsts {
                        b.wrote_first(u..u + 1, who);
                    }
                }
            }
        }
        true
    }

    /// [`Wg::load`] through one pointer (the same in every active lane) into per-invocation memory
    /// of word units, in bounds: a row copy per slot. `false` (nothing done) otherwise.
    fn load_lane_words(&mut self, flow: &Flow, d: Reg, ptr: Reg, plan: &Plan) -> bool {
        let k = self.k;
        let (lanes, n) = (self.lanes, self.n);
        let db = self.regs.base(d);
        if let Some(p) = self.uniform_pointer(flow, ptr) {
            let obj = p.obj();
            let o = &k.objects[obj.index()];
            let off = p.off();
            if !p.oob()
                && Space::of(o.storage) == Space::Lane
                && o.unit == 4
                && off.is_multiple_of(4)
                && off as u64 + plan.size as u64 <= o.size as u64
                && plan
                    .slots
                    .iter()
                    .all(|&(sc, so)| sc.bytes() >= 4 && so % 4 == 0)
            {
                // A clean register stays clean where the words read carry no taint (a register
                // already dirty takes the taint rows as they are: no need to look first).
                if !self.regs.dirty(d) {
                    let mut any_t = false;
                    for &(sc, so) in plan.slots.iter() {
                        let w = ((off + so) / 4) as usize;
                        let row = (o.tbase as usize + w) * lanes;
                        let words = if sc.bytes() == 8 { 2 } else { 1 };
                        for k in 0..words {
                            let lt = &self.ltaint[row + k * lanes..row + (k + 1) * lanes];
                            each_span(&flow.set, n, |r| {
                                any_t |= lt[r].iter().fold(false, |a, t| a | !t.is_none())
                            });
                        }
                    }
                    if any_t {
                        self.regs.make_dirty(d);
                    }
                }
                let td = self.regs.dirty(d);
                for (c, &(sc, so)) in plan.slots.iter().enumerate() {
                    let w = ((off + so) / 4) as usize;
                    let row = (o.base as usize + w) * lanes;
                    let trow = (o.tbase as usize + w) * lanes;
                    let dr = db + c * lanes;
                    let (vals, taint, lmem, ltaint) = (
                        &mut self.regs.vals,
                        &mut self.regs.taint,
                        &self.lmem,
                        &self.ltaint,
                    );
                    let (vd, lo) = (&mut vals[dr..dr + lanes], &lmem[row..row + lanes]);
                    match (sc.bytes(), sc == Scalar::Bool) {
                        (8, _) => each_span(&flow.set, n, |r| {
                            let hi = &lmem[row + lanes..row + 2 * lanes];
                            for ((d, &l), &h) in
                                vd[r.clone()].iter_mut().zip(&lo[r.clone()]).zip(&hi[r])
                            {
                                *d = l as u64 | (h as u64) << 32;
                            }
                        }),
                        (_, true) => each_span(&flow.set, n, |r| {
                            for (d, &l) in vd[r.clone()].iter_mut().zip(&lo[r]) {
                                *d = (l != 0) as u64;
                            }
                        }),
                        _ => each_span(&flow.set, n, |r| {
                            for (d, &l) in vd[r.clone()].iter_mut().zip(&lo[r]) {
                                *d = l as u64;
                            }
                        }),
                    }
                    if td {
                        let (tdst, lt) = (&mut taint[dr..dr + lanes], &ltaint[trow..]);
                        if sc.bytes() == 8 {
                            each_lane(&flow.set, n, |s| tdst[s] = combine(lt[s], lt[lanes + s]));
                        } else {
                            each_span(&flow.set, n, |r| {
                                tdst[r.clone()].copy_from_slice(&lt[r]);
                            });
                        }
                    }
                }
                return true;
            }
        }
        false
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
        let (db, pb) = (self.regs.base(d), self.regs.base(ptr));
        if self.load_lane_words(flow, d, ptr, plan) {
            return Ok(());
        }
        if self.load_read_only_buffer(flow, d, ptr, plan) {
            return Ok(());
        }
        let tp = self.regs.dirty(ptr);
        let was_dirty = self.regs.dirty(d);
        self.regs.make_dirty(d);
        let mut any_t = tp;
        for g in 0..self.groups {
            let m = flow.set[g];
            for l in m.iter() {
                let s = g * n + l as usize;
                let p = Ptr::from_bits(self.regs.vals[pb + s]);
                let pt = if tp {
                    self.regs.taint[pb + s]
                } else {
                    Taint::NONE
                };
                let obj = p.obj();
                let off = p.off();
                if is_undefined(pt) {
                    // An undefined pointer: which memory is read is unknown.
                    for c in 0..plan.slots.len() {
                        self.regs.vals[db + c * lanes + s] = 0;
                        self.regs.taint[db + c * lanes + s] = pt;
                    }
                    continue;
                }
                let sp = Space::of(k.objects[obj.index()].storage);
                let size = self.obj_size(obj);
                if p.oob() || off as u64 + plan.size as u64 > size {
                    let pr = self.oob(p, off as u64, loc, s, false);
                    for c in 0..plan.slots.len() {
                        self.regs.vals[db + c * lanes + s] = 0;
                        self.regs.taint[db + c * lanes + s] = pr;
                    }
                    any_t = true;
                    continue;
                }
                let off = off + self.view_base(obj, sp);
                for (c, &(sc, o)) in plan.slots.iter().enumerate() {
                    let (v, t) = self.read_scalar(obj, sp, off + o, sc, s, loc);
                    let v = if sc == Scalar::Bool {
                        (v != 0) as u64
                    } else {
                        v
                    };
                    self.regs.vals[db + c * lanes + s] = v;
                    self.regs.taint[db + c * lanes + s] = combine(t, pt);
                    any_t |= !t.is_none();
                }
            }
        }
        if !any_t && !was_dirty {
            // Nothing tainted and nothing was: every taint of `d` is zero (make_dirty zeroed the
            // rows), so the register can stay on the fast path.
            self.regs.set_clean(d);
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
        let vb = self.regs.base(v);
        let tv = self.regs.dirty(v);
        // Fast path: one pointer into per-invocation memory of word units, in bounds (a lost lane's
        // own variables take what it stores as it is, as the slow path below gives them).
        if let Some(p) = self.uniform_pointer(flow, ptr) {
            let obj = p.obj();
            let o = &k.objects[obj.index()];
            let off = p.off();
            if !p.oob()
                && Space::of(o.storage) == Space::Lane
                && o.storage != Storage::Input
                && o.unit == 4
                && off.is_multiple_of(4)
                && off as u64 + plan.size as u64 <= o.size as u64
                && plan
                    .slots
                    .iter()
                    .all(|&(sc, so)| sc.bytes() >= 4 && so % 4 == 0)
            {
                for (c, &(sc, so)) in plan.slots.iter().enumerate() {
                    let w = ((off + so) / 4) as usize;
                    let row = (o.base as usize + w) * lanes;
                    let trow = (o.tbase as usize + w) * lanes;
                    let vr = vb + c * lanes;
                    let (vals, taint, lmem, ltaint) = (
                        &self.regs.vals,
                        &self.regs.taint,
                        &mut self.lmem,
                        &mut self.ltaint,
                    );
                    match sc.bytes() {
                        8 => each_lane(&flow.set, n, |s| {
                            lmem[row + s] = vals[vr + s] as u32;
                            lmem[row + lanes + s] = (vals[vr + s] >> 32) as u32;
                            let t = if tv { taint[vr + s] } else { Taint::NONE };
                            ltaint[trow + s] = t;
                            ltaint[trow + lanes + s] = t;
                        }),
                        _ => each_span(&flow.set, n, |r| {
                            let (dst, src) = (&mut lmem[row..row + lanes], &vals[vr..vr + lanes]);
                            for (m, &v) in dst[r.clone()].iter_mut().zip(&src[r.clone()]) {
                                *m = v as u32;
                            }
                            let lt = &mut ltaint[trow + r.start..trow + r.end];
                            if tv {
                                lt.copy_from_slice(&taint[vr + r.start..vr + r.end]);
                            } else {
                                lt.fill(Taint::NONE);
                            }
                        }),
                    }
                }
                return Ok(());
            }
        }
        if self.store_buffer_words(flow, ptr, v, plan, loc) {
            return Ok(());
        }
        self.store_from(flow, ptr, plan_id, loc, |wg, c, s| {
            let i = vb + c * lanes + s;
            (
                wg.regs.vals[i],
                if tv { wg.regs.taint[i] } else { Taint::NONE },
            )
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
        taint: &[Taint],
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
        value: impl Fn(&Self, usize, usize) -> (u64, Taint),
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let plan = &k.plans[plan as usize];
        let n = self.n;
        let pb = self.regs.base(ptr);
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * n + l as usize;
                let (p, pt) = self.lane_pointer(ptr, pb + s);
                let obj = p.obj();
                let off = p.off();
                let o = &k.objects[obj.index()];
                if let Some(e) = o.refuses_write("a store to") {
                    return Err(e);
                }
                let sp = Space::of(o.storage);
                if is_undefined(pt) {
                    self.store_through_undefined_pointer(obj, sp, pt, loc, s);
                    continue;
                }
                if p.oob() || off as u64 + plan.size as u64 > self.obj_size(obj) {
                    self.oob(p, off as u64, loc, s, true);
                    continue;
                }
                let off = off + self.view_base(obj, sp);
                for (c, &(sc, o)) in plan.slots.iter().enumerate() {
                    let (v, vt) = value(self, c, s);
                    // A store through an order-dependent pointer is performed: it lands where this
                    // execution's order put it, and what it stored is order-dependent there.
                    let t0 = combine(vt, pt);
                    // What a lost invocation writes to memory others see is not pinned down. Its
                    // own variables are its path's state, as its registers are: read back on the
                    // same path they hold what this path stored; where the path ends, what any of
                    // the construct's paths may store in them takes the path's taint
                    // (`Wg::end_lost_paths`), as the merge's phis do.
                    let mut t = if sp == Space::Lane {
                        t0
                    } else {
                        self.write_taint(s, t0)
                    };
                    // Chains name the stores that move a value between invocations (shared memory
                    // and buffers); a store to the invocation's own variables is not a link.
                    if t.has_prov() && sp != Space::Lane {
                        t = self.stored_link(t, loc);
                    }
                    self.write_scalar(obj, sp, off + o, sc, s, v, t, loc);
                }
            }
        }
        Ok(())
    }

    /// A provenance link "stored here" in front of `t`'s cause.
    pub(crate) fn stored_link(&mut self, t: Taint, loc: LocId) -> Taint {
        let p = self.prov(Cause::Stored, loc, t);
        p | t.flags()
    }

    /// A store of lane `s` through an undefined pointer into `obj` (its space `sp`): it may have
    /// written any unit the pointer could reach, so each of them is undefined afterwards — the
    /// lane's own copy of an invocation's variable (Function, Private), or every unit of shared
    /// memory and of every buffer the pointer may be into — and, in memory other invocations
    /// reach, the race shadow records it as a write of each unit by `s`: another invocation's
    /// access that nothing orders with it races with it (its value is one of two), whichever of
    /// them the model happens to run first.
    pub(crate) fn store_through_undefined_pointer(
        &mut self,
        obj: ObjectId,
        sp: Space,
        pt: Taint,
        loc: LocId,
        s: usize,
    ) {
        let p = self.prov(Cause::UndefinedPointer, loc, pt);
        let o = &self.k.objects[obj.index()];
        let reached: Vec<ObjectId> = match sp {
            Space::Lane => {
                for u in o.taint_units() {
                    let i = u * self.lanes + s;
                    self.ltaint[i] = combine(p, self.ltaint[i]);
                }
                return;
            }
            Space::Shared => {
                for u in o.taint_units() {
                    self.staint[u] = combine(p, self.staint[u]);
                }
                vec![obj]
            }
            // An undefined device address may be any buffer's.
            Space::Global if Some(obj) == self.k.no_buffer => {
                self.d.addresses.iter().map(|&(_, _, o)| o).collect()
            }
            // An undefined pointer into an array of descriptors may be any element's.
            Space::Global => {
                let first = obj.index() - o.element as usize;
                let count = o.descriptors.max(1) as usize;
                (first..first + count)
                    .map(|i| ObjectId::new(i as u32))
                    .collect()
            }
        };
        for r in reached {
            if sp == Space::Global {
                let Some(b) = self.d.buffers[r.index()].as_ref() else {
                    continue;
                };
                b.taint_all(p);
            }
            // The races this write finds with earlier accesses change nothing: every unit is
            // undefined already. What it records is what later unordered accesses meet.
            let (base, size) = (self.view_base(r, sp), self.obj_size(r));
            let bytes = u32::try_from(size).unwrap_or(u32::MAX);
            self.hook(
                r,
                sp,
                base,
                bytes,
                s,
                loc,
                Kind::Write,
                None,
                Vals::default(),
            );
        }
    }
}
