//! `lockstep eval`: one operation on one subgroup, evaluated by the model and shown lane by lane.

use crate::cli::CliError;
use crate::model::{
    catalogue, evaluate, lookup, Args, Ballot, LaneArg, LaneMask, LaneOrder, OpCall, OpInfo,
    Outcome, SubgroupSize, TypeClass, Value, ValueType, WorkgroupLayout, WorkgroupShape,
};
use serde_json::json;

/// Arguments of `lockstep eval`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EvalArgs {
    /// Operation: catalogue name (`shuffle_down`) or GLSL name (`subgroupShuffleDown`).
    pub op: String,
    /// Subgroup size: a power of two in 1..=128.
    #[arg(long)]
    pub size: u64,
    /// Value type: bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, with x2/x3/x4 for vectors (or GLSL names).
    #[arg(long = "type", default_value = "u32")]
    pub ty: String,
    /// Active lanes as one hex mask (lane i = bit i); default: all lanes.
    #[arg(long)]
    pub active: Option<String>,
    /// One value per lane, comma-separated; vector components separated by ':'; floats may be nan, inf, -inf
    /// or 0x raw bits. Default: each lane's id (bool: odd lanes true).
    #[arg(long, allow_hyphen_values = true)]
    pub values: Option<String>,
    /// Lane id: one value, or one per lane where the op allows.
    #[arg(long, allow_hyphen_values = true, help = arg_help("id"))]
    pub id: Option<String>,
    /// Lane distance.
    #[arg(long, allow_hyphen_values = true, help = arg_help("delta"))]
    pub delta: Option<String>,
    /// Xor mask.
    #[arg(long, allow_hyphen_values = true, help = arg_help("mask"))]
    pub mask: Option<String>,
    /// Cluster size.
    #[arg(long, help = arg_help("cluster"))]
    pub cluster: Option<u64>,
    /// Bit index.
    #[arg(long, allow_hyphen_values = true, help = arg_help("index"))]
    pub index: Option<String>,
    /// The uvec4 operand of the ballot bit ops.
    #[arg(long, help = arg_help("ballot"))]
    pub ballot: Option<String>,
    /// Workgroup shape: X, X,Y or X,Y,Z.
    #[arg(long, help = arg_help("workgroup"))]
    pub workgroup: Option<String>,
    /// Lane layout for the workgroup built-ins: row-major (default), column-major, quads, or an axis order like yzx.
    #[arg(long)]
    pub layout: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The help of an argument flag, from the catalogue: what the argument is and which ops take it
/// (`ArgKind::describe`, the ops whose arguments have that name).
pub fn arg_help(name: &str) -> String {
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut ops: Vec<&str> = Vec::new();
    for o in catalogue() {
        for k in o.args.iter().filter(|k| k.name() == name) {
            if !kinds.contains(&k.describe()) {
                kinds.push(k.describe());
            }
            if !ops.contains(&o.name.as_str()) {
                ops.push(&o.name);
            }
        }
    }
    format!("{} (taken by {})", kinds.join("; "), ops.join(", "))
}

/// A fully parsed `eval` request.
#[derive(Debug, Clone)]
pub struct EvalRequest {
    /// the call
    pub call: OpCall,
    /// active lanes
    pub active: LaneMask,
    /// the value type (`None` for ops without a value operand)
    pub ty: Option<ValueType>,
    /// one value per lane (empty without a value operand)
    pub values: Vec<Value>,
}

fn lane_arg(flag: &str, text: &Option<String>) -> Result<Option<LaneArg>, CliError> {
    text.as_deref()
        .map(|t| LaneArg::parse(t).map_err(|e| CliError::usage(format!("--{flag}: {e}"))))
        .transpose()
}

