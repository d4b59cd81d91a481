//! The `lockstep` command line: `eval` JSON for a few cases, `ops`, and every bad-input case exits
//! non-zero (64) with a message that names the rule.

use crate::support::cmd::{Assertions, CargoBin};
use serde_json::Value as Json;
use std::process::Command;

fn lockstep() -> Command {
    Command::cargo_bin("lockstep").unwrap()
}

fn eval_json(args: &[&str]) -> Json {
    let out = lockstep()
        .arg("eval")
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// Whether the `lockstep run` tests here compare with a device (lavapipe where `./test` ran the
/// set-up; `LOCKSTEP_SKIP_DEVICE_TESTS` runs the model alone).
fn with_device() -> bool {
    cfg!(feature = "vulkan") && std::env::var_os("LOCKSTEP_SKIP_DEVICE_TESTS").is_none()
}

/// `lockstep run KERNEL ARGS…`, with `--model-only` when `model_only`, as an argv.
fn run_argv(kernel: &std::path::Path, args: &[&str], model_only: bool) -> Vec<String> {
    let mut v: Vec<String> = ["lockstep", "run", kernel.to_str().unwrap()]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    if model_only {
        v.push("--model-only".into());
    }
    v
}

/// `lockstep run KERNEL ARGS --out DIR` on the model, and on the device where the tests may use
/// one: the report (which must say PASS), and buffer `name`'s elements as the model and the device
/// left them.
fn run_out<S: lockstep::model::Scalar>(
    kernel: &std::path::Path,
    args: &[&str],
    name: &str,
) -> (String, Vec<S>, Option<Vec<S>>) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let device = with_device();
    let mut all = args.to_vec();
    all.extend(["--out", out_dir.to_str().unwrap()]);
    let argv = run_argv(kernel, &all, !device);
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
    let read = |side: &str| {
        lockstep::kernel::read_npy(&out_dir.join(format!("{side}-{name}.npy")))
            .unwrap()
            .to_vec::<S>()
            .unwrap()
    };
    let dev = device.then(|| read("device"));
    (out, read("model"), dev)
}

#[test]
fn eval_json_has_the_documented_shape() {
    let j = eval_json(&[
        "shuffle_down",
        "--size",
        "8",
        "--delta",
        "1",
        "--active",
        "0x7f",
    ]);
    assert_eq!(j["op"], "shuffle_down");
    assert_eq!(j["size"], 8);
    assert_eq!(j["type"], "u32");
    let lanes = j["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 8);
    assert_eq!(
        lanes[0],
        serde_json::json!({"lane": 0, "active": true, "result": 1})
    );
    assert_eq!(lanes[6]["result"], "undefined");
    assert_eq!(lanes[6]["why"], "source lane 7 is inactive");
    assert_eq!(
        lanes[7],
        serde_json::json!({"lane": 7, "active": false, "result": null})
    );
}

#[test]
fn eval_accepts_the_glsl_name_and_prints_non_finite_floats_as_strings() {
    let j = eval_json(&[
        "subgroupInclusiveMax",
        "--size",
        "4",
        "--type",
        "f32",
        "--values",
        "nan,-inf,inf,1.5",
    ]);
    let r: Vec<Json> = j["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["result"].clone())
        .collect();
    // Lane 0 uses only NaN: undefined (GL_KHR_shader_subgroup.txt, 3.8); then -inf, inf, inf.
    assert_eq!(
        r,
        vec![
            Json::from("undefined"),
            "-inf".into(),
            "inf".into(),
            "inf".into()
        ]
    );
}

#[test]
fn eval_json_shows_vectors_and_ballots_as_arrays() {
    let j = eval_json(&[
        "broadcast_first",
        "--size",
        "2",
        "--type",
        "i16x2",
        "--values",
        "-1:2,3:4",
    ]);
    assert_eq!(j["lanes"][1]["result"], serde_json::json!([-1, 2]));
    let j = eval_json(&["ballot", "--size", "64", "--type", "bool"]);
    // Default values: odd lanes true -> 0xaaaaaaaa in both words (lane i = bit i%32 of word i/32).
    assert_eq!(
        j["lanes"][0]["result"],
        serde_json::json!([0xaaaa_aaaau32, 0xaaaa_aaaau32, 0, 0])
    );
}

#[test]
fn eval_table_lists_undefined_reasons_under_the_table() {
    let out = lockstep()
        .args([
            "eval",
            "ballot_find_msb",
            "--size",
            "8",
            "--ballot",
            "0x100",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("result |"), "{text}");
    assert!(text.contains("undef"), "{text}");
    assert!(text.contains("lanes 0-7: no bit set"), "{text}");
}

#[test]
fn eval_of_workgroup_builtins_shows_the_partial_last_subgroup() {
    let j: Json = serde_json::from_slice(
        &lockstep()
            .args([
                "eval",
                "subgroup_id",
                "--size",
                "8",
                "--workgroup",
                "3,5,7",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(j["num_subgroups"], 14);
    assert_eq!(j["invocations"][104]["subgroup"], 13);
}

#[test]
fn ops_lists_every_catalogue_entry() {
    let out = lockstep()
        .arg("ops")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for o in lockstep::model::catalogue() {
        assert!(text.contains(&o.glsl), "{} missing", o.glsl);
    }
}

/// Every bad input exits 64 with a one-line message naming the rule.
#[test]
fn bad_input_exits_non_zero_with_the_rule() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["eval", "shufle_down", "--size", "8"],
            "did you mean shuffle_down",
        ),
        (
            &["eval", "shuffle_down", "--size", "12", "--delta", "1"],
            "power of two",
        ),
        (
            &["eval", "shuffle_down", "--size", "256", "--delta", "1"],
            "power of two",
        ),
        (
            &["eval", "shuffle_down", "--size", "8"],
            "needs the argument 'delta'",
        ),
        (
            &[
                "eval",
                "shuffle_down",
                "--size",
                "8",
                "--delta",
                "1",
                "--values",
                "1,2,3",
            ],
            "expected one value per lane",
        ),
        (
            &[
                "eval",
                "shuffle_down",
                "--size",
                "8",
                "--delta",
                "1",
                "--active",
                "0x1ff",
            ],
            "at or above the subgroup size",
        ),
        (
            &["eval", "shuffle_down", "--size", "8", "--delta", "-1"],
            "--delta",
        ),
        (
            &["eval", "add", "--size", "4", "--type", "bool"],
            "does not take bool",
        ),
        (
            &["eval", "and", "--size", "4", "--type", "f32"],
            "does not take f32",
        ),
        (
            &["eval", "add", "--size", "4", "--type", "u33"],
            "unknown type",
        ),
        (
            &["eval", "clustered_add", "--size", "8", "--cluster", "16"],
            "at most the subgroup size",
        ),
        (
            &["eval", "clustered_add", "--size", "8", "--cluster", "3"],
            "power of two",
        ),
        (
            &["eval", "quad_broadcast", "--size", "8", "--id", "4"],
            "0..=3",
        ),
        (
            &["eval", "broadcast", "--size", "4", "--id", "0,1,2,3"],
            "dynamically uniform",
        ),
        (
            &["eval", "ballot_bit_count", "--size", "8"],
            "needs the argument 'ballot'",
        ),
        (
            &[
                "eval",
                "ballot_bit_count",
                "--size",
                "8",
                "--ballot",
                "0xzz",
            ],
            "hex number of at most 128 bits",
        ),
        (
            &[
                "eval",
                "elect",
                "--size",
                "8",
                "--values",
                "1,2,3,4,5,6,7,8",
            ],
            "takes no --values",
        ),
        (
            &["eval", "add", "--size", "4", "--delta", "1"],
            "takes no argument 'delta'",
        ),
        (
            &[
                "eval", "add", "--size", "2", "--type", "u8", "--values", "1,256",
            ],
            "outside the range",
        ),
        (
            &[
                "eval", "add", "--size", "2", "--type", "f32", "--values", "1,abc",
            ],
            "is not a number",
        ),
        (
            &["eval", "subgroup_id", "--size", "8"],
            "needs the argument 'workgroup'",
        ),
        (
            &[
                "eval",
                "subgroup_id",
                "--size",
                "8",
                "--workgroup",
                "3,2",
                "--layout",
                "quads",
            ],
            "even width and height",
        ),
        (
            &["eval", "subgroup_id", "--size", "8", "--workgroup", "0,2"],
            "every dimension is at least 1",
        ),
        (
            &["eval", "add", "--size", "8", "--workgroup", "8"],
            "takes no --workgroup",
        ),
        (&["eval", "shuffle_down", "--size", "x"], "invalid value"),
        (&["ops", "--category", "bogus"], "unknown category"),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, needle) in cases {
        let out = lockstep()
            .args(*args)
            .assert()
            .code(64)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

/// `conform` rejects bad input with the rule before doing any work (exit 64).
#[cfg(feature = "vulkan")]
#[test]
fn conform_bad_input_exits_64_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let unwritable = dir.path().join("no/such/dir/report.json");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--cases".into(), "0".into()],
            "--cases must be at least 1",
        ),
        (
            vec!["--ops".into(), "shufle".into()],
            "unknown operation 'shufle'",
        ),
        (vec!["--types".into(), "u33".into()], "unknown type"),
        (
            vec!["--category".into(), "bogus".into()],
            "unknown category",
        ),
        (vec!["--subgroup-size".into(), "12".into()], "power of two"),
        (
            vec!["--subgroup-size".into(), "x".into()],
            "not a number or 'all'",
        ),
        (
            vec!["--json".into(), unwritable.display().to_string()],
            "cannot write",
        ),
    ];
    for (args, needle) in cases {
        let out = lockstep()
            .arg("conform")
            .args(&args)
            .assert()
            .code(64)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in: {err}"
        );
    }
}

/// A subgroup size the device cannot use is an error that lists the allowed ones.
#[cfg(feature = "vulkan")]
#[test]
fn conform_lists_the_allowed_subgroup_sizes() {
    let Some(ctx) = device() else { return };
    let bad = if ctx.caps.max_subgroup_size < 128 {
        128
    } else {
        1
    };
    if ctx.caps.selectable_sizes().contains(&bad) {
        return;
    }
    let out = lockstep()
        .args(["conform", "--subgroup-size", &bad.to_string()])
        .assert()
        .code(64)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    let allowed: Vec<String> = ctx
        .caps
        .selectable_sizes()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        err.contains(&format!("it can use {}", allowed.join(", "))),
        "{err}"
    );
}

