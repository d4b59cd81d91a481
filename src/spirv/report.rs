//! What a model run leaves behind, and how it is explained: each buffer word's status (defined,
//! inexact, undefined, order-dependent, racy) with the chain of instructions that made it so.

use crate::reconverge::{LaneMap, Mode};
use crate::spirv::error::Location;
use crate::spirv::exec::{Finding, CALL_CONSTRUCT};
use crate::spirv::inst::{LocId, ObjectId};
use crate::spirv::prov::{Cause, Provs, Taint};
use std::collections::HashMap;

/// A buffer after a model run.
#[derive(Clone, Debug)]
pub struct BufferOutput {
    /// descriptor set
    pub set: u32,
    /// binding
    pub binding: u32,
    /// the element of an array of descriptors (0 for a plain binding)
    pub element: u32,
    /// the kernel object it backs
    pub object: ObjectId,
    /// contents
    pub bytes: Vec<u8>,
    /// bytes per unit of `taint` and `writer` (the smallest scalar the buffer's block holds)
    pub unit: u32,
    /// taint of each unit
    pub taint: Vec<Taint>,
    /// last writer of each unit: (1 + dispatch slot) << 32 | the location that wrote it, 0 for
    /// never written (empty for read-only buffers); [`BufferOutput::writer_at`] reads it
    pub(crate) writer: Vec<u64>,
    /// the lowest writer (1 + dispatch slot) of each unit, `u32::MAX` for none — recorded only in
    /// the runs that explore branches on undefined values (`spirv::explore`), else all `u32::MAX`
    pub(crate) first_writer: Vec<u32>,
}

impl BufferOutput {
    /// The taint of bytes `range`, combined.
    pub fn taint_of(&self, range: std::ops::Range<usize>) -> Taint {
        if range.is_empty() {
            return Taint::NONE;
        }
        let u = self.unit.max(1) as usize;
        (range.start / u..=(range.end - 1) / u)
            .filter_map(|x| self.taint.get(x).copied())
            .fold(Taint::NONE, crate::spirv::prov::combine)
    }

    /// The last writer of byte `b`: (1 + dispatch slot, location), (0, 0) if none.
    pub fn writer_at(&self, b: usize) -> (u32, LocId) {
        let x = self
            .writer
            .get(b / self.unit.max(1) as usize)
            .copied()
            .unwrap_or_default();
        ((x >> 32) as u32, LocId::new(x as u32))
    }

    /// The taint of 32-bit word `w`.
    pub fn word_taint(&self, w: usize) -> Taint {
        self.taint_of(w * 4..w * 4 + 4)
    }
}

/// The status of one word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordStatus {
    /// defined and exact: compared bit for bit
    Exact,
    /// defined, but the precision rules let a device differ: compared within a tolerance
    Inexact,
    /// undefined: not compared; the chain says why
    Undefined(String),
    /// depends on the order the device ran atomics in: not compared as a value
    OrderDependent(String),
    /// written or read by unordered invocations: not compared
    Racy(String),
}

/// The verdict on every element of the buffers a run left: the one policy every consumer applies
/// (`lockstep run`'s element report, [`KernelJob::compare`](crate::kernel::KernelJob::compare),
/// and Amber's annotations). Undefined behaviour that leaves nothing the dispatch wrote pinned
/// down ([`ModelRun::poisoned`]: a barrier not every invocation reached, a write outside a
/// variable, an `OpUnreachable` executed) makes every element of every buffer the dispatch could write undefined, with that
/// finding as its reason — the buffers a read-only descriptor shares with a writable one
/// included, since they are the same memory; otherwise an element's status is its taint's
/// ([`ModelRun::status`]).
pub(crate) struct Verdicts<'r> {
    run: &'r ModelRun,
    poisoned: Option<String>,
    /// the status of each taint seen so far (most buffers hold a handful)
    seen: HashMap<Taint, WordStatus>,
}

