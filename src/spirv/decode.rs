//! SPIR-V words → a [`Kernel`]: parse with rspirv, resolve types, layouts, constants and
//! specialization constants, allocate registers and memory, and turn every instruction of the
//! supported subset into an [`Inst`]. Anything outside the subset is an error naming the instruction
//! and its source line — never a silently wrong result.

use crate::model::{info, BinOp, MaskKind, Op, QuadDir, ScalarType, Scan, Value, ValueType};
use crate::reconverge::Mode;
use crate::spirv::error::{Location, SpirvError};
use crate::spirv::inst::*;
use crate::spirv::scalar;
use crate::spirv::types::{ElementOf, MatrixLayout, Scalar, Storage, Type, TypeId, Types};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{self, BuiltIn, Decoration, ExecutionMode, Op as SOp, StorageClass};
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
}

/// Decodes a module for one entry point.
pub fn decode(words: &[u32], opts: &DecodeOptions) -> Result<Kernel, SpirvError> {
    let r = crate::words::read(words).map_err(|e| SpirvError::malformed(e.0))?;
    let mut d = Decoder::new(&r.module, opts)?;
    d.debug_sources = r.debug_sources;
    d.debug_info_set = r.debug_info_set;
    d.source_texts = r.source_texts;
    d.run()
}

/// A constant's value during decoding: its type and flattened slot bits.
#[derive(Clone, Debug, PartialEq)]
struct ConstVal {
    ty: TypeId,
    bits: Vec<u64>,
    /// per slot: `OpUndef` (one undefined member does not make the rest of a composite undefined)
    undef: Vec<bool>,
}

