//! `lockstep grayscott`: run the Gray-Scott simulation on one backend, write pictures of V and the
//! final fields, print the throughput; optionally check it against the reference as it goes.
//!
//! Every input is checked before any work (domain, counts, parameters, variant, sizes, the device's
//! support, the output directory), each failure naming its rule.

use crate::cli::{CliError, EXIT_MISMATCH};
use crate::grayscott::layout::{Shape, Tile, Tiling};
use crate::grayscott::model::ModelSim;
use crate::grayscott::model_tile::TileSim;
use crate::grayscott::output;
use crate::grayscott::reference::Reference;
use crate::grayscott::{
    Difference, Domain, GrayScottError, Params, Simulation, AGREEMENT_MAX_STEPS,
    AGREEMENT_TOLERANCE, DEFAULT_COLS, DEFAULT_DT, DEFAULT_FEED, DEFAULT_IMAGES, DEFAULT_KILL,
    DEFAULT_ROWS, DEFAULT_STEPS_PER_IMAGE,
};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Which backend computes the simulation.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The CPU reference (f32, rayon).
    Reference,
    /// The course's subgroup kernel run lane by lane on lockstep's model (proves no undefined value
    /// reaches an output).
    Model,
    /// The GLSL kernels on a Vulkan device.
    Gpu,
}

/// Arguments of `lockstep grayscott`.
#[derive(clap::Args, Debug, Clone)]
pub struct GrayScottArgs {
    /// Backend.
    #[arg(long, value_enum, default_value = "reference")]
    pub backend: Backend,
    /// Kernel variant. gpu: naive, subgroup-1d, subgroup-stacked (default), subgroup-shared,
    /// subgroup-stacked-uv (U and V interleaved), subgroup-tile-t{T}-r{R} (each lane keeps R rows
    /// of a column in registers and advances them T steps per pass; subgroup-tile = t2-r16).
    /// model: subgroup-1d (default), subgroup-stacked (and subgroup-stacked-uv, the same kernel),
    /// subgroup-shared, subgroup-tile-t{T}-r{R}, and the deliberately broken broken-no-border,
    /// broken-stacked-overread, broken-overlap and broken-gap. Not for the reference.
    #[arg(long)]
    pub variant: Option<String>,
    /// Rows of the domain.
    #[arg(long, default_value_t = DEFAULT_ROWS)]
    pub rows: usize,
    /// Columns of the domain.
    #[arg(long, default_value_t = DEFAULT_COLS)]
    pub cols: usize,
    /// Simulation steps per image.
    #[arg(long, default_value_t = DEFAULT_STEPS_PER_IMAGE)]
    pub steps: u32,
    /// Number of images (the run is steps × images steps long).
    #[arg(long, default_value_t = DEFAULT_IMAGES)]
    pub images: u32,
    /// Feed rate F, in 0..=1.
    #[arg(long, default_value_t = DEFAULT_FEED, allow_negative_numbers = true)]
    pub feed: f32,
    /// Kill rate k, in 0..=1.
    #[arg(long, default_value_t = DEFAULT_KILL, allow_negative_numbers = true)]
    pub kill: f32,
    /// Time step, in (0, 10].
    #[arg(long, default_value_t = DEFAULT_DT, allow_negative_numbers = true)]
    pub dt: f32,
    /// Workgroup size: W for the subgroup variants and the model (a multiple of the subgroup size;
    /// default 128), WxH for naive (default 16x16).
    #[arg(long)]
    pub workgroup_size: Option<String>,
    /// Subgroup size: model any power of two in 4..=128 (default 32); gpu one the device supports
    /// (other than its default only with subgroup size control).
    #[arg(long)]
    pub subgroup_size: Option<u32>,
    /// Output directory: v-0000.png, v-0001.png, … (one per image), u-final.npy, v-final.npy.
    #[arg(long, default_value = "grayscott-out")]
    pub output: PathBuf,
    /// Write no file (timing runs).
    #[arg(long)]
    pub no_output: bool,
    /// Also run the reference and compare after every image; exit 1 if U or V differ by more than
    /// the agreement tolerance (runs of at most 500 steps).
    #[arg(long)]
    pub check: bool,
    /// Vulkan device index (see `lockstep devices`); default: the preferred device.
    #[arg(long)]
    pub device: Option<usize>,
}

