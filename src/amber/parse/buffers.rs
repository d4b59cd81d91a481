//! `BUFFER` and its initializers (`DATA`, `FILL`, `SERIES_FROM`, `FILE`), `VIRTUAL_FILE` aside, and
//! the literal numbers they hold.

use super::*;
use crate::spirv::image::TexelFormat;

impl<'a> Parser<'a> {
    /// A `DATA_TYPE`: an AmberScript type or a format; an image format (normalized, packed, …)
    /// the model runs as a texel buffer's gives the type of its stored integers and the format.
    pub(super) fn data_type(
        &self,
        name: &str,
        line: usize,
        cmd: &str,
    ) -> PResult<(DataType, Option<TexelFormat>)> {
        if let Ok(t) = name.parse::<DataType>() {
            return Ok((t, None));
        }
        if let Some(FormatKind::Image) =
            DataType::from_format(name.strip_suffix("[]").unwrap_or(name))
        {
            return match TexelFormat::of_vk(name) {
                Some(f) => Ok((image_data_type(&f), Some(f))),
                None => graphics(line, cmd, format!("{name} is an image format the model does not run (the formats SPIR-V names for storage images and texel buffers are: R8G8B8A8_UNORM, R16G16_SNORM, A2B10G10R10_UNORM_PACK32, …)")),
            };
        }
        err(line, cmd, format!("invalid data type '{name}' provided"))
    }

    pub(super) fn buffer(&mut self, line: usize) -> PResult<()> {
        const C: &str = "BUFFER";
        let (name, nl) = self.word(C, "a buffer name")?;
        if name == "DATA_TYPE" || name == "FORMAT" {
            return err(nl, C, "missing BUFFER name");
        }
        if self.buffer_index(name).is_some() {
            return err(nl, C, format!("duplicate buffer name provided: {name}"));
        }
        let (kind, kl) = self.word(C, "DATA_TYPE or FORMAT")?;
        let mut texel_format = None;
        let (data_type, layout, elements, values): (DataType, Layout, usize, Init) = match kind {
            "DATA_TYPE" => {
                let (tname, tl) = self.word(C, "a data type")?;
                let (t, texel) = self.data_type(tname, tl, C)?;
                texel_format = texel;
                let (mut init, mut il) = self.word(C, "an initializer (SIZE or DATA)")?;
                let mut layout = Layout::Std430;
                if init == "STD140" || init == "STD430" {
                    layout = if init == "STD140" {
                        Layout::Std140
                    } else {
                        Layout::Std430
                    };
                    (init, il) = self.word(C, "an initializer (SIZE or DATA)")?;
                }
                match init {
                    "SIZE" => {
                        let n = self.uint(C, "BUFFER size")? as usize;
                        let (how, hl) = self.word(C, "FILL or SERIES_FROM")?;
                        let init = match how {
                            "FILL" => Init::Fill(self.fill_number(C, "FILL value", t.scalar)?),
                            "SERIES_FROM" => {
                                if t.is_composite() {
                                    return err(
                                        hl,
                                        C,
                                        format!("SERIES_FROM needs a scalar data type, not {t}"),
                                    );
                                }
                                let start = self.fill_number(C, "SERIES_FROM value", t.scalar)?;
                                self.keyword(C, "INC_BY")?;
                                let inc = self.fill_number(C, "INC_BY value", t.scalar)?;
                                Init::Series(start, inc)
                            }
                            "FILE" => {
                                // Amber takes the element count from the file, not from SIZE.
                                let init = self.buffer_file(hl, &t)?;
                                self.end_of_statement("BUFFER")?;
                                let n = match &init {
                                    Init::Data(v) => v.len() / t.components(),
                                    Init::Bytes(b) => b.len() / t.element_layout(layout).stride,
                                    _ => n,
                                };
                                let initial = fill(&t, layout, n, &init)
                                    .or_else(|m| err(line, C, format!("{name}: {m}")))?;
                                self.script.buffers.push(Buffer {
                                    name: name.to_string(),
                                    line,
                                    data_type: t,
                                    layout,
                                    elements: n,
                                    initial,
                                    image: None,
                                    texel: texel_format,
                                });
                                return Ok(());
                            }
                            _ => {
                                return err(
                                    hl,
                                    C,
                                    format!(
                                        "invalid BUFFER initializer {how} (FILL or SERIES_FROM)"
                                    ),
                                )
                            }
                        };
                        self.end_of_statement("BUFFER")?;
                        (t, layout, n, init)
                    }
                    "DATA" => {
                        let values = self.data_block(t.scalar)?;
                        if !values.len().is_multiple_of(t.components()) {
                            return err(line, C, format!("DATA has {} values, not a multiple of the {} components of {t}", values.len(), t.components()));
                        }
                        self.end_of_statement("BUFFER")?;
                        (t, layout, values.len() / t.components(), Init::Data(values))
                    }
                    "WIDTH" => return graphics(il, C, "WIDTH/HEIGHT buffers are images"),
                    _ => {
                        return err(
                            il,
                            C,
                            format!("unknown initializer for BUFFER: {init} (SIZE or DATA)"),
                        )
                    }
                }
            }
            "FORMAT" => {
                let (f, fl) = self.word(C, "a format")?;
                let t = match DataType::from_format(f) {
                    Some(FormatKind::Plain(t)) => t,
                    Some(FormatKind::Image) => {
                        let (t, texel) = self.data_type(f, fl, C)?;
                        texel_format = texel;
                        t
                    }
                    None => return err(fl, C, format!("invalid BUFFER FORMAT: {f}")),
                };
                if let Tok::Word(w @ ("MIP_LEVELS" | "SAMPLES" | "FILE")) = self.lx.peek() {
                    let (_, l) = self.next();
                    return graphics(l, C, format!("FORMAT buffers with {w} are images"));
                }
                self.end_of_statement("BUFFER")?;
                (t, Layout::Std430, 0, Init::Data(Vec::new()))
            }
            _ => {
                return err(
                    kl,
                    C,
                    format!("unknown BUFFER command provided: {kind} (DATA_TYPE or FORMAT)"),
                )
            }
        };
        let initial = fill(&data_type, layout, elements, &values)
            .or_else(|m| err(line, C, format!("{name}: {m}")))?;
        self.script.buffers.push(Buffer {
            name: name.to_string(),
            line,
            data_type,
            layout,
            elements,
            initial,
            image: None,
            texel: texel_format,
        });
        Ok(())
    }

