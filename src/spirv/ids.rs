//! The interpreter's numbered things, as types of their own (as naga's `Handle<T>` and wasmi's
//! `Reg`): a register, a memory object, an instruction's location. A leaf module: every layer
//! (decoder, register file, memory, provenance, executor) names them without importing another.

/// A register: one SSA value (or constant) of the module, `slots` scalars per invocation.
///
/// Registers are numbered by the decoder in the order it meets values; the number is an index into
/// [`crate::spirv::Kernel::reg_slots`] and the register file's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Reg(u32);

impl Reg {
    /// The register numbered `i`.
    #[inline(always)]
    pub const fn new(i: u32) -> Self {
        Reg(i)
    }

    /// Its number, as an index.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// A view: register `view` is slots `slot..` of register `of` and has no rows of its own (the
/// register file's "Views"; [`crate::spirv::Kernel::reg_views`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegView {
    /// the view
    pub view: Reg,
    /// its owner (never itself a view)
    pub of: Reg,
    /// the owner's first slot it reads
    pub slot: u32,
}

/// A memory object (a variable), by index in [`crate::spirv::Kernel::objects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ObjectId(u32);

impl ObjectId {
    /// Object number `i`.
    #[inline(always)]
    pub const fn new(i: u32) -> Self {
        ObjectId(i)
    }

    /// Its number, as an index into [`crate::spirv::Kernel::objects`] (and a dispatch's buffers).
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Its number.
    #[inline(always)]
    pub const fn get(self) -> u32 {
        self.0
    }
}
/// An instruction's location, by index in [`crate::spirv::Kernel::locs`] (its source line and SPIR-V text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LocId(u32);

impl LocId {
    /// Location number `i`.
    #[inline(always)]
    pub const fn new(i: u32) -> Self {
        LocId(i)
    }

    /// Its number, as an index into [`crate::spirv::Kernel::locs`].
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Its number.
    #[inline(always)]
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A variable carried in a register of its own by the promoted bodies (`decode/promote.rs`): the
/// one place every access to it uses, and the register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CarriedVar {
    /// the variable
    pub obj: ObjectId,
    /// byte offset of the place
    pub off: u32,
    /// the plan of its accesses (`Kernel::plans`)
    pub plan: u32,
    /// its register
    pub reg: Reg,
}

/// What a promoted body's access to a carried variable names besides its value register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CarriedAccess {
    /// the variable, by its index in `Kernel::carried`
    pub var: u32,
    /// the pointer the access as written uses
    pub ptr: Reg,
    /// the plan of the access (`Kernel::plans`)
    pub plan: u32,
    /// the variable's register
    pub rv: Reg,
    /// the register's slots
    pub n: u32,
}
