//! The workgroup executor: runs a [`Program`] lane by lane over a whole workgroup under one of the
//! three reconvergence models, and records each invocation's results as typed values.
//!
//! # How it works
//! The executor keeps, at every point of the program, the set of invocations executing it together
//! (one [`LaneMask`] per subgroup) — the structured simulation with a stack of masks that the Vulkan
//! CTS reconvergence tests use. `if`, loops, `switch` split the set; merges, continue targets and
//! call returns join it; `break`, `continue` and `return` move lanes to the construct they jump to.
//! This set is exactly the *tangle* of SPV_KHR_maximal_reconvergence ("Reconvergence": the tangle
//! at a merge block, continue target or after a call includes all non-escaping invocations of the
//! tangle at the header).
//!
//! Alongside it, the executor tracks what each model *guarantees* about that set — the rules live
//! in [`crate::reconverge::flow`], shared with the SPIR-V interpreter. A subgroup operation whose
//! set the model in force does not pin down yields [`Reason::UnpinnedTangle`] for every lane, naming
//! the construct where the guarantee was lost.
//!
//! If an invocation's *path* depends on an undefined value (a branch on an undefined elect, say),
//! the invocation is *lost*: its records from there on are not pinned down ([`Execution::lost_at`]),
//! and every later tangled result of its subgroup is undefined.
//!
//! Atomic adds return [`Val::Atomic`]: defined, but which value depends on the order the device ran
//! them in, which the model does not choose; comparisons check them for consistency instead.

use crate::model::{
    evaluate_typed, gather_source, info, ArgKind, Args, Ballot, LaneArg, LaneMask, ModelError, Op,
    OpCall, Outcome, Placement, Reason, SubgroupSize, Value, WorkgroupLayout, WorkgroupShape,
};
use crate::reconverge::flow::{Flow, Lost, PerGroup};
pub use crate::reconverge::mode::Mode;
use crate::reconverge::program::{
    Case, Cond, Form, Input, Operand, Program, ProgramError, Reg, Selector, SgOp, Stmt, Trips,
    COUNTERS, MAX_TRIPS, OPS, REGS,
};
use std::fmt;

/// Where each invocation of a workgroup runs: (subgroup, lane) by local index — from a model
/// [`WorkgroupLayout`], or as a device reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneMap {
    shape: WorkgroupShape,
    size: SubgroupSize,
    /// by local index: subgroup * size + lane
    slot_of: Vec<u32>,
    /// by slot: local index, or `u32::MAX` for an empty lane
    inv_of: Vec<u32>,
    groups: usize,
}

impl LaneMap {
    /// The placement of a model layout.
    pub fn new(layout: &WorkgroupLayout) -> LaneMap {
        LaneMap::from_placements(layout.shape(), layout.size(), layout.placements())
            .expect("a model layout places every invocation once")
    }

    /// A placement as recorded by a device: `placements[i]` is where local index `i` ran. Every
    /// lane must be below the subgroup size and no two invocations may share a (subgroup, lane).
    pub fn from_placements(
        shape: WorkgroupShape,
        size: SubgroupSize,
        placements: &[Placement],
    ) -> Result<LaneMap, String> {
        let n = shape.invocations() as usize;
        if placements.len() != n {
            return Err(format!(
                "{} placements for a workgroup of {n} invocations",
                placements.len()
            ));
        }
        let groups = placements
            .iter()
            .map(|p| p.subgroup as usize + 1)
            .max()
            .unwrap_or(0);
        if groups > n {
            return Err(format!(
                "subgroup id {} in a workgroup of {n} invocations",
                groups - 1
            ));
        }
        let lanes = size.lanes();
        let mut inv_of = vec![u32::MAX; groups * lanes];
        let mut slot_of = Vec::with_capacity(n);
        for (i, p) in placements.iter().enumerate() {
            if p.lane >= size.get() {
                return Err(format!(
                    "invocation {i}: lane {} >= subgroup size {size}",
                    p.lane
                ));
            }
            let slot = p.subgroup as usize * lanes + p.lane as usize;
            if inv_of[slot] != u32::MAX {
                return Err(format!(
                    "invocations {} and {i} both at subgroup {} lane {}",
                    inv_of[slot], p.subgroup, p.lane
                ));
            }
            inv_of[slot] = i as u32;
            slot_of.push(slot as u32);
        }
        Ok(LaneMap {
            shape,
            size,
            slot_of,
            inv_of,
            groups,
        })
    }

    /// Number of subgroups.
    pub fn subgroups(&self) -> usize {
        self.groups
    }

    /// The subgroup size.
    pub fn size(&self) -> SubgroupSize {
        self.size
    }

    /// The workgroup shape.
    pub fn shape(&self) -> WorkgroupShape {
        self.shape
    }

    /// Where local index `i` runs.
    pub fn placement(&self, i: u32) -> Placement {
        let s = self.slot_of[i as usize];
        Placement {
            subgroup: s / self.size.get(),
            lane: s % self.size.get(),
        }
    }

