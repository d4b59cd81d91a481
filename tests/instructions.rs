//! Instructions run through the interpreter end to end — decoded from a module, executed, written
//! to a buffer — where the other files reach them only in part: the GLSL.std.450 functions (the
//! evaluator's unit tests in `src/spirv/glsl.rs` check the arithmetic; these check that decoding
//! routes each instruction to it), dynamic vector indexing, outer products, specialization-constant
//! operations, long access chains, non-semantic instructions and `OpUnreachable`. Expected values
//! are worked from the definitions each test cites.
#![cfg(feature = "vulkan")]
use crate::spirv_support::{bindings, bytes_f32, bytes_u32, f32s, glsl, u32s};
use lockstep::kernel::{compile, SourceLang, SourceOptions};
use lockstep::model::SubgroupSize;
use lockstep::reconverge::Mode;
use lockstep::spirv::*;

/// Runs one workgroup at subgroup size 4 under base reconvergence, `buffers` bound at set 0,
/// bindings 0, 1, …
fn run(words: &[u32], buffers: Vec<Vec<u8>>) -> ModelRun {
    run_with(words, vec![], 4, buffers)
}

/// [`run`] with specialization constants `spec` at subgroup size `size`.
fn run_with(
    words: &[u32],
    spec: Vec<(u32, SpecInput)>,
    size: u64,
    buffers: Vec<Vec<u8>>,
) -> ModelRun {
    let k = decode(
        words,
        &DecodeOptions {
            spec,
            ..Default::default()
        },
    )
    .unwrap();
    let mut c = RunConfig::new(SubgroupSize::new(size).unwrap(), [1, 1, 1]);
    c.mode = Mode::Base;
    run_model(&k, c, &bindings(buffers), None).unwrap()
}

/// A buffer of u32 `words` for element `element` of the array of descriptors at set 0, `binding`.
fn input(binding: u32, element: u32, words: &[u32]) -> BufferInput {
    BufferInput {
        set: 0,
        binding,
        element,
        bytes: bytes_u32(words),
        ..Default::default()
    }
}

/// Asserts that each of `words` of the buffer at binding `binding` of run `r` is undefined.
fn assert_undefined(r: &ModelRun, binding: u32, words: impl IntoIterator<Item = usize>) {
    let b = &r.buffers[at(r, binding)];
    for w in words {
        assert!(
            matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_)),
            "o[{w}]: {:?}",
            r.status(b.word_taint(w))
        );
    }
}

fn asm(text: &str) -> Vec<u32> {
    compile(text, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap()
        .words
}

/// The error decoding refuses [`module`]`("", "", types, body)` with, as text.
fn refused(types: &str, body: &str) -> String {
    decode(
        &asm(&module("", "", types, body)),
        &DecodeOptions::default(),
    )
    .unwrap_err()
    .to_string()
}

/// Where the buffer at `binding` is in `r.buffers`.
fn at(r: &ModelRun, binding: u32) -> usize {
    r.buffers.iter().position(|b| b.binding == binding).unwrap()
}

/// Every GLSL.std.450 function a GLSL program can name and no other test runs through the
/// interpreter, on run-time operands (read from a buffer, so glslang folds nothing), each result
/// by its definition in GLSL 4.60 §8 ("Built-In Functions") and GLSL.std.450:
/// - §8.3: `roundEven(2.5)` = 2, `trunc(−2.75)` = −2, `sign` −1, `floor` −3, `ceil` −2,
///   `fract(x)` = x − floor(x) = 0.25; `round(2.5)` is 2 or 3 ("a fractional part of 0.5 will
///   round in a direction chosen by the implementation"); `min`, `mix(x, y, a)` = x·(1−a) + y·a,
///   `step(edge, x)` = 0 where x < edge;
/// - §8.1, §8.2: `radians(180)` = π, `degrees(0.5)` = 90/π, the trigonometric and hyperbolic
///   functions of 0.5, `pow(2, 3)` = `exp2(3)` = 8, `log2(2)` = 1, `inversesqrt(4)` = 0.5;
/// - §8.5: `length((3, 4))` = `distance((3, 0), (0, 4))` = 5, `cross(x̂/2, 2ŷ)` = ẑ,
///   `faceforward(N, I, Nref)` = −N where dot(Nref, I) ≥ 0, `reflect(I, N)` = I − 2·dot(N, I)·N,
///   `refract(I, N, η)` = η·I − (η·dot(N, I) + √k)·N with k = 1 − η²·(1 − dot(N, I)²);
/// - §8.4: the pack functions `round(clamp(c, −1, 1)·127)` (snorm8), `·255` (unorm8), `·32767`,
///   `·65535`, the first component in the least significant bits; the unpack functions their
///   inverses (`clamp(f/127, −1, 1)`, `f/255`, …); half and double packing by IEEE 754 bits;
/// - §8.8: `findLSB(12)` = 2; §8.6: `outerProduct(c, r)[j][i]` = c[i]·r[j].
///
/// The inexact functions (every one whose precision Vulkan bounds in ULP or absolute error) are
/// compared within 1e-5 relative; the exact ones bit for bit. No result may be undefined.
#[test]
fn every_glsl_std_450_function_is_decoded_to_its_definition() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer F { float f[]; };
layout(binding = 1) buffer U { uint u[]; };
layout(binding = 2) buffer A { float a[]; };
layout(binding = 3) buffer P { uint p[]; };
void main() {
  float h = a[0], m = a[1], q = a[2], two = a[3], d180 = a[4], three = a[5];
  f[0] = round(h);
  f[1] = roundEven(h);
  f[2] = trunc(m);
  f[3] = sign(m);
  f[4] = floor(m);
  f[5] = ceil(m);
  f[6] = fract(m);
  f[7] = radians(d180);
  f[8] = degrees(q);
  f[9] = sin(q);
  f[10] = cos(q);
  f[11] = tan(q);
  f[12] = acos(q);
  f[13] = atan(q);
  f[14] = sinh(q);
  f[15] = cosh(q);
  f[16] = tanh(q);
  f[17] = asinh(q);
  f[18] = acosh(two);
  f[19] = atanh(q);
  f[20] = pow(two, three);
  f[21] = exp(q);
  f[22] = exp2(three);
  f[23] = log2(two);
  f[24] = inversesqrt(two * two);
  f[25] = min(m, q);
  f[26] = mix(two, three, q);
  f[27] = step(q, m);
  f[28] = step(q, two);
  f[29] = length(vec2(three, two * two));
  f[30] = distance(vec2(three, 0.0), vec2(0.0, two * two));
  f[31] = cross(vec3(q, 0.0, 0.0), vec3(0.0, two, 0.0)).z;
  f[32] = faceforward(vec2(q, 0.0), vec2(two, 0.0), vec2(three, 0.0)).x;
  f[33] = reflect(vec2(q, -q), vec2(0.0, 1.0)).y;
  f[34] = refract(vec2(0.0, -1.0), vec2(0.0, 1.0), q).y;
  vec2 s2 = unpackSnorm2x16(p[0]);
  f[35] = s2.x; f[36] = s2.y;
  vec2 u2 = unpackUnorm2x16(p[1]);
  f[37] = u2.x; f[38] = u2.y;
  vec2 h2 = unpackHalf2x16(p[2]);
  f[39] = h2.x; f[40] = h2.y;
  vec4 s4 = unpackSnorm4x8(p[3]);
  f[41] = s4.x; f[42] = s4.y; f[43] = s4.z;
  vec4 u4 = unpackUnorm4x8(p[4]);
  f[44] = u4.x; f[45] = u4.y; f[46] = u4.w;
  mat3x2 o = outerProduct(vec2(q, two), vec3(1.0, three, two));
  f[47] = o[1][1]; f[48] = o[2][0]; f[49] = o[0][1];
  u[0] = packSnorm4x8(vec4(two * q, -two * q, 0.0, q * q));
  u[1] = packUnorm4x8(vec4(two * q, 0.0, q * q, three * q * q));
  u[2] = packSnorm2x16(vec2(two * q, -q * q));
  u[3] = packUnorm2x16(vec2(q * q, two * q));
  u[4] = packHalf2x16(vec2(q, two));
  u[5] = uint(packDouble2x32(uvec2(p[5], p[6])) * 3.0lf);
  uvec2 w = unpackDouble2x32(double(two));
  u[6] = w.x; u[7] = w.y;
  u[8] = uint(findLSB(uint(two * 6.0)));
  u[9] = uint(findLSB(int(two * -6.0)));
}
";
    let inputs = [2.5f32, -2.75, 0.5, 2.0, 180.0, 3.0];
    let packed = [
        0x8001_7fffu32,
        0xffff_0000,
        0x4000_3800,
        0x0000_817f,
        0xff00_00ff,
        0,
        0x3ff0_0000,
    ];
    let r = run(
        &glsl(src, "std450.comp"),
        vec![
            bytes_f32(&[0.0; 50]),
            bytes_u32(&[0; 10]),
            bytes_f32(&inputs),
            bytes_u32(&packed),
        ],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let (fb, ub) = (&r.buffers[at(&r, 0)], &r.buffers[at(&r, 1)]);
    for (b, n) in [(fb, 50), (ub, 10)] {
        for w in 0..n {
            assert!(
                matches!(
                    r.status(b.word_taint(w)),
                    WordStatus::Exact | WordStatus::Inexact
                ),
                "binding {} word {w}: {:?}",
                b.binding,
                r.status(b.word_taint(w))
            );
        }
    }
    let f = f32s(&fb.bytes);
    use std::f64::consts::PI;
    let q = 0.5f64;
    let inexact: [(usize, f64); 22] = [
        (7, PI),
        (8, 90.0 / PI),
        (9, q.sin()),
        (10, q.cos()),
        (11, q.tan()),
        (12, q.acos()),
        (13, q.atan()),
        (14, q.sinh()),
        (15, q.cosh()),
        (16, q.tanh()),
        (17, q.asinh()),
        (18, 2f64.acosh()),
        (19, q.atanh()),
        (20, 8.0),
        (21, q.exp()),
        (22, 8.0),
        (23, 1.0),
        (24, 0.5),
        (26, 2.5),
        (29, 5.0),
        (30, 5.0),
        (34, -1.0),
    ];
    for (i, want) in inexact {
        assert!(
            (f[i] as f64 - want).abs() <= 1e-5 * want.abs(),
            "f[{i}] = {} where {want} is defined",
            f[i]
        );
    }
    assert!(f[0] == 2.0 || f[0] == 3.0, "round(2.5) = {}", f[0]);
    let exact: [(usize, f32); 24] = [
        (1, 2.0),
        (2, -2.0),
        (3, -1.0),
        (4, -3.0),
        (5, -2.0),
        (6, 0.25),
        (25, -2.75),
        (27, 0.0),
        (28, 1.0),
        (31, 1.0),
        (32, -0.5),
        (33, 0.5),
        (35, 1.0),
        (36, -1.0),
        (37, 0.0),
        (38, 1.0),
        (39, 0.5),
        (40, 2.0),
        (41, 1.0),
        (42, -1.0),
        (43, 0.0),
        (44, 1.0),
        (45, 0.0),
        (46, 1.0),
    ];
    for (i, want) in exact {
        assert_eq!(f[i], want, "f[{i}]");
    }
    assert_eq!([f[47], f[48], f[49]], [6.0, 1.0, 2.0], "outerProduct");
    // snorm8 (1, −1, 0, 0.25) → 127, −127 (0x81), 0, round(31.75) = 32; unorm8 (1, 0, 0.25,
    // 0.75) → 255, 0, round(63.75) = 64, round(191.25) = 191; snorm16 (1, −0.25) → 32767,
    // round(−8191.75) = −8192 (0xe000); unorm16 (0.25, 1) → round(16383.75) = 16384, 65535; half
    // (0.5, 2) → 0x3800, 0x4000; the double of bits 0x3ff00000_00000000 is 1.0, times 3; 2.0 as a
    // double is 0x40000000_00000000; findLSB(12) = findLSB(−12) = 2.
    assert_eq!(
        u32s(&ub.bytes),
        [
            0x2000_817f,
            0xbf40_00ff,
            0xe000_7fff,
            0xffff_4000,
            0x4000_3800,
            3,
            0,
            0x4000_0000,
            2,
            2
        ]
    );
}

/// The module head every assembly test here shares: one invocation per lane of a workgroup of 4,
/// `%out` a `uint[]` at binding 0 and `%in` a `float[]` at binding 1, `%i` the invocation's
/// index. `caps`, `decorations`, `types` and `body` are spliced in after the capability, after the
/// decorations, before `main` and inside it.
fn module(caps: &str, decorations: &str, types: &str, body: &str) -> String {
    format!(
        "OpCapability Shader
{caps}
%std = OpExtInstImport \"GLSL.std.450\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %lid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ua ArrayStride 4
OpDecorate %fa ArrayStride 4
OpMemberDecorate %U 0 Offset 0
OpMemberDecorate %F 0 Offset 0
OpDecorate %U Block
OpDecorate %F Block
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 1
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u2 = OpConstant %uint 2
%u3 = OpConstant %uint 3
%u4 = OpConstant %uint 4
%ua = OpTypeRuntimeArray %uint
%fa = OpTypeRuntimeArray %float
%U = OpTypeStruct %ua
%F = OpTypeStruct %fa
%pU = OpTypePointer StorageBuffer %U
%pF = OpTypePointer StorageBuffer %F
%pu = OpTypePointer StorageBuffer %uint
%pf = OpTypePointer StorageBuffer %float
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%out = OpVariable %pU StorageBuffer
%in = OpVariable %pF StorageBuffer
{types}
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
{body}
OpReturn
OpFunctionEnd
"
    )
}

/// SPIR-V 2.2.2, "Undefined": an `OpUndef` gives an undefined value wherever it is declared. One
/// in a function (here with no `OpLine`, as a module without debug information has it) is named by
/// its instruction in its block, not as a module-scope constant.
#[test]
fn an_opundef_in_a_function_is_named_where_it_is_not_as_a_module_scope_one() {
    let text = module(
        "",
        "",
        "%mu = OpUndef %uint",
        "%fu = OpUndef %uint
%s = OpIAdd %uint %fu %i
%m = OpIAdd %uint %mu %i
%p0 = OpAccessChain %pu %out %u0 %i
OpStore %p0 %s
%i4 = OpIAdd %uint %i %u4
%p1 = OpAccessChain %pu %out %u0 %i4
OpStore %p1 %m",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 8]), bytes_u32(&[0])]);
    let b = &r.buffers[at(&r, 0)];
    let chain = |w: usize| match r.status(b.word_taint(w)) {
        WordStatus::Undefined(c) => c,
        s => panic!("o[{w}]: {s:?}"),
    };
    let (f, m) = (chain(0), chain(4));
    assert!(f.contains("OpUndef") && !f.contains("module scope"), "{f}");
    assert!(m.ends_with("= OpUndef (module scope)"), "{m}");
}

/// SPIR-V OpNoLine: "Discontinue any source-level location information that might be active
/// from a previous OpLine instruction". An undefined value made after an `OpLine` is named at
/// that line; one made after an `OpNoLine` is not (it is named by its instruction in its block).
#[test]
fn an_instruction_after_opnoline_is_not_named_at_the_line_before_it() {
    let text = module(
        "",
        "",
        "",
        "OpLine %file 7 0
%a = OpUndef %uint
%sa = OpIAdd %uint %a %i
%p0 = OpAccessChain %pu %out %u0 %i
OpStore %p0 %sa
OpNoLine
%b = OpUndef %uint
%sb = OpIAdd %uint %b %i
%i4 = OpIAdd %uint %i %u4
%p1 = OpAccessChain %pu %out %u0 %i4
OpStore %p1 %sb",
    )
    .replace(
        "OpExecutionMode %main LocalSize 4 1 1\n",
        "OpExecutionMode %main LocalSize 4 1 1\n%file = OpString \"lines.comp\"\n",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 8]), bytes_u32(&[0])]);
    let b = &r.buffers[at(&r, 0)];
    let chain = |w: usize| match r.status(b.word_taint(w)) {
        WordStatus::Undefined(c) => c,
        s => panic!("o[{w}]: {s:?}"),
    };
    let (before, after) = (chain(0), chain(4));
    assert!(before.contains("lines.comp:7"), "{before}");
    assert!(!after.contains("lines.comp:7"), "{after}");
}

