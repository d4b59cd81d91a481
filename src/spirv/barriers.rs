//! Control barriers and memory barriers (fences) as happens-before sees them (Vulkan spec,
//! Appendix B "Memory Model"): a control barrier orders the accesses of the invocations it
//! synchronizes, for the storage classes its memory semantics name, among the invocations its
//! *memory scope* includes; a fence makes a later atomic write release, or an earlier relaxed
//! atomic read acquire, to the invocations its scope includes.

use crate::reconverge::Flow;
use crate::spirv::exec::*;
use crate::spirv::ids::LocId;
use crate::spirv::memory::clock::{semantics, FAMILIES};
use crate::spirv::memory::{Knowledge, Scope};

impl Wg<'_, '_> {
    /// A control barrier. Every invocation of the workgroup (or subgroup) must reach it; it orders
    /// the accesses before it before those after it for the memory families its semantics name,
    /// and those a fence of the interval named (`memoryBarrierBuffer(); barrier();`), between
    /// invocations its memory scope includes — a workgroup barrier of Subgroup memory scope orders
    /// memory within each subgroup only, one of Invocation scope orders none; with acquire and
    /// release semantics, what one participant had acquired from others, every participant it
    /// orders with has after it.
    pub(crate) fn barrier(
        &mut self,
        workgroup: bool,
        scope: Scope,
        sem: u32,
        loc: LocId,
        flow: &Flow,
    ) {
        let fam = semantics::families(sem);
        // The families the barrier's own semantics order, within its memory scope.
        let (wide, narrow) = (scope >= Scope::Workgroup, scope >= Scope::Subgroup);
        if workgroup {
            self.check_reached(loc, flow);
            self.bars = self.bars.wrapping_add(1);
            for f in 0..FAMILIES {
                if (fam[f] && wide) || self.fenced[f] {
                    // Ordered across the workgroup (by the barrier, or by a fence before it).
                    self.wg_epoch[f] = self.wg_epoch[f].wrapping_add(1);
                    for g in 0..self.groups {
                        self.sg_epoch[g][f] = 0;
                    }
                } else {
                    for g in 0..self.groups {
                        if (fam[f] && narrow) || self.sg_fenced[g][f] {
                            self.sg_epoch[g][f] = self.sg_epoch[g][f].wrapping_add(1);
                        }
                    }
                }
            }
            self.fenced = [false; FAMILIES];
            self.sg_fenced.fill([false; FAMILIES]);
            if wide {
                self.share_knowledge(0..self.lanes);
            } else if narrow {
                for g in 0..self.groups {
                    self.share_knowledge(g * self.n..(g + 1) * self.n);
                }
            }
            return;
        }
        for g in 0..self.groups {
            if flow.set[g].is_empty() {
                continue;
            }
            for f in 0..FAMILIES {
                if (fam[f] && narrow) || self.sg_fenced[g][f] {
                    self.sg_epoch[g][f] = self.sg_epoch[g][f].wrapping_add(1);
                }
            }
            self.sg_fenced[g] = [false; FAMILIES];
            if narrow {
                self.share_knowledge(g * self.n..(g + 1) * self.n);
            }
        }
    }

    /// A workgroup barrier that not every invocation of the workgroup reached is a finding — those
    /// that returned before it included (SPIR-V 1.6, OpControlBarrier: undefined "unless all
    /// invocations within Execution execute the same dynamic instance of this instruction").
    fn check_reached(&self, loc: LocId, flow: &Flow) {
        if flow.set.iter().zip(&self.present).any(|(a, p)| a != p) {
            self.d.find(Finding::DivergentBarrier {
                loc,
                workgroup: self.wg_id,
                reached: flow.set.iter().map(|a| a.count()).sum(),
                expected: self.present.iter().map(|p| p.count()).sum(),
            });
        }
    }

    /// What any lane of `lanes` had acquired, every one of them has (a barrier's participants).
    fn share_knowledge(&mut self, lanes: std::ops::Range<usize>) {
        let knows = &mut self.knows[lanes];
        if knows.iter().all(|k| k.is_none()) {
            return;
        }
        let mut all = Knowledge::default();
        for k in knows.iter().flatten() {
            all.join(k);
        }
        let all = Some(Box::new(all));
        for k in knows.iter_mut() {
            *k = all.clone();
        }
    }

    /// A memory barrier (fence) of memory scope `scope` by the lanes of `flow`: it releases what
    /// came before for the lanes' later atomic writes (to invocations within its scope) and for
    /// the next control barrier (where its scope reaches the barrier's participants), and
    /// acquires what their relaxed atomic reads saw released by invocations within its scope.
    pub(crate) fn fence(&mut self, scope: Scope, sem: u32, flow: &Flow) {
        let fam = semantics::families(sem);
        let n = self.n;
        for f in 0..FAMILIES {
            if fam[f] {
                if scope >= Scope::Workgroup {
                    self.fenced[f] = true;
                }
                for g in 0..self.groups {
                    if !flow.set[g].is_empty() && scope >= Scope::Subgroup {
                        self.sg_fenced[g][f] = true;
                    }
                }
            }
        }
        let (rel, acq) = (semantics::releases(sem), semantics::acquires(sem));
        each_lane(&flow.set, n, |s| {
            if rel {
                self.rel_fence[s] = self.rel_fence[s].max(Some(scope));
            }
            if acq && let Some(p) = self.pending[s].as_mut() {
                let mut left = false;
                for (needed, k) in p.iter_mut().enumerate() {
                    if k.is_empty() {
                        continue;
                    }
                    if needed <= scope as usize {
                        let k = std::mem::take(k);
                        self.knows[s].get_or_insert_with(Default::default).join(&k);
                    } else {
                        left = true;
                    }
                }
                if !left {
                    self.pending[s] = None;
                }
            }
        });
    }
}
