//! The library as a downstream crate meets it, and the `src/kernel` paths no other test reached
//! (issue 18: the mutation run's lines that no test executed, found by coverage): `KernelJob::check`
//! and `check_on`, SPIR-V binaries and assembly checked against the header the SPIR-V
//! specification lays out (section 2.3), buffer specs and image arrays refused with their rule, and
//! the comparison's texts. Expected values come from the rules cited at each test.
#![cfg(feature = "vulkan")]
use crate::support;
use lockstep::kernel::buffers::{BindingSpec, BufferSpec};
use lockstep::kernel::run::{JobBuffer, KernelError, KernelJob, Tolerance};
use lockstep::kernel::{
    compile, read_npy, HostBuffer, SourceError, SourceLang, SourceOptions, SpirvModule, TargetEnv,
};
use lockstep::model::{ScalarType, SubgroupSize};

/// `y[i] = x[i] + subgroupShuffleDown(x[i], 1)` over 16 invocations; with `GUARD`, the last lane
/// of each subgroup keeps `x[i]` instead.
const SHUFFLE: &str = "#version 450
#extension GL_KHR_shader_subgroup_shuffle_relative : require
layout(local_size_x = 16) in;
layout(binding = 0) readonly buffer X { uint x[]; };
layout(binding = 1) writeonly buffer Y { uint y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint s = subgroupShuffleDown(x[i], 1u);
#ifdef GUARD
    y[i] = gl_SubgroupInvocationID + 1u < gl_SubgroupSize ? x[i] + s : x[i];
#else
    y[i] = x[i] + s;
#endif
}
";

fn shuffle_job(guard: bool) -> KernelJob {
    let mut o = SourceOptions::default();
    if guard {
        o.define("GUARD").unwrap();
    }
    let module = compile(SHUFFLE, SourceLang::Glsl, &o).unwrap();
    let mut job = KernelJob::new(module);
    let x: Vec<u32> = (0..16).collect();
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&x)));
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 16])));
    job
}

/// GL_KHR_shader_subgroup, subgroupShuffleDown: the value of invocation `gl_SubgroupInvocationID +
/// delta`, undefined where that is not an active invocation of the subgroup — the last lane of each
/// subgroup with delta 1. `check` runs the model alone, `check_on` the device too; both say which
/// elements are undefined, and a guarded kernel is clean on both.
#[test]
fn check_and_check_on_report_the_lanes_a_shuffle_past_the_subgroup_leaves_undefined() {
    for size in [4u32, 8, 16] {
        let r = shuffle_job(false).check(size).unwrap();
        assert!(!r.ok(), "size {size}");
        assert!(!r.device);
        assert_eq!(r.subgroup_size, size);
        let y = &r.buffers[1];
        let subgroups = (16 / size) as usize;
        assert_eq!(
            (y.undefined, y.exact),
            (subgroups, 16 - subgroups),
            "size {size}"
        );
        let text = r.text();
        let last = format!("y[{}]", size - 1);
        assert!(
            text.contains(&last) && text.contains("subgroupShuffleDown"),
            "{text}"
        );
        let r = shuffle_job(true).check(size).unwrap();
        assert!(r.ok(), "size {size}: {}", r.text());
        assert_eq!((r.buffers[1].undefined, r.buffers[1].exact), (0, 16));
    }
    // a size that is no subgroup size: bad input
    let e = shuffle_job(true).check(3).unwrap_err();
    assert!(matches!(e, KernelError::Input(_)), "{e:?}");
    let Some(ctx) = support::shared_device() else {
        return;
    };
    let size = ctx.caps.subgroup_size;
    let mut job = shuffle_job(true);
    let r = job.check_on(ctx).unwrap();
    assert!(r.ok(), "{}", r.text());
    assert!(r.device);
    assert_eq!(r.subgroup_size, size);
    assert_eq!((r.buffers[1].exact, r.buffers[1].mismatches), (16, 0));
    let mut job = shuffle_job(false);
    let r = job.check_on(ctx).unwrap();
    assert!(!r.ok());
    let subgroups = (16 / size.min(16)) as usize;
    assert_eq!(r.buffers[1].undefined, subgroups, "{}", r.text());
    assert_eq!(r.buffers[1].mismatches, 0, "{}", r.text());
}

