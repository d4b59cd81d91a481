//! Memory instructions: variables, access chains, loads, stores, copies, pointers.

use super::*;

impl Decoder<'_> {
    /// Loads, stores, access chains, atomics, barriers, calls and group operations; anything else is unsupported, named.
    /// Loads, stores, copies, access chains, pointer comparisons and array lengths
    /// ([`Family::Access`]).
    pub(super) fn memory_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::Load => {
                let pid = id_at(i, 0)?;
                let (t, m, storage) = self.pointee(pid)?;
                if matches!(
                    self.types.get(t),
                    Type::Image(_) | Type::SampledImage(_) | Type::Sampler
                ) {
                    // An image's value is its handle: the variable's pointer.
                    let (d, a) = (self.reg(rid)?, self.value(pid)?);
                    return Ok(Some(Inst::Move { d, a, off: 0, n: 1 }));
                }
                let plan = self.plan(t, m)?;
                self.note_private(
                    pid,
                    storage,
                    private::non_private_bit(i, 0),
                    private_side::READ,
                );
                let align = aligned(i, 1);
                let (d, ptr) = (
                    self.reg(rid)?,
                    self.through(pid, self.plans[plan as usize].size, align, false)?,
                );
                check_ssa!(d, ptr);
                Some(Inst::Load { d, ptr, plan })
            }
            SOp::Store => {
                let pid = id_at(i, 0)?;
                let (t, m, storage) = self.pointee(pid)?;
                // `Uniform` pointers may point into a `BufferBlock` (an old-style storage buffer);
                // the executor rejects a store to a read-only object by the variable it hits.
                if matches!(storage, Storage::PushConstant | Storage::Input) {
                    return Err(SpirvError::malformed(format!(
                        "a store to {} memory",
                        storage.name()
                    )));
                }
                let plan = self.plan(t, m)?;
                self.note_private(
                    pid,
                    storage,
                    private::non_private_bit(i, 0),
                    private_side::WRITE,
                );
                Some(Inst::Store {
                    ptr: self.through(pid, self.plans[plan as usize].size, aligned(i, 2), true)?,
                    v: self.arg(i, 1)?,
                    plan,
                })
            }
            SOp::CopyMemory => {
                let (dp, sp) = (id_at(i, 0)?, id_at(i, 1)?);
                let (t, m, src_storage) = self.pointee(sp)?;
                let (_, _, dst_storage) = self.pointee(dp)?;
                self.note_private(
                    dp,
                    dst_storage,
                    private::non_private_bit(i, 0),
                    private_side::WRITE,
                );
                self.note_private(
                    sp,
                    src_storage,
                    private::non_private_bit(i, 1),
                    private_side::READ,
                );
                let plan = self.plan(t, m)?;
                let tmp = self.new_reg(self.plans[plan as usize].slots.len() as u32);
                Some(Inst::CopyMemory {
                    dst: self.through(dp, self.plans[plan as usize].size, aligned(i, 2), true)?,
                    src: self.through(sp, self.plans[plan as usize].size, aligned(i, 2), false)?,
                    plan,
                    tmp,
                })
            }
            SOp::PtrEqual | SOp::PtrNotEqual => {
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                Some(Inst::PtrCmp {
                    d,
                    a,
                    b,
                    ne: op == SOp::PtrNotEqual,
                })
            }
            SOp::PtrDiff => {
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let pa = id_at(i, 0)?;
                let (t, m, _) = self.pointee(pa)?;
                let stride = self.ptr_stride(pa, t, m)?;
                let (s, _) = self.result_sv(i)?;
                Some(Inst::PtrDiff {
                    d,
                    a,
                    b,
                    stride,
                    w: s.bits() as u8,
                })
            }
            SOp::ArrayLength => {
                let pid = id_at(i, 0)?;
                let (t, _, _) = self.pointee(pid)?;
                let member = lits_from(i, 1).first().copied().unwrap_or(0);
                let (off, at, ml) = self.types.member(t, member)?;
                let (_, stride, _, _) = self.types.element(at, ml)?;
                Some(Inst::ArrayLength {
                    d: self.reg(rid)?,
                    ptr: self.value(pid)?,
                    offset: off,
                    stride,
                })
            }
            other => return Err(misrouted(other, "access")),
        })
    }

    /// Access chains, with and without an element step ([`Family::Chain`]).
    pub(super) fn chain_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        Ok(match op {
            SOp::AccessChain
            | SOp::InBoundsAccessChain
            | SOp::PtrAccessChain
            | SOp::InBoundsPtrAccessChain => {
                let base_id = id_at(i, 0)?;
                let (mut t, mut m, base_storage) = self.pointee(base_id)?;
                let mut steps = Vec::new();
                let ptr_chain = matches!(op, SOp::PtrAccessChain | SOp::InBoundsPtrAccessChain);
                if ptr_chain {
                    // OpPtrAccessChain: Element steps the base pointer through the array it
                    // points into, by the ArrayStride of its pointer type (or, without one, the
                    // pointee's size rounded to its alignment: the array's stride in a layout
                    // the module does not spell out).
                    let el_id = id_at(i, 1)?;
                    let stride = self.ptr_stride(base_id, t, m)?;
                    let (isc, _) = self.sv_of(el_id)?;
                    steps.push(Step::Dyn {
                        index: self.value(el_id)?,
                        width: isc.bits() as u8,
                        signed: matches!(isc, Scalar::Int { signed: true, .. }),
                        stride,
                        len: None,
                        elem: true,
                    });
                }
                let mut first_index = 1 + ptr_chain as usize;
                if let (false, Some(&count)) = (ptr_chain, self.descriptor_arrays.get(&base_id)) {
                    // The first index of an array of descriptors picks the descriptor (the
                    // variable's objects are consecutive); `t` is already the block type.
                    let idx_id = id_at(i, 1)?;
                    let (isc, _) = self.sv_of(idx_id)?;
                    steps.push(Step::Descriptor {
                        index: self.value(idx_id)?,
                        width: isc.bits() as u8,
                        signed: matches!(isc, Scalar::Int { signed: true, .. }),
                        count,
                        // The chain is the pointer operand Vulkan wants decorated; glslang,
                        // DXC and naga decorate the index too, which is taken as the same
                        // statement (a module decorating only the index is not reported).
                        nonuniform: self.has_deco(rid, Decoration::NonUniform)
                            || self.has_deco(idx_id, Decoration::NonUniform),
                    });
                    first_index = 2;
                }
                // After a column of a row-major matrix: the stride between that column's
                // components (the matrix stride), for the component index that must follow.
                let mut strided_column: Option<u32> = None;
                for k in first_index..i.operands.len() {
                    let idx_id = id_at(i, k)?;
                    let konst = match self.ids.get(&idx_id) {
                        Some(Id::Const(c)) if !c.any_undef() => Some(c.bits[0]),
                        _ => None,
                    };
                    match self.types.get(t).clone() {
                        Type::Struct { .. } => {
                            let k = konst.ok_or_else(|| {
                                SpirvError::malformed(
                                    "a struct member index that is not a constant",
                                )
                            })?;
                            let (off, mt, ml) = self.types.member(t, k as u32)?;
                            steps.push(Step::Const(off));
                            t = mt;
                            m = ml;
                        }
                        _ => {
                            let (el, mut stride, len, em) = self.types.element(t, m)?;
                            // A component of a row-major matrix's column lies a matrix stride
                            // from the next (Vulkan, "Offset and Stride Assignment": row-major
                            // matrices are laid out row by row).
                            if let Some(ms) = strided_column.take() {
                                stride = ms;
                            }
                            let et = match el {
                                ElementOf::Type(et) => et,
                                ElementOf::Scalar(s) => self.scalar_type_id(s)?,
                                ElementOf::RowMajorColumn(col, ms) => {
                                    strided_column = Some(ms);
                                    col
                                }
                            };
                            let (isc, _) = self.sv_of(idx_id)?;
                            match konst {
                                Some(c) if len.is_none_or(|l| c < l as u64) => {
                                    steps.push(Step::Const((c as u32).wrapping_mul(stride)))
                                }
                                _ => steps.push(Step::Dyn {
                                    index: self.value(idx_id)?,
                                    width: isc.bits() as u8,
                                    signed: matches!(isc, Scalar::Int { signed: true, .. }),
                                    stride,
                                    len,
                                    elem: false,
                                }),
                            }
                            t = et;
                            m = em;
                        }
                    }
                }
                if let Some(ms) = strided_column {
                    // A pointer to a whole column of a row-major matrix: a vector whose
                    // components are a matrix stride apart (loads, stores and further indices
                    // follow `vec_stride`).
                    m = MatrixLayout {
                        vec_stride: Some(ms),
                        ..MatrixLayout::default()
                    };
                }
                // Fold constant steps.
                let mut folded: Vec<Step> = Vec::new();
                for s in steps {
                    match (folded.last_mut(), s) {
                        (Some(Step::Const(a)), Step::Const(b)) => *a += b,
                        _ => folded.push(s),
                    }
                }
                self.ptr_layout.insert(rid, m);
                let (d, base) = (self.reg(rid)?, self.value(base_id)?);
                check_ssa!(d, base);
                if self.fold_chain(d, base, &folded) {
                    return Ok(None);
                }
                if base_storage == Storage::PhysicalStorageBuffer {
                    Some(Inst::AddrChain {
                        d,
                        base,
                        steps: folded.into_boxed_slice(),
                    })
                } else {
                    Some(Inst::AccessChain {
                        d,
                        base,
                        steps: folded.into_boxed_slice(),
                    })
                }
            }
            other => return Err(misrouted(other, "chain")),
        })
    }

    /// An access chain whose steps are all constant from a variable's pointer (or from another
    /// such chain) points at one place for every lane: its register `d` becomes a constant
    /// register holding that pointer, and the chain is not executed. The pointer is what the
    /// executor would compute (the variable's object, the sum of the steps' offsets; a constant
    /// index past a sized array is a `Dyn` step, so it is never folded). `true` where folded.
    fn fold_chain(&mut self, d: Reg, base: Reg, steps: &[Step]) -> bool {
        use crate::spirv::memory::Ptr;
        let known = self
            .folded_chains
            .get(&base)
            .copied()
            .or_else(|| self.var_regs.get(&base).map(|o| Ptr::new(*o, 0)));
        let (Some(p), Some(c)) = (
            known,
            match steps {
                [Step::Const(c)] => Some(*c),
                [] => Some(0),
                _ => None,
            },
        ) else {
            return false;
        };
        let Some(off) = p.off().checked_add(c) else {
            return false;
        };
        let q = Ptr::new(p.obj(), off);
        self.constants.push(Constant {
            reg: d,
            bits: Box::new([q.bits()]),
            undef: Box::new([false]),
            undef_at: LocId::default(),
            undef_component: false,
        });
        self.folded_chains.insert(d, q);
        self.var_regs.insert(d, p.obj());
        true
    }

    /// The register holding the pointer an access of `bytes` bytes through `pid` uses: `pid`'s own,
    /// or — for a `PhysicalStorageBuffer` pointer, whose value is a device address — a new
    /// register that an `Inst::Resolve` run just before fills with the buffer and offset that
    /// address lies at (`align`: the access's `Aligned` operand, 0 for none).
    pub(super) fn through(
        &mut self,
        pid: u32,
        bytes: u32,
        align: u32,
        write: bool,
    ) -> Result<Reg, SpirvError> {
        let (_, _, storage) = self.pointee(pid)?;
        let addr = self.value(pid)?;
        if storage != Storage::PhysicalStorageBuffer {
            return Ok(addr);
        }
        self.no_buffer_object();
        let d = self.new_reg(1);
        self.prelude.push(Inst::Resolve {
            d,
            addr,
            bytes,
            align,
            write,
        });
        Ok(d)
    }

    /// The object an address in no buffer resolves to (made once).
    pub(super) fn no_buffer_object(&mut self) -> ObjectId {
        if let Some(o) = self.no_buffer {
            return o;
        }
        let loc = LocId::new(self.locs.len() as u32);
        self.locs.push(Location {
            file: self.file.clone(),
            line: None,
            op: "PhysicalStorageBuffer".into(),
            id: None,
            block: None,
            names: None,
        });
        self.objects.push(Object::addressed(
            "device memory outside every buffer".into(),
            None,
            loc,
        ));
        let o = ObjectId::new((self.objects.len() - 1) as u32);
        self.no_buffer = Some(o);
        o
    }

    pub(super) fn scalar_type_id(&mut self, s: Scalar) -> Result<TypeId, SpirvError> {
        if let Some(k) = self.types.list.iter().position(|t| *t == Type::Scalar(s)) {
            return Ok(k as TypeId);
        }
        self.types.list.push(Type::Scalar(s));
        Ok((self.types.list.len() - 1) as TypeId)
    }
}

/// The `Aligned` literal of an instruction's memory operands starting at operand `k` (0: none).
fn aligned(i: &Instruction, k: usize) -> u32 {
    match (i.operands.get(k), i.operands.get(k + 1)) {
        (Some(Operand::MemoryAccess(m)), Some(Operand::LiteralBit32(a)))
            if m.contains(spirv::MemoryAccess::ALIGNED) =>
        {
            *a
        }
        _ => 0,
    }
}
