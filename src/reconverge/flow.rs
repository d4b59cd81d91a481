//! The reconvergence rules, written once: which invocations execute a point of a structured program
//! together, and whether the model in force pins that set down.
//!
//! Two executors use these rules: the structured-program executor ([`crate::reconverge::exec`]) and
//! the SPIR-V interpreter ([`crate::spirv`]). Both describe control flow the same way — a construct
//! (an `if`/selection, a loop, a switch, a call) splits the set of invocations at its header
//! ([`Flow::part`], [`Flow::switch`]), joins it at its merge ([`Flow::merge`]) and joins lanes
//! arriving from several places where no rule reconverges them ([`Flow::join`]: a loop's continue
//! target, the point after a call) — and ask [`Flow::unpinned`] before evaluating a subgroup
//! operation.
//!
//! The rules, per model (the texts are quoted in docs/semantics/reconvergence.md):
//! - **maximal** (SPV_KHR_maximal_reconvergence): the set is the tangle, except inside a switch
//!   case reached by several selector values, where "invocations with different Selector values
//!   executing the same case construct *may* be partitioned into the same tangle" (Divergence).
//! - **sucf** (SPV_KHR_subgroup_uniform_control_flow): only *subgroup-uniform* control flow is
//!   pinned: "all invocations in each subgroup scope instance must reconverge if they were uniform
//!   for that subgroup instance upon entry into a structured loop or selection and they all exit via
//!   the loop's or selection's merge block" (Overview).
//! - **base** (core SPIR-V "Uniform Control Flow"): the same rule for the whole workgroup only.
//!
//! Uniformity is tracked per subgroup (sucf) and for the workgroup (base): a branch whose condition
//! differs within the scope makes the flow non-uniform; at a construct's merge it is restored to its
//! state at the header if no invocation of the scope left the construct other than through the
//! merge (break out of a nested construct, continue, return); a continue target or the point after a
//! call, reached from more than one place, is non-uniform (no rule reconverges there). Construct ids
//! are the caller's: AST ids in a `reconverge::Program`, header block ids in SPIR-V.

use crate::model::LaneMask;
use crate::reconverge::mode::Mode;

/// The invocations executing a point together, and what each model guarantees about them.
///
/// ```
/// use lockstep::model::LaneMask;
/// use lockstep::reconverge::{Flow, Lost, Mode, PerGroup};
/// // One subgroup of 4 lanes; construct 7 sends lanes 0 and 1 one way.
/// let entry = Flow::entry(vec![LaneMask(0b1111)]);
/// let then = entry.part(7, PerGroup::from_elem(LaneMask(0b0011), 1));
/// let lost = Lost::new(1);
/// assert_eq!(then.unpinned(Mode::Maximal, 0, &lost), None);
/// assert_eq!(then.unpinned(Mode::Sucf, 0, &lost), Some(7)); // not subgroup-uniform
/// // Every lane leaves through the merge: the guarantees of the header hold again.
/// let merged = entry.merge(7, [&then.set, &PerGroup::from_elem(LaneMask(0b1100), 1)]);
/// assert_eq!(merged.unpinned(Mode::Base, 0, &lost), None);
/// ```
#[derive(Debug, PartialEq)]
pub struct Flow {
    /// per subgroup: the structured set (the tangle under maximal reconvergence)
    pub set: PerGroup<LaneMask>,
    /// per subgroup: `None` while control flow is subgroup-uniform, else where it stopped being
    pub sg: PerGroup<Option<u32>>,
    /// `None` while control flow is workgroup-uniform, else where it stopped being
    pub wg: Option<u32>,
    /// per subgroup: `None` while maximal reconvergence pins the tangle, else the switch where
    /// several selector values share a case
    pub amb: PerGroup<Option<u32>>,
}

// A state is copied at every branch, call and merge: slice copies rather than the element-wise
// `extend` of a derived `Clone`.
impl Clone for Flow {
    fn clone(&self) -> Flow {
        Flow {
            set: PerGroup::from_slice(&self.set),
            sg: PerGroup::from_slice(&self.sg),
            wg: self.wg,
            amb: PerGroup::from_slice(&self.amb),
        }
    }
}