/// An inexact element (a division: 2.5 ULP, Vulkan's precision table) agrees with the device's
/// within the tolerance, and a NaN only with a NaN (any payload); an element the kernel never
/// writes is its initial value, compared bit for bit; each difference is named with why.
#[test]
fn a_comparison_names_what_differs_an_unwritten_element_and_a_nan_only_matches_a_nan() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(binding = 0) buffer X { float x[]; };
layout(binding = 1) buffer Y { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i] / 3.0; }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    let x = [3.0f32, f32::NAN, 6.0, 9.0];
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&x)));
    // five elements: the kernel writes four
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[7.0f32; 5])));
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|f| f.to_le_bytes()).collect() };
    let device_x = bytes(&x);
    // the model's y: 1, NaN, 2, 3, 7
    let quiet_other_nan = f32::from_bits(0x7fc0_1234);
    let agreeing = vec![
        device_x.clone(),
        bytes(&[1.000_000_1, quiet_other_nan, 2.0, 3.0, 7.0]),
    ];
    let r = job.compare(&model, Some(&agreeing), Tolerance::default());
    assert!(r.ok(), "{}", r.text());
    assert_eq!((r.buffers[1].inexact, r.buffers[1].exact), (4, 1));
    // a NaN against a number, a number against a NaN, an inexact value past the bound, and the
    // unwritten element changed
    let differing = vec![device_x, bytes(&[f32::NAN, 0.0, 2.1, 3.0, 8.0])];
    let r = job.compare(&model, Some(&differing), Tolerance::default());
    assert_eq!(r.buffers[1].mismatches, 4, "{}", r.text());
    let text = r.text();
    assert!(
        text.contains("not written by the kernel on the model (initial value)"),
        "{text}"
    );
    assert!(
        text.contains("beyond the tolerance (rel 1e-5, abs 1e-6) for an inexact value"),
        "{text}"
    );
    // a looser bound takes the 2.1 against 2 (5 %), not the NaNs or the unwritten element
    let r = job.compare(&model, Some(&differing), Tolerance::percent(10.0));
    assert_eq!(r.buffers[1].mismatches, 3, "{}", r.text());
}

/// A tolerance prints as it is written: an absolute bound, a percentage, or both.
#[test]
fn a_tolerance_prints_its_absolute_and_relative_parts() {
    assert_eq!(Tolerance::absolute(0.5).to_string(), "0.5");
    assert_eq!(Tolerance::percent(2.0).to_string(), "2%");
    assert_eq!(Tolerance::default().to_string(), "0.000001 + 0.001%");
}

/// An atomic's returned value depends on the order of the invocations (order-dependent, explained,
/// not a failure); a model-only run with only such findings passes and says so.
#[test]
fn a_model_only_run_whose_findings_are_all_explained_passes_and_says_so() {
    let src = "#version 450
layout(local_size_x = 8) in;
layout(binding = 0) buffer C { uint c; };
layout(binding = 1) buffer Y { uint y[]; };
void main() { y[gl_GlobalInvocationID.x] = atomicAdd(c, 1u); }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32])));
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 8])));
    let r = job.check(8).unwrap();
    assert!(r.ok(), "{}", r.text());
    assert_eq!(r.buffers[0].exact, 1);
    assert_eq!(r.buffers[1].order_dependent, 8);
    assert!(
        r.text()
            .contains("PASS (model only; the findings above are explained or warnings"),
        "{}",
        r.text()
    );
}

