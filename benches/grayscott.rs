//! Gray-Scott throughput in elements (cells × steps) per second, named like the course:
//! `run_simulation/workgroup{W}[/subgroup{S}]/domain{cols}x{rows}/total{steps}/{backend-variant}`,
//! with the memory ceilings measured in the same run (`ceiling/domain…/total…/{what}`): CPU copies
//! (glibc memcpy per thread, chunked, one thread) and GPU compute-shader copies of U and V (scalar,
//! vec4, several vec4s in flight, grid-stride, planar and interleaved), all counted at 16 bytes per
//! cell per step. The ceiling of a kind (CPU or GPU) is the fastest copy of that kind in the same
//! run. A table of medians, each with its fraction of that ceiling, is printed at the end.
//!
//! `cargo bench --bench grayscott` runs everything at the defaults; select with a criterion filter
//! (`cargo bench --bench grayscott -- gpu-subgroup`) and with these variables:
//!
//! | variable | default | meaning |
//! | --- | --- | --- |
//! | `GRAYSCOTT_DOMAINS` | `2048x2048` (`67x61` in test mode) | domains as `COLSxROWS`, comma-separated |
//! | `GRAYSCOTT_STEPS` | `10` | steps per iteration (`total{steps}`), CPU ceiling, reference, gpu |
//! | `GRAYSCOTT_MODEL_STEPS` | `2` | steps per iteration of the model backend |
//! | `GRAYSCOTT_BACKENDS` | `ceiling,reference,model,gpu` | which to run (`cpu-ceiling`, `gpu-ceiling` for one ceiling) |
//! | `GRAYSCOTT_VARIANTS` | all six | gpu variants; `subgroup-tile` sweeps the two lists below, `subgroup-tile-t{T}-r{R}` is one |
//! | `GRAYSCOTT_TILE_STEPS` | `1,2,3,4` (`1,2` in test mode) | steps per pass `T` of the tile kernel |
//! | `GRAYSCOTT_TILE_ROWS` | `16,32` (`8` in test mode) | rows per lane `R` of the tile kernel |
//! | `GRAYSCOTT_COPIES` | every `CopyKind::DEFAULTS` | gpu copy kernels measured as ceilings (`gpu-copy`, `gpu-copy-vec4-x4`, `gpu-copy-uv-grid2048`, …) |
//! | `GRAYSCOTT_WORKGROUPS` | `64,128,256,512,1024` | 1D workgroup sizes (subgroup variants) |
//! | `GRAYSCOTT_EXTRA` | none | more subgroup variants with their own workgroup sizes: `variant@W1,W2;variant@W` |
//! | `GRAYSCOTT_NAIVE_WORKGROUPS` | `8x8,16x8,16x16,32x16,32x32` | 2D workgroups of naive |
//! | `GRAYSCOTT_SUBGROUPS` | every size the device can require | gpu subgroup sizes |
//! | `GRAYSCOTT_MODEL_SUBGROUPS` | `8,32` | model subgroup sizes (workgroup 128) |
//! | `GRAYSCOTT_DEVICE` | preferred | Vulkan device index |

use criterion::{Criterion, SamplingMode, Throughput};
use lockstep::grayscott::layout::{Shape, Tiling};
use lockstep::grayscott::model::ModelSim;
use lockstep::grayscott::reference::Reference;
use lockstep::grayscott::{Domain, Params, Simulation};
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every measurement: (full id, kind, domain label, elements per second of each sample).
struct Record {
    id: String,
    kind: Kind,
    domain: String,
    rates: Vec<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "vulkan"), allow(dead_code))]
enum Kind {
    CpuCeiling,
    GpuCeiling,
    Cpu,
    Gpu,
}

static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

/// The GPU's name and driver, for the table.
static GPU_NAME: Mutex<Option<String>> = Mutex::new(None);

