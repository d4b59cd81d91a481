//! Structured programs: the AST that the executor runs, the generator produces and `glsl` emits.
//!
//! A program is the body of `main` plus a list of functions without parameters. Its constructs are
//! the structured control flow of GLSL (if/else, counted loops with break and continue, switch,
//! return, calls) and a handful of statements that act on per-invocation registers: subgroup
//! operations, atomic adds and stores. Every operation's result is *recorded* under its `tag`, so a
//! run yields, per invocation, the sequence of (tag, value) pairs that a device must reproduce.
//!
//! Conditions, trip counts and switch selectors depend only on the invocation (its local index,
//! subgroup id or loop counters) or on a register — so the path an invocation takes is its own
//! business, and only the values of subgroup operations depend on which invocations execute them
//! together. That is the design of the Vulkan CTS reconvergence tests (../shared/specs/README.md).

use crate::model::{info, BinOp, Op, Scan};
use std::fmt;

/// Number of per-invocation registers (`r0`..`r7`, each a `uvec4` in GLSL).
pub const REGS: usize = 8;
/// Number of atomic counters per workgroup (`ctr[0]`, `ctr[1]`).
pub const COUNTERS: usize = 2;
/// Largest trip count of a loop.
pub const MAX_TRIPS: u32 = 8;
/// Deepest nesting of constructs accepted.
pub const MAX_DEPTH: usize = 16;
/// Most functions a program may have.
pub const MAX_FUNCTIONS: usize = 8;

/// A register index, `0..REGS`.
pub type Reg = u8;

/// A structured program: `main` and functions `f0`, `f1`, …; function `i` may only call functions
/// `j > i` (GLSL forbids recursion), `main` may call any.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Program {
    /// The body of `main`.
    pub main: Vec<Stmt>,
    /// Functions, called by index.
    pub functions: Vec<Vec<Stmt>>,
}

/// One statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `if (cond) { then_branch } else { else_branch }`
    If {
        /// construct id
        id: u32,
        /// the condition
        cond: Cond,
        /// taken where `cond` holds
        then_branch: Vec<Stmt>,
        /// taken elsewhere
        else_branch: Vec<Stmt>,
    },
    /// `for (uint i = 0; i < trips; i++) { body }` — continue target: the increment.
    Loop {
        /// construct id (also names the counter `i<id>`)
        id: u32,
        /// trip count
        trips: Trips,
        /// the body
        body: Vec<Stmt>,
    },
    /// `switch (selector) { case …: { body } break; … default: { body } break; }` (no fall-through).
    Switch {
        /// construct id
        id: u32,
        /// the selector
        selector: Selector,
        /// the cases, each with one or more labels
        cases: Vec<Case>,
        /// the default case
        default: Vec<Stmt>,
    },
    /// Leave the innermost loop (not allowed where the innermost breakable construct is a switch:
    /// GLSL's `break` would leave the switch instead).
    Break,
    /// Go to the continue target of the innermost loop.
    Continue,
    /// Return from the current function (from `main`: the invocation is done).
    Return,
    /// Call function `function`.
    Call {
        /// construct id
        id: u32,
        /// index into [`Program::functions`]
        function: u32,
    },
    /// A subgroup operation; its result is recorded under `tag` and, with `dst`, kept in a register.
    Op {
        /// record tag
        tag: u32,
        /// the operation
        op: SgOp,
        /// register receiving the result
        dst: Option<Reg>,
    },
    /// `atomicAdd(ctr[counter], value)`; the returned value is recorded under `tag`.
    Atomic {
        /// record tag
        tag: u32,
        /// counter index, `0..COUNTERS`
        counter: u8,
        /// the amount added
        value: Operand,
        /// register receiving the returned value
        dst: Option<Reg>,
    },
    /// `r[dst] = value`
    Set {
        /// destination register
        dst: Reg,
        /// the value
        value: Operand,
    },
    /// Record `value` under `tag` (a write to memory, e.g. `b.data[base + offset]`'s index).
    Store {
        /// record tag
        tag: u32,
        /// the value recorded
        value: Operand,
    },
}

