//! Programs as GLSL compute shaders: one program per workgroup, many per shader.
//!
//! Workgroup `k` of a dispatch runs `programs[k]`. One buffer of `uvec4`s holds everything: first
//! one `uvec4` of atomic counters per workgroup ([`COUNTERS`](crate::reconverge::program::COUNTERS) of its components), then
//! [`RecordLayout::stride_words`] words per invocation. Every invocation first writes a header —
//! its `gl_SubgroupID`, `gl_SubgroupInvocationID` and `gl_SubgroupSize` — so no lane layout is
//! assumed; then each recorded statement appends one `uvec4(tag, value.xyz)` (plus `value.w` in a
//! second slot for subgroups larger than 96 lanes, whose ballots need it). The host pre-fills the
//! buffer with [`SENTINEL`], so a record the device never wrote, or one too many, is caught.
//!
//! [`parametric_shader`] writes the same code with every parameter of a program (its masks, salts
//! and operand constants, [`crate::reconverge::params`]) read from a second buffer instead, so that
//! consecutive programs of one shape share one copy of the code: a GPU's compile, the cost of a
//! campaign there, is paid once per shape.
//!
//! One store per record matters: llvmpipe's compile time grows quickly with the number of scatter
//! stores in a shader, and lavapipe is what CI runs on.
//!
//! The reconvergence model is requested as ../shared/TOOLCHAIN.md says: `[[subgroup_uniform_control_flow]]`
//! on `main` (GL_EXT_subgroup_uniform_control_flow) for SUCF, and the `MaximallyReconvergesKHR`
//! execution mode (6023) through GL_EXT_spirv_intrinsics for maximal reconvergence.

use crate::model::{info, ResultKind, WorkgroupShape};
use crate::reconverge::mode::Mode;
use crate::reconverge::program::{
    Cond, Input, Operand, Program, Selector, SgOp, Stmt, Trips, REGS,
};
use std::fmt::Write;

/// What the buffer is pre-filled with.
pub const SENTINEL: u32 = 0xDEAD_BEEF;
/// Words of counters per workgroup at the start of the buffer (one `uvec4`).
pub const COUNTER_WORDS: usize = 4;

/// Where an invocation's header and records are, in 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordLayout {
    /// records kept per invocation (one more slot absorbs any beyond)
    pub max_records: u32,
    /// a second `uvec4` per record for `value.w` (subgroups of more than 96 lanes)
    pub wide: bool,
}

impl RecordLayout {
    /// The layout for `max_records` records on a device with `subgroup_size` lanes.
    pub fn new(max_records: u32, subgroup_size: u32) -> RecordLayout {
        RecordLayout {
            max_records,
            wide: subgroup_size > 96,
        }
    }

    /// `uvec4` slots per record.
    pub fn slots_per_record(&self) -> u32 {
        1 + self.wide as u32
    }

    /// `uvec4` slots per invocation: the header, `max_records` records and the overflow slot.
    pub fn stride_slots(&self) -> u32 {
        1 + (self.max_records + 1) * self.slots_per_record()
    }

    /// Words per invocation.
    pub fn stride_words(&self) -> usize {
        self.stride_slots() as usize * 4
    }

    /// Offset (words, within an invocation's slice) of record `k`.
    pub fn record_words(&self, k: usize) -> usize {
        (1 + k * self.slots_per_record() as usize) * 4
    }

    /// Record `k` of an invocation's slice: the tag and the four words of the value.
    pub fn read(&self, slice: &[u32], k: usize) -> (u32, [u32; 4]) {
        let o = self.record_words(k);
        let w = if self.wide { slice[o + 4] } else { 0 };
        (slice[o], [slice[o + 1], slice[o + 2], slice[o + 3], w])
    }

    /// Writes record `k` (what a device does; for tests and synthetic devices).
    pub fn write(&self, slice: &mut [u32], k: usize, tag: u32, v: [u32; 4]) {
        let o = self.record_words(k);
        slice[o..o + 4].copy_from_slice(&[tag, v[0], v[1], v[2]]);
        if self.wide {
            slice[o + 4..o + 8].copy_from_slice(&[v[3], 0, 0, 0]);
        }
    }

    /// Words of the whole buffer for `programs` workgroups of `invocations` each.
    pub fn buffer_words(&self, programs: usize, invocations: usize) -> usize {
        programs * COUNTER_WORDS + programs * invocations * self.stride_words()
    }
}