/// Without a Vulkan driver, device commands say so and exit 2; model commands still work.
#[cfg(feature = "vulkan")]
#[test]
fn no_vulkan_device_exits_2_and_model_commands_still_work() {
    for cmd in [vec!["devices"], vec!["conform", "--cases", "1"]] {
        let out = lockstep()
            .args(&cmd)
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no Vulkan"), "{cmd:?}: {err}");
    }
    lockstep()
        .args(["eval", "elect", "--size", "4"])
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .assert()
        .success();
}

/// A small conform run writes JSON and JUnit reports and exits 0 on lavapipe.
#[cfg(feature = "vulkan")]
#[test]
fn conform_writes_json_and_junit() {
    if device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (j, x) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    lockstep()
        .args([
            "conform",
            "--category",
            "quad",
            "--types",
            "u32",
            "--cases",
            "16",
            "--json",
        ])
        .arg(&j)
        .arg("--junit")
        .arg(&x)
        .assert()
        .success();
    let v: Json = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["summary"]["failed"], 0);
    assert!(v["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "pass"));
    assert!(std::fs::read_to_string(&x)
        .unwrap()
        .contains("<testsuite name=\"quad\""));
}

#[cfg(feature = "vulkan")]
use crate::support::device;

// Issue 21 §1: one kernel at every subgroup size — a table, where it fails, and the defined
// outputs that differ between sizes (a "one workgroup = one subgroup" reduction).
#[test]
fn a_subgroup_size_sweep_finds_a_kernel_written_for_one_size() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("argmax.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_KHR_shader_subgroup_arithmetic : require\nlayout(local_size_x = 32) in;\nlayout(binding = 0) buffer In { uint v[]; };\nlayout(binding = 1) buffer Out { uint best; };\nvoid main() {\n  uint m = subgroupMax(v[gl_LocalInvocationID.x]);\n  if (gl_LocalInvocationID.x == 0u) { best = m; }\n}\n",
    )
    .unwrap();
    let json = dir.path().join("sweep.json");
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .arg("run")
        .arg(&k)
        .args([
            "--model-only",
            "--buffer",
            "0=series:u32:32",
            "--buffer",
            "1=zeros:u32:1",
        ])
        .args(["--subgroup-size", "all", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the sweep is not clean at every size"),
        "{err}"
    );
    assert!(
        err.contains("best (binding 1) is defined at every size but holds 0 at size 1; 1 at size 2; 3 at size 4; 7 at size 8; 15 at size 16; 31 at sizes 32, 64, 128"),
        "{err}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["sizes"].as_array().unwrap().len(), 8);
    // A neighbour read past the subgroup's end: wrong at every size, and the summary says where.
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "examples/shuffle_down_edge.comp", "--model-only"])
        .args([
            "--buffer",
            "0=series:f32:16",
            "--buffer",
            "1=zeros:f32:16",
            "--subgroup-size",
            "4..16",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stdout);
    assert!(
        err.contains("summary: correct at no size; fails at 4, 8, 16 — at size 4: y[3], y[7]"),
        "{err}"
    );
}

// SPIR-V 1.6, OpGroupNonUniformFAdd: "The method used to perform the group operation on the
// contributed Value(s) from active invocations is implementation defined" — so a float sum's last
// bits change with the subgroup size on any device, and a sweep compares such inexact values within
// the tolerance, as model and device are compared; a value that is exact, or far apart, still differs.
#[test]
fn a_sweep_compares_inexact_floats_between_sizes_within_the_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("sum.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_KHR_shader_subgroup_arithmetic : require\nlayout(local_size_x = 128) in;\nlayout(binding = 0) buffer In { float v[]; };\nlayout(binding = 1) buffer Out { float total; float lanes; };\nshared float partial[128];\nvoid main() {\n  float s = subgroupAdd(v[gl_LocalInvocationID.x]);\n  float n = subgroupAdd(1.0);\n  if (subgroupElect()) partial[gl_SubgroupID] = s;\n  barrier();\n  if (gl_LocalInvocationID.x == 0u) {\n    float t = 0.0;\n    for (uint i = 0u; i < gl_NumSubgroups; i++) t += partial[i];\n    total = t;\n    lanes = n;\n  }\n}\n",
    )
    .unwrap();
    let bufs = [
        "--buffer",
        "0=random:f32:128:3",
        "--buffer",
        "1=zeros:f32:2",
    ];
    // Not vacuous: the total's bits are not the same at sizes 8 and 16.
    let total = |size: &str| {
        let o = dir.path().join(format!("o{size}"));
        Command::cargo_bin("lockstep")
            .unwrap()
            .arg("run")
            .arg(&k)
            .args(["--model-only", "--subgroup-size", size, "--out"])
            .arg(&o)
            .args(bufs)
            .assert()
            .success();
        let b = std::fs::read(o.join("model-1.npy")).unwrap();
        b[b.len() - 8..b.len() - 4].to_vec()
    };
    assert_ne!(total("8"), total("16"));
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .arg("run")
        .arg(&k)
        .args(["--model-only", "--subgroup-size", "4..128"])
        .args(bufs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Out.lanes (binding 1) is defined at every size but holds 4 at size 4; 8 at size 8; 16 at size 16; 32 at size 32; 64 at size 64; 128 at size 128 — 1 element differs"),
        "{text}"
    );
    assert!(!text.contains("Out.total"), "{text}");
}

