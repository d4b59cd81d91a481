//! Decode-time promotion of an invocation's own variables (issue 22 §2) changes no report: every
//! kernel here — and the Gray-Scott shader — is decoded three ways: as the decoder runs it (calls
//! inlined, variables promoted), with every load and store of a `Function` variable run
//! (`DecodeOptions::keep_variables`), and as written (calls kept too), the loops as written in
//! all three (unrolled: `tests/unrolling.rs`); each is run under every reconvergence model at two subgroup sizes, and the reports must be the same to the letter:
//! lane-instruction counts, every finding and group with its text, every buffer's bytes and every
//! unit's status with its chain. Each kernel puts a local variable where promotion could show: a
//! vector stored whole and read by component, negative constants and bools, a value carried across
//! blocks and loop iterations, a store and load on a path an undefined branch chose (the store
//! then carries the path's taint, so the promoted body must not run), a local written through a
//! dynamic index (its address is not a constant), `inout` and `out` parameters, a struct with
//! 64-bit members copied whole, a call in the middle of a block to a function that loses a path,
//! a subgroup operation reading a local under divergence, an uninitialised local; and locals
//! carried across blocks in registers: one read where only one path stored it, one stored on a
//! lost path inside a loop and read after that path ends, locals around a call to a function
//! with a loop, a loop counter of a loop each invocation leaves at its own iteration, and one
//! read, then stored, then the value read used, a copy of one taken before it is stored again, and
//! a local written through a dynamic index on one arm (its address escapes: not carried); and
//! helpers whose pointer parameters are bound to the caller's temporaries: one with a loop called
//! from one place, one called from two places (not bound) passing its parameter on to another, one
//! that loses a path while it writes through its parameter, a parameter copied in from an
//! uninitialised local, and `out` parameters stored before and read before the callee stores them;
//! and a helper with a carried local that some lanes read before storing it, called twice (what
//! an uninitialised variable's bits are is what the bodies as written would leave: `Wg::spill`).
#![cfg(feature = "vulkan")]
use crate::spirv_support::{bytes_u32, glsl, glsl_file, same_reports};
use lockstep::model::SubgroupSize;
use lockstep::spirv::*;

pub(crate) const HEAD: &str = "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle_relative : require\n#extension GL_ARB_gpu_shader_int64 : require\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer B { uint b[]; };\n";

