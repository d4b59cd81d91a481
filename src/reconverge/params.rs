//! A program's *parameters*: the numbers that choose which invocations do what — invocation and
//! subgroup masks, xor salts, the factors and constants of operands — as opposed to its *shape*
//! (the statements, their nesting, registers, trip counts, moduli, case labels and shuffle
//! distances).
//!
//! Programs with the same shape can share one compiled shader: the shader reads each parameter from
//! a buffer, one slice per workgroup, so one pipeline runs many programs (issue 12 §4: compiling is
//! what a GPU campaign waits for). Every program's control flow is still compiled as itself — the
//! same nested ifs, loops, switches and calls — only the values of its conditions and operands come
//! from memory instead of being constants in the code. [`Program::params_mut`] is the one place
//! that says what a parameter is; the GLSL emitter, the generator's variants and the tests use it.

use crate::reconverge::program::{Cond, Input, Operand, Program, Selector, Stmt, Trips};

/// One parameter of a program, to read or replace.
#[derive(Debug)]
pub enum Param<'a> {
    /// a [`Cond::Mask`]: bit `gl_LocalInvocationIndex % 128` (four words, lowest first)
    Mask(&'a mut u128),
    /// a [`Cond::Subgroups`] or [`Cond::LoopCount`] mask
    Bits(&'a mut u32),
    /// the xor salt of a [`Trips::Varying`] or [`Selector::Varying`]
    Salt(&'a mut u32),
    /// the factor of an [`Operand::Scaled`]
    Mul(&'a mut u32),
    /// the addend of an [`Operand::Scaled`]
    Add(&'a mut u32),
    /// an [`Operand::Const`]
    Const(&'a mut u32),
}

impl Param<'_> {
    /// Words the parameter takes in a parameter buffer.
    pub fn words(&self) -> usize {
        match self {
            Param::Mask(_) => 4,
            _ => 1,
        }
    }
}

impl Program {
    /// Visits every parameter, in one fixed order (main, then the functions in order; statements in
    /// pre-order), giving each to `f` to read or replace.
    pub fn params_mut(&mut self, f: &mut dyn FnMut(Param<'_>)) {
        block(&mut self.main, f);
        for b in &mut self.functions {
            block(b, f);
        }
    }

    /// The parameters as buffer words, in [`Program::params_mut`]'s order (a mask's four words
    /// lowest first).
    ///
    /// ```
    /// use lockstep::reconverge::{Cond, Program, SgOp, Stmt};
    /// let p = Program { main: vec![Stmt::Op { tag: 1, op: SgOp::ballot(Cond::Mask(5 | 7 << 64)), dst: None }],
    ///                   functions: vec![] };
    /// assert_eq!(p.param_words(), vec![5, 0, 7, 0]);
    /// ```
    pub fn param_words(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.clone().params_mut(&mut |p| match p {
            Param::Mask(m) => out.extend((0..4).map(|i| (*m >> (32 * i)) as u32)),
            Param::Bits(v) | Param::Salt(v) | Param::Mul(v) | Param::Add(v) | Param::Const(v) => {
                out.push(*v)
            }
        });
        out
    }

    /// The program with every parameter zeroed: two programs can share a compiled shader exactly
    /// when their shapes are equal.
    ///
    /// ```
    /// use lockstep::reconverge::{Cond, Program, Stmt};
    /// let with = |m| Program { main: vec![Stmt::If { id: 1, cond: Cond::Mask(m), then_branch: vec![],
    ///     else_branch: vec![] }], functions: vec![] };
    /// assert_eq!(with(3).shape(), with(u128::MAX).shape());
    /// assert_ne!(with(3), with(u128::MAX));
    /// ```
    pub fn shape(&self) -> Program {
        let mut p = self.clone();
        p.params_mut(&mut |p| match p {
            Param::Mask(m) => *m = 0,
            Param::Bits(v) | Param::Salt(v) | Param::Mul(v) | Param::Add(v) | Param::Const(v) => {
                *v = 0
            }
        });
        p
    }

    /// The program with every parameter replaced by its first word's index in
    /// [`Program::param_words`] — what the GLSL emitter turns into buffer reads — and the number of
    /// words.
    pub fn param_slots(&self) -> (Program, usize) {
        let mut p = self.clone();
        let mut next = 0usize;
        p.params_mut(&mut |p| {
            let n = p.words();
            match p {
                Param::Mask(m) => *m = next as u128,
                Param::Bits(v)
                | Param::Salt(v)
                | Param::Mul(v)
                | Param::Add(v)
                | Param::Const(v) => *v = next as u32,
            }
            next += n;
        });
        (p, next)
    }
}

fn block(b: &mut [Stmt], f: &mut dyn FnMut(Param<'_>)) {
    for s in b {
        match s {
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                cond_params(cond, f);
                block(then_branch, f);
                block(else_branch, f);
            }
            Stmt::Loop { trips, body, .. } => {
                if let Trips::Varying { salt, .. } = trips {
                    f(Param::Salt(salt));
                }
                block(body, f);
            }
            Stmt::Switch {
                selector,
                cases,
                default,
                ..
            } => {
                if let Selector::Varying { salt, .. } = selector {
                    f(Param::Salt(salt));
                }
                for c in cases {
                    block(&mut c.body, f);
                }
                block(default, f);
            }
            Stmt::Op { op, .. } => match &mut op.input {
                Input::Cond(c) => cond_params(c, f),
                Input::Value(o) | Input::Shifted(o, _) => operand_params(o, f),
                Input::Nothing | Input::Ballot(_) => {}
            },
            Stmt::Atomic { value, .. } | Stmt::Set { value, .. } | Stmt::Store { value, .. } => {
                operand_params(value, f)
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Call { .. } => {}
        }
    }
}

fn cond_params(c: &mut Cond, f: &mut dyn FnMut(Param<'_>)) {
    match c {
        Cond::Mask(m) => f(Param::Mask(m)),
        Cond::Subgroups(m) | Cond::LoopCount { mask: m, .. } => f(Param::Bits(m)),
        Cond::True | Cond::Reg(_) => {}
    }
}

fn operand_params(o: &mut Operand, f: &mut dyn FnMut(Param<'_>)) {
    match o {
        Operand::Const(c) => f(Param::Const(c)),
        Operand::Scaled { mul, add } => {
            f(Param::Mul(mul));
            f(Param::Add(add));
        }
        Operand::Reg(_)
        | Operand::Invocation
        | Operand::X
        | Operand::Y
        | Operand::SubgroupId
        | Operand::Lane
        | Operand::Sum(..) => {}
    }
}
