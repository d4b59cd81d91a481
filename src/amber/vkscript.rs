//! VkScript, Amber's older syntax (google/amber `docs/vk_script.md`, after VkRunner), for compute:
//! read into the same [`Script`] that AmberScript gives, so that both run the same way.
//!
//! A file is sections, each starting at a line `[name]`: `[require]` (device features, the
//! extensions a line names, `fence_timeout`), one `[compute shader]` (GLSL), `[compute shader
//! spirv]` (SPIR-V assembly) or `[compute shader spirv hex]`, and `[test]`, a list of commands:
//!
//! - `ssbo B SIZE`, `ssbo B subdata TYPE OFFSET values…`, `uniform ubo B TYPE OFFSET values…`,
//!   `uniform TYPE OFFSET values…` (push constants): buffers by binding (`S:B`, or `B` in set 0),
//!   each of one data type (the first one a command gives it; a `SIZE` alone gives `int8`), laid
//!   out std430 (storage) or std140 (uniform), as Amber's VkScript reader does;
//! - `compute X Y Z` runs the shader with every buffer so far bound; `compute entrypoint NAME`;
//! - `probe ssbo TYPE B OFFSET CMP values…` with `==`, `!=`, `<`, `<=`, `>`, `>=` or `~=` (the
//!   `tolerance` in force, else Amber's 0.000001%), an `EXPECT` of the byte offset;
//! - `tolerance t [t t t]`.
//!
//! The buffers' data written before the first `compute` is their initial contents; data written
//! later is a host write between dispatches ([`Command::Write`]). Graphics sections and commands
//! are [`Unsupported`] with `graphics` set, as in AmberScript.
//!
//! The SPIR-V version: Amber assembles for the target environment its runner gives; the Vulkan
//! CTS runs VkScript files that require `VK_KHR_spirv_1_4` as SPIR-V 1.4, and lockstep gives them
//! `spv1.4`'s environment ([`TargetEnv`]: the lowest that consumes SPIR-V 1.4 natively, Vulkan 1.2,
//! whose modules are SPIR-V 1.5); others get the AmberScript default.

use super::parse::{err, graphics, PResult, ParseFailure, Unsupported, KNOWN_FEATURES};
use super::script::*;
use super::types::{DataType, Layout, Literal, Scalar};
use crate::kernel::TargetEnv;
use crate::kernel::Tolerance;

/// A VkScript data type name (`int`, `uint16_t`, `vec3`, `i8vec2`, `dmat2x3`, `mat4`) as a
/// [`DataType`] (Amber's `vkscript::DatumTypeParser`).
pub fn datum_type(name: &str) -> Option<DataType> {
    let scalar = |s| Some(DataType::scalar(s));
    match name {
        "int" => return scalar(Scalar::I32),
        "uint" => return scalar(Scalar::U32),
        "int8_t" => return scalar(Scalar::I8),
        "uint8_t" => return scalar(Scalar::U8),
        "int16_t" => return scalar(Scalar::I16),
        "uint16_t" => return scalar(Scalar::U16),
        "int64_t" => return scalar(Scalar::I64),
        "uint64_t" => return scalar(Scalar::U64),
        "float" => return scalar(Scalar::F32),
        "double" => return scalar(Scalar::F64),
        _ => {}
    }
    let digit = |c: Option<&u8>| -> Option<u8> {
        let d = c?.checked_sub(b'0')?;
        (2..=4).contains(&d).then_some(d)
    };
    let b = name.as_bytes();
    if let Some(pos) = name.find("vec") {
        let prefix = &name[..pos];
        let s = match prefix {
            "" => Scalar::F32,
            "d" => Scalar::F64,
            "i" => Scalar::I32,
            "u" => Scalar::U32,
            "i8" => Scalar::I8,
            "u8" => Scalar::U8,
            "i16" => Scalar::I16,
            "u16" => Scalar::U16,
            "f16" => Scalar::F16,
            "i64" => Scalar::I64,
            "u64" => Scalar::U64,
            _ => return None,
        };
        if b.len() != pos + 4 {
            return None;
        }
        return Some(DataType {
            scalar: s,
            rows: digit(b.get(pos + 3))?,
            columns: 1,
            array: false,
        });
    }
    let pos = name.find("mat")?;
    let s = match &name[..pos] {
        "" => Scalar::F32,
        "d" => Scalar::F64,
        _ => return None,
    };
    let columns = digit(b.get(pos + 3))?;
    let rows = match b.len() - pos {
        4 => columns,
        6 if b[pos + 4] == b'x' => digit(b.get(pos + 5))?,
        _ => return None,
    };
    Some(DataType {
        scalar: s,
        rows,
        columns,
        array: false,
    })
}

