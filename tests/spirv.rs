//! The SPIR-V interpreter on kernels compiled from GLSL.
#![cfg(feature = "vulkan")]
use crate::spirv_support;
use lockstep::model::SubgroupSize;
use lockstep::reconverge::Mode;
use lockstep::spirv::*;

fn cfg(size: u64, mode: Mode, wg: [u32; 3]) -> RunConfig {
    let mut c = RunConfig::new(SubgroupSize::new(size).unwrap(), wg);
    c.mode = mode;
    c
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn the_committed_example_modules_match_their_glsl() {
    let src = include_str!("../examples/spv/lane_ids.comp");
    let words = spirv_support::glsl(src, "lane_ids.comp");
    if std::env::var("LOCKSTEP_WRITE_SPV").is_ok() {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write("examples/spv/lane_ids.spv", bytes).unwrap();
    }
    assert_eq!(words, examples::lane_ids());
}

#[test]
fn lane_ids_are_written_per_lane() {
    let k = decode(&examples::lane_ids(), &DecodeOptions::default()).unwrap();
    let run = run_model(
        &k,
        cfg(4, Mode::Base, [2, 1, 1]),
        &[BufferInput {
            set: 0,
            binding: 0,
            bytes: vec![0; 64],
            ..Default::default()
        }],
        None,
    )
    .unwrap();
    assert_eq!(
        u32s(&run.buffers[0].bytes)[..16],
        [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
    );
}

use spirv_support::{bindings, bytes_u32, glsl};

/// Runs GLSL on the model with one or more u32 buffers of `len` words (zero-filled).
fn run_glsl(src: &str, mode: Mode, size: u64, wg: [u32; 3], buffers: &[Vec<u32>]) -> ModelRun {
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = bindings(buffers.iter().map(|b| bytes_u32(b)));
    run_model(&k, cfg(size, mode, wg), &bufs, None).unwrap()
}

/// Assembles SPIR-V text and runs it on the model under base reconvergence, with `buffers` bound
/// at set 0, bindings 0, 1, … (as [`run_glsl`]).
fn run_asm(text: &str, size: u64, buffers: &[Vec<u8>]) -> ModelRun {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let bufs = bindings(buffers.iter().cloned());
    run_model(&k, cfg(size, Mode::Base, [1, 1, 1]), &bufs, None).unwrap()
}

/// The bytes a run left in the buffer at `binding`.
fn bytes_at(r: &ModelRun, binding: u32) -> &[u8] {
    &r.buffers
        .iter()
        .find(|b| b.binding == binding)
        .unwrap()
        .bytes
}

const HEAD: &str = "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_ballot : require\n#extension GL_KHR_shader_subgroup_shuffle : require\n#extension GL_KHR_shader_subgroup_shuffle_relative : require\n#extension GL_KHR_shader_subgroup_arithmetic : require\n";

#[test]
fn a_shuffle_past_the_last_lane_reaches_the_buffer_with_its_chain() {
    // GL_KHR_shader_subgroup: subgroupShuffleDown reads lane id + delta; undefined past the end.
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint x = subgroupShuffleDown(gl_SubgroupInvocationID * 10u, 2u);\n  b[gl_LocalInvocationIndex] = x;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 8]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    assert_eq!(w[..6], [20, 30, 40, 50, 60, 70]);
    for l in 0..6 {
        assert_eq!(r.status(b.word_taint(l)), WordStatus::Exact);
    }
    match r.status(b.word_taint(6)) {
        WordStatus::Undefined(chain) => {
            assert!(chain.starts_with("OpStore k.comp:11"), "{chain}");
            assert!(
                chain.contains("subgroupShuffleDown k.comp:10: source lane 8 >= subgroup size 8"),
                "{chain}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn reading_shared_memory_nobody_wrote_is_undefined() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint tile[4];\nvoid main() {{\n  if (gl_LocalInvocationIndex < 2u) tile[gl_LocalInvocationIndex] = 7u;\n  barrier();\n  b[gl_LocalInvocationIndex] = tile[gl_LocalInvocationIndex];\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 4]]);
    let b = &r.buffers[0];
    assert_eq!(r.status(b.word_taint(0)), WordStatus::Exact);
    match r.status(b.word_taint(3)) {
        WordStatus::Undefined(c) => assert!(
            c.contains("read of Workgroup variable tile, never written"),
            "{c}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// Every lane reads one shared location — a variable and a constant element of an array — through
/// one pointer, after the barrier that orders lane 0's writes before the reads (GLSL 4.60 §8.16,
/// `barrier()`: in compute shaders it also orders the shared-variable writes before it with the
/// reads after it; glslang emits `OpControlBarrier Workgroup Workgroup AcquireRelease|
/// WorkgroupMemory`). Every lane gets 7 + 9, exact: the model's row-copy path for one pointer into
/// an invocation's own memory must not take a shared variable for one.
#[test]
fn every_lane_reading_one_shared_location_gets_its_value() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint s;\nshared uint arr[4];\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  if (i == 0u) {{ s = 7u; arr[2] = 9u; }}\n  barrier();\n  b[i] = s + arr[2];\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 8]]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let b = &r.buffers[0];
    assert_eq!(u32s(&b.bytes), [16; 8]);
    for l in 0..8 {
        assert_eq!(r.status(b.word_taint(l)), WordStatus::Exact);
    }
}

#[test]
fn shared_memory_without_a_barrier_is_a_race_and_with_one_is_not() {
    let body = |bar: &str| {
        format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint tile[8];\nvoid main() {{\n  tile[gl_LocalInvocationIndex] = gl_LocalInvocationIndex;\n  {bar}\n  b[gl_LocalInvocationIndex] = tile[7u - gl_LocalInvocationIndex];\n}}\n")
    };
    let r = run_glsl(&body("barrier();"), Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert!(
        r.findings.is_empty(),
        "{:?}",
        r.findings
            .iter()
            .map(|f| r.finding_text(f))
            .collect::<Vec<_>>()
    );
    assert_eq!(u32s(&r.buffers[0].bytes), [7, 6, 5, 4, 3, 2, 1, 0]);
    let r = run_glsl(&body(""), Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("race on tile")),
        "{texts:?}"
    );
}

#[test]
fn two_workgroups_writing_one_element_race() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  if (gl_LocalInvocationIndex == 0u) b[0] = gl_WorkGroupID.x;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [2, 1, 1], &[vec![0; 4]]);
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.contains("race on")
            && t.contains("workgroup (0,0,0)")
            && t.contains("workgroup (1,0,0)")),
        "{texts:?}"
    );
    assert!(matches!(
        r.status(r.buffers[0].word_taint(0)),
        WordStatus::Racy(_)
    ));
}

#[test]
fn a_barrier_some_invocations_skip_is_reported() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  if (gl_LocalInvocationIndex < 3u) {{ barrier(); }}\n  b[gl_LocalInvocationIndex] = 1u;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("reached by 3 of the 8 invocations")),
        "{texts:?}"
    );
    // SPIR-V 1.6, OpControlBarrier: "behavior is undefined unless all invocations within Execution
    // execute the same dynamic instance of this instruction" — invocations that returned before
    // it never execute it either: part of a subgroup, or a whole subgroup that has finished.
    for (from, reached) in [(5, 5), (4, 4)] {
        let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  if (gl_LocalInvocationIndex >= {from}u) {{ return; }}\n  barrier();\n  b[gl_LocalInvocationIndex] = 1u;\n}}\n");
        let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
        let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains(&format!("reached by {reached} of the 8 invocations"))),
            "{from}: {texts:?}"
        );
    }
}

#[test]
fn atomic_counters_are_defined_but_what_they_return_is_order_dependent() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer C {{ uint counter; }};\nlayout(binding = 1) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint slot = atomicAdd(counter, 1u);\n  b[slot] = gl_LocalInvocationIndex + 100u;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [2, 1, 1], &[vec![0], vec![0; 16]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [16]);
    assert_eq!(r.status(r.buffers[0].word_taint(0)), WordStatus::Exact);
    let b = &r.buffers[1];
    for w in 0..16 {
        assert!(
            matches!(r.status(b.word_taint(w)), WordStatus::OrderDependent(_)),
            "{w}: {:?}",
            r.status(b.word_taint(w))
        );
    }
    assert!(
        r.findings.is_empty(),
        "{:?}",
        r.findings
            .iter()
            .map(|f| r.finding_text(f))
            .collect::<Vec<_>>()
    );
}

#[test]
fn integer_division_by_zero_and_oob_reads_are_undefined() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer A {{ uint a[4]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  b[i] = 12u / i;\n  b[4u + i] = a[i + 2u];\n}}\n");
    let r = run_glsl(
        &src,
        Mode::Base,
        4,
        [1, 1, 1],
        &[vec![0; 8], vec![5, 6, 7, 8]],
    );
    let b = &r.buffers[0];
    match r.status(b.word_taint(0)) {
        WordStatus::Undefined(c) => assert!(c.contains("integer division by zero"), "{c}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(u32s(&b.bytes)[1..6], [12, 6, 4, 7, 8]);
    assert!(matches!(
        r.status(b.word_taint(6)),
        WordStatus::Undefined(_)
    ));
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("out-of-bounds read of")),
        "{texts:?}"
    );
}

/// SPIR-V, OpBitcast: the result's bits are the operand's bits; where the operand is undefined
/// (an `OpUndef` from a variable no path wrote, SPIR-V 2.2.2 "Undefined"), so is every component of
/// the result. `v` is written only by invocation 1.
#[test]
fn a_bitcast_of_an_undefined_value_is_undefined_in_every_component() {
    let src = format!("{HEAD}layout(local_size_x = 2) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  vec2 v;\n  if (i == 1u) {{ v = vec2(1.0, 2.0); }}\n  uvec2 u = floatBitsToUint(v);\n  b[2u * i] = u.x;\n  b[2u * i + 1u] = u.y;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 2, [1, 1, 1], &[vec![0; 4]]);
    let b = &r.buffers[0];
    for w in 0..2 {
        assert!(
            matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_)),
            "b[{w}]: {:?}",
            r.status(b.word_taint(w))
        );
    }
    assert_eq!(u32s(&b.bytes)[2..], [0x3f80_0000, 0x4000_0000]);
    for w in 2..4 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "b[{w}]");
    }
}

/// GLSL.std.450 FrexpStruct on doubles: "Result Type must be an OpTypeStruct with two members.
/// Member 0 must have the same type as the type of x. Member 1 must be a scalar or vector with
/// integer component type" — 6 = 0.75 · 2³ and −0.375 = −0.75 · 2⁻¹: the significand keeps all
/// 64 bits of each double, the exponent is a 32-bit integer.
#[test]
fn frexp_of_doubles_returns_whole_significands_and_32_bit_exponents() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  double k = double(gl_LocalInvocationIndex);\n  ivec2 e;\n  dvec2 m = frexp(dvec2(6.0lf + k, -0.375lf - k), e);\n  b[0] = uint(m.x * 4.0lf);\n  b[1] = uint(m.y * -4.0lf);\n  b[2] = uint(e.x);\n  b[3] = uint(e.y);\n  b[4] = e.y == -1 ? 1u : 0u;\n  b[5] = e.x + e.y == 2 ? 1u : 0u;\n  b[6] = uint(bitCount(e.y));\n  b[7] = uint(findMSB(e.y) + 2);\n  b[8] = uint(e.y >> 31);\n  b[9] = uint(bitfieldExtract(e.y, 16, 16));\n}}\n");
    let r = run_glsl(&src, Mode::Base, 1, [1, 1, 1], &[vec![7; 10]]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(
        u32s(&r.buffers[0].bytes),
        [3, 3, 3, u32::MAX, 1, 1, 32, 1, u32::MAX, u32::MAX]
    );
}

/// A load is out of bounds when any byte it reads is past the buffer's range, and what it reads is
/// undefined — every component of a vector, not only its first (Vulkan, "Shader Resource Interface",
/// robustBufferAccess disabled: out-of-bounds reads "return undefined values"). `a[i + 1]` of
/// `uvec4 a[2]`: invocation 0 reads `a[1]`, invocation 1 indexes past the end.
#[test]
fn an_out_of_bounds_read_of_a_vector_is_undefined_in_every_component() {
    let src = format!("{HEAD}layout(local_size_x = 2) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer A {{ uvec4 a[2]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  uvec4 v = a[i + 1u];\n  b[4u * i] = v.x;\n  b[4u * i + 1u] = v.y;\n  b[4u * i + 2u] = v.z;\n  b[4u * i + 3u] = v.w;\n}}\n");
    let r = run_glsl(
        &src,
        Mode::Base,
        2,
        [1, 1, 1],
        &[vec![0; 8], (10..18).collect()],
    );
    let b = r.buffers.iter().find(|b| b.binding == 0).unwrap();
    assert_eq!(u32s(&b.bytes)[..4], [14, 15, 16, 17]);
    for w in 0..4 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "b[{w}]");
    }
    for w in 4..8 {
        match r.status(b.word_taint(w)) {
            WordStatus::Undefined(c) => assert!(c.contains("byte 32 is outside a"), "b[{w}]: {c}"),
            o => panic!("b[{w}]: {o:?}"),
        }
    }
}

/// An index at or past an inner array's length names no element of that array (SPIR-V §2.2.2: an
/// array type has `Length` elements; `OpAccessChain`, §3.42.8, walks the type hierarchy one index
/// per level), so the access is out of bounds and what it reads undefined — also where its bytes
/// fall inside the buffer, in the next row of the outer array. `m[0][i + 2]` of `uint m[2][4]`:
/// invocations 0 and 1 read `m[0][2]` and `m[0][3]` (12, 13); 2 and 3 index 4 and 5, whose bytes
/// are `m[1][0]` and `m[1][1]`.
#[test]
fn an_index_past_an_inner_arrays_length_is_out_of_bounds_inside_the_buffer_too() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer A {{ uint m[2][4]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  b[i] = m[0][i + 2u];\n}}\n");
    let r = run_glsl(
        &src,
        Mode::Base,
        4,
        [1, 1, 1],
        &[vec![0; 4], (10..18).collect()],
    );
    let b = &r.buffers[0];
    assert_eq!(u32s(&b.bytes)[..2], [12, 13]);
    for w in 0..2 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "b[{w}]");
    }
    for w in 2..4 {
        assert!(
            matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_)),
            "b[{w}]: {:?}",
            r.status(b.word_taint(w))
        );
    }
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("out-of-bounds read of"))
            .count(),
        2,
        "{texts:?}"
    );
}

#[test]
fn a_ballot_in_divergent_control_flow_is_pinned_only_under_maximal() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  if ((gl_LocalInvocationIndex & 1u) == 1u) {{\n    b[gl_LocalInvocationIndex] = subgroupBallot(true).x;\n  }}\n}}\n");
    let max = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(u32s(&max.buffers[0].bytes)[1], 0xaa);
    assert_eq!(max.status(max.buffers[0].word_taint(1)), WordStatus::Exact);
    for mode in [Mode::Sucf, Mode::Base] {
        let r = run_glsl(&src, mode, 8, [1, 1, 1], &[vec![0; 8]]);
        match r.status(r.buffers[0].word_taint(1)) {
            WordStatus::Undefined(c) => assert!(
                c.contains("not pinned down under") && c.contains("the selection at k.comp:"),
                "{c}"
            ),
            o => panic!("{mode}: {o:?}"),
        }
    }
}

// A loop's exit test is a conditional branch with no merge instruction of its own: the divergence
// it makes belongs to the loop (SPIR-V 2.11, a loop construct holds its header's blocks up to the
// merge). Under base and SUCF a ballot in the body after some lanes have left is not pinned down,
// and the chain names the loop (line 11, after the six of HEAD), not some other construct; under
// maximal reconvergence it is the ballot of the lanes still in the loop.
#[test]
fn a_ballot_after_a_divergent_loop_exit_names_the_loop_where_it_is_not_pinned() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  for (uint k = 0u; k < (i & 3u); k++) {{\n    b[i] = subgroupBallot(true).x;\n  }}\n}}\n");
    let max = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 8]]);
    // i & 3 is 3 for lanes 3 and 7: their last iteration (k = 2) has only them.
    assert_eq!(u32s(&max.buffers[0].bytes)[3], 0x88);
    assert_eq!(max.status(max.buffers[0].word_taint(3)), WordStatus::Exact);
    for mode in [Mode::Sucf, Mode::Base] {
        let r = run_glsl(&src, mode, 8, [1, 1, 1], &[vec![0; 8]]);
        match r.status(r.buffers[0].word_taint(3)) {
            WordStatus::Undefined(c) => assert!(
                c.contains("not pinned down under") && c.contains("the loop at k.comp:11"),
                "{c}"
            ),
            o => panic!("{mode}: {o:?}"),
        }
    }
}

#[test]
fn float_division_is_inexact_and_addition_exact() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ float b[]; }};\nvoid main() {{\n  float x = b[0];\n  b[1] = x + 1.0;\n  b[2] = x / 3.0;\n}}\n");
    let k = decode(&glsl(&src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bytes: Vec<u8> = [2.0f32, 0.0, 0.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let r = run_model(
        &k,
        cfg(1, Mode::Base, [1, 1, 1]),
        &[BufferInput {
            set: 0,
            binding: 0,
            bytes,
            ..Default::default()
        }],
        None,
    )
    .unwrap();
    let b = &r.buffers[0];
    assert_eq!(r.status(b.word_taint(1)), WordStatus::Exact);
    assert_eq!(r.status(b.word_taint(2)), WordStatus::Inexact);
}

/// Vulkan, "Precision and Operation of SPIR-V Instructions": by default a device may flush
/// denormalized values to zero (VK_KHR_shader_float_controls, issue 1: floating-point arithmetic is
/// among the instructions that may flush them); SPV_KHR_float_controls, `DenormPreserve`: "Any
/// denormalized value input into a shader or potentially generated by any instruction in a shader
/// must be preserved". So a float result with a denormal operand, or a denormal result, is one a
/// device may compute differently — inexact, lane by lane and component by component — unless the
/// module preserves 32-bit denormals; the same arithmetic on normal values is exact.
#[test]
fn a_denormal_operand_or_result_is_inexact_unless_the_module_preserves_denormals() {
    let body = "layout(local_size_x = 2) in;\nlayout(binding = 0) buffer B { float b[]; };\nlayout(binding = 1) buffer O { float o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationIndex;\n  float x = b[i];\n  o[4u * i] = x + 1.0;\n  vec2 v = vec2(x, b[3]) * b[3];\n  o[4u * i + 1u] = v.x;\n  o[4u * i + 2u] = v.y;\n  o[4u * i + 3u] = b[2] * b[2];\n  o[8u + i] = x * x;\n}\n";
    let preserve = "#extension GL_EXT_spirv_intrinsics : require\nspirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, 32);\n";
    let denormal = f32::from_bits(0x0001_0000);
    assert!(denormal.is_subnormal() && (1e-20f32 * 1e-20f32).is_subnormal());
    let input: Vec<u32> = [denormal, 2.0, 1e-20, 3.0]
        .iter()
        .map(|f| f.to_bits())
        .collect();
    for preserved in [false, true] {
        let src = format!("{HEAD}{}{body}", if preserved { preserve } else { "" });
        let r = run_glsl(
            &src,
            Mode::Base,
            8,
            [1, 1, 1],
            &[input.clone(), vec![0; 10]],
        );
        let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
        let status = |w: usize| r.status(o.word_taint(w));
        let flushable = if preserved {
            WordStatus::Exact
        } else {
            WordStatus::Inexact
        };
        // Lane 0 reads the denormal: its sum and the first component of its product are
        // inexact; the second component (3.0 · 3.0) is exact.
        assert_eq!(
            status(0),
            flushable,
            "preserved {preserved}: denormal + 1.0"
        );
        assert_eq!(
            status(1),
            flushable,
            "preserved {preserved}: denormal · 3.0"
        );
        assert_eq!(
            status(2),
            WordStatus::Exact,
            "preserved {preserved}: 3.0 · 3.0"
        );
        // 1e-20 · 1e-20 is a denormal result, in both lanes.
        assert_eq!(
            status(3),
            flushable,
            "preserved {preserved}: a denormal result"
        );
        assert_eq!(
            status(7),
            flushable,
            "preserved {preserved}: a denormal result"
        );
        // Both operands denormal, the result (0) not: the operands still decide.
        assert_eq!(
            status(8),
            flushable,
            "preserved {preserved}: denormal · denormal"
        );
        assert_eq!(
            status(9),
            WordStatus::Exact,
            "preserved {preserved}: 2.0 · 2.0"
        );
        // Lane 1 reads 2.0: exact throughout.
        for w in 4..7 {
            assert_eq!(
                status(w),
                WordStatus::Exact,
                "preserved {preserved}: word {w}"
            );
        }
        assert_eq!(f32::from_bits(u32s(&o.bytes)[4]), 3.0);
    }
}

/// `DenormPreserve` names one width (SPV_KHR_float_controls: "the denorm execution modes …
/// apply to the width given by the operand"): preserving 64-bit denormals makes a `double` sum
/// with a denormal operand exact and leaves a 16-bit one flushable, and preserving 16-bit ones the
/// other way round; preserving 32-bit ones preserves neither.
#[test]
fn denormals_are_preserved_only_at_the_width_the_execution_mode_names() {
    let body = "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { double d; float16_t h; } b;\nlayout(binding = 1) buffer O { double d; float16_t h; } o;\nvoid main() {\n  o.d = b.d + 1.0lf;\n  o.h = b.h + float16_t(1.0);\n}\n";
    let preserve = |w: u32| {
        format!("#extension GL_EXT_spirv_intrinsics : require\nspirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, {w});\n")
    };
    // the smallest denormals of each width
    let (d, h) = (f64::from_bits(1), 1u16);
    assert!(d.is_subnormal() && !half::f16::from_bits(h).is_normal() && h != 0);
    let input: Vec<u32> = vec![d.to_bits() as u32, (d.to_bits() >> 32) as u32, h as u32, 0];
    for (width, double_exact, half_exact) in [
        (None, false, false),
        (Some(32), false, false),
        (Some(64), true, false),
        (Some(16), false, true),
    ] {
        let src = format!("{HEAD}{}{body}", width.map(preserve).unwrap_or_default());
        let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[input.clone(), vec![0; 4]]);
        let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
        let status = |w: usize| r.status(o.word_taint(w));
        let want = |exact: bool| {
            if exact {
                WordStatus::Exact
            } else {
                WordStatus::Inexact
            }
        };
        assert_eq!(status(0), want(double_exact), "{width:?}: the double");
        assert_eq!(status(2), want(half_exact), "{width:?}: the half");
    }
}

/// The same rule is about floats: SPIR-V's `OpConvertUToF` and `OpConvertFToU` have an integer on
/// one side, and an integer's bits are not a denormalized float's (Vulkan, "Precision and
/// Operation of SPIR-V Instructions": what a device may flush is "denormalized values"). So
/// `float(1u)` and `uint(0.5 · 3.0)` are exact — their integers `1` would read as the denormal
/// `0x00000001` — as is `ldexp(1.5, 1)`, whose exponent is an integer (GLSL.std.450 `Ldexp`),
/// while converting a float that is a denormal to an integer stays inexact (its operand may be
/// flushed).
#[test]
fn a_conversions_integer_side_is_not_a_denormal() {
    let body = "layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B { uint b[]; };\nlayout(binding = 1) buffer O { uint o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationIndex;\n  o[i] = floatBitsToUint(float(b[i]));\n  o[4u + i] = uint(float(b[i]) * 0.5);\n  o[8u + i] = uint(uintBitsToFloat(b[i]));\n  o[12u + i] = floatBitsToUint(ldexp(1.5, int(b[i] & 7u)));\n}\n";
    let input = vec![1u32, 2, 3, 0x0001_0000];
    assert!(input.iter().all(|&x| f32::from_bits(x).is_subnormal()));
    let r = run_glsl(
        &format!("{HEAD}{body}"),
        Mode::Base,
        4,
        [1, 1, 1],
        &[input.clone(), vec![0; 16]],
    );
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let word = |w: usize| u32::from_le_bytes(o.bytes[4 * w..4 * w + 4].try_into().unwrap());
    for (i, &x) in input.iter().enumerate() {
        let exact = |w: usize, want: u32, what: &str| {
            assert_eq!(
                (word(w), r.status(o.word_taint(w))),
                (want, WordStatus::Exact),
                "{what} of {x:#x}"
            );
        };
        exact(i, (x as f32).to_bits(), "float(b[i])");
        exact(4 + i, x / 2, "uint(float(b[i]) * 0.5)");
        // GLSL.std.450 Ldexp's exponent is an integer too (and Ldexp is exact).
        let want = (1.5f32 * 2f32.powi((x & 7) as i32)).to_bits();
        exact(12 + i, want, "ldexp(1.5, int(b[i] & 7u))");
        // The float operand is a denormal: a device may flush it (the result is 0 either way,
        // but the rule is the operand's).
        assert_eq!(
            (word(8 + i), r.status(o.word_taint(8 + i))),
            (0, WordStatus::Inexact),
            "uint(uintBitsToFloat({x:#x}))"
        );
    }
}

/// The CTS's `small_subgroup_reconverge01` and `02` patterns: a loop whose exit depends on
/// `subgroupElect` in non-uniform control flow, then an election after the loop.
/// SPV_KHR_subgroup_uniform_control_flow: a construct entered in subgroup-uniform control flow is
/// left in it (all invocations meet at the merge), so after the loop `subgroupElect` is true for
/// exactly the lowest invocation of each subgroup — under sucf and maximal. Base Vulkan gives no
/// such guarantee once control flow diverged inside the loop.
fn elect_loop_kernel(kind: &str) -> String {
    let body = match kind {
        "do-while" => "    do {\n      c[idx] += 1u;\n    } while (!subgroupElect());\n",
        _ => "    while (true) {\n      atomicAdd(c[0], 1u);\n      if (subgroupElect()) {\n        break;\n      }\n    }\n",
    };
    format!("{HEAD}#extension GL_EXT_subgroup_uniform_control_flow : require\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer C {{ uint c[]; }};\nvoid main() [[subgroup_uniform_control_flow]] {{\n  uint idx = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;\n  if (true) {{\n{body}    b[idx] = subgroupElect() ? 1u : 0u;\n  }}\n}}\n")
}

#[test]
fn a_lost_path_ends_at_the_merge_every_path_reaches() {
    for kind in ["do-while", "while-break"] {
        let src = elect_loop_kernel(kind);
        for mode in [Mode::Sucf, Mode::Maximal] {
            let r = run_glsl(&src, mode, 8, [1, 1, 1], &[vec![7; 16], vec![0; 16]]);
            let b = r.buffers.iter().find(|b| b.binding == 0).unwrap();
            let w = u32s(&b.bytes);
            let want: Vec<u32> = (0..16).map(|i| (i % 8 == 0) as u32).collect();
            assert_eq!(w, want, "{kind} {mode}");
            for i in 0..16 {
                assert_eq!(
                    r.status(b.word_taint(i)),
                    WordStatus::Exact,
                    "{kind} {mode} b[{i}]"
                );
            }
            if kind == "do-while" {
                let c = r.buffers.iter().find(|b| b.binding == 1).unwrap();
                if mode == Mode::Sucf {
                    // Under sucf how often each invocation went round the loop is not pinned
                    // down: c stays undefined, the path after the loop does not.
                    assert!(
                        (0..16)
                            .any(|i| matches!(r.status(c.word_taint(i)), WordStatus::Undefined(_))),
                        "{kind} {mode}"
                    );
                } else {
                    // Maximal reconvergence keeps the invocations that go round again together:
                    // each pass elects the lowest of them, so invocation k goes round k + 1 times.
                    let want: Vec<u32> = (0..16).map(|i| i % 8 + 1).collect();
                    assert_eq!(u32s(&c.bytes), want, "{kind} {mode}");
                }
            }
        }
        let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![7; 16], vec![0; 16]]);
        let b = r.buffers.iter().find(|b| b.binding == 0).unwrap();
        match r.status(b.word_taint(0)) {
            WordStatus::Undefined(c) => assert!(
                c.contains("subgroupElect") && c.contains("not pinned down under base"),
                "{kind}: {c}"
            ),
            o => panic!("{kind} base: {o:?}"),
        }
    }
}

#[test]
fn a_value_chosen_on_a_lost_path_stays_undefined_after_the_merge() {
    // The elect inside the branch is not pinned down under base (the branch diverged), so which
    // way `x` was set is not either — though the path after the `if` is.
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint x = 0u;\n  if (gl_SubgroupInvocationID < 4u) {{\n    if (subgroupElect()) {{\n      x = 1u;\n    }} else {{\n      x = 2u;\n    }}\n  }}\n  b[gl_SubgroupInvocationID] = x;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![9; 8]]);
    let b = &r.buffers[0];
    for i in 0..4 {
        match r.status(b.word_taint(i)) {
            WordStatus::Undefined(c) => assert!(c.contains("subgroupElect"), "{c}"),
            o => panic!("b[{i}]: {o:?}"),
        }
    }
    assert_eq!(u32s(&b.bytes)[4..], [0, 0, 0, 0]);
    for i in 4..8 {
        assert_eq!(r.status(b.word_taint(i)), WordStatus::Exact, "b[{i}]");
    }
}

#[test]
fn buffer_atomics_from_workgroups_on_many_threads_lose_no_update() {
    // Every invocation adds 1 (and 2 to the 64-bit counter): the final values are the invocation
    // count, whatever order the workgroups ran in (an atomic read-modify-write is indivisible).
    let src = format!("{HEAD}#extension GL_EXT_shader_atomic_int64 : require\n#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\nlayout(local_size_x = 64) in;\nlayout(binding = 0) buffer B {{ uint n; uint pad; uint64_t m; }};\nvoid main() {{\n  atomicAdd(n, 1u);\n  atomicAdd(m, uint64_t(2));\n}}\n");
    let r = run_glsl(&src, Mode::Base, 32, [256, 1, 1], &[vec![0; 4]]);
    let w = u32s(&r.buffers[0].bytes);
    assert_eq!(w[0], 256 * 64);
    assert_eq!(w[2] as u64 | (w[3] as u64) << 32, 2 * 256 * 64);
    assert_eq!(r.status(r.buffers[0].word_taint(0)), WordStatus::Exact);
}