    /// The local index at (subgroup, lane), if any.
    pub fn invocation(&self, subgroup: u32, lane: u32) -> Option<u32> {
        if lane >= self.size.get() {
            return None;
        }
        self.inv_of
            .get(subgroup as usize * self.size.lanes() + lane as usize)
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    /// Lanes of subgroup `g` that hold an invocation.
    pub fn present(&self, g: usize) -> LaneMask {
        let n = self.size.lanes();
        let mut m = LaneMask::EMPTY;
        for l in 0..n {
            if self.inv_of[g * n + l] != u32::MAX {
                m = m.with(l as u32);
            }
        }
        m
    }
}

/// A register or recorded value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// A value the model pins down.
    Defined(Value),
    /// Not pinned down, and why.
    Undefined(Reason),
    /// The value atomic add number `atomic` (an index into [`Execution::atomics`]) returned, plus
    /// `plus` (wrapping): defined, but which value the device returns depends on the order it ran
    /// the atomics in — a legal choice the model does not make.
    Atomic {
        /// index into [`Execution::atomics`]
        atomic: u32,
        /// added constant
        plus: u32,
    },
    /// Computed from atomic results in a way the model does not follow (e.g. a reduction of them).
    OrderDependent,
}

impl Val {
    /// A defined `uint`.
    pub fn u32(x: u32) -> Val {
        Val::Defined(Value::u32(x))
    }

    /// The four words the device stores for a defined value (bool and uint in `.x`).
    pub fn words(&self) -> Option<[u32; 4]> {
        match self {
            Val::Defined(v) => Some(words(v)),
            _ => None,
        }
    }

    /// Is the value defined (a known value)?
    pub fn is_defined(&self) -> bool {
        matches!(self, Val::Defined(_))
    }

    /// As the model's [`Outcome`] (`None` for atomic-derived values, which it cannot express).
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            Val::Defined(v) => Some(Outcome::Defined(*v)),
            Val::Undefined(r) => Some(Outcome::Undefined(*r)),
            _ => None,
        }
    }
}

/// The words of a value as a `uvec4` register holds it.
pub fn words(v: &Value) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (i, b) in v.bits().iter().enumerate().take(4) {
        w[i] = *b as u32;
    }
    w
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Defined(v) if v.ty().components() == 4 => {
                let w = words(v);
                if w[1] == 0 && w[2] == 0 && w[3] == 0 {
                    write!(f, "0x{:x}", w[0])
                } else {
                    write!(f, "{}", Ballot::from_words(w))
                }
            }
            Val::Defined(v) => write!(f, "{v}"),
            Val::Undefined(_) => f.write_str("undef"),
            Val::Atomic { atomic, plus: 0 } => write!(f, "A{atomic}"),
            Val::Atomic { atomic, plus } => write!(f, "A{atomic}+{plus}"),
            Val::OrderDependent => f.write_str("order-dependent"),
        }
    }
}

/// One recorded result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record {
    /// the tag of the statement that wrote it
    pub tag: u32,
    /// the value
    pub value: Val,
}

/// One atomic add performed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomicOp {
    /// counter index
    pub counter: u8,
    /// amount added
    pub amount: Val,
    /// local index of the invocation that performed it
    pub invocation: u32,
}

/// The result of running a program on a workgroup.
#[derive(Clone, Debug, PartialEq)]
pub struct Execution {
    /// the model in force
    pub mode: Mode,
    /// per invocation (local index): its records in order
    pub records: Vec<Vec<Record>>,
    /// per invocation: `Some(k)` if its path depends on an undefined value from record `k` on
    pub lost_at: Vec<Option<usize>>,
    /// final counter values
    pub counters: [Val; COUNTERS],
    /// every atomic add, in the order the model ran them
    pub atomics: Vec<AtomicOp>,
    /// statements executed, summed over invocations
    pub lane_steps: u64,
}

impl Execution {
    /// Number of records the model pins down (defined values and atomic results), over all
    /// invocations, not counting those of lost invocations.
    pub fn defined_records(&self) -> usize {
        self.records
            .iter()
            .zip(&self.lost_at)
            .map(|(r, lost)| {
                r[..lost.unwrap_or(r.len())]
                    .iter()
                    .filter(|x| !matches!(x.value, Val::Undefined(_) | Val::OrderDependent))
                    .count()
            })
            .sum()
    }

    /// Number of records that are undefined.
    pub fn undefined_records(&self) -> usize {
        self.records
            .iter()
            .flatten()
            .filter(|x| matches!(x.value, Val::Undefined(_)))
            .count()
    }
}

/// Why an execution stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The program is not well formed.
    #[error("invalid program: {0}")]
    Invalid(#[from] ProgramError),
    /// An invocation wrote more records than the limit.
    #[error("invocation {invocation} wrote more than {max} records")]
    TooManyRecords {
        /// local index
        invocation: u32,
        /// the limit
        max: usize,
    },
    /// The run took more lane-steps than the limit.
    #[error("more than {0} lane-steps")]
    TooLong(u64),
    /// The reference model rejected an operation (a bug in the executor).
    #[error("reference model: {0}")]
    Model(String),
}