/// The GLSL of one shader running `programs` (workgroup `k` runs `programs[k]`) under `mode`, on
/// workgroups of `shape`, with records laid out as `layout`.
///
/// ```
/// use lockstep::model::WorkgroupShape;
/// use lockstep::reconverge::{glsl::{shader, RecordLayout}, seed001, Mode};
/// let src = shader(&[seed001::allocation_fixed(0xff)], Mode::Sucf,
///     WorkgroupShape::new(64, 1, 1).unwrap(), RecordLayout::new(16, 32));
/// assert!(src.contains("void main() [[subgroup_uniform_control_flow]]"));
/// assert!(src.contains("subgroupBroadcastFirst"));
/// ```
pub fn shader(
    programs: &[Program],
    mode: Mode,
    shape: WorkgroupShape,
    layout: RecordLayout,
) -> String {
    let groups: Vec<Group> = programs
        .iter()
        .map(|p| Group {
            program: p.clone(),
            workgroups: 1,
        })
        .collect();
    emit(&groups, false, mode, shape, layout)
}

/// The GLSL of one shader running `programs` (workgroup `k` runs `programs[k]`) with their
/// parameters read from a buffer ([`crate::reconverge::params`]), and that buffer's words: each run
/// of consecutive programs of one shape shares one copy of the code. The buffer is binding 1: the
/// stride, then [`ParametricShader::stride`] words per workgroup.
///
/// ```
/// use lockstep::model::WorkgroupShape;
/// use lockstep::reconverge::{glsl::{parametric_shader, RecordLayout}, seed001, Mode};
/// let ps = [seed001::allocation_fixed(0xff), seed001::allocation_fixed(0xf0f0)];
/// let s = parametric_shader(&ps, Mode::Sucf, WorkgroupShape::new(64, 1, 1).unwrap(),
///     RecordLayout::new(16, 32));
/// // One copy of the code for the two masks, which are in the buffer.
/// assert_eq!(s.glsl.matches("void p0_main()").count(), 1);
/// assert!(!s.glsl.contains("p1_main"));
/// assert_eq!(s.params[0] as usize, s.stride);
/// assert_eq!(&s.params[1..5], &[0xff, 0, 0, 0]);
/// assert_eq!(&s.params[1 + s.stride..1 + s.stride + 4], &[0xf0f0, 0, 0, 0]);
/// ```
pub fn parametric_shader(
    programs: &[Program],
    mode: Mode,
    shape: WorkgroupShape,
    layout: RecordLayout,
) -> ParametricShader {
    let mut groups: Vec<Group> = Vec::new();
    let mut last_shape: Option<Program> = None;
    let mut words = Vec::with_capacity(programs.len());
    let mut stride = 0;
    for p in programs {
        let sh = p.shape();
        match groups.last_mut() {
            Some(g) if last_shape.as_ref() == Some(&sh) => g.workgroups += 1,
            _ => {
                let (slotted, n) = p.param_slots();
                stride = stride.max(n);
                groups.push(Group {
                    program: slotted,
                    workgroups: 1,
                });
                last_shape = Some(sh);
            }
        }
        words.push(p.param_words());
    }
    // P[0] is the stride: main reads it, so the buffer is in the shader's interface even where
    // no parameter read survives (a program without parameters, or with them only in dead code).
    let mut params = vec![0u32; 1 + programs.len() * stride];
    params[0] = stride as u32;
    for (k, w) in words.iter().enumerate() {
        params[1 + k * stride..1 + k * stride + w.len()].copy_from_slice(w);
    }
    ParametricShader {
        glsl: emit(&groups, true, mode, shape, layout),
        params,
        stride,
        shapes: groups.len(),
    }
}

/// A shader whose programs read their parameters from a buffer ([`parametric_shader`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParametricShader {
    /// the GLSL
    pub glsl: String,
    /// the parameter buffer (binding 1): the stride, then `stride` words per workgroup
    pub params: Vec<u32>,
    /// words per workgroup
    pub stride: usize,
    /// distinct shapes, i.e. copies of program code, in the shader
    pub shapes: usize,
}

/// Consecutive workgroups running one copy of a program's code.
struct Group {
    /// the program (with parameter slots in place of parameters, in a parametric shader)
    program: Program,
    /// how many workgroups run it
    workgroups: usize,
}

