//! The machine layer's register file: every register's values and taints for every lane of a
//! workgroup, structure of arrays, and the one invariant that keeps clean code fast.
//!
//! A [`Reg`] names one SSA value (or constant) of the module; it has `slots` scalars per invocation
//! (a `vec3` has 3, a struct one per scalar member). Slot `c` of register `r` is a *row* of `lanes`
//! consecutive values — lane `s` at `row(r, c) + s` in `RegFile::vals` — so an instruction runs
//! for all active lanes of a subgroup in one tight loop over rows, and the same index addresses the
//! taint word of that value in `RegFile::taint`.
//!
//! **The dirty invariant.** A register that is not *dirty* has every taint word zero (defined and
//! exact) for every lane, and its taint rows are not read: code that only meets defined values
//! never touches taint memory. `RegFile::make_dirty` zeroes a register's taint rows before its
//! first tainted write; `RegFile::set_clean` is for a register whose rows are known zero again.
//! The per-operation taint policies (the first operand's cause wins, a deciding operand absorbs the
//! other, …) are applied by the executor's few generic entry points (`map1`, `map2`,
//! `map2_absorb`, `move_into`, `copy_reg`), not by each operation.

use crate::spirv::ids::Reg;
use crate::spirv::prov::Taint;

/// Values, taints and dirty bits of every register for every lane of one workgroup.
pub(crate) struct RegFile {
    /// lanes in all (subgroups × subgroup size)
    lanes: usize,
    /// the row of slot 0 of each register
    off: Vec<usize>,
    /// slots of each register
    slots: Vec<u32>,
    /// register values: register r, slot c, lane s at `row(r, c) + s`
    pub(crate) vals: Vec<u64>,
    /// the taint word beside each value (meaningful only for dirty registers)
    pub(crate) taint: Vec<Taint>,
    /// which registers carry taint
    dirty: Vec<bool>,
}

impl RegFile {
    /// A register file for registers of `slots` scalars each, `lanes` lanes; every value 0, every
    /// register clean.
    pub(crate) fn new(slots: &[u32], lanes: usize) -> Self {
        let mut off = Vec::with_capacity(slots.len());
        let mut total = 0usize;
        for &s in slots {
            off.push(total);
            total += s as usize * lanes;
        }
        RegFile {
            lanes,
            off,
            slots: slots.to_vec(),
            vals: vec![0; total],
            taint: vec![Taint::NONE; total],
            dirty: vec![false; slots.len()],
        }
    }

    /// The index of lane 0 of slot 0 of `r` in [`RegFile::vals`] and [`RegFile::taint`].
    #[inline(always)]
    pub(crate) fn base(&self, r: Reg) -> usize {
        self.off[r.index()]
    }

    /// The index of lane 0 of slot `c` of `r`.
    #[inline(always)]
    pub(crate) fn row(&self, r: Reg, c: usize) -> usize {
        self.off[r.index()] + c * self.lanes
    }

    /// Slots of `r`.
    #[inline(always)]
    pub(crate) fn slots(&self, r: Reg) -> u32 {
        self.slots[r.index()]
    }

    /// Does `r` carry taint (else every taint word of it is zero)?
    #[inline(always)]
    pub(crate) fn dirty(&self, r: Reg) -> bool {
        self.dirty[r.index()]
    }

    /// Marks `r` as carrying taint, zeroing its taint rows first if it had none.
    #[inline]
    pub(crate) fn make_dirty(&mut self, r: Reg) {
        if !self.dirty[r.index()] {
            let base = self.off[r.index()];
            let len = self.slots[r.index()] as usize * self.lanes;
            self.taint[base..base + len].fill(Taint::NONE);
            self.dirty[r.index()] = true;
        }
    }

    /// Marks `r` clean again: the caller knows every taint word of it is zero.
    #[inline]
    pub(crate) fn set_clean(&mut self, r: Reg) {
        debug_assert!({
            let base = self.off[r.index()];
            let len = self.slots[r.index()] as usize * self.lanes;
            self.taint[base..base + len].iter().all(|t| t.is_none())
        });
        self.dirty[r.index()] = false;
    }

    /// Every register clean (a new workgroup).
    pub(crate) fn clear_dirty(&mut self) {
        self.dirty.fill(false);
    }

    /// The taint of the value at index `i` of register `r`'s rows (zero for a clean register).
    #[inline(always)]
    pub(crate) fn taint_at(&self, r: Reg, i: usize) -> Taint {
        if self.dirty[r.index()] {
            self.taint[i]
        } else {
            Taint::NONE
        }
    }

    /// Fills slot `c` of `r` with `bits` in every lane.
    pub(crate) fn fill_row(&mut self, r: Reg, c: usize, bits: u64) {
        let row = self.row(r, c);
        self.vals[row..row + self.lanes].fill(bits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_laid_out_register_by_slot_by_lane() {
        let f = RegFile::new(&[1, 3, 2], 4);
        assert_eq!(f.base(Reg::new(0)), 0);
        assert_eq!(f.base(Reg::new(1)), 4);
        assert_eq!(f.row(Reg::new(1), 2), 12);
        assert_eq!(f.base(Reg::new(2)), 16);
        assert_eq!(f.vals.len(), 24);
        assert_eq!(f.slots(Reg::new(1)), 3);
    }

    #[test]
    fn make_dirty_zeroes_stale_taint_and_clean_registers_read_as_defined() {
        let mut f = RegFile::new(&[2, 1], 2);
        let r = Reg::new(0);
        // Stale taint from an earlier workgroup: not visible while the register is clean.
        f.taint[1] = Taint::undefined(7);
        assert!(!f.dirty(r));
        assert_eq!(f.taint_at(r, 1), Taint::NONE);
        f.make_dirty(r);
        assert!(f.dirty(r));
        assert_eq!(f.taint[..4], [Taint::NONE; 4]);
        f.taint[3] = Taint::undefined(9);
        assert_eq!(f.taint_at(r, 3), Taint::undefined(9));
        // A second make_dirty keeps what is there.
        f.make_dirty(r);
        assert_eq!(f.taint[3], Taint::undefined(9));
        f.taint[3] = Taint::NONE;
        f.set_clean(r);
        assert!(!f.dirty(r));
        f.clear_dirty();
        assert!(!f.dirty(Reg::new(1)));
    }
}
