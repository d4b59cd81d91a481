//! Run-time GLSL → SPIR-V compilation with shaderc (the same shaderc vulkano-shaders builds),
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
pub fn source_hash(source: &str) -> u64 {
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
    // One compiler per thread, kept alive: creating one re-initialises glslang's built-in symbol
    // tables, which costs more (~60 ms) than compiling a typical program.
    thread_local! {
        static COMPILER: Option<shaderc::Compiler> = shaderc::Compiler::new();
    }
    let mut opts =
        shaderc::CompileOptions::new().ok_or_else(|| err("shaderc options unavailable".into()))?;
    if spirv_1_5 {
        opts.set_target_env(
            shaderc::TargetEnv::Vulkan,
            shaderc::EnvVersion::Vulkan1_2 as u32,
        );
        opts.set_target_spirv(shaderc::SpirvVersion::V1_5);
    } else {
        opts.set_target_env(
            shaderc::TargetEnv::Vulkan,
            shaderc::EnvVersion::Vulkan1_1 as u32,
        );
        opts.set_target_spirv(shaderc::SpirvVersion::V1_3);
    }
    // No spirv-opt: the driver optimizes, and a conformance tool should hand it the code as written.
    opts.set_optimization_level(shaderc::OptimizationLevel::Zero);
    COMPILER.with(|c| {
        let compiler = c
            .as_ref()
            .ok_or_else(|| err("shaderc compiler unavailable".into()))?;
        let art = compiler
            .compile_into_spirv(
                source,
                shaderc::ShaderKind::Compute,
                &format!("{name}.comp"),
                "main",
                Some(&opts),
            )
            .map_err(|e| err(e.to_string()))?;
        Ok(Arc::new(art.as_binary().to_vec()))
    })
}
