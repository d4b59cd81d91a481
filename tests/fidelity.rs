//! Fidelity on other people's tests: the Vulkan CTS's compute Amber files (`../shared/amber-corpus`,
//! read from there, never copied) on the model, against the verdicts an NVIDIA H100 gave them
//! (`h100.json`). Of the EXPECTs the H100 passes in files the model runs, the model must pass at
//! least 97%; of all the EXPECTs it passes, at least 95% (issue 19).
use assert_cmd::Command;
use std::path::PathBuf;

fn corpus() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/amber-corpus");
    if here.is_dir() {
        return here;
    }
    let abs = PathBuf::from("/work/shared/amber-corpus");
    assert!(
        abs.is_dir() || std::env::var("LOCKSTEP_SKIP_CORPUS").is_ok(),
        "the corpus ../shared/amber-corpus is missing (set LOCKSTEP_SKIP_CORPUS=1 to run without it)"
    );
    abs
}

/// The two percentages of the summary line "… (P%; Q% in the files it runs) …".
fn percents(text: &str) -> (f64, f64) {
    let line = text
        .lines()
        .find(|l| l.starts_with("fidelity against"))
        .unwrap_or_else(|| panic!("no fidelity line in {text}"));
    let nums: Vec<f64> = line
        .split(['(', ';', '%'])
        .filter_map(|p| p.trim().parse::<f64>().ok())
        .collect();
    (nums[0], nums[1])
}

#[test]
fn the_model_agrees_with_the_h100_on_the_cts_compute_scripts() {
    let c = corpus();
    if !c.is_dir() {
        eprintln!("SKIPPED by LOCKSTEP_SKIP_CORPUS: 0 files checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("fidelity.md");
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .arg("amber")
        .arg(c.join("cts"))
        .arg("--model-only")
        .arg("--fidelity")
        .arg(&md)
        .arg("--against")
        .arg(c.join("h100.json"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (all, ran) = percents(&text);
    assert!(ran >= 97.0, "{ran}% in the files the model runs\n{text}");
    assert!(all >= 95.0, "{all}% of all\n{text}");
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(table.contains("| **total (139 files)** |"), "{table}");
}

#[test]
fn fidelity_needs_a_device_or_its_recorded_verdicts() {
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .args([
            "amber",
            "examples",
            "--model-only",
            "--fidelity",
            "/tmp/x.md",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--against"));
}
