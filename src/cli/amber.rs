//! `lockstep amber`: AmberScript compute tests run on the device and on the model, each EXPECT
//! checked per run; a table per file, a summary, JSON and JUnit reports.

use crate::amber::report::{self, file_text, summarize, summary_text};
use crate::amber::{
    expect_lines, parse_file, run_parsed, Backend, ErrorClass, FileReport, FileStatus,
};
use crate::cli::{CliError, EXIT_INTERNAL, EXIT_MISMATCH, EXIT_USAGE};
use crate::model::SubgroupSize;
use crate::reconverge::Mode;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `lockstep amber`.
#[derive(clap::Args, Debug, Clone)]
pub struct AmberArgs {
    /// AmberScript files (`#!amber`), or folders (every `.amber` file under them, in path order);
    /// each file runs on its own, a bad one does not stop the others.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Device index (see `lockstep devices`); default: the preferred device.
    #[arg(long, conflicts_with = "model_only")]
    pub device: Option<usize>,
    /// Run on the model only, not on a Vulkan device.
    #[arg(long)]
    pub model_only: bool,
    /// Reconvergence model of the model runs: maximal, sucf, base, or all (one run each); default:
    /// the one each shader declares.
    #[arg(long)]
    pub mode: Option<String>,
    /// Subgroup sizes: one (default: the model at 32, the H100's; the device at its own), `all`
    /// (1 to 128), a list `4,8,16` or a range `4..32` — one model run per size, and one device
    /// run per size asked that the device offers (through subgroup size control; its default
    /// alone when it offers none of them), each labelled `@SIZE`.
    #[arg(long)]
    pub subgroup_size: Option<String>,
    /// Also write the report as JSON to this file (atomically).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also write the report as JUnit XML to this file (atomically).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write the fidelity table to this markdown file: for every EXPECT a device passed, whether
    /// the model passed it, called it undefined (with the rule), failed it or did not run it.
    #[arg(long)]
    pub fidelity: Option<PathBuf>,
    /// The device's verdicts for `--fidelity`, recorded earlier (`lockstep amber --json`, or the
    /// corpus's `h100.json`) instead of a device run in this call. Repeat it to compare one model
    /// run with several recordings: a summary line and a table each, in the order given.
    #[arg(long, requires = "fidelity")]
    pub against: Vec<PathBuf>,
    /// Seconds a file may take on the device before it is reported hung (device runs happen in a
    /// child process: a driver that crashes or hangs costs that file, not the run).
    #[arg(long, default_value_t = 300)]
    pub device_timeout: u64,
    /// Run shard K of N (`--shard 2/4`): every N-th file (in path order) from the K-th.
    #[arg(long)]
    pub shard: Option<crate::shard::Shard>,
    /// `--baseline` and `--flakes`
    #[command(flatten)]
    pub lists: crate::cli::merge::ListArgs,
    /// Internal: run the device side of each file in this process and print one JSON line per
    /// file (what a parent `lockstep amber` reads).
    #[arg(long, hide = true)]
    pub device_child: bool,
}

/// The files of `paths`: files as given, folders as every `.amber` file under them, sorted.
pub(crate) fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "amber") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// What each file runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendPlan {
    /// The device to run on (`Some(None)`: the preferred one), `None` with `--model-only`.
    pub device: Option<Option<usize>>,
    /// One model run per entry: a forced mode, or `None` for the modes the shaders declare.
    pub model_modes: Vec<Option<Mode>>,
    /// The model's subgroup sizes, when given (one model run per size and mode).
    pub subgroup_sizes: Vec<SubgroupSize>,
}