impl<'r> Verdicts<'r> {
    /// The verdicts on `run`'s buffers.
    pub(crate) fn new(run: &'r ModelRun) -> Verdicts<'r> {
        Verdicts {
            run,
            poisoned: run.poisoned(),
            seen: HashMap::new(),
        }
    }

    /// The status of bytes `range` of buffer `out`.
    pub(crate) fn of(&mut self, out: &BufferOutput, range: std::ops::Range<usize>) -> WordStatus {
        match &self.poisoned {
            // `writer` is empty exactly for memory no descriptor of the dispatch may write.
            Some(why) if !out.writer.is_empty() => WordStatus::Undefined(why.clone()),
            _ => {
                let t = out.taint_of(range);
                let run = self.run;
                self.seen.entry(t).or_insert_with(|| run.status(t)).clone()
            }
        }
    }
}

/// Everything a model run produced.
pub struct ModelRun {
    /// the bound buffers afterwards
    pub buffers: Vec<BufferOutput>,
    /// the first occurrences of every group of findings (at most
    /// `spirv::finding::EXAMPLES` each), in group order
    pub findings: Vec<Finding>,
    /// the findings grouped by kind, variable and instructions, each with its count, in a fixed
    /// order ([`Finding::group_key`]); `findings` is their examples
    pub groups: Vec<crate::spirv::FindingGroup>,
    /// findings in all
    pub finding_count: u64,
    /// lane-instructions executed
    pub lane_instructions: u64,
    /// the dispatch ran again workgroup after workgroup with the full race shadow on buffers,
    /// because its invocations shared buffer memory in a way whose order could matter
    pub ordered: bool,
    /// invocations run
    pub invocations: u64,
    /// lanes per workgroup in the register file
    pub lanes_per_wg: u32,
    /// lane placement
    pub map: LaneMap,
    /// workgroup size
    pub local_size: [u32; 3],
    /// workgroup count
    pub workgroups: [u32; 3],
    /// the model in force
    pub mode: Mode,
    /// provenance records
    pub provs: Provs,
    /// instruction locations
    pub locs: Vec<Location>,
    /// header label id → location of its merge instruction
    pub constructs: HashMap<u32, LocId>,
    /// variable names by object id
    pub objects: Vec<String>,
    /// storage class names by object id
    pub storages: Vec<&'static str>,
    /// variable and member names with their types, to name elements
    pub names: crate::spirv::inst::VarNames,
    /// the object standing for device addresses that lie in no buffer
    pub no_buffer: Option<ObjectId>,
    /// the branches on undefined values explored both ways, where they were
    /// ([`crate::spirv::Explored`])
    pub explored: Option<crate::spirv::Explored>,
}

impl ModelRun {
    /// What exploring the branches on undefined values found (`""` where none were explored), as
    /// a clause to end a lost path's finding.
    fn explored_text(&self) -> String {
        let Some(e) = self.explored else {
            return String::new();
        };
        let runs = format!(
            " — explored: the dispatch ran once per way such branches may go ({} runs; at most {} such {} per invocation): ",
            e.ways,
            e.branches,
            if e.branches == 1 { "branch" } else { "branches" }
        );
        match e.units {
            0 => format!("{runs}no unit it left undefined holds the same value on every way"),
            1 => format!("{runs}1 unit it left undefined holds the same value on every way, so it is defined"),
            n => format!("{runs}{n} units it left undefined hold the same value on every way, so they are defined"),
        }
    }

    /// Undefined behaviour that leaves nothing the dispatch wrote pinned down — a barrier not every
    /// invocation reached, a write outside a variable, an `OpUnreachable` executed — with its text; `None` otherwise. One
    /// policy for every consumer (`lockstep run`, Amber): every element of every buffer the
    /// dispatch could write is then undefined.
    pub fn poisoned(&self) -> Option<String> {
        self.findings
            .iter()
            .find(|f| f.poisons())
            .map(|f| self.finding_text(f))
    }