#[test]
fn a_local_size_whose_product_overflows_is_an_error_not_a_panic() {
    // Found by the `spirv` fuzz target: LocalSize operands near 2^32 multiplied in u64.
    let bytes = include_bytes!("fuzz-regressions/spirv-local-size-overflow.spv");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(decode(&words, &DecodeOptions::default()).is_err());
}

#[test]
fn an_ext_inst_import_without_a_name_is_an_error_not_a_panic() {
    // Found by the `spirv` fuzz target (2026-11-27): an `OpExtInstImport` of word count 1 read
    // its name past its end. SPIR-V 3.32.21: OpExtInstImport has a Result and a Name.
    let bytes = include_bytes!("fuzz-regressions/spirv-ext-inst-import-without-name.spv");
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    assert!(decode(&words, &DecodeOptions::default()).is_err());
}

#[test]
fn a_block_member_offset_near_4_gib_decodes_without_overflow() {
    // Found by the `spirv` fuzz target (2026-11-27): a storage block whose member lies at byte
    // 4,294,967,291 made the decoder compute the variable's taint units as `words * 4` in 32 bits
    // (an overflow; a panic with overflow checks). Memory bound from outside has no units of its
    // own.
    let bytes = include_bytes!("fuzz-regressions/spirv-block-member-offset-near-4gib.spv");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // Past the block, the decoder meets the fuzzed module's other defect and names it.
    let e = decode(&words, &DecodeOptions::default()).expect_err("a malformed module");
    assert!(e.to_string().contains("is not a type"), "{e}");
}

// Vulkan, "Validation Rules within a Module": a variable in the Uniform or StorageBuffer storage
// class is a struct or an array of structs (VUID-StandaloneSpirv-Uniform-06807), in the
// PushConstant class a struct (VUID-StandaloneSpirv-PushConstant-06808), decorated Block (or
// BufferBlock in the Uniform class: VUID-StandaloneSpirv-PushConstant-06675, -Uniform-06676).
// A module that breaks it is refused naming the rule (it panicked on a layout check before).
#[test]
fn a_buffer_variable_that_is_not_a_block_is_refused_naming_the_rule() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let module = |storage: &str, ty: &str, deco: &str| {
        format!(
            "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
             OpExecutionMode %main LocalSize 1 1 1\nOpName %v \"v\"\n{deco}\
             OpDecorate %arr ArrayStride 4\nOpMemberDecorate %s 0 Offset 0\n\
             %void = OpTypeVoid\n%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n\
             %u2 = OpConstant %uint 2\n%arr = OpTypeArray %uint %u2\n%s = OpTypeStruct %uint\n\
             %sarr = OpTypeArray %s %u2\n%p = OpTypePointer {storage} {ty}\n%v = OpVariable %p {storage}\n\
             %main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    let decode_text = |text: &str| {
        let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
        decode(&m.words, &DecodeOptions::default())
    };
    let binding = "OpDecorate %v DescriptorSet 0\nOpDecorate %v Binding 0\n";
    let block = "OpDecorate %s Block\n";
    for (storage, ty, deco, rule) in [
        (
            "StorageBuffer",
            "%arr",
            binding.to_string(),
            "Uniform-06807",
        ),
        (
            "StorageBuffer",
            "%s",
            binding.to_string(),
            "PushConstant-06675",
        ),
        ("Uniform", "%sarr", binding.to_string(), "Uniform-06676"),
        ("Uniform", "%uint", binding.to_string(), "Uniform-06807"),
        ("PushConstant", "%s", String::new(), "PushConstant-06675"),
        (
            "PushConstant",
            "%sarr",
            block.to_string(),
            "PushConstant-06808",
        ),
    ] {
        let e = decode_text(&module(storage, ty, &deco))
            .expect_err(&format!("{storage} {ty} with {deco:?}"));
        let text = e.to_string();
        assert!(
            text.contains(&format!("VUID-StandaloneSpirv-{rule}"))
                && text.contains("variable v:")
                && text.contains(&format!("the {storage} storage class")),
            "{storage} {ty}: {text}"
        );
    }
    // the same variables as blocks decode (an array of blocks is an array of descriptors)
    for (storage, ty, deco) in [
        ("StorageBuffer", "%s", format!("{binding}{block}")),
        ("StorageBuffer", "%sarr", format!("{binding}{block}")),
        (
            "Uniform",
            "%sarr",
            format!("{binding}OpDecorate %s BufferBlock\n"),
        ),
        ("PushConstant", "%s", block.to_string()),
    ] {
        let r = decode_text(&module(storage, ty, &deco));
        assert!(
            r.is_ok(),
            "{storage} {ty}: {:?}",
            r.err().map(|e| e.to_string())
        );
    }
}

// Vulkan, "Offset and Stride Assignment": variables in the PushConstant, StorageBuffer and
// Uniform storage classes "must be explicitly laid out using the Offset, ArrayStride, and
// MatrixStride decorations"; VUID-StandaloneSpirv-OpTypeRuntimeArray-04680: a runtime array is
// only a struct's last member. A block that breaks them is refused naming what is missing (the
// model guessed a layout the device need not share, or panicked); so is a member past 4 GiB.
#[test]
fn a_block_without_its_offsets_and_strides_or_with_overlapping_ones_is_refused_naming_the_rule() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let module = |deco: &str, members: &str| {
        format!(
            "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
             OpExecutionMode %main LocalSize 1 1 1\nOpName %s \"S\"\nOpDecorate %v DescriptorSet 0\n\
             OpDecorate %v Binding 0\nOpDecorate %s Block\n{deco}\n\
             %void = OpTypeVoid\n%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n\
             %float = OpTypeFloat 32\n%v4 = OpTypeVector %float 4\n%m4 = OpTypeMatrix %v4 4\n\
             %v3 = OpTypeVector %float 3\n%m3 = OpTypeMatrix %v3 3\n\
             %u4 = OpConstant %uint 4\n%rt = OpTypeRuntimeArray %uint\n%arr = OpTypeArray %uint %u4\n\
             %s = OpTypeStruct {members}\n%p = OpTypePointer StorageBuffer %s\n\
             %v = OpVariable %p StorageBuffer\n\
             %main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    let decode_text = |text: &str| {
        let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
        decode(&m.words, &DecodeOptions::default())
    };
    let off = |k: u32, o: u32| format!("OpMemberDecorate %s {k} Offset {o}\n");
    for (deco, members, says) in [
        (String::new(), "%uint", "member 0 of struct S has no Offset"),
        (
            off(0, 0),
            "%uint %uint",
            "member 1 of struct S has no Offset",
        ),
        (
            off(0, 0),
            "%rt",
            "member 0 of struct S holds an array without ArrayStride",
        ),
        (
            off(0, 0),
            "%arr",
            "member 0 of struct S holds an array without ArrayStride",
        ),
        (
            format!("{}{}OpMemberDecorate %s 1 ColMajor", off(0, 0), off(1, 16)),
            "%uint %m4",
            "member 1 of struct S holds a matrix without MatrixStride",
        ),
        (
            format!("{}{}OpDecorate %rt ArrayStride 4", off(0, 0), off(1, 4)),
            "%rt %uint",
            "member 0 of struct S is a runtime array but not the struct's last member",
        ),
        (
            off(0, 4294967292),
            "%uint",
            "member 0 of a struct ends past 4 GiB",
        ),
        // SPIR-V, Validation Rules for Shader Capabilities: "specifying overlap is invalid",
        // "it is invalid for two members of a given structure to be assigned the same Offset",
        // "Each ArrayStride and MatrixStride must be greater than zero".
        (
            format!("{}{}", off(0, 0), off(1, 0)),
            "%uint %uint",
            "member 0 of struct S and member 1 of struct S are both at Offset 0",
        ),
        (
            format!("{}{}OpMemberName %s 1 \"count\"", off(0, 0), off(1, 8)),
            "%v4 %uint",
            "member 1 (count) of struct S at Offset 8 overlaps member 0 of struct S, which takes bytes 0..16",
        ),
        (
            format!("{}{}", off(0, 16), off(1, 4)),
            "%uint %v4",
            "member 0 of struct S at Offset 16 overlaps member 1 of struct S, which takes bytes 4..20",
        ),
        (
            format!(
                "{}OpMemberDecorate %s 0 ColMajor\nOpMemberDecorate %s 0 MatrixStride 16\n{}",
                off(0, 0),
                off(1, 32)
            ),
            "%m3 %uint",
            "member 1 of struct S at Offset 32 overlaps member 0 of struct S, which takes bytes 0..44",
        ),
        (
            format!("{}OpDecorate %arr ArrayStride 2", off(0, 0)),
            "%arr",
            "member 0 of struct S holds an array of 4-byte elements with ArrayStride 2",
        ),
        (
            format!("{}OpDecorate %rt ArrayStride 0", off(0, 0)),
            "%rt",
            "member 0 of struct S holds an array of 4-byte elements with ArrayStride 0",
        ),
        (
            format!("{}OpMemberDecorate %s 0 ColMajor\nOpMemberDecorate %s 0 MatrixStride 8", off(0, 0)),
            "%m4",
            "member 0 of struct S holds a matrix of 16-byte columns with MatrixStride 8",
        ),
        (
            format!("{}OpMemberDecorate %s 0 RowMajor\nOpMemberDecorate %s 0 MatrixStride 12", off(0, 0)),
            "%m4",
            "member 0 of struct S holds a matrix of 16-byte rows with MatrixStride 12",
        ),
    ] {
        let e = decode_text(&module(&deco, members)).expect_err(&format!("{members} {deco:?}"));
        assert!(e.to_string().contains(says), "{members}: {e}");
    }
    // laid out in full, the same block decodes
    let full = format!(
        "{}{}OpMemberDecorate %s 1 ColMajor\nOpMemberDecorate %s 1 MatrixStride 16\n{}OpDecorate %rt ArrayStride 4",
        off(0, 0),
        off(1, 16),
        off(2, 80)
    );
    let r = decode_text(&module(&full, "%uint %m4 %rt"));
    assert!(r.is_ok(), "{:?}", r.err().map(|e| e.to_string()));
    // members need not be declared in the order of their offsets, and may touch
    let touching = format!("{}{}", off(0, 16), off(1, 0));
    let r = decode_text(&module(&touching, "%uint %v4"));
    assert!(r.is_ok(), "{:?}", r.err().map(|e| e.to_string()));
}

#[test]
fn a_call_with_more_arguments_than_parameters_is_an_error_not_a_panic() {
    // Found by the `spirv` fuzz target (2026-11-27): an OpFunctionCall passing an argument to a
    // function without parameters; the run indexed the callee's parameters past their end.
    // SPIR-V 3.52.x, OpFunctionCall: "Type of Argument N must match Parameter N's type" — one
    // argument per parameter.
    let bytes =
        include_bytes!("fuzz-regressions/spirv-call-with-more-arguments-than-parameters.spv");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let e = decode(&words, &DecodeOptions::default()).expect_err("a call of the wrong arity");
    assert!(e.to_string().contains("arguments: the function has"), "{e}");
}

#[test]
fn workgroup_counts_whose_product_overflows_are_an_error_not_a_panic() {
    let k = decode(&examples::lane_ids(), &DecodeOptions::default()).unwrap();
    let e = run_model(
        &k,
        cfg(4, Mode::Base, [u32::MAX, u32::MAX, u32::MAX]),
        &[BufferInput {
            set: 0,
            binding: 0,
            bytes: vec![0; 64],
            ..Default::default()
        }],
        None,
    )
    .err()
    .expect("too many invocations");
    assert!(e.to_string().contains("at most 2^32"), "{e}");
}

// GL_KHR_shader_subgroup, 8.19 (inclusive and exclusive scans): lane k's inclusive scan combines
// the active lanes up to k, its exclusive scan those before k — so one undefined input in lane 5
// makes the inclusive scan undefined from lane 5 on and the exclusive scan from lane 6 on, and no
// lane before (issue 19, rule 6).
#[test]
fn an_undefined_input_reaches_a_scan_only_from_its_own_lane_on() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint x;\n  uint i = gl_SubgroupInvocationID;\n  if (i != 5u) {{ x = i; }}\n  b[i] = subgroupInclusiveAdd(x);\n  b[8u + i] = subgroupExclusiveAdd(x);\n  b[16u + i] = subgroupAdd(x);\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 24]]);
    let b = &r.buffers[0];
    let undefined = |w: usize| matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_));
    for l in 0..8 {
        assert_eq!(undefined(l), l >= 5, "inclusive lane {l}");
        assert_eq!(undefined(8 + l), l >= 6, "exclusive lane {l}");
        assert!(undefined(16 + l), "reduction lane {l}");
    }
    let v = u32s(&b.bytes);
    assert_eq!(v[..5], [0, 1, 3, 6, 10]);
    assert_eq!(v[8..14], [0, 0, 1, 3, 6, 10]);
}

// NonSemantic.Shader.DebugInfo.100 (glslang -gV, DXC): its DebugSource instructions stand at
// module scope, which the SPIR-V parser refuses unless they are set aside, and its DebugLine gives
// the source line of what follows, like OpLine (issue 19, rule 8: findings at the user's lines).
#[test]
fn nonsemantic_debug_lines_name_the_source_line() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = include_str!("fixtures/debuginfo.spvasm");
    // The same with another instruction of the set (DebugNoScope) between the line and the store:
    // only DebugLine and DebugNoLine move the line.
    let scoped = text.replace(
        "OpStore %10 %8",
        "%nos = OpExtInst %void %2 DebugNoScope\nOpStore %10 %8",
    );
    for text in [text, scoped.as_str()] {
        let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
        let k = decode(&m.words, &DecodeOptions::default()).unwrap();
        let buf = BufferInput {
            set: 0,
            binding: 0,
            bytes: vec![0; 16],
            ..Default::default()
        };
        let r = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &[buf], None).unwrap();
        let race = r
            .groups
            .iter()
            .map(|g| r.group_text(g))
            .find(|(why, _)| why.starts_with("race on"))
            .expect("the four invocations race on data[0]");
        assert!(race.0.contains("wrote at k.comp:13"), "{race:?}");
        assert!(
            race.1[0].starts_with("buf.data[0] by invocations"),
            "{race:?}"
        );
    }
}

// SPIR-V 2.2.2 (an undefined value is some value of its type) and GL_KHR_shader_subgroup's tangles:
// where another allowed execution takes the other way at a branch that is not pinned down, its
// stores may write elements this execution never wrote — they must not be reported as holding
// their old, defined value (issue 19, rule 6: "one path is not all paths"). Under maximal
// reconvergence the branch is pinned and every element is defined.
#[test]
fn what_the_path_not_taken_would_write_is_not_reported_defined() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_SubgroupInvocationID;\n  if (i < 4u) {{\n    if (subgroupElect()) {{ b[i] = 1u; }} else {{ b[8u + i] = 2u; }}\n  }}\n}}\n");
    let base = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 16]]);
    let b = &base.buffers[0];
    let defined = |w: usize| matches!(base.status(b.word_taint(w)), WordStatus::Exact);
    // The model's execution elects lane 0: b[0] and b[9..12] are written on a lost path; b[1..4]
    // and b[8] are what the other ways would write.
    for w in [1, 2, 3, 8] {
        assert!(!defined(w), "b[{w}]: {:?}", base.status(b.word_taint(w)));
    }
    let max = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 16]]);
    for w in 0..16 {
        assert_eq!(
            max.status(max.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "b[{w}]"
        );
    }
}

// SPIR-V 2.2.2: an undefined operand is some value of its type; where the other operand decides
// the result for every such value (`x & 0`, `0 > x` unsigned, `x * 0`, `x >= 0` unsigned), the
// result is defined.
#[test]
fn an_undefined_operand_that_cannot_change_the_result_leaves_it_defined() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint x;\n  uint zero = b[8];\n  b[0] = x & zero;\n  b[1] = (zero > x) ? 1u : 2u;\n  b[2] = x * zero;\n  b[3] = (x >= zero) ? 3u : 4u;\n  b[4] = x + zero;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 1, [1, 1, 1], &[vec![0; 9]]);
    let b = &r.buffers[0];
    assert_eq!(u32s(&b.bytes)[..4], [0, 2, 0, 3]);
    for w in 0..4 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "b[{w}]");
    }
    assert!(matches!(
        r.status(b.word_taint(4)),
        WordStatus::Undefined(_)
    ));
}

// SPIR-V assembly names its ids, and a report must name them as written (SPIR-V 2.2.2: "OpUndef
// ... its value is undefined"; the chain ends at that instruction): `%74 = OpUndef` is reported as
// %74, not as the number an assembler that renumbers ids would give it, and an instruction with
// neither a source line nor a result id (`OpStore`, `OpSelectionMerge`) by the label of its block.
#[test]
fn assembly_ids_and_blocks_are_named_as_written_in_an_undefined_chain() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %B Block
OpMemberDecorate %B 0 Offset 0
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%f = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%B = OpTypeStruct %uint
%pB = OpTypePointer StorageBuffer %B
%pu = OpTypePointer StorageBuffer %uint
%buf = OpVariable %pB StorageBuffer
%u0 = OpConstant %uint 0
%u7 = OpConstant %uint 7
%74 = OpUndef %bool
%main = OpFunction %void None %f
%40 = OpLabel
OpSelectionMerge %42 None
OpBranchConditional %74 %41 %42
%41 = OpLabel
%p = OpAccessChain %pu %buf %u0
OpStore %p %u7
OpBranch %42
%42 = OpLabel
OpReturn
OpFunctionEnd
";
    let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let buf = BufferInput {
        set: 0,
        binding: 0,
        bytes: vec![0; 4],
        ..Default::default()
    };
    let r = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &[buf], None).unwrap();
    let t = r.buffers[0].word_taint(0);
    assert!(
        t.is_undefined(),
        "the store depends on the undefined branch"
    );
    let chain = r.chain(t);
    assert!(chain.ends_with("%74 = OpUndef (module scope)"), "{chain}");
    assert!(chain.contains("the selection at block %40"), "{chain}");
}

// SPIR-V 1.6, OpUndef: "each consumption of Result <id> yields an arbitrary, possibly different
// bit pattern" — an undefined value is *some* value, so a branch on one goes one of its two ways
// (neither SPIR-V nor Vulkan makes the branch itself undefined behaviour), and what the invocation
// computes is defined wherever every way gives the same value.

const UNDEF_HEAD: &str =
    "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\n";

/// Bytes a buffer holds undefined when the dispatch starts (an earlier dispatch left them so:
/// `BufferInput::undefined`) stay undefined through a load from a buffer no invocation writes —
/// the read-only fast path carries each word's taint into the register it loads, even into a
/// register that held only defined values before; the words beside them stay exact.
#[test]
fn an_undefined_word_of_a_buffer_no_invocation_writes_is_undefined_where_it_is_loaded() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
               layout(binding = 0) readonly buffer A { uint a[]; };\n\
               layout(binding = 1) buffer O { uint o[]; };\n\
               void main() { uint i = gl_LocalInvocationIndex; o[i] = a[i]; }\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = [
        BufferInput {
            bytes: bytes_u32(&[10, 11, 12, 13]),
            undefined: vec![(8..12, "left undefined by an earlier dispatch".into())],
            ..Default::default()
        },
        BufferInput {
            binding: 1,
            bytes: bytes_u32(&[0; 4]),
            ..Default::default()
        },
    ];
    let r = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &bufs, None).unwrap();
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    for w in [0, 1, 3] {
        assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "o[{w}]");
    }
    match r.status(o.word_taint(2)) {
        WordStatus::Undefined(c) => {
            assert!(c.contains("left undefined by an earlier dispatch"), "{c}")
        }
        s => panic!("o[2]: {s:?}"),
    }
}

/// Exploring runs the dispatch again once per way the branches on undefined values may go; a
/// dispatch with no such branch has nothing to explore and runs once (its values are already
/// pinned down by the one run), so it reports nothing explored.
#[test]
fn a_dispatch_without_a_branch_on_an_undefined_value_is_not_explored() {
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint i = gl_LocalInvocationIndex;\n  if (i > 2u) {{ b[i] = i; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(r.explored, None);
    assert_eq!(u32s(&r.buffers[0].bytes), [0, 0, 0, 3, 4, 5, 6, 7]);
    // The condition's register has held an undefined value's taint (`u` is never written), but
    // the select picks `i` in every lane: each lane's condition is defined, so no path is lost
    // and nothing is explored.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  uint v = i < 100u ? i : u;\n  if (v > 2u) {{ b[i] = v; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(r.explored, None);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(u32s(&r.buffers[0].bytes), [0, 0, 0, 3, 4, 5, 6, 7]);
    for w in 0..8 {
        assert_eq!(r.status(r.buffers[0].word_taint(w)), WordStatus::Exact);
    }
}

/// Runs `src` (subgroups of 4, one workgroup, an 8-word buffer) and checks that exploring did not
/// run and that word 0 stays undefined.
fn assert_paths_stay_lost(src: &str) {
    let r = run_glsl(src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(r.explored, None);
    undefined_chain(&r, 0);
}

fn undefined_chain(r: &ModelRun, word: usize) -> String {
    match r.status(r.buffers[0].word_taint(word)) {
        WordStatus::Undefined(chain) => chain,
        other => panic!("word {word}: {other:?}"),
    }
}

// GLSL.std.450 leaves a result undefined outside a function's domain — Sqrt "Result is undefined
// if x < 0", Log "if x <= 0", Asin "if |x| > 1", FClamp and UClamp "if minVal > maxVal" — and
// only there: each lane is judged on its own operands, so a lane inside the domain keeps its
// defined result beside one outside it, and the undefined one names its rule.
#[test]
fn a_glsl_std_450_result_outside_the_functions_domain_is_undefined_in_that_lane_only() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint l = gl_LocalInvocationIndex;\n  float x = 1.5 - float(l);\n  b[l * 5u] = floatBitsToUint(sqrt(x));\n  b[l * 5u + 1u] = floatBitsToUint(log(x + 1.0));\n  b[l * 5u + 2u] = floatBitsToUint(clamp(x, 0.0, abs(float(l) - 1.0) - 0.5));\n  b[l * 5u + 3u] = clamp(l, 2u, 4u - l);\n  b[l * 5u + 4u] = floatBitsToUint(asin(x));\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 4, [1, 1, 1], &[vec![0; 20]]);
    // per word of a lane: the lanes outside the domain (x = 1.5, 0.5, -0.5, -1.5) and the rule
    let rules: [(&[usize], &str); 5] = [
        (&[2, 3], "sqrt of x < 0"),
        (&[3], "log of x <= 0"),
        (&[1], "clamp with minVal > maxVal"),
        (&[3], "clamp with minVal > maxVal"),
        (&[0, 3], "asin/acos of |x| > 1"),
    ];
    let w = u32s(&r.buffers[0].bytes);
    for l in 0..4usize {
        for (k, (outside, rule)) in rules.iter().enumerate() {
            let at = l * 5 + k;
            match r.status(r.buffers[0].word_taint(at)) {
                WordStatus::Undefined(chain) => {
                    assert!(outside.contains(&l), "lane {l} word {k}: {chain}");
                    assert!(chain.contains(rule), "lane {l} word {k}: {chain}");
                }
                s => assert!(!outside.contains(&l), "lane {l} word {k}: {s:?}"),
            }
        }
    }
    // the defined clamps, exactly: x clamped to [0, 0.5] in lane 0, to [0, 1.5] in lanes 2 and 3
    // (x = -0.5, -1.5 → 0); l clamped to [2, 4 - l] in lanes 0..2
    let f = |at: usize| f32::from_bits(w[at]);
    assert_eq!([f(2), f(12), f(17)], [0.5, 0.0, 0.0]);
    assert_eq!([w[3], w[8], w[13]], [2, 2, 2]);
}

#[test]
fn a_branch_on_an_undefined_value_goes_one_way_so_what_every_way_computes_alike_is_defined() {
    // `u` is never written: its value is undefined; both ways store 3i.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ b[i] = i * 3u; }} else {{ b[i] = i + i + i; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [0, 3, 6, 9, 12, 15, 18, 21]);
    for w in 0..8 {
        assert_eq!(
            r.status(r.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "word {w}"
        );
    }
    let e = r.explored.expect("explored");
    assert_eq!((e.branches, e.ways, e.units), (1, 2, 8));
    // The branch is still reported (a read of a variable never written), with what exploring found.
    let text = r.finding_text(&r.findings[0]);
    assert!(
        text.contains("2 runs; at most 1 such branch per invocation): 8 units it left undefined hold the same value on every way, so they are defined"),
        "{text}"
    );
}

#[test]
fn a_branch_on_an_undefined_value_whose_ways_store_different_values_leaves_them_undefined() {
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ b[i] = 1u; }} else {{ b[i] = 2u; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    for w in 0..8 {
        let chain = undefined_chain(&r, w);
        assert!(
            chain.contains("path depends on an undefined value"),
            "{chain}"
        );
    }
    let e = r.explored.expect("explored");
    assert_eq!((e.ways, e.units), (2, 0));
}

// Exploring decides unit by unit (docs/interpreter.md, "Every way of a branch on an undefined
// value"): each invocation stores on both ways one element that the ways give different values
// (`b[2i]`: 1 or 2) and one they give the same (`b[2i + 1] = i`). The first are undefined, the
// second defined with their value — a unit is compared on its own bytes, not with its neighbours'.
#[test]
fn exploring_makes_defined_each_unit_every_way_leaves_alike_and_no_other() {
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ b[2u * i] = 1u; b[2u * i + 1u] = i; }} else {{ b[2u * i] = 2u; b[2u * i + 1u] = i; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 16]]);
    let words = u32s(&r.buffers[0].bytes);
    for i in 0..8 {
        let chain = undefined_chain(&r, 2 * i);
        assert!(
            chain.contains("path depends on an undefined value"),
            "b[{}]: {chain}",
            2 * i
        );
        assert_eq!(
            r.status(r.buffers[0].word_taint(2 * i + 1)),
            WordStatus::Exact,
            "b[{}]",
            2 * i + 1
        );
        assert_eq!(words[2 * i + 1], i as u32, "b[{}]", 2 * i + 1);
    }
    let e = r.explored.expect("explored");
    assert_eq!((e.ways, e.units), (2, 8));
}

#[test]
fn branches_on_undefined_values_are_not_explored_where_invocations_may_then_influence_one_another()
{
    // After the branch a barrier, a subgroup operation or an atomic lets one invocation's way
    // change what another computes: one sequence of ways for all invocations would not cover the
    // mixed ones, so the paths stay lost.
    for after in [
        "barrier();",
        "uint s = subgroupAdd(1u); b[i] += s - s;",
        "atomicAdd(b[0], 0u);",
    ] {
        let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ b[i] = i * 3u; }} else {{ b[i] = i + i + i; }}\n  {after}\n}}\n");
        let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
        assert_eq!(r.explored, None, "{after}");
        assert!(
            undefined_chain(&r, 1).contains("path depends on an undefined value"),
            "{after}"
        );
    }
}

#[test]
fn what_invocations_shared_before_a_branch_on_an_undefined_value_does_not_stop_exploring() {
    // A barrier and a subgroup operation before the branch: every way runs them alike.
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nshared uint t[8];\nvoid main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  t[i] = subgroupAdd(i);\n  barrier();\n  uint x = t[(i + 1u) % 8u];\n  if (u > 5u) {{ b[i] = x * 2u; }} else {{ b[i] = x + x; }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    // subgroups of 4: lanes 0-3 add to 6, lanes 4-7 to 22; b[i] = 2 t[i + 1]
    assert_eq!(u32s(&r.buffers[0].bytes), [12, 12, 12, 44, 44, 44, 44, 12]);
    for w in 0..8 {
        assert_eq!(
            r.status(r.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "word {w}"
        );
    }
    assert_eq!(r.explored.map(|e| e.units), Some(8));
}

#[test]
fn more_branches_on_undefined_values_than_the_bound_leave_the_paths_lost() {
    // Ten such branches per invocation: 2^10 ways, over explore's bound of 2^6.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint x = 0u;\n  for (int j = 0; j < 10; j++) {{\n    uint u;\n    if (u > 5u) {{ x += 1u; }} else {{ x = x + 1u; }}\n  }}\n  b[gl_LocalInvocationIndex] = x;\n}}\n");
    assert_paths_stay_lost(&src);
}

#[test]
fn a_way_that_writes_out_of_bounds_leaves_the_paths_lost() {
    // The way not taken first writes past the buffer: undefined behaviour on that way, so
    // nothing is made defined.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ b[i + 100u] = 1u; b[i] = 7u; }} else {{ b[i] = 7u; }}\n}}\n");
    assert_paths_stay_lost(&src);
}

#[test]
fn a_way_that_never_ends_leaves_the_paths_lost_and_the_run_ends() {
    // The way the first run does not take loops forever: that way stops at its share of the
    // exploring budget, nothing is made defined, and the run itself ends.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  uint x = 1u;\n  if (u > 5u) {{ while (x > 0u) {{ x = x + 2u; }} }}\n  b[i] = x;\n}}\n");
    assert_paths_stay_lost(&src);
}

#[test]
fn a_loop_that_never_ends_on_a_way_an_undefined_value_chose_says_so() {
    // The model follows the way the undefined value's bits say (here into the loop); another
    // execution the spec allows does not enter it, so the stop names the branch.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint x = 1u;\n  if (u <= 5u) {{ while (x > 0u) {{ x = x | 1u; }} }}\n  b[gl_LocalInvocationIndex] = x;\n}}\n");
    let why = stop_reason(&src, cfg(4, Mode::Base, [1, 1, 1]));
    assert!(
        why.contains("got here on a path a branch on an undefined value chose (at k.comp:7)"),
        "{why}"
    );
}

/// Why a run of the GLSL `src` (one buffer of 32 bytes at binding 0) under `c` stopped: the
/// reason of its `SpirvError::Stopped`; any other outcome fails the test.
fn stop_reason(src: &str, c: RunConfig) -> String {
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = [BufferInput {
        set: 0,
        binding: 0,
        bytes: vec![0; 32],
        ..Default::default()
    }];
    match run_model(&k, c, &bufs, None) {
        Err(SpirvError::Stopped { why, .. }) => why,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("the loop ended"),
    }
}

/// A loop whose state changes on every iteration and never ends (`x` odd, `x + 2` odd again:
/// never 0) is not caught by the unchanged-state rule; `RunConfig::max_steps` (`--max-steps`)
/// bounds the lane-instructions a workgroup may execute, and the run stops naming the workgroup
/// and the bound instead of hanging (docs/interpreter.md, "Forward progress").
#[test]
fn a_loop_that_never_ends_stops_at_the_step_bound_naming_the_workgroup() {
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint x = 1u;\n  while (x > 0u) {{ x = x + 2u; }}\n  b[gl_LocalInvocationIndex] = x;\n}}\n");
    let mut c = cfg(8, Mode::Base, [1, 1, 1]);
    c.max_steps = 100_000;
    let why = stop_reason(&src, c);
    assert!(
        why.contains("executed more than 100000 lane-instructions (--max-steps)")
            && why.contains("workgroup (0, 0, 0)"),
        "{why}"
    );
}

