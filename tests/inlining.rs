//! Decode-time inlining of single-block functions (issue 22 §2) changes no report: every kernel
//! here — and the Gray-Scott shader — is decoded twice, with its calls inlined (the default) and
//! with every `OpFunctionCall` kept as a call (`DecodeOptions::keep_calls`), and run under each
//! reconvergence model; the two reports must be the same to the letter: lane-instruction counts,
//! every finding and group with its text, every buffer's bytes and every unit's status with its
//! chain. Each kernel puts a call where a call's semantics could show: the callee's `Function`
//! variables (reset on every call, uninitialised or initialised), subgroup operations inside the
//! callee under divergence, a call's result in a lane whose path is lost (it carries the path's
//! taint, as the return of a call does), stores, out-of-bounds writes and races made by the callee,
//! and calls nested three deep.
#![cfg(feature = "vulkan")]
use crate::spirv_support::{bytes_u32, glsl, glsl_file, same_reports};
use lockstep::model::SubgroupSize;
use lockstep::spirv::*;

const HEAD: &str = "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle_relative : require\n#extension GL_KHR_shader_subgroup_arithmetic : require\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer B { uint b[]; };\n";

/// (what the kernel shows, its functions and `main`, the calls left after inlining: those to
/// functions of more than one block).
const KERNELS: [(&str, &str, usize); 7] = [
    (
        "an uninitialised local of the callee is undefined on every call",
        "uint junk() { uint x; if (gl_SubgroupInvocationID == 0u) { x = 7u; } return x + 1u; }\nuint plus(uint a) { uint x; return a + x; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = junk() + plus(i); }",
        1,
    ),
    (
        "the callee's locals are fresh on every call: what one call wrote, the next cannot read",
        "uint acc(uint v) { uint t = 3u; t += v; return t; }\nuint pick(uint a) { uint x[2]; x[a & 1u] = a; return x[0]; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = acc(i); s += acc(s); b[i] = s + pick(2u * i) + pick(2u * i + 1u); }",
        0,
    ),
    (
        "a subgroup operation in the callee, under divergence",
        "uint nb(uint v) { return subgroupShuffleDown(v, 1u); }\nuint sum(uint v) { return subgroupAdd(v); }\nvoid main() { uint i = gl_LocalInvocationIndex; uint r = nb(i * 3u); if (i % 3u == 0u) { r += sum(i); } b[i] = r; }",
        0,
    ),
    (
        "a call's result in a lane whose path is lost",
        "uint junk() { uint x; return x; }\nuint twice(uint v) { return v * 2u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint r = 1u; if (junk() > 5u) { r = twice(i); b[16u + twice(i) % 8u] = 5u; } b[i] = r + twice(r); }",
        0,
    ),
    (
        "the callee stores, out of bounds for some lanes",
        "void put(uint i, uint v) { b[i] = v; }\nvoid bump(inout uint a) { a += 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint v = i; bump(v); put(i * 2u, v); }",
        0,
    ),
    (
        "the callee races",
        "void put0(uint v) { b[0] = v; }\nuint get1() { return b[1]; }\nvoid main() { uint i = gl_LocalInvocationIndex; put0(i); b[2u + i] = get1(); }",
        0,
    ),
    (
        "calls nested three deep",
        "uint h(uint v) { return v ^ 5u; }\nuint g(uint v) { return h(v) + h(v + 1u); }\nuint f(uint v) { uint t = g(v); return t * g(t); }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = f(i) + f(subgroupShuffleDown(i, 2u)); }",
        0,
    ),
];

/// The kernel decoded with calls inlined and with calls kept (and how many calls each has).
fn both(words: &[u32], spec: Vec<(u32, SpecInput)>) -> [(Kernel, usize); 2] {
    [false, true].map(|keep_calls| {
        let k = decode(
            words,
            &DecodeOptions {
                spec: spec.clone(),
                keep_calls,
                // (loops unrolled or not: `tests/unrolling.rs`)
                keep_loops: true,
                ..Default::default()
            },
        )
        .unwrap();
        let c = k.calls();
        (k, c)
    })
}

#[test]
fn a_call_to_a_single_block_function_reports_the_same_inlined_or_called() {
    for (what, body, left) in KERNELS {
        let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
        let [(inlined, ci), (called, cc)] = both(&words, Vec::new());
        assert!(
            cc > 0 && ci == left,
            "{what}: {cc} calls kept, {ci} left after inlining"
        );
        same_reports(what, &[&inlined, &called], 24);
    }
}

#[test]
fn the_gray_scott_shader_reports_the_same_inlined_or_called() {
    let words = glsl_file("shaders/grayscott/subgroup_1d.comp");
    let [(inlined, ci), (called, cc)] = both(&words, crate::spirv_grayscott::spec_small());
    // work_item_pos, padded_end_pos, data_end_pos, read, write, react, … are one block each
    // (work_item_pos and data_end_pos once their own calls are inlined); the two calls to add_row
    // (a loop) and is_subgroup_output (`&&`) stay, and inside them every call is inlined.
    assert_eq!((cc, ci), (18, 2), "calls kept, calls left after inlining");
    crate::spirv_grayscott::same_reports_small("inlined", &[&inlined, &called]);
}

/// Decodes and runs `main` of `body` (one u32 buffer of 32 words, 16 invocations at subgroup 4)
/// inlined and called; both runs.
fn run_both(body: &str) -> [ModelRun; 2] {
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    both(&words, Vec::new()).map(|(k, _)| {
        let buf = BufferInput {
            set: 0,
            binding: 0,
            bytes: bytes_u32(&[0; 32]),
            ..Default::default()
        };
        let cfg = RunConfig::new(SubgroupSize::new(4).unwrap(), [1, 1, 1]);
        run_model(&k, cfg, &[buf], None).unwrap()
    })
}

/// SPIR-V `OpFunctionCall`: the result is the value the callee's `OpReturnValue` returned — in
/// each invocation, its own. Expected values from the GLSL source: `b[i] = 3i + 1`.
#[test]
fn a_call_returns_the_value_its_callee_returned() {
    let body = "uint f(uint v) { return 3u * v + 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = f(i); }";
    for r in run_both(body) {
        let b = &r.buffers[0];
        for i in 0..16 {
            let w = u32::from_le_bytes(b.bytes[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(w, 3 * i as u32 + 1, "b[{i}]");
            assert_eq!(r.status(b.word_taint(i)), WordStatus::Exact, "b[{i}]");
        }
    }
}

/// SPIR-V `OpVariable` in the `Function` storage class (§3.7: "regular function memory" of the
/// declaring function) without an `Initializer` has undefined contents, and each call has its
/// own: what an earlier call stored is not there. The second call stores `x[0]` and reads `x[2]`,
/// which it never wrote, although the call before did.
#[test]
fn a_function_variable_is_undefined_on_every_call_until_that_call_stores_it() {
    let body = "uint pick(uint a, uint w) { uint x[3]; x[w] = a; return x[2]; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = pick(2u * i, 2u); b[16u + i] = pick(2u * i + 1u, 0u); }";
    for r in run_both(body) {
        let b = &r.buffers[0];
        for i in 0..16 {
            let w = u32::from_le_bytes(b.bytes[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(
                (w, r.status(b.word_taint(i))),
                (2 * i as u32, WordStatus::Exact)
            );
        }
        for i in 16..32 {
            assert!(
                matches!(r.status(b.word_taint(i)), WordStatus::Undefined(ref why) if why.contains("variable x")),
                "b[{i}]: {:?}",
                r.status(b.word_taint(i))
            );
        }
    }
}
