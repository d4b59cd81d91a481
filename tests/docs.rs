//! The generated docs stay true: regenerated pages equal the committed ones, every table's command
//! reproduces it, signatures are the spec's, every undefined case the spec names is found, and the
//! conformance-report reader renders what devices returned.

use lockstep::docs::{self, Example};
use lockstep::model::{catalogue, lookup, Outcome};
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
        let fresh = docs::refresh_output_blocks(&text, lockstep::cli::command_output).unwrap();
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
        let json = lockstep::cli::run(&argv)
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
        let out = lockstep::cli::run(&args).unwrap_or_else(|e| panic!("{c}: {}", e.message));
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
        lockstep::cli::run(&argv)
    };
    let e = run(&["--check"]).unwrap_err();
    assert_eq!(e.code, lockstep::cli::EXIT_MISMATCH);
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

fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    let Ok(entries) = std::fs::read_dir(repo().join(dir)) else {
        return v;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            let sub = format!("{dir}/{}", e.file_name().to_string_lossy());
            v.extend(sources(&sub));
        } else if p.extension().is_some_and(|x| x == "rs") {
            v.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
        }
    }
    v
}

// docs/architecture.md: the model has no Vulkan types, the backend knows nothing of the model, the
// docs use the model only.
/// The layers of docs/architecture.md: each top-level module of `src/` and the modules of this
/// crate it may use (besides itself). Nothing points up; `cli` is used by no other module.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    ("model", &[]),
    // One SPIR-V reader for the device side and the model.
    ("words", &[]),
    // `--shard K/N`, and reports as cases (merge, baselines, flakes): no other module.
    ("shard", &[]),
    ("merge", &["text"]),
    ("vulkan", &["words"]),
    ("conform", &["model", "vulkan", "text", "files", "shard"]),
    ("docs", &["model", "text"]),
    ("grayscott", &["model", "vulkan", "text"]),
    ("reconverge", &["model", "vulkan", "text", "shard"]),
    ("files", &[]),
    // The SPIR-V interpreter: the model and the reconvergence rules, no Vulkan.
    ("spirv", &["model", "reconverge", "files", "text", "words"]),
    (
        "kernel",
        &[
            "model",
            "reconverge",
            "spirv",
            "vulkan",
            "files",
            "text",
            "words",
        ],
    ),
    (
        "amber",
        &[
            "model",
            "reconverge",
            "spirv",
            "kernel",
            "vulkan",
            "files",
            "text",
        ],
    ),
    (
        "cli",
        &[
            "model",
            "vulkan",
            "conform",
            "docs",
            "grayscott",
            "reconverge",
            "text",
            "files",
            "spirv",
            "kernel",
            "amber",
            "shard",
            "merge",
        ],
    ),
];

/// The crate modules a source file names in code (`crate::x`), comments left out.
fn crate_modules_used(text: &str) -> Vec<String> {
    let mut used = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !used.contains(&name) {
                used.push(name);
            }
        }
    }
    used
}

#[test]
fn the_dependency_rules_hold() {
    // Every top-level module has its place in the layers.
    let root = repo().join("src");
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if ["lib", "main"].contains(&name.as_str()) {
            continue;
        }
        assert!(
            LAYERS.iter().any(|(m, _)| *m == name),
            "src/{name} has no place in LAYERS (tests/docs.rs) and docs/architecture.md: add it"
        );
    }
    for (module, allowed) in LAYERS {
        let dir = format!("src/{module}");
        let mut files = sources(&dir);
        if let Ok(text) = std::fs::read_to_string(repo().join(format!("{dir}.rs"))) {
            files.push((repo().join(format!("{dir}.rs")), text));
        }
        assert!(!files.is_empty(), "{dir} has no sources");
        for (path, text) in files {
            for used in crate_modules_used(&text) {
                assert!(
                    used == *module || allowed.contains(&used.as_str()),
                    "{} uses crate::{used}, which its layer may not (docs/architecture.md)",
                    path.display()
                );
            }
            // The Vulkan API stays in the backend and the modules that drive a device.
            if ["text", "model", "docs", "spirv", "files", "reconverge"].contains(module) {
                assert!(!text.contains("vulkano"), "{} uses vulkano", path.display());
            }
        }
    }
}

/// The modules of `src/model`, by layer: a module uses only modules of lower layers, so the
/// model has no cycles (value types at the bottom, errors converted at the edge).
const MODEL_LAYERS: &[(&str, u8)] = &[
    ("types", 0),
    ("error", 1),
    ("scalar", 1),
    ("value", 2),
    ("params", 3),
    ("catalogue", 3),
    ("call", 4),
    ("outcome", 4),
    ("workgroup", 4),
    ("eval", 5),
];

#[test]
fn the_model_modules_have_no_cycles() {
    let layer = |m: &str| MODEL_LAYERS.iter().find(|(n, _)| *n == m).map(|(_, l)| *l);
    for (path, text) in sources("src/model") {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "mod" {
            continue;
        }
        let own = layer(&name)
            .unwrap_or_else(|| panic!("src/model/{name}.rs has no place in MODEL_LAYERS"));
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::model::") {
                let next: String = code[i + "crate::model::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // Through a module path, never a re-export, so that the dependency shows.
                let used = layer(&next).unwrap_or_else(|| {
                    panic!(
                        "{}: `crate::model::{next}` hides its module",
                        path.display()
                    )
                });
                assert!(
                    used < own,
                    "{}: {name} (layer {own}) uses {next} (layer {used})",
                    path.display()
                );
            }
        }
    }
}