    /// `SAMPLER name [MAG_FILTER f] [MIN_FILTER f] [ADDRESS_MODE_U|V|W m] [BORDER_COLOR c]
    /// [MIN_LOD x] [MAX_LOD x] [NORMALIZED_COORDS | UNNORMALIZED_COORDS] [MIPMAP_MODE f]`
    /// (AmberScript, "Samplers"; Amber's defaults: nearest, repeat, float transparent black, LOD
    /// 0 to 1, normalized). `COMPARE ON` (depth comparison) is not run.
    pub(super) fn sampler(&mut self, line: usize) -> PResult<()> {
        use crate::spirv::sampler::{AddressMode, BorderColor, Filter, Sampler};
        const C: &str = "SAMPLER";
        let (name, nl) = self.word(C, "a sampler name")?;
        if self.script.samplers.iter().any(|s| s.name == name) {
            return err(nl, C, format!("duplicate sampler name provided: {name}"));
        }
        let mut smp = Sampler::default();
        loop {
            let (w, l) = match self.lx.peek() {
                Tok::Eol | Tok::Eos => break,
                _ => self.word(C, "a SAMPLER attribute")?,
            };
            match w {
                "MAG_FILTER" | "MIN_FILTER" | "MIPMAP_MODE" => {
                    let (v, vl) = self.word(C, "a filter (nearest or linear)")?;
                    let Some(f) = Filter::parse(v) else {
                        return err(vl, C, format!("invalid {w}: {v} (nearest or linear)"));
                    };
                    match w {
                        "MAG_FILTER" => smp.mag = f,
                        "MIN_FILTER" => smp.min = f,
                        // one level: the mipmap mode selects nothing
                        _ => {}
                    }
                }
                "ADDRESS_MODE_U" | "ADDRESS_MODE_V" | "ADDRESS_MODE_W" => {
                    let (v, vl) = self.word(C, "an address mode")?;
                    let Some(m) = AddressMode::parse(v) else {
                        return err(vl, C, format!("invalid {w}: {v} (repeat, mirrored_repeat, clamp_to_edge, clamp_to_border, mirror_clamp_to_edge)"));
                    };
                    smp.address[match w {
                        "ADDRESS_MODE_U" => 0,
                        "ADDRESS_MODE_V" => 1,
                        _ => 2,
                    }] = m;
                }
                "BORDER_COLOR" => {
                    let (v, vl) = self.word(C, "a border color")?;
                    let Some(b) = BorderColor::parse(v) else {
                        return err(vl, C, format!("invalid BORDER_COLOR: {v}"));
                    };
                    smp.border = b;
                }
                "MIN_LOD" | "MAX_LOD" => {
                    let x = match self.number(C, w, Scalar::F32)? {
                        Literal::Int(i) => i as f32,
                        Literal::Float(f) => f as f32,
                    };
                    if w == "MIN_LOD" {
                        smp.min_lod = x;
                    } else {
                        smp.max_lod = x;
                    }
                }
                "NORMALIZED_COORDS" => smp.unnormalized = false,
                "UNNORMALIZED_COORDS" => smp.unnormalized = true,
                "COMPARE" => {
                    let (v, vl) = self.word(C, "ON or OFF")?;
                    match v {
                        "OFF" => {}
                        "ON" => {
                            return unsupported(vl, C, "depth-comparison samplers (COMPARE ON)")
                        }
                        _ => return err(vl, C, format!("invalid COMPARE: {v} (ON or OFF)")),
                    }
                }
                "COMPARE_OP" => {
                    self.word(C, "a compare op")?;
                }
                _ => return err(l, C, format!("unexpected SAMPLER attribute: {w}")),
            }
        }
        if smp.max_lod < smp.min_lod {
            return err(
                line,
                C,
                "max LOD needs to be greater than or equal to min LOD",
            );
        }
        self.script
            .samplers
            .push(crate::amber::script::SamplerDecl {
                name: name.to_string(),
                line,
                sampler: smp,
            });
        Ok(())
    }

