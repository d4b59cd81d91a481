//! A SPIR-V interpreter on the reference model: a user's compute shader run lane by lane, every
//! subgroup operation evaluated by [`crate::model`], reconvergence decided by
//! [`crate::reconverge::flow`], and every value that the specs leave undefined, order-dependent or
//! imprecise carried as such to the buffers it reaches, with the chain of instructions that made it
//! so. No Vulkan types in here: the device side lives in [`crate::kernel`].
//!
//! - [`decode()`]: SPIR-V words → a [`Kernel`] (pre-decoded instructions, registers, layouts).
//! - [`run_model`]: runs a kernel on bound buffers under a [`RunConfig`] (subgroup size, lane
//!   layout, reconvergence mode, workgroup count) → a [`ModelRun`]: the buffers afterwards, each
//!   word's status, and the [`Finding`]s (races, divergent barriers, out-of-bounds accesses, lost
//!   paths).
//!
//! ```
//! use lockstep::spirv::*;
//! use lockstep::model::{LaneOrder, SubgroupSize};
//! use lockstep::reconverge::Mode;
//! // A tiny module assembled by hand is in the tests; here, the words of a kernel that writes
//! // gl_SubgroupInvocationID to b[gl_GlobalInvocationID.x] (see tests/spirv.rs for the GLSL).
//! let words = lockstep::spirv::examples::lane_ids();
//! let k = decode(&words, &DecodeOptions::default()).unwrap();
//! let cfg = RunConfig::new(SubgroupSize::new(4).unwrap(), [2, 1, 1]); // base reconvergence
//! let buf = BufferInput { set: 0, binding: 0, bytes: vec![0; 64], ..Default::default() };
//! let run = run_model(&k, cfg, &[buf], None).unwrap();
//! let b = &run.buffers[0];
//! let words: Vec<u32> = b.bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
//! assert_eq!(words[..8], [0, 1, 2, 3, 0, 1, 2, 3]);
//! assert!(run.findings.is_empty());
//! ```

// SIMT code indexes lanes, components and subgroups by number across several parallel arrays at
// once (values, taints, masks): index loops say that more plainly than zipped iterators.
#![allow(clippy::needless_range_loop)]

mod addresses;
mod atomics;
mod barriers;
mod builtins;
pub mod decode;
pub(crate) mod error;
pub mod examples;
pub(crate) mod exec;
mod explore;
mod ext_exec;
pub(crate) mod ext_inst;
mod finding;
mod flow;
mod glsl;
mod group;
pub mod ids;
/// Samplers: their state and the texel-selection rules sampled reads follow.
pub use crate::words::sampler;
/// Texel formats, conversions and image extents ([`crate::words::texel`], which the device runner
/// shares).
pub use crate::words::texel as image;
mod imageops;
pub(crate) mod inst;
mod lanes;
mod lost;
mod memops;
pub(crate) mod memory;
mod names;
mod operands;
mod ops;
pub(crate) mod printf;
pub(crate) mod prov;
mod regs;
pub(crate) mod report;
mod sampling;
pub(crate) mod scalar;
mod schedule;
mod stores;
pub(crate) mod types;
mod values;

pub use decode::{decode, DecodeOptions, SpecInput};
pub use error::{Location, SpirvError};
pub use exec::{
    Finding, FindingGroup, PastArray, RaceClass, RunConfig, DEFAULT_MAX_STEPS, DEFAULT_SCHEDULES,
};
pub use explore::Explored;
pub use inst::Kernel;
pub(crate) use prov::{Cause, Prov, Provs, Taint};
pub use report::{ModelRun, WordStatus};

use crate::spirv::exec::Dispatch;
use crate::spirv::inst::ObjectId;
use crate::spirv::memory::Buffer;
use crate::spirv::types::Storage;
use std::sync::atomic::Ordering::Relaxed;

