//! Storage images and texel buffers on the model (issue 20): each rule of Vulkan's "Image
//! Operations" chapter on a minimal kernel written here, through `lockstep run`'s job (images given
//! as host arrays `[H, W, C]`) and through AmberScript's `IMAGE`. Expected values come from the
//! rules: texel coordinate validation, texel replacement, texel output validation, the fixed-point
//! conversions, and the memory model (an image is memory every invocation reaches).
#![cfg(feature = "vulkan")]
use crate::support;
use lockstep::amber::{engines::ModelBackend, parse, run_script, Status};
use lockstep::kernel::run::{JobBuffer, KernelJob, Report, Tolerance};
use lockstep::kernel::{compile, HostBuffer, SourceLang, SourceOptions};
use lockstep::model::{ScalarType, SubgroupSize};

struct Out {
    bytes: Vec<Vec<u8>>,
    report: Report,
}

fn run(src: &str, buffers: Vec<HostBuffer>, workgroups: [u32; 3]) -> Out {
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    for (i, b) in buffers.into_iter().enumerate() {
        job.buffers.push(JobBuffer::new(0, i as u32, b));
    }
    job.workgroups = workgroups;
    let model = job.run_model(SubgroupSize::new(8).unwrap(), None).unwrap();
    let report = job.compare(&model, None, Tolerance::default());
    let mut outs: Vec<_> = model.run.buffers.iter().collect();
    outs.sort_by_key(|b| b.binding);
    Out {
        bytes: outs.iter().map(|b| b.bytes.clone()).collect(),
        report,
    }
}

/// Runs `job` on the model and on the device at the device's subgroup size: the device's buffers
/// and the comparison of the two.
fn on_device(ctx: &lockstep::vulkan::Context, job: &KernelJob) -> (Vec<Vec<u8>>, Report) {
    let size = ctx.caps.subgroup_size;
    let model = job
        .run_model(SubgroupSize::new(size as u64).unwrap(), None)
        .unwrap();
    let (device, _) = job.run_device(ctx, &model.kernel, size).unwrap();
    let r = job.compare(&model, Some(&device), Tolerance::default());
    (device, r)
}

fn zeros(t: ScalarType, shape: &[usize]) -> HostBuffer {
    let n: usize = shape.iter().product();
    let es = if t == ScalarType::U8 { 1 } else { 4 };
    HostBuffer::new(t, shape.to_vec(), vec![0; n * es]).unwrap()
}

fn series_u8(shape: &[usize]) -> HostBuffer {
    let n: usize = shape.iter().product();
    HostBuffer::new(
        ScalarType::U8,
        shape.to_vec(),
        (0..n).map(|i| i as u8).collect(),
    )
    .unwrap()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn findings(r: &Report) -> String {
    r.findings
        .iter()
        .map(|f| format!("[{}] {} ← {}", f.kind.name(), f.items.join(", "), f.why))
        .collect::<Vec<_>>()
        .join("\n")
}

// Vulkan, "Image Operations" > "Texel Input Validation Operations" > "Integer Texel Coordinate
// Validation": a coordinate outside the image makes an invalid texel; "Texel Replacement": without
// robustImageAccess its value is undefined. The texel inside is read exactly (UNORM 8 → c/255).
#[test]
fn an_image_read_outside_the_image_is_undefined_by_texel_replacement() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, rgba8) uniform readonly image2D src;\n\
        layout(binding = 1) buffer O { vec4 inside; vec4 outside; };\n\
        void main() { inside = imageLoad(src, ivec2(1, 1)); outside = imageLoad(src, ivec2(2, 0)); }\n";
    let out = run(
        src,
        vec![series_u8(&[2, 2, 4]), zeros(ScalarType::F32, &[8])],
        [1, 1, 1],
    );
    let o: Vec<f32> = u32s(&out.bytes[1])
        .iter()
        .map(|&b| f32::from_bits(b))
        .collect();
    // texel (1, 1) is bytes 12..16: 12, 13, 14, 15 → /255
    for (k, want) in [12.0f32, 13.0, 14.0, 15.0].iter().enumerate() {
        assert!((o[k] - want / 255.0).abs() < 1e-7, "{o:?}");
    }
    let text = findings(&out.report);
    assert!(
        text.contains("[undefined] O.outside[0], O.outside[1], O.outside[2], O.outside[3]")
            && text.contains("texel (2, 0) is outside the 2x2x1 image src")
            && text.contains("Texel Replacement"),
        "{text}"
    );
}