impl From<ModelError> for ExecError {
    fn from(e: ModelError) -> Self {
        ExecError::Model(e.to_string())
    }
}

/// Bounds on one execution.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// most records per invocation
    pub max_records: usize,
    /// most lane-steps in all
    pub max_lane_steps: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_records: 4096,
            max_lane_steps: 20_000_000,
        }
    }
}

/// One subgroup operation as executed, for observers.
#[derive(Debug)]
pub struct OpEvent<'a> {
    /// the statement's tag
    pub tag: u32,
    /// the operation
    pub op: &'a SgOp,
    /// the subgroup
    pub subgroup: u32,
    /// the lanes of that subgroup executing it together (the structured tangle)
    pub tangle: LaneMask,
    /// `None` if the model in force pins the tangle down, else the construct where it was lost
    pub unpinned: Option<u32>,
    /// each lane's result
    pub results: &'a [(u32, Val)],
}

/// Watches an execution (the fuzzer checks invariants with it; docs draw traces with it).
pub trait Observer {
    /// Construct `construct` runs a part with lanes `child` (per subgroup) out of `parent`.
    fn split(&mut self, _construct: u32, _parent: &[LaneMask], _child: &[LaneMask]) {}
    /// A subgroup operation ran.
    fn op(&mut self, _event: &OpEvent<'_>) {}
}

/// Observes nothing.
pub struct NoObserver;
impl Observer for NoObserver {}

/// Runs `program` on the workgroup `map` under `mode` with default [`Limits`].
///
/// ```
/// use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
/// use lockstep::reconverge::{execute, LaneMap, Mode, Program, SgOp, Stmt, Cond, Val};
/// // if (invocation is odd) { subgroupBallot(true) }
/// let p = Program { main: vec![Stmt::If { id: 1, cond: Cond::Mask(0xaaaa), else_branch: vec![],
///     then_branch: vec![Stmt::Op { tag: 2, op: SgOp::ballot(Cond::True), dst: None }] }],
///     functions: vec![] };
/// let wg = WorkgroupLayout::new(WorkgroupShape::new(8, 1, 1).unwrap(),
///     SubgroupSize::new(8).unwrap(), LaneOrder::ROW_MAJOR).unwrap();
/// let map = LaneMap::new(&wg);
/// let max = execute(&p, &map, Mode::Maximal).unwrap();
/// assert_eq!(max.records[1][0].value.words(), Some([0xaa, 0, 0, 0]));
/// // Core Vulkan does not pin down which invocations execute the ballot together.
/// let base = execute(&p, &map, Mode::Base).unwrap();
/// assert!(matches!(base.records[1][0].value, Val::Undefined(_)));
/// ```
pub fn execute(program: &Program, map: &LaneMap, mode: Mode) -> Result<Execution, ExecError> {
    execute_with(program, map, mode, Limits::default(), &mut NoObserver)
}

/// Runs `program` with explicit limits and an observer.
pub fn execute_with<O: Observer>(
    program: &Program,
    map: &LaneMap,
    mode: Mode,
    limits: Limits,
    observer: &mut O,
) -> Result<Execution, ExecError> {
    program.validate()?;
    let size = map.size();
    let n = size.lanes();
    let groups = map.subgroups();
    let slots = groups * n;
    let calls = Calls::new(size)?;
    let mut ex = Ex {
        p: program,
        map,
        mode,
        obs: observer,
        limits,
        n,
        groups,
        regs: vec![[Val::u32(0); REGS]; slots],
        records: vec![Vec::new(); slots],
        lost_at: vec![None; slots],
        lost: Lost::new(groups),
        counters: [Val::u32(0); COUNTERS],
        atomics: Vec::new(),
        steps: 0,
        calls,
        loops: Vec::new(),
        funcs: Vec::new(),
    };
    let mut flow = Flow::entry((0..groups).map(|g| map.present(g)).collect::<PerGroup<_>>());
    ex.block(&program.main, &mut flow)?;
    let inv = map.shape().invocations() as usize;
    let mut records = vec![Vec::new(); inv];
    let mut lost_at = vec![None; inv];
    for (slot, &i) in map.inv_of.iter().enumerate() {
        if i != u32::MAX {
            records[i as usize] = std::mem::take(&mut ex.records[slot]);
            lost_at[i as usize] = ex.lost_at[slot];
        }
    }
    let mut counters = ex.counters;
    if let Some(c) = ex.lost.first() {
        // A lost invocation may have added anything, anywhere.
        counters = [Val::Undefined(Reason::UnpinnedTangle { construct: c }); COUNTERS];
    }
    Ok(Execution {
        mode,
        records,
        lost_at,
        counters,
        atomics: ex.atomics,
        lane_steps: ex.steps,
    })
}

/// Model calls of the operations programs use that take no argument, built once per execution,
/// and the lane ids a gather reads.
struct Calls {
    plain: Vec<(Op, OpCall)>,
    lane_ids: Vec<[u32; 1]>,
}

impl Calls {
    fn new(size: SubgroupSize) -> Result<Calls, ExecError> {
        let plain = OPS
            .iter()
            .filter(|(_, form, _)| matches!(form, Form::Nothing | Form::Cond | Form::Value))
            .map(|(op, ..)| Ok((*op, OpCall::plain(*op, size)?)))
            .collect::<Result<_, ModelError>>()?;
        Ok(Calls {
            plain,
            lane_ids: (0..size.lanes() as u32).map(|l| [l]).collect(),
        })
    }

