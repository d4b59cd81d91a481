//! One SPIR-V reader for every consumer (the interpreter's decoder, the device runner's
//! reflection, the kernel loader): words to an rspirv module, after the passes each of them needs.
//!
//! - The header is checked (magic number, a 1.0–1.6 version).
//! - The embedded source text (`OpSource`'s last operand, `OpSourceContinued`) is dropped:
//!   compilers split long texts into chunks at byte boundaries that may cut a UTF-8 character,
//!   which the parser rejects; only file names and lines are needed.
//! - `NonSemantic.*` extended instructions at module scope (`NonSemantic.Shader.DebugInfo.100`'s
//!   `DebugSource`, `DebugCompilationUnit`, types, …, as glslang `-gV` and DXC emit them) are set
//!   aside — rspirv 0.13 refuses an `OpExtInst` outside a block — keeping what line information
//!   needs: each `DebugSource`'s file name.
//!
//! Vulkan-free, so the device side and the model read a module the same way: [`facts`] folds
//! specialization constants and the workgroup size with the integer rules of [`int`], which the
//! interpreter executes too.

pub mod address;
pub mod asm_names;
/// GLSL and SPIR-V assembly to SPIR-V words (shaderc): the `glsl` feature.
#[cfg(feature = "glsl")]
pub mod compile;
pub mod env;
pub mod facts;
pub mod float;
pub mod int;
pub mod layout;
pub mod sampler;
pub mod texel;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::Op;
use std::collections::HashMap;

/// Why words are not a module.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

/// A module as read, with what the passes kept.
pub struct Read {
    /// the module (without embedded source text and module-scope non-semantic instructions)
    pub module: Module,
    /// the words the module was parsed from (after the passes: without what they set aside —
    /// never for a driver)
    pub words: Vec<u32>,
    /// `DebugSource` result id → the `OpString` id of its file name
    pub debug_sources: HashMap<u32, u32>,
    /// the result id of the `NonSemantic.Shader.DebugInfo.100` import, if any
    pub debug_info_set: Option<u32>,
    /// the embedded source text (`OpSource`'s Source and its `OpSourceContinued`) by the
    /// `OpString` id of its file name
    pub source_texts: HashMap<u32, String>,
    /// `DebugGlobalVariable`s: (the variable's id, the `OpString` id of its name)
    pub debug_globals: Vec<(u32, u32)>,
}

/// `NonSemantic.Shader.DebugInfo.100` instruction numbers the readers use.
pub mod debug_info {
    /// `DebugSource`: File, optional Text
    pub(crate) const SOURCE: u32 = 35;
    /// `DebugGlobalVariable`: Name, Type, Source, Line, Column, Parent, Linkage Name, Variable,
    /// Flags, …
    pub(crate) const GLOBAL_VARIABLE: u32 = 18;
    /// `DebugLine`: Source, Line Start, Line End, Column Start, Column End (ids of constants)
    pub(crate) const LINE: u32 = 103;
    /// `DebugNoLine`
    pub(crate) const NO_LINE: u32 = 104;
}

/// Reads `words` as a SPIR-V module.
///
/// ```
/// let words = lockstep::spirv::examples::lane_ids();
/// let r = lockstep::words::read(&words).unwrap();
/// assert_eq!(r.module.entry_points.len(), 1);
/// assert!(lockstep::words::read(&words[..3]).is_err());
/// ```
pub fn read(words: &[u32]) -> Result<Read, ReadError> {
    let bad = |s: String| ReadError(s);
    if words.len() < 5 {
        return Err(bad(format!(
            "{} words: a module has at least a 5-word header",
            words.len()
        )));
    }
    if words[0] != 0x0723_0203 {
        return Err(bad(format!(
            "magic number 0x{:08x}, expected 0x07230203",
            words[0]
        )));
    }
    let version = words[1];
    if version > 0x0001_0600 || version & 0xff00_00ff != 0 {
        return Err(bad(format!(
            "version word 0x{version:08x}: SPIR-V 1.0 to 1.6 expected"
        )));
    }
    let Prepared {
        words,
        debug_sources,
        debug_info_set,
        source_texts,
        debug_globals,
        mode_ids,
        spec_op_tails,
    } = prepare(words)?;
    let parsed = std::panic::catch_unwind(|| rspirv::dr::load_words(&words))
        .map_err(|_| bad("the SPIR-V parser failed on this input".into()))?;
    let mut module = parsed.map_err(|e| bad(e.to_string()))?;
    // OpExecutionModeId (LocalSizeId and the other modes whose operands are ids): rspirv 0.13's
    // loader refuses it at module scope, so it was set aside and is put back here, its operands
    // ids as the grammar says.
    for inst in mode_ids {
        let mode = rspirv::spirv::ExecutionMode::from_u32(inst[2]).ok_or_else(|| {
            bad(format!(
                "OpExecutionModeId with execution mode {}, which SPIR-V does not define",
                inst[2]
            ))
        })?;
        let mut operands = vec![Operand::IdRef(inst[1]), Operand::ExecutionMode(mode)];
        operands.extend(inst[3..].iter().map(|&x| Operand::IdRef(x)));
        module
            .execution_modes
            .push(Instruction::new(Op::ExecutionModeId, None, None, operands));
    }
    // OpSpecConstantOp's repeated literals (VectorShuffle's components, CompositeExtract's and
    // CompositeInsert's indexes): rspirv 0.13 reads one word per operand of the folded opcode's
    // grammar and refuses the rest ("found extra operands"), so `prepare` cut them off; they are
    // appended here as the literals they are.
    for (id, tail) in spec_op_tails {
        if let Some(inst) = module
            .types_global_values
            .iter_mut()
            .find(|i| i.class.opcode == Op::SpecConstantOp && i.result_id == Some(id))
        {
            inst.operands
                .extend(tail.into_iter().map(Operand::LiteralBit32));
        }
    }
    Ok(Read {
        module,
        words,
        debug_sources,
        debug_info_set,
        source_texts,
        debug_globals,
    })
}

