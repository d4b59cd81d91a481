//! Speed of the reconvergence executor (programs/s and lane-steps/s) and of the generator + device
//! loop (programs/s on the default Vulkan device — lavapipe without a GPU).
//!
//! `cargo bench --bench reconverge`; `cargo bench --bench reconverge -- executor` for the executor
//! alone.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockstep::model::{LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use lockstep::reconverge::gen::{programs, GenConfig};
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

#[cfg(feature = "vulkan")]
fn device_loop(c: &mut Criterion) {
    use lockstep::reconverge::device::{run_programs, unsupported, Setup};
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
    let setup = Setup::for_device(&ctx, mode);
    let s = programs(GenConfig::default());
    let mut runner = TestRunner::deterministic();
    let mut g = c.benchmark_group(format!("device loop ({}, base)", ctx.info.name));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    for batch in [1usize, 2, 8] {
        g.throughput(Throughput::Elements(batch as u64));
        g.bench_function(
            BenchmarkId::new("generate+glsl+compile+dispatch+compare", batch),
            |b| {
                b.iter(|| {
                    let ps: Vec<Program> = (0..batch)
                        .map(|_| s.new_tree(&mut runner).expect("generator").current())
                        .collect();
                    let comps = run_programs(&ctx, &setup, &ps).expect("device");
                    assert!(
                        comps.iter().all(|c| c.ok()),
                        "a mismatch while benchmarking"
                    );
                    black_box(comps)
                })
            },
        );
    }
    g.finish();
}

#[cfg(not(feature = "vulkan"))]
fn device_loop(_c: &mut Criterion) {}

criterion_group!(benches, executor, generator, device_loop);
criterion_main!(benches);