/// SPIR-V 2.3, "Physical Layout of a SPIR-V Module": word 0 the magic number, word 1 the version
/// (`0 | major | minor | 0`, high to low byte), and every module has one `OpMemoryModel` (2.4,
/// "Logical Layout"). A binary read back is the same module; each broken rule is refused naming
/// it.
#[test]
fn a_spirv_binary_is_read_back_whole_and_a_broken_header_is_refused_with_its_rule() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
    let m = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let le = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let back = SpirvModule::from_bytes(&le(&m.words), "copy.spv", None).unwrap();
    assert_eq!(back.words, m.words);
    assert_eq!(back.lang, SourceLang::SpirvBinary);
    assert_eq!(SourceLang::SpirvBinary.name(), "SPIR-V");
    assert_eq!(back.compute_entry_points(), ["main"]);
    let with_version = |v: u32| {
        let mut w = m.words.clone();
        w[1] = v;
        SpirvModule::from_bytes(&le(&w), "v.spv", None)
    };
    let v15 = with_version(0x0001_0500).unwrap();
    assert_eq!(v15.spirv_version(), (1, 5));
    assert_eq!(v15.target_env, TargetEnv::Vulkan1_2);
    let rule = |r: Result<SpirvModule, SourceError>| match r {
        Err(SourceError::Spirv { rule, .. }) => rule,
        other => panic!("{other:?}"),
    };
    // a byte outside major and minor set
    assert!(rule(with_version(0x0001_0301)).contains("malformed"));
    assert!(rule(with_version(0x0101_0300)).contains("malformed"));
    // SPIR-V 1.7 does not exist
    assert!(rule(with_version(0x0001_0700)).contains("not one lockstep knows"));
    // no OpMemoryModel (opcode 14, three words)
    let mut w = m.words.clone();
    let mut at = 5;
    while w[at] & 0xffff != 14 {
        at += (w[at] >> 16) as usize;
    }
    w.drain(at..at + 3);
    assert!(rule(SpirvModule::from_bytes(&le(&w), "n.spv", None)).contains("no OpMemoryModel"));
    // a module of one version under a target environment too old for it
    let mut w = m.words.clone();
    w[1] = 0x0001_0500;
    let e = SpirvModule::from_bytes(&le(&w), "old.spv", Some(TargetEnv::Vulkan1_1)).unwrap_err();
    assert!(
        matches!(
            e,
            SourceError::TargetTooLow {
                major: 1,
                minor: 5,
                ..
            }
        ),
        "{e:?}"
    );
    // words that are no module have no entry points
    let cut = SpirvModule {
        words: m.words[..5].to_vec(),
        ..m.clone()
    };
    assert!(cut.compute_entry_points().is_empty());
}

/// SPIR-V assembly: the version a `; Version:` comment declares must be one SPIR-V has (1.0 to
/// 1.6) and fit the target environment asked for; without one the module is SPIR-V 1.3
/// (Vulkan 1.1, the lowest environment lockstep targets).
#[test]
fn an_assembly_s_declared_version_is_checked_against_the_spec_and_the_target() {
    let asm = |version: &str| {
        format!(
            "; SPIR-V\n{version}OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n"
        )
    };
    let with = |text: &str, target: Option<TargetEnv>| {
        let o = SourceOptions {
            target_env: target,
            ..SourceOptions::default()
        };
        compile(text, SourceLang::SpirvAsm, &o)
    };
    match with(&asm("; Version: 1.9\n"), None) {
        Err(SourceError::Spirv { rule, .. }) => {
            assert!(
                rule.contains("'; Version: 1.9' is not a SPIR-V version"),
                "{rule}"
            )
        }
        other => panic!("{other:?}"),
    }
    let e = with(&asm("; Version: 1.5\n"), Some(TargetEnv::Vulkan1_1)).unwrap_err();
    assert!(
        matches!(
            e,
            SourceError::TargetTooLow {
                major: 1,
                minor: 5,
                ..
            }
        ),
        "{e:?}"
    );
    // the module is assembled for its environment: a declared 1.5 asks for Vulkan 1.2 (SPIR-V 1.5)
    let m = with(&asm("; Version: 1.5\n"), None).unwrap();
    assert_eq!(
        (m.spirv_version(), m.target_env),
        ((1, 5), TargetEnv::Vulkan1_2)
    );
    let m = with(&asm(""), None).unwrap();
    assert_eq!(
        (m.spirv_version(), m.target_env),
        ((1, 3), TargetEnv::Vulkan1_1)
    );
}

