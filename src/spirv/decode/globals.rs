//! Types, constants (specialization constants and `OpSpecConstantOp` folded with the executor's
//! scalar rules), variables and their memory, load/store plans.

use super::*;

/// The most variables and descriptors one module may declare: 2²⁰ (1,048,576). Each is an object
/// of the run, bound to memory of its own; pointers keep 30 bits for the object.
pub(crate) const MAX_DESCRIPTORS: u32 = 1 << 20;

impl Decoder<'_> {
    // ---------------------------------------------------------------- types and constants

    pub(super) fn ty(&self, id: u32) -> Result<TypeId, SpirvError> {
        match self.ids.get(&id) {
            Some(Id::Type(t)) => Ok(*t),
            _ => Err(SpirvError::malformed(format!("%{id} is not a type"))),
        }
    }

    pub(super) fn add_type(&mut self, id: u32, t: Type) -> TypeId {
        let tid = self.types.list.len() as TypeId;
        self.types.list.push(t);
        self.ids.insert(id, Id::Type(tid));
        tid
    }

    pub(super) fn konst(&self, id: u32) -> Result<&ConstVal, SpirvError> {
        match self.ids.get(&id) {
            Some(Id::Const(c)) => Ok(c),
            _ => Err(SpirvError::malformed(format!("%{id} is not a constant"))),
        }
    }

    pub(super) fn const_u32(&self, id: u32) -> Result<u32, SpirvError> {
        let c = self.konst(id)?;
        if c.any_undef() || c.bits.len() != 1 {
            return Err(SpirvError::malformed(format!(
                "%{id} is not a defined scalar constant"
            )));
        }
        Ok(c.bits[0] as u32)
    }

    pub(super) fn new_reg(&mut self, slots: u32) -> Reg {
        self.reg_slots.push(slots);
        Reg::new((self.reg_slots.len() - 1) as u32)
    }

    pub(super) fn const_reg(&mut self, c: &ConstVal) -> Reg {
        let r = self.new_reg(c.bits.len() as u32);
        self.constants.push(Constant {
            reg: r,
            bits: c.bits.clone().into_boxed_slice(),
            undef: c.undef.clone().into_boxed_slice(),
            undef_at: c.undef_at.unwrap_or_default(),
            undef_component: c.undef_component,
        });
        r
    }

    pub(super) fn scalar_of(&self, t: TypeId) -> Result<Scalar, SpirvError> {
        match self.types.get(t) {
            Type::Scalar(s) => Ok(*s),
            Type::Vector { elem, .. } => Ok(*elem),
            other => Err(SpirvError::malformed(format!(
                "expected a scalar or vector type, found {other:?}"
            ))),
        }
    }

    /// SPV_KHR_workgroup_memory_explicit_layout: the Workgroup variables decorated Block (with
    /// WorkgroupMemoryExplicitLayoutKHR) alias each other — one region at the start of shared
    /// memory, as large as the largest, its definedness kept per unit of the smallest scalar any
    /// of them holds. A store through one is a store to what the others read.
    pub(super) fn alias_workgroup_blocks(&mut self) {
        let explicit = self.m.capabilities.iter().any(|c| {
            matches!(
                c.operands.first(),
                Some(Operand::Capability(
                    spirv::Capability::WorkgroupMemoryExplicitLayoutKHR
                ))
            )
        });
        if !explicit {
            return;
        }
        let blocks: Vec<usize> = (0..self.objects.len())
            .filter(|&i| {
                let o = &self.objects[i];
                o.storage == Storage::Workgroup && self.has_deco_type(o.ty, Decoration::Block)
            })
            .collect();
        if blocks.len() < 2 {
            return;
        }
        let words = blocks
            .iter()
            .map(|&i| self.objects[i].words)
            .max()
            .unwrap_or(0);
        let unit = blocks
            .iter()
            .map(|&i| self.objects[i].unit)
            .min()
            .unwrap_or(4);
        // Every other Workgroup variable moves up behind the region.
        let (mut next_word, mut next_unit) = (words, words * 4 / unit);
        for (i, o) in self.objects.iter_mut().enumerate() {
            if o.storage != Storage::Workgroup || blocks.contains(&i) {
                continue;
            }
            o.base = next_word;
            o.tbase = next_unit;
            next_word += o.words;
            next_unit += o.words * 4 / o.unit;
        }
        for &i in &blocks {
            let o = &mut self.objects[i];
            o.base = 0;
            o.tbase = 0;
            o.words = words;
            o.unit = unit;
        }
        self.shared_words = next_word;
        self.shared_units = next_unit;
    }

    pub(super) fn globals(&mut self) -> Result<(), SpirvError> {
        let insts = &self.m.types_global_values;
        for i in insts {
            let op = i.class.opcode;
            let loc = self.loc_for(i);
            self.global(i).map_err(|e| e.at(&self.locs[loc.index()]))?;
            let _ = op;
        }
        Ok(())
    }

    /// The location of the function-body instruction being decoded (the last one recorded).
    pub(super) fn current_loc(&self) -> LocId {
        LocId::new((self.locs.len() - 1) as u32)
    }

    /// The names of a location's result id and block label ([`Location::names`]), if any.
    pub(super) fn loc_names(
        &self,
        result: Option<u32>,
        label: Option<u32>,
    ) -> Option<Box<(Option<String>, Option<String>)>> {
        let name = |id: Option<u32>| id.and_then(|r| self.names.get(&r).cloned());
        match (name(result), name(label)) {
            (None, None) => None,
            both => Some(Box::new(both)),
        }
    }

    pub(super) fn loc_for(&mut self, i: &Instruction) -> LocId {
        self.locs.push(Location {
            file: self.file.clone(),
            line: None,
            op: op_name(i.class.opcode),
            id: i.result_id,
            block: None,
            names: self.loc_names(i.result_id, None),
        });
        LocId::new((self.locs.len() - 1) as u32)
    }

    pub(super) fn global(&mut self, i: &Instruction) -> Result<(), SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        match op {
            SOp::Line | SOp::NoLine | SOp::Nop => {}
            SOp::TypeVoid
            | SOp::TypeBool
            | SOp::TypeInt
            | SOp::TypeFloat
            | SOp::TypeVector
            | SOp::TypeMatrix
            | SOp::TypeArray
            | SOp::TypeRuntimeArray
            | SOp::TypeStruct => self.type_decl(i)?,
            SOp::TypePointer
            | SOp::TypeForwardPointer
            | SOp::TypeFunction
            | SOp::TypeImage
            | SOp::TypeSampledImage
            | SOp::TypeSampler
            | SOp::TypeAccelerationStructureKHR => self.handle_type_decl(i)?,
            SOp::Constant
            | SOp::SpecConstant
            | SOp::ConstantTrue
            | SOp::ConstantFalse
            | SOp::SpecConstantTrue
            | SOp::SpecConstantFalse
            | SOp::ConstantComposite
            | SOp::SpecConstantComposite
            | SOp::ConstantNull
            | SOp::Undef => self.constant_decl(i)?,
            SOp::SpecConstantOp => {
                let v = self.fold_spec_op(i)?;
                self.ids.insert(rid, Id::Const(v));
            }
            SOp::Variable => {
                let obj = self.variable(i, None)?;
                self.ids.insert(rid, Id::Var(obj));
            }
            other => return Err(unsupported(format!("{} at module scope", op_name(other)))),
        }
        Ok(())
    }

    /// A type declaration at module scope.
    fn type_decl(&mut self, i: &Instruction) -> Result<(), SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        match op {
            SOp::TypeVoid => {
                self.add_type(rid, Type::Void);
            }
            SOp::TypeBool => {
                self.add_type(rid, Type::Scalar(Scalar::Bool));
            }
            SOp::TypeInt => {
                let w = global_lit(i, 0)?;
                if ![8, 16, 32, 64].contains(&w) {
                    return Err(unsupported(format!("{w}-bit integers")));
                }
                self.add_type(
                    rid,
                    Type::Scalar(Scalar::Int {
                        width: w as u8,
                        signed: global_lit(i, 1)? != 0,
                    }),
                );
            }
            SOp::TypeFloat => {
                let w = global_lit(i, 0)?;
                if ![16, 32, 64].contains(&w) || i.operands.len() > 1 {
                    return Err(unsupported(format!("{w}-bit floats of this encoding")));
                }
                self.add_type(rid, Type::Scalar(Scalar::Float { width: w as u8 }));
            }
            SOp::TypeVector => {
                let e = self.ty(global_id(i, 0)?)?;
                let elem = match self.types.get(e) {
                    Type::Scalar(s) => *s,
                    _ => return Err(SpirvError::malformed("vector of a non-scalar")),
                };
                let n = global_lit(i, 1)?;
                if !(2..=16).contains(&n) {
                    return Err(SpirvError::malformed(format!("vector of {n} components")));
                }
                self.add_type(rid, Type::Vector { elem, n });
            }
            SOp::TypeMatrix => {
                let col = self.ty(global_id(i, 0)?)?;
                if !matches!(self.types.get(col), Type::Vector { .. }) {
                    return Err(SpirvError::malformed("matrix columns must be vectors"));
                }
                // OpTypeMatrix: "Column Count must be at least 2" (and at most a vector's 16)
                let cols = global_lit(i, 1)?;
                if !(2..=16).contains(&cols) {
                    return Err(SpirvError::malformed(format!("matrix of {cols} columns")));
                }
                self.add_type(rid, Type::Matrix { col, cols });
            }
            SOp::TypeArray => {
                let elem = self.ty(global_id(i, 0)?)?;
                let len = self.const_u32(global_id(i, 1)?)?;
                if len == 0 {
                    return Err(SpirvError::malformed("array of length 0"));
                }
                let stride = self.deco_lit(rid, Decoration::ArrayStride);
                self.add_type(rid, Type::Array { elem, len, stride });
            }
            SOp::TypeRuntimeArray => {
                let elem = self.ty(global_id(i, 0)?)?;
                let stride = self.deco_lit(rid, Decoration::ArrayStride);
                self.add_type(rid, Type::RuntimeArray { elem, stride });
            }
            SOp::TypeStruct => {
                let mut members = Vec::new();
                for k in 0..i.operands.len() {
                    members.push(self.ty(global_id(i, k)?)?);
                }
                // VUID-StandaloneSpirv-OpTypeRuntimeArray-04680: a runtime array is only ever
                // the last member of a struct.
                if let Some(k) = members[..members.len().saturating_sub(1)]
                    .iter()
                    .position(|&m| matches!(self.types.get(m), Type::RuntimeArray { .. }))
                {
                    return Err(SpirvError::malformed(format!(
                        "member {k} of struct {} is a runtime array but not the struct's last member (Vulkan, Validation Rules within a Module, VUID-StandaloneSpirv-OpTypeRuntimeArray-04680)",
                        self.name(rid)
                    )));
                }
                let n = members.len() as u32;
                let offsets = (0..n)
                    .map(|m| self.mdeco_lit(rid, m, Decoration::Offset))
                    .collect();
                let matrix_stride = (0..n)
                    .map(|m| self.mdeco_lit(rid, m, Decoration::MatrixStride))
                    .collect();
                let row_major = (0..n)
                    .map(|m| self.mhas(rid, m, Decoration::RowMajor))
                    .collect();
                self.add_type(
                    rid,
                    Type::Struct {
                        members,
                        offsets,
                        matrix_stride,
                        row_major,
                    },
                );
            }
            other => return Err(misrouted(other, "type")),
        }
        Ok(())
    }

    /// A pointer, function or opaque (image, sampler, acceleration structure) type declaration.
    fn handle_type_decl(&mut self, i: &Instruction) -> Result<(), SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        match op {
            SOp::TypePointer => {
                let sc = match i.operands.first() {
                    Some(Operand::StorageClass(s)) => *s,
                    _ => {
                        return Err(SpirvError::malformed(
                            "OpTypePointer without a storage class",
                        ))
                    }
                };
                let pointee = self.ty(global_id(i, 1)?)?;
                // A pointer type may name a storage class we do not run; only variables of it fail.
                let storage = storage_of(sc, false).unwrap_or(Storage::Function);
                match self.ids.get(&rid) {
                    // Declared by an OpTypeForwardPointer (a buffer reference whose block refers
                    // to itself): the placeholder gets its pointee now.
                    Some(Id::Type(t)) => {
                        let t = *t;
                        self.types.list[t as usize] = Type::Pointer { storage, pointee };
                    }
                    _ => {
                        self.add_type(rid, Type::Pointer { storage, pointee });
                    }
                }
            }
            SOp::TypeForwardPointer => {
                // SPIR-V 3.37.6: declares pointer type `Pointer Type` before its OpTypePointer, so
                // that a struct can hold a pointer to itself. In memory it is a 64-bit address
                // whatever it points to; the pointee is filled in by the OpTypePointer.
                let sc = match i.operands.get(1) {
                    Some(Operand::StorageClass(s)) => *s,
                    _ => {
                        return Err(SpirvError::malformed(
                            "OpTypeForwardPointer without a storage class",
                        ))
                    }
                };
                let id = global_id(i, 0)?;
                let storage = storage_of(sc, false).unwrap_or(Storage::Function);
                self.add_type(
                    id,
                    Type::Pointer {
                        storage,
                        pointee: 0,
                    },
                );
            }
            SOp::TypeFunction => {
                self.add_type(rid, Type::Function);
            }
            SOp::TypeImage => match self.image_type(i) {
                Ok(t) => {
                    self.add_type(rid, Type::Image(t));
                }
                Err(why) => {
                    // Declaring it is harmless; a variable of it is refused with this reason.
                    self.add_type(rid, Type::Function);
                    self.names
                        .entry(rid)
                        .or_insert_with(|| "OpTypeImage".into());
                    self.opaque_why.insert(rid, why);
                }
            },
            SOp::TypeSampledImage
                if matches!(self.types.get(self.ty(global_id(i, 0)?)?), Type::Image(_)) =>
            {
                // An image with its sampler (`sampler2D`), or a uniform texel buffer
                // (`samplerBuffer`: read with OpImageFetch, no sampler).
                let img = self.ty(global_id(i, 0)?)?;
                self.add_type(rid, Type::SampledImage(img));
            }
            SOp::TypeSampler => {
                self.add_type(rid, Type::Sampler);
            }
            SOp::TypeSampledImage | SOp::TypeAccelerationStructureKHR => {
                // Declaring these is harmless; a variable or value of them is not (see below).
                self.add_type(rid, Type::Function);
                self.names.entry(rid).or_insert_with(|| format!("{op:?}"));
            }
            other => return Err(misrouted(other, "handle type")),
        }
        Ok(())
    }

    /// A constant or specialization constant (scalar, boolean, composite, null, undefined) at
    /// module scope.
    fn constant_decl(&mut self, i: &Instruction) -> Result<(), SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        match op {
            SOp::Constant | SOp::SpecConstant => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let s = match self.types.get(t) {
                    Type::Scalar(s) => *s,
                    _ => {
                        return Err(SpirvError::malformed(
                            "a scalar constant of a non-scalar type",
                        ))
                    }
                };
                // rspirv reads the literal at the type's width (a 64-bit constant's two words
                // come as one `LiteralBit64`).
                let mut bits = match i.operands.first() {
                    Some(Operand::LiteralBit32(x)) => *x as u64,
                    Some(Operand::LiteralBit64(x)) => *x,
                    _ => return Err(SpirvError::malformed("a constant without a literal")),
                };
                if op == SOp::SpecConstant
                    && let Some(v) = self.spec_override(rid, s)?
                {
                    bits = v;
                }
                let bits = bits & scalar::mask(s.bits() as u8);
                self.ids
                    .insert(rid, Id::Const(ConstVal::defined(t, vec![bits])));
            }
            SOp::ConstantTrue
            | SOp::ConstantFalse
            | SOp::SpecConstantTrue
            | SOp::SpecConstantFalse => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let mut v = matches!(op, SOp::ConstantTrue | SOp::SpecConstantTrue) as u64;
                if matches!(op, SOp::SpecConstantTrue | SOp::SpecConstantFalse)
                    && let Some(x) = self.spec_override(rid, Scalar::Bool)?
                {
                    v = (x != 0) as u64;
                }
                self.ids
                    .insert(rid, Id::Const(ConstVal::defined(t, vec![v])));
            }
            SOp::ConstantComposite | SOp::SpecConstantComposite => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let mut bits = Vec::new();
                let mut undef = Vec::new();
                let mut undef_at = None;
                let mut undef_component = false;
                for k in 0..i.operands.len() {
                    let c = self.konst(global_id(i, k)?)?;
                    bits.extend_from_slice(&c.bits);
                    undef.extend_from_slice(&c.undef);
                    if undef_at.is_none() && c.undef_at.is_some() {
                        undef_at = c.undef_at;
                        undef_component = c.undef_component;
                    }
                }
                if bits.len() as u32 != self.types.slots(t)? {
                    return Err(SpirvError::malformed(
                        "composite constant with the wrong number of components",
                    ));
                }
                self.ids.insert(
                    rid,
                    Id::Const(ConstVal {
                        ty: t,
                        bits,
                        undef,
                        undef_at,
                        undef_component,
                    }),
                );
            }
            SOp::ConstantNull | SOp::Undef => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let n = self.types.slots(t)?;
                let null = match self.types.get(t) {
                    Type::Pointer { .. } => crate::spirv::memory::Ptr::NULL.bits(),
                    _ => 0,
                };
                self.ids.insert(
                    rid,
                    Id::Const(ConstVal {
                        ty: t,
                        bits: vec![null; n as usize],
                        undef: vec![op == SOp::Undef; n as usize],
                        // `globals` made this instruction's location last
                        undef_at: (op == SOp::Undef)
                            .then(|| LocId::new((self.locs.len() - 1) as u32)),
                        undef_component: false,
                    }),
                );
            }
            other => return Err(misrouted(other, "constant")),
        }
        Ok(())
    }

    pub(super) fn spec_override(&self, id: u32, s: Scalar) -> Result<Option<u64>, SpirvError> {
        let Some(sid) = self.deco_lit(id, Decoration::SpecId) else {
            return Ok(None);
        };
        let Some((_, v)) = self.opts.spec.iter().rev().find(|(k, _)| *k == sid) else {
            return Ok(None);
        };
        match v {
            SpecInput::Bits(b) => Ok(Some(*b & scalar::mask(s.bits() as u8))),
            SpecInput::Text(t) => {
                let mt = s.model_type().ok_or_else(|| {
                    SpirvError::Setup(format!("specialization constant {sid} has no value type"))
                })?;
                let v = Value::parse(ValueType::scalar(mt), t).map_err(|e| {
                    SpirvError::Setup(format!(
                        "--spec {sid}={t}: {e} (the constant is a {})",
                        s.name()
                    ))
                })?;
                Ok(Some(v.component_bits(0)))
            }
        }
    }

    /// Folds an `OpSpecConstantOp` with the executor's scalar rules (the ops Vulkan allows there).
    pub(super) fn fold_spec_op(&self, i: &Instruction) -> Result<ConstVal, SpirvError> {
        let t = self.ty(i.result_type.unwrap_or(0))?;
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
            return Err(SpirvError::malformed("OpSpecConstantOp without an opcode"));
        };
        let (ids, lits) = crate::words::facts::operands_from(i, 1);
        let arg = |k: usize| -> Result<&ConstVal, SpirvError> {
            self.konst(
                *ids.get(k)
                    .ok_or_else(|| SpirvError::malformed("OpSpecConstantOp operand"))?,
            )
        };
        let out_n = self.types.slots(t)? as usize;
        // Component-wise operations: one definition, shared with the device runner's reading of
        // the module (`words::facts`).
        // (Operands of composite operations may be structs or arrays: their scalar is not used.)
        let consts: Vec<&ConstVal> = ids
            .iter()
            .map(|x| self.konst(*x))
            .collect::<Result<_, SpirvError>>()?;
        let args: Vec<(crate::words::facts::Scalar, &[u64])> = consts
            .iter()
            .map(|c| (self.scalar_of(c.ty).unwrap_or(Scalar::Bool), &c.bits[..]))
            .collect();
        let to = self.scalar_of(t).unwrap_or(Scalar::Bool);
        let folded = crate::words::facts::fold_componentwise(*op, &args, to, out_n);
        // Which slots of the result are undefined: a slot of a component-wise result where that
        // slot (or a scalar operand) of any operand is; the slots a composite operation moves
        // carry their own; a component `OpVectorShuffle` selects with 0xFFFFFFFF "has no source
        // and is undefined" (SPIR-V, OpVectorShuffle).
        let slot_undef = |c: &ConstVal, k: usize| {
            if c.undef.len() == out_n {
                c.undef[k]
            } else {
                c.any_undef()
            }
        };
        let mut undef_component = false;
        let (bits, undef): (Vec<u64>, Vec<bool>) = match (folded, op) {
            (Some(r), _) => {
                let bits =
                    r.map_err(|e| SpirvError::Setup(format!("specialization constant: {e}")))?;
                let undef = (0..bits.len())
                    .map(|k| consts.iter().any(|c| slot_undef(c, k)))
                    .collect();
                (bits, undef)
            }
            (None, SOp::FConvert) => {
                // Float conversions (rounding to the narrower width) by the executor's rule.
                let a = arg(0)?;
                let from = self.scalar_of(a.ty)?;
                let bits = a
                    .bits
                    .iter()
                    .map(|&x| {
                        scalar::convert(Conv::FConvert, from, to, x)
                            .map_err(|e| SpirvError::Setup(format!("specialization constant: {e}")))
                    })
                    .collect::<Result<Vec<u64>, SpirvError>>()?;
                (bits, a.undef.clone())
            }
            (None, SOp::CompositeExtract) => {
                let a = arg(0)?;
                let (off, n) = self.composite_path(a.ty, &lits)?;
                let r = off as usize..(off + n) as usize;
                (a.bits[r.clone()].to_vec(), a.undef[r].to_vec())
            }
            (None, SOp::CompositeInsert) => {
                let (obj, a) = (arg(0)?, arg(1)?);
                let (off, n) = self.composite_path(a.ty, &lits)?;
                let r = off as usize..(off + n) as usize;
                let (mut bits, mut undef) = (a.bits.clone(), a.undef.clone());
                bits[r.clone()].copy_from_slice(&obj.bits);
                undef[r].copy_from_slice(&obj.undef);
                (bits, undef)
            }
            (None, SOp::VectorShuffle) => {
                let (a, b) = (arg(0)?, arg(1)?);
                let n = a.bits.len();
                let mut bits = Vec::with_capacity(lits.len());
                let mut undef = Vec::with_capacity(lits.len());
                for &s in &lits {
                    let (v, u) = match s as usize {
                        _ if s == u32::MAX => {
                            undef_component = true;
                            (0, true)
                        }
                        k if k < n => (a.bits[k], a.undef[k]),
                        k => match b.bits.get(k - n) {
                            Some(&v) => (v, b.undef[k - n]),
                            None => {
                                return Err(SpirvError::malformed(format!(
                                    "OpVectorShuffle component {s}"
                                )))
                            }
                        },
                    };
                    bits.push(v);
                    undef.push(u);
                }
                (bits, undef)
            }
            (None, other) => {
                return Err(unsupported(format!(
                    "OpSpecConstantOp with {}",
                    op_name(*other)
                )))
            }
        };
        if bits.len() != out_n {
            return Err(SpirvError::malformed("OpSpecConstantOp result size"));
        }
        // The chain names the first `OpUndef` behind the operands, or this instruction where a
        // shuffle made the undefined components (`globals` made its location last).
        let (undef_at, undef_component) = if !undef.iter().any(|u| *u) {
            (None, false)
        } else if undef_component {
            (Some(LocId::new((self.locs.len() - 1) as u32)), true)
        } else {
            consts
                .iter()
                .find(|c| c.undef_at.is_some())
                .map_or((None, false), |c| (c.undef_at, c.undef_component))
        };
        Ok(ConstVal {
            ty: t,
            bits,
            undef,
            undef_at,
            undef_component,
        })
    }

    /// Slot offset and count of the part of a composite of type `t` selected by literal indices.
    pub(super) fn composite_path(&self, t: TypeId, idx: &[u32]) -> Result<(u32, u32), SpirvError> {
        let mut t = t;
        let mut off = 0u32;
        for (k, &i) in idx.iter().enumerate() {
            match self.types.get(t).clone() {
                Type::Vector { n, .. } => {
                    if i >= n {
                        return Err(SpirvError::malformed(format!(
                            "component {i} of a {n}-vector"
                        )));
                    }
                    // SPIR-V, OpCompositeExtract: "Each index … is treated as an index into the
                    // current type": a vector's component is a scalar, which has no index.
                    if k + 1 < idx.len() {
                        return Err(SpirvError::malformed(format!(
                            "index {} into component {i} of a {n}-vector, a scalar",
                            idx[k + 1]
                        )));
                    }
                    off += i;
                    return Ok((off, 1));
                }
                Type::Matrix { col, cols } => {
                    if i >= cols {
                        return Err(SpirvError::malformed(format!(
                            "column {i} of a {cols}-column matrix"
                        )));
                    }
                    off += i * self.types.slots(col)?;
                    t = col;
                }
                Type::Array { elem, len, .. } => {
                    if i >= len {
                        return Err(SpirvError::malformed(format!(
                            "element {i} of an array of {len}"
                        )));
                    }
                    off += i * self.types.slots(elem)?;
                    t = elem;
                }
                Type::Struct { members, .. } => {
                    let k = i as usize;
                    if k >= members.len() {
                        return Err(SpirvError::malformed(format!(
                            "member {i} of a struct of {}",
                            members.len()
                        )));
                    }
                    for m in &members[..k] {
                        off += self.types.slots(*m)?;
                    }
                    t = members[k];
                }
                other => {
                    return Err(SpirvError::malformed(format!(
                        "composite index into {other:?}"
                    )))
                }
            }
        }
        Ok((off, self.types.slots(t)?))
    }

    // ---------------------------------------------------------------- variables and memory

    pub(super) fn variable(
        &mut self,
        i: &Instruction,
        func: Option<&str>,
    ) -> Result<ObjectId, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let pty = self.ty(i.result_type.unwrap_or(0))?;
        let (storage_decl, pointee) = match self.types.get(pty) {
            Type::Pointer { pointee, .. } => (
                match i.operands.first() {
                    Some(Operand::StorageClass(s)) => *s,
                    _ => return Err(SpirvError::malformed("OpVariable without a storage class")),
                },
                *pointee,
            ),
            _ => return Err(SpirvError::malformed("OpVariable of a non-pointer type")),
        };
        self.check_block_variable(rid, storage_decl, pointee)?;
        // An array of buffer blocks is an array of descriptors: one object per element, with
        // consecutive ids (an access chain's first index picks the object).
        if matches!(
            storage_decl,
            StorageClass::StorageBuffer | StorageClass::Uniform
        ) {
            if let Type::Array { elem, len, .. } = *self.types.get(pointee)
                && len >= 1
            {
                self.check_descriptor_count(rid, len)?;
                let first = self.variable_one(i, func, storage_decl, elem, Some((0, len)))?;
                for k in 1..len {
                    self.variable_one(i, func, storage_decl, elem, Some((k, len)))?;
                }
                self.descriptor_arrays.insert(rid, len);
                return Ok(first);
            }
            if matches!(self.types.get(pointee), Type::RuntimeArray { .. }) {
                return Err(unsupported(format!(
                    "variable {}: a runtime-sized array of descriptors",
                    self.name(rid)
                )));
            }
        }
        // An array of storage images or texel buffers: one object per descriptor, likewise.
        if storage_decl == StorageClass::UniformConstant
            && let Type::Array { elem, len, .. } = *self.types.get(pointee)
            && len >= 1
            && matches!(self.types.get(elem), Type::Image(_) | Type::SampledImage(_))
        {
            self.check_descriptor_count(rid, len)?;
            let first = self.variable_one(i, func, storage_decl, elem, Some((0, len)))?;
            for k in 1..len {
                self.variable_one(i, func, storage_decl, elem, Some((k, len)))?;
            }
            self.descriptor_arrays.insert(rid, len);
            return Ok(first);
        }
        self.variable_one(i, func, storage_decl, pointee, None)
    }

    /// Refuses an array of `len` descriptors that would take the module past
    /// [`MAX_DESCRIPTORS`] objects: each descriptor is an object of its own, bound to a buffer
    /// or image of its own, and a declared length of millions would exhaust memory before the
    /// run could say that no buffer was given for them.
    fn check_descriptor_count(&self, rid: u32, len: u32) -> Result<(), SpirvError> {
        if self.objects.len() as u64 + len as u64 > MAX_DESCRIPTORS as u64 {
            return Err(unsupported(format!(
                "variable {}: an array of {len} descriptors (the interpreter holds at most {MAX_DESCRIPTORS} variables and descriptors in one module, each an object bound to memory of its own)",
                self.name(rid)
            )));
        }
        Ok(())
    }

    /// One object of `OpVariable` `i` holding a `pointee` (element `k` of `n` of an array of
    /// descriptors when `element` is `Some((k, n))`).
    pub(super) fn variable_one(
        &mut self,
        i: &Instruction,
        func: Option<&str>,
        storage_decl: StorageClass,
        pointee: TypeId,
        element: Option<(u32, u32)>,
    ) -> Result<ObjectId, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let buffer_block = self.has_deco_type(pointee, Decoration::BufferBlock);
        let storage = storage_of(storage_decl, buffer_block).ok_or_else(|| {
            unsupported(format!(
                "a variable in the {storage_decl:?} storage class (compute kernels: StorageBuffer, Uniform, PushConstant, Workgroup, Private, Function, Input)"
            ))
        })?;
        if matches!(self.types.get(pointee), Type::Function) {
            let tid = type_spirv_id(self, pointee);
            return Err(unsupported(match self.opaque_why.get(&tid) {
                Some(why) => format!("variable {}: {why}", self.name(rid)),
                None => format!(
                    "variable {} of an opaque type ({}): acceleration structures are not interpreted",
                    self.name(rid),
                    self.names.get(&tid).cloned().unwrap_or_default()
                ),
            }));
        }
        let image = match self.types.get(pointee) {
            Type::Image(t) => Some(*t),
            Type::SampledImage(t) => match self.types.get(*t) {
                Type::Image(t) => Some(*t),
                _ => None,
            },
            _ => None,
        };
        let sampler = match self.types.get(pointee) {
            Type::Sampler => true,
            Type::SampledImage(_) => image.is_some_and(|t| t.dim != ImageDim::Buffer),
            _ => false,
        };
        if storage == Storage::Image && image.is_none() && !sampler {
            return Err(unsupported(format!(
                "variable {}: a UniformConstant variable that is not an image, sampler or texel buffer, or a sized array of them",
                self.name(rid)
            )));
        }
        // An image's bytes are its texels, as many as the bound image has (like a runtime array
        // of texels).
        let (size, _) = match image {
            Some(_) => (0, 1),
            None if sampler => (0, 1),
            None => self.types.size_align(pointee, MatrixLayout::default())?,
        };
        let runtime_array = match image {
            Some(t) => Some((0, t.format.texel_bytes())),
            None => self.trailing_runtime_array(pointee)?,
        };
        let binding = match (
            self.deco_lit(rid, Decoration::DescriptorSet),
            self.deco_lit(rid, Decoration::Binding),
        ) {
            (s, Some(b)) if storage.is_global() && storage != Storage::PushConstant => {
                Some((s.unwrap_or(0), b))
            }
            _ => None,
        };
        if matches!(
            storage,
            Storage::StorageBuffer | Storage::Uniform | Storage::Image
        ) && binding.is_none()
        {
            return Err(SpirvError::malformed(format!(
                "buffer variable {} has no Binding decoration",
                self.name(rid)
            )));
        }
        let builtin = self
            .deco_lit(rid, Decoration::BuiltIn)
            .and_then(BuiltIn::from_u32);
        let read_only = matches!(
            storage,
            Storage::Uniform | Storage::PushConstant | Storage::Input
        ) || self.has_deco(rid, Decoration::NonWritable)
            || self.all_members_non_writable(pointee)
            || image.is_some_and(|t| !t.storage)
            || sampler;
        let init = match i.operands.get(1) {
            Some(Operand::IdRef(c)) => {
                let c = self.konst(*c)?.clone();
                Some(self.const_reg(&c))
            }
            _ => None,
        };
        let words = size.div_ceil(4).max(1).next_multiple_of(2);
        let unit = match image {
            Some(t) => t.format.unit(),
            None => self.types.unit(pointee),
        };
        // Memory bound from outside (buffers, images) gets no words or units here; a variable of
        // the invocation or the workgroup is bounded by `allocate`, so its unit count fits (a
        // block of nearly 4 GiB overflowed `words * 4` in 32 bits: found by the spirv fuzz target).
        let units = if storage.is_global() {
            0
        } else {
            u32::try_from(words as u64 * 4 / unit as u64)
                .map_err(|_| unsupported("a variable of 4 GiB or more"))?
        };
        let (base, tbase) = self.allocate(storage, words, units)?;
        let name = self.variable_name(rid, pointee, element, func);
        let loc = LocId::new(self.locs.len() as u32);
        self.locs.push(Location {
            file: self.file.clone(),
            line: None,
            op: "OpVariable".into(),
            id: Some(rid),
            block: None,
            names: self.loc_names(Some(rid), None),
        });
        self.objects.push(Object {
            name,
            storage,
            ty: pointee,
            size,
            words: if storage.is_global() { 0 } else { words },
            base,
            unit,
            tbase,
            init,
            binding,
            builtin,
            runtime_array,
            read_only,
            loc,
            element: element.map_or(0, |(k, _)| k),
            descriptors: element.map_or(0, |(_, n)| n),
            image,
            sampler,
            used: true,
        });
        let obj = ObjectId::new((self.objects.len() - 1) as u32);
        self.ptr_layout.insert(rid, MatrixLayout::default());
        Ok(obj)
    }

    /// Per-lane or shared memory for a variable of `words` words and `units` taint units in
    /// `storage`: its first word and first taint unit (0 for memory bound from outside).
    fn allocate(
        &mut self,
        storage: Storage,
        words: u32,
        units: u32,
    ) -> Result<(u32, u32), SpirvError> {
        let tbase = match storage {
            Storage::Function | Storage::Private | Storage::Input => {
                let b = self.lane_units;
                self.lane_units += units;
                b
            }
            Storage::Workgroup => {
                let b = self.shared_units;
                self.shared_units += units;
                b
            }
            _ => 0,
        };
        let base = match storage {
            Storage::Function | Storage::Private | Storage::Input => {
                let b = self.lane_words;
                self.lane_words = self
                    .lane_words
                    .checked_add(words)
                    .filter(|w| *w <= 1 << 20)
                    .ok_or_else(|| unsupported("more than 4 MiB of per-invocation variables"))?;
                b
            }
            Storage::Workgroup => {
                let b = self.shared_words;
                self.shared_words = self
                    .shared_words
                    .checked_add(words)
                    .filter(|w| *w <= 1 << 24)
                    .ok_or_else(|| unsupported("more than 64 MiB of shared memory"))?;
                b
            }
            _ => 0,
        };
        Ok((base, tbase))
    }

    /// A variable's name in the user's terms: its own, or for a block without an instance name
    /// its member (one member) or block name, with its descriptor-array element and function.
    fn variable_name(
        &self,
        rid: u32,
        pointee: TypeId,
        element: Option<(u32, u32)>,
        func: Option<&str>,
    ) -> String {
        // A block without an instance name (`buffer B { uint data[]; };`) is known by its member
        // when it has one, else by its block name — never by a SPIR-V id.
        let own = match self.names.get(&rid) {
            Some(n) => n.clone(),
            None => {
                let tid = type_spirv_id(self, pointee);
                match self.types.get(pointee) {
                    Type::Struct { members, .. } if members.len() == 1 => self
                        .member_names
                        .get(&(tid, 0))
                        .or_else(|| self.names.get(&tid))
                        .cloned()
                        .unwrap_or_else(|| self.name(rid)),
                    Type::Struct { .. } => self
                        .names
                        .get(&tid)
                        .cloned()
                        .unwrap_or_else(|| self.name(rid)),
                    _ => self.name(rid),
                }
            }
        };
        let own = match element {
            Some((k, _)) => format!("{own}[{k}]"),
            None => own,
        };
        match func {
            Some(f) => format!("{own} (in {f})"),
            None => own,
        }
    }

    /// An `OpTypeImage` the interpreter runs, or why not (the refusal names the feature).
    pub(super) fn image_type(&self, i: &Instruction) -> Result<ImageType, String> {
        let lit = |k: usize| match i.operands.get(k) {
            Some(Operand::LiteralBit32(x)) => Ok(*x),
            _ => Err(format!("OpTypeImage operand {k} is not a literal")),
        };
        let sampled_type = match i.operands.first() {
            Some(Operand::IdRef(t)) => match self.ty(*t).map(|t| self.types.get(t)) {
                Ok(Type::Scalar(s)) => *s,
                _ => return Err("OpTypeImage with a sampled type that is not a scalar".into()),
            },
            _ => return Err("OpTypeImage without a sampled type".into()),
        };
        let dim = match i.operands.get(1) {
            Some(Operand::Dim(d)) => match d {
                Dim::Dim1D => ImageDim::D1,
                Dim::Dim2D => ImageDim::D2,
                Dim::Dim3D => ImageDim::D3,
                Dim::DimBuffer => ImageDim::Buffer,
                other => {
                    // rspirv's names carry the prefix (`DimCube`): SPIR-V's are `Cube`, `Rect`, …
                    let name = format!("{other:?}");
                    return Err(format!(
                        "an image of Dim {} (images of 1D, 2D, 3D and texel buffers are interpreted)",
                        name.trim_start_matches("Dim")
                    ));
                }
            },
            _ => return Err("OpTypeImage without a Dim".into()),
        };
        let (arrayed, ms, sampled) = (lit(3)? == 1, lit(4)? == 1, lit(5)?);
        // `Unknown` (every GLSL `samplerBuffer`; storage images with
        // shaderStorageImageRead/WriteWithoutFormat): the bound buffer or image gives the format
        // at run time; until then a placeholder of the sampled type's kind.
        let (format, format_given) = match i.operands.get(6) {
            Some(Operand::ImageFormat(rspirv::spirv::ImageFormat::Unknown)) => {
                let placeholder = match sampled_type {
                    Scalar::Float { .. } => rspirv::spirv::ImageFormat::Rgba32f,
                    Scalar::Int { signed: true, .. } => rspirv::spirv::ImageFormat::Rgba32i,
                    _ => rspirv::spirv::ImageFormat::Rgba32ui,
                };
                (
                    crate::spirv::image::TexelFormat::of_spirv(placeholder)?,
                    false,
                )
            }
            Some(Operand::ImageFormat(f)) => {
                (crate::spirv::image::TexelFormat::of_spirv(*f)?, true)
            }
            _ => return Err("OpTypeImage without an image format".into()),
        };
        if arrayed && dim == ImageDim::D3 {
            return Err("an arrayed 3D image".into());
        }
        if format_given && format.comp.is_float() != sampled_type.is_float() {
            return Err(format!(
                "an image of {} texels read as {} (Vulkan requires the sampled type to match the format's numeric type)",
                format.vk,
                sampled_type.name()
            ));
        }
        Ok(ImageType {
            sampled_type,
            dim,
            arrayed,
            ms,
            storage: sampled == 2,
            format,
            format_given,
        })
    }

    pub(super) fn has_deco_type(&self, t: TypeId, d: Decoration) -> bool {
        let id = type_spirv_id(self, t);
        self.has_deco(id, d)
    }

    pub(super) fn all_members_non_writable(&self, t: TypeId) -> bool {
        let id = type_spirv_id(self, t);
        match self.types.get(t) {
            Type::Struct { members, .. } => {
                !members.is_empty()
                    && (0..members.len() as u32).all(|m| self.mhas(id, m, Decoration::NonWritable))
            }
            _ => false,
        }
    }

    pub(super) fn trailing_runtime_array(
        &self,
        t: TypeId,
    ) -> Result<Option<(u32, u32)>, SpirvError> {
        match self.types.get(t) {
            Type::Struct { members, .. } => {
                let last = members.len() as u32 - 1;
                if let Some(mt) = members.last()
                    && let Type::RuntimeArray { .. } = self.types.get(*mt)
                {
                    let (off, _, ml) = self.types.member(t, last)?;
                    let (_, stride, _, _) = self.types.element(*mt, ml)?;
                    return Ok(Some((off, stride)));
                }
                Ok(None)
            }
            Type::RuntimeArray { .. } => {
                let (_, stride, _, _) = self.types.element(t, MatrixLayout::default())?;
                Ok(Some((0, stride)))
            }
            _ => Ok(None),
        }
    }

    pub(super) fn name(&self, id: u32) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("%{id}"))
    }

    pub(super) fn plan(&mut self, t: TypeId, m: MatrixLayout) -> Result<PlanId, SpirvError> {
        if let Some(p) = self.plan_ids.get(&(t, m)) {
            return Ok(*p);
        }
        let slots = self.types.slot_layout(t, m)?;
        let (size, _) = self.types.size_align(t, m)?;
        self.plans.push(Plan {
            slots: slots.iter().map(|s| (s.scalar, s.offset)).collect(),
            size,
        });
        let id = (self.plans.len() - 1) as PlanId;
        self.plan_ids.insert((t, m), id);
        Ok(id)
    }
}

/// Id operand `k` of a module-scope instruction.
fn global_id(i: &Instruction, k: usize) -> Result<u32, SpirvError> {
    match i.operands.get(k) {
        Some(Operand::IdRef(x)) => Ok(*x),
        _ => Err(SpirvError::malformed(format!(
            "{} operand {k}",
            op_name(i.class.opcode)
        ))),
    }
}

/// Literal operand `k` of a module-scope instruction.
fn global_lit(i: &Instruction, k: usize) -> Result<u32, SpirvError> {
    match i.operands.get(k) {
        Some(Operand::LiteralBit32(x)) => Ok(*x),
        _ => Err(SpirvError::malformed(format!(
            "{} operand {k}",
            op_name(i.class.opcode)
        ))),
    }
}