    /// The status of a word with this taint.
    pub fn status(&self, taint: Taint) -> WordStatus {
        if !taint.has_prov() {
            return if taint.is_inexact() {
                WordStatus::Inexact
            } else {
                WordStatus::Exact
            };
        }
        let chain = self.chain(taint);
        if taint.is_order() && !taint.is_undefined() {
            return WordStatus::OrderDependent(chain);
        }
        let origin = self.provs.chain(taint).last().map(|p| p.cause.clone());
        match origin {
            Some(Cause::AtomicOrder | Cause::WorkgroupOrder | Cause::ScheduleOrder) => {
                WordStatus::OrderDependent(chain)
            }
            Some(Cause::Race) => WordStatus::Racy(chain),
            _ => WordStatus::Undefined(chain),
        }
    }

    /// Where an instruction is, for people: `kernel.comp:23` or `%42`.
    pub fn at(&self, loc: LocId) -> String {
        self.locs
            .get(loc.index())
            .map(|l| l.to_string())
            .unwrap_or_else(|| format!("#{}", loc.get()))
    }

    /// The source line of an instruction, if known.
    pub fn line(&self, loc: LocId) -> Option<u32> {
        self.locs.get(loc.index()).and_then(|l| l.line)
    }

    /// A construct named for people: "the selection at kernel.comp:15" / "the call at …".
    pub fn construct(&self, id: u32) -> String {
        if id & CALL_CONSTRUCT != 0 {
            return format!("the call at {}", self.at(LocId::new(id & !CALL_CONSTRUCT)));
        }
        match self.constructs.get(&id) {
            Some(loc) => {
                let kind = match self.locs[loc.index()].op.as_str() {
                    "OpLoopMerge" => "loop",
                    "OpBranchConditional" => "branch",
                    _ => "selection",
                };
                format!("the {kind} at {}", self.at(*loc))
            }
            None => format!("construct %{id}"),
        }
    }

