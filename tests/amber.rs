//! AmberScript: the reader (every error names its line and command), buffer layouts from the
//! std140/std430 rules, EXPECT semantics, the runner with a fake backend, reports, the
//! `lockstep amber` command, the Vulkan CTS scripts, and mutated scripts (no panic).

use lockstep::amber::report::{json, junit, summarize};
use lockstep::amber::*;
use lockstep::cli::exit_code;
use lockstep::kernel::Tolerance;
use lockstep::reconverge::Mode;
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn ours() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/amber");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "amber"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(v.len() >= 6, "tests/amber holds {} scripts", v.len());
    v
}

fn script(name: &str) -> Script {
    let (_, text) = ours().into_iter().find(|(n, _)| n == name).unwrap();
    parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn error_of(body: &str) -> ScriptError {
    match parse(&format!("#!amber\n{body}")) {
        Err(ParseFailure::Error(e)) => e,
        other => panic!("expected an error for {body:?}, got {other:?}"),
    }
}

fn unsupported_of(body: &str) -> Unsupported {
    match parse(&format!("#!amber\n{body}")) {
        Err(ParseFailure::Unsupported(u)) => u,
        other => panic!("expected unsupported for {body:?}, got {other:?}"),
    }
}

const GLSL: &str = "SHADER compute s GLSL\n#version 450\nvoid main() {}\nEND\n";

// ---------------------------------------------------------------------------------------------
// The reader

#[test]
fn our_scripts_parse_and_cover_every_supported_command() {
    let scripts: Vec<Script> = ours()
        .iter()
        .map(|(n, t)| parse(t).unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect();
    let shaders: Vec<&Shader> = scripts.iter().flat_map(|s| &s.shaders).collect();
    for f in [
        ShaderFormat::Glsl,
        ShaderFormat::SpirvAsm,
        ShaderFormat::SpirvHex,
    ] {
        assert!(shaders.iter().any(|s| s.format == f), "no {f} shader");
    }
    assert!(shaders.iter().any(|s| s.target_env.is_some()));
    assert!(shaders.iter().any(|s| s.target_env.is_none()));
    let buffers: Vec<&Buffer> = scripts.iter().flat_map(|s| &s.buffers).collect();
    assert!(buffers.iter().any(|b| b.layout == Layout::Std140));
    assert!(buffers.iter().any(|b| b.data_type.array));
    assert!(buffers
        .iter()
        .any(|b| b.data_type.rows == 3 && b.data_type.columns == 1));
    assert!(buffers.iter().any(|b| b.data_type.columns > 1));
    for s in Scalar::ALL {
        // AmberScript has no bool (the model's scalar types are Amber's, and one more).
        if matches!(s, Scalar::U16 | Scalar::U64 | Scalar::Bool) {
            continue;
        }
        assert!(
            buffers.iter().any(|b| b.data_type.scalar == s),
            "no {s:?} buffer"
        );
    }
    let pipelines: Vec<&Pipeline> = scripts.iter().flat_map(|s| &s.pipelines).collect();
    let kinds: Vec<BindingKind> = pipelines
        .iter()
        .flat_map(|p| &p.bindings)
        .map(|b| b.kind)
        .collect();
    assert!(kinds
        .iter()
        .any(|k| matches!(k, BindingKind::Storage { .. })));
    assert!(kinds
        .iter()
        .any(|k| matches!(k, BindingKind::Uniform { .. })));
    assert!(kinds.contains(&BindingKind::PushConstant));
    assert!(pipelines.iter().any(|p| p.entry_point != "main"));
    assert!(pipelines.iter().any(|p| !p.specializations.is_empty()));
    assert!(pipelines
        .iter()
        .any(|p| p.subgroup.fully_populated.is_some()));
    assert!(pipelines.iter().any(|p| p.subgroup.varying_size.is_some()));
    assert!(pipelines.iter().any(|p| p.subgroup.required_size.is_some()));
    // DERIVE_PIPELINE: two pipelines sharing a shader.
    assert!(scripts.iter().any(|s| s.pipelines.len() > s.shaders.len()));
    fn walk<'a>(c: &'a [Command], out: &mut Vec<&'a Command>) {
        for x in c {
            out.push(x);
            if let Command::Repeat { commands, .. } = x {
                walk(commands, out);
            }
        }
    }
    let mut cmds = Vec::new();
    for s in &scripts {
        walk(&s.commands, &mut cmds);
    }
    assert!(cmds.iter().any(|c| matches!(c, Command::Run { .. })));
    assert!(cmds.iter().any(|c| matches!(c, Command::Copy { .. })));
    assert!(cmds.iter().any(|c| matches!(c, Command::Repeat { .. })));
    let expects: Vec<&Expect> = scripts.iter().flat_map(|s| s.expects()).collect();
    for cmp in [
        Comparator::Eq,
        Comparator::Ne,
        Comparator::Lt,
        Comparator::Le,
        Comparator::Gt,
        Comparator::Ge,
    ] {
        assert!(
            expects.iter().any(
                |e| matches!(&e.kind, ExpectKind::Values { comparator, .. } if *comparator == cmp)
            ),
            "no {cmp:?}"
        );
    }
    let tol: Vec<Tolerance> = expects
        .iter()
        .flat_map(|e| match &e.kind {
            ExpectKind::Values { tolerances, .. } => tolerances.clone(),
            _ => vec![],
        })
        .collect();
    assert!(tol.iter().any(|t| t.rel > 0.0) && tol.iter().any(|t| t.abs > 0.0));
    assert!(expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::EqBuffer { .. })));
    assert!(expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::RmseBuffer { .. })));
    assert!(scripts.iter().any(|s| !s.device_features.is_empty()
        && !s.device_extensions.is_empty()
        && !s.instance_extensions.is_empty()
        && s.fence_timeout_ms.is_some()));
}

#[test]
fn buffers_hold_their_initial_values_in_layout() {
    let s = script("compute_basics.amber");
    let a = s.buffer("a").unwrap();
    let words: Vec<u32> = a
        .initial
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, (0..16).map(|i| 10 + 2 * i).collect::<Vec<_>>());
    let e = s.buffer("expected").unwrap();
    assert_eq!(&e.initial[20..24], &21u32.to_le_bytes()); // written 0x15
    let q = s.buffer("quarters").unwrap();
    assert_eq!(&q.initial[12..16], &1.25f32.to_le_bytes());
    let signed = s.buffer("signed").unwrap();
    assert_eq!(&signed.initial[0..4], &i32::MIN.to_le_bytes());
    let l = script("layouts.amber");
    let k = l.buffer("k").unwrap(); // float[] STD140: 16-byte stride
    assert_eq!(k.size(), 64);
    assert_eq!(&k.initial[16..20], &2.0f32.to_le_bytes());
    assert_eq!(&k.initial[20..32], &[0u8; 12]);
    let v = l.buffer("v").unwrap(); // vec3<float>: the fourth slot is zero padding
    assert_eq!(v.size(), 64);
    assert_eq!(
        &v.initial[48..60],
        [(-1.5f32), 0.25, 100.0]
            .map(f32::to_le_bytes)
            .concat()
            .as_slice()
    );
    let t = script("types.amber");
    assert_eq!(t.buffer("i8").unwrap().initial, vec![0x80, 0xff, 0, 0x7f]);
    assert_eq!(t.buffer("u8").unwrap().initial, vec![0, 1, 0xfe, 0xff]);
    assert_eq!(
        &t.buffer("f16").unwrap().initial[4..6],
        &half::f16::from_f32(65504.0).to_le_bytes()
    );
    let m = t.buffer("m").unwrap();
    assert_eq!(m.element_layout().stride, 16);
    // SPIRV-HEX: the first word is the SPIR-V magic number, four little-endian bytes.
    let h = script("spirv_hex.amber");
    let ShaderCode::SpirvWords(w) = &h.shaders[0].code else {
        panic!()
    };
    assert_eq!(w[0], 0x0723_0203);
    assert_eq!(h.shaders[0].source_line, 6);
}

#[test]
fn a_copy_destination_takes_the_size_of_its_source() {
    let s = script("subgroup_size_control.amber");
    let c = s.buffer("ok_copy").unwrap();
    assert_eq!((c.elements, c.size()), (128, 512));
    assert_eq!(c.data_type, DataType::scalar(Scalar::U32));
}

#[test]
fn shader_source_is_verbatim_up_to_the_end_line() {
    let s = parse("#!amber\n# c\nSHADER compute x GLSL TARGET_ENV spv1.3 # comment\n#version 450\n  // END of nothing: not the end\nvoid main() {}\n  END  # shader\nBUFFER b DATA_TYPE int32 SIZE 1 FILL 0\n").unwrap();
    assert_eq!(
        s.shaders[0].source,
        "#version 450\n  // END of nothing: not the end\nvoid main() {}\n"
    );
    assert_eq!(s.shaders[0].source_line, 4);
    assert_eq!(
        s.shaders[0].target_env,
        Some(lockstep::kernel::TargetEnv::Vulkan1_1)
    );
    assert_eq!(s.buffers[0].line, 8);
}

#[test]
fn a_continued_line_is_one_command_and_lines_stay_counted() {
    let s = parse("#!amber\nBUFFER b DATA_TYPE uint32 \\\n  SIZE 2 FILL 3\nBUFFER c DATA_TYPE uint32 SIZE 2 FILL 3\nEXPECT c IDX 0 \\\n  EQ 3 3\nEXPECT b IDX 4 EQ 4\n").unwrap();
    assert_eq!(s.buffers[1].line, 4);
    let e = s.expects();
    assert_eq!((e[0].line, e[1].line), (5, 7));
}

