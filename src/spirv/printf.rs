//! `debugPrintfEXT` (GL_EXT_debug_printf; SPIR-V's `NonSemantic.DebugPrintf` instruction
//! `DebugPrintf`): the format string parsed once at decode time, and each invocation's line
//! formatted on the model as the Vulkan validation layers' debug printf formats it on a device
//! (Vulkan-ValidationLayers, docs/debug_printf.md, "Debug Printf Format String"):
//!
//! - a specifier is `%`, then flags, width and precision as C's `printf` takes them, then one of
//!   `d i` (signed), `o u x X` (unsigned), `a A e E f F g G` (float), `lu` (64-bit unsigned,
//!   decimal), `ul` and `lx` (64-bit unsigned, hexadecimal), `ld` (64-bit signed) or `p` (a
//!   pointer, hexadecimal);
//! - `%v2`, `%v3` or `%v4` before the conversion takes a vector and prints its components
//!   separated by `", "`;
//! - `%%` prints `%`;
//! - a `%` the layers do not know, or a width or precision over 4,096, is printed as text.
//!
//! NonSemantic.DebugPrintf: "If there are insufficient arguments for the format specifiers, the
//! behavior is undefined. If the format is exhausted while arguments remain, the excess arguments
//! are ignored." Too few arguments, or a vector specifier given a value of another size, is
//! refused when the module is decoded ([`Format::check`]).

use crate::words::facts::Scalar;
use crate::words::float::f_get;

/// The widest width or precision taken.
const MAX_FIELD: usize = 4096;

/// How one specifier converts a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conv {
    /// `d`, `i`: a signed integer of the value's width
    Signed,
    /// `u`
    Unsigned,
    /// `o`
    Octal,
    /// `x`, `X`
    Hex { upper: bool },
    /// `a A e E f F g G`: the conversion letter
    Float(char),
    /// `lu` (decimal), `ul` and `lx` (hexadecimal): 64-bit unsigned
    Long { hex: bool },
    /// `ld`: 64-bit signed
    LongSigned,
    /// `p`: a 64-bit address, hexadecimal
    Pointer,
}

/// One `%` specifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// the flags `-`, `+`, ` `, `0`, `#` given
    flags: String,
    /// minimum width
    width: Option<usize>,
    /// precision
    precision: Option<usize>,
    /// components: 1, or 2 to 4 for `%vN`
    pub(crate) n: u32,
    /// the conversion
    conv: Conv,
}

/// A piece of a format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// printed as it is
    Text(String),
    /// one argument
    Value(Spec),
}

/// A parsed format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Format {
    pub(crate) pieces: Vec<Piece>,
}

/// One component of an argument as the model holds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Component {
    /// its bits (as a register slot holds them)
    pub(crate) bits: u64,
    /// its type
    pub(crate) scalar: Scalar,
    /// undefined on the model: printed as `undefined`
    pub(crate) undefined: bool,
}

impl Format {
    /// Parses `s`. A `%` not followed by a specifier the layers know is printed as it is (the
    /// layers do no error checking either).
    pub(crate) fn parse(s: &str) -> Format {
        let b = s.as_bytes();
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                let start = i;
                while i < b.len() && b[i] != b'%' {
                    i += 1;
                }
                text.push_str(&s[start..i]);
                continue;
            }
            if b.get(i + 1) == Some(&b'%') {
                text.push('%');
                i += 2;
                continue;
            }
            match Self::spec(b, i + 1) {
                Some((spec, end)) => {
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Value(spec));
                    i = end;
                }
                None => {
                    text.push('%');
                    i += 1;
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Format { pieces }
    }

