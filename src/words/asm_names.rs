//! The names a SPIR-V assembly text gives its ids (`%temp = OpVariable …`).
//!
//! SPIRV-Tools' assembler turns `%temp` into a number and keeps nothing of the name, so a report
//! on hand-written assembly could only say `%2`. The text's names are the user's names: each
//! instruction of the text is matched with the module's instruction at the same place (the
//! assembler writes one for each, in order), and where the text named the result, the id gets that
//! name — for the model's reports only: the module the device gets is the assembler's, unchanged
//! (a driver may treat two struct types that differ only by `OpName` as different: Mesa 22.3's
//! lavapipe then refuses an `OpCopyLogical` between them). Where the two do not line up
//! instruction for instruction (an opcode differs, a count differs), no name is given: a wrong
//! name is worse than a number.

use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};
use std::collections::HashSet;

/// The names `text` gives the results of `words` (assembled from it), for the ids the module does
/// not name with an `OpName` of its own and that are not plain numbers (`%14`); none where the
/// text and the module do not line up.
pub fn names(text: &str, words: &[u32]) -> Vec<(u32, String)> {
    let (Some(named), Some(places)) = (text_results(text), module_results(words)) else {
        return Vec::new();
    };
    if named.len() != places.results.len() {
        return Vec::new();
    }
    let mut names = Vec::new();
    for ((op, name), (bin_op, result)) in named.iter().zip(&places.results) {
        let Some(g) = INSTRUCTION_TABLE.lookup_opcode(*bin_op) else {
            return Vec::new();
        };
        if format!("Op{}", g.opname) != *op {
            return Vec::new();
        }
        match (name, result) {
            (Some(n), Some(id)) => {
                if !n.bytes().all(|b| b.is_ascii_digit()) && !places.named.contains(id) {
                    names.push((*id, n.clone()));
                }
            }
            (None, None) => {}
            _ => return Vec::new(),
        }
    }
    names
}

/// Each instruction of the text: its opcode's name and the name it gives its result, if any.
/// `None` where the text is not read to the end (an unterminated string).
fn text_results(text: &str) -> Option<Vec<(String, Option<String>)>> {
    let tokens = tokens(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if let Some(name) = t.strip_prefix('%')
            && tokens.get(i + 1).is_some_and(|x| x == "=")
            && tokens.get(i + 2).is_some_and(|x| is_opcode(x))
        {
            out.push((tokens[i + 2].clone(), Some(name.to_string())));
            i += 3;
        } else if is_opcode(t) {
            out.push((t.clone(), None));
            i += 1;
        } else {
            i += 1;
        }
    }
    Some(out)
}

/// `Op` and a capital: an opcode, never an operand (`OpenCL_C` is a source language).
fn is_opcode(t: &str) -> bool {
    t.strip_prefix("Op")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// The text's tokens: whitespace apart, `;` comments dropped, a quoted string one token (`None`
/// where one is not closed).
fn tokens(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                flush(&mut cur, &mut out);
            }
            '"' => {
                let mut s = String::from('"');
                loop {
                    match chars.next()? {
                        '\\' => s.push(chars.next()?),
                        '"' => break,
                        x => s.push(x),
                    }
                }
                cur.push_str(&s);
            }
            c if c.is_whitespace() => flush(&mut cur, &mut out),
            '=' => {
                flush(&mut cur, &mut out);
                out.push("=".into());
            }
            c => cur.push(c),
        }
    }
    flush(&mut cur, &mut out);
    Some(out)
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.is_empty() {
        out.push(std::mem::take(cur));
    }
}

/// The module's instructions (opcode, result id) and the ids an `OpName` names already.
struct Places {
    results: Vec<(u32, Option<u32>)>,
    named: HashSet<u32>,
}

fn module_results(words: &[u32]) -> Option<Places> {
    let mut results = Vec::new();
    let mut named = HashSet::new();
    let mut i = 5;
    while i < words.len() {
        let (count, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if count == 0 || i + count > words.len() {
            return None;
        }
        if op == 5 && count >= 2 {
            named.insert(words[i + 1]);
        }
        let g = INSTRUCTION_TABLE.lookup_opcode(op)?;
        let kinds: Vec<OperandKind> = g.operands.iter().map(|o| o.kind).collect();
        let result = match (kinds.first(), kinds.get(1)) {
            (Some(OperandKind::IdResultType), Some(OperandKind::IdResult)) => words.get(i + 2),
            (Some(OperandKind::IdResult), _) => words.get(i + 1),
            _ => None,
        };
        results.push((op, result.copied()));
        i += count;
    }
    Some(Places { results, named })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_keep_strings_whole_and_drop_comments() {
        let t = tokens("%s = OpString \"a b ; \\\"c\" ; comment\nOpSource OpenCL_C 120\n").unwrap();
        assert_eq!(
            t,
            [
                "%s",
                "=",
                "OpString",
                "\"a b ; \"c",
                "OpSource",
                "OpenCL_C",
                "120"
            ]
        );
        assert!(tokens("OpString \"open").is_none());
        assert!(is_opcode("OpSource") && !is_opcode("OpenCL_C") && !is_opcode("%Op"));
    }

    /// `OpCapability Shader`, `OpMemoryModel Logical GLSL450`, then `ops`.
    fn module(ops: &[&[u32]]) -> Vec<u32> {
        let mut w = vec![
            0x0723_0203,
            0x0001_0000,
            0,
            9,
            0,
            0x0002_0011,
            1,
            0x0003_000e,
            0,
            1,
        ];
        for op in ops {
            w.extend_from_slice(op);
        }
        w
    }

    #[test]
    fn names_come_from_the_instruction_at_the_same_place_or_not_at_all() {
        let head = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n";
        // %void = OpTypeVoid (result 1), %14 = OpTypeBool (result 14): a number is no name.
        let words = module(&[&[0x0002_0013, 1], &[0x0002_0014, 14]]);
        let text = format!("{head}%void = OpTypeVoid ; the void\n%14 = OpTypeBool\n");
        assert_eq!(names(&text, &words), vec![(1, "void".to_string())]);
        // An OpName of the module's own wins (nothing to add).
        let named = module(&[&[0x0003_0005, 1, 0x0000_0076], &[0x0002_0013, 1]]);
        let text2 = format!("{head}OpName %void \"v\"\n%void = OpTypeVoid\n");
        assert!(names(&text2, &named).is_empty());
        // One instruction more, or another opcode at a place: no names at all.
        assert!(names(&format!("{text}%t = OpTypeInt 32 0\n"), &words).is_empty());
        let other = format!("{head}%void = OpTypeBool\n%14 = OpTypeBool\n");
        assert!(names(&other, &words).is_empty());
    }
}
