//! The Vulkan environment a module is made for, and the SPIR-V version it fixes: one definition
//! for `lockstep run --target-env`, AmberScript's `TARGET_ENV`, VkScript's `spirv1.4` requirement
//! and the GLSL compiler.
//!
//! Each Vulkan version consumes SPIR-V up to a version (Vulkan 1.3, appendix "SPIR-V Environment":
//! 1.1 → SPIR-V 1.3, 1.2 → 1.5, 1.3 → 1.6). A name that gives only a SPIR-V version (`spv1.4`,
//! Amber's `universal1.5`) or a Vulkan version below 1.1 (`vulkan1.0`, which subgroup operations
//! need anyway) maps to the lowest environment that consumes it natively, and a module is compiled
//! and assembled for that environment: `spv1.0`–`spv1.3` and `vulkan1.0` → Vulkan 1.1;
//! `spv1.4`, `spv1.5` and `vulkan1.1spv1.4` → Vulkan 1.2; `spv1.6` → Vulkan 1.3.

use std::fmt;
use std::str::FromStr;

/// The Vulkan environment a module is made for, which fixes its SPIR-V version.
///
/// ```
/// use lockstep::kernel::TargetEnv;
/// assert_eq!("spv1.3".parse::<TargetEnv>().unwrap(), TargetEnv::Vulkan1_1);
/// assert_eq!("universal1.5".parse::<TargetEnv>().unwrap(), TargetEnv::Vulkan1_2);
/// assert_eq!("vulkan1.2".parse::<TargetEnv>().unwrap(), TargetEnv::Vulkan1_2);
/// assert_eq!(TargetEnv::Vulkan1_3.spirv_version(), (1, 6));
/// assert_eq!(TargetEnv::Vulkan1_2.to_string(), "vulkan1.2");
/// assert!("spv2.0".parse::<TargetEnv>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetEnv {
    /// Vulkan 1.1, SPIR-V 1.3
    Vulkan1_1,
    /// Vulkan 1.2, SPIR-V 1.5
    Vulkan1_2,
    /// Vulkan 1.3, SPIR-V 1.6
    Vulkan1_3,
}

impl TargetEnv {
    /// Every environment, oldest first (the order the GLSL compiler tries them in).
    pub const ALL: [TargetEnv; 3] = [
        TargetEnv::Vulkan1_1,
        TargetEnv::Vulkan1_2,
        TargetEnv::Vulkan1_3,
    ];

    /// The names [`TargetEnv`] parses, for messages.
    pub const NAMES: &'static str =
        "vulkan1.0 … vulkan1.3, vulkan1.1spv1.4, spv1.0 … spv1.6 or universal1.0 … universal1.6";

    /// The SPIR-V version (major, minor) this environment consumes natively.
    pub fn spirv_version(self) -> (u8, u8) {
        match self {
            TargetEnv::Vulkan1_1 => (1, 3),
            TargetEnv::Vulkan1_2 => (1, 5),
            TargetEnv::Vulkan1_3 => (1, 6),
        }
    }

    /// The lowest environment that accepts a module of SPIR-V version `major.minor` (1.0–1.6).
    ///
    /// ```
    /// use lockstep::kernel::TargetEnv;
    /// assert_eq!(TargetEnv::for_spirv(1, 0), Some(TargetEnv::Vulkan1_1));
    /// assert_eq!(TargetEnv::for_spirv(1, 4), Some(TargetEnv::Vulkan1_2));
    /// assert_eq!(TargetEnv::for_spirv(1, 7), None);
    /// ```
    pub fn for_spirv(major: u8, minor: u8) -> Option<TargetEnv> {
        match (major, minor) {
            (1, 0..=3) => Some(TargetEnv::Vulkan1_1),
            (1, 4 | 5) => Some(TargetEnv::Vulkan1_2),
            (1, 6) => Some(TargetEnv::Vulkan1_3),
            _ => None,
        }
    }

