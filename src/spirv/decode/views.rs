//! Extracts read in place. A composite extract (`Inst::Move` of some slots of a register) whose
//! result is read only by its block's instructions before the register it reads is written again
//! needs no copy: its uses can read those slots where they are, through a *view* — a register
//! with no rows of its own ([`crate::spirv::inst::RegView`]; the register file's "Views"). The
//! promotion pass makes them ([`super::promote`]), as it renames a whole copy to its source. The
//! other way round, a composite built of parts its block computes (`OpCompositeConstruct`) needs
//! no copy either where nothing reads or writes it while they are computed: each part is computed
//! in its place ([`Views::parts_in_place`]).

use std::collections::{HashMap, HashSet};

use super::promote::term_reads;
use crate::spirv::inst::{Block, Inst, Reg, Term};
use crate::spirv::operands::Role;

/// The views a pass made.
#[derive(Default)]
pub(super) struct Views {
    /// each view: its owner and the owner's first slot it reads
    of: HashMap<Reg, (Reg, u32)>,
    /// the view of (owner, first slot, slots), made once
    made: HashMap<(Reg, u32, u32), Reg>,
}

impl Views {
    /// Where `to` is a view: the register whose writes change what it reads.
    pub(super) fn owner(&self, to: Reg) -> Option<Reg> {
        self.of.get(&to).map(|v| v.0)
    }

    /// The view of slots `off..off + n` of `a` (of its owner, where `a` is a view itself), made by
    /// `make(owner, slot)` where there is none yet.
    pub(super) fn view(
        &mut self,
        a: Reg,
        off: u32,
        n: u32,
        make: impl FnOnce(Reg, u32) -> Reg,
    ) -> Reg {
        let (of, base) = self.of.get(&a).copied().unwrap_or((a, 0));
        let slot = base + off;
        if let Some(v) = self.made.get(&(of, slot, n)) {
            return *v;
        }
        let view = make(of, slot);
        self.of.insert(view, (of, slot));
        self.made.insert((of, slot, n), view);
        view
    }

    /// Does `r` name register `o`, itself or a view of it?
    fn is_of(&self, r: Reg, o: Reg) -> bool {
        r == o || self.owner(r) == Some(o)
    }

    /// Parts of a composite computed in its place, in a block's promoted body (`body`; the block
    /// ends in `term`, `live_out` is read after it): for `o = OpCompositeConstruct(p…)` where each
    /// part `p` is defined earlier in the body, nothing from the first part's definition through
    /// the construct reads or writes `o` (or a view of it) or calls, and each part's reads after
    /// the construct (before its next definition; none after the block) end before `o` is written
    /// again, that read included — each part's definition writes a view of its slots of `o`, its
    /// reads read that view, and the construct is not run. `make(owner, slot, slots)` makes a
    /// view. Whether the body changed.
    pub(super) fn parts_in_place(
        &mut self,
        body: &mut Vec<(Inst, usize)>,
        live_out: &HashSet<Reg>,
        term: &Term,
        make: &mut dyn FnMut(Reg, u32, u32) -> Reg,
    ) -> bool {
        let term_reads = term_reads(term);
        let mut gone = vec![false; body.len()];
        for c in 0..body.len() {
            let Inst::Construct { d: o, parts } = &body[c].0 else {
                continue;
            };
            let (o, parts) = (*o, parts.clone());
            let at = (c, &gone[..]);
            let Some(plan) = self.in_place_plan(body, at, o, &parts, live_out, &term_reads) else {
                continue;
            };
            for (p, slot, k, j, end) in plan {
                let w = self.view(o, slot, k, |of, slot| make(of, slot, k));
                body[j].0.operands_mut(|role, r| {
                    if role == Role::Def && *r == p {
                        *r = w;
                    }
                });
                for (i, _) in &mut body[j + 1..=end] {
                    i.operands_mut(|role, r| {
                        if role == Role::Use && *r == p {
                            *r = w;
                        }
                    });
                }
            }
            gone[c] = true;
        }
        if !gone.contains(&true) {
            return false;
        }
        let mut at = 0;
        body.retain(|_| {
            at += 1;
            !gone[at - 1]
        });
        true
    }

