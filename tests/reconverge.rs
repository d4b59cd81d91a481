//! Divergence and reconvergence: the executor under the three models (seed 001's allocation
//! kernels, maximal reconvergence cases, layout dependence, properties of random programs), the
//! comparison with a device, and — on lavapipe or any Vulkan device — random programs in base mode
//! and the seed 001 kernels run for real.

use lockstep::model::{
    LaneOrder, Placement, Reason, SubgroupSize, Value, WorkgroupLayout, WorkgroupShape,
};
use lockstep::reconverge::campaign::{
    compare_batch, run, CampaignError, Device, Event, Plan, Setup, ShrinkLimits, Source, Times,
};
use lockstep::reconverge::compare::compare;
use lockstep::reconverge::glsl::{RecordLayout, COUNTER_WORDS, SENTINEL};
use lockstep::reconverge::layout::layout_dependence;
use lockstep::reconverge::r#gen::{programs, GenConfig};
use lockstep::reconverge::seed001::{self, allocation, allocation_fixed, Tag};
use lockstep::reconverge::{
    execute, execute_with, Case, Cond, Execution, LaneMap, Limits, Mode, Observer, OpEvent,
    Operand, Program, Selector, SgOp, Stmt, Trips, Val,
};
use proptest::prelude::*;

fn size(n: u64) -> SubgroupSize {
    SubgroupSize::new(n).unwrap()
}

fn line(n: u32, s: u64) -> LaneMap {
    let wg = WorkgroupLayout::new(
        WorkgroupShape::new(n, 1, 1).unwrap(),
        size(s),
        LaneOrder::ROW_MAJOR,
    )
    .unwrap();
    LaneMap::new(&wg)
}

fn op(tag: u32, op: SgOp) -> Stmt {
    Stmt::Op { tag, op, dst: None }
}

fn ballot_true(tag: u32) -> Stmt {
    op(tag, SgOp::ballot(Cond::True))
}

/// The value of the `k`-th record with `tag` of invocation `i`.
fn rec(ex: &Execution, i: usize, tag: u32, k: usize) -> Val {
    ex.records[i]
        .iter()
        .filter(|r| r.tag == tag)
        .nth(k)
        .unwrap_or_else(|| panic!("invocation {i} has no record {k} of tag {tag}"))
        .value
}

fn ballot_of(v: Val) -> u128 {
    let w = v.words().unwrap_or_else(|| panic!("not defined: {v:?}"));
    w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96
}

fn unpinned(v: Val) -> bool {
    matches!(v, Val::Undefined(Reason::UnpinnedTangle { .. }))
}

// ---------------------------------------------------------------------------------------------
// Seed 001: the allocation kernel and its fixed version.

/// Invocations 0..64 in 8 subgroups of 8; `needs` as the needs_space mask.
fn seed_map() -> LaneMap {
    line(64, 8)
}

#[test]
fn base_leaves_the_original_allocation_offsets_undefined() {
    // seed 001: "Vulkan only requires invocations to reconverge after the if statement that
    // performs the subgroup election if all the invocations in the workgroup are converged at that
    // if statement" — here they are not (needs_space varies), so nothing is pinned down.
    let needs = 0x00ff_0f0f_0000_00b6u128;
    let ex = execute(&allocation(needs), &seed_map(), Mode::Base).unwrap();
    for i in 0..64usize {
        if needs >> i & 1 == 0 {
            assert!(ex.records[i].is_empty(), "invocation {i} writes nothing");
            continue;
        }
        for tag in [Tag::Mask.code(), Tag::Size.code(), Tag::Elect.code()] {
            assert!(unpinned(rec(&ex, i, tag, 0)), "invocation {i} tag {tag}");
        }
        // The branch on the undefined elect loses the invocation's path: its offset and slot are
        // not pinned down either.
        assert_eq!(ex.lost_at[i], Some(3), "invocation {i}");
    }
    assert!(matches!(ex.counters[0], Val::Undefined(_)));
    // SUCF does not help the original either: `if (needs_space)` is not subgroup-uniform.
    let sucf = execute(&allocation(needs), &seed_map(), Mode::Sucf).unwrap();
    assert!(unpinned(rec(&sucf, 1, Tag::Mask.code(), 0)));
}

/// Checks that `ex` is the correct allocation for `needs` on `map`: per subgroup with a needing
/// lane, one atomic of the subgroup's count, every lane's base is that atomic, offsets are the
/// exclusive rank among needing lanes, slots are base + offset.
fn assert_allocation_defined(ex: &Execution, map: &LaneMap, needs: u128, fixed: bool) {
    let n = map.size().get();
    assert!(ex.lost_at.iter().all(|l| l.is_none()));
    let mut total = 0;
    for g in 0..map.subgroups() as u32 {
        let lanes: Vec<(u32, usize)> = (0..n)
            .filter_map(|l| map.invocation(g, l).map(|i| (l, i as usize)))
            .collect();
        let needing: Vec<(u32, usize)> = lanes
            .iter()
            .copied()
            .filter(|(_, i)| needs >> (i % 128) & 1 == 1)
            .collect();
        total += needing.len() as u32;
        // The invocations that execute the allocation together.
        let group = if fixed && !needing.is_empty() {
            lanes.clone()
        } else {
            needing.clone()
        };
        let Some(&(_, first)) = group.first() else {
            continue;
        };
        let mask: u128 = needing.iter().fold(0, |m, (l, _)| m | 1 << l);
        let Val::Atomic { atomic, plus: 0 } = rec(ex, first, Tag::Atomic.code(), 0) else {
            panic!("the first lane of the tangle did the atomic add");
        };
        assert_eq!(
            ex.atomics[atomic as usize].amount,
            Val::u32(needing.len() as u32)
        );
        for &(l, i) in &group {
            assert_eq!(ballot_of(rec(ex, i, Tag::Mask.code(), 0)), mask);
            assert_eq!(
                rec(ex, i, Tag::Size.code(), 0),
                Val::u32(needing.len() as u32)
            );
            assert_eq!(
                rec(ex, i, Tag::Elect.code(), 0),
                Val::Defined(Value::bool(i == first))
            );
            assert_eq!(
                rec(ex, i, Tag::Base.code(), 0),
                Val::Atomic { atomic, plus: 0 }
            );
            let rank = (mask & ((1u128 << l) - 1)).count_ones();
            assert_eq!(rec(ex, i, Tag::Offset.code(), 0), Val::u32(rank));
        }
        for &(l, i) in &needing {
            let rank = (mask & ((1u128 << l) - 1)).count_ones();
            assert_eq!(
                rec(ex, i, Tag::Slot.code(), 0),
                Val::Atomic { atomic, plus: rank }
            );
        }
    }
    assert_eq!(ex.counters[0], Val::u32(total));
}

