//! The pre-decoded program: every SPIR-V instruction of the supported subset turned once into an
//! [`Inst`] whose operands are register numbers, slot counts and byte offsets — so the executor never
//! looks at SPIR-V words, types or decorations while it runs.

use crate::model::Op;
use crate::reconverge::Mode;
use crate::spirv::error::Location;
use crate::spirv::types::{Scalar, Storage, TypeId, Types};

pub use crate::spirv::ext_inst::Ext;
pub use crate::spirv::ids::{CarriedAccess, CarriedVar, LocId, ObjectId, Reg, RegView};
pub use crate::spirv::names::VarNames;
pub use crate::words::int::{IntBin, IntCmp, IntUn};

/// A block of a function, by index in [`Func::blocks`].
pub type BlockIdx = u32;
/// A function, by index in [`Kernel::funcs`].
pub type FuncIdx = u32;
/// A load/store plan, by index in [`Kernel::plans`].
pub type PlanId = u32;

/// Float binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum FloatBin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Mod,
}

/// Float comparisons: ordered (false when either is NaN) or unordered (true when either is NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum FloatCmp {
    OrdEq,
    UnordEq,
    OrdNe,
    UnordNe,
    OrdLt,
    UnordLt,
    OrdGt,
    UnordGt,
    OrdLe,
    UnordLe,
    OrdGe,
    UnordGe,
}

/// Bool binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum LogicBin {
    And,
    Or,
    Eq,
    Ne,
}

/// Conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Conv {
    FToU,
    FToS,
    SToF,
    UToF,
    UConvert,
    SConvert,
    FConvert,
    QuantizeF16,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Inc,
    Dec,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FAdd,
    FMin,
    FMax,
}

/// One step of an access chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// a constant byte offset (struct member, constant index)
    Const(u32),
    /// `index * stride` bytes, `index` a register of `width` bits (signed when `signed`), checked
    /// against `len` elements when the array is sized
    Dyn {
        /// the index register
        index: Reg,
        /// its width in bits
        width: u8,
        /// sign-extend the index
        signed: bool,
        /// element stride in bytes
        stride: u32,
        /// number of elements (None for a runtime array: checked against the object's size)
        len: Option<u32>,
        /// an OpPtrAccessChain `Element`, which may step backwards (a negative index is not out
        /// of bounds by itself; the resulting offset is checked where it is used)
        elem: bool,
    },
    /// the first index into an array of descriptors: it picks the object (`index` of `count`
    /// consecutive ones); an index past the array is out of bounds
    Descriptor {
        /// the index register
        index: Reg,
        /// its width in bits
        width: u8,
        /// sign-extend the index
        signed: bool,
        /// number of descriptors
        count: u32,
        /// the access is decorated `NonUniform` (GLSL's `nonuniformEXT`): its index may differ
        /// between the invocations that execute it together; without it, Vulkan requires the
        /// descriptor to be dynamically uniform (VUID-RuntimeSpirv-NonUniform-06274)
        nonuniform: bool,
    },
}

impl Step {
    /// The index a `Dyn` or `Descriptor` step reads from its register's bits: the low `width`
    /// bits, sign-extended when the index type is signed.
    #[inline(always)]
    pub fn index(raw: u64, width: u8, signed: bool) -> i64 {
        let raw = raw & crate::words::int::mask(width);
        if signed {
            crate::words::int::sext(width, raw)
        } else {
            raw as i64
        }
    }

    /// Is index `i` of a `Dyn` step out of bounds: negative (but for an `OpPtrAccessChain`'s
    /// Element, `elem`, which may step back through the array the base points into), or at or
    /// past the length `len` of a sized array?
    #[inline(always)]
    pub fn out_of_bounds(i: i64, len: Option<u32>, elem: bool) -> bool {
        (i < 0 && !elem) || len.is_some_and(|l| i as u64 >= l as u64)
    }
}

/// A subgroup operation, ready for the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// the catalogue operation
    pub op: Op,
    /// value operand: register, scalar type (signedness as the opcode reads it), components
    pub value: Option<(Reg, Scalar, u32)>,
    /// id / delta / mask / index / quad index operand (a `uint` register)
    pub lane_arg: Option<Reg>,
    /// the `uvec4` ballot operand
    pub ballot: Option<Reg>,
    /// a constant cluster size
    pub cluster: Option<u32>,
    /// the result's scalar type and component count
    pub result: (Scalar, u32),
}

