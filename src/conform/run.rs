//! Running the suite: choose kernels and sizes, compile, dispatch batches, compare, collect.

use crate::conform::cases::{self, Batch};
use crate::conform::compare::{compare_batch, BatchCtx, Stats};
use crate::conform::glsl::{generate, Fault, KernelSpec, OUT_WORDS, SENTINEL};
use crate::model::{
    Category, Feature, Op, OpInfo, ScalarType, SubgroupSize, ValueType, WorkgroupShape,
};
use crate::vulkan::{compile_glsl, Capabilities, Context, KernelOptions, SpecValue};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Which subgroup sizes to test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeChoice {
    /// The device's default size.
    Default,
    /// Every size the device can require for compute (just the default without size control).
    All,
    /// One size (must be one the device can use).
    One(u32),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ConformOptions {
    /// subgroup sizes
    pub sizes: SizeChoice,
    /// only these categories
    pub categories: Option<Vec<Category>>,
    /// only these ops
    pub ops: Option<Vec<Op>>,
    /// only these value types (ops without a value run when `None` or when the list is given? see `run`)
    pub types: Option<Vec<ValueType>>,
    /// subgroups per (op, type, size), spread over the workgroup shapes
    pub cases: usize,
    /// seed of the random cases
    pub seed: u64,
    /// workgroup shapes (default: [`cases::shapes`])
    pub shapes: Option<Vec<WorkgroupShape>>,
    /// test only: a deliberate bug in the kernels
    pub fault: Option<Fault>,
    /// treat known device deviations (conform::known) as failures
    pub strict: bool,
}

impl Default for ConformOptions {
    fn default() -> Self {
        ConformOptions {
            sizes: SizeChoice::Default,
            categories: None,
            ops: None,
            types: None,
            cases: 1000,
            seed: 1,
            shapes: None,
            fault: None,
            strict: false,
        }
    }
}

/// An (op, type, size) the device cannot run, and why.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Unsupported {
    /// catalogue name
    pub op: String,
    /// value type (`-` for none)
    pub ty: String,
    /// subgroup size
    pub size: u32,
    /// the missing feature
    pub reason: String,
}

/// A failure that is not a lane mismatch (pipeline creation, dispatch).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunError {
    /// kernel name
    pub kernel: String,
    /// the ops of the kernel
    pub ops: Vec<String>,
    /// value type
    pub ty: String,
    /// subgroup size
    pub size: u32,
    /// workgroup shape
    pub workgroup: [u32; 3],
    /// the error
    pub error: String,
}

/// Where the time went (summed over parallel jobs, except `total`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Timing {
    /// GLSL → SPIR-V (shaderc), wall
    pub compile: f64,
    /// compute pipeline creation (driver compilation)
    pub pipelines: f64,
    /// generating cases and buffers
    pub setup: f64,
    /// device execution (submit to fence)
    pub dispatch: f64,
    /// model evaluation and comparison
    pub compare: f64,
    /// the whole run, wall
    pub total: f64,
}

/// The outcome of a run.
#[derive(Debug)]
pub struct Report {
    /// device name, driver, default size
    pub device: crate::vulkan::DeviceInfo,
    /// the sizes run
    pub sizes: Vec<u32>,
    /// results, mismatches, undefined observations, layouts
    pub stats: Stats,
    /// what could not run
    pub unsupported: Vec<Unsupported>,
    /// pipeline / dispatch failures
    pub errors: Vec<RunError>,
    /// GLSL of every kernel that had a mismatch or error, by name
    pub kernels: BTreeMap<String, String>,
    /// time
    pub timing: Timing,
    /// the run stopped early (device lost)
    pub aborted: Option<String>,
    /// known deviations count as failures
    pub strict: bool,
}

impl Report {
    /// Subgroups compared.
    pub fn cases(&self) -> u64 {
        self.stats.rows.values().map(|r| r.cases).sum()
    }
    /// Subgroups with a mismatch.
    pub fn failed(&self) -> u64 {
        self.stats.rows.values().map(|r| r.failed).sum()
    }
    /// The documented deviation explaining a failing row, if any (never in strict mode).
    pub fn known(
        &self,
        row: &crate::conform::compare::RowKey,
    ) -> Option<&'static crate::conform::known::Known> {
        if self.strict {
            return None;
        }
        let stats = self.stats.rows.get(row)?;
        crate::conform::known::explain(&self.device.driver, row, stats)
    }
    /// Failing subgroups no known deviation explains.
    pub fn unexplained_failed(&self) -> u64 {
        self.stats
            .rows
            .iter()
            .filter(|(k, _)| self.known(k).is_none())
            .map(|(_, r)| r.failed)
            .sum()
    }
    /// True when every failure is a documented deviation and nothing errored.
    pub fn passed(&self) -> bool {
        self.unexplained_failed() == 0 && self.errors.is_empty() && self.aborted.is_none()
    }
}

