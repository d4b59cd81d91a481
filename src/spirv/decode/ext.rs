//! Matrix operations and the GLSL.std.450 extended instructions.

use super::*;

impl Decoder<'_> {
    pub(super) fn matrix_op(&mut self, i: &Instruction) -> Result<Inst, SpirvError> {
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

    /// NonSemantic.DebugPrintf's `DebugPrintf` (instruction 1; the set has no other): the
    /// format (an `OpString`) parsed and checked against the values' component counts.
    fn debug_printf(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        if !matches!(
            i.operands.get(1),
            Some(Operand::LiteralExtInstInteger(1)) | Some(Operand::LiteralBit32(1))
        ) {
            return Err(SpirvError::malformed(
                "NonSemantic.DebugPrintf has one instruction, DebugPrintf (1)",
            ));
        }
        let text = match i.operands.get(2) {
            Some(Operand::IdRef(f)) => match self.ids.get(f) {
                Some(Id::Str(s)) => s.clone(),
                _ => {
                    return Err(SpirvError::malformed(
                        "DebugPrintf: Format must be an OpString (NonSemantic.DebugPrintf)",
                    ))
                }
            },
            _ => return Err(SpirvError::malformed("DebugPrintf without a Format")),
        };
        let mut args = Vec::new();
        let mut types = Vec::new();
        for o in &i.operands[3..] {
            let Operand::IdRef(id) = o else {
                return Err(SpirvError::malformed(
                    "DebugPrintf: an operand is not an id",
                ));
            };
            let Ok((s, n)) = self.sv_of(*id) else {
                return Err(unsupported(format!(
                    "debugPrintfEXT(\"{}\") of a value that is not a scalar or a vector (%{id})",
                    text.escape_default()
                )));
            };
            args.push(self.value(*id)?);
            types.push((s, n));
        }
        let format = crate::spirv::printf::Format::parse(&text);
        let counts: Vec<u32> = types.iter().map(|t| t.1).collect();
        format
            .check(&text, &counts)
            .map_err(SpirvError::malformed)?;
        Ok(Some(Inst::Printf {
            args: args.into(),
            p: Box::new(Print {
                format,
                types: types.into(),
            }),
        }))
    }

    pub(super) fn ext_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
        let set = id_at(i, 0)?;
        match self.ids.get(&set) {
            Some(Id::NonSemantic) => return Ok(None),
            Some(Id::Printf) => return self.debug_printf(i),
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
        use rspirv::spirv::GlslStd450Op as G;
        use Ext::*;
        let Some(g) = G::from_u32(num) else {
            return Err(unsupported(format!(
                "GLSL.std.450 instruction {num} (no such instruction)"
            )));
        };
        let f = match g {
            G::Round => Round,
            G::RoundEven => RoundEven,
            G::Trunc => Trunc,
            G::FAbs => FAbs,
            G::SAbs => SAbs,
            G::FSign => FSign,
            G::SSign => SSign,
            G::Floor => Floor,
            G::Ceil => Ceil,
            G::Fract => Fract,
            G::Radians => Radians,
            G::Degrees => Degrees,
            G::Sin => Sin,
            G::Cos => Cos,
            G::Tan => Tan,
            G::Asin => Asin,
            G::Acos => Acos,
            G::Atan => Atan,
            G::Sinh => Sinh,
            G::Cosh => Cosh,
            G::Tanh => Tanh,
            G::Asinh => Asinh,
            G::Acosh => Acosh,
            G::Atanh => Atanh,
            G::Atan2 => Atan2,
            G::Pow => Pow,
            G::Exp => Exp,
            G::Log => Log,
            G::Exp2 => Exp2,
            G::Log2 => Log2,
            G::Sqrt => Sqrt,
            G::InverseSqrt => InverseSqrt,
            G::FMin => FMin,
            G::UMin => UMin,
            G::SMin => SMin,
            G::FMax => FMax,
            G::UMax => UMax,
            G::SMax => SMax,
            G::FClamp => FClamp,
            G::UClamp => UClamp,
            G::SClamp => SClamp,
            G::FMix => FMix,
            G::Step => Step,
            G::SmoothStep => SmoothStep,
            G::Fma => Fma,
            G::Ldexp => Ldexp,
            G::PackSnorm4x8 => PackSnorm4x8,
            G::PackUnorm4x8 => PackUnorm4x8,
            G::PackSnorm2x16 => PackSnorm2x16,
            G::PackUnorm2x16 => PackUnorm2x16,
            G::PackHalf2x16 => PackHalf2x16,
            G::PackDouble2x32 => PackDouble2x32,
            G::UnpackSnorm2x16 => UnpackSnorm2x16,
            G::UnpackUnorm2x16 => UnpackUnorm2x16,
            G::UnpackHalf2x16 => UnpackHalf2x16,
            G::UnpackSnorm4x8 => UnpackSnorm4x8,
            G::UnpackUnorm4x8 => UnpackUnorm4x8,
            G::UnpackDouble2x32 => UnpackDouble2x32,
            G::Length => Length,
            G::Distance => Distance,
            G::Cross => Cross,
            G::Determinant | G::MatrixInverse => {
                return self.ext_whole(g, i, d, &arg_ids).map(Some)
            }
            G::Normalize => Normalize,
            G::FindILsb => FindILsb,
            G::FindSMsb => FindSMsb,
            G::FindUMsb => FindUMsb,
            G::NMin => NMin,
            G::NMax => NMax,
            G::NClamp => NClamp,
            G::Modf | G::Frexp | G::ModfStruct | G::FrexpStruct => {
                return self.ext_whole(g, i, d, &arg_ids).map(Some)
            }
            G::FaceForward => FaceForward,
            G::Reflect => Reflect,
            G::Refract => Refract,
            // IMix and the Interpolate* functions are not in the compute subset (IMix is
            // reserved; interpolation needs a fragment shader).
            other => {
                return Err(unsupported(format!("GLSL.std.450 {other:?} ({num})")));
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

    /// GLSL.std.450's functions of a whole matrix (Determinant, MatrixInverse), with an out
    /// pointer (Modf, Frexp) or with a struct result (ModfStruct, FrexpStruct).
    fn ext_whole(
        &mut self,
        g: rspirv::spirv::GlslStd450Op,
        i: &Instruction,
        d: Reg,
        arg_ids: &[u32],
    ) -> Result<Inst, SpirvError> {
        use rspirv::spirv::GlslStd450Op as G;
        use Ext::*;
        let rid = i.result_id.unwrap_or(0);
        Ok(match g {
            G::Determinant | G::MatrixInverse => {
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
                Inst::Ext {
                    f: if g == G::Determinant {
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
                }
            }
            G::Modf | G::Frexp => {
                // Modf / Frexp with an out pointer.
                let x = self.value(arg_ids[0])?;
                let (s, n) = self.sv_of(arg_ids[0])?;
                let (t, m, _) = self.pointee(
                    *arg_ids
                        .get(1)
                        .ok_or_else(|| SpirvError::malformed("Modf/Frexp pointer"))?,
                )?;
                let plan = self.plan(t, m)?;
                let ptr = self.through(arg_ids[1], self.plans[plan as usize].size, 0, true)?;
                Inst::ExtOut {
                    frexp: g == G::Frexp,
                    w: s.bits() as u8,
                    n,
                    d,
                    x,
                    ptr,
                    plan,
                }
            }
            G::ModfStruct | G::FrexpStruct => {
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
                Inst::Ext {
                    f: if g == G::ModfStruct {
                        ModfStruct
                    } else {
                        FrexpStruct
                    },
                    s,
                    w1,
                    n,
                    d,
                    args: [x, Reg::default(), Reg::default()],
                    nargs: 1,
                    relaxed: self.has_deco(rid, Decoration::RelaxedPrecision),
                }
            }
            other => {
                return Err(SpirvError::malformed(format!(
                    "internal: GLSL.std.450 {other:?} sent to ext_whole"
                )))
            }
        })
    }
}
