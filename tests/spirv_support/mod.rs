//! GLSL → SPIR-V for the interpreter's tests: shaderc with debug info (OpLine), no optimisation.
#![allow(dead_code)]

pub fn glsl(src: &str, name: &str) -> Vec<u32> {
    let c = shaderc::Compiler::new().expect("shaderc");
    let mut o = shaderc::CompileOptions::new().expect("options");
    o.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_1 as u32);
    o.set_target_spirv(shaderc::SpirvVersion::V1_3);
    o.set_generate_debug_info();
    o.set_optimization_level(shaderc::OptimizationLevel::Zero);
    let a = c
        .compile_into_spirv(src, shaderc::ShaderKind::Compute, name, "main", Some(&o))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    a.as_binary().to_vec()
}