#[test]
fn a_select_between_equal_values_is_that_value_whatever_the_condition() {
    // SPIR-V OpSelect: "Result is Object 1 if Condition is true, otherwise Object 2" — with an
    // undefined condition (some value, OpUndef) it is one of the two; where both hold the same
    // defined value, that value. `mix(x, y, bool)` is OpSelect.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  b[i] = mix(i * 2u, i + i, u > 5u) + mix(0u, 1u, u > 5u) * 0u + mix(i, 100u, u > 5u) - mix(i, 100u, u > 5u);\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    // The first select is 2i whatever the condition; the second is multiplied by 0 (a deciding
    // operand); the last two differ between their objects: undefined (x − x of an undefined x is
    // not pinned down either).
    undefined_chain(&r, 0);
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  b[i] = mix(i * 2u, i + i, u > 5u) + mix(0u, 1u, u > 5u) * 0u;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [0, 2, 4, 6, 8, 10, 12, 14]);
    for w in 0..8 {
        assert_eq!(
            r.status(r.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "word {w}"
        );
    }
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  b[i] = mix(i, i + 1u, u > 5u);\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    for w in 0..8 {
        assert!(undefined_chain(&r, w).contains("never written"));
    }
    // The object the condition does not pick decides too, lane by lane: `v` is 0 in the even
    // lanes and never written in the odd ones, the other object 0 — the result is 0 where `v` is,
    // and undefined where `v` may be anything; with the objects either way round.
    for sel in ["mix(0u, v, u > 5u)", "mix(v, 0u, u < 5u)"] {
        let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  uint v;\n  if (i % 2u == 0u) {{ v = 0u; }}\n  b[i] = {sel};\n}}\n");
        let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
        for w in 0..8 {
            if w % 2 == 0 {
                let s = r.status(r.buffers[0].word_taint(w));
                assert_eq!(s, WordStatus::Exact, "{sel} word {w}");
                assert_eq!(u32s(&r.buffers[0].bytes)[w], 0, "{sel} word {w}");
            } else {
                assert!(
                    undefined_chain(&r, w).contains("never written"),
                    "{sel} word {w}"
                );
            }
        }
    }
}

#[test]
fn what_a_selection_header_stores_before_its_branch_is_no_path_of_it() {
    // `i` is stored in the block that ends with the branch on `u`, before the branch: the same on
    // every path, so an invocation that loses its path there keeps `i` defined after the merge
    // (the barrier after the branch keeps exploring out of this). Storing to `i` inside the
    // branch makes it the path's (the lane's own variable the path may have left different).
    for (body, defined) in [
        ("if (u > 5u) { t[i] = 1u; }", true),
        ("if (u > 5u) { i = i + 0u; }", false),
    ] {
        let src = format!("{UNDEF_HEAD}shared uint t[8];\nvoid main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  {body}\n  barrier();\n  b[i] = 7u;\n}}\n");
        let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
        assert_eq!(r.explored, None, "{body}");
        for w in 0..8 {
            let exact = r.status(r.buffers[0].word_taint(w)) == WordStatus::Exact;
            assert_eq!(exact, defined, "{body}: word {w}");
        }
        if defined {
            assert_eq!(u32s(&r.buffers[0].bytes), [7; 8]);
        }
    }
}

#[test]
fn a_unit_two_invocations_write_on_opposite_ways_is_not_made_defined() {
    // Invocation 1 writes b[0] on the false way, invocation 0 on the true way: every run (all
    // invocations one way) writes 1 there, but an execution where invocation 0 goes false and
    // invocation 1 true writes it not at all (0). The lowest writer differs between the runs.
    let src = format!("{UNDEF_HEAD}void main() {{\n  uint u;\n  uint i = gl_LocalInvocationIndex;\n  if (u > 5u) {{ if (i == 0u) {{ b[0] = 1u; }} }} else {{ if (i == 1u) {{ b[0] = 1u; }} }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    undefined_chain(&r, 0);
    // b[1..8]: no invocation writes them on any way (the first run, which takes both ways of
    // the branch, leaves them as they were): defined, still 0.
    for w in 1..8 {
        assert_eq!(
            r.status(r.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "word {w}"
        );
    }
    // Explored, and b[0] stays undefined: no unit was made defined.
    assert_eq!(r.explored.map(|e| e.units), Some(0));
}

/// GL_KHR_shader_subgroup: "If <value> is 0, an undefined value is returned"
/// (`subgroupBallotFindMSB`), and an undefined value is *some* value — "each consumption of
/// Result <id> yields an arbitrary, possibly different bit pattern" (SPIR-V 1.6, `OpUndef`) — so
/// an invocation branching on it may take either way of the selection. What either way writes is
/// not defined afterwards, though the element held a defined value before the branch and the way
/// the model's value takes writes nothing (`x[i]` is 5 or 6); an atomic on the way that leaves every
/// value as it was (an add or or of 0, an and of all ones, a minimum of the largest value, a
/// maximum of 0) leaves its location defined, taken or not, whatever the order; an add of 1 does
/// not. The `atomicAdd(b[8], 1u)` after the merge keeps exploring out (invocations interact).
/// The store of 6 may sit in a function the way calls (one without a loop: every way ends).
#[test]
fn an_invocation_whose_branch_is_undefined_may_take_either_way_of_a_selection() {
    for (cond, six) in [
        ("h == 3u", "b[i] = 6u;"),
        ("h != 3u", "b[i] = 6u;"),
        ("h == 3u", "six(i);"),
    ] {
        let src = format!(
            "#version 450\n#extension GL_KHR_shader_subgroup_ballot : enable\n\
             layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
             void six(uint i) {{ if (i < 100u) {{ b[i] = 6u; }} }}\n\
             void main() {{\n  uint i = gl_LocalInvocationIndex;\n  b[i] = 5u;\n\
               uint h = subgroupBallotFindMSB(uvec4(0u));\n\
               if ({cond}) {{\n    {six}\n    atomicAdd(b[9], 0u);\n    atomicOr(b[9], 0u);\n\
                 atomicAnd(b[9], 0xFFFFFFFFu);\n    atomicMin(b[9], 0xFFFFFFFFu);\n\
                 atomicMax(b[9], 0u);\n    atomicAdd(b[10], 1u);\n  }}\n\
               atomicAdd(b[8], 1u);\n}}\n"
        );
        let mut input = vec![0u32; 12];
        input[9] = 7;
        let r = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[input]);
        assert_eq!(r.explored, None, "{cond} {six}: the atomic after the merge");
        for w in 0..8 {
            assert!(
                undefined_chain(&r, w).contains("no bit set"),
                "{cond} {six}: b[{w}]"
            );
        }
        let words = u32s(&r.buffers[0].bytes);
        for (w, want) in [(8, 8), (9, 7), (11, 0)] {
            assert_eq!(
                r.status(r.buffers[0].word_taint(w)),
                WordStatus::Exact,
                "{cond} {six}: b[{w}]"
            );
            assert_eq!(words[w], want, "{cond} {six}: b[{w}]");
        }
        undefined_chain(&r, 10);
    }
}

/// The start of the SPIR-V modules of the phi tests: one storage buffer `buf` of `uint`s at binding
/// 0, `gid` the local invocation id, workgroups of 8, the constants 0, 1, 2.
const ASM_HEAD: &str = r#"
               OpCapability Shader
               OpExtension "SPV_KHR_storage_buffer_storage_class"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %gid BuiltIn LocalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
     %ptr_in = OpTypePointer Input %v3uint
        %gid = OpVariable %ptr_in Input
       %bool = OpTypeBool
        %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
    %ptr_buf = OpTypePointer StorageBuffer %Buf
      %ptr_u = OpTypePointer StorageBuffer %uint
        %buf = OpVariable %ptr_buf StorageBuffer
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
"#;

// SPIR-V 1.6, OpPhi: "If control reached the current block from Parent i, Result Id gets the value
// that Variable i had at the end of Parent i." The phis of a block therefore read their inputs as
// they were at the end of the predecessor — together, before any of them is written: `a` and `b`
// below swap on every trip round the loop (a phi reading another phi of its block), invocation `l`
// goes round `l` times (so the lanes of one subgroup come to the header from different blocks),
// and `x` takes 10 or 20 by the way each lane reached the merge.
#[test]
fn phis_read_their_inputs_as_at_the_end_of_the_predecessor_lane_by_lane() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = [
        ASM_HEAD,
        r#"         %u8 = OpConstant %uint 8
        %u10 = OpConstant %uint 10
        %u16 = OpConstant %uint 16
        %u20 = OpConstant %uint 20
       %main = OpFunction %void None %fn
      %entry = OpLabel
        %id3 = OpLoad %v3uint %gid
         %id = OpCompositeExtract %uint %id3 0
               OpBranch %head
       %head = OpLabel
          %a = OpPhi %uint %u1 %entry %b %cont
          %b = OpPhi %uint %u2 %entry %a %cont
          %i = OpPhi %uint %u0 %entry %i1 %cont
          %c = OpULessThan %bool %i %id
               OpLoopMerge %exit %cont None
               OpBranchConditional %c %body %exit
       %body = OpLabel
               OpBranch %cont
       %cont = OpLabel
         %i1 = OpIAdd %uint %i %u1
               OpBranch %head
       %exit = OpLabel
         %pa = OpAccessChain %ptr_u %buf %u0 %id
               OpStore %pa %a
        %id8 = OpIAdd %uint %id %u8
         %pb = OpAccessChain %ptr_u %buf %u0 %id8
               OpStore %pb %b
        %bit = OpBitwiseAnd %uint %id %u1
        %odd = OpIEqual %bool %bit %u1
               OpSelectionMerge %merge None
               OpBranchConditional %odd %then %else
       %then = OpLabel
               OpBranch %merge
       %else = OpLabel
               OpBranch %merge
      %merge = OpLabel
          %x = OpPhi %uint %u10 %then %u20 %else
       %id16 = OpIAdd %uint %id %u16
         %px = OpAccessChain %ptr_u %buf %u0 %id16
               OpStore %px %x
               OpReturn
               OpFunctionEnd
"#,
    ]
    .concat();
    let m = compile(&text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    for mode in [Mode::Base, Mode::Maximal] {
        let buf = BufferInput {
            set: 0,
            binding: 0,
            bytes: vec![0; 24 * 4],
            ..Default::default()
        };
        let r = run_model(&k, cfg(4, mode, [1, 1, 1]), &[buf], None).unwrap();
        let b = &r.buffers[0];
        assert!(
            (0..24).all(|w| b.word_taint(w).is_none()),
            "{mode:?}: every value is defined"
        );
        let v = u32s(&b.bytes);
        for l in 0..8 {
            let (a, bb) = if l % 2 == 0 { (1, 2) } else { (2, 1) };
            assert_eq!(
                (v[l], v[8 + l]),
                (a, bb),
                "{mode:?}: a, b of invocation {l}"
            );
            let x = if l % 2 == 1 { 10 } else { 20 };
            assert_eq!(v[16 + l], x, "{mode:?}: x of invocation {l}");
        }
    }
}

// GL_KHR_shader_subgroup, subgroupShuffleUp: "the value of `value` from the invocation whose
// gl_SubgroupInvocationID is the current one's minus `delta`", undefined where delta exceeds it.
// The delta is the subgroup's id plus one: the same in every lane of a subgroup, different in
// each — every subgroup reads with its own delta.
#[test]
fn a_shuffle_delta_each_subgroup_holds_alike_is_that_subgroups_own() {
    let src = format!("{HEAD}layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint x = subgroupShuffleUp(gl_SubgroupInvocationID * 10u + 1u, gl_SubgroupID + 1u);\n  b[gl_LocalInvocationIndex] = x;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [1, 1, 1], &[vec![0; 16]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for g in 0..4 {
        for l in 0..4 {
            let i = g * 4 + l;
            if l > g {
                assert_eq!(w[i], (l - g - 1) as u32 * 10 + 1, "subgroup {g} lane {l}");
                assert_eq!(r.status(b.word_taint(i)), WordStatus::Exact);
            } else {
                assert!(
                    matches!(r.status(b.word_taint(i)), WordStatus::Undefined(_)),
                    "subgroup {g} lane {l}: delta {} exceeds the id",
                    g + 1
                );
            }
        }
    }
}

// The same rule where the phis carry vectors and an undefined value (SPIR-V 1.6 OpUndef: "an
// arbitrary … bit pattern"): `a` starts undefined and `b` defined, and they swap on every trip, so
// after invocation `l`'s `l` trips `a` is undefined where `l` is even and `b` where it is odd — in
// both components; `y` is undefined in the lanes that reached the merge from `then` only.
#[test]
fn phis_carry_undefined_values_only_from_the_predecessor_that_gave_them() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = [
        ASM_HEAD,
        r#"
     %v2uint = OpTypeVector %uint 2
         %u3 = OpConstant %uint 3
         %u4 = OpConstant %uint 4
         %u8 = OpConstant %uint 8
        %u20 = OpConstant %uint 20
       %c23 = OpConstantComposite %v2uint %u2 %u3
      %undv = OpUndef %v2uint
       %main = OpFunction %void None %fn
      %entry = OpLabel
        %id3 = OpLoad %v3uint %gid
         %id = OpCompositeExtract %uint %id3 0
       %base = OpIMul %uint %id %u4
       %half = OpCompositeInsert %v2uint %u20 %undv 0
               OpBranch %head
       %head = OpLabel
          %a = OpPhi %v2uint %undv %entry %b %cont
          %b = OpPhi %v2uint %c23 %entry %a %cont
          %i = OpPhi %uint %u0 %entry %i1 %cont
          %c = OpULessThan %bool %i %id
               OpLoopMerge %exit %cont None
               OpBranchConditional %c %body %exit
       %body = OpLabel
               OpBranch %cont
       %cont = OpLabel
         %i1 = OpIAdd %uint %i %u1
               OpBranch %head
       %exit = OpLabel
         %ax = OpCompositeExtract %uint %a 0
         %ay = OpCompositeExtract %uint %a 1
         %bx = OpCompositeExtract %uint %b 0
         %by = OpCompositeExtract %uint %b 1
         %p0 = OpAccessChain %ptr_u %buf %u0 %base
               OpStore %p0 %ax
         %i1b = OpIAdd %uint %base %u1
         %p1 = OpAccessChain %ptr_u %buf %u0 %i1b
               OpStore %p1 %ay
         %i2b = OpIAdd %uint %base %u2
         %p2 = OpAccessChain %ptr_u %buf %u0 %i2b
               OpStore %p2 %bx
         %i3b = OpIAdd %uint %base %u3
         %p3 = OpAccessChain %ptr_u %buf %u0 %i3b
               OpStore %p3 %by
        %bit = OpBitwiseAnd %uint %id %u1
        %odd = OpIEqual %bool %bit %u1
               OpSelectionMerge %merge None
               OpBranchConditional %odd %then %else
       %then = OpLabel
               OpBranch %merge
       %else = OpLabel
               OpBranch %merge
      %merge = OpLabel
          %y = OpPhi %v2uint %half %then %c23 %else
         %yx = OpCompositeExtract %uint %y 0
         %yy = OpCompositeExtract %uint %y 1
        %iy = OpIAdd %uint %id %u20
        %iy2 = OpIAdd %uint %iy %u20
         %py = OpAccessChain %ptr_u %buf %u0 %iy2
               OpStore %py %yx
        %iy3 = OpIAdd %uint %iy2 %u8
        %py2 = OpAccessChain %ptr_u %buf %u0 %iy3
               OpStore %py2 %yy
               OpReturn
               OpFunctionEnd
"#,
    ]
    .concat();
    let m = compile(&text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let buf = BufferInput {
        set: 0,
        binding: 0,
        bytes: vec![0; 56 * 4],
        ..Default::default()
    };
    let r = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &[buf], None).unwrap();
    let b = &r.buffers[0];
    let v = u32s(&b.bytes);
    let undefined = |w: usize| matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_));
    for l in 0..8 {
        let (a_undef, defined_at) = if l % 2 == 0 {
            (true, 4 * l + 2)
        } else {
            (false, 4 * l)
        };
        for c in 0..2 {
            assert_eq!(undefined(4 * l + c), a_undef, "a[{c}] of invocation {l}");
            assert_eq!(
                undefined(4 * l + 2 + c),
                !a_undef,
                "b[{c}] of invocation {l}"
            );
            assert_eq!(
                v[defined_at + c],
                [2, 3][c],
                "the defined vector of invocation {l}"
            );
        }
        // y: (20, undefined) from `then` (odd lanes), (2, 3) from `else`.
        assert!(!undefined(40 + l), "y[0] of invocation {l}");
        assert_eq!(
            v[40 + l],
            if l % 2 == 1 { 20 } else { 2 },
            "y[0] of invocation {l}"
        );
        assert_eq!(undefined(48 + l), l % 2 == 1, "y[1] of invocation {l}");
        if l % 2 == 0 {
            assert_eq!(v[48 + l], 3, "y[1] of invocation {l}");
        }
    }
}

// GLSL 4.60 §5.9 / SPIR-V OpAccessChain: `b[k]` is the element `k` names in each invocation. Where
// every active invocation holds the same `k` the chain gives them all the same element — also when
// the first of them is not the subgroup's lane 0 — and an index that is undefined (a variable
// never written: SPIR-V 2.2.2, an arbitrary bit pattern) makes the element read undefined in every
// invocation, though each holds the same bits.
#[test]
fn an_index_every_invocation_holds_alike_names_the_same_element_and_an_undefined_one_none() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  uint u;\n  if (i >= 3u) {{\n    uint k = b[16];\n    b[8u + i] = b[k];\n  }}\n  b[17u + i] = b[u];\n}}\n");
    let mut input: Vec<u32> = (10..18).collect();
    input.extend([0; 8]);
    input.push(5);
    input.extend([0; 8]);
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[input]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for i in 0..8 {
        let (want, status) = if i >= 3 {
            (15, "b[k]")
        } else {
            (0, "untouched")
        };
        assert_eq!(w[8 + i], want, "{status} of invocation {i}");
        assert_eq!(
            r.status(b.word_taint(8 + i)),
            WordStatus::Exact,
            "invocation {i}"
        );
        assert!(
            matches!(r.status(b.word_taint(17 + i)), WordStatus::Undefined(_)),
            "b[u] of invocation {i} reads through an undefined index"
        );
    }
}

// GL_KHR_shader_subgroup 8.18 / SPIR-V 1.6: subgroupShuffle reads the lane `id` names (per lane),
// subgroupShuffleXor the lane `id ^ mask`, subgroupBallotBitExtract bit `index` of the ballot; an
// id that is undefined in one lane (a variable that lane never wrote) makes that lane's result
// undefined, and no other's.
#[test]
fn shuffles_and_ballot_bits_read_the_lane_their_per_lane_argument_names() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_SubgroupInvocationID;\n  uint id = 7u - i;\n  if (i == 2u) {{ uint u; id = u & 7u; }}\n  b[i] = subgroupShuffle(i * 10u, id);\n  b[8u + i] = subgroupShuffleXor(i * 10u, 1u + (i & 1u));\n  uvec4 ballot = subgroupBallot((i & 2u) != 0u);\n  b[16u + i] = uint(subgroupBallotBitExtract(ballot, 7u - i));\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 24]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for i in 0..8u32 {
        let s = i as usize;
        if i == 2 {
            assert!(
                matches!(r.status(b.word_taint(s)), WordStatus::Undefined(_)),
                "the lane whose id is undefined"
            );
        } else {
            assert_eq!(w[s], (7 - i) * 10, "shuffle of lane {i}");
            assert_eq!(r.status(b.word_taint(s)), WordStatus::Exact, "lane {i}");
        }
        assert_eq!(
            w[8 + s],
            (i ^ (1 + (i & 1))) * 10,
            "shuffle_xor of lane {i}"
        );
        assert_eq!(
            w[16 + s],
            ((7 - i) & 2 != 0) as u32,
            "ballot bit {} for lane {i}",
            7 - i
        );
        assert_eq!(
            r.status(b.word_taint(16 + s)),
            WordStatus::Exact,
            "lane {i}"
        );
    }
}

// SPIR-V 1.6, "Relational and Logical Instructions": OpFOrdEqual is "Floating-point comparison for
// being ordered and equal", OpFUnordEqual "for being unordered or equal", and so on for NotEqual,
// LessThan, GreaterThan, LessThanEqual and GreaterThanEqual — a NaN operand (unordered) makes every
// ordered comparison false and every unordered one true. All twelve, one bit each (in the order of the spec's table: Equal, NotEqual, LessThan,
// GreaterThan, LessThanEqual, GreaterThanEqual, ordered before unordered), in four lanes: (NaN, 1),
// (1, 1), (1, 2), (2, 1). glslang writes only some of them (`!=` is OpFUnordNotEqual), so the
// module is assembled.
#[test]
fn ordered_float_comparisons_are_false_and_unordered_ones_true_when_an_operand_is_nan() {
    let text = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %fa ArrayStride 4
OpDecorate %ua ArrayStride 4
OpDecorate %F Block
OpMemberDecorate %F 0 Offset 0
OpDecorate %U Block
OpMemberDecorate %U 0 Offset 0
OpDecorate %xs DescriptorSet 0
OpDecorate %xs Binding 0
OpDecorate %ys DescriptorSet 0
OpDecorate %ys Binding 1
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u4 = OpConstant %uint 4
%bit0 = OpConstant %uint 1
%bit1 = OpConstant %uint 2
%bit2 = OpConstant %uint 4
%bit3 = OpConstant %uint 8
%bit4 = OpConstant %uint 16
%bit5 = OpConstant %uint 32
%bit6 = OpConstant %uint 64
%bit7 = OpConstant %uint 128
%bit8 = OpConstant %uint 256
%bit9 = OpConstant %uint 512
%bit10 = OpConstant %uint 1024
%bit11 = OpConstant %uint 2048
%fa = OpTypeArray %float %u4
%ua = OpTypeArray %uint %u4
%F = OpTypeStruct %fa
%U = OpTypeStruct %ua
%pF = OpTypePointer StorageBuffer %F
%pU = OpTypePointer StorageBuffer %U
%pf = OpTypePointer StorageBuffer %float
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%xs = OpVariable %pF StorageBuffer
%ys = OpVariable %pF StorageBuffer
%out = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%px = OpAccessChain %pf %xs %u0 %i
%py = OpAccessChain %pf %ys %u0 %i
%x = OpLoad %float %px
%y = OpLoad %float %py
%c0 = OpFOrdEqual %bool %x %y
%s0 = OpSelect %uint %c0 %bit0 %u0
%m0 = OpBitwiseOr %uint %u0 %s0
%c1 = OpFUnordEqual %bool %x %y
%s1 = OpSelect %uint %c1 %bit1 %u0
%m1 = OpBitwiseOr %uint %m0 %s1
%c2 = OpFOrdNotEqual %bool %x %y
%s2 = OpSelect %uint %c2 %bit2 %u0
%m2 = OpBitwiseOr %uint %m1 %s2
%c3 = OpFUnordNotEqual %bool %x %y
%s3 = OpSelect %uint %c3 %bit3 %u0
%m3 = OpBitwiseOr %uint %m2 %s3
%c4 = OpFOrdLessThan %bool %x %y
%s4 = OpSelect %uint %c4 %bit4 %u0
%m4 = OpBitwiseOr %uint %m3 %s4
%c5 = OpFUnordLessThan %bool %x %y
%s5 = OpSelect %uint %c5 %bit5 %u0
%m5 = OpBitwiseOr %uint %m4 %s5
%c6 = OpFOrdGreaterThan %bool %x %y
%s6 = OpSelect %uint %c6 %bit6 %u0
%m6 = OpBitwiseOr %uint %m5 %s6
%c7 = OpFUnordGreaterThan %bool %x %y
%s7 = OpSelect %uint %c7 %bit7 %u0
%m7 = OpBitwiseOr %uint %m6 %s7
%c8 = OpFOrdLessThanEqual %bool %x %y
%s8 = OpSelect %uint %c8 %bit8 %u0
%m8 = OpBitwiseOr %uint %m7 %s8
%c9 = OpFUnordLessThanEqual %bool %x %y
%s9 = OpSelect %uint %c9 %bit9 %u0
%m9 = OpBitwiseOr %uint %m8 %s9
%c10 = OpFOrdGreaterThanEqual %bool %x %y
%s10 = OpSelect %uint %c10 %bit10 %u0
%m10 = OpBitwiseOr %uint %m9 %s10
%c11 = OpFUnordGreaterThanEqual %bool %x %y
%s11 = OpSelect %uint %c11 %bit11 %u0
%m11 = OpBitwiseOr %uint %m10 %s11
%po = OpAccessChain %pu %out %u0 %i
OpStore %po %m11
OpReturn
OpFunctionEnd
"#;
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let bufs = [
        f(&[f32::NAN, 1.0, 1.0, 2.0]),
        f(&[1.0, 1.0, 2.0, 1.0]),
        bytes_u32(&[0; 4]),
    ];
    let r = run_asm(text, 4, &bufs);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // bits: 0 OrdEq, 1 UnordEq, 2 OrdNe, 3 UnordNe, 4 OrdLt, 5 UnordLt, 6 OrdGt, 7 UnordGt,
    // 8 OrdLe, 9 UnordLe, 10 OrdGe, 11 UnordGe.
    let nan = 0b1010_1010_1010; // only the unordered ones
    let equal = 0b1111_0000_0011; // Eq, Le, Ge
    let less = 0b0011_0011_1100; // Ne, Lt, Le
    let greater = 0b1100_1100_1100; // Ne, Gt, Ge
    assert_eq!(u32s(bytes_at(&r, 2)), [nan, equal, less, greater]);
}

// GLSL.std.450, Frexp: "Splits x into a floating-point significand in the range [0.5, 1.0) and an
// integral exponent of two, such that: x = significand * 2^exponent"; FrexpStruct: "Same semantics
// as in Frexp, except that the entry point returns a struct containing the significand and
// exponent" (member 1 a 32-bit integer). Eight 64-bit inputs, one per lane, some with a negative
// exponent: each lane's significand and exponent rebuild its x exactly, and the exponent is the
// integer the module compares (`e == -3` true exactly for ±0.1).
#[test]
fn a_double_splits_into_a_significand_in_half_to_one_and_an_exponent_in_every_lane() {
    let text = r#"OpCapability Shader
OpCapability Float64
OpCapability Int64
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 8 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %da ArrayStride 8
OpDecorate %ia ArrayStride 4
OpDecorate %D Block
OpMemberDecorate %D 0 Offset 0
OpDecorate %I Block
OpMemberDecorate %I 0 Offset 0
OpDecorate %xs DescriptorSet 0
OpDecorate %xs Binding 0
OpDecorate %ms DescriptorSet 0
OpDecorate %ms Binding 1
OpDecorate %es DescriptorSet 0
OpDecorate %es Binding 2
OpDecorate %qs DescriptorSet 0
OpDecorate %qs Binding 3
OpDecorate %ls DescriptorSet 0
OpDecorate %ls Binding 4
OpDecorate %La ArrayStride 8
OpDecorate %L Block
OpMemberDecorate %L 0 Offset 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%double = OpTypeFloat 64
%ulong = OpTypeInt 64 0
%st = OpTypeStruct %double %int
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u8 = OpConstant %uint 8
%im3 = OpConstant %int -3
%da = OpTypeArray %double %u8
%ia = OpTypeArray %int %u8
%D = OpTypeStruct %da
%I = OpTypeStruct %ia
%pD = OpTypePointer StorageBuffer %D
%pI = OpTypePointer StorageBuffer %I
%pd = OpTypePointer StorageBuffer %double
%pi = OpTypePointer StorageBuffer %int
%La = OpTypeArray %ulong %u8
%L = OpTypeStruct %La
%pL = OpTypePointer StorageBuffer %L
%pl = OpTypePointer StorageBuffer %ulong
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%xs = OpVariable %pD StorageBuffer
%ms = OpVariable %pD StorageBuffer
%es = OpVariable %pI StorageBuffer
%qs = OpVariable %pI StorageBuffer
%ls = OpVariable %pL StorageBuffer
%i0 = OpConstant %int 0
%i1 = OpConstant %int 1
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%px = OpAccessChain %pd %xs %u0 %i
%x = OpLoad %double %px
%r = OpExtInst %st %glsl FrexpStruct %x
%m = OpCompositeExtract %double %r 0
%e = OpCompositeExtract %int %r 1
%q = OpIEqual %bool %e %im3
%qv = OpSelect %int %q %i1 %i0
%pm = OpAccessChain %pd %ms %u0 %i
OpStore %pm %m
%pe = OpAccessChain %pi %es %u0 %i
OpStore %pe %e
%pq = OpAccessChain %pi %qs %u0 %i
OpStore %pq %qv
%el = OpUConvert %ulong %e
%pl0 = OpAccessChain %pl %ls %u0 %i
OpStore %pl0 %el
OpReturn
OpFunctionEnd
"#;
    let xs = [8.0f64, -3.0, 0.1, 0.75, 1.0, -0.1, 1024.5, 3.0e-300];
    let bufs = [
        xs.iter().flat_map(|x| x.to_le_bytes()).collect(),
        vec![0; 64],
        vec![0; 32],
        vec![0; 32],
        vec![0; 64],
    ];
    let r = run_asm(text, 8, &bufs);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = |binding: u32| bytes_at(&r, binding);
    let ms: Vec<f64> = out(1)
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let es: Vec<i32> = u32s(out(2)).iter().map(|&e| e as i32).collect();
    let qs = u32s(out(3));
    for (l, &x) in xs.iter().enumerate() {
        let (m, e) = (ms[l], es[l]);
        assert!(
            (0.5..1.0).contains(&m.abs()),
            "lane {l}: significand {m} of {x}"
        );
        assert_eq!(m * 2f64.powi(e), x, "lane {l}: {m} * 2^{e}");
        assert_eq!(qs[l], (e == -3) as u32, "lane {l}: e == -3 with e = {e}");
    }
    assert_eq!(qs, [0, 0, 1, 0, 0, 1, 0, 0]);
    // OpUConvert widens the exponent's 32 bits with zeros ("zero extended"): -3 is 0xffff_fffd.
    let ls: Vec<u64> = out(4)
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for l in 0..8 {
        assert_eq!(ls[l], es[l] as u32 as u64, "lane {l}: the exponent widened");
    }
}