// An image read at an undefined coordinate reads an unknown texel (Vulkan, "Image Operations":
// the texel is chosen by the coordinate): undefined — in the lane whose coordinate is undefined
// only; the other lanes of the subgroup read their texels exactly. The same store moved one
// element on writes past the end in lane 7: that finding names the store's source line.
#[test]
fn an_image_read_at_an_undefined_coordinate_is_undefined_in_that_lane_only() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\n\
        layout(binding = 0, rgba8) uniform readonly image2D src;\n\
        layout(binding = 1) buffer O { float o[]; };\n\
        void main() { uint i = gl_LocalInvocationIndex; int c; if (i != 5u) { c = int(i % 2u); }\n\
        o[i] = imageLoad(src, ivec2(c, 1)).x; }\n";
    let out = run(
        src,
        vec![series_u8(&[2, 2, 4]), zeros(ScalarType::F32, &[8])],
        [1, 1, 1],
    );
    let o = u32s(&out.bytes[1]);
    // texel (c, 1) starts at byte 8 + 4c: 8 or 12, / 255
    for (i, &bits) in o.iter().enumerate() {
        if i != 5 {
            let want = (8 + 4 * (i % 2)) as f32 / 255.0;
            assert!((f32::from_bits(bits) - want).abs() < 1e-7, "o[{i}]: {o:?}");
        }
    }
    let text = findings(&out.report);
    assert!(
        text.contains("[undefined] o[5] ←") && text.contains("variable c (in main), never written"),
        "{text}"
    );
    assert!(!text.contains("o[4]") && !text.contains("o[6]"), "{text}");
    // the same store one element on, past the end in lane 7: the finding names its source line
    let out = run(
        &src.replace("o[i] = imageLoad", "o[i + 1u] = imageLoad"),
        vec![series_u8(&[2, 2, 4]), zeros(ScalarType::F32, &[8])],
        [1, 1, 1],
    );
    let f = out
        .report
        .findings
        .iter()
        .find(|f| f.kind.name() == "out_of_bounds");
    assert_eq!(
        f.map(|f| f.line),
        Some(Some(6)),
        "{}",
        findings(&out.report)
    );
}

// A texel written with an undefined value holds an undefined value — in the texel that lane
// wrote only (SPIR-V OpImageWrite writes each invocation's Texel; the others are defined).
#[test]
fn a_texel_written_with_an_undefined_value_is_undefined_in_that_texel_only() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) uniform writeonly uimage1D img;\n\
        void main() { int i = int(gl_LocalInvocationID.x); uint v; if (i != 2) { v = uint(i) + 5u; }\n\
        imageStore(img, i, uvec4(v)); }\n";
    let out = run(src, vec![zeros(ScalarType::U32, &[4])], [1, 1, 1]);
    let text = findings(&out.report);
    assert_eq!(u32s(&out.bytes[0])[..2], [5, 6], "{text}");
    assert_eq!(u32s(&out.bytes[0])[3], 8, "{text}");
    let b = &out.report.buffers[0];
    assert_eq!((b.exact, b.undefined), (3, 1), "{text}");
    assert!(text.contains("[undefined] img(2)"), "{text}");
}

// The same per component: SPIR-V OpImageWrite writes each component of Texel the format stores
// (RGBA32UI: four); an undefined component makes that component of the texel undefined, not its
// neighbours (lane 2 writes (7, 8, undefined, 10); the other lanes (i, i+1, i+2, i+3) + 1).
#[test]
fn a_texel_component_written_with_an_undefined_value_is_undefined_in_that_component_only() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, rgba32ui) uniform writeonly uimage1D img;\n\
        void main() { int i = int(gl_LocalInvocationID.x); uvec4 v = uvec4(i + 1, i + 2, i + 3, i + 4);\n\
        if (i == 2) { uint u; v = uvec4(7u, 8u, u, 10u); }\n\
        imageStore(img, i, v); }\n";
    let out = run(src, vec![zeros(ScalarType::U32, &[4, 4])], [1, 1, 1]);
    let text = findings(&out.report);
    let got = u32s(&out.bytes[0]);
    for i in [0usize, 1, 3] {
        let want: Vec<u32> = (1..5).map(|k| i as u32 + k).collect();
        assert_eq!(got[4 * i..4 * i + 4], want[..], "texel {i}: {text}");
    }
    assert_eq!([got[8], got[9], got[11]], [7, 8, 10], "{text}");
    let b = &out.report.buffers[0];
    assert_eq!((b.exact, b.undefined), (15, 1), "{text}");
    assert!(text.contains("[undefined] img(2).b"), "{text}");
}

// An image write at an undefined coordinate: which texel it writes is not pinned down, so every
// texel it may have reached — the whole image — is undefined afterwards (as a store through an
// undefined pointer); another image is untouched.
#[test]
fn an_image_write_at_an_undefined_coordinate_leaves_the_whole_image_undefined() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) uniform writeonly uimage1D img;\n\
        layout(binding = 1, r32ui) uniform writeonly uimage1D other;\n\
        void main() { int i = int(gl_LocalInvocationID.x); int at; if (i != 0) { at = i; }\n\
        imageStore(img, at, uvec4(i == 0 ? 9u : 1u)); imageStore(other, i, uvec4(2u)); }\n";
    let out = run(
        src,
        vec![zeros(ScalarType::U32, &[4]), zeros(ScalarType::U32, &[4])],
        [1, 1, 1],
    );
    let text = findings(&out.report);
    let (img, other) = (&out.report.buffers[0], &out.report.buffers[1]);
    assert_eq!(img.exact, 0, "{text}");
    assert_eq!(img.undefined + img.racy, 4, "{text}");
    assert_eq!((other.exact, other.undefined), (4, 0), "{text}");
    assert_eq!(u32s(&out.bytes[1]), [2, 2, 2, 2]);
}

