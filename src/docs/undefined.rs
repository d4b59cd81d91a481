//! `docs/semantics/undefined.md`: every undefined case in one table, what the model rejects before
//! evaluating, and what the devices we ran returned (from the conformance reports).

use crate::docs::examples::{undefined_cases, UndefinedCase};
use crate::docs::markdown::{cell, table};
use crate::docs::pages::{anchor, op_link};
use crate::docs::reports::{label, percent, sentence, LoadedReport};
use crate::docs::GENERATED_NOTICE;
use crate::model::{catalogue, lookup, Args, LaneArg, OpCall, OpInfo, SubgroupSize};
use std::fmt::Write;

/// A call the model refuses to build because the spec makes it undefined behaviour (or not
/// expressible), with the rule it breaks.
struct Rejected {
    op: &'static str,
    size: u64,
    args: Args,
    input: &'static str,
    rule: &'static str,
}

fn rejected() -> Vec<Rejected> {
    vec![
        Rejected {
            op: "clustered_add",
            size: 8,
            args: Args { cluster: Some(16), ..Args::default() },
            input: "clusterSize 16 > gl_SubgroupSize 8",
            rule: "GL_KHR_shader_subgroup.txt, 3.8: \"Undefined behavior will occur if a \
                subgroupClustered<op>() operation is executed with a <clusterSize> that is greater than \
                <gl_SubgroupSize>\"",
        },
        Rejected {
            op: "clustered_add",
            size: 8,
            args: Args { cluster: Some(3), ..Args::default() },
            input: "clusterSize 3",
            rule: "GL_KHR_shader_subgroup.txt, 3.8: clusterSize is a constant, at least 1, a power of 2",
        },
        Rejected {
            op: "clustered_rotate",
            size: 8,
            args: Args {
                delta: Some(LaneArg::Uniform(1)),
                cluster: Some(16),
                ..Args::default()
            },
            input: "clusterSize 16 > gl_SubgroupSize 8",
            rule: "SPV_KHR_subgroup_rotate: \"If 'ClusterSize' is greater than the declared \
                SubGroupSize, executing this instruction results in undefined behavior\"",
        },
        Rejected {
            op: "quad_broadcast",
            size: 8,
            args: Args { id: Some(LaneArg::Uniform(4)), ..Args::default() },
            input: "id 4",
            rule: "GL_KHR_shader_subgroup.txt, 8.18: id is an integral constant expression (SPIR-V ≤ \
                1.4) or dynamically uniform within the quad, and for id ≥ 4 \"an undefined value is \
                returned\" — an undefined value, not undefined behaviour; the model rejects the call \
                all the same (a quad has lanes 0..3 only)",
        },
        Rejected {
            op: "broadcast",
            size: 8,
            args: Args {
                id: Some(LaneArg::PerLane((0..8).rev().collect())),
                ..Args::default()
            },
            input: "a different id in each lane",
            rule: "GL_KHR_shader_subgroup.txt, 8.18: id must be an integral constant expression \
                (SPIR-V ≤ 1.4) or dynamically uniform",
        },
        Rejected {
            op: "rotate",
            size: 8,
            args: Args {
                delta: Some(LaneArg::PerLane((0..8).collect())),
                ..Args::default()
            },
            input: "a different delta in each lane",
            rule: "GL_KHR_shader_subgroup_rotate.txt, 8.18: \"<delta> must be dynamically uniform \
                within the calling subgroup\"",
        },
    ]
}

fn rejected_section() -> String {
    let mut s = String::from(
        "## Rejected before evaluation\n\n\
         Some inputs make the whole call undefined behaviour, not one lane's result. The model does not \
         evaluate them: building the call fails with an error that names the rule (these messages are \
         the model's own). `subgroupInverseBallot` needs the same ballot in every active lane \
         (GL_KHR_shader_subgroup.txt, 8.18); the model takes one ballot per call, so a non-uniform one \
         cannot be written down.\n\n",
    );
    let header: Vec<String> = ["op", "input", "rule", "the model says"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    let rows: Vec<Vec<String>> = rejected()
        .into_iter()
        .filter_map(|r| {
            let op = lookup(r.op).ok()?;
            let size = SubgroupSize::new(r.size).ok()?;
            let said = match OpCall::new(op, size, r.args) {
                Err(e) => e.to_string(),
                Ok(_) => "(accepted: the model evaluates it)".to_string(),
            };
            Some(vec![
                format!("[`{}`]({})", op.glsl, op_link(op)),
                cell(r.input),
                cell(r.rule),
                cell(&said),
            ])
        })
        .collect();
    s += &table(&header, &rows, false);
    s.push('\n');
    s
}

fn short_pattern(p: &str) -> &str {
    match p {
        "own_value" => "own value",
        "source_value" => "source's value",
        "zero" => "zero",
        "identity" => "identity",
        "other" => "other",
        p => p,
    }
}

/// "llvmpipe: own value 97%, zero 3%" for one report and (op, reason), if the report has it.
fn observed_cell(r: &LoadedReport, op: &str, key: &str) -> Option<String> {
    let u = r
        .report
        .undefined_observed
        .iter()
        .find(|u| u.op == op && u.reason == key)?;
    let mut pats: Vec<_> = u.patterns.iter().filter(|p| p.lanes > 0).collect();
    pats.sort_by_key(|p| std::cmp::Reverse(p.lanes));
    let what: Vec<String> = pats
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                short_pattern(&p.pattern),
                percent(p.lanes, u.lanes)
            )
        })
        .collect();
    Some(format!(
        "[{}](#{}): {}",
        r.report.device.name,
        anchor(&device_heading(r)),
        if what.is_empty() {
            "none observed".to_string()
        } else {
            what.join(", ")
        }
    ))
}