// GLSL.std.450 FrexpStruct of a vector: "Member 1 must be a scalar or vector with integer
// component type, with 32-bit component width"; each component is split as Frexp splits it
// (x = significand * 2^exponent). `dvec2(0.1, -8.0)` gives significands (0.8, -0.5) and exponents
// (-3, 4): the exponent is a 32-bit integer in every component, so OpUConvert widens -3 with zeros
// (0xffff_fffd) and OpSConvert with ones (SPIR-V OpUConvert "zero extended", OpSConvert "sign
// extended"), OpIEqual against (-3, 4) holds in both components, and OpBitcast to a 64-bit
// integer puts the first exponent's 32 bits below the second's.
#[test]
fn a_vector_frexp_struct_gives_a_32_bit_exponent_in_every_component() {
    let text = r#"OpCapability Shader
OpCapability Float64
OpCapability Int64
%glsl = OpExtInstImport "GLSL.std.450"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %X Block
OpMemberDecorate %X 0 Offset 0
OpDecorate %M Block
OpMemberDecorate %M 0 Offset 0
OpDecorate %E Block
OpMemberDecorate %E 0 Offset 0
OpMemberDecorate %E 1 Offset 8
OpMemberDecorate %E 2 Offset 16
OpMemberDecorate %E 3 Offset 32
OpMemberDecorate %E 4 Offset 36
OpMemberDecorate %E 5 Offset 40
OpDecorate %xs DescriptorSet 0
OpDecorate %xs Binding 0
OpDecorate %ms DescriptorSet 0
OpDecorate %ms Binding 1
OpDecorate %es DescriptorSet 0
OpDecorate %es Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%double = OpTypeFloat 64
%ulong = OpTypeInt 64 0
%long = OpTypeInt 64 1
%dv2 = OpTypeVector %double 2
%iv2 = OpTypeVector %int 2
%bv2 = OpTypeVector %bool 2
%ulv2 = OpTypeVector %ulong 2
%lv2 = OpTypeVector %long 2
%st = OpTypeStruct %dv2 %iv2
%X = OpTypeStruct %dv2
%M = OpTypeStruct %dv2
%E = OpTypeStruct %iv2 %ulong %lv2 %uint %uint %ulong
%pX = OpTypePointer StorageBuffer %X
%pM = OpTypePointer StorageBuffer %M
%pE = OpTypePointer StorageBuffer %E
%pdv2 = OpTypePointer StorageBuffer %dv2
%piv2 = OpTypePointer StorageBuffer %iv2
%pul = OpTypePointer StorageBuffer %ulong
%plv2 = OpTypePointer StorageBuffer %lv2
%pu = OpTypePointer StorageBuffer %uint
%xs = OpVariable %pX StorageBuffer
%ms = OpVariable %pM StorageBuffer
%es = OpVariable %pE StorageBuffer
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%i0 = OpConstant %int 0
%i1 = OpConstant %int 1
%i2 = OpConstant %int 2
%i3 = OpConstant %int 3
%i4 = OpConstant %int 4
%i5 = OpConstant %int 5
%im3 = OpConstant %int -3
%want = OpConstantComposite %iv2 %im3 %i4
%main = OpFunction %void None %fn
%entry = OpLabel
%px = OpAccessChain %pdv2 %xs %i0
%x = OpLoad %dv2 %px
%r = OpExtInst %st %glsl FrexpStruct %x
%m = OpCompositeExtract %dv2 %r 0
%e = OpCompositeExtract %iv2 %r 1
%pm = OpAccessChain %pdv2 %ms %i0
OpStore %pm %m
%pe = OpAccessChain %piv2 %es %i0
OpStore %pe %e
%ez = OpUConvert %ulv2 %e
%e0 = OpCompositeExtract %ulong %ez 0
%pz = OpAccessChain %pul %es %i1
OpStore %pz %e0
%es2 = OpSConvert %lv2 %e
%ps = OpAccessChain %plv2 %es %i2
OpStore %ps %es2
%eq = OpIEqual %bv2 %e %want
%all = OpAll %bool %eq
%allu = OpSelect %uint %all %u1 %u0
%pa = OpAccessChain %pu %es %i3
OpStore %pa %allu
%e1 = OpCompositeExtract %int %e 1
%e1u = OpBitcast %uint %e1
%pb = OpAccessChain %pu %es %i4
OpStore %pb %e1u
%eb = OpBitcast %ulong %e
%pw = OpAccessChain %pul %es %i5
OpStore %pw %eb
OpReturn
OpFunctionEnd
"#;
    let x: Vec<u8> = [0.1f64, -8.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let r = run_asm(text, 1, &[x, vec![0; 16], vec![0; 48]]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let ms: Vec<f64> = bytes_at(&r, 1)
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ms, [0.8, -0.5]);
    let e = bytes_at(&r, 2);
    let w = u32s(e);
    assert_eq!(w[..2], [(-3i32) as u32, 4], "the exponents as stored");
    assert_eq!(
        u64::from_le_bytes(e[8..16].try_into().unwrap()),
        0xffff_fffd,
        "OpUConvert"
    );
    let s0 = i64::from_le_bytes(e[16..24].try_into().unwrap());
    let s1 = i64::from_le_bytes(e[24..32].try_into().unwrap());
    assert_eq!((s0, s1), (-3, 4), "OpSConvert");
    assert_eq!(w[8], 1, "OpIEqual with (-3, 4) in both components");
    assert_eq!(w[9], 4, "OpBitcast of the second exponent");
    // OpBitcast of the two 32-bit exponents into one 64-bit integer: "the lower-numbered
    // component … in the least-significant bits".
    let whole = u64::from_le_bytes(e[40..48].try_into().unwrap());
    assert_eq!(
        whole, 0x0000_0004_ffff_fffd,
        "OpBitcast of the whole vector"
    );
}

// GL_KHR_shader_subgroup, 8.2 "gl_SubgroupID": the workgroup's invocations are split into
// gl_NumSubgroups subgroups. A branch that only the second subgroup takes runs its loads and stores
// with the first subgroup wholly inactive: each invocation of the second reads and writes its own
// element, the first's elements keep what they held.
#[test]
fn a_branch_only_a_later_subgroup_takes_reads_and_writes_that_subgroups_elements() {
    let src = format!("{HEAD}layout(local_size_x = 16) in;\nlayout(binding = 0) buffer A {{ uint a[]; }};\nlayout(binding = 1) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationID.x;\n  if (gl_SubgroupID == 1u) {{ b[i] = a[i] * 3u; }}\n}}\n");
    let a: Vec<u32> = (0..16).map(|i| 10 + i).collect();
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[a.clone(), vec![7; 16]]);
    let b = u32s(&r.buffers.iter().find(|b| b.binding == 1).unwrap().bytes);
    for i in 0..16 {
        let want = if i >= 8 { a[i] * 3 } else { 7 };
        assert_eq!(b[i], want, "b[{i}]");
    }
}

// A lane whose branch condition is undefined may take either side (SPIR-V 2.2.2, "undefined":
// any value), so what it computed inside the loop it branched in is undefined for it once the loop
// ends — but only there: in the outer loop's next iteration the same access chain, through an
// index computed before both loops and the same in every lane, points where it says in every lane,
// and what each lane loads and stores through it is defined again. Lane 3 branches on an
// undefined value (a `break` or not) in the first outer iteration only. Assembled: glslang loads
// the index inside the loop (a fresh value each iteration); an optimiser hoists it, as here.
#[test]
fn a_lane_lost_in_one_iteration_of_an_inner_loop_computes_defined_pointers_in_the_next() {
    let text = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 8 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ua ArrayStride 4
OpDecorate %U Block
OpMemberDecorate %U 0 Offset 0
OpDecorate %A DescriptorSet 0
OpDecorate %A Binding 0
OpDecorate %B DescriptorSet 0
OpDecorate %B Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%v3 = OpTypeVector %uint 3
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
%c2 = OpConstant %uint 2
%c3 = OpConstant %uint 3
%c8 = OpConstant %uint 8
%c16 = OpConstant %uint 16
%ua = OpTypeArray %uint %c16
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%A = OpVariable %pU StorageBuffer
%B = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%u = OpUndef %uint
%px = OpAccessChain %pu %A %c0 %c2
%ix = OpLoad %uint %px
OpBranch %oh
%oh = OpLabel
%o = OpPhi %uint %c0 %entry %o1 %ocont
OpLoopMerge %omerge %ocont None
%oc = OpULessThan %bool %o %c2
OpBranchConditional %oc %obody %omerge
%obody = OpLabel
OpBranch %ih
%ih = OpLabel
%k = OpPhi %uint %c0 %obody %k1 %icont
OpLoopMerge %imerge %icont None
%kc = OpULessThan %bool %k %c1
OpBranchConditional %kc %ibody %imerge
%ibody = OpLabel
%first = OpIEqual %bool %o %c0
%is3 = OpIEqual %bool %i %c3
%both = OpLogicalAnd %bool %first %is3
OpSelectionMerge %s1 None
OpBranchConditional %both %t1 %s1
%t1 = OpLabel
%ub = OpBitwiseAnd %uint %u %c1
%uz = OpIEqual %bool %ub %c0
OpSelectionMerge %s2 None
OpBranchConditional %uz %brk %s2
%brk = OpLabel
OpBranch %imerge
%s2 = OpLabel
OpBranch %s1
%s1 = OpLabel
%pa = OpAccessChain %pu %A %c0 %ix
%v = OpLoad %uint %pa
%o8 = OpIMul %uint %o %c8
%bi = OpIAdd %uint %o8 %i
%pb = OpAccessChain %pu %B %c0 %bi
OpStore %pb %v
OpBranch %icont
%icont = OpLabel
%k1 = OpIAdd %uint %k %c1
OpBranch %ih
%imerge = OpLabel
OpBranch %ocont
%ocont = OpLabel
%o1 = OpIAdd %uint %o %c1
OpBranch %oh
%omerge = OpLabel
OpReturn
OpFunctionEnd
"#;
    // a[2] is the index (1), a[1] what every lane copies (41).
    let a: Vec<u32> = (0..16).map(|x| if x == 2 { 1 } else { 40 + x }).collect();
    let r = run_asm(text, 8, &[bytes_u32(&a), bytes_u32(&[7; 16])]);
    let b = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let w = u32s(&b.bytes);
    for i in 0..8 {
        assert_eq!(w[8 + i], 41, "b[{}]: the second iteration's a[1]", 8 + i);
        assert_eq!(
            r.status(b.word_taint(8 + i)),
            WordStatus::Exact,
            "b[{}]: lane {i} in the second outer iteration",
            8 + i
        );
        if i != 3 {
            assert_eq!(w[i], 41, "b[{i}]");
        }
    }
}

// SPIR-V 1.6, OpUndef: "Make an intermediate object whose value is undefined" — inside a function
// as at module scope; OpVectorShuffle: "A Component literal may also be FFFFFFFF, which means the
// corresponding result component has no source and is undefined". Each lane stores its own id
// beside them: those words stay defined, the two built from nothing are undefined and say so.
#[test]
fn an_undef_in_a_function_and_a_shuffle_component_without_a_source_are_undefined() {
    let text = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ua ArrayStride 4
OpDecorate %U Block
OpMemberDecorate %U 0 Offset 0
OpDecorate %B DescriptorSet 0
OpDecorate %B Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v2 = OpTypeVector %uint 2
%v3 = OpTypeVector %uint 3
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
%c2 = OpConstant %uint 2
%c3 = OpConstant %uint 3
%c4 = OpConstant %uint 4
%c16 = OpConstant %uint 16
%ua = OpTypeArray %uint %c16
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%B = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%at = OpIMul %uint %i %c4
%u = OpUndef %uint
%su = OpIAdd %uint %u %i
%p0 = OpAccessChain %pu %B %c0 %at
OpStore %p0 %su
%v = OpCompositeConstruct %v2 %i %c1
%sh = OpVectorShuffle %v2 %v %v 0 0xFFFFFFFF
%x0 = OpCompositeExtract %uint %sh 0
%x1 = OpCompositeExtract %uint %sh 1
%at1 = OpIAdd %uint %at %c1
%p1 = OpAccessChain %pu %B %c0 %at1
OpStore %p1 %x0
%at2 = OpIAdd %uint %at %c2
%p2 = OpAccessChain %pu %B %c0 %at2
OpStore %p2 %x1
%at3 = OpIAdd %uint %at %c3
%p3 = OpAccessChain %pu %B %c0 %at3
OpStore %p3 %i
OpReturn
OpFunctionEnd
"#;
    let r = run_asm(text, 4, &[bytes_u32(&[7; 16])]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for i in 0..4 {
        for (k, ends) in [(0, "OpUndef"), (2, "OpVectorShuffle")] {
            match r.status(b.word_taint(4 * i + k)) {
                WordStatus::Undefined(chain) => assert!(chain.contains(ends), "lane {i}: {chain}"),
                s => panic!("lane {i} word {k}: {s:?}"),
            }
        }
        for k in [1, 3] {
            assert_eq!(r.status(b.word_taint(4 * i + k)), WordStatus::Exact);
            assert_eq!(w[4 * i + k], i as u32, "lane {i} word {k}");
        }
    }
}

// GL_KHR_shader_subgroup, 8.18: subgroupBallotBitCount counts "only the bottom gl_SubgroupSize
// bits" of its value, subgroupBallotInclusiveBitCount the bits "with an index less than or equal to
// gl_SubgroupInvocationID" among them. A word of the ballot holding none of those bits cannot change
// the result: leaving it undefined in one lane leaves that lane's count defined; a word holding one
// of them makes that lane's count undefined, and no other lane's. At size 8 only word 0 counts (lane
// 2 leaves it undefined: both its counts are); at size 64 the inclusive count of lanes 32.. reads
// word 1 too.
#[test]
fn a_ballot_count_is_undefined_only_where_an_undefined_word_holds_a_bit_it_counts() {
    for size in [8u32, 64] {
        let src = format!("{HEAD}layout(local_size_x = {size}) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_SubgroupInvocationID;\n  uvec4 v = uvec4(0xffffu, 5u, 0u, 0u);\n  if (i == 5u || i == 40u) {{ uint u; v.y = u; }}\n  if (i == 2u || i == 41u) {{ uint u; v.x = u; }}\n  b[i] = subgroupBallotInclusiveBitCount(v);\n  b[{size}u + i] = subgroupBallotBitCount(v);\n}}\n");
        let n = size as usize;
        let r = run_glsl(&src, Mode::Base, size as u64, [1, 1, 1], &[vec![0; 2 * n]]);
        let b = &r.buffers[0];
        let w = u32s(&b.bytes);
        let bits: u128 = 0xffff | (5 << 32);
        let low = if size == 128 { !0 } else { (1u128 << size) - 1 };
        for l in 0..size {
            let undefined_word = match l {
                5 | 40 => Some(1),
                2 | 41 => Some(0),
                _ => None,
            };
            let incl = low & ((2u128 << l) - 1);
            for (k, read) in [(0, incl), (1, low)] {
                let at = k * n + l as usize;
                let reads_it = undefined_word.is_some_and(|c| (read >> (32 * c)) as u32 != 0);
                if reads_it {
                    assert!(
                        matches!(r.status(b.word_taint(at)), WordStatus::Undefined(_)),
                        "size {size}, lane {l}, count {k}: it counts a bit of the undefined word"
                    );
                } else {
                    assert_eq!(
                        r.status(b.word_taint(at)),
                        WordStatus::Exact,
                        "size {size}, lane {l}, count {k}"
                    );
                    assert_eq!(
                        w[at],
                        (bits & read).count_ones(),
                        "size {size}, lane {l}, count {k}"
                    );
                }
            }
        }
    }
}

// GL_KHR_shader_subgroup, 8.18: subgroupBallotFindLSB — "If value is 0, an undefined value is
// returned"; subgroupBallotBitExtract — "If index is greater than or equal to gl_SubgroupSize, the
// result is undefined". Per lane: the even lanes' ballot is 0, the odd lanes' has bit 0; lanes 0..4
// extract bit i + 5 (undefined from i = 3 at size 8).
#[test]
fn a_ballot_with_no_bit_set_or_an_index_past_the_subgroup_gives_that_lane_an_undefined_result() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_SubgroupInvocationID;\n  uvec4 v = uvec4(i & 1u, 0u, 0u, 0u);\n  b[i] = subgroupBallotFindLSB(v);\n  if (i < 5u) {{ b[8u + i] = uint(subgroupBallotBitExtract(uvec4(0xffu, 0u, 0u, 0u), i + 5u)); }}\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 16]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for (i, &x) in w.iter().enumerate().take(8) {
        if i % 2 == 0 {
            match r.status(b.word_taint(i)) {
                WordStatus::Undefined(c) => assert!(c.contains("subgroupBallotFindLSB"), "{c}"),
                o => panic!("lane {i}: {o:?}"),
            }
        } else {
            assert_eq!(
                (x, r.status(b.word_taint(i))),
                (0, WordStatus::Exact),
                "lane {i}"
            );
        }
    }
    for i in 0..5usize {
        if i + 5 >= 8 {
            assert!(
                matches!(r.status(b.word_taint(8 + i)), WordStatus::Undefined(_)),
                "lane {i}: index {}",
                i + 5
            );
        } else {
            assert_eq!(
                (w[8 + i], r.status(b.word_taint(8 + i))),
                (1, WordStatus::Exact)
            );
        }
    }
}

// Elements are named as the source writes them, at the offsets of GLSL 4.60 §7.6.2.2 "Standard
// Uniform Block Layout" (std430 rules: a scalar aligns to its size; a two-component vector to
// twice it, a three- or four-component vector to four times it; an array's or struct's stride
// rounds up to its element's or member's largest alignment; a column-major matrix is an array of
// its columns, a row-major one an array of its rows). Here `P` is scale at 0, dir (vec3) at 16,
// m (mat2, two vec2 columns) at 32..48: stride 48; `items` starts at 16 (P's alignment) and
// `tail` at 16 + 4·48 = 208. In `D`, `layout(row_major) mat3x2 r` is 2 rows of vec3, each 16
// bytes apart: r[c][r] (column c, row r) at 16·r + 4·c, and 12..16 of each row padding. A block without an instance name is known
// by its members' names (GLSL §4.3.9 "Interface Blocks": its members are in the global scope).
#[test]
fn elements_are_named_by_variable_member_and_index_at_their_std430_offsets() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        struct P { float scale; vec3 dir; mat2 m; };\n\
        layout(std430, binding = 0) buffer B { uint count; P items[4]; float tail[]; } blk;\n\
        layout(std430, binding = 1) buffer C { float data[]; };\n\
        layout(std430, binding = 2) buffer D { layout(row_major) mat3x2 r; } d;\n\
        void main() { blk.count = 1u; data[0] = 1.0; d.r[0][0] = 1.0; }\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let obj = |binding: u32| object_at(&k, binding);
    let (b, c, d) = (obj(0), obj(1), obj(2));
    for (o, off, want) in [
        (b, 0, "blk.count"),
        (b, 16, "blk.items[0].scale"),
        (b, 16 + 48 * 2 + 16 + 4, "blk.items[2].dir[1]"),
        (b, 16 + 48 + 32 + 8 + 4, "blk.items[1].m[1][1]"),
        (b, 16 + 48 * 3 + 32, "blk.items[3].m[0][0]"),
        (b, 208 + 12, "blk.tail[3]"),
        (c, 8, "data[2]"),
        (d, 0, "d.r[0][0]"),
        (d, 16 + 8, "d.r[2][1]"),
        (d, 4, "d.r[1][0]"),
        // the padding after a row's three components is no element
        (d, 12, "d.r (byte 12)"),
    ] {
        assert_eq!(k.describe(o, off), want, "object {o:?} byte {off}");
    }
}

// A texel component is named by the image's coordinates as GLSL's image functions take them
// (`imageLoad(image1DArray, ivec2(x, layer))`, `image2DArray`: `ivec3(x, y, layer)`, `image3D`:
// `ivec3(x, y, z)`, `image2DMS`: `ivec2(x, y)` and a sample), then the component (`.r` … `.a`;
// none for a packed format, whose components share one word). The offsets follow the layout of an
// image's bytes (README "Decisions", Images: texels tightly packed, x fastest, a multisampled
// image's samples innermost — what `vkCmdCopyBufferToImage` reads); layers or depth after rows.
// Elements are named as the user wrote them. WGSL's `var<storage, read_write> out: array<u32>`
// is indexed `out[i]`; naga wraps the array in a struct of one unnamed member (the SPIR-V block a
// runtime array needs), which the user never wrote, so the name skips it: `out[5]`, not
// `out.member0[5]`. A struct the user declared keeps its members' names (`p.scale`), and in GLSL a
// block's member is named as declared (`o[2]`).
#[test]
fn an_element_of_a_wgsl_storage_array_is_named_as_the_user_indexes_it() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let wgsl = "struct P { scale: f32, n: u32 }\n\
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
        @group(0) @binding(1) var<storage, read_write> p: P;\n\
        @compute @workgroup_size(1)\n\
        fn main() { out[0] = p.n; p.scale = 2.0; }\n";
    let m = compile(wgsl, SourceLang::Wgsl, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    assert_eq!(k.describe(object_at(&k, 0), 20), "out[5]");
    assert_eq!(k.describe(object_at(&k, 1), 0), "p.scale");
    assert_eq!(k.describe(object_at(&k, 1), 4), "p.n");
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0) buffer O { uint o[]; };\n\
        void main() { o[0] = 1u; }\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    assert_eq!(k.describe(object_at(&k, 0), 8), "o[2]");
}

// Without a bound extent (a kernel not run) only the texel's index can be given.
#[test]
fn texel_components_are_named_by_image_coordinates_sample_and_component() {
    use lockstep::spirv::image::Extent;
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, rgba8) uniform image1DArray a1;\n\
        layout(binding = 1, rgba8) uniform image2DArray a2;\n\
        layout(binding = 2, rgba8) uniform image3D v3;\n\
        layout(binding = 3, rgba32f) uniform image2DMS ms;\n\
        layout(binding = 4, r32ui) uniform uimage2D u;\n\
        layout(binding = 5, r11f_g11f_b10f) uniform image2D p;\n\
        void main() { vec4 z = vec4(0.0); imageStore(a1, ivec2(0), z); imageStore(a2, ivec3(0), z);\n\
          imageStore(v3, ivec3(0), z); imageStore(ms, ivec2(0), 0, z); imageStore(u, ivec2(0), uvec4(0u));\n\
          imageStore(p, ivec2(0), z); }\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let obj = |binding: u32| object_at(&k, binding);
    let ext = |width, height, depth, samples| Extent {
        width,
        height,
        depth,
        samples,
    };
    // Not run: no extent, the texel's index (x = 1, y = 2, layer 1 of 4 × 3: texel 21, byte 84).
    assert_eq!(k.describe(obj(1), 87), "a2 texel 21.a");
    let mut names = k.var_names();
    for (b, e) in [
        (0, ext(4, 1, 3, 1)),
        (1, ext(4, 3, 2, 1)),
        (2, ext(2, 2, 2, 1)),
        (3, ext(3, 2, 1, 4)),
        (4, ext(4, 4, 1, 1)),
        (5, ext(2, 2, 1, 1)),
    ] {
        names.extents.insert(obj(b), e);
    }
    for (b, off, want) in [
        // rgba8: 4 bytes a texel. x = 2 of layer 1 (4 texels a layer): texel 6, byte 24 + g.
        (0, 25, "a1(2, 1).g"),
        // x = 1, y = 2, layer 1 of 4 × 3 layers: texel (1·3 + 2)·4 + 1 = 21, byte 84 + a.
        (1, 87, "a2(1, 2, 1).a"),
        // x = 1, y = 0, z = 1 of 2 × 2 slices: texel (1·2 + 0)·2 + 1 = 5, byte 20.
        (2, 20, "v3(1, 0, 1).r"),
        // rgba32f: 16 bytes a texel, 4 a component; (2, 1) sample 3 of 3 × 2 × 4 samples:
        // texel ((1·3 + 2)·4 + 3) = 23, byte 368 + b.
        (3, 23 * 16 + 8, "ms(2, 1) sample 3.b"),
        // r32ui: (3, 1) of 4 wide is texel 7.
        (4, 28, "u(3, 1).r"),
        // a packed format: no component.
        (5, 6, "p(1, 0)"),
    ] {
        assert_eq!(names.describe(obj(b), off), want, "binding {b} byte {off}");
    }
}

/// GL_KHR_shader_subgroup, "Subgroup built-in operations …: if <value> is of a vector type, the
/// operation is performed component-wise across the vector" (and SPIR-V's group instructions take
/// a scalar or vector of the result's type): a reduction, scan or gather of a vector computes each
/// component from that component of the lanes it reads. Lane 3's `x` is never written, so every
/// `x` that reads lane 3 is undefined (GLSL 4.60 §4.3) — a reduction's in every lane, an inclusive
/// scan's from lane 3, an exclusive one's from lane 4, a shuffle of lane 3's in every lane — and no
/// `y` is: `y(l) = 10·l + 1`, so the sum is Σ(10·l + 1), the inclusive scan Σ_{k ≤ l}, the
/// exclusive Σ_{k < l}, the maximum 71, the bitwise and the `&` of all eight, the shuffle 31.
#[test]
fn a_subgroup_operation_on_a_vector_is_undefined_only_in_the_components_an_undefined_value_reaches()
{
    let src = format!(
        "{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID;\n\
  uvec2 v = uvec2(l + 1u, 10u * l + 1u);\n\
  if (l == 3u) {{ uint u; v.x = u; }}\n\
  uvec2 r[6] = uvec2[6](subgroupAdd(v), subgroupInclusiveAdd(v), subgroupExclusiveAdd(v),\n\
    subgroupMax(v), subgroupAnd(v), subgroupShuffle(v, 3u));\n\
  for (int k = 0; k < 6; k++) {{ b[l * 12u + 2u * uint(k)] = r[k].x; b[l * 12u + 2u * uint(k) + 1u] = r[k].y; }}\n\
}}\n"
    );
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 96]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    let y = |l: u32| 10 * l + 1;
    for l in 0..8u32 {
        let at = |k: usize| (l as usize) * 12 + k;
        let x_undefined = [true, l >= 3, l >= 4, true, true, true];
        let ys = [
            (0..8).map(y).sum::<u32>(),
            (0..=l).map(y).sum(),
            (0..l).map(y).sum(),
            y(7),
            (0..8).map(y).fold(!0, |a, v| a & v),
            y(3),
        ];
        for k in 0..6 {
            let sx = r.status(b.word_taint(at(2 * k)));
            assert_eq!(
                matches!(sx, WordStatus::Undefined(_)),
                x_undefined[k],
                "lane {l} op {k} x: {sx:?}"
            );
            assert_eq!(w[at(2 * k + 1)], ys[k], "lane {l} op {k} y");
            assert_eq!(
                r.status(b.word_taint(at(2 * k + 1))),
                WordStatus::Exact,
                "lane {l} op {k} y"
            );
        }
        // The exclusive scan's x before lane 3 and the inclusive one's before it are defined.
        if l < 3 {
            assert_eq!(w[at(2)], (1..=l + 1).sum::<u32>(), "lane {l} inclusive x");
        }
    }
}

/// GL_KHR_shader_subgroup, `subgroupBallot`: "If <value> evaluates to true for an active
/// invocation then the bit corresponding to the <gl_SubgroupInvocationID> for the invocation is set
/// to one in the result, otherwise the bit is set to zero", and for all-true values the bits "are
/// set for only the active invocations": word `w` of the `uvec4` holds invocations 32·w to
/// 32·w + 31, and a word past the subgroup is 0. So an undefined `value` in invocation 40 leaves
/// word 1 undefined and no other — words 0, 2 and 3 at size 64, every word but 1; at size 8 an
/// undefined `value` in invocation 3 leaves word 0 undefined and words 1–3 zero.
#[test]
fn a_ballot_word_is_undefined_only_where_an_invocation_it_holds_has_an_undefined_value() {
    for (size, bad) in [(64u64, 40u32), (8, 3)] {
        let src = format!(
            "{HEAD}layout(local_size_x = {size}) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID;\n\
  bool c = (l % 3u) == 0u;\n\
  if (l == {bad}u) {{ bool u; c = u; }}\n\
  uvec4 v = subgroupBallot(c);\n\
  b[l * 4u] = v.x; b[l * 4u + 1u] = v.y; b[l * 4u + 2u] = v.z; b[l * 4u + 3u] = v.w;\n\
}}\n"
        );
        let r = run_glsl(
            &src,
            Mode::Base,
            size,
            [1, 1, 1],
            &[vec![0; 4 * size as usize]],
        );
        let b = &r.buffers[0];
        let w = u32s(&b.bytes);
        // The bits of the invocations whose `l % 3 == 0`, word by word, past the subgroup 0.
        let want = |word: u32| -> u32 {
            (0..32)
                .filter(|k| {
                    let l = 32 * word + k;
                    (l as u64) < size && l.is_multiple_of(3)
                })
                .fold(0, |a, k| a | 1 << k)
        };
        for l in 0..size as usize {
            for word in 0..4u32 {
                let at = l * 4 + word as usize;
                let st = r.status(b.word_taint(at));
                if word == bad / 32 {
                    assert!(
                        matches!(st, WordStatus::Undefined(_)),
                        "size {size} lane {l} word {word}: {st:?}"
                    );
                } else {
                    assert_eq!(
                        (w[at], st),
                        (want(word), WordStatus::Exact),
                        "size {size} lane {l} word {word}"
                    );
                }
            }
        }
    }
}

