//! The AmberScript reader for the compute subset (google/amber `docs/amber_script.md`).
//!
//! Tokens are whitespace-delimited; `#` at the start of a token comments out the rest of the line;
//! a lone `\` at the end of a line continues the command on the next line; keywords are case
//! sensitive (all as in Amber's tokenizer). Shader source between `SHADER …` and `END` is taken
//! verbatim, up to the first line whose first word is `END`.
//!
//! Every problem is a value: a [`ScriptError`] (the line, the command, what is wrong — bad input)
//! or an [`Unsupported`] (the line and why lockstep does not run this file: graphics, images,
//! OpenCL, …). Parsing stops at the first of either.

use super::script::*;
use super::types::{DataType, FormatKind, Layout, Literal, Scalar};
use crate::kernel::TargetEnv;
use crate::kernel::Tolerance;
use std::fmt;
use std::path::Path;

/// The largest buffer lockstep allocates (bytes): the one limit of every buffer, an Amber
/// script's or `lockstep run`'s ([`crate::kernel::MAX_BUFFER_BYTES`], 4 GiB). A script asking for
/// more is an error.
pub use crate::kernel::MAX_BUFFER_BYTES;

mod buffers;
mod commands;
mod pipeline;

/// A mistake in a script: the line, the command it is in, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {command}: {message}")]
pub struct ScriptError {
    /// 1-based line.
    pub line: usize,
    /// The command (`BUFFER`, `EXPECT`, …).
    pub command: String,
    /// What is wrong, naming the rule.
    pub message: String,
}

/// Why a file is not run: a command outside the compute subset, or a requirement the device lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The line, when one command is the cause.
    pub line: Option<usize>,
    /// The command (`PIPELINE graphics`, `DEVICE_FEATURE`, …).
    pub command: String,
    /// Why, naming the feature.
    pub reason: String,
    /// A graphics command (pipelines, draws, framebuffers, images, samplers).
    pub graphics: bool,
}

impl fmt::Display for Unsupported {
    /// `graphics: line 7: PIPELINE graphics (…)` or `line 3: SHADER: …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.graphics {
            f.write_str("graphics: ")?;
        }
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        if self.graphics {
            write!(f, "{} ({})", self.command, self.reason)
        } else {
            write!(f, "{}: {}", self.command, self.reason)
        }
    }
}

/// Why a script was not parsed into a [`Script`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseFailure {
    /// Bad input.
    Error(ScriptError),
    /// Outside the compute subset.
    Unsupported(Unsupported),
}

impl fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseFailure::Error(e) => write!(f, "{e}"),
            ParseFailure::Unsupported(u) => write!(f, "unsupported: {u}"),
        }
    }
}

pub(crate) type PResult<T> = Result<T, ParseFailure>;

pub(crate) fn err<T>(line: usize, command: &str, message: impl Into<String>) -> PResult<T> {
    Err(ParseFailure::Error(ScriptError {
        line,
        command: command.to_string(),
        message: message.into(),
    }))
}

fn unsupported<T>(line: usize, command: &str, reason: impl Into<String>) -> PResult<T> {
    Err(ParseFailure::Unsupported(Unsupported {
        line: Some(line),
        command: command.to_string(),
        reason: reason.into(),
        graphics: false,
    }))
}

pub(crate) fn graphics<T>(line: usize, command: &str, reason: impl Into<String>) -> PResult<T> {
    Err(ParseFailure::Unsupported(Unsupported {
        line: Some(line),
        command: command.to_string(),
        reason: reason.into(),
        graphics: true,
    }))
}