/// One instruction.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Inst {
    /// `d[c] = a[c] op b[c]` for `n` slots of `w`-bit integers
    IntBin {
        op: IntBin,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    IntCmp {
        op: IntCmp,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    IntUn {
        op: IntUn,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
    },
    /// `contract`: an operand comes from an `OpFMul` a device may fuse into this add (no
    /// `NoContraction` on either), so the result may differ from the uncontracted one
    FloatBin {
        op: FloatBin,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
        contract: bool,
        relaxed: bool,
    },
    FloatCmp {
        op: FloatCmp,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    FloatNeg {
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
    },
    /// `IsNan` (`inf = false`) / `IsInf`
    FloatClass {
        inf: bool,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
    },
    LogicBin {
        op: LogicBin,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LogicNot {
        n: u32,
        d: Reg,
        a: Reg,
    },
    /// `OpAny` / `OpAll` over `n` bools
    AnyAll {
        all: bool,
        n: u32,
        d: Reg,
        a: Reg,
    },
    /// `d = c ? a : b`; a scalar condition selects whole values of `n` slots, a vector one per slot
    /// `OpPtrEqual` / `OpPtrNotEqual` (`ne`): the same object and byte
    PtrCmp {
        d: Reg,
        a: Reg,
        b: Reg,
        ne: bool,
    },
    /// `OpPtrDiff`: (a − b) in elements of `stride` bytes, a `w`-bit integer
    PtrDiff {
        d: Reg,
        a: Reg,
        b: Reg,
        stride: u32,
        w: u8,
    },
    Select {
        n: u32,
        d: Reg,
        c: Reg,
        vector_cond: bool,
        a: Reg,
        b: Reg,
    },
    Conv {
        op: Conv,
        from: Scalar,
        to: Scalar,
        n: u32,
        d: Reg,
        a: Reg,
    },
    /// reinterpret the bytes of `a` (kinds `from`) as `d` (kinds `to`)
    Bitcast {
        from: Box<[Scalar]>,
        to: Box<[Scalar]>,
        d: Reg,
        a: Reg,
    },
    /// `d[0..n] = a[off..off+n]` (copies, composite extracts)
    Move {
        d: Reg,
        a: Reg,
        off: u32,
        n: u32,
    },
    /// `d = obj; d[off..off+n] = comp` (`total` slots)
    Insert {
        d: Reg,
        obj: Reg,
        comp: Reg,
        off: u32,
        n: u32,
        total: u32,
    },
    /// `d = concat(parts)`: each part a register and its slot count
    Construct {
        d: Reg,
        parts: Box<[(Reg, u32)]>,
    },
    /// `d[i] = sel[i]`: a register and slot, or `None` for an undefined component (0xFFFFFFFF)
    Shuffle {
        d: Reg,
        sel: Box<[Option<(Reg, u32)>]>,
        loc: LocId,
    },
    /// `d = v[idx]` of a vector of `count` components (one slot each)
    ExtractDyn {
        d: Reg,
        v: Reg,
        idx: Reg,
        idx_w: u8,
        count: u32,
    },
    /// `d = v; d[idx] = comp`
    InsertDyn {
        d: Reg,
        v: Reg,
        comp: Reg,
        idx: Reg,
        idx_w: u8,
        count: u32,
    },
    /// `d[i] = v[i] * s` for `n` slots (vector or matrix times scalar)
    TimesScalar {
        w: u8,
        n: u32,
        d: Reg,
        v: Reg,
        s: Reg,
    },
    /// `d = m (cols × rows) * v` → rows slots
    MatTimesVec {
        w: u8,
        rows: u32,
        cols: u32,
        d: Reg,
        m: Reg,
        v: Reg,
    },
    /// `d = v * m (cols × rows)` → cols slots
    VecTimesMat {
        w: u8,
        rows: u32,
        cols: u32,
        d: Reg,
        v: Reg,
        m: Reg,
    },
    /// `d = a (inner cols × rows) * b (cols × inner)` → cols × rows
    MatTimesMat {
        w: u8,
        rows: u32,
        inner: u32,
        cols: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// `d = a (rows) ⊗ b (cols)` → cols × rows
    Outer {
        w: u8,
        rows: u32,
        cols: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Transpose {
        rows: u32,
        cols: u32,
        d: Reg,
        m: Reg,
    },
    Dot {
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// `d` = the integer dot product of `a` and `b` (`OpSDot`, `OpUDot`, `OpSUDot`), plus `acc`
    /// saturated to `d`'s type (the `…AccSat` forms), SPV_KHR_integer_dot_product
    IntDot {
        d: Reg,
        a: Reg,
        b: Reg,
        acc: Option<Reg>,
        /// the operands' slots: their components, or 1 for the packed 4×8-bit form
        n: u32,
        /// each component's width (8 in the packed form)
        cw: u8,
        /// the packed 4×8-bit form: four 8-bit components in one 32-bit slot, component 0 lowest
        packed: bool,
        /// `a`'s and `b`'s components are signed
        signed: (bool, bool),
        /// the result's width
        w: u8,
        /// the result is signed (what the saturation clamps to)
        rsigned: bool,
    },
    /// `(low, high)` or `(sum, carry)` results of the extended integer ops as a 2-member struct
    IntPair {
        op: IntPair,
        w: u8,
        n: u32,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    BitField {
        op: BitField,
        w: u8,
        n: u32,
        d: Reg,
        base: Reg,
        insert: Reg,
        offset: Reg,
        count: Reg,
    },
    /// a GLSL.std.450 instruction: `s` is the scalar type of the first operand, `n` its
    /// components, `w1` the width in bits of the second operand's scalars (Ldexp's exponent)
    Ext {
        f: Ext,
        s: Scalar,
        w1: u8,
        n: u32,
        d: Reg,
        args: [Reg; 3],
        nargs: u8,
        relaxed: bool,
    },
    /// `Modf`/`Frexp` with an out pointer: `d` = fraction / significand, `*ptr` = whole / exponent
    ExtOut {
        frexp: bool,
        w: u8,
        n: u32,
        d: Reg,
        x: Reg,
        ptr: Reg,
        plan: PlanId,
    },
    Load {
        d: Reg,
        ptr: Reg,
        plan: PlanId,
    },
    Store {
        ptr: Reg,
        v: Reg,
        plan: PlanId,
    },
    /// A store of `v` to a carried variable in a promoted body (`decode/promote.rs`): the value
    /// copied into the variable's register, the lanes noted as holding it there; the store itself
    /// only once an invocation's path has been lost (then memory is what the bodies as written read).
    CarriedStore {
        v: Reg,
        c: CarriedAccess,
    },
    /// A load of a carried variable into `d` in a promoted body: the variable's register for the
    /// lanes that stored it there, memory for the others (and for all once a path is lost).
    CarriedLoad {
        d: Reg,
        c: CarriedAccess,
    },
    /// `*dst = *src` (`OpCopyMemory`), through a value of the plan's slots
    CopyMemory {
        dst: Reg,
        src: Reg,
        plan: PlanId,
        tmp: Reg,
    },
    AccessChain {
        d: Reg,
        base: Reg,
        steps: Box<[Step]>,
    },
    /// an access chain on a `PhysicalStorageBuffer` pointer: `d` = the device address `base` plus
    /// the steps' bytes (an index past a sized array makes the address undefined)
    AddrChain {
        d: Reg,
        base: Reg,
        steps: Box<[Step]>,
    },
    /// `d` = the pointer (object, offset) of device address `addr` for an access of `bytes` bytes
    /// (a write when `write`) that the module declares `align`-byte aligned (0: not declared): the
    /// buffer it lies in, or out of bounds of every buffer
    Resolve {
        d: Reg,
        addr: Reg,
        bytes: u32,
        align: u32,
        write: bool,
    },
    /// `d = (object size - member offset) / stride` of the runtime array at the end of `ptr`'s block
    ArrayLength {
        d: Reg,
        ptr: Reg,
        offset: u32,
        stride: u32,
    },
    /// `OpImageRead` / `OpImageFetch`: `d` (`n` components of `w` bits) = the texel of image `img`
    /// at coordinate `coord` (`cw`-bit integers), sample `sample`
    ImageRead {
        d: Reg,
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Option<Reg>,
        n: u8,
        w: u8,
    },
    /// `OpImageWrite`: the texel of `img` at `coord` (sample `sample`) = `texel` (`n` × `w` bits)
    ImageWrite {
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Option<Reg>,
        texel: Reg,
        n: u8,
        w: u8,
    },
    /// `OpImageQuerySize` and `OpImageQuerySizeLod` (`what` = 0, `lod` the level asked for),
    /// `OpImageQuerySamples` (1), `OpImageQueryLevels` (2): `n` integers of `w` bits
    ImageQuery {
        d: Reg,
        img: Reg,
        what: u8,
        lod: Option<Reg>,
        n: u8,
        w: u8,
    },
    /// `OpSampledImage`: `d` = image `img` with sampler `smp`
    SampledImage {
        d: Reg,
        img: Reg,
        smp: Reg,
    },
    /// `OpImageSampleExplicitLod` / `OpImageSampleImplicitLod`: `d` (`n` components of `w` bits,
    /// integers where `int`) = sampled image `img` filtered at the float coordinate `coord`, at level
    /// of detail `lod` (`None`: implicit)
    ImageSample {
        d: Reg,
        img: Reg,
        coord: Reg,
        lod: Option<Reg>,
        n: u8,
        w: u8,
        int: bool,
    },
    /// `OpImageTexelPointer`: `d` = a pointer to the texel of image variable `img` at `coord`,
    /// sample `sample` (out of bounds where the coordinate fails validation)
    TexelPointer {
        d: Reg,
        img: Reg,
        coord: Reg,
        cw: u8,
        sample: Reg,
        sw: u8,
    },
    /// an atomic: `scope` the memory scope, `sem` the memory semantics (for a compare-exchange,
    /// those of the equal case; the unequal case only reads)
    Atomic {
        op: AtomicOp,
        s: Scalar,
        d: Option<Reg>,
        ptr: Reg,
        v: Option<Reg>,
        cmp: Option<Reg>,
        scope: crate::spirv::memory::Scope,
        sem: u32,
    },
    Group(Box<Group>, Reg),
    /// `OpControlBarrier` with execution scope Workgroup (`workgroup`) or Subgroup, its memory
    /// scope and its memory semantics
    Barrier {
        workgroup: bool,
        scope: crate::spirv::memory::Scope,
        sem: u32,
    },
    /// `OpMemoryBarrier`: a fence of this memory scope with these memory semantics
    MemoryBarrier {
        scope: crate::spirv::memory::Scope,
        sem: u32,
    },
    Call {
        d: Option<Reg>,
        f: FuncIdx,
        args: Box<[Reg]>,
    },
    /// `d` becomes undefined (`OpUndef` in a function)
    Undef {
        d: Reg,
        n: u32,
    },
    /// `d` = a reading of a clock (`OpReadClockKHR`): `n` slots (one 64-bit integer, or its
    /// two 32-bit halves, low first) of a count that only grows; order-dependent, as when a
    /// device runs an instruction is its own
    Clock {
        d: Reg,
        n: u32,
        /// the clock's scope is the device (not the subgroup)
        device: bool,
    },
    /// `debugPrintfEXT`: each lane of the set prints `p`'s format with the values of `args`
    /// (a finding that fails nothing: [`crate::spirv::Finding::Print`])
    Printf {
        args: Box<[Reg]>,
        p: Box<Print>,
    },
    /// The entry of an inlined call to function `f` (decode-time inlining,
    /// [`crate::spirv::decode`]): its `Function` variables reset, as a call resets them
    EnterLocals {
        f: FuncIdx,
    },
    /// The return of an inlined call: `d` (`n` slots) = the callee's returned `v`, with the taint
    /// of their path in lanes whose path is lost, as a call's result has it
    CallReturn {
        d: Reg,
        v: Reg,
        n: u32,
    },
}

/// Extended integer arithmetic with a two-member struct result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum IntPair {
    AddCarry,
    SubBorrow,
    UMulExtended,
    SMulExtended,
}

/// Bit-field instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BitField {
    Insert,
    SExtract,
    UExtract,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// `OpBranch`
    Branch(BlockIdx),
    /// `OpBranchConditional`
    Cond {
        /// the bool condition
        c: Reg,
        /// taken where true
        t: BlockIdx,
        /// taken where false
        f: BlockIdx,
    },
    /// `OpSwitch`
    Switch {
        /// the selector
        sel: Reg,
        /// its width
        w: u8,
        /// default target
        default: BlockIdx,
        /// (literal, target)
        cases: Box<[(u64, BlockIdx)]>,
    },
    /// `OpReturn`
    Return,
    /// `OpReturnValue`
    ReturnValue(Reg),
    /// `OpUnreachable`
    Unreachable,
}

impl Term {
    /// The blocks this terminator may go to (a switch's default first, then its cases).
    pub(crate) fn successors(&self) -> impl Iterator<Item = BlockIdx> + '_ {
        let (first, rest): (Option<BlockIdx>, &[(u64, BlockIdx)]) = match self {
            Term::Branch(b) => (Some(*b), &[]),
            Term::Cond { t, f, .. } => return Succ::Two([*t, *f].into_iter()),
            Term::Switch { default, cases, .. } => (Some(*default), cases),
            Term::Return | Term::ReturnValue(_) | Term::Unreachable => (None, &[]),
        };
        Succ::Many(first.into_iter().chain(rest.iter().map(|c| c.1)))
    }
}

/// [`Term::successors`]' iterator, without an allocation.
enum Succ<A, B> {
    Two(A),
    Many(B),
}

impl<A: Iterator<Item = BlockIdx>, B: Iterator<Item = BlockIdx>> Iterator for Succ<A, B> {
    type Item = BlockIdx;
    fn next(&mut self) -> Option<BlockIdx> {
        match self {
            Succ::Two(a) => a.next(),
            Succ::Many(b) => b.next(),
        }
    }
}

/// The structured-control-flow declaration of a header block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// not a header
    None,
    /// `OpSelectionMerge`
    Selection(BlockIdx),
    /// `OpLoopMerge`
    Loop {
        /// merge block
        merge: BlockIdx,
        /// continue target
        cont: BlockIdx,
    },
}

/// A phi: `d` takes, in each lane, the value coming from the block the lane arrived from.
#[derive(Clone, Debug, PartialEq)]
pub struct Phi {
    /// result
    pub d: Reg,
    /// its slots
    pub n: u32,
    /// (predecessor block, value)
    pub incoming: Box<[(BlockIdx, Reg)]>,
}

/// A basic block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// the SPIR-V label id (construct ids in reports are header label ids)
    pub label: u32,
    /// phis, evaluated on entry
    pub phis: Vec<Phi>,
    /// the body
    pub insts: Vec<Inst>,
    /// location of each instruction of the body
    pub locs: Vec<LocId>,
    /// body instructions decoded away (access chains of constant steps, whose pointers are
    /// constants): counted as executed, so lane-instruction counts are those of the module
    pub folded: u32,
    /// body instructions that are not the module's (the argument moves, locals reset and return
    /// of an inlined call): not counted as executed
    pub uncounted: u32,
    /// header declaration
    pub merge: Merge,
    /// terminator
    pub term: Term,
    /// location of the terminator (and of the merge instruction)
    pub term_loc: LocId,
    /// registers this block defines (phis and instruction results)
    pub defs: Vec<Reg>,
    /// for a header: can an invocation leave its construct other than through its merge block
    /// (a break or continue of an enclosing loop, a return)?
    pub escapes: bool,
    /// for a selection header: no loop in its construct or the functions it calls (every way
    /// through it ends)
    pub acyclic: bool,
    /// for a loop header: every register defined in the loop's construct (they dominate uses
    /// after the merge when defined in blocks that dominate it)
    pub loop_defs: Vec<Reg>,
    /// the body with the invocation's own variables promoted, run instead of `insts` while no
    /// invocation's path is lost (decode-time promotion, [`crate::spirv::decode`]); `None`: the
    /// same as `insts`
    pub fast: Option<Box<FastBody>>,
    /// for a block holding a loop unrolled at decode time (`decode/unroll.rs`: the block that
    /// enters the loop, with the loop's iterations and its merge block after its own
    /// instructions): the block as written, run instead once an invocation's path is lost
    pub written: Option<Box<AsWritten>>,
}

/// A block as written, kept beside its unrolled form ([`Block::written`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AsWritten {
    /// the block as written
    pub block: Block,
    /// the blocks run only through it (the loop's, and its merge block where taken in)
    pub blocks: Vec<BlockIdx>,
}

/// A block's body with the loads and stores of an invocation's own variables that need not run
/// removed and their registers renamed ([`Block::fast`]); counted as the block as written.
#[derive(Clone, Debug, PartialEq)]
pub struct FastBody {
    /// the instructions
    pub insts: Vec<Inst>,
    /// the location of each
    pub locs: Vec<LocId>,
}

impl Block {
    /// An empty block with label `label` (its terminator set as it is read).
    pub fn new(label: u32) -> Block {
        Block {
            label,
            phis: Vec::new(),
            insts: Vec::new(),
            locs: Vec::new(),
            folded: 0,
            uncounted: 0,
            merge: Merge::None,
            term: Term::Unreachable,
            term_loc: LocId::default(),
            defs: Vec::new(),
            escapes: false,
            acyclic: false,
            loop_defs: Vec::new(),
            fast: None,
            written: None,
        }
    }
}

/// A function.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// its name (`OpName`) or `%id`
    pub name: String,
    /// parameter registers
    pub params: Vec<Reg>,
    /// slots of each parameter
    pub param_slots: Vec<u32>,
    /// the blocks; block 0 is the entry
    pub blocks: Vec<Block>,
    /// `Function` variables declared here: reset (uninitialised, or to their initializer) on entry
    pub locals: Vec<ObjectId>,
    /// slots of the return value
    pub ret_slots: u32,
    /// the register holding the return value during a call (scratch of this function)
    pub ret: Option<Reg>,
    /// does any block of this function have phis (the executor then tracks predecessors)
    pub has_phis: bool,
}

