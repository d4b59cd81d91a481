//! Kernel buffers: typed host arrays, the specs that make them (`.npy` files, `zeros:u32:1024`,
//! `fill:`, `series:`, `random:`, `values:`), bindings (`SET.BINDING=SPEC`) and `.npy` I/O.
//!
//! A [`HostBuffer`] is a scalar type, a shape (C order) and the little-endian bytes of its
//! elements; `bool` takes one byte per element (0 or 1), as numpy stores it.
//!
//! `.npy` files are read and written here, not through ndarray-npy: that crate wants the element
//! type at compile time and has no `f16`, while a buffer's type is only known from the file or
//! spec, and the npy format (a magic string, a Python-literal header, the raw data) is small. The
//! header is parsed with py_literal (the parser ndarray-npy itself uses); the tests check files
//! both ways against ndarray-npy.

use crate::model::{Scalar, ScalarType, Value, ValueType};
use half::f16;
use py_literal::Value as Py;
use rand::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The largest buffer a spec or `.npy` file may make (4 GiB, the largest storage buffer range
/// devices commonly allow); larger is an error, not an allocation failure.
pub const MAX_BUFFER_BYTES: usize = 1 << 32;

/// A typed array on the host: scalar type, shape (C order) and little-endian element bytes.
///
/// ```
/// use lockstep::kernel::HostBuffer;
/// use lockstep::model::ScalarType;
/// let b = HostBuffer::from_values(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
/// assert_eq!((b.dtype, b.len(), b.bytes.len()), (ScalarType::F32, 4, 16));
/// assert_eq!(b.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
/// assert!(b.to_vec::<u32>().is_none()); // wrong type
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostBuffer {
    /// element type
    pub dtype: ScalarType,
    /// dimensions, C order (empty: a single element)
    pub shape: Vec<usize>,
    /// the elements, little-endian, `len() * element_size(dtype)` bytes
    pub bytes: Vec<u8>,
}

/// Bytes per element of `t` in a [`HostBuffer`] (`bool`: 1).
pub fn element_size(t: ScalarType) -> usize {
    match t {
        ScalarType::Bool => 1,
        t => t.bits() as usize / 8,
    }
}

/// Elements of `shape`, and their bytes for `dtype`, or an error when they exceed [`MAX_BUFFER_BYTES`].
fn sized(dtype: ScalarType, shape: &[usize]) -> Result<(usize, usize), String> {
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n.checked_mul(element_size(dtype)).is_some());
    match n {
        Some(n) if n * element_size(dtype) <= MAX_BUFFER_BYTES => Ok((n, n * element_size(dtype))),
        _ => Err(format!(
            "shape {shape:?} of {dtype} is larger than the {} GiB a buffer may have",
            MAX_BUFFER_BYTES >> 30
        )),
    }
}

fn zeroed(bytes: usize) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes)
        .map_err(|_| format!("cannot allocate {bytes} bytes"))?;
    v.resize(bytes, 0);
    Ok(v)
}

impl HostBuffer {
    /// A buffer from parts, checking that `bytes` holds exactly the elements of `shape` (and, for
    /// `bool`, that every byte is 0 or 1).
    pub fn new(dtype: ScalarType, shape: Vec<usize>, bytes: Vec<u8>) -> Result<Self, BufferError> {
        let (n, size) = sized(dtype, &shape).map_err(BufferError::Shape)?;
        if bytes.len() != size {
            return Err(BufferError::Shape(format!(
                "{n} element(s) of {dtype} (shape {shape:?}) take {size} bytes, not {}",
                bytes.len()
            )));
        }
        if dtype == ScalarType::Bool
            && let Some(i) = bytes.iter().position(|&b| b > 1)
        {
            return Err(BufferError::Shape(format!(
                "bool element {i} is the byte {}, not 0 or 1",
                bytes[i]
            )));
        }
        Ok(HostBuffer {
            dtype,
            shape,
            bytes,
        })
    }

