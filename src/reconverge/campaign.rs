//! A campaign: many random programs (or the seed 001 kernels) run on a device and compared with the
//! executor, failures shrunk to a minimal program — the loop behind `lockstep reconverge`.
//!
//! The phases, for every batch of programs: **generate** (the seeded proptest strategy, in order,
//! on the calling thread, so a seed names the same programs whatever the batch size or number of
//! threads), **build** (GLSL, shaderc, pipeline) and **run** (dispatch, read back) on a [`Device`],
//! **compare** every workgroup with the executor ([`compare_batch`]), and, for a failing program,
//! **shrink** it (proptest's simplification, one device run per candidate). Batches are built, run
//! and compared by `Plan::threads` workers at once while the calling thread generates the next
//! ones; results are taken in program order, so the report and which failures are shrunk do not
//! depend on timing.
//!
//! Every value the model defines is compared, whatever the batch size: a batch is one shader with
//! one program per workgroup, and each workgroup's records are compared as if it ran alone.

use crate::model::{SubgroupSize, WorkgroupShape};
use crate::reconverge::compare::{compare, Comparison};
use crate::reconverge::glsl::{RecordLayout, COUNTER_WORDS};
use crate::reconverge::mode::Mode;
use crate::reconverge::program::Program;
use crate::reconverge::r#gen::{programs, shrink, variant, GenConfig};
use crate::reconverge::seed001;
use proptest::prelude::Rng;
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::AddAssign;
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How programs run on a device.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// the reconvergence model requested (and compared against)
    pub mode: Mode,
    /// the workgroup shape
    pub shape: WorkgroupShape,
    /// where records go
    pub layout: RecordLayout,
    /// programs read their parameters from a buffer, so consecutive programs of one shape share
    /// one copy of the code ([`crate::reconverge::glsl::parametric_shader`]); otherwise every
    /// parameter is a constant in the code
    pub parametric: bool,
}

impl Setup {
    /// 128 invocations in a line, 64 records each: four subgroups of 32 on an H100, sixteen of 8
    /// on lavapipe.
    pub fn new(mode: Mode, subgroup_size: u32) -> Setup {
        Setup {
            mode,
            shape: WorkgroupShape { x: 128, y: 1, z: 1 },
            layout: RecordLayout::new(64, subgroup_size),
            parametric: false,
        }
    }

    /// The same setup with parameters read from a buffer (`on`) or written into the code.
    pub fn with_parametric(mut self, on: bool) -> Setup {
        self.parametric = on;
        self
    }

    /// Words of a device's output for one program: its counters, then its records.
    pub fn words_per_program(&self) -> usize {
        self.layout
            .buffer_words(1, self.shape.invocations() as usize)
    }
}

/// Compares every workgroup of a batch's output (`words`: [`RecordLayout::buffer_words`] of
/// them — the counters of every workgroup, then the records) with the executor.
pub fn compare_batch(
    setup: &Setup,
    size: SubgroupSize,
    programs: &[Program],
    words: &[u32],
) -> Vec<Comparison> {
    let k = programs.len();
    let per = setup.shape.invocations() as usize * setup.layout.stride_words();
    let head = (k * COUNTER_WORDS).min(words.len());
    let (c, r) = words.split_at(head);
    programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            compare(
                p,
                setup.mode,
                setup.shape,
                size,
                setup.layout,
                r.get(i * per..(i + 1) * per).unwrap_or(&[]),
                c.get(i * COUNTER_WORDS..(i + 1) * COUNTER_WORDS)
                    .unwrap_or(&[]),
            )
        })
        .collect()
}

/// Time spent per phase, summed over threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Times {
    /// generating programs
    pub generate: Duration,
    /// writing GLSL
    pub glsl: Duration,
    /// compiling GLSL to SPIR-V
    pub shaderc: Duration,
    /// creating shader modules and pipelines (a driver's compiler may run here)
    pub pipeline: Duration,
    /// buffers, dispatch, waiting for the device, reading back (lavapipe compiles here)
    pub dispatch: Duration,
    /// comparing with the executor
    pub compare: Duration,
    /// shrinking failures (device runs included)
    pub shrink: Duration,
}

