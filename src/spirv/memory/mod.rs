//! The interpreter's memory: where each storage class keeps its bytes and their taint, and the race
//! shadow and happens-before applied around every access to memory several invocations reach.
//!
//! - **Per-lane memory** (Function, Private, Input): 32-bit word `w` of lane `s` at
//!   `w * lanes + s`; taint unit `u` of lane `s` at `u * lanes + s`.
//! - **Shared memory** (Workgroup): one array per workgroup, owned by the thread running it, with its
//!   [`race::Shadow`].
//! - **Buffers** ([`Buffer`]: storage and uniform buffers, push constants): one array per binding,
//!   shared by the threads running workgroups in parallel, as relaxed atomics.
//!
//! Taint (undefined, order-dependent, inexact: [`crate::spirv::prov`]) is kept per *unit*: the
//! smallest scalar the object holds, 1, 2 or 4 bytes (`Object::unit`). The Vulkan memory model's
//! memory location is one byte; an access through the object's own types always covers whole
//! units, so per-unit taint and per-unit race records are per-byte ones where it matters (two lanes
//! writing neighbouring `uint16_t`s touch different units) and cost no more than per-word ones for
//! word data. An access narrower than its object's unit (possible only by reinterpreting memory)
//! merges its taint into the unit's: conservative, never falsely defined.
//!
//! Workgroups run in parallel only while no two invocations touch a buffer unit one of them writes
//! ([`Buffer::claim`]); a dispatch where they do (atomics shared between invocations, message
//! passing, a race) runs again, workgroup after workgroup in order — one legal schedule, the same on
//! every run — with the full race shadow on its buffers.

pub mod clock;
pub mod race;
pub mod watch;

use crate::spirv::ids::ObjectId;
use crate::spirv::prov::{combine, Taint};
use crate::spirv::types::Storage;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

pub use clock::{Access, Family, Interval, Knowledge, Scope};
pub use race::{Hits, Kind, Shadow, Vals};

/// A late finding's key: an earlier access (location, 1 + slot) to unit `unit` of object `obj`,
/// in one synchronization interval of its invocation, whose value turned out to depend on a later,
/// unordered write. The interval tells the dynamic instances of one instruction apart: the same
/// read in the next step of a loop, after a barrier, is ordered after that write.
pub(crate) type LateKey = (crate::spirv::ids::LocId, u32, ObjectId, u32, Interval);

/// Why a read was found late: a later write raced with it (its value undefined), or, atomic, a
/// later atomic in its scope could have come first (its value depends on the order). A read found
/// both ways is racy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LateWhy {
    /// the order of atomics in each other's scope
    Order,
    /// a data race
    Race,
}

/// A pointer value as registers hold it: an object, a byte offset into it, and whether an index on
/// the way to it was out of bounds (then it points nowhere, whatever the offset says). Registers
/// keep its [`Ptr::bits`]; the encoding lives here and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ptr(u64);

impl Ptr {
    /// Set in a pointer built from an out-of-bounds index.
    const OOB: u64 = 1 << 63;

    /// Set (with [`Ptr::OOB`]) in a pointer through an index past an array of descriptors: its
    /// object is the array's first element and its offset the index ([`Ptr::past_array`]).
    const PAST: u64 = 1 << 62;

    /// The null pointer (`OpConstantNull` of a pointer type, variable pointers): out of bounds of
    /// every object, equal only to itself.
    pub const NULL: Ptr = Ptr(Self::OOB | u32::MAX as u64);

    /// A pointer to byte `offset` of object `obj`.
    #[inline(always)]
    pub const fn new(obj: ObjectId, offset: u32) -> Ptr {
        Ptr((obj.get() as u64) << 32 | offset as u64)
    }

    /// The pointer a register's bits hold.
    #[inline(always)]
    pub const fn from_bits(bits: u64) -> Ptr {
        Ptr(bits)
    }

    /// The bits a register holds for it.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The object it points into.
    #[inline(always)]
    pub const fn obj(self) -> ObjectId {
        ObjectId::new(((self.0 >> 32) & 0x3fff_ffff) as u32)
    }

    /// A pointer through index `index` of the array of descriptors whose first element is
    /// `first`, where the index is past the array's end or negative: out of bounds, pointing into
    /// no descriptor, with the index kept in place of an offset so that reports can name the
    /// element (an index that does not fit in 32 bits, or a negative one, as [`Ptr::FAR`]).
    pub const fn past_array(first: ObjectId, index: i64) -> Ptr {
        let i = if index < 0 || index > Self::FAR as i64 {
            Self::FAR
        } else {
            index as u32
        };
        Ptr((first.get() as u64) << 32 | Self::PAST | Self::OOB | i as u64)
    }

    /// The index past its array of descriptors that this pointer went through, if it did
    /// ([`Ptr::past_array`]; [`Ptr::FAR`] for a negative one or one past 32 bits).
    #[inline(always)]
    pub const fn past_array_index(self) -> Option<u32> {
        if self.0 & Self::PAST != 0 {
            Some(self.0 as u32)
        } else {
            None
        }
    }

    /// The byte offset into the object.
    #[inline(always)]
    pub const fn off(self) -> u32 {
        self.0 as u32
    }

    /// Was an index on the way out of bounds (or is it null)?
    #[inline(always)]
    pub const fn oob(self) -> bool {
        self.0 & Self::OOB != 0
    }

    /// The same place, marked out of bounds.
    #[inline(always)]
    pub const fn out_of_bounds(self) -> Ptr {
        Ptr(self.0 | Self::OOB)
    }

    /// The same object at byte `offset`, out of bounds if this one was. An offset that does not
    /// fit in 32 bits (a negative index wraps to one) is out of bounds at [`Ptr::FAR`]; a pointer
    /// past an array of descriptors stays as it is.
    #[inline(always)]
    pub const fn at(self, offset: u64) -> Ptr {
        if self.0 & Self::PAST != 0 {
            // Past an array of descriptors: no object, so no offset into one; the index stays.
            self
        } else if offset > u32::MAX as u64 {
            Ptr((self.0 & !(u32::MAX as u64)) | Self::FAR as u64).out_of_bounds()
        } else {
            Ptr((self.0 & !(u32::MAX as u64)) | offset)
        }
    }

