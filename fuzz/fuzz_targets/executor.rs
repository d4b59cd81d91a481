//! Fuzz target 1: arbitrary structured programs through the reconvergence executor.
//!
//! The input decodes into a program (any shape; it is normalized into a valid one), a workgroup
//! shape, a subgroup size and a lane layout. The program runs under all three models. Nothing may
//! panic, and these invariants must hold:
//! - every set of lanes a construct runs is a subset of its parent's set;
//! - every tangle is a subset of the lanes that exist in its subgroup;
//! - a pinned-down `subgroupElect()` is true exactly in the lowest lane of its tangle;
//! - a pinned-down `subgroupBallot(true)` equals the tangle, and any ballot is a subset of it;
//! - a pinned-down `subgroupBroadcastFirst` gives every lane the same value;
//! - refinement: a value defined under a weaker model (base ⊂ sucf ⊂ maximal) is defined and equal
//!   under every stronger one (records compared up to the first lost record).
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use lockstep::model::{LaneMask, LaneOrder, Op, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use lockstep::reconverge::glsl::{shader, RecordLayout};
use lockstep::reconverge::{
    execute_with, Case, Cond, ExecError, Execution, LaneMap, Limits, Mode, Observer, OpEvent,
    Input, Operand, Program, Selector, SgOp, Stmt, Trips, Val,
};

fn cond(u: &mut Unstructured) -> Result<Cond> {
    Ok(match u.int_in_range(0u8..=4)? {
        0 => Cond::True,
        1 => Cond::Mask(u.arbitrary()?),
        2 => Cond::Subgroups(u.arbitrary()?),
        3 => Cond::LoopCount {
            outer: u.int_in_range(0..=3)?,
            mask: u.arbitrary()?,
        },
        _ => Cond::Reg(u.int_in_range(0..=9)?),
    })
}

fn operand(u: &mut Unstructured) -> Result<Operand> {
    Ok(match u.int_in_range(0u8..=8)? {
        0 => Operand::Const(u.arbitrary()?),
        1 => Operand::Reg(u.int_in_range(0..=9)?),
        2 => Operand::Invocation,
        3 => Operand::X,
        4 => Operand::Y,
        5 => Operand::SubgroupId,
        6 => Operand::Lane,
        7 => Operand::Scaled {
            mul: u.arbitrary()?,
            add: u.arbitrary()?,
        },
        _ => Operand::Sum(u.int_in_range(0..=9)?, u.int_in_range(0..=9)?),
    })
}

fn sgop(u: &mut Unstructured) -> Result<SgOp> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 => SgOp::ballot(cond(u)?),
        1 => SgOp::elect(),
        2 => SgOp::any(cond(u)?),
        3 => SgOp::broadcast_first(operand(u)?),
        4 => SgOp::add(operand(u)?),
        5 => SgOp::bit_count(u.int_in_range(0..=9)?),
        6 => SgOp::exclusive_bit_count(u.int_in_range(0..=9)?),
        _ => SgOp::shuffle_up(operand(u)?, u.int_in_range(0..=9)?),
    })
}

fn block(u: &mut Unstructured, depth: u32) -> Result<Vec<Stmt>> {
    let n = u.int_in_range(0usize..=if depth == 0 { 0 } else { 5 })?;
    (0..n).map(|_| stmt(u, depth - 1)).collect()
}

fn stmt(u: &mut Unstructured, depth: u32) -> Result<Stmt> {
    Ok(match u.int_in_range(0u8..=11)? {
        0 => Stmt::If {
            id: 0,
            cond: cond(u)?,
            then_branch: block(u, depth)?,
            else_branch: block(u, depth)?,
        },
        1 => Stmt::Loop {
            id: 0,
            trips: if u.arbitrary()? {
                Trips::Uniform(u.int_in_range(0..=10)?)
            } else {
                Trips::Varying {
                    salt: u.arbitrary()?,
                    modulus: u.int_in_range(0..=10)?,
                }
            },
            body: block(u, depth)?,
        },
        2 => {
            let k = u.int_in_range(0usize..=3)?;
            let mut cases = Vec::new();
            for _ in 0..k {
                let labels = (0..u.int_in_range(0usize..=3)?)
                    .map(|_| u.int_in_range(0u32..=5))
                    .collect::<Result<Vec<_>>>()?;
                cases.push(Case {
                    labels,
                    body: block(u, depth)?,
                });
            }
            Stmt::Switch {
                id: 0,
                selector: match u.int_in_range(0u8..=2)? {
                    0 => Selector::Varying {
                        salt: u.arbitrary()?,
                        modulus: u.int_in_range(0..=6)?,
                    },
                    1 => Selector::Subgroup {
                        modulus: u.int_in_range(0..=6)?,
                    },
                    _ => Selector::LoopCount {
                        outer: u.int_in_range(0..=3)?,
                        modulus: u.int_in_range(0..=6)?,
                    },
                },
                cases,
                default: block(u, depth)?,
            }
        }
        3 => Stmt::Break,
        4 => Stmt::Continue,
        5 => Stmt::Return,
        6 => Stmt::Call {
            id: 0,
            function: u.int_in_range(0..=9)?,
        },
        7 => Stmt::Atomic {
            tag: 0,
            counter: u.int_in_range(0..=3)?,
            value: operand(u)?,
            dst: if u.arbitrary()? {
                Some(u.int_in_range(0..=9)?)
            } else {
                None
            },
        },
        8 => Stmt::Set {
            dst: u.int_in_range(0..=9)?,
            value: operand(u)?,
        },
        9 => Stmt::Store {
            tag: 0,
            value: operand(u)?,
        },
        _ => Stmt::Op {
            tag: 0,
            op: sgop(u)?,
            dst: if u.arbitrary()? {
                Some(u.int_in_range(0..=9)?)
            } else {
                None
            },
        },
    })
}