#[test]
fn each_bad_script_is_an_error_naming_its_line_and_command() {
    // (script after the #!amber line, expected line, command, message fragment)
    let cases: &[(&str, usize, &str, &str)] = &[
        ("FROB x\n", 2, "FROB", "unknown command"),
        ("SHADER compute\n", 2, "SHADER", "missing a shader name"),
        ("SHADER kernel s GLSL\nEND\n", 2, "SHADER", "unknown shader type: kernel"),
        ("SHADER compute s GLSL\nvoid main(){}\n", 2, "SHADER", "missing END"),
        ("SHADER compute s GLSL\n\nEND\n", 2, "SHADER", "must not be empty"),
        ("SHADER compute s WGSL\nx\nEND\n", 2, "SHADER", "unknown shader format: WGSL"),
        ("SHADER compute s PASSTHROUGH\n", 2, "SHADER", "only vertex PASSTHROUGH"),
        (&format!("{GLSL}{GLSL}"), 6, "SHADER", "duplicate shader name: s"),
        ("SHADER compute s SPIRV-HEX\n03 02 23 07\n0x1ff\nEND\n", 4, "SHADER", "0x1ff is not a hex byte"),
        ("SHADER compute s SPIRV-HEX\n03 02 23\nEND\n", 3, "SHADER", "not a whole number of 32-bit words"),
        ("SHADER compute s GLSL extra\nx\nEND\n", 2, "SHADER", "extra parameters after SHADER: extra"),
        ("BUFFER DATA_TYPE uint32 SIZE 1 FILL 0\n", 2, "BUFFER", "missing BUFFER name"),
        ("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\n", 3, "BUFFER", "duplicate buffer name provided: b"),
        ("BUFFER b SIZE 4\n", 2, "BUFFER", "unknown BUFFER command provided: SIZE"),
        ("BUFFER b DATA_TYPE vec5<float> SIZE 4 FILL 0\n", 2, "BUFFER", "invalid data type 'vec5<float>' provided"),
        ("BUFFER b DATA_TYPE uint32 WITH 4\n", 2, "BUFFER", "unknown initializer for BUFFER: WITH"),
        ("BUFFER b DATA_TYPE uint32 SIZE -4 FILL 0\n", 2, "BUFFER", "invalid BUFFER size: -4"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 1.5\n", 2, "BUFFER", "1.5 is not an integer"),
        ("BUFFER b DATA_TYPE uint8 SIZE 4 FILL 256\n", 2, "BUFFER", "256 does not fit uint8"),
        ("BUFFER b DATA_TYPE int8 SIZE 4 FILL -129\n", 2, "BUFFER", "-129 does not fit int8"),
        ("BUFFER b DATA_TYPE vec2<float> SIZE 4 SERIES_FROM 0 INC_BY 1\n", 2, "BUFFER", "SERIES_FROM needs a scalar data type, not vec2<float>"),
        ("BUFFER b DATA_TYPE float SIZE 4 SERIES_FROM 0 BY 1\n", 2, "BUFFER", "expected INC_BY, found BY"),
        ("BUFFER b DATA_TYPE float SIZE 4 FILL\n", 2, "BUFFER", "missing FILL value"),
        ("BUFFER b DATA_TYPE float SIZE 4 FILL 0 0\n", 2, "BUFFER", "extra parameters after BUFFER: 0"),
        ("BUFFER b DATA_TYPE vec2<int32> DATA\n1 2 3\nEND\n", 2, "BUFFER", "DATA has 3 values, not a multiple of the 2 components"),
        ("BUFFER b DATA_TYPE int32 DATA\n1 2\n", 4, "BUFFER", "missing BUFFER DATA END"),
        ("BUFFER b DATA_TYPE int32 DATA\n1 two\nEND\n", 3, "BUFFER", "invalid BUFFER data value: two"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4000000000 FILL 0\n", 2, "BUFFER", "exceed lockstep's buffer limit of 4 GiB"),
        ("BUFFER b FORMAT R32_UNIT\n", 2, "BUFFER", "invalid BUFFER FORMAT: R32_UNIT"),
        ("PIPELINE raytracing p\nEND\n", 2, "PIPELINE", "unknown pipeline type: raytracing"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nPIPELINE compute p\nATTACH s\nEND\n"), 9, "PIPELINE", "duplicate pipeline name: p"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\n"), 6, "PIPELINE", "missing END"),
        ("PIPELINE compute p\nEND\n", 2, "PIPELINE", "no ATTACH: a compute pipeline needs a compute shader"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nLAUNCH\nEND\n"), 8, "LAUNCH", "unknown command in PIPELINE block"),
        ("PIPELINE compute p\nATTACH nope\nEND\n", 3, "ATTACH", "unknown shader in ATTACH command: nope"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nATTACH s\nEND\n"), 8, "ATTACH", "can not add duplicate shader"),
        (&format!("{GLSL}SHADER compute t GLSL\nx\nEND\nPIPELINE compute p\nATTACH s\nATTACH t\nEND\n"), 11, "ATTACH", "a compute pipeline has one shader"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s ENTRY main2\nEND\n"), 7, "ATTACH", "unknown ATTACH parameter: ENTRY"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s TYPE vertex ENTRY_POINT main\nEND\n"), 7, "ATTACH", "ATTACH TYPE vertex in a compute pipeline"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s SPECIALIZE 1 AS double 2\nEND\n"), 7, "ATTACH", "only 32-bit types are accepted"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s SPECIALIZE 1 AS uint32 x\nEND\n"), 7, "ATTACH", "invalid specialization value: x"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nBIND BUFFER q AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\n"), 8, "BIND", "unknown buffer: q"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b DESCRIPTOR_SET 0 BINDING 0\nEND\n"), 9, "BIND", "expected AS storage|uniform|push_constant"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS storage BINDING 0\nEND\n"), 9, "BIND", "expected DESCRIPTOR_SET, found BINDING"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING x\nEND\n"), 9, "BIND", "invalid BINDING: x"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS ssbo DESCRIPTOR_SET 0 BINDING 0\nEND\n"), 9, "BIND", "unknown buffer_type: ssbo"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS push_constant\nBIND BUFFER b AS push_constant\nEND\n"), 10, "BIND", "only bind one push constant"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nSUBGROUP s\nFULLY_POPULATED on\nEND\nEND\n"), 9, "SUBGROUP", "FULLY_POPULATED needs DEVICE_FEATURE SubgroupSizeControl.computeFullSubgroups"),
        (&format!("DEVICE_FEATURE SubgroupSizeControl.subgroupSizeControl\n{GLSL}PIPELINE compute p\nATTACH s\nSUBGROUP s\nREQUIRED_SIZE 24\nEND\nEND\n"), 10, "SUBGROUP", "invalid size for REQUIRED_SIZE: 24"),
        (&format!("DEVICE_FEATURE SubgroupSizeControl.subgroupSizeControl\n{GLSL}PIPELINE compute p\nATTACH s\nSUBGROUP s\nVARYING_SIZE yes\nEND\nEND\n"), 10, "SUBGROUP", "invalid value for VARYING_SIZE: yes"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nSUBGROUP s\nSIZE 8\nEND\nEND\n"), 9, "SUBGROUP", "invalid SUBGROUP option: SIZE"),
        (&format!("{GLSL}SHADER compute t GLSL\nx\nEND\nPIPELINE compute p\nATTACH s\nSUBGROUP t\nEND\nEND\n"), 11, "SUBGROUP", "shader t is not attached to pipeline p"),
        ("DERIVE_PIPELINE q FROM p\nEND\n", 2, "DERIVE_PIPELINE", "unknown parent pipeline: p"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nRUN q 1 1 1\n"), 9, "RUN", "unknown pipeline for RUN command: q"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nRUN p\n"), 9, "RUN", "RUN command requires parameters"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nRUN p 1 x 1\n"), 9, "RUN", "invalid parameter for RUN command: x"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nRUN p 1 1 1 1\n"), 9, "RUN", "extra parameters after RUN: 1"),
        ("BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nCOPY a TO z\n", 3, "COPY", "COPY destination buffer was not declared: z"),
        ("BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nCOPY a TO a\n", 3, "COPY", "identical"),
        ("BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER b DATA_TYPE float SIZE 1 FILL 0\nCOPY a TO b\n", 4, "COPY", "same data type (uint32 STD430 vs float STD430)"),
        ("BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nCOPY a INTO b\n", 4, "COPY", "expected TO, found INTO"),
        (&format!("{GLSL}BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nCOPY a TO b\n"), 12, "COPY", "b is a COPY destination and is bound in PIPELINE p"),
        ("EXPECT nope IDX 0 EQ 1\n", 2, "EXPECT", "unknown buffer name for EXPECT command: nope"),
        ("EXPECT IDX 0 EQ 1\n", 2, "EXPECT", "missing buffer name between EXPECT and IDX"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b AT 0 EQ 1\n", 3, "EXPECT", "missing IDX in EXPECT command (found AT)"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 EQUALS 1\n", 3, "EXPECT", "unexpected token in EXPECT command: EQUALS"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 TOLERANCE 1 NE 1\n", 3, "EXPECT", "TOLERANCE only available with EQ probes"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 TOLERANCE EQ 1\n", 3, "EXPECT", "TOLERANCE specified but no tolerances provided"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 TOLERANCE 1 2 3 4 5 EQ 1\n", 3, "EXPECT", "TOLERANCE has a maximum of 4 values"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 2 EQ 0\n", 3, "EXPECT", "IDX 2 is not a multiple of the element size 4 of b"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 8 EQ 0 0 0\n", 3, "EXPECT", "3 values from byte 8 read past the end of b (16 bytes"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 EQ\n", 3, "EXPECT", "missing comparison values for EXPECT command"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 EQ 0.5\n", 3, "EXPECT", "invalid EXPECT value: 0.5 is not an integer"),
        ("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 0 4 EQ 0\n", 3, "EXPECT", "Y value not needed for non-color comparator"),
        ("BUFFER a DATA_TYPE uint32 SIZE 4 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 5 FILL 0\nEXPECT a EQ_BUFFER b\n", 4, "EXPECT", "cannot compare buffers of different size: 4 vs 5"),
        ("BUFFER a DATA_TYPE uint32 SIZE 4 FILL 0\nBUFFER b DATA_TYPE int32 SIZE 4 FILL 0\nEXPECT a EQ_BUFFER b\n", 4, "EXPECT", "cannot compare buffers of differing format (uint32 STD430 vs int32 STD430)"),
        ("BUFFER a DATA_TYPE float SIZE 4 FILL 0\nBUFFER b DATA_TYPE float SIZE 4 FILL 0\nEXPECT a RMSE_BUFFER b 0.1\n", 4, "EXPECT", "expected TOLERANCE, found 0.1"),
        ("REPEAT 0\nEND\n", 2, "REPEAT", "invalid count parameter for REPEAT command: 0"),
        ("REPEAT 2\nBUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEND\n", 3, "REPEAT", "BUFFER cannot be used inside REPEAT"),
        ("REPEAT 2\n", 2, "REPEAT", "missing END for REPEAT command"),
        ("SET ENGINE_DATA timeout 5\n", 2, "SET", "unknown variable timeout"),
        ("SET ENGINE_DATA fence_timeout_ms -5\n", 2, "SET", "invalid fence_timeout_ms value: -5"),
        ("DEVICE_FEATURE\n", 2, "DEVICE_FEATURE", "missing a feature name"),
        ("DEVICE_EXTENSION VK_KHR_a VK_KHR_b\n", 2, "DEVICE_EXTENSION", "extra parameters after DEVICE_EXTENSION: VK_KHR_b"),
    ];
    for (body, line, cmd, frag) in cases {
        let e = error_of(body);
        assert_eq!((e.line, e.command.as_str()), (*line, *cmd), "{body:?}: {e}");
        assert!(e.message.contains(frag), "{body:?}: {e} lacks {frag:?}");
        assert!(
            e.to_string().starts_with(&format!("line {line}: {cmd}: ")),
            "{e}"
        );
    }
}