fn device_heading(r: &LoadedReport) -> String {
    label(&r.report)
}

fn case_row(op: &'static OpInfo, c: &UndefinedCase, reports: &[LoadedReport]) -> Vec<String> {
    let mut row = vec![
        format!("[`{}`]({})", op.glsl, op_link(op)),
        format!("`{}`", c.key),
        cell(&format!(
            "{} ({})",
            c.reason.doc().rule,
            (c.reason.doc().source)(op)
        )),
        cell(&format!(
            "`{}` → lane {}: {}",
            c.example.command(),
            c.lane,
            c.reason
        )),
    ];
    if !reports.is_empty() {
        let seen: Vec<String> = reports
            .iter()
            .filter_map(|r| observed_cell(r, &op.name, c.key))
            .collect();
        row.push(if seen.is_empty() {
            "-".into()
        } else {
            cell(&seen.join("; "))
        });
    }
    row
}

fn devices_section(reports: &[LoadedReport]) -> String {
    let mut s = String::from("## What devices returned\n\n");
    if reports.is_empty() {
        s += "No conformance report yet. This section is rendered from `docs/results/*.json`, one \
              report per device and run: write one with `lockstep conform --json \
              docs/results/DEVICE-DATE.json`, then regenerate with `lockstep docs --out docs/semantics`.\n";
        return s;
    }
    s += "What each device returned in the lanes whose result is undefined, from the conformance \
          reports in `docs/results/`. A device may return anything there; these are observations of \
          one driver on one date, not promises. Patterns: *own value* — the lane's own input; \
          *source's value* — the value the named source lane held although inactive; *zero* — all \
          bits 0; *identity* — the operation's identity; *other* — anything else.\n\n";
    for r in reports {
        let rep = &r.report;
        let _ = writeln!(s, "### {}\n", device_heading(r));
        let mut facts = Vec::new();
        if let Some(n) = rep.device.subgroup_size {
            facts.push(format!("subgroup size {n}"));
        }
        facts.push(format!("report [`{0}`](../results/{0})", r.file));
        if !rep.command.is_empty() {
            facts.push(format!("command `{}`", rep.command));
        }
        if let Some(sum) = summary_line(&rep.summary) {
            facts.push(format!("summary: {sum}"));
        }
        let _ = writeln!(s, "{}\n", facts.join(" · "));
        if rep.undefined_observed.is_empty() {
            s += "The report lists no undefined lanes.\n\n";
            continue;
        }
        for u in &rep.undefined_observed {
            let _ = writeln!(s, "- {}", sentence(rep, u));
        }
        s.push('\n');
        let patterns = ["own_value", "source_value", "zero", "identity", "other"];
        let header: Vec<String> = ["op", "reason", "undefined lanes"]
            .iter()
            .map(|h| h.to_string())
            .chain(patterns.iter().map(|p| short_pattern(p).to_string()))
            .collect();
        let rows: Vec<Vec<String>> = rep
            .undefined_observed
            .iter()
            .map(|u| {
                let op = match lookup(&u.op) {
                    Ok(info) => format!("[`{}`]({})", info.glsl, op_link(info)),
                    Err(_) => format!("`{}`", u.op),
                };
                let mut row = vec![op, format!("`{}`", u.reason), u.lanes.to_string()];
                for p in patterns {
                    let n: u64 = u
                        .patterns
                        .iter()
                        .filter(|x| x.pattern == p)
                        .map(|x| x.lanes)
                        .sum();
                    row.push(if n == 0 {
                        "-".into()
                    } else {
                        format!("{n} ({})", percent(n, u.lanes))
                    });
                }
                row
            })
            .collect();
        s += &table(&header, &rows, true);
        s.push('\n');
    }
    s
}

fn summary_line(v: &serde_json::Value) -> Option<String> {
    let obj = v.as_object()?;
    let parts: Vec<String> = obj
        .iter()
        .filter(|(_, x)| x.is_number() || x.is_string() || x.is_boolean())
        .map(|(k, x)| match x {
            serde_json::Value::String(t) => format!("{k} {t}"),
            x => format!("{k} {x}"),
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Renders `docs/semantics/undefined.md` with the given conformance reports.
pub fn undefined_page(reports: &[LoadedReport]) -> String {
    let mut s = String::from("# Undefined results\n\n");
    let _ = writeln!(s, "{GENERATED_NOTICE}\n");
    s += "Where the spec texts say a lane's result is *undefined*, the reference model does not guess: \
          the lane's outcome is `Undefined(reason)`, shown as `undef` in every table of these pages and \
          as `\"undefined\"` with a `\"why\"` in `lockstep eval --json`. A conformance run checks \
          nothing in those lanes, but records what the device returned ([below](#what-devices-returned)). \
          The cases were found by evaluating each operation over sizes, values, arguments and active \
          masks, not listed by hand; each example is the `lockstep eval` command that shows it.\n\n";
    s += "## Every undefined case\n\n";
    let mut header: Vec<String> = ["op", "reason", "when (rule from)", "example (model)"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    if !reports.is_empty() {
        header.push("what devices returned".into());
    }
    let mut rows = Vec::new();
    for op in catalogue() {
        for c in undefined_cases(op) {
            rows.push(case_row(op, &c, reports));
        }
    }
    s += &table(&header, &rows, false);
    s.push('\n');
    s += "Bits of inactive lanes in a `subgroupBallot` are 0, and the exclusive scans' first active \
          lane gets the identity: both are defined, not undefined. Float `Add` and `Mul` reductions \
          are defined up to the order of operations, which is implementation-defined \
          ([arithmetic](arithmetic.md)).\n\n";
    s += &rejected_section();
    s += &devices_section(reports);
    s.trim_end().to_string() + "\n"
}
