//! What a compute module needs and declares, read with rspirv before anything reaches the driver:
//! capabilities, extensions, the entry point's execution modes and workgroup size, the buffers
//! it binds (kind, block name, declared size) and its push constant block.
//!
//! Only what the device runner checks is read. The workgroup size and the constants it and the
//! array lengths depend on are read and folded by [`crate::words::facts`], as the interpreter's
//! decoder reads them: one folding of `OpSpecConstantOp` for the model and the device.

use crate::words::facts::{workgroup_size, Constants};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Capability, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass};
use std::collections::HashMap;

/// A specialization constant value, typed as the module declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpecConstant {
    /// `bool`
    Bool(bool),
    /// `int`
    I32(i32),
    /// `uint`
    U32(u32),
    /// `float`
    F32(f32),
    /// `int64_t`
    I64(i64),
    /// `uint64_t`
    U64(u64),
    /// `double`
    F64(f64),
    /// `int16_t`
    I16(i16),
    /// `uint16_t`
    U16(u16),
    /// `int8_t`
    I8(i8),
    /// `uint8_t`
    U8(u8),
    /// `float16_t`, as its bits
    F16(u16),
}

impl SpecConstant {
    /// The value's bits, zero-extended (as a SPIR-V literal holds them).
    pub fn bits(&self) -> u64 {
        match *self {
            SpecConstant::Bool(b) => b as u64,
            SpecConstant::I32(x) => x as u32 as u64,
            SpecConstant::U32(x) => x as u64,
            SpecConstant::F32(x) => x.to_bits() as u64,
            SpecConstant::I64(x) => x as u64,
            SpecConstant::U64(x) => x,
            SpecConstant::F64(x) => x.to_bits(),
            SpecConstant::I16(x) => x as u16 as u64,
            SpecConstant::U16(x) => x as u64,
            SpecConstant::I8(x) => x as u8 as u64,
            SpecConstant::U8(x) => x as u64,
            SpecConstant::F16(x) => x as u64,
        }
    }
}

/// A buffer binding the module declares.
#[derive(Clone, Debug)]
pub(crate) struct BindingInfo {
    /// the block's name (GLSL block name, else the variable's), for messages
    pub name: String,
    /// bytes the block declares: its fixed part when it ends in a runtime array; `None` when a
    /// size depends on something not read here
    pub size: Option<u64>,
    /// the block ends in a runtime array (its size is a minimum)
    pub runtime_array: bool,
    /// more than one descriptor (an array of blocks)
    pub array: bool,
}

/// The module as the device runner sees it.
#[derive(Clone, Debug)]
pub(crate) struct Reflection {
    /// SPIR-V version (major, minor)
    pub version: (u8, u8),
    /// declared capabilities
    pub capabilities: Vec<Capability>,
    /// declared extensions
    pub extensions: Vec<String>,
    /// the entry point's execution modes
    pub modes: Vec<ExecutionMode>,
    /// the workgroup size, when it is known (literal, or from constants and specialization)
    pub local_size: Option<[u32; 3]>,
    /// buffers by (set, binding)
    pub bindings: HashMap<(u32, u32), BindingInfo>,
    /// the push constant block's size in bytes (offset of its end)
    pub push_size: Option<u64>,
    /// the first group operation on an 8/16/64-bit integer or 16-bit float value (needs
    /// shaderSubgroupExtendedTypes)
    pub extended_type_op: Option<&'static str>,
    /// the first broadcast whose lane id is not a constant (needs subgroupBroadcastDynamicId)
    pub dynamic_broadcast: Option<&'static str>,
    /// a rotate with a cluster size (needs shaderSubgroupRotateClustered)
    pub clustered_rotate: bool,
}

fn lit(o: Option<&Operand>) -> Option<u64> {
    match o? {
        Operand::LiteralBit32(x) => Some(*x as u64),
        Operand::LiteralBit64(x) => Some(*x),
        _ => None,
    }
}

fn id(o: Option<&Operand>) -> Option<u32> {
    match o? {
        Operand::IdRef(x) => Some(*x),
        _ => None,
    }
}

