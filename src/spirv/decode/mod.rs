//! SPIR-V words → a [`Kernel`]: parse with rspirv, resolve types, layouts, constants and
//! specialization constants, allocate registers and memory, and turn every instruction of the
//! supported subset into an `Inst`. Anything outside the subset is an error naming the instruction
//! and its source line — never a silently wrong result.
//!
//! One `Decoder` walks the module in phases, each in a file of its own (naga's `front/spv`
//! layout): `facts` (debug information, decorations, names, the entry point and its execution
//! modes), `globals` (types, constants and specialization constants folded with the executor's
//! scalar rules, variables, load/store plans), `functions` (functions, structured control flow,
//! and the one `match` — `family` — that routes each body instruction to its family), then one
//! file per group of families: `arith` (arithmetic and comparisons; logic and selection;
//! conversions), `composite` (composites; vector and matrix products, extended integer arithmetic,
//! bit fields), `access` (loads, stores, pointers; access chains), `ext` (GLSL.std.450), `sync`
//! (atomics, barriers, and subgroup instructions mapped through the model's catalogue) and
//! `image`; `validate` holds the static rules checked once, at decode time; at the end, `unroll`
//! unrolls the loops whose trip count is a constant, `inline` replaces calls to single-block
//! functions by their instructions and `promote` gives each block a body with the invocation's
//! own variables in registers.

use crate::model::{info, Op, QuadDir, Scan, Value, ValueType};
use crate::reconverge::Mode;
use crate::spirv::error::{Location, SpirvError};
use crate::spirv::inst::*;
use crate::spirv::scalar;
use crate::spirv::types::{
    ElementOf, ImageDim, ImageType, MatrixLayout, Scalar, Storage, Type, TypeId, Types,
};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{self, BuiltIn, Decoration, Dim, ExecutionMode, Op as SOp, StorageClass};
use std::collections::{HashMap, HashSet};

/// A specialization constant value given for a run.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecInput {
    /// text parsed with the constant's declared type (`7`, `0x10`, `1.5`, `true`)
    Text(String),
    /// raw bits (low bits used)
    Bits(u64),
}

/// What to decode: which entry point, which specialization constants.
#[derive(Clone, Debug, Default)]
pub struct DecodeOptions {
    /// entry point name (default: the only GLCompute entry point, or `main`)
    pub entry: Option<String>,
    /// specialization constants by SpecId
    pub spec: Vec<(u32, SpecInput)>,
    /// display name of the module (file name)
    pub name: String,
    /// execute every `OpFunctionCall` as a call: no decode-time inlining of single-block
    /// functions (reports are the same either way; for tests that show it)
    pub keep_calls: bool,
    /// run every load and store of a `Function` variable: no decode-time promotion of an
    /// invocation's own variables to registers (reports are the same either way; for tests that
    /// show it)
    pub keep_variables: bool,
    /// run every loop as written: no decode-time unrolling of loops whose trip count is a
    /// constant (reports are the same either way; for tests that show it)
    pub keep_loops: bool,
    /// every non-atomic access is non-private (WGSL: its barriers order storage accesses within a
    /// workgroup; naga's storage buffers carry no `Coherent`); otherwise a `GLSL450` module's
    /// accesses through memory not decorated `Coherent` are private (Vulkan, Appendix B, Private
    /// vs. Non-Private; `decode/private.rs`)
    pub all_non_private: bool,
    /// names for ids the module leaves without an `OpName` (a SPIR-V assembly text's `%names`:
    /// [`crate::words::asm_names::names`]), for the reports
    pub names: Vec<(u32, String)>,
}

/// Decodes a module for one entry point.
pub fn decode(words: &[u32], opts: &DecodeOptions) -> Result<Kernel, SpirvError> {
    let r = crate::words::read(words).map_err(|e| SpirvError::malformed(e.0))?;
    let mut d = Decoder::new(&r.module, opts)?;
    d.debug_sources = r.debug_sources;
    d.debug_info_set = r.debug_info_set;
    d.source_texts = r.source_texts;
    d.debug_globals = r.debug_globals;
    d.run()
}

