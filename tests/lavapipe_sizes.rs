//! lavapipe at its three subgroup sizes (issue 21 §2): it fixes the size per process from its
//! vector width (`LP_NATIVE_VECTOR_WIDTH` 128 → 4, 256 → 8, 512 → 16), so each size runs in a child
//! process — `lockstep devices` reports it, `lockstep conform` passes (its known deviations
//! allowed, the same conditions at every size), the example Amber scripts pass on the device and on
//! the model at that size, and a kernel's device and model values agree.
#![cfg(feature = "vulkan")]
use crate::support::cmd::{Assertions, CargoBin};
use std::process::Command;

fn lockstep(width: &str) -> Command {
    let mut c = Command::cargo_bin("lockstep").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LP_NATIVE_VECTOR_WIDTH", width);
    c
}

#[test]
fn lavapipe_passes_at_subgroup_sizes_4_8_and_16() {
    let probe = lockstep("256").arg("devices").output().unwrap();
    let text = String::from_utf8_lossy(&probe.stdout).to_string();
    if !text.contains("llvmpipe") {
        assert!(
            std::env::var("LOCKSTEP_SKIP_DEVICE_TESTS").is_ok() || probe.status.success(),
            "no device: {text}"
        );
        eprintln!("not lavapipe (this test is about lavapipe's sizes): 0 sizes checked\n{text}");
        return;
    }
    // The size lavapipe gives with no LP_NATIVE_VECTOR_WIDTH (8 on a machine with AVX): that size's
    // runs are made as a user makes them, without the variable — what `./run` compiled for lavapipe
    // is then in Mesa's cache, as it is for that user.
    let plain = Command::cargo_bin("lockstep")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("LP_NATIVE_VECTOR_WIDTH")
        .arg("devices")
        .output()
        .unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout).to_string();
    for (width, size) in [("128", 4), ("256", 8), ("512", 16)] {
        let shown = format!("subgroup size                  {size} (min {size}, max {size})");
        let out = lockstep(width).arg("devices").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&shown), "{width}: {text}");
        let lockstep = |width: &str| {
            let mut c = lockstep(width);
            if plain.contains(&shown) {
                c.env_remove("LP_NATIVE_VECTOR_WIDTH");
            }
            c
        };
        // conform: every category, few cases per size (CI time), known deviations allowed.
        let out = lockstep(width)
            .args(["conform", "--cases", "12", "--seed", "7"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "size {size}: {text}");
        assert!(text.contains(&format!("sizes run: {size}")), "{text}");
        // The examples on the device and on the model at the device's size.
        let out = lockstep(width)
            .args(["amber", "examples", "--subgroup-size", &size.to_string()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "size {size}: {text}");
        // Four pass; allocation_sucf needs subgroup uniform control flow, which lavapipe lacks.
        assert_eq!(text.matches(": pass").count(), 4, "size {size}: {text}");
        assert!(
            text.contains("allocation_sucf.amber: unsupported"),
            "{text}"
        );
        // A kernel: device and model values agree, element by element.
        let out = lockstep(width)
            .args(["run", "examples/shuffle_xor_reduce.comp"])
            .args([
                "--buffer",
                "0=series:u32:128",
                "--buffer",
                "1=zeros:u32:128",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("subgroup size {size}")), "{text}");
        assert!(
            text.contains("model and device agree"),
            "size {size}: {text}"
        );
    }
}

/// A 64-wide workgroup writing its subgroup size (`subgroupAdd(1)`) and lane.
const SIZE_PROBE: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Out { uint lanes[64]; uint count[64]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  lanes[i] = gl_SubgroupInvocationID;
  count[i] = subgroupAdd(1u);
}
"#;

