//! Seed 001: the allocation pattern of VK_KHR_shader_subgroup_uniform_control_flow
//! (../shared/seeds/001_eb301fa651939dfe.txt) as executor programs, and the lane-by-lane trace the
//! docs show.
//!
//! The original kernel reserves space for the invocations that need it with one atomic per
//! subgroup: ballot, bit count, elect, `atomicAdd`, broadcast of the base, exclusive bit count. It
//! relies on the invocations that entered `if (needs_space)` still executing together after the
//! inner `if (subgroupElect())` — which core Vulkan only promises when the whole workgroup was
//! converged at that `if`. The fixed kernel branches on `subgroupAny(needs_space)` instead, so the
//! branch is subgroup-uniform, and declares `[[subgroup_uniform_control_flow]]`.

use crate::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use crate::reconverge::exec::{execute, LaneMap, Mode, Val};
use crate::reconverge::program::{Cond, Operand, Program, SgOp, Stmt};

/// `if (needs_space)` (original) / the inner write `if (needs_space)` (fixed).
pub(crate) const IF_NEEDS_SPACE: u32 = 1;
/// `if (subgroupElect())`
pub(crate) const IF_ELECT: u32 = 2;
/// `if (subgroupAny(needs_space))` (fixed only)
pub(crate) const IF_ANY: u32 = 3;
/// The tags of seed 001's records: which statement of the kernel a record comes from
/// (`Stmt::Record`'s `tag` is [`Tag::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `subgroupAny(needs_space)` (fixed only)
    Any,
    /// `mask = subgroupBallot(needs_space)`
    Mask,
    /// `size = subgroupBallotBitCount(mask)`
    Size,
    /// `subgroupElect()`
    Elect,
    /// `base = atomicAdd(b.free, size)`
    Atomic,
    /// `base = subgroupBroadcastFirst(base)`
    Base,
    /// `offset = subgroupBallotExclusiveBitCount(mask)`
    Offset,
    /// the write `b.data[base + offset]` (the slot index is recorded)
    Slot,
}

impl Tag {
    const ALL: [Tag; 8] = [
        Tag::Any,
        Tag::Mask,
        Tag::Size,
        Tag::Elect,
        Tag::Atomic,
        Tag::Base,
        Tag::Offset,
        Tag::Slot,
    ];

    /// The record tag in the programs (10, 11, …: above the branch ids).
    pub fn code(self) -> u32 {
        10 + self as u32
    }

    /// The GLSL it stands for.
    pub(crate) fn glsl(self) -> &'static str {
        match self {
            Tag::Any => "subgroupAny(needs_space)",
            Tag::Mask => "mask = subgroupBallot(needs_space)",
            Tag::Size => "size = subgroupBallotBitCount(mask)",
            Tag::Elect => "subgroupElect()",
            Tag::Atomic => "base = atomicAdd(b.free, size)",
            Tag::Base => "base = subgroupBroadcastFirst(base)",
            Tag::Offset => "offset = subgroupBallotExclusiveBitCount(mask)",
            Tag::Slot => "b.data[base + offset] (the index)",
        }
    }
}

// Registers: r0 mask, r1 size, r2 base, r3 elect, r4 offset, r5 any.
const MASK: u8 = 0;
const SIZE: u8 = 1;
const BASE: u8 = 2;
const ELECT: u8 = 3;
const OFFSET: u8 = 4;
const ANY: u8 = 5;

/// The GLSL each tag stands for.
pub(crate) fn tag_name(tag: u32) -> &'static str {
    Tag::ALL
        .iter()
        .find(|t| t.code() == tag)
        .map_or("?", |t| t.glsl())
}

/// The body shared by both kernels, from the ballot to the broadcast and offset.
fn allocate(needs_space: u128) -> Vec<Stmt> {
    vec![
        Stmt::Op {
            tag: Tag::Mask.code(),
            op: SgOp::ballot(Cond::Mask(needs_space)),
            dst: Some(MASK),
        },
        Stmt::Op {
            tag: Tag::Size.code(),
            op: SgOp::bit_count(MASK),
            dst: Some(SIZE),
        },
        Stmt::Set {
            dst: BASE,
            value: Operand::Const(0),
        },
        Stmt::Op {
            tag: Tag::Elect.code(),
            op: SgOp::elect(),
            dst: Some(ELECT),
        },
        Stmt::If {
            id: IF_ELECT,
            cond: Cond::Reg(ELECT),
            then_branch: vec![Stmt::Atomic {
                tag: Tag::Atomic.code(),
                counter: 0,
                value: Operand::Reg(SIZE),
                dst: Some(BASE),
            }],
            else_branch: vec![],
        },
        Stmt::Op {
            tag: Tag::Base.code(),
            op: SgOp::broadcast_first(Operand::Reg(BASE)),
            dst: Some(BASE),
        },
        Stmt::Op {
            tag: Tag::Offset.code(),
            op: SgOp::exclusive_bit_count(MASK),
            dst: Some(OFFSET),
        },
    ]
}

fn write_slot() -> Stmt {
    Stmt::Store {
        tag: Tag::Slot.code(),
        value: Operand::Sum(BASE, OFFSET),
    }
}

/// The original kernel: `if (needs_space) { …allocate…; b.data[base + offset] = …; }`, where
/// invocation `i` needs space iff bit `i % 128` of `needs_space` is set.
pub fn allocation(needs_space: u128) -> Program {
    let mut body = allocate(needs_space);
    body.push(write_slot());
    Program {
        main: vec![Stmt::If {
            id: IF_NEEDS_SPACE,
            cond: Cond::Mask(needs_space),
            then_branch: body,
            else_branch: vec![],
        }],
        functions: vec![],
    }
}

