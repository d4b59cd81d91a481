//! The race shadow: for every memory unit that several invocations can reach (Workgroup variables,
//! buffers), the last write and the last two reads of it, and the check every access makes against
//! them (Vulkan spec, Appendix B "Memory Model", Data Race: two accesses to overlapping memory
//! locations, at least one a write, not both atomic in each other's scope, neither location-ordered
//! before the other — happening-before it, and, when two invocations made them, both non-private:
//! "Private vs. Non-Private").
//!
//! A *unit* is the smallest scalar its object holds (1, 2 or 4 bytes): an access through the
//! object's types covers whole units, so tracking units is tracking the 8-bit memory locations the
//! spec defines, without a record per byte where the data is words. The executor calls [`Shadow`]
//! around each access (as Miri's data-race detector hooks `before_memory_read`/`write`); it knows
//! nothing of values, and values know nothing of it.

use crate::spirv::memory::clock::{Access, Family, Interval, Now, Scope};

/// What an access found in the shadow of one unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hits {
    /// a data race with an earlier access (its record; `true` when it wrote)
    pub race: Option<(Access, bool)>,
    /// the last write was an atomic one not ordered with this access (atomics in each other's
    /// scope): what an atomic read returns, and what an atomic write leaves, depend on the order
    pub concurrent_atomic: Option<Access>,
    /// an earlier *atomic* read not ordered with this write: the value it returned depended on the
    /// order (found late: it was returned before this write ran)
    pub late_atomic_read: Option<Access>,
    /// the race found happens-before ordered the two accesses, but one of them is private
    pub private: bool,
    /// the synchronization interval of the accessing invocation ([`Access::interval`])
    pub interval: Interval,
}

/// Does access `a` (earlier) happen-before `me`, location-ordered for memory of family `f`
/// (Appendix B, Location-Ordered: accesses of two invocations are ordered by happens-before only
/// when both are non-private; an invocation's own accesses by program order)? `Some(true)`:
/// ordered; `Some(false)`: happens-before orders them but one is private; `None`: not ordered.
#[inline(always)]
fn ordered(now: &Now<'_>, a: &Access, me: &Access, f: Family) -> Option<bool> {
    if a.who == me.who {
        return Some(true);
    }
    if !now.after(a, f) {
        return None;
    }
    Some(!a.private() && !me.private())
}

/// The kind of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// a load (or an atomic load)
    Read,
    /// a store (or an atomic store)
    Write,
    /// an atomic read-modify-write
    Rmw,
}

/// The bits an access reads and leaves, as the race shadow sees them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vals {
    /// a write leaves the memory as it was (it stores the value already there)
    pub same: bool,
    /// what it read (a load or a read-modify-write)
    pub read: Option<u64>,
    /// what it leaves (a store or a read-modify-write); `None` where that is not known
    pub write: Option<u64>,
}

/// The shadow of one unit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cell {
    /// the last write
    pub w: Access,
    /// the last read
    pub r: Access,
    /// an earlier read by another invocation, not ordered before `r`
    pub r2: Access,
}

const PAGE: usize = 1024;

/// Cells of an object, allocated a page at a time when first touched (a buffer's shadow costs
/// memory only where the dispatch accesses it).
#[derive(Debug, Default)]
pub struct Shadow {
    pages: Vec<Option<Box<[Cell; PAGE]>>>,
}

impl Shadow {
    /// A clean shadow of `units` units.
    pub fn new(units: usize) -> Shadow {
        Shadow {
            pages: (0..units.div_ceil(PAGE)).map(|_| None).collect(),
        }
    }

    /// Forgets every access (the start of another workgroup's use of its shared memory).
    pub fn clear(&mut self) {
        for p in self.pages.iter_mut() {
            *p = None;
        }
    }

    #[inline(always)]
    fn cell(&mut self, u: usize) -> &mut Cell {
        let p = self.pages[u / PAGE].get_or_insert_with(|| Box::new([Cell::default(); PAGE]));
        &mut p[u % PAGE]
    }

