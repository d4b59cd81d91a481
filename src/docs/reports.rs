//! Conformance reports (`docs/results/*.json`, written by `lockstep conform`): what a device returned
//! in the lanes whose result the spec leaves undefined.
//!
//! Only the fields the docs render are read; everything else in a report (`results`, the shape of
//! `summary`) may change without breaking this reader.

use crate::docs::DocsError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The device a report was taken on.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ReportDevice {
    /// Device name as Vulkan reports it (`llvmpipe (LLVM 15.0.6, 256 bits)`, `NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Driver name and version.
    #[serde(default)]
    pub driver: String,
    /// The subgroup size the suite ran at.
    #[serde(default)]
    pub subgroup_size: Option<u32>,
}

/// How many undefined lanes returned one kind of value.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct PatternCount {
    /// `own_value` (the lane's own input), `source_value` (the value the named source lane held,
    /// although inactive), `zero` (all bits 0), `identity` (the op's identity), `other`.
    pub pattern: String,
    /// Number of lanes.
    pub lanes: u64,
}

/// What a device returned for one (operation, reason) pair.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct UndefinedObserved {
    /// Catalogue name of the op.
    pub op: String,
    /// [`crate::model::Reason::key`].
    pub reason: String,
    /// Undefined lanes observed in all.
    pub lanes: u64,
    /// Breakdown by what was returned.
    #[serde(default)]
    pub patterns: Vec<PatternCount>,
}

/// One conformance report, as far as the docs read it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Report {
    /// The device.
    pub device: ReportDevice,
    /// When it ran (`YYYY-MM-DD`).
    #[serde(default)]
    pub date: String,
    /// The command line that produced it.
    #[serde(default)]
    pub command: String,
    /// What the device returned in undefined lanes.
    #[serde(default)]
    pub undefined_observed: Vec<UndefinedObserved>,
    /// The report's summary (rendered as its top-level scalar fields).
    #[serde(default)]
    pub summary: serde_json::Value,
}

/// A report with the file it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedReport {
    /// The file name (`lavapipe-2026-11-21.json`).
    pub file: String,
    /// Its content.
    pub report: Report,
}

/// Reads every `*.json` file of `dir`, sorted by file name; no directory means no reports.
pub fn read_reports(dir: &Path) -> Result<Vec<LoadedReport>, DocsError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| DocsError::io(dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).map_err(|e| DocsError::io(&p, e))?;
            let report = serde_json::from_str(&text).map_err(|e| DocsError::BadReport {
                path: p.clone(),
                source: e,
            })?;
            Ok(LoadedReport {
                file: p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                report,
            })
        })
        .collect()
}

/// What a pattern means, as a phrase: "the lane's own value", "zero", …
pub fn pattern_phrase(pattern: &str) -> String {
    match pattern {
        "own_value" => "the lane's own value".into(),
        "source_value" => "the value the source lane held (although inactive)".into(),
        "zero" => "zero".into(),
        "identity" => "the operation's identity".into(),
        "other" => "some other value".into(),
        p => format!("`{p}`"),
    }
}

/// The reason as an adjective for "… of out-of-range shuffle_down cases".
pub fn reason_adjective(key: &str) -> String {
    match crate::model::Reason::from_key(key) {
        Some(r) => r.doc().adjective.into(),
        // A report written by another version may hold a key this one does not know.
        None => format!("`{key}`"),
    }
}

/// A share of `total` as a whole percentage; `<1%` for a small non-zero share.
pub fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "0%".into();
    }
    let p = part as f64 * 100.0 / total as f64;
    if part > 0 && p < 0.5 {
        "<1%".into()
    } else {
        format!("{}%", p.round() as u64)
    }
}

/// The device, driver and date of a report as the docs label it: `llvmpipe (Mesa 22.3.6, 2026-11-21)`.
pub fn label(r: &Report) -> String {
    let mut inner: Vec<&str> = Vec::new();
    if !r.device.driver.is_empty() {
        inner.push(&r.device.driver);
    }
    if !r.date.is_empty() {
        inner.push(&r.date);
    }
    if inner.is_empty() {
        r.device.name.clone()
    } else {
        format!("{} ({})", r.device.name, inner.join(", "))
    }
}

/// One sentence on what a device returned for an (op, reason) pair, most frequent pattern first:
/// "llvmpipe (Mesa 22.3.6, 2026-11-21) returned the lane's own value in 97% of out-of-range
/// shuffle_down cases (1200 of 1234 lanes), zero in 3% (34)."
pub fn sentence(r: &Report, u: &UndefinedObserved) -> String {
    let who = label(r);
    let what = format!("{} {} cases", reason_adjective(&u.reason), u.op);
    let mut pats: Vec<&PatternCount> = u.patterns.iter().filter(|p| p.lanes > 0).collect();
    // Most lanes first; ties in the report's order.
    pats.sort_by_key(|p| std::cmp::Reverse(p.lanes));
    let Some(first) = pats.first() else {
        return format!("{who}: no undefined lanes observed for {what}.");
    };
    let mut s = format!(
        "{who} returned {} in {} of {what} ({} of {} lanes)",
        pattern_phrase(&first.pattern),
        percent(first.lanes, u.lanes),
        first.lanes,
        u.lanes
    );
    for p in &pats[1..] {
        s += &format!(
            ", {} in {} ({})",
            pattern_phrase(&p.pattern),
            percent(p.lanes, u.lanes),
            p.lanes
        );
    }
    s.push('.');
    s
}