/// Features AmberScript's `DEVICE_FEATURE` knows: every member of VkPhysicalDeviceFeatures and the
/// extension-structure members Amber lists (google/amber src/script.cc, `IsKnownFeature`).
pub(crate) const KNOWN_FEATURES: &[&str] = &[
    "robustBufferAccess",
    "fullDrawIndexUint32",
    "imageCubeArray",
    "independentBlend",
    "geometryShader",
    "tessellationShader",
    "sampleRateShading",
    "dualSrcBlend",
    "logicOp",
    "multiDrawIndirect",
    "drawIndirectFirstInstance",
    "depthClamp",
    "depthBiasClamp",
    "fillModeNonSolid",
    "depthBounds",
    "wideLines",
    "largePoints",
    "alphaToOne",
    "multiViewport",
    "samplerAnisotropy",
    "textureCompressionETC2",
    "textureCompressionASTC_LDR",
    "textureCompressionBC",
    "occlusionQueryPrecise",
    "pipelineStatisticsQuery",
    "vertexPipelineStoresAndAtomics",
    "fragmentStoresAndAtomics",
    "shaderTessellationAndGeometryPointSize",
    "shaderImageGatherExtended",
    "shaderStorageImageExtendedFormats",
    "shaderStorageImageMultisample",
    "shaderStorageImageReadWithoutFormat",
    "shaderStorageImageWriteWithoutFormat",
    "shaderUniformBufferArrayDynamicIndexing",
    "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageBufferArrayDynamicIndexing",
    "shaderStorageImageArrayDynamicIndexing",
    "shaderClipDistance",
    "shaderCullDistance",
    "shaderFloat64",
    "shaderInt64",
    "shaderInt16",
    "shaderResourceResidency",
    "shaderResourceMinLod",
    "sparseBinding",
    "sparseResidencyBuffer",
    "sparseResidencyImage2D",
    "sparseResidencyImage3D",
    "sparseResidency2Samples",
    "sparseResidency4Samples",
    "sparseResidency8Samples",
    "sparseResidency16Samples",
    "sparseResidencyAliased",
    "variableMultisampleRate",
    "inheritedQueries",
    "VariablePointerFeatures.variablePointers",
    "VariablePointerFeatures.variablePointersStorageBuffer",
    "Float16Int8Features.shaderFloat16",
    "Float16Int8Features.shaderInt8",
    "Storage8BitFeatures.storageBuffer8BitAccess",
    "Storage8BitFeatures.uniformAndStorageBuffer8BitAccess",
    "Storage8BitFeatures.storagePushConstant8",
    "Storage16BitFeatures.storageBuffer16BitAccess",
    "Storage16BitFeatures.uniformAndStorageBuffer16BitAccess",
    "Storage16BitFeatures.storagePushConstant16",
    "Storage16BitFeatures.storageInputOutput16",
    "SubgroupSizeControl.subgroupSizeControl",
    "SubgroupSizeControl.computeFullSubgroups",
    "SubgroupSupportedOperations.basic",
    "SubgroupSupportedOperations.vote",
    "SubgroupSupportedOperations.arithmetic",
    "SubgroupSupportedOperations.ballot",
    "SubgroupSupportedOperations.shuffle",
    "SubgroupSupportedOperations.shuffleRelative",
    "SubgroupSupportedOperations.clustered",
    "SubgroupSupportedOperations.quad",
    "SubgroupSupportedStages.vertex",
    "SubgroupSupportedStages.tessellationControl",
    "SubgroupSupportedStages.tessellationEvaluation",
    "SubgroupSupportedStages.geometry",
    "SubgroupSupportedStages.fragment",
    "SubgroupSupportedStages.compute",
    "ShaderSubgroupExtendedTypesFeatures.shaderSubgroupExtendedTypes",
    "VulkanMemoryModelFeatures.vulkanMemoryModel",
    "VulkanMemoryModelFeatures.vulkanMemoryModelDeviceScope",
    "ZeroInitializeWorkgroupMemoryFeatures.shaderZeroInitializeWorkgroupMemory",
    "IndexTypeUint8Features.indexTypeUint8",
    "DepthClampZeroOneFeatures.depthClampZeroOne",
    "BufferDeviceAddressFeatures.bufferDeviceAddress",
    "CooperativeMatrixFeaturesKHR.cooperativeMatrix",
    "RayTracingPipelineFeaturesKHR.rayTracingPipeline",
    "AccelerationStructureFeaturesKHR.accelerationStructure",
    "ShaderLongVectorFeaturesEXT.longVector",
];