/// (what the kernel shows, its functions and `main`).
pub(crate) const KERNELS: [(&str, &str); 23] = [
    (
        "locals stored and read back in one block: a vector read by component, negative constants, bools",
        "void main() { uint i = gl_LocalInvocationIndex; vec2 p = vec2(float(i), -3.5); float a = p.x * 2.0; float c = p.y; int m = -5; bool odd = (i & 1u) == 1u; bool e = odd; uint n = e ? uint(m) : 7u; b[i] = floatBitsToUint(a + c) ^ n; }",
    ),
    (
        "a local carried across blocks and loop iterations",
        "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < i % 5u; k++) { uint t = k * i; s += t; } b[i] = s; }",
    ),
    (
        "a local stored and read on a path an undefined branch chose",
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint r = i; if ((u < 5u) != (u >= 5u)) { uint t = i + 100u; b[t] = 1u; r = t; } b[i] = r; }",
    ),
    (
        "a local written through a dynamic index",
        "void main() { uint i = gl_LocalInvocationIndex; uint a[4]; a[i & 3u] = i; a[0] = 9u; uint x = a[i & 3u]; b[i] = x + a[0]; }",
    ),
    (
        "inout and out parameters",
        "void f(inout uint a, out uint c) { c = a * 2u; a += 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = i; uint y; f(x, y); f(y, x); b[i] = x * 100u + y; }",
    ),
    (
        "a struct with 64-bit and bool members copied whole",
        "struct S { uint a; bool f; float v; uint64_t w; };\nvoid main() { uint i = gl_LocalInvocationIndex; S s; s.a = i; s.f = (i & 1u) == 1u; s.v = 1.5; s.w = uint64_t(i) << 40; S t = s; b[i] = t.f ? t.a + uint(t.w >> 40) : uint(t.v); }",
    ),
    (
        "a call in the middle of a block, to a function that loses a path",
        "uint lose(uint v) { uint u; if (u > 3u) { return v + 1u; } return v; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = i; uint y = x * 2u; x = lose(y); uint z = x + y; x = z * 3u; b[i] = x; b[16u + (z % 8u)] = z; }",
    ),
    (
        "a subgroup operation reads a local, under divergence",
        "void main() { uint i = gl_LocalInvocationIndex; uint v = i * 2u; if (i % 3u != 0u) { uint w = subgroupShuffleDown(v, 1u); v = v + w; } b[i] = v; }",
    ),
    (
        "an uninitialised local read, then stored and read",
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint w = u; u = 3u; b[i] = w + u; b[16u + (i & 7u)] = u; }",
    ),
    (
        "a carried local read where only one path stored it, and where every path did",
        "void main() { uint i = gl_LocalInvocationIndex; uint t; if ((i & 1u) == 1u) { t = i * 3u; } uint x = t; t = i + 1u; for (uint j = 0u; j < 3u; j++) { x += t * j; } b[i] = x; }",
    ),
    (
        "a carried local stored on a path an undefined branch chose in a loop, read after that path ends",
        "void main() { uint i = gl_LocalInvocationIndex; uint u; uint s = i; for (uint k = 0u; k < 3u; k++) { if (u > 3u) { s += 1u; } s += k; } b[i] = s; }",
    ),
    (
        "carried locals around a call to a function with a loop of its own",
        "uint f(uint v) { uint w = v; for (uint j = 0u; j < v % 3u; j++) { w += j; } return w; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = i; for (uint k = 0u; k < 2u; k++) { s = f(s) + s; } b[i] = s; }",
    ),
    (
        "a carried counter of a loop each invocation leaves at its own iteration",
        "void main() { uint i = gl_LocalInvocationIndex; uint n = 0u; for (uint k = 0u; k < 8u; k++) { if (k == i % 5u) { break; } n += 2u; } b[i] = n; }",
    ),
    (
        "a carried local read, then stored, then the value read used",
        "void main() { uint i = gl_LocalInvocationIndex; uint s = i; for (uint k = 0u; k < 3u; k++) { uint m = s + (s = s * 2u + k); b[16u + i] = m; } b[i] = s; }",
    ),
    (
        "a copy of a carried local taken before the local is stored again",
        "void main() { uint i = gl_LocalInvocationIndex; uint x = i; for (uint k = 0u; k < 3u; k++) { uint y = x; x = x * 3u + k; b[16u + i] = y; } b[i] = x; }",
    ),
    (
        "a local stored through a dynamic index on one arm and read whole after the merge",
        "void main() { uint i = gl_LocalInvocationIndex; uint a[1]; a[0] = 5u; if (i > 3u) { a[i - i] = i; } b[i] = a[0]; }",
    ),
    (
        "a helper with a loop, called from one place: its parameters bound to the caller's temporaries",
        "void acc(inout uint s, uint v, uint n) { for (uint j = 0u; j < n; j++) { s += v * j; } }\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = i; for (uint k = 0u; k < 3u; k++) { acc(s, i + k, k + 1u); } b[i] = s; }",
    ),
    (
        "a helper called from two places (not bound) passing its parameter on to one with a loop (bound)",
        "void inner(inout uint s, uint n) { for (uint j = 0u; j < n; j++) { s += j; } }\nvoid outer(inout uint s, uint n) { if (n > 1u) { inner(s, n); } s += 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = i; outer(x, i % 4u); uint y = i * 2u; outer(y, 3u); b[i] = x + y; }",
    ),
    (
        "a helper that loses a path while it writes through a bound parameter",
        "void f(inout uint s, uint k) { uint u; for (uint j = 0u; j < 2u; j++) { if (u > j + k) { s += 5u; } s += j; } }\nvoid main() { uint i = gl_LocalInvocationIndex; uint s = i; for (uint k = 0u; k < 2u; k++) { f(s, k); } uint t = s * 2u; b[i] = s + t; }",
    ),
    (
        "a bound parameter the caller copied in from an uninitialised local",
        "void g(inout uint s, uint n) { for (uint j = 0u; j < n; j++) { s += n; } }\nvoid main() { uint i = gl_LocalInvocationIndex; uint u; for (uint k = 0u; k < 2u; k++) { g(u, i % 3u); } b[i] = u; }",
    ),
    (
        "an out parameter the callee stores before it reads it",
        "void h(out uint r, uint n) { r = 1u; for (uint j = 0u; j < n; j++) { r *= 2u; } }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = 0u; for (uint k = 0u; k < 2u; k++) { uint r; h(r, i % 5u + k); x += r; } b[i] = x; }",
    ),
    (
        "an out parameter the callee reads before it stores it (the caller never stored the temporary)",
        "void h(out uint r, uint n) { for (uint j = 0u; j < n; j++) { r += j; } }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = 0u; for (uint k = 0u; k < 2u; k++) { h(x, i % 3u + k); } b[i] = x; }",
    ),
    (
        "a helper's carried local read before some lanes store it, the helper called twice (the second call's unstored lanes find the bits the first call left)",
        "uint f(uint i) { uint t; if ((i & 1u) == 0u) { t = i * 7u; } uint r = t; t = r + 1u; if (i > 3u) { r = r * 2u; } return t + r; }\nvoid main() { uint i = gl_LocalInvocationIndex; uint a = f(i); uint c = f(i + 1u); b[i] = a + c; }",
    ),
];

/// The SPIR-V assembly kernels' common part: 16 invocations, `gl_LocalInvocationIndex` as `%lii`,
/// the `uint` buffer `b` as `%buf` (`%eptr` its element pointer), constants 0 and 1.
const ASM_PRELUDE: &str = "
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\" %lii
               OpExecutionMode %main LocalSize 16 1 1
               OpDecorate %lii BuiltIn LocalInvocationIndex
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %B 0 Offset 0
               OpDecorate %B Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %iptr = OpTypePointer Input %uint
        %lii = OpVariable %iptr Input
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
        %arr = OpTypeRuntimeArray %uint
          %B = OpTypeStruct %arr
       %bptr = OpTypePointer StorageBuffer %B
        %buf = OpVariable %bptr StorageBuffer
       %eptr = OpTypePointer StorageBuffer %uint
";

/// The loads in the blocks of `k`'s function `fi`: as written, or (`promoted`) in their promoted
/// bodies where they have one.
fn loads_in(k: &Kernel, fi: usize, promoted: bool) -> usize {
    k.funcs[fi]
        .blocks
        .iter()
        .map(|b| match (&b.fast, promoted) {
            (Some(f), true) => format!("{:?}", f.insts),
            _ => format!("{:?}", b.insts),
        })
        .map(|t| t.matches("Load {").count())
        .sum()
}

/// How many blocks of `k` have a promoted body.
fn promoted_bodies(k: &Kernel) -> usize {
    k.funcs
        .iter()
        .flat_map(|f| &f.blocks)
        .filter(|b| b.fast.is_some())
        .count()
}