fn record(id: &str, kind: Kind, domain: &str, elems: u64, iters: u64, t: Duration) {
    let rate = elems as f64 * iters as f64 / t.as_secs_f64().max(1e-12);
    if let Ok(mut r) = RECORDS.lock() {
        match r.iter_mut().find(|x| x.id == id) {
            Some(x) => x.rates.push(rate),
            None => r.push(Record {
                id: id.to_string(),
                kind,
                domain: domain.to_string(),
                rates: vec![rate],
            }),
        }
    }
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn env_num(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn pair(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('x')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// `COLSxROWS` → domain.
fn domains() -> Vec<Domain> {
    let default = if test_mode() { "67x61" } else { "2048x2048" };
    env_list("GRAYSCOTT_DOMAINS", default)
        .iter()
        .filter_map(|s| {
            let d = pair(s).and_then(|(c, r)| Domain::new(r as usize, c as usize).ok());
            if d.is_none() {
                eprintln!("GRAYSCOTT_DOMAINS: ignoring '{s}' (want COLSxROWS)");
            }
            d
        })
        .collect()
}

fn label(d: Domain) -> String {
    format!("domain{}x{}", d.cols(), d.rows())
}

/// Is `backend` selected? `ceiling` selects both ceilings; `cpu-ceiling` / `gpu-ceiling` one.
fn wants(backend: &str) -> bool {
    env_list("GRAYSCOTT_BACKENDS", "ceiling,reference,model,gpu")
        .iter()
        .any(|b| b == backend || (b == "ceiling" && backend.ends_with("-ceiling")))
}

/// `cargo test --benches` (and `cargo test --all-targets`) runs every benchmark once, without
/// `--bench`: then use a small domain unless one was asked for, to keep the test run short.
fn test_mode() -> bool {
    !std::env::args().any(|a| a == "--bench")
}

fn configure(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, elems: u64) {
    g.throughput(Throughput::Elements(elems));
    g.sampling_mode(SamplingMode::Flat);
}

/// The CPU ceiling: copying U and V (8 bytes per cell read, 8 written) once per "step", with one
/// large memcpy per thread (large enough for glibc's non-temporal path) and on one thread.
fn cpu_ceiling(c: &mut Criterion, d: Domain, steps: u32) {
    let n = 2 * d.cells();
    let mut a = vec![1.0f32; n];
    let mut b = vec![0.0f32; n];
    let elems = d.cells() as u64 * steps as u64;
    let group = format!("ceiling/{}/total{steps}", label(d));
    let mut g = c.benchmark_group(&group);
    configure(&mut g, elems);
    let threads = rayon::current_num_threads().max(1);
    let id = format!("{group}/cpu-memcpy");
    g.bench_function("cpu-memcpy", |bench| {
        bench.iter_custom(|iters| {
            let t = Instant::now();
            for i in 0..iters * steps as u64 {
                let (src, dst) = if i % 2 == 0 {
                    (&a, &mut b)
                } else {
                    (&b, &mut a)
                };
                let chunk = n.div_ceil(threads);
                dst.par_chunks_mut(chunk)
                    .zip(src.par_chunks(chunk))
                    .for_each(|(o, i)| o.copy_from_slice(i));
            }
            let e = t.elapsed();
            record(&id, Kind::CpuCeiling, &label(d), elems, iters, e);
            e
        })
    });
    // The same copy in 256 KiB pieces: regular stores rather than glibc's non-temporal path for
    // huge copies, which is about 2x slower on this machine — the higher figure is the bound.
    let id = format!("{group}/cpu-copy-chunked");
    g.bench_function("cpu-copy-chunked", |bench| {
        bench.iter_custom(|iters| {
            let t = Instant::now();
            for i in 0..iters * steps as u64 {
                let (src, dst) = if i % 2 == 0 {
                    (&a, &mut b)
                } else {
                    (&b, &mut a)
                };
                dst.par_chunks_mut(1 << 16)
                    .zip(src.par_chunks(1 << 16))
                    .for_each(|(o, i)| o.copy_from_slice(i));
            }
            let e = t.elapsed();
            record(&id, Kind::CpuCeiling, &label(d), elems, iters, e);
            e
        })
    });
    let id = format!("{group}/cpu-memcpy-1thread");
    g.bench_function("cpu-memcpy-1thread", |bench| {
        bench.iter_custom(|iters| {
            let t = Instant::now();
            for i in 0..iters * steps as u64 {
                if i % 2 == 0 {
                    b.copy_from_slice(&a)
                } else {
                    a.copy_from_slice(&b)
                }
            }
            let e = t.elapsed();
            record(&id, Kind::CpuCeiling, &label(d), elems, iters, e);
            e
        })
    });
    g.finish();
}

fn reference(c: &mut Criterion, d: Domain, steps: u32) {
    let elems = d.cells() as u64 * steps as u64;
    let group = format!("run_simulation/{}/total{steps}", label(d));
    let mut g = c.benchmark_group(&group);
    configure(&mut g, elems);
    let id = format!("{group}/reference");
    let mut sim = None;
    g.bench_function("reference", |bench| {
        let sim = sim.get_or_insert_with(|| Reference::new(d, Params::default()));
        bench.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                sim.advance(steps).expect("the reference cannot fail");
            }
            let e = t.elapsed();
            record(&id, Kind::Cpu, &label(d), elems, iters, e);
            e
        })
    });
    g.finish();
}