    /// A buffer of `values` with `shape` (their count must match).
    pub fn from_values<S: Scalar>(shape: &[usize], values: &[S]) -> Result<Self, BufferError> {
        let size = element_size(S::TYPE);
        let mut bytes = Vec::with_capacity(values.len() * size);
        for v in values {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes()[..size]);
        }
        HostBuffer::new(S::TYPE, shape.to_vec(), bytes)
    }

    /// A 1-D buffer of `values`.
    pub fn from_slice<S: Scalar>(values: &[S]) -> Self {
        // One dimension of the values' own count always fits (they are already in memory).
        let size = element_size(S::TYPE);
        let mut bytes = Vec::with_capacity(values.len() * size);
        for v in values {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes()[..size]);
        }
        HostBuffer {
            dtype: S::TYPE,
            shape: vec![values.len()],
            bytes,
        }
    }

    /// The elements as `S`, or `None` when the buffer holds another type.
    pub fn to_vec<S: Scalar>(&self) -> Option<Vec<S>> {
        if S::TYPE != self.dtype {
            return None;
        }
        Some(
            (0..self.len())
                .map(|i| S::from_bits(self.bits(i)))
                .collect(),
        )
    }

    /// Number of elements (the product of the shape).
    pub fn len(&self) -> usize {
        self.bytes.len() / element_size(self.dtype)
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Raw bits of element `i`, zero-extended (panics when `i >= len()`).
    pub fn bits(&self, i: usize) -> u64 {
        let size = element_size(self.dtype);
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(&self.bytes[i * size..(i + 1) * size]);
        u64::from_le_bytes(w)
    }

    /// Element `i` as a model [`Value`] (panics when `i >= len()`).
    pub fn value(&self, i: usize) -> Value {
        Value::from_bits(ValueType::scalar(self.dtype), &[self.bits(i)])
    }
}

/// What a buffer is made from.
///
/// | form | meaning |
/// | --- | --- |
/// | `PATH.npy` | a numpy array file: its dtype and shape are kept |
/// | `zeros:TYPE:SHAPE` | all zeros |
/// | `fill:TYPE:SHAPE:VALUE` | every element `VALUE` |
/// | `series:TYPE:SHAPE` | 0, 1, 2, … (each exactly representable in `TYPE`) |
/// | `random:TYPE:SHAPE:SEED` | deterministic: floats uniform in [0, 1), integers over their full range, bools 0 or 1 |
/// | `values:TYPE:V1,V2,…` | the listed values, one dimension |
///
/// `TYPE` is `bool`, `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64`, `u64`, `f16`, `f32`, `f64`
/// (or the GLSL name: `uint`, `float`, …); `SHAPE` is a length (`1024`) or dimensions in C order
/// (`64x64`). Values are written as for `lockstep eval --values`: integers decimal or `0x` hex,
/// floats decimal, `nan`, `inf`, `-inf` or `0x` raw bits, bools `true`/`false`/`1`/`0`.
///
/// ```
/// use lockstep::kernel::BufferSpec;
/// let b = "series:u32:4".parse::<BufferSpec>().unwrap().build().unwrap();
/// assert_eq!(b.to_vec::<u32>().unwrap(), [0, 1, 2, 3]);
/// let b = "fill:f32:2x3:1.5".parse::<BufferSpec>().unwrap().build().unwrap();
/// assert_eq!((b.shape.as_slice(), b.to_vec::<f32>().unwrap()[5]), (&[2, 3][..], 1.5));
/// let e = "fill:u8:4:300".parse::<BufferSpec>().unwrap_err();
/// assert!(e.to_string().contains("outside the range 0..=255"), "{e}");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum BufferSpec {
    /// a `.npy` file
    Npy(PathBuf),
    /// all zeros
    Zeros {
        /// element type
        dtype: ScalarType,
        /// dimensions
        shape: Vec<usize>,
    },
    /// every element the same
    Fill {
        /// element type
        dtype: ScalarType,
        /// dimensions
        shape: Vec<usize>,
        /// the element's raw bits
        bits: u64,
    },
    /// 0, 1, 2, …
    Series {
        /// element type
        dtype: ScalarType,
        /// dimensions
        shape: Vec<usize>,
    },
    /// deterministic pseudo-random elements
    Random {
        /// element type
        dtype: ScalarType,
        /// dimensions
        shape: Vec<usize>,
        /// generator seed
        seed: u64,
    },
    /// listed elements, one dimension
    Values {
        /// element type
        dtype: ScalarType,
        /// the elements' raw bits (0 where `refs` puts an address)
        bits: Vec<u64>,
        /// elements that hold a buffer's device address (`@NAME`), filled in when it is known
        refs: Vec<AddressRef>,
    },
}

/// An element of a `values:` spec that holds a device address: `@TARGET`, `@TARGET+BYTES`, and
/// for a 32-bit type `@TARGET.lo` / `@TARGET.hi` (the two halves of a `uvec2` address). `TARGET`
/// is a binding (`1`, `0.2`) or the name of a buffer given without one (`--buffer NAME=SPEC`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressRef {
    /// the element (index in the list)
    pub element: usize,
    /// the buffer, as written
    pub target: String,
    /// bytes past its base
    pub plus: u64,
    /// all of the address, or one half of it
    pub width: crate::words::address::Width,
}