/// The module decoded as the decoder runs it (its loops as written), with every variable access
/// run, and as written (calls kept too).
fn three(words: &[u32], spec: Vec<(u32, SpecInput)>) -> [Kernel; 3] {
    [(false, false), (false, true), (true, true)].map(|(keep_calls, keep_variables)| {
        decode(
            words,
            &DecodeOptions {
                spec: spec.clone(),
                keep_calls,
                keep_variables,
                // (loops unrolled or not: `tests/unrolling.rs`)
                keep_loops: true,
                ..Default::default()
            },
        )
        .unwrap()
    })
}

#[test]
fn a_promoted_variable_reports_the_same_as_its_loads_and_stores() {
    for (what, body) in KERNELS {
        let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
        let ks = three(&words, Vec::new());
        assert!(promoted_bodies(&ks[0]) > 0, "{what}: nothing promoted");
        assert_eq!(
            promoted_bodies(&ks[1]),
            0,
            "{what}: keep_variables promoted"
        );
        same_reports(what, &[&ks[0], &ks[1], &ks[2]], 24);
    }
}

#[test]
fn the_gray_scott_shader_reports_the_same_promoted_or_not() {
    let words = glsl_file("shaders/grayscott/subgroup_1d.comp");
    let ks = three(&words, crate::spirv_grayscott::spec_small());
    assert!(ks[0].promoted() > 0, "nothing promoted");
    // 1: promoted against every variable access run; 2: against calls kept too.
    crate::spirv_grayscott::same_reports_small("promoted", &[&ks[0], &ks[1], &ks[2]]);
}

/// Decodes and runs `main` of `body` (one u32 buffer of 128 words, 16 invocations at subgroup 4)
/// promoted and with every variable access run; both runs.
fn run_both(body: &str) -> [ModelRun; 2] {
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    let [k, kept, _] = three(&words, Vec::new());
    assert!(k.promoted() > 0, "nothing promoted");
    [k, kept].map(|k| run_one(&k))
}

/// Runs `k` on one u32 buffer of 128 zero words, 16 invocations at subgroup 4.
fn run_one(k: &Kernel) -> ModelRun {
    let buf = BufferInput {
        set: 0,
        binding: 0,
        bytes: bytes_u32(&[0; 128]),
        ..Default::default()
    };
    let cfg = RunConfig::new(SubgroupSize::new(4).unwrap(), [1, 1, 1]);
    run_model(k, cfg, &[buf], None).unwrap()
}

/// Runs `body` promoted and not ([`run_both`]): for each `(at, want)`, word `at + i` of the buffer
/// is `want(i)`, exact, for each of the 16 invocations `i`.
#[allow(clippy::type_complexity)]
fn expect_words(body: &str, words: &[(usize, &dyn Fn(u32) -> u32)]) {
    for r in run_both(body) {
        for &(at, want) in words {
            for i in 0..16u32 {
                let got = word(&r, at + i as usize);
                assert_eq!(got, (want(i), WordStatus::Exact), "b[{at} + {i}]");
            }
        }
    }
}

fn word(r: &ModelRun, i: usize) -> (u32, WordStatus) {
    let b = &r.buffers[0];
    (
        u32::from_le_bytes(b.bytes[4 * i..4 * i + 4].try_into().unwrap()),
        r.status(b.word_taint(i)),
    )
}

/// SPIR-V `OpLoad` reads what the last `OpStore` to the same memory wrote (§3.42.8, "Memory
/// Instructions"), in each invocation its own variable: a local stored as a vector and read by
/// component, overwritten, and read again. Expected values from the GLSL source:
/// `b[i] = (i + 1) + 2i + 7`, `b[16 + i] = 5i`.
#[test]
fn a_load_reads_what_the_last_store_to_the_variable_wrote() {
    let body = "void main() { uint i = gl_LocalInvocationIndex; uvec2 p = uvec2(i + 1u, 2u * i); uint a = p.x + p.y; p.y = 7u; a += p.y; b[i] = a; p = uvec2(5u * i, 0u); b[16u + i] = p.x; }";
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(
                word(&r, i as usize),
                ((i + 1) + 2 * i + 7, WordStatus::Exact)
            );
            assert_eq!(word(&r, 16 + i as usize), (5 * i, WordStatus::Exact));
        }
    }
}

/// An invocation's own variables are its path's state, as its registers are (docs/interpreter.md,
/// "Lost paths end where every path meets again"): on a path an undefined value chose, a local
/// stored and read back holds what this path stored, so the out-of-bounds index it makes is
/// reported as the same kernel with the index in a register reports it (SPIR-V 2.2.2: an undefined
/// value is *some* value; the execution that took this way writes past the buffer). Promoted or
/// as written, through a local, an element of a local array or a register: the same findings, the
/// same buffer.
#[test]
fn a_local_stored_on_a_lost_path_reads_back_what_the_path_stored() {
    let branch =
        "void main() { uint i = gl_LocalInvocationIndex; uint u; if ((u < 5u) != (u >= 5u)) {";
    let through_local = format!("{branch} uint t = i + 200u; b[t] = 1u; }} b[i] = 2u; }}");
    // A place each invocation picks for itself (not one pointer for all): the store lane by lane.
    let through_array =
        format!("{branch} uint t[2]; t[i & 1u] = i + 200u; b[t[i & 1u]] = 1u; }} b[i] = 2u; }}");
    let in_register = format!("{branch} b[i + 200u] = 1u; }} b[i] = 2u; }}");
    let texts =
        |r: &ModelRun| -> Vec<String> { r.findings.iter().map(|f| r.finding_text(f)).collect() };
    let words = glsl(&format!("{HEAD}{in_register}\n"), "k.comp");
    let [k, ..] = three(&words, Vec::new());
    let expected = texts(&run_one(&k));
    let oob: Vec<&String> = expected
        .iter()
        .filter(|t| t.contains("out-of-bounds write of b"))
        .collect();
    assert!(
        !oob.is_empty(),
        "no lane took the way that writes past b: {expected:#?}"
    );
    for r in run_both(&through_local)
        .into_iter()
        .chain(run_both(&through_array))
    {
        assert_eq!(texts(&r), expected);
        for i in 0..16 {
            assert_eq!(word(&r, i).0, 2, "b[{i}]");
        }
    }
}

