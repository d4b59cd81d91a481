//! Small compiled kernels for examples and tests that must run without a GLSL compiler (the
//! model-only build). Each is the SPIR-V glslang produced from the GLSL beside it in
//! `examples/spv/`; `tests/spirv.rs` checks that compiling the GLSL again gives the same words.

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `b[gl_GlobalInvocationID.x] = gl_SubgroupInvocationID;` with 8 invocations per workgroup
/// (`examples/spv/lane_ids.comp`).
pub fn lane_ids() -> Vec<u32> {
    words(include_bytes!("../../examples/spv/lane_ids.spv"))
}
