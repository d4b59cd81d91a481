//! What other people's Amber tests use (issue 20): each feature in a minimal script written here,
//! run on the model, with the rule it follows cited. The corpus-wide checks (every file loads,
//! the H100 agrees) are in `tests/fidelity.rs`.

use lockstep::amber::engines::ModelBackend;
use lockstep::amber::*;
use std::path::Path;

fn run_model(s: &Script) -> RunReport {
    let mut b = ModelBackend::new(None, None);
    run_script(s, &mut b)
}

fn statuses(r: &RunReport) -> Vec<(usize, &'static str)> {
    r.expects
        .iter()
        .map(|v| (v.line, v.status.name()))
        .collect()
}

/// The error a script must give.
fn error(r: Result<Script, ParseFailure>) -> ScriptError {
    match r {
        Err(ParseFailure::Error(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Runs `s` on the device too (lavapipe here) and expects these verdicts there; without a device
/// that is an error unless LOCKSTEP_SKIP_DEVICE_TESTS is set.
fn on_device(s: &Script, want: &[(usize, &'static str)]) {
    #[cfg(feature = "vulkan")]
    match lockstep::amber::engines::DeviceBackend::new(None) {
        Ok(mut d) => {
            let r = run_script(s, &mut d);
            assert_eq!(statuses(&r), want, "{r:?}");
        }
        Err(e) if std::env::var_os("LOCKSTEP_SKIP_DEVICE_TESTS").is_some() => {
            eprintln!("skipping the device half (LOCKSTEP_SKIP_DEVICE_TESTS): {e}")
        }
        Err(e) => panic!("{e} (set LOCKSTEP_SKIP_DEVICE_TESTS=1 to skip device tests)"),
    }
    #[cfg(not(feature = "vulkan"))]
    let _ = (s, want);
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// AmberScript, "Buffers": `nan` is a float data value (Amber's tokenizer reads it as a
/// number); lockstep also takes `inf` and `-inf`. Stored as the float type's NaN and infinities.
#[test]
fn nan_and_infinities_are_float_data_values() {
    let s = parse("#!amber\nBUFFER b DATA_TYPE float DATA\nnan inf -inf 1\nEND\n").unwrap();
    let w = u32s(&s.buffers[0].initial);
    assert!(f32::from_bits(w[0]).is_nan());
    assert_eq!(&w[1..], &[0x7f80_0000, 0xff80_0000, 0x3f80_0000]);
    // not for integers
    let e = error(parse("#!amber\nBUFFER b DATA_TYPE int32 DATA\nnan\nEND\n"));
    assert!(e.message.contains("not an integer"), "{e}");
}

/// Amber's `ParseBufferInitializerFill` reads the FILL value as a number of either kind for
/// every type (the CTS's mul_extended tests: `BUFFER output DATA_TYPE vec2<int16> SIZE 100 FILL
/// 0.0`); a whole number written as a float fills an integer buffer, a fraction does not.
#[test]
fn a_whole_float_fills_an_integer_buffer() {
    let s = parse("#!amber\nBUFFER b DATA_TYPE vec2<int16> SIZE 2 FILL 3.0\n").unwrap();
    assert_eq!(s.buffers[0].initial, vec![3, 0, 3, 0, 3, 0, 3, 0]);
    let s = parse("#!amber\nBUFFER b DATA_TYPE uint8 SIZE 3 SERIES_FROM 1.0 INC_BY 2.0\n").unwrap();
    assert_eq!(s.buffers[0].initial, vec![1, 3, 5]);
    let e = error(parse("#!amber\nBUFFER b DATA_TYPE int32 SIZE 1 FILL 0.5\n"));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("0.5 is not an integer"), "{e}");
}

/// AmberScript `DEVICE_PROPERTY` (google/amber src/script.cc, `IsKnownProperty`): the float
/// controls properties. The model has every one but round-towards-zero (it rounds to nearest
/// even), and says so as unsupported; an unknown property is an error naming it.
#[test]
fn device_properties_are_requirements_the_model_meets_but_rtz() {
    let body = "#!amber\nDEVICE_PROPERTY FloatControlsProperties.shaderDenormPreserveFloat16\n";
    let s = parse(body).unwrap();
    assert_eq!(s.device_properties.len(), 1);
    assert_eq!(run_model(&s).status, RunStatus::Pass);
    let s =
        parse("#!amber\nDEVICE_PROPERTY FloatControlsProperties.shaderRoundingModeRTZFloat32\n")
            .unwrap();
    let r = run_model(&s);
    assert_eq!(r.status, RunStatus::Unsupported);
    assert!(r.reason.unwrap().contains("rounds to nearest even"));
    let e = error(parse("#!amber\nDEVICE_PROPERTY Warp.speed\n"));
    assert!(e.message.contains("Warp.speed"), "{e}");
}

/// AmberScript, "Buffers": `FILE TEXT name` reads the file as a `DATA` block would be read, to
/// its end; `FILE BINARY name` takes its bytes; the element count comes from the file; names
/// are relative to the script's folder.
#[test]
fn buffers_and_shaders_read_files_beside_the_script() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "# values\n1 2\n0x10 # hex\n").unwrap();
    std::fs::write(dir.path().join("in.bin"), [7u8, 0, 0, 0, 9, 0, 0, 0]).unwrap();
    std::fs::write(
        dir.path().join("k.comp"),
        "#version 450\nlayout(local_size_x = 3) in;\nlayout(set = 0, binding = 0) buffer B { uint v[]; };\nvoid main() { v[gl_LocalInvocationID.x] *= 2u; }\n",
    )
    .unwrap();
    let text = "#!amber\nSHADER compute k GLSL FILE k.comp\nBUFFER t DATA_TYPE uint32 SIZE 99 FILE TEXT in.txt\nBUFFER b DATA_TYPE uint32 SIZE 1 FILE BINARY in.bin\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER t AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT t IDX 0 EQ 2 4 32\nEXPECT b IDX 0 EQ 7 9\n";
    let s = parse_in(text, Some(dir.path())).unwrap();
    assert_eq!((s.buffers[0].elements, s.buffers[1].elements), (3, 2));
    assert_eq!(s.shaders[0].file.as_deref(), Some("k.comp"));
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(10, "pass"), (11, "pass")], "{r:?}");
    // A script given as text has no folder: an error naming the file, not a panic.
    let e = error(parse(text));
    assert!(e.message.contains("k.comp"), "{e}");
    // A missing file is an error naming it and the line.
    let e = error(parse_in(
        "#!amber\nBUFFER t DATA_TYPE uint32 SIZE 1 FILE TEXT nope.txt\n",
        Some(dir.path()),
    ));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("nope.txt"), "{e}");
}

/// AmberScript, "Virtual File Store": `VIRTUAL_FILE path … END` holds text a `SHADER … VIRTUAL_FILE
/// path` uses; `RUN TIMED_EXECUTION` runs (untimed here).
#[test]
fn virtual_files_and_timed_runs() {
    let text = "#!amber\nVIRTUAL_FILE k.comp\n#version 450\nlayout(local_size_x = 2) in;\nlayout(set = 0, binding = 0) buffer B { uint v[]; };\nvoid main() { v[gl_LocalInvocationID.x] += 1u; }\nEND\nSHADER compute k GLSL VIRTUAL_FILE k.comp\nBUFFER b DATA_TYPE uint32 DATA 1 2 END\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN TIMED_EXECUTION p 1 1 1\nEXPECT b IDX 0 EQ 2 3\n";
    let s = parse(text).unwrap();
    assert_eq!(statuses(&run_model(&s)), vec![(15, "pass")]);
    let e = error(parse("#!amber\nSHADER compute k GLSL VIRTUAL_FILE x\n"));
    assert!(e.message.contains("VIRTUAL_FILE x was not declared"), "{e}");
}

/// GLSL.std.450 ModfStruct (36) and FrexpStruct (52): "the same as Modf/Frexp, except that
/// the … results are returned in a structure" — modf(−2.5) = (−0.5, −2); frexp(8) = (0.5, 4);
/// frexp(0) = (0, 0). Correctly rounded in the Vulkan precision tables: compared exactly.
#[test]
fn modf_and_frexp_return_structs() {
    let text = r#"#!amber
SHADER compute k SPIRV-ASM TARGET_ENV spv1.3
               OpCapability Shader
          %1 = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %buf DescriptorSet 0
               OpDecorate %buf Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
        %int = OpTypeInt 32 1
       %uint = OpTypeInt 32 0
        %arr = OpTypeRuntimeArray %float
        %blk = OpTypeStruct %arr
        %ptr = OpTypePointer StorageBuffer %blk
       %pflt = OpTypePointer StorageBuffer %float
        %buf = OpVariable %ptr StorageBuffer
       %modf = OpTypeStruct %float %float
      %frexp = OpTypeStruct %float %int
     %i0 = OpConstant %int 0
     %i1 = OpConstant %int 1
     %i2 = OpConstant %int 2
     %i3 = OpConstant %int 3
     %i4 = OpConstant %int 4
     %i5 = OpConstant %int 5
    %m25 = OpConstant %float -2.5
     %f8 = OpConstant %float 8
     %f0 = OpConstant %float 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %m = OpExtInst %modf %1 ModfStruct %m25
        %mf = OpCompositeExtract %float %m 0
        %mw = OpCompositeExtract %float %m 1
         %e = OpExtInst %frexp %1 FrexpStruct %f8
        %es = OpCompositeExtract %float %e 0
        %ex = OpCompositeExtract %int %e 1
       %exf = OpConvertSToF %float %ex
         %z = OpExtInst %frexp %1 FrexpStruct %f0
        %zx = OpCompositeExtract %int %z 1
       %zxf = OpConvertSToF %float %zx
        %p0 = OpAccessChain %pflt %buf %i0 %i0
               OpStore %p0 %mf
        %p1 = OpAccessChain %pflt %buf %i0 %i1
               OpStore %p1 %mw
        %p2 = OpAccessChain %pflt %buf %i0 %i2
               OpStore %p2 %es
        %p3 = OpAccessChain %pflt %buf %i0 %i3
               OpStore %p3 %exf
        %p4 = OpAccessChain %pflt %buf %i0 %i4
               OpStore %p4 %zxf
               OpReturn
               OpFunctionEnd
END
BUFFER b DATA_TYPE float SIZE 5 FILL 9
PIPELINE compute p
  ATTACH k
  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT b IDX 0 EQ -0.5 -2 0.5 4 0
"#;
    let s = parse(text).unwrap();
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(65, "pass")], "{r:?}");
}