impl AddressRef {
    fn parse(element: usize, dtype: ScalarType, text: &str) -> Result<AddressRef, String> {
        use crate::words::address::Width;
        let body = text.trim().trim_start_matches('@');
        let (body, width) = if let Some(b) = body.strip_suffix(".lo") {
            (b, Width::Low)
        } else if let Some(b) = body.strip_suffix(".hi") {
            (b, Width::High)
        } else {
            (body, Width::Full)
        };
        let want = match width {
            Width::Full => 64,
            _ => 32,
        };
        if !dtype.is_integer() || dtype.bits() != want {
            return Err(format!(
                "'{text}': a device address is written into a 64-bit integer element (u64, i64), or its halves `.lo` and `.hi` into 32-bit ones (u32, i32); this buffer is {dtype}"
            ));
        }
        let (target, plus) = match body.split_once('+') {
            Some((t, p)) => {
                let p = p.trim();
                let plus = match p.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => p.parse::<u64>().ok(),
                }
                .ok_or_else(|| {
                    format!("'{text}': '{p}' is not a byte count (decimal or 0x hex)")
                })?;
                (t.trim(), plus)
            }
            None => (body.trim(), 0),
        };
        let ok = !target.is_empty()
            && target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !ok {
            return Err(format!(
                "'{text}': expected @BINDING, @SET.BINDING or @NAME, then optionally +BYTES and .lo/.hi"
            ));
        }
        Ok(AddressRef {
            element,
            target: target.to_string(),
            plus,
            width,
        })
    }
}

impl fmt::Display for AddressRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::words::address::Width;
        write!(f, "@{}", self.target)?;
        if self.plus > 0 {
            write!(f, "+{}", self.plus)?;
        }
        match self.width {
            Width::Full => Ok(()),
            Width::Low => write!(f, ".lo"),
            Width::High => write!(f, ".hi"),
        }
    }
}

/// Why a buffer spec, binding or `.npy` file was rejected.
#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    /// A malformed spec: what was given and the rule it breaks.
    #[error("bad buffer spec '{given}': {rule}")]
    Spec {
        /// the spec as given
        given: String,
        /// the rule
        rule: String,
    },
    /// A malformed binding (`BINDING=SPEC` or `SET.BINDING=SPEC`).
    #[error("bad buffer binding '{given}': {rule}")]
    Binding {
        /// the binding as given
        given: String,
        /// the rule
        rule: String,
    },
    /// Shape, size or contents that do not fit together.
    #[error("{0}")]
    Shape(String),
    /// A `.npy` file that could not be read or is not one lockstep accepts.
    #[error("{path}: {rule}")]
    Npy {
        /// the file
        path: String,
        /// what is wrong
        rule: String,
    },
    /// Writing a `.npy` file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// the file
        path: String,
        /// the I/O error
        source: std::io::Error,
    },
}

const FORMS: &str = "expected a .npy file or zeros:TYPE:SHAPE, fill:TYPE:SHAPE:VALUE, series:TYPE:SHAPE, random:TYPE:SHAPE:SEED, values:TYPE:V1,V2,…";

fn parse_type(text: &str) -> Result<ScalarType, String> {
    match text.trim().parse::<ValueType>() {
        Ok(t) if t.components() == 1 => Ok(t.scalar_type()),
        _ => Err(format!(
            "'{text}' is not a scalar type (bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64)"
        )),
    }
}

fn parse_shape(text: &str) -> Result<Vec<usize>, String> {
    let dims: Result<Vec<usize>, _> = text
        .trim()
        .split('x')
        .map(|d| d.trim().parse::<usize>())
        .collect();
    match dims {
        Ok(d) if !d.is_empty() && d.iter().all(|&x| x > 0) => Ok(d),
        Ok(_) => Err(format!(
            "shape '{text}' has a zero dimension: a buffer needs at least one element"
        )),
        Err(_) => Err(format!(
            "'{text}' is not a shape (a length like 1024, or dimensions like 64x64)"
        )),
    }
}

fn parse_bits(dtype: ScalarType, text: &str) -> Result<u64, String> {
    Value::parse(ValueType::scalar(dtype), text.trim())
        .map(|v| v.component_bits(0))
        .map_err(|e| e.to_string())
}

impl FromStr for BufferSpec {
    type Err = BufferError;

