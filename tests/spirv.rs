//! The SPIR-V interpreter on kernels compiled from GLSL.
#![cfg(feature = "vulkan")]
mod spirv_support;
use lockstep::model::{Layout, SubgroupSize};
use lockstep::reconverge::Mode;
use lockstep::spirv::*;

fn cfg(size: u64, mode: Mode, wg: [u32; 3]) -> RunConfig {
    RunConfig { size: SubgroupSize::new(size).unwrap(), layout: Layout::ROW_MAJOR, mode, workgroups: wg, max_steps: DEFAULT_MAX_STEPS }
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn the_committed_example_modules_match_their_glsl() {
    let src = include_str!("../examples/spv/lane_ids.comp");
    let words = spirv_support::glsl(src, "lane_ids.comp");
    if std::env::var("LOCKSTEP_WRITE_SPV").is_ok() {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write("examples/spv/lane_ids.spv", bytes).unwrap();
    }
    assert_eq!(words, examples::lane_ids());
}

#[test]
fn lane_ids_are_written_per_lane() {
    let k = decode(&examples::lane_ids(), &DecodeOptions::default()).unwrap();
    let run = run_model(&k, cfg(4, Mode::Base, [2, 1, 1]), &[BufferInput { set: 0, binding: 0, bytes: vec![0; 64] }], None).unwrap();
    assert_eq!(u32s(&run.buffers[0].bytes)[..16], [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
}