    /// The offset an out-of-bounds pointer keeps where its true offset does not fit in 32 bits
    /// (a negative index, or one past 4 GiB): reports say so instead of naming a byte.
    pub const FAR: u32 = u32::MAX;

    /// A sampled image's handle (`OpSampledImage`): image object `img` with sampler object `smp`
    /// (kept where a pointer keeps its offset: an image handle's offset is otherwise 0).
    #[inline(always)]
    pub const fn sampled(img: ObjectId, smp: ObjectId) -> Ptr {
        Ptr::new(img, smp.get() + 1)
    }

    /// The sampler a sampled image's handle names (`None`: an image alone, or one with its own
    /// sampler — a combined image sampler).
    #[inline(always)]
    pub const fn sampler(self) -> Option<ObjectId> {
        match self.off() {
            0 => None,
            k => Some(ObjectId::new(k - 1)),
        }
    }

    /// Object and offset without the out-of-bounds mark: two pointers to the same place have the
    /// same key (OpPtrEqual, atomics aimed at one location).
    #[inline(always)]
    pub const fn place(self) -> u64 {
        self.0 & !Self::OOB
    }
}

/// The read-modify-writes one location received in its current window of mutually unordered
/// atomics, summarized to decide whether every order of them leaves the same value (SPIR-V: each
/// atomic is one indivisible read-modify-write; which order unordered ones take is the device's).
///
/// Operations of one commute class always commute. Across classes, the model proves
/// order-independence for the integer add and bitwise families when their bits cannot meet: the
/// bitwise operations of different kinds touch disjoint bits (`Or` sets its mask, `Xor` flips its
/// mask, `And` clears the bits its mask lacks), and the adds stay below the lowest of those bits —
/// the window's starting value below that bit plus every add operand never carries into it. Then
/// the adds act on the low bits only (where they commute), the bitwise operations on the high bits
/// only, and every interleaving gives one value. Stores of one value commute with each other.
/// Anything else (subtractions, min/max beside another class, stores of different values, a carry
/// that could reach a bitwise bit) is order-dependent.
#[derive(Clone, Debug, Default)]
pub struct AtomicWindow {
    /// the location's value before the window's first operation
    start: u64,
    /// the sum of the add operands
    adds: u128,
    /// bits set by `Or`, flipped by `Xor`, cleared by `And`
    or: u64,
    xor: u64,
    and: u64,
    /// the value stored by `Store`/`Exchange` operations, while they all store one value
    set: Option<u64>,
    /// an operation outside the add and bitwise families (or stores of different values)
    other: bool,
}

impl AtomicWindow {
    /// A window opened by an operation on a location holding `start`.
    pub fn new(start: u64) -> AtomicWindow {
        AtomicWindow {
            start,
            ..Default::default()
        }
    }

    /// Adds one atomic write of kind `kind` with operand `x` (masked to `width` bits): an add, a
    /// bitwise operation, a store of `x`, or anything else.
    pub fn add(&mut self, kind: WindowOp, x: u64, width: u32) {
        let m = if width >= 64 { !0 } else { (1u64 << width) - 1 };
        match kind {
            WindowOp::Add => self.adds += (x & m) as u128,
            WindowOp::Or => self.or |= x & m,
            WindowOp::Xor => self.xor |= x & m,
            WindowOp::And => self.and |= !x & m,
            WindowOp::Set => match self.set {
                None => self.set = Some(x & m),
                Some(v) if v == x & m => {}
                Some(_) => self.other = true,
            },
            WindowOp::Other => self.other = true,
        }
    }

    /// Does every order of the window's operations leave the same value in a `width`-bit
    /// location?
    pub fn commutes(&self, width: u32) -> bool {
        if self.other {
            return false;
        }
        // Stores of one value commute with each other, not with anything else.
        if self.set.is_some() {
            return self.adds == 0 && self.or | self.xor | self.and == 0;
        }
        if self.or & self.xor != 0 || self.or & self.and != 0 || self.xor & self.and != 0 {
            return false;
        }
        let bitwise = self.or | self.xor | self.and;
        if self.adds == 0 || bitwise == 0 {
            return true;
        }
        // `bitwise` is not zero, so `p` is at most 63.
        let p = bitwise.trailing_zeros().min(width);
        let low = self.start & ((1u64 << p) - 1);
        (low as u128) + self.adds < (1u128 << p)
    }
}

/// The family of one read-modify-write, for [`AtomicWindow`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowOp {
    /// `OpAtomicIAdd`, `OpAtomicIIncrement`
    Add,
    /// `OpAtomicOr`
    Or,
    /// `OpAtomicXor`
    Xor,
    /// `OpAtomicAnd`
    And,
    /// `OpAtomicStore`, `OpAtomicExchange`: the value stored
    Set,
    /// anything else that writes
    Other,
}

/// Where an object's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// one copy per invocation
    Lane,
    /// one copy per workgroup
    Shared,
    /// one copy per dispatch (buffers, push constants)
    Global,
}

impl Space {
    /// The space of a storage class.
    pub fn of(s: Storage) -> Space {
        match s {
            Storage::Function | Storage::Private | Storage::Input => Space::Lane,
            Storage::Workgroup => Space::Shared,
            _ => Space::Global,
        }
    }

    /// The barrier family of memory in this space (`None`: one invocation's own memory); global
    /// memory is an image's or a buffer's.
    pub fn family(self, image: bool) -> Option<Family> {
        match self {
            Space::Lane => None,
            Space::Shared => Some(Family::Shared),
            Space::Global if image => Some(Family::Image),
            Space::Global => Some(Family::Buffer),
        }
    }
}

