//! Decode-time unrolling of loops whose trip count is a constant (issue 22 §2: fewer blocks, not
//! faster ones).
//!
//! glslang's unoptimised output keeps every `for (uint i = 0; i < 3; ++i)` a loop: a header, a
//! block that loads the counter and compares it, the body, and a continue block that loads,
//! increments and stores the counter — four blocks and their control-flow state for each
//! iteration (the Gray-Scott `subgroup_1d` shader: 74 blocks per workgroup, 57 of them its two
//! stencil loops). A loop is unrolled when:
//! - its blocks form one chain from the header back to it through its continue target — every
//!   block ends in `OpBranch` but one, whose `OpBranchConditional` leaves for the merge block (the
//!   test); no block of it heads a construct of its own, no block has phis (nor the merge block),
//!   and a call in it goes to a function that is one such chain too (no branch a lane could take
//!   its own way, nothing that can lose a path);
//! - its header is entered from one block besides the back edge, and the test's value in every
//!   iteration follows from constants alone: the decoder evaluates the chain with the executor's
//!   own integer rules ([`scalar::int_bin`], [`scalar::int_cmp`]) over the module's constants and
//!   the `Function` variables whose address never escapes (only ever the pointer of a load or a
//!   store, always at offset 0 with one plan) — no store through any other pointer can reach
//!   those — starting from what the entering block stored in them;
//! - it runs at most [`MAX_TRIPS`] iterations, and the unrolled body stays within
//!   [`MAX_UNROLLED`] instructions.
//!
//! The header then holds the chain's instructions, iteration after iteration and the last test,
//! and branches to the merge block; the loop as written stays beside it
//! ([`crate::spirv::inst::Block::written`]). Why the results are the same to the bit: every
//! instruction of every iteration runs, in order, on the same lanes; the test's condition is the
//! same constant in every lane — so no lane leaves at its own iteration, and the loop's merge,
//! continue target and back edge join the lanes that entered, which is the flow that entered. The
//! one way a test could differ is a lane whose path is lost (its stores then carry the lost path's
//! taint: the counter's too, and the test then branches on an undefined value): the unrolled body
//! runs only while no path of the workgroup has been lost, as the promoted bodies do; after that
//! the executor runs the loop as written. Lane-instruction counts are those of the loop as written
//! (the terminators of the blocks folded into one are counted as executed), and the step limit is
//! checked at the end of the unrolled body rather than of each block (a run stopped there names the
//! header's line).

use crate::spirv::inst::{
    calls_post_order, Block, Func, Inst, Merge, ObjectId, Plan, Reg, Term, WrittenLoop,
};
use crate::spirv::operands::Role;
use crate::spirv::scalar;
use std::collections::{HashMap, HashSet};

impl crate::spirv::Kernel {
    /// How many loops were unrolled at decode time ([`crate::spirv::DecodeOptions::keep_loops`]
    /// runs them all as written).
    pub fn unrolled(&self) -> usize {
        self.funcs
            .iter()
            .flat_map(|f| &f.blocks)
            .filter(|b| b.written.is_some())
            .count()
    }
}

/// Loops of more iterations stay loops.
pub(super) const MAX_TRIPS: u32 = 32;
/// An unrolled body is not grown past this many instructions.
pub(super) const MAX_UNROLLED: usize = 4096;

/// What unrolling needs of the module.
pub(super) struct Unroll<'a> {
    /// defined scalar constants by register
    pub consts: &'a HashMap<Reg, u64>,
    /// registers holding a pointer into a variable, and the variable
    pub var_regs: &'a HashMap<Reg, ObjectId>,
    /// the pointer bits of each such constant register (offset 0 is the variable itself)
    pub ptr_bits: &'a HashMap<Reg, u64>,
    /// whether each object is a `Function` variable
    pub function_var: &'a [bool],
    /// the load and store plans
    pub plans: &'a [Plan],
}

/// A loop found unrollable: the blocks it runs, in order, and the chain as written.
struct Unrolling {
    seq: Vec<usize>,
    chain: Vec<usize>,
    merge: usize,
}