/// A buffer needs at least one element; a spec's element type is its own (a `.npy` file's is in
/// the file); a binding prints as it is written; a buffer read as another type gives nothing.
#[test]
fn buffer_specs_keep_their_rules_and_print_as_written() {
    for bad in ["zeros:u32:0", "zeros:f32:4x0", "series:u32:0x3"] {
        let e = bad.parse::<BufferSpec>().unwrap_err().to_string();
        assert!(e.contains("has a zero dimension"), "{bad}: {e}");
    }
    // the same rule for a spec made in code, not parsed
    for shape in [vec![], vec![4, 0]] {
        let spec = BufferSpec::Zeros {
            dtype: ScalarType::U32,
            shape: shape.clone(),
        };
        let e = spec.build().unwrap_err().to_string();
        assert!(e.contains("has no elements"), "{shape:?}: {e}");
    }
    // booleans are no series: a series counts 0, 1, 2, …
    assert!("series:bool:4".parse::<BufferSpec>().is_err());
    assert_eq!(
        "zeros:f16:4".parse::<BufferSpec>().unwrap().dtype(),
        Some(ScalarType::F16)
    );
    assert_eq!(
        "random:i8:2x2:7".parse::<BufferSpec>().unwrap().dtype(),
        Some(ScalarType::I8)
    );
    assert_eq!("data.npy".parse::<BufferSpec>().unwrap().dtype(), None);
    for text in ["0.1[2]=zeros:u32:4", "1.0=series:f32:8", "0.3=fill:u32:2:5"] {
        assert_eq!(text.parse::<BindingSpec>().unwrap().to_string(), text);
    }
    let b = HostBuffer::from_slice(&[1u32, 2]);
    assert_eq!(b.to_vec::<u32>(), Some(vec![1, 2]));
    assert_eq!(b.to_vec::<f32>(), None);
    assert_eq!(b.to_vec::<i32>(), None);
}

/// NEP 1 (the `.npy` format): `descr` is a dtype string as `numpy.dtype()` takes it, where the byte
/// order character may be left out (`'f4'`: the machine's order, little-endian here).
#[test]
fn an_npy_descr_without_a_byte_order_is_read_in_the_native_order() {
    let dir = tempfile::tempdir().unwrap();
    let dict = "{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }";
    let mut header = dict.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in [1.5f32, -2.0] {
        bytes.extend(v.to_le_bytes());
    }
    let p = dir.path().join("a.npy");
    std::fs::write(&p, &bytes).unwrap();
    let b = read_npy(&p).unwrap();
    assert_eq!(b.dtype, ScalarType::F32);
    assert_eq!(b.to_vec::<f32>(), Some(vec![1.5, -2.0]));
}

/// An image given as a host array: a format-less image takes the array's element type as its
/// texel component (a `bool` or 64-bit float array has none) and its last dimension as the
/// component count (Vulkan has no three-component 16-bit storage format); an image with a format
/// takes the array shape its dimensionality, layers and components make, and says which.
#[test]
fn an_image_given_as_an_array_is_refused_naming_the_shape_or_format_it_takes() {
    let run = |decl: &str, host: HostBuffer| -> String {
        let src =
            format!("#version 450\nlayout(local_size_x = 1) in;\n{decl}\nvoid main() {{ }}\n");
        let module = compile(&src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
        let mut job = KernelJob::new(module);
        job.buffers.push(JobBuffer::new(0, 0, host));
        match job.run_model(SubgroupSize::new(4).unwrap(), None) {
            Err(KernelError::Input(e)) => e,
            Err(e) => panic!("{decl}: {e:?}"),
            Ok(_) => panic!("{decl}: accepted"),
        }
    };
    let formatless = "layout(binding = 0) writeonly uniform image2D img;";
    let f64s = HostBuffer::new(ScalarType::F64, vec![2, 2], vec![0; 32]).unwrap();
    let e = run(formatless, f64s);
    assert!(e.contains("f64 is not a texel component type"), "{e}");
    let f16x3 = HostBuffer::new(ScalarType::F16, vec![2, 2, 3], vec![0; 24]).unwrap();
    let e = run(formatless, f16x3);
    assert!(
        e.contains("3 components of f16 is not a texel format"),
        "{e}"
    );
    let arrayed = "layout(binding = 0, rgba32f) writeonly uniform image2DArray img;";
    let flat = HostBuffer::new(ScalarType::F32, vec![2, 2], vec![0; 16]).unwrap();
    let e = run(arrayed, flat);
    assert!(
        e.contains("it takes [layers, height, width, components]"),
        "{e}"
    );
    // a 3-D and a 1-D image name their own dimensions (depth, height, width; width alone)
    let flat_u32 = || HostBuffer::new(ScalarType::U32, vec![2, 2], vec![0; 16]).unwrap();
    let volume = "layout(binding = 0, r32ui) writeonly uniform uimage3D img;";
    let e = run(volume, flat_u32());
    assert!(e.contains("it takes [depth, height, width]"), "{e}");
    let line = "layout(binding = 0, r32ui) writeonly uniform uimage1D img;";
    let e = run(line, flat_u32());
    assert!(e.contains("it takes [width]"), "{e}");
    let rgba = "layout(binding = 0, rgba32f) writeonly uniform image2D img;";
    let three = HostBuffer::new(ScalarType::F32, vec![2, 2, 3], vec![0; 48]).unwrap();
    let e = run(rgba, three);
    assert!(
        e.contains("has 4 components per texel, the array's last dimension is 3"),
        "{e}"
    );
}

/// A place named for an address (`@SET.BINDING[ELEMENT]`) must be a buffer the job gives.
#[test]
fn an_address_of_a_descriptor_no_buffer_is_given_for_is_refused_naming_it() {
    let src = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32])));
    assert!(job.place_of("0.1").is_ok());
    for (target, names) in [
        ("0.1[2]", "set 0 binding 1 element 2"),
        ("0.2", "set 0 binding 2"),
    ] {
        let e = job.place_of(target).unwrap_err().to_string();
        assert!(
            e.contains(&format!("no buffer is given for {names}")),
            "{e}"
        );
        if !target.contains('[') {
            assert!(!e.contains("element"), "{e}");
        }
    }
}