/// Within each top-level module of `src/`, which of its files (`src/m/x.rs` or `src/m/x/…`) use
/// which others (`crate::m::x`, or `super::x` from a file directly under `src/m/`).
fn file_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let root = repo().join("src");
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        if !e.path().is_dir() {
            continue;
        }
        let top = e.file_name().to_string_lossy().to_string();
        let files = sources(&format!("src/{top}"));
        let sub_of = |p: &std::path::Path| -> String {
            let rel = p.strip_prefix(root.join(&top)).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            first.trim_end_matches(".rs").to_string()
        };
        let subs: BTreeSet<String> = files.iter().map(|(p, _)| sub_of(p)).collect();
        for (p, text) in &files {
            let me = sub_of(p);
            if me == "mod" {
                continue;
            }
            let direct = p.parent() == Some(&root.join(&top));
            let node = g.entry(format!("{top}/{me}")).or_default();
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or("");
                let mut used = Vec::new();
                let prefix = format!("crate::{top}::");
                for (i, _) in code.match_indices(&prefix) {
                    used.push(&code[i + prefix.len()..]);
                }
                if direct {
                    for (i, _) in code.match_indices("super::") {
                        used.push(&code[i + "super::".len()..]);
                    }
                }
                for u in used {
                    let name: String = u
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if name != me && name != "mod" && subs.contains(&name) {
                        node.insert(format!("{top}/{name}"));
                    }
                }
            }
        }
    }
    g
}

/// Issue 18 §8: no import cycles between the files of a module. The two cycles the issue named
/// are gone (`reconverge::exec ⇄ flow` through `Mode`, now in `reconverge::mode`;
/// `vulkan::module ⇄ reflect` through `SpecConstant`, now in `reflect`), and so are the
/// interpreter's `inst ⇄ memory ⇄ prov ⇄ scalar` (the numbered things in the leaf `spirv::ids`,
/// `ScalarUndef` in `prov`) and `exec ⇄ memops` (`SyncRecord` in `memory::clock`, `LateKey` in
/// `memory`). A new cycle fails the test.
#[test]
fn the_files_of_a_module_have_no_import_cycles() {
    use std::collections::BTreeSet;
    let g = file_graph();
    assert!(g.len() > 50, "{} files found", g.len());
    // Strongly connected components of more than one file (Tarjan).
    struct T<'a> {
        g: &'a std::collections::BTreeMap<String, BTreeSet<String>>,
        index: std::collections::HashMap<String, usize>,
        low: std::collections::HashMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit(t: &mut T<'_>, v: &str) {
        t.index.insert(v.to_string(), t.next);
        t.low.insert(v.to_string(), t.next);
        t.next += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let empty = BTreeSet::new();
        for w in t.g.get(v).unwrap_or(&empty).clone() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                comp.insert(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: &g,
        index: Default::default(),
        low: Default::default(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    let found: BTreeSet<Vec<String>> = t.out.iter().map(|c| c.iter().cloned().collect()).collect();
    assert!(
        found.is_empty(),
        "import cycles between the files of a module: {found:?}"
    );
}

/// Issue 18 §8: no source file over 1,200 lines — a file a reader can hold, split by job (the
/// decoder by phase and instruction family, the executor into dispatch, control flow and the
/// generic register operations, the AmberScript reader by statement family). Every file of
/// `src/` is counted; none is a data table today, so none is exempt.
#[test]
fn no_source_file_is_over_1200_lines() {
    let files: Vec<PathBuf> = sources("src").into_iter().map(|(p, _)| p).collect();
    assert!(files.len() > 100, "{} files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > 1200).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 1,200 lines: {long:?}");
}

/// The README's library example is the crate root's doc-test, line for line (so `cargo test --doc`
/// runs what the README shows).
#[test]
fn the_readme_library_example_is_the_crate_doc_test() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let block = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README has a ```rust example");
    let doc: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l).to_string())
        .collect();
    let lines: Vec<&str> = block.lines().collect();
    assert!(lines.len() > 5, "{block}");
    let found = doc
        .windows(lines.len())
        .any(|w| w.iter().zip(&lines).all(|(a, b)| a == b));
    assert!(
        found,
        "README's ```rust example is not the crate root's doc-test (src/lib.rs):\n{block}"
    );
}

/// Issue 18 §8: no function over 150 lines outside data tables — a function a reader can hold.
/// A function is counted from its `fn` line to the closing brace at its own indentation (the
/// code is rustfmt-formatted). The data tables: the catalogue's operation table
/// (`model::catalogue::build`, one entry per operation) and the GLSL uses shown on the docs'
/// pages (`docs::uses::uses`, source text).
#[test]
fn no_function_is_over_150_lines_outside_data_tables() {
    const TABLES: [(&str, &str); 2] = [("catalogue.rs", "build"), ("uses.rs", "uses")];
    let files: Vec<PathBuf> = sources("src").into_iter().map(|(p, _)| p).collect();
    let mut counted = 0;
    let mut long = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let indent = l.len() - l.trim_start().len();
            let mut rest = l.trim_start();
            for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
                rest = rest.strip_prefix(prefix).unwrap_or(rest);
            }
            let Some(sig) = rest.strip_prefix("fn ") else {
                continue;
            };
            let name: String = sig
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let close = format!("{}}}", " ".repeat(indent));
            let Some(end) = lines[i + 1..].iter().position(|x| *x == close) else {
                continue; // a declaration without a body
            };
            counted += 1;
            let n = end + 2;
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            if n > 150 && !TABLES.contains(&(file.as_str(), name.as_str())) {
                long.push(format!("{}:{} {name} ({n} lines)", p.display(), i + 1));
            }
        }
    }
    assert!(counted > 1000, "{counted} functions found");
    assert!(long.is_empty(), "functions over 150 lines: {long:?}");
}