/// One value per subgroup of a workgroup, inline for up to 8 subgroups (a control-flow state is
/// copied at every branch, call and merge).
pub type PerGroup<T> = smallvec::SmallVec<[T; 8]>;

/// Why a tangle is not pinned down, with the construct where the guarantee was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpinned {
    /// an invocation branched there on a value the model does not know: whether it is among the
    /// invocations executing together is not known
    Lost(u32),
    /// control flow diverged there and the reconvergence model in force does not reconverge it
    Diverged(u32),
}

impl Unpinned {
    /// The construct.
    pub fn construct(self) -> u32 {
        match self {
            Unpinned::Lost(c) | Unpinned::Diverged(c) => c,
        }
    }
}

/// Subgroups (and the workgroup) in which some invocation's *path* depends on a value the model
/// does not know (a branch on an undefined value): every later tangled result there is undefined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// per subgroup: the construct where the first such branch was taken
    pub sg: Vec<Option<u32>>,
    /// the first such construct in the workgroup
    pub wg: Option<u32>,
}

impl Lost {
    /// Nothing lost, for `groups` subgroups.
    pub fn new(groups: usize) -> Lost {
        Lost {
            sg: vec![None; groups],
            wg: None,
        }
    }

    /// An invocation of subgroup `g` branched at construct `id` on a value the model does not know.
    pub fn lose(&mut self, g: usize, id: u32) {
        self.sg[g] = self.sg[g].or(Some(id));
        self.wg = self.wg.or(Some(id));
    }

    /// The first construct where any subgroup lost an invocation's path.
    pub fn first(&self) -> Option<u32> {
        self.sg.iter().flatten().next().copied()
    }
}

impl Flow {
    /// The start of an entry point: every present lane, uniform everywhere.
    pub fn entry(set: impl Into<PerGroup<LaneMask>>) -> Flow {
        let set = set.into();
        let groups = set.len();
        Flow {
            set,
            sg: PerGroup::from_elem(None, groups),
            wg: None,
            amb: PerGroup::from_elem(None, groups),
        }
    }

    /// True when no lane of any subgroup is here.
    pub fn is_empty(&self) -> bool {
        self.set.iter().all(|m| m.is_empty())
    }

    /// `None` if `mode` pins down the set of lanes of subgroup `g` executing here (given what was
    /// `lost`), else the construct where the guarantee was lost.
    pub fn unpinned(&self, mode: Mode, g: usize, lost: &Lost) -> Option<u32> {
        self.unpinned_why(mode, g, lost).map(Unpinned::construct)
    }

    /// [`Flow::unpinned`], saying why: an invocation of the subgroup is on a lost path (it
    /// branched on a value the model does not know, and has not come back to a pinned-down
    /// path), or control flow diverged where `mode` does not reconverge it — under base
    /// reconvergence, whose guarantees are the workgroup's, that includes a lost path anywhere in
    /// the workgroup, ended or not (maximal reconvergence would reunite it).
    pub fn unpinned_why(&self, mode: Mode, g: usize, lost: &Lost) -> Option<Unpinned> {
        let diverged = match mode {
            Mode::Maximal => self.amb[g],
            Mode::Sucf => self.sg[g],
            Mode::Base => lost.wg.or(self.wg),
        };
        lost.sg[g]
            .map(Unpinned::Lost)
            .or(diverged.map(Unpinned::Diverged))
    }

    /// The flow of one part `p` (per subgroup) of a branch of construct `id`.
    pub fn part(&self, id: u32, p: PerGroup<LaneMask>) -> Flow {
        let split = p.iter().zip(&self.set).any(|(a, b)| a != b);
        Flow {
            sg: (0..p.len())
                .map(|g| {
                    if !p[g].is_empty() && p[g] != self.set[g] {
                        self.sg[g].or(Some(id))
                    } else {
                        self.sg[g]
                    }
                })
                .collect(),
            wg: if split { self.wg.or(Some(id)) } else { self.wg },
            amb: PerGroup::from_slice(&self.amb),
            set: p,
        }
    }

