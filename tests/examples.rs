//! `examples/`: every Amber script runs on the model (under the mode its shader declares) and on the
//! default device (lavapipe here), and every EXPECT holds on both; a device that lacks what a
//! script needs reports it unsupported, and then the model must still pass. Each script's shader
//! is the text of the `.comp` file of the same name, so the two cannot drift apart.

use crate::support::cmd::CargoBin;
use std::path::{Path, PathBuf};
use std::process::Command;

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "amber"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_script_passes_on_the_model_and_the_device() {
    let files = examples();
    assert!(files.len() >= 5, "examples/: {files:?}");
    for f in &files {
        let out = Command::cargo_bin("lockstep")
            .unwrap()
            .arg("amber")
            .arg(f)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stdout}\n{stderr}", f.display());
        let name = f.display().to_string();
        let status = stdout
            .lines()
            .find(|l| l.starts_with(&name))
            .unwrap_or_else(|| panic!("{name}: no status line in {stdout}"));
        if status.contains(": unsupported — device:") {
            // The device lacks a feature: the model's column must still say pass everywhere.
            let rows: Vec<&str> = stdout
                .lines()
                .filter(|l| l.starts_with("  ") && l.contains("EXPECT"))
                .collect();
            assert!(!rows.is_empty(), "{stdout}");
            for r in rows {
                assert!(r.trim_end().ends_with("pass"), "{name}: {r}");
            }
        } else {
            assert!(status.ends_with(": pass"), "{status}");
            assert!(stdout.contains("device"), "{stdout}");
        }
    }
}

#[test]
fn every_example_script_runs_the_text_of_its_comp_file() {
    for f in examples() {
        let script = std::fs::read_to_string(&f).unwrap();
        let comp = std::fs::read_to_string(f.with_extension("comp")).unwrap();
        let start = script.find("SHADER compute").expect("a compute shader");
        let body = &script[script[start..].find('\n').unwrap() + start + 1..];
        let end = body.find("\nEND\n").expect("END");
        assert_eq!(&body[..end + 1], comp, "{}", f.display());
    }
}

#[test]
fn the_fixed_allocation_kernel_is_undefined_under_base_naming_the_election() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/allocation_sucf.amber");
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .arg("amber")
        .arg(&f)
        .args(["--model-only", "--mode", "base", "--subgroup-size", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("free[0] is undefined")
            && stdout.contains("subgroupElect script:allocation_sucf:31: the invocations executing it together are not pinned down under base reconvergence"),
        "{stdout}"
    );
}

#[test]
fn a_buffer_too_small_for_the_kernel_reads_as_one_finding_per_cause() {
    // max_reduce reads foo[gl_GlobalInvocationID.x] for 128 invocations; give it two elements.
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "examples/max_reduce.comp", "--model-only"])
        .args(["--buffer", "0=zeros:u32:2", "--buffer", "1=zeros:u32:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let oob: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("[out_of_bounds]"))
        .collect();
    assert_eq!(oob.len(), 1, "{stdout}");
    assert!(
        oob[0].contains("out-of-bounds read of foo at examples/max_reduce.comp:14 — byte 8 by")
            && oob[0].ends_with("and 122 more"),
        "{stdout}"
    );
    // Four subgroups' atomicMax on one word: one link in the chain, not four.
    assert!(
        stdout.contains(
            "binding 1 bar ← OpAtomicUMax examples/max_reduce.comp:17 ← OpLoad examples/max_reduce.comp:14: byte 8 is outside"
        ),
        "{stdout}"
    );
}