// SPIR-V OpImageWrite with fewer Texel components than the image's format stores (Vulkan,
// "Texel Output Format Conversion": components the shader does not provide are undefined): a
// `vec2` written to an RGBA32F texel leaves its blue and alpha undefined, red and green written.
#[test]
fn an_image_write_of_fewer_components_than_the_format_stores_leaves_the_rest_undefined() {
    let asm = "; SPIR-V
OpCapability Shader
OpCapability Image1D
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %lid
OpExecutionMode %main LocalSize 2 1 1
OpName %img \"img\"
OpDecorate %lid BuiltIn LocalInvocationId
OpDecorate %img DescriptorSet 0
OpDecorate %img Binding 0
OpDecorate %img NonReadable
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%float = OpTypeFloat 32
%v2 = OpTypeVector %float 2
%v3u = OpTypeVector %uint 3
%pin = OpTypePointer Input %v3u
%lid = OpVariable %pin Input
%it = OpTypeImage %float 1D 0 0 0 2 Rgba32f
%pi = OpTypePointer UniformConstant %it
%img = OpVariable %pi UniformConstant
%f1 = OpConstant %float 1.5
%f2 = OpConstant %float 2.5
%texel = OpConstantComposite %v2 %f1 %f2
%main = OpFunction %void None %fn
%l = OpLabel
%id3 = OpLoad %v3u %lid
%id = OpCompositeExtract %uint %id3 0
%x = OpBitcast %int %id
%im = OpLoad %it %img
OpImageWrite %im %x %texel
OpReturn
OpFunctionEnd
";
    let module = compile(asm, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, zeros(ScalarType::F32, &[2, 4])));
    let model = job.run_model(SubgroupSize::new(2).unwrap(), None).unwrap();
    let report = job.compare(&model, None, Tolerance::default());
    let text = findings(&report);
    let b = &report.buffers[0];
    assert_eq!((b.exact, b.undefined), (4, 4), "{text}");
    assert!(
        text.contains("OpImageWrite gives 2 components, the format R32G32B32A32_SFLOAT stores 4"),
        "{text}"
    );
    let got: Vec<f32> = model.run.buffers[0]
        .bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!([got[0], got[1], got[4], got[5]], [1.5, 2.5, 1.5, 2.5]);
}

// Vulkan, "Texel Output Validation Operations": "If the texel fails integer texel coordinate
// validation, then the write has no effect." — defined: the image keeps what it held.
#[test]
fn an_image_write_outside_the_image_has_no_effect() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) uniform uimage2D img;\n\
        void main() { int i = int(gl_LocalInvocationID.x); imageStore(img, ivec2(i, 0), uvec4(7u)); imageStore(img, ivec2(i + 100, -1), uvec4(9u)); }\n";
    let out = run(src, vec![zeros(ScalarType::U32, &[2, 4])], [1, 1, 1]);
    assert_eq!(u32s(&out.bytes[0]), [7, 7, 7, 7, 0, 0, 0, 0]);
    assert!(out.report.findings.is_empty(), "{}", findings(&out.report));
}

// Vulkan, "Fixed-Point Data Conversion": a float written to a UNORM component is clamped to
// [0, 1] and becomes one of the two nearest integers of f·(2^b − 1): the model rounds to nearest
// and marks it inexact (a device may store the other), exact where f·255 is an integer.
#[test]
fn a_float_written_to_a_unorm_texel_is_clamped_and_inexact_between_two_integers() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, rgba8) uniform writeonly image2D img;\n\
        void main() { imageStore(img, ivec2(0, 0), vec4(2.0, -1.0, 0.5, 1.0)); }\n";
    let out = run(src, vec![zeros(ScalarType::U8, &[1, 1, 4])], [1, 1, 1]);
    assert_eq!(out.bytes[0], [255, 0, 128, 255]);
    let b = &out.report.buffers[0];
    assert_eq!((b.exact, b.inexact), (3, 1), "{b:?}");
}

