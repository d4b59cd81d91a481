//! The per-category pages: `docs/semantics/<category>.md`.

use crate::docs::examples::{illustrations, undefined_cases, Example, Illustration, UndefinedCase};
use crate::docs::glsl::{extended_gen_types, glsl_signatures};
use crate::docs::markdown::{cell, lane_table, table};
use crate::docs::uses::uses;
use crate::docs::GENERATED_NOTICE;
use crate::model::{
    catalogue, lookup, BinOp, Category, LaneOrder, Op, OpInfo, ResultKind, SubgroupSize, Value,
    ValueType, WorkgroupLayout, WorkgroupShape,
};
use std::fmt::Write;

/// The page's title.
pub fn title(c: Category) -> &'static str {
    match c {
        Category::Basic => "Basic: built-in variables and subgroupElect",
        Category::Vote => "Vote: subgroupAll, subgroupAny, subgroupAllEqual",
        Category::Ballot => "Ballot: ballots, bit counts and broadcasts",
        Category::Arithmetic => "Arithmetic: reductions and scans",
        Category::Shuffle => "Shuffle: subgroupShuffle, subgroupShuffleXor",
        Category::ShuffleRelative => "Shuffle relative: subgroupShuffleUp, subgroupShuffleDown",
        Category::Clustered => "Clustered reductions",
        Category::Quad => "Quad: broadcast and swaps within groups of 4 lanes",
        Category::Rotate => "Rotate: subgroupRotate, subgroupClusteredRotate",
    }
}

