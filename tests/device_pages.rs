//! `lockstep conform --device all` (every device, a process each, a column each) and `lockstep
//! report` (a device's page), on lavapipe — made into two devices by listing its driver twice
//! under two file names, as a machine with two GPUs lists two.
#![cfg(feature = "vulkan")]

use crate::support::cmd::{Assertions, CargoBin};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

/// A `VK_DRIVER_FILES` value that lists lavapipe twice (a copy of its library under another name:
/// the loader keeps one driver per library), or `None` where lavapipe is not installed.
fn two_lavapipes(dir: &Path) -> Option<String> {
    let icd = Path::new("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
    let text = std::fs::read_to_string(icd).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let lib = PathBuf::from(json["ICD"]["library_path"].as_str()?);
    let copy = dir.join("libvulkan_lvp_second.so");
    std::fs::copy(&lib, &copy).ok()?;
    let mut second = json.clone();
    second["ICD"]["library_path"] = copy.display().to_string().into();
    let second_icd = dir.join("lvp_second.json");
    std::fs::write(&second_icd, second.to_string()).ok()?;
    Some(format!("{}:{}", icd.display(), second_icd.display()))
}

#[test]
fn device_all_runs_every_device_in_a_process_of_its_own_with_a_column_each() {
    if support::shared_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(files) = two_lavapipes(dir.path()) else {
        panic!("lavapipe's driver file /usr/share/vulkan/icd.d/lvp_icd.x86_64.json is missing (./test installs mesa-vulkan-drivers)");
    };
    let json = dir.path().join("all.json");
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .env("VK_DRIVER_FILES", &files)
        .args([
            "conform",
            "--device",
            "all",
            "--cases",
            "40",
            "--category",
            "vote,ballot",
        ])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("[0] llvmpipe") && text.contains("[1] llvmpipe"),
        "{text}"
    );
    let table: Vec<&str> = text.lines().filter(|l| l.starts_with("vote ")).collect();
    assert_eq!(table.len(), 1, "{text}");
    // One cell per device, the same cases on both (the same seed, the same driver).
    let cells: Vec<&str> = table[0].split_whitespace().skip(2).collect();
    assert_eq!(cells.len(), 2, "{text}");
    assert_eq!(cells[0], cells[1]);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let devices = j["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    for d in devices {
        assert_eq!(d["summary"]["passed"], true, "{d}");
        assert!(d["summary"]["cases"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_device_page_has_every_section_with_this_runs_figures() {
    if support::shared_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (md, html) = (dir.path().join("dev.md"), dir.path().join("dev.html"));
    Command::cargo_bin("lockstep")
        .unwrap()
        .args(["report", "--cases", "20", "--programs", "16", "--out"])
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .arg("--keep")
        .arg(dir.path().join("json"))
        .assert()
        .success();
    let page = std::fs::read_to_string(&md).unwrap();
    for section in [
        "## Subgroup properties",
        "## Conformance per subgroup size",
        "## Known deviations from the spec",
        "## Where the spec says undefined",
        "## Lane layouts",
        "## Reconvergence guarantees",
    ] {
        assert!(page.contains(section), "{section} missing:\n{page}");
    }
    // The figures are the run's: the conformance row of the device's size holds its count.
    let conform: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("json/conform.json")).unwrap(),
    )
    .unwrap();
    let size = conform["device"]["subgroup_size"].as_u64().unwrap();
    let cases = conform["summary"]["cases"].as_u64().unwrap();
    assert!(
        page.contains(&format!("| {size} | {cases} |")),
        "no row for size {size} with {cases} subgroups:\n{page}"
    );
    // lavapipe offers no SUCF and no maximal reconvergence: said, with the feature.
    assert!(page.contains("| base | met | 16 |"), "{page}");
    assert!(
        page.contains("not offered: shaderSubgroupUniformControlFlow"),
        "{page}"
    );
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(
        h.starts_with("<!DOCTYPE html>") && h.contains("<table>"),
        "{h}"
    );
}

#[test]
fn run_device_all_runs_a_kernel_on_every_device_with_a_column_each() {
    if support::shared_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(files) = two_lavapipes(dir.path()) else {
        panic!("lavapipe's driver file is missing (./test installs mesa-vulkan-drivers)");
    };
    let json = dir.path().join("run.json");
    // shuffle_down_edge reads past the subgroup at two lanes: undefined there, so the run fails
    // (exit 1) on both devices alike, and says so per device.
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .env("VK_DRIVER_FILES", &files)
        .args([
            "run",
            "examples/shuffle_down_edge.comp",
            "--buffer",
            "0=series:f32:16",
        ])
        .args(["--buffer", "1=zeros:f32:16", "--device", "all", "--json"])
        .arg(&json)
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let row = text
        .lines()
        .find(|l| l.starts_with("set 0 binding 1"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row.matches("14 exact, 2 undefined, 0 ≠").count(),
        2,
        "{text}"
    );
    assert!(text.contains("[1] llvmpipe"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["devices"].as_array().unwrap().len(), 2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("not clean on every device"));
}
