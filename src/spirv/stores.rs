//! Which buffers each construct may store to — for the paths an invocation did not take. Where an
//! invocation's branch is not pinned down (an undefined condition) or depends on the order
//! (an atomic's result), another allowed execution takes the other way and may store to elements
//! this execution never wrote; those elements must not be reported as holding a defined value
//! (issue 19: "one path is not all paths"). A decode-time pass: per construct header, the buffer
//! variables the stores and atomics of its blocks (and of the functions they call) reach.

use crate::spirv::inst::{calls_post_order, BlockIdx, Func, Inst, Merge, ObjectId, Reg, Step};
use crate::spirv::types::Storage;
use std::collections::{HashMap, HashSet};

/// One block's stores: the objects it stores to, the functions it calls.
type BlockStores = (Vec<ObjectId>, Vec<u32>);

/// The objects each pointer register may point into ([`pointer_objects`]).
pub type PointerObjects = HashMap<Reg, Vec<u32>>;

/// The objects stores may reach, per construct and per function.
#[derive(Clone, Debug, Default)]
pub struct Stores {
    /// by construct header label: what the construct's blocks and their callees may store to
    pub constructs: HashMap<u32, Vec<ObjectId>>,
    /// by function index: what the function and its callees may store to
    pub functions: Vec<Vec<ObjectId>>,
}

/// For every construct header (by label id): the objects of the storage classes `which` accepts
/// that its blocks may store to (buffers and images: what other executions may write for
/// [`crate::spirv::exec`]'s paths not taken; an invocation's own variables: what its lost path may
/// have left different in them when it reconverges). `ptr` is what [`pointer_objects`] found.
pub fn construct_stores(
    funcs: &[Func],
    ptr: &PointerObjects,
    storages: &[Storage],
    which: impl Fn(Storage) -> bool,
) -> Stores {
    let buffers: Vec<ObjectId> = storages
        .iter()
        .enumerate()
        .filter(|(_, s)| which(**s))
        .map(|(i, _)| ObjectId::new(i as u32))
        .collect();
    let target = |r: &Reg| -> Vec<ObjectId> {
        match ptr.get(r) {
            Some(objs) => buffers
                .iter()
                .copied()
                .filter(|o| objs.binary_search(&o.get()).is_ok())
                .collect(),
            // A pointer from a parameter, a phi or a select: any buffer.
            None => buffers.clone(),
        }
    };
    let own: Vec<Vec<BlockStores>> = funcs
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .map(|b| {
                    let mut objs = Vec::new();
                    let mut calls = Vec::new();
                    for i in &b.insts {
                        match i {
                            Inst::Store { ptr, .. }
                            | Inst::ExtOut { ptr, .. }
                            | Inst::Atomic { ptr, .. } => objs.extend(target(ptr)),
                            Inst::ImageWrite { img, .. } => objs.extend(target(img)),
                            Inst::CopyMemory { dst, .. } => objs.extend(target(dst)),
                            Inst::Call { f, .. } => calls.push(*f),
                            _ => {}
                        }
                    }
                    (objs, calls)
                })
                .collect()
        })
        .collect();
    // Every object a function may store to, callees included (the decoder refused recursion).
    let mut of_func: Vec<Option<HashSet<ObjectId>>> = vec![None; funcs.len()];
    fn func_stores(
        f: usize,
        own: &[Vec<BlockStores>],
        memo: &mut Vec<Option<HashSet<ObjectId>>>,
    ) -> HashSet<ObjectId> {
        if let Some(s) = &memo[f] {
            return s.clone();
        }
        let mut s = HashSet::new();
        for (objs, calls) in &own[f] {
            s.extend(objs.iter().copied());
            for &c in calls {
                s.extend(func_stores(c as usize, own, memo));
            }
        }
        memo[f] = Some(s.clone());
        s
    }
    // Every function's stores, once (a sorted list), for the constructs that call it.
    let functions: Vec<Vec<ObjectId>> = (0..funcs.len())
        .map(|f| {
            let mut v: Vec<ObjectId> = func_stores(f, &own, &mut of_func).into_iter().collect();
            v.sort();
            v
        })
        .collect();
    // A construct's objects and blocks are collected with stamps (the header's number) rather
    // than sets: deeply nested constructs visit their inner blocks once per enclosing construct.
    let mut mark = vec![0u32; storages.len()];
    let mut seen: Vec<u32> = Vec::new();
    let mut stamp = 0u32;
    let mut out = HashMap::new();
    for (fi, f) in funcs.iter().enumerate() {
        seen.clear();
        seen.resize(f.blocks.len(), 0);
        for (h, hb) in f.blocks.iter().enumerate() {
            let merge = match hb.merge {
                Merge::None => continue,
                Merge::Selection(m) => m,
                Merge::Loop { merge, .. } => merge,
            };
            stamp += 1;
            let mut objs: Vec<ObjectId> = Vec::new();
            let mut add = |o: ObjectId| {
                if mark[o.index()] != stamp {
                    mark[o.index()] = stamp;
                    objs.push(o);
                }
            };
            for b in construct_blocks(f, h as BlockIdx, merge, &mut seen, stamp) {
                let (o, calls) = &own[fi][b as usize];
                o.iter().copied().for_each(&mut add);
                for &c in calls {
                    functions[c as usize].iter().copied().for_each(&mut add);
                }
            }
            // A way out of the construct other than its merge (a return, a break or continue of
            // an enclosing loop) goes on past it: the way not taken may run any store of the
            // function after the merge that the way taken skipped, or the other way round.
            if hb.escapes {
                functions[fi].iter().copied().for_each(&mut add);
            }
            if !objs.is_empty() {
                objs.sort();
                out.insert(hb.label, objs);
            }
        }
    }
    Stores {
        constructs: out,
        functions,
    }
}

