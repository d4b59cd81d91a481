//! Kernel sources — GLSL, SPIR-V binary, SPIR-V assembly, WGSL — turned into the one SPIR-V module
//! that both the interpreter and the device get.
//!
//! - GLSL (`.comp`, `.glsl`) through the project's shaderc: `#include "x"` relative to the including
//!   file (`#include <x>` in [`SourceOptions::include_dir`]), `-D` macro definitions, debug
//!   information on (`OpSource`, `OpString`, `OpLine`, `OpName`: the interpreter maps instructions
//!   to source lines), no optimisation. The target environment is the one given, or else the
//!   lowest of Vulkan 1.1, 1.2, 1.3 under which the shader compiles (a shader that compiles under
//!   1.1 never gets a higher one; one that needs more — `subgroupBroadcast` with a dynamic id
//!   needs SPIR-V 1.5 — gets the first that accepts it). Needs the `vulkan` cargo feature.
//! - SPIR-V assembly (`.spvasm`) through shaderc's assembler. The module's SPIR-V version is
//!   the target's, else the one a `; Version: 1.x` comment at the top declares (as `spirv-dis`
//!   writes), else 1.3. Needs the `vulkan` feature.
//! - SPIR-V binary (`.spv`): little-endian words (a big-endian file is byte-swapped), magic
//!   number and size checked, structure parsed with rspirv.
//! - WGSL (`.wgsl`) through naga: `wgsl-in`, validation with every capability (subgroup
//!   operations when the source says `enable subgroups;`), `spv-out` with debug information
//!   (`OpSource` with the text, `OpLine`), SPIR-V 1.3 unless a target is given.
//!
//! Every failure is one [`SourceError`] naming the file and, where the compiler gives one, the line.

pub use crate::words::env::TargetEnv;
use rspirv::spirv;
use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

/// The language of a kernel source, from its file extension.
///
/// ```
/// use lockstep::kernel::SourceLang;
/// use std::path::Path;
/// assert_eq!(SourceLang::from_path(Path::new("k.comp")).unwrap(), SourceLang::Glsl);
/// assert_eq!(SourceLang::from_path(Path::new("k.spvasm")).unwrap(), SourceLang::SpirvAsm);
/// assert!(SourceLang::from_path(Path::new("k.hlsl")).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceLang {
    /// GLSL compute shader (`.comp`, `.glsl`)
    Glsl,
    /// SPIR-V binary (`.spv`)
    SpirvBinary,
    /// SPIR-V assembly (`.spvasm`)
    SpirvAsm,
    /// WGSL (`.wgsl`)
    Wgsl,
}

impl SourceLang {
    /// The language of `path`, from its extension (case-insensitive).
    pub fn from_path(path: &Path) -> Result<SourceLang, SourceError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("comp" | "glsl") => Ok(SourceLang::Glsl),
            Some("spv") => Ok(SourceLang::SpirvBinary),
            Some("spvasm") => Ok(SourceLang::SpirvAsm),
            Some("wgsl") => Ok(SourceLang::Wgsl),
            _ => Err(SourceError::UnknownExtension {
                path: path.display().to_string(),
            }),
        }
    }

    /// Display name (`GLSL`, `SPIR-V`, `SPIR-V assembly`, `WGSL`).
    pub fn name(self) -> &'static str {
        match self {
            SourceLang::Glsl => "GLSL",
            SourceLang::SpirvBinary => "SPIR-V",
            SourceLang::SpirvAsm => "SPIR-V assembly",
            SourceLang::Wgsl => "WGSL",
        }
    }
}

impl fmt::Display for SourceLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to turn a source into a module.
#[derive(Clone, Debug, Default)]
pub struct SourceOptions {
    /// GLSL macro definitions (`-D NAME` or `-D NAME=VALUE`); an error for other languages,
    /// which have no preprocessor.
    pub defines: Vec<(String, Option<String>)>,
    /// The environment to compile for; `None` picks the lowest that works (see the module docs).
    pub target_env: Option<TargetEnv>,
    /// Where `#include <x>` looks, and where `#include "x"` looks when the file is not next to
    /// the including one (a source given as text resolves its relative includes here first).
    pub include_dir: Option<PathBuf>,
    /// The module's name in messages and reports; empty: the file name (or `kernel` for text).
    pub name: String,
    /// WGSL's pipeline-overridable constants (`override`), set before the module is written as
    /// SPIR-V (naga's pipeline constants; WebGPU, "pipeline-overridable constants"): each key
    /// the override's name or its `@id`, each value a number, or `true`/`false`. An override
    /// with no default must be given. An error for other languages, whose specialization
    /// constants are set at run time (`KernelJob::spec`).
    pub overrides: Vec<(String, String)>,
}