/// A constant's value during decoding: its type and flattened slot bits.
#[derive(Clone, Debug, PartialEq)]
struct ConstVal {
    ty: TypeId,
    bits: Vec<u64>,
    /// per slot: `OpUndef` (one undefined member does not make the rest of a composite undefined)
    undef: Vec<bool>,
    /// where the (first) `OpUndef` behind an undefined slot is, to name it in a chain
    undef_at: Option<LocId>,
    /// the undefined slots are components an `OpSpecConstantOp` `OpVectorShuffle` selected with
    /// 0xFFFFFFFF (`undef_at` is that instruction), not an `OpUndef`
    undef_component: bool,
}

impl ConstVal {
    /// A defined constant.
    fn defined(ty: TypeId, bits: Vec<u64>) -> ConstVal {
        let undef = vec![false; bits.len()];
        ConstVal {
            ty,
            bits,
            undef,
            undef_at: None,
            undef_component: false,
        }
    }

    /// Is any slot undefined?
    fn any_undef(&self) -> bool {
        self.undef.iter().any(|u| *u)
    }
}

#[derive(Clone, Debug)]
enum Id {
    Type(TypeId),
    Const(ConstVal),
    Var(ObjectId),
    Func(FuncIdx),
    Glsl,
    /// the `NonSemantic.DebugPrintf` import
    Printf,
    NonSemantic,
    Str(String),
}

struct Decoder<'m> {
    m: &'m Module,
    opts: &'m DecodeOptions,
    ids: HashMap<u32, Id>,
    types: Types,
    deco: HashMap<u32, Vec<(Decoration, Vec<u32>)>>,
    mdeco: HashMap<(u32, u32), Decorations>,
    names: HashMap<u32, String>,
    /// result id → register
    regs: HashMap<u32, Reg>,
    reg_slots: Vec<u32>,
    reg_views: Vec<crate::spirv::inst::RegView>,
    constants: Vec<Constant>,
    objects: Vec<Object>,
    plans: Vec<Plan>,
    plan_ids: HashMap<(TypeId, MatrixLayout), PlanId>,
    locs: Vec<Location>,
    /// result id → (result type, opcode), over every function
    defs: HashMap<u32, (u32, SOp)>,
    /// ids some instruction of a function names as an operand (a result not in it is never read)
    used: HashSet<u32>,
    /// result id → (the pointer, image or sampled image it was made from, opcode): access
    /// chains, copies, loads and image extractions, for rooting a pointer at its variable
    bases: HashMap<u32, (u32, SOp)>,
    /// pointer result id → matrix layout context of its pointee
    ptr_layout: HashMap<u32, MatrixLayout>,
    lane_words: u32,
    /// variables that are arrays of descriptors: their element count (their objects are
    /// consecutive)
    descriptor_arrays: HashMap<u32, u32>,
    /// why an `OpTypeImage` (by id) is not interpreted, for the variable that uses it
    opaque_why: HashMap<u32, String>,
    shared_words: u32,
    lane_units: u32,
    shared_units: u32,
    /// (struct type result id, member) → `OpMemberName`
    member_names: HashMap<(u32, u32), String>,
    /// `DebugSource` id → its file's `OpString` id (NonSemantic.Shader.DebugInfo.100)
    debug_sources: HashMap<u32, u32>,
    /// the NonSemantic.Shader.DebugInfo.100 import
    debug_info_set: Option<u32>,
    /// embedded source text by the `OpString` id of its file name
    source_texts: HashMap<u32, String>,
    /// `DebugGlobalVariable`s (NonSemantic.Shader.DebugInfo.100): (variable id, name string id)
    debug_globals: Vec<(u32, u32)>,
    /// the source text's lines by file name (filled as stores ask)
    source_lines: HashMap<String, Vec<String>>,
    /// registers holding a variable's pointer, and the variable
    var_regs: HashMap<Reg, ObjectId>,
    /// access chains of constant steps from a variable: their result registers hold one
    /// pointer for every lane and are filled as constants, not executed
    folded_chains: HashMap<Reg, crate::spirv::memory::Ptr>,
    file: Option<String>,
    constructs: HashMap<u32, LocId>,
    uses_subgroups: bool,
    /// instructions to run before the one being decoded returns (a device address resolved to
    /// the buffer it lies in, before an access through it)
    prelude: Vec<Inst>,
    /// the object standing for memory at an address that lies in no buffer (made at the first
    /// access through a `PhysicalStorageBuffer` pointer)
    no_buffer: Option<ObjectId>,
    /// the variables the promoted bodies carry in registers (`promote.rs`)
    carried: Vec<crate::spirv::ids::CarriedVar>,
    /// result id → its instruction (types, global variables, constants, function bodies), for
    /// tracing a pointer to its variable's decorations (`private`)
    insts: HashMap<u32, &'m Instruction>,
    /// the sides of the instruction being decoded that access memory privately
    /// ([`private_side`])
    pending_private: u8,
    /// location → the sides of its accesses that are private
    private_locs: HashMap<LocId, u8>,
}