/// A buffer bound for a run: descriptor set, binding and its bytes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BufferInput {
    /// descriptor set
    pub set: u32,
    /// binding
    pub binding: u32,
    /// contents (little-endian)
    pub bytes: Vec<u8>,
    /// byte ranges that already hold no defined value (from an earlier run), with why
    pub undefined: Vec<(std::ops::Range<usize>, String)>,
    /// the element of an array of descriptors at this binding (0 for a plain binding)
    pub element: u32,
    /// for a storage image or texel buffer: its extent (`bytes` holds its texels, see
    /// [`image`]); a texel buffer given without one is as wide as its bytes hold texels
    pub image: Option<image::Extent>,
    /// the same memory as `buffers[i]` behind another descriptor (aliased: a write through one is
    /// seen through the other, and races between them are found); `bytes` is then not used
    pub alias_of: Option<usize>,
    /// for an image or texel buffer the module declares without a format (`Unknown`): the
    /// format of the bound view
    pub format: Option<image::TexelFormat>,
    /// for a sampler, or an image with its sampler (a combined image sampler): the sampler
    pub sampler: Option<crate::words::sampler::Sampler>,
    /// the bytes this descriptor sees: a range of `bytes` (or, with `alias_of`, of that input's
    /// bytes) — several descriptors over different ranges of one buffer; `None`: all of them
    pub window: Option<std::ops::Range<usize>>,
}

/// The extent of image `o` bound to `b`, checked against its bytes and its type.
fn image_extent(
    o: &inst::Object,
    t: &types::ImageType,
    b: &BufferInput,
    len: usize,
) -> Result<image::Extent, SpirvError> {
    let (set, binding) = o.binding.unwrap_or((0, 0));
    let tb = t.format.texel_bytes() as u64;
    let e = match b.image {
        Some(e) => e,
        None if t.dim == types::ImageDim::Buffer => {
            image::Extent::new((len as u64 / tb) as u32, 1, 1)
        }
        None => {
            return Err(SpirvError::Setup(format!(
                "set {set} binding {binding} ({}) is an image: it needs an extent (width, height, depth), not only bytes",
                o.name
            )))
        }
    };
    if !t.ms && e.samples > 1 {
        return Err(SpirvError::Setup(format!(
            "set {set} binding {binding} ({}): a single-sample image is bound with {} samples",
            o.name, e.samples
        )));
    }
    if e.texels().checked_mul(tb) != Some(len as u64) {
        return Err(SpirvError::Setup(format!(
            "set {set} binding {binding} ({}): an image of {}x{}x{} texels{} of {} takes {} bytes, given {}",
            o.name,
            e.width,
            e.height,
            e.depth,
            if e.samples > 1 { format!(", {} samples", e.samples) } else { String::new() },
            t.format.vk,
            e.texels().saturating_mul(tb),
            len
        )));
    }
    Ok(e)
}

/// The bytes of a memory of `len` bytes that input `b` (bound to object `o`) sees: its window, or
/// all; checked to lie inside the memory, start at a whole word, and hold the block's fixed part.
fn view_of(
    b: &BufferInput,
    len: usize,
    o: &inst::Object,
) -> Result<std::ops::Range<usize>, SpirvError> {
    let w = b.window.clone().unwrap_or(0..len);
    if w.start > w.end || w.end > len || !w.start.is_multiple_of(4) || w.end > u32::MAX as usize {
        return Err(SpirvError::Setup(format!(
            "set {} binding {} ({}) sees bytes {}..{} of a {len}-byte buffer: a descriptor's range lies inside its buffer and, here, starts at a multiple of 4 bytes",
            b.set, b.binding, o.name, w.start, w.end
        )));
    }
    if (w.len() as u64) < o.size as u64 {
        return Err(SpirvError::Setup(format!(
            "the buffer for set {} binding {} has {} bytes, but the shader's block {} needs at least {} bytes",
            b.set,
            b.binding,
            w.len(),
            o.name,
            o.size
        )));
    }
    Ok(w)
}

