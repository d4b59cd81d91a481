//! `OpGroupNonUniform*`: every subgroup operation is evaluated by the reference model
//! ([`crate::model::run`]) on the lanes executing it together — one definition of each operation.
//! A gather (broadcast, shuffle, quad, rotate) moves its values by the model's plan of source
//! lanes ([`GatherPlan`], [`gather_result`]: the rule `run` follows), made once per checked call.
//! The interpreter only gathers the operands, asks the reconvergence rules whether that set of lanes
//! is pinned down, and carries taint: a result read from a lane whose value is undefined is
//! undefined with that lane's cause.

use crate::model::{
    ballot_bits, gather_result, gather_source, info, value_lanes, ArgKind, Args, Ballot, Exactness,
    GatherPlan, LaneArg, LaneMask, Op, OpCall, OpInfo, Reason, Scalar as MScalar, ScalarType, Sink,
    ValueType,
};
use crate::reconverge::flow::Unpinned;
use crate::reconverge::Flow;
use crate::spirv::error::SpirvError;
use crate::spirv::exec::{Kept, Wg};
use crate::spirv::inst::*;
use crate::spirv::prov::{combine, Cause, Taint};
use crate::spirv::regs::each_span;
use half::f16;

/// Writes the model's results for one subgroup into the result register.
struct RegSink<'a> {
    vals: &'a mut [u64],
    /// first lane slot of the subgroup
    base: usize,
    /// lanes in the register file
    lanes: usize,
    /// result register offset
    d: usize,
    undefined: &'a mut Vec<(u32, Reason)>,
}

impl<S: MScalar, const N: usize> Sink<[S; N]> for RegSink<'_> {
    fn value(&mut self, lane: u32, v: [S; N]) {
        for (c, x) in v.iter().enumerate() {
            self.vals[self.d + c * self.lanes + self.base + lane as usize] = x.to_bits();
        }
    }
    fn boolean(&mut self, lane: u32, b: bool) {
        self.vals[self.d + self.base + lane as usize] = b as u64;
    }
    fn uint(&mut self, lane: u32, x: u32) {
        self.vals[self.d + self.base + lane as usize] = x as u64;
    }
    fn ballot(&mut self, lane: u32, b: Ballot) {
        for (c, w) in b.words().iter().enumerate() {
            self.vals[self.d + c * self.lanes + self.base + lane as usize] = *w as u64;
        }
    }
    fn undefined(&mut self, lane: u32, why: Reason) {
        self.undefined.push((lane, why));
    }
    fn partly_undefined(&mut self, lane: u32, v: [S; N], components: u32, _why: Reason) {
        // The defined components are written; each undefined one is listed with its own
        // reason, which names it (`taint_undefined` marks that component only).
        self.value(lane, v);
        for c in 0..N.min(32) {
            if components & (1 << c) != 0 {
                self.undefined
                    .push((lane, Reason::AllNaN { component: c as u8 }));
            }
        }
    }
}

impl Wg<'_, '_> {
    pub(crate) fn group(
        &mut self,
        flow: &Flow,
        gi: &Group,
        d: Reg,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let size = self.d.cfg.size;
        self.regs.make_dirty(d);
        let db = self.regs.base(d);
        let rn = self.regs.slots(d) as usize;
        // Float add/mul reductions are compared within a bound (order of operations); float
        // min/max up to the sign of zero: both inexact here. The catalogue says which.
        let vt = gi.value.and_then(|(_, s, c)| {
            s.model_type()
                .and_then(|m| ValueType::new(m, Ord::min(c, 4) as u8).ok())
        });
        let op_info = info(gi.op);
        let inexact = match op_info.exactness(vt) {
            Exactness::Bits => Taint::NONE,
            Exactness::MinMaxFloat | Exactness::Tolerance => Taint::INEXACT,
        };
        // What this instruction kept, as this thread's last workgroup left it (the map out of
        // `self` meanwhile, so that it is read in place; put back below).
        let mut all_kept = std::mem::take(&mut self.group_calls);
        let kept = all_kept.entry(gi as *const Group as usize).or_default();
        debug_assert!(
            kept.call
                .as_ref()
                .is_none_or(|(_, c, _)| c.op() == gi.op && c.size() == size),
            "a call kept across dispatches"
        );
        let r = self.group_subgroups(flow, gi, (d, db, rn), loc, (op_info, inexact), kept);
        self.group_calls = all_kept;
        r
    }

