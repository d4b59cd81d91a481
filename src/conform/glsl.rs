//! GLSL kernels for the conformance cases, generated from the op catalogue.
//!
//! One kernel per (category, value type): every op of the category that takes the type is a `case`
//! of a `switch` on a per-workgroup opcode, so one pipeline evaluates thousands of cases of many ops.
//! Every invocation records its subgroup (gl_SubgroupID, gl_SubgroupInvocationID, and the global
//! index of the first active invocation via subgroupBroadcastFirst), the ballot of lanes active at
//! the operation, and its result as raw bits, so comparison never assumes how local invocations map
//! to lanes. Values travel as raw bits (two 32-bit words per component) and are bit-cast in the
//! shader, so NaN payloads and -0.0 arrive intact and no 8/16-bit storage feature is needed.

use crate::model::{
    catalogue, Category, MaskKind, Op, OpInfo, ResultKind, ScalarType, Scan, SubgroupSize,
    ValueType,
};

/// Words per case (per workgroup): opcode, uniform argument, ballot operand (4 words).
pub const CASE_WORDS: usize = 6;
/// Words per invocation of input: predicate, lane argument, value (2 words × 4 components).
pub const IN_WORDS: usize = 10;
/// Words per invocation of output: marker, gl_SubgroupID, gl_SubgroupInvocationID, subgroup key,
/// gl_SubgroupSize, active ballot (4), result (8).
pub const OUT_WORDS: usize = 17;
/// Output slots.
pub mod out {
    /// set to [`MARKER`](super::MARKER) when the invocation executed the operation
    pub const WRITTEN: usize = 0;
    /// gl_SubgroupID
    pub const SUBGROUP_ID: usize = 1;
    /// gl_SubgroupInvocationID
    pub const LANE: usize = 2;
    /// global index of the subgroup's first active invocation (subgroupBroadcastFirst)
    pub const KEY: usize = 3;
    /// gl_SubgroupSize
    pub const SIZE: usize = 4;
    /// ballot of lanes active at the operation (4 words)
    pub const ACTIVE: usize = 5;
    /// result bits (up to 8 words)
    pub const RESULT: usize = 9;
    /// gl_NumSubgroups is stored here by the basic kernel (result slot 7, unused by its ops)
    pub const NUM_SUBGROUPS: usize = 16;
}
/// Every output word starts as this sentinel, so an unwritten result is caught.
pub const SENTINEL: u32 = 0xDEAD_BEEF;
/// Written to [`out::WRITTEN`] by an invocation that executed the operation.
pub const MARKER: u32 = 0x600D_CA5E;

/// A deliberate bug in the generated GLSL, to prove the suite catches and locates failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The given lane of every subgroup flips the lowest result bit of every op.
    WrongLane(u32),
    /// Exclusive scans give the first active lane a wrong identity (1 more / true / flipped bit).
    WrongIdentity,
    /// shuffle_down reads one lane too far.
    OffByOneShuffle,
    /// The given lane of every subgroup skips the operation and writes nothing (an unwritten result).
    NoWrite(u32),
}

/// One op of a kernel: the op and, for clustered ops and clustered rotate, its constant cluster size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// the operation
    pub op: Op,
    /// cluster size literal (clustered ops)
    pub cluster: Option<u32>,
}

/// What a kernel evaluates: a category's ops that take one value type (or take no value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// the category
    pub category: Category,
    /// the value type; `None` for the category's ops without a value operand
    pub ty: Option<ValueType>,
    /// the ops, opcode = index
    pub entries: Vec<Entry>,
}