/// Runs `k` on the model: `buffers` for its storage and uniform buffer bindings, `push` for its
/// push-constant block. Every binding the kernel declares must be given, at least as large as the
/// block's fixed part; bindings the kernel does not declare are an error too.
pub fn run_model(
    k: &Kernel,
    cfg: RunConfig,
    buffers: &[BufferInput],
    push: Option<&[u8]>,
) -> Result<ModelRun, SpirvError> {
    run_model_with_progress(k, cfg, buffers, push, None)
}

/// The descriptor set [`ModelRun::buffers`] gives a buffer that has no descriptor (one reached
/// only through its device address, [`Addressing::unbound`]); its binding is its index there.
pub const UNBOUND_SET: u32 = u32::MAX;

/// Where the buffers of a dispatch lie in the device's address space, for a module that reaches
/// memory through `PhysicalStorageBuffer` pointers (GL_EXT_buffer_reference): an address inside
/// one of these buffers reaches it, any other address no memory at all.
///
/// When a device runs the same dispatch, the model takes the device's addresses (which the host
/// wrote into push constants and buffers), so that address arithmetic gives the same bits on
/// both; model-only, [`Addressing::model_bases`] chooses them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Addressing {
    /// the base address of each bound buffer that has one: (index into the run's buffers, base)
    pub bound: Vec<(usize, u64)>,
    /// buffers with no descriptor: name, bytes, base address
    pub unbound: Vec<(String, Vec<u8>, u64)>,
}

impl Addressing {
    /// Base addresses for buffers of these sizes, as the model chooses them when no device does:
    /// the first at 4 GiB (so that 0, the usual null reference, and small integers lie in no
    /// buffer), each 64 KiB-aligned (beyond any `buffer_reference_align`) and at least 64 KiB past
    /// the end of the one before (so that running off a buffer's end does not land in the next).
    pub fn model_bases(sizes: &[u64]) -> Vec<u64> {
        const ALIGN: u64 = 1 << 16;
        let mut next = 1u64 << 32;
        sizes
            .iter()
            .map(|&size| {
                let base = next;
                next = (base + size.max(1) + ALIGN).div_ceil(ALIGN) * ALIGN;
                base
            })
            .collect()
    }
}

/// [`run_model`], calling `progress(workgroups done, workgroups)` about ten times a second while it
/// runs.
pub(crate) fn run_model_with_progress(
    k: &Kernel,
    cfg: RunConfig,
    buffers: &[BufferInput],
    push: Option<&[u8]>,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
) -> Result<ModelRun, SpirvError> {
    run_model_addressed(k, cfg, buffers, push, &Addressing::default(), progress)
}

/// The kernel with one buffer object per unbound addressed buffer appended (storage
/// `PhysicalStorageBuffer`, bound at [`UNBOUND_SET`]); the constructs that may store through a
/// device address may store to each of them.
fn with_unbound(k: &Kernel, unbound: &[(String, Vec<u8>, u64)]) -> Kernel {
    let mut k = k.clone();
    let first = k.objects.len() as u32;
    let nowhere = k.no_buffer;
    for (i, (name, _, _)) in unbound.iter().enumerate() {
        let loc = inst::LocId::new(k.locs.len() as u32);
        k.locs.push(Location {
            file: None,
            line: None,
            op: format!("the buffer {name}"),
            id: None,
            block: None,
            names: None,
        });
        k.objects.push(inst::Object::addressed(
            name.clone(),
            Some((UNBOUND_SET, i as u32)),
            loc,
        ));
    }
    let added: Vec<ObjectId> = (first..k.objects.len() as u32).map(ObjectId::new).collect();
    for objs in k.construct_stores.values_mut() {
        if nowhere.is_some_and(|n| objs.contains(&n)) {
            objs.extend(added.iter().copied());
        }
    }
    k
}

