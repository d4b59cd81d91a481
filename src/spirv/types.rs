//! SPIR-V types as the interpreter sees them: what a value of each type flattens to (its *slots*,
//! one scalar each) and where each slot lives in memory (its byte offset under the type's layout).
//!
//! Layouts: a type decorated with `Offset` (struct members), `ArrayStride` or `MatrixStride` uses
//! those decorations — the std140, std430 and scalar layouts of buffers and push constants are all
//! expressed that way by the compiler, so the interpreter honours whichever one it was given.
//! Undecorated types (Function, Private, Workgroup and Input variables) get a natural layout: each
//! scalar aligned to its size, vectors and arrays tightly packed, structs in member order. That layout
//! is not observable by a shader (it cannot reinterpret such memory), so any consistent one is right.

use crate::spirv::error::SpirvError;

pub use crate::words::facts::Scalar;

impl Scalar {
    /// The model's scalar type, where there is one.
    pub fn model_type(self) -> Option<crate::model::ScalarType> {
        use crate::model::ScalarType as S;
        Some(match self {
            Scalar::Bool => S::Bool,
            Scalar::Int { width: 8, signed } => [S::U8, S::I8][signed as usize],
            Scalar::Int { width: 16, signed } => [S::U16, S::I16][signed as usize],
            Scalar::Int { width: 32, signed } => [S::U32, S::I32][signed as usize],
            Scalar::Int { width: 64, signed } => [S::U64, S::I64][signed as usize],
            Scalar::Float { width: 16 } => S::F16,
            Scalar::Float { width: 32 } => S::F32,
            Scalar::Float { width: 64 } => S::F64,
            _ => return None,
        })
    }

    /// The GLSL-ish name, for messages.
    pub fn name(self) -> String {
        match self {
            Scalar::Bool => "bool".into(),
            Scalar::Int { width, signed } => format!("{}{width}", if signed { "i" } else { "u" }),
            Scalar::Float { width } => format!("f{width}"),
            Scalar::Pointer => "pointer".into(),
        }
    }
}

/// SPIR-V storage classes the interpreter runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::enum_variant_names)] // the names are SPIR-V's storage classes
pub enum Storage {
    /// per invocation, per call (`Function`)
    Function,
    /// per invocation, whole run (`Private`)
    Private,
    /// built-in inputs (per invocation, read-only)
    Input,
    /// shared within a workgroup (`Workgroup`)
    Workgroup,
    /// storage buffers (`StorageBuffer`, or `Uniform` with `BufferBlock`)
    StorageBuffer,
    /// uniform buffers (read-only)
    Uniform,
    /// push constants (read-only)
    PushConstant,
    /// storage images and texel buffers (`UniformConstant` variables of an image type; see
    /// [`crate::spirv::image`])
    Image,
    /// memory reached through a 64-bit device address (`PhysicalStorageBuffer`,
    /// GL_EXT_buffer_reference): a buffer given by its address rather than by a descriptor
    PhysicalStorageBuffer,
}

impl Storage {
    /// Memory every invocation of the dispatch can see (buffers, push constants).
    pub fn is_global(self) -> bool {
        matches!(
            self,
            Storage::StorageBuffer
                | Storage::Uniform
                | Storage::PushConstant
                | Storage::Image
                | Storage::PhysicalStorageBuffer
        )
    }

    /// Memory private to one invocation.
    pub fn is_per_lane(self) -> bool {
        matches!(self, Storage::Function | Storage::Private | Storage::Input)
    }

    /// Name as SPIR-V spells it.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Function => "Function",
            Storage::Private => "Private",
            Storage::Input => "Input",
            Storage::Workgroup => "Workgroup",
            Storage::StorageBuffer => "StorageBuffer",
            Storage::Uniform => "Uniform",
            Storage::PushConstant => "PushConstant",
            Storage::Image => "Image",
            Storage::PhysicalStorageBuffer => "PhysicalStorageBuffer",
        }
    }
}

/// Index into [`Types`].
pub type TypeId = u32;