/// A case of a switch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    /// selector values that take this case
    pub labels: Vec<u32>,
    /// the case body
    pub body: Vec<Stmt>,
}

/// A branch condition (also the predicate of `subgroupBallot` and `subgroupAny`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// `true`
    True,
    /// bit `gl_LocalInvocationIndex % 128` of a 128-bit mask (varies per invocation)
    Mask(u128),
    /// bit `gl_SubgroupID % 32` of a mask (the same in every lane of a subgroup)
    Subgroups(u32),
    /// bit `i % 32` of a mask, `i` the counter of the enclosing loop `outer` levels out from the
    /// innermost (0 = innermost) in the same function (the same in every lane of one iteration)
    LoopCount {
        /// enclosing loop, counted outwards from the innermost
        outer: u8,
        /// the mask
        mask: u32,
    },
    /// register `r.x != 0` (e.g. the result of `subgroupElect()`)
    Reg(Reg),
}

/// A loop's trip count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Trips {
    /// the same for every invocation, `0..=MAX_TRIPS`
    Uniform(u32),
    /// `(gl_LocalInvocationIndex ^ salt) % modulus`, `modulus` in `1..=MAX_TRIPS + 1`
    Varying {
        /// xor salt
        salt: u32,
        /// modulus
        modulus: u32,
    },
}

/// A switch selector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// `(gl_LocalInvocationIndex ^ salt) % modulus`
    Varying {
        /// xor salt
        salt: u32,
        /// modulus, ≥ 1
        modulus: u32,
    },
    /// `gl_SubgroupID % modulus`
    Subgroup {
        /// modulus, ≥ 1
        modulus: u32,
    },
    /// `i % modulus` for the counter `i` of an enclosing loop (see [`Cond::LoopCount`])
    LoopCount {
        /// enclosing loop, counted outwards from the innermost
        outer: u8,
        /// modulus, ≥ 1
        modulus: u32,
    },
}

/// A `uint` operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// a constant
    Const(u32),
    /// `r.x`
    Reg(Reg),
    /// `gl_LocalInvocationIndex`
    Invocation,
    /// `gl_LocalInvocationID.x`
    X,
    /// `gl_LocalInvocationID.y`
    Y,
    /// `gl_SubgroupID`
    SubgroupId,
    /// `gl_SubgroupInvocationID`
    Lane,
    /// `gl_LocalInvocationIndex * mul + add` (wrapping)
    Scaled {
        /// factor
        mul: u32,
        /// addend
        add: u32,
    },
    /// `a.x + b.x` (wrapping)
    Sum(Reg, Reg),
}

/// What a subgroup operation of a program reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    /// nothing (`subgroupElect()`)
    Nothing,
    /// a per-invocation condition (`subgroupBallot(cond)`, `subgroupAny(cond)`)
    Cond(Cond),
    /// a `uint` (`subgroupAdd(value)`, `subgroupBroadcastFirst(value)`)
    Value(Operand),
    /// a `uint` and a constant lane distance (`subgroupShuffleUp(value, delta)`)
    Shifted(Operand, u32),
    /// a ballot held in a register (`subgroupBallotBitCount(r)`) — lane-local
    Ballot(Reg),
}

/// The form of an [`Input`], without its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// [`Input::Nothing`]
    Nothing,
    /// [`Input::Cond`]
    Cond,
    /// [`Input::Value`]
    Value,
    /// [`Input::Shifted`]
    Shifted,
    /// [`Input::Ballot`]
    Ballot,
}

impl Input {
    /// Its form.
    pub fn form(&self) -> Form {
        match self {
            Input::Nothing => Form::Nothing,
            Input::Cond(_) => Form::Cond,
            Input::Value(_) => Form::Value,
            Input::Shifted(..) => Form::Shifted,
            Input::Ballot(_) => Form::Ballot,
        }
    }
}

