//! `lockstep conform`: every operation, type and subgroup size the device allows, compared lane by
//! lane with the model.

use crate::cli::devices::vk_error;
use crate::cli::{CliError, EXIT_INTERNAL, EXIT_MISMATCH};
use crate::conform::compare::RowKey;
use crate::conform::report;
use crate::conform::run::{self, ConformOptions, Progress, SizeChoice};
use crate::model::{lookup, Category, ValueType};
use crate::vulkan::Context;
use std::path::PathBuf;

/// Arguments of `lockstep conform`.
#[derive(clap::Args, Debug, Clone)]
pub struct ConformArgs {
    /// Device index (see `lockstep devices`), or `all`: every device of the machine, each in a
    /// process of its own at once, one report with a column per device. Default: discrete >
    /// integrated > virtual > CPU.
    #[arg(long)]
    pub device: Option<crate::cli::devices_all::DeviceChoice>,
    /// Subgroup size to test, or `all` for every size the device can require (default: the device's default).
    #[arg(long = "subgroup-size")]
    pub subgroup_size: Option<String>,
    /// Only these categories (comma-separated: basic, vote, ballot, arithmetic, shuffle, shuffle-relative, clustered, quad, rotate).
    #[arg(long)]
    pub category: Option<String>,
    /// Only these ops (comma-separated catalogue or GLSL names).
    #[arg(long)]
    pub ops: Option<String>,
    /// Only these value types (comma-separated, e.g. u32,f32x4,float16_t).
    #[arg(long)]
    pub types: Option<String>,
    /// Random subgroups per (op, type, size), spread over the workgroup shapes.
    #[arg(long, default_value_t = 1000)]
    pub cases: usize,
    /// Seed of the random cases.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the JSON report here (atomically).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write JUnit XML here (atomically).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Fail on known device deviations too (see src/conform/known.rs).
    #[arg(long)]
    pub strict: bool,
    /// run shard K of N (`--shard 2/4`): every N-th job (kernel × workgroup shape) from the K-th;
    /// the N shards' reports merged (`lockstep merge`) are the whole run
    #[arg(long)]
    pub shard: Option<crate::shard::Shard>,
    /// `--baseline` and `--flakes`
    #[command(flatten)]
    pub lists: crate::cli::merge::ListArgs,
}

fn list<T>(
    text: &Option<String>,
    parse: impl Fn(&str) -> Result<T, CliError>,
) -> Result<Option<Vec<T>>, CliError> {
    text.as_deref()
        .map(|t| {
            t.split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| parse(s.trim()))
                .collect()
        })
        .transpose()
}

/// Parses the options (everything checked before any device work).
pub fn options(a: &ConformArgs) -> Result<ConformOptions, CliError> {
    if a.cases == 0 {
        return Err(CliError::usage("--cases must be at least 1"));
    }
    let sizes = match a.subgroup_size.as_deref() {
        None => SizeChoice::Default,
        Some("all") => SizeChoice::All,
        Some(s) => SizeChoice::One(s.parse::<u32>().map_err(|_| {
            CliError::usage(format!("--subgroup-size: '{s}' is not a number or 'all'"))
        })?),
    };
    if let SizeChoice::One(s) = sizes {
        crate::model::SubgroupSize::new(s as u64)?;
    }
    Ok(ConformOptions {
        sizes,
        categories: list(&a.category, |s| {
            s.parse::<Category>().map_err(CliError::usage)
        })?,
        ops: list(&a.ops, |s| Ok(lookup(s)?.op))?,
        types: list(&a.types, |s| Ok(s.parse::<ValueType>()?))?,
        cases: a.cases,
        seed: a.seed,
        strict: a.strict,
        shard: a.shard,
        ..ConformOptions::default()
    })
}