struct Reader<'a> {
    defs: HashMap<u32, &'a Instruction>,
    decorations: HashMap<u32, Vec<&'a Instruction>>,
    member_decorations: HashMap<(u32, u32), Vec<&'a Instruction>>,
    names: HashMap<u32, String>,
    /// the module's constants, specialized and folded as the interpreter folds them
    consts: Constants<'a>,
}

impl<'a> Reader<'a> {
    fn decoration(&self, target: u32, d: Decoration) -> Option<&'a Instruction> {
        self.decorations
            .get(&target)?
            .iter()
            .copied()
            .find(|i| matches!(i.operands.get(1), Some(Operand::Decoration(x)) if *x == d))
    }

    fn decoration_value(&self, target: u32, d: Decoration) -> Option<u64> {
        lit(self.decoration(target, d)?.operands.get(2))
    }

    fn member_decoration(&self, st: u32, member: u32, d: Decoration) -> Option<&'a Instruction> {
        self.member_decorations
            .get(&(st, member))?
            .iter()
            .copied()
            .find(|i| matches!(i.operands.get(2), Some(Operand::Decoration(x)) if *x == d))
    }

    /// The value of a scalar integer or boolean constant, specialized (`OpSpecConstantOp`
    /// folded by [`crate::words::facts`], as the interpreter folds it).
    fn constant(&self, c: u32) -> Option<u64> {
        self.consts.value(c)?.1.first().copied()
    }

    fn is_constant(&self, c: u32) -> bool {
        self.defs.get(&c).is_some_and(|i| {
            matches!(
                i.class.opcode,
                Op::Constant
                    | Op::ConstantTrue
                    | Op::ConstantFalse
                    | Op::ConstantComposite
                    | Op::ConstantNull
                    | Op::SpecConstant
                    | Op::SpecConstantTrue
                    | Op::SpecConstantFalse
                    | Op::SpecConstantComposite
                    | Op::SpecConstantOp
            )
        })
    }

    /// Size in bytes of a type laid out in a block, and whether it ends in a runtime array.
    /// `depth` guards against malformed self-referencing types.
    fn size(&self, ty: u32, depth: u32) -> Option<(u64, bool)> {
        if depth > 64 {
            return None;
        }
        let i = self.defs.get(&ty)?;
        match i.class.opcode {
            Op::TypeInt | Op::TypeFloat => Some((lit(i.operands.first())? / 8, false)),
            Op::TypeVector => {
                let (c, _) = self.size(id(i.operands.first())?, depth + 1)?;
                Some((c.checked_mul(lit(i.operands.get(1))?)?, false))
            }
            Op::TypeMatrix => {
                // Without a MatrixStride (outside a struct member): tightly packed columns.
                let (col, _) = self.size(id(i.operands.first())?, depth + 1)?;
                Some((col.checked_mul(lit(i.operands.get(1))?)?, false))
            }
            Op::TypePointer | Op::TypeForwardPointer => Some((8, false)),
            Op::TypeArray => {
                let stride = self.decoration_value(ty, Decoration::ArrayStride)?;
                let len = self.constant(id(i.operands.get(1))?)?;
                Some((stride.checked_mul(len)?, false))
            }
            Op::TypeRuntimeArray => Some((0, true)),
            Op::TypeStruct => {
                let mut end = 0u64;
                let mut runtime = false;
                for (m, op) in i.operands.iter().enumerate() {
                    let member_ty = id(Some(op))?;
                    let offset = lit(self
                        .member_decoration(ty, m as u32, Decoration::Offset)?
                        .operands
                        .get(3))?;
                    let (size, rt) = self.member_size(ty, m as u32, member_ty, depth + 1)?;
                    runtime |= rt;
                    end = end.max(offset.checked_add(size)?);
                }
                Some((end, runtime))
            }
            _ => None,
        }
    }

    /// A struct member's size: a matrix member's columns (or rows) are MatrixStride apart.
    fn member_size(&self, st: u32, m: u32, ty: u32, depth: u32) -> Option<(u64, bool)> {
        let i = self.defs.get(&ty)?;
        if i.class.opcode != Op::TypeMatrix {
            return self.size(ty, depth);
        }
        let stride = lit(self
            .member_decoration(st, m, Decoration::MatrixStride)?
            .operands
            .get(3))?;
        let cols = lit(i.operands.get(1))?;
        let col = self.defs.get(&id(i.operands.first())?)?;
        let rows = lit(col.operands.get(1))?;
        let (comp, _) = self.size(id(col.operands.first())?, depth + 1)?;
        let row_major = self
            .member_decoration(st, m, Decoration::RowMajor)
            .is_some();
        let (n, per) = if row_major {
            (rows, cols)
        } else {
            (cols, rows)
        };
        Some((
            n.checked_sub(1)?
                .checked_mul(stride)?
                .checked_add(per * comp)?,
            false,
        ))
    }

    /// Bit width of a scalar or vector numeric type and whether it is a float (None otherwise).
    fn scalar_kind(&self, ty: u32) -> Option<(u64, bool)> {
        let i = self.defs.get(&ty)?;
        match i.class.opcode {
            Op::TypeInt => Some((lit(i.operands.first())?, false)),
            Op::TypeFloat => Some((lit(i.operands.first())?, true)),
            Op::TypeVector => self.scalar_kind(id(i.operands.first())?),
            _ => None,
        }
    }
}