    fn from_str(s: &str) -> Result<BufferSpec, BufferError> {
        let err = |rule: String| BufferError::Spec {
            given: s.to_string(),
            rule,
        };
        let Some((form, rest)) = s.split_once(':') else {
            return if s.to_ascii_lowercase().ends_with(".npy") {
                Ok(BufferSpec::Npy(PathBuf::from(s)))
            } else {
                Err(err(FORMS.into()))
            };
        };
        let parts: Vec<&str> = rest.splitn(3, ':').collect();
        let want = |n: usize, usage: &str| -> Result<(), BufferError> {
            if parts.len() == n && parts.iter().all(|p| !p.trim().is_empty()) {
                Ok(())
            } else {
                Err(err(format!("expected {usage}")))
            }
        };
        let spec = match form {
            "zeros" => {
                want(2, "zeros:TYPE:SHAPE")?;
                BufferSpec::Zeros {
                    dtype: parse_type(parts[0]).map_err(err)?,
                    shape: parse_shape(parts[1]).map_err(err)?,
                }
            }
            "fill" => {
                want(3, "fill:TYPE:SHAPE:VALUE")?;
                let dtype = parse_type(parts[0]).map_err(err)?;
                BufferSpec::Fill {
                    dtype,
                    shape: parse_shape(parts[1]).map_err(err)?,
                    bits: parse_bits(dtype, parts[2]).map_err(err)?,
                }
            }
            "series" => {
                want(2, "series:TYPE:SHAPE")?;
                BufferSpec::Series {
                    dtype: parse_type(parts[0]).map_err(err)?,
                    shape: parse_shape(parts[1]).map_err(err)?,
                }
            }
            "random" => {
                want(3, "random:TYPE:SHAPE:SEED")?;
                let seed = parts[2].trim();
                BufferSpec::Random {
                    dtype: parse_type(parts[0]).map_err(err)?,
                    shape: parse_shape(parts[1]).map_err(err)?,
                    seed: seed.parse().map_err(|_| {
                        err(format!("seed '{seed}' is not an unsigned 64-bit integer"))
                    })?,
                }
            }
            "values" => {
                // The values may hold ':' only as a mistake; splitn(3) left them in parts[1..].
                let Some((ty, list)) = rest.split_once(':').filter(|(_, l)| !l.trim().is_empty())
                else {
                    return Err(err("expected values:TYPE:V1,V2,…".into()));
                };
                let dtype = parse_type(ty).map_err(err)?;
                let mut refs = Vec::new();
                let bits = list
                    .split(',')
                    .enumerate()
                    .map(|(i, v)| {
                        if v.trim().starts_with('@') {
                            refs.push(AddressRef::parse(i, dtype, v)?);
                            return Ok(0);
                        }
                        parse_bits(dtype, v).map_err(|e| format!("value {}: {e}", i + 1))
                    })
                    .collect::<Result<Vec<u64>, String>>()
                    .map_err(err)?;
                BufferSpec::Values { dtype, bits, refs }
            }
            _ => return Err(err(FORMS.into())),
        };
        spec.check().map_err(err)?;
        Ok(spec)
    }
}

/// The integer `i` as raw bits of `dtype`, when `dtype` represents it exactly.
fn exact_integer(dtype: ScalarType, i: u64) -> Option<u64> {
    let max: u64 = match dtype {
        ScalarType::Bool => return None,
        ScalarType::F16 => 1 << 11,
        ScalarType::F32 => 1 << 24,
        ScalarType::F64 => 1 << 53,
        t if t.is_signed_integer() => (1u64 << (t.bits() - 1)) - 1,
        t => u64::MAX >> (64 - t.bits()),
    };
    if i > max {
        return None;
    }
    Some(match dtype {
        ScalarType::F16 => f16::from_f64(i as f64).to_bits() as u64,
        ScalarType::F32 => (i as f32).to_bits() as u64,
        ScalarType::F64 => (i as f64).to_bits(),
        _ => i,
    })
}