/// Properties AmberScript's `DEVICE_PROPERTY` knows (google/amber src/script.cc,
/// `IsKnownProperty`): the VkPhysicalDeviceFloatControlsProperties members.
pub(crate) const KNOWN_PROPERTIES: &[&str] = &[
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat16",
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat32",
    "FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat64",
    "FloatControlsProperties.shaderDenormPreserveFloat16",
    "FloatControlsProperties.shaderDenormPreserveFloat32",
    "FloatControlsProperties.shaderDenormPreserveFloat64",
    "FloatControlsProperties.shaderDenormFlushToZeroFloat16",
    "FloatControlsProperties.shaderDenormFlushToZeroFloat32",
    "FloatControlsProperties.shaderDenormFlushToZeroFloat64",
    "FloatControlsProperties.shaderRoundingModeRTEFloat16",
    "FloatControlsProperties.shaderRoundingModeRTEFloat32",
    "FloatControlsProperties.shaderRoundingModeRTEFloat64",
    "FloatControlsProperties.shaderRoundingModeRTZFloat16",
    "FloatControlsProperties.shaderRoundingModeRTZFloat32",
    "FloatControlsProperties.shaderRoundingModeRTZFloat64",
];

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    Eol,
    Eos,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => f.write_str(w),
            Tok::Eol => f.write_str("end of line"),
            Tok::Eos => f.write_str("end of file"),
        }
    }
}

/// Amber's whitespace (`\0`, tab, CR, form feed, space); newlines are tokens.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0 | 0x0c)
}

#[derive(Clone, Copy)]
struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn skip_space(&mut self) {
        let b = self.src.as_bytes();
        while self.pos < b.len() && is_space(b[self.pos]) {
            self.pos += 1;
        }
    }

    /// The next token and the line it is on.
    fn next(&mut self) -> (Tok<'a>, usize) {
        let b = self.src.as_bytes();
        loop {
            self.skip_space();
            if self.pos >= b.len() {
                return (Tok::Eos, self.line);
            }
            match b[self.pos] {
                b'#' => {
                    while self.pos < b.len() && b[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                    continue;
                }
                b'\n' => {
                    let l = self.line;
                    self.line += 1;
                    self.pos += 1;
                    return (Tok::Eol, l);
                }
                _ => {}
            }
            let start = self.pos;
            while self.pos < b.len() && !is_space(b[self.pos]) && b[self.pos] != b'\n' {
                self.pos += 1;
            }
            // Both ends are at ASCII bytes (or the end), so this is a char boundary.
            let w = &self.src[start..self.pos];
            if w == "\\" {
                let mut peek = *self;
                peek.skip_space();
                if peek.pos < b.len() && b[peek.pos] == b'\n' {
                    self.pos = peek.pos + 1;
                    self.line += 1;
                    continue;
                }
            }
            return (Tok::Word(w), self.line);
        }
    }

    fn peek(&self) -> Tok<'a> {
        let mut l = *self;
        l.next().0
    }

    /// Verbatim text from here to (not including) the first line whose first word is `END`;
    /// leaves the lexer on that `END`. `None` when there is no such line.
    fn block_until_end(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let mut p = self.pos;
        let mut lines = 0;
        while p <= self.src.len() {
            let end = self.src[p..].find('\n').map_or(self.src.len(), |i| p + i);
            let text =
                self.src[p..end].trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
            if let Some(rest) = text.strip_prefix("END")
                && rest.bytes().next().is_none_or(is_space)
            {
                self.pos = p;
                self.line += lines;
                return Some(&self.src[start..p]);
            }
            if end >= self.src.len() {
                return None;
            }
            p = end + 1;
            lines += 1;
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

struct PipelineDraft {
    name: String,
    line: usize,
    shader: Option<usize>,
    entry_point: String,
    specializations: Vec<Specialization>,
    subgroup: SubgroupControl,
    bindings: Vec<Binding>,
    samplers: Vec<SamplerBinding>,
    optimizations: Vec<String>,
}

struct Parser<'a> {
    lx: Lexer<'a>,
    lines: Vec<&'a str>,
    /// The script's folder, where `FILE` names are looked up (none for a script given as text).
    dir: Option<&'a Path>,
    /// `VIRTUAL_FILE` contents by path.
    virtual_files: Vec<(String, String)>,
    script: Script,
    /// (destination buffer, line) of every COPY.
    copies: Vec<(usize, usize, usize)>,
}

/// Parses an AmberScript file (its text) read from a file in `dir`: `BUFFER … FILE` and
/// `SHADER … FILE` names are looked up there (Amber: "The file path is relative to the script
/// file being run"). The first line must be `#!amber`; [`crate::amber::parse()`] picks AmberScript
/// or VkScript by it.
///
/// ```
/// use lockstep::amber::{parse, ParseFailure};
/// let s = parse("#!amber\nBUFFER b DATA_TYPE uint32 SIZE 4 FILL 7\nEXPECT b IDX 4 EQ 7 7\n").unwrap();
/// assert_eq!(s.buffers[0].initial.len(), 16);
/// match parse("#!amber\nBUFFER b DATA_TYPE vec5<float> SIZE 4 FILL 0\n") {
///     Err(ParseFailure::Error(e)) => assert_eq!(e.to_string(),
///         "line 2: BUFFER: invalid data type 'vec5<float>' provided"),
///     other => panic!("{other:?}"),
/// }
/// ```
pub(crate) fn amberscript(text: &str, dir: Option<&Path>) -> Result<Script, ParseFailure> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.starts_with("#!amber") {
        return err(
            1,
            "#!amber",
            "not an AmberScript file: the first line must be #!amber",
        );
    }
    let mut p = Parser {
        lx: Lexer {
            src: text,
            pos: 0,
            line: 1,
        },
        lines: text.split('\n').collect(),
        dir,
        virtual_files: Vec::new(),
        script: Script::default(),
        copies: Vec::new(),
    };
    p.top_level()?;
    p.finish()?;
    Ok(p.script)
}