/// GLSL 4.60 §8.5: reflect(I, N) = I − 2·dot(N, I)·N; refract with k = 1 − η²(1 − dot(N, I)²)
/// < 0 is 0; faceforward(N, I, Nref) = N if dot(Nref, I) < 0, else −N.
#[test]
fn reflect_refract_and_faceforward_follow_glsl() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 0) buffer B { vec2 v[]; };\nvoid main() {\n  v[0] = reflect(vec2(1.0, -1.0), vec2(0.0, 1.0));\n  v[1] = refract(vec2(1.0, 0.0), vec2(0.0, 1.0), 2.0);\n  v[2] = faceforward(vec2(0.0, 1.0), vec2(0.0, 1.0), vec2(0.0, 1.0));\n  v[3] = faceforward(vec2(0.0, 1.0), vec2(0.0, -1.0), vec2(0.0, 1.0));\n}\nEND\nBUFFER b DATA_TYPE vec2<float> SIZE 4 FILL 9\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT b IDX 0 TOLERANCE 0.000001 EQ 1 1  0 0  0 -1  0 1\n";
    let s = parse(text).unwrap();
    assert_eq!(statuses(&run_model(&s)), vec![(19, "pass")]);
}

/// SPV_KHR_workgroup_memory_explicit_layout: "all the Workgroup Storage Class variables
/// decorated with Block … are aliased": a store through one is read through another, of two or
/// of three.
#[test]
fn workgroup_block_variables_alias() {
    let text = r#"#!amber
SHADER compute k SPIRV-ASM TARGET_ENV spv1.4
               OpCapability Shader
               OpCapability WorkgroupMemoryExplicitLayoutKHR
               OpExtension "SPV_KHR_workgroup_memory_explicit_layout"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %a %b %out
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %blk Block
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %oblk Block
               OpMemberDecorate %oblk 0 Offset 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %blk = OpTypeStruct %uint
       %oblk = OpTypeStruct %uint
       %pblk = OpTypePointer Workgroup %blk
      %poblk = OpTypePointer StorageBuffer %oblk
      %pwg = OpTypePointer Workgroup %uint
      %psb = OpTypePointer StorageBuffer %uint
          %a = OpVariable %pblk Workgroup
          %b = OpVariable %pblk Workgroup
        %out = OpVariable %poblk StorageBuffer
         %u0 = OpConstant %uint 0
        %u42 = OpConstant %uint 42
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pa = OpAccessChain %pwg %a %u0
               OpStore %pa %u42
         %pb = OpAccessChain %pwg %b %u0
          %v = OpLoad %uint %pb
         %po = OpAccessChain %psb %out %u0
               OpStore %po %v
               OpReturn
               OpFunctionEnd
END
BUFFER o DATA_TYPE uint32 SIZE 1 FILL 0
PIPELINE compute p
  ATTACH k
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT o IDX 0 EQ 42
"#;
    let s = parse(text).unwrap();
    assert_eq!(statuses(&run_model(&s)), vec![(46, "pass")]);
    // Three Block variables alias as two do: the store through `a` is read through `c`.
    let three = text
        .replace("%a %b %out", "%a %b %c %out")
        .replace(
            "          %b = OpVariable %pblk Workgroup\n",
            "          %b = OpVariable %pblk Workgroup\n          %c = OpVariable %pblk Workgroup\n",
        )
        .replace("OpAccessChain %pwg %b %u0", "OpAccessChain %pwg %c %u0");
    let s = parse(&three).unwrap();
    assert_eq!(statuses(&run_model(&s)), vec![(47, "pass")]);
    // Variables of other storage classes keep their own memory: a Private and a Function
    // variable beside the blocks hold what was stored to them.
    let others = text
        .replace("%a %b %out", "%a %b %out %q")
        .replace(
            "       %u42 = OpConstant %uint 42\n",
            "       %u42 = OpConstant %uint 42\n        %u1 = OpConstant %uint 1\n        %u2 = OpConstant %uint 2\n        %u7 = OpConstant %uint 7\n        %u9 = OpConstant %uint 9\n      %ppv = OpTypePointer Private %uint\n      %pfv = OpTypePointer Function %uint\n          %q = OpVariable %ppv Private\n",
        )
        .replace(
            "      %entry = OpLabel\n",
            "      %entry = OpLabel\n          %f = OpVariable %pfv Function\n               OpStore %q %u7\n               OpStore %f %u9\n",
        )
        .replace(
            "               OpStore %po %v\n",
            "               OpStore %po %v\n         %qv = OpLoad %uint %q\n         %p1 = OpAccessChain %psb %out %u0 %u1\n               OpStore %p1 %qv\n         %fv = OpLoad %uint %f\n         %p2 = OpAccessChain %psb %out %u0 %u2\n               OpStore %p2 %fv\n",
        )
        .replace("%oblk = OpTypeStruct %uint", "%oblk = OpTypeStruct %arr")
        .replace("OpAccessChain %psb %out %u0\n", "OpAccessChain %psb %out %u0 %u0\n")
        .replace(
            "       %uint = OpTypeInt 32 0\n",
            "       %uint = OpTypeInt 32 0\n        %arr = OpTypeRuntimeArray %uint\n",
        )
        .replace(
            "               OpDecorate %out DescriptorSet 0\n",
            "               OpDecorate %arr ArrayStride 4\n               OpDecorate %out DescriptorSet 0\n",
        )
        .replace("SIZE 1 FILL 0", "SIZE 3 FILL 0")
        .replace("EXPECT o IDX 0 EQ 42", "EXPECT o IDX 0 EQ 42 7 9");
    let s = parse(&others).unwrap_or_else(|e| panic!("{e}"));
    let st = statuses(&run_model(&s));
    assert_eq!(st.len(), 1);
    assert_eq!(st[0].1, "pass", "{others}");
}

