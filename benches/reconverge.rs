//! Speed of the reconvergence executor (programs/s and lane-steps/s) and of the generator + device
//! loop (programs/s on the default Vulkan device — lavapipe without a GPU — beside the device's own
//! build + dispatch rate for as many shaders, its ceiling).
//!
//! `cargo bench --bench reconverge`; `cargo bench --bench reconverge -- executor` for the executor
//! alone.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use lockstep::reconverge::r#gen::{programs, GenConfig};
use lockstep::reconverge::{execute, LaneMap, Mode, Program};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::hint::black_box;

fn sample(n: usize) -> Vec<Program> {
    let mut runner = TestRunner::deterministic();
    let s = programs(GenConfig::default());
    (0..n)
        .map(|_| s.new_tree(&mut runner).expect("generator").current())
        .collect()
}

fn map(invocations: u32, size: u64) -> LaneMap {
    let wg = WorkgroupLayout::new(
        WorkgroupShape::new(invocations, 1, 1).expect("shape"),
        SubgroupSize::new(size).expect("size"),
        LaneOrder::ROW_MAJOR,
    )
    .expect("layout");
    LaneMap::new(&wg)
}

fn executor(c: &mut Criterion) {
    let ps = sample(200);
    for (size, label) in [
        (32u64, "128 invocations, subgroups of 32"),
        (8, "128 invocations, subgroups of 8"),
    ] {
        let m = map(128, size);
        let steps: u64 = ps
            .iter()
            .map(|p| execute(p, &m, Mode::Maximal).expect("run").lane_steps)
            .sum();
        for mode in [Mode::Maximal, Mode::Base] {
            let mut g = c.benchmark_group(format!("executor/programs ({label})"));
            g.throughput(Throughput::Elements(ps.len() as u64));
            g.bench_function(BenchmarkId::from_parameter(mode), |b| {
                b.iter(|| {
                    for p in &ps {
                        black_box(execute(p, &m, mode).expect("run"));
                    }
                })
            });
            g.finish();
            let mut g = c.benchmark_group(format!("executor/lane-steps ({label})"));
            g.throughput(Throughput::Elements(steps));
            g.bench_function(BenchmarkId::from_parameter(mode), |b| {
                b.iter(|| {
                    for p in &ps {
                        black_box(execute(p, &m, mode).expect("run"));
                    }
                })
            });
            g.finish();
        }
    }
}

fn generator(c: &mut Criterion) {
    let s = programs(GenConfig::default());
    let mut runner = TestRunner::deterministic();
    let mut g = c.benchmark_group("generator");
    g.throughput(Throughput::Elements(1));
    g.bench_function("programs", |b| {
        b.iter(|| black_box(s.new_tree(&mut runner).expect("generator").current()))
    });
    g.finish();
}

/// The loop of `lockstep reconverge` on the default device — generate, GLSL, shaderc, pipeline,
/// dispatch, compare — with the CLI's defaults for the device (programs per shader, contexts, one
/// worker per core), beside its ceiling measured in the same run: the same number of fresh shaders
/// only built and dispatched by as many workers (no generating, no comparing). Programs differ
/// every iteration (a new seed), so no driver cache helps. `RECONVERGE_BATCHES=1,4,…` overrides
/// the programs per shader.
#[cfg(feature = "vulkan")]
fn device_loop(c: &mut Criterion) {
    use criterion::BatchSize;
    use lockstep::reconverge::campaign::{self, Device, Plan, Setup, ShrinkLimits, Source, Times};
    use lockstep::reconverge::device::{unsupported, Defaults, VulkanDevice};
    use lockstep::reconverge::r#gen::variant;
    use lockstep::vulkan::Context;
    use std::time::Duration;
    let ctx = match Context::new(None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("device loop not measured: {e}");
            return;
        }
    };
    let mode = Mode::Base;
    if let Some(why) = unsupported(&ctx.caps, mode) {
        eprintln!("device loop not measured: {why}");
        return;
    }
    let defaults = Defaults::for_device(&ctx);
    let name = ctx.info.name.clone();
    // Programs per shape (the CLI's --variants, 8 by default).
    let variants: usize = std::env::var("RECONVERGE_VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
        .max(1);
    let setup = Setup::for_device(&ctx, mode).with_parametric(variants > 1);
    let mut contexts = vec![ctx];
    for _ in 1..defaults.contexts {
        contexts.push(Context::new(None).expect("a second context"));
    }
    let device = VulkanDevice::new(&contexts, setup).expect("device");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let batches: Vec<usize> = std::env::var("RECONVERGE_BATCHES")
        .ok()
        .map(|v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![defaults.shapes * variants]);
    // Programs differ from one benchmark run to the next too, so that no on-disk shader cache
    // (Mesa's, NVIDIA's) serves them. Run as a test (`cargo test --all-targets`, no `--bench`),
    // the seed is fixed: a check in CI gives the same programs every time.
    let benching = std::env::args().any(|a| a == "--bench");
    let mut seed = if benching {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    } else {
        1
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        proptest::test_runner::Config::default(),
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &bytes,
        ),
    );
    let s = programs(GenConfig::default());
    let mut g = c.benchmark_group(format!(
        "device loop ({name}, base, {threads} threads, {} contexts, {variants} programs per shape)",
        defaults.contexts
    ));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    for batch in batches {
        // Enough programs for two batches per worker, and for their sizes to average out.
        let n = (batch * threads * 2).max(16).next_multiple_of(threads) as u64;
        g.throughput(Throughput::Elements(n));
        g.bench_function(BenchmarkId::new("campaign", batch), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                let plan = Plan {
                    source: Source::Random,
                    programs: n,
                    seed,
                    batch,
                    variants,
                    threads,
                    max_time: None,
                    shard: None,
                    shrink: ShrinkLimits::default(),
                };
                let r = campaign::run(&device, &setup, &plan, &mut |_| {}).expect("device");
                assert!(
                    r.passed(),
                    "a mismatch while benchmarking: `lockstep reconverge --seed {seed} --programs {n} --batch {batch} --variants {variants}` runs the same programs"
                );
                black_box(r)
            })
        });
        g.bench_function(BenchmarkId::new("ceiling (build+dispatch)", batch), |b| {
            b.iter_batched(
                || {
                    (0..threads)
                        .map(|_| {
                            let mut ps = Vec::new();
                            while ps.len() < n as usize / threads {
                                let p = s.new_tree(&mut runner).expect("generator").current();
                                for _ in 1..variants {
                                    ps.push(variant(&p, &mut runner).expect("variant"));
                                }
                                ps.push(p);
                            }
                            ps.truncate(n as usize / threads);
                            ps
                        })
                        .collect::<Vec<_>>()
                },
                |work| {
                    std::thread::scope(|sc| {
                        for (w, ps) in work.iter().enumerate() {
                            let device = &device;
                            sc.spawn(move || {
                                for chunk in ps.chunks(batch) {
                                    let mut t = Times::default();
                                    black_box(device.run(w, chunk, &mut t).expect("device"));
                                }
                            });
                        }
                    })
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

#[cfg(not(feature = "vulkan"))]
fn device_loop(_c: &mut Criterion) {}

criterion_group!(benches, executor, generator, device_loop);
criterion_main!(benches);