/// The catalogue operations a program can use, each with the form of input it takes and whether
/// its result depends on which invocations execute it together (its tangle). Everything else about
/// an operation — its GLSL built-in, its result type, its semantics — is the catalogue's
/// ([`crate::model::info`]).
pub const OPS: [(Op, Form, bool); 8] = [
    (Op::Ballot, Form::Cond, true),
    (Op::Elect, Form::Nothing, true),
    (Op::Any, Form::Cond, true),
    (Op::BroadcastFirst, Form::Value, true),
    (Op::Arithmetic(BinOp::Add, Scan::Reduce), Form::Value, true),
    (Op::BallotBitCount(Scan::Reduce), Form::Ballot, false),
    (Op::BallotBitCount(Scan::Exclusive), Form::Ballot, false),
    (Op::ShuffleUp, Form::Shifted, true),
];

/// A subgroup operation of a program: an operation of the catalogue and what it reads.
///
/// ```
/// use lockstep::model::{info, Op};
/// use lockstep::reconverge::{Cond, Input, SgOp};
/// let b = SgOp::ballot(Cond::True);
/// assert_eq!((b.op, b.glsl_name()), (Op::Ballot, "subgroupBallot"));
/// assert_eq!(b.glsl_name(), info(Op::Ballot).glsl);
/// // An operation programs do not use, or one with the wrong input, is rejected.
/// assert!(SgOp::new(Op::Shuffle, Input::Nothing).is_err());
/// assert!(SgOp::new(Op::Elect, Input::Cond(Cond::True)).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SgOp {
    /// the operation
    pub op: Op,
    /// what it reads
    pub input: Input,
}

impl SgOp {
    /// `op` reading `input`, if programs can use `op` with that input ([`OPS`]).
    pub fn new(op: Op, input: Input) -> Result<SgOp, ProgramError> {
        let s = SgOp { op, input };
        s.check()?;
        Ok(s)
    }

    /// `subgroupBallot(cond)` — a `uvec4`.
    pub fn ballot(cond: Cond) -> SgOp {
        SgOp {
            op: Op::Ballot,
            input: Input::Cond(cond),
        }
    }

    /// `subgroupElect()`
    pub fn elect() -> SgOp {
        SgOp {
            op: Op::Elect,
            input: Input::Nothing,
        }
    }

    /// `subgroupAny(cond)`
    pub fn any(cond: Cond) -> SgOp {
        SgOp {
            op: Op::Any,
            input: Input::Cond(cond),
        }
    }

    /// `subgroupBroadcastFirst(value)`
    pub fn broadcast_first(value: Operand) -> SgOp {
        SgOp {
            op: Op::BroadcastFirst,
            input: Input::Value(value),
        }
    }

    /// `subgroupAdd(value)`
    pub fn add(value: Operand) -> SgOp {
        SgOp {
            op: Op::Arithmetic(BinOp::Add, Scan::Reduce),
            input: Input::Value(value),
        }
    }

    /// `subgroupBallotBitCount(r)` — depends on the value and the lane only, not on the tangle.
    pub fn bit_count(r: Reg) -> SgOp {
        SgOp {
            op: Op::BallotBitCount(Scan::Reduce),
            input: Input::Ballot(r),
        }
    }

    /// `subgroupBallotExclusiveBitCount(r)` — depends on the value and the lane only.
    pub fn exclusive_bit_count(r: Reg) -> SgOp {
        SgOp {
            op: Op::BallotBitCount(Scan::Exclusive),
            input: Input::Ballot(r),
        }
    }

    /// `subgroupShuffleUp(value, delta)`
    pub fn shuffle_up(value: Operand, delta: u32) -> SgOp {
        SgOp {
            op: Op::ShuffleUp,
            input: Input::Shifted(value, delta),
        }
    }

