//! Extracts read in place. A composite extract (`Inst::Move` of some slots of a register) whose
//! result is read only by its block's instructions before the register it reads is written again
//! needs no copy: its uses can read those slots where they are, through a *view* — a register
//! with no rows of its own ([`crate::spirv::inst::RegView`]; the register file's "Views"). The promotion pass makes
//! them ([`super::promote`]), as it renames a whole copy to its source.

use std::collections::{HashMap, HashSet};

use super::promote::term_reads;
use crate::spirv::inst::{Block, Inst, Reg};
use crate::spirv::operands::Role;

/// The views a pass made.
#[derive(Default)]
pub(super) struct Views {
    /// each view: its owner and the owner's first slot it reads
    of: HashMap<Reg, (Reg, u32)>,
    /// the view of (owner, first slot, slots), made once
    made: HashMap<(Reg, u32, u32), Reg>,
}

impl Views {
    /// Where `to` is a view: the register whose writes change what it reads.
    pub(super) fn owner(&self, to: Reg) -> Option<Reg> {
        self.of.get(&to).map(|v| v.0)
    }

    /// The view of slots `off..off + n` of `a` (of its owner, where `a` is a view itself), made by
    /// `make(owner, slot)` where there is none yet.
    pub(super) fn view(
        &mut self,
        a: Reg,
        off: u32,
        n: u32,
        make: impl FnOnce(Reg, u32) -> Reg,
    ) -> Reg {
        let (of, base) = self.of.get(&a).copied().unwrap_or((a, 0));
        let slot = base + off;
        if let Some(v) = self.made.get(&(of, slot, n)) {
            return *v;
        }
        let view = make(of, slot);
        self.of.insert(view, (of, slot));
        self.made.insert((of, slot, n), view);
        view
    }
}

/// Is register `d`, as instruction `at` of `b` defines it, read only by the block's instructions
/// before its next definition (not by its terminator, not after it — `live_out` — and not after a
/// call), and `to` not written before the last such read (`through_last`: nor by it) — by an
/// instruction, or as the register of a carried variable a store writes (`carry_of`)?
pub(super) fn stable(
    b: &Block,
    live_out: &HashSet<Reg>,
    at: usize,
    d: Reg,
    to: Reg,
    carry_of: &HashMap<Reg, Reg>,
    through_last: bool,
) -> bool {
    let insts = &b.insts;
    let mut last = at;
    let mut called = false;
    let mut redefined = false;
    for (j, i) in insts.iter().enumerate().skip(at + 1) {
        let mut reads = false;
        i.operands(|role, r| reads |= role == Role::Use && r == d);
        if reads {
            if called {
                return false;
            }
            last = j;
        }
        if i.def() == Some(d) {
            redefined = true;
            break;
        }
        called |= matches!(i, Inst::Call { .. });
    }
    if !redefined && (live_out.contains(&d) || term_reads(&b.term).contains(&d)) {
        return false;
    }
    let end = if through_last {
        last + 1
    } else {
        last.max(at + 1)
    };
    insts[at + 1..end].iter().all(|i| {
        i.def() != Some(to)
            && !matches!(i, Inst::Store { ptr, .. } if carry_of.get(ptr) == Some(&to))
    })
}
