//! Value types of subgroup operands: the twelve GLSL scalar types and their 2-, 3- and 4-component vectors.
//!
//! Lane values travel through the model as `[S; N]` with `S: Scalar` (a scalar is `[S; 1]`), so every
//! operation is written once and is component-wise by construction. [`Value`] is the dynamically typed
//! form used at the edges (CLI, JSON, device read-back): a type plus the raw bits of each component.

use crate::model::error::ModelError;
use half::f16;
use std::fmt;
use std::str::FromStr;

/// The scalar types a subgroup operand may have (GLSL core plus GL_EXT_shader_subgroup_extended_types).
///
/// ```
/// use lockstep::model::ScalarType;
/// let t = ScalarType::F16;
/// assert_eq!((t.name(), t.glsl(), t.bits()), ("f16", "float16_t", 16));
/// assert!(t.is_float() && !t.is_integer());
/// assert!(ScalarType::I8.is_signed_integer() && !ScalarType::U8.is_signed_integer());
/// assert_eq!(ScalarType::F64.glsl_vec_prefix(), "d"); // dvec2
/// assert_eq!(ScalarType::ALL.len(), 12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    /// `bool` (genBType)
    Bool,
    /// `int8_t`
    I8,
    /// `uint8_t`
    U8,
    /// `int16_t`
    I16,
    /// `uint16_t`
    U16,
    /// `int` (genIType)
    I32,
    /// `uint` (genUType)
    U32,
    /// `int64_t`
    I64,
    /// `uint64_t`
    U64,
    /// `float16_t`
    F16,
    /// `float` (genType)
    F32,
    /// `double` (genDType)
    F64,
}

