//! What a run finds that is not a plain value difference — races, barriers not every invocation
//! reached, accesses outside an object, paths an undefined value chose, `OpUnreachable` executed,
//! waits on another workgroup — and how occurrences of one are grouped for the report.

use crate::spirv::inst::{LocId, ObjectId};
use crate::spirv::prov::Taint;

/// An index past the end of an array of descriptors (GLSL `cs[2]` of `cs[2]`), where an access
/// reaches no descriptor at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PastArray {
    /// the index (`u32::MAX`: negative, or past 32 bits)
    pub index: u32,
    /// the descriptors in the array
    pub count: u32,
}

/// Something the run found that is not a plain value difference.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// two unordered accesses to overlapping memory, at least one a write, not both atomic in each
    /// other's scope
    Race {
        /// object (variable) index
        object: ObjectId,
        /// byte offset of the access that found it
        offset: u32,
        /// the earlier access: invocation (dispatch slot), location, whether it wrote
        a: (u32, LocId, bool),
        /// the access that found the race
        b: (u32, LocId, bool),
        /// whether the two sides leave different values
        class: RaceClass,
        /// a control barrier lies between the two (same workgroup) but its memory semantics do
        /// not include this memory
        fence_missing: bool,
        /// barriers or atomics order the two, but one of them is a *private* access (memory not
        /// `coherent`: Appendix B, Private vs. Non-Private)
        private: bool,
    },
    /// a workgroup barrier not reached by every invocation of the workgroup
    DivergentBarrier {
        /// the barrier
        loc: LocId,
        /// workgroup
        workgroup: [u32; 3],
        /// invocations that did reach it
        reached: u32,
        /// invocations that should have
        expected: u32,
    },
    /// an access outside an object
    OutOfBounds {
        /// object (for an index past an array of descriptors, the array's first element)
        object: ObjectId,
        /// byte offset (for an index past an array of descriptors, 0)
        offset: u64,
        /// the index past an array of descriptors the access went through, if it did
        past_array: Option<PastArray>,
        /// the access
        loc: LocId,
        /// dispatch slot of the invocation
        slot: u32,
        /// a write (else a read)
        write: bool,
    },
    /// an invocation whose path depends on an undefined value (branch at `construct`)
    LostPath {
        /// header label id of the construct
        construct: u32,
        /// the branch's location
        loc: LocId,
        /// the taint of the condition
        taint: Taint,
        /// dispatch slot
        slot: u32,
    },
    /// `OpUnreachable` was reached
    Unreachable {
        /// where
        loc: LocId,
    },
    /// a loop whose exit waits for a value another workgroup writes: Vulkan gives no forward
    /// progress guarantee between workgroups, so on a device that does not run the other one
    /// alongside, it never ends (decoupled look-back, inter-workgroup locks)
    SpinWait {
        /// the loop's exit branch
        loc: LocId,
        /// the waiting workgroup
        workgroup: [u32; 3],
        /// the loop went round with nothing changing: in this schedule it never ends
        stuck: bool,
    },
    /// a line `debugPrintfEXT` printed (fails nothing)
    Print {
        /// the instruction
        loc: LocId,
        /// dispatch slot of the invocation
        slot: u32,
        /// the workgroup's lane-instructions before it ran (orders one invocation's lines)
        seq: u64,
        /// the line
        text: String,
        /// the invocation's path depends on an undefined value (it may not print this at all)
        lost: bool,
    },
}

/// What a race does to the values involved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RaceClass {
    /// the two sides leave different values: the value read, or left in memory, is undefined
    Value,
    /// both sides leave the same value (every invocation stores one value to one place): still a
    /// data race by the spec, but every order gives that value, which is kept
    SameValue,
}

/// Occurrences kept of each group of findings (the count goes on): the first ones in a fixed order
/// (by invocation, then byte), whichever thread found them first.
pub const EXAMPLES: usize = 8;

