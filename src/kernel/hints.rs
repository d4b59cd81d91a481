//! What to tell a user whose buffer does not fit the block it is bound to.
//!
//! lockstep binds a buffer's bytes as they are — on the model and on a device — and applies no
//! layout: a `.npy` array or a spec is the block's memory, byte for byte (Vulkan lays a block out
//! by its `Offset` and `ArrayStride` decorations, Vulkan 1.3 §15.6.4 "Offset and Stride
//! Assignment"; the host's bytes must already follow them). Rows of three floats bound to
//! `vec3 v[]` (std430: elements 16 bytes apart) fall out of step after the first element, and the
//! last elements lie past the end of the buffer. The out-of-bounds finding then says so, and how to
//! pad.

use crate::kernel::buffers::element_size;
use crate::kernel::buffers::JobBuffer;
use crate::spirv::{Finding, Kernel};

/// When `object` — the variable an out-of-bounds access went through — is a bound block ending
/// in a runtime array, and its buffer is given as rows (an array of two or more dimensions) whose
/// last dimension is shorter than the array's stride: what the stride is, what the rows are, and
/// the shape that would fit.
pub(crate) fn row_stride_hint(k: &Kernel, object: usize, buffers: &[JobBuffer]) -> Option<String> {
    let o = k.objects.get(object)?;
    if o.image.is_some() {
        return None;
    }
    let (offset, stride) = o.runtime_array?;
    let slot = o.binding?;
    let b = &buffers
        .iter()
        .find(|b| (b.set, b.binding, b.element) == (slot.0, slot.1, o.element))?
        .host;
    let (&cols, outer) = b.shape.split_last()?;
    if outer.is_empty() {
        return None;
    }
    let es = element_size(b.dtype);
    let (row, stride, offset) = (cols * es, stride as usize, offset as usize);
    if row == 0 || row >= stride || !stride.is_multiple_of(es) {
        return None;
    }
    let rows: usize = outer.iter().product();
    let mut fit = b.shape.clone();
    *fit.last_mut()? = stride / es;
    Some(format!(
        "{}'s array elements are {stride} bytes apart (its ArrayStride) but the buffer's rows are \
         {row} bytes ({cols} × {}): a buffer is bound as its bytes, with no padding added, so {rows} \
         elements take {} bytes — give each row its padding (shape {fit:?})",
        o.name,
        b.dtype,
        offset + rows * stride,
    ))
}

/// A finding's explanation, with [`row_stride_hint`]'s hint in parentheses where it applies.
pub(crate) fn with_hint(why: String, f: &Finding, k: &Kernel, buffers: &[JobBuffer]) -> String {
    match f {
        Finding::OutOfBounds {
            object,
            past_array: None,
            ..
        } => match row_stride_hint(k, object.index(), buffers) {
            Some(h) => format!("{why} ({h})"),
            None => why,
        },
        _ => why,
    }
}