    /// The entry of [`OPS`] for this operation and form of input.
    fn entry(&self) -> Option<&'static (Op, Form, bool)> {
        let form = self.input.form();
        OPS.iter().find(|(o, f, _)| *o == self.op && *f == form)
    }

    /// Can programs use this operation with this input?
    pub fn check(&self) -> Result<(), ProgramError> {
        match self.entry() {
            Some(_) => Ok(()),
            None => Err(ProgramError::UnsupportedOp {
                op: info(self.op).name.clone(),
                form: self.input.form(),
            }),
        }
    }

    /// Does the result depend on which invocations execute the operation together (its tangle)?
    pub fn is_tangled(&self) -> bool {
        self.entry().is_none_or(|e| e.2)
    }

    /// The GLSL built-in name (the catalogue's).
    pub fn glsl_name(&self) -> &'static str {
        info(self.op).glsl.as_str()
    }
}

/// Why a program is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// `break` with no enclosing loop in the same function.
    #[error("break outside a loop")]
    BreakOutsideLoop,
    /// `break` whose innermost breakable construct is a switch.
    #[error("break directly inside a switch case (GLSL would leave the switch, not the loop)")]
    BreakInSwitch,
    /// `continue` with no enclosing loop in the same function.
    #[error("continue outside a loop")]
    ContinueOutsideLoop,
    /// A loop counter reference with no such enclosing loop.
    #[error(
        "loop counter {outer} levels out, but only {loops} enclosing loop(s) in this function"
    )]
    NoSuchLoop {
        /// levels out
        outer: u8,
        /// enclosing loops
        loops: usize,
    },
    /// A call that is recursive or names no function.
    #[error("call from {from} to function {to}: functions may only call functions with a higher index (no recursion), of which there are {count}")]
    BadCall {
        /// caller (`main` or `f<i>`)
        from: String,
        /// callee index
        to: u32,
        /// number of functions
        count: usize,
    },
    /// A register index ≥ [`REGS`].
    #[error("register r{0} does not exist (0..{REGS})")]
    BadRegister(u8),
    /// A counter index ≥ [`COUNTERS`].
    #[error("counter {0} does not exist (0..{COUNTERS})")]
    BadCounter(u8),
    /// A trip count above [`MAX_TRIPS`] or a modulus of 0 or too large.
    #[error("{0}")]
    BadCount(String),
    /// Two cases of one switch share a label.
    #[error("switch #{id}: label {label} appears in more than one case")]
    DuplicateLabel {
        /// construct id
        id: u32,
        /// the label
        label: u32,
    },
    /// Nesting deeper than [`MAX_DEPTH`], or more than [`MAX_FUNCTIONS`] functions.
    #[error("program too large: {0}")]
    TooLarge(String),
    /// A subgroup operation programs do not use, or one given the wrong form of input ([`OPS`]).
    #[error("subgroup operation {op} with input {form:?} is not one programs can use")]
    UnsupportedOp {
        /// the catalogue name
        op: String,
        /// the form of input given
        form: Form,
    },
    /// Two constructs or records share an id.
    #[error("id {0} is used twice (construct ids and record tags must be unique)")]
    DuplicateId(u32),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Breakable {
    Loop,
    Switch,
}

impl Program {
    /// Checks every rule of [`ProgramError`].
    pub fn validate(&self) -> Result<(), ProgramError> {
        if self.functions.len() > MAX_FUNCTIONS {
            return Err(ProgramError::TooLarge(format!(
                "{} functions (at most {MAX_FUNCTIONS})",
                self.functions.len()
            )));
        }
        let mut ids = std::collections::HashSet::new();
        let mut v = Validator {
            functions: self.functions.len(),
            ids: &mut ids,
        };
        v.block(&self.main, None, &mut Vec::new(), 0)?;
        for (i, f) in self.functions.iter().enumerate() {
            v.block(f, Some(i), &mut Vec::new(), 0)?;
        }
        Ok(())
    }