    /// The chain of a taint as text: `OpStore kernel.comp:23 ← subgroupShuffleDown kernel.comp:20:
    /// source lane 9 >= subgroup size 8`.
    pub fn chain(&self, taint: Taint) -> String {
        let links = self.provs.chain(taint);
        let mut parts = Vec::new();
        for p in &links {
            let loc = self.locs.get(p.loc.index());
            let op = loc.map(|l| l.op.clone()).unwrap_or_default();
            let at = self.at(p.loc);
            // after an instruction's name: `OpStore kernel.comp:12`, `OpStore in block %29`
            let op_at = if at.starts_with("block %") {
                format!("in {at}")
            } else {
                at.clone()
            };
            parts.push(match &p.cause {
                Cause::Stored => format!("{op} {op_at}"),
                Cause::Subgroup { op: sop, reason } => {
                    let name = &crate::model::info(*sop).glsl;
                    match reason {
                        // Maximal reconvergence leaves a tangle unpinned only where it says
                        // nothing (no hint to give).
                        crate::model::Reason::UnpinnedTangle { construct }
                            if self.mode == crate::reconverge::Mode::Maximal =>
                        {
                            format!(
                                "{name} {op_at}: the invocations executing it together are not pinned down even under maximal reconvergence (control flow diverged at {})",
                                self.construct(*construct)
                            )
                        }
                        crate::model::Reason::UnpinnedTangle { construct } => {
                            // Under base reconvergence a branch uniform within each subgroup
                            // but not across the workgroup is what SUCF was made for.
                            let sucf = if self.mode == crate::reconverge::Mode::Base {
                                "; where every branch on the way to it is uniform within the subgroup, subgroup-uniform control flow pins it down too (SPV_KHR_subgroup_uniform_control_flow: `#extension GL_EXT_subgroup_uniform_control_flow : require` and `[[subgroup_uniform_control_flow]]` on main; `--mode sucf` shows whether it does)"
                            } else {
                                ""
                            };
                            format!(
                                "{name} {op_at}: the invocations executing it together are not pinned down under {} reconvergence (control flow diverged at {} without a guaranteed reconvergence); it holds only under {} reconvergence: maximal reconvergence pins it down (SPV_KHR_maximal_reconvergence: `#extension GL_EXT_maximal_reconvergence : require` and `[[maximally_reconverges]]` on main, where the device has shaderMaximalReconvergence){sucf}",
                                self.mode,
                                self.construct(*construct),
                                self.mode
                            )
                        }
                        r => format!("{name} {op_at}: {r}"),
                    }
                }
                Cause::LostTangle { op: sop, construct } => format!(
                    "{} {op_at}: which invocations execute it together depends on a branch on an undefined value at {} (an invocation that branched there may or may not be among them)",
                    crate::model::info(*sop).glsl,
                    self.construct(*construct)
                ),
                Cause::NotUniform { op: sop, arg } => format!(
                    "{} {op_at}: its {arg} is not dynamically uniform",
                    crate::model::info(*sop).glsl
                ),
                Cause::BadArgument { op: sop, why } => {
                    format!("{} {op_at}: {why}", crate::model::info(*sop).glsl)
                }
                Cause::Glsl { why } => format!("{op} {op_at}: {why}"),
                Cause::Undef => match self.locs.get(p.loc.index()) {
                    // module scope: the id is the place (`%74 = OpUndef`)
                    Some(l) if l.block.is_none() && l.line.is_none() => {
                        format!("{at} = OpUndef (module scope)")
                    }
                    _ => format!("{op} {op_at}: OpUndef"),
                },
                Cause::UndefComponent => {
                    format!("{op} {op_at}: a component selected with 0xFFFFFFFF (undefined)")
                }
                Cause::Uninitialized { var, storage } => {
                    format!("read of {storage} variable {var}, never written")
                }
                Cause::OutOfBounds { var, offset, size } => format!(
                    "{op} {op_at}: {} is outside {var} ({size} bytes)",
                    byte_text(*offset)
                ),
                Cause::NoBuffer { address, bytes } => format!(
                    "{op} {op_at}: device address {address:#x} ({bytes} bytes) lies in no buffer of the dispatch (GL_EXT_buffer_reference: an address \"not within the bounds of a buffer\" is undefined behavior)"
                ),
                Cause::Misaligned { address, align } => format!(
                    "{op} {op_at}: device address {address:#x} is not {align}-byte aligned, as the access's Aligned operand declares (VUID-StandaloneSpirv-PhysicalStorageBuffer64-06315; GL_EXT_buffer_reference: \"all buffer reference addresses used for a particular buffer reference type are assumed to be aligned\" to its buffer_reference_align, 16 when not given: declare the alignment the addresses have)"
                ),
                Cause::NonUniformDescriptor { array, lanes } => format!(
                    "{op} {op_at}: invocations of one subgroup executing it together index the array of descriptors {array} with different values (lane {}: {array}[{}], lane {}: {array}[{}]), and the access is not decorated NonUniform (GLSL: `{array}[nonuniformEXT(i)]`): Vulkan requires the decoration where the descriptor is not dynamically uniform (VUID-RuntimeSpirv-NonUniform-06274), and a device may take one invocation's descriptor for all of them",
                    lanes[0].0, lanes[0].1, lanes[1].0, lanes[1].1
                ),
                Cause::PastArray { element, count } => format!(
                    "{op} {op_at}: {element} is past the end of its array of {count} descriptors"
                ),
                Cause::Scalar(e) => format!("{op} {op_at}: {e}"),
                Cause::Image { why } => format!("{op} {op_at}: {why}"),
                Cause::IndexOutOfRange { index, len } => {
                    format!("{op} {op_at}: index {index} >= {len} components")
                }
                Cause::LostPath { construct } => format!(
                    "written by an invocation whose path depends on an undefined value (branch of {})",
                    self.construct(*construct)
                ),
                Cause::PathNotTaken { construct } => format!(
                    "never written here, but {} branches at {at} on a value that is not pinned down and its other paths store to this buffer: another allowed execution may write here",
                    self.construct(*construct)
                ),
                Cause::ScheduleOrder => "another order of the workgroups (--schedules) left a different value here".to_string(),
                Cause::WorkgroupOrder => format!(
                    "{op} {op_at}: reads what another workgroup wrote, with no happens-before between them: which value it sees depends on how the device schedules workgroups"
                ),
                Cause::OrderPath { construct } => format!(
                    "written on a path chosen by an order-dependent value (branch of {})",
                    self.construct(*construct)
                ),
                Cause::Clock { device } => format!(
                    "{op} {op_at}: reads the {} clock (SPV_KHR_shader_clock): its value is when the device ran it",
                    if *device { "device's" } else { "subgroup's" }
                ),
                Cause::AtomicOrder => {
                    format!("{op} {op_at}: an atomic's result depends on the order invocations ran it in")
                }
                Cause::Race => format!("{op} {op_at}: unordered accesses (a data race)"),
                Cause::Input { why } => format!("undefined in the buffer given ({why})"),
                Cause::UndefinedPointer => {
                    format!("{op} {op_at}: a store through an undefined pointer")
                }
            });
        }
        // The same link twice in a row (an atomic on a word an atomic wrote) says nothing new.
        parts.dedup();
        if parts.is_empty() {
            return "exact".into();
        }
        fold_repeats(parts).join(" ← ")
    }

