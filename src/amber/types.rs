//! Amber data types (`uint32`, `vec4<float>`, `mat2x3<double>`, `float[]`, `R32G32_SFLOAT`), their
//! memory layout under `STD140` / `STD430`, and literal values encoded into and decoded from bytes.
//!
//! A buffer is a sequence of elements of one data type. Its bytes are laid out so that a backend can
//! bind them directly to a GLSL block whose member is an array of that type, following the Vulkan
//! "Offset and Stride Assignment" rules (Vulkan 1.3 §15.6.4, `std430` = *base alignment*, `std140`
//! = *extended alignment*) which are GLSL 4.60 §7.6.2.2 "Standard Uniform Block Layout" rules 1–8:
//!
//! - a scalar of N bytes has base alignment N (rule 1);
//! - a two-component vector has base alignment 2N, a three- or four-component vector 4N (rules 2
//!   and 3) — so consecutive `vec3` elements are 4N apart, the fourth slot being padding;
//! - a column-major matrix is stored as its C column vectors (rule 5); the column stride is the
//!   column vector's base alignment, rounded up to 16 bytes under std140 (rule 4: "rounded up to
//!   the base alignment of a vec4");
//! - an array (`T[]`) has a stride of its element's size rounded up to the element's base
//!   alignment, and under std140 additionally rounded up to a multiple of 16 (rule 4; Vulkan:
//!   "an array … has an extended alignment equal to the largest extended alignment of its
//!   member type, rounded up to a multiple of 16"). std430 drops that rounding (GLSL §7.6.2.2,
//!   last paragraph).
//!
//! A buffer of a non-array type (`DATA_TYPE float`) lays its elements out as consecutive block
//! members: each at the next offset aligned to the type's base alignment, the same under both
//! layouts for scalars and vectors (AmberScript's docs/memory_layout.md, "Scalars" and "Vectors").
//! Buffers are STD430 unless the script says STD140 (AmberScript: "Buffers are STD430 by default").

use std::fmt;

/// AmberScript's scalar component types (`int8` … `uint64`, `float16`, `float`, `double`) are the
/// model's scalar types — one definition of each — under their Amber names. AmberScript has no
/// `bool`: no script names one.
pub use crate::model::ScalarType as Scalar;

impl Scalar {
    /// Size in bytes of one component in an Amber buffer (a `bool`, which no script declares,
    /// as SPIR-V stores one: 4).
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool => 4,
            t => t.bits() as usize / 8,
        }
    }

    /// The AmberScript name (`int8`, `float`, `double`, …; `bool` for the one Amber lacks).
    pub fn amber_name(self) -> &'static str {
        match self {
            Scalar::I8 => "int8",
            Scalar::I16 => "int16",
            Scalar::I32 => "int32",
            Scalar::I64 => "int64",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "uint32",
            Scalar::U64 => "uint64",
            Scalar::F16 => "float16",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::Bool => "bool",
        }
    }

    /// Parses an AmberScript scalar name (never `bool`).
    pub fn from_amber_name(s: &str) -> Option<Scalar> {
        Scalar::ALL
            .into_iter()
            .filter(|t| *t != Scalar::Bool)
            .find(|t| t.amber_name() == s)
    }
}

/// `STD140` or `STD430` (the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// GLSL std140 (Vulkan extended alignment).
    Std140,
    /// GLSL std430 (Vulkan base alignment); AmberScript's default.
    #[default]
    Std430,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::Std140 => "STD140",
            Layout::Std430 => "STD430",
        })
    }
}

/// A buffer element type: a scalar, a vector (`rows` components), or a column-major matrix
/// (`columns` columns of `rows` components), optionally as an array element (`T[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataType {
    /// The component type.
    pub scalar: Scalar,
    /// Components per column: 1 (scalar) to 4.
    pub rows: u8,
    /// Columns: 1 (scalar or vector) to 4 (matrix).
    pub columns: u8,
    /// `T[]`: laid out with the array stride of the layout rules.
    pub array: bool,
}

/// Where each component of one element lies, and how far apart elements are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementLayout {
    /// Bytes from one element to the next.
    pub stride: usize,
    /// Byte offset of each component within the element, in AmberScript order (column by column).
    pub offsets: Vec<usize>,
    /// The component type.
    pub scalar: Scalar,
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

impl DataType {
    /// A scalar type.
    pub fn scalar(scalar: Scalar) -> DataType {
        DataType {
            scalar,
            rows: 1,
            columns: 1,
            array: false,
        }
    }

