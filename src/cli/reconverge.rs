//! `lockstep reconverge`: random structured programs (or the seed 001 kernels) on a device under a
//! reconvergence model, compared with the executor; a failure is shrunk and printed as GLSL.

use crate::cli::devices::vk_error;
use crate::cli::{CliError, EXIT_MISMATCH};
use crate::reconverge::campaign::{
    self, CampaignError, Event, Plan, Report, Setup, ShrinkLimits, Source,
};
use crate::reconverge::device::{unsupported, Defaults, VulkanDevice};
use crate::reconverge::glsl::shader;
use crate::reconverge::Mode;
use crate::vulkan::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `lockstep reconverge`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReconvergeArgs {
    /// Reconvergence model to request and compare against: maximal, sucf or base.
    #[arg(long, default_value = "base")]
    pub mode: String,
    /// Number of programs to run.
    #[arg(long, default_value_t = 1000)]
    pub programs: u64,
    /// Seed of the program generator (the same seed gives the same programs).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Device index (see `lockstep devices`); default: the preferred device.
    #[arg(long)]
    pub device: Option<usize>,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run a named kernel instead of random programs: seed001 (the original allocation kernel) or
    /// seed001-fixed (subgroupAny + subgroup uniform control flow), with random needs_space masks.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Programs per shader (one dispatch, one workgroup each). Default: four shapes' worth
    /// (4 × --variants) on a GPU, one shape's (--variants) on a CPU device, whose compiler
    /// (llvmpipe) slows down sharply on large shaders.
    #[arg(long)]
    pub batch: Option<usize>,
    /// Programs per shape: each random program is followed by VARIANTS − 1 others of its
    /// structure with their own masks, salts and constants, which read them from a buffer so that
    /// one compiled copy of the code runs them all. 1: every program compiled as itself, every
    /// parameter a constant in the code. The same seed and VARIANTS give the same programs.
    #[arg(long, default_value_t = 8)]
    pub variants: usize,
    /// Worker threads building, running and comparing batches at once. Default: one per core.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Vulkan contexts (logical devices, each with its own queue) opened on the device; workers
    /// share them in turn. Default: 2 (lavapipe compiles a pipeline on its queue's thread, so two
    /// queues use two cores; on the H100 two were as fast as more).
    #[arg(long)]
    pub contexts: Option<usize>,
    /// Create pipelines with VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT: a driver that honours it
    /// compiles faster, but then runs code built unlike what kernels normally run (for measuring).
    #[arg(long)]
    pub no_driver_optimization: bool,
    /// Start no new batch after this many seconds; the report says how many programs ran.
    #[arg(long, allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
    /// Run shard K of N (`--shard 2/4`): every N-th batch of programs from the K-th; the programs
    /// are the unsharded run's, so the N shards together are the whole campaign.
    #[arg(long)]
    pub shard: Option<crate::shard::Shard>,
}

/// Checks the arguments and turns them into a plan (without a device yet).
fn parse(a: &ReconvergeArgs) -> Result<(Mode, Source), CliError> {
    let mode: Mode = a.mode.parse().map_err(CliError::usage)?;
    if a.programs == 0 || a.programs > 100_000_000 {
        return Err(CliError::usage(format!(
            "--programs must be in 1..=100000000, got {}",
            a.programs
        )));
    }
    if let Some(b) = a.batch.filter(|b| *b == 0 || *b > 1024) {
        return Err(CliError::usage(format!(
            "--batch must be in 1..=1024, got {b}"
        )));
    }
    if a.variants == 0 || a.variants > 1024 {
        return Err(CliError::usage(format!(
            "--variants must be in 1..=1024, got {}",
            a.variants
        )));
    }
    if let Some(t) = a.threads.filter(|t| *t == 0 || *t > 1024) {
        return Err(CliError::usage(format!(
            "--threads must be in 1..=1024, got {t}"
        )));
    }
    if let Some(c) = a.contexts.filter(|c| *c == 0 || *c > 64) {
        return Err(CliError::usage(format!(
            "--contexts must be in 1..=64, got {c}"
        )));
    }
    if a.max_seconds.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
        return Err(CliError::usage(
            "--max-seconds must be a positive number of seconds",
        ));
    }
    let source = match a.kernel.as_deref() {
        None => Source::Random,
        Some("seed001") => Source::Seed001,
        Some("seed001-fixed") => Source::Seed001Fixed,
        Some(k) => {
            return Err(CliError::usage(format!(
                "unknown --kernel '{k}': seed001 or seed001-fixed"
            )))
        }
    };
    Ok((mode, source))
}