/// The Workgroup variables beside the aliased blocks keep memory of their own, and their own
/// record of what was written: `c` and `d` (one word each, side by side) written, `e` never (GLSL
/// 4.60 §4.3.8: shared variables have no initializer — SPIR-V: a Workgroup variable's value is
/// undefined until written), so `e`'s load is undefined and `c`'s and `d`'s are the 7 and 9
/// stored (neither lies on the other; read in the next block, from memory).
#[test]
fn workgroup_variables_beside_aliased_blocks_are_their_own() {
    let text = r#"#!amber
SHADER compute k SPIRV-ASM TARGET_ENV spv1.4
               OpCapability Shader
               OpCapability WorkgroupMemoryExplicitLayoutKHR
               OpExtension "SPV_KHR_workgroup_memory_explicit_layout"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %a %b %c %d %e %out
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %blk Block
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %arr ArrayStride 4
               OpDecorate %oblk Block
               OpMemberDecorate %oblk 0 Offset 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
         %u7 = OpConstant %uint 7
         %u9 = OpConstant %uint 9
         %u4 = OpConstant %uint 4
        %u42 = OpConstant %uint 42
        %blk = OpTypeStruct %uint
        %arr = OpTypeArray %uint %u4
       %oblk = OpTypeStruct %arr
       %pblk = OpTypePointer Workgroup %blk
      %poblk = OpTypePointer StorageBuffer %oblk
        %pwg = OpTypePointer Workgroup %uint
        %psb = OpTypePointer StorageBuffer %uint
          %a = OpVariable %pblk Workgroup
          %b = OpVariable %pblk Workgroup
          %c = OpVariable %pwg Workgroup
          %d = OpVariable %pwg Workgroup
          %e = OpVariable %pwg Workgroup
        %out = OpVariable %poblk StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %pa = OpAccessChain %pwg %a %u0
               OpStore %pa %u42
               OpStore %c %u7
               OpStore %d %u9
               OpBranch %next
       %next = OpLabel
         %pb = OpAccessChain %pwg %b %u0
         %vb = OpLoad %uint %pb
         %vc = OpLoad %uint %c
         %vd = OpLoad %uint %d
         %ve = OpLoad %uint %e
         %o0 = OpAccessChain %psb %out %u0 %u0
               OpStore %o0 %vb
         %o1 = OpAccessChain %psb %out %u0 %u1
               OpStore %o1 %vc
         %o2 = OpAccessChain %psb %out %u0 %u2
               OpStore %o2 %vd
         %o3 = OpAccessChain %psb %out %u0 %u3
               OpStore %o3 %ve
               OpReturn
               OpFunctionEnd
END
BUFFER o DATA_TYPE uint32 SIZE 4 FILL 0
PIPELINE compute p
  ATTACH k
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT o IDX 0 EQ 42 7 9
EXPECT o IDX 12 EQ 0
"#;
    let s = parse(text).unwrap();
    let lines = |l: &str| text.lines().position(|x| x == l).unwrap() + 1;
    assert_eq!(
        statuses(&run_model(&s)),
        vec![
            (lines("EXPECT o IDX 0 EQ 42 7 9"), "pass"),
            (lines("EXPECT o IDX 12 EQ 0"), "undefined")
        ]
    );
}