impl KernelSpec {
    /// Every kernel for a subgroup size: each category × each type taken by some op of it (plus the
    /// no-value ops). Clustered ops get one entry per cluster size 1..=size.
    pub fn all(size: SubgroupSize) -> Vec<KernelSpec> {
        let mut out = Vec::new();
        for cat in Category::ALL {
            let ops: Vec<&'static OpInfo> =
                catalogue().iter().filter(|o| o.category == cat).collect();
            let mut tys: Vec<Option<ValueType>> = Vec::new();
            if ops.iter().any(|o| !o.has_value()) {
                tys.push(None);
            }
            for t in ValueType::all() {
                if ops.iter().any(|o| o.accepts(t)) {
                    tys.push(Some(t));
                }
            }
            for ty in tys {
                let mut entries = Vec::new();
                for o in &ops {
                    let takes = match ty {
                        None => !o.has_value(),
                        Some(t) => o.accepts(t),
                    };
                    if !takes {
                        continue;
                    }
                    if o.args.contains(&crate::model::ArgKind::Cluster) {
                        let mut c = 1;
                        while c <= size.get() {
                            entries.push(Entry {
                                op: o.op,
                                cluster: Some(c),
                            });
                            c *= 2;
                        }
                    } else {
                        entries.push(Entry {
                            op: o.op,
                            cluster: None,
                        });
                    }
                }
                // Clustered rotate needs its own feature: keep it in a kernel of its own.
                let (plain, clustered_rot): (Vec<Entry>, Vec<Entry>) = entries
                    .into_iter()
                    .partition(|e| e.op != Op::ClusteredRotate);
                for es in [plain, clustered_rot] {
                    if !es.is_empty() {
                        out.push(KernelSpec {
                            category: cat,
                            ty,
                            entries: es,
                        });
                    }
                }
            }
        }
        out
    }

    /// A short name (`arithmetic-f32x2`, `ballot-none`).
    pub fn name(&self) -> String {
        let t = self
            .ty
            .map(|t| t.to_string())
            .unwrap_or_else(|| "none".into());
        let rot = if self.entries.iter().any(|e| e.op == Op::ClusteredRotate) {
            "-clustered"
        } else {
            ""
        };
        format!("{}{}-{}", self.category.name(), rot, t)
    }
}

fn scalar_load(s: ScalarType, w: &str) -> String {
    // `w` is a uvec2 of (low, high) words.
    match s {
        ScalarType::Bool => format!("(({w}.x & 1u) != 0u)"),
        ScalarType::I8 => format!("int8_t(int({w}.x))"),
        ScalarType::U8 => format!("uint8_t({w}.x)"),
        ScalarType::I16 => format!("int16_t(int({w}.x))"),
        ScalarType::U16 => format!("uint16_t({w}.x)"),
        ScalarType::I32 => format!("int({w}.x)"),
        ScalarType::U32 => format!("{w}.x"),
        ScalarType::I64 => format!("int64_t(packUint2x32({w}))"),
        ScalarType::U64 => format!("packUint2x32({w})"),
        ScalarType::F16 => format!("unpackFloat2x16({w}.x).x"),
        ScalarType::F32 => format!("uintBitsToFloat({w}.x)"),
        ScalarType::F64 => format!("packDouble2x32({w})"),
    }
}

fn scalar_store(s: ScalarType, v: &str) -> String {
    // Returns a uvec2 expression of the raw bits (high word 0 below 64 bits).
    match s {
        ScalarType::Bool => format!("uvec2({v} ? 1u : 0u, 0u)"),
        ScalarType::I8 => format!("uvec2(uint(int({v})) & 0xffu, 0u)"),
        ScalarType::U8 => format!("uvec2(uint({v}), 0u)"),
        ScalarType::I16 => format!("uvec2(uint(int({v})) & 0xffffu, 0u)"),
        ScalarType::U16 => format!("uvec2(uint({v}), 0u)"),
        ScalarType::I32 => format!("uvec2(uint({v}), 0u)"),
        ScalarType::U32 => format!("uvec2({v}, 0u)"),
        ScalarType::I64 => format!("unpackUint2x32(uint64_t({v}))"),
        ScalarType::U64 => format!("unpackUint2x32({v})"),
        ScalarType::F16 => format!("uvec2(packFloat2x16(f16vec2({v}, float16_t(0.0))), 0u)"),
        ScalarType::F32 => format!("uvec2(floatBitsToUint({v}), 0u)"),
        ScalarType::F64 => format!("unpackDouble2x32({v})"),
    }
}

fn extensions_for(s: ScalarType) -> &'static [&'static str] {
    match s {
        ScalarType::I8 | ScalarType::U8 => &[
            "GL_EXT_shader_explicit_arithmetic_types_int8",
            "GL_EXT_shader_subgroup_extended_types_int8",
        ],
        ScalarType::I16 | ScalarType::U16 => &[
            "GL_EXT_shader_explicit_arithmetic_types_int16",
            "GL_EXT_shader_subgroup_extended_types_int16",
        ],
        ScalarType::I64 | ScalarType::U64 => &[
            "GL_EXT_shader_explicit_arithmetic_types_int64",
            "GL_EXT_shader_subgroup_extended_types_int64",
        ],
        ScalarType::F16 => &[
            "GL_EXT_shader_explicit_arithmetic_types_float16",
            "GL_EXT_shader_subgroup_extended_types_float16",
        ],
        _ => &[],
    }
}