/// Locals assigned and read in one block never need memory. glslang's unoptimised module for
/// `uint i = gl_LocalInvocationIndex; uint a = i + 1u; uint c = a * 2u; b[i] = c;` stores `i`,
/// `a` and `c` once each and loads `i` twice, `a` once and `c` once: each load reads a store
/// earlier in the block (4 loads), and no variable is then read from memory (3 stores) — 7
/// instructions the promoted body does not run; the values are the source's, `b[i] = 2(i + 1)`.
#[test]
fn locals_assigned_and_read_in_one_block_are_never_in_memory() {
    let body = "void main() { uint i = gl_LocalInvocationIndex; uint a = i + 1u; uint c = a * 2u; b[i] = c; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 7);
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (2 * (i + 1), WordStatus::Exact));
        }
    }
}

/// An inlined call whose arguments and locals live in one block needs no memory either: for
/// `uint f(uint v) { uint t = v * 3u; return t + 1u; }` and `uint i = gl_LocalInvocationIndex;
/// b[i] = f(i);`, glslang's module stores `i` and the argument's temporary `param` in `main` and
/// `t` in `f`, and loads `i` twice, `param` once (through `f`'s pointer parameter) and `t` once.
/// Inlined, the promoted body runs none of the four loads, the argument's pointer copy, the
/// return's copy, the three stores and the reset of `f`'s locals: 10 instructions, and
/// `b[i] = 3i + 1`.
#[test]
fn an_inlined_calls_argument_and_locals_are_never_in_memory() {
    let body = "uint f(uint v) { uint t = v * 3u; return t + 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = f(i); }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 10);
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (3 * i + 1, WordStatus::Exact));
        }
    }
}

/// A register renamed away must not be read where its definition no longer runs. Three places a
/// promoted body could read one: a phi in the next block (`&&` with a call on its right), an
/// expression that reads a call's result after another call (the second callee runs the first
/// one's instructions again, inlined, and rewrites its registers), and a call whose result is
/// never read. Values from the GLSL source: `b[i] = (i > 3 && i odd) ? 1 : 0`, `b[16 + i] =
/// 3i + (i > 2 ? 3(i + 7) : 1)`, and `b[32 + i] = i` after a call whose result is dropped.
#[test]
fn a_renamed_register_is_not_read_where_its_definition_no_longer_runs() {
    let body = "bool odd(uint v) { return (v & 1u) == 1u; }\nuint g(uint v) { return v * 3u; }\nuint h(uint v) { uint r = 1u; if (v > 2u) { r = g(v + 7u); } return r; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = (i > 3u && odd(i)) ? 1u : 0u; b[16u + i] = g(i) + h(i); g(i + 1u); b[32u + i] = i; }";
    for r in run_both(body) {
        for i in 0..16u32 {
            let want = (i > 3 && i % 2 == 1) as u32;
            assert_eq!(word(&r, i as usize), (want, WordStatus::Exact), "b[{i}]");
            let want = 3 * i + if i > 2 { 3 * (i + 7) } else { 1 };
            assert_eq!(
                word(&r, 16 + i as usize),
                (want, WordStatus::Exact),
                "b[16 + {i}]"
            );
            assert_eq!(
                word(&r, 32 + i as usize),
                (i, WordStatus::Exact),
                "b[32 + {i}]"
            );
        }
    }
}

/// An instruction that writes a variable through its pointer ends what the block knows of the
/// variables: in `float w = 7.0; float f = modf(float(i) + 0.25, w);` glslang's `OpExtInst Modf`
/// writes `w` through `%w`, and the load of `w` after it must read the whole part it wrote
/// (GLSL.std.450 `Modf`: the whole number part is "stored through the pointer"), not the 7 stored
/// before: `b[i] = i`, and `b[16 + i]` the bits of 0.25. The module stores `i`, `w` and `f`,
/// loads `i` three times (once before the `Modf`, twice after), `w` once and `f` once. The
/// promoted body does not run the load of `i` before the `Modf` (it reads the store), the second
/// load of `i` after it (it reads the first), the load of `f` (stored after the `Modf`) nor `f`'s
/// store (never read from memory again): 4.
#[test]
fn a_load_after_an_instruction_that_writes_the_variable_reads_what_it_wrote() {
    let body = "void main() { uint i = gl_LocalInvocationIndex; float w = 7.0; float f = modf(float(i) + 0.25, w); b[i] = uint(w); b[16u + i] = floatBitsToUint(f); }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 4);
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (i, WordStatus::Exact), "b[{i}]");
            let want = (0.25f32.to_bits(), WordStatus::Exact);
            assert_eq!(word(&r, 16 + i as usize), want, "b[16 + {i}]");
        }
    }
}