/// SPIR-V 1.4 OpPtrEqual / OpPtrDiff and OpPtrAccessChain with VariablePointers: pointers are
/// values (selected, compared, stored in Private variables); OpPtrAccessChain's Element steps
/// through the array the base points into, backwards too; OpPtrDiff counts elements.
#[test]
fn variable_pointers_are_values() {
    let text = r#"[require]
VK_KHR_spirv_1_4
VariablePointerFeatures.variablePointers
[compute shader spirv]
               OpCapability Shader
               OpCapability VariablePointers
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %wg %out %pv
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %oarr ArrayStride 4
               OpDecorate %oblk Block
               OpMemberDecorate %oblk 0 Offset 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %int = OpTypeInt 32 1
       %bool = OpTypeBool
         %i0 = OpConstant %int 0
         %i1 = OpConstant %int 1
         %i3 = OpConstant %int 3
        %in1 = OpConstant %int -1
         %i8 = OpConstant %int 8
        %arr = OpTypeArray %int %i8
       %oarr = OpTypeRuntimeArray %int
       %oblk = OpTypeStruct %oarr
       %parr = OpTypePointer Workgroup %arr
       %pint = OpTypePointer Workgroup %int
      %ppint = OpTypePointer Private %pint
      %poblk = OpTypePointer StorageBuffer %oblk
       %psb = OpTypePointer StorageBuffer %int
         %wg = OpVariable %parr Workgroup
        %out = OpVariable %poblk StorageBuffer
         %pv = OpVariable %ppint Private
       %null = OpConstantNull %pint
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %e0 = OpAccessChain %pint %wg %i0
         %e3 = OpPtrAccessChain %pint %e0 %i3
         %e2 = OpPtrAccessChain %pint %e3 %in1
               OpStore %pv %e2
         %ld = OpLoad %pint %pv
         %eq = OpPtrEqual %bool %ld %e2
         %ne = OpPtrNotEqual %bool %ld %null
         %df = OpPtrDiff %int %e3 %e0
        %sel = OpSelect %pint %eq %e3 %e0
               OpStore %sel %i1
         %v3 = OpLoad %int %e3
        %eqi = OpSelect %int %eq %i1 %i0
        %nei = OpSelect %int %ne %i1 %i0
         %o0 = OpAccessChain %psb %out %i0 %i0
               OpStore %o0 %eqi
         %o1 = OpAccessChain %psb %out %i0 %i1
               OpStore %o1 %nei
         %o2 = OpAccessChain %psb %out %i0 %i3
               OpStore %o2 %df
         %o3 = OpPtrAccessChain %psb %o2 %in1
               OpStore %o3 %v3
               OpReturn
               OpFunctionEnd
[test]
ssbo 0:0 subdata int 0 9 9 9 9
compute 1 1 1
probe ssbo int 0:0 0 == 1 1 1 3
"#;
    let s = parse(text).unwrap();
    assert_eq!(
        statuses(&run_model(&s)),
        vec![(64, "pass")],
        "{:?}",
        run_model(&s)
    );
}

/// Amber `docs/vk_script.md`: sections, `ssbo` size and subdata, `uniform ubo`, push constants
/// (`uniform TYPE OFFSET values`), `compute`, `probe ssbo` with every comparator and `~=` under
/// `tolerance`; data written after a `compute` is written between the dispatches.
#[test]
fn vkscript_files_run_like_amberscript() {
    let text = "# a comment\n[require]\nshaderInt16\n\n[compute shader]\n#version 450\nlayout(local_size_x = 4) in;\nlayout(set = 0, binding = 0) buffer B { int v[]; };\nlayout(set = 0, binding = 1) uniform U { int add; };\nlayout(push_constant) uniform P { int mul; };\nvoid main() { v[gl_LocalInvocationID.x] = v[gl_LocalInvocationID.x] * mul + add; }\n[test]\nssbo 0 subdata int 0 1 2 3 4\nuniform ubo 0:1 int 0 10\nuniform int 0 2\ncompute 1 1 1\nprobe ssbo int 0 0 == 12 14 16 18\nprobe ssbo int 0 0 < 13 15 17 19\nssbo 0 subdata int 4 0\ncompute 1 1 1\nprobe ssbo int 0:0 0 == 34 10 42 46\ntolerance 1%\nprobe ssbo int 0:0 0 ~= 34 10 42 46\n";
    let s = parse(text).unwrap();
    assert_eq!(s.device_features[0].name, "shaderInt16");
    assert_eq!(s.buffers.len(), 3);
    assert!(s
        .commands
        .iter()
        .any(|c| matches!(c, Command::Write { offset: 4, .. })));
    let r = run_model(&s);
    assert_eq!(
        statuses(&r),
        vec![(17, "pass"), (18, "pass"), (21, "pass"), (23, "pass")],
        "{r:?}"
    );
    // errors name their line and command
    for (body, line, frag) in [
        ("[test]\nssbo 0 subdata int 0 1\n", 1, "no [compute shader]"),
        (
            "[compute shader]\nx\n[test]\nprobe ssbo int 0 0 == 1\n",
            4,
            "unable to find buffer",
        ),
        (
            "[compute shader]\nx\n[test]\nssbo 0 subdata int 0 1\nprobe ssbo float 0 0 == 1\n",
            5,
            "does not match",
        ),
        (
            "[compute shader]\nx\n[test]\nssbo 0 subdata int 2 1\n",
            4,
            "multiple of the data size",
        ),
        (
            "[compute shader]\nx\n[test]\nssbo 0 subdata int 0\n",
            4,
            "0 values",
        ),
        (
            "[compute shader]\nx\n[test]\ncompute 1 1\n",
            4,
            "workgroup count",
        ),
        (
            "[compute shader]\nx\n[test]\nssbo 0 subdata int 0 1\nprobe ssbo int 0 0 =~ 1\n",
            5,
            "comparator",
        ),
        ("[nonsense]\n", 1, "unknown section"),
        ("stray text\n[test]\n", 1, "before the first section"),
    ] {
        match parse(body) {
            Err(ParseFailure::Error(e)) => {
                assert_eq!(e.line, line, "{body:?}: {e}");
                assert!(e.message.contains(frag), "{body:?}: {e}");
            }
            other => panic!("{body:?}: {other:?}"),
        }
    }
    // graphics is unsupported, with its line
    for body in [
        "[vertex shader passthrough]\n[test]\n",
        "[compute shader]\nx\n[test]\ndraw rect 0 0 1 1\n",
        "[compute shader]\nx\n[test]\nclear\n",
    ] {
        match parse(body) {
            Err(ParseFailure::Unsupported(u)) => assert!(u.graphics, "{body:?}: {u}"),
            other => panic!("{body:?}: {other:?}"),
        }
    }
}