struct Invariants {
    present: Vec<LaneMask>,
    ballot_true_checked: u64,
}

impl Observer for Invariants {
    fn split(&mut self, construct: u32, parent: &[LaneMask], child: &[LaneMask]) {
        assert_eq!(parent.len(), child.len());
        for (p, c) in parent.iter().zip(child) {
            assert!(
                c.minus(*p).is_empty(),
                "construct #{construct}: child set {c} is not a subset of its parent {p}"
            );
        }
    }

    fn op(&mut self, e: &OpEvent<'_>) {
        let present = self.present[e.subgroup as usize];
        assert!(
            e.tangle.minus(present).is_empty(),
            "tag #{}: tangle {} outside the subgroup's lanes {present}",
            e.tag,
            e.tangle
        );
        assert_eq!(e.results.len() as u32, e.tangle.count());
        if e.unpinned.is_some() {
            assert!(e
                .results
                .iter()
                .all(|(_, v)| matches!(v, Val::Undefined(_))));
            return;
        }
        match (e.op.op, &e.op.input) {
            (Op::Elect, _) => {
                for (l, v) in e.results {
                    let want = Some(*l) == e.tangle.lowest();
                    assert_eq!(v.words(), Some([want as u32, 0, 0, 0]), "elect lane {l}");
                }
            }
            (Op::Ballot, Input::Cond(c)) => {
                for (_, v) in e.results {
                    if let Some(w) = v.words() {
                        let bits = w[0] as u128
                            | (w[1] as u128) << 32
                            | (w[2] as u128) << 64
                            | (w[3] as u128) << 96;
                        assert_eq!(bits & !e.tangle.0, 0, "ballot outside the tangle");
                        if *c == Cond::True {
                            assert_eq!(bits, e.tangle.0, "ballot(true) != tangle");
                            self.ballot_true_checked += 1;
                        }
                    }
                }
            }
            (Op::BroadcastFirst, _) => {
                let first = e.results.first().map(|r| r.1);
                for (_, v) in e.results {
                    assert_eq!(Some(*v), first, "broadcast_first differs between lanes");
                }
            }
            // The other operations have no invariant this target checks beyond the ones above.
            _ => {}
        }
    }
}

/// A value defined under the weaker model must be defined and equal under the stronger one.
fn refines(weak: &Execution, strong: &Execution) {
    for (i, (w, s)) in weak.records.iter().zip(&strong.records).enumerate() {
        let upto = w
            .len()
            .min(s.len())
            .min(weak.lost_at[i].unwrap_or(usize::MAX))
            .min(strong.lost_at[i].unwrap_or(usize::MAX));
        for k in 0..upto {
            assert_eq!(
                w[k].tag, s[k].tag,
                "invocation {i} record {k}: paths differ"
            );
            if let Val::Defined(x) = w[k].value {
                assert_eq!(
                    s[k].value,
                    Val::Defined(x),
                    "invocation {i} record {k} (tag #{}): defined under {} but not the same under {}",
                    w[k].tag,
                    weak.mode,
                    strong.mode
                );
            }
        }
        if weak.lost_at[i].is_none() && strong.lost_at[i].is_none() {
            assert_eq!(w.len(), s.len(), "invocation {i}: record counts differ");
        }
    }
}

fn run(u: &mut Unstructured) -> Result<()> {
    let main = block(u, 4)?;
    let nf = u.int_in_range(0usize..=3)?;
    let functions = (0..nf).map(|_| block(u, 3)).collect::<Result<Vec<_>>>()?;
    let program = Program { main, functions }.normalized();
    assert_eq!(program.validate(), Ok(()), "normalized programs are valid");
    let size = SubgroupSize::new(1 << u.int_in_range(0u32..=7)?).expect("power of two");
    let shape = WorkgroupShape::new(u.int_in_range(1..=40)?, u.int_in_range(1..=4)?, 1)
        .expect("small shape");
    let layouts = LaneOrder::all();
    let layout = layouts[u.choose_index(layouts.len())?];
    let Ok(wg) = WorkgroupLayout::new(shape, size, layout) else {
        return Ok(());
    };
    let map = LaneMap::new(&wg);
    let limits = Limits {
        max_records: 512,
        max_lane_steps: 200_000,
    };
    let mut runs = Vec::new();
    for mode in Mode::ALL {
        let mut inv = Invariants {
            present: (0..map.subgroups()).map(|g| map.present(g)).collect(),
            ballot_true_checked: 0,
        };
        match execute_with(&program, &map, mode, limits, &mut inv) {
            Ok(ex) => {
                assert_eq!(ex.records.len(), shape.invocations() as usize);
                for (r, l) in ex.records.iter().zip(&ex.lost_at) {
                    assert!(l.is_none_or(|k| k <= r.len()));
                }
                runs.push(ex);
            }
            Err(ExecError::TooLong(_)) | Err(ExecError::TooManyRecords { .. }) => return Ok(()),
            Err(e) => panic!("unexpected executor error: {e}"),
        }
    }
    // Mode::ALL is strongest first: maximal, sucf, base.
    refines(&runs[1], &runs[0]);
    refines(&runs[2], &runs[1]);
    let _ = shader(
        std::slice::from_ref(&program),
        Mode::Maximal,
        shape,
        RecordLayout::new(8, size.get()),
    );
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