/// The functions reached from `roots` through calls, each once, callees before callers (depth-first
/// post-order, callees in call order; iterative: thousands of chained functions need no deep
/// stack), and the first call found to close a cycle (recursion), as (caller, callee), not followed.
pub(crate) fn calls_post_order(
    funcs: &[Func],
    roots: impl IntoIterator<Item = usize>,
) -> (Vec<usize>, Option<(usize, usize)>) {
    let callees: Vec<Vec<usize>> = funcs
        .iter()
        .map(|func| {
            func.blocks
                .iter()
                .flat_map(|b| &b.insts)
                .filter_map(|i| match i {
                    Inst::Call { f, .. } => Some(*f as usize),
                    _ => None,
                })
                .collect()
        })
        .collect();
    // 0: not seen, 1: on the walk's path, 2: done
    let mut state = vec![0u8; funcs.len()];
    let (mut post, mut cycle) = (Vec::new(), None);
    for root in roots {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        // (function, calls of it already followed)
        let mut path = vec![(root, 0usize)];
        while let Some(&mut (f, ref mut next)) = path.last_mut() {
            match callees[f].get(*next) {
                Some(&c) => {
                    *next += 1;
                    match state[c] {
                        0 => {
                            state[c] = 1;
                            path.push((c, 0));
                        }
                        1 => {
                            cycle.get_or_insert((f, c));
                        }
                        _ => {}
                    }
                }
                None => {
                    state[f] = 2;
                    post.push(f);
                    path.pop();
                }
            }
        }
    }
    (post, cycle)
}

