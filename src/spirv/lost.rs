//! Lost paths: an invocation that branched on a value the model does not know (undefined, or
//! order-dependent) is on a path the spec does not pin down. What it writes takes the path's
//! taint, what the ways it did not take may write is noted, and where the construct ends the
//! invocation is back on a pinned-down path with what it computed on the way tainted.

use crate::model::LaneMask;
use crate::reconverge::PerGroup;
use crate::spirv::exec::*;
use crate::spirv::inst::*;
use crate::spirv::prov::{Cause, Taint};
use crate::spirv::regs::each_span;

impl Wg<'_, '_> {
    /// Lane `s` (of subgroup `g`) branched at `construct` (frame `depth`) on a value the model does
    /// not know (`taint`): its path is lost — order-dependent for an atomic's result, else
    /// undefined, reported once per lane. What the ways it did not take may store is the caller's
    /// to note ([`Wg::paths_not_taken`]), where it does not run them too.
    pub(crate) fn lose_lane(
        &mut self,
        s: usize,
        g: usize,
        construct: u32,
        loc: LocId,
        taint: Taint,
        depth: usize,
    ) {
        self.lost_depth[s] = self.lost_depth[s].min(depth as u32);
        if !crate::spirv::prov::is_undefined(taint) {
            // A branch on an order-dependent value (an atomic's result): legal, and the path is
            // this execution's; what the invocation writes on it depends on the order.
            if self.lost_taint[s].is_none() {
                let p = self.prov(Cause::OrderPath { construct }, loc, taint);
                self.lost_taint[s] = p.order_dependent();
                self.any_lost = true;
                self.first_loss();
            }
            return;
        }
        if !crate::spirv::prov::is_undefined(self.lost_taint[s]) {
            let p = self.prov(Cause::LostPath { construct }, loc, taint);
            self.lost_taint[s] = p;
            self.any_lost = true;
            self.first_loss();
            self.d.find(Finding::LostPath {
                construct,
                loc,
                taint,
                slot: self.who(s) - 1,
            });
        }
        if self.lost.sg[g].is_none() {
            self.lost_cause[g] = taint;
        }
        self.lost.lose(g, construct);
    }

    /// A path of this workgroup is lost (`ever_lost`): from here on the bodies as written run, which
    /// read carried variables from memory — so the first time, each carried variable's register is
    /// written to memory in the lanes that stored it there (what the stores the promoted bodies
    /// did not run would have left: their value's bits and taint, as `Wg::store` writes a 32-bit
    /// scalar to an invocation's own word).
    pub(crate) fn first_loss(&mut self) {
        if !self.ever_lost {
            self.spill_carried();
        }
        self.ever_lost = true;
    }

    /// Where carried variable `var`'s noted lanes are in `carried_mask`: one mask per subgroup.
    pub(crate) fn carried_at(&self, var: usize) -> std::ops::Range<usize> {
        var * self.groups..(var + 1) * self.groups
    }

    fn spill_carried(&mut self) {
        for var in 0..self.k.carried.len() {
            self.spill(var, None, true);
        }
        self.carried_mask.fill(0);
    }

