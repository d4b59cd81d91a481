//! The SPIR-V interpreter against the structured-program executor: the random programs of
//! `lockstep reconverge`, emitted as GLSL, compiled, run by the interpreter under each model —
//! every value the executor defines must come out equal, and every value it leaves undefined must
//! come out undefined (two implementations of one set of rules, checked against each other).
#![cfg(feature = "vulkan")]
use crate::spirv_support;
use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use lockstep::reconverge::glsl::{parametric_shader, shader, RecordLayout};
use lockstep::reconverge::r#gen::variant;
use lockstep::reconverge::r#gen::{programs, GenConfig};
use lockstep::reconverge::{execute, seed001, LaneMap, Mode, Program, Val};
use lockstep::spirv::*;
use proptest::prelude::*;
use spirv_support::*;

/// Runs `p` both ways; returns the first disagreement.
fn cross_check(p: &Program, mode: Mode, shape: WorkgroupShape, size: u32) -> Result<usize, String> {
    cross_check_batch(std::slice::from_ref(p), false, mode, shape, size)
}

/// Runs `ps` both ways, one workgroup each, from one shader — its parameters read from a buffer
/// if `parametric` — and returns the first disagreement, or the number of values compared.
fn cross_check_batch(
    ps: &[Program],
    parametric: bool,
    mode: Mode,
    shape: WorkgroupShape,
    size: u32,
) -> Result<usize, String> {
    let s = SubgroupSize::new(size as u64).unwrap();
    let wl = WorkgroupLayout::new(shape, s, LaneOrder::ROW_MAJOR).unwrap();
    let exs = ps
        .iter()
        .map(|p| execute(p, &LaneMap::new(&wl), mode).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let max = exs
        .iter()
        .flat_map(|ex| ex.records.iter().map(|r| r.len()))
        .max()
        .unwrap_or(0) as u32;
    let layout = RecordLayout::new(max.max(1), size);
    let n = ps.len();
    let inv = shape.invocations() as usize;
    let mut inputs = vec![BufferInput {
        set: 0,
        binding: 0,
        bytes: vec![0xEFu8; layout.buffer_words(n, inv) * 4],
        ..Default::default()
    }];
    let src = if parametric {
        let sh = parametric_shader(ps, mode, shape, layout);
        inputs.push(BufferInput {
            set: 0,
            binding: 1,
            bytes: sh.params.iter().flat_map(|w| w.to_le_bytes()).collect(),
            ..Default::default()
        });
        sh.glsl
    } else {
        shader(ps, mode, shape, layout)
    };
    let words = glsl(&src, "program.comp");
    let k = decode(&words, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    let mut cfg = RunConfig::new(s, [n as u32, 1, 1]);
    cfg.mode = mode;
    // The executor keeps a lost invocation lost to the end: compare under the same rule.
    cfg.lost_paths_end = false;
    let run = run_model(&k, cfg, &inputs, None).map_err(|e| e.to_string())?;
    let b = &run.buffers[0];
    let words = u32s(&b.bytes);
    let mut compared = 0;
    for (w, ex) in exs.iter().enumerate() {
        for i in 0..inv {
            let base = 4 * n + (w * inv + i) * layout.stride_words();
            let lost = ex.lost_at[i].unwrap_or(usize::MAX);
            for (kk, rec) in ex.records[i].iter().enumerate() {
                if kk >= lost || kk >= layout.max_records as usize {
                    break;
                }
                let o = base + layout.record_words(kk);
                if words[o] != rec.tag {
                    return Err(format!(
                        "invocation {i} record {kk}: tag {} on the interpreter, {} in the executor",
                        words[o], rec.tag
                    ));
                }
                let vals = [words[o + 1], words[o + 2], words[o + 3]];
                let clean = (1..4).all(|c| !b.word_taint(o + c).has_prov());
                match rec.value {
                    Val::Defined(_) => {
                        let want = rec.value.words().unwrap();
                        if !clean {
                            return Err(format!("invocation {i} record {kk} (tag {}): executor {} but interpreter undefined: {}", rec.tag, rec.value, run.chain(b.word_taint(o + 1) | b.word_taint(o + 2) | b.word_taint(o + 3))));
                        }
                        if vals != [want[0], want[1], want[2]] {
                            return Err(format!(
                            "invocation {i} record {kk} (tag {}): executor {:?}, interpreter {:?}",
                            rec.tag, want, vals
                        ));
                        }
                        compared += 1;
                    }
                    Val::Undefined(_) => {
                        if clean {
                            return Err(format!("invocation {i} record {kk} (tag {}): executor undefined ({}), interpreter defined {:?}", rec.tag, rec.value, vals));
                        }
                        compared += 1;
                    }
                    Val::Atomic { .. } | Val::OrderDependent => {}
                }
            }
        }
    }
    Ok(compared)
}

#[test]
fn seed_001_kernels_have_the_executors_verdicts_under_every_model() {
    let shape = WorkgroupShape::new(64, 1, 1).unwrap();
    for p in [
        seed001::allocation(0x5555_5555_5555_5555_5555_5555_5555_5555),
        seed001::allocation_fixed(0x5555_5555_5555_5555_5555_5555_5555_5555),
    ] {
        for mode in Mode::ALL {
            for size in [8, 32] {
                let n = cross_check(&p, mode, shape, size)
                    .unwrap_or_else(|e| panic!("{mode} S={size}: {e}"));
                assert!(n > 0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_programs_give_the_executors_defined_values(p in programs(GenConfig::default()), m in 0usize..3, sz in 0usize..3) {
        let mode = Mode::ALL[m];
        let size = [4u32, 8, 32][sz];
        let shape = WorkgroupShape::new(64, 1, 1).unwrap();
        let r = cross_check(&p, mode, shape, size);
        prop_assert!(r.is_ok(), "{mode} S={size}: {}\n{}", r.unwrap_err(), shader(std::slice::from_ref(&p), mode, shape, RecordLayout::new(8, size)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// The shader a campaign runs with `--variants`: programs of one shape from one copy of the
    /// code, their parameters read from a buffer, one workgroup each — every workgroup gives its
    /// own program's executor values.
    #[test]
    fn programs_of_one_shape_from_one_parametric_shader_give_the_executors_values(p in programs(GenConfig::default()), m in 0usize..3, sz in 0usize..2, seed in any::<u64>()) {
        let mode = Mode::ALL[m];
        let size = [8u32, 32][sz];
        let shape = WorkgroupShape::new(64, 1, 1).unwrap();
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            Default::default(),
            proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &[seed as u8; 32]),
        );
        let mut ps = vec![p.clone()];
        for _ in 0..2 {
            ps.push(variant(&p, &mut runner).unwrap());
        }
        let other = programs(GenConfig::default()).new_tree(&mut runner).unwrap().current();
        ps.push(other);
        let sh = parametric_shader(&ps, mode, shape, RecordLayout::new(8, size));
        prop_assert!(sh.shapes <= 2, "{} copies of the code for two shapes", sh.shapes);
        let r = cross_check_batch(&ps, true, mode, shape, size);
        prop_assert!(r.is_ok(), "{mode} S={size}: {}\n{}", r.unwrap_err(), sh.glsl);
    }
}
