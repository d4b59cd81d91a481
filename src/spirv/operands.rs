//! The registers an [`Inst`] reads and the one it writes — one definition, for the decode-time
//! passes that rename registers or remove instructions ([`crate::spirv::decode`]'s promotion of an
//! invocation's own variables). A new instruction variant must be added here: the match is
//! exhaustive, so the compiler asks for it.

use crate::spirv::inst::{Group, Inst, Reg, Step};

/// What an instruction does with a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// read (every read comes before the write)
    Use,
    /// written (the result; `OpCopyMemory`'s scratch value)
    Def,
}

/// Calls `$f(role, reg)` for every register operand of `$inst` (a `&Inst` or a `&mut Inst`): reads
/// first, then the register written.
macro_rules! operands {
    ($inst:expr, $f:expr $(, $m:tt)?) => {{
        use Role::{Def, Use};
        let mut f = $f;
        match $inst {
            Inst::IntBin { d, a, b, .. }
            | Inst::IntCmp { d, a, b, .. }
            | Inst::FloatBin { d, a, b, .. }
            | Inst::FloatCmp { d, a, b, .. }
            | Inst::LogicBin { d, a, b, .. }
            | Inst::PtrCmp { d, a, b, .. }
            | Inst::PtrDiff { d, a, b, .. }
            | Inst::MatTimesMat { d, a, b, .. }
            | Inst::Outer { d, a, b, .. }
            | Inst::Dot { d, a, b, .. }
            | Inst::IntPair { d, a, b, .. } => {
                f(Use, a);
                f(Use, b);
                f(Def, d);
            }
            Inst::IntUn { d, a, .. }
            | Inst::FloatNeg { d, a, .. }
            | Inst::FloatClass { d, a, .. }
            | Inst::LogicNot { d, a, .. }
            | Inst::AnyAll { d, a, .. }
            | Inst::Conv { d, a, .. }
            | Inst::Bitcast { d, a, .. }
            | Inst::Move { d, a, .. }
            | Inst::Transpose { d, m: a, .. }
            | Inst::CallReturn { d, v: a, .. }
            | Inst::Resolve { d, addr: a, .. }
            | Inst::ArrayLength { d, ptr: a, .. }
            | Inst::Load { d, ptr: a, .. } => {
                f(Use, a);
                f(Def, d);
            }
            Inst::Select { d, c, a, b, .. } => {
                f(Use, c);
                f(Use, a);
                f(Use, b);
                f(Def, d);
            }
            Inst::Insert { d, obj, comp, .. } => {
                f(Use, obj);
                f(Use, comp);
                f(Def, d);
            }
            Inst::Construct { d, parts } => {
                for (r, _) in parts.iter_mut_or_ref() {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::Shuffle { d, sel, .. } => {
                for (r, _) in sel.iter_mut_or_ref().flatten() {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::ExtractDyn { d, v, idx, .. } => {
                f(Use, v);
                f(Use, idx);
                f(Def, d);
            }
            Inst::InsertDyn {
                d, v, comp, idx, ..
            } => {
                f(Use, v);
                f(Use, comp);
                f(Use, idx);
                f(Def, d);
            }
            Inst::TimesScalar { d, v: a, s: b, .. }
            | Inst::MatTimesVec { d, m: a, v: b, .. }
            | Inst::VecTimesMat { d, v: a, m: b, .. }
            | Inst::SampledImage {
                d, img: a, smp: b, ..
            } => {
                f(Use, a);
                f(Use, b);
                f(Def, d);
            }
            Inst::BitField {
                d,
                base,
                insert,
                offset,
                count,
                ..
            } => {
                f(Use, base);
                f(Use, insert);
                f(Use, offset);
                f(Use, count);
                f(Def, d);
            }
            Inst::Ext { d, args, nargs, .. } => {
                let n = *nargs as usize;
                for r in args.iter_mut_or_ref().take(n) {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::ExtOut { d, x, ptr, .. } => {
                f(Use, x);
                f(Use, ptr);
                f(Def, d);
            }
            Inst::Store { ptr, v, .. } => {
                f(Use, ptr);
                f(Use, v);
            }
            Inst::CopyMemory { dst, src, tmp, .. } => {
                f(Use, dst);
                f(Use, src);
                f(Def, tmp);
            }
            Inst::AccessChain { d, base, steps } | Inst::AddrChain { d, base, steps } => {
                f(Use, base);
                for s in steps.iter_mut_or_ref() {
                    match s {
                        Step::Const(_) => {}
                        Step::Dyn { index, .. } | Step::Descriptor { index, .. } => f(Use, index),
                    }
                }
                f(Def, d);
            }
            Inst::ImageRead {
                d,
                img,
                coord,
                sample,
                ..
            } => {
                f(Use, img);
                f(Use, coord);
                if let Some(r) = sample {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::ImageWrite {
                img,
                coord,
                sample,
                texel,
                ..
            } => {
                f(Use, img);
                f(Use, coord);
                if let Some(r) = sample {
                    f(Use, r);
                }
                f(Use, texel);
            }
            Inst::ImageQuery { d, img, lod, .. } => {
                f(Use, img);
                if let Some(r) = lod {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::ImageSample {
                d, img, coord, lod, ..
            } => {
                f(Use, img);
                f(Use, coord);
                if let Some(r) = lod {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::TexelPointer {
                d,
                img,
                coord,
                sample,
                ..
            } => {
                f(Use, img);
                f(Use, coord);
                f(Use, sample);
                f(Def, d);
            }
            Inst::Atomic { d, ptr, v, cmp, .. } => {
                f(Use, ptr);
                if let Some(r) = v {
                    f(Use, r);
                }
                if let Some(r) = cmp {
                    f(Use, r);
                }
                if let Some(r) = d {
                    f(Def, r);
                }
            }
            Inst::Group(g, d) => {
                let Group {
                    value,
                    lane_arg,
                    ballot,
                    ..
                } = &$($m)? **g;
                if let Some((r, _, _)) = value {
                    f(Use, r);
                }
                if let Some(r) = lane_arg {
                    f(Use, r);
                }
                if let Some(r) = ballot {
                    f(Use, r);
                }
                f(Def, d);
            }
            Inst::Call { d, args, .. } => {
                for r in args.iter_mut_or_ref() {
                    f(Use, r);
                }
                if let Some(r) = d {
                    f(Def, r);
                }
            }
            Inst::Undef { d, .. } => f(Def, d),
            Inst::Barrier { .. } | Inst::MemoryBarrier { .. } | Inst::EnterLocals { .. } => {}
        }
    }};
}

/// `iter_mut_or_ref`: `iter()` on a shared slice, `iter_mut()` on a mutable one, so that one macro
/// body serves both visitors.
trait IterMutOrRef {
    type Iter;
    fn iter_mut_or_ref(self) -> Self::Iter;
}

impl<'a, T> IterMutOrRef for &'a Box<[T]> {
    type Iter = std::slice::Iter<'a, T>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter()
    }
}

impl<'a, T> IterMutOrRef for &'a mut Box<[T]> {
    type Iter = std::slice::IterMut<'a, T>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter_mut()
    }
}

impl<'a, T, const N: usize> IterMutOrRef for &'a [T; N] {
    type Iter = std::slice::Iter<'a, T>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter()
    }
}

impl<'a, T, const N: usize> IterMutOrRef for &'a mut [T; N] {
    type Iter = std::slice::IterMut<'a, T>;
    fn iter_mut_or_ref(self) -> Self::Iter {
        self.iter_mut()
    }
}

impl Inst {
    /// Calls `f` with every register operand and what the instruction does with it.
    pub(crate) fn operands(&self, mut f: impl FnMut(Role, Reg)) {
        operands!(self, |role, r: &Reg| f(role, *r))
    }

    /// Calls `f` with a mutable reference to every register operand (to rename it).
    pub(crate) fn operands_mut(&mut self, mut f: impl FnMut(Role, &mut Reg)) {
        operands!(self, |role, r: &mut Reg| f(role, r), mut)
    }

    /// The register it writes, if any.
    pub(crate) fn def(&self) -> Option<Reg> {
        let mut d = None;
        self.operands(|role, r| {
            if role == Role::Def {
                d = Some(r);
            }
        });
        d
    }
}