/// GL_KHR_shader_subgroup: for the subgroup min and max, "if <value> is of a vector type, the
/// operation is performed component-wise across the vector", and "If all <value>s that are used by
/// the current invocation are NaN, then the result is undefined" — per component, then. In
/// `v = (l, NaN, NaN in lanes 0–3 else 2·l)` the `y` of every lane is NaN: `subgroupMax(v).y` and
/// every inclusive `subgroupInclusiveMin(v).y` are undefined; `x` is defined (max 7, inclusive
/// min 0); `z`'s maximum is 14 (a NaN beside a number gives the number) and its inclusive
/// minimum undefined in lanes 0–3, whose prefixes are all NaN, and 8 from lane 4 on.
#[test]
fn a_subgroup_min_or_max_of_a_vector_is_undefined_only_in_a_component_whose_values_are_all_nan() {
    let src = format!(
        "{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ float b[]; }};\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID;\n\
  float nan = uintBitsToFloat(0x7fc00000u);\n\
  vec3 v = vec3(float(l), nan, l < 4u ? nan : 2.0 * float(l));\n\
  vec3 m = subgroupMax(v), s = subgroupInclusiveMin(v);\n\
  b[l * 6u] = m.x; b[l * 6u + 1u] = m.y; b[l * 6u + 2u] = m.z;\n\
  b[l * 6u + 3u] = s.x; b[l * 6u + 4u] = s.y; b[l * 6u + 5u] = s.z;\n\
}}\n"
    );
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 48]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for l in 0..8usize {
        let want: [Option<f32>; 6] = [
            Some(7.0),
            None,
            Some(14.0),
            Some(0.0),
            None,
            if l < 4 { None } else { Some(8.0) },
        ];
        for (k, want) in want.iter().enumerate() {
            let at = l * 6 + k;
            let st = r.status(b.word_taint(at));
            match want {
                Some(x) => {
                    assert_eq!(f32::from_bits(w[at]), *x, "lane {l} word {k}");
                    assert!(
                        !matches!(st, WordStatus::Undefined(_)),
                        "lane {l} word {k}: {st:?}"
                    );
                }
                None => assert!(
                    matches!(&st, WordStatus::Undefined(why) if why.contains("every value used is NaN")),
                    "lane {l} word {k}: {st:?}"
                ),
            }
        }
    }
}

/// SPV_KHR_maximal_reconvergence, Tangle: the invocations executing a subgroup operation together
/// are those that reach it together; an invocation that branched on an undefined value (GLSL 4.60
/// §4.3: `u` has no initializer) may or may not be among them, so the result of every invocation
/// there is undefined — under any reconvergence model, maximal included — and the explanation
/// names the branch and the undefined value, not a reconvergence model to turn on. Lane 3's
/// condition is undefined; lanes 0–2 take the branch (`l < 4`). After the branch, maximal
/// reconvergence reunites the subgroup: `subgroupAdd(1u)` is 8 in every lane; base reconvergence
/// does not, and says that maximal would.
#[test]
fn a_subgroup_operation_an_undefined_branch_may_reach_names_that_branch_not_a_reconvergence_model()
{
    let src = format!(
        "{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID;\n\
  bool c = l < 4u;\n\
  if (l == 3u) {{ bool u; c = u; }}\n\
  uint x = 5u;\n\
  if (c) {{ x = subgroupAdd(1u); }}\n\
  b[l * 2u] = x;\n\
  b[l * 2u + 1u] = subgroupAdd(1u);\n\
}}\n"
    );
    for mode in [Mode::Maximal, Mode::Base] {
        let r = run_glsl(&src, mode, 8, [1, 1, 1], &[vec![0; 16]]);
        let b = &r.buffers[0];
        let w = u32s(&b.bytes);
        for l in 0..3 {
            match r.status(b.word_taint(2 * l)) {
                WordStatus::Undefined(c) => assert!(
                    c.contains("subgroupAdd k.comp:14: which invocations execute it together depends on a branch on an undefined value at the selection at k.comp:13")
                        && c.contains("read of Function variable u")
                        && !c.contains("pins it down"),
                    "{mode} lane {l}: {c}"
                ),
                o => panic!("{mode} lane {l}: {o:?}"),
            }
        }
        for l in 4..8 {
            assert_eq!(
                (w[2 * l], r.status(b.word_taint(2 * l))),
                (5, WordStatus::Exact),
                "{mode} lane {l}"
            );
        }
        for l in 0..8 {
            let after = (w[2 * l + 1], r.status(b.word_taint(2 * l + 1)));
            if mode == Mode::Maximal {
                assert_eq!(after, (8, WordStatus::Exact), "lane {l} after the branch");
            } else {
                // Base reconvergence reunites nothing: here the lost path has ended, and what is
                // open is the divergence — which maximal reconvergence would close.
                assert!(
                    matches!(&after.1, WordStatus::Undefined(c) if c.contains("not pinned down under base reconvergence") && c.contains("maximal reconvergence pins it down")),
                    "base lane {l} after the branch: {:?}",
                    after.1
                );
            }
        }
    }
}

/// GL_KHR_shader_subgroup 8.17: `subgroupAll` "returns true if for all active invocations <value>
/// evaluates to true", `subgroupAny` "… for any active invocation", `subgroupAllEqual` "… <value>
/// is the same". An undefined value is still some value of its type (SPIR-V 2.2.2, "Undefined"),
/// so where the defined values decide the vote — a defined `false` for `All`, a defined `true` for
/// `Any`, two defined values that differ for `AllEqual` (in a component both define; as numbers for
/// floats) — the result is defined whatever lane 3's undefined value is; where they do not (every
/// defined vote the same way, every defined value equal) it is undefined.
#[test]
fn a_vote_its_defined_values_decide_is_defined_whatever_the_undefined_ones_are() {
    let src = format!(
        "{HEAD}#extension GL_KHR_shader_subgroup_vote : require\n\
layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID;\n\
  bool c = l > 1u, t = true;\n\
  uint x = l, y = 5u;\n\
  float f = float(l), g = 2.0;\n\
  if (l == 3u) {{ bool u; c = u; t = u; uint w; x = w; y = w; float h; f = h; g = h; }}\n\
  uint i = gl_LocalInvocationIndex * 10u;\n\
  b[i] = uint(subgroupAll(c)); b[i + 1u] = uint(subgroupAny(c));\n\
  b[i + 2u] = uint(subgroupAllEqual(uvec2(x, l))); b[i + 3u] = uint(subgroupAllEqual(x));\n\
  b[i + 4u] = uint(subgroupAllEqual(f));\n\
  b[i + 5u] = uint(subgroupAll(t)); b[i + 6u] = uint(subgroupAny(!t));\n\
  b[i + 7u] = uint(subgroupAllEqual(y)); b[i + 8u] = uint(subgroupAllEqual(uvec2(y, 1u)));\n\
  b[i + 9u] = uint(subgroupAllEqual(g));\n\
}}\n"
    );
    // Two subgroups of 8: the second's lanes are read at their own rows.
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 160]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for l in 0..16 {
        // Decided: All(c) false (lanes 0, 1), Any(c) true (lane 2), the AllEquals false (lanes 0
        // and 1 differ in `x`, `l` and `f`).
        for (k, want) in [(0, 0), (1, 1), (2, 0), (3, 0), (4, 0)] {
            assert_eq!(
                (w[l * 10 + k], r.status(b.word_taint(l * 10 + k))),
                (want, WordStatus::Exact),
                "lane {l} word {k}"
            );
        }
        // Not decided: every defined `t` is true, every defined `y` 5, every `g` 2.0.
        for k in 5..10 {
            assert!(
                matches!(r.status(b.word_taint(l * 10 + k)), WordStatus::Undefined(_)),
                "lane {l} word {k}: {:?}",
                r.status(b.word_taint(l * 10 + k))
            );
        }
    }
}

/// The object bound at (set 0, `binding`).
fn object_at(k: &Kernel, binding: u32) -> lockstep::spirv::ids::ObjectId {
    let i = k
        .objects
        .iter()
        .position(|o| o.binding == Some((0, binding)))
        .unwrap_or_else(|| panic!("no object at binding {binding}"));
    lockstep::spirv::ids::ObjectId::new(i as u32)
}

// GL_KHR_shader_subgroup 8.18/8.19 (and SPIR-V 1.6, OpGroupNonUniformShuffle*, Broadcast*,
// QuadSwap): a gather gives each active invocation "the value of `value` from" one source
// invocation — the one `id` names (Shuffle, Broadcast), `id ^ mask` (ShuffleXor), `id − delta`
// (ShuffleUp), `id + delta` (ShuffleDown), the lowest active one (BroadcastFirst), the horizontal
// neighbour (QuadSwapHorizontal) — in every component of a vector, for every value type; the
// result is undefined where that invocation is inactive or outside the subgroup, and carries the
// source's own undefined value. Expected values below are those rules applied by hand.
#[test]
fn a_gather_reads_its_source_lane_in_every_component_and_is_undefined_where_that_lane_is_inactive_or_outside(
) {
    // Subgroups of 8, two of them; lane 5 of each is inactive in the first pass, every lane in the
    // second. `v(l)` = (l·10 + 1 + 100·g, l + 2, l·3 + 7) for lane l of subgroup g, its bool l odd,
    // its double l·0.25 (a product: exact); lane 2's x is never written in the third component's source `w`.
    let src = format!(
        "{HEAD}#extension GL_KHR_shader_subgroup_quad : require\n\
layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
void gathers(uint base, uint l, uint g) {{\n\
  uvec3 v = uvec3(l * 10u + 1u + 100u * g, l + 2u, l * 3u + 7u);\n\
  bool o = (l & 1u) == 1u;\n\
  double f = double(l) * 0.25;\n\
  uint w; if (l != 2u) {{ w = l + 40u; }}\n\
  uvec3 r[6] = uvec3[6](subgroupShuffleDown(v, 1u), subgroupShuffleUp(v, 2u), subgroupShuffle(v, 3u),\n\
    subgroupShuffleXor(v, 1u), subgroupBroadcast(v, 6u), subgroupBroadcastFirst(v));\n\
  uint i = base + (g * 8u + l) * 24u;\n\
  for (int k = 0; k < 6; k++) {{ b[i + 3u * uint(k)] = r[k].x; b[i + 3u * uint(k) + 1u] = r[k].y; b[i + 3u * uint(k) + 2u] = r[k].z; }}\n\
  b[i + 18u] = uint(subgroupShuffleDown(o, 1u));\n\
  b[i + 19u] = uint(subgroupShuffleUp(f, 2u) * 4.0);\n\
  b[i + 20u] = subgroupQuadSwapHorizontal(v.x);\n\
  b[i + 21u] = subgroupShuffleDown(w, 1u);\n\
  b[i + 22u] = uint(subgroupShuffleXor(f, 1u) * 4.0);\n\
  b[i + 23u] = uint(subgroupBroadcastFirst(o));\n\
}}\n\
void main() {{\n\
  uint l = gl_SubgroupInvocationID, g = gl_SubgroupID;\n\
  if (l != 5u) {{ gathers(0u, l, g); }}\n\
  gathers(384u, l, g);\n\
}}\n"
    );
    let r = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 768]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    let v = |l: u32, g: u32| [l * 10 + 1 + 100 * g, l + 2, l * 3 + 7];
    for (pass, active) in [(0usize, 0xffu32 & !(1 << 5)), (1, 0xff)] {
        for g in 0..2u32 {
            for l in 0..8u32 {
                if active & (1 << l) == 0 {
                    continue;
                }
                let at = |k: usize| pass * 384 + ((g * 8 + l) as usize) * 24 + k;
                // source lane by the op's rule (None: outside the subgroup), then active or not
                let src_of = |s: Option<u32>| s.filter(|s| *s < 8 && active & (1 << s) != 0);
                let first = active.trailing_zeros();
                let sources = [
                    src_of(Some(l + 1)),
                    src_of(l.checked_sub(2)),
                    src_of(Some(3)),
                    src_of(Some(l ^ 1)),
                    src_of(Some(6)),
                    src_of(Some(first)),
                ];
                let what = |k: usize| format!("pass {pass} subgroup {g} lane {l} word {k}");
                let expect = |k: usize, want: Option<u32>| match want {
                    Some(x) => {
                        assert_eq!(w[at(k)], x, "{}", what(k));
                        assert_eq!(
                            r.status(b.word_taint(at(k))),
                            WordStatus::Exact,
                            "{}",
                            what(k)
                        );
                    }
                    None => assert!(
                        matches!(r.status(b.word_taint(at(k))), WordStatus::Undefined(_)),
                        "{}: {:?}",
                        what(k),
                        r.status(b.word_taint(at(k)))
                    ),
                };
                for (op, s) in sources.iter().enumerate() {
                    for c in 0..3 {
                        expect(op * 3 + c, s.map(|s| v(s, g)[c]));
                    }
                }
                expect(18, src_of(Some(l + 1)).map(|s| s & 1));
                expect(19, src_of(l.checked_sub(2)));
                expect(20, src_of(Some(l ^ 1)).map(|s| v(s, g)[0]));
                expect(21, src_of(Some(l + 1)).filter(|s| *s != 2).map(|s| s + 40));
                expect(22, src_of(Some(l ^ 1)));
                expect(23, Some(first & 1));
            }
        }
    }
    // Why: lane 4 of the first pass reads lane 5, inactive; lane 7 reads past the subgroup; lane 1
    // reads lane 2's never-written `w`.
    let chain = |k: usize| match r.status(b.word_taint(k)) {
        WordStatus::Undefined(c) => c,
        other => panic!("word {k}: {other:?}"),
    };
    assert!(chain(4 * 24).contains("inactive"), "{}", chain(4 * 24));
    assert!(
        chain(7 * 24).contains(">= subgroup size 8"),
        "{}",
        chain(7 * 24)
    );
    assert!(
        chain(24 + 21).contains("never written"),
        "{}",
        chain(24 + 21)
    );
}

// SPIR-V 3.52.x (Atomic Instructions) and SPV_EXT_shader_atomic_float_add / _min_max: each atomic
// instruction reads the value at its pointer, returns it (the "Original Value"), and stores what its
// operation makes of it and of its operand — OpAtomicLoad nothing, OpAtomicStore the operand,
// OpAtomicExchange the operand, OpAtomicCompareExchange the operand "only if Original Value equals
// Comparator", OpAtomicIIncrement/IDecrement "Original Value + 1"/"- 1", OpAtomicIAdd/ISub the sum
// and difference, SMin/UMin/SMax/UMax the signed or unsigned minimum or maximum, And/Or/Xor the
// bitwise operation, FAddEXT/FMinEXT/FMaxEXT the float sum, minimum and maximum. One instruction of
// each on its own element (every one 11, the floats 1.0), operands chosen so that no two
// operations leave the same value (`0xffffffff` is -1 signed and the largest unsigned; 6 is
// 0b0110 against 11's 0b1011). The decoder's map from opcode to operation, one instruction each.
#[test]
fn every_atomic_instruction_returns_the_original_value_and_stores_its_own_operation() {
    let text = r#"OpCapability Shader
OpCapability AtomicFloat32AddEXT
OpCapability AtomicFloat32MinMaxEXT
OpExtension "SPV_EXT_shader_atomic_float_add"
OpExtension "SPV_EXT_shader_atomic_float_min_max"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %ua ArrayStride 4
OpDecorate %fa ArrayStride 4
OpDecorate %U Block
OpMemberDecorate %U 0 Offset 0
OpDecorate %F Block
OpMemberDecorate %F 0 Offset 0
OpDecorate %m DescriptorSet 0
OpDecorate %m Binding 0
OpDecorate %r DescriptorSet 0
OpDecorate %r Binding 1
OpDecorate %fm DescriptorSet 0
OpDecorate %fm Binding 2
OpDecorate %fr DescriptorSet 0
OpDecorate %fr Binding 3
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%u0 = OpConstant %uint 0
%u16 = OpConstant %uint 16
%u3 = OpConstant %uint 3
%dev = OpConstant %uint 1
%none = OpConstant %uint 0
%v5 = OpConstant %uint 5
%v6 = OpConstant %uint 6
%v11 = OpConstant %uint 11
%v12 = OpConstant %uint 12
%vm1 = OpConstant %uint 4294967295
%vmax = OpConstant %uint 2147483647
%f25 = OpConstant %float 2.5
%f05 = OpConstant %float 0.5
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
%c2 = OpConstant %uint 2
%c3 = OpConstant %uint 3
%c4 = OpConstant %uint 4
%c5 = OpConstant %uint 5
%c6 = OpConstant %uint 6
%c7 = OpConstant %uint 7
%c8 = OpConstant %uint 8
%c9 = OpConstant %uint 9
%c10 = OpConstant %uint 10
%c11 = OpConstant %uint 11
%c12 = OpConstant %uint 12
%c13 = OpConstant %uint 13
%c14 = OpConstant %uint 14
%c15 = OpConstant %uint 15
%ua = OpTypeArray %uint %u16
%fa = OpTypeArray %float %u3
%U = OpTypeStruct %ua
%F = OpTypeStruct %fa
%pU = OpTypePointer StorageBuffer %U
%pF = OpTypePointer StorageBuffer %F
%pu = OpTypePointer StorageBuffer %uint
%pf = OpTypePointer StorageBuffer %float
%m = OpVariable %pU StorageBuffer
%r = OpVariable %pU StorageBuffer
%fm = OpVariable %pF StorageBuffer
%fr = OpVariable %pF StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%p0 = OpAccessChain %pu %m %u0 %c0
%o0 = OpAtomicLoad %uint %p0 %dev %none
%q0 = OpAccessChain %pu %r %u0 %c0
OpStore %q0 %o0
%p1 = OpAccessChain %pu %m %u0 %c1
OpAtomicStore %p1 %dev %none %v5
%p2 = OpAccessChain %pu %m %u0 %c2
%o2 = OpAtomicExchange %uint %p2 %dev %none %v5
%q2 = OpAccessChain %pu %r %u0 %c2
OpStore %q2 %o2
%p3 = OpAccessChain %pu %m %u0 %c3
%o3 = OpAtomicCompareExchange %uint %p3 %dev %none %none %v5 %v11
%q3 = OpAccessChain %pu %r %u0 %c3
OpStore %q3 %o3
%p4 = OpAccessChain %pu %m %u0 %c4
%o4 = OpAtomicCompareExchange %uint %p4 %dev %none %none %v5 %v12
%q4 = OpAccessChain %pu %r %u0 %c4
OpStore %q4 %o4
%p5 = OpAccessChain %pu %m %u0 %c5
%o5 = OpAtomicIIncrement %uint %p5 %dev %none
%q5 = OpAccessChain %pu %r %u0 %c5
OpStore %q5 %o5
%p6 = OpAccessChain %pu %m %u0 %c6
%o6 = OpAtomicIDecrement %uint %p6 %dev %none
%q6 = OpAccessChain %pu %r %u0 %c6
OpStore %q6 %o6
%p7 = OpAccessChain %pu %m %u0 %c7
%o7 = OpAtomicIAdd %uint %p7 %dev %none %v5
%q7 = OpAccessChain %pu %r %u0 %c7
OpStore %q7 %o7
%p8 = OpAccessChain %pu %m %u0 %c8
%o8 = OpAtomicISub %uint %p8 %dev %none %v5
%q8 = OpAccessChain %pu %r %u0 %c8
OpStore %q8 %o8
%p9 = OpAccessChain %pu %m %u0 %c9
%o9 = OpAtomicSMin %uint %p9 %dev %none %vm1
%q9 = OpAccessChain %pu %r %u0 %c9
OpStore %q9 %o9
%p10 = OpAccessChain %pu %m %u0 %c10
%o10 = OpAtomicUMin %uint %p10 %dev %none %vm1
%q10 = OpAccessChain %pu %r %u0 %c10
OpStore %q10 %o10
%p11 = OpAccessChain %pu %m %u0 %c11
%o11 = OpAtomicSMax %uint %p11 %dev %none %vmax
%q11 = OpAccessChain %pu %r %u0 %c11
OpStore %q11 %o11
%p12 = OpAccessChain %pu %m %u0 %c12
%o12 = OpAtomicUMax %uint %p12 %dev %none %vm1
%q12 = OpAccessChain %pu %r %u0 %c12
OpStore %q12 %o12
%p13 = OpAccessChain %pu %m %u0 %c13
%o13 = OpAtomicAnd %uint %p13 %dev %none %v6
%q13 = OpAccessChain %pu %r %u0 %c13
OpStore %q13 %o13
%p14 = OpAccessChain %pu %m %u0 %c14
%o14 = OpAtomicOr %uint %p14 %dev %none %v6
%q14 = OpAccessChain %pu %r %u0 %c14
OpStore %q14 %o14
%p15 = OpAccessChain %pu %m %u0 %c15
%o15 = OpAtomicXor %uint %p15 %dev %none %v6
%q15 = OpAccessChain %pu %r %u0 %c15
OpStore %q15 %o15
%fp0 = OpAccessChain %pf %fm %u0 %c0
%fo0 = OpAtomicFAddEXT %float %fp0 %dev %none %f25
%fq0 = OpAccessChain %pf %fr %u0 %c0
OpStore %fq0 %fo0
%fp1 = OpAccessChain %pf %fm %u0 %c1
%fo1 = OpAtomicFMinEXT %float %fp1 %dev %none %f05
%fq1 = OpAccessChain %pf %fr %u0 %c1
OpStore %fq1 %fo1
%fp2 = OpAccessChain %pf %fm %u0 %c2
%fo2 = OpAtomicFMaxEXT %float %fp2 %dev %none %f05
%fq2 = OpAccessChain %pf %fr %u0 %c2
OpStore %fq2 %fo2
OpReturn
OpFunctionEnd
"#;
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let bufs = [
        bytes_u32(&[11; 16]),
        bytes_u32(&[0; 16]),
        f(&[1.0; 3]),
        f(&[0.0; 3]),
    ];
    let r = run_asm(text, 1, &bufs);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = |binding: u32| bytes_at(&r, binding);
    // Load, Store, Exchange, CompareExchange (equal, unequal), IIncrement, IDecrement, IAdd, ISub,
    // SMin, UMin, UMax (with -1), SMax (with the largest signed value, 0x7fffffff: a NaN's bits,
    // so that a float maximum of the bit patterns keeps 11), And, Or, Xor (with 6).
    let m1 = u32::MAX;
    assert_eq!(
        u32s(out(0)),
        [
            11,
            5,
            5,
            5,
            11,
            12,
            10,
            16,
            6,
            m1,
            11,
            0x7fff_ffff,
            m1,
            2,
            15,
            13
        ]
    );
    // Every instruction but the store returns the original 11.
    let mut returned = [11; 16];
    returned[1] = 0;
    assert_eq!(u32s(out(1)), returned);
    let floats = |b: &[u8]| {
        b.chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<f32>>()
    };
    // FAddEXT (+ 2.5), FMinEXT (0.5), FMaxEXT (0.5).
    assert_eq!(floats(out(2)), [3.5, 0.5, 1.0]);
    assert_eq!(floats(out(3)), [1.0; 3]);
}

/// The decorations and first types of the assembly kernels below: `%lid` the subgroup lane id,
/// `%o` a block at set 0, binding 0 whose one member is an array `%ua` of `uint`.
const SUBGROUP_LANES_HEAD: &str = "OpDecorate %lid BuiltIn SubgroupLocalInvocationId
OpDecorate %ua ArrayStride 4
OpDecorate %U Block
OpMemberDecorate %U 0 Offset 0
OpDecorate %o DescriptorSet 0
OpDecorate %o Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
";

// SPIR-V 1.6, 3.52.24 (Non-Uniform Instructions), and SPV_KHR_subgroup_rotate: one opcode names
// several operations, told apart by its operands — OpGroupNonUniformQuadSwap by its Direction
// ("0 Horizontal, 1 Vertical, 2 Diagonal": the invocation whose quad index is xor 1, 2 or 3),
// OpGroupNonUniformRotateKHR by the optional ClusterSize (with it, the rotation stays in its
// cluster), the arithmetic instructions by their GroupOperation (Reduce, InclusiveScan,
// ExclusiveScan, ClusteredReduce over ClusterSize invocations); SMin/SMax "interpret" their
// operands as signed and UMin/UMax as unsigned whatever the type's signedness; the operations
// take vectors of up to four components; a broadcast's Id and a rotation's Delta must be
// dynamically uniform. One subgroup of 8, every lane active; x = 10·l + 1, s = l − 4; expected
// values by those rules.
#[test]
fn a_group_instruction_is_the_operation_its_operands_name() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let mut text = String::from(
        r#"OpCapability Shader
OpCapability GroupNonUniform
OpCapability GroupNonUniformArithmetic
OpCapability GroupNonUniformBallot
OpCapability GroupNonUniformClustered
OpCapability GroupNonUniformQuad
OpCapability GroupNonUniformRotateKHR
OpExtension "SPV_KHR_subgroup_rotate"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 8 1 1
"#,
    );
    text += SUBGROUP_LANES_HEAD;
    text += r#"%int = OpTypeInt 32 1
%v4uint = OpTypeVector %uint 4
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u2 = OpConstant %uint 2
%u3 = OpConstant %uint 3
%u4 = OpConstant %uint 4
%u10 = OpConstant %uint 10
%u18 = OpConstant %uint 18
%u144 = OpConstant %uint 144
%sg = OpConstant %uint 3
%ua = OpTypeArray %uint %u144
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %uint
%lid = OpVariable %pin Input
%o = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%l = OpLoad %uint %lid
%l10 = OpIMul %uint %l %u10
%x = OpIAdd %uint %l10 %u1
%s = OpISub %uint %l %u4
%si = OpBitcast %int %s
%x1 = OpIAdd %uint %x %u1
%x2 = OpIAdd %uint %x %u2
%x3 = OpIAdd %uint %x %u3
%xv = OpCompositeConstruct %v4uint %x %x1 %x2 %x3
%r0 = OpGroupNonUniformQuadSwap %uint %sg %x %u1
%r1 = OpGroupNonUniformQuadSwap %uint %sg %x %u2
%r2 = OpGroupNonUniformRotateKHR %uint %sg %x %u1
%r3 = OpGroupNonUniformRotateKHR %uint %sg %x %u1 %u4
%r4 = OpGroupNonUniformIAdd %uint %sg Reduce %x
%r5 = OpGroupNonUniformIAdd %uint %sg InclusiveScan %x
%r6 = OpGroupNonUniformIAdd %uint %sg ExclusiveScan %x
%r7 = OpGroupNonUniformIAdd %uint %sg ClusteredReduce %x %u2
%r8 = OpGroupNonUniformSMin %uint %sg Reduce %s
%r9 = OpGroupNonUniformSMax %uint %sg Reduce %s
%i10 = OpGroupNonUniformUMin %int %sg Reduce %si
%i11 = OpGroupNonUniformUMax %int %sg Reduce %si
%r10 = OpBitcast %uint %i10
%r11 = OpBitcast %uint %i11
%v = OpGroupNonUniformIAdd %v4uint %sg Reduce %xv
%r12 = OpCompositeExtract %uint %v 0
%r13 = OpCompositeExtract %uint %v 1
%r14 = OpCompositeExtract %uint %v 2
%r15 = OpCompositeExtract %uint %v 3
%r16 = OpGroupNonUniformBroadcast %uint %sg %x %l
%r17 = OpGroupNonUniformRotateKHR %uint %sg %x %l
%base = OpIMul %uint %l %u18
"#;
    for k in 0..18 {
        text += &format!(
            "%c{k} = OpIAdd %uint %base %k{k}\n%p{k} = OpAccessChain %pu %o %u0 %c{k}\nOpStore %p{k} %r{k}\n"
        );
    }
    text += "OpReturn\nOpFunctionEnd\n";
    // the constants 0..15 for the element offsets, declared before the function
    let consts: String = (0..18)
        .map(|k| format!("%k{k} = OpConstant %uint {k}\n"))
        .collect();
    let text = text.replace("%ua = OpTypeArray", &format!("{consts}%ua = OpTypeArray"));
    let m = compile(&text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let bufs = [BufferInput {
        set: 0,
        binding: 0,
        bytes: bytes_u32(&[0; 144]),
        ..Default::default()
    }];
    let r = run_model(&k, cfg(8, Mode::Maximal, [1, 1, 1]), &bufs, None).unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let w = u32s(&r.buffers[0].bytes);
    let x = |l: u32| 10 * l + 1;
    let sum = |range: std::ops::Range<u32>| range.map(x).sum::<u32>();
    for l in 0..8u32 {
        let pair = l & !1;
        let want = [
            x(l ^ 2),                    // QuadSwap Vertical
            x(l ^ 3),                    // QuadSwap Diagonal
            x((l + 1) % 8),              // RotateKHR by 1
            x((l & !3) | ((l + 1) & 3)), // RotateKHR by 1 in clusters of 4
            sum(0..8),                   // IAdd Reduce
            sum(0..l + 1),               // IAdd InclusiveScan
            sum(0..l),                   // IAdd ExclusiveScan
            sum(pair..pair + 2),         // IAdd ClusteredReduce 2
            (-4i32) as u32,              // SMin of l − 4 on a uint type: signed
            3,                           // SMax: signed
            0,                           // UMin of l − 4 on an int type: unsigned
            u32::MAX,                    // UMax: unsigned
            sum(0..8),                   // IAdd Reduce of a uvec4, component by component
            sum(0..8) + 8,
            sum(0..8) + 16,
            sum(0..8) + 24,
        ];
        let at = (l * 18) as usize;
        assert_eq!(w[at..at + 16], want, "lane {l}");
        for k in 0..16 {
            assert_eq!(
                r.status(r.buffers[0].word_taint(at + k)),
                WordStatus::Exact,
                "lane {l} word {k}"
            );
        }
        // A broadcast's Id and a rotation's Delta "must be dynamically uniform within the
        // subgroup" (SPIR-V OpGroupNonUniformBroadcast, SPV_KHR_subgroup_rotate): the lane's own
        // id is not, and neither result is defined, in any lane.
        for (k, what) in [(16, "id"), (17, "delta")] {
            match r.status(r.buffers[0].word_taint(at + k)) {
                WordStatus::Undefined(c) => assert!(
                    c.contains(&format!("its {what} is not dynamically uniform")),
                    "lane {l} word {k}: {c}"
                ),
                other => panic!("lane {l} word {k}: {other:?}"),
            }
        }
    }
}