#[test]
fn a_file_without_the_amber_line_is_an_error_on_line_1() {
    let Err(ParseFailure::Error(e)) = parse("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\n") else {
        panic!()
    };
    assert_eq!(e.line, 1);
    assert!(e.message.contains("#!amber"), "{e}");
}

#[test]
fn graphics_and_other_outside_commands_are_unsupported_with_their_line() {
    let graphics_cases: &[(&str, usize, &str)] = &[
        ("SHADER vertex v PASSTHROUGH\n", 2, "SHADER vertex"),
        ("SHADER fragment f GLSL\nvoid main(){}\nEND\n", 2, "SHADER fragment"),
        ("PIPELINE graphics g\nEND\n", 2, "PIPELINE graphics"),
        ("BUFFER fb FORMAT B8G8R8A8_UNORM\n", 2, "BUFFER"),
        ("BUFFER b DATA_TYPE uint32 WIDTH 4 HEIGHT 4 FILL 0\n", 2, "BUFFER"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nFRAMEBUFFER_SIZE 8 8\nEND\n"), 8, "FRAMEBUFFER_SIZE"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b AS color LOCATION 0\nEND\n"), 9, "BIND"),
        (&format!("{GLSL}PIPELINE compute p\nATTACH s\nEND\nRUN p DRAW_RECT POS 0 0 SIZE 8 8\n"), 9, "RUN DRAW_RECT"),
        ("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nEXPECT b IDX 0 0 SIZE 1 1 EQ_RGB 0 0 0\n", 3, "EXPECT"),
        ("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nCLEAR_COLOR p 0 0 0 0\n", 3, "CLEAR_COLOR"),
        ("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nREPEAT 2\nCLEAR p\nEND\n", 4, "CLEAR"),
    ];
    for (body, line, cmd) in graphics_cases {
        let u = unsupported_of(body);
        assert!(u.graphics, "{body:?}: {u}");
        assert_eq!(
            (u.line, u.command.as_str()),
            (Some(*line), *cmd),
            "{body:?}: {u}"
        );
        assert!(
            u.to_string()
                .starts_with(&format!("graphics: line {line}: {cmd}")),
            "{u}"
        );
    }
    let other: &[(&str, usize, &str, &str)] = &[
        ("SHADER compute s HLSL\nx\nEND\n", 2, "SHADER", "HLSL shaders are not supported"),
        ("SHADER compute s GLSL TARGET_ENV opencl2.2\nx\nEND\n", 2, "SHADER", "TARGET_ENV opencl2.2"),
        ("DEVICE_FEATURE warpDrive\n", 2, "DEVICE_FEATURE", "warpDrive is not a device feature"),
        ("IMAGE i FORMAT R8G8B8A8_UNORM MIP_LEVELS 2 DIM_2D WIDTH 4 HEIGHT 4\n", 2, "IMAGE", "MIP_LEVELS 2"),
        ("STRUCT s\nEND\n", 2, "STRUCT", "STRUCT data types"),
        (&format!("{GLSL}BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER b KERNEL ARG_NAME x\nEND\n"), 9, "BIND", "OpenCL"),
    ];
    for (body, line, cmd, frag) in other {
        let u = unsupported_of(body);
        assert!(!u.graphics, "{body:?}: {u}");
        assert_eq!(
            (u.line, u.command.as_str()),
            (Some(*line), *cmd),
            "{body:?}: {u}"
        );
        assert!(u.reason.contains(frag), "{u} lacks {frag:?}");
    }
}

#[test]
fn a_later_bind_to_the_same_slot_replaces_the_earlier() {
    let s = parse(&format!("#!amber\n{GLSL}BUFFER a DATA_TYPE uint32 SIZE 1 FILL 0\nBUFFER b DATA_TYPE uint32 SIZE 1 FILL 0\nPIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0\nBIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nBIND BUFFER a AS uniform DESCRIPTOR_SET 1 BINDING 0\nEND\n")).unwrap();
    let b = &s.pipelines[0].bindings;
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0].buffer, b[0].kind),
        (1, BindingKind::Storage { set: 0, binding: 0 })
    );
    assert_eq!(
        (b[1].buffer, b[1].kind),
        (0, BindingKind::Uniform { set: 1, binding: 0 })
    );
}

#[test]
fn specializations_keep_their_32_bits() {
    let s = parse(&format!("#!amber\n{GLSL}PIPELINE compute p\nATTACH s ENTRY_POINT main SPECIALIZE 1 AS int32 -2 SPECIALIZE 2 AS float 1.5 SPECIALIZE 3 AS uint32 0xffffffff\nEND\n")).unwrap();
    let sp = &s.pipelines[0].specializations;
    assert_eq!(sp[0].bits, (-2i32) as u32);
    assert_eq!(sp[1].bits, 1.5f32.to_bits());
    assert_eq!((sp[2].id, sp[2].bits), (3, u32::MAX));
}

// ---------------------------------------------------------------------------------------------
// Layouts: GLSL 4.60 §7.6.2.2 rules 1–8 (std140) and its std430 paragraph; Vulkan §15.6.4.

fn layout_of(t: &str, l: Layout) -> (usize, Vec<usize>) {
    let el = t.parse::<DataType>().unwrap().element_layout(l);
    (el.stride, el.offsets)
}

#[test]
fn scalars_and_vectors_are_aligned_to_their_base_alignment() {
    use Layout::*;
    // Rule 1: a scalar of N bytes has base alignment N, in both layouts.
    for (t, n) in [
        ("int8", 1),
        ("uint16", 2),
        ("float16", 2),
        ("float", 4),
        ("double", 8),
    ] {
        assert_eq!(layout_of(t, Std140), (n, vec![0]), "{t}");
        assert_eq!(layout_of(t, Std430), (n, vec![0]), "{t}");
    }
    // Rule 2: a two-component vector: 2N.
    assert_eq!(layout_of("vec2<float>", Std430), (8, vec![0, 4]));
    assert_eq!(layout_of("vec2<int16>", Std140), (4, vec![0, 2]));
    // Rule 3: three- and four-component vectors: 4N, so a vec3 element takes four slots.
    assert_eq!(layout_of("vec3<float>", Std430), (16, vec![0, 4, 8]));
    assert_eq!(layout_of("vec3<float>", Std140), (16, vec![0, 4, 8]));
    assert_eq!(layout_of("vec3<int8>", Std430), (4, vec![0, 1, 2]));
    assert_eq!(layout_of("vec3<double>", Std430), (32, vec![0, 8, 16]));
    assert_eq!(layout_of("vec4<uint32>", Std140), (16, vec![0, 4, 8, 12]));
}

