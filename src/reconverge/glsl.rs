//! Programs as GLSL compute shaders: one program per workgroup, many per shader.
//!
//! Workgroup `k` of a dispatch runs `programs[k]`. Every invocation first writes a header — its
//! `gl_SubgroupID`, `gl_SubgroupInvocationID`, number of records, `gl_SubgroupSize` — so that no
//! lane layout is assumed; then each recorded statement appends `(tag, value.xyzw)` to the
//! invocation's slice of the record buffer (the host pre-fills it with [`SENTINEL`], so a record
//! the device claims but never wrote is caught). The same buffer starts with the atomic counters,
//! [`COUNTERS`] per workgroup ([`counters_len`] words), then the records.
//!
//! The reconvergence model is requested as ../shared/TOOLCHAIN.md says: `[[subgroup_uniform_control_flow]]`
//! on `main` (GL_EXT_subgroup_uniform_control_flow) for SUCF, and the `MaximallyReconvergesKHR`
//! execution mode (6023) through GL_EXT_spirv_intrinsics for maximal reconvergence.

use crate::model::WorkgroupShape;
use crate::reconverge::exec::Mode;
use crate::reconverge::program::{
    Cond, Operand, Program, Selector, SgOp, Stmt, Trips, COUNTERS, REGS,
};
use std::fmt::Write;

/// Words of an invocation's header: subgroup id, lane, record count, subgroup size.
pub const HEADER: u32 = 4;
/// Words per record: tag and a `uvec4`.
pub const RECORD: u32 = 5;
/// What the record buffer is pre-filled with.
pub const SENTINEL: u32 = 0xDEAD_BEEF;

/// Words per invocation for `max_records` records (plus one overflow slot that absorbs records
/// past the limit, so an overlong run cannot write outside its slice).
pub fn stride(max_records: u32) -> u32 {
    HEADER + RECORD * (max_records + 1)
}

/// Words of counters at the start of the buffer for `programs` workgroups.
pub fn counters_len(programs: usize) -> usize {
    programs * COUNTERS
}

