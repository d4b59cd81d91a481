//! Rendering a conformance [`Report`]: a text summary (category × type table, mismatches with the
//! `lockstep eval` line and the GLSL that ran, undefined-lane observations, timing), the JSON report
//! and JUnit XML.

use crate::conform::compare::{Mismatch, RowKey};
use crate::conform::known::Known;
use crate::conform::run::Report;
use crate::model::{catalogue, Category, ScalarType};
use serde_json::json;
use std::collections::BTreeMap;

fn category_of(op: &str) -> Category {
    catalogue()
        .iter()
        .find(|o| o.name == op)
        .map(|o| o.category)
        .unwrap_or(Category::Basic)
}

fn scalar_of(ty: &str) -> String {
    ty.split('x').next().unwrap_or(ty).to_string()
}

/// The category × scalar-type table: each cell `passed/failed/unsupported` (subgroups compared,
/// subgroups with a mismatch, (op, type) combinations the device cannot run); vector widths are
/// counted with their scalar type.
pub fn table(r: &Report) -> String {
    let mut cols: Vec<String> = ScalarType::ALL
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    cols.push("-".into());
    let mut cells: BTreeMap<(Category, String), (u64, u64, u64)> = BTreeMap::new();
    for (k, v) in &r.stats.rows {
        let c = cells
            .entry((category_of(&k.op), scalar_of(&k.ty)))
            .or_default();
        c.0 += v.passed;
        c.1 += v.failed;
    }
    for u in &r.unsupported {
        cells
            .entry((category_of(&u.op), scalar_of(&u.ty)))
            .or_default()
            .2 += 1;
    }
    for e in &r.errors {
        let c = cells
            .entry((
                category_of(e.ops.first().map(|s| s.as_str()).unwrap_or("")),
                scalar_of(&e.ty),
            ))
            .or_default();
        c.1 += 1;
    }
    let mut rows = vec![std::iter::once("category".to_string())
        .chain(cols.iter().map(|c| {
            if c == "-" {
                "no value".to_string()
            } else {
                c.clone()
            }
        }))
        .collect::<Vec<_>>()];
    for cat in Category::ALL {
        let mut row = vec![cat.name().to_string()];
        let mut any = false;
        for c in &cols {
            match cells.get(&(cat, c.clone())) {
                Some((p, f, u)) => {
                    any = true;
                    row.push(format!("{p}/{f}/{u}"));
                }
                None => row.push(".".into()),
            }
        }
        if any {
            rows.push(row);
        }
    }
    crate::text::table(&rows)
}

/// The whole text summary: the device, the category × type table, what is unsupported, known
/// deviations, mismatches and errors (with the GLSL that ran), undefined-lane observations, lane
/// layouts, totals and the verdict.
pub fn text(r: &Report) -> String {
    let known = known_rows(r);
    [
        header(r),
        "cells: passed/failed subgroups / unsupported (op, type) combinations; '.' = no such op for the type\n".to_string(),
        table(r),
        unsupported_section(r),
        known_section(&known),
        mismatches_section(r),
        errors_section(r),
        kernels_section(r),
        undefined_section(r),
        layouts_section(r),
        totals_section(r),
        verdict(r, known.len()),
    ]
    .concat()
}

type KnownRow<'a> = (&'a RowKey, &'static Known);