#[test]
fn amber_runs_the_model_at_each_size_of_a_sweep() {
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "amber",
            "examples/max_reduce.amber",
            "--model-only",
            "--subgroup-size",
            "1,4,128",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for s in ["@1", "@4", "@128"] {
        assert!(text.contains(&format!("model (base) {s}")), "{text}");
    }
}

// Issue 21 §5: a driver crash costs one file, not the run. Device runs happen in a child process;
// here the child dies (as lavapipe's LLVM does on the CTS's ldexp files) on one of three files: that
// file is reported as crashed with the signal, the others still run on the device, and the report
// is written.
#[test]
fn a_driver_crash_costs_one_file_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = Command::cargo_bin("lockstep")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LOCKSTEP_CHILD_ABORT", "max_reduce")
        .args([
            "amber",
            "examples/allocation.amber",
            "examples/max_reduce.amber",
            "examples/shuffle_xor_reduce.amber",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if text.contains("no Vulkan device") && std::env::var("LOCKSTEP_SKIP_DEVICE_TESTS").is_ok() {
        eprintln!("SKIPPED: no device (LOCKSTEP_SKIP_DEVICE_TESTS)");
        return;
    }
    assert_eq!(out.status.code(), Some(70), "{text}");
    let j: Json = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let files = j["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    let device = |f: &Json| f["runs"][0].clone();
    assert_eq!(device(&files[0])["status"], "pass", "{text}");
    assert_eq!(device(&files[1])["status"], "error");
    assert!(
        device(&files[1])["reason"]
            .as_str()
            .unwrap()
            .contains("the driver crashed running this file (signal 6 (SIGABRT))"),
        "{text}"
    );
    // The model ran it anyway.
    assert_eq!(files[1]["runs"][1]["status"], "pass", "{text}");
    assert_eq!(device(&files[2])["status"], "pass", "{text}");
}

/// GLSL 4.60 §4.3.9 (Interface Blocks): "For uniform or shader storage blocks declared as an
/// array, each individual array element corresponds to a separate buffer object bound to a
/// binding point" — `ins[k]` is element k of the array of descriptors at its binding, and
/// `lockstep run --buffer B[K]=SPEC` (and `SET.B[K]=SPEC`) binds that element. Three workgroups,
/// each indexing with its own workgroup id (the same in every invocation of it: dynamically
/// uniform, as Vulkan requires without `nonuniformEXT`): `outs[k].r[i] = ins[k].v[i] + 100·k`.
/// Reports name each element (`binding 0[1]`, `binding 1.2[2]`), `--out` writes one file per
/// element, and the device (lavapipe, where present) agrees.
#[test]
fn lockstep_run_binds_each_element_of_an_array_of_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 4) in;\n\
         layout(set = 0, binding = 0) buffer In { uint v[]; } ins[3];\n\
         layout(set = 1, binding = 2) buffer Out { uint r[]; } outs[3];\n\
         void main() {\n  uint k = gl_WorkGroupID.x;\n  uint i = gl_LocalInvocationID.x;\n\
         \x20 outs[k].r[i] = ins[k].v[i] + 100u * k;\n}\n",
    )
    .unwrap();
    let device = with_device();
    let out_dir = dir.path().join("out");
    let argv = |buffers: &[&str], model_only: bool| {
        let mut args = vec!["--workgroups", "3", "--out", out_dir.to_str().unwrap()];
        for b in buffers {
            args.extend(["--buffer", b]);
        }
        run_argv(&k, &args, model_only || !device)
    };
    let all = [
        "0[0]=series:u32:4",
        "0[1]=fill:u32:4:7",
        "0[2]=values:u32:1,2,3,4",
        "1.2[0]=zeros:u32:4",
        "1.2[1]=zeros:u32:4",
        "1.2[2]=zeros:u32:4",
    ];
    let out = lockstep::cli::run(&argv(&all, false)).unwrap_or_else(|e| panic!("{}", e.message));
    for name in [
        "binding 0[0]",
        "binding 0[2]",
        "binding 1.2[0]",
        "binding 1.2[2]",
    ] {
        assert!(out.contains(&format!("{name} ")), "{out}");
    }
    assert!(out.contains("result: PASS"), "{out}");
    let read = |f: &str| {
        lockstep::kernel::read_npy(&out_dir.join(f))
            .unwrap()
            .to_vec::<u32>()
            .unwrap()
    };
    assert_eq!(read("model-1.2[0].npy"), [0, 1, 2, 3]);
    assert_eq!(read("model-1.2[1].npy"), [107; 4]);
    assert_eq!(read("model-1.2[2].npy"), [201, 202, 203, 204]);
    if device {
        assert_eq!(read("device-1.2[2].npy"), [201, 202, 203, 204]);
    }
    // Bad input: one clear error each, exit 64.
    let twice = [&all[..], &["0[1]=zeros:u32:4"]].concat();
    let missing: Vec<&str> = all
        .iter()
        .copied()
        .filter(|b| !b.starts_with("0[1]"))
        .collect();
    for (buffers, says) in [
        (&twice[..], "set 0 binding 0 element 1 is given twice"),
        (&["0[x]=zeros:u32:4"][..], "BINDING[ELEMENT]"),
        (
            &missing[..],
            "element 1 of an array of 3 descriptors, 0 bytes plus its runtime array); give one with --buffer 0[1]=SPEC",
        ),
    ] {
        let e = lockstep::cli::run(&argv(buffers, true)).unwrap_err();
        assert_eq!(e.code, 64, "{}", e.message);
        assert!(e.message.contains(says), "{}", e.message);
    }
}