    /// The call of `op` (validation admits only the operations of [`OPS`]).
    fn plain(&self, op: Op) -> Result<&OpCall, ExecError> {
        self.plain
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, c)| c)
            .ok_or_else(|| ExecError::Model(format!("{} takes arguments", info(op).name)))
    }
}

struct LoopFrame {
    count: Vec<u32>,
    brk: PerGroup<LaneMask>,
    cont: Vec<Flow>,
}

struct FuncFrame {
    ret: Vec<Flow>,
}

enum CondVal {
    Known(bool),
    Undefined(Reason),
    OrderDependent,
}

struct Ex<'a, O: Observer> {
    p: &'a Program,
    map: &'a LaneMap,
    mode: Mode,
    obs: &'a mut O,
    limits: Limits,
    n: usize,
    groups: usize,
    regs: Vec<[Val; REGS]>,
    records: Vec<Vec<Record>>,
    lost_at: Vec<Option<usize>>,
    lost: Lost,
    counters: [Val; COUNTERS],
    atomics: Vec<AtomicOp>,
    steps: u64,
    calls: Calls,
    loops: Vec<LoopFrame>,
    funcs: Vec<FuncFrame>,
}

impl<O: Observer> Ex<'_, O> {
    fn step(&mut self, f: &Flow) -> Result<(), ExecError> {
        self.steps += f.set.iter().map(|m| m.count() as u64).sum::<u64>();
        if self.steps > self.limits.max_lane_steps {
            return Err(ExecError::TooLong(self.limits.max_lane_steps));
        }
        Ok(())
    }

    fn invocation(&self, slot: usize) -> u32 {
        self.map.inv_of[slot]
    }

    /// `None` if the model in force pins down the tangle of subgroup `g`.
    fn unpinned(&self, g: usize, f: &Flow) -> Option<u32> {
        f.unpinned(self.mode, g, &self.lost)
    }

    fn lose(&mut self, slot: usize, g: usize, id: u32) {
        if self.lost_at[slot].is_none() {
            self.lost_at[slot] = Some(self.records[slot].len());
        }
        self.lost.lose(g, id);
    }

    fn record(&mut self, slot: usize, tag: u32, value: Val) -> Result<(), ExecError> {
        if self.records[slot].len() >= self.limits.max_records {
            return Err(ExecError::TooManyRecords {
                invocation: self.invocation(slot),
                max: self.limits.max_records,
            });
        }
        self.records[slot].push(Record { tag, value });
        Ok(())
    }

    fn loop_count(&self, outer: u8, slot: usize) -> u32 {
        // Validation guarantees the loop exists in the current function.
        let i = self.loops.len() - 1 - outer as usize;
        self.loops[i].count[slot]
    }

    fn operand(&self, o: &Operand, slot: usize) -> Val {
        let n = self.n;
        let inv = self.invocation(slot);
        match *o {
            Operand::Const(c) => Val::u32(c),
            Operand::Reg(r) => first_word(self.regs[slot][r as usize]),
            Operand::Invocation => Val::u32(inv),
            Operand::X => Val::u32(self.map.shape().local_id(inv)[0]),
            Operand::Y => Val::u32(self.map.shape().local_id(inv)[1]),
            Operand::SubgroupId => Val::u32((slot / n) as u32),
            Operand::Lane => Val::u32((slot % n) as u32),
            Operand::Scaled { mul, add } => Val::u32(inv.wrapping_mul(mul).wrapping_add(add)),
            Operand::Sum(a, b) => add_vals(
                first_word(self.regs[slot][a as usize]),
                first_word(self.regs[slot][b as usize]),
            ),
        }
    }

    fn cond(&self, c: &Cond, slot: usize) -> CondVal {
        let inv = self.invocation(slot);
        match *c {
            Cond::True => CondVal::Known(true),
            Cond::Mask(m) => CondVal::Known((m >> (inv & 127)) & 1 != 0),
            Cond::Subgroups(m) => CondVal::Known((m >> ((slot / self.n) as u32 & 31)) & 1 != 0),
            Cond::LoopCount { outer, mask } => {
                CondVal::Known((mask >> (self.loop_count(outer, slot) & 31)) & 1 != 0)
            }
            Cond::Reg(r) => match self.regs[slot][r as usize] {
                Val::Defined(v) => CondVal::Known(v.component_bits(0) as u32 != 0),
                Val::Undefined(why) => CondVal::Undefined(why),
                Val::Atomic { .. } | Val::OrderDependent => CondVal::OrderDependent,
            },
        }
    }

    fn trips(&self, t: &Trips, slot: usize) -> u32 {
        match *t {
            Trips::Uniform(n) => n.min(MAX_TRIPS),
            Trips::Varying { salt, modulus } => (self.invocation(slot) ^ salt) % modulus.max(1),
        }
    }

    fn selector(&self, s: &Selector, slot: usize) -> u32 {
        match *s {
            Selector::Varying { salt, modulus } => (self.invocation(slot) ^ salt) % modulus.max(1),
            Selector::Subgroup { modulus } => (slot / self.n) as u32 % modulus.max(1),
            Selector::LoopCount { outer, modulus } => self.loop_count(outer, slot) % modulus.max(1),
        }
    }

    fn block(&mut self, b: &[Stmt], f: &mut Flow) -> Result<(), ExecError> {
        for s in b {
            if f.is_empty() {
                return Ok(());
            }
            self.stmt(s, f)?;
        }
        Ok(())
    }

    /// Runs one statement: an interpreter of the AST whose control flow follows the rules of
    /// [`crate::reconverge::flow`] — each construct has its own phase below.
    fn stmt(&mut self, s: &Stmt, f: &mut Flow) -> Result<(), ExecError> {
        self.step(f)?;
        match s {
            Stmt::If {
                id,
                cond,
                then_branch,
                else_branch,
            } => self.if_else(*id, cond, then_branch, else_branch, f),
            Stmt::Loop { id, trips, body } => self.counted_loop(*id, trips, body, f),
            Stmt::Switch {
                id,
                selector,
                cases,
                default,
            } => self.switch(*id, selector, cases, default, f),
            Stmt::Break => {
                let frame = self.loops.last_mut().expect("validated: break in a loop");
                for (b, m) in frame.brk.iter_mut().zip(&f.set) {
                    *b = b.or(*m);
                }
                leave(f);
                Ok(())
            }
            Stmt::Continue => {
                let frame = self
                    .loops
                    .last_mut()
                    .expect("validated: continue in a loop");
                frame.cont.push(f.clone());
                leave(f);
                Ok(())
            }
            Stmt::Return => {
                if let Some(fr) = self.funcs.last_mut() {
                    fr.ret.push(f.clone());
                }
                leave(f);
                Ok(())
            }
            Stmt::Call { id, function } => self.call(*id, *function, f),
            Stmt::Op { tag, op, dst } => self.op(*tag, op, *dst, f),
            Stmt::Atomic {
                tag,
                counter,
                value,
                dst,
            } => self.atomic(*tag, *counter, value, *dst, f),
            Stmt::Set { dst, value } => {
                for slot in slots(self.n, f) {
                    self.regs[slot][*dst as usize] = self.operand(value, slot);
                }
                Ok(())
            }
            Stmt::Store { tag, value } => {
                for slot in slots(self.n, f) {
                    let v = self.operand(value, slot);
                    self.record(slot, *tag, v)?;
                }
                Ok(())
            }
        }
    }

    /// `if (cond) { then } else { else }`: the condition splits the set, the merge joins it.
    fn if_else(
        &mut self,
        id: u32,
        cond: &Cond,
        then_branch: &[Stmt],
        else_branch: &[Stmt],
        f: &mut Flow,
    ) -> Result<(), ExecError> {
        let (n, groups) = (self.n, self.groups);
        let mut t = PerGroup::from_elem(LaneMask::EMPTY, groups);
        let mut e = PerGroup::from_elem(LaneMask::EMPTY, groups);
        for g in 0..groups {
            for l in f.set[g].iter() {
                let slot = g * n + l as usize;
                match self.cond(cond, slot) {
                    CondVal::Known(true) => t[g] = t[g].with(l),
                    CondVal::Known(false) => e[g] = e[g].with(l),
                    // The path depends on a value the model does not know: the simulation
                    // carries the lane on the else path, but nothing it does is compared.
                    CondVal::Undefined(_) | CondVal::OrderDependent => {
                        self.lose(slot, g, id);
                        e[g] = e[g].with(l);
                    }
                }
            }
        }
        let mut ft = f.part(id, t);
        let mut fe = f.part(id, e);
        for (part, body) in [(&mut ft, then_branch), (&mut fe, else_branch)] {
            if !part.is_empty() {
                self.obs.split(id, &f.set, &part.set);
                self.block(body, part)?;
            }
        }
        *f = f.merge(id, [&ft.set, &fe.set]);
        Ok(())
    }

    /// `for (i = 0; i < trips; i++) { body }`: each iteration's header splits off the lanes that
    /// leave; the continue target joins the lanes that finished the body or continued.
    fn counted_loop(
        &mut self,
        id: u32,
        trips: &Trips,
        body: &[Stmt],
        f: &mut Flow,
    ) -> Result<(), ExecError> {
        let (n, groups) = (self.n, self.groups);
        let entry = f.clone();
        self.loops.push(LoopFrame {
            count: vec![0; groups * n],
            brk: PerGroup::from_elem(LaneMask::EMPTY, groups),
            cont: Vec::new(),
        });
        let mut cur = f.clone();
        let mut exited = PerGroup::from_elem(LaneMask::EMPTY, groups);
        let mut iteration = 0u32;
        loop {
            // Header: `i < trips` splits the set into lanes that stay and lanes that leave
            // through the merge block.
            let mut stay = PerGroup::from_elem(LaneMask::EMPTY, groups);
            for g in 0..groups {
                for l in cur.set[g].iter() {
                    let slot = g * n + l as usize;
                    if iteration < self.trips(trips, slot) {
                        stay[g] = stay[g].with(l);
                    } else {
                        exited[g] = exited[g].with(l);
                    }
                }
            }
            if stay.iter().all(|m| m.is_empty()) {
                break;
            }
            let mut body_flow = cur.part(id, stay);
            self.obs.split(id, &cur.set, &body_flow.set);
            let header_amb = PerGroup::from_slice(&cur.amb);
            self.block(body, &mut body_flow)?;
            // Continue target: the lanes that reached the end of the body and those that
            // continued. Maximal reconvergence reconverges them; the others have no rule.
            let frame = self.loops.last_mut().expect("loop frame");
            let mut sources = vec![body_flow];
            sources.append(&mut frame.cont);
            cur = Flow::join(id, &sources, header_amb);
            for g in 0..groups {
                for l in cur.set[g].iter() {
                    frame.count[g * n + l as usize] += 1;
                }
            }
            self.step(&cur)?;
            iteration += 1;
        }
        let frame = self.loops.pop().expect("loop frame");
        *f = entry.merge(id, [&exited, &frame.brk]);
        Ok(())
    }

    /// `switch (selector) { case …: … }`: each case runs with the lanes whose selector value it
    /// lists (the default with the rest); the merge joins them.
    fn switch(
        &mut self,
        id: u32,
        selector: &Selector,
        cases: &[Case],
        default: &[Stmt],
        f: &mut Flow,
    ) -> Result<(), ExecError> {
        let (n, groups) = (self.n, self.groups);
        let entry = f.clone();
        let k = cases.len();
        let mut parts = vec![PerGroup::from_elem(LaneMask::EMPTY, groups); k + 1];
        let mut values = vec![0u32; groups * n];
        for (g, set) in f.set.iter().enumerate() {
            for l in set.iter() {
                let slot = g * n + l as usize;
                let v = self.selector(selector, slot);
                values[slot] = v;
                let c = cases
                    .iter()
                    .position(|c| c.labels.contains(&v))
                    .unwrap_or(k);
                parts[c][g] = parts[c][g].with(l);
            }
        }
        let flows = entry.switch(id, n, &values, parts);
        let mut ends = Vec::with_capacity(k + 1);
        for (c, mut cf) in flows.into_iter().enumerate() {
            let body = if c < k { &cases[c].body } else { default };
            if !cf.is_empty() {
                self.obs.split(id, &entry.set, &cf.set);
                self.block(body, &mut cf)?;
            }
            ends.push(cf.set);
        }
        *f = entry.merge(id, &ends);
        Ok(())
    }

    /// A call: the function's body, then the lanes that reached its end or returned join.
    fn call(&mut self, id: u32, function: u32, f: &mut Flow) -> Result<(), ExecError> {
        let p = self.p;
        let entry = f.clone();
        self.funcs.push(FuncFrame { ret: Vec::new() });
        let depth = self.loops.len();
        let mut body = f.clone();
        self.block(&p.functions[function as usize], &mut body)?;
        debug_assert_eq!(depth, self.loops.len());
        let fr = self.funcs.pop().expect("function frame");
        let mut sources = vec![body];
        sources.extend(fr.ret);
        // SPV_KHR_maximal_reconvergence: a call's return is a reconvergence point.
        *f = Flow::join(id, &sources, PerGroup::from_slice(&entry.amb));
        Ok(())
    }

    /// `atomicAdd(ctr[counter], value)`, lane by lane in the model's order.
    fn atomic(
        &mut self,
        tag: u32,
        counter: u8,
        value: &Operand,
        dst: Option<Reg>,
        f: &Flow,
    ) -> Result<(), ExecError> {
        for slot in slots(self.n, f) {
            let amount = self.operand(value, slot);
            let c = counter as usize;
            self.counters[c] = counter_add(self.counters[c], amount);
            let atomic = self.atomics.len() as u32;
            self.atomics.push(AtomicOp {
                counter,
                amount,
                invocation: self.invocation(slot),
            });
            let v = Val::Atomic { atomic, plus: 0 };
            self.record(slot, tag, v)?;
            if let Some(d) = dst {
                self.regs[slot][d as usize] = v;
            }
        }
        Ok(())
    }

    fn op(&mut self, tag: u32, op: &SgOp, dst: Option<Reg>, f: &Flow) -> Result<(), ExecError> {
        let n = self.n;
        for g in 0..self.groups {
            let tangle = f.set[g];
            if tangle.is_empty() {
                continue;
            }
            let unpinned = if op.is_tangled() {
                self.unpinned(g, f)
            } else {
                None
            };
            let results: Vec<(u32, Val)> = match unpinned {
                Some(c) => tangle
                    .iter()
                    .map(|l| (l, Val::Undefined(Reason::UnpinnedTangle { construct: c })))
                    .collect(),
                None => self.eval(op, g, tangle)?,
            };
            self.obs.op(&OpEvent {
                tag,
                op,
                subgroup: g as u32,
                tangle,
                unpinned,
                results: &results,
            });
            for (l, v) in results {
                let slot = g * n + l as usize;
                self.record(slot, tag, v)?;
                if let Some(d) = dst {
                    self.regs[slot][d as usize] = v;
                }
            }
        }
        Ok(())
    }

    /// Evaluates a subgroup operation on a pinned-down tangle with the reference model, by the
    /// form of its input.
    fn eval(&self, op: &SgOp, g: usize, tangle: LaneMask) -> Result<Vec<(u32, Val)>, ExecError> {
        match &op.input {
            Input::Nothing => {
                let out = evaluate_typed::<u32, 1>(self.calls.plain(op.op)?, tangle, &[])?;
                Ok(outcomes(&out, tangle))
            }
            Input::Cond(c) => self.eval_conds(self.calls.plain(op.op)?, c, g, tangle),
            Input::Value(o) => {
                let call = self.calls.plain(op.op)?;
                if gather_source(call, 0, 0).is_some() {
                    self.gather(call, o, g, tangle)
                } else {
                    self.eval_values(call, o, g, tangle)
                }
            }
            Input::Shifted(o, d) => {
                let call = OpCall::new(info(op.op), self.map.size(), lane_args(op.op, *d))?;
                if gather_source(&call, 0, 0).is_none() {
                    return Err(ExecError::Model(format!(
                        "{} with a lane argument is not a gather",
                        info(op.op).name
                    )));
                }
                self.gather(&call, o, g, tangle)
            }
            Input::Ballot(r) => self.eval_ballots(op.op, *r, g, tangle),
        }
    }

    /// An operation on one `bool` per lane (ballot, any).
    fn eval_conds(
        &self,
        call: &OpCall,
        c: &Cond,
        g: usize,
        tangle: LaneMask,
    ) -> Result<Vec<(u32, Val)>, ExecError> {
        let n = self.n;
        let mut vals = vec![[false]; n];
        let mut bad: Option<Val> = None;
        for l in tangle.iter() {
            match self.cond(c, g * n + l as usize) {
                CondVal::Known(b) => vals[l as usize] = [b],
                CondVal::Undefined(r) => {
                    bad.get_or_insert(Val::Undefined(r));
                }
                CondVal::OrderDependent => {
                    bad = Some(bad.unwrap_or(Val::OrderDependent));
                }
            }
        }
        if let Some(v) = bad {
            return Ok(tangle.iter().map(|l| (l, v)).collect());
        }
        Ok(outcomes(&evaluate_typed(call, tangle, &vals)?, tangle))
    }

    /// An operation on one `uint` per lane that is not a gather (add).
    fn eval_values(
        &self,
        call: &OpCall,
        o: &Operand,
        g: usize,
        tangle: LaneMask,
    ) -> Result<Vec<(u32, Val)>, ExecError> {
        let n = self.n;
        let mut vals = vec![[0u32]; n];
        let mut bad: Option<Val> = None;
        for l in tangle.iter() {
            match self.operand(o, g * n + l as usize) {
                Val::Defined(v) => vals[l as usize] = [v.component_bits(0) as u32],
                Val::Undefined(r) => {
                    bad.get_or_insert(Val::Undefined(r));
                }
                Val::Atomic { .. } | Val::OrderDependent => {
                    bad = Some(bad.unwrap_or(Val::OrderDependent));
                }
            }
        }
        if let Some(v) = bad {
            return Ok(tangle.iter().map(|l| (l, v)).collect());
        }
        Ok(outcomes(&evaluate_typed(call, tangle, &vals)?, tangle))
    }

    /// A gather (broadcast first, shuffle up): ask the model which lane each lane reads, then copy
    /// that lane's value (which may itself be undefined or an atomic's result).
    fn gather(
        &self,
        call: &OpCall,
        o: &Operand,
        g: usize,
        tangle: LaneMask,
    ) -> Result<Vec<(u32, Val)>, ExecError> {
        let n = self.n;
        let src = evaluate_typed(call, tangle, &self.calls.lane_ids)?;
        Ok(tangle
            .iter()
            .map(|l| {
                let v = match src[l as usize] {
                    Outcome::Defined(s) => self.operand(o, g * n + s.component_bits(0) as usize),
                    Outcome::Undefined(r) => Val::Undefined(r),
                    Outcome::Inactive => Val::Undefined(Reason::SourceInactive { source: l }),
                };
                (l, v)
            })
            .collect())
    }

    /// A lane-local operation on a ballot held in a register (bit counts): each lane counts the
    /// bits of its own operand.
    fn eval_ballots(
        &self,
        op: Op,
        r: Reg,
        g: usize,
        tangle: LaneMask,
    ) -> Result<Vec<(u32, Val)>, ExecError> {
        let n = self.n;
        let mut res = Vec::with_capacity(tangle.count() as usize);
        for l in tangle.iter() {
            let v = match self.regs[g * n + l as usize][r as usize] {
                Val::Defined(v) => {
                    let call = OpCall::new(
                        info(op),
                        self.map.size(),
                        Args {
                            ballot: Some(Ballot::from_words(words(&v))),
                            ..Args::default()
                        },
                    )?;
                    let o = evaluate_typed::<u32, 1>(&call, LaneMask(0).with(l), &[])?;
                    outcome_val(o[l as usize], l)
                }
                Val::Undefined(r) => Val::Undefined(r),
                Val::Atomic { .. } | Val::OrderDependent => Val::OrderDependent,
            };
            res.push((l, v));
        }
        Ok(res)
    }
}

