//! How far a value may be from the one expected: one definition for `lockstep run`'s
//! `--rtol`/`--atol` (a device's inexact float against the model's) and AmberScript's and
//! VkScript's `TOLERANCE` (a buffer's value against the script's).
//!
//! `|actual − expected| ≤ abs + rel · |expected|`. AmberScript's `TOLERANCE 0.1` is `abs` 0.1 and
//! `TOLERANCE 5%` is `rel` 0.05 (google/amber `docs/amber_script.md`, "Expectations": "the
//! tolerance … can be … a percentage"; its verifier compares `|actual − expected|` with the value,
//! or with that percentage of `|expected|`). In a kernel run the model's value is the expected one:
//! the model is the reference, the device is checked against it.

use std::fmt;

/// How far an actual value may be from the expected one: `|a − e| ≤ abs + rel · |e|`.
///
/// ```
/// use lockstep::kernel::Tolerance;
/// assert!(Tolerance::percent(5.0).within(104.0, 100.0));
/// assert!(!Tolerance::percent(5.0).within(106.0, 100.0));
/// assert!(Tolerance::absolute(0.5).within(1.4, 1.0));
/// assert_eq!(Tolerance::percent(5.0).to_string(), "5%");
/// assert_eq!(Tolerance::default().to_string(), "0.000001 + 0.001%");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// relative part, a fraction of `|expected|`
    pub rel: f64,
    /// absolute part
    pub abs: f64,
}

impl Default for Tolerance {
    /// rel 1e-5 (about 80 ulp of f32), abs 1e-6: roomy for a handful of contracted or reordered
    /// operations, tight enough that a wrong formula shows.
    fn default() -> Self {
        Tolerance {
            rel: 1e-5,
            abs: 1e-6,
        }
    }
}

impl Tolerance {
    /// `|a − e| ≤ abs` (AmberScript `TOLERANCE 0.1`).
    pub const fn absolute(abs: f64) -> Tolerance {
        Tolerance { rel: 0.0, abs }
    }

    /// `|a − e| ≤ p % of |e|` (AmberScript `TOLERANCE 5%`).
    pub const fn percent(p: f64) -> Tolerance {
        Tolerance {
            rel: p / 100.0,
            abs: 0.0,
        }
    }

    /// A script's tolerance as written: `value`, a percentage of the expected value when written
    /// with `%`.
    pub const fn written(value: f64, percent: bool) -> Tolerance {
        if percent {
            Tolerance::percent(value)
        } else {
            Tolerance::absolute(value)
        }
    }

    /// Whether `actual` is within this tolerance of `expected` (a NaN on either side is not).
    pub fn within(self, actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= self.abs + self.rel * expected.abs()
    }
}

/// A number as people write it: at most 12 decimals, trailing zeros dropped (`5`, `0.000001`).
fn plain(x: f64) -> String {
    let s = format!("{x:.12}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Tolerance {
    /// `0.1`, `5%`, or both as `0.1 + 5%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, p) = (plain(self.abs), plain(self.rel * 100.0));
        if self.rel == 0.0 {
            f.write_str(&a)
        } else if self.abs == 0.0 {
            write!(f, "{p}%")
        } else {
            write!(f, "{a} + {p}%")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// google/amber `docs/amber_script.md`, "Expectations": a tolerance is absolute, or a
    /// percentage of the expected value when written with `%`.
    #[test]
    fn an_amber_tolerance_is_absolute_or_a_percentage_of_the_expected_value() {
        let pct = Tolerance::percent(10.0);
        // 10 % of the expected 100 is 10, whatever the actual value.
        assert!(pct.within(110.0, 100.0));
        assert!(pct.within(90.0, 100.0));
        assert!(!pct.within(110.5, 100.0));
        // relative to the expected value, not the larger one: 10 % of 100, not of 111
        assert!(!pct.within(111.0, 100.0));
        assert!(pct.within(-9.0, -10.0) && !pct.within(-8.9, -10.0));
        let abs = Tolerance::absolute(0.25);
        assert!(abs.within(1.25, 1.0) && !abs.within(1.26, 1.0));
        assert!(abs.within(1000.25, 1000.0));
        for t in [pct, abs, Tolerance::default()] {
            assert!(!t.within(f64::NAN, 1.0) && !t.within(1.0, f64::NAN));
        }
        assert_eq!(Tolerance::percent(0.000001).to_string(), "0.000001%");
        assert_eq!(Tolerance::absolute(0.25).to_string(), "0.25");
    }
}