/// Amber's own VkScript cases (google/amber `tests/cases`): a `[comment]` section is skipped
/// whole (`compute_ssbo_with_entrypoint_command.vkscript` keeps its GLSL there; lockstep called it
/// an unknown section), and a probe sees the buffer as the commands before it left it — data
/// written after a probe, with no `compute` between, is not what the probe checks
/// (`probe_no_compute_with_ssbo.vkscript`: lockstep folded every write before the first
/// `compute` into the initial contents, so the first probe saw the last write and failed).
#[test]
fn vkscript_skips_comment_sections_and_a_probe_sees_the_writes_before_it() {
    let text = "[comment]\nSource code in GLSL:\nvoid main() { data[0] = 1.0; }\n\n[compute shader]\n#version 430\nlayout(local_size_x = 1) in;\n\
        layout(set = 1, binding = 2) buffer B { float d[4]; };\nvoid main() {}\n[test]\n\
        ssbo 1:2 subdata float 0 0.1 0.2 0.3 0.4\nprobe ssbo float 1:2 0 ~= 0.1 0.2 0.3 0.4\n\
        ssbo 1:2 subdata float 0 0.5 0.6 0.7 0.8\nprobe ssbo float 1:2 0 ~= 0.5 0.6 0.7 0.8\n\
        compute 1 1 1\nprobe ssbo float 1:2 4 ~= 0.6 0.7 0.8\n";
    let s = parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    let r = run_model(&s);
    assert_eq!(
        statuses(&r),
        vec![(12, "pass"), (14, "pass"), (16, "pass")],
        "{r:?}"
    );
}

/// VkScript data types (Amber's `vkscript::DatumTypeParser`).
#[test]
fn vkscript_type_names() {
    use lockstep::amber::vkscript::datum_type;
    for (name, want) in [
        ("int", "int32"),
        ("uint16_t", "uint16"),
        ("double", "double"),
        ("vec3", "vec3<float>"),
        ("i8vec2", "vec2<int8>"),
        ("u64vec4", "vec4<uint64>"),
        ("dvec2", "vec2<double>"),
        ("mat4", "mat4x4<float>"),
        ("dmat2x3", "mat2x3<double>"),
    ] {
        assert_eq!(
            datum_type(name).map(|t| t.to_string()),
            Some(want.to_string()),
            "{name}"
        );
    }
    for bad in ["vec5", "imat2", "vec", "float3", "mat2x9"] {
        assert_eq!(datum_type(bad), None, "{bad}");
    }
}

/// One buffer behind two descriptors of one pipeline is one memory (Vulkan, "Descriptor Set
/// Updates": descriptors refer to the buffer's memory, so two of them over the same range alias
/// it): a store through binding 0 is read through binding 1 after a barrier, and an unordered
/// store and load through the two names race. The CTS's `pk-immediate.amber` binds its result
/// buffer this way.
#[test]
fn one_buffer_at_two_bindings_is_one_memory_on_both_backends() {
    let text = |body: &str| {
        format!("#!amber\nSHADER compute s GLSL\n#version 450\nlayout(local_size_x = 2) in;\nlayout(binding = 0) buffer A {{ uint a[4]; }};\nlayout(binding = 1) buffer B {{ uint b[4]; }};\nvoid main() {{ uint i = gl_LocalInvocationID.x; {body} }}\nEND\nBUFFER buf DATA_TYPE uint32 DATA 0 0 0 0 END\nPIPELINE compute p\nATTACH s\nBIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 0\nBIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 1\nEND\nRUN p 1 1 1\nEXPECT buf IDX 0 EQ 5 6 5 6\n")
    };
    let ordered = text("a[i] = 5u + i; barrier(); memoryBarrierBuffer(); b[i + 2u] = b[i];");
    let s = parse(&ordered).unwrap();
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(16, "pass")], "{r:?}");
    // on the device (lavapipe here), one device buffer bound twice
    on_device(&s, &[(16, "pass")]);
    // without the barrier, invocation 1's load of b[0] races invocation 0's store to a[0]
    let racy = text("a[i] = 5u + i; b[i + 2u] = b[1u - i];");
    let r = run_model(&parse(&racy).unwrap());
    assert_eq!(statuses(&r), vec![(16, "undefined")], "{r:?}");
    // Two descriptors over different, overlapping ranges of one buffer (binding 1 sees bytes 256
    // on of what binding 0 sees whole): one memory on both backends, each element named from its
    // own descriptor's start.
    let text = |body: &str| {
        format!("#!amber\nSHADER compute s GLSL\n#version 450\nlayout(local_size_x = 2) in;\nlayout(binding = 0) buffer A {{ uint a[]; }};\nlayout(binding = 1) buffer B {{ uint b[]; }};\nvoid main() {{ uint i = gl_LocalInvocationID.x; {body} }}\nEND\nBUFFER buf DATA_TYPE uint32 SIZE 80 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 0\nBIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 1 DESCRIPTOR_OFFSET 256\nEND\nRUN p 1 1 1\nEXPECT buf IDX 256 EQ 5 6 5 6\nEXPECT buf IDX 0 EQ 0 0\n")
    };
    let ordered = text("a[64u + i] = 5u + i; barrier(); memoryBarrierBuffer(); b[i + 2u] = b[i];");
    let s = parse(&ordered).unwrap();
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(16, "pass"), (17, "pass")], "{r:?}");
    on_device(&s, &[(16, "pass"), (17, "pass")]);
    // without the barrier, invocation 1's load of b[0] races invocation 0's store to a[64]: the
    // same four bytes, found across the two views and named through the one that read
    let racy = text("a[64u + i] = 5u + i; b[i + 2u] = b[1u - i];");
    let r = run_model(&parse(&racy).unwrap());
    assert_eq!(statuses(&r), vec![(16, "undefined"), (17, "pass")], "{r:?}");
    let why = r.expects[0].why.clone().unwrap_or_default();
    assert!(why.contains("race"), "{why}");
}

