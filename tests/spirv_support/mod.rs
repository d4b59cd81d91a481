//! GLSL → SPIR-V for the interpreter's tests: shaderc with debug info (OpLine), no optimisation,
//! `#include` relative to a directory.
#![allow(dead_code)]

use std::path::Path;

pub fn glsl(src: &str, name: &str) -> Vec<u32> {
    glsl_in(src, name, None)
}

pub fn glsl_file(path: &str) -> Vec<u32> {
    let p = Path::new(path);
    let src = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{path}: {e}"));
    glsl_in(&src, p.file_name().unwrap().to_str().unwrap(), p.parent())
}

pub fn glsl_in(src: &str, name: &str, dir: Option<&Path>) -> Vec<u32> {
    let c = shaderc::Compiler::new().expect("shaderc");
    let mut o = shaderc::CompileOptions::new().expect("options");
    o.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_1 as u32,
    );
    o.set_target_spirv(shaderc::SpirvVersion::V1_3);
    o.set_generate_debug_info();
    o.set_optimization_level(shaderc::OptimizationLevel::Zero);
    if let Some(dir) = dir {
        let dir = dir.to_path_buf();
        o.set_include_callback(move |req, _ty, _from, _depth| {
            let p = dir.join(req);
            let content =
                std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok(shaderc::ResolvedInclude {
                resolved_name: req.to_string(),
                content,
            })
        });
    }
    let a = c
        .compile_into_spirv(src, shaderc::ShaderKind::Compute, name, "main", Some(&o))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    a.as_binary().to_vec()
}

pub fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Buffers holding `buffers` bound at set 0, bindings 0, 1, … in order.
pub fn bindings(buffers: impl IntoIterator<Item = Vec<u8>>) -> Vec<lockstep::spirv::BufferInput> {
    buffers
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| lockstep::spirv::BufferInput {
            set: 0,
            binding: i as u32,
            bytes,
            ..Default::default()
        })
        .collect()
}

/// Everything a run reports, as text: lane-instruction counts, every finding and group with its
/// text, every buffer's bytes and every unit's status with its chain (for tests that two ways of
/// running a kernel report the same).
pub fn report(r: &lockstep::spirv::ModelRun) -> String {
    let mut s = format!(
        "lane-instructions {}, findings {}, ordered {}\n",
        r.lane_instructions, r.finding_count, r.ordered
    );
    for f in &r.findings {
        s += &format!("finding: {}\n", r.finding_text(f));
    }
    for g in &r.groups {
        s += &format!("group: {:?}\n", r.group_text(g));
    }
    for b in &r.buffers {
        s += &format!("buffer {} {}: {:?}\n", b.set, b.binding, b.bytes);
        for (u, t) in b.taint.iter().enumerate() {
            s += &format!("  unit {u}: {:?}\n", r.status(*t));
        }
    }
    s
}

/// Runs every kernel of `ks` (one `uint` buffer of `words` zeros at binding 0) under base, SUCF and
/// maximal reconvergence at subgroup sizes 4 (two workgroups) and 16 (one), and requires their
/// reports ([`report`]) to be the same to the letter.
pub fn same_reports(what: &str, ks: &[&lockstep::spirv::Kernel], words: usize) {
    use lockstep::model::SubgroupSize;
    use lockstep::reconverge::Mode;
    use lockstep::spirv::{run_model, BufferInput, RunConfig};
    let buf = || {
        vec![BufferInput {
            set: 0,
            binding: 0,
            bytes: bytes_u32(&vec![0; words]),
            ..Default::default()
        }]
    };
    for mode in [Mode::Base, Mode::Sucf, Mode::Maximal] {
        for (size, groups) in [(4u64, 2u32), (16, 1)] {
            let mut cfg = RunConfig::new(SubgroupSize::new(size).unwrap(), [groups, 1, 1]);
            cfg.mode = mode;
            let reports: Vec<String> = ks
                .iter()
                .map(|k| report(&run_model(k, cfg.clone(), &buf(), None).unwrap()))
                .collect();
            for (i, r) in reports.iter().enumerate().skip(1) {
                assert_eq!(
                    &reports[0], r,
                    "{what}: {mode:?}, subgroup {size}, decoding {i}"
                );
            }
        }
    }
}