    /// Writes carried variable `var`'s register to its memory in the lanes that stored it there
    /// (of those only the lanes of `only`, where given): the values' bits, and with `taint` their
    /// taint — what the stores the promoted bodies did not run would have left. Without the taint
    /// where memory's taint is about to be reset (a call's locals, a new workgroup): the bits an
    /// uninitialised variable then holds are those the bodies as written would leave.
    pub(crate) fn spill(&mut self, var: usize, only: Option<&[LaneMask]>, taint: bool) {
        let k = self.k;
        let (lanes, n) = (self.lanes, self.n);
        let c = &k.carried[var];
        let masks = &self.carried_mask[self.carried_at(var)];
        if masks.iter().all(|m| *m == 0) {
            return;
        }
        let lanes_of: PerGroup<LaneMask> = masks
            .iter()
            .enumerate()
            .map(|(g, m)| LaneMask(only.map_or(*m, |o| m & o[g].0)))
            .collect();
        let o = &k.objects[c.obj.index()];
        let (vb, tv) = (self.regs.base(c.reg), self.regs.dirty(c.reg));
        for (slot, &(_, so)) in k.plans[c.plan as usize].slots.iter().enumerate() {
            let w = ((c.off + so) / 4) as usize;
            let (row, trow) = (
                (o.base as usize + w) * lanes,
                (o.tbase as usize + w) * lanes,
            );
            let vr = vb + slot * lanes;
            let (vals, rtaint) = (&self.regs.vals, &self.regs.taint);
            let (lmem, ltaint) = (&mut self.lmem, &mut self.ltaint);
            each_span(&lanes_of, n, |r| {
                for (m, v) in lmem[row + r.start..row + r.end]
                    .iter_mut()
                    .zip(&vals[vr + r.start..vr + r.end])
                {
                    *m = *v as u32;
                }
                if taint {
                    let lt = &mut ltaint[trow + r.start..trow + r.end];
                    if tv {
                        lt.copy_from_slice(&rtaint[vr + r.start..vr + r.end]);
                    } else {
                        lt.fill(Taint::NONE);
                    }
                }
            });
        }
    }

    /// A branch whose direction is not pinned down (undefined): what the construct's other paths
    /// may store is noted, so that elements this execution never wrote are not reported as holding
    /// a defined value.
    pub(crate) fn paths_not_taken(&self, construct: u32, loc: LocId, taint: Taint) {
        let Some(objs) = self.k.construct_stores.get(&construct) else {
            return;
        };
        // Only where the branch is undefined: an order-dependent branch's other way is another
        // order's, which `--schedules` explores; it may be one no legal order takes (message
        // passing's `if (flag > data)`).
        if !crate::spirv::prov::is_undefined(taint) {
            return;
        }
        let p = self.prov(Cause::PathNotTaken { construct }, loc, taint);
        let mut m = self
            .d
            .maybe_written
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for o in objs {
            let e = m.entry(*o).or_insert(p);
            *e = crate::spirv::prov::combine(*e, p);
        }
    }

    /// Gives lanes in `set` that are lost the taint of their path on register `r`.
    pub(crate) fn taint_lost(&mut self, r: Reg, slots: u32, set: &[LaneMask]) {
        let lanes = self.lanes;
        let n = self.n;
        self.regs.make_dirty(r);
        let base = self.regs.base(r);
        for c in 0..slots as usize {
            let row = base + c * lanes;
            each_lane(set, n, |s| {
                let l = self.lost_taint[s];
                if !l.is_none() {
                    self.regs.taint[row + s] =
                        crate::spirv::prov::combine(l, self.regs.taint[row + s]);
                }
            });
        }
    }

    /// The construct headed by `hdr` (frame `self.frames.len()`, just popped) is over and `arrived`
    /// reached its merge. A lane that lost its path inside it is back on a pinned-down path when
    /// the construct cannot be left another way (every path it might have taken ends at this
    /// merge, assuming it terminates): its path is no longer lost, but what it computed on the way
    /// is — the phis of the merge block and, for a loop, every register the loop defined. A lane
    /// that may have left another way stays lost, now at the enclosing construct.
    pub(crate) fn end_lost_paths(&mut self, hdr: &Block, arrived: &[LaneMask]) {
        let depth = self.frames.len() as u32;
        let n = self.n;
        let mut ended = PerGroup::from_elem(LaneMask::EMPTY, self.groups);
        let mut any = false;
        for g in 0..self.groups {
            for l in 0..n {
                let s = g * n + l;
                if self.lost_depth[s] == u32::MAX || self.lost_depth[s] < depth {
                    continue;
                }
                if !hdr.escapes && (arrived[g].0 >> l) & 1 != 0 {
                    ended[g] = ended[g].with(l as u32);
                    any = true;
                } else {
                    self.lost_depth[s] = depth.saturating_sub(1);
                }
            }
        }
        if !any {
            return;
        }
        // The lane's own variables that a path of the construct stores to: on its other paths
        // the lane may have left them different (a store skipped is as much the path's as a store
        // made), so they hold the path's taint too — the memory counterpart of the phis. On the
        // path they held what it stored (`Wg::store`). A lane that left the construct another way
        // is still lost: the enclosing construct's end, or the return of the call it was lost in
        // (`Wg::call`), does this for it.
        let k = self.k;
        if let Some(objs) = k.construct_lane_stores.get(&hdr.label) {
            self.taint_own(objs, &ended);
        }
        for &r in &hdr.loop_defs {
            let slots = self.regs.slots(r);
            self.taint_lost(r, slots, &ended);
        }
        each_lane(&ended, n, |s| self.phi_taint[s] = self.lost_taint[s]);
        self.any_phi_taint = true;
        self.found_path(&ended);
    }