    /// `IMAGE name FORMAT f [MIP_LEVELS 1] DIM_1D|DIM_2D|DIM_3D WIDTH w [HEIGHT h] [DEPTH d]
    /// [SAMPLES s] [TILING t] [FILL v | SERIES_FROM v INC_BY i | DATA … END]` (AmberScript,
    /// "Images"): a storage image whose bytes are its texels, tightly packed (see
    /// [`crate::spirv::image`]). Normalized formats take their stored integers in `FILL` and `DATA`.
    pub(super) fn image(&mut self, line: usize) -> PResult<()> {
        const C: &str = "IMAGE";
        let (name, nl) = self.word(C, "an image name")?;
        if self.buffer_index(name).is_some() {
            return err(nl, C, format!("duplicate buffer name provided: {name}"));
        }
        let mut format = None;
        let mut dims = None;
        let (mut width, mut height, mut depth, mut samples) = (None, 1u32, 1u32, 1u32);
        let mut init = None;
        loop {
            let (w, l) = match self.lx.peek() {
                Tok::Eol | Tok::Eos => break,
                _ => self.word(C, "an IMAGE attribute")?,
            };
            match w {
                "FORMAT" => {
                    let (f, fl) = self.word(C, "a format")?;
                    format = Some(match crate::spirv::image::TexelFormat::of_vk(f) {
                        Some(t) => t,
                        None => {
                            return unsupported(
                                fl,
                                C,
                                format!("{f}: the model runs storage images of the formats SPIR-V names (R8G8B8A8_UNORM, R32_UINT, R32G32B32A32_SFLOAT, …)"),
                            )
                        }
                    });
                }
                "DATA_TYPE" => {
                    let (t, tl) = self.word(C, "a data type")?;
                    let f = match t {
                        "uint32" => "R32_UINT",
                        "int32" => "R32_SINT",
                        "float" => "R32_SFLOAT",
                        "vec4<float>" => "R32G32B32A32_SFLOAT",
                        "vec4<uint32>" => "R32G32B32A32_UINT",
                        "vec4<int32>" => "R32G32B32A32_SINT",
                        "vec4<uint8>" => "R8G8B8A8_UINT",
                        _ => {
                            return unsupported(
                                tl,
                                C,
                                format!("IMAGE DATA_TYPE {t}: give a FORMAT"),
                            )
                        }
                    };
                    format = crate::spirv::image::TexelFormat::of_vk(f);
                }
                "DIM_1D" => dims = Some(1u8),
                "DIM_2D" => dims = Some(2),
                "DIM_3D" => dims = Some(3),
                "WIDTH" => width = Some(self.uint(C, "WIDTH")?),
                "HEIGHT" => height = self.uint(C, "HEIGHT")?,
                "DEPTH" => depth = self.uint(C, "DEPTH")?,
                "SAMPLES" => samples = self.uint(C, "SAMPLES")?,
                "MIP_LEVELS" => {
                    let m = self.uint(C, "MIP_LEVELS")?;
                    if m != 1 {
                        return unsupported(
                            l,
                            C,
                            format!("MIP_LEVELS {m}: storage images of one level are run"),
                        );
                    }
                }
                "TILING" => {
                    self.word(C, "OPTIMAL or LINEAR")?;
                }
                "FILL" | "SERIES_FROM" | "DATA" => {
                    let Some(f) = format else {
                        return err(l, C, format!("{w} before the image's FORMAT"));
                    };
                    let t = image_data_type(&f);
                    init = Some(match w {
                        "FILL" => Init::Fill(self.fill_number(C, "FILL value", t.scalar)?),
                        "SERIES_FROM" => {
                            let start = self.fill_number(C, "SERIES_FROM value", t.scalar)?;
                            self.keyword(C, "INC_BY")?;
                            Init::Series(start, self.fill_number(C, "INC_BY value", t.scalar)?)
                        }
                        _ => Init::Data(self.data_block(t.scalar)?),
                    });
                    if w == "DATA" {
                        break;
                    }
                }
                "FILE" => return unsupported(l, C, "IMAGE … FILE (PNG images) is not read"),
                _ => return err(l, C, format!("unknown IMAGE attribute {w}")),
            }
        }
        self.end_of_statement(C)?;
        let Some(format) = format else {
            return err(line, C, "an IMAGE needs a FORMAT");
        };
        let Some(dims) = dims else {
            return err(line, C, "an IMAGE needs DIM_1D, DIM_2D or DIM_3D");
        };
        let Some(width) = width.filter(|w| *w > 0) else {
            return err(line, C, "an IMAGE needs a WIDTH of at least 1");
        };
        if height == 0 || depth == 0 || !samples.is_power_of_two() {
            return err(
                line,
                C,
                "HEIGHT and DEPTH are at least 1, SAMPLES a power of two",
            );
        }
        let extent = crate::spirv::image::Extent {
            width,
            height: if dims >= 2 { height } else { 1 },
            depth: if dims == 3 { depth } else { 1 },
            samples,
        };
        let t = image_data_type(&format);
        let elements = usize::try_from(extent.texels()).unwrap_or(usize::MAX);
        let initial = fill(
            &t,
            Layout::Std430,
            elements,
            &init.unwrap_or(Init::Data(Vec::new())),
        )
        .or_else(|m| err(line, C, format!("{name}: {m}")))?;
        self.script.buffers.push(Buffer {
            name: name.to_string(),
            line,
            data_type: t,
            layout: Layout::Std430,
            elements,
            initial,
            image: Some(crate::amber::script::Image {
                format,
                dims,
                extent,
            }),
            texel: None,
        });
        Ok(())
    }

