//! A parsed AmberScript file (the compute subset): shaders, buffers with their initial bytes,
//! compute pipelines, the command list, and what the device must support.

use super::types::{DataType, ElementLayout, Layout, Literal};
use crate::kernel::TargetEnv;
use crate::kernel::Tolerance;
use std::fmt;

/// A parsed script. Names are resolved: commands refer to buffers, shaders and pipelines by index.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// `SHADER compute …` blocks, in order.
    pub shaders: Vec<Shader>,
    /// `BUFFER …` declarations, in order, with their initial contents.
    pub buffers: Vec<Buffer>,
    /// `PIPELINE compute …` and `DERIVE_PIPELINE …` blocks, in order.
    pub pipelines: Vec<Pipeline>,
    /// The commands to execute, in order (`RUN`, `COPY`, `EXPECT`, `REPEAT`).
    pub commands: Vec<Command>,
    /// `DEVICE_FEATURE` lines.
    pub device_features: Vec<Requirement>,
    /// `DEVICE_EXTENSION` lines.
    pub device_extensions: Vec<Requirement>,
    /// `DEVICE_PROPERTY` lines (`FloatControlsProperties.shaderDenormPreserveFloat16`).
    pub device_properties: Vec<Requirement>,
    /// `INSTANCE_EXTENSION` lines.
    pub instance_extensions: Vec<Requirement>,
    /// `SET ENGINE_DATA fence_timeout_ms N`.
    pub fence_timeout_ms: Option<u32>,
    /// `SAMPLER …` declarations, in order.
    pub samplers: Vec<SamplerDecl>,
}

/// A `SAMPLER` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplerDecl {
    /// Its name.
    pub name: String,
    /// The line of the `SAMPLER` command.
    pub line: usize,
    /// Its state.
    pub sampler: crate::spirv::sampler::Sampler,
}

/// A `BIND SAMPLER s DESCRIPTOR_SET d BINDING b` of a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerBinding {
    /// Index into [`Script::samplers`].
    pub sampler: usize,
    /// descriptor set
    pub set: u32,
    /// binding
    pub binding: u32,
    /// The line of the `BIND` command.
    pub line: usize,
}

/// A named requirement and the line that states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// Feature or extension name as written (`SubgroupSizeControl.subgroupSizeControl`).
    pub name: String,
    /// 1-based line.
    pub line: usize,
}

/// The shader source formats of the compute subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderFormat {
    /// `GLSL` (compiled by shaderc / glslang).
    Glsl,
    /// `SPIRV-ASM` (assembled).
    SpirvAsm,
    /// `SPIRV-HEX` (bytes in hex, decoded here).
    SpirvHex,
    /// `SPIRV-BIN` (a binary SPIR-V file, only with `FILE`).
    SpirvBin,
}

impl fmt::Display for ShaderFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShaderFormat::Glsl => "GLSL",
            ShaderFormat::SpirvAsm => "SPIRV-ASM",
            ShaderFormat::SpirvHex => "SPIRV-HEX",
            ShaderFormat::SpirvBin => "SPIRV-BIN",
        })
    }
}

/// The code of a shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShaderCode {
    /// GLSL source text.
    Glsl(String),
    /// SPIR-V assembly text.
    SpirvAsm(String),
    /// SPIR-V words decoded from `SPIRV-HEX` (little-endian bytes, four to a word, as Amber reads
    /// them).
    SpirvWords(Vec<u32>),
}

/// A `SHADER compute NAME FORMAT [TARGET_ENV E] … END` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shader {
    /// Its name.
    pub name: String,
    /// The line of the `SHADER` command.
    pub line: usize,
    /// The source format.
    pub format: ShaderFormat,
    /// `TARGET_ENV`, when given: the environment the shader is compiled or assembled for.
    pub target_env: Option<TargetEnv>,
    /// The source text exactly as in the script (for every format, hex included), or as in the
    /// file that `FILE` / `VIRTUAL_FILE` names (empty for `SPIRV-BIN`).
    pub source: String,
    /// The file the source came from (`SHADER … FILE path`, `VIRTUAL_FILE path`), as written.
    pub file: Option<String>,
    /// The script line of the source's first line: a compiler's line `n` is script line
    /// `source_line + n - 1`.
    pub source_line: usize,
    /// The code, ready for a compiler or (hex) already decoded.
    pub code: ShaderCode,
}