/// SPIR-V, OpVectorExtractDynamic: "The behavior is undefined if Index's value is less than zero or
/// greater than or equal to the number of components in Vector"; OpVectorInsertDynamic: the same
/// words. Lanes 0–2 index a component of `(10, 11, 12)`: they extract it, and insert 99 there
/// leaving the other two; lane 3 indexes past the end: its extract and every component of its
/// insert are undefined, with the index and the length in the reason.
#[test]
fn a_dynamic_vector_index_past_the_last_component_is_undefined() {
    let text = module(
        "",
        "",
        "%u10 = OpConstant %uint 10
%u11 = OpConstant %uint 11
%u12 = OpConstant %uint 12
%u99 = OpConstant %uint 99
%c = OpConstantComposite %v3 %u10 %u11 %u12",
        "%e = OpVectorExtractDynamic %uint %c %i
%pe = OpAccessChain %pu %out %u0 %i
OpStore %pe %e
%w = OpVectorInsertDynamic %v3 %c %u99 %i
%b = OpIMul %uint %i %u3
%b4 = OpIAdd %uint %b %u4
%w0 = OpCompositeExtract %uint %w 0
%w1 = OpCompositeExtract %uint %w 1
%w2 = OpCompositeExtract %uint %w 2
%p0 = OpAccessChain %pu %out %u0 %b4
OpStore %p0 %w0
%b5 = OpIAdd %uint %b4 %u1
%p1 = OpAccessChain %pu %out %u0 %b5
OpStore %p1 %w1
%b6 = OpIAdd %uint %b4 %u2
%p2 = OpAccessChain %pu %out %u0 %b6
OpStore %p2 %w2",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 16]), vec![]]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    assert_eq!(v[..3], [10, 11, 12]);
    assert_eq!(v[4..13], [99, 11, 12, 10, 99, 12, 10, 11, 99]);
    for w in (0..3).chain(4..13) {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "out[{w}]");
    }
    for w in [3, 13, 14, 15] {
        match r.status(b.word_taint(w)) {
            WordStatus::Undefined(c) => assert!(c.contains('3'), "out[{w}]: {c}"),
            o => panic!("out[{w}]: {o:?}"),
        }
    }
}

/// OpVectorInsertDynamic through an order-dependent index (a ticket from an atomic, SPIR-V
/// "Atomic Instructions": its value depends on the order the invocations ran in): which component
/// changes is order-dependent, so every component is at least order-dependent — and a component
/// that was undefined stays undefined (SPIR-V 2.2.2: an `OpUndef` is undefined; an order
/// dependence does not make it defined). `(10, 11, undef)` with 99 inserted at `ticket & 1`.
#[test]
fn an_insert_at_an_order_dependent_index_keeps_an_undefined_component_undefined() {
    let text = module(
        "",
        "",
        "%u10 = OpConstant %uint 10
%u11 = OpConstant %uint 11
%u15 = OpConstant %uint 15
%u99 = OpConstant %uint 99",
        "%ctr = OpAccessChain %pu %out %u0 %u15
%t = OpAtomicIAdd %uint %ctr %u1 %u0 %u1
%k = OpBitwiseAnd %uint %t %u1
%und = OpUndef %uint
%c = OpCompositeConstruct %v3 %u10 %u11 %und
%w = OpVectorInsertDynamic %v3 %c %u99 %k
%b = OpIMul %uint %i %u3
%w0 = OpCompositeExtract %uint %w 0
%w1 = OpCompositeExtract %uint %w 1
%w2 = OpCompositeExtract %uint %w 2
%p0 = OpAccessChain %pu %out %u0 %b
OpStore %p0 %w0
%b1 = OpIAdd %uint %b %u1
%p1 = OpAccessChain %pu %out %u0 %b1
OpStore %p1 %w1
%b2 = OpIAdd %uint %b %u2
%p2 = OpAccessChain %pu %out %u0 %b2
OpStore %p2 %w2",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 16]), vec![]]);
    let b = &r.buffers[at(&r, 0)];
    assert_eq!(u32s(&b.bytes)[15], 4, "four tickets taken");
    for l in 0..4 {
        for c in 0..2 {
            let w = 3 * l + c;
            assert!(
                matches!(r.status(b.word_taint(w)), WordStatus::OrderDependent(_)),
                "lane {l} component {c}: {:?}",
                r.status(b.word_taint(w))
            );
        }
    }
    assert_undefined(&r, 0, (0..4).map(|l| 3 * l + 2));
}

/// An access chain whose index is an `OpUndef` (SPIR-V 2.2.2: an undefined value, *some* value
/// of its type — not a constant the decoder may fold into the pointer) points at an element
/// nobody can name: a load through it is undefined in every lane, though every element of the
/// buffer it indexes is defined (1.0, 2.0, 3.0, 4.0).
#[test]
fn an_access_chain_indexed_by_an_opundef_loads_an_undefined_value() {
    let text = module(
        "",
        "",
        "%und = OpUndef %uint",
        "%p = OpAccessChain %pf %in %u0 %und
%v = OpLoad %float %p
%vb = OpBitcast %uint %v
%q = OpAccessChain %pu %out %u0 %i
OpStore %q %vb",
    );
    let r = run(
        &asm(&text),
        vec![bytes_u32(&[0; 4]), bytes_f32(&[1.0, 2.0, 3.0, 4.0])],
    );
    assert_undefined(&r, 0, 0..4);
}

/// GLSL.std.450: the component-wise functions' "Results are computed per component". An
/// undefined component of an operand (GLSL 4.60, 4.3: `u` declared without an initializer) makes
/// that component of `abs`, `clamp` and `fma` undefined and no other, and a component outside a
/// function's domain ("Sqrt: The result is undefined if x < 0") only its own; `normalize` reads
/// every component for each ("Result is the vector in the same direction as x but with a length
/// of 1"), so all of its result is undefined. Lane 1 alone holds the undefined `y`.
#[test]
fn a_component_wise_function_is_undefined_only_in_the_components_its_operands_leave_undefined() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer O { vec2 o[]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  vec2 v = vec2(-float(i) - 1.0, float(i) + 0.5);
  if (i == 1u) { float u; v.y = u; }
  o[i] = abs(v);
  o[4u + i] = clamp(v, vec2(-10.0), vec2(10.0));
  o[8u + i] = fma(v, vec2(2.0), vec2(1.0));
  o[12u + i] = sqrt(vec2(4.0, -1.0 - float(i)));
  o[16u + i] = normalize(v);
}
";
    let r = run(&glsl(src, "cw.comp"), vec![bytes_f32(&[0.0; 40])]);
    let b = &r.buffers[at(&r, 0)];
    let o = f32s(&b.bytes);
    let status = |w: usize| r.status(b.word_taint(w));
    for i in 0..4usize {
        let (x, y) = (-(i as f32) - 1.0, i as f32 + 0.5);
        let want = [
            (0, x.abs(), y.abs()),
            (1, x, y),
            (2, 2.0 * x + 1.0, 2.0 * y + 1.0),
        ];
        for (f, wx, wy) in want {
            let w = 2 * (4 * f + i);
            // Defined: exact, or inexact for fma (its bound is OpFMul's and OpFAdd's).
            let defined = |w: usize| !matches!(status(w), WordStatus::Undefined(_));
            assert!(
                o[w] == wx && defined(w),
                "function {f} lane {i} x: {:?}",
                status(w)
            );
            if i == 1 {
                assert!(
                    matches!(status(w + 1), WordStatus::Undefined(_)),
                    "function {f} lane 1 y"
                );
            } else {
                assert!(o[w + 1] == wy && defined(w + 1), "function {f} lane {i} y");
            }
        }
        // sqrt(4) is defined (within Vulkan's bound for sqrt: inexact); sqrt of a negative is
        // undefined.
        let w = 2 * (12 + i);
        assert_eq!(
            (o[w], status(w)),
            (2.0, WordStatus::Inexact),
            "sqrt lane {i}"
        );
        match status(w + 1) {
            WordStatus::Undefined(chain) => {
                assert!(chain.contains("x < 0"), "sqrt lane {i}: {chain}")
            }
            other => panic!("sqrt lane {i}: {other:?}"),
        }
        let w = 2 * (16 + i);
        if i == 1 {
            assert_undefined(&r, 0, [w, w + 1]);
        } else {
            assert!(
                !matches!(status(w), WordStatus::Undefined(_)),
                "normalize lane {i}"
            );
        }
    }
}

/// SPIR-V OpUDiv: "Behavior is undefined if Operand 2 is 0"; OpShiftLeftLogical: "The result is
/// undefined if Shift is greater than or equal to the bit width of the components of Base". On
/// vectors each rule is per component: `(10 + i, 20 + i) / (2, 0)` is undefined in its second
/// component alone, `(1, 1) << (i, 32)` too; the first components are exact.
#[test]
fn an_integer_rule_broken_in_one_component_of_a_vector_leaves_that_component_alone_undefined() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer O { uvec2 o[]; };
layout(std430, binding = 1) buffer I { uint z; };
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i] = uvec2(10u + i, 20u + i) / uvec2(2u, z);
  o[4u + i] = uvec2(1u, 1u) << uvec2(i, 32u + z);
}
";
    let r = run(
        &glsl(src, "div.comp"),
        vec![bytes_u32(&[7; 16]), bytes_u32(&[0])],
    );
    let b = &r.buffers[at(&r, 0)];
    let o = u32s(&b.bytes);
    for i in 0..4usize {
        for (w, want) in [(2 * i, (10 + i as u32) / 2), (2 * (4 + i), 1 << i)] {
            assert_eq!(
                (o[w], r.status(b.word_taint(w))),
                (want, WordStatus::Exact),
                "o[{w}]"
            );
        }
        assert_undefined(&r, 0, [2 * i + 1, 2 * (4 + i) + 1]);
    }
}

/// SPIR-V OpSelect: "If Condition is a vector, Result Type must be a vector with the same number
/// of components … and each component is selected from the corresponding component"; GLSL's
/// `mix(x, y, bvec a)` is such a select ("Selects which vector each returned component comes
/// from: for a component of a that is false, the corresponding component of x is returned").
/// Lane `l` selects with `(l & 1, l & 2)` between (10, 20) and (30, 40).
#[test]
fn a_select_with_a_vector_condition_selects_each_component_on_its_own() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer O { uvec2 o[]; };
void main() {
  uint l = gl_LocalInvocationID.x;
  bvec2 c = bvec2((l & 1u) != 0u, (l & 2u) != 0u);
  o[l] = mix(uvec2(10u, 20u), uvec2(30u, 40u), c);
}
";
    let r = run(&glsl(src, "sel.comp"), vec![bytes_u32(&[0; 8])]);
    assert_eq!(
        u32s(&r.buffers[at(&r, 0)].bytes),
        [10, 20, 30, 20, 10, 40, 30, 40]
    );
}