/// One line of a section: its words (comments and continuations handled) and its number.
struct Line<'a> {
    words: Vec<&'a str>,
    line: usize,
    text: String,
}

/// A buffer being built: its binding, kind and type, and its writes in command order.
struct Draft {
    slot: Option<(u32, u32)>,
    uniform: bool,
    data_type: Option<DataType>,
    size_elements: usize,
    end: usize,
    line: usize,
}

enum Op {
    /// bytes written into a buffer
    Write {
        buffer: usize,
        offset: usize,
        values: Vec<Literal>,
        line: usize,
    },
    Compute {
        groups: [u32; 3],
        entry: String,
        line: usize,
    },
    Probe {
        buffer: usize,
        offset: usize,
        comparator: Comparator,
        tolerances: Vec<Tolerance>,
        values: Vec<Literal>,
        line: usize,
        text: String,
    },
}

/// The `[require]` section: features, extensions and the fence timeout, into `script`; true
/// where it asks for `VK_KHR_spirv_1_4`.
fn require_section(
    script: &mut Script,
    raw: &[&str],
    start: usize,
    end: usize,
) -> Result<bool, ParseFailure> {
    let mut spirv_1_4 = false;
    for l in split_lines(raw, start, end) {
        let w = l.words[0];
        match w {
            "fbsize" | "framebuffer" | "depthstencil" => {}
            "fence_timeout" => {
                let v = l.words.get(1).and_then(|v| v.parse::<u32>().ok());
                let Some(v) = v else {
                    return err(l.line, w, "fence_timeout needs a number of milliseconds");
                };
                script.fence_timeout_ms = Some(v);
            }
            _ if KNOWN_FEATURES.contains(&w) => script.device_features.push(Requirement {
                name: w.to_string(),
                line: l.line,
            }),
            _ if w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') => {
                spirv_1_4 |= w == "VK_KHR_spirv_1_4";
                script.device_extensions.push(Requirement {
                    name: w.to_string(),
                    line: l.line,
                })
            }
            _ => {
                return Err(ParseFailure::Unsupported(Unsupported {
                    line: Some(l.line),
                    command: "[require]".into(),
                    reason: format!("{w} is not a device feature AmberScript knows"),
                    graphics: false,
                }))
            }
        }
        if l.words.len() > 1
            && !matches!(
                w,
                "fbsize" | "framebuffer" | "depthstencil" | "fence_timeout"
            )
        {
            return err(
                l.line,
                w,
                format!("extra parameters after {w}: {}", l.words[1]),
            );
        }
    }
    Ok(spirv_1_4)
}

