//! What a compute module needs and declares, read with rspirv before anything reaches the driver:
//! capabilities, extensions, the entry point's execution modes and workgroup size, the buffers
//! it binds (kind, block name, declared size) and its push constant block.
//!
//! Only what the device runner checks is read. The workgroup size and the constants it and the
//! array lengths depend on are read and folded by [`crate::words::facts`], as the interpreter's
//! decoder reads them: one folding of `OpSpecConstantOp` for the model and the device.

use crate::words::facts::{workgroup_size, Constants};
use crate::words::layout::{id, interface, lit, Index, Interface};
use rspirv::dr::{Module, Operand};
use rspirv::spirv::{Capability, ExecutionMode, ExecutionModel, Op};
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

pub(crate) use crate::words::layout::BindingInfo;

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

/// Bit width of a scalar or vector numeric type and whether it is a float (None otherwise).
fn scalar_kind(ix: &Index<'_>, ty: u32) -> Option<(u64, bool)> {
    let i = ix.defs.get(&ty)?;
    match i.class.opcode {
        Op::TypeInt => Some((lit(i.operands.first())?, false)),
        Op::TypeFloat => Some((lit(i.operands.first())?, true)),
        Op::TypeVector => scalar_kind(ix, id(i.operands.first())?),
        _ => None,
    }
}

fn is_constant(ix: &Index<'_>, c: u32) -> bool {
    ix.defs.get(&c).is_some_and(|i| {
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
    let consts = Constants::new(module, &spec_bits);
    let ix = Index::new(module);

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
    let local_size = workgroup_size(module, function, &consts)?;

    // Buffers and push constants, laid out as the interpreter's decoder checks them.
    let Interface {
        bindings,
        push_size,
    } = interface(&ix, module, &consts);

    // Group operations that need optional features.
    let mut extended_type_op = None;
    let mut dynamic_broadcast = None;
    let mut clustered_rotate = false;
    let extended = |t: u32| {
        scalar_kind(&ix, t).is_some_and(|(w, float)| if float { w == 16 } else { w != 32 })
    };
    let type_of = |x: u32| ix.defs.get(&x).and_then(|i| i.result_type);
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
                            && id(i.operands.get(2)).is_some_and(|x| !is_constant(&ix, x)) =>
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