/// The units (of `unit` bytes) an access of `bytes` at byte `at` covers.
#[inline(always)]
pub fn units(at: u32, bytes: u32, unit: u32) -> std::ops::Range<usize> {
    // Units are powers of two: shifts, not divisions, on every access.
    let sh = unit.trailing_zeros();
    let first = (at >> sh) as usize;
    let last = ((at + bytes.max(1) - 1) >> sh) as usize;
    first..last + 1
}

/// Reads `bytes` (1, 2, 4 or 8) at byte `at` of little-endian 32-bit words through `word(i)`.
#[inline(always)]
pub fn get_bits(at: u32, bytes: u32, word: impl Fn(usize) -> u32) -> u64 {
    let w = (at / 4) as usize;
    let shift = (at % 4) * 8;
    match bytes {
        4 if shift == 0 => word(w) as u64,
        8 if shift == 0 => word(w) as u64 | (word(w + 1) as u64) << 32,
        _ => {
            // Any other size or alignment, byte by byte.
            let mut v = 0u64;
            for k in 0..bytes {
                let a = at + k;
                let b = (word((a / 4) as usize) >> ((a % 4) * 8)) & 0xff;
                v |= (b as u64) << (8 * k);
            }
            v
        }
    }
}

/// Writes the low `bytes` of `v` at byte `at` through `put(word index, bits, mask)`.
#[inline(always)]
pub fn put_bits(at: u32, bytes: u32, v: u64, mut put: impl FnMut(usize, u32, u32)) {
    let w = (at / 4) as usize;
    let shift = (at % 4) * 8;
    match bytes {
        4 if shift == 0 => put(w, v as u32, !0),
        8 if shift == 0 => {
            put(w, v as u32, !0);
            put(w + 1, (v >> 32) as u32, !0);
        }
        _ => {
            for k in 0..bytes {
                let a = at + k;
                let s = (a % 4) * 8;
                put(
                    (a / 4) as usize,
                    (((v >> (8 * k)) & 0xff) as u32) << s,
                    0xff << s,
                );
            }
        }
    }
}

/// Sets taint `t` on the units `us` of an access of `bytes`, through `get`/`set` of one unit: a
/// unit the access covers whole takes `t`; one it covers in part keeps its other bytes' taint too.
#[inline(always)]
pub fn put_taint(
    at: u32,
    bytes: u32,
    unit: u32,
    t: Taint,
    get: impl Fn(usize) -> Taint,
    mut set: impl FnMut(usize, Taint),
) {
    let us = units(at, bytes, unit);
    if bytes >= unit && at & (unit - 1) == 0 {
        for u in us {
            set(u, t);
        }
    } else {
        for u in us {
            set(u, combine(t, get(u)));
        }
    }
}

/// The taint of the units `us`, combined.
#[inline(always)]
pub fn get_taint(us: std::ops::Range<usize>, get: impl Fn(usize) -> Taint) -> Taint {
    if us.len() == 1 {
        return get(us.start);
    }
    let mut t = Taint::NONE;
    for u in us {
        let x = get(u);
        if !x.is_none() {
            t = combine(t, x);
        }
    }
    t
}

/// A buffer bound for a dispatch, shared by every workgroup.
#[derive(Debug)]
pub struct Buffer {
    /// the words
    pub vals: Vec<AtomicU32>,
    /// taint per unit
    pub taint: Vec<AtomicU32>,
    /// bytes per unit (1, 2 or 4)
    pub unit: u32,
    /// bytes bound
    pub size: u32,
    /// the shader may write it
    pub writable: bool,
    /// who touched each unit (parallel runs): writer (1 + slot) in the low half, reader (1 + slot,
    /// or [`MANY`]) in the high half; empty for buffers the shader cannot write
    owner: Vec<AtomicU64>,
    /// the last writer of each unit: (1 + slot) << 32 | location (for reports)
    wloc: Vec<AtomicU64>,
    /// the lowest writer (1 + slot) of each unit, `u32::MAX` for none: recorded only in runs that
    /// explore branches on undefined values ([`Buffer::wrote_first`])
    first: Vec<AtomicU32>,
    /// the extent of a bound image (texel buffers: width only); `None` for buffers
    pub extent: Option<crate::spirv::image::Extent>,
}

/// Several readers.
pub const MANY: u32 = u32::MAX;

/// The first owner word of a unit that only commuting atomics touched
/// (`spirv::atomics::commuting_claim`); invocations are numbered below it.
pub const COMMUTING: u32 = u32::MAX - 64;

fn zeros(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

/// The little-endian words of `bytes`, the last padded with zeros.
fn le_words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let whole = bytes.chunks_exact(4);
    let rest = whole.remainder();
    let last = (!rest.is_empty()).then(|| {
        let mut w = [0u8; 4];
        w[..rest.len()].copy_from_slice(rest);
        u32::from_le_bytes(w)
    });
    whole
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .chain(last)
}

impl Buffer {
    /// A buffer holding `bytes` (padded with zeros to whole words) with taint per `unit` bytes.
    /// The lowest writer of each unit is not recorded ([`Buffer::record_first_writers`]).
    pub fn new(bytes: &[u8], writable: bool, unit: u32) -> Buffer {
        let n = bytes.len().div_ceil(4);
        let mut vals: Vec<AtomicU32> = Vec::with_capacity(n);
        vals.extend(le_words(bytes).map(AtomicU32::new));
        let units = (n * 4).div_ceil(unit as usize);
        Buffer {
            vals,
            taint: zeros(units),
            unit,
            size: bytes.len() as u32,
            writable,
            owner: if writable {
                (0..units).map(|_| AtomicU64::new(0)).collect()
            } else {
                Vec::new()
            },
            wloc: if writable {
                (0..units).map(|_| AtomicU64::new(0)).collect()
            } else {
                Vec::new()
            },
            first: Vec::new(),
            extent: None,
        }
    }