    /// The lanes in `ended` are back on a pinned-down path: no longer lost (what they computed on
    /// the way has taken the path's taint already), and a subgroup none of whose lanes is lost any
    /// more is no longer one whose tangled results are unknown.
    pub(crate) fn found_path(&mut self, ended: &[LaneMask]) {
        let n = self.n;
        each_lane(ended, n, |s| {
            self.lost_taint[s] = Taint::NONE;
            self.lost_depth[s] = u32::MAX;
        });
        self.any_lost = self.lost_taint.iter().any(|t| !t.is_none());
        for g in 0..self.groups {
            if self.lost.sg[g].is_some()
                && self.lost_taint[g * n..(g + 1) * n]
                    .iter()
                    .all(|t| t.is_none())
            {
                self.lost.sg[g] = None;
            }
        }
    }

    /// Gives the lanes in `set` the taint of their lost path on every unit of their own variables
    /// `objs`.
    pub(crate) fn taint_own(&mut self, objs: &[ObjectId], set: &[LaneMask]) {
        let (lanes, n) = (self.lanes, self.n);
        for o in objs {
            for u in self.k.objects[o.index()].taint_units() {
                let row = u * lanes;
                each_lane(set, n, |s| {
                    let l = self.lost_taint[s];
                    if !l.is_none() {
                        self.ltaint[row + s] = crate::spirv::prov::combine(l, self.ltaint[row + s]);
                    }
                });
            }
        }
    }

    /// What the lanes in `set` hold in their own variables `objs` (words and taint units), to be
    /// put back with [`Wg::restore_own`].
    pub(crate) fn save_own(&self, objs: &[ObjectId], set: &[LaneMask]) -> OwnSaved {
        let (lanes, n) = (self.lanes, self.n);
        let mut saved = OwnSaved::default();
        for o in objs {
            let ob = &self.k.objects[o.index()];
            for w in ob.base as usize..(ob.base + ob.words) as usize {
                each_lane(set, n, |s| {
                    saved.words.push((w * lanes + s, self.lmem[w * lanes + s]))
                });
            }
            for u in ob.taint_units() {
                each_lane(set, n, |s| {
                    saved
                        .taint
                        .push((u * lanes + s, self.ltaint[u * lanes + s]))
                });
            }
        }
        saved
    }

    /// Puts back what [`Wg::save_own`] saved.
    pub(crate) fn restore_own(&mut self, saved: &OwnSaved) {
        for &(i, w) in &saved.words {
            self.lmem[i] = w;
        }
        for &(i, t) in &saved.taint {
            self.ltaint[i] = t;
        }
    }
}

/// Words and taint units of lanes' own variables, by index into the lane memory
/// ([`Wg::save_own`]).
#[derive(Default)]
pub(crate) struct OwnSaved {
    words: Vec<(usize, u32)>,
    taint: Vec<(usize, Taint)>,
}