    /// The invocation of a dispatch slot (1-based shadow value): (workgroup id, local invocation
    /// index, subgroup, lane).
    pub fn invocation(&self, who: u32) -> Option<([u32; 3], u32, u32, u32)> {
        if who == 0 {
            return None;
        }
        let slot = who - 1;
        let wg = slot / self.lanes_per_wg;
        let s = slot % self.lanes_per_wg;
        let n = self.map.size().get();
        let (g, l) = (s / n, s % n);
        let [wx, wy, _] = self.workgroups;
        let id = [wg % wx, (wg / wx) % wy, wg / (wx * wy)];
        let local = self.map.invocation(g, l)?;
        Some((id, local, g, l))
    }

    /// The invocation as text: `workgroup (1,0,0) invocation 5 (subgroup 0 lane 5)`.
    pub fn invocation_text(&self, who: u32) -> String {
        match self.invocation(who) {
            Some((id, local, g, l)) => format!(
                "workgroup ({},{},{}) invocation {local} (subgroup {g} lane {l})",
                id[0], id[1], id[2]
            ),
            None => "no invocation".into(),
        }
    }

    /// A group of findings for people: what its occurrences share (kind, variable, instructions)
    /// and, for each of its first occurrences, what differs (the element, the invocations).
    pub fn group_text(&self, g: &crate::spirv::FindingGroup) -> (String, Vec<String>) {
        let Some(first) = g.examples.first() else {
            return (String::new(), Vec::new());
        };
        let var = |o: &ObjectId| self.objects.get(o.index()).cloned().unwrap_or_default();
        let rw = |w: bool| if w { "wrote" } else { "read" };
        match first {
            Finding::Race {
                object,
                a,
                b,
                class,
                fence_missing,
                private,
                ..
            } => {
                let same = *class == crate::spirv::RaceClass::SameValue;
                let why = format!(
                    "{}race on {}: {} at {} and {} at {}, {} (Vulkan memory model: a data race){}{}",
                    if same { "same-value " } else { "" },
                    var(object),
                    rw(a.2),
                    self.at(a.1),
                    rw(b.2),
                    self.at(b.1),
                    if *private { "not location-ordered" } else { "unordered" },
                    if same {
                        "; both sides leave the same value, which is kept — still a data race, which Vulkan forbids whatever the values (\"Applications must ensure that no data races occur\"): let one invocation store it"
                    } else {
                        ""
                    },
                    if *fence_missing {
                        self.fence_advice(*object)
                    } else if *private {
                        self.private_advice(*object)
                    } else {
                        String::new()
                    }
                );
                let items = g
                    .examples
                    .iter()
                    .map(|f| match f {
                        Finding::Race {
                            object,
                            offset,
                            a,
                            b,
                            ..
                        } => format!(
                            "{} by {}",
                            self.names.describe(*object, *offset as u64),
                            self.pair_text(a.0 + 1, b.0 + 1)
                        ),
                        _ => String::new(),
                    })
                    .collect();
                (why, items)
            }
            Finding::OutOfBounds {
                object,
                loc,
                write,
                past_array,
                ..
            } => {
                let nowhere = self.no_buffer == Some(*object);
                let why = if let Some(pa) = past_array {
                    format!(
                        "out-of-bounds {} through an index past the {} descriptors of {} at {}",
                        if *write { "write" } else { "read" },
                        pa.count,
                        var(object).strip_suffix("[0]").unwrap_or(&var(object)),
                        self.at(*loc)
                    )
                } else if nowhere {
                    format!(
                        "{} through a device address that lies in no buffer at {}",
                        if *write { "write" } else { "read" },
                        self.at(*loc)
                    )
                } else {
                    format!(
                        "out-of-bounds {} of {} at {}",
                        if *write { "write" } else { "read" },
                        var(object),
                        self.at(*loc)
                    )
                };
                let items = g
                    .examples
                    .iter()
                    .map(|f| match f {
                        Finding::OutOfBounds {
                            past_array: Some(pa),
                            slot,
                            ..
                        } => format!(
                            "{} by {}",
                            element_name(&var(object), pa.index),
                            self.invocation_text(slot + 1)
                        ),
                        Finding::OutOfBounds { offset, slot, .. } if nowhere => {
                            format!("address {offset:#x} by {}", self.invocation_text(slot + 1))
                        }
                        Finding::OutOfBounds { offset, slot, .. } => {
                            format!("byte {offset} by {}", self.invocation_text(slot + 1))
                        }
                        _ => String::new(),
                    })
                    .collect();
                (why, items)
            }
            Finding::LostPath {
                construct,
                loc,
                taint,
                ..
            } => {
                let why = format!(
                    "branch at {} on an undefined value ({}); the path from {} on is not pinned down{}",
                    self.at(*loc),
                    self.chain(*taint),
                    self.construct(*construct),
                    self.explored_text()
                );
                let items = g
                    .examples
                    .iter()
                    .map(|f| match f {
                        Finding::LostPath { slot, .. } => self.invocation_text(slot + 1),
                        _ => String::new(),
                    })
                    .collect();
                (why, items)
            }
            Finding::DivergentBarrier { .. }
            | Finding::Unreachable { .. }
            | Finding::SpinWait { .. } => (self.finding_text(first), Vec::new()),
            Finding::Print { loc, .. } => self.print_group(g, *loc),
        }
    }

