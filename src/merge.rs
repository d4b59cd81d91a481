//! Reports as lists of cases: merging shards' reports into one, baselines of expected failures and
//! flakes (deqp-runner's conventions), and the merged report as JSON, JUnit XML and markdown.
//!
//! Every JSON report lockstep writes (`conform`, `amber`, `reconverge`) is read here as a list of
//! named [`Case`]s, one per thing that passes or fails on its own:
//! - `conform`: one per row, `conform/size8/add/u32/3x5x7` (an unsupported (op, type) has no shape:
//!   `conform/size8/rotate/u32`);
//! - `amber`: one per file, `amber/<path>`;
//! - `reconverge`: one per failing program, `reconverge/<mode>/seed<S>/program<I>` (programs that
//!   passed are counted, not listed, as in the report).
//!
//! The merged report keeps each kind's own sections (conform's rows, mismatches, undefined-lane
//! observations and layouts; amber's files; reconverge's counts and failures) and adds the cases.

use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

/// What a report came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `lockstep conform --json`
    Conform,
    /// `lockstep amber --json`
    Amber,
    /// `lockstep reconverge --json`
    Reconverge,
}

impl Kind {
    /// Its name, as in the command.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Conform => "conform",
            Kind::Amber => "amber",
            Kind::Reconverge => "reconverge",
        }
    }

    /// The kind of a report: a merged one says it; otherwise its sections tell.
    pub fn of(report: &Json) -> Option<Kind> {
        match report.get("kind").and_then(Json::as_str) {
            Some("conform") => return Some(Kind::Conform),
            Some("amber") => return Some(Kind::Amber),
            Some("reconverge") => return Some(Kind::Reconverge),
            _ => {}
        }
        if report.get("results").is_some() && report.get("undefined_observed").is_some() {
            Some(Kind::Conform)
        } else if report.get("files").is_some() {
            Some(Kind::Amber)
        } else if report.get("command").and_then(Json::as_str) == Some("reconverge") {
            Some(Kind::Reconverge)
        } else {
            None
        }
    }
}

/// A case's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// passed
    Pass,
    /// the device lacks a feature it needs (not a failure)
    Unsupported,
    /// failed, and the baseline expects it to fail (not a failure)
    ExpectedFail,
    /// failed once and passed when retried, and it is a listed flake (not a failure)
    Flake,
    /// listed in the baseline as failing, and passed: update the baseline (a failure, as in
    /// deqp-runner, so that a fixed case cannot hide a new failure later)
    UnexpectedPass,
    /// failed
    Fail,
    /// could not run: bad input, a driver crash or hang, a backend error
    Error,
}

impl Status {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Unsupported => "unsupported",
            Status::ExpectedFail => "expected_fail",
            Status::Flake => "flake",
            Status::UnexpectedPass => "unexpected_pass",
            Status::Fail => "fail",
            Status::Error => "error",
        }
    }

    /// From a report's status name (`mismatch` and `crash` are reconverge's and amber's words).
    pub fn parse(s: &str) -> Option<Status> {
        Some(match s.to_ascii_lowercase().as_str() {
            "pass" => Status::Pass,
            "unsupported" | "skip" => Status::Unsupported,
            "expected_fail" | "expectedfail" => Status::ExpectedFail,
            "flake" => Status::Flake,
            "unexpected_pass" | "unexpectedpass" => Status::UnexpectedPass,
            "fail" | "mismatch" => Status::Fail,
            "error" | "crash" | "timeout" => Status::Error,
            _ => return None,
        })
    }

    /// Does this verdict fail the run?
    pub fn fails(self) -> bool {
        matches!(self, Status::Fail | Status::Error | Status::UnexpectedPass)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One case of a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// its name (see the module's documentation)
    pub name: String,
    /// its verdict
    pub status: Status,
    /// why, when it did not pass
    pub detail: Option<String>,
}

fn s(v: &Json, k: &str) -> String {
    match v.get(k) {
        Some(Json::String(x)) => x.clone(),
        Some(Json::Null) | None => String::new(),
        Some(x) => x.to_string(),
    }
}

fn detail(v: &Json, k: &str) -> Option<String> {
    v.get(k).and_then(Json::as_str).map(String::from)
}

