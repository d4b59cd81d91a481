//! Elements named as the user wrote them: `data[5]`, `params.scale`, `dst(3, 1).g` — from a
//! kernel's variables, their types and struct members.

use crate::spirv::ids::ObjectId;
use crate::spirv::types::{TypeId, Types};

/// The names of a kernel's variables, their types and struct members: elements named as the user
/// wrote them.
#[derive(Clone, Debug, Default)]
pub struct VarNames {
    /// the types
    pub types: Types,
    /// struct member names by (type, member)
    pub member_names: std::collections::HashMap<(TypeId, u32), String>,
    /// each object's name and pointee type
    pub objects: Vec<(String, TypeId)>,
    /// the extent each image object was bound with (set by a run)
    pub extents: std::collections::HashMap<ObjectId, crate::spirv::image::Extent>,
}

/// A texel component of image `name` by its byte offset: `dst(3, 1).g`, `ms(3, 1) sample 2.r`.
fn describe_texel(
    name: &str,
    it: &crate::spirv::types::ImageType,
    extent: Option<&crate::spirv::image::Extent>,
    offset: u64,
) -> String {
    let f = &it.format;
    let tb = f.texel_bytes() as u64;
    let (texel, within) = (offset / tb, offset % tb);
    let comp = match f.packed {
        Some(_) => String::new(),
        None => {
            let c = (within / (f.comp.bits() as u64 / 8).max(1)) as usize;
            format!(".{}", ["r", "g", "b", "a"][c.min(3)])
        }
    };
    let Some(e) = extent else {
        return format!("{name} texel {texel}{comp}");
    };
    let (s, t) = (texel % e.samples as u64, texel / e.samples as u64);
    let (w, h) = (e.width.max(1) as u64, e.height.max(1) as u64);
    let (x, y, z) = (t % w, (t / w) % h, t / (w * h));
    let at = match (it.dim.coords() + it.arrayed as u32, it.dim.coords()) {
        (1, _) => format!("{x}"),
        (2, 1) => format!("{x}, {z}"),
        (2, _) => format!("{x}, {y}"),
        _ => format!("{x}, {y}, {z}"),
    };
    let sample = if it.ms {
        format!(" sample {s}")
    } else {
        String::new()
    };
    format!("{name}({at}){sample}{comp}")
}

impl VarNames {
    /// The element at byte `offset` of object `obj`: `data[5]`, `params.scale`.
    pub fn describe(&self, obj: ObjectId, offset: u64) -> String {
        use crate::spirv::types::{ElementOf, MatrixLayout, Type};
        let Some((oname, oty)) = self.objects.get(obj.index()) else {
            return format!("object {obj} byte {offset}");
        };
        struct O<'a> {
            name: &'a String,
            ty: TypeId,
        }
        let o = O {
            name: oname,
            ty: *oty,
        };
        if let Type::Image(it) = self.types.get(o.ty) {
            return describe_texel(o.name, it, self.extents.get(&obj), offset);
        }
        // A block known by its only member's name (no instance name): the path starts there.
        let unnamed_block = o.name.starts_with('%')
            || matches!(self.types.get(o.ty), Type::Struct { members, .. }
                if members.len() == 1 && self.member_names.get(&(o.ty, 0)) == Some(o.name));
        let mut path = if unnamed_block {
            String::new()
        } else {
            o.name.clone()
        };
        let mut t = o.ty;
        let mut m = MatrixLayout::default();
        let mut off = offset;
        for _ in 0..32 {
            match self.types.get(t) {
                Type::Struct { members, .. } => {
                    let mut found = None;
                    for i in (0..members.len() as u32).rev() {
                        if let Ok((mo, mt, ml)) = self.types.member(t, i)
                            && mo as u64 <= off
                        {
                            found = Some((i, mo, mt, ml));
                            break;
                        }
                    }
                    let Some((i, mo, mt, ml)) = found else {
                        break;
                    };
                    match self.member_names.get(&(t, i)) {
                        // The one unnamed member of a named variable's struct: a wrapper the
                        // compiler made (naga wraps WGSL's `var<storage> out: array<u32>` so),
                        // which the user indexes as the variable itself — `out[5]`.
                        None if members.len() == 1 && !path.is_empty() => {}
                        name => {
                            let name = name.cloned().unwrap_or_else(|| format!("member{i}"));
                            if path.is_empty() {
                                path = name;
                            } else {
                                path = format!("{path}.{name}");
                            }
                        }
                    }
                    off -= mo as u64;
                    t = mt;
                    m = ml;
                }
                Type::Array { .. }
                | Type::RuntimeArray { .. }
                | Type::Vector { .. }
                | Type::Matrix { .. } => {
                    let Ok((et, stride, count, em)) = self.types.element(t, m) else {
                        break;
                    };
                    if stride == 0 {
                        break;
                    }
                    // A row-major matrix is its rows (GLSL §7.6.2.2): component (column c, row r)
                    // is `rstride·r + stride·c` bytes in, and is named `[c][r]` as GLSL indexes it.
                    if let ElementOf::RowMajorColumn(_, rstride) = et {
                        let (r, within) =
                            (off / rstride.max(1) as u64, off % rstride.max(1) as u64);
                        let c = within / stride as u64;
                        if count.is_some_and(|n| c >= n as u64) {
                            break;
                        }
                        path = format!("{path}[{c}][{r}]");
                        off = 0;
                        break;
                    }
                    let i = off / stride as u64;
                    path = format!("{path}[{i}]");
                    off %= stride as u64;
                    match et {
                        ElementOf::Type(next) => {
                            t = next;
                            m = em;
                        }
                        ElementOf::Scalar(_) | ElementOf::RowMajorColumn(..) => {
                            off = 0;
                            break;
                        }
                    }
                }
                _ => break,
            }
        }
        if path.is_empty() {
            path = o.name.clone();
        }
        if off != 0 && !matches!(self.types.get(t), Type::Scalar(_)) {
            path = format!("{path} (byte {off})");
        }
        path
    }
}
