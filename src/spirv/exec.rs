//! The SIMT executor: runs a decoded [`Kernel`] over a dispatch, workgroups in parallel (rayon),
//! each workgroup's subgroups in lockstep — one instruction at a time for the lanes executing it
//! together — under one of the reconvergence models.
//!
//! Control flow follows SPIR-V's structured constructs. A header's merge instruction opens a
//! construct frame; branches to a frame's merge block, a loop's continue target or back to its
//! header deposit the lanes there, and the construct resumes with them once every lane has left its
//! body. Which lanes execute together, and whether the model in force pins that set down, are
//! decided by the reconvergence rules shared with the structured-program executor
//! ([`crate::reconverge::flow`]): `Flow::part` where a branch splits lanes, `Flow::merge` at a merge
//! block, `Flow::join` at a continue target and after a call.
//!
//! This file holds the dispatch (workgroups in parallel or in order, schedules, findings) and the
//! per-workgroup state; the structured control flow itself is in `flow.rs`, the generic operations
//! on registers in `lanes.rs`, the instructions in `ops.rs`, `memops.rs` and `group.rs`.

use crate::model::{LaneMask, LaneOrder, SubgroupSize, WorkgroupLayout, WorkgroupShape};
use crate::reconverge::{Flow, LaneMap, Lost, Mode, PerGroup};
use crate::spirv::error::{Location, SpirvError};
use crate::spirv::inst::*;
use crate::spirv::memory::clock::{SyncRecord, FAMILIES};
use crate::spirv::memory::watch::{ReadLog, WatchKey};
use crate::spirv::memory::{Buffer, Interval, Knowledge, LateKey, LateWhy, Shadow, Space};
use crate::spirv::prov::{Cause, Prov, Provs, Taint};
pub(crate) use crate::spirv::regs::each_lane;
use crate::spirv::regs::RegFile;
use crate::spirv::types::Storage;
use foldhash::{HashMap, HashSet};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, RwLock};

/// How to run a kernel.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunConfig {
    /// the subgroup size (a power of two, 1..=128)
    pub size: SubgroupSize,
    /// which local invocations form each subgroup
    pub layout: LaneOrder,
    /// with [`LaneOrder::Device`]: where each invocation (by row-major local index) runs, as a
    /// device placed it
    pub placements: Option<std::sync::Arc<[crate::model::Placement]>>,
    /// the reconvergence model
    pub mode: Mode,
    /// number of workgroups in x, y, z
    pub workgroups: [u32; 3],
    /// most lane-instructions one workgroup may execute before the run stops (an infinite loop)
    pub max_steps: u64,
    /// Does a lost path end (`true`, the default) at the merge of a construct that every path of
    /// the lost branch reaches? Then what the invocation computed on the way is undefined, its
    /// path after the merge is not. `false` keeps a lost invocation lost to the end, as
    /// `reconverge`'s executor does (coarser, and what the cross-check against it uses); its
    /// own variables are then never marked, as there.
    pub lost_paths_end: bool,
    /// Workgroup orders to run when the dispatch needs the ordered run (1: workgroups 0, 1, 2, …;
    /// each further one a seeded permutation of them, with the lanes of each atomic instruction in
    /// reverse order every other time). Defined values that differ between the orders become
    /// order-dependent; a loop that never ends in one of them is a finding.
    pub schedules: u32,
    /// Check for data races (`true`, the default): the race shadow around every access to memory
    /// several invocations reach. `false` runs without it — faster, and blind to races and to
    /// values that depend on the order of unordered atomics; for measuring what the shadow costs,
    /// or for a kernel already known to be race-free.
    pub race_checks: bool,
}

impl RunConfig {
    /// A run of `workgroups` workgroups at subgroup size `size`: subgroups of consecutive local
    /// invocations (row-major), base reconvergence, [`DEFAULT_MAX_STEPS`], lost paths ending at
    /// their merge, one schedule, race checks on. Set the fields to change any of these.
    pub fn new(size: SubgroupSize, workgroups: [u32; 3]) -> RunConfig {
        RunConfig {
            size,
            layout: LaneOrder::ROW_MAJOR,
            placements: None,
            mode: Mode::Base,
            workgroups,
            max_steps: DEFAULT_MAX_STEPS,
            lost_paths_end: true,
            schedules: DEFAULT_SCHEDULES,
            race_checks: true,
        }
    }
}

/// The default `max_steps`: a billion lane-instructions per workgroup (seconds of work).
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000_000;

/// The default `schedules`: where workgroups interact, the dispatch's own order and three others.
/// One order alone calls exact what a lock or a ticket decides (which workgroup took the lock
/// first is the device's choice): docs/interpreter.md, Decisions, "Workgroups that interact are
/// run in four orders by default".
pub const DEFAULT_SCHEDULES: u32 = 4;

pub use crate::spirv::finding::{Finding, FindingGroup, GroupKey, PastArray, RaceClass};

