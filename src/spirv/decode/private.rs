//! Private and non-private memory accesses (Vulkan spec, Appendix B "Memory Model", *Private vs.
//! Non-Private*): "By default, non-atomic memory operations are treated as *private* … for private
//! memory operations to be Location-Ordered between distinct agents requires using
//! system-synchronizes-with rather than shader-based synchronization." Atomics are always
//! non-private; a non-atomic access is non-private when it carries `NonPrivatePointer`
//! (`NonPrivateTexel` for an image) — in a module that declares the `Vulkan` memory model.
//!
//! A `GLSL450` module (glslang's output, and most SPIR-V) has no such bits: the memory model
//! chapter says "GLSL to SPIR-V compilers should map all (non-atomic) operations on a coherent
//! variable to Make{Pointer,Texel}{Available}{Visible} flags", and SPIRV-Tools' memory-model
//! upgrade does exactly that, making an access non-private when its pointer is `Coherent`
//! (or `Volatile`: glslang decorates a `volatile` block both) and every `Workgroup` access
//! non-private ("Workgroup storage class is implicitly coherent"). This file decides it the way
//! that pass does (`UpgradeMemoryModel::TraceInstruction` and `CheckType`): the pointer is traced
//! back to its variable through access chains and copies; the variable's decorations, those of
//! the struct members the chains step through, and those of any member of the type reached count.
//!
//! A pointer that comes from a function parameter is judged as the pass judges it, by the
//! parameter's own decorations and its pointer type, not by the callers' arguments. One decision
//! where the module cannot tell (documented in docs/interpreter.md): a WGSL kernel's accesses are
//! all non-private (WGSL's `storageBarrier` and `workgroupBarrier` order them within a workgroup,
//! and naga does not decorate its storage buffers `Coherent`).

use super::*;

/// How many instructions a pointer is traced back through before it is taken as non-private.
const TRACE_LIMIT: usize = 1000;

impl<'m> Decoder<'m> {
    /// Does the module declare the Vulkan memory model (`OpMemoryModel … Vulkan`)?
    fn vulkan_memory_model(&self) -> bool {
        self.m.memory_model.as_ref().is_some_and(|mm| {
            matches!(
                mm.operands.get(1),
                Some(Operand::MemoryModel(spirv::MemoryModel::Vulkan))
            )
        })
    }

    /// Notes that the instruction being decoded makes a private access on `sides` when its
    /// pointer (or image) `pid`, in storage of class `storage`, is private; `non_private`: the
    /// instruction carries `NonPrivatePointer` / `NonPrivateTexel`.
    pub(super) fn note_private(
        &mut self,
        pid: u32,
        storage: Storage,
        non_private: bool,
        sides: u8,
    ) {
        if self.private_access(pid, storage, non_private) {
            self.pending_private |= sides;
        }
    }

    /// Keeps what [`Decoder::note_private`] noted of the instruction just decoded, at `loc`.
    pub(super) fn record_private(&mut self, loc: LocId) {
        let p = std::mem::take(&mut self.pending_private);
        if p != 0 {
            self.private_locs.insert(loc, p);
        }
    }

    fn private_access(&self, pid: u32, storage: Storage, non_private: bool) -> bool {
        if self.opts.all_non_private
            || !matches!(
                storage,
                Storage::StorageBuffer
                    | Storage::PhysicalStorageBuffer
                    | Storage::Image
                    | Storage::Workgroup
            )
        {
            // Memory no other invocation writes (push constants, uniform buffers) or that is the
            // invocation's own: nothing to order.
            return false;
        }
        if self.vulkan_memory_model() {
            return !non_private;
        }
        if storage == Storage::Workgroup {
            return false;
        }
        !self.coherent(pid, &mut Vec::new(), &mut HashSet::new())
    }

    /// Whether pointer (or image) `id` reaches memory decorated `Coherent` or `Volatile`;
    /// `indices`: the access chain steps taken after it, last first.
    fn coherent(&self, id: u32, indices: &mut Vec<u32>, seen: &mut HashSet<u32>) -> bool {
        let Some(i) = self.insts.get(&id) else {
            return false;
        };
        if !seen.insert(id) {
            return false;
        }
        if seen.len() > TRACE_LIMIT {
            // A pointer made through more instructions than any compiler writes (malformed or
            // fuzzed input): taken as non-private rather than traced further.
            return true;
        }
        match i.class.opcode {
            // A parameter as the pass judges it: by its own decorations and its pointer type
            // (the caller's argument is not traced).
            SOp::Variable | SOp::FunctionParameter => {
                self.has_deco(id, Decoration::Coherent)
                    || self.has_deco(id, Decoration::Volatile)
                    || self.type_coherent(i.result_type.unwrap_or(0), indices)
            }
            SOp::AccessChain
            | SOp::InBoundsAccessChain
            | SOp::PtrAccessChain
            | SOp::InBoundsPtrAccessChain => {
                let skip = match i.class.opcode {
                    SOp::PtrAccessChain | SOp::InBoundsPtrAccessChain => 2,
                    _ => 1,
                };
                let n = indices.len();
                indices.extend(i.operands.iter().skip(skip).rev().filter_map(|o| match o {
                    Operand::IdRef(x) => Some(*x),
                    _ => None,
                }));
                let base = match i.operands.first() {
                    Some(Operand::IdRef(b)) => *b,
                    _ => return false,
                };
                let r = self.coherent(base, indices, seen);
                indices.truncate(n);
                r
            }
            _ => {
                // A pointer made from an address (loaded, converted, cast) starts at its type.
                let rt = i.result_type.unwrap_or(0);
                if self.is_physical_pointer(rt)
                    && !matches!(
                        i.class.opcode,
                        SOp::CopyObject | SOp::Select | SOp::Phi | SOp::CopyLogical
                    )
                {
                    return self.type_coherent(rt, indices);
                }
                // Copies, selects, phis, image loads: coherent when any pointer operand is.
                i.operands.iter().any(|o| match o {
                    Operand::IdRef(x) if self.is_pointer_like(*x) => {
                        self.coherent(*x, indices, seen)
                    }
                    _ => false,
                })
            }
        }
    }