/// Lines kept of each `debugPrintfEXT` (the count goes on).
pub const PRINTS: usize = 64;

/// What makes findings one group: their kind, the variable, the instructions (both sides of a
/// race) and the class.
pub type GroupKey = (u8, u32, u32, u32, u32);

/// Findings of one kind at one place: how many, and the first occurrences.
#[derive(Clone, Debug, PartialEq)]
pub struct FindingGroup {
    /// occurrences in all
    pub count: u64,
    /// the first `EXAMPLES` occurrences, in a fixed order
    pub examples: Vec<Finding>,
}

impl Finding {
    /// Does this finding leave nothing the dispatch wrote pinned down — a barrier not every
    /// invocation reached, a write outside a variable, or an `OpUnreachable` executed
    /// (`ModelRun::poisoned`)? Each is undefined behaviour, not an undefined value: SPIR-V,
    /// OpUnreachable: "Behavior is undefined if this instruction is executed" — a compiler may
    /// take the way to it as never taken and run the other way's stores in those invocations.
    pub fn poisons(&self) -> bool {
        matches!(
            self,
            Finding::DivergentBarrier { .. }
                | Finding::OutOfBounds { write: true, .. }
                | Finding::Unreachable { .. }
        )
    }

    /// The group this finding belongs to (a race's two sides in a fixed order).
    pub fn group_key(&self) -> GroupKey {
        match self {
            Finding::Race {
                object,
                a,
                b,
                class,
                private,
                ..
            } => {
                let (x, y) = if (a.1, a.2) <= (b.1, b.2) {
                    (a, b)
                } else {
                    (b, a)
                };
                (
                    0,
                    object.get(),
                    x.1.get(),
                    y.1.get(),
                    (*class as u32) << 3 | (*private as u32) << 2 | (x.2 as u32) << 1 | y.2 as u32,
                )
            }
            Finding::OutOfBounds {
                object,
                loc,
                write,
                past_array,
                ..
            } => (
                1,
                object.get(),
                loc.get(),
                0,
                (past_array.is_some() as u32) << 1 | *write as u32,
            ),
            Finding::DivergentBarrier { loc, .. } => (2, 0, loc.get(), 0, 0),
            Finding::LostPath { construct, loc, .. } => (3, *construct, loc.get(), 0, 0),
            Finding::Unreachable { loc } => (4, 0, loc.get(), 0, 0),
            Finding::SpinWait { loc, stuck, .. } => (5, 0, loc.get(), 0, *stuck as u32),
            Finding::Print { loc, .. } => (6, 0, loc.get(), 0, 0),
        }
    }

    /// The order of occurrences within a group: by invocation, then byte.
    pub fn order_key(&self) -> (u64, u64, u64) {
        match self {
            Finding::Race { offset, a, b, .. } => {
                (a.0.min(b.0) as u64, a.0.max(b.0) as u64, *offset as u64)
            }
            Finding::OutOfBounds {
                slot,
                offset,
                past_array,
                ..
            } => (
                *slot as u64,
                *offset,
                past_array.map_or(0, |p| p.index as u64),
            ),
            Finding::DivergentBarrier {
                workgroup, reached, ..
            } => (
                workgroup[2] as u64,
                (workgroup[1] as u64) << 32 | workgroup[0] as u64,
                *reached as u64,
            ),
            Finding::LostPath { slot, taint, .. } => (*slot as u64, taint.bits() as u64, 0),
            Finding::Unreachable { .. } => (0, 0, 0),
            Finding::SpinWait { workgroup, .. } => (
                workgroup[2] as u64,
                (workgroup[1] as u64) << 32 | workgroup[0] as u64,
                0,
            ),
            Finding::Print { slot, seq, .. } => (*slot as u64, *seq, 0),
        }
    }

    /// Occurrences of this finding's group kept as examples.
    pub fn kept(&self) -> usize {
        match self {
            Finding::Print { .. } => PRINTS,
            _ => EXAMPLES,
        }
    }
}