    /// Components per element (rows × columns).
    pub fn components(&self) -> usize {
        self.rows as usize * self.columns as usize
    }

    /// Whether this is a vector or a matrix (not a scalar).
    pub fn is_composite(&self) -> bool {
        self.components() > 1
    }

    /// The layout of one element under `layout` (see the module docs for the rules).
    ///
    /// ```
    /// use lockstep::amber::{DataType, Layout};
    /// let t: DataType = "vec3<float>".parse().unwrap();
    /// assert_eq!(t.element_layout(Layout::Std430).stride, 16); // vec3: base alignment 4N
    /// let a: DataType = "float[]".parse().unwrap();
    /// assert_eq!(a.element_layout(Layout::Std140).stride, 16); // std140 arrays: multiple of 16
    /// assert_eq!(a.element_layout(Layout::Std430).stride, 4);
    /// ```
    pub fn element_layout(&self, layout: Layout) -> ElementLayout {
        let n = self.scalar.size();
        // Base alignment of a vector of `rows` components (rules 1–3).
        let vec_align = match self.rows {
            1 => n,
            2 => 2 * n,
            _ => 4 * n,
        };
        let (size, align, col_stride) = if self.columns == 1 {
            (self.rows as usize * n, vec_align, 0)
        } else {
            // Rule 5: C column vectors, each an array element per rule 4 (std140 rounds to 16).
            let col_stride = match layout {
                Layout::Std140 => round_up(vec_align, 16),
                Layout::Std430 => vec_align,
            };
            (self.columns as usize * col_stride, col_stride, col_stride)
        };
        let mut stride = round_up(size, align);
        if self.array && layout == Layout::Std140 {
            stride = round_up(stride, 16);
        }
        let mut offsets = Vec::with_capacity(self.components());
        for c in 0..self.columns as usize {
            for r in 0..self.rows as usize {
                offsets.push(c * col_stride + r * n);
            }
        }
        ElementLayout {
            stride,
            offsets,
            scalar: self.scalar,
        }
    }

    /// Reads a Vulkan format name: [`FormatKind::Plain`] for a scalar or vector of one integer or
    /// float type (`R32_UINT`, `R8G8_SINT`, `R32G32B32A32_SFLOAT`, `R64_SFLOAT`),
    /// [`FormatKind::Image`] for another Vulkan image format (normalized, packed, sRGB,
    /// depth/stencil, BGR order), `None` when it is no format at all.
    ///
    /// ```
    /// use lockstep::amber::{DataType, FormatKind};
    /// assert_eq!(DataType::from_format("R32G32_SFLOAT"), Some(FormatKind::Plain("vec2<float>".parse().unwrap())));
    /// assert_eq!(DataType::from_format("R8G8B8A8_UNORM"), Some(FormatKind::Image));
    /// assert_eq!(DataType::from_format("uint32"), None);
    /// ```
    pub fn from_format(name: &str) -> Option<FormatKind> {
        let (channels, mode) = name.rsplit_once('_')?;
        if !looks_like_format(name) {
            return None;
        }
        let parsed = (|| {
            let mut bits = None;
            let mut count = 0u8;
            let mut rest = channels;
            for letter in ['R', 'G', 'B', 'A'] {
                let Some(r) = rest.strip_prefix(letter) else {
                    break;
                };
                let digits = r.chars().take_while(|c| c.is_ascii_digit()).count();
                let b: u32 = r[..digits].parse().ok()?;
                if *bits.get_or_insert(b) != b {
                    return None;
                }
                count += 1;
                rest = &r[digits..];
            }
            if count == 0 || !rest.is_empty() {
                return None;
            }
            let scalar = match (mode, bits?) {
                ("UINT", 8) => Scalar::U8,
                ("UINT", 16) => Scalar::U16,
                ("UINT", 32) => Scalar::U32,
                ("UINT", 64) => Scalar::U64,
                ("SINT", 8) => Scalar::I8,
                ("SINT", 16) => Scalar::I16,
                ("SINT", 32) => Scalar::I32,
                ("SINT", 64) => Scalar::I64,
                ("SFLOAT", 16) => Scalar::F16,
                ("SFLOAT", 32) => Scalar::F32,
                ("SFLOAT", 64) => Scalar::F64,
                _ => return None,
            };
            Some(DataType {
                scalar,
                rows: count,
                columns: 1,
                array: false,
            })
        })();
        Some(parsed.map_or(FormatKind::Image, FormatKind::Plain))
    }
}

