//! Links shaderc from the system's static libraries (Debian: `libshaderc-dev`, `glslang-dev`,
//! `spirv-tools`) unless the `shaderc-from-source` feature builds it instead. Debian's
//! `libshaderc_combined.a` lacks glslang and SPIRV-Tools, which its packages ship separately: the
//! link lines below add them after it, in dependency order (`../shared/TOOLCHAIN.md`).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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