fn op_name(op: SOp) -> String {
    format!("Op{op:?}")
}

fn unsupported(what: impl Into<String>) -> SpirvError {
    SpirvError::unsupported(what)
}

/// Refuses an instruction that reads its own result (SSA: a value is defined before it is used).
macro_rules! check_ssa {
    ($d:expr_2021, $($a:expr_2021),*) => {
        $( if $d == $a { return Err(SpirvError::malformed("an instruction uses its own result")); } )*
    };
}

mod access;
mod arith;
mod composite;
mod ext;
mod facts;
mod functions;
mod globals;
mod image;
mod inline;
mod layout;
mod private;
mod promote;
mod sync;
#[cfg(test)]
mod tests;
mod unroll;
mod validate;
mod views;

impl<'m> Decoder<'m> {
    /// The defined scalar constants (one slot, not `OpUndef`), by register.
    fn scalar_constants(&self) -> HashMap<Reg, u64> {
        self.constants
            .iter()
            .filter(|c| c.bits.len() == 1 && !c.undef[0])
            .map(|c| (c.reg, c.bits[0]))
            .collect()
    }

    /// The constant registers holding a variable's pointer, and the pointer.
    fn pointer_constants(&self) -> Vec<(Reg, crate::spirv::memory::Ptr)> {
        self.constants
            .iter()
            .filter(|c| c.bits.len() == 1 && self.var_regs.contains_key(&c.reg))
            .map(|c| (c.reg, crate::spirv::memory::Ptr::from_bits(c.bits[0])))
            .collect()
    }

    fn new(m: &'m Module, opts: &'m DecodeOptions) -> Result<Self, SpirvError> {
        Ok(Decoder {
            m,
            opts,
            ids: HashMap::new(),
            types: Types::default(),
            deco: HashMap::new(),
            mdeco: HashMap::new(),
            names: HashMap::new(),
            regs: HashMap::new(),
            reg_slots: Vec::new(),
            reg_views: Vec::new(),
            constants: Vec::new(),
            objects: Vec::new(),
            plans: Vec::new(),
            plan_ids: HashMap::new(),
            locs: Vec::new(),
            defs: HashMap::new(),
            used: HashSet::new(),
            bases: HashMap::new(),
            ptr_layout: HashMap::new(),
            lane_words: 0,
            descriptor_arrays: HashMap::new(),
            opaque_why: HashMap::new(),
            shared_words: 0,
            lane_units: 0,
            shared_units: 0,
            member_names: HashMap::new(),
            debug_sources: HashMap::new(),
            debug_info_set: None,
            source_texts: HashMap::new(),
            debug_globals: Vec::new(),
            source_lines: HashMap::new(),
            var_regs: HashMap::new(),
            folded_chains: HashMap::new(),
            file: None,
            constructs: HashMap::new(),
            uses_subgroups: false,
            prelude: Vec::new(),
            no_buffer: None,
            carried: Vec::new(),
            insts: m
                .types_global_values
                .iter()
                .chain(m.functions.iter().flat_map(|f| {
                    f.parameters
                        .iter()
                        .chain(f.blocks.iter().flat_map(|b| &b.instructions))
                }))
                .filter_map(|i| i.result_id.map(|r| (r, i)))
                .collect(),
            pending_private: 0,
            private_locs: HashMap::new(),
        })
    }