    /// `FILE TEXT name`, `FILE BINARY name` or `FILE PNG name` after `BUFFER … SIZE n` (AmberScript,
    /// "Buffers": text is read as a `DATA` block would be, to the end of the file; binary bytes are
    /// the buffer's bytes).
    pub(super) fn buffer_file(&mut self, line: usize, t: &DataType) -> PResult<Init> {
        const C: &str = "BUFFER";
        let (mut kind, mut kl) = self.word(C, "TEXT, BINARY or PNG and a file name after FILE")?;
        let mut name = kind;
        if matches!(kind, "TEXT" | "BINARY" | "PNG") {
            (name, kl) = self.word(C, "a file name")?;
        } else {
            kind = "PNG";
        }
        match kind {
            "PNG" => graphics(kl, C, "FILE PNG initializers are images"),
            "BINARY" => {
                let b = self.read_file(line, C, name)?;
                Ok(Init::Bytes(b))
            }
            _ => {
                let text = self.file_text(line, C, name, false)?;
                let mut lx = Lexer {
                    src: &text,
                    pos: 0,
                    line: 1,
                };
                let mut values = Vec::new();
                loop {
                    match lx.next() {
                        (Tok::Eol, _) => continue,
                        (Tok::Eos, _) => break,
                        (Tok::Word(w), l) => {
                            let v = self
                                .literal(w, line, C, "BUFFER data value", t.scalar)
                                .map_err(|e| match e {
                                    ParseFailure::Error(mut x) => {
                                        x.message = format!("{name} line {l}: {}", x.message);
                                        ParseFailure::Error(x)
                                    }
                                    other => other,
                                })?;
                            values.push(v);
                        }
                    }
                }
                if !values.len().is_multiple_of(t.components()) {
                    return err(
                        line,
                        C,
                        format!(
                            "FILE {name} has {} values, not a multiple of the {} components of {t}",
                            values.len(),
                            t.components()
                        ),
                    );
                }
                Ok(Init::Data(values))
            }
        }
    }

