//! Why a value is not an ordinary defined value, and where that came from.
//!
//! Every scalar in a register or a memory word carries a *taint* word beside it: `0` for a defined,
//! exact value; otherwise the low 29 bits name a [`Prov`] (undefined or order-dependent, with the
//! instruction that made it so and the chain of stores it travelled through), and bit 31
//! ([`Taint::is_inexact`]) says the Vulkan precision rules let a device compute a different float on this
//! value's path. Taint flows through arithmetic (the first operand's cause wins), memory and phis;
//! provenance records are created only where a value *becomes* undefined or is stored, so a clean
//! kernel never touches this module while it runs.

use crate::model::{Op, Reason};
use crate::spirv::ids::LocId;
use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

/// Bit 31 of a taint word: the value may legitimately differ on a device (float precision rules).
const INEXACT_BIT: u32 = 1 << 31;
/// Bit 30 of a taint word: the value is one that a legal execution gives, but which one depends on
/// the order in which invocations ran (an atomic's returned value and what it decides); the
/// provenance part then names why. Without it, a provenance means *undefined*.
const ORDER_BIT: u32 = 1 << 30;
/// Bit 29 of a taint word, only beside bit 31: the inexact value is a float's bits — a float, or
/// its bits read as an integer (`OpBitcast`) — so a device's may differ from the model's as that
/// float may: compared as the float, not as a number ([`Taint::is_float_bits`]). Without it an
/// inexact integer is a number (a float converted to an integer), compared within one.
const FLOAT_BITS_BIT: u32 = 1 << 29;
/// The marks of an inexact value: inexact, and how to compare it.
const INEXACT_MARKS: u32 = INEXACT_BIT | FLOAT_BITS_BIT;
/// The provenance part of a taint word.
const PROV_BITS: u32 = !(INEXACT_MARKS | ORDER_BIT);

/// What is known of a value beyond its bits: defined and exact ([`Taint::NONE`]), or undefined or
/// order-dependent with the provenance record that says why ([`Taint::prov`]), and whether the
/// Vulkan precision rules let a device compute a different float on its path
/// ([`Taint::is_inexact`]). One word beside every scalar of a register or of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Taint(u32);

impl Taint {
    /// A defined, exact value.
    pub const NONE: Taint = Taint(0);
    /// A defined float a device may compute differently within the precision rules (compared as a
    /// float wherever its bits go: [`Taint::is_float_bits`]).
    pub const INEXACT: Taint = Taint(INEXACT_MARKS);

    /// The taint of a word as stored (memory keeps taints as plain words).
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> Taint {
        Taint(bits)
    }

    /// The word as stored.
    #[inline(always)]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Undefined, for the reason of provenance record `id` (see [`Provs`]).
    #[inline(always)]
    pub const fn undefined(id: u32) -> Taint {
        Taint(id & PROV_BITS)
    }

    /// The same provenance, as a value one legal execution gives and another order may change.
    #[inline(always)]
    pub const fn order_dependent(self) -> Taint {
        Taint(self.0 | ORDER_BIT)
    }

    /// The same, marked inexact: a float a device may compute differently ([`Taint::INEXACT`]).
    #[inline(always)]
    pub const fn inexact(self) -> Taint {
        Taint(self.0 | INEXACT_MARKS)
    }

    /// The same; where it is inexact, the value is a float's bits (a float, or its bits read as an
    /// integer).
    #[inline(always)]
    pub const fn as_float_bits(self) -> Taint {
        if self.is_inexact() {
            Taint(self.0 | FLOAT_BITS_BIT)
        } else {
            self
        }
    }

    /// The same; where it is inexact, the value is an integer number (a float converted to an
    /// integer, a normalized texel component): compared within one.
    #[inline(always)]
    pub const fn as_number(self) -> Taint {
        Taint(self.0 & !FLOAT_BITS_BIT)
    }

    /// Is the value an inexact float's bits, whatever type reads them (compared as that float)?
    #[inline(always)]
    pub const fn is_float_bits(self) -> bool {
        self.0 & INEXACT_MARKS == INEXACT_MARKS
    }