/// One type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// `void`
    Void,
    /// a scalar
    Scalar(Scalar),
    /// a vector of `n` scalars
    Vector {
        /// component type
        elem: Scalar,
        /// 2..=4 (or more with extensions)
        n: u32,
    },
    /// a matrix of `cols` column vectors
    Matrix {
        /// the column type (a vector)
        col: TypeId,
        /// number of columns
        cols: u32,
    },
    /// a sized array
    Array {
        /// element type
        elem: TypeId,
        /// length
        len: u32,
        /// `ArrayStride` if decorated
        stride: Option<u32>,
    },
    /// a runtime array (last member of a buffer block)
    RuntimeArray {
        /// element type
        elem: TypeId,
        /// `ArrayStride` if decorated
        stride: Option<u32>,
    },
    /// a struct
    Struct {
        /// member types
        members: Vec<TypeId>,
        /// `Offset` of each member if decorated
        offsets: Vec<Option<u32>>,
        /// `MatrixStride` of each member if decorated
        matrix_stride: Vec<Option<u32>>,
        /// `RowMajor` of each member
        row_major: Vec<bool>,
    },
    /// a pointer
    Pointer {
        /// storage class
        storage: Storage,
        /// pointee
        pointee: TypeId,
    },
    /// a function type (only checked, never a value)
    Function,
    /// an image (`OpTypeImage`); its value is a handle to the bound image, kept like a pointer
    Image(ImageType),
    /// an image with a sampler (`OpTypeSampledImage`); its value is the image's handle, naming
    /// the sampler too (see `Ptr` in the memory layer)
    SampledImage(TypeId),
    /// a sampler (`OpTypeSampler`); its value is a handle to the bound sampler
    Sampler,
}

/// The dimensionality of an image (SPIR-V `Dim`) the interpreter runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageDim {
    /// `1D`
    D1,
    /// `2D`
    D2,
    /// `3D`
    D3,
    /// `Buffer` (texel buffers)
    Buffer,
}

impl ImageDim {
    /// Coordinate components of an access (before the array layer).
    pub fn coords(self) -> u32 {
        match self {
            ImageDim::D1 | ImageDim::Buffer => 1,
            ImageDim::D2 => 2,
            ImageDim::D3 => 3,
        }
    }
}

/// An `OpTypeImage` the interpreter runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageType {
    /// the sampled type (the component type a read returns)
    pub sampled_type: Scalar,
    /// dimensionality
    pub dim: ImageDim,
    /// `Arrayed`
    pub arrayed: bool,
    /// `MS`: multisampled
    pub ms: bool,
    /// `Sampled` = 2: a storage image (read and written without a sampler); 1: sampled only
    pub storage: bool,
    /// the texel format
    pub format: crate::spirv::image::TexelFormat,
    /// the module names the format (else `Unknown`: a `samplerBuffer`, or a storage image read or
    /// written without a format; the binding gives it, and `format` is a placeholder of the
    /// sampled type's kind until then)
    pub format_given: bool,
}

/// How matrices inside a type are laid out when no member decoration says otherwise, and the
/// decoration context a pointer to a matrix carries (the `MatrixStride`/`RowMajor` of the struct
/// member it came from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MatrixLayout {
    /// `MatrixStride`
    pub stride: Option<u32>,
    /// `RowMajor`
    pub row_major: bool,
    /// for a vector reached as a whole column of a row-major matrix: its components lie this many
    /// bytes apart (the matrix stride; Vulkan, "Offset and Stride Assignment")
    pub vec_stride: Option<u32>,
}

impl MatrixLayout {
    /// The layout member `k` of a struct gives the matrices in it: its `MatrixStride` and
    /// `RowMajor` (a struct's `matrix_stride` and `row_major`).
    pub fn of_member(matrix_stride: &[Option<u32>], row_major: &[bool], k: usize) -> MatrixLayout {
        MatrixLayout {
            stride: matrix_stride[k],
            row_major: row_major[k],
            vec_stride: None,
        }
    }
}

/// Every type of a module, by dense index, with the SPIR-V id of each.
#[derive(Clone, Debug, Default)]
pub struct Types {
    /// the types
    pub list: Vec<Type>,
}