fn is_repeatable(w: &str) -> bool {
    matches!(
        w,
        "RUN" | "COPY" | "EXPECT" | "CLEAR" | "CLEAR_COLOR" | "CLEAR_DEPTH" | "CLEAR_STENCIL"
    )
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> (Tok<'a>, usize) {
        self.lx.next()
    }

    /// The next token, which must be a word.
    fn word(&mut self, cmd: &str, what: &str) -> PResult<(&'a str, usize)> {
        match self.next() {
            (Tok::Word(w), l) => Ok((w, l)),
            (t, l) => err(l, cmd, format!("missing {what} (found {t})")),
        }
    }

    /// The next token, which must be the keyword `kw`.
    fn keyword(&mut self, cmd: &str, kw: &str) -> PResult<()> {
        match self.next() {
            (Tok::Word(w), _) if w == kw => Ok(()),
            (t, l) => err(l, cmd, format!("expected {kw}, found {t}")),
        }
    }

    /// An unsigned 32-bit integer.
    fn uint(&mut self, cmd: &str, what: &str) -> PResult<u32> {
        let (w, l) = self.word(cmd, what)?;
        match Literal::parse(w) {
            Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => Ok(v as u32),
            _ => err(
                l,
                cmd,
                format!("invalid {what}: {w} (an integer from 0 to 4294967295)"),
            ),
        }
    }

    fn end_of_statement(&mut self, cmd: &str) -> PResult<()> {
        match self.next() {
            (Tok::Eol | Tok::Eos, _) => Ok(()),
            (t, l) => err(l, cmd, format!("extra parameters after {cmd}: {t}")),
        }
    }

    /// The text of `line` without its comment, for reports.
    fn line_text(&self, line: usize) -> String {
        let raw = self.lines.get(line.wrapping_sub(1)).copied().unwrap_or("");
        let mut out = Vec::new();
        for w in raw.split(|c: char| c.is_ascii() && is_space(c as u8)) {
            if w.starts_with('#') {
                break;
            }
            if !w.is_empty() {
                out.push(w);
            }
        }
        out.join(" ")
    }

    fn buffer_index(&self, name: &str) -> Option<usize> {
        self.script.buffers.iter().position(|b| b.name == name)
    }

    fn shader_index(&self, name: &str) -> Option<usize> {
        self.script.shaders.iter().position(|s| s.name == name)
    }

    fn pipeline_index(&self, name: &str) -> Option<usize> {
        self.script.pipelines.iter().position(|p| p.name == name)
    }

    fn has_feature(&self, name: &str) -> bool {
        self.script.device_features.iter().any(|f| f.name == name)
    }

    /// The bytes of the file `name` that a `FILE` of command `cmd` on `line` names, from the
    /// script's folder.
    fn read_file(&self, line: usize, cmd: &str, name: &str) -> PResult<Vec<u8>> {
        let Some(dir) = self.dir else {
            return err(
                line,
                cmd,
                format!("FILE {name}: the script was given as text, with no folder to look for {name} in"),
            );
        };
        let path = dir.join(name);
        match std::fs::metadata(&path) {
            Ok(m) if m.len() > MAX_BUFFER_BYTES as u64 => {
                return err(
                    line,
                    cmd,
                    format!(
                        "FILE {}: {} bytes exceed lockstep's limit of {} GiB",
                        path.display(),
                        m.len(),
                        MAX_BUFFER_BYTES >> 30
                    ),
                )
            }
            _ => {}
        }
        std::fs::read(&path).or_else(|e| {
            err(
                line,
                cmd,
                format!("FILE {}: cannot read it: {e}", path.display()),
            )
        })
    }

    /// The text of the file `name` (`FILE`) or of the virtual file `name` (`VIRTUAL_FILE`).
    fn file_text(&self, line: usize, cmd: &str, name: &str, virtual_file: bool) -> PResult<String> {
        if virtual_file {
            return match self.virtual_files.iter().find(|(p, _)| p == name) {
                Some((_, t)) => Ok(t.clone()),
                None => err(line, cmd, format!("VIRTUAL_FILE {name} was not declared")),
            };
        }
        let bytes = self.read_file(line, cmd, name)?;
        String::from_utf8(bytes)
            .or_else(|_| err(line, cmd, format!("FILE {name} is not UTF-8 text")))
    }

    fn top_level(&mut self) -> PResult<()> {
        loop {
            let (t, line) = self.next();
            let w = match t {
                Tok::Eos => return Ok(()),
                Tok::Eol => continue,
                Tok::Word(w) => w,
            };
            match w {
                "SHADER" => self.shader(line)?,
                "BUFFER" => self.buffer(line)?,
                "PIPELINE" => self.pipeline(line)?,
                "DERIVE_PIPELINE" => self.derive_pipeline(line)?,
                "REPEAT" => {
                    let c = self.repeat(line)?;
                    self.script.commands.push(c);
                }
                "DEVICE_FEATURE" => {
                    let (name, l) = self.word(w, "a feature name")?;
                    if !KNOWN_FEATURES.contains(&name) {
                        return unsupported(
                            l,
                            w,
                            format!("{name} is not a device feature AmberScript knows (VkPhysicalDeviceFeatures members and the listed extension features)"),
                        );
                    }
                    self.script.device_features.push(Requirement {
                        name: name.to_string(),
                        line: l,
                    });
                    self.end_of_statement(w)?;
                }
                "DEVICE_PROPERTY" => {
                    let (name, l) = self.word(w, "a property name")?;
                    if !KNOWN_PROPERTIES.contains(&name) {
                        return err(
                            l,
                            w,
                            format!("unknown property name for DEVICE_PROPERTY: {name} (the FloatControlsProperties members Amber knows)"),
                        );
                    }
                    self.script.device_properties.push(Requirement {
                        name: name.to_string(),
                        line: l,
                    });
                    self.end_of_statement(w)?;
                }
                "DEVICE_EXTENSION" | "INSTANCE_EXTENSION" => {
                    let (name, l) = self.word(w, "an extension name")?;
                    let r = Requirement {
                        name: name.to_string(),
                        line: l,
                    };
                    if w == "DEVICE_EXTENSION" {
                        self.script.device_extensions.push(r);
                    } else {
                        self.script.instance_extensions.push(r);
                    }
                    self.end_of_statement(w)?;
                }
                "SET" => {
                    self.keyword(w, "ENGINE_DATA")?;
                    let (var, l) = self.word(w, "an engine data variable")?;
                    if var != "fence_timeout_ms" {
                        return err(
                            l,
                            w,
                            format!("SET ENGINE_DATA: unknown variable {var} (fence_timeout_ms)"),
                        );
                    }
                    self.script.fence_timeout_ms = Some(self.uint(w, "fence_timeout_ms value")?);
                    self.end_of_statement(w)?;
                }
                "IMAGE" => self.image(line)?,
                "SAMPLER" => self.sampler(line)?,
                "VIRTUAL_FILE" => self.virtual_file(line)?,
                "STRUCT" => {
                    return unsupported(
                        line,
                        w,
                        "STRUCT data types are not supported (scalars, vectors and matrices are)",
                    )
                }
                w if is_repeatable(w) => {
                    let c = self.repeatable(w, line)?;
                    self.script.commands.push(c);
                }
                _ => return err(line, w, "unknown command"),
            }
        }
    }

    fn finish(&mut self) -> PResult<()> {
        // "Buffers used as copy destination can be used only as copy destination, and as
        // argument to an EXPECT command." (AmberScript, Buffer Copy)
        for &(_, to, line) in &self.copies {
            let name = &self.script.buffers[to].name;
            if let Some(p) = self
                .script
                .pipelines
                .iter()
                .find(|p| p.bindings.iter().any(|b| b.buffer == to))
            {
                return err(line, "COPY", format!("{name} is a COPY destination and is bound in PIPELINE {}: a copy destination can only be a COPY destination and an EXPECT argument", p.name));
            }
            if self.copies.iter().any(|&(from, _, _)| from == to) {
                return err(line, "COPY", format!("{name} is a COPY destination and also a COPY source: a copy destination can only be a COPY destination and an EXPECT argument"));
            }
        }
        Ok(())
    }

    // ---- SHADER ---------------------------------------------------------------------------

    fn shader(&mut self, line: usize) -> PResult<()> {
        const C: &str = "SHADER";
        let (ty, tl) = self.word(C, "a shader type")?;
        match ty {
            "compute" => {}
            "vertex"
            | "fragment"
            | "geometry"
            | "tessellation_evaluation"
            | "tessellation_control"
            | "multi" => {
                return graphics(
                    tl,
                    &format!("SHADER {ty}"),
                    "only compute shaders are supported",
                )
            }
            _ => return err(tl, C, format!("unknown shader type: {ty}")),
        }
        let (name, nl) = self.word(C, "a shader name")?;
        if self.shader_index(name).is_some() {
            return err(nl, C, format!("duplicate shader name: {name}"));
        }
        let (fmt_name, fl) = self.word(C, "a shader format")?;
        let format = match fmt_name {
            "GLSL" => ShaderFormat::Glsl,
            "SPIRV-ASM" => ShaderFormat::SpirvAsm,
            "SPIRV-HEX" => ShaderFormat::SpirvHex,
            "SPIRV-BIN" => ShaderFormat::SpirvBin,
            "PASSTHROUGH" => {
                return err(
                    fl,
                    C,
                    "invalid shader type for PASSTHROUGH: only vertex PASSTHROUGH is allowed",
                )
            }
            "HLSL" | "OPENCL-C" => {
                return unsupported(
                    fl,
                    C,
                    format!(
                        "{fmt_name} shaders are not supported (GLSL, SPIRV-ASM and SPIRV-HEX are)"
                    ),
                )
            }
            _ => return err(fl, C, format!("unknown shader format: {fmt_name}")),
        };
        let mut target_env = None;
        if self.lx.peek() == Tok::Word("TARGET_ENV") {
            self.next();
            let (env, el) = self.word(C, "a target environment after TARGET_ENV")?;
            let Ok(e) = env.parse::<TargetEnv>() else {
                let why = format!("TARGET_ENV {env} is not supported ({})", TargetEnv::NAMES);
                return unsupported(el, C, why);
            };
            target_env = Some(e);
        }
        if let Tok::Word(kw @ ("FILE" | "VIRTUAL_FILE")) = self.lx.peek() {
            let (_, vl) = self.next();
            let (path, _) = self.word(C, &format!("a file path after {kw}"))?;
            self.end_of_statement("SHADER")?;
            let (source, code) = if format == ShaderFormat::SpirvBin {
                if kw == "VIRTUAL_FILE" {
                    return err(
                        vl,
                        C,
                        "SPIRV-BIN shaders are read from a FILE, not a VIRTUAL_FILE",
                    );
                }
                let bytes = self.read_file(vl, C, path)?;
                if bytes.is_empty() || bytes.len() % 4 != 0 {
                    return err(
                        vl,
                        C,
                        format!(
                            "FILE {path}: {} bytes is not a whole number of 32-bit SPIR-V words",
                            bytes.len()
                        ),
                    );
                }
                let words = bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                (String::new(), ShaderCode::SpirvWords(words))
            } else {
                let text = self.file_text(vl, C, path, kw == "VIRTUAL_FILE")?;
                let code = match format {
                    ShaderFormat::Glsl => ShaderCode::Glsl(text.clone()),
                    ShaderFormat::SpirvAsm => ShaderCode::SpirvAsm(text.clone()),
                    _ => ShaderCode::SpirvWords(decode_hex(&text, 1).map_err(|e| match e {
                        ParseFailure::Error(mut x) => {
                            x.message = format!("{path}: {}", x.message);
                            x.line = vl;
                            ParseFailure::Error(x)
                        }
                        other => other,
                    })?),
                };
                (text, code)
            };
            self.script.shaders.push(Shader {
                name: name.to_string(),
                line,
                format,
                target_env,
                source,
                file: Some(path.to_string()),
                source_line: 1,
                code,
            });
            return Ok(());
        }
        if format == ShaderFormat::SpirvBin {
            return err(fl, C, "SPIRV-BIN shaders must be read from a FILE");
        }
        self.end_of_statement("SHADER")?;
        let source_line = self.lx.line;
        let Some(source) = self.lx.block_until_end() else {
            return err(line, C, format!("SHADER {name}: missing END"));
        };
        if source.trim().is_empty() {
            return err(line, C, format!("SHADER {name} must not be empty"));
        }
        let (end, el) = self.word(C, "END")?;
        if end != "END" {
            return err(el, C, format!("SHADER {name}: missing END (found {end})"));
        }
        self.end_of_statement("SHADER")?;
        let code = match format {
            ShaderFormat::Glsl => ShaderCode::Glsl(source.to_string()),
            ShaderFormat::SpirvAsm => ShaderCode::SpirvAsm(source.to_string()),
            _ => ShaderCode::SpirvWords(decode_hex(source, source_line)?),
        };
        self.script.shaders.push(Shader {
            name: name.to_string(),
            line,
            format,
            target_env,
            source: source.to_string(),
            file: None,
            source_line,
            code,
        });
        Ok(())
    }

    /// `VIRTUAL_FILE path` … `END`: text a `SHADER … VIRTUAL_FILE path` reads.
    fn virtual_file(&mut self, line: usize) -> PResult<()> {
        const C: &str = "VIRTUAL_FILE";
        let (path, pl) = self.word(C, "a path")?;
        if self.virtual_files.iter().any(|(p, _)| p == path) {
            return err(pl, C, format!("duplicate virtual file name: {path}"));
        }
        self.end_of_statement(C)?;
        let Some(text) = self.lx.block_until_end() else {
            return err(line, C, format!("VIRTUAL_FILE {path}: missing END"));
        };
        self.word(C, "END")?;
        self.end_of_statement(C)?;
        self.virtual_files
            .push((path.to_string(), text.to_string()));
        Ok(())
    }

    // ---- BUFFER ---------------------------------------------------------------------------
}