    /// Defined and exact?
    #[inline(always)]
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Does it make the value undefined (a provenance that is not an order dependence)?
    #[inline(always)]
    pub const fn is_undefined(self) -> bool {
        self.0 & PROV_BITS != 0 && self.0 & ORDER_BIT == 0
    }

    /// Is the value order-dependent (and not undefined)?
    #[inline(always)]
    pub const fn is_order(self) -> bool {
        self.0 & ORDER_BIT != 0
    }

    /// May a device compute a different float here?
    #[inline(always)]
    pub const fn is_inexact(self) -> bool {
        self.0 & INEXACT_BIT != 0
    }

    /// Does it name a provenance record (undefined or order-dependent)?
    #[inline(always)]
    pub const fn has_prov(self) -> bool {
        self.0 & PROV_BITS != 0
    }

    /// The provenance record's id (0: none).
    #[inline(always)]
    pub const fn prov(self) -> u32 {
        self.0 & PROV_BITS
    }

    /// Provenance and order dependence, without the inexact marks.
    #[inline(always)]
    pub const fn without_inexact(self) -> Taint {
        Taint(self.0 & !INEXACT_MARKS)
    }

    /// The marks (inexact, order-dependent) without the provenance.
    #[inline(always)]
    pub const fn flags(self) -> Taint {
        Taint(self.0 & !PROV_BITS)
    }

    /// Only the inexact marks.
    #[inline(always)]
    pub const fn inexact_part(self) -> Taint {
        Taint(self.0 & INEXACT_MARKS)
    }

    /// Both marks' union with `other`'s, the provenance of whichever `combine` picks.
    #[inline(always)]
    pub const fn combine(self, other: Taint) -> Taint {
        combine(self, other)
    }
}