impl BufferSpec {
    /// The spec's rules that do not need the file system: sizes within [`MAX_BUFFER_BYTES`], a
    /// series exactly representable.
    fn check(&self) -> Result<(), String> {
        let shape = match self {
            BufferSpec::Npy(_) => &[1][..],
            BufferSpec::Values { bits, .. } => &[bits.len()][..],
            BufferSpec::Zeros { shape, .. }
            | BufferSpec::Fill { shape, .. }
            | BufferSpec::Series { shape, .. }
            | BufferSpec::Random { shape, .. } => shape.as_slice(),
        };
        if shape.is_empty() || shape.contains(&0) {
            return Err(format!(
                "shape {shape:?} has no elements: a buffer needs at least one"
            ));
        }
        match self {
            BufferSpec::Npy(_) => Ok(()),
            BufferSpec::Values { dtype, bits, .. } => sized(*dtype, &[bits.len()]).map(|_| ()),
            BufferSpec::Zeros { dtype, shape }
            | BufferSpec::Fill { dtype, shape, .. }
            | BufferSpec::Random { dtype, shape, .. } => sized(*dtype, shape).map(|_| ()),
            BufferSpec::Series { dtype, shape } => {
                let (n, _) = sized(*dtype, shape)?;
                if *dtype == ScalarType::Bool {
                    return Err("a series is 0, 1, 2, …: it needs a number type, not bool".into());
                }
                match exact_integer(*dtype, n as u64 - 1) {
                    Some(_) => Ok(()),
                    None => Err(format!(
                        "a series of {n} elements reaches {}, which {dtype} does not represent exactly",
                        n - 1
                    )),
                }
            }
        }
    }

    /// The element type, when the spec names one (not for `.npy`, whose type is in the file).
    pub fn dtype(&self) -> Option<ScalarType> {
        match self {
            BufferSpec::Npy(_) => None,
            BufferSpec::Zeros { dtype, .. }
            | BufferSpec::Fill { dtype, .. }
            | BufferSpec::Series { dtype, .. }
            | BufferSpec::Random { dtype, .. }
            | BufferSpec::Values { dtype, .. } => Some(*dtype),
        }
    }

    /// The elements that hold device addresses (`@NAME` in a `values:` list).
    pub fn address_refs(&self) -> &[AddressRef] {
        match self {
            BufferSpec::Values { refs, .. } => refs,
            _ => &[],
        }
    }

    /// Makes the buffer (reads the file for `.npy`). A buffer bound to a kernel needs at least
    /// one element, so an empty `.npy` array is an error here.
    pub fn build(&self) -> Result<HostBuffer, BufferError> {
        let (dtype, shape) = match self {
            BufferSpec::Npy(path) => {
                let b = read_npy(path)?;
                if b.is_empty() {
                    return Err(BufferError::Npy {
                        path: path.display().to_string(),
                        rule: format!(
                            "the array (shape {:?}) has no elements: a buffer needs at least one",
                            b.shape
                        ),
                    });
                }
                return Ok(b);
            }
            BufferSpec::Values { dtype, bits, .. } => (*dtype, vec![bits.len()]),
            BufferSpec::Zeros { dtype, shape }
            | BufferSpec::Fill { dtype, shape, .. }
            | BufferSpec::Series { dtype, shape }
            | BufferSpec::Random { dtype, shape, .. } => (*dtype, shape.clone()),
        };
        self.check().map_err(BufferError::Shape)?;
        let (n, size) = sized(dtype, &shape).map_err(BufferError::Shape)?;
        let mut bytes = zeroed(size).map_err(BufferError::Shape)?;
        let es = element_size(dtype);
        let mut put =
            |i: usize, b: u64| bytes[i * es..(i + 1) * es].copy_from_slice(&b.to_le_bytes()[..es]);
        match self {
            BufferSpec::Npy(_) | BufferSpec::Zeros { .. } => {}
            BufferSpec::Fill { bits, .. } => (0..n).for_each(|i| put(i, *bits)),
            BufferSpec::Values { bits, .. } => {
                bits.iter().enumerate().for_each(|(i, b)| put(i, *b))
            }
            BufferSpec::Series { .. } => {
                for i in 0..n {
                    // `check` made sure every element is exact.
                    put(i, exact_integer(dtype, i as u64).unwrap_or(0));
                }
            }
            BufferSpec::Random { seed, .. } => {
                let mut rng = XorShiftRng::seed_from_u64(*seed);
                for i in 0..n {
                    put(i, random_bits(dtype, &mut rng));
                }
            }
        }
        Ok(HostBuffer {
            dtype,
            shape,
            bytes,
        })
    }
}

/// One random element: floats `k · 2^-p` with `k` uniform below `2^p` (p = 11, 24, 53: the
/// significand's precision, so every value is exact and [0, 1) is covered evenly), integers
/// uniform over all their bits, bools 0 or 1.
fn random_bits(dtype: ScalarType, rng: &mut XorShiftRng) -> u64 {
    match dtype {
        ScalarType::Bool => (rng.next_u32() & 1) as u64,
        ScalarType::F16 => f16::from_f32((rng.next_u32() >> 21) as f32 / 2048.0).to_bits() as u64,
        ScalarType::F32 => ((rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32).to_bits() as u64,
        ScalarType::F64 => ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).to_bits(),
        // every integer width: the element keeps the low bytes (`build`'s `put`)
        _ => rng.next_u64(),
    }
}