/// Runs `lockstep reconverge`.
pub(crate) fn run_cmd(a: &ReconvergeArgs) -> Result<String, CliError> {
    let (mode, source) = parse(a)?;
    let ctx = Context::new(a.device).map_err(vk_error)?;
    let defaults = Defaults::for_device(&ctx);
    let setup = Setup::for_device(&ctx, mode).with_parametric(a.variants > 1);
    let plan = Plan {
        source,
        programs: a.programs,
        seed: a.seed,
        batch: a.batch.unwrap_or(defaults.shapes * a.variants),
        variants: a.variants,
        threads: a
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        max_time: a.max_seconds.map(Duration::from_secs_f64),
        shard: a.shard,
        shrink: ShrinkLimits {
            // Shrinking gets at most a minute per failure, and no more than --max-seconds.
            time: Duration::from_secs_f64(a.max_seconds.unwrap_or(60.0).clamp(10.0, 60.0)),
            ..ShrinkLimits::default()
        },
    };
    let contexts = a.contexts.unwrap_or(defaults.contexts);
    let mut report = json!({
        "command": "reconverge",
        "mode": mode.name(),
        "kernel": source.name(),
        "seed": a.seed,
        "device": {
            "name": ctx.info.name,
            "driver": ctx.info.driver,
            "api_version": ctx.info.api_version,
            "subgroup_size": ctx.caps.subgroup_size,
        },
        "workgroup": setup.shape.invocations(),
        "batch": plan.batch,
        "variants": plan.variants,
        "threads": plan.threads,
        "contexts": contexts,
        "driver_optimization": !a.no_driver_optimization,
        "date": utc_now(),
    });
    if let Some(why) = unsupported(&ctx.caps, mode) {
        report["status"] = "unsupported".into();
        report["reason"] = why.clone().into();
        write_json(a, &report)?;
        return Ok(format!(
            "reconverge: mode {mode} unsupported on {}: {why}\n",
            ctx.info.name
        ));
    }
    // More contexts: the same physical device opened again.
    let mut contexts_v = vec![ctx];
    for _ in 1..contexts {
        contexts_v.push(Context::new(a.device).map_err(vk_error)?);
    }
    let ctx = &contexts_v[0];
    let device = VulkanDevice::new(&contexts_v, setup)
        .map_err(vk_error)?
        .unoptimized(a.no_driver_optimization);

    let pb = ProgressBar::with_draw_target(Some(a.programs), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} programs ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(format!("reconverge {mode}"));
    let outcome = campaign::run(&device, &setup, &plan, &mut |e| match e {
        Event::Ran(n) => pb.inc(n),
        Event::Shrinking(true) => pb.set_message(format!("reconverge {mode}: shrinking a failure")),
        Event::Shrinking(false) => pb.set_message(format!("reconverge {mode}")),
    });
    pb.finish_and_clear();
    let r = outcome.map_err(|e| match e {
        CampaignError::Device(e) => vk_error(e),
        e @ CampaignError::Generator(_) => CliError::internal(e),
    })?;

    let text = summary(a, mode, source, ctx, &setup, &plan, contexts, &r);
    fill_json(&mut report, a, mode, &setup, &r);
    write_json(a, &report)?;
    if !r.passed() {
        return Err(CliError {
            code: EXIT_MISMATCH,
            message: format!("mismatch: the device disagrees with the model\n{text}"),
        });
    }
    Ok(text)
}

