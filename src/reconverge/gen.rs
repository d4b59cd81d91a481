//! A proptest strategy of random structured programs, in the manner of the Vulkan CTS
//! reconvergence tests: nested if/else, counted loops with break and continue, switch, return and
//! calls, with subgroup operations (ballot, elect, broadcast_first, add) placed in them, each with
//! a unique tag. Branches on an elect result (`if (subgroupElect())`) are generated too.
//!
//! Every generated program is valid ([`Program::normalized`]) and writes at most
//! [`GenConfig::max_records`] records per invocation, so it fits the device's record buffer.

use crate::reconverge::compare::Comparison;
use crate::reconverge::params::Param;
use crate::reconverge::program::{Case, Cond, Operand, Program, Reg, Selector, SgOp, Stmt, Trips};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, ValueTree};
use proptest::test_runner::TestRunner;

/// Knobs of the generator.
#[derive(Clone, Copy, Debug)]
pub struct GenConfig {
    /// nesting depth of constructs
    pub depth: u32,
    /// statements per block, at most
    pub block: usize,
    /// functions, at most
    pub functions: usize,
    /// records per invocation, at most (programs are trimmed to fit)
    pub max_records: u64,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            depth: 4,
            block: 4,
            functions: 2,
            max_records: 64,
        }
    }
}

/// Registers the generator uses (few, so that conditions often read a register an op wrote).
const GEN_REGS: Reg = 4;

/// Weights of random, sparse and dense invocation masks.
const MASK_WEIGHTS: [u32; 3] = [4, 1, 1];
/// Factors of [`Operand::Scaled`].
const MULS: std::ops::Range<u32> = 1..1000;
/// Addends of [`Operand::Scaled`] are below this.
const ADDS: u32 = 1000;
/// [`Operand::Const`] values.
const CONSTS: std::ops::Range<u32> = 0..100;

/// A sparse mask (so that some subgroups are all-out).
fn sparse() -> impl Strategy<Value = u128> {
    (any::<u128>(), any::<u128>()).prop_map(|(a, b)| a & b)
}

/// A dense mask (so that some subgroups are all-in).
fn dense() -> impl Strategy<Value = u128> {
    (any::<u128>(), any::<u128>()).prop_map(|(a, b)| a | b)
}

fn cond() -> BoxedStrategy<Cond> {
    prop_oneof![
        1 => Just(Cond::True),
        MASK_WEIGHTS[0] => any::<u128>().prop_map(Cond::Mask),
        MASK_WEIGHTS[1] => sparse().prop_map(Cond::Mask),
        MASK_WEIGHTS[2] => dense().prop_map(Cond::Mask),
        2 => any::<u32>().prop_map(Cond::Subgroups),
        2 => (0u8..2, any::<u32>()).prop_map(|(outer, mask)| Cond::LoopCount { outer, mask }),
        2 => (0..GEN_REGS).prop_map(Cond::Reg),
    ]
    .boxed()
}

fn operand() -> BoxedStrategy<Operand> {
    prop_oneof![
        2 => (MULS, any::<u32>()).prop_map(|(mul, add)| Operand::Scaled { mul, add: add % ADDS }),
        1 => Just(Operand::Invocation),
        1 => Just(Operand::Lane),
        1 => Just(Operand::SubgroupId),
        1 => (0..GEN_REGS).prop_map(Operand::Reg),
        1 => CONSTS.prop_map(Operand::Const),
    ]
    .boxed()
}

/// One value of `s`.
fn draw<S: Strategy>(s: S, runner: &mut TestRunner) -> Result<S::Value, String> {
    s.new_tree(runner)
        .map(|t| t.current())
        .map_err(|e| e.to_string())
}