/// An inlined callee's access chain of constant steps from its pointer parameter is a constant
/// pointer once the argument's copy is gone, and its loads and stores are promoted like any
/// other: for `void f(inout uvec2 v) { v.y = v.x + 1u; }` and `uint i = gl_LocalInvocationIndex;
/// uvec2 p = uvec2(i, 0u); f(p); b[i] = p.y;`, glslang passes `p` through a temporary `param`.
/// Inlined, the promoted body does not run the copy of `param`'s pointer into `v`, `f`'s two
/// chains (`v.x`, `v.y`), `main`'s two loads of `i` and its load of `p` (each reads a store of the
/// block), nor the store of `i` and the two stores of `p` (neither is read from memory again), nor
/// the loads of `v.x` and `p.y`, which read one component of a stored `uvec2` in place (a view,
/// docs/interpreter.md "Extracts read in place"): 11. `b[i] = i + 1`.
#[test]
fn an_inlined_callees_constant_chain_from_its_parameter_is_a_constant_pointer() {
    let body = "void f(inout uvec2 v) { v.y = v.x + 1u; }\nvoid main() { uint i = gl_LocalInvocationIndex; uvec2 p = uvec2(i, 0u); f(p); b[i] = p.y; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 11);
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (i + 1, WordStatus::Exact), "b[{i}]");
        }
    }
}

/// A component read in place (a view of the register that holds the vector) must not be read by
/// the instruction that writes that register again: `uvec2 swap(uvec2 v) { return uvec2(v.y,
/// v.x); }` inlined twice into one block reuses the callee's registers, so the second copy's
/// `uvec2(v.y, v.x)` writes the very register whose components it reads — read in place, its
/// second component would read the first as just written. GLSL (§5.5, "Vector Components"):
/// swapped twice, `p` is what it was — `b[i] = i`, `b[16 + i] = i + 100`. The components of the
/// first copy are read in place (the register is not written again before they are read), those
/// of the second are copied, so the promoted body has views and still computes this.
#[test]
fn a_component_read_in_place_is_not_read_by_the_write_of_its_vector() {
    let body = "uvec2 swap(uvec2 v) { return uvec2(v.y, v.x); }\nvoid main() { uint i = gl_LocalInvocationIndex; uvec2 p = uvec2(i, i + 100u); p = swap(p); p = swap(p); b[i] = p.x; b[16u + i] = p.y; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert!(
        !three(&words, Vec::new())[0].reg_views.is_empty(),
        "no view made"
    );
    expect_words(body, &[(0, &|i| i), (16, &|i| i + 100)]);
}

/// The `OpCompositeConstruct`s of a kernel's promoted bodies, and of its blocks as written (by
/// their debug form: the decoded instructions are the crate's own).
fn constructs(k: &Kernel) -> (usize, usize) {
    let is = |i: &&_| format!("{i:?}").starts_with("Construct {");
    let blocks = || k.funcs.iter().flat_map(|f| &f.blocks);
    let written = blocks().map(|b| b.insts.iter().filter(is).count()).sum();
    let fast = blocks()
        .map(|b| match &b.fast {
            Some(f) => f.insts.iter().filter(is).count(),
            None => b.insts.iter().filter(is).count(),
        })
        .sum();
    (fast, written)
}

/// A vector built of parts its block computes is built in place (each part computed into its
/// slot, the construct not run) only where nothing reads the vector's register while the parts
/// are computed: `uvec2 step(uvec2 v) { return uvec2(v.y + 1u, v.x); }` inlined twice into one
/// block reuses the callee's registers, so the second copy's parts are computed while `v.x` —
/// the register the construct writes — is still to be read; computed in place, `v.y + 1u` would
/// overwrite the `v.x` read after it. GLSL (§5.4.2, "Vector and Matrix Constructors"; §5.5): from
/// `p = (i, i + 100)`, `step` gives `(i + 101, i)`, then `(i + 1, i + 101)`. The first copy and
/// `uvec2(i, i + 100u)` are built in place (fewer constructs in the promoted body), the second is
/// not, and the results are those.
#[test]
fn a_vector_is_built_in_place_only_where_nothing_reads_it_meanwhile() {
    let body = "uvec2 step(uvec2 v) { return uvec2(v.y + 1u, v.x); }\nvoid main() { uint i = gl_LocalInvocationIndex; uvec2 p = uvec2(i, i + 100u); p = step(p); p = step(p); b[i] = p.x; b[16u + i] = p.y; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    let (fast, written) = constructs(&three(&words, Vec::new())[0]);
    assert!(fast < written, "{fast} constructs run of {written}");
    assert!(fast > 0, "the second copy's construct must stay");
    expect_words(body, &[(0, &|i| i + 1), (16, &|i| i + 101)]);
}

/// A part computed in its vector's place is read there only until the vector's register is
/// written again: `uvec2 pair(uint x) { return uvec2(x, x * 2u); }` inlined twice into one block
/// writes the callee's result register twice, and `main`'s `x`, the first copy's part, is read
/// after the second copy wrote it — so that part stays where it is. GLSL (§5.4.2): with
/// `x = i + 1`, `a = (i + 1, 2i + 2)`, `c = pair(i) = (i, 2i)`, and `a.x + a.y + c.x + c.y + x =
/// 7i + 4`.
#[test]
fn a_part_is_not_read_in_its_vectors_place_once_the_vector_is_written_again() {
    let body = "uvec2 pair(uint x) { return uvec2(x, x * 2u); }\nvoid main() { uint i = gl_LocalInvocationIndex; uint x = i + 1u; uvec2 a = pair(x); uvec2 c = pair(i); b[i] = a.x + a.y + c.x + c.y + x; }";
    expect_words(body, &[(0, &|i| 7 * i + 4)]);
}