impl Unroll<'_> {
    /// Unrolls every loop of `funcs` that can be (callees first, the innermost loop of a
    /// function first); how many.
    /// `slots`: the slots of every register, grown by the registers the unrolled bodies take.
    pub(super) fn run(&self, funcs: &mut [Func], slots: &mut Vec<u32>) -> usize {
        let (order, _) = calls_post_order(funcs, 0..funcs.len());
        let mut straight = vec![false; funcs.len()];
        let mut done = 0;
        for f in order {
            let tracked = self.tracked(&funcs[f]);
            for h in (0..funcs[f].blocks.len()).rev() {
                if let Some(p) = self.plan(&funcs[f], h, &tracked, &straight) {
                    unroll(&mut funcs[f], h, p, slots);
                    done += 1;
                }
            }
            straight[f] = is_straight(&funcs[f], &straight);
        }
        done
    }

    /// The `Function` variables of `f` whose address never escapes: every register pointing
    /// into one is only ever the pointer of a load or a store, at offset 0, with one plan.
    fn tracked(&self, f: &Func) -> HashSet<ObjectId> {
        let mut seen: HashMap<ObjectId, u32> = HashMap::new();
        let mut bad: HashSet<ObjectId> = HashSet::new();
        let obj = |r: Reg| self.var_regs.get(&r).copied();
        let at_zero = |r: Reg, o: ObjectId| {
            self.ptr_bits
                .get(&r)
                .is_some_and(|b| *b == crate::spirv::memory::Ptr::new(o, 0).bits())
        };
        for b in &f.blocks {
            for i in &b.insts {
                let access = match i {
                    Inst::Load { ptr, plan, .. } | Inst::Store { ptr, plan, .. } => {
                        Some((*ptr, *plan))
                    }
                    _ => None,
                };
                if let Some((ptr, plan)) = access
                    && let Some(o) = obj(ptr)
                {
                    // One scalar of 32 or 64 bits: a store and a load copy its bits and back.
                    let pl = &self.plans[plan as usize];
                    let scalar = pl.slots.len() == 1 && pl.slots[0].0.bytes() >= 4;
                    if !scalar || !at_zero(ptr, o) || *seen.entry(o).or_insert(plan) != plan {
                        bad.insert(o);
                    }
                }
                i.operands(|role, r| {
                    if role == Role::Use
                        && Some(r) != access.map(|a| a.0)
                        && let Some(o) = obj(r)
                    {
                        bad.insert(o);
                    }
                });
                // A store's value that is the pointer itself escapes too.
                if let Inst::Store { ptr, v, .. } = i
                    && ptr == v
                    && let Some(o) = obj(*v)
                {
                    bad.insert(o);
                }
            }
            let phis = b
                .phis
                .iter()
                .flat_map(|p| p.incoming.iter().map(|(_, v)| *v));
            let term = match &b.term {
                Term::Cond { c, .. } => Some(*c),
                Term::Switch { sel, .. } => Some(*sel),
                Term::ReturnValue(v) => Some(*v),
                _ => None,
            };
            for r in phis.chain(term) {
                if let Some(o) = obj(r) {
                    bad.insert(o);
                }
            }
        }
        seen.into_keys()
            .filter(|o| !bad.contains(o) && self.function_var[o.index()])
            .collect()
    }

    /// Whether the loop headed by block `h` of `f` can be unrolled, and how.
    fn plan(
        &self,
        f: &Func,
        h: usize,
        tracked: &HashSet<ObjectId>,
        straight: &[bool],
    ) -> Option<Unrolling> {
        let blocks = &f.blocks;
        let Merge::Loop { merge, cont } = blocks[h].merge else {
            return None;
        };
        let (merge, cont) = (merge as usize, cont as usize);
        if cont == h || !blocks[merge].phis.is_empty() || blocks[h].written.is_some() {
            return None;
        }
        // The chain from the header back to it, and its one test.
        let mut chain = vec![h];
        let mut test: Option<(usize, Reg, bool)> = None;
        let mut b = h;
        loop {
            let blk = &blocks[b];
            if !blk.phis.is_empty() || (b != h && blk.merge != Merge::None) {
                return None;
            }
            let calls_ok = blk.insts.iter().all(|i| match i {
                Inst::Call { f, .. } => straight[*f as usize],
                _ => true,
            });
            if !calls_ok {
                return None;
            }
            let next = match blk.term {
                Term::Branch(t) => t as usize,
                Term::Cond { c, t, f: e } if test.is_none() => {
                    let (t, e) = (t as usize, e as usize);
                    if (t == merge) == (e == merge) {
                        return None;
                    }
                    test = Some((b, c, t == merge));
                    if t == merge {
                        e
                    } else {
                        t
                    }
                }
                _ => return None,
            };
            if next == h {
                if b != cont {
                    return None;
                }
                break;
            }
            if next == merge || chain.contains(&next) || chain.len() >= 64 {
                return None;
            }
            chain.push(next);
            b = next;
        }
        let (tb, c, exit_if) = test?;
        // One entering block besides the back edge.
        let preds: Vec<usize> = (0..blocks.len())
            .filter(|&p| blocks[p].term.successors().any(|s| s as usize == h))
            .collect();
        let entry = match preds.as_slice() {
            [a, b] if *b == cont => *a,
            [a, b] if *a == cont => *b,
            _ => return None,
        };
        if chain.contains(&entry) {
            return None;
        }
        // The iterations, evaluated from what the entering block leaves.
        let mut ev = Eval {
            u: self,
            tracked,
            regs: HashMap::new(),
            mem: HashMap::new(),
        };
        for i in &blocks[entry].insts {
            ev.step(i);
        }
        let mut seq = Vec::new();
        let mut size = 0usize;
        for _ in 0..=MAX_TRIPS {
            for &b in &chain {
                for i in &blocks[b].insts {
                    ev.step(i);
                }
                seq.push(b);
                size += blocks[b].insts.len();
                if size > MAX_UNROLLED {
                    return None;
                }
                if b == tb {
                    let v = ev.value(c)?;
                    if (v != 0) == exit_if {
                        return Some(Unrolling { seq, chain, merge });
                    }
                }
            }
        }
        None
    }
}

