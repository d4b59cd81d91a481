//! `lockstep merge`: the JSON reports of a run's shards (or of one run) into one report — JSON,
//! JUnit XML, markdown — with a baseline of expected failures and a flakes list applied.

use crate::cli::{CliError, EXIT_MISMATCH};
use crate::merge::{self, Expectations};
use std::path::PathBuf;

/// Arguments of `lockstep merge`.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// JSON reports of one kind (`lockstep conform|amber|reconverge --json`, or merged ones).
    #[arg(required = true)]
    pub reports: Vec<PathBuf>,
    /// Write the merged report as JSON here (atomically).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write JUnit XML here (atomically).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write markdown here (atomically).
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// `--baseline` and `--flakes` (a merge cannot rerun a flake: a failing listed one is
    /// reported as a flake, the shards' own runs having retried it)
    #[command(flatten)]
    pub lists: ListArgs,
}

/// `--baseline FILE` and `--flakes FILE`, on `conform`, `amber` and `merge` (see docs/ci.md).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ListArgs {
    /// Expected failures, one case per line (`conform/size8/add/f16/8x1x1`, `amber/<path as
    /// given>`, or `NAME,Fail` as in deqp-runner's baselines): they fail as expected without
    /// failing the run, and one that now passes is reported (`unexpected_pass`, fails the run:
    /// update the baseline).
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Known flaky cases, one pattern per line (`*` matches any run of characters): a failing one
    /// is run again once (by `conform` and `amber`), and reported as `flake` when it then passes.
    #[arg(long)]
    pub flakes: Option<PathBuf>,
}

impl ListArgs {
    /// Reads both lists (a bad one is a usage error naming the file and line).
    pub fn read(&self) -> Result<Expectations, CliError> {
        Expectations::read(self.baseline.as_deref(), self.flakes.as_deref())
            .map_err(CliError::usage)
    }
}

/// Runs `lockstep merge`: prints the markdown; exit 1 when a case fails after the lists.
pub fn run(a: &MergeArgs) -> Result<String, CliError> {
    for p in [&a.json, &a.junit, &a.markdown].into_iter().flatten() {
        crate::files::check_writable(p).map_err(CliError::usage)?;
    }
    let exp = a.lists.read()?;
    let mut reports = Vec::with_capacity(a.reports.len());
    for p in &a.reports {
        let name = p.display().to_string();
        let text =
            std::fs::read_to_string(p).map_err(|e| CliError::usage(format!("{name}: {e}")))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::usage(format!("{name}: not JSON ({e})")))?;
        reports.push((name, json));
    }
    let mut merged = merge::merge(&reports).map_err(|e| CliError::usage(e.to_string()))?;
    let kind = merge::Kind::of(&merged).unwrap_or(merge::Kind::Conform);
    let passed = merge::apply_to_report(kind, &mut merged, &exp, &mut |_| None);
    let md = merge::markdown(&merged);
    let write = |p: &PathBuf, text: &str| {
        crate::files::write_atomic(p, text)
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))
    };
    if let Some(p) = &a.json {
        write(
            p,
            &(serde_json::to_string_pretty(&merged).unwrap_or_default() + "\n"),
        )?;
    }
    if let Some(p) = &a.junit {
        write(p, &merge::junit(&merged))?;
    }
    if let Some(p) = &a.markdown {
        write(p, &md)?;
    }
    if passed {
        Ok(md)
    } else {
        Err(CliError {
            code: EXIT_MISMATCH,
            message: md,
        })
    }
}