/// A variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// `OpName`, or `%id`
    pub name: String,
    /// its storage class
    pub storage: Storage,
    /// pointee type
    pub ty: TypeId,
    /// size in bytes (for a block ending in a runtime array: its size without the array)
    pub size: u32,
    /// words reserved per lane (per-lane storage) or per workgroup (shared)
    pub words: u32,
    /// first word in per-lane or shared memory
    pub base: u32,
    /// bytes per taint and race unit: the smallest scalar the object holds (1, 2 or 4)
    pub unit: u32,
    /// first taint unit in per-lane or shared memory
    pub tbase: u32,
    /// initializer register
    pub init: Option<Reg>,
    /// (descriptor set, binding) of a buffer
    pub binding: Option<(u32, u32)>,
    /// a built-in input
    pub builtin: Option<rspirv::spirv::BuiltIn>,
    /// the block has a runtime array at its end: its byte offset and its stride
    pub runtime_array: Option<(u32, u32)>,
    /// the shader cannot write it (uniform, push constant, `NonWritable`)
    pub read_only: bool,
    /// where it is declared
    pub loc: LocId,
    /// element of an array of descriptors (0 for a plain binding)
    pub element: u32,
    /// the number of descriptors in its array (0 for a plain binding)
    pub descriptors: u32,
    /// the image, for an object of [`Storage::Image`]
    pub image: Option<crate::spirv::types::ImageType>,
    /// a sampler descriptor (`sampler`; `image` is `None`), or an image with its own sampler
    /// (`sampler2D`, a combined image sampler)
    pub sampler: bool,
    /// the entry point's code refers to it (static use); else its binding needs no input
    pub used: bool,
}