#[test]
fn array_strides_round_up_to_16_bytes_in_std140_only() {
    use Layout::*;
    // Rule 4: the array stride is the element's base alignment rounded up to a vec4's (std140);
    // std430 does not round (§7.6.2.2, std430 paragraph).
    for (t, s140, s430) in [
        ("int8[]", 16, 1),
        ("int16[]", 16, 2),
        ("float[]", 16, 4),
        ("int64[]", 16, 8),
        ("vec2<float>[]", 16, 8),
        ("vec2<int8>[]", 16, 2),
        ("vec3<int16>[]", 16, 8),
        ("vec3<float>[]", 16, 16),
        ("vec4<int32>[]", 16, 16),
        ("vec3<double>[]", 32, 32),
    ] {
        assert_eq!(layout_of(t, Std140).0, s140, "{t} std140");
        assert_eq!(layout_of(t, Std430).0, s430, "{t} std430");
    }
}

#[test]
fn matrices_are_column_vectors_with_std140_rounding_the_column_stride() {
    use Layout::*;
    // Rule 5: a column-major CxR matrix is C column vectors of R components, stored as an array.
    assert_eq!(layout_of("mat2x2<float>", Std430), (16, vec![0, 4, 8, 12]));
    assert_eq!(layout_of("mat2x2<float>", Std140), (32, vec![0, 4, 16, 20]));
    assert_eq!(
        layout_of("mat2x3<float>", Std430),
        (32, vec![0, 4, 8, 16, 20, 24])
    );
    assert_eq!(layout_of("mat3x2<float>", Std430).0, 24);
    assert_eq!(layout_of("mat3x2<float>", Std140).0, 48);
    assert_eq!(layout_of("mat4x3<float>", Std140).0, 64);
    assert_eq!(layout_of("mat4x3<float>", Std430).0, 64);
    assert_eq!(layout_of("mat2x2<float16>", Std430), (8, vec![0, 2, 4, 6]));
    assert_eq!(
        layout_of("mat2x2<float16>", Std140),
        (32, vec![0, 2, 16, 18])
    );
    assert_eq!(layout_of("mat2x2<float>[]", Std140).0, 32);
}