/// GL_EXT_shader_atomic_float and GL_EXT_shader_atomic_float2 (`atomicAdd`, `atomicMin`,
/// `atomicMax` of floats, on buffer and shared memory): the device enables the features where it
/// has them (lavapipe does), and model and device agree. Four workgroups of eight, x = global id
/// − 10: each workgroup adds 0.25 eight times in shared memory, then one invocation adds that to
/// `s` — 4 · 8 · 0.25 = 8; `max(x)` = 21, `min(x)` = −10 (atomic min and max are exact: their
/// result does not depend on the order).
#[test]
fn float_atomics_run_on_the_model_and_on_a_device_that_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("af.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_EXT_shader_atomic_float : require\n\
         #extension GL_EXT_shader_atomic_float2 : require\nlayout(local_size_x = 8) in;\n\
         layout(binding = 0) buffer B { float s; float mx; float mn; };\nshared float acc;\n\
         void main() {\n  float x = float(gl_GlobalInvocationID.x) - 10.0;\n\
         \x20 if (gl_LocalInvocationID.x == 0u) acc = 0.0;\n  barrier();\n  atomicAdd(acc, 0.25);\n\
         \x20 atomicMax(mx, x);\n  atomicMin(mn, x);\n  barrier();\n\
         \x20 if (gl_LocalInvocationID.x == 0u) atomicAdd(s, acc);\n}\n",
    )
    .unwrap();
    let (_, model, device) =
        run_out::<f32>(&k, &["--workgroups", "4", "--buffer", "0=zeros:f32:3"], "0");
    assert_eq!(model, [8.0, 21.0, -10.0]);
    if let Some(d) = device {
        assert_eq!(d, [8.0, 21.0, -10.0]);
    }
}

/// `floatBitsToUint` of an inexact float (`sin(x) · exp(x / 100)`: GLSL.std.450's Sin and Exp
/// have the precision Vulkan's table gives them, not correct rounding) gives an integer a device's
/// float may move by any number of units while the float stays within the tolerance: the words are
/// compared as the floats whose bits they hold (`Taint::is_float_bits`). Compared as numbers within
/// one, as a float converted to an integer is, lavapipe's bits differed in 13 of 64 words while
/// the same floats stored as floats all agreed — and so did the floats themselves, in a buffer
/// given to `lockstep run` as `u32`. The model marks every inexact float as a float's bits, read
/// as an integer or not, and a conversion of one to an integer (`uint(·)`) as a number, compared
/// within one.
#[cfg(feature = "vulkan")]
#[test]
fn a_floats_bits_read_as_an_integer_are_compared_as_that_float() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("bits.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(binding = 0) buffer O { uint o[64]; uint c[64]; float f[64]; float back[64]; };\n\
         void main() {\n  uint i = gl_GlobalInvocationID.x;\n  float x = float(i) * 0.37 + 0.1;\n\
         \x20 float y = sin(x) * exp(x * 0.01);\n  f[i] = y;\n  o[i] = floatBitsToUint(y);\n\
         \x20 c[i] = uint(y * 1000.0 + 2000.0);\n  back[i] = uintBitsToFloat(floatBitsToUint(y));\n}\n",
    )
    .unwrap();
    let src = std::fs::read_to_string(&k).unwrap();
    let words = crate::spirv_support::glsl(&src, "bits.comp");
    let kernel = lockstep::spirv::decode(&words, &Default::default()).unwrap();
    let cfg =
        lockstep::spirv::RunConfig::new(lockstep::model::SubgroupSize::new(8).unwrap(), [1, 1, 1]);
    let bufs = crate::spirv_support::bindings([vec![0u8; 1024]]);
    let r = lockstep::spirv::run_model(&kernel, cfg, &bufs, None).unwrap();
    let b = &r.buffers[0];
    for i in 0..64 {
        let (bits, conv, float, back) = (
            b.word_taint(i),
            b.word_taint(64 + i),
            b.word_taint(128 + i),
            b.word_taint(192 + i),
        );
        assert!(bits.is_inexact() && bits.is_float_bits(), "o[{i}]");
        assert!(conv.is_inexact() && !conv.is_float_bits(), "c[{i}]");
        assert!(float.is_inexact() && float.is_float_bits(), "f[{i}]");
        assert!(back.is_inexact() && back.is_float_bits(), "back[{i}]");
    }
    let device = with_device();
    let argv = run_argv(&k, &["--buffer", "0=zeros:u32:256"], !device);
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
    assert!(
        out.contains("binding 0  u32   256       0      256"),
        "{out}"
    );
}