/// The shader text; `params`: parameters come from the buffer.
fn emit(
    groups: &[Group],
    params: bool,
    mode: Mode,
    shape: WorkgroupShape,
    layout: RecordLayout,
) -> String {
    let programs: usize = groups.iter().map(|g| g.workgroups).sum();
    let mut s = String::new();
    s += "#version 450\n";
    for e in [
        "GL_KHR_shader_subgroup_basic",
        "GL_KHR_shader_subgroup_vote",
        "GL_KHR_shader_subgroup_ballot",
        "GL_KHR_shader_subgroup_arithmetic",
        "GL_KHR_shader_subgroup_shuffle_relative",
    ] {
        let _ = writeln!(s, "#extension {e} : require");
    }
    match mode {
        Mode::Maximal => {
            s += "#extension GL_EXT_spirv_intrinsics : require\n";
            s += "// MaximallyReconvergesKHR = 6023 (SPV_KHR_maximal_reconvergence)\n";
            s += "spirv_execution_mode(extensions = [\"SPV_KHR_maximal_reconvergence\"], 6023);\n";
        }
        Mode::Sucf => s += "#extension GL_EXT_subgroup_uniform_control_flow : require\n",
        Mode::Base => {}
    }
    let _ = writeln!(
        s,
        "layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;",
        shape.x, shape.y, shape.z
    );
    s +=
        "// One uvec4 of counters per workgroup, then STRIDE uvec4s per invocation: a header and\n";
    s += "// the records.\n";
    s += "layout(set = 0, binding = 0, std430) buffer Data { uvec4 d[]; };\n";
    if params {
        s += "// P[0] words of parameters (masks, salts, operand constants) per workgroup, from\n";
        s += "// P[pb], in the order of the program's parameters.\n";
        s += "layout(set = 0, binding = 1, std430) readonly buffer Params { uint P[]; };\n";
        s += "uint pb = 0u;\n";
    }
    let _ = writeln!(
        s,
        "const uint INVOCATIONS = {}u;\nconst uint STRIDE = {}u;\nconst uint MAX_RECORDS = {}u;",
        shape.invocations(),
        layout.stride_slots(),
        layout.max_records
    );
    s += "uint recBase = 0u;\nuint outLoc = 0u;\n";
    for r in 0..REGS {
        let _ = writeln!(s, "uvec4 r{r} = uvec4(0u);");
    }
    let spr = layout.slots_per_record();
    s += "\n// Appends (tag, v); records past MAX_RECORDS share one overflow slot.\n";
    s += "void record(uint tag, uvec4 v) {\n";
    let _ = writeln!(
        s,
        "    uint p = recBase + 1u + min(outLoc, MAX_RECORDS) * {spr}u;"
    );
    s += "    d[p] = uvec4(tag, v.x, v.y, v.z);\n";
    if layout.wide {
        s += "    d[p + 1u] = uvec4(v.w, 0u, 0u, 0u);\n";
    }
    s += "    outLoc++;\n}\n";
    s += r#"
// Bit (i % 128) of a 128-bit mask.
bool bit128(uvec4 m, uint i) {
    uint j = i & 127u;
    return ((m[j >> 5u] >> (j & 31u)) & 1u) != 0u;
}
"#;
    for (k, g) in groups.iter().enumerate() {
        let p = &g.program;
        let _ = writeln!(s, "\n// ---- program {k} ----");
        for i in (0..p.functions.len()).rev() {
            let _ = writeln!(s, "void p{k}_f{i}() {{");
            let mut e = Emitter {
                out: &mut s,
                prog: k,
                loops: Vec::new(),
                params,
            };
            e.block(&p.functions[i], 1);
            s += "}\n";
        }
        let _ = writeln!(s, "void p{k}_main() {{");
        let mut e = Emitter {
            out: &mut s,
            prog: k,
            loops: Vec::new(),
            params,
        };
        e.block(&p.main, 1);
        s += "}\n";
    }
    s += "\nvoid main()";
    if mode == Mode::Sucf {
        s += " [[subgroup_uniform_control_flow]]";
    }
    s += " {\n";
    let _ = writeln!(
        s,
        "    recBase = {}u + (gl_WorkGroupID.x * INVOCATIONS + gl_LocalInvocationIndex) * STRIDE;",
        programs
    );
    s += "    d[recBase] = uvec4(gl_SubgroupID, gl_SubgroupInvocationID, gl_SubgroupSize, 0u);\n";
    if params {
        s += "    pb = 1u + gl_WorkGroupID.x * P[0];\n";
    }
    if groups.len() == 1 {
        s += "    p0_main();\n";
    } else {
        s += "    switch (gl_WorkGroupID.x) {\n";
        let mut w = 0;
        for (k, g) in groups.iter().enumerate() {
            let labels: Vec<String> = (w..w + g.workgroups)
                .map(|i| format!("case {i}u:"))
                .collect();
            let _ = writeln!(s, "    {} p{k}_main(); break;", labels.join(" "));
            w += g.workgroups;
        }
        s += "    default: break;\n    }\n";
    }
    s += "}\n";
    s
}

