//! Fidelity: how far the model agrees with a real device on other people's tests. For every EXPECT
//! a device passed, did the model pass it too — or call it undefined (with the rule), fail it, or
//! not run it (with the feature it lacks)? Per file and in total, as a markdown table (`lockstep
//! amber --fidelity FILE`), from a device run in the same call or from a device's recorded verdicts
//! (`--against DEVICE.json`, the JSON `lockstep amber --json` writes, or the corpus's `h100.json`).

use super::expect::Status;
use super::run::{FileReport, FileStatus, RunStatus};
use super::BackendKind;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A device's verdict on each EXPECT line of each file (keys: paths as recorded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceVerdicts {
    /// the device, as recorded
    pub device: String,
    /// file → (EXPECT line → `pass`/`fail`/…), and the file's device status
    pub files: BTreeMap<String, (Option<String>, BTreeMap<usize, String>)>,
}

impl DeviceVerdicts {
    /// Reads recorded verdicts: the corpus's `{"device", "files": {path: {"device_status",
    /// "expects": {line: verdict}}}}`, or a `lockstep amber --json` report (its device runs).
    pub fn from_json(j: &Json) -> Result<DeviceVerdicts, String> {
        let device = j
            .get("device")
            .and_then(|d| d.as_str())
            .unwrap_or("device")
            .to_string();
        let mut files = BTreeMap::new();
        match j.get("files") {
            Some(Json::Object(m)) => {
                for (path, f) in m {
                    let status = f
                        .get("device_status")
                        .and_then(|s| s.as_str())
                        .map(String::from);
                    let mut expects = BTreeMap::new();
                    if let Some(Json::Object(e)) = f.get("expects") {
                        for (line, v) in e {
                            let line: usize = line.parse().map_err(|_| {
                                format!("{path}: EXPECT line {line:?} is not a number")
                            })?;
                            expects.insert(line, v.as_str().unwrap_or("").to_string());
                        }
                    }
                    files.insert(path.clone(), (status, expects));
                }
            }
            Some(Json::Array(list)) => {
                for f in list {
                    let Some(path) = f.get("file").and_then(|p| p.as_str()) else {
                        continue;
                    };
                    let runs = f.get("runs").and_then(|r| r.as_array());
                    let dev = runs.and_then(|r| {
                        r.iter()
                            .find(|x| x.get("backend").and_then(|b| b.as_str()) == Some("device"))
                    });
                    let mut expects = BTreeMap::new();
                    let mut status = None;
                    if let Some(d) = dev {
                        status = d.get("status").and_then(|s| s.as_str()).map(String::from);
                        for e in d
                            .get("expects")
                            .and_then(|e| e.as_array())
                            .into_iter()
                            .flatten()
                        {
                            if let (Some(l), Some(s)) = (
                                e.get("line").and_then(|l| l.as_u64()),
                                e.get("status").and_then(|s| s.as_str()),
                            ) {
                                expects.insert(l as usize, s.to_string());
                            }
                        }
                    }
                    files.insert(path.to_string(), (status, expects));
                }
            }
            _ => return Err("no \"files\" in the device verdicts".into()),
        }
        Ok(DeviceVerdicts { device, files })
    }

    /// The verdicts of a file given by a path that ends with a recorded key (or equals one).
    pub fn of(&self, path: &str) -> Option<&(Option<String>, BTreeMap<usize, String>)> {
        let p = path.replace('\\', "/");
        self.files
            .iter()
            .filter(|(k, _)| p == **k || p.ends_with(&format!("/{k}")))
            .max_by_key(|(k, _)| k.len())
            .map(|(_, v)| v)
    }

