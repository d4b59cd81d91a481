//! Every read of a *watched* unit, so that a later write finds each read it races with.
//!
//! The race shadow ([`super::race`]) keeps the last write and the last two reads of a unit: enough
//! to find that a unit is raced on (FastTrack's argument — a write ordered after a read covers it),
//! not enough to say *which* reads a racing write could have changed. Three invocations reading a
//! unit that a fourth then writes, unordered: the spec makes all three reads part of a data race
//! (Vulkan spec, Appendix B, Data Race), the shadow keeps two of them. An invocation that read a
//! unit and then wrote it (`x = x + 1`) covers its read with its write, and another invocation's
//! unordered write then meets only that write — the read, whose value the other write could have
//! changed, is lost.
//!
//! So a unit on which a race was found is *watched* in the next run of the dispatch (the run
//! that taints late reads anyway), and there every read of it is logged — the latest per
//! invocation and instruction, which is the one least ordered before anything later — with the
//! bits it read. Each write of a watched unit checks the log: a read of another invocation that
//! does not happen-before the write (location-ordered, or both atomic in each other's scope) and
//! read other bits than the write leaves is one the write could have changed. Only the units found
//! raced on are watched, so a kernel without a race pays nothing.

use crate::spirv::ids::LocId;
use crate::spirv::memory::clock::{Access, Family, Interval, Now, Scope};
use crate::spirv::memory::{ObjectId, Vals};
use foldhash::HashMap;
use std::ops::Range;

/// A watched unit: (the shared-memory marker or the owning buffer object, the shadow's unit).
pub type WatchKey = (u32, u32);

/// The first member of a [`WatchKey`] for a unit of shared memory (its unit is the shadow's,
/// the same in every workgroup).
pub const SHARED: u32 = u32::MAX;

/// Reads logged per watched unit at most: a unit read by more invocations than this keeps the
/// first ones (the race shadow still finds the race; reads past the cap are not found late).
pub const LOG_CAP: usize = 1024;

/// One logged read.
#[derive(Clone, Copy, Debug)]
pub struct Logged {
    /// its record
    pub acc: Access,
    /// the object it read through
    pub obj: ObjectId,
    /// its first byte, in the coordinates of the unit numbering
    pub at: u32,
    /// the bits it read (little-endian from `at`)
    pub bits: u64,
}

/// An access, for the log: a read is logged, a write checked against what is logged.
#[derive(Clone, Copy, Debug)]
pub struct Accessing<'n, 'k> {
    /// its record
    pub me: Access,
    /// the accessing invocation's view of happens-before
    pub now: &'n Now<'k>,
    /// the memory family
    pub f: Family,
    /// its scope, when atomic
    pub scope: Option<Scope>,
    /// the object it accesses through
    pub obj: ObjectId,
    /// its first byte, in the coordinates of the unit numbering
    pub at: u32,
    /// it writes (a store or a read-modify-write)
    pub writes: bool,
    /// the bits it reads and leaves (little-endian from `at`)
    pub vals: Vals,
}

/// A read a write raced with: the read, whether happens-before orders the two but one is
/// private, whether the read holds the bits the write leaves, and the unit (numbered from the
/// start of the read's object, as late reads are).
pub type Raced = (Logged, bool, bool, u32);

/// The logs of the watched units one workgroup's run (shared memory) or one ordered run
/// (buffers) reaches: those of shared memory apart, so that a workgroup's start forgets them
/// without visiting the buffers' (a dispatch of many workgroups that watches many buffer units).
#[derive(Debug, Default)]
pub struct ReadLog {
    shared: HashMap<WatchKey, UnitLog>,
    buffers: HashMap<WatchKey, UnitLog>,
}

/// The reads logged for one unit, with where each (invocation, instruction, interval)'s is.
#[derive(Debug, Default)]
struct UnitLog {
    reads: Vec<Logged>,
    index: HashMap<(u32, LocId, Interval), usize>,
}

impl ReadLog {
    /// Forgets the reads of shared memory (another workgroup starts).
    pub fn clear_shared(&mut self) {
        self.shared.clear();
    }

    fn units(&self, key: WatchKey) -> &HashMap<WatchKey, UnitLog> {
        if key.0 == SHARED {
            &self.shared
        } else {
            &self.buffers
        }
    }

    fn units_mut(&mut self, key: WatchKey) -> &mut HashMap<WatchKey, UnitLog> {
        if key.0 == SHARED {
            &mut self.shared
        } else {
            &mut self.buffers
        }
    }

    /// Logs a read of unit `key` (replacing the same invocation's earlier read by the same
    /// instruction in the same synchronization interval: whatever races with one races with the
    /// other; a read of another interval is logged beside it, since a write may race with the
    /// later one alone).
    pub fn read(&mut self, key: WatchKey, r: Logged) {
        let v = self.units_mut(key).entry(key).or_default();
        let at = (r.acc.who, r.acc.loc, r.acc.interval());
        if let Some(&i) = v.index.get(&at) {
            v.reads[i] = r;
        } else if v.reads.len() < LOG_CAP {
            v.index.insert(at, v.reads.len());
            v.reads.push(r);
        }
    }

