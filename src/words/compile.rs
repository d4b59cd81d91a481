//! Run-time GLSL → SPIR-V compilation with shaderc (the system's, or built from source with the
//! `shaderc-from-source` feature),
//! cached by a hash of the source so each distinct kernel is compiled once per process.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// A shader that did not compile: the compiler's message and the source, with line numbers.
#[derive(Debug, Clone, thiserror::Error)]
#[error("GLSL compilation of {name} failed:\n{message}\n--- source ---\n{numbered}")]
pub struct GlslError {
    /// shader name
    pub name: String,
    /// shaderc's message
    pub message: String,
    /// the source with line numbers
    pub numbered: String,
}

fn cache() -> &'static Mutex<HashMap<u64, Arc<Vec<u32>>>> {
    static C: OnceLock<Mutex<HashMap<u64, Arc<Vec<u32>>>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Hash of a GLSL source, the cache key.
pub(crate) fn source_hash(source: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    h.finish()
}

/// Compiles a compute shader to SPIR-V 1.3 for Vulkan 1.1 (1.5/1.2 when `spirv_1_5`), cached by source.
///
/// ```no_run
/// let words = lockstep::vulkan::compile_glsl("#version 450\nvoid main() {}\n", "empty", false).unwrap();
/// assert_eq!(words[0], 0x0723_0203); // the SPIR-V magic number
/// ```
pub fn compile_glsl(source: &str, name: &str, spirv_1_5: bool) -> Result<Arc<Vec<u32>>, GlslError> {
    let key = source_hash(source) ^ (spirv_1_5 as u64);
    if let Some(w) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(w);
    }
    let words = compile_uncached(source, name, spirv_1_5)?;
    if let Ok(mut c) = cache().lock() {
        c.insert(key, words.clone());
    }
    Ok(words)
}

/// [`compile_glsl`] without the cache, for shaders that are compiled once (random programs: a
/// cache would only grow).
pub fn compile_uncached(
    source: &str,
    name: &str,
    spirv_1_5: bool,
) -> Result<Arc<Vec<u32>>, GlslError> {
    let err = |message: String| GlslError {
        name: name.to_string(),
        message,
        numbered: source
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{:4} {l}", i + 1))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    // No spirv-opt: the driver optimizes, and a conformance tool should hand it the code as written.
    let opts = GlslOptions {
        env: if spirv_1_5 {
            TargetEnv::Vulkan1_2
        } else {
            TargetEnv::Vulkan1_1
        },
        defines: &[],
        debug_info: false,
        include: None,
    };
    compile_glsl_with(source, &format!("{name}.comp"), &opts)
        .map(Arc::new)
        .map_err(err)
}

/// Runs `f` with this thread's shaderc compiler (`None` when shaderc could not create one).
///
/// One compiler per thread, kept alive: creating one re-initialises glslang's built-in symbol
/// tables, which costs more (~60 ms) than compiling a typical program.
fn with_compiler<R>(f: impl FnOnce(&shaderc::Compiler) -> R) -> Option<R> {
    thread_local! {
        static COMPILER: Option<shaderc::Compiler> = shaderc::Compiler::new();
    }
    COMPILER.with(|c| c.as_ref().map(f))
}

pub use super::env::TargetEnv;

/// shaderc's environment and SPIR-V version for `env`.
fn shaderc_target(env: TargetEnv) -> (shaderc::EnvVersion, shaderc::SpirvVersion) {
    match env {
        TargetEnv::Vulkan1_1 => (shaderc::EnvVersion::Vulkan1_1, shaderc::SpirvVersion::V1_3),
        TargetEnv::Vulkan1_2 => (shaderc::EnvVersion::Vulkan1_2, shaderc::SpirvVersion::V1_5),
        TargetEnv::Vulkan1_3 => (shaderc::EnvVersion::Vulkan1_3, shaderc::SpirvVersion::V1_6),
    }
}

/// Resolves an `#include`: called with the requested name, whether it is a relative include
/// (`#include "x"`, as opposed to `#include <x>`), the name of the including source and the
/// include depth; returns the resolved name (unique per file, used in messages and `OpLine`) and
/// the file's text, or a message saying why it could not be found.
pub type IncludeResolver<'a> =
    dyn Fn(&str, bool, &str, usize) -> Result<(String, String), String> + 'a;

/// How [`compile_glsl_with`] compiles.
pub struct GlslOptions<'a> {
    /// Target environment.
    pub env: TargetEnv,
    /// `-D` macro definitions: name and optional value.
    pub defines: &'a [(String, Option<String>)],
    /// Emit debug information (`OpSource` with the text, `OpString`, `OpLine`, `OpName`).
    pub debug_info: bool,
    /// `#include` resolution; without it an `#include` is an error.
    pub include: Option<&'a IncludeResolver<'a>>,
}

