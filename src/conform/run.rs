//! Running the suite: choose kernels and sizes, compile, dispatch batches, compare, collect.

use crate::conform::cases::{self, Batch};
use crate::conform::compare::{compare_batch, BatchCtx, RowKey, Stats};
use crate::conform::glsl::{generate, Fault, KernelSpec, OUT_WORDS, SENTINEL};
use crate::model::{
    Category, Feature, Op, OpInfo, ScalarType, SubgroupSize, ValueType, WorkgroupShape,
};
use crate::vulkan::{compile_glsl, Capabilities, Context, Kernel, KernelOptions, SpecValue};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
    /// run only shard K of N (1-based): every N-th job (kernel × workgroup shape) from the K-th,
    /// each job's cases seeded by the job alone, so the N shards together are the whole run
    pub shard: Option<crate::shard::Shard>,
    /// run only the jobs that hold these rows (a retry of flaky rows): each such job exactly as in
    /// the full run (same cases, same seeds), every other job left out
    pub only: Option<Vec<RowKey>>,
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
            shard: None,
            only: None,
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

/// One pipeline's work: a kernel at one subgroup size and workgroup shape.
struct Job {
    kernel: usize,
    size: SubgroupSize,
    shape: WorkgroupShape,
}

/// The kernels to run, with their subgroup size, and what was left out as unsupported.
struct Plan {
    kernels: Vec<(SubgroupSize, KernelSpec)>,
    unsupported: Vec<Unsupported>,
}

/// What every job adds to, behind locks.
#[derive(Default)]
struct Shared {
    stats: Mutex<Stats>,
    errors: Mutex<Vec<RunError>>,
    kernels: Mutex<BTreeMap<String, String>>,
    times: Mutex<Timing>,
    abort: AtomicBool,
    aborted: Mutex<Option<String>>,
}

