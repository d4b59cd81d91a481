//! GLSL kernels for the conformance cases, generated from the op catalogue.
//!
//! Every call expression comes from the op's [`OpInfo`]: its GLSL name, its value type and its
//! argument kinds (which argument is per lane, which uniform, which a constant). One kernel holds
//! every op of one value type, all categories together (and one more kernel the ops without a
//! value operand); each op is a `case` of a `switch` on a per-workgroup opcode, so 49 pipelines per
//! workgroup shape evaluate every case. The random cases are still drawn per [`CaseGroup`] (one
//! category and value type), exactly as when each group had a kernel of its own.
//!
//! Every invocation records its subgroup (gl_SubgroupID, gl_SubgroupInvocationID, and the global
//! index of the first active invocation via subgroupBroadcastFirst), the ballot of lanes active at
//! the operation, and its result as raw bits, so comparison never assumes how local invocations map
//! to lanes. Values travel as raw bits (two 32-bit words per component) and are bit-cast in the
//! shader, so NaN payloads and -0.0 arrive intact and no 8/16-bit storage feature is needed.
//! Results are stored once, after the `switch`: a driver that compiles every case (lavapipe does)
//! then compiles the store once instead of once per op. Why these choices (measured on lavapipe):
//! docs/conformance-results.md, "Cold start".

use crate::model::{
    catalogue, info, ArgKind, Category, Op, OpInfo, ResultKind, ScalarType, Scan, SubgroupSize,
    ValueType,
};
use std::fmt::Write as _;

// Records are whole uvec4s, read and written as such: llvmpipe compiles a uvec4 access once
// where it compiles a loop per scalar word.

/// Words per case (per workgroup, two uvec4): see [`case`].
pub(crate) const CASE_WORDS: usize = 8;
/// Words per invocation of input (three uvec4): see [`input`].
pub(crate) const IN_WORDS: usize = 12;
/// Words per invocation of output (five uvec4): see [`out`].
pub(crate) const OUT_WORDS: usize = 20;

/// Case words (one case per workgroup).
pub mod case {
    /// index of the op in the kernel's entries
    pub(crate) const OPCODE: usize = 0;
    /// the dynamically uniform argument (broadcast id, quad index, rotate delta)
    pub(crate) const UNIFORM: usize = 1;
    /// the uniform ballot operand (4 words)
    pub(crate) const BALLOT: usize = 4;
}

/// Input words of one invocation.
pub mod input {
    /// non-zero when the invocation executes the operation
    pub(crate) const PREDICATE: usize = 0;
    /// the per-lane argument (id, mask, delta, index)
    pub(crate) const LANE_ARG: usize = 1;
    /// the low 32 bits of each of the value's (up to 4) components
    pub(crate) const VALUE_LO: usize = 4;
    /// the high 32 bits of each component (64-bit types)
    pub(crate) const VALUE_HI: usize = 8;
}

/// Output slots.
pub mod out {
    /// set to [`MARKER`](super::MARKER) when the invocation executed the operation, to
    /// [`SENTINEL`](super::SENTINEL) by the others
    pub(crate) const WRITTEN: usize = 0;
    /// gl_SubgroupID
    pub(crate) const SUBGROUP_ID: usize = 1;
    /// gl_SubgroupInvocationID
    pub const LANE: usize = 2;
    /// global index of the subgroup's first active invocation (subgroupBroadcastFirst)
    pub(crate) const KEY: usize = 3;
    /// gl_SubgroupSize
    pub const SIZE: usize = 4;
    /// gl_NumSubgroups
    pub(crate) const NUM_SUBGROUPS: usize = 5;
    /// ballot of lanes active at the operation (4 words)
    pub(crate) const ACTIVE: usize = 8;
    /// the low 32 bits of each result component (a bool, uint or uvec4 result: its words)
    pub(crate) const RESULT_LO: usize = 12;
    /// the high 32 bits of each result component (64-bit types)
    pub(crate) const RESULT_HI: usize = 16;
}

