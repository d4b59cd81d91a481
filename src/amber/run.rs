//! Executing a script's commands against one backend: buffers persist across `RUN`s, `COPY` is done
//! here on the host (bytes and annotations), each `EXPECT` gets a verdict.

use super::backend::{
    Annotation, AnnotationKind, Backend, BackendError, BackendKind, Dispatch, DispatchBinding,
    DispatchBuffer,
};
use super::expect::{evaluate, Status};
use super::parse::{ParseFailure, ScriptError};
use super::script::{Command, Script};
use crate::reconverge::Mode;

/// The verdict of one EXPECT line on one run (the worst over a REPEAT's iterations).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The EXPECT's line.
    pub line: usize,
    /// pass, fail or undefined.
    pub status: Status,
    /// Why (fail: the first differing components; undefined: the model's chain); `None` on pass.
    pub why: Option<String>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Every EXPECT passed.
    Pass,
    /// An EXPECT failed.
    Fail,
    /// No EXPECT failed, but one was undefined on the model.
    Undefined,
    /// The backend lacks something the script needs.
    Unsupported,
    /// The script or the backend failed.
    Error,
}

impl RunStatus {
    /// `pass`, `fail`, `undefined`, `unsupported`, `error`.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Pass => "pass",
            RunStatus::Fail => "fail",
            RunStatus::Undefined => "undefined",
            RunStatus::Unsupported => "unsupported",
            RunStatus::Error => "error",
        }
    }
}

/// Whose fault an error is (it picks the exit code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// The script is at fault (exit 64).
    BadInput,
    /// The backend or device failed (exit 70).
    Backend,
}

/// One run of a file on one backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    /// device or model.
    pub backend: BackendKind,
    /// The reconvergence mode of a model run: the forced one, or the one the dispatches report
    /// (the strongest when pipelines declare different ones); `None` for a device.
    pub mode: Option<Mode>,
    /// The mode each pipeline ran under, as the backend reported it, in first-run order.
    pub pipeline_modes: Vec<(String, Mode)>,
    /// How it ended.
    pub status: RunStatus,
    /// Why it was unsupported or an error.
    pub reason: Option<String>,
    /// The class of an error.
    pub error: Option<ErrorClass>,
    /// One verdict per EXPECT line reached, in script order.
    pub expects: Vec<Verdict>,
    /// Dispatches run.
    pub dispatches: usize,
    /// The subgroup size of a model run.
    pub size: Option<u32>,
}

impl RunReport {
    /// The run as JSON (what `--json` writes for it).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "backend": self.backend.name(),
            "mode": self.mode.map(|m| m.name()),
            "status": self.status.name(),
            "reason": self.reason,
            "dispatches": self.dispatches,
            "subgroup_size": self.size,
            "expects": self.expects.iter().map(|v| serde_json::json!({
                "line": v.line, "status": v.status.name(), "why": v.why,
            })).collect::<Vec<_>>(),
        })
    }

    /// A device run back from [`RunReport::to_json`] (a child process's).
    pub fn device_from_json(j: &serde_json::Value) -> Option<RunReport> {
        let status = match j.get("status")?.as_str()? {
            "pass" => RunStatus::Pass,
            "fail" => RunStatus::Fail,
            "undefined" => RunStatus::Undefined,
            "unsupported" => RunStatus::Unsupported,
            _ => RunStatus::Error,
        };
        let expects = j
            .get("expects")?
            .as_array()?
            .iter()
            .filter_map(|e| {
                Some(Verdict {
                    line: e.get("line")?.as_u64()? as usize,
                    status: match e.get("status")?.as_str()? {
                        "pass" => Status::Pass,
                        "undefined" => Status::Undefined,
                        _ => Status::Fail,
                    },
                    why: e.get("why").and_then(|w| w.as_str()).map(String::from),
                })
            })
            .collect();
        Some(RunReport {
            backend: BackendKind::Device,
            mode: None,
            pipeline_modes: Vec::new(),
            status,
            reason: j.get("reason").and_then(|r| r.as_str()).map(String::from),
            error: (status == RunStatus::Error).then_some(ErrorClass::Backend),
            expects,
            dispatches: j.get("dispatches").and_then(|d| d.as_u64()).unwrap_or(0) as usize,
            size: j
                .get("subgroup_size")
                .and_then(|d| d.as_u64())
                .map(|s| s as u32),
        })
    }

    /// A device run that did not come back: the driver crashed or hung (`why`).
    pub fn device_lost(why: String) -> RunReport {
        RunReport {
            backend: BackendKind::Device,
            mode: None,
            pipeline_modes: Vec::new(),
            status: RunStatus::Error,
            reason: Some(why),
            error: Some(ErrorClass::Backend),
            expects: Vec::new(),
            dispatches: 0,
            size: None,
        }
    }

    /// `device` or `model (sucf)`.
    pub fn label(&self) -> String {
        let base = match self.mode {
            Some(m) => format!("{} ({m})", self.backend.name()),
            None => self.backend.name().to_string(),
        };
        match self.size {
            Some(s) => format!("{base} @{s}"),
            None => base,
        }
    }
}

