//! Structured control flow, lane by lane: regions of a function, branches that split a flow,
//! selection, switch and loop constructs, the merge and continue targets where lanes wait for
//! each other, phis, calls and control barriers; a selection runs both its ways for an invocation
//! whose condition is undefined where every way ends (the lost-path bookkeeping is
//! [`crate::spirv::lost`]'s). Which lanes run together and whether the reconvergence model pins that down come from
//! [`crate::reconverge::flow`].

use crate::model::LaneMask;
use crate::reconverge::{Flow, PerGroup};
use crate::spirv::error::SpirvError;
use crate::spirv::exec::*;
use crate::spirv::inst::*;
use crate::spirv::prov::{Cause, Taint};
use crate::spirv::regs::each_span;
use std::sync::atomic::Ordering::Relaxed;

/// The most calls one invocation may be inside at once. Recursion is refused at decode time
/// (SPIR-V's universal validation rules: the static call graph of an entry point has no cycle), so
/// a module's depth is bounded by its function count; this bounds the memory a generated module of
/// thousands of chained functions takes. A call past it stops the run, naming the call.
pub(crate) const MAX_CALL_DEPTH: u32 = 4096;

/// The stack a recursion of the executor may need before it next reaches [`Wg::region`]: one
/// block's instructions, a selection or a loop, a call (measured: a few KiB each; ample).
const STACK_RED_ZONE: usize = 256 * 1024;
/// The stack segment `stacker` allocates when less than [`STACK_RED_ZONE`] is left.
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