/// Another program of `p`'s shape ([`Program::shape`]): every parameter ([`Param`]) drawn afresh
/// from the generator's own distribution for it — masks random, sparse or dense as often as the
/// generator makes them, factors, addends and constants from the same ranges. The result is valid
/// and writes no more records than `p` (neither depends on a parameter).
///
/// ```
/// use lockstep::reconverge::r#gen::{programs, variant, GenConfig};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let mut runner = TestRunner::deterministic();
/// let p = programs(GenConfig::default()).new_tree(&mut runner).unwrap().current();
/// let v = variant(&p, &mut runner).unwrap();
/// assert_eq!(v.shape(), p.shape());
/// assert!(v.validate().is_ok() && v.max_records() == p.max_records());
/// ```
pub fn variant(p: &Program, runner: &mut TestRunner) -> Result<Program, String> {
    let mut v = p.clone();
    let mut err = None;
    v.params_mut(&mut |param| {
        let r = match param {
            Param::Mask(m) => draw(
                prop_oneof![
                    MASK_WEIGHTS[0] => any::<u128>(),
                    MASK_WEIGHTS[1] => sparse(),
                    MASK_WEIGHTS[2] => dense(),
                ],
                runner,
            )
            .map(|x| *m = x),
            Param::Bits(x) | Param::Salt(x) => draw(any::<u32>(), runner).map(|y| *x = y),
            Param::Mul(x) => draw(MULS, runner).map(|y| *x = y),
            Param::Add(x) => draw(any::<u32>(), runner).map(|y| *x = y % ADDS),
            Param::Const(x) => draw(CONSTS, runner).map(|y| *x = y),
        };
        if let Err(e) = r {
            err.get_or_insert(e);
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(v),
    }
}

fn op() -> BoxedStrategy<Stmt> {
    let sgop = prop_oneof![
        4 => cond().prop_map(SgOp::ballot),
        3 => Just(SgOp::elect()),
        2 => operand().prop_map(SgOp::broadcast_first),
        2 => operand().prop_map(SgOp::add),
    ];
    (sgop, proptest::option::weighted(0.5, 0..GEN_REGS))
        .prop_map(|(op, dst)| Stmt::Op { tag: 0, op, dst })
        .boxed()
}

fn trips() -> BoxedStrategy<Trips> {
    prop_oneof![
        (0u32..=3).prop_map(Trips::Uniform),
        (any::<u32>(), 1u32..=4).prop_map(|(salt, modulus)| Trips::Varying { salt, modulus }),
    ]
    .boxed()
}

fn selector() -> BoxedStrategy<Selector> {
    prop_oneof![
        2 => (any::<u32>(), 1u32..=4).prop_map(|(salt, modulus)| Selector::Varying { salt, modulus }),
        1 => (1u32..=4).prop_map(|modulus| Selector::Subgroup { modulus }),
        1 => (0u8..2, 1u32..=4).prop_map(|(outer, modulus)| Selector::LoopCount { outer, modulus }),
    ]
    .boxed()
}

/// One statement, nested up to `cfg.depth`.
pub fn stmt(cfg: GenConfig) -> BoxedStrategy<Stmt> {
    let b = cfg.block.max(1);
    let leaf = prop_oneof![
        8 => op(),
        1 => Just(Stmt::Break),
        1 => Just(Stmt::Continue),
        1 => Just(Stmt::Return),
        1 => any::<u32>().prop_map(|function| Stmt::Call { id: 0, function }),
        1 => ((0..GEN_REGS), operand()).prop_map(|(dst, value)| Stmt::Set { dst, value }),
    ];
    leaf.prop_recursive(cfg.depth, 48, b as u32, move |inner| {
        let block = |lo: usize, hi: usize| proptest::collection::vec(inner.clone(), lo..=hi);
        prop_oneof![
            4 => (cond(), block(0, b), block(0, b / 2)).prop_map(|(cond, t, e)| Stmt::If {
                id: 0,
                cond,
                then_branch: t,
                else_branch: e,
            }),
            // `if (subgroupElect()) { … }`: an elect into a register, then a branch on it. As two
            // statements it needs a carrier: a one-trip loop would change the structure, so the
            // elect goes first in the then-branch of an always-true if.
            1 => (0..GEN_REGS, block(0, b), block(0, b / 2)).prop_map(|(r, t, e)| Stmt::If {
                id: 0,
                cond: Cond::True,
                then_branch: vec![
                    Stmt::Op { tag: 0, op: SgOp::elect(), dst: Some(r) },
                    Stmt::If { id: 0, cond: Cond::Reg(r), then_branch: t, else_branch: e },
                ],
                else_branch: vec![],
            }),
            3 => (trips(), block(1, b)).prop_map(|(trips, body)| Stmt::Loop { id: 0, trips, body }),
            1 => (
                selector(),
                proptest::collection::vec(
                    (proptest::collection::vec(0u32..4, 1..=2), block(0, b)),
                    1..=3
                ),
                block(0, b)
            )
                .prop_map(|(selector, cases, default)| Stmt::Switch {
                    id: 0,
                    selector,
                    cases: cases
                        .into_iter()
                        .map(|(labels, body)| Case { labels, body })
                        .collect(),
                    default,
                }),
        ]
    })
    .boxed()
}

/// Random valid programs that write at most `cfg.max_records` records per invocation.
///
/// ```
/// use lockstep::reconverge::r#gen::{programs, GenConfig};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let mut runner = TestRunner::deterministic();
/// let p = programs(GenConfig::default()).new_tree(&mut runner).unwrap().current();
/// assert!(p.validate().is_ok());
/// assert!(p.max_records() <= 64);
/// ```
pub fn programs(cfg: GenConfig) -> BoxedStrategy<Program> {
    let s = stmt(cfg);
    (
        proptest::collection::vec(s.clone(), 1..=cfg.block + 2),
        proptest::collection::vec(
            proptest::collection::vec(s, 0..=cfg.block),
            0..=cfg.functions,
        ),
    )
        .prop_map(move |(main, functions)| fit(Program { main, functions }.normalized(), cfg))
        .boxed()
}

/// Trims statements from the end of `main` until the record bound fits.
fn fit(mut p: Program, cfg: GenConfig) -> Program {
    while p.max_records() > cfg.max_records && !p.main.is_empty() {
        p.main.pop();
    }
    p
}

/// A failing program after shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// the smallest program found that still fails
    pub program: Program,
    /// its comparison
    pub comparison: Comparison,
    /// candidates tried
    pub steps: u32,
}

/// Shrinks a failing program: proptest's simplify/complicate walk over its value tree, keeping
/// each simpler candidate that `check` still finds failing (a comparison that is not `ok()`).
/// Stops after `max_steps` candidates or at `deadline`.
///
/// ```
/// use lockstep::reconverge::compare::{Comparison, Mismatch};
/// use lockstep::reconverge::r#gen::{programs, shrink, GenConfig};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// // A stand-in for a device that gets every elect in `main` wrong.
/// let check = |p: &lockstep::reconverge::Program| -> Result<Comparison, ()> {
///     let mut c = Comparison::default();
///     if format!("{:?}", p.main).contains("Elect") { c.mismatch_count = 1; }
///     Ok(c)
/// };
/// let mut runner = TestRunner::deterministic();
/// let s = programs(GenConfig::default());
/// let mut tree = loop {
///     let t = s.new_tree(&mut runner).unwrap();
///     if !check(&t.current()).unwrap().ok() { break t; }
/// };
/// let (before, first) = (tree.current(), check(&tree.current()).unwrap());
/// let small = shrink(&mut tree, first, 1000, None, check).unwrap();
/// assert!(!check(&small.program).unwrap().ok(), "still failing");
/// assert!(small.program.statements() < before.statements());
/// assert!(small.program.main.len() == 1, "{:?}", small.program.main);
/// ```
pub fn shrink<E>(
    tree: &mut dyn ValueTree<Value = Program>,
    first: Comparison,
    max_steps: u32,
    deadline: Option<std::time::Instant>,
    mut check: impl FnMut(&Program) -> Result<Comparison, E>,
) -> Result<Shrunk, E> {
    let mut best = Shrunk {
        program: tree.current(),
        comparison: first,
        steps: 0,
    };
    let mut steps = 0;
    if !tree.simplify() {
        return Ok(best);
    }
    loop {
        if steps >= max_steps || deadline.is_some_and(|d| std::time::Instant::now() > d) {
            break;
        }
        steps += 1;
        let candidate = tree.current();
        let c = check(&candidate)?;
        let more = if !c.ok() {
            best = Shrunk {
                program: candidate,
                comparison: c,
                steps,
            };
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !more {
            break;
        }
    }
    best.steps = steps;
    Ok(best)
}
