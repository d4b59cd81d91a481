//! The generated docs stay true (unit tests: the generator is crate-private): regenerated pages equal the committed ones, every table's command
//! reproduces it, signatures are the spec's, every undefined case the spec names is found, and the
//! conformance-report reader renders what devices returned.

use crate::docs::{self, Example};
use crate::model::{catalogue, lookup, Outcome};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn specs() -> PathBuf {
    // The Khronos texts are vendored in specs/ (see specs/README.md).
    let p = repo().join("specs");
    assert!(p.is_dir(), "{} not found", p.display());
    p
}

#[test]
fn committed_semantics_pages_equal_a_fresh_generation() {
    let tmp = tempfile::tempdir().unwrap();
    let written = docs::generate(tmp.path(), &repo().join("docs/results")).unwrap();
    assert_eq!(written.len(), 10, "nine categories and undefined.md");
    let drifts = docs::compare_dirs(tmp.path(), &repo().join("docs/semantics")).unwrap();
    assert!(
        drifts.is_empty(),
        "docs/semantics differs from the model — regenerate with \
         `cargo run -- docs --out docs/semantics --readme docs/README.md` and commit:\n{}",
        drifts
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_drift_check_names_the_file_and_first_differing_line() {
    let generated = tempfile::tempdir().unwrap();
    let committed = tempfile::tempdir().unwrap();
    docs::generate(generated.path(), Path::new("no-results")).unwrap();
    docs::generate(committed.path(), Path::new("no-results")).unwrap();
    assert!(docs::compare_dirs(generated.path(), committed.path())
        .unwrap()
        .is_empty());
    // Change line 9 of one page, delete another, and leave a stale generated page behind.
    let quad = committed.path().join("quad.md");
    let mut lines: Vec<String> = std::fs::read_to_string(&quad)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[8] = "hand-edited".into();
    std::fs::write(&quad, lines.join("\n") + "\n").unwrap();
    std::fs::remove_file(committed.path().join("vote.md")).unwrap();
    std::fs::write(
        committed.path().join("old.md"),
        format!("# Old\n\n{}\n", docs::GENERATED_NOTICE),
    )
    .unwrap();
    std::fs::write(committed.path().join("notes.md"), "hand-written\n").unwrap();
    let drifts: Vec<String> = docs::compare_dirs(generated.path(), committed.path())
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(drifts.len(), 3, "{drifts:#?}");
    assert!(
        drifts[0].contains("quad.md:9: first difference"),
        "{}",
        drifts[0]
    );
    assert!(
        drifts[0].contains("committed: \"hand-edited\""),
        "{}",
        drifts[0]
    );
    assert!(
        drifts[1].contains("vote.md: not committed"),
        "{}",
        drifts[1]
    );
    assert!(
        drifts[2].contains("old.md: a generated page"),
        "{}",
        drifts[2]
    );
}

#[test]
fn readme_command_blocks_show_the_real_output() {
    let mut blocks = 0;
    for file in ["README.md", "docs/README.md"] {
        let path = repo().join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        blocks += text.matches(docs::OUTPUT_MARKER).count();
        let fresh = docs::refresh_output_blocks(&text, crate::cli::command_output).unwrap();
        if let Some((line, c, g)) = docs::first_difference(&text, &fresh) {
            panic!(
                "{file}:{line}: command output differs from the real output — refresh with \
                 `cargo run -- docs --readme {file}`\n  committed: {c:?}\n  generated: {g:?}"
            );
        }
    }
    assert!(
        blocks >= 3,
        "docs/README.md shows the commands with their output"
    );
}

/// Every example on the pages: the illustrations and the undefined-case examples of every op.
fn all_examples() -> Vec<Example> {
    let mut v = Vec::new();
    for op in catalogue() {
        v.extend(docs::illustrations(op).into_iter().map(|i| i.example));
        v.extend(docs::undefined_cases(op).into_iter().map(|c| c.example));
    }
    v
}

#[test]
fn every_example_command_reproduces_its_table() {
    let examples = all_examples();
    assert!(examples.len() > 150, "{} examples", examples.len());
    for ex in examples {
        let out = ex
            .evaluate()
            .unwrap_or_else(|e| panic!("{}: {e}", ex.command()));
        let mut argv = vec!["lockstep".to_string()];
        argv.extend(ex.argv());
        argv.push("--json".into());
        let json = crate::cli::run(&argv)
            .unwrap_or_else(|e| panic!("{} failed: {}", ex.command(), e.message));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let lanes = v["lanes"].as_array().unwrap();
        assert_eq!(lanes.len(), out.len(), "{}", ex.command());
        for (lane, o) in lanes.iter().zip(&out) {
            let result = &lane["result"];
            match o {
                Outcome::Inactive => assert!(result.is_null(), "{}", ex.command()),
                Outcome::Undefined(r) => {
                    assert_eq!(result, "undefined", "{}", ex.command());
                    assert_eq!(lane["why"], r.to_string(), "{}", ex.command());
                }
                Outcome::Defined(x) => assert_eq!(*result, x.to_json(), "{}", ex.command()),
            }
        }
    }
}

#[test]
fn workgroup_layout_commands_run() {
    let basic = docs::render_all(&[]).remove(0).content;
    let commands: Vec<String> = basic
        .lines()
        .filter_map(|l| {
            let l = l
                .trim_start_matches("| ")
                .trim_start_matches("`row-major` | 2 | ");
            let start = l.find("lockstep eval ")?;
            let c = &l[start..];
            Some(c[..c.find('`').unwrap_or(c.len())].to_string())
        })
        .filter(|c| c.contains("--workgroup"))
        .collect();
    // Three layouts, each shown for gl_NumSubgroups and gl_SubgroupID.
    assert_eq!(commands.len(), 6, "{commands:#?}");
    for c in commands {
        let args: Vec<String> = c.split_whitespace().map(String::from).collect();
        let out = crate::cli::run(&args).unwrap_or_else(|e| panic!("{c}: {}", e.message));
        assert!(out.contains("gl_NumSubgroups = 2"), "{c}: {out}");
    }
}

fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

// GL_KHR_shader_subgroup.txt, 7.1 and 8.18, and GL_KHR_shader_subgroup_rotate.txt, 8.18: every
// declaration the pages show is one the spec texts declare.
#[test]
fn every_signature_is_declared_in_the_spec_texts() {
    let mut spec = String::new();
    for f in [
        "GL_KHR_shader_subgroup.txt",
        "GL_KHR_shader_subgroup_rotate.txt",
    ] {
        spec += &std::fs::read_to_string(specs().join(f)).unwrap();
        spec.push('\n');
    }
    let spec_lines: BTreeSet<String> = spec.lines().map(normalise).collect();
    let mut checked = 0;
    for op in catalogue() {
        for sig in docs::glsl_signatures(op) {
            assert!(
                spec_lines.contains(&normalise(&sig)),
                "{}: `{sig}` is not declared in the spec texts",
                op.name
            );
            checked += 1;
        }
    }
    assert!(checked > 150, "{checked} declarations");
}

// The extended types are declared for rotate in GL_KHR_shader_subgroup_rotate.txt, 8.18.
#[test]
fn extended_types_match_the_rotate_spec() {
    let spec = std::fs::read_to_string(specs().join("GL_KHR_shader_subgroup_rotate.txt")).unwrap();
    let rotate = lookup("rotate").unwrap();
    for g in docs::extended_gen_types(rotate.types) {
        assert!(
            spec.contains(&format!("{g} subgroupRotate({g} value, uint delta);")),
            "{g}"
        );
    }
    assert_eq!(docs::extended_gen_types(rotate.types).len(), 7);
}

/// The undefined cases each op has, from the spec texts (with the citation the test names).
fn expected_reasons(name: &str) -> Vec<&'static str> {
    match name {
        // GL_KHR_shader_subgroup.txt, 8.18: "If the <id> is an inactive invocation or is greater
        // than or equal to <gl_SubgroupSize>, an undefined value is returned" (broadcast, shuffle);
        // shuffle_xor: "If the calculated index is an inactive invocation or is greater than or
        // equal to <gl_SubgroupSize>"; shuffle_down: "plus <delta> is an inactive invocation or is
        // greater than or equal to <gl_SubgroupSize>".
        "broadcast" | "shuffle" | "shuffle_xor" | "shuffle_down" => {
            vec!["source_out_of_range", "source_inactive"]
        }
        // 8.18 subgroupShuffleUp: "minus <delta> is an inactive invocation or is less than zero".
        "shuffle_up" => vec!["source_inactive", "delta_exceeds_id"],
        // 8.18 subgroupQuadBroadcast: "If the <id> is an inactive invocation"; the swaps per SPIR-V
        // OpGroupNonUniformQuadSwap; out of range only in subgroups of 1 or 2 lanes (the model).
        "quad_broadcast" | "quad_swap_horizontal" | "quad_swap_vertical" | "quad_swap_diagonal" => {
            vec!["source_out_of_range", "source_inactive"]
        }
        // GL_KHR_shader_subgroup_rotate.txt, 8.18: "If the selected invocation is inactive, an
        // undefined value is returned" — and rotation never leaves the subgroup.
        "rotate" | "clustered_rotate" => vec!["source_inactive"],
        // 8.18 subgroupBallotBitExtract: "If <index> is greater than or equal to <gl_SubgroupSize>".
        "ballot_bit_extract" => vec!["index_out_of_range"],
        // 8.18 subgroupBallotFindLSB/MSB: "If <value> is 0, an undefined value is returned".
        "ballot_find_lsb" | "ballot_find_msb" => vec!["no_bit_set"],
        // 3.8: "If all <value>s that are used by the current invocation are NaN, then the result
        // is undefined" (every minimum and maximum).
        "min" | "max" | "inclusive_min" | "inclusive_max" | "exclusive_min" | "exclusive_max"
        | "clustered_min" | "clustered_max" => vec!["all_nan"],
        // The model's reading of 8.18 subgroupAllEqual for floats (see its catalogue rule).
        "all_equal" => vec!["all_equal_nan", "all_equal_signed_zeros"],
        _ => vec![],
    }
}

#[test]
fn the_search_finds_every_undefined_case_the_spec_names_and_no_other() {
    for op in catalogue() {
        let found: Vec<&str> = docs::undefined_cases(op).iter().map(|c| c.key).collect();
        assert_eq!(found, expected_reasons(&op.name), "{}", op.name);
    }
}

#[test]
fn every_undefined_example_shows_its_reason_in_the_named_lane() {
    for op in catalogue() {
        let ills = docs::illustrations(op);
        for c in docs::undefined_cases(op) {
            let out = c.example.evaluate().unwrap();
            assert_eq!(
                out[c.lane as usize],
                Outcome::Undefined(c.reason),
                "{}",
                c.example.command()
            );
            assert_eq!(c.key, c.reason.key());
            assert!(
                !c.reason.doc().rule.is_empty() && !(c.reason.doc().source)(op).is_empty(),
                "{}: reason {} has no description or source",
                op.name,
                c.key
            );
            if let Some(i) = c.shown_in {
                assert_eq!(ills[i].example.command(), c.example.command());
            }
        }
    }
}

#[test]
fn pages_have_every_op_with_a_table_and_a_glsl_use() {
    let pages = docs::render_all(&[]);
    for op in catalogue() {
        let page = pages
            .iter()
            .find(|p| p.path == format!("{}.md", op.category.name()))
            .unwrap();
        assert!(
            page.content.contains(&format!("\n## {}\n", op.glsl)),
            "{}",
            op.name
        );
        assert!(
            page.content
                .contains(&format!("lockstep eval {} ", op.name)),
            "{}",
            op.name
        );
        assert!(
            page.content.contains("## GLSL in use\n\n### "),
            "{}",
            page.path
        );
    }
}

#[test]
fn device_reports_render_with_device_and_date() {
    let reports = docs::read_reports(&repo().join("tests/fixtures/results")).unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0].file, "device-a-2026-11-21.json");
    let page = docs::render_all(&reports).pop().unwrap();
    assert_eq!(page.path, "undefined.md");
    let c = &page.content;
    // 1200 of 1234 = 97.2 %.
    assert!(
        c.contains(
            "- Fixture Device A (Fixture Driver 1.0, 2026-11-21) returned the lane's own value in 97% \
             of out-of-range shuffle_down cases (1200 of 1234 lanes), zero in 3% (34)."
        ),
        "{c}"
    );
    assert!(c.contains(
        "- Fixture Device B (Fixture Driver 2.0, 2026-11-22) returned zero in 100% of out-of-range \
         shuffle_down cases (200 of 200 lanes)."
    ));
    assert!(c.contains("### Fixture Device A (Fixture Driver 1.0, 2026-11-21)"));
    assert!(c.contains("subgroup size 32"));
    assert!(c.contains("summary: cases 4096, passed 4095, failed 1"));
    // The one-table view names both devices in the shuffle_down row, with links to their sections.
    let row = c
        .lines()
        .find(|l| l.contains("subgroupShuffleDown") && l.contains("`source_out_of_range`"))
        .unwrap();
    assert!(
        row.ends_with(
            "[Fixture Device A](#fixture-device-a-fixture-driver-10-2026-11-21): own value 97%, zero 3%; \
             [Fixture Device B](#fixture-device-b-fixture-driver-20-2026-11-22): zero 100% |"
        ),
        "{row}"
    );
    // An op or reason the catalogue does not know is shown as reported, not dropped.
    assert!(c.contains("| `future_op` | `future_reason` | 3 |"), "{c}");
    // Without reports the section says where they come from.
    let none = docs::render_all(&[]).pop().unwrap().content;
    assert!(none.contains("No conformance report yet"));
    assert!(!none.contains("what devices returned |"));
}

