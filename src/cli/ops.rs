//! `lockstep ops`: the catalogue as a table.

use crate::cli::CliError;
use crate::model::{catalogue, Category};

/// Arguments of `lockstep ops`.
#[derive(clap::Args, Debug)]
pub struct OpsArgs {
    /// Only this category (basic, vote, ballot, arithmetic, shuffle, shuffle-relative, clustered, quad, rotate).
    #[arg(long)]
    pub category: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `lockstep ops`.
pub fn run(a: &OpsArgs) -> Result<String, CliError> {
    let cat: Option<Category> = match &a.category {
        Some(c) => Some(c.parse().map_err(CliError::usage)?),
        None => None,
    };
    let ops: Vec<_> = catalogue()
        .iter()
        .filter(|o| cat.is_none_or(|c| o.category == c))
        .collect();
    if a.json {
        let v: Vec<serde_json::Value> = ops
            .iter()
            .map(|o| {
                serde_json::json!({
                    "name": o.name,
                    "glsl": o.glsl,
                    "category": o.category.name(),
                    "args": o.args.iter().map(|a| a.name()).collect::<Vec<_>>(),
                    "types": o.types.types().iter().map(|t| t.to_string()).collect::<Vec<_>>(),
                    "features": o.features.iter().map(|f| f.vulkan_name()).collect::<Vec<_>>(),
                    "rule": o.rule,
                    "spec": o.spec,
                })
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&v).unwrap_or_default() + "\n");
    }
    let mut rows = vec![vec![
        "name".to_string(),
        "glsl".into(),
        "category".into(),
        "arguments".into(),
        "types".into(),
        "feature".into(),
    ]];
    for o in ops {
        let args: Vec<String> = o
            .args
            .iter()
            .map(|a| {
                if a.uniform() {
                    a.name().to_string()
                } else {
                    format!("{}[lane]", a.name())
                }
            })
            .collect();
        rows.push(vec![
            o.name.clone(),
            o.glsl.clone(),
            o.category.name().into(),
            if args.is_empty() {
                "-".into()
            } else {
                args.join(", ")
            },
            o.types.short().into(),
            o.features
                .iter()
                .map(|f| f.vulkan_name())
                .collect::<Vec<_>>()
                .join(" + "),
        ]);
    }
    Ok(crate::text::table(&rows))
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn ops_args_example() {
        use crate::cli::ops::{run, OpsArgs};
        let out = run(&OpsArgs {
            category: Some("rotate".into()),
            json: false,
        })
        .unwrap();
        assert_eq!(out.lines().count(), 4); // header, rule, rotate, clustered_rotate
        assert!(run(&OpsArgs {
            category: Some("warp".into()),
            json: false
        })
        .is_err());
    }

    #[test]
    fn run_example() {
        use crate::cli::ops::{run, OpsArgs};
        let json = run(&OpsArgs {
            category: Some("vote".into()),
            json: true,
        })
        .unwrap();
        let ops: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(ops[0]["glsl"], "subgroupAll");
        assert_eq!(ops[2]["types"].as_array().unwrap().len(), 48);
    }
}