impl Object {
    /// The indices of this object's taint units in its memory's taint array (per lane, for an
    /// invocation's own variables).
    pub fn taint_units(&self) -> std::ops::Range<usize> {
        let start = self.tbase as usize;
        start..start + (self.words * 4 / self.unit.max(1)) as usize
    }

    /// The error for a write (`what`: "a store to", …) to this variable where it is read-only,
    /// else `None`: one rule for the decoder's validate pass and the executor's accesses.
    pub fn refuses_write(&self, what: &str) -> Option<crate::spirv::SpirvError> {
        (self.read_only && self.storage != Storage::StorageBuffer).then(|| {
            crate::spirv::SpirvError::malformed(format!(
                "{what} the read-only {} variable {} (Vulkan: Uniform, PushConstant and Input memory and NonWritable variables are read-only)",
                self.storage.name(),
                self.name
            ))
        })
    }

    /// Memory reached only through device addresses (`PhysicalStorageBuffer`): a buffer with no
    /// descriptor (`binding` at [`crate::spirv::UNBOUND_SET`]), or, without a binding, the stand-in
    /// for addresses that lie in no buffer. Its size is its buffer's; taint per byte.
    pub fn addressed(name: String, binding: Option<(u32, u32)>, loc: LocId) -> Object {
        Object {
            name,
            storage: crate::spirv::types::Storage::PhysicalStorageBuffer,
            ty: 0,
            size: 0,
            words: 0,
            base: 0,
            unit: 1,
            tbase: 0,
            init: None,
            binding,
            builtin: None,
            runtime_array: None,
            read_only: false,
            loc,
            element: 0,
            descriptors: 0,
            image: None,
            sampler: false,
            used: true,
        }
    }
}