#[test]
fn the_docs_command_writes_and_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("semantics");
    let run = |extra: &[&str]| {
        let mut argv: Vec<String> = ["lockstep", "docs", "--out"].map(String::from).to_vec();
        argv.push(out.display().to_string());
        argv.extend([
            "--results".to_string(),
            tmp.path().join("r").display().to_string(),
        ]);
        argv.extend(extra.iter().map(|s| s.to_string()));
        crate::cli::run(&argv)
    };
    let e = run(&["--check"]).unwrap_err();
    assert_eq!(e.code, crate::cli::EXIT_MISMATCH);
    assert!(
        e.message.contains("basic.md: not committed"),
        "{}",
        e.message
    );
    let wrote = run(&[]).unwrap();
    assert_eq!(wrote.lines().count(), 10, "{wrote}");
    assert!(run(&["--check"]).unwrap().contains("is up to date"));
    std::fs::write(out.join("rotate.md"), "# Rotate\n").unwrap();
    let e = run(&["--check"]).unwrap_err();
    assert!(
        e.message.contains("rotate.md:1: first difference"),
        "{}",
        e.message
    );
}

#[test]
fn every_example_kernel_is_known_to_the_docs() {
    // The semantics pages link each category's examples (src/docs/kernels.rs lists them).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut comps: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "comp")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    comps.sort();
    let known: Vec<String> = crate::docs::EXAMPLE_KERNELS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(comps, known);
    for (name, text) in crate::docs::EXAMPLE_KERNELS {
        assert_eq!(
            *text,
            std::fs::read_to_string(dir.join(format!("{name}.comp"))).unwrap()
        );
    }
}

