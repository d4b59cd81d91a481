//! How the model computes with lane values: the binary operators of the arithmetic and clustered
//! operations, and the [`Scalar`] trait that implements them (with their identities) for each of
//! the twelve scalar types.
//!
//! Lane values travel through the model as `[S; N]` with `S: Scalar` (a scalar is `[S; 1]`), so every
//! operation is written once and is component-wise by construction.

use crate::model::types::{ScalarType, TypeClass, ValueType};
use half::f16;
use std::fmt;

/// The binary operator of an arithmetic or clustered operation.
///
/// ```
/// use lockstep::model::{BinOp, TypeClass};
/// assert_eq!(BinOp::Max.name(), "max"); // as in the catalogue name `inclusive_max`
/// assert_eq!(BinOp::Max.glsl(), "Max"); // as in `subgroupInclusiveMax`
/// assert_eq!(BinOp::Xor.types(), TypeClass::IntegerOrBool);
/// assert_eq!(BinOp::ALL.len(), 7);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinOp {
    /// `+`
    Add,
    /// `*`
    Mul,
    /// minimum
    Min,
    /// maximum
    Max,
    /// bitwise / logical and
    And,
    /// bitwise / logical or
    Or,
    /// bitwise / logical xor
    Xor,
}

impl BinOp {
    /// All seven, in GLSL order.
    pub const ALL: [BinOp; 7] = [
        BinOp::Add,
        BinOp::Mul,
        BinOp::Min,
        BinOp::Max,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
    ];

    /// `add`, `mul`, …
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Mul => "mul",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
        }
    }

    /// `Add`, `Mul`, … as in `subgroupInclusiveAdd`.
    pub fn glsl(self) -> &'static str {
        match self {
            BinOp::Add => "Add",
            BinOp::Mul => "Mul",
            BinOp::Min => "Min",
            BinOp::Max => "Max",
            BinOp::And => "And",
            BinOp::Or => "Or",
            BinOp::Xor => "Xor",
        }
    }

    /// Add, Mul, Min, Max take numbers; And, Or, Xor take integers and bools.
    pub fn types(self) -> TypeClass {
        match self {
            BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max => TypeClass::Numeric,
            BinOp::And | BinOp::Or | BinOp::Xor => TypeClass::IntegerOrBool,
        }
    }
}

/// One scalar type as the model computes with it.
///
/// Arithmetic follows GLSL: integers wrap (two's complement), floats round to nearest in their own
/// precision, min/max of floats ignore a NaN operand (GL_KHR_shader_subgroup, "if for any two values
/// of them is a NaN, the other is chosen"). Operations a type does not take (e.g. `and` on floats)
/// are rejected by the op catalogue before they reach these functions; they still return a value here
/// so that nothing in the model can panic.
///
/// ```
/// use lockstep::model::{BinOp, Scalar};
/// assert_eq!(Scalar::add(u8::MAX, 1u8), 0); // integers wrap
/// assert_eq!(Scalar::min(f32::NAN, 2.0f32), 2.0); // a NaN operand is ignored
/// assert_eq!(<i16 as Scalar>::identity(BinOp::Max), i16::MIN);
/// assert_eq!(<f64 as Scalar>::identity(BinOp::Min), f64::INFINITY);
/// assert_eq!(Scalar::to_bits(-0.0f32), 0x8000_0000);
/// ```
pub trait Scalar: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The type tag.
    const TYPE: ScalarType;
    /// Raw bits, zero-extended to 64 (bool: 0 or 1).
    fn to_bits(self) -> u64;
    /// From raw bits (only the low `TYPE.bits()` bits are used).
    fn from_bits(bits: u64) -> Self;
    /// `a + b`.
    fn add(self, o: Self) -> Self;
    /// `a * b`.
    fn mul(self, o: Self) -> Self;
    /// Minimum; for floats a NaN operand is ignored.
    fn min(self, o: Self) -> Self;
    /// Maximum; for floats a NaN operand is ignored.
    fn max(self, o: Self) -> Self;
    /// Bitwise (integers) or logical (bool) and.
    fn and(self, o: Self) -> Self;
    /// Bitwise or logical or.
    fn or(self, o: Self) -> Self;
    /// Bitwise or logical exclusive or.
    fn xor(self, o: Self) -> Self;
    /// True for a floating-point NaN.
    fn is_nan(self) -> bool {
        false
    }
    /// Numeric equality (`==` in GLSL): for floats NaN != NaN and -0.0 == +0.0.
    fn numeric_eq(self, o: Self) -> bool {
        self == o
    }
    /// The identity of `op` from the table in GL_KHR_shader_subgroup.txt (section 3.8, "I()").
    fn identity(op: BinOp) -> Self;
}