/// The fixed kernel: `if (subgroupAny(needs_space)) { …allocate…; if (needs_space) { write } }`,
/// meant to run with `[[subgroup_uniform_control_flow]]`.
pub fn allocation_fixed(needs_space: u128) -> Program {
    let mut body = allocate(needs_space);
    body.push(Stmt::If {
        id: IF_NEEDS_SPACE,
        cond: Cond::Mask(needs_space),
        then_branch: vec![write_slot()],
        else_branch: vec![],
    });
    Program {
        main: vec![
            Stmt::Op {
                tag: Tag::Any.code(),
                op: SgOp::any(Cond::Mask(needs_space)),
                dst: Some(ANY),
            },
            Stmt::If {
                id: IF_ANY,
                cond: Cond::Reg(ANY),
                then_branch: body,
                else_branch: vec![],
            },
        ],
        functions: vec![],
    }
}

/// The example the docs trace: subgroup size 8, a 16-invocation workgroup (two subgroups);
/// invocations 1, 2, 4, 5 and 7 of subgroup 0 need space, none of subgroup 1.
pub(crate) const TRACE_NEEDS_SPACE: u128 = 0b1011_0110;

/// A markdown table of one execution: a row per recorded statement (in program order), a column
/// per invocation. Cells: the value, `-` where the invocation did not execute the statement,
/// `undef` where the model does not pin the value down, `?` where the invocation's own path is no
/// longer known (it branched on an undefined value), `A0` for the value atomic add 0 returned.
pub(crate) fn trace_table(
    program: &Program,
    map: &LaneMap,
    mode: Mode,
    name: &dyn Fn(u32) -> String,
) -> Result<String, crate::reconverge::ExecError> {
    let ex = execute(program, map, mode)?;
    let inv = map.shape().invocations();
    let mut s = String::from("| statement |");
    for i in 0..inv {
        s += &format!(" {i} |");
    }
    s += "\n|---|";
    s += &"---|".repeat(inv as usize);
    s += "\n| (subgroup, lane) |";
    for i in 0..inv {
        let p = map.placement(i);
        s += &format!(" {},{} |", p.subgroup, p.lane);
    }
    s += "\n";
    let mut reasons = std::collections::BTreeSet::new();
    for (tag, _) in program.tags() {
        s += &format!("| `{}` |", name(tag));
        for i in 0..inv as usize {
            let recs = &ex.records[i];
            let lost = ex.lost_at[i].unwrap_or(usize::MAX);
            let cells: Vec<String> = recs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.tag == tag)
                .map(|(k, r)| {
                    if k >= lost {
                        "?".to_string()
                    } else {
                        if let Val::Undefined(why) = r.value {
                            reasons.insert(why.to_string());
                        }
                        r.value.to_string()
                    }
                })
                .collect();
            let cell = if cells.is_empty() {
                if ex.lost_at[i].is_some() {
                    "?".to_string()
                } else {
                    "-".to_string()
                }
            } else {
                cells.join(", ")
            };
            s += &format!(" {cell} |");
        }
        s += "\n";
    }
    s += &format!(
        "\nFinal `b.free`: {}.",
        match ex.counters[0] {
            Val::Undefined(_) => "undefined".to_string(),
            v => v.to_string(),
        }
    );
    if !reasons.is_empty() {
        s += "\n\nWhy undefined:\n";
        for r in reasons {
            s += &format!("- {r}\n");
        }
    } else {
        s += "\n";
    }
    Ok(s)
}

/// The seed 001 example traced lane by lane under the three models, both kernels — markdown that
/// docs/semantics/reconvergence.md embeds (generated, so it cannot drift from the executor).
pub fn seed001_trace_markdown() -> String {
    let size = SubgroupSize::new(8).expect("8 is a valid subgroup size");
    let shape = WorkgroupShape::new(16, 1, 1).expect("16x1x1 is a valid workgroup");
    let wg = WorkgroupLayout::new(shape, size, LaneOrder::ROW_MAJOR).expect("row-major is valid");
    let map = LaneMap::new(&wg);
    let name = |t: u32| tag_name(t).to_string();
    let mut s = format!(
        "Subgroup size 8, a workgroup of 16 invocations (subgroups 0 and 1, row-major), \
         `needs_space` true for invocations {} (none in subgroup 1). `A0` is the value the first \
         atomic add returned (0 if no other subgroup ran its atomic first).\n",
        (0..16)
            .filter(|i| TRACE_NEEDS_SPACE >> i & 1 == 1)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (title, program) in [
        (
            "Original kernel: `if (needs_space) { … }`",
            allocation(TRACE_NEEDS_SPACE),
        ),
        (
            "Fixed kernel: `if (subgroupAny(needs_space)) { … if (needs_space) { write } }`",
            allocation_fixed(TRACE_NEEDS_SPACE),
        ),
    ] {
        s += &format!("\n### {title}\n");
        for mode in Mode::ALL {
            s += &format!("\n#### Under {}\n\n", mode_title(mode));
            match trace_table(&program, &map, mode, &name) {
                Ok(t) => s += &t,
                Err(e) => s += &format!("(execution failed: {e})\n"),
            }
        }
    }
    s
}

/// A heading for a mode.
pub(crate) fn mode_title(mode: Mode) -> &'static str {
    match mode {
        Mode::Maximal => "maximal reconvergence (SPV_KHR_maximal_reconvergence)",
        Mode::Sucf => "subgroup uniform control flow (SPV_KHR_subgroup_uniform_control_flow)",
        Mode::Base => "core Vulkan (uniform control flow of the whole workgroup only)",
    }
}
