//! Facts about a SPIR-V module that the interpreter's decoder and the device runner's reflection
//! both need, read and folded one way: specialization constants (with `OpSpecConstantOp` folded by
//! the integer rules the interpreter executes, [`crate::words::int`]) and the workgroup size they
//! give. Vulkan-free.
//!
//! Before this module the device runner read the workgroup size on its own and did not fold
//! `OpSpecConstantOp`, so a size defined through one was known to the model and not to the device
//! (whose limit checks were then skipped).

use crate::words::int::{self as scalar, IntBin, IntCmp, IntUn, ScalarUndef};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, ExecutionMode, Op as SOp};
use std::collections::HashMap;

/// The scalar kind of a value's component: what a SPIR-V constant folds as, and what one slot
/// of an interpreter register holds (the one definition; `spirv::types` re-exports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool` (stored as 0/1; 4 bytes in memory)
    Bool,
    /// an integer of `width` bits (signedness is the instruction's business in SPIR-V, but the
    /// declared type's signedness is kept for displays and subgroup ops)
    Int {
        /// 8, 16, 32 or 64
        width: u8,
        /// declared signedness
        signed: bool,
    },
    /// a float of `width` bits (16, 32, 64)
    Float {
        /// 16, 32 or 64
        width: u8,
    },
    /// a logical pointer (object and byte offset, as `spirv::memory::Ptr` encodes it; folded as a
    /// 64-bit unsigned integer)
    Pointer,
}

impl Scalar {
    /// Size in bytes in memory.
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::Bool => 4,
            Scalar::Int { width, .. } | Scalar::Float { width } => width as u32 / 8,
            Scalar::Pointer => 8,
        }
    }

    /// Width in bits of the value (bool: 1).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 1,
            Scalar::Int { width, .. } | Scalar::Float { width } => width as u32,
            Scalar::Pointer => 64,
        }
    }

    /// True for floats.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float { .. })
    }

    /// The kind folding computes with: a pointer as a 64-bit unsigned integer.
    fn folded(self) -> Scalar {
        match self {
            Scalar::Pointer => Scalar::Int {
                width: 64,
                signed: false,
            },
            s => s,
        }
    }
}

/// The id operands and the 32-bit literal operands of `i` from operand `k` on (an
/// `OpSpecConstantOp`'s operands after its opcode: ids to fold, literal indices of composite
/// operations).
pub(crate) fn operands_from(i: &Instruction, k: usize) -> (Vec<u32>, Vec<u32>) {
    let rest = &i.operands[k.min(i.operands.len())..];
    let ids = rest
        .iter()
        .filter_map(|o| match o {
            Operand::IdRef(x) => Some(*x),
            _ => None,
        })
        .collect();
    let lits = rest
        .iter()
        .filter_map(|o| match o {
            Operand::LiteralBit32(x) => Some(*x),
            _ => None,
        })
        .collect();
    (ids, lits)
}