/// A store into a buffer, or an atomic on one, cannot reach an invocation's own variable, so what
/// the block knows of the variables outlives it: in `uint i = gl_LocalInvocationIndex; uvec2 p;
/// p.x = i; p.y = i + 1u; b[i] = p.x; atomicAdd(b[64u], 1u); b[16u + i] = p.y * 2u;` glslang's
/// module stores `i` once and `p.x`, `p.y` once each (the decoder folds the constant access
/// chains into constant pointers), loads `i` four times — two of them after the store into `b`
/// and the atomic — and `p.x`, `p.y` once each, `p.y` after them too. Every load reads a store
/// earlier in the block (6), and neither variable is then read from memory (3 stores): 9
/// instructions not run; `b[i] = i`, `b[16 + i] = 2(i + 1)`, `b[64] = 16` (one add per invocation).
#[test]
fn a_store_or_atomic_on_a_buffer_leaves_what_the_block_knows_of_its_variables() {
    let body = "void main() { uint i = gl_LocalInvocationIndex; uvec2 p; p.x = i; p.y = i + 1u; b[i] = p.x; atomicAdd(b[64u], 1u); b[16u + i] = p.y * 2u; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 9);
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (i, WordStatus::Exact), "b[{i}]");
            let want = (2 * (i + 1), WordStatus::Exact);
            assert_eq!(word(&r, 16 + i as usize), want, "b[16 + {i}]");
        }
        assert_eq!(word(&r, 64).0, 16, "b[64]");
    }
}

/// An inlined call starts its callee's variables afresh (SPIR-V: a `Function` variable without an
/// initializer is undefined at each entry to its function), so what the block knew of them from
/// an earlier call of the same function is gone: for `uint g() { uint t; uint r = t; t = 5u;
/// return r; }` called twice in one block (`b[i] = g(); b[16u + i] = g();`), the second call's
/// `r = t` reads an undefined `t`, not the 5 the first call stored — both results are undefined.
/// glslang's module stores `i` and loads it twice; `g` loads `t`, stores `r`, stores `t` and loads
/// `r`. The promoted body runs neither load of `i`, nor `i`'s store, nor the two loads and two
/// stores of `r`, nor the two copies of the returned value: 9; `t`'s loads stay (after each
/// reset there is nothing to read them from).
#[test]
fn an_inlined_calls_variables_start_afresh_at_each_call() {
    let body = "uint g() { uint t; uint r = t; t = 5u; return r; }\nvoid main() { uint i = gl_LocalInvocationIndex; b[i] = g(); b[16u + i] = g(); }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    assert_eq!(three(&words, Vec::new())[0].promoted(), 9);
    for r in run_both(body) {
        for i in 0..32usize {
            assert!(
                matches!(word(&r, i).1, WordStatus::Undefined(_)),
                "b[{i}]: {:?}",
                word(&r, i)
            );
        }
    }
}

/// A register a block defines and a later block's terminator reads is live where the block ends
/// (the branch reads the value the load gave, SPIR-V §3.42.8 `OpLoad` / §3.42.17
/// `OpBranchConditional`), so the load that defines it stays, even where a store earlier in its
/// block holds the value. glslang computes a branch's condition in the branching block, so this
/// module is written in SPIR-V assembly: block 1 stores `odd = (i & 1) == 1` into a `bool` local
/// and loads it into `%r`; block 2 branches on `%r` — odd invocations write `b[i] = 1`, even ones
/// `b[i] = 2`. Dropping the load (its uses renamed to the stored register within block 1 only)
/// would leave `%r` never written and every invocation on one side.
#[test]
fn a_terminators_read_in_a_later_block_keeps_the_load_that_defines_it() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let asm = format!(
        "{ASM_PRELUDE}       %bool = OpTypeBool
     %fbool = OpTypePointer Function %bool
     %uint_2 = OpConstant %uint 2
       %main = OpFunction %void None %fn
      %entry = OpLabel
       %flag = OpVariable %fbool Function
          %i = OpLoad %uint %lii
        %bit = OpBitwiseAnd %uint %i %uint_1
        %odd = OpIEqual %bool %bit %uint_1
               OpStore %flag %odd
          %r = OpLoad %bool %flag
               OpBranch %next
       %next = OpLabel
               OpSelectionMerge %merge None
               OpBranchConditional %r %then %else
       %then = OpLabel
         %p1 = OpAccessChain %eptr %buf %uint_0 %i
               OpStore %p1 %uint_1
               OpBranch %merge
       %else = OpLabel
         %p2 = OpAccessChain %eptr %buf %uint_0 %i
               OpStore %p2 %uint_2
               OpBranch %merge
      %merge = OpLabel
               OpReturn
               OpFunctionEnd
"
    );
    let m = compile(&asm, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let [k, kept, _] = three(&m.words, Vec::new());
    for k in [k, kept] {
        let r = run_one(&k);
        for i in 0..16u32 {
            let want = if i & 1 == 1 { 1 } else { 2 };
            assert_eq!(word(&r, i as usize), (want, WordStatus::Exact), "b[{i}]");
        }
    }
}