/// Parses a VkScript file (its text) into a [`Script`].
///
/// ```
/// use lockstep::amber::vkscript;
/// let s = vkscript::parse("[compute shader spirv]\nOpCapability Shader\n[test]\n\
///     ssbo 0:1 subdata int 0 1 2 3 4\ncompute 1 1 1\nprobe ssbo int 0:1 4 == 2 3\n").unwrap();
/// assert_eq!((s.buffers[0].elements, s.buffers[0].size()), (4, 16));
/// assert_eq!(s.expects().len(), 1);
/// ```
pub fn parse(text: &str) -> Result<Script, ParseFailure> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let raw: Vec<&str> = text.split('\n').collect();
    // Sections: (name, header line, first body line index, end index).
    let mut sections: Vec<(String, usize, usize, usize)> = Vec::new();
    for (i, l) in raw.iter().enumerate() {
        let t = l.trim_end_matches('\r');
        if t.starts_with('[') {
            let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) else {
                continue;
            };
            if !t.trim_end().ends_with(']') {
                return err(
                    i + 1,
                    "section",
                    format!("a section header must end with ]: {t}"),
                );
            }
            if let Some(last) = sections.last_mut() {
                last.3 = i;
            }
            sections.push((name.trim().to_string(), i + 1, i + 1, raw.len()));
        } else if sections.is_empty() && !is_blank(t) {
            return err(
                i + 1,
                "section",
                "text before the first section: a VkScript file is [require], [… shader …] and [test] sections (an AmberScript file starts with #!amber)",
            );
        }
    }
    let mut script = Script::default();
    let mut shader_section: Option<(ShaderFormat, usize, usize, usize)> = None;
    let mut test: Option<(usize, usize)> = None;
    let mut spirv_1_4 = false;
    for (name, header, start, end) in &sections {
        let words: Vec<&str> = name.split_whitespace().collect();
        match words.as_slice() {
            ["require"] => spirv_1_4 |= require_section(&mut script, &raw, *start, *end)?,
            ["compute", "shader", rest @ ..] => {
                let format = match rest {
                    [] => ShaderFormat::Glsl,
                    ["spirv"] => ShaderFormat::SpirvAsm,
                    ["spirv", "hex"] => ShaderFormat::SpirvHex,
                    _ => return err(*header, "section", format!("unknown shader format in [{name}] (compute shader, compute shader spirv, compute shader spirv hex)")),
                };
                if shader_section.is_some() {
                    return err(
                        *header,
                        "section",
                        "a second compute shader: a VkScript file has one",
                    );
                }
                shader_section = Some((format, *header, *start, *end));
            }
            ["vertex", "data"] | ["indices"] => {
                return graphics(*header, &format!("[{name}]"), "vertex data and indices")
            }
            [stage @ ("vertex" | "fragment" | "geometry" | "tessellation"), ..] => {
                return graphics(*header, &format!("[{name}]"), format!("{stage} shaders"))
            }
            ["test"] => {
                if test.is_some() {
                    return err(*header, "section", "a second [test] section");
                }
                test = Some((*start, *end));
            }
            // Amber's VkScript parser skips a [comment] section whole.
            ["comment"] => {}
            _ => return err(*header, "section", format!("unknown section [{name}]")),
        }
    }
    let Some((format, header, start, end)) = shader_section else {
        return err(1, "section", "no [compute shader] section");
    };
    let source: String = raw[start..end].join("\n");
    if is_blank(&source) {
        return err(header, "section", "the compute shader is empty");
    }
    let code = match format {
        ShaderFormat::Glsl => ShaderCode::Glsl(source.clone()),
        ShaderFormat::SpirvAsm => ShaderCode::SpirvAsm(source.clone()),
        _ => ShaderCode::SpirvWords(super::parse::decode_hex_text(&source, start + 1)?),
    };
    script.shaders.push(Shader {
        name: "compute".into(),
        line: header,
        format,
        target_env: if spirv_1_4 {
            Some(TargetEnv::Vulkan1_2)
        } else {
            None
        },
        source,
        file: None,
        source_line: start + 1,
        code,
    });
    let Some((tstart, tend)) = test else {
        return err(raw.len(), "section", "no [test] section");
    };
    let (drafts, ops) = test_commands(&raw, tstart, tend)?;
    assemble(script, drafts, ops)
}

fn is_blank(t: &str) -> bool {
    t.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    })
}