/// What every page of the category has to say before its operations (with the sections it cites).
fn intro(c: Category) -> &'static str {
    match c {
        Category::Basic => "\
The built-in variables of a subgroup (GL_KHR_shader_subgroup.txt, 7.1) and `subgroupElect`
(8.18). A subgroup's lanes are *active* or *inactive* (3.8): lanes that did not take the branch the
subgroup diverged on, and in compute shaders the tail lanes of a workgroup whose size is not a
multiple of the subgroup size, are inactive. An inactive lane executes nothing and has no result
(`-` in the tables). The `gl_Subgroup*Mask` variables are uvec4 bit masks (lane i = bit i % 32 of
component i / 32) whose bits at and above gl_SubgroupSize are 0; they need the ballot feature.",
        Category::Vote => "\
Votes over the *active* lanes (GL_KHR_shader_subgroup.txt, 8.18): an inactive lane's value takes no
part, which is why the divergent tables below can differ from the full ones.",
        Category::Ballot => "\
A ballot is a `uvec4` with one bit per lane: lane i is bit i % 32 of component i / 32
(GL_KHR_shader_subgroup.txt, 3.8). `subgroupBallot` sets the bit of every active lane whose value is
true and leaves the bits of inactive lanes 0 (8.18). The bit operations take a ballot that must be
the same in every lane and read only its low gl_SubgroupSize bits: bits beyond are ignored (3.8). The
tables show ballots and results of type uvec4 as one hex number. `subgroupBroadcast` and
`subgroupBroadcastFirst` move values; they move bits exactly (NaN payloads and -0.0 included).",
        Category::Arithmetic => "\
Reductions (`subgroup<Op>`), inclusive scans (`subgroupInclusive<Op>`) and exclusive scans
(`subgroupExclusive<Op>`) over the *active* lanes, in increasing lane order
(GL_KHR_shader_subgroup.txt, 3.8): over n active lanes with values x(0) … x(n-1), the inclusive scan
is [x(0), x(0) op x(1), …] and the exclusive scan [I(), x(0), …], where I() is the identity below.
Add, Mul, Min and Max take numbers; And, Or and Xor take integers and bools (8.18). Integer
arithmetic wraps. The order of float additions and multiplications is implementation-defined (8.18,
\"the method … is implementation defined\"), so a device may differ from the model's increasing-lane
order by rounding. Min and Max ignore a NaN operand; a result computed only from NaNs is undefined
(3.8). Vectors work component by component.",
        Category::Shuffle => "\
Reads of another lane's value by its id (GL_KHR_shader_subgroup.txt, 8.18). Unlike
`subgroupBroadcast`, the id may differ from lane to lane. The value moves bit for bit.",
        Category::ShuffleRelative => "\
Reads of the value `delta` lanes below (`subgroupShuffleUp`) or above (`subgroupShuffleDown`)
(GL_KHR_shader_subgroup.txt, 8.18). Nothing wraps around: reading below lane 0 or past the last lane
is undefined, as is reading an inactive lane.",
        Category::Clustered => "\
The seven arithmetic operations reduced over *clusters*: lanes [x, x+n-1] with x a multiple of the
cluster size n (GL_KHR_shader_subgroup.txt, 3.8). Only the active lanes of a cluster contribute; a
cluster size must be a constant power of two, at least 1, and a cluster size larger than
gl_SubgroupSize is undefined behaviour — the model rejects it before evaluating (see
[undefined.md](undefined.md#rejected-before-evaluation)). The tables use 16 lanes in clusters of 4;
`subgroupClusteredAdd` also shows the spec's worked example.",
        Category::Quad => "\
Operations within *quads*, the clusters of 4 lanes (GL_KHR_shader_subgroup.txt, 3.8). In fragment
shaders a quad is a 2×2 block of pixels:

```
0 | 1
--|--
2 | 3
```

so a horizontal swap exchanges lanes 0↔1 and 2↔3, a vertical swap 0↔2 and 1↔3, a diagonal swap
0↔3 and 1↔2 (8.18). Reading an inactive lane is undefined (8.18 for `subgroupQuadBroadcast`; the
SPIR-V definition of OpGroupNonUniformQuadSwap for the swaps). Values move bit for bit.",
        Category::Rotate => "\
`subgroupRotate(value, delta)` returns the value of lane (id + delta) mod gl_SubgroupSize
(GL_KHR_shader_subgroup_rotate.txt, 8.18); `subgroupClusteredRotate` rotates within clusters of
`clusterSize` lanes. In both, the source lane is ((id + delta) & (G − 1)) + (id & ~(G − 1)) with G the
cluster or subgroup size (SPV_KHR_subgroup_rotate, OpGroupNonUniformRotateKHR). `delta` is unsigned
and must be dynamically uniform; the result is undefined only when the selected lane is inactive —
rotation never leaves the subgroup. Values move bit for bit.",
    }
}

/// GitHub's anchor of a heading (lower case, spaces to hyphens, punctuation dropped).
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The link from one semantics page to an op's section: `shuffle-relative.md#subgroupshuffledown`.
pub fn op_link(op: &OpInfo) -> String {
    format!("{}.md#{}", op.category.name(), anchor(&op.glsl))
}

/// Renders `docs/semantics/<category>.md`.
pub fn category_page(c: Category) -> String {
    let ops: Vec<&'static OpInfo> = catalogue().iter().filter(|o| o.category == c).collect();
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", title(c));
    let _ = writeln!(s, "{GENERATED_NOTICE}\n");
    let _ = writeln!(
        s,
        "GLSL extension: `{}`. Every table on this page is the output of the reference model \
         (`src/model`); each has the `lockstep eval` command that reproduces it. Inactive lanes are \
         `-`, undefined results `undef` with the reason under the table.\n",
        c.glsl_extension()
    );
    let _ = writeln!(s, "{}\n", intro(c));
    if c == Category::Arithmetic {
        s += &identity_section();
    }
    s += &contents(&ops);
    for op in &ops {
        s += &op_section(op);
    }
    let ex = super::kernels::examples_using(c);
    if !ex.is_empty() {
        let _ = writeln!(s, "## Runnable examples\n");
        let _ = writeln!(
            s,
            "Kernels in [`examples/`](../../examples/) that use this category, each a `.comp` for \
             `lockstep run` and an `.amber` script with the same shader (model and device; see \
             [docs/interpreter.md](../interpreter.md)):\n"
        );
        for (name, ops) in ex {
            let ops: Vec<String> = ops.iter().map(|o| format!("`{o}`")).collect();
            let _ = writeln!(
                s,
                "- [`{name}.comp`](../../examples/{name}.comp): {}",
                ops.join(", ")
            );
        }
        s.push('\n');
    }
    let us = uses(c);
    if !us.is_empty() {
        let _ = writeln!(s, "## GLSL in use\n");
        for u in us {
            let _ = writeln!(s, "### {}\n", u.title);
            let _ = writeln!(s, "From {}. {}\n", u.source, u.comment);
            let _ = writeln!(s, "```glsl\n{}\n```\n", u.code);
        }
    }
    s.trim_end().to_string() + "\n"
}

fn contents(ops: &[&'static OpInfo]) -> String {
    let header: Vec<String> = [
        "GLSL",
        "`lockstep` name",
        "arguments",
        "types",
        "result",
        "feature",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    let rows: Vec<Vec<String>> = ops
        .iter()
        .map(|o| {
            let args: Vec<String> = o
                .args
                .iter()
                .map(|a| {
                    if a.uniform() {
                        a.name().to_string()
                    } else {
                        format!("{} (per lane)", a.name())
                    }
                })
                .collect();
            vec![
                format!("[`{}`](#{})", o.glsl, anchor(&o.glsl)),
                format!("`{}`", o.name),
                if args.is_empty() {
                    "-".into()
                } else {
                    args.join(", ")
                },
                o.types.short().to_string(),
                result_name(o),
                o.features
                    .iter()
                    .map(|f| format!("`{}`", f.vulkan_name()))
                    .collect::<Vec<_>>()
                    .join(" + "),
            ]
        })
        .collect();
    table(&header, &rows, false) + "\n"
}

fn result_name(o: &OpInfo) -> String {
    match o.result {
        ResultKind::SameAsValue => "value's type".into(),
        ResultKind::Bool => "bool".into(),
        ResultKind::Uint => "uint".into(),
        ResultKind::Uvec4 => "uvec4".into(),
    }
}

fn sentence(rule: &str) -> String {
    let mut c = rule.chars();
    let mut s = match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    };
    if !s.ends_with('.') {
        s.push('.');
    }
    s
}

fn op_section(op: &'static OpInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## {}\n", op.glsl);
    let mut glsl = glsl_signatures(op).join("\n");
    let ext = extended_gen_types(op.types);
    if !ext.is_empty() {
        glsl += &format!(
            "\n// also {} with GL_EXT_shader_subgroup_extended_types_*",
            ext.join(", ")
        );
    }
    let _ = writeln!(s, "```glsl\n{glsl}\n```\n");
    let _ = writeln!(
        s,
        "`lockstep` name `{}` · needs {} · types: {}\n",
        op.name,
        op.features
            .iter()
            .map(|f| format!("`{}`", f.vulkan_name()))
            .collect::<Vec<_>>()
            .join(" + "),
        op.types.describe()
    );
    let _ = writeln!(s, "**Rule** ({}): {}\n", op.spec, sentence(&op.rule));
    if op.is_workgroup_level() {
        s += &workgroup_section(op);
        return s;
    }
    let ills = illustrations(op);
    for ill in &ills {
        s += &illustration(ill, 3);
    }
    s += &undefined_section(op, &ills);
    s
}

fn illustration(ill: &Illustration, level: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} {}\n", "#".repeat(level), ill.title);
    if let Some(n) = &ill.note {
        let _ = writeln!(s, "{n}\n");
    }
    s += &example_block(&ill.example);
    s
}

/// Settings line, table and command of one example.
pub fn example_block(ex: &Example) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", ex.settings());
    match ex.evaluate() {
        Ok(out) => s += &lane_table(ex, &out),
        // Not reachable for the inputs chosen in src/docs/examples.rs (a test evaluates them all);
        // printed rather than hidden if it ever happens.
        Err(e) => s += &format!("The model rejects this example: {e}\n"),
    }
    let _ = writeln!(s, "\n```sh\n{}\n```\n", ex.command());
    s
}

fn undefined_section(op: &'static OpInfo, ills: &[Illustration]) -> String {
    let cases = undefined_cases(op);
    let mut s = String::from("### Undefined cases\n\n");
    if cases.is_empty() {
        s += "None: for every valid call the spec defines the result of every active lane.\n\n";
        return s;
    }
    let header: Vec<String> = ["reason", "when", "rule from", "example"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            let example = match c.shown_in {
                Some(i) => format!(
                    "{} table above, lane {}: {}",
                    ills[i].title, c.lane, c.reason
                ),
                None => format!("below, lane {}: {}", c.lane, c.reason),
            };
            vec![
                format!("`{}`", c.key),
                cell(c.reason.doc().rule),
                cell(&(c.reason.doc().source)(op)),
                cell(&example),
            ]
        })
        .collect();
    s += &table(&header, &rows, false);
    s.push('\n');
    for c in cases.iter().filter(|c| c.shown_in.is_none()) {
        s += &undefined_example(c);
    }
    s
}