#[test]
fn the_fixed_allocation_is_fully_defined_under_sucf() {
    // seed 001, rewritten version: subgroupAny keeps the branch subgroup-uniform and
    // [[subgroup_uniform_control_flow]] (SPV_KHR_subgroup_uniform_control_flow) makes the
    // invocations reconverge after `if (subgroupElect())`.
    for needs in [
        0x00ff_0f0f_0000_00b6u128,
        0xffff_ffff_ffff_ffff,
        0x1,
        0x8000_0000_0000_0000,
        0,
        0x0123_4567_89ab_cdef,
    ] {
        let map = seed_map();
        let ex = execute(&allocation_fixed(needs), &map, Mode::Sucf).unwrap();
        assert!(
            ex.records
                .iter()
                .flatten()
                .all(|r| !matches!(r.value, Val::Undefined(_))),
            "needs {needs:#x}: every result is defined"
        );
        assert_allocation_defined(&ex, &map, needs, true);
    }
}

#[test]
fn the_original_allocation_is_fully_defined_under_maximal_reconvergence() {
    // vk_maxreconv_proposal.adoc, Examples: "With maximal reconvergence, the unaltered version of
    // code (as listed above) can be used directly to perform atomic compaction."
    for needs in [0x00ff_0f0f_0000_00b6u128, 0x5555_5555_5555_5555, 0x1] {
        let map = seed_map();
        let ex = execute(&allocation(needs), &map, Mode::Maximal).unwrap();
        assert_allocation_defined(&ex, &map, needs, false);
    }
}

#[test]
fn the_fixed_allocation_needs_a_converged_subgroup_before_the_first_if() {
    // seed 001: "the subgroup must be uniform (converged) prior to the first if statement".
    let mut p = allocation_fixed(0xffff_ffff_ffff_ffff);
    let body = std::mem::take(&mut p.main);
    p.main = vec![Stmt::If {
        id: 99,
        cond: Cond::Mask(0x5555_5555_5555_5555),
        then_branch: body,
        else_branch: vec![],
    }];
    let ex = execute(&p, &seed_map(), Mode::Sucf).unwrap();
    assert!(unpinned(rec(&ex, 0, Tag::Any.code(), 0)));
    assert!(matches!(
        rec(&ex, 0, Tag::Any.code(), 0),
        Val::Undefined(Reason::UnpinnedTangle { construct: 99 })
    ));
}

#[test]
fn under_base_the_fixed_allocation_is_defined_only_where_the_workgroup_stays_uniform() {
    // Core uniform control flow is dynamic: if every subgroup has a lane that needs space,
    // subgroupAny is true everywhere and the workgroup stays converged.
    let map = seed_map();
    let every = 0x0101_0101_0101_0101u128 | 0x00f0_0000_0000_f000;
    let ex = execute(&allocation_fixed(every), &map, Mode::Base).unwrap();
    assert_allocation_defined(&ex, &map, every, true);
    // Subgroup 1 (invocations 8..16) needs none: the branch is not workgroup-uniform.
    let some = 0x0101_0101_0101_0001u128;
    let ex = execute(&allocation_fixed(some), &map, Mode::Base).unwrap();
    assert_eq!(
        rec(&ex, 0, Tag::Any.code(), 0),
        Val::Defined(Value::bool(true))
    );
    assert_eq!(
        rec(&ex, 8, Tag::Any.code(), 0),
        Val::Defined(Value::bool(false))
    );
    assert!(unpinned(rec(&ex, 0, Tag::Mask.code(), 0)));
}

#[test]
fn the_seed001_trace_in_the_docs_is_the_executors_output() {
    // docs/semantics/reconvergence.md embeds seed001_trace_markdown() between markers; regenerate
    // with LOCKSTEP_UPDATE_DOCS=1 cargo test --release --test suite reconverge::.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/semantics/reconvergence.md"
    );
    let doc = std::fs::read_to_string(path).expect("docs/semantics/reconvergence.md exists");
    let (begin, end) = (
        "<!-- BEGIN GENERATED: seed001_trace_markdown() -->\n",
        "<!-- END GENERATED -->",
    );
    let a = doc.find(begin).expect("begin marker") + begin.len();
    let b = doc.find(end).expect("end marker");
    let now = seed001::seed001_trace_markdown();
    if std::env::var_os("LOCKSTEP_UPDATE_DOCS").is_some() {
        let updated = format!("{}{}{}", &doc[..a], now, &doc[b..]);
        std::fs::write(path, updated).unwrap();
        return;
    }
    assert_eq!(&doc[a..b], now, "the docs trace drifted: regenerate it");
}

// ---------------------------------------------------------------------------------------------
// Maximal reconvergence.