/// What a Vulkan format name is to a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatKind {
    /// A plain scalar or vector of one UINT, SINT or SFLOAT type.
    Plain(DataType),
    /// Any other image format (normalized, packed, sRGB, depth/stencil, BGR order, mixed sizes).
    Image,
}

/// Whether `name` has the shape of a Vulkan format name (`R8G8B8A8_UNORM`, `D32_SFLOAT_S8_UINT`,
/// `A2B10G10R10_UINT_PACK32`, …): upper-case channel letters with bit counts, then a numeric mode.
fn looks_like_format(name: &str) -> bool {
    const MODES: [&str; 12] = [
        "UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "UFLOAT", "SFLOAT", "SRGB",
        "PACK8", "PACK16", "PACK32",
    ];
    let mut chars = name.chars();
    let first_ok = matches!(
        chars.next(),
        Some('R' | 'G' | 'B' | 'A' | 'D' | 'S' | 'X' | 'E')
    ) && chars.next().is_some_and(|c| c.is_ascii_digit());
    first_ok
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && MODES.iter().any(|m| name.ends_with(m))
}

impl std::str::FromStr for DataType {
    type Err = ();

    /// Parses an AmberScript `DATA_TYPE` name: a scalar, `vecN<T>`, `matCxR<T>`, any of them with
    /// `[]`, or a plain scalar/vector format name (`R32G32_SFLOAT`).
    fn from_str(s: &str) -> Result<DataType, ()> {
        let (base, array) = match s.strip_suffix("[]") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let inner = |prefix_len: usize| -> Option<Scalar> {
            let rest = base.get(prefix_len..)?;
            let t = rest.strip_prefix('<')?.strip_suffix('>')?;
            Scalar::from_amber_name(t)
        };
        let digit = |i: usize| -> Option<u8> {
            let c = *base.as_bytes().get(i)?;
            let d = c.checked_sub(b'0')?;
            (2..=4).contains(&d).then_some(d)
        };
        let t = if let Some(scalar) = Scalar::from_amber_name(base) {
            DataType::scalar(scalar)
        } else if base.starts_with("vec") {
            let rows = digit(3).ok_or(())?;
            DataType {
                scalar: inner(4).ok_or(())?,
                rows,
                columns: 1,
                array: false,
            }
        } else if base.starts_with("mat") && base.as_bytes().get(4) == Some(&b'x') {
            let columns = digit(3).ok_or(())?;
            let rows = digit(5).ok_or(())?;
            DataType {
                scalar: inner(6).ok_or(())?,
                rows,
                columns,
                array: false,
            }
        } else {
            match DataType::from_format(base) {
                Some(FormatKind::Plain(t)) => t,
                _ => return Err(()),
            }
        };
        Ok(DataType { array, ..t })
    }
}

impl fmt::Display for DataType {
    /// The AmberScript name: `uint32`, `vec3<float>`, `mat2x4<double>`, `int8[]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.scalar.amber_name();
        match (self.columns, self.rows) {
            (1, 1) => write!(f, "{s}")?,
            (1, r) => write!(f, "vec{r}<{s}>")?,
            (c, r) => write!(f, "mat{c}x{r}<{s}>")?,
        }
        if self.array {
            f.write_str("[]")?;
        }
        Ok(())
    }
}

/// A number as written in a script: an integer (decimal or `0x` hex) or a floating-point literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// An integer, kept exactly.
    Int(i128),
    /// A number with a decimal point or exponent.
    Float(f64),
}

impl Literal {
    /// Parses one token: `-?[0-9]+`, `0x[0-9a-fA-F]+`, or a decimal float (`1.5`, `-.5`, `2e-3`).
    /// AmberScript reads a token as a number only when it starts with a digit, `-digit` or `.digit`.
    ///
    /// `nan` (any case; Amber's tokenizer reads it as a number) and `inf`, `-inf` (which Amber's
    /// tokenizer does not accept; lockstep does, for float data) are floats.
    pub fn parse(tok: &str) -> Option<Literal> {
        if tok.eq_ignore_ascii_case("nan") {
            return Some(Literal::Float(f64::NAN));
        }
        match tok.to_ascii_lowercase().as_str() {
            "inf" | "+inf" => return Some(Literal::Float(f64::INFINITY)),
            "-inf" => return Some(Literal::Float(f64::NEG_INFINITY)),
            _ => {}
        }
        let b = tok.as_bytes();
        let starts_numeric = match b {
            [c, ..] if c.is_ascii_digit() => true,
            [b'-' | b'.', c, ..] if c.is_ascii_digit() => true,
            [b'-', b'.', c, ..] if c.is_ascii_digit() => true,
            _ => false,
        };
        if !starts_numeric {
            return None;
        }
        if let Some(hex) = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")) {
            if hex.is_empty() || hex.len() > 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            return u128::from_str_radix(hex, 16)
                .ok()
                .and_then(|v| i128::try_from(v).ok())
                .map(Literal::Int);
        }
        let digits = tok.strip_prefix('-').unwrap_or(tok);
        if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
            if digits.len() > 38 {
                return None;
            }
            return tok.parse::<i128>().ok().map(Literal::Int);
        }
        if tok
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            return tok
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(Literal::Float);
        }
        None
    }

    /// The value as a float (integers converted, the nearest double).
    pub fn as_f64(self) -> f64 {
        match self {
            Literal::Int(i) => i as f64,
            Literal::Float(f) => f,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x}"),
        }
    }
}

