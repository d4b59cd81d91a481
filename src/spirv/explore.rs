//! Branches on undefined values, explored both ways.
//!
//! SPIR-V gives an undefined value *some* value: "each consumption of `Result <id>` yields an
//! arbitrary, possibly different bit pattern" (SPIR-V 1.6, `OpUndef`), and neither SPIR-V nor
//! Vulkan makes a branch on such a value undefined behaviour. So an invocation that branches on
//! one takes one of the two ways, and what it then computes is defined wherever every way gives the
//! same value. The run that loses such an invocation's path marks what it computes undefined
//! (`lost::lose_lane`): sound, but coarser than the spec where both ways give the same value —
//! a GraphicsFuzz kernel returning 42.0 on either side of a branch on an uninitialised variable.
//!
//! Where that run met such branches, the dispatch runs again once per way they may go: in one run,
//! every invocation's `j`-th branch on an undefined value goes the same way (`choices[j]`), and
//! with `n` such branches per invocation at most, the `2ⁿ` runs take every sequence of ways. A unit
//! of memory that every run leaves defined and equal is defined, with that value
//! ([`refine`]); any other unit keeps what the first run said.
//!
//! Why one sequence for all invocations covers the mixed ones (invocation A one way, B the other):
//! only where, after the first such branch of a workgroup, its invocations cannot influence one
//! another except through a data race — no subgroup operation, barrier (control or memory) or
//! atomic runs in it from then on, on any way (`Dispatch::interacted`; Workgroup and buffer memory
//! shared without those is a race, which the race shadow reports). Before that branch every run is
//! the same; after it, what an invocation computes depends on its inputs and its own ways alone, so
//! in a mixed execution each invocation follows its path of the run with its own sequence (and an
//! interaction there would have been one in that run too). A unit only A writes is then covered by
//! A's `2ⁿ` sequences. A unit A and B both write holds, in run `r`, the values `A_r` and `B_r`; the
//! race shadow makes it undefined in a run where they differ, so where every run leaves it defined
//! and equal, `A_r = B_r = A_0` for every `r`, and every mixed choice writes that value too. One
//! more case: A writes the unit on some ways only and B on the others — every run writes it, an
//! execution where each takes its other way does not. So a unit is made defined only where the
//! same invocation is its lowest writer in every run (it writes it on all its ways, so in every
//! execution) or no run writes it.

use crate::spirv::report::BufferOutput;

/// The most branches on an undefined value one invocation may meet for the dispatch to be
/// explored (`2ⁿ` runs): past it, the paths stay lost.
pub(crate) const MAX_BRANCHES: u32 = 6;

/// The most lane-instructions all explored runs together may take (the first run's count times
/// `2ⁿ`): past it, the paths stay lost (about a second of this machine's interpreter).
pub(crate) const MAX_LANE_INSTRUCTIONS: u64 = 1 << 28;

/// Branches on undefined values explored both ways in a run ([`crate::spirv::ModelRun::explored`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explored {
    /// the most branches on an undefined value one invocation met
    pub branches: u32,
    /// runs of the dispatch, one per sequence of ways (`2^branches`)
    pub ways: u32,
    /// units of buffer memory the first run left undefined that every way leaves defined and
    /// equal: now defined
    pub units: u64,
}

/// Makes defined, in `out` (the first run's buffers), each unit the first run left undefined or
/// order-dependent that every run of `runs` (one per sequence of ways, their buffers in the same
/// order) leaves defined — exact or inexact — and equal: its bytes, taint and writer become the
/// first such run's. Returns how many units changed.
pub(crate) fn refine(out: &mut [BufferOutput], runs: &[Vec<BufferOutput>]) -> u64 {
    let Some(first) = runs.first() else {
        return 0;
    };
    let mut changed = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let unit = o.unit.max(1) as usize;
        for u in 0..o.taint.len() {
            if !o.taint[u].has_prov() {
                continue;
            }
            let bytes = u * unit..((u + 1) * unit).min(o.bytes.len());
            let way0 = &first[i];
            let same = runs.iter().all(|r| {
                let b = &r[i];
                b.taint.get(u).is_some_and(|t| !t.has_prov())
                    && b.bytes.get(bytes.clone()) == way0.bytes.get(bytes.clone())
            });
            if !same || !one_writer_on_every_way(runs, i, u) {
                continue;
            }
            o.bytes[bytes.clone()].copy_from_slice(&way0.bytes[bytes]);
            o.taint[u] = way0.taint[u];
            if let (Some(w), Some(w0)) = (o.writer.get_mut(u), way0.writer.get(u)) {
                *w = *w0;
            }
            changed += 1;
        }
    }
    changed
}

/// Is unit `u` of buffer `i` written on every way by one invocation, or on none? Where one
/// invocation writes it on some ways only and another on the others, an execution in which each
/// takes its other way writes it not at all — a value no run shows. The lowest writer is the same
/// in every run only where that invocation writes the unit on each of its ways, so in every
/// execution; where no run writes it, no execution does.
fn one_writer_on_every_way(runs: &[Vec<BufferOutput>], i: usize, u: usize) -> bool {
    let first = |r: &Vec<BufferOutput>| r[i].first_writer.get(u).copied().unwrap_or(u32::MAX);
    let w0 = first(&runs[0]);
    runs.iter().all(|r| first(r) == w0)
}
