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
//!   and a call in it goes to a function whose blocks, from its entry, end in a branch or a
//!   return and head nothing once its own loops are unrolled ([`is_straight`]: no branch a lane
//!   could take its own way, nothing that can lose a path);
//! - its header is entered from one block besides the back edge, which branches to the header
//!   alone, heads nothing and calls only such functions; and the test's value in every
//!   iteration follows from constants alone: the decoder evaluates the chain with the executor's
//!   own integer rules ([`scalar::int_bin`], [`scalar::int_cmp`]) over the module's constants and
//!   the `Function` variables whose address never escapes (only ever the pointer of a load or a
//!   store, always at offset 0 with one plan) — no store through any other pointer can reach
//!   those — starting from what the entering block stored in them;
//! - it runs at most [`MAX_TRIPS`] iterations, and the unrolled body stays within
//!   [`MAX_UNROLLED`] instructions.
//!
//! The block that enters the loop then holds, after its own instructions, the chain's
//! instructions iteration after iteration and the last test, and — where nothing else reaches
//! it and it heads nothing ([`tail`]) — the merge block's; the block as written stays beside it
//! ([`crate::spirv::inst::Block::written`]), and the loop's blocks stay as they are. What the
//! evaluation knew is folded in (the counter's loads, increments and tests are not run; an
//! index it knew becomes a constant step, so that the promotion sees the element a chain points
//! to), and every iteration but the last defines registers of its own ([`Unroll::unroll`]).
//!
//! Why the results are the same to the bit: every instruction of every iteration runs, in order,
//! on the same lanes, or is one whose value the evaluation knew — the same in every lane, defined,
//! what the executor computes from the same bits; the test's condition is such a constant — so no
//! lane leaves at its own iteration, and the loop's merge, continue target and back edge join the
//! lanes that entered, which is the flow that entered. The argument needs no invocation's path
//! to be lost: the unrolled form runs only while none of the workgroup's has been, as the promoted
//! bodies do (and nothing in a block holding an unrolled loop can lose one on the way); after that
//! the executor runs the block as written, and the loop from it, so that everything the lost-path
//! rules do (`lost.rs`) happens on the code as written. (A lost lane's own variables take what it
//! stores as it is, so its counter and test would come out the same in the unrolled form too;
//! the block as written is kept rather than rely on that.) The loop's blocks run only that way,
//! so the promotion does not see them: what they read from memory, the block as written before
//! them, or they themselves, stored. Lane-instruction counts are those of the code as written
//! (the terminators of the blocks folded into one, and the instructions folded away, are counted
//! as executed), and the step limit is checked at the end of the unrolled block rather than of
//! each block (a run stopped there names that block's line).

use crate::spirv::inst::{
    calls_post_order, AsWritten, Block, Constant, Func, Inst, Merge, ObjectId, Plan, Reg, Step,
    Term,
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
    /// defined scalar constants by register (with those the unrolled bodies make)
    pub consts: HashMap<Reg, u64>,
    /// the module's constants, grown by the values the unrolled bodies fold
    pub constants: &'a mut Vec<Constant>,
    /// the slots of every register, grown by the registers the unrolled bodies take
    pub slots: &'a mut Vec<u32>,
    /// the constant registers this pass made, by value
    pub made: HashMap<u64, Reg>,
    /// registers holding a pointer into a variable, and the variable
    pub var_regs: &'a HashMap<Reg, ObjectId>,
    /// the pointer bits of each such constant register (offset 0 is the variable itself)
    pub ptr_bits: &'a HashMap<Reg, u64>,
    /// whether each object is a `Function` variable
    pub function_var: &'a [bool],
    /// the load and store plans
    pub plans: &'a [Plan],
}

/// A loop found unrollable: the blocks it runs, in order, the chain as written, and what the
/// evaluation knew of each instruction run (the entering block's, then `seq`'s, in order).
struct Unrolling {
    /// the block entering the loop, which holds the unrolled body
    entry: usize,
    seq: Vec<usize>,
    /// the merge block, where the unrolled body takes it in too ([`tail`])
    tail: Option<usize>,
    chain: Vec<usize>,
    merge: usize,
    folds: Vec<Fold>,
}

/// What the evaluation knew of one instruction of an unrolled body.
#[derive(Clone, Debug, PartialEq)]
enum Fold {
    /// nothing
    None,
    /// the one value it defines, the same in every lane (a load of a tracked variable, integer
    /// arithmetic, a comparison or a copy of known values)
    Value(u64),
    /// an access chain: the value of each step's index, where known
    Steps(Vec<Option<u64>>),
}