/// A `BUFFER` declaration and its initial contents.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// Its name.
    pub name: String,
    /// The line of the `BUFFER` command.
    pub line: usize,
    /// Element type.
    pub data_type: DataType,
    /// `STD140` or `STD430`.
    pub layout: Layout,
    /// Number of elements.
    pub elements: usize,
    /// The initial bytes (`elements × stride`; padding zero).
    pub initial: Vec<u8>,
    /// For an `IMAGE`: its texel format and extent (its elements are its texels, tightly packed
    /// as [`crate::spirv::image`] lays them out); `None` for a `BUFFER`.
    pub image: Option<Image>,
    /// For a `BUFFER` declared with an image format (`DATA_TYPE R8G8B8A8_UNORM`): that format,
    /// which a texel buffer view of it has; its elements hold the stored integers (as an `IMAGE`'s
    /// do). `None` for a plain data type, whose view format follows from the type.
    pub texel: Option<crate::spirv::image::TexelFormat>,
}

/// What an `IMAGE` declares beyond its bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Image {
    /// `FORMAT`
    pub format: crate::spirv::image::TexelFormat,
    /// `DIM_1D`, `DIM_2D` or `DIM_3D`: 1, 2 or 3
    pub dims: u8,
    /// `WIDTH`, `HEIGHT`, `DEPTH`, `SAMPLES`
    pub extent: crate::spirv::image::Extent,
}

impl Buffer {
    /// Where each component of an element lies.
    pub fn element_layout(&self) -> ElementLayout {
        self.data_type.element_layout(self.layout)
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.initial.len()
    }

    /// A readable name for component `k` of element `e`: `b[5]`, `b[5].y`, `b[5][1].x`.
    pub fn component_name(&self, e: usize, k: usize) -> String {
        let t = self.data_type;
        const XYZW: [char; 4] = ['x', 'y', 'z', 'w'];
        match (t.columns, t.rows) {
            (1, 1) => format!("{}[{e}]", self.name),
            (1, _) => format!("{}[{e}].{}", self.name, XYZW[k % 4]),
            (_, r) => format!(
                "{}[{e}][{}].{}",
                self.name,
                k / r as usize,
                XYZW[k % r as usize]
            ),
        }
    }
}

/// `SPECIALIZE ID AS TYPE VALUE`: a 32-bit specialization constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Specialization {
    /// SpecId.
    pub id: u32,
    /// `uint32`, `int32` or `float` (AmberScript accepts 32-bit types only).
    pub scalar: super::types::Scalar,
    /// The value's 32 bits.
    pub bits: u32,
}

/// `REQUIRED_SIZE` of a `SUBGROUP` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequiredSize {
    /// A power of two.
    Size(u32),
    /// The device's minSubgroupSize.
    Min,
    /// The device's maxSubgroupSize.
    Max,
}

/// A pipeline's `SUBGROUP NAME … END` block (VK_EXT_subgroup_size_control).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SubgroupControl {
    /// `FULLY_POPULATED on|off` (computeFullSubgroups).
    pub fully_populated: Option<bool>,
    /// `VARYING_SIZE on|off` (allow varying subgroup size).
    pub varying_size: Option<bool>,
    /// `REQUIRED_SIZE N|MIN|MAX`.
    pub required_size: Option<RequiredSize>,
    /// The line of the `SUBGROUP` command (0 when there is none).
    pub line: usize,
}

/// How a buffer is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `AS storage DESCRIPTOR_SET s BINDING b`.
    Storage {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
    },
    /// `AS uniform DESCRIPTOR_SET s BINDING b`.
    Uniform {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
    },
    /// `AS push_constant`.
    PushConstant,
    /// `AS storage_image DESCRIPTOR_SET s BINDING b` (of an `IMAGE`).
    StorageImage {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
    },
    /// `AS sampled_image DESCRIPTOR_SET s BINDING b` (of an `IMAGE`): read through a sampler
    /// bound elsewhere.
    SampledImage {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
    },
    /// `AS combined_image_sampler SAMPLER name DESCRIPTOR_SET s BINDING b` (of an `IMAGE`).
    CombinedImageSampler {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
        /// Index into [`Script::samplers`].
        sampler: usize,
    },
    /// `AS storage_texel_buffer` / `AS uniform_texel_buffer DESCRIPTOR_SET s BINDING b` (of a
    /// `BUFFER … FORMAT`).
    TexelBuffer {
        /// descriptor set
        set: u32,
        /// binding
        binding: u32,
        /// a storage texel buffer (else a uniform one)
        storage: bool,
    },
}