/// The non-empty logical lines of `raw[start..end]`: `#` comments out the rest of a line, a `\`
/// at the end continues it on the next.
fn split_lines<'a>(raw: &[&'a str], start: usize, end: usize) -> Vec<Line<'a>> {
    let mut out = Vec::new();
    let mut cur: Vec<&'a str> = Vec::new();
    let mut text = String::new();
    let mut first = 0;
    for (i, l) in raw.iter().enumerate().take(end).skip(start) {
        let l = l.trim_end_matches('\r');
        let body = match l.find('#') {
            Some(p) => &l[..p],
            None => l,
        };
        if cur.is_empty() {
            first = i + 1;
            text.clear();
        }
        let mut words: Vec<&'a str> = body.split_whitespace().collect();
        let cont = words.last() == Some(&"\\");
        if cont {
            words.pop();
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(body.trim());
        cur.extend(words);
        if !cont && !cur.is_empty() {
            out.push(Line {
                words: std::mem::take(&mut cur),
                line: first,
                text: text.trim_end_matches('\\').trim().to_string(),
            });
        }
    }
    if !cur.is_empty() {
        out.push(Line {
            words: cur,
            line: first,
            text,
        });
    }
    out
}

/// `S:B` or `B` (set 0).
fn binding(w: &str, line: usize, cmd: &str) -> PResult<(u32, u32)> {
    let (s, b) = match w.split_once(':') {
        Some((s, b)) => (s, b),
        None => ("0", w),
    };
    match (s.parse::<u32>(), b.parse::<u32>()) {
        (Ok(s), Ok(b)) => Ok((s, b)),
        _ => err(
            line,
            cmd,
            format!("invalid binding {w} (SET:BINDING or BINDING)"),
        ),
    }
}

fn uint(w: Option<&&str>, line: usize, cmd: &str, what: &str) -> PResult<u32> {
    match w.and_then(|w| Literal::parse(w)) {
        Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => Ok(v as u32),
        _ => err(
            line,
            cmd,
            format!(
                "invalid {what}: {} (an integer from 0 to 4294967295)",
                w.unwrap_or(&"nothing")
            ),
        ),
    }
}

fn values(words: &[&str], t: DataType, line: usize, cmd: &str) -> PResult<Vec<Literal>> {
    if words.is_empty() || !words.len().is_multiple_of(t.components()) {
        return err(
            line,
            cmd,
            format!(
                "{} values: a non-zero multiple of the {} components of {t}",
                words.len(),
                t.components()
            ),
        );
    }
    words
        .iter()
        .map(|w| {
            let Some(lit) = Literal::parse(w) else {
                return err(line, cmd, format!("invalid value: {w}"));
            };
            // Integer types take integers (Amber: "Invalid value provided").
            if let Err(e) = t.scalar.round_trip(lit) {
                return err(line, cmd, format!("invalid value: {}", e.0));
            }
            Ok(lit)
        })
        .collect()
}

/// `probe ssbo TYPE SET:BINDING OFFSET COMPARATOR VALUES…`: the probe, with the `tolerance`
/// in force for `~=`.
fn probe_ssbo(l: &Line<'_>, drafts: &mut [Draft], tolerances: &[Tolerance]) -> PResult<Op> {
    let (line, rest) = (l.line, &l.words[1..]);
    let cmd = "probe ssbo";
    let Some(t) = rest.get(1).and_then(|t| datum_type(t)) else {
        return err(
            line,
            cmd,
            format!("invalid type: {}", rest.get(1).unwrap_or(&"nothing")),
        );
    };
    let Some(b) = rest.get(2) else {
        return err(line, cmd, "missing binding");
    };
    let slot = binding(b, line, cmd)?;
    let Some(i) = drafts.iter().position(|d| d.slot == Some(slot)) else {
        return err(
            line,
            cmd,
            format!(
                "unable to find buffer at descriptor set {} and binding {}",
                slot.0, slot.1
            ),
        );
    };
    check_type(&mut drafts[i], t, line, cmd)?;
    let offset = uint(rest.get(3), line, cmd, "offset")? as usize;
    let (comparator, fuzzy) = match rest.get(4).copied() {
        Some("==") => (Comparator::Eq, false),
        Some("!=") => (Comparator::Ne, false),
        Some("<") => (Comparator::Lt, false),
        Some("<=") => (Comparator::Le, false),
        Some(">") => (Comparator::Gt, false),
        Some(">=") => (Comparator::Ge, false),
        Some("~=") => (Comparator::Eq, true),
        other => {
            return err(
                line,
                cmd,
                format!(
                    "invalid comparator: {} (==, !=, <, <=, >, >=, ~=)",
                    other.unwrap_or("nothing")
                ),
            )
        }
    };
    let layout = if drafts[i].uniform {
        Layout::Std140
    } else {
        Layout::Std430
    };
    let stride = t.element_layout(layout).stride;
    if !offset.is_multiple_of(stride) {
        return err(
            line,
            cmd,
            format!("offset {offset} is not a multiple of the {stride}-byte stride of {t}"),
        );
    }
    let vals = values(&rest[5..], t, line, cmd)?;
    let tol = if !fuzzy {
        Vec::new()
    } else if tolerances.is_empty() {
        // `~=` without a `tolerance` command: Amber's float default, 0.000001 percent
        vec![super::expect::DEFAULT_TOLERANCE]
    } else {
        tolerances.to_vec()
    };
    Ok(Op::Probe {
        buffer: i,
        offset,
        comparator,
        tolerances: tol,
        values: vals,
        line,
        text: l.text.clone(),
    })
}