macro_rules! int_scalar {
    ($t:ty, $u:ty, $tag:ident) => {
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                Ord::min(self, o)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                Ord::max(self, o)
            }
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            fn identity(op: BinOp) -> Self {
                use BinOp::*;
                match op {
                    Add | Or | Xor => 0,
                    Mul => 1,
                    Min => <$t>::MAX,
                    Max => <$t>::MIN,
                    And => !0,
                }
            }
        }
    };
}
int_scalar!(i8, u8, I8);
int_scalar!(u8, u8, U8);
int_scalar!(i16, u16, I16);
int_scalar!(u16, u16, U16);
int_scalar!(i32, u32, I32);
int_scalar!(u32, u32, U32);
int_scalar!(i64, u64, I64);
int_scalar!(u64, u64, U64);

impl Scalar for bool {
    const TYPE: ScalarType = ScalarType::Bool;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits & 1 != 0
    }
    // Not reachable through the catalogue (Add/Mul/Min/Max take no bool); logical forms keep it total.
    fn add(self, o: Self) -> Self {
        self ^ o
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn min(self, o: Self) -> Self {
        self & o
    }
    fn max(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    fn identity(op: BinOp) -> Self {
        use BinOp::*;
        match op {
            And | Mul | Min => true,
            Or | Xor | Add | Max => false,
        }
    }
}

macro_rules! float_scalar {
    ($t:ty, $bits:ty, $tag:ident, $from:expr_2021) => {
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$tag;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                // GL_KHR_shader_subgroup: if either is NaN the other is chosen; NaN only if both are.
                if self.is_nan() {
                    o
                } else if o.is_nan() || self <= o {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                if self.is_nan() {
                    o
                } else if o.is_nan() || self >= o {
                    self
                } else {
                    o
                }
            }
            // Floats take no bitwise operation (the catalogue rejects them); bitwise on the bits keeps it total.
            fn and(self, o: Self) -> Self {
                <$t>::from_bits(<$t>::to_bits(self) & <$t>::to_bits(o))
            }
            fn or(self, o: Self) -> Self {
                <$t>::from_bits(<$t>::to_bits(self) | <$t>::to_bits(o))
            }
            fn xor(self, o: Self) -> Self {
                <$t>::from_bits(<$t>::to_bits(self) ^ <$t>::to_bits(o))
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn numeric_eq(self, o: Self) -> bool {
                self == o
            }
            fn identity(op: BinOp) -> Self {
                use BinOp::*;
                match op {
                    Add | Or | Xor => $from(0.0),
                    Mul => $from(1.0),
                    Min => <$t>::INFINITY,
                    Max => <$t>::NEG_INFINITY,
                    And => <$t>::from_bits(!0),
                }
            }
        }
    };
}
float_scalar!(f32, u32, F32, |x: f64| x as f32);
float_scalar!(f64, u64, F64, |x: f64| x);
float_scalar!(f16, u16, F16, f16::from_f64);

/// A lane value: `N` components of scalar type `S` (a scalar is `[S; 1]`).
///
/// ```
/// use lockstep::model::{Elem, ValueType};
/// assert_eq!(<[u32; 4] as Elem>::VALUE_TYPE, ValueType::UVEC4);
/// ```
pub trait Elem: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// Its scalar and vector type.
    const VALUE_TYPE: ValueType;
}

impl<S: Scalar, const N: usize> Elem for [S; N] {
    const VALUE_TYPE: ValueType = ValueType::vector(S::TYPE, N);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_match_the_glsl_table() {
        use BinOp::*;
        // GL_KHR_shader_subgroup.txt, section 3.8: the I() table.
        assert_eq!(<f32 as Scalar>::identity(Add).to_bits(), 0); // +0.0
        assert_eq!(<f32 as Scalar>::identity(Mul), 1.0);
        assert_eq!(<f32 as Scalar>::identity(Min), f32::INFINITY);
        assert_eq!(<f64 as Scalar>::identity(Max), f64::NEG_INFINITY);
        assert_eq!(<i32 as Scalar>::identity(Min), i32::MAX);
        assert_eq!(<i32 as Scalar>::identity(Max), i32::MIN);
        assert_eq!(<u32 as Scalar>::identity(Min), u32::MAX);
        assert_eq!(<u32 as Scalar>::identity(Max), 0);
        assert_eq!(<i32 as Scalar>::identity(And), !0);
        assert_eq!(<u32 as Scalar>::identity(Or), 0);
        assert!(<bool as Scalar>::identity(And));
        assert!(!<bool as Scalar>::identity(Or));
        assert!(!<bool as Scalar>::identity(Xor));
    }

    #[test]
    fn float_min_and_max_ignore_a_nan_operand() {
        assert_eq!(Scalar::min(f32::NAN, 2.0f32), 2.0);
        assert_eq!(Scalar::max(3.0f32, f32::NAN), 3.0);
        assert!(Scalar::min(f32::NAN, f32::NAN).is_nan());
    }
}
