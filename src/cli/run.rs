//! `lockstep run KERNEL`: a user's compute shader on the model (the SPIR-V interpreter) and on a
//! Vulkan device, every buffer element compared or explained.

use crate::cli::{CliError, EXIT_MISMATCH};
use crate::kernel::run::{FailPolicy, JobBuffer, KernelError, KernelJob, Tolerance};
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
    /// a buffer: BINDING=SPEC or SET.BINDING=SPEC (BINDING[K]=SPEC or SET.BINDING[K]=SPEC for
    /// element K of an array of descriptors), or NAME=SPEC for one with no descriptor that
    /// the kernel reaches through its device address (buffer references); SPEC is a .npy file,
    /// zeros:T:N, fill:T:N:V, series:T:N, random:T:N:SEED or values:T:V,V,…, where a value
    /// @NAME, @BINDING or @NAME+BYTES is that buffer's device address (u64; .lo/.hi halves in
    /// u32) (repeatable)
    #[arg(long = "buffer", value_name = "BINDING=SPEC")]
    pub buffers: Vec<String>,
    /// a sampler: BINDING=STATE or SET.BINDING=STATE, for a `sampler` or an image read through
    /// its own (`sampler2D`: its texels are the --buffer at the same binding); STATE is
    /// comma-separated: nearest|linear, an address mode (repeat, clamp_to_edge, …), unnormalized,
    /// or mag=, min=, u=, v=, w=, border=, min_lod=, max_lod= (repeatable)
    #[arg(long = "sampler", value_name = "BINDING=STATE")]
    pub samplers: Vec<String>,
    /// the push constants, as a buffer SPEC (addresses as @NAME in a values: list)
    #[arg(long)]
    pub push: Option<String>,
    /// a specialization constant ID=VALUE, typed as the module declares it; for WGSL an
    /// `override`, NAME=VALUE or ID=VALUE (its `@id`) (repeatable)
    #[arg(long = "spec", value_name = "ID=VALUE")]
    pub spec: Vec<String>,
    /// a preprocessor definition NAME or NAME=VALUE for GLSL (repeatable)
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// target environment for GLSL and SPIR-V assembly: vulkan1.1, vulkan1.2, vulkan1.3 (or a
    /// SPIR-V version, spv1.0 … spv1.6: the lowest environment that consumes it); default: the
    /// lowest that compiles
    #[arg(long)]
    pub target_env: Option<String>,
    /// subgroup size: one (default: the device's; 32 with --model-only), `all` (every size the
    /// spec allows, 1 to 128), a list `4,8,16` or a range `4..32` (the powers of two in it): the
    /// model at each, the device at each it supports
    #[arg(long)]
    pub subgroup_size: Option<String>,
    /// lane layout of the model: `device` (the device's own, probed once per device, shape and
    /// size: the default when a device runs), row-major (the default with --model-only),
    /// column-major, quads or an axis order like yzx
    #[arg(long)]
    pub layout: Option<String>,
    /// reconvergence model: maximal, sucf or base (default: what the module declares)
    #[arg(long)]
    pub mode: Option<String>,
    /// run the model only (no device)
    #[arg(long, conflicts_with = "device")]
    pub model_only: bool,
    /// Vulkan device index (see `lockstep devices`), or `all`: every device of the machine, each
    /// in a process of its own at once, one table with a column per device
    #[arg(long)]
    pub device: Option<DeviceArg>,
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
    #[arg(long, default_value_t = crate::spirv::DEFAULT_SCHEDULES, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub schedules: u32,
    /// relative tolerance for inexact floats: the device's d against the model's m,
    /// |d − m| ≤ atol + rtol · |m|
    #[arg(long, default_value_t = Tolerance::default().rel)]
    pub rtol: f64,
    /// absolute tolerance for inexact floats
    #[arg(long, default_value_t = Tolerance::default().abs)]
    pub atol: f64,
    /// a spin-wait on another workgroup and a branch on an undefined value fail the run too (by
    /// default warnings: Vulkan gives no forward-progress guarantee between workgroups, but a
    /// device running them all at once gets past it; an undefined value is some value, and what
    /// the branch leaves undefined in a buffer fails as that element)
    #[arg(long)]
    pub strict: bool,
    /// a data race whose two sides store the same value is a warning, not a failure (still a race
    /// by the spec — "Applications must ensure that no data races occur" — but every order leaves
    /// that value, which is kept and compared)
    #[arg(long, conflicts_with = "strict")]
    pub allow_same_value_races: bool,
}