    /// The name this environment parses from and prints as (`vulkan1.1`).
    pub fn name(self) -> &'static str {
        match self {
            TargetEnv::Vulkan1_1 => "vulkan1.1",
            TargetEnv::Vulkan1_2 => "vulkan1.2",
            TargetEnv::Vulkan1_3 => "vulkan1.3",
        }
    }
}

impl fmt::Display for TargetEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target environment name outside the set ([`TargetEnv`]'s docs list it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown target environment '{0}' (expected {names})", names = TargetEnv::NAMES)]
pub struct UnknownTargetEnv(pub String);

impl FromStr for TargetEnv {
    type Err = UnknownTargetEnv;

    /// Case-insensitive: `vulkan1.0`…`vulkan1.3`, `vulkan1.1spv1.4`, and the SPIR-V names of
    /// SPIRV-Tools and Amber, `spv1.0`…`spv1.6` and `universal1.0`…`universal1.6`.
    fn from_str(s: &str) -> Result<TargetEnv, UnknownTargetEnv> {
        let t = s.trim().to_ascii_lowercase();
        let spirv_minor = |v: &str| {
            v.strip_prefix("1.")
                .filter(|m| m.len() == 1)
                .and_then(|m| m.parse::<u8>().ok())
        };
        let env = match t.as_str() {
            "vulkan1.0" | "vulkan1.1" => Some(TargetEnv::Vulkan1_1),
            "vulkan1.1spv1.4" | "vulkan1.2" => Some(TargetEnv::Vulkan1_2),
            "vulkan1.3" => Some(TargetEnv::Vulkan1_3),
            _ => t
                .strip_prefix("spv")
                .or_else(|| t.strip_prefix("universal"))
                .and_then(spirv_minor)
                .and_then(|m| TargetEnv::for_spirv(1, m)),
        };
        env.ok_or_else(|| UnknownTargetEnv(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vulkan 1.3 appendix "SPIR-V Environment": "Vulkan 1.1 … SPIR-V 1.0 – 1.3", "Vulkan 1.2 …
    /// SPIR-V 1.0 – 1.5", "Vulkan 1.3 … SPIR-V 1.0 – 1.6"; VK_KHR_spirv_1_4 lets Vulkan 1.1 take
    /// 1.4, which the lowest environment consuming it natively is Vulkan 1.2.
    #[test]
    fn each_name_maps_to_the_lowest_environment_consuming_its_spirv_version() {
        for (s, t) in [
            ("vulkan1.0", TargetEnv::Vulkan1_1),
            ("vulkan1.1", TargetEnv::Vulkan1_1),
            ("spv1.0", TargetEnv::Vulkan1_1),
            ("universal1.0", TargetEnv::Vulkan1_1),
            ("spv1.3", TargetEnv::Vulkan1_1),
            ("spv1.4", TargetEnv::Vulkan1_2),
            ("vulkan1.1spv1.4", TargetEnv::Vulkan1_2),
            ("spv1.5", TargetEnv::Vulkan1_2),
            ("universal1.5", TargetEnv::Vulkan1_2),
            ("vulkan1.2", TargetEnv::Vulkan1_2),
            ("spv1.6", TargetEnv::Vulkan1_3),
            (" Vulkan1.3 ", TargetEnv::Vulkan1_3),
        ] {
            assert_eq!(s.parse::<TargetEnv>(), Ok(t), "{s}");
            // each prints as the name it parses from
            assert_eq!(t.to_string().parse::<TargetEnv>(), Ok(t));
            assert_eq!(t.to_string(), t.name());
            let (major, minor) = t.spirv_version();
            assert_eq!(TargetEnv::for_spirv(major, minor), Some(t));
        }
        for bad in [
            "",
            "vulkan1.4",
            "spv1.7",
            "spv1.10",
            "universal2.0",
            "opencl2.2",
            "spv1.",
        ] {
            let e = bad.parse::<TargetEnv>().unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }
}