fn header(r: &Report) -> String {
    let d = &r.device;
    format!(
        "device: {} ({}; driver {}; subgroup size {}; sizes run: {})\n\n",
        d.name,
        d.device_type,
        d.driver,
        d.capabilities.subgroup_size,
        r.sizes
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The categories the device cannot run, by the feature they need.
fn unsupported_section(r: &Report) -> String {
    if r.unsupported.is_empty() {
        return String::new();
    }
    let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for u in &r.unsupported {
        let e = by.entry(u.reason.as_str()).or_default();
        let c = category_of(&u.op).name().to_string();
        if !e.contains(&c) {
            e.push(c);
        }
    }
    let mut s = String::from("\nunsupported:\n");
    for (reason, cats) in by {
        s += &format!("  {} — needs {reason}\n", cats.join(", "));
    }
    s
}

/// The failing rows a documented deviation explains.
fn known_rows(r: &Report) -> Vec<KnownRow<'_>> {
    r.stats
        .rows
        .iter()
        .filter(|(_, v)| v.failed > 0)
        .filter_map(|(k, _)| r.known(k).map(|x| (k, x)))
        .collect()
}

/// Known deviations, one paragraph per deviation with the rows it explains.
fn known_section(known: &[KnownRow<'_>]) -> String {
    if known.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nknown device deviations (documented in src/conform/known.rs; --strict makes them fail):\n",
    );
    let mut groups: Vec<(&Known, Vec<&RowKey>)> = Vec::new();
    for (k, x) in known {
        match groups.iter_mut().find(|(g, _)| std::ptr::eq(*g, *x)) {
            Some((_, v)) => v.push(k),
            None => groups.push((x, vec![k])),
        }
    }
    let distinct = |mut v: Vec<String>| {
        v.sort();
        v.dedup();
        v.join(", ")
    };
    for (x, rows) in groups {
        s += &format!(
            "  {} row(s): {} on {} (workgroups {})\n    why: {}\n    seen: {}\n",
            rows.len(),
            distinct(rows.iter().map(|k| k.op.clone()).collect()),
            distinct(rows.iter().map(|k| k.ty.clone()).collect()),
            distinct(
                rows.iter()
                    .map(|k| format!("{}x{}x{}", k.shape[0], k.shape[1], k.shape[2]))
                    .collect()
            ),
            x.what,
            x.seen
        );
    }
    s
}

/// Is `m` in a row a known deviation explains?
fn is_known(r: &Report, m: &Mismatch) -> bool {
    let key = RowKey {
        op: m.op.clone(),
        ty: m.ty.clone(),
        size: m.size,
        shape: m.workgroup,
    };
    r.known(&key).is_some()
}

/// The unexplained mismatches: what was expected and returned, how to reproduce, the GLSL.
fn mismatches_section(r: &Report) -> String {
    let shown: Vec<&Mismatch> = r
        .stats
        .mismatches
        .iter()
        .filter(|m| !is_known(r, m))
        .collect();
    if shown.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nmismatches (first {} subgroups per op, type, size and shape; known deviations are in the JSON report):\n",
        crate::conform::compare::MISMATCHES_PER_ROW
    );
    for m in shown {
        s += &format!(
            "  {} on {}: {} {} size {} workgroup {}x{}x{} (workgroup #{}, subgroup {}), lane {}: {}\n",
            m.op, r.device.name, m.op, m.ty, m.size, m.workgroup[0], m.workgroup[1], m.workgroup[2], m.workgroup_index, m.subgroup_id, m.lane, m.why
        );
        if m.expected != "-" || m.actual != "-" {
            s += &format!(
                "    expected {} [{}]\n    actual   {} [{}]\n",
                m.expected, m.expected_bits, m.actual, m.actual_bits
            );
        }
        if !m.eval.is_empty() {
            s += &format!("    reproduce: {}\n", m.eval);
        }
        s += &format!("    GLSL ({}): {}\n", m.kernel, m.glsl);
    }
    s
}

fn errors_section(r: &Report) -> String {
    r.errors
        .iter()
        .map(|e| {
            format!(
                "\nerror in {} ({}; type {}, size {}, workgroup {}x{}x{}): {}\n",
                e.kernel,
                e.ops.join(", "),
                e.ty,
                e.size,
                e.workgroup[0],
                e.workgroup[1],
                e.workgroup[2],
                e.error
            )
        })
        .collect()
}

/// The GLSL that ran, for kernels with an unexplained mismatch or an error.
fn kernels_section(r: &Report) -> String {
    let wanted: Vec<&String> = r
        .stats
        .mismatches
        .iter()
        .filter(|m| !is_known(r, m))
        .map(|m| &m.kernel)
        .chain(r.errors.iter().map(|e| &e.kernel))
        .collect();
    let kernels: Vec<(&String, &String)> = r
        .kernels
        .iter()
        .filter(|(n, _)| wanted.contains(n))
        .collect();
    if kernels.is_empty() {
        return String::new();
    }
    let mut s = String::from("\nGLSL of the kernels with mismatches or errors:\n");
    for (name, src) in kernels {
        s += &format!("--- {name}.comp ---\n{src}");
    }
    s
}

/// What the device returned in undefined lanes, per op and rule.
fn undefined_section(r: &Report) -> String {
    if r.stats.undefined.is_empty() {
        return String::new();
    }
    let mut rows = vec![[
        "op",
        "rule",
        "lanes",
        "own value",
        "source value",
        "zero",
        "identity",
        "other",
        "most common",
    ]
    .map(String::from)
    .to_vec()];
    for ((op, reason), u) in &r.stats.undefined {
        let pct = |p: &str| {
            format!(
                "{:.0}%",
                100.0 * *u.patterns.get(p).unwrap_or(&0) as f64 / u.lanes.max(1) as f64
            )
        };
        let top = u
            .values
            .iter()
            .max_by_key(|(v, n)| (**n, std::cmp::Reverse((*v).clone())))
            .map(|(v, n)| format!("{v} ({n})"))
            .unwrap_or_default();
        rows.push(vec![
            op.clone(),
            reason.to_string(),
            u.lanes.to_string(),
            pct("own_value"),
            pct("source_value"),
            pct("zero"),
            pct("identity"),
            pct("other"),
            top,
        ]);
    }
    "\nundefined lanes (not compared) — what the device returned:\n".to_string()
        + &crate::text::table(&rows)
}

