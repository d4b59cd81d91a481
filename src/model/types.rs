//! Value types of subgroup operands: the twelve GLSL scalar types, their 2-, 3- and 4-component
//! vectors, and the classes of types an operation takes.
//!
//! The leaf of the model: it uses no other model module (their errors wrap [`TypeError`]).

use std::fmt;
use std::str::FromStr;

/// A type name or shape that is not one of the 48 value types. Converted into
/// [`ModelError`](crate::model::ModelError) (same variant names, same messages) at the model's edge.
///
/// ```
/// use lockstep::model::{ModelError, ScalarType, TypeError, ValueType};
/// let e = "u128".parse::<ValueType>().unwrap_err();
/// assert_eq!(e, TypeError::UnknownType("u128".into()));
/// assert_eq!(ModelError::from(e.clone()).to_string(), e.to_string());
/// assert_eq!(ValueType::new(ScalarType::U8, 0).unwrap_err(), TypeError::InvalidComponents(0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// Vectors have 2, 3 or 4 components.
    #[error("{0} components: a value has 1 to 4 components")]
    InvalidComponents(u32),
    /// Unknown type name.
    #[error("unknown type '{0}': use bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, optionally with x2/x3/x4 (or the GLSL names: uint, vec4, f16vec2, …)")]
    UnknownType(String),
}

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
    pub fn new(scalar: ScalarType, components: u8) -> Result<Self, TypeError> {
        if !(1..=4).contains(&components) {
            return Err(TypeError::InvalidComponents(components as u32));
        }
        Ok(ValueType { scalar, components })
    }

    /// The type of `[S; N]` lane values, unchecked: the gathers also move wider lane records
    /// (the Gray-Scott model shuffles 6 floats per lane), which no operand type describes.
    pub(crate) const fn vector(scalar: ScalarType, components: usize) -> Self {
        ValueType {
            scalar,
            components: components as u8,
        }
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
    type Err = TypeError;

    /// Accepts the short names (`u32`, `f32x4`) and the GLSL names (`uint`, `vec4`, `f16vec2`, `int64_t`).
    fn from_str(s: &str) -> Result<Self, TypeError> {
        let t = s.trim();
        for vt in ValueType::all() {
            if vt.to_string() == t || vt.glsl() == t {
                return Ok(vt);
            }
        }
        Err(TypeError::UnknownType(t.to_string()))
    }
}

/// Which value types an operation takes (GL_KHR_shader_subgroup, chapter 8 signatures).
///
/// ```
/// use lockstep::model::{TypeClass, ValueType};
/// let f32x2: ValueType = "vec2".parse().unwrap();
/// assert!(TypeClass::Numeric.accepts(f32x2));
/// assert!(!TypeClass::IntegerOrBool.accepts(f32x2));
/// assert!(TypeClass::Bool.accepts(ValueType::BOOL));
/// assert_eq!(TypeClass::Any.types().len(), 48); // 12 scalar types x 1..=4 components
/// assert_eq!(TypeClass::Numeric.short(), "int, float");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    /// No value operand (elect, built-ins, ballot bit operations).
    NoValue,
    /// A scalar `bool` (all, any, ballot).
    Bool,
    /// genType, genIType, genUType, genBType, genDType and the extended types: every scalar and vector.
    Any,
    /// Numbers (no bool): Add, Mul, Min, Max.
    Numeric,
    /// Integers and bools (no floats): And, Or, Xor.
    IntegerOrBool,
}

impl TypeClass {
    /// Does the class contain `t`?
    pub fn accepts(self, t: ValueType) -> bool {
        let s = t.scalar_type();
        match self {
            TypeClass::NoValue => false,
            TypeClass::Bool => t == ValueType::BOOL,
            TypeClass::Any => true,
            TypeClass::Numeric => s != ScalarType::Bool,
            TypeClass::IntegerOrBool => !s.is_float(),
        }
    }

    /// Every type in the class.
    pub fn types(self) -> Vec<ValueType> {
        ValueType::all().filter(|t| self.accepts(*t)).collect()
    }

    /// How the class is described in errors and tables.
    pub fn describe(self) -> &'static str {
        match self {
            TypeClass::NoValue => "no value operand",
            TypeClass::Bool => "bool",
            TypeClass::Any => "any scalar or vector type (bool, ints, floats)",
            TypeClass::Numeric => "integer and float scalars and vectors (not bool)",
            TypeClass::IntegerOrBool => "integer and bool scalars and vectors (not floats)",
        }
    }

    /// Short form for the `ops` table.
    pub fn short(self) -> &'static str {
        match self {
            TypeClass::NoValue => "-",
            TypeClass::Bool => "bool",
            TypeClass::Any => "all",
            TypeClass::Numeric => "int, float",
            TypeClass::IntegerOrBool => "int, bool",
        }
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
}