    fn run(mut self) -> Result<Kernel, SpirvError> {
        self.check_module()?;
        self.debug_info();
        self.annotations()?;
        let (entry_id, entry_name, interface) = self.entry_point()?;
        self.globals()?;
        self.mark_used(entry_id);
        self.check_descriptor_types()?;
        self.alias_workgroup_blocks();
        let mut funcs = self.functions(entry_id)?;
        mark_acyclic(&mut funcs);
        let entry = match self.ids.get(&entry_id) {
            Some(Id::Func(f)) => *f,
            _ => return Err(SpirvError::malformed("the entry point names no function")),
        };
        let (local_size, declared_mode, [denorm_preserve, signed_zero_preserve]) =
            self.execution_modes(entry_id)?;
        self.validate(&funcs, &interface)?;
        let spec_ids = self.spec_ids();
        let storages: Vec<Storage> = self.objects.iter().map(|o| o.storage).collect();
        // Defined scalar constants, by register (a constant index into an array of descriptors).
        let scalars = self.scalar_constants();
        let ptr = crate::spirv::stores::pointer_objects(&funcs, &self.var_regs, |r| {
            scalars.get(&r).copied()
        });
        let buffer_stores = crate::spirv::stores::construct_stores(&funcs, &ptr, &storages, |s| {
            matches!(
                s,
                Storage::StorageBuffer | Storage::Image | Storage::PhysicalStorageBuffer
            )
        });
        let lane_stores = crate::spirv::stores::construct_stores(&funcs, &ptr, &storages, |s| {
            matches!(s, Storage::Function | Storage::Private)
        });
        if !self.opts.keep_loops {
            let ptr_bits: HashMap<Reg, u64> = self
                .pointer_constants()
                .into_iter()
                .map(|(r, p)| (r, p.bits()))
                .collect();
            let function_var: Vec<bool> =
                storages.iter().map(|s| *s == Storage::Function).collect();
            unroll::Unroll {
                consts: scalars.clone(),
                constants: &mut self.constants,
                slots: &mut self.reg_slots,
                made: HashMap::new(),
                var_regs: &self.var_regs,
                ptr_bits: &ptr_bits,
                function_var: &function_var,
                plans: &self.plans,
            }
            .run(&mut funcs);
        }
        if !self.opts.keep_calls {
            inline::inline_calls(&mut funcs);
        }
        if !self.opts.keep_variables {
            // The blocks of a loop unrolled run only through the block as written that enters
            // it, once a path is lost, and only as written: the promotion does not see them (what
            // they read from memory, the block as written before them stored — `unroll.rs`).
            let mut aside: Vec<(usize, usize, Block)> = Vec::new();
            for (fi, f) in funcs.iter_mut().enumerate() {
                let only: Vec<u32> = f
                    .blocks
                    .iter()
                    .filter_map(|b| b.written.as_ref())
                    .flat_map(|w| w.blocks.iter().copied())
                    .collect();
                for b in only {
                    let stub = Block::new(f.blocks[b as usize].label);
                    aside.push((
                        fi,
                        b as usize,
                        std::mem::replace(&mut f.blocks[b as usize], stub),
                    ));
                }
            }
            self.promote(&mut funcs, entry as usize);
            for (fi, b, blk) in aside {
                funcs[fi].blocks[b] = blk;
            }
        }
        let mut member_names = HashMap::new();
        for ((id, m), name) in &self.member_names {
            if let Some(Id::Type(t)) = self.ids.get(id) {
                member_names.insert((*t, *m), name.clone());
            }
        }
        let n_locs = self.locs.len();
        let mut carried_of = vec![u32::MAX; self.objects.len()];
        for (i, c) in self.carried.iter().enumerate() {
            carried_of[c.obj.index()] = i as u32;
        }
        Ok(Kernel {
            name: self.opts.name.clone(),
            entry_name,
            entry,
            local_size,
            declared_mode,
            denorm_preserve,
            signed_zero_preserve,
            types: self.types,
            reg_slots: self.reg_slots,
            reg_views: self.reg_views,
            constants: self.constants,
            objects: self.objects,
            plans: self.plans,
            funcs,
            locs: self.locs,
            lane_words: self.lane_words,
            shared_words: self.shared_words,
            lane_units: self.lane_units,
            shared_units: self.shared_units,
            member_names,
            construct_stores: buffer_stores.constructs,
            construct_lane_stores: lane_stores.constructs,
            func_lane_stores: lane_stores.functions,
            constructs: self.constructs,
            spec_ids,
            uses_subgroups: self.uses_subgroups,
            no_buffer: self.no_buffer,
            carried_of,
            carried: self.carried,
            private: (0..n_locs)
                .map(|k| {
                    self.private_locs
                        .get(&LocId::new(k as u32))
                        .copied()
                        .unwrap_or(0)
                })
                .collect(),
        })
    }

