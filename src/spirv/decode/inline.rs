//! Decode-time inlining of single-block functions (issue 22 §2: fewer calls, not faster ones).
//!
//! glslang's unoptimised output keeps every helper of the source as a function: the Gray-Scott
//! `subgroup_1d` shader makes 29 calls per workgroup, 25 of them to functions of one block that
//! end in their one return. Such a call changes nothing of control flow — every lane that enters
//! the block leaves it at its return, so the maximal-reconvergence point at the call's return
//! (SPV_KHR_maximal_reconvergence) joins exactly the lanes that called, and no lane can lose its
//! path inside a block with no branch — so its instructions are executed in the caller's block:
//! the callee's `Function` variables reset ([`Inst::EnterLocals`]), each argument moved into its
//! parameter register, the callee's instructions with their own locations (errors and findings
//! name the callee's lines as before), and the returned value moved into the call's result with
//! the taint a call's result has in a lane whose path is lost ([`Inst::CallReturn`]). Lane-
//! instruction counts stay the module's: the call and the callee's return are counted as executed
//! (`Block::folded`), the moves and resets are not (`Block::uncounted`).
//!
//! It runs after everything that reads the functions as the module wrote them (validation, the
//! stores each construct may make, loop definitions), so those are computed on the calls, as
//! before. Callees are inlined innermost first; a callee with more than [`MAX_CALLEE`]
//! instructions, or a caller block that would grow past [`MAX_BLOCK`], keeps its call.

use crate::spirv::inst::{Block, Func, Inst, LocId, Term};

/// Callees larger than this stay calls.
pub(super) const MAX_CALLEE: usize = 512;
/// A block is not grown past this many instructions by inlining.
pub(super) const MAX_BLOCK: usize = 8192;

/// Whether calls to `f` are inlined: one block, no phis, ending in a return, no calls left —
/// or one such block holding a loop unrolled at decode time (`unroll.rs`) and its merge block,
/// whose other blocks run only through it as written (*unrolled*: inlined only into a block
/// that holds an unrolled loop itself, below).
fn inlinable(f: &Func) -> Inlinable {
    let Some(b) = f.blocks.first() else {
        return Inlinable::No;
    };
    let one = b.phis.is_empty()
        && matches!(b.term, Term::Return | Term::ReturnValue(_))
        && b.insts.len() <= MAX_CALLEE
        && !b.insts.iter().any(|i| matches!(i, Inst::Call { .. }));
    match &b.written {
        _ if !one => Inlinable::No,
        None if f.blocks.len() == 1 => Inlinable::Yes,
        Some(w) if (1..f.blocks.len()).all(|i| w.blocks.contains(&(i as u32))) => {
            Inlinable::Unrolled
        }
        _ => Inlinable::No,
    }
}

/// How calls to a function are inlined.
#[derive(Clone, Copy, PartialEq)]
enum Inlinable {
    /// not
    No,
    /// everywhere: its one block is what runs
    Yes,
    /// into a block holding an unrolled loop (`Block::written`) alone: its one block is the form
    /// that runs while no invocation's path is lost, which is when such a block runs at all —
    /// and the block as written keeps the call
    Unrolled,
}

/// Inlines every call to a single-block function, innermost first, until none is left.
pub(super) fn inline_calls(funcs: &mut [Func]) {
    loop {
        let kinds: Vec<Inlinable> = funcs.iter().map(inlinable).collect();
        let mut changed = false;
        for fi in 0..funcs.len() {
            for bi in 0..funcs[fi].blocks.len() {
                let unrolled = funcs[fi].blocks[bi].written.is_some();
                let leaves: Vec<bool> = kinds
                    .iter()
                    .map(|k| *k == Inlinable::Yes || (unrolled && *k == Inlinable::Unrolled))
                    .collect();
                let calls = funcs[fi].blocks[bi].insts.iter().any(
                    |i| matches!(i, Inst::Call { f, .. } if leaves[*f as usize] && *f as usize != fi),
                );
                if calls {
                    let blk = std::mem::replace(&mut funcs[fi].blocks[bi], Block::new(0));
                    let (blk, any) = inline_block(blk, funcs, &leaves);
                    funcs[fi].blocks[bi] = blk;
                    changed |= any;
                }
            }
        }
        if !changed {
            return;
        }
    }
}

/// `blk` with its calls to the functions `leaves` marks replaced by their bodies (a call whose body
/// would take the block past [`MAX_BLOCK`] instructions stays a call); whether any call was.
fn inline_block(mut blk: Block, funcs: &[Func], leaves: &[bool]) -> (Block, bool) {
    let mut insts = Vec::with_capacity(blk.insts.len());
    let mut locs: Vec<LocId> = Vec::with_capacity(blk.locs.len());
    let (mut folded, mut uncounted) = (blk.folded, blk.uncounted);
    let mut any = false;
    for (inst, loc) in blk.insts.iter().zip(&blk.locs) {
        let Inst::Call { d, f, args } = inst else {
            insts.push(inst.clone());
            locs.push(*loc);
            continue;
        };
        let callee = &funcs[*f as usize];
        if !leaves[*f as usize] || insts.len() + callee.blocks[0].insts.len() > MAX_BLOCK {
            insts.push(inst.clone());
            locs.push(*loc);
            continue;
        }
        any = true;
        let body = &callee.blocks[0];
        if !callee.locals.is_empty() {
            insts.push(Inst::EnterLocals { f: *f });
            locs.push(*loc);
            uncounted += 1;
        }
        for ((&p, &n), &a) in callee
            .params
            .iter()
            .zip(&callee.param_slots)
            .zip(args.iter())
        {
            insts.push(Inst::Move { d: p, a, off: 0, n });
            locs.push(*loc);
            uncounted += 1;
        }
        insts.extend(body.insts.iter().cloned());
        locs.extend(body.locs.iter().copied());
        uncounted += body.uncounted;
        // The call and the callee's return, as executed.
        folded += body.folded + 2;
        if let (Some(d), Term::ReturnValue(v), Some(_)) = (d, &body.term, callee.ret) {
            insts.push(Inst::CallReturn {
                d: *d,
                v: *v,
                n: callee.ret_slots,
            });
            locs.push(*loc);
            uncounted += 1;
        }
    }
    if any {
        blk.insts = insts;
        blk.locs = locs;
        blk.folded = folded;
        blk.uncounted = uncounted;
    }
    (blk, any)
}