/// Checks that `count` values read from byte `offset` of `buf` stay inside it (AmberScript: the
/// offset must be a multiple of the element size, and the read must not pass the end).
pub(crate) fn check_expect_range(buf: &Buffer, offset: usize, count: usize) -> Result<(), String> {
    let el = buf.element_layout();
    if !offset.is_multiple_of(el.stride) {
        return Err(format!(
            "IDX {offset} is not a multiple of the element size {} of {} ({} {}): IDX is a byte offset",
            el.stride, buf.name, buf.data_type, buf.layout
        ));
    }
    let comps = el.offsets.len();
    let last = count - 1;
    let end = (offset / el.stride + last / comps)
        .checked_mul(el.stride)
        .and_then(|b| b.checked_add(el.offsets[last % comps] + el.scalar.size()));
    match end {
        Some(e) if e <= buf.size() => Ok(()),
        _ => Err(format!(
            "{count} values from byte {offset} read past the end of {} ({} bytes: {} elements of {})",
            buf.name,
            buf.size(),
            buf.elements,
            buf.data_type
        )),
    }
}

/// How a buffer is initialised.
enum Init {
    Fill(Literal),
    Series(Literal, Literal),
    Data(Vec<Literal>),
    /// Raw bytes (`FILE BINARY`), whole elements.
    Bytes(Vec<u8>),
}

