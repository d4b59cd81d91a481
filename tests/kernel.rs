//! Kernel inputs (issue 9, part 1 and the buffer half of part 5): sources in every language to one
//! SPIR-V module, buffer specs, bindings and `.npy` files.
//!
//! Expected module properties come from the SPIR-V specification (header layout, section 2.3;
//! OpLine/OpSource debug instructions, 3.42.2) and the GLSL preprocessor rules; `.npy` layouts from
//! numpy's format description (NEP 1), cross-checked against ndarray-npy, an independent
//! implementation.

use lockstep::kernel::*;
use lockstep::model::ScalarType;
use rspirv::dr::Operand;
use rspirv::spirv::{Capability, ExecutionMode, Op};
use std::path::{Path, PathBuf};

fn parse(m: &SpirvModule) -> rspirv::dr::Module {
    rspirv::dr::load_words(&m.words).expect("a module that rspirv parses")
}

/// The literal LocalSize of the module's (first) entry point.
fn local_size(m: &SpirvModule) -> [u32; 3] {
    let module = parse(m);
    let em = module
        .execution_modes
        .iter()
        .find(|i| {
            matches!(
                i.operands.get(1),
                Some(Operand::ExecutionMode(ExecutionMode::LocalSize))
            )
        })
        .expect("a LocalSize execution mode");
    let v: Vec<u32> = em.operands[2..5]
        .iter()
        .map(|o| match o {
            Operand::LiteralBit32(x) => *x,
            other => panic!("{other:?}"),
        })
        .collect();
    [v[0], v[1], v[2]]
}

fn count_op(m: &SpirvModule, op: Op) -> usize {
    parse(m)
        .all_inst_iter()
        .filter(|i| i.class.opcode == op)
        .count()
}

