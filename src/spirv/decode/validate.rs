//! The decoder's validate pass: the static rules a module must keep, checked once at decode time
//! — never per workgroup when it runs, and also in code that never runs — each error naming the
//! rule and, for an instruction, its source line.
//!
//! - Writes to read-only memory: a store, copy or atomic write whose pointer is rooted (through
//!   access chains and copies) at a `Uniform`, `PushConstant` or `Input` variable or a
//!   `NonWritable` one other than a storage buffer, and an image write to a `NonWritable` or sampled
//!   image. Pointers the decoder cannot root statically (phis, selects, pointers loaded from
//!   memory) are still checked by the executor at the access.
//! - Inputs: every input variable of the interface is a built-in, and one a compute shader has.
//! - Structured control flow: an `OpSwitch` has an `OpSelectionMerge`; a selection header ends in
//!   a branch.
//! - Variables: every `OpVariable` inside a function is of storage class `Function`.
//! - Calls: no recursion.

use super::*;

/// The built-in inputs a compute shader has (Vulkan, "Built-In Variables", the ones valid for the
/// `GLCompute` execution model) that the executor fills.
const COMPUTE_BUILTINS: &[BuiltIn] = &[
    BuiltIn::LocalInvocationId,
    BuiltIn::LocalInvocationIndex,
    BuiltIn::WorkgroupId,
    BuiltIn::NumWorkgroups,
    BuiltIn::GlobalInvocationId,
    BuiltIn::WorkgroupSize,
    BuiltIn::NumSubgroups,
    BuiltIn::SubgroupId,
    BuiltIn::SubgroupSize,
    BuiltIn::SubgroupLocalInvocationId,
    BuiltIn::SubgroupEqMask,
    BuiltIn::SubgroupGeMask,
    BuiltIn::SubgroupGtMask,
    BuiltIn::SubgroupLeMask,
    BuiltIn::SubgroupLtMask,
];

impl Decoder<'_> {
    /// The static rules of one body instruction (before it is decoded).
    pub(super) fn validate_inst(&self, i: &Instruction) -> Result<(), SpirvError> {
        use SOp as O;
        let op = i.class.opcode;
        match op {
            O::Store | O::CopyMemory | O::CopyMemorySized => {
                self.writable(id_at(i, 0)?, "a store to", false)
            }
            O::AtomicStore
            | O::AtomicExchange
            | O::AtomicCompareExchange
            | O::AtomicIIncrement
            | O::AtomicIDecrement
            | O::AtomicIAdd
            | O::AtomicISub
            | O::AtomicSMin
            | O::AtomicUMin
            | O::AtomicSMax
            | O::AtomicUMax
            | O::AtomicAnd
            | O::AtomicOr
            | O::AtomicXor
            | O::AtomicFAddEXT
            | O::AtomicFMinEXT
            | O::AtomicFMaxEXT => self.writable(id_at(i, 0)?, "an atomic write to", false),
            O::ImageWrite => self.writable(id_at(i, 0)?, "OpImageWrite to", true),
            _ => Ok(()),
        }
    }

    /// SPIR-V 2.16.1 (Universal Validation Rules): "All OpVariable instructions in a function
    /// must ... have a Storage Class operand of Function".
    pub(super) fn function_variable_class(
        &self,
        i: &Instruction,
        fname: &str,
    ) -> Result<(), SpirvError> {
        if !matches!(
            i.operands.first(),
            Some(Operand::StorageClass(StorageClass::Function))
        ) {
            return Err(SpirvError::malformed(format!(
                "OpVariable {} in function {fname} is not of storage class Function (SPIR-V 2.16.1: variables inside a function are Function variables)",
                self.name(i.result_id.unwrap_or(0))
            )));
        }
        Ok(())
    }

    /// The variable pointer (or image handle) `id` is rooted at, where the module says so
    /// statically: through access chains, copies, and loads of image handles.
    pub(super) fn root_variable(&self, mut id: u32) -> Option<ObjectId> {
        for _ in 0..1000 {
            if let Some(Id::Var(o)) = self.ids.get(&id) {
                return Some(*o);
            }
            let &(base, op) = self.bases.get(&id)?;
            if op == SOp::Load {
                // Only a handle (image, sampled image) stays in its variable's memory; a pointer
                // loaded from memory points wherever its value says.
                let t = self.type_of_value(id).ok()?;
                if !matches!(self.types.get(t), Type::Image(_) | Type::SampledImage(_)) {
                    return None;
                }
            }
            id = base;
        }
        None
    }

    /// A write through `pid` where its variable is read-only: an error naming the variable and the
    /// rule.
    fn writable(&self, pid: u32, what: &str, image: bool) -> Result<(), SpirvError> {
        let Some(obj) = self.root_variable(pid) else {
            return Ok(());
        };
        let o = &self.objects[obj.index()];
        if image && o.read_only {
            return Err(SpirvError::malformed(format!(
                "{what} {}, which the shader cannot write (NonWritable or a sampled image)",
                o.name
            )));
        }
        // An image refuses a write only as above; a read-only image returned already, so what
        // `refuses_write` says of the rest is the storage class's and decoration's rule.
        o.refuses_write(what).map_or(Ok(()), Err)
    }

    /// The whole-module rules, after every function is decoded.
    pub(super) fn validate(&self, funcs: &[Func], interface: &[u32]) -> Result<(), SpirvError> {
        for obj in interface {
            if let Some(Id::Var(o)) = self.ids.get(obj) {
                let o = &self.objects[o.index()];
                if o.storage != Storage::Input {
                    continue;
                }
                match o.builtin {
                    None => {
                        return Err(unsupported(format!(
                            "input variable {} without a BuiltIn decoration (compute shaders have only built-in inputs)",
                            o.name
                        )))
                    }
                    Some(b) if !COMPUTE_BUILTINS.contains(&b) => {
                        return Err(unsupported(format!(
                            "the built-in {b:?} of input variable {} (not a compute built-in)",
                            o.name
                        )))
                    }
                    Some(_) => {}
                }
            }
        }
        for f in funcs {
            for blk in &f.blocks {
                let at = || &self.locs[blk.term_loc.index()];
                match (&blk.merge, &blk.term) {
                    (Merge::None, Term::Switch { .. }) => {
                        return Err(SpirvError::unsupported(
                            "OpSwitch without OpSelectionMerge (SPIR-V 2.11: an OpSwitch is the last instruction of a selection header)",
                        )
                        .at(at()))
                    }
                    (
                        Merge::Selection(_),
                        Term::Return | Term::ReturnValue(_) | Term::Unreachable,
                    ) => {
                        return Err(SpirvError::malformed(
                            "a selection header must end with a branch or switch (SPIR-V 2.11: OpSelectionMerge precedes an OpBranchConditional or OpSwitch)",
                        )
                        .at(at()))
                    }
                    _ => {}
                }
            }
        }
        check_recursion(funcs)
    }
}