    /// The specifier starting after a `%` at `i`, and where it ends.
    fn spec(b: &[u8], mut i: usize) -> Option<(Spec, usize)> {
        let mut flags = String::new();
        while let Some(&c) = b.get(i) {
            if !b"-+ 0#".contains(&c) {
                break;
            }
            flags.push(c as char);
            i += 1;
        }
        let number = |i: &mut usize| -> Option<usize> {
            let start = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            // a width or precision past MAX_FIELD is not taken as one (a line per lane of
            // gigabytes helps nobody): the specifier is then text
            std::str::from_utf8(&b[start..*i])
                .ok()?
                .parse()
                .ok()
                .filter(|&n: &usize| n <= MAX_FIELD)
        };
        let digits = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
        let width = match digits(i) {
            true => Some(number(&mut i)?),
            false => None,
        };
        let mut precision = None;
        if b.get(i) == Some(&b'.') {
            i += 1;
            precision = Some(match digits(i) {
                true => number(&mut i)?,
                false => 0,
            });
        }
        let mut n = 1;
        if b.get(i) == Some(&b'v') {
            n = match b.get(i + 1) {
                Some(c @ b'2'..=b'4') => (c - b'0') as u32,
                _ => return None,
            };
            i += 2;
        }
        let (conv, len) = match (b.get(i).copied(), b.get(i + 1).copied()) {
            (Some(b'l'), Some(b'u')) => (Conv::Long { hex: false }, 2),
            (Some(b'l'), Some(b'x')) => (Conv::Long { hex: true }, 2),
            (Some(b'l'), Some(b'd')) => (Conv::LongSigned, 2),
            (Some(b'u'), Some(b'l')) => (Conv::Long { hex: true }, 2),
            (Some(b'd' | b'i'), _) => (Conv::Signed, 1),
            (Some(b'u'), _) => (Conv::Unsigned, 1),
            (Some(b'o'), _) => (Conv::Octal, 1),
            (Some(b'x'), _) => (Conv::Hex { upper: false }, 1),
            (Some(b'X'), _) => (Conv::Hex { upper: true }, 1),
            (Some(c @ (b'a' | b'A' | b'e' | b'E' | b'f' | b'F' | b'g' | b'G')), _) => {
                (Conv::Float(c as char), 1)
            }
            (Some(b'p'), _) if n == 1 => (Conv::Pointer, 1),
            _ => return None,
        };
        Some((
            Spec {
                flags,
                width,
                precision,
                n,
                conv,
            },
            i + len,
        ))
    }

    /// The specifiers, in order.
    pub(crate) fn specs(&self) -> impl Iterator<Item = &Spec> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Value(s) => Some(s),
            Piece::Text(_) => None,
        })
    }

    /// Refuses arguments the format cannot take: fewer values than specifiers, or a value whose
    /// component count is not its specifier's (`components` per argument, in order). Extra
    /// arguments are ignored, as NonSemantic.DebugPrintf says.
    pub(crate) fn check(&self, text: &str, components: &[u32]) -> Result<(), String> {
        let specs: Vec<&Spec> = self.specs().collect();
        if specs.len() > components.len() {
            return Err(format!(
                "debugPrintfEXT(\"{}\"): the format takes {} values and {} are given (NonSemantic.DebugPrintf: with too few arguments the behaviour is undefined)",
                text.escape_default(),
                specs.len(),
                components.len()
            ));
        }
        for (k, (s, &c)) in specs.iter().zip(components).enumerate() {
            if s.n != c {
                let hint = if c == 1 {
                    "a scalar takes a plain specifier: %f, %d, …".to_string()
                } else {
                    format!("a vector of {c} takes %v{c}f, %v{c}d, …")
                };
                return Err(format!(
                    "debugPrintfEXT(\"{}\"): value {} has {} component{} and its specifier takes {} ({hint})",
                    text.escape_default(),
                    k + 1,
                    c,
                    if c == 1 { "" } else { "s" },
                    s.n
                ));
            }
        }
        Ok(())
    }

    /// The line printed with `args` (each argument's components, in order).
    pub(crate) fn print(&self, args: &[Vec<Component>]) -> String {
        let mut out = String::new();
        let mut next = args.iter();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Value(s) => {
                    let Some(v) = next.next() else {
                        // `check` refused this at decode time
                        break;
                    };
                    for (c, x) in v.iter().enumerate() {
                        if c > 0 {
                            out.push_str(", ");
                        }
                        out.push_str(&s.one(*x));
                    }
                }
            }
        }
        out
    }
}

impl Spec {
    fn has(&self, flag: char) -> bool {
        self.flags.contains(flag)
    }