    /// Repairs a program into a valid one (used by the generator and the fuzzer): drops `break` and
    /// `continue` that have no loop to go to, bad calls and statements after an unconditional
    /// `break`/`continue`/`return`; retargets loop-counter conditions to an existing loop (or turns
    /// them into invocation masks); clamps registers, counters, trip counts and moduli; removes
    /// duplicate labels, limits depth and number of functions; finally numbers every construct and
    /// record tag uniquely in pre-order (from 1).
    pub fn normalized(mut self) -> Program {
        self.functions.truncate(MAX_FUNCTIONS);
        let nf = self.functions.len();
        let mut main = std::mem::take(&mut self.main);
        repair_block(&mut main, None, nf, &mut Vec::new(), 0);
        self.main = main;
        for i in 0..nf {
            let mut f = std::mem::take(&mut self.functions[i]);
            repair_block(&mut f, Some(i), nf, &mut Vec::new(), 0);
            self.functions[i] = f;
        }
        self.number();
        self
    }

    /// Numbers every construct id and record tag uniquely, in pre-order from 1 (main, then the
    /// functions in order).
    pub fn number(&mut self) {
        let mut next = 1u32;
        number_block(&mut self.main, &mut next);
        for f in &mut self.functions {
            number_block(f, &mut next);
        }
    }

    /// An upper bound of the number of records one invocation can write.
    pub fn max_records(&self) -> u64 {
        let mut fb = vec![0u64; self.functions.len()];
        for i in (0..self.functions.len()).rev() {
            fb[i] = block_bound(&self.functions[i], &fb);
        }
        block_bound(&self.main, &fb)
    }

    /// Number of statements (all nesting levels), a size measure.
    pub fn statements(&self) -> usize {
        fn count(b: &[Stmt]) -> usize {
            b.iter()
                .map(|s| {
                    1 + match s {
                        Stmt::If {
                            then_branch,
                            else_branch,
                            ..
                        } => count(then_branch) + count(else_branch),
                        Stmt::Loop { body, .. } => count(body),
                        Stmt::Switch { cases, default, .. } => {
                            cases.iter().map(|c| count(&c.body)).sum::<usize>() + count(default)
                        }
                        _ => 0,
                    }
                })
                .sum()
        }
        count(&self.main) + self.functions.iter().map(|f| count(f)).sum::<usize>()
    }

    /// Every record tag with the kind of statement that writes it (for reports).
    pub fn tags(&self) -> Vec<(u32, String)> {
        fn walk(b: &[Stmt], out: &mut Vec<(u32, String)>) {
            for s in b {
                match s {
                    Stmt::If {
                        then_branch,
                        else_branch,
                        ..
                    } => {
                        walk(then_branch, out);
                        walk(else_branch, out);
                    }
                    Stmt::Loop { body, .. } => walk(body, out),
                    Stmt::Switch { cases, default, .. } => {
                        cases.iter().for_each(|c| walk(&c.body, out));
                        walk(default, out);
                    }
                    Stmt::Op { tag, op, .. } => out.push((*tag, op.glsl_name().to_string())),
                    Stmt::Atomic { tag, .. } => out.push((*tag, "atomicAdd".into())),
                    Stmt::Store { tag, .. } => out.push((*tag, "store".into())),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.main, &mut out);
        self.functions.iter().for_each(|f| walk(f, &mut out));
        out
    }
}

struct Validator<'a> {
    functions: usize,
    ids: &'a mut std::collections::HashSet<u32>,
}

impl Validator<'_> {
    fn id(&mut self, id: u32) -> Result<(), ProgramError> {
        if !self.ids.insert(id) {
            return Err(ProgramError::DuplicateId(id));
        }
        Ok(())
    }