    /// Checks access `me` (by `now`, of kind `kind`) to unit `u` of family `f` against the unit's
    /// record, then records it. `scope` is the access's scope when it is atomic.
    #[cfg(test)]
    pub fn access(
        &mut self,
        u: usize,
        kind: Kind,
        f: Family,
        now: &Now<'_>,
        me: Access,
        scope: Option<Scope>,
    ) -> Hits {
        let mut hits = Hits::default();
        self.access_into(u, kind, f, now, me, scope, &mut hits);
        hits
    }

    /// [`Shadow::access`], adding what it finds to `hits` where `hits` holds nothing of that kind
    /// yet (the first unit of a multi-unit access that finds one names it): no record copied per
    /// unit where nothing is found.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn access_into(
        &mut self,
        u: usize,
        kind: Kind,
        f: Family,
        now: &Now<'_>,
        me: Access,
        scope: Option<Scope>,
        hits: &mut Hits,
    ) {
        let c = self.cell(u);
        // Ordered by atomicity: both atomic, each in the other's scope.
        let atomic_pair = |a: &Access| match scope {
            Some(s) => a.atomic() && now.mutual_scope(a, s),
            None => false,
        };
        // Against the last write: every kind of access.
        if c.w.who != 0 {
            match ordered(now, &c.w, &me, f) {
                Some(true) => {}
                None if atomic_pair(&c.w) => {
                    if hits.concurrent_atomic.is_none() {
                        hits.concurrent_atomic = Some(c.w);
                    }
                }
                o => {
                    if hits.race.is_none() {
                        hits.race = Some((c.w, true));
                        hits.private = o.is_some();
                    }
                }
            }
        }
        match kind {
            Kind::Read => {
                // (A private earlier read stays: a later write of a third invocation races with
                // it, ordered or not.)
                if c.r.who == 0 || c.r.who == me.who || (!c.r.private() && now.after(&c.r, f)) {
                    // The earlier reader is ordered before this one: whatever races with it later
                    // races with this one too, or is ordered after both.
                    if c.r.who != me.who {
                        c.r2 = Access::default();
                    }
                    c.r = me;
                } else {
                    c.r2 = c.r;
                    c.r = me;
                }
            }
            Kind::Write | Kind::Rmw => {
                for r in [c.r, c.r2] {
                    if r.who == 0 {
                        continue;
                    }
                    match ordered(now, &r, &me, f) {
                        Some(true) => {}
                        None if atomic_pair(&r) => {
                            if hits.late_atomic_read.is_none() {
                                hits.late_atomic_read = Some(r);
                            }
                        }
                        o => {
                            if hits.race.is_none() {
                                hits.race = Some((r, false));
                                hits.private = o.is_some();
                            }
                        }
                    }
                }
                c.w = me;
                // Reads before this write are ordered before it or have been reported with it.
                if kind == Kind::Rmw {
                    c.r = me;
                } else {
                    c.r = Access::default();
                }
                c.r2 = Access::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::memory::clock::flags;

    fn now(who: u32, epoch: u32) -> Now<'static> {
        Now {
            who,
            wg: (who - 1) / 64,
            sg_index: ((who - 1) % 64) / 32,
            lanes_per_wg: 64,
            sg_lanes: 32,
            epoch,
            sg: 0,
            knows: None,
        }
    }

    fn me(who: u32, epoch: u32) -> Access {
        Access {
            who,
            loc: crate::spirv::ids::LocId::new(who * 10),
            epoch,
            ..Access::default()
        }
    }

    // Appendix B, Data Race: a write and an access by another invocation, unordered.
    #[test]
    fn two_writes_without_a_barrier_race() {
        let mut s = Shadow::new(4);
        let h = s.access(0, Kind::Write, Family::Shared, &now(1, 0), me(1, 0), None);
        assert_eq!(h, Hits::default());
        let h = s.access(0, Kind::Write, Family::Shared, &now(2, 0), me(2, 0), None);
        assert_eq!(h.race.map(|(a, w)| (a.who, w)), Some((1, true)));
    }

    // Appendix B, Memory Location: accesses to different locations never conflict.
    #[test]
    fn writes_to_different_units_do_not_race() {
        let mut s = Shadow::new(4);
        s.access(0, Kind::Write, Family::Shared, &now(1, 0), me(1, 0), None);
        let h = s.access(1, Kind::Write, Family::Shared, &now(2, 0), me(2, 0), None);
        assert_eq!(h, Hits::default());
    }

    // Readers before a barrier do not survive it: a location read by many invocations, then read
    // and written by one of them after a barrier, is no race (issue 19, rule 7).
    #[test]
    fn readers_before_a_barrier_do_not_race_with_a_writer_after_it() {
        let mut s = Shadow::new(1);
        for who in 1..=8 {
            s.access(
                0,
                Kind::Read,
                Family::Shared,
                &now(who, 0),
                me(who, 0),
                None,
            );
        }
        let h = s.access(0, Kind::Read, Family::Shared, &now(3, 1), me(3, 1), None);
        assert_eq!(h, Hits::default());
        let h = s.access(0, Kind::Write, Family::Shared, &now(3, 1), me(3, 1), None);
        assert_eq!(h, Hits::default());
    }

    // The other party of a race is an invocation that really made the conflicting access.
    #[test]
    fn the_other_party_of_a_read_write_race_is_a_real_reader() {
        let mut s = Shadow::new(1);
        s.access(0, Kind::Read, Family::Shared, &now(5, 0), me(5, 0), None);
        s.access(0, Kind::Read, Family::Shared, &now(3, 0), me(3, 0), None);
        let h = s.access(0, Kind::Write, Family::Shared, &now(3, 0), me(3, 0), None);
        assert_eq!(
            h.race.map(|(a, w)| (a.who, a.loc.get(), w)),
            Some((5, 50, false))
        );
    }

    // Appendix B, Private vs. Non-Private and Location-Ordered: a barrier orders two invocations'
    // accesses only when both are non-private; a private one is ordered with its own
    // invocation's accesses by program order alone.
    #[test]
    fn a_private_access_races_with_another_invocations_across_a_barrier() {
        let private = |who, epoch| Access {
            flags: flags::PRIVATE,
            ..me(who, epoch)
        };
        for (first, second, race) in [
            (me(1, 0), me(2, 1), false),
            (private(1, 0), me(2, 1), true),
            (me(1, 0), private(2, 1), true),
            (private(1, 0), private(1, 1), false),
        ] {
            let mut s = Shadow::new(1);
            s.access(
                0,
                Kind::Write,
                Family::Buffer,
                &now(first.who, 0),
                first,
                None,
            );
            let h = s.access(
                0,
                Kind::Read,
                Family::Buffer,
                &now(second.who, 1),
                second,
                None,
            );
            assert_eq!(h.race.is_some(), race, "{first:?} then {second:?}");
            assert_eq!(h.private, race, "{first:?} then {second:?}");
        }
        // A private read, then another invocation's write after a barrier: a race, whichever
        // of the two is private.
        let mut s = Shadow::new(1);
        s.access(
            0,
            Kind::Read,
            Family::Buffer,
            &now(1, 0),
            private(1, 0),
            None,
        );
        let h = s.access(0, Kind::Write, Family::Buffer, &now(2, 1), me(2, 1), None);
        assert_eq!(
            h.race.map(|(a, w)| (a.who, w, h.private)),
            Some((1, false, true))
        );
    }

    // Atomics in each other's scope do not race; the last one's read is order-dependent.
    #[test]
    fn atomics_do_not_race_but_depend_on_the_order() {
        let mut s = Shadow::new(1);
        let at = |who| Access {
            flags: flags::ATOMIC | (Scope::Device as u32) << flags::SCOPE_SHIFT,
            ..me(who, 0)
        };
        let h = s.access(
            0,
            Kind::Rmw,
            Family::Buffer,
            &now(1, 0),
            at(1),
            Some(Scope::Device),
        );
        assert_eq!(h, Hits::default());
        let h = s.access(
            0,
            Kind::Rmw,
            Family::Buffer,
            &now(2, 0),
            at(2),
            Some(Scope::Device),
        );
        assert!(h.race.is_none());
        assert_eq!(h.concurrent_atomic.map(|a| a.who), Some(1));
        assert_eq!(h.late_atomic_read.map(|a| a.who), Some(1));
    }
}