/// The decode-time evaluation of a chain: registers and tracked variables whose value is known.
struct Eval<'u, 'a> {
    u: &'u Unroll<'a>,
    tracked: &'u HashSet<ObjectId>,
    regs: HashMap<Reg, u64>,
    mem: HashMap<ObjectId, u64>,
}

impl Eval<'_, '_> {
    fn value(&self, r: Reg) -> Option<u64> {
        self.regs.get(&r).or_else(|| self.u.consts.get(&r)).copied()
    }

    /// The tracked variable `ptr` points to.
    fn var(&self, ptr: Reg) -> Option<ObjectId> {
        self.u
            .var_regs
            .get(&ptr)
            .copied()
            .filter(|o| self.tracked.contains(o))
    }

    fn step(&mut self, i: &Inst) {
        let known = match i {
            Inst::Load { d, ptr, .. } => self
                .var(*ptr)
                .and_then(|o| self.mem.get(&o).copied())
                .map(|v| (*d, v)),
            Inst::Store { ptr, v, .. } => {
                if let Some(o) = self.var(*ptr) {
                    match self.value(*v) {
                        Some(x) => self.mem.insert(o, x),
                        None => self.mem.remove(&o),
                    };
                }
                None
            }
            Inst::IntBin {
                op,
                w,
                n: 1,
                d,
                a,
                b,
            } => match (self.value(*a), self.value(*b)) {
                (Some(x), Some(y)) => scalar::int_bin(*op, *w, x, y).ok().map(|v| (*d, v)),
                _ => None,
            },
            Inst::IntCmp {
                op,
                w,
                n: 1,
                d,
                a,
                b,
            } => match (self.value(*a), self.value(*b)) {
                (Some(x), Some(y)) => Some((*d, scalar::int_cmp(*op, *w, x, y) as u64)),
                _ => None,
            },
            Inst::Move { d, a, off: 0, n: 1 } => self.value(*a).map(|v| (*d, v)),
            Inst::EnterLocals { .. } => {
                self.mem.clear();
                None
            }
            _ => None,
        };
        // Whatever else the instruction defines is not known.
        i.operands(|role, r| {
            if role == Role::Def {
                self.regs.remove(&r);
            }
        });
        if let Some((d, v)) = known {
            self.regs.insert(d, v);
        }
    }
}