/// Everything `grayscott` was asked, checked (no device opened yet).
#[derive(Clone, Debug)]
pub struct Request {
    /// backend
    pub backend: Backend,
    /// domain
    pub domain: Domain,
    /// parameters
    pub params: Params,
    /// steps per image
    pub steps: u32,
    /// images
    pub images: u32,
    /// model shape (model backend)
    pub shape: Option<Shape>,
    /// the tile kernel's parameters (model backend, `subgroup-tile…`; `shape` gives its sizes)
    pub tile: Option<Tile>,
    /// gpu variant, workgroup and subgroup size (gpu backend)
    #[cfg(feature = "vulkan")]
    pub gpu: Option<(
        crate::grayscott::gpu::Variant,
        Option<[u32; 2]>,
        Option<u32>,
    )>,
    /// output directory, if files are written
    pub output: Option<PathBuf>,
    /// compare with the reference
    pub check: bool,
    /// device index
    #[cfg_attr(not(feature = "vulkan"), allow(dead_code))]
    pub device: Option<usize>,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::usage(e)
}

/// Parses `W` or `WxH` (`x` or `×`).
fn parse_workgroup(text: &str) -> Result<[u32; 2], CliError> {
    let bad = || {
        usage(format!(
            "--workgroup-size '{text}' is invalid: give W or WxH with positive integers (e.g. 128 or 16x16)"
        ))
    };
    let parts: Vec<&str> = text.split(['x', 'X', '×']).collect();
    let nums: Vec<u32> = parts
        .iter()
        .map(|p| p.trim().parse::<u32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match nums.as_slice() {
        [w] if *w > 0 => Ok([*w, 1]),
        [w, h] if *w > 0 && *h > 0 => Ok([*w, *h]),
        _ => Err(bad()),
    }
}

fn not_for(flag: &str, backend: &str) -> CliError {
    usage(format!("{flag} does not apply to the {backend} backend"))
}

/// Checks everything that can be checked without a device.
pub fn parse(a: &GrayScottArgs) -> Result<Request, CliError> {
    let domain = Domain::new(a.rows, a.cols).map_err(usage)?;
    if a.steps == 0 {
        return Err(usage("--steps 0 is invalid: at least one step per image"));
    }
    if a.images == 0 {
        return Err(usage("--images 0 is invalid: at least one image"));
    }
    let params = Params::new(a.feed, a.kill, a.dt).map_err(usage)?;
    let total = a.steps as u64 * a.images as u64;
    if a.check && a.backend == Backend::Reference {
        return Err(usage(
            "--check compares a backend with the reference: use it with --backend model or gpu",
        ));
    }
    if a.check && total > AGREEMENT_MAX_STEPS {
        return Err(usage(format!(
            "--check with {total} steps is invalid: the agreement tolerance holds for at most \
             {AGREEMENT_MAX_STEPS} steps (beyond, the dynamics amplify rounding differences); \
             lower --steps × --images"
        )));
    }
    let workgroup = a
        .workgroup_size
        .as_deref()
        .map(parse_workgroup)
        .transpose()?;
    let mut req = Request {
        backend: a.backend,
        domain,
        params,
        steps: a.steps,
        images: a.images,
        shape: None,
        tile: None,
        #[cfg(feature = "vulkan")]
        gpu: None,
        output: (!a.no_output).then(|| a.output.clone()),
        check: a.check,
        device: a.device,
    };
    match a.backend {
        Backend::Reference => {
            for (given, flag) in [
                (a.variant.is_some(), "--variant"),
                (a.workgroup_size.is_some(), "--workgroup-size"),
                (a.subgroup_size.is_some(), "--subgroup-size"),
                (a.device.is_some(), "--device"),
            ] {
                if given {
                    return Err(not_for(flag, "reference"));
                }
            }
        }
        Backend::Model => {
            if a.device.is_some() {
                return Err(not_for("--device", "model"));
            }
            let tile = a.variant.as_deref().and_then(Tile::parse);
            let layout = match a.variant.as_deref() {
                None => Tiling::OneD,
                // The interleaved kernel is the stacked kernel on other storage: the same proof.
                Some("subgroup-stacked-uv") => Tiling::Stacked,
                Some(_) if tile.is_some() => Tiling::Stacked,
                Some(v) => Tiling::parse(v).ok_or_else(|| {
                    let names: Vec<&str> = Tiling::ALL.iter().map(|l| l.name()).collect();
                    usage(format!(
                        "unknown model variant '{v}': use one of {}, subgroup-stacked-uv, or \
                         subgroup-tile-t{{T}}-r{{R}}",
                        names.join(", ")
                    ))
                })?,
            };
            let wg = workgroup.unwrap_or([128, 1]);
            if wg[1] != 1 {
                return Err(usage(format!(
                    "--workgroup-size {}x{} is invalid for the model: the subgroup kernels use 1D workgroups",
                    wg[0], wg[1]
                )));
            }
            let s = a.subgroup_size.unwrap_or(32);
            req.shape = Some(Shape::new(layout, s, wg[0]).map_err(usage)?);
            if let Some(t) = tile {
                t.check(s).map_err(usage)?;
                req.tile = Some(t);
            }
        }
        Backend::Gpu => {
            #[cfg(feature = "vulkan")]
            {
                use crate::grayscott::gpu::Variant;
                let variant = match a.variant.as_deref() {
                    None => Variant::Subgroup(Tiling::Stacked),
                    Some(v) => Variant::parse(v).ok_or_else(|| {
                        let names: Vec<&str> = Variant::ALL.iter().map(|l| l.name()).collect();
                        usage(format!(
                            "unknown gpu variant '{v}': use one of {}, or subgroup-tile-t{{T}}-r{{R}}",
                            names.join(", ")
                        ))
                    })?,
                };
                req.gpu = Some((variant, workgroup, a.subgroup_size));
            }
            #[cfg(not(feature = "vulkan"))]
            return Err(usage(
                "the gpu backend needs lockstep built with the `vulkan` feature",
            ));
        }
    }
    check_memory(&req)?;
    if let Some(dir) = &req.output {
        output::check_writable(dir).map_err(|e| {
            usage(format!(
                "--output: {e} (the output directory must be writable)"
            ))
        })?;
    }
    Ok(req)
}

/// Host memory a run needs, roughly: f32 bytes per padded cell for the backend's grids, plus the
/// two unpadded fields read back per image (and the reference's grids with `--check`).
fn host_bytes(req: &Request) -> u64 {
    let padded = req.domain.padded_rows() as u64 * req.domain.padded_cols() as u64;
    let reference = 4 * 4 * padded; // two pairs of padded U, V
    let per_image = 2 * 4 * req.domain.cells() as u64 + 3 * req.domain.cells() as u64; // fields + RGB
    let backend = match req.backend {
        Backend::Reference => reference,
        Backend::Model => reference + req.domain.cells() as u64, // + write stamps (1 byte a cell)
        Backend::Gpu => 2 * 4 * padded,                          // upload / download staging
    };
    backend + per_image + if req.check { reference + per_image } else { 0 }
}

/// MemAvailable from /proc/meminfo, if the system has one.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses a domain that cannot fit in memory (rather than aborting in the middle of a run).
fn check_memory(req: &Request) -> Result<(), CliError> {
    let need = host_bytes(req);
    match available_memory() {
        Some(have) if need > have => Err(usage(format!(
            "--rows {} × --cols {} needs about {:.1} GiB of memory for this run; {:.1} GiB are available",
            req.domain.rows(),
            req.domain.cols(),
            need as f64 / (1u64 << 30) as f64,
            have as f64 / (1u64 << 30) as f64
        ))),
        _ => Ok(()),
    }
}

fn sim_error(e: GrayScottError) -> CliError {
    match e {
        GrayScottError::UndefinedReachedCell { .. } | GrayScottError::Layout { .. } => CliError {
            code: EXIT_MISMATCH,
            message: e.to_string(),
        },
        #[cfg(feature = "vulkan")]
        GrayScottError::Vulkan(v) => crate::cli::devices::vk_error(v),
        GrayScottError::Domain { .. }
        | GrayScottError::Param { .. }
        | GrayScottError::Config(_)
        | GrayScottError::Requirement { .. } => usage(e),
    }
}

fn out_error(e: output::OutputError) -> CliError {
    CliError::internal(e)
}

/// What a finished run reports.
struct Report {
    describe: String,
    sim_time: Duration,
    device_time: Option<Duration>,
    worst: Option<Difference>,
}

fn drive(req: &Request, sim: &mut dyn Simulation) -> Result<Report, CliError> {
    let bar = indicatif::ProgressBar::new(req.images as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} images (eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut reference = req.check.then(|| Reference::new(req.domain, req.params));
    let mut worst: Option<Difference> = None;
    let mut sim_time = Duration::ZERO;
    for i in 0..req.images {
        let t = Instant::now();
        sim.advance(req.steps).map_err(sim_error)?;
        sim_time += t.elapsed();
        if req.output.is_none() && reference.is_none() {
            bar.inc(1);
            continue;
        }
        let f = sim.fields().map_err(sim_error)?;
        if let Some(dir) = &req.output {
            output::write_v_png(dir, i, &f.v).map_err(out_error)?;
        }
        if let Some(r) = reference.as_mut() {
            r.advance(req.steps).map_err(sim_error)?;
            let d = f.max_abs_diff(&r.fields().map_err(sim_error)?);
            if worst.is_none_or(|w| d.value > w.value || d.value.is_nan()) {
                worst = Some(d);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(dir) = &req.output {
        let f = sim.fields().map_err(sim_error)?;
        output::write_final(dir, &f.u, &f.v).map_err(out_error)?;
    }
    Ok(Report {
        describe: sim.describe(),
        sim_time,
        device_time: None,
        worst,
    })
}

/// Runs `lockstep grayscott`.
pub fn run(a: &GrayScottArgs) -> Result<String, CliError> {
    let req = parse(a)?;
    let report = match req.backend {
        Backend::Reference => drive(&req, &mut Reference::new(req.domain, req.params))?,
        Backend::Model => {
            let shape = req
                .shape
                .ok_or_else(|| CliError::internal("model shape missing"))?;
            match req.tile {
                Some(t) => {
                    let mut sim =
                        TileSim::new(req.domain, req.params, shape.subgroup, shape.workgroup, t)
                            .map_err(sim_error)?;
                    drive(&req, &mut sim)?
                }
                None => {
                    let mut sim =
                        ModelSim::new(req.domain, req.params, shape).map_err(sim_error)?;
                    drive(&req, &mut sim)?
                }
            }
        }
        Backend::Gpu => run_gpu(&req)?,
    };
    summary(&req, &report)
}

#[cfg(feature = "vulkan")]
fn run_gpu(req: &Request) -> Result<Report, CliError> {
    use crate::grayscott::gpu::{api_version, GpuSim, Plan};
    let (variant, wg, sg) = req
        .gpu
        .ok_or_else(|| CliError::internal("gpu variant missing"))?;
    let ctx = crate::vulkan::Context::new(req.device).map_err(crate::cli::devices::vk_error)?;
    let plan = Plan::new(&ctx.caps, api_version(&ctx), variant, wg, sg).map_err(sim_error)?;
    let mut sim = GpuSim::new(&ctx, req.domain, req.params, plan).map_err(sim_error)?;
    let mut report = drive(req, &mut sim)?;
    report.device_time = Some(sim.device_time());
    Ok(report)
}

#[cfg(not(feature = "vulkan"))]
fn run_gpu(_: &Request) -> Result<Report, CliError> {
    Err(usage(
        "the gpu backend needs lockstep built with the `vulkan` feature",
    ))
}

fn summary(req: &Request, r: &Report) -> Result<String, CliError> {
    let total = req.steps as u64 * req.images as u64;
    let elems = req.domain.cells() as f64 * total as f64;
    let rate = |d: Duration| elems / d.as_secs_f64().max(1e-12) / 1e9;
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "{}", r.describe);
    let _ = writeln!(
        w,
        "steps:      {} images × {} steps = {total} (F {}, k {}, dt {})",
        req.images, req.steps, req.params.feed, req.params.kill, req.params.dt
    );
    let _ = writeln!(
        w,
        "throughput: {:.4} Gelem/s ({} cells × {total} steps in {:.3} s of simulation, files excluded)",
        rate(r.sim_time),
        req.domain.cells(),
        r.sim_time.as_secs_f64()
    );
    if let Some(d) = r.device_time {
        let _ = writeln!(
            w,
            "device:     {:.4} Gelem/s (submission to completion only)",
            rate(d)
        );
    }
    if let Some(dir) = &req.output {
        let _ = writeln!(
            w,
            "output:     {}/v-0000.png … v-{:04}.png, u-final.npy, v-final.npy",
            dir.display(),
            req.images - 1
        );
    }
    if req.check {
        let worst = r.worst.unwrap_or_default();
        let ok = worst.value <= AGREEMENT_TOLERANCE;
        let _ = writeln!(
            w,
            "check:      max |Δ| vs reference = {worst} over {total} steps; tolerance {AGREEMENT_TOLERANCE:e}: {}",
            if ok { "agree" } else { "DIFFER" }
        );
        if !ok {
            return Err(CliError {
                code: EXIT_MISMATCH,
                message: format!(
                    "{s}the {} backend differs from the reference by {worst}, more than the tolerance {AGREEMENT_TOLERANCE:e}",
                    match req.backend {
                        Backend::Reference => "reference",
                        Backend::Model => "model",
                        Backend::Gpu => "gpu",
                    }
                ),
            });
        }
    }
    Ok(s)
}