    fn block(
        &mut self,
        b: &[Stmt],
        func: Option<usize>,
        stack: &mut Vec<Breakable>,
        depth: usize,
    ) -> Result<(), ProgramError> {
        if depth > MAX_DEPTH {
            return Err(ProgramError::TooLarge(format!(
                "nesting deeper than {MAX_DEPTH}"
            )));
        }
        let loops = stack.iter().filter(|b| **b == Breakable::Loop).count();
        for s in b {
            match s {
                Stmt::If {
                    id,
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    self.id(*id)?;
                    check_cond(cond, loops)?;
                    self.block(then_branch, func, stack, depth + 1)?;
                    self.block(else_branch, func, stack, depth + 1)?;
                }
                Stmt::Loop { id, trips, body } => {
                    self.id(*id)?;
                    match *trips {
                        Trips::Uniform(n) if n > MAX_TRIPS => {
                            return Err(ProgramError::BadCount(format!(
                                "loop #{id}: {n} trips (at most {MAX_TRIPS})"
                            )))
                        }
                        Trips::Varying { modulus, .. }
                            if modulus == 0 || modulus > MAX_TRIPS + 1 =>
                        {
                            return Err(ProgramError::BadCount(format!(
                                "loop #{id}: trip modulus {modulus} (1..={})",
                                MAX_TRIPS + 1
                            )))
                        }
                        _ => {}
                    }
                    stack.push(Breakable::Loop);
                    let r = self.block(body, func, stack, depth + 1);
                    stack.pop();
                    r?;
                }
                Stmt::Switch {
                    id,
                    selector,
                    cases,
                    default,
                } => {
                    self.id(*id)?;
                    let (modulus, outer) = match *selector {
                        Selector::Varying { modulus, .. } | Selector::Subgroup { modulus } => {
                            (modulus, None)
                        }
                        Selector::LoopCount { outer, modulus } => (modulus, Some(outer)),
                    };
                    if modulus == 0 {
                        return Err(ProgramError::BadCount(format!(
                            "switch #{id}: selector modulus 0"
                        )));
                    }
                    if let Some(o) = outer
                        && o as usize >= loops
                    {
                        return Err(ProgramError::NoSuchLoop { outer: o, loops });
                    }
                    let mut seen = std::collections::HashSet::new();
                    stack.push(Breakable::Switch);
                    for c in cases {
                        for &l in &c.labels {
                            if !seen.insert(l) {
                                stack.pop();
                                return Err(ProgramError::DuplicateLabel { id: *id, label: l });
                            }
                        }
                        if let Err(e) = self.block(&c.body, func, stack, depth + 1) {
                            stack.pop();
                            return Err(e);
                        }
                    }
                    let r = self.block(default, func, stack, depth + 1);
                    stack.pop();
                    r?;
                }
                Stmt::Break => match stack.last() {
                    None => return Err(ProgramError::BreakOutsideLoop),
                    Some(Breakable::Switch) => return Err(ProgramError::BreakInSwitch),
                    Some(Breakable::Loop) => {}
                },
                Stmt::Continue => {
                    if loops == 0 {
                        return Err(ProgramError::ContinueOutsideLoop);
                    }
                }
                Stmt::Return => {}
                Stmt::Call { id, function } => {
                    self.id(*id)?;
                    let ok = (*function as usize) < self.functions
                        && func.is_none_or(|f| (*function as usize) > f);
                    if !ok {
                        return Err(ProgramError::BadCall {
                            from: func.map_or("main".to_string(), |f| format!("f{f}")),
                            to: *function,
                            count: self.functions,
                        });
                    }
                }
                Stmt::Op { tag, op, dst } => {
                    self.id(*tag)?;
                    check_dst(*dst)?;
                    op.check()?;
                    match &op.input {
                        Input::Cond(c) => check_cond(c, loops)?,
                        Input::Value(o) | Input::Shifted(o, _) => check_operand(o)?,
                        Input::Ballot(r) => check_reg(*r)?,
                        Input::Nothing => {}
                    }
                }
                Stmt::Atomic {
                    tag,
                    counter,
                    value,
                    dst,
                } => {
                    self.id(*tag)?;
                    if *counter as usize >= COUNTERS {
                        return Err(ProgramError::BadCounter(*counter));
                    }
                    check_operand(value)?;
                    check_dst(*dst)?;
                }
                Stmt::Set { dst, value } => {
                    check_reg(*dst)?;
                    check_operand(value)?;
                }
                Stmt::Store { tag, value } => {
                    self.id(*tag)?;
                    check_operand(value)?;
                }
            }
        }
        Ok(())
    }
}

