//! Shards, merges, baselines and flakes (issue 21 §4): the N shards of a run, merged, are exactly
//! the unsharded run — for `conform` and `amber` through the binary and `lockstep merge`, for
//! `reconverge` in tests/reconverge.rs — and a baseline or a flakes list changes verdicts as
//! deqp-runner's do.
#![cfg(feature = "vulkan")]

use crate::support::cmd::{Assertions, CargoBin};
use serde_json::Value as Json;
use std::path::Path;
use std::process::Command;

use crate::support;

fn lockstep() -> Command {
    Command::cargo_bin("lockstep").unwrap()
}

fn read(p: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A merged report without what differs between runs (dates, commands, times, report paths, and
/// the values a device returned where the spec leaves them undefined: lavapipe's change from run
/// to run — how many lanes were undefined is the model's, and is compared).
fn comparable(mut m: Json) -> Json {
    let o = m.as_object_mut().unwrap();
    o.remove("reports");
    for u in o
        .get_mut("undefined_observed")
        .and_then(Json::as_array_mut)
        .into_iter()
        .flatten()
    {
        let u = u.as_object_mut().unwrap();
        assert!(u.remove("values").is_some() && u.remove("patterns").is_some());
    }
    if let Some(s) = o.get_mut("summary").and_then(Json::as_object_mut) {
        s.remove("seconds_summed");
    }
    m
}

fn merge(dir: &Path, inputs: &[&str], out: &str) -> Json {
    let o = dir.join(out);
    let mut c = lockstep();
    c.arg("merge")
        .args(inputs.iter().map(|i| dir.join(i)))
        .arg("--json")
        .arg(&o);
    let a = c.assert();
    let code = a.get_output().status.code();
    assert!(matches!(code, Some(0) | Some(1)), "{:?}", a.get_output());
    read(&o)
}

#[test]
fn the_shards_of_a_conform_run_merged_are_the_unsharded_run() {
    if support::shared_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |shard: Option<&str>, out: &str| {
        let mut c = lockstep();
        c.args([
            "conform",
            "--cases",
            "60",
            "--category",
            "vote,arithmetic,shuffle",
        ])
        .args(["--types", "u32,f32"])
        .arg("--json")
        .arg(dir.path().join(out));
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        c.assert().success();
    };
    run(None, "all.json");
    for k in 1..=3 {
        run(Some(&format!("{k}/3")), &format!("s{k}.json"));
    }
    let whole = read(&dir.path().join("all.json"));
    let parts: Vec<Json> = (1..=3)
        .map(|k| read(&dir.path().join(format!("s{k}.json"))))
        .collect();
    // Each shard ran something, and no row twice.
    let rows = |r: &Json| r["results"].as_array().unwrap().len();
    for p in &parts {
        assert!(
            p["summary"]["cases"].as_u64().unwrap() > 0,
            "an empty shard"
        );
    }
    let ran = |r: &Json| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["workgroup"].is_array())
            .count()
    };
    assert_eq!(parts.iter().map(ran).sum::<usize>(), ran(&whole));
    assert!(rows(&whole) > 20);
    let one = merge(dir.path(), &["all.json"], "m1.json");
    let three = merge(dir.path(), &["s1.json", "s2.json", "s3.json"], "m3.json");
    assert_eq!(three["summary"]["cases"], whole["summary"]["cases"]);
    assert_eq!(
        three["summary"]["lane_checks"],
        whole["summary"]["lane_checks"]
    );
    assert_eq!(comparable(three), comparable(one));
}

