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
//!
//! **Views.** A *view* is a register that names slots of another (its owner) and has no rows of
//! its own: the decoder makes one where a composite extract's result is read only in its block
//! before the owner is written again, or where a part of a composite can be computed in its place
//! (docs/interpreter.md, "Extracts read in place"), so the copy is not run. A view's dirty bit is
//! its owner's, kept so by `make_dirty`, `set_clean` and `clear_dirty`, which act on the owner:
//! making a view dirty zeroes the taint rows of the whole owner, and marking one clean marks the
//! owner clean — which its callers do only where the register was clean before the instruction
//! that wrote it (`make_dirty` zeroed every row), so the whole owner's taint is zero then.
//!
//! **Lanes of a row.** `each_lane` visits the active lanes of per-subgroup masks one by one;
//! `each_span` visits them as runs (a whole subgroup at once where all its lanes are active), so
//! the work on a run is a slice operation; `rows3` gives one row to write and two to read of the
//! same file as disjoint slices. `RegFile::taint2` is the two-operand taint policy over rows.

use crate::model::LaneMask;
use crate::spirv::ids::{Reg, RegView};
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
    /// the views of each register (whose dirty bits follow its own)
    views_of: Vec<Vec<u32>>,
    /// the owner of each view; each other register's own number
    owner: Vec<u32>,
}

impl RegFile {
    /// A register file for registers of `slots` scalars each, `lanes` lanes, of which `views`
    /// have no rows of their own; every value 0, every register clean.
    pub(crate) fn new(slots: &[u32], views: &[RegView], lanes: usize) -> Self {
        let mut off = Vec::with_capacity(slots.len());
        let mut view = vec![false; slots.len()];
        for v in views {
            view[v.view.index()] = true;
        }
        let mut total = 0usize;
        for (&s, &is_view) in slots.iter().zip(&view) {
            off.push(total);
            if !is_view {
                total += s as usize * lanes;
            }
        }
        let mut views_of = vec![Vec::new(); slots.len()];
        let mut owner: Vec<u32> = (0..slots.len() as u32).collect();
        for v in views {
            owner[v.view.index()] = v.of.index() as u32;
            debug_assert!(!view[v.of.index()], "a view of a view");
            debug_assert!(v.slot + slots[v.view.index()] <= slots[v.of.index()]);
            off[v.view.index()] = off[v.of.index()] + v.slot as usize * lanes;
            views_of[v.of.index()].push(v.view.index() as u32);
        }
        RegFile {
            lanes,
            off,
            slots: slots.to_vec(),
            vals: vec![0; total],
            taint: vec![Taint::NONE; total],
            dirty: vec![false; slots.len()],
            views_of,
            owner,
        }
    }

    /// The rows of `r`'s owner (`r`'s own where it is no view), every slot and lane.
    #[inline]
    fn owner_rows(&self, r: Reg) -> std::ops::Range<usize> {
        let o = self.owner[r.index()] as usize;
        self.off[o]..self.off[o] + self.slots[o] as usize * self.lanes
    }