impl ConstVal {
    /// A defined constant.
    fn defined(ty: TypeId, bits: Vec<u64>) -> ConstVal {
        let undef = vec![false; bits.len()];
        ConstVal { ty, bits, undef }
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
    constants: Vec<Constant>,
    objects: Vec<Object>,
    plans: Vec<Plan>,
    plan_ids: HashMap<(TypeId, MatrixLayout), PlanId>,
    locs: Vec<Location>,
    /// result id → (result type, opcode), over every function
    defs: HashMap<u32, (u32, SOp)>,
    /// pointer result id → matrix layout context of its pointee
    ptr_layout: HashMap<u32, MatrixLayout>,
    lane_words: u32,
    /// variables that are arrays of descriptors: their element count (their objects are
    /// consecutive)
    descriptor_arrays: HashMap<u32, u32>,
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
    /// the source text's lines by file name (filled as stores ask)
    source_lines: HashMap<String, Vec<String>>,
    /// registers holding a variable's pointer, and the variable
    var_regs: HashMap<Reg, ObjectId>,
    file: Option<String>,
    constructs: HashMap<u32, LocId>,
    uses_subgroups: bool,
}

fn op_name(op: SOp) -> String {
    format!("Op{op:?}")
}

fn unsupported(what: impl Into<String>) -> SpirvError {
    SpirvError::unsupported(what)
}

/// Refuses an instruction that reads its own result (SSA: a value is defined before it is used).
macro_rules! check_ssa {
    ($d:expr, $($a:expr),*) => {
        $( if $d == $a { return Err(SpirvError::malformed("an instruction uses its own result")); } )*
    };
}

impl<'m> Decoder<'m> {
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
            constants: Vec::new(),
            objects: Vec::new(),
            plans: Vec::new(),
            plan_ids: HashMap::new(),
            locs: Vec::new(),
            defs: HashMap::new(),
            ptr_layout: HashMap::new(),
            lane_words: 0,
            descriptor_arrays: HashMap::new(),
            shared_words: 0,
            lane_units: 0,
            shared_units: 0,
            member_names: HashMap::new(),
            debug_sources: HashMap::new(),
            debug_info_set: None,
            source_texts: HashMap::new(),
            source_lines: HashMap::new(),
            var_regs: HashMap::new(),
            file: None,
            constructs: HashMap::new(),
            uses_subgroups: false,
        })
    }

    fn run(mut self) -> Result<Kernel, SpirvError> {
        self.check_module()?;
        self.debug_info();
        self.annotations()?;
        let (entry_id, entry_name, interface) = self.entry_point()?;
        self.globals()?;
        self.alias_workgroup_blocks();
        let funcs = self.functions(entry_id)?;
        let entry = match self.ids.get(&entry_id) {
            Some(Id::Func(f)) => *f,
            _ => return Err(SpirvError::malformed("the entry point names no function")),
        };
        let (local_size, declared_mode, denorm_preserve) = self.execution_modes(entry_id)?;
        for obj in &interface {
            if let Some(Id::Var(o)) = self.ids.get(obj) {
                let o = &self.objects[o.index()];
                if o.storage == Storage::Input && o.builtin.is_none() {
                    return Err(unsupported(format!(
                        "input variable {} without a BuiltIn decoration (compute shaders have only built-in inputs)",
                        o.name
                    )));
                }
            }
        }
        check_recursion(&funcs)?;
        let spec_ids = self.spec_ids();
        let storages: Vec<Storage> = self.objects.iter().map(|o| o.storage).collect();
        let construct_stores =
            crate::spirv::stores::construct_stores(&funcs, &self.var_regs, &storages);
        let mut member_names = HashMap::new();
        for ((id, m), name) in &self.member_names {
            if let Some(Id::Type(t)) = self.ids.get(id) {
                member_names.insert((*t, *m), name.clone());
            }
        }
        Ok(Kernel {
            name: self.opts.name.clone(),
            entry_name,
            entry,
            local_size,
            declared_mode,
            denorm_preserve,
            types: self.types,
            reg_slots: self.reg_slots,
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
            construct_stores,
            constructs: self.constructs,
            spec_ids,
            uses_subgroups: self.uses_subgroups,
        })
    }

    // ---------------------------------------------------------------- module-level checks

    fn check_module(&self) -> Result<(), SpirvError> {
        if let Some(mm) = &self.m.memory_model {
            if let Some(Operand::AddressingModel(a)) = mm.operands.first() {
                if *a != spirv::AddressingModel::Logical {
                    return Err(unsupported(format!(
                        "addressing model {a:?} (only Logical: physical pointers are not interpreted)"
                    )));
                }
            }
        }
        for c in &self.m.capabilities {
            if let Some(Operand::Capability(cap)) = c.operands.first() {
                use spirv::Capability as C;
                if matches!(
                    cap,
                    C::Kernel | C::Addresses | C::Linkage | C::PhysicalStorageBufferAddresses
                ) {
                    return Err(unsupported(format!("capability {cap:?}")));
                }
            }
        }
        for e in &self.m.ext_inst_imports {
            if let Some(Operand::LiteralString(s)) = e.operands.first() {
                if s != "GLSL.std.450" && !s.starts_with("NonSemantic.") {
                    return Err(unsupported(format!("extended instruction set \"{s}\"")));
                }
            }
        }
        Ok(())
    }

    fn debug_info(&mut self) {
        for i in &self.m.debug_string_source {
            match i.class.opcode {
                SOp::String => {
                    if let (Some(id), Some(Operand::LiteralString(s))) =
                        (i.result_id, i.operands.first())
                    {
                        self.ids.insert(id, Id::Str(s.clone()));
                    }
                }
                SOp::Source => {
                    if let Some(Operand::IdRef(f)) = i.operands.get(2) {
                        if let Some(Id::Str(s)) = self.ids.get(f) {
                            self.file.get_or_insert(s.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        for i in &self.m.debug_names {
            if i.class.opcode == SOp::MemberName {
                if let (
                    Some(Operand::IdRef(id)),
                    Some(Operand::LiteralBit32(m)),
                    Some(Operand::LiteralString(s)),
                ) = (i.operands.first(), i.operands.get(1), i.operands.get(2))
                {
                    if !s.is_empty() {
                        self.member_names.insert((*id, *m), s.clone());
                    }
                }
            }
            if i.class.opcode == SOp::Name {
                if let (Some(Operand::IdRef(id)), Some(Operand::LiteralString(s))) =
                    (i.operands.first(), i.operands.get(1))
                {
                    if !s.is_empty() {
                        self.names.insert(*id, s.clone());
                    }
                }
            }
        }
        for e in &self.m.ext_inst_imports {
            if let (Some(id), Some(Operand::LiteralString(s))) = (e.result_id, e.operands.first()) {
                let v = if s == "GLSL.std.450" {
                    Id::Glsl
                } else {
                    Id::NonSemantic
                };
                self.ids.insert(id, v);
            }
        }
    }

    fn annotations(&mut self) -> Result<(), SpirvError> {
        for a in &self.m.annotations {
            let lits = |from: usize| -> Vec<u32> {
                a.operands[from..]
                    .iter()
                    .filter_map(|o| match o {
                        Operand::LiteralBit32(x) => Some(*x),
                        Operand::BuiltIn(b) => Some(*b as u32),
                        Operand::IdRef(x) => Some(*x),
                        _ => None,
                    })
                    .collect()
            };
            match a.class.opcode {
                SOp::Decorate | SOp::DecorateId => {
                    if let (Some(Operand::IdRef(t)), Some(Operand::Decoration(d))) =
                        (a.operands.first(), a.operands.get(1))
                    {
                        self.deco.entry(*t).or_default().push((*d, lits(2)));
                    }
                }
                SOp::MemberDecorate => {
                    if let (
                        Some(Operand::IdRef(t)),
                        Some(Operand::LiteralBit32(mem)),
                        Some(Operand::Decoration(d)),
                    ) = (a.operands.first(), a.operands.get(1), a.operands.get(2))
                    {
                        self.mdeco
                            .entry((*t, *mem))
                            .or_default()
                            .push((*d, lits(3)));
                    }
                }
                SOp::DecorationGroup | SOp::GroupDecorate | SOp::GroupMemberDecorate => {
                    return Err(unsupported("decoration groups (OpDecorationGroup)"))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn has_deco(&self, id: u32, d: Decoration) -> bool {
        self.deco
            .get(&id)
            .is_some_and(|v| v.iter().any(|(x, _)| *x == d))
    }

    fn deco_lit(&self, id: u32, d: Decoration) -> Option<u32> {
        self.deco
            .get(&id)?
            .iter()
            .find(|(x, _)| *x == d)
            .and_then(|(_, l)| l.first().copied())
    }

    fn mdeco_lit(&self, id: u32, m: u32, d: Decoration) -> Option<u32> {
        self.mdeco
            .get(&(id, m))?
            .iter()
            .find(|(x, _)| *x == d)
            .and_then(|(_, l)| l.first().copied())
    }

    fn mhas(&self, id: u32, m: u32, d: Decoration) -> bool {
        self.mdeco
            .get(&(id, m))
            .is_some_and(|v| v.iter().any(|(x, _)| *x == d))
    }

    fn entry_point(&self) -> Result<(u32, String, Vec<u32>), SpirvError> {
        let mut computes = Vec::new();
        for e in &self.m.entry_points {
            let model = match e.operands.first() {
                Some(Operand::ExecutionModel(m)) => *m,
                _ => continue,
            };
            let (Some(Operand::IdRef(f)), Some(Operand::LiteralString(name))) =
                (e.operands.get(1), e.operands.get(2))
            else {
                continue;
            };
            let iface: Vec<u32> = e.operands[3..]
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(x) => Some(*x),
                    _ => None,
                })
                .collect();
            computes.push((model, *f, name.clone(), iface));
        }
        let wanted = self.opts.entry.as_deref();
        let pick = match wanted {
            Some(n) => computes.iter().find(|c| c.2 == n),
            None => {
                let gl: Vec<_> = computes
                    .iter()
                    .filter(|c| c.0 == spirv::ExecutionModel::GLCompute)
                    .collect();
                if gl.len() == 1 {
                    Some(gl[0])
                } else {
                    gl.into_iter().find(|c| c.2 == "main")
                }
            }
        };
        let Some((model, f, name, iface)) = pick else {
            let names: Vec<String> = computes
                .iter()
                .map(|c| format!("{} ({:?})", c.2, c.0))
                .collect();
            return Err(SpirvError::Setup(match wanted {
                Some(n) => format!(
                    "no entry point named '{n}' (the module has: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
                None => {
                    format!(
                    "no compute entry point to pick (the module has: {}); name one with --entry",
                    if names.is_empty() { "none".into() } else { names.join(", ") }
                )
                }
            }));
        };
        if *model != spirv::ExecutionModel::GLCompute {
            return Err(SpirvError::Setup(format!(
                "entry point '{name}' is a {model:?} shader: lockstep runs compute shaders (GLCompute) only"
            )));
        }
        Ok((*f, name.clone(), iface.clone()))
    }

    fn execution_modes(&self, entry: u32) -> Result<([u32; 3], Mode, [bool; 3]), SpirvError> {
        let mut size = None;
        let mut mode = Mode::Base;
        let mut denorm = [false; 3];
        for em in &self.m.execution_modes {
            let on_entry = matches!(em.operands.first(), Some(Operand::IdRef(f)) if *f == entry);
            if !on_entry {
                continue;
            }
            let Some(Operand::ExecutionMode(m)) = em.operands.get(1) else {
                continue;
            };
            let lits: Vec<u32> = em.operands[2..]
                .iter()
                .filter_map(|o| match o {
                    Operand::LiteralBit32(x) | Operand::IdRef(x) => Some(*x),
                    _ => None,
                })
                .collect();
            match m {
                ExecutionMode::LocalSize if lits.len() == 3 => {
                    size = Some([lits[0], lits[1], lits[2]])
                }
                ExecutionMode::LocalSizeId if lits.len() == 3 => {
                    let mut s = [0u32; 3];
                    for (k, id) in lits.iter().enumerate() {
                        s[k] = self.const_u32(*id)?;
                    }
                    size = Some(s);
                }
                ExecutionMode::MaximallyReconvergesKHR => mode = Mode::Maximal,
                ExecutionMode::SubgroupUniformControlFlowKHR if mode != Mode::Maximal => {
                    mode = Mode::Sucf
                }
                ExecutionMode::RoundingModeRTZ => {
                    return Err(unsupported(format!(
                        "execution mode RoundingModeRTZ {}: the model rounds to nearest even",
                        lits.first().copied().unwrap_or(0)
                    )))
                }
                ExecutionMode::DenormPreserve => {
                    if let Some(w) = lits.first() {
                        match w {
                            16 => denorm[0] = true,
                            32 => denorm[1] = true,
                            64 => denorm[2] = true,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        // A constant decorated WorkgroupSize overrides the execution mode (SPIR-V, BuiltIn).
        for (id, v) in &self.ids {
            if let Id::Const(c) = v {
                if self.deco.get(id).is_some_and(|d| {
                    d.iter().any(|(x, l)| {
                        *x == Decoration::BuiltIn
                            && l.first() == Some(&(BuiltIn::WorkgroupSize as u32))
                    })
                }) && c.bits.len() == 3
                {
                    size = Some([c.bits[0] as u32, c.bits[1] as u32, c.bits[2] as u32]);
                }
            }
        }
        let size = size.ok_or_else(|| {
            SpirvError::malformed("the entry point has no LocalSize, LocalSizeId or WorkgroupSize")
        })?;
        if size.contains(&0) || size.iter().map(|&s| s as u128).product::<u128>() > 1 << 16 {
            return Err(SpirvError::Setup(format!(
                "workgroup size {}x{}x{}: every dimension ≥ 1 and at most 65536 invocations",
                size[0], size[1], size[2]
            )));
        }
        Ok((size, mode, denorm))
    }

    fn spec_ids(&self) -> Vec<(u32, String)> {
        let mut v = Vec::new();
        for i in &self.m.types_global_values {
            if matches!(
                i.class.opcode,
                SOp::SpecConstant | SOp::SpecConstantTrue | SOp::SpecConstantFalse
            ) {
                if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                    if let Some(sid) = self.deco_lit(id, Decoration::SpecId) {
                        let tn = match self.ids.get(&t) {
                            Some(Id::Type(t)) => match self.types.get(*t) {
                                Type::Scalar(s) => s.name(),
                                _ => "?".into(),
                            },
                            _ => "?".into(),
                        };
                        v.push((sid, tn));
                    }
                }
            }
        }
        v.sort();
        v
    }

    // ---------------------------------------------------------------- types and constants

    fn ty(&self, id: u32) -> Result<TypeId, SpirvError> {
        match self.ids.get(&id) {
            Some(Id::Type(t)) => Ok(*t),
            _ => Err(SpirvError::malformed(format!("%{id} is not a type"))),
        }
    }

    fn add_type(&mut self, id: u32, t: Type) -> TypeId {
        let tid = self.types.list.len() as TypeId;
        self.types.list.push(t);
        self.ids.insert(id, Id::Type(tid));
        tid
    }

    fn konst(&self, id: u32) -> Result<&ConstVal, SpirvError> {
        match self.ids.get(&id) {
            Some(Id::Const(c)) => Ok(c),
            _ => Err(SpirvError::malformed(format!("%{id} is not a constant"))),
        }
    }

    fn const_u32(&self, id: u32) -> Result<u32, SpirvError> {
        let c = self.konst(id)?;
        if c.any_undef() || c.bits.len() != 1 {
            return Err(SpirvError::malformed(format!(
                "%{id} is not a defined scalar constant"
            )));
        }
        Ok(c.bits[0] as u32)
    }

    fn new_reg(&mut self, slots: u32) -> Reg {
        self.reg_slots.push(slots);
        Reg::new((self.reg_slots.len() - 1) as u32)
    }

    fn const_reg(&mut self, c: &ConstVal) -> Reg {
        let r = self.new_reg(c.bits.len() as u32);
        self.constants.push(Constant {
            reg: r,
            bits: c.bits.clone().into_boxed_slice(),
            undef: c.undef.clone().into_boxed_slice(),
        });
        r
    }

    fn scalar_of(&self, t: TypeId) -> Result<Scalar, SpirvError> {
        match self.types.get(t) {
            Type::Scalar(s) => Ok(*s),
            Type::Vector { elem, .. } => Ok(*elem),
            other => Err(SpirvError::malformed(format!(
                "expected a scalar or vector type, found {other:?}"
            ))),
        }
    }

    /// SPV_KHR_workgroup_memory_explicit_layout: the Workgroup variables decorated Block (with
    /// WorkgroupMemoryExplicitLayoutKHR) alias each other — one region at the start of shared
    /// memory, as large as the largest, its definedness kept per unit of the smallest scalar any
    /// of them holds. A store through one is a store to what the others read.
    fn alias_workgroup_blocks(&mut self) {
        let explicit = self.m.capabilities.iter().any(|c| {
            matches!(
                c.operands.first(),
                Some(Operand::Capability(
                    spirv::Capability::WorkgroupMemoryExplicitLayoutKHR
                ))
            )
        });
        if !explicit {
            return;
        }
        let blocks: Vec<usize> = (0..self.objects.len())
            .filter(|&i| {
                let o = &self.objects[i];
                o.storage == Storage::Workgroup && self.has_deco_type(o.ty, Decoration::Block)
            })
            .collect();
        if blocks.len() < 2 {
            return;
        }
        let words = blocks
            .iter()
            .map(|&i| self.objects[i].words)
            .max()
            .unwrap_or(0);
        let unit = blocks
            .iter()
            .map(|&i| self.objects[i].unit)
            .min()
            .unwrap_or(4);
        // Every other Workgroup variable moves up behind the region.
        let (mut next_word, mut next_unit) = (words, words * 4 / unit);
        for (i, o) in self.objects.iter_mut().enumerate() {
            if o.storage != Storage::Workgroup || blocks.contains(&i) {
                continue;
            }
            o.base = next_word;
            o.tbase = next_unit;
            next_word += o.words;
            next_unit += o.words * 4 / o.unit;
        }
        for &i in &blocks {
            let o = &mut self.objects[i];
            o.base = 0;
            o.tbase = 0;
            o.words = words;
            o.unit = unit;
        }
        self.shared_words = next_word;
        self.shared_units = next_unit;
    }

    fn globals(&mut self) -> Result<(), SpirvError> {
        let insts = &self.m.types_global_values;
        for i in insts {
            let op = i.class.opcode;
            let loc = self.loc_for(i);
            self.global(i).map_err(|e| e.at(&self.locs[loc.index()]))?;
            let _ = op;
        }
        Ok(())
    }

    fn loc_for(&mut self, i: &Instruction) -> LocId {
        self.locs.push(Location {
            file: self.file.clone(),
            line: None,
            op: op_name(i.class.opcode),
            id: i.result_id,
        });
        LocId::new((self.locs.len() - 1) as u32)
    }

    fn global(&mut self, i: &Instruction) -> Result<(), SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let idop = |k: usize| -> Result<u32, SpirvError> {
            match i.operands.get(k) {
                Some(Operand::IdRef(x)) => Ok(*x),
                _ => Err(SpirvError::malformed(format!(
                    "{} operand {k}",
                    op_name(op)
                ))),
            }
        };
        let lit = |k: usize| -> Result<u32, SpirvError> {
            match i.operands.get(k) {
                Some(Operand::LiteralBit32(x)) => Ok(*x),
                _ => Err(SpirvError::malformed(format!(
                    "{} operand {k}",
                    op_name(op)
                ))),
            }
        };
        match op {
            SOp::Line | SOp::NoLine | SOp::Nop => {}
            SOp::TypeVoid => {
                self.add_type(rid, Type::Void);
            }
            SOp::TypeBool => {
                self.add_type(rid, Type::Scalar(Scalar::Bool));
            }
            SOp::TypeInt => {
                let w = lit(0)?;
                if ![8, 16, 32, 64].contains(&w) {
                    return Err(unsupported(format!("{w}-bit integers")));
                }
                self.add_type(
                    rid,
                    Type::Scalar(Scalar::Int {
                        width: w as u8,
                        signed: lit(1)? != 0,
                    }),
                );
            }
            SOp::TypeFloat => {
                let w = lit(0)?;
                if ![16, 32, 64].contains(&w) || i.operands.len() > 1 {
                    return Err(unsupported(format!("{w}-bit floats of this encoding")));
                }
                self.add_type(rid, Type::Scalar(Scalar::Float { width: w as u8 }));
            }
            SOp::TypeVector => {
                let e = self.ty(idop(0)?)?;
                let elem = match self.types.get(e) {
                    Type::Scalar(s) => *s,
                    _ => return Err(SpirvError::malformed("vector of a non-scalar")),
                };
                let n = lit(1)?;
                if !(2..=16).contains(&n) {
                    return Err(SpirvError::malformed(format!("vector of {n} components")));
                }
                self.add_type(rid, Type::Vector { elem, n });
            }
            SOp::TypeMatrix => {
                let col = self.ty(idop(0)?)?;
                if !matches!(self.types.get(col), Type::Vector { .. }) {
                    return Err(SpirvError::malformed("matrix columns must be vectors"));
                }
                self.add_type(
                    rid,
                    Type::Matrix {
                        col,
                        cols: lit(1)?.clamp(1, 16),
                    },
                );
            }
            SOp::TypeArray => {
                let elem = self.ty(idop(0)?)?;
                let len = self.const_u32(idop(1)?)?;
                if len == 0 {
                    return Err(SpirvError::malformed("array of length 0"));
                }
                let stride = self.deco_lit(rid, Decoration::ArrayStride);
                self.add_type(rid, Type::Array { elem, len, stride });
            }
            SOp::TypeRuntimeArray => {
                let elem = self.ty(idop(0)?)?;
                let stride = self.deco_lit(rid, Decoration::ArrayStride);
                self.add_type(rid, Type::RuntimeArray { elem, stride });
            }
            SOp::TypeStruct => {
                let mut members = Vec::new();
                for k in 0..i.operands.len() {
                    members.push(self.ty(idop(k)?)?);
                }
                let n = members.len() as u32;
                let offsets = (0..n)
                    .map(|m| self.mdeco_lit(rid, m, Decoration::Offset))
                    .collect();
                let matrix_stride = (0..n)
                    .map(|m| self.mdeco_lit(rid, m, Decoration::MatrixStride))
                    .collect();
                let row_major = (0..n)
                    .map(|m| self.mhas(rid, m, Decoration::RowMajor))
                    .collect();
                self.add_type(
                    rid,
                    Type::Struct {
                        members,
                        offsets,
                        matrix_stride,
                        row_major,
                    },
                );
            }
            SOp::TypePointer => {
                let sc = match i.operands.first() {
                    Some(Operand::StorageClass(s)) => *s,
                    _ => {
                        return Err(SpirvError::malformed(
                            "OpTypePointer without a storage class",
                        ))
                    }
                };
                let pointee = self.ty(idop(1)?)?;
                // A pointer type may name a storage class we do not run; only variables of it fail.
                let storage = storage_of(sc, false).unwrap_or(Storage::Function);
                self.add_type(rid, Type::Pointer { storage, pointee });
            }
            SOp::TypeFunction => {
                self.add_type(rid, Type::Function);
            }
            SOp::TypeImage
            | SOp::TypeSampler
            | SOp::TypeSampledImage
            | SOp::TypeForwardPointer
            | SOp::TypeAccelerationStructureKHR => {
                // Declaring these is harmless; a variable or value of them is not (see below).
                self.add_type(rid, Type::Function);
                self.names.entry(rid).or_insert_with(|| format!("{op:?}"));
            }
            SOp::Constant | SOp::SpecConstant => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let s = match self.types.get(t) {
                    Type::Scalar(s) => *s,
                    _ => {
                        return Err(SpirvError::malformed(
                            "a scalar constant of a non-scalar type",
                        ))
                    }
                };
                let mut bits = match (i.operands.first(), i.operands.get(1)) {
                    (Some(Operand::LiteralBit32(x)), _) => *x as u64,
                    (Some(Operand::LiteralBit64(x)), _) => *x,
                    _ => return Err(SpirvError::malformed("a constant without a literal")),
                };
                if let (Some(Operand::LiteralBit32(lo)), Some(Operand::LiteralBit32(hi))) =
                    (i.operands.first(), i.operands.get(1))
                {
                    bits = *lo as u64 | (*hi as u64) << 32;
                }
                if op == SOp::SpecConstant {
                    if let Some(v) = self.spec_override(rid, s)? {
                        bits = v;
                    }
                }
                let bits = bits & scalar::mask(s.bits() as u8);
                self.ids
                    .insert(rid, Id::Const(ConstVal::defined(t, vec![bits])));
            }
            SOp::ConstantTrue
            | SOp::ConstantFalse
            | SOp::SpecConstantTrue
            | SOp::SpecConstantFalse => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let mut v = matches!(op, SOp::ConstantTrue | SOp::SpecConstantTrue) as u64;
                if matches!(op, SOp::SpecConstantTrue | SOp::SpecConstantFalse) {
                    if let Some(x) = self.spec_override(rid, Scalar::Bool)? {
                        v = (x != 0) as u64;
                    }
                }
                self.ids
                    .insert(rid, Id::Const(ConstVal::defined(t, vec![v])));
            }
            SOp::ConstantComposite | SOp::SpecConstantComposite => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let mut bits = Vec::new();
                let mut undef = Vec::new();
                for k in 0..i.operands.len() {
                    let c = self.konst(idop(k)?)?;
                    bits.extend_from_slice(&c.bits);
                    undef.extend_from_slice(&c.undef);
                }
                if bits.len() as u32 != self.types.slots(t)? {
                    return Err(SpirvError::malformed(
                        "composite constant with the wrong number of components",
                    ));
                }
                self.ids
                    .insert(rid, Id::Const(ConstVal { ty: t, bits, undef }));
            }
            SOp::ConstantNull | SOp::Undef => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let n = self.types.slots(t)?;
                let null = match self.types.get(t) {
                    Type::Pointer { .. } => crate::spirv::memory::Ptr::NULL.bits(),
                    _ => 0,
                };
                self.ids.insert(
                    rid,
                    Id::Const(ConstVal {
                        ty: t,
                        bits: vec![null; n as usize],
                        undef: vec![op == SOp::Undef; n as usize],
                    }),
                );
            }
            SOp::SpecConstantOp => {
                let v = self.fold_spec_op(i)?;
                self.ids.insert(rid, Id::Const(v));
            }
            SOp::Variable => {
                let obj = self.variable(i, None)?;
                self.ids.insert(rid, Id::Var(obj));
            }
            other => return Err(unsupported(format!("{} at module scope", op_name(other)))),
        }
        Ok(())
    }

    fn spec_override(&self, id: u32, s: Scalar) -> Result<Option<u64>, SpirvError> {
        let Some(sid) = self.deco_lit(id, Decoration::SpecId) else {
            return Ok(None);
        };
        let Some((_, v)) = self.opts.spec.iter().rev().find(|(k, _)| *k == sid) else {
            return Ok(None);
        };
        match v {
            SpecInput::Bits(b) => Ok(Some(*b & scalar::mask(s.bits() as u8))),
            SpecInput::Text(t) => {
                let mt = s.model_type().ok_or_else(|| {
                    SpirvError::Setup(format!("specialization constant {sid} has no value type"))
                })?;
                let v = Value::parse(ValueType::scalar(mt), t).map_err(|e| {
                    SpirvError::Setup(format!(
                        "--spec {sid}={t}: {e} (the constant is a {})",
                        s.name()
                    ))
                })?;
                Ok(Some(v.component_bits(0)))
            }
        }
    }

    /// Folds an `OpSpecConstantOp` with the executor's scalar rules (the ops Vulkan allows there).
    fn fold_spec_op(&self, i: &Instruction) -> Result<ConstVal, SpirvError> {
        let t = self.ty(i.result_type.unwrap_or(0))?;
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
            return Err(SpirvError::malformed("OpSpecConstantOp without an opcode"));
        };
        let ids: Vec<u32> = i.operands[1..]
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(x) => Some(*x),
                _ => None,
            })
            .collect();
        let lits: Vec<u32> = i.operands[1..]
            .iter()
            .filter_map(|o| match o {
                Operand::LiteralBit32(x) => Some(*x),
                _ => None,
            })
            .collect();
        let arg = |k: usize| -> Result<&ConstVal, SpirvError> {
            self.konst(
                *ids.get(k)
                    .ok_or_else(|| SpirvError::malformed("OpSpecConstantOp operand"))?,
            )
        };
        let out_n = self.types.slots(t)? as usize;
        let undef = ids
            .iter()
            .any(|x| self.konst(*x).map(|c| c.any_undef()).unwrap_or(false));
        let comp = |f: &dyn Fn(usize) -> Result<u64, SpirvError>| -> Result<Vec<u64>, SpirvError> {
            (0..out_n).map(f).collect()
        };
        let w_of =
            |c: &ConstVal| -> u8 { self.scalar_of(c.ty).map(|s| s.bits() as u8).unwrap_or(32) };
        let int_bin = |o: IntBin| -> Result<Vec<u64>, SpirvError> {
            let (a, b) = (arg(0)?, arg(1)?);
            let w = w_of(a);
            comp(&|k| {
                scalar::int_bin(o, w, a.bits[k], b.bits[k])
                    .map_err(|e| SpirvError::Setup(format!("specialization constant: {e}")))
            })
        };
        let int_cmp = |o: IntCmp| -> Result<Vec<u64>, SpirvError> {
            let (a, b) = (arg(0)?, arg(1)?);
            let w = w_of(a);
            comp(&|k| Ok(scalar::b(scalar::int_cmp(o, w, a.bits[k], b.bits[k]))))
        };
        let bits = match op {
            SOp::IAdd => int_bin(IntBin::Add)?,
            SOp::ISub => int_bin(IntBin::Sub)?,
            SOp::IMul => int_bin(IntBin::Mul)?,
            SOp::UDiv => int_bin(IntBin::UDiv)?,
            SOp::SDiv => int_bin(IntBin::SDiv)?,
            SOp::UMod => int_bin(IntBin::UMod)?,
            SOp::SRem => int_bin(IntBin::SRem)?,
            SOp::SMod => int_bin(IntBin::SMod)?,
            SOp::ShiftLeftLogical => int_bin(IntBin::Shl)?,
            SOp::ShiftRightLogical => int_bin(IntBin::ShrL)?,
            SOp::ShiftRightArithmetic => int_bin(IntBin::ShrA)?,
            SOp::BitwiseAnd => int_bin(IntBin::And)?,
            SOp::BitwiseOr => int_bin(IntBin::Or)?,
            SOp::BitwiseXor => int_bin(IntBin::Xor)?,
            SOp::IEqual => int_cmp(IntCmp::Eq)?,
            SOp::INotEqual => int_cmp(IntCmp::Ne)?,
            SOp::ULessThan => int_cmp(IntCmp::ULt)?,
            SOp::SLessThan => int_cmp(IntCmp::SLt)?,
            SOp::UGreaterThan => int_cmp(IntCmp::UGt)?,
            SOp::SGreaterThan => int_cmp(IntCmp::SGt)?,
            SOp::ULessThanEqual => int_cmp(IntCmp::ULe)?,
            SOp::SLessThanEqual => int_cmp(IntCmp::SLe)?,
            SOp::UGreaterThanEqual => int_cmp(IntCmp::UGe)?,
            SOp::SGreaterThanEqual => int_cmp(IntCmp::SGe)?,
            SOp::SNegate | SOp::Not => {
                let a = arg(0)?;
                let w = w_of(a);
                let o = if *op == SOp::SNegate {
                    IntUn::Neg
                } else {
                    IntUn::Not
                };
                comp(&|k| Ok(scalar::int_un(o, w, a.bits[k])))?
            }
            SOp::LogicalAnd | SOp::LogicalOr | SOp::LogicalEqual | SOp::LogicalNotEqual => {
                let (a, b) = (arg(0)?, arg(1)?);
                comp(&|k| {
                    let (x, y) = (a.bits[k] != 0, b.bits[k] != 0);
                    Ok(scalar::b(match op {
                        SOp::LogicalAnd => x && y,
                        SOp::LogicalOr => x || y,
                        SOp::LogicalEqual => x == y,
                        _ => x != y,
                    }))
                })?
            }
            SOp::LogicalNot => {
                let a = arg(0)?;
                comp(&|k| Ok(scalar::b(a.bits[k] == 0)))?
            }
            SOp::Select => {
                let (c, a, b) = (arg(0)?, arg(1)?, arg(2)?);
                comp(&|k| {
                    let ck = if c.bits.len() == 1 { 0 } else { k };
                    Ok(if c.bits[ck] != 0 {
                        a.bits[k]
                    } else {
                        b.bits[k]
                    })
                })?
            }
            SOp::UConvert | SOp::SConvert | SOp::FConvert => {
                let a = arg(0)?;
                let (from, to) = (self.scalar_of(a.ty)?, self.scalar_of(t)?);
                let o = match op {
                    SOp::UConvert => Conv::UConvert,
                    SOp::SConvert => Conv::SConvert,
                    _ => Conv::FConvert,
                };
                comp(&|k| {
                    scalar::convert(o, from, to, a.bits[k])
                        .map_err(|e| SpirvError::Setup(format!("specialization constant: {e}")))
                })?
            }
            SOp::CompositeExtract => {
                let a = arg(0)?;
                let (off, n) = self.composite_path(a.ty, &lits)?;
                a.bits[off as usize..(off + n) as usize].to_vec()
            }
            SOp::CompositeInsert => {
                let (obj, a) = (arg(0)?, arg(1)?);
                let (off, n) = self.composite_path(a.ty, &lits)?;
                let mut v = a.bits.clone();
                v[off as usize..(off + n) as usize].copy_from_slice(&obj.bits);
                v
            }
            SOp::VectorShuffle => {
                let (a, b) = (arg(0)?, arg(1)?);
                lits.iter()
                    .map(|&s| {
                        let s = s as usize;
                        if s < a.bits.len() {
                            a.bits[s]
                        } else {
                            b.bits.get(s - a.bits.len()).copied().unwrap_or(0)
                        }
                    })
                    .collect()
            }
            other => {
                return Err(unsupported(format!(
                    "OpSpecConstantOp with {}",
                    op_name(*other)
                )))
            }
        };
        if bits.len() != out_n {
            return Err(SpirvError::malformed("OpSpecConstantOp result size"));
        }
        let undef = vec![undef; bits.len()];
        Ok(ConstVal { ty: t, bits, undef })
    }

    /// Slot offset and count of the part of a composite of type `t` selected by literal indices.
    fn composite_path(&self, t: TypeId, idx: &[u32]) -> Result<(u32, u32), SpirvError> {
        let mut t = t;
        let mut off = 0u32;
        for &i in idx {
            match self.types.get(t).clone() {
                Type::Vector { n, .. } => {
                    if i >= n {
                        return Err(SpirvError::malformed(format!(
                            "component {i} of a {n}-vector"
                        )));
                    }
                    off += i;
                    return Ok((off, 1));
                }
                Type::Matrix { col, cols } => {
                    if i >= cols {
                        return Err(SpirvError::malformed(format!(
                            "column {i} of a {cols}-column matrix"
                        )));
                    }
                    off += i * self.types.slots(col)?;
                    t = col;
                }
                Type::Array { elem, len, .. } => {
                    if i >= len {
                        return Err(SpirvError::malformed(format!(
                            "element {i} of an array of {len}"
                        )));
                    }
                    off += i * self.types.slots(elem)?;
                    t = elem;
                }
                Type::Struct { members, .. } => {
                    let k = i as usize;
                    if k >= members.len() {
                        return Err(SpirvError::malformed(format!(
                            "member {i} of a struct of {}",
                            members.len()
                        )));
                    }
                    for m in &members[..k] {
                        off += self.types.slots(*m)?;
                    }
                    t = members[k];
                }
                other => {
                    return Err(SpirvError::malformed(format!(
                        "composite index into {other:?}"
                    )))
                }
            }
        }
        Ok((off, self.types.slots(t)?))
    }

    // ---------------------------------------------------------------- variables and memory

    fn variable(&mut self, i: &Instruction, func: Option<&str>) -> Result<ObjectId, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let pty = self.ty(i.result_type.unwrap_or(0))?;
        let (storage_decl, pointee) = match self.types.get(pty) {
            Type::Pointer { pointee, .. } => (
                match i.operands.first() {
                    Some(Operand::StorageClass(s)) => *s,
                    _ => return Err(SpirvError::malformed("OpVariable without a storage class")),
                },
                *pointee,
            ),
            _ => return Err(SpirvError::malformed("OpVariable of a non-pointer type")),
        };
        // An array of buffer blocks is an array of descriptors: one object per element, with
        // consecutive ids (an access chain's first index picks the object).
        if matches!(
            storage_decl,
            StorageClass::StorageBuffer | StorageClass::Uniform
        ) {
            if let Type::Array { elem, len, .. } = *self.types.get(pointee) {
                let block = self.has_deco_type(elem, Decoration::Block)
                    || self.has_deco_type(elem, Decoration::BufferBlock);
                if block && len >= 1 {
                    let first = self.variable_one(i, func, storage_decl, elem, Some((0, len)))?;
                    for k in 1..len {
                        self.variable_one(i, func, storage_decl, elem, Some((k, len)))?;
                    }
                    self.descriptor_arrays.insert(rid, len);
                    return Ok(first);
                }
            }
            if matches!(self.types.get(pointee), Type::RuntimeArray { .. }) {
                return Err(unsupported(format!(
                    "variable {}: a runtime-sized array of descriptors",
                    self.name(rid)
                )));
            }
        }
        self.variable_one(i, func, storage_decl, pointee, None)
    }

    /// One object of `OpVariable` `i` holding a `pointee` (element `k` of `n` of an array of
    /// descriptors when `element` is `Some((k, n))`).
    fn variable_one(
        &mut self,
        i: &Instruction,
        func: Option<&str>,
        storage_decl: StorageClass,
        pointee: TypeId,
        element: Option<(u32, u32)>,
    ) -> Result<ObjectId, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let buffer_block = self.has_deco_type(pointee, Decoration::BufferBlock);
        let storage = storage_of(storage_decl, buffer_block).ok_or_else(|| {
            unsupported(format!(
                "a variable in the {storage_decl:?} storage class (compute kernels: StorageBuffer, Uniform, PushConstant, Workgroup, Private, Function, Input)"
            ))
        })?;
        if matches!(self.types.get(pointee), Type::Function) {
            return Err(unsupported(format!(
                "variable {} of an opaque type ({}): images, samplers and acceleration structures are not interpreted",
                self.name(rid),
                self.names.get(&type_spirv_id(self, pointee)).cloned().unwrap_or_default()
            )));
        }
        let (size, _) = self.types.size_align(pointee, MatrixLayout::default())?;
        let runtime_array = self.trailing_runtime_array(pointee)?;
        let binding = match (
            self.deco_lit(rid, Decoration::DescriptorSet),
            self.deco_lit(rid, Decoration::Binding),
        ) {
            (s, Some(b)) if storage.is_global() && storage != Storage::PushConstant => {
                Some((s.unwrap_or(0), b))
            }
            _ => None,
        };
        if matches!(storage, Storage::StorageBuffer | Storage::Uniform) && binding.is_none() {
            return Err(SpirvError::malformed(format!(
                "buffer variable {} has no Binding decoration",
                self.name(rid)
            )));
        }
        let builtin = self
            .deco_lit(rid, Decoration::BuiltIn)
            .and_then(BuiltIn::from_u32);
        let read_only = matches!(
            storage,
            Storage::Uniform | Storage::PushConstant | Storage::Input
        ) || self.has_deco(rid, Decoration::NonWritable)
            || self.all_members_non_writable(pointee);
        let init = match i.operands.get(1) {
            Some(Operand::IdRef(c)) => {
                let c = self.konst(*c)?.clone();
                Some(self.const_reg(&c))
            }
            _ => None,
        };
        let words = size.div_ceil(4).max(1).next_multiple_of(2);
        let unit = self.types.unit(pointee);
        let units = words * 4 / unit;
        let tbase = match storage {
            Storage::Function | Storage::Private | Storage::Input => {
                let b = self.lane_units;
                self.lane_units += units;
                b
            }
            Storage::Workgroup => {
                let b = self.shared_units;
                self.shared_units += units;
                b
            }
            _ => 0,
        };
        let base = match storage {
            Storage::Function | Storage::Private | Storage::Input => {
                let b = self.lane_words;
                self.lane_words = self
                    .lane_words
                    .checked_add(words)
                    .filter(|w| *w <= 1 << 20)
                    .ok_or_else(|| unsupported("more than 4 MiB of per-invocation variables"))?;
                b
            }
            Storage::Workgroup => {
                let b = self.shared_words;
                self.shared_words = self
                    .shared_words
                    .checked_add(words)
                    .filter(|w| *w <= 1 << 24)
                    .ok_or_else(|| unsupported("more than 64 MiB of shared memory"))?;
                b
            }
            _ => 0,
        };
        // A block without an instance name (`buffer B { uint data[]; };`) is known by its member
        // when it has one, else by its block name — never by a SPIR-V id.
        let own = match self.names.get(&rid) {
            Some(n) => n.clone(),
            None => {
                let tid = type_spirv_id(self, pointee);
                match self.types.get(pointee) {
                    Type::Struct { members, .. } if members.len() == 1 => self
                        .member_names
                        .get(&(tid, 0))
                        .or_else(|| self.names.get(&tid))
                        .cloned()
                        .unwrap_or_else(|| self.name(rid)),
                    Type::Struct { .. } => self
                        .names
                        .get(&tid)
                        .cloned()
                        .unwrap_or_else(|| self.name(rid)),
                    _ => self.name(rid),
                }
            }
        };
        let own = match element {
            Some((k, _)) => format!("{own}[{k}]"),
            None => own,
        };
        let name = match func {
            Some(f) => format!("{own} (in {f})"),
            None => own,
        };
        let loc = LocId::new(self.locs.len() as u32);
        self.locs.push(Location {
            file: self.file.clone(),
            line: None,
            op: "OpVariable".into(),
            id: Some(rid),
        });
        self.objects.push(Object {
            name,
            storage,
            ty: pointee,
            size,
            words: if storage.is_global() { 0 } else { words },
            base,
            unit,
            tbase,
            init,
            binding,
            builtin,
            runtime_array,
            read_only,
            loc,
            element: element.map_or(0, |(k, _)| k),
        });
        let obj = ObjectId::new((self.objects.len() - 1) as u32);
        self.ptr_layout.insert(rid, MatrixLayout::default());
        Ok(obj)
    }

    fn has_deco_type(&self, t: TypeId, d: Decoration) -> bool {
        let id = type_spirv_id(self, t);
        self.has_deco(id, d)
    }

    fn all_members_non_writable(&self, t: TypeId) -> bool {
        let id = type_spirv_id(self, t);
        match self.types.get(t) {
            Type::Struct { members, .. } => {
                !members.is_empty()
                    && (0..members.len() as u32).all(|m| self.mhas(id, m, Decoration::NonWritable))
            }
            _ => false,
        }
    }

    fn trailing_runtime_array(&self, t: TypeId) -> Result<Option<(u32, u32)>, SpirvError> {
        match self.types.get(t) {
            Type::Struct { members, .. } => {
                let last = members.len() as u32 - 1;
                if let Some(mt) = members.last() {
                    if let Type::RuntimeArray { .. } = self.types.get(*mt) {
                        let (off, _, ml) = self.types.member(t, last)?;
                        let (_, stride, _, _) = self.types.element(*mt, ml)?;
                        return Ok(Some((off, stride)));
                    }
                }
                Ok(None)
            }
            Type::RuntimeArray { .. } => {
                let (_, stride, _, _) = self.types.element(t, MatrixLayout::default())?;
                Ok(Some((0, stride)))
            }
            _ => Ok(None),
        }
    }

    fn name(&self, id: u32) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("%{id}"))
    }

    fn plan(&mut self, t: TypeId, m: MatrixLayout) -> Result<PlanId, SpirvError> {
        if let Some(p) = self.plan_ids.get(&(t, m)) {
            return Ok(*p);
        }
        let slots = self.types.slot_layout(t, m)?;
        let (size, _) = self.types.size_align(t, m)?;
        self.plans.push(Plan {
            slots: slots.iter().map(|s| (s.scalar, s.offset)).collect(),
            size,
        });
        let id = (self.plans.len() - 1) as PlanId;
        self.plan_ids.insert((t, m), id);
        Ok(id)
    }

    // ---------------------------------------------------------------- functions

    fn functions(&mut self, _entry: u32) -> Result<Vec<Func>, SpirvError> {
        // Pass 1: every function's id, every result's type and opcode, every register.
        for (k, f) in self.m.functions.iter().enumerate() {
            let def = f
                .def
                .as_ref()
                .ok_or_else(|| SpirvError::malformed("a function without OpFunction"))?;
            let fid = def.result_id.unwrap_or(0);
            self.ids.insert(fid, Id::Func(k as FuncIdx));
            for p in &f.parameters {
                if let (Some(r), Some(t)) = (p.result_id, p.result_type) {
                    self.defs.insert(r, (t, SOp::FunctionParameter));
                }
            }
            for b in &f.blocks {
                for i in &b.instructions {
                    if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                        self.defs.insert(r, (t, i.class.opcode));
                    }
                }
            }
        }
        let mut defs: Vec<(u32, u32, SOp)> =
            self.defs.iter().map(|(r, (t, o))| (*r, *t, *o)).collect();
        defs.sort();
        for (r, t, o) in defs {
            if o == SOp::Variable {
                continue; // pointers to function variables become constant registers (pass 2)
            }
            let tid = self.ty(t)?;
            let n = self
                .types
                .slots(tid)
                .or_else(|e| match self.types.get(tid) {
                    Type::Pointer { .. } => Ok(1),
                    _ => Err(e),
                })?;
            let reg = self.new_reg(n);
            self.regs.insert(r, reg);
        }
        // Pass 2: decode.
        let mut out = Vec::with_capacity(self.m.functions.len());
        for k in 0..self.m.functions.len() {
            let f = &self.m.functions[k];
            out.push(self.function(f)?);
        }
        Ok(out)
    }

    fn function(&mut self, f: &rspirv::dr::Function) -> Result<Func, SpirvError> {
        let def = f.def.as_ref().expect("checked in pass 1");
        let fid = def.result_id.unwrap_or(0);
        let fname = self.name(fid);
        let ret_ty = self.ty(def.result_type.unwrap_or(0))?;
        let ret_slots = self.types.slots(ret_ty)?;
        let ret = (ret_slots > 0).then(|| self.new_reg(ret_slots));
        let mut params = Vec::new();
        let mut param_slots = Vec::new();
        for p in &f.parameters {
            let r = p.result_id.unwrap_or(0);
            let reg = self.reg(r)?;
            params.push(reg);
            param_slots.push(self.reg_slots[reg.index()]);
            let t = self.ty(p.result_type.unwrap_or(0))?;
            if matches!(self.types.get(t), Type::Pointer { .. }) {
                self.ptr_layout.insert(r, MatrixLayout::default());
            }
        }
        let labels: HashMap<u32, BlockIdx> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(k, b)| {
                (
                    b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0),
                    k as BlockIdx,
                )
            })
            .collect();
        if f.blocks.is_empty() {
            return Err(unsupported(format!(
                "function {fname} without a body (linkage)"
            )));
        }
        let mut blocks = Vec::with_capacity(f.blocks.len());
        let mut locals = Vec::new();
        let mut has_phis = false;
        let mut line: Option<(Option<String>, u32)> = None;
        for b in &f.blocks {
            let label = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            let mut blk = Block {
                label,
                phis: Vec::new(),
                insts: Vec::new(),
                locs: Vec::new(),
                merge: Merge::None,
                term: Term::Unreachable,
                term_loc: LocId::default(),
                defs: Vec::new(),
                escapes: false,
                loop_defs: Vec::new(),
            };
            let block_of = |id: u32| -> Result<BlockIdx, SpirvError> {
                labels.get(&id).copied().ok_or_else(|| {
                    SpirvError::malformed(format!("branch to %{id}, not a block of this function"))
                })
            };
            for i in &b.instructions {
                let op = i.class.opcode;
                match op {
                    SOp::Line => {
                        let file = match i.operands.first() {
                            Some(Operand::IdRef(s)) => match self.ids.get(s) {
                                Some(Id::Str(s)) => Some(s.clone()),
                                _ => None,
                            },
                            _ => None,
                        };
                        if let Some(Operand::LiteralBit32(l)) = i.operands.get(1) {
                            line = Some((file.or_else(|| self.file.clone()), *l));
                        }
                        continue;
                    }
                    SOp::NoLine => {
                        line = None;
                        continue;
                    }
                    // NonSemantic.Shader.DebugInfo.100's DebugLine / DebugNoLine, as OpLine.
                    SOp::ExtInst
                        if self.debug_info_set.is_some()
                            && i.operands.first()
                                == self.debug_info_set.map(Operand::IdRef).as_ref() =>
                    {
                        let num = match i.operands.get(1) {
                            Some(Operand::LiteralExtInstInteger(n))
                            | Some(Operand::LiteralBit32(n)) => *n,
                            _ => 0,
                        };
                        if num == crate::words::debug_info::LINE {
                            let file = match i.operands.get(2) {
                                Some(Operand::IdRef(src)) => {
                                    self.debug_sources.get(src).and_then(|f| {
                                        match self.ids.get(f) {
                                            Some(Id::Str(s)) => Some(s.clone()),
                                            _ => None,
                                        }
                                    })
                                }
                                _ => None,
                            };
                            let start = match i.operands.get(3) {
                                Some(Operand::IdRef(c)) => self.const_u32(*c).ok(),
                                _ => None,
                            };
                            if let Some(l) = start {
                                line = Some((file.or_else(|| self.file.clone()), l));
                            }
                        } else if num == crate::words::debug_info::NO_LINE {
                            line = None;
                        }
                        continue;
                    }
                    _ => {}
                }
                let loc = LocId::new(self.locs.len() as u32);
                let file = line
                    .as_ref()
                    .and_then(|l| l.0.clone())
                    .or_else(|| self.file.clone());
                // A store's line is its statement's (glslang gives the line of a statement's last
                // argument, or of a declaration, just before the store of a statement written over
                // several lines): found in the embedded source where there is one.
                let stores = matches!(
                    op,
                    SOp::Store | SOp::CopyMemory | SOp::CopyMemorySized | SOp::AtomicStore
                );
                let at = match (&line, stores) {
                    (Some((_, l)), true) => Some(self.statement_line(file.as_deref(), *l)),
                    (l, _) => l.as_ref().map(|l| l.1),
                };
                self.locs.push(Location {
                    file,
                    line: at,
                    op: op_name(op),
                    id: i.result_id,
                });
                let at = self.locs[loc.index()].clone();
                let r: Result<(), SpirvError> = (|| {
                    match op {
                        SOp::Phi => {
                            has_phis = true;
                            let d = self.reg(i.result_id.unwrap_or(0))?;
                            let mut inc = Vec::new();
                            for pair in i.operands.chunks(2) {
                                if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                                    inc.push((block_of(*p)?, self.value(*v)?));
                                }
                            }
                            blk.phis.push(Phi {
                                d,
                                n: self.reg_slots[d.index()],
                                incoming: inc.into_boxed_slice(),
                            });
                        }
                        SOp::SelectionMerge => {
                            blk.merge = Merge::Selection(block_of(id_at(i, 0)?)?);
                            self.constructs.insert(label, loc);
                        }
                        SOp::LoopMerge => {
                            blk.merge = Merge::Loop {
                                merge: block_of(id_at(i, 0)?)?,
                                cont: block_of(id_at(i, 1)?)?,
                            };
                            self.constructs.insert(label, loc);
                        }
                        SOp::Branch => {
                            blk.term = Term::Branch(block_of(id_at(i, 0)?)?);
                            blk.term_loc = loc;
                        }
                        SOp::BranchConditional => {
                            // A branch without a merge of its own (a loop's exit test) is named
                            // by its own line.
                            self.constructs.entry(label).or_insert(loc);
                            blk.term = Term::Cond {
                                c: self.value(id_at(i, 0)?)?,
                                t: block_of(id_at(i, 1)?)?,
                                f: block_of(id_at(i, 2)?)?,
                            };
                            blk.term_loc = loc;
                        }
                        SOp::Switch => {
                            let sel_id = id_at(i, 0)?;
                            let w = self.scalar_of(self.type_of_value(sel_id)?)?.bits() as u8;
                            let default = block_of(id_at(i, 1)?)?;
                            let mut cases = Vec::new();
                            let mut k = 2;
                            while k < i.operands.len() {
                                let lit = match &i.operands[k] {
                                    Operand::LiteralBit32(x) => *x as u64,
                                    Operand::LiteralBit64(x) => *x,
                                    _ => return Err(SpirvError::malformed("OpSwitch literal")),
                                };
                                let mut lit = lit;
                                // 64-bit selectors spell each literal as two words.
                                if w == 64 {
                                    if let (
                                        Operand::LiteralBit32(lo),
                                        Some(Operand::LiteralBit32(hi)),
                                    ) = (&i.operands[k], i.operands.get(k + 1))
                                    {
                                        if matches!(i.operands.get(k + 2), Some(Operand::IdRef(_)))
                                        {
                                            lit = *lo as u64 | (*hi as u64) << 32;
                                            k += 1;
                                        }
                                    }
                                }
                                let target = match i.operands.get(k + 1) {
                                    Some(Operand::IdRef(t)) => block_of(*t)?,
                                    _ => return Err(SpirvError::malformed("OpSwitch target")),
                                };
                                cases.push((lit & scalar::mask(w), target));
                                k += 2;
                            }
                            blk.term = Term::Switch {
                                sel: self.value(sel_id)?,
                                w,
                                default,
                                cases: cases.into_boxed_slice(),
                            };
                            blk.term_loc = loc;
                        }
                        SOp::Return => {
                            blk.term = Term::Return;
                            blk.term_loc = loc;
                        }
                        SOp::ReturnValue => {
                            blk.term = Term::ReturnValue(self.value(id_at(i, 0)?)?);
                            blk.term_loc = loc;
                        }
                        SOp::Unreachable => {
                            blk.term = Term::Unreachable;
                            blk.term_loc = loc;
                        }
                        SOp::Kill | SOp::TerminateInvocation | SOp::DemoteToHelperInvocation => {
                            return Err(unsupported(format!(
                                "{} (a fragment-shader instruction)",
                                op_name(op)
                            )))
                        }
                        SOp::Variable => {
                            let obj = self.variable(i, Some(&fname))?;
                            locals.push(obj);
                            let rid = i.result_id.unwrap_or(0);
                            let r = self.const_reg(&ConstVal::defined(
                                0,
                                vec![crate::spirv::memory::Ptr::new(obj, 0).bits()],
                            ));
                            self.regs.insert(rid, r);
                            self.var_regs.insert(r, obj);
                        }
                        _ => {
                            if let Some(inst) = self.inst(i, loc)? {
                                blk.insts.push(inst);
                                blk.locs.push(loc);
                            }
                        }
                    }
                    Ok(())
                })();
                r.map_err(|e| e.at(&at))?;
                if op != SOp::Variable {
                    if let Some(r) = i.result_id.and_then(|id| self.regs.get(&id)) {
                        blk.defs.push(*r);
                    }
                }
            }
            blocks.push(blk);
        }
        construct_extents(&mut blocks);
        Ok(Func {
            name: fname,
            params,
            param_slots,
            blocks,
            locals,
            ret_slots,
            ret,
            has_phis,
        })
    }

    fn reg(&self, id: u32) -> Result<Reg, SpirvError> {
        self.regs
            .get(&id)
            .copied()
            .ok_or_else(|| SpirvError::malformed(format!("%{id} is not a value")))
    }

    /// The register of a value operand: an SSA value, a constant or a global variable's pointer.
    fn value(&mut self, id: u32) -> Result<Reg, SpirvError> {
        if let Some(r) = self.regs.get(&id) {
            return Ok(*r);
        }
        match self.ids.get(&id).cloned() {
            Some(Id::Const(c)) => {
                let r = self.const_reg(&c);
                self.regs.insert(id, r);
                Ok(r)
            }
            Some(Id::Var(o)) => {
                let r = self.const_reg(&ConstVal::defined(
                    0,
                    vec![crate::spirv::memory::Ptr::new(o, 0).bits()],
                ));
                self.regs.insert(id, r);
                self.var_regs.insert(r, o);
                Ok(r)
            }
            _ => Err(SpirvError::malformed(format!("%{id} is not a value"))),
        }
    }

    fn type_of_value(&self, id: u32) -> Result<TypeId, SpirvError> {
        if let Some((t, _)) = self.defs.get(&id) {
            return self.ty(*t);
        }
        match self.ids.get(&id) {
            Some(Id::Const(c)) => Ok(c.ty),
            Some(Id::Var(o)) => {
                // the variable's pointer type is not kept; callers of this only need value types
                Ok(self.objects[o.index()].ty)
            }
            _ => Err(SpirvError::malformed(format!("%{id} has no type"))),
        }
    }

    /// The element stride of pointer `id` for OpPtrAccessChain and OpPtrDiff: its pointer type's
    /// ArrayStride, else its pointee's size rounded up to the pointee's alignment.
    ///
    /// Only explicitly laid out storage classes take the decoration: Function, Private and
    /// Workgroup memory have none (SPV_KHR_workgroup_memory_explicit_layout lays out only
    /// Block-decorated Workgroup variables, which a pointer does not tell), and a stride decorated
    /// there is ignored (the Vulkan CTS's `ptr_access_chain/workgroup_bad_stride`: "This
    /// decoration should be ignored").
    fn ptr_stride(&self, id: u32, pointee: TypeId, m: MatrixLayout) -> Result<u32, SpirvError> {
        let (_, _, storage) = self.pointee(id)?;
        let explicit = !matches!(
            storage,
            Storage::Function | Storage::Private | Storage::Workgroup
        );
        if let (true, Some((t, _))) = (explicit, self.defs.get(&id)) {
            if let Some(s) = self.deco_lit(*t, Decoration::ArrayStride) {
                return Ok(s);
            }
        }
        let (size, align) = self.types.size_align(pointee, m)?;
        Ok(size.div_ceil(align.max(1)) * align.max(1))
    }

    /// The pointee type of a pointer operand (and its matrix layout context).
    fn pointee(&self, id: u32) -> Result<(TypeId, MatrixLayout, Storage), SpirvError> {
        let m = self.ptr_layout.get(&id).copied().unwrap_or_default();
        if let Some((t, _)) = self.defs.get(&id) {
            if let Type::Pointer { pointee, storage } = self.types.get(self.ty(*t)?) {
                return Ok((*pointee, m, *storage));
            }
        }
        if let Some(Id::Var(o)) = self.ids.get(&id) {
            let o = &self.objects[o.index()];
            return Ok((o.ty, m, o.storage));
        }
        Err(SpirvError::malformed(format!("%{id} is not a pointer")))
    }

    fn sv_of(&self, id: u32) -> Result<(Scalar, u32), SpirvError> {
        let t = self.type_of_value(id)?;
        self.types
            .scalar_vector(t)
            .ok_or_else(|| SpirvError::malformed(format!("%{id} is not a scalar or vector")))
    }

    fn result_sv(&self, i: &Instruction) -> Result<(Scalar, u32), SpirvError> {
        let t = self.ty(i.result_type.unwrap_or(0))?;
        self.types
            .scalar_vector(t)
            .ok_or_else(|| SpirvError::malformed("result is not a scalar or vector"))
    }

    fn is_contractible(&self, id: u32) -> bool {
        matches!(
            self.defs.get(&id),
            Some((
                _,
                SOp::FMul
                    | SOp::VectorTimesScalar
                    | SOp::MatrixTimesScalar
                    | SOp::Dot
                    | SOp::MatrixTimesVector
                    | SOp::VectorTimesMatrix
                    | SOp::MatrixTimesMatrix
            ))
        ) && !self.has_deco(id, Decoration::NoContraction)
    }

    /// Decodes one body instruction (not control flow).
    /// Decodes one instruction of a function body, by family: scalar arithmetic, logic and
    /// conversions; composites, vectors and matrices; then memory, atomics, barriers, calls and
    /// group operations (the last names anything else unsupported).
    fn inst(&mut self, i: &Instruction, loc: LocId) -> Result<Option<Inst>, SpirvError> {
        if let Some(x) = self.scalar_inst(i, loc)? {
            return Ok(x);
        }
        if let Some(x) = self.composite_inst(i, loc)? {
            return Ok(x);
        }
        self.memory_inst(i, loc)
    }

    /// The register holding the value of `i`'s `k`-th operand.
    fn arg(&mut self, i: &Instruction, k: usize) -> Result<Reg, SpirvError> {
        self.value(id_at(i, k)?)
    }

    /// A two-operand instruction's width and components (of the result, or of the first operand
    /// for a comparison, whose result is bool), its destination and its two operands.
    fn binary(
        &mut self,
        i: &Instruction,
        of_operand: bool,
    ) -> Result<(u8, u32, Reg, Reg, Reg), SpirvError> {
        let (sc, n) = if of_operand {
            self.sv_of(id_at(i, 0)?)?
        } else {
            self.result_sv(i)?
        };
        let rid = i.result_id.unwrap_or(0);
        let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
        check_ssa!(d, a, b);
        Ok((sc.bits() as u8, n, d, a, b))
    }

    fn int2(&mut self, i: &Instruction, op: IntBin) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, false)?;
        Ok(Some(Inst::IntBin { op, w, n, d, a, b }))
    }

    fn icmp(&mut self, i: &Instruction, op: IntCmp) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, true)?;
        Ok(Some(Inst::IntCmp { op, w, n, d, a, b }))
    }

    fn fbin(&mut self, i: &Instruction, o: FloatBin) -> Result<Option<Inst>, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let (sc, n) = self.result_sv(i)?;
        let (ai, bi) = (id_at(i, 0)?, id_at(i, 1)?);
        let contract = matches!(o, FloatBin::Add | FloatBin::Sub)
            && !self.has_deco(rid, Decoration::NoContraction)
            && (self.is_contractible(ai) || self.is_contractible(bi));
        let (d, a, b) = (self.reg(rid)?, self.value(ai)?, self.value(bi)?);
        check_ssa!(d, a, b);
        Ok(Some(Inst::FloatBin {
            op: o,
            w: sc.bits() as u8,
            n,
            d,
            a,
            b,
            contract,
            relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
        }))
    }

    fn fcmp(&mut self, i: &Instruction, op: FloatCmp) -> Result<Option<Inst>, SpirvError> {
        let (w, n, d, a, b) = self.binary(i, true)?;
        Ok(Some(Inst::FloatCmp { op, w, n, d, a, b }))
    }

    fn conv(&mut self, i: &Instruction, o: Conv) -> Result<Option<Inst>, SpirvError> {
        let rid = i.result_id.unwrap_or(0);
        let (to, n) = self.result_sv(i)?;
        let (from, _) = self.sv_of(id_at(i, 0)?)?;
        let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
        check_ssa!(d, a);
        Ok(Some(Inst::Conv {
            op: o,
            from,
            to,
            n,
            d,
            a,
        }))
    }

    /// Integer, float and logical arithmetic, comparisons, selection and conversions (`None`: not of this family).
    fn scalar_inst(
        &mut self,
        i: &Instruction,
        loc: LocId,
    ) -> Result<Option<Option<Inst>>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let _ = loc;
        Ok(Some(match op {
            SOp::Nop | SOp::ExecutionModeId => None,
            SOp::MemoryBarrier => Some(Inst::MemoryBarrier {
                sem: self.const_u32(id_at(i, 1)?)?,
            }),
            SOp::Undef => {
                let d = self.reg(rid)?;
                Some(Inst::Undef {
                    d,
                    n: self.reg_slots[d.index()],
                })
            }
            SOp::IAdd => self.int2(i, IntBin::Add)?,
            SOp::ISub => self.int2(i, IntBin::Sub)?,
            SOp::IMul => self.int2(i, IntBin::Mul)?,
            SOp::UDiv => self.int2(i, IntBin::UDiv)?,
            SOp::SDiv => self.int2(i, IntBin::SDiv)?,
            SOp::UMod => self.int2(i, IntBin::UMod)?,
            SOp::SRem => self.int2(i, IntBin::SRem)?,
            SOp::SMod => self.int2(i, IntBin::SMod)?,
            SOp::ShiftLeftLogical => self.int2(i, IntBin::Shl)?,
            SOp::ShiftRightLogical => self.int2(i, IntBin::ShrL)?,
            SOp::ShiftRightArithmetic => self.int2(i, IntBin::ShrA)?,
            SOp::BitwiseAnd => self.int2(i, IntBin::And)?,
            SOp::BitwiseOr => self.int2(i, IntBin::Or)?,
            SOp::BitwiseXor => self.int2(i, IntBin::Xor)?,
            SOp::IEqual => self.icmp(i, IntCmp::Eq)?,
            SOp::INotEqual => self.icmp(i, IntCmp::Ne)?,
            SOp::UGreaterThan => self.icmp(i, IntCmp::UGt)?,
            SOp::SGreaterThan => self.icmp(i, IntCmp::SGt)?,
            SOp::UGreaterThanEqual => self.icmp(i, IntCmp::UGe)?,
            SOp::SGreaterThanEqual => self.icmp(i, IntCmp::SGe)?,
            SOp::ULessThan => self.icmp(i, IntCmp::ULt)?,
            SOp::SLessThan => self.icmp(i, IntCmp::SLt)?,
            SOp::ULessThanEqual => self.icmp(i, IntCmp::ULe)?,
            SOp::SLessThanEqual => self.icmp(i, IntCmp::SLe)?,
            SOp::SNegate | SOp::Not | SOp::BitCount | SOp::BitReverse => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                let o = match op {
                    SOp::SNegate => IntUn::Neg,
                    SOp::Not => IntUn::Not,
                    SOp::BitCount => IntUn::BitCount,
                    _ => IntUn::BitReverse,
                };
                Some(Inst::IntUn {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::FAdd => self.fbin(i, FloatBin::Add)?,
            SOp::FSub => self.fbin(i, FloatBin::Sub)?,
            SOp::FMul => self.fbin(i, FloatBin::Mul)?,
            SOp::FDiv => self.fbin(i, FloatBin::Div)?,
            SOp::FRem => self.fbin(i, FloatBin::Rem)?,
            SOp::FMod => self.fbin(i, FloatBin::Mod)?,
            SOp::FNegate => {
                let (sc, n) = self.result_sv(i)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::FloatNeg {
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::IsNan | SOp::IsInf => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::FloatClass {
                    inf: op == SOp::IsInf,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                })
            }
            SOp::FOrdEqual => self.fcmp(i, FloatCmp::OrdEq)?,
            SOp::FUnordEqual => self.fcmp(i, FloatCmp::UnordEq)?,
            SOp::FOrdNotEqual => self.fcmp(i, FloatCmp::OrdNe)?,
            SOp::FUnordNotEqual => self.fcmp(i, FloatCmp::UnordNe)?,
            SOp::FOrdLessThan => self.fcmp(i, FloatCmp::OrdLt)?,
            SOp::FUnordLessThan => self.fcmp(i, FloatCmp::UnordLt)?,
            SOp::FOrdGreaterThan => self.fcmp(i, FloatCmp::OrdGt)?,
            SOp::FUnordGreaterThan => self.fcmp(i, FloatCmp::UnordGt)?,
            SOp::FOrdLessThanEqual => self.fcmp(i, FloatCmp::OrdLe)?,
            SOp::FUnordLessThanEqual => self.fcmp(i, FloatCmp::UnordLe)?,
            SOp::FOrdGreaterThanEqual => self.fcmp(i, FloatCmp::OrdGe)?,
            SOp::FUnordGreaterThanEqual => self.fcmp(i, FloatCmp::UnordGe)?,
            SOp::LogicalAnd | SOp::LogicalOr | SOp::LogicalEqual | SOp::LogicalNotEqual => {
                let (_, n) = self.result_sv(i)?;
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let o = match op {
                    SOp::LogicalAnd => LogicBin::And,
                    SOp::LogicalOr => LogicBin::Or,
                    SOp::LogicalEqual => LogicBin::Eq,
                    _ => LogicBin::Ne,
                };
                Some(Inst::LogicBin { op: o, n, d, a, b })
            }
            SOp::LogicalNot => {
                let (_, n) = self.result_sv(i)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::LogicNot { n, d, a })
            }
            SOp::Any | SOp::All => {
                let (_, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::AnyAll {
                    all: op == SOp::All,
                    n,
                    d,
                    a,
                })
            }
            SOp::Select => {
                let d = self.reg(rid)?;
                let n = self.reg_slots[d.index()];
                let cid = id_at(i, 0)?;
                let (_, cn) = self.sv_of(cid)?;
                let (c, a, b) = (self.value(cid)?, self.arg(i, 1)?, self.arg(i, 2)?);
                check_ssa!(d, c, a, b);
                Some(Inst::Select {
                    n,
                    d,
                    c,
                    vector_cond: cn > 1,
                    a,
                    b,
                })
            }
            SOp::ConvertFToU => self.conv(i, Conv::FToU)?,
            SOp::ConvertFToS => self.conv(i, Conv::FToS)?,
            SOp::ConvertSToF => self.conv(i, Conv::SToF)?,
            SOp::ConvertUToF => self.conv(i, Conv::UToF)?,
            SOp::UConvert => self.conv(i, Conv::UConvert)?,
            SOp::SConvert => self.conv(i, Conv::SConvert)?,
            SOp::FConvert => self.conv(i, Conv::FConvert)?,
            SOp::QuantizeToF16 => self.conv(i, Conv::QuantizeF16)?,
            SOp::Bitcast => {
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let from_t = self.type_of_value(id_at(i, 0)?)?;
                let ptr = |t: TypeId| matches!(self.types.get(t), Type::Pointer { .. });
                if ptr(t) || ptr(from_t) {
                    return Err(unsupported("OpBitcast of a pointer"));
                }
                let to = self.types.slot_kinds(t)?;
                let from = self.types.slot_kinds(from_t)?;
                let bytes = |v: &[Scalar]| v.iter().map(|s| s.bits()).sum::<u32>();
                if bytes(&to) != bytes(&from) {
                    return Err(SpirvError::malformed(
                        "OpBitcast between types of different sizes",
                    ));
                }
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                Some(Inst::Bitcast {
                    from: from.into(),
                    to: to.into(),
                    d,
                    a,
                })
            }
            _ => return Ok(None),
        }))
    }

    /// Copies, composites, vector shuffles and inserts, matrix and vector products, extended arithmetic, bit fields and GLSL.std.450 (`None`: not of this family).
    fn composite_inst(
        &mut self,
        i: &Instruction,
        loc: LocId,
    ) -> Result<Option<Option<Inst>>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let _ = loc;
        Ok(Some(match op {
            SOp::CopyObject | SOp::CopyLogical => {
                let (d, a) = (self.reg(rid)?, self.arg(i, 0)?);
                check_ssa!(d, a);
                if let Some(l) = self.ptr_layout.get(&id_at(i, 0)?).copied() {
                    self.ptr_layout.insert(rid, l);
                }
                Some(Inst::Move {
                    d,
                    a,
                    off: 0,
                    n: self.reg_slots[d.index()],
                })
            }
            SOp::CompositeExtract => {
                let src = id_at(i, 0)?;
                let lits = lits_from(i, 1);
                let (off, n) = self.composite_path(self.type_of_value(src)?, &lits)?;
                let (d, a) = (self.reg(rid)?, self.value(src)?);
                check_ssa!(d, a);
                Some(Inst::Move { d, a, off, n })
            }
            SOp::CompositeInsert => {
                let comp = id_at(i, 0)?;
                let obj = id_at(i, 1)?;
                let lits = lits_from(i, 2);
                let (off, n) = self.composite_path(self.type_of_value(obj)?, &lits)?;
                let (d, c, o) = (self.reg(rid)?, self.value(comp)?, self.value(obj)?);
                check_ssa!(d, c, o);
                Some(Inst::Insert {
                    d,
                    obj: o,
                    comp: c,
                    off,
                    n,
                    total: self.reg_slots[d.index()],
                })
            }
            SOp::CompositeConstruct => {
                let d = self.reg(rid)?;
                let mut parts = Vec::new();
                let mut total = 0;
                for k in 0..i.operands.len() {
                    let r = self.arg(i, k)?;
                    check_ssa!(d, r);
                    let n = self.reg_slots[r.index()];
                    total += n;
                    parts.push((r, n));
                }
                if total != self.reg_slots[d.index()] {
                    return Err(SpirvError::malformed(
                        "OpCompositeConstruct with the wrong number of components",
                    ));
                }
                Some(Inst::Construct {
                    d,
                    parts: parts.into_boxed_slice(),
                })
            }
            SOp::VectorShuffle => {
                let d = self.reg(rid)?;
                let (a, b) = (self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let na = self.reg_slots[a.index()];
                let nb = self.reg_slots[b.index()];
                let sel = lits_from(i, 2)
                    .into_iter()
                    .map(|s| {
                        if s == u32::MAX {
                            Ok(None)
                        } else if s < na {
                            Ok(Some((a, s)))
                        } else if s - na < nb {
                            Ok(Some((b, s - na)))
                        } else {
                            Err(SpirvError::malformed(format!(
                                "OpVectorShuffle component {s}"
                            )))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Some(Inst::Shuffle {
                    d,
                    sel: sel.into_boxed_slice(),
                    loc,
                })
            }
            SOp::VectorExtractDynamic => {
                let (_, count) = self.sv_of(id_at(i, 0)?)?;
                let (iw, _) = self.sv_of(id_at(i, 1)?)?;
                let (d, v, idx) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, v, idx);
                Some(Inst::ExtractDyn {
                    d,
                    v,
                    idx,
                    idx_w: iw.bits() as u8,
                    elem: 1,
                    count,
                })
            }
            SOp::VectorInsertDynamic => {
                let (_, count) = self.sv_of(id_at(i, 0)?)?;
                let (iw, _) = self.sv_of(id_at(i, 2)?)?;
                let (d, v, comp, idx) = (
                    self.reg(rid)?,
                    self.arg(i, 0)?,
                    self.arg(i, 1)?,
                    self.arg(i, 2)?,
                );
                check_ssa!(d, v, comp, idx);
                Some(Inst::InsertDyn {
                    d,
                    v,
                    comp,
                    idx,
                    idx_w: iw.bits() as u8,
                    elem: 1,
                    count,
                })
            }
            SOp::VectorTimesScalar | SOp::MatrixTimesScalar => {
                let d = self.reg(rid)?;
                let (v, s) = (self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, v, s);
                let w = self.scalar_of(self.type_of_value(id_at(i, 1)?)?)?.bits() as u8;
                Some(Inst::TimesScalar {
                    w,
                    n: self.reg_slots[d.index()],
                    d,
                    v,
                    s,
                })
            }
            SOp::MatrixTimesVector
            | SOp::VectorTimesMatrix
            | SOp::MatrixTimesMatrix
            | SOp::OuterProduct
            | SOp::Transpose
            | SOp::Dot => {
                return self.matrix_op(i).map(|x| Some(Some(x)));
            }
            SOp::IAddCarry | SOp::ISubBorrow | SOp::UMulExtended | SOp::SMulExtended => {
                let (sc, n) = self.sv_of(id_at(i, 0)?)?;
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let o = match op {
                    SOp::IAddCarry => IntPair::AddCarry,
                    SOp::ISubBorrow => IntPair::SubBorrow,
                    SOp::UMulExtended => IntPair::UMulExtended,
                    _ => IntPair::SMulExtended,
                };
                Some(Inst::IntPair {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    a,
                    b,
                })
            }
            SOp::BitFieldInsert | SOp::BitFieldSExtract | SOp::BitFieldUExtract => {
                let (sc, n) = self.result_sv(i)?;
                let d = self.reg(rid)?;
                let base = self.arg(i, 0)?;
                let (insert, offset, count) = if op == SOp::BitFieldInsert {
                    (self.arg(i, 1)?, self.arg(i, 2)?, self.arg(i, 3)?)
                } else {
                    (base, self.arg(i, 1)?, self.arg(i, 2)?)
                };
                check_ssa!(d, base, insert, offset, count);
                let o = match op {
                    SOp::BitFieldInsert => BitField::Insert,
                    SOp::BitFieldSExtract => BitField::SExtract,
                    _ => BitField::UExtract,
                };
                Some(Inst::BitField {
                    op: o,
                    w: sc.bits() as u8,
                    n,
                    d,
                    base,
                    insert,
                    offset,
                    count,
                })
            }
            SOp::ExtInst => return self.ext_inst(i).map(Some),
            _ => return Ok(None),
        }))
    }

    /// Loads, stores, access chains, atomics, barriers, calls and group operations; anything else is unsupported, named.
    fn memory_inst(&mut self, i: &Instruction, loc: LocId) -> Result<Option<Inst>, SpirvError> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let _ = loc;
        Ok(match op {
            SOp::Load => {
                let pid = id_at(i, 0)?;
                let (t, m, _) = self.pointee(pid)?;
                let plan = self.plan(t, m)?;
                let (d, ptr) = (self.reg(rid)?, self.value(pid)?);
                check_ssa!(d, ptr);
                Some(Inst::Load { d, ptr, plan })
            }
            SOp::Store => {
                let pid = id_at(i, 0)?;
                let (t, m, storage) = self.pointee(pid)?;
                // `Uniform` pointers may point into a `BufferBlock` (an old-style storage buffer);
                // the executor rejects a store to a read-only object by the variable it hits.
                if matches!(storage, Storage::PushConstant | Storage::Input) {
                    return Err(SpirvError::malformed(format!(
                        "a store to {} memory",
                        storage.name()
                    )));
                }
                let plan = self.plan(t, m)?;
                Some(Inst::Store {
                    ptr: self.value(pid)?,
                    v: self.arg(i, 1)?,
                    plan,
                })
            }
            SOp::CopyMemory => {
                let (dp, sp) = (id_at(i, 0)?, id_at(i, 1)?);
                let (t, m, _) = self.pointee(sp)?;
                let plan = self.plan(t, m)?;
                let tmp = self.new_reg(self.plans[plan as usize].slots.len() as u32);
                Some(Inst::CopyMemory {
                    dst: self.value(dp)?,
                    src: self.value(sp)?,
                    plan,
                    tmp,
                })
            }
            SOp::AccessChain
            | SOp::InBoundsAccessChain
            | SOp::PtrAccessChain
            | SOp::InBoundsPtrAccessChain => {
                let base_id = id_at(i, 0)?;
                let (mut t, mut m, _) = self.pointee(base_id)?;
                let mut steps = Vec::new();
                let ptr_chain = matches!(op, SOp::PtrAccessChain | SOp::InBoundsPtrAccessChain);
                if ptr_chain {
                    // OpPtrAccessChain: Element steps the base pointer through the array it
                    // points into, by the ArrayStride of its pointer type (or, without one, the
                    // pointee's size rounded to its alignment: the array's stride in a layout
                    // the module does not spell out).
                    let el_id = id_at(i, 1)?;
                    let stride = self.ptr_stride(base_id, t, m)?;
                    let (isc, _) = self.sv_of(el_id)?;
                    steps.push(Step::Dyn {
                        index: self.value(el_id)?,
                        width: isc.bits() as u8,
                        signed: matches!(isc, Scalar::Int { signed: true, .. }),
                        stride,
                        len: None,
                        elem: true,
                    });
                }
                let mut first_index = 1 + ptr_chain as usize;
                if let (false, Some(&count)) = (ptr_chain, self.descriptor_arrays.get(&base_id)) {
                    // The first index of an array of descriptors picks the descriptor (the
                    // variable's objects are consecutive); `t` is already the block type.
                    let idx_id = id_at(i, 1)?;
                    let (isc, _) = self.sv_of(idx_id)?;
                    steps.push(Step::Descriptor {
                        index: self.value(idx_id)?,
                        width: isc.bits() as u8,
                        signed: matches!(isc, Scalar::Int { signed: true, .. }),
                        count,
                    });
                    first_index = 2;
                }
                // After a column of a row-major matrix: the stride between that column's
                // components (the matrix stride), for the component index that must follow.
                let mut strided_column: Option<u32> = None;
                for k in first_index..i.operands.len() {
                    let idx_id = id_at(i, k)?;
                    let konst = match self.ids.get(&idx_id) {
                        Some(Id::Const(c)) if !c.any_undef() => Some(c.bits[0]),
                        _ => None,
                    };
                    match self.types.get(t).clone() {
                        Type::Struct { .. } => {
                            let k = konst.ok_or_else(|| {
                                SpirvError::malformed(
                                    "a struct member index that is not a constant",
                                )
                            })?;
                            let (off, mt, ml) = self.types.member(t, k as u32)?;
                            steps.push(Step::Const(off));
                            t = mt;
                            m = ml;
                        }
                        _ => {
                            let (el, mut stride, len, em) = self.types.element(t, m)?;
                            // A component of a row-major matrix's column lies a matrix stride
                            // from the next (Vulkan, "Offset and Stride Assignment": row-major
                            // matrices are laid out row by row).
                            if let Some(ms) = strided_column.take() {
                                stride = ms;
                            }
                            let et = match el {
                                ElementOf::Type(et) => et,
                                ElementOf::Scalar(s) => self.scalar_type_id(s)?,
                                ElementOf::RowMajorColumn(col, ms) => {
                                    strided_column = Some(ms);
                                    col
                                }
                            };
                            let (isc, _) = self.sv_of(idx_id)?;
                            match konst {
                                Some(c) if len.is_none_or(|l| c < l as u64) => {
                                    steps.push(Step::Const((c as u32).wrapping_mul(stride)))
                                }
                                _ => steps.push(Step::Dyn {
                                    index: self.value(idx_id)?,
                                    width: isc.bits() as u8,
                                    signed: matches!(isc, Scalar::Int { signed: true, .. }),
                                    stride,
                                    len,
                                    elem: false,
                                }),
                            }
                            t = et;
                            m = em;
                        }
                    }
                }
                if strided_column.is_some() {
                    // A pointer to the whole column would address strided memory.
                    return Err(unsupported(
                        "a pointer to a whole column of a row-major matrix (its components are a matrix stride apart); index its components",
                    ));
                }
                // Fold constant steps.
                let mut folded: Vec<Step> = Vec::new();
                for s in steps {
                    match (folded.last_mut(), s) {
                        (Some(Step::Const(a)), Step::Const(b)) => *a += b,
                        _ => folded.push(s),
                    }
                }
                self.ptr_layout.insert(rid, m);
                let (d, base) = (self.reg(rid)?, self.value(base_id)?);
                check_ssa!(d, base);
                Some(Inst::AccessChain {
                    d,
                    base,
                    steps: folded.into_boxed_slice(),
                })
            }
            SOp::PtrEqual | SOp::PtrNotEqual => {
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                Some(Inst::PtrCmp {
                    d,
                    a,
                    b,
                    ne: op == SOp::PtrNotEqual,
                })
            }
            SOp::PtrDiff => {
                let (d, a, b) = (self.reg(rid)?, self.arg(i, 0)?, self.arg(i, 1)?);
                check_ssa!(d, a, b);
                let pa = id_at(i, 0)?;
                let (t, m, _) = self.pointee(pa)?;
                let stride = self.ptr_stride(pa, t, m)?;
                let (s, _) = self.result_sv(i)?;
                Some(Inst::PtrDiff {
                    d,
                    a,
                    b,
                    stride,
                    w: s.bits() as u8,
                })
            }
            SOp::ArrayLength => {
                let pid = id_at(i, 0)?;
                let (t, _, _) = self.pointee(pid)?;
                let member = lits_from(i, 1).first().copied().unwrap_or(0);
                let (off, at, ml) = self.types.member(t, member)?;
                let (_, stride, _, _) = self.types.element(at, ml)?;
                Some(Inst::ArrayLength {
                    d: self.reg(rid)?,
                    ptr: self.value(pid)?,
                    offset: off,
                    stride,
                })
            }
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
            | SOp::AtomicFMaxEXT => {
                return self.atomic(i).map(Some);
            }
            SOp::ControlBarrier => {
                let exec = self.const_u32(id_at(i, 0)?)?;
                let sem = self.const_u32(id_at(i, 2)?)?;
                // Scope: 1 Device, 2 Workgroup, 3 Subgroup.
                match exec {
                    2 => Some(Inst::Barrier { workgroup: true, sem }),
                    3 => Some(Inst::Barrier { workgroup: false, sem }),
                    s => return Err(unsupported(format!("OpControlBarrier with execution scope {s} (compute: Workgroup or Subgroup)"))),
                }
            }
            SOp::FunctionCall => {
                let f = match self.ids.get(&id_at(i, 0)?) {
                    Some(Id::Func(f)) => *f,
                    _ => return Err(SpirvError::malformed("OpFunctionCall of a non-function")),
                };
                let mut args = Vec::new();
                for k in 1..i.operands.len() {
                    args.push(self.arg(i, k)?);
                }
                let d =
                    if self.regs.contains_key(&rid) && self.reg_slots[self.reg(rid)?.index()] > 0 {
                        Some(self.reg(rid)?)
                    } else {
                        None
                    };
                Some(Inst::Call {
                    d,
                    f,
                    args: args.into_boxed_slice(),
                })
            }
            o if is_group_op(o) => {
                self.uses_subgroups = true;
                let (g, d) = self.group(i)?;
                Some(Inst::Group(Box::new(g), d))
            }
            other => return Err(unsupported(format!("the instruction {}", op_name(other)))),
        })
    }

    fn scalar_type_id(&mut self, s: Scalar) -> Result<TypeId, SpirvError> {
        if let Some(k) = self.types.list.iter().position(|t| *t == Type::Scalar(s)) {
            return Ok(k as TypeId);
        }
        self.types.list.push(Type::Scalar(s));
        Ok((self.types.list.len() - 1) as TypeId)
    }

    fn matrix_op(&mut self, i: &Instruction) -> Result<Inst, SpirvError> {
        let op = i.class.opcode;
        let d = self.reg(i.result_id.unwrap_or(0))?;
        let a_id = id_at(i, 0)?;
        let a = self.value(a_id)?;
        let mat_dims = |s: &Self, id: u32| -> Result<(u32, u32, u8), SpirvError> {
            match s.types.get(s.type_of_value(id)?) {
                Type::Matrix { col, cols } => match s.types.get(*col) {
                    Type::Vector { elem, n } => Ok((*n, *cols, elem.bits() as u8)),
                    _ => Err(SpirvError::malformed("matrix column")),
                },
                _ => Err(SpirvError::malformed("expected a matrix")),
            }
        };
        Ok(match op {
            SOp::Transpose => {
                let (rows, cols, _) = mat_dims(self, a_id)?;
                Inst::Transpose {
                    rows,
                    cols,
                    d,
                    m: a,
                }
            }
            SOp::Dot => {
                let (s, n) = self.sv_of(a_id)?;
                let b = self.value(id_at(i, 1)?)?;
                Inst::Dot {
                    w: s.bits() as u8,
                    n,
                    d,
                    a,
                    b,
                }
            }
            SOp::MatrixTimesVector => {
                let (rows, cols, w) = mat_dims(self, a_id)?;
                Inst::MatTimesVec {
                    w,
                    rows,
                    cols,
                    d,
                    m: a,
                    v: self.value(id_at(i, 1)?)?,
                }
            }
            SOp::VectorTimesMatrix => {
                let b_id = id_at(i, 1)?;
                let (rows, cols, w) = mat_dims(self, b_id)?;
                Inst::VecTimesMat {
                    w,
                    rows,
                    cols,
                    d,
                    v: a,
                    m: self.value(b_id)?,
                }
            }
            SOp::MatrixTimesMatrix => {
                let b_id = id_at(i, 1)?;
                let (rows, inner, w) = mat_dims(self, a_id)?;
                let (_, cols, _) = mat_dims(self, b_id)?;
                Inst::MatTimesMat {
                    w,
                    rows,
                    inner,
                    cols,
                    d,
                    a,
                    b: self.value(b_id)?,
                }
            }
            _ => {
                // OpOuterProduct
                let (s, rows) = self.sv_of(a_id)?;
                let b_id = id_at(i, 1)?;
                let (_, cols) = self.sv_of(b_id)?;
                Inst::Outer {
                    w: s.bits() as u8,
                    rows,
                    cols,
                    d,
                    a,
                    b: self.value(b_id)?,
                }
            }
        })
    }

    fn ext_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let set = id_at(i, 0)?;
        match self.ids.get(&set) {
            Some(Id::NonSemantic) => return Ok(None),
            Some(Id::Glsl) => {}
            _ => return Err(SpirvError::malformed("OpExtInst of an unknown set")),
        }
        let num = match i.operands.get(1) {
            Some(Operand::LiteralExtInstInteger(n)) | Some(Operand::LiteralBit32(n)) => *n,
            _ => {
                return Err(SpirvError::malformed(
                    "OpExtInst without an instruction number",
                ))
            }
        };
        let rid = i.result_id.unwrap_or(0);
        let d = self.reg(rid)?;
        let arg_ids: Vec<u32> = i.operands[2..]
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(x) => Some(*x),
                _ => None,
            })
            .collect();
        use Ext::*;
        let f = match num {
            1 => Round,
            2 => RoundEven,
            3 => Trunc,
            4 => FAbs,
            5 => SAbs,
            6 => FSign,
            7 => SSign,
            8 => Floor,
            9 => Ceil,
            10 => Fract,
            11 => Radians,
            12 => Degrees,
            13 => Sin,
            14 => Cos,
            15 => Tan,
            16 => Asin,
            17 => Acos,
            18 => Atan,
            19 => Sinh,
            20 => Cosh,
            21 => Tanh,
            22 => Asinh,
            23 => Acosh,
            24 => Atanh,
            25 => Atan2,
            26 => Pow,
            27 => Exp,
            28 => Log,
            29 => Exp2,
            30 => Log2,
            31 => Sqrt,
            32 => InverseSqrt,
            37 => FMin,
            38 => UMin,
            39 => SMin,
            40 => FMax,
            41 => UMax,
            42 => SMax,
            43 => FClamp,
            44 => UClamp,
            45 => SClamp,
            46 => FMix,
            48 => Step,
            49 => SmoothStep,
            50 => Fma,
            53 => Ldexp,
            54 => PackSnorm4x8,
            55 => PackUnorm4x8,
            56 => PackSnorm2x16,
            57 => PackUnorm2x16,
            58 => PackHalf2x16,
            59 => PackDouble2x32,
            60 => UnpackSnorm2x16,
            61 => UnpackUnorm2x16,
            62 => UnpackHalf2x16,
            63 => UnpackSnorm4x8,
            64 => UnpackUnorm4x8,
            65 => UnpackDouble2x32,
            66 => Length,
            67 => Distance,
            68 => Cross,
            33 | 34 => {
                // Determinant / MatrixInverse of a square matrix: the matrix's slots as one operand.
                let m = self.value(arg_ids[0])?;
                let t = self.type_of_value(arg_ids[0])?;
                let (s, n) = match self.types.get(t) {
                    Type::Matrix { col, cols } => match self.types.get(*col) {
                        Type::Vector { elem, n } if n == cols => (*elem, *n),
                        _ => {
                            return Err(SpirvError::malformed(
                                "Determinant/MatrixInverse of a non-square matrix",
                            ))
                        }
                    },
                    _ => {
                        return Err(SpirvError::malformed(
                            "Determinant/MatrixInverse of a non-matrix",
                        ))
                    }
                };
                if m == d {
                    return Err(SpirvError::malformed("an instruction uses its own result"));
                }
                return Ok(Some(Inst::Ext {
                    f: if num == 33 {
                        Determinant
                    } else {
                        MatrixInverse
                    },
                    s,
                    w1: 0,
                    n,
                    d,
                    args: [m, Reg::default(), Reg::default()],
                    nargs: 1,
                    relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
                }));
            }
            69 => Normalize,
            73 => FindILsb,
            74 => FindSMsb,
            75 => FindUMsb,
            79 => NMin,
            80 => NMax,
            81 => NClamp,
            35 | 51 => {
                // Modf / Frexp with an out pointer.
                let x = self.value(arg_ids[0])?;
                let (s, n) = self.sv_of(arg_ids[0])?;
                let (t, m, _) = self.pointee(
                    *arg_ids
                        .get(1)
                        .ok_or_else(|| SpirvError::malformed("Modf/Frexp pointer"))?,
                )?;
                let plan = self.plan(t, m)?;
                let ptr = self.value(arg_ids[1])?;
                return Ok(Some(Inst::ExtOut {
                    frexp: num == 51,
                    w: s.bits() as u8,
                    n,
                    d,
                    x,
                    ptr,
                    plan,
                }));
            }
            36 | 52 => {
                // ModfStruct / FrexpStruct: a struct of two members of x's shape (the second an
                // integer of its own width for FrexpStruct).
                let x = self.value(arg_ids[0])?;
                let (s, n) = self.sv_of(arg_ids[0])?;
                let t = self.ty(i.result_type.unwrap_or(0))?;
                let w1 = match self.types.get(t) {
                    Type::Struct { members, .. } if members.len() == 2 => self
                        .types
                        .scalar_vector(members[1])
                        .map(|(e, _)| e.bits() as u8)
                        .ok_or_else(|| {
                            SpirvError::malformed(
                                "ModfStruct/FrexpStruct member is not a scalar or vector",
                            )
                        })?,
                    _ => {
                        return Err(SpirvError::malformed(
                            "ModfStruct/FrexpStruct result is not a struct of two members",
                        ))
                    }
                };
                if x == d {
                    return Err(SpirvError::malformed("an instruction uses its own result"));
                }
                return Ok(Some(Inst::Ext {
                    f: if num == 36 { ModfStruct } else { FrexpStruct },
                    s,
                    w1,
                    n,
                    d,
                    args: [x, Reg::default(), Reg::default()],
                    nargs: 1,
                    relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
                }));
            }
            70 => FaceForward,
            71 => Reflect,
            72 => Refract,
            other => {
                let name = [
                    (47, "IMix"),
                    (76, "InterpolateAtCentroid"),
                    (77, "InterpolateAtSample"),
                    (78, "InterpolateAtOffset"),
                ]
                .iter()
                .find(|(n, _)| *n == other)
                .map(|(_, s)| *s)
                .unwrap_or("an unknown instruction");
                return Err(unsupported(format!("GLSL.std.450 {name} ({other})")));
            }
        };
        let first = *arg_ids
            .first()
            .ok_or_else(|| SpirvError::malformed("OpExtInst without operands"))?;
        let (s, n) = self.sv_of(first)?;
        let mut args = [Reg::default(); 3];
        if arg_ids.len() > 3 {
            return Err(SpirvError::malformed("too many operands"));
        }
        for (k, a) in arg_ids.iter().enumerate() {
            args[k] = self.value(*a)?;
            if args[k] == d {
                return Err(SpirvError::malformed("an instruction uses its own result"));
            }
        }
        let w1 = match arg_ids.get(1) {
            Some(a) => self.sv_of(*a)?.0.bits() as u8,
            None => 0,
        };
        Ok(Some(Inst::Ext {
            f,
            s,
            w1,
            n,
            d,
            args,
            nargs: arg_ids.len() as u8,
            relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
        }))
    }

    fn atomic(&mut self, i: &Instruction) -> Result<Inst, SpirvError> {
        let op = i.class.opcode;
        let pid = id_at(i, 0)?;
        let (t, _, storage) = self.pointee(pid)?;
        // Uniform: a storage buffer declared the old way (BufferBlock); a store to a real uniform
        // buffer is refused when it runs.
        if !matches!(
            storage,
            Storage::StorageBuffer | Storage::Workgroup | Storage::Uniform
        ) {
            return Err(unsupported(format!(
                "an atomic on {} memory",
                storage.name()
            )));
        }
        let s = match self.types.get(t) {
            Type::Scalar(
                s @ (Scalar::Int { width: 32 | 64, .. }
                | Scalar::Float {
                    width: 16 | 32 | 64,
                }),
            ) => *s,
            other => return Err(unsupported(format!("an atomic on {other:?}"))),
        };
        let ptr = self.value(pid)?;
        let d = match op {
            SOp::AtomicStore => None,
            _ => Some(self.reg(i.result_id.unwrap_or(0))?),
        };
        use AtomicOp as A;
        let (o, v, cmp) = match op {
            SOp::AtomicLoad => (A::Load, None, None),
            SOp::AtomicStore => (A::Store, Some(self.value(id_at(i, 3)?)?), None),
            SOp::AtomicIIncrement => (A::Inc, None, None),
            SOp::AtomicIDecrement => (A::Dec, None, None),
            SOp::AtomicCompareExchange => (
                A::CompareExchange,
                Some(self.value(id_at(i, 4)?)?),
                Some(self.value(id_at(i, 5)?)?),
            ),
            _ => {
                let o = match op {
                    SOp::AtomicExchange => A::Exchange,
                    SOp::AtomicIAdd => A::Add,
                    SOp::AtomicISub => A::Sub,
                    SOp::AtomicSMin => A::SMin,
                    SOp::AtomicUMin => A::UMin,
                    SOp::AtomicSMax => A::SMax,
                    SOp::AtomicUMax => A::UMax,
                    SOp::AtomicAnd => A::And,
                    SOp::AtomicOr => A::Or,
                    SOp::AtomicXor => A::Xor,
                    SOp::AtomicFAddEXT => A::FAdd,
                    SOp::AtomicFMinEXT => A::FMin,
                    _ => A::FMax,
                };
                (o, Some(self.value(id_at(i, 3)?)?), None)
            }
        };
        let scope = crate::spirv::memory::Scope::from_spirv(self.const_u32(id_at(i, 1)?)?);
        let sem = self.const_u32(id_at(i, 2)?)?;
        Ok(Inst::Atomic {
            op: o,
            s,
            d,
            ptr,
            v,
            cmp,
            scope,
            sem,
        })
    }

    fn group(&mut self, i: &Instruction) -> Result<(Group, Reg), SpirvError> {
        let op = i.class.opcode;
        let d = self.reg(i.result_id.unwrap_or(0))?;
        let scope = self.const_u32(id_at(i, 0)?)?;
        if scope != 3 {
            return Err(unsupported(format!(
                "{} with scope {} (only Subgroup scope, 3)",
                op_name(op),
                scope
            )));
        }
        let (rs, rn) = self.result_sv(i)?;
        // Operands after the scope: [GroupOperation] then ids (and literals for quad swap).
        let mut k = 1;
        let mut gop = None;
        if let Some(Operand::GroupOperation(g)) = i.operands.get(1) {
            gop = Some(*g);
            k = 2;
        }
        let ids: Vec<u32> = i.operands[k..]
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(x) => Some(*x),
                _ => None,
            })
            .collect();
        let id = |n: usize| -> Result<u32, SpirvError> {
            ids.get(n)
                .copied()
                .ok_or_else(|| SpirvError::malformed(format!("{} operand", op_name(op))))
        };
        let mut g = Group {
            op: Op::Elect,
            value: None,
            lane_arg: None,
            ballot: None,
            cluster: None,
            result: (rs, rn),
        };
        let value_as = |s: &mut Self,
                        vid: u32,
                        signed: Option<bool>|
         -> Result<(Reg, Scalar, u32), SpirvError> {
            let (sc, n) = s.sv_of(vid)?;
            let sc = match (sc, signed) {
                (Scalar::Int { width, .. }, Some(sg)) => Scalar::Int { width, signed: sg },
                (sc, _) => sc,
            };
            Ok((s.value(vid)?, sc, n))
        };
        let arith = |o: SOp| -> Option<(BinOp, Option<bool>)> {
            Some(match o {
                SOp::GroupNonUniformIAdd | SOp::GroupNonUniformFAdd => (BinOp::Add, None),
                SOp::GroupNonUniformIMul | SOp::GroupNonUniformFMul => (BinOp::Mul, None),
                SOp::GroupNonUniformSMin => (BinOp::Min, Some(true)),
                SOp::GroupNonUniformUMin => (BinOp::Min, Some(false)),
                SOp::GroupNonUniformFMin => (BinOp::Min, None),
                SOp::GroupNonUniformSMax => (BinOp::Max, Some(true)),
                SOp::GroupNonUniformUMax => (BinOp::Max, Some(false)),
                SOp::GroupNonUniformFMax => (BinOp::Max, None),
                SOp::GroupNonUniformBitwiseAnd | SOp::GroupNonUniformLogicalAnd => {
                    (BinOp::And, None)
                }
                SOp::GroupNonUniformBitwiseOr | SOp::GroupNonUniformLogicalOr => (BinOp::Or, None),
                SOp::GroupNonUniformBitwiseXor | SOp::GroupNonUniformLogicalXor => {
                    (BinOp::Xor, None)
                }
                _ => return None,
            })
        };
        match op {
            SOp::GroupNonUniformElect => g.op = Op::Elect,
            SOp::GroupNonUniformAll | SOp::GroupNonUniformAny => {
                g.op = if op == SOp::GroupNonUniformAll {
                    Op::All
                } else {
                    Op::Any
                };
                g.value = Some(value_as(self, id(0)?, None)?);
            }
            SOp::GroupNonUniformAllEqual => {
                g.op = Op::AllEqual;
                g.value = Some(value_as(self, id(0)?, None)?);
            }
            SOp::GroupNonUniformBroadcast => {
                g.op = Op::Broadcast;
                g.value = Some(value_as(self, id(0)?, None)?);
                g.lane_arg = Some(self.value(id(1)?)?);
            }
            SOp::GroupNonUniformBroadcastFirst => {
                g.op = Op::BroadcastFirst;
                g.value = Some(value_as(self, id(0)?, None)?);
            }
            SOp::GroupNonUniformBallot => {
                g.op = Op::Ballot;
                g.value = Some(value_as(self, id(0)?, None)?);
            }
            SOp::GroupNonUniformInverseBallot => {
                g.op = Op::InverseBallot;
                g.ballot = Some(self.value(id(0)?)?);
            }
            SOp::GroupNonUniformBallotBitExtract => {
                g.op = Op::BallotBitExtract;
                g.ballot = Some(self.value(id(0)?)?);
                g.lane_arg = Some(self.value(id(1)?)?);
            }
            SOp::GroupNonUniformBallotBitCount => {
                g.op = Op::BallotBitCount(scan_of(gop)?);
                g.ballot = Some(self.value(id(0)?)?);
            }
            SOp::GroupNonUniformBallotFindLSB => {
                g.op = Op::BallotFindLsb;
                g.ballot = Some(self.value(id(0)?)?);
            }
            SOp::GroupNonUniformBallotFindMSB => {
                g.op = Op::BallotFindMsb;
                g.ballot = Some(self.value(id(0)?)?);
            }
            SOp::GroupNonUniformShuffle
            | SOp::GroupNonUniformShuffleXor
            | SOp::GroupNonUniformShuffleUp
            | SOp::GroupNonUniformShuffleDown => {
                g.op = match op {
                    SOp::GroupNonUniformShuffle => Op::Shuffle,
                    SOp::GroupNonUniformShuffleXor => Op::ShuffleXor,
                    SOp::GroupNonUniformShuffleUp => Op::ShuffleUp,
                    _ => Op::ShuffleDown,
                };
                g.value = Some(value_as(self, id(0)?, None)?);
                g.lane_arg = Some(self.value(id(1)?)?);
            }
            SOp::GroupNonUniformQuadBroadcast => {
                g.op = Op::QuadBroadcast;
                g.value = Some(value_as(self, id(0)?, None)?);
                g.lane_arg = Some(self.value(id(1)?)?);
            }
            SOp::GroupNonUniformQuadSwap => {
                let dir = self.const_u32(id(1)?)?;
                g.op = Op::QuadSwap(match dir {
                    0 => QuadDir::Horizontal,
                    1 => QuadDir::Vertical,
                    2 => QuadDir::Diagonal,
                    x => return Err(SpirvError::malformed(format!("quad swap direction {x}"))),
                });
                g.value = Some(value_as(self, id(0)?, None)?);
            }
            SOp::GroupNonUniformRotateKHR => {
                g.value = Some(value_as(self, id(0)?, None)?);
                g.lane_arg = Some(self.value(id(1)?)?);
                match ids.get(2) {
                    Some(c) => {
                        g.op = Op::ClusteredRotate;
                        g.cluster = Some(self.const_u32(*c)?);
                    }
                    None => g.op = Op::Rotate,
                }
            }
            o => {
                let Some((b, signed)) = arith(o) else {
                    return Err(unsupported(format!("the instruction {}", op_name(o))));
                };
                g.value = Some(value_as(self, id(0)?, signed)?);
                match gop {
                    Some(spirv::GroupOperation::ClusteredReduce) => {
                        g.op = Op::Clustered(b);
                        g.cluster = Some(self.const_u32(id(1)?)?);
                    }
                    other => g.op = Op::Arithmetic(b, scan_of(other)?),
                }
            }
        }
        // The catalogue must know the op with this value type (e.g. no floats for And).
        if let Some((_, s, n)) = g.value {
            let mt = s
                .model_type()
                .ok_or_else(|| SpirvError::malformed("group op on a pointer"))?;
            let vt = ValueType::new(mt, n.min(4) as u8)
                .map_err(|e| SpirvError::malformed(e.to_string()))?;
            if n > 4 || !info(g.op).accepts(vt) {
                return Err(SpirvError::malformed(format!(
                    "{} on {} values ({} takes {})",
                    op_name(op),
                    vt,
                    info(g.op).glsl,
                    info(g.op).types.describe()
                )));
            }
            let _ = ScalarType::ALL;
        }
        let _ = MaskKind::Eq;
        Ok((g, d))
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

