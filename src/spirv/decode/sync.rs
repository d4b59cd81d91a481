//! Atomics and subgroup (group) instructions — the latter mapped to the model's catalogue.

use super::*;

impl Decoder<'_> {
    pub(super) fn atomic(&mut self, i: &Instruction) -> Result<Inst, SpirvError> {
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

    pub(super) fn group(&mut self, i: &Instruction) -> Result<(Group, Reg), SpirvError> {
        let op = i.class.opcode;
        let d = self.reg(i.result_id.unwrap_or(0))?;
        let scope = self.const_u32(id_at(i, 0)?)?;
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