#[test]
fn data_type_names_round_trip_and_formats_map_to_scalars_and_vectors() {
    for name in [
        "int8",
        "uint64",
        "float16",
        "double",
        "vec3<int32>",
        "mat4x2<float>",
        "float[]",
        "vec2<uint8>[]",
    ] {
        assert_eq!(name.parse::<DataType>().unwrap().to_string(), name);
    }
    assert_eq!(
        "R32_UINT".parse::<DataType>().unwrap().to_string(),
        "uint32"
    );
    assert_eq!(
        "R32G32B32A32_SFLOAT"
            .parse::<DataType>()
            .unwrap()
            .to_string(),
        "vec4<float>"
    );
    assert_eq!(
        "R8G8_SINT".parse::<DataType>().unwrap().to_string(),
        "vec2<int8>"
    );
    assert_eq!(
        "R16G16B16_SFLOAT".parse::<DataType>().unwrap().to_string(),
        "vec3<float16>"
    );
    for image in [
        "R8G8B8A8_UNORM",
        "A2B10G10R10_UINT_PACK32",
        "D32_SFLOAT_S8_UINT",
        "R32G16_UINT",
        "B8G8R8A8_SRGB",
    ] {
        assert_eq!(
            DataType::from_format(image),
            Some(FormatKind::Image),
            "{image}"
        );
    }
    assert_eq!(DataType::from_format("uint32"), None);
    assert_eq!(DataType::from_format("R32_UNIT"), None);
    for bad in [
        "vec1<float>",
        "vec4<vec2<float>>",
        "mat2<float>",
        "mat2x5<float>",
        "float[][]",
        "vec4<float",
        "int",
        "",
    ] {
        assert!(bad.parse::<DataType>().is_err(), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// EXPECT semantics (AmberScript "Expectations"; Amber's verifier)

#[test]
fn values_are_converted_to_the_component_type_before_comparing() {
    use Comparator::*;
    // Integers wrap: -1 is all ones in an unsigned type; comparisons follow the type's sign.
    assert!(holds(
        Scalar::U8,
        Value::Int(255),
        Literal::Int(-1),
        Eq,
        None
    ));
    assert!(holds(
        Scalar::U32,
        Value::Int(5),
        Literal::Int(-1),
        Lt,
        None
    ));
    assert!(!holds(
        Scalar::I32,
        Value::Int(5),
        Literal::Int(-1),
        Lt,
        None
    ));
    assert!(holds(
        Scalar::I64,
        Value::Int(i64::MIN as i128),
        Literal::Int(i64::MIN as i128),
        Le,
        None
    ));
    // Floats round to the type: 0.1 as f32 equals the f32 nearest 0.1.
    assert!(holds(
        Scalar::F32,
        Value::Float(0.1f32 as f64),
        Literal::Float(0.1),
        Eq,
        None
    ));
    assert!(holds(
        Scalar::F16,
        Value::Float(half::f16::from_f64(0.1).to_f64()),
        Literal::Float(0.1),
        Eq,
        None
    ));
}

#[test]
fn float_eq_allows_a_millionth_of_a_percent_and_ne_is_its_negation() {
    use Comparator::*;
    // Amber's kEpsilon: |a - e| <= 0.000001 / 100 * |e|.
    let e = 1000.0;
    assert!(holds(
        Scalar::F64,
        Value::Float(e + 0.9e-5),
        Literal::Float(e),
        Eq,
        None
    ));
    assert!(!holds(
        Scalar::F64,
        Value::Float(e + 1.1e-5),
        Literal::Float(e),
        Eq,
        None
    ));
    assert!(holds(
        Scalar::F64,
        Value::Float(e + 1.1e-5),
        Literal::Float(e),
        Ne,
        None
    ));
    assert!(!holds(
        Scalar::F64,
        Value::Float(e),
        Literal::Float(e),
        Ne,
        None
    ));
    // Expected 0: only zeros pass.
    assert!(holds(
        Scalar::F32,
        Value::Float(-0.0),
        Literal::Int(0),
        Eq,
        None
    ));
    assert!(!holds(
        Scalar::F32,
        Value::Float(1e-30),
        Literal::Int(0),
        Eq,
        None
    ));
    // A NaN never equals, and only NE holds for it.
    for c in [Eq, Lt, Le, Gt, Ge] {
        assert!(
            !holds(
                Scalar::F32,
                Value::Float(f64::NAN),
                Literal::Int(1),
                c,
                None
            ),
            "{c:?}"
        );
    }
    assert!(holds(
        Scalar::F32,
        Value::Float(f64::NAN),
        Literal::Int(1),
        Ne,
        None
    ));
}

#[test]
fn tolerance_is_absolute_or_a_percentage_of_the_expected_value() {
    let abs = Tolerance::absolute(0.5);
    let pct = Tolerance::percent(10.0);
    let eq = Comparator::Eq;
    assert!(holds(
        Scalar::F32,
        Value::Float(10.5),
        Literal::Int(10),
        eq,
        Some(abs)
    ));
    assert!(!holds(
        Scalar::F32,
        Value::Float(10.6),
        Literal::Int(10),
        eq,
        Some(abs)
    ));
    assert!(holds(
        Scalar::F32,
        Value::Float(-11.0),
        Literal::Int(-10),
        eq,
        Some(pct)
    ));
    assert!(!holds(
        Scalar::F32,
        Value::Float(-11.5),
        Literal::Int(-10),
        eq,
        Some(pct)
    ));
    // Integers under a tolerance are compared as numbers too.
    assert!(holds(
        Scalar::I32,
        Value::Int(-7),
        Literal::Int(-5),
        eq,
        Some(Tolerance::absolute(2.0))
    ));
}

/// A fake backend: each shader name maps to a Rust closure over the dispatch's buffers.
type Kernel = Box<dyn Fn(&Dispatch<'_>, &mut [Vec<u8>]) -> Vec<Vec<Annotation>>>;

struct Fake {
    kind: BackendKind,
    forced: Option<Mode>,
    reports: Option<Mode>,
    kernels: HashMap<String, Kernel>,
    lacks: Option<&'static str>,
    fail: Option<BackendError>,
    dispatched: Vec<(String, [u32; 3])>,
}

impl Fake {
    fn new(kind: BackendKind) -> Self {
        Fake {
            kind,
            forced: None,
            reports: (kind == BackendKind::Model).then_some(Mode::Base),
            kernels: HashMap::new(),
            lacks: None,
            fail: None,
            dispatched: Vec::new(),
        }
    }

    fn kernel(
        mut self,
        name: &str,
        f: impl Fn(&Dispatch<'_>, &mut [Vec<u8>]) -> Vec<Vec<Annotation>> + 'static,
    ) -> Self {
        self.kernels.insert(name.to_string(), Box::new(f));
        self
    }
}

impl Backend for Fake {
    fn kind(&self) -> BackendKind {
        self.kind
    }
    fn forced_mode(&self) -> Option<Mode> {
        self.forced
    }
    fn requirements(&self, script: &Script) -> Result<(), Unsupported> {
        match (
            self.lacks,
            script
                .device_features
                .iter()
                .find(|f| Some(f.name.as_str()) == self.lacks),
        ) {
            (Some(_), Some(f)) => Err(Unsupported {
                line: Some(f.line),
                command: "DEVICE_FEATURE".into(),
                reason: format!("the device lacks {}", f.name),
                graphics: false,
            }),
            _ => Ok(()),
        }
    }
    fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError> {
        if let Some(e) = &self.fail {
            return Err(e.clone());
        }
        self.dispatched
            .push((d.pipeline.name.clone(), d.workgroups));
        let mut bufs: Vec<Vec<u8>> = d.buffers.iter().map(|b| b.bytes.to_vec()).collect();
        let annotations = match self.kernels.get(&d.shader.name) {
            Some(k) => k(d, &mut bufs),
            None => vec![Vec::new(); bufs.len()],
        };
        Ok(DispatchOutput {
            buffers: bufs,
            annotations,
            mode: self.forced.or(self.reports),
        })
    }
}

/// The buffer bound at (set 0, `binding`).
fn at(d: &Dispatch<'_>, binding: u32) -> usize {
    d.bindings
        .iter()
        .find(|b| b.kind.slot() == Some((0, binding)))
        .unwrap()
        .buffer
}

fn push(d: &Dispatch<'_>) -> usize {
    d.bindings
        .iter()
        .find(|b| b.kind == BindingKind::PushConstant)
        .unwrap()
        .buffer
}

fn get_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

fn set_u32(b: &mut [u8], i: usize, v: u32) {
    b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_f32(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn set_f32(b: &mut [u8], at: usize, v: f32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn invocations(d: &Dispatch<'_>, local: u32) -> usize {
    (d.workgroups[0] * local) as usize
}

/// The kernels of tests/amber/{compute_basics,layouts,spirv_asm,spirv_hex}.amber, in Rust.
fn emulator() -> Fake {
    Fake::new(BackendKind::Model)
        .kernel("add", |d, b| {
            let (a, bb, c) = (at(d, 0), at(d, 1), at(d, 2));
            for i in 0..invocations(d, 4) {
                let v = get_u32(&b[a], i) + get_u32(&b[bb], i);
                set_u32(&mut b[c], i, v);
            }
            vec![Vec::new(); b.len()]
        })
        .kernel("bump", |d, b| {
            let (c, p) = (at(d, 0), push(d));
            let step = get_u32(&b[p], 0);
            for i in 0..invocations(d, 8) {
                let v = get_u32(&b[c], i) + step;
                set_u32(&mut b[c], i, v);
            }
            vec![Vec::new(); b.len()]
        })
        .kernel("scale", |d, b| {
            let (k, v, w, s) = (at(d, 0), at(d, 1), at(d, 2), at(d, 3));
            for i in 0..invocations(d, 4) {
                // std140 float[]: stride 16; vec3: stride 16; vec2: stride 8.
                let ki = get_f32(&b[k], 16 * i);
                let vi: Vec<f32> = (0..3).map(|c| get_f32(&b[v], 16 * i + 4 * c)).collect();
                for (c, x) in vi.iter().enumerate() {
                    set_f32(&mut b[s], 16 * i + 4 * c, x * ki);
                }
                set_f32(&mut b[w], 8 * i, vi[0] + vi[1]);
                set_f32(&mut b[w], 8 * i + 4, vi[2] * 0.5);
            }
            vec![Vec::new(); b.len()]
        })
        .kernel("times_k", |d, b| {
            assert_eq!(d.pipeline.entry_point, "times_k");
            assert_eq!(d.script.shaders[d.pipeline.shader].name, "times_k");
            let k = d.pipeline.specializations[0].bits;
            let o = at(d, 0);
            for i in 0..invocations(d, 4) {
                set_u32(&mut b[o], i, i as u32 * k);
            }
            vec![Vec::new(); b.len()]
        })
}

#[test]
fn our_scripts_pass_with_their_kernels_emulated() {
    for name in [
        "compute_basics.amber",
        "layouts.amber",
        "spirv_asm.amber",
        "spirv_hex.amber",
    ] {
        let s = script(name);
        let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(emulator())];
        let r = run_parsed(name, &s, &mut backends);
        assert_eq!(r.status, FileStatus::Pass, "{}", report::file_text(&r));
        assert_eq!(r.runs[0].expects.len(), s.expects().len());
        assert!(r.runs[0].expects.iter().all(|v| v.status == Status::Pass));
    }
}

#[test]
fn a_wrong_kernel_fails_the_expects_it_breaks_and_names_the_elements() {
    let s = script("compute_basics.amber");
    let wrong = emulator().kernel("add", |d, b| {
        let c = at(d, 2);
        for i in 0..invocations(d, 4) {
            set_u32(&mut b[c], i, 11 + 2 * i as u32 + (i == 5) as u32);
        }
        vec![Vec::new(); b.len()]
    });
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(wrong)];
    let r = run_parsed("x", &s, &mut backends);
    assert_eq!(r.status, FileStatus::Fail);
    let v = &r.runs[0].expects;
    let by_line = |l: usize| v.iter().find(|x| x.line == l).unwrap();
    assert_eq!(by_line(62).status, Status::Pass);
    assert_eq!(by_line(63).status, Status::Fail);
    assert_eq!(
        by_line(63).why.as_deref(),
        Some("c[5] = 22, expected == 21")
    );
    assert_eq!(by_line(69).status, Status::Fail);
    assert_eq!(
        by_line(69).why.as_deref(),
        Some("c[5] = 22, expected[5] = 21")
    );
    assert_eq!(r.reason.as_deref(), Some("model (base): 2 EXPECTs failed"));
}

#[test]
fn repeat_runs_its_body_count_times_and_buffers_persist() {
    let s = script("compute_basics.amber");
    let mut fake = emulator();
    let r = run_script(&s, &mut fake);
    let runs: Vec<&str> = fake.dispatched.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(runs, ["add_pipe", "bump_pipe", "bump_pipe", "bump_pipe"]);
    assert_eq!(fake.dispatched[1].1, [2, 1, 1]);
    assert_eq!(r.dispatches, 4);
    // One verdict per EXPECT line, the REPEATed one included once.
    assert_eq!(r.expects.len(), 14);
}

fn ann(bytes: std::ops::Range<usize>, kind: AnnotationKind, why: &str) -> Annotation {
    Annotation {
        bytes,
        kind,
        why: why.to_string(),
    }
}

const ANNOTATED: &str = "#!amber
SHADER compute k GLSL
#version 450
void main() {}
END
BUFFER out DATA_TYPE uint32 SIZE 8 FILL 0
BUFFER ref DATA_TYPE uint32 SIZE 8 FILL 0
BUFFER copy DATA_TYPE uint32 SIZE 8 FILL 0
PIPELINE compute p
  ATTACH k
  BIND BUFFER out AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT out IDX 0 EQ 0 0
EXPECT out IDX 8 EQ 0 0
EXPECT out IDX 16 EQ 1 0 0 0
EXPECT out EQ_BUFFER ref
EXPECT ref EQ_BUFFER out
COPY out TO copy
EXPECT copy IDX 8 EQ 0
EXPECT out RMSE_BUFFER ref TOLERANCE 100
";

#[test]
fn expects_on_annotated_bytes_are_undefined_with_the_chain_unless_a_defined_one_fails() {
    let s = parse(ANNOTATED).unwrap();
    let chain = "out[2] ← OpStore k.comp:4 ← subgroupShuffle k.comp:3: source lane 9 is inactive";
    let fake = Fake::new(BackendKind::Model).kernel("k", move |_, b| {
        let mut a = vec![Vec::new(); b.len()];
        a[0] = vec![ann(8..12, AnnotationKind::Undefined, chain)];
        a
    });
    let r = run_script(&s, &mut { fake });
    let v = |l: usize| r.expects.iter().find(|x| x.line == l).unwrap().clone();
    assert_eq!(v(14).status, Status::Pass); // bytes 0..8: not annotated
    assert_eq!(v(15).status, Status::Undefined);
    assert_eq!(v(15).why.unwrap(), format!("out[2] is undefined: {chain}"));
    // Element 4 is defined and wrong: that is a failure whatever the undefined ones hold.
    assert_eq!(v(16).status, Status::Fail);
    // EQ_BUFFER: annotations of either buffer count.
    assert_eq!(v(17).status, Status::Undefined);
    assert_eq!(v(18).status, Status::Undefined);
    assert!(v(18).why.unwrap().starts_with("out[2] is undefined"));
    // COPY carries the annotations along.
    assert_eq!(v(20).status, Status::Undefined);
    assert_eq!(v(21).status, Status::Undefined);
    assert_eq!(r.status, RunStatus::Fail);
}

#[test]
fn order_dependent_and_inexact_bytes_are_not_compared_either() {
    let s = parse(ANNOTATED).unwrap();
    for kind in [AnnotationKind::OrderDependent, AnnotationKind::Inexact] {
        let fake = Fake::new(BackendKind::Model).kernel("k", move |_, b| {
            let mut a = vec![Vec::new(); b.len()];
            a[0] = vec![ann(12..14, kind, "atomicAdd k.comp:7 returned value")];
            a
        });
        let r = run_script(&s, &mut { fake });
        let v = r.expects.iter().find(|x| x.line == 15).unwrap();
        assert_eq!(v.status, Status::Undefined);
        assert_eq!(
            v.why.as_deref(),
            Some(
                format!(
                    "out[3] is {}: atomicAdd k.comp:7 returned value",
                    kind.name()
                )
                .as_str()
            )
        );
    }
}

#[test]
fn a_model_run_without_failures_but_with_undefined_expects_is_undefined_and_the_file_fails() {
    let s = parse(
        "#!amber
SHADER compute k GLSL
#version 450
void main() {}
END
BUFFER out DATA_TYPE uint32 SIZE 6 FILL 0
PIPELINE compute p
  ATTACH k
  BIND BUFFER out AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT out IDX 0 EQ 0 0 0 0 0 0
",
    )
    .unwrap();
    let mut model = Fake::new(BackendKind::Model).kernel("k", |_, b| {
        let mut a = vec![Vec::new(); b.len()];
        a[0] = vec![ann(
            0..24,
            AnnotationKind::Undefined,
            "subgroupElect k.comp:5: the tangle is not pinned down under base",
        )];
        a
    });
    model.forced = Some(Mode::Base);
    let device = Fake::new(BackendKind::Device);
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(device), Box::new(model)];
    let r = run_parsed("f", &s, &mut backends);
    assert_eq!(r.runs[0].status, RunStatus::Pass);
    assert_eq!(r.runs[1].status, RunStatus::Undefined);
    assert_eq!(r.runs[1].label(), "model (base)");
    assert_eq!(r.status, FileStatus::Fail);
    assert_eq!(
        r.reason.as_deref(),
        Some("model (base): 1 EXPECT undefined")
    );
    let why = r.runs[1].expects[0].why.as_deref().unwrap();
    assert!(
        why.starts_with("out[0] is undefined: subgroupElect"),
        "{why}"
    );
    assert!(
        why.ends_with("; 6 of 6 components not pinned down"),
        "{why}"
    );
}

#[test]
fn verdicts_inside_repeat_name_the_first_failing_iteration() {
    let s = parse(
        "#!amber
SHADER compute k GLSL
#version 450
void main() {}
END
BUFFER n DATA_TYPE uint32 SIZE 1 FILL 0
PIPELINE compute p
  ATTACH k
  BIND BUFFER n AS storage DESCRIPTOR_SET 0 BINDING 0
END
REPEAT 4
  RUN p 1 1 1
  EXPECT n IDX 0 LT 3
END
",
    )
    .unwrap();
    let mut fake = Fake::new(BackendKind::Device).kernel("k", |_, b| {
        let v = get_u32(&b[0], 0) + 1;
        set_u32(&mut b[0], 0, v);
        vec![Vec::new(); b.len()]
    });
    let r = run_script(&s, &mut fake);
    assert_eq!(r.expects.len(), 1);
    assert_eq!(r.expects[0].status, Status::Fail);
    assert_eq!(
        r.expects[0].why.as_deref(),
        Some("REPEAT iteration 3 of 4: n[0] = 3, expected < 3")
    );
}

#[test]
fn multiple_tolerances_apply_per_component_and_a_single_one_to_all() {
    let s = parse(
        "#!amber
BUFFER v DATA_TYPE vec3<float> DATA 10 20 30 END
EXPECT v IDX 0 TOLERANCE 1 EQ 11 21 31
EXPECT v IDX 0 TOLERANCE 1 10% EQ 11 22 30
EXPECT v IDX 0 TOLERANCE 1 10% EQ 11 22 30.1
EXPECT v IDX 0 TOLERANCE 0.5 EQ 11 20 30
",
    )
    .unwrap();
    let r = run_script(&s, &mut Fake::new(BackendKind::Device));
    let st: Vec<Status> = r.expects.iter().map(|v| v.status).collect();
    // z falls back to Amber's default (0.000001 %) when only two tolerances are given.
    assert_eq!(st, [Status::Pass, Status::Pass, Status::Fail, Status::Fail]);
    assert_eq!(
        r.expects[2].why.as_deref(),
        Some("v[0].z = 30, expected == 30.100000381469727 within 0.000001%")
    );
    assert_eq!(
        r.expects[3].why.as_deref(),
        Some("v[0].x = 10, expected == 11 within 0.5")
    );
}

#[test]
fn rmse_buffer_compares_the_root_mean_square_error_with_the_tolerance() {
    let s = parse(
        "#!amber
BUFFER a DATA_TYPE int32 DATA 0 0 0 0 END
BUFFER b DATA_TYPE int32 DATA 1 -1 1 -1 END
BUFFER c DATA_TYPE int32 DATA 3 0 0 0 END
EXPECT a RMSE_BUFFER b TOLERANCE 1
EXPECT a RMSE_BUFFER c TOLERANCE 1.49
EXPECT a RMSE_BUFFER c TOLERANCE 1.5
",
    )
    .unwrap();
    let r = run_script(&s, &mut Fake::new(BackendKind::Device));
    let st: Vec<Status> = r.expects.iter().map(|v| v.status).collect();
    assert_eq!(st, [Status::Pass, Status::Fail, Status::Pass]);
    assert_eq!(
        r.expects[1].why.as_deref(),
        Some("root mean square error of a vs c is 1.5, above the tolerance 1.49")
    );
}

#[test]
fn eq_buffer_compares_bits_and_counts_the_differences() {
    let s = parse(
        "#!amber
BUFFER a DATA_TYPE float SIZE 8 FILL 0.0
BUFFER b DATA_TYPE float DATA -0.0 1 2 3 4 5 0 0 END
EXPECT a EQ_BUFFER b
",
    )
    .unwrap();
    let r = run_script(&s, &mut Fake::new(BackendKind::Device));
    assert_eq!(r.expects[0].status, Status::Fail);
    assert_eq!(
        r.expects[0].why.as_deref(),
        Some("a[0] = 0, b[0] = -0; a[1] = 0, b[1] = 1; a[2] = 0, b[2] = 2; a[3] = 0, b[3] = 3; 6 of 8 components differ")
    );
}

// ---------------------------------------------------------------------------------------------
// Runs and files

#[test]
fn a_missing_feature_makes_the_run_unsupported_naming_it_and_the_file_too() {
    let s = script("subgroup_size_control.amber");
    let mut dev = Fake::new(BackendKind::Device);
    dev.lacks = Some("SubgroupSizeControl.computeFullSubgroups");
    let model = Fake::new(BackendKind::Model);
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(dev), Box::new(model)];
    let r = run_parsed("f", &s, &mut backends);
    assert_eq!(r.runs[0].status, RunStatus::Unsupported);
    assert_eq!(r.runs[0].dispatches, 0);
    // The model copies FILL 7 and finds it unequal to 1: but the device's unsupported run does not
    // hide a failure: the file fails.
    assert_eq!(r.runs[1].status, RunStatus::Fail);
    assert_eq!(r.status, FileStatus::Fail);
    let only_device: Vec<Box<dyn Backend>> = vec![Box::new({
        let mut d = Fake::new(BackendKind::Device);
        d.lacks = Some("SubgroupSizeControl.computeFullSubgroups");
        d
    })];
    let r = run_parsed("f", &s, &mut { only_device });
    assert_eq!(r.status, FileStatus::Unsupported);
    assert_eq!(
        r.reason.as_deref(),
        Some("device: line 5: DEVICE_FEATURE: the device lacks SubgroupSizeControl.computeFullSubgroups")
    );
    assert_eq!(exit_code(&[r]), 0);
}

#[test]
fn backend_errors_stop_the_run_with_their_class() {
    let s = script("compute_basics.amber");
    let cases = [
        (
            BackendError::Unsupported("shaderInt8 is not supported".into()),
            RunStatus::Unsupported,
            None,
            "line 61: RUN add_pipe: shaderInt8 is not supported",
        ),
        (
            BackendError::BadInput {
                line: Some(12),
                message: "GLSL: 'x' undeclared".into(),
            },
            RunStatus::Error,
            Some(ErrorClass::BadInput),
            "line 12: GLSL: 'x' undeclared",
        ),
        (
            BackendError::BadInput {
                line: None,
                message: "binding 3 is not in the shader".into(),
            },
            RunStatus::Error,
            Some(ErrorClass::BadInput),
            "line 61: RUN add_pipe: binding 3 is not in the shader",
        ),
        (
            BackendError::Failed("device lost".into()),
            RunStatus::Error,
            Some(ErrorClass::Backend),
            "line 61: RUN add_pipe: device lost",
        ),
    ];
    for (e, status, class, reason) in cases {
        let mut f = Fake::new(BackendKind::Device);
        f.fail = Some(e);
        let r = run_script(&s, &mut f);
        assert_eq!((r.status, r.error), (status, class));
        assert_eq!(r.reason.as_deref(), Some(reason));
        // The EXPECTs before the first RUN were still checked.
        assert_eq!(r.expects.len(), 4);
    }
}

#[test]
fn a_backend_returning_the_wrong_sizes_is_a_backend_error() {
    let s = script("compute_basics.amber");
    let mut f = Fake::new(BackendKind::Device).kernel("add", |_, b| {
        b[2].push(0);
        vec![Vec::new(); b.len()]
    });
    let r = run_script(&s, &mut f);
    assert_eq!(
        (r.status, r.error),
        (RunStatus::Error, Some(ErrorClass::Backend))
    );
    assert!(r.reason.unwrap().contains("65 bytes for buffer c of 64"));
    let mut f = Fake::new(BackendKind::Model).kernel("add", |_, b| {
        let mut a = vec![Vec::new(); b.len()];
        a[0] = vec![ann(60..68, AnnotationKind::Undefined, "x")];
        a
    });
    let r = run_script(&s, &mut f);
    assert!(r
        .reason
        .unwrap()
        .contains("an annotation of bytes 60..68 outside buffer a (64 bytes)"));
}

#[test]
fn the_model_run_reports_the_strongest_mode_its_pipelines_declared() {
    let s = script("compute_basics.amber");
    struct Modes(Fake);
    impl Backend for Modes {
        fn kind(&self) -> BackendKind {
            BackendKind::Model
        }
        fn forced_mode(&self) -> Option<Mode> {
            None
        }
        fn requirements(&self, s: &Script) -> Result<(), Unsupported> {
            self.0.requirements(s)
        }
        fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError> {
            let mut out = self.0.dispatch(d)?;
            out.mode = Some(if d.pipeline.name == "bump_pipe" {
                Mode::Sucf
            } else {
                Mode::Base
            });
            Ok(out)
        }
    }
    let r = run_script(&s, &mut Modes(emulator()));
    assert_eq!(r.mode, Some(Mode::Sucf));
    assert_eq!(
        r.pipeline_modes,
        vec![
            ("add_pipe".to_string(), Mode::Base),
            ("bump_pipe".to_string(), Mode::Sucf)
        ]
    );
    let mut forced = emulator();
    forced.forced = Some(Mode::Maximal);
    assert_eq!(run_script(&s, &mut forced).mode, Some(Mode::Maximal));
    assert_eq!(
        run_script(&s, &mut Fake::new(BackendKind::Device)).mode,
        None
    );
}

#[test]
fn exit_codes_rank_bad_input_over_backend_errors_over_failures() {
    let f = |status, error| FileReport::not_run("x", status, "r".into(), error);
    use FileStatus::*;
    assert_eq!(exit_code(&[f(Pass, None), f(Unsupported, None)]), 0);
    assert_eq!(exit_code(&[f(Pass, None), f(Fail, None)]), 1);
    assert_eq!(
        exit_code(&[f(Fail, None), f(Error, Some(ErrorClass::Backend))]),
        70
    );
    assert_eq!(
        exit_code(&[
            f(Error, Some(ErrorClass::Backend)),
            f(Error, Some(ErrorClass::BadInput))
        ]),
        64
    );
}

// ---------------------------------------------------------------------------------------------
// Reports

fn sample_reports() -> Vec<FileReport> {
    let s = script("compute_basics.amber");
    let mut backends: Vec<Box<dyn Backend>> = vec![
        Box::new(Fake::new(BackendKind::Device)),
        Box::new(emulator()),
    ];
    let failing = run_parsed("tests/amber/compute_basics.amber", &s, &mut backends);
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(emulator())];
    let passing = run_parsed("tests/amber/compute_basics.amber", &s, &mut backends);
    let graphics = *parse_file("g.amber", "#!amber\nPIPELINE graphics g\nEND\n").unwrap_err();
    let bad = *parse_file(
        "bad.amber",
        "#!amber\nBUFFER b DATA_TYPE vec5<float> SIZE 1 FILL 0\n",
    )
    .unwrap_err();
    vec![failing, passing, graphics, bad]
}

#[test]
fn the_json_report_has_the_documented_shape() {
    let files = sample_reports();
    let j = json(&files, 1.5);
    let f = &j["files"];
    assert_eq!(f[0]["file"], "tests/amber/compute_basics.amber");
    assert_eq!(f[0]["status"], "fail");
    assert_eq!(f[0]["runs"][0]["backend"], "device");
    assert_eq!(f[0]["runs"][0]["mode"], serde_json::Value::Null);
    assert_eq!(f[0]["runs"][0]["status"], "fail");
    assert_eq!(f[0]["runs"][1]["backend"], "model");
    assert_eq!(f[0]["runs"][1]["mode"], "base");
    assert_eq!(f[0]["runs"][1]["status"], "pass");
    let e = &f[0]["runs"][0]["expects"][4];
    assert_eq!(e["line"], 62);
    assert_eq!(e["status"], "fail");
    assert_eq!(e["why"], "c[0] = 0, expected == 11; c[1] = 0, expected == 13; c[2] = 0, expected == 15; c[3] = 0, expected == 17");
    assert_eq!(
        f[0]["runs"][1]["expects"][4]["why"],
        serde_json::Value::Null
    );
    assert_eq!(f[1]["status"], "pass");
    assert_eq!(f[1]["reason"], serde_json::Value::Null);
    assert_eq!(f[2]["status"], "unsupported");
    assert_eq!(
        f[2]["reason"],
        "graphics: line 2: PIPELINE graphics (graphics pipelines)"
    );
    assert_eq!(f[2]["runs"], serde_json::json!([]));
    assert_eq!(f[3]["status"], "error");
    assert_eq!(
        f[3]["reason"],
        "line 2: BUFFER: invalid data type 'vec5<float>' provided"
    );
    let s = &j["summary"];
    assert_eq!(
        (s["files"].as_u64(), s["pass"].as_u64(), s["fail"].as_u64()),
        (Some(4), Some(1), Some(1))
    );
    assert_eq!(
        (s["unsupported"].as_u64(), s["error"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(s["runs"], 3);
    assert_eq!(
        s["expects"]["pass"].as_u64().unwrap() + s["expects"]["fail"].as_u64().unwrap(),
        42
    );
    assert_eq!(s["seconds"], 1.5);
    let sum = summarize(&files);
    assert_eq!(sum.expects_undefined, 0);
}

#[test]
fn the_junit_report_counts_per_file_and_escapes() {
    let x = junit(&sample_reports(), 0.25);
    assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep amber\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"0.250\">"), "{x}");
    assert!(x.contains("<testsuite name=\"tests/amber/compute_basics.amber\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\">"));
    assert!(x.contains("<testcase classname=\"g.amber\" name=\"parse\"><skipped message=\"unsupported: graphics: line 2: PIPELINE graphics (graphics pipelines)\"/></testcase>"));
    assert!(x.contains("&apos;vec5&lt;float&gt;&apos;"));
    assert!(x.contains("<failure message=\"7 of 14 EXPECTs did not pass\">line 62: fail: c[0] = 0"));
    assert_eq!(
        x.matches("<testsuite ").count(),
        x.matches("</testsuite>").count()
    );
}

#[test]
fn the_text_report_tables_expects_by_run_and_explains_the_failures() {
    let t = report::file_text(&sample_reports()[0]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "tests/amber/compute_basics.amber: fail — device: 7 EXPECTs failed"
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["line", "expect", "device", "model", "(base)"]
    );
    assert!(lines
        .iter()
        .any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["62", "EXPECT", "c", "IDX", "0", "EQ", "11", "13", "15", "17", "fail", "pass"]));
    assert!(
        t.contains("  line 75 device: fail — c[0] = 0, expected == 26; c[1] = 0, expected == 28\n"),
        "{t}"
    );
}

#[test]
fn reports_are_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.xml");
    report::write_atomic(&p, "one").unwrap();
    report::write_atomic(&p, "two").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
    assert!(report::write_atomic(&dir.path().join("no/such/dir/r.xml"), "x").is_err());
}

// ---------------------------------------------------------------------------------------------
// The Vulkan CTS's own scripts (not in the repository; CI has no /work/shared)

#[test]
fn the_cts_subgroup_uniform_control_flow_scripts_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/cts-amber-small");
    let dir = if dir.is_dir() {
        dir
    } else {
        PathBuf::from("/work/shared/cts-amber-small")
    };
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED: no CTS scripts at {} (CI has no /work/shared); 0 files parsed",
            dir.display()
        );
        return;
    }
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "amber") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let s = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(s.shaders.len(), 2, "{}", p.display());
        assert!(s.shaders.iter().all(|s| s.format == ShaderFormat::Glsl
            && s.target_env == Some(lockstep::kernel::TargetEnv::Vulkan1_1)));
        assert_eq!(s.pipelines.len(), 2);
        assert!(s
            .expects()
            .iter()
            .any(|e| matches!(e.kind, ExpectKind::EqBuffer { .. })));
        n += 1;
    }
    assert_eq!(n, 42, "the small/ folder has 42 scripts");
    eprintln!("parsed {n} CTS scripts from {}", dir.display());
}

