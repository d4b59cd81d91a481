//! Decode-time promotion of an invocation's own variables (issue 22 §2): a second body for each
//! block, run while no invocation's path is lost, in which the loads and stores of `Function`
//! variables that a compiler's mem2reg would remove are gone.
//!
//! glslang's unoptimised output keeps every local variable in memory — `x = a + b; y = x * c;`
//! is a store, a load, and another store — and passes every argument through a temporary and a
//! pointer; after inlining ([`super::inline`]) the callee's loads read those temporaries through
//! its parameter registers. Within one block, in order:
//! - a pointer copied from a variable (an inlined call's argument) and an access chain of
//!   constant steps from one are constants: their uses read the constant pointer register and
//!   the copy or chain is not run (a chain is counted as executed, as the decoder's folded chains);
//! - a load from a place of a variable that a store (or a load) earlier in the block filled, with
//!   no write that may reach it in between, reads the register the store stored: the load's uses
//!   read that register, and the load is counted as executed but not run;
//! - a variable whose every load was so replaced is never read from memory: its stores, and the
//!   reset of an inlined callee whose locals are all such, are not run either.
//!
//! Why the results are the same to the bit. The executor's store to an in-bounds place of a
//! variable through a constant pointer, of 32- or 64-bit scalars, copies each lane's bits and taint
//! into the lane's memory row, and the load back copies them out again ([`crate::spirv::memops`]'s
//! fast paths) — *while no invocation's path is lost*: then the end of the construct a lane's
//! path was lost in, or the return of the call, gives the variables its paths may store the path's
//! taint in memory (`Wg::end_lost_paths`, `Wg::taint_own`) and not in the registers that stand for
//! them. So the promoted body is run only until a path is first lost
//! ([`crate::spirv::flow`]), and nothing is promoted after a call in the block (a callee
//! may lose a path). A renamed register is read only in this block, from its load to its next
//! definition, and the register it is renamed to is not written in that range; a removed store's
//! variable is never read from memory by a promoted body, and every load of it in the block as
//! written follows, in the same block, the store it was promoted from — so a block run as
//! written reads what it stored itself. Lane-instruction counts are those of the block as written.
//!
//! Across blocks ([`Promote::carry`]): a variable whose address never escapes and whose accesses
//! all use one place of 32-bit scalars is *carried* in a register of its own
//! ([`crate::spirv::Kernel::carried`]). In the promoted bodies its stores are
//! [`Inst::CarriedStore`]s: the stored value is copied into that register, and the lanes that
//! stored are noted (`Wg::carried_mask`) — memory is not written; a load reached only after a
//! store on every path from the function's entry ([`Promote::stored`]) reads the register, and any
//! other load is an [`Inst::CarriedLoad`]: the register in the lanes noted, memory in the others
//! (which have not stored the variable since memory last reset it, so memory holds what it would
//! as written). The promoted bodies run only until a path is first lost (`Wg::ever_lost`: then
//! memory may take the lost path's taint and the register does not); at that moment
//! (`Wg::first_loss`) each register is written to memory in the lanes noted, bits and taint — what
//! the stores not run would have left — and from then on the bodies as written read memory (a
//! carried access left in a promoted body after a call runs as written too). Where memory resets a
//! variable (a new workgroup, a call's locals) the noted lanes' bits are written first: what an
//! uninitialised variable then holds is what the bodies as written would leave (an undefined
//! value's bits decide whether two writes of it race with the same value).
//!
//! Across calls: a parameter every call passes the same constant pointer is *bound* to it
//! ([`bind_params`]), so the callee's accesses through it are accesses to the caller's variable
//! (glslang's temporaries); the callee's entry knows, of those variables, the ones stored at every
//! call ([`Promote::stored_all`]); and a call forgets only the variables it may reset
//! ([`resets`]), never the caller's own.

use super::views::{stable, Views};
use crate::spirv::inst::{
    calls_post_order, Block, CarriedAccess, CarriedVar, FastBody, Func, Inst, Object, ObjectId,
    Plan, Reg, Step, Term,
};
use crate::spirv::memory::Ptr;
use crate::spirv::operands::Role;
use crate::spirv::types::Storage;
use std::collections::{HashMap, HashSet};

/// A promoted body: each instruction with its index in the block as written.
type Body = Vec<(Inst, usize)>;

/// Constants every slot of which is defined, by register: their bits.
type Defined = HashMap<Reg, Box<[u64]>>;

/// A register the pass makes.
pub(super) enum NewReg {
    /// of so many slots, for a carried variable
    Slots(u32),
    /// a constant holding a pointer
    Pointer(Ptr),
    /// a constant holding these slots' bits, every one defined
    Constant(Box<[u64]>),
    /// a view of `n` slots of register `of` from `slot` ([`super::views`])
    View { of: Reg, slot: u32, n: u32 },
}

/// A place of a variable whose value a register holds: (object, byte offset, plan), the register.
#[derive(Clone, Copy, Debug)]
struct Known {
    obj: ObjectId,
    off: u32,
    size: u32,
    plan: u32,
    val: Reg,
}