    /// Records the lowest writer of each unit from now on ([`Buffer::wrote_first`]) where `on`:
    /// only the runs that explore branches on undefined values read it, so only they pay for it.
    pub fn record_first_writers(&mut self, on: bool) {
        if on && self.writable {
            self.first = (0..self.units())
                .map(|_| AtomicU32::new(u32::MAX))
                .collect();
        }
    }

    /// Puts back `bytes` (what was bound) with taint `undefined` on those byte ranges, none
    /// elsewhere, and forgets who touched what.
    pub fn restore(&self, bytes: &[u8], undefined: &[(std::ops::Range<usize>, Taint)]) {
        let words = le_words(bytes).chain(std::iter::repeat(0));
        for (v, w) in self.vals.iter().zip(words) {
            v.store(w, Relaxed);
        }
        for t in &self.taint {
            t.store(0, Relaxed);
        }
        self.set_undefined(undefined);
        for o in self.owner.iter().chain(&self.wloc) {
            o.store(0, Relaxed);
        }
        for f in &self.first {
            f.store(u32::MAX, Relaxed);
        }
    }

    /// Who wrote each unit: the last writer with its location and the lowest writer, as
    /// [`Buffer::writers`] and [`Buffer::first_writers`] read them — to put back with
    /// [`Buffer::set_writer_marks`] after runs under other schedules.
    pub fn writer_marks(&self) -> (Vec<u64>, Vec<u32>) {
        (
            self.wloc.iter().map(|w| w.load(Relaxed)).collect(),
            self.first_writers(),
        )
    }

    /// Puts back what [`Buffer::writer_marks`] read.
    pub fn set_writer_marks(&self, (wloc, first): &(Vec<u64>, Vec<u32>)) {
        for (w, x) in self.wloc.iter().zip(wloc) {
            w.store(*x, Relaxed);
        }
        for (f, x) in self.first.iter().zip(first) {
            f.store(*x, Relaxed);
        }
    }

    /// Taints the units of byte ranges (what a run was given as undefined).
    pub fn set_undefined(&self, undefined: &[(std::ops::Range<usize>, Taint)]) {
        let u = self.unit as usize;
        for (range, t) in undefined {
            for w in range.start / u..range.end.div_ceil(u).min(self.taint.len()) {
                self.taint[w].store(t.bits(), Relaxed);
            }
        }
    }

    /// Records that `who` (1 + slot) at instruction `loc` wrote units `us` last (for reports).
    #[inline(always)]
    pub fn wrote(&self, us: std::ops::Range<usize>, who: u32, loc: crate::spirv::ids::LocId) {
        for u in us {
            if let Some(w) = self.wloc.get(u) {
                w.store((who as u64) << 32 | loc.get() as u64, Relaxed);
            }
        }
    }

    /// Records that `who` (1 + slot) wrote units `us`, keeping the lowest writer of each: the same
    /// whatever order the threads ran in.
    #[inline]
    pub fn wrote_first(&self, us: std::ops::Range<usize>, who: u32) {
        for u in us {
            if let Some(f) = self.first.get(u) {
                f.fetch_min(who, Relaxed);
            }
        }
    }

    /// The lowest writer (1 + slot) of each unit since it was bound ([`Buffer::wrote_first`]),
    /// `u32::MAX` where none; empty for buffers the shader cannot write.
    pub fn first_writers(&self) -> Vec<u32> {
        self.first.iter().map(|f| f.load(Relaxed)).collect()
    }