// ---------------------------------------------------------------------------------------------
// Mutated scripts: the reader and the runner never panic

const VOCAB: &[&str] = &[
    "#!amber",
    "SHADER",
    "compute",
    "GLSL",
    "SPIRV-HEX",
    "SPIRV-ASM",
    "END",
    "BUFFER",
    "DATA_TYPE",
    "FORMAT",
    "SIZE",
    "FILL",
    "SERIES_FROM",
    "INC_BY",
    "DATA",
    "STD140",
    "STD430",
    "PIPELINE",
    "ATTACH",
    "ENTRY_POINT",
    "SPECIALIZE",
    "AS",
    "BIND",
    "storage",
    "uniform",
    "push_constant",
    "DESCRIPTOR_SET",
    "BINDING",
    "SUBGROUP",
    "REQUIRED_SIZE",
    "RUN",
    "COPY",
    "TO",
    "EXPECT",
    "IDX",
    "EQ",
    "NE",
    "LT",
    "TOLERANCE",
    "EQ_BUFFER",
    "RMSE_BUFFER",
    "REPEAT",
    "DERIVE_PIPELINE",
    "FROM",
    "vec3<float>",
    "mat2x2<float>",
    "float[]",
    "int8",
    "double",
    "float16",
    "R32_UINT",
    "0",
    "1",
    "-1",
    "4294967296",
    "0xffffffff",
    "1e308",
    "-0.0",
    "3%",
    "%",
    "\\",
    "#",
    "\n",
    "\t",
    "é",
    "65536",
    "18446744073709551616",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, usize),
    ReplaceToken(usize, usize),
    DuplicateLine(usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, v)| Mutation::Insert(a, v)),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, v)| Mutation::ReplaceToken(a, v)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn boundary(s: &str, at: usize) -> usize {
    let mut i = at % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(s: String, m: &Mutation) -> String {
    let mut s = s;
    match *m {
        Mutation::Delete(a, n) => {
            let i = boundary(&s, a);
            let j = boundary(&s, (i + n).min(s.len()));
            s.replace_range(i..j.max(i), "");
        }
        Mutation::Insert(a, v) => {
            let i = boundary(&s, a);
            s.insert_str(i, &format!(" {} ", VOCAB[v]));
        }
        Mutation::ReplaceToken(a, v) => {
            let words: Vec<&str> = s.split(' ').collect();
            let k = a % words.len();
            let mut w: Vec<String> = words.iter().map(|x| x.to_string()).collect();
            w[k] = VOCAB[v].to_string();
            s = w.join(" ");
        }
        Mutation::DuplicateLine(a) => {
            let mut lines: Vec<&str> = s.split('\n').collect();
            let k = a % lines.len();
            lines.insert(k, lines[k]);
            s = lines.join("\n");
        }
        Mutation::Truncate(a) => {
            let i = boundary(&s, a);
            s.truncate(i);
        }
    }
    s
}

/// The reader and the runner on mutated copies of our scripts: never a panic; errors name a line
/// inside the text. The counts prove the property exercised every outcome, not zero cases.
#[test]
fn mutated_scripts_never_panic_the_reader_or_the_runner() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;
    let bases: Vec<String> = ours().into_iter().map(|(_, t)| t).collect();
    let (ran, errors, unsupported) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let mut runner = TestRunner::new(Config {
        cases: 512,
        ..Config::default()
    });
    let strategy = (0..bases.len(), proptest::collection::vec(mutation(), 1..8));
    runner
        .run(&strategy, |(which, muts)| {
            let text = muts.iter().fold(bases[which].clone(), apply);
            match parse(&text) {
                Ok(s) => {
                    // Run what is cheap to run: a backend that annotates the first bytes.
                    let bytes: usize = s.buffers.iter().map(|b| b.size()).sum();
                    if s.executed_commands() <= 10_000 && bytes <= 1 << 20 {
                        let mut f = Fake::new(BackendKind::Model).kernel("add", |_, b| {
                            b.iter()
                                .map(|x| {
                                    vec![ann(0..x.len().min(3), AnnotationKind::Undefined, "u")]
                                })
                                .collect()
                        });
                        let r = run_script(&s, &mut f);
                        prop_assert!(
                            r.status != RunStatus::Error || r.error == Some(ErrorClass::BadInput)
                        );
                        ran.set(ran.get() + 1);
                    }
                }
                Err(ParseFailure::Error(e)) => {
                    prop_assert!(e.line >= 1 && e.line <= text.split('\n').count() + 1, "{e}");
                    prop_assert!(!e.command.is_empty() && !e.message.is_empty());
                    errors.set(errors.get() + 1);
                }
                Err(ParseFailure::Unsupported(u)) => {
                    prop_assert!(u.line.is_some());
                    unsupported.set(unsupported.get() + 1);
                }
            }
            Ok(())
        })
        .unwrap();
    let (r, e, u) = (ran.get(), errors.get(), unsupported.get());
    eprintln!("512 mutated scripts: {r} parsed and ran, {e} errors, {u} unsupported");
    assert!(
        r > 0 && e > 0 && u > 0,
        "{r} ran, {e} errors, {u} unsupported"
    );
}