/// GLSL.std.450 NMin: "Result is y if x < y; otherwise result is x. If one operand is a NaN, the
/// other operand is the result. If both operands are NaN, the result is a NaN"; NMax likewise
/// with x > y. Per lane `(x, y)` = (NaN, 1), (2, NaN), (NaN, NaN), (−1, 3).
#[test]
fn nmin_and_nmax_return_the_operand_that_is_not_a_nan() {
    let text = module(
        "",
        "",
        "",
        "%i2 = OpIMul %uint %i %u2
%px = OpAccessChain %pf %in %u0 %i2
%j = OpIAdd %uint %i2 %u1
%py = OpAccessChain %pf %in %u0 %j
%x = OpLoad %float %px
%y = OpLoad %float %py
%lo = OpExtInst %float %std NMin %x %y
%hi = OpExtInst %float %std NMax %x %y
%blo = OpBitcast %uint %lo
%bhi = OpBitcast %uint %hi
%plo = OpAccessChain %pu %out %u0 %i2
OpStore %plo %blo
%phi = OpAccessChain %pu %out %u0 %j
OpStore %phi %bhi",
    );
    let nan = f32::NAN;
    let r = run(
        &asm(&text),
        vec![
            bytes_u32(&[0; 8]),
            bytes_f32(&[nan, 1.0, 2.0, nan, nan, nan, -1.0, 3.0]),
        ],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let v: Vec<f32> = f32s(&r.buffers[at(&r, 0)].bytes);
    assert_eq!([v[0], v[1], v[2], v[3]], [1.0, 1.0, 2.0, 2.0]);
    assert!(v[4].is_nan() && v[5].is_nan(), "{v:?}");
    assert_eq!([v[6], v[7]], [-1.0, 3.0]);
}

/// GLSL.std.450 FMin: "Result is y if y < x, otherwise x. -0 compares less than +0" (FMax, NMin
/// and NMax likewise; FClamp and NClamp are min(max(x, minVal), maxVal) with them): of +0 and -0
/// the minimum is -0 and the maximum +0. But Vulkan ("Precision and Operation of SPIR-V
/// Instructions"): "By default, the implementation may perform optimizations … that ignore sign
/// of a zero … If the entry point is declared with the SignedZeroInfNanPreserve execution mode,
/// then … the sign of zero must not be ignored" (lavapipe gives -0 for max(+0, -0)). So with the
/// mode the zeros' order is exact; without it a zero result picked from zeros of both signs is
/// compared as a number, and every other result stays exact. Lanes: (x, y) = (+0, -0), (-0, +0),
/// (1, -0), (-0, -1); each lane writes FMin, FMax, NMin, NMax and FClamp(x, y, 1).
#[test]
fn min_and_max_order_minus_zero_below_plus_zero_and_compare_its_sign_only_when_preserved() {
    let body = "%i2 = OpIMul %uint %i %u2
%j = OpIAdd %uint %i2 %u1
%x = OpLoad %float %px
%y = OpLoad %float %py
%r0 = OpExtInst %float %std FMin %x %y
%r1 = OpExtInst %float %std FMax %x %y
%r2 = OpExtInst %float %std NMin %x %y
%r3 = OpExtInst %float %std NMax %x %y
%r4 = OpExtInst %float %std FClamp %x %y %f1
%i5 = OpIMul %uint %i %u5
OUTS";
    let mut outs = String::new();
    for k in 0..5 {
        outs += &format!(
            "%b{k} = OpBitcast %uint %r{k}\n%o{k} = OpIAdd %uint %i5 %c{k}\n%p{k} = OpAccessChain %pu %out %u0 %o{k}\nOpStore %p{k} %b{k}\n"
        );
    }
    let body = body
        .replace(
            "%x = OpLoad",
            "%px = OpAccessChain %pf %in %u0 %i2\n%py = OpAccessChain %pf %in %u0 %j\n%x = OpLoad",
        )
        .replace("OUTS", outs.trim_end());
    let types = "%f1 = OpConstant %float 1\n%u5 = OpConstant %uint 5\n%c0 = OpConstant %uint 0\n%c1 = OpConstant %uint 1\n%c2 = OpConstant %uint 2\n%c3 = OpConstant %uint 3\n%c4 = OpConstant %uint 4";
    let plain = module("", "", types, &body);
    let preserved = module(
        "OpCapability SignedZeroInfNanPreserve\nOpExtension \"SPV_KHR_float_controls\"",
        "",
        types,
        &body,
    )
    .replace(
        "OpExecutionMode %main LocalSize 4 1 1",
        "OpExecutionMode %main LocalSize 4 1 1\nOpExecutionMode %main SignedZeroInfNanPreserve 32",
    );
    let input = bytes_f32(&[0.0, -0.0, -0.0, 0.0, 1.0, -0.0, -0.0, -1.0]);
    let (p, n, one, m1) = (0u32, 0x8000_0000u32, 1f32.to_bits(), (-1f32).to_bits());
    let want = [
        [n, p, n, p, p],
        [n, p, n, p, p],
        [n, one, n, one, one],
        [m1, n, m1, n, n],
    ];
    for (text, keeps_sign) in [(preserved, true), (plain, false)] {
        let r = run(&asm(&text), vec![bytes_u32(&[7; 20]), input.clone()]);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        let b = &r.buffers[at(&r, 0)];
        let got = u32s(&b.bytes);
        for (l, row) in want.iter().enumerate() {
            for (k, &v) in row.iter().enumerate() {
                let w = 5 * l + k;
                assert_eq!(got[w], v, "lane {l} op {k} (sign kept: {keeps_sign})");
                // Only lanes 0 and 1 pick a zero from zeros of both signs.
                let status = if l < 2 && !keeps_sign {
                    WordStatus::Inexact
                } else {
                    WordStatus::Exact
                };
                assert_eq!(
                    r.status(b.word_taint(w)),
                    status,
                    "lane {l} op {k} (sign kept: {keeps_sign})"
                );
            }
        }
    }
}

/// A structure loaded or stored whole (`P x = ps[1];`, glslang's `OpLoad` of the struct type)
/// moves every member at its own `Offset`, a nested structure's members at the nested
/// structure's offset plus theirs (SPIR-V 2.16.2, "Offset"; std430: `Q q` at byte 16 of `P`,
/// its `w` at byte 16 + 4). Element 1 of `ps` starts at byte 24 (std430: P's members take 24
/// bytes, its alignment is uvec2's 8, so its array stride is 24).
#[test]
fn a_structure_loaded_whole_moves_each_member_at_its_offset() {
    let src = "#version 450
layout(local_size_x = 1) in;
struct Q { uint v; uint w; };
struct P { uint a; uint b; uvec2 c; Q q; };
layout(std430, binding = 0) buffer A { P ps[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
void main() {
  P x = ps[1];
  o[0] = x.a; o[1] = x.b; o[2] = x.c.x; o[3] = x.c.y; o[4] = x.q.v; o[5] = x.q.w;
  ps[0] = x;
}
";
    let words: Vec<u32> = (0..16).map(|k| 100 + k).collect();
    let r = run(
        &glsl(src, "struct.comp"),
        vec![bytes_u32(&words), bytes_u32(&[0; 6])],
    );
    assert_eq!(
        u32s(&r.buffers[at(&r, 1)].bytes),
        [106, 107, 108, 109, 110, 111]
    );
    let a = u32s(&r.buffers[at(&r, 0)].bytes);
    assert_eq!(a[..6], [106, 107, 108, 109, 110, 111], "ps[0] = ps[1]");
}

/// A vector loaded whole from an invocation's own array (`uvec2 a[3]` indexed by a value read from
/// a buffer, so the array stays in memory) takes each component's word and that word's taint: the
/// component no store wrote (`a[1].y`) is undefined (GLSL 4.60, 4.3: a variable declared without
/// an initializer has an undefined value), the other is the value stored (`a[1].x = 3`), and
/// the elements written whole are defined in both components.
#[test]
fn a_vector_loaded_from_an_invocations_own_array_is_undefined_only_in_the_component_never_written()
{
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer I { uint idx[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
void main() {
  uvec2 a[3];
  a[0] = uvec2(1u, 2u);
  a[1].x = 3u;
  a[2] = uvec2(5u, 6u);
  uint l = gl_LocalInvocationID.x;
  uvec2 v = a[idx[0]];
  uvec2 w = a[idx[1]];
  o[4u * l] = v.x; o[4u * l + 1u] = v.y; o[4u * l + 2u] = w.x; o[4u * l + 3u] = w.y;
}
";
    let r = run(
        &glsl(src, "own.comp"),
        vec![bytes_u32(&[1, 2]), bytes_u32(&[0; 16])],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let o = &r.buffers[at(&r, 1)];
    let got = u32s(&o.bytes);
    for l in 0..4 {
        assert_eq!(got[4 * l], 3, "lane {l}: a[1].x");
        assert_eq!(got[4 * l + 2..4 * l + 4], [5, 6], "lane {l}: a[2]");
        for w in [4 * l, 4 * l + 2, 4 * l + 3] {
            assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "o[{w}]");
        }
    }
    assert_undefined(&r, 1, (0..4).map(|l| 4 * l + 1));
}

/// A store through a pointer whose index is undefined (GLSL 4.60, 4.3: `u` declared without an
/// initializer has an undefined value; SPIR-V 2.2.2: an undefined value is *some* value of its
/// type) may land on any element the pointer can reach: every element of the array it indexes
/// may hold the value stored, so each is undefined, with "a store through an undefined pointer"
/// in its chain — in a workgroup's shared array, in an invocation's own array and in a buffer.
/// Lane 0 stores; every lane reads its element back after a barrier.
#[test]
fn a_store_through_an_undefined_index_leaves_every_element_it_may_reach_undefined() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(std430, binding = 1) buffer B { uint b[4]; };
shared uint s[4];
void main() {
  uint l = gl_LocalInvocationID.x;
  uint own[4] = uint[4](1u, 2u, 3u, 4u);
  s[l] = 10u + l;
  barrier();
  uint u;
  if (l == 0u) { s[u & 3u] = 7u; b[u & 3u] = 7u; }
  own[u & 3u] = 7u;
  barrier();
  o[l] = s[l];
  o[4u + l] = own[l];
}
";
    let r = run(
        &glsl(src, "undefptr.comp"),
        vec![bytes_u32(&[0; 8]), bytes_u32(&[20, 21, 22, 23])],
    );
    for (binding, words) in [(0, 0..8), (1, 0..4)] {
        let b = &r.buffers[at(&r, binding)];
        for w in words {
            match r.status(b.word_taint(w)) {
                WordStatus::Undefined(chain) => assert!(
                    chain.contains("a store through an undefined pointer"),
                    "binding {binding} word {w}: {chain}"
                ),
                other => panic!("binding {binding} word {w}: {other:?}"),
            }
        }
    }
}

/// Where such a store may land, and with whom it races. An invocation's own array (Function
/// storage) is its alone: lane 0's store through an undefined index leaves lane 0's array
/// undefined and every other lane's defined. A buffer is every invocation's: a store through an
/// undefined index may have written any element, so another invocation's store to an element,
/// unordered with it, races with it (Vulkan memory model, Appendix B: a data race) — its value is
/// one of two, whichever lane the model happens to run first (lane 0 or lane 3 storing through
/// the undefined index; before this rule the elements the other lanes wrote after it were exact).
#[test]
fn a_store_through_an_undefined_index_races_with_other_invocations_and_leaves_their_own_arrays_alone(
) {
    for undefined_lane in [0u32, 3] {
        let src = format!(
            "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer O {{ uint o[]; }};
layout(std430, binding = 1) buffer B {{ uint b[4]; }};
void main() {{
  uint l = gl_LocalInvocationID.x;
  uint own[4] = uint[4](l, l + 1u, l + 2u, l + 3u);
  uint u;
  uint at = l == {undefined_lane}u ? u : l;
  own[at & 3u] = 7u;
  b[at & 3u] = 7u + l;
  o[l] = own[(l + 1u) & 3u];
}}
"
        );
        let r = run(
            &glsl(&src, "undefptr.comp"),
            vec![bytes_u32(&[0; 4]), bytes_u32(&[20, 21, 22, 23])],
        );
        let o = &r.buffers[at(&r, 0)];
        let b = &r.buffers[at(&r, 1)];
        for l in 0..4u32 {
            let own = r.status(o.word_taint(l as usize));
            if l == undefined_lane {
                assert!(matches!(own, WordStatus::Undefined(_)), "lane {l}: {own:?}");
            } else {
                // its own element (l + 1) mod 4, which it initialised to l + that index
                assert_eq!(
                    own,
                    WordStatus::Exact,
                    "undefined lane {undefined_lane}, lane {l}"
                );
                assert_eq!(u32s(&o.bytes)[l as usize], l + ((l + 1) & 3));
            }
            let elem = r.status(b.word_taint(l as usize));
            assert!(
                matches!(elem, WordStatus::Undefined(_) | WordStatus::Racy(_)),
                "undefined lane {undefined_lane}, b[{l}]: {elem:?}"
            );
        }
    }
}

/// SPIR-V, OpFRem: "The floating-point remainder whose sign matches the sign of Operand 1";
/// OpFMod: "… whose sign matches the sign of Operand 2" (GLSL's `mod` is FMod; no GLSL function
/// writes OpFRem). Lane pairs (7.5, 2), (−7.5, 2), (7.5, −2), (5, 2.5): FRem 1.5, −1.5, 1.5, 0;
/// FMod 1.5, 0.5, −0.5, 0 — every value exact in binary; the same again in doubles (words 8–15).
#[test]
fn frem_takes_the_sign_of_the_dividend_and_fmod_the_sign_of_the_divisor() {
    let text = module(
        "OpCapability Float64",
        "",
        "%double = OpTypeFloat 64
%u8 = OpConstant %uint 8",
        "%i2 = OpIMul %uint %i %u2
%px = OpAccessChain %pf %in %u0 %i2
%j = OpIAdd %uint %i2 %u1
%py = OpAccessChain %pf %in %u0 %j
%x = OpLoad %float %px
%y = OpLoad %float %py
%rem = OpFRem %float %x %y
%mod = OpFMod %float %x %y
%brem = OpBitcast %uint %rem
%bmod = OpBitcast %uint %mod
%prem = OpAccessChain %pu %out %u0 %i2
OpStore %prem %brem
%pmod = OpAccessChain %pu %out %u0 %j
OpStore %pmod %bmod
%dx = OpFConvert %double %x
%dy = OpFConvert %double %y
%drem = OpFRem %double %dx %dy
%dmod = OpFMod %double %dx %dy
%frem = OpFConvert %float %drem
%fmod = OpFConvert %float %dmod
%b2rem = OpBitcast %uint %frem
%b2mod = OpBitcast %uint %fmod
%i8 = OpIAdd %uint %i2 %u8
%p2rem = OpAccessChain %pu %out %u0 %i8
OpStore %p2rem %b2rem
%j8 = OpIAdd %uint %j %u8
%p2mod = OpAccessChain %pu %out %u0 %j8
OpStore %p2mod %b2mod",
    );
    let r = run(
        &asm(&text),
        vec![
            bytes_u32(&[0; 16]),
            bytes_f32(&[7.5, 2.0, -7.5, 2.0, 7.5, -2.0, 5.0, 2.5]),
        ],
    );
    let v: Vec<f32> = f32s(&r.buffers[at(&r, 0)].bytes);
    let want = [1.5, 1.5, -1.5, 0.5, 1.5, -0.5, 0.0, 0.0];
    assert_eq!(v[..8], want, "floats");
    assert_eq!(v[8..], want, "doubles");
}

/// `OpSpecConstantOp` folds at decode time with the instruction's own rules, slot by slot: an
/// `OpUndef` constituent of a constant composite leaves the other constituents defined (SPIR-V,
/// OpConstantComposite: each constituent is a constant of its own), OpCompositeExtract and
/// OpCompositeInsert move only the components their indexes name, a component-wise operation's
/// component reads only that component of each operand, and a component `OpVectorShuffle`
/// selects with 0xFFFFFFFF "has no source and is undefined" (SPIR-V, OpVectorShuffle). `%v` =
/// (s0, s1, s0) with specialization constants s0 = 5 (6 given) and s1 = 7; `%vu` = (1, undef,
/// 2); `%f` = 1.5 converted to a double by FConvert. The shuffle's literals are more than one
/// word, which rspirv 0.13 alone refuses to parse (`words::read` puts them back).
#[test]
fn a_specialization_constant_operation_is_undefined_only_in_the_components_its_sources_leave_undefined(
) {
    let text = module(
        "OpCapability Float64",
        "OpDecorate %s0 SpecId 0\nOpDecorate %s1 SpecId 1",
        "%double = OpTypeFloat 64
%u11 = OpConstant %uint 11
%d2 = OpConstant %double 2
%s0 = OpSpecConstant %uint 5
%s1 = OpSpecConstant %uint 7
%f = OpSpecConstant %float 1.5
%und = OpUndef %uint
%v = OpSpecConstantComposite %v3 %s0 %s1 %s0
%vu = OpConstantComposite %v3 %u1 %und %u2
%x = OpSpecConstantOp %uint CompositeExtract %v 1
%ins = OpSpecConstantOp %v3 CompositeInsert %s1 %vu 1
%ex0 = OpSpecConstantOp %uint CompositeExtract %vu 0
%ex1 = OpSpecConstantOp %uint CompositeExtract %vu 1
%sh = OpSpecConstantOp %v3 VectorShuffle %v %vu 5 0 4294967295
%sum = OpSpecConstantOp %uint IAdd %s0 %s1
%vs = OpSpecConstantOp %v3 IAdd %v %vu
%d = OpSpecConstantOp %double FConvert %f",
        "%b = OpIMul %uint %i %u11
%w = OpFunctionCall %void %put %b %x
%b1 = OpIAdd %uint %b %u1
%ins0 = OpCompositeExtract %uint %ins 0
%ins1 = OpCompositeExtract %uint %ins 1
%ins2 = OpCompositeExtract %uint %ins 2
%w1 = OpFunctionCall %void %put %b1 %ins0
%b2 = OpIAdd %uint %b1 %u1
%w2 = OpFunctionCall %void %put %b2 %ins1
%b3 = OpIAdd %uint %b2 %u1
%w3 = OpFunctionCall %void %put %b3 %ins2
%b4 = OpIAdd %uint %b3 %u1
%w4 = OpFunctionCall %void %put %b4 %ex0
%b5 = OpIAdd %uint %b4 %u1
%w5 = OpFunctionCall %void %put %b5 %ex1
%sh0 = OpCompositeExtract %uint %sh 0
%sh1 = OpCompositeExtract %uint %sh 1
%sh2 = OpCompositeExtract %uint %sh 2
%b6 = OpIAdd %uint %b5 %u1
%w6 = OpFunctionCall %void %put %b6 %sh0
%b7 = OpIAdd %uint %b6 %u1
%w7 = OpFunctionCall %void %put %b7 %sh1
%b8 = OpIAdd %uint %b7 %u1
%w8 = OpFunctionCall %void %put %b8 %sh2
%b9 = OpIAdd %uint %b8 %u1
%w9 = OpFunctionCall %void %put %b9 %sum
%dd = OpFMul %double %d %d2
%du = OpConvertFToU %uint %dd
%vs1 = OpCompositeExtract %uint %vs 1
%vs2 = OpCompositeExtract %uint %vs 2
%vx = OpIAdd %uint %vs2 %du
%b10 = OpIAdd %uint %b9 %u1
%w10 = OpFunctionCall %void %put %b10 %vx
%b11 = OpIMul %uint %i %u2
%b12 = OpIAdd %uint %b11 %u1
%pvs = OpAccessChain %pf %in %u0 %b11
%vsf = OpBitcast %float %vs1
OpStore %pvs %vsf",
    );
    // `%put` (after `main`): out[k] = value.
    let text = format!(
        "{text}%fput = OpTypeFunction %void %uint %uint
%put = OpFunction %void None %fput
%k = OpFunctionParameter %uint
%val = OpFunctionParameter %uint
%pl = OpLabel
%pk = OpAccessChain %pu %out %u0 %k
OpStore %pk %val
OpReturn
OpFunctionEnd
"
    );
    let text = text.replace("%fput = OpTypeFunction %void %uint %uint\n", "");
    let text = text.replace(
        "%main = OpFunction",
        "%fput = OpTypeFunction %void %uint %uint\n%main = OpFunction",
    );
    let r = run_with(
        &asm(&text),
        vec![(0, SpecInput::Bits(6))],
        4,
        vec![bytes_u32(&[0; 44]), bytes_u32(&[0; 8])],
    );
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    // x = v[1] = 7; ins = (1, 7, 2); ex0 = 1; ex1 undefined; sh = (vu[2], v[0], —) = (2, 6, —);
    // sum = 6 + 7; vs = v + vu = (7, undef, 8), and 8 + 1.5·2 = 11.
    for lane in 0..4 {
        let o = 11 * lane;
        let at_ = |k: usize| r.status(b.word_taint(o + k));
        assert_eq!(v[o..o + 5], [7, 1, 7, 2, 1], "lane {lane}");
        assert_eq!([v[o + 6], v[o + 7], v[o + 9], v[o + 10]], [2, 6, 13, 11]);
        for k in [0, 1, 2, 3, 4, 6, 7, 9, 10] {
            assert_eq!(at_(k), WordStatus::Exact, "lane {lane} out[{k}]");
        }
        match at_(5) {
            WordStatus::Undefined(c) => assert!(c.contains("OpUndef"), "{c}"),
            o => panic!("ex1: {o:?}"),
        }
        match at_(8) {
            WordStatus::Undefined(c) => assert!(c.contains("0xFFFFFFFF"), "{c}"),
            o => panic!("sh[2]: {o:?}"),
        }
    }
    let fb = &r.buffers[at(&r, 1)];
    for lane in 0..4 {
        match r.status(fb.word_taint(2 * lane)) {
            WordStatus::Undefined(c) => assert!(c.contains("OpUndef"), "{c}"),
            o => panic!("vs[1]: {o:?}"),
        }
    }
}

/// An index into an array of buffers or into a buffer's array that is not less than its length
/// names no element (SPIR-V, OpAccessChain: each index selects a member, element or component of
/// the type it walks, and an array type has `Length` elements — a runtime array as many as its
/// buffer holds), so the access is out of bounds: a read is undefined (Vulkan, "Shader Resource
/// Interface", without robustBufferAccess: out-of-bounds reads "return undefined values") and a
/// write is reported. Four workgroups of one invocation, `cs[2]` of four words each; workgroup
/// 0 reads `cs[0].c[3]` (in bounds), 1 reads `cs[1].c[4]` (past the end of its buffer), 2 writes
/// `cs[2]` (past the end of the array), 3 reads `cs[0].c[3·2³⁰]` (its byte offset does not fit
/// 32 bits). An index read from shared memory nobody wrote is undefined, and so is what a load
/// through it reads.
#[test]
fn an_index_past_an_array_of_buffers_or_past_a_buffer_is_out_of_bounds() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer C { uint c[]; } cs[2];
layout(binding = 1) buffer O { uint o[]; };
shared uint never;
void main() {
  uint k = gl_WorkGroupID.x;
  if (k < 2u) {
    o[k] = cs[k].c[k + 3u];
  } else if (k == 2u) {
    cs[k].c[0] = 7u;
  } else {
    o[k] = cs[k - 3u].c[k * 0x40000000u];
    o[4] = cs[never].c[0];
  }
}
";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let elem = |e: u32, words: &[u32]| BufferInput {
        set: 0,
        binding: 0,
        element: e,
        bytes: bytes_u32(words),
        ..Default::default()
    };
    let bufs = [
        elem(0, &[10, 11, 12, 13]),
        elem(1, &[20, 21, 22, 23]),
        BufferInput {
            set: 0,
            binding: 1,
            bytes: bytes_u32(&[0; 5]),
            ..Default::default()
        },
    ];
    let mut c = RunConfig::new(SubgroupSize::new(1).unwrap(), [4, 1, 1]);
    c.mode = Mode::Base;
    let r = run_model(&k, c, &bufs, None).unwrap();
    let o = &r.buffers[at(&r, 1)];
    assert_eq!(u32s(&o.bytes)[0], 13);
    assert_eq!(r.status(o.word_taint(0)), WordStatus::Exact);
    for w in [1, 3, 4] {
        assert!(
            matches!(r.status(o.word_taint(w)), WordStatus::Undefined(_)),
            "o[{w}]: {:?}",
            r.status(o.word_taint(w))
        );
    }
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("out-of-bounds write")),
        "{texts:?}"
    );
    for e in 0..2 {
        let b = r
            .buffers
            .iter()
            .find(|b| b.binding == 0 && b.element == e)
            .unwrap();
        assert_eq!(
            u32s(&b.bytes),
            [10 + 10 * e, 11 + 10 * e, 12 + 10 * e, 13 + 10 * e]
        );
    }
    match r.status(o.word_taint(3)) {
        WordStatus::Undefined(c) => assert!(c.contains("does not fit in 32 bits"), "{c}"),
        s => panic!("o[3]: {s:?}"),
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("out-of-bounds read of cs[1] at byte 16 by workgroup (1,0,0)")),
        "{texts:?}"
    );
}