// Vulkan, "Texel Input Operations" > "Format Conversion" and "Conversion from Normalized
// Fixed-Point to Floating-Point": a UNORM component c of b bits reads as c / (2^b − 1), a division
// whose float result a device may round either way (texel.rs: the precision rules' latitude)
// unless it is exact — 0 and 2^b − 1 give 0.0 and 1.0. So a nearest sample (one texel, no
// weighting) of texel (0, 128, 255, 51) is compared within the float bound, and of texel
// (0, 0, 255, 255) bit for bit.
#[test]
fn a_unorm_texel_sampled_nearest_is_inexact_where_its_conversion_rounds() {
    use lockstep::spirv::{
        decode, image, run_model, BufferInput, DecodeOptions, RunConfig, WordStatus,
    };
    let src = "#version 450\nlayout(local_size_x = 2) in;\n\
        layout(binding = 0) uniform sampler2D t;\n\
        layout(binding = 1) buffer O { vec4 o[]; };\n\
        void main() { uint i = gl_LocalInvocationIndex;\n\
        o[i] = textureLod(t, vec2(0.25 + 0.5 * float(i), 0.5), 0.0); }\n";
    let k = decode(
        &crate::spirv_support::glsl(src, "k.comp"),
        &DecodeOptions::default(),
    )
    .unwrap();
    let inputs = [
        BufferInput {
            binding: 0,
            bytes: vec![0, 128, 255, 51, 0, 0, 255, 255],
            image: Some(image::Extent::new(2, 1, 1)),
            format: image::TexelFormat::of_vk("R8G8B8A8_UNORM"),
            sampler: Some(lockstep::words::sampler::Sampler::default()),
            ..Default::default()
        },
        BufferInput {
            binding: 1,
            bytes: vec![0; 32],
            ..Default::default()
        },
    ];
    let cfg = RunConfig::new(SubgroupSize::new(8).unwrap(), [1, 1, 1]);
    let r = run_model(&k, cfg, &inputs, None).unwrap();
    let o = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let got: Vec<f32> = u32s(&o.bytes).into_iter().map(f32::from_bits).collect();
    assert_eq!(
        got,
        [0.0, 128.0 / 255.0, 1.0, 51.0 / 255.0, 0.0, 0.0, 1.0, 1.0]
    );
    let statuses: Vec<WordStatus> = (0..8).map(|w| r.status(o.word_taint(w))).collect();
    assert_eq!(statuses[..4], vec![WordStatus::Inexact; 4], "texel 0");
    assert_eq!(statuses[4..], vec![WordStatus::Exact; 4], "texel 1");
}

// Vulkan, Appendix B "Memory Model": an image is memory; two writes of one texel by different
// invocations without a happens-before between them are a data race, found as on a buffer.
#[test]
fn two_unordered_writes_of_one_texel_race_as_on_a_buffer() {
    let src = "#version 450\nlayout(local_size_x = 2) in;\n\
        layout(binding = 0, r32ui) uniform uimage1D img;\n\
        void main() { imageStore(img, 0, uvec4(gl_LocalInvocationID.x + 1u)); }\n";
    let out = run(src, vec![zeros(ScalarType::U32, &[4])], [1, 1, 1]);
    let text = findings(&out.report);
    assert!(text.contains("[race]") && text.contains("img(0)"), "{text}");
    assert_eq!(out.report.buffers[0].racy, 1, "{text}");
}

// SPIR-V, "Memory Semantics": ImageMemory applies the ordering constraints to image contents,
// UniformMemory to StorageBuffer, PhysicalStorageBuffer and Uniform memory; "Image Operands":
// MakeTexelAvailable / MakeTexelVisible / NonPrivateTexel (what a `workgroupcoherent` image's
// accesses carry under the Vulkan memory model) and VolatileTexel (a `volatile` image's). An
// image store ordered before another invocation's load by a workgroup barrier with image
// semantics is what the load reads; the same barrier with buffer semantics only orders no image
// access: a data race, whose advice names the image barrier.
#[test]
fn an_image_store_is_ordered_only_by_a_barrier_with_image_semantics() {
    let src = "#version 450\n#pragma use_vulkan_memory_model\n\
        #extension GL_KHR_memory_scope_semantics : require\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) uniform workgroupcoherent uimage2D img;\n\
        layout(binding = 1, r32ui) uniform volatile uimage2D vol;\n\
        layout(binding = 2) buffer O { uint o[]; };\n\
        void main() { int i = int(gl_LocalInvocationID.x);\n\
        imageStore(img, ivec2(i, 0), uvec4(uint(i) + 10u));\n\
        controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsImage, gl_SemanticsAcquireRelease);\n\
        o[i] = imageLoad(img, ivec2((i + 1) % 4, 0)).x;\n\
        o[i + 4] = imageLoad(vol, ivec2(i, 0)).x; }\n";
    let series = HostBuffer::new(
        ScalarType::U32,
        vec![1, 4],
        [7u32, 8, 9, 6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    )
    .unwrap();
    let bufs = || {
        vec![
            zeros(ScalarType::U32, &[1, 4]),
            series.clone(),
            zeros(ScalarType::U32, &[8]),
        ]
    };
    let out = run(src, bufs(), [1, 1, 1]);
    let text = findings(&out.report);
    assert_eq!(u32s(&out.bytes[2]), [11, 12, 13, 10, 7, 8, 9, 6], "{text}");
    assert_eq!(out.report.buffers[2].exact, 8, "{text}");
    // buffer semantics only: the image accesses race
    let out = run(
        &src.replace("gl_StorageSemanticsImage", "gl_StorageSemanticsBuffer"),
        bufs(),
        [1, 1, 1],
    );
    let text = findings(&out.report);
    assert!(
        text.contains("[race] img(") && text.contains("add memoryBarrierImage()"),
        "{text}"
    );
    assert_eq!(out.report.buffers[2].racy, 4, "{text}");
}

// SPIR-V, OpImageQuerySize: "the dimensions of the image" — width and height of the bound image;
// OpImageQuerySamples: its sample count. OpImageTexelPointer + OpAtomicIAdd: an atomic on a texel.
#[test]
fn size_and_sample_queries_give_the_bound_extent_and_texel_atomics_add() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\n\
        layout(binding = 0, r32ui) uniform uimage2DMS ms;\n\
        layout(binding = 1) buffer O { ivec2 size; int samples; uint pad; };\n\
        void main() { imageAtomicAdd(ms, ivec2(2, 1), 3, 1u); if (gl_LocalInvocationID.x == 0u) { size = imageSize(ms); samples = imageSamples(ms); } }\n";
    // [H, W, S] = 2 × 3 texels of 4 samples
    let out = run(
        src,
        vec![
            zeros(ScalarType::U32, &[2, 3, 4]),
            zeros(ScalarType::I32, &[4]),
        ],
        [1, 1, 1],
    );
    assert_eq!(&u32s(&out.bytes[1])[..3], [3, 2, 4]);
    let img = u32s(&out.bytes[0]);
    // texel (2, 1) sample 3: ((1·3 + 2)·4 + 3) = 23
    assert_eq!(img[23], 8);
    assert_eq!(img.iter().sum::<u32>(), 8);
}

