//! `lockstep reconverge`: random structured programs (or the seed 001 kernels) on a device under a
//! reconvergence model, compared with the executor; a failure is shrunk and printed as GLSL.

use crate::cli::devices::vk_error;
use crate::cli::{CliError, EXIT_MISMATCH};
use crate::reconverge::compare::Comparison;
use crate::reconverge::device::{prepare_all, run, shrink, unsupported, Setup};
use crate::reconverge::gen::{programs, GenConfig};
use crate::reconverge::glsl::shader;
use crate::reconverge::{seed001, Mode, Program};
use crate::vulkan::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use proptest::prelude::Rng;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

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
    /// Programs per dispatch (one shader). Default: 32 on a GPU, 2 on a CPU device, whose
    /// compiler (llvmpipe) slows down sharply on large shaders.
    #[arg(long)]
    pub batch: Option<usize>,
    /// Start no new batch after this many seconds; the report says how many programs ran.
    #[arg(long, allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
}

/// What is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Random,
    Seed001,
    Seed001Fixed,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Random => "random",
            Source::Seed001 => "seed001",
            Source::Seed001Fixed => "seed001-fixed",
        }
    }
}

/// A failing program, shrunk.
struct Failure {
    index: u64,
    comparison: Comparison,
    minimal: Option<(Program, Comparison)>,
}