/// How to move a value of a type between registers and memory: each slot's scalar and offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// (scalar, byte offset) per slot
    pub slots: Box<[(Scalar, u32)]>,
    /// bytes spanned
    pub size: u32,
}

/// A constant register's value (slot bits), and whether it is `OpUndef`.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    /// the register
    pub reg: Reg,
    /// slot values (bit patterns)
    pub bits: Box<[u64]>,
    /// per slot: `OpUndef` at module scope (that slot's value is undefined)
    pub undef: Box<[bool]>,
    /// the `OpUndef` behind the undefined slots (the first one, for a composite)
    pub undef_at: LocId,
    /// the undefined slots are components selected with 0xFFFFFFFF by an `OpSpecConstantOp`
    /// `OpVectorShuffle` (`undef_at`), not an `OpUndef`
    pub undef_component: bool,
}

/// A whole decoded module, for one entry point and one set of specialization constants.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// display name
    pub name: String,
    /// the entry point's name
    pub entry_name: String,
    /// the entry function
    pub entry: FuncIdx,
    /// workgroup size (after specialization)
    pub local_size: [u32; 3],
    /// the reconvergence model the module declares
    pub declared_mode: Mode,
    /// denormals must be preserved (`DenormPreserve`) for floats of 16, 32, 64 bits
    pub denorm_preserve: [bool; 3],
    /// the sign of a zero must be kept (`SignedZeroInfNanPreserve`) for floats of 16, 32, 64 bits
    pub signed_zero_preserve: [bool; 3],
    /// the types
    pub types: Types,
    /// slots of each register
    pub reg_slots: Vec<u32>,
    /// registers that read slots of another, with no rows of their own
    pub reg_views: Vec<RegView>,
    /// constant registers
    pub constants: Vec<Constant>,
    /// variables
    pub objects: Vec<Object>,
    /// load/store plans
    pub plans: Vec<Plan>,
    /// functions
    pub funcs: Vec<Func>,
    /// every location an instruction can be at
    pub locs: Vec<Location>,
    /// per-lane memory words per invocation
    pub lane_words: u32,
    /// shared memory words per workgroup
    pub shared_words: u32,
    /// per-lane memory taint units per invocation
    pub lane_units: u32,
    /// struct member names (`OpMemberName`) by (type, member)
    pub member_names: std::collections::HashMap<(TypeId, u32), String>,
    /// per construct header label: the buffer objects its blocks may store to (for the paths an
    /// invocation whose branch is not pinned down did not take)
    pub construct_stores: std::collections::HashMap<u32, Vec<ObjectId>>,
    /// per construct header: the invocation's own variables (Function, Private) its blocks may
    /// store to — at its merge, a lane whose path inside was not pinned down gets that path's
    /// taint on them, as on the merge block's phis
    pub construct_lane_stores: std::collections::HashMap<u32, Vec<ObjectId>>,
    /// by function index: the invocation's own variables the function and its callees may store
    /// to (what a path lost in a call and left lost at its return may have left different)
    pub func_lane_stores: Vec<Vec<ObjectId>>,
    /// shared memory taint units per workgroup
    pub shared_units: u32,
    /// header label id → location of its merge instruction (for naming constructs)
    pub constructs: std::collections::HashMap<u32, LocId>,
    /// specialization constants the module declares: (SpecId, type name, default bits)
    pub spec_ids: Vec<(u32, String)>,
    /// every subgroup operation in the module uses only ops of these catalogue entries
    pub uses_subgroups: bool,
    /// the object standing for memory at a device address that lies in no buffer, when the
    /// module accesses memory through `PhysicalStorageBuffer` pointers; the buffers such
    /// pointers reach are objects added for a run ([`crate::spirv::Addressing`])
    pub no_buffer: Option<ObjectId>,
    /// by location: which sides of its memory accesses are *private* (bit 1 its read, bit 2 its
    /// write: `private_side`): not ordered with another invocation's accesses by any barrier or
    /// atomic (Vulkan, Appendix B, Private vs. Non-Private)
    pub private: Vec<u8>,
    /// the variables the promoted bodies carry in a register of their own, by the index
    /// `Inst::CarriedStore` and `Inst::CarriedLoad` name
    pub carried: Vec<CarriedVar>,
    /// by object: its index in `carried`, `u32::MAX` for the others
    pub carried_of: Vec<u32>,
}