impl ScalarType {
    /// Every scalar type, in catalogue order.
    pub const ALL: [ScalarType; 12] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Short name (`u32`, `f16`, `bool`).
    ///
    /// ```
    /// assert_eq!(lockstep::model::ScalarType::I16.name(), "i16");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// GLSL scalar type name (`uint`, `float16_t`).
    ///
    /// ```
    /// assert_eq!(lockstep::model::ScalarType::U8.glsl(), "uint8_t");
    /// ```
    pub fn glsl(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "int8_t",
            ScalarType::U8 => "uint8_t",
            ScalarType::I16 => "int16_t",
            ScalarType::U16 => "uint16_t",
            ScalarType::I32 => "int",
            ScalarType::U32 => "uint",
            ScalarType::I64 => "int64_t",
            ScalarType::U64 => "uint64_t",
            ScalarType::F16 => "float16_t",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
        }
    }

    /// Prefix of GLSL vector type names (`u` for `uvec2`, `f16` for `f16vec2`, empty for `vec2`).
    pub fn glsl_vec_prefix(self) -> &'static str {
        match self {
            ScalarType::Bool => "b",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i",
            ScalarType::U32 => "u",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::F32 => "",
            ScalarType::F64 => "d",
        }
    }

    /// Width in bits of one component as stored by the model (bool: 1).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I8 | ScalarType::U8 => 8,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 => 16,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 32,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 64,
        }
    }

    /// True for `f16`, `f32`, `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::F32 | ScalarType::F64)
    }

    /// True for the eight integer types.
    pub fn is_integer(self) -> bool {
        !self.is_float() && self != ScalarType::Bool
    }

    /// True for the signed integer types.
    pub fn is_signed_integer(self) -> bool {
        matches!(
            self,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar or vector type: a scalar type and 1 to 4 components.
///
/// ```
/// use lockstep::model::{ScalarType, ValueType};
/// let t: ValueType = "uvec4".parse().unwrap();
/// assert_eq!(t, ValueType::UVEC4);
/// assert_eq!((t.scalar_type(), t.components()), (ScalarType::U32, 4));
/// assert_eq!(t.to_string(), "u32x4");
/// assert_eq!(ValueType::scalar(ScalarType::I64).glsl(), "int64_t");
/// assert_eq!(ValueType::all().count(), 48);
/// assert!("u128".parse::<ValueType>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueType {
    scalar: ScalarType,
    components: u8,
}

impl ValueType {
    /// A type with `components` components (1 = scalar).
    ///
    /// ```
    /// use lockstep::model::{ScalarType, ValueType};
    /// let t = ValueType::new(ScalarType::F32, 3).unwrap();
    /// assert_eq!(t.to_string(), "f32x3");
    /// assert_eq!(t.glsl(), "vec3");
    /// assert!(ValueType::new(ScalarType::F32, 5).is_err());
    /// ```
    pub fn new(scalar: ScalarType, components: u8) -> Result<Self, ModelError> {
        if !(1..=4).contains(&components) {
            return Err(ModelError::InvalidComponents(components as u32));
        }
        Ok(ValueType { scalar, components })
    }

    /// The scalar type `scalar` itself.
    pub const fn scalar(scalar: ScalarType) -> Self {
        ValueType {
            scalar,
            components: 1,
        }
    }

    /// `uint`, the type of ballot bit counts and built-in ids.
    pub const U32: ValueType = ValueType::scalar(ScalarType::U32);
    /// `bool`.
    pub const BOOL: ValueType = ValueType::scalar(ScalarType::Bool);
    /// `uvec4`, the type of ballots and the `gl_Subgroup*Mask` built-ins.
    pub const UVEC4: ValueType = ValueType {
        scalar: ScalarType::U32,
        components: 4,
    };

    /// The component type.
    pub fn scalar_type(self) -> ScalarType {
        self.scalar
    }

    /// Number of components, 1..=4.
    pub fn components(self) -> usize {
        self.components as usize
    }

    /// Every scalar and vector type (48 of them).
    pub fn all() -> impl Iterator<Item = ValueType> {
        ScalarType::ALL.into_iter().flat_map(|s| {
            (1..=4u8).map(move |n| ValueType {
                scalar: s,
                components: n,
            })
        })
    }

    /// GLSL spelling: `uint`, `uvec4`, `f16vec2`, `bvec3`.
    pub fn glsl(self) -> String {
        if self.components == 1 {
            self.scalar.glsl().to_string()
        } else {
            format!("{}vec{}", self.scalar.glsl_vec_prefix(), self.components)
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.components == 1 {
            write!(f, "{}", self.scalar)
        } else {
            write!(f, "{}x{}", self.scalar, self.components)
        }
    }
}

impl serde::Serialize for ValueType {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.collect_str(self)
    }
}

impl FromStr for ValueType {
    type Err = ModelError;

    /// Accepts the short names (`u32`, `f32x4`) and the GLSL names (`uint`, `vec4`, `f16vec2`, `int64_t`).
    fn from_str(s: &str) -> Result<Self, ModelError> {
        let t = s.trim();
        for vt in ValueType::all() {
            if vt.to_string() == t || vt.glsl() == t {
                return Ok(vt);
            }
        }
        Err(ModelError::UnknownType(t.to_string()))
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
    /// True for a floating-point zero of either sign.
    fn is_zero_float(self) -> bool {
        false
    }
    /// Numeric equality (`==` in GLSL): for floats NaN != NaN and -0.0 == +0.0.
    fn numeric_eq(self, o: Self) -> bool {
        self == o
    }
    /// The identity of `op` from the table in GL_KHR_shader_subgroup.txt (section 3.8, "I()").
    fn identity(op: crate::model::BinOp) -> Self;
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
            fn identity(op: crate::model::BinOp) -> Self {
                use crate::model::BinOp::*;
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
    fn identity(op: crate::model::BinOp) -> Self {
        use crate::model::BinOp::*;
        match op {
            And | Mul | Min => true,
            Or | Xor | Add | Max => false,
        }
    }
}

macro_rules! float_scalar {
    ($t:ty, $bits:ty, $tag:ident, $from:expr, $to:expr) => {
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
            fn is_zero_float(self) -> bool {
                self == $from(0.0)
            }
            fn numeric_eq(self, o: Self) -> bool {
                self == o
            }
            fn identity(op: crate::model::BinOp) -> Self {
                use crate::model::BinOp::*;
                let _ = $to;
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
float_scalar!(f32, u32, F32, |x: f64| x as f32, ());
float_scalar!(f64, u64, F64, |x: f64| x, ());
float_scalar!(f16, u16, F16, f16::from_f64, ());

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
    const VALUE_TYPE: ValueType = ValueType {
        scalar: S::TYPE,
        components: N as u8,
    };
}

/// A dynamically typed lane value: a type and the raw bits of each component (unused components are 0).
///
/// ```
/// use lockstep::model::{Ballot, Value, ValueType};
/// let v = Value::of([1.5f32, -0.0]);
/// assert_eq!(v.ty().to_string(), "f32x2");
/// assert_eq!(v.bits(), [0x3fc0_0000, 0x8000_0000]);
/// assert_eq!(v.component_f64(0), 1.5);
/// assert_eq!(v.component_string(1), "-0");
/// assert_eq!(v.to_json(), serde_json::json!([1.5, -0.0]));
/// assert_eq!(v.to_typed::<f32, 2>(), Some([1.5, -0.0]));
/// assert_eq!(v.to_typed::<u32, 2>(), None); // another type
/// assert_eq!(Value::bool(true).to_string(), "true");
/// assert_eq!(Value::u32(7).component_bits(0), 7);
/// assert_eq!(Value::ballot(Ballot(0b101)).ty(), ValueType::UVEC4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Value {
    ty: ValueType,
    bits: [u64; 4],
}

impl Value {
    /// A value from raw component bits; bits above the scalar's width are cleared.
    ///
    /// ```
    /// use lockstep::model::{Value, ValueType};
    /// let v = Value::from_bits(ValueType::U32, &[0x1_0000_0005]);
    /// assert_eq!(v.component_bits(0), 5);
    /// ```
    pub fn from_bits(ty: ValueType, bits: &[u64]) -> Value {
        let w = ty.scalar.bits();
        let keep = if w == 64 { !0u64 } else { (1u64 << w) - 1 };
        let mut b = [0u64; 4];
        for (i, slot) in b.iter_mut().enumerate().take(ty.components()) {
            *slot = bits.get(i).copied().unwrap_or(0) & keep;
        }
        Value { ty, bits: b }
    }

    /// A typed lane value as a [`Value`].
    ///
    /// ```
    /// use lockstep::model::Value;
    /// assert_eq!(Value::of([7u32]).to_string(), "7");
    /// assert_eq!(Value::of([1.5f32, -0.0]).to_string(), "1.5:-0");
    /// ```
    pub fn of<S: Scalar, const N: usize>(v: [S; N]) -> Value {
        let mut bits = [0u64; 4];
        for (slot, c) in bits.iter_mut().zip(v.iter()) {
            *slot = c.to_bits();
        }
        Value {
            ty: <[S; N] as Elem>::VALUE_TYPE,
            bits,
        }
    }

    /// A `bool`.
    pub fn bool(b: bool) -> Value {
        Value::of([b])
    }

    /// A `uint`.
    pub fn u32(x: u32) -> Value {
        Value::of([x])
    }

    /// A `uvec4` ballot.
    pub fn ballot(b: crate::model::Ballot) -> Value {
        Value::of(b.words())
    }

    /// Back to a typed lane value; `None` if the type differs.
    pub fn to_typed<S: Scalar, const N: usize>(&self) -> Option<[S; N]> {
        if self.ty != <[S; N] as Elem>::VALUE_TYPE {
            return None;
        }
        let mut out = [S::from_bits(0); N];
        for (o, b) in out.iter_mut().zip(self.bits.iter()) {
            *o = S::from_bits(*b);
        }
        Some(out)
    }

    /// The value's type.
    pub fn ty(&self) -> ValueType {
        self.ty
    }

    /// Raw bits of component `i` (0 beyond the last component).
    pub fn component_bits(&self, i: usize) -> u64 {
        self.bits.get(i).copied().unwrap_or(0)
    }

    /// Raw bits of every component.
    pub fn bits(&self) -> &[u64] {
        &self.bits[..self.ty.components()]
    }

    /// Component `i` as an f64 (floats and integers; bool as 0/1) — for tolerance checks and JSON.
    pub fn component_f64(&self, i: usize) -> f64 {
        let b = self.component_bits(i);
        match self.ty.scalar {
            ScalarType::Bool => b as f64,
            ScalarType::I8 => b as u8 as i8 as f64,
            ScalarType::U8 => b as u8 as f64,
            ScalarType::I16 => b as u16 as i16 as f64,
            ScalarType::U16 => b as u16 as f64,
            ScalarType::I32 => b as u32 as i32 as f64,
            ScalarType::U32 => b as u32 as f64,
            ScalarType::I64 => b as i64 as f64,
            ScalarType::U64 => b as f64,
            ScalarType::F16 => f16::from_bits(b as u16).to_f64(),
            ScalarType::F32 => f32::from_bits(b as u32) as f64,
            ScalarType::F64 => f64::from_bits(b),
        }
    }

    /// Parses one lane value of type `ty`: components separated by `:` (`1:2:3` for a 3-vector).
    /// Integers are decimal or `0x` hex; bools `true`/`false`/`1`/`0`; floats are decimal, `nan`,
    /// `inf`, `-inf`, or `0x…` for raw bits (to give an exact NaN payload or `-0.0`).
    ///
    /// ```
    /// use lockstep::model::{Value, ValueType};
    /// let t: ValueType = "f32x2".parse().unwrap();
    /// let v = Value::parse(t, "nan:-inf").unwrap();
    /// assert_eq!(v.to_string(), "nan:-inf");
    /// assert!(Value::parse(ValueType::U32, "-1").is_err());
    /// ```
    pub fn parse(ty: ValueType, text: &str) -> Result<Value, ModelError> {
        let parts: Vec<&str> = text.split(':').collect();
        if parts.len() != ty.components() {
            return Err(ModelError::BadValue {
                text: text.to_string(),
                ty,
                why: format!(
                    "{} has {} component(s), separated by ':'",
                    ty,
                    ty.components()
                ),
            });
        }
        let mut bits = [0u64; 4];
        for (slot, p) in bits.iter_mut().zip(parts) {
            *slot = parse_scalar(ty.scalar, p.trim()).map_err(|why| ModelError::BadValue {
                text: text.to_string(),
                ty,
                why,
            })?;
        }
        Ok(Value { ty, bits })
    }

    /// One component formatted for people (`nan`, `-0`, `3.5`, `true`).
    pub fn component_string(&self, i: usize) -> String {
        let b = self.component_bits(i);
        match self.ty.scalar {
            ScalarType::Bool => (b != 0).to_string(),
            ScalarType::F16 => fmt_float(f16::from_bits(b as u16).to_f64(), b, 0x7e00),
            ScalarType::F32 => fmt_float(f32::from_bits(b as u32) as f64, b, 0x7fc0_0000),
            ScalarType::F64 => fmt_float(f64::from_bits(b), b, 0x7ff8_0000_0000_0000),
            ScalarType::I8
            | ScalarType::I16
            | ScalarType::I32
            | ScalarType::I64
            | ScalarType::U8
            | ScalarType::U16
            | ScalarType::U32
            | ScalarType::U64 => {
                let x = self.component_f64(i);
                if self.ty.scalar == ScalarType::U64 {
                    b.to_string()
                } else if self.ty.scalar == ScalarType::I64 {
                    (b as i64).to_string()
                } else {
                    format!("{}", x as i64)
                }
            }
        }
    }

    /// JSON form: a bool or number per component (`"nan"`, `"inf"`, `"-inf"` for non-finite floats),
    /// an array for vectors.
    pub fn to_json(&self) -> serde_json::Value {
        let comp = |i: usize| -> serde_json::Value {
            let b = self.component_bits(i);
            match self.ty.scalar {
                ScalarType::Bool => serde_json::Value::Bool(b != 0),
                ScalarType::U64 => serde_json::Value::from(b),
                ScalarType::I64 => serde_json::Value::from(b as i64),
                s if s.is_integer() => serde_json::Value::from(self.component_f64(i) as i64),
                _ => {
                    let x = self.component_f64(i);
                    if x.is_nan() {
                        "nan".into()
                    } else if x == f64::INFINITY {
                        "inf".into()
                    } else if x == f64::NEG_INFINITY {
                        "-inf".into()
                    } else {
                        serde_json::Value::from(x)
                    }
                }
            }
        };
        if self.ty.components() == 1 {
            comp(0)
        } else {
            serde_json::Value::Array((0..self.ty.components()).map(comp).collect())
        }
    }
}

fn fmt_float(x: f64, bits: u64, canonical_nan: u64) -> String {
    if x.is_nan() {
        if bits == canonical_nan {
            "nan".to_string()
        } else {
            format!("nan(0x{bits:x})")
        }
    } else if x == f64::INFINITY {
        "inf".to_string()
    } else if x == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        format!("{x}")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in 0..self.ty.components() {
            if i > 0 {
                f.write_str(":")?;
            }
            f.write_str(&self.component_string(i))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.ty, self)
    }
}

fn parse_int(text: &str) -> Result<i128, String> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let mag = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(hex, 16)
    } else {
        body.parse::<i128>()
    }
    .map_err(|_| format!("'{text}' is not an integer"))?;
    Ok(if neg { -mag } else { mag })
}

fn parse_scalar(s: ScalarType, text: &str) -> Result<u64, String> {
    let ranged = |lo: i128, hi: i128, bits: u32| -> Result<u64, String> {
        let v = parse_int(text)?;
        if v < lo || v > hi {
            return Err(format!("{text} is outside the range {lo}..={hi} of {s}"));
        }
        let mask = if bits == 64 {
            !0u64
        } else {
            (1u64 << bits) - 1
        };
        Ok((v as i64 as u64) & mask)
    };
    let float_bits = |hex: &str, max_bits: u32| -> Result<u64, String> {
        let b = u64::from_str_radix(hex, 16).map_err(|_| format!("'{text}' is not hex bits"))?;
        if max_bits < 64 && b >> max_bits != 0 {
            return Err(format!("{text} has more than {max_bits} bits"));
        }
        Ok(b)
    };
    let parse_f64 = || -> Result<f64, String> {
        match text.to_ascii_lowercase().as_str() {
            "nan" => Ok(f64::NAN),
            "inf" | "+inf" | "infinity" => Ok(f64::INFINITY),
            "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
            t => t.parse::<f64>().map_err(|_| {
                format!(
                    "'{text}' is not a number (floats: decimal, nan, inf, -inf, or 0x raw bits)"
                )
            }),
        }
    };
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    match s {
        ScalarType::Bool => match text {
            "true" | "1" => Ok(1),
            "false" | "0" => Ok(0),
            _ => Err(format!("'{text}' is not a bool (true, false, 1, 0)")),
        },
        ScalarType::I8 => ranged(i8::MIN as i128, i8::MAX as i128, 8),
        ScalarType::U8 => ranged(0, u8::MAX as i128, 8),
        ScalarType::I16 => ranged(i16::MIN as i128, i16::MAX as i128, 16),
        ScalarType::U16 => ranged(0, u16::MAX as i128, 16),
        ScalarType::I32 => ranged(i32::MIN as i128, i32::MAX as i128, 32),
        ScalarType::U32 => ranged(0, u32::MAX as i128, 32),
        ScalarType::I64 => ranged(i64::MIN as i128, i64::MAX as i128, 64),
        ScalarType::U64 => ranged(0, u64::MAX as i128, 64),
        ScalarType::F16 => match hex {
            Some(h) => float_bits(h, 16),
            None => Ok(f16::from_f64(parse_f64()?).to_bits() as u64),
        },
        ScalarType::F32 => match hex {
            Some(h) => float_bits(h, 32),
            None => Ok((parse_f64()? as f32).to_bits() as u64),
        },
        ScalarType::F64 => match hex {
            Some(h) => float_bits(h, 64),
            None => Ok(parse_f64()?.to_bits()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_name_round_trips_in_both_spellings() {
        for t in ValueType::all() {
            assert_eq!(t.to_string().parse::<ValueType>().unwrap(), t);
            assert_eq!(t.glsl().parse::<ValueType>().unwrap(), t);
        }
        assert_eq!(ValueType::all().count(), 48);
    }

    #[test]
    fn values_parse_and_print_with_nan_payloads_and_signed_zero() {
        let t = ValueType::scalar(ScalarType::F32);
        assert_eq!(
            Value::parse(t, "0x7fc00001").unwrap().to_string(),
            "nan(0x7fc00001)"
        );
        assert_eq!(Value::parse(t, "0x80000000").unwrap().to_string(), "-0");
        assert_eq!(
            Value::parse(t, "-0.0").unwrap().component_bits(0),
            0x8000_0000
        );
        let i8t = ValueType::scalar(ScalarType::I8);
        assert_eq!(Value::parse(i8t, "-128").unwrap().component_bits(0), 0x80);
        assert!(Value::parse(i8t, "128").is_err());
        assert!(Value::parse(ValueType::BOOL, "yes").is_err());
    }

    #[test]
    fn identities_match_the_glsl_table() {
        use crate::model::BinOp::*;
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