    /// The sign printed before a number: `-` for a negative one, else `+` with the `+` flag, a
    /// space with the ` ` flag, or nothing.
    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.has('+') {
            "+"
        } else if self.has(' ') {
            " "
        } else {
            ""
        }
    }

    /// One component as this specifier prints it.
    fn one(&self, x: Component) -> String {
        if x.undefined {
            return self.pad(String::new(), "undefined".into(), false);
        }
        // a bool prints as the integer 0 or 1
        let w = match x.scalar {
            Scalar::Bool => 32,
            s => s.bits(),
        };
        let masked = if w >= 64 {
            x.bits
        } else {
            x.bits & ((1u64 << w) - 1)
        };
        let signed = || -> i64 {
            if w >= 64 {
                x.bits as i64
            } else {
                ((masked << (64 - w)) as i64) >> (64 - w)
            }
        };
        let float = || -> f64 {
            match x.scalar {
                Scalar::Float { width } => f_get(width, x.bits),
                _ => f32::from_bits(x.bits as u32) as f64,
            }
        };
        match self.conv {
            Conv::Signed | Conv::LongSigned => {
                let v = signed();
                let sign = self.sign(v < 0);
                self.pad(sign.into(), self.digits(v.unsigned_abs().to_string()), true)
            }
            Conv::Unsigned | Conv::Long { hex: false } => {
                self.pad(String::new(), self.digits(masked.to_string()), true)
            }
            Conv::Octal => {
                let mut d = self.digits(format!("{masked:o}"));
                if self.has('#') && !d.starts_with('0') {
                    d.insert(0, '0');
                }
                self.pad(String::new(), d, true)
            }
            Conv::Hex { upper } => self.hex(masked, upper),
            Conv::Long { hex: true } => self.hex(masked, false),
            Conv::Pointer => self.pad("0x".into(), format!("{masked:x}"), true),
            Conv::Float(c) => self.float(float(), c),
        }
    }

    fn hex(&self, v: u64, upper: bool) -> String {
        let d = self.digits(if upper {
            format!("{v:X}")
        } else {
            format!("{v:x}")
        });
        let prefix = match (self.has('#') && v != 0, upper) {
            (false, _) => "",
            (true, false) => "0x",
            (true, true) => "0X",
        };
        self.pad(prefix.into(), d, true)
    }

    /// An integer's digits with its precision (the minimum number of digits; `.0` of zero prints
    /// none).
    fn digits(&self, d: String) -> String {
        match self.precision {
            Some(0) if d == "0" => String::new(),
            Some(p) if d.len() < p => format!("{}{d}", "0".repeat(p - d.len())),
            _ => d,
        }
    }

    /// `prefix` (sign, `0x`) and `body` padded to the width: left-justified with `-`, with zeros
    /// after the prefix with `0` (for integers only where no precision is given), else with
    /// spaces before.
    fn pad(&self, prefix: String, body: String, numeric: bool) -> String {
        let len = prefix.chars().count() + body.chars().count();
        let Some(w) = self.width.filter(|&w| w > len) else {
            return prefix + &body;
        };
        let fill = w - len;
        if self.has('-') {
            format!("{prefix}{body}{}", " ".repeat(fill))
        } else if numeric
            && self.has('0')
            && (matches!(self.conv, Conv::Float(_)) || self.precision.is_none())
        {
            format!("{prefix}{}{body}", "0".repeat(fill))
        } else {
            format!("{}{prefix}{body}", " ".repeat(fill))
        }
    }

    /// A float by C's `%a %e %f %g` (upper case for the capital letters).
    fn float(&self, v: f64, c: char) -> String {
        let upper = c.is_ascii_uppercase();
        let sign = self.sign(v.is_sign_negative());
        let a = v.abs();
        if !a.is_finite() {
            let t = if a.is_nan() { "nan" } else { "inf" };
            let t = if upper { t.to_uppercase() } else { t.into() };
            return self.pad(sign.into(), t, false);
        }
        let alt = self.has('#');
        let body = match c.to_ascii_lowercase() {
            'f' => fixed(a, self.precision.unwrap_or(6), alt),
            'e' => exponent(a, self.precision.unwrap_or(6), alt),
            'g' => general(a, self.precision.unwrap_or(6), alt),
            _ => hex_float(a, self.precision),
        };
        let body = if upper { body.to_uppercase() } else { body };
        if c.eq_ignore_ascii_case(&'a') {
            let (p, rest) = body.split_at(2);
            return self.pad(format!("{sign}{p}"), rest.into(), true);
        }
        self.pad(sign.into(), body, true)
    }
}