impl AddAssign for Times {
    fn add_assign(&mut self, o: Times) {
        self.generate += o.generate;
        self.glsl += o.glsl;
        self.shaderc += o.shaderc;
        self.pipeline += o.pipeline;
        self.dispatch += o.dispatch;
        self.compare += o.compare;
        self.shrink += o.shrink;
    }
}

impl fmt::Display for Times {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |d: Duration| d.as_secs_f64();
        write!(
            f,
            "generate {:.1} s, GLSL {:.1} s, shaderc {:.1} s, pipelines {:.1} s, dispatch {:.1} s, \
             compare {:.1} s, shrink {:.1} s",
            s(self.generate),
            s(self.glsl),
            s(self.shaderc),
            s(self.pipeline),
            s(self.dispatch),
            s(self.compare),
            s(self.shrink)
        )
    }
}

/// What runs the programs: a Vulkan device (`reconverge::device::VulkanDevice`, feature `vulkan`),
/// or in tests a synthetic one.
pub trait Device: Sync {
    /// Why a batch could not run.
    type Error: fmt::Display + Send;

    /// Runs `programs`, workgroup `k` running `programs[k]`, for worker `worker` (a device may keep
    /// per-worker resources), adding the time of each phase to `times`; returns the buffer as
    /// [`RecordLayout::buffer_words`] lays it out.
    fn run(
        &self,
        worker: usize,
        programs: &[Program],
        times: &mut Times,
    ) -> Result<Vec<u32>, Self::Error>;

    /// The subgroup size the device runs with.
    fn subgroup_size(&self) -> SubgroupSize;
}

/// What programs a campaign runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// random programs ([`crate::reconverge::gen::programs`])
    Random,
    /// the original allocation kernel of seed 001 with random `needs_space` masks
    Seed001,
    /// the fixed allocation kernel with random masks
    Seed001Fixed,
}

impl Source {
    /// `random`, `seed001`, `seed001-fixed`.
    pub fn name(self) -> &'static str {
        match self {
            Source::Random => "random",
            Source::Seed001 => "seed001",
            Source::Seed001Fixed => "seed001-fixed",
        }
    }
}

/// Limits on shrinking.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkLimits {
    /// failing programs shrunk (the first ones, in program order)
    pub failures: usize,
    /// device runs per failure
    pub steps: u32,
    /// time per failure
    pub time: Duration,
}

impl Default for ShrinkLimits {
    fn default() -> Self {
        ShrinkLimits {
            failures: 3,
            steps: 200,
            time: Duration::from_secs(60),
        }
    }
}

/// What a campaign runs, and how.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// what programs
    pub source: Source,
    /// how many
    pub programs: u64,
    /// the generator's seed: the same seed gives the same programs
    pub seed: u64,
    /// programs per shader (and dispatch), ≥ 1
    pub batch: usize,
    /// programs per shape, ≥ 1: each random program is followed by `variants − 1` programs of its
    /// shape with their own parameters ([`crate::reconverge::gen::variant`]), which a parametric
    /// [`Setup`] runs from one copy of the code (the seed 001 kernels have one shape anyway)
    pub variants: usize,
    /// worker threads building, running and comparing batches, ≥ 1
    pub threads: usize,
    /// start no new batch after this long
    pub max_time: Option<Duration>,
    /// run only shard K of N (1-based): every N-th batch of programs from the K-th — the programs
    /// are generated in order as always (the seed names the same programs), so the N shards
    /// together are the whole campaign
    pub shard: Option<crate::shard::Shard>,
    /// shrinking
    pub shrink: ShrinkLimits,
}