/// The GLSL call of `e` on `v` (type `t`), with `larg` the per-lane and `uarg` the uniform argument.
fn call_expr(e: Entry, fault: Option<Fault>) -> String {
    let g = &crate::model::info(e.op).glsl;
    match e.op {
        Op::Elect => "subgroupElect()".into(),
        Op::SubgroupSize => "gl_SubgroupSize".into(),
        Op::InvocationId => "gl_SubgroupInvocationID".into(),
        Op::LaneMask(k) => match k {
            MaskKind::Eq => "gl_SubgroupEqMask",
            MaskKind::Ge => "gl_SubgroupGeMask",
            MaskKind::Gt => "gl_SubgroupGtMask",
            MaskKind::Le => "gl_SubgroupLeMask",
            MaskKind::Lt => "gl_SubgroupLtMask",
        }
        .into(),
        Op::NumSubgroups => "gl_NumSubgroups".into(),
        Op::SubgroupId => "gl_SubgroupID".into(),
        Op::All | Op::Any | Op::AllEqual | Op::Ballot | Op::BroadcastFirst => format!("{g}(v)"),
        Op::InverseBallot => format!("{g}(ballotArg)"),
        Op::BallotBitExtract => format!("{g}(ballotArg, larg)"),
        Op::BallotBitCount(_) | Op::BallotFindLsb | Op::BallotFindMsb => format!("{g}(ballotArg)"),
        Op::Broadcast | Op::QuadBroadcast => format!("{g}(v, uarg)"),
        Op::Arithmetic(_, Scan::Exclusive) if fault == Some(Fault::WrongIdentity) => {
            format!("wrongIdentity({g}(v))")
        }
        Op::Arithmetic(..) | Op::QuadSwap(_) => format!("{g}(v)"),
        Op::Shuffle | Op::ShuffleXor | Op::ShuffleUp => format!("{g}(v, larg)"),
        Op::ShuffleDown if fault == Some(Fault::OffByOneShuffle) => format!("{g}(v, larg + 1u)"),
        Op::ShuffleDown => format!("{g}(v, larg)"),
        Op::Clustered(_) => format!("{g}(v, {}u)", e.cluster.unwrap_or(1)),
        Op::Rotate => "subgroupRotateKHR(3u, v, uarg)".into(),
        Op::ClusteredRotate => format!(
            "subgroupClusteredRotateKHR(3u, v, uarg, {}u)",
            e.cluster.unwrap_or(1)
        ),
    }
}

fn result_glsl_type(e: Entry, t: Option<ValueType>) -> String {
    match crate::model::info(e.op).result {
        ResultKind::SameAsValue => t.map(|t| t.glsl()).unwrap_or_else(|| "uint".into()),
        ResultKind::Bool => "bool".into(),
        ResultKind::Uint => "uint".into(),
        ResultKind::Uvec4 => "uvec4".into(),
    }
}