/// One component-wise `OpSpecConstantOp` operation (the ones Vulkan allows that act on each
/// component alone) on constant operands: `args` are each operand's scalar type and bits per
/// component (a scalar operand of a vector operation — `Select`'s condition — has one), `to` the
/// result's scalar type, `n` its components. `None` when `op` is not one of them (composite
/// operations, which need the types, and float conversions are the caller's).
pub(crate) fn fold_componentwise(
    op: SOp,
    args: &[(Scalar, &[u64])],
    to: Scalar,
    n: usize,
) -> Option<Result<Vec<u64>, ScalarUndef>> {
    let to = to.folded();
    let arg = |k: usize| args.get(k).map(|&(s, b)| (s.folded(), b));
    let at = |bits: &[u64], c: usize| bits.get(c).or(bits.first()).copied().unwrap_or(0);
    let width = |s: Scalar| s.bits() as u8;
    let int_bin = |o: IntBin| -> Option<Result<Vec<u64>, ScalarUndef>> {
        let ((sa, a), (_, b)) = (arg(0)?, arg(1)?);
        Some(
            (0..n)
                .map(|c| scalar::int_bin(o, width(sa), at(a, c), at(b, c)))
                .collect(),
        )
    };
    let int_cmp = |o: IntCmp| -> Option<Result<Vec<u64>, ScalarUndef>> {
        let ((sa, a), (_, b)) = (arg(0)?, arg(1)?);
        Some(Ok((0..n)
            .map(|c| scalar::b(scalar::int_cmp(o, width(sa), at(a, c), at(b, c))))
            .collect()))
    };
    let logic = |f: fn(bool, bool) -> bool| -> Option<Result<Vec<u64>, ScalarUndef>> {
        let ((_, a), (_, b)) = (arg(0)?, arg(1)?);
        Some(Ok((0..n)
            .map(|c| scalar::b(f(at(a, c) != 0, at(b, c) != 0)))
            .collect()))
    };
    // Integer width conversions (SPIR-V OpUConvert: zero-extended or truncated; OpSConvert:
    // sign-extended or truncated). Float conversions are not folded here: `None`.
    let conv = |signed: bool| -> Option<Result<Vec<u64>, ScalarUndef>> {
        let (from, a) = arg(0)?;
        let (Scalar::Int { width: fw, .. }, Scalar::Int { width: tw, .. }) = (from, to) else {
            return None;
        };
        Some(Ok((0..n)
            .map(|c| {
                let x = at(a, c) & scalar::mask(fw);
                let x = if signed {
                    scalar::sext(fw, x) as u64
                } else {
                    x
                };
                x & scalar::mask(tw)
            })
            .collect()))
    };
    match op {
        SOp::IAdd => int_bin(IntBin::Add),
        SOp::ISub => int_bin(IntBin::Sub),
        SOp::IMul => int_bin(IntBin::Mul),
        SOp::UDiv => int_bin(IntBin::UDiv),
        SOp::SDiv => int_bin(IntBin::SDiv),
        SOp::UMod => int_bin(IntBin::UMod),
        SOp::SRem => int_bin(IntBin::SRem),
        SOp::SMod => int_bin(IntBin::SMod),
        SOp::ShiftLeftLogical => int_bin(IntBin::Shl),
        SOp::ShiftRightLogical => int_bin(IntBin::ShrL),
        SOp::ShiftRightArithmetic => int_bin(IntBin::ShrA),
        SOp::BitwiseAnd => int_bin(IntBin::And),
        SOp::BitwiseOr => int_bin(IntBin::Or),
        SOp::BitwiseXor => int_bin(IntBin::Xor),
        SOp::IEqual => int_cmp(IntCmp::Eq),
        SOp::INotEqual => int_cmp(IntCmp::Ne),
        SOp::ULessThan => int_cmp(IntCmp::ULt),
        SOp::SLessThan => int_cmp(IntCmp::SLt),
        SOp::UGreaterThan => int_cmp(IntCmp::UGt),
        SOp::SGreaterThan => int_cmp(IntCmp::SGt),
        SOp::ULessThanEqual => int_cmp(IntCmp::ULe),
        SOp::SLessThanEqual => int_cmp(IntCmp::SLe),
        SOp::UGreaterThanEqual => int_cmp(IntCmp::UGe),
        SOp::SGreaterThanEqual => int_cmp(IntCmp::SGe),
        SOp::SNegate | SOp::Not => {
            let (sa, a) = arg(0)?;
            let o = if op == SOp::SNegate {
                IntUn::Neg
            } else {
                IntUn::Not
            };
            Some(Ok((0..n)
                .map(|c| scalar::int_un(o, width(sa), at(a, c)))
                .collect()))
        }
        SOp::LogicalAnd => logic(|x, y| x && y),
        SOp::LogicalOr => logic(|x, y| x || y),
        SOp::LogicalEqual => logic(|x, y| x == y),
        SOp::LogicalNotEqual => logic(|x, y| x != y),
        SOp::LogicalNot => {
            let (_, a) = arg(0)?;
            Some(Ok((0..n).map(|c| scalar::b(at(a, c) == 0)).collect()))
        }
        SOp::Select => {
            let ((_, cond), (_, a), (_, b)) = (arg(0)?, arg(1)?, arg(2)?);
            Some(Ok((0..n)
                .map(|c| if at(cond, c) != 0 { at(a, c) } else { at(b, c) })
                .collect()))
        }
        SOp::UConvert => conv(false),
        SOp::SConvert => conv(true),
        _ => None,
    }
}