/// A finding that names no element (a barrier not every invocation reaches) is printed once with
/// how often it happened: once per workgroup here (Vulkan: a control barrier must be reached by
/// every invocation of the workgroup, or by none).
#[test]
fn a_finding_without_elements_says_how_often_it_happened() {
    let src = "#version 450
layout(local_size_x = 8) in;
layout(binding = 0) buffer B { uint b[]; };
void main() { uint i = gl_LocalInvocationID.x; if (i < 4u) { barrier(); } b[gl_GlobalInvocationID.x] = i; }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    for (workgroups, times) in [(1u32, ""), (3, " (3 times)")] {
        let mut job = KernelJob::new(module.clone());
        job.workgroups = [workgroups, 1, 1];
        job.buffers.push(JobBuffer::new(
            0,
            0,
            HostBuffer::from_slice(&vec![0u32; 8 * workgroups as usize]),
        ));
        let text = job.check(4).unwrap().text();
        let line = text
            .lines()
            .find(|l| l.contains("[divergent_barrier]"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            line.ends_with(&format!("every invocation of the workgroup{times}")),
            "{line}"
        );
    }
}

/// A uniform buffer (std140: an array's stride rounded up to 16 bytes, GLSL 4.60 §7.6.2.2) is
/// bound as a uniform buffer on the device and read the same on both.
#[test]
fn a_uniform_block_is_read_alike_on_the_model_and_the_device() {
    let src = "#version 450
layout(local_size_x = 8) in;
layout(std140, binding = 0) uniform U { uvec4 u[2]; };
layout(binding = 1) buffer Y { uint y[]; };
void main() { uint i = gl_LocalInvocationID.x; y[i] = u[i / 4u][i % 4u] * 2u; }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    let u: Vec<u32> = (10..18).collect();
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&u)));
    job.buffers
        .push(JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 8])));
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let y = model.run.buffers.iter().find(|b| b.binding == 1).unwrap();
    let got: Vec<u32> = y
        .bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, (10..18).map(|v| v * 2).collect::<Vec<u32>>());
    let Some(ctx) = support::shared_device() else {
        return;
    };
    let r = job.check_on(ctx).unwrap();
    assert!(r.ok(), "{}", r.text());
    assert_eq!((r.buffers[1].exact, r.buffers[1].mismatches), (8, 0));
}

/// WGSL, "Memory Views": a storage buffer holds host-shareable types, and `bool` is not one — an
/// error of naga's validator that has nothing to do with subgroups is reported as it is.
#[test]
fn a_wgsl_validation_error_is_reported_with_its_line() {
    let src = "@group(0) @binding(0) var<storage, read_write> b: bool;\n\
               @compute @workgroup_size(1)\nfn main() { b = true; }\n";
    let e = compile(src, SourceLang::Wgsl, &SourceOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, SourceError::Compile { .. }), "{e:?}");
    assert!(!text.contains("enable subgroups"), "{text}");
}