// A host array that does not match the image's type is refused with the layout it takes.
#[test]
fn an_image_given_as_an_array_of_the_wrong_shape_is_refused_naming_the_layout() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, rgba8) uniform image2D img;\n\
        void main() { imageStore(img, ivec2(0), vec4(0)); }\n";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, zeros(ScalarType::U8, &[16])));
    let e = job
        .run_model(SubgroupSize::new(8).unwrap(), None)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("[height, width, components]"), "{e}");
}

fn amber(text: &str) -> Vec<(Status, Option<String>)> {
    let script = parse(text).unwrap();
    let mut model = ModelBackend::new(None, Some(SubgroupSize::new(8).unwrap()));
    let r = run_script(&script, &mut model);
    assert!(r.error.is_none() && r.reason.is_none(), "{r:?}");
    r.expects
        .iter()
        .map(|v| (v.status, v.why.clone()))
        .collect()
}

// AmberScript "Images" and "Expectations": an IMAGE bound AS storage_image, probed with
// EQ_RGBA (0 to 255 per component); a probe names the texel that differs.
#[test]
fn an_amber_image_is_written_by_the_shader_and_probed_texel_by_texel() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 4, local_size_y = 4) in;\n\
        layout(set = 0, binding = 0, rgba8) uniform writeonly image2D img;\n\
        void main() { ivec2 p = ivec2(gl_GlobalInvocationID.xy); imageStore(img, p, p == ivec2(3, 2) ? vec4(1, 0, 0, 1) : vec4(0, 1, 0, 1)); }\nEND\n\
        IMAGE img FORMAT R8G8B8A8_UNORM DIM_2D WIDTH 4 HEIGHT 4 FILL 0\n\
        PIPELINE compute p\n  ATTACH k\n  BIND BUFFER img AS storage_image DESCRIPTOR_SET 0 BINDING 0\nEND\n\
        RUN p 1 1 1\n\
        EXPECT img IDX 0 0 SIZE 4 2 EQ_RGBA 0 255 0 255\n\
        EXPECT img IDX 0 0 SIZE 4 4 EQ_RGBA 0 255 0 255\n\
        EXPECT img IDX 3 2 SIZE 1 1 EQ_RGB 255 0 0\n";
    let v = amber(text);
    assert_eq!(v[0].0, Status::Pass, "{v:?}");
    assert_eq!(v[1].0, Status::Fail, "{v:?}");
    let why = v[1].1.as_deref().unwrap_or("");
    assert!(why.contains("img(3, 2).r = 255, expected 0"), "{why}");
    assert_eq!(v[2].0, Status::Pass, "{v:?}");
}

// Vulkan, "Image Layouts": a new image's contents are undefined; Amber cannot fill a
// multisampled image, so what the shader reads of one before writing it is undefined.
#[test]
fn a_multisampled_amber_image_holds_nothing_defined_until_written() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 1) in;\n\
        layout(set = 0, binding = 0, r32ui) uniform uimage2DMS ms;\n\
        layout(set = 0, binding = 1) buffer O { uint o[2]; };\n\
        void main() { imageStore(ms, ivec2(0), 1, uvec4(5u)); o[0] = imageLoad(ms, ivec2(0), 1).r; o[1] = imageLoad(ms, ivec2(0), 0).r; }\nEND\n\
        IMAGE ms FORMAT R32_UINT DIM_2D WIDTH 1 HEIGHT 1 SAMPLES 2\n\
        BUFFER o DATA_TYPE uint32 SIZE 2 FILL 0\n\
        PIPELINE compute p\n  ATTACH k\n  BIND BUFFER ms AS storage_image DESCRIPTOR_SET 0 BINDING 0\n  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1\nEND\n\
        RUN p 1 1 1\n\
        EXPECT o IDX 0 EQ 5\n\
        EXPECT o IDX 4 EQ 0\n";
    let v = amber(text);
    assert_eq!(v[0].0, Status::Pass, "{v:?}");
    assert_eq!(v[1].0, Status::Undefined, "{v:?}");
    assert!(
        v[1].1
            .as_deref()
            .unwrap_or("")
            .contains("multisampled image"),
        "{v:?}"
    );
}