    /// The units no invocation wrote (none for buffers the shader cannot write).
    pub fn never_written(&self) -> impl Iterator<Item = usize> + '_ {
        (self.wloc.iter().enumerate())
            .filter_map(|(u, w)| (w.load(Relaxed) >> 32 == 0).then_some(u))
    }

    /// Number of units.
    pub fn units(&self) -> usize {
        self.taint.len()
    }

    /// The bits of an access of `bytes` at byte `at`.
    #[inline(always)]
    pub fn get(&self, at: u32, bytes: u32) -> u64 {
        get_bits(at, bytes, |w| self.vals[w].load(Relaxed))
    }

    /// Writes an access's bits.
    #[inline(always)]
    pub fn put(&self, at: u32, bytes: u32, v: u64) {
        put_bits(at, bytes, v, |w, bits, m| {
            if m == !0 {
                self.vals[w].store(bits, Relaxed);
            } else {
                let _ = self.vals[w].fetch_update(Relaxed, Relaxed, |old| Some((old & !m) | bits));
            }
        });
    }

    /// The taint of an access.
    #[inline(always)]
    pub fn get_taint(&self, at: u32, bytes: u32) -> Taint {
        get_taint(units(at, bytes, self.unit), |u| {
            Taint::from_bits(self.taint[u].load(Relaxed))
        })
    }

    /// Sets an access's taint.
    #[inline(always)]
    pub fn put_taint(&self, at: u32, bytes: u32, t: Taint) {
        put_taint(
            at,
            bytes,
            self.unit,
            t,
            |u| Taint::from_bits(self.taint[u].load(Relaxed)),
            |u, x| self.taint[u].store(x.bits(), Relaxed),
        );
    }

    /// Adds taint `t` to every unit (a store through an undefined pointer).
    pub fn taint_all(&self, t: Taint) {
        for x in &self.taint {
            let _ = x.fetch_update(Relaxed, Relaxed, |old| {
                Some(combine(t, Taint::from_bits(old)).bits())
            });
        }
    }

    /// Records, in a parallel run, that `who` (1 + slot) reads or writes units `us`; `false` when
    /// another invocation wrote one of them or (for a write) touched it: the run must then be done
    /// again in order, with the full race shadow.
    #[inline]
    pub fn claim(&self, us: std::ops::Range<usize>, who: u32, write: bool) -> bool {
        let mut ok = true;
        for u in us {
            let Some(o) = self.owner.get(u) else {
                continue;
            };
            // Most accesses change nothing (a reader already recorded, or one of many): a load.
            let cur = o.load(Relaxed);
            if claimed_already(cur, who, write) {
                continue;
            }
            let _ = o.fetch_update(Relaxed, Relaxed, |cur| {
                let (w, r) = (cur as u32, (cur >> 32) as u32);
                if w != 0 && w != who {
                    ok = false;
                }
                if write {
                    if r != 0 && r != who {
                        ok = false;
                    }
                    (w != who).then_some((cur & !0xffff_ffff) | who as u64)
                } else {
                    let nr = if r == 0 || r == who { who } else { MANY };
                    (nr != r).then_some((cur & 0xffff_ffff) | (nr as u64) << 32)
                }
            });
        }
        ok
    }

    /// Records commuting atomics of one kind
    /// (`spirv::atomics::commuting_claim` `key`) on units `us`; false if
    /// anything else touched one of them (a plain access, or another kind).
    pub fn claim_commuting(&self, us: std::ops::Range<usize>, key: u32) -> bool {
        let mut ok = true;
        for u in us {
            let Some(o) = self.owner.get(u) else {
                continue;
            };
            if o.load(Relaxed) == key as u64 {
                continue;
            }
            let _ = o.fetch_update(Relaxed, Relaxed, |cur| {
                if cur == 0 {
                    return Some(key as u64);
                }
                if cur != key as u64 {
                    ok = false;
                }
                None
            });
        }
        ok
    }

    /// The bytes now.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.vals.len() * 4];
        for (b, v) in out.chunks_exact_mut(4).zip(&self.vals) {
            b.copy_from_slice(&v.load(Relaxed).to_le_bytes());
        }
        out.truncate(self.size as usize);
        out
    }

    /// What the buffer holds after a run, copied out of it (a buffer other descriptors still
    /// share).
    pub fn contents(&self) -> Contents {
        Contents {
            bytes: self.bytes(),
            taint: self
                .taint
                .iter()
                .map(|t| Taint::from_bits(t.load(Relaxed)))
                .collect(),
            wloc: self.wloc.iter().map(|w| w.load(Relaxed)).collect(),
            first: self.first_writers(),
        }
    }

    /// What the buffer holds after a run, taken out of it: the taint and writer rows change
    /// type where they lie (no copy of the largest rows of a large buffer); only the bytes are
    /// copied.
    pub fn into_contents(self) -> Contents {
        let bytes = self.bytes();
        Contents {
            bytes,
            taint: self
                .taint
                .into_iter()
                .map(|t| Taint::from_bits(t.into_inner()))
                .collect(),
            wloc: self.wloc.into_iter().map(AtomicU64::into_inner).collect(),
            first: self.first.into_iter().map(AtomicU32::into_inner).collect(),
        }
    }
}

/// A buffer's contents after a run ([`Buffer::contents`]).
pub struct Contents {
    /// the bytes bound
    pub bytes: Vec<u8>,
    /// the taint of each unit
    pub taint: Vec<Taint>,
    /// the last writer of each unit: (1 + slot) << 32 | location, 0 for none; empty for buffers
    /// the shader cannot write
    pub wloc: Vec<u64>,
    /// the lowest writer (1 + slot) of each unit, `u32::MAX` for none; empty where not recorded
    pub first: Vec<u32>,
}

impl Contents {
    /// Keeps only bytes `bytes` and units `units` (an object's window of a shared buffer).
    pub fn window(&mut self, bytes: std::ops::Range<usize>, units: std::ops::Range<usize>) {
        fn keep<T>(v: &mut Vec<T>, r: std::ops::Range<usize>) {
            v.truncate(r.end.min(v.len()));
            v.drain(..r.start.min(v.len()));
        }
        keep(&mut self.bytes, bytes);
        keep(&mut self.taint, units.clone());
        keep(&mut self.wloc, units.clone());
        keep(&mut self.first, units);
    }
}