// The generator's examples (doc examples while `docs` was public).

#[test]
fn example_example() {
    use crate::docs::Example;
    use crate::model::{lookup, LaneMask};
    let ex = Example::full(lookup("shuffle_down").unwrap()).with_active(LaneMask(0x7f));
    assert_eq!(
        ex.command(),
        "lockstep eval shuffle_down --size 8 --active 0x7f \
        --values 100,101,102,103,104,105,106,107 --delta 1"
    );
    let out = ex.evaluate().unwrap();
    assert_eq!(out[6].to_string(), "undef"); // lane 6 reads lane 7, which is inactive
}

#[test]
fn divergent_mask_example() {
    use crate::docs::divergent_mask;
    use crate::model::SubgroupSize;
    assert_eq!(divergent_mask(SubgroupSize::new(8).unwrap()).0, 0xd6);
    assert_eq!(
        divergent_mask(SubgroupSize::new(32).unwrap()).0,
        0xb7d6_b7d6
    );
}

#[test]
fn illustrations_example() {
    use crate::docs::illustrations;
    use crate::model::lookup;
    let ills = illustrations(lookup("subgroupClusteredAdd").unwrap());
    assert_eq!(ills[0].title, "Full subgroup");
    assert!(ills.iter().any(|i| i.title.starts_with("Worked example")));
}