proptest! {
    #[test]
    fn arbitrary_text_after_the_amber_line_never_panics(s in "\\PC{0,200}", t in proptest::collection::vec(0..VOCAB.len(), 0..30)) {
        let words: Vec<&str> = t.iter().map(|&i| VOCAB[i]).collect();
        let _ = parse(&format!("#!amber\n{s}\n{}", words.join(" ")));
        let _ = parse(&s);
    }
}

// ---------------------------------------------------------------------------------------------
// The command

mod cli {
    use crate::support::cmd::{Assertions, CargoBin};
    use std::process::Command;

    fn lockstep() -> Command {
        Command::cargo_bin("lockstep").unwrap()
    }

    fn ours(name: &str) -> String {
        format!("{}/tests/amber/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn a_bad_script_exits_64_naming_the_line_and_the_others_still_run() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.amber");
        std::fs::write(
            &bad,
            "#!amber\n# a comment\nBUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\nEXPECT b IDX 2 EQ 0\n",
        )
        .unwrap();
        let graphics = dir.path().join("graphics.amber");
        std::fs::write(&graphics, "#!amber\nSHADER vertex v PASSTHROUGH\n").unwrap();
        let json = dir.path().join("out.json");
        let junit = dir.path().join("out.xml");
        let out = lockstep()
            .arg("amber")
            .arg(&bad)
            .arg(&graphics)
            .arg(dir.path().join("missing.amber"))
            .arg(ours("compute_basics.amber"))
            .args(["--model-only", "--json"])
            .arg(&json)
            .arg("--junit")
            .arg(&junit)
            .assert()
            .code(64)
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("bad.amber: error — line 4: EXPECT: IDX 2 is not a multiple of the element size 4 of b"), "{stdout}");
        assert!(stdout.contains("graphics.amber: unsupported — graphics: line 2: SHADER vertex (only compute shaders are supported)"), "{stdout}");
        assert!(
            stdout.contains("missing.amber: error — cannot read"),
            "{stdout}"
        );
        // The good file still runs, on the model.
        assert!(stdout.contains("compute_basics.amber: pass"), "{stdout}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.starts_with("error: 4 files: 1 pass, 0 fail, 1 unsupported, 2 error"),
            "{stderr}"
        );
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let st: Vec<&str> = j["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["status"].as_str().unwrap())
            .collect();
        assert_eq!(st, ["error", "unsupported", "error", "pass"]);
        assert_eq!(j["files"][0]["error"], "bad_input");
        assert_eq!(j["summary"]["files"], 4);
        let x = std::fs::read_to_string(&junit).unwrap();
        assert!(
            x.contains("tests=\"4\" failures=\"0\" errors=\"2\" skipped=\"1\""),
            "{x}"
        );
    }