/// An index past the end of an array of descriptors reaches no descriptor: the access is
/// outside every object (Vulkan 1.3 §15.9, "Shader Resource Interface": "the index must be less
/// than the size of the array"; without robustness an out-of-bounds access is undefined
/// behaviour), and the report names the element the user wrote, `cs[2]` of `cs[2]` — not the
/// array's first element, whose bytes it did not touch — with a negative index said to be one.
#[test]
fn an_index_past_an_array_of_descriptors_is_named_as_the_element_it_names() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer C { uint c[]; } cs[2];
layout(binding = 1) buffer O { uint o[]; };
void main() {
  int k = int(gl_WorkGroupID.x);
  if (k == 0) {
    o[0] = cs[k + 2].c[1];
  } else {
    cs[k - 2].c[0] = 7u;
  }
}
";
    let k = decode(&glsl(src, "k.comp"), &DecodeOptions::default()).unwrap();
    let elem = |e: u32| BufferInput {
        set: 0,
        binding: 0,
        element: e,
        bytes: bytes_u32(&[1, 2]),
        ..Default::default()
    };
    let bufs = [
        elem(0),
        elem(1),
        BufferInput {
            set: 0,
            binding: 1,
            bytes: bytes_u32(&[0]),
            ..Default::default()
        },
    ];
    let mut c = RunConfig::new(SubgroupSize::new(1).unwrap(), [2, 1, 1]);
    c.mode = Mode::Base;
    let r = run_model(&k, c, &bufs, None).unwrap();
    let o = &r.buffers[at(&r, 1)];
    match r.status(o.word_taint(0)) {
        WordStatus::Undefined(c) => assert!(
            c.contains("cs[2] is past the end of its array of 2 descriptors"),
            "{c}"
        ),
        s => panic!("o[0]: {s:?}"),
    }
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    for want in [
        "out-of-bounds read of cs[2], past the end of its array of 2 descriptors, by workgroup (0,0,0)",
        "out-of-bounds write of cs[a negative index, or one past 32 bits], past the end of its array of 2 descriptors, by workgroup (1,0,0)",
    ] {
        assert!(texts.iter().any(|t| t.starts_with(want)), "{want}: {texts:?}");
    }
    let groups: Vec<(String, Vec<String>)> = r.groups.iter().map(|g| r.group_text(g)).collect();
    assert!(
        groups.iter().any(|(why, items)| why
            .starts_with("out-of-bounds read through an index past the 2 descriptors of cs at")
            && items[0].starts_with("cs[2] by workgroup (0,0,0)")),
        "{groups:?}"
    );
    assert!(r.poisoned().is_some(), "the write poisons the run");
}

/// Each descriptor of an array is an object of the run, bound to memory of its own: an array
/// declared with millions of elements is refused at decode, naming the variable and the limit,
/// where it used to exhaust memory before the run could say that no buffer was given for them.
/// The limit, as the refusal states it, is "at most 1048576 variables and descriptors": a module whose
/// one variable is an array of exactly that many decodes, one more is refused.
#[test]
fn an_array_of_more_descriptors_than_the_interpreter_holds_is_refused_naming_it() {
    let of = |n: u32| {
        format!(
            "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer C {{ uint c[]; }} cs[{n}];
void main() {{ cs[1].c[0] = 1u; }}
"
        )
    };
    let k = decode(&glsl(&of(1 << 20), "k.comp"), &DecodeOptions::default()).unwrap();
    assert_eq!(k.objects.len(), 1 << 20);
    drop(k);
    let e = decode(
        &glsl(&of((1 << 20) + 1), "k.comp"),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("an array of 1048577 descriptors"),
        "{e}"
    );
    let src = of(2000000);
    let e = decode(&glsl(&src, "k.comp"), &DecodeOptions::default()).unwrap_err();
    assert!(matches!(e, SpirvError::Unsupported { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("variable cs: an array of 2000000 descriptors")
            && e.contains("at most 1048576 variables and descriptors"),
        "{e}"
    );
}

/// An undefined value is some value of its type (SPIR-V 2.2.2, "Undefined"), so an operation whose
/// result is the same for every value of one operand is defined where the other operand decides
/// it: `true || u` is true and `false && u` false for every `u`; `smin > x` (signed) and
/// `x < 0` (unsigned) are false, and `x ≤ smax` true, for every `x`; where the defined operand
/// does not decide (`true && u`, `x < smax`), the result is undefined. `%u` comes from an
/// `OpUndef`; the 64-bit comparison checks the rule at another width.
#[test]
fn an_operand_that_decides_a_logical_or_comparison_result_makes_it_defined_whatever_the_other_is() {
    let text = module(
        "OpCapability Int64",
        "",
        "%ul = OpTypeInt 64 0
%und = OpUndef %uint
%und64 = OpUndef %ul
%z64 = OpConstant %ul 0
%smin = OpConstant %uint 2147483648
%smax = OpConstant %uint 2147483647
%u8 = OpConstant %uint 8",
        &format!(
            "%t = OpIEqual %bool %i %i
%f = OpINotEqual %bool %i %i
%ub = OpIEqual %bool %und %u0
%r0 = OpLogicalOr %bool %t %ub
%r1 = OpLogicalAnd %bool %ub %f
%r2 = OpLogicalEqual %bool %t %f
%r3 = OpSGreaterThan %bool %smin %und
%r4 = OpSLessThanEqual %bool %und %smax
%r5 = OpULessThan %bool %und64 %z64
%r6 = OpLogicalAnd %bool %t %ub
%r7 = OpSLessThan %bool %und %smax
{}",
            selections(8)
        ),
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 32]), vec![]]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    for lane in 0..4 {
        let o = 8 * lane;
        // 1 where true, 2 where false
        assert_eq!(v[o..o + 6], [1, 2, 2, 2, 1, 2], "lane {lane}");
        for k in 0..6 {
            assert_eq!(
                r.status(b.word_taint(o + k)),
                WordStatus::Exact,
                "lane {lane} result {k}"
            );
        }
        for k in 6..8 {
            assert!(
                matches!(r.status(b.word_taint(o + k)), WordStatus::Undefined(_)),
                "lane {lane} result {k}: {:?}",
                r.status(b.word_taint(o + k))
            );
        }
    }
}

/// The same rule (SPIR-V 2.2.2: an undefined value is some value of its type) for every
/// integer comparison and each side: the extreme of the type on one side decides it for every
/// value on the other — unsigned 0 and 2³²−1, signed −2³¹ and 2³¹−1, each on the side where no
/// value can pass it (`0 > u`, `0 ≤ u`, `u < 0`, `u ≥ 0`, `max ≥ u`, `max < u`, `u ≤ max`,
/// `u > max`, and the signed eight alike). Sixteen comparisons against an `OpUndef`, each defined
/// with the value the extreme gives.
#[test]
fn every_extreme_that_decides_an_integer_comparison_makes_it_defined_on_either_side() {
    // (opcode, the extreme, whether it is the first operand, the result)
    let cases = [
        ("OpUGreaterThan", "%z", true, false),
        ("OpULessThanEqual", "%z", true, true),
        ("OpULessThan", "%z", false, false),
        ("OpUGreaterThanEqual", "%z", false, true),
        ("OpUGreaterThanEqual", "%max", true, true),
        ("OpULessThan", "%max", true, false),
        ("OpULessThanEqual", "%max", false, true),
        ("OpUGreaterThan", "%max", false, false),
        ("OpSGreaterThan", "%smin", true, false),
        ("OpSLessThanEqual", "%smin", true, true),
        ("OpSLessThan", "%smin", false, false),
        ("OpSGreaterThanEqual", "%smin", false, true),
        ("OpSGreaterThanEqual", "%smax", true, true),
        ("OpSLessThan", "%smax", true, false),
        ("OpSLessThanEqual", "%smax", false, true),
        ("OpSGreaterThan", "%smax", false, false),
    ];
    let body: String = cases
        .iter()
        .enumerate()
        .map(|(k, (op, x, first, _))| {
            let (a, b) = if *first { (*x, "%und") } else { ("%und", *x) };
            format!("%r{k} = {op} %bool {a} {b}\n")
        })
        .collect();
    let text = module(
        "",
        "",
        "%und = OpUndef %uint
%z = OpConstant %uint 0
%max = OpConstant %uint 4294967295
%smin = OpConstant %uint 2147483648
%smax = OpConstant %uint 2147483647
%u16 = OpConstant %uint 16",
        &format!("{body}{}", selections(16)),
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 64]), vec![]]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    for lane in 0..4 {
        for (k, (op, x, first, want)) in cases.iter().enumerate() {
            let at_ = 16 * lane + k;
            let what = format!("lane {lane}: {op} with {x} first: {first}");
            assert_eq!(r.status(b.word_taint(at_)), WordStatus::Exact, "{what}");
            // 1 where true, 2 where false
            assert_eq!(v[at_], if *want { 1 } else { 2 }, "{what}");
        }
    }
}

/// The same rule for the integer operations one operand can decide: `0 & u`, `~0 | u` and
/// `0 * u` are 0, ~0 and 0 for every `u`, on either side; where the defined operand does not
/// decide (`1 & u`, `1 | u`, `2 * u`, and `~0 & u`, `0 | u`, `1 * u`, which pass `u` on), the
/// result is undefined. Twelve operations against an `OpUndef`.
#[test]
fn an_and_or_or_multiply_is_defined_exactly_where_its_defined_operand_decides_it() {
    // (opcode, the defined operand, whether it is first, the result if it decides)
    let cases = [
        ("OpBitwiseAnd", "%z", true, Some(0u32)),
        ("OpBitwiseAnd", "%z", false, Some(0)),
        ("OpBitwiseOr", "%max", true, Some(u32::MAX)),
        ("OpBitwiseOr", "%max", false, Some(u32::MAX)),
        ("OpIMul", "%z", true, Some(0)),
        ("OpIMul", "%z", false, Some(0)),
        ("OpBitwiseAnd", "%one", true, None),
        ("OpBitwiseAnd", "%max", false, None),
        ("OpBitwiseOr", "%one", true, None),
        ("OpBitwiseOr", "%z", false, None),
        ("OpIMul", "%two", true, None),
        ("OpIMul", "%one", false, None),
    ];
    let mut body = String::new();
    for (k, (op, x, first, _)) in cases.iter().enumerate() {
        let (a, b) = if *first { (*x, "%und") } else { ("%und", *x) };
        body += &format!("%v{k} = {op} %uint {a} {b}\n%p{k} = OpAccessChain %pu %out %u0 %at{k}\nOpStore %p{k} %v{k}\n");
    }
    let mut types = "%und = OpUndef %uint\n%z = OpConstant %uint 0\n%one = OpConstant %uint 1\n\
        %two = OpConstant %uint 2\n%max = OpConstant %uint 4294967295\n%u12 = OpConstant %uint 12\n"
        .to_string();
    let mut places = "%base = OpIMul %uint %i %u12\n".to_string();
    for k in 0..cases.len() {
        types += &format!("%c{k} = OpConstant %uint {k}\n");
        places += &format!("%at{k} = OpIAdd %uint %base %c{k}\n");
    }
    let text = module("", "", &types, &format!("{places}{body}"));
    let r = run(&asm(&text), vec![bytes_u32(&[0; 48]), vec![]]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    for lane in 0..4 {
        for (k, (op, x, first, want)) in cases.iter().enumerate() {
            let at_ = 12 * lane + k;
            let what = format!("lane {lane}: {op} with {x} first: {first}");
            match want {
                Some(w) => {
                    assert_eq!(r.status(b.word_taint(at_)), WordStatus::Exact, "{what}");
                    assert_eq!(v[at_], *w, "{what}");
                }
                None => assert!(
                    matches!(r.status(b.word_taint(at_)), WordStatus::Undefined(_)),
                    "{what}: {:?}",
                    r.status(b.word_taint(at_))
                ),
            }
        }
    }
}

/// SPIR-V, OpUnreachable: "Behavior is undefined if this instruction is executed." Lanes 2 and 3
/// branch to it; lanes 0 and 1 store 5 and go on to store 7 after the merge. Undefined behaviour,
/// not an undefined value: a compiler may take the branch to `OpUnreachable` as never taken and
/// run the stores in lanes 2 and 3 too, so what the buffer holds where they would have stored is
/// not pinned down — nor is the rest (the one verdict policy, `ModelRun::poisoned`: every element
/// of every buffer the dispatch could write is undefined, with the finding as its reason).
#[test]
fn executing_opunreachable_is_undefined_behaviour_that_pins_down_no_element() {
    let text = module(
        "",
        "",
        "%u5 = OpConstant %uint 5
%u7 = OpConstant %uint 7",
        "%lo = OpULessThan %bool %i %u2
OpSelectionMerge %merge None
OpBranchConditional %lo %ok %bad
%bad = OpLabel
OpUnreachable
%ok = OpLabel
%p = OpAccessChain %pu %out %u0 %i
OpStore %p %u5
OpBranch %merge
%merge = OpLabel
%j = OpIAdd %uint %i %u4
%q = OpAccessChain %pu %out %u0 %j
OpStore %q %u7",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 8]), vec![]]);
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("OpUnreachable reached at")),
        "{texts:?}"
    );
    let why = r
        .poisoned()
        .expect("an OpUnreachable executed poisons the run");
    assert!(why.starts_with("OpUnreachable reached at"), "{why}");
    // What lanes 0 and 1 did is still there for the report that shows the device's values.
    let v = u32s(&r.buffers[at(&r, 0)].bytes);
    assert_eq!([v[0], v[1], v[4], v[5]], [5, 5, 7, 7]);
}

/// SPIR-V, OpSwitch: "Selector must have a type of OpTypeInt", and each case's literal "must be
/// the same width as the Selector's type" — a 64-bit selector's cases are 64-bit literals, and a
/// case at 2³² is not the case at 0. Lane `i`'s selector is `i << 32`: lane 0 takes case 0, lane
/// 1 case 2³², lanes 2 and 3 the default.
#[test]
fn a_64_bit_switch_compares_its_whole_selector_with_64_bit_case_literals() {
    let text = module(
        "OpCapability Int64",
        "",
        "%ul = OpTypeInt 64 0
%u32 = OpConstant %uint 32
%u10 = OpConstant %uint 10
%u11 = OpConstant %uint 11
%u12 = OpConstant %uint 12",
        "%wide = OpUConvert %ul %i
%sel = OpShiftLeftLogical %ul %wide %u32
%p = OpAccessChain %pu %out %u0 %i
OpSelectionMerge %merge None
OpSwitch %sel %other 0 %zero 4294967296 %big
%zero = OpLabel
OpStore %p %u10
OpBranch %merge
%big = OpLabel
OpStore %p %u11
OpBranch %merge
%other = OpLabel
OpStore %p %u12
OpBranch %merge
%merge = OpLabel",
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 4]), vec![]]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(u32s(&r.buffers[at(&r, 0)].bytes), [10, 11, 12, 12]);
}

/// SPIR-V, OpAccessChain: "Each index in Indexes … is treated as an index into the current type,
/// walking the type hierarchy", one level per index, however many there are. `m` is
/// `uint[2]` nested nine deep (512 words, element `k` holding 1000 + k); lane `i` reads it with
/// the nine bits of `k = 37·i + 5` as its indexes, most significant first — ten steps with the
/// block's member, more than the executor takes in one pass — and writes `k` there afterwards.
#[test]
fn an_access_chain_of_many_indexes_walks_one_level_per_index() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint o[]; };
layout(binding = 1) buffer M { uint m[2][2][2][2][2][2][2][2][2]; };
void main() {
  uint k = 37u * gl_LocalInvocationIndex + 5u;
  uint b0 = (k >> 8) & 1u, b1 = (k >> 7) & 1u, b2 = (k >> 6) & 1u, b3 = (k >> 5) & 1u;
  uint b4 = (k >> 4) & 1u, b5 = (k >> 3) & 1u, b6 = (k >> 2) & 1u, b7 = (k >> 1) & 1u;
  uint b8 = k & 1u;
  o[gl_LocalInvocationIndex] = m[b0][b1][b2][b3][b4][b5][b6][b7][b8];
  m[b0][b1][b2][b3][b4][b5][b6][b7][b8] = k;
}
";
    let m: Vec<u32> = (0..512).map(|k| 1000 + k).collect();
    let r = run(
        &glsl(src, "chain.comp"),
        vec![bytes_u32(&[0; 4]), bytes_u32(&m)],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(u32s(&r.buffers[at(&r, 0)].bytes), [1005, 1042, 1079, 1116]);
    let after = u32s(&r.buffers[at(&r, 1)].bytes);
    for k in [5, 42, 79, 116] {
        assert_eq!(after[k], k as u32, "m at {k}");
    }
    assert_eq!(after[6], 1006);
}