impl RunArgs {
    /// The findings whose failing the flags chose.
    fn policy(&self) -> FailPolicy {
        FailPolicy {
            spin_waits: self.strict,
            lost_paths: self.strict,
            allow_same_value_races: self.allow_same_value_races,
        }
    }
}

fn kernel_error(e: KernelError) -> CliError {
    match e {
        KernelError::Input(m) => CliError::usage(m),
        KernelError::Model(e @ crate::spirv::SpirvError::Stopped { .. }) => CliError {
            code: EXIT_MISMATCH,
            message: e.to_string(),
        },
        KernelError::Model(e) => CliError::usage(e.to_string()),
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

/// The subgroup sizes of `--subgroup-size`: `N`, `all`, `A,B,C` or `A..B`.
pub fn parse_sizes(s: &str) -> Result<Vec<SubgroupSize>, CliError> {
    let bad = |why: String| CliError::usage(format!("--subgroup-size {s}: {why}"));
    let one = |t: &str| -> Result<SubgroupSize, CliError> {
        let n: u64 = t
            .trim()
            .parse()
            .map_err(|_| bad(format!("'{t}' is not a number")))?;
        SubgroupSize::new(n).map_err(|e| bad(e.to_string()))
    };
    let mut v: Vec<SubgroupSize> = if s.trim() == "all" {
        (0..8)
            .map(|k| SubgroupSize::new(1 << k).expect("a power of two"))
            .collect()
    } else if let Some((a, b)) = s.split_once("..") {
        let (a, b) = (one(a)?.get(), one(b)?.get());
        if a > b {
            return Err(bad(format!("the range {a}..{b} is empty")));
        }
        (0..8)
            .map(|k| 1u32 << k)
            .filter(|n| (a..=b).contains(n))
            .map(|n| SubgroupSize::new(n as u64).expect("a power of two"))
            .collect()
    } else {
        s.split(',').map(one).collect::<Result<_, _>>()?
    };
    v.sort_by_key(|x| x.get());
    v.dedup();
    Ok(v)
}

/// Address elements (`@NAME` in a values: list) of a buffer: where they go, its element type,
/// the references, and the option that gave them.
type Refs = Vec<(
    crate::kernel::run::Place,
    crate::model::ScalarType,
    Vec<crate::kernel::AddressRef>,
    String,
)>;

/// `--buffer BINDING=SPEC` and `--buffer NAME=SPEC` (a buffer with no descriptor, reached through
/// its device address) into `job`, each buffer's address elements into `refs`.
fn add_buffers(job: &mut KernelJob, buffers: &[String], refs: &mut Refs) -> Result<(), CliError> {
    for b in buffers {
        // NAME=SPEC: a buffer with no descriptor, reached through its device address.
        if let Some((name, spec)) = b.split_once('=')
            && name
                .trim()
                .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            let name = name.trim();
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(CliError::usage(format!(
                    "--buffer {b}: a buffer name is letters, digits and _"
                )));
            }
            if job.unbound.iter().any(|(n, _)| n == name) {
                return Err(CliError::usage(format!(
                    "--buffer {b}: a buffer named {name} is given twice"
                )));
            }
            let spec: BufferSpec = spec
                .parse()
                .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
            let host = spec
                .build()
                .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
            refs.push((
                crate::kernel::run::Place::Unbound(job.unbound.len()),
                host.dtype,
                spec.address_refs().to_vec(),
                format!("--buffer {b}"),
            ));
            job.unbound.push((name.to_string(), host));
            continue;
        }
        let spec: BindingSpec = b
            .parse()
            .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
        if job
            .buffers
            .iter()
            .any(|j| j.at(spec.set, spec.binding, spec.element))
        {
            return Err(CliError::usage(format!(
                "--buffer {b}: set {} binding {}{} is given twice",
                spec.set,
                spec.binding,
                match spec.element {
                    0 => String::new(),
                    k => format!(" element {k}"),
                }
            )));
        }
        let host = spec
            .spec
            .build()
            .map_err(|e| CliError::usage(format!("--buffer {b}: {e}")))?;
        refs.push((
            crate::kernel::run::Place::Bound(job.buffers.len()),
            host.dtype,
            spec.spec.address_refs().to_vec(),
            format!("--buffer {b}"),
        ));
        job.buffers
            .push(JobBuffer::new(spec.set, spec.binding, host).element(spec.element));
    }
    Ok(())
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
    // `--spec KEY=VALUE`, split once. WGSL's `override` constants are set as naga writes the
    // module (it writes no specialization constants for them), by name or `@id`; every other
    // language's specialization constants by SpecId, when the module runs.
    let wgsl = crate::kernel::SourceLang::from_path(&a.kernel).ok()
        == Some(crate::kernel::SourceLang::Wgsl);
    let mut spec = Vec::new();
    for s in &a.spec {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            CliError::usage(if wgsl {
                format!("--spec {s}: give NAME=VALUE or ID=VALUE (e.g. --spec wg=64)")
            } else {
                format!("--spec {s}: give ID=VALUE (e.g. --spec 0=64)")
            })
        })?;
        spec.push((k.trim().to_string(), v.trim().to_string()));
    }
    if wgsl {
        opts.overrides = std::mem::take(&mut spec);
    }
    if let Some(t) = &a.target_env {
        opts.target_env = Some(t.parse::<TargetEnv>().map_err(CliError::usage)?);
    }
    let module = crate::kernel::load(&a.kernel, &opts).map_err(CliError::usage)?;
    let mut job = KernelJob::new(module);
    job.entry = a.entry.clone();
    job.workgroups = parse_workgroups(&a.workgroups)?;
    job.layout = match a.layout.as_deref() {
        Some(l) => l.parse::<LaneOrder>().map_err(CliError::usage)?,
        None => LaneOrder::ROW_MAJOR,
    };
    if job.layout == LaneOrder::Device && a.model_only {
        return Err(CliError::usage(
            "--layout device learns the layout from the device: not with --model-only",
        ));
    }
    job.mode = match &a.mode {
        Some(m) => Some(m.parse::<Mode>().map_err(CliError::usage)?),
        None => None,
    };
    job.max_steps = a.max_steps;
    job.schedules = a.schedules;
    // Address elements (`@NAME` in a values: list), resolved once every buffer is known.
    let mut refs: Refs = Vec::new();
    add_buffers(&mut job, &a.buffers, &mut refs)?;
    for t in &a.samplers {
        let bad = |e: String| CliError::usage(format!("--sampler {t}: {e}"));
        let (at, state) = t
            .split_once('=')
            .ok_or_else(|| bad("expected BINDING=STATE or SET.BINDING=STATE".into()))?;
        let (set, binding) = match at.split_once('.') {
            Some((s, b)) => (s.parse::<u32>(), b.parse::<u32>()),
            None => (Ok(0), at.parse::<u32>()),
        };
        let (Ok(set), Ok(binding)) = (set, binding) else {
            return Err(bad(format!("'{at}' is not BINDING or SET.BINDING")));
        };
        if job
            .samplers
            .iter()
            .any(|(s, b, _)| (*s, *b) == (set, binding))
        {
            return Err(bad(format!("set {set} binding {binding} is given twice")));
        }
        job.samplers
            .push((set, binding, state.parse().map_err(bad)?));
    }
    if let Some(p) = &a.push {
        let spec: BufferSpec = p
            .parse()
            .map_err(|e| CliError::usage(format!("--push {p}: {e}")))?;
        let host = spec
            .build()
            .map_err(|e| CliError::usage(format!("--push {p}: {e}")))?;
        refs.push((
            crate::kernel::run::Place::Push,
            host.dtype,
            spec.address_refs().to_vec(),
            format!("--push {p}"),
        ));
        job.push = Some(host);
    }
    for (into, dtype, r, given) in refs {
        job.add_address_refs(into, dtype, &r)
            .map_err(|e| CliError::usage(format!("{given}: {e}")))?;
    }
    for (id, v) in spec {
        let sid: u32 = id
            .parse()
            .map_err(|_| CliError::usage(format!("--spec {id}={v}: '{id}' is not a SpecId")))?;
        job.spec.push((sid, v));
    }
    if !(a.rtol >= 0.0 && a.atol >= 0.0) {
        return Err(CliError::usage("--rtol and --atol must be numbers ≥ 0"));
    }
    if let Some(s) = &a.subgroup_size {
        parse_sizes(s)?;
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

/// `--device`: an index or `all` (without the Vulkan backend, an index only, which the model-only
/// build refuses anyway).
#[cfg(feature = "vulkan")]
pub(crate) type DeviceArg = crate::cli::devices_all::DeviceChoice;
/// `--device`: an index.
#[cfg(not(feature = "vulkan"))]
pub(crate) type DeviceArg = usize;

/// Runs the command (`argv`: as typed, for `--device all`'s children).
pub fn run(a: &RunArgs, argv: &[String]) -> Result<String, CliError> {
    #[cfg(feature = "vulkan")]
    if a.device == Some(crate::cli::devices_all::DeviceChoice::All) {
        return every_device(a, argv);
    }
    let _ = argv;
    if let Some(s) = &a.subgroup_size {
        let sizes = parse_sizes(s)?;
        if sizes.len() > 1 || s.contains("..") || s.contains(',') || s.trim() == "all" {
            return sweep(a, &sizes);
        }
    }
    #[allow(unused_mut)]
    let (mut job, tol) = job(a)?;
    #[allow(unused_mut)]
    let mut layout_line = String::new();
    // Decoding first: a module the interpreter cannot run is reported before any device work.
    let kernel = job.decode().map_err(kernel_error)?;
    #[cfg(not(feature = "vulkan"))]
    let _ = &kernel;
    // The device first (its subgroup size decides the model's), unless model-only.
    let one_size = match &a.subgroup_size {
        Some(s) => Some(parse_sizes(s)?[0].get() as u64),
        None => None,
    };
    #[cfg(feature = "vulkan")]
    let (device_bytes, size, device_name) = if a.model_only {
        (None, one_size.unwrap_or(32), None)
    } else {
        let ctx =
            crate::vulkan::Context::new(crate::cli::devices_all::DeviceChoice::index(a.device))
                .map_err(crate::cli::devices::vk_error)?;
        let size = one_size.unwrap_or(ctx.caps.subgroup_size as u64);
        let ran = if a.layout.is_none() || job.layout == LaneOrder::Device {
            crate::kernel::run::probe_layout(&ctx, kernel.local_size, size as u32)
                .map(|p| layout_line = use_layout(&mut job, p))
        } else {
            Ok(())
        };
        match ran.and_then(|()| job.run_device(&ctx, &kernel, size as u32)) {
            Ok((b, bases)) => {
                job.device_bases = Some(bases);
                (Some(b), size, Some(ctx.info.name.clone()))
            }
            Err(KernelError::Unsupported(m)) => {
                // Not a failure: the device lacks what the kernel needs (exit 2, as no device).
                return Err(CliError::no_device(format!(
                    "unsupported on {}: {m} (run with --model-only for the model alone)",
                    ctx.info.name
                )));
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
        (None, one_size.unwrap_or(32), None)
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
    report.policy = a.policy();
    if let Some(dir) = &a.out {
        // Bound buffers by binding, then those without a descriptor by name (the device's order).
        let all = job
            .buffers
            .iter()
            .map(|jb| {
                let mut name = match jb.set {
                    0 => format!("{}", jb.binding),
                    set => format!("{set}.{}", jb.binding),
                };
                if job.label(jb).ends_with(']') {
                    name += &format!("[{}]", jb.element);
                }
                (jb.set, jb.binding, jb.element, &jb.host, name)
            })
            .chain(job.unbound.iter().enumerate().map(|(i, (name, host))| {
                (crate::spirv::UNBOUND_SET, i as u32, 0, host, name.clone())
            }));
        for (i, (set, binding, element, host, name)) in all.enumerate() {
            if let Some(b) = model
                .run
                .buffers
                .iter()
                .find(|b| (b.set, b.binding, b.element) == (set, binding, element))
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
    text += &layout_line;
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

/// `--device all`: the run once per device (a child process each, at once), then one table: per
/// device, its verdict and per buffer the elements that are exact, undefined and differ.
#[cfg(feature = "vulkan")]
fn every_device(a: &RunArgs, argv: &[String]) -> Result<String, CliError> {
    use crate::cli::devices_all as all;
    if a.model_only {
        return Err(CliError::usage("--device all with --model-only: pick one"));
    }
    let g = all::run_children(argv)?;
    let mut head = vec!["buffer".to_string()];
    head.extend(g.reports.iter().enumerate().map(|(i, r)| {
        let name = r["device_name"]
            .as_str()
            .or_else(|| r["device"]["name"].as_str())
            .unwrap_or("?");
        format!("[{i}] {name}")
    }));
    let mut rows = vec![head];
    let buffers = g
        .reports
        .iter()
        .find_map(|r| r["buffers"].as_array().cloned())
        .unwrap_or_default();
    for (k, b) in buffers.iter().enumerate() {
        let mut row = vec![format!("set {} binding {}", b["set"], b["binding"])];
        for r in &g.reports {
            row.push(match r["buffers"].get(k) {
                Some(x) => format!(
                    "{} exact, {} undefined, {} ≠",
                    x["exact"], x["undefined"], x["mismatches"]
                ),
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut verdict = vec!["result".to_string()];
    verdict.extend(g.reports.iter().map(|r| match (&r["error"], &r["ok"]) {
        (serde_json::Value::String(e), _) => format!("error: {e}"),
        (_, serde_json::Value::Bool(true)) => format!("PASS (size {})", r["subgroup_size"]),
        _ => format!(
            "FAIL (size {}, {} findings)",
            r["subgroup_size"], r["findings_total"]
        ),
    }));
    rows.push(verdict);
    let text = format!(
        "every device, one column each (elements of each buffer: exact, undefined, model ≠ device):\n{}",
        crate::text::table(&rows)
    );
    if let Some(p) = &a.json {
        all::write_json(p, argv, &g.reports)?;
    }
    if g.code == 0 {
        return Ok(text);
    }
    // As for one device: the table on stdout, the verdict on stderr.
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Err(CliError {
        code: g.code,
        message: format!(
            "error: the run is not clean on every device: see the table above (exit {})",
            g.code
        ),
    })
}

/// Sets `job`'s model layout to the device's (probed, cached); the line saying which it is.
#[cfg(feature = "vulkan")]
fn device_layout(
    job: &mut KernelJob,
    ctx: &crate::vulkan::Context,
    shape: [u32; 3],
    size: u32,
) -> Result<String, CliError> {
    let p = crate::kernel::run::probe_layout(ctx, shape, size).map_err(kernel_error)?;
    Ok(use_layout(job, p))
}

/// Takes the probed layout for the model; the report's line saying which it is.
#[cfg(feature = "vulkan")]
fn use_layout(job: &mut KernelJob, p: crate::kernel::run::ProbedLayout) -> String {
    job.layout = p.layout;
    job.placements = p.placements;
    let what = match p.layout {
        LaneOrder::Device => "the device's own (probed; none of the model's layouts)".to_string(),
        l => format!("{l} (the device's, probed)"),
    };
    let mut line = format!("model lane layout: {what}\n");
    if let Some(n) = p.note {
        line += &format!("  note: {n}\n");
    }
    line
}

/// A buffer the model left at one size of a sweep.
struct SizeBuffer {
    bytes: Vec<u8>,
    /// per taint unit: its taint (defined, inexact, compared as a float's bits)
    units: Vec<crate::spirv::Taint>,
    /// the taint unit's size in bytes
    unit: u32,
}

/// One size of a sweep: the model's report, and what the device did.
struct SizeRun {
    size: u32,
    report: Option<crate::kernel::run::Report>,
    /// the model's buffers, as the size comparison reads them
    defined: Vec<SizeBuffer>,
    error: Option<String>,
    device: String,
}

/// `--subgroup-size all|A,B|A..B`: the kernel at every size — the model at each, the device at
/// each it supports — one table, a line on where it fails, and the defined outputs that differ
/// between sizes (a kernel written for one size).
fn sweep(a: &RunArgs, sizes: &[SubgroupSize]) -> Result<String, CliError> {
    #[allow(unused_mut)]
    let (mut job, tol) = job(a)?;
    let kernel = job.decode().map_err(kernel_error)?;
    #[cfg(feature = "vulkan")]
    let ctx = if a.model_only {
        None
    } else {
        Some(
            crate::vulkan::Context::new(crate::cli::devices_all::DeviceChoice::index(a.device))
                .map_err(crate::cli::devices::vk_error)?,
        )
    };
    #[cfg(not(feature = "vulkan"))]
    if !a.model_only {
        return Err(CliError::no_device(
            "this build has no Vulkan backend (built without the `vulkan` feature): run with --model-only",
        ));
    }
    let mut runs: Vec<SizeRun> = Vec::new();
    for &size in sizes {
        let n = size.get();
        let mut r = SizeRun {
            size: n,
            report: None,
            defined: Vec::new(),
            error: None,
            device: "-".into(),
        };
        #[allow(unused_mut)]
        let mut device_bytes: Option<Vec<Vec<u8>>> = None;
        #[cfg(feature = "vulkan")]
        if let Some(ctx) = &ctx {
            let c = &ctx.caps;
            let supported = n == c.subgroup_size
                || (c.size_control && (c.min_subgroup_size..=c.max_subgroup_size).contains(&n));
            if supported && (a.layout.is_none() || job.layout == LaneOrder::Device) {
                if let Err(e) = device_layout(&mut job, ctx, kernel.local_size, n) {
                    r.device = format!("error: {}", e.message);
                }
            } else if a.layout.is_none() || job.layout == LaneOrder::Device {
                job.layout = LaneOrder::ROW_MAJOR;
                job.placements = None;
            }
            if supported {
                match job.run_device(ctx, &kernel, n) {
                    Ok((b, bases)) => {
                        job.device_bases = Some(bases);
                        device_bytes = Some(b);
                        r.device = "ran".into();
                    }
                    Err(KernelError::Unsupported(m)) => r.device = format!("unsupported: {m}"),
                    Err(e) => r.device = format!("error: {e}"),
                }
            } else {
                r.device = format!(
                    "not a size of {} ({}..{})",
                    ctx.info.name, c.min_subgroup_size, c.max_subgroup_size
                );
            }
        }
        match job.run_model_decoded(kernel.clone(), size, None) {
            Ok(model) => {
                let mut rep = job.compare(&model, device_bytes.as_deref(), tol);
                rep.policy = a.policy();
                r.defined = model
                    .run
                    .buffers
                    .iter()
                    .map(|b| SizeBuffer {
                        bytes: b.bytes.clone(),
                        units: b.taint.clone(),
                        unit: b.unit,
                    })
                    .collect();
                r.report = Some(rep);
            }
            Err(e) => r.error = Some(e.to_string()),
        }
        runs.push(r);
    }
    let (rows, failing) = sweep_rows(&runs);
    let mut text = format!(
        "{}: subgroup sizes {}\n",
        job.module.name,
        sizes
            .iter()
            .map(|s| s.get().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    text += &crate::text::table(&rows);
    // Defined at every size and different between them: written for one size.
    let differs = size_differences(&job, &kernel, &runs, tol);
    let fails = !failing.is_empty() || !differs.is_empty();
    text += &sweep_summary(&runs, &failing);
    for d in &differs {
        text += &format!("differs between sizes: {d}\n");
    }
    if let Some(j) = &a.json {
        let v = serde_json::json!({
            "kernel": job.module.name,
            "sizes": runs.iter().map(|r| serde_json::json!({
                "size": r.size,
                "device": r.device,
                "error": r.error,
                "report": r.report.as_ref().map(|x| x.json()),
            })).collect::<Vec<_>>(),
            "differs_between_sizes": differs,
            "ok": !fails,
        });
        crate::files::write_atomic(j, &serde_json::to_string_pretty(&v).unwrap_or_default())
            .map_err(CliError::internal)?;
    }
    if fails {
        // The table on stdout, as for a clean sweep (and as a single run does); the verdict on
        // stderr.
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(format!("{text}result: FAIL\n").as_bytes());
        let _ = out.flush();
        Err(CliError {
            code: EXIT_MISMATCH,
            message: "error: the sweep is not clean at every size: see the table above (exit 1)"
                .into(),
        })
    } else {
        Ok(format!("{text}result: PASS at every size\n"))
    }
}

/// The kernel's defined outputs that differ between subgroup sizes: per buffer, its first such
/// element with its value at each size (sizes with one value together) and how many differ.
fn size_differences(
    job: &KernelJob,
    kernel: &crate::spirv::Kernel,
    runs: &[SizeRun],
    tol: crate::kernel::Tolerance,
) -> Vec<String> {
    let mut differs: Vec<String> = Vec::new();
    let ok_runs: Vec<&SizeRun> = runs.iter().filter(|r| r.report.is_some()).collect();
    if ok_runs.len() > 1 {
        for (bi, jb) in job.buffers.iter().enumerate() {
            let host = &jb.host;
            let Some(SizeBuffer {
                bytes: b0, unit, ..
            }) = ok_runs[0].defined.get(bi)
            else {
                continue;
            };
            let u = (*unit as usize).max(1);
            let es = crate::kernel::buffers::element_size(host.dtype).max(1);
            // An element's bits at one size, and its taint units' marks at every size.
            let bits = |r: &SizeRun, e: usize| -> Option<u64> {
                let b = r.defined.get(bi)?.bytes.get(e * es..(e + 1) * es)?;
                let mut w = [0u8; 8];
                w[..es.min(8)].copy_from_slice(&b[..es.min(8)]);
                Some(u64::from_le_bytes(w))
            };
            let marks = |e: usize| {
                let units = (e * es) / u..=(e * es + es - 1) / u;
                ok_runs.iter().flat_map(move |r| {
                    let d = r.defined.get(bi).map(|d| d.units.as_slice()).unwrap_or(&[]);
                    units
                        .clone()
                        .map(move |k| d.get(k).copied().unwrap_or_default())
                })
            };
            // Defined at every size, and not the same value at every size: bit for bit, or
            // within the tolerance where a size made it inexact (a float reduction's order of
            // operations is the implementation's, and changes with the size).
            let bad: Vec<usize> = (0..b0.len() / es)
                .filter(|&e| {
                    if marks(e).any(|t| t.has_prov()) {
                        return false;
                    }
                    let inexact = marks(e).any(|t| t.is_inexact());
                    let float_bits = marks(e).any(|t| t.is_float_bits());
                    let first = bits(ok_runs[0], e).unwrap_or(0);
                    ok_runs.iter().any(|r| {
                        !crate::kernel::run::agrees(
                            host.dtype,
                            crate::kernel::run::Allow {
                                inexact,
                                float_bits,
                                // one model at two sizes: the same arithmetic, the same zeros
                                zero_sign: false,
                            },
                            first,
                            bits(r, e).unwrap_or(0),
                            tol,
                        )
                    })
                })
                .collect();
            let Some(&elem) = bad.first() else {
                continue;
            };
            // The first differing element, its value at each size (sizes with one value together).
            let value =
                |r: &SizeRun| crate::kernel::run::show(host.dtype, bits(r, elem).unwrap_or(0));
            let mut by_value: Vec<(String, Vec<u32>)> = Vec::new();
            for r in &ok_runs {
                let v = value(r);
                match by_value.iter_mut().find(|(x, _)| *x == v) {
                    Some(e) => e.1.push(r.size),
                    None => by_value.push((v, vec![r.size])),
                }
            }
            let object = kernel
                .objects
                .iter()
                .position(|o| o.binding == Some((jb.set, jb.binding)) && o.element == jb.element)
                .map(|i| crate::spirv::inst::ObjectId::new(i as u32))
                .unwrap_or_default();
            differs.push(format!(
                "{} ({}) is defined at every size but holds {} — {} element{}; a kernel written for one subgroup size",
                kernel.describe(object, (elem * es) as u64),
                job.label(jb),
                by_value
                    .iter()
                    .map(|(v, sz)| format!("{v} at size{} {}", if sz.len() == 1 { "" } else { "s" }, sz.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")))
                    .collect::<Vec<_>>()
                    .join("; "),
                bad.len(),
                if bad.len() == 1 { " differs" } else { "s differ" }
            ));
        }
    }
    differs
}

/// The sweep's summary line where some size fails: the sizes it passes at, those it fails at, and
/// the first failing size's first finding.
fn sweep_summary(runs: &[SizeRun], failing: &[(u32, String)]) -> String {
    let mut text = String::new();
    if !failing.is_empty() {
        let passing: Vec<u32> = runs
            .iter()
            .filter(|r| r.report.as_ref().is_some_and(|x| x.ok()))
            .map(|r| r.size)
            .collect();
        let (first_size, first_why) = &failing[0];
        let list = |v: &[u32]| {
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let failed: Vec<u32> = failing.iter().map(|f| f.0).collect();
        text += &format!(
            "\nsummary: {}; fails at {} — at size {first_size}: {first_why}\n",
            if passing.is_empty() {
                "correct at no size".to_string()
            } else {
                format!(
                    "correct only at size{} {}",
                    if passing.len() == 1 { "" } else { "s" },
                    list(&passing)
                )
            },
            list(&failed)
        );
    }
    text
}

/// The sweep's table (one row per size: verdict, counts, the device's part, the first finding)
/// and the sizes that did not pass, each with its first finding.
#[allow(clippy::type_complexity)]
fn sweep_rows(runs: &[SizeRun]) -> (Vec<Vec<String>>, Vec<(u32, String)>) {
    let mut rows = vec![vec![
        "size".to_string(),
        "verdict".into(),
        "exact".into(),
        "undefined".into(),
        "racy".into(),
        "model ≠ device".into(),
        "device".into(),
        "first finding".into(),
    ]];
    let mut failing = Vec::new();
    for r in runs {
        let (verdict, exact, undef, racy, mism, first) = match (&r.report, &r.error) {
            (Some(rep), _) => {
                let b = &rep.buffers;
                let sum = |f: fn(&crate::kernel::run::BufferReport) -> usize| -> usize {
                    b.iter().map(f).sum()
                };
                let first = rep
                    .findings
                    .iter()
                    .filter(|f| f.kind.fails(rep.policy))
                    .min_by_key(|f| f.kind)
                    .map(|f| {
                        let items: Vec<&str> = f.items.iter().take(2).map(|s| s.as_str()).collect();
                        let w: String = f.why.chars().take(160).collect();
                        if items.is_empty() {
                            w
                        } else {
                            format!("{}: {w}", items.join(", "))
                        }
                    })
                    .unwrap_or_default();
                (
                    if rep.ok() { "PASS" } else { "FAIL" }.to_string(),
                    sum(|x| x.exact + x.inexact).to_string(),
                    sum(|x| x.undefined + x.order_dependent).to_string(),
                    sum(|x| x.racy).to_string(),
                    if rep.device {
                        sum(|x| x.mismatches).to_string()
                    } else {
                        "-".into()
                    },
                    first,
                )
            }
            (None, Some(e)) => (
                "ERROR".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                e.clone(),
            ),
            (None, None) => (
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                String::new(),
            ),
        };
        if verdict != "PASS" {
            failing.push((r.size, first.clone()));
        }
        rows.push(vec![
            r.size.to_string(),
            verdict,
            exact,
            undef,
            racy,
            mism,
            r.device.clone(),
            first,
        ]);
    }
    (rows, failing)
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn parse_sizes_example() {
        use crate::cli::run::parse_sizes;
        let g = |s: &str| {
            parse_sizes(s)
                .unwrap()
                .iter()
                .map(|x| x.get())
                .collect::<Vec<_>>()
        };
        assert_eq!(g("all"), [1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(g("4..32"), [4, 8, 16, 32]);
        assert_eq!(g("16,4"), [4, 16]);
        assert!(parse_sizes("3").is_err() && parse_sizes("8..4").is_err());
    }
}