impl fmt::Display for BufferSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = |s: &[usize]| {
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        let val = |t: ScalarType, b: u64| Value::from_bits(ValueType::scalar(t), &[b]).to_string();
        match self {
            BufferSpec::Npy(p) => write!(f, "{}", p.display()),
            BufferSpec::Zeros { dtype, shape: s } => write!(f, "zeros:{dtype}:{}", shape(s)),
            BufferSpec::Fill {
                dtype,
                shape: s,
                bits,
            } => {
                write!(f, "fill:{dtype}:{}:{}", shape(s), val(*dtype, *bits))
            }
            BufferSpec::Series { dtype, shape: s } => write!(f, "series:{dtype}:{}", shape(s)),
            BufferSpec::Random {
                dtype,
                shape: s,
                seed,
            } => {
                write!(f, "random:{dtype}:{}:{seed}", shape(s))
            }
            BufferSpec::Values { dtype, bits, refs } => write!(
                f,
                "values:{dtype}:{}",
                bits.iter()
                    .enumerate()
                    .map(|(i, b)| match refs.iter().find(|r| r.element == i) {
                        Some(r) => r.to_string(),
                        None => val(*dtype, *b),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// A buffer bound to a descriptor: `BINDING=SPEC` (set 0) or `SET.BINDING=SPEC`, and for an
/// element of an array of descriptors `BINDING[ELEMENT]=SPEC` or `SET.BINDING[ELEMENT]=SPEC`.
///
/// ```
/// use lockstep::kernel::{BindingSpec, BufferSpec};
/// let b: BindingSpec = "1.2=zeros:u32:16".parse().unwrap();
/// assert_eq!((b.set, b.binding), (1, 2));
/// assert!(matches!(b.spec, BufferSpec::Zeros { .. }));
/// assert_eq!("3=in.npy".parse::<BindingSpec>().unwrap().set, 0);
/// assert_eq!("0.1[2]=zeros:u32:4".parse::<BindingSpec>().unwrap().element, 2);
/// assert!("x=zeros:u32:16".parse::<BindingSpec>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BindingSpec {
    /// descriptor set
    pub set: u32,
    /// binding within the set
    pub binding: u32,
    /// the element of an array of descriptors (`[K]`; 0 when not given)
    pub element: u32,
    /// what the buffer holds
    pub spec: BufferSpec,
}

/// A descriptor as the command line names it: `BINDING`, `SET.BINDING`, `BINDING[ELEMENT]` or
/// `SET.BINDING[ELEMENT]` (set and element 0 when not given), unsigned integers.
///
/// ```
/// use lockstep::kernel::buffers::descriptor_slot;
/// assert_eq!(descriptor_slot("3"), Some((0, 3, 0)));
/// assert_eq!(descriptor_slot("1.2[5]"), Some((1, 2, 5)));
/// assert_eq!(descriptor_slot("2[1]"), Some((0, 2, 1)));
/// assert_eq!(descriptor_slot("2[]"), None);
/// assert_eq!(descriptor_slot("x"), None);
/// ```
pub fn descriptor_slot(t: &str) -> Option<(u32, u32, u32)> {
    let num = |t: &str| t.trim().parse::<u32>().ok();
    let (t, element) = match t.trim().strip_suffix(']') {
        Some(rest) => {
            let (t, k) = rest.split_once('[')?;
            (t, num(k)?)
        }
        None => (t, 0),
    };
    let (set, binding) = match t.split_once('.') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (0, num(t)?),
    };
    Some((set, binding, element))
}

impl FromStr for BindingSpec {
    type Err = BufferError;

    fn from_str(s: &str) -> Result<BindingSpec, BufferError> {
        let err = |rule: &str| BufferError::Binding {
            given: s.to_string(),
            rule: rule.to_string(),
        };
        let (target, spec) = s.split_once('=').ok_or_else(|| {
            err("expected BINDING=SPEC, SET.BINDING=SPEC or SET.BINDING[ELEMENT]=SPEC")
        })?;
        let Some((set, binding, element)) = descriptor_slot(target) else {
            return Err(err(
                "the part before '=' must be BINDING, SET.BINDING, BINDING[ELEMENT] or SET.BINDING[ELEMENT], unsigned integers",
            ));
        };
        Ok(BindingSpec {
            set,
            binding,
            element,
            spec: spec.parse()?,
        })
    }
}

impl fmt::Display for BindingSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.set, self.binding)?;
        if self.element > 0 {
            write!(f, "[{}]", self.element)?;
        }
        write!(f, "={}", self.spec)
    }
}