impl Wg<'_, '_> {
    /// Runs blocks of function `f` from `start` until every lane of `flow` has been deposited in a
    /// frame (a merge, a continue target, a loop header, a return).
    ///
    /// Every recursion of the executor (a construct inside a construct, a call) passes through
    /// here: where less than [`STACK_RED_ZONE`] of the thread's stack is left, the rest runs on a
    /// new segment of [`STACK_SEGMENT`] bytes (`stacker`), so that a kernel nested thousands deep
    /// runs on a worker thread's 2 MiB stack instead of overflowing it.
    pub(crate) fn region(
        &mut self,
        f: FuncIdx,
        start: BlockIdx,
        flow: &mut Flow,
    ) -> Result<(), SpirvError> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.region_here(f, start, flow)
        })
    }

    fn region_here(
        &mut self,
        f: FuncIdx,
        start: BlockIdx,
        flow: &mut Flow,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let func = &k.funcs[f as usize];
        let mut b = start;
        loop {
            if flow.is_empty() {
                return Ok(());
            }
            if let Some(fr) = self.frame_of(b) {
                self.deposit_to(fr, b, flow);
                return Ok(());
            }
            let blk = self.as_run(&func.blocks[b as usize]);
            self.phis(blk, flow);
            if let Merge::Loop { merge, cont } = blk.merge {
                self.run_loop(f, b, blk, merge, cont, flow)?;
                b = merge;
                continue;
            }
            self.body(blk, flow)?;
            if let Merge::Selection(merge) = blk.merge {
                self.selection(f, b, merge, flow)?;
                b = merge;
                continue;
            }
            match self.terminate(f, b, blk, flow)? {
                Some(next) => b = next,
                None => return Ok(()),
            }
        }
    }

    /// The block to run for `blk`: one holding a loop unrolled at decode time
    /// (`decode/unroll.rs`) as written once an invocation's path is lost — as the promoted
    /// bodies, so that the lost-path rules act on the code as written — else `blk`.
    #[inline(always)]
    pub(crate) fn as_run<'b>(&self, blk: &'b Block) -> &'b Block {
        match &blk.written {
            Some(w) if self.ever_lost => &w.block,
            _ => blk,
        }
    }

    /// The frame (stack index) a branch to `b` deposits into, if any: the innermost frame of the
    /// current function whose merge, continue target or header (for back edges) is `b`.
    pub(crate) fn frame_of(&self, b: BlockIdx) -> Option<usize> {
        for (i, fr) in self.frames.iter().enumerate().rev() {
            match fr {
                Frame::Func { .. } => return None,
                Frame::Sel { merge, .. } if *merge == b => return Some(i),
                Frame::Loop {
                    header,
                    merge,
                    cont,
                    ..
                } if *merge == b || *cont == b || *header == b => return Some(i),
                _ => {}
            }
        }
        None
    }

    /// Moves every lane of `flow` into frame `i`, as lanes arriving at block `target`.
    pub(crate) fn deposit_to(&mut self, i: usize, target: BlockIdx, flow: &mut Flow) {
        // What stays in `flow` is the same state with no lanes: where the frame keeps only the
        // lanes (a merge), nothing is copied; where it keeps the state, a copy.
        match &mut self.frames[i] {
            Frame::Sel { arrived, .. } => {
                for (a, m) in arrived.iter_mut().zip(&flow.set) {
                    *a = a.or(*m);
                }
            }
            Frame::Loop {
                header,
                merge,
                cont,
                brk,
                conts,
                back,
            } => {
                if target == *merge {
                    for (a, m) in brk.iter_mut().zip(&flow.set) {
                        *a = a.or(*m);
                    }
                } else if target == *cont {
                    conts.push(flow.clone());
                } else if target == *header {
                    back.push(flow.clone());
                }
            }
            Frame::Func { ret } => ret.push(flow.clone()),
        }
        flow.set.iter_mut().for_each(|m| *m = LaneMask::EMPTY);
    }

    /// The header label id of the innermost construct of the current function (for branches
    /// without a merge instruction of their own).
    pub(crate) fn innermost_construct(&self, func: &Func, fallback: u32) -> u32 {
        for fr in self.frames.iter().rev() {
            match fr {
                Frame::Func { .. } => break,
                Frame::Loop { header, .. } => return func.blocks[*header as usize].label,
                Frame::Sel { .. } => {}
            }
        }
        fallback
    }

    /// Routes the lanes of `part` that branch from block `from` to `target`: deposited in a frame
    /// (`Exit`) or staying in the region (`Inside`).
    pub(crate) fn route(
        &mut self,
        func: &Func,
        from: BlockIdx,
        target: BlockIdx,
        part: &mut Flow,
    ) -> Route {
        if func.has_phis {
            let (n, pred) = (self.n, &mut self.pred);
            each_span(&part.set, n, |r| pred[r].fill(from));
        }
        match self.frame_of(target) {
            Some(i) => {
                self.deposit_to(i, target, part);
                Route::Exit
            }
            None => Route::Inside,
        }
    }

    /// Executes the terminator of a block that is not a header; returns the next block of the
    /// region, if any lanes stay in it.
    pub(crate) fn terminate(
        &mut self,
        f: FuncIdx,
        b: BlockIdx,
        blk: &Block,
        flow: &mut Flow,
    ) -> Result<Option<BlockIdx>, SpirvError> {
        let k = self.k;
        let func = &k.funcs[f as usize];
        match &blk.term {
            Term::Branch(t) => Ok(match self.route(func, b, *t, flow) {
                Route::Inside => Some(*t),
                Route::Exit => None,
            }),
            Term::Cond { c, t, f: e } if t == e => Ok(match self.route(func, b, *t, flow) {
                Route::Inside => Some(*t),
                Route::Exit => None,
            }),
            Term::Cond { c, t, f: e } => {
                let depth = self.frames.len() - 1;
                let (tl, el) = self.split_cond(*c, flow, blk, depth, None);
                // Every lane one way (the common case): the flow as it is, no parts to make
                // (`Flow::part` of the whole set is the flow itself).
                for (target, side) in [(*t, &tl), (*e, &el)] {
                    if *side == flow.set && !flow.is_empty() {
                        return Ok(match self.route(func, b, target, flow) {
                            Route::Inside => Some(target),
                            Route::Exit => None,
                        });
                    }
                }
                let id = self.innermost_construct(func, blk.label);
                let mut tf = flow.part(id, tl);
                let mut ef = flow.part(id, el);
                let mut inside: smallvec::SmallVec<[(BlockIdx, Flow); 2]> =
                    smallvec::SmallVec::new();
                for (target, part) in [(*t, &mut tf), (*e, &mut ef)] {
                    if part.is_empty() {
                        continue;
                    }
                    if let Route::Inside = self.route(func, b, target, part) {
                        inside.push((target, part.clone()));
                    }
                }
                match inside.len() {
                    0 => {
                        *flow = tf;
                        flow.set.iter_mut().for_each(|m| *m = LaneMask::EMPTY);
                        Ok(None)
                    }
                    1 => {
                        let (t, part) = inside.pop().expect("one");
                        *flow = part;
                        Ok(Some(t))
                    }
                    _ => {
                        if inside[0].0 == inside[1].0 {
                            // Both sides go to the same block: no divergence at all.
                            Ok(Some(inside[0].0))
                        } else {
                            Err(SpirvError::unsupported(
                                "a conditional branch without a merge instruction whose two targets are both inside the construct (not structured)",
                            )
                            .at(self.d.loc(blk.term_loc)))
                        }
                    }
                }
            }
            Term::Switch { .. } => {
                Err(SpirvError::unsupported("OpSwitch without OpSelectionMerge")
                    .at(self.d.loc(blk.term_loc)))
            }
            Term::Return | Term::ReturnValue(_) => {
                if let (Term::ReturnValue(v), Some(ret)) = (&blk.term, func.ret) {
                    self.copy_reg(ret, *v, func.ret_slots, &flow.set);
                }
                let i = self
                    .frames
                    .iter()
                    .rposition(|f| matches!(f, Frame::Func { .. }))
                    .expect("a function frame");
                self.deposit_to(i, u32::MAX, flow);
                Ok(None)
            }
            Term::Unreachable => {
                self.d.find(Finding::Unreachable { loc: blk.term_loc });
                let n = self.n;
                let p = self.prov(
                    Cause::LostPath {
                        construct: blk.label,
                    },
                    blk.term_loc,
                    Taint::NONE,
                );
                each_lane(&flow.set, n, |s| self.lost_taint[s] = p);
                self.any_lost = true;
                self.first_loss();
                for g in 0..self.groups {
                    if !flow.set[g].is_empty() {
                        self.lost.lose(g, blk.label);
                    }
                }
                flow.set.iter_mut().for_each(|m| *m = LaneMask::EMPTY);
                Ok(None)
            }
        }
    }

    /// An instruction through which invocations may influence one another (a subgroup operation,
    /// a barrier, an atomic): noted where an invocation of this workgroup has branched on an
    /// undefined value ([`Dispatch::interacted`], which exploring such branches needs unset).
    #[inline]
    pub(crate) fn interaction(&self) {
        if self.decided {
            self.d.interacted.store(true, Relaxed);
        }
    }

    /// Splits lanes by a bool register; lanes whose condition is undefined are *lost* (their path
    /// is not pinned down) and go the way the value the model computed says: one execution the
    /// spec allows where the value comes from a choice (an unpinned tangle), some path otherwise.
    /// `depth` is the frame of the construct the branch belongs to. Where `both` is given (a
    /// selection that cannot be left but through its merge and holds no loop), a lane whose
    /// condition is undefined
    /// goes both ways instead, and is noted in `both` ([`Wg::selection`]).
    pub(crate) fn split_cond(
        &mut self,
        c: Reg,
        flow: &Flow,
        blk: &Block,
        depth: usize,
        mut both: Option<&mut PerGroup<LaneMask>>,
    ) -> (PerGroup<LaneMask>, PerGroup<LaneMask>) {
        let mut t = PerGroup::from_elem(LaneMask::EMPTY, self.groups);
        let mut e = PerGroup::from_elem(LaneMask::EMPTY, self.groups);
        let base = self.regs.base(c);
        let dirty = self.regs.dirty(c);
        if !dirty {
            // Every lane's condition defined: each subgroup's "true" lanes as one mask, built
            // without a branch per lane.
            let n = self.n;
            for g in 0..self.groups {
                let row = &self.regs.vals[base + g * n..base + (g + 1) * n];
                // 64 lanes to a word: a `u128` shift per lane costs several instructions.
                let ones = row.chunks(64).enumerate().fold(0u128, |b, (k, ch)| {
                    let w = ch
                        .iter()
                        .enumerate()
                        .fold(0u64, |w, (l, &v)| w | (((v != 0) as u64) << l));
                    b | (w as u128) << (64 * k)
                });
                let set = flow.set[g];
                t[g] = LaneMask(set.0 & ones);
                e[g] = LaneMask(set.0 & !ones);
            }
            return (t, e);
        }
        let mut waits = false;
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * self.n + l as usize;
                let tv = if dirty {
                    self.regs.taint[base + s]
                } else {
                    Taint::NONE
                };
                if tv.is_undefined() && !tv.is_order() {
                    // A branch on an undefined value (SPIR-V: an undefined value is some value,
                    // so the branch goes one way or the other).
                    let j = self.undefined_branches[s];
                    self.undefined_branches[s] = j + 1;
                    self.decided = true;
                    self.d.undefined_branches.fetch_max(j + 1, Relaxed);
                    if let Some(v) = &self.d.choices {
                        // Exploring: the way this run's choices say, the path not lost.
                        let way = v
                            .get(j as usize)
                            .copied()
                            .unwrap_or(self.regs.vals[base + s] != 0);
                        if way {
                            t[g] = t[g].with(l);
                        } else {
                            e[g] = e[g].with(l);
                        }
                        continue;
                    }
                }
                if tv.is_undefined()
                    && !tv.is_order()
                    && let Some(both) = both.as_deref_mut()
                {
                    self.lose_lane(s, g, blk.label, blk.term_loc, tv, depth);
                    both[g] = both[g].with(l);
                    t[g] = t[g].with(l);
                    e[g] = e[g].with(l);
                    continue;
                }
                if tv.has_prov() {
                    self.paths_not_taken(blk.label, blk.term_loc, tv);
                    self.lose_lane(s, g, blk.label, blk.term_loc, tv, depth);
                    waits = waits
                        || (tv.is_order()
                            && self.d.provs.chain(tv).last().map(|p| p.cause.clone())
                                == Some(Cause::WorkgroupOrder));
                }
                if self.regs.vals[base + s] != 0 {
                    t[g] = t[g].with(l);
                } else {
                    e[g] = e[g].with(l);
                }
            }
        }
        if waits && self.leaves_a_loop(blk) {
            // A loop's exit decided by what another workgroup wrote: waiting for it.
            self.d.find(Finding::SpinWait {
                loc: blk.term_loc,
                workgroup: self.wg_id,
                stuck: false,
            });
        }
        (t, e)
    }

    /// Does one of the block's branch targets leave a loop (its merge) or go round it again (its
    /// header or continue target)?
    pub(crate) fn leaves_a_loop(&self, blk: &Block) -> bool {
        let targets = match &blk.term {
            Term::Cond { t, f, .. } => [*t, *f],
            _ => return false,
        };
        // A header's own branch into its loop body counts too (`while (cond)` loops).
        if let Merge::Loop { merge, .. } = blk.merge
            && targets.contains(&merge)
        {
            return true;
        }
        self.frames.iter().rev().any(|fr| match fr {
            Frame::Loop {
                header,
                merge,
                cont,
                ..
            } => targets
                .iter()
                .any(|x| x == merge || x == header || x == cont),
            _ => false,
        })
    }

    pub(crate) fn selection(
        &mut self,
        f: FuncIdx,
        b: BlockIdx,
        merge: BlockIdx,
        flow: &mut Flow,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let func = &k.funcs[f as usize];
        let blk = &func.blocks[b as usize];
        let id = blk.label;
        // Lanes whose condition is undefined go both ways where the construct can be left only
        // through its merge and holds no loop (each way ends): each side is a path the invocation
        // may take (SPIR-V gives an undefined value *some* value), so what either side writes is
        // written, with the lost path's taint — not one side's writes and a guess at the other's.
        let mut both = PerGroup::from_elem(LaneMask::EMPTY, self.groups);
        let parts: Vec<(BlockIdx, Flow)> = match &blk.term {
            Term::Cond { c, t, f: e } => {
                let depth = self.frames.len();
                let two_ways = (!blk.escapes && blk.acyclic).then_some(&mut both);
                let (tl, el) = self.split_cond(*c, flow, blk, depth, two_ways);
                vec![(*t, flow.part(id, tl)), (*e, flow.part(id, el))]
            }
            Term::Switch {
                sel,
                w,
                default,
                cases,
            } => {
                let (targets, values, parts) =
                    self.split_switch(*sel, *w, *default, cases, flow, blk);
                let flows = flow.switch(id, self.n, &values, parts);
                targets.into_iter().zip(flows).collect()
            }
            Term::Branch(t) => vec![(*t, flow.clone())],
            _ => {
                return Err(SpirvError::malformed(
                    "a selection header must end with a branch or switch",
                )
                .at(self.d.loc(blk.term_loc)))
            }
        };
        self.frames.push(Frame::Sel {
            merge,
            arrived: PerGroup::from_elem(LaneMask::EMPTY, self.groups),
        });
        // The second side starts from what the lanes going both ways held in their own
        // variables before the branch, not from what the first side left there (the buffers and
        // shared memory the first side wrote took the path's taint already); at the merge those
        // variables take the path's taint ([`Wg::end_lost_paths`]).
        let own = match k.construct_lane_stores.get(&id) {
            Some(objs) if both.iter().any(|m| !m.is_empty()) => Some(self.save_own(objs, &both)),
            _ => None,
        };
        for (i, (target, mut part)) in parts.into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            if i > 0
                && let Some(own) = &own
            {
                self.restore_own(own);
            }
            match self.route(func, b, target, &mut part) {
                Route::Exit => {}
                Route::Inside => self.region(f, target, &mut part)?,
            }
        }
        let Some(Frame::Sel { arrived, .. }) = self.frames.pop() else {
            unreachable!("selection frame")
        };
        if self.any_lost && self.d.cfg.lost_paths_end {
            self.end_lost_paths(blk, &arrived);
        }
        *flow = flow.merge(id, [&arrived]);
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    pub(crate) fn split_switch(
        &mut self,
        sel: Reg,
        w: u8,
        default: BlockIdx,
        cases: &[(u64, BlockIdx)],
        flow: &Flow,
        blk: &Block,
    ) -> (Vec<BlockIdx>, Vec<u32>, Vec<PerGroup<LaneMask>>) {
        // One part per distinct target (several literals may share a target), default last.
        let mut targets: Vec<BlockIdx> = Vec::new();
        for (_, t) in cases {
            if !targets.contains(t) && *t != default {
                targets.push(*t);
            }
        }
        targets.push(default);
        let mut parts = vec![PerGroup::from_elem(LaneMask::EMPTY, self.groups); targets.len()];
        let mut values = vec![0u32; self.lanes];
        let base = self.regs.base(sel);
        let dirty = self.regs.dirty(sel);
        let m = crate::spirv::scalar::mask(w);
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * self.n + l as usize;
                let tv = if dirty {
                    self.regs.taint[base + s]
                } else {
                    Taint::NONE
                };
                let v = self.regs.vals[base + s] & m;
                if tv.has_prov() {
                    let depth = self.frames.len();
                    self.paths_not_taken(blk.label, blk.term_loc, tv);
                    self.lose_lane(s, g, blk.label, blk.term_loc, tv, depth);
                }
                let target = cases
                    .iter()
                    .find(|(lit, _)| *lit == v)
                    .map(|c| c.1)
                    .unwrap_or(default);
                // Selector values as the uniformity rule sees them (distinct values stay distinct).
                values[s] = (v as u32) ^ ((v >> 32) as u32).rotate_left(7);
                let k = targets
                    .iter()
                    .position(|t| *t == target)
                    .unwrap_or(targets.len() - 1);
                parts[k][g] = parts[k][g].with(l);
            }
        }
        (targets, values, parts)
    }

    pub(crate) fn run_loop(
        &mut self,
        f: FuncIdx,
        header: BlockIdx,
        hblk: &Block,
        merge: BlockIdx,
        cont: BlockIdx,
        flow: &mut Flow,
    ) -> Result<(), SpirvError> {
        let k = self.k;
        let func = &k.funcs[f as usize];
        let id = hblk.label;
        let (conts, back) = (self.flow_list(), self.flow_list());
        self.frames.push(Frame::Loop {
            header,
            merge,
            cont,
            brk: PerGroup::from_elem(LaneMask::EMPTY, self.groups),
            conts,
            back,
        });
        let fi = self.frames.len() - 1;
        let mut cur = flow.clone();
        let mut first = true;
        let mut iterations = 0u64;
        let mut last_state: Option<(u64, u64)> = None;
        loop {
            if !first {
                self.phis(hblk, &cur);
            }
            first = false;
            iterations += 1;
            if iterations > SPIN_CHECK_AFTER {
                // Round after round with the same state and no write that changed shared or
                // global memory: the loop goes round forever unless another workgroup writes.
                let state = (self.loop_state(hblk, &cur), self.progress);
                if last_state == Some(state) {
                    return Err(self.stuck(hblk));
                }
                last_state = Some(state);
            }
            let header_amb = PerGroup::from_slice(&cur.amb);
            // The header block's body and terminator, then the rest of the loop body.
            self.body(hblk, &mut cur)?;
            let mut body = cur;
            if let Some(next) = self.terminate(f, header, hblk, &mut body)? {
                self.region(f, next, &mut body)?;
            }
            // Continue target: every flow that reached it.
            let fresh = self.flow_list();
            let conts = match &mut self.frames[fi] {
                Frame::Loop { conts, .. } => std::mem::replace(conts, fresh),
                _ => unreachable!("loop frame"),
            };
            if !conts.is_empty() {
                let mut at_cont = Flow::join(id, &conts, PerGroup::from_slice(&header_amb));
                if cont == header {
                    // A loop whose continue target is its header: the back edge is the join.
                    if let Frame::Loop { back, .. } = &mut self.frames[fi] {
                        back.push(at_cont);
                    }
                } else {
                    self.phis(&func.blocks[cont as usize], &at_cont);
                    self.continue_construct(f, cont, &mut at_cont)?;
                }
            }
            self.give_back_flows(conts);
            let fresh = self.flow_list();
            let backs = match &mut self.frames[fi] {
                Frame::Loop { back, .. } => std::mem::replace(back, fresh),
                _ => unreachable!("loop frame"),
            };
            if backs.is_empty() || backs.iter().all(|b| b.is_empty()) {
                self.give_back_flows(backs);
                break;
            }
            cur = Flow::join(id, &backs, header_amb);
            self.give_back_flows(backs);
            self.check_steps(hblk)?;
        }
        let Some(Frame::Loop {
            brk, conts, back, ..
        }) = self.frames.pop()
        else {
            unreachable!("loop frame")
        };
        self.give_back_flows(conts);
        self.give_back_flows(back);
        if self.any_lost && self.d.cfg.lost_paths_end {
            self.end_lost_paths(hblk, &brk);
        }
        *flow = flow.merge(id, [&brk]);
        Ok(())
    }

    /// Runs the continue construct from `cont` until its lanes go back to the header or leave.
    pub(crate) fn continue_construct(
        &mut self,
        f: FuncIdx,
        cont: BlockIdx,
        flow: &mut Flow,
    ) -> Result<(), SpirvError> {
        // `region` would deposit lanes arriving at `cont` into the frame again: run the
        // continue target's own block first, then continue from its successor.
        let k = self.k;
        let func = &k.funcs[f as usize];
        let blk = self.as_run(&func.blocks[cont as usize]);
        if blk.merge != Merge::None {
            // A continue target that heads a construct of its own: run it as a region start.
            if let Merge::Selection(merge) = blk.merge {
                self.body(blk, flow)?;
                self.selection(f, cont, merge, flow)?;
                return self.region(f, merge, flow);
            }
            if let Merge::Loop { merge, cont: c2 } = blk.merge {
                self.run_loop(f, cont, blk, merge, c2, flow)?;
                return self.region(f, merge, flow);
            }
        }
        self.body(blk, flow)?;
        match self.terminate(f, cont, blk, flow)? {
            Some(next) => self.region(f, next, flow),
            None => Ok(()),
        }
    }

    /// A hash of a loop's state at its header: which lanes run, and the values (for them) of every
    /// register the loop defines.
    pub(crate) fn loop_state(&self, hblk: &Block, flow: &Flow) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for m in &flow.set {
            m.0.hash(&mut h);
        }
        let n = self.n;
        for &r in &hblk.loop_defs {
            let base = self.regs.base(r);
            for c in 0..self.regs.slots(r) as usize {
                let row = base + c * self.lanes;
                each_lane(&flow.set, n, |s| self.regs.vals[row + s].hash(&mut h));
            }
        }
        h.finish()
    }

    /// A loop that goes round with nothing changing: a finding, and the end of the run. (In a
    /// parallel run another thread may still write what it waits for: the run is redone in order,
    /// where nothing else runs meanwhile.)
    pub(crate) fn stuck(&self, hblk: &Block) -> SpirvError {
        if !self.d.ordered() {
            self.d.need_ordered();
            return SpirvError::Stopped {
                why: ABANDONED.into(),
                at: self.d.loc(hblk.term_loc).clone(),
            };
        }
        self.d.find(Finding::SpinWait {
            loc: hblk.term_loc,
            workgroup: self.wg_id,
            stuck: true,
        });
        // An invocation here on a path an undefined value chose: the way the model followed is one
        // of several, and a device may take another.
        let lost = self
            .lost_taint
            .iter()
            .find(|t| crate::spirv::prov::is_undefined(**t))
            .and_then(|t| {
                self.d
                    .provs
                    .chain(*t)
                    .into_iter()
                    .find(|p| matches!(p.cause, Cause::LostPath { .. }))
            })
            .map(|p| {
                format!(
                    "; its invocations got here on a path a branch on an undefined value chose (at {}): the way the model followed is one the spec allows, a device may take another",
                    self.d.loc(p.loc)
                )
            })
            .unwrap_or_default();
        SpirvError::Stopped {
            why: format!(
                "workgroup ({}, {}, {}) goes round this loop with nothing changing: it waits for a value no invocation that can still run will write — a spin-wait on another workgroup (Vulkan gives no forward-progress guarantee between workgroups; here the workgroups ran one after another, in order) or a loop that never ends{lost}",
                self.wg_id[0], self.wg_id[1], self.wg_id[2]
            ),
            at: self.d.loc(hblk.term_loc).clone(),
        }
    }

    pub(crate) fn check_steps(&self, blk: &Block) -> Result<(), SpirvError> {
        if !self.d.ordered() && self.d.conflict.load(Relaxed) {
            // This parallel run will be redone in order: stop working on it.
            return Err(SpirvError::Stopped {
                why: ABANDONED.into(),
                at: self.d.loc(blk.term_loc).clone(),
            });
        }
        if self.steps > self.d.cfg.max_steps {
            return Err(SpirvError::Stopped {
                why: format!(
                    "workgroup ({}, {}, {}) executed more than {} lane-instructions (--max-steps): an infinite loop?",
                    self.wg_id[0], self.wg_id[1], self.wg_id[2], self.d.cfg.max_steps
                ),
                at: self.d.loc(blk.term_loc).clone(),
            });
        }
        Ok(())
    }

    pub(crate) fn phis(&mut self, blk: &Block, flow: &Flow) {
        if self.any_phi_taint {
            self.phis_after_lost(blk, flow);
            return;
        }
        self.phis_plain(blk, flow);
    }

    pub(crate) fn phis_plain(&mut self, blk: &Block, flow: &Flow) {
        if blk.phis.is_empty() {
            return;
        }
        let (lanes, n) = (self.lanes, self.n);
        let by_pred = self.lanes_by_pred(flow);
        // The incoming value of `p` for lanes that came from `pred` (a lane from no listed
        // predecessor takes the first).
        let source = |p: &Phi, pred: BlockIdx| {
            p.incoming
                .iter()
                .find(|(b, _)| *b == pred)
                .map_or(p.incoming[0].1, |x| x.1)
        };
        // Phis read their inputs before any of them writes (they are parallel copies): where one
        // phi reads what another of this block writes, the inputs go through scratch rows first.
        let staged = blk.phis.len() > 16
            || blk.phis.iter().any(|p| {
                p.incoming
                    .iter()
                    .any(|(_, r)| blk.phis.iter().any(|q| q.d == *r))
            });
        let total: usize = blk.phis.iter().map(|p| p.n as usize).sum();
        if staged {
            self.scratch.resize(total * lanes, 0);
            self.scratch_t.resize(total * lanes, Taint::NONE);
        }
        let mut at = 0usize;
        let mut any_taint: PerGroup<bool> = PerGroup::from_elem(false, blk.phis.len());
        for (pi, p) in blk.phis.iter().enumerate() {
            // Whether a value with taint arrives (then the result carries taint).
            for (pred, set) in &by_pred {
                let src = source(p, *pred);
                if self.regs.dirty(src) {
                    for c in 0..p.n as usize {
                        let sr = self.regs.row(src, c);
                        let t = &self.regs.taint[sr..sr + lanes];
                        each_span(set, n, |r| {
                            any_taint[pi] |= t[r].iter().any(|t| !t.is_none())
                        });
                    }
                }
            }
            if staged {
                for (pred, set) in &by_pred {
                    let src = source(p, *pred);
                    let sd = self.regs.dirty(src);
                    for c in 0..p.n as usize {
                        let (from, to) = (self.regs.row(src, c), (at + c) * lanes);
                        each_span(set, n, |r| {
                            let (a, b) = (from + r.start..from + r.end, to + r.start..to + r.end);
                            self.scratch[b.clone()].copy_from_slice(&self.regs.vals[a.clone()]);
                            if sd {
                                self.scratch_t[b].copy_from_slice(&self.regs.taint[a]);
                            } else {
                                self.scratch_t[b].fill(Taint::NONE);
                            }
                        });
                    }
                }
            }
            at += p.n as usize;
        }
        let mut at = 0usize;
        for (pi, p) in blk.phis.iter().enumerate() {
            let db = self.regs.base(p.d);
            if any_taint[pi] {
                self.regs.make_dirty(p.d);
            }
            let dirty = self.regs.dirty(p.d);
            for c in 0..p.n as usize {
                let row = db + c * lanes;
                if staged {
                    let srow = (at + c) * lanes;
                    each_span(&flow.set, n, |r| {
                        let (a, b) = (srow + r.start..srow + r.end, row + r.start..row + r.end);
                        self.regs.vals[b.clone()].copy_from_slice(&self.scratch[a.clone()]);
                        if dirty {
                            self.regs.taint[b].copy_from_slice(&self.scratch_t[a]);
                        }
                    });
                    continue;
                }
                for (pred, set) in &by_pred {
                    let src = source(p, *pred);
                    let (from, sd) = (self.regs.row(src, c), self.regs.dirty(src));
                    each_span(set, n, |r| {
                        let a = from + r.start..from + r.end;
                        self.regs.vals.copy_within(a.clone(), row + r.start);
                        if dirty && sd {
                            self.regs.taint.copy_within(a, row + r.start);
                        } else if dirty {
                            self.regs.taint[row..row + lanes][r].fill(Taint::NONE);
                        }
                    });
                }
            }
            at += p.n as usize;
        }
    }

    /// The active lanes of `flow` grouped by the block each came from (`Wg::pred`): per
    /// predecessor, per-subgroup masks — usually one predecessor for all, found a subgroup at a
    /// time.
    fn lanes_by_pred(&self, flow: &Flow) -> PerGroup<(BlockIdx, PerGroup<LaneMask>)> {
        let (n, groups) = (self.n, self.groups);
        let mut by: PerGroup<(BlockIdx, PerGroup<LaneMask>)> = PerGroup::new();
        let mut add = |pred: BlockIdx, g: usize, bits: u128| {
            let i = match by.iter().position(|(b, _)| *b == pred) {
                Some(i) => i,
                None => {
                    by.push((pred, PerGroup::from_elem(LaneMask(0), groups)));
                    by.len() - 1
                }
            };
            by[i].1[g].0 |= bits;
        };
        for g in 0..groups {
            let m = flow.set[g];
            if m.0 == 0 {
                continue;
            }
            // One pass over the subgroup's row per predecessor (the lowest lane left's), in the
            // order the lanes first name them.
            let row = &self.pred[g * n..(g + 1) * n];
            let mut rest = m.0;
            while rest != 0 {
                let first = row[rest.trailing_zeros() as usize];
                let from = if rest == m.0 && row.iter().all(|&b| b == first) {
                    rest
                } else if n <= 64 {
                    row.iter()
                        .enumerate()
                        .fold(0u64, |w, (l, &b)| w | (((b == first) as u64) << l))
                        as u128
                } else {
                    row.iter()
                        .enumerate()
                        .fold(0u128, |w, (l, &b)| w | (((b == first) as u128) << l))
                };
                add(first, g, from & rest);
                rest &= !from;
            }
        }
        by
    }

    /// Phis of the block entered by lanes whose lost path just ended: the predecessor they came
    /// from was not pinned down, so neither is the value each phi picks.
    pub(crate) fn phis_after_lost(&mut self, blk: &Block, flow: &Flow) {
        if !blk.phis.is_empty() {
            let saved = std::mem::take(&mut self.phi_taint);
            let lanes = self.lanes;
            let n = self.n;
            self.phis_plain(blk, flow);
            for p in &blk.phis {
                self.regs.make_dirty(p.d);
                let db = self.regs.base(p.d);
                for c in 0..p.n as usize {
                    let row = db + c * lanes;
                    each_lane(&flow.set, n, |s| {
                        if !saved[s].is_none() {
                            self.regs.taint[row + s] =
                                crate::spirv::prov::combine(saved[s], self.regs.taint[row + s]);
                        }
                    });
                }
            }
            self.phi_taint = saved;
        }
        let n = self.n;
        each_lane(&flow.set, n, |s| self.phi_taint[s] = Taint::NONE);
        self.any_phi_taint = self.phi_taint.iter().any(|t| !t.is_none());
    }

    /// Executes a block's body instructions for the lanes of `flow`.
    pub(crate) fn body(&mut self, blk: &Block, flow: &mut Flow) -> Result<(), SpirvError> {
        let active: u64 = flow.set.iter().map(|m| m.count() as u64).sum();
        let counted = blk.insts.len() as u64 + blk.folded as u64 + 1 - blk.uncounted as u64;
        self.steps += active * counted;
        // Until an invocation's path is first lost, the body with the invocation's own variables
        // promoted (decode-time; the same results: see `decode/promote.rs`).
        let (insts, locs) = match &blk.fast {
            Some(b) if !self.ever_lost => (&b.insts, &b.locs),
            _ => (&blk.insts, &blk.locs),
        };
        for (inst, &loc) in insts.iter().zip(locs) {
            match inst {
                Inst::Call { d, f, args } => {
                    *flow = self.call(*d, *f, args, loc, flow)?;
                    continue;
                }
                Inst::EnterLocals { f } => {
                    self.reset_locals(*f, flow);
                    continue;
                }
                Inst::CallReturn { d, v, n } => {
                    self.call_result(*d, *v, *n, &flow.set);
                    continue;
                }
                _ => {}
            }
            if let Inst::Barrier {
                workgroup,
                scope,
                sem,
            } = inst
            {
                self.interaction();
                self.barrier(*workgroup, *scope, *sem, loc, flow);
                continue;
            }
            if let Inst::MemoryBarrier { scope, sem } = inst {
                self.interaction();
                self.fence(*scope, *sem, flow);
                continue;
            }
            self.exec(inst, loc, flow)
                .map_err(|e| e.at(self.d.loc(loc)))?;
        }
        self.check_steps(blk)
    }

    pub(crate) fn call(
        &mut self,
        d: Option<Reg>,
        f: FuncIdx,
        args: &[Reg],
        loc: LocId,
        flow: &Flow,
    ) -> Result<Flow, SpirvError> {
        let k = self.k;
        let callee = &k.funcs[f as usize];
        if self.calls >= MAX_CALL_DEPTH {
            return Err(SpirvError::Stopped {
                why: format!("calls nested more than {MAX_CALL_DEPTH} deep"),
                at: self.d.loc(loc).clone(),
            });
        }
        for (k2, &a) in args.iter().enumerate() {
            let p = callee.params[k2];
            let n = callee.param_slots[k2];
            self.copy_reg(p, a, n, &flow.set);
        }
        let ret = self.flow_list();
        self.frames.push(Frame::Func { ret });
        let mut body = flow.clone();
        self.calls += 1;
        self.call_body(f, &mut body)?;
        self.calls -= 1;
        let Some(Frame::Func { ret }) = self.frames.pop() else {
            unreachable!("function frame")
        };
        // SPV_KHR_maximal_reconvergence: a call's return is a reconvergence point; the other models
        // have no rule there (Flow::join). The construct is named by the call's location.
        let joined = Flow::join(
            CALL_CONSTRUCT | loc.get(),
            &ret,
            PerGroup::from_slice(&flow.amb),
        );
        self.give_back_flows(ret);
        if let (Some(d), Some(r)) = (d, callee.ret) {
            self.call_result(d, r, callee.ret_slots, &joined.set);
        }
        if self.any_lost {
            // Lanes lost in the callee are back at the call, whichever way they went: every way
            // through a function ends at its return (a compute shader has no OpKill or
            // OpTerminateInvocation; OpUnreachable is undefined behaviour and ends the lane here;
            // a way that never returns is assumed away, as at a construct's merge). So the call
            // ends their lost path, as a merge every way reaches does (`end_lost_paths`): what
            // they computed on the way is undefined — the result (`call_result`, above) and what
            // the callee stores to their own variables — and their path after the call is not.
            // With `lost_paths_end` off they stay lost, now at the caller's innermost construct.
            let top = (self.frames.len() - 1) as u32;
            let n = self.n;
            let mut lost_in_call = PerGroup::from_elem(LaneMask::EMPTY, self.groups);
            for (s, d) in self.lost_depth.iter_mut().enumerate() {
                if *d != u32::MAX && *d > top {
                    *d = top;
                    lost_in_call[s / n] = lost_in_call[s / n].with((s % n) as u32);
                }
            }
            if self.d.cfg.lost_paths_end && lost_in_call.iter().any(|m| !m.is_empty()) {
                self.taint_own(&k.func_lane_stores[f as usize], &lost_in_call);
                self.found_path(&lost_in_call);
            }
        }
        Ok(joined)
    }

    /// A call's result: `d` = the returned `r` (`n` slots) in lanes `set`; a lane whose path is
    /// lost (in the callee or before the call) may have returned another value.
    pub(crate) fn call_result(&mut self, d: Reg, r: Reg, n: u32, set: &[LaneMask]) {
        self.copy_reg(d, r, n, set);
        if self.any_lost {
            self.taint_lost(d, n, set);
        }
    }
}
