//! The dependency, cycle and size rules of the source (docs/architecture.md), read from the files,
//! and what the build's own script does to a compilation (`scripts/rustc-wrapper`).
//! (The generated docs' own tests are the `cli::docs_tests` unit tests: the generator is
//! crate-private.)

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

/// `scripts/rustc-wrapper` (Cargo's `build.rustc-workspace-wrapper`, README "Decisions") appends
/// `-C opt-level=0` to the compilation of the library's unit tests and to nothing else: run with
/// `echo` in rustc's place, it prints the arguments it would give rustc.
#[test]
fn the_rustc_wrapper_unoptimises_only_the_library_unit_tests() {
    use crate::support::cmd::Assertions;
    let config = std::fs::read_to_string(repo().join(".cargo/config.toml")).unwrap();
    assert!(
        config.contains("rustc-workspace-wrapper = \"scripts/rustc-wrapper\""),
        "the wrapper is no longer Cargo's workspace wrapper"
    );
    let wrapped = |args: &[&str]| -> String {
        let run = std::process::Command::new(repo().join("scripts/rustc-wrapper"))
            .arg("echo")
            .args(args)
            .assert()
            .success();
        let out = String::from_utf8_lossy(&run.get_output().stdout);
        out.trim_end().to_string()
    };
    let lib = |path| ["--crate-name", "lockstep", path, "-C", "opt-level=3"];
    // The library's unit tests, its source named as Cargo names it or whole.
    for path in ["src/lib.rs", "/somewhere/lockstep/src/lib.rs"] {
        let args = [&lib(path)[..], &["--test"]].concat();
        let expected = format!("{} -C opt-level=0", args.join(" "));
        assert_eq!(wrapped(&args), expected);
    }
    // Everything else as it came: the library, the suite, the binary's tests, the example crate's.
    for args in [
        &lib("src/lib.rs")[..],
        &["--crate-name", "suite", "tests/suite.rs", "--test"],
        &["--crate-name", "lockstep", "src/main.rs", "--test"],
        &[
            "--crate-name",
            "kernel_test",
            "examples/kernel-test/src/lib.rs",
            "--test",
        ],
    ] {
        assert_eq!(wrapped(args), args.join(" "), "{args:?} changed");
    }
}
