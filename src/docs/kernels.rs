//! The runnable kernels of `examples/` (the Vulkan Subgroup Tutorial's and seed 001's), linked from
//! the semantics page of every category whose operations they use.

use crate::model::{catalogue, Category, OpInfo};

/// Every `examples/*.comp`, with its text (a test checks that none is missing).
pub const EXAMPLE_KERNELS: &[(&str, &str)] = &[
    ("allocation", include_str!("../../examples/allocation.comp")),
    (
        "allocation_sucf",
        include_str!("../../examples/allocation_sucf.comp"),
    ),
    ("max_reduce", include_str!("../../examples/max_reduce.comp")),
    (
        "shuffle_down_edge",
        include_str!("../../examples/shuffle_down_edge.comp"),
    ),
    (
        "shuffle_xor_reduce",
        include_str!("../../examples/shuffle_xor_reduce.comp"),
    ),
    (
        "triangle_cull",
        include_str!("../../examples/triangle_cull.comp"),
    ),
];

/// Does GLSL `text` call (or, for a built-in variable, read) the operation?
fn uses_op(text: &str, op: &OpInfo) -> bool {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    if op.glsl.starts_with("gl_") {
        code.match_indices(op.glsl.as_str()).any(|(i, m)| {
            !code[i + m.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    } else {
        code.contains(&format!("{}(", op.glsl))
    }
}

/// The examples that use operations of category `c`, each with the operations it uses.
pub fn examples_using(c: Category) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut v = Vec::new();
    for (name, text) in EXAMPLE_KERNELS {
        let mut ops: Vec<&'static str> = catalogue()
            .iter()
            .filter(|o| o.category == c && uses_op(text, o))
            .map(|o| o.glsl.as_str())
            .collect();
        ops.dedup();
        if !ops.is_empty() {
            v.push((*name, ops));
        }
    }
    v
}