    /// Sets the dirty bit of `r`'s owner (`r` itself where it is no view) and of its views.
    #[inline]
    fn set_dirty(&mut self, r: Reg, on: bool) {
        let o = self.owner[r.index()] as usize;
        self.dirty[o] = on;
        for &v in &self.views_of[o] {
            self.dirty[v as usize] = on;
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

    /// Marks `r` as carrying taint, zeroing its taint rows first if it had none (a view: its
    /// owner's, all of them).
    #[inline]
    pub(crate) fn make_dirty(&mut self, r: Reg) {
        if !self.dirty[r.index()] {
            let rows = self.owner_rows(r);
            self.taint[rows].fill(Taint::NONE);
            self.set_dirty(r, true);
        }
    }

    /// The first step of the taint policy for `d = f(a, b)`: `d` carries taint where an operand
    /// does or `extra` is not none. Whether `a`, `b` and (after this) `d` are dirty.
    #[inline(always)]
    pub(crate) fn dirty2(&mut self, d: Reg, a: Reg, b: Reg, extra: Taint) -> (bool, bool, bool) {
        let (ta, tb) = (self.dirty(a), self.dirty(b));
        if ta || tb || !extra.is_none() {
            self.make_dirty(d);
        }
        (ta, tb, self.dirty(d))
    }

    /// Marks `r` clean again: the caller knows every taint word of it (of its owner, for a view)
    /// is zero.
    #[inline]
    pub(crate) fn set_clean(&mut self, r: Reg) {
        debug_assert!(self.taint[self.owner_rows(r)].iter().all(|t| t.is_none()));
        self.set_dirty(r, false);
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

    /// The taint policy of a two-operand operation on one row: `taint[d] = combine(a, b) | extra`
    /// for the lanes of `set` (`da`, `db`: whether the operands' registers are dirty; a clean one
    /// contributes nothing). The rows `(d, a, b)` are indices as from [`RegFile::base`].
    #[inline(always)]
    pub(crate) fn taint2(
        &mut self,
        set: &[LaneMask],
        n: usize,
        (d, a, b): (usize, usize, usize),
        (da, db): (bool, bool),
        extra: Taint,
    ) {
        use crate::spirv::prov::combine;
        let lanes = self.lanes;
        let t = |on: bool, x: Taint| if on { x } else { Taint::NONE };
        match rows3(&mut self.taint, d, a, b, lanes) {
            // The operands' dirtiness decided once, not per lane (a clean one's row is not read).
            Some((dt, at, bt)) => match (da, db) {
                (true, true) => each_span(set, n, |r| {
                    let it = dt[r.clone()].iter_mut().zip(&at[r.clone()]).zip(&bt[r]);
                    for ((d, &x), &y) in it {
                        *d = combine(x, y) | extra;
                    }
                }),
                (true, false) | (false, true) => {
                    let src = if da { at } else { bt };
                    each_span(set, n, |r| {
                        for (d, &x) in dt[r.clone()].iter_mut().zip(&src[r]) {
                            *d = combine(x, Taint::NONE) | extra;
                        }
                    })
                }
                (false, false) => each_span(set, n, |r| dt[r].fill(extra)),
            },
            None => {
                let taint = &mut self.taint;
                each_lane(set, n, |s| {
                    taint[d + s] = combine(t(da, taint[a + s]), t(db, taint[b + s])) | extra
                });
            }
        }
    }
}

/// Calls `f(s)` for every lane `s` (workgroup-wide slot) of the per-subgroup masks `set`, in
/// order, run by run ([`each_span`]): the active lanes of a subgroup are mostly one run (all of
/// them, or those below the edge of the data), and a loop over a run is tighter than a bit scan.
#[inline(always)]
pub(crate) fn each_lane(set: &[LaneMask], n: usize, mut f: impl FnMut(usize)) {
    each_span(set, n, |r| {
        for s in r {
            f(s)
        }
    })
}

/// Calls `f` with every run of consecutive lanes (workgroup-wide slots) of the per-subgroup masks
/// `set`, in order: a run may cross from one subgroup into the next (their slots are adjacent), so
/// a workgroup whose lanes are all in `set` is one run — the work on it is one slice operation (a
/// copy, a fill, a loop the compiler vectorises) rather than a call per lane or per subgroup.
#[inline(always)]
pub(crate) fn each_span(set: &[LaneMask], n: usize, mut f: impl FnMut(std::ops::Range<usize>)) {
    // Every lane of every subgroup (most instructions of most kernels): one run, without the bit
    // scan of `Spans` (its `u128` shifts and counts cost more than a short run's work).
    let full = if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    };
    let mut spans = if set.iter().all(|m| m.0 == full) {
        Spans {
            set: &[],
            n,
            g: 0,
            b: 0,
            whole: set.len() * n,
        }
    } else {
        Spans {
            set,
            n,
            g: 0,
            b: set.first().map_or(0, |m| m.0),
            whole: 0,
        }
    };
    while let Some(r) = spans.next_run() {
        f(r)
    }
}

/// The runs of [`each_span`]: `b` holds the lanes of subgroup `g` not yet visited.
struct Spans<'a> {
    set: &'a [LaneMask],
    n: usize,
    g: usize,
    b: u128,
    /// a run of this many lanes from lane 0 still to give (every lane of `set`: `set` is empty)
    whole: usize,
}

/// `b` without its `k` lowest bits.
#[inline(always)]
fn above(b: u128, k: usize) -> u128 {
    if k >= 128 {
        0
    } else {
        b & !((1u128 << k) - 1)
    }
}

impl Spans<'_> {
    #[inline(always)]
    fn next_run(&mut self) -> Option<std::ops::Range<usize>> {
        if self.whole != 0 {
            return Some(0..std::mem::take(&mut self.whole));
        }
        while self.b == 0 {
            self.g += 1;
            self.b = self.set.get(self.g)?.0;
        }
        let start = self.b.trailing_zeros() as usize;
        let mut end = start + (self.b >> start).trailing_ones() as usize;
        let first = self.g * self.n + start;
        self.b = above(self.b, end);
        // A run to the last lane of its subgroup goes on into the next one's lanes from lane 0.
        while end == self.n && self.b == 0 {
            match self.set.get(self.g + 1) {
                Some(m) if m.0 & 1 != 0 => {
                    self.g += 1;
                    end = m.0.trailing_ones() as usize;
                    self.b = above(m.0, end);
                }
                _ => break,
            }
        }
        Some(first..self.g * self.n + end)
    }
}