impl BindingKind {
    /// (set, binding) of a descriptor binding; `None` for push constants.
    pub fn slot(&self) -> Option<(u32, u32)> {
        match *self {
            BindingKind::Storage { set, binding }
            | BindingKind::Uniform { set, binding }
            | BindingKind::StorageImage { set, binding }
            | BindingKind::SampledImage { set, binding }
            | BindingKind::CombinedImageSampler { set, binding, .. }
            | BindingKind::TexelBuffer { set, binding, .. } => Some((set, binding)),
            BindingKind::PushConstant => None,
        }
    }
}

impl fmt::Display for BindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindingKind::Storage { set, binding } => write!(f, "storage {set}.{binding}"),
            BindingKind::Uniform { set, binding } => write!(f, "uniform {set}.{binding}"),
            BindingKind::PushConstant => f.write_str("push_constant"),
            BindingKind::StorageImage { set, binding } => {
                write!(f, "storage_image {set}.{binding}")
            }
            BindingKind::SampledImage { set, binding } => {
                write!(f, "sampled_image {set}.{binding}")
            }
            BindingKind::CombinedImageSampler { set, binding, .. } => {
                write!(f, "combined_image_sampler {set}.{binding}")
            }
            BindingKind::TexelBuffer {
                set,
                binding,
                storage,
            } => write!(
                f,
                "{}_texel_buffer {set}.{binding}",
                if *storage { "storage" } else { "uniform" }
            ),
        }
    }
}

/// A `BIND BUFFER` of a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Index into [`Script::buffers`].
    pub buffer: usize,
    /// How it is bound.
    pub kind: BindingKind,
    /// The line of the `BIND` command.
    pub line: usize,
    /// The first byte the descriptor sees: `DESCRIPTOR_OFFSET` plus a dynamic `OFFSET` (0 for
    /// push constants).
    pub offset: u64,
    /// `DESCRIPTOR_RANGE` bytes from `offset`; `None` for the rest of the buffer.
    pub range: Option<u64>,
    /// The element of an array of descriptors (`BIND BUFFER_ARRAY b0 b1 …`: b_k is element k);
    /// 0 for a plain binding.
    pub element: u32,
}

impl Binding {
    /// The byte range of a buffer of `size` bytes that this binding's descriptor sees, or why
    /// none (Vulkan: offset and range must lie within the buffer, VUID-VkDescriptorBufferInfo-
    /// offset-00340 and -range-00341).
    pub fn window(&self, size: usize) -> Result<std::ops::Range<usize>, String> {
        let size = size as u64;
        if self.offset >= size && !(self.offset == 0 && size == 0) {
            return Err(format!(
                "the descriptor's offset {} is not inside the {size}-byte buffer",
                self.offset
            ));
        }
        let end = match self.range {
            None => size,
            Some(r) => self.offset.saturating_add(r),
        };
        if end > size {
            return Err(format!(
                "the descriptor's range {}..{end} goes past the end of the {size}-byte buffer",
                self.offset
            ));
        }
        Ok(self.offset as usize..end as usize)
    }
}

/// A compute pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// Its name.
    pub name: String,
    /// The line of the `PIPELINE` (or `DERIVE_PIPELINE`) command.
    pub line: usize,
    /// Index into [`Script::shaders`] of the attached compute shader.
    pub shader: usize,
    /// `ENTRY_POINT` (default `main`).
    pub entry_point: String,
    /// `SPECIALIZE` values, in order.
    pub specializations: Vec<Specialization>,
    /// The `SUBGROUP` block for the shader, if any.
    pub subgroup: SubgroupControl,
    /// Bound buffers, in order (a later `BIND` to the same set and binding replaces the earlier).
    pub bindings: Vec<Binding>,
    /// Bound samplers (`BIND SAMPLER`), in order.
    pub samplers: Vec<SamplerBinding>,
    /// `SHADER_OPTIMIZATION` passes for the shader, as SPIRV-Tools optimizer flags
    /// (`--inline-entry-points-exhaustive`), in order; run by `spirv-opt` before both backends.
    pub optimizations: Vec<String>,
}

/// EXPECT comparators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparator {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `LT`
    Lt,
    /// `LE`
    Le,
    /// `GT`
    Gt,
    /// `GE`
    Ge,
}