/// Reads `module` for the entry point `entry` (a GLCompute entry point), with the given
/// specialization constants. Errors are bad-input messages.
pub(crate) fn reflect(
    module: &Module,
    entry: &str,
    spec: &[(u32, SpecConstant)],
) -> Result<Reflection, String> {
    let header = module.header.as_ref().ok_or("the module has no header")?;
    let version = ((header.version >> 16) as u8, (header.version >> 8) as u8);

    // The entry point, by name, with its execution model.
    let mut compute_names = Vec::new();
    let mut found = None;
    for e in &module.entry_points {
        let (Some(Operand::ExecutionModel(model)), Some(f), Some(Operand::LiteralString(name))) =
            (e.operands.first(), id(e.operands.get(1)), e.operands.get(2))
        else {
            continue;
        };
        if *model == ExecutionModel::GLCompute {
            compute_names.push(name.clone());
        }
        if name == entry {
            if *model == ExecutionModel::GLCompute {
                found = Some(f);
            } else if found.is_none() {
                return Err(format!(
                    "entry point '{entry}' is a {model:?} shader, not a compute (GLCompute) one"
                ));
            }
        }
    }
    let function = found.ok_or_else(|| {
        if compute_names.is_empty() {
            format!("the module has no compute entry point (asked for '{entry}')")
        } else {
            format!(
                "the module has no compute entry point '{entry}' (it has: {})",
                compute_names.join(", ")
            )
        }
    })?;

    let spec_bits: Vec<(u32, u64)> = spec.iter().map(|(k, v)| (*k, v.bits())).collect();
    let mut r = Reader {
        defs: HashMap::new(),
        decorations: HashMap::new(),
        member_decorations: HashMap::new(),
        names: HashMap::new(),
        consts: Constants::new(module, &spec_bits),
    };
    let all = module.all_inst_iter();
    for i in all {
        if let Some(rid) = i.result_id {
            r.defs.insert(rid, i);
        }
    }
    for a in &module.annotations {
        match a.class.opcode {
            Op::Decorate => {
                if let Some(t) = id(a.operands.first()) {
                    r.decorations.entry(t).or_default().push(a);
                }
            }
            Op::MemberDecorate => {
                if let (Some(t), Some(m)) = (id(a.operands.first()), lit(a.operands.get(1))) {
                    r.member_decorations
                        .entry((t, m as u32))
                        .or_default()
                        .push(a);
                }
            }
            _ => {}
        }
    }
    for n in &module.debug_names {
        if let (Op::Name, Some(t), Some(Operand::LiteralString(s))) =
            (n.class.opcode, id(n.operands.first()), n.operands.get(1))
        {
            r.names.insert(t, s.clone());
        }
    }

    // Execution modes and the workgroup size of this entry point (read and folded as the
    // interpreter reads them: `words::facts`).
    let mut modes = Vec::new();
    for m in &module.execution_modes {
        if id(m.operands.first()) != Some(function) {
            continue;
        }
        if let Some(Operand::ExecutionMode(mode)) = m.operands.get(1) {
            modes.push(*mode);
        }
    }
    let local_size = workgroup_size(module, function, &r.consts)?;

    // Buffers and push constants.
    let mut bindings = HashMap::new();
    let mut push_size = None;
    for v in &module.types_global_values {
        if v.class.opcode != Op::Variable {
            continue;
        }
        let Some(Operand::StorageClass(class)) = v.operands.first() else {
            continue;
        };
        let var = v.result_id.unwrap_or(0);
        let pointee = v
            .result_type
            .and_then(|p| r.defs.get(&p))
            .and_then(|p| id(p.operands.get(1)));
        if *class == StorageClass::PushConstant {
            push_size = pointee.and_then(|t| r.size(t, 0)).map(|(s, _)| s);
            continue;
        }
        let (Some(set), Some(binding)) = (
            r.decoration_value(var, Decoration::DescriptorSet),
            r.decoration_value(var, Decoration::Binding),
        ) else {
            continue;
        };
        let mut block = pointee;
        let mut array = false;
        if let Some(t) = block.and_then(|t| r.defs.get(&t))
            && matches!(t.class.opcode, Op::TypeArray | Op::TypeRuntimeArray)
        {
            array = true;
            block = id(t.operands.first());
        }
        let name = block
            .and_then(|b| r.names.get(&b))
            .filter(|n| !n.is_empty())
            .or_else(|| r.names.get(&var).filter(|n| !n.is_empty()))
            .cloned()
            .unwrap_or_else(|| format!("%{var}"));
        let sized = block.and_then(|b| r.size(b, 0));
        bindings.insert(
            (set as u32, binding as u32),
            BindingInfo {
                name,
                size: sized.map(|(s, _)| s),
                runtime_array: sized.is_some_and(|(_, rt)| rt),
                array,
            },
        );
    }

    // Group operations that need optional features.
    let mut extended_type_op = None;
    let mut dynamic_broadcast = None;
    let mut clustered_rotate = false;
    let extended = |t: u32| {
        r.scalar_kind(t)
            .is_some_and(|(w, float)| if float { w == 16 } else { w != 32 })
    };
    let type_of = |x: u32| r.defs.get(&x).and_then(|i| i.result_type);
    for f in &module.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                let name = i.class.opname;
                if !name.starts_with("GroupNonUniform") {
                    continue;
                }
                if extended_type_op.is_none() {
                    let operand_types = i
                        .operands
                        .iter()
                        .filter_map(|o| id(Some(o)).and_then(type_of));
                    if i.result_type.into_iter().chain(operand_types).any(extended) {
                        extended_type_op = Some(name);
                    }
                }
                match i.class.opcode {
                    Op::GroupNonUniformBroadcast | Op::GroupNonUniformQuadBroadcast
                        if dynamic_broadcast.is_none()
                            && id(i.operands.get(2)).is_some_and(|x| !r.is_constant(x)) =>
                    {
                        dynamic_broadcast = Some(name);
                    }
                    Op::GroupNonUniformRotateKHR => clustered_rotate |= i.operands.len() > 3,
                    _ => {}
                }
            }
        }
    }

    Ok(Reflection {
        version,
        capabilities: module
            .capabilities
            .iter()
            .filter_map(|c| match c.operands.first() {
                Some(Operand::Capability(c)) => Some(*c),
                _ => None,
            })
            .collect(),
        extensions: module
            .extensions
            .iter()
            .filter_map(|e| match e.operands.first() {
                Some(Operand::LiteralString(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        modes,
        local_size,
        bindings,
        push_size,
        extended_type_op,
        dynamic_broadcast,
        clustered_rotate,
    })
}
