//! Why a module cannot be run: malformed SPIR-V, something outside the supported subset, bad
//! run parameters, or a run that was stopped. Each names the rule and, where known, the source line.

use std::fmt;

/// Where in the module an error or a finding is: the source file and line from `OpLine` when the
/// module carries debug info, and always the SPIR-V instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Location {
    /// source file (from `OpString`/`OpSource`), if known
    pub file: Option<String>,
    /// source line, if known
    pub line: Option<u32>,
    /// the SPIR-V instruction (`OpFDiv`, `OpGroupNonUniformShuffleDown`, …)
    pub op: String,
    /// result id of the instruction, if it has one
    pub id: Option<u32>,
    /// the label of the block the instruction is in (a function's instruction), so that one
    /// without a line or a result id (`OpStore`, `OpSelectionMerge`) is still found in the module
    pub block: Option<u32>,
    /// the names the module gives the result id and the block's label (`OpName`, or a SPIR-V
    /// assembly text's `%names`), shown in their place where there is no line
    /// (boxed: most locations have none, and an error carries its location)
    pub names: Option<Box<(Option<String>, Option<String>)>>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}")?,
            (None, Some(line)) => write!(f, "line {line}")?,
            _ => {
                let (id_name, block_name) = match self.names.as_deref() {
                    Some((i, b)) => (i.as_ref(), b.as_ref()),
                    None => (None, None),
                };
                match (self.id, self.block, id_name, block_name) {
                    (Some(_), _, Some(n), _) => write!(f, "%{n}")?,
                    (Some(id), _, None, _) => write!(f, "%{id}")?,
                    (None, Some(_), _, Some(n)) => write!(f, "block %{n}")?,
                    (None, Some(b), _, None) => write!(f, "block %{b}")?,
                    (None, None, _, _) => f.write_str("(no line info)")?,
                }
            }
        }
        Ok(())
    }
}

/// An error from decoding or running a module.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpirvError {
    /// The words are not a valid SPIR-V module.
    #[error("malformed SPIR-V: {0}")]
    Malformed(String),
    /// Valid SPIR-V outside the subset the interpreter runs.
    #[error("unsupported{}: {what}", at.as_ref().map(|l| format!(" at {l} ({})", l.op)).unwrap_or_default())]
    Unsupported {
        /// what is not supported
        what: String,
        /// where
        at: Option<Location>,
    },
    /// The module and the run parameters do not fit together (missing binding, small buffer, …).
    #[error("{0}")]
    Setup(String),
    /// A run stopped before the end.
    #[error("stopped at {at}: {why}")]
    Stopped {
        /// why
        why: String,
        /// where
        at: Location,
    },
}

impl SpirvError {
    /// An unsupported feature with no location yet.
    pub fn unsupported(what: impl Into<String>) -> SpirvError {
        SpirvError::Unsupported {
            what: what.into(),
            at: None,
        }
    }

    /// Malformed input.
    pub fn malformed(what: impl Into<String>) -> SpirvError {
        SpirvError::Malformed(what.into())
    }

    /// Attaches a location to an error that has none.
    pub fn at(self, loc: &Location) -> SpirvError {
        match self {
            SpirvError::Unsupported { what, at: None } => SpirvError::Unsupported {
                what,
                at: Some(loc.clone()),
            },
            SpirvError::Malformed(m) => {
                SpirvError::Malformed(format!("{m} (at {loc}, {})", loc.op))
            }
            other => other,
        }
    }
}
