//! The registers an [`Inst`] reads and the one it writes — one definition, for the decode-time
//! passes that rename registers or remove instructions ([`crate::spirv::decode`]'s promotion of an
//! invocation's own variables). A new instruction variant must be added here: the match is
//! exhaustive, so the compiler asks for it.

use crate::spirv::inst::{CarriedAccess, Group, Inst, Reg, Step};

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
            Inst::CarriedStore { v, c } => {
                let CarriedAccess { ptr, rv, .. } = &$($m)? *c;
                f(Use, ptr);
                f(Use, v);
                f(Def, rv);
            }
            Inst::CarriedLoad { d, c } => {
                let CarriedAccess { ptr, rv, .. } = &$($m)? *c;
                f(Use, ptr);
                f(Use, rv);
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
            Inst::IntDot { d, a, b, acc, .. } => {
                f(Use, a);
                f(Use, b);
                if let Some(r) = acc {
                    f(Use, r);
                }
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
            Inst::Undef { d, .. } | Inst::Clock { d, .. } => f(Def, d),
            Inst::Printf { args, .. } => {
                for r in args.iter_mut_or_ref() {
                    f(Use, r);
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;
    use crate::spirv::inst::*;
    use crate::spirv::memory::Scope;
    use crate::spirv::types::Scalar;

    fn r(i: u32) -> Reg {
        Reg::new(i)
    }

    /// One instruction of every variant, its registers numbered apart, and the one it writes.
    #[rustfmt::skip]
    fn every_variant() -> Vec<(Inst, Option<u32>)> {
        let f32s = Scalar::Float { width: 32 };
        let dynamic = |i| Step::Dyn {
            index: r(i),
            width: 32,
            signed: false,
            stride: 4,
            len: None,
            elem: false,
        };
        let desc = |i| Step::Descriptor {
            index: r(i),
            width: 32,
            signed: false,
            count: 2,
            nonuniform: false,
        };
        let (w, n) = (32, 1);
        vec![
            (Inst::IntBin { op: IntBin::Add, w, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::IntCmp { op: IntCmp::Eq, w, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::IntUn { op: IntUn::Neg, w, n, d: r(1), a: r(2) }, Some(1)),
            (Inst::FloatBin { op: FloatBin::Add, w, n, d: r(1), a: r(2), b: r(3), contract: false, relaxed: false }, Some(1)),
            (Inst::FloatCmp { op: FloatCmp::OrdEq, w, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::FloatNeg { w, n, d: r(1), a: r(2) }, Some(1)),
            (Inst::FloatClass { inf: true, w, n, d: r(1), a: r(2) }, Some(1)),
            (Inst::LogicBin { op: LogicBin::And, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::LogicNot { n, d: r(1), a: r(2) }, Some(1)),
            (Inst::AnyAll { all: true, n, d: r(1), a: r(2) }, Some(1)),
            (Inst::PtrCmp { d: r(1), a: r(2), b: r(3), ne: false }, Some(1)),
            (Inst::PtrDiff { d: r(1), a: r(2), b: r(3), stride: 4, w }, Some(1)),
            (Inst::Select { n, d: r(1), c: r(2), vector_cond: false, a: r(3), b: r(4) }, Some(1)),
            (Inst::Conv { op: Conv::FToU, from: f32s, to: Scalar::Int { width: 32, signed: false }, n, d: r(1), a: r(2) }, Some(1)),
            (Inst::Bitcast { from: Box::new([f32s]), to: Box::new([f32s]), d: r(1), a: r(2) }, Some(1)),
            (Inst::Move { d: r(1), a: r(2), off: 0, n }, Some(1)),
            (Inst::Insert { d: r(1), obj: r(2), comp: r(3), off: 0, n, total: 2 }, Some(1)),
            (Inst::Construct { d: r(1), parts: Box::new([(r(2), 1), (r(3), 1)]) }, Some(1)),
            (Inst::Shuffle { d: r(1), sel: Box::new([Some((r(2), 0)), None, Some((r(3), 1))]), loc: LocId::default() }, Some(1)),
            (Inst::ExtractDyn { d: r(1), v: r(2), idx: r(3), idx_w: 32, count: 2 }, Some(1)),
            (Inst::InsertDyn { d: r(1), v: r(2), comp: r(3), idx: r(4), idx_w: 32, count: 2 }, Some(1)),
            (Inst::TimesScalar { w, n, d: r(1), v: r(2), s: r(3) }, Some(1)),
            (Inst::MatTimesVec { w, rows: 2, cols: 2, d: r(1), m: r(2), v: r(3) }, Some(1)),
            (Inst::VecTimesMat { w, rows: 2, cols: 2, d: r(1), v: r(2), m: r(3) }, Some(1)),
            (Inst::MatTimesMat { w, rows: 2, inner: 2, cols: 2, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::Outer { w, rows: 2, cols: 2, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::Transpose { rows: 2, cols: 2, d: r(1), m: r(2) }, Some(1)),
            (Inst::Dot { w, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::IntPair { op: IntPair::AddCarry, w, n, d: r(1), a: r(2), b: r(3) }, Some(1)),
            (Inst::IntDot { d: r(1), a: r(2), b: r(3), acc: Some(r(4)), n, cw: w, packed: false, signed: (true, false), w, rsigned: true }, Some(1)),
            (Inst::BitField { op: BitField::Insert, w, n, d: r(1), base: r(2), insert: r(3), offset: r(4), count: r(5) }, Some(1)),
            (Inst::Ext { f: Ext::FAbs, s: f32s, w1: 32, n, d: r(1), args: [r(2), r(3), r(4)], nargs: 3, relaxed: false }, Some(1)),
            (Inst::ExtOut { frexp: true, w, n, d: r(1), x: r(2), ptr: r(3), plan: 0 }, Some(1)),
            (Inst::Load { d: r(1), ptr: r(2), plan: 0 }, Some(1)),
            (Inst::Store { ptr: r(2), v: r(3), plan: 0 }, None),
            (Inst::CopyMemory { dst: r(2), src: r(3), plan: 0, tmp: r(1) }, Some(1)),
            (Inst::AccessChain { d: r(1), base: r(2), steps: Box::new([Step::Const(4), dynamic(3), desc(4)]) }, Some(1)),
            (Inst::AddrChain { d: r(1), base: r(2), steps: Box::new([dynamic(3)]) }, Some(1)),
            (Inst::Resolve { d: r(1), addr: r(2), bytes: 4, align: 0, write: false }, Some(1)),
            (Inst::ArrayLength { d: r(1), ptr: r(2), offset: 0, stride: 4 }, Some(1)),
            (Inst::ImageRead { d: r(1), img: r(2), coord: r(3), cw: 32, sample: Some(r(4)), n: 4, w: 32 }, Some(1)),
            (Inst::ImageWrite { img: r(2), coord: r(3), cw: 32, sample: Some(r(4)), texel: r(5), n: 4, w: 32 }, None),
            (Inst::ImageQuery { d: r(1), img: r(2), what: 0, lod: Some(r(3)), n: 2, w: 32 }, Some(1)),
            (Inst::SampledImage { d: r(1), img: r(2), smp: r(3) }, Some(1)),
            (Inst::ImageSample { d: r(1), img: r(2), coord: r(3), lod: Some(r(4)), n: 4, w: 32, int: false }, Some(1)),
            (Inst::TexelPointer { d: r(1), img: r(2), coord: r(3), cw: 32, sample: r(4), sw: 32 }, Some(1)),
            (Inst::Atomic { op: AtomicOp::CompareExchange, s: Scalar::Int { width: 32, signed: false }, d: Some(r(1)), ptr: r(2), v: Some(r(3)), cmp: Some(r(4)), scope: Scope::Workgroup, sem: 0 }, Some(1)),
            (Inst::Group(Box::new(Group { op: Op::Shuffle, value: Some((r(2), f32s, 1)), lane_arg: Some(r(3)), ballot: Some(r(4)), cluster: None, result: (f32s, 1) }), r(1)), Some(1)),
            (Inst::Barrier { workgroup: true, scope: Scope::Workgroup, sem: 0 }, None),
            (Inst::MemoryBarrier { scope: Scope::Device, sem: 0 }, None),
            (Inst::Call { d: Some(r(1)), f: 0, args: Box::new([r(2), r(3)]) }, Some(1)),
            (Inst::Undef { d: r(1), n }, Some(1)),
            (Inst::Clock { d: r(1), n, device: true }, Some(1)),
            (Inst::EnterLocals { f: 0 }, None),
            (Inst::CallReturn { d: r(1), v: r(2), n }, Some(1)),
        ]
    }

    /// The registers an instruction's `Debug` text names (`Reg(7)`), in order.
    fn named(i: &Inst) -> Vec<u32> {
        let t = format!("{i:?}");
        t.split("Reg(")
            .skip(1)
            .map(|s| s[..s.find(')').unwrap()].parse().unwrap())
            .collect()
    }

    /// Every register field of every variant is visited — reads as reads, the result as the one
    /// written — and renaming reaches each of them: a field the visitor forgot would be a register
    /// a decode-time pass renames everywhere but there.
    #[test]
    fn every_register_operand_of_every_instruction_is_visited() {
        let cases = every_variant();
        assert_eq!(cases.len(), 55, "one case per variant");
        for (inst, def) in cases {
            let mut seen = Vec::new();
            inst.operands(|role, r| seen.push((role, r.index() as u32)));
            let mut visited: Vec<u32> = seen.iter().map(|(_, r)| *r).collect();
            let mut all = named(&inst);
            visited.sort_unstable();
            all.sort_unstable();
            assert_eq!(visited, all, "{inst:?}");
            assert_eq!(inst.def().map(|r| r.index() as u32), def, "{inst:?}");
            let defs = seen.iter().filter(|(role, _)| *role == Role::Def).count();
            assert_eq!(defs, def.is_some() as usize, "{inst:?}");
            // Reads come before the write.
            if let Some(p) = seen.iter().position(|(role, _)| *role == Role::Def) {
                assert_eq!(p, seen.len() - 1, "{inst:?}");
            }
            let mut renamed = inst.clone();
            renamed.operands_mut(|_, r| *r = Reg::new(r.index() as u32 + 100));
            let mut moved = named(&renamed);
            moved.sort_unstable();
            assert_eq!(
                moved,
                all.iter().map(|r| r + 100).collect::<Vec<_>>(),
                "{inst:?}"
            );
        }
    }

    /// `GLSL.std.450` instructions name three argument registers; only the first `nargs` are read.
    #[test]
    fn an_extended_instruction_reads_only_its_arguments() {
        let inst = Inst::Ext {
            f: Ext::FAbs,
            s: Scalar::Float { width: 32 },
            w1: 32,
            n: 1,
            d: r(1),
            args: [r(2), r(0), r(0)],
            nargs: 1,
            relaxed: false,
        };
        let mut seen = Vec::new();
        inst.operands(|role, r| seen.push((role, r.index())));
        assert_eq!(seen, vec![(Role::Use, 2), (Role::Def, 1)]);
    }
}