/// Gives each image or texel buffer the module declares without a format the format of the view
/// bound to it.
fn with_formats(k: &mut Kernel, buffers: &[BufferInput]) -> Result<(), SpirvError> {
    for o in &mut k.objects {
        let Some(t) = o.image.as_mut().filter(|t| !t.format_given) else {
            continue;
        };
        let Some((set, binding)) = o.binding else {
            continue;
        };
        let Some(b) = buffers
            .iter()
            .find(|b| (b.set, b.binding) == (set, binding) && b.element == o.element)
        else {
            continue;
        };
        let Some(f) = b.format else {
            return Err(SpirvError::Setup(format!(
                "set {set} binding {binding} ({}) is declared without a texel format (Unknown, e.g. a samplerBuffer): the binding must give the format of its view",
                o.name
            )));
        };
        if f.comp.is_float() != t.sampled_type.is_float() {
            return Err(SpirvError::Setup(format!(
                "set {set} binding {binding} ({}): a view of {} read as {} (Vulkan requires the sampled type to match the format's numeric type)",
                o.name,
                f.vk,
                t.sampled_type.name()
            )));
        }
        t.format = f;
        t.format_given = true;
        o.runtime_array = Some((0, f.texel_bytes()));
        o.unit = f.unit();
    }
    Ok(())
}

/// [`run_model_with_progress`] for a module that reaches buffers through device addresses:
/// `addressing` says where each buffer lies, and gives the buffers that have no descriptor.
///
/// The run is made on a thread of rayon's pool (a scope's closure runs there; the workgroups run
/// there anyway), so that its buffers — tens of megabytes for a large dispatch — are allocated
/// and freed by a pool thread. Called from a program's main thread, the allocator would hand the
/// freed pages back to the system at the end of each run and fault them in again at the next
/// (glibc trims its main heap; a thread's heap keeps them): measured on a 1024×1024 Gray-Scott
/// step, 11,500 page faults and ~20 ms a run (docs/interpreter.md, "A run's buffers").
pub(crate) fn run_model_addressed(
    k: &Kernel,
    cfg: RunConfig,
    buffers: &[BufferInput],
    push: Option<&[u8]>,
    addressing: &Addressing,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
) -> Result<ModelRun, SpirvError> {
    rayon::scope(|_| {
        let extended;
        let unknown_format = k
            .objects
            .iter()
            .any(|o| o.image.is_some_and(|t| !t.format_given));
        let k = if addressing.unbound.is_empty() && !unknown_format {
            k
        } else {
            let mut x = with_unbound(k, &addressing.unbound);
            with_formats(&mut x, buffers)?;
            extended = x;
            &extended
        };
        let unbound_inputs: Vec<BufferInput> = addressing
            .unbound
            .iter()
            .enumerate()
            .map(|(i, (_, bytes, _))| BufferInput {
                set: UNBOUND_SET,
                binding: i as u32,
                bytes: bytes.clone(),
                undefined: Vec::new(),
                element: 0,
                image: None,
                alias_of: None,
                format: None,
                sampler: None,
                window: None,
            })
            .collect();
        let all: Vec<BufferInput>;
        let buffers = if unbound_inputs.is_empty() {
            buffers
        } else {
            all = buffers.iter().cloned().chain(unbound_inputs).collect();
            &all
        };
        let mut d = dispatch(k, cfg.clone(), buffers, push, addressing, progress, None)?;
        let mut out = outputs(&mut d, k);
        let explored = explore_branches(k, &cfg, buffers, push, addressing, &d, &mut out);
        let groups: Vec<exec::FindingGroup> =
            std::mem::take(&mut *d.findings.lock().unwrap_or_else(|e| e.into_inner()))
                .into_values()
                .collect();
        let findings = groups.iter().flat_map(|g| g.examples.clone()).collect();
        Ok(ModelRun {
            buffers: out,
            findings,
            groups,
            finding_count: d.finding_count.load(Relaxed),
            lane_instructions: d.lane_instructions.load(Relaxed),
            ordered: d.ordered(),
            invocations: d.workgroup_count()
                * k.local_size.iter().map(|&x| x as u64).product::<u64>(),
            lanes_per_wg: d.lanes_per_wg,
            map: d.map.clone(),
            local_size: k.local_size,
            workgroups: d.cfg.workgroups,
            mode: d.cfg.mode,
            provs: d.provs,
            locs: k.locs.clone(),
            constructs: k.constructs.clone(),
            objects: k.objects.iter().map(|o| o.name.clone()).collect(),
            names: {
                let mut n = k.var_names();
                for (i, e) in d.extents.iter().enumerate() {
                    if let Some(e) = e {
                        n.extents.insert(ObjectId::new(i as u32), *e);
                    }
                }
                n
            },
            storages: k.objects.iter().map(|o| o.storage.name()).collect(),
            no_buffer: k.no_buffer,
            explored,
        })
    })
}