/// Deepest `#include` nesting accepted (deeper is reported as a probable include cycle).
pub const MAX_INCLUDE_DEPTH: usize = 32;

fn no_nul(what: &str, text: &str) -> Result<(), String> {
    match text.find('\0') {
        Some(at) => Err(format!("{what} contains a NUL character at byte {at}")),
        None => Ok(()),
    }
}

/// Compiles a GLSL compute shader (entry point `main`) to SPIR-V, without optimisation, with the
/// given target, macro definitions, debug information and include resolution. The error is
/// shaderc's message, whose lines name the file and line (`kernel.comp:12: error: …`).
///
/// ```
/// use lockstep::vulkan::{compile_glsl_with, GlslOptions, TargetEnv};
/// let defines = [("N".to_string(), Some("4".to_string()))];
/// let opts = GlslOptions { env: TargetEnv::Vulkan1_1, defines: &defines, debug_info: true, include: None };
/// let words = compile_glsl_with("#version 450\nlayout(local_size_x = N) in;\nvoid main() {}\n", "k.comp", &opts).unwrap();
/// assert_eq!((words[0], words[1]), (0x0723_0203, 0x0001_0300)); // magic, SPIR-V 1.3
/// let e = compile_glsl_with("#version 450\nvoid main() { x = 1; }\n", "k.comp", &opts).unwrap_err();
/// assert!(e.contains("k.comp:2"), "{e}");
/// ```
pub fn compile_glsl_with(
    source: &str,
    file_name: &str,
    opts: &GlslOptions<'_>,
) -> Result<Vec<u32>, String> {
    no_nul("the source", source)?;
    no_nul("the file name", file_name)?;
    // Every included file's text by resolved name, to re-embed in OpSource (below).
    let included: std::cell::RefCell<Vec<(String, String)>> = Default::default();
    let mut o = shaderc::CompileOptions::new().ok_or("shaderc options unavailable")?;
    let (env, spv) = shaderc_target(opts.env);
    o.set_target_env(shaderc::TargetEnv::Vulkan, env as u32);
    o.set_target_spirv(spv);
    o.set_optimization_level(shaderc::OptimizationLevel::Zero);
    if opts.debug_info {
        o.set_generate_debug_info();
    }
    for (name, value) in opts.defines {
        if name.is_empty()
            || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!(
                "macro name '{name}' is not an identifier (letters, digits and '_', not starting with a digit)"
            ));
        }
        if let Some(v) = value {
            no_nul(&format!("the value of macro {name}"), v)?;
        }
        o.add_macro_definition(name, value.as_deref());
    }
    if let Some(resolve) = opts.include {
        let included = &included;
        // shaderc panics on names or contents with NUL characters and on empty resolved names:
        // those become include errors here.
        o.set_include_callback(move |requested, kind, from, depth| {
            if depth > MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "#include nesting deeper than {MAX_INCLUDE_DEPTH} (an include cycle?)"
                ));
            }
            let relative = kind == shaderc::IncludeType::Relative;
            let (resolved_name, content) = resolve(requested, relative, from, depth)?;
            no_nul(&format!("included file {resolved_name}"), &content)?;
            no_nul("an included file name", &resolved_name)?;
            if resolved_name.is_empty() {
                return Err(format!(
                    "#include \"{requested}\" resolved to an empty name"
                ));
            }
            included
                .borrow_mut()
                .push((resolved_name.clone(), content.clone()));
            Ok(shaderc::ResolvedInclude {
                resolved_name,
                content,
            })
        });
    }
    let words = with_compiler(|c| {
        c.compile_into_spirv(
            source,
            shaderc::ShaderKind::Compute,
            file_name,
            "main",
            Some(&o),
        )
        .map(|a| a.as_binary().to_vec())
        .map_err(|e| e.to_string())
    })
    .unwrap_or_else(|| Err("shaderc compiler unavailable".into()))?;
    drop(o);
    if !opts.debug_info {
        return Ok(words);
    }
    let mut texts = included.into_inner();
    texts.push((file_name.to_string(), source.to_string()));
    Ok(reembed_sources(&words, &texts))
}