#[test]
fn undefined_cases_example() {
    use crate::docs::undefined_cases;
    use crate::model::lookup;
    let keys: Vec<&str> = undefined_cases(lookup("shuffle_up").unwrap())
        .iter()
        .map(|c| c.key)
        .collect();
    assert_eq!(keys, ["source_inactive", "delta_exceeds_id"]);
    assert!(undefined_cases(lookup("subgroupAdd").unwrap()).is_empty());
}

#[test]
fn extended_gen_types_example() {
    use crate::docs::extended_gen_types;
    use crate::model::TypeClass;
    assert_eq!(
        extended_gen_types(TypeClass::IntegerOrBool),
        [
            "genI8Type",
            "genU8Type",
            "genI16Type",
            "genU16Type",
            "genI64Type",
            "genU64Type"
        ]
    );
    assert!(extended_gen_types(TypeClass::Bool).is_empty());
}

#[test]
fn glsl_signatures_example() {
    use crate::docs::glsl_signatures;
    use crate::model::lookup;
    let s = glsl_signatures(lookup("shuffle_down").unwrap());
    assert_eq!(
        s[0],
        "genType  subgroupShuffleDown(genType value,  uint delta);"
    );
    assert_eq!(
        glsl_signatures(lookup("elect").unwrap()),
        ["bool subgroupElect(void);"]
    );
    assert_eq!(
        glsl_signatures(lookup("subgroup_size").unwrap()),
        ["mediump in uint gl_SubgroupSize;"]
    );
}