fn model(c: &mut Criterion, d: Domain) {
    let steps = env_num("GRAYSCOTT_MODEL_STEPS", 2);
    let elems = d.cells() as u64 * steps as u64;
    for s in env_list("GRAYSCOTT_MODEL_SUBGROUPS", "8,32") {
        let Ok(s) = s.parse::<u32>() else { continue };
        let group = format!(
            "run_simulation/workgroup128/subgroup{s}/{}/total{steps}",
            label(d)
        );
        let mut g = c.benchmark_group(&group);
        configure(&mut g, elems);
        for layout in Tiling::CORRECT {
            let Ok(shape) = Shape::new(layout, s, 128.max(s)) else {
                continue;
            };
            let name = format!("model-{}", layout.name());
            let id = format!("{group}/{name}");
            let mut sim = None;
            g.bench_function(&name, |bench| {
                let sim = sim.get_or_insert_with(|| {
                    ModelSim::new(d, Params::default(), shape).expect("valid shape")
                });
                bench.iter_custom(|iters| {
                    let t = Instant::now();
                    for _ in 0..iters {
                        sim.advance(steps).expect("the correct layouts are proven");
                    }
                    let e = t.elapsed();
                    record(&id, Kind::Cpu, &label(d), elems, iters, e);
                    e
                })
            });
        }
        g.finish();
    }
}