fn layouts_section(r: &Report) -> String {
    if r.stats.layouts.is_empty() {
        return String::new();
    }
    let mut s = String::from("\nlane layouts observed (workgroup shape: layout × workgroups):\n");
    for ((shape, layout), n) in &r.stats.layouts {
        s += &format!("  {shape}: {layout} × {n}\n");
    }
    s
}

/// Counts, where the time went, throughput.
fn totals_section(r: &Report) -> String {
    let t = &r.timing;
    let cases = r.cases();
    let run_s = (t.total - t.compile).max(1e-9);
    let mut s = format!(
        "\n{} subgroups compared ({} lanes), {} failed, {} unsupported (op, type) combinations\n",
        cases,
        r.stats.lane_checks,
        r.failed(),
        r.unsupported.len()
    );
    s += &format!(
        "time: {:.1} s total; shader compilation {:.1} s (shaderc) + {:.1} s (pipelines, summed over threads); dispatch {:.1} s, compare {:.1} s, setup {:.1} s (summed)\n",
        t.total, t.compile, t.pipelines, t.dispatch, t.compare, t.setup
    );
    s += &format!(
        "throughput excluding shaderc: {:.0} cases/s, {:.0} lane-checks/s\n",
        cases as f64 / run_s,
        r.stats.lane_checks as f64 / run_s
    );
    if let Some(a) = &r.aborted {
        s += &format!("\nthe run stopped early: {a}\n");
    }
    s
}

fn verdict(r: &Report, known: usize) -> String {
    match (r.passed(), known == 0) {
        (true, true) => "result: PASS\n".to_string(),
        (true, false) => {
            format!("result: PASS except {known} known device deviation(s) listed above\n")
        }
        (false, _) => "result: FAIL\n".to_string(),
    }
}

/// The JSON report (shape documented in docs/conformance.md).
pub fn json(r: &Report, command: &str) -> serde_json::Value {
    let d = &r.device;
    let mut results: Vec<serde_json::Value> = r
        .stats
        .rows
        .iter()
        .map(|(k, v)| {
            let known = if v.failed > 0 { r.known(k) } else { None };
            let reason: serde_json::Value = match (v.failed, known) {
                (0, _) => serde_json::Value::Null,
                (_, Some(x)) => {
                    format!("known device deviation: {} (seen on {})", x.what, x.seen).into()
                }
                _ => "lanes disagree with the model (see mismatches)".into(),
            };
            json!({
                "op": k.op, "type": k.ty, "subgroup_size": k.size, "workgroup": k.shape,
                "cases": v.cases, "passed": v.passed, "failed": v.failed,
                "status": if v.failed == 0 { "pass" } else { "fail" },
                "reason": reason, "known_deviation": known.is_some(),
            })
        })
        .collect();
    for e in &r.errors {
        for op in &e.ops {
            results.push(json!({
                "op": op, "type": e.ty, "subgroup_size": e.size, "workgroup": e.workgroup,
                "cases": 0, "passed": 0, "failed": 0, "status": "fail", "reason": e.error,
            }));
        }
    }
    for u in &r.unsupported {
        results.push(json!({
            "op": u.op, "type": u.ty, "subgroup_size": u.size, "workgroup": null,
            "cases": 0, "passed": 0, "failed": 0, "status": "unsupported", "reason": u.reason,
        }));
    }
    let undefined: Vec<serde_json::Value> = r
        .stats
        .undefined
        .iter()
        .map(|((op, reason), u)| {
            let mut vals: Vec<(&String, &u64)> = u.values.iter().collect();
            vals.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let patterns: Vec<serde_json::Value> = ["own_value", "source_value", "zero", "identity", "other"]
                .iter()
                .map(|p| json!({"pattern": p, "lanes": u.patterns.get(p).copied().unwrap_or(0)}))
                .collect();
            let values: Vec<serde_json::Value> =
                vals.iter().take(5).map(|(v, n)| json!({"value": v, "lanes": n})).collect();
            json!({"op": op, "reason": reason, "lanes": u.lanes, "patterns": patterns, "values": values})
        })
        .collect();
    let mismatches: Vec<serde_json::Value> = r
        .stats
        .mismatches
        .iter()
        .map(|m| {
            let key = crate::conform::compare::RowKey {
                op: m.op.clone(),
                ty: m.ty.clone(),
                size: m.size,
                shape: m.workgroup,
            };
            let mut v = serde_json::to_value(m).unwrap_or_default();
            v["known_deviation"] = r.known(&key).is_some().into();
            v
        })
        .collect();
    let layouts: Vec<serde_json::Value> = r
        .stats
        .layouts
        .iter()
        .map(|((shape, layout), n)| json!({"workgroup": shape, "layout": layout, "workgroups": n}))
        .collect();
    let t = &r.timing;
    let run_s = (t.total - t.compile).max(1e-9);
    json!({
        "device": {"name": d.name, "driver": d.driver, "subgroup_size": d.capabilities.subgroup_size,
                   "type": d.device_type, "api_version": d.api_version},
        "date": crate::text::utc_date(),
        "command": command,
        "results": results,
        "undefined_observed": undefined,
        "mismatches": mismatches,
        "errors": r.errors,
        "layouts": layouts,
        "summary": {
            "cases": r.cases(), "failed": r.failed(), "failed_unexplained": r.unexplained_failed(),
            "unsupported": r.unsupported.len(), "passed": r.passed(),
            "seconds": t.total, "lane_checks": r.stats.lane_checks,
            "compile_seconds": t.compile, "pipeline_seconds": t.pipelines,
            "cases_per_second": r.cases() as f64 / run_s,
            "lane_checks_per_second": r.stats.lane_checks as f64 / run_s,
            "aborted": r.aborted,
        },
    })
}