#[test]
fn the_shards_of_an_amber_run_merged_are_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |shard: Option<&str>, out: &str| {
        let mut c = lockstep();
        c.args(["amber", "--model-only", "examples", "tests/amber"])
            .arg("--json")
            .arg(dir.path().join(out));
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        let code = c.assert().get_output().status.code();
        assert!(matches!(code, Some(0) | Some(1)), "{code:?}");
    };
    run(None, "all.json");
    run(Some("1/2"), "s1.json");
    run(Some("2/2"), "s2.json");
    let files = |r: &Json| r["files"].as_array().unwrap().len();
    let (s1, s2) = (
        read(&dir.path().join("s1.json")),
        read(&dir.path().join("s2.json")),
    );
    assert!(files(&s1) > 0 && files(&s2) > 0);
    assert_eq!(
        files(&s1) + files(&s2),
        files(&read(&dir.path().join("all.json")))
    );
    let one = merge(dir.path(), &["all.json"], "m1.json");
    let two = merge(dir.path(), &["s2.json", "s1.json"], "m2.json");
    assert_eq!(comparable(two), comparable(one));
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    for s in ["0/3", "4/3", "3", "a/b"] {
        let out = lockstep()
            .args(["amber", "--model-only", "examples", "--shard", s])
            .assert()
            .code(64);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains("K/N"), "{err}");
    }
}

/// Two amber reports: one file that passes and one that fails (an EXPECT that is wrong).
fn pass_and_fail(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let good = std::fs::read_to_string("examples/max_reduce.amber").unwrap();
    let bad = good.replace("EXPECT bar IDX 0 EQ 3580", "EXPECT bar IDX 0 EQ 3581");
    assert_ne!(good, bad);
    let (g, b) = (dir.join("good.amber"), dir.join("bad.amber"));
    std::fs::write(&g, good).unwrap();
    std::fs::write(&b, bad).unwrap();
    (g, b)
}

#[test]
fn a_baseline_expects_failures_and_reports_a_case_that_now_passes() {
    let dir = tempfile::tempdir().unwrap();
    let (g, b) = pass_and_fail(dir.path());
    let report = dir.path().join("r.json");
    lockstep()
        .args(["amber", "--model-only"])
        .arg(&g)
        .arg(&b)
        .arg("--json")
        .arg(&report)
        .assert()
        .code(1);
    // The failing file in the baseline: the run passes, the case is an expected failure.
    let baseline = dir.path().join("baseline.txt");
    std::fs::write(&baseline, format!("# known\namber/{},Fail\n", b.display())).unwrap();
    let merged = dir.path().join("m.json");
    lockstep()
        .arg("merge")
        .arg(&report)
        .arg("--baseline")
        .arg(&baseline)
        .arg("--json")
        .arg(&merged)
        .assert()
        .success();
    let m = read(&merged);
    let status = |m: &Json, f: &Path| {
        m["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == format!("amber/{}", f.display()))
            .map(|c| c["status"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(status(&m, &b), "expected_fail");
    assert_eq!(status(&m, &g), "pass");
    // The same baseline on the command itself.
    lockstep()
        .args(["amber", "--model-only"])
        .arg(&g)
        .arg(&b)
        .arg("--baseline")
        .arg(&baseline)
        .assert()
        .success();
    // A passing file in the baseline: an unexpected pass, which fails the run.
    std::fs::write(&baseline, format!("amber/{}\n", g.display())).unwrap();
    let out = lockstep()
        .arg("merge")
        .arg(&report)
        .arg("--baseline")
        .arg(&baseline)
        .arg("--json")
        .arg(&merged)
        .assert()
        .code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("unexpected_pass"));
    assert_eq!(status(&read(&merged), &g), "unexpected_pass");
    // A baseline that lists a case as passing is bad input.
    std::fs::write(&baseline, "amber/x.amber,Pass\n").unwrap();
    let out = lockstep()
        .arg("merge")
        .arg(&report)
        .arg("--baseline")
        .arg(&baseline)
        .assert()
        .code(64);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("line 1"));
}

#[test]
fn a_listed_flake_is_retried_once_and_a_real_failure_stays_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (g, b) = pass_and_fail(dir.path());
    let flakes = dir.path().join("flakes.txt");
    std::fs::write(&flakes, "amber/*bad.amber\n").unwrap();
    let report = dir.path().join("r.json");
    // The failing file fails again when retried: still a failure, and said so.
    let out = lockstep()
        .args(["amber", "--model-only"])
        .arg(&g)
        .arg(&b)
        .arg("--flakes")
        .arg(&flakes)
        .arg("--json")
        .arg(&report)
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("retrying"), "{stdout}");
    let r = read(&report);
    let bad = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"].as_str().unwrap().ends_with("bad.amber"))
        .unwrap()
        .clone();
    assert_eq!(bad["status"], "fail");
    assert!(bad["detail"].as_str().unwrap().contains("failed again"));
    // In a merge (no retry possible), a failing listed flake is reported as a flake.
    let m = dir.path().join("m.json");
    lockstep()
        .arg("merge")
        .arg(dir.path().join("r.json"))
        .arg("--flakes")
        .arg(&flakes)
        .arg("--json")
        .arg(&m)
        .assert()
        .success();
}