/// Runs `lockstep reconverge`.
pub fn run_cmd(a: &ReconvergeArgs) -> Result<String, CliError> {
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
    let ctx = Context::new(a.device).map_err(vk_error)?;
    let device = json!({
        "name": ctx.info.name,
        "driver": ctx.info.driver,
        "api_version": ctx.info.api_version,
        "subgroup_size": ctx.caps.subgroup_size,
    });
    let setup = Setup::for_device(&ctx, mode);
    let batch = a
        .batch
        .unwrap_or(if ctx.info.device_type == "cpu" { 2 } else { 32 });
    let mut report = json!({
        "command": "reconverge",
        "mode": mode.name(),
        "kernel": source.name(),
        "seed": a.seed,
        "device": device,
        "workgroup": setup.shape.invocations(),
        "batch": batch,
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

    let t0 = Instant::now();
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&a.seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let strategy = programs(GenConfig {
        max_records: setup.layout.max_records as u64,
        ..GenConfig::default()
    });
    let pb = ProgressBar::with_draw_target(Some(a.programs), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} programs ({per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(format!("reconverge {mode}"));

    let (mut compared, mut undefined, mut mismatches) = (0u64, 0u64, 0u64);
    let mut failures: Vec<Failure> = Vec::new();
    let mut next = 0u64;
    let par = rayon::current_num_threads().max(1);
    let mut stopped = false;
    while next < a.programs {
        if a.max_seconds
            .is_some_and(|t| t0.elapsed().as_secs_f64() > t)
        {
            stopped = true;
            break;
        }
        // One round: up to `par` batches, built in parallel, dispatched one after another.
        let mut batches: Vec<Vec<Program>> = Vec::new();
        let mut trees: Vec<Vec<Option<Box<dyn ValueTree<Value = Program>>>>> = Vec::new();
        let round_start = next;
        while batches.len() < par && next < a.programs {
            let k = (a.programs - next).min(batch as u64) as usize;
            let mut b = Vec::with_capacity(k);
            let mut t = Vec::with_capacity(k);
            for _ in 0..k {
                match source {
                    Source::Random => {
                        let tree = strategy
                            .new_tree(&mut runner)
                            .map_err(|e| CliError::internal(format!("generator: {e}")))?;
                        b.push(tree.current());
                        t.push(Some(tree));
                    }
                    Source::Seed001 | Source::Seed001Fixed => {
                        let r = runner.rng();
                        let mask = (r.next_u64() as u128) | (r.next_u64() as u128) << 64;
                        // Sometimes sparse, so that whole subgroups need no space.
                        let mask = if r.next_u32().is_multiple_of(2) {
                            mask & ((r.next_u64() as u128) | (r.next_u64() as u128) << 64)
                        } else {
                            mask
                        };
                        b.push(if source == Source::Seed001 {
                            seed001::allocation(mask)
                        } else {
                            seed001::allocation_fixed(mask)
                        });
                        t.push(None);
                    }
                }
            }
            next += k as u64;
            batches.push(b);
            trees.push(t);
        }
        let kernels = prepare_all(&ctx, &setup, &batches).map_err(vk_error)?;
        let mut index = round_start;
        for ((kernel, batch), mut tr) in kernels.iter().zip(&batches).zip(trees) {
            let comps = run(&ctx, &setup, kernel, batch).map_err(vk_error)?;
            for (j, c) in comps.into_iter().enumerate() {
                compared += c.compared;
                undefined += c.undefined;
                mismatches += c.mismatch_count;
                if !c.ok() {
                    let minimal = match tr[j].take() {
                        Some(mut tree) if failures.len() < 3 => {
                            pb.set_message(format!("reconverge {mode}: shrinking a failure"));
                            // Shrinking gets at most a minute (and what --max-seconds leaves).
                            let minute = Instant::now() + std::time::Duration::from_secs(60);
                            let deadline = a.max_seconds.map_or(minute, |t| {
                                (t0 + std::time::Duration::from_secs_f64(t))
                                    .max(Instant::now() + std::time::Duration::from_secs(10))
                            });
                            let s = shrink(
                                &ctx,
                                &setup,
                                tree.as_mut(),
                                c.clone(),
                                200,
                                Some(deadline.min(minute)),
                            )
                            .map_err(vk_error)?;
                            pb.set_message(format!("reconverge {mode}"));
                            Some((s.program, s.comparison))
                        }
                        _ => None,
                    };
                    failures.push(Failure {
                        index: index + j as u64,
                        comparison: c,
                        minimal,
                    });
                }
            }
            index += batch.len() as u64;
            pb.inc(batch.len() as u64);
        }
    }
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let ran = next;
    let rate = ran as f64 / secs.max(1e-9);

    let mut text = format!(
        "reconverge: mode {mode} ({}) on {} (subgroup size {}), workgroups of {} invocations\n",
        source.name(),
        ctx.info.name,
        ctx.caps.subgroup_size,
        setup.shape.invocations()
    );
    text += &format!(
        "programs run: {ran}{}   operations compared: {compared}   (undefined under {mode}, not compared: {undefined})   mismatches: {mismatches}\n",
        if stopped {
            format!(" of {} (stopped at the --max-seconds limit)", a.programs)
        } else {
            String::new()
        }
    );
    text += &format!("seed {} · {:.1} s · {rate:.1} programs/s\n", a.seed, secs);
    let mut jfail = Vec::new();
    for f in &failures {
        text += &format!(
            "\nprogram {} (seed {}): {} mismatch(es)\n",
            f.index, a.seed, f.comparison.mismatch_count
        );
        for m in f.comparison.mismatches.iter().take(5) {
            text += &format!("  {m}\n");
        }
        let mut jf = json!({
            "program": f.index,
            "mismatch_count": f.comparison.mismatch_count,
            "mismatches": f.comparison.mismatches,
        });
        if let Some((p, c)) = &f.minimal {
            let glsl = shader(std::slice::from_ref(p), mode, setup.shape, setup.layout);
            text += &format!(
                "  shrunk to {} statement(s); still failing with: {}\n  minimal program as GLSL:\n{}\n",
                p.statements(),
                c.mismatches
                    .first()
                    .map_or(String::from("-"), |m| m.to_string()),
                glsl
            );
            jf["minimal_glsl"] = glsl.into();
            jf["minimal_mismatches"] = json!(c.mismatches);
        }
        jfail.push(jf);
    }
    report["status"] = if mismatches == 0 { "pass" } else { "mismatch" }.into();
    report["programs"] = ran.into();
    report["programs_requested"] = a.programs.into();
    report["stopped_at_time_limit"] = stopped.into();
    report["operations_compared"] = compared.into();
    report["undefined_not_compared"] = undefined.into();
    report["mismatches"] = mismatches.into();
    report["failures"] = jfail.into();
    report["elapsed_s"] = secs.into();
    report["programs_per_s"] = rate.into();
    write_json(a, &report)?;
    if mismatches > 0 {
        return Err(CliError {
            code: EXIT_MISMATCH,
            message: format!("mismatch: the device disagrees with the model\n{text}"),
        });
    }
    Ok(text)
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
