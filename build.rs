//! Links shaderc from the system's static libraries (Debian: `libshaderc-dev`, `glslang-dev`,
//! `spirv-tools`) unless the `shaderc-from-source` feature builds it instead. Debian's
//! `libshaderc_combined.a` lacks glslang and SPIRV-Tools, which its packages ship separately: the
//! link lines below add them after it, in dependency order (`../shared/TOOLCHAIN.md`).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    check_cpu();
    let glsl = std::env::var_os("CARGO_FEATURE_GLSL").is_some();
    let from_source = std::env::var_os("CARGO_FEATURE_SHADERC_FROM_SOURCE").is_some();
    if !glsl || from_source {
        return;
    }
    if let Ok(dir) = std::env::var("SHADERC_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    for lib in [
        "glslang",
        "MachineIndependent",
        "GenericCodeGen",
        "OSDependent",
        "OGLCompiler",
        "SPIRV",
        "glslang-default-resource-limits",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
    ] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

/// `.cargo/config.toml` builds for x86-64-v3 (AVX2); a binary built so stops with "illegal
/// instruction" on a CPU without AVX2. Building on such a CPU for itself (the usual case: the
/// binary runs where it is built) stops here instead, with the way out.
fn check_cpu() {
    #[cfg(target_arch = "x86_64")]
    {
        let host = std::env::var("HOST").unwrap_or_default();
        let target = std::env::var("TARGET").unwrap_or_default();
        let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
        let wants_avx2 = features.split(',').any(|f| f == "avx2");
        if host == target && wants_avx2 && !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!(
                "error: this build targets x86-64-v3 (AVX2; .cargo/config.toml) and this CPU has no \
                 AVX2, so the binaries would stop with \"illegal instruction\". Build with \
                 RUSTFLAGS=\"-C target-cpu=native\" (it replaces the setting)."
            );
            std::process::exit(1);
        }
    }
}