/// One component read from bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer component (signed or unsigned by its type).
    Int(i128),
    /// A float component, widened to f64 exactly.
    Float(f64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_nan() => f.write_str("nan"),
            Value::Float(x) => write!(f, "{x}"),
        }
    }
}

/// Why a literal does not fit a component type.
#[derive(Clone, Debug, PartialEq)]
pub struct LiteralError(pub String);

impl Scalar {
    /// Encodes `lit` as this type, little-endian, into `out` (exactly `self.size()` bytes).
    ///
    /// Integers must lie in `-(2^(n-1)) ..= 2^n - 1` and are stored modulo 2^n (so `-1` is
    /// all ones for unsigned types, as AmberScript stores it); a float literal for an integer type
    /// is an error. Floats take integer or float literals (and hex, as its numeric value — what
    /// Amber does), rounded to nearest.
    pub fn encode(self, lit: Literal, out: &mut [u8]) -> Result<(), LiteralError> {
        let n = self.size();
        if self.is_float() {
            let v = lit.as_f64();
            match self {
                Scalar::F16 => out.copy_from_slice(&half::f16::from_f64(v).to_le_bytes()),
                Scalar::F32 => out.copy_from_slice(&(v as f32).to_le_bytes()),
                _ => out.copy_from_slice(&v.to_le_bytes()),
            }
            return Ok(());
        }
        let Literal::Int(v) = lit else {
            return Err(LiteralError(format!(
                "{lit} is not an integer ({} takes integers)",
                self.amber_name()
            )));
        };
        let bits = 8 * n as u32;
        let min = -(1i128 << (bits - 1));
        let max = (1i128 << bits) - 1;
        if v < min || v > max {
            return Err(LiteralError(format!(
                "{v} does not fit {} ({min} to {max})",
                self.amber_name()
            )));
        }
        out.copy_from_slice(&(v as u128).to_le_bytes()[..n]);
        Ok(())
    }

    /// Decodes one component from `bytes` (exactly `self.size()` bytes, little-endian).
    pub fn decode(self, bytes: &[u8]) -> Value {
        let mut b = [0u8; 8];
        b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
        let u = u64::from_le_bytes(b);
        match self {
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::Bool => {
                Value::Int(u as i128)
            }
            Scalar::I8 => Value::Int(u as u8 as i8 as i128),
            Scalar::I16 => Value::Int(u as u16 as i16 as i128),
            Scalar::I32 => Value::Int(u as u32 as i32 as i128),
            Scalar::I64 => Value::Int(u as i64 as i128),
            Scalar::F16 => Value::Float(half::f16::from_bits(u as u16).to_f64()),
            Scalar::F32 => Value::Float(f32::from_bits(u as u32) as f64),
            Scalar::F64 => Value::Float(f64::from_bits(u)),
        }
    }

    /// The literal as this type would store it, read back (integers wrapped, floats rounded).
    pub fn round_trip(self, lit: Literal) -> Result<Value, LiteralError> {
        let mut b = [0u8; 8];
        self.encode(lit, &mut b[..self.size()])?;
        Ok(self.decode(&b[..self.size()]))
    }
}

/// The texel format of a `BUFFER … FORMAT` bound as a texel buffer: its `VkFormat` again
/// (`R32_SFLOAT`, `R32G32B32A32_UINT`, …), where the model runs it.
pub(crate) fn texel_format(t: &DataType) -> Option<crate::spirv::image::TexelFormat> {
    if t.columns != 1 || t.array {
        return None;
    }
    let (bits, mode) = crate::kernel::images::texel_component(t.scalar)?;
    crate::spirv::image::TexelFormat::plain(t.rows as usize, bits, mode)
}