    // ---------------------------------------------------------------- module-level checks

    fn check_module(&self) -> Result<(), SpirvError> {
        if let Some(mm) = &self.m.memory_model
            && let Some(Operand::AddressingModel(a)) = mm.operands.first()
            && !matches!(
                a,
                spirv::AddressingModel::Logical | spirv::AddressingModel::PhysicalStorageBuffer64
            )
        {
            return Err(unsupported(format!(
                "addressing model {a:?} (Vulkan's are Logical and PhysicalStorageBuffer64)"
            )));
        }
        for c in &self.m.capabilities {
            if let Some(Operand::Capability(cap)) = c.operands.first() {
                use spirv::Capability as C;
                if matches!(cap, C::Kernel | C::Addresses | C::Linkage) {
                    return Err(unsupported(format!("capability {cap:?}")));
                }
            }
        }
        for e in &self.m.ext_inst_imports {
            if let Some(Operand::LiteralString(s)) = e.operands.first()
                && s != "GLSL.std.450"
                && !s.starts_with("NonSemantic.")
            {
                return Err(unsupported(format!("extended instruction set \"{s}\"")));
            }
        }
        Ok(())
    }
}

fn scan_of(g: Option<spirv::GroupOperation>) -> Result<Scan, SpirvError> {
    match g {
        Some(spirv::GroupOperation::Reduce) => Ok(Scan::Reduce),
        Some(spirv::GroupOperation::InclusiveScan) => Ok(Scan::Inclusive),
        Some(spirv::GroupOperation::ExclusiveScan) => Ok(Scan::Exclusive),
        other => Err(unsupported(format!("group operation {other:?}"))),
    }
}

/// An instruction family: the decoder file that maps its instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    /// nothing to execute (`OpNop`, an `OpExecutionModeId` read in a function body)
    Nothing,
    /// scalar and vector arithmetic and comparisons, `OpUndef` (`arith.rs`)
    Arith,
    /// composites: copies, extracts, inserts, constructs, shuffles (`composite.rs`)
    Composite,
    /// extended instruction sets: GLSL.std.450, NonSemantic (`ext.rs`)
    Ext,
    /// loads, stores, copies, pointer comparisons, array lengths (`access.rs`)
    Access,
    /// atomics (`sync.rs`)
    Atomic,
    /// barriers (`sync.rs`)
    Barrier,
    /// subgroup instructions, as the model's catalogue names them (`sync.rs`)
    Group,
    /// vector and matrix products, extended integer arithmetic, bit fields (`composite.rs`)
    Matrix,
    /// conversions and bit casts (`arith.rs`)
    Convert,
    /// logical operations, any/all, selection (`arith.rs`)
    Logic,
    /// access chains (`access.rs`)
    Chain,
    /// function calls (`functions.rs`)
    Call,
    /// storage images and texel buffers (`image.rs`)
    Image,
}