/// The value every lane of `set` holds in `row` (a row of a register file, lanes indexed
/// workgroup-wide), or `None` where two lanes differ or no lane is in `set`. Branch-free over runs,
/// so that the check costs a fraction of the per-lane work it lets a caller skip; the first and
/// the last lane compared first.
#[inline]
pub(crate) fn same_on(set: &[LaneMask], n: usize, row: &[u64]) -> Option<u64> {
    let first = set
        .iter()
        .enumerate()
        .find(|(_, m)| m.0 != 0)
        .map(|(g, m)| row[g * n + m.0.trailing_zeros() as usize])?;
    // The last lane first: a value that differs between lanes (a pointer into a buffer's array,
    // one element per invocation) usually differs there, and then nothing else need be read.
    let (g, m) = set.iter().enumerate().rfind(|(_, m)| m.0 != 0)?;
    if row[g * n + (127 - m.0.leading_zeros()) as usize] != first {
        return None;
    }
    let mut diff = 0u64;
    each_span(set, n, |r| {
        diff |= row[r].iter().fold(0, |a, &x| a | (x ^ first));
    });
    (diff == 0).then_some(first)
}

/// The row of `len` elements at `d` to write and the rows at `a` and `b` to read, of one register
/// file (rows of different registers or slots are disjoint); `None` where `d` is one of them (an
/// update in place, done lane by lane).
#[inline(always)]
pub(crate) fn rows3<T>(
    v: &mut [T],
    d: usize,
    a: usize,
    b: usize,
    len: usize,
) -> Option<(&mut [T], &[T], &[T])> {
    if d == a || d == b {
        return None;
    }
    let (lo, rest) = v.split_at_mut(d);
    let (dst, hi) = rest.split_at_mut(len);
    let (lo, hi) = (&*lo, &*hi);
    let src = |s: usize| {
        if s < d {
            &lo[s..s + len]
        } else {
            &hi[s - d - len..s - d]
        }
    };
    Some((dst, src(a), src(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_laid_out_register_by_slot_by_lane() {
        let f = RegFile::new(&[1, 3, 2], &[], 4);
        assert_eq!(f.base(Reg::new(0)), 0);
        assert_eq!(f.base(Reg::new(1)), 4);
        assert_eq!(f.row(Reg::new(1), 2), 12);
        assert_eq!(f.base(Reg::new(2)), 16);
        assert_eq!(f.vals.len(), 24);
        assert_eq!(f.slots(Reg::new(1)), 3);
    }

    #[test]
    fn make_dirty_zeroes_stale_taint_and_clean_registers_read_as_defined() {
        let mut f = RegFile::new(&[2, 1], &[], 2);
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

    // A view has no rows: it reads its owner's slot, and its dirty bit is the owner's.
    #[test]
    fn a_view_reads_its_owners_slot_and_follows_its_dirty_bit() {
        let (a, v) = (Reg::new(0), Reg::new(2));
        let view = RegView {
            view: v,
            of: a,
            slot: 1,
        };
        let mut f = RegFile::new(&[3, 1, 1], &[view], 2);
        assert_eq!(f.vals.len(), 8, "the view has no rows of its own");
        assert_eq!(f.base(v), f.row(a, 1));
        let (vb, a1) = (f.base(v), f.row(a, 1));
        f.fill_row(a, 1, 42);
        assert_eq!(f.vals[vb..vb + 2], [42, 42]);
        f.make_dirty(a);
        assert!(f.dirty(v));
        f.taint[a1] = Taint::undefined(3);
        assert_eq!(f.taint_at(v, vb), Taint::undefined(3));
        f.taint[a1] = Taint::NONE;
        f.set_clean(a);
        assert!(!f.dirty(v));
        f.make_dirty(a);
        f.clear_dirty();
        assert!(!f.dirty(v));
    }

    // each_span visits exactly the lanes each_lane visits, as maximal runs: a full subgroup is one
    // run; 0b1011_0110 in a subgroup of 8 is the runs 1..3 and 4..6 and 7..8.
    #[test]
    fn spans_are_the_runs_of_the_active_lanes() {
        let set = [LaneMask(0xff), LaneMask(0b1011_0110), LaneMask(0)];
        let mut runs = Vec::new();
        each_span(&set, 8, |r| runs.push(r));
        assert_eq!(runs, vec![0..8, 9..11, 12..14, 15..16]);
        let mut lanes = Vec::new();
        each_lane(&set, 8, |s| lanes.push(s));
        let flat: Vec<usize> = runs.into_iter().flatten().collect();
        assert_eq!(flat, lanes);
        let mut all = Vec::new();
        each_span(&[LaneMask(u128::MAX)], 128, |r| all.push(r));
        assert_eq!(all, vec![0..128]);
    }

    #[test]
    fn same_on_finds_the_value_all_active_lanes_share_and_ignores_the_others() {
        let row = [5u64, 5, 9, 5, 7, 7, 7, 7];
        assert_eq!(same_on(&[LaneMask(0b1011), LaneMask(0)], 4, &row), Some(5));
        assert_eq!(same_on(&[LaneMask(0b1111), LaneMask(0)], 4, &row), None);
        assert_eq!(same_on(&[LaneMask(0), LaneMask(0b1111)], 4, &row), Some(7));
        assert_eq!(
            same_on(&[LaneMask(0b0001), LaneMask(0b1111)], 4, &row),
            None
        );
        assert_eq!(same_on(&[LaneMask(0), LaneMask(0)], 4, &row), None);
    }

    #[test]
    fn rows3_gives_disjoint_rows_and_refuses_an_update_in_place() {
        let mut v: Vec<u32> = (0..12).collect();
        let (d, a, b) = rows3(&mut v, 4, 8, 0, 4).expect("disjoint");
        assert_eq!((a, b), (&[8, 9, 10, 11][..], &[0, 1, 2, 3][..]));
        d.copy_from_slice(&[7; 4]);
        assert_eq!(v[4..8], [7; 4]);
        assert!(rows3(&mut v, 4, 4, 0, 4).is_none());
    }
}