/// The case words of one workgroup.
pub(crate) fn case_record(opcode: u32, uniform: u32, ballot: [u32; 4]) -> [u32; CASE_WORDS] {
    let mut w = [0u32; CASE_WORDS];
    w[case::OPCODE] = opcode;
    w[case::UNIFORM] = uniform;
    w[case::BALLOT..case::BALLOT + 4].copy_from_slice(&ballot);
    w
}

/// The input words of one invocation: its predicate, lane argument and value bits per component.
pub(crate) fn input_record(predicate: bool, lane_arg: u32, value: [u64; 4]) -> [u32; IN_WORDS] {
    let mut w = [0u32; IN_WORDS];
    w[input::PREDICATE] = predicate as u32;
    w[input::LANE_ARG] = lane_arg;
    for (c, bits) in value.iter().enumerate() {
        w[input::VALUE_LO + c] = *bits as u32;
        w[input::VALUE_HI + c] = (bits >> 32) as u32;
    }
    w
}

/// The bits of component `c` of a value held as low words at `lo` and high words at `hi`.
pub fn component_bits(words: &[u32], lo: usize, hi: usize, c: usize) -> u64 {
    words[lo + c] as u64 | (words[hi + c] as u64) << 32
}

/// Every output word starts as this sentinel, so an unwritten result is caught.
pub const SENTINEL: u32 = 0xDEAD_BEEF;
/// Written to [`out::WRITTEN`] by an invocation that executed the operation.
pub(crate) const MARKER: u32 = 0x600D_CA5E;

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

/// One op of a kernel: the op, its value type and, for clustered ops and clustered rotate, its
/// constant cluster size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// the operation
    pub op: Op,
    /// the value type (`None` for ops without a value operand)
    pub ty: Option<ValueType>,
    /// cluster size literal (clustered ops)
    pub cluster: Option<u32>,
}

impl Entry {
    /// The op's catalogue entry.
    pub fn info(&self) -> &'static OpInfo {
        info(self.op)
    }
}

/// The ops of one category that take one value type (or take no value): the unit the random
/// cases are drawn for (`conform::cases`), named as the kernel that ran them once was.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CaseGroup {
    /// the category
    pub category: Category,
    /// the value type; `None` for the category's ops without a value operand
    pub ty: Option<ValueType>,
    /// the ops
    pub entries: Vec<Entry>,
}

impl CaseGroup {
    /// A short name (`arithmetic-f32x2`, `ballot-none`, `rotate-clustered-u32`).
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

/// What one pipeline evaluates: case groups of one scalar type (or of no value type); opcodes
/// number the groups' entries in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// the groups
    pub groups: Vec<CaseGroup>,
}

impl KernelSpec {
    /// Every kernel for a subgroup size: one per value type (every category that takes it) and
    /// one for the ops without a value. Clustered ops get one entry per cluster size 1..=size;
    /// clustered rotate a group of its own (it needs its own device feature).
    pub fn all(size: SubgroupSize) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = Vec::new();
        for g in all_groups(size) {
            match kernels.iter_mut().find(|k| k.value_type() == g.ty) {
                Some(k) => k.groups.push(g),
                None => kernels.push(KernelSpec { groups: vec![g] }),
            }
        }
        kernels
    }

    /// A kernel of one group.
    pub fn single(group: CaseGroup) -> KernelSpec {
        KernelSpec {
            groups: vec![group],
        }
    }

    /// The value type of its ops (`None`: ops without a value).
    pub fn value_type(&self) -> Option<ValueType> {
        self.groups.first().and_then(|g| g.ty)
    }

    /// The kernel's name: its value type (`f16x2`), or `none`.
    pub fn name(&self) -> String {
        match self.value_type() {
            Some(t) => t.to_string(),
            None => "none".into(),
        }
    }

    /// Every entry, in opcode order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.groups.iter().flat_map(|g| g.entries.iter())
    }

    /// The entry of `opcode`.
    pub fn entry(&self, opcode: u32) -> Option<Entry> {
        self.entries().nth(opcode as usize).copied()
    }

    /// The opcode of the first entry of group `g`.
    pub fn first_opcode(&self, g: usize) -> u32 {
        self.groups[..g]
            .iter()
            .map(|g| g.entries.len())
            .sum::<usize>() as u32
    }

    /// Keeps the entries `keep` accepts and the groups left with any.
    pub fn retain(&mut self, mut keep: impl FnMut(&CaseGroup, &Entry) -> bool) {
        for g in &mut self.groups {
            let snapshot = g.clone();
            g.entries.retain(|e| keep(&snapshot, e));
        }
        self.groups.retain(|g| !g.entries.is_empty());
    }
}