/// A local carried across blocks is read from its register wherever every path to the load
/// stored it (SPIR-V `OpLoad` reads what the last `OpStore` wrote, §3.42.8). glslang's module for
/// `uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 4u; k++) { s += k * i; }
/// b[i] = s;` stores `i`, `s` and `k` in the entry block and loads them in four other blocks:
/// `k` in the loop's test, `k`, `i` and `s` in its body, `k` in its continue block, `i` and `s`
/// after it — 7 loads, every one after the entry block's stores on every path. The promoted
/// bodies run none of them: one load is left, of `gl_LocalInvocationIndex` (an `Input`
/// variable). The stores stay (the bodies as written read them once a path is lost), each with a
/// copy into the variable's register. Values from the source: `b[i] = (0 + 1 + 2 + 3)·i = 6i`.
#[test]
fn a_local_stored_on_every_path_to_a_later_block_is_read_there_from_its_register() {
    let body = "void main() { uint i = gl_LocalInvocationIndex; uint s = 0u; for (uint k = 0u; k < 4u; k++) { s += k * i; } b[i] = s; }";
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    let [k, kept, _] = three(&words, Vec::new());
    let loads = |k: &Kernel, promoted: bool| loads_in(k, k.entry as usize, promoted);
    assert_eq!(loads(&kept, false), 8, "the module as glslang writes it");
    assert_eq!(loads(&kept, true), 8, "keep_variables");
    assert_eq!(loads(&k, true), 1, "promoted");
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (6 * i, WordStatus::Exact));
        }
    }
}

/// A helper's pointer parameters that every call passes the same temporary of the caller's are
/// bound to it, and the helper's loads through them read the temporary's register where the caller
/// stored it before every call (SPIR-V `OpFunctionCall`'s pointer argument names the caller's
/// variable itself, §3.42.9; `OpLoad` reads what the last `OpStore` wrote, §3.42.8). glslang's
/// module for `acc(inout s, v, n)` with a loop, called from one place in `main`'s loop, loads
/// `j` and `n` in the loop's test, `v`, `j` and `s` in its body and `j` in its continue block:
/// 6 loads, `n`, `v` and `s` through the parameters, `j` a local stored in the entry block. `main`
/// stores the three temporaries just before the call, so the promoted bodies of `acc` run none
/// of the 6. `main` as written loads 11 times (`i`, `s`, `k` around its loop, the temporary after
/// the call); a call resets none of `main`'s variables, so only two loads are left: of
/// `gl_LocalInvocationIndex` (an `Input` variable) and of the temporary after the call (nothing
/// after a call in a block is promoted). Values from the source: `s = i + Σ_{k<3} (i + k)·k(k+1)/2
/// = i + (i + 1) + 3(i + 2) = 5i + 7`.
#[test]
fn a_helpers_parameters_bound_to_one_callers_temporaries_are_read_from_their_registers() {
    let body = KERNELS[16].1;
    let words = glsl(&format!("{HEAD}{body}\n"), "k.comp");
    let [k, kept, _] = three(&words, Vec::new());
    let loads = |k: &Kernel, name: &str, promoted: bool| {
        let fi = k.funcs.iter().position(|f| f.name.starts_with(name));
        loads_in(k, fi.unwrap(), promoted)
    };
    assert_eq!(loads(&kept, "acc", false), 6, "acc as glslang writes it");
    assert_eq!(loads(&kept, "acc", true), 6, "acc, keep_variables");
    assert_eq!(loads(&k, "acc", true), 0, "acc promoted");
    assert_eq!(loads(&kept, "main", false), 11, "main as glslang writes it");
    assert_eq!(loads(&k, "main", true), 2, "main promoted");
    for r in run_both(body) {
        for i in 0..16u32 {
            assert_eq!(word(&r, i as usize), (5 * i + 7, WordStatus::Exact));
        }
    }
}