/// What the pass knows of the module.
pub(super) struct Promote<'a> {
    objects: &'a [Object],
    plans: &'a [Plan],
    /// constant registers holding a pointer into a `Function` variable
    ptrs: HashMap<Reg, Ptr>,
    /// the defined scalar constants, by register
    scalars: HashMap<Reg, u64>,
    /// the constants every slot of which is defined (pointers aside), by register
    defined: Defined,
    /// the constant registers the pass made for parts and composites of those, by bits
    made: HashMap<Box<[u64]>, Reg>,
    /// the views the pass made for extracts read in place
    views: Views,
    /// registers that hold a pointer into memory other than `Function` variables wherever they
    /// are defined (a buffer's access chain): a store through one reaches no variable
    others: HashSet<Reg>,
    /// the `Function` variables of each function (an inlined call's reset resets these)
    locals: Vec<Vec<ObjectId>>,
    /// the functions that run: the entry point and those a call left after inlining reaches
    live: Vec<bool>,
    /// slots of each register
    slots: Vec<u32>,
    /// the constant register of each such pointer
    regs_of: HashMap<u64, Reg>,
    /// variables carried across blocks: the place every access reads or writes, with the
    /// variable's register as its value (see [`Promote::carry`])
    carried: HashMap<ObjectId, Known>,
    /// the register of the carried variable each constant pointer register points to
    carry_of: HashMap<Reg, Reg>,
    /// the carried variables in the order of their indices, and each one's index
    carried_list: Vec<CarriedVar>,
    var_of: HashMap<ObjectId, u32>,
    /// parameter registers bound to one pointer: every call passes the same constant pointer
    /// (in `ptrs` too)
    bound: HashSet<Reg>,
    /// per function: the variables a call to it may reset (its locals, those of the callees it
    /// inlined, and the same of every function it calls)
    resets: Vec<HashSet<ObjectId>>,
    /// the functions that run, every caller before its callees
    order: Vec<usize>,
}

impl<'a> Promote<'a> {
    /// The pass over `funcs` (decoded and inlined; `entry` the entry point); `consts` the module's
    /// constant pointer registers (variables and folded access chains) and their pointers.
    pub(super) fn new(
        funcs: &[Func],
        entry: usize,
        objects: &'a [Object],
        plans: &'a [Plan],
        slots: Vec<u32>,
        consts: impl IntoIterator<Item = (Reg, Ptr)>,
        (scalars, defined): (HashMap<Reg, u64>, Defined),
    ) -> Self {
        let (mut ptrs, mut others) = (HashMap::new(), HashSet::new());
        for (r, p) in consts {
            match objects.get(p.obj().index()) {
                Some(o) if o.storage == Storage::Function && !p.oob() => {
                    ptrs.insert(r, p);
                }
                Some(o) if o.storage == Storage::Function => {}
                Some(_) => {
                    others.insert(r);
                }
                None => {}
            }
        }
        let live = live_functions(funcs, entry);
        extend_others(funcs, &live, &mut others);
        let regs_of = ptrs.iter().map(|(r, p)| (p.bits(), *r)).collect();
        let order = callers_first(funcs, entry);
        let bound = bind_params(funcs, &live, &order, &mut ptrs);
        let locals: Vec<Vec<ObjectId>> = funcs.iter().map(|f| f.locals.clone()).collect();
        let resets = resets(funcs, &order, &locals);
        Promote {
            scalars,
            defined,
            made: HashMap::new(),
            views: Views::default(),
            objects,
            plans,
            ptrs,
            others,
            locals,
            live,
            slots,
            regs_of,
            carried: HashMap::new(),
            carry_of: HashMap::new(),
            carried_list: Vec::new(),
            var_of: HashMap::new(),
            bound,
            resets,
            order,
        }
    }