/// The draft buffer at descriptor `slot` (push constants: `None`), made with kind `uniform` where
/// there is none yet.
fn draft_for(
    drafts: &mut Vec<Draft>,
    slot: Option<(u32, u32)>,
    uniform: bool,
    line: usize,
) -> usize {
    if let Some(i) = slot.and_then(|s| drafts.iter().position(|d| d.slot == Some(s))) {
        return i;
    }
    drafts.push(Draft {
        slot,
        uniform,
        data_type: None,
        size_elements: 0,
        end: 0,
        line,
    });
    drafts.len() - 1
}

/// The write of a typed `subdata` list (`TYPE OFFSET VALUES…`) into draft `i`.
fn write_op(drafts: &mut [Draft], i: usize, words: &[&str], line: usize, w: &str) -> PResult<Op> {
    let (offset, values) = typed_write(&mut drafts[i], words, line, w)?;
    Ok(Op::Write {
        buffer: i,
        offset,
        values,
        line,
    })
}

/// The `[test]` section: buffers by binding and the operations in order.
fn test_commands(raw: &[&str], start: usize, end: usize) -> PResult<(Vec<Draft>, Vec<Op>)> {
    let mut drafts: Vec<Draft> = Vec::new();
    let mut ops = Vec::new();
    let mut entry = "main".to_string();
    let mut tolerances: Vec<Tolerance> = Vec::new();
    let mut push: Option<usize> = None;
    for l in split_lines(raw, start, end) {
        let (w, line) = (l.words[0], l.line);
        let rest = &l.words[1..];
        match w {
            "ssbo" => {
                let Some(b) = rest.first() else {
                    return err(line, w, "missing binding and size values for ssbo command");
                };
                let slot = binding(b, line, w)?;
                let i = draft_for(&mut drafts, Some(slot), false, line);
                if drafts[i].uniform {
                    return err(line, w, format!("binding {b} is a uniform buffer"));
                }
                if rest.get(1) == Some(&"subdata") {
                    ops.push(write_op(&mut drafts, i, &rest[2..], line, w)?);
                } else {
                    let n = uint(rest.get(1), line, w, "ssbo size")?;
                    if rest.len() > 2 {
                        return err(
                            line,
                            w,
                            format!("extra parameter for ssbo command: {}", rest[2]),
                        );
                    }
                    drafts[i].size_elements = n as usize;
                }
            }
            "uniform" => {
                if rest.first() == Some(&"ubo") {
                    let Some(b) = rest.get(1) else {
                        return err(line, w, "missing binding for uniform ubo command");
                    };
                    let slot = binding(b, line, w)?;
                    let i = draft_for(&mut drafts, Some(slot), true, line);
                    if !drafts[i].uniform {
                        return err(line, w, format!("binding {b} is a storage buffer"));
                    }
                    ops.push(write_op(&mut drafts, i, &rest[2..], line, w)?);
                } else {
                    let i = *push.get_or_insert_with(|| draft_for(&mut drafts, None, false, line));
                    ops.push(write_op(&mut drafts, i, rest, line, w)?);
                }
            }
            "compute" => {
                if rest.first() == Some(&"entrypoint") {
                    let Some(e) = rest.get(1) else {
                        return err(line, w, "missing entry point name");
                    };
                    entry = e.to_string();
                    continue;
                }
                let mut groups = [0u32; 3];
                for (k, g) in groups.iter_mut().enumerate() {
                    *g = uint(rest.get(k), line, w, "workgroup count")?;
                }
                if rest.len() > 3 {
                    return err(
                        line,
                        w,
                        format!("extra parameter for compute command: {}", rest[3]),
                    );
                }
                ops.push(Op::Compute {
                    groups,
                    entry: entry.clone(),
                    line,
                });
            }
            "probe" if rest.first() == Some(&"ssbo") => {
                ops.push(probe_ssbo(&l, &mut drafts, &tolerances)?)
            }
            "tolerance" => {
                tolerances.clear();
                let mut k = 0;
                while k < rest.len() {
                    let (num, mut percent) = match rest[k].strip_suffix('%') {
                        Some(n) => (n, true),
                        None => (rest[k], false),
                    };
                    if rest.get(k + 1) == Some(&"%") {
                        percent = true;
                        k += 1;
                    }
                    k += 1;
                    match Literal::parse(num.trim_end_matches(',')) {
                        Some(v) if v.as_f64() >= 0.0 && v.as_f64().is_finite() => {
                            tolerances.push(Tolerance::written(v.as_f64(), percent))
                        }
                        _ => return err(line, w, format!("invalid tolerance: {num}")),
                    }
                }
                if tolerances.is_empty() || tolerances.len() > 4 {
                    return err(line, w, "tolerance takes one to four values");
                }
            }
            "draw" | "probe" | "relative" | "clear" | "patch" => {
                return graphics(
                    line,
                    format!("{w} {}", rest.first().unwrap_or(&"")).trim(),
                    "draws, framebuffer probes and clears",
                )
            }
            _ => {
                return graphics(
                    line,
                    w,
                    "pipeline state of graphics pipelines (or an unknown command)",
                )
            }
        }
    }
    Ok((drafts, ops))
}