/// The arguments of `op` with its lane argument (delta, id, mask or index) uniformly `d`.
fn lane_args(op: Op, d: u32) -> Args {
    let mut a = Args::default();
    let arg = Some(LaneArg::Uniform(d));
    for k in info(op).args {
        match k {
            ArgKind::Delta { .. } => a.delta = arg.clone(),
            ArgKind::Id { .. } => a.id = arg.clone(),
            ArgKind::Mask => a.mask = arg.clone(),
            ArgKind::Index => a.index = arg.clone(),
            // Not a lane argument: OpCall::new reports it missing.
            ArgKind::Cluster | ArgKind::QuadIndex | ArgKind::Ballot | ArgKind::Workgroup => {}
        }
    }
    a
}

/// The slots (`subgroup * lanes + lane`) of the lanes executing `f`, in order.
fn slots(n: usize, f: &Flow) -> impl Iterator<Item = usize> + '_ {
    f.set
        .iter()
        .enumerate()
        .flat_map(move |(g, m)| m.iter().map(move |l| g * n + l as usize))
}

/// Every lane of `f` leaves (break, continue, return).
fn leave(f: &mut Flow) {
    f.set.iter_mut().for_each(|m| *m = LaneMask::EMPTY);
}

/// The tangle's outcomes as values.
fn outcomes(out: &[Outcome], tangle: LaneMask) -> Vec<(u32, Val)> {
    tangle
        .iter()
        .map(|l| (l, outcome_val(out[l as usize], l)))
        .collect()
}

