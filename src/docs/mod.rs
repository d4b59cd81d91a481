//! Documentation generated from the model: `docs/semantics/<category>.md` for every category and
//! `docs/semantics/undefined.md`, with every lane table evaluated by [`crate::model`], and the
//! command-output blocks of the READMEs.
//!
//! Pages are derived from the op catalogue: signatures from argument kinds and type classes
//! ([`glsl_signatures`]), inputs from categories ([`illustrations`]), undefined cases from a search
//! over inputs ([`undefined_cases`]). `cli::docs_tests` regenerates everything into a temporary
//! directory and fails, naming the file and first differing line, when the committed pages drift.

mod examples;
mod glsl;
mod kernels;
mod markdown;
mod pages;
mod readme;
mod reports;
mod undefined;
mod uses;
pub(crate) use readme::refresh_output_blocks;
pub(crate) use reports::{read_reports, LoadedReport};
// What the generator's tests (`cli::docs_tests`) reach besides.
#[cfg(test)]
pub(crate) use {
    examples::{divergent_mask, illustrations, undefined_cases, Example},
    glsl::{extended_gen_types, glsl_signatures},
    kernels::EXAMPLE_KERNELS,
    markdown::lane_table,
    readme::OUTPUT_MARKER,
    reports::{sentence, PatternCount, Report, ReportDevice, UndefinedObserved},
};

use crate::model::Category;
use std::path::{Path, PathBuf};

/// The line under every generated page's title; also how a stale generated page is recognised.
pub const GENERATED_NOTICE: &str = "> Generated from the reference model by \
    `lockstep docs --out docs/semantics` — do not edit by hand; `cargo test` fails when this page \
    and the model disagree.";

/// An error reading reports or writing pages.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// the path
        path: PathBuf,
        /// the cause
        source: std::io::Error,
    },
    /// A `docs/results/*.json` file is not a conformance report.
    #[error("{}: not a conformance report: {source}", path.display())]
    BadReport {
        /// the file
        path: PathBuf,
        /// the JSON error
        source: serde_json::Error,
    },
}

impl DocsError {
    fn io(path: &Path, source: std::io::Error) -> DocsError {
        DocsError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A generated page: its path relative to the output directory, and its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// `shuffle.md`, `undefined.md`, …
    pub path: String,
    /// Markdown.
    pub content: String,
}

/// Every generated page, in order: one per category ([`Category::ALL`]), then `undefined.md`.
pub fn render_all(reports: &[LoadedReport]) -> Vec<Page> {
    let mut v: Vec<Page> = Category::ALL
        .iter()
        .map(|c| Page {
            path: format!("{}.md", c.name()),
            content: pages::category_page(*c),
        })
        .collect();
    v.push(Page {
        path: "undefined.md".into(),
        content: undefined::undefined_page(reports),
    });
    v
}

/// Renders every page with the reports of `results_dir` and writes them to `out_dir` (created if
/// missing). Returns the files written.
pub fn generate(out_dir: &Path, results_dir: &Path) -> Result<Vec<PathBuf>, DocsError> {
    let reports = read_reports(results_dir)?;
    std::fs::create_dir_all(out_dir).map_err(|e| DocsError::io(out_dir, e))?;
    let mut written = Vec::new();
    for page in render_all(&reports) {
        let path = out_dir.join(&page.path);
        std::fs::write(&path, page.content).map_err(|e| DocsError::io(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// How a committed file differs from what the generator produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drift {
    /// The committed file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: DriftKind,
}

/// The kinds of [`Drift`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriftKind {
    /// The generator writes the file but it is not committed.
    Missing,
    /// The file carries the generated-page notice but the generator no longer writes it.
    Stale,
    /// The contents differ; `line` is the first differing line (1-based), `None` past the end.
    Differs {
        /// first differing line number, 1-based
        line: usize,
        /// the committed line
        committed: Option<String>,
        /// the generated line
        generated: Option<String>,
    },
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.path.display();
        match &self.kind {
            DriftKind::Missing => write!(f, "{p}: not committed (the generator writes it)"),
            DriftKind::Stale => write!(
                f,
                "{p}: a generated page that the generator no longer writes (delete it)"
            ),
            DriftKind::Differs {
                line,
                committed,
                generated,
            } => {
                let show = |l: &Option<String>| match l {
                    Some(t) => format!("{t:?}"),
                    None => "(end of file)".to_string(),
                };
                write!(
                    f,
                    "{p}:{line}: first difference\n  committed: {}\n  generated: {}",
                    show(committed),
                    show(generated)
                )
            }
        }
    }
}

/// The first line (1-based) where `committed` and `generated` differ, with both lines; `None` if equal.
pub fn first_difference<'a>(
    committed: &'a str,
    generated: &'a str,
) -> Option<(usize, Option<&'a str>, Option<&'a str>)> {
    if committed == generated {
        return None;
    }
    let a: Vec<&str> = committed.lines().collect();
    let b: Vec<&str> = generated.lines().collect();
    for i in 0..a.len().max(b.len()) {
        if a.get(i) != b.get(i) {
            return Some((i + 1, a.get(i).copied(), b.get(i).copied()));
        }
    }
    // Same lines, different line endings or final newline.
    Some((a.len().max(b.len()) + 1, None, None))
}

/// Compares the pages generated into `generated_dir` with those committed in `committed_dir`:
/// every generated file must be committed and equal, and no other file of `committed_dir` may carry
/// the [`GENERATED_NOTICE`].
pub fn compare_dirs(generated_dir: &Path, committed_dir: &Path) -> Result<Vec<Drift>, DocsError> {
    let list = |dir: &Path| -> Result<Vec<String>, DocsError> {
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| DocsError::io(dir, e))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Ok(v)
    };
    let generated = list(generated_dir)?;
    let mut drifts = Vec::new();
    for name in &generated {
        let g_path = generated_dir.join(name);
        let c_path = committed_dir.join(name);
        let g = std::fs::read_to_string(&g_path).map_err(|e| DocsError::io(&g_path, e))?;
        if !c_path.is_file() {
            drifts.push(Drift {
                path: c_path,
                kind: DriftKind::Missing,
            });
            continue;
        }
        let c = std::fs::read_to_string(&c_path).map_err(|e| DocsError::io(&c_path, e))?;
        if let Some((line, committed, generated)) = first_difference(&c, &g) {
            drifts.push(Drift {
                path: c_path,
                kind: DriftKind::Differs {
                    line,
                    committed: committed.map(str::to_string),
                    generated: generated.map(str::to_string),
                },
            });
        }
    }
    for name in list(committed_dir)? {
        if generated.contains(&name) || !name.ends_with(".md") {
            continue;
        }
        let path = committed_dir.join(&name);
        let text = std::fs::read_to_string(&path).map_err(|e| DocsError::io(&path, e))?;
        if text.contains(GENERATED_NOTICE) {
            drifts.push(Drift {
                path,
                kind: DriftKind::Stale,
            });
        }
    }
    Ok(drifts)
}

/// Regenerates the pages into a temporary directory and compares them with `out_dir`
/// ([`compare_dirs`]); an empty list means the committed pages are up to date.
pub fn check(out_dir: &Path, results_dir: &Path) -> Result<Vec<Drift>, DocsError> {
    let tmp = tempfile::tempdir().map_err(|e| DocsError::io(&std::env::temp_dir(), e))?;
    generate(tmp.path(), results_dir)?;
    compare_dirs(tmp.path(), out_dir)
}