/// A failing program.
#[derive(Clone, Debug)]
pub struct Failure {
    /// its index in the campaign (0-based)
    pub index: u64,
    /// the program
    pub program: Program,
    /// its comparison (without the execution)
    pub comparison: Comparison,
    /// the smallest program found that still fails, and its comparison, if it was shrunk
    pub minimal: Option<(Program, Comparison)>,
}

/// Failing programs kept in a report (all are counted).
pub const MAX_FAILURES_KEPT: usize = 100;

/// What a campaign found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// programs run
    pub programs: u64,
    /// distinct shapes among the random programs run (each first of its shape; see
    /// [`Plan::variants`]); 0 for the seed 001 kernels
    pub shapes: u64,
    /// batches (shaders) run
    pub batches: u64,
    /// stopped at `Plan::max_time` before running every program
    pub stopped: bool,
    /// values compared
    pub compared: u64,
    /// values the model leaves undefined (not compared)
    pub undefined: u64,
    /// disagreements
    pub mismatches: u64,
    /// programs with at least one disagreement
    pub failing_programs: u64,
    /// the first [`MAX_FAILURES_KEPT`] failing programs
    pub failures: Vec<Failure>,
    /// wall time from the first program generated to the last compared
    pub elapsed: Duration,
    /// time per phase, summed over threads
    pub times: Times,
}

impl Report {
    /// Did the device agree everywhere?
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }

    /// Programs per second of wall time.
    pub fn programs_per_s(&self) -> f64 {
        self.programs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Values compared per second of wall time.
    pub fn values_per_s(&self) -> f64 {
        self.compared as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Why a campaign stopped early.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError<E: fmt::Display> {
    /// The device failed.
    #[error("{0}")]
    Device(E),
    /// The program generator failed.
    #[error("program generator: {0}")]
    Generator(String),
}

/// What the campaign tells its caller as it goes (e.g. for a progress bar).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// this many more programs were compared
    Ran(u64),
    /// shrinking a failure started (`true`) or ended (`false`)
    Shrinking(bool),
}

/// The source of programs: a seeded proptest runner, as the CLI has always seeded it.
struct Generator {
    source: Source,
    runner: TestRunner,
    strategy: BoxedStrategy<Program>,
    variants: usize,
    /// the current shape's first program, the runner as it was before it was drawn, and how many
    /// programs of the shape were made
    current: Option<(Program, TestRunner, usize)>,
}

type Tree = Box<dyn ValueTree<Value = Program>>;

/// How to make a program's value tree again, for shrinking (random programs only): the runner
/// before its shape's first program was drawn and, for a variant, the runner before its parameters
/// were. Trees are made only for the programs that fail.
struct Recipe {
    base: TestRunner,
    variant: Option<TestRunner>,
}

impl Recipe {
    fn tree(&self, strategy: &BoxedStrategy<Program>) -> Result<Tree, String> {
        let tree = strategy
            .new_tree(&mut self.base.clone())
            .map_err(|e| e.to_string())?;
        Ok(match &self.variant {
            None => tree,
            Some(runner) => Box::new(Varied {
                tree,
                runner: runner.clone(),
            }),
        })
    }
}

/// A variant's value tree: its shape's tree, simplified as proptest simplifies it, each candidate
/// given parameters drawn as the variant's were.
struct Varied {
    tree: Tree,
    runner: TestRunner,
}

impl ValueTree for Varied {
    type Value = Program;

    fn current(&self) -> Program {
        let base = self.tree.current();
        // `variant` fails only if a parameter strategy rejects a value, which none does.
        variant(&base, &mut self.runner.clone()).unwrap_or(base)
    }

    fn simplify(&mut self) -> bool {
        self.tree.simplify()
    }

    fn complicate(&mut self) -> bool {
        self.tree.complicate()
    }
}

impl Generator {
    fn new(source: Source, seed: u64, setup: &Setup, variants: usize) -> Generator {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        Generator {
            source,
            runner: TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
            ),
            strategy: programs(GenConfig {
                max_records: setup.layout.max_records as u64,
                ..GenConfig::default()
            }),
            variants: variants.max(1),
            current: None,
        }
    }

    /// The next program, with how to make its value tree (random programs only) for shrinking.
    fn next(&mut self) -> Result<(Program, Option<Recipe>), String> {
        match self.source {
            Source::Random => match &mut self.current {
                Some((base, before, made)) if *made < self.variants => {
                    let at = self.runner.clone();
                    let v = variant(base, &mut self.runner)?;
                    *made += 1;
                    Ok((
                        v,
                        Some(Recipe {
                            base: before.clone(),
                            variant: Some(at),
                        }),
                    ))
                }
                _ => {
                    let before = self.runner.clone();
                    let p = self
                        .strategy
                        .new_tree(&mut self.runner)
                        .map_err(|e| e.to_string())?
                        .current();
                    self.current = Some((p.clone(), before.clone(), 1));
                    Ok((
                        p,
                        Some(Recipe {
                            base: before,
                            variant: None,
                        }),
                    ))
                }
            },
            Source::Seed001 | Source::Seed001Fixed => {
                let r = self.runner.rng();
                let mask = (r.next_u64() as u128) | (r.next_u64() as u128) << 64;
                // Sometimes sparse, so that whole subgroups need no space.
                let mask = if r.next_u32().is_multiple_of(2) {
                    mask & ((r.next_u64() as u128) | (r.next_u64() as u128) << 64)
                } else {
                    mask
                };
                let p = if self.source == Source::Seed001 {
                    seed001::allocation(mask)
                } else {
                    seed001::allocation_fixed(mask)
                };
                Ok((p, None))
            }
        }
    }
}