/// Arrays of texel-buffer descriptors (`BIND BUFFER_ARRAY … AS storage_texel_buffer`), one buffer
/// twice in one array (one memory), and a `samplerBuffer` declared without a format reading the
/// format of the buffer bound to it — Amber's own `compute_descriptor_array_storagetexelbuffer`
/// pattern, on the model and the device.
#[test]
fn arrays_of_texel_buffers_and_a_texel_buffer_without_a_format_run_on_both_backends() {
    let text = "#!amber\nSHADER compute s GLSL\n#version 430\nlayout(local_size_x=4) in;\nuniform layout(set=0, binding=0) samplerBuffer texelsIn;\nuniform layout(set=0, binding=1, rgba32f) imageBuffer outs[2];\nuniform layout(set=0, binding=2, rgba32f) imageBuffer twice[2];\nvoid main() {\n  int i = int(gl_GlobalInvocationID.x);\n  vec4 c = texelFetch(texelsIn, i);\n  imageStore(outs[0], i, c);\n  imageStore(outs[1], i, c * 2.0);\n  if (i < 2) { imageStore(twice[0], i, c * 3.0); } else { imageStore(twice[1], i, c * 4.0); }\n}\nEND\nBUFFER in DATA_TYPE R32G32B32A32_SFLOAT DATA\n1 0 0 1\n0 1 0 1\n0 0 1 1\n0 1 1 1\nEND\nBUFFER o0 DATA_TYPE R32G32B32A32_SFLOAT SIZE 4 FILL 0\nBUFFER o1 DATA_TYPE R32G32B32A32_SFLOAT SIZE 4 FILL 0\nBUFFER o2 DATA_TYPE R32G32B32A32_SFLOAT SIZE 4 FILL 0\nPIPELINE compute p\n  ATTACH s\n  BIND BUFFER in AS uniform_texel_buffer DESCRIPTOR_SET 0 BINDING 0\n  BIND BUFFER_ARRAY o0 o1 AS storage_texel_buffer DESCRIPTOR_SET 0 BINDING 1\n  BIND BUFFER_ARRAY o2 o2 AS storage_texel_buffer DESCRIPTOR_SET 0 BINDING 2\nEND\nRUN p 1 1 1\nEXPECT o1 IDX 0 EQ 2 0 0 2 0 2 0 2 0 0 2 2 0 2 2 2\nEXPECT o2 IDX 0 EQ 3 0 0 3 0 3 0 3 0 0 4 4 0 4 4 4\n";
    let s = parse(text).unwrap();
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(32, "pass"), (33, "pass")], "{r:?}");
    on_device(&s, &[(32, "pass"), (33, "pass")]);
}

/// A `BUFFER` of an image format (AmberScript, "Buffers": `DATA_TYPE` takes a format name; Amber's
/// own `compute_descriptor_array_storagetexelbuffer.amber`): its `DATA` are the stored integers,
/// and a texel buffer view of it has that format, so `texelFetch` converts them by Vulkan's
/// Fixed-Point Data Conversion (UNORM: c / (2^b − 1), 255 → 1.0, 51 → 0.2; SNORM: max(c /
/// (2^(b−1) − 1), −1), −128 → −1.0). A format the model does not know stays unsupported, named.
#[test]
fn a_buffer_of_a_normalized_format_is_read_through_its_format() {
    let text = "#!amber\nSHADER compute s GLSL\n#version 430\nlayout(local_size_x=2) in;\nuniform layout(set=0, binding=0) samplerBuffer u;\nuniform layout(set=0, binding=1) samplerBuffer sn;\nlayout(set=0, binding=2) buffer O { vec4 o[]; };\nvoid main() {\n  int i = int(gl_GlobalInvocationID.x);\n  o[i] = texelFetch(u, i);\n  o[i + 2] = texelFetch(sn, i);\n}\nEND\nBUFFER u DATA_TYPE R8G8B8A8_UNORM DATA\n255 0 51 255\n0 255 102 0\nEND\nBUFFER sn DATA_TYPE R8G8_SNORM DATA\n-128 127 0 -127\nEND\nBUFFER o DATA_TYPE vec4<float> SIZE 4 FILL 9\nPIPELINE compute p\n  ATTACH s\n  BIND BUFFER u AS uniform_texel_buffer DESCRIPTOR_SET 0 BINDING 0\n  BIND BUFFER sn AS uniform_texel_buffer DESCRIPTOR_SET 0 BINDING 1\n  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 2\nEND\nRUN p 1 1 1\nEXPECT o IDX 0 TOLERANCE 0.000001 EQ 1 0 0.2 1 0 1 0.4 0 -1 1 0 1 0 -1 0 1\n";
    let s = parse(text).unwrap();
    assert_eq!(s.buffers[0].data_type.to_string(), "vec4<uint8>");
    assert_eq!(s.buffers[0].initial, vec![255, 0, 51, 255, 0, 255, 102, 0]);
    assert!(s.buffers[0].texel.is_some());
    let f = parse("#!amber\nBUFFER f FORMAT R8G8_SNORM\n").unwrap();
    assert_eq!(f.buffers[0].data_type.to_string(), "vec2<int8>");
    assert!(f.buffers[0].texel.is_some());
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(29, "pass")], "{r:?}");
    on_device(&s, &[(29, "pass")]);
    let e = parse("#!amber\nBUFFER b DATA_TYPE D16_UNORM SIZE 1 FILL 0\n");
    match e {
        Err(ParseFailure::Unsupported(u)) => assert!(u.to_string().contains("D16_UNORM"), "{u}"),
        other => panic!("expected unsupported, got {other:?}"),
    }
}