#[test]
fn reports_of_two_kinds_or_of_two_runs_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let (g, b) = pass_and_fail(dir.path());
    let a1 = dir.path().join("a1.json");
    let a2 = dir.path().join("a2.json");
    lockstep()
        .args(["amber", "--model-only"])
        .arg(&g)
        .arg("--json")
        .arg(&a1)
        .assert()
        .success();
    // The same case name with another verdict: a file rewritten between runs.
    std::fs::copy(&b, &g).unwrap();
    lockstep()
        .args(["amber", "--model-only"])
        .arg(&g)
        .arg("--json")
        .arg(&a2)
        .assert()
        .code(1);
    let out = lockstep().arg("merge").arg(&a1).arg(&a2).assert().code(64);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("different runs"), "{err}");
    let r = dir.path().join("r.json");
    std::fs::write(
        &r,
        r#"{"command": "reconverge", "mode": "base", "seed": 1, "failures": []}"#,
    )
    .unwrap();
    let out = lockstep().arg("merge").arg(&a1).arg(&r).assert().code(64);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("reconverge report"), "{err}");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{}").unwrap();
    let out = lockstep().arg("merge").arg(&junk).assert().code(64);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("not a report"));
}

#[test]
fn a_flake_that_passes_when_retried_is_a_flake_and_not_a_failure() {
    use lockstep::merge::{Case, Expectations, Status};
    let exp = Expectations {
        flakes: vec!["conform/size8/*/3x5x7".into()],
        ..Default::default()
    };
    let case = |name: &str, status| Case {
        name: name.into(),
        status,
        detail: None,
    };
    let mut cases = vec![
        case("conform/size8/add/u32/3x5x7", Status::Fail),
        case("conform/size8/add/u32/8x1x1", Status::Fail),
        case("conform/size8/mul/u32/3x5x7", Status::Pass),
    ];
    let mut retried = Vec::new();
    exp.apply(&mut cases, &mut |c| {
        retried.push(c.name.clone());
        Some(true)
    });
    // Only the failing listed case is retried, once.
    assert_eq!(retried, vec!["conform/size8/add/u32/3x5x7".to_string()]);
    let st: Vec<Status> = cases.iter().map(|c| c.status).collect();
    assert_eq!(st, vec![Status::Flake, Status::Fail, Status::Pass]);
    assert!(cases[0]
        .detail
        .as_deref()
        .unwrap()
        .contains("passed when retried"));
}

#[test]
fn a_conform_retry_runs_the_rows_job_with_the_same_cases() {
    use lockstep::conform::compare::RowKey;
    use lockstep::conform::run::{run, ConformOptions};
    use lockstep::model::{Category, ValueType};
    let Some(ctx) = support::shared_device() else {
        return;
    };
    let opts = ConformOptions {
        categories: Some(vec![Category::Arithmetic]),
        types: Some(vec!["u32".parse::<ValueType>().unwrap()]),
        cases: 80,
        ..ConformOptions::default()
    };
    let full = run(ctx, &opts, &|_| {}).unwrap();
    let (key, row) = full
        .stats
        .rows
        .iter()
        .find(|(k, _)| k.op == "inclusive_add")
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    let again = run(
        ctx,
        &ConformOptions {
            only: Some(vec![key.clone()]),
            ..opts.clone()
        },
        &|_| {},
    )
    .unwrap();
    let shapes: std::collections::BTreeSet<[u32; 3]> =
        again.stats.rows.keys().map(|k: &RowKey| k.shape).collect();
    assert_eq!(shapes.len(), 1, "only the row's job ran");
    let r = &again.stats.rows[&key];
    assert_eq!(
        (r.cases, r.passed, r.failed),
        (row.cases, row.passed, row.failed)
    );
    assert!(again.cases() < full.cases());
}