#[test]
fn each_lavapipe_width_compiles_its_own_shaders_not_another_widths_from_the_cache() {
    // Mesa 22.3 keys lavapipe's disk cache without LP_NATIVE_VECTOR_WIDTH; lockstep gives each
    // width a cache folder of its own. One HOME for all three runs, so that without that the
    // second and third would take the first one's shader.
    let probe = lockstep("256").arg("devices").output().unwrap();
    if !String::from_utf8_lossy(&probe.stdout).contains("llvmpipe") {
        eprintln!("not lavapipe: 0 widths checked");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let kernel = home.path().join("size.comp");
    std::fs::write(&kernel, SIZE_PROBE).unwrap();
    for (width, size) in [("128", 4u32), ("512", 16), ("256", 8)] {
        let out = lockstep(width)
            .env("HOME", home.path())
            .env_remove("XDG_CACHE_HOME")
            .env_remove("MESA_SHADER_CACHE_DIR")
            .env_remove("MESA_SHADER_CACHE_DISABLE")
            .arg("run")
            .arg(&kernel)
            .args(["--buffer", "0=zeros:u32:128", "--out"])
            .arg(home.path().join(width))
            .assert()
            .success();
        let _ = out;
        let bytes = std::fs::read(home.path().join(width).join("device-0.npy")).unwrap();
        // .npy: magic, version, header length, header, then the little-endian u32s.
        let header = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let words: Vec<u32> = bytes[10 + header..]
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(
            words[64], size,
            "width {width}: subgroupAdd(1) is {}",
            words[64]
        );
        assert_eq!(words[size as usize - 1], size - 1, "width {width}");
        assert!(
            home.path()
                .join(format!(".cache/lockstep-lavapipe-width-{width}"))
                .is_dir(),
            "width {width}: no cache folder of its own"
        );
    }
}

/// Every invocation writes its lane, its subgroup's size and the sum of its subgroup's local
/// indices: values that depend on how the device grouped the invocations.
const GROUPING: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 3, local_size_y = 5, local_size_z = 7) in;
layout(std430, set = 0, binding = 0) buffer Out { uint lane[105]; uint count[105]; uint sum[105]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  lane[i] = gl_SubgroupInvocationID;
  count[i] = subgroupAdd(1u);
  sum[i] = subgroupAdd(i);
}
"#;

#[test]
fn the_model_runs_in_the_devices_lane_layout_for_every_shape() {
    // lavapipe runs each 3-wide row of a 3x5x7 workgroup as a subgroup of its own at every size:
    // none of the model's layouts. `lockstep run` probes the device's and runs the model in it.
    let probe = lockstep("256").arg("devices").output().unwrap();
    if !String::from_utf8_lossy(&probe.stdout).contains("llvmpipe") {
        eprintln!("not lavapipe: 0 sizes checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("grouping.comp");
    std::fs::write(&kernel, GROUPING).unwrap();
    for width in ["128", "256", "512"] {
        let out = lockstep(width)
            .arg("run")
            .arg(&kernel)
            .args(["--buffer", "0=zeros:u32:315"])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            text.contains("model lane layout: the device's own"),
            "width {width}: {text}"
        );
        assert!(text.contains("result: PASS"), "width {width}: {text}");
        // The model's own row-major layout does not match it: the probe is what makes them agree.
        let out = lockstep(width)
            .arg("run")
            .arg(&kernel)
            .args(["--buffer", "0=zeros:u32:315", "--layout", "row-major"])
            .assert()
            .code(1);
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(text.contains("[mismatch]"), "width {width}: {text}");
    }
}

#[test]
fn an_amber_size_sweep_runs_the_device_at_each_size_it_offers_and_the_model_at_each_asked() {
    let probe = lockstep("256").arg("devices").output().unwrap();
    if !String::from_utf8_lossy(&probe.stdout).contains("llvmpipe") {
        eprintln!("not lavapipe: 0 sizes checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // lavapipe offers one size per process: asked for 4, 8 and 16, the device runs at its own.
    for (width, size) in [("128", 4u64), ("256", 8), ("512", 16)] {
        let json = dir.path().join(format!("{width}.json"));
        lockstep(width)
            .args([
                "amber",
                "examples/max_reduce.amber",
                "--subgroup-size",
                "4,8,16",
                "--json",
            ])
            .arg(&json)
            .assert()
            .success();
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let runs: Vec<(String, u64, String)> = j["files"][0]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["backend"].as_str().unwrap().to_string(),
                    r["subgroup_size"].as_u64().unwrap(),
                    r["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let pass = |b: &str, s: u64| (b.to_string(), s, "pass".to_string());
        assert_eq!(
            runs,
            vec![
                pass("device", size),
                pass("model", 4),
                pass("model", 8),
                pass("model", 16)
            ],
            "width {width}"
        );
    }
}
