//! The SPIR-V interpreter's speed (issue 9 §7): the Gray-Scott `subgroup_1d` shader — the module
//! the GPU runs — one step at 1024×1024, subgroup size 32, workgroup 128, in lane-instructions per
//! second; beside it, in the same run, the hand-written Gray-Scott model backend (`ModelSim`) on the
//! same step, and the ratio of their times; and, where a Vulkan device is present, the same shader
//! on it (lavapipe here: JIT-compiled, no checks) with the same workgroups at the device's default
//! subgroup size, beside the interpreter at that size — the ceiling a checked run is compared
//! with. A table is printed at the end.
//!
//! `cargo bench --bench interpreter`; `INTERPRETER_DOMAIN=COLSxROWS` and `INTERPRETER_SUBGROUP=S`
//! change the work; `INTERPRETER_SPV=FILE` runs another build of the shader (a `.spv` file, e.g.
//! the module after `spirv-opt -O`, with the same bindings and specialization constants).

use criterion::{Criterion, SamplingMode, Throughput};
use lockstep::grayscott::layout::{Shape, Tiling};
use lockstep::grayscott::model::ModelSim;
use lockstep::grayscott::{Domain, Fields, Padded, Params, Simulation};
use lockstep::kernel::{load, SourceOptions};
use lockstep::model::SubgroupSize;
use lockstep::reconverge::Mode;
use lockstep::spirv::{decode, run_model, BufferInput, DecodeOptions, RunConfig, SpecInput};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WORKGROUP: u32 = 128;

static TIMES: Mutex<Vec<(String, f64, u64)>> = Mutex::new(Vec::new());

fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn main() {
    let (cols, rows) = std::env::var("INTERPRETER_DOMAIN")
        .ok()
        .and_then(|d| {
            let (c, r) = d.split_once('x')?;
            Some((c.parse().ok()?, r.parse().ok()?))
        })
        .unwrap_or((1024usize, 1024usize));
    let s: u32 = std::env::var("INTERPRETER_SUBGROUP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let domain = Domain::new(rows, cols).expect("domain");
    let params = Params::default();
    let path = std::env::var("INTERPRETER_SPV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("shaders/grayscott/subgroup_1d.comp")
        });
    let module = load(&path, &SourceOptions::default()).expect("compiling subgroup_1d.comp");
    let spec = vec![
        (0, SpecInput::Bits(WORKGROUP as u64)),
        (2, SpecInput::Bits(domain.padded_cols() as u64)),
        (3, SpecInput::Bits(domain.padded_rows() as u64)),
        (4, SpecInput::Bits(params.feed.to_bits() as u64)),
        (5, SpecInput::Bits(params.kill.to_bits() as u64)),
        (6, SpecInput::Bits(params.dt.to_bits() as u64)),
        (7, SpecInput::Bits(params.du.to_bits() as u64)),
        (8, SpecInput::Bits(params.dv.to_bits() as u64)),
    ];
    let k = decode(
        &module.words,
        &DecodeOptions {
            spec,
            ..Default::default()
        },
    )
    .expect("decoding");
    let shape = Shape::new(Tiling::OneD, s, WORKGROUP).expect("shape");
    let [gx, gy] = shape.grid(domain);
    let f = Fields::initial(domain);
    let (u, v) = (Padded::from_array(&f.u), Padded::from_array(&f.v));
    let zeros = vec![0f32; u.data.len()];
    let bufs: Vec<BufferInput> = [&u.data, &v.data, &zeros, &zeros]
        .iter()
        .enumerate()
        .map(|(i, d)| BufferInput {
            set: 0,
            binding: i as u32,
            bytes: bytes_f32(d),
            ..Default::default()
        })
        .collect();
    let mut cfg = RunConfig::new(SubgroupSize::new(s as u64).expect("size"), [gx, gy, 1]);
    cfg.mode = Mode::Maximal;
    let probe = run_model(&k, cfg.clone(), &bufs, None).expect("a run");
    let lane_instructions = probe.lane_instructions;
    drop(probe);
    let label = format!("{cols}x{rows}/subgroup{s}/workgroup{WORKGROUP}");
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(2));
    {
        let mut g = c.benchmark_group("interpreter");
        g.sampling_mode(SamplingMode::Flat);
        g.throughput(Throughput::Elements(lane_instructions));
        g.bench_function(format!("gray-scott-subgroup-1d/{label}"), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    std::hint::black_box(run_model(&k, cfg.clone(), &bufs, None).expect("a run"));
                }
                let e = t.elapsed();
                note("interpreter (SPIR-V, maximal)", e, iters, lane_instructions);
                e
            })
        });
        // The race shadow's cost: the same run with `race_checks` off.
        let mut off = cfg.clone();
        off.race_checks = false;
        g.bench_function(
            format!("gray-scott-subgroup-1d-race-checks-off/{label}"),
            |b| {
                b.iter_custom(|iters| {
                    let t = Instant::now();
                    for _ in 0..iters {
                        std::hint::black_box(
                            run_model(&k, off.clone(), &bufs, None).expect("a run"),
                        );
                    }
                    let e = t.elapsed();
                    note("interpreter, race checks off", e, iters, lane_instructions);
                    e
                })
            },
        );
        // A kernel that is nearly all shared-memory traffic (a tree reduction: every load and
        // store goes through the shadow), with and without the checks.
        // And one whose workgroups share buffer memory (an atomic histogram): its device-scope
        // adds commute and nothing reads what they return, so the parallel run's claims on the
        // bins suffice and no ordered re-run is needed (`ModelRun::ordered`).
        let kernels = [
            (reduction(REDUCTION), "reduction", "shared-reduction"),
            (reduction(HISTOGRAM), "histogram", "atomic-histogram"),
        ];
        for ((rk, rbufs, rcfg), what, id) in &kernels {
            for checks in [true, false] {
                let name = if checks {
                    what.to_string()
                } else {
                    format!("{what}, race checks off")
                };
                let mut c = rcfg.clone();
                c.race_checks = checks;
                g.throughput(Throughput::Elements(REDUCTION_INVOCATIONS));
                g.bench_function(format!("{id}/checks-{checks}"), |b| {
                    b.iter_custom(|iters| {
                        let t = Instant::now();
                        for _ in 0..iters {
                            let r = run_model(rk, c.clone(), rbufs, None).expect("a run");
                            assert!(r.findings.is_empty(), "the kernel is race-free");
                            std::hint::black_box(r);
                        }
                        let e = t.elapsed();
                        note(&name, e, iters, 0);
                        e
                    })
                });
            }
        }
        g.throughput(Throughput::Elements(domain.cells() as u64));
        g.bench_function(format!("gray-scott-model-backend/{label}"), |b| {
            b.iter_custom(|iters| {
                let mut sim = ModelSim::new(domain, params, shape).expect("model");
                let t = Instant::now();
                sim.advance(iters as u32).expect("a step");
                let e = t.elapsed();
                note("hand-written model backend", e, iters, 0);
                e
            })
        });
        g.finish();
    }
    // The device (lavapipe without a GPU): the same module, domain and workgroup, at the device's
    // default subgroup size; the interpreter again at that size, so the two run the same dispatch.
    let device = lockstep::vulkan::Context::new(None).ok().and_then(|ctx| {
        use lockstep::grayscott::gpu::{api_version, Plan, Variant};
        let plan = Plan::new(
            &ctx.caps,
            api_version(&ctx),
            Variant::Subgroup(Tiling::OneD),
            Some([WORKGROUP, 1]),
            None,
        )
        .map_err(|e| eprintln!("no device ceiling: {e}"))
        .ok()?;
        Some((ctx, plan))
    });
    let mut device_size = None;
    if let Some((ctx, plan)) = &device {
        use lockstep::grayscott::gpu::GpuSim;
        let ds = plan.subgroup;
        device_size = Some(ds);
        let dshape = Shape::new(Tiling::OneD, ds, WORKGROUP).expect("shape");
        let [dx, dy] = dshape.grid(domain);
        let mut dcfg = cfg.clone();
        dcfg.size = SubgroupSize::new(ds as u64).expect("size");
        dcfg.workgroups = [dx, dy, 1];
        let dlabel = format!("{cols}x{rows}/subgroup{ds}/workgroup{WORKGROUP}");
        let mut g = c.benchmark_group("interpreter");
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function(format!("gray-scott-subgroup-1d/{dlabel}"), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    std::hint::black_box(run_model(&k, dcfg.clone(), &bufs, None).expect("a run"));
                }
                let e = t.elapsed();
                note("interpreter at the device's size", e, iters, 0);
                e
            })
        });
        let mut sim = GpuSim::new(ctx, domain, params, plan.clone()).expect("device kernel");
        g.bench_function(format!("gray-scott-device/{dlabel}"), |b| {
            b.iter_custom(|iters| {
                let mut e = Duration::ZERO;
                for _ in 0..iters {
                    e += sim.advance_timed(1).expect("a device step");
                }
                note("device (same shader, no checks)", e, iters, 0);
                e
            })
        });
        g.finish();
    }
    c.final_summary();
    let times = TIMES.lock().unwrap();
    let best = |name: &str| {
        times
            .iter()
            .filter(|t| t.0 == name)
            .map(|t| t.1)
            .fold(f64::INFINITY, f64::min)
    };
    let ti = best("interpreter (SPIR-V, maximal)");
    let tm = best("hand-written model backend");
    println!("\n| {label} | seconds per step (best sample) | rate |");
    println!("| --- | --- | --- |");
    if ti.is_finite() && tm.is_finite() {
        println!(
            "| interpreter (SPIR-V, maximal) | {ti:.4} | {:.1} M lane-instructions/s ({lane_instructions} per step) |",
            lane_instructions as f64 / ti / 1e6
        );
        println!(
            "| hand-written model backend | {tm:.4} | {:.1} M cells/s |",
            domain.cells() as f64 / tm / 1e6
        );
        println!("| ratio (interpreter / backend) | {:.1}× | |", ti / tm);
    }
    // Issue 18: the race shadow costs at most 1.5× over a run without it.
    let toff = best("interpreter, race checks off");
    for (what, on, off) in [
        ("Gray-Scott", ti, toff),
        (
            "shared-memory reduction",
            best("reduction"),
            best("reduction, race checks off"),
        ),
        (
            "atomic histogram (workgroups share a buffer)",
            best("histogram"),
            best("histogram, race checks off"),
        ),
    ] {
        if !(on.is_finite() && off.is_finite()) {
            println!(
                "| {what}: race checks on / off | not measured in this run (filtered out) | |"
            );
            continue;
        }
        let x = on / off;
        println!(
            "| {what}: race checks on / off | {on:.4} / {off:.4} | {x:.2}× ({} the 1.5× bound) |",
            if x <= 1.5 { "within" } else { "OVER" }
        );
    }
    if let Some(ds) = device_size {
        let tis = best("interpreter at the device's size");
        let td = best("device (same shader, no checks)");
        println!(
            "| interpreter, subgroup {ds} (the device's) | {tis:.4} | |\n| device, subgroup {ds} (no checks) | {td:.6} | {:.1} M cells/s |\n| ratio (interpreter / device) | {:.1}× | |",
            domain.cells() as f64 / td / 1e6,
            tis / td
        );
    }
}