#[cfg(feature = "vulkan")]
fn gpu(c: &mut Criterion, domains: &[Domain], steps: u32) {
    use lockstep::grayscott::gpu::{
        api_version, CopyCeiling, CopyKind, GpuSim, Plan, Tile, Variant,
    };
    let index = std::env::var("GRAYSCOTT_DEVICE")
        .ok()
        .and_then(|s| s.parse().ok());
    let ctx = match lockstep::vulkan::Context::new(index) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("no GPU benchmarks: {e}");
            return;
        }
    };
    eprintln!(
        "device: {} ({}), subgroup size {} (selectable {:?})",
        ctx.info.name,
        ctx.info.driver,
        ctx.caps.subgroup_size,
        ctx.caps.selectable_sizes()
    );
    if let Ok(mut g) = GPU_NAME.lock() {
        *g = Some(format!(
            "{} ({}, Vulkan {}), subgroup size {}",
            ctx.info.name, ctx.info.driver, ctx.info.api_version, ctx.caps.subgroup_size
        ));
    }
    let (tile_steps, tile_rows) = if test_mode() {
        ("1,2", "8")
    } else {
        ("1,2,3,4", "16,32")
    };
    let nums = |name: &str, default: &str| -> Vec<u32> {
        env_list(name, default)
            .iter()
            .filter_map(|x| x.parse().ok())
            .collect()
    };
    let (tile_steps, tile_rows) = (
        nums("GRAYSCOTT_TILE_STEPS", tile_steps),
        nums("GRAYSCOTT_TILE_ROWS", tile_rows),
    );
    let mut variants: Vec<Variant> = Vec::new();
    for v in env_list(
        "GRAYSCOTT_VARIANTS",
        "naive,subgroup-1d,subgroup-stacked,subgroup-shared,subgroup-stacked-uv,subgroup-tile",
    ) {
        if v == "subgroup-tile" {
            for &rows in &tile_rows {
                for &steps in &tile_steps {
                    variants.push(Variant::Tile(Tile { steps, rows }));
                }
            }
        } else if let Some(v) = Variant::parse(&v) {
            variants.push(v);
        } else {
            eprintln!("GRAYSCOTT_VARIANTS: ignoring unknown variant '{v}'");
        }
    }
    let copies: Vec<CopyKind> = match std::env::var("GRAYSCOTT_COPIES") {
        Ok(list) => list
            .split(',')
            .filter_map(|x| {
                let k = CopyKind::parse(x.trim());
                if k.is_none() {
                    eprintln!("GRAYSCOTT_COPIES: ignoring unknown copy '{x}'");
                }
                k
            })
            .collect(),
        Err(_) => CopyKind::DEFAULTS.to_vec(),
    };
    let sizes: Vec<u32> = match std::env::var("GRAYSCOTT_SUBGROUPS") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => ctx.caps.selectable_sizes(),
    };
    for &d in domains {
        let elems = d.cells() as u64 * steps as u64;
        if wants("gpu-ceiling") {
            let group = format!("ceiling/{}/total{steps}", label(d));
            let mut g = c.benchmark_group(&group);
            configure(&mut g, elems);
            for kind in &copies {
                let name = kind.name();
                let id = format!("{group}/{name}");
                let mut copy = None;
                let mut failed = false;
                g.bench_function(&name, |bench| {
                    let copy = copy.get_or_insert_with(|| {
                        CopyCeiling::with_kind(&ctx, d, *kind).map_err(|e| e.to_string())
                    });
                    let copy = match copy {
                        Ok(c) => c,
                        Err(e) => {
                            if !failed {
                                eprintln!("skipped {name}: {e}");
                                failed = true;
                            }
                            return bench.iter_custom(|_| Duration::from_nanos(1));
                        }
                    };
                    bench.iter_custom(|iters| {
                        let mut e = Duration::ZERO;
                        for _ in 0..iters {
                            e += copy.run(steps).expect("copy");
                        }
                        record(&id, Kind::GpuCeiling, &label(d), elems, iters, e);
                        e
                    })
                });
            }
            g.finish();
        }
        if !wants("gpu") {
            continue;
        }
        let mut plans = Vec::new();
        for &v in &variants {
            match v {
                Variant::Naive => {
                    for w in env_list("GRAYSCOTT_NAIVE_WORKGROUPS", "8x8,16x8,16x16,32x16,32x32") {
                        let Some((x, y)) = pair(&w) else { continue };
                        plans.push(Plan::new(
                            &ctx.caps,
                            api_version(&ctx),
                            v,
                            Some([x, y]),
                            None,
                        ));
                    }
                }
                Variant::Subgroup(_) | Variant::StackedUv | Variant::Tile(_) => {
                    for w in env_list("GRAYSCOTT_WORKGROUPS", "64,128,256,512,1024") {
                        let Ok(w) = w.parse::<u32>() else { continue };
                        for &s in &sizes {
                            plans.push(Plan::new(
                                &ctx.caps,
                                api_version(&ctx),
                                v,
                                Some([w, 1]),
                                Some(s),
                            ));
                        }
                    }
                }
            }
        }
        for extra in std::env::var("GRAYSCOTT_EXTRA")
            .unwrap_or_default()
            .split(';')
            .filter(|x| !x.trim().is_empty())
        {
            let Some((v, wgs)) = extra.split_once('@') else {
                eprintln!("GRAYSCOTT_EXTRA: ignoring '{extra}' (want variant@W1,W2)");
                continue;
            };
            let Some(v) = Variant::parse(v.trim()) else {
                eprintln!("GRAYSCOTT_EXTRA: ignoring unknown variant '{v}'");
                continue;
            };
            for w in wgs.split(',').filter_map(|w| w.trim().parse::<u32>().ok()) {
                for &s in &sizes {
                    plans.push(Plan::new(
                        &ctx.caps,
                        api_version(&ctx),
                        v,
                        Some([w, 1]),
                        Some(s),
                    ));
                }
            }
        }
        for plan in plans {
            let plan = match plan {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("skipped: {e}");
                    continue;
                }
            };
            let group = format!(
                "run_simulation/{}/{}/total{steps}",
                plan.bench_label(),
                label(d)
            );
            let mut g = c.benchmark_group(&group);
            configure(&mut g, elems);
            let name = format!("gpu-{}", plan.variant.label());
            let id = format!("{group}/{name}");
            let mut sim = None;
            g.bench_function(&name, |bench| {
                let sim = sim.get_or_insert_with(|| {
                    GpuSim::new(&ctx, d, Params::default(), plan.clone()).expect("gpu kernel")
                });
                bench.iter_custom(|iters| {
                    let mut e = Duration::ZERO;
                    for _ in 0..iters {
                        e += sim.advance_timed(steps).expect("gpu run");
                    }
                    record(&id, Kind::Gpu, &label(d), elems, iters, e);
                    e
                })
            });
            g.finish();
        }
    }
}