impl SourceOptions {
    /// Adds a definition written as on a compiler's command line: `NAME` or `NAME=VALUE`.
    ///
    /// ```
    /// let mut o = lockstep::kernel::SourceOptions::default();
    /// o.define("N=4").unwrap();
    /// o.define("DEBUG").unwrap();
    /// assert_eq!(o.defines, [("N".into(), Some("4".into())), ("DEBUG".into(), None)]);
    /// assert!(o.define("4N=1").is_err());
    /// ```
    pub fn define(&mut self, text: &str) -> Result<&mut Self, SourceError> {
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.to_string())),
            None => (text.trim(), None),
        };
        let ident = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !ident {
            return Err(SourceError::Define {
                given: text.to_string(),
            });
        }
        self.defines.push((name.to_string(), value));
        Ok(self)
    }
}

/// A SPIR-V module and where it came from.
#[derive(Clone, Debug)]
pub struct SpirvModule {
    /// The module's words (host order).
    pub words: Vec<u32>,
    /// The language it was written in.
    pub lang: SourceLang,
    /// Its name (the file name unless [`SourceOptions::name`] says otherwise).
    pub name: String,
    /// The environment it was made for (for a binary: the lowest that accepts its version, or the
    /// one given if higher).
    pub target_env: TargetEnv,
    /// The source text (GLSL, WGSL, assembly); `None` for a binary.
    pub source_text: Option<String>,
}

impl SpirvModule {
    /// A module from the bytes of a SPIR-V binary (as in a `.spv` file, or Amber's `SPIRV-HEX`),
    /// checked as [`load`] checks a `.spv` file; `target_env` as [`SourceOptions::target_env`].
    ///
    /// ```
    /// use lockstep::kernel::{compile, SourceLang, SpirvModule, TargetEnv};
    /// let m = compile("@compute @workgroup_size(1) fn main() {}", SourceLang::Wgsl, &Default::default()).unwrap();
    /// let bytes: Vec<u8> = m.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    /// let back = SpirvModule::from_bytes(&bytes, "copy", None).unwrap();
    /// assert_eq!((back.words, back.target_env), (m.words, TargetEnv::Vulkan1_1));
    /// assert!(SpirvModule::from_bytes(&bytes[..10], "cut", None).is_err());
    /// ```
    pub fn from_bytes(
        bytes: &[u8],
        name: &str,
        target_env: Option<TargetEnv>,
    ) -> Result<SpirvModule, SourceError> {
        binary(bytes, name, name.to_string(), target_env)
    }

    /// The SPIR-V version (major, minor) in the module's header.
    pub fn spirv_version(&self) -> (u8, u8) {
        let v = self.words.get(1).copied().unwrap_or(0);
        ((v >> 16) as u8, (v >> 8) as u8)
    }