/// The type of a buffer: the first command that names one sets it; every later one must agree
/// (Amber: "probe ssbo format does not match buffer format").
fn check_type(d: &mut Draft, t: DataType, line: usize, cmd: &str) -> PResult<()> {
    match d.data_type {
        None => d.data_type = Some(t),
        Some(u) if u == t => {}
        Some(u) => {
            return err(
                line,
                cmd,
                format!("{t} does not match the buffer's type {u}: one buffer has one data type"),
            )
        }
    }
    Ok(())
}

/// `TYPE OFFSET values…` of `ssbo … subdata`, `uniform ubo` and `uniform`.
fn typed_write(
    d: &mut Draft,
    words: &[&str],
    line: usize,
    cmd: &str,
) -> PResult<(usize, Vec<Literal>)> {
    let Some(t) = words.first().and_then(|t| datum_type(t)) else {
        return err(
            line,
            cmd,
            format!("invalid type: {}", words.first().unwrap_or(&"nothing")),
        );
    };
    check_type(d, t, line, cmd)?;
    let offset = uint(words.get(1), line, cmd, "offset")? as usize;
    let layout = if d.uniform {
        Layout::Std140
    } else {
        Layout::Std430
    };
    let el = t.element_layout(layout);
    if !offset.is_multiple_of(t.scalar.size()) || !offset.is_multiple_of(el.stride) {
        return err(
            line,
            cmd,
            format!(
                "offset {offset} must be a multiple of the data size {}",
                el.stride
            ),
        );
    }
    let vals = values(&words[2..], t, line, cmd)?;
    let end = offset + vals.len() / t.components() * el.stride;
    d.end = d.end.max(end);
    Ok((offset, vals))
}