/// SPV_KHR_non_semantic_info: instructions of an `OpExtInstImport` whose name begins with
/// "NonSemantic." "can be removed from a module without changing the semantics" — a
/// `debugPrintfEXT` (GL_EXT_debug_printf, `NonSemantic.DebugPrintf`) inside `main` changes
/// nothing the kernel computes.
#[test]
fn a_non_semantic_instruction_in_a_function_changes_nothing() {
    let src = "#version 450
#extension GL_EXT_debug_printf : enable
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint o[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  debugPrintfEXT(\"lane %u\", i);
  o[i] = 3u * i + 1u;
}
";
    let words = glsl(src, "printf.comp");
    assert!(
        words.windows(5).any(|w| w
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
            .windows(12)
            .any(|b| b == b"NonSemantic.")),
        "the module imports a non-semantic set"
    );
    let r = run(&words, vec![bytes_u32(&[0; 4])]);
    // The only findings are the lines printed (`debug_printf_prints_…` checks them).
    assert!(
        r.findings
            .iter()
            .all(|f| matches!(f, lockstep::spirv::Finding::Print { .. })),
        "{:?}",
        r.findings
    );
    assert_eq!(u32s(&r.buffers[at(&r, 0)].bytes), [1, 4, 7, 10]);
}

/// GL_EXT_debug_printf's `debugPrintfEXT` is NonSemantic.DebugPrintf's DebugPrintf, whose format
/// "is specified by the client API" — on Vulkan, the validation layers' debug printf
/// (Vulkan-ValidationLayers docs/debug_printf.md, "Debug Printf Format String": C's conversions,
/// `%vN` for a vector with components separated by ", ", `%%` for `%`). The model prints each
/// invocation's line with that invocation's values: a value the spec leaves undefined prints
/// `undefined`, and a line on a path an undefined value chose is marked.
#[test]
fn debug_printf_prints_each_invocation_s_values_as_the_validation_layers_format_them() {
    let src = "#version 450
#extension GL_EXT_debug_printf : enable
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint o[]; };
shared uint never;
void main() {
  uint i = gl_LocalInvocationIndex;
  uint u;
  if (i < 2u) u = i + 40u;
  debugPrintfEXT(\"%u%%: %5.2f %v2x u=%u\", i, float(i) / 4.0, uvec2(255u, i), u);
  if (never == 7u) {
    debugPrintfEXT(\"lost %d\", -int(i));
  } else {
    debugPrintfEXT(\"lost %d\", -int(i));
  }
  o[i] = i;
}
";
    let words = glsl(src, "printf2.comp");
    let r = run(&words, vec![bytes_u32(&[0; 4])]);
    // (the model runs both ways of the undefined branch: each prints its line, marked — a
    // device prints one of them)
    let lines: Vec<(u32, String, bool)> = r
        .findings
        .iter()
        .filter_map(|f| match f {
            lockstep::spirv::Finding::Print {
                slot, text, lost, ..
            } => Some((*slot, text.clone(), *lost)),
            _ => None,
        })
        .collect();
    let want = |i: u32, text: &str, lost: bool| (i, text.to_string(), lost);
    assert_eq!(
        lines,
        [
            want(0, "0%:  0.00 ff, 0 u=40", false),
            want(1, "1%:  0.25 ff, 1 u=41", false),
            want(2, "2%:  0.50 ff, 2 u=undefined", false),
            want(3, "3%:  0.75 ff, 3 u=undefined", false),
            want(0, "lost 0", true),
            want(1, "lost -1", true),
            want(2, "lost -2", true),
            want(3, "lost -3", true),
            want(0, "lost 0", true),
            want(1, "lost -1", true),
            want(2, "lost -2", true),
            want(3, "lost -3", true),
        ]
    );
}

/// SPIR-V, OpAny: "Result is true if any component of Vector is true, otherwise result is false";
/// OpAll: "true if all components … are true". An undefined component is some value of its type
/// (SPIR-V 2.2.2), so one defined component can decide the result whatever the other is: `any`
/// with a defined true, `all` with a defined false. Where no defined component decides, the
/// result is undefined. `u` is read from shared memory nobody wrote.
#[test]
fn a_defined_component_that_decides_any_or_all_makes_the_result_defined() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer O { uint o[]; };
layout(binding = 1) buffer A { uint a[]; };
shared uint never;
void main() {
  bool u = never == 5u;
  bool t = a[0] == 1u, f = a[0] == 2u;
  o[0] = any(bvec2(u, t)) ? 1u : 2u;
  o[1] = all(bvec3(t, f, u)) ? 1u : 2u;
  o[2] = all(bvec2(u, t)) ? 1u : 2u;
  o[3] = any(bvec2(f, u)) ? 1u : 2u;
}
";
    let r = run(
        &glsl(src, "anyall.comp"),
        vec![bytes_u32(&[0; 4]), bytes_u32(&[1])],
    );
    let b = &r.buffers[at(&r, 0)];
    assert_eq!(u32s(&b.bytes)[..2], [1, 2]);
    for w in 0..2 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "o[{w}]");
    }
    assert_undefined(&r, 0, 2..4);
}

/// SPIR-V, OpBitFieldUExtract and OpBitFieldInsert: "The resulting value is undefined if Count or
/// Offset or their sum is greater than the number of bits in the result" (GLSL 4.60 §8.8 says the
/// same of `bitfieldExtract` and `bitfieldInsert`). Offset 20 and count 12 fit 32 bits; offset 20
/// and count 16 do not.
#[test]
fn a_bit_field_past_the_width_of_its_value_is_undefined() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer O { uint o[]; };
layout(binding = 1) buffer A { uint a[]; };
void main() {
  uint x = a[0];
  o[0] = bitfieldExtract(x, 20, 12);
  o[1] = bitfieldExtract(x, 20, 16);
  o[2] = bitfieldInsert(x, 0u, 20, 12);
  o[3] = bitfieldInsert(x, 0u, 20, 16);
}
";
    let r = run(
        &glsl(src, "bits.comp"),
        vec![bytes_u32(&[0; 4]), bytes_u32(&[0xabc1_2345])],
    );
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    assert_eq!([v[0], v[2]], [0xabc, 0x0001_2345]);
    for w in [0, 2] {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "o[{w}]");
    }
    for w in [1, 3] {
        match r.status(b.word_taint(w)) {
            WordStatus::Undefined(c) => {
                assert!(c.contains("offset + count > bit width"), "o[{w}]: {c}")
            }
            s => panic!("o[{w}]: {s:?}"),
        }
    }
}

/// A bit field's Offset and Count are one scalar per invocation (SPIR-V, OpBitFieldUExtract:
/// "Offset and Count must be a scalar"): a lane whose count or offset is undefined gets an
/// undefined result, and the lanes beside it keep theirs. `u` is 2 in lanes 0–2 and never
/// written in lane 3: `bitfieldExtract(0xff, 2, 4)` = 0xf, `bitfieldInsert(0, 0xf, 4, 2)` = 0x30.
#[test]
fn a_bit_fields_undefined_offset_or_count_leaves_only_its_own_lane_undefined() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint o[]; };
void main() {
  uint l = gl_LocalInvocationIndex;
  uint u;
  if (l != 3u) { u = 2u; }
  o[l] = bitfieldExtract(0xffu, int(u), 4);
  o[4u + l] = bitfieldInsert(0u, 0xfu, 4, int(u));
}
";
    let r = run(&glsl(src, "bits.comp"), vec![bytes_u32(&[0; 8])]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    for l in 0..3 {
        assert_eq!([v[l], v[4 + l]], [0xf, 0x30], "lane {l}");
        for w in [l, 4 + l] {
            assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "o[{w}]");
        }
    }
    assert_undefined(&r, 0, [3, 7]);
}

/// GLSL 4.60 §8.8: `bitfieldExtract` and `bitfieldInsert` of a vector work "component-wise", with
/// one offset and one count for every component (SPIR-V, OpBitFieldInsert: "Offset and Count must
/// be a scalar"). Lane `l` extracts bits 4..11 of (0x1234 + l, 0x5678, 0x9abc, 0xdef0), inserts
/// the low byte of (1, 2, 3, 4) at bit 8 of the same vector, and sign-extends bits 4..11 of
/// (0x0f80, 0x0070) — component `w` of the inserted vector left undefined in lane 1, so that
/// only that component of that lane is undefined.
#[test]
fn a_vector_bit_field_works_on_every_component_with_one_offset_and_count() {
    let src = "#version 450
layout(local_size_x = 2) in;
layout(binding = 0) buffer O { uint o[]; };
void main() {
  uint l = gl_LocalInvocationIndex;
  uvec4 x = uvec4(0x1234u + l, 0x5678u, 0x9abcu, 0xdef0u);
  uvec4 ins = uvec4(1u, 2u, 3u, 4u);
  if (l == 1u) { uint u; ins.w = u; }
  uvec4 e = bitfieldExtract(x, 4, 8);
  uvec4 i = bitfieldInsert(x, ins, 8, 8);
  ivec2 s = bitfieldExtract(ivec2(0x0f80, 0x0070), 4, 8);
  for (uint c = 0u; c < 4u; c++) {
    o[l * 10u + c] = e[c];
    o[l * 10u + 4u + c] = i[c];
  }
  o[l * 10u + 8u] = uint(s.x);
  o[l * 10u + 9u] = uint(s.y);
}
";
    let r = run(&glsl(src, "bits.comp"), vec![bytes_u32(&[0; 20])]);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    for l in 0..2u32 {
        let at = l as usize * 10;
        assert_eq!(v[at..at + 4], [0x23, 0x67, 0xab, 0xef], "lane {l}");
        let inserted = [0x0134 + l, 0x0278, 0x03bc, 0x04f0];
        let n = if l == 1 { 3 } else { 4 };
        assert_eq!(v[at + 4..at + 4 + n], inserted[..n], "lane {l}");
        assert_eq!(v[at + 8..at + 10], [0xffff_fff8, 0x7], "lane {l}");
    }
    for w in (0..20).filter(|&w| w != 17) {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "o[{w}]");
    }
    assert_undefined(&r, 0, [17]);
}

/// GLSL 4.60 §8.3: `modf(x, out i)` "returns the fractional part of x and sets i to the integer
/// part", and `frexp(x, out exp)` splits x into a significand in [0.5, 1.0) and an exponent —
/// component by component for vectors. Lane `l` splits (l + 0.25, 2l + 0.5, 3.75) and
/// (l + 3, 12): frexp(3) = 0.75·2², frexp(4) = 0.5·2³, frexp(12) = 0.75·2⁴ — lane 1's y
/// left undefined.
#[test]
fn modf_and_frexp_of_vectors_split_every_component() {
    let src = "#version 450
layout(local_size_x = 2) in;
layout(binding = 0) buffer O { float o[]; };
layout(binding = 1) buffer E { int e[]; };
void main() {
  uint l = gl_LocalInvocationIndex;
  float x = float(l);
  vec3 whole;
  vec3 in3 = vec3(x + 0.25, 2.0 * x + 0.5, 3.75);
  if (l == 1u) { float u; in3.y = u; }
  vec3 frac = modf(in3, whole);
  ivec2 ex;
  vec2 sig = frexp(vec2(x + 3.0, 12.0), ex);
  for (int c = 0; c < 3; c++) { o[l * 8u + uint(c)] = frac[c]; o[l * 8u + 3u + uint(c)] = whole[c]; }
  o[l * 8u + 6u] = sig.x; o[l * 8u + 7u] = sig.y;
  e[l * 2u] = ex.x; e[l * 2u + 1u] = ex.y;
}
";
    let r = run(
        &glsl(src, "split.comp"),
        vec![bytes_f32(&[0.0; 16]), bytes_u32(&[0; 4])],
    );
    let o = f32s(&r.buffers[at(&r, 0)].bytes);
    let e = u32s(&r.buffers[at(&r, 1)].bytes);
    assert_eq!(
        o[..8],
        [0.25, 0.5, 0.75, 0.0, 0.0, 3.0, 0.75, 0.75],
        "lane 0"
    );
    let lane1: Vec<f32> = [8, 10, 11, 13, 14, 15].iter().map(|&w| o[w]).collect();
    assert_eq!(lane1, [0.25, 0.75, 1.0, 3.0, 0.5, 0.75], "lane 1");
    assert_eq!(e, [2, 4, 3, 4]);
    // Lane 1's y is undefined (GLSL 4.60, 4.3: `u` has no initializer): both its parts are, and
    // only they — each component is split on its own.
    assert_undefined(&r, 0, [9, 12]);
    let b = &r.buffers[at(&r, 0)];
    for w in (0..16).filter(|w| ![9, 12].contains(w)) {
        assert!(
            !matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_)),
            "o[{w}]"
        );
    }
}

/// GL_KHR_shader_subgroup, `subgroupInclusiveAdd`: "the inclusive scan addition of value across
/// all active invocations … with a gl_SubgroupInvocationID less than or equal to the current
/// invocation"; GL_EXT_shader_subgroup_extended_types lets `value` be an 8-, 16- or 64-bit
/// integer or a 16-bit float, and the base extension a float or double. Lane `i` adds `i + 1`:
/// 1, 3, 6, 10 in every type (all exact in each: small integers).
#[test]
fn an_inclusive_scan_adds_in_every_scalar_type_the_extensions_allow() {
    let src = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_subgroup_extended_types_int8 : require
#extension GL_EXT_shader_subgroup_extended_types_int16 : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_float16 : require
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint o[]; };
void main() {
  uint i = gl_SubgroupInvocationID;
  uint k = 9u * i;
  o[k] = uint(subgroupInclusiveAdd(int8_t(i + 1u)));
  o[k + 1u] = uint(subgroupInclusiveAdd(uint8_t(i + 1u)));
  o[k + 2u] = uint(subgroupInclusiveAdd(int16_t(i + 1u)));
  o[k + 3u] = uint(subgroupInclusiveAdd(uint16_t(i + 1u)));
  o[k + 4u] = uint(subgroupInclusiveAdd(int64_t(i + 1u)));
  o[k + 5u] = uint(subgroupInclusiveAdd(uint64_t(i + 1u)));
  o[k + 6u] = uint(subgroupInclusiveAdd(float16_t(i + 1u)));
  o[k + 7u] = uint(subgroupInclusiveAdd(float(i + 1u)));
  o[k + 8u] = uint(subgroupInclusiveAdd(double(i + 1u)));
}
";
    let r = run(&glsl(src, "scan.comp"), vec![bytes_u32(&[0; 36])]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let v = u32s(&r.buffers[at(&r, 0)].bytes);
    for (lane, want) in [1u32, 3, 6, 10].into_iter().enumerate() {
        assert_eq!(v[9 * lane..9 * lane + 9], [want; 9], "lane {lane}");
    }
}

/// GLSL 4.60 §8.8, `bitfieldReverse`: "The bit numbered n of the result will be taken from bit
/// (bits − 1) − n of value"; §8.3 `mod(x, y)` = x − y·floor(x/y) (OpFMod: the sign of a non-zero
/// result is the sign of y), for floats and doubles.
#[test]
fn bit_reversal_and_the_float_modulus_follow_their_definitions() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer O { uint o[]; };
layout(binding = 1) buffer A { float a[]; };
void main() {
  o[0] = bitfieldReverse(floatBitsToUint(a[2]));
  o[1] = uint(int(mod(a[0], a[1])));
  o[2] = uint(int(mod(double(a[0]), double(a[1]))));
  o[3] = uint(int(mod(-a[0], a[1]) * 4.0));
  o[4] = uint(int(mod(-double(a[0]), double(a[1])) * 4.0lf));
}
";
    let r = run(
        &glsl(src, "rem.comp"),
        vec![
            bytes_u32(&[0; 5]),
            bytes_f32(&[7.5, 2.0, f32::from_bits(0x0000_0003)]),
        ],
    );
    // 7.5 mod 2 = 1.5 → 1; −7.5 mod 2 = 0.5 → ·4 = 2.
    assert_eq!(u32s(&r.buffers[at(&r, 0)].bytes), [0xc000_0000, 1, 1, 2, 2]);
}