/// One run of a dispatch: its inputs bound, its buffers placed, every workgroup run. `choices`:
/// the ways branches on undefined values go ([`Dispatch::choices`]), `None` to lose the path.
fn dispatch<'a>(
    k: &'a Kernel,
    cfg: RunConfig,
    buffers: &'a [BufferInput],
    push: Option<&[u8]>,
    addressing: &Addressing,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    choices: Option<Vec<bool>>,
) -> Result<Dispatch<'a>, SpirvError> {
    let Bindings {
        bound,
        initial,
        samplers,
        views,
        extents,
        provs,
    } = bind(k, buffers, push, choices.is_some())?;
    let mut d = Dispatch::new(k, cfg, bound, initial, provs)?;
    d.samplers = samplers;
    d.views = views;
    d.extents = extents;
    d.choices = choices;
    place(&mut d, k, buffers, addressing)?;
    run_dispatch(&d, progress)?;
    Ok(d)
}

/// Where invocations branched on undefined values (`first`, the run that lost their paths): the
/// dispatch again for every way those branches may go, each invocation's `j`-th such branch the
/// same way in one run, and the units every way leaves defined and equal made defined in `out`
/// ([`explore::refine`]). `None` where nothing was explored: no such branch, a way on which
/// invocations may influence one another after such a branch ([`Dispatch::interacted`]), more
/// branches than [`explore::MAX_BRANCHES`] or more work than [`explore::MAX_LANE_INSTRUCTIONS`],
/// or a way that writes out of bounds, meets a divergent barrier or stops.
fn explore_branches(
    k: &Kernel,
    cfg: &RunConfig,
    buffers: &[BufferInput],
    push: Option<&[u8]>,
    addressing: &Addressing,
    first: &Dispatch<'_>,
    out: &mut [report::BufferOutput],
) -> Option<explore::Explored> {
    let mut n = first.undefined_branches.load(Relaxed);
    if n == 0 || poisons(first) {
        return None;
    }
    let work = first.lane_instructions.load(Relaxed).max(1);
    'grow: loop {
        if n > explore::MAX_BRANCHES || work << n > explore::MAX_LANE_INSTRUCTIONS {
            return None;
        }
        // A way that never ends (a loop only the other way leaves) stops at its share of the
        // budget, and nothing is explored.
        let mut cfg = cfg.clone();
        cfg.max_steps = cfg.max_steps.min(explore::MAX_LANE_INSTRUCTIONS >> n);
        let mut runs = Vec::with_capacity(1 << n);
        for bits in 0..1u32 << n {
            let way: Vec<bool> = (0..n).map(|j| (bits >> j) & 1 != 0).collect();
            let mut d =
                dispatch(k, cfg.clone(), buffers, push, addressing, None, Some(way)).ok()?;
            if poisons(&d) || d.interacted.load(Relaxed) {
                return None;
            }
            let m = d.undefined_branches.load(Relaxed);
            if m > n {
                // A way that meets more such branches: explore those too.
                n = m;
                continue 'grow;
            }
            runs.push(outputs(&mut d, k));
        }
        let units = explore::refine(out, &runs);
        return Some(explore::Explored {
            branches: n,
            ways: runs.len() as u32,
            units,
        });
    }
}

/// Did this run write outside a variable or meet a barrier not every invocation reached
/// ([`Finding::poisons`])?
fn poisons(d: &Dispatch<'_>) -> bool {
    d.findings
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .any(|g| g.examples.iter().any(Finding::poisons))
}