/// The family of `op`, for the instructions a function body may hold that the decoder executes
/// (control flow, variables, phis and debug instructions are read by `functions` itself); `None`
/// for the rest — outside what the interpreter supports.
pub(super) fn family(op: SOp) -> Option<Family> {
    Some(match op {
        SOp::Nop | SOp::ExecutionModeId => Family::Nothing,
        SOp::Undef
        | SOp::ReadClockKHR
        | SOp::IAdd
        | SOp::ISub
        | SOp::IMul
        | SOp::UDiv
        | SOp::SDiv
        | SOp::UMod
        | SOp::SRem
        | SOp::SMod
        | SOp::ShiftLeftLogical
        | SOp::ShiftRightLogical
        | SOp::ShiftRightArithmetic
        | SOp::BitwiseAnd
        | SOp::BitwiseOr
        | SOp::BitwiseXor
        | SOp::IEqual
        | SOp::INotEqual
        | SOp::UGreaterThan
        | SOp::SGreaterThan
        | SOp::UGreaterThanEqual
        | SOp::SGreaterThanEqual
        | SOp::ULessThan
        | SOp::SLessThan
        | SOp::ULessThanEqual
        | SOp::SLessThanEqual
        | SOp::SNegate
        | SOp::Not
        | SOp::BitCount
        | SOp::BitReverse
        | SOp::FAdd
        | SOp::FSub
        | SOp::FMul
        | SOp::FDiv
        | SOp::FRem
        | SOp::FMod
        | SOp::FNegate
        | SOp::IsNan
        | SOp::IsInf
        | SOp::FOrdEqual
        | SOp::FUnordEqual
        | SOp::FOrdNotEqual
        | SOp::FUnordNotEqual
        | SOp::FOrdLessThan
        | SOp::FUnordLessThan
        | SOp::FOrdGreaterThan
        | SOp::FUnordGreaterThan
        | SOp::FOrdLessThanEqual
        | SOp::FUnordLessThanEqual
        | SOp::FOrdGreaterThanEqual
        | SOp::FUnordGreaterThanEqual => Family::Arith,
        SOp::CopyObject
        | SOp::CopyLogical
        | SOp::CompositeExtract
        | SOp::CompositeInsert
        | SOp::CompositeConstruct
        | SOp::VectorShuffle
        | SOp::VectorExtractDynamic
        | SOp::VectorInsertDynamic => Family::Composite,
        SOp::VectorTimesScalar
        | SOp::MatrixTimesScalar
        | SOp::MatrixTimesVector
        | SOp::VectorTimesMatrix
        | SOp::MatrixTimesMatrix
        | SOp::OuterProduct
        | SOp::Transpose
        | SOp::Dot
        | SOp::IAddCarry
        | SOp::ISubBorrow
        | SOp::UMulExtended
        | SOp::SMulExtended
        | SOp::BitFieldInsert
        | SOp::BitFieldSExtract
        | SOp::BitFieldUExtract
        | SOp::SDot
        | SOp::UDot
        | SOp::SUDot
        | SOp::SDotAccSat
        | SOp::UDotAccSat
        | SOp::SUDotAccSat => Family::Matrix,
        SOp::ConvertFToU
        | SOp::ConvertFToS
        | SOp::ConvertSToF
        | SOp::ConvertUToF
        | SOp::UConvert
        | SOp::SConvert
        | SOp::FConvert
        | SOp::QuantizeToF16
        | SOp::Bitcast
        | SOp::ConvertUToPtr
        | SOp::ConvertPtrToU => Family::Convert,
        SOp::LogicalAnd
        | SOp::LogicalOr
        | SOp::LogicalEqual
        | SOp::LogicalNotEqual
        | SOp::LogicalNot
        | SOp::Any
        | SOp::All
        | SOp::Select => Family::Logic,
        SOp::AccessChain
        | SOp::InBoundsAccessChain
        | SOp::PtrAccessChain
        | SOp::InBoundsPtrAccessChain => Family::Chain,
        SOp::ExtInst => Family::Ext,
        SOp::Load
        | SOp::Store
        | SOp::CopyMemory
        | SOp::PtrEqual
        | SOp::PtrNotEqual
        | SOp::PtrDiff
        | SOp::ArrayLength => Family::Access,
        SOp::AtomicLoad
        | SOp::AtomicStore
        | SOp::AtomicExchange
        | SOp::AtomicCompareExchange
        | SOp::AtomicIIncrement
        | SOp::AtomicIDecrement
        | SOp::AtomicIAdd
        | SOp::AtomicISub
        | SOp::AtomicSMin
        | SOp::AtomicUMin
        | SOp::AtomicSMax
        | SOp::AtomicUMax
        | SOp::AtomicAnd
        | SOp::AtomicOr
        | SOp::AtomicXor
        | SOp::AtomicFAddEXT
        | SOp::AtomicFMinEXT
        | SOp::AtomicFMaxEXT => Family::Atomic,
        SOp::ControlBarrier | SOp::MemoryBarrier => Family::Barrier,
        SOp::FunctionCall => Family::Call,
        SOp::Image
        | SOp::ImageRead
        | SOp::ImageFetch
        | SOp::ImageWrite
        | SOp::ImageQuerySize
        | SOp::ImageQuerySamples
        | SOp::ImageQuerySizeLod
        | SOp::ImageQueryLevels
        | SOp::SampledImage
        | SOp::ImageSampleExplicitLod
        | SOp::ImageSampleImplicitLod
        | SOp::ImageTexelPointer => Family::Image,
        o if is_group_op(o) => Family::Group,
        _ => return None,
    })
}