    /// A `debugPrintfEXT`'s lines: where it is, and each line with its invocation.
    fn print_group(&self, g: &crate::spirv::FindingGroup, loc: LocId) -> (String, Vec<String>) {
        let why = format!("debugPrintfEXT at {}, printed on the model", self.at(loc));
        let items = g
            .examples
            .iter()
            .map(|f| match f {
                Finding::Print { slot, .. } => {
                    format!("{}: {}", self.invocation_text(slot + 1), self.print_line(f))
                }
                _ => String::new(),
            })
            .collect();
        (why, items)
    }

    /// A printed line, marked where the invocation's path depends on an undefined value.
    fn print_line(&self, f: &Finding) -> String {
        match f {
            Finding::Print { text, lost, .. } => format!(
                "{text}{}",
                if *lost {
                    "  [on a path an undefined value chose: a device need not print it]"
                } else {
                    ""
                }
            ),
            _ => String::new(),
        }
    }

    /// Why a barrier between two racing accesses did not order them, and the fix.
    fn fence_advice(&self, object: ObjectId) -> String {
        match self.storages.get(object.index()).copied() {
            Some("Workgroup") => "; a barrier lies between them, but its memory semantics leave out Workgroup memory: use barrier() (or add memoryBarrierShared() before it)".into(),
            Some("Image") => "; a barrier lies between them, but its memory semantics leave out image memory (SPIR-V's ImageMemory; GLSL's barrier() orders shared memory only, memoryBarrierBuffer() buffers only): add memoryBarrierImage() before the barrier".into(),
            _ => "; a barrier lies between them, but its memory semantics leave out buffer memory (GLSL's barrier() orders shared memory only): add memoryBarrierBuffer() before the barrier".into(),
        }
    }