/// JUnit XML: one testsuite per category, one testcase per (op, type, size, workgroup).
pub fn junit(r: &Report) -> String {
    let mut suites: BTreeMap<Category, Vec<String>> = BTreeMap::new();
    let mut counts: BTreeMap<Category, (u64, u64, u64)> = BTreeMap::new();
    for (k, v) in &r.stats.rows {
        let cat = category_of(&k.op);
        let name = format!(
            "{} {} size {} workgroup {}x{}x{}",
            k.op, k.ty, k.size, k.shape[0], k.shape[1], k.shape[2]
        );
        let mut tc = format!(
            "    <testcase classname=\"lockstep.{}\" name=\"{}\">",
            cat.name(),
            crate::text::xml_escape(&name)
        );
        let c = counts.entry(cat).or_default();
        c.0 += 1;
        if v.failed > 0 {
            c.1 += 1;
            let detail: Vec<String> = r
                .stats
                .mismatches
                .iter()
                .filter(|m| {
                    m.op == k.op && m.ty == k.ty && m.size == k.size && m.workgroup == k.shape
                })
                .map(|m| {
                    format!(
                        "lane {}: {} (expected {}, actual {}) {}",
                        m.lane, m.why, m.expected, m.actual, m.eval
                    )
                })
                .collect();
            tc += &format!(
                "<failure message=\"{} of {} subgroups disagree with the model\">{}</failure>",
                v.failed,
                v.cases,
                crate::text::xml_escape(&detail.join("\n"))
            );
        }
        tc += "</testcase>";
        suites.entry(cat).or_default().push(tc);
    }
    for u in &r.unsupported {
        let cat = category_of(&u.op);
        let c = counts.entry(cat).or_default();
        c.0 += 1;
        c.2 += 1;
        suites.entry(cat).or_default().push(format!(
            "    <testcase classname=\"lockstep.{}\" name=\"{}\"><skipped message=\"unsupported: {}\"/></testcase>",
            cat.name(),
            crate::text::xml_escape(&format!("{} {} size {}", u.op, u.ty, u.size)),
            crate::text::xml_escape(&u.reason)
        ));
    }
    for e in &r.errors {
        let cat = category_of(e.ops.first().map(|s| s.as_str()).unwrap_or(""));
        let c = counts.entry(cat).or_default();
        c.0 += 1;
        c.1 += 1;
        suites.entry(cat).or_default().push(format!(
            "    <testcase classname=\"lockstep.{}\" name=\"{}\"><error message=\"{}\"/></testcase>",
            cat.name(),
            crate::text::xml_escape(&format!("{} size {} workgroup {}x{}x{}", e.kernel, e.size, e.workgroup[0], e.workgroup[1], e.workgroup[2])),
            crate::text::xml_escape(&e.error)
        ));
    }
    let (tests, failures, skipped) = counts
        .values()
        .fold((0, 0, 0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2));
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep conform on {}\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        crate::text::xml_escape(&r.device.name),
        r.timing.total
    );
    for (cat, cases) in suites {
        let (t, f, sk) = counts[&cat];
        s += &format!(
            "  <testsuite name=\"{}\" tests=\"{t}\" failures=\"{f}\" skipped=\"{sk}\">\n",
            cat.name()
        );
        for c in cases {
            s += &c;
            s.push('\n');
        }
        s += "  </testsuite>\n";
    }
    s += "</testsuites>\n";
    s
}

pub use crate::files::{check_writable, write_atomic};
