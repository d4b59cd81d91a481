//! The interface a compute module declares to the host, read one way for the model and the
//! device: its descriptor bindings (set, binding, block name, the bytes the block declares, whether
//! it ends in a runtime array, whether it is an array of descriptors) and its push-constant block's
//! size — the explicit layout of each block (`Offset`, `ArrayStride`, `MatrixStride`, `RowMajor`)
//! with array lengths from the module's constants, specialized and folded by [`crate::words::facts`].
//! Vulkan-free: the device runner's reflection checks a dispatch against it before the driver sees
//! it, and the interpreter's decoder checks its own layout of each buffer against it.

use crate::words::facts::Constants;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass};
use std::collections::HashMap;

/// A buffer binding the module declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BindingInfo {
    /// the variable's result id
    pub var: u32,
    /// the block's name (GLSL block name, else the variable's), for messages
    pub name: String,
    /// bytes the block declares — up to its last byte (an array's last element, a struct's
    /// furthest member; no trailing padding), its fixed part when it ends in a runtime array;
    /// `None` when a size depends on something not read here
    pub size: Option<u64>,
    /// the block ends in a runtime array (its size is a minimum)
    pub runtime_array: bool,
    /// more than one descriptor (an array of blocks)
    pub array: bool,
}

/// The module's host interface.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interface {
    /// buffers (and other descriptors) by (set, binding)
    pub bindings: HashMap<(u32, u32), BindingInfo>,
    /// the push constant block's size in bytes (offset of its end)
    pub push_size: Option<u64>,
}

pub(crate) fn lit(o: Option<&Operand>) -> Option<u64> {
    match o? {
        Operand::LiteralBit32(x) => Some(*x as u64),
        Operand::LiteralBit64(x) => Some(*x),
        _ => None,
    }
}

pub(crate) fn id(o: Option<&Operand>) -> Option<u32> {
    match o? {
        Operand::IdRef(x) => Some(*x),
        _ => None,
    }
}

/// A module's definitions, decorations and names by id.
pub struct Index<'a> {
    /// result id → its instruction
    pub defs: HashMap<u32, &'a Instruction>,
    decorations: HashMap<u32, Vec<&'a Instruction>>,
    member_decorations: HashMap<(u32, u32), Vec<&'a Instruction>>,
    /// `OpName`s
    pub names: HashMap<u32, String>,
}

impl<'a> Index<'a> {
    /// Indexes `module`.
    pub fn new(module: &'a Module) -> Index<'a> {
        let mut r = Index {
            defs: HashMap::new(),
            decorations: HashMap::new(),
            member_decorations: HashMap::new(),
            names: HashMap::new(),
        };
        for i in module.all_inst_iter() {
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
        r
    }

    fn decoration(&self, target: u32, d: Decoration) -> Option<&'a Instruction> {
        self.decorations
            .get(&target)?
            .iter()
            .copied()
            .find(|i| matches!(i.operands.get(1), Some(Operand::Decoration(x)) if *x == d))
    }

    /// The literal of decoration `d` on `target` (`Binding`, `ArrayStride`, …).
    pub fn decoration_value(&self, target: u32, d: Decoration) -> Option<u64> {
        lit(self.decoration(target, d)?.operands.get(2))
    }

    fn member_decoration(&self, st: u32, member: u32, d: Decoration) -> Option<&'a Instruction> {
        self.member_decorations
            .get(&(st, member))?
            .iter()
            .copied()
            .find(|i| matches!(i.operands.get(2), Some(Operand::Decoration(x)) if *x == d))
    }
}

/// Reads the layout of blocks: sizes under their explicit layout decorations.
struct Sizer<'a, 'b> {
    ix: &'b Index<'a>,
    consts: &'b Constants<'a>,
}