/// The name of a conform row (`workgroup` null for an unsupported (op, type)).
fn conform_name(row: &Json) -> String {
    let mut name = format!(
        "conform/size{}/{}/{}",
        s(row, "subgroup_size"),
        s(row, "op"),
        s(row, "type")
    );
    if let Some(w) = row.get("workgroup").and_then(Json::as_array) {
        let dims: Vec<String> = w.iter().map(|d| d.to_string()).collect();
        name += &format!("/{}", dims.join("x"));
    }
    name
}

/// The cases of a report of `kind`.
pub fn cases(kind: Kind, report: &Json) -> Vec<Case> {
    let list = |k: &str| {
        report
            .get(k)
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match kind {
        Kind::Conform => list("results")
            .iter()
            .map(|r| {
                let mut status = Status::parse(&s(r, "status")).unwrap_or(Status::Error);
                // A known device deviation does not fail a run unless --strict asked.
                if status == Status::Fail && r.get("known_deviation") == Some(&Json::Bool(true)) {
                    status = Status::ExpectedFail;
                }
                Case {
                    name: conform_name(r),
                    status,
                    detail: detail(r, "reason"),
                }
            })
            .collect(),
        Kind::Amber => list("files")
            .iter()
            .map(|f| Case {
                name: format!("amber/{}", s(f, "file")),
                status: Status::parse(&s(f, "status")).unwrap_or(Status::Error),
                detail: detail(f, "reason"),
            })
            .collect(),
        Kind::Reconverge => list("failures")
            .iter()
            .map(|f| Case {
                name: format!(
                    "reconverge/{}/seed{}/program{}",
                    s(report, "mode"),
                    s(report, "seed"),
                    s(f, "program")
                ),
                status: Status::Fail,
                detail: Some(format!("{} mismatches", s(f, "mismatch_count"))),
            })
            .collect(),
    }
}

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// nothing to merge
    #[error("no reports to merge")]
    Empty,
    /// a report of no kind lockstep writes
    #[error("{0}: not a report of lockstep conform, amber or reconverge (--json)")]
    UnknownKind(String),
    /// reports of two kinds
    #[error(
        "{path}: a {found} report; the others are {expected} reports (merge each kind on its own)"
    )]
    MixedKinds {
        /// the report
        path: String,
        /// its kind
        found: &'static str,
        /// the first report's kind
        expected: &'static str,
    },
    /// one case with two verdicts
    #[error("case {case}: {a} in {path_a}, {b} in {path_b} — reports of different runs? (merge the shards of one run)")]
    Conflict {
        /// the case
        case: String,
        /// one verdict
        a: Status,
        /// its report
        path_a: String,
        /// the other
        b: Status,
        /// its report
        path_b: String,
    },
}

fn arr<'a>(r: &'a Json, k: &str) -> impl Iterator<Item = &'a Json> + use<'a> {
    r.get(k).and_then(Json::as_array).into_iter().flatten()
}

fn num(v: &Json, k: &str) -> f64 {
    v.get(k).and_then(Json::as_f64).unwrap_or(0.0)
}

fn int(v: &Json, k: &str) -> u64 {
    v.get(k).and_then(Json::as_u64).unwrap_or(0)
}

/// Entries of `k` from every report, each once (shards repeat what is decided before the jobs
/// are split, as conform's unsupported (op, type) rows), sorted by their text.
fn union(reports: &[(String, Json)], k: &str) -> Vec<Json> {
    let mut seen: BTreeMap<String, Json> = BTreeMap::new();
    for (_, r) in reports {
        for v in arr(r, k) {
            seen.entry(v.to_string()).or_insert_with(|| v.clone());
        }
    }
    seen.into_values().collect()
}

