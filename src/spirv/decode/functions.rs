//! Functions and structured control flow, value operands, and the one `match` that routes every
//! body instruction to its family.

use super::*;

impl Decoder<'_> {
    // ---------------------------------------------------------------- functions

    pub(super) fn functions(&mut self, _entry: u32) -> Result<Vec<Func>, SpirvError> {
        // Pass 1: every function's id, every result's type and opcode, every register.
        for (k, f) in self.m.functions.iter().enumerate() {
            let def = f
                .def
                .as_ref()
                .ok_or_else(|| SpirvError::malformed("a function without OpFunction"))?;
            let fid = def.result_id.unwrap_or(0);
            self.ids.insert(fid, Id::Func(k as FuncIdx));
            for p in &f.parameters {
                if let (Some(r), Some(t)) = (p.result_id, p.result_type) {
                    self.defs.insert(r, (t, SOp::FunctionParameter));
                }
            }
            for b in &f.blocks {
                for i in &b.instructions {
                    if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                        self.defs.insert(r, (t, i.class.opcode));
                    }
                    for o in &i.operands {
                        if let Operand::IdRef(x) = o {
                            self.used.insert(*x);
                        }
                    }
                    if let (
                        Some(r),
                        SOp::AccessChain
                        | SOp::InBoundsAccessChain
                        | SOp::PtrAccessChain
                        | SOp::InBoundsPtrAccessChain
                        | SOp::CopyObject
                        | SOp::Load
                        | SOp::SampledImage
                        | SOp::Image,
                        Some(Operand::IdRef(base)),
                    ) = (i.result_id, i.class.opcode, i.operands.first())
                    {
                        self.bases.insert(r, (*base, i.class.opcode));
                    }
                }
            }
        }
        let mut defs: Vec<(u32, u32, SOp)> =
            self.defs.iter().map(|(r, (t, o))| (*r, *t, *o)).collect();
        defs.sort();
        for (r, t, o) in defs {
            if o == SOp::Variable {
                continue; // pointers to function variables become constant registers (pass 2)
            }
            let tid = self.ty(t)?;
            let n = self.types.slots(tid)?;
            let reg = self.new_reg(n);
            self.regs.insert(r, reg);
        }
        // Pass 2: decode.
        let mut out = Vec::with_capacity(self.m.functions.len());
        for k in 0..self.m.functions.len() {
            let f = &self.m.functions[k];
            out.push(self.function(f)?);
        }
        Ok(out)
    }

    pub(super) fn function(&mut self, f: &rspirv::dr::Function) -> Result<Func, SpirvError> {
        let def = f.def.as_ref().expect("checked in pass 1");
        let fid = def.result_id.unwrap_or(0);
        let fname = self.name(fid);
        let ret_ty = self.ty(def.result_type.unwrap_or(0))?;
        let ret_slots = self.types.slots(ret_ty)?;
        let ret = (ret_slots > 0).then(|| self.new_reg(ret_slots));
        let (params, param_slots) = self.params(f)?;
        let labels: HashMap<u32, BlockIdx> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(k, b)| {
                (
                    b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0),
                    k as BlockIdx,
                )
            })
            .collect();
        if f.blocks.is_empty() {
            return Err(unsupported(format!(
                "function {fname} without a body (linkage)"
            )));
        }
        let mut blocks = Vec::with_capacity(f.blocks.len());
        let mut locals = Vec::new();
        let mut has_phis = false;
        let mut line: Option<(Option<String>, u32)> = None;
        for b in &f.blocks {
            let label = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            let mut blk = Block::new(label);
            let block_of = |id: u32| -> Result<BlockIdx, SpirvError> {
                labels.get(&id).copied().ok_or_else(|| {
                    SpirvError::malformed(format!("branch to %{id}, not a block of this function"))
                })
            };
            for i in &b.instructions {
                let op = i.class.opcode;
                if self.line_change(i, &mut line) {
                    continue;
                }
                let loc = self.new_loc(i, &line, label);
                let at = self.locs[loc.index()].clone();
                let r: Result<(), SpirvError> = (|| {
                    match op {
                        SOp::Phi => {
                            has_phis = true;
                            let d = self.reg(i.result_id.unwrap_or(0))?;
                            let mut inc = Vec::new();
                            for pair in i.operands.chunks(2) {
                                if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                                    inc.push((block_of(*p)?, self.value(*v)?));
                                }
                            }
                            blk.phis.push(Phi {
                                d,
                                n: self.reg_slots[d.index()],
                                incoming: inc.into_boxed_slice(),
                            });
                        }
                        SOp::SelectionMerge => {
                            blk.merge = Merge::Selection(block_of(id_at(i, 0)?)?);
                            self.constructs.insert(label, loc);
                        }
                        SOp::LoopMerge => {
                            blk.merge = Merge::Loop {
                                merge: block_of(id_at(i, 0)?)?,
                                cont: block_of(id_at(i, 1)?)?,
                            };
                            self.constructs.insert(label, loc);
                        }
                        SOp::Branch
                        | SOp::BranchConditional
                        | SOp::Switch
                        | SOp::Return
                        | SOp::ReturnValue
                        | SOp::Unreachable => {
                            if op == SOp::BranchConditional {
                                // A branch without a merge of its own (a loop's exit test) is
                                // named by its own line.
                                self.constructs.entry(label).or_insert(loc);
                            }
                            blk.term = self.terminator(i, &block_of)?;
                            blk.term_loc = loc;
                        }
                        SOp::Kill | SOp::TerminateInvocation | SOp::DemoteToHelperInvocation => {
                            return Err(unsupported(format!(
                                "{} (a fragment-shader instruction)",
                                op_name(op)
                            )))
                        }
                        SOp::Variable => {
                            self.function_variable_class(i, &fname)?;
                            let obj = self.variable(i, Some(&fname))?;
                            locals.push(obj);
                            let rid = i.result_id.unwrap_or(0);
                            let r = self.const_reg(&ConstVal::defined(
                                0,
                                vec![crate::spirv::memory::Ptr::new(obj, 0).bits()],
                            ));
                            self.regs.insert(rid, r);
                            self.var_regs.insert(r, obj);
                        }
                        _ => {
                            self.validate_inst(i)?;
                            let inst = self.inst(i)?;
                            self.record_private(loc);
                            for pre in std::mem::take(&mut self.prelude) {
                                blk.insts.push(pre);
                                blk.locs.push(loc);
                            }
                            if let Some(inst) = inst {
                                blk.insts.push(inst);
                                blk.locs.push(loc);
                            } else if i
                                .result_id
                                .and_then(|id| self.regs.get(&id))
                                .is_some_and(|r| self.folded_chains.contains_key(r))
                            {
                                blk.folded += 1;
                            }
                        }
                    }
                    Ok(())
                })();
                r.map_err(|e| e.at(&at))?;
                // A folded access chain's register is a constant: the same on every path.
                if op != SOp::Variable
                    && let Some(r) = i.result_id.and_then(|id| self.regs.get(&id))
                    && !self.folded_chains.contains_key(r)
                {
                    blk.defs.push(*r);
                }
            }
            blocks.push(blk);
        }
        construct_extents(&mut blocks);
        Ok(Func {
            name: fname,
            params,
            param_slots,
            blocks,
            locals,
            ret_slots,
            ret,
            has_phis,
        })
    }

    /// A function's parameter registers and their slots (pointer parameters get the default
    /// matrix layout).
    fn params(&mut self, f: &rspirv::dr::Function) -> Result<(Vec<Reg>, Vec<u32>), SpirvError> {
        let mut params = Vec::new();
        let mut param_slots = Vec::new();
        for p in &f.parameters {
            let r = p.result_id.unwrap_or(0);
            let reg = self.reg(r)?;
            params.push(reg);
            param_slots.push(self.reg_slots[reg.index()]);
            let t = self.ty(p.result_type.unwrap_or(0))?;
            if matches!(self.types.get(t), Type::Pointer { .. }) {
                self.ptr_layout.insert(r, MatrixLayout::default());
            }
        }
        Ok((params, param_slots))
    }

    /// Follows `OpLine`, `OpNoLine` and NonSemantic.Shader.DebugInfo.100's `DebugLine` /
    /// `DebugNoLine` (as `OpLine`): true where `i` is one of them (it only moves `line`).
    fn line_change(&self, i: &Instruction, line: &mut Option<(Option<String>, u32)>) -> bool {
        let op = i.class.opcode;
        match op {
            SOp::Line => {
                let file = match i.operands.first() {
                    Some(Operand::IdRef(s)) => match self.ids.get(s) {
                        Some(Id::Str(s)) => Some(s.clone()),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(Operand::LiteralBit32(l)) = i.operands.get(1) {
                    *line = Some((file.or_else(|| self.file.clone()), *l));
                }
                return true;
            }
            SOp::NoLine => {
                *line = None;
                return true;
            }
            // NonSemantic.Shader.DebugInfo.100's DebugLine / DebugNoLine, as OpLine.
            SOp::ExtInst
                if self.debug_info_set.is_some()
                    && i.operands.first() == self.debug_info_set.map(Operand::IdRef).as_ref() =>
            {
                let num = match i.operands.get(1) {
                    Some(Operand::LiteralExtInstInteger(n)) | Some(Operand::LiteralBit32(n)) => *n,
                    _ => 0,
                };
                if num == crate::words::debug_info::LINE {
                    let file = match i.operands.get(2) {
                        Some(Operand::IdRef(src)) => {
                            self.debug_sources
                                .get(src)
                                .and_then(|f| match self.ids.get(f) {
                                    Some(Id::Str(s)) => Some(s.clone()),
                                    _ => None,
                                })
                        }
                        _ => None,
                    };
                    let start = match i.operands.get(3) {
                        Some(Operand::IdRef(c)) => self.const_u32(*c).ok(),
                        _ => None,
                    };
                    if let Some(l) = start {
                        *line = Some((file.or_else(|| self.file.clone()), l));
                    }
                } else if num == crate::words::debug_info::NO_LINE {
                    *line = None;
                }
                return true;
            }
            _ => {}
        }
        false
    }

    /// A new location for body instruction `i` of block `label`, at the current `line` (a
    /// store's at its statement's line).
    fn new_loc(
        &mut self,
        i: &Instruction,
        line: &Option<(Option<String>, u32)>,
        label: u32,
    ) -> LocId {
        let loc = LocId::new(self.locs.len() as u32);
        let op = i.class.opcode;
        let file = line
            .as_ref()
            .and_then(|l| l.0.clone())
            .or_else(|| self.file.clone());
        // A store's line is its statement's (glslang gives the line of a statement's last
        // argument, or of a declaration, just before the store of a statement written over
        // several lines): found in the embedded source where there is one.
        let stores = matches!(
            op,
            SOp::Store | SOp::CopyMemory | SOp::CopyMemorySized | SOp::AtomicStore
        );
        let at = match (line, stores) {
            (Some((_, l)), true) => Some(self.statement_line(file.as_deref(), *l)),
            (l, _) => l.as_ref().map(|l| l.1),
        };
        let names = self.loc_names(i.result_id, Some(label));
        self.locs.push(Location {
            file,
            line: at,
            op: op_name(op),
            id: i.result_id,
            block: Some(label),
            names,
        });
        loc
    }

    /// The terminator `i` ends its block with.
    fn terminator(
        &mut self,
        i: &Instruction,
        block_of: &dyn Fn(u32) -> Result<BlockIdx, SpirvError>,
    ) -> Result<Term, SpirvError> {
        Ok(match i.class.opcode {
            SOp::Branch => Term::Branch(block_of(id_at(i, 0)?)?),
            SOp::BranchConditional => Term::Cond {
                c: self.value(id_at(i, 0)?)?,
                t: block_of(id_at(i, 1)?)?,
                f: block_of(id_at(i, 2)?)?,
            },
            SOp::Switch => {
                let sel_id = id_at(i, 0)?;
                let w = self.scalar_of(self.type_of_value(sel_id)?)?.bits() as u8;
                let default = block_of(id_at(i, 1)?)?;
                let mut cases = Vec::new();
                let mut k = 2;
                while k < i.operands.len() {
                    // rspirv reads each literal at the selector's width (a 64-bit selector's
                    // two words come as one `LiteralBit64`).
                    let lit = match &i.operands[k] {
                        Operand::LiteralBit32(x) => *x as u64,
                        Operand::LiteralBit64(x) => *x,
                        _ => return Err(SpirvError::malformed("OpSwitch literal")),
                    };
                    let target = match i.operands.get(k + 1) {
                        Some(Operand::IdRef(t)) => block_of(*t)?,
                        _ => return Err(SpirvError::malformed("OpSwitch target")),
                    };
                    cases.push((lit & scalar::mask(w), target));
                    k += 2;
                }
                Term::Switch {
                    sel: self.value(sel_id)?,
                    w,
                    default,
                    cases: cases.into_boxed_slice(),
                }
            }
            SOp::Return => Term::Return,
            SOp::ReturnValue => Term::ReturnValue(self.value(id_at(i, 0)?)?),
            SOp::Unreachable => Term::Unreachable,
            other => return Err(misrouted(other, "terminator")),
        })
    }

    pub(super) fn reg(&self, id: u32) -> Result<Reg, SpirvError> {
        self.regs
            .get(&id)
            .copied()
            .ok_or_else(|| SpirvError::malformed(format!("%{id} is not a value")))
    }

    /// The register of a value operand: an SSA value, a constant or a global variable's pointer.
    pub(super) fn value(&mut self, id: u32) -> Result<Reg, SpirvError> {
        if let Some(r) = self.regs.get(&id) {
            return Ok(*r);
        }
        match self.ids.get(&id).cloned() {
            Some(Id::Const(c)) => {
                let r = self.const_reg(&c);
                self.regs.insert(id, r);
                Ok(r)
            }
            Some(Id::Var(o)) => {
                let r = self.const_reg(&ConstVal::defined(
                    0,
                    vec![crate::spirv::memory::Ptr::new(o, 0).bits()],
                ));
                self.regs.insert(id, r);
                self.var_regs.insert(r, o);
                Ok(r)
            }
            _ => Err(SpirvError::malformed(format!("%{id} is not a value"))),
        }
    }

    pub(super) fn type_of_value(&self, id: u32) -> Result<TypeId, SpirvError> {
        if let Some((t, _)) = self.defs.get(&id) {
            return self.ty(*t);
        }
        match self.ids.get(&id) {
            Some(Id::Const(c)) => Ok(c.ty),
            Some(Id::Var(o)) => {
                // the variable's pointer type is not kept; callers of this only need value types
                Ok(self.objects[o.index()].ty)
            }
            _ => Err(SpirvError::malformed(format!("%{id} has no type"))),
        }
    }

    /// The element stride of pointer `id` for OpPtrAccessChain and OpPtrDiff: its pointer type's
    /// ArrayStride, else its pointee's size rounded up to the pointee's alignment.
    ///
    /// Only explicitly laid out storage classes take the decoration: Function, Private and
    /// Workgroup memory have none (SPV_KHR_workgroup_memory_explicit_layout lays out only
    /// Block-decorated Workgroup variables, which a pointer does not tell), and a stride decorated
    /// there is ignored (the Vulkan CTS's `ptr_access_chain/workgroup_bad_stride`: "This
    /// decoration should be ignored").
    pub(super) fn ptr_stride(
        &self,
        id: u32,
        pointee: TypeId,
        m: MatrixLayout,
    ) -> Result<u32, SpirvError> {
        let (_, _, storage) = self.pointee(id)?;
        let explicit = !matches!(
            storage,
            Storage::Function | Storage::Private | Storage::Workgroup
        );
        if let (true, Some((t, _))) = (explicit, self.defs.get(&id))
            && let Some(s) = self.deco_lit(*t, Decoration::ArrayStride)
        {
            return Ok(s);
        }
        let (size, align) = self.types.size_align(pointee, m)?;
        Ok(size.div_ceil(align.max(1)) * align.max(1))
    }

    /// The pointee type of a pointer operand (and its matrix layout context).
    pub(super) fn pointee(&self, id: u32) -> Result<(TypeId, MatrixLayout, Storage), SpirvError> {
        let m = self.ptr_layout.get(&id).copied().unwrap_or_default();
        if let Some((t, _)) = self.defs.get(&id)
            && let Type::Pointer { pointee, storage } = self.types.get(self.ty(*t)?)
        {
            return Ok((*pointee, m, *storage));
        }
        if let Some(Id::Var(o)) = self.ids.get(&id) {
            let o = &self.objects[o.index()];
            return Ok((o.ty, m, o.storage));
        }
        Err(SpirvError::malformed(format!("%{id} is not a pointer")))
    }

    pub(super) fn sv_of(&self, id: u32) -> Result<(Scalar, u32), SpirvError> {
        let t = self.type_of_value(id)?;
        self.types
            .scalar_vector(t)
            .ok_or_else(|| SpirvError::malformed(format!("%{id} is not a scalar or vector")))
    }

    pub(super) fn result_sv(&self, i: &Instruction) -> Result<(Scalar, u32), SpirvError> {
        let t = self.ty(i.result_type.unwrap_or(0))?;
        self.types
            .scalar_vector(t)
            .ok_or_else(|| SpirvError::malformed("result is not a scalar or vector"))
    }

    pub(super) fn is_contractible(&self, id: u32) -> bool {
        matches!(
            self.defs.get(&id),
            Some((
                _,
                SOp::FMul
                    | SOp::VectorTimesScalar
                    | SOp::MatrixTimesScalar
                    | SOp::Dot
                    | SOp::MatrixTimesVector
                    | SOp::VectorTimesMatrix
                    | SOp::MatrixTimesMatrix
            ))
        ) && !self.has_deco(id, Decoration::NoContraction)
    }

    /// One instruction of a function body, by its family ([`family`]: the one place opcodes are
    /// routed).
    pub(super) fn inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        match family(op) {
            Some(Family::Nothing) => Ok(None),
            Some(Family::Arith) => self.scalar_inst(i),
            Some(Family::Composite) => self.composite_inst(i),
            Some(Family::Ext) => self.ext_inst(i),
            Some(Family::Access) => self.memory_inst(i),
            Some(Family::Atomic) => self.atomic(i).map(Some),
            Some(Family::Barrier) => self.barrier_inst(i),
            Some(Family::Group) => self.group_inst(i),
            Some(Family::Matrix) => self.matrix_inst(i),
            Some(Family::Convert) => self.convert_inst(i),
            Some(Family::Logic) => self.logic_inst(i),
            Some(Family::Chain) => self.chain_inst(i),
            Some(Family::Call) => self.call_inst(i),
            Some(Family::Image) => self.image_inst(i),
            None => Err(unsupported(format!("the instruction {}", op_name(op)))),
        }
    }

    /// `OpFunctionCall` ([`Family::Call`]).
    fn call_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let f = match self.ids.get(&id_at(i, 0)?) {
            Some(Id::Func(f)) => *f,
            _ => return Err(SpirvError::malformed("OpFunctionCall of a non-function")),
        };
        let mut args = Vec::new();
        for k in 1..i.operands.len() {
            args.push(self.arg(i, k)?);
        }
        // SPIR-V 3.52.x, OpFunctionCall: one argument per parameter, each of its parameter's
        // type (a mismatch would copy the wrong number of slots into the callee).
        let params: Vec<u32> = self.m.functions[f as usize]
            .parameters
            .iter()
            .filter_map(|p| p.result_id)
            .collect();
        if params.len() != args.len() {
            return Err(SpirvError::malformed(format!(
                "OpFunctionCall of {} with {} arguments: the function has {} parameters",
                self.name(id_at(i, 0)?),
                args.len(),
                params.len()
            )));
        }
        for (k, (&a, &p)) in args.iter().zip(&params).enumerate() {
            let p = self.reg(p)?;
            if self.reg_slots[a.index()] != self.reg_slots[p.index()] {
                return Err(SpirvError::malformed(format!(
                    "OpFunctionCall of {}: argument {} is not of its parameter's type",
                    self.name(id_at(i, 0)?),
                    k + 1
                )));
            }
        }
        let d = if self.regs.contains_key(&rid) && self.reg_slots[self.reg(rid)?.index()] > 0 {
            Some(self.reg(rid)?)
        } else {
            None
        };
        Ok(Some(Inst::Call {
            d,
            f,
            args: args.into_boxed_slice(),
        }))
    }

    /// The register holding the value of `i`'s `k`-th operand.
    pub(super) fn arg(&mut self, i: &Instruction, k: usize) -> Result<Reg, SpirvError> {
        self.value(id_at(i, k)?)
    }

    /// A two-operand instruction's width and components (of the result, or of the first operand
    /// for a comparison, whose result is bool), its destination and its two operands.
    pub(super) fn binary(
        &mut self,
        i: &Instruction,
        of_operand: bool,
    ) -> Result<(u8, u32, Reg, Reg, Reg), SpirvError> {
        let (sc, n) = if of_operand {
            self.sv_of(id_at(i, 0)?)?
        } else {
            self.result_sv(i)?
        };
        let rid = i.result_id.unwrap_or(0);
        let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
        check_ssa!(d, a, b);
        Ok((sc.bits() as u8, n, d, a, b))
    }
}
