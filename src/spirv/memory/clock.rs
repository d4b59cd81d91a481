//! Happens-before between the invocations of a dispatch, for what compute kernels use (Vulkan
//! spec, Appendix B "Memory Model"): program order, control barriers with their memory semantics,
//! memory barriers (fences) and atomics with release/acquire semantics, each at its scope.
//!
//! An access is stamped with an [`Access`]: who made it and *when* in its invocation's terms. Whether
//! an earlier access happens-before the invocation now accessing ([`Now`]) is then decided from the
//! stamps, without a vector clock per invocation in the common case:
//!
//! - **Program order**: the same invocation.
//! - **Control barriers**: every workgroup counts its barriers per storage-class family
//!   ([`Family`]); an access before a barrier that orders its family has a smaller epoch than one
//!   after it (same workgroup). Subgroup barriers do the same per subgroup.
//! - **Release/acquire** (atomics and fences, any scope that includes both parties): an invocation
//!   that acquires from a location gains the [`Knowledge`] the releasing invocation had when it
//!   released — the epochs of workgroups and the release clocks of invocations it had seen — and a
//!   workgroup barrier shares what each participant knew with all of them.

/// The storage classes whose accesses a barrier's memory semantics order, in the three families
/// SPIR-V's "Memory Semantics" names: memory of one workgroup (`WorkgroupMemory`), buffers
/// (`UniformMemory`: StorageBuffer, PhysicalStorageBuffer and Uniform memory) and images
/// (`ImageMemory`: image contents, texel buffers included). A barrier or fence orders the
/// accesses of the families its semantics name, and no others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Workgroup variables
    Shared = 0,
    /// storage, uniform and physical storage buffers
    Buffer = 1,
    /// storage images and texel buffers
    Image = 2,
}

/// How many [`Family`]s there are (the length of the per-family epoch arrays).
pub const FAMILIES: usize = 3;

/// Memory semantics bits of SPIR-V (`MemorySemanticsMask`), the ones the interpreter reads (as
/// rspirv names them).
pub mod semantics {
    use rspirv::spirv::MemorySemantics as M;

    /// Acquire
    pub const ACQUIRE: u32 = M::ACQUIRE.bits();
    /// Release
    pub const RELEASE: u32 = M::RELEASE.bits();
    /// AcquireRelease
    pub const ACQUIRE_RELEASE: u32 = M::ACQUIRE_RELEASE.bits();
    /// SequentiallyConsistent (treated as acquire and release)
    pub const SEQ_CST: u32 = M::SEQUENTIALLY_CONSISTENT.bits();
    /// UniformMemory: storage buffers (and physical storage buffers)
    pub const UNIFORM_MEMORY: u32 = M::UNIFORM_MEMORY.bits();
    /// WorkgroupMemory
    pub const WORKGROUP_MEMORY: u32 = M::WORKGROUP_MEMORY.bits();
    /// ImageMemory
    pub const IMAGE_MEMORY: u32 = M::IMAGE_MEMORY.bits();

    /// Has release semantics.
    pub fn releases(s: u32) -> bool {
        s & (RELEASE | ACQUIRE_RELEASE | SEQ_CST) != 0
    }

    /// Has acquire semantics.
    pub fn acquires(s: u32) -> bool {
        s & (ACQUIRE | ACQUIRE_RELEASE | SEQ_CST) != 0
    }

    /// The families whose accesses these semantics order, indexed by [`super::Family`].
    pub fn families(s: u32) -> [bool; super::FAMILIES] {
        [
            s & WORKGROUP_MEMORY != 0,
            s & UNIFORM_MEMORY != 0,
            s & IMAGE_MEMORY != 0,
        ]
    }
}

/// A SPIR-V scope (`Scope`), as far as it decides who is ordered with whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// `Invocation` (4)
    Invocation = 0,
    /// `Subgroup` (3)
    Subgroup = 1,
    /// `Workgroup` (2)
    Workgroup = 2,
    /// `Device` (1), `QueueFamily` (5), `CrossDevice` (0)
    Device = 3,
}

