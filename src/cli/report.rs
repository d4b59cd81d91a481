//! `lockstep report`: one page on a device — its subgroup properties, the conformance summary per
//! subgroup size, its known deviations from the spec, what it returns where the spec leaves a
//! result undefined, the reconvergence guarantees it meets, and its lane layouts — as markdown
//! (and HTML). The page is made of the other commands' JSON reports (`devices`, `conform
//! --subgroup-size all`, `reconverge` per mode), run in this process.

use crate::cli::{CliError, EXIT_MISMATCH};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Arguments of `lockstep report`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Device index (see `lockstep devices`); default: the preferred device.
    #[arg(long)]
    pub device: Option<usize>,
    /// Random subgroups per (op, type, size) in the conformance run.
    #[arg(long, default_value_t = 200)]
    pub cases: usize,
    /// Random programs per reconvergence model.
    #[arg(long, default_value_t = 200)]
    pub programs: u64,
    /// Write the markdown page here (atomically).
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the page as HTML here (atomically).
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Keep the JSON reports the page is made of in this folder.
    #[arg(long)]
    pub keep: Option<PathBuf>,
}

fn s(v: &Json) -> String {
    match v {
        Json::String(x) => x.clone(),
        Json::Null => "-".into(),
        x => x.to_string(),
    }
}

/// Runs one of the other commands in this process; its JSON report (a failing comparison still
/// writes one).
fn sub(argv: &[String], json: &Path) -> Result<Json, CliError> {
    let argv: Vec<String> = std::iter::once("lockstep".to_string())
        .chain(argv.iter().cloned())
        .collect();
    eprintln!("report: {}", argv.join(" "));
    match crate::cli::run(&argv) {
        Ok(_) => {}
        Err(e) if e.code == EXIT_MISMATCH => {}
        Err(e) => return Err(e),
    }
    let text = std::fs::read_to_string(json)
        .map_err(|e| CliError::internal(format!("{}: {e}", json.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::internal(format!("{}: not JSON ({e})", json.display())))
}

/// Runs `lockstep report`.
pub fn run(a: &ReportArgs) -> Result<String, CliError> {
    for p in std::iter::once(&a.out).chain(a.html.as_ref()) {
        crate::files::check_writable(p).map_err(CliError::usage)?;
    }
    if a.cases == 0 || a.programs == 0 {
        return Err(CliError::usage("--cases and --programs must be at least 1"));
    }
    let tmp =
        tempfile::tempdir().map_err(|e| CliError::internal(format!("a temporary folder: {e}")))?;
    let dir = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d)
                .map_err(|e| CliError::usage(format!("--keep {}: {e}", d.display())))?;
            d.clone()
        }
        None => tmp.path().to_path_buf(),
    };
    let dev: Vec<String> = a
        .device
        .map(|d| vec!["--device".to_string(), d.to_string()])
        .unwrap_or_default();
    let ctx = crate::vulkan::Context::new(a.device).map_err(crate::cli::devices::vk_error)?;
    let name = ctx.info.name.clone();
    let probed = crate::cli::devices::layout_rows(&ctx);
    drop(ctx);
    let devices = crate::cli::run(&["lockstep", "devices", "--json"].map(String::from))?;
    let devices: Json = serde_json::from_str(&devices)
        .map_err(|e| CliError::internal(format!("devices --json: {e}")))?;
    let device = devices
        .as_array()
        .and_then(|l| {
            l.iter().find(|d| match a.device {
                Some(i) => d["index"] == i,
                None => d["name"] == name.as_str(),
            })
        })
        .cloned()
        .unwrap_or(Json::Null);
    let cj = dir.join("conform.json");
    let mut argv: Vec<String> = ["conform", "--subgroup-size", "all", "--cases"]
        .map(String::from)
        .to_vec();
    argv.push(a.cases.to_string());
    argv.extend(dev.iter().cloned());
    argv.extend(["--json".to_string(), cj.display().to_string()]);
    let conform = sub(&argv, &cj)?;
    let mut modes = Vec::new();
    for mode in ["base", "sucf", "maximal"] {
        let rj = dir.join(format!("reconverge-{mode}.json"));
        let mut argv: Vec<String> = vec![
            "reconverge".into(),
            "--mode".into(),
            mode.into(),
            "--programs".into(),
            a.programs.to_string(),
        ];
        argv.extend(dev.iter().cloned());
        argv.extend(["--json".to_string(), rj.display().to_string()]);
        modes.push((mode, sub(&argv, &rj)?));
    }
    // The command as typed, with the environment variable that picks lavapipe's subgroup size.
    let env = std::env::var("LP_NATIVE_VECTOR_WIDTH")
        .map(|w| format!("LP_NATIVE_VECTOR_WIDTH={w} "))
        .unwrap_or_default();
    let command = std::env::args()
        .skip(1)
        .fold(format!("{env}lockstep"), |acc, x| acc + " " + &x);
    let mut md = page(&device, &conform, &modes, &command);
    md += "\n### Lane layouts probed\n\nA probe kernel per subgroup size and workgroup shape \
           (`lockstep devices --layouts`); `lockstep run` gives the model the layout found here.\n\n\
           | size | workgroup | model layout that matches | note |\n|---|---|---|---|\n";
    for r in &probed {
        md += &format!("| {} |\n", r.join(" | "));
    }
    crate::files::write_atomic(&a.out, &md)
        .map_err(|e| CliError::internal(format!("writing {}: {e}", a.out.display())))?;
    if let Some(h) = &a.html {
        crate::files::write_atomic(h, &html(&md, &name))
            .map_err(|e| CliError::internal(format!("writing {}: {e}", h.display())))?;
    }
    Ok(format!("report on {name} written to {}\n", a.out.display()))
}