/// Constants of a module as bits per component (scalars and vectors of integers, booleans and
/// floats), specialized: what the workgroup size needs, evaluated without the interpreter.
pub struct Constants<'m> {
    defs: HashMap<u32, &'m Instruction>,
    spec_ids: HashMap<u32, u32>,
    spec: HashMap<u32, u64>,
}

impl<'m> Constants<'m> {
    /// The constants of `m`, with specialization constants set by SpecId from `spec` (bits; the
    /// last value given for an id wins).
    pub fn new(m: &'m Module, spec: &[(u32, u64)]) -> Self {
        let mut defs = HashMap::new();
        for i in &m.types_global_values {
            if let Some(r) = i.result_id {
                defs.insert(r, i);
            }
        }
        let mut spec_ids = HashMap::new();
        for d in &m.annotations {
            if let (
                SOp::Decorate,
                Some(Operand::IdRef(t)),
                Some(Operand::Decoration(Decoration::SpecId)),
                Some(Operand::LiteralBit32(s)),
            ) = (
                d.class.opcode,
                d.operands.first(),
                d.operands.get(1),
                d.operands.get(2),
            ) {
                spec_ids.insert(*t, *s);
            }
        }
        Constants {
            defs,
            spec_ids,
            spec: spec.iter().copied().collect(),
        }
    }