    /// The verdicts the device runs of these reports gave.
    pub fn from_reports(device: &str, files: &[FileReport]) -> DeviceVerdicts {
        let mut out = DeviceVerdicts {
            device: device.to_string(),
            ..Default::default()
        };
        for f in files {
            let dev = f.runs.iter().find(|r| r.backend == BackendKind::Device);
            let expects = dev
                .map(|r| {
                    r.expects
                        .iter()
                        .map(|v| (v.line, v.status.name().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            out.files.insert(
                f.file.clone(),
                (dev.map(|r| r.status.name().to_string()), expects),
            );
        }
        out
    }
}

/// What the model did with one EXPECT the device passed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// the model passed it too
    Agree,
    /// the model called a value it needs undefined (why)
    Undefined(String),
    /// the model computed another value (why)
    Fail(String),
    /// the model did not get there: the file is unsupported or stopped (why)
    NotRun(String),
}

/// One file's fidelity.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileFidelity {
    /// the path
    pub file: String,
    /// EXPECTs the device passed
    pub device_pass: usize,
    /// EXPECTs the device failed (not counted against the model)
    pub device_fail: usize,
    /// of those the device passed: (line, outcome)
    pub outcomes: Vec<(usize, Outcome)>,
    /// the device did not run the file (unsupported, error, or no verdict recorded)
    pub device_note: Option<String>,
}

impl FileFidelity {
    /// EXPECTs the model passed among those the device passed.
    pub fn agree(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|(_, o)| *o == Outcome::Agree)
            .count()
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|(_, o)| f(o)).count()
    }
}

/// Totals over files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// files
    pub files: usize,
    /// EXPECTs the device passed
    pub device_pass: usize,
    /// of those, the model passed
    pub agree: usize,
    /// … called undefined
    pub undefined: usize,
    /// … failed
    pub fail: usize,
    /// … did not run
    pub not_run: usize,
    /// the same, counting only files the model ran (not unsupported, no error)
    pub device_pass_run: usize,
    /// … and passed
    pub agree_run: usize,
}

impl Totals {
    /// agree / device_pass, in percent.
    pub fn percent(&self) -> f64 {
        100.0 * self.agree as f64 / self.device_pass.max(1) as f64
    }

    /// agree_run / device_pass_run, in percent.
    pub fn percent_run(&self) -> f64 {
        100.0 * self.agree_run as f64 / self.device_pass_run.max(1) as f64
    }
}

/// The fidelity of the model runs in `files` against `device`.
pub fn fidelity(files: &[FileReport], device: &DeviceVerdicts) -> (Vec<FileFidelity>, Totals) {
    let mut out = Vec::new();
    let mut t = Totals::default();
    for f in files {
        let mut ff = FileFidelity {
            file: f.file.clone(),
            ..Default::default()
        };
        let model = f.runs.iter().find(|r| r.backend == BackendKind::Model);
        let model_why = match model {
            Some(r) if matches!(r.status, RunStatus::Unsupported | RunStatus::Error) => {
                r.reason.clone().unwrap_or_else(|| r.status.name().into())
            }
            Some(_) => String::new(),
            None => f
                .reason
                .clone()
                .unwrap_or_else(|| format!("the file is {}", f.status.name())),
        };
        match device.of(&f.file) {
            None => ff.device_note = Some(format!("no verdict of {} recorded", device.device)),
            Some((status, expects)) => {
                if expects.is_empty() {
                    ff.device_note = Some(format!(
                        "{} did not run it ({})",
                        device.device,
                        status.clone().unwrap_or_else(|| "no status".into())
                    ));
                }
                for (line, v) in expects {
                    if v != "pass" {
                        ff.device_fail += 1;
                        continue;
                    }
                    ff.device_pass += 1;
                    let verdict = model.and_then(|r| r.expects.iter().find(|e| e.line == *line));
                    let o = match verdict {
                        Some(v) => match v.status {
                            Status::Pass => Outcome::Agree,
                            Status::Undefined => {
                                Outcome::Undefined(v.why.clone().unwrap_or_default())
                            }
                            Status::Fail => Outcome::Fail(v.why.clone().unwrap_or_default()),
                        },
                        None => Outcome::NotRun(if model_why.is_empty() {
                            "the model's run stopped before this EXPECT".into()
                        } else {
                            model_why.clone()
                        }),
                    };
                    ff.outcomes.push((*line, o));
                }
            }
        }
        t.files += 1;
        t.device_pass += ff.device_pass;
        t.agree += ff.agree();
        t.undefined += ff.count(|o| matches!(o, Outcome::Undefined(_)));
        t.fail += ff.count(|o| matches!(o, Outcome::Fail(_)));
        t.not_run += ff.count(|o| matches!(o, Outcome::NotRun(_)));
        let model_ran = matches!(
            model.map(|r| r.status),
            Some(RunStatus::Pass | RunStatus::Fail | RunStatus::Undefined)
        ) && f.status != FileStatus::Error;
        if model_ran {
            t.device_pass_run += ff.device_pass;
            t.agree_run += ff.agree();
        }
        out.push(ff);
    }
    (out, t)
}