/// Merges `reports` (path, JSON) of one kind: the merged report, its cases in it.
///
/// ```
/// use lockstep::merge::{merge, Status};
/// use serde_json::json;
/// let a = json!({"files": [{"file": "a.amber", "status": "pass", "runs": []}], "summary": {}});
/// let b = json!({"files": [{"file": "b.amber", "status": "fail", "reason": "line 9", "runs": []}], "summary": {}});
/// let m = merge(&[("1.json".into(), a), ("2.json".into(), b)]).unwrap();
/// assert_eq!(m["summary"]["files"], 2);
/// assert_eq!(m["cases"][1]["name"], "amber/b.amber");
/// assert_eq!(m["summary"]["passed"], false);
/// ```
pub fn merge(reports: &[(String, Json)]) -> Result<Json, MergeError> {
    let (first_path, first) = reports.first().ok_or(MergeError::Empty)?;
    let kind = Kind::of(first).ok_or_else(|| MergeError::UnknownKind(first_path.clone()))?;
    let mut by_name: BTreeMap<String, (Case, &str)> = BTreeMap::new();
    for (path, r) in reports {
        let k = Kind::of(r).ok_or_else(|| MergeError::UnknownKind(path.clone()))?;
        if k != kind {
            return Err(MergeError::MixedKinds {
                path: path.clone(),
                found: k.name(),
                expected: kind.name(),
            });
        }
        let listed: Vec<Case> = match r.get("cases").and_then(Json::as_array) {
            // A merged report's cases carry their baseline verdicts.
            Some(cs) => cs.iter().filter_map(case_from_json).collect(),
            None => cases(kind, r),
        };
        for c in listed {
            match by_name.get(&c.name) {
                Some((old, old_path)) if old.status != c.status => {
                    return Err(MergeError::Conflict {
                        case: c.name.clone(),
                        a: old.status,
                        path_a: old_path.to_string(),
                        b: c.status,
                        path_b: path.clone(),
                    })
                }
                Some(_) => {}
                None => {
                    by_name.insert(c.name.clone(), (c, path.as_str()));
                }
            }
        }
    }
    let cases: Vec<Case> = by_name.into_values().map(|(c, _)| c).collect();
    let mut out = Map::new();
    out.insert("kind".into(), kind.name().into());
    out.insert(
        "reports".into(),
        reports
            .iter()
            .map(|(p, r)| json!({"path": p, "command": r.get("command"), "date": r.get("date")}))
            .collect::<Vec<_>>()
            .into(),
    );
    let devices = union(
        &reports
            .iter()
            .map(|(p, r)| {
                (
                    p.clone(),
                    json!({ "d": r.get("device").cloned().into_iter().collect::<Vec<_>>() }),
                )
            })
            .collect::<Vec<_>>(),
        "d",
    );
    out.insert("devices".into(), devices.into());
    let mut summary = Map::new();
    match kind {
        Kind::Conform => {
            for k in ["results", "mismatches", "errors"] {
                out.insert(k.into(), union(reports, k).into());
            }
            out.insert("undefined_observed".into(), merge_undefined(reports).into());
            out.insert("layouts".into(), merge_layouts(reports).into());
            let sum = |k: &str| {
                reports
                    .iter()
                    .map(|(_, r)| int(&r["summary"], k))
                    .sum::<u64>()
            };
            for k in ["cases", "failed", "failed_unexplained", "lane_checks"] {
                summary.insert(k.into(), sum(k).into());
            }
            let unsupported = union(reports, "results")
                .iter()
                .filter(|r| r["status"] == "unsupported")
                .count();
            summary.insert("unsupported".into(), unsupported.into());
        }
        Kind::Amber => {
            let mut files = union(reports, "files");
            files.sort_by_key(|f| s(f, "file"));
            summary.insert("files".into(), files.len().into());
            for st in ["pass", "fail", "unsupported", "error"] {
                let n = files.iter().filter(|f| f["status"] == st).count();
                summary.insert(st.into(), n.into());
            }
            let mut expects: BTreeMap<String, u64> = BTreeMap::new();
            for f in &files {
                for r in arr(f, "runs") {
                    for e in arr(r, "expects") {
                        *expects.entry(s(e, "status")).or_default() += 1;
                    }
                }
            }
            summary.insert("expects".into(), json!(expects));
            out.insert("files".into(), files.into());
        }
        Kind::Reconverge => {
            for k in ["mode", "seed", "kernel", "workgroup"] {
                out.insert(k.into(), first.get(k).cloned().unwrap_or(Json::Null));
            }
            for k in [
                "programs",
                "operations_compared",
                "undefined_not_compared",
                "mismatches",
                "failing_programs",
            ] {
                let n: u64 = reports.iter().map(|(_, r)| int(r, k)).sum();
                summary.insert(k.into(), n.into());
            }
            let mut failures: Vec<Json> = reports
                .iter()
                .flat_map(|(_, r)| arr(r, "failures").cloned())
                .collect();
            failures.sort_by_key(|f| int(f, "program"));
            out.insert("failures".into(), failures.into());
        }
    }
    let seconds: f64 = reports
        .iter()
        .map(|(_, r)| num(&r["summary"], "seconds").max(num(r, "elapsed_s")))
        .sum();
    summary.insert("seconds_summed".into(), seconds.into());
    out.insert("summary".into(), summary.into());
    out.insert("cases".into(), cases_json(&cases));
    restate(&mut out, &cases);
    Ok(out.into())
}