/// Executing `OpUnreachable` is undefined behaviour (SPIR-V 3.49.17: "behavior is undefined if
/// this instruction is executed"): the report names it and pins nothing down.
#[test]
fn an_executed_opunreachable_is_reported_and_fails_the_check() {
    let asm = "; SPIR-V
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid
OpExecutionMode %main LocalSize 4 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %arr ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%v3 = OpTypeVector %uint 3
%pin = OpTypePointer Input %v3
%gid = OpVariable %pin Input
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pb = OpTypePointer StorageBuffer %blk
%buf = OpVariable %pb StorageBuffer
%pu = OpTypePointer StorageBuffer %uint
%u0 = OpConstant %uint 0
%u2 = OpConstant %uint 2
%main = OpFunction %void None %fn
%l = OpLabel
%g = OpLoad %v3 %gid
%x = OpCompositeExtract %uint %g 0
%p = OpAccessChain %pu %buf %u0 %x
OpStore %p %x
%c = OpULessThan %bool %x %u2
OpSelectionMerge %m None
OpBranchConditional %c %dead %m
%dead = OpLabel
OpUnreachable
%m = OpLabel
OpReturn
OpFunctionEnd
";
    let module = compile(asm, SourceLang::SpirvAsm, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[9u32; 4])));
    let r = job.check(4).unwrap();
    assert!(!r.ok());
    let text = r.text();
    assert!(
        text.contains("[unreachable] OpUnreachable reached at block"),
        "{text}"
    );
    assert_eq!(r.buffers[0].exact, 0, "{text}");
}

/// Which entry point runs: the one named, else the module's only compute one, else the one called
/// `main`; a module with several and none named `main` needs one named, a name the module lacks is
/// refused listing what it has, and a named entry point of another stage is refused (lockstep runs
/// the GLCompute execution model, SPIR-V 3.3.3).
#[test]
fn the_entry_point_is_the_one_named_or_the_only_compute_one_and_others_are_refused() {
    use lockstep::spirv::{decode, DecodeOptions};
    let asm = "; SPIR-V
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %a \"first\"
OpEntryPoint GLCompute %b \"second\"
OpEntryPoint Fragment %f \"shade\"
OpExecutionMode %a LocalSize 2 1 1
OpExecutionMode %b LocalSize 4 1 1
OpExecutionMode %f OriginUpperLeft
%void = OpTypeVoid
%fn = OpTypeFunction %void
%a = OpFunction %void None %fn
%la = OpLabel
OpReturn
OpFunctionEnd
%b = OpFunction %void None %fn
%lb = OpLabel
OpReturn
OpFunctionEnd
%f = OpFunction %void None %fn
%lf = OpLabel
OpReturn
OpFunctionEnd
";
    let words = compile(asm, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap()
        .words;
    let with = |entry: Option<&str>| {
        decode(
            &words,
            &DecodeOptions {
                entry: entry.map(str::to_string),
                ..DecodeOptions::default()
            },
        )
    };
    assert_eq!(with(Some("second")).unwrap().local_size, [4, 1, 1]);
    assert_eq!(with(Some("first")).unwrap().local_size, [2, 1, 1]);
    let err = |entry: Option<&str>| with(entry).expect_err("refused").to_string();
    let e = err(None);
    assert!(
        e.contains("no compute entry point to pick (the module has: first (GLCompute), second (GLCompute), shade (Fragment)); name one with --entry"),
        "{e}"
    );
    let e = err(Some("third"));
    assert!(
        e.contains("no entry point named 'third' (the module has: first (GLCompute), second (GLCompute), shade (Fragment))"),
        "{e}"
    );
    let e = err(Some("shade"));
    assert!(
        e.contains("entry point 'shade' is a Fragment shader: lockstep runs compute shaders (GLCompute) only"),
        "{e}"
    );
    // one compute entry point beside another stage's: that one, whatever its name
    let one = asm
        .replace("OpEntryPoint GLCompute %b \"second\"\n", "")
        .replace("OpExecutionMode %b LocalSize 4 1 1\n", "");
    let words = compile(&one, SourceLang::SpirvAsm, &SourceOptions::default())
        .unwrap()
        .words;
    let k = decode(&words, &DecodeOptions::default()).unwrap();
    assert_eq!(k.local_size, [2, 1, 1]);
}

/// SPIR-V 3.6, RoundingModeRTZ: conversions to floating point round toward zero — the model rounds
/// to nearest even, so a module asking for it is refused as unsupported, naming the mode.
#[test]
fn a_module_that_asks_for_round_toward_zero_is_refused_naming_the_mode() {
    use lockstep::spirv::{decode, DecodeOptions};
    let src = "#version 450
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4467], 4463, 32);
layout(local_size_x = 1) in;
void main() {}
";
    let m = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let e = decode(&m.words, &DecodeOptions::default())
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("execution mode RoundingModeRTZ 32: the model rounds to nearest even"),
        "{e}"
    );
}
