//! `lockstep conform`: every operation, type and subgroup size the device allows, compared lane by
//! lane with the model.

use crate::cli::devices::vk_error;
use crate::cli::{CliError, EXIT_INTERNAL, EXIT_MISMATCH};
use crate::conform::report;
use crate::conform::run::{self, ConformOptions, Progress, SizeChoice};
use crate::model::{lookup, Category, ValueType};
use crate::vulkan::Context;
use std::path::PathBuf;

/// Arguments of `lockstep conform`.
#[derive(clap::Args, Debug, Clone)]
pub struct ConformArgs {
    /// Device index (see `lockstep devices`); default: discrete > integrated > virtual > CPU.
    #[arg(long)]
    pub device: Option<usize>,
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
        ..ConformOptions::default()
    })
}

/// Runs `lockstep conform`.
pub fn run(a: &ConformArgs, argv: &[String]) -> Result<String, CliError> {
    let opts = options(a)?;
    for p in [&a.json, &a.junit].into_iter().flatten() {
        report::check_writable(p).map_err(CliError::usage)?;
    }
    let ctx = Context::new(a.device).map_err(vk_error)?;
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
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&report::json(&rep, &command)).unwrap_or_default();
        report::write_atomic(p, &(text + "\n"))
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.junit {
        report::write_atomic(p, &report::junit(&rep))
            .map_err(|e| CliError::internal(format!("writing {}: {e}", p.display())))?;
    }
    let text = report::text(&rep);
    if let Some(msg) = &rep.aborted {
        return Err(CliError {
            code: EXIT_INTERNAL,
            message: format!("{text}\n{msg}"),
        });
    }
    if !rep.passed() {
        return Err(CliError {
            code: EXIT_MISMATCH,
            message: text,
        });
    }
    Ok(text)
}