/// The plan of an invocation (bad option values are usage errors).
pub fn plan(a: &AmberArgs) -> Result<BackendPlan, CliError> {
    let model_modes = match a.mode.as_deref() {
        None => vec![None],
        Some("all") => Mode::ALL.into_iter().map(Some).collect(),
        Some(m) => vec![Some(m.parse::<Mode>().map_err(|_| {
            CliError::usage(format!("--mode {m}: expected maximal, sucf, base or all"))
        })?)],
    };
    let subgroup_sizes = match &a.subgroup_size {
        Some(s) => crate::cli::run::parse_sizes(s)?,
        None => Vec::new(),
    };
    Ok(BackendPlan {
        device: (!a.model_only).then_some(a.device),
        model_modes,
        subgroup_sizes,
    })
}

/// The backends of a plan: the device first (when there is one), then one model per mode.
///
/// Not yet available: the device's module runner (`Context::run_module`) and the model's SPIR-V
/// interpreter are plugged in here when they land; until then every file that parses is reported
/// as an error naming this, while parsing, unsupported files and reports work.
pub fn backends(plan: &BackendPlan) -> Result<Vec<Box<dyn Backend>>, String> {
    let mut v: Vec<Box<dyn Backend>> = Vec::new();
    #[cfg(feature = "vulkan")]
    if let Some(index) = plan.device {
        let dev = crate::amber::engines::DeviceBackend::new(index).map_err(|e| e.to_string())?;
        v.push(Box::new(dev));
    }
    #[cfg(not(feature = "vulkan"))]
    if plan.device.is_some() {
        return Err(
            "this build has no Vulkan backend (built without the `vulkan` feature): run with --model-only"
                .into(),
        );
    }
    let sizes: Vec<Option<SubgroupSize>> = if plan.subgroup_sizes.is_empty() {
        vec![None]
    } else {
        plan.subgroup_sizes.iter().map(|s| Some(*s)).collect()
    };
    for size in &sizes {
        for m in &plan.model_modes {
            v.push(Box::new(crate::amber::engines::ModelBackend::new(
                *m, *size,
            )));
        }
    }
    Ok(v)
}

/// The exit status for a set of file reports: the most serious error's code, else 1 when a file
/// failed, else 0.
pub fn exit_code(files: &[FileReport]) -> i32 {
    match files.iter().filter_map(|f| f.error).min() {
        Some(ErrorClass::BadInput) => EXIT_USAGE,
        Some(ErrorClass::Backend) => EXIT_INTERNAL,
        None if files.iter().any(|f| f.status == FileStatus::Fail) => EXIT_MISMATCH,
        None => 0,
    }
}

/// Reads one file: its text, or the file's error report.
fn read(path: &std::path::Path) -> Result<String, Box<FileReport>> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        Box::new(FileReport::not_run(
            &name,
            FileStatus::Error,
            format!("cannot read {name}: {e}"),
            Some(ErrorClass::BadInput),
        ))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        Box::new(FileReport::not_run(
            &name,
            FileStatus::Error,
            format!("line {line}: not UTF-8 text (invalid byte at offset {at})"),
            Some(ErrorClass::BadInput),
        ))
    })
}