/// The corpus's data file is read through `FILE TEXT` relative to the script (the CTS's
/// frexpstruct/modfstruct scripts).
#[test]
fn the_cts_frexp_scripts_read_their_input_file() {
    let sub = "cts/spirv_assembly/instruction/float32/comparison";
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/amber-corpus");
    let root = if here.is_dir() {
        here
    } else {
        Path::new("/work/shared/amber-corpus").to_path_buf()
    };
    let c = root.join(sub);
    if !c.is_dir() {
        assert!(
            std::env::var("LOCKSTEP_SKIP_CORPUS").is_ok(),
            "the corpus ../shared/amber-corpus is missing (set LOCKSTEP_SKIP_CORPUS=1 to run without it)"
        );
        eprintln!("SKIPPED by LOCKSTEP_SKIP_CORPUS: 0 files checked");
        return;
    }
    let path = c.join("frexpstruct_1_comp.amber");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = parse_file(&path.display().to_string(), &text).unwrap();
    // Amber takes the element count from the file (5,184 values), not from SIZE 1296.
    let b = s.buffer("buf_in").unwrap();
    assert_eq!(b.elements, 5184);
    let r = run_model(&s);
    assert_eq!(r.status, RunStatus::Pass, "{r:?}");
}

/// AmberScript "Pipeline Buffers": `storage_dynamic`/`uniform_dynamic` with `OFFSET`, and
/// `DESCRIPTOR_OFFSET`/`DESCRIPTOR_RANGE`: the shader sees the buffer from the effective offset
/// (Vulkan: the descriptor's offset plus the dynamic offset), `DESCRIPTOR_RANGE` bytes long
/// (OpArrayLength counts them); two disjoint windows of one buffer are two bindings.
#[test]
fn descriptor_offsets_and_ranges_window_the_buffer() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 0) buffer A { uint a[]; };\nlayout(set = 0, binding = 1) buffer B { uint b[]; };\nvoid main() { a[0] = uint(a.length()); b[0] = 7u; }\nEND\nBUFFER buf DATA_TYPE uint32 SIZE 16 FILL 0\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER buf AS storage_dynamic DESCRIPTOR_SET 0 BINDING 0 OFFSET 16 DESCRIPTOR_OFFSET 16 DESCRIPTOR_RANGE 12\n  BIND BUFFER buf AS storage DESCRIPTOR_SET 0 BINDING 1 DESCRIPTOR_OFFSET 48\nEND\nRUN p 1 1 1\nEXPECT buf IDX 0 EQ 0 0 0 0 0 0 0 0 3 0 0 0 7 0 0 0\n";
    let s = parse(text).unwrap();
    let b = &s.pipelines[0].bindings;
    assert_eq!((b[0].offset, b[0].range), (32, Some(12)));
    assert_eq!(b[0].window(64), Ok(32..44));
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(16, "pass")], "{r:?}");
    // a window past the end of the buffer is bad input naming the BIND line
    let bad = text.replace("DESCRIPTOR_OFFSET 48", "DESCRIPTOR_OFFSET 64");
    let r = run_model(&parse(&bad).unwrap());
    assert_eq!(r.status, RunStatus::Error, "{r:?}");
    let why = r.reason.unwrap();
    assert!(
        why.contains("line 13") && why.contains("not inside the 64-byte buffer"),
        "{why}"
    );
    // partly overlapping windows of one buffer (A sees bytes 32..44, B from 40): one memory, so
    // b[0] is a[2]
    let overlap = text
        .replace("DESCRIPTOR_OFFSET 48", "DESCRIPTOR_OFFSET 40")
        .replace("3 0 0 0 7 0 0 0\n", "3 0 7 0 0 0 0 0\n");
    let r = run_model(&parse(&overlap).unwrap());
    assert_eq!(statuses(&r), vec![(16, "pass")], "{r:?}");
}

/// A fuzz finding (the `amber` target, first minute): a shader line `END#extension` ended the
/// block and then failed a debug assertion. Amber's tokenizer ends a token only at whitespace,
/// so `END#extension` is not `END`: the block goes on to the real `END`.
#[test]
fn end_followed_by_a_hash_is_not_the_end_of_a_shader() {
    let s =
        parse("#!amber\nSHADER compute s GLSL\n#version 450\nEND#extension\nvoid main(){}\nEND\n")
            .unwrap();
    assert!(s.shaders[0].source.contains("END#extension\nvoid main(){}"));
    let Err(ParseFailure::Error(e)) =
        parse("#!amber\nSHADER compute s GLSL\nvoid main(){}\nEND#x\n")
    else {
        panic!()
    };
    assert!(e.message.contains("missing END"), "{e}");
}

/// AmberScript `BIND BUFFER_ARRAY b0 b1 … AS storage …`: an array of descriptors, buffer k at
/// element k (GLSL `buffer B { … } arr[2];`, SPIR-V an OpVariable of an array of Block structs):
/// the first index of an access chain picks the descriptor — here a dynamic one, different in
/// the two invocations of the subgroup, so decorated `NonUniform` as Vulkan requires
/// (VUID-RuntimeSpirv-NonUniform-06274; without it the stores are undefined:
/// `instructions::an_array_of_descriptors_indexed_differently_within_a_subgroup_needs_nonuniform`).
#[test]
fn buffer_arrays_are_arrays_of_descriptors() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\n#extension GL_EXT_nonuniform_qualifier : require\nlayout(local_size_x = 2) in;\nlayout(set = 0, binding = 0) buffer B { uint v; } arr[2];\nvoid main() { arr[nonuniformEXT(gl_LocalInvocationID.x)].v += 10u + gl_LocalInvocationID.x; }\nEND\nBUFFER b0 DATA_TYPE uint32 DATA 1 END\nBUFFER b1 DATA_TYPE uint32 DATA 2 END\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER_ARRAY b0 b1 AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT b0 IDX 0 EQ 11\nEXPECT b1 IDX 0 EQ 13\n";
    let s = parse(text).unwrap();
    let b = &s.pipelines[0].bindings;
    assert_eq!((b.len(), b[0].element, b[1].element), (2, 0, 1));
    let r = run_model(&s);
    assert_eq!(statuses(&r), vec![(16, "pass"), (17, "pass")], "{r:?}");
}