impl Unroll<'_> {
    /// Unrolls every loop of `funcs` that can be (callees first, the innermost loop of a
    /// function first); how many.
    pub(super) fn run(&mut self, funcs: &mut [Func]) -> usize {
        let (order, _) = calls_post_order(funcs, 0..funcs.len());
        let mut straight = vec![false; funcs.len()];
        let mut done = 0;
        for f in order {
            let tracked = self.tracked(&funcs[f]);
            for h in (0..funcs[f].blocks.len()).rev() {
                if let Some(p) = self.plan(&funcs[f], h, &tracked, &straight) {
                    self.unroll(&mut funcs[f], p);
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
            if !calls_straight(blk, straight) {
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
        // The entering block holds the unrolled body after its own instructions: it branches to
        // the header alone, heads nothing, and no call in it can lose a path (which would make
        // the rest of it run as written).
        let eb = &blocks[entry];
        let straight_calls = |b: &Block| calls_straight(b, straight);
        if chain.contains(&entry)
            || eb.term != Term::Branch(h as u32)
            || eb.merge != Merge::None
            || eb.written.is_some()
            || !straight_calls(eb)
        {
            return None;
        }
        // The iterations, evaluated from what the entering block leaves.
        let mut ev = Eval {
            u: self,
            tracked,
            regs: HashMap::new(),
            mem: HashMap::new(),
        };
        let mut folds: Vec<Fold> = eb.insts.iter().map(|i| ev.step(i)).collect();
        let mut seq = Vec::new();
        let mut size = 0usize;
        for _ in 0..=MAX_TRIPS {
            for &b in &chain {
                for i in &blocks[b].insts {
                    folds.push(ev.step(i));
                }
                seq.push(b);
                size += blocks[b].insts.len();
                if size > MAX_UNROLLED {
                    return None;
                }
                if b == tb {
                    let v = ev.value(c)?;
                    if (v != 0) == exit_if {
                        return Some(Unrolling {
                            entry,
                            seq,
                            chain,
                            tail: tail(f, h, merge, tb).filter(|m| straight_calls(&blocks[*m])),
                            merge,
                            folds,
                        });
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

    /// Evaluates `i`: what is known of it.
    fn step(&mut self, i: &Inst) -> Fold {
        if let Inst::AccessChain { steps, .. } = i {
            let idx = steps
                .iter()
                .map(|s| match s {
                    Step::Dyn { index, .. } => self.value(*index),
                    _ => None,
                })
                .collect();
            self.defines_unknown(i);
            return Fold::Steps(idx);
        }
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
        self.defines_unknown(i);
        match known {
            Some((d, v)) => {
                self.regs.insert(d, v);
                Fold::Value(v)
            }
            None => Fold::None,
        }
    }

    /// Whatever `i` defines is not known (until a known value replaces it).
    fn defines_unknown(&mut self, i: &Inst) {
        i.operands(|role, r| {
            if role == Role::Def {
                self.regs.remove(&r);
            }
        });
    }
}

/// Whether every call of `b` goes to a function that is straight ([`is_straight`]).
fn calls_straight(b: &Block, straight: &[bool]) -> bool {
    b.insts.iter().all(|i| match i {
        Inst::Call { f, .. } => straight[*f as usize],
        _ => true,
    })
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
        if !calls_straight(blk, straight) || blk.merge != Merge::None || !blk.phis.is_empty() {
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

impl Unroll<'_> {
    /// A constant register holding `v` (one slot), made once per value.
    fn constant(&mut self, v: u64) -> Reg {
        if let Some(r) = self.made.get(&v) {
            return *r;
        }
        self.slots.push(1);
        let reg = Reg::new((self.slots.len() - 1) as u32);
        self.constants.push(Constant {
            reg,
            bits: Box::new([v]),
            undef: Box::new([false]),
            undef_at: Default::default(),
            undef_component: false,
        });
        self.consts.insert(reg, v);
        self.made.insert(v, reg);
        reg
    }

    /// Replaces header `h` of `f` by the unrolled body `p` plans; the header as written is kept.
    ///
    /// What the evaluation knew is folded in: an instruction whose value it knew (the counter's
    /// loads, its increment and test) is not run — its uses read a constant register holding the
    /// value, and it is counted as executed — except where it is the last definition of its
    /// register (code after the loop may read it), which becomes a copy of the constant; an
    /// access chain's index it knew, in bounds of a sized array, becomes a constant step (so the
    /// promotion can see the element it points to). Every iteration but the last defines
    /// registers of its own (`slots` grows by them): the last definition of each register keeps
    /// its name — what the merge block and the code after it read — and the uses in between read
    /// the definition before them. So no instruction reads the register it writes (`full_uv += …`
    /// of the next iteration reads the previous iteration's sum, not its own destination), which
    /// the executor's row loops run as disjoint slices.
    fn unroll(&mut self, f: &mut Func, p: Unrolling) {
        let entry = &f.blocks[p.entry];
        let mut nb = Block::new(entry.label);
        nb.phis = entry.phis.clone();
        let mut insts: Vec<Inst> = Vec::new();
        let mut locs = Vec::new();
        let mut folds = p.folds;
        let blocks: Vec<usize> = std::iter::once(p.entry)
            .chain(p.seq.iter().copied())
            .chain(p.tail)
            .collect();
        for &b in &blocks {
            let blk = &f.blocks[b];
            insts.extend(blk.insts.iter().cloned());
            locs.extend(blk.locs.iter().copied());
            nb.folded += blk.folded;
            nb.uncounted += blk.uncounted;
        }
        folds.resize(insts.len(), Fold::None);
        let mut last: HashMap<Reg, usize> = HashMap::new();
        for (at, i) in insts.iter().enumerate() {
            i.operands(|role, r| {
                if role == Role::Def {
                    last.insert(r, at);
                }
            });
        }
        let mut cur: HashMap<Reg, Reg> = HashMap::new();
        let mut defs: Vec<Reg> = Vec::new();
        for (at, (mut i, loc)) in insts.into_iter().zip(locs).enumerate() {
            i.operands_mut(|role, r| {
                if role == Role::Use
                    && let Some(c) = cur.get(r)
                {
                    *r = *c;
                }
            });
            match &folds[at] {
                Fold::Value(v) => {
                    let orig = i.def().expect("a known value is a definition");
                    let c = self.constant(*v);
                    if last[&orig] != at {
                        cur.insert(orig, c);
                        nb.folded += 1;
                        continue;
                    }
                    cur.remove(&orig);
                    i = Inst::Move {
                        d: orig,
                        a: c,
                        off: 0,
                        n: 1,
                    };
                }
                Fold::Steps(idx) => fold_steps(&mut i, idx),
                Fold::None => {}
            }
            let slots = &mut *self.slots;
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
            nb.insts.push(i);
            nb.locs.push(loc);
        }
        // The terminators of the blocks folded into one, counted as executed.
        nb.folded += blocks.len() as u32 - 1;
        let (term, term_loc) = match p.tail {
            Some(t) => {
                let mut term = f.blocks[t].term.clone();
                if let Term::ReturnValue(v) = &mut term
                    && let Some(c) = cur.get(v)
                {
                    *v = *c;
                }
                (term, f.blocks[t].term_loc)
            }
            None => (Term::Branch(p.merge as u32), f.blocks[p.entry].term_loc),
        };
        nb.term = term;
        nb.term_loc = term_loc;
        nb.defs = defs;
        let block = std::mem::replace(&mut f.blocks[p.entry], nb);
        f.blocks[p.entry].written = Some(Box::new(AsWritten {
            block,
            blocks: p.chain.iter().chain(&p.tail).map(|b| *b as u32).collect(),
        }));
    }
}

/// The loop's merge block `m` where the unrolled body can take it in: reached from the loop's
/// test alone, no phis, heading nothing and the target of no construct (so that no frame waits
/// for it), ending in a branch or a return (and, the caller checks, calling only functions that
/// cannot lose a path: nothing in a block holding an unrolled loop can).
fn tail(f: &Func, h: usize, m: usize, test: usize) -> Option<usize> {
    let mb = &f.blocks[m];
    let targeted = f.blocks.iter().enumerate().any(|(i, b)| match b.merge {
        Merge::Selection(x) => x as usize == m,
        Merge::Loop { merge, cont } => {
            i == m || cont as usize == m || (merge as usize == m && i != h)
        }
        Merge::None => false,
    });
    let preds = f
        .blocks
        .iter()
        .filter(|b| b.term.successors().any(|s| s as usize == m))
        .count();
    let from_test = f.blocks[test].term.successors().any(|s| s as usize == m);
    (!targeted
        && preds == 1
        && from_test
        && mb.phis.is_empty()
        && mb.merge == Merge::None
        && mb.written.is_none()
        && matches!(
            mb.term,
            Term::Branch(_) | Term::Return | Term::ReturnValue(_)
        ))
    .then_some(m)
}

/// An access chain's steps with each index `idx` knows, in bounds of a sized array, made a
/// constant step (the executor adds `index × stride` bytes for an index in bounds), runs of
/// constant steps summed into one.
fn fold_steps(i: &mut Inst, idx: &[Option<u64>]) {
    if let Inst::AccessChain { steps, .. } = i {
        *steps = const_steps(steps, |k| idx.get(k).copied().flatten());
    }
}

/// `steps` with the index of step `k` known as `value(k)`, in bounds of a sized array, made a
/// constant step, and runs of constant steps summed into one (the promotion's view of a chain
/// whose index a rename made a constant, too).
pub(super) fn const_steps(steps: &[Step], value: impl Fn(usize) -> Option<u64>) -> Box<[Step]> {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for (k, s) in steps.iter().enumerate() {
        let s = match s {
            Step::Dyn {
                width,
                signed,
                stride,
                len: Some(len),
                elem: false,
                ..
            } => match value(k) {
                Some(v) => {
                    let x = if *signed {
                        scalar::sext(*width, v)
                    } else {
                        (v & scalar::mask(*width)) as i64
                    };
                    match u32::try_from(x)
                        .ok()
                        .filter(|x| x < len)
                        .and_then(|x| x.checked_mul(*stride))
                    {
                        Some(off) => Step::Const(off),
                        None => *s,
                    }
                }
                None => *s,
            },
            _ => *s,
        };
        match (out.last_mut(), &s) {
            (Some(Step::Const(a)), Step::Const(b)) if a.checked_add(*b).is_some() => *a += *b,
            _ => out.push(s),
        }
    }
    out.into_boxed_slice()
}