/// Runs `lockstep amber`. Each file's table is printed to stdout as soon as it is done; the
/// returned text (or the error) is the summary line. Exit code: 64 when a script is bad input,
/// 70 when a backend failed, 1 when an EXPECT failed or was undefined, else 0 (unsupported files
/// included).
pub fn run(a: &AmberArgs) -> Result<String, CliError> {
    if a.device_child {
        return device_child(a);
    }
    let plan = plan(a)?;
    for p in [&a.json, &a.junit, &a.fidelity].into_iter().flatten() {
        report::check_writable(p).map_err(CliError::usage)?;
    }
    let against = read_againsts(a, plan.device.is_some())?;
    let exp = a.lists.read()?;
    let mut paths = expand(&a.files);
    if paths.is_empty() {
        return Err(CliError::usage("no .amber files in the folders given"));
    }
    crate::shard::Shard::retain(a.shard, &mut paths);
    let start = Instant::now();
    // The model in this process; the device in a child process, so that a driver that crashes
    // (lavapipe's LLVM on the CTS's ldexp files) or hangs costs one file, not the run — and the
    // model runs first, so a kernel that crashes the driver still has the model's findings.
    let device = plan.device;
    let model_plan = BackendPlan {
        device: None,
        ..plan.clone()
    };
    // With --subgroup-size, the device runs each file at every size asked that it offers
    // (through subgroup size control), each in its own children; without, once at its default.
    let (mut device_runs, device_name) = match device {
        Some(index) => {
            let mut all = Vec::new();
            let mut name = None;
            for size in device_sizes(index, &plan.subgroup_sizes)? {
                let (runs, n) = device_in_children(a, index, &paths, size)?;
                name = name.or(n);
                all.push(runs);
            }
            (Some(all), name)
        }
        None => (None, None),
    };
    let mut backends = backends(&model_plan);
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        let name = path.display().to_string();
        let rep = match read(path) {
            Err(r) => *r,
            Ok(text) => match parse_file(&name, &text) {
                Err(r) => *r,
                Ok(script) => match &mut backends {
                    Ok(b) => match device_runs
                        .as_mut()
                        .map(|d| d.iter_mut().map(|m| m.remove(&name)).collect::<Vec<_>>())
                    {
                        None => run_parsed(&name, &script, b),
                        Some(dev) => {
                            let mut runs: Vec<crate::amber::RunReport> = dev
                                .into_iter()
                                .map(|r| {
                                    r.unwrap_or_else(|| {
                                        crate::amber::RunReport::device_lost(
                                            "the device run gave no report".into(),
                                        )
                                    })
                                })
                                .collect();
                            runs.extend(
                                b.iter_mut()
                                    .map(|x| crate::amber::run_script(&script, x.as_mut())),
                            );
                            crate::amber::file_report(&name, &script, runs)
                        }
                    },
                    Err(reason) => {
                        let mut r = FileReport::not_run(
                            &name,
                            FileStatus::Error,
                            reason.clone(),
                            Some(ErrorClass::Backend),
                        );
                        r.expects = expect_lines(&script);
                        r
                    }
                },
            },
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(file_text(&rep).as_bytes());
        let _ = out.flush();
        files.push(rep);
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut json = report::json(&files, seconds);
    // With a baseline or flakes, the verdicts are the cases' (lockstep merge's) after both lists;
    // a flake is retried by running its file again on its own.
    let verdict = (!exp.is_empty()).then(|| {
        let mut retry = |c: &crate::merge::Case| {
            let file = c.name.strip_prefix("amber/")?;
            let again = AmberArgs {
                files: vec![PathBuf::from(file)],
                json: None,
                junit: None,
                fidelity: None,
                against: Vec::new(),
                shard: None,
                lists: Default::default(),
                ..a.clone()
            };
            println!("retrying {file} (a listed flake)");
            Some(run(&again).is_ok())
        };
        crate::merge::apply_to_report(crate::merge::Kind::Amber, &mut json, &exp, &mut retry)
    });
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        report::write_atomic(p, &(text + "\n"))
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.junit {
        let xml = match verdict {
            Some(_) => crate::merge::junit(&json),
            None => report::junit(&files, seconds),
        };
        report::write_atomic(p, &xml)
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    let mut summary = summary_text(&summarize(&files), seconds);
    if let Some(p) = &a.fidelity {
        summary += &write_fidelity(p, against, device_name.as_deref(), &files)?;
    }
    let code = match verdict {
        None => exit_code(&files),
        Some(passed) => {
            summary += &crate::merge::expectations_text(&json);
            listed_code(passed, &json, &files)
        }
    };
    match code {
        0 => Ok(summary),
        code => Err(CliError {
            code,
            message: summary,
        }),
    }
}

/// The device runs of `paths`, each in a child process (`lockstep amber --device-child`), one
/// child for as many files as it survives: a child that crashes or hangs costs the file it was
/// on, which is reported as such, and a new child takes the rest. Returns each file's device run
/// (by path as given) and the device's name.
#[allow(clippy::type_complexity)]
fn device_in_children(
    a: &AmberArgs,
    index: Option<usize>,
    paths: &[PathBuf],
    size: Option<u32>,
) -> Result<
    (
        std::collections::HashMap<String, crate::amber::RunReport>,
        Option<String>,
    ),
    CliError,
> {
    use std::io::BufRead;
    use std::process::{Command as Proc, Stdio};
    let exe = std::env::current_exe()
        .map_err(|e| CliError::internal(format!("finding lockstep's own executable: {e}")))?;
    let mut out = std::collections::HashMap::new();
    let mut name = None;
    let mut next = 0usize;
    while next < paths.len() {
        let mut cmd = Proc::new(&exe);
        cmd.arg("amber").arg("--device-child");
        if let Some(i) = index {
            cmd.arg("--device").arg(i.to_string());
        }
        if let Some(s) = size {
            cmd.arg("--subgroup-size").arg(s.to_string());
        }
        cmd.args(&paths[next..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| CliError::internal(format!("starting a device child process: {e}")))?;
        let stdout = child.stdout.take().expect("piped");
        // Lines come from a reader thread, so that a hung file can time out.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut current: Option<String> = None;
        let timeout = std::time::Duration::from_secs(a.device_timeout.max(1));
        let mut hung = false;
        loop {
            match rx.recv_timeout(timeout) {
                Ok(line) => {
                    let Ok(j) = serde_json::from_str::<serde_json::Value>(&line) else {
                        continue;
                    };
                    if let Some(d) = j.get("device").and_then(|d| d.as_str()) {
                        name = Some(d.to_string());
                    } else if let Some(f) = j.get("start").and_then(|f| f.as_str()) {
                        current = Some(f.to_string());
                    } else if let (Some(f), Some(run)) =
                        (j.get("file").and_then(|f| f.as_str()), j.get("run"))
                    {
                        if let Some(r) = crate::amber::RunReport::device_from_json(run) {
                            out.insert(f.to_string(), r);
                        }
                        current = None;
                        next += 1;
                    } else if let Some(e) = j.get("fatal").and_then(|e| e.as_str()) {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(CliError::no_device(e.to_string()));
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if current.is_some() => {
                    hung = true;
                    let _ = child.kill();
                    break;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait().ok();
        let _ = reader.join();
        if let Some(f) = current {
            let why = if hung {
                format!(
                    "the device run did not finish within {} s (--device-timeout): a hung device or driver",
                    a.device_timeout
                )
            } else {
                format!(
                    "the driver crashed running this file ({}); the model's findings stand",
                    exit_text(status)
                )
            };
            out.insert(f, crate::amber::RunReport::device_lost(why));
            next += 1;
        } else if next < paths.len() {
            // The child ended between files without saying why (it could not start a device).
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(CliError::internal(format!(
                "the device child process ended early ({}): {}",
                exit_text(status),
                err.trim()
            )));
        }
    }
    Ok((out, name))
}

/// The sizes the device runs at: `[None]` (its default, unlabelled) without `--subgroup-size`;
/// with it, every size asked that the device offers (its default first), or its default alone
/// (labelled) when it offers none of them.
fn device_sizes(
    index: Option<usize>,
    asked: &[SubgroupSize],
) -> Result<Vec<Option<u32>>, CliError> {
    if asked.is_empty() {
        return Ok(vec![None]);
    }
    #[cfg(feature = "vulkan")]
    {
        let list = crate::vulkan::Context::list().map_err(crate::cli::devices::vk_error)?;
        let info = match index {
            Some(i) => list.get(i),
            None => {
                let name = crate::vulkan::Context::new(None)
                    .map_err(crate::cli::devices::vk_error)?
                    .info
                    .name
                    .clone();
                list.iter().find(|d| d.name == name)
            }
        }
        .ok_or_else(|| CliError::usage("no such device (see `lockstep devices`)"))?;
        let c = &info.capabilities;
        let offers = |n: u32| {
            n == c.subgroup_size
                || (c.size_control && (c.min_subgroup_size..=c.max_subgroup_size).contains(&n))
        };
        let mut v: Vec<u32> = asked
            .iter()
            .map(|s| s.get())
            .filter(|n| offers(*n))
            .collect();
        v.sort_by_key(|n| (*n != c.subgroup_size, *n));
        if v.is_empty() {
            v.push(c.subgroup_size);
        }
        Ok(v.into_iter().map(Some).collect())
    }
    #[cfg(not(feature = "vulkan"))]
    {
        let _ = index;
        Ok(vec![None])
    }
}

/// How a child process ended, for people: `signal 11 (SIGSEGV)`, `exit status 3`.
fn exit_text(s: Option<std::process::ExitStatus>) -> String {
    let Some(s) = s else {
        return "no exit status".into();
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            let name = match sig {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("signal {sig}{name}");
        }
    }
    format!("{s}")
}

/// The device child's backend: the device, at `size` when one is given.
fn child_backends(plan: &BackendPlan, size: Option<&str>) -> Result<Vec<Box<dyn Backend>>, String> {
    #[cfg(feature = "vulkan")]
    if let (Some(index), Some(s)) = (plan.device, size) {
        let n: u32 = s
            .trim()
            .parse()
            .map_err(|_| format!("--subgroup-size {s}: one size in a device child"))?;
        let dev = crate::amber::engines::DeviceBackend::new(index)
            .map_err(|e| e.to_string())?
            .with_size(n)?;
        return Ok(vec![Box::new(dev)]);
    }
    let _ = size;
    backends(plan)
}

/// `--device-child`: the device side of each file, one JSON line per file on stdout — `{"start":
/// FILE}` before it runs, `{"file": FILE, "run": …}` after.
fn device_child(a: &AmberArgs) -> Result<String, CliError> {
    let plan = BackendPlan {
        device: Some(a.device),
        model_modes: Vec::new(),
        subgroup_sizes: Vec::new(),
    };
    let mut out = std::io::stdout().lock();
    let mut backends = match child_backends(&plan, a.subgroup_size.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            let _ = writeln!(out, "{}", serde_json::json!({ "fatal": e }));
            return Ok(String::new());
        }
    };
    if let Some(n) = backends.iter().find_map(|b| b.device_name()) {
        let _ = writeln!(out, "{}", serde_json::json!({ "device": n }));
    }
    // For the tests of crash isolation: a child that dies on the file named here, as a driver would.
    let abort_on = std::env::var("LOCKSTEP_CHILD_ABORT").ok();
    for path in &a.files {
        let name = path.display().to_string();
        let _ = writeln!(out, "{}", serde_json::json!({ "start": name }));
        let _ = out.flush();
        if abort_on
            .as_deref()
            .is_some_and(|x| !x.is_empty() && name.contains(x))
        {
            std::process::abort();
        }
        let run = match read(path) {
            Err(r) => r.runs.first().cloned(),
            Ok(text) => match parse_file(&name, &text) {
                Err(_) => None,
                Ok(script) => backends
                    .first_mut()
                    .map(|b| crate::amber::run_script(&script, b.as_mut())),
            },
        };
        let run = run.unwrap_or_else(|| {
            crate::amber::RunReport::device_lost("the file does not parse".into())
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::json!({ "file": name, "run": run.to_json() })
        );
        let _ = out.flush();
    }
    Ok(String::new())
}

/// Every `--against FILE`, read; `--fidelity` needs them or a device run (`device`).
#[allow(clippy::type_complexity)]
fn read_againsts(
    a: &AmberArgs,
    device: bool,
) -> Result<Vec<(PathBuf, crate::amber::fidelity::DeviceVerdicts)>, CliError> {
    let read = |p: &PathBuf| read_against(p).map(|v| (p.clone(), v));
    let against: Vec<_> = a.against.iter().map(read).collect::<Result<_, _>>()?;
    if a.fidelity.is_some() && against.is_empty() && !device {
        return Err(CliError::usage(
            "--fidelity compares the model with a device: run with a device, or give its recorded verdicts with --against FILE",
        ));
    }
    Ok(against)
}

/// `--against FILE`: a device's recorded verdicts (the JSON of an earlier run).
fn read_against(p: &std::path::Path) -> Result<crate::amber::fidelity::DeviceVerdicts, CliError> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| CliError::usage(format!("--against {}: {e}", p.display())))?;
    let j: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::usage(format!("--against {}: not JSON ({e})", p.display())))?;
    crate::amber::fidelity::DeviceVerdicts::from_json(&j)
        .map_err(|e| CliError::usage(format!("--against {}: {e}", p.display())))
}

/// `--fidelity FILE`: the model's verdicts against the device's (each of `against`, or the device
/// of this run), written as a table each (under a heading naming the recording when there are
/// several); the summary's lines, one per table.
fn write_fidelity(
    p: &std::path::Path,
    against: Vec<(PathBuf, crate::amber::fidelity::DeviceVerdicts)>,
    device_name: Option<&str>,
    files: &[FileReport],
) -> Result<String, CliError> {
    let several = against.len() > 1;
    let devices = if against.is_empty() {
        let name = device_name.unwrap_or("the device");
        vec![(
            None,
            crate::amber::fidelity::DeviceVerdicts::from_reports(name, files),
        )]
    } else {
        against.into_iter().map(|(p, d)| (Some(p), d)).collect()
    };
    let (mut md, mut lines) = (String::new(), String::new());
    for (from, device) in &devices {
        let (per_file, totals) = crate::amber::fidelity::fidelity(files, device);
        if let Some(from) = from.as_ref().filter(|_| several) {
            md += &format!("## Against the verdicts in `{}`\n\n", from.display());
        }
        md += &crate::amber::fidelity::markdown(&per_file, &totals, &device.device);
        lines += &format!(
            "fidelity against {}: the model passes {} of the {} EXPECTs the device passed ({:.1}%; {:.1}% in the files it runs) — table in {}\n",
            device.device,
            totals.agree,
            totals.device_pass,
            totals.percent(),
            totals.percent_run(),
            p.display()
        );
    }
    report::write_atomic(p, &md)
        .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    Ok(lines)
}

/// The exit code of a run with a baseline or flake list: 0 where the listed verdicts pass, else
/// the code of the files still failing (a mismatch where they only differ from the list).
fn listed_code(passed: bool, json: &serde_json::Value, files: &[FileReport]) -> i32 {
    let failing: std::collections::BTreeSet<String> = crate::merge::cases_of(json)
        .into_iter()
        .filter(|c| c.status.fails())
        .map(|c| c.name)
        .collect();
    let still: Vec<FileReport> = files
        .iter()
        .filter(|f| failing.contains(&format!("amber/{}", f.file)))
        .cloned()
        .collect();
    match (passed, exit_code(&still)) {
        (true, _) => 0,
        (false, 0) => EXIT_MISMATCH,
        (false, c) => c,
    }
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn plan_example() {
        use crate::cli::{Cli, Command};
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "lockstep",
            "amber",
            "a.amber",
            "--mode",
            "all",
            "--model-only",
        ])
        .unwrap();
        let Command::Amber(a) = cli.command else {
            unreachable!()
        };
        let plan = crate::cli::amber::plan(&a).unwrap();
        assert_eq!(plan.device, None);
        assert_eq!(plan.model_modes.len(), 3);
    }
}