    #[test]
    fn an_unsupported_file_alone_exits_0() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join("g.amber");
        std::fs::write(
            &g,
            "#!amber\nBUFFER fb FORMAT B8G8R8A8_UNORM\nPIPELINE graphics p\nEND\n",
        )
        .unwrap();
        let out = lockstep()
            .arg("amber")
            .arg(&g)
            .assert()
            .success()
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("g.amber: unsupported — graphics: line 2: BUFFER (B8G8R8A8_UNORM is an image format"), "{stdout}");
    }

    #[test]
    fn mode_all_runs_the_device_and_the_model_under_every_mode() {
        let out = lockstep()
            .args(["amber", &ours("layouts.amber"), "--mode", "all"])
            .assert()
            .success()
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("layouts.amber: pass"), "{stdout}");
        assert!(
            stdout.contains("device  model (maximal)  model (sucf)  model (base)"),
            "{stdout}"
        );
    }

    #[test]
    fn bad_options_exit_64() {
        for (args, msg) in [
            (
                vec!["--mode", "weak"],
                "--mode weak: expected maximal, sucf, base or all",
            ),
            (vec!["--subgroup-size", "12"], "--subgroup-size"),
            (vec!["--device", "0", "--model-only"], "cannot be used with"),
        ] {
            let out = lockstep()
                .args(["amber", "x.amber"])
                .args(&args)
                .assert()
                .code(64)
                .get_output()
                .clone();
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(stderr.contains(msg), "{args:?}: {stderr}");
        }
        lockstep().arg("amber").assert().code(64);
        let out = lockstep()
            .args(["amber", "x.amber", "--json", "/no/such/dir/r.json"])
            .assert()
            .code(64)
            .get_output()
            .clone();
        assert!(String::from_utf8(out.stderr)
            .unwrap()
            .contains("cannot write /no/such/dir/r.json"));
    }
}

// AmberScript's scalar names (docs/amber_script.md, "Data Types": int8 … uint64, float16, float,
// double) name the model's scalar types; AmberScript has no `bool`.
#[test]
fn amber_scalar_names_are_the_model_scalar_types_and_bool_is_not_one() {
    use lockstep::model::ScalarType as T;
    let names = [
        ("int8", T::I8),
        ("int16", T::I16),
        ("int32", T::I32),
        ("int64", T::I64),
        ("uint8", T::U8),
        ("uint16", T::U16),
        ("uint32", T::U32),
        ("uint64", T::U64),
        ("float16", T::F16),
        ("float", T::F32),
        ("double", T::F64),
    ];
    for (name, t) in names {
        assert_eq!(Scalar::from_amber_name(name), Some(t), "{name}");
        assert_eq!(t.amber_name(), name);
        assert_eq!(t.size() * 8, t.bits() as usize, "{name}");
    }
    assert_eq!(Scalar::from_amber_name("bool"), None);
    assert_eq!(Scalar::from_amber_name("float32"), None);
}