/// Generates the kernel's GLSL. Local size comes from specialization constants 0, 1, 2.
pub fn generate(spec: &KernelSpec, fault: Option<Fault>) -> String {
    let mut s = String::from("#version 450\n");
    let mut exts: Vec<&str> = vec![
        "GL_KHR_shader_subgroup_basic",
        "GL_KHR_shader_subgroup_ballot",
        spec.category.glsl_extension(),
    ];
    if spec.category == Category::Rotate {
        exts.retain(|e| *e != "GL_KHR_shader_subgroup_rotate");
        exts.push("GL_EXT_spirv_intrinsics");
    }
    if let Some(t) = spec.ty {
        exts.extend_from_slice(extensions_for(t.scalar_type()));
        if matches!(t.scalar_type(), ScalarType::I64 | ScalarType::U64) {
            exts.push("GL_ARB_gpu_shader_int64");
        }
    }
    exts.dedup();
    for e in &exts {
        s += &format!("#extension {e} : require\n");
    }
    s += "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n";
    s += "layout(std430, binding = 0) readonly buffer Cases { uint cases[]; };\n";
    s += "layout(std430, binding = 1) readonly buffer Inputs { uint inp[]; };\n";
    s += "layout(std430, binding = 2) buffer Outputs { uint outp[]; };\n";
    s += &format!("const uint CASE_WORDS = {CASE_WORDS}u;\nconst uint IN_WORDS = {IN_WORDS}u;\nconst uint OUT_WORDS = {OUT_WORDS}u;\n");
    let tname = spec.ty.map(|t| t.glsl());
    if spec.category == Category::Rotate {
        if let Some(t) = &tname {
            // glslang 11 has no subgroupRotate: declare OpGroupNonUniformRotateKHR (4431) with the
            // GroupNonUniformRotateKHR capability (6026) through GL_EXT_spirv_intrinsics.
            s += &format!("spirv_instruction(extensions = [\"SPV_KHR_subgroup_rotate\"], capabilities = [6026], id = 4431)\n{t} subgroupRotateKHR(uint scope, {t} value, uint delta);\n");
            s += &format!("spirv_instruction(extensions = [\"SPV_KHR_subgroup_rotate\"], capabilities = [6026], id = 4431)\n{t} subgroupClusteredRotateKHR(uint scope, {t} value, uint delta, uint clusterSize);\n");
        }
    }
    // Loads and stores of the value type (two words per component) and of the other result types.
    if let (Some(t), Some(tn)) = (spec.ty, &tname) {
        let n = t.components();
        let sc = t.scalar_type();
        s += &format!("{tn} loadValue(uint b) {{\n");
        if n == 1 {
            s += &format!(
                "    uvec2 w0 = uvec2(inp[b], inp[b + 1u]);\n    return {};\n}}\n",
                scalar_load(sc, "w0")
            );
        } else {
            s += &format!("    {tn} v;\n");
            for i in 0..n {
                s += &format!(
                    "    uvec2 w{i} = uvec2(inp[b + {}u], inp[b + {}u]);\n    v[{i}] = {};\n",
                    2 * i,
                    2 * i + 1,
                    scalar_load(sc, &format!("w{i}"))
                );
            }
            s += "    return v;\n}\n";
        }
        {
            s += &format!("void storeValue(uint o, {tn} r) {{\n");
            if n == 1 {
                s += &format!(
                    "    uvec2 w = {};\n    outp[o] = w.x; outp[o + 1u] = w.y;\n}}\n",
                    scalar_store(sc, "r")
                );
            } else {
                for i in 0..n {
                    s += &format!(
                        "    uvec2 w{i} = {};\n    outp[o + {}u] = w{i}.x; outp[o + {}u] = w{i}.y;\n",
                        scalar_store(sc, &format!("r[{i}]")),
                        2 * i,
                        2 * i + 1
                    );
                }
                s += "}\n";
            }
        }
        if fault == Some(Fault::WrongIdentity) {
            // The first active lane's exclusive result is perturbed: a wrong identity.
            let one = match sc {
                ScalarType::Bool => "true".to_string(),
                _ => format!("{tn}(1)"),
            };
            let perturb = if sc == ScalarType::Bool {
                "r != one".to_string()
            } else {
                "r + one".to_string()
            };
            s += &format!(
                "{tn} wrongIdentity({tn} r) {{ {tn} one = {tn}({one}); return subgroupElect() ? {perturb} : r; }}\n"
            );
        }
    }
    s += "void store(uint o, bool r) { outp[o] = r ? 1u : 0u; outp[o + 1u] = 0u; }\n";
    s += "void store(uint o, uint r) { outp[o] = r; outp[o + 1u] = 0u; }\n";
    s += "void store(uint o, uvec4 r) { outp[o] = r.x; outp[o + 1u] = r.y; outp[o + 2u] = r.z; outp[o + 3u] = r.w; }\n";
    if let Some(Fault::WrongLane(l) | Fault::NoWrite(l)) = fault {
        s += &format!("const uint FAULT_LANE = {l}u;\n");
    }
    s += "void main() {\n";
    s += "    uint wgInvocations = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;\n";
    s += "    uint wg = gl_WorkGroupID.x;\n";
    s += "    uint inv = wg * wgInvocations + gl_LocalInvocationIndex;\n";
    s += "    uint c = wg * CASE_WORDS;\n";
    s += "    uint opcode = cases[c];\n    uint uarg = cases[c + 1u];\n";
    s += "    uvec4 ballotArg = uvec4(cases[c + 2u], cases[c + 3u], cases[c + 4u], cases[c + 5u]);\n";
    s += "    uint ib = inv * IN_WORDS;\n    bool pred = inp[ib] != 0u;\n    uint larg = inp[ib + 1u];\n";
    if let Some(tn) = &tname {
        s += &format!("    {tn} v = loadValue(ib + 2u);\n");
    }
    s += "    uint ob = inv * OUT_WORDS;\n";
    s += "    outp[ob + 1u] = gl_SubgroupID;\n    outp[ob + 2u] = gl_SubgroupInvocationID;\n";
    s += "    outp[ob + 3u] = subgroupBroadcastFirst(inv);\n    outp[ob + 4u] = gl_SubgroupSize;\n";
    if spec.category == Category::Basic {
        s += &format!(
            "    outp[ob + {}u] = gl_NumSubgroups;\n",
            out::NUM_SUBGROUPS
        );
    }
    s += "    if (pred) {\n";
    if matches!(fault, Some(Fault::NoWrite(_))) {
        s += "        if (gl_SubgroupInvocationID == FAULT_LANE) return;\n";
    }
    s += "        uvec4 activeLanes = subgroupBallot(true);\n";
    s += "        uint ro = ob + 9u;\n";
    s += "        switch (opcode) {\n";
    for (i, e) in spec.entries.iter().enumerate() {
        let rt = result_glsl_type(*e, spec.ty);
        let expr = call_expr(*e, fault);
        let store = if crate::model::info(e.op).result == ResultKind::SameAsValue {
            "storeValue"
        } else {
            "store"
        };
        let faulty = matches!(fault, Some(Fault::WrongLane(_)));
        if faulty {
            let flip = match rt.as_str() {
                "bool" => "!r".to_string(),
                "uvec4" => "r ^ uvec4(1u, 0u, 0u, 0u)".to_string(),
                _ => flip_expr(spec.ty, &rt),
            };
            s += &format!(
                "        case {i}u: {{ {rt} r = {expr}; if (gl_SubgroupInvocationID == FAULT_LANE) r = {flip}; {store}(ro, r); break; }}\n"
            );
        } else {
            s += &format!("        case {i}u: {store}(ro, {expr}); break;\n");
        }
    }
    s += "        default: break;\n        }\n";
    s += "        outp[ob + 5u] = activeLanes.x; outp[ob + 6u] = activeLanes.y; outp[ob + 7u] = activeLanes.z; outp[ob + 8u] = activeLanes.w;\n";
    s += &format!("        outp[ob] = {MARKER}u;\n");
    s += "    }\n}\n";
    s
}