/// Runs the suite on `ctx`: validate the options, plan the kernels, compile them, run every
/// (kernel, shape) job and assemble the report.
pub fn run(
    ctx: &Context,
    opts: &ConformOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, ConformError> {
    let t0 = Instant::now();
    let sizes = validate(ctx, opts)?;
    let plan = plan(ctx, opts, &sizes)?;
    let tc = Instant::now();
    let (sources, spirv) = compile(&plan, opts.fault);
    let shared = Shared::default();
    shared.times.lock().unwrap().compile = tc.elapsed().as_secs_f64();
    let mut jobs = jobs(ctx, opts, &plan);
    // A kernel's cases are spread over all its shapes, sharded or not (a shard's jobs are the
    // unsharded run's jobs).
    let shapes: Vec<usize> = (0..plan.kernels.len())
        .map(|k| jobs.iter().filter(|j| j.kernel == k).count().max(1))
        .collect();
    crate::shard::Shard::retain(opts.shard, &mut jobs);
    if let Some(rows) = &opts.only {
        jobs.retain(|j| {
            let name = plan.kernels[j.kernel].1.name();
            rows.iter().any(|r| {
                r.size as u64 == j.size.get() as u64
                    && r.shape == [j.shape.x, j.shape.y, j.shape.z]
                    && (r.ty == name || (r.ty == "-" && name == "none"))
            })
        });
    }
    progress(Progress::Start(jobs.len() as u64));
    let shapes_per_kernel = |k: usize| shapes[k];
    let more = worker_contexts(ctx);
    let contexts: Vec<&Context> = std::iter::once(ctx).chain(more.iter()).collect();
    jobs.par_iter().for_each(|job| {
        if !shared.abort.load(Ordering::Relaxed) {
            let kernel = &plan.kernels[job.kernel].1;
            let worker = rayon::current_thread_index().unwrap_or(0);
            let run = JobRun {
                ctx: contexts[worker % contexts.len()],
                opts,
                job,
                spec: kernel,
                source: &sources[job.kernel],
                shapes: shapes_per_kernel(job.kernel),
                shared: &shared,
            };
            run.run(&spirv[job.kernel]);
            progress(Progress::Done(kernel.name()));
        }
    });
    let mut timing = shared.times.into_inner().unwrap();
    timing.total = t0.elapsed().as_secs_f64();
    Ok(Report {
        device: ctx.info.clone(),
        sizes,
        stats: shared.stats.into_inner().unwrap(),
        unsupported: plan.unsupported,
        errors: shared.errors.into_inner().unwrap(),
        kernels: shared.kernels.into_inner().unwrap(),
        timing,
        aborted: shared.aborted.into_inner().unwrap(),
        strict: opts.strict,
    })
}

/// More contexts on the same device, one per further worker thread, for a CPU device: lavapipe
/// compiles a pipeline when it is first dispatched, on its queue's one submit thread, so with one
/// context every compilation waits for the one before (docs/conformance-results.md, "Cold
/// start"). A GPU driver compiles when the pipeline is created, on the calling thread: one context
/// is enough. A context that cannot be made is simply not used.
fn worker_contexts(ctx: &Context) -> Vec<Context> {
    if ctx.info.device_type != "cpu" {
        return Vec::new();
    }
    (1..rayon::current_num_threads())
        .filter_map(|_| Context::new(Some(ctx.info.index)).ok())
        .collect()
}

/// The subgroup sizes to run, after checking the options against the device.
fn validate(ctx: &Context, opts: &ConformOptions) -> Result<Vec<u32>, ConformError> {
    if opts.cases == 0 {
        return Err(ConformError::NoCases);
    }
    let caps = &ctx.caps;
    let allowed = caps.selectable_sizes();
    Ok(match opts.sizes {
        SizeChoice::Default => vec![caps.subgroup_size],
        SizeChoice::All => allowed,
        SizeChoice::One(s) if allowed.contains(&s) => vec![s],
        SizeChoice::One(s) => {
            return Err(ConformError::Size {
                size: s,
                device: ctx.info.name.clone(),
                allowed: allowed
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    })
}

/// The kernels of every size, keeping the ops and types the options ask for; ops the device
/// cannot run leave their kernel and are reported as unsupported, with the reason.
fn plan(ctx: &Context, opts: &ConformOptions, sizes: &[u32]) -> Result<Plan, ConformError> {
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
    let mut kernels = Vec::new();
    let mut unsupported: Vec<Unsupported> = Vec::new();
    for &s in sizes {
        let size = SubgroupSize::new(s as u64).expect("device sizes are powers of two <= 128");
        for mut spec in KernelSpec::all(size) {
            spec.retain(|_, e| keep_op(e.info()) && keep_ty(e.ty));
            spec.retain(|_, e| {
                let o = e.info();
                let Some(reason) = unsupported_reason(&ctx.caps, api_1_2, o, e.ty) else {
                    return true;
                };
                let ty = e.ty.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
                if !unsupported
                    .iter()
                    .any(|u| u.op == o.name && u.ty == ty && u.size == s)
                {
                    unsupported.push(Unsupported {
                        op: o.name.clone(),
                        ty,
                        size: s,
                        reason,
                    });
                }
                false
            });
            if !spec.groups.is_empty() {
                kernels.push((size, spec));
            }
        }
    }
    if kernels.is_empty() && unsupported.is_empty() {
        return Err(ConformError::Empty);
    }
    Ok(Plan {
        kernels,
        unsupported,
    })
}

type Compiled = Result<std::sync::Arc<Vec<u32>>, String>;

/// Every kernel's GLSL and its SPIR-V (shaderc, in parallel).
fn compile(plan: &Plan, fault: Option<Fault>) -> (Vec<String>, Vec<Compiled>) {
    let sources: Vec<String> = plan
        .kernels
        .iter()
        .map(|(_, k)| generate(k, fault))
        .collect();
    let spirv = plan
        .kernels
        .par_iter()
        .zip(sources.par_iter())
        .map(|((_, k), src)| compile_glsl(src, &k.name(), true).map_err(|e| e.to_string()))
        .collect();
    (sources, spirv)
}

/// Every (kernel, shape) whose workgroup the device can run.
fn jobs(ctx: &Context, opts: &ConformOptions, plan: &Plan) -> Vec<Job> {
    let caps = &ctx.caps;
    let mut jobs = Vec::new();
    for (i, (size, _)) in plan.kernels.iter().enumerate() {
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
                    kernel: i,
                    size: *size,
                    shape,
                });
            }
        }
    }
    jobs
}

/// Workgroups per dispatch: the guaranteed maxComputeWorkGroupCount[0] is 65535.
const MAX_WORKGROUPS: usize = 60_000;

/// One job under way.
struct JobRun<'a> {
    ctx: &'a Context,
    opts: &'a ConformOptions,
    job: &'a Job,
    spec: &'a KernelSpec,
    source: &'a str,
    /// how many shapes the kernel's cases are spread over
    shapes: usize,
    shared: &'a Shared,
}