fn check_reg(r: Reg) -> Result<(), ProgramError> {
    if r as usize >= REGS {
        return Err(ProgramError::BadRegister(r));
    }
    Ok(())
}

fn check_dst(r: Option<Reg>) -> Result<(), ProgramError> {
    r.map_or(Ok(()), check_reg)
}

fn check_operand(o: &Operand) -> Result<(), ProgramError> {
    match *o {
        Operand::Reg(r) => check_reg(r),
        Operand::Sum(a, b) => check_reg(a).and(check_reg(b)),
        _ => Ok(()),
    }
}

fn check_cond(c: &Cond, loops: usize) -> Result<(), ProgramError> {
    match *c {
        Cond::LoopCount { outer, .. } if outer as usize >= loops => {
            Err(ProgramError::NoSuchLoop { outer, loops })
        }
        Cond::Reg(r) => check_reg(r),
        _ => Ok(()),
    }
}

fn clamp_reg(r: &mut Reg) {
    *r %= REGS as u8;
}

fn repair_operand(o: &mut Operand) {
    match o {
        Operand::Reg(r) => clamp_reg(r),
        Operand::Sum(a, b) => {
            clamp_reg(a);
            clamp_reg(b);
        }
        _ => {}
    }
}

fn repair_cond(c: &mut Cond, loops: usize) {
    match c {
        Cond::LoopCount { outer, mask } => {
            if loops == 0 {
                *c = Cond::Mask(*mask as u128 | (*mask as u128) << 64);
            } else {
                *outer = (*outer as usize % loops) as u8;
            }
        }
        Cond::Reg(r) => clamp_reg(r),
        _ => {}
    }
}

fn repair_block(
    b: &mut Vec<Stmt>,
    func: Option<usize>,
    nf: usize,
    stack: &mut Vec<Breakable>,
    depth: usize,
) {
    if depth >= MAX_DEPTH {
        b.clear();
        return;
    }
    let loops = stack.iter().filter(|b| **b == Breakable::Loop).count();
    let mut out = Vec::with_capacity(b.len());
    for mut s in b.drain(..) {
        let keep = match &mut s {
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                repair_cond(cond, loops);
                repair_block(then_branch, func, nf, stack, depth + 1);
                repair_block(else_branch, func, nf, stack, depth + 1);
                true
            }
            Stmt::Loop { trips, body, .. } => {
                match trips {
                    Trips::Uniform(n) => *n %= MAX_TRIPS + 1,
                    Trips::Varying { modulus, .. } => *modulus = *modulus % (MAX_TRIPS + 1) + 1,
                }
                stack.push(Breakable::Loop);
                repair_block(body, func, nf, stack, depth + 1);
                stack.pop();
                true
            }
            Stmt::Switch {
                selector,
                cases,
                default,
                ..
            } => {
                match selector {
                    Selector::Varying { modulus, .. } | Selector::Subgroup { modulus } => {
                        *modulus = (*modulus).max(1)
                    }
                    Selector::LoopCount { outer, modulus } => {
                        *modulus = (*modulus).max(1);
                        if loops == 0 {
                            *selector = Selector::Varying {
                                salt: *outer as u32,
                                modulus: *modulus,
                            };
                        } else {
                            *outer = (*outer as usize % loops) as u8;
                        }
                    }
                }
                let mut seen = std::collections::HashSet::new();
                stack.push(Breakable::Switch);
                for c in cases.iter_mut() {
                    c.labels.retain(|l| seen.insert(*l));
                    repair_block(&mut c.body, func, nf, stack, depth + 1);
                }
                cases.retain(|c| !c.labels.is_empty());
                repair_block(default, func, nf, stack, depth + 1);
                stack.pop();
                true
            }
            Stmt::Break => stack.last() == Some(&Breakable::Loop),
            Stmt::Continue => loops > 0,
            Stmt::Return => true,
            Stmt::Call { function, .. } => {
                let lo = func.map_or(0, |f| f + 1);
                if lo >= nf {
                    false
                } else {
                    *function = (lo + *function as usize % (nf - lo)) as u32;
                    true
                }
            }
            Stmt::Op { op, dst, .. } => {
                if let Some(d) = dst {
                    clamp_reg(d);
                }
                match &mut op.input {
                    Input::Cond(c) => repair_cond(c, loops),
                    Input::Value(o) | Input::Shifted(o, _) => repair_operand(o),
                    Input::Ballot(r) => clamp_reg(r),
                    Input::Nothing => {}
                }
                // An operation programs cannot use is dropped.
                op.check().is_ok()
            }
            Stmt::Atomic {
                counter,
                value,
                dst,
                ..
            } => {
                *counter %= COUNTERS as u8;
                repair_operand(value);
                if let Some(d) = dst {
                    clamp_reg(d);
                }
                true
            }
            Stmt::Set { dst, value } => {
                clamp_reg(dst);
                repair_operand(value);
                true
            }
            Stmt::Store { value, .. } => {
                repair_operand(value);
                true
            }
        };
        if keep {
            let terminal = matches!(s, Stmt::Break | Stmt::Continue | Stmt::Return);
            out.push(s);
            if terminal {
                break;
            }
        }
    }
    *b = out;
}