/// What a run's inputs bind: each object's memory (shared by the objects of one buffer), the
/// bytes writable buffers start from, the samplers, each object's view of its memory and each
/// image's extent, and the provenance of undefined input bytes.
struct Bindings<'b> {
    bound: Vec<Option<std::sync::Arc<Buffer>>>,
    initial: Vec<Option<exec::Initial<'b>>>,
    samplers: Vec<Option<crate::words::sampler::Sampler>>,
    views: Vec<(u32, u32)>,
    extents: Vec<Option<image::Extent>>,
    provs: Provs,
}

/// Binds the run's inputs to the kernel's buffer, image, sampler and push-constant objects; an
/// object without an input, or an input without an object, is an error naming the binding.
/// `explores`: the run explores branches on undefined values, so its buffers record their lowest
/// writers.
fn bind<'b>(
    k: &Kernel,
    buffers: &'b [BufferInput],
    push: Option<&[u8]>,
    explores: bool,
) -> Result<Bindings<'b>, SpirvError> {
    let provs = Provs::default();
    let mut bound: Vec<Option<std::sync::Arc<Buffer>>> = vec![None; k.objects.len()];
    // The object each input was bound to (for an aliased input to share its buffer).
    let mut object_of: Vec<Option<usize>> = vec![None; buffers.len()];
    // One buffer's bytes behind two descriptors: the input that owns the memory, and the
    // smallest taint unit of the objects that reach it (the finer one serves both).
    let root = |p: usize| match buffers[p].alias_of {
        Some(r) if r < buffers.len() && buffers[r].alias_of.is_none() => r,
        _ => p,
    };
    let writes = |o: &inst::Object| {
        matches!(
            o.storage,
            Storage::StorageBuffer | Storage::Image | Storage::PhysicalStorageBuffer
        ) && !o.read_only
    };
    let mut unit_of: Vec<u32> = vec![4; buffers.len()];
    let mut written: Vec<bool> = vec![false; buffers.len()];
    for o in &k.objects {
        if let Some(pos) = buffers
            .iter()
            .position(|b| o.binding == Some((b.set, b.binding)) && b.element == o.element)
        {
            let r = root(pos);
            unit_of[r] = unit_of[r].min(o.unit);
            written[r] |= writes(o);
        }
    }
    let mut aliased: Vec<(usize, usize)> = Vec::new();
    let mut initial: Vec<Option<exec::Initial<'_>>> = (0..k.objects.len()).map(|_| None).collect();
    let mut used = vec![false; buffers.len()];
    let mut samplers = vec![None; k.objects.len()];
    // Per object, the part of its buffer's memory it sees (base, size) and an image's extent.
    let mut views: Vec<(u32, u32)> = vec![(0, 0); k.objects.len()];
    let mut extents: Vec<Option<image::Extent>> = vec![None; k.objects.len()];
    for (i, o) in k.objects.iter().enumerate() {
        match o.storage {
            // (the object for addresses in no buffer has no binding and no buffer)
            Storage::StorageBuffer
            | Storage::Uniform
            | Storage::Image
            | Storage::PhysicalStorageBuffer
                if o.binding.is_some() || o.storage != Storage::PhysicalStorageBuffer =>
            {
                let (set, binding) = o.binding.unwrap_or((0, 0));
                let Some(pos) = buffers
                    .iter()
                    .position(|b| b.set == set && b.binding == binding && b.element == o.element)
                else {
                    // (a binding the entry point never refers to needs nothing, as on a device)
                    if !o.used {
                        continue;
                    }
                    return Err(missing_input(o));
                };
                used[pos] = true;
                if o.sampler {
                    samplers[i] = Some(buffers[pos].sampler.ok_or_else(|| {
                        SpirvError::Setup(format!(
                            "set {set} binding {binding} ({}) is {}: it needs a sampler",
                            o.name,
                            if o.image.is_some() {
                                "an image with its sampler"
                            } else {
                                "a sampler"
                            }
                        ))
                    })?);
                }
                if root(pos) != pos {
                    aliased.push((i, pos));
                    continue;
                }
                object_of[pos] = Some(i);
                let b = &buffers[pos];
                let view = view_of(b, b.bytes.len(), o)?;
                views[i] = (view.start as u32, view.len() as u32);
                let writable = written[pos];
                let mut buf = Buffer::new(&b.bytes, writable, unit_of[pos]);
                buf.record_first_writers(explores);
                if let Some(t) = &o.image {
                    let e = image_extent(o, t, b, view.len())?;
                    buf.extent = Some(e);
                    extents[i] = Some(e);
                }
                let undefined = input_undefined(b, o, &provs);
                buf.set_undefined(&undefined);
                if writable {
                    initial[i] = Some(exec::Initial {
                        bytes: &b.bytes,
                        undefined,
                    });
                }
                bound[i] = Some(std::sync::Arc::new(buf));
            }
            Storage::PushConstant => {
                let bytes = push.unwrap_or(&[]);
                if (bytes.len() as u64) < o.size as u64 {
                    return Err(SpirvError::Setup(format!(
                        "the push constants have {} bytes, but the shader's block {} needs {} bytes (--push)",
                        bytes.len(),
                        o.name,
                        o.size
                    )));
                }
                bound[i] = Some(std::sync::Arc::new(Buffer::new(bytes, false, o.unit)));
            }
            _ => {}
        }
    }
    for (i, pos) in aliased {
        let o = &k.objects[i];
        let Some(owner) = object_of[root(pos)] else {
            return Err(SpirvError::Setup(format!(
                "set {} binding {} is given as the memory of another binding that the shader does not declare",
                buffers[pos].set, buffers[pos].binding
            )));
        };
        let shared = bound[owner].clone();
        let len = buffers[root(pos)].bytes.len();
        let view = view_of(&buffers[pos], len, o)?;
        views[i] = (view.start as u32, view.len() as u32);
        if let Some(t) = &o.image {
            extents[i] = Some(image_extent(o, t, &buffers[pos], view.len())?);
        }
        bound[i] = shared;
    }
    if let Some(pos) = used.iter().position(|u| !u) {
        let b = &buffers[pos];
        return Err(SpirvError::Setup(format!(
            "set {} binding {} is given a buffer, but the shader declares no such binding",
            b.set, b.binding
        )));
    }
    Ok(Bindings {
        bound,
        initial,
        samplers,
        views,
        extents,
        provs,
    })
}