/// `%f`: `p` digits after the point (the point kept with `alt` where `p` is 0).
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut s = format!("{a:.p$}");
    if p == 0 && alt {
        s.push('.');
    }
    s
}

/// `%e`: one digit, `p` after the point, `e`, the exponent's sign and at least two digits.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$e}");
    let (m, e) = s.split_once('e').expect("Rust's {:e} writes an exponent");
    let e: i32 = e.parse().expect("an integer exponent");
    let dot = if p == 0 && alt { "." } else { "" };
    format!(
        "{m}{dot}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// `%g`: `%e` or `%f` by the exponent X that `%e` with precision P − 1 gives (P = `p`, or 1 where
/// `p` is 0): `%f` with precision P − 1 − X where P > X ≥ −4, else `%e` with P − 1; trailing zeros
/// (and a trailing point) removed unless `alt`.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let x: i32 = if a == 0.0 {
        0
    } else {
        let s = format!("{a:.*e}", p - 1);
        s.split_once('e')
            .and_then(|(_, e)| e.parse().ok())
            .unwrap_or(0)
    };
    let mut s = if (p as i32) > x && x >= -4 {
        fixed(a, (p as i32 - 1 - x) as usize, alt)
    } else {
        exponent(a, p - 1, alt)
    };
    if !alt {
        let (m, e) = match s.find('e') {
            Some(i) => (s[..i].to_string(), s[i..].to_string()),
            None => (s.clone(), String::new()),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m
        };
        s = m + &e;
    }
    s
}