/// The GLSL of one shader running `programs` (workgroup `k` runs `programs[k]`) under `mode`, on
/// workgroups of `shape`, each invocation keeping at most `max_records` records.
///
/// ```
/// use lockstep::model::WorkgroupShape;
/// use lockstep::reconverge::{glsl::shader, seed001, Mode};
/// let src = shader(&[seed001::allocation_fixed(0xff)], Mode::Sucf,
///     WorkgroupShape::new(64, 1, 1).unwrap(), 16);
/// assert!(src.contains("void main() [[subgroup_uniform_control_flow]]"));
/// assert!(src.contains("subgroupBroadcastFirst"));
/// ```
pub fn shader(programs: &[Program], mode: Mode, shape: WorkgroupShape, max_records: u32) -> String {
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
    s += "// Counters (COUNTERS per workgroup), then the records (STRIDE words per invocation).\n";
    s += "layout(set = 0, binding = 0, std430) buffer Data { uint rec[]; };\n";
    let _ = writeln!(
        s,
        "const uint INVOCATIONS = {}u;\nconst uint STRIDE = {}u;\nconst uint MAX_RECORDS = {max_records}u;\nconst uint COUNTERS = {COUNTERS}u;",
        shape.invocations(),
        stride(max_records)
    );
    s += "uint recBase = 0u;\nuint outLoc = 0u;\n";
    for r in 0..REGS {
        let _ = writeln!(s, "uvec4 r{r} = uvec4(0u);");
    }
    s += r#"
// Appends (tag, v) to this invocation's records; records past MAX_RECORDS share one overflow slot.
void record(uint tag, uvec4 v) {
    uint p = recBase + 4u + min(outLoc, MAX_RECORDS) * 5u;
    rec[p] = tag;
    rec[p + 1u] = v.x;
    rec[p + 2u] = v.y;
    rec[p + 3u] = v.z;
    rec[p + 4u] = v.w;
    outLoc++;
    rec[recBase + 2u] = outLoc;
}

// Bit (i % 128) of a 128-bit mask.
bool bit128(uvec4 m, uint i) {
    uint j = i & 127u;
    return ((m[j >> 5u] >> (j & 31u)) & 1u) != 0u;
}
"#;
    for (k, p) in programs.iter().enumerate() {
        let _ = writeln!(s, "\n// ---- program {k} ----");
        for i in (0..p.functions.len()).rev() {
            let _ = writeln!(s, "void p{k}_f{i}() {{");
            let mut e = Emitter {
                out: &mut s,
                prog: k,
                loops: Vec::new(),
            };
            e.block(&p.functions[i], 1);
            s += "}\n";
        }
        let _ = writeln!(s, "void p{k}_main() {{");
        let mut e = Emitter {
            out: &mut s,
            prog: k,
            loops: Vec::new(),
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
        counters_len(programs.len())
    );
    s += "    rec[recBase] = gl_SubgroupID;\n";
    s += "    rec[recBase + 1u] = gl_SubgroupInvocationID;\n";
    s += "    rec[recBase + 2u] = 0u;\n";
    s += "    rec[recBase + 3u] = gl_SubgroupSize;\n";
    if programs.len() == 1 {
        s += "    p0_main();\n";
    } else {
        s += "    switch (gl_WorkGroupID.x) {\n";
        for k in 0..programs.len() {
            let _ = writeln!(s, "    case {k}u: p{k}_main(); break;");
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

    fn cond(&self, c: &Cond) -> String {
        match c {
            Cond::True => "true".into(),
            Cond::Mask(m) => format!("bit128({}, gl_LocalInvocationIndex)", hex128(*m)),
            Cond::Subgroups(m) => format!("((0x{m:x}u >> (gl_SubgroupID & 31u)) & 1u) != 0u"),
            Cond::LoopCount { outer, mask } => {
                format!(
                    "((0x{mask:x}u >> ({} & 31u)) & 1u) != 0u",
                    self.counter(*outer)
                )
            }
            Cond::Reg(r) => format!("r{r}.x != 0u"),
        }
    }

    fn operand(&self, o: &Operand) -> String {
        match *o {
            Operand::Const(c) => format!("{c}u"),
            Operand::Reg(r) => format!("r{r}.x"),
            Operand::Invocation => "gl_LocalInvocationIndex".into(),
            Operand::X => "gl_LocalInvocationID.x".into(),
            Operand::Y => "gl_LocalInvocationID.y".into(),
            Operand::SubgroupId => "gl_SubgroupID".into(),
            Operand::Lane => "gl_SubgroupInvocationID".into(),
            Operand::Scaled { mul, add } => {
                format!("(gl_LocalInvocationIndex * {mul}u + {add}u)")
            }
            Operand::Sum(a, b) => format!("(r{a}.x + r{b}.x)"),
        }
    }

    fn sgop(&self, op: &SgOp) -> String {
        let x = |e: String| format!("uvec4({e}, 0u, 0u, 0u)");
        match op {
            SgOp::Ballot(c) => format!("subgroupBallot({})", self.cond(c)),
            SgOp::Elect => x("uint(subgroupElect())".into()),
            SgOp::Any(c) => x(format!("uint(subgroupAny({}))", self.cond(c))),
            SgOp::BroadcastFirst(o) => x(format!("subgroupBroadcastFirst({})", self.operand(o))),
            SgOp::Add(o) => x(format!("subgroupAdd({})", self.operand(o))),
            SgOp::BitCount(r) => x(format!("subgroupBallotBitCount(r{r})")),
            SgOp::ExclusiveBitCount(r) => x(format!("subgroupBallotExclusiveBitCount(r{r})")),
            SgOp::ShuffleUp(o, d) => x(format!("subgroupShuffleUp({}, {d}u)", self.operand(o))),
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
                    Trips::Varying { salt, modulus } => {
                        format!("((gl_LocalInvocationIndex ^ {salt}u) % {modulus}u)")
                    }
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
                    Selector::Varying { salt, modulus } => {
                        format!("((gl_LocalInvocationIndex ^ {salt}u) % {modulus}u)")
                    }
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
                        "{{ uvec4 t = uvec4(atomicAdd(rec[gl_WorkGroupID.x * COUNTERS + {counter}u], {v}), 0u, 0u, 0u);{keep} record({tag}u, t); }} // #{tag}"
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