/// A batch for a worker.
struct Job {
    batch: u64,
    first: u64,
    programs: Vec<Program>,
}

/// A batch's outcome, from a worker (a panic is carried to the calling thread).
struct Done<E> {
    batch: u64,
    first: u64,
    programs: Vec<Program>,
    outcome: std::thread::Result<Result<Vec<Comparison>, E>>,
    times: Times,
}

/// Runs a campaign of `plan` on `device` under `setup`, telling `events` as it goes.
///
/// ```
/// use lockstep::reconverge::campaign::{run, Device, Plan, Setup, ShrinkLimits, Source, Times};
/// use lockstep::reconverge::{glsl::COUNTER_WORDS, Mode, Program};
/// use lockstep::model::SubgroupSize;
/// // A device that writes nothing: every record is missing, so every program fails.
/// struct Silent(Setup);
/// impl Device for Silent {
///     type Error = String;
///     fn run(&self, _: usize, ps: &[Program], _: &mut Times) -> Result<Vec<u32>, String> {
///         let mut w = vec![0xDEAD_BEEF; ps.len() * self.0.words_per_program()];
///         w[..ps.len() * COUNTER_WORDS].fill(0);
///         Ok(w)
///     }
///     fn subgroup_size(&self) -> SubgroupSize { SubgroupSize::new(8).unwrap() }
/// }
/// let setup = Setup::new(Mode::Base, 8);
/// let plan = Plan { source: Source::Random, programs: 4, seed: 1, batch: 2, variants: 1, threads: 2,
///     max_time: None, shard: None, shrink: ShrinkLimits { failures: 0, ..ShrinkLimits::default() } };
/// let report = run(&Silent(setup), &setup, &plan, &mut |_| {}).unwrap();
/// assert_eq!((report.programs, report.failing_programs), (4, 4));
/// assert!(!report.passed());
/// ```
pub fn run<D: Device>(
    device: &D,
    setup: &Setup,
    plan: &Plan,
    events: &mut dyn FnMut(Event),
) -> Result<Report, CampaignError<D::Error>> {
    let threads = plan.threads.max(1);
    let size = device.subgroup_size();
    let mut st = Progress::new(device, setup, plan, size);
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(threads);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done<D::Error>>();
    std::thread::scope(|s| {
        for worker in 0..threads {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            s.spawn(move || work(worker, device, setup, size, job_rx, done_tx));
        }
        drop(done_tx);
        let mut job_tx = Some(job_tx);
        loop {
            // Keep every worker busy and one batch queued for each.
            while st.healthy() && st.in_flight() < 2 * threads as u64 {
                let Some(job) = st.next_job() else { break };
                if let Some(tx) = &job_tx {
                    // Fails only if every worker is gone, which a panic reports below.
                    let _ = tx.send(job);
                }
            }
            if st.in_flight() == 0 {
                break;
            }
            let Ok(done) = done_rx.recv() else { break };
            st.receive(done, events);
            if !st.healthy() {
                // Stop feeding the workers; let those running finish.
                job_tx = None;
            }
        }
    });
    st.finish()
}