fn has_capability(m: &SpirvModule, c: Capability) -> bool {
    parse(m)
        .capabilities
        .iter()
        .any(|i| matches!(i.operands.first(), Some(Operand::Capability(x)) if *x == c))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn opts() -> SourceOptions {
    SourceOptions::default()
}

// ---------------------------------------------------------------------------------------------
// GLSL (needs shaderc: the `vulkan` feature)

#[cfg(feature = "vulkan")]
mod glsl {
    use super::*;

    /// The module's `OpString`s (file names among them), in order.
    fn op_strings(module: &rspirv::dr::Module) -> Vec<String> {
        module
            .debug_string_source
            .iter()
            .filter(|i| i.class.opcode == Op::String)
            .filter_map(|i| match i.operands.first() {
                Some(Operand::LiteralString(s)) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    /// The text embedded for each file: OpSource's Source operand plus its OpSourceContinued pieces
    /// (SPIR-V 3.42.2), by the file's OpString name.
    fn embedded_sources(m: &SpirvModule) -> Vec<(String, String)> {
        let module = parse(m);
        let mut names = std::collections::HashMap::new();
        let mut out: Vec<(String, String)> = Vec::new();
        for i in &module.debug_string_source {
            match (i.class.opcode, i.operands.as_slice()) {
                (Op::String, [Operand::LiteralString(s)]) => {
                    names.insert(i.result_id.unwrap(), s.clone());
                }
                (Op::Source, [_, _, Operand::IdRef(f), Operand::LiteralString(t)]) => {
                    out.push((names[f].clone(), t.clone()))
                }
                (Op::SourceContinued, [Operand::LiteralString(t)]) => {
                    out.last_mut().unwrap().1.push_str(t)
                }
                _ => {}
            }
        }
        out
    }

    const EMPTY: &str = "#version 450\nlayout(local_size_x = 4) in;\nvoid main() {}\n";

    #[test]
    fn the_gray_scott_kernels_compile_with_their_includes_and_debug_lines() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/grayscott");
        for k in [
            "naive.comp",
            "subgroup_1d.comp",
            "subgroup_shared.comp",
            "subgroup_stacked.comp",
        ] {
            let m = load(&root.join(k), &opts()).unwrap_or_else(|e| panic!("{k}: {e}"));
            assert_eq!((m.lang, m.name.as_str()), (SourceLang::Glsl, k));
            // Compiles under the lowest environment: Vulkan 1.1, SPIR-V 1.3 (header word 1).
            assert_eq!(
                (m.target_env, m.spirv_version()),
                (TargetEnv::Vulkan1_1, (1, 3)),
                "{k}"
            );
            assert_eq!(m.words[0], 0x0723_0203);
            // Debug information: OpSource, OpString (file names, includes among them) and OpLine.
            let module = parse(&m);
            let strings = op_strings(&module);
            assert!(
                strings.iter().any(|s| s.ends_with("common.glsl")),
                "{k}: {strings:?}"
            );
            assert!(count_op(&m, Op::Line) > 0, "{k} has no OpLine");
            // Each file's text is embedded as it is (common.glsl has non-ASCII characters).
            let sources = embedded_sources(&m);
            assert_eq!(
                sources.len(),
                1 + strings.iter().filter(|s| s.ends_with(".glsl")).count(),
                "{k}"
            );
            for (name, text) in sources {
                assert_eq!(text, std::fs::read_to_string(&name).unwrap(), "{k}: {name}");
            }
            assert_eq!(
                m.source_text.as_deref(),
                Some(std::fs::read_to_string(root.join(k)).unwrap().as_str())
            );
            assert_eq!(m.compute_entry_points(), ["main"]);
        }
    }

    #[test]
    fn a_long_non_ascii_source_is_embedded_whole_in_pieces() {
        // 300 000 bytes of comment: more than one OpSource holds (65535 words), with a
        // multi-byte character across every possible cut.
        let comment: String = "// ".to_string() + &"Σ·−".repeat(40_000) + "\n";
        let text =
            format!("#version 450\n{comment}layout(local_size_x = 1) in;\nvoid main() {{}}\n");
        let m = compile(&text, SourceLang::Glsl, &opts()).unwrap();
        assert!(count_op(&m, Op::SourceContinued) >= 1);
        assert_eq!(embedded_sources(&m), [("kernel".to_string(), text)]);
    }

    #[test]
    fn a_relative_include_resolves_against_the_including_file() {
        let dir = tempfile::tempdir().unwrap();
        // main.comp includes sub/a.glsl, which includes b.glsl from *its own* directory (sub/).
        let main = write(
            dir.path(),
            "main.comp",
            "#version 450\n#include \"sub/a.glsl\"\nlayout(local_size_x = A * B) in;\nvoid main() {}\n",
        );
        write(
            dir.path(),
            "sub/a.glsl",
            "#include \"b.glsl\"\n#define A 3\n",
        );
        write(dir.path(), "sub/b.glsl", "#define B 5\n");
        // A decoy with the same name next to main.comp: the nested include must not pick it.
        write(dir.path(), "b.glsl", "#define B 7\n");
        let m = load(&main, &opts()).unwrap();
        assert_eq!(local_size(&m), [15, 1, 1]);
    }

    #[test]
    fn a_standard_include_looks_in_the_include_directory() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "lib/n.glsl", "#define N 6\n");
        let main = write(
            dir.path(),
            "k/main.comp",
            "#version 450\n#include <n.glsl>\nlayout(local_size_x = N) in;\nvoid main() {}\n",
        );
        let o = SourceOptions {
            include_dir: Some(dir.path().join("lib")),
            ..opts()
        };
        assert_eq!(local_size(&load(&main, &o).unwrap()), [6, 1, 1]);
        // `#include "x"` not found next to the file falls back to the include directory.
        let quoted = write(
            dir.path(),
            "k/quoted.comp",
            "#version 450\n#include \"n.glsl\"\nlayout(local_size_x = N) in;\nvoid main() {}\n",
        );
        assert_eq!(local_size(&load(&quoted, &o).unwrap()), [6, 1, 1]);
        // Without an include directory: an error naming the file, the line and the reason.
        let e = load(&main, &opts()).unwrap_err().to_string();
        assert!(e.contains("main.comp:2"), "{e}");
        assert!(e.contains("no include directory"), "{e}");
    }

    /// An include reached through `.` and `..` has one name, its plain path, in the module's
    /// `OpString`s (SPIR-V 3.42.2) and so in every message.
    #[test]
    fn an_include_through_dot_and_dot_dot_is_named_by_its_plain_path() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "lib/n.glsl", "#define N 2\n");
        let main = write(
            dir.path(),
            "k/main.comp",
            "#version 450\n#include \"./../lib/./n.glsl\"\nlayout(local_size_x = N) in;\nvoid main() {}\n",
        );
        let m = load(&main, &opts()).unwrap();
        assert_eq!(local_size(&m), [2, 1, 1]);
        let strings = op_strings(&parse(&m));
        let want = dir.path().join("lib").join("n.glsl").display().to_string();
        assert!(strings.contains(&want), "{want} not in {strings:?}");
        assert!(
            strings
                .iter()
                .all(|s| !s.contains("..") && !s.contains("/./")),
            "{strings:?}"
        );
    }

    #[test]
    fn text_sources_resolve_relative_includes_in_the_include_directory() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "n.glsl", "#define N 9\n");
        let o = SourceOptions {
            include_dir: Some(dir.path().to_path_buf()),
            ..opts()
        };
        let m = compile(
            "#version 450\n#include \"n.glsl\"\nlayout(local_size_x = N) in;\nvoid main() {}\n",
            SourceLang::Glsl,
            &o,
        )
        .unwrap();
        assert_eq!((local_size(&m), m.name.as_str()), ([9, 1, 1], "kernel"));
    }

    #[test]
    fn a_missing_include_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let main = write(
            dir.path(),
            "k.comp",
            "#version 450\n\n#include \"nope.glsl\"\nvoid main() {}\n",
        );
        let e = load(&main, &opts()).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, SourceError::Compile { line: Some(3), .. }),
            "{text}"
        );
        assert!(text.contains("nope.glsl"), "{text}");
        assert!(
            text.contains("#include \"nope.glsl\""),
            "the line is quoted: {text}"
        );
    }

    #[test]
    fn an_include_cycle_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.glsl", "#include \"a.glsl\"\n");
        let main = write(
            dir.path(),
            "k.comp",
            "#version 450\n#include \"a.glsl\"\nvoid main() {}\n",
        );
        let e = load(&main, &opts()).unwrap_err().to_string();
        assert!(e.contains("include"), "{e}");
    }

    #[test]
    fn defines_reach_the_preprocessor() {
        let src = "#version 450\n#ifndef FLAG\n#error FLAG is needed\n#endif\nlayout(local_size_x = N) in;\nvoid main() {}\n";
        let mut o = opts();
        o.define("N=12").unwrap().define("FLAG").unwrap();
        assert_eq!(
            local_size(&compile(src, SourceLang::Glsl, &o).unwrap()),
            [12, 1, 1]
        );
        let mut o = opts();
        o.define("N=2").unwrap();
        let e = compile(src, SourceLang::Glsl, &o).unwrap_err().to_string();
        assert!(
            e.contains("kernel:3") && e.contains("FLAG is needed"),
            "{e}"
        );
    }

    #[test]
    fn bad_define_names_are_rejected() {
        for bad in ["", "=1", "1X", "A-B", "A B=1"] {
            let e = opts().define(bad).map(|_| ()).unwrap_err();
            assert!(e.to_string().contains("NAME or NAME=VALUE"), "{bad}: {e}");
        }
    }

    /// `subgroupBroadcast` with an id that is not a compile-time constant needs SPIR-V 1.5
    /// (GL_KHR_shader_subgroup: "id must be ... constant" before SPIR-V 1.5; Vulkan 1.2
    /// subgroupBroadcastDynamicId).
    const DYNAMIC_BROADCAST: &str = "#version 450\n\
        #extension GL_KHR_shader_subgroup_ballot : require\n\
        layout(local_size_x = 8) in;\n\
        layout(set = 0, binding = 0) buffer B { uint d[]; };\n\
        void main() { d[gl_LocalInvocationID.x] = subgroupBroadcast(d[gl_LocalInvocationID.x], d[64]); }\n";

    #[test]
    fn the_target_environment_goes_up_only_when_the_shader_needs_it() {
        let low = compile(EMPTY, SourceLang::Glsl, &opts()).unwrap();
        assert_eq!(
            (low.target_env, low.spirv_version()),
            (TargetEnv::Vulkan1_1, (1, 3))
        );
        let high = compile(DYNAMIC_BROADCAST, SourceLang::Glsl, &opts()).unwrap();
        assert_eq!(
            (high.target_env, high.spirv_version()),
            (TargetEnv::Vulkan1_2, (1, 5))
        );
        // A target that is given is used as is, and its failure reported.
        let o = SourceOptions {
            target_env: Some(TargetEnv::Vulkan1_3),
            ..opts()
        };
        assert_eq!(
            compile(EMPTY, SourceLang::Glsl, &o)
                .unwrap()
                .spirv_version(),
            (1, 6)
        );
        let o = SourceOptions {
            target_env: Some(TargetEnv::Vulkan1_1),
            ..opts()
        };
        let e = compile(DYNAMIC_BROADCAST, SourceLang::Glsl, &o)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kernel:5") && e.contains("compile-time constant"),
            "{e}"
        );
    }

    #[test]
    fn a_compile_error_names_file_and_line_and_quotes_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "bad.comp",
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  uint x = y;\n}\n",
        );
        let e = load(&p, &opts()).unwrap_err();
        let text = e.to_string();
        let first = text.lines().next().unwrap();
        assert!(
            first.ends_with("bad.comp:4: GLSL compilation failed"),
            "{text}"
        );
        assert!(text.contains("'y' : undeclared identifier"), "{text}");
        assert!(text.contains("|   uint x = y;"), "{text}");
    }

    #[test]
    fn an_error_in_an_include_names_the_include() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "inc.glsl", "// fine\nuint broken = ;\n");
        let p = write(
            dir.path(),
            "k.comp",
            "#version 450\n#include \"inc.glsl\"\nvoid main() {}\n",
        );
        let e = load(&p, &opts()).unwrap_err();
        match &e {
            SourceError::Compile {
                file,
                line,
                source_line,
                ..
            } => {
                assert!(file.ends_with("inc.glsl"), "{e}");
                assert_eq!(*line, Some(2), "{e}");
                assert_eq!(source_line.as_deref(), Some("uint broken = ;"));
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_nul_character_is_an_error_not_a_panic() {
        let e = compile(
            "#version 450\nvoid main() {}\0\n",
            SourceLang::Glsl,
            &opts(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
    }

    const ASM: &str = "               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\"
               OpExecutionMode %main LocalSize 2 3 1
       %void = OpTypeVoid
          %f = OpTypeFunction %void
       %main = OpFunction %void None %f
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
";

    #[test]
    fn spirv_assembly_is_assembled() {
        let m = compile(ASM, SourceLang::SpirvAsm, &opts()).unwrap();
        assert_eq!(
            (m.lang, m.target_env, m.spirv_version()),
            (SourceLang::SpirvAsm, TargetEnv::Vulkan1_1, (1, 3))
        );
        assert_eq!(local_size(&m), [2, 3, 1]);
        assert_eq!(m.source_text.as_deref(), Some(ASM));
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "k.spvasm", ASM);
        assert_eq!(load(&p, &opts()).unwrap().words, m.words);
    }

    #[test]
    fn an_assembly_error_names_the_line() {
        let bad = ASM.replace("OpReturn", "OpReturnn");
        let e = compile(&bad, SourceLang::SpirvAsm, &opts()).unwrap_err();
        assert!(
            matches!(e, SourceError::Compile { line: Some(9), .. }),
            "{e}"
        );
        assert!(e.to_string().contains("OpReturnn"), "{e}");
    }
}

/// Without the `vulkan` feature there is no shaderc: GLSL and assembly say so (./test builds
/// this configuration for clippy only; `cargo test --no-default-features --test suite kernel::` runs it).
#[cfg(not(feature = "vulkan"))]
#[test]
fn without_shaderc_glsl_and_assembly_say_what_is_missing() {
    for lang in [SourceLang::Glsl, SourceLang::SpirvAsm] {
        let e = compile("#version 450\nvoid main() {}\n", lang, &opts()).unwrap_err();
        assert!(matches!(e, SourceError::NeedsShaderc { .. }), "{e}");
        assert!(e.to_string().contains("`vulkan` cargo feature"), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// WGSL (naga) and SPIR-V binaries: no shaderc needed

const WGSL_SUBGROUPS: &str = "enable subgroups;
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(subgroup_invocation_id) lane: u32) {
    let v = data[id.x];
    data[id.x] = subgroupAdd(v) + subgroupShuffleXor(v, 1u) + subgroupBallot(lane % 2u == 0u).x;
}
";

#[test]
fn wgsl_with_subgroup_operations_compiles_with_debug_lines() {
    let m = compile(WGSL_SUBGROUPS, SourceLang::Wgsl, &opts()).unwrap();
    assert_eq!(
        (m.lang, m.target_env, m.spirv_version()),
        (SourceLang::Wgsl, TargetEnv::Vulkan1_1, (1, 3))
    );
    for c in [
        Capability::GroupNonUniformArithmetic,
        Capability::GroupNonUniformShuffle,
        Capability::GroupNonUniformBallot,
    ] {
        assert!(has_capability(&m, c), "{c:?}");
    }
    assert!(count_op(&m, Op::GroupNonUniformIAdd) == 1);
    assert!(count_op(&m, Op::Line) > 0, "no OpLine");
    assert!(count_op(&m, Op::Source) > 0, "no OpSource");
    assert_eq!(local_size(&m), [64, 1, 1]);
}

#[test]
fn wgsl_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    // A parse error on line 3.
    let p = write(
        dir.path(),
        "k.wgsl",
        "@compute @workgroup_size(1)\nfn main() {\n  let x = ;\n}\n",
    );
    let e = load(&p, &opts()).unwrap_err();
    assert!(
        matches!(
            e,
            SourceError::Compile {
                line: Some(3),
                lang: SourceLang::Wgsl,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("{}:3: WGSL compilation failed", p.display())),
        "{e}"
    );
    // A validation error (a type mismatch) on line 2.
    let e = compile(
        "@compute @workgroup_size(1)\nfn main() { let x: u32 = 1.5; }\n",
        SourceLang::Wgsl,
        &opts(),
    )
    .unwrap_err();
    assert!(
        matches!(e, SourceError::Compile { line: Some(2), .. }),
        "{e}"
    );
    // Subgroup built-ins without `enable subgroups;` (WGSL written before naga required the
    // directive): the error says which line uses them and which line to add (issue 20).
    // The directive only in a comment is no directive (WGSL, "Directives", "Comments").
    for without in ["", "// enable subgroups;", "/* enable subgroups; */"] {
        let e = compile(
            &WGSL_SUBGROUPS.replace("enable subgroups;", without),
            SourceLang::Wgsl,
            &opts(),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("without `enable subgroups;`")
                && text.contains("add the line `enable subgroups;`"),
            "{without}: {e}"
        );
    }
    assert!(
        matches!(e, SourceError::Compile { line: Some(_), .. }),
        "{e}"
    );
    // `subgroupBarrier()` alone is a subgroup built-in too (WGSL, "Subgroup Built-in Functions":
    // the `subgroups` extension), refused without the directive and compiled with it.
    let barrier = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    data[id.x] = 1u;
    subgroupBarrier();
}
";
    let e = compile(barrier, SourceLang::Wgsl, &opts()).unwrap_err();
    assert!(
        e.to_string().contains("add the line `enable subgroups;`"),
        "{e}"
    );
    compile(
        &format!("enable subgroups;\n{barrier}"),
        SourceLang::Wgsl,
        &opts(),
    )
    .unwrap();
}

#[test]
fn enable_subgroups_may_share_its_directive_and_positions_stay() {
    for directive in [
        "enable f16, subgroups;",
        "enable subgroups, f16;",
        "enable subgroups,f16,;",
    ] {
        let text = format!(
            "{directive}\n@group(0) @binding(0) var<storage, read_write> d: array<f16>;\n\
             @compute @workgroup_size(8)\nfn main(@builtin(local_invocation_index) i: u32) {{ d[i] = subgroupAdd(d[i]); }}\n"
        );
        let m = compile(&text, SourceLang::Wgsl, &opts())
            .unwrap_or_else(|e| panic!("{directive}: {e}"));
        assert!(has_capability(&m, Capability::Float16), "{directive}");
        // An error after the directive keeps its line and column.
        let broken = text.replace("d[i] = subgroupAdd", "d[i] = subgroupAddd");
        let e = compile(&broken, SourceLang::Wgsl, &opts()).unwrap_err();
        assert!(
            matches!(e, SourceError::Compile { line: Some(4), .. }),
            "{directive}: {e}"
        );
        assert!(e.to_string().contains("kernel:4:"), "{e}");
    }
    // A word that merely contains "enable", or the directive in another position, is left alone.
    let text =
        "// not_enable subgroups;\n@compute @workgroup_size(1) fn main() { let enabled = 1u; }\n";
    compile(text, SourceLang::Wgsl, &opts()).unwrap();
}

#[test]
fn wgsl_takes_no_defines() {
    let mut o = opts();
    o.define("N=1").unwrap();
    let e = compile(WGSL_SUBGROUPS, SourceLang::Wgsl, &o).unwrap_err();
    assert!(matches!(e, SourceError::DefinesNotGlsl { .. }), "{e}");
}

/// WGSL's pipeline-overridable constants (WGSL, "override declarations": "its value is fixed
/// at pipeline-creation time … if not set there, the initializer's value", and an override with
/// no initializer must be set). naga writes no specialization constants for them, so they are
/// set as the module is written: by name or by `@id`, numbers or booleans. A `@workgroup_size`
/// taken from an override is the value given; the defaults otherwise; an unknown name, a value
/// that is not a number, and an override with neither default nor value are errors naming it;
/// a GLSL module takes none (its specialization constants are set by SpecId when it runs).
#[test]
fn wgsl_overrides_take_the_values_given_by_name_or_id_and_their_defaults_otherwise() {
    let text = "override scale: f32 = 2.0;\n@id(7) override wg: u32 = 8;\noverride flip: bool = false;\n\
        @group(0) @binding(0) var<storage, read_write> o: array<f32>;\n\
        @compute @workgroup_size(wg)\n\
        fn main(@builtin(local_invocation_index) i: u32) { o[i] = select(f32(i) * scale, -1.0, flip); }\n";
    let with = |given: &[(&str, &str)]| {
        let mut o = opts();
        o.overrides = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        compile(text, SourceLang::Wgsl, &o)
    };
    let run = |m: &SpirvModule| {
        let k = lockstep::spirv::decode(&m.words, &Default::default()).unwrap();
        let n = k.local_size[0] as usize;
        let cfg = lockstep::spirv::RunConfig::new(
            lockstep::model::SubgroupSize::new(4).unwrap(),
            [1, 1, 1],
        );
        let input = lockstep::spirv::BufferInput {
            bytes: vec![0; 4 * n],
            ..Default::default()
        };
        let r = lockstep::spirv::run_model(&k, cfg, &[input], None).unwrap();
        r.buffers[0]
            .bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect::<Vec<f32>>()
    };
    let defaults = run(&with(&[]).unwrap());
    assert_eq!(defaults, (0..8).map(|i| i as f32 * 2.0).collect::<Vec<_>>());
    let set = run(&with(&[("7", "16"), ("scale", "0.5")]).unwrap());
    assert_eq!(set, (0..16).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
    assert_eq!(run(&with(&[("flip", "true")]).unwrap()), [-1.0; 8]);
    let err = |given: &[(&str, &str)]| with(given).unwrap_err().to_string();
    let e = err(&[("wgg", "4")]);
    assert!(
        e.contains("no override named or numbered wgg") && e.contains("wg (@id(7))"),
        "{e}"
    );
    let e = err(&[("scale", "half")]);
    assert!(
        e.contains("--spec scale=half: an override's value is a number"),
        "{e}"
    );
    let e = compile(
        &text.replace("override scale: f32 = 2.0;", "override scale: f32;"),
        SourceLang::Wgsl,
        &opts(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("override `scale` has no default and no value"),
        "{e}"
    );
    #[cfg(feature = "vulkan")]
    {
        let mut o = opts();
        o.overrides = vec![("wg".into(), "4".into())];
        let e = compile(
            "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
            SourceLang::Glsl,
            &o,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("are WGSL's"), "{e}");
    }
}

/// A SPIR-V binary of the WGSL kernel, as bytes in either order.
fn binary_bytes(big_endian: bool) -> (Vec<u32>, Vec<u8>) {
    let m = compile(WGSL_SUBGROUPS, SourceLang::Wgsl, &opts()).unwrap();
    let bytes = m
        .words
        .iter()
        .flat_map(|w| {
            if big_endian {
                w.to_be_bytes()
            } else {
                w.to_le_bytes()
            }
        })
        .collect();
    (m.words, bytes)
}

#[test]
fn a_binary_is_read_in_either_byte_order() {
    let dir = tempfile::tempdir().unwrap();
    for big in [false, true] {
        let (words, bytes) = binary_bytes(big);
        let p = dir.path().join("k.spv");
        std::fs::write(&p, bytes).unwrap();
        let m = load(&p, &opts()).unwrap();
        assert_eq!(m.words, words, "big-endian {big}");
        assert_eq!(
            (m.lang, m.target_env, m.source_text),
            (SourceLang::SpirvBinary, TargetEnv::Vulkan1_1, None)
        );
    }
}

#[test]
fn malformed_binaries_are_rejected_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.spv");
    let (_, good) = binary_bytes(false);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() - 2].to_vec(), "not a multiple of 4"),
        (good[..12].to_vec(), "fewer than the 5-word header"),
        ([&[0u8; 4][..], &good[4..]].concat(), "not the magic number"),
        (good[..good.len() - 8].to_vec(), "not a valid SPIR-V module"),
        // Version 1.7 in the header.
        (
            [&good[..4], &[0, 7, 1, 0][..], &good[8..]].concat(),
            "SPIR-V version 1.7",
        ),
    ];
    for (bytes, rule) in cases {
        std::fs::write(&p, &bytes).unwrap();
        let e = load(&p, &opts()).unwrap_err().to_string();
        assert!(
            e.contains(rule) && e.contains("k.spv"),
            "expected '{rule}': {e}"
        );
    }
}

#[test]
fn a_binary_newer_than_the_target_is_rejected() {
    let m = compile(
        "@compute @workgroup_size(1) fn main() {}\n",
        SourceLang::Wgsl,
        &SourceOptions {
            target_env: Some(TargetEnv::Vulkan1_3),
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(m.spirv_version(), (1, 6));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.spv");
    std::fs::write(
        &p,
        m.words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    assert_eq!(load(&p, &opts()).unwrap().target_env, TargetEnv::Vulkan1_3);
    let o = SourceOptions {
        target_env: Some(TargetEnv::Vulkan1_2),
        ..opts()
    };
    let e = load(&p, &o).unwrap_err();
    assert!(
        matches!(
            e,
            SourceError::TargetTooLow {
                needed: TargetEnv::Vulkan1_3,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn unknown_extensions_unreadable_files_and_non_utf8_text_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = load(&write(dir.path(), "k.hlsl", "x"), &opts()).unwrap_err();
    assert!(
        matches!(e, SourceError::UnknownExtension { .. }) && e.to_string().contains(".wgsl"),
        "{e}"
    );
    let e = load(&dir.path().join("missing.comp"), &opts()).unwrap_err();
    assert!(
        matches!(e, SourceError::Read { .. }) && e.to_string().contains("missing.comp"),
        "{e}"
    );
    let p = dir.path().join("k.wgsl");
    std::fs::write(&p, b"fn main() {}\xff\n").unwrap();
    let e = load(&p, &opts()).unwrap_err();
    assert!(matches!(e, SourceError::NotUtf8 { offset: 12, .. }), "{e}");
    let e = compile("x", SourceLang::SpirvBinary, &opts()).unwrap_err();
    assert!(e.to_string().contains("kernel::load"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Buffer specs

fn build(spec: &str) -> HostBuffer {
    spec.parse::<BufferSpec>()
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .build()
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn spec_err(spec: &str) -> String {
    match spec.parse::<BufferSpec>() {
        Ok(s) => panic!("{spec} parsed as {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn zeros_fill_series_and_values_make_what_they_say() {
    let z = build("zeros:u32:1024");
    assert_eq!(
        (z.dtype, z.shape.clone(), z.bytes.len()),
        (ScalarType::U32, vec![1024], 4096)
    );
    assert!(z.bytes.iter().all(|&b| b == 0));
    let f = build("fill:f32:2x3:1.5");
    assert_eq!(
        (f.shape.clone(), f.to_vec::<f32>().unwrap()),
        (vec![2, 3], vec![1.5; 6])
    );
    // f16 1.5 is 0x3e00 (sign 0, exponent 15, fraction 0x200): IEEE 754 binary16.
    assert_eq!(build("fill:f16:2:1.5").bytes, [0x00, 0x3e, 0x00, 0x3e]);
    assert_eq!(
        build("fill:float:1:-0.0").bytes,
        0x8000_0000u32.to_le_bytes()
    );
    assert_eq!(
        build("fill:f32:1:0x7fc00001").bytes,
        0x7fc0_0001u32.to_le_bytes()
    );
    assert_eq!(build("fill:bool:3:true").bytes, [1, 1, 1]);
    assert_eq!(build("fill:i8:2:-128").bytes, [0x80, 0x80]);
    assert_eq!(
        build("series:u32:5").to_vec::<u32>().unwrap(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(build("series:i16:3").to_vec::<i16>().unwrap(), [0, 1, 2]);
    assert_eq!(
        build("series:f64:3").to_vec::<f64>().unwrap(),
        [0.0, 1.0, 2.0]
    );
    assert_eq!(build("series:u8:256").to_vec::<u8>().unwrap()[255], 255);
    assert_eq!(build("series:i8:128").to_vec::<i8>().unwrap()[127], 127);
    assert_eq!(build("series:f16:2048").len(), 2048);
    // as binary16 values, not integer bits: 0, 1.0 (0x3c00), 2.0 (0x4000), 3.0 (0x4200), and
    // 2047 (0x67ff: exponent 25, fraction 0x3ff), the last one binary16 holds exactly
    let h = build("series:f16:2048");
    assert_eq!(
        h.bytes[..8],
        [0x00, 0x00, 0x00, 0x3c, 0x00, 0x40, 0x00, 0x42]
    );
    assert_eq!(h.bytes[4094..], [0xff, 0x67]);
    assert_eq!(
        build("values:i32:1,-2,0x10").to_vec::<i32>().unwrap(),
        [1, -2, 16]
    );
    assert_eq!(
        build("values:u64:18446744073709551615")
            .to_vec::<u64>()
            .unwrap(),
        [u64::MAX]
    );
    assert_eq!(build("values:f32:nan,inf,-inf").bytes.len(), 12);
}

#[test]
fn random_is_deterministic_and_covers_its_range() {
    let a = build("random:f32:4096:7");
    assert_eq!(a, build("random:f32:4096:7"), "same seed, same buffer");
    assert_ne!(
        a,
        build("random:f32:4096:8"),
        "another seed, another buffer"
    );
    let v = a.to_vec::<f32>().unwrap();
    assert!(v.iter().all(|x| (0.0..1.0).contains(x)), "floats in [0, 1)");
    assert!(v.iter().any(|&x| x < 0.01) && v.iter().any(|&x| x > 0.99));
    for spec in ["random:f16:4096:1", "random:f64:4096:1"] {
        let b = build(spec);
        let ok = (0..b.len()).all(|i| (0.0..1.0).contains(&b.value(i).component_f64(0)));
        assert!(ok, "{spec}: floats in [0, 1)");
    }
    // Integers over their full range: the top bit is set about half the time.
    let u = build("random:u64:4096:3").to_vec::<u64>().unwrap();
    let top = u.iter().filter(|&&x| x >> 63 == 1).count();
    assert!((1700..2400).contains(&top), "{top}");
    let i = build("random:i8:4096:3").to_vec::<i8>().unwrap();
    assert!(i.iter().any(|&x| x < -100) && i.iter().any(|&x| x > 100));
    let b = build("random:bool:4096:3");
    assert!(b.bytes.iter().all(|&x| x <= 1) && b.bytes.contains(&0) && b.bytes.contains(&1));
}

#[test]
fn bad_specs_name_the_rule() {
    for (spec, rule) in [
        ("ones:u32:4", "expected a .npy file or zeros:TYPE:SHAPE"),
        ("data.bin", "expected a .npy file"),
        ("zeros:u32", "expected zeros:TYPE:SHAPE"),
        ("zeros:u32:4:5", "expected zeros:TYPE:SHAPE"),
        ("fill:f32:4", "expected fill:TYPE:SHAPE:VALUE"),
        ("random:f32:4", "expected random:TYPE:SHAPE:SEED"),
        ("values:u32:", "expected values:TYPE:V1,V2"),
        ("zeros:u128:4", "'u128' is not a scalar type"),
        ("zeros:vec4:4", "'vec4' is not a scalar type"),
        ("zeros:u32:0", "zero dimension"),
        ("zeros:u32:4x0", "zero dimension"),
        ("zeros:u32:-1", "is not a shape"),
        ("zeros:u32:4y4", "is not a shape"),
        ("fill:u8:4:300", "outside the range 0..=255"),
        ("fill:f32:4:abc", "is not a number"),
        ("fill:bool:4:2", "is not a bool"),
        ("values:u32:1,x,3", "value 2"),
        ("random:u32:4:-1", "seed '-1'"),
        (
            "series:u8:257",
            "reaches 256, which u8 does not represent exactly",
        ),
        ("series:f16:2050", "reaches 2049, which f16"),
        // a signed type's largest value is 2^(bits−1) − 1 (`series:i8:128`, 0 … 127, is taken)
        (
            "series:i8:129",
            "reaches 128, which i8 does not represent exactly",
        ),
        ("series:bool:2", "needs a number type"),
        ("zeros:u8:5000000000", "larger than the 4 GiB"),
        // 2^30 + 1 elements of 4 bytes: the elements fit the limit, their bytes do not
        ("zeros:f32:1073741825", "larger than the 4 GiB"),
        ("zeros:u64:99999999999x99999999999", "larger than the 4 GiB"),
        (
            "values:u64:@src+zz",
            "'zz' is not a byte count (decimal or 0x hex)",
        ),
        ("values:u64:@src+0xg", "'0xg' is not a byte count"),
        (
            "values:u64:@a b",
            "expected @BINDING, @SET.BINDING or @NAME",
        ),
        ("values:u64:@", "expected @BINDING, @SET.BINDING or @NAME"),
        (
            "values:u32:@src",
            "a device address is written into a 64-bit integer element",
        ),
        ("values:u64:@src.lo", "this buffer is u64"),
    ] {
        let e = spec_err(spec);
        assert!(e.starts_with(&format!("bad buffer spec '{spec}'")), "{e}");
        assert!(e.contains(rule), "{spec}: expected '{rule}' in: {e}");
    }
}

#[test]
fn specs_print_as_they_parse() {
    for s in [
        "zeros:u32:1024",
        "fill:f32:2x3:1.5",
        "series:i8:4",
        "random:f64:8:42",
        "values:i32:1,-2,3",
        "in.npy",
        "values:u64:@src,5,@1.2+16",
        "values:u32:@src.lo,@src.hi,@3+8.lo",
    ] {
        let spec: BufferSpec = s.parse().unwrap();
        assert_eq!(spec.to_string(), s);
        assert_eq!(spec.to_string().parse::<BufferSpec>().unwrap(), spec);
    }
    // A byte count in hex prints in decimal; a binding prints with its set.
    let spec: BufferSpec = "values:u64:@src+0x20".parse().unwrap();
    assert_eq!(spec.to_string(), "values:u64:@src+32");
    for (b, shown) in [
        ("1.2=zeros:u32:16", "1.2=zeros:u32:16"),
        ("3=in.npy", "0.3=in.npy"),
        // an element of an array of descriptors prints after its binding; element 0 is the
        // binding itself
        ("1.2[3]=zeros:u32:16", "1.2[3]=zeros:u32:16"),
        ("4[0]=in.npy", "0.4=in.npy"),
    ] {
        let spec: BindingSpec = b.parse().unwrap();
        assert_eq!(spec.to_string(), shown);
        assert_eq!(shown.parse::<BindingSpec>().unwrap(), spec);
    }
}

#[test]
fn bindings_name_set_and_binding() {
    let b: BindingSpec = "2=series:u32:8".parse().unwrap();
    assert_eq!((b.set, b.binding), (0, 2));
    let b: BindingSpec = "1.3=data/in=1.npy".parse().unwrap();
    assert_eq!(
        (b.set, b.binding, b.spec),
        (1, 3, BufferSpec::Npy("data/in=1.npy".into()))
    );
    for (bad, rule) in [
        ("zeros:u32:4", "expected BINDING=SPEC"),
        ("a=zeros:u32:4", "unsigned integers"),
        ("1.=zeros:u32:4", "unsigned integers"),
        ("-1=zeros:u32:4", "unsigned integers"),
        ("1.2.3=zeros:u32:4", "unsigned integers"),
    ] {
        let e = bad.parse::<BindingSpec>().unwrap_err().to_string();
        assert!(e.contains(rule), "{bad}: {e}");
    }
    // The spec's own error comes through.
    let e = "0=zeros:u32:0"
        .parse::<BindingSpec>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("zero dimension"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// .npy files

fn every_type_buffer(t: ScalarType) -> HostBuffer {
    build(&format!("random:{}:3x5:11", t.name()))
}

#[test]
fn every_dtype_round_trips_through_npy() {
    let dir = tempfile::tempdir().unwrap();
    for t in ScalarType::ALL {
        let b = every_type_buffer(t);
        let p = dir.path().join(format!("{t}.npy"));
        write_npy(&p, &b).unwrap();
        let back = read_npy(&p).unwrap();
        assert_eq!(back, b, "{t}");
        // numpy aligns the data to 64 bytes (NEP 1: "padded to a multiple of 64").
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!((bytes.len() - b.bytes.len()) % 64, 0, "{t}");
        // A spec naming the file builds the same buffer.
        assert_eq!(BufferSpec::Npy(p.clone()).build().unwrap(), b, "{t}");
    }
}

#[test]
fn npy_files_agree_with_ndarray_npy_both_ways() {
    use ndarray::{Array2, ArrayD};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    // Theirs → ours.
    let a = Array2::from_shape_fn((4, 3), |(i, j)| (i * 10 + j) as f64 - 5.5);
    ndarray_npy::write_npy(&p, &a).unwrap();
    let ours = read_npy(&p).unwrap();
    assert_eq!(
        (ours.dtype, ours.shape.clone()),
        (ScalarType::F64, vec![4, 3])
    );
    assert_eq!(
        ours.to_vec::<f64>().unwrap(),
        a.iter().copied().collect::<Vec<_>>()
    );
    let flags = Array2::from_shape_fn((2, 2), |(i, j)| i == j);
    ndarray_npy::write_npy(&p, &flags).unwrap();
    assert_eq!(read_npy(&p).unwrap().bytes, [1, 0, 0, 1]);
    // Ours → theirs, for every type ndarray-npy reads (it has no f16).
    for t in ScalarType::ALL {
        let b = every_type_buffer(t);
        write_npy(&p, &b).unwrap();
        // The header is padded with spaces to the next multiple of 64 bytes (the format's rule;
        // numpy's writer pads to the nearest one, as here): data starts there — for a long
        // header too (twelve dimensions).
        let long = build(&format!("random:{}:1x1x1x1x1x1x1x1x1x1x3x5:11", t.name()));
        write_npy(&p, &long).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let dict = std::str::from_utf8(&bytes[10..10 + len])
            .unwrap()
            .trim_end();
        assert_eq!(
            (10 + len, bytes.len() - 10 - len),
            ((10 + dict.len() + 1).div_ceil(64) * 64, long.bytes.len()),
            "{t}"
        );
        write_npy(&p, &b).unwrap();
        macro_rules! check {
            ($ty:ty) => {{
                let theirs: ArrayD<$ty> = ndarray_npy::read_npy(&p).unwrap();
                assert_eq!(theirs.shape(), &[3, 5][..], "{t}");
                assert_eq!(
                    theirs.iter().copied().collect::<Vec<$ty>>(),
                    b.to_vec::<$ty>().unwrap(),
                    "{t}"
                );
            }};
        }
        match t {
            ScalarType::Bool => check!(bool),
            ScalarType::I8 => check!(i8),
            ScalarType::U8 => check!(u8),
            ScalarType::I16 => check!(i16),
            ScalarType::U16 => check!(u16),
            ScalarType::I32 => check!(i32),
            ScalarType::U32 => check!(u32),
            ScalarType::I64 => check!(i64),
            ScalarType::U64 => check!(u64),
            ScalarType::F32 => check!(f32),
            ScalarType::F64 => check!(f64),
            ScalarType::F16 => {}
        }
    }
}

/// An npy file with a hand-written header (version 1.0).
fn raw_npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = header.to_string();
    while !(10 + dict.len() + 1).is_multiple_of(64) {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn big_endian_and_fortran_order_vectors_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let data: Vec<u8> = [1u32, 2, 0xdead_beef]
        .iter()
        .flat_map(|x| x.to_be_bytes())
        .collect();
    std::fs::write(
        &p,
        raw_npy(
            "{'descr': '>u4', 'fortran_order': False, 'shape': (3,), }",
            &data,
        ),
    )
    .unwrap();
    assert_eq!(
        read_npy(&p).unwrap().to_vec::<u32>().unwrap(),
        [1, 2, 0xdead_beef]
    );
    // One dimension (or one non-trivial one): Fortran and C order are the same layout.
    let data: Vec<u8> = [1.5f32, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(
        &p,
        raw_npy(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }",
            &data,
        ),
    )
    .unwrap();
    assert_eq!(read_npy(&p).unwrap().to_vec::<f32>().unwrap(), [1.5, 2.5]);
    // A 0-d array is one element.
    std::fs::write(
        &p,
        raw_npy(
            "{'descr': '<u2', 'fortran_order': False, 'shape': (), }",
            &[7, 0],
        ),
    )
    .unwrap();
    let b = read_npy(&p).unwrap();
    assert_eq!(
        (b.shape.clone(), b.to_vec::<u16>().unwrap()),
        (vec![], vec![7])
    );
}

/// The .npy format's versions 2.0 and 3.0 (numpy's `format` module, "Format Version 2.0": the
/// header length is a 4-byte little-endian integer, not 2; 3.0: the header is UTF-8) are read
/// like 1.0.
#[test]
fn npy_version_2_and_3_headers_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    for major in [2u8, 3] {
        let mut dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }".to_string();
        while !(12 + dict.len() + 1).is_multiple_of(64) {
            dict.push(' ');
        }
        dict.push('\n');
        let mut out = vec![0x93, b'N', b'U', b'M', b'P', b'Y', major, 0];
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        for v in [-1i16, 2, 300] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        std::fs::write(&p, out).unwrap();
        let b = read_npy(&p).unwrap();
        assert_eq!((b.dtype, b.shape.clone()), (ScalarType::I16, vec![3]));
        assert_eq!(
            b.to_vec::<i16>().unwrap(),
            [-1, 2, 300],
            "version {major}.0"
        );
    }
}

#[test]
fn unsupported_or_broken_npy_files_name_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let four = [0u8; 16];
    for (bytes, rule) in [
        (
            raw_npy(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                &four,
            ),
            "Fortran order",
        ),
        (
            raw_npy(
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                &four,
            ),
            "dtype '<c8' is not supported",
        ),
        (
            raw_npy(
                "{'descr': '<U1', 'fortran_order': False, 'shape': (4,), }",
                &four,
            ),
            "dtype '<U1' is not supported",
        ),
        (
            raw_npy(
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",
                &four,
            ),
            "structured dtype",
        ),
        (
            raw_npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
                &four,
            ),
            "20 bytes) but the file has 16",
        ),
        (
            raw_npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                &four[..12],
            ),
            "but the file has 12",
        ),
        (
            raw_npy(
                "{'descr': '|b1', 'fortran_order': False, 'shape': (16,), }",
                &[2; 16],
            ),
            "not 0 or 1",
        ),
        (
            raw_npy("{'descr': '<f4', 'shape': (4,), }", &four),
            "fortran_order",
        ),
        (
            raw_npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4,) ",
                &four,
            ),
            "not a Python literal",
        ),
        (
            raw_npy("('descr', '<f4')", &four),
            "the header is not a dictionary",
        ),
        (
            raw_npy("{'fortran_order': False, 'shape': (4,), }", &four),
            "the header has no 'descr'",
        ),
        (
            raw_npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': 4, }",
                &four,
            ),
            "the header has no tuple 'shape'",
        ),
        (b"PK\x03\x04 a zip file".to_vec(), "not a .npy file"),
        (b"\x93NUMPY\x09\x00\x10\x00".to_vec(), "version 9.0"),
        // Versions 2.0 and 3.0 give the header length 4 bytes: a file ending inside them.
        (
            b"\x93NUMPY\x02\x00\x10\x00".to_vec(),
            "ends inside its header length",
        ),
        (
            b"\x93NUMPY\x03\x00\x10\x00\x00".to_vec(),
            "ends inside its header length",
        ),
        (b"\x93NUMPY\x01\x00\xff\x00{}".to_vec(), "runs past the end"),
    ] {
        std::fs::write(&p, &bytes).unwrap();
        let e = read_npy(&p).unwrap_err().to_string();
        assert!(e.starts_with(&p.display().to_string()), "{e}");
        assert!(e.contains(rule), "expected '{rule}' in: {e}");
    }
    // An empty array reads, but is no buffer to bind.
    std::fs::write(
        &p,
        raw_npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }",
            &[],
        ),
    )
    .unwrap();
    assert!(read_npy(&p).unwrap().is_empty());
    let e = BufferSpec::Npy(p.clone()).build().unwrap_err().to_string();
    assert!(e.contains("has no elements"), "{e}");
    let e = BufferSpec::Npy(dir.path().join("missing.npy"))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("missing.npy") && e.contains("cannot read"),
        "{e}"
    );
}

#[test]
fn npy_writes_are_atomic_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.npy");
    write_npy(&p, &build("series:u32:4")).unwrap();
    write_npy(&p, &build("fill:f64:2:0.5")).unwrap(); // replaces the file whole
    assert_eq!(read_npy(&p).unwrap().to_vec::<f64>().unwrap(), [0.5, 0.5]);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.npy"], "no temporary file is left");
    // A directory that does not exist: an error naming the path, and nothing written.
    let bad = dir.path().join("no/such/dir/out.npy");
    let e = write_npy(&bad, &build("series:u32:4"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no/such/dir/out.npy"), "{e}");
    assert!(!dir.path().join("no").exists());
}

#[test]
fn host_buffers_check_their_parts() {
    assert!(HostBuffer::new(ScalarType::U32, vec![2], vec![0; 8]).is_ok());
    let e = HostBuffer::new(ScalarType::U32, vec![3], vec![0; 8])
        .unwrap_err()
        .to_string();
    assert!(e.contains("take 12 bytes, not 8"), "{e}");
    let e = HostBuffer::new(ScalarType::Bool, vec![1], vec![5])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not 0 or 1"), "{e}");
    assert!(HostBuffer::from_values(&[3], &[1u8, 2]).is_err());
    let b = HostBuffer::from_slice(&[half::f16::from_f32(0.5)]);
    assert_eq!(
        (b.dtype, b.bytes.clone()),
        (ScalarType::F16, vec![0x00, 0x38])
    );
    assert_eq!(b.value(0).to_string(), "0.5");
}

// ---------------------------------------------------------------------------------------------
// Buffers are bound as their bytes

/// Vulkan 1.3 §15.6.4 "Offset and Stride Assignment" (std430, GLSL 4.60 §7.6.2.2 rules 3 and 4):
/// a `vec3` has a base alignment of 16 bytes, so the elements of `vec3 v[]` are 16 bytes apart.
/// Four rows of three floats (48 bytes) hold only three such elements: the fourth invocation's
/// store is out of bounds, and the finding says why and which shape fits; rows of four fit and
/// a flat array (no rows to go by) gets no such hint.
#[cfg(feature = "glsl")]
#[test]
fn a_buffer_whose_rows_are_shorter_than_the_array_stride_gets_the_shape_that_fits() {
    use lockstep::kernel::run::{FindingKind, KernelJob};
    use lockstep::model::SubgroupSize;
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer B { vec3 v[]; };
void main() { uint i = gl_GlobalInvocationID.x; v[i] = vec3(float(i)); }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let oob = |shape: &[usize]| {
        let mut job = KernelJob::new(module.clone());
        let n: usize = shape.iter().product();
        job.buffers.push(JobBuffer::new(
            0,
            0,
            HostBuffer::from_values(shape, &vec![0f32; n]).unwrap(),
        ));
        let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
        let report = job.compare(&model, None, Default::default());
        report
            .findings
            .into_iter()
            .filter(|f| f.kind == FindingKind::OutOfBounds)
            .map(|f| f.why)
            .collect::<Vec<_>>()
    };
    let rows3 = oob(&[4, 3]);
    assert_eq!(rows3.len(), 1, "{rows3:?}");
    for part in [
        "v's array elements are 16 bytes apart (its ArrayStride)",
        "the buffer's rows are 12 bytes (3 × f32)",
        "4 elements take 64 bytes",
        "shape [4, 4]",
    ] {
        assert!(rows3[0].contains(part), "{part}: {}", rows3[0]);
    }
    assert!(oob(&[4, 4]).is_empty());
    // rows as long as the stride: out of bounds for want of rows, not of padding — no hint
    let long_rows = oob(&[3, 4]);
    assert_eq!(long_rows.len(), 1, "{long_rows:?}");
    assert!(!long_rows[0].contains("ArrayStride"), "{}", long_rows[0]);
    let flat = oob(&[12]);
    assert_eq!(flat.len(), 1, "{flat:?}");
    assert!(!flat[0].contains("ArrayStride"), "{}", flat[0]);
}

/// Vulkan 1.3 §14.9 "Push Constants": a dispatch may read only push constant values the host set
/// (the valid usage of `vkCmdDispatch`), so the model refuses push constants shorter than the
/// shader's block — bad input naming both sizes — and takes a block's worth or more.
#[cfg(feature = "glsl")]
#[test]
fn push_constants_shorter_than_the_block_are_refused_naming_both_sizes() {
    use lockstep::kernel::run::KernelJob;
    use lockstep::model::SubgroupSize;
    let src = "#version 450
layout(local_size_x = 1) in;
layout(push_constant) uniform P { uint a; uint b; } p;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() { v[0] = p.a + p.b; }
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let run = |push: &[u32]| {
        let mut job = KernelJob::new(module.clone());
        job.buffers
            .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32])));
        job.push = Some(HostBuffer::from_slice(push));
        match job.run_model(SubgroupSize::new(4).unwrap(), None) {
            Ok(m) => Ok(m.run.buffers[0].bytes[..4].to_vec()),
            Err(e) => Err(e.to_string()),
        }
    };
    let e = run(&[1]).unwrap_err();
    assert!(
        e.contains("the push constants have 4 bytes") && e.contains("needs 8 bytes"),
        "{e}"
    );
    assert_eq!(run(&[1, 2]).unwrap(), 3u32.to_le_bytes());
    assert_eq!(run(&[1, 2, 7]).unwrap(), 3u32.to_le_bytes());
}

/// Specialization constants of every scalar type a kernel can declare reach the model and the
/// device as the same value (Vulkan 1.3 §10.9 "Specialization Constants": "the constant is
/// set to the value in pData"; GL_EXT_shader_explicit_arithmetic_types for the 8-, 16- and 64-bit
/// types): each is written to a buffer of words, the expected words worked from the text given
/// (`-3` as an int8_t sign-extends to 0xFFFFFFFD; the float16 1.5 is 0x3E00, widened exactly to
/// the float 0x3FC00000). A SpecId the module does not declare is refused naming those it does.
#[cfg(feature = "vulkan")]
#[test]
fn specialization_constants_of_every_scalar_type_reach_the_model_and_the_device_alike() {
    use lockstep::kernel::run::{KernelJob, Tolerance};
    use lockstep::model::SubgroupSize;
    let src = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 1) in;
layout(constant_id = 0) const bool sb = false;
layout(constant_id = 1) const int8_t si8 = int8_t(0);
layout(constant_id = 2) const uint8_t su8 = uint8_t(0);
layout(constant_id = 3) const int16_t si16 = int16_t(0);
layout(constant_id = 4) const uint16_t su16 = uint16_t(0);
layout(constant_id = 5) const int si32 = 0;
layout(constant_id = 6) const uint su32 = 0u;
layout(constant_id = 7) const int64_t si64 = 0l;
layout(constant_id = 8) const uint64_t su64 = 0ul;
layout(constant_id = 9) const float16_t sf16 = float16_t(0.0);
layout(constant_id = 10) const float sf32 = 0.0;
layout(constant_id = 11) const double sf64 = 0.0;
layout(std430, binding = 0) buffer B { uint o[]; };
void main() {
  o[0] = sb ? 1u : 0u;
  o[1] = uint(int(si8));
  o[2] = uint(su8);
  o[3] = uint(int(si16));
  o[4] = uint(su16);
  o[5] = uint(si32);
  o[6] = su32;
  o[7] = uint(si64 >> 32);
  o[8] = uint(su64 >> 32);
  o[9] = floatBitsToUint(float(sf16));
  o[10] = floatBitsToUint(sf32);
  o[11] = unpackDouble2x32(sf64).y;
}
";
    let module = compile(src, SourceLang::Glsl, &SourceOptions::default()).unwrap();
    let mut job = KernelJob::new(module);
    job.buffers
        .push(JobBuffer::new(0, 0, HostBuffer::from_slice(&[0u32; 12])));
    for (id, v) in [
        "true",
        "-3",
        "200",
        "-300",
        "60000",
        "-5",
        "4000000000",
        "-8589934592",
        "12884901888",
        "1.5",
        "0.25",
        "-2.0",
    ]
    .iter()
    .enumerate()
    {
        job.spec.push((id as u32, v.to_string()));
    }
    let want: [u32; 12] = [
        1,
        (-3i32) as u32,
        200,
        (-300i32) as u32,
        60000,
        (-5i32) as u32,
        4_000_000_000,
        (-2i32) as u32,
        3,
        0x3FC0_0000,
        0x3E80_0000,
        0xC000_0000,
    ];
    let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
    let got: Vec<u32> = model.run.buffers[0]
        .bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, want);
    if let Some(ctx) = crate::support::shared_device() {
        let size = ctx.caps.subgroup_size;
        let model = job
            .run_model(SubgroupSize::new(size as u64).unwrap(), None)
            .unwrap();
        match job.run_device(ctx, &model.kernel, size) {
            Ok((device, _)) => {
                let r = job.compare(&model, Some(&device), Tolerance::default());
                assert!(r.ok() && r.buffers[0].exact == 12, "{}", r.text());
            }
            // A device without 8- or 16-bit arithmetic says so.
            Err(lockstep::kernel::run::KernelError::Unsupported(why)) => {
                eprintln!("unsupported on this device: {why}")
            }
            Err(e) => panic!("{e}"),
        }
    }
    job.spec.push((12, "1".into()));
    let e = job.decode().unwrap_err().to_string();
    assert!(
        e.contains("--spec 12: the module has no specialization constant with SpecId 12 (it has: 0 (bool), 1 (")
            && e.contains("11 (f64)"),
        "{e}"
    );
}

/// The layout probe on a device that numbers its subgroups in order (lavapipe: `gl_SubgroupID` is
/// the subgroup's place) finds its placements and nothing to note: the note is for a device whose
/// `gl_SubgroupID` values do not match the subgroups it ran.
#[cfg(feature = "vulkan")]
#[test]
fn the_layout_probe_notes_nothing_on_a_device_that_numbers_its_subgroups_in_order() {
    let Some(ctx) = crate::support::shared_device() else {
        return;
    };
    let size = ctx.caps.subgroup_size;
    let p = lockstep::kernel::run::probe_layout(ctx, [4 * size, 1, 1], size).unwrap();
    assert_eq!(p.note, None, "{:?}", p.layout);
}

/// The layout probe names the model's own layout where the device's placements are one of them:
/// lavapipe places an 8×2 workgroup at size 8 row by row (`gl_LocalInvocationIndex` order, x
/// fastest — what `lockstep conform` reports for its 8x2x1 shape), so the probe answers row-major
/// with no placements of its own; a 1-D shape, where every linear order coincides, does too.
#[cfg(feature = "vulkan")]
#[test]
fn the_layout_probe_names_row_major_where_the_device_places_lanes_row_by_row() {
    let Some(ctx) = crate::support::shared_device() else {
        return;
    };
    let size = ctx.caps.subgroup_size;
    for shape in [[size, 2, 1], [2 * size, 1, 1]] {
        let p = lockstep::kernel::run::probe_layout(ctx, shape, size).unwrap();
        assert_eq!(
            (p.layout, p.placements.is_none()),
            (lockstep::model::LaneOrder::Linear([0, 1, 2]), true),
            "{shape:?}"
        );
    }
}

// NumPy's format description (NEP 1): version 1.0 keeps the header's length in 2 bytes, "version
// 2.0 … allows the header to be larger than 64 KiB" with 4. Arrays whose header straddles the
// 65,535-byte limit (shapes of thousands of dimensions) are written as the version their length
// needs, padded as NumPy pads (`_wrap_header`: fewer than 64 spaces to the next multiple of 64),
// and read back whole.
#[test]
fn an_npy_header_longer_than_version_1_allows_is_written_as_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npy");
    let mut versions = std::collections::BTreeSet::new();
    let (mut read_back, mut prev_version) = (0, None);
    // every header length across the limit: n dimensions of 1 (3 bytes each), the last 1, 10 or 100
    for (n, last) in (21_820..21_860).flat_map(|n| [(n, 1), (n, 10), (n, 100)]) {
        let mut shape = vec![1; n];
        shape[n - 1] = last;
        let a = HostBuffer::new(ScalarType::U32, shape, vec![7; 4 * last]).unwrap();
        write_npy(&path, &a).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            v => panic!("version {v}"),
        };
        versions.insert(bytes[6]);
        let prev = prev_version.replace(bytes[6]);
        assert_eq!(start + len + 4 * last, bytes.len(), "{n} dimensions");
        assert_eq!(
            start + len,
            (start + len).div_ceil(64) * 64,
            "padded to 64 bytes"
        );
        // and no further: NumPy pads with fewer than 64 spaces before the header's newline
        let pad = bytes[start..start + len]
            .iter()
            .rev()
            .skip(1)
            .take_while(|&&c| c == b' ')
            .count();
        assert!(pad < 64, "{n} dimensions, {last}: {pad} spaces");
        // version 2 only where version 1's 2-byte length cannot hold the header
        assert_eq!(
            bytes[6] == 2,
            len + 2 > u16::MAX as usize,
            "{n} dimensions, {last}"
        );
        // Read back whole where the version changes and at both ends (a header this long takes
        // the Python-literal parser tens of milliseconds; every file would be seconds of the suite).
        if prev != Some(bytes[6]) || n == 21_859 {
            assert_eq!(read_npy(&path).unwrap(), a, "{n} dimensions");
            read_back += 1;
        }
    }
    assert!(read_back >= 4, "{read_back} files read back");
    assert_eq!(versions.into_iter().collect::<Vec<_>>(), [1, 2]);
}