/// The state of a dispatch shared by all workgroups.
pub struct Dispatch<'k> {
    /// the kernel
    pub k: &'k Kernel,
    /// the run configuration
    pub cfg: RunConfig,
    /// lane placement of one workgroup
    pub map: LaneMap,
    /// buffer per object (None for non-buffer objects)
    /// (two objects share one buffer where one buffer's bytes are bound at two descriptors)
    pub buffers: Vec<Option<std::sync::Arc<Buffer>>>,
    /// provenance records
    pub provs: Provs,
    /// the "never written" record of each object
    pub uninit: Vec<Taint>,
    /// findings, grouped
    pub findings: Mutex<BTreeMap<GroupKey, FindingGroup>>,
    /// count of findings, kept as examples or not
    pub finding_count: AtomicU64,
    /// lane-instructions executed
    pub lane_instructions: AtomicU64,
    /// workgroups finished (for progress)
    pub done: AtomicU64,
    /// set when a workgroup stops with an error
    stop: AtomicBool,
    error: Mutex<Option<SpirvError>>,
    /// lanes per workgroup in the register file (subgroups × size)
    pub lanes_per_wg: u32,
    /// what each writable buffer held when bound (bytes, and undefined ranges with their taint),
    /// for a run done again
    initial: Vec<Option<Initial<'k>>>,
    /// this run goes workgroup after workgroup, with the full race shadow on buffers
    ordered: AtomicBool,
    /// a parallel run found invocations sharing buffer memory one of them writes
    pub(crate) conflict: AtomicBool,
    /// earlier reads whose value a later unordered write changed (from earlier runs)
    late: RwLock<Late>,
    /// such reads found in this run
    late_new: Mutex<HashMap<LateKey, LateWhy>>,
    /// `late` is not empty
    pub(crate) any_late: AtomicBool,
    /// units a race was found on in an earlier run: their reads are logged
    /// ([`crate::spirv::memory::watch`])
    watch: RwLock<HashSet<WatchKey>>,
    /// units a race was found on in this run
    watch_new: Mutex<HashSet<WatchKey>>,
    /// `watch` is not empty
    pub(crate) any_watch: AtomicBool,
    /// which workgroup order the ordered run follows (0: in order)
    schedule: std::sync::atomic::AtomicU32,
    /// buffer objects a path not taken (a lost or order-dependent branch) may have stored to, with
    /// the taint their never-written elements get
    pub maybe_written: Mutex<BTreeMap<ObjectId, Taint>>,
    /// where a branch condition is undefined, the way each invocation's `j`-th such branch goes
    /// (`choices[j]`; past its end, the way the value's bits say): a run that explores the
    /// branches on undefined values ([`crate::spirv::explore`]) instead of losing the invocation's
    /// path; `None`: the path is lost
    pub(crate) choices: Option<Vec<bool>>,
    /// the most branches on an undefined value one invocation met in this run
    pub(crate) undefined_branches: AtomicU32,
    /// a workgroup ran a subgroup operation, a barrier or an atomic after one of its invocations
    /// branched on an undefined value: its invocations may have influenced one another since
    pub(crate) interacted: AtomicBool,
    /// per atomically written buffer location (object, byte), in the ordered run: the
    /// read-modify-writes of its current unordered window ([`crate::spirv::memory::AtomicWindow`])
    pub(crate) windows: Mutex<HashMap<(ObjectId, u32), crate::spirv::memory::AtomicWindow>>,
    /// the buffers device addresses reach: (base address, size in bytes, object), sorted by base
    pub addresses: Vec<(u64, u64, ObjectId)>,
    /// per object, the sampler bound to it (a sampler, or an image with its sampler)
    pub samplers: Vec<Option<crate::words::sampler::Sampler>>,
    /// per object, the part of its buffer's memory it sees: (first byte, bytes) — one buffer
    /// behind descriptors over different ranges (`Dispatch::view`)
    pub views: Vec<(u32, u32)>,
    /// per image object, the extent it is bound with
    pub extents: Vec<Option<crate::spirv::image::Extent>>,
    /// per object, the object owning its buffer ([`Dispatch::owner_of`])
    owner: Vec<ObjectId>,
}

/// What a writable buffer held when it was bound.
pub struct Initial<'a> {
    /// the bytes
    pub bytes: &'a [u8],
    /// byte ranges holding no defined value, with their taint
    pub undefined: Vec<(std::ops::Range<usize>, Taint)>,
}

/// Reads found, after they ran, to have raced with a later write (or, atomic, to depend on the
/// order): the next run of the dispatch taints them.
#[derive(Default)]
struct Late {
    locs: HashSet<LocId>,
    keys: HashMap<LateKey, LateWhy>,
}

/// Why a workgroup of a parallel run stopped early: the run is being redone in order.
pub(crate) const ABANDONED: &str = "a parallel run abandoned for an ordered one";

/// Iterations of one loop after which the interpreter checks, each time round, whether its state
/// repeats (nothing changed: it would go round forever).
pub(crate) const SPIN_CHECK_AFTER: u64 = 1024;