fn yes(v: &Json) -> &'static str {
    if v.as_bool() == Some(true) {
        "yes"
    } else {
        "no"
    }
}

/// The markdown page.
pub fn page(device: &Json, conform: &Json, modes: &[(&str, Json)], command: &str) -> String {
    let c = &device["capabilities"];
    let mut out = format!(
        "# {}\n\n{} · driver {} · Vulkan {}\n\nGenerated by `{command}` on {}; every figure below \
         is what this device did in that run.\n\n",
        s(&device["name"]),
        s(&device["type"]),
        s(&device["driver"]),
        s(&device["api_version"]),
        crate::text::utc_date()
    );
    out += "## Subgroup properties\n\n| property | value |\n|---|---|\n";
    let ops: Vec<String> = c["ops"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, v)| v.as_bool() == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let rows = [
        (
            "subgroup size",
            format!(
                "{} (min {}, max {})",
                s(&c["subgroup_size"]),
                s(&c["min_subgroup_size"]),
                s(&c["max_subgroup_size"])
            ),
        ),
        ("size control (compute)", yes(&c["size_control"]).into()),
        ("full subgroups", yes(&c["full_subgroups"]).into()),
        (
            "max subgroups per workgroup",
            s(&c["max_workgroup_subgroups"]),
        ),
        ("operations", ops.join(", ")),
        (
            "maximal reconvergence",
            yes(&c["maximal_reconvergence"]).into(),
        ),
        (
            "subgroup uniform control flow",
            yes(&c["subgroup_uniform_control_flow"]).into(),
        ),
        (
            "subgroup extended types",
            yes(&c["subgroup_extended_types"]).into(),
        ),
    ];
    for (k, v) in rows {
        out += &format!("| {k} | {v} |\n");
    }
    out += &conform_sections(conform);
    out += "\n## Reconvergence guarantees\n\nRandom structured programs (`lockstep reconverge`), \
            every result the model defines under the mode compared:\n\n\
            | mode | verdict | programs | results compared | mismatches |\n|---|---|---|---|---|\n";
    for (mode, r) in modes {
        let verdict = match r["status"].as_str() {
            Some("pass") => "met".to_string(),
            Some("unsupported") => format!("not offered: {}", s(&r["reason"])),
            Some(x) => format!("**not met** ({x})"),
            None => "-".into(),
        };
        out += &format!(
            "| {mode} | {verdict} | {} | {} | {} |\n",
            s(&r["programs"]),
            s(&r["operations_compared"]),
            s(&r["mismatches"])
        );
    }
    out
}