    /// [`Wg::group`] for each subgroup with active lanes: result `d` (rows from `db`, `rn`
    /// slots), what the instruction kept.
    fn group_subgroups(
        &mut self,
        flow: &Flow,
        gi: &Group,
        (d, db, rn): (Reg, usize, usize),
        loc: LocId,
        (op_info, inexact): (&'static OpInfo, Taint),
        kept: &mut Kept,
    ) -> Result<(), SpirvError> {
        let (size, n) = (self.d.cfg.size, self.n);
        for g in 0..self.groups {
            let set = flow.set[g];
            if set.is_empty() {
                continue;
            }
            let base = g * n;
            // A tangle the mode does not pin down: the value is computed for the lanes that run
            // together here (one execution the spec allows, which lost lanes then follow) and
            // marked undefined.
            let unpinned = if op_info.tangled() {
                flow.unpinned_why(self.d.cfg.mode, g, &self.lost)
                    .map(|u| match u {
                        Unpinned::Diverged(c) => self.prov(
                            Cause::Subgroup {
                                op: gi.op,
                                reason: Reason::UnpinnedTangle { construct: c },
                            },
                            loc,
                            Taint::NONE,
                        ),
                        // The subgroup's own lost path, else (base reconvergence) the first in
                        // the workgroup.
                        Unpinned::Lost(c) => {
                            let why = Some(self.lost_cause[g])
                                .filter(|t| !t.is_none())
                                .or_else(|| self.lost_cause.iter().copied().find(|t| !t.is_none()))
                                .unwrap_or(Taint::NONE);
                            self.prov(
                                Cause::LostTangle {
                                    op: gi.op,
                                    construct: c,
                                },
                                loc,
                                why,
                            )
                        }
                    })
            } else {
                None
            };
            if matches!(
                gi.op,
                Op::InverseBallot
                    | Op::BallotBitExtract
                    | Op::BallotBitCount(_)
                    | Op::BallotFindLsb
                    | Op::BallotFindMsb
            ) {
                self.ballot_lanes(gi, d, g, set, loc)?;
                continue;
            }
            // Arguments: one value for uniform ones (checked), one per lane otherwise.
            let mut arg_taint = [Taint::NONE; 128];
            let (args, mut bad) = self.group_args(gi, op_info, set, base, &mut arg_taint);
            // Subgroups with the same arguments (no per-lane ones) share one checked call.
            let mut fresh = None;
            if bad.is_none() && !matches!(&kept.call, Some((a, _, _)) if *a == args) {
                match OpCall::new(op_info, size, args.clone()) {
                    Ok(c) if per_lane(&args) => fresh = Some(c),
                    Ok(c) => {
                        let plan = GatherPlan::new(&c);
                        kept.call = Some((args, c, plan));
                    }
                    Err(e) => {
                        bad = Some(Cause::BadArgument {
                            op: gi.op,
                            why: e.to_string(),
                        })
                    }
                }
            }
            let (call, plan) = match (&bad, &fresh, &kept.call) {
                (Some(_), _, _) => (None, None),
                (None, Some(c), _) => (Some(c), None),
                // A gather of the shared call moves values by its plan (the model's source lanes).
                (None, None, Some((_, c, p))) => (Some(c), p.as_ref()),
                (None, None, None) => unreachable!("a call is made or kept above"),
            };
            let Some(call) = call else {
                let p = self.prov(bad.expect("a cause"), loc, Taint::NONE);
                self.set_result_taint(set, (base, db, rn), p);
                continue;
            };
            // The lanes the model left undefined (a list kept across calls: no allocation per
            // subgroup for a shuffle's edge lanes).
            let mut undefined = std::mem::take(&mut self.group_undefined);
            undefined.clear();
            self.group_values(gi, call, plan, set, (base, db), &mut undefined)?;
            self.group_taint(gi, call, plan, set, (base, db, rn), &arg_taint, inexact);
            self.taint_undefined(
                gi.op,
                loc,
                &mut undefined,
                (base, db, rn),
                &mut kept.undefined,
            );
            self.group_undefined = undefined;
            if let Some(p) = unpinned {
                self.set_result_taint(set, (base, db, rn), p);
            }
        }
        Ok(())
    }

    /// Gives every component (`rn`, rows from `db`) of the result in the lanes `set` of the
    /// subgroup at `base` the taint `p`.
    fn set_result_taint(&mut self, set: LaneMask, (base, db, rn): (usize, usize, usize), p: Taint) {
        let lanes = self.lanes;
        for l in set.iter() {
            for c in 0..rn {
                self.regs.taint[db + c * lanes + base + l as usize] = p;
            }
        }
    }

    /// The values of a subgroup instruction's result in one subgroup (at `base`; result row at
    /// `db`): a gather of the shared call by its plan, anything else by the model's `run`.
    fn group_values(
        &mut self,
        gi: &Group,
        call: &OpCall,
        plan: Option<&GatherPlan>,
        set: LaneMask,
        (base, db): (usize, usize),
        undefined: &mut Vec<(u32, Reason)>,
    ) -> Result<(), SpirvError> {
        let lanes = self.lanes;
        match gi.value {
            None => {
                let mut sink = RegSink {
                    vals: &mut self.regs.vals,
                    base,
                    lanes,
                    d: db,
                    undefined,
                };
                crate::model::run::<u32, 1, _>(call, set, &[], &mut sink);
            }
            Some((r, s, comps)) => {
                let st = s
                    .model_type()
                    .ok_or_else(|| SpirvError::malformed("a subgroup operation on a pointer"))?;
                let rb = self.regs.base(r);
                match plan {
                    Some(p) if rb != db => self.gather_rows(
                        p,
                        call,
                        st.bits(),
                        comps as usize,
                        set,
                        (rb, base, db),
                        undefined,
                    ),
                    _ => run_typed(self, st, comps as usize, call, set, rb, base, db, undefined),
                }
            }
        }
        Ok(())
    }

    /// Marks the lanes the model left undefined (`undefined`, drained) in the result rows, each
    /// with its reason as a cause; `last` keeps the last reason's provenance (a shuffle's edge lane
    /// has the same reason in every subgroup: one lookup).
    fn taint_undefined(
        &mut self,
        op: Op,
        loc: LocId,
        undefined: &mut Vec<(u32, Reason)>,
        (base, db, rn): (usize, usize, usize),
        last: &mut Option<(Reason, Taint)>,
    ) {
        let lanes = self.lanes;
        for (l, why) in undefined.drain(..) {
            let p = match last {
                Some((w, p)) if *w == why => *p,
                _ => {
                    let p = self.prov(Cause::Subgroup { op, reason: why }, loc, Taint::NONE);
                    *last = Some((why, p));
                    p
                }
            };
            // A reason that names a component (a component-wise min or max) marks that one.
            let comps = match why {
                Reason::AllNaN { component } if (component as usize) < rn => {
                    component as usize..component as usize + 1
                }
                _ => 0..rn,
            };
            for c in comps {
                let i = db + c * lanes + base + l as usize;
                self.regs.taint[i] = p | self.regs.taint[i].inexact_part();
            }
        }
    }

    /// The arguments of a subgroup instruction for the lanes of `set` (subgroup at `base`): one
    /// value for uniform ones, where a lane that differs is a cause of its own; one per lane
    /// otherwise. Fills each lane's argument taint (a uniform argument's reaches every lane).
    /// The ballot instructions' arguments (`subgroupBallotBitExtract`'s index among them) are read
    /// by `ballot_lanes`, which runs those instructions; they never come here.
    fn group_args(
        &self,
        gi: &Group,
        op_info: &'static OpInfo,
        set: LaneMask,
        base: usize,
        arg_taint: &mut [Taint; 128],
    ) -> (Args, Option<Cause>) {
        let n = self.n;
        let mut args = Args::default();
        let mut bad: Option<Cause> = None;
        if let Some(r) = gi.lane_arg {
            let rb = self.regs.base(r);
            let rt = self.regs.dirty(r);
            let kind = op_info.args.iter().copied().find(|k| {
                matches!(
                    k,
                    ArgKind::Id { .. } | ArgKind::Mask | ArgKind::Delta { .. } | ArgKind::QuadIndex
                )
            });
            let uniform_required = kind.is_some_and(|k| k.uniform() || k == ArgKind::QuadIndex);
            // A constant (a shuffle's delta of 1): one value, without taint, in every lane.
            let constant = !rt && self.consts[r.index()];
            let mut per = [0u32; 128];
            if !constant {
                for l in set.iter() {
                    let s = base + l as usize;
                    per[l as usize] = self.regs.vals[rb + s] as u32;
                    if rt {
                        arg_taint[l as usize] = self.regs.taint[rb + s];
                    }
                }
            }
            let first = set.lowest().map(|l| per[l as usize]).unwrap_or(0);
            let lane_arg = if constant {
                LaneArg::Uniform(self.regs.vals[rb] as u32)
            } else if uniform_required {
                if set.iter().any(|l| per[l as usize] != first) {
                    bad = Some(Cause::NotUniform {
                        op: gi.op,
                        arg: kind.map(|k| k.name()).unwrap_or("id"),
                    });
                }
                // A uniform argument's taint reaches every lane.
                let t = set
                    .iter()
                    .fold(Taint::NONE, |t, l| combine(t, arg_taint[l as usize]));
                for l in set.iter() {
                    arg_taint[l as usize] = t;
                }
                LaneArg::Uniform(first)
            } else if set.iter().all(|l| per[l as usize] == first) {
                // The same value in every lane that reads it: one value serves them all.
                LaneArg::Uniform(first)
            } else {
                LaneArg::PerLane(per[..n].to_vec())
            };
            match kind {
                Some(ArgKind::Id { .. }) | Some(ArgKind::QuadIndex) => args.id = Some(lane_arg),
                Some(ArgKind::Mask) => args.mask = Some(lane_arg),
                Some(ArgKind::Delta { .. }) => args.delta = Some(lane_arg),
                _ => {}
            }
        }
        if let Some(c) = gi.cluster {
            args.cluster = Some(c as u64);
        }
        (args, bad)
    }

    /// The taint of a subgroup instruction's result in each lane of `set`: its arguments', an
    /// inexact operation's, and the value's of the lanes it is computed from (a gather's source
    /// lane, a scan's prefix or a cluster; every active lane otherwise).
    #[allow(clippy::too_many_arguments)]
    fn group_taint(
        &mut self,
        gi: &Group,
        call: &OpCall,
        plan: Option<&GatherPlan>,
        set: LaneMask,
        (base, db, rn): (usize, usize, usize),
        arg_taint: &[Taint; 128],
        inexact: Taint,
    ) {
        let lanes = self.lanes;
        // Taint: gathers take their source lane's; everything else every active lane's.
        let vtaint = gi
            .value
            .map(|(r, _, comps)| (self.regs.base(r), self.regs.dirty(r), comps as usize));
        // Nothing tainted (the value, the arguments) and an exact operation: no lane's result is.
        if vtaint.is_none_or(|(_, dirty, _)| !dirty)
            && inexact.is_none()
            && arg_taint[..self.n].iter().all(|t| t.is_none())
        {
            for c in 0..rn {
                let row = &mut self.regs.taint[db + c * lanes + base..];
                each_span(&[set], self.n, |r| row[r].fill(Taint::NONE));
            }
            return;
        }
        let first = set.lowest().unwrap_or(0);
        let is_gather = gather_source(call, 0, first).is_some();
        // A result of the value's shape is computed component by component (GL_KHR_shader_subgroup:
        // "if <value> is of a vector type, the operation is performed component-wise across the
        // vector"; every such instruction's result type is its value's): result component `c`
        // reads component `c` of the lanes it is computed from. A result of another shape
        // (`subgroupAllEqual` of a vector) reads every component; a ballot's words, below.
        let per_comp = matches!(vtaint, Some((_, _, comps)) if comps == rn && comps > 1);
        let slot = |c: usize| if per_comp { c.min(15) } else { 0 };
        // `subgroupBallot`: word `w` of the result holds the bits of invocations 32·w to
        // 32·w + 31, and a word past the subgroup is zero ("the corresponding bits are set for
        // only the active invocations"): it reads only its own invocations' values.
        let ballot = gi.op == Op::Ballot && rn == 4;
        let out_slot = |c: usize| if ballot { c } else { slot(c) };
        // Which slot of a lane's taint the value of lane `l`'s component `c` goes to.
        let src_slot = |l: usize, c: usize| if ballot { (l / 32).min(3) } else { slot(c) };
        let decided = self.vote_decided(gi, set, base);
        for l in set.iter() {
            let t = arg_taint[l as usize] | inexact;
            let mut tc = [Taint::NONE; 16];
            if is_gather {
                let src = match plan {
                    Some(p) => p.source(l, set),
                    None => gather_source(call, l, first).and_then(|s| s.ok()),
                };
                if let (Some(src), Some((rb, true, comps))) = (src, vtaint) {
                    for c in 0..comps {
                        let tk = &mut tc[slot(c)];
                        *tk = combine(*tk, self.regs.taint[rb + c * lanes + base + src as usize]);
                    }
                }
            } else if decided {
                // The defined values decide the vote whatever the undefined ones are.
            } else if let Some((rb, true, comps)) = vtaint {
                // Only the lanes this lane's result is computed from (a scan's prefix, a
                // cluster): one undefined lane does not make the whole subgroup undefined. An
                // operation with no lanes of its own to read reads every active lane.
                let from = value_lanes(call, l, set).unwrap_or(set);
                for k in from.iter() {
                    for c in 0..comps {
                        let tk = &mut tc[src_slot(k as usize, c)];
                        *tk = combine(*tk, self.regs.taint[rb + c * lanes + base + k as usize]);
                    }
                }
            }
            for c in 0..rn {
                self.regs.taint[db + c * lanes + base + l as usize] = combine(t, tc[out_slot(c)]);
            }
        }
    }

    /// Whether the defined values of a vote decide it, whatever the undefined ones are (an
    /// undefined value is still some value of its type, SPIR-V 2.2.2 "Undefined"):
    /// GL_KHR_shader_subgroup, `subgroupAll` "returns true if for all active invocations <value>
    /// evaluates to true" — one defined `false` makes it false; `subgroupAny` "returns true if for
    /// any active invocation <value> evaluates to true" — one defined `true` makes it true;
    /// `subgroupAllEqual` "returns true if for all active invocations <value> is the same" — two
    /// defined values that differ (in a component both define; floats as numbers, neither a NaN
    /// nor the two zeros) make it false.
    fn vote_decided(&self, gi: &Group, set: LaneMask, base: usize) -> bool {
        let Some((r, s, comps)) = gi.value else {
            return false;
        };
        if !matches!(gi.op, Op::All | Op::Any | Op::AllEqual) || !self.regs.dirty(r) {
            return false;
        }
        let (rb, lanes) = (self.regs.base(r), self.lanes);
        let at = |c: usize, l: u32| rb + c * lanes + base + l as usize;
        let clean = |c: usize, l: u32| self.regs.taint[at(c, l)].is_none();
        let val = |c: usize, l: u32| self.regs.vals[at(c, l)];
        match gi.op {
            Op::All => set.iter().any(|l| clean(0, l) && val(0, l) & 1 == 0),
            Op::Any => set.iter().any(|l| clean(0, l) && val(0, l) & 1 == 1),
            _ => (0..comps as usize).any(|c| {
                let w = s.bits() as u8;
                let mut first: Option<u64> = None;
                set.iter().filter(|&l| clean(c, l)).any(|l| {
                    let v = val(c, l) & crate::spirv::scalar::mask(w);
                    match first {
                        None => {
                            first = Some(v);
                            false
                        }
                        Some(f) if s.is_float() => {
                            let (a, b) = (
                                crate::spirv::scalar::f_get(w, f),
                                crate::spirv::scalar::f_get(w, v),
                            );
                            !a.is_nan() && !b.is_nan() && a != b
                        }
                        Some(f) => f != v,
                    }
                })
            }),
        }
    }

    /// The ballot bit operations read only the lane's own operands: evaluated per lane (lanes with
    /// the same ballot and index share one evaluation).
    fn ballot_lanes(
        &mut self,
        gi: &Group,
        d: Reg,
        g: usize,
        set: LaneMask,
        loc: LocId,
    ) -> Result<(), SpirvError> {
        let size = self.d.cfg.size;
        let (n, lanes) = (self.n, self.lanes);
        let base = g * n;
        let db = self.regs.base(d);
        let br = gi.ballot.expect("ballot operand");
        let bb = self.regs.base(br);
        let bt = self.regs.dirty(br);
        let (ib, it) = match gi.lane_arg {
            Some(r) => (Some(self.regs.base(r)), self.regs.dirty(r)),
            None => (None, false),
        };
        let mut last: Option<([u32; 4], u32, OpCall)> = None;
        for l in set.iter() {
            let s = base + l as usize;
            let words = [0, 1, 2, 3].map(|c| self.regs.vals[bb + c * lanes + s] as u32);
            let idx = ib.map(|ib| self.regs.vals[ib + s] as u32).unwrap_or(0);
            let mut t = Taint::NONE;
            if it {
                t = combine(t, self.regs.taint[ib.unwrap_or(0) + s]);
            }
            let reuse = matches!(&last, Some((w, i, _)) if *w == words && *i == idx);
            if !reuse {
                let mut args = Args {
                    ballot: Some(Ballot::from_words(words)),
                    ..Args::default()
                };
                if gi.op == Op::BallotBitExtract {
                    args.index = Some(LaneArg::Uniform(idx));
                }
                let call = OpCall::new(info(gi.op), size, args)
                    .map_err(|e| SpirvError::malformed(e.to_string()))?;
                last = Some((words, idx, call));
            }
            let call = &last.as_ref().expect("set above").2;
            if bt {
                // Only the words of the ballot holding a bit this lane's result reads (the
                // model's rule): an undefined word beyond them does not reach the result.
                let read = ballot_bits(call, l).map_or(!0, |m| m.0);
                for c in 0..4 {
                    if (read >> (32 * c)) as u32 != 0 {
                        t = combine(t, self.regs.taint[bb + c * lanes + s]);
                    }
                }
            }
            let mut undefined = Vec::new();
            let mut sink = RegSink {
                vals: &mut self.regs.vals,
                base,
                lanes,
                d: db,
                undefined: &mut undefined,
            };
            crate::model::run::<u32, 1, _>(call, LaneMask::EMPTY.with(l), &[], &mut sink);
            self.regs.taint[db + s] = t;
            if let Some((_, why)) = undefined.pop() {
                let p = self.prov(
                    Cause::Subgroup {
                        op: gi.op,
                        reason: why,
                    },
                    loc,
                    Taint::NONE,
                );
                self.regs.taint[db + s] = p;
            }
        }
        Ok(())
    }
}

impl Wg<'_, '_> {
    /// A gather's results in one subgroup (at `base`) by its plan: each lane the model gives a
    /// source ([`GatherPlan`], [`gather_result`]'s rule) gets that lane's value of the operand (at
    /// `rb`) — its low `bits` bits, as the model's scalar type holds it — for the first four
    /// components (as [`run_typed`]); the other lanes of `set` go to `undefined` with the
    /// model's reason, in lane order, and keep what their result row held.
    #[allow(clippy::too_many_arguments)]
    fn gather_rows(
        &mut self,
        plan: &GatherPlan,
        call: &OpCall,
        bits: u32,
        comps: usize,
        set: LaneMask,
        (rb, base, db): (usize, usize, usize),
        undefined: &mut Vec<(u32, Reason)>,
    ) {
        let (n, lanes) = (self.n, self.lanes);
        let set = set.and(call.size().full_mask());
        let und = plan.undefined(set);
        let defined = LaneMask(set.0 & !und.0);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let vals = &mut self.regs.vals;
        for c in 0..comps.min(4) {
            let (from, to) = (rb + c * lanes + base, db + c * lanes + base);
            match plan.offset() {
                // A relative shuffle over a whole subgroup: its defined lanes read one block.
                // (GatherPlan: its in-range lanes are then one run reading one run.)
                Some(off) if set.count() as usize == n && defined.0 != 0 => {
                    let (lo, hi) = (
                        defined.0.trailing_zeros() as usize,
                        128 - defined.0.leading_zeros() as usize,
                    );
                    debug_assert_eq!(defined.count() as usize, hi - lo, "one run of lanes");
                    let src = (from + lo).wrapping_add_signed(off as isize);
                    vals.copy_within(src..src + (hi - lo), to + lo);
                    if mask != u64::MAX {
                        vals[to + lo..to + hi].iter_mut().for_each(|v| *v &= mask);
                    }
                }
                _ => {
                    for l in defined.iter() {
                        let s = plan.source(l, set).expect("a defined lane has a source");
                        vals[to + l as usize] = vals[from + s as usize] & mask;
                    }
                }
            }
        }
        for l in und.iter() {
            if let Some(Err(why)) = gather_result(call, set, l) {
                undefined.push((l, why));
            }
        }
    }
}

/// Does a call take one value per lane (then it is not shared between subgroups)?
fn per_lane(a: &Args) -> bool {
    [&a.id, &a.mask, &a.delta, &a.index]
        .iter()
        .any(|x| matches!(x, Some(LaneArg::PerLane(_))))
}

/// Gathers the value operand of one subgroup as `[S; N]` lanes (on the stack: no allocation) and
/// runs the model.
#[allow(clippy::too_many_arguments)]
fn run_typed(
    wg: &mut Wg<'_, '_>,
    st: ScalarType,
    comps: usize,
    call: &OpCall,
    set: LaneMask,
    rb: usize,
    base: usize,
    db: usize,
    undefined: &mut Vec<(u32, Reason)>,
) {
    macro_rules! go {
        ($S:ty) => {
            match comps {
                1 => typed::<$S, 1>(wg, call, set, rb, base, db, undefined),
                2 => typed::<$S, 2>(wg, call, set, rb, base, db, undefined),
                3 => typed::<$S, 3>(wg, call, set, rb, base, db, undefined),
                _ => typed::<$S, 4>(wg, call, set, rb, base, db, undefined),
            }
        };
    }
    match st {
        ScalarType::Bool => go!(bool),
        ScalarType::I8 => go!(i8),
        ScalarType::U8 => go!(u8),
        ScalarType::I16 => go!(i16),
        ScalarType::U16 => go!(u16),
        ScalarType::I32 => go!(i32),
        ScalarType::U32 => go!(u32),
        ScalarType::I64 => go!(i64),
        ScalarType::U64 => go!(u64),
        ScalarType::F16 => go!(f16),
        ScalarType::F32 => go!(f32),
        ScalarType::F64 => go!(f64),
    }
}

fn typed<S: MScalar, const N: usize>(
    wg: &mut Wg<'_, '_>,
    call: &OpCall,
    set: LaneMask,
    rb: usize,
    base: usize,
    db: usize,
    undefined: &mut Vec<(u32, Reason)>,
) {
    let n = wg.n;
    let lanes = wg.lanes;
    let mut input = [[S::from_bits(0); N]; 128];
    for c in 0..N {
        let row = &wg.regs.vals[rb + c * lanes + base..][..n];
        each_span(&[set], n, |r| {
            for (x, &v) in input[r.clone()].iter_mut().zip(&row[r]) {
                x[c] = S::from_bits(v);
            }
        });
    }
    let mut sink = RegSink {
        vals: &mut wg.regs.vals,
        base,
        lanes,
        d: db,
        undefined,
    };
    crate::model::run(call, set, &input[..n], &mut sink);
}