/// The script: buffers sized for every write, writes before the first dispatch as initial
/// contents, one pipeline per entry point with every buffer bound.
fn assemble(mut script: Script, drafts: Vec<Draft>, ops: Vec<Op>) -> PResult<Script> {
    for d in &drafts {
        let t = d.data_type.unwrap_or(DataType::scalar(Scalar::I8));
        let layout = if d.uniform {
            Layout::Std140
        } else {
            Layout::Std430
        };
        let stride = t.element_layout(layout).stride;
        let elements = d.size_elements.max(d.end.div_ceil(stride));
        if elements.saturating_mul(stride) > super::parse::MAX_BUFFER_BYTES {
            return err(
                d.line,
                "ssbo",
                format!("{elements} elements of {t} exceed lockstep's buffer limit"),
            );
        }
        let name = match d.slot {
            Some((s, b)) => format!("{}{s}:{b}", if d.uniform { "ubo" } else { "ssbo" }),
            None => "push_constants".to_string(),
        };
        script.buffers.push(Buffer {
            name,
            line: d.line,
            data_type: t,
            layout,
            elements,
            initial: vec![0; elements * stride],
            image: None,
            texel: None,
        });
    }
    let bindings: Vec<Binding> = drafts
        .iter()
        .enumerate()
        .map(|(i, d)| Binding {
            buffer: i,
            kind: match d.slot {
                Some((set, binding)) if d.uniform => BindingKind::Uniform { set, binding },
                Some((set, binding)) => BindingKind::Storage { set, binding },
                None => BindingKind::PushConstant,
            },
            line: d.line,
            offset: 0,
            range: None,
            element: 0,
        })
        .collect();
    // Until the first dispatch or probe, writes are the buffers' initial contents; after one,
    // commands in their place (a probe sees the writes before it, not those after).
    let mut sequenced = false;
    for op in ops {
        match op {
            Op::Write {
                buffer,
                offset,
                values,
                line,
            } => {
                let b = &mut script.buffers[buffer];
                let el = b.element_layout();
                let mut bytes = vec![0u8; values.len() / el.offsets.len() * el.stride];
                let n = el.scalar.size();
                for (i, v) in values.iter().enumerate() {
                    let (e, k) = (i / el.offsets.len(), i % el.offsets.len());
                    let at = e * el.stride + el.offsets[k];
                    el.scalar
                        .encode(*v, &mut bytes[at..at + n])
                        .or_else(|e| err(line, "ssbo", e.0))?;
                }
                if sequenced {
                    script.commands.push(Command::Write {
                        line,
                        buffer,
                        offset,
                        bytes,
                    });
                } else {
                    b.initial[offset..offset + bytes.len()].copy_from_slice(&bytes);
                }
            }
            Op::Compute {
                groups,
                entry,
                line,
            } => {
                sequenced = true;
                let p = match script.pipelines.iter().position(|p| p.entry_point == entry) {
                    Some(p) => p,
                    None => {
                        script.pipelines.push(Pipeline {
                            name: format!("compute-{entry}"),
                            line,
                            shader: 0,
                            entry_point: entry,
                            specializations: Vec::new(),
                            subgroup: SubgroupControl::default(),
                            bindings: bindings.clone(),
                            samplers: Vec::new(),
                            optimizations: Vec::new(),
                        });
                        script.pipelines.len() - 1
                    }
                };
                script.commands.push(Command::Run {
                    line,
                    pipeline: p,
                    groups,
                });
            }
            Op::Probe {
                buffer,
                offset,
                comparator,
                tolerances,
                values,
                line,
                text,
            } => {
                let b = &script.buffers[buffer];
                let el = b.element_layout();
                let end = offset + values.len() / el.offsets.len() * el.stride;
                if end > b.size() {
                    return err(
                        line,
                        "probe ssbo",
                        format!(
                            "bytes {offset}..{end} lie past the end of the {}-byte buffer at {}",
                            b.size(),
                            b.name
                        ),
                    );
                }
                sequenced = true;
                script.commands.push(Command::Expect(Expect {
                    line,
                    buffer,
                    kind: ExpectKind::Values {
                        offset,
                        tolerances,
                        comparator,
                        values,
                    },
                    text,
                }));
            }
        }
    }
    Ok(script)
}
