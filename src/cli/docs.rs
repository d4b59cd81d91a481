//! `lockstep docs`: writes the semantics pages generated from the model (or checks them), and
//! refreshes the command-output blocks of READMEs.

use crate::cli::{CliError, EXIT_MISMATCH};
use crate::docs;
use std::path::PathBuf;

/// Arguments of `lockstep docs`.
///
/// ```
/// use clap::Parser;
/// use lockstep::cli::{Cli, Command};
/// let cli = Cli::try_parse_from(["lockstep", "docs"]).unwrap();
/// let Command::Docs(a) = cli.command else { panic!() };
/// assert_eq!(a.out, std::path::Path::new("docs/semantics"));
/// assert_eq!(a.results, std::path::Path::new("docs/results"));
/// assert!(!a.check && a.readme.is_empty());
/// ```
#[derive(clap::Args, Debug, Clone)]
pub struct DocsArgs {
    /// Directory for the pages (basic.md … rotate.md, undefined.md).
    #[arg(long, default_value = "docs/semantics")]
    pub out: PathBuf,
    /// Directory of conformance reports (*.json) for the "what devices returned" section.
    #[arg(long, default_value = "docs/results")]
    pub results: PathBuf,
    /// Markdown files whose `<!-- lockstep-output: ARGS -->` blocks get the real output of `lockstep ARGS`
    /// (repeatable).
    #[arg(long)]
    pub readme: Vec<PathBuf>,
    /// Write nothing: compare with the committed files and exit 1 naming each file's first differing line.
    #[arg(long)]
    pub check: bool,
}

/// Runs `lockstep ARGS` in-process and returns what the binary would print: stdout on success,
/// `error: …` on failure (the README blocks show both).
pub fn command_output(args: &[String]) -> String {
    let argv: Vec<String> = std::iter::once("lockstep".to_string())
        .chain(args.iter().cloned())
        .collect();
    match crate::cli::run(&argv) {
        Ok(out) => out,
        Err(e) => {
            let msg = e.message.trim_end();
            if msg.starts_with("error:") {
                format!("{msg}\n")
            } else {
                format!("error: {msg}\n")
            }
        }
    }
}

fn refreshed(path: &PathBuf) -> Result<(String, String), CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("--readme {}: {e}", path.display())))?;
    let new = docs::refresh_output_blocks(&text, command_output)
        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    Ok((text, new))
}

/// Runs `lockstep docs`.
pub fn run(a: &DocsArgs) -> Result<String, CliError> {
    if a.check {
        let mut problems: Vec<String> = docs::check(&a.out, &a.results)
            .map_err(CliError::internal)?
            .iter()
            .map(|d| d.to_string())
            .collect();
        for path in &a.readme {
            let (old, new) = refreshed(path)?;
            if let Some((line, c, g)) = docs::first_difference(&old, &new) {
                problems.push(format!(
                    "{}:{line}: command output differs\n  committed: {:?}\n  generated: {:?}",
                    path.display(),
                    c.unwrap_or("(end of file)"),
                    g.unwrap_or("(end of file)")
                ));
            }
        }
        if problems.is_empty() {
            return Ok(format!("{} is up to date\n", a.out.display()));
        }
        return Err(CliError {
            code: EXIT_MISMATCH,
            message: format!(
                "the docs differ from the model (regenerate with `lockstep docs`):\n{}",
                problems.join("\n")
            ),
        });
    }
    let mut out = String::new();
    for p in docs::generate(&a.out, &a.results).map_err(CliError::internal)? {
        out += &format!("wrote {}\n", p.display());
    }
    for path in &a.readme {
        let (old, new) = refreshed(path)?;
        if old != new {
            std::fs::write(path, new)
                .map_err(|e| CliError::internal(format!("{}: {e}", path.display())))?;
            out += &format!("refreshed {}\n", path.display());
        }
    }
    Ok(out)
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn command_output_example() {
        let out = crate::cli::docs::command_output(&[
            "eval".into(),
            "elect".into(),
            "--size".into(),
            "2".into(),
        ]);
        assert!(out.starts_with("elect (subgroupElect)  size 2"), "{out}");
        let err = crate::cli::docs::command_output(&[
            "eval".into(),
            "elect".into(),
            "--size".into(),
            "3".into(),
        ]);
        assert!(
            err.starts_with("error: subgroup size 3 is invalid"),
            "{err}"
        );
    }

    #[test]
    fn run_example() {
        use crate::cli::docs::{run, DocsArgs};
        let dir = tempfile::tempdir().unwrap();
        let a = DocsArgs {
            out: dir.path().join("semantics"),
            results: dir.path().join("results"),
            readme: vec![],
            check: false,
        };
        assert_eq!(run(&a).unwrap().lines().count(), 10);
        assert!(run(&DocsArgs { check: true, ..a })
            .unwrap()
            .ends_with("is up to date\n"));
    }
}