/// A buffer bound to a descriptor: its set, binding and element of an array of descriptors, and
/// its contents.
///
/// ```
/// use lockstep::kernel::{HostBuffer, JobBuffer};
/// let b = JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 4]));
/// assert_eq!((b.set, b.binding, b.element), (0, 1, 0));
/// // `layout(binding = 1) buffer B { uint d[]; } bufs[3];`: element 2 of binding 1
/// let e = JobBuffer::new(0, 1, HostBuffer::from_slice(&[0u32; 4])).element(2);
/// assert_eq!(e.element, 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JobBuffer {
    /// descriptor set
    pub set: u32,
    /// binding within the set
    pub binding: u32,
    /// the element of an array of descriptors at this binding (0 for a plain binding)
    pub element: u32,
    /// the contents
    pub host: HostBuffer,
}

impl JobBuffer {
    /// A buffer for (`set`, `binding`), element 0.
    pub fn new(set: u32, binding: u32, host: HostBuffer) -> JobBuffer {
        JobBuffer {
            set,
            binding,
            element: 0,
            host,
        }
    }

    /// The same buffer at element `element` of an array of descriptors.
    pub fn element(self, element: u32) -> JobBuffer {
        JobBuffer { element, ..self }
    }

    /// Whether it is bound at (`set`, `binding`, `element`).
    pub fn at(&self, set: u32, binding: u32, element: u32) -> bool {
        (self.set, self.binding, self.element) == (set, binding, element)
    }

    /// Its descriptor in the command line's words: `binding 1`, `binding 2.1`, `binding 1[3]`.
    pub fn name(&self) -> String {
        descriptor_name(self.set, self.binding, self.element)
    }
}

/// `b` (set 0) or `s.b`.
pub(crate) fn binding_name(set: u32, binding: u32) -> String {
    if set == 0 {
        format!("binding {binding}")
    } else {
        format!("binding {set}.{binding}")
    }
}

/// `binding_name` with the element of an array of descriptors: `binding 1[3]` (element 0: as
/// `binding_name`).
pub(crate) fn descriptor_name(set: u32, binding: u32, element: u32) -> String {
    match element {
        0 => binding_name(set, binding),
        k => format!("{}[{k}]", binding_name(set, binding)),
    }
}

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

fn npy_descr(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "|b1",
        ScalarType::I8 => "|i1",
        ScalarType::U8 => "|u1",
        ScalarType::I16 => "<i2",
        ScalarType::U16 => "<u2",
        ScalarType::I32 => "<i4",
        ScalarType::U32 => "<u4",
        ScalarType::I64 => "<i8",
        ScalarType::U64 => "<u8",
        ScalarType::F16 => "<f2",
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
    }
}

/// The scalar type and byte order (true: big-endian) of an npy `descr`.
fn parse_descr(d: &str) -> Option<(ScalarType, bool)> {
    let (order, code) = match d.chars().next()? {
        c @ ('<' | '>' | '|' | '=') => (c, &d[1..]),
        _ => ('|', d),
    };
    let t = match code {
        "b1" | "?" => ScalarType::Bool,
        "i1" => ScalarType::I8,
        "u1" => ScalarType::U8,
        "i2" => ScalarType::I16,
        "u2" => ScalarType::U16,
        "i4" => ScalarType::I32,
        "u4" => ScalarType::U32,
        "i8" => ScalarType::I64,
        "u8" => ScalarType::U64,
        "f2" => ScalarType::F16,
        "f4" => ScalarType::F32,
        "f8" => ScalarType::F64,
        _ => return None,
    };
    // '|' (not applicable) and '=' (native: little-endian on every host lockstep builds for).
    Some((t, order == '>' && element_size(t) > 1))
}

