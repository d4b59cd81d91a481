//! Reports of `lockstep amber`: a table per file and a summary (text), JSON, JUnit XML; files are
//! written atomically (a temporary file in the same directory, then a rename).

use super::expect::Status;
use super::run::{ErrorClass, FileReport, FileStatus};
use serde_json::{json, Value as Json};

/// Totals over files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files.
    pub files: usize,
    /// Files that passed.
    pub pass: usize,
    /// Files that failed.
    pub fail: usize,
    /// Unsupported files.
    pub unsupported: usize,
    /// Files in error.
    pub error: usize,
    /// EXPECT verdicts (one per EXPECT line per run) that passed.
    pub expects_pass: usize,
    /// … failed.
    pub expects_fail: usize,
    /// … were undefined.
    pub expects_undefined: usize,
    /// Backend runs.
    pub runs: usize,
}

/// Totals of `files`.
pub fn summarize(files: &[FileReport]) -> Summary {
    let mut s = Summary {
        files: files.len(),
        ..Summary::default()
    };
    for f in files {
        match f.status {
            FileStatus::Pass => s.pass += 1,
            FileStatus::Fail => s.fail += 1,
            FileStatus::Unsupported => s.unsupported += 1,
            FileStatus::Error => s.error += 1,
        }
        s.runs += f.runs.len();
        for v in f.runs.iter().flat_map(|r| &r.expects) {
            match v.status {
                Status::Pass => s.expects_pass += 1,
                Status::Fail => s.expects_fail += 1,
                Status::Undefined => s.expects_undefined += 1,
            }
        }
    }
    s
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// One file as text: its status line, then (when it ran) a table of EXPECT lines × runs and the
/// reasons of the EXPECTs that did not pass.
pub fn file_text(f: &FileReport) -> String {
    let mut out = format!("{}: {}", f.file, f.status.name());
    if let Some(r) = &f.reason {
        out += &format!(" — {r}");
    }
    out.push('\n');
    if f.runs.is_empty() || f.expects.is_empty() {
        return out;
    }
    let mut rows = vec![{
        let mut h = vec!["line".to_string(), "expect".to_string()];
        h.extend(f.runs.iter().map(|r| r.label()));
        h
    }];
    let mut details = Vec::new();
    for e in &f.expects {
        let mut row = vec![e.line.to_string(), cut(&e.text, 48)];
        for r in &f.runs {
            match r.expects.iter().find(|v| v.line == e.line) {
                Some(v) => {
                    row.push(v.status.name().to_string());
                    if let Some(w) = &v.why {
                        details.push(format!(
                            "  line {} {}: {} — {w}",
                            e.line,
                            r.label(),
                            v.status
                        ));
                    }
                }
                None => row.push("-".to_string()),
            }
        }
        rows.push(row);
    }
    for line in crate::text::table(&rows).lines() {
        out += "  ";
        out += line;
        out.push('\n');
    }
    for d in details {
        out += &d;
        out.push('\n');
    }
    out
}

/// The summary line.
pub(crate) fn summary_text(s: &Summary, seconds: f64) -> String {
    format!(
        "{} file{}: {} pass, {} fail, {} unsupported, {} error · EXPECT verdicts over {} run{}: {} pass, {} fail, {} undefined · {seconds:.2} s\n",
        s.files,
        if s.files == 1 { "" } else { "s" },
        s.pass,
        s.fail,
        s.unsupported,
        s.error,
        s.runs,
        if s.runs == 1 { "" } else { "s" },
        s.expects_pass,
        s.expects_fail,
        s.expects_undefined
    )
}

/// The JSON report: `{"files": [{"file", "status", "reason", "runs": [{"backend", "mode",
/// "status", "expects": [{"line", "status", "why"}]}]}], "summary": {…}}`.
pub fn json(files: &[FileReport], seconds: f64) -> Json {
    let s = summarize(files);
    json!({
        "files": files.iter().map(|f| json!({
            "file": f.file,
            "status": f.status.name(),
            "reason": f.reason,
            "error": f.error.map(|c| match c {
                ErrorClass::BadInput => "bad_input",
                ErrorClass::Backend => "backend",
            }),
            "runs": f.runs.iter().map(|r| json!({
                "backend": r.backend.name(),
                "mode": r.mode.map(|m| m.name()),
                "subgroup_size": r.size,
                "pipeline_modes": r.pipeline_modes.iter()
                    .map(|(p, m)| json!({"pipeline": p, "mode": m.name()}))
                    .collect::<Vec<_>>(),
                "status": r.status.name(),
                "reason": r.reason,
                "dispatches": r.dispatches,
                "expects": r.expects.iter().map(|v| json!({
                    "line": v.line,
                    "status": v.status.name(),
                    "why": v.why,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "summary": {
            "files": s.files,
            "pass": s.pass,
            "fail": s.fail,
            "unsupported": s.unsupported,
            "error": s.error,
            "runs": s.runs,
            "expects": {
                "pass": s.expects_pass,
                "fail": s.expects_fail,
                "undefined": s.expects_undefined,
            },
            "seconds": seconds,
        },
    })
}

/// JUnit XML: a testsuite per file, a testcase per run (or one for a file that did not run).
pub fn junit(files: &[FileReport], seconds: f64) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for f in files {
        let mut cases = Vec::new();
        let (mut t, mut fl, mut er, mut sk) = (0, 0, 0, 0);
        let name = crate::text::xml_escape(&f.file);
        if f.runs.is_empty() {
            t += 1;
            let reason = crate::text::xml_escape(f.reason.as_deref().unwrap_or(""));
            cases.push(match f.status {
                FileStatus::Unsupported => {
                    sk += 1;
                    format!("    <testcase classname=\"{name}\" name=\"parse\"><skipped message=\"unsupported: {reason}\"/></testcase>")
                }
                FileStatus::Error => {
                    er += 1;
                    format!("    <testcase classname=\"{name}\" name=\"parse\"><error message=\"{reason}\"/></testcase>")
                }
                _ => format!("    <testcase classname=\"{name}\" name=\"parse\"/>"),
            });
        }
        for r in &f.runs {
            t += 1;
            let label = crate::text::xml_escape(&r.label());
            let body = match r.status {
                super::run::RunStatus::Pass => String::new(),
                super::run::RunStatus::Unsupported => {
                    sk += 1;
                    format!(
                        "<skipped message=\"unsupported: {}\"/>",
                        crate::text::xml_escape(r.reason.as_deref().unwrap_or(""))
                    )
                }
                super::run::RunStatus::Error => {
                    er += 1;
                    format!(
                        "<error message=\"{}\"/>",
                        crate::text::xml_escape(r.reason.as_deref().unwrap_or(""))
                    )
                }
                super::run::RunStatus::Fail | super::run::RunStatus::Undefined => {
                    fl += 1;
                    let bad: Vec<String> = r
                        .expects
                        .iter()
                        .filter(|v| v.status != Status::Pass)
                        .map(|v| {
                            format!(
                                "line {}: {}: {}",
                                v.line,
                                v.status,
                                v.why.as_deref().unwrap_or("")
                            )
                        })
                        .collect();
                    format!(
                        "<failure message=\"{} of {} EXPECTs did not pass\">{}</failure>",
                        bad.len(),
                        r.expects.len(),
                        crate::text::xml_escape(&bad.join("\n"))
                    )
                }
            };
            cases.push(format!(
                "    <testcase classname=\"{name}\" name=\"{label}\">{body}</testcase>"
            ));
        }
        suites += &format!(
            "  <testsuite name=\"{name}\" tests=\"{t}\" failures=\"{fl}\" errors=\"{er}\" skipped=\"{sk}\">\n"
        );
        for c in cases {
            suites += &c;
            suites.push('\n');
        }
        suites += "  </testsuite>\n";
        tests += t;
        failures += fl;
        errors += er;
        skipped += sk;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep amber\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n{suites}</testsuites>\n"
    )
}

pub use crate::files::{check_writable, write_atomic};