/// Conform's undefined-lane observations, summed per (op, reason).
fn merge_undefined(reports: &[(String, Json)]) -> Vec<Json> {
    type Counts = (u64, BTreeMap<String, u64>, BTreeMap<String, u64>);
    let mut m: BTreeMap<(String, String), Counts> = BTreeMap::new();
    for (_, r) in reports {
        for u in arr(r, "undefined_observed") {
            let e = m.entry((s(u, "op"), s(u, "reason"))).or_default();
            e.0 += int(u, "lanes");
            for p in arr(u, "patterns") {
                *e.1.entry(s(p, "pattern")).or_default() += int(p, "lanes");
            }
            for v in arr(u, "values") {
                *e.2.entry(s(v, "value")).or_default() += int(v, "lanes");
            }
        }
    }
    m.into_iter()
        .map(|((op, reason), (lanes, patterns, values))| {
            let mut values: Vec<(String, u64)> = values.into_iter().collect();
            values.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            json!({
                "op": op, "reason": reason, "lanes": lanes,
                "patterns": patterns.iter().map(|(p, n)| json!({"pattern": p, "lanes": n})).collect::<Vec<_>>(),
                "values": values.iter().take(5).map(|(v, n)| json!({"value": v, "lanes": n})).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// Conform's lane layouts, workgroups summed per (shape, layout).
fn merge_layouts(reports: &[(String, Json)]) -> Vec<Json> {
    let mut m: BTreeMap<(String, String), (Json, Json, u64)> = BTreeMap::new();
    for (_, r) in reports {
        for l in arr(r, "layouts") {
            let key = (l["workgroup"].to_string(), l["layout"].to_string());
            let e = m
                .entry(key)
                .or_insert_with(|| (l["workgroup"].clone(), l["layout"].clone(), 0));
            e.2 += int(l, "workgroups");
        }
    }
    m.into_values()
        .map(|(w, l, n)| json!({"workgroup": w, "layout": l, "workgroups": n}))
        .collect()
}

fn case_from_json(c: &Json) -> Option<Case> {
    Some(Case {
        name: c.get("name")?.as_str()?.to_string(),
        status: Status::parse(c.get("status")?.as_str()?)?,
        detail: detail(c, "detail"),
    })
}

fn cases_json(cases: &[Case]) -> Json {
    cases
        .iter()
        .map(|c| json!({"name": c.name, "status": c.status.name(), "detail": c.detail}))
        .collect::<Vec<_>>()
        .into()
}

/// Writes `cases` into a report (merged or a command's own) with the counts per verdict and
/// whether the run passed.
fn restate(report: &mut Map<String, Json>, cases: &[Case]) {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for c in cases {
        *counts.entry(c.status.name()).or_default() += 1;
    }
    let passed = !cases.iter().any(|c| c.status.fails());
    report.insert("cases".into(), cases_json(cases));
    let summary = report
        .entry("summary")
        .or_insert_with(|| Json::Object(Map::new()));
    if let Some(m) = summary.as_object_mut() {
        m.insert("verdicts".into(), json!(counts));
        m.insert("passed".into(), passed.into());
    }
}

/// Expected failures and flakes, deqp-runner style.
///
/// A baseline file has one case per line, `NAME` or `NAME,Status` (deqp-runner's `Fail`, `Crash`,
/// `Timeout`, …: any status but `Pass` means "expected to fail"); a flakes file one pattern per
/// line, a case name in which `*` matches any run of characters. `#` starts a comment; blank lines
/// are ignored.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    /// case name → its expected (failing) verdict
    pub baseline: BTreeMap<String, String>,
    /// patterns of cases known to be flaky
    pub flakes: Vec<String>,
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("").trim();
        (!l.is_empty()).then_some((i + 1, l))
    })
}

impl Expectations {
    /// Reads a baseline and a flakes file (either may be absent).
    pub fn read(
        baseline: Option<&std::path::Path>,
        flakes: Option<&std::path::Path>,
    ) -> Result<Expectations, String> {
        let read = |flag: &str, p: &std::path::Path| {
            std::fs::read_to_string(p).map_err(|e| format!("{flag} {}: {e}", p.display()))
        };
        let mut out = Expectations::default();
        if let Some(p) = baseline {
            out.add_baseline(&read("--baseline", p)?)
                .map_err(|e| format!("--baseline {}: {e}", p.display()))?;
        }
        if let Some(p) = flakes {
            out.flakes
                .extend(lines(&read("--flakes", p)?).map(|(_, l)| l.to_string()));
        }
        Ok(out)
    }

    /// Adds a baseline's lines.
    ///
    /// ```
    /// let mut e = lockstep::merge::Expectations::default();
    /// e.add_baseline("# known\nconform/size8/add/f16/8x1x1,Fail\namber/x.amber\n").unwrap();
    /// assert_eq!(e.baseline.len(), 2);
    /// assert!(e.add_baseline("amber/y.amber,Pass").unwrap_err().contains("line 1"));
    /// ```
    pub fn add_baseline(&mut self, text: &str) -> Result<(), String> {
        for (n, l) in lines(text) {
            let (name, status) = match l.rsplit_once(',') {
                Some((name, st)) => (name.trim(), st.trim()),
                None => (l, "Fail"),
            };
            if status.eq_ignore_ascii_case("pass") {
                return Err(format!(
                    "line {n}: a baseline lists expected failures; `{name}` is listed as Pass"
                ));
            }
            self.baseline.insert(name.to_string(), status.to_string());
        }
        Ok(())
    }

    /// Is `name` a listed flake?
    ///
    /// ```
    /// let e = lockstep::merge::Expectations { flakes: vec!["amber/*/ldexp_*.amber".into()], ..Default::default() };
    /// assert!(e.is_flake("amber/cts/ldexp_f32.amber"));
    /// assert!(!e.is_flake("amber/cts/frexp.amber"));
    /// ```
    pub fn is_flake(&self, name: &str) -> bool {
        self.flakes.iter().any(|p| glob(p, name))
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.baseline.is_empty() && self.flakes.is_empty()
    }

    /// Applies the lists to `cases`: a listed flake that failed is retried once with `retry`
    /// (`None` when it cannot be, as in `lockstep merge`; `Some(true)` when the retry passed) and
    /// is a [`Status::Flake`] when it passed or could not be retried; then a failure the baseline
    /// lists is an [`Status::ExpectedFail`], and a listed case that passed an
    /// [`Status::UnexpectedPass`].
    pub fn apply(&self, cases: &mut [Case], retry: &mut dyn FnMut(&Case) -> Option<bool>) {
        for c in cases.iter_mut() {
            if c.status.fails() && c.status != Status::UnexpectedPass && self.is_flake(&c.name) {
                match retry(c) {
                    Some(false) => {
                        let d = c.detail.take().unwrap_or_default();
                        c.detail = Some(format!("{d} (a listed flake; failed again when retried)"));
                    }
                    again => {
                        c.status = Status::Flake;
                        let d = c.detail.take().unwrap_or_default();
                        c.detail = Some(match again {
                            Some(_) => format!("{d} (failed, then passed when retried)"),
                            None => format!("{d} (failed; a listed flake)"),
                        });
                        continue;
                    }
                }
            }
            if let Some(expected) = self.baseline.get(&c.name) {
                if c.status.fails() {
                    c.status = Status::ExpectedFail;
                } else if c.status == Status::Pass {
                    c.status = Status::UnexpectedPass;
                    c.detail = Some(format!(
                        "the baseline expects {expected}, and it passed: remove it from the baseline"
                    ));
                }
            }
        }
    }
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Applies `exp` to a command's own report (`kind`), in place: the cases with their verdicts, the
/// counts, and `summary.passed`. Returns whether the run passed.
pub(crate) fn apply_to_report(
    kind: Kind,
    report: &mut Json,
    exp: &Expectations,
    retry: &mut dyn FnMut(&Case) -> Option<bool>,
) -> bool {
    let mut cs = match report.get("cases").and_then(Json::as_array) {
        Some(list) => list.iter().filter_map(case_from_json).collect(),
        None => cases(kind, report),
    };
    exp.apply(&mut cs, retry);
    let passed = !cs.iter().any(|c| c.status.fails());
    if let Some(m) = report.as_object_mut() {
        restate(m, &cs);
    }
    passed
}

/// The cases of a merged report.
pub(crate) fn cases_of(report: &Json) -> Vec<Case> {
    arr(report, "cases").filter_map(case_from_json).collect()
}

/// JUnit XML of a merged report: one testsuite, a testcase per case (an expected failure, a flake
/// and an unsupported case are `skipped` with the reason; an unexpected pass is a failure).
pub fn junit(report: &Json) -> String {
    let cs = cases_of(report);
    let kind = report
        .get("kind")
        .and_then(Json::as_str)
        .unwrap_or("lockstep");
    let failures = cs.iter().filter(|c| c.status.fails()).count();
    let skipped = cs
        .iter()
        .filter(|c| !c.status.fails() && c.status != Status::Pass)
        .count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"lockstep.{kind}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">\n",
        cs.len()
    );
    for c in &cs {
        let (class, name) = c.name.rsplit_once('/').unwrap_or((kind, &c.name));
        out += &format!(
            "    <testcase classname=\"{}\" name=\"{}\">",
            crate::text::xml_escape(&class.replace('/', ".")),
            crate::text::xml_escape(name)
        );
        let why = crate::text::xml_escape(c.detail.as_deref().unwrap_or(""));
        match c.status {
            Status::Pass => {}
            s if s.fails() => out += &format!("<failure message=\"{s}\">{why}</failure>"),
            s => out += &format!("<skipped message=\"{s}: {why}\"/>"),
        }
        out += "</testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    out
}

/// Markdown of a merged report: the verdict counts, then every case that did not pass.
pub(crate) fn markdown(report: &Json) -> String {
    let cs = cases_of(report);
    let kind = report
        .get("kind")
        .and_then(Json::as_str)
        .unwrap_or("lockstep");
    let passed = report["summary"]["passed"].as_bool().unwrap_or(false);
    let mut out = format!(
        "# lockstep {kind}: {}\n\n",
        if passed { "PASS" } else { "FAIL" }
    );
    out += &format!("{} reports merged", arr(report, "reports").count());
    let devices: Vec<String> = arr(report, "devices").map(|d| s(d, "name")).collect();
    if !devices.is_empty() {
        out += &format!(" · device: {}", devices.join(", "));
    }
    out += "\n\n| verdict | cases |\n|---|---|\n";
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    for c in &cs {
        *counts.entry(c.status).or_default() += 1;
    }
    for (st, n) in &counts {
        out += &format!("| {st} | {n} |\n");
    }
    if let Some(m) = report["summary"].as_object() {
        let extra: Vec<String> = m
            .iter()
            .filter(|(k, v)| *k != "verdicts" && *k != "passed" && v.is_number())
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out += &format!("\n{}\n", extra.join(" · "));
    }
    let not_passed: Vec<&Case> = cs.iter().filter(|c| c.status != Status::Pass).collect();
    if !not_passed.is_empty() {
        out += "\n| case | verdict | why |\n|---|---|---|\n";
        for c in not_passed {
            out += &format!(
                "| `{}` | {} | {} |\n",
                c.name,
                c.status,
                c.detail
                    .as_deref()
                    .unwrap_or("")
                    .replace('|', "\\|")
                    .replace('\n', " ")
            );
        }
    }
    out
}

/// The lines a baseline or flakes list adds to the text report: each case whose verdict they
/// changed, and the counts.
pub(crate) fn expectations_text(json: &serde_json::Value) -> String {
    let mut out = String::new();
    for c in cases_of(json) {
        if matches!(
            c.status,
            Status::ExpectedFail | Status::Flake | Status::UnexpectedPass
        ) {
            out += &format!(
                "{}: {}{}\n",
                c.name,
                c.status,
                c.detail.map(|d| format!(" — {d}")).unwrap_or_default()
            );
        }
    }
    out += &format!(
        "verdicts after the baseline and flakes: {}\n",
        json["summary"]["verdicts"]
    );
    out
}