enum Stop {
    Unsupported(String),
    Error(ErrorClass, String),
}

struct State<'a> {
    script: &'a Script,
    bytes: Vec<Vec<u8>>,
    annotations: Vec<Vec<Annotation>>,
    verdicts: Vec<Verdict>,
    dispatches: usize,
    modes: Vec<(String, Mode)>,
}

impl State<'_> {
    fn record(
        &mut self,
        line: usize,
        status: Status,
        why: Option<String>,
        iteration: Option<(u32, u32)>,
    ) {
        let why = match (why, iteration) {
            (Some(w), Some((i, n))) => Some(format!("REPEAT iteration {} of {n}: {w}", i + 1)),
            (w, _) => w,
        };
        match self.verdicts.iter_mut().find(|v| v.line == line) {
            Some(v) if status > v.status => {
                v.status = status;
                v.why = why;
            }
            Some(_) => {}
            None => self.verdicts.push(Verdict { line, status, why }),
        }
    }
}

fn bad_input(e: ScriptError) -> Stop {
    Stop::Error(ErrorClass::BadInput, e.to_string())
}

/// `RUN pipeline x y z`: the dispatch on `backend` over the buffers its pipeline binds; what the
/// backend returns replaces those buffers and their annotations (checked first: one buffer each,
/// of its size, annotations inside it).
fn run_pipeline(
    st: &mut State,
    backend: &mut dyn Backend,
    line: usize,
    pipeline: usize,
    groups: [u32; 3],
) -> Result<(), Stop> {
    let p = &st.script.pipelines[pipeline];
    let mut used: Vec<usize> = Vec::new();
    let mut bindings = Vec::with_capacity(p.bindings.len());
    for b in &p.bindings {
        let i = match used.iter().position(|&u| u == b.buffer) {
            Some(i) => i,
            None => {
                used.push(b.buffer);
                used.len() - 1
            }
        };
        let size = st.bytes[b.buffer].len();
        let window = b.window(size).map_err(|m| {
            bad_input(ScriptError {
                line: b.line,
                command: "BIND".into(),
                message: format!("{}: {m}", st.script.buffers[b.buffer].name),
            })
        })?;
        bindings.push(DispatchBinding {
            kind: b.kind,
            buffer: i,
            window,
            element: b.element,
        });
    }
    let d = Dispatch {
        script: st.script,
        line,
        pipeline: p,
        shader: &st.script.shaders[p.shader],
        buffers: used
            .iter()
            .map(|&u| DispatchBuffer {
                decl: &st.script.buffers[u],
                bytes: &st.bytes[u],
                annotations: &st.annotations[u],
            })
            .collect(),
        bindings,
        workgroups: groups,
    };
    let out = backend.dispatch(&d).map_err(|e| match e {
        BackendError::Unsupported(m) => {
            Stop::Unsupported(format!("line {line}: RUN {}: {m}", p.name))
        }
        BackendError::BadInput {
            line: Some(l),
            message,
        } => Stop::Error(ErrorClass::BadInput, format!("line {l}: {message}")),
        BackendError::BadInput {
            line: None,
            message,
        } => Stop::Error(
            ErrorClass::BadInput,
            format!("line {line}: RUN {}: {message}", p.name),
        ),
        BackendError::Failed(m) => Stop::Error(
            ErrorClass::Backend,
            format!("line {line}: RUN {}: {m}", p.name),
        ),
    })?;
    st.dispatches += 1;
    let broken = |m: String| {
        Stop::Error(
            ErrorClass::Backend,
            format!("line {line}: RUN {}: the backend returned {m}", p.name),
        )
    };
    if out.buffers.len() != used.len() {
        return Err(broken(format!(
            "{} buffers for {} bound",
            out.buffers.len(),
            used.len()
        )));
    }
    if !out.annotations.is_empty() && out.annotations.len() != used.len() {
        return Err(broken(format!(
            "annotations for {} buffers, not {}",
            out.annotations.len(),
            used.len()
        )));
    }
    for (j, &u) in used.iter().enumerate() {
        let size = st.script.buffers[u].size();
        if out.buffers[j].len() != size {
            return Err(broken(format!(
                "{} bytes for buffer {} of {size}",
                out.buffers[j].len(),
                st.script.buffers[u].name
            )));
        }
        if let Some(a) = out.annotations.get(j).and_then(|a| {
            a.iter()
                .find(|a| a.bytes.start > a.bytes.end || a.bytes.end > size)
        }) {
            return Err(broken(format!(
                "an annotation of bytes {:?} outside buffer {} ({size} bytes)",
                a.bytes, st.script.buffers[u].name
            )));
        }
    }
    let mut annotations = out.annotations;
    for (j, (&u, bytes)) in used.iter().zip(out.buffers).enumerate() {
        st.bytes[u] = bytes;
        st.annotations[u] = annotations
            .get_mut(j)
            .map(std::mem::take)
            .unwrap_or_default();
    }
    if let Some(m) = out.mode
        && !st.modes.iter().any(|(n, _)| *n == p.name)
    {
        st.modes.push((p.name.clone(), m));
    }

    Ok(())
}

