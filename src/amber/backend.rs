//! The interface between the Amber runner and what runs a compute pipeline: the Vulkan device or
//! the model's SPIR-V interpreter. The runner owns the buffers; a backend gets one dispatch at a
//! time (the pipeline, its shader, the bound buffers' bytes and annotations, the workgroup count)
//! and returns the new bytes — and, from the model, which byte ranges hold a value the spec does
//! not pin down.

use super::parse::Unsupported;
use super::script::{BindingKind, Buffer, Pipeline, Script, Shader};
use crate::reconverge::Mode;
use std::fmt;
use std::ops::Range;

/// Which kind of backend ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// A Vulkan device.
    Device,
    /// The reference model (SPIR-V interpreter).
    Model,
}

impl BackendKind {
    /// `device` or `model`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Device => "device",
            BackendKind::Model => "model",
        }
    }
}

/// What a byte range of a buffer holds when it is not one defined value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnnotationKind {
    /// The spec leaves the value undefined.
    Undefined,
    /// The value depends on the order in which invocations ran (an atomic's returned value).
    OrderDependent,
    /// A float value a conformant device may compute differently (contraction, ULP bounds, …).
    Inexact,
}

impl AnnotationKind {
    /// `undefined`, `order_dependent`, `inexact`.
    pub fn name(self) -> &'static str {
        match self {
            AnnotationKind::Undefined => "undefined",
            AnnotationKind::OrderDependent => "order_dependent",
            AnnotationKind::Inexact => "inexact",
        }
    }
}

/// A byte range of a buffer the model could not pin down, with the chain that explains why
/// (`b[5] ← OpStore k.comp:23 ← subgroupShuffleDown k.comp:20: source lane 9 >= subgroup size 8`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// Bytes of the buffer.
    pub bytes: Range<usize>,
    /// What kind of value.
    pub kind: AnnotationKind,
    /// The "why" chain, as text.
    pub why: String,
}

/// One buffer of a dispatch: its declaration, current bytes and the current annotations.
#[derive(Clone, Copy, Debug)]
pub struct DispatchBuffer<'a> {
    /// The `BUFFER` declaration (name, data type, layout, element count).
    pub decl: &'a Buffer,
    /// The bytes now (`decl.size()` of them).
    pub bytes: &'a [u8],
    /// Byte ranges that hold no single defined value now (from earlier model dispatches).
    pub annotations: &'a [Annotation],
}

/// A binding of a dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchBinding {
    /// How the buffer is bound (set and binding, or push constant).
    pub kind: BindingKind,
    /// Index into [`Dispatch::buffers`].
    pub buffer: usize,
    /// The bytes of the buffer the descriptor sees (`DESCRIPTOR_OFFSET`, dynamic `OFFSET`,
    /// `DESCRIPTOR_RANGE`; the whole buffer by default).
    pub window: Range<usize>,
    /// The element of an array of descriptors (`BIND BUFFER_ARRAY`; 0 for a plain binding).
    pub element: u32,
}

/// The annotations of a buffer split at a binding's window: those inside it, clipped and made
/// relative to its start, and those outside it, clipped to the rest.
pub(crate) fn split_annotations(
    list: &[Annotation],
    window: &Range<usize>,
) -> (Vec<Annotation>, Vec<Annotation>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for a in list {
        let (s, e) = (a.bytes.start.max(window.start), a.bytes.end.min(window.end));
        if s < e {
            inside.push(Annotation {
                bytes: s - window.start..e - window.start,
                ..a.clone()
            });
        }
        for part in [
            a.bytes.start..a.bytes.end.min(window.start),
            a.bytes.start.max(window.end)..a.bytes.end,
        ] {
            if part.start < part.end {
                outside.push(Annotation {
                    bytes: part,
                    ..a.clone()
                });
            }
        }
    }
    (inside, outside)
}

/// One `RUN`: a compute pipeline, its buffers, the workgroup count.
#[derive(Clone, Debug)]
pub struct Dispatch<'a> {
    /// The whole script (engine data such as `fence_timeout_ms`, requirements, other shaders).
    pub script: &'a Script,
    /// The line of the `RUN` command.
    pub line: usize,
    /// The pipeline (entry point, specializations, subgroup size control, bindings).
    pub pipeline: &'a Pipeline,
    /// Its compute shader (source text, format, target environment).
    pub shader: &'a Shader,
    /// Every buffer the pipeline binds, each once.
    pub buffers: Vec<DispatchBuffer<'a>>,
    /// The bindings, in the pipeline's order.
    pub bindings: Vec<DispatchBinding>,
    /// `RUN … X Y Z`.
    pub workgroups: [u32; 3],
}

/// What a dispatch left in its buffers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DispatchOutput {
    /// The new bytes of each buffer of [`Dispatch::buffers`], in the same order and of the same
    /// lengths (read-only buffers come back unchanged).
    pub buffers: Vec<Vec<u8>>,
    /// The annotations of each buffer after the dispatch, replacing those it came in with: one
    /// list per buffer of [`Dispatch::buffers`], or no lists at all (a device) for none anywhere.
    /// Ranges must lie inside their buffer.
    pub annotations: Vec<Vec<Annotation>>,
    /// The reconvergence mode the model ran this dispatch under (its choice from the shader's
    /// declarations, or the one it was told to use); `None` for a device.
    pub mode: Option<Mode>,
}

/// Why a backend did not run a dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// The device or model lacks something the dispatch needs (a feature, an extension, a subgroup
    /// size, an instruction outside the interpreter's subset): the run is *unsupported*.
    Unsupported(String),
    /// The script is at fault (a shader that does not compile, a binding the shader lacks, a buffer
    /// smaller than its block): an *error* of the file, bad input. `line` is the script line when
    /// known (a compiler's line mapped through [`Shader::source_line`]).
    BadInput {
        /// Script line.
        line: Option<usize>,
        /// The message.
        message: String,
    },
    /// The device or the backend itself failed: an *error*, not the script's fault.
    Failed(String),
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Unsupported(m) => write!(f, "unsupported: {m}"),
            BackendError::BadInput {
                line: Some(l),
                message,
            } => write!(f, "line {l}: {message}"),
            BackendError::BadInput {
                line: None,
                message,
            } => f.write_str(message),
            BackendError::Failed(m) => f.write_str(m),
        }
    }
}

/// Something that runs compute pipelines: a Vulkan device or the model.
///
/// One backend value runs every file of a `lockstep amber` invocation, one dispatch at a time,
/// in script order. Buffers persist across dispatches on the runner's side; the backend is
/// handed their current bytes (and annotations) each time.
pub trait Backend {
    /// Device or model.
    fn kind(&self) -> BackendKind;

    /// The device's name, for a device.
    fn device_name(&self) -> Option<String> {
        None
    }

    /// The subgroup size a run was asked for (`--subgroup-size`), for its label; `None` for the
    /// default.
    fn model_size(&self) -> Option<u32> {
        None
    }

    /// The reconvergence mode the model is forced to use (`--mode`), `None` for a device and for
    /// the model under the modes the shaders declare.
    fn forced_mode(&self) -> Option<Mode>;

    /// Whether this backend provides everything the script's `DEVICE_FEATURE`,
    /// `DEVICE_EXTENSION` and `INSTANCE_EXTENSION` lines (and subgroup size controls) ask for;
    /// `Err` names the first that is missing and its line. Called once per file, before any
    /// dispatch.
    fn requirements(&self, script: &Script) -> Result<(), Unsupported>;

    /// Runs one dispatch.
    fn dispatch(&mut self, d: &Dispatch<'_>) -> Result<DispatchOutput, BackendError>;
}