/// Adds the flags of the right side (used as `t | Taint::INEXACT`; both sides naming a provenance
/// is a mistake `combine` exists for).
impl std::ops::BitOr for Taint {
    type Output = Taint;
    #[inline(always)]
    fn bitor(self, o: Taint) -> Taint {
        debug_assert!(!(self.has_prov() && o.has_prov() && self.prov() != o.prov()));
        Taint(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Taint {
    #[inline(always)]
    fn bitor_assign(&mut self, o: Taint) {
        *self = *self | o;
    }
}

/// Does this taint make the value undefined (a provenance that is not an order dependence)?
#[inline(always)]
pub const fn is_undefined(t: Taint) -> bool {
    t.is_undefined()
}

/// Combines the taints of two operands: an undefined cause first (the first operand's if both),
/// then an order dependence (likewise), and inexact if either is.
#[inline(always)]
pub const fn combine(a: Taint, b: Taint) -> Taint {
    let r = if a.is_undefined() {
        a
    } else if b.is_undefined() {
        b
    } else if a.is_order() {
        a
    } else {
        b
    };
    Taint((r.0 & !INEXACT_MARKS) | ((a.0 | b.0) & INEXACT_MARKS))
}

pub use crate::words::int::ScalarUndef;

/// Why a value is undefined or order-dependent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// a subgroup operation's result the model leaves undefined (the model's reason)
    Subgroup {
        /// the operation
        op: Op,
        /// the model's reason
        reason: Reason,
    },
    /// a subgroup operation whose tangle (the invocations executing it together) depends on a
    /// branch an invocation took on an undefined value, at `construct` (the parent: that value)
    LostTangle {
        /// the operation
        op: Op,
        /// header label id of the construct where the branch was
        construct: u32,
    },
    /// a subgroup operation whose argument (id, delta, …) is not dynamically uniform where the
    /// spec requires it
    NotUniform {
        /// the operation
        op: Op,
        /// the argument
        arg: &'static str,
    },
    /// a subgroup operation's argument the model rejects (cluster size, quad index, …)
    BadArgument {
        /// the operation
        op: Op,
        /// the model's message
        why: String,
    },
    /// a GLSL.std.450 function outside its defined domain (sqrt of a negative number, …)
    Glsl {
        /// the rule
        why: &'static str,
    },
    /// `OpUndef`
    Undef,
    /// a component an `OpVectorShuffle` selects with 0xFFFFFFFF
    UndefComponent,
    /// a read of memory never written
    Uninitialized {
        /// the variable's name
        var: String,
        /// its storage class
        storage: &'static str,
    },
    /// an access outside the object's bounds
    OutOfBounds {
        /// the variable
        var: String,
        /// byte offset
        offset: u64,
        /// its size in bytes
        size: u64,
    },
    /// an access chain into an array of descriptors, not decorated `NonUniform`, whose index
    /// differs between invocations of a subgroup executing it together: two of them (lane in the
    /// subgroup, index)
    NonUniformDescriptor {
        /// the array's name
        array: String,
        /// two invocations with different indices
        lanes: [(u32, i64); 2],
    },
    /// an access through an index past an array of descriptors
    PastArray {
        /// the element the index names (`cs[2]`)
        element: String,
        /// the descriptors in the array
        count: u32,
    },
    /// a scalar rule (division by zero, shift, conversion)
    Scalar(ScalarUndef),
    /// an image read or write the image rules leave undefined (a texel outside the image, a value
    /// that does not fit the texel format), with the rule
    Image {
        /// what happened and the rule
        why: String,
    },
    /// a dynamic index beyond a vector's or array value's length
    IndexOutOfRange {
        /// the index
        index: u64,
        /// the length
        len: u32,
    },
    /// written by an invocation whose path depends on an undefined value (a branch at `construct`)
    LostPath {
        /// header label id of the construct where the branch was
        construct: u32,
    },
    /// the value an atomic returned: depends on the order the device ran the atomics in
    AtomicOrder,
    /// a reading of a clock (`OpReadClockKHR`; its scope the device, or else the subgroup):
    /// what it reads is when the device ran it
    Clock {
        /// the device's clock (not the subgroup's)
        device: bool,
    },
    /// a value another workgroup wrote, read without a happens-before with the write: which one a
    /// read sees depends on how the device schedules workgroups
    WorkgroupOrder,
    /// a value that another order of the workgroups (`--schedules`) left different
    ScheduleOrder,
    /// never written in this execution, but a store on a path not taken at a branch of
    /// `construct` (undefined or order-dependent) may write it
    PathNotTaken {
        /// header label id of the construct
        construct: u32,
    },
    /// written by an invocation whose path was decided by an order-dependent value (a branch at
    /// `construct` on an atomic's result): one legal execution's path
    OrderPath {
        /// header label id of the construct where the branch was
        construct: u32,
    },
    /// memory written or read by two invocations without a barrier between them, one writing
    Race,
    /// memory written through a pointer whose value is undefined (which word is unknown)
    UndefinedPointer,
    /// an access through a device address (`PhysicalStorageBuffer`) that lies in no buffer of
    /// the dispatch: Vulkan gives such an access no meaning (no robustness covers it)
    NoBuffer {
        /// the address
        address: u64,
        /// bytes accessed
        bytes: u32,
    },
    /// an access through a device address that is not a multiple of the alignment the module
    /// declares for it (its `Aligned` memory operand): SPIR-V leaves such an access undefined
    Misaligned {
        /// the address
        address: u64,
        /// the declared alignment
        align: u32,
    },
    /// stored to memory at this instruction (a link in a chain; the parent is the value's cause)
    Stored,
    /// undefined in the buffer the run was given (an earlier run's result)
    Input {
        /// the earlier chain
        why: String,
    },
}

/// One provenance record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prov {
    /// what happened
    pub cause: Cause,
    /// where (a location of the kernel)
    pub loc: LocId,
    /// the earlier record this one carries forward (for `Stored`)
    pub parent: u32,
}

/// Every provenance record of a run, shared by the threads running workgroups (id 0 is "none").
#[derive(Debug)]
pub struct Provs {
    list: RwLock<Vec<Prov>>,
    index: Mutex<HashMap<Prov, u32>>,
}

impl Default for Provs {
    fn default() -> Self {
        Provs {
            list: RwLock::new(vec![Prov {
                cause: Cause::Undef,
                loc: Default::default(),
                parent: 0,
            }]),
            index: Mutex::new(HashMap::new()),
        }
    }
}

impl Provs {
    /// The id of `p`, creating it if new (identical records share an id).
    pub fn intern(&self, p: Prov) -> u32 {
        let mut idx = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = idx.get(&p) {
            return *id;
        }
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        let id = list.len() as u32;
        if id >= PROV_BITS {
            // Out of ids (2^29 distinct causes): reuse the last one rather than corrupt taint words.
            return id - 1;
        }
        list.push(p.clone());
        idx.insert(p, id);
        id
    }

