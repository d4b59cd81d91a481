//! Decode-time unrolling of loops whose trip count is a constant (issue 22 §2; `decode/unroll.rs`)
//! changes no report: every kernel here is decoded with its constant loops unrolled and with
//! every loop run as written (`DecodeOptions::keep_loops`), each run under every reconvergence
//! model at two subgroup sizes, and the reports must be the same to the letter: lane-instruction
//! counts, every finding and group with its text, every buffer's bytes and every unit's status
//! with its chain. Each kernel has a loop the decoder unrolls (checked: a test that compared two
//! identical decodings would prove nothing), with something in its body that could show: a
//! subgroup operation, a helper whose own loop is unrolled (the helper then inlined into the
//! unrolled outer loop), a barrier and shared memory, an undefined value, a spec-constant bound, a
//! signed counter stepping down; a helper holding an unrolled loop called after a call that loses
//! a path (it stays a call there); and loops unrolled but entered on a path an undefined branch
//! chose, or after a lost path was found again, where the block as written runs (the unrolled
//! form would report the same there too — a lost lane's own variables take what it stores as it
//! is — but it is not what runs). Loops whose trip count is not a constant stay loops. The kernels of
//! `tests/promotion.rs` (loops around carried locals, lost paths inside loops, helpers with loops
//! and bound parameters) and the Gray-Scott shader are compared the same way.
#![cfg(feature = "vulkan")]
use crate::spirv_support::{glsl, glsl_file, same_reports};
use lockstep::spirv::*;

const HEAD: &str = "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle_relative : require\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer B { uint b[]; };\n";

/// (what the kernel shows, loops unrolled, its functions and `main`).
const KERNELS: [(&str, usize, &str); 9] = [
    (
        "a subgroup shuffle in the body of a constant loop",
        1,
        "void main() { uint i = gl_LocalInvocationIndex; uint v = i * 3u; for (uint k = 0u; k < 3u; k++) { v += subgroupShuffleDown(v, 1u) + k; } b[i] = v; }",
    ),
    (
        "a helper's constant loop called from an outer constant loop (both unrolled), an inout parameter",
        2,
        "void row(inout float acc, float c, uint y) { float w[3] = float[3](0.25, 0.5, 0.25); for (uint x = 0u; x < 3u; x++) { acc += w[x] * (c + float(x * y)); } }\nvoid main() { uint i = gl_LocalInvocationIndex; float acc = 0.0; for (uint y = 0u; y < 3u; y++) { row(acc, float(i), y); } b[i] = floatBitsToUint(acc); }",
    ),
    (
        "a barrier and shared memory in the body of a constant loop",
        1,
        "shared uint sh[16];\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 2u; k++) { sh[i] = i + k; barrier(); s += sh[(i + 1u) & 15u]; barrier(); } b[i] = s; }",
    ),
    (
        "an uninitialised local read in the body of a constant loop",
        1,
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint s = i; for (uint k = 0u; k < 2u; k++) { s += u * k; } b[i] = s; }",
    ),
    (
        "a constant loop bounded by a specialization constant",
        1,
        "layout(constant_id = 0) const uint N = 4u;\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = 1u; for (uint k = 0u; k < N; k++) { s = s * 3u + i; } b[i] = s; }",
    ),
    (
        "a signed counter stepping down by two",
        1,
        "void main() { uint i = gl_LocalInvocationIndex; int s = int(i); for (int k = 7; k >= 0; k -= 2) { s -= k; } b[i] = uint(s); }",
    ),
    (
        "a constant loop entered on a path an undefined branch chose (the loop as written runs)",
        1,
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint s = i; if (u > 3u) { for (uint k = 0u; k < 3u; k++) { s += k; } } b[i] = s; }",
    ),
    (
        "a helper with a constant loop called after a call that loses a path (the helper stays a call there)",
        1,
        "uint lose(uint v) { uint u; if (u > 3u) { return v + 1u; } return v; }\nuint sum3(uint v) { uint s = v; for (uint k = 0u; k < 3u; k++) { s += k * v; } return s; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint a = lose(i); uint c = sum3(a); b[i] = c; }",
    ),
    (
        "a constant loop after a path was lost and found again (the loop as written runs)",
        1,
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint s = i; if (u > 3u) { s += 1u; } for (uint k = 0u; k < 3u; k++) { s = s * 2u + k; } b[i] = s; }",
    ),
];