fn conform_sections(conform: &Json) -> String {
    let list = |k: &str| conform[k].as_array().cloned().unwrap_or_default();
    let results = list("results");
    // Per size: rows, subgroups, failures (known / not), unsupported combinations.
    #[derive(Default)]
    struct PerSize {
        cases: u64,
        failed: u64,
        known: u64,
        unexplained_rows: u64,
        unsupported: u64,
        errors: u64,
    }
    let mut sizes: BTreeMap<u64, PerSize> = BTreeMap::new();
    let mut known: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unsupported: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &results {
        let size = r["subgroup_size"].as_u64().unwrap_or(0);
        let e = sizes.entry(size).or_default();
        let failed = r["failed"].as_u64().unwrap_or(0);
        e.cases += r["cases"].as_u64().unwrap_or(0);
        e.failed += failed;
        match r["status"].as_str() {
            Some("unsupported") => {
                e.unsupported += 1;
                unsupported
                    .entry(s(&r["reason"]))
                    .or_default()
                    .push(format!("{} {}", s(&r["op"]), s(&r["type"])));
            }
            Some("fail") if r["known_deviation"] == true => {
                e.known += failed;
                let why = s(&r["reason"]);
                let why = why
                    .trim_start_matches("known device deviation: ")
                    .to_string();
                known.entry(why).or_default().push(format!(
                    "{} {} at size {size}",
                    s(&r["op"]),
                    s(&r["type"])
                ));
            }
            Some("fail") if failed == 0 => e.errors += 1,
            Some("fail") => e.unexplained_rows += 1,
            _ => {}
        }
    }
    let mut out = String::from(
        "\n## Conformance per subgroup size\n\n`lockstep conform --subgroup-size all`: every \
         operation and type the device offers, random subgroups compared lane by lane with the \
         model.\n\n| size | subgroups compared | failed | of them known deviations | rows failing \
         unexplained | rows in error | unsupported (op, type) |\n|---|---|---|---|---|---|---|\n",
    );
    for (size, p) in &sizes {
        out += &format!(
            "| {size} | {} | {} | {} | {} | {} | {} |\n",
            p.cases, p.failed, p.known, p.unexplained_rows, p.errors, p.unsupported
        );
    }
    out += "\n## Known deviations from the spec\n\n";
    if known.is_empty() {
        out += "None seen in this run.\n";
    }
    for (why, rows) in &known {
        let mut rows = rows.clone();
        rows.sort();
        rows.dedup();
        out += &format!("- {why}\n  - rows: {}\n", rows.join(", "));
    }
    if !unsupported.is_empty() {
        out += "\n### Not offered (unsupported, with the feature)\n\n";
        for (why, what) in &unsupported {
            let mut what = what.clone();
            what.sort();
            what.dedup();
            let shown: Vec<String> = what.iter().take(8).cloned().collect();
            let more = if what.len() > 8 {
                format!(" and {} more", what.len() - 8)
            } else {
                String::new()
            };
            out += &format!("- {why}: {}{more}\n", shown.join(", "));
        }
    }
    out += "\n## Where the spec says undefined: what this device returns\n\n\
            Lanes whose result the spec leaves undefined are not compared; this is what the device \
            put there (the share of lanes per pattern, and the most frequent values).\n\n\
            | op | reason | lanes | patterns | most frequent values |\n|---|---|---|---|---|\n";
    for u in list("undefined_observed") {
        let lanes = u["lanes"].as_u64().unwrap_or(0).max(1);
        let pats: Vec<String> = u["patterns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["lanes"].as_u64().unwrap_or(0) > 0)
            .map(|p| {
                format!(
                    "{} {:.0}%",
                    s(&p["pattern"]),
                    100.0 * p["lanes"].as_u64().unwrap_or(0) as f64 / lanes as f64
                )
            })
            .collect();
        let vals: Vec<String> = u["values"]
            .as_array()
            .into_iter()
            .flatten()
            .take(3)
            .map(|v| format!("`{}` × {}", s(&v["value"]), s(&v["lanes"])))
            .collect();
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            s(&u["op"]),
            s(&u["reason"]),
            s(&u["lanes"]),
            pats.join(", "),
            vals.join(", ")
        );
    }
    out += "\n## Lane layouts\n\nHow the device placed the invocations of a workgroup in \
            subgroups (checked for every workgroup the conformance run dispatched), by the model's \
            layout names:\n\n| workgroup | layout | workgroups |\n|---|---|---|\n";
    for l in list("layouts") {
        out += &format!(
            "| {} | {} | {} |\n",
            s(&l["workgroup"]),
            s(&l["layout"]),
            s(&l["workgroups"])
        );
    }
    out
}

/// The page as a standalone HTML document.
fn html(md: &str, title: &str) -> String {
    use pulldown_cmark::{html, Options, Parser};
    let mut body = String::new();
    html::push_html(&mut body, Parser::new_ext(md, Options::ENABLE_TABLES));
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>lockstep: {}</title>\n<style>\
         body{{font-family:sans-serif;max-width:70em;margin:auto}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 6px}}</style></head><body>\n{body}</body></html>\n",
        title.replace('<', "&lt;")
    )
}
