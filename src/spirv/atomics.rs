//! Atomics: the read-modify-write of one instruction for its lanes in one order a device may
//! pick, what each returns (order-dependent where another unordered write could have come first),
//! what it leaves (order-dependent unless the window of unordered operations provably commutes),
//! the claim a parallel run makes for commuting ones, and release/acquire through them.

use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{each_lane, Wg};
use crate::spirv::inst::*;
use crate::spirv::memory::clock::{flags, semantics, Knowledge, Scope, SyncRecord};
use crate::spirv::memory::{Hits, Kind};
use crate::spirv::memory::{LateWhy, Ptr, Space, Vals};
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::spirv::scalar::{self, mask};
use crate::spirv::types::Scalar;

/// An atomic access: its scope and the commute class of its write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtomicAcc {
    pub scope: Scope,
    pub class: u32,
    /// the claim a parallel run makes for it when its order cannot matter
    /// ([`commuting_claim`]; 0 when it can)
    pub free: u32,
}

impl Wg<'_, '_> {
    /// An atomic operation, lane by lane in lane order (one order a device may pick). A returned
    /// value is order-dependent where an unordered atomic write to the same memory could have come
    /// before it — another lane of this instruction, or another invocation without a
    /// happens-before between them; the memory left behind is order-dependent where unordered
    /// writes do not commute.
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
        scope: Scope,
        sem: u32,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let n = self.n;
        let pb = self.regs.base(ptr);
        if let Some(d) = d {
            self.regs.make_dirty(d);
        }
        let w = sc.bits() as u8;
        let writes = op != AtomicOp::Load;
        let mut acc = AtomicAcc {
            scope,
            class: op.commute_class(),
            free: 0,
        };
        // Lanes of this instruction that write the same memory: each may have gone first.
        let mut shared_target: std::collections::HashMap<u64, u32> = Default::default();
        if writes {
            each_lane(&flow.set, n, |s| {
                *shared_target
                    .entry(Ptr::from_bits(self.regs.vals[pb + s]).place())
                    .or_default() += 1;
            });
        }
        // One order a device may pick: lane order, or (other schedules) the reverse.
        let mut order: Vec<usize> = Vec::new();
        each_lane(&flow.set, n, |s| order.push(s));
        if self.d.reverse_atomics() {
            order.reverse();
        }
        {
            for s in order {
                let (p, pt) = self.lane_pointer(ptr, pb + s);
                let obj = p.obj();
                let off = p.off();
                let o = &k.objects[obj.index()];
                if let Some(e) = o.refuses_write("an atomic write to").filter(|_| writes) {
                    return Err(e);
                }
                let sp = Space::of(o.storage);
                let arg = |wg: &Self, r: Option<Reg>| -> (u64, Taint) {
                    match r {
                        Some(r) => {
                            let i = wg.regs.base(r) + s;
                            (wg.regs.vals[i], wg.regs.taint_at(r, i))
                        }
                        None => (0, Taint::NONE),
                    }
                };
                let (x, tx) = arg(self, v);
                let (c, tc) = arg(self, cmp);
                if is_undefined(pt) {
                    self.store_through_undefined_pointer(obj, sp, pt, loc, s);
                    if let Some(d) = d {
                        let i = self.regs.base(d) + s;
                        self.regs.taint[i] = pt;
                    }
                    continue;
                }
                if p.oob() || off as u64 + sc.bytes() as u64 > self.obj_size(obj) {
                    let pr = self.oob(p, off as u64, loc, s, writes);
                    if let Some(d) = d {
                        let i = self.regs.base(d) + s;
                        self.regs.taint[i] = pr;
                    }
                    continue;
                }
                let off = off + self.view_base(obj, sp);
                // Workgroups run on several threads: a buffer atomic's read-modify-write holds the
                // lock of its 8-byte stripe (shared memory belongs to one workgroup, one thread).
                let _guard = if sp == Space::Global {
                    Some(crate::spirv::exec::atomic_lock(self.d.owner_of(obj), off))
                } else {
                    None
                };
                let kind = if writes { Kind::Rmw } else { Kind::Read };
                let old = self.raw_get(obj, sp, off, sc.bytes(), s);
                let told = self.raw_taint(obj, sp, off, sc.bytes(), s);
                let new = atomic_result(op, w, old, x, c);
                // What this atomic returns: order-dependent where another unordered write could
                // have come first (the shadow found one before it, or another lane of this
                // instruction writes the same memory).
                // Nobody reads what it returns, what it writes is defined, and the final value is
                // the same whatever the order of the others like it: a parallel run need not be
                // redone in order for it.
                let clean = [tx, tc, pt, told, self.lost_taint[s]];
                acc.free = if d.is_none() && clean.iter().all(|t| t.is_none()) {
                    commuting_claim(op, sc, scope)
                } else {
                    0
                };
                let vals = Vals {
                    same: new.map(|nv| nv == old).unwrap_or(true),
                    read: (op != AtomicOp::Store).then_some(old),
                    write: new,
                };
                let hits = self.hook(obj, sp, off, sc.bytes(), s, loc, kind, Some(acc), vals);
                let crowded = writes && shared_target.get(&p.place()).copied().unwrap_or(0) > 1;
                let same = new.map(|nv| nv == old).unwrap_or(true);
                let (tret, raced) = self.atomic_returned(
                    &hits,
                    told,
                    crowded,
                    (obj, sp, off),
                    s,
                    loc,
                    writes,
                    same,
                );
                if new.is_some_and(|nv| nv != old) {
                    self.progress += 1;
                }
                if let Some(nv) = new {
                    self.atomic_write(
                        (op, acc.class, sc),
                        hits.concurrent_atomic,
                        (obj, sp, off),
                        (old, nv, x),
                        (told, tx, tc, pt, raced),
                        s,
                        loc,
                    );
                }
                self.sync_atomic(obj, sp, off, s, writes, op != AtomicOp::Store, scope, sem);
                if let Some(d) = d {
                    let i = self.regs.base(d) + s;
                    self.regs.vals[i] = old;
                    self.regs.taint[i] = combine(tret, pt.without_inexact());
                }
            }
        }
        Ok(())
    }

    /// Writes what an atomic leaves (`nv`, from `old` and operand `x`) for lane `s`: a store or
    /// exchange writes its operand whatever was there, the others combine with the old value's
    /// taint; order-dependent where an unordered write of another class (`concurrent`) does not
    /// provably commute with it; inexact for a float add (it rounds in the order they ran).
    #[allow(clippy::too_many_arguments)]
    fn atomic_write(
        &mut self,
        (op, class, sc): (AtomicOp, u32, Scalar),
        concurrent: Option<crate::spirv::memory::Access>,
        (obj, sp, off): (ObjectId, Space, u32),
        (old, nv, x): (u64, u64, u64),
        (told, tx, tc, pt, raced): (Taint, Taint, Taint, Taint, Taint),
        s: usize,
        loc: LocId,
    ) {
        let w = sc.bits() as u8;
        // The new value: a store or exchange writes its operand whatever was there; the
        // others combine with the old value. Float adds round in the order they ran. A plain
        // write it races with (not both atomic: a data race) leaves either value: racy, as a
        // plain write racing with another is.
        let mut t = match op {
            AtomicOp::Store | AtomicOp::Exchange => tx,
            _ => combine(told, combine(tx, tc)),
        };
        t = combine(raced, t);
        // The location's window of unordered read-modify-writes: opened by one
        // that nothing unordered precedes, joined by the rest.
        let commutes = self.window_commutes(op, sp, obj, off, old, x, w, concurrent.is_none());
        // Another class's unordered write: order-dependent unless the window's
        // operations provably commute (an operation that left the value as it was may
        // still not commute with the others: `Or 1` after `Add 1` on 0 keeps 1, before
        // it gives 2).
        if let Some(other) = concurrent
            && (class == 0 || other.class() != class)
            && !commutes
        {
            t = combine(
                t,
                self.prov(Cause::AtomicOrder, loc, Taint::NONE)
                    .order_dependent(),
            );
        }
        if op == AtomicOp::FAdd {
            t |= Taint::INEXACT;
        }
        let t = combine(t, pt.without_inexact());
        // A lost lane's write is not pinned down (the lane may not run it, or run it elsewhere on
        // its path) — unless it leaves every value as it was: an add of a defined 0 is the same
        // run or not, at any time.
        let t = if leaves_every_value(op, w, x) && tx.is_none() {
            t
        } else {
            self.write_taint(s, t)
        };
        let t = if t.has_prov() {
            self.stored_link(t, loc)
        } else {
            t
        };
        self.raw_put(obj, sp, off, sc.bytes(), s, nv, t);
        self.note_writer(obj, sp, off, sc.bytes(), s, loc);
    }

    /// The taint of what an atomic returns to lane `s` (the location held taint `told`):
    /// order-dependent where another unordered write could have come first (the shadow found one
    /// before it, or another lane of the instruction writes the same memory — `crowded`), with
    /// the race its access makes; a read that a later write raced with is marked for the next run.
    /// Second: the race with an earlier write, for what the atomic writes (none without one).
    #[allow(clippy::too_many_arguments)]
    fn atomic_returned(
        &mut self,
        hits: &Hits,
        told: Taint,
        crowded: bool,
        (obj, sp, off): (ObjectId, Space, u32),
        s: usize,
        loc: LocId,
        writes: bool,
        same: bool,
    ) -> (Taint, Taint) {
        let mut tret = told;
        let late = self.d.late_read(
            loc,
            self.who(s),
            obj,
            off / self.unit_of(obj, sp),
            hits.interval,
        );
        let other_wg = hits
            .concurrent_atomic
            .is_some_and(|a| (a.who - 1) / self.d.lanes_per_wg != self.wg_linear);
        if late == Some(LateWhy::Race) {
            // A later write raced with what it read (found in an earlier run of this dispatch).
            tret = combine(self.prov(Cause::Race, loc, Taint::NONE), tret);
        }
        if other_wg {
            tret = combine(
                tret,
                self.prov(Cause::WorkgroupOrder, loc, Taint::NONE)
                    .order_dependent(),
            );
        } else if crowded || late == Some(LateWhy::Order) || hits.concurrent_atomic.is_some() {
            tret = combine(
                tret,
                self.prov(Cause::AtomicOrder, loc, Taint::NONE)
                    .order_dependent(),
            );
        }
        let mut raced = Taint::NONE;
        if let Some((other, other_wrote)) = hits.race {
            let same = if other_wrote {
                other.flags & flags::SAME != 0
            } else {
                same
            };
            let r = self.race(
                obj,
                off,
                other,
                other_wrote,
                s,
                loc,
                writes,
                (same, hits.private),
            );
            tret = combine(r, tret);
            // An earlier read this write races with is found late by the next run, which
            // watches the unit ([`crate::spirv::memory::watch`]).
            if other_wrote {
                raced = r;
            }
        }
        if let Some(other) = hits.late_atomic_read
            && !same
        {
            let u = off / self.unit_of(obj, sp);
            self.d.mark_late(
                (other.loc, other.who, obj, u, other.interval()),
                LateWhy::Order,
            );
        }
        (tret, raced)
    }

    /// Adds a read-modify-write to the window of unordered ones at `off` of `obj` (a new window
    /// where it is the `first`, nothing unordered before it): do the window's operations provably
    /// commute ([`crate::spirv::memory::AtomicWindow`])? Buffers have windows only in the ordered
    /// run (a parallel run where two invocations share a location is redone in order).
    #[allow(clippy::too_many_arguments)]
    fn window_commutes(
        &mut self,
        op: AtomicOp,
        sp: Space,
        obj: ObjectId,
        off: u32,
        old: u64,
        x: u64,
        w: u8,
        first: bool,
    ) -> bool {
        use crate::spirv::memory::{AtomicWindow, WindowOp};
        // One that leaves every value as it was commutes with anything: an add of 0.
        let identity = leaves_every_value(op, w, x);
        let kind = match op {
            _ if identity => WindowOp::Add,
            AtomicOp::Add => WindowOp::Add,
            AtomicOp::Inc => WindowOp::Add,
            AtomicOp::Or => WindowOp::Or,
            AtomicOp::Xor => WindowOp::Xor,
            AtomicOp::And => WindowOp::And,
            AtomicOp::Store | AtomicOp::Exchange => WindowOp::Set,
            _ => WindowOp::Other,
        };
        let operand = match op {
            _ if identity => 0,
            AtomicOp::Inc => 1,
            _ => x,
        };
        let update = |win: &mut AtomicWindow| {
            if first {
                *win = AtomicWindow::new(old);
            }
            win.add(kind, operand, w as u32);
            win.commutes(w as u32)
        };
        match sp {
            Space::Shared => update(
                self.windows
                    .entry((obj, off))
                    .or_insert_with(|| AtomicWindow::new(old)),
            ),
            // Buffers: only the ordered run sees unordered atomics (a parallel
            // run where two invocations share a location is redone in order).
            _ if self.d.ordered() => update(
                self.d
                    .windows
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry((self.d.owner_of(obj), off))
                    .or_insert_with(|| AtomicWindow::new(old)),
            ),
            _ => false,
        }
    }

    /// Release and acquire of an atomic by lane `s` on the unit at `off` of `obj`: a releasing
    /// write leaves what the lane knows (and its own accesses so far) in the location's sync record
    /// — added to it by a read-modify-write, which continues a release sequence, replacing it
    /// otherwise; an acquiring read takes the record into what the lane knows; a relaxed read keeps
    /// it until an acquire fence.
    #[allow(clippy::too_many_arguments)]
    fn sync_atomic(
        &mut self,
        obj: ObjectId,
        sp: Space,
        off: u32,
        s: usize,
        writes: bool,
        reads: bool,
        scope: Scope,
        sem: u32,
    ) {
        let Some(f) = sp.family(self.is_image(obj)) else {
            return;
        };
        let key = (obj, off);
        let global = (Space::of(self.k.objects[obj.index()].storage) == Space::Global) as usize;
        if writes {
            // A release fence before the write releases to the invocations in both scopes.
            let fence = self.rel_fence[s];
            let rel_scope = if semantics::releases(sem) {
                Some(scope)
            } else {
                fence.map(|f| f.min(scope))
            };
            if let Some(rel_scope) = rel_scope {
                let snap = self.snapshot(s);
                let rmw = reads;
                let who = self.who(s);
                let (lanes_per_wg, sg_lanes) = (self.d.lanes_per_wg, self.n as u32);
                let e = self.syncs[global].entry(key).or_default();
                if !rmw {
                    *e = SyncRecord::default();
                }
                e.join(&snap, (who, rel_scope), lanes_per_wg, sg_lanes);
                self.clock[s] += 1;
            } else if !reads {
                // A relaxed store starts no release sequence and ends any there was.
                self.syncs[global].remove(&key);
            }
        }
        if reads && let Some(rec) = self.syncs[global].get(&key) {
            // Synchronizes-With: the release and the acquire each in the other's scope.
            let needed = rec.needed(self.who(s), self.d.lanes_per_wg, self.n as u32);
            if rec.scope < needed || scope < needed {
                return;
            }
            let k = rec.knows.clone();
            if semantics::acquires(sem) {
                self.knows[s].get_or_insert_with(Default::default).join(&k);
            } else {
                // Kept for an acquire fence whose scope includes the releaser.
                self.pending[s].get_or_insert_with(Default::default)[needed as usize].join(&k);
            }
        }
        let _ = f;
    }

    /// What lane `s` would pass on by releasing now: what it knows, the accesses of its workgroup
    /// before the barriers it passed, and its own accesses so far.
    fn snapshot(&self, s: usize) -> Knowledge {
        let mut k = self.knows[s].as_deref().cloned().unwrap_or_default();
        k.raise_wg(self.wg_linear, self.wg_epoch);
        k.raise_slot(self.who(s), self.clock[s] + 1);
        k
    }
}

