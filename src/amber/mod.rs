//! AmberScript (google/amber, the shader-test format of the Vulkan CTS) for compute: read a script,
//! run its pipelines on a [`Backend`] (the Vulkan device or the model), check its `EXPECT`s, report.
//!
//! - [`parse`](parse()): the reader of the compute subset, every problem a [`ScriptError`] (line,
//!   command, rule) or [`Unsupported`] (graphics, images, OpenCL, …) — never a panic.
//! - [`vkscript`]: Amber's older VkScript syntax (`[require]`, `[compute shader spirv]`, `[test]`)
//!   read into the same [`Script`]; [`parse`](parse()) picks the syntax from the first line.
//! - [`types`]: data types and their std140/std430 layout; literals encoded as bytes.
//! - [`script`]: the parsed [`Script`] (shaders, buffers, pipelines, commands).
//! - [`backend`]: the [`Backend`] trait a device or the model implements, one dispatch at a time.
//! - [`engines`]: the two backends — the model (the SPIR-V interpreter) and a Vulkan device.
//! - [`expect`]: EXPECT semantics on bytes, with the model's annotations (undefined,
//!   order-dependent, inexact) turning a verdict *undefined*.
//! - [`run`](mod@run): the command list executed on one backend; files over several backends.
//! - [`report`]: text tables, JSON and JUnit.
//! - [`fidelity`]: the model against a device's verdicts, EXPECT by EXPECT.
//!
//! ```
//! use lockstep::amber::{parse, DataType, Layout};
//! let s = parse("#!amber\nBUFFER v DATA_TYPE vec3<float> STD140 DATA\n1 2 3  4 5 6\nEND\n").unwrap();
//! let b = &s.buffers[0];
//! assert_eq!((b.elements, b.size()), (2, 32)); // vec3: 16-byte stride
//! assert_eq!(b.element_layout().offsets, vec![0, 4, 8]);
//! ```

pub mod backend;
pub mod engines;
pub mod expect;
pub mod fidelity;
pub mod parse;
pub mod report;
pub mod run;
pub mod script;
pub mod types;
pub mod vkscript;

pub use backend::{
    Annotation, AnnotationKind, Backend, BackendError, BackendKind, Dispatch, DispatchBinding,
    DispatchBuffer, DispatchOutput,
};
pub use expect::{evaluate, holds, Status};
pub use parse::{ParseFailure, ScriptError, Unsupported, MAX_BUFFER_BYTES};
pub use run::{
    expect_lines, file_report, parse_file, run_parsed, run_script, ErrorClass, ExpectLine,
    FileReport, FileStatus, RunReport, RunStatus, Verdict,
};
pub use script::{
    Binding, BindingKind, Buffer, Command, Comparator, Expect, ExpectKind, Pipeline, RequiredSize,
    Requirement, Script, Shader, ShaderCode, ShaderFormat, Specialization, SubgroupControl,
};
pub use types::{DataType, ElementLayout, FormatKind, Layout, Literal, Scalar, Value};

/// Parses a script (its text): AmberScript when the first line is `#!amber`, else VkScript (as
/// Amber picks, google/amber `src/amber.cc`). `FILE` names cannot be resolved: see [`parse_in`].
pub fn parse(text: &str) -> Result<Script, ParseFailure> {
    parse_in(text, None)
}

/// [`parse()`] for a script read from a file in `dir`, where its `FILE` names are looked up.
pub fn parse_in(text: &str, dir: Option<&std::path::Path>) -> Result<Script, ParseFailure> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if body.starts_with("#!amber") {
        parse::amberscript(text, dir)
    } else {
        vkscript::parse(text)
    }
}