/// The byte ranges input `b` gives as holding no defined value, each with its taint (an input's
/// cause, at the object's declaration).
fn input_undefined(
    b: &BufferInput,
    o: &inst::Object,
    provs: &Provs,
) -> Vec<(std::ops::Range<usize>, Taint)> {
    b.undefined
        .iter()
        .map(|(range, why)| {
            let p = Taint::undefined(provs.intern(Prov {
                cause: Cause::Input { why: why.clone() },
                loc: o.loc,
                parent: 0,
            }));
            (range.clone(), p)
        })
        .collect()
}

/// The error for a buffer, image or sampler object the run gives nothing for, naming its binding
/// and what to give.
fn missing_input(o: &inst::Object) -> SpirvError {
    let (set, binding) = o.binding.unwrap_or((0, 0));
    if o.sampler && o.image.is_none() {
        return SpirvError::Setup(format!(
            "no sampler for set {set} binding {binding} ({}): the shader declares a sampler there, and it needs a sampler",
            o.name
        ));
    }
    let array = if o.descriptors > 1 {
        // One buffer per element of an array of descriptors: `--buffer B[K]=SPEC`.
        format!(
            ", element {} of an array of {} descriptors",
            o.element, o.descriptors
        )
    } else {
        String::new()
    };
    SpirvError::Setup(format!(
        "no buffer for set {set} binding {binding} ({}{array}, {} bytes{}); give one with --buffer {}{binding}{}=SPEC",
        o.name,
        o.size,
        if o.runtime_array.is_some() { " plus its runtime array" } else { "" },
        if set == 0 { String::new() } else { format!("{set}.") },
        if o.descriptors > 1 { format!("[{}]", o.element) } else { String::new() }
    ))
}