// SPIR-V 2.2.2 and docs/interpreter.md ("Lost paths end where every path meets again"): at the
// merge of a `||` whose right side calls a function — glslang makes it a selection whose merge
// block has an OpPhi of the value each way gives — a lane that branched on an undefined value came from a predecessor that is not
// pinned down, so the value its phi picks is undefined; a lane whose branch was defined gets the
// value of the way it came from (SPIR-V OpPhi: "the value that Variable i had at the end of
// Parent i"). Lanes 2 and 3 set `x = l`, lanes 0 and 1 never write it. The barrier keeps the
// dispatch from being run once per way (`spirv/explore.rs`).
#[test]
fn a_phi_where_a_lost_path_ends_is_undefined_in_its_lanes_and_its_way_s_value_in_the_rest() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nbool two(uint l) {{ return l == 2u; }}\nvoid main() {{\n  uint l = gl_LocalInvocationIndex;\n  uint x;\n  if (l >= 2u) {{ x = l; }}\n  bool p = (x == 7u) || two(l);\n  b[l] = p ? 10u : 20u;\n  barrier();\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 4, [1, 1, 1], &[vec![0; 4]]);
    assert_eq!(r.explored, None, "the barrier stops exploring");
    let b = &r.buffers[0];
    for l in 0..2 {
        let s = r.status(b.word_taint(l));
        assert!(matches!(s, WordStatus::Undefined(_)), "b[{l}]: {s:?}");
    }
    assert_eq!(u32s(&b.bytes)[2..], [10, 20]);
    for l in 2..4 {
        assert_eq!(r.status(b.word_taint(l)), WordStatus::Exact, "b[{l}]");
    }
}

// Vulkan "Dispatching Commands" (vkCmdDispatch: "groupCountX × groupCountY × groupCountZ local
// workgroups are assembled") and the workgroup size (LocalSize x × y × z invocations each): the
// run counts every invocation of every workgroup, and every one of them writes its element.
#[test]
fn a_run_counts_every_invocation_of_every_workgroup() {
    let src = format!("{HEAD}layout(local_size_x = 4, local_size_y = 2) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uvec3 g = gl_GlobalInvocationID;\n  b[g.x + 8u * (g.y + 2u * g.z)] = 1u;\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 8, [2, 1, 3], &[vec![0; 48]]);
    assert_eq!(r.invocations, 2 * 3 * 4 * 2);
    assert_eq!(u32s(&r.buffers[0].bytes), [1; 48]);
}

// Vulkan, "Offset and Stride Assignment": in a row-major matrix, MatrixStride is the stride of its
// rows — element (column c, row r) is at r · MatrixStride + c · 4 bytes; std430 gives a `mat3`'s
// rows of vec3 a stride of 16. The matrix loaded whole, then read element by element; a column
// read and a column written through a pointer to it, its components a MatrixStride apart.
#[test]
fn a_row_major_matrix_is_loaded_row_by_row_at_its_matrix_stride() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(std430, binding = 1) readonly buffer M {{ layout(row_major) mat3 m; }};\nlayout(std430, binding = 2) buffer W {{ layout(row_major) mat3 w; }};\nvoid main() {{\n  mat3 a = m;\n  for (int c = 0; c < 3; c++) {{\n    for (int r = 0; r < 3; r++) {{\n      b[3 * c + r] = uint(a[c][r]);\n    }}\n  }}\n  vec3 col = m[2];\n  for (int r = 0; r < 3; r++) {{\n    b[9 + r] = uint(col[r]);\n  }}\n  w[1] = vec3(100.0, 200.0, 300.0);\n}}\n");
    let floats: Vec<u32> = (0..12).map(|w| (w as f32).to_bits()).collect();
    let r = run_glsl(
        &src,
        Mode::Maximal,
        1,
        [1, 1, 1],
        &[vec![0; 12], floats, vec![0; 12]],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let at = |k: u32| u32s(&r.buffers.iter().find(|b| b.binding == k).unwrap().bytes);
    // the whole matrix, element (c, r) at word 4r + c; then column 2 through a pointer to it
    let mut want: Vec<u32> = (0..9).map(|k| (k % 3) * 4 + k / 3).collect();
    want.extend([2, 6, 10]);
    assert_eq!(at(0), want);
    // column 1 stored through a pointer to it: words 1, 5, 9
    let mut w = vec![0u32; 12];
    for (r, v) in [100.0f32, 200.0, 300.0].iter().enumerate() {
        w[4 * r + 1] = v.to_bits();
    }
    assert_eq!(at(2), w);
}

// GLSL 4.60, 7.1.3 "gl_WorkGroupID ... a compute shader invocation's workgroup": a finding names
// the workgroup of the invocation that made it by its three coordinates — in a 3 × 1 × 2
// dispatch the fourth workgroup is (0, 0, 1).
#[test]
fn a_finding_names_its_workgroup_by_all_three_coordinates() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint b[6]; }};\nvoid main() {{\n  uvec3 w = gl_WorkGroupID;\n  uint k = w.x + 3u * w.z;\n  b[k == 3u ? 9u : k] = 1u;\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 1, [3, 1, 2], &[vec![0; 6]]);
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("out-of-bounds write")
            && t.contains("by workgroup (0,0,1) invocation 0")),
        "{texts:?}"
    );
}

// Instructions with more than one result or operand row, each lane its own: OpIAddCarry,
// OpISubBorrow, OpUMulExtended, OpSMulExtended (SPIR-V: the low bits and the carry, borrow or high
// bits), OpDot, OpBitFieldUExtract, and GLSL.std.450 Modf and Frexp with their `out` operand
// written through a pointer — four lanes with values of their own, and in lane 2 an undefined
// operand (`u`, never written there) that makes only lane 2's dot product and bit-field
// extract undefined. Expected values by the instructions' definitions.
#[test]
fn every_lane_of_a_two_result_or_two_row_instruction_is_its_own() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint l = gl_LocalInvocationIndex;\n  uint u;\n  if (l != 2u) {{ u = 1u; }}\n  uint at = l * 14u;\n  uint carry, borrow, hi, lo;\n  int ihi, ilo;\n  b[at] = uaddCarry(0xfffffff0u + l * 4u, 8u, carry);\n  b[at + 1u] = carry;\n  b[at + 2u] = usubBorrow(l, 2u, borrow);\n  b[at + 3u] = borrow;\n  umulExtended(0x10001u * (l + 1u), 0x30000u, hi, lo);\n  b[at + 4u] = hi;\n  b[at + 5u] = lo;\n  imulExtended(-int(l + 1u) * 0x10000, 0x20003, ihi, ilo);\n  b[at + 6u] = uint(ihi);\n  b[at + 7u] = uint(ilo);\n  b[at + 8u] = uint(dot(vec2(float(l), 1.0), vec2(2.0, float(u))));\n  b[at + 9u] = bitfieldExtract(0xf0u << l, int(u) + 3, 4);\n  float whole;\n  b[at + 10u] = floatBitsToUint(modf(float(l) * 2.5 + 0.25, whole));\n  b[at + 11u] = floatBitsToUint(whole);\n  int e;\n  b[at + 12u] = floatBitsToUint(frexp(float(l) * 10.0 + 1.0, e));\n  b[at + 13u] = uint(e);\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 4, [1, 1, 1], &[vec![0; 56]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    let frac = [0.25f32, 0.75, 0.25, 0.75];
    let whole = [0.0f32, 2.0, 5.0, 7.0];
    // frexp of 1, 11, 21, 31: m·2^e with m in [0.5, 1)
    let mant = [0.5f32, 0.6875, 0.656_25, 0.968_75];
    let exp = [1u32, 4, 5, 5];
    for l in 0..4u32 {
        let sum = 0xffff_fff0u64 + 4 * l as u64 + 8;
        let prod = 0x10001u64 * (l as u64 + 1) * 0x30000;
        let iprod = -(l as i64 + 1) * 0x10000 * 0x20003;
        let want = [
            sum as u32,
            (sum >> 32) as u32,
            l.wrapping_sub(2),
            (l < 2) as u32,
            (prod >> 32) as u32,
            prod as u32,
            (iprod >> 32) as u32,
            iprod as u32,
            2 * l + 1,
            ((0xf0u32 << l) >> 4) & 0xf,
            frac[l as usize].to_bits(),
            whole[l as usize].to_bits(),
            mant[l as usize].to_bits(),
            exp[l as usize],
        ];
        let at = (l * 14) as usize;
        for (k, want) in want.iter().enumerate() {
            let s = r.status(b.word_taint(at + k));
            if l == 2 && (k == 8 || k == 9) {
                assert!(
                    matches!(s, WordStatus::Undefined(_)),
                    "lane 2 word {k}: {s:?}"
                );
                continue;
            }
            assert!(
                !matches!(s, WordStatus::Undefined(_)),
                "lane {l} word {k}: {s:?}"
            );
            assert_eq!(w[at + k], *want, "lane {l} word {k}");
        }
    }
}

// GLSL 4.60, 8.8 "Integer Functions": bitfieldExtract "Extracts bits [offset, offset + bits - 1]
// from value ... For unsigned data types, the most significant bits of the result will be set to
// zero. For signed data types, the most significant bits will be set to the value of bit
// offset + bits - 1"; bitfieldInsert: "bits [offset, offset + bits - 1] taken from bits
// [0, bits - 1] of insert, and all other bits taken directly from the corresponding bits of base"
// — an insert value wider than `bits` leaves the base above the field alone. Four lanes with
// offsets and widths of their own, fields with the top bit set and clear; expected values bit by
// bit from those sentences.
#[test]
fn a_bit_field_is_sign_extended_from_its_top_bit_and_an_insert_keeps_only_its_low_bits() {
    let src = format!("{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint l = gl_LocalInvocationIndex;\n  uint base = 0xa5c396f0u ^ (l * 0x01010101u);\n  uint ins = 0xfffffff0u | l;\n  int off = 3 + 5 * int(l);\n  int cnt = 4 + 3 * int(l);\n  b[l * 5u] = bitfieldInsert(base, ins, off, cnt);\n  b[l * 5u + 1u] = uint(bitfieldExtract(int(base), off, cnt));\n  b[l * 5u + 2u] = uint(bitfieldExtract(int(~base), off, cnt));\n  b[l * 5u + 3u] = bitfieldExtract(base, off, cnt);\n  b[l * 5u + 4u] = uint(bitfieldExtract(int(~base), off, 0));\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 4, [1, 1, 1], &[vec![0; 20]]);
    let w = u32s(&r.buffers[0].bytes);
    let bit = |v: u32, i: u32| (v >> i) & 1;
    for l in 0..4u32 {
        let base = 0xa5c3_96f0u32 ^ (l * 0x0101_0101);
        let ins = 0xffff_fff0u32 | l;
        let (off, cnt) = (3 + 5 * l, 4 + 3 * l);
        let mut inserted = 0u32;
        let extract = |v: u32, signed: bool| {
            let top = bit(v, off + cnt - 1);
            (0..32).fold(0u32, |acc, i| {
                let b = if i < cnt {
                    bit(v, off + i)
                } else if signed {
                    top
                } else {
                    0
                };
                acc | b << i
            })
        };
        let want = [
            0,
            extract(base, true),
            extract(!base, true),
            extract(base, false),
            0,
        ];
        for i in 0..32 {
            let b = if (off..off + cnt).contains(&i) {
                bit(ins, i - off)
            } else {
                bit(base, i)
            };
            inserted |= b << i;
        }
        let at = (l * 5) as usize;
        assert_eq!(w[at], inserted, "lane {l}: bitfieldInsert");
        for (k, want) in want.iter().enumerate().skip(1) {
            assert_eq!(w[at + k], *want, "lane {l} word {k}");
        }
        // words 1 and 2 extract complementary fields: one of them has its top bit set, so the
        // sign extension is checked in every lane
        assert_ne!(want[1] >> 31, want[2] >> 31, "lane {l}");
    }
}

/// Four zero words for element `element` of the array bound at `binding` (set 0).
fn four_zero_words(binding: u32, element: u32) -> BufferInput {
    BufferInput {
        set: 0,
        binding,
        element,
        bytes: bytes_u32(&[0; 4]),
        ..Default::default()
    }
}

/// Where in `r.buffers` a run reports element `element` of the array bound at `binding`.
fn bound(r: &ModelRun, binding: u32, element: u32) -> usize {
    r.buffers
        .iter()
        .position(|b| b.binding == binding && b.element == element)
        .expect("every bound buffer is reported")
}

// SPIR-V 2.2.2 (an undefined value is some value of its type): at a branch on one, another allowed
// execution takes the other way, and what that way stores must not be reported as holding its old,
// defined value (issue 19, rule 6: "one path is not all paths") — whatever the store goes through:
// a function that calls the one that stores (and another call after it in the same block), an
// array of descriptors, a texel buffer's `imageStore`. Each way writes element 0 or element 1;
// whichever the model takes, the other way's element is never written by this execution and must
// not be `Exact`. What no way stores to keeps its defined value: the descriptor the constant index
// does not pick, a buffer only read. The barrier after the branch keeps the dispatch from being run
// once per way (`spirv/explore.rs`), so the decode-time pass of the stores each construct may make
// is what marks them.
#[test]
fn what_the_path_not_taken_would_write_is_not_defined_through_calls_descriptor_arrays_and_images() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0) buffer A { uint a[]; };\n\
        layout(binding = 1) buffer C { uint c[]; } cs[2];\n\
        layout(binding = 2, r32ui) uniform uimageBuffer img;\n\
        layout(binding = 3) buffer D { uint d[]; };\n\
        void inner(uint e) { a[e] = 5u; }\n\
        void outer(uint e, uint v) { if (v < 9u) { inner(e); } }\n\
        uint twice(uint v) { return 2u * v; }\n\
        void main() {\n  uint x;\n  uint v = d[3];\n\
          if (x == 7u) {\n    outer(0u, v);\n    v = twice(v);\n    cs[1].c[0] = 1u;\n    imageStore(img, 0, uvec4(v));\n  } else {\n\
            outer(1u, v);\n    v = twice(v);\n    cs[1].c[1] = 2u;\n    imageStore(img, 1, uvec4(v));\n  }\n  barrier();\n}\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let input = four_zero_words;
    let bufs = [
        input(0, 0),
        input(1, 0),
        input(1, 1),
        input(2, 0),
        input(3, 0),
    ];
    let r = run_model(&k, cfg(1, Mode::Maximal, [1, 1, 1]), &bufs, None).unwrap();
    assert_eq!(r.explored, None, "the barrier stops exploring");
    let out = |binding: u32, element: u32| &r.buffers[bound(&r, binding, element)];
    let stored = [
        (0, 0, "a (by a callee's callee)"),
        (1, 1, "cs[1].c"),
        (2, 0, "img"),
    ];
    for (binding, element, what) in stored {
        let b = out(binding, element);
        for w in 0..2 {
            let s = r.status(b.word_taint(w));
            assert!(s != WordStatus::Exact, "{what}[{w}] is {s:?}");
        }
    }
    for (binding, element, what) in [(1, 0, "cs[0].c"), (3, 0, "d")] {
        let b = out(binding, element);
        for w in 0..4 {
            assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "{what}[{w}]");
        }
    }
}

// The same rule's other side: what no way can store keeps its defined value. The way not taken
// stores through `cs[K]` with `K` (a specialization constant) past the end of the array of two
// descriptors — an access no execution can make within the array (Vulkan, "Descriptor Set
// Binding": an array index must be in range) — so it names no buffer: not `d`, declared beside the
// array (glslang numbers the variables as the kernel first names them: `cs[0]`, `cs[1]`, then `d`,
// the object one past the array). A dynamic index (`cs[v]`) may name every descriptor of the
// array, so `cs[0].c[1]` and `cs[1].c[1]` are not defined. The way the model takes (the uninitialised `x` runs as 0, so
// `x == 7u` is false) writes `a[0]` only, and every element of `d` stays `Exact`. (The `return`
// lets the other way leave the construct other than through its merge, so the model does not
// run both ways and goes by what the way not taken may write.)
#[test]
fn a_constant_descriptor_index_past_the_array_names_no_buffer_a_dynamic_one_every_buffer_of_it() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(constant_id = 0) const uint K = 2u;\n\
        layout(binding = 0) buffer A { uint a[]; };\n\
        layout(binding = 1) buffer C { uint c[]; } cs[2];\n\
        layout(binding = 2) buffer D { uint d[]; };\n\
        void main() {\n  uint x;\n  uint v = cs[0].c[3] + d[3];\n\
          if (x == 7u) { cs[K].c[0] = 1u; cs[v].c[1] = 1u; return; } else { a[0] = 1u + v; }\n  barrier();\n}\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let input = four_zero_words;
    let bufs = [input(0, 0), input(1, 0), input(1, 1), input(2, 0)];
    let r = run_model(&k, cfg(1, Mode::Maximal, [1, 1, 1]), &bufs, None).unwrap();
    assert_eq!(r.explored, None, "the barrier stops exploring");
    let out = |binding: u32, element: u32| &r.buffers[bound(&r, binding, element)];
    assert_eq!(u32s(&out(0, 0).bytes)[0], 1, "the model took the else way");
    for w in 0..4 {
        assert_eq!(
            r.status(out(2, 0).word_taint(w)),
            WordStatus::Exact,
            "d[{w}]"
        );
    }
    for e in 0..2 {
        let st = r.status(out(1, e).word_taint(1));
        assert!(st != WordStatus::Exact, "cs[{e}].c[1] is {st:?}");
    }
}

// Vulkan "Descriptor Set Binding" (an array of descriptors) and SPIR-V OpAccessChain: an index
// into an array of storage buffers picks that element's buffer — dynamically uniform here: the
// workgroup's id, so workgroup k writes buffer k of three, each at its own place, and every
// element written is defined.
#[test]
fn a_dynamic_index_into_an_array_of_buffers_writes_the_buffer_it_picks() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0) buffer C { uint c[]; } cs[3];\n\
        void main() {\n  uint k = gl_WorkGroupID.x;\n  cs[k].c[k] = 10u + k;\n}\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let bufs = [
        four_zero_words(0, 0),
        four_zero_words(0, 1),
        four_zero_words(0, 2),
    ];
    let r = run_model(&k, cfg(1, Mode::Maximal, [3, 1, 1]), &bufs, None).unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    for e in 0..3u32 {
        let b = &r.buffers[bound(&r, 0, e)];
        let mut want = [0u32; 4];
        want[e as usize] = 10 + e;
        assert_eq!(u32s(&b.bytes), want, "cs[{e}]");
        for w in 0..4 {
            assert_eq!(
                r.status(b.word_taint(w)),
                WordStatus::Exact,
                "cs[{e}].c[{w}]"
            );
        }
    }
}

// The same rule (SPIR-V 2.2.2; issue 19, rule 6) for a whole array copied by `OpCopyMemory`
// through a pointer that `OpCopyObject` copied: each way of a branch on an `OpUndef` copies `src`
// into a buffer of its own, so whichever way the model takes, the other way's buffer is never
// written by this execution and must not be `Exact`; `src`, only read, keeps its defined value.
#[test]
fn what_the_path_not_taken_would_copy_with_opcopymemory_is_not_defined() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %arr ArrayStride 4
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpDecorate %src DescriptorSet 0
OpDecorate %src Binding 0
OpDecorate %one DescriptorSet 0
OpDecorate %one Binding 1
OpDecorate %two DescriptorSet 0
OpDecorate %two Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%u0 = OpConstant %uint 0
%u2 = OpConstant %uint 2
%u7 = OpConstant %uint 7
%u264 = OpConstant %uint 264
%arr = OpTypeArray %uint %u2
%S = OpTypeStruct %arr
%pS = OpTypePointer StorageBuffer %S
%parr = OpTypePointer StorageBuffer %arr
%src = OpVariable %pS StorageBuffer
%one = OpVariable %pS StorageBuffer
%two = OpVariable %pS StorageBuffer
%x = OpUndef %uint
%main = OpFunction %void None %fn
%entry = OpLabel
%from = OpAccessChain %parr %src %u0
%c = OpIEqual %bool %x %u7
OpSelectionMerge %merge None
OpBranchConditional %c %then %else
%then = OpLabel
%p1 = OpAccessChain %parr %one %u0
%q1 = OpCopyObject %parr %p1
OpCopyMemory %q1 %from
OpBranch %merge
%else = OpLabel
%p2 = OpAccessChain %parr %two %u0
%q2 = OpCopyObject %parr %p2
OpCopyMemory %q2 %from
OpBranch %merge
%merge = OpLabel
OpControlBarrier %u2 %u2 %u264
OpReturn
OpFunctionEnd
";
    let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let input = |binding: u32| BufferInput {
        set: 0,
        binding,
        bytes: bytes_u32(&[binding + 1; 2]),
        ..Default::default()
    };
    let r = run_model(
        &k,
        cfg(1, Mode::Maximal, [1, 1, 1]),
        &[input(0), input(1), input(2)],
        None,
    )
    .unwrap();
    assert_eq!(r.explored, None, "the barrier stops exploring");
    for (i, b) in r.buffers.iter().enumerate() {
        for w in 0..2 {
            let s = r.status(b.word_taint(w));
            assert_eq!(
                s == WordStatus::Exact,
                b.binding == 0,
                "binding {} [{w}]: {s:?}",
                b.binding
            );
        }
        assert_eq!(b.binding, i as u32);
    }
}

// An invocation's own variables are its path's state on the path (docs/interpreter.md, "Lost paths
// end where every path meets again"), but not after it: a callee that branches on an undefined
// value and returns from one way leaves a Private variable and its `out` parameter set differently
// on each way, and the caller, past the call, reads them — SPIR-V 2.2.2: each value is one of the
// ways', not pinned down. So the indices they give are undefined and the stores through them leave
// no element of `b` or `c` defined (another execution writes `b[2]` where this one wrote `b[1]`, or
// the other way round). `f` is called twice, with a temporary of `v` and one of `w` (glslang's
// `out` arguments): its parameter may point to either, and no other variable. A variable of the
// caller the callee cannot reach keeps its defined value, and so does an index made from it — and
// its store is pinned down: the call ended the lost path.
// The barrier keeps the dispatch from being run once per way (`spirv/explore.rs`).
#[test]
fn an_own_variable_a_lost_path_stored_before_returning_is_undefined_in_the_caller() {
    let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer C {{ uint c[]; }};\nlayout(binding = 2) buffer K {{ uint k[]; }};\nuint g;\nvoid f(out uint r) {{\n  uint x;\n  if (x == 7u) {{ g = 1u; r = 1u; return; }}\n  g = 2u;\n  r = 2u;\n}}\nvoid main() {{\n  uint keep = gl_LocalInvocationIndex + 5u;\n  uint v, w;\n  f(v);\n  f(w);\n  b[g] = 3u;\n  c[v] = 4u;\n  c[w] = 4u;\n  k[keep] = 1u;\n  barrier();\n}}\n");
    let r = run_glsl(
        &src,
        Mode::Maximal,
        1,
        [1, 1, 1],
        &[vec![0; 4], vec![0; 4], vec![0; 8]],
    );
    assert_eq!(r.explored, None, "the barrier stops exploring");
    for (i, name) in [(0, "b"), (1, "c")] {
        let buf = &r.buffers[i];
        for w in [1, 2] {
            let s = r.status(buf.word_taint(w));
            assert!(matches!(s, WordStatus::Undefined(_)), "{name}[{w}]: {s:?}");
        }
    }
    // `keep` indexes `k` as a defined value, and the call ended the lost path (every way through
    // `f` returns to it): `k[5] = 1` is written by every execution, the rest by none — all of `k`
    // defined.
    let k = &r.buffers[2];
    for w in 0..8 {
        assert_eq!(r.status(k.word_taint(w)), WordStatus::Exact, "k[{w}]");
    }
    assert_eq!(u32s(&k.bytes), [0, 0, 0, 0, 0, 1, 0, 0]);
}

// SPV_KHR_maximal_reconvergence, "Reconvergence": "Given dynamic instances 'I' of an instruction
// and 'FC' of an OpFunctionCall, where the instruction of 'I' immediately succeeds the
// OpFunctionCall in binary order [...] 'T(I)' will include all non-escaping invocations in
// 'T(FC)'" — "function call return acts as reconvergence point". An invocation whose path the callee
// lost (a branch on an undefined value, one way returning early) is back in its tangle after the
// call, whichever way it went: the subgroup operation after the call reads every lane and is
// defined, as is the store after it. What the callee returned to it is not (the ways returned 1
// and 2). Under the base model the call return is no reconvergence point, so the same sum is not
// pinned down.
#[test]
fn the_return_of_a_call_ends_a_path_lost_in_the_callee() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer S {{ uint s[]; }};\nlayout(binding = 1) buffer R {{ uint r[]; }};\nuint f() {{\n  uint x;\n  if (gl_SubgroupInvocationID == 3u && x == 7u) {{ return 1u; }}\n  return 2u;\n}}\nvoid main() {{\n  uint v = f();\n  s[gl_LocalInvocationIndex] = subgroupAdd(1u);\n  r[gl_LocalInvocationIndex] = v;\n  barrier();\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 8], vec![0; 8]]);
    assert_eq!(r.explored, None, "the barrier stops exploring");
    let (s, res) = (&r.buffers[0], &r.buffers[1]);
    assert_eq!(u32s(&s.bytes), [8; 8]);
    for l in 0..8 {
        assert_eq!(r.status(s.word_taint(l)), WordStatus::Exact, "s[{l}]");
        let st = r.status(res.word_taint(l));
        if l == 3 {
            assert!(matches!(st, WordStatus::Undefined(_)), "r[3]: {st:?}");
        } else {
            assert_eq!(st, WordStatus::Exact, "r[{l}]");
        }
    }
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 8], vec![0; 8]]);
    for l in 0..8 {
        let st = r.status(r.buffers[0].word_taint(l));
        assert!(st != WordStatus::Exact, "base: s[{l}] is {st:?}");
    }
}

// "One path is not all paths" (SPIR-V 2.2.2; issue 19, rule 6) where the way not taken goes on
// past the construct: `if (undefined) { p[0] = 1; return; } q[0] = 2;` — an execution that returns
// never runs the store after the merge, one that does not return runs it, so `q[0]` is not defined
// whichever way the model took (and `p[0]` neither). Both senses of the test, so that the model's
// way is the returning one in one of them. The barrier keeps the dispatch from being run once per
// way (`spirv/explore.rs`).
#[test]
fn what_a_way_not_taken_stores_after_leaving_the_construct_is_not_defined() {
    for test in ["x == 7u", "x != 7u"] {
        let src = format!("{HEAD}layout(local_size_x = 1) in;\nlayout(binding = 0) buffer P {{ uint p[]; }};\nlayout(binding = 1) buffer Q {{ uint q[]; }};\nvoid f() {{\n  uint x;\n  if ({test}) {{ p[0] = 1u; return; }}\n  q[0] = 2u;\n}}\nvoid main() {{\n  f();\n  barrier();\n}}\n");
        let r = run_glsl(&src, Mode::Maximal, 1, [1, 1, 1], &[vec![0; 1], vec![0; 1]]);
        assert_eq!(r.explored, None, "the barrier stops exploring");
        for (i, name) in [(0, "p"), (1, "q")] {
            let s = r.status(r.buffers[i].word_taint(0));
            assert!(s != WordStatus::Exact, "{test}: {name}[0] is {s:?}");
        }
    }
}

// Vulkan, "Image Operations": a storage image has a width, a height and a depth; bytes alone do
// not give them. An image bound with only its bytes is refused naming the binding; a texel buffer
// (`imageBuffer`, Dim Buffer) is one row, as wide as its bytes hold texels.
#[test]
fn an_image_bound_without_an_extent_is_refused_and_a_texel_buffer_is_as_wide_as_its_bytes() {
    let image = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, r32ui) uniform uimage2D img;\n\
        void main() { imageStore(img, ivec2(1, 0), uvec4(5u)); }\n";
    let k = decode(&glsl(image, "k.comp"), &DecodeOptions::default()).unwrap();
    let bound = BufferInput {
        set: 0,
        binding: 0,
        bytes: vec![0; 16],
        ..Default::default()
    };
    let e = run_model(
        &k,
        cfg(4, Mode::Base, [1, 1, 1]),
        std::slice::from_ref(&bound),
        None,
    )
    .err()
    .expect("an image without an extent is refused")
    .to_string();
    assert!(
        e.contains("set 0 binding 0 (img) is an image: it needs an extent"),
        "{e}"
    );
    let texels = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) uniform uimageBuffer tb;\n\
        layout(binding = 1) buffer O { uint n; };\n\
        void main() { uint i = gl_LocalInvocationID.x; imageStore(tb, int(i), uvec4(i + 1u));\n\
          if (i == 0u) n = uint(imageSize(tb)); }\n";
    let k = decode(&glsl(texels, "k.comp"), &DecodeOptions::default()).unwrap();
    let out = BufferInput {
        set: 0,
        binding: 1,
        bytes: vec![0; 4],
        ..Default::default()
    };
    let run = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &[bound, out], None).unwrap();
    assert_eq!(u32s(&run.buffers[0].bytes), [1, 2, 3, 4]);
    assert_eq!(u32s(&run.buffers[1].bytes), [4]);
}