impl Scope {
    /// The scope of a SPIR-V scope literal (an unknown one is read as the widest).
    pub fn from_spirv(s: u32) -> Scope {
        use rspirv::spirv::Scope as S;
        match S::from_u32(s) {
            Some(S::Invocation) => Scope::Invocation,
            Some(S::Subgroup) => Scope::Subgroup,
            Some(S::Workgroup) => Scope::Workgroup,
            _ => Scope::Device,
        }
    }
}

/// Flags of an [`Access`].
pub mod flags {
    /// an atomic access
    pub const ATOMIC: u32 = 1;
    /// the scope of an atomic, 2 bits at this shift ([`super::Scope`] as a number)
    pub const SCOPE_SHIFT: u32 = 1;
    /// the class of an atomic's write, 4 bits at this shift (atomic writes of one nonzero class
    /// commute with each other: [`crate::spirv::inst::AtomicOp::commute_class`])
    pub const CLASS_SHIFT: u32 = 3;
    /// the write left the memory as it was (it stored the value already there)
    pub const SAME: u32 = 1 << 7;
    /// a *private* access (Appendix B, Private vs. Non-Private): no barrier or atomic orders it
    /// with another invocation's access to the same location
    pub const PRIVATE: u32 = 1 << 8;
}

/// One access as the race shadow keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// 1 + the invocation's dispatch-wide slot; 0 = no access
    pub who: u32,
    /// the instruction
    pub loc: crate::spirv::ids::LocId,
    /// the workgroup's barrier epoch of the memory's family at the access
    pub epoch: u32,
    /// the subgroup's barrier epoch of the family at the access
    pub sg: u32,
    /// the invocation's release clock at the access
    pub clock: u32,
    /// [`flags`]
    pub flags: u32,
    /// workgroup control barriers the workgroup had executed, whatever their semantics (to tell a
    /// race across a barrier whose semantics leave this memory out)
    pub bars: u32,
}

/// Which synchronization interval of its invocation an access ran in: the workgroup's control
/// barriers so far, the subgroup's barrier epoch and the invocation's release clock. Two reads of
/// one instruction in one interval race with the same later writes. (An acquire between them
/// cannot tell them apart here: the model runs a workgroup up to each barrier before any
/// invocation it could wait for, so no write run after the first read is released to it before
/// the second.)
pub type Interval = [u32; 3];

impl Access {
    /// The synchronization interval of its invocation this access ran in.
    #[inline(always)]
    pub fn interval(&self) -> Interval {
        [self.bars, self.sg, self.clock]
    }

    /// Whether this is an atomic access.
    #[inline(always)]
    pub fn atomic(&self) -> bool {
        self.flags & flags::ATOMIC != 0
    }

    /// Whether this is a private access.
    #[inline(always)]
    pub fn private(&self) -> bool {
        self.flags & flags::PRIVATE != 0
    }

    /// The scope of an atomic access.
    #[inline(always)]
    pub fn scope(&self) -> Scope {
        match (self.flags >> flags::SCOPE_SHIFT) & 3 {
            0 => Scope::Invocation,
            1 => Scope::Subgroup,
            2 => Scope::Workgroup,
            _ => Scope::Device,
        }
    }

    /// The commute class of an atomic write (0: commutes with nothing).
    #[inline(always)]
    pub fn class(&self) -> u32 {
        (self.flags >> flags::CLASS_SHIFT) & 15
    }
}

/// What an invocation has acquired about others: for workgroups, the barrier epoch of each family
/// before which their accesses happen-before it; for invocations, the release clock before which
/// theirs do. Kept sorted; empty for almost every invocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Knowledge {
    /// (workgroup, epoch bound of each of its families, indexed by [`Family`])
    pub wgs: Vec<(u32, [u32; FAMILIES])>,
    /// (slot + 1, clock bound)
    pub slots: Vec<(u32, u32)>,
}

impl Knowledge {
    /// Nothing known.
    pub fn is_empty(&self) -> bool {
        self.wgs.is_empty() && self.slots.is_empty()
    }