/// Parses and validates everything `eval` was given (no evaluation yet).
pub fn parse(a: &EvalArgs) -> Result<EvalRequest, CliError> {
    let info: &'static OpInfo = lookup(&a.op)?;
    let size = SubgroupSize::new(a.size)?;
    let active = match &a.active {
        Some(m) => LaneMask::parse(m, size)?,
        None => size.full_mask(),
    };
    let args = Args {
        id: lane_arg("id", &a.id)?,
        mask: lane_arg("mask", &a.mask)?,
        delta: lane_arg("delta", &a.delta)?,
        index: lane_arg("index", &a.index)?,
        cluster: a.cluster,
        ballot: a.ballot.as_deref().map(Ballot::parse).transpose()?,
    };
    let call = OpCall::new(info, size, args)?;
    let (ty, values) = if info.has_value() {
        let ty: ValueType = a.ty.parse()?;
        if !info.accepts(ty) {
            return Err(CliError::usage(format!(
                "{} does not take {ty}: it takes {}",
                info.name,
                info.types.describe()
            )));
        }
        let values = match &a.values {
            Some(text) => {
                let parts: Vec<&str> = text.split(',').collect();
                if parts.len() != size.lanes() {
                    return Err(CliError::usage(format!(
                        "--values: expected one value per lane ({} for subgroup size {}), got {}",
                        size.lanes(),
                        size,
                        parts.len()
                    )));
                }
                parts
                    .iter()
                    .map(|p| Value::parse(ty, p.trim()))
                    .collect::<Result<Vec<_>, _>>()?
            }
            None => (0..size.get())
                .map(|l| default_value(ty, l))
                .collect::<Result<Vec<_>, _>>()?,
        };
        (Some(ty), values)
    } else {
        if a.values.is_some() {
            return Err(CliError::usage(format!(
                "{} takes no --values ({})",
                info.name,
                info.types.describe()
            )));
        }
        (None, Vec::new())
    };
    Ok(EvalRequest {
        call,
        active,
        ty,
        values,
    })
}

fn default_value(ty: ValueType, lane: u32) -> Result<Value, crate::model::ModelError> {
    let c = if ty.scalar_type() == crate::model::ScalarType::Bool {
        (lane % 2).to_string()
    } else {
        // Lane ids fit every type for sizes <= 128 (i8 max 127).
        lane.to_string()
    };
    let text = vec![c; ty.components()].join(":");
    Value::parse(ty, &text)
}

/// Runs `lockstep eval`.
pub fn run(a: &EvalArgs) -> Result<String, CliError> {
    let info = lookup(&a.op)?;
    if info.is_workgroup_level() {
        return run_workgroup(a, info);
    }
    for (flag, given) in [
        ("workgroup", a.workgroup.is_some()),
        ("layout", a.layout.is_some()),
    ] {
        if given {
            return Err(CliError::usage(format!(
                "{} takes no --{flag} (only num_subgroups and subgroup_id do)",
                info.name
            )));
        }
    }
    let req = parse(a)?;
    let out = evaluate(&req.call, req.active, &req.values)?;
    Ok(if a.json {
        to_json(&req, &out).to_string() + "\n"
    } else {
        to_table(&req, &out)
    })
}

/// The JSON form of an evaluation (the shape documented in the README).
pub fn to_json(req: &EvalRequest, out: &[Outcome]) -> serde_json::Value {
    let info = req.call.info();
    let lanes: Vec<serde_json::Value> = out
        .iter()
        .enumerate()
        .map(|(l, o)| {
            let active = req.active.has(l as u32);
            match o {
                Outcome::Inactive => json!({"lane": l, "active": active, "result": null}),
                Outcome::Defined(v) => json!({"lane": l, "active": active, "result": v.to_json()}),
                Outcome::Undefined(why) => json!({"lane": l, "active": active, "result": "undefined", "why": why.to_string()}),
            }
        })
        .collect();
    let ty = req
        .ty
        .unwrap_or_else(|| info.result.result_type(None))
        .to_string();
    json!({"op": info.name, "size": req.call.size().get(), "type": ty, "lanes": lanes})
}

