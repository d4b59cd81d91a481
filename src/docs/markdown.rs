//! Markdown building blocks: per-lane tables (DirectX-Specs style: lanes as columns) and plain tables.

use crate::docs::examples::Example;
use crate::model::{Ballot, LaneArg, Outcome, Value, ValueType};

/// A Markdown table: header row, then rows; `right` aligns every column but the first to the right.
pub fn table(header: &[String], rows: &[Vec<String>], right: bool) -> String {
    let mut s = String::new();
    s += &format!("| {} |\n", header.join(" | "));
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if right && i > 0 { "--:" } else { "---" })
        .collect();
    s += &format!("| {} |\n", rule.join(" | "));
    for r in rows {
        s += &format!("| {} |\n", r.join(" | "));
    }
    s
}

/// Escapes `|` so that text can sit in a table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A value as a table shows it: uvec4 masks as one hex number (lane i = bit i), everything else as
/// [`Value`]'s `Display`.
pub fn value(v: &Value) -> String {
    if v.ty() == ValueType::UVEC4 {
        let w = v.bits();
        let b = Ballot::from_words([w[0] as u32, w[1] as u32, w[2] as u32, w[3] as u32]);
        format!("0x{:x}", b.0)
    } else {
        v.to_string()
    }
}

/// A lane's result as a table shows it: `-` inactive, `undef` undefined, else the value.
pub fn outcome(o: &Outcome) -> String {
    match o {
        Outcome::Inactive => "-".into(),
        Outcome::Undefined(_) => "undef".into(),
        Outcome::Defined(v) => value(v),
    }
}

/// The per-lane table of an evaluated example: a row of lane numbers, then `active` (`x` or `-`),
/// one row per per-lane argument, `value` (the operand; `-` in inactive lanes, whose values are
/// never read) and `result`; under it, the reason of every undefined lane.
pub fn lane_table(ex: &Example, out: &[Outcome]) -> String {
    let n = ex.size.lanes();
    let header: Vec<String> = std::iter::once("lane".to_string())
        .chain((0..n).map(|l| l.to_string()))
        .collect();
    let active = |l: usize| ex.active.has(l as u32);
    let mut rows = vec![std::iter::once("active".to_string())
        .chain((0..n).map(|l| if active(l) { "x" } else { "-" }.to_string()))
        .collect::<Vec<_>>()];
    let a = &ex.args;
    for (name, arg) in [
        ("id", &a.id),
        ("mask", &a.mask),
        ("delta", &a.delta),
        ("index", &a.index),
    ] {
        if let Some(LaneArg::PerLane(v)) = arg {
            rows.push(
                std::iter::once(format!("`{name}`"))
                    .chain((0..n).map(|l| {
                        if active(l) {
                            v[l].to_string()
                        } else {
                            "-".into()
                        }
                    }))
                    .collect(),
            );
        }
    }
    if !ex.values.is_empty() {
        rows.push(
            std::iter::once("value".to_string())
                .chain((0..n).map(|l| {
                    if active(l) {
                        value(&ex.values[l])
                    } else {
                        "-".into()
                    }
                }))
                .collect(),
        );
    }
    rows.push(
        std::iter::once("**result**".to_string())
            .chain(out.iter().map(|o| match o {
                Outcome::Undefined(_) => "**undef**".to_string(),
                o => outcome(o),
            }))
            .collect(),
    );
    let mut s = table(&header, &rows, true);
    // One line per reason text, with every lane it applies to.
    let mut undefined: Vec<(String, Vec<usize>)> = Vec::new();
    for (l, o) in out.iter().enumerate() {
        if let Outcome::Undefined(r) = o {
            let text = format!("{r} (`{}`)", r.key());
            match undefined.iter_mut().find(|(t, _)| *t == text) {
                Some((_, lanes)) => lanes.push(l),
                None => undefined.push((text, vec![l])),
            }
        }
    }
    if !undefined.is_empty() {
        s += "\nUndefined:\n";
        for (text, lanes) in undefined {
            let names: Vec<String> = lanes.iter().map(|l| l.to_string()).collect();
            let which = if lanes.len() == 1 { "lane" } else { "lanes" };
            s += &format!("- {which} {}: {text}\n", names.join(", "));
        }
    }
    s
}