/// The objects each pointer register may point into (sorted object indices), where they are
/// known: a variable's one object; a chain through an array of descriptors, the one a constant
/// index picks (none past the array: the access is out of bounds) or any of the array's; a copy,
/// its source's; a function's pointer parameter, those of the arguments of every call to it.
/// Pointers from phis and selects, and parameters of a function no call passes a known pointer,
/// are left out (they may point anywhere).
///
/// One pass suffices, callers before callees: every use of a result is dominated by its
/// definition, and "the order of blocks in a function must satisfy the rule that blocks appear
/// before all blocks they dominate" (SPIR-V 1.6, 2.16.1 "Universal Validation Rules") — only a phi
/// may name a result defined later, and a phi's pointer is not followed; and with no recursion
/// (refused by the decoder) every call to a function is seen before the function.
/// `konst` gives a register's value where it is a defined scalar constant.
pub fn pointer_objects(
    funcs: &[Func],
    var_regs: &HashMap<Reg, ObjectId>,
    konst: impl Fn(Reg) -> Option<u64>,
) -> PointerObjects {
    let mut ptr: HashMap<Reg, Vec<u32>> =
        var_regs.iter().map(|(r, o)| (*r, vec![o.get()])).collect();
    // Per function, per parameter: the union of what its calls pass (None: a call passes an
    // unknown pointer).
    let mut passed: Vec<Option<Vec<Option<Vec<u32>>>>> = vec![None; funcs.len()];
    for f in callers_first(funcs) {
        if let Some(args) = &passed[f] {
            for (p, objs) in funcs[f].params.iter().zip(args) {
                if let Some(objs) = objs {
                    ptr.insert(*p, objs.clone());
                }
            }
        }
        for i in funcs[f].blocks.iter().flat_map(|b| &b.insts) {
            let (d, objs) = match i {
                Inst::AccessChain { d, base, steps } => {
                    let Some(objs) = ptr.get(base) else { continue };
                    let descriptor = steps.iter().find_map(|s| match s {
                        Step::Descriptor {
                            index,
                            width,
                            signed,
                            count,
                            ..
                        } => Some((*index, *width, *signed, *count)),
                        _ => None,
                    });
                    match descriptor {
                        None => (*d, objs.clone()),
                        Some((index, width, signed, count)) => {
                            let first = objs[0];
                            let objs = match konst(index).map(|v| Step::index(v, width, signed)) {
                                Some(i) if (0..count as i64).contains(&i) => vec![first + i as u32],
                                Some(_) => Vec::new(),
                                None => (first..first + count).collect(),
                            };
                            (*d, objs)
                        }
                    }
                }
                Inst::Move { d, a, .. } => match ptr.get(a) {
                    Some(objs) => (*d, objs.clone()),
                    None => continue,
                },
                Inst::Call { f: c, args, .. } => {
                    let c = *c as usize;
                    let now: Vec<Option<Vec<u32>>> =
                        args.iter().map(|a| ptr.get(a).cloned()).collect();
                    passed[c] = Some(match passed[c].take() {
                        None => now,
                        Some(before) => before
                            .into_iter()
                            .zip(now)
                            .map(|(b, n)| match (b, n) {
                                (Some(mut b), Some(n)) => {
                                    b.extend(n);
                                    b.sort_unstable();
                                    b.dedup();
                                    Some(b)
                                }
                                _ => None,
                            })
                            .collect(),
                    });
                    continue;
                }
                _ => continue,
            };
            ptr.insert(d, objs);
        }
    }
    ptr
}

/// The functions' indices, every caller before its callees (a reversed post-order of the call
/// graph; the decoder refused recursion).
fn callers_first(funcs: &[Func]) -> Vec<usize> {
    let (mut order, _) = calls_post_order(funcs, 0..funcs.len());
    order.reverse();
    order
}

/// The blocks of the construct headed by `h`: reachable from it without passing `merge`. A
/// selection header's own instructions run before its branch, the same on every path, so they are
/// no path's and the header is left out; a loop header runs again on each iteration and is the
/// loop's.
/// `seen` holds a stamp per block of `f`; a block is seen when it holds `stamp`, which must be
/// new for each call.
fn construct_blocks(
    f: &Func,
    h: BlockIdx,
    merge: BlockIdx,
    seen: &mut [u32],
    stamp: u32,
) -> Vec<BlockIdx> {
    let selection = matches!(f.blocks[h as usize].merge, Merge::Selection(_));
    seen[h as usize] = stamp;
    let mut stack = vec![h];
    let mut out = Vec::new();
    while let Some(b) = stack.pop() {
        if b != h || !selection {
            out.push(b);
        }
        for t in f.blocks[b as usize].term.successors() {
            if t != merge && seen[t as usize] != stamp {
                seen[t as usize] = stamp;
                stack.push(t);
            }
        }
    }
    out
}
