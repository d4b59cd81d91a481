//! `lockstep run KERNEL`: a user's compute shader on the model (the SPIR-V interpreter) and on a
//! Vulkan device, every buffer element compared or explained.

use crate::cli::{CliError, EXIT_MISMATCH};
use crate::kernel::run::{KernelError, KernelJob, Tolerance};
use crate::kernel::{write_npy, BindingSpec, BufferSpec, HostBuffer, SourceOptions, TargetEnv};
use crate::model::{LaneOrder, SubgroupSize};
use crate::reconverge::Mode;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `lockstep run`.
#[derive(Args, Debug)]
#[command(
    about = "Run your compute shader lane by lane on the model and on a device, and compare every buffer element"
)]
pub struct RunArgs {
    /// the kernel: .comp/.glsl (GLSL), .spv (SPIR-V), .spvasm (SPIR-V assembly) or .wgsl
    pub kernel: PathBuf,
    /// entry point (default: the module's only compute entry point, or main)
    #[arg(long)]
    pub entry: Option<String>,
    /// workgroup counts: X, X,Y or X,Y,Z
    #[arg(long, default_value = "1,1,1")]
    pub workgroups: String,
    /// a buffer: BINDING=SPEC or SET.BINDING=SPEC; SPEC is a .npy file, zeros:T:N, fill:T:N:V,
    /// series:T:N, random:T:N:SEED or values:T:V,V,… (repeatable)
    #[arg(long = "buffer", value_name = "BINDING=SPEC")]
    pub buffers: Vec<String>,
    /// the push constants, as a buffer SPEC
    #[arg(long)]
    pub push: Option<String>,
    /// a specialization constant ID=VALUE, typed as the module declares it (repeatable)
    #[arg(long = "spec", value_name = "ID=VALUE")]
    pub spec: Vec<String>,
    /// a preprocessor definition NAME or NAME=VALUE for GLSL (repeatable)
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// target environment for GLSL: vulkan1.1, vulkan1.2, vulkan1.3 (default: the lowest that compiles)
    #[arg(long)]
    pub target_env: Option<String>,
    /// subgroup size (default: the device's; 32 with --model-only)
    #[arg(long)]
    pub subgroup_size: Option<u64>,
    /// lane layout of the model: row-major, column-major, quads or an axis order like yzx
    #[arg(long, default_value = "row-major")]
    pub layout: String,
    /// reconvergence model: maximal, sucf or base (default: what the module declares)
    #[arg(long)]
    pub mode: Option<String>,
    /// run the model only (no device)
    #[arg(long, conflicts_with = "device")]
    pub model_only: bool,
    /// Vulkan device index (see `lockstep devices`)
    #[arg(long)]
    pub device: Option<usize>,
    /// write every buffer after the run as .npy files here (model-*.npy, device-*.npy)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// write the JSON report here (atomically)
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// lane-instructions one workgroup may execute on the model before the run stops
    #[arg(long, default_value_t = crate::spirv::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// where workgroups interact (atomics, message passing), also run the model under N − 1 other
    /// seeded orders of the workgroups (and of the lanes of each atomic), and report what differs:
    /// defined values another order changes become order-dependent, a wait that never ends in one
    /// of them is a finding
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub schedules: u32,
    /// relative tolerance for inexact floats (|d − m| ≤ atol + rtol · max(|d|, |m|))
    #[arg(long, default_value_t = Tolerance::default().rel)]
    pub rtol: f64,
    /// absolute tolerance for inexact floats
    #[arg(long, default_value_t = Tolerance::default().abs)]
    pub atol: f64,
    /// a data race whose two sides store the same value fails the run too (by default it is a
    /// warning: still a race by the spec, but every order leaves that value)
    #[arg(long)]
    pub strict: bool,
}