    /// Access `a` to units `us` of an object (`unit` bytes each; the shadow numbers them from
    /// `base`, watch keys are `(space, base + u)`): where a unit is `watched`, a write is checked
    /// against the reads logged there, then a read is logged. The reads the write raced with.
    pub fn access(
        &mut self,
        watched: impl Fn(WatchKey) -> bool,
        (space, base, us, unit): (u32, usize, Range<usize>, u32),
        a: &Accessing<'_, '_>,
    ) -> Vec<Raced> {
        let mut raced = Vec::new();
        for u in us {
            let key = (space, (base + u) as u32);
            if !watched(key) {
                continue;
            }
            let lo = (u as u64 * unit as u64) as u32;
            if a.writes
                && let Some(v) = self.units(key).get(&key)
            {
                raced.extend(v.reads.iter().filter_map(|r| {
                    let private = races_with_read(a.now, &r.acc, &a.me, a.f, a.scope)?;
                    let same = r.obj == a.obj
                        && a.vals
                            .write
                            .is_some_and(|b| same_bytes((r.at, r.bits), (a.at, b), lo, lo + unit));
                    Some((*r, private, same, u as u32))
                }));
            }
            if let Some(bits) = a.vals.read {
                let r = Logged {
                    acc: a.me,
                    obj: a.obj,
                    at: a.at,
                    bits,
                };
                self.read(key, r);
            }
        }
        raced
    }
}

/// Does write `me` race with the earlier read `r` (Appendix B, Data Race: not location-ordered
/// after it, and not both atomic in each other's scope)? `Some(private)` when it does, `private`
/// when happens-before orders them but one of them is private.
pub fn races_with_read(
    now: &Now<'_>,
    r: &Access,
    me: &Access,
    f: Family,
    scope: Option<Scope>,
) -> Option<bool> {
    if r.who == me.who {
        return None;
    }
    let after = now.after(r, f);
    if after && !r.private() && !me.private() {
        return None;
    }
    if !after && scope.is_some_and(|s| r.atomic() && now.mutual_scope(r, s)) {
        return None;
    }
    Some(after)
}

/// Do two accesses (first byte, little-endian bits) hold the same bytes in `lo..hi` where both
/// cover them? (Bytes only one of them covers are compared as different.)
pub fn same_bytes((a_at, a): (u32, u64), (b_at, b): (u32, u64), lo: u32, hi: u32) -> bool {
    (lo..hi).all(|byte| {
        let get = |at: u32, bits: u64| {
            byte.checked_sub(at)
                .filter(|&k| k < 8)
                .map(|k| (bits >> (8 * k)) & 0xff)
        };
        match (get(a_at, a), get(b_at, b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    })
}

/// A raced read's late key (its instruction, invocation, object, unit and interval).
pub fn late_key(&(r, _, _, unit): &Raced) -> (LocId, u32, ObjectId, u32, Interval) {
    (r.acc.loc, r.acc.who, r.obj, unit, r.acc.interval())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(who: u32) -> Now<'static> {
        Now {
            who,
            wg: 0,
            sg_index: 0,
            lanes_per_wg: 1 << 20,
            sg_lanes: 1 << 20,
            epoch: 0,
            sg: 0,
            knows: None,
        }
    }

    fn acc(who: u32, loc: u32) -> Access {
        Access {
            who,
            loc: LocId::new(loc),
            ..Access::default()
        }
    }

    fn access(log: &mut ReadLog, a: Access, read: Option<u64>, write: Option<u64>) -> Vec<Raced> {
        let n = now(a.who);
        let a = Accessing {
            me: a,
            now: &n,
            f: Family::Buffer,
            scope: None,
            obj: ObjectId::new(0),
            at: 0,
            writes: write.is_some(),
            vals: Vals {
                same: false,
                read,
                write,
            },
        };
        log.access(|_| true, (0, 0, 0..1, 4), &a)
    }

    #[test]
    fn a_write_finds_each_invocations_latest_read_up_to_the_cap() {
        let mut log = ReadLog::default();
        // invocation 1 reads twice at one instruction (kept once, the latest), invocation 2 once
        access(&mut log, acc(1, 10), Some(3), None);
        access(&mut log, acc(1, 10), Some(4), None);
        access(&mut log, acc(2, 11), Some(5), None);
        let raced = access(&mut log, acc(9, 12), None, Some(5));
        let got: Vec<(u32, u64, bool)> =
            raced.iter().map(|r| (r.0.acc.who, r.0.bits, r.2)).collect();
        // invocation 2 read the bits the write leaves: a same-value race
        assert_eq!(got, vec![(1, 4, false), (2, 5, true)]);
        // its own earlier read is no race with an invocation's write
        assert!(access(&mut log, acc(1, 13), None, Some(0)).len() == 1);
        let mut log = ReadLog::default();
        for who in 1..=(LOG_CAP as u32 + 5) {
            access(&mut log, acc(who, 10), Some(1), None);
        }
        let raced = access(&mut log, acc(1 << 19, 12), None, Some(2));
        assert_eq!(raced.len(), LOG_CAP);
    }

    #[test]
    fn bytes_compare_where_both_accesses_cover_them() {
        // a 4-byte read of 0x11223344 at byte 4; a 2-byte write of 0x2233 at byte 5
        assert!(same_bytes((4, 0x1122_3344), (5, 0x2233), 5, 7));
        assert!(!same_bytes((4, 0x1122_3344), (5, 0x2234), 5, 7));
        // the unit 4..8: the write covers only bytes 5 and 6
        assert!(!same_bytes((4, 0x1122_3344), (5, 0x2233), 4, 8));
        assert!(same_bytes((0, 7), (0, 7), 0, 4));
    }
}