/// SPIR-V, OpQuantizeToF16: "If Value is an infinity, the result is the same infinity … If Value
/// is positive with a magnitude too large to represent as a 16-bit floating-point value, the
/// result is positive infinity … If the magnitude of Value is too small to represent as a
/// normalized 16-bit floating-point value, the result may be either +0 or -0." Lane inputs 1.5
/// (a half exactly), 70000 (past 65504), −10⁻⁶ (below the smallest normal half, 2⁻¹⁴) and +0:
/// 1.5, the infinity and the zero that was a zero are exact; the zero a tiny value became is a
/// zero whose sign the rule leaves open — inexact, not exact.
#[test]
fn quantizing_to_half_keeps_halves_overflows_to_infinity_and_leaves_a_tiny_zeros_sign_open() {
    let text = module(
        "",
        "",
        "",
        "%px = OpAccessChain %pf %in %u0 %i
%x = OpLoad %float %px
%q = OpQuantizeToF16 %float %x
%b = OpBitcast %uint %q
%p = OpAccessChain %pu %out %u0 %i
OpStore %p %b",
    );
    let r = run(
        &asm(&text),
        vec![bytes_u32(&[7; 4]), bytes_f32(&[1.5, 70000.0, -1e-6, 0.0])],
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let b = &r.buffers[at(&r, 0)];
    let v = u32s(&b.bytes);
    assert_eq!(
        [v[0], v[1], v[3]],
        [1.5f32.to_bits(), f32::INFINITY.to_bits(), 0]
    );
    assert_eq!(v[2] & 0x7fff_ffff, 0, "a zero: {:#x}", v[2]);
    for w in [0, 1, 3] {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "out[{w}]");
    }
    assert_eq!(r.status(b.word_taint(2)), WordStatus::Inexact, "out[2]");
}

/// Stores `1` where boolean `%r{k}` is true and `2` where false at `out[n·i + k]`, for `k` in
/// `0..n` (`%u1`, `%u2` and `%u{n}` are constants of the module).
fn selections(n: u32) -> String {
    let mut t = format!("%base = OpIMul %uint %i %u{n}\n");
    for k in 0..n {
        let at = if k == 0 {
            "%base".to_string()
        } else {
            let prev = if k == 1 {
                "%base".into()
            } else {
                format!("%b{}", k - 1)
            };
            t += &format!("%b{k} = OpIAdd %uint {prev} %u1\n");
            format!("%b{k}")
        };
        t += &format!(
            "%s{k} = OpSelect %uint %r{k} %u1 %u2\n%p{k} = OpAccessChain %pu %out %u0 {at}\nOpStore %p{k} %s{k}\n"
        );
    }
    t
}

/// Vulkan, "Specialization Constants": a `constant_id` constant takes the value the pipeline gives
/// for its SpecId in place of its default — for a `bool` too (`OpSpecConstantTrue` and
/// `OpSpecConstantFalse`, GLSL 4.60 §4.4.1 `constant_id`), and so does every operation folded
/// from it. `flag` defaults to true and `off` to false; the run gives `flag` false and `off`
/// true.
#[test]
fn a_boolean_specialization_constant_takes_the_value_given_and_its_uses_follow() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer O { uint o[]; };
layout(constant_id = 3) const bool flag = true;
layout(constant_id = 4) const bool off = false;
const bool both = flag && !off;
void main() {
  o[0] = flag ? 1u : 2u;
  o[1] = off ? 1u : 2u;
  o[2] = both ? 1u : 2u;
}
";
    let words = glsl(src, "flag.comp");
    let with = |spec: Vec<(u32, SpecInput)>| {
        let r = run_with(&words, spec, 1, vec![bytes_u32(&[0; 3])]);
        u32s(&r.buffers[at(&r, 0)].bytes)
    };
    assert_eq!(with(vec![]), [1, 2, 1]);
    assert_eq!(
        with(vec![
            (3, SpecInput::Text("false".into())),
            (4, SpecInput::Bits(1))
        ]),
        [2, 1, 2]
    );
}

/// SPIR-V, OpCompositeExtract and OpCompositeInsert: "Each index in Indexes … is treated as an
/// index into the current type", so a second index after a vector's component — a scalar — names
/// nothing, and the module is refused naming it, at run time and in a specialization-constant
/// operation alike (it was read as the first index alone).
#[test]
fn an_index_into_a_vectors_component_is_refused_naming_it() {
    for (types, body) in [
        (
            "%c = OpConstantComposite %v3 %u1 %u2 %u3",
            "%e = OpCompositeExtract %uint %c 1 0\n%p = OpAccessChain %pu %out %u0 %i\nOpStore %p %e",
        ),
        (
            "%c = OpConstantComposite %v3 %u1 %u2 %u3\n%e = OpSpecConstantOp %uint CompositeExtract %c 1 0",
            "%p = OpAccessChain %pu %out %u0 %i\nOpStore %p %e",
        ),
    ] {
        let e = refused(types, body);
        assert!(
            e.contains("index 0 into component 1 of a 3-vector, a scalar"),
            "{e}"
        );
    }
}

/// GLSL.std.450, ModfStruct: "Result Type must be an OpTypeStruct with two members. Member 0 must
/// have the same type as the type of x. Member 1 must also have the same type as the type of x";
/// FrexpStruct: "… Member 1 must be a scalar or vector with integer component type". A result
/// struct of one or three members is a malformed module: refused, naming the rule, never read
/// past its members nor run with the third ignored.
#[test]
fn a_modf_or_frexp_struct_of_other_than_two_members_is_refused() {
    for (members, f) in [
        ("%float %float %float", "ModfStruct"),
        ("%float %uint %uint", "FrexpStruct"),
        ("%float", "ModfStruct"),
    ] {
        let types = format!("%st = OpTypeStruct {members}\n%half = OpConstant %float 2.5");
        let body = format!(
            "%r = OpExtInst %st %std {f} %half\n%e = OpCompositeExtract %float %r 0\n\
             %b = OpBitcast %uint %e\n%p = OpAccessChain %pu %out %u0 %i\nOpStore %p %b"
        );
        let e = refused(&types, &body);
        assert!(
            e.contains("ModfStruct/FrexpStruct result is not a struct of two members"),
            "{f} of {{{members}}}: {e}"
        );
    }
}

/// SPIR-V OpBitcast: "Let L be the type … that has the larger number of components. Let S be the
/// other type … The first component … of S maps to the first components of L, and so on …; any
/// single component of S (mapping to multiple components of L) maps its lower-ordered bits to the
/// lower-numbered components of L." So a result component holds the bits of the source
/// components mapped to it and of no other: `(1, 2, 3, u)` of four 32-bit words, `u` an `OpUndef`,
/// cast to two 64-bit words gives `1 | 2 << 32` (defined) and an undefined second word; cast
/// back, the first word's two halves are defined again. (The second word's low half, `3`, comes
/// back undefined: the interpreter keeps one state per component, not per bit — a cautious
/// answer, written down in docs/interpreter.md.) A cast of the same number of components (the
/// four words as floats and back) keeps each component's own state.
#[test]
fn a_bitcast_is_undefined_only_in_the_components_that_take_undefined_bits() {
    let types =
        "%ulong = OpTypeInt 64 0\n%v2l = OpTypeVector %ulong 2\n%v4 = OpTypeVector %uint 4\n\
                 %v4f = OpTypeVector %float 4\n%un = OpUndef %uint";
    let mut body = String::from(
        "%c = OpCompositeConstruct %v4 %u1 %u2 %u3 %un\n%w = OpBitcast %v2l %c\n\
         %back = OpBitcast %v4 %w\n%f = OpBitcast %v4f %c\n%same = OpBitcast %v4 %f\n\
         %base = OpIMul %uint %i %u4\n",
    );
    // o[16·i + …]: the two 64-bit words' halves (0–3), `back` (4–7), `same` (8–11).
    let mut k = 0;
    let mut store = |body: &mut String, v: &str| {
        body.push_str(&format!(
            "%x{k} = OpIMul %uint %base %u4\n%o{k} = OpIAdd %uint %x{k} %k{k}\n\
             %p{k} = OpAccessChain %pu %out %u0 %o{k}\nOpStore %p{k} {v}\n"
        ));
        k += 1;
    };
    for c in 0..2 {
        body.push_str(&format!(
            "%w{c} = OpCompositeExtract %ulong %w {c}\n%lo{c} = OpUConvert %uint %w{c}\n\
             %s{c} = OpShiftRightLogical %ulong %w{c} %l32\n%hi{c} = OpUConvert %uint %s{c}\n"
        ));
        store(&mut body, &format!("%lo{c}"));
        store(&mut body, &format!("%hi{c}"));
    }
    for v in ["back", "same"] {
        for c in 0..4 {
            body.push_str(&format!("%{v}{c} = OpCompositeExtract %uint %{v} {c}\n"));
            store(&mut body, &format!("%{v}{c}"));
        }
    }
    let consts: String = (0..k)
        .map(|j| format!("%k{j} = OpConstant %uint {j}\n"))
        .collect();
    let types = format!("{types}\n%l32 = OpConstant %ulong 32\n{consts}");
    let words = asm(&module("OpCapability Int64", "", &types, &body));
    let r = run(&words, vec![bytes_u32(&[0; 64]), bytes_f32(&[0.0; 4])]);
    let o = u32s(&r.buffers[at(&r, 0)].bytes);
    let b = &r.buffers[at(&r, 0)];
    for lane in 0..4 {
        let w = |j: usize| 16 * lane + j;
        // Defined: the first 64-bit word (1, 2), words 0–1 cast back through it, 0–2 of the
        // same-count cast.
        for (j, want) in [(0, 1), (1, 2), (4, 1), (5, 2), (8, 1), (9, 2), (10, 3)] {
            assert_eq!(o[w(j)], want, "lane {lane} o[{}]", w(j));
            assert_eq!(
                r.status(b.word_taint(w(j))),
                WordStatus::Exact,
                "o[{}]",
                w(j)
            );
        }
        assert_undefined(&r, 0, [w(2), w(3), w(6), w(7), w(11)]);
    }
}

/// SPIR-V OpSelect of two pointers (SPV_KHR_variable_pointers) on an undefined condition: the
/// pointer is one of the two, which one undefined (GLSL 4.60 §4.3, SPIR-V 2.2.2 "Undefined"), so
/// an access chain from it, and what a load through that reads, are undefined in that invocation
/// — even though both buffers hold a defined value there — and only there. Lane 3's condition is
/// an `OpUndef`; the others pick `a` (values `10 + i`). The chain's index is dynamic.
#[test]
fn an_access_chain_from_a_pointer_selected_on_an_undefined_condition_is_undefined_there_only() {
    let text = "OpCapability Shader
OpCapability VariablePointersStorageBuffer
OpExtension \"SPV_KHR_variable_pointers\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %lid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ua ArrayStride 4
OpMemberDecorate %U 0 Offset 0
OpDecorate %U Block
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
OpDecorate %a DescriptorSet 0
OpDecorate %a Binding 1
OpDecorate %b DescriptorSet 0
OpDecorate %b Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u3 = OpConstant %uint 3
%true = OpConstantTrue %bool
%ub = OpUndef %bool
%ua = OpTypeRuntimeArray %uint
%U = OpTypeStruct %ua
%pU = OpTypePointer StorageBuffer %U
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3
%lid = OpVariable %pin Input
%out = OpVariable %pU StorageBuffer
%a = OpVariable %pU StorageBuffer
%b = OpVariable %pU StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%id = OpLoad %v3 %lid
%i = OpCompositeExtract %uint %id 0
%is3 = OpIEqual %bool %i %u3
%c = OpSelect %bool %is3 %ub %true
%s = OpSelect %pU %c %a %b
%p = OpAccessChain %pu %s %u0 %i
%v = OpLoad %uint %p
%q = OpAccessChain %pu %out %u0 %i
OpStore %q %v
OpReturn
OpFunctionEnd
";
    let r = run(
        &asm(text),
        vec![
            bytes_u32(&[0; 4]),
            bytes_u32(&[10, 11, 12, 13]),
            bytes_u32(&[20, 21, 22, 23]),
        ],
    );
    let o = u32s(&r.buffers[at(&r, 0)].bytes);
    let b = &r.buffers[at(&r, 0)];
    for (l, &v) in o.iter().enumerate().take(3) {
        assert_eq!(
            (v, r.status(b.word_taint(l))),
            (10 + l as u32, WordStatus::Exact),
            "lane {l}"
        );
    }
    assert_undefined(&r, 0, [3]);
}

/// SPIR-V OpFNegate: "Inverts the sign bit of Operand" — for every value: `-(-2.5)` is 2.5, the
/// negation of −0.0 is +0.0 and of +0.0 is −0.0, of a NaN the same NaN with the other sign, of
/// −∞ +∞; in 32 and 64 bits.
#[test]
fn a_float_negation_inverts_the_sign_bit_of_every_value() {
    let src = "#version 450
layout(local_size_x = 6) in;
layout(binding = 0) buffer O { uint o[]; };
layout(binding = 1) buffer I { float x[]; };
void main() {
  uint l = gl_LocalInvocationIndex;
  o[l] = floatBitsToUint(-x[l]);
  uvec2 d = unpackDouble2x32(-double(x[l]));
  o[6u + l] = d.y;
}
";
    let xs: [f32; 6] = [
        -2.5,
        2.5,
        -0.0,
        0.0,
        f32::from_bits(0xffc0_0001),
        f32::NEG_INFINITY,
    ];
    let r = run_with(
        &glsl(src, "neg.comp"),
        vec![],
        8,
        vec![bytes_u32(&[0; 12]), bytes_f32(&xs)],
    );
    let o = u32s(&r.buffers[at(&r, 0)].bytes);
    for (l, x) in xs.iter().enumerate() {
        assert_eq!(o[l], x.to_bits() ^ 0x8000_0000, "-x[{l}]");
        // The high word of the double holds its sign in bit 31 (a NaN converted keeps its sign).
        assert_eq!(o[6 + l] >> 31, (x.to_bits() >> 31) ^ 1, "-double(x[{l}])");
    }
}

/// Vulkan, VUID-RuntimeSpirv-NonUniform-06274: "If an instruction loads from or stores to a
/// resource (including atomics and image instructions) and the resource descriptor being accessed
/// is not dynamically uniform, then the operand corresponding to that resource (e.g. the pointer
/// or sampled image operand) must be decorated with NonUniform" — GLSL's
/// `ins[nonuniformEXT(k)]` (GL_EXT_nonuniform_qualifier). Eight invocations in subgroups of
/// four, `k = i & 1` (differs within each subgroup), `g = i / 4` (the same within each):
/// - `ins[k]` undecorated: undefined in every invocation, the chain naming the array, two lanes
///   and their indices, and the rule;
/// - `ins[nonuniformEXT(k)]`: defined, element k's value;
/// - `ins[g]`: defined at subgroup size 4 (each subgroup executes the chain with one index);
///   undefined at size 8, where one subgroup holds both indices;
/// - a store through `ws[k]` undecorated: which buffer it lands in is not known, so every element
///   of every buffer of the array is undefined (and a store through an undefined index the same).
#[test]
fn an_array_of_descriptors_indexed_differently_within_a_subgroup_needs_nonuniform() {
    let words = glsl(
        "#version 450\n#extension GL_EXT_nonuniform_qualifier : require\n\
         layout(local_size_x = 8) in;\n\
         layout(set = 0, binding = 0) buffer In { uint v[8]; } ins[2];\n\
         layout(set = 0, binding = 1) buffer Out { uint o[24]; };\n\
         layout(set = 0, binding = 2) buffer W { uint w[8]; } ws[2];\n\
         void main() {\n  uint i = gl_LocalInvocationID.x;\n  uint k = i & 1u;\n  uint g = i / 4u;\n\
         \x20 o[i] = ins[k].v[i];\n  o[8u + i] = ins[nonuniformEXT(k)].v[i];\n  o[16u + i] = ins[g].v[i];\n\
         \x20 ws[k].w[i] = 7u;\n}\n",
        "nu.comp",
    );
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    let ins0: Vec<u32> = (10..18).collect();
    let ins1: Vec<u32> = (20..28).collect();
    let inputs = [
        input(0, 0, &ins0),
        input(0, 1, &ins1),
        input(1, 0, &[0; 24]),
        input(2, 0, &[0; 8]),
        input(2, 1, &[0; 8]),
    ];
    let run_at = |size: u64| {
        let mut c = RunConfig::new(SubgroupSize::new(size).unwrap(), [1, 1, 1]);
        c.mode = Mode::Base;
        run_model(&k, c, &inputs, None).unwrap()
    };
    let r = run_at(4);
    let o = &r.buffers[at(&r, 1)];
    let vals = u32s(&o.bytes);
    for i in 0..8 {
        let (k, g) = (i & 1, i / 4);
        match r.status(o.word_taint(i)) {
            WordStatus::Undefined(chain) => assert!(
                chain.contains("index the array of descriptors ins with different values (lane ")
                    && chain.contains("not decorated NonUniform")
                    && chain.contains("VUID-RuntimeSpirv-NonUniform-06274"),
                "o[{i}]: {chain}"
            ),
            s => panic!("o[{i}] = ins[k].v[i] without nonuniformEXT: {s:?}"),
        }
        // o[at] holds element `e`'s v[i], exactly.
        let exact = |at: usize, e: usize| {
            assert_eq!(r.status(o.word_taint(at)), WordStatus::Exact, "o[{at}]");
            assert_eq!(vals[at], if e == 0 { ins0[i] } else { ins1[i] }, "o[{at}]");
        };
        exact(8 + i, k);
        exact(16 + i, g);
    }
    for b in r.buffers.iter().filter(|b| b.binding == 2) {
        for w in 0..8 {
            assert!(
                matches!(r.status(b.word_taint(w)), WordStatus::Undefined(_)),
                "ws[{}].w[{w}]: {:?}",
                b.element,
                r.status(b.word_taint(w))
            );
        }
    }
    // One subgroup of eight: `g` differs within it too.
    let r = run_at(8);
    let o = &r.buffers[at(&r, 1)];
    for i in 16..24 {
        assert!(
            matches!(r.status(o.word_taint(i)), WordStatus::Undefined(_)),
            "o[{i}] at size 8: {:?}",
            r.status(o.word_taint(i))
        );
    }
    for i in 8..16 {
        assert_eq!(
            r.status(o.word_taint(i)),
            WordStatus::Exact,
            "o[{i}] at size 8"
        );
    }
}