/// What [`prepare`] gives `read`.
struct Prepared {
    /// the words to parse
    words: Vec<u32>,
    /// `DebugSource` result id → the `OpString` id of its file name
    debug_sources: HashMap<u32, u32>,
    /// the `NonSemantic.Shader.DebugInfo.100` import
    debug_info_set: Option<u32>,
    /// embedded source text by file name id
    source_texts: HashMap<u32, String>,
    /// `DebugGlobalVariable`s: (variable id, name string id)
    debug_globals: Vec<(u32, u32)>,
    /// the `OpExecutionModeId` instructions set aside, whole
    mode_ids: Vec<Vec<u32>>,
    /// `OpSpecConstantOp` result id → the literal words cut off its end
    spec_op_tails: Vec<(u32, Vec<u32>)>,
}

/// The passes: source text dropped, module-scope non-semantic instructions set aside,
/// `OpExecutionModeId`s set aside (their words) for `read` to put back after parsing, and the
/// repeated literals of `OpSpecConstantOp`s cut off (likewise).
fn prepare(words: &[u32]) -> Result<Prepared, ReadError> {
    let mut spec_op_tails: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut mode_ids: Vec<Vec<u32>> = Vec::new();
    let mut texts: HashMap<u32, String> = HashMap::new();
    let mut last_text: Option<u32> = None;
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut non_semantic: Vec<u32> = Vec::new();
    let mut debug_info = None;
    let mut sources = HashMap::new();
    let mut globals = Vec::new();
    let mut in_function = false;
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return Err(ReadError(format!(
                "instruction at word {i} has word count {count}, past the end of the module ({} words)",
                words.len()
            )));
        }
        let inst = &words[i..i + count];
        match opcode {
            // OpSourceContinued: more of the last OpSource's text
            2 => {
                if let Some(t) = last_text.and_then(|f| texts.get_mut(&f)) {
                    t.push_str(&literal_string(&inst[1..]));
                }
            }
            // OpSource: Source Language, Version, [File], [Source]
            3 if count > 4 => {
                out.push((4 << 16) | 3);
                out.extend_from_slice(&inst[1..4]);
                texts.insert(inst[3], literal_string(&inst[4..]));
                last_text = Some(inst[3]);
            }
            // OpExtInstImport: Result, Name (a shorter one is left for the parser to refuse)
            11 if count >= 3 => {
                let name = literal_string(&inst[2..]);
                if name.starts_with("NonSemantic.") {
                    non_semantic.push(inst[1]);
                    if name == "NonSemantic.Shader.DebugInfo.100" {
                        debug_info = Some(inst[1]);
                    }
                }
                out.extend_from_slice(inst);
            }
            // OpFunction / OpFunctionEnd
            54 => {
                in_function = true;
                out.extend_from_slice(inst);
            }
            56 => {
                in_function = false;
                out.extend_from_slice(inst);
            }
            // OpExtInst: Result Type, Result, Set, Instruction, operands…
            12 if !in_function && count >= 5 && non_semantic.contains(&inst[3]) => {
                if Some(inst[3]) == debug_info && inst[4] == debug_info::SOURCE && count >= 6 {
                    sources.insert(inst[2], inst[5]);
                }
                if Some(inst[3]) == debug_info
                    && inst[4] == debug_info::GLOBAL_VARIABLE
                    && count >= 13
                {
                    globals.push((inst[12], inst[5]));
                }
            }
            // OpExecutionModeId: Entry Point, Mode, ids…
            331 if !in_function && count >= 3 => mode_ids.push(inst.to_vec()),
            // OpSpecConstantOp: Result Type, Result, Opcode, operands…
            52 if count > 4 => {
                let keep = 4 + spec_op_words_read(inst[3]).unwrap_or(count - 4);
                if count > keep {
                    out.push(((keep as u32) << 16) | 52);
                    out.extend_from_slice(&inst[1..keep]);
                    spec_op_tails.push((inst[2], inst[keep..].to_vec()));
                } else {
                    out.extend_from_slice(inst);
                }
            }
            _ => out.extend_from_slice(inst),
        }
        i += count;
    }
    Ok(Prepared {
        words: out,
        debug_sources: sources,
        debug_info_set: debug_info,
        source_texts: texts,
        debug_globals: globals,
        mode_ids,
        spec_op_tails,
    })
}

/// How many operand words rspirv 0.13 reads after an `OpSpecConstantOp`'s opcode `op`: one per
/// operand of that opcode's grammar (result type and result aside), whatever its quantifier — so
/// a repeated literal at the end is read once. `None` where the opcode's operands do not end in a
/// repeated literal (then nothing is cut: rspirv reads what it reads and says what it refuses).
fn spec_op_words_read(op: u32) -> Option<usize> {
    use rspirv::grammar::{OperandKind as K, OperandQuantifier as Q};
    let g = rspirv::grammar::INSTRUCTION_TABLE.lookup_opcode(op)?;
    let ops: Vec<_> = g
        .operands
        .iter()
        .filter(|o| !matches!(o.kind, K::IdResultType | K::IdResult))
        .collect();
    let last = ops.last()?;
    (last.quantifier == Q::ZeroOrMore && last.kind == K::LiteralInteger).then_some(ops.len())
}

/// A nul-terminated UTF-8 literal string packed in words.
fn literal_string(words: &[u32]) -> String {
    let mut bytes = Vec::new();
    'outer: for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                break 'outer;
            }
            bytes.push(b);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