fn outcome_val(o: Outcome, lane: u32) -> Val {
    match o {
        Outcome::Defined(v) => Val::Defined(v),
        Outcome::Undefined(r) => Val::Undefined(r),
        // The evaluator writes every active lane; an inactive one here would be a model bug.
        Outcome::Inactive => Val::Undefined(Reason::SourceInactive { source: lane }),
    }
}

/// `.x` of a register, as GLSL reads `r.x`.
fn first_word(v: Val) -> Val {
    match v {
        Val::Defined(x) => Val::u32(x.component_bits(0) as u32),
        other => other,
    }
}

/// `a.x + b.x` with wrapping, tracking undefined and atomic operands.
fn add_vals(a: Val, b: Val) -> Val {
    match (first_word(a), first_word(b)) {
        (Val::Undefined(r), _) | (_, Val::Undefined(r)) => Val::Undefined(r),
        (Val::Defined(x), Val::Defined(y)) => {
            Val::u32((x.component_bits(0) as u32).wrapping_add(y.component_bits(0) as u32))
        }
        (Val::Atomic { atomic, plus }, Val::Defined(y))
        | (Val::Defined(y), Val::Atomic { atomic, plus }) => Val::Atomic {
            atomic,
            plus: plus.wrapping_add(y.component_bits(0) as u32),
        },
        _ => Val::OrderDependent,
    }
}

/// A counter after an atomic add of `amount`: the total does not depend on the order.
fn counter_add(counter: Val, amount: Val) -> Val {
    match (counter, first_word(amount)) {
        (Val::Undefined(r), _) | (_, Val::Undefined(r)) => Val::Undefined(r),
        (Val::Defined(c), Val::Defined(a)) => {
            Val::u32((c.component_bits(0) as u32).wrapping_add(a.component_bits(0) as u32))
        }
        _ => Val::OrderDependent,
    }
}