    /// Joins `other` into `self` (pointwise maximum): one merge of the sorted lists, linear in
    /// their lengths (a release sequence's record can know every invocation of a dispatch, and each
    /// acquire joins it).
    pub fn join(&mut self, other: &Knowledge) {
        merge_max(&mut self.wgs, &other.wgs, |e, x| {
            for (e, x) in e.iter_mut().zip(x) {
                *e = (*e).max(*x);
            }
        });
        merge_max(&mut self.slots, &other.slots, |c, x| *c = (*c).max(*x));
    }

    /// Knows the accesses of `who` with a clock below `c`.
    pub fn raise_slot(&mut self, who: u32, c: u32) {
        merge_max(&mut self.slots, &[(who, c)], |a, x| *a = (*a).max(*x));
    }

    /// Knows the accesses of workgroup `wg` before these epochs (one per [`Family`]).
    pub fn raise_wg(&mut self, wg: u32, epochs: [u32; FAMILIES]) {
        self.join(&Knowledge {
            wgs: vec![(wg, epochs)],
            slots: Vec::new(),
        });
    }

    /// Does an access `a` of workgroup `wg` (family `f`) happen-before whoever knows this?
    #[inline]
    pub fn covers(&self, a: &Access, wg: u32, f: Family) -> bool {
        if let Ok(i) = self.slots.binary_search_by_key(&a.who, |e| e.0)
            && a.clock < self.slots[i].1
        {
            return true;
        }
        self.wgs
            .binary_search_by_key(&wg, |e| e.0)
            .is_ok_and(|i| a.epoch < self.wgs[i].1[f as usize])
    }
}

/// Merges the sorted, key-unique list `from` into the sorted, key-unique list `into`: an entry of a
/// key both hold is combined by `max`, one only `from` holds is added; `into` stays sorted.
fn merge_max<V: Copy>(into: &mut Vec<(u32, V)>, from: &[(u32, V)], max: impl Fn(&mut V, &V)) {
    match from {
        [] => {}
        [(k, v)] => match into.binary_search_by_key(k, |e| e.0) {
            Ok(i) => max(&mut into[i].1, v),
            Err(i) => into.insert(i, (*k, *v)),
        },
        _ => {
            let mut out = Vec::with_capacity(into.len() + from.len());
            let (mut a, mut b) = (into.iter().peekable(), from.iter().peekable());
            loop {
                match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        let mut e = **x;
                        max(&mut e.1, &y.1);
                        out.push(e);
                        a.next();
                        b.next();
                    }
                    (Some(x), Some(y)) if x.0 < y.0 => out.push(*a.next().unwrap()),
                    (Some(_), Some(_)) | (None, Some(_)) => out.push(*b.next().unwrap()),
                    (Some(_), None) => out.push(*a.next().unwrap()),
                    (None, None) => break,
                }
            }
            *into = out;
        }
    }
}

/// The accessing invocation, as happens-before needs it.
#[derive(Clone, Copy, Debug)]
pub struct Now<'a> {
    /// 1 + dispatch slot
    pub who: u32,
    /// its workgroup (linear)
    pub wg: u32,
    /// its subgroup within the workgroup
    pub sg_index: u32,
    /// lanes per workgroup in the slot numbering
    pub lanes_per_wg: u32,
    /// lanes per subgroup
    pub sg_lanes: u32,
    /// the workgroup's epoch of the family accessed
    pub epoch: u32,
    /// the subgroup's epoch of the family accessed
    pub sg: u32,
    /// what it has acquired
    pub knows: Option<&'a Knowledge>,
}