/// Where each addressed buffer lies: bound ones by their index among `buffers` (unbound ones
/// follow them there, in order); overlapping buffers are an error.
fn place(
    d: &mut Dispatch<'_>,
    k: &Kernel,
    buffers: &[BufferInput],
    addressing: &Addressing,
) -> Result<(), SpirvError> {
    let bases = addressing.bound.iter().copied().chain(
        addressing
            .unbound
            .iter()
            .enumerate()
            .map(|(i, (_, _, base))| (buffers.len() - addressing.unbound.len() + i, *base)),
    );
    for (pos, base) in bases {
        let Some(b) = buffers.get(pos) else {
            return Err(SpirvError::Setup(format!(
                "an address is given for buffer {pos}, but the run has {} buffers",
                buffers.len()
            )));
        };
        let obj = k
            .objects
            .iter()
            .position(|o| o.binding == Some((b.set, b.binding)) && o.element == b.element);
        if let Some(obj) = obj {
            d.addresses
                .push((base, b.bytes.len() as u64, ObjectId::new(obj as u32)));
        }
    }
    d.addresses.sort_by_key(|a| a.0);
    if let Some(w) = d.addresses.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
        return Err(SpirvError::Setup(format!(
            "the buffers {} and {} overlap in the address space (bases {:#x} and {:#x})",
            k.objects[w[0].2.index()].name,
            k.objects[w[1].2.index()].name,
            w[0].0,
            w[1].0
        )));
    }
    Ok(())
}

/// Runs the dispatch, reporting progress (workgroups done, of all) every 100 ms if asked.
fn run_dispatch(
    d: &Dispatch<'_>,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
) -> Result<(), SpirvError> {
    match progress {
        None => d.run()?,
        Some(p) => {
            let total = d.workgroup_count();
            let finished = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    while !finished.load(Relaxed) {
                        p(d.done.load(Relaxed), total);
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                    p(d.done.load(Relaxed), total);
                });
                let r = d.run();
                finished.store(true, Relaxed);
                r
            })?;
        }
    }
    Ok(())
}

/// The bound buffers after the run, each as its object sees it (its window of a shared buffer),
/// with the taint of elements a path not taken may have written. Takes the buffers out of `d`: a
/// buffer no later object shares is moved, not copied.
fn outputs(d: &mut Dispatch<'_>, k: &Kernel) -> Vec<report::BufferOutput> {
    let maybe = std::mem::take(&mut *d.maybe_written.lock().unwrap_or_else(|e| e.into_inner()));
    let buffers = std::mem::take(&mut d.buffers);
    let mut out = Vec::new();
    for (i, (o, b)) in k.objects.iter().zip(buffers).enumerate() {
        let (Some(b), Some((set, binding))) = (b, o.binding) else {
            continue;
        };
        let object = ObjectId::new(i as u32);
        if let Some(t) = maybe.get(&object) {
            // Elements this execution never wrote that a path not taken may write.
            for u in b.never_written() {
                let x = Taint::from_bits(b.taint[u].load(Relaxed));
                b.taint[u].store(prov::combine(x, *t).bits(), Relaxed);
            }
        }
        // The bytes this object sees (its window of a shared buffer).
        let (base, size) = d.view(object);
        let (base, size) = (base as usize, size as usize);
        let unit = b.unit as usize;
        let units = base / unit..(base + size).div_ceil(unit);
        let mut c = match std::sync::Arc::try_unwrap(b) {
            Ok(b) => b.into_contents(),
            Err(shared) => shared.contents(),
        };
        c.window(base..base + size, units);
        out.push(report::BufferOutput {
            set,
            binding,
            element: o.element,
            object,
            bytes: c.bytes,
            unit: unit as u32,
            taint: c.taint,
            writer: c.wloc,
            first_writer: c.first,
        });
    }
    out
}
