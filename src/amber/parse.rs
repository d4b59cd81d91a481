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
use std::fmt;
use std::path::Path;

/// The largest buffer lockstep allocates (bytes). A script asking for more is an error.
pub const MAX_BUFFER_BYTES: usize = 256 << 20;

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
pub const KNOWN_FEATURES: &[&str] = &[
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
pub const KNOWN_PROPERTIES: &[&str] = &[
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
pub fn amberscript(text: &str, dir: Option<&Path>) -> Result<Script, ParseFailure> {
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
                        "FILE {}: {} bytes exceed lockstep's limit of {} MiB",
                        path.display(),
                        m.len(),
                        MAX_BUFFER_BYTES >> 20
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
                "IMAGE" => return graphics(line, w, "images"),
                "SAMPLER" => return graphics(line, w, "samplers"),
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
            match TargetEnv::parse(env) {
                Some(e) => target_env = Some(e),
                None => {
                    return unsupported(el, C, format!("TARGET_ENV {env} is not supported (spv1.0–spv1.6, vulkan1.0–vulkan1.4, vulkan1.1spv1.4, universal1.0–universal1.6)"))
                }
            }
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

    fn data_type(&self, name: &str, line: usize, cmd: &str) -> PResult<DataType> {
        if let Ok(t) = name.parse::<DataType>() {
            return Ok(t);
        }
        if let Some(FormatKind::Image) =
            DataType::from_format(name.strip_suffix("[]").unwrap_or(name))
        {
            return graphics(line, cmd, format!("{name} is an image format; only plain UINT, SINT and SFLOAT scalar and vector formats are supported"));
        }
        err(line, cmd, format!("invalid data type '{name}' provided"))
    }

    fn buffer(&mut self, line: usize) -> PResult<()> {
        const C: &str = "BUFFER";
        let (name, nl) = self.word(C, "a buffer name")?;
        if name == "DATA_TYPE" || name == "FORMAT" {
            return err(nl, C, "missing BUFFER name");
        }
        if self.buffer_index(name).is_some() {
            return err(nl, C, format!("duplicate buffer name provided: {name}"));
        }
        let (kind, kl) = self.word(C, "DATA_TYPE or FORMAT")?;
        let (data_type, layout, elements, values): (DataType, Layout, usize, Init) = match kind {
            "DATA_TYPE" => {
                let (tname, tl) = self.word(C, "a data type")?;
                let t = self.data_type(tname, tl, C)?;
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
                    Some(FormatKind::Image) => return graphics(fl, C, format!("{f} is an image format; only plain UINT, SINT and SFLOAT scalar and vector formats are supported")),
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
        });
        Ok(())
    }

    /// `FILE TEXT name`, `FILE BINARY name` or `FILE PNG name` after `BUFFER … SIZE n` (AmberScript,
    /// "Buffers": text is read as a `DATA` block would be, to the end of the file; binary bytes are
    /// the buffer's bytes).
    fn buffer_file(&mut self, line: usize, t: &DataType) -> PResult<Init> {
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
    fn number(&mut self, cmd: &str, what: &str, scalar: Scalar) -> PResult<Literal> {
        let (w, l) = self.word(cmd, what)?;
        self.literal(w, l, cmd, what, scalar)
    }

    /// A FILL, SERIES_FROM or INC_BY value. Amber reads these as numbers of either kind for every
    /// data type (`FILL 0.0` on an `int16` buffer: the CTS's mul_extended tests); a float written
    /// for an integer type is taken when it is a whole number that fits.
    fn fill_number(&mut self, cmd: &str, what: &str, scalar: Scalar) -> PResult<Literal> {
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

    fn literal(
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

    fn data_block(&mut self, scalar: Scalar) -> PResult<Vec<Literal>> {
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

    fn pipeline(&mut self, line: usize) -> PResult<()> {
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
            optimizations: Vec::new(),
        };
        self.pipeline_body(C, draft)
    }

    fn derive_pipeline(&mut self, line: usize) -> PResult<()> {
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
            optimizations: p.optimizations,
        };
        self.pipeline_body(C, draft)
    }

    fn pipeline_body(&mut self, cmd: &str, mut p: PipelineDraft) -> PResult<()> {
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
            optimizations: p.optimizations,
        });
        Ok(())
    }

    fn attach(&mut self, p: &mut PipelineDraft) -> PResult<()> {
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

    fn specialization(&mut self) -> PResult<Specialization> {
        const C: &str = "ATTACH";
        let id = self.uint(C, "specialization ID")?;
        self.keyword(C, "AS")?;
        let (ty, tl) = self.word(C, "a data type in SPECIALIZE")?;
        let scalar = match ty {
            "uint32" => Scalar::Uint32,
            "int32" => Scalar::Int32,
            "float" => Scalar::Float32,
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

    fn bind(&mut self, p: &mut PipelineDraft) -> PResult<()> {
        const C: &str = "BIND";
        let (what, wl) = self.word(C, "BUFFER")?;
        let array = match what {
            "BUFFER" => false,
            "BUFFER_ARRAY" => true,
            "SAMPLER" | "SAMPLER_ARRAY" => return graphics(wl, C, "samplers"),
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
                                    format!(
                                        "invalid DESCRIPTOR_RANGE: {w} (a number of bytes > 0)"
                                    ),
                                )
                            }
                        }
                    }
                }
                if ty.starts_with("storage") {
                    BindingKind::Storage { set, binding }
                } else {
                    BindingKind::Uniform { set, binding }
                }
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
            "color"
            | "depth_stencil"
            | "resolve"
            | "storage_image"
            | "sampled_image"
            | "combined_image_sampler" => {
                return graphics(tl, C, format!("{ty} attachments and images"))
            }
            "uniform_texel_buffer" | "storage_texel_buffer" => {
                return unsupported(
                    tl,
                    C,
                    format!(
                    "{ty} descriptors are not supported (storage, uniform and push_constant are)"
                ),
                )
            }
            _ => return err(tl, C, format!("unknown buffer_type: {ty}")),
        };
        self.end_of_statement("BIND")?;
        // A later BIND to the same set and binding replaces the earlier (Amber: ClearBuffers).
        if let Some(slot) = kind.slot() {
            p.bindings.retain(|b| b.kind.slot() != Some(slot));
        }
        for (k, (bi, bname)) in bufs.iter().enumerate() {
            let (offset, range) = (offsets[k], ranges[k]);
            if kind.slot().is_some() {
                let end = range.map_or(u64::MAX, |r| offset.saturating_add(r));
                if let Some(other) = p.bindings.iter().find(|b| {
                    b.buffer == *bi
                        && b.kind.slot().is_some()
                        && b.offset < end
                        && offset < b.range.map_or(u64::MAX, |r| b.offset.saturating_add(r))
                }) {
                    // Two descriptors over the same memory: each backend gets its own copy of a
                    // binding's bytes, so the shader would not see one binding's writes through
                    // the other as a device does.
                    return unsupported(
                        tl,
                        C,
                        format!(
                            "BUFFER {bname} is already bound at {}: one buffer's bytes behind two descriptors (aliased memory) are not supported",
                            other.kind
                        ),
                    );
                }
            }
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

    fn subgroup(&mut self, p: &mut PipelineDraft, line: usize) -> PResult<()> {
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

    fn repeat(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "REPEAT";
        let (w, l) = self.word(C, "a count")?;
        let count = match Literal::parse(w) {
            Some(Literal::Int(n)) if (1..=u32::MAX as i128).contains(&n) => n as u32,
            _ => {
                return err(
                    l,
                    C,
                    format!("invalid count parameter for REPEAT command: {w} (must be > 0)"),
                )
            }
        };
        self.end_of_statement("REPEAT")?;
        let mut commands = Vec::new();
        loop {
            let (t, l) = self.next();
            match t {
                Tok::Eol => continue,
                Tok::Eos => return err(line, C, "missing END for REPEAT command"),
                Tok::Word("END") => break,
                Tok::Word(w) if is_repeatable(w) => commands.push(self.repeatable(w, l)?),
                Tok::Word(w) => {
                    return err(l, C, format!("{w} cannot be used inside REPEAT (RUN, COPY, EXPECT and CLEAR commands can)"))
                }
            }
        }
        self.end_of_statement("REPEAT")?;
        Ok(Command::Repeat {
            line,
            count,
            commands,
        })
    }

    fn repeatable(&mut self, w: &str, line: usize) -> PResult<Command> {
        match w {
            "RUN" => self.run(line),
            "COPY" => self.copy(line),
            "EXPECT" => self.expect(line),
            _ => graphics(line, w, "clearing framebuffers of graphics pipelines"),
        }
    }

    fn run(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "RUN";
        let (mut name, mut nl) = self.word(C, "a pipeline name")?;
        if name == "TIMED_EXECUTION" {
            // Amber times the dispatch; lockstep runs it untimed on the model and the device.
            (name, nl) = self.word(C, "a pipeline name after TIMED_EXECUTION")?;
        }
        let Some(pi) = self.pipeline_index(name) else {
            return err(nl, C, format!("unknown pipeline for RUN command: {name}"));
        };
        let (w, wl) = match self.next() {
            (Tok::Word(w), l) => (w, l),
            (_, l) => return err(l, C, "RUN command requires parameters"),
        };
        if matches!(w, "DRAW_RECT" | "DRAW_GRID" | "DRAW_ARRAY") {
            return graphics(wl, &format!("RUN {w}"), "draw commands");
        }
        let mut groups = [0u32; 3];
        for (i, g) in groups.iter_mut().enumerate() {
            let (t, l) = if i == 0 {
                (w, wl)
            } else {
                self.word(C, "workgroup counts X Y Z")?
            };
            *g = match Literal::parse(t) {
                Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => v as u32,
                _ => return err(l, C, format!("invalid parameter for RUN command: {t} (workgroup counts X Y Z, each a uint32)")),
            };
        }
        self.end_of_statement("RUN")?;
        Ok(Command::Run {
            line,
            pipeline: pi,
            groups,
        })
    }

    fn copy(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "COPY";
        let (from, fl) = self.word(C, "a buffer name after COPY")?;
        if from == "TO" {
            return err(fl, C, "missing buffer name between COPY and TO");
        }
        let Some(fi) = self.buffer_index(from) else {
            return err(
                fl,
                C,
                format!("COPY origin buffer was not declared: {from}"),
            );
        };
        self.keyword(C, "TO")?;
        let (to, tl) = self.word(C, "a buffer name after TO")?;
        let Some(ti) = self.buffer_index(to) else {
            return err(
                tl,
                C,
                format!("COPY destination buffer was not declared: {to}"),
            );
        };
        if fi == ti {
            return err(tl, C, "COPY origin and destination buffers are identical");
        }
        let (a, b) = (&self.script.buffers[fi], &self.script.buffers[ti]);
        if a.data_type != b.data_type || a.layout != b.layout {
            return err(line, C, format!("COPY {from} TO {to}: both buffers must have the same data type ({} {} vs {} {})", a.data_type, a.layout, b.data_type, b.layout));
        }
        // Amber sizes the destination like the origin.
        if a.elements != b.elements {
            let (elements, size) = (a.elements, a.initial.len());
            let b = &mut self.script.buffers[ti];
            b.elements = elements;
            b.initial = vec![0; size];
        }
        self.end_of_statement("COPY")?;
        self.copies.push((fi, ti, line));
        Ok(Command::Copy {
            line,
            from: fi,
            to: ti,
        })
    }

    fn expect(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "EXPECT";
        let (name, nl) = self.word(C, "a buffer name")?;
        if matches!(
            name,
            "IDX" | "EQ_BUFFER" | "RMSE_BUFFER" | "EQ_HISTOGRAM_EMD_BUFFER"
        ) {
            return err(
                nl,
                C,
                format!("missing buffer name between EXPECT and {name}"),
            );
        }
        let Some(bi) = self.buffer_index(name) else {
            return err(
                nl,
                C,
                format!("unknown buffer name for EXPECT command: {name}"),
            );
        };
        let text = self.line_text(line);
        let (w, wl) = self.word(C, "IDX, EQ_BUFFER or RMSE_BUFFER")?;
        let kind = match w {
            "EQ_BUFFER" | "RMSE_BUFFER" => {
                let (other, ol) = self.word(C, &format!("a buffer name after {w}"))?;
                let Some(oi) = self.buffer_index(other) else {
                    return err(
                        ol,
                        C,
                        format!("unknown buffer name for EXPECT {w} command: {other}"),
                    );
                };
                let (a, b) = (&self.script.buffers[bi], &self.script.buffers[oi]);
                if a.data_type != b.data_type || a.layout != b.layout {
                    return err(ol, C, format!("EXPECT {w} command cannot compare buffers of differing format ({} {} vs {} {})", a.data_type, a.layout, b.data_type, b.layout));
                }
                if a.elements != b.elements {
                    return err(
                        ol,
                        C,
                        format!(
                            "EXPECT {w} command cannot compare buffers of different size: {} vs {}",
                            a.elements, b.elements
                        ),
                    );
                }
                let kind = if w == "EQ_BUFFER" {
                    ExpectKind::EqBuffer { other: oi }
                } else {
                    self.keyword(C, "TOLERANCE")?;
                    let (t, tl) = self.word(C, "a TOLERANCE value")?;
                    let tolerance = match Literal::parse(t) {
                        Some(v) if v.as_f64() >= 0.0 => v.as_f64(),
                        _ => {
                            return err(
                                tl,
                                C,
                                format!("invalid TOLERANCE for EXPECT RMSE_BUFFER: {t}"),
                            )
                        }
                    };
                    ExpectKind::RmseBuffer {
                        other: oi,
                        tolerance,
                    }
                };
                self.end_of_statement("EXPECT")?;
                kind
            }
            "EQ_HISTOGRAM_EMD_BUFFER" => return graphics(wl, C, "image histogram comparison"),
            "IDX" => self.expect_values(bi)?,
            _ => return err(wl, C, format!("missing IDX in EXPECT command (found {w})")),
        };
        Ok(Command::Expect(Expect {
            line,
            buffer: bi,
            kind,
            text,
        }))
    }

    fn expect_values(&mut self, bi: usize) -> PResult<ExpectKind> {
        const C: &str = "EXPECT";
        let (x, xl) = self.word(C, "an IDX value")?;
        let offset = match Literal::parse(x) {
            Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => v as usize,
            _ => return err(xl, C, format!("invalid X value in EXPECT command: {x}")),
        };
        let mut t = self.next();
        let mut has_y = false;
        if let (Tok::Word(w), l) = t
            && let Some(Literal::Int(y)) = Literal::parse(w)
        {
            if y < 0 {
                return err(l, C, format!("invalid Y value in EXPECT command: {w}"));
            }
            has_y = true;
            t = self.next();
        }
        if t.0 == Tok::Word("SIZE") {
            if !has_y {
                return err(t.1, C, "invalid Y value in EXPECT command");
            }
            return graphics(
                t.1,
                C,
                "probing image pixels (IDX x y SIZE w h EQ_RGB/EQ_RGBA)",
            );
        }
        let mut tolerances = Vec::new();
        if t.0 == Tok::Word("TOLERANCE") {
            while let Tok::Word(w) = self.lx.peek() {
                let (num, pct) = match w.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (w, false),
                };
                let Some(v) = Literal::parse(num) else { break };
                let (_, l) = self.next();
                let percent = pct || {
                    if self.lx.peek() == Tok::Word("%") {
                        self.next();
                        true
                    } else {
                        false
                    }
                };
                if !(v.as_f64() >= 0.0 && v.as_f64().is_finite()) {
                    return err(l, C, format!("TOLERANCE {w} is not a finite number ≥ 0"));
                }
                tolerances.push(Tolerance {
                    value: v.as_f64(),
                    percent,
                });
            }
            if tolerances.is_empty() {
                return err(t.1, C, "TOLERANCE specified but no tolerances provided");
            }
            if tolerances.len() > 4 {
                return err(t.1, C, "TOLERANCE has a maximum of 4 values");
            }
            t = self.next();
        }
        let comparator = match t {
            (Tok::Word(w), _) if Comparator::parse(w).is_some() => Comparator::parse(w).unwrap(),
            (t, l) => {
                return err(
                    l,
                    C,
                    format!("unexpected token in EXPECT command: {t} (EQ, NE, LT, LE, GT or GE)"),
                )
            }
        };
        if has_y {
            return err(t.1, C, "Y value not needed for non-color comparator");
        }
        if !tolerances.is_empty() && comparator != Comparator::Eq {
            return err(t.1, C, "TOLERANCE only available with EQ probes");
        }
        let buf = &self.script.buffers[bi];
        let scalar = buf.data_type.scalar;
        let mut values = Vec::new();
        loop {
            match self.next() {
                (Tok::Eol | Tok::Eos, _) => break,
                (Tok::Word(w), l) => values.push(self.literal(w, l, C, "EXPECT value", scalar)?),
            }
        }
        if values.is_empty() {
            return err(t.1, C, "missing comparison values for EXPECT command");
        }
        let buf = &self.script.buffers[bi];
        check_expect_range(buf, offset, values.len()).or_else(|m| err(xl, C, m))?;
        Ok(ExpectKind::Values {
            offset,
            tolerances,
            comparator,
            values,
        })
    }
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
                "{elements} elements of {t} ({layout}) exceed lockstep's buffer limit of {} MiB",
                MAX_BUFFER_BYTES >> 20
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