impl AtomicOp {
    /// The class of this operation's write among those that commute: two atomic writes to one
    /// location leave the same value in either order when both are of the same nonzero class
    /// (`0`: an operation whose result depends on the order with any other write).
    pub fn commute_class(self) -> u32 {
        match self {
            AtomicOp::Inc | AtomicOp::Dec | AtomicOp::Add | AtomicOp::Sub => 1,
            AtomicOp::SMin => 2,
            AtomicOp::UMin => 3,
            AtomicOp::SMax => 4,
            AtomicOp::UMax => 5,
            AtomicOp::And => 6,
            AtomicOp::Or => 7,
            AtomicOp::Xor => 8,
            AtomicOp::FMin => 9,
            AtomicOp::FMax => 10,
            // Float adds commute up to rounding: the result is inexact, not order-dependent.
            AtomicOp::FAdd => 11,
            AtomicOp::Load | AtomicOp::Store | AtomicOp::Exchange | AtomicOp::CompareExchange => 0,
        }
    }

    /// Is the final memory value independent of the order of the invocations (they commute)?
    pub fn commutes(self) -> bool {
        matches!(
            self,
            AtomicOp::Inc
                | AtomicOp::Dec
                | AtomicOp::Add
                | AtomicOp::Sub
                | AtomicOp::SMin
                | AtomicOp::UMin
                | AtomicOp::SMax
                | AtomicOp::UMax
                | AtomicOp::And
                | AtomicOp::Or
                | AtomicOp::Xor
                | AtomicOp::FMin
                | AtomicOp::FMax
        )
    }
}