#[test]
fn maximal_reconverges_at_the_merge_of_a_divergent_if() {
    // SPV_KHR_maximal_reconvergence, Reconvergence: T(merge) includes all non-escaping invocations
    // of T(OpSelectionMerge).
    let p = Program {
        main: vec![
            Stmt::If {
                id: 1,
                cond: Cond::Mask(0b0110),
                then_branch: vec![ballot_true(2)],
                else_branch: vec![ballot_true(3)],
            },
            ballot_true(4),
        ],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert_eq!(ballot_of(rec(&ex, 1, 2, 0)), 0b0110);
    assert_eq!(ballot_of(rec(&ex, 0, 3, 0)), 0b1111_1001);
    assert_eq!(ballot_of(rec(&ex, 0, 4, 0)), 0xff);
    // Base Vulkan pins the merge down too (the workgroup was converged at the if) but not the
    // branches.
    let base = execute(&p, &line(8, 8), Mode::Base).unwrap();
    assert!(unpinned(rec(&base, 1, 2, 0)));
    assert_eq!(ballot_of(rec(&base, 0, 4, 0)), 0xff);
}

#[test]
fn maximal_keeps_loop_iterations_apart() {
    // vk_maxreconv_proposal.adoc: "invocations executing different loop iterations are never in
    // the same tangle". Trip count (i ^ 0) % 4 = i % 4.
    let p = Program {
        main: vec![Stmt::Loop {
            id: 1,
            trips: Trips::Varying {
                salt: 0,
                modulus: 4,
            },
            body: vec![ballot_true(2)],
        }],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    // Invocation 3 runs 3 iterations: with {1,2,3,5,6,7}, then {2,3,6,7}, then {3,7}.
    let got: Vec<u128> = (0..3).map(|k| ballot_of(rec(&ex, 3, 2, k))).collect();
    assert_eq!(got, [0b1110_1110, 0b1100_1100, 0b1000_1000]);
    assert_eq!(ex.records[0].len(), 0);
}

#[test]
fn maximal_break_leaves_the_tangle_and_rejoins_at_the_loop_merge() {
    // SPV_KHR_maximal_reconvergence: branching to the merge block of an enclosing construct
    // escapes reconvergence; the loop merge gathers every invocation again.
    let p = Program {
        main: vec![
            Stmt::Loop {
                id: 1,
                trips: Trips::Uniform(3),
                body: vec![
                    Stmt::If {
                        id: 2,
                        cond: Cond::Mask(0b0000_1111),
                        then_branch: vec![ballot_true(3), Stmt::Break],
                        else_branch: vec![],
                    },
                    ballot_true(4),
                ],
            },
            ballot_true(5),
        ],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert_eq!(ballot_of(rec(&ex, 0, 3, 0)), 0x0f);
    // The ballot after the if in the same iteration excludes the invocations that broke.
    assert_eq!(ballot_of(rec(&ex, 4, 4, 0)), 0xf0);
    assert_eq!(ex.records[4].iter().filter(|r| r.tag == 4).count(), 3);
    assert_eq!(ballot_of(rec(&ex, 0, 5, 0)), 0xff);
    // Under SUCF, the if that the breaking invocations escape does not reconverge: the ballot
    // after it is not pinned, but the loop merge is (they all leave through it).
    let sucf = execute(&p, &line(8, 8), Mode::Sucf).unwrap();
    assert!(unpinned(rec(&sucf, 4, 4, 0)));
    assert_eq!(ballot_of(rec(&sucf, 0, 5, 0)), 0xff);
}

#[test]
fn maximal_continue_reconverges_at_the_continue_target() {
    // SPV_KHR_maximal_reconvergence: T(continue target) includes all non-escaping invocations of
    // T(OpLoopMerge) — "at the beginning of each iteration of the loop, invocations that entered
    // the loop together and are continuing to execute the loop will be converged".
    let p = Program {
        main: vec![Stmt::Loop {
            id: 1,
            trips: Trips::Uniform(2),
            body: vec![
                ballot_true(2),
                Stmt::If {
                    id: 3,
                    cond: Cond::Mask(0b1010_1010),
                    then_branch: vec![Stmt::Continue],
                    else_branch: vec![],
                },
                ballot_true(4),
            ],
        }],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert_eq!(ballot_of(rec(&ex, 0, 2, 1)), 0xff);
    assert_eq!(ballot_of(rec(&ex, 0, 4, 0)), 0b0101_0101);
    // No rule of core Vulkan or SUCF reconverges at a continue target reached from two places.
    let sucf = execute(&p, &line(8, 8), Mode::Sucf).unwrap();
    assert!(unpinned(rec(&sucf, 0, 2, 1)));
    assert_eq!(ballot_of(rec(&sucf, 0, 2, 0)), 0xff);
}

#[test]
fn maximal_reconverges_after_a_call_with_an_early_return() {
    // SPV_KHR_maximal_reconvergence, Divergence (note): "function call return acts as
    // reconvergence point"; OpReturn escapes only relations in the current function.
    let p = Program {
        main: vec![Stmt::Call { id: 1, function: 0 }, ballot_true(2)],
        functions: vec![vec![
            Stmt::If {
                id: 3,
                cond: Cond::Mask(0b11),
                then_branch: vec![Stmt::Return],
                else_branch: vec![],
            },
            ballot_true(4),
        ]],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert_eq!(ballot_of(rec(&ex, 5, 4, 0)), 0xfc);
    assert_eq!(ballot_of(rec(&ex, 0, 2, 0)), 0xff);
    let base = execute(&p, &line(8, 8), Mode::Base).unwrap();
    assert!(unpinned(rec(&base, 0, 2, 0)));
}

#[test]
fn a_return_from_main_takes_invocations_out_for_good() {
    let p = Program {
        main: vec![
            Stmt::If {
                id: 1,
                cond: Cond::Mask(0b1),
                then_branch: vec![Stmt::Return],
                else_branch: vec![],
            },
            ballot_true(2),
        ],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert!(ex.records[0].is_empty());
    assert_eq!(ballot_of(rec(&ex, 1, 2, 0)), 0xfe);
}

#[test]
fn maximal_does_not_pin_a_switch_case_reached_by_several_selector_values() {
    // SPV_KHR_maximal_reconvergence, Divergence (OpSwitch): "Invocations with different Selector
    // values executing the same case construct *may* be partitioned into the same tangle."
    let p = Program {
        main: vec![Stmt::Switch {
            id: 1,
            // selector = i % 4
            selector: Selector::Varying {
                salt: 0,
                modulus: 4,
            },
            cases: vec![
                Case {
                    labels: vec![0],
                    body: vec![ballot_true(2)],
                },
                Case {
                    labels: vec![1, 2],
                    body: vec![ballot_true(3)],
                },
            ],
            default: vec![ballot_true(4)],
        }],
        functions: vec![],
    };
    let ex = execute(&p, &line(8, 8), Mode::Maximal).unwrap();
    assert_eq!(ballot_of(rec(&ex, 0, 2, 0)), 0b0001_0001);
    assert!(matches!(
        rec(&ex, 1, 3, 0),
        Val::Undefined(Reason::UnpinnedTangle { construct: 1 })
    ));
    // The default is reached by selector 3 only: pinned.
    assert_eq!(ballot_of(rec(&ex, 3, 4, 0)), 0b1000_1000);
}

// ---------------------------------------------------------------------------------------------
// Subgroup uniform control flow and base.

#[test]
fn sucf_pins_a_subgroup_uniform_branch_that_base_does_not() {
    // SPV_KHR_subgroup_uniform_control_flow, Overview: invocations of a subgroup reconverge "if
    // they were uniform for that subgroup instance upon entry into a structured loop or selection
    // and they all exit via the loop's or selection's merge block".
    let p = Program {
        main: vec![Stmt::If {
            id: 1,
            cond: Cond::Subgroups(0b01), // subgroup 0 only
            then_branch: vec![
                Stmt::If {
                    id: 2,
                    cond: Cond::Mask(0b1100),
                    then_branch: vec![ballot_true(3)],
                    else_branch: vec![],
                },
                ballot_true(4),
            ],
            else_branch: vec![],
        }],
        functions: vec![],
    };
    let map = line(16, 8);
    let sucf = execute(&p, &map, Mode::Sucf).unwrap();
    assert!(unpinned(rec(&sucf, 2, 3, 0)));
    assert_eq!(ballot_of(rec(&sucf, 0, 4, 0)), 0xff);
    let base = execute(&p, &map, Mode::Base).unwrap();
    assert!(unpinned(rec(&base, 0, 4, 0)));
}

#[test]
fn base_pins_workgroup_uniform_flow_including_uniform_loops() {
    // Core SPIR-V "Uniform Control Flow": uniform at the entry point, kept by branches on
    // dynamically uniform conditions.
    let p = Program {
        main: vec![
            ballot_true(1),
            Stmt::Loop {
                id: 2,
                trips: Trips::Uniform(2),
                body: vec![
                    op(3, SgOp::elect()),
                    Stmt::If {
                        id: 4,
                        cond: Cond::LoopCount {
                            outer: 0,
                            mask: 0b10,
                        },
                        then_branch: vec![op(5, SgOp::add(Operand::Invocation))],
                        else_branch: vec![],
                    },
                ],
            },
        ],
        functions: vec![],
    };
    let ex = execute(&p, &line(16, 8), Mode::Base).unwrap();
    assert_eq!(ballot_of(rec(&ex, 9, 1, 0)), 0xff);
    assert_eq!(rec(&ex, 8, 3, 1), Val::Defined(Value::bool(true)));
    assert_eq!(rec(&ex, 9, 5, 0), Val::u32((8..16).sum()));
    assert!(ex.records.iter().flatten().all(|r| r.value.is_defined()));
}

// ---------------------------------------------------------------------------------------------
// Layout dependence (seed 003, "Undefined 2D layout").

#[test]
fn a_row_sum_on_a_2d_workgroup_depends_on_the_layout() {
    // ../shared/specs/README.md, Layout: Vulkan gives no relation between LocalInvocationId and
    // (SubgroupId, SubgroupInvocationId); row-major, column-major and quads are all valid.
    let p = Program {
        main: vec![
            op(1, SgOp::add(Operand::X)),
            op(2, SgOp::shuffle_up(Operand::X, 1)),
        ],
        functions: vec![],
    };
    let r = layout_dependence(
        &p,
        WorkgroupShape::new(8, 8, 1).unwrap(),
        size(8),
        Mode::Base,
    )
    .unwrap();
    assert_eq!(r.layouts.len(), 3, "row-major, column-major, quads");
    assert!(r.depends_on_layout());
    // Under row-major the neighbour below lane l is x - 1; under column-major it is the same x.
    let d = r
        .differences
        .iter()
        .find(|d| d.invocation == [3, 2, 0] && d.tag == 2)
        .expect("the shuffle differs");
    assert_eq!(d.values[0], "2");
    assert_eq!(d.values[1], "3");
    assert!(r.summary(3).contains("DEPENDS"));
}

#[test]
fn a_subgroup_count_does_not_depend_on_the_layout() {
    let p = Program {
        main: vec![op(1, SgOp::add(Operand::Const(1))), ballot_true(2)],
        functions: vec![],
    };
    let r = layout_dependence(
        &p,
        WorkgroupShape::new(8, 4, 1).unwrap(),
        size(8),
        Mode::Base,
    )
    .unwrap();
    let count = r.executions[0].records[5][0].value;
    assert_eq!(count, Val::u32(8));
    assert!(!r.depends_on_layout(), "{}", r.summary(5));
}

// ---------------------------------------------------------------------------------------------
// Properties of random programs.

struct Invariants {
    checked: u64,
}

impl Observer for Invariants {
    fn split(
        &mut self,
        _c: u32,
        parent: &[lockstep::model::LaneMask],
        child: &[lockstep::model::LaneMask],
    ) {
        for (p, c) in parent.iter().zip(child) {
            assert!(c.minus(*p).is_empty(), "child {c} not within parent {p}");
        }
    }
    fn op(&mut self, e: &OpEvent<'_>) {
        if e.unpinned.is_some() {
            return;
        }
        self.checked += 1;
        for (l, v) in e.results {
            if *e.op == SgOp::elect() {
                assert_eq!(
                    v.words(),
                    Some([(Some(*l) == e.tangle.lowest()) as u32, 0, 0, 0])
                );
            } else if *e.op == SgOp::ballot(Cond::True) {
                assert_eq!(ballot_of(*v), e.tangle.0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A value pinned down by a weaker model is the same under every stronger one (core ⊂ SUCF ⊂
    /// maximal), and the executor's invariants hold (elect is the lowest lane of the tangle,
    /// ballot(true) is the tangle, every set is within its parent).
    #[test]
    fn stronger_models_refine_weaker_ones(p in programs(GenConfig::default()), s in 0u32..=5) {
        let map = line(64, 1 << s);
        let runs: Vec<Execution> = Mode::ALL
            .iter()
            .map(|&m| {
                let mut inv = Invariants { checked: 0 };
                execute_with(&p, &map, m, Limits::default(), &mut inv).unwrap()
            })
            .collect();
        for (weak, strong) in [(&runs[2], &runs[1]), (&runs[1], &runs[0])] {
            for i in 0..64 {
                let (w, st) = (&weak.records[i], &strong.records[i]);
                let upto = w.len().min(st.len())
                    .min(weak.lost_at[i].unwrap_or(usize::MAX))
                    .min(strong.lost_at[i].unwrap_or(usize::MAX));
                for k in 0..upto {
                    prop_assert_eq!(w[k].tag, st[k].tag);
                    if let Val::Defined(x) = w[k].value {
                        prop_assert_eq!(st[k].value, Val::Defined(x));
                    }
                }
            }
        }
        prop_assert!(p.max_records() <= 64);
        for ex in &runs {
            prop_assert!(ex.records.iter().all(|r| r.len() <= 64));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison with a device, against synthetic device output.

/// What a correct device under maximal reconvergence writes: the executor's results, with atomic
/// adds served in the executor's order.
fn perfect_device(p: &Program, map: &LaneMap, layout: RecordLayout) -> (Vec<u32>, Vec<u32>) {
    let ex = execute(p, map, Mode::Maximal).unwrap();
    let n = map.shape().invocations() as usize;
    let st = layout.stride_words();
    let mut out = vec![SENTINEL; n * st];
    let mut counters = vec![0u32; 4];
    let mut returned = Vec::new();
    for a in &ex.atomics {
        returned.push(counters[a.counter as usize]);
        counters[a.counter as usize] += a.amount.words().unwrap()[0];
    }
    for i in 0..n {
        let pl = map.placement(i as u32);
        let slice = &mut out[i * st..(i + 1) * st];
        slice[..4].copy_from_slice(&[pl.subgroup, pl.lane, map.size().get(), 0]);
        for (k, r) in ex.records[i].iter().enumerate() {
            let w = match r.value {
                Val::Atomic { atomic, plus } => {
                    [returned[atomic as usize].wrapping_add(plus), 0, 0, 0]
                }
                v => v.words().unwrap_or([0x5a5a_5a5a; 4]),
            };
            layout.write(slice, k, r.tag, w);
        }
    }
    (out, counters)
}

#[test]
fn compare_accepts_a_correct_device_and_catches_each_kind_of_error() {
    let map = line(64, 8);
    let shape = map.shape();
    let lay = RecordLayout::new(16, 8);
    let p = allocation(0x00ff_0f0f_0000_00b6);
    let (out, ctr) = perfect_device(&p, &map, lay);
    let cmp =
        |out: &[u32], ctr: &[u32], mode: Mode| compare(&p, mode, shape, size(8), lay, out, ctr);
    let c = cmp(&out, &ctr, Mode::Maximal);
    assert!(c.ok(), "{:?}", c.mismatches);
    assert!(c.compared > 0);

    let st = lay.stride_words();
    let at = |i: usize, k: usize| i * st + lay.record_words(k);
    // A wrong ballot bit (invocation 1 is in the tangle; record 0 is the mask).
    let mut bad = out.clone();
    bad[at(1, 0) + 1] ^= 1;
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert_eq!(c.mismatch_count, 1);
    assert_eq!(c.mismatches[0].why, "value");
    // A different path: a record with another tag.
    let mut bad = out.clone();
    bad[at(2, 1)] = 999;
    assert!(!cmp(&bad, &ctr, Mode::Maximal).ok());
    // One record too many.
    let mut bad = out.clone();
    let len = execute(&p, &map, Mode::Maximal).unwrap().records[2].len();
    bad[at(2, len)] = Tag::Slot.code();
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert!(
        c.mismatches[0].got.contains("another record"),
        "{:?}",
        c.mismatches
    );
    // A missing record.
    let mut bad = out.clone();
    bad[at(2, len - 1)] = SENTINEL;
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert_eq!(c.mismatches[0].got, "nothing written");
    // Inconsistent atomics: invocation 2's broadcast base disagrees with the atomic add.
    let mut bad = out.clone();
    let base_rec = at(2, 3); // mask, size, elect, base
    assert_eq!(bad[base_rec], Tag::Base.code());
    bad[base_rec + 1] += 1;
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert!(
        c.mismatches.iter().any(|m| m.why.contains("atomic")),
        "{:?}",
        c.mismatches
    );
    // Overlapping allocations: subgroups 2.. (invocations 16..) handed ranges shifted down onto
    // subgroup 0's.
    let mut bad = out.clone();
    for i in 16..64 {
        for k in 0..8 {
            let r = at(i, k);
            if [Tag::Atomic.code(), Tag::Base.code(), Tag::Slot.code()].contains(&bad[r]) {
                bad[r + 1] = bad[r + 1].wrapping_sub(5);
            }
        }
    }
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert!(
        c.mismatches.iter().any(|m| m.why.contains("atomic add")),
        "{:?}",
        c.mismatches
    );
    // A wrong final counter.
    assert!(!cmp(&out, &[ctr[0] + 1, 0, 0, 0], Mode::Maximal).ok());
    // Two invocations claiming the same lane.
    let mut bad = out.clone();
    bad[st..st + 2].copy_from_slice(&[0, 0]);
    let c = cmp(&bad, &ctr, Mode::Maximal);
    assert_eq!(c.mismatches[0].why, "invalid placement");
    // Under base the same output passes: only what base defines is compared.
    let c = cmp(&out, &ctr, Mode::Base);
    assert!(c.ok());
    assert!(c.undefined > 0);
}

#[test]
fn compare_uses_the_placement_the_device_reports() {
    // The WebGPU CTS lesson: no lane mapping assumed. A device that numbers lanes in reverse is
    // fine as long as results follow its own placement.
    let shape = WorkgroupShape::new(16, 1, 1).unwrap();
    let placements: Vec<Placement> = (0..16)
        .map(|i| Placement {
            subgroup: i / 8,
            lane: 7 - i % 8,
        })
        .collect();
    let map = LaneMap::from_placements(shape, size(8), &placements).unwrap();
    let p = Program {
        main: vec![op(1, SgOp::elect()), op(2, SgOp::add(Operand::Lane))],
        functions: vec![],
    };
    let lay = RecordLayout::new(4, 8);
    let (out, ctr) = perfect_device(&p, &map, lay);
    let c = compare(&p, Mode::Base, shape, size(8), lay, &out, &ctr);
    assert!(c.ok(), "{:?}", c.mismatches);
    // Invocation 7 is lane 0: it is elected.
    assert_eq!(
        c.execution.unwrap().records[7][0].value,
        Val::Defined(Value::bool(true))
    );
}

// ---------------------------------------------------------------------------------------------
// Campaigns: the loop of `lockstep reconverge`, against synthetic devices.

/// Adds 1 to the value of every `subgroupAdd` record of `programs` in a batch's output: a device
/// that gets subgroupAdd wrong.
fn break_subgroup_add(setup: &Setup, programs: &[Program], words: &mut [u32]) {
    let (lay, inv) = (setup.layout, setup.shape.invocations() as usize);
    let per = inv * lay.stride_words();
    let head = programs.len() * COUNTER_WORDS;
    for (i, p) in programs.iter().enumerate() {
        let adds: Vec<u32> = p
            .tags()
            .into_iter()
            .filter(|(_, name)| name == "subgroupAdd")
            .map(|(t, _)| t)
            .collect();
        for j in 0..inv {
            let slice = &mut words[head + i * per + j * lay.stride_words()..][..lay.stride_words()];
            for k in 0..lay.max_records as usize {
                let (tag, mut v) = lay.read(slice, k);
                if adds.contains(&tag) {
                    v[0] = v[0].wrapping_add(1);
                    lay.write(slice, k, tag, v);
                }
            }
        }
    }
}

/// A device computed by the executor (maximal reconvergence, which refines every model, on the
/// row-major layout), optionally getting subgroupAdd wrong.
struct ModelDevice {
    setup: Setup,
    faulty: bool,
}

impl Device for ModelDevice {
    type Error = String;

    fn run(&self, _: usize, programs: &[Program], _: &mut Times) -> Result<Vec<u32>, String> {
        let map = line(self.setup.shape.invocations(), 8);
        let mut counters = Vec::new();
        let mut records = Vec::new();
        for p in programs {
            let (r, c) = perfect_device(p, &map, self.setup.layout);
            counters.extend(c);
            records.extend(r);
        }
        counters.extend(records);
        if self.faulty {
            break_subgroup_add(&self.setup, programs, &mut counters);
        }
        Ok(counters)
    }

    fn subgroup_size(&self) -> SubgroupSize {
        size(8)
    }
}

/// Runs `program` alone on `device` and says whether the model agrees with it.
fn passes_on(device: &ModelDevice, program: &Program) -> bool {
    let ps = std::slice::from_ref(program);
    let words = device.run(0, ps, &mut Times::default()).unwrap();
    compare_batch(&device.setup, size(8), ps, &words)[0].ok()
}

/// A model device (`faulty`: it gets subgroupAdd wrong) running programs parametric, and a plan
/// of 4 programs per shape.
fn with_variants(faulty: bool, programs: u64, batch: usize, threads: usize) -> (ModelDevice, Plan) {
    let setup = Setup::new(Mode::Maximal, 8).with_parametric(true);
    let mut p = plan(programs, batch, threads);
    p.variants = 4;
    (ModelDevice { setup, faulty }, p)
}

fn plan(programs: u64, batch: usize, threads: usize) -> Plan {
    Plan {
        source: Source::Random,
        programs,
        seed: 7,
        batch,
        variants: 1,
        threads,
        max_time: None,
        shard: None,
        shrink: ShrinkLimits {
            failures: 2,
            steps: 2000,
            time: std::time::Duration::from_secs(60),
        },
    }
}

#[test]
fn a_campaign_compares_the_same_programs_whatever_the_batch_and_threads() {
    let setup = Setup::new(Mode::Maximal, 8);
    let device = ModelDevice {
        setup,
        faulty: false,
    };
    let mut ran = 0;
    let one = run(&device, &setup, &plan(30, 1, 1), &mut |e| {
        if let Event::Ran(n) = e {
            ran += n
        }
    })
    .unwrap();
    assert!(one.passed());
    assert_eq!((one.programs, one.batches, ran), (30, 30, 30));
    assert!(one.compared > 1000, "{}", one.compared);
    let many = run(&device, &setup, &plan(30, 4, 3), &mut |_| {}).unwrap();
    assert_eq!(many.batches, 8);
    assert_eq!(
        (many.programs, many.compared, many.undefined),
        (one.programs, one.compared, one.undefined)
    );
}

#[test]
fn a_campaign_catches_a_device_that_gets_subgroup_add_wrong_and_shrinks_the_program() {
    let setup = Setup::new(Mode::Maximal, 8);
    let device = ModelDevice {
        setup,
        faulty: true,
    };
    let mut shrinking = 0;
    let r = run(&device, &setup, &plan(40, 3, 3), &mut |e| {
        if e == Event::Shrinking(true) {
            shrinking += 1
        }
    })
    .unwrap();
    assert!(!r.passed());
    assert!(r.failing_programs > 0 && r.mismatches >= r.failing_programs);
    assert_eq!(r.failures.len() as u64, r.failing_programs);
    assert_eq!(shrinking, 2, "the first two failures are shrunk");
    let f = &r.failures[0];
    assert!(f.comparison.mismatches.iter().all(|m| m.why == "value"));
    let (minimal, c) = f.minimal.as_ref().expect("shrunk");
    assert!(!c.ok());
    // Shrunk to a few statements around one subgroupAdd.
    assert!(minimal.statements() < f.program.statements());
    assert!(minimal.statements() <= 3, "{minimal:?}");
    assert_eq!(
        minimal
            .tags()
            .iter()
            .filter(|(_, n)| n == "subgroupAdd")
            .count(),
        1,
        "{minimal:?}"
    );
    // It fails on the device for real, and a correct device passes it.
    assert!(!passes_on(&device, minimal));
    // Later failures are kept but not shrunk.
    assert!(r.failures.iter().skip(2).all(|f| f.minimal.is_none()));
}

// ---------------------------------------------------------------------------------------------
// Parameters and variants: programs of one shape, parameters apart (src/reconverge/params.rs).

/// A program with one parameter of every kind, in pre-order: an invocation mask, a subgroup mask, a
/// loop salt, a loop-count mask, a switch salt, a scaled operand's factor and addend, a constant.
fn every_parameter() -> Program {
    Program {
        main: vec![
            Stmt::If {
                id: 1,
                cond: Cond::Mask(0x1111 | 0x2222 << 32 | 0x3333 << 64 | 0x4444 << 96),
                then_branch: vec![Stmt::Op {
                    tag: 2,
                    op: SgOp::ballot(Cond::Subgroups(0x55)),
                    dst: None,
                }],
                else_branch: vec![],
            },
            Stmt::Loop {
                id: 3,
                trips: Trips::Varying {
                    salt: 66,
                    modulus: 3,
                },
                body: vec![Stmt::Op {
                    tag: 4,
                    op: SgOp::ballot(Cond::LoopCount {
                        outer: 0,
                        mask: 0x77,
                    }),
                    dst: None,
                }],
            },
            Stmt::Switch {
                id: 5,
                selector: Selector::Varying {
                    salt: 88,
                    modulus: 2,
                },
                cases: vec![Case {
                    labels: vec![0],
                    body: vec![Stmt::Op {
                        tag: 6,
                        op: SgOp::add(Operand::Scaled { mul: 9, add: 10 }),
                        dst: None,
                    }],
                }],
                default: vec![Stmt::Store {
                    tag: 7,
                    value: Operand::Const(11),
                }],
            },
        ],
        functions: vec![],
    }
}

#[test]
fn a_programs_parameters_are_its_masks_salts_and_operand_constants_in_pre_order() {
    // src/reconverge/params.rs: masks (four words, lowest first), salts, factors, addends and
    // constants are parameters; trip counts, moduli, labels and registers are the shape.
    let p = every_parameter();
    assert_eq!(
        p.param_words(),
        vec![0x1111, 0x2222, 0x3333, 0x4444, 0x55, 66, 0x77, 88, 9, 10, 11]
    );
    let (slots, n) = p.param_slots();
    assert_eq!(n, 11);
    // Each parameter's slot is where its first word is.
    assert_eq!(slots.param_words(), vec![0, 0, 0, 0, 4, 5, 6, 7, 8, 9, 10]);
    assert_eq!(p.shape().param_words(), vec![0; 11]);
    // The shape keeps everything else.
    let Stmt::Loop { trips, .. } = &p.shape().main[1] else {
        panic!()
    };
    assert_eq!(
        *trips,
        Trips::Varying {
            salt: 0,
            modulus: 3
        }
    );
    // Two programs that differ only in a parameter have one shape; in a modulus, two.
    let mut q = p.clone();
    if let Stmt::Switch { default, .. } = &mut q.main[2] {
        default[0] = Stmt::Store {
            tag: 7,
            value: Operand::Const(99),
        };
    }
    assert_eq!(q.shape(), p.shape());
    if let Stmt::Loop { trips, .. } = &mut q.main[1] {
        *trips = Trips::Varying {
            salt: 66,
            modulus: 4,
        };
    }
    assert_ne!(q.shape(), p.shape());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn a_variant_has_its_programs_shape_and_record_bound_and_new_parameters(p in programs(GenConfig::default()), seed in any::<u64>()) {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            Default::default(),
            proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &bytes),
        );
        let v = lockstep::reconverge::r#gen::variant(&p, &mut runner).unwrap();
        prop_assert_eq!(v.shape(), p.shape());
        prop_assert!(v.validate().is_ok());
        prop_assert_eq!(v.max_records(), p.max_records());
        prop_assert_eq!(v.param_words().len(), p.param_words().len());
        // A mask or salt drawn again equals the old one with probability 2^-32 or less.
        let wide = p.param_words().len() >= 4;
        prop_assume!(wide);
        prop_assert_ne!(v.param_words(), p.param_words());
    }
}

#[test]
fn a_campaign_with_variants_runs_each_shape_variants_times_whatever_the_batch_and_threads() {
    let (device, p) = with_variants(false, 30, 8, 1);
    let setup = device.setup;
    let one = run(&device, &setup, &p, &mut |_| {}).unwrap();
    assert!(one.passed());
    // 30 programs: seven shapes of 4 and one of 2.
    assert_eq!((one.programs, one.shapes, one.batches), (30, 8, 4));
    let (mut q, mut r) = (p, p);
    q.batch = 3;
    q.threads = 3;
    r.variants = 1;
    let many = run(&device, &setup, &q, &mut |_| {}).unwrap();
    assert_eq!(
        (many.programs, many.shapes, many.compared, many.undefined),
        (one.programs, one.shapes, one.compared, one.undefined)
    );
    // Other programs than without variants (the first shape's first program aside).
    let plain = run(&device, &setup, &r, &mut |_| {}).unwrap();
    assert_eq!((plain.programs, plain.shapes), (30, 30));
    assert_ne!(plain.compared, one.compared);
}

#[test]
fn a_campaign_with_variants_shrinks_a_failing_variant_to_a_program_that_still_fails() {
    let (device, mut p) = with_variants(true, 40, 8, 2);
    let setup = device.setup;
    p.shrink.failures = 40;
    p.shrink.steps = 400;
    let r = run(&device, &setup, &p, &mut |_| {}).unwrap();
    assert!(!r.passed());
    // A failure that is not its shape's first program (index % 4 != 0) is shrunk too.
    let f = r
        .failures
        .iter()
        .find(|f| f.index % 4 != 0)
        .expect("a failing variant");
    let (minimal, c) = f.minimal.as_ref().expect("shrunk");
    assert!(!c.ok());
    assert!(minimal.statements() <= f.program.statements());
    assert!(!passes_on(&device, minimal));
}

/// A device whose every run fails.
struct Lost;

impl Device for Lost {
    type Error = String;
    fn run(&self, _: usize, _: &[Program], _: &mut Times) -> Result<Vec<u32>, String> {
        Err("device lost".into())
    }
    fn subgroup_size(&self) -> SubgroupSize {
        size(8)
    }
}

#[test]
fn a_campaign_stops_at_its_time_limit_and_on_a_device_error() {
    let setup = Setup::new(Mode::Base, 8);
    let device = ModelDevice {
        setup,
        faulty: false,
    };
    let mut p = plan(1000, 1, 2);
    p.max_time = Some(std::time::Duration::ZERO);
    let r = run(&device, &setup, &p, &mut |_| {}).unwrap();
    assert!(r.stopped && r.programs == 0);
    match run(&Lost, &setup, &plan(10, 2, 2), &mut |_| {}) {
        Err(CampaignError::Device(e)) => assert_eq!(e, "device lost"),
        other => panic!("{:?}", other.map(|r| r.programs)),
    }
}

// ---------------------------------------------------------------------------------------------
// GLSL, and runs on a Vulkan device.

#[cfg(feature = "vulkan")]
mod device {
    use super::*;
    use lockstep::reconverge::device::{compile, run_programs, unsupported, VulkanDevice};
    use lockstep::reconverge::glsl::shader;
    use lockstep::vulkan::{compile_glsl, Context};
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;

    fn sample(n: usize) -> Vec<Program> {
        let mut runner = TestRunner::deterministic();
        let s = programs(GenConfig::default());
        (0..n)
            .map(|_| s.new_tree(&mut runner).unwrap().current())
            .collect()
    }

    #[test]
    fn emitted_shaders_compile_in_every_mode() {
        // ../shared/TOOLCHAIN.md: SUCF through GL_EXT_subgroup_uniform_control_flow, maximal
        // reconvergence through GL_EXT_spirv_intrinsics — the H100 run must not fail on syntax.
        let mut ps = sample(8);
        ps.push(allocation(0xf0f0));
        ps.push(allocation_fixed(0xf0f0));
        let shape = WorkgroupShape::new(128, 1, 1).unwrap();
        for mode in Mode::ALL {
            let src = shader(&ps, mode, shape, RecordLayout::new(64, 32));
            // The device path compiles without optimisation (src/reconverge/device.rs).
            let words = compile(&src, "reconverge").unwrap_or_else(|e| panic!("{mode}: {e}"));
            // With parameters read from a buffer too (--variants).
            let par = lockstep::reconverge::glsl::parametric_shader(
                &ps,
                mode,
                shape,
                RecordLayout::new(64, 32),
            );
            let pw = compile(&par.glsl, "reconverge").unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(execution_modes(&pw), execution_modes(&words), "{mode}");
            assert_eq!(words[0], 0x0723_0203);
            // The cached compile_glsl gives the same module.
            let cached =
                compile_glsl(&src, "reconverge", false).unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(*cached, *words, "{mode}");
            // The execution mode is in the module: MaximallyReconvergesKHR 6023, SUCF 4421.
            let want = match mode {
                Mode::Maximal => Some(6023),
                Mode::Sucf => Some(4421),
                Mode::Base => None,
            };
            let modes: Vec<u32> = execution_modes(&words);
            match want {
                Some(m) => assert!(modes.contains(&m), "{mode}: {modes:?}"),
                None => assert!(!modes.contains(&6023) && !modes.contains(&4421)),
            }
        }
    }

    /// The modes of every OpExecutionMode (opcode 16) in a module.
    fn execution_modes(words: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = 5;
        while i < words.len() {
            let (len, opcode) = ((words[i] >> 16) as usize, words[i] & 0xffff);
            if opcode == 16 && len >= 3 {
                out.push(words[i + 2]);
            }
            i += len.max(1);
        }
        out
    }

    fn context() -> Option<Context> {
        crate::support::device()
    }

    #[test]
    fn random_programs_in_base_mode_match_the_model_on_the_device() {
        let Some(ctx) = context() else { return };
        let setup = Setup::for_device(&ctx, Mode::Base);
        let ps = sample(24);
        let comps = run_programs(&ctx, &setup, &ps).unwrap();
        let compared: u64 = comps.iter().map(|c| c.compared).sum();
        for (p, c) in ps.iter().zip(&comps) {
            assert!(
                c.ok(),
                "{:?}\n{}",
                c.mismatches,
                shader(
                    std::slice::from_ref(p),
                    Mode::Base,
                    setup.shape,
                    setup.layout
                )
            );
        }
        assert!(compared > 500, "only {compared} values compared");
    }

    #[test]
    fn programs_of_one_shape_from_one_shader_give_what_each_compiled_alone_gives() {
        let Some(ctx) = context() else { return };
        let baked = Setup::for_device(&ctx, Mode::Base);
        let parametric = baked.with_parametric(true);
        // Three shapes, three programs each (the shape's own and two variants).
        let mut runner = TestRunner::deterministic();
        let mut ps = Vec::new();
        for p in sample(3) {
            ps.push(p.clone());
            for _ in 0..2 {
                ps.push(lockstep::reconverge::r#gen::variant(&p, &mut runner).unwrap());
            }
        }
        let src = lockstep::reconverge::glsl::parametric_shader(
            &ps,
            Mode::Base,
            parametric.shape,
            parametric.layout,
        );
        assert_eq!(src.shapes, 3);
        let one = run_programs(&ctx, &parametric, &ps).unwrap();
        let each = run_programs(&ctx, &baked, &ps).unwrap();
        for (k, (a, b)) in one.iter().zip(&each).enumerate() {
            assert!(
                a.ok() && b.ok(),
                "program {k}: {:?} {:?}",
                a.mismatches,
                b.mismatches
            );
            assert_eq!(
                (a.compared, a.undefined),
                (b.compared, b.undefined),
                "program {k}"
            );
        }
        assert!(one.iter().map(|c| c.compared).sum::<u64>() > 100);
    }

    /// A Vulkan device that gets subgroupAdd wrong: its real output, then corrupted.
    struct Broken<'a>(VulkanDevice<'a>, Setup);

    impl Device for Broken<'_> {
        type Error = lockstep::vulkan::VkError;
        fn run(
            &self,
            worker: usize,
            programs: &[Program],
            times: &mut Times,
        ) -> Result<Vec<u32>, Self::Error> {
            let mut words = self.0.run(worker, programs, times)?;
            break_subgroup_add(&self.1, programs, &mut words);
            Ok(words)
        }
        fn subgroup_size(&self) -> SubgroupSize {
            self.0.subgroup_size()
        }
    }

    #[test]
    fn a_campaign_on_the_device_passes_and_catches_a_broken_result() {
        let Some(ctx) = context() else { return };
        let contexts = [ctx, context().unwrap()];
        let setup = Setup::for_device(&contexts[0], Mode::Base);
        let device = VulkanDevice::new(&contexts, setup).unwrap();
        // Seed 22's first program has a subgroupAdd that base defines (16 subgroups of 8).
        let mut plan = plan(8, 1, 1);
        plan.seed = 22;
        let one = run(&device, &setup, &plan, &mut |_| {}).unwrap();
        assert!(one.passed(), "{:?}", one.failures);
        assert!(one.compared > 100, "{}", one.compared);
        // Two programs per shader on two threads and two contexts: the same values compared.
        plan.batch = 2;
        plan.threads = 2;
        let two = run(&device, &setup, &plan, &mut |_| {}).unwrap();
        assert_eq!((two.compared, two.undefined), (one.compared, one.undefined));
        assert!(two.times.shaderc > std::time::Duration::ZERO);
        // The same run with subgroupAdd results corrupted after the device wrote them.
        plan.shrink.failures = 1;
        plan.shrink.steps = 40;
        let broken = Broken(VulkanDevice::new(&contexts, setup).unwrap(), setup);
        let r = run(&broken, &setup, &plan, &mut |_| {}).unwrap();
        assert!(
            !r.passed() && r.failing_programs > 0,
            "no subgroupAdd compared"
        );
        let (minimal, c) = r.failures[0].minimal.as_ref().expect("shrunk");
        assert!(!c.ok(), "the minimal program still fails");
        assert!(minimal.tags().iter().any(|(_, n)| n == "subgroupAdd"));
        // Unbroken, the minimal program passes on the device.
        let ok = run_programs(&contexts[0], &setup, std::slice::from_ref(minimal)).unwrap();
        assert!(ok[0].ok(), "{:?}", ok[0].mismatches);
    }

    #[test]
    fn the_seed001_kernels_on_the_device() {
        let Some(ctx) = context() else { return };
        for mode in Mode::ALL {
            if let Some(why) = unsupported(&ctx.caps, mode) {
                // lavapipe: neither maximal reconvergence nor SUCF (../shared/TOOLCHAIN.md).
                let feature = match mode {
                    Mode::Maximal => !ctx.caps.maximal_reconvergence,
                    Mode::Sucf => !ctx.caps.subgroup_uniform_control_flow,
                    Mode::Base => false,
                };
                assert!(feature, "{mode} unsupported for another reason: {why}");
                continue;
            }
            let setup = Setup::for_device(&ctx, mode);
            let masks = [
                0x00ff_0f0f_0000_00b6u128 | 1 << 100,
                !0,
                0x8000_0000_0000_0001,
            ];
            let ps: Vec<Program> = masks
                .iter()
                .flat_map(|&m| [allocation(m), allocation_fixed(m)])
                .collect();
            let comps = run_programs(&ctx, &setup, &ps).unwrap();
            for c in &comps {
                assert!(c.ok(), "{mode}: {:?}", c.mismatches);
            }
            // Every result of the kernel that is correct under the mode is compared.
            let full = match mode {
                Mode::Maximal => [0, 1, 2, 3, 4, 5].to_vec(),
                Mode::Sucf => [1, 3, 5].to_vec(),
                Mode::Base => [3].to_vec(), // the all-needing mask keeps the workgroup uniform
            };
            for k in full {
                assert_eq!(comps[k].undefined, 0, "{mode}: program {k}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The CLI.

#[cfg(feature = "vulkan")]
mod cli {
    use crate::support::cmd::CargoBin;
    use lockstep::reconverge::device::unsupported;
    use lockstep::reconverge::Mode;
    use std::process::Command;

    fn lockstep() -> Command {
        Command::cargo_bin("lockstep").unwrap()
    }

    #[test]
    fn reconverge_rejects_bad_input_with_exit_64() {
        for (args, msg) in [
            (
                vec!["--mode", "strong"],
                "unknown reconvergence mode 'strong'",
            ),
            (
                vec!["--programs", "0"],
                "--programs must be in 1..=100000000",
            ),
            (vec!["--batch", "0"], "--batch must be in 1..=1024"),
            (vec!["--variants", "0"], "--variants must be in 1..=1024"),
            (vec!["--variants", "2000"], "--variants must be in 1..=1024"),
            (vec!["--threads", "0"], "--threads must be in 1..=1024"),
            (vec!["--contexts", "65"], "--contexts must be in 1..=64"),
            (vec!["--kernel", "seed002"], "unknown --kernel 'seed002'"),
            (
                vec!["--max-seconds", "-1"],
                "--max-seconds must be a positive number",
            ),
            (vec!["--seed", "x"], "invalid value 'x'"),
        ] {
            let out = lockstep().arg("reconverge").args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(64), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(msg), "{args:?}: {err}");
        }
    }

    #[test]
    fn reconverge_runs_base_mode_and_writes_a_json_report() {
        if crate::support::device().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let out = lockstep()
            .args([
                "reconverge",
                "--mode",
                "base",
                "--programs",
                "40",
                "--seed",
                "7",
                "--json",
            ])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains("programs run: 40"), "{text}");
        assert!(text.contains("mismatches: 0"), "{text}");
        // 8 programs per shape by default, one shape per shader on a CPU device.
        assert!(text.contains("(5 shapes, up to 8 programs each"), "{text}");
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(j["status"], "pass");
        assert_eq!(j["programs"], 40);
        assert_eq!(
            (j["shapes"].as_u64(), j["variants"].as_u64()),
            (Some(5), Some(8))
        );
        assert!(j["operations_compared"].as_u64().unwrap() > 0);
        assert_eq!(j["mode"], "base");
    }

    #[test]
    fn reconverge_reports_a_mode_the_device_lacks_as_unsupported() {
        // lavapipe has neither maximal reconvergence nor SUCF (../shared/TOOLCHAIN.md): exit 0
        // with the reason. On a device that has them, the mode runs.
        let Some(ctx) = crate::support::device() else {
            return;
        };
        for mode in [Mode::Maximal, Mode::Sucf] {
            let out = lockstep()
                .args(["reconverge", "--mode", mode.name(), "--programs", "4"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{mode}: {text}");
            match unsupported(&ctx.caps, mode) {
                Some(why) => {
                    assert!(text.contains("unsupported"), "{text}");
                    assert!(text.contains(&why), "{text}");
                }
                None => assert!(text.contains("mismatches: 0"), "{text}"),
            }
        }
    }
}

#[test]
fn the_shards_of_a_campaign_together_are_the_unsharded_campaign() {
    use lockstep::shard::Shard;
    // A faulty device, so that the failing programs (by index) are compared too.
    let (device, p) = with_variants(true, 40, 4, 2);
    let setup = device.setup;
    let p = Plan {
        shrink: ShrinkLimits {
            failures: 0,
            ..p.shrink
        },
        ..p
    };
    let whole = run(&device, &setup, &p, &mut |_| {}).unwrap();
    assert!(whole.failing_programs > 0);
    let mut programs = 0;
    let (mut compared, mut undefined, mut mismatches, mut failing) = (0, 0, 0, 0);
    let mut failed: Vec<u64> = Vec::new();
    for k in 1..=3 {
        let part = Plan {
            shard: Some(Shard { k, n: 3 }),
            ..p
        };
        let r = run(&device, &setup, &part, &mut |_| {}).unwrap();
        assert!(
            r.programs > 0 && r.programs < whole.programs,
            "shard {k}: {}",
            r.programs
        );
        programs += r.programs;
        compared += r.compared;
        undefined += r.undefined;
        mismatches += r.mismatches;
        failing += r.failing_programs;
        failed.extend(r.failures.iter().map(|f| f.index));
    }
    failed.sort();
    let whole_failed: Vec<u64> = whole.failures.iter().map(|f| f.index).collect();
    assert_eq!(
        (programs, compared, undefined, mismatches, failing),
        (
            whole.programs,
            whole.compared,
            whole.undefined,
            whole.mismatches,
            whole.failing_programs
        )
    );
    assert_eq!(failed, whole_failed);
}