    /// Gives every block of `funcs` whose promoted body differs from the body as written that
    /// body ([`Block::fast`]); `new_reg` makes a register of so many slots, or a constant
    /// register holding a pointer.
    /// Returns the carried variables ([`crate::spirv::inst::Kernel::carried`]).
    pub(super) fn run(
        mut self,
        funcs: &mut [Func],
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Vec<CarriedVar> {
        let mut stored = self.carry(funcs, new_reg);
        let mut bodies: Vec<Vec<Option<Body>>> = Vec::with_capacity(funcs.len());
        for (fi, f) in funcs.iter().enumerate() {
            let mut fb = Vec::with_capacity(f.blocks.len());
            let (live_out, stored) = if self.live[fi] {
                (live_out(f), std::mem::take(&mut stored[fi]))
            } else {
                (Vec::new(), Vec::new())
            };
            for (bi, b) in f.blocks.iter().enumerate() {
                fb.push(if self.live[fi] {
                    self.block(b, &live_out[bi], &stored[bi], new_reg)
                } else {
                    None
                });
            }
            bodies.push(fb);
        }
        // Variables never read from memory by a promoted body: their stores need not be run.
        let mut dead: HashSet<ObjectId> = self.ptrs.values().map(|p| p.obj()).collect();
        for (fi, f) in funcs.iter().enumerate().filter(|(fi, _)| self.live[*fi]) {
            for (bi, b) in f.blocks.iter().enumerate() {
                let body: Vec<&Inst> = match &bodies[fi][bi] {
                    Some(v) => v.iter().map(|(i, _)| i).collect(),
                    None => b.insts.iter().collect(),
                };
                for i in body {
                    let store_ptr = match i {
                        Inst::Store { ptr, v, .. } => {
                            // A pointer stored as a value escapes.
                            if let Some(p) = self.ptrs.get(v) {
                                dead.remove(&p.obj());
                            }
                            Some(*ptr)
                        }
                        _ => None,
                    };
                    i.operands(|role, r| {
                        if role == Role::Use
                            && Some(r) != store_ptr
                            && let Some(p) = self.ptrs.get(&r)
                        {
                            dead.remove(&p.obj());
                        }
                    });
                }
                // Phis and terminators (a pointer returned, with variable pointers).
                let phis = b
                    .phis
                    .iter()
                    .flat_map(|p| p.incoming.iter().map(|(_, v)| *v));
                for r in phis.chain(term_reads(&b.term)) {
                    if let Some(p) = self.ptrs.get(&r) {
                        dead.remove(&p.obj());
                    }
                }
            }
        }
        // A carried variable is read from memory by the bodies as written, which run once a path
        // is lost: its stores stay.
        dead.retain(|o| !self.carried.contains_key(o));
        // A callee's reset whose locals are all such is not run either.
        let reset_dead: Vec<bool> = funcs
            .iter()
            .map(|f| f.locals.iter().all(|o| dead.contains(o)))
            .collect();
        for (fi, f) in funcs
            .iter_mut()
            .enumerate()
            .filter(|(fi, _)| self.live[*fi])
        {
            for (bi, b) in f.blocks.iter_mut().enumerate() {
                let body = bodies[fi][bi].take();
                let mut changed = body.is_some();
                let body =
                    body.unwrap_or_else(|| b.insts.iter().cloned().zip(0..b.insts.len()).collect());
                let mut insts = Vec::with_capacity(body.len());
                let mut locs = Vec::with_capacity(body.len());
                for (i, at) in body {
                    let drop = match &i {
                        Inst::Store { ptr, .. } => {
                            self.ptrs.get(ptr).is_some_and(|p| dead.contains(&p.obj()))
                        }
                        Inst::EnterLocals { f } => reset_dead[*f as usize],
                        _ => false,
                    };
                    if drop {
                        changed = true;
                        continue;
                    }
                    insts.push(i);
                    locs.push(b.locs[at]);
                }
                if changed {
                    b.fast = Some(Box::new(FastBody { insts, locs }));
                }
            }
        }
        self.carried_list
    }

    /// A register `new_reg` makes, its slots known to the pass.
    fn fresh(&mut self, new_reg: &mut dyn FnMut(NewReg) -> Reg, r: NewReg) -> Reg {
        let n = match &r {
            NewReg::Slots(n) => *n,
            NewReg::Pointer(_) => 1,
            NewReg::Constant(bits) => bits.len() as u32,
            NewReg::View { n, .. } => *n,
        };
        let reg = new_reg(r);
        if self.slots.len() <= reg.index() {
            self.slots.resize(reg.index() + 1, 0);
        }
        self.slots[reg.index()] = n;
        reg
    }

    /// Where `i`'s result can be another register's (its uses read that one and it is not run):
    /// the result, and that register.
    fn rename_to(
        &mut self,
        i: &Inst,
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Option<(Reg, Reg)> {
        match i {
            // A whole register copied (an inlined call's argument, `OpCopyObject`), or an
            // inlined call's result while no path is lost (then a copy).
            Inst::Move { d, a, off: 0, n }
                if self.slots[a.index()] == *n && self.slots[d.index()] == *n =>
            {
                Some((*d, *a))
            }
            Inst::CallReturn { d, v, .. } => Some((*d, *v)),
            // Part of a constant, or a composite of constants (`uvec2(0, y)`): a constant. Else
            // part of a register: a view of it.
            Inst::Move { d, a, off, n } => self
                .constant_of(i, new_reg)
                .or_else(|| Some((*d, self.view(*a, *off, *n, new_reg)))),
            Inst::Construct { .. } => self.constant_of(i, new_reg),
            // A chain of constant steps from a constant pointer (as the decoder folds one); an
            // index a rename made a constant (an unrolled loop's counter passed to an inlined
            // helper) is a constant step.
            Inst::AccessChain { d, base, steps } if self.ptrs.contains_key(base) => {
                let steps = super::unroll::const_steps(steps, |k| match steps[k] {
                    Step::Dyn { index, .. } => self.scalars.get(&index).copied(),
                    _ => None,
                });
                Some((*d, self.chain_const(*base, &steps, new_reg)?))
            }
            _ => None,
        }
    }

    /// Where `i` copies part of a constant (a component of a constant matrix) or builds a
    /// composite of constants: its result, and a constant register holding the same bits.
    fn constant_of(
        &mut self,
        i: &Inst,
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Option<(Reg, Reg)> {
        let (d, bits): (Reg, Box<[u64]>) = match i {
            Inst::Move { d, a, off, n } => {
                let b = self
                    .defined
                    .get(a)?
                    .get(*off as usize..(*off + *n) as usize)?;
                (*d, b.into())
            }
            Inst::Construct { d, parts } => {
                let mut bits = Vec::new();
                for (r, k) in parts.iter() {
                    bits.extend_from_slice(self.defined.get(r)?.get(..*k as usize)?);
                }
                (*d, bits.into_boxed_slice())
            }
            _ => return None,
        };
        Some((d, self.constant(bits, new_reg)))
    }

    /// A view of slots `off..off + n` of `a`, made once.
    fn view(&mut self, a: Reg, off: u32, n: u32, new_reg: &mut dyn FnMut(NewReg) -> Reg) -> Reg {
        self.with_views(new_reg, |views, make| {
            views.view(a, off, n, |of, slot| make(of, slot, n))
        })
    }

    /// `f` of the pass's views, with a maker of new ones (`make(owner, slot, slots)`).
    fn with_views<R>(
        &mut self,
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
        f: impl FnOnce(&mut Views, &mut dyn FnMut(Reg, u32, u32) -> Reg) -> R,
    ) -> R {
        let mut views = std::mem::take(&mut self.views);
        let r = f(&mut views, &mut |of, slot, n| {
            self.fresh(new_reg, NewReg::View { of, slot, n })
        });
        self.views = views;
        r
    }

    /// A constant register holding `bits`, made once per value.
    fn constant(&mut self, bits: Box<[u64]>, new_reg: &mut dyn FnMut(NewReg) -> Reg) -> Reg {
        if let Some(r) = self.made.get(&bits) {
            return *r;
        }
        let r = self.fresh(new_reg, NewReg::Constant(bits.clone()));
        self.defined.insert(r, bits.clone());
        if bits.len() == 1 {
            self.scalars.insert(r, bits[0]);
        }
        self.made.insert(bits, r);
        r
    }

    /// Chooses the variables carried across blocks, each in a register of its own that stands for
    /// its memory: a `Function` variable whose address is only ever the pointer of a load or a
    /// store (it never escapes: no chain, call, copy, phi or stored pointer reaches it), every
    /// access the same place of 32-bit scalars ([`Promote::place`]), and some load of it not
    /// preceded in its block by a store. Every store to one copies the stored value into its
    /// register ([`Inst::CarriedStore`]), so that a load where every path from the function's
    /// entry stored the variable ([`Promote::stored`]) reads the register — the same bits and
    /// taint, lane for lane, while no path has been lost (the module's documentation says how
    /// memory follows).
    /// Returns, per function that runs and block, the carried variables stored on every path to
    /// it (empty for the others).
    fn carry(
        &mut self,
        funcs: &[Func],
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Vec<Vec<HashSet<ObjectId>>> {
        // Per variable: the one place its accesses use, or `None` once another use is seen.
        let mut place: HashMap<ObjectId, Option<Known>> = HashMap::new();
        let escape = |place: &mut HashMap<ObjectId, Option<Known>>, r: Reg| {
            if let Some(p) = self.ptrs.get(&r) {
                place.insert(p.obj(), None);
            }
        };
        let live: Vec<&Func> = funcs
            .iter()
            .enumerate()
            .filter(|(fi, _)| self.live[*fi])
            .map(|(_, f)| f)
            .collect();
        for b in live.iter().flat_map(|f| &f.blocks) {
            for i in &b.insts {
                let (ptr, plan) = match i {
                    Inst::Load { ptr, plan, .. } => (*ptr, *plan),
                    Inst::Store { ptr, v, plan } => {
                        escape(&mut place, *v);
                        (*ptr, *plan)
                    }
                    // An argument bound to its parameter is the callee's access to the same
                    // variable (its loads and stores through the parameter are seen there).
                    Inst::Call { f, args, .. } => {
                        let params = &funcs[*f as usize].params;
                        for (k, a) in args.iter().enumerate() {
                            if !params.get(k).is_some_and(|p| self.bound.contains(p)) {
                                escape(&mut place, *a);
                            }
                        }
                        continue;
                    }
                    _ => {
                        i.operands(|role, r| {
                            if role == Role::Use {
                                escape(&mut place, r)
                            }
                        });
                        continue;
                    }
                };
                let Some(p) = self.ptrs.get(&ptr) else {
                    continue;
                };
                let here = self.place(ptr, plan).filter(|_| {
                    self.plans[plan as usize]
                        .slots
                        .iter()
                        .all(|&(sc, _)| sc.bytes() == 4)
                });
                let e = place.entry(p.obj()).or_insert(here);
                if !matches!((*e, here), (Some(a), Some(h)) if a.off == h.off && a.plan == h.plan) {
                    *e = None;
                }
            }
            let phis = b
                .phis
                .iter()
                .flat_map(|p| p.incoming.iter().map(|(_, v)| *v));
            for r in phis.chain(term_reads(&b.term)) {
                escape(&mut place, r);
            }
        }
        self.carried = place
            .into_iter()
            .filter_map(|(o, k)| Some((o, k?)))
            .collect();
        // Only those a promoted body would read from their register: loaded where every path
        // stored them, before any store, reset or call in the load's block.
        let mut useful: HashSet<ObjectId> = HashSet::new();
        // The "must" analysis is per variable: its answer for the candidates holds for those
        // chosen among them.
        let mut stored = self.stored_all(funcs);
        for (f, st) in funcs.iter().zip(&stored) {
            for (b, entry) in f.blocks.iter().zip(st) {
                let mut held = entry.clone();
                for i in &b.insts {
                    match i {
                        Inst::Load { ptr, .. } => {
                            if let Some(p) = self.ptrs.get(ptr).filter(|p| held.contains(&p.obj()))
                            {
                                useful.insert(p.obj());
                            }
                        }
                        Inst::Store { ptr, .. } => {
                            if let Some(p) = self.ptrs.get(ptr) {
                                held.remove(&p.obj());
                            }
                        }
                        Inst::EnterLocals { f } => {
                            held.retain(|o| !self.locals[*f as usize].contains(o));
                        }
                        Inst::Call { .. } => break,
                        _ => {}
                    }
                }
            }
        }
        let mut chosen: Vec<(ObjectId, Known)> = std::mem::take(&mut self.carried)
            .into_iter()
            .filter(|(o, _)| useful.contains(o))
            .collect();
        chosen.sort_by_key(|(o, _)| o.index());
        for (obj, k) in chosen {
            let n = self.plans[k.plan as usize].slots.len() as u32;
            let reg = self.fresh(new_reg, NewReg::Slots(n));
            self.carried.insert(obj, Known { val: reg, ..k });
            self.var_of.insert(obj, self.carried_list.len() as u32);
            self.carried_list.push(CarriedVar {
                obj,
                off: k.off,
                plan: k.plan,
                reg,
            });
        }
        for (r, p) in &self.ptrs {
            if let Some(k) = self.carried.get(&p.obj()) {
                self.carry_of.insert(*r, k.val);
            }
        }
        for set in stored.iter_mut().flatten() {
            set.retain(|o| self.carried.contains_key(o));
        }
        stored
    }

    /// Per function that runs and block, the carried variables stored on every path to it from
    /// the entry point ([`Promote::stored`]); a function's entry inherits, of the variables its
    /// bound parameters point to, those stored at every call to it (callers are analysed first).
    fn stored_all(&self, funcs: &[Func]) -> Vec<Vec<HashSet<ObjectId>>> {
        let all: HashSet<ObjectId> = self.carried.keys().copied().collect();
        let mut entry: Vec<Option<HashSet<ObjectId>>> = vec![None; funcs.len()];
        let mut stored: Vec<Vec<HashSet<ObjectId>>> = vec![Vec::new(); funcs.len()];
        for &fi in &self.order {
            let f = &funcs[fi];
            let at_entry = entry[fi].take().unwrap_or_default();
            let inn = self.stored(f, &all, at_entry);
            for (b, s) in f.blocks.iter().zip(&inn) {
                let mut s = s.clone();
                for i in &b.insts {
                    if let Inst::Call { f: g, .. } = i {
                        let g = *g as usize;
                        let reach: HashSet<ObjectId> = funcs[g]
                            .params
                            .iter()
                            .filter(|p| self.bound.contains(p))
                            .map(|p| self.ptrs[p].obj())
                            .collect();
                        let here: HashSet<ObjectId> =
                            s.iter().filter(|o| reach.contains(o)).copied().collect();
                        entry[g] = Some(match entry[g].take() {
                            Some(e) => e.intersection(&here).copied().collect(),
                            None => here,
                        });
                    }
                    self.transfer(&mut s, i, &all);
                }
            }
            stored[fi] = inn;
        }
        stored
    }

    /// What instruction `i` does to the set `s` of carried variables (of `all`) stored since
    /// their last reset: a store to one adds it; an inlined call's reset, and a call, forget the
    /// variables they may reset (a callee reaches the caller's only through bound parameters, and
    /// stores through them copy into the variable's register too).
    fn transfer(&self, s: &mut HashSet<ObjectId>, i: &Inst, all: &HashSet<ObjectId>) {
        match i {
            Inst::Store { ptr, .. } => {
                if let Some(p) = self.ptrs.get(ptr).filter(|p| all.contains(&p.obj())) {
                    s.insert(p.obj());
                }
            }
            Inst::EnterLocals { f } => {
                s.retain(|o| !self.locals[*f as usize].contains(o));
            }
            Inst::Call { f, .. } => s.retain(|o| !self.resets[*f as usize].contains(o)),
            _ => {}
        }
    }

    /// Per block of `f`, the carried variables (of `all`) stored on every path from the
    /// function's entry (where `at_entry` are) to where it starts, with no reset of them after
    /// the store ([`Promote::transfer`]) — the textbook forward "must" analysis, iterated to its
    /// fixed point.
    fn stored(
        &self,
        f: &Func,
        all: &HashSet<ObjectId>,
        at_entry: HashSet<ObjectId>,
    ) -> Vec<HashSet<ObjectId>> {
        let n = f.blocks.len();
        let out_of = |bi: usize, inn: &HashSet<ObjectId>| {
            let mut s = inn.clone();
            for i in &f.blocks[bi].insts {
                self.transfer(&mut s, i, all);
            }
            s
        };
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (bi, b) in f.blocks.iter().enumerate() {
            for s in b.term.successors().map(|s| s as usize).filter(|s| *s < n) {
                preds[s].push(bi);
            }
        }
        let mut inn: Vec<HashSet<ObjectId>> = vec![all.clone(); n];
        if n > 0 {
            inn[0] = at_entry;
        }
        let mut outs: Vec<HashSet<ObjectId>> = (0..n).map(|bi| out_of(bi, &inn[bi])).collect();
        loop {
            let mut changed = false;
            for bi in 1..n {
                let Some((first, rest)) = preds[bi].split_first() else {
                    continue;
                };
                let mut s = outs[*first].clone();
                for p in rest {
                    s.retain(|o| outs[*p].contains(o));
                }
                if s != inn[bi] {
                    outs[bi] = out_of(bi, &s);
                    inn[bi] = s;
                    changed = true;
                }
            }
            if !changed {
                return inn;
            }
        }
    }

    /// The promoted body of block `b` (`live_out`: the registers read after it before being
    /// written again) — each instruction with its index in the block as written — or `None` where
    /// nothing changed (stores are removed afterwards).
    fn block(
        &mut self,
        b: &Block,
        live_out: &HashSet<Reg>,
        stored: &HashSet<ObjectId>,
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Option<Body> {
        let mut out: Vec<(Inst, usize)> = Vec::with_capacity(b.insts.len());
        let mut rename: HashMap<Reg, Reg> = HashMap::new();
        // What the carried variables stored on every path here hold: their registers.
        let mut known: Vec<Known> = stored.iter().map(|o| self.carried[o]).collect();
        let mut changed = false;
        let mut called = false;
        let carry_of = self.carry_of.clone();
        for (at, orig) in b.insts.iter().enumerate() {
            let mut inst = orig.clone();
            if !rename.is_empty() {
                inst.operands_mut(|role, r| {
                    if role == Role::Use
                        && let Some(to) = rename.get(r)
                    {
                        *r = *to;
                    }
                });
            }
            let def = inst.def();
            if let Some(d) = def {
                rename.remove(&d);
                known.retain(|k| k.val != d);
            }
            called |= matches!(inst, Inst::Call { .. });
            if called {
                changed |= self.push_carried(inst, at, &mut out, &mut known);
                continue;
            }
            // A register whose value defined here is read only by this block's instructions before
            // its next definition, none after a call: renamed to `to` (which nothing in that range
            // writes) and its definition here not run.
            // A view (`to`) reads its owner's rows: the owner must not be written through the
            // last read, that read included (it may write other slots than it reads).
            let replace = |d: Reg, to: Reg, views: &Views, rename: &mut HashMap<Reg, Reg>| {
                let ok = match views.owner(to) {
                    Some(of) => stable(b, live_out, at, d, of, &carry_of, true),
                    None => stable(b, live_out, at, d, to, &carry_of, false),
                };
                if ok {
                    rename.insert(d, to);
                }
                ok
            };
            if let Some((d, to)) = self.rename_to(&inst, new_reg)
                && replace(d, to, &self.views, &mut rename)
            {
                changed = true;
                continue;
            }
            match &inst {
                Inst::Load { d, ptr, plan } => {
                    if let Some(place) = self.place(*ptr, *plan) {
                        match known.iter().find_map(|k| self.within(k, &place)) {
                            // The whole value a store stored: its register, where the loaded
                            // one can be renamed to it; else (and for part of it, a component
                            // of a vector stored whole) a copy of those slots.
                            Some((val, off)) => {
                                let whole =
                                    off == 0 && self.slots[val.index()] == self.slots[d.index()];
                                changed = true;
                                if whole && replace(*d, val, &self.views, &mut rename) {
                                    continue;
                                }
                                let n = self.slots[d.index()];
                                // Part of a constant stored whole (`weights[x][y]` of a matrix
                                // stored from a constant, once `x` and `y` are known): a constant.
                                let part = Inst::Move {
                                    d: *d,
                                    a: val,
                                    off,
                                    n,
                                };
                                if let Some((_, to)) = self.constant_of(&part, new_reg)
                                    && replace(*d, to, &self.views, &mut rename)
                                {
                                    continue;
                                }
                                let v = self.view(val, off, n, new_reg);
                                if replace(*d, v, &self.views, &mut rename) {
                                    continue;
                                }
                                out.push((
                                    Inst::Move {
                                        d: *d,
                                        a: val,
                                        off,
                                        n,
                                    },
                                    at,
                                ));
                                continue;
                            }
                            None => known.push(Known { val: *d, ..place }),
                        }
                    }
                }
                Inst::Store { ptr, .. } if self.others.contains(ptr) => {}
                Inst::Store { ptr, v, plan } => match self.ptrs.get(ptr) {
                    Some(p) => {
                        let (obj, off) = (p.obj(), p.off());
                        let size = self.plans[*plan as usize].size;
                        known.retain(|k| {
                            k.obj != obj || k.off + k.size <= off || off + size <= k.off
                        });
                        if let Some(place) = self.place(*ptr, *plan) {
                            known.push(Known { val: *v, ..place });
                        }
                    }
                    // Through a pointer not known here: it may reach any variable.
                    None => known.clear(),
                },
                Inst::EnterLocals { f } => {
                    let locals = &self.locals[*f as usize];
                    known.retain(|k| !locals.contains(&k.obj));
                }
                Inst::CopyMemory { dst: ptr, .. }
                | Inst::ExtOut { ptr, .. }
                | Inst::Atomic { ptr, .. }
                    if self.others.contains(ptr) => {}
                Inst::CopyMemory { .. } | Inst::ExtOut { .. } | Inst::Atomic { .. } => {
                    known.clear()
                }
                _ => {}
            }
            changed |= self.push_carried(inst, at, &mut out, &mut known);
        }
        changed |= self.with_views(new_reg, |views, make| {
            views.parts_in_place(&mut out, live_out, &b.term, make)
        });
        changed.then_some(out)
    }

    /// Pushes `inst` (instruction `at` of the block as written) onto `out` — a store to a carried
    /// variable as [`Inst::CarriedStore`] (the stored value copied into the variable's register,
    /// which the registers `known` holds no longer hold), a load of one as [`Inst::CarriedLoad`];
    /// true where it changed the instruction.
    fn push_carried(&self, inst: Inst, at: usize, out: &mut Body, known: &mut Vec<Known>) -> bool {
        let carried = |ptr: Reg, plan: u32| {
            let rv = *self.carry_of.get(&ptr)?;
            Some(CarriedAccess {
                var: self.var_of[&self.ptrs[&ptr].obj()],
                ptr,
                plan,
                rv,
                n: self.slots[rv.index()],
            })
        };
        let inst = match inst {
            Inst::Store { ptr, v, plan } => match carried(ptr, plan) {
                Some(c) => {
                    known.retain(|k| k.val != c.rv || v == c.rv);
                    Inst::CarriedStore { v, c }
                }
                None => Inst::Store { ptr, v, plan },
            },
            Inst::Load { d, ptr, plan } => match carried(ptr, plan) {
                Some(c) => Inst::CarriedLoad { d, c },
                None => Inst::Load { d, ptr, plan },
            },
            other => {
                out.push((other, at));
                return false;
            }
        };
        let changed = matches!(inst, Inst::CarriedStore { .. } | Inst::CarriedLoad { .. });
        out.push((inst, at));
        changed
    }

    /// The constant register of the pointer an access chain of constant `steps` from constant
    /// pointer `base` computes (the executor's sum; `None` past 32 bits or for other steps).
    fn chain_const(
        &mut self,
        base: Reg,
        steps: &[Step],
        new_reg: &mut dyn FnMut(NewReg) -> Reg,
    ) -> Option<Reg> {
        let c = match steps {
            [Step::Const(c)] => *c,
            [] => 0,
            _ => return None,
        };
        let p = self.ptrs[&base];
        let q = Ptr::new(p.obj(), p.off().checked_add(c)?);
        Some(match self.regs_of.get(&q.bits()) {
            Some(r) => *r,
            None => {
                let r = self.fresh(new_reg, NewReg::Pointer(q));
                self.regs_of.insert(q.bits(), r);
                self.ptrs.insert(r, q);
                r
            }
        })
    }

    /// Where `place` lies within the value `k` holds, slot for slot (the same scalars at the same
    /// offsets): `k`'s register and the first slot.
    fn within(&self, k: &Known, place: &Known) -> Option<(Reg, u32)> {
        if k.obj != place.obj || place.off < k.off || place.off + place.size > k.off + k.size {
            return None;
        }
        let rel = place.off - k.off;
        let (ks, ps) = (
            &self.plans[k.plan as usize].slots,
            &self.plans[place.plan as usize].slots,
        );
        let p0 = ps.first()?.1;
        let first = ks.iter().position(|&(_, o)| o == rel + p0)?;
        let fits = ps.iter().enumerate().all(|(t, &(sc, o))| {
            ks.get(first + t)
                .is_some_and(|&(ksc, ko)| ksc == sc && ko == o + rel)
        });
        (fits && self.slots[k.val.index()] as usize == ks.len()).then_some((k.val, first as u32))
    }

    /// The place a load or store through `ptr` with `plan` reads or writes, where the executor
    /// copies it between a register and lane memory as it is (its fast paths): a constant pointer
    /// into a `Function` variable of 32-bit units, in bounds, every slot a 32- or 64-bit scalar at a
    /// word boundary.
    fn place(&self, ptr: Reg, plan: u32) -> Option<Known> {
        let p = self.ptrs.get(&ptr)?;
        let o = &self.objects[p.obj().index()];
        let pl = &self.plans[plan as usize];
        (o.unit == 4
            && p.off().is_multiple_of(4)
            && p.off() as u64 + pl.size as u64 <= o.size as u64
            && pl
                .slots
                .iter()
                .all(|&(sc, so)| sc.bytes() >= 4 && so % 4 == 0))
        .then_some(Known {
            obj: p.obj(),
            off: p.off(),
            size: pl.size,
            plan,
            val: ptr,
        })
    }
}

/// The functions that run: the entry point, and every function a call left in one that runs
/// calls.
fn live_functions(funcs: &[Func], entry: usize) -> Vec<bool> {
    let mut live = vec![false; funcs.len()];
    let mut todo = vec![entry];
    while let Some(f) = todo.pop() {
        if std::mem::replace(&mut live[f], true) {
            continue;
        }
        for i in funcs[f].blocks.iter().flat_map(|b| &b.insts) {
            if let Inst::Call { f: g, .. } = i {
                todo.push(*g as usize);
            }
        }
    }
    live
}

/// The functions that run, every caller before its callees (the reverse of a depth-first
/// post-order of the call graph from `entry`; SPIR-V has no recursion).
fn callers_first(funcs: &[Func], entry: usize) -> Vec<usize> {
    let (mut order, _) = calls_post_order(funcs, (entry < funcs.len()).then_some(entry));
    order.reverse();
    order
}

/// Binds each parameter register that every call (in the functions that run) gives the same
/// constant pointer into a `Function` variable — glslang passes every argument through a
/// temporary of the caller's, so a helper called from one place reads and writes that temporary
/// — to that pointer (added to `ptrs`), callers first so that a parameter passed on is bound in
/// the next callee too. A parameter some instruction also writes (an inlined call's argument
/// moved into it) is not bound. Returns the bound parameters.
fn bind_params(
    funcs: &[Func],
    live: &[bool],
    order: &[usize],
    ptrs: &mut HashMap<Reg, Ptr>,
) -> HashSet<Reg> {
    let live_insts = || {
        funcs
            .iter()
            .enumerate()
            .filter(|(fi, _)| live[*fi])
            .flat_map(|(_, f)| f.blocks.iter().flat_map(|b| &b.insts))
    };
    let written: HashSet<Reg> = live_insts().filter_map(|i| i.def()).collect();
    let mut bound = HashSet::new();
    for &g in order {
        for (k, p) in funcs[g].params.iter().enumerate() {
            if written.contains(p) {
                continue;
            }
            let mut to: Option<Ptr> = None;
            let mut one = true;
            for i in live_insts() {
                if let Inst::Call { f, args, .. } = i
                    && *f as usize == g
                {
                    match args.get(k).and_then(|a| ptrs.get(a)) {
                        Some(q) if to.is_none_or(|t| t == *q) => to = Some(*q),
                        _ => one = false,
                    }
                }
            }
            if let (true, Some(q)) = (one, to) {
                ptrs.insert(*p, q);
                bound.insert(*p);
            }
        }
    }
    bound
}

/// Per function: the variables a call to it may reset — its locals, those of the functions
/// inlined into it (their `EnterLocals`), and the same of every function it calls.
fn resets(funcs: &[Func], order: &[usize], locals: &[Vec<ObjectId>]) -> Vec<HashSet<ObjectId>> {
    let mut out: Vec<HashSet<ObjectId>> = funcs
        .iter()
        .map(|f| f.locals.iter().copied().collect())
        .collect();
    // Callees first: each function's set is complete before a caller takes it in.
    for &f in order.iter().rev() {
        let mut set = std::mem::take(&mut out[f]);
        for i in funcs[f].blocks.iter().flat_map(|b| &b.insts) {
            match i {
                Inst::EnterLocals { f: g } => set.extend(locals[*g as usize].iter().copied()),
                Inst::Call { f: g, .. } if *g as usize != f => {
                    set.extend(out[*g as usize].iter().copied())
                }
                _ => {}
            }
        }
        out[f] = set;
    }
    out
}

/// Adds to `others` every register all of whose definitions (in the functions that run) are
/// access chains from a register of `others`.
fn extend_others(funcs: &[Func], live: &[bool], others: &mut HashSet<Reg>) {
    let mut defs: HashMap<Reg, Vec<Option<Reg>>> = HashMap::new();
    for (_, f) in funcs.iter().enumerate().filter(|(fi, _)| live[*fi]) {
        for b in &f.blocks {
            for p in &b.phis {
                defs.entry(p.d).or_default().push(None);
            }
            for i in &b.insts {
                if let Some(d) = i.def() {
                    let base = match i {
                        Inst::AccessChain { base, .. } => Some(*base),
                        _ => None,
                    };
                    defs.entry(d).or_default().push(base);
                }
            }
        }
        for p in &f.params {
            defs.entry(*p).or_default().push(None);
        }
    }
    loop {
        let before = others.len();
        for (d, from) in &defs {
            if !others.contains(d) && from.iter().all(|b| b.is_some_and(|b| others.contains(&b))) {
                others.insert(*d);
            }
        }
        if others.len() == before {
            return;
        }
    }
}

/// The registers a terminator reads.
pub(super) fn term_reads(t: &Term) -> Vec<Reg> {
    match t {
        Term::Cond { c, .. } => vec![*c],
        Term::Switch { sel, .. } => vec![*sel],
        Term::ReturnValue(v) => vec![*v],
        Term::Branch(_) | Term::Return | Term::Unreachable => Vec::new(),
    }
}

/// Per block of `f`, the registers live where it ends: read on some path from there (by an
/// instruction, a phi on the edge taken, or a terminator) before being written again — the
/// textbook backward analysis, iterated to its fixed point.
fn live_out(f: &Func) -> Vec<HashSet<Reg>> {
    let n = f.blocks.len();
    // Per block: registers read before it writes them (its terminator last), and those it writes.
    let mut reads: Vec<HashSet<Reg>> = Vec::with_capacity(n);
    let mut kill: Vec<HashSet<Reg>> = Vec::with_capacity(n);
    for b in &f.blocks {
        let (mut g, mut k) = (HashSet::new(), HashSet::new());
        for p in &b.phis {
            k.insert(p.d);
        }
        for i in &b.insts {
            i.operands(|role, r| match role {
                Role::Use if !k.contains(&r) => {
                    g.insert(r);
                }
                Role::Def => {
                    k.insert(r);
                }
                Role::Use => {}
            });
        }
        for r in term_reads(&b.term) {
            if !k.contains(&r) {
                g.insert(r);
            }
        }
        reads.push(g);
        kill.push(k);
    }
    let mut live_in: Vec<HashSet<Reg>> = vec![HashSet::new(); n];
    let mut out: Vec<HashSet<Reg>> = vec![HashSet::new(); n];
    loop {
        let mut changed = false;
        for bi in (0..n).rev() {
            let b = &f.blocks[bi];
            let mut o: HashSet<Reg> = HashSet::new();
            for s in b.term.successors().map(|s| s as usize) {
                let Some(sb) = f.blocks.get(s) else { continue };
                o.extend(live_in[s].iter().copied());
                for p in &sb.phis {
                    for &(from, v) in p.incoming.iter() {
                        if from as usize == bi {
                            o.insert(v);
                        }
                    }
                }
            }
            let mut li: HashSet<Reg> = reads[bi].clone();
            li.extend(o.iter().filter(|r| !kill[bi].contains(r)).copied());
            if li != live_in[bi] || o != out[bi] {
                live_in[bi] = li;
                out[bi] = o;
                changed = true;
            }
        }
        if !changed {
            return out;
        }
    }
}

impl super::Decoder<'_> {
    /// Promotes the invocation's own variables of `funcs` (entry point `entry`): [`Promote`].
    pub(super) fn promote(&mut self, funcs: &mut [Func], entry: usize) {
        let consts = self.pointer_constants();
        let slots = self.reg_slots.clone();
        let scalars = self.scalar_constants();
        let defined: Defined = self
            .constants
            .iter()
            .filter(|c| c.undef.iter().all(|u| !u) && !self.var_regs.contains_key(&c.reg))
            .map(|c| (c.reg, c.bits.clone()))
            .collect();
        let (constants, reg_slots) = (&mut self.constants, &mut self.reg_slots);
        let reg_views = &mut self.reg_views;
        let mut new_reg = |r: NewReg| {
            let bits: Option<Box<[u64]>> = match r {
                NewReg::Slots(n) => {
                    reg_slots.push(n);
                    None
                }
                NewReg::View { of, slot, n } => {
                    reg_slots.push(n);
                    let view = Reg::new((reg_slots.len() - 1) as u32);
                    reg_views.push(crate::spirv::inst::RegView { view, of, slot });
                    None
                }
                NewReg::Pointer(p) => Some(Box::new([p.bits()])),
                NewReg::Constant(bits) => Some(bits),
            };
            if let Some(b) = &bits {
                reg_slots.push(b.len() as u32);
            }
            let reg = Reg::new((reg_slots.len() - 1) as u32);
            if let Some(bits) = bits {
                constants.push(crate::spirv::inst::Constant {
                    reg,
                    undef: vec![false; bits.len()].into_boxed_slice(),
                    bits,
                    undef_at: Default::default(),
                    undef_component: false,
                });
            }
            reg
        };
        self.carried = Promote::new(
            funcs,
            entry,
            &self.objects,
            &self.plans,
            slots,
            consts,
            (scalars, defined),
        )
        .run(funcs, &mut new_reg);
    }
}