#[test]
fn lane_table_example() {
    use crate::docs::{lane_table, Example};
    use crate::model::{lookup, LaneMask};
    let ex = Example::full(lookup("broadcast_first").unwrap()).with_active(LaneMask(0b1100_0000));
    let t = lane_table(&ex, &ex.evaluate().unwrap());
    assert!(
        t.contains("| active | - | - | - | - | - | - | x | x |"),
        "{t}"
    );
    assert!(
        t.contains("| **result** | - | - | - | - | - | - | 106 | 106 |"),
        "{t}"
    );
}

#[test]
fn docs_module_example() {
    let pages = crate::docs::render_all(&[]);
    let names: Vec<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(names[..2], ["basic.md", "vote.md"]);
    assert_eq!(names.last(), Some(&"undefined.md"));
    let shuffle = pages
        .iter()
        .find(|p| p.path == "shuffle-relative.md")
        .unwrap();
    assert!(shuffle.content.contains("## subgroupShuffleDown"));
}

#[test]
fn generate_example() {
    let dir = tempfile::tempdir().unwrap();
    let written = crate::docs::generate(dir.path(), &dir.path().join("no-results")).unwrap();
    assert_eq!(written.len(), 10);
    assert!(std::fs::read_to_string(dir.path().join("quad.md"))
        .unwrap()
        .contains("subgroupQuadSwapDiagonal"));
}

