//! Which buffers each construct may store to — for the paths an invocation did not take. Where an
//! invocation's branch is not pinned down (an undefined condition) or depends on the order
//! (an atomic's result), another allowed execution takes the other way and may store to elements
//! this execution never wrote; those elements must not be reported as holding a defined value
//! (issue 19: "one path is not all paths"). A decode-time pass: per construct header, the buffer
//! variables the stores and atomics of its blocks (and of the functions they call) reach.

use crate::spirv::inst::{BlockIdx, Func, Inst, Merge, ObjectId, Reg, Step, Term};
use crate::spirv::types::Storage;
use std::collections::{HashMap, HashSet};

/// One block's stores: its index, the buffer objects it stores to, the function it calls.
type BlockStores = (BlockIdx, Vec<ObjectId>, Option<u32>);

/// For every construct header (by label id): the objects of the storage classes `which` accepts
/// that its blocks may store to (buffers and images: what other executions may write for
/// [`crate::spirv::exec`]'s paths not taken; an invocation's own variables: what its lost path may
/// have left different in them when it reconverges).
pub fn construct_stores(
    funcs: &[Func],
    var_regs: &HashMap<Reg, ObjectId>,
    storages: &[Storage],
    which: impl Fn(Storage) -> bool,
) -> HashMap<u32, Vec<ObjectId>> {
    let buffers: Vec<ObjectId> = storages
        .iter()
        .enumerate()
        .filter(|(_, s)| which(**s))
        .map(|(i, _)| ObjectId::new(i as u32))
        .collect();
    // The object every pointer register points into, where one is known.
    let mut ptr: HashMap<Reg, Option<ObjectId>> =
        var_regs.iter().map(|(r, o)| (*r, Some(*o))).collect();
    for _ in 0..8 {
        let mut changed = false;
        for f in funcs {
            for b in &f.blocks {
                for i in &b.insts {
                    let (d, from) = match i {
                        // An index into an array of descriptors may reach any of them.
                        Inst::AccessChain { d, steps, .. }
                            if steps.iter().any(|s| matches!(s, Step::Descriptor { .. })) =>
                        {
                            if ptr.insert(*d, None) != Some(None) {
                                changed = true;
                            }
                            continue;
                        }
                        Inst::AccessChain { d, base, .. } => (*d, *base),
                        Inst::Move { d, a, .. } => (*d, *a),
                        _ => continue,
                    };
                    if let Some(o) = ptr.get(&from).copied()
                        && ptr.insert(d, o) != Some(o)
                    {
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let target = |r: &Reg| -> Vec<ObjectId> {
        match ptr.get(r) {
            Some(Some(o)) if buffers.contains(o) => vec![*o],
            Some(Some(_)) => Vec::new(),
            // A pointer from a parameter, a phi or a select: any buffer.
            _ => buffers.clone(),
        }
    };
    let own: Vec<Vec<BlockStores>> = funcs
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .enumerate()
                .map(|(bi, b)| {
                    let mut objs = Vec::new();
                    let mut calls = None;
                    for i in &b.insts {
                        match i {
                            Inst::Store { ptr, .. }
                            | Inst::ExtOut { ptr, .. }
                            | Inst::Atomic { ptr, .. } => objs.extend(target(ptr)),
                            Inst::ImageWrite { img, .. } => objs.extend(target(img)),
                            Inst::CopyMemory { dst, .. } => objs.extend(target(dst)),
                            Inst::Call { f, .. } => calls = Some(*f),
                            _ => {}
                        }
                    }
                    (bi as BlockIdx, objs, calls)
                })
                .collect()
        })
        .collect();
    // Every object a function may store to, callees included (no recursion in Vulkan).
    let mut of_func: Vec<Option<HashSet<ObjectId>>> = vec![None; funcs.len()];
    fn func_stores(
        f: usize,
        funcs: &[Func],
        own: &[Vec<BlockStores>],
        memo: &mut Vec<Option<HashSet<ObjectId>>>,
        depth: usize,
    ) -> HashSet<ObjectId> {
        if let Some(s) = &memo[f] {
            return s.clone();
        }
        let mut s = HashSet::new();
        for b in funcs[f].blocks.iter().flat_map(|b| &b.insts) {
            if let Inst::Call { f: c, .. } = b
                && depth < 64
                && (*c as usize) < funcs.len()
            {
                s.extend(func_stores(*c as usize, funcs, own, memo, depth + 1));
            }
        }
        for (_, objs, _) in &own[f] {
            s.extend(objs.iter().copied());
        }
        memo[f] = Some(s.clone());
        s
    }
    let mut out = HashMap::new();
    for (fi, f) in funcs.iter().enumerate() {
        for (h, hb) in f.blocks.iter().enumerate() {
            let merge = match hb.merge {
                Merge::None => continue,
                Merge::Selection(m) => m,
                Merge::Loop { merge, .. } => merge,
            };
            let mut objs: HashSet<ObjectId> = HashSet::new();
            for b in construct_blocks(f, h as BlockIdx, merge) {
                let (_, o, call) = &own[fi][b as usize];
                objs.extend(o.iter().copied());
                if let Some(c) = call
                    && (*c as usize) < funcs.len()
                {
                    objs.extend(func_stores(*c as usize, funcs, &own, &mut of_func, 0));
                }
            }
            if !objs.is_empty() {
                let mut v: Vec<ObjectId> = objs.into_iter().collect();
                v.sort();
                out.insert(hb.label, v);
            }
        }
    }
    out
}

/// The blocks of the construct headed by `h`: reachable from it without passing `merge`. A
/// selection header's own instructions run before its branch, the same on every path, so they are
/// no path's and the header is left out; a loop header runs again on each iteration and is the
/// loop's.
fn construct_blocks(f: &Func, h: BlockIdx, merge: BlockIdx) -> Vec<BlockIdx> {
    let selection = matches!(f.blocks[h as usize].merge, Merge::Selection(_));
    let mut seen = HashSet::from([h]);
    let mut stack = vec![h];
    let mut out = Vec::new();
    while let Some(b) = stack.pop() {
        if b != h || !selection {
            out.push(b);
        }
        for t in successors(&f.blocks[b as usize].term) {
            if t != merge && seen.insert(t) {
                stack.push(t);
            }
        }
    }
    out
}

fn successors(t: &Term) -> Vec<BlockIdx> {
    match t {
        Term::Branch(b) => vec![*b],
        Term::Cond { t, f, .. } => vec![*t, *f],
        Term::Switch { default, cases, .. } => {
            let mut v = vec![*default];
            v.extend(cases.iter().map(|c| c.1));
            v
        }
        Term::Return | Term::ReturnValue(_) | Term::Unreachable => Vec::new(),
    }
}