/// Vulkan, "Precision and Operation of SPIR-V Instructions": "By default, the implementation may
/// perform optimizations on half, single, or double-precision floating-point instructions that
/// ignore sign of a zero … If the entry point is declared with the SignedZeroInfNanPreserve
/// execution mode, then … the sign of zero must not be ignored." So a float zero is compared
/// without its sign unless the kernel declares the mode for its width. `0.0 - (a - a)` is +0 by
/// IEEE 754 (the model's value, exact), and lavapipe returns -0 (it folds the subtraction into a
/// negation): the run passes; the five other elements, bit for bit, agree too.
#[test]
fn a_zeros_sign_is_not_compared_where_the_kernel_lets_a_device_ignore_it() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("nz.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer O { float o[4]; };\n\
         layout(binding = 1) buffer I { float a[2]; };\nvoid main() {\n  o[0] = -(a[0] - a[1]);\n\
         \x20 o[1] = 0.0 - (a[0] - a[1]);\n  o[2] = -(a[0] * 0.0);\n  o[3] = a[0] * 0.5;\n}\n",
    )
    .unwrap();
    let (_, model, device) = run_out::<f32>(
        &k,
        &[
            "--buffer",
            "0=zeros:f32:4",
            "--buffer",
            "1=values:f32:1.0,1.0",
        ],
        "0",
    );
    let bits: Vec<u32> = model.iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, [0x8000_0000, 0, 0x8000_0000, 0.5f32.to_bits()]);
    if let Some(d) = device {
        assert_eq!(d, [0.0, 0.0, 0.0, 0.5]);
    }
}

/// A kernel that reads the clocks (GL_ARB_shader_clock, GL_EXT_shader_realtime_clock:
/// VK_KHR_shader_clock, enabled where the device has it — lavapipe does) runs on the model and
/// the device: what it computes from a clock is order-dependent (SPV_KHR_shader_clock gives a
/// clock's value to the device), listed and not compared; the rest is compared and the run passes.
#[test]
fn a_kernel_that_reads_the_clock_runs_and_its_timings_are_order_dependent() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("timed.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_ARB_shader_clock : require\n\
         #extension GL_EXT_shader_realtime_clock : require\n\
         #extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n\
         layout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint v[8]; uint64_t t[8]; };\n\
         void main() {\n  uint i = gl_LocalInvocationID.x;\n  uint64_t c = clockRealtimeEXT();\n\
         \x20 v[i] = v[i] * 3u + 1u;\n  t[i] = clockRealtimeEXT() - c + clockARB() * 0UL;\n}\n",
    )
    .unwrap();
    let device = with_device();
    let args = ["--buffer", "0=series:u32:24"];
    let argv = run_argv(&k, &args, !device);
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
    assert!(out.contains("B.t[0]"), "{out}");
    assert!(out.contains("OpReadClockKHR"), "{out}");
    // 8 values compared (exact), 16 words of timings order-dependent
    assert!(
        out.contains("binding 0  u32   24        8      0        0          16"),
        "{out}"
    );
}

/// `debugPrintfEXT` runs on the device (its line goes to the validation layers, where they are
/// loaded) and on the model, which shows each invocation's line under the table, with the
/// instruction's place, and lists them in the JSON as `printf` findings that fail nothing. A
/// format with fewer values than specifiers is refused (NonSemantic.DebugPrintf: "If there are
/// insufficient arguments for the format specifiers, the behavior is undefined").
#[test]
fn debug_printf_lines_are_shown_per_invocation_and_fail_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("say.comp");
    let body = |args: &str| {
        format!(
            "#version 450\n#extension GL_EXT_debug_printf : require\n\
             layout(local_size_x = 4) in;\nlayout(binding = 0) buffer B {{ float v[]; }};\n\
             void main() {{\n  uint i = gl_GlobalInvocationID.x;\n\
             \x20 debugPrintfEXT(\"v[%u] = %.1f\"{args});\n  v[i] = v[i] * 2.0;\n}}\n"
        )
    };
    std::fs::write(&k, body(", i, v[i]")).unwrap();
    let device = with_device();
    let json = dir.path().join("r.json");
    let args = [
        "--buffer",
        "0=series:f32:8",
        "--workgroups",
        "2",
        "--json",
        json.to_str().unwrap(),
    ];
    let argv = run_argv(&k, &args, !device);
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
    assert!(
        out.contains("debugPrintfEXT at ")
            && out.contains("say.comp:7, printed on the model (8 lines):"),
        "{out}"
    );
    assert!(
        out.contains("  workgroup (1,0,0) invocation 3 (subgroup 0 lane 3): v[7] = 7.0\n"),
        "{out}"
    );
    assert!(
        !out.contains("findings:"),
        "printed lines are not findings: {out}"
    );
    let j: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let printed: Vec<&Json> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "printf")
        .collect();
    assert_eq!(printed.len(), 1, "{j}");
    assert_eq!(printed[0]["count"], 8, "{j}");
    assert_eq!(
        printed[0]["items"][0],
        "workgroup (0,0,0) invocation 0 (subgroup 0 lane 0): v[0] = 0.0"
    );
    assert!(!out.contains(" more (the first"), "{out}");
    // 40 lines: the text shows 32 and counts the rest; the JSON keeps all 40
    let many = [
        "--buffer",
        "0=series:f32:40",
        "--workgroups",
        "10",
        "--json",
        json.to_str().unwrap(),
    ];
    let out =
        lockstep::cli::run(&run_argv(&k, &many, true)).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(
        out.contains("printed on the model (40 lines):")
            && out.contains("  … 8 more (the first 40 in the JSON)\n"),
        "{out}"
    );
    // too few values
    std::fs::write(&k, body(", i")).unwrap();
    let e = lockstep::cli::run(&run_argv(&k, &args, true)).unwrap_err();
    assert_eq!(e.code, 64, "{}", e.message);
    assert!(
        e.message.contains("takes 2 values and 1 are given")
            && e.message.contains("NonSemantic.DebugPrintf"),
        "{}",
        e.message
    );
}