/// The initial bytes of a buffer.
fn fill(t: &DataType, layout: Layout, elements: usize, init: &Init) -> Result<Vec<u8>, String> {
    let el = t.element_layout(layout);
    let size = elements
        .checked_mul(el.stride)
        .filter(|&s| s <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            format!(
                "{elements} elements of {t} ({layout}) exceed lockstep's buffer limit of {} GiB",
                MAX_BUFFER_BYTES >> 30
            )
        })?;
    let mut bytes = vec![0u8; size];
    let n = el.scalar.size();
    let mut put = |i: usize, lit: Literal| -> Result<(), String> {
        let (e, k) = (i / el.offsets.len(), i % el.offsets.len());
        let at = e * el.stride + el.offsets[k];
        el.scalar
            .encode(lit, &mut bytes[at..at + n])
            .map_err(|e| e.0)
    };
    match init {
        Init::Fill(v) => {
            for i in 0..elements * el.offsets.len() {
                put(i, *v)?;
            }
        }
        Init::Series(start, inc) => {
            if el.scalar.is_float() {
                // "Floating point data uses floating point addition" (AmberScript, SERIES_FROM).
                let mut v = start.as_f64();
                for i in 0..elements {
                    put(i, Literal::Float(v))?;
                    v += inc.as_f64();
                }
            } else {
                // Integer addition, modulo 2^bits as the stored type wraps.
                let (Literal::Int(a), Literal::Int(b)) = (*start, *inc) else {
                    return Err(
                        "SERIES_FROM and INC_BY must be integers for an integer type".into(),
                    );
                };
                let bits = 8 * n as u32;
                let modulus = 1i128 << bits;
                let mut v = a.rem_euclid(modulus);
                let step = b.rem_euclid(modulus);
                for i in 0..elements {
                    put(i, Literal::Int(v))?;
                    v = (v + step) % modulus;
                }
            }
        }
        Init::Data(values) => {
            // (an IMAGE's size comes from its extent, not from its data)
            let room = elements * el.offsets.len();
            if values.len() > room {
                return Err(format!(
                    "DATA has {} values, more than the {room} of its {elements} elements of {t}",
                    values.len()
                ));
            }
            for (i, v) in values.iter().enumerate() {
                put(i, *v)?;
            }
        }
        Init::Bytes(b) => {
            let k = b.len().min(bytes.len());
            bytes[..k].copy_from_slice(&b[..k]);
        }
    }
    Ok(bytes)
}

