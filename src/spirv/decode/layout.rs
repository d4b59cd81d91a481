//! The rules of an explicitly laid out block, checked once at decode time for every variable in
//! the Uniform, StorageBuffer and PushConstant storage classes: what the variable's type must be
//! (a `Block` struct, or an array of them), which decorations its layout must carry, and that
//! those decorations do not make two objects share bytes. A module that breaks one is refused
//! naming the rule, before a layout is computed for it.

use super::*;

/// What an explicitly laid out type breaks.
enum Fault {
    /// A decoration the layout needs is missing (Vulkan, "Offset and Stride Assignment").
    Missing(String),
    /// An `Offset`, `ArrayStride` or `MatrixStride` too small for the object it places.
    Overlap(String),
}

impl Decoder<'_> {
    /// Vulkan, "Validation Rules within a Module": any variable in the Uniform or StorageBuffer
    /// storage class is typed as a struct or an array of structs (VUID-StandaloneSpirv-Uniform-06807),
    /// in the PushConstant class as a struct (VUID-StandaloneSpirv-PushConstant-06808); the struct
    /// is decorated Block or BufferBlock in the Uniform class (VUID-StandaloneSpirv-Uniform-06676)
    /// and Block in the other two (VUID-StandaloneSpirv-PushConstant-06675). Anything else is
    /// refused here, naming the rule, before a layout is computed for it; so is a block whose
    /// layout lacks a decoration or places two objects on the same bytes ([`Self::layout_fault`]).
    pub(super) fn check_block_variable(
        &self,
        rid: u32,
        storage: StorageClass,
        pointee: TypeId,
    ) -> Result<(), SpirvError> {
        let (arrays, decos): (bool, &[Decoration]) = match storage {
            StorageClass::Uniform => (true, &[Decoration::Block, Decoration::BufferBlock]),
            StorageClass::StorageBuffer => (true, &[Decoration::Block]),
            StorageClass::PushConstant => (false, &[Decoration::Block]),
            _ => return Ok(()),
        };
        let t = match *self.types.get(pointee) {
            Type::Array { elem, .. } | Type::RuntimeArray { elem, .. } if arrays => elem,
            _ => pointee,
        };
        let block = matches!(self.types.get(t), Type::Struct { .. })
            && decos.iter().any(|d| self.has_deco_type(t, *d));
        if block {
            return match self.layout_fault(t, None)? {
                None => Ok(()),
                Some(Fault::Missing(gap)) => Err(SpirvError::malformed(format!(
                    "variable {}: {gap}, in the {storage:?} storage class, which is explicitly laid out (Vulkan, Offset and Stride Assignment: \"must be explicitly laid out using the Offset, ArrayStride, and MatrixStride decorations\")",
                    self.name(rid)
                ))),
                Some(Fault::Overlap(what)) => Err(SpirvError::malformed(format!(
                    "variable {}: {what} (SPIR-V, Validation Rules for Shader Capabilities: \"The ArrayStride, MatrixStride, and Offset decorations must be large enough to hold the size of the objects they affect (that is, specifying overlap is invalid). Each ArrayStride and MatrixStride must be greater than zero, and it is invalid for two members of a given structure to be assigned the same Offset.\")",
                    self.name(rid)
                ))),
            };
        }
        let want = decos
            .iter()
            .map(|d| format!("{d:?}"))
            .collect::<Vec<_>>()
            .join(" or ");
        Err(SpirvError::malformed(format!(
            "variable {}: a variable in the {storage:?} storage class must be a struct decorated {want}{} (Vulkan, Validation Rules within a Module, {})",
            self.name(rid),
            if arrays { ", or an array of them" } else { "" },
            match storage {
                StorageClass::Uniform =>
                    "VUID-StandaloneSpirv-Uniform-06807, VUID-StandaloneSpirv-Uniform-06676",
                StorageClass::StorageBuffer =>
                    "VUID-StandaloneSpirv-Uniform-06807, VUID-StandaloneSpirv-PushConstant-06675",
                _ => "VUID-StandaloneSpirv-PushConstant-06808, VUID-StandaloneSpirv-PushConstant-06675",
            }
        )))
    }

    /// The first fault of an explicitly laid out type, said for people: a struct member without
    /// `Offset`, an array without `ArrayStride`, a matrix member without `MatrixStride`
    /// ([`Fault::Missing`]); two members at one offset or on shared bytes, an array's stride or a
    /// matrix's stride zero or smaller than what it steps over ([`Fault::Overlap`]). `matrix` is
    /// the layout a struct member's decorations give the matrices in it (`None`: the type is not
    /// such a member, or the member has no `MatrixStride`). Pointers are not followed.
    fn layout_fault(
        &self,
        t: TypeId,
        matrix: Option<MatrixLayout>,
    ) -> Result<Option<Fault>, SpirvError> {
        match self.types.get(t) {
            Type::Struct {
                members,
                offsets,
                matrix_stride,
                row_major,
            } => {
                let sid = type_spirv_id(self, t);
                let what = |k: usize| match self.member_names.get(&(sid, k as u32)) {
                    Some(n) => format!("member {k} ({n}) of struct {}", self.name(sid)),
                    None => format!("member {k} of struct {}", self.name(sid)),
                };
                // (offset, end, member) of each member, for the overlap check below.
                let mut spans = Vec::with_capacity(members.len());
                for (k, &m) in members.iter().enumerate() {
                    let Some(off) = offsets[k] else {
                        return Ok(Some(Fault::Missing(format!("{} has no Offset", what(k)))));
                    };
                    let ml = MatrixLayout::of_member(matrix_stride, row_major, k);
                    let inner = matrix_stride[k].map(|_| ml);
                    match self.layout_fault(m, inner)? {
                        Some(Fault::Missing(gap)) => {
                            return Ok(Some(Fault::Missing(format!("{} holds {gap}", what(k)))))
                        }
                        Some(Fault::Overlap(o)) => {
                            return Ok(Some(Fault::Overlap(format!("{} holds {o}", what(k)))))
                        }
                        None => {}
                    }
                    let (size, _) = self.types.size_align(m, ml)?;
                    spans.push((off as u64, off as u64 + size as u64, k));
                }
                spans.sort_unstable();
                for w in spans.windows(2) {
                    let ((a, a_end, ka), (b, _, kb)) = (w[0], w[1]);
                    if a == b {
                        return Ok(Some(Fault::Overlap(format!(
                            "{} and {} are both at Offset {a}",
                            what(ka),
                            what(kb)
                        ))));
                    }
                    if b < a_end {
                        return Ok(Some(Fault::Overlap(format!(
                            "{} at Offset {b} overlaps {}, which takes bytes {a}..{a_end}",
                            what(kb),
                            what(ka)
                        ))));
                    }
                }
                Ok(None)
            }
            Type::Array { elem, stride, .. } | Type::RuntimeArray { elem, stride } => {
                let Some(stride) = *stride else {
                    return Ok(Some(Fault::Missing("an array without ArrayStride".into())));
                };
                if let Some(f) = self.layout_fault(*elem, matrix)? {
                    return Ok(Some(f));
                }
                let (size, _) = self.types.size_align(*elem, matrix.unwrap_or_default())?;
                Ok((stride == 0 || stride < size).then(|| {
                    Fault::Overlap(format!(
                        "an array of {size}-byte elements with ArrayStride {stride}"
                    ))
                }))
            }
            Type::Matrix { col, cols } => {
                let Some(m) = matrix else {
                    return Ok(Some(Fault::Missing("a matrix without MatrixStride".into())));
                };
                let stride = m.stride.unwrap_or(0);
                // A column-major matrix steps over its columns, a row-major one over its rows.
                let (csize, _) = self.types.size_align(*col, MatrixLayout::default())?;
                let rows = match self.types.get(*col) {
                    Type::Vector { n, .. } => *n,
                    _ => 1,
                };
                let (step, what) = if m.row_major {
                    (csize / rows.max(1) * cols, "row")
                } else {
                    (csize, "column")
                };
                Ok((stride == 0 || stride < step).then(|| {
                    Fault::Overlap(format!(
                        "a matrix of {step}-byte {what}s with MatrixStride {stride}"
                    ))
                }))
            }
            _ => Ok(None),
        }
    }
}