/// The calling thread's side of a campaign: the generator, the batches in flight and the report.
struct Progress<'a, D: Device> {
    device: &'a D,
    setup: &'a Setup,
    plan: &'a Plan,
    size: SubgroupSize,
    t0: Instant,
    generator: Generator,
    /// how to make the value trees of the programs in flight, by index, for shrinking
    trees: HashMap<u64, Recipe>,
    /// results that came back before an earlier batch's
    waiting: BTreeMap<u64, Done<D::Error>>,
    sent: u64,
    next_program: u64,
    report: Report,
    error: Option<CampaignError<D::Error>>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl<'a, D: Device> Progress<'a, D> {
    fn new(device: &'a D, setup: &'a Setup, plan: &'a Plan, size: SubgroupSize) -> Self {
        Progress {
            device,
            setup,
            plan,
            size,
            t0: Instant::now(),
            generator: Generator::new(plan.source, plan.seed, setup, plan.variants),
            trees: HashMap::new(),
            waiting: BTreeMap::new(),
            sent: 0,
            next_program: 0,
            report: Report::default(),
            error: None,
            panic: None,
        }
    }

    /// No error and no panic so far.
    fn healthy(&self) -> bool {
        self.error.is_none() && self.panic.is_none()
    }

    /// Batches sent and not yet taken.
    fn in_flight(&self) -> u64 {
        self.sent - self.report.batches
    }

    /// Generates the next batch; `None` when every program is sent, the time is up or the
    /// generator failed.
    fn next_job(&mut self) -> Option<Job> {
        let plan = self.plan;
        loop {
            if self.next_program >= plan.programs {
                return None;
            }
            if plan.max_time.is_some_and(|t| self.t0.elapsed() > t) {
                self.report.stopped = true;
                return None;
            }
            let g = Instant::now();
            let k = (plan.programs - self.next_program).min(plan.batch.max(1) as u64) as usize;
            let mut programs = Vec::with_capacity(k);
            for i in 0..k as u64 {
                match self.generator.next() {
                    Ok((p, tree)) => {
                        programs.push(p);
                        if let Some(t) = tree {
                            self.trees.insert(self.next_program + i, t);
                        }
                    }
                    Err(e) => {
                        self.error = Some(CampaignError::Generator(e));
                        return None;
                    }
                }
            }
            self.report.times.generate += g.elapsed();
            let first = self.next_program;
            let index = first / plan.batch.max(1) as u64;
            self.next_program += k as u64;
            if let Some(shard) = plan.shard
                && !shard.keeps(index)
            {
                // Another shard's batch: generated (the stream stays the same), not run.
                for i in 0..k as u64 {
                    self.trees.remove(&(first + i));
                }
                continue;
            }
            let job = Job {
                batch: self.sent,
                first,
                programs,
            };
            self.sent += 1;
            return Some(job);
        }
    }

    /// A worker's result: kept until every earlier batch's is in, then taken in batch order.
    fn receive(&mut self, done: Done<D::Error>, events: &mut dyn FnMut(Event)) {
        self.waiting.insert(done.batch, done);
        while let Some(done) = self.waiting.remove(&self.report.batches) {
            self.report.batches += 1;
            self.report.times += done.times;
            match done.outcome {
                Err(p) => {
                    self.panic.get_or_insert(p);
                }
                Ok(Err(e)) => {
                    self.error.get_or_insert(CampaignError::Device(e));
                }
                Ok(Ok(comparisons)) if self.healthy() => {
                    let n = comparisons.len() as u64;
                    let programs = done.programs.into_iter();
                    for (j, (c, p)) in comparisons.into_iter().zip(programs).enumerate() {
                        let index = done.first + j as u64;
                        let tree = self.trees.remove(&index);
                        if let Err(e) = self.take((index, p), c, tree, events) {
                            self.error.get_or_insert(CampaignError::Device(e));
                        }
                    }
                    self.report.programs += n;
                    events(Event::Ran(n));
                }
                // After an error, what is still in flight is not counted.
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Adds one program's comparison to the report, shrinking it if it failed and the limits
    /// allow.
    fn take(
        &mut self,
        (index, program): (u64, Program),
        c: Comparison,
        tree: Option<Recipe>,
        events: &mut dyn FnMut(Event),
    ) -> Result<(), D::Error> {
        let report = &mut self.report;
        if tree.as_ref().is_some_and(|r| r.variant.is_none()) {
            report.shapes += 1;
        }
        report.compared += c.compared;
        report.undefined += c.undefined;
        report.mismatches += c.mismatch_count;
        if c.ok() {
            return Ok(());
        }
        report.failing_programs += 1;
        if report.failures.len() >= MAX_FAILURES_KEPT {
            return Ok(());
        }
        let tree = match tree {
            Some(r) if report.failures.len() < self.plan.shrink.failures => {
                // Regenerating a tree the generator made once cannot fail.
                r.tree(&self.generator.strategy).ok()
            }
            _ => None,
        };
        let minimal = match tree {
            Some(mut tree) => {
                events(Event::Shrinking(true));
                let t = Instant::now();
                let limits = self.plan.shrink;
                let (device, setup, size) = (self.device, self.setup, self.size);
                let mut times = Times::default();
                let s = shrink(
                    tree.as_mut(),
                    c.clone(),
                    limits.steps,
                    Some(t + limits.time),
                    |p| {
                        let ps = std::slice::from_ref(p);
                        let words = device.run(0, ps, &mut times)?;
                        Ok(compare_batch(setup, size, ps, &words)
                            .pop()
                            .unwrap_or_default())
                    },
                );
                self.report.times.shrink += t.elapsed();
                events(Event::Shrinking(false));
                let mut s = s?;
                s.comparison.execution = None;
                Some((s.program, s.comparison))
            }
            _ => None,
        };
        self.report.failures.push(Failure {
            index,
            program,
            comparison: c,
            minimal,
        });
        Ok(())
    }

    /// The report, or why the campaign stopped (a worker's panic is resumed here).
    fn finish(mut self) -> Result<Report, CampaignError<D::Error>> {
        if let Some(p) = self.panic {
            std::panic::resume_unwind(p);
        }
        self.report.elapsed = self.t0.elapsed();
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.report),
        }
    }
}

/// A worker: builds, runs and compares the batches it receives until the channel closes.
fn work<D: Device>(
    worker: usize,
    device: &D,
    setup: &Setup,
    size: SubgroupSize,
    jobs: &Mutex<mpsc::Receiver<Job>>,
    done: mpsc::Sender<Done<D::Error>>,
) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let mut times = Times::default();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let words = device.run(worker, &job.programs, &mut times)?;
            let t = Instant::now();
            let mut comparisons = compare_batch(setup, size, &job.programs, &words);
            // The executions are large and the report does not need them.
            comparisons.iter_mut().for_each(|c| c.execution = None);
            times.compare += t.elapsed();
            Ok(comparisons)
        }));
        let d = Done {
            batch: job.batch,
            first: job.first,
            programs: job.programs,
            outcome,
            times,
        };
        if done.send(d).is_err() {
            return;
        }
    }
}