    /// For the construct `o = parts` at `c` of `body` (`gone`: the constructs already not run): per
    /// part, its register, first slot, slots, the index of its definition and of the last
    /// instruction to rename its reads in — or `None` where the parts cannot be computed in place
    /// ([`Views::parts_in_place`]).
    #[allow(clippy::type_complexity)]
    fn in_place_plan(
        &self,
        body: &[(Inst, usize)],
        (c, gone): (usize, &[bool]),
        o: Reg,
        parts: &[(Reg, u32)],
        live_out: &HashSet<Reg>,
        term_reads: &[Reg],
    ) -> Option<Vec<(Reg, u32, u32, usize, usize)>> {
        if self.owner(o).is_some() {
            return None;
        }
        let mut plan = Vec::with_capacity(parts.len());
        let mut slot = 0;
        for (i, &(p, k)) in parts.iter().enumerate() {
            // Distinct parts, none `o` or a view, each defined in the body before the construct.
            if k == 0 || p == o || self.owner(p).is_some() || parts[..i].iter().any(|q| q.0 == p) {
                return None;
            }
            // (Not a construct whose parts were computed in place: nothing writes `p` there.)
            let j = (0..c).rev().find(|&j| body[j].0.def() == Some(p))?;
            if gone[j] {
                return None;
            }
            // No view of `p` read after it: `p`'s own rows are no longer written.
            let mut viewed = false;
            for (inst, _) in &body[j + 1..] {
                inst.operands(|role, r| viewed |= role == Role::Use && self.owner(r) == Some(p));
            }
            if viewed {
                return None;
            }
            // Its reads after the construct, up to its next definition (that one's reads too).
            let r = reads(body.iter().map(|x| &x.0), c, p);
            if !r.redefined && (live_out.contains(&p) || term_reads.contains(&p)) {
                return None;
            }
            plan.push((p, slot, k, j, r.last));
            slot += k;
        }
        let first = plan.iter().map(|x| x.3).min()?;
        let last = plan.iter().map(|x| x.4).max()?;
        for (at, (inst, _)) in body.iter().enumerate().take(last + 1).skip(first) {
            if matches!(inst, Inst::Call { .. }) {
                return None;
            }
            let def = inst.def();
            if at < c {
                // Nothing reads or writes `o` while its parts are computed.
                let mut touches = def.is_some_and(|d| self.is_of(d, o));
                inst.operands(|role, r| touches |= role == Role::Use && self.is_of(r, o));
                if touches {
                    return None;
                }
            } else if at > c && def.is_some_and(|d| self.is_of(d, o)) {
                // `o` written again while a part is still read there, or at that read.
                let reads_part = |p: Reg| {
                    let mut r = false;
                    inst.operands(|role, x| r |= role == Role::Use && x == p);
                    r
                };
                if plan
                    .iter()
                    .any(|&(p, _, _, _, end)| at < end || (at == end && reads_part(p)))
                {
                    return None;
                }
            }
        }
        Some(plan)
    }
}

/// Is register `d`, as instruction `at` of `b` defines it, read only by the block's instructions
/// before its next definition (not by its terminator, not after it — `live_out` — and not after a
/// call), and `to` not written before the last such read (`through_last`: nor by it) — by an
/// instruction, or as the register of a carried variable a store writes (`carry_of`)?
pub(super) fn stable(
    b: &Block,
    live_out: &HashSet<Reg>,
    at: usize,
    d: Reg,
    to: Reg,
    carry_of: &HashMap<Reg, Reg>,
    through_last: bool,
) -> bool {
    let insts = &b.insts;
    let Reads {
        last,
        redefined,
        after_call,
    } = reads(insts.iter(), at, d);
    if after_call || (!redefined && (live_out.contains(&d) || term_reads(&b.term).contains(&d))) {
        return false;
    }
    let end = if through_last {
        last + 1
    } else {
        last.max(at + 1)
    };
    insts[at + 1..end].iter().all(|i| {
        i.def() != Some(to)
            && !matches!(i, Inst::Store { ptr, .. } if carry_of.get(ptr) == Some(&to))
    })
}

/// The reads of a register in a block's instructions after the one at `at` that defines it, up to
/// its next definition (that one's reads included): [`stable`], [`Views::parts_in_place`].
struct Reads {
    /// the index of the last such read (`at` where there is none)
    last: usize,
    /// whether the register is defined again
    redefined: bool,
    /// whether a call comes before one of the reads
    after_call: bool,
}

/// [`Reads`] of `d` in `insts`, defined at index `at`.
fn reads<'i>(insts: impl Iterator<Item = &'i Inst>, at: usize, d: Reg) -> Reads {
    let mut out = Reads {
        last: at,
        redefined: false,
        after_call: false,
    };
    let mut called = false;
    for (j, i) in insts.enumerate().skip(at + 1) {
        let mut read = false;
        i.operands(|role, r| read |= role == Role::Use && r == d);
        if read {
            out.after_call |= called;
            out.last = j;
        }
        if i.def() == Some(d) {
            out.redefined = true;
            break;
        }
        called |= matches!(i, Inst::Call { .. });
    }
    out
}