/// AmberScript `SHADER_OPTIMIZATION shader … END` (google/amber, "Pipelines"): SPIRV-Tools
/// optimizer passes, run here by `spirv-opt` (the set-up installs it with spirv-tools) before
/// either backend sees the module; a flag that is not `--name[=value]` is an error naming its
/// line, and a pass the optimizer refuses stops the run with its message.
#[test]
fn shader_optimization_runs_spirv_opt_passes() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 4) in;\nlayout(set = 0, binding = 0) buffer B { uint v[]; };\nuint twice(uint x) { return 2u * x; }\nvoid main() { v[gl_LocalInvocationID.x] = twice(gl_LocalInvocationID.x) + 1u; }\nEND\nBUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nPIPELINE compute p\n  ATTACH k\n  SHADER_OPTIMIZATION k\n    --inline-entry-points-exhaustive\n    --eliminate-dead-functions\n  END\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT b IDX 0 EQ 1 3 5 7\n";
    let s = parse(text).unwrap();
    assert_eq!(
        s.pipelines[0].optimizations,
        [
            "--inline-entry-points-exhaustive",
            "--eliminate-dead-functions"
        ]
    );
    let r = run_model(&s);
    if r.status == RunStatus::Unsupported
        && std::process::Command::new("spirv-opt")
            .arg("--version")
            .output()
            .is_err()
    {
        // the from-source build on a system without SPIRV-Tools' tools: unsupported, named
        assert!(r.reason.unwrap().contains("spirv-opt"));
        eprintln!("SKIPPED: spirv-opt is not installed (the file is unsupported, naming it)");
        return;
    }
    assert_eq!(statuses(&r), vec![(19, "pass")], "{r:?}");
    let e = error(parse(&text.replace("--eliminate-dead-functions", "rm -rf")));
    assert_eq!(e.line, 14, "{e}");
    let r =
        run_model(&parse(&text.replace("--eliminate-dead-functions", "--no-such-pass")).unwrap());
    assert_eq!(r.status, RunStatus::Error, "{r:?}");
    assert!(r.reason.unwrap().contains("spirv-opt"));
}

/// Row-major matrices (Vulkan, "Offset and Stride Assignment": a row-major matrix is stored row
/// by row, MatrixStride apart): `m[c][r]` of a `row_major mat2x3` lies at r · stride + c · 4, so a
/// column's components are a matrix stride apart — an access chain through a column to one of
/// them is a plain pointer (issue 20: it was refused as "a pointer to a column").
#[test]
fn row_major_matrix_components_are_a_matrix_stride_apart() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, row_major, set = 0, binding = 0) buffer M { mat2x3 m; vec3 out3; vec2 out2; };\nvoid main() {\n  out3 = m * vec2(1.0, 10.0);\n  out2 = vec3(1.0, 2.0, 3.0) * m;\n  m[1][2] = 99.0;\n}\nEND\nBUFFER b DATA_TYPE float DATA 1 2 3 4 5 99 0 0 0 0 0 0 0 0 0 0 END\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT b IDX 0 TOLERANCE 0.0001 EQ 1 2 3 4 5 99 0 0 21 43 995 0 22 307\n";
    // rows (1, 2), (3, 4), (5, 99): columns (1, 3, 5) and (2, 4, 99); m · (1, 10) = (21, 43,
    // 995) at byte 32 (a vec3 aligns to 16), (1, 2, 3) · m = (22, 307) at byte 48; m[1][2] = 99 is
    // byte 2 · 8 + 1 · 4 = 20, element 5.
    let r = run_model(&parse(text).unwrap());
    assert_eq!(statuses(&r), vec![(18, "pass")], "{r:?}");
    // the element written is element 5: with it 0 before, only a row-major offset gives 99 there
    let r = run_model(&parse(&text.replace("DATA 1 2 3 4 5 99", "DATA 1 2 3 4 5 0")).unwrap());
    assert_eq!(r.expects[0].status.name(), "fail", "{r:?}");
    assert!(
        !r.expects[0].why.as_deref().unwrap_or("").contains("b[5]"),
        "{r:?}"
    );
}

/// The same rule for a whole column (Amber's own `compute_mat2x4_row_major_col_major.amber`
/// copies one this way): a pointer to column 1 of a row-major `mat2x3` is a vector whose three
/// components are the matrix stride (8 bytes) apart — loaded, stored and indexed as such.
#[test]
fn a_whole_column_of_a_row_major_matrix_is_a_strided_vector() {
    let text = "#!amber\nSHADER compute k GLSL\n#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, row_major, set = 0, binding = 0) buffer M { mat2x3 m; vec3 col; };\nvoid main() {\n  col = m[1];\n  m[0] = vec3(7.0, 8.0, 9.0);\n}\nEND\nBUFFER b DATA_TYPE float DATA 1 2 3 4 5 6 0 0 0 0 0 0 END\nPIPELINE compute p\n  ATTACH k\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nEXPECT b IDX 0 EQ 7 2 8 4 9 6 0 0 2 4 6 0\n";
    // rows (1, 2), (3, 4), (5, 6): column 1 is (2, 4, 6) at bytes 4, 12, 20; column 0 written
    // at bytes 0, 8, 16.
    let r = run_model(&parse(text).unwrap());
    assert_eq!(statuses(&r), vec![(17, "pass")], "{r:?}");
}

/// A fuzz finding (the `amber` target, 2026-11-27): an `IMAGE` whose `DATA` holds more values than
/// its extent has texel components wrote past its bytes. It is bad input naming the line.
#[test]
fn image_data_beyond_the_extent_is_an_error() {
    let e = error(parse(
        "#!amber\nIMAGE img FORMAT R32_SFLOAT DIM_2D WIDTH 2 HEIGHT 1 DATA\n1 2 3\nEND\n",
    ));
    assert_eq!(e.line, 2);
    assert!(
        e.message.contains("DATA has 3 values, more than the 2"),
        "{e}"
    );
}