#[test]
fn first_difference_example() {
    use crate::docs::first_difference;
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    assert_eq!(
        first_difference("a\nb\n", "a\nc\n"),
        Some((2, Some("b"), Some("c")))
    );
    assert_eq!(
        first_difference("a\n", "a\nb\n"),
        Some((2, None, Some("b")))
    );
    assert_eq!(first_difference("a", "a\n"), Some((2, None, None)));
}

#[test]
fn check_example() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    crate::docs::generate(dir.path(), &results).unwrap();
    assert!(crate::docs::check(dir.path(), &results).unwrap().is_empty());
    std::fs::write(dir.path().join("vote.md"), "edited\n").unwrap();
    let drift = crate::docs::check(dir.path(), &results).unwrap();
    assert!(drift[0].to_string().ends_with("vote.md:1: first difference\n  committed: \"edited\"\n  generated: \"# Vote: subgroupAll, subgroupAny, subgroupAllEqual\""), "{}", drift[0]);
}

#[test]
fn refresh_output_blocks_example() {
    use crate::docs::refresh_output_blocks;
    let md = "Intro\n<!-- lockstep-output: hello world -->\nold\n<!-- /lockstep-output -->\nEnd\n";
    let out = refresh_output_blocks(md, |args| format!("{} args\n", args.len())).unwrap();
    assert_eq!(out, "Intro\n<!-- lockstep-output: hello world -->\n```text\n$ lockstep hello world\n2 args\n```\n<!-- /lockstep-output -->\nEnd\n");
    assert!(refresh_output_blocks("<!-- lockstep-output: x -->\n", |_| String::new()).is_err());
}

#[test]
fn report_example() {
    let r: crate::docs::Report = serde_json::from_str(
        r#"{
        "device": {"name": "llvmpipe", "driver": "Mesa 22.3.6", "subgroup_size": 8},
        "date": "2026-11-21", "command": "lockstep conform", "results": [],
        "undefined_observed": [{"op": "shuffle_down", "reason": "source_out_of_range", "lanes": 4,
            "patterns": [{"pattern": "own_value", "lanes": 4}]}],
        "summary": {"passed": 1}}"#,
    )
    .unwrap();
    assert_eq!(r.undefined_observed[0].patterns[0].pattern, "own_value");
}

#[test]
fn read_reports_example() {
    let dir = tempfile::tempdir().unwrap();
    assert!(crate::docs::read_reports(&dir.path().join("missing"))
        .unwrap()
        .is_empty());
    std::fs::write(dir.path().join("bad.json"), "{").unwrap();
    let e = crate::docs::read_reports(dir.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.json"), "{e}");
}

#[test]
fn sentence_example() {
    use crate::docs::{sentence, PatternCount, Report, ReportDevice, UndefinedObserved};
    let r = Report {
        device: ReportDevice {
            name: "X".into(),
            driver: "d 1".into(),
            subgroup_size: Some(32),
        },
        date: "2026-11-21".into(),
        command: String::new(),
        undefined_observed: vec![],
        summary: serde_json::Value::Null,
    };
    let u = UndefinedObserved {
        op: "shuffle_down".into(),
        reason: "source_out_of_range".into(),
        lanes: 4,
        patterns: vec![
            PatternCount {
                pattern: "zero".into(),
                lanes: 1,
            },
            PatternCount {
                pattern: "own_value".into(),
                lanes: 3,
            },
        ],
    };
    assert_eq!(
        sentence(&r, &u),
        "X (d 1, 2026-11-21) returned the lane's own value in 75% of \
        out-of-range shuffle_down cases (3 of 4 lanes), zero in 25% (1)."
    );
}