    /// The parts of a switch construct `id`: `parts[c]` (per subgroup) are the lanes taking case
    /// `c`, `selector[g * lanes + l]` lane `l`'s selector value. Uniformity follows the selector,
    /// not the case — invocations with different selector values took a non-uniform branch even
    /// where they share a case — and a case reached by several selector values within a subgroup
    /// is ambiguous under maximal reconvergence.
    pub fn switch(
        &self,
        id: u32,
        lanes: usize,
        selector: &[u32],
        parts: Vec<PerGroup<LaneMask>>,
    ) -> Vec<Flow> {
        let groups = self.set.len();
        let differs = |set: LaneMask, g: usize| {
            let mut it = set.iter();
            match it.next() {
                Some(first) => {
                    let v0 = selector[g * lanes + first as usize];
                    it.any(|l| selector[g * lanes + l as usize] != v0)
                }
                None => false,
            }
        };
        let mut split = self.clone();
        let mut wg_value: Option<u32> = None;
        let mut wg_uniform = true;
        for g in 0..groups {
            if differs(self.set[g], g) {
                split.sg[g] = split.sg[g].or(Some(id));
            }
            for l in self.set[g].iter() {
                let v = selector[g * lanes + l as usize];
                wg_uniform &= *wg_value.get_or_insert(v) == v;
            }
        }
        if !wg_uniform {
            split.wg = split.wg.or(Some(id));
        }
        parts
            .into_iter()
            .map(|part| {
                let mut cf = split.part(id, part);
                for g in 0..groups {
                    if differs(cf.set[g], g) {
                        // SPV_KHR_maximal_reconvergence, Divergence: different selector values in
                        // one case *may* share a tangle — not pinned down.
                        cf.amb[g] = cf.amb[g].or(Some(id));
                    }
                }
                cf
            })
            .collect()
    }

    /// The merge block of construct `id` entered with `self`, reached by the lane sets `ends`:
    /// reconverged (guarantees as at the header) where no invocation left other than through the
    /// merge.
    pub fn merge<'a>(
        &self,
        id: u32,
        ends: impl IntoIterator<Item = &'a PerGroup<LaneMask>>,
    ) -> Flow {
        let mut set = PerGroup::from_elem(LaneMask::EMPTY, self.set.len());
        for e in ends {
            for (s, m) in set.iter_mut().zip(e) {
                *s = s.or(*m);
            }
        }
        let escaped: PerGroup<bool> = self
            .set
            .iter()
            .zip(&set)
            .map(|(a, b)| !a.minus(*b).is_empty())
            .collect();
        Flow {
            sg: (0..set.len())
                .map(|g| {
                    if escaped[g] {
                        self.sg[g].or(Some(id))
                    } else {
                        self.sg[g]
                    }
                })
                .collect(),
            wg: if escaped.iter().any(|e| *e) {
                self.wg.or(Some(id))
            } else {
                self.wg
            },
            amb: PerGroup::from_slice(&self.amb),
            set,
        }
    }

    /// A point reached from several places with no reconvergence rule (a continue target, the point
    /// after a call): uniform only where a single place brought every invocation. `amb` is the
    /// maximal-reconvergence ambiguity of the construct's header (maximal reconvergence does
    /// reconverge continue targets and call returns).
    pub fn join(id: u32, sources: &[Flow], amb: PerGroup<Option<u32>>) -> Flow {
        let groups = amb.len();
        let mut set = PerGroup::from_elem(LaneMask::EMPTY, groups);
        let mut sg = PerGroup::from_elem(None, groups);
        for g in 0..groups {
            let mut from = sources.iter().filter(|s| !s.set[g].is_empty());
            let first = from.next();
            let more = from.next().is_some();
            for s in sources {
                set[g] = set[g].or(s.set[g]);
            }
            sg[g] = match (first, more) {
                (None, _) => sources.first().and_then(|s| s.sg[g]),
                (Some(f), false) => f.sg[g],
                (Some(f), true) => f.sg[g].or(Some(id)),
            };
        }
        let mut nonempty = sources.iter().filter(|s| !s.is_empty());
        let (first, more) = (nonempty.next(), nonempty.next().is_some());
        let wg = match (first, more) {
            (None, _) => sources.first().and_then(|s| s.wg),
            (Some(f), false) => f.wg,
            (Some(f), true) => f.wg.or(Some(id)),
        };
        Flow { set, sg, wg, amb }
    }
}
