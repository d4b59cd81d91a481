//! Module facts: debug information, decorations and names, the entry point, its execution modes
//! and the specialization constants it declares.

use super::*;

/// `DenormPreserve` and `SignedZeroInfNanPreserve` as an entry point declares them, each for floats
/// of 16, 32 and 64 bits.
pub(super) type Preserve = [[bool; 3]; 2];

impl Decoder<'_> {
    pub(super) fn debug_info(&mut self) {
        for i in &self.m.debug_string_source {
            match i.class.opcode {
                SOp::String => {
                    if let (Some(id), Some(Operand::LiteralString(s))) =
                        (i.result_id, i.operands.first())
                    {
                        self.ids.insert(id, Id::Str(s.clone()));
                    }
                }
                SOp::Source => {
                    if let Some(Operand::IdRef(f)) = i.operands.get(2)
                        && let Some(Id::Str(s)) = self.ids.get(f)
                    {
                        self.file.get_or_insert(s.clone());
                    }
                }
                _ => {}
            }
        }
        for i in &self.m.debug_names {
            if i.class.opcode == SOp::MemberName
                && let (
                    Some(Operand::IdRef(id)),
                    Some(Operand::LiteralBit32(m)),
                    Some(Operand::LiteralString(s)),
                ) = (i.operands.first(), i.operands.get(1), i.operands.get(2))
                && !s.is_empty()
            {
                self.member_names.insert((*id, *m), s.clone());
            }
            if i.class.opcode == SOp::Name
                && let (Some(Operand::IdRef(id)), Some(Operand::LiteralString(s))) =
                    (i.operands.first(), i.operands.get(1))
                && !s.is_empty()
            {
                self.names.insert(*id, s.clone());
            }
        }
        // A variable's DebugGlobalVariable (NonSemantic.Shader.DebugInfo.100: Slang and DXC with
        // debug information) names it as its source does, before any OpName (which a compiler
        // may mangle); names given with the options (an assembly text's) come last.
        for &(var, name) in &self.debug_globals {
            if let Some(Id::Str(s)) = self.ids.get(&name)
                && !s.is_empty()
            {
                self.names.insert(var, s.clone());
            }
        }
        for (id, n) in &self.opts.names {
            self.names.entry(*id).or_insert_with(|| n.clone());
        }
        for e in &self.m.ext_inst_imports {
            if let (Some(id), Some(Operand::LiteralString(s))) = (e.result_id, e.operands.first()) {
                let v = match s.as_str() {
                    "GLSL.std.450" => Id::Glsl,
                    "NonSemantic.DebugPrintf" => Id::Printf,
                    _ => Id::NonSemantic,
                };
                self.ids.insert(id, v);
            }
        }
    }

    pub(super) fn annotations(&mut self) -> Result<(), SpirvError> {
        for a in &self.m.annotations {
            let lits = |from: usize| -> Vec<u32> {
                a.operands[from..]
                    .iter()
                    .filter_map(|o| match o {
                        Operand::LiteralBit32(x) => Some(*x),
                        Operand::BuiltIn(b) => Some(*b as u32),
                        Operand::IdRef(x) => Some(*x),
                        _ => None,
                    })
                    .collect()
            };
            match a.class.opcode {
                SOp::Decorate | SOp::DecorateId => {
                    if let (Some(Operand::IdRef(t)), Some(Operand::Decoration(d))) =
                        (a.operands.first(), a.operands.get(1))
                    {
                        self.deco.entry(*t).or_default().push((*d, lits(2)));
                    }
                }
                SOp::MemberDecorate => {
                    if let (
                        Some(Operand::IdRef(t)),
                        Some(Operand::LiteralBit32(mem)),
                        Some(Operand::Decoration(d)),
                    ) = (a.operands.first(), a.operands.get(1), a.operands.get(2))
                    {
                        self.mdeco
                            .entry((*t, *mem))
                            .or_default()
                            .push((*d, lits(3)));
                    }
                }
                SOp::DecorationGroup | SOp::GroupDecorate | SOp::GroupMemberDecorate => {
                    return Err(unsupported("decoration groups (OpDecorationGroup)"))
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(super) fn has_deco(&self, id: u32, d: Decoration) -> bool {
        self.deco
            .get(&id)
            .is_some_and(|v| v.iter().any(|(x, _)| *x == d))
    }

    pub(super) fn deco_lit(&self, id: u32, d: Decoration) -> Option<u32> {
        self.deco
            .get(&id)?
            .iter()
            .find(|(x, _)| *x == d)
            .and_then(|(_, l)| l.first().copied())
    }

    pub(super) fn mdeco_lit(&self, id: u32, m: u32, d: Decoration) -> Option<u32> {
        self.mdeco
            .get(&(id, m))?
            .iter()
            .find(|(x, _)| *x == d)
            .and_then(|(_, l)| l.first().copied())
    }

    pub(super) fn mhas(&self, id: u32, m: u32, d: Decoration) -> bool {
        self.mdeco
            .get(&(id, m))
            .is_some_and(|v| v.iter().any(|(x, _)| *x == d))
    }

    pub(super) fn entry_point(&self) -> Result<(u32, String, Vec<u32>), SpirvError> {
        let mut computes = Vec::new();
        for e in &self.m.entry_points {
            let model = match e.operands.first() {
                Some(Operand::ExecutionModel(m)) => *m,
                _ => continue,
            };
            let (Some(Operand::IdRef(f)), Some(Operand::LiteralString(name))) =
                (e.operands.get(1), e.operands.get(2))
            else {
                continue;
            };
            let iface: Vec<u32> = e.operands[3..]
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(x) => Some(*x),
                    _ => None,
                })
                .collect();
            computes.push((model, *f, name.clone(), iface));
        }
        let wanted = self.opts.entry.as_deref();
        let pick = match wanted {
            Some(n) => computes.iter().find(|c| c.2 == n),
            None => {
                let gl: Vec<_> = computes
                    .iter()
                    .filter(|c| c.0 == spirv::ExecutionModel::GLCompute)
                    .collect();
                if gl.len() == 1 {
                    Some(gl[0])
                } else {
                    gl.into_iter().find(|c| c.2 == "main")
                }
            }
        };
        let Some((model, f, name, iface)) = pick else {
            let names: Vec<String> = computes
                .iter()
                .map(|c| format!("{} ({:?})", c.2, c.0))
                .collect();
            return Err(SpirvError::Setup(match wanted {
                Some(n) => format!(
                    "no entry point named '{n}' (the module has: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
                None => {
                    format!(
                    "no compute entry point to pick (the module has: {}); name one with --entry",
                    if names.is_empty() { "none".into() } else { names.join(", ") }
                )
                }
            }));
        };
        if *model != spirv::ExecutionModel::GLCompute {
            return Err(SpirvError::Setup(format!(
                "entry point '{name}' is a {model:?} shader: lockstep runs compute shaders (GLCompute) only"
            )));
        }
        Ok((*f, name.clone(), iface.clone()))
    }

    pub(super) fn execution_modes(
        &self,
        entry: u32,
    ) -> Result<([u32; 3], Mode, Preserve), SpirvError> {
        let mut mode = Mode::Base;
        // DenormPreserve and SignedZeroInfNanPreserve, each for floats of 16, 32 and 64 bits.
        let mut preserve = [[false; 3]; 2];
        for em in &self.m.execution_modes {
            let on_entry = matches!(em.operands.first(), Some(Operand::IdRef(f)) if *f == entry);
            if !on_entry {
                continue;
            }
            let Some(Operand::ExecutionMode(m)) = em.operands.get(1) else {
                continue;
            };
            let lits: Vec<u32> = em.operands[2..]
                .iter()
                .filter_map(|o| match o {
                    Operand::LiteralBit32(x) | Operand::IdRef(x) => Some(*x),
                    _ => None,
                })
                .collect();
            match m {
                ExecutionMode::MaximallyReconvergesKHR => mode = Mode::Maximal,
                ExecutionMode::SubgroupUniformControlFlowKHR if mode != Mode::Maximal => {
                    mode = Mode::Sucf
                }
                ExecutionMode::RoundingModeRTZ => {
                    return Err(unsupported(format!(
                        "execution mode RoundingModeRTZ {}: the model rounds to nearest even",
                        lits.first().copied().unwrap_or(0)
                    )))
                }
                ExecutionMode::DenormPreserve | ExecutionMode::SignedZeroInfNanPreserve => {
                    let k = usize::from(*m == ExecutionMode::SignedZeroInfNanPreserve);
                    match lits.first() {
                        Some(16) => preserve[k][0] = true,
                        Some(32) => preserve[k][1] = true,
                        Some(64) => preserve[k][2] = true,
                        w => {
                            return Err(SpirvError::malformed(format!(
                                "execution mode {m:?} with Target Width {}: SPV_KHR_float_controls \
                                 names the width of a floating-point type, 16, 32 or 64",
                                w.map_or("missing".to_string(), |w| w.to_string())
                            )))
                        }
                    }
                }
                _ => {}
            }
        }
        // The workgroup size, folded as the device runner folds it (`words::facts`), from the
        // values decoded here of the specialization constants the run sets. Only those: glslang
        // gives `layout(local_size_x_id = 0)` a constant of its own (default 1, or `local_size_x`)
        // beside a `constant_id = 0` one with another default — one SpecId, two defaults, and
        // each unspecialized constant keeps its own (Vulkan: specialization sets every constant
        // of the SpecId; SPIR-V: an OpSpecConstant not specialized has its default).
        let set: HashSet<u32> = self.opts.spec.iter().map(|(k, _)| *k).collect();
        let spec: Vec<(u32, u64)> = self
            .deco
            .iter()
            .filter_map(|(id, ds)| {
                let sid = *ds
                    .iter()
                    .find(|(d, _)| *d == Decoration::SpecId)?
                    .1
                    .first()?;
                if !set.contains(&sid) {
                    return None;
                }
                match self.ids.get(id) {
                    Some(Id::Const(c)) => Some((sid, *c.bits.first()?)),
                    _ => None,
                }
            })
            .collect();
        let consts = crate::words::facts::Constants::new(self.m, &spec);
        self.check_interface(&consts);
        let size = crate::words::facts::workgroup_size(self.m, entry, &consts)
            .map_err(SpirvError::malformed)?;
        let size = size.ok_or_else(|| {
            SpirvError::malformed("the entry point has no LocalSize, LocalSizeId or WorkgroupSize")
        })?;
        if size.contains(&0) || size.iter().map(|&s| s as u128).product::<u128>() > 1 << 16 {
            return Err(SpirvError::Setup(format!(
                "workgroup size {}x{}x{}: every dimension ≥ 1 and at most 65536 invocations",
                size[0], size[1], size[2]
            )));
        }
        Ok((size, mode, preserve))
    }

    pub(super) fn spec_ids(&self) -> Vec<(u32, String)> {
        let mut v = Vec::new();
        for i in &self.m.types_global_values {
            if matches!(
                i.class.opcode,
                SOp::SpecConstant | SOp::SpecConstantTrue | SOp::SpecConstantFalse
            ) && let (Some(id), Some(t)) = (i.result_id, i.result_type)
                && let Some(sid) = self.deco_lit(id, Decoration::SpecId)
            {
                let tn = match self.ids.get(&t) {
                    Some(Id::Type(t)) => match self.types.get(*t) {
                        Type::Scalar(s) => s.name(),
                        _ => "?".into(),
                    },
                    _ => "?".into(),
                };
                v.push((sid, tn));
            }
        }
        v.sort();
        v
    }
}

impl Decoder<'_> {
    /// The buffers' layout as the device runner checks a dispatch against it
    /// ([`crate::words::layout`], the one reading of bindings and block sizes both sides share)
    /// and as this decoder laid the blocks out for the interpreter must agree: a block's declared
    /// bytes (its fixed part where it ends in a runtime array) and whether it ends in one. A
    /// difference is a bug in one of the two, caught by the debug assertions the tests and
    /// `./run` build with.
    fn check_interface(&self, consts: &crate::words::facts::Constants<'_>) {
        if !cfg!(debug_assertions) {
            return;
        }
        let ix = crate::words::layout::Index::new(self.m);
        let iface = crate::words::layout::interface(&ix, self.m, consts);
        for o in &self.objects {
            let (Some(b), 0) = (o.binding, o.element) else {
                continue;
            };
            // (several variables may share a binding: the reading keeps one of them)
            let Some(info) = iface
                .bindings
                .get(&b)
                .filter(|i| self.locs[o.loc.index()].id == Some(i.var))
            else {
                continue;
            };
            if let Some(size) = info.size {
                debug_assert_eq!(
                    (o.size as u64, o.runtime_array.is_some()),
                    (size, info.runtime_array),
                    "the layout of {} (binding {b:?}): the decoder's size and runtime array vs words::layout's",
                    o.name
                );
            }
        }
    }
}

/// Vulkan's descriptor types, as bits of a set: the ones a resource variable can be bound through
/// ("Shader Resource and Descriptor Type Correspondence", Vulkan's Shader Interfaces chapter).
mod dt {
    pub(super) const SAMPLER: u16 = 1;
    pub(super) const COMBINED_IMAGE_SAMPLER: u16 = 1 << 1;
    pub(super) const SAMPLED_IMAGE: u16 = 1 << 2;
    pub(super) const STORAGE_IMAGE: u16 = 1 << 3;
    pub(super) const UNIFORM_TEXEL_BUFFER: u16 = 1 << 4;
    pub(super) const STORAGE_TEXEL_BUFFER: u16 = 1 << 5;
    pub(super) const UNIFORM_BUFFER: u16 = 1 << 6;
    pub(super) const STORAGE_BUFFER: u16 = 1 << 7;
}

/// The descriptor types `o` can be bound through, and what it is, for people; `None` for memory
/// no descriptor binds (push constants, workgroup and invocation memory).
fn descriptor_types(o: &Object) -> Option<(u16, &'static str)> {
    Some(match (o.storage, o.image) {
        (Storage::StorageBuffer, _) => (dt::STORAGE_BUFFER, "a storage buffer"),
        (Storage::Uniform, _) => (dt::UNIFORM_BUFFER, "a uniform buffer"),
        (Storage::Image, Some(t)) if t.dim == ImageDim::Buffer && t.storage => {
            (dt::STORAGE_TEXEL_BUFFER, "a storage texel buffer")
        }
        (Storage::Image, Some(t)) if t.dim == ImageDim::Buffer => {
            (dt::UNIFORM_TEXEL_BUFFER, "a uniform texel buffer")
        }
        (Storage::Image, Some(_)) if o.sampler => {
            (dt::COMBINED_IMAGE_SAMPLER, "a combined image sampler")
        }
        (Storage::Image, Some(t)) if t.storage => (dt::STORAGE_IMAGE, "a storage image"),
        // A sampled image and a sampler may share a combined image sampler's binding.
        (Storage::Image, Some(_)) => (
            dt::SAMPLED_IMAGE | dt::COMBINED_IMAGE_SAMPLER,
            "a sampled image",
        ),
        (Storage::Image, None) => (dt::SAMPLER | dt::COMBINED_IMAGE_SAMPLER, "a sampler"),
        _ => return None,
    })
}

impl Decoder<'_> {
    /// The ids the entry point's code refers to: every operand of every instruction in the
    /// functions it reaches through `OpFunctionCall` (its static use).
    fn entry_uses(&self, entry: u32) -> HashSet<u32> {
        let by_id: HashMap<u32, &rspirv::dr::Function> = self
            .m
            .functions
            .iter()
            .filter_map(|f| Some((f.def.as_ref()?.result_id?, f)))
            .collect();
        let (mut uses, mut todo, mut seen) = (HashSet::new(), vec![entry], HashSet::new());
        while let Some(fid) = todo.pop() {
            let Some(f) = by_id.get(&fid).filter(|_| seen.insert(fid)) else {
                continue;
            };
            for i in f.blocks.iter().flat_map(|b| &b.instructions) {
                for o in &i.operands {
                    if let Operand::IdRef(x) = o {
                        uses.insert(*x);
                    }
                }
                if i.class.opcode == SOp::FunctionCall
                    && let Some(Operand::IdRef(callee)) = i.operands.first()
                {
                    todo.push(*callee);
                }
            }
        }
        uses
    }

    /// Marks the objects the entry point's code refers to ([`Object::used`]): a binding none of its
    /// code reaches needs no input.
    pub(super) fn mark_used(&mut self, entry: u32) {
        let uses = self.entry_uses(entry);
        for o in &mut self.objects {
            o.used = self.locs[o.loc.index()]
                .id
                .is_some_and(|v| uses.contains(&v));
        }
    }

    /// Refuses two resource variables the entry point uses ([`Decoder::mark_used`]) at one
    /// descriptor set and binding whose descriptor types differ — a uniform block and a storage block at `binding = 0`, as
    /// OpenGL allows (its uniform and shader storage blocks number their bindings apart) and
    /// Vulkan does not: a descriptor set layout gives each binding one `descriptorType`, and a
    /// pipeline's layout must match the descriptor type of every resource variable of its shader
    /// (Vulkan, "Shader Resource and Descriptor Type Correspondence";
    /// VUID-VkComputePipelineCreateInfo-layout-07991). Variables the entry point never refers to
    /// are not checked.
    pub(super) fn check_descriptor_types(&self) -> Result<(), SpirvError> {
        let mut seen: HashMap<(u32, u32), (u16, usize)> = HashMap::new();
        for (k, o) in self.objects.iter().enumerate() {
            let (Some(b), 0, true, Some((types, _))) =
                (o.binding, o.element, o.used, descriptor_types(o))
            else {
                continue;
            };
            match seen.get_mut(&b) {
                None => {
                    seen.insert(b, (types, k));
                }
                Some((both, _)) if *both & types != 0 => *both &= types,
                Some((_, first)) => {
                    let a = &self.objects[*first];
                    let what = |o: &Object| descriptor_types(o).map_or("", |(_, w)| w);
                    return Err(SpirvError::malformed(format!(
                        "binding {}.{}: `{}` is {} and `{}` is {}, and one binding has one descriptor type, so no pipeline layout serves both (Vulkan, Shader Resource and Descriptor Type Correspondence; VUID-VkComputePipelineCreateInfo-layout-07991); give one of them a binding of its own (OpenGL numbers uniform and shader storage blocks apart, Vulkan does not)",
                        b.0,
                        b.1,
                        a.name,
                        what(a),
                        o.name,
                        what(o)
                    )));
                }
            }
        }
        Ok(())
    }
}