/// A workgroup tree reduction in shared memory (256 invocations, 8 levels with a barrier each):
/// the race shadow sees every access.
const REDUCTION: &str = "#version 450\n\
    layout(local_size_x = 256) in;\n\
    layout(binding = 0) buffer In { uint x[]; };\n\
    layout(binding = 1) buffer Out { uint y[]; };\n\
    shared uint s[256];\n\
    void main() {\n\
      uint i = gl_LocalInvocationID.x;\n\
      s[i] = x[gl_GlobalInvocationID.x];\n\
      barrier();\n\
      for (uint w = 128u; w > 0u; w >>= 1) {\n\
        if (i < w) { s[i] += s[i + w]; }\n\
        barrier();\n\
      }\n\
      if (i == 0u) { y[gl_WorkGroupID.x] = s[0]; }\n\
    }\n";

/// A histogram of 1,024 bins every workgroup adds to with atomics (race-free: atomics in each
/// other's scope), so the workgroups share buffer memory.
const HISTOGRAM: &str = "#version 450\n\
    layout(local_size_x = 256) in;\n\
    layout(binding = 0) buffer In { uint x[]; };\n\
    layout(binding = 1) buffer Out { uint y[]; };\n\
    void main() {\n\
      uint v = x[gl_GlobalInvocationID.x];\n\
      atomicAdd(y[(v * 2654435761u) % 1024u], 1u);\n\
    }\n";

const GROUPS: u32 = 1024;
const REDUCTION_INVOCATIONS: u64 = GROUPS as u64 * 256;

/// `src` over 1,024 workgroups of 256, `x` = 0, 1, 2, … and 1,024 words of `y`.
fn reduction(src: &str) -> (lockstep::spirv::Kernel, Vec<BufferInput>, RunConfig) {
    let m = lockstep::kernel::compile(
        src,
        lockstep::kernel::SourceLang::Glsl,
        &SourceOptions::default(),
    )
    .expect("compiling the kernel");
    let k = decode(&m.words, &DecodeOptions::default()).expect("decoding");
    let x: Vec<u8> = (0..GROUPS * 256).flat_map(|v| v.to_le_bytes()).collect();
    let bufs = vec![
        BufferInput {
            set: 0,
            binding: 0,
            bytes: x,
            ..Default::default()
        },
        BufferInput {
            set: 0,
            binding: 1,
            bytes: vec![0; 1024 * 4],
            ..Default::default()
        },
    ];
    let cfg = RunConfig::new(SubgroupSize::new(32).expect("size"), [GROUPS, 1, 1]);
    (k, bufs, cfg)
}

fn note(name: &str, e: Duration, iters: u64, _li: u64) {
    if iters > 0 {
        TIMES
            .lock()
            .unwrap()
            .push((name.to_string(), e.as_secs_f64() / iters as f64, iters));
    }
}