/// A family function handed an instruction the router did not send it: a bug in [`family`].
pub(super) fn misrouted(op: SOp, to: &str) -> SpirvError {
    SpirvError::malformed(format!(
        "internal: the router sent {} to the {to} family, which does not map it",
        op_name(op)
    ))
}

/// A subgroup instruction the model's catalogue names.
fn is_group_op(o: SOp) -> bool {
    sync::group_ops().contains_key(&o)
}

fn id_at(i: &Instruction, k: usize) -> Result<u32, SpirvError> {
    match i.operands.get(k) {
        Some(Operand::IdRef(x))
        | Some(Operand::IdScope(x))
        | Some(Operand::IdMemorySemantics(x)) => Ok(*x),
        _ => Err(SpirvError::malformed(format!(
            "{} operand {k} is not an id",
            op_name(i.class.opcode)
        ))),
    }
}

fn lits_from(i: &Instruction, k: usize) -> Vec<u32> {
    crate::words::facts::operands_from(i, k).1
}

/// For each header: whether its construct can be left other than through its merge (`escapes`),
/// and for loops the registers its blocks define (`loop_defs`).
///
/// The walk goes from the header without passing its merge. Leaving the construct another way
/// (a break or continue of an enclosing construct) leads on to code that ends in a return, so a
/// walk that reaches a function exit escapes; structured rules let a loop be left only through
/// its merge or a return, so the blocks a loop's walk reaches are its construct.
fn construct_extents(blocks: &mut [Block]) {
    // A block is seen in the walk from header `h` when it holds `h + 1` (one array for all).
    let mut seen = vec![0usize; blocks.len()];
    for h in 0..blocks.len() {
        let merge = match blocks[h].merge {
            Merge::Selection(m) => m,
            Merge::Loop { merge, .. } => merge,
            Merge::None => continue,
        };
        let stamp = h + 1;
        let mut stack = vec![h as BlockIdx];
        seen[h] = stamp;
        let mut escapes = false;
        let mut defs = Vec::new();
        while let Some(b) = stack.pop() {
            let blk = &blocks[b as usize];
            defs.extend_from_slice(&blk.defs);
            if matches!(
                blk.term,
                Term::Return | Term::ReturnValue(_) | Term::Unreachable
            ) {
                escapes = true;
            }
            for s in blk.term.successors() {
                if s != merge && seen[s as usize] != stamp {
                    seen[s as usize] = stamp;
                    stack.push(s);
                }
            }
        }
        blocks[h].escapes = escapes;
        if matches!(blocks[h].merge, Merge::Loop { .. }) {
            defs.sort_unstable();
            defs.dedup();
            blocks[h].loop_defs = defs;
        }
    }
}

/// Marks each header whose construct holds no loop and calls no function that holds one, its
/// callees' included (`Block::acyclic`): every way through it ends. Callees before callers (the
/// decoder refused recursion); structured control flow has no cycle but a loop's.
fn mark_acyclic(funcs: &mut [Func]) {
    let (order, _) = calls_post_order(funcs, 0..funcs.len());
    let mut loops = vec![false; funcs.len()];
    for f in order {
        let cycles = |b: &Block| {
            matches!(b.merge, Merge::Loop { .. })
                || b.insts
                    .iter()
                    .any(|i| matches!(i, Inst::Call { f, .. } if loops[*f as usize]))
        };
        let blocks = &funcs[f].blocks;
        let cyclic: Vec<bool> = blocks.iter().map(cycles).collect();
        loops[f] = cyclic.iter().any(|c| *c);
        let mut seen = vec![usize::MAX; blocks.len()];
        let mut acyclic = vec![false; blocks.len()];
        for h in 0..blocks.len() {
            let merge = match blocks[h].merge {
                Merge::Selection(m) => m,
                Merge::Loop { .. } => continue,
                Merge::None => continue,
            };
            let mut stack = vec![h as BlockIdx];
            seen[h] = h;
            let mut ok = true;
            while let Some(b) = stack.pop() {
                ok &= !cyclic[b as usize];
                for s in blocks[b as usize].term.successors() {
                    if s != merge && seen[s as usize] != h {
                        seen[s as usize] = h;
                        stack.push(s);
                    }
                }
            }
            acyclic[h] = ok;
        }
        for (b, a) in funcs[f].blocks.iter_mut().zip(acyclic) {
            b.acyclic = a;
        }
    }
}