/// glslang 11 embeds each file's text in `OpSource` with every byte above 0x7f widened to four
/// (`ff ff ff`-padded), so a source with one non-ASCII character (a `Σ` in a comment) gives a
/// module whose strings are not UTF-8, which SPIR-V parsers (rspirv) reject. The text is
/// replaced by the file's own, split at character boundaries into `OpSourceContinued` where it
/// is longer than one instruction holds; an `OpSource` whose file is not known loses its text.
fn reembed_sources(words: &[u32], texts: &[(String, String)]) -> Vec<u32> {
    const OP_SOURCE_CONTINUED: u32 = 2;
    const OP_SOURCE: u32 = 3;
    const OP_STRING: u32 = 7;
    // Strings are NUL-terminated and padded to a word.
    fn encode(s: &[u8]) -> Vec<u32> {
        let mut b = s.to_vec();
        b.push(0);
        b.resize(b.len().div_ceil(4) * 4, 0);
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    // Pieces of `text` that fit an instruction of at most 65535 words, `first` of them taken by
    // other operands in the first instruction.
    fn chunks(text: &str, first: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = text;
        let mut room = (0xffff - 1 - first) * 4 - 1;
        loop {
            let mut cut = rest.len().min(room);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push(&rest[..cut]);
            rest = &rest[cut..];
            if rest.is_empty() {
                return out;
            }
            room = (0xffff - 1) * 4 - 1;
        }
    }
    let mut names = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..words.len().min(5)]);
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        let op = words[i] & 0xffff;
        if n == 0 || i + n > words.len() {
            // Not a module glslang would write: leave the rest as it is.
            out.extend_from_slice(&words[i..]);
            break;
        }
        let inst = &words[i..i + n];
        match op {
            OP_STRING if n >= 3 => {
                let bytes: Vec<u8> = inst[2..].iter().flat_map(|w| w.to_le_bytes()).collect();
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                names.insert(inst[1], String::from_utf8_lossy(&bytes[..end]).into_owned());
                out.extend_from_slice(inst);
            }
            OP_SOURCE if n > 4 => {
                let text = names
                    .get(&inst[3])
                    .and_then(|name| texts.iter().find(|(n, _)| n == name))
                    .map(|(_, t)| t.as_str());
                match text {
                    Some(t) => {
                        for (k, c) in chunks(t, 3).into_iter().enumerate() {
                            let s = encode(c.as_bytes());
                            if k == 0 {
                                out.push(((4 + s.len() as u32) << 16) | OP_SOURCE);
                                out.extend_from_slice(&inst[1..4]);
                            } else {
                                out.push(((1 + s.len() as u32) << 16) | OP_SOURCE_CONTINUED);
                            }
                            out.extend_from_slice(&s);
                        }
                    }
                    None => {
                        out.push((4 << 16) | OP_SOURCE);
                        out.extend_from_slice(&inst[1..4]);
                    }
                }
            }
            OP_SOURCE_CONTINUED => {}
            _ => out.extend_from_slice(inst),
        }
        i += n;
    }
    out
}

