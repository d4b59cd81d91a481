//! Samplers and sampled images (issue 20): each rule of Vulkan's "Texel Filtering", "Wrapping
//! Operation" and the sub-texel precision limit, checked on the model through an Amber script
//! written here, and the defined values checked on the device (lavapipe here, the H100 through
//! `device`).
//!
//! The image: 4×4 texels of R32G32B32A32_SFLOAT, texel (x, y) = (x, y, x + 4y, 1).

use lockstep::amber::engines::ModelBackend;
use lockstep::amber::*;

fn image_data() -> String {
    let mut s = String::new();
    for y in 0..4 {
        for x in 0..4 {
            s += &format!("{x} {y} {} 1\n", x + 4 * y);
        }
    }
    s
}

fn script(body: &str, expects: &str) -> String {
    format!(
        "#!amber\nSHADER compute s GLSL\n#version 450\nlayout(local_size_x=1) in;\nlayout(set=0, binding=0) uniform texture2D tex;\nlayout(set=0, binding=1) uniform sampler nearest_repeat;\nlayout(set=0, binding=2) uniform sampler2D linear_clamp;\nlayout(set=0, binding=3) buffer O {{ vec4 o[]; }};\nlayout(set=0, binding=4) uniform sampler border;\nlayout(set=0, binding=5) uniform sampler2D mixed;\nvoid main() {{\n{body}}}\nEND\nIMAGE img FORMAT R32G32B32A32_SFLOAT DIM_2D WIDTH 4 HEIGHT 4 DATA\n{}END\nBUFFER o DATA_TYPE vec4<float> SIZE 8 FILL 7\nSAMPLER nr MAG_FILTER nearest MIN_FILTER nearest ADDRESS_MODE_U repeat ADDRESS_MODE_V repeat MAX_LOD 0\nSAMPLER lc MAG_FILTER linear MIN_FILTER linear ADDRESS_MODE_U clamp_to_edge ADDRESS_MODE_V clamp_to_edge MAX_LOD 0\nSAMPLER bw ADDRESS_MODE_U clamp_to_border ADDRESS_MODE_V clamp_to_border BORDER_COLOR float_opaque_white MAX_LOD 0\nSAMPLER mx MAG_FILTER linear MIN_FILTER nearest ADDRESS_MODE_U clamp_to_edge ADDRESS_MODE_V clamp_to_edge MIN_LOD 0 MAX_LOD 1\nPIPELINE compute p\n  ATTACH s\n  BIND BUFFER img AS sampled_image DESCRIPTOR_SET 0 BINDING 0\n  BIND SAMPLER nr DESCRIPTOR_SET 0 BINDING 1\n  BIND BUFFER img AS combined_image_sampler SAMPLER lc DESCRIPTOR_SET 0 BINDING 2\n  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 3\n  BIND SAMPLER bw DESCRIPTOR_SET 0 BINDING 4\n  BIND BUFFER img AS combined_image_sampler SAMPLER mx DESCRIPTOR_SET 0 BINDING 5\nEND\nRUN p 1 1 1\n{expects}",
        image_data()
    )
}

/// The EXPECT verdicts of a run, by line.
fn statuses(r: &RunReport) -> Vec<(usize, &'static str)> {
    r.expects
        .iter()
        .map(|v| (v.line, v.status.name()))
        .collect()
}