/// A parameter is bound only where every call passes the same pointer: SPIR-V `OpFunctionCall`'s
/// pointer argument names the variable the callee's loads and stores reach (§3.42.9), so two
/// calls with two variables leave the callee reading whichever its caller passed. The module is
/// written in SPIR-V assembly (glslang gives each call a temporary of its own, stored just before
/// it): `main` stores `a = i` and `c = i + 100` in its entry block, then calls `inc(&a)` and
/// `inc(&c)`; `inc` (two blocks, so a call stays a call) loads through its parameter in its
/// second block and stores one more. Both variables are stored before both calls, so a binding
/// to either one would have the other call read the wrong variable's register. Values from the
/// module: `b[i] = i + 1`, `b[16 + i] = i + 101`.
#[test]
fn a_parameter_two_calls_pass_two_variables_is_not_bound_to_either() {
    use lockstep::kernel::{compile, SourceLang, SourceOptions};
    let asm = format!(
        "{ASM_PRELUDE}      %fuint = OpTypePointer Function %uint
      %incfn = OpTypeFunction %void %fuint
    %uint_16 = OpConstant %uint 16
   %uint_100 = OpConstant %uint 100
        %inc = OpFunction %void None %incfn
          %p = OpFunctionParameter %fuint
     %ientry = OpLabel
               OpBranch %body
       %body = OpLabel
          %v = OpLoad %uint %p
          %w = OpIAdd %uint %v %uint_1
               OpStore %p %w
               OpReturn
               OpFunctionEnd
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %a = OpVariable %fuint Function
          %c = OpVariable %fuint Function
          %i = OpLoad %uint %lii
               OpStore %a %i
        %i100 = OpIAdd %uint %i %uint_100
               OpStore %c %i100
         %r1 = OpFunctionCall %void %inc %a
         %r2 = OpFunctionCall %void %inc %c
               OpBranch %after
      %after = OpLabel
         %ra = OpLoad %uint %a
         %rc = OpLoad %uint %c
         %p1 = OpAccessChain %eptr %buf %uint_0 %i
               OpStore %p1 %ra
        %i16 = OpIAdd %uint %i %uint_16
         %p2 = OpAccessChain %eptr %buf %uint_0 %i16
               OpStore %p2 %rc
               OpReturn
               OpFunctionEnd
"
    );
    let m = compile(&asm, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let ks = three(&m.words, Vec::new());
    same_reports("two calls, two variables", &[&ks[0], &ks[1], &ks[2]], 32);
    let r = run_one(&ks[0]);
    for i in 0..16u32 {
        assert_eq!(word(&r, i as usize), (i + 1, WordStatus::Exact), "b[{i}]");
        assert_eq!(
            word(&r, 16 + i as usize),
            (i + 101, WordStatus::Exact),
            "b[16 + {i}]"
        );
    }
}

/// A float `inout` parameter of a helper bound to its caller's local (docs/interpreter.md,
/// "Parameters bound to one caller's temporaries"): the helper's `a += y` writes the register it
/// reads (and `a = -a` too), in every lane at once. SPIR-V's OpFAdd and OpFMul are correctly rounded, and these
/// small dyadic values are exact, so from the GLSL source, with `x = i + 0.5`: the first call
/// leaves `z = x·i`, `x = -(x + i)`; the second `x = z·0.25`, `z = -(z + 0.25)`.
#[test]
fn a_float_parameter_updated_in_place_is_updated_in_every_lane() {
    let body = "void g(inout float a, out float c, float y) { c = a * y; a += y; a = -a; }\nvoid main() { uint i = gl_LocalInvocationIndex; float x = float(i) + 0.5; float z; g(x, z, float(i)); g(z, x, 0.25); b[i] = floatBitsToUint(x); b[16u + i] = floatBitsToUint(z); }";
    for r in run_both(body) {
        for i in 0..16u32 {
            let z = (i as f32 + 0.5) * i as f32;
            assert_eq!(
                word(&r, i as usize),
                ((z * 0.25).to_bits(), WordStatus::Exact),
                "lane {i}"
            );
            assert_eq!(
                word(&r, 16 + i as usize),
                ((-(z + 0.25)).to_bits(), WordStatus::Exact),
                "lane {i}"
            );
        }
    }
}

/// An `inout` float parameter updated by its helper, holding a denormalized value in every lane:
/// a device may flush it (Vulkan, "Precision and Operation of SPIR-V Instructions"; the rule of
/// `spirv::a_denormal_operand_or_result_is_inexact_unless_the_module_preserves_denormals`), so
/// `a += y` is inexact in each lane whether the parameter is promoted to the caller's register or
/// kept in memory. Lanes with `i ≥ 8` add 1.0: a normal result, but from a denormal operand —
/// inexact too.
#[test]
fn a_denormal_inout_parameter_updated_by_its_helper_is_inexact_in_every_lane() {
    let body = "void g(inout float a, float y) { a += y; }\nvoid main() { uint i = gl_LocalInvocationIndex; float x = uintBitsToFloat(0x10000u + i); g(x, i < 8u ? 0.0 : 1.0); b[i] = floatBitsToUint(x); }";
    for r in run_both(body) {
        for i in 0..16u32 {
            let x = f32::from_bits(0x10000 + i);
            assert!(x.is_subnormal());
            let sum = if i < 8 { x } else { x + 1.0 };
            let want = (sum.to_bits(), WordStatus::Inexact);
            assert_eq!(word(&r, i as usize), want, "lane {i}");
        }
    }
}

/// The rule of `a_denormal_inout_parameter_updated_by_its_helper_is_inexact_in_every_lane` (a
/// device may flush a denormalized operand or result) where the helper's product writes the
/// register it reads (the second call binds
/// `c` to the caller's `x` and `a` to its `z`: `c = a * y` in place): normal operands whose
/// product is denormalized — `(i + 1)·2⁻¹⁰⁰ · 2⁻⁴⁰ = (i + 1)·2⁻¹⁴⁰`, bits `512·(i + 1)` — may be
/// flushed by a device, so `x` is inexact in every lane; `z = −(z + 2⁻⁴⁰)` of normal values rounds
/// to `−2⁻⁴⁰` (the other term is 2⁻⁶⁰ of it, under half an ulp) and is exact.
#[test]
fn a_denormal_product_written_in_place_is_inexact_in_every_lane() {
    let body = "void g(inout float a, out float c, float y) { c = a * y; a += y; a = -a; }\nvoid main() { uint i = gl_LocalInvocationIndex; float x = ldexp(float(i + 1u), -100); float z; g(x, z, 1.0); g(z, x, ldexp(1.0, -40)); b[i] = floatBitsToUint(x); b[16u + i] = floatBitsToUint(z); }";
    for r in run_both(body) {
        for i in 0..16u32 {
            // 2⁻¹⁴⁰ as 2⁻⁷⁰·2⁻⁷⁰, both normal: `powi(-140)` may go through 2¹⁴⁰, past f32's range.
            let want = (i + 1) as f32 * 2f32.powi(-70) * 2f32.powi(-70);
            assert!(want.is_subnormal());
            assert_eq!(want.to_bits(), 512 * (i + 1));
            assert_eq!(
                word(&r, i as usize),
                (want.to_bits(), WordStatus::Inexact),
                "lane {i}"
            );
            assert_eq!(
                word(&r, 16 + i as usize),
                ((-(2f32.powi(-40))).to_bits(), WordStatus::Exact),
                "lane {i}"
            );
        }
    }
}