/// Every case group: each category × each type taken by some op of it (plus the no-value ops).
fn all_groups(size: SubgroupSize) -> Vec<CaseGroup> {
    let mut out = Vec::new();
    for cat in Category::ALL {
        let ops: Vec<&'static OpInfo> = catalogue().iter().filter(|o| o.category == cat).collect();
        let mut tys: Vec<Option<ValueType>> = Vec::new();
        if ops.iter().any(|o| !o.has_value()) {
            tys.push(None);
        }
        tys.extend(
            ValueType::all()
                .filter(|t| ops.iter().any(|o| o.accepts(*t)))
                .map(Some),
        );
        for ty in tys {
            let takes = |o: &OpInfo| match ty {
                None => !o.has_value(),
                Some(t) => o.accepts(t),
            };
            let mut entries = Vec::new();
            for o in ops.iter().filter(|o| takes(o)) {
                let clusters: Vec<Option<u32>> = if o.args.contains(&ArgKind::Cluster) {
                    (0..=size.get().trailing_zeros())
                        .map(|k| Some(1 << k))
                        .collect()
                } else {
                    vec![None]
                };
                entries.extend(clusters.into_iter().map(|cluster| Entry {
                    op: o.op,
                    ty,
                    cluster,
                }));
            }
            // Clustered rotate needs its own feature: a group of its own.
            let (plain, clustered_rot): (Vec<Entry>, Vec<Entry>) =
                entries.into_iter().partition(|e| {
                    !e.info()
                        .features
                        .contains(&crate::model::Feature::RotateClustered)
                });
            for es in [plain, clustered_rot] {
                if !es.is_empty() {
                    out.push(CaseGroup {
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
            "GL_ARB_gpu_shader_int64",
        ],
        ScalarType::F16 => &[
            "GL_EXT_shader_explicit_arithmetic_types_float16",
            "GL_EXT_shader_subgroup_extended_types_float16",
        ],
        ScalarType::Bool
        | ScalarType::I32
        | ScalarType::U32
        | ScalarType::F32
        | ScalarType::F64 => &[],
    }
}

/// A built-in function the bundled glslang (11) does not know, reached as a SPIR-V instruction
/// through GL_EXT_spirv_intrinsics: declared as `<glsl>KHR` with the scope as first parameter.
struct Intrinsic {
    extension: &'static str,
    capability: u32,
    opcode: u32,
}

/// The categories whose built-ins glslang 11 lacks (docs: /work/shared/TOOLCHAIN.md).
fn intrinsic(c: Category) -> Option<Intrinsic> {
    match c {
        // OpGroupNonUniformRotateKHR = 4431, capability GroupNonUniformRotateKHR = 6026.
        Category::Rotate => Some(Intrinsic {
            extension: "SPV_KHR_subgroup_rotate",
            capability: 6026,
            opcode: 4431,
        }),
        Category::Basic
        | Category::Vote
        | Category::Ballot
        | Category::Arithmetic
        | Category::Shuffle
        | Category::ShuffleRelative
        | Category::Clustered
        | Category::Quad => None,
    }
}

/// The Subgroup scope (SPIR-V), the first operand of an intrinsic call.
const SUBGROUP_SCOPE: &str = "3u";

/// Where a result goes: a value of the operand's type (stored as two words per component) or a
/// bool, uint or uvec4 (stored as one word per component).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResultSlot {
    Value(ValueType),
    Fixed(ResultKind),
}

impl ResultSlot {
    fn of(e: &Entry) -> ResultSlot {
        match e.info().result {
            ResultKind::SameAsValue => ResultSlot::Value(e.ty.unwrap_or(ValueType::U32)),
            k @ (ResultKind::Bool | ResultKind::Uint | ResultKind::Uvec4) => ResultSlot::Fixed(k),
        }
    }

    /// The GLSL type.
    fn glsl(self) -> String {
        match self {
            ResultSlot::Value(t) => t.glsl(),
            ResultSlot::Fixed(k) => k.result_type(None).glsl(),
        }
    }

    /// The variable the `switch` assigns (`rv_u32x2`, `r_bool`).
    fn var(self) -> String {
        match self {
            ResultSlot::Value(t) => format!("rv_{t}"),
            ResultSlot::Fixed(k) => format!("r_{}", k.result_type(None).glsl()),
        }
    }

    /// The store function (`storeValue` for values, `store` for the fixed types).
    fn store(self) -> &'static str {
        match self {
            ResultSlot::Value(_) => "storeValue",
            ResultSlot::Fixed(_) => "store",
        }
    }
}

/// The GLSL expression passing an argument of `kind`: the case's uniform word, the lane's
/// argument word, the ballot operand, or the constant cluster size.
fn arg_expr(kind: ArgKind, e: &Entry, fault: Option<Fault>) -> Option<String> {
    let lane = if fault == Some(Fault::OffByOneShuffle) && e.op == Op::ShuffleDown {
        "larg + 1u" // the deliberate bug: one lane too far
    } else {
        "larg"
    };
    Some(match kind {
        ArgKind::Id { uniform: true } | ArgKind::Delta { uniform: true } | ArgKind::QuadIndex => {
            "uarg".into()
        }
        ArgKind::Id { uniform: false }
        | ArgKind::Delta { uniform: false }
        | ArgKind::Mask
        | ArgKind::Index => lane.into(),
        ArgKind::Ballot => "ballotArg".into(),
        ArgKind::Cluster => format!("{}u", e.cluster.unwrap_or(1)),
        ArgKind::Workgroup => return None,
    })
}

/// The GLSL that evaluates `e`: a built-in variable, or a call of the op's GLSL function on the
/// value and the arguments its kinds say.
fn call_expr(e: &Entry, fault: Option<Fault>) -> String {
    let o = e.info();
    if o.glsl.starts_with("gl_") {
        return o.glsl.clone();
    }
    let mut params: Vec<String> = Vec::new();
    let mut name = o.glsl.clone();
    if intrinsic(o.category).is_some() {
        name += "KHR";
        params.push(SUBGROUP_SCOPE.into());
    }
    if e.ty.is_some() {
        params.push("v".into());
    }
    params.extend(o.args.iter().filter_map(|&k| arg_expr(k, e, fault)));
    let call = format!("{name}({})", params.join(", "));
    let exclusive_scan = o.op.binop().map(|b| Op::Arithmetic(b, Scan::Exclusive)) == Some(o.op);
    if fault == Some(Fault::WrongIdentity) && exclusive_scan {
        format!("wrongIdentity({call})")
    } else {
        call
    }
}

/// The GLSL statement that evaluates `e` — quoted in mismatch reports.
pub(crate) fn op_statement(e: Entry) -> String {
    format!("r = {};", call_expr(&e, None))
}

/// The result slots of the kernel's entries, in order of first appearance.
fn result_slots(spec: &KernelSpec) -> Vec<ResultSlot> {
    let mut out: Vec<ResultSlot> = Vec::new();
    for e in spec.entries() {
        let slot = ResultSlot::of(e);
        if !out.contains(&slot) {
            out.push(slot);
        }
    }
    out
}

/// Generates the kernel's GLSL. Local size comes from specialization constants 0, 1, 2.
pub fn generate(spec: &KernelSpec, fault: Option<Fault>) -> String {
    let mut s = String::from("#version 450\n");
    s += &extensions(spec);
    s += &interface();
    s += &declarations(spec, fault);
    s += "void main() {\n";
    s += &prologue(spec, fault);
    s += &evaluation(spec, fault);
    s += &epilogue(spec, fault);
    s += "}\n";
    s
}

/// `#extension` lines: subgroup basic and ballot (every kernel records its subgroup with them),
/// the categories' extensions and the value types'.
fn extensions(spec: &KernelSpec) -> String {
    let mut exts: Vec<&str> = vec![
        "GL_KHR_shader_subgroup_basic",
        "GL_KHR_shader_subgroup_ballot",
    ];
    for g in &spec.groups {
        exts.push(match intrinsic(g.category) {
            Some(_) => "GL_EXT_spirv_intrinsics",
            None => g.category.glsl_extension(),
        });
        if let Some(t) = g.ty {
            exts.extend_from_slice(extensions_for(t.scalar_type()));
        }
    }
    let mut seen = Vec::new();
    exts.retain(|e| {
        let new = !seen.contains(e);
        seen.push(*e);
        new
    });
    exts.iter()
        .map(|e| format!("#extension {e} : require\n"))
        .collect()
}

/// Local size and the buffers, of uvec4 records.
fn interface() -> String {
    format!(
        "layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n\
         layout(std430, binding = 0) readonly buffer Cases {{ uvec4 cases[]; }};\n\
         layout(std430, binding = 1) readonly buffer Inputs {{ uvec4 inp[]; }};\n\
         layout(std430, binding = 2) buffer Outputs {{ uvec4 outp[]; }};\n\
         const uint CASE_VEC4 = {}u;\nconst uint IN_VEC4 = {}u;\nconst uint OUT_VEC4 = {}u;\n",
        CASE_WORDS / 4,
        IN_WORDS / 4,
        OUT_WORDS / 4
    )
}

/// Intrinsic declarations, value loads and stores, result stores, fault helpers.
fn declarations(spec: &KernelSpec, fault: Option<Fault>) -> String {
    let mut s = String::new();
    // Intrinsics: one declaration per (op, value type) the kernel calls.
    let mut declared = Vec::new();
    for e in spec.entries() {
        let o = e.info();
        let (Some(x), Some(t)) = (intrinsic(o.category), e.ty) else {
            continue;
        };
        if declared.contains(&(e.op, t)) {
            continue;
        }
        declared.push((e.op, t));
        let params: Vec<&str> = o
            .args
            .iter()
            .map(|k| k.glsl_param())
            .filter(|p| !p.is_empty())
            .collect();
        let _ = writeln!(
            s,
            "spirv_instruction(extensions = [\"{}\"], capabilities = [{}], id = {})\n\
             {tn} {}KHR(uint scope, {tn} value, {});",
            x.extension,
            x.capability,
            x.opcode,
            o.glsl,
            params.join(", "),
            tn = t.glsl()
        );
    }
    // The value from its low and high words, and back.
    if let Some(t) = spec.value_type() {
        let (sc, n, tn) = (t.scalar_type(), t.components(), t.glsl());
        let comp = |i: usize| ["x", "y", "z", "w"][i];
        let _ = writeln!(s, "{tn} loadValue(uvec4 lo, uvec4 hi) {{");
        if n == 1 {
            let _ = writeln!(s, "    return {};", scalar_load(sc, "uvec2(lo.x, hi.x)"));
        } else {
            let _ = writeln!(s, "    {tn} v;");
            for i in 0..n {
                let w = format!("uvec2(lo.{c}, hi.{c})", c = comp(i));
                let _ = writeln!(s, "    v[{i}] = {};", scalar_load(sc, &w));
            }
            s += "    return v;\n";
        }
        s += "}\n";
        let _ = writeln!(
            s,
            "void storeValue({tn} r, inout uvec4 lo, inout uvec4 hi) {{"
        );
        for i in 0..n {
            let c = if n == 1 {
                "r".into()
            } else {
                format!("r[{i}]")
            };
            let _ = writeln!(
                s,
                "    uvec2 w{i} = {};\n    lo.{x} = w{i}.x; hi.{x} = w{i}.y;",
                scalar_store(sc, &c),
                x = comp(i)
            );
        }
        s += "}\n";
        if fault == Some(Fault::WrongIdentity) {
            // The first active lane's exclusive result is perturbed: a wrong identity.
            let perturb = match (sc, n) {
                (ScalarType::Bool, 1) => "!r".to_string(),
                (ScalarType::Bool, _) => "not(r)".to_string(),
                _ => format!("r + {tn}(1)"),
            };
            let _ = writeln!(
                s,
                "{tn} wrongIdentity({tn} r) {{ return subgroupElect() ? {perturb} : r; }}"
            );
        }
    }
    s += "void store(bool r, inout uvec4 lo, inout uvec4 hi) { lo.x = r ? 1u : 0u; }\n";
    s += "void store(uint r, inout uvec4 lo, inout uvec4 hi) { lo.x = r; }\n";
    s += "void store(uvec4 r, inout uvec4 lo, inout uvec4 hi) { lo = r; }\n";
    if let Some(Fault::WrongLane(l) | Fault::NoWrite(l)) = fault {
        let _ = writeln!(s, "const uint FAULT_LANE = {l}u;");
    }
    s
}

/// Indices, the case words, the lane's inputs and the subgroup header of its record.
fn prologue(spec: &KernelSpec, fault: Option<Fault>) -> String {
    // Word `w` of a record is component w % 4 of its uvec4 number w / 4.
    let at = |w: usize| format!("{}u].{}", w / 4, ["x", "y", "z", "w"][w % 4]);
    let mut s = format!(
        "    uint wgInvocations = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;\n\
         \x20   uint wg = gl_WorkGroupID.x;\n\
         \x20   uint inv = wg * wgInvocations + gl_LocalInvocationIndex;\n\
         \x20   uint c = wg * CASE_VEC4;\n\
         \x20   uint opcode = cases[c + {op};\n\
         \x20   uint uarg = cases[c + {u};\n\
         \x20   uvec4 ballotArg = cases[c + {b}u];\n\
         \x20   uint ib = inv * IN_VEC4;\n\
         \x20   bool pred = inp[ib + {p} != 0u;\n\
         \x20   uint larg = inp[ib + {l};\n",
        op = at(case::OPCODE),
        u = at(case::UNIFORM),
        b = case::BALLOT / 4,
        p = at(input::PREDICATE),
        l = at(input::LANE_ARG),
    );
    if let Some(t) = spec.value_type() {
        let _ = writeln!(
            s,
            "    {} v = loadValue(inp[ib + {}u], inp[ib + {}u]);",
            t.glsl(),
            input::VALUE_LO / 4,
            input::VALUE_HI / 4
        );
    }
    // The header: every invocation writes its subgroup; the marker waits for the operation.
    let _ = writeln!(s, "    uint ob = inv * OUT_VEC4;");
    let _ = writeln!(
        s,
        "    outp[ob + {}u] = uvec4({SENTINEL}u, gl_SubgroupID, gl_SubgroupInvocationID, \
         subgroupBroadcastFirst(inv));",
        out::WRITTEN / 4
    );
    let _ = writeln!(
        s,
        "    outp[ob + {}u] = uvec4(gl_SubgroupSize, gl_NumSubgroups, 0u, 0u);",
        out::SIZE / 4
    );
    debug_assert_eq!(
        (out::SUBGROUP_ID, out::LANE, out::KEY, out::NUM_SUBGROUPS),
        (1, 2, 3, 5)
    );
    s += "    if (pred) {\n";
    if matches!(fault, Some(Fault::NoWrite(_))) {
        s += "        if (gl_SubgroupInvocationID == FAULT_LANE) return;\n";
    }
    s += "        uvec4 activeLanes = subgroupBallot(true);\n";
    s
}

/// The `switch` on the opcode: each case evaluates one op into the variable of its result type.
fn evaluation(spec: &KernelSpec, fault: Option<Fault>) -> String {
    let mut s = String::new();
    let slots = result_slots(spec);
    for slot in &slots {
        let _ = writeln!(s, "        {} {};", slot.glsl(), slot.var());
    }
    s += "        uint slot = 0u;\n        switch (opcode) {\n";
    for (i, e) in spec.entries().enumerate() {
        let k = slots
            .iter()
            .position(|x| *x == ResultSlot::of(e))
            .unwrap_or(0);
        let _ = writeln!(
            s,
            "        case {i}u: {} = {}; slot = {k}u; break;",
            ResultSlot::of(e).var(),
            call_expr(e, fault)
        );
    }
    s += "        default: break;\n        }\n";
    s
}

/// Converts the result to its words (once per result slot) and stores them, the active lanes
/// and the marker.
fn epilogue(spec: &KernelSpec, fault: Option<Fault>) -> String {
    let mut s = String::from("        uvec4 lo = uvec4(0u), hi = uvec4(0u);\n");
    for (k, slot) in result_slots(spec).iter().enumerate() {
        let var = slot.var();
        let mut flip = String::new();
        if matches!(fault, Some(Fault::WrongLane(_))) {
            flip = format!(
                "if (gl_SubgroupInvocationID == FAULT_LANE) {var} = {}; ",
                flip_expr(*slot, &var)
            );
        }
        let keyword = if k == 0 { "if" } else { "else if" };
        let _ = writeln!(
            s,
            "        {keyword} (slot == {k}u) {{ {flip}{}({var}, lo, hi); }}",
            slot.store()
        );
    }
    let _ = writeln!(s, "        outp[ob + {}u] = activeLanes;", out::ACTIVE / 4);
    let _ = writeln!(s, "        outp[ob + {}u] = lo;", out::RESULT_LO / 4);
    let _ = writeln!(s, "        outp[ob + {}u] = hi;", out::RESULT_HI / 4);
    let _ = writeln!(s, "        outp[ob + {}u].x = {MARKER}u;", out::WRITTEN / 4);
    s += "    }\n";
    s
}

/// Flips the lowest bit of the first component of `var`, a result in `slot`.
fn flip_expr(slot: ResultSlot, var: &str) -> String {
    let t = match slot {
        ResultSlot::Fixed(ResultKind::Bool) => return format!("!{var}"),
        ResultSlot::Fixed(ResultKind::Uint) => return format!("{var} ^ 1u"),
        ResultSlot::Fixed(ResultKind::Uvec4) => return format!("{var} ^ uvec4(1u, 0u, 0u, 0u)"),
        ResultSlot::Fixed(ResultKind::SameAsValue) => return var.into(),
        ResultSlot::Value(t) => t,
    };
    let sc = t.scalar_type();
    let flip1 = |x: &str| -> String {
        match sc {
            ScalarType::Bool => format!("!{x}"),
            ScalarType::F16 => {
                format!("unpackFloat2x16(packFloat2x16(f16vec2({x}, float16_t(0.0))) ^ 1u).x")
            }
            ScalarType::F32 => format!("uintBitsToFloat(floatBitsToUint({x}) ^ 1u)"),
            ScalarType::F64 => format!("packDouble2x32(unpackDouble2x32({x}) ^ uvec2(1u, 0u))"),
            ScalarType::I8
            | ScalarType::U8
            | ScalarType::I16
            | ScalarType::U16
            | ScalarType::I32
            | ScalarType::U32
            | ScalarType::I64
            | ScalarType::U64 => format!("{x} ^ {}(1)", sc.glsl()),
        }
    };
    if t.components() == 1 {
        flip1(var)
    } else {
        let parts: Vec<String> = (0..t.components())
            .map(|i| {
                let c = format!("{var}[{i}]");
                if i == 0 {
                    flip1(&c)
                } else {
                    c
                }
            })
            .collect();
        format!("{}({})", t.glsl(), parts.join(", "))
    }
}