    /// The record `id`.
    pub fn get(&self, id: u32) -> Prov {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner());
        list.get((id & PROV_BITS) as usize)
            .cloned()
            .unwrap_or(Prov {
                cause: Cause::Undef,
                loc: Default::default(),
                parent: 0,
            })
    }

    /// The chain from a taint's record back to its origin: `[stored at …, …, origin]`.
    pub fn chain(&self, t: Taint) -> Vec<Prov> {
        let mut out = Vec::new();
        let mut cur = t.prov();
        while cur != 0 && out.len() < 64 {
            let p = self.get(cur);
            let parent = p.parent;
            out.push(p);
            cur = parent;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{combine, Taint};

    // A result computed from two operands (docs/interpreter.md, "What the model says of a kernel";
    // SPIR-V 2.2.2: an operation on an undefined value gives an undefined one): undefined if
    // either operand is — the first operand's cause named if both are —, else order-dependent if
    // either is, and inexact (compared within a bound, not bit for bit) if either is, whatever
    // else it is: two inexact operands give an inexact result.
    #[test]
    fn a_result_takes_an_undefined_cause_first_then_an_order_dependence_and_inexact_from_either() {
        let (u1, u2) = (Taint::undefined(1), Taint::undefined(2));
        let o3 = Taint::undefined(3).order_dependent();
        let i = Taint::INEXACT;
        assert_eq!(combine(u1, u2), u1);
        assert_eq!(combine(u2, u1), u2);
        assert_eq!(combine(o3, u2), u2);
        assert_eq!(combine(u1, o3), u1);
        assert_eq!(combine(Taint::NONE, o3), o3);
        assert_eq!(combine(o3, Taint::NONE), o3);
        assert_eq!(combine(Taint::NONE, Taint::NONE), Taint::NONE);
        for (a, b) in [
            (i, i),
            (i, Taint::NONE),
            (Taint::NONE, i),
            (u1.inexact(), i),
            (o3, i.inexact()),
        ] {
            assert!(combine(a, b).is_inexact(), "{a:?} {b:?}");
        }
        assert_eq!(combine(i, i), i);
        assert_eq!(combine(u1.inexact(), u2.inexact()), u1.inexact());
        assert!(!combine(u1, o3).is_inexact());
    }

    // How an inexact value is compared (docs/interpreter.md, Decisions, "An inexact float's bits
    // are compared as that float, whatever type reads them"): a float, or its bits read as an
    // integer, as that float; an integer computed from a float (Vulkan, "Fixed-Point Data
    // Conversion": a conversion within one) as a number, within one. A value that is not
    // inexact is neither: it is compared bit for bit.
    // A value one legal execution gives and another order may change stays so, whatever else is
    // said of it again (docs/interpreter.md, "What the model says of a kernel": order-dependent is
    // a mark on the provenance, not a toggle); it keeps its provenance and its inexact marks.
    #[test]
    fn marking_a_value_order_dependent_twice_leaves_it_order_dependent() {
        let u = Taint::undefined(9);
        let o = u.order_dependent();
        assert!(o.is_order() && !u.is_order());
        assert_eq!(o.order_dependent(), o);
        assert_eq!(o.prov(), u.prov());
        assert!(!o.is_undefined() && u.is_undefined());
        let i = u.inexact().order_dependent();
        assert!(i.is_order() && i.is_inexact() && i.order_dependent().is_order());
    }

    #[test]
    fn an_inexact_value_is_compared_as_a_floats_bits_unless_it_became_a_number() {
        assert!(Taint::INEXACT.is_float_bits());
        assert!(Taint::INEXACT.as_number().is_inexact());
        assert!(!Taint::INEXACT.as_number().is_float_bits());
        assert!(Taint::INEXACT.as_number().as_float_bits().is_float_bits());
        assert!(!Taint::NONE.is_float_bits());
        assert!(
            !Taint::NONE.as_float_bits().is_float_bits(),
            "only beside inexact"
        );
        let u = Taint::undefined(5);
        assert!(u.inexact().is_float_bits());
        assert!(!u.inexact().as_number().is_float_bits());
    }
}