/// The same rule (VUID-RuntimeSpirv-NonUniform-06274) names the operand to decorate: "the
/// operand corresponding to that resource (e.g. the pointer …) must be decorated with
/// NonUniform" — the access chain, which a hand-written or other compiler's module may decorate
/// alone; glslang, DXC and naga decorate the index too, and a module decorating only the index
/// is taken as saying the same. Eight invocations in subgroups of four read `ins[i & 1].v[i]`
/// (the index differs within each subgroup): with the decoration on the chain alone, or on the
/// index alone, every read is defined (`ins[k].v[i]`, exactly); with neither, every one is
/// undefined by the rule.
#[test]
fn a_nonuniform_decoration_on_the_access_chain_alone_makes_a_divergent_descriptor_index_defined() {
    let text = r#"OpCapability Shader
OpCapability ShaderNonUniform
OpCapability StorageBufferArrayNonUniformIndexing
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lid %ins %outs
OpName %ins "ins"
OpExecutionMode %main LocalSize 8 1 1
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %ra ArrayStride 4
OpMemberDecorate %In 0 Offset 0
OpDecorate %In Block
OpDecorate %ins DescriptorSet 0
OpDecorate %ins Binding 0
OpDecorate %outs DescriptorSet 0
OpDecorate %outs Binding 1
{deco}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v3 = OpTypeVector %uint 3
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u2 = OpConstant %uint 2
%u8 = OpConstant %uint 8
%ra = OpTypeRuntimeArray %uint
%In = OpTypeStruct %ra
%In2 = OpTypeArray %In %u2
%pIn2 = OpTypePointer StorageBuffer %In2
%pIn = OpTypePointer StorageBuffer %In
%pu = OpTypePointer StorageBuffer %uint
%pv3 = OpTypePointer Input %v3
%pi = OpTypePointer Input %uint
%lid = OpVariable %pv3 Input
%ins = OpVariable %pIn2 StorageBuffer
%outs = OpVariable %pIn StorageBuffer
%main = OpFunction %void None %fn
%e = OpLabel
%ip = OpAccessChain %pi %lid %u0
%i = OpLoad %uint %ip
%k = OpBitwiseAnd %uint %i %u1
%p = OpAccessChain %pu %ins %k %u0 %i
%x = OpLoad %uint %p
%q = OpAccessChain %pu %outs %u0 %i
OpStore %q %x
OpReturn
OpFunctionEnd
"#;
    let ins0: Vec<u32> = (10..18).collect();
    let ins1: Vec<u32> = (20..28).collect();
    let inputs = [input(0, 0, &ins0), input(0, 1, &ins1), input(1, 0, &[0; 8])];
    let run = |deco: &str| {
        let k = decode(
            &asm(&text.replace("{deco}", deco)),
            &DecodeOptions::default(),
        )
        .unwrap();
        let mut c = RunConfig::new(SubgroupSize::new(4).unwrap(), [1, 1, 1]);
        c.mode = Mode::Base;
        run_model(&k, c, &inputs, None).unwrap()
    };
    for deco in ["OpDecorate %p NonUniform", "OpDecorate %k NonUniform"] {
        let r = run(deco);
        let o = &r.buffers[at(&r, 1)];
        let vals = u32s(&o.bytes);
        for i in 0..8 {
            assert_eq!(
                r.status(o.word_taint(i)),
                WordStatus::Exact,
                "{deco}: o[{i}]"
            );
            let want = if i & 1 == 0 { ins0[i] } else { ins1[i] };
            assert_eq!(vals[i], want, "{deco}: o[{i}]");
        }
    }
    let r = run("");
    let o = &r.buffers[at(&r, 1)];
    for i in 0..8 {
        match r.status(o.word_taint(i)) {
            WordStatus::Undefined(chain) => assert!(
                chain.contains("index the array of descriptors ins with different values")
                    && chain.contains("VUID-RuntimeSpirv-NonUniform-06274"),
                "o[{i}]: {chain}"
            ),
            s => panic!("o[{i}] undecorated: {s:?}"),
        }
    }
}

/// The same rule (VUID-RuntimeSpirv-NonUniform-06274), subgroup by subgroup and among the
/// invocations whose index is defined. Eight invocations in subgroups of four:
/// - `ins[i == 7 ? 1 : 0]` executed by lanes 0–3 and 6–7 (4 and 5 take no part): the first
///   subgroup's indices agree (defined, `ins[0].v[i]`), the second's do not (undefined, the
///   chain naming `ins`);
/// - lanes 0–2 of each subgroup index 0, 1, 0 and lane 3 an undefined value: still different —
///   undefined in every lane;
/// - lanes 0–2 index 0 and lane 3 an undefined value (whose bits are 1): the defined indices
///   agree, so lanes 0–2 read `ins[0]`, defined; lane 3's read is undefined by its own index.
#[test]
fn whether_an_undecorated_descriptor_index_is_uniform_is_decided_per_subgroup_on_defined_indices() {
    let words = glsl(
        "#version 450\nlayout(local_size_x = 8) in;\n\
         layout(set = 0, binding = 0) buffer In { uint v[8]; } ins[2];\n\
         layout(set = 0, binding = 1) buffer Out { uint o[24]; };\n\
         void main() {\n  uint i = gl_LocalInvocationID.x;\n  uint u;\n\
         \x20 if (i < 4u || i >= 6u) { o[i] = ins[i == 7u ? 1u : 0u].v[i]; }\n\
         \x20 uint kb = (i & 3u) == 3u ? u : (i & 1u);\n  o[8u + i] = ins[kb].v[i];\n\
         \x20 uint kc = (i & 3u) == 3u ? u + 1u : 0u;\n  o[16u + i] = ins[kc].v[i];\n}\n",
        "nu2.comp",
    );
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    let ins0: Vec<u32> = (10..18).collect();
    let inputs = [
        input(0, 0, &ins0),
        input(0, 1, &(20..28).collect::<Vec<u32>>()),
        input(1, 0, &[0; 24]),
    ];
    let mut c = RunConfig::new(SubgroupSize::new(4).unwrap(), [1, 1, 1]);
    c.mode = Mode::Base;
    let r = run_model(&k, c, &inputs, None).unwrap();
    let o = &r.buffers[at(&r, 1)];
    let vals = u32s(&o.bytes);
    let exact = |at: usize, want: u32| {
        assert_eq!(r.status(o.word_taint(at)), WordStatus::Exact, "o[{at}]");
        assert_eq!(vals[at], want, "o[{at}]");
    };
    let nonuniform = |at: usize| match r.status(o.word_taint(at)) {
        WordStatus::Undefined(chain) => assert!(
            chain.contains("index the array of descriptors ins with different values"),
            "o[{at}]: {chain}"
        ),
        s => panic!("o[{at}]: {s:?}"),
    };
    for (i, &want) in ins0.iter().enumerate().take(4) {
        exact(i, want);
    }
    exact(4, 0);
    exact(5, 0);
    nonuniform(6);
    nonuniform(7);
    for i in [8, 9, 10, 12, 13, 14] {
        nonuniform(i);
    }
    for i in [16, 17, 18, 20, 21, 22] {
        exact(i, ins0[i - 16]);
    }
    for i in [19, 23] {
        match r.status(o.word_taint(i)) {
            WordStatus::Undefined(chain) => assert!(!chain.contains("NonUniform"), "{chain}"),
            s => panic!("o[{i}]: {s:?}"),
        }
    }
}

/// SPV_KHR_shader_clock, `OpReadClockKHR`: "Returns the current time of the clock" — a value the
/// device gives and the spec does not (only that the 64-bit count grows, wrapping). Not undefined
/// behaviour: the model reads a count that only grows along an invocation's path and marks it
/// order-dependent — when a device ran the instruction is its own — with the instruction and the
/// extension named; what is computed from it, and what a branch on it writes, are order-dependent
/// too (not compared), while the rest of the kernel stays exact and the run clean.
#[test]
fn a_clock_reading_is_order_dependent_not_undefined_and_only_grows() {
    let src = "#version 450
#extension GL_ARB_shader_clock : require
#extension GL_EXT_shader_realtime_clock : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uint64_t dt; uint grew; uint plain; uvec2 halves; uint branched; uint64_t after; };
void main() {
  uint64_t c0 = clockARB();
  uint x = 0u;
  for (uint k = 0u; k < gl_LocalInvocationID.x + 3u; k++) x += k;
  uint64_t c1 = clockRealtimeEXT();
  uvec2 h = clock2x32ARB();
  uint64_t c2 = clockARB();
  if (gl_LocalInvocationID.x == 0u) { dt = c1 - c0; grew = c1 > c0 ? 1u : 0u; plain = x; halves = h; after = c2; }
  if (c0 < 0xffffffffffffffffUL && gl_LocalInvocationID.x == 1u) branched = 7u;
}
";
    let r = run(&glsl(src, "clock.comp"), vec![bytes_u32(&[0; 10])]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let b = &r.buffers[at(&r, 0)];
    // dt (words 0, 1), grew (2), halves (4, 5), branched (6): order-dependent, naming the clock
    for w in [0, 1, 2, 4, 5, 6] {
        match r.status(b.word_taint(w)) {
            WordStatus::OrderDependent(chain) => assert!(
                chain.contains("OpReadClockKHR") && chain.contains("SPV_KHR_shader_clock"),
                "word {w}: {chain}"
            ),
            other => panic!("word {w}: {other:?}"),
        }
    }
    let words = u32s(&b.bytes);
    // The model's clock grew between the two readings (the loop ran between them).
    assert_eq!(words[2], 1);
    assert!(words[0] > 0 || words[1] > 0, "dt = 0");
    // `plain` = 0 + 1 + 2 in lane 0: exact, whatever the clock read.
    assert_eq!(words[3], 3);
    assert_eq!(r.status(b.word_taint(3)), WordStatus::Exact);
    assert_eq!(words[6], 7);
    // `clock2x32ARB` is the 64-bit count as a `uvec2`, its low half first (GL_ARB_shader_clock),
    // read between `c1` and `c2`: c1 − c0 ≤ c1 ≤ its count ≤ c2.
    let (halves, after) = (
        words[4] as u64 | (words[5] as u64) << 32,
        words[8] as u64 | (words[9] as u64) << 32,
    );
    assert!(
        halves >= words[0] as u64 | (words[1] as u64) << 32,
        "{halves} < dt"
    );
    assert!(
        halves <= after,
        "clock2x32ARB {halves:#x} after clockARB {after:#x}"
    );
    // GL_ARB_shader_clock reads the subgroup's clock (`OpReadClockKHR` with Scope Subgroup):
    // `halves` and `branched` come from it alone.
    for w in [4, 6] {
        let WordStatus::OrderDependent(chain) = r.status(b.word_taint(w)) else {
            unreachable!("checked above")
        };
        assert!(
            chain.contains("reads the subgroup's clock"),
            "word {w}: {chain}"
        );
    }
}

/// SPV_KHR_integer_dot_product (SPIR-V 1.6 core; WGSL's `dot4I8Packed`/`dot4U8Packed` through
/// naga): "All components of the input vectors are sign-extended [zero-extended for OpUDot, and
/// for OpSUDot's Vector 2] to the bit width of the result's type … The resulting value will equal
/// the low-order N bits of the correct result R"; the packed 4×8-bit format has component 0 in
/// the low byte; the `…AccSat` forms add the accumulator with saturation, and "if any of the
/// multiplications or additions, with the exception of the final accumulation, overflow or
/// underflow, the result of the instruction is undefined". Values worked by hand; each lane
/// writes row k at `out[4k + lane]`.
#[test]
fn integer_dot_products_extend_sum_and_saturate_as_the_extension_defines() {
    let rows = [
        // (1, −2, 3, −4)·(5, 6, 7, 8) = −18
        "%r0 = OpSDot %int %A %B PackedVectorFormat4x8Bit",
        // 1·5 + 254·6 + 3·7 + 252·8 = 3566
        "%r1 = OpUDot %uint %A %B PackedVectorFormat4x8Bit",
        // (1 − 2 + 3 − 4)·255 = −510
        "%r2 = OpSUDot %int %A %F PackedVectorFormat4x8Bit",
        // −18 + INT_MIN saturates to INT_MIN
        "%r3 = OpSDotAccSat %int %A %B %imin PackedVectorFormat4x8Bit",
        // 3566 + 0xFFFFFFF0 saturates to 0xFFFFFFFF
        "%r4 = OpUDotAccSat %uint %A %B %ubig PackedVectorFormat4x8Bit",
        // 2^30 + 2^30 − 2^30 with saturation: undefined (two positive products overflow)
        "%r5 = OpSDotAccSat %int %V %ones %i0",
        // the same without: the low 32 bits, 2^30
        "%r6 = OpSDot %int %V %ones",
        // lane-varying: A · (i, i, i, i) unsigned = (1 + 254 + 3 + 252)·i = 510·i
        "%r7 = OpUDot %uint %A %ii PackedVectorFormat4x8Bit",
        // (1, undefined, 1)·(1, 1, 1): undefined (SPIR-V 2.2.2: the operand's component is)
        "%r8 = OpSDot %int %U %ones",
    ];
    let mut body =
        String::from("%ii = OpIMul %uint %i %rep\n%U = OpCompositeConstruct %v3i %i1 %un %i1\n");
    for (k, r) in rows.iter().enumerate() {
        body += &format!(
            "{r}\n%w{k} = OpBitcast %uint %r{k}\n%o{k} = OpIAdd %uint %i %c{k}\n\
             %p{k} = OpAccessChain %pu %out %u0 %o{k}\nOpStore %p{k} %w{k}\n"
        );
    }
    let mut types = String::from(
        "%int = OpTypeInt 32 1\n%v3i = OpTypeVector %int 3\n\
         %A = OpConstant %uint 0xFC03FE01\n%B = OpConstant %uint 0x08070605\n\
         %F = OpConstant %uint 0xFFFFFFFF\n%rep = OpConstant %uint 0x01010101\n\
         %imin = OpConstant %int -2147483648\n%ubig = OpConstant %uint 0xFFFFFFF0\n\
         %i0 = OpConstant %int 0\n%i1 = OpConstant %int 1\n%un = OpUndef %int\n\
         %q = OpConstant %int 0x40000000\n%nq = OpConstant %int -1073741824\n\
         %V = OpConstantComposite %v3i %q %q %nq\n%ones = OpConstantComposite %v3i %i1 %i1 %i1\n",
    );
    for k in 0..rows.len() {
        types += &format!("%c{k} = OpConstant %uint {}\n", 4 * k);
    }
    let caps = "OpCapability DotProduct\nOpCapability DotProductInput4x8BitPacked\n\
                OpCapability DotProductInputAll\nOpExtension \"SPV_KHR_integer_dot_product\"";
    // %F is the float block's type in the shared head: rename the constant there
    let text = module(
        caps,
        "",
        &types.replace("%F ", "%FF "),
        &body.replace("%A %F ", "%A %FF "),
    );
    let r = run(&asm(&text), vec![bytes_u32(&[0; 36]), bytes_f32(&[0.0; 4])]);
    let b = &r.buffers[at(&r, 0)];
    let w = u32s(&b.bytes);
    for lane in 0..4 {
        let row = |k: usize| w[4 * k + lane];
        assert_eq!(row(0), (-18i32) as u32);
        assert_eq!(row(1), 3566);
        assert_eq!(row(2), (-510i32) as u32);
        assert_eq!(row(3), 0x8000_0000);
        assert_eq!(row(4), 0xFFFF_FFFF);
        assert_eq!(row(6), 0x4000_0000);
        assert_eq!(row(7), 510 * lane as u32);
        for k in [0, 1, 2, 3, 4, 6, 7] {
            assert_eq!(
                r.status(b.word_taint(4 * k + lane)),
                WordStatus::Exact,
                "row {k}"
            );
        }
    }
    assert_undefined(&r, 0, 20..24);
    assert_undefined(&r, 0, 32..36);
    // Bad input: scalar operands without the packed format operand ("Packed Vector Format must
    // be specified to select how the integers are to be interpreted as vectors") are refused,
    // naming the rule.
    let e = refused(
        &types,
        &body.replace("%A %B PackedVectorFormat4x8Bit", "%A %B"),
    );
    assert!(
        e.contains("OpSDot") && e.contains("SPV_KHR_integer_dot_product"),
        "{e}"
    );
    match r.status(b.word_taint(20)) {
        WordStatus::Undefined(chain) => assert!(
            chain.contains("OpSDotAccSat") && chain.contains("SPV_KHR_integer_dot_product"),
            "{chain}"
        ),
        other => panic!("{other:?}"),
    }
}

/// SPIR-V, OpCompositeExtract: "Indexes walk the type hierarchy to the desired depth" — a matrix's
/// first index is its column, the second the row within it (GLSL 4.60 §5.6: `m[c][r]`); and
/// OpVectorShuffle: "Components are numbered consecutively, starting with Vector 1 and continuing
/// with Vector 2", 0xFFFFFFFF an undefined component, and a number past both vectors' components
/// is invalid. A 3×3 matrix of the values 1 … 9 read back element by element, and a shuffle of
/// (1, 2, 3, 4) and (5, 6, 7, 8) by (0, 5, 2, 7) = (1, 6, 3, 8). (The elements are read from a
/// matrix *value*, `(m * 1.0)[c][r]`, so glslang extracts them rather than chaining into `m`.)
#[test]
fn a_matrix_element_is_extracted_by_column_then_row_and_a_shuffle_numbers_both_vectors() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0) buffer B { float v[9]; float o[9]; vec4 s; };\n\
        void main() {\n\
          mat3 m = mat3(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);\n\
          mat3 n = m * 1.0;\n\
          o[0] = n[0][0]; o[1] = n[0][1]; o[2] = n[0][2]; o[3] = n[1][0]; o[4] = n[1][1];\n\
          o[5] = n[1][2]; o[6] = n[2][0]; o[7] = n[2][1]; o[8] = (m * 1.0)[2][2];\n\
          vec4 a = vec4(v[0], v[1], v[2], v[3]), b = vec4(v[4], v[5], v[6], v[7]);\n\
          s = vec4(a.x, b.y, a.z, b.w);\n\
        }\n";
    let mut input: Vec<f32> = (1..=9).map(|x| x as f32).collect();
    input.extend([0.0; 15]);
    let r = run(&glsl(src, "k.comp"), vec![bytes_f32(&input)]);
    let got = f32s(&r.buffers[at(&r, 0)].bytes);
    assert_eq!(got[9..18], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    // The shuffle in assembly, both vectors and an undefined component; then one past both.
    let types = "%v4 = OpTypeVector %uint 4\n%u5 = OpConstant %uint 5\n%u6 = OpConstant %uint 6\n\
                 %u7 = OpConstant %uint 7\n%u8 = OpConstant %uint 8\n";
    let body = "%a = OpCompositeConstruct %v4 %u1 %u2 %u3 %u4\n\
                %b = OpCompositeConstruct %v4 %u5 %u6 %u7 %u8\n\
                %s = OpVectorShuffle %v4 %a %b 0 5 2 7\n\
                %t = OpVectorShuffle %v4 %a %b 4 0xFFFFFFFF 3 1\n\
                %x = OpVectorExtractDynamic %uint %s %i\n\
                %y = OpVectorExtractDynamic %uint %t %i\n\
                %p = OpAccessChain %pu %out %u0 %i\n\
                OpStore %p %x\n\
                %j = OpIAdd %uint %i %u4\n\
                %q = OpAccessChain %pu %out %u0 %j\n\
                OpStore %q %y\n";
    let r = run(
        &asm(&module("", "", types, body)),
        vec![bytes_u32(&[0; 8]), bytes_f32(&[0.0; 4])],
    );
    let w = u32s(&r.buffers[at(&r, 0)].bytes);
    assert_eq!(
        [w[0], w[1], w[2], w[3], w[4], w[6], w[7]],
        [1, 6, 3, 8, 5, 4, 2]
    );
    assert_undefined(&r, 0, [5]);
    let e = refused(types, &body.replace("0 5 2 7", "0 5 2 8"));
    assert!(e.contains("OpVectorShuffle component 8"), "{e}");
}