    /// Why two accesses that barriers or atomics order still race: one is private.
    fn private_advice(&self, object: ObjectId) -> String {
        let var = self
            .objects
            .get(object.index())
            .cloned()
            .unwrap_or_default();
        format!(
            "; a barrier or atomic orders them, but {var} is not `coherent`: its accesses are private, which only the API orders between invocations (Vulkan memory model, Private vs. Non-Private; GLSL 4.60 §4.10): declare {var} `coherent`"
        )
    }

    /// Two invocations, briefly: `invocations 3 and 5 of workgroup (0,0,0)`, or each with its
    /// workgroup when they differ.
    pub fn pair_text(&self, a: u32, b: u32) -> String {
        match (self.invocation(a), self.invocation(b)) {
            (Some((wa, ia, ..)), Some((wb, ib, ..))) if wa == wb => format!(
                "invocations {ia} and {ib} of workgroup ({},{},{})",
                wa[0], wa[1], wa[2]
            ),
            (Some((wa, ia, ..)), Some((wb, ib, ..))) => format!(
                "invocation {ia} of workgroup ({},{},{}) and invocation {ib} of workgroup ({},{},{})",
                wa[0], wa[1], wa[2], wb[0], wb[1], wb[2]
            ),
            _ => format!(
                "{} and {}",
                self.invocation_text(a),
                self.invocation_text(b)
            ),
        }
    }