/// One slot of a flattened value: its scalar kind and byte offset from the start of the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotAt {
    /// scalar kind
    pub scalar: Scalar,
    /// byte offset in memory
    pub offset: u32,
}

impl Types {
    /// The type at `t`.
    pub fn get(&self, t: TypeId) -> &Type {
        &self.list[t as usize]
    }

    /// Number of scalar slots a value of `t` flattens to (0 for void; runtime arrays cannot be values).
    pub fn slots(&self, t: TypeId) -> Result<u32, SpirvError> {
        Ok(match self.get(t) {
            Type::Void | Type::Function => 0,
            Type::Scalar(_)
            | Type::Pointer { .. }
            | Type::Image(_)
            | Type::SampledImage(_)
            | Type::Sampler => 1,
            Type::Vector { n, .. } => *n,
            Type::Matrix { col, cols } => self.slots(*col)? * cols,
            Type::Array { elem, len, .. } => {
                let e = self.slots(*elem)?;
                e.checked_mul(*len)
                    .filter(|&s| s <= MAX_SLOTS)
                    .ok_or_else(|| SpirvError::unsupported("a value of more than 65536 scalars"))?
            }
            Type::RuntimeArray { .. } => {
                return Err(SpirvError::unsupported(
                    "a runtime array as a value (load its elements instead)",
                ))
            }
            Type::Struct { members, .. } => {
                let mut s = 0u32;
                for m in members {
                    s = s
                        .checked_add(self.slots(*m)?)
                        .filter(|&s| s <= MAX_SLOTS)
                        .ok_or_else(|| {
                            SpirvError::unsupported("a value of more than 65536 scalars")
                        })?;
                }
                s
            }
        })
    }

    /// The size in bytes of the smallest scalar `t` holds, at most 4: the unit in which memory of
    /// this type keeps its taint and race records (see `spirv::memory`).
    pub fn unit(&self, t: TypeId) -> u32 {
        match self.get(t) {
            Type::Scalar(s) => s.bytes().clamp(1, 4),
            Type::Vector { elem, .. } => elem.bytes().clamp(1, 4),
            Type::Matrix { col, .. } => self.unit(*col),
            Type::Array { elem, .. } | Type::RuntimeArray { elem, .. } => self.unit(*elem),
            Type::Struct { members, .. } => {
                members.iter().map(|m| self.unit(*m)).min().unwrap_or(4)
            }
            Type::Pointer { .. }
            | Type::Void
            | Type::Function
            | Type::Image(_)
            | Type::SampledImage(_)
            | Type::Sampler => 4,
        }
    }

    /// The scalar kind of every slot of `t`, in flattening order.
    pub fn slot_kinds(&self, t: TypeId) -> Result<Vec<Scalar>, SpirvError> {
        Ok(self
            .slot_layout(t, MatrixLayout::default())?
            .into_iter()
            .map(|s| s.scalar)
            .collect())
    }

    /// The scalar type when `t` is a scalar or a vector of scalars (with the component count).
    pub fn scalar_vector(&self, t: TypeId) -> Option<(Scalar, u32)> {
        match self.get(t) {
            Type::Scalar(s) => Some((*s, 1)),
            Type::Vector { elem, n } => Some((*elem, *n)),
            _ => None,
        }
    }

