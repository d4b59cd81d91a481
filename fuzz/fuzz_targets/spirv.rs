//! Arbitrary bytes as a SPIR-V module for the interpreter (issue 9 §8): decoding either fails with
//! an error or gives a kernel, which then runs on one workgroup with a small step budget, every
//! buffer it declares bound to 256 zero bytes. Nothing may panic or hang.
//!
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run spirv -- -max_total_time=600` (seed the corpus with the
//! modules lockstep builds: `fuzz/seed-spirv.sh`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep::model::SubgroupSize;
use lockstep::reconverge::Mode;
use lockstep::spirv::{decode, run_model, BufferInput, DecodeOptions, RunConfig};

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let Ok(k) = decode(&words, &DecodeOptions::default()) else {
        return;
    };
    let buffers: Vec<BufferInput> = k
        .objects
        .iter()
        .filter_map(|o| o.binding)
        .map(|(set, binding)| BufferInput {
            set,
            binding,
            bytes: vec![0; 256],
            ..Default::default()
        })
        .collect();
    let size = (data.len() % 8) as u32;
    let mut cfg = RunConfig::new(SubgroupSize::new(1 << size).unwrap(), [1, 1, 1]);
    cfg.mode = Mode::ALL[data.len() % 3];
    cfg.max_steps = 20_000;
    let _ = run_model(&k, cfg, &buffers, Some(&[0u8; 128]));
});