/// Assembles SPIR-V assembly text (the SPIRV-Tools syntax, as `spirv-dis` writes it) into a
/// module for the given target, whose SPIR-V version the module's header gets.
///
/// ```
/// use lockstep::vulkan::{assemble_spirv, TargetEnv};
/// let text = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n";
/// let words = assemble_spirv(text, TargetEnv::Vulkan1_2).unwrap();
/// assert_eq!((words[0], words[1]), (0x0723_0203, 0x0001_0500));
/// assert!(assemble_spirv("OpNoSuchThing\n", TargetEnv::Vulkan1_1).is_err());
/// ```
pub fn assemble_spirv(text: &str, env: TargetEnv) -> Result<Vec<u32>, String> {
    no_nul("the assembly", text)?;
    // SPIRV-Tools' assembler for the target's environment (linked already, under shaderc): the
    // grammar of that SPIR-V version, so that operands a later version added (`MaxIterations`,
    // `OpPtrEqual`) assemble where the target has them. shaderc's own `assemble` reads every
    // module as SPIR-V 1.0.
    let env_name = std::ffi::CString::new(env.name()).expect("an environment name has no NUL");
    spirv_tools::assemble(&env_name, text)
}

/// The SPIRV-Tools C API (`spirv-tools/libspirv.h`), the four calls the assembler needs.
mod spirv_tools {
    use std::ffi::{c_char, c_int, c_void, CStr};

    #[repr(C)]
    struct Binary {
        code: *mut u32,
        word_count: usize,
    }

    #[repr(C)]
    struct Position {
        line: usize,
        column: usize,
        index: usize,
    }

    #[repr(C)]
    struct Diagnostic {
        position: Position,
        error: *mut c_char,
        is_text_source: bool,
    }

    unsafe extern "C" {
        fn spvParseTargetEnv(s: *const c_char, env: *mut c_int) -> bool;
        fn spvContextCreate(env: c_int) -> *mut c_void;
        fn spvContextDestroy(context: *mut c_void);
        fn spvTextToBinaryWithOptions(
            context: *const c_void,
            text: *const c_char,
            length: usize,
            options: u32,
            binary: *mut *mut Binary,
            diagnostic: *mut *mut Diagnostic,
        ) -> c_int;
        fn spvBinaryDestroy(binary: *mut Binary);
        fn spvDiagnosticDestroy(diagnostic: *mut Diagnostic);
    }

    /// `SPV_TEXT_TO_BINARY_OPTION_PRESERVE_NUMERIC_IDS` (libspirv.h): `%74` stays id 74, so a
    /// report names the ids the user wrote (without it the assembler numbers ids in order of
    /// first appearance, and `%74 = OpUndef` comes back as `%29`).
    const PRESERVE_NUMERIC_IDS: u32 = 1 << 1;

    /// Assembles `text` for the environment named `env` (`vulkan1.2`): the words, or
    /// `invalid assembly: LINE:COLUMN: message`.
    pub(super) fn assemble(env: &CStr, text: &str) -> Result<Vec<u32>, String> {
        let mut e: c_int = 0;
        // SAFETY: `env` is a NUL-terminated string and `e` a valid out pointer; every object
        // SPIRV-Tools returns is read while alive and destroyed once, by its own destroy call.
        unsafe {
            if !spvParseTargetEnv(env.as_ptr(), &mut e) {
                return Err(format!("SPIRV-Tools does not know the environment {env:?}"));
            }
            let ctx = spvContextCreate(e);
            if ctx.is_null() {
                return Err("SPIRV-Tools could not create a context".into());
            }
            let mut bin: *mut Binary = std::ptr::null_mut();
            let mut diag: *mut Diagnostic = std::ptr::null_mut();
            let rc = spvTextToBinaryWithOptions(
                ctx,
                text.as_ptr() as *const c_char,
                text.len(),
                PRESERVE_NUMERIC_IDS,
                &mut bin,
                &mut diag,
            );
            let out = if rc == 0 && !bin.is_null() {
                Ok(std::slice::from_raw_parts((*bin).code, (*bin).word_count).to_vec())
            } else if !diag.is_null() {
                let d = &*diag;
                let msg = if d.error.is_null() {
                    "unknown error".to_string()
                } else {
                    CStr::from_ptr(d.error).to_string_lossy().into_owned()
                };
                Err(format!(
                    "invalid assembly: {}:{}: {msg}",
                    d.position.line + 1,
                    d.position.column + 1
                ))
            } else {
                Err(format!("invalid assembly: SPIRV-Tools returned {rc}"))
            };
            if !bin.is_null() {
                spvBinaryDestroy(bin);
            }
            if !diag.is_null() {
                spvDiagnosticDestroy(diag);
            }
            spvContextDestroy(ctx);
            out
        }
    }
}
