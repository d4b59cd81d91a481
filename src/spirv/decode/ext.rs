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

    pub(super) fn ext_inst(&mut self, i: &Instruction) -> Result<Option<Inst>, SpirvError> {
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
}