fn take(next: &mut u32) -> u32 {
    let v = *next;
    *next += 1;
    v
}

fn number_block(b: &mut [Stmt], next: &mut u32) {
    for s in b.iter_mut() {
        match s {
            Stmt::If {
                id,
                then_branch,
                else_branch,
                ..
            } => {
                *id = take(next);
                number_block(then_branch, next);
                number_block(else_branch, next);
            }
            Stmt::Loop { id, body, .. } => {
                *id = take(next);
                number_block(body, next);
            }
            Stmt::Switch {
                id, cases, default, ..
            } => {
                *id = take(next);
                for c in cases.iter_mut() {
                    number_block(&mut c.body, next);
                }
                number_block(default, next);
            }
            Stmt::Call { id, .. } => *id = take(next),
            Stmt::Op { tag, .. } | Stmt::Atomic { tag, .. } | Stmt::Store { tag, .. } => {
                *tag = take(next)
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Set { .. } => {}
        }
    }
}

fn block_bound(b: &[Stmt], fb: &[u64]) -> u64 {
    b.iter()
        .map(|s| match s {
            Stmt::If {
                then_branch,
                else_branch,
                ..
            } => block_bound(then_branch, fb).max(block_bound(else_branch, fb)),
            Stmt::Loop { trips, body, .. } => {
                let t = match *trips {
                    Trips::Uniform(n) => n as u64,
                    Trips::Varying { modulus, .. } => modulus.saturating_sub(1) as u64,
                };
                t.saturating_mul(block_bound(body, fb))
            }
            Stmt::Switch { cases, default, .. } => cases
                .iter()
                .map(|c| block_bound(&c.body, fb))
                .max()
                .unwrap_or(0)
                .max(block_bound(default, fb)),
            Stmt::Call { function, .. } => fb.get(*function as usize).copied().unwrap_or(0),
            Stmt::Op { .. } | Stmt::Atomic { .. } | Stmt::Store { .. } => 1,
            _ => 0,
        })
        .fold(0u64, |a, b| a.saturating_add(b))
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::True => f.write_str("true"),
            Cond::Mask(m) => write!(f, "invocation in 0x{m:x}"),
            Cond::Subgroups(m) => write!(f, "subgroup in 0x{m:x}"),
            Cond::LoopCount { outer, mask } => write!(f, "loop[{outer}] count in 0x{mask:x}"),
            Cond::Reg(r) => write!(f, "r{r}"),
        }
    }
}