/// Whether every block of `f` reached from its entry ends in a branch or a return, heads no
/// construct, has no phis and calls only functions that are the same (`straight`): no lane of a
/// call to it can take a way of its own or lose its path while no path is lost.
fn is_straight(f: &Func, straight: &[bool]) -> bool {
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if b >= f.blocks.len() || seen[b] {
            continue;
        }
        seen[b] = true;
        let blk = &f.blocks[b];
        let calls_ok = blk.insts.iter().all(|i| match i {
            Inst::Call { f, .. } => straight[*f as usize],
            _ => true,
        });
        if !calls_ok || blk.merge != Merge::None || !blk.phis.is_empty() {
            return false;
        }
        match blk.term {
            Term::Branch(t) => stack.push(t as usize),
            Term::Return | Term::ReturnValue(_) => {}
            _ => return false,
        }
    }
    true
}

/// Replaces header `h` of `f` by the unrolled body `p` plans; the header as written is kept.
///
/// Every iteration but the last defines registers of its own (`slots` grows by them): the last
/// definition of each register in the unrolled body keeps its name — what the merge block and
/// the code after it read — and the uses in between read the definition before them. So no
/// instruction reads the register it writes (`full_uv += …` of the next iteration reads the
/// previous iteration's sum, not its own destination), which the executor's row loops run as
/// disjoint slices.
fn unroll(f: &mut Func, h: usize, p: Unrolling, slots: &mut Vec<u32>) {
    let mut nb = Block::new(f.blocks[h].label);
    for &b in &p.seq {
        let blk = &f.blocks[b];
        nb.insts.extend(blk.insts.iter().cloned());
        nb.locs.extend(blk.locs.iter().copied());
        nb.folded += blk.folded;
        nb.uncounted += blk.uncounted;
    }
    let mut last: HashMap<Reg, usize> = HashMap::new();
    for (at, i) in nb.insts.iter().enumerate() {
        i.operands(|role, r| {
            if role == Role::Def {
                last.insert(r, at);
            }
        });
    }
    let mut cur: HashMap<Reg, Reg> = HashMap::new();
    let mut defs: Vec<Reg> = Vec::new();
    for (at, i) in nb.insts.iter_mut().enumerate() {
        i.operands_mut(|role, r| {
            if role == Role::Use
                && let Some(c) = cur.get(r)
            {
                *r = *c;
            }
        });
        i.operands_mut(|role, r| {
            if role != Role::Def {
                return;
            }
            let orig = *r;
            if last[&orig] == at {
                cur.remove(&orig);
            } else {
                slots.push(slots[orig.index()]);
                let fresh = Reg::new((slots.len() - 1) as u32);
                cur.insert(orig, fresh);
                *r = fresh;
            }
            if !defs.contains(r) {
                defs.push(*r);
            }
        });
    }
    // The terminators of the blocks folded into one, counted as executed.
    nb.folded += p.seq.len() as u32 - 1;
    let old = &f.blocks[h];
    nb.term = Term::Branch(p.merge as u32);
    nb.term_loc = old.term_loc;
    nb.defs = defs;
    nb.escapes = old.escapes;
    nb.acyclic = old.acyclic;
    nb.loop_defs = old.loop_defs.clone();
    let header = std::mem::replace(&mut f.blocks[h], nb);
    f.blocks[h].written = Some(Box::new(WrittenLoop {
        header,
        blocks: p.chain[1..].iter().map(|b| *b as u32).collect(),
    }));
}