fn undefined_example(c: &UndefinedCase) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#### Example: `{}`\n", c.key);
    s += &example_block(&c.example);
    s
}

/// The identity table of GL_KHR_shader_subgroup.txt, 3.8, evaluated: each cell is the exclusive
/// scan's result in the only active lane.
fn identity_section() -> String {
    let types: [(&str, &str); 5] = [
        ("float (genType)", "f32"),
        ("double (genDType)", "f64"),
        ("int (genIType)", "i32"),
        ("uint (genUType)", "u32"),
        ("bool (genBType)", "bool"),
    ];
    let mut s = String::from(
        "### Identities\n\nI() of the exclusive scans (GL_KHR_shader_subgroup.txt, 3.8, identity table), \
         evaluated: each cell is the model's `subgroupExclusive<Op>` in lane 0 with lane 0 the only \
         active lane (`lockstep eval exclusive_<op> --size 1 --type T`). `-`: the op does not take \
         the type.\n\n",
    );
    let header: Vec<String> = std::iter::once("op".to_string())
        .chain(types.iter().map(|t| t.0.to_string()))
        .collect();
    let size = SubgroupSize::new(1).expect("valid size");
    let rows: Vec<Vec<String>> = BinOp::ALL
        .iter()
        .map(|b| {
            let op =
                lookup(&format!("exclusive_{}", b.name())).expect("catalogue has exclusive scans");
            let mut row = vec![b.glsl().to_string()];
            for (_, t) in types {
                let ty: ValueType = t.parse().expect("valid type name");
                if !op.accepts(ty) {
                    row.push("-".into());
                    continue;
                }
                let v = Value::parse(ty, if t == "bool" { "false" } else { "0" })
                    .expect("valid literal");
                let ex = Example {
                    op,
                    size,
                    active: size.full_mask(),
                    ty: Some(ty),
                    values: vec![v],
                    args: Default::default(),
                };
                row.push(match ex.evaluate() {
                    Ok(out) => crate::docs::markdown::outcome(&out[0]),
                    Err(e) => format!("error: {e}"),
                });
            }
            row
        })
        .collect();
    s += &table(&header, &rows, true);
    s.push('\n');
    s
}