impl Now<'_> {
    /// Does access `a` (to memory of family `f`) happen-before this invocation's next access?
    #[inline]
    pub fn after(&self, a: &Access, f: Family) -> bool {
        if a.who == self.who {
            return true;
        }
        let slot = a.who - 1;
        let wg = slot / self.lanes_per_wg;
        if wg == self.wg {
            // Epochs only grow within a workgroup's run.
            if a.epoch != self.epoch {
                return true;
            }
            let sg_index = (slot % self.lanes_per_wg) / self.sg_lanes;
            if sg_index == self.sg_index && a.sg != self.sg {
                return true;
            }
        }
        match self.knows {
            Some(k) => k.covers(a, wg, f),
            None => false,
        }
    }

    /// Are two atomic accesses (`a` earlier, this one of scope `mine`) each within the other's
    /// scope (so that they are ordered by their atomicity and do not race)?
    #[inline]
    pub fn mutual_scope(&self, a: &Access, mine: Scope) -> bool {
        let needed = scope_between(a.who, self.who, self.lanes_per_wg, self.sg_lanes);
        a.scope() >= needed && mine >= needed
    }
}

/// The narrowest scope that includes two invocations (1 + their dispatch slots; `lanes_per_wg`
/// slots per workgroup, `sg_lanes` per subgroup): an operation of that scope or wider by one is
/// in the other's scope (Appendix B, Scope: the invocation itself, its subgroup, its workgroup,
/// every invocation of the device).
#[inline]
pub fn scope_between(a: u32, b: u32, lanes_per_wg: u32, sg_lanes: u32) -> Scope {
    if a == b {
        return Scope::Invocation;
    }
    let (a, b) = (a - 1, b - 1);
    if a / lanes_per_wg != b / lanes_per_wg {
        Scope::Device
    } else if (a % lanes_per_wg) / sg_lanes != (b % lanes_per_wg) / sg_lanes {
        Scope::Workgroup
    } else {
        Scope::Subgroup
    }
}

/// What a location's last release left for acquirers: the releasers' knowledge, the first
/// releaser (1 + its dispatch slot), the narrowest scope that includes every releaser joined into
/// it (`spread`), and the narrowest scope among their releases. A release sequence continued by
/// other invocations' releasing read-modify-writes is one record, so an acquirer synchronizes
/// with it only where *every* release in it and the acquire are in each other's scope
/// ([`SyncRecord::needed`]) — the spec would let it synchronize with the ones in scope alone;
/// the record cannot tell their knowledge apart, so it errs towards a race.
#[derive(Clone, Debug)]
pub(crate) struct SyncRecord {
    pub knows: Knowledge,
    pub who: u32,
    pub spread: Scope,
    pub scope: Scope,
}

impl Default for SyncRecord {
    fn default() -> Self {
        SyncRecord {
            knows: Knowledge::default(),
            who: 0,
            spread: Scope::Invocation,
            scope: Scope::Device,
        }
    }
}

impl SyncRecord {
    /// Joins the release of invocation `who` (`lanes_per_wg` and `sg_lanes` place it) at `scope`.
    pub(crate) fn join(
        &mut self,
        k: &Knowledge,
        (who, scope): (u32, Scope),
        lanes_per_wg: u32,
        sg_lanes: u32,
    ) {
        if self.knows.is_empty() {
            self.who = who;
            self.spread = Scope::Invocation;
            self.scope = scope;
        } else {
            self.spread = self
                .spread
                .max(scope_between(self.who, who, lanes_per_wg, sg_lanes));
            self.scope = self.scope.min(scope);
        }
        self.knows.join(k);
    }