// SPIR-V 3.49.17 OpSwitch: each invocation branches to the target of the literal equal to its
// selector, else to the default. SPV_KHR_maximal_reconvergence, Divergence: invocations that take
// one case construct with one selector value are one tangle; "invocations with different Selector
// values executing the same case construct *may* be partitioned into the same tangle", so a
// subgroup operation in a case two values reach is not pinned down. Selector i % 4 over 8 lanes:
// case 0 takes lanes 0 and 4 (ballot 0x11), cases 1 and 2 share a target (lanes 1, 2, 5, 6), the
// default takes lanes 3 and 7 (ballot 0x88).
#[test]
fn a_divergent_switch_sends_each_lane_to_its_case_and_pins_a_case_one_value_reaches() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nlayout(binding = 1) buffer C {{ uint c[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  switch (i % 4u) {{\n    case 0u: b[i] = 10u + i; c[i] = subgroupBallot(true).x; break;\n    case 1u: case 2u: b[i] = 20u + i; c[i] = subgroupBallot(true).x; break;\n    default: b[i] = 30u + i; c[i] = subgroupBallot(true).x; break;\n  }}\n}}\n");
    let r = run_glsl(&src, Mode::Maximal, 8, [1, 1, 1], &[vec![0; 8], vec![0; 8]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [10, 21, 22, 33, 14, 25, 26, 37]);
    let c = u32s(&r.buffers[1].bytes);
    for (lane, ballot) in [(0, 0x11), (4, 0x11), (3, 0x88), (7, 0x88)] {
        assert_eq!(c[lane], ballot, "lane {lane}");
        assert_eq!(r.status(r.buffers[1].word_taint(lane)), WordStatus::Exact);
    }
    for lane in [1, 2, 5, 6] {
        match r.status(r.buffers[1].word_taint(lane)) {
            // Maximal reconvergence itself leaves this open: no advice to turn it on.
            WordStatus::Undefined(c) => assert!(
                c.contains("not pinned down even under maximal reconvergence")
                    && !c.contains("pins it down"),
                "{c}"
            ),
            o => panic!("lane {lane}: {o:?}"),
        }
    }
}

// Bad input gets one clear error naming what is missing: a run given no buffer for a binding
// the module declares names the set, the binding (and the element of an array of buffers), the
// variable, its size, and the `--buffer` flag that gives it (`SET.` before the binding outside
// set 0, `[ELEMENT]` after it for an element of an array of buffers); an image's name says it is
// one, not a sampler.
#[test]
fn a_run_without_a_buffer_the_module_declares_names_the_binding_and_the_flag() {
    let k = decode(
        &glsl(
            "#version 450\nlayout(local_size_x = 1) in;\n\
             layout(set = 0, binding = 0) buffer A { uint a[]; };\n\
             layout(set = 1, binding = 2) buffer B { uint b[4]; } bs[2];\n\
             void main() { a[0] = bs[1].b[0]; }\n",
            "k.comp",
        ),
        &DecodeOptions::default(),
    )
    .unwrap();
    let err =
        |inputs: &[BufferInput]| match run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), inputs, None) {
            Ok(_) => panic!("a run without every buffer"),
            Err(e) => e.to_string(),
        };
    let e = err(&[]);
    assert!(
        e.contains("no buffer for set 0 binding 0 (")
            && e.contains("plus its runtime array")
            && e.contains("give one with --buffer 0=SPEC"),
        "{e}"
    );
    assert!(!e.contains("sampler"), "{e}");
    let a = BufferInput {
        bytes: vec![0; 16],
        ..Default::default()
    };
    let b0 = BufferInput {
        set: 1,
        binding: 2,
        bytes: vec![0; 16],
        ..Default::default()
    };
    let e = err(&[a, b0]);
    assert!(
        e.contains(
            "no buffer for set 1 binding 2 (bs[1], element 1 of an array of 2 descriptors, 16 bytes)"
        ) && e.contains("give one with --buffer 1.2[1]=SPEC"),
        "{e}"
    );
    // An array of one descriptor is one buffer at its binding: `--buffer` binds it.
    let one = decode(
        &glsl(
            "#version 450\nlayout(local_size_x = 1) in;\n\
             layout(set = 1, binding = 2) buffer B { uint b[4]; } bs[1];\n\
             void main() { bs[0].b[0] = 1u; }\n",
            "k.comp",
        ),
        &DecodeOptions::default(),
    )
    .unwrap();
    let e = match run_model(&one, cfg(4, Mode::Base, [1, 1, 1]), &[], None) {
        Ok(_) => panic!("a run without its buffer"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("no buffer for set 1 binding 2")
            && e.contains("give one with --buffer 1.2=SPEC"),
        "{e}"
    );
    assert!(!e.contains("BUFFER_ARRAY"), "{e}");
}

// SPIR-V 3.21 BuiltIn NumWorkgroups: "number of workgroups in the dispatch", the same in every
// invocation. A dispatch of 3 × 2 × 1 workgroups of 2 invocations: each writes it at its own index.
#[test]
fn every_invocation_reads_the_dispatchs_workgroup_count() {
    let src = format!("{HEAD}layout(local_size_x = 2) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint at = 3u * (2u * (gl_WorkGroupID.y * 3u + gl_WorkGroupID.x) + gl_LocalInvocationIndex);\n  b[at] = gl_NumWorkGroups.x; b[at + 1u] = gl_NumWorkGroups.y; b[at + 2u] = gl_NumWorkGroups.z;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 4, [3, 2, 1], &[vec![0; 36]]);
    assert_eq!(u32s(&r.buffers[0].bytes), [3, 2, 1].repeat(12));
}

// SPIR-V 3.49.13: OpMatrixTimesVector ("Matrix is a … matrix … Vector … the number of columns …
// the result … has the same number of components as Matrix's columns": row r is Σ_c M[c][r]·v[c]),
// OpVectorTimesMatrix (component c is the dot product of the vector with column c),
// OpMatrixTimesMatrix (column j of the product is Left × column j of Right) and OpTranspose. With
// M = s·[(1,2,3), (4,5,6)] (two columns of three rows), s = i + 1, integers in floats, all exact:
// M·(1,10) = s·(41,52,63); (1,1,2)·M = s·(9,21); Mᵀ·M = s²·[(14,32),(32,77)].
#[test]
fn matrix_products_take_rows_of_the_left_and_columns_of_the_right() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ float b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  float s = float(i + 1u);\n  mat2x3 m = mat2x3(vec3(1.0, 2.0, 3.0), vec3(4.0, 5.0, 6.0)) * s;\n  vec3 r = m * vec2(1.0, 10.0);\n  vec2 q = vec3(1.0, 1.0, 2.0) * m;\n  mat2 p = transpose(m) * m;\n  uint at = 9u * i;\n  b[at] = r.x; b[at + 1u] = r.y; b[at + 2u] = r.z;\n  b[at + 3u] = q.x; b[at + 4u] = q.y;\n  b[at + 5u] = p[0][0]; b[at + 6u] = p[0][1]; b[at + 7u] = p[1][0]; b[at + 8u] = p[1][1];\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 72]]);
    let w: Vec<f32> = u32s(&r.buffers[0].bytes)
        .into_iter()
        .map(f32::from_bits)
        .collect();
    for i in 0..8usize {
        let s = (i + 1) as f32;
        let want = [41.0, 52.0, 63.0, 9.0, 21.0]
            .map(|x| x * s)
            .into_iter()
            .chain([14.0, 32.0, 32.0, 77.0].map(|x| x * s * s))
            .collect::<Vec<f32>>();
        assert_eq!(w[9 * i..9 * i + 9], want[..], "lane {i}");
        // Vulkan, "Precision and Operation of SPIR-V Instructions": a device may contract and
        // reorder these sums of products, so the model computes them uncontracted and marks them
        // inexact (compared within a bound), not exact and not undefined.
        for k in 0..9 {
            assert_eq!(
                r.status(r.buffers[0].word_taint(9 * i + k)),
                WordStatus::Inexact,
                "lane {i} word {k}"
            );
        }
    }
}

// SPIR-V 3.49.15 OpSelect: "Select between two objects … Condition … chooses Object 1 where true,
// Object 2 where false", per lane; the result is the chosen object, so it is undefined exactly
// where the chosen object is (lane 4: 12 / 0, SPIR-V OpUDiv "behavior is undefined if Operand 2
// is 0"). Lanes 0–3 take i, lanes 4–7 take 12 / (i − 4) — as the first object (`y`) and as the
// second (`z`).
#[test]
fn a_select_takes_the_value_and_taint_of_the_operand_its_condition_picks_in_each_lane() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  uint x = 12u / (i - 4u);\n  uint y = i >= 4u ? x : i;\n  uint z = i < 4u ? i : x;\n  b[i] = y;\n  b[8u + i] = z;\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 16]]);
    let w = u32s(&r.buffers[0].bytes);
    for at in [0, 8] {
        for (i, want) in [(0, 0), (1, 1), (2, 2), (3, 3), (5, 12), (6, 6), (7, 4)] {
            assert_eq!(w[at + i], want, "word {}", at + i);
            let t = r.buffers[0].word_taint(at + i);
            assert_eq!(r.status(t), WordStatus::Exact, "word {}", at + i);
        }
        match r.status(r.buffers[0].word_taint(at + 4)) {
            WordStatus::Undefined(c) => assert!(c.contains("division by zero"), "{c}"),
            o => panic!("word {}: {o:?}", at + 4),
        }
    }
}

// SPIR-V 3.49.12 OpVectorExtractDynamic ("Extract a single, dynamically selected, component of a
// vector"), which glslang writes for a vector expression indexed by a run-time value: each lane
// reads the component its own index names. v = (i, 2i, 3i, 4i), index
// (i + 1) mod 4: lane i reads ((i + 1) mod 4 + 1)·i.
#[test]
fn a_dynamic_component_of_a_local_vector_is_the_one_each_lane_indexes() {
    let src = format!("{HEAD}layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint i = gl_LocalInvocationIndex;\n  uvec4 v = uvec4(i, 2u * i, 3u * i, 4u * i);\n  b[i] = (v + 0u)[(i + 1u) & 3u];\n}}\n");
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 8]]);
    let want: Vec<u32> = (0..8).map(|i| ((i + 1) % 4 + 1) * i).collect();
    assert_eq!(u32s(&r.buffers[0].bytes), want);
}

// SPIR-V 2.2.2 / OpVariable: a Function or Private variable without an initializer starts every
// invocation undefined — each workgroup's invocations are new invocations, whatever an earlier
// workgroup run on the same thread (the interpreter reuses one workgroup state per thread) left in
// the same memory. Sixteen workgroups of four: the even ones write an invocation's own array
// element (dynamically indexed, so kept in memory) and a Private array's; the odd ones read both
// without writing: undefined ("never written"), not the value the previous workgroup stored.
#[test]
fn a_variable_a_workgroup_never_writes_is_undefined_whatever_an_earlier_workgroup_wrote() {
    let src = format!(
        "{HEAD}layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\n\
         uint p[4];\nvoid main() {{\n  uint a[4];\n  uint i = gl_LocalInvocationID.x;\n\
         \x20 if (gl_WorkGroupID.x % 2u == 0u) {{ a[i] = 5u + i; p[i] = 9u; }}\n\
         \x20 b[2u * gl_GlobalInvocationID.x] = a[i];\n  b[2u * gl_GlobalInvocationID.x + 1u] = p[i];\n}}\n"
    );
    let r = run_glsl(&src, Mode::Base, 4, [16, 1, 1], &[vec![0; 128]]);
    let b = &r.buffers[0];
    let vals = u32s(&b.bytes);
    for wg in 0..16 {
        for i in 0..4 {
            let at = 2 * (4 * wg + i);
            if wg % 2 == 0 {
                assert_eq!(r.status(b.word_taint(at)), WordStatus::Exact, "b[{at}]");
                assert_eq!((vals[at], vals[at + 1]), (5 + i as u32, 9), "b[{at}]");
            } else {
                for w in [at, at + 1] {
                    match r.status(b.word_taint(w)) {
                        WordStatus::Undefined(chain) => {
                            assert!(chain.contains("never written"), "b[{w}]: {chain}")
                        }
                        s => panic!("workgroup {wg}, b[{w}]: {s:?}"),
                    }
                }
            }
        }
    }
}

// GLSL 4.60 §6.2 (selection): only the invocations whose condition is true execute the branch.
// Here the first three lanes of each subgroup of eight take it — runs of active lanes that end
// before their subgroup's last lane, followed by a subgroup whose lane 0 is active (the executor
// joins runs across a subgroup boundary only where one ends at the last lane). Each invocation's
// own `x` (a local carried past the branch), its shared slot and its result change only where
// the branch ran: o[i] = i there, 100 elsewhere.
#[test]
fn a_branch_the_first_lanes_of_each_subgroup_take_changes_only_those_lanes() {
    let src = format!(
        "{HEAD}layout(local_size_x = 32) in;\nlayout(binding = 0) buffer B {{ uint o[]; }};\n\
         shared uint s[32];\nvoid main() {{\n  uint i = gl_LocalInvocationID.x;\n  uint x = 100u;\n\
         \x20 s[i] = 100u;\n  if ((i & 7u) < 3u) {{ x = i; s[i] = i + 1000u; }}\n\
         \x20 o[i] = x;\n  o[32u + i] = s[i];\n}}\n"
    );
    for size in [8, 16] {
        let r = run_glsl(&src, Mode::Base, size, [1, 1, 1], &[vec![0; 64]]);
        let o = u32s(&r.buffers[0].bytes);
        for i in 0..32u32 {
            let taken = (i & 7) < 3;
            assert_eq!(
                o[i as usize],
                if taken { i } else { 100 },
                "size {size}, o[{i}]"
            );
            assert_eq!(
                o[32 + i as usize],
                if taken { i + 1000 } else { 100 },
                "size {size}, s[{i}]"
            );
        }
    }
}

// SPIR-V, OpFunctionCall: "Argument N is the object to copy to parameter N", and OpReturnValue's
// value is the call's result — each invocation's own. A call made by the last lanes of a subgroup
// only (lanes 2 and 3 of 4) passes each lane's own argument by value (as naga writes calls) —
// undefined in lane 3 (an `OpSelect` of `OpUndef` there) — and each gets its own result back;
// lanes 0 and 1 keep 9. `pick` has two blocks, so it is called, not inlined; its second call
// returns the constant 0 where the first returned a value undefined in lane 3, so the result's
// taint is replaced, not kept: w = 2·v + 0.
#[test]
fn a_call_by_the_last_lanes_only_passes_and_returns_each_lane_s_own_value_and_taint() {
    let text = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ua ArrayStride 4
OpMemberDecorate %U 0 Offset 0
OpDecorate %U Block
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%fpick = OpTypeFunction %uint %uint %uint
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u2 = OpConstant %uint 2
%u3 = OpConstant %uint 3
%u9 = OpConstant %uint 9
%u100 = OpConstant %uint 100
%u100x = OpConstant %uint 200
%undef = OpUndef %uint
%ua = OpTypeRuntimeArray %uint
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%out = OpVariable %pU StorageBuffer
%pick = OpFunction %uint None %fpick
%pv = OpFunctionParameter %uint
%pk = OpFunctionParameter %uint
%pe = OpLabel
%big = OpUGreaterThan %bool %pk %u100
OpSelectionMerge %pm None
OpBranchConditional %big %pz %pm
%pz = OpLabel
OpReturnValue %u0
%pm = OpLabel
%dbl = OpIMul %uint %pv %u2
OpReturnValue %dbl
OpFunctionEnd
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%v1 = OpIAdd %uint %i %u1
%is3 = OpIEqual %bool %i %u3
%v = OpSelect %uint %is3 %undef %v1
%late = OpUGreaterThanEqual %bool %i %u2
OpSelectionMerge %m None
OpBranchConditional %late %call %m
%call = OpLabel
%a = OpFunctionCall %uint %pick %v %i
%b = OpFunctionCall %uint %pick %i %u100x
%ab = OpIAdd %uint %a %b
OpBranch %m
%m = OpLabel
%w = OpPhi %uint %ab %call %u9 %entry
%po = OpAccessChain %pu %out %u0 %i
OpStore %po %w
OpReturn
OpFunctionEnd
"#;
    let r = run_asm(text, 4, &[bytes_u32(&[0; 4])]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    assert_eq!(w[..3], [9, 9, 6]);
    for l in 0..3 {
        assert_eq!(r.status(b.word_taint(l)), WordStatus::Exact, "lane {l}");
    }
    assert!(
        matches!(r.status(b.word_taint(3)), WordStatus::Undefined(_)),
        "{:?}",
        r.status(b.word_taint(3))
    );
}

// docs/interpreter.md, "Every way of a branch on an undefined value": a dispatch whose invocations
// meet at most `MAX_BRANCHES` (6) branches on undefined values is explored, all 2⁶ = 64 sequences
// of ways; one with 7 is not (its paths stay lost). Each branch adds 1 on both ways, so every way
// leaves x = n: defined with 6 branches, undefined with 7 (sound, coarser).
#[test]
fn six_branches_on_undefined_values_are_explored_and_seven_are_not() {
    let src = |n: usize| {
        let mut body = String::new();
        for k in 0..n {
            body += &format!("  uint u{k};\n  if (u{k} > 5u) {{ x += 1u; }} else {{ x += 1u; }}\n");
        }
        format!("{UNDEF_HEAD}void main() {{\n  uint x = 0u;\n{body}  b[gl_LocalInvocationIndex] = x;\n}}\n")
    };
    let r = run_glsl(&src(6), Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    let e = r.explored.expect("explored");
    assert_eq!((e.branches, e.ways, e.units), (6, 64, 8));
    assert_eq!(u32s(&r.buffers[0].bytes), [6; 8]);
    for w in 0..8 {
        assert_eq!(
            r.status(r.buffers[0].word_taint(w)),
            WordStatus::Exact,
            "b[{w}]"
        );
    }
    let r = run_glsl(&src(7), Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    assert_eq!(r.explored, None);
    for w in 0..8 {
        let chain = undefined_chain(&r, w);
        assert!(
            chain.contains("path depends on an undefined value"),
            "b[{w}]: {chain}"
        );
    }
}

/// GL_KHR_shader_subgroup, 7.1: `gl_SubgroupEqMask` has bit `gl_SubgroupInvocationID` set,
/// `…GeMask` the bits `>=` it, `…GtMask` `>`, `…LeMask` `<=`, `…LtMask` `<`, none at or past
/// `gl_SubgroupSize` — read by a kernel in every lane of two subgroups of 8 (only the first word
/// of each `uvec4` can hold a bit).
#[test]
fn the_subgroup_mask_built_ins_set_the_bits_their_equations_name() {
    let src = "#version 450\n#extension GL_KHR_shader_subgroup_ballot : require\n\
layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B { uvec4 b[]; };\n\
void main() {\n  uint i = gl_LocalInvocationIndex * 5u;\n  b[i] = gl_SubgroupEqMask;\n\
  b[i + 1u] = gl_SubgroupGeMask;\n  b[i + 2u] = gl_SubgroupGtMask;\n\
  b[i + 3u] = gl_SubgroupLeMask;\n  b[i + 4u] = gl_SubgroupLtMask;\n}\n";
    let r = run_glsl(src, Mode::Base, 8, [1, 1, 1], &[vec![7; 16 * 5 * 4]]);
    let v = u32s(&r.buffers[0].bytes);
    let eqs: [fn(u32, u32) -> bool; 5] = [
        |b, id| b == id,
        |b, id| b >= id,
        |b, id| b > id,
        |b, id| b <= id,
        |b, id| b < id,
    ];
    for inv in 0..16u32 {
        let id = inv % 8;
        for (k, f) in eqs.iter().enumerate() {
            let want: u32 = (0..8).filter(|&b| f(b, id)).map(|b| 1u32 << b).sum();
            let at = ((inv * 5) as usize + k) * 4;
            assert_eq!(v[at..at + 4], [want, 0, 0, 0], "invocation {inv}, mask {k}");
        }
    }
}

/// SPIR-V 2.2.2: an `OpUndef` is "an undefined value" — also when it is a constant of the module
/// and a shuffle's Id: `OpGroupNonUniformShuffle` by it reads an invocation nobody chose, so every
/// lane's result is undefined (the taint of the Id reaches the result), not lane 0's value.
#[test]
fn a_shuffle_by_an_undefined_constant_id_is_undefined_in_every_lane() {
    let text = format!(
        r#"OpCapability Shader
OpCapability GroupNonUniform
OpCapability GroupNonUniformShuffle
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 8 1 1
{SUBGROUP_LANES_HEAD}%u0 = OpConstant %uint 0
%u8 = OpConstant %uint 8
%sg = OpConstant %uint 3
%ud = OpUndef %uint
%ua = OpTypeArray %uint %u8
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %uint
%lid = OpVariable %pin Input
%o = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%l = OpLoad %uint %lid
%r = OpGroupNonUniformShuffle %uint %sg %l %ud
%p = OpAccessChain %pu %o %u0 %l
OpStore %p %r
OpReturn
OpFunctionEnd
"#
    );
    let r = run_asm(&text, 8, &[bytes_u32(&[9; 8])]);
    for w in 0..8 {
        match r.status(r.buffers[0].word_taint(w)) {
            WordStatus::Undefined(chain) => assert!(chain.contains("OpUndef"), "o[{w}]: {chain}"),
            s => panic!("o[{w}] is {s:?}, not undefined"),
        }
    }
}

/// A loop that goes round many times writing no memory, changing only its counter, is not a loop
/// that never ends: the check for a loop stuck in its state (a spin-wait on another workgroup)
/// compares the values of every register the loop defines, the counter among them.
#[test]
fn a_long_loop_that_only_counts_is_not_taken_for_one_that_never_ends() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint b[]; };\n\
void main() {\n  uint k = 0u;\n  while (k < 5000u) { k++; }\n  b[gl_LocalInvocationIndex] = k;\n}\n";
    let r = run_glsl(src, Mode::Base, 8, [1, 1, 1], &[vec![0; 8]]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(u32s(&r.buffers[0].bytes), [5000; 8]);
}

/// The other limit on exploring: the ways together may not run more than
/// `explore::MAX_LANE_INSTRUCTIONS` (2^28) lane-instructions, so one undefined branch is not
/// explored after a first run of more than 2^27 — even where each workgroup alone stays far under
/// its own step limit (64 workgroups of ~2.2 M each here), so that every way would finish.
#[test]
fn a_branch_is_not_explored_when_its_ways_together_would_run_too_long() {
    let src = "#version 450\nlayout(local_size_x = 64) in;\nlayout(binding = 0) buffer B { uint b[]; };\n\
void main() {\n  uint x = 0u;\n  for (uint k = 0u; k < 3000u; k++) { x += k; }\n  uint u;\n\
  if (u > 5u) { x += 1u; } else { x += 1u; }\n  b[gl_GlobalInvocationID.x] = x;\n}\n";
    let r = run_glsl(src, Mode::Base, 32, [64, 1, 1], &[vec![0; 64 * 64]]);
    assert!(
        r.lane_instructions > 1 << 27 && r.lane_instructions < 1 << 28,
        "{}",
        r.lane_instructions
    );
    assert_eq!(r.explored, None);
    let chain = undefined_chain(&r, 0);
    assert!(
        chain.contains("path depends on an undefined value"),
        "{chain}"
    );
}

// An out-of-bounds write is reported once per instruction, its examples naming the byte each
// invocation wrote and the invocation (Vulkan: an access outside the bound range is undefined
// behaviour without robustness): `b[4 + i]` of a 4-element array, by invocations 0 … 3, bytes
// 16, 20, 24, 28.
#[test]
fn an_out_of_bounds_write_names_each_byte_and_invocation() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) buffer B { uint b[4]; };\n\
void main() { b[4u + gl_LocalInvocationIndex] = 1u; }\n";
    let r = run_glsl(src, Mode::Base, 4, [1, 1, 1], &[vec![0; 8]]);
    let (why, items) = r
        .groups
        .iter()
        .map(|g| r.group_text(g))
        .find(|(why, _)| why.starts_with("out-of-bounds"))
        .expect("an out-of-bounds write");
    assert!(
        why.starts_with("out-of-bounds write of b at k.comp:4"),
        "{why}"
    );
    assert_eq!(items.len(), 4, "{items:?}");
    assert!(items[0].starts_with("byte 16 by "), "{items:?}");
    assert!(items[0].contains("invocation 0"), "{items:?}");
    assert!(items[3].starts_with("byte 28 by "), "{items:?}");
}

/// The error decoding the assembly `text` gives, as text: it must assemble and must be refused.
fn asm_refused(text: &str) -> String {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    match decode(&m.words, &DecodeOptions::default()) {
        Ok(_) => panic!("decoded: {text}"),
        Err(e) => e.to_string(),
    }
}

/// Modules that break a rule of SPIR-V or Vulkan, or use what the interpreter does not run, are
/// refused at decode time with the rule named — never run with a guessed meaning. Each case is the
/// same small module with one thing changed; the rule is cited beside it.
#[test]
fn a_module_that_breaks_a_type_constant_or_variable_rule_is_refused_naming_it() {
    let template = "; SPIR-V
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
OpName %buf \"buf\"
OpName %bad \"bad\"
OpDecorate %arr ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
; DECO
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%u0 = OpConstant %uint 0
%v2 = OpTypeVector %uint 2
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pb = OpTypePointer StorageBuffer %blk
%buf = OpVariable %pb StorageBuffer
; EXTRA
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
";
    let binding = "OpDecorate %bad DescriptorSet 0\nOpDecorate %bad Binding 1\n";
    let image = |ty: &str| {
        (
            binding,
            format!("%img = OpTypeImage {ty}\n%pi = OpTypePointer UniformConstant %img\n%bad = OpVariable %pi UniformConstant\n"),
        )
    };
    let cases: Vec<((&str, String), &str)> = vec![
        // OpTypeArray: "Length must be … at least 1"
        (("", "%bad = OpTypeArray %uint %u0\n".into()), "array of length 0"),
        // OpTypeVector: "Component Count must be at least 2" (up to 16: long vectors)
        (("", "%bad = OpTypeVector %uint 1\n".into()), "vector of 1 components"),
        (("", "%bad = OpTypeVector %uint 17\n".into()), "vector of 17 components"),
        // OpTypeMatrix: "Column Count must be at least 2"
        (
            ("", "%fv = OpTypeVector %float 2\n%bad = OpTypeMatrix %fv 1\n".into()),
            "matrix of 1 columns",
        ),
        // OpTypeVector: "Component Type must be a scalar type"
        (("", "%bad = OpTypeVector %v2 2\n".into()), "vector of a non-scalar"),
        // OpTypeMatrix: "Column Type is the type of each column … must be a vector"
        (("", "%bad = OpTypeMatrix %uint 2\n".into()), "matrix columns must be vectors"),
        // OpConstantComposite: "There must be exactly one Constituent for each … component"
        (
            ("", "%bad = OpConstantComposite %v2 %u0\n".into()),
            "composite constant with the wrong number of components",
        ),
        // Vulkan (Shader Resource Interface): a UniformConstant variable is an image, a sampler,
        // a texel buffer or an array of them — GLSL's loose `uniform uint x;` is not one
        (
            (
                binding,
                "%pu = OpTypePointer UniformConstant %uint\n%bad = OpVariable %pu UniformConstant\n"
                    .into(),
            ),
            "variable bad: a UniformConstant variable that is not an image, sampler or texel buffer",
        ),
        // OpTypeImage: Vulkan has no arrayed 3D images (VUID-StandaloneSpirv-OpTypeImage-04656)
        (image("%float 3D 0 1 0 2 Rgba32f"), "an arrayed 3D image"),
        // Vulkan, "Image Format and Type Matching": the sampled type is the format's numeric type
        (
            image("%uint 2D 0 0 0 2 Rgba32f"),
            "Vulkan requires the sampled type to match the format's numeric type",
        ),
        // not interpreted: cube storage images
        (image("%float Cube 0 0 0 2 Rgba32f"), "an image of Dim Cube"),
        // not interpreted: a runtime-sized array of descriptors (descriptor indexing)
        (
            (
                binding,
                "%ra = OpTypeRuntimeArray %blk\n%pra = OpTypePointer StorageBuffer %ra\n%bad = OpVariable %pra StorageBuffer\n"
                    .into(),
            ),
            "variable bad: a runtime-sized array of descriptors",
        ),
    ];
    for ((deco, extra), want) in cases {
        let text = template
            .replace("; DECO\n", deco)
            .replace("; EXTRA\n", &extra);
        let e = asm_refused(&text);
        assert!(e.contains(want), "{extra}: {e}");
    }
    // and a buffer variable without its binding (Vulkan: every resource variable has a
    // DescriptorSet and a Binding decoration)
    let e = asm_refused(&template.replace("OpDecorate %buf Binding 0\n", ""));
    assert!(
        e.contains("buffer variable buf has no Binding decoration"),
        "{e}"
    );
}

/// What a run is given must fit the shader, or the run is refused naming the binding: a buffer
/// holds at least its block's fixed part (Vulkan, "Shader Resource Interface": the bound range
/// covers the block's static size); a descriptor's range lies inside its buffer and starts at a
/// multiple of 4 bytes (here, as every storage-buffer offset alignment Vulkan allows is one); and a
/// buffer given for a binding the shader does not declare, directly or as the memory another
/// binding shares, is a mistake named rather than ignored.
#[test]
fn bindings_that_do_not_fit_the_shader_are_refused_naming_the_binding() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { uvec4 head; uint tail[]; } b;\nvoid main() { b.head.x = 1u; }\n";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let input = |binding: u32, bytes: usize| BufferInput {
        set: 0,
        binding,
        bytes: vec![0; bytes],
        ..Default::default()
    };
    let err = |inputs: &[BufferInput]| -> String {
        match run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), inputs, None) {
            Ok(_) => panic!("ran"),
            Err(e) => e.to_string(),
        }
    };
    // the fixed part, `uvec4 head`, is 16 bytes
    assert!(run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &[input(0, 16)], None).is_ok());
    let e = err(&[input(0, 8)]);
    assert!(
        e.contains("the buffer for set 0 binding 0 has 8 bytes")
            && e.contains("needs at least 16 bytes"),
        "{e}"
    );
    // a window that starts past its end, written as a struct (it is meant to be empty)
    let backwards = std::ops::Range { start: 20, end: 16 };
    for window in [2..18, 0..40, backwards] {
        let e = err(&[BufferInput {
            window: Some(window.clone()),
            ..input(0, 32)
        }]);
        assert!(
            e.contains(&format!(
                "sees bytes {}..{} of a 32-byte buffer",
                window.start, window.end
            )),
            "{e}"
        );
    }
    // a window of 16 bytes at 16 is the block: `b.head.x = 1` lands at byte 16 of the buffer,
    // the window's first word (the run gives back what the descriptor sees)
    let r = run_model(
        &k,
        cfg(4, Mode::Base, [1, 1, 1]),
        &[BufferInput {
            window: Some(16..32),
            ..input(0, 32)
        }],
        None,
    )
    .unwrap();
    assert_eq!(u32s(&r.buffers[0].bytes), [1, 0, 0, 0]);
    let e = err(&[input(0, 16), input(3, 4)]);
    assert!(
        e.contains("set 0 binding 3 is given a buffer, but the shader declares no such binding"),
        "{e}"
    );
    let e = err(&[
        BufferInput {
            alias_of: Some(1),
            ..input(0, 0)
        },
        input(7, 16),
    ]);
    assert!(
        e.contains("is given as the memory of another binding that the shader does not declare"),
        "{e}"
    );
}