    /// Size and alignment in bytes under the type's own layout (see the module docs).
    pub fn size_align(&self, t: TypeId, m: MatrixLayout) -> Result<(u32, u32), SpirvError> {
        Ok(match self.get(t) {
            Type::Void | Type::Function => (0, 1),
            Type::Scalar(s) => (s.bytes(), s.bytes()),
            Type::Pointer { .. } | Type::Image(_) | Type::SampledImage(_) | Type::Sampler => (8, 8),
            Type::Vector { elem, n } => match m.vec_stride {
                Some(st) => (st * (n - 1) + elem.bytes(), elem.bytes()),
                None => (elem.bytes() * n, elem.bytes()),
            },
            Type::Matrix { col, cols } => {
                let (csize, calign) = self.size_align(*col, MatrixLayout::default())?;
                match (m.stride, m.row_major) {
                    (Some(stride), false) => (stride * (cols - 1) + csize, calign),
                    (Some(stride), true) => {
                        let rows = match self.get(*col) {
                            Type::Vector { n, .. } => *n,
                            _ => 1,
                        };
                        let esize = csize / rows.max(1);
                        (stride * (rows - 1) + esize * cols, calign)
                    }
                    (None, _) => (csize * cols, calign),
                }
            }
            Type::Array { elem, len, stride } => {
                let (esize, ealign) = self.size_align(*elem, m)?;
                let st = stride.unwrap_or(esize.next_multiple_of(ealign.max(1)));
                let total = (st as u64) * (*len as u64);
                if total > u32::MAX as u64 {
                    return Err(SpirvError::unsupported("a type larger than 4 GiB"));
                }
                (if *len == 0 { 0 } else { st * (len - 1) + esize }, ealign)
            }
            Type::RuntimeArray { elem, .. } => {
                let (_, ealign) = self.size_align(*elem, m)?;
                (0, ealign)
            }
            Type::Struct {
                members,
                offsets,
                matrix_stride,
                row_major,
            } => {
                let mut end = 0u32;
                let mut align = 1u32;
                let mut cursor = 0u32;
                for (i, mt) in members.iter().enumerate() {
                    let ml = MatrixLayout::of_member(matrix_stride, row_major, i);
                    let (sz, al) = self.size_align(*mt, ml)?;
                    let off = match offsets[i] {
                        Some(o) => o,
                        None => cursor.next_multiple_of(al.max(1)),
                    };
                    cursor = off.checked_add(sz).ok_or_else(|| {
                        SpirvError::malformed(format!(
                            "member {i} of a struct ends past 4 GiB (offset {off}, {sz} bytes)"
                        ))
                    })?;
                    end = end.max(cursor);
                    align = align.max(al);
                }
                (end, align)
            }
        })
    }

    /// Byte offset of member `i` of struct `t`, and the matrix layout its decorations give.
    pub fn member(&self, t: TypeId, i: u32) -> Result<(u32, TypeId, MatrixLayout), SpirvError> {
        match self.get(t) {
            Type::Struct {
                members,
                offsets,
                matrix_stride,
                row_major,
            } => {
                let i = i as usize;
                if i >= members.len() {
                    return Err(SpirvError::malformed(format!(
                        "member {i} of a struct with {} members",
                        members.len()
                    )));
                }
                let mut cursor = 0u32;
                let mut off = 0;
                for (k, mt) in members.iter().enumerate().take(i + 1) {
                    let ml = MatrixLayout::of_member(matrix_stride, row_major, k);
                    let (sz, al) = self.size_align(*mt, ml)?;
                    off = match offsets[k] {
                        Some(o) => o,
                        None => cursor.next_multiple_of(al.max(1)),
                    };
                    cursor = off + sz;
                }
                Ok((
                    off,
                    members[i],
                    MatrixLayout::of_member(matrix_stride, row_major, i),
                ))
            }
            _ => Err(SpirvError::malformed("member index into a non-struct")),
        }
    }

    /// The element type and byte stride of an array, runtime array, matrix (columns) or vector
    /// (components), for dynamic indexing; `len` is `None` for runtime arrays.
    pub fn element(
        &self,
        t: TypeId,
        m: MatrixLayout,
    ) -> Result<(ElementOf, u32, Option<u32>, MatrixLayout), SpirvError> {
        Ok(match self.get(t) {
            Type::Array { elem, len, stride } => {
                let (esize, ealign) = self.size_align(*elem, m)?;
                let st = stride.unwrap_or(esize.next_multiple_of(ealign.max(1)));
                (ElementOf::Type(*elem), st, Some(*len), m)
            }
            Type::RuntimeArray { elem, stride } => {
                let (esize, ealign) = self.size_align(*elem, m)?;
                let st = stride.unwrap_or(esize.next_multiple_of(ealign.max(1)));
                (ElementOf::Type(*elem), st, None, m)
            }
            Type::Matrix { col, cols } => {
                let (csize, _) = self.size_align(*col, MatrixLayout::default())?;
                if m.row_major {
                    // A column of a row-major matrix is strided in memory: the caller indexes it
                    // component by component (see `ElementOf::RowMajorColumn`).
                    let esize = match self.get(*col) {
                        Type::Vector { elem, .. } => elem.bytes(),
                        _ => 4,
                    };
                    (
                        ElementOf::RowMajorColumn(*col, m.stride.unwrap_or(esize * cols)),
                        esize,
                        Some(*cols),
                        MatrixLayout::default(),
                    )
                } else {
                    (
                        ElementOf::Type(*col),
                        m.stride.unwrap_or(csize),
                        Some(*cols),
                        MatrixLayout::default(),
                    )
                }
            }
            Type::Vector { elem, n } => (
                ElementOf::Scalar(*elem),
                m.vec_stride.unwrap_or(elem.bytes()),
                Some(*n),
                MatrixLayout::default(),
            ),
            other => {
                return Err(SpirvError::malformed(format!(
                    "dynamic index into {other:?}"
                )))
            }
        })
    }