    /// The names of the module's `GLCompute` entry points, in declaration order.
    ///
    /// ```
    /// use lockstep::kernel::{compile, SourceLang, SourceOptions};
    /// let wgsl = "@compute @workgroup_size(1) fn first() {}\n@compute @workgroup_size(1) fn second() {}\n";
    /// let m = compile(wgsl, SourceLang::Wgsl, &SourceOptions::default()).unwrap();
    /// assert_eq!(m.compute_entry_points(), ["first", "second"]);
    /// ```
    pub fn compute_entry_points(&self) -> Vec<String> {
        let Ok(r) = crate::words::read(&self.words) else {
            return Vec::new();
        };
        let m = r.module;
        m.entry_points
            .iter()
            .filter(|e| {
                matches!(
                    e.operands.first(),
                    Some(rspirv::dr::Operand::ExecutionModel(
                        spirv::ExecutionModel::GLCompute
                    ))
                )
            })
            .filter_map(|e| match e.operands.get(2) {
                Some(rspirv::dr::Operand::LiteralString(s)) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Why a source did not become a module.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// the path
        path: String,
        /// the I/O error
        source: std::io::Error,
    },
    /// A text source is not UTF-8.
    #[error("{path}: not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// the path
        path: String,
        /// offset of the first invalid byte
        offset: usize,
    },
    /// The extension names no known language.
    #[error("{path}: unknown kernel file extension (expected .comp or .glsl for GLSL, .spv for SPIR-V, .spvasm for SPIR-V assembly, .wgsl for WGSL)")]
    UnknownExtension {
        /// the path
        path: String,
    },
    /// GLSL and SPIR-V assembly need shaderc, which comes with the `vulkan` cargo feature.
    #[error("{file}: {lang} input needs shaderc, which this build of lockstep does not have (it was built without the `vulkan` cargo feature); rebuild with default features, or give WGSL or a SPIR-V binary")]
    NeedsShaderc {
        /// the file
        file: String,
        /// the language
        lang: SourceLang,
    },
    /// The compiler (glslang, the SPIR-V assembler, naga) rejected the source.
    #[error("{}: {lang} compilation failed\n{message}{}", location(file, *line), quote(source_line))]
    Compile {
        /// the language
        lang: SourceLang,
        /// the file the (first) error is in: the kernel or one of its includes
        file: String,
        /// the line of the first error, when the compiler names one
        line: Option<u32>,
        /// the compiler's message
        message: String,
        /// the text of that line, when it is known
        source_line: Option<String>,
    },
    /// A binary is not a well-formed SPIR-V module.
    #[error("{file}: not a valid SPIR-V module: {rule}")]
    Spirv {
        /// the file
        file: String,
        /// the rule it breaks
        rule: String,
    },
    /// The module needs a newer environment than the one asked for.
    #[error("{file}: the module is SPIR-V {major}.{minor}, which {given} does not accept (it needs {needed})")]
    TargetTooLow {
        /// the file
        file: String,
        /// SPIR-V major version of the module
        major: u8,
        /// SPIR-V minor version of the module
        minor: u8,
        /// the environment asked for
        given: TargetEnv,
        /// the lowest environment that accepts the module
        needed: TargetEnv,
    },
    /// An unknown target environment name.
    #[error(transparent)]
    TargetEnv(#[from] crate::words::env::UnknownTargetEnv),
    /// A malformed `-D` definition.
    #[error("bad macro definition '{given}': expected NAME or NAME=VALUE, NAME an identifier (letters, digits and '_', not starting with a digit)")]
    Define {
        /// what was given
        given: String,
    },
    /// Macro definitions were given for a language without a preprocessor.
    #[error("{file}: macro definitions (-D) apply to GLSL only; {lang} has no preprocessor")]
    DefinesNotGlsl {
        /// the file
        file: String,
        /// the language
        lang: SourceLang,
    },
}

fn location(file: &str, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("{file}:{l}"),
        None => file.to_string(),
    }
}

fn quote(line: &Option<String>) -> String {
    match line {
        Some(l) => format!("\n  | {}", l.trim_end()),
        None => String::new(),
    }
}

/// Reads and compiles the kernel at `path`; the language comes from the extension.
///
/// ```
/// use lockstep::kernel::{load, SourceLang, SourceOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("double.wgsl");
/// std::fs::write(&path, "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n\
///     @compute @workgroup_size(64)\n\
///     fn main(@builtin(global_invocation_id) id: vec3<u32>) { a[id.x] = 2u * a[id.x]; }\n").unwrap();
/// let m = load(&path, &SourceOptions::default()).unwrap();
/// assert_eq!((m.lang, m.name.as_str()), (SourceLang::Wgsl, "double.wgsl"));
/// assert_eq!(m.words[0], 0x0723_0203);
/// ```
pub fn load(path: &Path, opts: &SourceOptions) -> Result<SpirvModule, SourceError> {
    let lang = SourceLang::from_path(path)?;
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| SourceError::Read {
        path: shown.clone(),
        source,
    })?;
    let name = if opts.name.is_empty() {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.clone())
    } else {
        opts.name.clone()
    };
    if lang == SourceLang::SpirvBinary {
        check_no_defines(&shown, lang, opts)?;
        return binary(&bytes, &shown, name, opts.target_env);
    }
    let text = String::from_utf8(bytes).map_err(|e| SourceError::NotUtf8 {
        path: shown.clone(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    compile_text(text, lang, &shown, name, base, opts)
}

/// Compiles source text in `lang` (for [`SourceLang::SpirvBinary`], `text` is not accepted: read
/// the file with [`load`]). The module is named [`SourceOptions::name`] (default `kernel`);
/// relative includes resolve against [`SourceOptions::include_dir`] (default: the current
/// directory).
///
/// ```
/// use lockstep::kernel::{compile, SourceLang, SourceOptions, TargetEnv};
/// let wgsl = "enable subgroups;\n\
///     @group(0) @binding(0) var<storage, read_write> a: array<u32>;\n\
///     @compute @workgroup_size(64)\n\
///     fn main(@builtin(global_invocation_id) id: vec3<u32>) { a[id.x] = subgroupAdd(a[id.x]); }\n";
/// let m = compile(wgsl, SourceLang::Wgsl, &SourceOptions::default()).unwrap();
/// assert_eq!((m.target_env, m.spirv_version()), (TargetEnv::Vulkan1_1, (1, 3)));
/// let e = compile("fn main( {}", SourceLang::Wgsl, &SourceOptions::default()).unwrap_err();
/// assert!(e.to_string().starts_with("kernel:1: WGSL compilation failed"), "{e}");
/// ```
pub fn compile(
    text: &str,
    lang: SourceLang,
    opts: &SourceOptions,
) -> Result<SpirvModule, SourceError> {
    let name = if opts.name.is_empty() {
        "kernel".to_string()
    } else {
        opts.name.clone()
    };
    if lang == SourceLang::SpirvBinary {
        return Err(SourceError::Spirv {
            file: name,
            rule: "a SPIR-V binary is words, not text: read it with kernel::load".into(),
        });
    }
    let base = opts
        .include_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    compile_text(text.to_string(), lang, &name.clone(), name, base, opts)
}

fn check_no_defines(file: &str, lang: SourceLang, opts: &SourceOptions) -> Result<(), SourceError> {
    if !opts.defines.is_empty() && lang != SourceLang::Glsl {
        return Err(SourceError::DefinesNotGlsl {
            file: file.to_string(),
            lang,
        });
    }
    if !opts.overrides.is_empty() && lang != SourceLang::Wgsl {
        return Err(SourceError::Compile {
            lang,
            file: file.to_string(),
            line: None,
            message: format!(
                "{file}: pipeline-overridable constants (`override`) are WGSL's; a {lang} module's specialization constants are set by SpecId when it runs"
            ),
            source_line: None,
        });
    }
    Ok(())
}

/// `file`: the name messages use (the path as given); `base`: where the top-level source's
/// relative includes resolve.
fn compile_text(
    text: String,
    lang: SourceLang,
    file: &str,
    name: String,
    base: PathBuf,
    opts: &SourceOptions,
) -> Result<SpirvModule, SourceError> {
    check_no_defines(file, lang, opts)?;
    let (words, target_env) = match lang {
        SourceLang::Glsl => glsl(&text, file, &base, opts)?,
        SourceLang::SpirvAsm => {
            let (words, env) = assemble(&text, file, opts.target_env)?;
            // The module is checked like a binary (and its version may ask for more).
            let m = binary_words(words, file, name.clone(), Some(env))?;
            (m.words, m.target_env)
        }
        SourceLang::Wgsl => wgsl(
            &text,
            file,
            opts.target_env.unwrap_or(TargetEnv::Vulkan1_1),
            &opts.overrides,
        )?,
        SourceLang::SpirvBinary => unreachable!("binaries are read by `binary`"),
    };
    Ok(SpirvModule {
        words,
        lang,
        name,
        target_env,
        source_text: Some(text),
    })
}

/// The first `file:LINE: error:` of a glslang/shaderc message.
#[cfg(feature = "glsl")]
fn first_error_location(message: &str) -> Option<(String, u32)> {
    message.lines().find_map(|l| {
        let at = l.find(": error:")?;
        let (file, line) = l[..at].rsplit_once(':')?;
        Some((file.to_string(), line.trim().parse().ok()?))
    })
}

/// Lexically normalised `dir/requested` (no `.`; `..` folded where possible), so one file has
/// one name in messages and `OpString`s.
#[cfg(feature = "glsl")]
fn join_clean(dir: &Path, requested: &str) -> PathBuf {
    let mut out = PathBuf::new();
    use std::path::Component;
    for c in dir.join(requested).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(feature = "glsl")]
fn glsl(
    text: &str,
    file: &str,
    base: &Path,
    opts: &SourceOptions,
) -> Result<(Vec<u32>, TargetEnv), SourceError> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    // Every file read, by resolved name, to quote the line of an error in an include.
    let read: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
    let resolve = |requested: &str, relative: bool, from: &str, _depth: usize| {
        let path = if relative {
            let dir = if from == file {
                base.to_path_buf()
            } else {
                Path::new(from)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            };
            join_clean(&dir, requested)
        } else {
            match &opts.include_dir {
                Some(d) => join_clean(d, requested),
                None => {
                    return Err(format!(
                        "cannot find <{requested}>: no include directory was given"
                    ))
                }
            }
        };
        let content = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {} (included from {from}): {e}", path.display()))?;
        let resolved = path.display().to_string();
        read.borrow_mut().insert(resolved.clone(), content.clone());
        Ok((resolved, content))
    };
    let targets: Vec<TargetEnv> = match opts.target_env {
        Some(t) => vec![t],
        None => TargetEnv::ALL.to_vec(),
    };
    let mut last = String::new();
    for t in targets {
        let o = crate::words::compile::GlslOptions {
            env: t,
            defines: &opts.defines,
            debug_info: true,
            include: Some(&resolve),
        };
        match crate::words::compile::compile_glsl_with(text, file, &o) {
            Ok(words) => return Ok((words, t)),
            Err(e) => last = e,
        }
    }
    // Every environment failed: the last (most permissive) one's errors are the shader's own.
    let loc = first_error_location(&last);
    let source_line = loc.as_ref().and_then(|(f, l)| {
        let idx = (*l as usize).checked_sub(1)?;
        if f == file {
            text.lines().nth(idx).map(str::to_string)
        } else {
            read.borrow().get(f)?.lines().nth(idx).map(str::to_string)
        }
    });
    let (efile, line) = match loc {
        Some((f, l)) => (f, Some(l)),
        None => (file.to_string(), None),
    };
    Err(SourceError::Compile {
        lang: SourceLang::Glsl,
        file: efile,
        line,
        message: last.trim_end().to_string(),
        source_line,
    })
}

// Not compiled in the default build that `cargo mutants` tests: its mutants would change nothing
// there (`kernel::without_shaderc_glsl_and_assembly_say_what_is_missing` tests it without
// shaderc). No build sets the `mutants` cfg: cargo-mutants reads the attribute, the compiler never
// applies it.
#[cfg(not(feature = "glsl"))]
#[cfg_attr(mutants, mutants::skip)]
fn glsl(
    _text: &str,
    file: &str,
    _base: &Path,
    _opts: &SourceOptions,
) -> Result<(Vec<u32>, TargetEnv), SourceError> {
    Err(SourceError::NeedsShaderc {
        file: file.to_string(),
        lang: SourceLang::Glsl,
    })
}

#[cfg(feature = "glsl")]
/// The version in a `; Version: 1.5` comment, as `spirv-dis` starts its output with.
fn declared_asm_version(text: &str) -> Option<(u8, u8)> {
    text.lines()
        .take_while(|l| l.trim_start().starts_with(';') || l.trim().is_empty())
        .find_map(|l| {
            let v = l.trim_start().trim_start_matches(';').trim();
            let (major, minor) = v.strip_prefix("Version:")?.trim().split_once('.')?;
            Some((major.trim().parse().ok()?, minor.trim().parse().ok()?))
        })
}

/// The names a source gives the ids of `words` compiled from it, where the compiler kept none:
/// a SPIR-V assembly text's `%names` ([`crate::words::asm_names`]), for the model's reports
/// (the device's module stays as compiled).
pub(crate) fn source_names(
    lang: SourceLang,
    text: Option<&str>,
    words: &[u32],
) -> Vec<(u32, String)> {
    match (lang, text) {
        (SourceLang::SpirvAsm, Some(text)) => crate::words::asm_names::names(text, words),
        _ => Vec::new(),
    }
}

#[cfg(feature = "glsl")]
fn assemble(
    text: &str,
    file: &str,
    target: Option<TargetEnv>,
) -> Result<(Vec<u32>, TargetEnv), SourceError> {
    // The assembler takes any instruction whatever the target; the module's version is the
    // target's, or the one a `; Version:` comment declares, or SPIR-V 1.3.
    let declared = declared_asm_version(text);
    let needed = match declared {
        Some((major, minor)) => TargetEnv::for_spirv(major, minor).ok_or_else(|| SourceError::Spirv {
            file: file.to_string(),
            rule: format!("its '; Version: {major}.{minor}' is not a SPIR-V version lockstep knows (1.0 to 1.6)"),
        })?,
        None => TargetEnv::Vulkan1_1,
    };
    let env = match target {
        Some(t) if t < needed => {
            let (major, minor) = declared.unwrap_or((1, 3));
            return Err(SourceError::TargetTooLow {
                file: file.to_string(),
                major,
                minor,
                given: t,
                needed,
            });
        }
        Some(t) => t,
        None => needed,
    };
    match crate::words::compile::assemble_spirv(text, env) {
        Ok(words) => Ok((words, env)),
        Err(e) => {
            // SPIRV-Tools reports `LINE:COLUMN: message`.
            let line = e
                .trim_start_matches("invalid assembly:")
                .trim_start()
                .split(':')
                .next()
                .and_then(|n| n.trim().parse::<u32>().ok());
            Err(SourceError::Compile {
                lang: SourceLang::SpirvAsm,
                file: file.to_string(),
                line,
                message: e.trim_end().to_string(),
                source_line: line.and_then(|l| {
                    text.lines()
                        .nth(l.checked_sub(1)? as usize)
                        .map(str::to_string)
                }),
            })
        }
    }
}

// Not compiled in the mutants' build either (see `glsl` above).
#[cfg(not(feature = "glsl"))]
#[cfg_attr(mutants, mutants::skip)]
fn assemble(
    _text: &str,
    file: &str,
    _target: Option<TargetEnv>,
) -> Result<(Vec<u32>, TargetEnv), SourceError> {
    Err(SourceError::NeedsShaderc {
        file: file.to_string(),
        lang: SourceLang::SpirvAsm,
    })
}

/// naga 30 implements WGSL's subgroup built-ins but rejects the `enable subgroups;` directive
/// that the WGSL specification requires for them ("not yet implemented", gfx-rs/wgpu#5555). The
/// directive is taken out here (blanked, so every line and column stays where it was) and
/// decides whether the validator allows subgroup operations: with it they are valid, without it
/// they are the error the specification makes them.
///
/// Only the module's directives are read: WGSL ("Directives") puts them first, before any
/// declaration, with blankspace and comments between them; the words `enable subgroups;` in a
/// comment or after the first declaration are no directive and are left alone.
fn take_subgroups_directive(text: &str) -> (String, bool) {
    // Only ASCII bytes are overwritten, and only with spaces (newlines stay): the text stays
    // UTF-8 with every byte offset, and so every line and column, where it was.
    let mut bytes = text.as_bytes().to_vec();
    let blank = |bytes: &mut Vec<u8>, r: std::ops::Range<usize>| {
        for b in &mut bytes[r] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut enabled = false;
    let mut at = 0;
    loop {
        at = skip_wgsl_blank(text, at);
        let rest = &text[at..];
        let word = &rest[..rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())];
        // The three global directives ("Directives": enable, requires, diagnostic); any other
        // word starts the declarations.
        if !matches!(word, "enable" | "requires" | "diagnostic") {
            break;
        }
        let Some(semi) = rest.find(';').map(|i| at + i) else {
            break;
        };
        if word == "enable" {
            // The names with their byte ranges.
            let list_start = at + word.len();
            let mut names = Vec::new();
            let mut start = list_start;
            for part in text[list_start..semi].split(',') {
                let name = part.trim();
                if !name.is_empty() {
                    let from = start + (part.len() - part.trim_start().len());
                    names.push((name, from, from + name.len()));
                }
                start += part.len() + 1;
            }
            if let Some(k) = names.iter().position(|(n, _, _)| *n == "subgroups") {
                enabled = true;
                let (_, from, to) = names[k];
                if names.len() == 1 {
                    blank(&mut bytes, at..semi + 1);
                } else {
                    // With the comma after it, if any: the last name leaves the list ending in
                    // a comma, which WGSL allows (`enable f16, ;`).
                    let comma = text[to..semi].find(',').map_or(semi, |i| to + i + 1);
                    blank(&mut bytes, from..comma);
                }
            }
        }
        at = semi + 1;
    }
    (String::from_utf8_lossy(&bytes).into_owned(), enabled)
}

/// The byte offset of the first token at or after `at`: past blankspace, line comments and block
/// comments, which nest (WGSL, "Comments").
fn skip_wgsl_blank(text: &str, mut at: usize) -> usize {
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if trimmed.starts_with("//") {
            at += trimmed.find('\n').unwrap_or(trimmed.len());
        } else if trimmed.starts_with("/*") {
            let mut depth = 0usize;
            let mut i = at;
            while i < text.len() {
                if text[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if text[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += text[i..].chars().next().map_or(1, char::len_utf8);
                }
            }
            at = i;
        } else {
            return at;
        }
    }
}

fn wgsl(
    text: &str,
    file: &str,
    target: TargetEnv,
    overrides: &[(String, String)],
) -> Result<(Vec<u32>, TargetEnv), SourceError> {
    use naga::valid::{
        Capabilities, ShaderStages, SubgroupOperationSet, ValidationFlags, Validator,
    };
    let fail = |message: String, line: Option<u32>| SourceError::Compile {
        lang: SourceLang::Wgsl,
        file: file.to_string(),
        line,
        message: message.trim_end().to_string(),
        // naga's message already shows the line under the caret.
        source_line: None,
    };
    let (parsed_text, subgroups) = take_subgroups_directive(text);
    let module = naga::front::wgsl::parse_str(&parsed_text).map_err(|e| {
        fail(
            e.emit_to_string_with_path(text, file),
            e.location(text).map(|l| l.line_number),
        )
    })?;
    // Every capability (subgroups only with `enable subgroups;`): what the device lacks is for
    // the device runner to report, with the feature's name; the validator's job here is the
    // language's rules.
    let mut caps = Capabilities::all();
    if !subgroups {
        caps.remove(
            Capabilities::SUBGROUP
                | Capabilities::SUBGROUP_BARRIER
                | Capabilities::SUBGROUP_VERTEX_STAGE,
        );
    }
    let validator = |caps| {
        let mut v = Validator::new(ValidationFlags::all(), caps);
        v.subgroup_stages(ShaderStages::COMPUTE)
            .subgroup_operations(SubgroupOperationSet::all());
        v
    };
    let info = validator(caps).validate(&module).map_err(|e| {
        let line = e.location(text).map(|l| l.line_number);
        if !subgroups && validator(Capabilities::all()).validate(&module).is_ok() {
            // WGSL written before naga required the directive: say which line is missing.
            let at = line.map_or(String::new(), |l| format!("line {l} "));
            return fail(
                format!(
                    "{file}: {at}uses a subgroup built-in or operation without `enable subgroups;`: WGSL requires the subgroups extension to be enabled first (add the line `enable subgroups;` at the top)\n{}",
                    e.emit_to_string_with_path(text, file)
                ),
                line,
            );
        }
        fail(e.emit_to_string_with_path(text, file), line)
    })?;
    let (major, minor) = target.spirv_version();
    let options = naga::back::spv::Options {
        lang_version: (major, minor),
        flags: naga::back::spv::WriterFlags::DEBUG,
        debug_info: Some(naga::back::spv::DebugInfo {
            source_code: text,
            file_name: file,
            language: naga::back::spv::SourceLanguage::WGSL,
        }),
        // The module as written: no loop-bounding counters (a WebGPU guard against drivers that
        // miscompile infinite loops). Bindings map @group to the set and @binding to the binding.
        force_loop_bounding: false,
        fake_missing_bindings: true,
        ..Default::default()
    };
    let (module, info) =
        set_overrides(&module, &info, overrides).map_err(|m| fail(format!("{file}: {m}"), None))?;
    let words = naga::back::spv::write_vec(&module, &info, &options, None)
        .map_err(|e| fail(format!("{file}: SPIR-V generation failed: {e}"), None))?;
    Ok((words, target))
}

/// `module` with its `override` constants replaced by the values given (by name or `@id`) or
/// their defaults — what a WebGPU pipeline does at creation, and what naga's SPIR-V writer needs
/// first (it writes no specialization constants for them).
fn set_overrides<'m>(
    module: &'m naga::Module,
    info: &'m naga::valid::ModuleInfo,
    given: &[(String, String)],
) -> Result<(Cow<'m, naga::Module>, Cow<'m, naga::valid::ModuleInfo>), String> {
    use naga::back::pipeline_constants::{process_overrides, PipelineConstantError as E};
    let names = || {
        let v: Vec<String> = module
            .overrides
            .iter()
            .map(|(_, o)| match (&o.name, o.id) {
                (Some(n), Some(id)) => format!("{n} (@id({id}))"),
                (Some(n), None) => n.clone(),
                (None, Some(id)) => format!("@id({id})"),
                (None, None) => "?".into(),
            })
            .collect();
        if v.is_empty() {
            "it has none".to_string()
        } else {
            format!("its overrides: {}", v.join(", "))
        }
    };
    let mut constants = naga::back::PipelineConstants::default();
    for (k, v) in given {
        let x = match v.trim() {
            "true" => 1.0,
            "false" => 0.0,
            t => t.parse::<f64>().map_err(|_| {
                format!("--spec {k}={v}: an override's value is a number, `true` or `false`")
            })?,
        };
        constants.insert(k.trim().to_string(), x);
    }
    process_overrides(module, info, None, &constants).map_err(|e| match e {
        E::MissingValue(n) => format!(
            "override `{n}` has no default and no value: give it with --spec {n}=VALUE (WebGPU: an override without an initializer must be set by the pipeline)"
        ),
        E::NotFound(k) => format!(
            "--spec {k}: the module has no override named or numbered {k} ({})",
            names()
        ),
        e => format!("the overrides given: {e}"),
    })
}