/// Reads a `.npy` file: dtype `bool`, `i1`…`u8`, `f2`, `f4`, `f8` in either byte order, C order
/// (a Fortran-order array of more than one dimension is rejected: its element order differs).
///
/// ```
/// use lockstep::kernel::{read_npy, write_npy, HostBuffer};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.npy");
/// let a = HostBuffer::from_values(&[2, 3], &[1i16, -2, 3, -4, 5, -6]).unwrap();
/// write_npy(&path, &a).unwrap();
/// assert_eq!(read_npy(&path).unwrap(), a);
/// ```
pub fn read_npy(path: &Path) -> Result<HostBuffer, BufferError> {
    let shown = path.display().to_string();
    let bad = |rule: String| BufferError::Npy {
        path: shown.clone(),
        rule,
    };
    let data = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    if data.len() < 10 || !data.starts_with(NPY_MAGIC) {
        return Err(bad("not a .npy file (no \\x93NUMPY magic string)".into()));
    }
    let (major, minor) = (data[6], data[7]);
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10usize),
        2 | 3 if data.len() >= 12 => (
            u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
            12,
        ),
        2 | 3 => {
            return Err(bad(format!(
            "the file ends inside its header length (npy format {major}.{minor} gives it 4 bytes)"
        )))
        }
        _ => {
            return Err(bad(format!(
                "npy format version {major}.{minor} is not supported (1.0, 2.0, 3.0)"
            )))
        }
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= data.len())
        .ok_or_else(|| {
            bad(format!(
                "the header length {header_len} runs past the end of the file"
            ))
        })?;
    let header =
        std::str::from_utf8(&data[start..end]).map_err(|_| bad("the header is not text".into()))?;
    let dict: Py = header
        .trim()
        .parse()
        .map_err(|e| bad(format!("the header is not a Python literal: {e}")))?;
    let Py::Dict(entries) = dict else {
        return Err(bad("the header is not a dictionary".into()));
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(k, Py::String(s) if s == key))
            .map(|(_, v)| v)
    };
    let descr = match get("descr") {
        Some(Py::String(s)) => s.clone(),
        Some(other) => {
            return Err(bad(format!(
                "dtype {other} is a structured dtype; lockstep reads arrays of one scalar type"
            )))
        }
        None => return Err(bad("the header has no 'descr'".into())),
    };
    let (dtype, big_endian) = parse_descr(&descr).ok_or_else(|| {
        bad(format!(
            "dtype '{descr}' is not supported (bool, int8…uint64, float16, float32, float64)"
        ))
    })?;
    let fortran = match get("fortran_order") {
        Some(Py::Boolean(b)) => *b,
        _ => return Err(bad("the header has no boolean 'fortran_order'".into())),
    };
    let shape: Vec<usize> = match get("shape") {
        Some(Py::Tuple(dims)) => dims
            .iter()
            .map(|d| d.as_integer().and_then(|i| usize::try_from(i.clone()).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| bad("'shape' is not a tuple of non-negative integers".into()))?,
        _ => return Err(bad("the header has no tuple 'shape'".into())),
    };
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(bad(format!(
            "the array (shape {shape:?}) is in Fortran order; write it in C order (numpy.ascontiguousarray)"
        )));
    }
    let (n, size) = sized(dtype, &shape).map_err(bad)?;
    let body = &data[end..];
    if body.len() != size {
        return Err(bad(format!(
            "the header says {n} element(s) of {descr} ({size} bytes) but the file has {} data bytes",
            body.len()
        )));
    }
    let mut bytes = body.to_vec();
    if big_endian {
        for e in bytes.chunks_exact_mut(element_size(dtype)) {
            e.reverse();
        }
    }
    HostBuffer::new(dtype, shape, bytes).map_err(|e| bad(e.to_string()))
}

/// The npy header for `b` (version 1.0, or 2.0 when the dictionary is too long for 1.0), padded
/// so the data starts at a multiple of 64 bytes as numpy writes it.
fn npy_header(b: &HostBuffer) -> Vec<u8> {
    let shape = match b.shape.len() {
        1 => format!("({},)", b.shape[0]),
        _ => format!(
            "({})",
            b.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        npy_descr(b.dtype)
    );
    // The whole header (magic, version, length, dict, '\n') padded to 64 bytes; version 1.0 when
    // the length of what follows the length field fits its 2 bytes.
    let total =
        |len_bytes: usize| (NPY_MAGIC.len() + 2 + len_bytes + dict.len() + 1).div_ceil(64) * 64;
    let (version, len_bytes) = if total(2) - NPY_MAGIC.len() - 2 - 2 <= u16::MAX as usize {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let total = total(len_bytes);
    let header_len = total - NPY_MAGIC.len() - 2 - len_bytes;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes `b` as a `.npy` file, atomically: into a temporary file in the same directory, renamed
/// over `path` once complete, so a reader never sees half a file.
pub fn write_npy(path: &Path, b: &HostBuffer) -> Result<(), BufferError> {
    let err = |source: std::io::Error| BufferError::Write {
        path: path.display().to_string(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        w.write_all(&npy_header(b)).map_err(err)?;
        w.write_all(&b.bytes).map_err(err)?;
        w.flush().map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