fn kernel_error(e: KernelError) -> CliError {
    match e {
        KernelError::Input(m) => CliError::usage(m),
        KernelError::Stopped(m) => CliError {
            code: EXIT_MISMATCH,
            message: m,
        },
        KernelError::Unsupported(m) => CliError::internal(format!("unsupported: {m}")),
        KernelError::Device(m) => CliError::internal(m),
    }
}

fn parse_workgroups(s: &str) -> Result<[u32; 3], CliError> {
    let parts: Vec<&str> = s.split([',', 'x']).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(CliError::usage(format!(
            "--workgroups {s}: give X, X,Y or X,Y,Z (each at least 1)"
        )));
    }
    let mut w = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        w[i] = p
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&x| x >= 1)
            .ok_or_else(|| {
                CliError::usage(format!(
                    "--workgroups {s}: '{p}' is not a count of at least 1"
                ))
            })?;
    }
    Ok(w)
}

/// Builds the job from the arguments (everything checked before any work).
pub fn job(a: &RunArgs) -> Result<(KernelJob, Tolerance), CliError> {
    let mut opts = SourceOptions {
        name: a
            .kernel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.kernel.display().to_string()),
        ..SourceOptions::default()
    };
    for d in &a.defines {
        opts.define(d).map_err(CliError::usage)?;
    }
    if let Some(t) = &a.target_env {
        opts.target_env = Some(t.parse::<TargetEnv>().map_err(CliError::usage)?);
    }
    let module = crate::kernel::load(&a.kernel, &opts).map_err(CliError::usage)?;
    let mut job = KernelJob::new(module);
    job.entry = a.entry.clone();
    job.workgroups = parse_workgroups(&a.workgroups)?;
    job.layout = a.layout.parse::<LaneOrder>().map_err(CliError::usage)?;
    job.mode = match &a.mode {
        Some(m) => Some(m.parse::<Mode>().map_err(CliError::usage)?),
        None => None,
    };
    job.max_steps = a.max_steps;
    job.schedules = a.schedules;
    for b in &a.buffers {
        let spec: BindingSpec = b
            .parse()
            .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
        if job
            .buffers
            .iter()
            .any(|(s, n, _)| *s == spec.set && *n == spec.binding)
        {
            return Err(CliError::usage(format!(
                "--buffer {b}: set {} binding {} is given twice",
                spec.set, spec.binding
            )));
        }
        let host = spec
            .spec
            .build()
            .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
        job.buffers.push((spec.set, spec.binding, host));
    }
    if let Some(p) = &a.push {
        let spec: BufferSpec = p
            .parse()
            .map_err(|e| CliError::usage(format!("--push {p}: {e}")))?;
        job.push = Some(
            spec.build()
                .map_err(|e| CliError::usage(format!("--push {p}: {e}")))?,
        );
    }
    for s in &a.spec {
        let (id, v) = s.split_once('=').ok_or_else(|| {
            CliError::usage(format!("--spec {s}: give ID=VALUE (e.g. --spec 0=64)"))
        })?;
        let id: u32 = id
            .trim()
            .parse()
            .map_err(|_| CliError::usage(format!("--spec {s}: '{id}' is not a SpecId")))?;
        job.spec.push((id, v.trim().to_string()));
    }
    if !(a.rtol >= 0.0 && a.atol >= 0.0) {
        return Err(CliError::usage("--rtol and --atol must be numbers ≥ 0"));
    }
    if let Some(s) = a.subgroup_size {
        SubgroupSize::new(s).map_err(CliError::usage)?;
    }
    // Decode once now, so that a bad module, entry point or --spec fails before any device work.
    job.decode().map_err(kernel_error)?;
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out)
            .map_err(|e| CliError::usage(format!("--out {}: {e}", out.display())))?;
        crate::files::check_writable(&out.join("model.npy")).map_err(CliError::usage)?;
    }
    if let Some(j) = &a.json {
        crate::files::check_writable(j).map_err(CliError::usage)?;
    }
    Ok((
        job,
        Tolerance {
            rel: a.rtol,
            abs: a.atol,
        },
    ))
}