fn flip_expr(t: Option<ValueType>, rt: &str) -> String {
    // Flip the lowest bit of the first component of a value-typed or uint result.
    if rt == "uint" {
        return "r ^ 1u".into();
    }
    let Some(t) = t else { return "r".into() };
    let sc = t.scalar_type();
    let flip1 = |x: &str| -> String {
        match sc {
            ScalarType::Bool => format!("!{x}"),
            ScalarType::F16 => {
                format!("unpackFloat2x16(packFloat2x16(f16vec2({x}, float16_t(0.0))) ^ 1u).x")
            }
            ScalarType::F32 => format!("uintBitsToFloat(floatBitsToUint({x}) ^ 1u)"),
            ScalarType::F64 => format!("packDouble2x32(unpackDouble2x32({x}) ^ uvec2(1u, 0u))"),
            _ => format!("{x} ^ {}(1)", sc.glsl()),
        }
    };
    if t.components() == 1 {
        flip1("r")
    } else {
        let parts: Vec<String> = (0..t.components())
            .map(|i| {
                if i == 0 {
                    flip1("r[0]")
                } else {
                    format!("r[{i}]")
                }
            })
            .collect();
        format!("{}({})", t.glsl(), parts.join(", "))
    }
}

/// The GLSL statement that evaluates `e` — quoted in mismatch reports.
pub fn op_statement(e: Entry) -> String {
    format!("r = {};", call_expr(e, None))
}

/// The binary operator of an arithmetic or clustered op.
pub fn binop(op: Op) -> Option<crate::model::BinOp> {
    match op {
        Op::Arithmetic(b, _) | Op::Clustered(b) => Some(b),
        _ => None,
    }
}
