//! The three reconvergence models the specs allow: which one is in force. Its own module, so that
//! the executor (`exec`) and the rules (`flow`) both use it without using each other both ways.

use std::fmt;
use std::str::FromStr;

/// The reconvergence model in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// SPV_KHR_maximal_reconvergence (`MaximallyReconvergesKHR` execution mode).
    Maximal,
    /// SPV_KHR_subgroup_uniform_control_flow (`[[subgroup_uniform_control_flow]]`).
    Sucf,
    /// Core Vulkan: reconvergence only where the whole workgroup was converged.
    Base,
}

impl Mode {
    /// All three, strongest first.
    pub const ALL: [Mode; 3] = [Mode::Maximal, Mode::Sucf, Mode::Base];

    /// `maximal`, `sucf`, `base`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Maximal => "maximal",
            Mode::Sucf => "sucf",
            Mode::Base => "base",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "maximal" => Ok(Mode::Maximal),
            "sucf" => Ok(Mode::Sucf),
            "base" => Ok(Mode::Base),
            _ => Err(format!(
                "unknown reconvergence mode '{s}': maximal, sucf or base"
            )),
        }
    }
}
