//! The GLSL.std.450 extended instructions the interpreter implements, and what each one's
//! arguments and precision are ([`Ext`]).

/// GLSL.std.450 extended instructions the interpreter implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Ext {
    Round,
    RoundEven,
    Trunc,
    FAbs,
    SAbs,
    FSign,
    SSign,
    Floor,
    Ceil,
    Fract,
    Radians,
    Degrees,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Atan2,
    Pow,
    Exp,
    Log,
    Exp2,
    Log2,
    Sqrt,
    InverseSqrt,
    FMin,
    UMin,
    SMin,
    FMax,
    UMax,
    SMax,
    FClamp,
    UClamp,
    SClamp,
    FMix,
    Step,
    SmoothStep,
    Fma,
    Ldexp,
    NMin,
    NMax,
    NClamp,
    FindILsb,
    FindSMsb,
    FindUMsb,
    Length,
    Distance,
    Normalize,
    Cross,
    Determinant,
    MatrixInverse,
    PackHalf2x16,
    UnpackHalf2x16,
    PackUnorm4x8,
    PackSnorm4x8,
    UnpackUnorm4x8,
    UnpackSnorm4x8,
    PackUnorm2x16,
    PackSnorm2x16,
    UnpackUnorm2x16,
    UnpackSnorm2x16,
    PackDouble2x32,
    UnpackDouble2x32,
    /// `ModfStruct`: the result's slots are the fraction (n) then the whole number (n)
    ModfStruct,
    /// `FrexpStruct`: the significand (n slots) then the exponent (n integer slots)
    FrexpStruct,
    FaceForward,
    Reflect,
    Refract,
}

impl Ext {
    /// Whether argument `k` is an integer (whose bits are not a float's, denormal or not):
    /// `Ldexp`'s exponent, the packed words the unpacking functions and `PackDouble2x32` read.
    pub fn int_arg(self, k: usize) -> bool {
        use Ext::*;
        match self {
            Ldexp => k == 1,
            UnpackHalf2x16 | UnpackUnorm4x8 | UnpackSnorm4x8 | UnpackUnorm2x16
            | UnpackSnorm2x16 | PackDouble2x32 => k == 0,
            _ => false,
        }
    }

    /// Correctly rounded (or exact) on every conforming device: compared bit for bit. Everything
    /// else has a ULP bound or is derived from other operations in the Vulkan precision tables and
    /// is *inexact*.
    pub fn exact(self) -> bool {
        use Ext::*;
        matches!(
            self,
            RoundEven
                | Trunc
                | FAbs
                | SAbs
                | FSign
                | SSign
                | Floor
                | Ceil
                | FMin
                | UMin
                | SMin
                | FMax
                | UMax
                | SMax
                | FClamp
                | UClamp
                | SClamp
                | Step
                | NMin
                | NMax
                | NClamp
                | FindILsb
                | FindSMsb
                | FindUMsb
                | Ldexp
                | PackHalf2x16
                | UnpackHalf2x16
                | PackDouble2x32
                | UnpackDouble2x32
                | ModfStruct
                | FrexpStruct
                | UnpackUnorm4x8
                | UnpackUnorm2x16
        )
    }

    /// Computed component by component (GLSL.std.450: "Results are computed per component"):
    /// component `c` of the result reads component `c` of each operand and nothing else, so an
    /// operand's undefined component, or a component outside the function's domain, leaves only
    /// that component of the result undefined. The rest (lengths, products, matrices, packing,
    /// the two-result functions) read several components for one.
    pub fn componentwise(self) -> bool {
        use Ext::*;
        match self {
            Round | RoundEven | Trunc | FAbs | SAbs | FSign | SSign | Floor | Ceil | Fract
            | Radians | Degrees | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh
            | Asinh | Acosh | Atanh | Atan2 | Pow | Exp | Log | Exp2 | Log2 | Sqrt
            | InverseSqrt | FMin | UMin | SMin | FMax | UMax | SMax | FClamp | UClamp | SClamp
            | FMix | Step | SmoothStep | Fma | Ldexp | NMin | NMax | NClamp | FindILsb
            | FindSMsb | FindUMsb => true,
            Length | Distance | Normalize | Cross | Determinant | MatrixInverse | PackHalf2x16
            | UnpackHalf2x16 | PackUnorm4x8 | PackSnorm4x8 | UnpackUnorm4x8 | UnpackSnorm4x8
            | PackUnorm2x16 | PackSnorm2x16 | UnpackUnorm2x16 | UnpackSnorm2x16
            | PackDouble2x32 | UnpackDouble2x32 | ModfStruct | FrexpStruct | FaceForward
            | Reflect | Refract => false,
        }
    }
}
