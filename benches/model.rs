//! Lane-results per second of the reference model: one op of each category, u32 and f32, at sizes
//! 8, 32 and 128, over batches of 2^20 subgroups (all lanes active), beside a parallel copy of the
//! same bytes measured in the same run (the memory ceiling for an op that reads and writes one value
//! per lane).
//!
//! Run: `cargo bench --bench model` (filter e.g. `cargo bench --bench model -- /32/`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockstep::model::*;
use rayon::prelude::*;
use std::time::Duration;

/// 2^20 subgroups under `cargo bench`; a small batch when `cargo test --all-targets` runs the
/// benchmarks once as a smoke test (criterion's test mode, debug build).
fn subgroups() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        1 << 20
    } else {
        1 << 8
    }
}

fn args(op: &str) -> Args {
    let u = |x| Some(LaneArg::Uniform(x));
    match op {
        "broadcast" => Args {
            id: u(1),
            ..Args::default()
        },
        "shuffle_xor" => Args {
            mask: u(1),
            ..Args::default()
        },
        "shuffle_down" | "rotate" => Args {
            delta: u(1),
            ..Args::default()
        },
        "clustered_add" => Args {
            cluster: Some(4),
            ..Args::default()
        },
        _ => Args::default(),
    }
}

// One op per category: basic, vote, ballot (broadcast moves values; ballot builds ballots),
// arithmetic, shuffle, shuffle relative, clustered, quad, rotate.
const OPS: [&str; 10] = [
    "elect",
    "all_equal",
    "broadcast",
    "ballot",
    "inclusive_add",
    "shuffle_xor",
    "shuffle_down",
    "clustered_add",
    "quad_swap_horizontal",
    "rotate",
];

fn bench_type<S: Scalar, const N: usize>(c: &mut Criterion, ty: &str, make: fn(usize) -> S) {
    for n in [8u64, 32, 128] {
        let size = SubgroupSize::new(n).unwrap();
        let lanes = subgroups() * size.lanes();
        let input: Vec<[S; N]> = (0..lanes).map(|i| [make(i); N]).collect();
        let bools: Vec<[bool; 1]> = (0..lanes).map(|i| [i % 3 == 0]).collect();
        let actives = vec![size.full_mask(); subgroups()];
        let mut g = c.benchmark_group(format!("model/{ty}/{n}"));
        g.throughput(Throughput::Elements(lanes as u64));
        g.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        // The ceiling: copy the same bytes (read one value per lane, write one), in parallel.
        let mut copy_out = vec![[S::from_bits(0); N]; lanes];
        g.bench_function(BenchmarkId::from_parameter("copy"), |b| {
            b.iter(|| {
                copy_out
                    .par_chunks_mut(1 << 16)
                    .zip(input.par_chunks(1 << 16))
                    .for_each(|(o, i)| o.copy_from_slice(i));
            })
        });
        drop(copy_out);
        for op in OPS {
            let info = lookup(op).unwrap();
            let call = OpCall::new(info, size, args(op)).unwrap();
            let mut out = BatchOutput::<[S; N]>::for_call(&call, subgroups());
            // Bool-valued ops (ballot) take bool lanes; their output is allocated once, outside the timing.
            let mut bool_out = BatchOutput::<[bool; 1]>::for_call(
                &call,
                if info.types == TypeClass::Bool {
                    subgroups()
                } else {
                    0
                },
            );
            g.bench_function(BenchmarkId::from_parameter(op), |b| {
                b.iter(|| {
                    if info.types == TypeClass::Bool {
                        evaluate_batch(&call, &actives, &bools, &mut bool_out).unwrap();
                    } else if info.has_value() {
                        evaluate_batch(&call, &actives, &input, &mut out).unwrap();
                    } else {
                        evaluate_batch(&call, &actives, &[], &mut out).unwrap();
                    }
                })
            });
        }
        g.finish();
    }
}

fn benches(c: &mut Criterion) {
    bench_type::<u32, 1>(c, "u32", |i| i as u32);
    bench_type::<f32, 1>(c, "f32", |i| (i % 1000) as f32 * 0.5);
}

criterion_group!(model, benches);
criterion_main!(model);