// The same kernels on the device (lavapipe where CI runs): storage images of three formats, a
// texel read outside the image (undefined: reported with what the device returned, not compared),
// writes outside (no effect), an image atomic and a size query — every defined element equal to
// the model's, UNORM writes within the one-integer latitude of Fixed-Point Data Conversion.
#[test]
fn storage_images_on_the_device_agree_with_every_value_the_model_defines() {
    let Some(ctx) = support::device() else {
        return;
    };
    let src = "#version 450\nlayout(local_size_x = 4, local_size_y = 4) in;\n\
        layout(binding = 0, rgba8) uniform readonly image2D src;\n\
        layout(binding = 1, rgba8) uniform writeonly image2D dst;\n\
        layout(binding = 2, r32ui) uniform uimage2D counts;\n\
        layout(binding = 3, rgba32f) uniform image1D f;\n\
        layout(binding = 4) buffer O { ivec4 size; };\n\
        void main() { ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n\
          imageStore(dst, p, (imageLoad(src, p) + imageLoad(src, p + ivec2(1, 0))) * 0.5);\n\
          imageAtomicAdd(counts, ivec2(p.x & 1, 0), 1u);\n\
          imageStore(dst, p + ivec2(0, 100), vec4(1));\n\
          if (p.y == 0) { imageStore(f, p.x, vec4(p.x, 0.5, -2.0, 1e3)); }\n\
          if (p == ivec2(0)) { size = ivec4(imageSize(src), imageSize(f), 0); } }\n";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, series_u8(&[8, 8, 4])));
    job.buffers
        .push(JobBuffer::new(0, 1, zeros(ScalarType::U8, &[8, 8, 4])));
    job.buffers
        .push(JobBuffer::new(0, 2, zeros(ScalarType::U32, &[1, 2])));
    job.buffers
        .push(JobBuffer::new(0, 3, zeros(ScalarType::F32, &[8, 4])));
    job.buffers
        .push(JobBuffer::new(0, 4, zeros(ScalarType::I32, &[4])));
    job.workgroups = [2, 2, 1];
    let (device, r) = on_device(&ctx, &job);
    let mismatches: usize = r.buffers.iter().map(|b| b.mismatches).sum();
    assert_eq!(mismatches, 0, "{}", findings(&r));
    // defined: all of dst but the 8 texels of column 7 (read outside), all counts, f, size
    let defined: Vec<usize> = r.buffers.iter().map(|b| b.exact + b.inexact).collect();
    assert_eq!(defined, [256, 224, 2, 32, 4], "{}", findings(&r));
    assert_eq!(u32s(&device[2]), [32, 32]);
    assert_eq!(u32s(&device[4]), [8, 8, 8, 0]);
}

// AmberScript's IMAGE on the device: the multisampled-image CTS pattern (every sample written,
// then read back through imageLoad after a barrier — here another invocation's texel, so the image
// is `coherent`), probed with EQ_RGBA on both backends.
#[test]
fn an_amber_storage_image_script_passes_on_the_device_and_the_model() {
    if support::device().is_none() {
        return;
    }
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 4, local_size_y = 4) in;\n\
        layout(set = 0, binding = 0, r32ui) coherent uniform uimage2D t;\n\
        layout(set = 0, binding = 1, rgba8) uniform writeonly image2D result;\n\
        void main() { ivec2 p = ivec2(gl_GlobalInvocationID.xy); imageStore(t, p, uvec4(p.x + 4 * p.y)); memoryBarrierImage(); barrier();\n\
          bool ok = imageLoad(t, ivec2(3, 3) - p).r == uint(15 - p.x - 4 * p.y);\n\
          imageStore(result, p, ok ? vec4(0, 1, 0, 1) : vec4(1, 0, 0, 1)); }\nEND\n\
        IMAGE t FORMAT R32_UINT DIM_2D WIDTH 4 HEIGHT 4\n\
        IMAGE result FORMAT R8G8B8A8_UNORM DIM_2D WIDTH 4 HEIGHT 4 FILL 0\n\
        PIPELINE compute p\n  ATTACH k\n  BIND BUFFER t AS storage_image DESCRIPTOR_SET 0 BINDING 0\n  BIND BUFFER result AS storage_image DESCRIPTOR_SET 0 BINDING 1\nEND\n\
        RUN p 1 1 1\n\
        EXPECT result IDX 0 0 SIZE 4 4 EQ_RGBA 0 255 0 255\n";
    let script = parse(text).unwrap();
    let mut dev = lockstep::amber::engines::DeviceBackend::new(None).unwrap();
    let r = run_script(&script, &mut dev);
    assert_eq!(r.expects.len(), 1, "{r:?}");
    assert_eq!(r.expects[0].status, Status::Pass, "{r:?}");
    let v = amber(text);
    assert_eq!(v[0].0, Status::Pass, "{v:?}");
}