/// Which sides of an instruction's memory accesses are private (bits of [`Kernel::private`]).
pub mod private_side {
    /// its read (a load, an image read, a copy's source)
    pub const READ: u8 = 1;
    /// its write (a store, an image write, a copy's target)
    pub const WRITE: u8 = 2;
}

/// The index of a float width in the per-width execution-mode flags (16, 32, 64 bits).
pub(crate) fn width_index(width: u32) -> usize {
    match width {
        16 => 0,
        32 => 1,
        _ => 2,
    }
}

impl Kernel {
    /// Whether a device may ignore the sign of a zero float of `width` bits: Vulkan, "Precision
    /// and Operation of SPIR-V Instructions": "By default, the implementation may perform
    /// optimizations on half, single, or double-precision floating-point instructions that ignore
    /// sign of a zero, or assume that arguments and results are not NaNs or infinities. If the
    /// entry point is declared with the SignedZeroInfNanPreserve execution mode, then NaNs,
    /// infinities, and the sign of zero must not be ignored."
    pub(crate) fn zero_sign_ignorable(&self, width: u32) -> bool {
        !self.signed_zero_preserve[width_index(width)]
    }

    /// How many `OpFunctionCall`s the decoded functions execute as calls — those decode-time
    /// inlining left ([`crate::spirv::DecodeOptions::keep_calls`]).
    pub fn calls(&self) -> usize {
        self.funcs
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.insts)
            .filter(|i| matches!(i, Inst::Call { .. }))
            .count()
    }

    /// How many instructions the promoted bodies do not run — loads and stores of `Function`
    /// variables, copies, constant chains, locals resets ([`crate::spirv::DecodeOptions::keep_variables`]
    /// runs them all): those of the bodies as written less those of the promoted ones, summed
    /// over the blocks (a block whose promoted body copies a carried variable's stored value into
    /// its register counts the copy against what it saves; 0 if the copies outnumber the savings).
    pub fn promoted(&self) -> usize {
        let net: i64 = self
            .funcs
            .iter()
            .flat_map(|f| &f.blocks)
            .filter_map(|b| Some(b.insts.len() as i64 - b.fast.as_ref()?.insts.len() as i64))
            .sum();
        net.max(0) as usize
    }

    /// The element at byte `offset` of object `obj`, in the source's names: `data[5]`,
    /// `params.scale`, `buf.rows[2].x[1]` (a block without an instance name starts at its member).
    pub fn describe(&self, obj: ObjectId, offset: u64) -> String {
        self.var_names().describe(obj, offset)
    }

    /// What naming elements needs, apart from the code (kept by a run's report).
    pub fn var_names(&self) -> VarNames {
        VarNames {
            types: self.types.clone(),
            member_names: self.member_names.clone(),
            objects: self
                .objects
                .iter()
                .map(|o| (o.name.clone(), o.ty))
                .collect(),
            extents: Default::default(),
        }
    }
}

/// What a `debugPrintfEXT` prints, beside the registers it reads ([`Inst::Printf`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Print {
    /// the format, parsed
    pub(crate) format: crate::spirv::printf::Format,
    /// each argument's scalar type and component count
    pub(crate) types: Box<[(crate::spirv::types::Scalar, u32)]>,
}