fn exec(
    st: &mut State,
    cmds: &[Command],
    backend: &mut dyn Backend,
    iteration: Option<(u32, u32)>,
) -> Result<(), Stop> {
    for c in cmds {
        match c {
            Command::Run {
                line,
                pipeline,
                groups,
            } => run_pipeline(st, backend, *line, *pipeline, *groups)?,
            Command::Copy { from, to, .. } => {
                st.bytes[*to] = st.bytes[*from].clone();
                st.annotations[*to] = st.annotations[*from].clone();
            }
            Command::Write {
                buffer,
                offset,
                bytes,
                ..
            } => {
                let r = *offset..*offset + bytes.len();
                st.bytes[*buffer][r.clone()].copy_from_slice(bytes);
                // What the host wrote is defined: annotations keep only the bytes outside it.
                let old = std::mem::take(&mut st.annotations[*buffer]);
                for a in old {
                    if a.bytes.start < r.start {
                        let mut x = a.clone();
                        x.bytes.end = x.bytes.end.min(r.start);
                        st.annotations[*buffer].push(x);
                    }
                    if a.bytes.end > r.end {
                        let mut x = a;
                        x.bytes.start = x.bytes.start.max(r.end);
                        st.annotations[*buffer].push(x);
                    }
                }
            }
            Command::Expect(e) => {
                let (status, why) =
                    evaluate(e, st.script, &st.bytes, &st.annotations).map_err(bad_input)?;
                st.record(e.line, status, why, iteration);
            }
            Command::Repeat {
                count, commands, ..
            } => {
                for i in 0..*count {
                    exec(st, commands, backend, Some((i, *count)))?;
                }
            }
        }
    }
    Ok(())
}