#[cfg(not(feature = "vulkan"))]
fn gpu(_: &mut Criterion, _: &[Domain], _: u32) {
    eprintln!("no GPU benchmarks: built without the `vulkan` feature");
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// The table: every benchmark's median throughput, and its fraction of the ceiling of its kind
/// (CPU memcpy for the CPU backends, GPU copy for the GPU ones) on the same domain.
fn print_table() {
    let Ok(records) = RECORDS.lock() else { return };
    if records.is_empty() {
        return;
    }
    let ceiling = |kind: Kind, domain: &str| -> Option<f64> {
        records
            .iter()
            .filter(|r| r.kind == kind && r.domain == domain)
            .map(|r| median(&r.rates))
            .max_by(|a, b| a.total_cmp(b))
    };
    // Which copy is the ceiling, per kind and domain.
    let mut best: Vec<(Kind, &str, &str, f64)> = Vec::new();
    for r in records.iter() {
        if r.kind != Kind::CpuCeiling && r.kind != Kind::GpuCeiling {
            continue;
        }
        let m = median(&r.rates);
        match best.iter_mut().find(|b| b.0 == r.kind && b.1 == r.domain) {
            Some(b) if b.3 >= m => {}
            Some(b) => *b = (r.kind, &r.domain, &r.id, m),
            None => best.push((r.kind, &r.domain, &r.id, m)),
        }
    }
    println!();
    if records
        .iter()
        .any(|r| r.kind == Kind::Cpu || r.kind == Kind::CpuCeiling)
    {
        println!("CPU: {}", lockstep::grayscott::reference::cpu_description());
    }
    if let Some(dev) = GPU_NAME.lock().ok().and_then(|g| g.clone()) {
        println!("GPU: {dev}");
    }
    for (kind, domain, id, m) in &best {
        println!(
            "{} ceiling on {domain}: {id} ({:.3} Gelem/s), the fastest copy of this run",
            if *kind == Kind::CpuCeiling {
                "CPU"
            } else {
                "GPU"
            },
            m / 1e9
        );
    }
    // The reference's median per domain: the model's rows say how many times slower they are.
    let reference = |domain: &str| -> Option<f64> {
        records
            .iter()
            .find(|r| r.domain == domain && r.id.ends_with("/reference"))
            .map(|r| median(&r.rates))
    };
    println!(
        "\n| benchmark | Gelem/s (median) | GB/s at 16 B/elem | % of ceiling | reference / this |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    for r in records.iter() {
        let m = median(&r.rates);
        let of = match r.kind {
            Kind::Cpu => ceiling(Kind::CpuCeiling, &r.domain),
            Kind::Gpu => ceiling(Kind::GpuCeiling, &r.domain),
            Kind::CpuCeiling => ceiling(Kind::CpuCeiling, &r.domain),
            Kind::GpuCeiling => ceiling(Kind::GpuCeiling, &r.domain),
        };
        let pct = of
            .filter(|&c| c > 0.0)
            .map(|c| format!("{:.0}%", 100.0 * m / c))
            .unwrap_or_else(|| "-".into());
        let slower = match reference(&r.domain) {
            Some(x) if r.id.contains("/model-") && m > 0.0 => format!("{:.1}×", x / m),
            _ => String::new(),
        };
        println!(
            "| {} | {:.3} | {:.1} | {} | {} |",
            r.id,
            m / 1e9,
            m * 16.0 / 1e9,
            pct,
            slower
        );
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let steps = env_num("GRAYSCOTT_STEPS", 10);
    let domains = domains();
    for &d in &domains {
        if wants("cpu-ceiling") {
            cpu_ceiling(&mut c, d, steps);
        }
        if wants("reference") {
            reference(&mut c, d, steps);
        }
        if wants("model") {
            model(&mut c, d);
        }
    }
    if wants("gpu") || wants("gpu-ceiling") {
        gpu(&mut c, &domains, steps);
    }
    c.final_summary();
    if !test_mode() {
        print_table();
    }
}
