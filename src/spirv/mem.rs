//! Memory as the interpreter keeps it: 32-bit words with a *taint* word beside each (undefined,
//! order-dependent or inexact, see [`crate::spirv::prov`]) and, for memory several invocations can
//! reach, who last wrote and read each word and when — the race detector's shadow.
//!
//! - **Per-lane memory** (Function, Private, Input variables): word `w` of lane `s` at `w * lanes + s`.
//! - **Shared memory** (Workgroup variables): one array per workgroup, owned by the thread running it.
//! - **Buffers** (storage and uniform buffers, push constants): one array per binding, shared by the
//!   threads running workgroups in parallel, as atomics (relaxed: a race-free kernel touches disjoint
//!   words from different workgroups, so the order does not matter; a racy one is reported as racy).
//!
//! A pointer is an object id and a byte offset, packed in a `u64` slot; [`OOB`] marks a pointer an
//! access chain indexed out of its array's bounds.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Set in a pointer built from an out-of-bounds index.
pub const OOB: u64 = 1 << 63;

/// A pointer to byte `offset` of object `obj`.
#[inline(always)]
pub fn pointer(obj: u32, offset: u32) -> u64 {
    (obj as u64) << 32 | offset as u64
}

/// The object of a pointer.
#[inline(always)]
pub fn ptr_obj(p: u64) -> u32 {
    ((p >> 32) & 0x7fff_ffff) as u32
}

/// The byte offset of a pointer.
#[inline(always)]
pub fn ptr_off(p: u64) -> u32 {
    p as u32
}

/// Who last touched a word and when: `who` = 1 + the invocation's dispatch-wide slot (0 = nobody,
/// [`MANY`] = several readers), `when` = the workgroup barrier epoch (high 16 bits) and the
/// subgroup barrier epoch (low 16 bits), [`ATOMIC_WHEN`] set for an atomic access.
pub const MANY: u32 = u32::MAX;
/// Marks an atomic access in a `when` shadow word.
pub const ATOMIC_WHEN: u32 = 1 << 31;

/// A buffer bound for a dispatch, shared by every workgroup.
#[derive(Debug)]
pub struct Buffer {
    /// the words
    pub vals: Vec<AtomicU32>,
    /// taint per word
    pub taint: Vec<AtomicU32>,
    /// race shadow (empty for read-only buffers)
    pub shadow: Option<Shadow>,
    /// bytes bound
    pub size: u32,
}

/// The race detector's record for every word of a writable buffer.
#[derive(Debug)]
pub struct Shadow {
    /// last writer (1 + dispatch slot)
    pub w_who: Vec<AtomicU32>,
    /// when it wrote
    pub w_when: Vec<AtomicU32>,
    /// instruction location that wrote
    pub w_loc: Vec<AtomicU32>,
    /// last reader (1 + dispatch slot, or MANY)
    pub r_who: Vec<AtomicU32>,
    /// when it read
    pub r_when: Vec<AtomicU32>,
    /// instruction location that read
    pub r_loc: Vec<AtomicU32>,
}

fn zeros(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

impl Shadow {
    /// A clean shadow of `n` words.
    pub fn new(n: usize) -> Shadow {
        Shadow {
            w_who: zeros(n),
            w_when: zeros(n),
            w_loc: zeros(n),
            r_who: zeros(n),
            r_when: zeros(n),
            r_loc: zeros(n),
        }
    }
}

impl Buffer {
    /// A buffer holding `bytes` (padded with zeros to whole words), with a race shadow when writable.
    pub fn new(bytes: &[u8], writable: bool) -> Buffer {
        let n = bytes.len().div_ceil(4);
        let vals: Vec<AtomicU32> = (0..n)
            .map(|k| {
                let mut w = [0u8; 4];
                for (j, b) in w.iter_mut().enumerate() {
                    *b = bytes.get(k * 4 + j).copied().unwrap_or(0);
                }
                AtomicU32::new(u32::from_le_bytes(w))
            })
            .collect();
        Buffer {
            vals,
            taint: zeros(n),
            shadow: writable.then(|| Shadow::new(n)),
            size: bytes.len() as u32,
        }
    }

    /// The bytes now.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.vals.len() * 4);
        for v in &self.vals {
            out.extend_from_slice(&v.load(Relaxed).to_le_bytes());
        }
        out.truncate(self.size as usize);
        out
    }
}

/// A conflict the shadow found: the earlier access it conflicts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// 1 + dispatch slot of the other invocation
    pub other: u32,
    /// its instruction location
    pub other_loc: u32,
    /// the other access wrote (else read)
    pub other_wrote: bool,
}

/// Two accesses by `a` and `b` (1 + dispatch slot) at epochs `ea`, `eb` are unordered: different
/// invocations with no workgroup barrier between them (different workgroups are never ordered), and
/// for two invocations of the same subgroup not separated by a subgroup barrier either.
#[inline(always)]
pub fn unordered(a: u32, ea: u32, b: u32, eb: u32, lanes_per_wg: u32, sg_lanes: u32) -> bool {
    if a == 0 || b == 0 || a == b {
        return false;
    }
    if a == MANY || b == MANY {
        // Several readers: at least one differs from the writer; same-epoch check below.
        return (ea & !ATOMIC_WHEN) >> 16 == (eb & !ATOMIC_WHEN) >> 16;
    }
    let (sa, sb) = (a - 1, b - 1);
    if sa / lanes_per_wg != sb / lanes_per_wg {
        return true;
    }
    let (wa, wb) = ((ea & !ATOMIC_WHEN) >> 16, (eb & !ATOMIC_WHEN) >> 16);
    if wa != wb {
        return false;
    }
    let same_sg = (sa % lanes_per_wg) / sg_lanes == (sb % lanes_per_wg) / sg_lanes;
    !same_sg || (ea & 0xffff) == (eb & 0xffff)
}