/// Runs every command of `script` on `backend`, from the buffers' initial contents.
pub fn run_script(script: &Script, backend: &mut dyn Backend) -> RunReport {
    let forced = backend.forced_mode();
    let mut report = RunReport {
        backend: backend.kind(),
        mode: forced,
        pipeline_modes: Vec::new(),
        status: RunStatus::Pass,
        reason: None,
        error: None,
        expects: Vec::new(),
        dispatches: 0,
        size: backend.model_size(),
    };
    if let Err(u) = backend.requirements(script) {
        report.status = RunStatus::Unsupported;
        report.reason = Some(u.to_string());
        return report;
    }
    let mut st = State {
        script,
        bytes: script.buffers.iter().map(|b| b.initial.clone()).collect(),
        // A multisampled image cannot be filled from a buffer (Vulkan copies between buffers
        // and single-sample images only), so Amber leaves its texels as the new image holds them:
        // undefined until written (Vulkan, "Image Layouts": VK_IMAGE_LAYOUT_UNDEFINED contents).
        annotations: script
            .buffers
            .iter()
            .map(|b| match b.image {
                Some(i) if i.extent.samples > 1 => vec![Annotation {
                    bytes: 0..b.size(),
                    kind: AnnotationKind::Undefined,
                    why: format!(
                        "{} is a multisampled image: nothing fills it before the shader writes it, and a new image's contents are undefined",
                        b.name
                    ),
                }],
                _ => Vec::new(),
            })
            .collect(),
        verdicts: Vec::new(),
        dispatches: 0,
        modes: Vec::new(),
    };
    let stop = exec(&mut st, &script.commands, backend, None).err();
    report.expects = st.verdicts;
    report.dispatches = st.dispatches;
    if report.backend == BackendKind::Model && forced.is_none() {
        // The strongest mode any pipeline declared: helper pipelines (a `fill` shader computing the
        // expected values) usually declare nothing and run under base.
        report.mode = Mode::ALL
            .into_iter()
            .find(|m| st.modes.iter().any(|(_, pm)| pm == m));
    }
    report.pipeline_modes = st.modes;
    report.status = match stop {
        Some(Stop::Unsupported(r)) => {
            report.reason = Some(r);
            RunStatus::Unsupported
        }
        Some(Stop::Error(class, r)) => {
            report.reason = Some(r);
            report.error = Some(class);
            RunStatus::Error
        }
        None if report.expects.iter().any(|v| v.status == Status::Fail) => RunStatus::Fail,
        None if report.expects.iter().any(|v| v.status == Status::Undefined) => {
            RunStatus::Undefined
        }
        None => RunStatus::Pass,
    };
    report
}

/// A file's overall result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileStatus {
    /// Every EXPECT passed on every run.
    Pass,
    /// An EXPECT failed, or was undefined, on some run.
    Fail,
    /// Outside the compute subset, or a backend lacks what it needs (and nothing failed).
    Unsupported,
    /// The script or a backend failed.
    Error,
}

impl FileStatus {
    /// `pass`, `fail`, `unsupported`, `error`.
    pub fn name(self) -> &'static str {
        match self {
            FileStatus::Pass => "pass",
            FileStatus::Fail => "fail",
            FileStatus::Unsupported => "unsupported",
            FileStatus::Error => "error",
        }
    }
}

/// One EXPECT of a file, for report tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectLine {
    /// Its line.
    pub line: usize,
    /// The command as written.
    pub text: String,
}

