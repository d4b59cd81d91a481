//! A subgroup-size sweep against the single-size runs it replaces (issue 21: "a sweep compiles and
//! decodes the module once, not once per size: its time is at most the sum of the single-size
//! runs"). The kernel is `examples/shuffle_xor_reduce.comp` over 16,384 values (256 workgroups of
//! 64), on the model at sizes 4, 8, 16, 32, 64 and 128:
//! - `singles`: what six `lockstep run --subgroup-size S --model-only` calls do — compile the GLSL,
//!   decode the module, run the model — once per size;
//! - `sweep`: what one `lockstep run --subgroup-size 4..128 --model-only` does — compile and decode
//!   once, then the six model runs.
//!
//! The ceiling is `singles`, measured in the same run; the table at the end gives the ratio.
//! `cargo bench --bench sweep`.

use criterion::Criterion;
use lockstep::kernel::run::{JobBuffer, KernelJob};
use lockstep::kernel::{load, BufferSpec, SourceOptions};
use lockstep::model::SubgroupSize;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

const SIZES: [u64; 6] = [4, 8, 16, 32, 64, 128];

static TIMES: Mutex<Vec<(&'static str, f64)>> = Mutex::new(Vec::new());

fn job(path: &Path) -> KernelJob {
    let module = load(path, &SourceOptions::default()).expect("compiling the kernel");
    let mut job = KernelJob::new(module);
    job.workgroups = [256, 1, 1];
    for (binding, spec) in [(0, "random:u32:16384:7"), (1, "zeros:u32:16384")] {
        let spec: BufferSpec = spec.parse().expect("a buffer spec");
        job.buffers
            .push(JobBuffer::new(0, binding, spec.build().expect("a buffer")));
    }
    job
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shuffle_xor_reduce.comp");
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    let mut g = c.benchmark_group("sweep");
    g.bench_function("singles", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                for s in SIZES {
                    let j = job(&path);
                    let size = SubgroupSize::new(s).unwrap();
                    let m = j.run_model(size, None).expect("the model runs");
                    assert!(m.run.buffers.len() == 2);
                }
            }
            let e = t.elapsed();
            TIMES
                .lock()
                .unwrap()
                .push(("singles", e.as_secs_f64() / iters as f64));
            e
        })
    });
    g.bench_function("sweep", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                let j = job(&path);
                let kernel = j.decode().expect("decodes");
                for s in SIZES {
                    let size = SubgroupSize::new(s).unwrap();
                    let m = j
                        .run_model_decoded(kernel.clone(), size, None)
                        .expect("the model runs");
                    assert!(m.run.buffers.len() == 2);
                }
            }
            let e = t.elapsed();
            TIMES
                .lock()
                .unwrap()
                .push(("sweep", e.as_secs_f64() / iters as f64));
            e
        })
    });
    g.finish();
    c.final_summary();
    let times = TIMES.lock().unwrap();
    let best = |name: &str| {
        times
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .fold(f64::INFINITY, f64::min)
    };
    let (singles, sweep) = (best("singles"), best("sweep"));
    println!("\nsubgroup sizes {SIZES:?}, 16,384 invocations each, best per-iteration time:");
    println!(
        "  six single-size runs (compile + decode + run each): {:.1} ms",
        singles * 1e3
    );
    println!(
        "  one sweep (compile + decode once, six runs):        {:.1} ms",
        sweep * 1e3
    );
    println!(
        "  sweep / sum of single runs: {:.3} ({})",
        sweep / singles,
        if sweep <= singles {
            "within the ceiling"
        } else {
            "OVER the ceiling"
        }
    );
}