    /// The defining instruction of type `t`.
    fn type_inst(&self, t: u32) -> Option<&'m Instruction> {
        self.insts.get(&t).copied()
    }

    fn is_physical_pointer(&self, t: u32) -> bool {
        self.type_inst(t).is_some_and(|ti| {
            ti.class.opcode == SOp::TypePointer
                && matches!(
                    ti.operands.first(),
                    Some(Operand::StorageClass(StorageClass::PhysicalStorageBuffer))
                )
        })
    }

    /// Is value `x` a pointer, an image or a sampled image (what a memory access goes through)?
    fn is_pointer_like(&self, x: u32) -> bool {
        let Some(t) = self.insts.get(&x).and_then(|i| i.result_type) else {
            return false;
        };
        self.type_inst(t).is_some_and(|ti| {
            matches!(
                ti.class.opcode,
                SOp::TypePointer | SOp::TypeImage | SOp::TypeSampledImage
            )
        })
    }

    /// SPIRV-Tools' `CheckType`: the struct members pointer type `t`'s steps `indices` (last
    /// first) go through, then every member of what they reach.
    fn type_coherent(&self, t: u32, indices: &[u32]) -> bool {
        let Some(mut e) = self.type_inst(t).and_then(pointee) else {
            return false;
        };
        for &ix in indices.iter().rev() {
            let Some(ei) = self.type_inst(e) else {
                return false;
            };
            e = match ei.class.opcode {
                SOp::TypePointer => match pointee(ei) {
                    Some(p) => p,
                    None => return false,
                },
                SOp::TypeStruct => {
                    let Some(m) = self.constant_index(ix) else {
                        return false;
                    };
                    if self.member_marked(e, m) {
                        return true;
                    }
                    match ei.operands.get(m as usize) {
                        Some(Operand::IdRef(mt)) => *mt,
                        _ => return false,
                    }
                }
                _ => match ei.operands.first() {
                    Some(Operand::IdRef(el)) => *el,
                    _ => return false,
                },
            };
        }
        self.any_member_coherent(e)
    }

    /// SPIRV-Tools' `CheckAllTypes`: does any struct within type `t` (through arrays and
    /// pointers) have a member decorated `Coherent` or `Volatile`?
    fn any_member_coherent(&self, t: u32) -> bool {
        let mut stack = vec![t];
        let mut seen = HashSet::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            let Some(ti) = self.type_inst(t) else {
                continue;
            };
            match ti.class.opcode {
                SOp::TypeStruct => {
                    if (0..ti.operands.len() as u32).any(|m| self.member_marked(t, m)) {
                        return true;
                    }
                    stack.extend(ti.operands.iter().filter_map(|o| match o {
                        Operand::IdRef(x) => Some(*x),
                        _ => None,
                    }));
                }
                SOp::TypePointer => stack.extend(pointee(ti)),
                SOp::TypeArray | SOp::TypeRuntimeArray | SOp::TypeVector | SOp::TypeMatrix => {
                    if let Some(Operand::IdRef(el)) = ti.operands.first() {
                        stack.push(*el);
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Is member `m` of struct type `s` decorated `Coherent` or `Volatile`?
    fn member_marked(&self, s: u32, m: u32) -> bool {
        self.mhas(s, m, Decoration::Coherent) || self.mhas(s, m, Decoration::Volatile)
    }

    /// The value of integer constant `id`, if it is one.
    fn constant_index(&self, id: u32) -> Option<u32> {
        let c = self.insts.get(&id)?;
        if c.class.opcode != SOp::Constant {
            return None;
        }
        match c.operands.first()? {
            Operand::LiteralBit32(v) => Some(*v),
            Operand::LiteralBit64(v) => u32::try_from(*v).ok(),
            _ => None,
        }
    }
}

/// The pointee of an `OpTypePointer`.
fn pointee(ti: &Instruction) -> Option<u32> {
    match ti.operands.get(1) {
        Some(Operand::IdRef(p)) => Some(*p),
        _ => None,
    }
}

/// Whether memory operands `ops` (the `MemoryAccess` masks of a load, store or copy, in order)
/// make the access at `k` (0: the first or only one; 1: a copy's source when it has its own)
/// non-private.
pub(super) fn non_private_bit(i: &Instruction, k: usize) -> bool {
    let masks: Vec<spirv::MemoryAccess> = i
        .operands
        .iter()
        .filter_map(|o| match o {
            Operand::MemoryAccess(m) => Some(*m),
            _ => None,
        })
        .collect();
    masks
        .get(k)
        .or(masks.first())
        .is_some_and(|m| m.contains(spirv::MemoryAccess::NON_PRIVATE_POINTER))
}