/// The text report: what ran, the counts, the speed and where the time went, then each failure
/// with its minimal program as GLSL.
#[allow(clippy::too_many_arguments)] // the parts of one report
fn summary(
    a: &ReconvergeArgs,
    mode: Mode,
    source: Source,
    ctx: &Context,
    setup: &Setup,
    plan: &Plan,
    contexts: usize,
    r: &Report,
) -> String {
    let mut text = format!(
        "reconverge: mode {mode} ({}) on {} (subgroup size {}), workgroups of {} invocations\n",
        source.name(),
        ctx.info.name,
        ctx.caps.subgroup_size,
        setup.shape.invocations()
    );
    text += &format!(
        "programs run: {}{}   operations compared: {}   (undefined under {mode}, not compared: {})   mismatches: {}\n",
        r.programs,
        if r.stopped {
            format!(" of {} (stopped at the --max-seconds limit)", a.programs)
        } else {
            String::new()
        },
        r.compared,
        r.undefined,
        r.mismatches,
    );
    text += &format!(
        "seed {} · {:.1} s · {:.1} programs/s · {:.0} values/s\n",
        a.seed,
        r.elapsed.as_secs_f64(),
        r.programs_per_s(),
        r.values_per_s()
    );
    let shapes = if source == Source::Random && plan.variants > 1 {
        format!(
            " ({} shapes, up to {} programs each, parameters read from a buffer)",
            r.shapes, plan.variants
        )
    } else {
        String::new()
    };
    text += &format!(
        "{} programs per shader{shapes}, {} threads, {contexts} context(s){}; summed over threads: {}\n",
        plan.batch,
        plan.threads,
        if a.no_driver_optimization {
            ", driver optimisation off"
        } else {
            ""
        },
        r.times
    );
    for f in &r.failures {
        text += &format!(
            "\nprogram {} (seed {}): {} mismatch(es)\n",
            f.index, a.seed, f.comparison.mismatch_count
        );
        for m in f.comparison.mismatches.iter().take(5) {
            text += &format!("  {m}\n");
        }
        if let Some((p, c)) = &f.minimal {
            let how = if setup.parametric {
                " (its parameters written in; the campaign ran it reading them from a buffer)"
            } else {
                ""
            };
            text += &format!(
                "  shrunk to {} statement(s); still failing with: {}\n  minimal program as GLSL{how}:\n{}\n",
                p.statements(),
                c.mismatches
                    .first()
                    .map_or(String::from("-"), |m| m.to_string()),
                shader(std::slice::from_ref(p), mode, setup.shape, setup.layout)
            );
        }
    }
    if r.failing_programs > r.failures.len() as u64 {
        text += &format!(
            "\n… and {} more failing program(s) not listed\n",
            r.failing_programs - r.failures.len() as u64
        );
    }
    text
}

/// The JSON report's results.
fn fill_json(
    report: &mut serde_json::Value,
    a: &ReconvergeArgs,
    mode: Mode,
    setup: &Setup,
    r: &Report,
) {
    let failures: Vec<serde_json::Value> = r
        .failures
        .iter()
        .map(|f| {
            let mut jf = json!({
                "program": f.index,
                "mismatch_count": f.comparison.mismatch_count,
                "mismatches": f.comparison.mismatches,
            });
            if let Some((p, c)) = &f.minimal {
                jf["minimal_glsl"] =
                    shader(std::slice::from_ref(p), mode, setup.shape, setup.layout).into();
                jf["minimal_mismatches"] = json!(c.mismatches);
            }
            jf
        })
        .collect();
    let secs = |d: Duration| d.as_secs_f64();
    report["status"] = if r.passed() { "pass" } else { "mismatch" }.into();
    report["programs"] = r.programs.into();
    report["shapes"] = r.shapes.into();
    report["programs_requested"] = a.programs.into();
    report["stopped_at_time_limit"] = r.stopped.into();
    report["operations_compared"] = r.compared.into();
    report["undefined_not_compared"] = r.undefined.into();
    report["mismatches"] = r.mismatches.into();
    report["failing_programs"] = r.failing_programs.into();
    report["failures"] = failures.into();
    report["elapsed_s"] = secs(r.elapsed).into();
    report["programs_per_s"] = r.programs_per_s().into();
    report["values_per_s"] = r.values_per_s().into();
    report["seconds_summed_over_threads"] = json!({
        "generate": secs(r.times.generate),
        "glsl": secs(r.times.glsl),
        "shaderc": secs(r.times.shaderc),
        "pipeline": secs(r.times.pipeline),
        "dispatch": secs(r.times.dispatch),
        "compare": secs(r.times.compare),
        "shrink": secs(r.times.shrink),
    });
}

fn write_json(a: &ReconvergeArgs, report: &serde_json::Value) -> Result<(), CliError> {
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(report).unwrap_or_default() + "\n";
        std::fs::write(path, text).map_err(|e| {
            CliError::usage(format!("--json: cannot write {}: {e}", path.display()))
        })?;
    }
    Ok(())
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    crate::text::utc_timestamp()
}