/// The result of one file over every run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    /// The path as given.
    pub file: String,
    /// The overall status.
    pub status: FileStatus,
    /// Why it is not a pass (the error or unsupported reason, or which runs failed).
    pub reason: Option<String>,
    /// The class of an error (picks the exit code).
    pub error: Option<ErrorClass>,
    /// The file's EXPECTs, in order (empty when it did not parse).
    pub expects: Vec<ExpectLine>,
    /// One per backend run.
    pub runs: Vec<RunReport>,
}

impl FileReport {
    /// A file that could not be read, did not parse, or is outside the subset.
    pub fn not_run(
        file: &str,
        status: FileStatus,
        reason: String,
        error: Option<ErrorClass>,
    ) -> Self {
        FileReport {
            file: file.to_string(),
            status,
            reason: Some(reason),
            error,
            expects: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// Parses `text`; a failure is already the file's report (error or unsupported).
///
/// `FILE` names in the script are looked up in `file`'s folder.
pub fn parse_file(file: &str, text: &str) -> Result<Script, Box<FileReport>> {
    let dir = std::path::Path::new(file).parent();
    crate::amber::parse_in(text, dir).map_err(|f| {
        Box::new(match f {
            ParseFailure::Error(e) => FileReport::not_run(
                file,
                FileStatus::Error,
                e.to_string(),
                Some(ErrorClass::BadInput),
            ),
            ParseFailure::Unsupported(u) => {
                FileReport::not_run(file, FileStatus::Unsupported, u.to_string(), None)
            }
        })
    })
}

/// Runs a parsed script on every backend and combines the runs: error if any run errs, else fail
/// if an EXPECT failed or was undefined on any run, else unsupported if any run was, else pass.
pub fn run_parsed(file: &str, script: &Script, backends: &mut [Box<dyn Backend>]) -> FileReport {
    let runs: Vec<RunReport> = backends
        .iter_mut()
        .map(|b| run_script(script, b.as_mut()))
        .collect();
    file_report(file, script, runs)
}

/// A file's report from its runs (the status: error, else fail, else unsupported, else pass).
pub fn file_report(file: &str, script: &Script, runs: Vec<RunReport>) -> FileReport {
    let describe = |want: &[RunStatus]| -> Vec<String> {
        runs.iter()
            .filter(|r| want.contains(&r.status))
            .map(|r| match (&r.reason, r.status) {
                (Some(reason), _) => format!("{}: {reason}", r.label()),
                (None, s) => {
                    let n = r
                        .expects
                        .iter()
                        .filter(|v| v.status.name() == s.name())
                        .count();
                    format!(
                        "{}: {n} EXPECT{} {}",
                        r.label(),
                        if n == 1 { "" } else { "s" },
                        if s == RunStatus::Fail {
                            "failed"
                        } else {
                            "undefined"
                        }
                    )
                }
            })
            .collect()
    };
    let (status, reason, error) = if runs.iter().any(|r| r.status == RunStatus::Error) {
        let class = runs.iter().filter_map(|r| r.error).min();
        (FileStatus::Error, describe(&[RunStatus::Error]), class)
    } else if runs
        .iter()
        .any(|r| matches!(r.status, RunStatus::Fail | RunStatus::Undefined))
    {
        (
            FileStatus::Fail,
            describe(&[RunStatus::Fail, RunStatus::Undefined]),
            None,
        )
    } else if runs.iter().any(|r| r.status == RunStatus::Unsupported) {
        (
            FileStatus::Unsupported,
            describe(&[RunStatus::Unsupported]),
            None,
        )
    } else {
        (FileStatus::Pass, Vec::new(), None)
    };
    FileReport {
        file: file.to_string(),
        status,
        reason: (!reason.is_empty()).then(|| reason.join("; ")),
        error,
        expects: expect_lines(script),
        runs,
    }
}

/// The EXPECT lines of a script, for report tables.
pub fn expect_lines(script: &Script) -> Vec<ExpectLine> {
    script
        .expects()
        .into_iter()
        .map(|e| ExpectLine {
            line: e.line,
            text: e.text.clone(),
        })
        .collect()
}