// SPIR-V assembly: the module's version is the one a `; Version: 1.x` comment at its top declares
// (as `spirv-dis` writes it), and its environment the lowest that consumes that version (SPIR-V
// 1.5 → Vulkan 1.2); without the comment, SPIR-V 1.3 (Vulkan 1.1).
#[test]
fn an_assembly_s_version_comment_sets_its_spirv_version_and_environment() {
    let body = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n\
        OpEntryPoint GLCompute %main \"main\"\nOpExecutionMode %main LocalSize 1 1 1\n\
        %void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
        %main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n";
    let m = compile(
        &format!("; SPIR-V\n; Version: 1.5\n{body}"),
        SourceLang::SpirvAsm,
        &opts(),
    )
    .unwrap();
    assert_eq!(
        (m.spirv_version(), m.target_env),
        ((1, 5), TargetEnv::Vulkan1_2)
    );
    let m = compile(body, SourceLang::SpirvAsm, &opts()).unwrap();
    assert_eq!(
        (m.spirv_version(), m.target_env),
        ((1, 3), TargetEnv::Vulkan1_1)
    );
}

/// A SPIR-V assembly text names its ids (`%temp`) and the assembler keeps none of it; the report
/// names them as the text did — a race on `temp` in block `%entry`, not on `%2` in `%8` — while
/// the module the device gets
/// is the assembler's, with no `OpName` added (a driver may tell apart struct types that differ
/// only by name). A `DebugGlobalVariable` (NonSemantic.Shader.DebugInfo.100, what Slang and DXC
/// emit with debug information) names its variable as its source does, before the text's id.
#[cfg(feature = "vulkan")]
#[test]
fn an_assembly_kernels_reports_use_the_texts_names_and_debug_info_names_first() {
    use lockstep::kernel::run::{KernelJob, Tolerance};
    use lockstep::model::SubgroupSize;
    let kernel = |debug: &str, ext: &str| {
        format!(
            "OpCapability Shader\n{ext}OpMemoryModel Logical GLSL450\n\
             OpEntryPoint GLCompute %main \"main\" %temp\nOpExecutionMode %main LocalSize 2 1 1\n\
             %void = OpTypeVoid\n%fn = OpTypeFunction %void\n%uint = OpTypeInt 32 0\n\
             %ptr = OpTypePointer Workgroup %uint\n%temp = OpVariable %ptr Workgroup\n\
             %uint_0 = OpConstant %uint 0\n{debug}\
             %main = OpFunction %void None %fn\n%entry = OpLabel\nOpStore %temp %uint_0\n\
             OpReturn\nOpFunctionEnd\n"
        )
    };
    let race = |text: &str| {
        let m = compile(text, SourceLang::SpirvAsm, &opts()).unwrap();
        let mut names = 0;
        let mut i = 5;
        while i < m.words.len() {
            names += usize::from(m.words[i] & 0xffff == Op::Name as u32);
            i += (m.words[i] >> 16) as usize;
        }
        assert_eq!(names, 0, "the device's module is the assembler's");
        let job = KernelJob::new(m);
        let model = job.run_model(SubgroupSize::new(4).unwrap(), None).unwrap();
        let report = job.compare(&model, None, Tolerance::default());
        report
            .findings
            .iter()
            .map(|f| f.why.clone())
            .find(|w| w.contains("race on"))
            .unwrap_or_else(|| panic!("no race: {:?}", report.findings))
    };
    let why = race(&kernel("", ""));
    assert!(
        why.starts_with("same-value race on temp: wrote at block %entry and wrote at block %entry"),
        "{why}"
    );
    let debug = "%di = OpExtInstImport \"NonSemantic.Shader.DebugInfo.100\"\n";
    let globals = "%name = OpString \"MyAwesomeVariable\"\n%empty = OpString \"\"\n\
        %src = OpExtInst %void %di DebugSource %empty %empty\n\
        %unit = OpExtInst %void %di DebugCompilationUnit %uint_0 %uint_0 %src %uint_0\n\
        %basic = OpExtInst %void %di DebugTypeBasic %empty %uint_0 %uint_0 %uint_0\n\
        %var = OpExtInst %void %di DebugGlobalVariable %name %basic %src %uint_0 %uint_0 %unit %empty %temp %uint_0\n";
    let text = kernel(
        globals,
        &format!("OpExtension \"SPV_KHR_non_semantic_info\"\n{debug}"),
    );
    let why = race(&text);
    assert!(
        why.starts_with("same-value race on MyAwesomeVariable"),
        "{why}"
    );
}