impl Comparator {
    /// Parses `EQ`, `NE`, `LT`, `LE`, `GT`, `GE`.
    pub fn parse(s: &str) -> Option<Comparator> {
        Some(match s {
            "EQ" => Comparator::Eq,
            "NE" => Comparator::Ne,
            "LT" => Comparator::Lt,
            "LE" => Comparator::Le,
            "GT" => Comparator::Gt,
            "GE" => Comparator::Ge,
            _ => return None,
        })
    }

    /// The symbol used in failure messages (`==`, `!=`, `<`, …).
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::Eq => "==",
            Comparator::Ne => "!=",
            Comparator::Lt => "<",
            Comparator::Le => "<=",
            Comparator::Gt => ">",
            Comparator::Ge => ">=",
        }
    }
}

/// What an `EXPECT` compares.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectKind {
    /// `EXPECT B IDX offset [TOLERANCE t…] CMP v…`: values compared component by component from
    /// byte `offset` on (AmberScript's IDX is a byte offset; padding is skipped).
    Values {
        /// Byte offset (a multiple of the element stride).
        offset: usize,
        /// `TOLERANCE` values (only with `EQ`); empty when none.
        tolerances: Vec<Tolerance>,
        /// The comparator.
        comparator: Comparator,
        /// The expected values, one per component.
        values: Vec<Literal>,
    },
    /// `EXPECT IMG IDX x y SIZE w h EQ_RGB r g b` / `EQ_RGBA r g b a`: every texel of the
    /// rectangle holds the colour (components 0 to 255, compared as 8-bit values: AmberScript,
    /// "Expectations").
    Probe {
        /// left, top, width, height in texels
        rect: [u32; 4],
        /// the colour's components, 3 or 4
        rgba: Vec<f64>,
        /// `TOLERANCE` values (in the same 0 to 255 units); empty when none
        tolerances: Vec<Tolerance>,
    },
    /// `EXPECT A EQ_BUFFER B`.
    EqBuffer {
        /// Index of B.
        other: usize,
    },
    /// `EXPECT A RMSE_BUFFER B TOLERANCE t`.
    RmseBuffer {
        /// Index of B.
        other: usize,
        /// The largest root-mean-square error that passes.
        tolerance: f64,
    },
}

/// An `EXPECT` command.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    /// Its line.
    pub line: usize,
    /// The buffer checked (index into [`Script::buffers`]).
    pub buffer: usize,
    /// What is compared.
    pub kind: ExpectKind,
    /// The command as written (for reports).
    pub text: String,
}

/// A command of the command list.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `RUN PIPELINE X Y Z`.
    Run {
        /// Its line.
        line: usize,
        /// Index into [`Script::pipelines`].
        pipeline: usize,
        /// Workgroup counts.
        groups: [u32; 3],
    },
    /// `COPY A TO B` (host side: bytes and annotations).
    Copy {
        /// Its line.
        line: usize,
        /// Source buffer index.
        from: usize,
        /// Destination buffer index.
        to: usize,
    },
    /// `EXPECT …`.
    Expect(Expect),
    /// Bytes written into a buffer by the host between dispatches (VkScript's `ssbo … subdata`
    /// and `uniform` after a `compute`).
    Write {
        /// Its line.
        line: usize,
        /// Index into [`Script::buffers`].
        buffer: usize,
        /// Byte offset.
        offset: usize,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// `REPEAT N … END`.
    Repeat {
        /// Its line.
        line: usize,
        /// Iterations.
        count: u32,
        /// The repeated commands.
        commands: Vec<Command>,
    },
}

impl Script {
    /// Every EXPECT of the command list, in order, REPEAT bodies included once.
    pub fn expects(&self) -> Vec<&Expect> {
        fn walk<'a>(cmds: &'a [Command], out: &mut Vec<&'a Expect>) {
            for c in cmds {
                match c {
                    Command::Expect(e) => out.push(e),
                    Command::Repeat { commands, .. } => walk(commands, out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.commands, &mut out);
        out
    }

    /// How many commands an execution performs (REPEAT bodies counted `count` times), saturating.
    pub fn executed_commands(&self) -> u64 {
        fn count(cmds: &[Command]) -> u64 {
            cmds.iter()
                .map(|c| match c {
                    Command::Repeat {
                        count: n, commands, ..
                    } => (*n as u64).saturating_mul(count(commands)),
                    _ => 1,
                })
                .fold(0u64, |a, b| a.saturating_add(b))
        }
        count(&self.commands)
    }

    /// The buffer named `name`.
    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }
}
