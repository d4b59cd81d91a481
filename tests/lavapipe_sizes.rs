//! lavapipe at its three subgroup sizes (issue 21 §2): it fixes the size per process from its
//! vector width (`LP_NATIVE_VECTOR_WIDTH` 128 → 4, 256 → 8, 512 → 16), so each size runs in a child
//! process — `lockstep devices` reports it, `lockstep conform` passes (its known deviations
//! allowed, the same conditions at every size), the example Amber scripts pass on the device and on
//! the model at that size, and a kernel's device and model values agree.
#![cfg(feature = "vulkan")]
use assert_cmd::Command;

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
    for (width, size) in [("128", 4), ("256", 8), ("512", 16)] {
        let out = lockstep(width).arg("devices").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!(
                "subgroup size                  {size} (min {size}, max {size})"
            )),
            "{width}: {text}"
        );
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