/// The lines of the EXPECTs of `text`.
fn expect_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("EXPECT"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// `statuses` expected: the EXPECTs of `text` in order, with these verdicts.
fn want(text: &str, verdicts: &[&'static str]) -> Vec<(usize, &'static str)> {
    expect_lines(text)
        .into_iter()
        .zip(verdicts.iter().copied())
        .collect()
}

fn model(s: &Script) -> RunReport {
    run_script(s, &mut ModelBackend::new(None, None))
}

/// Runs `s` on the device too (where there is one) and checks the EXPECTs at `lines` pass there.
fn on_device(s: &Script, lines: &[usize]) {
    #[cfg(feature = "vulkan")]
    match lockstep::amber::engines::DeviceBackend::new(None) {
        Ok(mut d) => {
            let r = run_script(s, &mut d);
            for (line, st) in statuses(&r) {
                if lines.contains(&line) {
                    assert_eq!(st, "pass", "device, line {line}: {r:?}");
                }
            }
        }
        Err(e) if std::env::var_os("LOCKSTEP_SKIP_DEVICE_TESTS").is_some() => {
            eprintln!("skipping the device half (LOCKSTEP_SKIP_DEVICE_TESTS): {e}")
        }
        Err(e) => panic!("{e} (set LOCKSTEP_SKIP_DEVICE_TESTS=1 to skip device tests)"),
    }
    #[cfg(not(feature = "vulkan"))]
    let _ = (s, lines);
}

/// Vulkan, "Texel Filtering" and "Wrapping Operation": nearest takes texel ⌊s·w⌋ (repeat wraps
/// 4.5 to texel 0); clamp-to-border outside the image is the border color; linear weighs
/// ⌊u − ½⌋ and the next texel by 1 − α and α (u = 1.0: texels 0 and 1 at ½ each; v = 0.5: row 0
/// alone); `texelFetch` on a sampled image reads the texel (integer texel coordinates);
/// `textureSize` and `textureQueryLevels` (one level).
#[test]
fn filtering_and_wrapping_follow_texel_filtering() {
    let body = "  o[0] = textureLod(sampler2D(tex, nearest_repeat), vec2(0.125, 0.125), 0.0);\n  o[1] = textureLod(sampler2D(tex, nearest_repeat), vec2(1.125, 0.375), 0.0);\n  o[2] = textureLod(sampler2D(tex, border), vec2(-0.5, 0.5), 0.0);\n  o[3] = textureLod(linear_clamp, vec2(0.25, 0.125), 0.0);\n  o[4] = texelFetch(linear_clamp, ivec2(3, 2), 0);\n  o[5] = vec4(textureSize(linear_clamp, 0), textureQueryLevels(linear_clamp), 0);\n  o[6] = textureLod(linear_clamp, vec2(0.875, 1.5), 0.0);\n";
    let expects = "EXPECT o IDX 0 EQ 0 0 0 1\nEXPECT o IDX 16 EQ 0 1 4 1\nEXPECT o IDX 32 EQ 1 1 1 1\nEXPECT o IDX 48 EQ 0.5 0 0.5 1\nEXPECT o IDX 64 EQ 3 2 11 1\nEXPECT o IDX 80 EQ 4 4 1 0\nEXPECT o IDX 96 EQ 3 3 15 1\n";
    let text = script(body, expects);
    let s = parse(&text).unwrap();
    let r = model(&s);
    assert_eq!(statuses(&r), want(&text, &["pass"; 7]), "{r:?}");
    on_device(&s, &expect_lines(&text));
}

/// Vulkan, Limits, `subTexelPrecisionBits` (at least 4): a device snaps texel-space coordinates to
/// 1/16 of a texel. So a nearest coordinate just below a boundary (u = 0.9996) may select either
/// texel, and a linear weight off the 1/16 grid (α = 0.7) is only bounded: the model calls both
/// not pinned down, and a weight on the grid (α = ½) defined.
#[test]
fn sub_texel_precision_leaves_boundaries_and_off_grid_weights_open() {
    let body = "  o[0] = textureLod(sampler2D(tex, nearest_repeat), vec2(0.2499, 0.125), 0.0);\n  o[1] = textureLod(linear_clamp, vec2(0.3, 0.125), 0.0);\n  o[2] = textureLod(linear_clamp, vec2(0.25, 0.125), 0.0);\n";
    let expects =
        "EXPECT o IDX 0 EQ 0 0 0 1\nEXPECT o IDX 16 EQ 0.7 0 0.7 1\nEXPECT o IDX 32 EQ 0.5 0 0.5 1\n";
    let text = script(body, expects);
    let s = parse(&text).unwrap();
    let r = model(&s);
    assert_eq!(
        statuses(&r),
        want(&text, &["undefined", "undefined", "pass"]),
        "{r:?}"
    );
    let why = r.expects[0].why.clone().unwrap_or_default();
    assert!(why.contains("subTexelPrecisionBits"), "{why}");
    let why = r.expects[1].why.clone().unwrap_or_default();
    assert!(why.contains("not a multiple of 1/16"), "{why}");
    on_device(&s, &expect_lines(&text)[2..]);
}

/// SPIR-V: `OpImageSampleImplicitLod` needs derivatives, which a compute shader has only with a
/// derivative group. The level of detail then chooses between the sampler's magnification and
/// minification filters: where they give different values the result is not pinned down (u = 1.0:
/// linear ½·T0 + ½·T1, nearest T1), where they agree it is (a texel center). GLSL's `texture()`
/// in a compute shader is not such a read: glslang lowers it to an explicit level of detail 0
/// (magnification), pinned down, and the device agrees.
#[test]
fn an_implicit_lod_in_a_compute_shader_pins_down_only_what_both_filters_agree_on() {
    let asm = r#"               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpName %main "main"
               OpName %mixed "mixed"
               OpName %O "O"
               OpMemberName %O 0 "o"
               OpName %out "out"
               OpDecorate %mixed DescriptorSet 0
               OpDecorate %mixed Binding 5
               OpDecorate %arr ArrayStride 16
               OpMemberDecorate %O 0 Offset 0
               OpDecorate %O Block
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 3
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
    %v2float = OpTypeVector %float 2
    %v4float = OpTypeVector %float 4
        %int = OpTypeInt 32 1
        %img = OpTypeImage %float 2D 0 0 0 1 Unknown
        %si = OpTypeSampledImage %img
      %p_si = OpTypePointer UniformConstant %si
      %mixed = OpVariable %p_si UniformConstant
        %arr = OpTypeRuntimeArray %v4float
          %O = OpTypeStruct %arr
        %p_O = OpTypePointer StorageBuffer %O
        %out = OpVariable %p_O StorageBuffer
     %p_v4 = OpTypePointer StorageBuffer %v4float
      %int_0 = OpConstant %int 0
      %int_1 = OpConstant %int 1
   %f_quarter = OpConstant %float 0.25
   %f_eighth = OpConstant %float 0.125
     %c_edge = OpConstantComposite %v2float %f_quarter %f_eighth
   %c_center = OpConstantComposite %v2float %f_eighth %f_eighth
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %s = OpLoad %si %mixed
         %v0 = OpImageSampleImplicitLod %v4float %s %c_edge
         %p0 = OpAccessChain %p_v4 %out %int_0 %int_0
               OpStore %p0 %v0
         %v1 = OpImageSampleImplicitLod %v4float %s %c_center
         %p1 = OpAccessChain %p_v4 %out %int_0 %int_1
               OpStore %p1 %v1
               OpReturn
               OpFunctionEnd
"#;
    let text = script("", "").replacen(
        &script("", "")[..script("", "").find("END\nIMAGE").unwrap()],
        &format!("#!amber\nSHADER compute s SPIRV-ASM\n{asm}"),
        1,
    ) + "EXPECT o IDX 0 EQ 0.5 0 0.5 1\nEXPECT o IDX 16 EQ 0 0 0 1\n";
    let text = text
        .replace(
            "  BIND BUFFER img AS sampled_image DESCRIPTOR_SET 0 BINDING 0\n",
            "",
        )
        .replace("  BIND SAMPLER nr DESCRIPTOR_SET 0 BINDING 1\n", "")
        .replace("  BIND SAMPLER bw DESCRIPTOR_SET 0 BINDING 4\n", "")
        .replace(
            "  BIND BUFFER img AS combined_image_sampler SAMPLER lc DESCRIPTOR_SET 0 BINDING 2\n",
            "",
        );
    let s = parse(&text).unwrap();
    let r = model(&s);
    assert_eq!(statuses(&r), want(&text, &["undefined", "pass"]), "{r:?}");
    let why = r.expects[0].why.clone().unwrap_or_default();
    assert!(why.contains("implicit level of detail"), "{why}");
    // A sampler whose level-of-detail range is [0, 0] (Vulkan, "Level-of-Detail Operation": λ is
    // clamped to [minLod, maxLod], and λ ≤ 0 selects the magnification filter): whatever the
    // derivatives, the read magnifies — linear, pinned down (½·T0 + ½·T1 at u = 0.25).
    let clamped = text.replace("MIN_LOD 0 MAX_LOD 1", "MIN_LOD 0 MAX_LOD 0");
    assert_ne!(clamped, text);
    let r = model(&parse(&clamped).unwrap());
    assert_eq!(statuses(&r), want(&clamped, &["pass", "pass"]), "{r:?}");
    // GLSL texture(): an explicit level of detail 0 after glslang.
    let body = "  o[0] = texture(mixed, vec2(0.25, 0.125));\n";
    let text = script(body, "EXPECT o IDX 0 EQ 0.5 0 0.5 1\n");
    let s = parse(&text).unwrap();
    assert_eq!(statuses(&model(&s)), want(&text, &["pass"]));
    on_device(&s, &expect_lines(&text));
}

/// Bad input: a sampler attribute that does not exist, an unknown sampler, and a sampler bound to a
/// binding that needs one but given none — each one error naming the line or the binding.
#[test]
fn sampler_errors_name_the_line() {
    let e = match parse("#!amber\nSAMPLER s MAG_FILTER cubic\n") {
        Err(ParseFailure::Error(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.line, 2);
    assert!(e.message.contains("cubic"), "{e}");
    let e = match parse("#!amber\nSHADER compute s GLSL\n#version 450\nvoid main() {}\nEND\nPIPELINE compute p\n  ATTACH s\n  BIND SAMPLER nope DESCRIPTOR_SET 0 BINDING 0\nEND\n") {
        Err(ParseFailure::Error(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(e.message.contains("unknown sampler: nope"), "{e}");
    // The shader declares a sampler at 0.1 that the pipeline does not bind.
    let text = script(
        "  o[0] = textureLod(sampler2D(tex, nearest_repeat), vec2(0.1), 0.0);\n",
        "",
    )
    .replace("  BIND SAMPLER nr DESCRIPTOR_SET 0 BINDING 1\n", "");
    let r = model(&parse(&text).unwrap());
    assert_eq!(r.status, RunStatus::Error, "{r:?}");
    let msg = format!("{r:?}");
    assert!(msg.contains("needs a sampler"), "{msg}");
}

/// `lockstep run --sampler BINDING=STATE`: a combined image sampler (its texels the `--buffer` at
/// the same binding) and a sampler alone, on the model and the device; linear weights of ½ and
/// nearest texel centers are pinned down and the device agrees. Bad input: a sampler missing,
/// given where the kernel has none, or not a state — each one error, exit 64.
#[test]
fn lockstep_run_binds_samplers_given_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(&k, "#version 450\nlayout(local_size_x=4) in;\nlayout(set=0, binding=0) uniform sampler2D t;\nlayout(set=0, binding=1) uniform texture2D tex;\nlayout(set=0, binding=2) uniform sampler s;\nlayout(set=0, binding=3) buffer O { vec4 o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationID.x;\n  vec2 c = vec2(0.125 + 0.25 * float(i), 0.375);\n  o[i] = textureLod(t, c + vec2(0.125, 0.0), 0.0);\n  o[i + 4] = textureLod(sampler2D(tex, s), c, 0.0);\n}\n").unwrap();
    let device =
        cfg!(feature = "vulkan") && std::env::var_os("LOCKSTEP_SKIP_DEVICE_TESTS").is_none();
    let argv = |extra: &[&str]| {
        let mut v: Vec<String> = ["lockstep", "run", k.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(
            [
                "--buffer",
                "0=series:f32:4x4x4",
                "--buffer",
                "1=series:f32:4x4x4",
                "--buffer",
                "3=zeros:f32:8x4",
            ]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
        );
        if !device {
            v.push("--model-only".into());
        }
        v
    };
    let out = lockstep::cli::run(&argv(&[
        "--sampler",
        "0=linear,clamp_to_edge",
        "--sampler",
        "2=nearest,repeat",
    ]))
    .unwrap_or_else(|e| panic!("{}", e.message));
    // nearest: exact; linear: a weighted sum, compared within the float tolerance
    assert!(
        out.contains("binding 3  f32   32        16     16       0"),
        "{out}"
    );
    if device {
        assert!(out.contains("result: PASS"), "{out}");
    }
    for (extra, says) in [
        (
            &["--sampler", "2=nearest"][..],
            "give its state with --sampler",
        ),
        (
            &[
                "--sampler",
                "0=linear",
                "--sampler",
                "2=nearest",
                "--sampler",
                "5=linear",
            ][..],
            "declares no sampler at set 0 binding 5",
        ),
        (&["--sampler", "0=cubic"][..], "sampler item 'cubic'"),
    ] {
        let e = lockstep::cli::run(&argv(extra)).unwrap_err();
        assert_eq!(e.code, 64, "{}", e.message);
        assert!(e.message.contains(says), "{}", e.message);
    }
}

/// `BIND SAMPLER … DESCRIPTOR_SET 1`: the sampler the shader declares in set 1 is the one bound
/// there (Vulkan binds descriptors by set and binding; the same sampler in set 0 reads the same
/// texels: nearest, repeat).
#[test]
fn a_sampler_bound_in_another_descriptor_set_is_the_one_the_shader_reads() {
    let body = "  o[0] = textureLod(sampler2D(tex, nearest_repeat), vec2(1.125, 0.375), 0.0);\n";
    let expects = "EXPECT o IDX 0 EQ 0 1 4 1\n";
    let text = script(body, expects)
        .replace(
            "layout(set=0, binding=1) uniform sampler nearest_repeat;",
            "layout(set=1, binding=1) uniform sampler nearest_repeat;",
        )
        .replace(
            "BIND SAMPLER nr DESCRIPTOR_SET 0 BINDING 1",
            "BIND SAMPLER nr DESCRIPTOR_SET 1 BINDING 1",
        );
    assert!(text.contains("DESCRIPTOR_SET 1 BINDING 1") && text.contains("set=1, binding=1"));
    let s = parse(&text).unwrap();
    let r = model(&s);
    assert_eq!(statuses(&r), want(&text, &["pass"]), "{r:?}");
    on_device(&s, &expect_lines(&text));
}

/// `lockstep run --sampler 1.2=…`: a sampler alone (no texels) in descriptor set 1 is bound
/// where the kernel declares it, and the texels it samples come out defined.
#[test]
fn lockstep_run_binds_a_sampler_alone_in_another_descriptor_set() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(&k, "#version 450\nlayout(local_size_x=4) in;\nlayout(set=0, binding=1) uniform texture2D tex;\nlayout(set=1, binding=2) uniform sampler s;\nlayout(set=0, binding=3) buffer O { vec4 o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationID.x;\n  o[i] = textureLod(sampler2D(tex, s), vec2(0.125 + 0.25 * float(i), 0.375), 0.0);\n}\n").unwrap();
    let argv: Vec<String> = [
        "lockstep",
        "run",
        k.to_str().unwrap(),
        "--buffer",
        "1=series:f32:4x4x4",
        "--buffer",
        "3=zeros:f32:4x4",
        "--sampler",
        "1.2=nearest,repeat",
        "--model-only",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    // nearest sampling reads texels: all 16 components exact
    assert!(
        out.contains("binding 3  f32   16        16     0        0"),
        "{out}"
    );
}

/// SPIR-V, `OpImageQuerySizeLod`: "Level of Detail is used to compute which mipmap level to
/// query … behavior is undefined if Level of Detail is not less than the number of levels" (and a
/// negative level is no level either). The image here has one level: `textureSize(t, 0)` is its
/// size, `textureSize(t, 1)` and `textureSize(t, -1)` are undefined, each naming the level the
/// shader asked for.
#[test]
fn the_size_of_a_level_the_image_does_not_have_is_undefined() {
    let body = "  o[0] = vec4(textureSize(linear_clamp, 1), 0, 0);\n  o[1] = vec4(textureSize(linear_clamp, -1), 0, 0);\n  o[2] = vec4(textureSize(linear_clamp, 0), 0, 0);\n";
    let expects =
        "EXPECT o IDX 0 EQ 4 4 0 0\nEXPECT o IDX 16 EQ 4 4 0 0\nEXPECT o IDX 32 EQ 4 4 0 0\n";
    let text = script(body, expects);
    let s = parse(&text).unwrap();
    let r = model(&s);
    assert_eq!(
        statuses(&r),
        want(&text, &["undefined", "undefined", "pass"]),
        "{r:?}"
    );
    for (e, level) in r.expects.iter().zip(["1", "-1"]) {
        let why = e.why.clone().unwrap_or_default();
        assert!(
            why.contains(&format!(
                "the size of level {level} of linear_clamp, which has one level"
            )),
            "{why}"
        );
    }
    on_device(&s, &expect_lines(&text)[2..]);
}

/// Linear filtering needs a format whose features include SAMPLED_IMAGE_FILTER_LINEAR
/// (VUID-vkCmdDispatch-magFilter-04553); an integer format has none, so a linear sample of an
/// R32_UINT image is not defined — and says why — while a texel fetch of the same image is
/// (Vulkan, "Texel Input Operations": R32_UINT reads as (r, 0, 0, 1)).
#[test]
fn linear_filtering_of_an_integer_image_is_not_defined_and_a_fetch_of_it_is() {
    let text = "#!amber
SHADER compute s GLSL
#version 450
layout(local_size_x=1) in;
layout(set=0, binding=0) uniform usampler2D img;
layout(set=0, binding=1) buffer O { uvec4 o[]; };
void main() { o[0] = texture(img, vec2(0.5, 0.5)); o[1] = texelFetch(img, ivec2(1, 0), 0); }
END
IMAGE img FORMAT R32_UINT DIM_2D WIDTH 2 HEIGHT 2 DATA
1 2 3 4
END
BUFFER o DATA_TYPE vec4<uint32> SIZE 2 FILL 7
SAMPLER lin MAG_FILTER linear MIN_FILTER linear MAX_LOD 0
PIPELINE compute p
  ATTACH s
  BIND BUFFER img AS combined_image_sampler SAMPLER lin DESCRIPTOR_SET 0 BINDING 0
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 1
END
RUN p 1 1 1
EXPECT o IDX 0 EQ 1 0 0 1
EXPECT o IDX 16 EQ 2 0 0 1
";
    let s = parse(text).unwrap();
    let r = model(&s);
    assert_eq!(statuses(&r), want(text, &["undefined", "pass"]), "{r:?}");
    assert!(format!("{r:?}").contains("is not filterable"), "{r:?}");
}

// SPIR-V, "Image Operands": NonPrivateTexel and VolatileTexel (Vulkan memory model) say how the
// access is ordered and whether it may be combined with others, not which texel is read: a sample
// carrying them reads what the same sample without them reads. The model runs such a sample (it
// refused them once) — here `Lod|VolatileTexel` and `Lod|NonPrivateTexel|VolatileTexel`, nearest
// filtering at (0.375, 0.375) of a 4×4 image: texel (1, 1).
#[test]
fn a_sample_with_memory_model_texel_operands_reads_the_texel_it_would_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.spvasm");
    let text = |operands: &str| {
        format!(
            "OpCapability Shader\nOpCapability VulkanMemoryModel\nOpMemoryModel Logical Vulkan\n\
             OpEntryPoint GLCompute %main \"main\" %tex %o\nOpExecutionMode %main LocalSize 1 1 1\n\
             OpDecorate %tex DescriptorSet 0\nOpDecorate %tex Binding 2\nOpDecorate %O Block\n\
             OpMemberDecorate %O 0 Offset 0\nOpDecorate %arr ArrayStride 16\n\
             OpDecorate %o DescriptorSet 0\nOpDecorate %o Binding 3\n\
             %void = OpTypeVoid\n%fn = OpTypeFunction %void\n%float = OpTypeFloat 32\n\
             %v2 = OpTypeVector %float 2\n%v4 = OpTypeVector %float 4\n\
             %img = OpTypeImage %float 2D 0 0 0 1 Unknown\n%simg = OpTypeSampledImage %img\n\
             %psimg = OpTypePointer UniformConstant %simg\n%tex = OpVariable %psimg UniformConstant\n\
             %arr = OpTypeRuntimeArray %v4\n%O = OpTypeStruct %arr\n\
             %pO = OpTypePointer StorageBuffer %O\n%o = OpVariable %pO StorageBuffer\n\
             %pv4 = OpTypePointer StorageBuffer %v4\n%int = OpTypeInt 32 1\n%i0 = OpConstant %int 0\n\
             %f0 = OpConstant %float 0\n%fq = OpConstant %float 0.375\n\
             %uv = OpConstantComposite %v2 %fq %fq\n\
             %main = OpFunction %void None %fn\n%e = OpLabel\n%s = OpLoad %simg %tex\n\
             %v = OpImageSampleExplicitLod %v4 %s %uv {operands} %f0\n\
             %p = OpAccessChain %pv4 %o %i0 %i0\nOpStore %p %v\nOpReturn\nOpFunctionEnd\n"
        )
    };
    for operands in [
        "Lod",
        "Lod|VolatileTexel",
        "Lod|NonPrivateTexel|VolatileTexel",
    ] {
        std::fs::write(&k, text(operands)).unwrap();
        let out_dir = dir.path().join(operands.replace('|', "_"));
        let argv: Vec<String> = [
            "lockstep",
            "run",
            k.to_str().unwrap(),
            "--model-only",
            "--target-env",
            "vulkan1.2",
            "--sampler",
            "2=nearest,clamp_to_edge",
            "--buffer",
            "2=series:f32:4x4x4",
            "--buffer",
            "3=zeros:f32:4",
            "--out",
            out_dir.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{operands}: {}", e.message));
        assert!(
            out.contains("binding 3  f32   4         4"),
            "{operands}: {out}"
        );
        let bytes = std::fs::read(out_dir.join("model-3.npy")).unwrap();
        let vals: Vec<f32> = bytes[bytes.len() - 16..]
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // texel (1, 1) of texels (x, y) holding 4·(4y + x) … 4·(4y + x) + 3
        assert_eq!(vals, [20.0, 21.0, 22.0, 23.0], "{operands}");
    }
}