/// [`decode_hex`] for the VkScript reader.
pub(crate) fn decode_hex_text(source: &str, first_line: usize) -> PResult<Vec<u32>> {
    decode_hex(source, first_line)
}

/// Decodes `SPIRV-HEX` text: whitespace-separated bytes in hex (`0x` optional), four to a
/// little-endian word (as Amber's `ParseHex` reads them).
fn decode_hex(source: &str, first_line: usize) -> PResult<Vec<u32>> {
    const C: &str = "SHADER";
    let mut bytes = Vec::new();
    for (i, text) in source.split('\n').enumerate() {
        for tok in text.split(|c: char| c.is_ascii() && is_space(c as u8)) {
            if tok.is_empty() {
                continue;
            }
            let digits = tok
                .strip_prefix("0x")
                .or_else(|| tok.strip_prefix("0X"))
                .unwrap_or(tok);
            match u8::from_str_radix(digits, 16) {
                Ok(b) if !digits.is_empty() && digits.len() <= 2 => bytes.push(b),
                _ => {
                    return err(
                        first_line + i,
                        C,
                        format!("SPIRV-HEX: {tok} is not a hex byte (00 to ff)"),
                    )
                }
            }
        }
    }
    if !bytes.len().is_multiple_of(4) {
        return err(
            first_line,
            C,
            format!(
                "SPIRV-HEX has {} bytes, not a whole number of 32-bit words",
                bytes.len()
            ),
        );
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