/// An image declared without a format takes its format from the host array bound to it — but not
/// a 64-bit one: `R64_UINT`/`R64_SINT` need `shaderImageInt64`, so a `u64` or `i64` array is refused
/// naming why, while the same texels as `u32` run.
#[test]
fn a_format_less_image_is_not_given_a_64_bit_format_from_its_array() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("tb.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) uniform usamplerBuffer src;\n\
         layout(binding = 1) buffer O { uint o[4]; };\n\
         void main() { int i = int(gl_GlobalInvocationID.x); o[i] = texelFetch(src, i).x + 1u; }\n",
    )
    .unwrap();
    for t in ["u64", "i64"] {
        let spec = format!("0=zeros:{t}:4");
        let argv = run_argv(&k, &["--buffer", &spec, "--buffer", "1=zeros:u32:4"], true);
        let e = lockstep::cli::run(&argv).unwrap_err();
        assert!(
            e.message.contains("is not a texel component type"),
            "{t}: {}",
            e.message
        );
    }
    let argv = run_argv(
        &k,
        &["--buffer", "0=series:u32:4", "--buffer", "1=zeros:u32:4"],
        true,
    );
    let out = lockstep::cli::run(&argv).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
}

/// A report keeps the first 64 elements of a group of findings (`GROUP_ITEMS`) with the count of
/// all, and its text shows the first 40 groups (`TEXT_GROUPS`) and says how many more are in the
/// JSON: 100 undefined elements of one chain are one group of 64 items and count 100; 45
/// out-of-bounds writes at 45 lines are more groups than the text shows.
#[test]
fn a_report_caps_the_items_of_a_group_and_the_groups_it_prints() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("u.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 100) in;\nlayout(binding = 0) buffer O { uint o[100]; };\n\
         shared uint never;\nvoid main() { o[gl_LocalInvocationIndex] = never; }\n",
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let argv = run_argv(
        &k,
        &[
            "--buffer",
            "0=zeros:u32:100",
            "--json",
            json.to_str().unwrap(),
        ],
        true,
    );
    let _ = lockstep::cli::run(&argv);
    let j: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let g = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "undefined")
        .expect("an undefined group");
    assert_eq!(g["count"], 100, "{g}");
    assert_eq!(g["items"].as_array().unwrap().len(), 64, "{g}");
    // 45 lines, each an out-of-bounds write of its own
    let body: String = (0..45)
        .map(|n| format!("  o[{}u + i] = 1u;\n", 4 + n))
        .collect();
    std::fs::write(
        &k,
        format!(
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer O {{ uint o[4]; }};\n\
             void main() {{\n  uint i = gl_LocalInvocationIndex;\n{body}}}\n"
        ),
    )
    .unwrap();
    let argv = run_argv(
        &k,
        &[
            "--buffer",
            "0=zeros:u32:4",
            "--json",
            json.to_str().unwrap(),
        ],
        true,
    );
    let out = lockstep().args(&argv[1..]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let j: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let groups = j["findings"].as_array().unwrap().len();
    assert!(groups > 45, "{groups}");
    assert!(
        text.contains(&format!(
            "… {} more groups of findings (see --json)",
            groups - 40
        )),
        "{text}"
    );
}

/// WGSL's `enable subgroups;` is taken off the directive for naga wherever it stands in the list —
/// alone, first, last (`enable f16, subgroups;`) or third, with and without spaces (where a name's
/// place counts every name and comma before it) — and the module naga writes keeps the user's
/// names (its debug flag): a race in it is reported on `data`, not on a SPIR-V id.
#[test]
fn wgsl_subgroups_last_in_an_enable_list_compiles_and_reports_keep_the_user_s_names() {
    let dir = tempfile::tempdir().unwrap();
    for (n, enable) in [
        "enable f16, subgroups;",
        "enable subgroups, f16;",
        "enable subgroups;",
        "enable f16, clip_distances, subgroups;",
        "enable f16,clip_distances,subgroups;",
    ]
    .iter()
    .enumerate()
    {
        let k = dir.path().join(format!("e{n}.wgsl"));
        std::fs::write(
            &k,
            format!(
                "{enable}\n@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
                 @compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) {{\n\
                 \x20   data[i] = subgroupAdd(data[i]) + data[i + 1u];\n}}\n"
            ),
        )
        .unwrap();
        let argv = run_argv(&k, &["--buffer", "0=series:u32:9"], true);
        let out = lockstep().args(&argv[1..]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{enable}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("race on data: read at"), "{enable}: {text}");
    }
}

/// WGSL's memory model: `storageBarrier()` with `workgroupBarrier()` orders storage accesses
/// within a workgroup (WGSL, "Synchronization Built-in Functions"), and WGSL has no `coherent`:
/// its storage accesses are non-private, so the exchange is defined — while the same exchange in
/// GLSL through a buffer not declared `coherent` is a data race by the Vulkan memory model
/// (Appendix B, Private vs. Non-Private), reported with the rule (exit 1).
#[test]
fn wgsl_storage_exchanges_across_a_barrier_are_defined_and_glsl_s_need_coherent() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("swap.wgsl");
    std::fs::write(
        &k,
        "@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n\
         @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {\n\
         \x20 b[i] = i + 1u;\n  storageBarrier();\n  workgroupBarrier();\n  b[4u + i] = b[3u - i];\n}\n",
    )
    .unwrap();
    let args = ["--buffer", "0=zeros:u32:8"];
    let (_, model, device) = run_out::<u32>(&k, &args, "0");
    let want = [1, 2, 3, 4, 4, 3, 2, 1];
    assert_eq!(model, want);
    if let Some(d) = device {
        assert_eq!(d, want);
    }
    let g = dir.path().join("swap.comp");
    let glsl = |coherent: &str| {
        format!(
            "#version 450\nlayout(local_size_x = 4) in;\n\
             layout(binding = 0) {coherent}buffer B {{ uint b[]; }};\n\
             void main() {{\n  uint i = gl_LocalInvocationIndex;\n  b[i] = i + 1u;\n\
             \x20 memoryBarrierBuffer();\n  barrier();\n  b[4u + i] = b[3u - i];\n}}\n"
        )
    };
    std::fs::write(&g, glsl("")).unwrap();
    let out = lockstep()
        .args([
            "run",
            g.to_str().unwrap(),
            "--model-only",
            "--buffer",
            "0=zeros:u32:8",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("race on b: wrote at ")
            && text.contains("swap.comp:6 and read at ")
            && text.contains("swap.comp:9, not location-ordered")
            && text.contains("declare b `coherent`"),
        "{text}"
    );
    std::fs::write(&g, glsl("coherent ")).unwrap();
    let (_, model, _) = run_out::<u32>(&g, &args, "0");
    assert_eq!(model, want);
}