fn is_group_op(o: SOp) -> bool {
    format!("{o:?}").starts_with("GroupNonUniform")
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
    i.operands[k.min(i.operands.len())..]
        .iter()
        .filter_map(|o| match o {
            Operand::LiteralBit32(x) => Some(*x),
            _ => None,
        })
        .collect()
}

/// The successors of a block's terminator.
fn successors(t: &Term) -> Vec<BlockIdx> {
    match t {
        Term::Branch(b) => vec![*b],
        Term::Cond { t, f, .. } => vec![*t, *f],
        Term::Switch { default, cases, .. } => {
            let mut v: Vec<BlockIdx> = cases.iter().map(|c| c.1).collect();
            v.push(*default);
            v
        }
        Term::Return | Term::ReturnValue(_) | Term::Unreachable => Vec::new(),
    }
}

/// For each header: whether its construct can be left other than through its merge (`escapes`),
/// and for loops the registers its blocks define (`loop_defs`).
///
/// The walk goes from the header without passing its merge. Leaving the construct another way
/// (a break or continue of an enclosing construct) leads on to code that ends in a return, so a
/// walk that reaches a function exit escapes; structured rules let a loop be left only through
/// its merge or a return, so the blocks a loop's walk reaches are its construct.
fn construct_extents(blocks: &mut [Block]) {
    for h in 0..blocks.len() {
        let merge = match blocks[h].merge {
            Merge::Selection(m) => m,
            Merge::Loop { merge, .. } => merge,
            Merge::None => continue,
        };
        let mut seen = vec![false; blocks.len()];
        let mut stack = vec![h as BlockIdx];
        seen[h] = true;
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
            for s in successors(&blk.term) {
                if s != merge && !seen[s as usize] {
                    seen[s as usize] = true;
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
    let calls: Vec<HashSet<FuncIdx>> = funcs
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .flat_map(|b| b.insts.iter())
                .filter_map(|i| match i {
                    Inst::Call { f, .. } => Some(*f),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut state = vec![0u8; funcs.len()];
    fn visit(
        k: usize,
        calls: &[HashSet<FuncIdx>],
        state: &mut [u8],
        funcs: &[Func],
    ) -> Result<(), SpirvError> {
        state[k] = 1;
        for &c in &calls[k] {
            match state[c as usize] {
                1 => {
                    return Err(SpirvError::malformed(format!(
                        "recursion: {} calls {} again (Vulkan forbids recursion)",
                        funcs[k].name, funcs[c as usize].name
                    )))
                }
                0 => visit(c as usize, calls, state, funcs)?,
                _ => {}
            }
        }
        state[k] = 2;
        Ok(())
    }
    for k in 0..funcs.len() {
        if state[k] == 0 {
            visit(k, &calls, &mut state, funcs)?;
        }
    }
    Ok(())
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