/// The workgroup used to show gl_NumSubgroups and gl_SubgroupID: 6×2 invocations in subgroups of 8,
/// so the second subgroup is partial.
pub fn workgroup_example() -> (WorkgroupShape, SubgroupSize) {
    (
        WorkgroupShape::new(6, 2, 1).expect("valid shape"),
        SubgroupSize::new(8).expect("valid size"),
    )
}

fn workgroup_section(op: &'static OpInfo) -> String {
    let (shape, size) = workgroup_example();
    let mut s = String::new();
    if op.op == Op::NumSubgroups {
        let _ = writeln!(
            s,
            "At least 1 and uniform across the workgroup (7.1). The {shape} workgroup of \
             [gl_SubgroupID](#gl_subgroupid) below, {} invocations in subgroups of {size}, under each \
             layout:\n",
            shape.invocations()
        );
        let header: Vec<String> = ["layout", "gl_NumSubgroups", "command"]
            .iter()
            .map(|h| h.to_string())
            .collect();
        let rows: Vec<Vec<String>> = LaneOrder::distinct_for(shape, size)
            .into_iter()
            .filter_map(|layout| {
                let w = WorkgroupLayout::new(shape, size, layout).ok()?;
                Some(vec![
                    format!("`{layout}`"),
                    w.num_subgroups().to_string(),
                    format!("`{}`", workgroup_command(op, shape, size, layout)),
                ])
            })
            .collect();
        s += &table(&header, &rows, false);
        s.push('\n');
        return s;
    }
    let _ = writeln!(
        s,
        "Vulkan does not say which local invocations share a subgroup (specs README, \"Layout\"), so \
         the model takes the *layout* as a parameter. The {shape} workgroup in subgroups of {size}, \
         under every layout that places it differently: each cell is the local invocation id (x,y) \
         at that subgroup and lane; `-` marks lanes of the partial last subgroup that hold no \
         invocation (inactive).\n"
    );
    for layout in LaneOrder::distinct_for(shape, size) {
        let Ok(w) = WorkgroupLayout::new(shape, size, layout) else {
            continue;
        };
        let _ = writeln!(
            s,
            "#### Layout `{layout}`: gl_NumSubgroups = {}\n",
            w.num_subgroups()
        );
        let header: Vec<String> = std::iter::once("gl_SubgroupID \\ lane".to_string())
            .chain((0..size.get()).map(|l| l.to_string()))
            .collect();
        let rows: Vec<Vec<String>> = (0..w.num_subgroups())
            .map(|g| {
                std::iter::once(g.to_string())
                    .chain((0..size.get()).map(|l| match w.invocation(g, l) {
                        Some(i) => {
                            let id = shape.local_id(i);
                            format!("{},{}", id[0], id[1])
                        }
                        None => "-".into(),
                    }))
                    .collect()
            })
            .collect();
        s += &table(&header, &rows, true);
        let _ = writeln!(
            s,
            "\n```sh\n{}\n```\n",
            workgroup_command(op, shape, size, layout)
        );
    }
    s
}

/// The `lockstep eval` command of a workgroup built-in.
pub fn workgroup_command(
    op: &OpInfo,
    shape: WorkgroupShape,
    size: SubgroupSize,
    layout: LaneOrder,
) -> String {
    let mut c = format!(
        "lockstep eval {} --size {size} --workgroup {},{},{}",
        op.name, shape.x, shape.y, shape.z
    );
    if layout != LaneOrder::ROW_MAJOR {
        c += &format!(" --layout {layout}");
    }
    c
}