const MAGIC: u32 = 0x0723_0203;

fn binary(
    bytes: &[u8],
    file: &str,
    name: String,
    target: Option<TargetEnv>,
) -> Result<SpirvModule, SourceError> {
    let bad = |rule: String| SourceError::Spirv {
        file: file.to_string(),
        rule,
    };
    if !bytes.len().is_multiple_of(4) {
        return Err(bad(format!(
            "its size ({} bytes) is not a multiple of 4",
            bytes.len()
        )));
    }
    if bytes.len() < 20 {
        return Err(bad(format!(
            "it has {} bytes, fewer than the 5-word header",
            bytes.len()
        )));
    }
    let mut words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words[0] == MAGIC.swap_bytes() {
        // A big-endian file: the specification allows either order (SPIR-V 2.3, "Physical Layout").
        for w in &mut words {
            *w = w.swap_bytes();
        }
    } else if words[0] != MAGIC {
        return Err(bad(format!(
            "the first word is 0x{:08x}, not the magic number 0x{MAGIC:08x}",
            words[0]
        )));
    }
    let mut m = binary_words(words, file, name, target)?;
    m.source_text = None;
    Ok(m)
}

/// Checks a module's header and structure, and its version against the target.
fn binary_words(
    words: Vec<u32>,
    file: &str,
    name: String,
    target: Option<TargetEnv>,
) -> Result<SpirvModule, SourceError> {
    let bad = |rule: String| SourceError::Spirv {
        file: file.to_string(),
        rule,
    };
    let v = words[1];
    let (major, minor) = ((v >> 16) as u8, (v >> 8) as u8);
    if v & 0xff00_00ff != 0 {
        return Err(bad(format!("the version word 0x{v:08x} is malformed")));
    }
    let needed = TargetEnv::for_spirv(major, minor).ok_or_else(|| {
        bad(format!(
            "SPIR-V version {major}.{minor} is not one lockstep knows (1.0 to 1.6)"
        ))
    })?;
    let target_env = match target {
        Some(t) if t < needed => {
            return Err(SourceError::TargetTooLow {
                file: file.to_string(),
                major,
                minor,
                given: t,
                needed,
            })
        }
        Some(t) => t,
        None => needed,
    };
    let parsed = crate::words::read(&words).map_err(|e| bad(e.0))?.module;
    if parsed.memory_model.is_none() {
        return Err(bad("it has no OpMemoryModel".into()));
    }
    Ok(SpirvModule {
        words,
        lang: SourceLang::SpirvBinary,
        name,
        target_env,
        source_text: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // WGSL, "Enable Extensions": `enable` is a directive only as a word of its own followed by
    // its list; inside an identifier (`reenable`, `enabled`) it is no directive, and the text is
    // left as it is — every byte, so every line and column, where it was.
    #[test]
    fn only_an_enable_directive_of_its_own_loses_its_subgroups() {
        let (t, on) = take_subgroups_directive("enable f16, subgroups;\nfn f() {}\n");
        assert!(on);
        assert_eq!(t, format!("enable f16,{};\nfn f() {{}}\n", " ".repeat(10)));
        // first in a list: blanked with the comma after it
        let (t, on) = take_subgroups_directive("enable subgroups, f16;");
        assert!(on);
        assert_eq!(t, format!("enable {} f16;", " ".repeat(10)));
        for text in ["// reenable subgroups;\n", "// enable,subgroups;\n"] {
            assert_eq!(take_subgroups_directive(text), (text.to_string(), false));
        }
    }

    // WGSL, "Directives": directives come first, before any declaration, with blankspace and
    // comments ("Comments": line comments, and block comments that nest) between them. The words
    // in a comment, or after the first declaration, are no directive.
    #[test]
    fn the_subgroups_directive_is_read_only_among_the_module_s_directives_not_in_comments() {
        for text in [
            "// enable subgroups;\nfn f() {}\n",
            "/* a /* nested */ enable subgroups; */\nfn f() {}\n",
            "fn f() {}\n// later:\nenable subgroups;\n",
            "/* unterminated enable subgroups;",
            // a directive without its `;` is naga's error to report, not taken here
            "enable subgroups\nfn f() {}\n",
        ] {
            assert_eq!(
                take_subgroups_directive(text),
                (text.to_string(), false),
                "{text}"
            );
        }
        // after comments and other directives it is still one
        let text = "// header\n/* x /* y */ */ diagnostic(off, derivative_uniformity);\n\
                    requires readonly_and_readwrite_storage_textures;\nenable subgroups;\nfn f() {}\n";
        let (t, on) = take_subgroups_directive(text);
        assert!(on);
        assert_eq!(t, text.replace("enable subgroups;", &" ".repeat(17)));
    }
}
