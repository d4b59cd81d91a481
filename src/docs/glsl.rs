//! GLSL signatures, derived from an op's catalogue entry (argument kinds, value types, result kind)
//! and spelled as GL_KHR_shader_subgroup.txt, 7.1 and 8.18 spell them (a test checks every line
//! against the spec texts).

use crate::model::{Op, OpInfo, ResultKind, ScalarType, TypeClass, ValueType};

/// The GLSL generic type names of a type class, in the spec's order (genType = float, genIType =
/// int, genUType = uint, genBType = bool, genDType = double).
fn core_gen_types(class: TypeClass) -> &'static [&'static str] {
    match class {
        TypeClass::Any => &["genType", "genIType", "genUType", "genBType", "genDType"],
        TypeClass::Numeric => &["genType", "genIType", "genUType", "genDType"],
        TypeClass::IntegerOrBool => &["genIType", "genUType", "genBType"],
        TypeClass::Bool => &["bool"],
        TypeClass::NoValue => &[],
    }
}

/// The extended generic types of GL_EXT_shader_subgroup_extended_types_* that the class takes.
pub fn extended_gen_types(class: TypeClass) -> Vec<&'static str> {
    [
        (ScalarType::I8, "genI8Type"),
        (ScalarType::U8, "genU8Type"),
        (ScalarType::I16, "genI16Type"),
        (ScalarType::U16, "genU16Type"),
        (ScalarType::I64, "genI64Type"),
        (ScalarType::U64, "genU64Type"),
        (ScalarType::F16, "genF16Type"),
    ]
    .into_iter()
    .filter(|(s, _)| class != TypeClass::Bool && class.accepts(ValueType::scalar(*s)))
    .map(|(_, g)| g)
    .collect()
}

fn result_type(r: ResultKind) -> &'static str {
    match r {
        ResultKind::Bool => "bool",
        ResultKind::Uint => "uint",
        ResultKind::Uvec4 => "uvec4",
        ResultKind::SameAsValue => "",
    }
}

/// The op's GLSL declaration(s), one per generic type, aligned as in the spec; built-in variables
/// as their `in` declaration (GL_KHR_shader_subgroup.txt, 7.1).
pub fn glsl_signatures(op: &OpInfo) -> Vec<String> {
    if op.glsl.starts_with("gl_") {
        // 7.1: gl_SubgroupSize and gl_SubgroupInvocationID are mediump, the rest highp.
        let mediump = op.op == Op::SubgroupSize || op.op == Op::InvocationId;
        let precision = if mediump { "mediump" } else { "highp" };
        return vec![format!(
            "{precision} in {} {};",
            result_type(op.result),
            op.glsl
        )];
    }
    let others: Vec<&str> = op
        .args
        .iter()
        .map(|a| a.glsl_param())
        .filter(|p| !p.is_empty())
        .collect();
    let gens = core_gen_types(op.types);
    if gens.is_empty() {
        let params = if others.is_empty() {
            "void".to_string()
        } else {
            others.join(", ")
        };
        return vec![format!("{} {}({params});", result_type(op.result), op.glsl)];
    }
    // The spec pads the generic type names to the width of the longest ("genIType").
    let width = gens.iter().map(|g| g.len()).max().unwrap_or(0);
    gens.iter()
        .map(|g| {
            let ret = match op.result {
                ResultKind::SameAsValue => format!("{g:<width$}"),
                r => result_type(r).to_string(),
            };
            let value = format!("{g} value");
            let params = if others.is_empty() {
                value
            } else {
                format!(
                    "{:<w$} {}",
                    value + ",",
                    others.join(", "),
                    w = width + " value,".len()
                )
            };
            format!("{ret} {}({params});", op.glsl)
        })
        .collect()
}