/// `OpVectorTimesScalar` at every float width: each component times the scalar, one correctly
/// rounded IEEE 754 product (SPIR-V: "Scale a floating-point vector"; Vulkan's precision table:
/// OpFMul and the products it implies are correctly rounded), so exact — at 16 and 64 bits as at 32.
#[test]
fn a_vector_times_a_scalar_scales_each_component_at_16_32_and_64_bits() {
    let src = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 1) in;
layout(binding = 0) buffer B { double d0, d1, ds; float f0, f1, fs; float16_t h0, h1, hs; } b;
layout(binding = 1) buffer O { double d0, d1; float f0, f1; float16_t h0, h1; } o;
void main() {
    dvec2 d = dvec2(b.d0, b.d1) * b.ds;
    vec2 f = vec2(b.f0, b.f1) * b.fs;
    f16vec2 h = f16vec2(b.h0, b.h1) * b.hs;
    o.d0 = d.x; o.d1 = d.y; o.f0 = f.x; o.f1 = f.y; o.h0 = h.x; o.h1 = h.y;
}
";
    let mut inb = Vec::new();
    for v in [1.5f64, -0.1, 3.0] {
        inb.extend(v.to_le_bytes());
    }
    for v in [2.5f32, -0.1, 3.0] {
        inb.extend(v.to_le_bytes());
    }
    for v in [0.5f32, -1.25, 3.0] {
        inb.extend(half::f16::from_f32(v).to_bits().to_le_bytes());
    }
    inb.resize(64, 0);
    let r = run(&glsl(src, "k.comp"), vec![inb, vec![0; 64]]);
    let o = &r.buffers[at(&r, 1)];
    let bytes = &o.bytes;
    let f64_at = |b: usize| f64::from_le_bytes(bytes[b..b + 8].try_into().unwrap());
    let f32_at = |b: usize| f32::from_le_bytes(bytes[b..b + 4].try_into().unwrap());
    let f16_at = |b: usize| half::f16::from_le_bytes(bytes[b..b + 2].try_into().unwrap());
    assert_eq!((f64_at(0), f64_at(8)), (4.5, -0.1f64 * 3.0));
    assert_eq!((f32_at(16), f32_at(20)), (7.5, -0.1f32 * 3.0));
    assert_eq!(
        (f16_at(24), f16_at(26)),
        (half::f16::from_f32(1.5), half::f16::from_f32(-3.75))
    );
    for w in 0..7 {
        assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "word {w}");
    }
}

/// A switch on an undefined value (a local read before it is written: SPIR-V, OpVariable without
/// an initializer holds an undefined value) does not pin down which case runs; what the cases
/// write differs, so it is undefined, with the branch named.
#[test]
fn a_switch_on_an_undefined_value_pins_down_nothing_its_cases_write_differently() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer B { uint b[]; };
void main() {
    uint never_written;
    uint i = gl_LocalInvocationID.x;
    switch (never_written) {
    case 0u: b[i] = 1u; break;
    case 7u: b[i] = 3u; break;
    default: b[i] = 2u; break;
    }
    b[4u + i] = 5u;
}
";
    let r = run(&glsl(src, "k.comp"), vec![vec![0; 32]]);
    assert_undefined(&r, 0, 0..4);
    let b = &r.buffers[at(&r, 0)];
    for w in 4..8 {
        assert_eq!(r.status(b.word_taint(w)), WordStatus::Exact, "word {w}");
    }
    let texts: Vec<String> = r.findings.iter().map(|f| r.finding_text(f)).collect();
    assert!(
        texts.iter().any(|t| t.contains("on an undefined value")),
        "{texts:?}"
    );
}

/// GLSL.std.450 Ldexp: "x · 2^exp … If this product is too large to be represented in the
/// floating-point type, the resulting value is undefined. If exp is greater than +128 (single
/// precision) or +1024 (double precision), the resulting value is undefined. If exp is less than
/// -126 (single precision) or -1022 (double precision), the value returned may be flushed to
/// zero." Run-time operands (glslang folds nothing): 1.5 · 2^3 = 12 and 1 · 2^-3 = 0.125, exact;
/// 1 · 2^129 and 2^100 · 2^100 (past the largest float) undefined; in doubles 1 · 2^1000 exact and
/// 1 · 2^1025 undefined; 2^120 · 2^-127 (a normal float, but exp < -126: may be 0) undefined.
#[test]
fn ldexp_is_undefined_past_its_exponent_limit_or_its_type_s_range() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer I { float x[4]; int e[4]; double dx; int de[2]; float y; int ye; } i;
layout(binding = 1) buffer O { float o[4]; double d[2]; float p; } o;
void main() {
    for (int k = 0; k < 4; k++) { o.o[k] = ldexp(i.x[k], i.e[k]); }
    o.d[0] = ldexp(i.dx, i.de[0]);
    o.d[1] = ldexp(i.dx, i.de[1]);
    o.p = ldexp(i.y, i.ye);
}
";
    let mut inb = Vec::new();
    for v in [1.5f32, 1.0, 1.0, 2f32.powi(100)] {
        inb.extend(v.to_le_bytes());
    }
    for e in [3i32, -3, 129, 100] {
        inb.extend(e.to_le_bytes());
    }
    inb.extend(1.0f64.to_le_bytes());
    for e in [1000i32, 1025] {
        inb.extend(e.to_le_bytes());
    }
    inb.extend(2f32.powi(120).to_le_bytes());
    inb.extend((-127i32).to_le_bytes());
    let r = run(&glsl(src, "k.comp"), vec![inb, vec![0; 36]]);
    let o = &r.buffers[at(&r, 1)];
    let f = |k: usize| f32::from_le_bytes(o.bytes[4 * k..4 * k + 4].try_into().unwrap());
    assert_eq!((f(0), f(1)), (12.0, 0.125));
    for w in [0, 1, 4, 5] {
        assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "word {w}");
    }
    assert_eq!(
        f64::from_le_bytes(o.bytes[16..24].try_into().unwrap()),
        2f64.powi(1000)
    );
    for w in [2, 3, 6, 7, 8] {
        match r.status(o.word_taint(w)) {
            WordStatus::Undefined(why) => assert!(why.contains("ldexp"), "word {w}: {why}"),
            other => panic!("word {w}: {other:?}"),
        }
    }
}

/// GLSL 4.60 §8.3, clamp: "min(max(x, minVal), maxVal) … Results are undefined if minVal >
/// maxVal" — equal bounds are no exception: `clamp(x, 3, 3)` is 3, defined, for signed and
/// unsigned integers and floats alike; `clamp(x, 4, 3)` is undefined.
#[test]
fn a_clamp_with_equal_bounds_is_defined_and_with_crossed_bounds_is_not() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer I { int v; int lo; int hi; } i;
layout(binding = 1) buffer O { int s; uint u; float f; int crossed; } o;
void main() {
    o.s = clamp(i.v, i.lo, i.lo);
    o.u = clamp(uint(i.v), uint(i.lo), uint(i.lo));
    o.f = clamp(float(i.v), float(i.lo), float(i.lo));
    o.crossed = clamp(i.v, i.hi, i.lo);
}
";
    let r = run(
        &glsl(src, "k.comp"),
        vec![bytes_u32(&[9, 3, 4]), vec![0; 16]],
    );
    let o = &r.buffers[at(&r, 1)];
    assert_eq!(u32s(&o.bytes)[..2], [3, 3]);
    assert_eq!(f32::from_bits(u32s(&o.bytes)[2]), 3.0);
    for w in 0..3 {
        assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "word {w}");
    }
    assert_undefined(&r, 1, [3]);
}

/// An operand that decides a result absorbs the other's undefined value component by component:
/// `uvec2(u, 7) & uvec2(0, 0xff)` is (0, 7) — `0 & x` is 0 for every x (SPIR-V OpBitwiseAnd) —
/// and `uvec2(7, u) & uvec2(0xff, 0xff)` is (7, undefined); `uvec2(7, u) & uvec2(0xff, 0)` is
/// (7, 0) — the second component decided by its own zero; `uvec2(0, u) & uvec2(u, 0xff)` and
/// `uvec2(u, u) & uvec2(0, 0xff)` are (0, undefined): a zero in the first component decides
/// nothing in the second.
#[test]
fn an_absorbing_operand_decides_each_component_of_a_vector_on_its_own() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer O { uvec2 o[]; };
void main() {
    uint u;
    uint l = gl_LocalInvocationID.x;
    o[l] = uvec2(u, 7u) & uvec2(0u, 0xffu);
    o[4u + l] = uvec2(7u, u) & uvec2(0xffu, 0xffu);
    o[8u + l] = uvec2(7u, u) & uvec2(0xffu, 0u);
    o[12u + l] = uvec2(0u, u) & uvec2(u, 0xffu);
    o[16u + l] = uvec2(u, u) & uvec2(0u, 0xffu);
}
";
    let r = run(&glsl(src, "k.comp"), vec![vec![0; 160]]);
    let o = &r.buffers[at(&r, 0)];
    for w in (0..8).chain((8..40).step_by(2)).chain(16..24) {
        assert_eq!(r.status(o.word_taint(w)), WordStatus::Exact, "word {w}");
    }
    let words = u32s(&o.bytes);
    assert_eq!(words[..10], [0, 7, 0, 7, 0, 7, 0, 7, 7, 0]);
    assert_eq!(words[16..24], [7, 0, 7, 0, 7, 0, 7, 0]);
    for w in (24..40).step_by(2) {
        assert_eq!(words[w], 0, "word {w}");
    }
    assert_undefined(&r, 0, (0..4).map(|l| 8 + 2 * l + 1));
    assert_undefined(&r, 0, (12..20).map(|e| 2 * e + 1));
}

/// A reduction reads every active lane of its own subgroup (GL_KHR_shader_subgroup,
/// subgroupAdd): one undefined lane in the second subgroup makes that subgroup's sum undefined and
/// leaves the first subgroup's defined.
#[test]
fn an_undefined_lane_makes_only_its_own_subgroup_s_reduction_undefined() {
    let src = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 8) in;
layout(binding = 0) buffer O { uint o[]; };
void main() {
    uint l = gl_LocalInvocationID.x;
    uint u;
    uint v = l == 5u ? u : l;
    o[l] = subgroupAdd(v);
}
";
    let r = run(&glsl(src, "k.comp"), vec![vec![0; 32]]);
    let o = &r.buffers[at(&r, 0)];
    for l in 0..4 {
        assert_eq!(r.status(o.word_taint(l)), WordStatus::Exact, "lane {l}");
        assert_eq!(u32s(&o.bytes)[l], 6);
    }
    assert_undefined(&r, 0, 4..8);
}

/// Vulkan, "Precision and Operation of SPIR-V Instructions": without `DenormPreserve` a device
/// may flush a denormalized result to zero — per component: `vec2(1, 2⁻⁷⁰) · vec2(3, 2⁻⁷⁰)` is
/// (3, 2⁻¹⁴⁰), the second component denormalized (inexact), the first exact.
#[test]
fn a_denormal_result_in_one_component_leaves_the_others_exact() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer I { vec2 a[]; };
layout(binding = 1) buffer O { vec2 o[]; };
void main() {
    uint l = gl_LocalInvocationID.x;
    o[l] = a[l] * a[l + 4u];
}
";
    let tiny = 2f32.powi(-70);
    let mut input = Vec::new();
    for _ in 0..4 {
        input.extend([1.0, tiny]);
    }
    for _ in 0..4 {
        input.extend([3.0, tiny]);
    }
    let r = run(&glsl(src, "k.comp"), vec![bytes_f32(&input), vec![0; 32]]);
    let o = &r.buffers[at(&r, 1)];
    let got = f32s(&o.bytes);
    let product = tiny * tiny;
    assert!(product.is_subnormal());
    for l in 0..4 {
        assert_eq!((got[2 * l], got[2 * l + 1]), (3.0, product), "lane {l}");
        assert_eq!(
            r.status(o.word_taint(2 * l)),
            WordStatus::Exact,
            "lane {l}: x"
        );
        assert_eq!(
            r.status(o.word_taint(2 * l + 1)),
            WordStatus::Inexact,
            "lane {l}: y"
        );
    }
}

/// GLSL.std.450 Ldexp: "If this product is too large to be finitely represented in the
/// floating-point type, the resulting value is undefined" — the largest finite float itself is
/// represented: `ldexp(1 − 2⁻²⁴, 128)` is `f32::MAX`, defined and exact.
#[test]
fn ldexp_reaching_the_largest_float_exactly_is_defined() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0) buffer I { float x; int e; } i;
layout(binding = 1) buffer O { float o; } o;
void main() { o.o = ldexp(i.x, i.e); }
";
    let mut inb = Vec::new();
    inb.extend((1.0f32 - 2f32.powi(-24)).to_le_bytes());
    inb.extend(128i32.to_le_bytes());
    let r = run(&glsl(src, "k.comp"), vec![inb, vec![0; 4]]);
    let o = &r.buffers[at(&r, 1)];
    assert_eq!(f32s(&o.bytes), [f32::MAX]);
    assert_eq!(r.status(o.word_taint(0)), WordStatus::Exact);
}