/// Does atomic `op` of width `w` with operand `x` leave every value of its location as it was
/// (add, subtract, or, exclusive or of 0; and of all ones; a minimum of the largest value, a
/// maximum of the smallest)? Float operations are not counted (an add of -0.0 may change a NaN's
/// payload).
pub(crate) fn leaves_every_value(op: AtomicOp, w: u8, x: u64) -> bool {
    let m = mask(w);
    let x = x & m;
    let sign = 1u64 << (w - 1);
    match op {
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::Or | AtomicOp::Xor | AtomicOp::UMax => x == 0,
        AtomicOp::And | AtomicOp::UMin => x == m,
        AtomicOp::SMin => x == m >> 1,
        AtomicOp::SMax => x == sign,
        _ => false,
    }
}

/// The value an atomic `op` of width `w` leaves where `old` was, with operand `x` (and comparator
/// `c`); `None` for a load. Float adds round in the order they ran.
fn atomic_result(op: AtomicOp, w: u8, old: u64, x: u64, c: u64) -> Option<u64> {
    let m = mask(w);
    match op {
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
    }
}

/// The claim a parallel run makes on a buffer unit for atomic `op` on a `sc` at `scope` when
/// its order cannot change the memory's final value, or 0 where it can. Such atomics of one
/// kind and width — integer adds and subtracts (one kind), or one of min, max, and, or, xor — at
/// `Device` scope (scopes that include every invocation of the dispatch, so no two of them
/// race: Vulkan memory model, "Data race"), leave the sum / minimum / … of their operands
/// whatever the order, and need no ordered re-run when nothing reads what they return and
/// nothing else touches the unit. Float atomics are not among them (their rounding depends on
/// the order), nor exchanges and compare-exchanges.
pub(crate) fn commuting_claim(op: AtomicOp, sc: Scalar, scope: Scope) -> u32 {
    let integer = matches!(sc, Scalar::Int { .. });
    let class = op.commute_class();
    if scope != Scope::Device
        || !integer
        || matches!(op, AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax)
        || class == 0
        || !op.commutes()
    {
        return 0;
    }
    crate::spirv::memory::COMMUTING + class * 2 + u32::from(sc.bits() == 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPIR-V 1.6, 3.52.18 Atomic Instructions: OpAtomicSMin "the minimum of … the value pointed to
    /// by Pointer and Value", OpAtomicSMax the maximum, "interpreted as signed"; the largest and
    /// the smallest signed value of each width leave every value as it was, and nothing else does.
    #[test]
    fn a_signed_minimum_of_the_largest_value_and_a_maximum_of_the_smallest_leave_every_value() {
        for w in [8u8, 16, 32, 64] {
            let (max, min) = (mask(w) >> 1, 1u64 << (w - 1));
            assert!(leaves_every_value(AtomicOp::SMin, w, max), "{w}");
            assert!(leaves_every_value(AtomicOp::SMax, w, min), "{w}");
            assert!(!leaves_every_value(AtomicOp::SMin, w, max - 1), "{w}");
            assert!(!leaves_every_value(AtomicOp::SMax, w, min + 1), "{w}");
            for old in [0, 1, max, min, mask(w)] {
                for (op, x) in [(AtomicOp::SMin, max), (AtomicOp::SMax, min)] {
                    assert_eq!(
                        atomic_result(op, w, old, x, 0),
                        Some(old),
                        "{op:?} {w} {old}"
                    );
                }
            }
        }
        assert!(!leaves_every_value(AtomicOp::Exchange, 32, 0));
        assert!(!leaves_every_value(AtomicOp::FAdd, 32, 0x8000_0000));
    }
}