fn cell(s: &str) -> String {
    let one: String = s.replace('|', "\\|").replace('\n', " ");
    if one.chars().count() > 300 {
        let mut c: String = one.chars().take(299).collect();
        c.push('…');
        c
    } else {
        one
    }
}

/// The fidelity as markdown: totals, a row per file, then every EXPECT the device passed and the
/// model did not, with the model's reason.
pub(crate) fn markdown(files: &[FileFidelity], t: &Totals, device: &str) -> String {
    let mut s = String::new();
    s += &format!(
        "Against {device}: of the {} EXPECTs the device passed, the model passed **{} ({:.1}%)**; undefined {}, failed {}, not run {}. In the files the model ran: {} of {} ({:.1}%).\n\n",
        t.device_pass,
        t.agree,
        t.percent(),
        t.undefined,
        t.fail,
        t.not_run,
        t.agree_run,
        t.device_pass_run,
        t.percent_run()
    );
    s += "| file | device passed | model agrees | undefined | fails | not run |\n";
    s += "| --- | ---: | ---: | ---: | ---: | ---: |\n";
    for f in files {
        let name = match &f.device_note {
            Some(n) if f.device_pass == 0 => format!("{} ({})", f.file, n),
            _ => f.file.clone(),
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&name),
            f.device_pass,
            f.agree(),
            f.count(|o| matches!(o, Outcome::Undefined(_))),
            f.count(|o| matches!(o, Outcome::Fail(_))),
            f.count(|o| matches!(o, Outcome::NotRun(_)))
        );
    }
    s += &format!(
        "| **total ({} files)** | **{}** | **{}** | **{}** | **{}** | **{}** |\n",
        t.files, t.device_pass, t.agree, t.undefined, t.fail, t.not_run
    );
    let rest: Vec<(&FileFidelity, &(usize, Outcome))> = files
        .iter()
        .flat_map(|f| {
            f.outcomes
                .iter()
                .filter(|(_, o)| *o != Outcome::Agree)
                .map(move |o| (f, o))
        })
        .collect();
    if !rest.is_empty() {
        s += "\nEXPECTs the device passed and the model did not:\n\n| file | line | model | why |\n| --- | ---: | --- | --- |\n";
        for (f, (line, o)) in rest {
            let (what, why) = match o {
                Outcome::Undefined(w) => ("undefined", w.as_str()),
                Outcome::Fail(w) => ("fail", w.as_str()),
                Outcome::NotRun(w) => ("not run", w.as_str()),
                Outcome::Agree => ("pass", ""),
            };
            s += &format!("| {} | {line} | {what} | {} |\n", cell(&f.file), cell(why));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_verdicts_are_found_by_the_end_of_a_path() {
        let j: Json = serde_json::from_str(
            r#"{"device": "GPU", "files": {"cts/a.amber": {"device_status": "pass", "expects": {"7": "pass", "9": "fail"}}}}"#,
        )
        .unwrap();
        let d = DeviceVerdicts::from_json(&j).unwrap();
        let (_, e) = d.of("../corpus/cts/a.amber").unwrap();
        assert_eq!(e.get(&7).map(String::as_str), Some("pass"));
        assert!(d.of("../corpus/cts/b.amber").is_none());
        assert!(d.of("xcts/a.amber").is_none());
    }
}