/// A member's decorations with their literal operands.
type Decorations = Vec<(Decoration, Vec<u32>)>;

fn storage_of(sc: StorageClass, buffer_block: bool) -> Option<Storage> {
    Some(match sc {
        StorageClass::Function => Storage::Function,
        StorageClass::Private => Storage::Private,
        StorageClass::Input => Storage::Input,
        StorageClass::Workgroup => Storage::Workgroup,
        StorageClass::StorageBuffer => Storage::StorageBuffer,
        StorageClass::Uniform if buffer_block => Storage::StorageBuffer,
        StorageClass::Uniform => Storage::Uniform,
        StorageClass::PushConstant => Storage::PushConstant,
        StorageClass::UniformConstant | StorageClass::Image => Storage::Image,
        StorageClass::PhysicalStorageBuffer => Storage::PhysicalStorageBuffer,
        _ => return None,
    })
}

fn type_spirv_id(d: &Decoder<'_>, t: TypeId) -> u32 {
    d.ids
        .iter()
        .find_map(|(id, v)| matches!(v, Id::Type(x) if *x == t).then_some(*id))
        .unwrap_or(0)
}

fn check_recursion(funcs: &[Func]) -> Result<(), SpirvError> {
    // Vulkan forbids recursion; a cycle in the call graph is malformed input, caught before running.
    match calls_post_order(funcs, 0..funcs.len()) {
        (_, Some((k, c))) => Err(SpirvError::malformed(format!(
            "recursion: {} calls {} again (Vulkan forbids recursion)",
            funcs[k].name, funcs[c].name
        ))),
        (_, None) => Ok(()),
    }
}

impl Decoder<'_> {
    /// The line where the statement holding `line` of `file` starts, from the module's embedded
    /// source text (`line` itself where there is none).
    fn statement_line(&mut self, file: Option<&str>, line: u32) -> u32 {
        let Some(file) = file else {
            return line;
        };
        if !self.source_lines.contains_key(file) {
            let text = self
                .source_texts
                .iter()
                .find(|(id, _)| matches!(self.ids.get(id), Some(Id::Str(s)) if s == file))
                .map(|(_, t)| t.lines().map(String::from).collect())
                .unwrap_or_default();
            self.source_lines.insert(file.to_string(), text);
        }
        statement_start(&self.source_lines[file], line)
    }
}

/// The first line (1-based) of the statement that `line` belongs to: while the line before ends
/// with something that cannot end a statement — an operator, an opening bracket, a comma, `=` —
/// the statement began on it. A line ending in `;`, `{`, `}` or `)`, a blank line, a comment-only
/// line or a preprocessor line ends the one before. `line` itself when it is past the text.
///
/// (Tested below: `statement_tests`.)
pub(crate) fn statement_start(lines: &[String], line: u32) -> u32 {
    let code = |k: usize| -> &str {
        let l = lines[k].split("//").next().unwrap_or("").trim();
        if l.starts_with('#') {
            ""
        } else {
            l
        }
    };
    let mut start = line as usize;
    if start == 0 || start > lines.len() {
        return line;
    }
    while start > 1 {
        let prev = code(start - 2);
        let continues = prev
            .chars()
            .last()
            .is_some_and(|c| "(,[=+-*/%&|^<>?:!~".contains(c));
        if !continues {
            break;
        }
        start -= 1;
    }
    start as u32
}

#[cfg(test)]
mod statement_tests {
    use super::statement_start;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    #[test]
    fn a_statement_over_several_lines_starts_where_its_first_line_is() {
        let src = lines("x = 1;\npair[i] = uvec2(\n    a,\n    b);\nif (c)\n  y = 2;\nuint v =\n  t[j]; // c\n#define A\nz = 3;");
        assert_eq!(statement_start(&src, 1), 1);
        assert_eq!(statement_start(&src, 4), 2);
        assert_eq!(statement_start(&src, 3), 2);
        // `if (c)` ends with `)`: the line after it is a statement of its own.
        assert_eq!(statement_start(&src, 6), 6);
        assert_eq!(statement_start(&src, 8), 7);
        // A preprocessor line ends what was before it.
        assert_eq!(statement_start(&src, 10), 10);
        // Past the text (or no text): the line itself.
        assert_eq!(statement_start(&src, 40), 40);
        assert_eq!(statement_start(&[], 7), 7);
    }
}