/// The module decoded with its constant loops unrolled, and with every loop as written.
fn both(words: &[u32]) -> [Kernel; 2] {
    both_spec(words, Vec::new())
}

fn both_spec(words: &[u32], spec: Vec<(u32, SpecInput)>) -> [Kernel; 2] {
    [false, true].map(|keep_loops| {
        decode(
            words,
            &DecodeOptions {
                spec: spec.clone(),
                keep_loops,
                ..Default::default()
            },
        )
        .unwrap()
    })
}

#[test]
fn an_unrolled_loop_reports_the_same_as_the_loop_as_written() {
    for (what, loops, body) in KERNELS {
        let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
        let [k, kept] = both(&words);
        assert_eq!(k.unrolled(), loops, "{what}: loops unrolled");
        assert_eq!(kept.unrolled(), 0, "{what}: keep_loops unrolled");
        same_reports(what, &[&k, &kept], 24);
    }
}

#[test]
fn loops_whose_trip_count_is_not_a_constant_stay_loops() {
    for (what, body) in [
        (
            "a bound read from the invocation's index",
            "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < i % 5u; k++) { s += k; } b[i] = s; }",
        ),
        (
            "a break in the body",
            "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 4u; k++) { if (k == i % 3u) { break; } s += k; } b[i] = s; }",
        ),
        (
            "a selection in the body",
            "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 4u; k++) { if (i > k) { s += k; } } b[i] = s; }",
        ),
        (
            "a counter written through a pointer that escapes (a call's out parameter)",
            "void step(inout uint k) { k += 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 4u; step(k)) { s += k * i; } b[i] = s; }",
        ),
        (
            "more iterations than the decoder unrolls (33)",
            "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 33u; k++) { s += k ^ i; } b[i] = s; }",
        ),
    ] {
        let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
        let [k, kept] = both(&words);
        assert_eq!(k.unrolled(), 0, "{what}: unrolled");
        same_reports(what, &[&k, &kept], 24);
    }
    // The most the decoder unrolls: 32 iterations.
    let words = glsl(
        &format!("{HEAD}void main() {{ uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 32u; k++) {{ s += k ^ i; }} b[i] = s; }}\n"),
        "k.comp",
    );
    let [k, kept] = both(&words);
    assert_eq!(k.unrolled(), 1, "32 iterations: unrolled");
    same_reports("32 iterations", &[&k, &kept], 24);
}

#[test]
fn the_promotion_kernels_report_the_same_unrolled_or_not() {
    let mut unrolled = 0;
    for (what, body) in crate::promotion::KERNELS {
        let words = glsl(&format!("{}{body}\n", crate::promotion::HEAD), "k.comp");
        let [k, kept] = both(&words);
        unrolled += k.unrolled();
        same_reports(what, &[&k, &kept], 24);
    }
    // The loops of a constant trip count with no branch, and no call to a function with one,
    // inside: "a carried local read where only one path stored it…" (`j < 3u`), "a carried local
    // read, then stored…" and "a copy of a carried local…" (`k < 3u`). The others' bounds are
    // parameters or lane values, or their bodies branch or call a helper whose loop's bound is.
    assert_eq!(unrolled, 3, "loops unrolled in the promotion kernels");
}

#[test]
fn the_gray_scott_shader_reports_the_same_unrolled_or_not() {
    let words = glsl_file("shaders/grayscott/subgroup_1d.comp");
    let [k, kept] = both_spec(&words, crate::spirv_grayscott::spec_small());
    // `add_row`'s loop over the stencil's columns and `main`'s over its rows.
    assert_eq!(k.unrolled(), 2, "stencil loops unrolled");
    crate::spirv_grayscott::same_reports_small("unrolled", &[&k, &kept]);
}