/// WGSL's packed dot products (`dot4I8Packed`, `dot4U8Packed`; naga writes `OpSDot`/`OpUDot`
/// with the packed 4×8-bit format, SPV_KHR_integer_dot_product) run on the model and on a device
/// with `shaderIntegerDotProduct` (lavapipe), and agree: (1, −2, 3, −4)·(5, 6, 7, 8) = −18 signed,
/// 1·5 + 254·6 + 3·7 + 252·8 = 3566 unsigned.
#[test]
fn wgsl_packed_dot_products_run_on_the_model_and_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("dot4.wgsl");
    std::fs::write(
        &k,
        "@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n\
         @compute @workgroup_size(1) fn main() {\n\
         \x20 v[2] = bitcast<u32>(dot4I8Packed(v[0], v[1]));\n  v[3] = dot4U8Packed(v[0], v[1]);\n}\n",
    )
    .unwrap();
    let args = ["--buffer", "0=values:u32:4228120065,134678021,0,0"];
    let (_, model, device) = run_out::<u32>(&k, &args, "0");
    let want = [0xFC03_FE01, 0x0807_0605, (-18i32) as u32, 3566];
    assert_eq!(model, want);
    if let Some(d) = device {
        assert_eq!(d, want);
    }
}

/// A feature the device lacks is *unsupported*, with the reason, never a failure: `lockstep run`
/// of a kernel that reads a storage image declared without a format (GL_EXT_shader_image_load_formatted)
/// on a device whose view format does not allow that (lavapipe of Debian 12) stops with exit 2
/// (as without a device), names the rule and how to declare the format, and points to
/// `--model-only`, which runs the model. Where the device has it, the run passes.
#[test]
fn a_kernel_the_device_cannot_run_is_unsupported_with_exit_2_not_an_internal_error() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_EXT_shader_image_load_formatted : require\n\
         layout(local_size_x = 4) in;\nlayout(binding = 0) uniform image2D img;\n\
         layout(binding = 1) buffer O { vec4 o[]; };\nvoid main() {\n\
         \x20 o[gl_LocalInvocationID.x] = imageLoad(img, ivec2(gl_LocalInvocationID.x, 0));\n}\n",
    )
    .unwrap();
    let args = [
        "--buffer",
        "0=series:f32:4x4x4",
        "--buffer",
        "1=zeros:f32:16",
    ];
    let argv = |model_only: bool| run_argv(&k, &args, model_only);
    if with_device() {
        match lockstep::cli::run(&argv(false)) {
            Ok(out) => assert!(out.contains("result: PASS"), "{out}"),
            Err(e) => {
                assert_eq!(e.code, 2, "{}", e.message);
                assert!(
                    e.message.starts_with("unsupported on ")
                        && e.message
                            .contains("declare the image's format in the shader")
                        && e.message.contains("--model-only"),
                    "{}",
                    e.message
                );
            }
        }
    }
    let out = lockstep::cli::run(&argv(true)).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
}

/// `--spec` sets a WGSL module's `override` constants, by name or by `@id`
/// (`kernel::wgsl_overrides_take_the_values_given_by_name_or_id_and_their_defaults_otherwise`):
/// `@workgroup_size(wg)` with `--spec wg=16` runs sixteen invocations, on the model and on the
/// device alike; a name the module lacks is bad input naming its overrides (exit 64).
#[test]
fn lockstep_run_sets_a_wgsl_override_with_spec() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.wgsl");
    std::fs::write(
        &k,
        "override wg: u32 = 8;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n\
         @compute @workgroup_size(wg)\nfn main(@builtin(local_invocation_index) i: u32) { o[i] = i + 1u; }\n",
    )
    .unwrap();
    let args = ["--buffer", "0=zeros:u32:16", "--spec", "wg=16"];
    for model_only in [true, false] {
        if !model_only && !with_device() {
            continue;
        }
        let out = lockstep::cli::run(&run_argv(&k, &args, model_only))
            .unwrap_or_else(|e| panic!("{}", e.message));
        assert!(
            out.contains("16 invocations (1×1×1 workgroups)") && out.contains("result: PASS"),
            "{out}"
        );
    }
    let e = lockstep::cli::run(&run_argv(
        &k,
        &["--buffer", "0=zeros:u32:16", "--spec", "w=16"],
        true,
    ))
    .unwrap_err();
    assert_eq!(e.code, 64, "{}", e.message);
    assert!(
        e.message
            .contains("no override named or numbered w (its overrides: wg)"),
        "{}",
        e.message
    );
}

/// A subgroup size the spec allows that the test device does not have, if there is one.
#[cfg(feature = "vulkan")]
fn size_the_device_lacks() -> Option<u32> {
    let ctx = crate::support::shared_device()?;
    let (lo, hi) = (ctx.caps.min_subgroup_size, ctx.caps.max_subgroup_size);
    [1u32, 2, 4, 8, 16, 32, 64, 128]
        .into_iter()
        .find(|s| *s < lo || *s > hi)
}

#[cfg(not(feature = "vulkan"))]
fn size_the_device_lacks() -> Option<u32> {
    None
}

/// The same for a subgroup size the device does not have: `lockstep run KERNEL --subgroup-size N`
/// with one size outside the device's range is *unsupported* (exit 2, the range named, pointing
/// to `--model-only`), where it stopped with an internal error at the lane-layout probe (exit 70,
/// "probing the device's lane layout: unsupported by the device"); a sweep that lists the size
/// says so in its row already. The model alone runs at that size.
#[test]
fn one_subgroup_size_the_device_lacks_is_unsupported_not_an_internal_error() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_KHR_shader_subgroup_basic : require\nlayout(local_size_x = 4) in;\nlayout(binding = 0) buffer O { uint o[]; };\n\
         void main() { o[gl_LocalInvocationID.x] = gl_SubgroupSize; }\n",
    )
    .unwrap();
    let lacking = size_the_device_lacks();
    let size = lacking.unwrap_or(4).to_string();
    let args = [
        "--buffer",
        "0=zeros:u32:4",
        "--subgroup-size",
        size.as_str(),
    ];
    if let (true, Some(n)) = (with_device(), lacking) {
        let e = lockstep::cli::run(&run_argv(&k, &args, false)).unwrap_err();
        assert_eq!(e.code, 2, "{}", e.message);
        assert!(
            e.message.starts_with("unsupported on ")
                && e.message.contains(&format!("required subgroup size {n}"))
                && e.message.contains("--model-only"),
            "{}",
            e.message
        );
    }
    let out =
        lockstep::cli::run(&run_argv(&k, &args, true)).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(
        out.contains(&format!("subgroup size {size}")) && out.contains("result: PASS"),
        "{out}"
    );
}