    /// A number token valid for `scalar` (integer types take integers only).
    pub(super) fn number(&mut self, cmd: &str, what: &str, scalar: Scalar) -> PResult<Literal> {
        let (w, l) = self.word(cmd, what)?;
        self.literal(w, l, cmd, what, scalar)
    }

    /// A FILL, SERIES_FROM or INC_BY value. Amber reads these as numbers of either kind for every
    /// data type (`FILL 0.0` on an `int16` buffer: the CTS's mul_extended tests); a float written
    /// for an integer type is taken when it is a whole number that fits.
    pub(super) fn fill_number(
        &mut self,
        cmd: &str,
        what: &str,
        scalar: Scalar,
    ) -> PResult<Literal> {
        let (w, l) = self.word(cmd, what)?;
        if !scalar.is_float()
            && let Some(Literal::Float(v)) = Literal::parse(w)
        {
            if v.fract() == 0.0 && v.abs() < 1e30 {
                return self.literal(&format!("{}", v as i128), l, cmd, what, scalar);
            }
            return err(
                l,
                cmd,
                format!(
                    "invalid {what}: {w} is not an integer ({} takes integers)",
                    scalar.amber_name()
                ),
            );
        }
        self.literal(w, l, cmd, what, scalar)
    }

    pub(super) fn literal(
        &self,
        w: &str,
        l: usize,
        cmd: &str,
        what: &str,
        scalar: Scalar,
    ) -> PResult<Literal> {
        let Some(lit) = Literal::parse(w) else {
            return err(l, cmd, format!("invalid {what}: {w}"));
        };
        if let Err(e) = scalar.round_trip(lit) {
            return err(l, cmd, format!("invalid {what}: {}", e.0));
        }
        Ok(lit)
    }

    pub(super) fn data_block(&mut self, scalar: Scalar) -> PResult<Vec<Literal>> {
        const C: &str = "BUFFER";
        let mut values = Vec::new();
        loop {
            match self.next() {
                (Tok::Eol, _) => continue,
                (Tok::Eos, l) => return err(l, C, "missing BUFFER DATA END"),
                (Tok::Word("END"), _) => return Ok(values),
                (Tok::Word(w), l) => {
                    values.push(self.literal(w, l, C, "BUFFER data value", scalar)?)
                }
            }
        }
    }

    // ---- PIPELINE -------------------------------------------------------------------------
}

/// The data type an image's texels are stored as: one component of the format's storage (a packed
/// format: its 32-bit word), as many as the format has.
pub(super) fn image_data_type(f: &crate::spirv::image::TexelFormat) -> DataType {
    use crate::spirv::image::Comp;
    let (scalar, rows) = match (f.packed, f.comp) {
        (Some(_), _) => (Scalar::U32, 1),
        (None, Comp::Float(16)) => (Scalar::F16, f.comps),
        (None, Comp::Float(_)) => (Scalar::F32, f.comps),
        (None, Comp::Unorm(8) | Comp::Uint(8)) => (Scalar::U8, f.comps),
        (None, Comp::Snorm(8) | Comp::Sint(8)) => (Scalar::I8, f.comps),
        (None, Comp::Unorm(16) | Comp::Uint(16)) => (Scalar::U16, f.comps),
        (None, Comp::Snorm(16) | Comp::Sint(16)) => (Scalar::I16, f.comps),
        (None, Comp::Uint(64)) => (Scalar::U64, f.comps),
        (None, Comp::Sint(64)) => (Scalar::I64, f.comps),
        (None, Comp::Sint(_) | Comp::Snorm(_)) => (Scalar::I32, f.comps),
        (None, _) => (Scalar::U32, f.comps),
    };
    DataType {
        scalar,
        rows,
        columns: 1,
        array: false,
    }
}