impl JobRun<'_> {
    /// Builds the pipeline, then generates, dispatches and compares the job's batches.
    fn run(&self, spirv: &Compiled) {
        let words = match spirv {
            Ok(w) => w.clone(),
            Err(e) => return self.error(e.clone()),
        };
        let tp = Instant::now();
        let kopts = KernelOptions {
            spec: vec![
                (0, SpecValue::U32(self.job.shape.x)),
                (1, SpecValue::U32(self.job.shape.y)),
                (2, SpecValue::U32(self.job.shape.z)),
            ],
            required_subgroup_size: self.ctx.caps.size_control.then_some(self.job.size.get()),
        };
        let kernel = match self.ctx.kernel(&words, &kopts) {
            Ok(k) => k,
            Err(e) => return self.error(format!("pipeline creation failed: {e}")),
        };
        let mut t = Timing {
            pipelines: tp.elapsed().as_secs_f64(),
            ..Timing::default()
        };
        let mut local = Stats::default();
        for batch in self.batches(&mut t) {
            match self.dispatch(&kernel, &batch, &mut t) {
                Some(words) => {
                    let tcmp = Instant::now();
                    let bctx = BatchCtx {
                        spec: self.spec,
                        kernel: self.spec.name(),
                        size: self.job.size,
                    };
                    local.merge(compare_batch(&bctx, &batch, &words));
                    t.compare += tcmp.elapsed().as_secs_f64();
                }
                None => break,
            }
        }
        if !local.mismatches.is_empty() {
            self.keep_source();
        }
        self.shared.stats.lock().unwrap().merge(local);
        let mut times = self.shared.times.lock().unwrap();
        times.pipelines += t.pipelines;
        times.setup += t.setup;
        times.dispatch += t.dispatch;
        times.compare += t.compare;
    }

    /// The job's cases: each group's batches exactly as drawn for a kernel of its own (the same
    /// per-op counts, chunks and seeds), packed into dispatches of at most [`MAX_WORKGROUPS`].
    fn batches(&self, t: &mut Timing) -> Vec<Batch> {
        let ts = Instant::now();
        let (shape, size) = (self.job.shape, self.job.size);
        let per_op = self.opts.cases.div_ceil(self.shapes);
        let per_wg = (shape.invocations() as usize).div_ceil(size.lanes());
        let wg_per_op = per_op.div_ceil(per_wg).max(1);
        let mut out: Vec<Batch> = Vec::new();
        for (g, group) in self.spec.groups.iter().enumerate() {
            let chunks = (wg_per_op * group.entries.len())
                .div_ceil(MAX_WORKGROUPS)
                .max(1);
            for chunk in 0..chunks {
                let seed = self.opts.seed.wrapping_add(chunk as u64);
                let b = cases::generate(group, shape, size, per_op.div_ceil(chunks), seed);
                let fits = out
                    .last()
                    .is_some_and(|o| (o.workgroups + b.workgroups) as usize <= MAX_WORKGROUPS);
                if !fits {
                    out.push(Batch::empty(shape));
                }
                let last = out.last_mut().expect("a batch was just pushed");
                last.append(&b, self.spec.first_opcode(g));
            }
        }
        t.setup += ts.elapsed().as_secs_f64();
        out
    }

    /// Runs one batch; its output words, or `None` after recording the failure.
    fn dispatch(&self, kernel: &Kernel, batch: &Batch, t: &mut Timing) -> Option<Vec<u32>> {
        let ts = Instant::now();
        let inv = self.job.shape.invocations() as usize;
        let out_len = batch.workgroups as usize * inv * OUT_WORDS;
        let bufs = (|| -> Result<_, crate::vulkan::VkError> {
            Ok((
                self.ctx.host_buffer(&batch.cases)?,
                self.ctx.host_buffer(&batch.inputs)?,
                self.ctx.host_buffer(&vec![SENTINEL; out_len])?,
            ))
        })();
        let (cb, ib, ob) = match bufs {
            Ok(b) => b,
            Err(e) => {
                self.error(format!("buffer allocation failed: {e}"));
                return None;
            }
        };
        t.setup += ts.elapsed().as_secs_f64();
        let passes = vec![(
            vec![cb.into_bytes(), ib.into_bytes(), ob.clone().into_bytes()],
            [batch.workgroups, 1, 1],
        )];
        match self.ctx.dispatch(kernel, &passes) {
            Ok(d) => t.dispatch += d.as_secs_f64(),
            Err(e) => {
                let msg = format!(
                    "dispatch of kernel {} ({}) at size {} workgroup {} failed: {e}",
                    self.spec.name(),
                    self.op_names().join(", "),
                    self.job.size,
                    self.job.shape
                );
                self.error(msg.clone());
                self.shared.abort.store(true, Ordering::Relaxed);
                *self.shared.aborted.lock().unwrap() = Some(msg);
                return None;
            }
        }

        match ob.read() {
            Ok(w) => Some(w.to_vec()),
            Err(e) => {
                self.error(format!("reading results failed: {e}"));
                None
            }
        }
    }

    fn op_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.spec.entries().map(|e| e.info().name.clone()).collect();
        v.dedup();
        v
    }

    /// Records a pipeline or dispatch failure (and keeps the kernel's GLSL for the report).
    fn error(&self, e: String) {
        let ty = match self.spec.groups.as_slice() {
            [g] => g.ty.map(|t| t.to_string()),
            _ => self.spec.groups[0].ty.map(|t| t.scalar_type().to_string()),
        };
        self.shared.errors.lock().unwrap().push(RunError {
            kernel: self.spec.name(),
            ops: self.op_names(),
            ty: ty.unwrap_or_else(|| "-".into()),
            size: self.job.size.get(),
            workgroup: [self.job.shape.x, self.job.shape.y, self.job.shape.z],
            error: e,
        });
        self.keep_source();
    }

    fn keep_source(&self) {
        self.shared
            .kernels
            .lock()
            .unwrap()
            .insert(self.spec.name(), self.source.to_string());
    }
}