// A texel buffer the module declares without a format (`Unknown`: every GLSL `samplerBuffer`)
// takes the format of the view bound to it (Vulkan: the buffer view's format); in `lockstep run`,
// the host array's element type and last dimension (`[4, 4]` of f32: `R32G32B32A32_SFLOAT`, 4
// texels). texelFetch reads texel i exactly.
#[test]
fn a_texel_buffer_without_a_format_takes_the_format_of_its_binding() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0) uniform samplerBuffer src;\n\
        layout(binding = 1) buffer O { vec4 o[4]; };\n\
        layout(binding = 2) uniform writeonly imageBuffer dst;\n\
        void main() { int i = int(gl_GlobalInvocationID.x); o[i] = texelFetch(src, i) * 2.0;\n\
        imageStore(dst, i, texelFetch(src, i) + 1.0); }\n";
    let series = HostBuffer::new(
        ScalarType::F32,
        vec![4, 4],
        (0..16).flat_map(|i| (i as f32).to_le_bytes()).collect(),
    )
    .unwrap();
    let bufs = || {
        vec![
            series.clone(),
            zeros(ScalarType::F32, &[16]),
            zeros(ScalarType::F32, &[4, 4]),
        ]
    };
    let out = run(src, bufs(), [1, 1, 1]);
    let floats = |b: &[u8]| -> Vec<f32> { u32s(b).iter().map(|&b| f32::from_bits(b)).collect() };
    assert_eq!(
        floats(&out.bytes[1]),
        (0..16).map(|i| i as f32 * 2.0).collect::<Vec<_>>()
    );
    assert_eq!(
        floats(&out.bytes[2]),
        (0..16).map(|i| i as f32 + 1.0).collect::<Vec<_>>()
    );
    assert!(out.report.ok(), "{}", findings(&out.report));
    // On the device, each bound as what the module declares: a uniform texel buffer (a sampled
    // `samplerBuffer`) and a storage texel buffer (an `imageBuffer`), with the same texels.
    let Some(ctx) = support::device() else {
        return;
    };
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    for (binding, b) in bufs().into_iter().enumerate() {
        job.buffers.push(JobBuffer::new(0, binding as u32, b));
    }
    let (device, r) = on_device(&ctx, &job);
    assert!(r.ok(), "{}", findings(&r));
    assert_eq!(device[1..], out.bytes[1..]);
}

/// Vulkan, "Image Views": an `image2D` (not `image2DMS`, `OpTypeImage` with MS 0) is a
/// single-sample image; one bound with more samples is refused before the run, naming the binding
/// and the count, and the same texels with one sample run.
#[test]
fn a_single_sample_image_bound_with_several_samples_is_refused() {
    use lockstep::spirv::{decode, image, run_model, BufferInput, DecodeOptions, RunConfig};
    let src = "#version 450\nlayout(local_size_x = 1) in;\n\
        layout(binding = 0, r32ui) uniform uimage2D img;\n\
        void main() { imageStore(img, ivec2(1, 0), uvec4(7u)); }\n";
    let k = decode(
        &crate::spirv_support::glsl(src, "k.comp"),
        &DecodeOptions::default(),
    )
    .unwrap();
    let bind = |samples: u32| {
        [BufferInput {
            binding: 0,
            bytes: vec![0; 16 * samples as usize],
            image: Some(image::Extent {
                samples,
                ..image::Extent::new(2, 2, 1)
            }),
            format: image::TexelFormat::of_vk("R32_UINT"),
            ..Default::default()
        }]
    };
    let cfg = || RunConfig::new(SubgroupSize::new(8).unwrap(), [1, 1, 1]);
    let e = run_model(&k, cfg(), &bind(2), None)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("binding 0") && e.contains("a single-sample image is bound with 2 samples"),
        "{e}"
    );
    let r = run_model(&k, cfg(), &bind(1), None).unwrap();
    assert_eq!(u32s(&r.buffers[0].bytes), [0, 7, 0, 0]);
}

