//! `PIPELINE` and `DERIVE_PIPELINE`: shaders attached, specialization, `BIND`ings (buffers,
//! buffer arrays, push constants, descriptor offsets and ranges), subgroup size requirements.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn pipeline(&mut self, line: usize) -> PResult<()> {
        const C: &str = "PIPELINE";
        let (ty, tl) = self.word(C, "a pipeline type (compute or graphics)")?;
        match ty {
            "compute" => {}
            "graphics" => return graphics(tl, "PIPELINE graphics", "graphics pipelines"),
            _ => return err(tl, C, format!("unknown pipeline type: {ty}")),
        }
        let (name, nl) = self.word(C, "a pipeline name")?;
        if self.pipeline_index(name).is_some() {
            return err(nl, C, format!("duplicate pipeline name: {name}"));
        }
        self.end_of_statement("PIPELINE")?;
        let draft = PipelineDraft {
            name: name.to_string(),
            line,
            shader: None,
            entry_point: "main".to_string(),
            specializations: Vec::new(),
            subgroup: SubgroupControl::default(),
            bindings: Vec::new(),
            samplers: Vec::new(),
            optimizations: Vec::new(),
        };
        self.pipeline_body(C, draft)
    }

    pub(super) fn derive_pipeline(&mut self, line: usize) -> PResult<()> {
        const C: &str = "DERIVE_PIPELINE";
        let (name, nl) = self.word(C, "a pipeline name")?;
        if name == "FROM" {
            return err(nl, C, "missing pipeline name for DERIVE_PIPELINE command");
        }
        if self.pipeline_index(name).is_some() {
            return err(nl, C, format!("duplicate pipeline name: {name}"));
        }
        self.keyword(C, "FROM")?;
        let (parent, pl) = self.word(C, "a parent pipeline name")?;
        let Some(pi) = self.pipeline_index(parent) else {
            return err(pl, C, format!("unknown parent pipeline: {parent}"));
        };
        self.end_of_statement("DERIVE_PIPELINE")?;
        let p = self.script.pipelines[pi].clone();
        let draft = PipelineDraft {
            name: name.to_string(),
            line,
            shader: Some(p.shader),
            entry_point: p.entry_point,
            specializations: p.specializations,
            subgroup: p.subgroup,
            bindings: p.bindings,
            samplers: p.samplers,
            optimizations: p.optimizations,
        };
        self.pipeline_body(C, draft)
    }

    pub(super) fn pipeline_body(&mut self, cmd: &str, mut p: PipelineDraft) -> PResult<()> {
        loop {
            let (t, l) = self.next();
            let w = match t {
                Tok::Eol => continue,
                Tok::Eos => return err(p.line, cmd, format!("{cmd} {}: missing END", p.name)),
                Tok::Word("END") => break,
                Tok::Word(w) => w,
            };
            match w {
                "ATTACH" => self.attach(&mut p)?,
                "BIND" => self.bind(&mut p)?,
                "SUBGROUP" => self.subgroup(&mut p, l)?,
                "SHADER_OPTIMIZATION" => {
                    // SHADER_OPTIMIZATION shader NEWLINE pass… END: spirv-opt flags.
                    let (sname, sl) = self.word(w, "a shader name")?;
                    if self.shader_index(sname).is_none() || p.shader != self.shader_index(sname) {
                        return err(sl, w, format!("unknown shader in SHADER_OPTIMIZATION command: {sname} (the pipeline's attached shader)"));
                    }
                    self.end_of_statement(w)?;
                    loop {
                        match self.next() {
                            (Tok::Eol, _) => continue,
                            (Tok::Eos, _) => {
                                return err(l, w, "SHADER_OPTIMIZATION missing END command")
                            }
                            (Tok::Word("END"), _) => break,
                            (Tok::Word(flag), fl) => {
                                let ok = flag.starts_with("--")
                                    && flag.len() > 2
                                    && flag[2..].bytes().all(|c| {
                                        c.is_ascii_alphanumeric()
                                            || matches!(c, b'-' | b'_' | b'=' | b',' | b'.' | b':')
                                    });
                                if !ok {
                                    return err(fl, w, format!("{flag} is not a SPIRV-Tools optimizer flag (--name or --name=value)"));
                                }
                                p.optimizations.push(flag.to_string());
                            }
                        }
                    }
                    self.end_of_statement(w)?;
                }
                "COMPILE_OPTIONS" | "SET" => {
                    return unsupported(l, w, "OpenCL-C kernels are not supported")
                }
                "FRAMEBUFFER_SIZE"
                | "VIEWPORT"
                | "VERTEX_DATA"
                | "INDEX_DATA"
                | "POLYGON_MODE"
                | "DEPTH"
                | "STENCIL"
                | "BLEND"
                | "PATCH_CONTROL_POINTS" => return graphics(l, w, "graphics pipeline state"),
                _ => return err(l, w, format!("unknown command in {cmd} block")),
            }
        }
        self.end_of_statement(cmd)?;
        let Some(shader) = p.shader else {
            return err(
                p.line,
                cmd,
                format!(
                    "{}: no ATTACH: a compute pipeline needs a compute shader",
                    p.name
                ),
            );
        };
        self.script.pipelines.push(Pipeline {
            name: p.name,
            line: p.line,
            shader,
            entry_point: p.entry_point,
            specializations: p.specializations,
            subgroup: p.subgroup,
            bindings: p.bindings,
            samplers: p.samplers,
            optimizations: p.optimizations,
        });
        Ok(())
    }

    pub(super) fn attach(&mut self, p: &mut PipelineDraft) -> PResult<()> {
        const C: &str = "ATTACH";
        let (name, nl) = self.word(C, "a shader name")?;
        let Some(si) = self.shader_index(name) else {
            return err(nl, C, format!("unknown shader in ATTACH command: {name}"));
        };
        match p.shader {
            Some(s) if s == si => {
                return err(
                    nl,
                    C,
                    format!("can not add duplicate shader to pipeline: {name}"),
                )
            }
            Some(s) => {
                return err(
                    nl,
                    C,
                    format!(
                        "a compute pipeline has one shader: {} is already attached",
                        self.script.shaders[s].name
                    ),
                )
            }
            None => p.shader = Some(si),
        }
        let mut t = self.next();
        if t.0 == Tok::Word("TYPE") {
            let (ty, tl) = self.word(C, "a shader type after TYPE")?;
            if ty != "compute" {
                return err(
                    tl,
                    C,
                    format!("ATTACH TYPE {ty} in a compute pipeline (TYPE compute)"),
                );
            }
            t = self.next();
            if t.0 != Tok::Word("ENTRY_POINT") {
                return err(t.1, C, "ATTACH TYPE requires an ENTRY_POINT");
            }
        }
        if t.0 == Tok::Word("ENTRY_POINT") {
            let (e, _) = self.word(C, "an entry point name after ENTRY_POINT")?;
            p.entry_point = e.to_string();
            t = self.next();
        }
        loop {
            match t {
                (Tok::Word("SPECIALIZE"), _) => {
                    let s = self.specialization()?;
                    p.specializations.push(s);
                    t = self.next();
                }
                (Tok::Eol | Tok::Eos, _) => return Ok(()),
                (Tok::Word(w), l) => return err(l, C, format!("unknown ATTACH parameter: {w}")),
            }
        }
    }

    pub(super) fn specialization(&mut self) -> PResult<Specialization> {
        const C: &str = "ATTACH";
        let id = self.uint(C, "specialization ID")?;
        self.keyword(C, "AS")?;
        let (ty, tl) = self.word(C, "a data type in SPECIALIZE")?;
        let scalar = match ty {
            "uint32" => Scalar::U32,
            "int32" => Scalar::I32,
            "float" => Scalar::F32,
            _ => {
                return err(tl, C, format!("SPECIALIZE {id} AS {ty}: only 32-bit types are accepted for specialization values (uint32, int32, float)"))
            }
        };
        let lit = self.number(C, "specialization value", scalar)?;
        let mut b = [0u8; 4];
        scalar.encode(lit, &mut b).or_else(|e| err(tl, C, e.0))?;
        Ok(Specialization {
            id,
            scalar,
            bits: u32::from_le_bytes(b),
        })
    }

    /// `AS storage|uniform[_dynamic] DESCRIPTOR_SET s BINDING b [OFFSET o…] [DESCRIPTOR_OFFSET o…]
    /// [DESCRIPTOR_RANGE r…]` after `BIND BUFFER name`: the binding, with each buffer's offset
    /// and range.
    fn bind_buffer_as(
        &mut self,
        name: &str,
        ty: &str,
        offsets: &mut [u64],
        ranges: &mut [Option<u64>],
    ) -> PResult<BindingKind> {
        const C: &str = "BIND";
        match self.next() {
                (Tok::Word("DESCRIPTOR_SET"), _) => {}
                (t, l) => return err(l, C, format!("BIND BUFFER {name} AS {ty}: expected DESCRIPTOR_SET, found {t} (BIND BUFFER name AS {ty} DESCRIPTOR_SET s BINDING b)")),
            }
        let set = self.uint(C, "DESCRIPTOR_SET")?;
        self.keyword(C, "BINDING")?;
        let binding = self.uint(C, "BINDING")?;
        if ty.ends_with("_dynamic") {
            match self.next() {
                (Tok::Word("OFFSET"), _) => {}
                (t, l) => {
                    return err(
                        l,
                        C,
                        format!("expecting an OFFSET for dynamic buffer type (found {t})"),
                    )
                }
            }
            for o in offsets.iter_mut() {
                *o += self.uint(C, "OFFSET (one per buffer)")? as u64;
            }
        }
        if self.lx.peek() == Tok::Word("DESCRIPTOR_OFFSET") {
            self.next();
            for o in offsets.iter_mut() {
                *o += self.uint(C, "DESCRIPTOR_OFFSET (one per buffer)")? as u64;
            }
        }
        if self.lx.peek() == Tok::Word("DESCRIPTOR_RANGE") {
            self.next();
            for r in ranges.iter_mut() {
                let (w, l) = self.word(C, "a DESCRIPTOR_RANGE value (one per buffer)")?;
                match Literal::parse(w) {
                    Some(Literal::Int(v)) if v > 0 && v <= u64::MAX as i128 => {
                        // VK_WHOLE_SIZE (~0) is the default
                        if v != u64::MAX as i128 {
                            *r = Some(v as u64)
                        }
                    }
                    _ => {
                        return err(
                            l,
                            C,
                            format!("invalid DESCRIPTOR_RANGE: {w} (a number of bytes > 0)"),
                        )
                    }
                }
            }
        }
        Ok(if ty.starts_with("storage") {
            BindingKind::Storage { set, binding }
        } else {
            BindingKind::Uniform { set, binding }
        })
    }

    /// `AS storage_image|uniform_texel_buffer|storage_texel_buffer DESCRIPTOR_SET s BINDING b`
    /// after `BIND BUFFER[_ARRAY] names…`: the binding, the buffers checked to be of its kind.
    fn bind_image_as(
        &mut self,
        bufs: &[(usize, &str)],
        array: bool,
        ty: &str,
        tl: usize,
    ) -> PResult<BindingKind> {
        const C: &str = "BIND";
        let name = bufs[0].1;
        // (BUFFER_ARRAY: every element of the same kind as the first)
        if array
            && bufs.iter().any(|(bi, _)| {
                self.script.buffers[*bi].image.is_some()
                    != self.script.buffers[bufs[0].0].image.is_some()
            })
        {
            return err(
                tl,
                C,
                format!(
                    "BUFFER_ARRAY AS {ty}: the buffers are not all of one kind (images or buffers)"
                ),
            );
        }
        let b = &self.script.buffers[bufs[0].0];
        match (ty, b.image) {
            ("storage_image", None) => {
                return err(
                    tl,
                    C,
                    format!("{name} is a BUFFER; AS storage_image binds an IMAGE"),
                )
            }
            (_, Some(_)) if ty != "storage_image" => {
                return err(
                    tl,
                    C,
                    format!("{name} is an IMAGE; AS {ty} binds a BUFFER with a FORMAT"),
                )
            }
            _ => {}
        }
        match self.next() {
            (Tok::Word("DESCRIPTOR_SET"), _) => {}
            (t, l) => {
                return err(
                    l,
                    C,
                    format!("BIND BUFFER {name} AS {ty}: expected DESCRIPTOR_SET, found {t}"),
                )
            }
        }
        let (set, binding) = self.image_slot(tl)?;
        Ok(if ty == "storage_image" {
            BindingKind::StorageImage { set, binding }
        } else {
            BindingKind::TexelBuffer {
                set,
                binding,
                storage: ty == "storage_texel_buffer",
            }
        })
    }

    pub(super) fn bind(&mut self, p: &mut PipelineDraft) -> PResult<()> {
        const C: &str = "BIND";
        let (what, wl) = self.word(C, "BUFFER")?;
        let array = match what {
            "BUFFER" => false,
            "BUFFER_ARRAY" => true,
            "SAMPLER" => return self.bind_sampler(p),
            "SAMPLER_ARRAY" => return unsupported(wl, C, "arrays of sampler descriptors"),
            _ => {
                return err(
                    wl,
                    C,
                    format!("missing BUFFER in BIND command (found {what})"),
                )
            }
        };
        // The buffers: one, or (BUFFER_ARRAY) the descriptors of an array in order.
        let mut bufs: Vec<(usize, &'a str)> = Vec::new();
        loop {
            let (name, nl) = self.word(C, "a buffer name")?;
            let Some(bi) = self.buffer_index(name) else {
                return err(nl, C, format!("unknown buffer: {name}"));
            };
            bufs.push((bi, name));
            if !array || matches!(self.lx.peek(), Tok::Word("AS" | "KERNEL")) {
                break;
            }
        }
        let name = bufs[0].1;
        match self.next() {
            (Tok::Word("AS"), _) => {}
            (Tok::Word("KERNEL"), l) => {
                return unsupported(l, C, "OpenCL-C kernel arguments are not supported")
            }
            (t, l) => {
                return err(
                    l,
                    C,
                    format!(
                        "BIND BUFFER {name}: expected AS storage|uniform|push_constant, found {t}"
                    ),
                )
            }
        }
        let n = bufs.len();
        let (ty, tl) = self.word(C, "a buffer type after AS")?;
        // The window of each buffer its descriptor sees: DESCRIPTOR_OFFSET plus a dynamic
        // OFFSET, DESCRIPTOR_RANGE bytes (AmberScript, "Pipeline Buffers": one value per buffer of
        // an array; Vulkan: the effective offset of a dynamic descriptor is its offset plus the
        // dynamic offset).
        let mut offsets = vec![0u64; n];
        let mut ranges: Vec<Option<u64>> = vec![None; n];
        let kind = match ty {
            "storage" | "uniform" | "storage_dynamic" | "uniform_dynamic" => {
                self.bind_buffer_as(name, ty, &mut offsets, &mut ranges)?
            }
            "push_constant" => {
                if array {
                    return err(tl, C, "push constants cannot be a BUFFER_ARRAY");
                }
                if p.bindings
                    .iter()
                    .any(|b| b.kind == BindingKind::PushConstant)
                {
                    return err(
                        tl,
                        C,
                        "can only bind one push constant buffer in a PIPELINE",
                    );
                }
                BindingKind::PushConstant
            }
            "storage_image" | "uniform_texel_buffer" | "storage_texel_buffer" => {
                self.bind_image_as(&bufs, array, ty, tl)?
            }
            "sampled_image" | "combined_image_sampler" => {
                if array {
                    return unsupported(tl, C, format!("BUFFER_ARRAY AS {ty}"));
                }
                if self.script.buffers[bufs[0].0].image.is_none() {
                    return err(tl, C, format!("{name} is a BUFFER; AS {ty} binds an IMAGE"));
                }
                let sampler = if ty == "combined_image_sampler" {
                    self.keyword(C, "SAMPLER")?;
                    Some(self.sampler_named()?.0)
                } else {
                    None
                };
                self.keyword(C, "DESCRIPTOR_SET")?;
                let (set, binding) = self.image_slot(tl)?;
                match sampler {
                    Some(sampler) => BindingKind::CombinedImageSampler {
                        set,
                        binding,
                        sampler,
                    },
                    None => BindingKind::SampledImage { set, binding },
                }
            }
            "color" | "depth_stencil" | "resolve" => {
                return graphics(tl, C, format!("{ty} attachments and images"))
            }
            _ => return err(tl, C, format!("unknown buffer_type: {ty}")),
        };
        self.end_of_statement("BIND")?;
        // A later BIND to the same set and binding replaces the earlier (Amber: ClearBuffers).
        if let Some(slot) = kind.slot() {
            p.bindings.retain(|b| b.kind.slot() != Some(slot));
            p.samplers.retain(|b| (b.set, b.binding) != slot);
        }
        for (k, (bi, _)) in bufs.iter().enumerate() {
            let (offset, range) = (offsets[k], ranges[k]);
            p.bindings.push(Binding {
                buffer: *bi,
                kind,
                line: tl,
                offset,
                range,
                element: k as u32,
            });
        }
        Ok(())
    }

    /// The next word as a declared sampler's name: its index, and the line.
    fn sampler_named(&mut self) -> PResult<(usize, usize)> {
        let (name, l) = self.word("BIND", "a sampler name")?;
        match self.script.samplers.iter().position(|x| x.name == name) {
            Some(i) => Ok((i, l)),
            None => err(l, "BIND", format!("unknown sampler: {name}")),
        }
    }

    /// `s BINDING b [BASE_MIP_LEVEL 0]` after an image's `DESCRIPTOR_SET` (one level: another base
    /// level is unsupported).
    fn image_slot(&mut self, tl: usize) -> PResult<(u32, u32)> {
        const C: &str = "BIND";
        let set = self.uint(C, "DESCRIPTOR_SET")?;
        self.keyword(C, "BINDING")?;
        let binding = self.uint(C, "BINDING")?;
        if self.lx.peek() == Tok::Word("BASE_MIP_LEVEL") {
            self.next();
            if self.uint(C, "BASE_MIP_LEVEL")? != 0 {
                return unsupported(tl, C, "a BASE_MIP_LEVEL other than 0");
            }
        }
        Ok((set, binding))
    }

    /// `BIND SAMPLER name DESCRIPTOR_SET s BINDING b`.
    fn bind_sampler(&mut self, p: &mut PipelineDraft) -> PResult<()> {
        const C: &str = "BIND";
        let (sampler, nl) = self.sampler_named()?;
        self.keyword(C, "DESCRIPTOR_SET")?;
        let set = self.uint(C, "DESCRIPTOR_SET")?;
        self.keyword(C, "BINDING")?;
        let binding = self.uint(C, "BINDING")?;
        self.end_of_statement("BIND")?;
        // A later BIND to the same set and binding replaces the earlier (Amber: ClearBuffers).
        p.bindings.retain(|b| b.kind.slot() != Some((set, binding)));
        p.samplers.retain(|b| (b.set, b.binding) != (set, binding));
        p.samplers.push(SamplerBinding {
            sampler,
            set,
            binding,
            line: nl,
        });
        Ok(())
    }

    pub(super) fn subgroup(&mut self, p: &mut PipelineDraft, line: usize) -> PResult<()> {
        const C: &str = "SUBGROUP";
        let (name, nl) = self.word(C, "a shader name")?;
        let Some(si) = self.shader_index(name) else {
            return err(nl, C, format!("unknown shader in SUBGROUP command: {name}"));
        };
        if p.shader != Some(si) {
            return err(
                nl,
                C,
                format!("shader {name} is not attached to pipeline {}", p.name),
            );
        }
        let mut sc = SubgroupControl { line, ..p.subgroup };
        let on_off = |w: &str, l: usize, what: &str| -> PResult<bool> {
            match w {
                "on" => Ok(true),
                "off" => Ok(false),
                _ => err(l, C, format!("invalid value for {what}: {w} (on or off)")),
            }
        };
        loop {
            let (t, l) = self.next();
            let w = match t {
                Tok::Eol => continue,
                Tok::Eos => return err(line, C, "SUBGROUP missing END command"),
                Tok::Word("END") => break,
                Tok::Word(w) => w,
            };
            let feature = match w {
                "FULLY_POPULATED" => "SubgroupSizeControl.computeFullSubgroups",
                "VARYING_SIZE" | "REQUIRED_SIZE" => "SubgroupSizeControl.subgroupSizeControl",
                _ => return err(l, C, format!("invalid SUBGROUP option: {w} (FULLY_POPULATED, VARYING_SIZE, REQUIRED_SIZE)")),
            };
            // Amber's parser requires the feature to be declared before it is used.
            if !self.has_feature(feature) {
                return err(
                    l,
                    C,
                    format!("{w} needs DEVICE_FEATURE {feature} earlier in the script"),
                );
            }
            let (v, vl) = self.word(C, &format!("a value for {w}"))?;
            match w {
                "FULLY_POPULATED" => sc.fully_populated = Some(on_off(v, vl, w)?),
                "VARYING_SIZE" => sc.varying_size = Some(on_off(v, vl, w)?),
                _ => {
                    sc.required_size = Some(match v {
                        "MIN" => RequiredSize::Min,
                        "MAX" => RequiredSize::Max,
                        _ => match Literal::parse(v) {
                            Some(Literal::Int(n)) if (1..=128).contains(&n) && (n & (n - 1)) == 0 => {
                                RequiredSize::Size(n as u32)
                            }
                            _ => return err(vl, C, format!("invalid size for REQUIRED_SIZE: {v} (a power of two from 1 to 128, MIN or MAX)")),
                        },
                    })
                }
            }
        }
        self.end_of_statement("SUBGROUP")?;
        p.subgroup = sc;
        Ok(())
    }

    // ---- commands ---------------------------------------------------------------------------
}
