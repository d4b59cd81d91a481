//! How a host array is bound as an image: its format (for an image the module declares without
//! one) and its extent, from the array's element type and shape.

use crate::kernel::buffers::HostBuffer;
use crate::model::ScalarType;

/// An image type as bound to `host`: an image the module declares without a format (`Unknown`,
/// e.g. a `samplerBuffer`) takes the format of the host array — its element type, with as many
/// components as its last dimension when the array has one more dimension than the image has
/// coordinates (`series:f32:64x4`: `R32G32B32A32_SFLOAT`; `series:f32:64`: `R32_SFLOAT`).
pub fn bound_image_type(
    t: &crate::spirv::types::ImageType,
    host: &HostBuffer,
) -> Result<crate::spirv::types::ImageType, String> {
    if t.format_given {
        return Ok(*t);
    }
    let coords = t.dim.coords() as usize + t.arrayed as usize + t.ms as usize;
    let comps = match host.shape.len() {
        n if n == coords + 1 => host.shape[n - 1],
        _ => 1,
    };
    // 64-bit components (R64_UINT, R64_SINT) need shaderImageInt64: not taken from a host array.
    let (bits, mode) = match texel_component(host.dtype) {
        Some((bits, mode)) if bits < 64 => (bits, mode),
        _ => {
            return Err(format!(
                "an image declared without a format takes its format from the array given; {} is not a texel component type",
                host.dtype
            ))
        }
    };
    let f = crate::words::texel::TexelFormat::plain(comps, bits, mode).ok_or_else(|| {
        format!(
            "an image declared without a format takes its format from the array given: {comps} components of {} is not a texel format",
            host.dtype
        )
    })?;
    Ok(crate::spirv::types::ImageType {
        format: f,
        format_given: true,
        ..*t
    })
}

/// The extent of an image of type `t` given as a host array of `shape` (C order): `[W]`, `[H, W]` or
/// `[D, H, W]` by the image's dimensionality, an array layer count before them for an arrayed
/// image (`[L, H, W]`), a sample count after them for a multisampled one (`[H, W, S]`), and the
/// components last when the format has more than one and is not packed (`[H, W, 4]` for `Rgba8`,
/// as numpy holds an RGBA picture).
pub fn extent_of_shape(
    t: &crate::spirv::types::ImageType,
    shape: &[usize],
) -> Result<crate::words::texel::Extent, String> {
    let f = &t.format;
    let comps = (f.comps > 1 && f.packed.is_none()) as usize;
    let want = t.dim.coords() as usize + t.arrayed as usize + t.ms as usize + comps;
    let layout = {
        let mut v: Vec<&str> = Vec::new();
        if t.arrayed {
            v.push("layers");
        }
        v.extend(
            ["depth", "height", "width"][3 - t.dim.coords() as usize..]
                .iter()
                .copied(),
        );
        if t.ms {
            v.push("samples");
        }
        if comps == 1 {
            v.push("components");
        }
        v.join(", ")
    };
    if shape.len() != want {
        return Err(format!(
            "an image of {} is given as an array of shape {shape:?}; it takes [{layout}]",
            f.vk
        ));
    }
    if comps == 1 && shape[want - 1] != f.comps as usize {
        return Err(format!(
            "an image of {} has {} components per texel, the array's last dimension is {}",
            f.vk,
            f.comps,
            shape[want - 1]
        ));
    }
    let n = |x: usize| u32::try_from(x).map_err(|_| format!("image dimension {x} is too large"));
    let mut k = 0;
    let mut next = || {
        k += 1;
        shape[k - 1]
    };
    let layers = if t.arrayed { next() } else { 1 };
    let mut d = [1usize; 3];
    for c in (0..t.dim.coords() as usize).rev() {
        d[c] = next();
    }
    let samples = if t.ms { next() } else { 1 };
    Ok(crate::words::texel::Extent {
        width: n(d[0])?,
        height: n(d[1])?,
        depth: n(d[2].saturating_mul(layers))?,
        samples: n(samples)?,
    })
}

/// The component kind of a plain texel format (`R32_SFLOAT`, `R8G8_UINT`, …) whose components are
/// of type `t`: its bits and numeric format (`UINT`, `SINT`, `SFLOAT`); `None` for `bool` and
/// `double`, which no plain texel format holds here. One mapping for host arrays and Amber's texel
/// buffers.
pub(crate) fn texel_component(t: ScalarType) -> Option<(u32, &'static str)> {
    match t {
        ScalarType::Bool | ScalarType::F64 => None,
        t if t.is_float() => Some((t.bits(), "SFLOAT")),
        t if t.is_signed_integer() => Some((t.bits(), "SINT")),
        t => Some((t.bits(), "UINT")),
    }
}

#[cfg(test)]
mod tests {
    use super::texel_component;
    use crate::model::ScalarType as S;

    /// Vulkan's plain formats name their numeric format by the components' type: `UINT` for
    /// unsigned integers (`VK_FORMAT_R32_UINT`), `SINT` for signed ones, `SFLOAT` for floats
    /// (Vulkan spec, "Identification of Formats"); no plain format holds `bool` or, here, `double`.
    #[test]
    fn each_component_type_has_the_numeric_format_vulkan_names_it_by() {
        let want = [
            (S::U8, Some((8, "UINT"))),
            (S::I8, Some((8, "SINT"))),
            (S::U16, Some((16, "UINT"))),
            (S::I16, Some((16, "SINT"))),
            (S::U32, Some((32, "UINT"))),
            (S::I32, Some((32, "SINT"))),
            (S::U64, Some((64, "UINT"))),
            (S::I64, Some((64, "SINT"))),
            (S::F16, Some((16, "SFLOAT"))),
            (S::F32, Some((32, "SFLOAT"))),
            (S::F64, None),
            (S::Bool, None),
        ];
        for (t, w) in want {
            assert_eq!(texel_component(t), w, "{t:?}");
        }
    }
}
