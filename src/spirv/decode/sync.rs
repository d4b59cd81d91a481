//! Atomics and subgroup (group) instructions — the latter mapped to the model's catalogue.

use super::*;
use crate::model::{catalogue, ArgKind};
use crate::spirv::memory::Scope;
use std::sync::OnceLock;

/// The catalogue's operations by the SPIR-V instruction that performs them.
pub(super) fn group_ops() -> &'static HashMap<SOp, Vec<Op>> {
    static MAP: OnceLock<HashMap<SOp, Vec<Op>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<SOp, Vec<Op>> = HashMap::new();
        for e in catalogue() {
            for s in e.spirv {
                m.entry(*s).or_default().push(e.op);
            }
        }
        m
    })
}

impl Decoder<'_> {
    /// `OpControlBarrier` and `OpMemoryBarrier` ([`Family::Barrier`]).
    pub(super) fn barrier_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        Ok(match i.class.opcode {
            SOp::ControlBarrier => {
                let exec = self.const_u32(id_at(i, 0)?)?;
                let scope = Scope::from_spirv(self.const_u32(id_at(i, 1)?)?);
                let sem = self.const_u32(id_at(i, 2)?)?;
                let workgroup = match spirv::Scope::from_u32(exec) {
                    Some(spirv::Scope::Workgroup) => true,
                    Some(spirv::Scope::Subgroup) => false,
                    _ => {
                        return Err(unsupported(format!(
                            "OpControlBarrier with execution scope {exec} (compute: Workgroup or Subgroup)"
                        )));
                    }
                };
                Some(Inst::Barrier {
                    workgroup,
                    scope,
                    sem,
                })
            }
            SOp::MemoryBarrier => Some(Inst::MemoryBarrier {
                scope: Scope::from_spirv(self.const_u32(id_at(i, 0)?)?),
                sem: self.const_u32(id_at(i, 1)?)?,
            }),
            other => return Err(misrouted(other, "barrier")),
        })
    }

    /// A subgroup instruction ([`Family::Group`]).
    pub(super) fn group_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        self.uses_subgroups = true;
        let (g, d) = self.group(i)?;
        Ok(Some(Inst::Group(Box::new(g), d)))
    }

    pub(super) fn atomic(&mut self, i: &Instruction) -> Result<Inst, SpirvError> {
        let op = i.class.opcode;
        let pid = id_at(i, 0)?;
        let (t, _, storage) = self.pointee(pid)?;
        // Uniform: a storage buffer declared the old way (BufferBlock); a store to a real uniform
        // buffer is refused when it runs.
        if !matches!(
            storage,
            Storage::StorageBuffer
                | Storage::Workgroup
                | Storage::Uniform
                | Storage::Image
                | Storage::PhysicalStorageBuffer
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
        // An atomic reads and writes (a load only reads).
        let ptr = self.through(pid, s.bits() / 8, 0, op != SOp::AtomicLoad)?;
        // A result nothing reads is not kept: the executor then knows that no invocation sees
        // the value this atomic returned (what lets unordered commuting atomics run in parallel).
        let d = match (op, i.result_id) {
            (SOp::AtomicStore, _) => None,
            (_, Some(r)) if !self.used.contains(&r) => None,
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
        let scope = Scope::from_spirv(self.const_u32(id_at(i, 1)?)?);
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

    /// Checks a subgroup instruction's scope (only Subgroup) and says whether it has a scope
    /// operand: SPV_KHR_shader_ballot's and SPV_KHR_subgroup_vote's instructions have none ("The
    /// scope is Subgroup").
    fn group_scope(&self, i: &Instruction) -> Result<bool, SpirvError> {
        let op = i.class.opcode;
        let scoped = !matches!(
            op,
            SOp::SubgroupBallotKHR
                | SOp::SubgroupFirstInvocationKHR
                | SOp::SubgroupReadInvocationKHR
                | SOp::SubgroupAllKHR
                | SOp::SubgroupAnyKHR
                | SOp::SubgroupAllEqualKHR
        );
        let scope = match scoped {
            true => self.const_u32(id_at(i, 0)?)?,
            false => spirv::Scope::Subgroup as u32,
        };
        if scope != spirv::Scope::Subgroup as u32 {
            return Err(unsupported(format!(
                "{} with scope {} ({}; only Subgroup scope, 3)",
                op_name(op),
                scope,
                spirv::Scope::from_u32(scope)
                    .map(|s| format!("{s:?}"))
                    .unwrap_or_else(|| "no scope".into())
            )));
        }
        Ok(scoped)
    }

    pub(super) fn group(&mut self, i: &Instruction) -> Result<(Group, Reg), SpirvError> {
        let op = i.class.opcode;
        let d = self.reg(i.result_id.unwrap_or(0))?;
        let scoped = self.group_scope(i)?;
        let (rs, rn) = self.result_sv(i)?;
        // Operands after the scope: [GroupOperation] then ids (and literals for quad swap).
        let mut k = scoped as usize;
        let mut gop = None;
        if let (true, Some(Operand::GroupOperation(g))) = (scoped, i.operands.get(1)) {
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
        // Which of the catalogue's operations this instruction performs: the catalogue names the
        // instructions of each (`OpInfo::spirv`); where several share one, the GroupOperation
        // operand (arithmetic, clustered, ballot bit count), the direction (quad swap) or a
        // cluster-size operand (rotate) tells them apart.
        let direction = match op {
            // SPIR-V OpGroupNonUniformQuadSwap: "Direction ... 0 Horizontal, 1 Vertical, 2 Diagonal"
            SOp::GroupNonUniformQuadSwap => Some(match self.const_u32(id(1)?)? {
                0 => QuadDir::Horizontal,
                1 => QuadDir::Vertical,
                2 => QuadDir::Diagonal,
                x => return Err(SpirvError::malformed(format!("quad swap direction {x}"))),
            }),
            _ => None,
        };
        let candidates = group_ops()
            .get(&op)
            .ok_or_else(|| unsupported(format!("the instruction {}", op_name(op))))?;
        let mut found = None;
        for c in candidates {
            let fits = match *c {
                Op::Arithmetic(_, scan) | Op::BallotBitCount(scan) => {
                    scan_of(gop).ok() == Some(scan)
                }
                Op::Clustered(_) => gop == Some(spirv::GroupOperation::ClusteredReduce),
                Op::QuadSwap(d) => direction == Some(d),
                Op::Rotate => ids.len() == 2,
                Op::ClusteredRotate => ids.len() == 3,
                _ => true,
            };
            if fits {
                found = Some(*c);
                break;
            }
        }
        let Some(model_op) = found else {
            return Err(unsupported(format!(
                "{} with group operation {}",
                op_name(op),
                gop.map(|g| format!("{g:?}"))
                    .unwrap_or_else(|| "none".into())
            )));
        };
        g.op = model_op;
        // Operands as the catalogue lists them: the value first (where the operation takes one),
        // then its arguments in order.
        let entry = info(model_op);
        let mut k = 0;
        if entry.has_value() {
            // SPIR-V splits signed and unsigned min/max; the value is read as the instruction says.
            let signed = match op {
                SOp::GroupNonUniformSMin | SOp::GroupNonUniformSMax => Some(true),
                SOp::GroupNonUniformUMin | SOp::GroupNonUniformUMax => Some(false),
                _ => None,
            };
            g.value = Some(value_as(self, id(0)?, signed)?);
            k = 1;
        }
        for a in entry.args {
            match a {
                ArgKind::Ballot => g.ballot = Some(self.value(id(k)?)?),
                ArgKind::Id { .. }
                | ArgKind::Mask
                | ArgKind::Delta { .. }
                | ArgKind::QuadIndex
                | ArgKind::Index => g.lane_arg = Some(self.value(id(k)?)?),
                ArgKind::Cluster => g.cluster = Some(self.const_u32(id(k)?)?),
                ArgKind::Workgroup => continue,
            }
            k += 1;
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
        }
        Ok((g, d))
    }
}