struct Emitter<'a> {
    out: &'a mut String,
    prog: usize,
    /// ids of the enclosing loops of the current function, innermost last
    loops: Vec<u32>,
    /// parameters are slots of the parameter buffer, not values
    params: bool,
}

fn hex128(m: u128) -> String {
    format!(
        "uvec4(0x{:x}u, 0x{:x}u, 0x{:x}u, 0x{:x}u)",
        m as u32,
        (m >> 32) as u32,
        (m >> 64) as u32,
        (m >> 96) as u32
    )
}

impl Emitter<'_> {
    fn counter(&self, outer: u8) -> String {
        let i = self.loops.len().saturating_sub(1 + outer as usize);
        format!("i{}", self.loops.get(i).copied().unwrap_or(0))
    }

    /// A parameter word: its value, or its read from the parameter buffer.
    fn param(&self, v: u32, hex: bool) -> String {
        match (self.params, hex) {
            (true, _) => format!("P[pb + {v}u]"),
            (false, true) => format!("0x{v:x}u"),
            (false, false) => format!("{v}u"),
        }
    }

    fn cond(&self, c: &Cond) -> String {
        match c {
            Cond::True => "true".into(),
            Cond::Mask(m) if self.params => {
                let w: Vec<String> = (0..4).map(|i| self.param(*m as u32 + i, true)).collect();
                format!("bit128(uvec4({}), gl_LocalInvocationIndex)", w.join(", "))
            }
            Cond::Mask(m) => format!("bit128({}, gl_LocalInvocationIndex)", hex128(*m)),
            Cond::Subgroups(m) => format!(
                "(({} >> (gl_SubgroupID & 31u)) & 1u) != 0u",
                self.param(*m, true)
            ),
            Cond::LoopCount { outer, mask } => {
                format!(
                    "(({} >> ({} & 31u)) & 1u) != 0u",
                    self.param(*mask, true),
                    self.counter(*outer)
                )
            }
            Cond::Reg(r) => format!("r{r}.x != 0u"),
        }
    }

    fn operand(&self, o: &Operand) -> String {
        match *o {
            Operand::Const(c) => self.param(c, false),
            Operand::Reg(r) => format!("r{r}.x"),
            Operand::Invocation => "gl_LocalInvocationIndex".into(),
            Operand::X => "gl_LocalInvocationID.x".into(),
            Operand::Y => "gl_LocalInvocationID.y".into(),
            Operand::SubgroupId => "gl_SubgroupID".into(),
            Operand::Lane => "gl_SubgroupInvocationID".into(),
            Operand::Scaled { mul, add } => format!(
                "(gl_LocalInvocationIndex * {} + {})",
                self.param(mul, false),
                self.param(add, false)
            ),
            Operand::Sum(a, b) => format!("(r{a}.x + r{b}.x)"),
        }
    }

    /// The operation as a `uvec4` expression: the catalogue's built-in applied to its input, its
    /// result widened as the catalogue's result kind says.
    fn sgop(&self, op: &SgOp) -> String {
        let name = op.glsl_name();
        let call = match &op.input {
            Input::Nothing => format!("{name}()"),
            Input::Cond(c) => format!("{name}({})", self.cond(c)),
            Input::Value(o) => format!("{name}({})", self.operand(o)),
            Input::Shifted(o, d) => format!("{name}({}, {d}u)", self.operand(o)),
            Input::Ballot(r) => format!("{name}(r{r})"),
        };
        match info(op.op).result {
            ResultKind::Uvec4 => call,
            ResultKind::Bool => format!("uvec4(uint({call}), 0u, 0u, 0u)"),
            ResultKind::Uint | ResultKind::SameAsValue => format!("uvec4({call}, 0u, 0u, 0u)"),
        }
    }

    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn block(&mut self, b: &[Stmt], depth: usize) {
        for s in b {
            self.stmt(s, depth);
            // Statements after an unconditional jump are dead; the executor never runs them and
            // emitting them would only add unreachable blocks.
            if matches!(s, Stmt::Break | Stmt::Continue | Stmt::Return) {
                break;
            }
        }
    }

    fn stmt(&mut self, s: &Stmt, d: usize) {
        match s {
            Stmt::If {
                id,
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.cond(cond);
                self.line(d, &format!("if ({c}) {{ // #{id}"));
                self.block(then_branch, d + 1);
                if else_branch.is_empty() {
                    self.line(d, "}");
                } else {
                    self.line(d, "} else {");
                    self.block(else_branch, d + 1);
                    self.line(d, "}");
                }
            }
            Stmt::Loop { id, trips, body } => {
                let t = match *trips {
                    Trips::Uniform(n) => format!("{n}u"),
                    Trips::Varying { salt, modulus } => format!(
                        "((gl_LocalInvocationIndex ^ {}) % {modulus}u)",
                        self.param(salt, false)
                    ),
                };
                self.line(
                    d,
                    &format!("for (uint i{id} = 0u; i{id} < {t}; i{id}++) {{ // #{id}"),
                );
                self.loops.push(*id);
                self.block(body, d + 1);
                self.loops.pop();
                self.line(d, "}");
            }
            Stmt::Switch {
                id,
                selector,
                cases,
                default,
            } => {
                let sel = match *selector {
                    Selector::Varying { salt, modulus } => format!(
                        "((gl_LocalInvocationIndex ^ {}) % {modulus}u)",
                        self.param(salt, false)
                    ),
                    Selector::Subgroup { modulus } => format!("(gl_SubgroupID % {modulus}u)"),
                    Selector::LoopCount { outer, modulus } => {
                        format!("({} % {modulus}u)", self.counter(outer))
                    }
                };
                self.line(d, &format!("switch ({sel}) {{ // #{id}"));
                for c in cases {
                    let labels: Vec<String> =
                        c.labels.iter().map(|l| format!("case {l}u:")).collect();
                    self.line(d, &format!("{} {{", labels.join(" ")));
                    self.block(&c.body, d + 1);
                    self.line(d, "} break;");
                }
                self.line(d, "default: {");
                self.block(default, d + 1);
                self.line(d, "} break;");
                self.line(d, "}");
            }
            Stmt::Break => self.line(d, "break;"),
            Stmt::Continue => self.line(d, "continue;"),
            Stmt::Return => self.line(d, "return;"),
            Stmt::Call { id, function } => {
                let k = self.prog;
                self.line(d, &format!("p{k}_f{function}(); // #{id}"));
            }
            Stmt::Op { tag, op, dst } => {
                let e = self.sgop(op);
                let keep = dst.map_or(String::new(), |r| format!(" r{r} = t;"));
                self.line(
                    d,
                    &format!("{{ uvec4 t = {e};{keep} record({tag}u, t); }} // #{tag}"),
                );
            }
            Stmt::Atomic {
                tag,
                counter,
                value,
                dst,
            } => {
                let v = self.operand(value);
                let keep = dst.map_or(String::new(), |r| format!(" r{r} = t;"));
                self.line(
                    d,
                    &format!(
                        "{{ uvec4 t = uvec4(atomicAdd(d[gl_WorkGroupID.x].{}, {v}), 0u, 0u, 0u);{keep} record({tag}u, t); }} // #{tag}",
                        ["x", "y", "z", "w"][*counter as usize % 4]
                    ),
                );
            }
            Stmt::Set { dst, value } => {
                let v = self.operand(value);
                self.line(d, &format!("r{dst} = uvec4({v}, 0u, 0u, 0u);"));
            }
            Stmt::Store { tag, value } => {
                let v = self.operand(value);
                self.line(
                    d,
                    &format!("record({tag}u, uvec4({v}, 0u, 0u, 0u)); // #{tag}"),
                );
            }
        }
    }
}
