//! [`Value`], the dynamically typed form of a lane value used at the model's edges (CLI, JSON,
//! device read-back): a type plus the raw bits of each component, with parsing and printing.

use crate::model::error::ModelError;
use crate::model::scalar::{Elem, Scalar};
use crate::model::types::{ScalarType, ValueType};
use half::f16;
use std::fmt;

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
        let w = ty.scalar_type().bits();
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
        match self.ty.scalar_type() {
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
            *slot =
                parse_scalar(ty.scalar_type(), p.trim()).map_err(|why| ModelError::BadValue {
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
        match self.ty.scalar_type() {
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
                if self.ty.scalar_type() == ScalarType::U64 {
                    b.to_string()
                } else if self.ty.scalar_type() == ScalarType::I64 {
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
            match self.ty.scalar_type() {
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
}