/// Errors that stop a run before it starts.
#[derive(Debug, thiserror::Error)]
pub enum ConformError {
    /// A subgroup size the device cannot use.
    #[error("subgroup size {size} is not available on {device}: it can use {allowed}")]
    Size {
        /// requested
        size: u32,
        /// device name
        device: String,
        /// the sizes it can use
        allowed: String,
    },
    /// `--cases 0`.
    #[error("--cases must be at least 1")]
    NoCases,
    /// The filters leave nothing to run.
    #[error("nothing to run: no catalogue op matches the given --category/--ops/--types")]
    Empty,
}

/// Why `caps` cannot run `info` on `ty`, if it cannot.
pub fn unsupported_reason(
    caps: &Capabilities,
    api_1_2: bool,
    info: &OpInfo,
    ty: Option<ValueType>,
) -> Option<String> {
    if !api_1_2 {
        return Some("lockstep's kernels are SPIR-V 1.5 (dynamically uniform broadcast ids): needs Vulkan 1.2".into());
    }
    if !caps.compute {
        return Some(
            "subgroup operations are not supported in compute shaders (subgroupSupportedStages)"
                .into(),
        );
    }
    if !caps.ops.ballot {
        return Some("VK_SUBGROUP_FEATURE_BALLOT_BIT: lockstep records each lane's active set with subgroupBallot".into());
    }
    for f in info.features {
        let have = match f {
            Feature::Category(c) => match c {
                Category::Basic => caps.ops.basic,
                Category::Vote => caps.ops.vote,
                Category::Ballot => caps.ops.ballot,
                Category::Arithmetic => caps.ops.arithmetic,
                Category::Shuffle => caps.ops.shuffle,
                Category::ShuffleRelative => caps.ops.shuffle_relative,
                Category::Clustered => caps.ops.clustered,
                Category::Quad => caps.ops.quad,
                Category::Rotate => caps.ops.rotate,
            },
            Feature::RotateClustered => caps.ops.rotate_clustered,
        };
        if !have {
            return Some(f.vulkan_name().to_string());
        }
    }
    if matches!(info.op, Op::Broadcast | Op::QuadBroadcast) && !caps.broadcast_dynamic_id {
        return Some(
            "subgroupBroadcastDynamicId: lockstep passes the id as a dynamically uniform value"
                .into(),
        );
    }
    if let Some(t) = ty {
        let ext = caps.subgroup_extended_types;
        let (ok, what) = match t.scalar_type() {
            ScalarType::I8 | ScalarType::U8 => (
                caps.int8 && ext,
                "shaderInt8 and shaderSubgroupExtendedTypes",
            ),
            ScalarType::I16 | ScalarType::U16 => (
                caps.int16 && ext,
                "shaderInt16 and shaderSubgroupExtendedTypes",
            ),
            ScalarType::I64 | ScalarType::U64 => (
                caps.int64 && ext,
                "shaderInt64 and shaderSubgroupExtendedTypes",
            ),
            ScalarType::F16 => (
                caps.float16 && ext,
                "shaderFloat16 and shaderSubgroupExtendedTypes",
            ),
            ScalarType::F64 => (caps.float64, "shaderFloat64"),
            _ => (true, ""),
        };
        if !ok {
            return Some(what.to_string());
        }
    }
    None
}

/// Progress events for a progress bar.
pub enum Progress {
    /// `n` jobs (kernel × shape × size) will run
    Start(u64),
    /// one job finished
    Done(String),
}

struct Job {
    spec_index: usize,
    size: SubgroupSize,
    shape: WorkgroupShape,
}