/// The same for instructions in a function: each case is one instruction in a small module's body,
/// refused at decode time with its rule — even where no invocation would run it.
#[test]
fn an_instruction_that_breaks_its_rule_or_belongs_to_another_stage_is_refused_naming_it() {
    let template = "; SPIR-V
OpCapability Shader
OpCapability Int64
; LINKAGE
OpCapability ShaderClockKHR
OpExtension \"SPV_KHR_shader_clock\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%bool = OpTypeBool
%u0 = OpConstant %uint 0
%u3 = OpConstant %uint 3
%true = OpConstantTrue %bool
%pf = OpTypePointer Function %uint
%main = OpFunction %void None %fn
%l = OpLabel
%var = OpVariable %pf Function
OpSelectionMerge %end None
OpBranchConditional %true %end %body
%body = OpLabel
; BODY
%end = OpLabel
OpReturn
OpFunctionEnd
";
    let cases = [
        // OpBitcast: "The operand … must have the same number of bits as Result Type"
        (
            "%x = OpBitcast %ulong %u0\nOpBranch %end\n",
            "OpBitcast between types of different sizes",
        ),
        // OpBitcast of a pointer needs an address: Logical addressing has none
        ("%x = OpBitcast %uint %var\nOpBranch %end\n", "OpBitcast of a logical pointer"),
        (
            "%x = OpConvertPtrToU %ulong %var\nOpBranch %end\n",
            "OpConvertPtrToU of a Function pointer (only PhysicalStorageBuffer pointers have addresses)",
        ),
        // SPV_KHR_shader_clock: "Result Type must be a 64-bit unsigned integer or a vector of two
        // 32-bit unsigned integers"
        (
            "%x = OpReadClockKHR %uint %u3\nOpBranch %end\n",
            "OpReadClockKHR: the result must be a 64-bit unsigned integer",
        ),
        // OpKill: "Fragment-shader discard" (the Fragment execution model only)
        ("OpKill\n", "OpKill (a fragment-shader instruction)"),
    ];
    for (body, want) in cases {
        let text = template.replace("; BODY\n", body);
        let e = asm_refused(&text);
        assert!(e.contains(want), "{body}: {e}");
    }
    // a module that imports functions (Linkage) is a library to link, not a kernel to run
    let text = template
        .replace("; LINKAGE\n", "OpCapability Linkage\n")
        .replace("; BODY\n", "OpBranch %end\n");
    let e = asm_refused(&text);
    assert!(e.contains("capability Linkage"), "{e}");
}

/// Extended instructions and whole-array values: an instruction number the set does not define,
/// `debugPrintfEXT` outside what NonSemantic.DebugPrintf defines, a determinant of what is not a
/// square matrix (GLSL.std.450 Determinant: "x must be a square matrix"), an instruction that
/// names its own result (SPIR-V 2.16.1: "each use of an id must be dominated by its definition"),
/// and a runtime array loaded whole (SPIR-V: OpTypeRuntimeArray "objects of this type … can only be
/// used through an access chain to an element") — each refused at decode time with its rule.
#[test]
fn an_extended_instruction_or_a_whole_runtime_array_outside_its_rule_is_refused_naming_it() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let template = "; SPIR-V
OpCapability Shader
OpExtension \"SPV_KHR_non_semantic_info\"
%glsl = OpExtInstImport \"GLSL.std.450\"
%dp = OpExtInstImport \"NonSemantic.DebugPrintf\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
%fmt = OpString \"%d\"
OpDecorate %arr ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%v3 = OpTypeVector %float 3
%m23 = OpTypeMatrix %v3 2
%f1 = OpConstant %float 1
%u0 = OpConstant %uint 0
%c3 = OpConstantComposite %v3 %f1 %f1 %f1
%mc = OpConstantComposite %m23 %c3 %c3
%pair = OpTypeStruct %uint %uint
%pc = OpConstantComposite %pair %u0 %u0
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pb = OpTypePointer StorageBuffer %blk
%pa = OpTypePointer StorageBuffer %arr
%buf = OpVariable %pb StorageBuffer
%main = OpFunction %void None %fn
%l = OpLabel
; BODY
OpReturn
OpFunctionEnd
";
    let cases = [
        (
            "%x = OpExtInst %float %glsl Determinant %mc\n",
            "Determinant/MatrixInverse of a non-square matrix",
        ),
        (
            "%x = OpExtInst %float %glsl Determinant %c3\n",
            "Determinant/MatrixInverse of a non-matrix",
        ),
        (
            "%x = OpExtInst %float %glsl Sqrt %x\n",
            "an instruction uses its own result",
        ),
        (
            "%x = OpExtInst %void %dp 2 %fmt\n",
            "NonSemantic.DebugPrintf has one instruction, DebugPrintf (1)",
        ),
        (
            "%x = OpExtInst %void %dp 1 %u0\n",
            "DebugPrintf: Format must be an OpString",
        ),
        (
            "%x = OpExtInst %void %dp 1 %fmt %pc\n",
            "debugPrintfEXT(\"%d\") of a value that is not a scalar or a vector",
        ),
        (
            "%p = OpAccessChain %pa %buf %u0\n%x = OpLoad %arr %p\n",
            "runtime array",
        ),
    ];
    for (body, want) in cases {
        let text = template.replace("; BODY\n", body);
        let e = asm_refused(&text);
        assert!(e.contains(want), "{body}: {e}");
    }
    // GLSL.std.450 numbers its instructions 1 to 81: 200 is none (the assembler takes only names,
    // so the number is written into the assembled `Sqrt`, 31)
    let text = template.replace("; BODY\n", "%x = OpExtInst %float %glsl Sqrt %f1\n");
    let mut words = compile(&text, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap()
        .words;
    let mut at = 5;
    while !(words[at] & 0xffff == 12 && words[at + 4] == 31) {
        at += (words[at] >> 16) as usize;
    }
    words[at + 4] = 200;
    let e = decode(&words, &DecodeOptions::default()).expect_err("refused");
    assert!(
        e.to_string()
            .contains("GLSL.std.450 instruction 200 (no such instruction)"),
        "{e}"
    );
}

/// Workgroups that only read a buffer — `readonly`, or writable but written by no invocation —
/// share nothing that needs an order: the dispatch runs once, in parallel, not a second time in
/// order (`ModelRun::ordered`), and every output is defined.
#[test]
fn workgroups_that_only_read_a_buffer_need_no_ordered_run() {
    for access in ["readonly ", ""] {
        let src = format!("#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) {access}buffer I {{ uint v[4]; }} i;\nlayout(binding = 1) buffer O {{ uint o[]; }};\nvoid main() {{ o[gl_GlobalInvocationID.x] = i.v[gl_LocalInvocationID.x] + gl_WorkGroupID.x; }}\n");
        let k = decode(&glsl(&src, "k.comp"), &DecodeOptions::default()).unwrap();
        let bufs = bindings([bytes_u32(&[1, 2, 3, 4]), vec![0; 64 * 16]]);
        let r = run_model(&k, cfg(4, Mode::Base, [64, 1, 1]), &bufs, None).unwrap();
        assert!(!r.ordered, "{access}");
        let out = r.buffers.iter().find(|b| b.binding == 1).unwrap();
        let o = u32s(&out.bytes);
        assert_eq!(o[4 * 63..4 * 64], [64, 65, 66, 67], "{access}");
    }
}

/// SPIR-V 3.32.8, OpVariable: "Initializer … the variable's initial value" — a Private variable
/// with an initializer starts at it in every invocation, in every workgroup, whatever invocations
/// of earlier workgroups on the same thread left in theirs. Sixteen workgroups each add their id
/// to `g` (initialized to 5) and write it: 5 + id, exact.
#[test]
fn a_private_variable_starts_at_its_initializer_in_every_workgroup() {
    let text = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %wid %gid
OpExecutionMode %main LocalSize 2 1 1
OpDecorate %wid BuiltIn WorkgroupId
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %ua ArrayStride 4
OpDecorate %B Block
OpMemberDecorate %B 0 Offset 0
OpDecorate %b DescriptorSet 0
OpDecorate %b Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v3 = OpTypeVector %uint 3
%ua = OpTypeRuntimeArray %uint
%B = OpTypeStruct %ua
%pB = OpTypePointer StorageBuffer %B
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%pp = OpTypePointer Private %uint
%u0 = OpConstant %uint 0
%u5 = OpConstant %uint 5
%wid = OpVariable %pin Input
%gid = OpVariable %pin Input
%b = OpVariable %pB StorageBuffer
%g = OpVariable %pp Private %u5
%main = OpFunction %void None %fn
%entry = OpLabel
%w3 = OpLoad %v3 %wid
%w = OpCompositeExtract %uint %w3 0
%g3 = OpLoad %v3 %gid
%i = OpCompositeExtract %uint %g3 0
%old = OpLoad %uint %g
%new = OpIAdd %uint %old %w
OpStore %g %new
%v = OpLoad %uint %g
%p = OpAccessChain %pu %b %u0 %i
OpStore %p %v
OpReturn
OpFunctionEnd
"#;
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let m = compile(text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    let bufs = bindings([bytes_u32(&[0; 32])]);
    let r = run_model(&k, cfg(8, Mode::Base, [16, 1, 1]), &bufs, None).unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let b = &r.buffers[0];
    for i in 0..32 {
        assert_eq!(r.status(b.word_taint(i)), WordStatus::Exact, "b[{i}]");
    }
    let want: Vec<u32> = (0..32).map(|i| 5 + i / 2).collect();
    assert_eq!(u32s(&b.bytes), want);
}

/// SPV_KHR_float_controls: `DenormPreserve` and `SignedZeroInfNanPreserve` take a Target Width,
/// "the width of the floating-point type" the mode applies to — 16, 32 or 64. Another width is
/// refused naming the mode and the width, not read as no mode at all.
#[test]
fn a_float_controls_mode_of_a_width_no_float_has_is_refused() {
    for mode in ["DenormPreserve", "SignedZeroInfNanPreserve"] {
        let text = format!(
            "OpCapability Shader\nOpCapability {mode}\nOpExtension \"SPV_KHR_float_controls\"\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\nOpExecutionMode %main {mode} 8\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%main = OpFunction %void None %fn\n%e = OpLabel\nOpReturn\nOpFunctionEnd\n"
        );
        let e = asm_refused(&text);
        assert!(
            e.contains(&format!("execution mode {mode} with Target Width 8")),
            "{e}"
        );
    }
}

/// The head of a module whose `main` writes `%r` to `b[0]` (binding 0), with `%uint`, `%u0`,
/// `%u1`, `%bool`, `%true` and `%ffn` (a function returning `uint`) declared.
const DEEP_HEAD: &str = "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 2 1 1
OpDecorate %ua ArrayStride 4
OpDecorate %B Block
OpMemberDecorate %B 0 Offset 0
OpDecorate %b DescriptorSet 0
OpDecorate %b Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%true = OpConstantTrue %bool
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%ffn = OpTypeFunction %uint
%ua = OpTypeRuntimeArray %uint
%B = OpTypeStruct %ua
%pB = OpTypePointer StorageBuffer %B
%pu = OpTypePointer StorageBuffer %uint
%b = OpVariable %pB StorageBuffer
";

/// Runs a module of [`DEEP_HEAD`] and `body` on 8 workgroups (so on the thread pool's workers,
/// whose stacks are 2 MiB): the value `b[0]` holds, or why the run stopped.
fn run_deep(body: &str) -> Result<(u32, WordStatus), String> {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let text = format!("{DEEP_HEAD}{body}");
    let m = compile(&text, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let k = decode(&m.words, &DecodeOptions::default()).unwrap();
    match run_model(
        &k,
        cfg(2, Mode::Base, [8, 1, 1]),
        &bindings([bytes_u32(&[0])]),
        None,
    ) {
        Ok(r) => {
            let b = &r.buffers[0];
            Ok((u32s(&b.bytes)[0], r.status(b.word_taint(0))))
        }
        Err(SpirvError::Stopped { why, .. }) => Err(why),
        Err(e) => panic!("{e}"),
    }
}

/// A chain of `n` functions, each of two blocks (so that none is inlined), `f1` calling `f2` … each
/// returning what it called plus 1, the last 1: `main` gets `n`.
fn call_chain(n: usize) -> String {
    let mut s = String::new();
    for i in 1..=n {
        let inner = if i < n {
            format!("%r{i} = OpFunctionCall %uint %f{}\n%s{i} = OpIAdd %uint %r{i} %u1\nOpReturnValue %s{i}\n", i + 1)
        } else {
            "OpReturnValue %u1\n".to_string()
        };
        s += &format!("%f{i} = OpFunction %uint None %ffn\n%e{i} = OpLabel\nOpBranch %c{i}\n%c{i} = OpLabel\n{inner}OpFunctionEnd\n");
    }
    s + "%main = OpFunction %void None %fn\n%entry = OpLabel\n%r = OpFunctionCall %uint %f1\n%o = OpAccessChain %pu %b %u0 %u0\nOpStore %o %r\nOpReturn\nOpFunctionEnd\n"
}

/// SPIR-V allows calls nested as deep as a module's functions chain them (only a cycle is
/// forbidden), and constructs nested as deep as its blocks do. The executor follows both by
/// recursion, and a worker thread's stack held about 700 nested calls before it overflowed and
/// aborted the process; its stack now grows where it runs short. A chain of 4,096 calls runs (each
/// adds 1: `b[0]` = 4096, exact); the 4,097th call stops the run, naming the bound (the memory a
/// generated module may take is bounded: docs/interpreter.md, "Decisions"); 2,000 selections
/// nested in one another, every condition true, reach the store at the bottom (`b[0]` = 1).
#[test]
fn calls_and_constructs_nested_thousands_deep_run_and_a_call_past_the_bound_stops() {
    assert_eq!(run_deep(&call_chain(4096)), Ok((4096, WordStatus::Exact)));
    let why = run_deep(&call_chain(4097)).unwrap_err();
    assert!(why.contains("calls nested more than 4096 deep"), "{why}");
    let n = 2000;
    let mut s = String::from("%main = OpFunction %void None %fn\n%entry = OpLabel\nOpBranch %h0\n");
    for i in 0..n {
        s += &format!(
            "%h{i} = OpLabel\nOpSelectionMerge %m{i} None\nOpBranchConditional %true %h{} %m{i}\n",
            i + 1
        );
    }
    s += &format!(
        "%h{n} = OpLabel\n%o = OpAccessChain %pu %b %u0 %u0\nOpStore %o %u1\nOpBranch %m{}\n",
        n - 1
    );
    for i in (0..n).rev() {
        let next = if i > 0 {
            format!("%m{}", i - 1)
        } else {
            "%end".into()
        };
        s += &format!("%m{i} = OpLabel\nOpBranch {next}\n");
    }
    s += "%end = OpLabel\nOpReturn\nOpFunctionEnd\n";
    assert_eq!(run_deep(&s), Ok((1, WordStatus::Exact)));
    // Calls made one after another do not nest: a loop calls a chain of two 5,000 times.
    let looped = call_chain(2).replace(
        "%entry = OpLabel\n%r = OpFunctionCall %uint %f1\n",
        "%entry = OpLabel\nOpBranch %lh\n%lh = OpLabel\n%i = OpPhi %uint %u0 %entry %i2 %lc\n%acc = OpPhi %uint %u0 %entry %r %lc\nOpLoopMerge %lm %lc None\nOpBranch %lb\n%lb = OpLabel\n%x = OpFunctionCall %uint %f1\n%r = OpIAdd %uint %acc %x\n%i2 = OpIAdd %uint %i %u1\n%go = OpULessThan %bool %i2 %u5000\nOpBranch %lc\n%lc = OpLabel\nOpBranchConditional %go %lh %lm\n%lm = OpLabel\n",
    );
    let looped = format!("%u5000 = OpConstant %uint 5000\n{looped}");
    assert_eq!(run_deep(&looped), Ok((10_000, WordStatus::Exact)));
    // The same chain closed into a cycle (the last function calls the first) is recursion, which
    // Vulkan forbids: refused at decode time, the walk of 4,097 functions on a test thread's stack.
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let cycle = call_chain(4097).replace(
        "%c4097 = OpLabel\nOpReturnValue %u1\n",
        "%c4097 = OpLabel\n%back = OpFunctionCall %uint %f1\nOpReturnValue %back\n",
    );
    let m = compile(
        &format!("{DEEP_HEAD}{cycle}"),
        SourceLang::SpirvAsm,
        &SourceOptions::default(),
    )
    .unwrap();
    let e = decode(&m.words, &DecodeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("recursion") && e.contains("calls") && e.contains("again"),
        "{e}"
    );
}

/// A pointer chosen by an undefined condition (`OpSelect` of two buffers' arrays, SPIR-V 1.0 with
/// VariablePointersStorageBuffer) is undefined — SPIR-V, OpUndef: "the result is an undefined
/// value", so which buffer the choice names is not pinned down — and so is every pointer an access
/// chain derives from it, and what a load through it reads. The choice runs in lanes 2–7 only
/// (lanes 0 and 1 keep their own index, exact): each of lanes 2–7 is undefined, the first of
/// them not at lane 0 of its subgroup.
#[test]
fn an_access_chain_from_an_undefined_pointer_is_undefined_in_every_lane_that_ran_it() {
    let text = r#"OpCapability Shader
OpCapability VariablePointersStorageBuffer
OpExtension "SPV_KHR_variable_pointers"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid
OpExecutionMode %main LocalSize 8 1 1
OpDecorate %lid BuiltIn LocalInvocationIndex
OpDecorate %ua ArrayStride 4
OpDecorate %B Block
OpMemberDecorate %B 0 Offset 0
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 1
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%u0 = OpConstant %uint 0
%u2 = OpConstant %uint 2
%ua = OpTypeRuntimeArray %uint
%B = OpTypeStruct %ua
%pB = OpTypePointer StorageBuffer %B
%pua = OpTypePointer StorageBuffer %ua
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %uint
%lid = OpVariable %pin Input
%in = OpVariable %pB StorageBuffer
%out = OpVariable %pB StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%l = OpLoad %uint %lid
%o = OpAccessChain %pu %out %u0 %l
OpStore %o %l
%hi = OpUGreaterThanEqual %bool %l %u2
OpSelectionMerge %m None
OpBranchConditional %hi %t %m
%t = OpLabel
%undef = OpUndef %bool
%a0 = OpAccessChain %pua %in %u0
%a1 = OpAccessChain %pua %out %u0
%p = OpSelect %pua %undef %a0 %a1
%e = OpAccessChain %pu %p %u0
%v = OpLoad %uint %e
OpStore %o %v
OpBranch %m
%m = OpLabel
OpReturn
OpFunctionEnd
"#;
    let r = run_asm(text, 8, &[bytes_u32(&[0; 8]), bytes_u32(&[5, 6])]);
    let b = r.buffers.iter().find(|b| b.binding == 0).unwrap();
    assert_eq!(u32s(&b.bytes)[..2], [0, 1]);
    for l in 0..2 {
        assert_eq!(r.status(b.word_taint(l)), WordStatus::Exact, "lane {l}");
    }
    for l in 2..8 {
        match r.status(b.word_taint(l)) {
            WordStatus::Undefined(c) => assert!(c.contains("OpUndef"), "lane {l}: {c}"),
            s => panic!("lane {l}: {s:?}"),
        }
    }
}

// SPV_KHR_subgroup_uniform_control_flow, Overview: the execution mode "extend[s] the guarantees
// provided by the definition of Uniform Control Flow" to each subgroup. A scan of subgroup totals
// made by subgroup 0 alone (`if (gl_SubgroupID == 0u)`: uniform within every subgroup, not across
// the workgroup) is pinned down under SUCF and maximal reconvergence, not under base — and the
// report under base names SUCF as a way to pin it down beside maximal reconvergence, while a tangle
// SUCF leaves open (a branch not uniform within the subgroup) is not said to be pinned by it.
#[test]
fn a_subgroup_operation_in_subgroup_uniform_control_flow_is_pinned_down_by_sucf_and_the_report_says_so(
) {
    let src = |cond: &str| {
        format!(
            "{HEAD}layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uint b[]; }};\nvoid main() {{\n  uint s = 0u;\n  if ({cond}) {{\n    s = subgroupExclusiveAdd(gl_SubgroupInvocationID + 1u);\n  }}\n  b[gl_LocalInvocationIndex] = s;\n}}\n"
        )
    };
    let uniform = src("gl_SubgroupID == 0u");
    for mode in [Mode::Sucf, Mode::Maximal] {
        let r = run_glsl(&uniform, mode, 8, [1, 1, 1], &[vec![0; 16]]);
        let b = &r.buffers[0];
        // lanes 0–7 of subgroup 0: 0, 1, 3, 6, …; subgroup 1 skipped the branch
        let want: Vec<u32> = (0..16u32)
            .map(|i| if i < 8 { i * (i + 1) / 2 } else { 0 })
            .collect();
        assert_eq!(u32s(&b.bytes), want, "{mode:?}");
        for i in 0..16 {
            assert_eq!(
                r.status(b.word_taint(i)),
                WordStatus::Exact,
                "{mode:?} b[{i}]"
            );
        }
    }
    let r = run_glsl(&uniform, Mode::Base, 8, [1, 1, 1], &[vec![0; 16]]);
    match r.status(r.buffers[0].word_taint(3)) {
        WordStatus::Undefined(c) => assert!(
            c.contains("not pinned down under base reconvergence")
                && c.contains("maximal reconvergence pins it down")
                && c.contains("subgroup-uniform control flow pins it down too")
                && c.contains("GL_EXT_subgroup_uniform_control_flow"),
            "{c}"
        ),
        other => panic!("base: {other:?}"),
    }
    // Diverging within the subgroup: SUCF leaves the tangle open and its report does not offer it.
    let r = run_glsl(
        &src("gl_SubgroupInvocationID < 5u"),
        Mode::Sucf,
        8,
        [1, 1, 1],
        &[vec![0; 16]],
    );
    match r.status(r.buffers[0].word_taint(3)) {
        WordStatus::Undefined(c) => assert!(
            c.contains("not pinned down under sucf reconvergence")
                && !c.contains("subgroup-uniform control flow pins it down too"),
            "{c}"
        ),
        other => panic!("sucf: {other:?}"),
    }
}

// GL_KHR_shader_subgroup: subgroupShuffle(value, id) returns `value` of invocation `id`; where that
// invocation's value is undefined (here a shuffle down past the last lane left it so, in lanes 6
// and 7 of 8), so is the result — and only there: each lane's result carries the taint of the
// lane it read, for every component of a vector, in every subgroup of the workgroup.
#[test]
fn a_shuffle_reading_an_undefined_lane_is_undefined_there_and_nowhere_else() {
    let src = format!(
        "{HEAD}layout(local_size_x = 16) in;\nlayout(binding = 0) buffer B {{ uvec2 b[]; }};\nvoid main() {{\n  uint id = gl_SubgroupInvocationID;\n  uvec2 x = subgroupShuffleDown(uvec2(id * 10u, id + 100u), 2u);\n  b[gl_LocalInvocationIndex] = subgroupShuffle(x, (id + 3u) % 8u);\n}}\n"
    );
    let r = run_glsl(&src, Mode::Base, 8, [1, 1, 1], &[vec![0; 32]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for i in 0..16usize {
        let l = i % 8;
        let from = (l + 3) % 8; // the lane read; its x came from lane from + 2
        for c in 0..2 {
            let status = r.status(b.word_taint(2 * i + c));
            if from >= 6 {
                assert!(
                    matches!(&status, WordStatus::Undefined(ch) if ch.contains("subgroupShuffleDown")),
                    "b[{i}].{c}: {status:?}"
                );
            } else {
                assert_eq!(status, WordStatus::Exact, "b[{i}].{c}");
                let want = if c == 0 {
                    (from + 2) * 10
                } else {
                    from + 2 + 100
                };
                assert_eq!(w[2 * i + c] as usize, want, "b[{i}].{c}");
            }
        }
    }
}

/// Vulkan, Shader Interfaces, "Shader Resource and Descriptor Type Correspondence", and
/// VUID-VkComputePipelineCreateInfo-layout-07991: a descriptor set layout gives each binding one
/// descriptor type, and the pipeline's layout must match the type of every resource variable.
/// A uniform block and a storage block both at `binding = 0` — OpenGL numbers the two kinds apart,
/// and kernels written for it do this (FidelityFX's parallel sort as aitviewer ports it) — are
/// refused when decoded, both named; the same module whose code uses only one of them runs; and a
/// sampled image and a sampler may share a binding (a combined image sampler serves both).
#[test]
fn one_binding_has_one_descriptor_type() {
    let kernel = |body: &str| {
        format!(
            "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) uniform U {{ uint n; }} u;\nlayout(binding = 0) buffer K {{ uint keys[]; }} k;\nlayout(binding = 1) buffer O {{ uint o[]; }};\nlayout(binding = 2) uniform texture2D t;\nlayout(binding = 2) uniform sampler s;\nvoid main() {{ uint i = gl_LocalInvocationIndex; {body} }}\n"
        )
    };
    let both = kernel("o[i] = u.n + k.keys[i];");
    let e = decode(&glsl(&both, "k.comp"), &DecodeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("binding 0.0: `u` is a uniform buffer and `k` is a storage buffer")
            && e.contains("VUID-VkComputePipelineCreateInfo-layout-07991"),
        "{e}"
    );
    let one = kernel("o[i] = k.keys[i] * 3u;");
    let r = run_glsl(
        &one,
        Mode::Base,
        4,
        [1, 1, 1],
        &[vec![1, 2, 3, 4], vec![0; 4]],
    );
    assert_eq!(u32s(bytes_at(&r, 1)), [3, 6, 9, 12]);
    let sampled = kernel("o[i] = k.keys[i] + uint(textureSize(sampler2D(t, s), 0).x);");
    decode(&glsl(&sampled, "k.comp"), &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("a sampled image and a sampler at one binding: {e}"));
}

/// Vulkan, Descriptor Set Binding: only the descriptors a pipeline *statically uses* must be valid
/// when it dispatches (VUID-vkCmdDispatch-None-08114), so a kernel that declares more buffers than
/// its entry point refers to — a header shared by several entry points, or a helper nobody calls —
/// runs with inputs for the ones it uses; a binding its code refers to, even on a path that never
/// runs, still needs one.
#[test]
fn only_the_bindings_the_entry_point_statically_uses_need_an_input() {
    let src = |call: &str| {
        format!(
            "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) buffer A {{ uint a[]; }};\nlayout(binding = 1) buffer B {{ uint b[]; }};\nlayout(binding = 2) uniform U {{ uint n; }};\nvoid f(bool never) {{ if (never) b[0] = n; }}\nvoid main() {{ a[gl_LocalInvocationIndex] *= 2u; {call} }}\n"
        )
    };
    let r = run_glsl(&src(""), Mode::Base, 4, [1, 1, 1], &[vec![1, 2, 3, 4]]);
    assert_eq!(u32s(bytes_at(&r, 0)), [2, 4, 6, 8]);
    let k = decode(
        &glsl(&src("f(false);"), "k.comp"),
        &DecodeOptions::default(),
    )
    .unwrap();
    let bufs = bindings([bytes_u32(&[1, 2, 3, 4])]);
    let Err(e) = run_model(&k, cfg(4, Mode::Base, [1, 1, 1]), &bufs, None) else {
        panic!("binding 1 is referred to by a called function and was given no input");
    };
    assert!(
        e.to_string().contains("no buffer for set 0 binding 1 (b,"),
        "{e}"
    );
}

/// SPV_KHR_shader_ballot and SPV_KHR_subgroup_vote (GL_ARB_shader_ballot, GL_ARB_shader_group_vote:
/// kernels written for OpenGL) run as the catalogue's operations, scope Subgroup implied ("The
/// scope is Subgroup"): `OpSubgroupBallotKHR` sets the bit of each invocation "active and the
/// predicate is evaluated to true"; `OpSubgroupFirstInvocationKHR` returns the value of "the
/// lowest subgroup local invocation ID"; `OpSubgroupReadInvocationKHR` the value of the invocation
/// "with an invocation ID equal to Index", where "The Index must be the same for all active
/// invocations in the subgroup, otherwise the results are undefined"; `OpSubgroupAnyKHR`,
/// `OpSubgroupAllKHR` and `OpSubgroupAllEqualKHR` evaluate the predicate over the invocations
/// executing the same dynamic instance. Two subgroups of 8; expected values worked by hand.
#[test]
fn gl_arb_shader_ballot_and_group_vote_run_as_the_catalogue_s_operations() {
    let src = "#version 450\n#extension GL_ARB_shader_ballot : require\n#extension GL_ARB_shader_group_vote : require\n#extension GL_ARB_gpu_shader_int64 : require\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer O { uint o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationIndex;\n  uint64_t b = ballotARB(i % 3u == 0u);\n  o[i * 6u] = uint(b);\n  o[i * 6u + 1u] = readFirstInvocationARB(i * 7u);\n  o[i * 6u + 2u] = readInvocationARB(i * 5u, 2u);\n  o[i * 6u + 3u] = uint(anyInvocationARB(i == 5u)) | (uint(allInvocationsARB(i < 12u)) << 1) | (uint(allInvocationsEqualARB(i < 12u)) << 2);\n  o[i * 6u + 4u] = uint(gl_SubGroupLtMaskARB);\n  o[i * 6u + 5u] = readInvocationARB(i, i % 2u);\n}\n";
    let r = run_glsl(src, Mode::Base, 8, [1, 1, 1], &[vec![0; 96]]);
    let b = &r.buffers[0];
    let w = u32s(&b.bytes);
    for i in 0..16usize {
        let (sg, lane) = (i / 8, i % 8);
        let want = [
            [0b0100_1001, 0b1001_0010][sg], // i = 0, 3, 6 | 9, 12, 15
            [0, 56][sg],                    // lane 0's i · 7
            [10, 50][sg],                   // lane 2's i · 5
            [0b111, 0b000][sg],             // any(i == 5), all(i < 12), all-equal(i < 12)
            (1u32 << lane) - 1,             // the lanes below
        ];
        for (c, v) in want.iter().enumerate() {
            assert_eq!(
                r.status(b.word_taint(6 * i + c)),
                WordStatus::Exact,
                "o[{i}].{c}"
            );
            assert_eq!(w[6 * i + c], *v, "o[{i}].{c}");
        }
        // an index that differs between the active invocations: undefined, as the extension says
        assert!(
            matches!(r.status(b.word_taint(6 * i + 5)), WordStatus::Undefined(_)),
            "o[{i}].5"
        );
    }
}