/// `%a`: `0x1.` and the fraction's hexadecimal digits (all that are not trailing zeros, or `p`
/// of them, rounded to nearest even), `p` and the binary exponent; subnormals as `0x0.…p-1022`.
fn hex_float(a: f64, p: Option<usize>) -> String {
    if a == 0.0 {
        return match p {
            Some(n) if n > 0 => format!("0x0.{}p+0", "0".repeat(n)),
            _ => "0x0p+0".into(),
        };
    }
    let bits = a.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i64;
    let (mut lead, mut frac, exp) = if raw_exp == 0 {
        (0u64, bits & ((1 << 52) - 1), -1022i64)
    } else {
        (1u64, bits & ((1 << 52) - 1), raw_exp - 1023)
    };
    let digits = match p {
        Some(n) if n < 13 => {
            // round the 52-bit fraction to n hex digits, to nearest even
            let drop = 52 - 4 * n as u32;
            let half = 1u64 << (drop - 1);
            let rest = frac & ((1u64 << drop) - 1);
            let mut kept = frac >> drop;
            if rest > half || (rest == half && kept & 1 == 1) {
                kept += 1;
                if n == 0 || kept >> (4 * n) != 0 {
                    kept &= (1u64 << (4 * n)) - 1;
                    lead += 1;
                }
            }
            frac = kept;
            if n == 0 {
                String::new()
            } else {
                format!("{frac:0n$x}")
            }
        }
        Some(n) => format!("{frac:013x}{}", "0".repeat(n - 13)),
        None => format!("{frac:013x}").trim_end_matches('0').to_string(),
    };
    let point = if digits.is_empty() { "" } else { "." };
    format!(
        "0x{lead}{point}{digits}p{}{}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // C's `%a` of a zero (C17 7.21.6.1, the `a` conversion: "if the value is zero, the exponent
    // is zero"; the precision is the number of hexadecimal digits after the point, none without
    // one): `0x0p+0`, `0x0.000p+0` with precision 3, and precision 0 prints no point.
    #[test]
    fn a_hex_float_zero_has_as_many_digits_as_its_precision_asks() {
        assert_eq!(hex_float(0.0, None), "0x0p+0");
        assert_eq!(hex_float(0.0, Some(0)), "0x0p+0");
        assert_eq!(hex_float(0.0, Some(3)), "0x0.000p+0");
    }

    // C's `%a` leaves the digit before the point of a subnormal unspecified (C17 7.21.6.1: "nonzero
    // if the argument is a normalized floating-point number and is otherwise unspecified"); the
    // layers print with glibc's `snprintf`, which writes a subnormal double as `0x0.` and its 52
    // fraction bits at exponent -1022. A float's subnormal is a normal double once widened (C's
    // default argument promotions), so it prints as `0x1…`.
    #[test]
    fn a_hex_float_subnormal_prints_its_fraction_at_the_least_exponent() {
        assert_eq!(
            hex_float(f64::from_bits(0x0008_0000_0000_0000), None),
            "0x0.8p-1022"
        );
        assert_eq!(
            hex_float(f64::from_bits(0x000c_0000_0000_0001), None),
            "0x0.c000000000001p-1022"
        );
        assert_eq!(hex_float(f64::from_bits(1), Some(2)), "0x0.00p-1022");
        assert_eq!(f("%a", f32::from_bits(1)), "0x1p-149");
    }

    fn c(bits: u64, scalar: Scalar) -> Component {
        Component {
            bits,
            scalar,
            undefined: false,
        }
    }
    const U32: Scalar = Scalar::Int {
        width: 32,
        signed: false,
    };
    const I32: Scalar = Scalar::Int {
        width: 32,
        signed: true,
    };
    const F32: Scalar = Scalar::Float { width: 32 };
    const F64: Scalar = Scalar::Float { width: 64 };

    fn one(fmt: &str, x: Component) -> String {
        Format::parse(fmt).print(&[vec![x]])
    }
    fn f(fmt: &str, v: f32) -> String {
        one(fmt, c(v.to_bits() as u64, F32))
    }

    /// Expected strings are C's `printf` (ISO C 7.21.6.1, the conversions the layers hand to
    /// `snprintf`), worked by hand.
    #[test]
    fn integers_print_as_c_s_printf_prints_them() {
        assert_eq!(one("%d", c(0xffff_fffb, I32)), "-5");
        assert_eq!(one("%i", c(0xffff_fffb, U32)), "-5"); // the bits, as a signed int
        assert_eq!(one("%u", c(0xffff_fffb, U32)), "4294967291");
        assert_eq!(one("%x", c(255, U32)), "ff");
        assert_eq!(one("%X", c(255, U32)), "FF");
        assert_eq!(one("%#x", c(255, U32)), "0xff");
        assert_eq!(one("%o", c(8, U32)), "10");
        assert_eq!(one("%#o", c(8, U32)), "010");
        assert_eq!(one("%5d", c(42, I32)), "   42");
        assert_eq!(one("%-5d|", c(42, I32)), "42   |");
        assert_eq!(one("%05d", c(0xffff_ffd6, I32)), "-0042");
        assert_eq!(one("%+d", c(42, I32)), "+42");
        assert_eq!(one("%.3d", c(7, I32)), "007");
        assert_eq!(one("%.0d|", c(0, I32)), "|");
        let big = 0x2000_0000_0000_0001u64;
        let u64t = Scalar::Int {
            width: 64,
            signed: false,
        };
        assert_eq!(one("%lu", c(big, u64t)), "2305843009213693953");
        assert_eq!(one("0x%lx", c(big, u64t)), "0x2000000000000001");
        assert_eq!(one("%ul", c(big, u64t)), "2000000000000001");
        assert_eq!(one("%ld", c(u64::MAX, u64t)), "-1");
        let i8t = Scalar::Int {
            width: 8,
            signed: true,
        };
        assert_eq!(one("%d", c(0xfe, i8t)), "-2");
        assert_eq!(one("%d", c(1, Scalar::Bool)), "1");
    }

    #[test]
    fn floats_print_as_c_s_printf_prints_them() {
        assert_eq!(f("%f", 1.2345), "1.234500");
        assert_eq!(f("%1.2f", 1.2367), "1.24");
        assert_eq!(f("%8.3f|", -2.5), "  -2.500|");
        assert_eq!(f("%08.3f", -2.5), "-002.500");
        assert_eq!(f("%.0f", 2.5), "2"); // to nearest even
        assert_eq!(f("%#.0f", 3.0), "3.");
        assert_eq!(f("%e", 1234.5), "1.234500e+03");
        assert_eq!(f("%.2E", 0.000123), "1.23E-04");
        assert_eq!(f("%g", 0.0001), "0.0001");
        assert_eq!(f("%g", 0.00001), "1e-05");
        assert_eq!(f("%g", 123456.0), "123456");
        assert_eq!(f("%g", 1234567.0), "1.23457e+06");
        assert_eq!(f("%g", 100.0), "100");
        assert_eq!(f("%G", 1e-10), "1E-10");
        assert_eq!(f("%#g", 1.5), "1.50000");
        assert_eq!(f("%g", 0.0), "0");
        assert_eq!(f("%a", 1.0), "0x1p+0");
        assert_eq!(f("%a", 0.5), "0x1p-1");
        assert_eq!(f("%a", 3.0), "0x1.8p+1");
        assert_eq!(f("%A", -10.0), "-0X1.4P+3");
        assert_eq!(f("%.1a", 1.96875), "0x2.0p+0"); // 0x1.f8 rounds up into the leading digit
        assert_eq!(f("%a", 0.0), "0x0p+0");
        assert_eq!(f("%f", f32::INFINITY), "inf");
        assert_eq!(f("%F", f32::NEG_INFINITY), "-INF");
        assert_eq!(f("%f", f32::NAN), "nan");
        assert_eq!(f("%+.1f", 0.25), "+0.2");
        assert_eq!(one("%.3f", c(0.1f64.to_bits(), F64)), "0.100");
    }

    #[test]
    fn vectors_percent_signs_and_undefined_values() {
        let v = |x: [f32; 4]| -> Vec<Component> {
            x.iter().map(|x| c(x.to_bits() as u64, F32)).collect()
        };
        let fmt = Format::parse("100%% v = %1.2v4f!");
        assert_eq!(
            fmt.print(&[v([1.2, 2.2, 3.2, 4.2])]),
            "100% v = 1.20, 2.20, 3.20, 4.20!"
        );
        let mut u = c(7, U32);
        u.undefined = true;
        assert_eq!(
            Format::parse("[%u] [%4u]").print(&[vec![u], vec![c(7, U32)]]),
            "[undefined] [   7]"
        );
        // a % the layers do not know is text; "% o" is C's octal with the space flag
        assert_eq!(Format::parse("100%% sure, %q").print(&[]), "100% sure, %q");
        assert_eq!(Format::parse("50% off").specs().count(), 1);
        assert_eq!(Format::parse("%v5d").specs().count(), 0);
        // a pointer has no vector form (the layers' vector sizes go with the numeric conversions)
        assert_eq!(Format::parse("%p %v2p").specs().count(), 1);
        // a width or precision past 4096 is not one: the specifier is text
        assert_eq!(
            Format::parse("%99999999999d|%.5000f").print(&[]),
            "%99999999999d|%.5000f"
        );
        assert_eq!(Format::parse("%4096d").specs().count(), 1);
    }

    #[test]
    fn a_format_refuses_too_few_values_and_vectors_of_the_wrong_size() {
        let fmt = Format::parse("%d and %v3f");
        assert!(fmt.check("%d and %v3f", &[1, 3]).is_ok());
        assert!(fmt.check("%d and %v3f", &[1, 3, 2]).is_ok()); // extra values are ignored
        let e = fmt.check("%d and %v3f", &[1]).unwrap_err();
        assert!(e.contains("takes 2 values and 1 are given"), "{e}");
        assert!(e.contains("NonSemantic.DebugPrintf"), "{e}");
        let e = fmt.check("%d and %v3f", &[1, 4]).unwrap_err();
        assert!(
            e.contains("value 2 has 4 components and its specifier takes 3"),
            "{e}"
        );
    }
}