/// The fast path of [`Buffer::claim`]: a claim word `cur` (writer in the low half, reader or
/// `MANY` in the high) that the access of `who` would leave as it is — a read by the writer or
/// with no writer, already recorded or one of many; a write by the writer with no other reader.
#[inline(always)]
fn claimed_already(cur: u64, who: u32, write: bool) -> bool {
    let (w, r) = (cur as u32, (cur >> 32) as u32);
    if write {
        w == who && (r == 0 || r == who)
    } else {
        (w == 0 || w == who) && (r == who || r == MANY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_every_width_round_trip_through_words() {
        let mut words = [0u32; 4];
        for (at, bytes, v) in [
            (0, 1, 0xab),
            (1, 1, 0xcd),
            (2, 2, 0xbeef),
            (4, 4, 0x1234_5678),
            (8, 8, 0x0102_0304_0506_0708),
        ] {
            put_bits(at, bytes, v, |w, bits, m| words[w] = (words[w] & !m) | bits);
            assert_eq!(get_bits(at, bytes, |w| words[w]), v);
        }
        assert_eq!(words[0], 0xbeef_cdab);
    }

    // Appendix B, Memory Location: neighbouring 16-bit elements are different locations, each
    // with its own definedness.
    #[test]
    fn a_16_bit_store_defines_its_own_unit_only() {
        let b = Buffer::new(&[0; 8], true, 2);
        let t = Taint::undefined(7);
        b.put_taint(0, 8, t);
        b.put_taint(2, 2, Taint::NONE);
        assert_eq!(b.get_taint(2, 2), Taint::NONE);
        assert_eq!(b.get_taint(0, 2), t);
        assert_eq!(b.get_taint(0, 4), t);
    }

    #[test]
    fn a_write_after_another_invocations_access_needs_the_ordered_run() {
        let b = Buffer::new(&[0; 8], true, 4);
        assert!(b.claim(0..1, 1, false));
        assert!(b.claim(0..1, 2, false));
        assert!(!b.claim(0..1, 1, true));
        assert!(b.claim(1..2, 3, true));
        assert!(b.claim(1..2, 3, false));
        assert!(!b.claim(1..2, 4, false));
        // Every read of a unit another invocation wrote says so, the reader's second one too.
        assert!(!b.claim(1..2, 4, false), "a second read by 4 of 3's write");
    }

    // SPIR-V, OpConstantNull of a pointer type (variable pointers): the null pointer points into
    // no object, so every access through it is out of bounds, and it equals only itself.
    #[test]
    fn the_null_pointer_is_out_of_bounds_and_equal_only_to_itself() {
        assert!(Ptr::NULL.oob());
        let first = Ptr::new(ObjectId::new(0), 0);
        assert!(!first.oob());
        assert_ne!(Ptr::NULL.place(), first.place());
        assert_ne!(Ptr::NULL, first.out_of_bounds());
    }

    // An index past an array of descriptors reaches no object: the pointer is out of bounds,
    // names the array's first element and keeps the index (a negative one as FAR) through any
    // further offset, so that the report can name `cs[2]`.
    #[test]
    fn a_pointer_past_an_array_of_descriptors_keeps_its_index_through_offsets() {
        let first = ObjectId::new((1 << 30) - 1);
        let p = Ptr::past_array(first, 2);
        assert_eq!(
            (p.obj(), p.oob(), p.past_array_index()),
            (first, true, Some(2))
        );
        assert_eq!(p.at(64), p, "an offset into no object changes nothing");
        assert_eq!(
            Ptr::past_array(first, -1).past_array_index(),
            Some(Ptr::FAR)
        );
        assert_eq!(
            Ptr::past_array(first, 1 << 40).past_array_index(),
            Some(Ptr::FAR)
        );
        assert_eq!(Ptr::new(first, 8).out_of_bounds().past_array_index(), None);
        assert_eq!(Ptr::NULL.past_array_index(), None);
    }

    // OpPtrEqual and atomics aimed at one location compare places: object and offset, whether an
    // index on the way was out of bounds or not. A byte offset past 32 bits is outside every
    // object the interpreter can hold.
    #[test]
    fn a_pointer_keeps_its_object_and_offset_and_its_out_of_bounds_mark() {
        let obj = ObjectId::new(5);
        let p = Ptr::new(obj, 12);
        assert_eq!((p.obj(), p.off(), p.oob()), (obj, 12, false));
        let q = p.out_of_bounds();
        assert_eq!((q.obj(), q.off(), q.oob()), (obj, 12, true));
        assert!(q.out_of_bounds().oob(), "marked twice is still marked");
        assert_eq!(q.place(), p.place());
        assert_ne!(p.at(16).place(), p.place());
        assert_ne!(Ptr::new(ObjectId::new(6), 12).place(), p.place());
        let last = p.at(u32::MAX as u64);
        assert_eq!((last.obj(), last.off(), last.oob()), (obj, u32::MAX, false));
        let past = p.at(u32::MAX as u64 + 1);
        assert_eq!((past.obj(), past.oob()), (obj, true));
        assert!(
            q.at(0).oob(),
            "an out-of-bounds pointer stays out of bounds"
        );
        assert_eq!(p.at(3).off(), 3);
    }

    // Appendix B, Memory Location: each byte is a location of its own, whatever the alignment of
    // the access that covers it (reinterpreted memory, PhysicalStorageBuffer pointers).
    #[test]
    fn unaligned_accesses_read_and_write_exactly_the_bytes_they_cover() {
        // bytes 0x10, 0x11, … 0x1b, little-endian
        let mut words = [0x1312_1110u32, 0x1716_1514, 0x1b1a_1918];
        assert_eq!(get_bits(2, 4, |w| words[w]), 0x1514_1312);
        assert_eq!(get_bits(2, 8, |w| words[w]), 0x1918_1716_1514_1312);
        assert_eq!(get_bits(4, 8, |w| words[w]), 0x1b1a_1918_1716_1514);
        assert_eq!(get_bits(5, 2, |w| words[w]), 0x1615);
        fn put(words: &mut [u32], at: u32, bytes: u32, v: u64) {
            put_bits(at, bytes, v, |w, bits, m| words[w] = (words[w] & !m) | bits);
        }
        put(&mut words, 2, 4, 0xaabb_ccdd);
        put(&mut words, 9, 1, 0xee);
        assert_eq!(words, [0xccdd_1110, 0x1716_aabb, 0x1b1a_ee18]);
        put(&mut words, 4, 8, 0x0102_0304_0506_0708);
        assert_eq!(words, [0xccdd_1110, 0x0506_0708, 0x0102_0304]);
        put(&mut words, 2, 8, 0xf1f2_f3f4_f5f6_f7f8);
        assert_eq!(words, [0xf7f8_1110, 0xf3f4_f5f6, 0x0102_f1f2]);
        let b = Buffer::new(&[0x11; 8], true, 1);
        b.put(1, 1, 0xaa);
        b.put(4, 4, 0x2233_4455);
        assert_eq!(b.bytes(), [0x11, 0xaa, 0x11, 0x11, 0x55, 0x44, 0x33, 0x22]);
    }

    #[test]
    fn an_access_covers_the_units_its_first_to_last_byte_fall_in() {
        assert_eq!(units(0, 4, 4), 0..1);
        assert_eq!(units(4, 8, 4), 1..3);
        assert_eq!(units(2, 2, 2), 1..2);
        assert_eq!(units(1, 2, 2), 0..2);
        assert_eq!(units(3, 1, 1), 3..4);
    }

    // The module's rule for reinterpreted memory: an access narrower than its object's unit merges
    // its taint into the unit's — conservative, never falsely defined.
    #[test]
    fn a_store_narrower_than_its_unit_keeps_the_units_taint() {
        let b = Buffer::new(&[0; 8], true, 4);
        let t = Taint::undefined(3);
        b.put_taint(0, 8, t);
        b.put_taint(0, 2, Taint::NONE);
        assert!(b.get_taint(0, 4).is_undefined());
        b.put_taint(4, 4, Taint::NONE);
        assert!(b.get_taint(4, 4).is_none());
        // A read over two units where only the second is undefined is undefined.
        let h = Buffer::new(&[0; 8], true, 2);
        h.put_taint(2, 2, t);
        assert!(h.get_taint(0, 2).is_none());
        assert!(h.get_taint(0, 4).is_undefined());
    }

    #[test]
    fn the_undefined_byte_ranges_a_run_is_given_taint_their_units_only() {
        let b = Buffer::new(&[0; 16], true, 4);
        let t = Taint::undefined(1);
        b.set_undefined(&[(8..12, t)]);
        let each: Vec<bool> = (0..4)
            .map(|u| b.get_taint(u * 4, 4).is_undefined())
            .collect();
        assert_eq!(each, [false, false, true, false]);
    }

    /// Applies `ops` to a `width`-bit location holding `start` in every order, one indivisible
    /// read-modify-write at a time, and says whether every order leaves the same value.
    fn every_order_ends_alike(start: u64, ops: &[(WindowOp, u64)], width: u32) -> bool {
        let m = (1u64 << width) - 1;
        fn orders(v: u64, left: &mut Vec<(WindowOp, u64)>, m: u64, out: &mut Vec<u64>) {
            if left.is_empty() {
                out.push(v);
            }
            for k in 0..left.len() {
                let (op, x) = left.remove(k);
                let next = match op {
                    WindowOp::Add => v.wrapping_add(x),
                    WindowOp::Or => v | x,
                    WindowOp::Xor => v ^ x,
                    WindowOp::And => v & x,
                    WindowOp::Set | WindowOp::Other => x,
                } & m;
                orders(next, left, m, out);
                left.insert(k, (op, x));
            }
        }
        let mut out = Vec::new();
        orders(start & m, &mut ops.to_vec(), m, &mut out);
        out.iter().all(|&v| v == out[0])
    }

    fn window(start: u64, ops: &[(WindowOp, u64)], width: u32) -> AtomicWindow {
        let mut w = AtomicWindow::new(start);
        for &(op, x) in ops {
            w.add(op, x, width);
        }
        w
    }

    // SPIR-V, Atomic Instructions: each atomic is one indivisible read-modify-write, and which
    // order mutually unordered ones take is the device's. A window the model calls
    // order-independent must end alike in every order: 20,000 windows of up to four operations
    // on an 8-bit location, every order tried.
    #[test]
    fn a_window_of_atomics_called_order_independent_ends_alike_in_every_order() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut independent, mut conservative) = (0, 0);
        for _ in 0..20_000 {
            let start = next() & 0xff;
            let n = 1 + (next() % 4) as usize;
            let ops: Vec<(WindowOp, u64)> = (0..n)
                .map(|_| {
                    let r = next();
                    let x = match r % 3 {
                        0 => 1 << ((r >> 8) % 9),
                        1 => (r >> 8) & 0x3,
                        _ => (r >> 8) & 0x3ff,
                    };
                    match (r >> 20) % 5 {
                        0 => (WindowOp::Add, x),
                        1 => (WindowOp::Or, x),
                        2 => (WindowOp::Xor, x),
                        3 => (WindowOp::And, !x),
                        _ => (WindowOp::Set, 3 + (r >> 30) % 2),
                    }
                })
                .collect();
            let alike = every_order_ends_alike(start, &ops, 8);
            if window(start, &ops, 8).commutes(8) {
                assert!(alike, "start {start:#x}, {ops:?}: called order-independent");
                independent += 1;
            } else if alike {
                conservative += 1;
            }
        }
        assert!(
            independent > 5_000,
            "{independent} windows called order-independent"
        );
        assert!(
            conservative < independent,
            "{conservative} order-independent windows missed"
        );
    }

    // The rules of `AtomicWindow` (its doc), each one a window that does or does not commute.
    #[test]
    fn atomics_of_one_family_or_on_bits_that_never_meet_commute_and_the_rest_do_not() {
        use WindowOp::*;
        let commutes =
            |start, ops: &[(WindowOp, u64)], width| window(start, ops, width).commutes(width);
        // one class
        assert!(commutes(250, &[(Add, 3), (Add, 7)], 8), "adds wrap alike");
        assert!(commutes(0, &[(Or, 1), (Or, 2)], 8));
        assert!(commutes(0, &[(Xor, 3), (Xor, 3)], 8));
        assert!(commutes(0xff, &[(And, !1), (And, !2)], 8));
        assert!(commutes(0, &[(Set, 5), (Set, 5)], 8), "stores of one value");
        assert!(
            !commutes(0, &[(Set, 5), (Set, 6)], 8),
            "stores of two values"
        );
        // a store beside anything else
        for op in [(Add, 1), (Or, 1), (Xor, 1), (And, !1)] {
            assert!(!commutes(0, &[(Set, 5), op], 8), "a store and {op:?}");
        }
        assert!(!commutes(0, &[(Other, 0)], 8));
        // bitwise kinds on one bit, and on disjoint bits
        assert!(!commutes(0, &[(Or, 0x10), (Xor, 0x10)], 8));
        assert!(!commutes(0, &[(Or, 0x10), (And, !0x10)], 8));
        assert!(!commutes(0, &[(Xor, 0x10), (And, !0x10)], 8));
        assert!(commutes(0, &[(Or, 0x10), (Xor, 0x20), (And, !0x40)], 8));
        assert!(
            !commutes(0, &[(Or, 1 << 40), (Xor, 1 << 40)], 64),
            "all 64 bits count"
        );
        // adds below the lowest bitwise bit, with and without a carry into it
        assert!(
            commutes(0x81, &[(Or, 0x80), (Add, 2)], 8),
            "the start's own high bit"
        );
        assert!(
            !commutes(0x7f, &[(Or, 0x80), (Add, 1)], 8),
            "a carry reaches bit 7"
        );
        assert!(!commutes(0x01, &[(Xor, 0x04), (Add, 1), (Add, 2)], 8));
        // an operand's bits above the location's width take no part
        assert!(commutes(0, &[(Or, 0x100), (Xor, 0x100)], 8));
        assert!(commutes(0, &[(Add, 0x100), (Or, 1)], 8));
    }

    // The parallel run's bargain (the module's doc): workgroups run in parallel only while no two
    // invocations touch a unit one of them writes. Every sequence of up to five accesses by three
    // invocations to one unit, against that rule, up to the first access that breaks it (the
    // dispatch then runs again in order, and the rest is never asked).
    #[test]
    fn a_parallel_run_ends_at_the_first_access_that_meets_another_invocations_write() {
        let mut checked = 0;
        for n in 1..=5u32 {
            for code in 0..6u32.pow(n) {
                let b = Buffer::new(&[0; 8], true, 4);
                let mut seen: Vec<(u32, bool)> = Vec::new();
                let mut c = code;
                for _ in 0..n {
                    let (who, write) = (1 + c % 3, (c / 3) % 2 == 1);
                    c /= 6;
                    let meets = seen.iter().any(|&(o, w)| o != who && (w || write));
                    // a second unit the others never touch takes no part
                    let got = b.claim(0..2, who, write);
                    assert_eq!(got, !meets, "{seen:?}, then ({who}, write {write})");
                    checked += 1;
                    if meets {
                        break;
                    }
                    seen.push((who, write));
                }
            }
        }
        assert!(checked > 9_000, "{checked} accesses checked");
        // A write that meets another invocation's access in the second unit of its range.
        let b = Buffer::new(&[0; 8], true, 4);
        assert!(b.claim(1..2, 2, false));
        assert!(!b.claim(0..2, 1, true));
        // A buffer the shader cannot write has no owners to meet.
        let r = Buffer::new(&[0; 8], false, 4);
        assert!(r.claim(0..2, 1, false) && r.claim(0..2, 2, false));
    }

    // SPIR-V, Atomic Instructions: atomics of one commuting kind leave one value whatever their
    // order, so the parallel run lets any number of invocations share a unit through them; a
    // plain access or another kind on that unit sends the dispatch to the ordered run.
    #[test]
    fn commuting_atomics_of_one_kind_share_a_unit_and_nothing_else_does() {
        let (add, or) = (COMMUTING, COMMUTING + 1);
        let b = Buffer::new(&[0; 12], true, 4);
        assert!(b.claim_commuting(0..1, add));
        assert!(b.claim_commuting(0..1, add), "the same kind again");
        assert!(!b.claim_commuting(0..2, or), "another kind on unit 0");
        assert!(b.claim(2..3, 1, false));
        assert!(!b.claim_commuting(1..3, add), "a plain read of unit 2");
        let r = Buffer::new(&[0; 4], false, 4);
        assert!(r.claim_commuting(0..1, add) && r.claim_commuting(0..1, or));
    }

    // A dispatch run again (the ordered run after a parallel one, another schedule) starts from
    // what was bound: the bytes, the undefined ranges it was given, and no record of who touched
    // what.
    #[test]
    fn a_buffer_restored_holds_what_was_bound_and_forgets_every_access() {
        let bound = [1u8, 2, 3, 4, 5, 6];
        let b = Buffer::new(&bound, true, 2);
        assert_eq!(b.units(), 4, "6 bytes padded to 8: four 2-byte units");
        b.put(0, 4, 0xdead_beef);
        b.put_taint(0, 8, Taint::undefined(9));
        assert!(b.claim(0..1, 1, true));
        b.wrote(0..1, 1, crate::spirv::ids::LocId::new(3));
        let t = Taint::undefined(2);
        b.restore(&bound, &[(4..6, t)]);
        assert_eq!(b.bytes(), bound);
        let taints: Vec<bool> = (0..4)
            .map(|u| b.get_taint(u * 2, 2).is_undefined())
            .collect();
        assert_eq!(taints, [false, false, true, false]);
        assert!(b.claim(0..1, 2, true), "the first writer forgotten");
        assert_eq!(b.writer_marks().0[0] >> 32, 0, "no last writer");
    }

    // What a run leaves is read out of a buffer by a copy (a buffer two descriptors share) or by
    // taking the buffer apart (the rows change type where they lie): both give the same bytes,
    // taints and writers, and the lowest writers only where they were recorded.
    #[test]
    fn a_buffer_taken_apart_gives_what_a_copy_gives() {
        let bound = [1u8, 2, 3, 4, 5, 6, 7];
        let contents = |record: bool| {
            let mut b = Buffer::new(&bound, true, 2);
            b.record_first_writers(record);
            b.put(4, 2, 0xbeef);
            b.put_taint(0, 2, Taint::undefined(5));
            b.wrote(2..3, 7, crate::spirv::ids::LocId::new(3));
            b.wrote_first(2..3, 7);
            let unwritten: Vec<usize> = b.never_written().collect();
            assert_eq!(unwritten, [0, 1, 3], "unit 2 written");
            let copy = b.contents();
            (copy, b.into_contents())
        };
        for record in [false, true] {
            let (copy, taken) = contents(record);
            for c in [&copy, &taken] {
                assert_eq!(
                    c.bytes,
                    [1, 2, 3, 4, 0xef, 0xbe, 7],
                    "7 bytes, not the padding"
                );
                assert_eq!(c.taint[0], Taint::undefined(5));
                assert_eq!(c.taint[1..], [Taint::NONE; 3]);
                assert_eq!(c.wloc, [0, 0, 7 << 32 | 3, 0]);
                let first = if record {
                    vec![u32::MAX, u32::MAX, 7, u32::MAX]
                } else {
                    vec![]
                };
                assert_eq!(c.first, first, "recorded: {record}");
            }
        }
    }
}