    /// The scalar type of type id `t` (of a vector: its component's), if it is one.
    fn scalar(&self, t: u32) -> Option<Scalar> {
        let i = self.defs.get(&t)?;
        let lit = |k: usize| match i.operands.get(k) {
            Some(Operand::LiteralBit32(x)) => Some(*x),
            _ => None,
        };
        match i.class.opcode {
            SOp::TypeBool => Some(Scalar::Bool),
            SOp::TypeInt => Some(Scalar::Int {
                width: lit(0)? as u8,
                signed: lit(1)? != 0,
            }),
            SOp::TypeFloat => Some(Scalar::Float {
                width: lit(0)? as u8,
            }),
            SOp::TypeVector => match i.operands.first() {
                Some(Operand::IdRef(c)) => self.scalar(*c),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value of constant `id`: its scalar type and bits per component. `None` for what is not
    /// a constant of that kind or cannot be folded here.
    pub fn value(&self, id: u32) -> Option<(Scalar, Vec<u64>)> {
        self.value_at(id, 0)
    }

    fn value_at(&self, id: u32, depth: u32) -> Option<(Scalar, Vec<u64>)> {
        if depth > 64 {
            return None;
        }
        let i = self.defs.get(&id)?;
        let s = self.scalar(i.result_type?)?;
        let mask = |v: u64| v & scalar::mask(s.bits() as u8);
        let over = self.spec_ids.get(&id).and_then(|sid| self.spec.get(sid));
        let ids = || {
            i.operands.iter().filter_map(|o| match o {
                Operand::IdRef(x) => Some(*x),
                _ => None,
            })
        };
        let bits = match i.class.opcode {
            SOp::Constant | SOp::SpecConstant => {
                let v = match (i.operands.first(), i.operands.get(1)) {
                    (Some(Operand::LiteralBit32(lo)), Some(Operand::LiteralBit32(hi))) => {
                        *lo as u64 | (*hi as u64) << 32
                    }
                    (Some(Operand::LiteralBit32(x)), _) => *x as u64,
                    (Some(Operand::LiteralBit64(x)), _) => *x,
                    _ => return None,
                };
                let v = match (i.class.opcode, over) {
                    (SOp::SpecConstant, Some(o)) => *o,
                    _ => v,
                };
                vec![mask(v)]
            }
            SOp::ConstantTrue | SOp::ConstantFalse => {
                vec![(i.class.opcode == SOp::ConstantTrue) as u64]
            }
            SOp::SpecConstantTrue | SOp::SpecConstantFalse => vec![over
                .map(|o| (*o != 0) as u64)
                .unwrap_or((i.class.opcode == SOp::SpecConstantTrue) as u64)],
            SOp::ConstantNull => vec![0; self.components(i.result_type?)?],
            SOp::ConstantComposite | SOp::SpecConstantComposite => {
                let mut v = Vec::new();
                for c in ids() {
                    v.extend(self.value_at(c, depth + 1)?.1);
                }
                v
            }
            SOp::SpecConstantOp => {
                let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
                    return None;
                };
                let n = self.components(i.result_type?)?;
                let (arg_ids, lits) = operands_from(i, 1);
                let args: Vec<(Scalar, Vec<u64>)> = arg_ids
                    .into_iter()
                    .map(|x| self.value_at(x, depth + 1))
                    .collect::<Option<_>>()?;
                match op {
                    SOp::CompositeExtract if lits.len() == 1 => {
                        vec![*args.first()?.1.get(lits[0] as usize)?]
                    }
                    SOp::VectorShuffle => {
                        let (a, b) = (&args.first()?.1, &args.get(1)?.1);
                        lits.iter()
                            .map(|&k| {
                                let k = k as usize;
                                if k < a.len() {
                                    a.get(k).copied()
                                } else {
                                    b.get(k - a.len()).copied()
                                }
                            })
                            .collect::<Option<_>>()?
                    }
                    _ => {
                        let refs: Vec<(Scalar, &[u64])> =
                            args.iter().map(|(s, b)| (*s, &b[..])).collect();
                        fold_componentwise(*op, &refs, s, n)?.ok()?
                    }
                }
            }
            _ => return None,
        };
        Some((s, bits))
    }

    /// Components of a scalar or vector type.
    fn components(&self, t: u32) -> Option<usize> {
        let i = self.defs.get(&t)?;
        match i.class.opcode {
            SOp::TypeVector => match i.operands.get(1) {
                Some(Operand::LiteralBit32(n)) => Some(*n as usize),
                _ => None,
            },
            SOp::TypeBool | SOp::TypeInt | SOp::TypeFloat => Some(1),
            _ => None,
        }
    }
}

/// The workgroup size of the entry point whose function is `function`: `LocalSize`, or
/// `LocalSizeId` with its constants folded, and a constant decorated `BuiltIn WorkgroupSize`
/// overrides either (SPIR-V, "BuiltIn"). `Ok(None)`: the module declares none; an error names a
/// size this module declares that cannot be folded.
pub fn workgroup_size(
    m: &Module,
    function: u32,
    consts: &Constants<'_>,
) -> Result<Option<[u32; 3]>, String> {
    let mut size = None;
    for em in &m.execution_modes {
        if !matches!(em.operands.first(), Some(Operand::IdRef(f)) if *f == function) {
            continue;
        }
        let ops = &em.operands[2.min(em.operands.len())..];
        match em.operands.get(1) {
            Some(Operand::ExecutionMode(ExecutionMode::LocalSize)) => {
                let v: Option<Vec<u32>> = ops
                    .iter()
                    .map(|o| match o {
                        Operand::LiteralBit32(x) => Some(*x),
                        _ => None,
                    })
                    .collect();
                size = v.filter(|v| v.len() == 3).map(|v| [v[0], v[1], v[2]]);
            }
            Some(Operand::ExecutionMode(ExecutionMode::LocalSizeId)) => {
                let mut s = [0u32; 3];
                for (k, o) in ops.iter().take(3).enumerate() {
                    let Operand::IdRef(c) = o else {
                        return Err("LocalSizeId with an operand that is not an id".into());
                    };
                    let (_, v) = consts.value(*c).ok_or_else(|| {
                        format!("LocalSizeId names %{c}, which is not a foldable integer constant")
                    })?;
                    s[k] = *v.first().unwrap_or(&0) as u32;
                }
                size = Some(s);
            }
            _ => {}
        }
    }
    for d in &m.annotations {
        if let (
            SOp::Decorate,
            Some(Operand::IdRef(t)),
            Some(Operand::Decoration(Decoration::BuiltIn)),
            Some(Operand::BuiltIn(BuiltIn::WorkgroupSize)),
        ) = (
            d.class.opcode,
            d.operands.first(),
            d.operands.get(1),
            d.operands.get(2),
        ) {
            if consts
                .defs
                .get(t)
                .is_none_or(|i| i.class.opcode == SOp::Variable)
            {
                continue; // a WorkgroupSize variable (an input), not a constant
            }
            let (_, v) = consts
                .value(*t)
                .ok_or_else(|| format!("the WorkgroupSize constant %{t} cannot be folded"))?;
            if v.len() != 3 {
                return Err(format!(
                    "the WorkgroupSize constant %{t} has {} components",
                    v.len()
                ));
            }
            size = Some([v[0] as u32, v[1] as u32, v[2] as u32]);
        }
    }
    Ok(size)
}