/// Runs `lockstep conform`.
pub fn run(a: &ConformArgs, argv: &[String]) -> Result<String, CliError> {
    let opts = options(a)?;
    for p in [&a.json, &a.junit].into_iter().flatten() {
        report::check_writable(p).map_err(CliError::usage)?;
    }
    let exp = a.lists.read()?;
    use crate::cli::devices_all::DeviceChoice;
    if a.device == Some(DeviceChoice::All) {
        return every_device(a, argv);
    }
    let index = DeviceChoice::index(a.device);
    let ctx = Context::new(index).map_err(vk_error)?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} kernels  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |p: Progress| match p {
        Progress::Start(n) => bar.set_length(n),
        Progress::Done(name) => {
            bar.set_message(name);
            bar.inc(1);
        }
    };
    let rep = run::run(&ctx, &opts, &progress).map_err(CliError::usage)?;
    bar.finish_and_clear();
    // The command as a user would type it (program name normalised to `lockstep`).
    let command = std::iter::once("lockstep".to_string())
        .chain(argv.iter().skip(1).cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut json = report::json(&rep, &command);
    // With a baseline or flakes, the verdicts are the cases' (lockstep merge's) after both lists.
    let verdict = (!exp.is_empty()).then(|| {
        let mut retry = |c: &crate::merge::Case| retry_row(&ctx, &opts, &json_row(&json, &c.name)?);
        let mut applied = json.clone();
        let passed = crate::merge::apply_to_report(
            crate::merge::Kind::Conform,
            &mut applied,
            &exp,
            &mut retry,
        );
        json = applied;
        passed
    });
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        report::write_atomic(p, &(text + "\n"))
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.junit {
        let xml = match verdict {
            Some(_) => crate::merge::junit(&json),
            None => report::junit(&rep),
        };
        report::write_atomic(p, &xml)
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    let mut text = report::text(&rep);
    if let Some(msg) = &rep.aborted {
        return Err(CliError {
            code: EXIT_INTERNAL,
            message: format!("{text}\n{msg}"),
        });
    }
    if let Some(passed) = verdict {
        text += &crate::merge::expectations_text(&json);
        if !passed {
            return Err(CliError {
                code: EXIT_MISMATCH,
                message: text,
            });
        }
        return Ok(text);
    }
    if !rep.passed() {
        return Err(CliError {
            code: EXIT_MISMATCH,
            message: text,
        });
    }
    Ok(text)
}

/// The row of `json` (a conform report) that a case names.
fn json_row(json: &serde_json::Value, case: &str) -> Option<RowKey> {
    let cases = crate::merge::cases(crate::merge::Kind::Conform, json);
    let rows = json.get("results")?.as_array()?;
    let i = cases.iter().position(|c| c.name == case)?;
    let r = &rows[i];
    let shape = r.get("workgroup")?.as_array()?;
    let dim = |k: usize| shape.get(k).and_then(|v| v.as_u64()).map(|v| v as u32);
    Some(RowKey {
        op: r.get("op")?.as_str()?.to_string(),
        ty: r.get("type")?.as_str()?.to_string(),
        size: r.get("subgroup_size")?.as_u64()? as u32,
        shape: [dim(0)?, dim(1)?, dim(2)?],
    })
}

/// Runs the job holding `row` again (same cases): `Some(true)` when the row now passes.
fn retry_row(ctx: &Context, opts: &ConformOptions, row: &RowKey) -> Option<bool> {
    let again = ConformOptions {
        only: Some(vec![row.clone()]),
        shard: None,
        ..opts.clone()
    };
    let rep = run::run(ctx, &again, &|_| {}).ok()?;
    let r = rep.stats.rows.get(row)?;
    Some(r.failed == 0 && rep.aborted.is_none())
}

/// `--device all`: `lockstep conform` once per device, each in a child process of its own, all at
/// once; one table with a column per device (subgroups compared and failed per category and size),
/// each device's own report kept under `devices` in `--json`. Exit: the worst of the children's.
fn every_device(a: &ConformArgs, argv: &[String]) -> Result<String, CliError> {
    use crate::cli::devices_all as all;
    let g = all::run_children(argv)?;
    let text = device_table(&g.reports);
    if let Some(p) = &a.json {
        all::write_json(p, argv, &g.reports)?;
    }
    all::finish(text, g.code)
}

/// One row per (category, subgroup size), one column per device: `compared/failed`, `-` where
/// that device did not run it; then each device's verdict.
pub(crate) fn device_table(reports: &[serde_json::Value]) -> String {
    use std::collections::BTreeMap;
    let mut cells: BTreeMap<(String, u64), BTreeMap<usize, (u64, u64)>> = BTreeMap::new();
    for (d, r) in reports.iter().enumerate() {
        for row in r["results"].as_array().into_iter().flatten() {
            let op = row["op"].as_str().unwrap_or("");
            let cat = crate::model::catalogue()
                .iter()
                .find(|o| o.name == op)
                .map(|o| o.category.name().to_string())
                .unwrap_or_else(|| "-".into());
            let size = row["subgroup_size"].as_u64().unwrap_or(0);
            let c = cells.entry((cat, size)).or_default().entry(d).or_default();
            c.0 += row["cases"].as_u64().unwrap_or(0);
            c.1 += row["failed"].as_u64().unwrap_or(0);
        }
    }
    let mut head = vec!["category".to_string(), "size".to_string()];
    head.extend(
        reports
            .iter()
            .enumerate()
            .map(|(i, r)| format!("[{i}] {}", r["device"]["name"].as_str().unwrap_or("?"))),
    );
    let mut rows = vec![head];
    for ((cat, size), per) in &cells {
        let mut row = vec![cat.clone(), size.to_string()];
        for d in 0..reports.len() {
            row.push(match per.get(&d) {
                Some((c, f)) => format!("{c}/{f}"),
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut out =
        String::from("subgroups compared/failed per category and subgroup size, per device:\n");
    out += &crate::text::table(&rows);
    for (i, r) in reports.iter().enumerate() {
        let name = r["device"]["name"].as_str().unwrap_or("?");
        let verdict = match (&r["error"], &r["summary"]) {
            (serde_json::Value::String(e), _) => format!("error: {e}"),
            (_, s) => format!(
                "{} ({} subgroups, {} failed, {} unexplained)",
                if s["passed"] == true { "PASS" } else { "FAIL" },
                s["cases"],
                s["failed"],
                s["failed_unexplained"]
            ),
        };
        out += &format!("[{i}] {name}: {verdict}\n");
    }
    out
}
