//! Device addresses (`PhysicalStorageBuffer` pointers, GL_EXT_buffer_reference): access chains
//! on an address, which are integer arithmetic, and the one place an address becomes a pointer
//! into a buffer — in front of every access through it — with the rule for an address that lies
//! in no buffer.

use crate::model::LaneMask;
use crate::reconverge::Flow;
use crate::spirv::exec::{each_lane, Finding, Wg};
use crate::spirv::inst::*;
use crate::spirv::memory::Ptr;
use crate::spirv::prov::{combine, is_undefined, Cause, Taint};
use crate::spirv::scalar::{mask, sext};

impl Wg<'_, '_> {
    /// An access chain on a device address: the address plus each step's bytes, wrapping as
    /// 64-bit integer arithmetic (SPIR-V 3.32.8 OpAccessChain on a `PhysicalStorageBuffer`
    /// pointer). No step is bounds-checked here: which buffer the address lies in, and whether
    /// the access fits in it, is decided where memory is accessed ([`Wg::resolve`]).
    pub(crate) fn addr_chain(&mut self, set: &[LaneMask], d: Reg, base: Reg, steps: &[Step]) {
        let nl = self.n;
        let tb = self.regs.dirty(base);
        let any_dyn_t = steps
            .iter()
            .any(|s| matches!(s, Step::Dyn { index, .. } if self.regs.dirty(*index)));
        if tb || any_dyn_t {
            self.regs.make_dirty(d);
        }
        let td = self.regs.dirty(d);
        let (db, bb) = (self.regs.base(d), self.regs.base(base));
        let rows: Vec<(usize, bool)> = steps
            .iter()
            .map(|st| match st {
                Step::Dyn { index, .. } => (self.regs.base(*index), self.regs.dirty(*index)),
                _ => (0, false),
            })
            .collect();
        let (vals, taint) = (&mut self.regs.vals, &mut self.regs.taint);
        each_lane(set, nl, |s| {
            let mut a = vals[bb + s];
            let mut t = if tb { taint[bb + s] } else { Taint::NONE };
            for (k, st) in steps.iter().enumerate() {
                match st {
                    Step::Const(c) => a = a.wrapping_add(*c as u64),
                    Step::Dyn {
                        width,
                        signed,
                        stride,
                        ..
                    } => {
                        let (row, dt) = rows[k];
                        let raw = vals[row + s] & mask(*width);
                        if dt {
                            t = combine(t, taint[row + s]);
                        }
                        let i = if *signed {
                            sext(*width, raw)
                        } else {
                            raw as i64
                        };
                        a = a.wrapping_add((i as u64).wrapping_mul(*stride as u64));
                    }
                    // Arrays of descriptors are never reached through an address.
                    Step::Descriptor { .. } => {}
                }
            }
            vals[db + s] = a;
            if td {
                taint[db + s] = t;
            }
        });
    }

    /// `d` = the pointer (buffer, offset) device address `addr` stands for, for an access of
    /// `bytes` bytes. An address inside a buffer is a pointer into it (an access running past its
    /// end is out of bounds of that buffer where it happens); an address in no buffer is an
    /// out-of-bounds finding here and an undefined pointer — SPIR-V gives an access through a
    /// `PhysicalStorageBuffer` pointer meaning only within the buffer it points into, and no
    /// robustness feature covers one (Vulkan, "Robust Buffer Access": descriptors only).
    pub(crate) fn resolve(
        &mut self,
        flow: &Flow,
        d: Reg,
        addr: Reg,
        (bytes, align): (u32, u32),
        write: bool,
        loc: LocId,
    ) {
        let n = self.n;
        let nowhere = self.k.no_buffer.unwrap_or(ObjectId::new(0));
        let (db, ab) = (self.regs.base(d), self.regs.base(addr));
        let ta = self.regs.dirty(addr);
        let was_dirty = self.regs.dirty(d);
        self.regs.make_dirty(d);
        let mut any_t = ta;
        for g in 0..self.groups {
            for l in flow.set[g].iter() {
                let s = g * n + l as usize;
                let a = self.regs.vals[ab + s];
                let t = if ta {
                    self.regs.taint[ab + s]
                } else {
                    Taint::NONE
                };
                // Vulkan, VUID-StandaloneSpirv-PhysicalStorageBuffer64-06315: "the pointer value
                // of a memory access instruction must be at least as aligned as specified by the
                // Aligned memory access operand"; a device may access other bytes, or fault.
                let misaligned = align > 1 && !a.is_multiple_of(align as u64);
                let found = if misaligned && !is_undefined(t) {
                    Err(Cause::Misaligned { address: a, align })
                } else {
                    Ok(self.d.address_of(a))
                };
                let (p, t) = match found {
                    Err(why) => {
                        any_t = true;
                        (Ptr::new(nowhere, 0), self.prov(why, loc, t))
                    }
                    Ok(Some((obj, off))) => (Ptr::new(obj, off), t),
                    // An undefined address: the access's own rule for an undefined pointer.
                    Ok(None) if is_undefined(t) => (Ptr::new(nowhere, 0), t),
                    Ok(None) => {
                        self.d.find(Finding::OutOfBounds {
                            object: nowhere,
                            offset: a,
                            past_array: None,
                            loc,
                            slot: self.who(s) - 1,
                            write,
                        });
                        any_t = true;
                        let why = self.prov(Cause::NoBuffer { address: a, bytes }, loc, t);
                        (Ptr::new(nowhere, 0), why)
                    }
                };
                self.regs.vals[db + s] = p.bits();
                self.regs.taint[db + s] = t;
            }
        }
        if !any_t && !was_dirty {
            self.regs.set_clean(d);
        }
    }
}