/// Runs the suite on `ctx`.
pub fn run(
    ctx: &Context,
    opts: &ConformOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, ConformError> {
    let t0 = Instant::now();
    if opts.cases == 0 {
        return Err(ConformError::NoCases);
    }
    let caps = &ctx.caps;
    let allowed = caps.selectable_sizes();
    let sizes: Vec<u32> = match opts.sizes {
        SizeChoice::Default => vec![caps.subgroup_size],
        SizeChoice::All => allowed.clone(),
        SizeChoice::One(s) => {
            if !allowed.contains(&s) {
                return Err(ConformError::Size {
                    size: s,
                    device: ctx.info.name.clone(),
                    allowed: allowed
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            vec![s]
        }
    };
    let api_1_2 = ctx.device.api_version() >= vulkano::Version::V1_2;
    let keep_op = |o: &OpInfo| {
        opts.categories
            .as_ref()
            .is_none_or(|c| c.contains(&o.category))
            && opts.ops.as_ref().is_none_or(|v| v.contains(&o.op))
    };
    let keep_ty = |t: Option<ValueType>| match (&opts.types, t) {
        (None, _) => true,
        (Some(v), Some(t)) => v.contains(&t),
        // Ops without a value run unless --types names only value types and no op was asked for.
        (Some(_), None) => opts.ops.is_some() || opts.categories.is_some(),
    };
    let mut specs: Vec<(SubgroupSize, KernelSpec)> = Vec::new();
    let mut unsupported = Vec::new();
    for &s in &sizes {
        let size = SubgroupSize::new(s as u64).expect("device sizes are powers of two <= 128");
        for mut spec in KernelSpec::all(size) {
            spec.entries.retain(|e| keep_op(crate::model::info(e.op)));
            if spec.entries.is_empty() || !keep_ty(spec.ty) {
                continue;
            }
            // Ops the device cannot run leave the kernel (and are reported), the rest stay.
            let mut dropped: Vec<(String, String)> = Vec::new();
            spec.entries.retain(|e| {
                let o = crate::model::info(e.op);
                match unsupported_reason(caps, api_1_2, o, spec.ty) {
                    Some(reason) => {
                        if !dropped.iter().any(|(n, _)| *n == o.name) {
                            dropped.push((o.name.clone(), reason));
                        }
                        false
                    }
                    None => true,
                }
            });
            for (op, reason) in dropped {
                unsupported.push(Unsupported {
                    op,
                    ty: spec.ty.map(|t| t.to_string()).unwrap_or_else(|| "-".into()),
                    size: s,
                    reason,
                });
            }
            if spec.entries.is_empty() {
                continue;
            }
            specs.push((size, spec));
        }
    }
    if specs.is_empty() && unsupported.is_empty() {
        return Err(ConformError::Empty);
    }
    // Compile every kernel (shaderc), in parallel.
    let tc = Instant::now();
    let sources: Vec<String> = specs.iter().map(|(_, s)| generate(s, opts.fault)).collect();
    let spirv: Vec<Result<std::sync::Arc<Vec<u32>>, String>> = specs
        .par_iter()
        .zip(sources.par_iter())
        .map(|((_, s), src)| compile_glsl(src, &s.name(), true).map_err(|e| e.to_string()))
        .collect();
    let compile = tc.elapsed().as_secs_f64();
    let mut jobs = Vec::new();
    for (i, (size, _)) in specs.iter().enumerate() {
        let shapes = opts.shapes.clone().unwrap_or_else(|| cases::shapes(*size));
        for shape in shapes {
            let inv = shape.invocations();
            let fits = inv <= caps.max_workgroup_invocations
                && shape.x <= caps.max_workgroup_size[0]
                && shape.y <= caps.max_workgroup_size[1]
                && shape.z <= caps.max_workgroup_size[2]
                && (!caps.size_control
                    || inv.div_ceil(size.get()) <= caps.max_workgroup_subgroups.max(1));
            if fits {
                jobs.push(Job {
                    spec_index: i,
                    size: *size,
                    shape,
                });
            }
        }
    }
    progress(Progress::Start(jobs.len() as u64));
    let per_shape: BTreeMap<usize, usize> = jobs.iter().fold(BTreeMap::new(), |mut m, j| {
        *m.entry(j.spec_index).or_insert(0) += 1;
        m
    });
    let stats = Mutex::new(Stats::default());
    let errors = Mutex::new(Vec::new());
    let kernels = Mutex::new(BTreeMap::new());
    let times = Mutex::new(Timing {
        compile,
        ..Timing::default()
    });
    let abort = AtomicBool::new(false);
    let aborted = Mutex::new(None);
    jobs.par_iter().for_each(|job| {
        if abort.load(Ordering::Relaxed) {
            return;
        }
        let spec = &specs[job.spec_index].1;
        let name = spec.name();
        let ty = spec.ty.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
        let op_names = || {
            let mut v: Vec<String> = spec
                .entries
                .iter()
                .map(|e| crate::model::info(e.op).name.clone())
                .collect();
            v.dedup();
            v
        };
        let record_error = |e: String| {
            errors.lock().unwrap().push(RunError {
                kernel: name.clone(),
                ops: op_names(),
                ty: ty.clone(),
                size: job.size.get(),
                workgroup: [job.shape.x, job.shape.y, job.shape.z],
                error: e,
            });
            kernels
                .lock()
                .unwrap()
                .insert(name.clone(), sources[job.spec_index].clone());
        };
        let words = match &spirv[job.spec_index] {
            Ok(w) => w.clone(),
            Err(e) => {
                record_error(e.clone());
                progress(Progress::Done(name.clone()));
                return;
            }
        };
        let tp = Instant::now();
        let kopts = KernelOptions {
            spec: vec![
                (0, SpecValue::U32(job.shape.x)),
                (1, SpecValue::U32(job.shape.y)),
                (2, SpecValue::U32(job.shape.z)),
            ],
            required_subgroup_size: caps.size_control.then_some(job.size.get()),
        };
        let kernel = match ctx.kernel(&words, &kopts) {
            Ok(k) => k,
            Err(e) => {
                record_error(format!("pipeline creation failed: {e}"));
                progress(Progress::Done(name.clone()));
                return;
            }
        };
        let pipelines = tp.elapsed();
        let shapes_n = per_shape.get(&job.spec_index).copied().unwrap_or(1).max(1);
        let per_op = opts.cases.div_ceil(shapes_n);
        let inv = job.shape.invocations() as usize;
        let per_wg = inv.div_ceil(job.size.lanes());
        // Keep each dispatch under the guaranteed 65535 workgroups.
        let wg_per_op = per_op.div_ceil(per_wg).max(1);
        let chunks = (wg_per_op * spec.entries.len()).div_ceil(60_000).max(1);
        let mut local = Stats::default();
        let (mut setup, mut dispatch, mut compare) =
            (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for chunk in 0..chunks {
            let ts = Instant::now();
            let n = per_op.div_ceil(chunks);
            let batch: Batch = cases::generate(
                spec,
                job.shape,
                job.size,
                n,
                opts.seed.wrapping_add(chunk as u64),
            );
            let out_len = batch.workgroups as usize * inv * OUT_WORDS;
            let bufs = (|| -> Result<_, crate::vulkan::VkError> {
                Ok((
                    ctx.host_buffer(&batch.cases)?,
                    ctx.host_buffer(&batch.inputs)?,
                    ctx.host_buffer(&vec![SENTINEL; out_len])?,
                ))
            })();
            let (cb, ib, ob) = match bufs {
                Ok(b) => b,
                Err(e) => {
                    record_error(format!("buffer allocation failed: {e}"));
                    break;
                }
            };
            setup += ts.elapsed();
            let passes = vec![(
                vec![cb.into_bytes(), ib.into_bytes(), ob.clone().into_bytes()],
                [batch.workgroups, 1, 1],
            )];
            match ctx.dispatch(&kernel, &passes) {
                Ok(d) => dispatch += d,
                Err(e) => {
                    let msg = format!(
                        "dispatch of {name} ({}) at size {} workgroup {} failed: {e}",
                        op_names().join(", "),
                        job.size,
                        job.shape
                    );
                    record_error(msg.clone());
                    abort.store(true, Ordering::Relaxed);
                    *aborted.lock().unwrap() = Some(msg);
                    break;
                }
            }
            let tcmp = Instant::now();
            let words = match ob.read() {
                Ok(w) => w.to_vec(),
                Err(e) => {
                    record_error(format!("reading results failed: {e}"));
                    break;
                }
            };
            let bctx = BatchCtx {
                spec,
                kernel: name.clone(),
                size: job.size,
            };
            local.merge(compare_batch(&bctx, &batch, &words));
            compare += tcmp.elapsed();
        }
        if !local.mismatches.is_empty() {
            kernels
                .lock()
                .unwrap()
                .insert(name.clone(), sources[job.spec_index].clone());
        }
        stats.lock().unwrap().merge(local);
        {
            let mut t = times.lock().unwrap();
            t.pipelines += pipelines.as_secs_f64();
            t.setup += setup.as_secs_f64();
            t.dispatch += dispatch.as_secs_f64();
            t.compare += compare.as_secs_f64();
        }
        progress(Progress::Done(name));
    });
    let mut timing = times.into_inner().unwrap();
    timing.total = t0.elapsed().as_secs_f64();
    Ok(Report {
        device: ctx.info.clone(),
        sizes,
        stats: stats.into_inner().unwrap(),
        unsupported,
        errors: errors.into_inner().unwrap(),
        kernels: kernels.into_inner().unwrap(),
        timing,
        aborted: aborted.into_inner().unwrap(),
        strict: opts.strict,
    })
}