    /// The narrowest scope that includes every releaser and the acquirer `who`: the releases' and
    /// the acquire's scopes must both reach it to synchronize (the scopes nest, so it is the wider
    /// of the releasers' spread and the first releaser's distance to the acquirer).
    pub(crate) fn needed(&self, who: u32, lanes_per_wg: u32, sg_lanes: u32) -> Scope {
        self.spread
            .max(scope_between(self.who, who, lanes_per_wg, sg_lanes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Happens-before is transitive (Vulkan spec, Appendix B, "Happens-before"): what an acquire
    /// learns is the union of what it knew and what the release knew, each bound the larger of the
    /// two. Joins of one entry, of many, into nothing and of nothing, against a per-key maximum.
    #[test]
    fn knowledge_join_is_the_pointwise_maximum_of_both_sides() {
        let mut k = Knowledge::default();
        let other = Knowledge {
            wgs: vec![(1, [1, 2, 3]), (4, [0, 9, 0])],
            slots: vec![(2, 5), (7, 1), (9, 4)],
        };
        k.join(&other);
        assert_eq!(k, other);
        k.join(&Knowledge::default());
        assert_eq!(k, other);
        k.join(&Knowledge {
            wgs: vec![(0, [1, 1, 1]), (4, [5, 1, 0]), (6, [0, 0, 2])],
            slots: vec![(1, 3), (2, 2), (7, 6), (10, 1)],
        });
        assert_eq!(
            k,
            Knowledge {
                wgs: vec![
                    (0, [1, 1, 1]),
                    (1, [1, 2, 3]),
                    (4, [5, 9, 0]),
                    (6, [0, 0, 2])
                ],
                slots: vec![(1, 3), (2, 5), (7, 6), (9, 4), (10, 1)],
            }
        );
        k.join(&Knowledge {
            wgs: vec![(5, [7, 7, 7])],
            slots: vec![(9, 8)],
        });
        assert_eq!(k.wgs[3], (5, [7, 7, 7]));
        assert_eq!(k.slots[3], (9, 8));
        assert!(k.wgs.windows(2).all(|w| w[0].0 < w[1].0));
    }

    fn now(who: u32, epoch: u32, knows: Option<&Knowledge>) -> Now<'_> {
        Now {
            who,
            wg: (who - 1) / 8,
            sg_index: ((who - 1) % 8) / 4,
            lanes_per_wg: 8,
            sg_lanes: 4,
            epoch,
            sg: 0,
            knows,
        }
    }

    fn acc(who: u32, epoch: u32, clock: u32) -> Access {
        Access {
            who,
            epoch,
            clock,
            ..Access::default()
        }
    }

    // Vulkan memory model: program order orders an invocation's own accesses.
    #[test]
    fn program_order_orders_an_invocations_own_accesses() {
        assert!(now(3, 0, None).after(&acc(3, 0, 0), Family::Buffer));
    }

    // Control barrier: accesses before it happen-before accesses after it in the workgroup.
    #[test]
    fn a_barrier_orders_accesses_of_one_workgroup() {
        assert!(!now(3, 0, None).after(&acc(2, 0, 0), Family::Shared));
        assert!(now(3, 1, None).after(&acc(2, 0, 0), Family::Shared));
    }

    // Different workgroups are ordered only through release/acquire.
    #[test]
    fn workgroups_are_ordered_only_by_what_was_acquired() {
        let a = acc(10, 0, 0); // workgroup 1
        assert!(!now(3, 5, None).after(&a, Family::Buffer));
        let mut k = Knowledge::default();
        k.raise_slot(10, 1);
        assert!(now(3, 5, Some(&k)).after(&a, Family::Buffer));
        assert!(!now(3, 5, Some(&k)).after(&acc(10, 0, 1), Family::Buffer));
        let mut k2 = Knowledge::default();
        k2.raise_wg(1, [0, 1, 0]);
        assert!(now(3, 5, Some(&k2)).after(&acc(11, 0, 7), Family::Buffer));
        assert!(!now(3, 5, Some(&k2)).after(&acc(11, 1, 0), Family::Buffer));
    }

    // Atomic operations are mutually ordered only where each is in the other's scope.
    #[test]
    fn atomics_of_workgroup_scope_do_not_order_other_workgroups() {
        let mut a = acc(10, 0, 0);
        a.flags = flags::ATOMIC | (Scope::Workgroup as u32) << flags::SCOPE_SHIFT;
        assert!(!now(3, 0, None).mutual_scope(&a, Scope::Device));
        a.flags = flags::ATOMIC | (Scope::Device as u32) << flags::SCOPE_SHIFT;
        assert!(now(3, 0, None).mutual_scope(&a, Scope::Device));
        assert!(!now(3, 0, None).mutual_scope(&a, Scope::Workgroup));
    }
}