/// The per-lane table: lanes as columns (16 per block), rows for active, arguments, input, result;
/// inactive `-`, undefined `undef` with the reasons listed under the table.
pub fn to_table(req: &EvalRequest, out: &[Outcome]) -> String {
    let call = &req.call;
    let info = call.info();
    let mut head = format!("{} ({})  size {}", info.name, info.glsl, call.size());
    if let Some(t) = req.ty {
        head += &format!("  type {t}");
    }
    let a = call.args();
    let mut per_lane_rows: Vec<(&str, LaneArg)> = Vec::new();
    for (name, v) in [
        ("id", &a.id),
        ("mask", &a.mask),
        ("delta", &a.delta),
        ("index", &a.index),
    ] {
        match v {
            Some(LaneArg::Uniform(x)) => head += &format!("  {name} {x}"),
            Some(l @ LaneArg::PerLane(_)) => per_lane_rows.push((name, l.clone())),
            None => {}
        }
    }
    if let Some(c) = a.cluster {
        head += &format!("  cluster {c}");
    }
    if let Some(b) = a.ballot {
        head += &format!("  ballot 0x{:x} = uvec4{}", b.0, b);
    }
    head += &format!("  active {}\n", req.active);
    let n = call.size().lanes();
    let mut body = String::new();
    for start in (0..n).step_by(16) {
        let end = (start + 16).min(n);
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("lane".to_string())
            .chain((start..end).map(|l| l.to_string()))
            .collect()];
        rows.push(
            std::iter::once("active".to_string())
                .chain(
                    (start..end)
                        .map(|l| if req.active.has(l as u32) { "x" } else { "-" }.to_string()),
                )
                .collect(),
        );
        for (name, arg) in &per_lane_rows {
            rows.push(
                std::iter::once(name.to_string())
                    .chain((start..end).map(|l| arg.at(l as u32).to_string()))
                    .collect(),
            );
        }
        if info.types != TypeClass::NoValue {
            rows.push(
                std::iter::once("input".to_string())
                    .chain((start..end).map(|l| req.values[l].to_string()))
                    .collect(),
            );
        }
        rows.push(
            std::iter::once("result".to_string())
                .chain((start..end).map(|l| match &out[l] {
                    Outcome::Defined(v) if v.ty() == ValueType::UVEC4 => {
                        let w = v.bits();
                        format!(
                            "0x{:x}",
                            Ballot::from_words([
                                w[0] as u32,
                                w[1] as u32,
                                w[2] as u32,
                                w[3] as u32
                            ])
                            .0
                        )
                    }
                    o => o.to_string(),
                }))
                .collect(),
        );
        body += &render_rows(&rows);
        if end < n {
            body.push('\n');
        }
    }
    // Reasons, each once with the lanes it applies to (in order of first lane).
    let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
    for (l, o) in out.iter().enumerate() {
        if let Outcome::Undefined(why) = o {
            let why = why.to_string();
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some((_, lanes)) => lanes.push(l as u32),
                None => groups.push((why, vec![l as u32])),
            }
        }
    }
    let reasons: Vec<String> = groups
        .iter()
        .map(|(why, lanes)| {
            let label = if lanes.len() == 1 { "lane" } else { "lanes" };
            format!("  {label} {}: {why}", lane_ranges(lanes))
        })
        .collect();
    let mut s = head + &body;
    if !reasons.is_empty() {
        s += "undefined:\n";
        s += &reasons.join("\n");
        s.push('\n');
    }
    s
}