    /// A finding as one line.
    pub fn finding_text(&self, f: &Finding) -> String {
        match f {
            Finding::Race {
                object,
                offset,
                a,
                b,
                class,
                fence_missing,
                private,
            } => format!(
                "{}race on {}: {} {} at {} and {} {} at {} {}{}",
                if *class == crate::spirv::RaceClass::SameValue { "same-value " } else { "" },
                self.names.describe(*object, *offset as u64),
                self.invocation_text(a.0 + 1),
                if a.2 { "wrote" } else { "read" },
                self.at(a.1),
                self.invocation_text(b.0 + 1),
                if b.2 { "wrote" } else { "read" },
                self.at(b.1),
                if *private {
                    "that only the API can order"
                } else {
                    "with no barrier between them"
                },
                if *class == crate::spirv::RaceClass::SameValue {
                    " (both leave the same value, which is kept)"
                } else {
                    ""
                },
            ) + &if *fence_missing {
                self.fence_advice(*object)
            } else if *private {
                self.private_advice(*object)
            } else {
                String::new()
            },
            Finding::DivergentBarrier {
                loc,
                workgroup,
                reached,
                expected,
            } => format!(
                "barrier at {} reached by {reached} of the {expected} invocations of workgroup ({},{},{}): a barrier must be reached by every invocation of the workgroup",
                self.at(*loc),
                workgroup[0],
                workgroup[1],
                workgroup[2]
            ),
            Finding::OutOfBounds {
                object,
                past_array: Some(pa),
                loc,
                slot,
                write,
                ..
            } => format!(
                "out-of-bounds {} of {}, past the end of its array of {} descriptors, by {} at {}",
                if *write { "write" } else { "read" },
                element_name(
                    &self.objects.get(object.index()).cloned().unwrap_or_default(),
                    pa.index
                ),
                pa.count,
                self.invocation_text(slot + 1),
                self.at(*loc)
            ),
            Finding::OutOfBounds {
                object,
                offset,
                loc,
                slot,
                write,
                ..
            } => format!(
                "out-of-bounds {} of {} at {} by {} at {}",
                if *write { "write" } else { "read" },
                self.objects.get(object.index()).cloned().unwrap_or_default(),
                byte_text(*offset),
                self.invocation_text(slot + 1),
                self.at(*loc)
            ),
            Finding::LostPath {
                construct,
                loc,
                taint,
                slot,
            } => format!(
                "{} branches at {} on an undefined value ({}); its path from {} on is not pinned down{}",
                self.invocation_text(slot + 1),
                self.at(*loc),
                self.chain(*taint),
                self.construct(*construct),
                self.explored_text()
            ),
            Finding::Unreachable { loc } => format!("OpUnreachable reached at {}", self.at(*loc)),
            Finding::Print { loc, slot, .. } => format!(
                "{} printed at {}: {}",
                self.invocation_text(slot + 1),
                self.at(*loc),
                self.print_line(f)
            ),
            Finding::SpinWait {
                loc,
                workgroup,
                stuck,
            } => format!(
                "workgroup ({},{},{}) {} at {} for a value another workgroup writes: Vulkan gives no forward-progress guarantee between workgroups, so a device that does not run that workgroup alongside never ends the loop{}",
                workgroup[0],
                workgroup[1],
                workgroup[2],
                if *stuck { "spins forever" } else { "waits in a loop" },
                self.at(*loc),
                if *stuck {
                    " (the model ran the workgroups one after another, in one of the orders it tries where workgroups interact — `--schedules` —, and there the loop went round with nothing changing)"
                } else {
                    ""
                }
            ),
        }
    }
}

/// How reports name element `index` of the array of descriptors whose first element is named
/// `first` (`cs[0]` → `cs[2]`; a negative index, or one past 32 bits, said so).
pub(crate) fn element_name(first: &str, index: u32) -> String {
    let array = first.strip_suffix("[0]").unwrap_or(first);
    if index == crate::spirv::memory::Ptr::FAR {
        format!("{array}[a negative index, or one past 32 bits]")
    } else {
        format!("{array}[{index}]")
    }
}

/// "byte N" of an out-of-bounds access, or what [`Ptr::FAR`](crate::spirv::memory::Ptr::FAR)
/// stands for.
/// A chain through a loop repeats its links (a value stored, loaded and stored again on every
/// step): each link is shown where it first appears, the repeats are counted in its place, and the
/// last link — where the chain starts — is always shown.
fn fold_repeats(parts: Vec<String>) -> Vec<String> {
    let n = parts.len();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, p) in parts.into_iter().enumerate() {
        if seen.insert(p.clone()) || i + 1 == n {
            if skipped > 0 {
                let s = if skipped == 1 { "" } else { "s" };
                out.push(format!(
                    "… {skipped} more link{s} through the places before"
                ));
                skipped = 0;
            }
            out.push(p);
        } else {
            skipped += 1;
        }
    }
    out
}

fn byte_text(offset: u64) -> String {
    if offset == crate::spirv::memory::Ptr::FAR as u64 {
        "a byte offset that does not fit in 32 bits (a negative index, or one past 4 GiB)".into()
    } else {
        format!("byte {offset}")
    }
}

#[cfg(test)]
mod tests {
    use super::fold_repeats;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_chain_through_a_loop_shows_each_link_once_and_counts_the_repeats() {
        assert_eq!(
            fold_repeats(v(&[
                "store 9", "store 4", "lost 3", "store 4", "lost 3", "load 2"
            ])),
            v(&[
                "store 9",
                "store 4",
                "lost 3",
                "… 2 more links through the places before",
                "load 2"
            ])
        );
        // The link the chain starts from is shown though it appeared before.
        assert_eq!(fold_repeats(v(&["a", "b", "a"])), v(&["a", "b", "a"]));
        assert_eq!(
            fold_repeats(v(&["a", "b", "b2", "a", "c"])),
            v(&[
                "a",
                "b",
                "b2",
                "… 1 more link through the places before",
                "c"
            ])
        );
        assert_eq!(fold_repeats(v(&["a", "b", "c"])), v(&["a", "b", "c"]));
    }
}