/// Runs the command.
pub fn run(a: &RunArgs) -> Result<String, CliError> {
    let (job, tol) = job(a)?;
    // Decoding first: a module the interpreter cannot run is reported before any device work.
    let kernel = job.decode().map_err(kernel_error)?;
    #[cfg(not(feature = "vulkan"))]
    let _ = &kernel;
    // The device first (its subgroup size decides the model's), unless model-only.
    #[cfg(feature = "vulkan")]
    let (device_bytes, size, device_name) = if a.model_only {
        (None, a.subgroup_size.unwrap_or(32), None)
    } else {
        let ctx = crate::vulkan::Context::new(a.device).map_err(crate::cli::devices::vk_error)?;
        let size = a.subgroup_size.unwrap_or(ctx.caps.subgroup_size as u64);
        match job.run_device(&ctx, &kernel, size as u32) {
            Ok(b) => (Some(b), size, Some(ctx.info.name.clone())),
            Err(KernelError::Unsupported(m)) => {
                return Err(CliError::internal(format!(
                    "unsupported on {}: {m} (run with --model-only for the model alone)",
                    ctx.info.name
                )))
            }
            Err(e) => return Err(kernel_error(e)),
        }
    };
    #[cfg(not(feature = "vulkan"))]
    let (device_bytes, size, device_name): (Option<Vec<Vec<u8>>>, u64, Option<String>) = {
        if !a.model_only {
            return Err(CliError::no_device(
                "this build has no Vulkan backend (built without the `vulkan` feature): run with --model-only",
            ));
        }
        (None, a.subgroup_size.unwrap_or(32), None)
    };
    let size = SubgroupSize::new(size).map_err(CliError::usage)?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("model {bar:30} {pos}/{len} workgroups {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = std::time::Instant::now();
    let progress = |done: u64, total: u64| {
        if started.elapsed().as_millis() > 500 {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let model = job.run_model(size, Some(&progress)).map_err(kernel_error)?;
    bar.finish_and_clear();
    let mut report = job.compare(&model, device_bytes.as_deref(), tol);
    report.strict = a.strict;
    if let Some(dir) = &a.out {
        for (i, (set, binding, host)) in job.buffers.iter().enumerate() {
            let name = if *set == 0 {
                format!("{binding}")
            } else {
                format!("{set}.{binding}")
            };
            if let Some(b) = model
                .run
                .buffers
                .iter()
                .find(|b| b.set == *set && b.binding == *binding)
            {
                let h = HostBuffer::new(host.dtype, host.shape.clone(), b.bytes.clone())
                    .map_err(CliError::internal)?;
                write_npy(&dir.join(format!("model-{name}.npy")), &h)
                    .map_err(CliError::internal)?;
            }
            if let Some(d) = device_bytes.as_ref().and_then(|d| d.get(i)) {
                let h = HostBuffer::new(host.dtype, host.shape.clone(), d.clone())
                    .map_err(CliError::internal)?;
                write_npy(&dir.join(format!("device-{name}.npy")), &h)
                    .map_err(CliError::internal)?;
            }
        }
    }
    if let Some(j) = &a.json {
        let mut v = report.json();
        v["device_name"] = serde_json::json!(device_name);
        crate::files::write_atomic(j, &serde_json::to_string_pretty(&v).unwrap_or_default())
            .map_err(CliError::internal)?;
    }
    let mut text = String::new();
    if let Some(n) = &device_name {
        text += &format!("device: {n}\n");
    }
    text += &report.text();
    if report.ok() {
        Ok(text)
    } else {
        // The report on stdout, as for a clean run; the verdict on stderr.
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        Err(CliError {
            code: EXIT_MISMATCH,
            message: "error: the run is not clean: see the findings above (exit 1)".into(),
        })
    }
}