impl Sizer<'_, '_> {
    /// Size in bytes of a type laid out in a block — the extent of its last byte: an array's last
    /// element ends `ArrayStride × (length − 1)` plus the element's size after its start, a
    /// struct ends where its furthest member does — and whether it ends in a runtime array.
    /// `mat` is the `MatrixStride` and `RowMajor` of the struct member a matrix (or an array of
    /// them) is. `depth` guards against malformed self-referencing types.
    fn size(&self, ty: u32, mat: Option<(u64, bool)>, depth: u32) -> Option<(u64, bool)> {
        if depth > 64 {
            return None;
        }
        let i = self.ix.defs.get(&ty)?;
        match i.class.opcode {
            Op::TypeInt | Op::TypeFloat => Some((lit(i.operands.first())? / 8, false)),
            Op::TypeVector => {
                let (c, _) = self.size(id(i.operands.first())?, None, depth + 1)?;
                Some((c.checked_mul(lit(i.operands.get(1))?)?, false))
            }
            Op::TypeMatrix => {
                let cols = lit(i.operands.get(1))?;
                let col = self.ix.defs.get(&id(i.operands.first())?)?;
                let (csize, _) = self.size(id(i.operands.first())?, None, depth + 1)?;
                match mat {
                    // Without a MatrixStride (outside a struct member): tightly packed columns.
                    None => Some((csize.checked_mul(cols)?, false)),
                    Some((stride, row_major)) => {
                        let rows = lit(col.operands.get(1))?;
                        let comp = csize / rows.max(1);
                        let (n, per) = if row_major {
                            (rows, cols)
                        } else {
                            (cols, rows)
                        };
                        Some((
                            n.checked_sub(1)?
                                .checked_mul(stride)?
                                .checked_add(per.checked_mul(comp)?)?,
                            false,
                        ))
                    }
                }
            }
            Op::TypePointer | Op::TypeForwardPointer => Some((8, false)),
            Op::TypeArray => {
                let stride = self.ix.decoration_value(ty, Decoration::ArrayStride)?;
                let len = self
                    .consts
                    .value(id(i.operands.get(1))?)?
                    .1
                    .first()
                    .copied()?;
                if len == 0 {
                    return Some((0, false));
                }
                let (esize, _) = self.size(id(i.operands.first())?, mat, depth + 1)?;
                Some((stride.checked_mul(len - 1)?.checked_add(esize)?, false))
            }
            Op::TypeRuntimeArray => Some((0, true)),
            Op::TypeStruct => {
                let mut end = 0u64;
                let mut runtime = false;
                for (m, op) in i.operands.iter().enumerate() {
                    let m = m as u32;
                    let member_ty = id(Some(op))?;
                    let offset = lit(self
                        .ix
                        .member_decoration(ty, m, Decoration::Offset)?
                        .operands
                        .get(3))?;
                    let mat = self
                        .ix
                        .member_decoration(ty, m, Decoration::MatrixStride)
                        .and_then(|d| lit(d.operands.get(3)))
                        .map(|stride| {
                            let rm = self
                                .ix
                                .member_decoration(ty, m, Decoration::RowMajor)
                                .is_some();
                            (stride, rm)
                        });
                    let (size, rt) = self.size(member_ty, mat, depth + 1)?;
                    runtime |= rt;
                    end = end.max(offset.checked_add(size)?);
                }
                Some((end, runtime))
            }
            _ => None,
        }
    }
}

/// The bindings and push-constant size `module` declares (every descriptor variable of the
/// module; which of them an entry point uses is the caller's question), with array lengths from
/// `consts`.
pub(crate) fn interface<'a>(
    ix: &Index<'a>,
    module: &'a Module,
    consts: &Constants<'a>,
) -> Interface {
    let sizer = Sizer { ix, consts };
    let mut out = Interface::default();
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
            .and_then(|p| ix.defs.get(&p))
            .and_then(|p| id(p.operands.get(1)));
        if *class == StorageClass::PushConstant {
            out.push_size = pointee.and_then(|t| sizer.size(t, None, 0)).map(|(s, _)| s);
            continue;
        }
        let (Some(set), Some(binding)) = (
            ix.decoration_value(var, Decoration::DescriptorSet),
            ix.decoration_value(var, Decoration::Binding),
        ) else {
            continue;
        };
        let mut block = pointee;
        let mut array = false;
        if let Some(t) = block.and_then(|t| ix.defs.get(&t))
            && matches!(t.class.opcode, Op::TypeArray | Op::TypeRuntimeArray)
        {
            array = true;
            block = id(t.operands.first());
        }
        let name = block
            .and_then(|b| ix.names.get(&b))
            .filter(|n| !n.is_empty())
            .or_else(|| ix.names.get(&var).filter(|n| !n.is_empty()))
            .cloned()
            .unwrap_or_else(|| format!("%{var}"));
        let sized = block.and_then(|b| sizer.size(b, None, 0));
        out.bindings.insert(
            (set as u32, binding as u32),
            BindingInfo {
                var,
                name,
                size: sized.map(|(s, _)| s),
                runtime_array: sized.is_some_and(|(_, rt)| rt),
                array,
            },
        );
    }
    out
}