/// `0-3, 6, 8-9` for sorted lanes.
fn lane_ranges(lanes: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            lanes[i].to_string()
        } else {
            format!("{}-{}", lanes[i], lanes[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

fn render_rows(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0usize; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = format!("{:<width$} |", r[0], width = w[0]);
        for (i, c) in r.iter().enumerate().skip(1) {
            line += &format!(" {c:>width$}", width = w[i]);
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

fn run_workgroup(a: &EvalArgs, info: &'static OpInfo) -> Result<String, CliError> {
    let size = SubgroupSize::new(a.size)?;
    let shape: WorkgroupShape = a
        .workgroup
        .as_deref()
        .ok_or_else(|| {
            CliError::usage(format!(
                "{} needs the argument 'workgroup' (--workgroup X[,Y[,Z]])",
                info.name
            ))
        })?
        .parse()?;
    let layout: LaneOrder = match &a.layout {
        Some(l) => l.parse().map_err(CliError::usage)?,
        None => LaneOrder::ROW_MAJOR,
    };
    for (flag, given) in [
        ("values", a.values.is_some()),
        ("active", a.active.is_some()),
        ("id", a.id.is_some()),
        ("delta", a.delta.is_some()),
        ("mask", a.mask.is_some()),
        ("cluster", a.cluster.is_some()),
        ("index", a.index.is_some()),
        ("ballot", a.ballot.is_some()),
    ] {
        if given {
            return Err(CliError::usage(format!(
                "{} takes no --{flag}: it is a workgroup built-in (--workgroup, --layout)",
                info.name
            )));
        }
    }
    let w = WorkgroupLayout::new(shape, size, layout)?;
    if a.json {
        let inv: Vec<serde_json::Value> = (0..shape.invocations())
            .map(|i| {
                let p = w.placement(i);
                json!({"local": shape.local_id(i), "subgroup": p.subgroup, "lane": p.lane})
            })
            .collect();
        return Ok(json!({
            "op": info.name, "size": size.get(), "workgroup": [shape.x, shape.y, shape.z],
            "layout": layout.to_string(), "num_subgroups": w.num_subgroups(), "invocations": inv,
        })
        .to_string()
            + "\n");
    }
    let mut s = format!(
        "{} ({})  size {size}  workgroup {shape}  layout {layout}\ngl_NumSubgroups = {}\n",
        info.name,
        info.glsl,
        w.num_subgroups()
    );
    s += "gl_SubgroupID: local invocation ids (x,y,z) by subgroup and lane\n";
    for g in 0..w.num_subgroups() {
        let lanes: Vec<String> = (0..size.get())
            .map(|l| match w.invocation(g, l) {
                Some(i) => {
                    let id = shape.local_id(i);
                    format!("{}:({},{},{})", l, id[0], id[1], id[2])
                }
                None => format!("{l}:-"),
            })
            .collect();
        s += &format!(
            "  subgroup {g} [{} active]: {}\n",
            w.active(g).count(),
            lanes.join(" ")
        );
    }
    Ok(s)
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn eval_args_example() {
        use crate::cli::eval::{run, EvalArgs};
        // (`Default` leaves `ty` empty; clap fills in "u32" when parsing a command line.)
        let a = EvalArgs {
            op: "subgroupBroadcast".into(),
            size: 4,
            ty: "u32".into(),
            id: Some("3".into()),
            values: Some("10,11,12,13".into()),
            ..EvalArgs::default()
        };
        assert!(run(&a).unwrap().contains("result | 13 13 13 13"));
    }

    #[test]
    fn arg_help_example() {
        let h = crate::cli::eval::arg_help("delta");
        assert!(h.starts_with("a lane distance"), "{h}");
        assert!(
            h.contains("shuffle_down") && h.contains("clustered_rotate"),
            "{h}"
        );
    }

    #[test]
    fn eval_request_example() {
        use crate::cli::eval::{parse, EvalArgs};
        let req = parse(&EvalArgs {
            op: "rotate".into(),
            size: 8,
            delta: Some("1".into()),
            ty: "i8".into(),
            active: Some("0xf".into()),
            ..EvalArgs::default()
        })
        .unwrap();
        assert_eq!(req.ty.unwrap().to_string(), "i8");
        assert_eq!(req.values.len(), 8); // default values: each lane's id
        assert_eq!(req.active.count(), 4);
    }

    #[test]
    fn parse_example() {
        use crate::cli::eval::{parse, EvalArgs};
        let bad = EvalArgs {
            op: "add".into(),
            size: 4,
            ty: "bool".into(),
            ..EvalArgs::default()
        };
        let e = parse(&bad).unwrap_err();
        assert!(
            e.message.contains("add does not take bool"),
            "{}",
            e.message
        );
    }

    #[test]
    fn run_example() {
        use crate::cli::eval::{run, EvalArgs};
        let a = EvalArgs {
            op: "num_subgroups".into(),
            size: 8,
            workgroup: Some("3,5,7".into()),
            ..EvalArgs::default()
        };
        assert!(run(&a).unwrap().contains("gl_NumSubgroups = 14"));
    }

    #[test]
    fn to_json_example() {
        use crate::cli::eval::{parse, to_json, EvalArgs};
        use crate::model::evaluate;
        let req = parse(&EvalArgs {
            op: "shuffle_up".into(),
            size: 2,
            ty: "u32".into(),
            delta: Some("1".into()),
            ..EvalArgs::default()
        })
        .unwrap();
        let out = evaluate(&req.call, req.active, &req.values).unwrap();
        let j = to_json(&req, &out);
        assert_eq!(j["lanes"][0]["result"], "undefined");
        assert_eq!(j["lanes"][0]["why"], "delta 1 > lane id 0");
        assert_eq!(j["lanes"][1]["result"], 0);
    }

    #[test]
    fn to_table_example() {
        use crate::cli::eval::{parse, to_table, EvalArgs};
        use crate::model::evaluate;
        let req = parse(&EvalArgs {
            op: "quad_swap_horizontal".into(),
            size: 4,
            ty: "u32".into(),
            active: Some("0x7".into()),
            ..EvalArgs::default()
        })
        .unwrap();
        let out = evaluate(&req.call, req.active, &req.values).unwrap();
        let t = to_table(&req, &out);
        assert!(t.contains("result | 1 0 undef -"), "{t}");
        assert!(
            t.ends_with("undefined:\n  lane 2: source lane 3 is inactive\n"),
            "{t}"
        );
    }
}