/// An array of combined image samplers (`uniform sampler2D texs[2]`) takes one image per element
/// (`--buffer 0[K]=…`) and one sampler state for the binding (`--sampler 0=…`, every element's):
/// `texelFetch(texs[0], (i, 0), 0)` is texel (i, 0) of the series image, components 4·i … 4·i + 3
/// (Vulkan, "Texel Input Operations": integer coordinates, no filtering); `textureLod(texs[1], …)`
/// of the image filled with 0.5 is 0.5 in every component, whatever the filter (nearest here).
#[test]
fn an_array_of_combined_image_samplers_takes_an_image_per_element_and_one_sampler_state() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) uniform sampler2D texs[2];\n\
         layout(binding = 1) buffer O { vec4 o[]; };\nvoid main() {\n  uint i = gl_LocalInvocationID.x;\n\
         \x20 o[i] = textureLod(texs[1], vec2(0.125 + 0.25 * float(i), 0.125), 0.0)\n\
         \x20   + texelFetch(texs[0], ivec2(i, 0), 0);\n}\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let args = [
        "--buffer",
        "0[0]=series:f32:4x4x4",
        "--buffer",
        "0[1]=fill:f32:4x4x4:0.5",
        "--buffer",
        "1=zeros:f32:16",
        "--sampler",
        "0=nearest,clamp_to_edge",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = lockstep::cli::run(&run_argv(&k, &args, !with_device()))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert!(
        out.contains("binding 0[1] ") && out.contains("result: PASS"),
        "{out}"
    );
    let o = lockstep::kernel::read_npy(&out_dir.join("model-1.npy"))
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let want: Vec<f32> = (0..16).map(|c| c as f32 + 0.5).collect();
    assert_eq!(o, want);
}

/// Output files are written atomically *beside* their path (a temporary file in the same
/// directory, renamed over it), never through the working directory: run from a directory
/// nothing can be created in (`/proc`), `lockstep run --out DIR --json FILE` still writes both.
#[test]
fn outputs_are_written_beside_their_path_not_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 4) in;\nlayout(binding = 0) buffer B { uint b[]; };\n\
         void main() { b[gl_LocalInvocationID.x] = 2u; }\n",
    )
    .unwrap();
    let (out, json) = (dir.path().join("out"), dir.path().join("r.json"));
    let o = lockstep()
        .current_dir("/proc")
        .args([
            "run",
            k.to_str().unwrap(),
            "--model-only",
            "--buffer",
            "0=zeros:u32:4",
        ])
        .args([
            "--out",
            out.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = lockstep::kernel::read_npy(&out.join("model-0.npy")).unwrap();
    assert_eq!(b.to_vec::<u32>().unwrap(), [2, 2, 2, 2]);
    assert!(std::fs::read_to_string(&json)
        .unwrap()
        .contains("\"buffers\""));
}

/// Appendix B, Data Race: "Applications must ensure that no data races occur" — eight invocations
/// storing one value to one shared variable race, whatever the value. `lockstep run` fails (exit
/// code 1) naming the same-value race and the fix, the value kept; `--allow-same-value-races`
/// lists it as a warning and passes; with `--strict` (spin-waits fail) it is refused as bad input.
#[test]
fn a_same_value_race_fails_lockstep_run_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(binding = 0) buffer B { uint o[8]; };\n\
         shared uint t;\nvoid main() { t = 7u; barrier(); o[gl_LocalInvocationID.x] = t; }\n",
    )
    .unwrap();
    let args = ["--buffer", "0=zeros:u32:8"];
    for model_only in [true, false] {
        if !model_only && !with_device() {
            continue;
        }
        let e = lockstep::cli::run(&run_argv(&k, &args, model_only)).unwrap_err();
        assert_eq!(e.code, 1, "{}", e.message);
        let allowed = [args[0], args[1], "--allow-same-value-races"];
        let out = lockstep::cli::run(&run_argv(&k, &allowed, model_only))
            .unwrap_or_else(|e| panic!("{}", e.message));
        for want in [
            "[same_value_race] same-value race on t: wrote at ",
            "k.comp:5 and wrote at ",
            "let one invocation store it",
            "result: PASS",
        ] {
            assert!(out.contains(want), "{want}: {out}");
        }
        assert!(out.contains("binding 0  u32   8         8"), "{out}");
    }
    let both = [args[0], args[1], "--allow-same-value-races", "--strict"];
    let e = lockstep::cli::run(&run_argv(&k, &both, true)).unwrap_err();
    assert_eq!(e.code, 64, "{}", e.message);
}

/// GL_ARB_shader_ballot's built-ins, as kernels written for OpenGL use them (FidelityFX's parallel
/// sort as aitviewer ports it: `localID / gl_SubGroupSizeARB`): SPV_KHR_shader_ballot gives them
/// as `SubgroupSize` and `SubgroupLocalInvocationId` under the `SubgroupBallotKHR` capability,
/// which a Vulkan device accepts once VK_EXT_shader_subgroup_ballot is enabled ("This extension
/// adds support for the following SPIR-V extension in Vulkan: SPV_KHR_shader_ballot"). Each
/// invocation writes the size and its id; the device (lavapipe, where present) runs it and agrees.
#[test]
fn lockstep_run_runs_gl_arb_shader_ballot_built_ins_on_the_model_and_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.comp");
    std::fs::write(
        &k,
        "#version 450\n#extension GL_ARB_shader_ballot : require\nlayout(local_size_x = 16) in;\n\
         layout(binding = 0) buffer O { uint o[]; };\nvoid main() {\n\
         \x20 uint i = gl_LocalInvocationIndex;\n\
         \x20 o[2u * i] = gl_SubGroupSizeARB;\n  o[2u * i + 1u] = gl_SubGroupInvocationARB;\n}\n",
    )
    .unwrap();
    let device = with_device();
    let out_dir = dir.path().join("out");
    let args = [
        "--subgroup-size",
        "8",
        "--buffer",
        "0=zeros:u32:32",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = lockstep::cli::run(&run_argv(&k, &args, !device))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.contains("result: PASS"), "{out}");
    let want: Vec<u32> = (0..16).flat_map(|i| [8, i % 8]).collect();
    let read = |f: &str| {
        lockstep::kernel::read_npy(&out_dir.join(f))
            .unwrap()
            .to_vec::<u32>()
            .unwrap()
    };
    assert_eq!(read("model-0.npy"), want);
    if device {
        assert_eq!(read("device-0.npy"), want);
    }
}