// SPIR-V, OpImageWrite/OpImageRead with the Sample image operand: each invocation's own sample
// index picks the sample it writes and reads (lane i writes sample i of texel (1, 0), then reads
// sample 3 − i of texel (1, 0) after a barrier with image semantics); a sample index undefined in
// one lane (lane 2) makes that lane's read undefined and no other (SPIR-V 2.2.2: an undefined value
// is some value of its type — here any sample, or one past the image's). The image is `coherent`:
// the samples pass between invocations.
#[test]
fn each_invocation_writes_and_reads_the_sample_its_own_index_names() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\n\
        layout(binding = 0, r32ui) coherent uniform uimage2DMS ms;\n\
        layout(binding = 1) buffer O { uint o[]; };\n\
        void main() { int i = int(gl_LocalInvocationID.x);\n\
        imageStore(ms, ivec2(1, 0), i, uvec4(10u + uint(i)));\n\
        memoryBarrierImage(); barrier();\n\
        o[i] = imageLoad(ms, ivec2(1, 0), 3 - i).x;\n\
        int s = i; if (i == 2) { int u; s = u; }\n\
        o[4 + i] = imageLoad(ms, ivec2(1, 0), s).x; }\n";
    // [H, W, S] = 1 × 2 texels of 4 samples
    let out = run(
        src,
        vec![
            zeros(ScalarType::U32, &[1, 2, 4]),
            zeros(ScalarType::U32, &[8]),
        ],
        [1, 1, 1],
    );
    let text = findings(&out.report);
    assert_eq!(u32s(&out.bytes[0]), [0, 0, 0, 0, 10, 11, 12, 13]);
    let o = u32s(&out.bytes[1]);
    assert_eq!(
        (o[..4].to_vec(), o[4], o[5], o[7]),
        (vec![13, 12, 11, 10], 10, 11, 13)
    );
    let b = &out.report.buffers[1];
    assert_eq!((b.exact, b.undefined), (7, 1), "{text}");
    assert!(
        text.contains("[undefined] binding 1 O.o[6]") || text.contains("o[6]"),
        "{text}"
    );
    // Without `coherent` the image's accesses are private (Vulkan, Appendix B, Private vs.
    // Non-Private): the barrier orders them, yet another invocation's read races with the write.
    let private = run(
        &src.replace("coherent uniform", "uniform"),
        vec![
            zeros(ScalarType::U32, &[1, 2, 4]),
            zeros(ScalarType::U32, &[8]),
        ],
        [1, 1, 1],
    );
    let text = findings(&private.report);
    assert!(
        text.contains("not location-ordered") && text.contains("ms is not `coherent`"),
        "{text}"
    );
    // o[0..4] read the others' samples (racy); o[4], o[5], o[7] their own.
    assert_eq!(private.report.buffers[1].exact, 3, "{text}");
}

// An arrayed image declared without a format (`usampler2DArray`: `OpTypeImage` with Arrayed 1 and
// format Unknown) counts its layers among the host array's dimensions the same way: `[layers,]
// height, width`, and one more dimension is the components (docs/kernels.md, Images; `[3, 2, 2, 2]`
// of u32: `R32G32_UINT`, 3 layers of 2 × 2 texels). texelFetch of texel (1, 0) in layer 2 reads
// its two components, and 0 and 1 for the two the format lacks (Vulkan, "Conversion to RGBA").
#[test]
fn an_arrayed_image_without_a_format_counts_its_layers_among_the_arrays_dimensions() {
    let (o, why) = fetch_unformatted_u32("usampler2DArray", "ivec3(1, 0, 2), 0", vec![3, 2, 2, 2]);
    // layer 2, texel (x 1, y 0): ((2·2 + 0)·2 + 1)·2 = 18, its components 18 and 19.
    assert_eq!(o, [18, 19, 0, 1], "{why}");
}

/// texelFetch(image, `at`) of an unformatted `usampler…` of type `ty` bound to a host array of
/// u32 0, 1, 2, … of `shape`, on the model: the uvec4 it read, and the report's findings.
fn fetch_unformatted_u32(ty: &str, at: &str, shape: Vec<usize>) -> (Vec<u32>, String) {
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(binding = 0) uniform {ty} image;\n\
         layout(binding = 1) buffer O {{ uvec4 o; }};\n\
         void main() {{ o = texelFetch(image, {at}); }}\n"
    );
    let n = shape.iter().product::<usize>() as u32;
    let texels = HostBuffer::new(
        ScalarType::U32,
        shape,
        (0..n).flat_map(|i| i.to_le_bytes()).collect(),
    )
    .unwrap();
    let module = compile(&src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers.push(JobBuffer::new(0, 0, texels));
    job.buffers
        .push(JobBuffer::new(0, 1, zeros(ScalarType::U32, &[4])));
    job.samplers.push((0, 0, "nearest".parse().unwrap()));
    let model = job.run_model(SubgroupSize::new(8).unwrap(), None).unwrap();
    let report = job.compare(&model, None, Tolerance::default());
    let o = model.run.buffers.iter().find(|b| b.binding == 1).unwrap();
    (u32s(&o.bytes), findings(&report))
}

// A multisampled image declared without a format (`usampler2DMS`: `OpTypeImage` with MS 1 and
// format Unknown) takes its format from the host array as every unformatted image does: its
// dimensions are height, width and samples, and one more dimension is the components (Vulkan
// takes the view's format; `[2, 3, 4, 2]` of u32: `R32G32_UINT`, 2 × 3 texels of 4 samples).
// texelFetch of texel (1, 0), sample 2 reads its two components, and 0 and 1 for the two the
// format lacks (Vulkan, "Conversion to RGBA": missing G and B are 0, missing A is 1).
#[test]
fn a_multisampled_image_without_a_format_counts_its_samples_among_the_arrays_dimensions() {
    let (o, why) = fetch_unformatted_u32("usampler2DMS", "ivec2(1, 0), 2", vec![2, 3, 4, 2]);
    // texel (x 1, y 0), sample 2: ((0·3 + 1)·4 + 2)·2 = 12, its components 12 and 13.
    assert_eq!(o, [12, 13, 0, 1], "{why}");
}