impl<'k> Dispatch<'k> {
    /// Prepares a dispatch: checks the configuration, binds the buffers (`buffers[i]` backs
    /// `k.objects[i]` where it is a buffer or push-constant block).
    pub fn new(
        k: &'k Kernel,
        cfg: RunConfig,
        buffers: Vec<Option<std::sync::Arc<Buffer>>>,
        initial: Vec<Option<Initial<'k>>>,
        provs: Provs,
    ) -> Result<Dispatch<'k>, SpirvError> {
        let [x, y, z] = k.local_size;
        let shape = WorkgroupShape::new(x, y, z).map_err(|e| SpirvError::Setup(e.to_string()))?;
        let layout = match (&cfg.layout, &cfg.placements) {
            (LaneOrder::Device, Some(p)) => WorkgroupLayout::from_placements(shape, cfg.size, p),
            (l, _) => WorkgroupLayout::new(shape, cfg.size, *l),
        }
        .map_err(|e| SpirvError::Setup(e.to_string()))?;
        let map = LaneMap::new(&layout);
        if cfg.workgroups.contains(&0) {
            return Err(SpirvError::Setup(format!(
                "workgroup count {}x{}x{}: every dimension must be at least 1",
                cfg.workgroups[0], cfg.workgroups[1], cfg.workgroups[2]
            )));
        }
        let lanes_per_wg = (map.subgroups() * cfg.size.lanes()) as u32;
        // u128: three u32 counts times the lanes of a workgroup do not fit in u64.
        let total =
            cfg.workgroups.iter().map(|&w| w as u128).product::<u128>() * lanes_per_wg as u128;
        if total >= u32::MAX as u128 - 1 {
            return Err(SpirvError::Setup(format!(
                "{total} invocations: lockstep runs at most 2^32 - 2 lanes per dispatch"
            )));
        }
        let uninit = k
            .objects
            .iter()
            .map(|o| {
                Taint::undefined(provs.intern(Prov {
                    cause: Cause::Uninitialized {
                        var: o.name.clone(),
                        storage: o.storage.name(),
                    },
                    loc: o.loc,
                    parent: 0,
                }))
            })
            .collect();
        let owner = (0..buffers.len())
            .map(|i| {
                let first = buffers[i].as_ref().and_then(|b| {
                    buffers
                        .iter()
                        .position(|x| x.as_ref().is_some_and(|x| std::sync::Arc::ptr_eq(x, b)))
                });
                ObjectId::new(first.unwrap_or(i) as u32)
            })
            .collect();
        Ok(Dispatch {
            k,
            cfg,
            map,
            buffers,
            provs,
            uninit,
            findings: Mutex::new(BTreeMap::new()),
            finding_count: AtomicU64::new(0),
            lane_instructions: AtomicU64::new(0),
            done: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            lanes_per_wg,
            initial,
            ordered: AtomicBool::new(false),
            conflict: AtomicBool::new(false),
            late: RwLock::new(Late::default()),
            late_new: Mutex::new(Default::default()),
            any_late: AtomicBool::new(false),
            watch: RwLock::new(Default::default()),
            watch_new: Mutex::new(Default::default()),
            any_watch: AtomicBool::new(false),
            schedule: std::sync::atomic::AtomicU32::new(0),
            maybe_written: Mutex::new(BTreeMap::new()),
            choices: None,
            undefined_branches: AtomicU32::new(0),
            interacted: AtomicBool::new(false),
            windows: Mutex::new(Default::default()),
            addresses: Vec::new(),
            samplers: Vec::new(),
            views: Vec::new(),
            extents: Vec::new(),
            owner,
        })
    }

    /// The buffer and byte offset device address `a` lies at, if it lies in one.
    pub(crate) fn address_of(&self, a: u64) -> Option<(ObjectId, u32)> {
        let i = self.addresses.partition_point(|&(base, _, _)| base <= a);
        let &(base, size, obj) = self.addresses.get(i.checked_sub(1)?)?;
        (a - base < size).then(|| (obj, (a - base) as u32))
    }

    /// Is this run the ordered one (workgroups one after another, full race shadow on buffers)?
    #[inline(always)]
    pub(crate) fn ordered(&self) -> bool {
        self.ordered.load(Relaxed)
    }

    /// A parallel run found shared buffer memory: the run must be done in order.
    pub(crate) fn need_ordered(&self) {
        self.conflict.store(true, Relaxed);
    }

    /// The object whose buffer `obj` uses: itself, or the first object bound to the same memory
    /// (one buffer behind two descriptors). Race shadows, atomic windows and late reads are kept
    /// by it, so that accesses through either name meet.
    #[inline(always)]
    pub(crate) fn owner_of(&self, obj: ObjectId) -> ObjectId {
        self.owner.get(obj.index()).copied().unwrap_or(obj)
    }

    /// The part of its buffer's memory object `obj` sees: (first byte, bytes); all of it where no
    /// view was set.
    #[inline(always)]
    pub(crate) fn view(&self, obj: ObjectId) -> (u32, u32) {
        match self.views.get(obj.index()) {
            Some(&v) if v != (0, 0) => v,
            _ => (
                0,
                self.buffers
                    .get(obj.index())
                    .and_then(|b| b.as_ref())
                    .map_or(0, |b| b.size),
            ),
        }
    }

    /// Records a read found late to have raced (or depended on the order).
    pub(crate) fn mark_late(&self, key: LateKey, why: LateWhy) {
        let key = (key.0, key.1, self.owner_of(key.2), key.3, key.4);
        if self
            .late
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .get(&key)
            .is_none_or(|&w| w < why)
        {
            let mut n = self.late_new.lock().unwrap_or_else(|e| e.into_inner());
            let w = n.entry(key).or_insert(why);
            *w = (*w).max(why);
        }
    }

    /// Was this read (in the synchronization interval `at` of its invocation) found, in an earlier
    /// run, to have raced with a later write (or, atomic, to depend on the order)?
    #[inline(always)]
    pub(crate) fn late_read(
        &self,
        loc: LocId,
        who: u32,
        obj: ObjectId,
        unit: u32,
        at: Interval,
    ) -> Option<LateWhy> {
        if !self.any_late.load(Relaxed) {
            return None;
        }
        let l = self.late.read().unwrap_or_else(|e| e.into_inner());
        if l.locs.is_empty() || !l.locs.contains(&loc) {
            return None;
        }
        let obj = self.owner_of(obj);
        l.keys.get(&(loc, who, obj, unit, at)).copied()
    }

    /// Watches a unit a race was found on: the next run logs its reads.
    pub(crate) fn watch_unit(&self, key: WatchKey) {
        if !self
            .watch
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&key)
        {
            self.watch_new
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key);
        }
    }

    /// Is this unit watched (a race was found on it in an earlier run)?
    #[inline(always)]
    pub(crate) fn watched(&self, key: WatchKey) -> bool {
        self.any_watch.load(Relaxed)
            && self
                .watch
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&key)
    }

    /// Number of workgroups.
    pub fn workgroup_count(&self) -> u64 {
        self.cfg.workgroups.iter().map(|&w| w as u64).product()
    }

    /// Runs every workgroup; stops at the first error. Workgroups run in parallel; where
    /// invocations turn out to share buffer memory that one of them writes, the dispatch runs again
    /// in order (workgroup 0, 1, … — one legal schedule), with the full race shadow; where a read
    /// turns out to have raced with a later write, it runs again with that read tainted.
    pub fn run(&self) -> Result<(), SpirvError> {
        const MAX_RUNS: usize = 6;
        for attempt in 0..MAX_RUNS {
            if attempt > 0 {
                self.restart();
            }
            self.run_once()?;
            if !self.ordered() && self.conflict.load(Relaxed) {
                self.ordered.store(true, Relaxed);
                continue;
            }
            let new: Vec<(LateKey, LateWhy)> = self
                .late_new
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain()
                .collect();
            let watch: Vec<WatchKey> = self
                .watch_new
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain()
                .collect();
            if (new.is_empty() && watch.is_empty()) || attempt + 1 == MAX_RUNS {
                break;
            }
            let mut l = self.late.write().unwrap_or_else(|e| e.into_inner());
            for (k, why) in new {
                l.locs.insert(k.0);
                let w = l.keys.entry(k).or_insert(why);
                *w = (*w).max(why);
            }
            self.any_late.store(!l.keys.is_empty(), Relaxed);
            drop(l);
            let mut w = self.watch.write().unwrap_or_else(|e| e.into_inner());
            w.extend(watch);
            self.any_watch.store(!w.is_empty(), Relaxed);
        }
        if self.ordered() && self.cfg.schedules > 1 {
            self.other_schedules()?;
        }
        Ok(())
    }

    /// Runs the ordered dispatch again under the other schedules and compares: a defined unit whose
    /// bytes differ becomes order-dependent; a loop that never ends in another schedule is a
    /// finding. Leaves the first schedule's buffers and findings, with what the others added.
    pub(crate) fn other_schedules(&self) -> Result<(), SpirvError> {
        let snap: Vec<Option<(Vec<u32>, Vec<u32>)>> = self
            .buffers
            .iter()
            .map(|b| {
                b.as_ref().filter(|b| b.writable).map(|b| {
                    (
                        b.vals.iter().map(|v| v.load(Relaxed)).collect(),
                        b.taint.iter().map(|t| t.load(Relaxed)).collect(),
                    )
                })
            })
            .collect();
        // What the first order leaves beside the bytes: who wrote each unit, and the objects a
        // path not taken may write. Other orders take other paths; what they find is theirs.
        let marks: Vec<Option<(Vec<u64>, Vec<u32>)>> = self
            .buffers
            .iter()
            .map(|b| b.as_ref().map(|b| b.writer_marks()))
            .collect();
        let maybe_written = self
            .maybe_written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let findings =
            std::mem::take(&mut *self.findings.lock().unwrap_or_else(|e| e.into_inner()));
        let (count, steps) = (
            self.finding_count.load(Relaxed),
            self.lane_instructions.load(Relaxed),
        );
        let mut differs: Vec<Vec<bool>> = snap
            .iter()
            .map(|s| {
                s.as_ref()
                    .map(|(_, t)| vec![false; t.len()])
                    .unwrap_or_default()
            })
            .collect();
        let mut stuck = Vec::new();
        for k in 1..self.cfg.schedules {
            self.restart();
            self.schedule.store(k, Relaxed);
            let r = self.run_once();
            let mut f = self.findings.lock().unwrap_or_else(|e| e.into_inner());
            for g in f.values() {
                for e in &g.examples {
                    if matches!(e, Finding::SpinWait { stuck: true, .. }) {
                        stuck.push(e.clone());
                    }
                }
            }
            f.clear();
            drop(f);
            match r {
                Err(SpirvError::Stopped { .. }) if !stuck.is_empty() => continue,
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            for ((b, s), d) in self.buffers.iter().zip(&snap).zip(differs.iter_mut()) {
                let (Some(b), Some((vals, taint))) = (b, s) else {
                    continue;
                };
                let u = b.unit as usize;
                for (x, t0) in taint.iter().enumerate() {
                    let t1 = b.taint[x].load(Relaxed);
                    if !Taint::from_bits(*t0).without_inexact().is_none()
                        || !Taint::from_bits(t1).without_inexact().is_none()
                    {
                        continue;
                    }
                    let (w, sh) = (x * u / 4, (x * u % 4) * 8);
                    let m = if u >= 4 {
                        !0u32
                    } else {
                        ((1u32 << (u * 8)) - 1) << sh
                    };
                    if (vals[w] ^ b.vals[w].load(Relaxed)) & m != 0 {
                        d[x] = true;
                    }
                }
            }
        }
        self.schedule.store(0, Relaxed);
        let p = Taint::undefined(self.provs.intern(Prov {
            cause: Cause::ScheduleOrder,
            loc: LocId::default(),
            parent: 0,
        }))
        .order_dependent();
        for ((b, s), d) in self.buffers.iter().zip(&snap).zip(&differs) {
            let (Some(b), Some((vals, taint))) = (b, s) else {
                continue;
            };
            for (v, x) in b.vals.iter().zip(vals) {
                v.store(*x, Relaxed);
            }
            for (i, (t, x)) in b.taint.iter().zip(taint).enumerate() {
                t.store(
                    if d[i] {
                        crate::spirv::prov::combine(Taint::from_bits(*x), p).bits()
                    } else {
                        *x
                    },
                    Relaxed,
                );
            }
        }
        for (b, m) in self.buffers.iter().zip(&marks) {
            if let (Some(b), Some(m)) = (b, m) {
                b.set_writer_marks(m);
            }
        }
        *self.maybe_written.lock().unwrap_or_else(|e| e.into_inner()) = maybe_written;
        *self.findings.lock().unwrap_or_else(|e| e.into_inner()) = findings;
        self.finding_count.store(count, Relaxed);
        self.lane_instructions.store(steps, Relaxed);
        for f in stuck {
            self.find(f);
        }
        Ok(())
    }

    /// The workgroup run `i`-th in the ordered run of the current schedule.
    pub(crate) fn scheduled(&self, i: u64, count: u64) -> u64 {
        crate::spirv::schedule::schedule_order(self.schedule.load(Relaxed) as u64, i, count)
    }

    /// Does this schedule run the lanes of an atomic instruction in reverse order?
    pub(crate) fn reverse_atomics(&self) -> bool {
        self.schedule.load(Relaxed) % 2 == 1
    }

    /// Puts the buffers back as bound and forgets what the last run found.
    pub(crate) fn restart(&self) {
        for (b, init) in self.buffers.iter().zip(&self.initial) {
            if let (Some(b), Some(init)) = (b, init) {
                b.restore(init.bytes, &init.undefined);
            }
        }
        self.findings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.finding_count.store(0, Relaxed);
        self.lane_instructions.store(0, Relaxed);
        self.done.store(0, Relaxed);
        self.conflict.store(false, Relaxed);
        self.stop.store(false, Relaxed);
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    pub(crate) fn run_once(&self) -> Result<(), SpirvError> {
        let [wx, wy, _] = self.cfg.workgroups;
        let count = self.workgroup_count();
        let one = |wg: &mut Wg<'_, 'k>, linear: u64| {
            if self.stop.load(Relaxed) {
                return;
            }
            let id = [
                (linear % wx as u64) as u32,
                ((linear / wx as u64) % wy as u64) as u32,
                (linear / (wx as u64 * wy as u64)) as u32,
            ];
            if let Err(e) = wg.run(id, linear as u32) {
                self.stop.store(true, Relaxed);
                let abandoned = matches!(&e, SpirvError::Stopped { why, .. } if why == ABANDONED);
                if !abandoned {
                    let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(e);
                }
            }
            self.done.fetch_add(1, Relaxed);
        };
        if self.ordered() {
            let mut wg = Wg::new(self);
            for i in 0..count {
                one(&mut wg, self.scheduled(i, count));
            }
        } else {
            (0..count)
                .into_par_iter()
                .for_each_init(|| Wg::new(self), |wg, linear| one(wg, linear));
        }
        match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub(crate) fn find(&self, f: Finding) {
        self.finding_count.fetch_add(1, Relaxed);
        let mut all = self.findings.lock().unwrap_or_else(|e| e.into_inner());
        let g = all.entry(f.group_key()).or_insert_with(|| FindingGroup {
            count: 0,
            examples: Vec::new(),
        });
        g.count += 1;
        let key = f.order_key();
        let kept = f.kept();
        if g.examples.len() < kept
            || g.examples
                .last()
                .map(|e| key < e.order_key())
                .unwrap_or(true)
        {
            if g.examples.contains(&f) {
                return;
            }
            let at = g.examples.partition_point(|e| e.order_key() <= key);
            g.examples.insert(at, f);
            g.examples.truncate(kept);
        }
    }

    /// The location `loc`.
    pub fn loc(&self, loc: LocId) -> &Location {
        &self.k.locs[loc.index()]
    }
}

/// One construct frame.
pub(crate) enum Frame {
    /// a selection or switch: lanes that reached its merge
    Sel {
        merge: BlockIdx,
        arrived: PerGroup<LaneMask>,
    },
    /// a loop
    Loop {
        header: BlockIdx,
        merge: BlockIdx,
        cont: BlockIdx,
        /// lanes that reached the merge (breaks)
        brk: PerGroup<LaneMask>,
        /// flows that reached the continue target
        conts: Vec<Flow>,
        /// flows that went back to the header
        back: Vec<Flow>,
    },
    /// a function call: flows that returned
    Func { ret: Vec<Flow> },
}

/// Where a branch target leads.
pub(crate) enum Route {
    /// into a block of the current region
    Inside,
    /// deposited in the frame at this stack index
    Exit,
}

/// The per-thread state of the workgroup being run (reused across workgroups).
pub(crate) struct Wg<'d, 'k> {
    pub(crate) d: &'d Dispatch<'k>,
    pub(crate) k: &'k Kernel,
    /// lanes per subgroup
    pub(crate) n: usize,
    /// subgroups
    pub(crate) groups: usize,
    /// lanes in all (groups × n)
    pub(crate) lanes: usize,
    /// every register's values and taints for every lane (the machine layer's register file)
    pub(crate) regs: RegFile,
    /// per register: a constant (one value in every lane, filled once, never written)
    pub(crate) consts: Vec<bool>,
    /// per-lane memory: word w of lane s at w * lanes + s; taint unit u at u * lanes + s
    pub(crate) lmem: Vec<u32>,
    pub(crate) ltaint: Vec<Taint>,
    /// shared memory: words, taint per unit, race shadow per unit
    pub(crate) smem: Vec<u32>,
    pub(crate) staint: Vec<Taint>,
    pub(crate) sshadow: Shadow,
    /// the race shadow of each writable buffer object (ordered runs)
    pub(crate) gshadow: Vec<Option<Shadow>>,
    /// the reads of watched units ([`crate::spirv::memory::watch`])
    pub(crate) rlog: ReadLog,
    /// release records of atomically accessed locations: (object, byte offset) — of buffers and
    /// images (`[1]`, kept from workgroup to workgroup of an ordered run) apart from those of
    /// workgroup memory and the rest (`[0]`, forgotten when a workgroup starts)
    pub(crate) syncs: [HashMap<(ObjectId, u32), SyncRecord>; 2],
    /// the workgroup's barrier epoch per memory family
    pub(crate) wg_epoch: [u32; FAMILIES],
    /// each subgroup's barrier epoch per family
    pub(crate) sg_epoch: Vec<[u32; FAMILIES]>,
    /// a fence ordered this family since the last workgroup barrier
    pub(crate) fenced: [bool; FAMILIES],
    /// … since the subgroup's last subgroup barrier
    pub(crate) sg_fenced: Vec<[bool; FAMILIES]>,
    /// each lane's release clock
    pub(crate) clock: Vec<u32>,
    /// what each lane has acquired from other invocations
    pub(crate) knows: Vec<Option<Box<Knowledge>>>,
    /// what each lane's relaxed atomic reads saw released, until an acquire fence: by the
    /// narrowest scope that includes the releaser (an acquire fence takes what its scope covers)
    pub(crate) pending: Vec<Option<Box<[Knowledge; 4]>>>,
    /// the widest scope of the release fences each lane executed (its later atomic writes
    /// release, to the invocations within both that scope and the write's)
    pub(crate) rel_fence: Vec<Option<crate::spirv::memory::Scope>>,
    /// writes that changed shared or global memory (a loop that makes none and repeats its state
    /// goes round forever)
    pub(crate) progress: u64,
    /// workgroup control barriers executed in this workgroup, whatever their semantics
    pub(crate) bars: u32,
    /// predecessor block of each lane (for phis)
    pub(crate) pred: Vec<u32>,
    /// lanes whose path depends on an undefined value: the taint to give their writes
    pub(crate) lost_taint: Vec<Taint>,
    /// branches on an undefined value each lane has met in this workgroup
    pub(crate) undefined_branches: Vec<u32>,
    /// some lane of this workgroup has branched on an undefined value
    pub(crate) decided: bool,
    /// some lane of this workgroup is lost (its writes to memory others see take `lost_taint`)
    pub(crate) any_lost: bool,
    /// some lane of this workgroup has been lost since it started, whether or not its lost path
    /// has ended since: the promoted bodies run only before (a variable carried across blocks in
    /// a register is that register only while no lost path's taint was given to memory)
    pub(crate) ever_lost: bool,
    /// per carried variable ([`Kernel::carried`]) and subgroup, the lanes that stored it in its
    /// register since memory last reset it — only there does the register hold what memory would
    /// (the promoted bodies store carried variables into their registers alone until a path is
    /// lost; `Wg::spill_carried` then writes these lanes to memory)
    pub(crate) carried_mask: Vec<u128>,
    /// the frame (stack index) of the construct where each lost lane lost its path
    pub(crate) lost_depth: Vec<u32>,
    /// taint for the phis of the block a lane enters next (lanes whose lost path ended at a merge)
    /// per atomically written shared location (object, byte): its window of unordered
    /// read-modify-writes ([`crate::spirv::memory::AtomicWindow`])
    pub(crate) windows: HashMap<(ObjectId, u32), crate::spirv::memory::AtomicWindow>,
    pub(crate) phi_taint: Vec<Taint>,
    pub(crate) any_phi_taint: bool,
    pub(crate) lost: Lost,
    /// per subgroup, the taint of the undefined value its first lost path branched on (the
    /// cause a tangle that path leaves unpinned names)
    pub(crate) lost_cause: Vec<Taint>,
    /// present lanes of each subgroup
    pub(crate) present: Vec<LaneMask>,
    pub(crate) wg_id: [u32; 3],
    pub(crate) wg_linear: u32,
    pub(crate) steps: u64,
    pub(crate) frames: Vec<Frame>,
    /// emptied flow lists of popped frames, kept for the next frame (a loop's rounds and a call's
    /// returns would otherwise allocate a list each time)
    pub(crate) flow_lists: Vec<Vec<Flow>>,
    /// calls the workgroup is inside (the entry point not counted), against [`MAX_CALL_DEPTH`](crate::spirv::flow::MAX_CALL_DEPTH)
    pub(crate) calls: u32,
    /// provenance ids this thread used (the dispatch's `Provs`, locked, asked once per record)
    pub(crate) prov_ids:
        std::cell::RefCell<std::collections::HashMap<Prov, u32, foldhash::fast::FixedState>>,
    /// per object: an input variable filled for this dispatch (`Wg::fill_builtin`)
    pub(crate) inputs_filled: Vec<bool>,
    /// scratch for phis and group operations
    pub(crate) scratch: Vec<u64>,
    /// the lanes of one subgroup a subgroup operation left undefined, with the model's reason
    pub(crate) group_undefined: Vec<(u32, crate::model::Reason)>,
    /// per subgroup instruction (by the address of its decoded `Group`): the last checked call
    /// shared by subgroups, with its arguments and, for a gather, its plan — kept across the
    /// workgroups this thread runs, which mostly pass the same arguments
    pub(crate) group_calls: CallCache,
    pub(crate) scratch_t: Vec<Taint>,
    pub(crate) errs: Vec<(usize, u32, crate::spirv::scalar::ScalarUndef)>,
}

impl<'d, 'k> Wg<'d, 'k> {
    pub(crate) fn new(d: &'d Dispatch<'k>) -> Self {
        let k = d.k;
        let n = d.cfg.size.lanes();
        let groups = d.map.subgroups();
        let lanes = groups * n;
        let mut wg = Wg {
            d,
            k,
            n,
            groups,
            lanes,
            regs: RegFile::new(&k.reg_slots, &k.reg_views, lanes),
            lmem: vec![0; k.lane_words as usize * lanes],
            ltaint: vec![Taint::NONE; k.lane_units as usize * lanes],
            smem: vec![0; k.shared_words as usize],
            staint: vec![Taint::NONE; k.shared_units as usize],
            sshadow: Shadow::new(k.shared_units as usize),
            rlog: ReadLog::default(),
            gshadow: d
                .buffers
                .iter()
                .enumerate()
                .map(|(i, b)| match b {
                    // one shadow per buffer, kept by its owner
                    Some(b)
                        if b.writable
                            && d.ordered()
                            && d.owner_of(ObjectId::new(i as u32)).index() == i =>
                    {
                        Some(Shadow::new(b.units()))
                    }
                    _ => None,
                })
                .collect(),
            syncs: Default::default(),
            wg_epoch: [0; FAMILIES],
            sg_epoch: vec![[0; FAMILIES]; groups],
            fenced: [false; FAMILIES],
            sg_fenced: vec![[false; FAMILIES]; groups],
            clock: vec![0; lanes],
            knows: vec![None; lanes],
            pending: vec![None; lanes],
            rel_fence: vec![None; lanes],
            progress: 0,
            bars: 0,
            pred: vec![0; lanes],
            lost_taint: vec![Taint::NONE; lanes],
            undefined_branches: vec![0; lanes],
            decided: false,
            any_lost: false,
            ever_lost: false,
            carried_mask: vec![0; k.carried.len() * groups],
            lost_depth: vec![u32::MAX; lanes],
            phi_taint: vec![Taint::NONE; lanes],
            windows: Default::default(),
            any_phi_taint: false,
            lost: Lost::new(groups),
            lost_cause: vec![Taint::NONE; groups],
            present: (0..groups).map(|g| d.map.present(g)).collect(),
            wg_id: [0; 3],
            wg_linear: 0,
            steps: 0,
            frames: Vec::new(),
            flow_lists: Vec::new(),
            calls: 0,
            prov_ids: Default::default(),
            inputs_filled: vec![false; k.objects.len()],
            scratch: Vec::new(),
            group_undefined: Vec::new(),
            group_calls: Default::default(),
            scratch_t: Vec::new(),
            errs: Vec::new(),
            consts: vec![false; k.reg_slots.len()],
        };
        // Constants: written once per thread, never overwritten (SSA).
        for c in &k.constants {
            wg.consts[c.reg.index()] = true;
            for (slot, bits) in c.bits.iter().enumerate() {
                wg.regs.fill_row(c.reg, slot, *bits);
            }
        }
        // A view of a constant is one.
        for v in &k.reg_views {
            wg.consts[v.view.index()] = wg.consts[v.of.index()];
        }
        wg
    }

    pub(crate) fn reset(&mut self, id: [u32; 3], linear: u32) -> Result<(), SpirvError> {
        let k = self.k;
        self.wg_id = id;
        self.wg_linear = linear;
        self.wg_epoch = [0; FAMILIES];
        self.sg_epoch.fill([0; FAMILIES]);
        self.fenced = [false; FAMILIES];
        self.sg_fenced.fill([false; FAMILIES]);
        self.clock.fill(0);
        self.knows.fill(None);
        self.pending.fill(None);
        self.rel_fence.fill(None);
        self.bars = 0;
        self.syncs[0].clear();
        self.sshadow.clear();
        self.rlog.clear_shared();
        self.windows.clear();
        self.steps = 0;
        self.lost = Lost::new(self.groups);
        self.lost_cause.fill(Taint::NONE);
        self.lost_taint.fill(Taint::NONE);
        self.undefined_branches.fill(0);
        self.decided = false;
        self.any_lost = false;
        self.ever_lost = false;
        // What the last workgroup's carried variables left in memory (`Wg::spill`).
        for var in 0..k.carried.len() {
            self.spill(var, None, false);
        }
        self.carried_mask.fill(0);
        self.lost_depth.fill(u32::MAX);
        self.phi_taint.fill(Taint::NONE);
        self.any_phi_taint = false;
        self.frames.clear();
        self.calls = 0;
        self.regs.clear_dirty();
        // Undefined constants (`OpUndef` at module scope) carry their taint.
        for c in &k.constants {
            if c.undef.iter().any(|u| *u) {
                let cause = if c.undef_component {
                    Cause::UndefComponent
                } else {
                    Cause::Undef
                };
                let p = self.prov(cause, c.undef_at, Taint::NONE);
                self.regs.make_dirty(c.reg);
                for (slot, u) in c.undef.iter().enumerate() {
                    if *u {
                        let row = self.regs.row(c.reg, slot);
                        self.regs.taint[row..row + self.lanes].fill(p);
                    }
                }
            }
        }
        // Memory: nothing written yet.
        for (i, o) in k.objects.iter().enumerate() {
            let u = self.d.uninit[i];
            match o.storage {
                Storage::Private | Storage::Function => {
                    let units = o.taint_units();
                    let (a, b) = (units.start * self.lanes, units.end * self.lanes);
                    self.ltaint[a..b].fill(u);
                    if o.storage == Storage::Private
                        && let Some(init) = o.init
                    {
                        self.init_lane_object(ObjectId::new(i as u32), init, None);
                    }
                }
                Storage::Workgroup => {
                    let (a, b) = (o.base as usize, (o.base + o.words) as usize);
                    self.smem[a..b].fill(0);
                    self.staint[o.taint_units()].fill(u);
                }
                Storage::Input => self.fill_builtin(ObjectId::new(i as u32))?,
                _ => {}
            }
        }
        // Workgroup initializers after every variable's "never written" (aliased Block variables
        // share memory: one's initializer must not be undone by another's reset).
        for (i, o) in k.objects.iter().enumerate() {
            if let (Storage::Workgroup, Some(init)) = (o.storage, o.init) {
                // A Workgroup initializer (VK_KHR_zero_initialize_workgroup_memory).
                let plan =
                    crate::spirv::types::Types::slot_layout(&k.types, o.ty, Default::default())?;
                let base = self.regs.base(init);
                for (c, sl) in plan.iter().enumerate() {
                    let v = self.regs.vals[base + c * self.lanes];
                    self.raw_put(
                        ObjectId::new(i as u32),
                        Space::Shared,
                        sl.offset,
                        sl.scalar.bytes(),
                        0,
                        v,
                        Taint::NONE,
                    );
                }
            }
        }
        Ok(())
    }

    /// Writes an object's initializer register into lane memory for `lanes` (all lanes if None).
    pub(crate) fn init_lane_object(&mut self, obj: ObjectId, init: Reg, flow: Option<&Flow>) {
        let o = &self.k.objects[obj.index()];
        let Ok(plan) = self.k.types.slot_layout(o.ty, Default::default()) else {
            return;
        };
        let base = self.regs.base(init);
        let lanes = self.lanes;
        let all: Vec<LaneMask>;
        let set: &[LaneMask] = match flow {
            Some(f) => &f.set,
            None => {
                all = self.present.clone();
                &all
            }
        };
        let n = self.n;
        for (c, sl) in plan.iter().enumerate() {
            let row = base + c * lanes;
            each_lane(set, n, |l| {
                let v = self.regs.vals[row + l];
                self.raw_put(
                    obj,
                    Space::Lane,
                    sl.offset,
                    sl.scalar.bytes(),
                    l,
                    v,
                    Taint::NONE,
                );
            });
        }
    }

    /// Creates (or finds) a provenance record.
    pub(crate) fn prov(&self, cause: Cause, loc: LocId, parent: Taint) -> Taint {
        let p = Prov {
            cause,
            loc,
            parent: parent.prov(),
        };
        let mut ids = self.prov_ids.borrow_mut();
        let id = ids
            .entry(p)
            .or_insert_with_key(|p| self.d.provs.intern(p.clone()));
        Taint::undefined(*id)
    }

    /// The dispatch-wide slot of lane `s` (1-based for shadows).
    #[inline(always)]
    pub(crate) fn who(&self, s: usize) -> u32 {
        self.wg_linear * self.d.lanes_per_wg + s as u32 + 1
    }

    pub(crate) fn run(&mut self, id: [u32; 3], linear: u32) -> Result<(), SpirvError> {
        self.reset(id, linear)?;
        let entry = self.k.entry;
        let mut flow = Flow::entry(PerGroup::from_slice(&self.present));
        let ret = self.flow_list();
        self.frames.push(Frame::Func { ret });
        self.call_body(entry, &mut flow)?;
        let Some(Frame::Func { ret }) = self.frames.pop() else {
            unreachable!("the entry frame is the last one")
        };
        self.give_back_flows(ret);
        self.d.lane_instructions.fetch_add(self.steps, Relaxed);
        Ok(())
    }

    /// An empty flow list, one of [`Wg::flow_lists`] where there is one.
    #[inline]
    pub(crate) fn flow_list(&mut self) -> Vec<Flow> {
        self.flow_lists.pop().unwrap_or_default()
    }

    /// Keeps `list`'s allocation for the next [`Wg::flow_list`].
    #[inline]
    pub(crate) fn give_back_flows(&mut self, mut list: Vec<Flow>) {
        list.clear();
        self.flow_lists.push(list);
    }

    /// Runs function `f`'s body from its entry block with `flow` (lanes deposit into the Func frame
    /// on top of the stack when they return).
    pub(crate) fn call_body(&mut self, f: FuncIdx, flow: &mut Flow) -> Result<(), SpirvError> {
        self.reset_locals(f, flow);
        self.region(f, 0, flow)
    }

    /// Reports a findings-worthy scalar undefined value etc. (helper for ops).
    pub(crate) fn undefined(&mut self, cause: Cause, loc: LocId) -> Taint {
        self.prov(cause, loc, Taint::NONE)
    }

    /// The taint given to writes by lane `s` (lost lanes' writes are not pinned down).
    #[inline(always)]
    pub(crate) fn write_taint(&self, s: usize, t: Taint) -> Taint {
        let l = self.lost_taint[s];
        if !l.is_none() {
            crate::spirv::prov::combine(l, t)
        } else {
            t
        }
    }

    /// INEXACT taint for a value, if the dispatch does not preserve denormals of width `w`.
    #[inline(always)]
    pub(crate) fn denorm_flushable(&self, w: u8) -> bool {
        !self.k.denorm_preserve[width_index(w as u32)]
    }

    /// Whether the sign of a zero of width `w` may be ignored ([`Kernel::zero_sign_ignorable`]).
    #[inline(always)]
    pub(crate) fn zero_sign_ignorable(&self, w: u8) -> bool {
        self.k.zero_sign_ignorable(w as u32)
    }
}

/// What a subgroup instruction keeps across the subgroups and workgroups a thread runs (a
/// workgroup state serves one dispatch: one kernel, one subgroup size): the checked call its
/// subgroups share where they have the same arguments (none per lane) with a gather's source
/// lanes for it, and the taint of the last reason the model gave for an undefined lane (the
/// provenance of that cause at this instruction, the same for every workgroup).
#[derive(Default)]
pub(crate) struct Kept {
    pub(crate) call: Option<(
        crate::model::Args,
        crate::model::OpCall,
        Option<crate::model::GatherPlan>,
    )>,
    pub(crate) undefined: Option<(crate::model::Reason, Taint)>,
}

/// What each subgroup instruction keeps ([`Kept`]), by the address of its decoded `Group`.
pub(crate) type CallCache = std::collections::HashMap<usize, Kept, foldhash::fast::FixedState>;

/// Construct ids of calls: the call's location id with this bit set (header label ids of SPIR-V
/// are below 2^31 in practice; a module with larger ids only loses distinct naming).
pub const CALL_CONSTRUCT: u32 = 1 << 31;

/// Locks serialising the read-modify-write of buffer atomics, one per stripe of 8-byte units.
static ATOMIC_LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

/// The lock of the atomic at byte `off` of object `obj` (a 32-bit atomic and a 64-bit one on the
/// same 8 bytes share it).
pub(crate) fn atomic_lock(obj: ObjectId, off: u32) -> std::sync::MutexGuard<'static, ()> {
    let i = (obj.index())
        .wrapping_mul(31)
        .wrapping_add(off as usize / 8)
        % ATOMIC_LOCKS.len();
    ATOMIC_LOCKS[i].lock().unwrap_or_else(|e| e.into_inner())
}