    /// Every slot of a value of `t` with its byte offset, under the type's layout (and `m` for a
    /// matrix reached through a decorated member).
    pub fn slot_layout(&self, t: TypeId, m: MatrixLayout) -> Result<Vec<SlotAt>, SpirvError> {
        let mut out = Vec::new();
        self.push_slots(t, m, 0, &mut out)?;
        Ok(out)
    }

    fn push_slots(
        &self,
        t: TypeId,
        m: MatrixLayout,
        base: u32,
        out: &mut Vec<SlotAt>,
    ) -> Result<(), SpirvError> {
        if out.len() > MAX_SLOTS as usize {
            return Err(SpirvError::unsupported(
                "a value of more than 65536 scalars",
            ));
        }
        match self.get(t) {
            Type::Void | Type::Function => {}
            Type::Scalar(s) => out.push(SlotAt {
                scalar: *s,
                offset: base,
            }),
            Type::Pointer { .. } | Type::Image(_) | Type::SampledImage(_) | Type::Sampler => out
                .push(SlotAt {
                    scalar: Scalar::Pointer,
                    offset: base,
                }),
            Type::Vector { elem, n } => {
                let st = m.vec_stride.unwrap_or(elem.bytes());
                for i in 0..*n {
                    out.push(SlotAt {
                        scalar: *elem,
                        offset: base + i * st,
                    })
                }
            }
            Type::Matrix { col, cols } => {
                let (elem, rows) = match self.get(*col) {
                    Type::Vector { elem, n } => (*elem, *n),
                    _ => {
                        return Err(SpirvError::malformed(
                            "a matrix column that is not a vector",
                        ))
                    }
                };
                let (csize, _) = self.size_align(*col, MatrixLayout::default())?;
                for c in 0..*cols {
                    for r in 0..rows {
                        let offset = if m.row_major {
                            base + r * m.stride.unwrap_or(elem.bytes() * cols) + c * elem.bytes()
                        } else {
                            base + c * m.stride.unwrap_or(csize) + r * elem.bytes()
                        };
                        out.push(SlotAt {
                            scalar: elem,
                            offset,
                        });
                    }
                }
            }
            Type::Array { elem, len, .. } => {
                let (_, st, _, em) = self.element(t, m)?;
                for i in 0..*len {
                    self.push_slots(*elem, em, base + i * st, out)?;
                }
            }
            Type::RuntimeArray { .. } => {
                return Err(SpirvError::unsupported(
                    "loading or storing a whole runtime array",
                ))
            }
            Type::Struct { members, .. } => {
                for i in 0..members.len() as u32 {
                    let (off, mt, ml) = self.member(t, i)?;
                    self.push_slots(mt, ml, base + off, out)?;
                }
            }
        }
        Ok(())
    }
}

/// What a dynamic index selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementOf {
    /// an element of a type
    Type(TypeId),
    /// a vector component
    Scalar(Scalar),
    /// a column of a row-major matrix (column type, row stride)
    RowMajorColumn(TypeId, u32),
}

/// The most scalars one value may flatten to.
pub const MAX_SLOTS: u32 = 65536;
