//! A device's records of one program against the executor's.
//!
//! The device says where each invocation ran (the header), so the executor runs with exactly that
//! placement. Then, per invocation: the same number of records, the same tags in the same order
//! (the path an invocation takes is its own, in every model), and the same values wherever the
//! model defines them — bit for bit. Undefined values are not compared. Atomic results are checked
//! for consistency: every value derived from one atomic add must agree with what that add
//! returned, and the adds of a counter must hand out disjoint ranges that tile `[0, total)`.

use crate::model::{Placement, SubgroupSize, WorkgroupShape};
use crate::reconverge::exec::{execute, Execution, LaneMap, Mode, Val};
use crate::reconverge::glsl::{RecordLayout, SENTINEL};
use crate::reconverge::program::{Program, COUNTERS};
use std::collections::HashMap;

/// One disagreement between the device and the model.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// local invocation index (`None` for workgroup-wide findings such as a counter)
    pub invocation: Option<u32>,
    /// where the device ran it
    pub placement: Option<(u32, u32)>,
    /// index of the record in the invocation's sequence
    pub record: Option<usize>,
    /// tag of the expected record (0 if none)
    pub tag: u32,
    /// what the model expects
    pub expected: String,
    /// what the device wrote
    pub got: String,
    /// the rule that was broken
    pub why: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(i) = self.invocation {
            write!(f, "invocation {i}")?;
            if let Some((g, l)) = self.placement {
                write!(f, " (subgroup {g}, lane {l})")?;
            }
            if let Some(k) = self.record {
                write!(f, " record {k}")?;
            }
            if self.tag != 0 {
                write!(f, " tag #{}", self.tag)?;
            }
            f.write_str(": ")?;
        }
        write!(
            f,
            "{}: expected {}, device {}",
            self.why, self.expected, self.got
        )
    }
}

/// The outcome of comparing one program.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// values compared (defined by the model, and atomic results)
    pub compared: u64,
    /// values not compared because the model leaves them undefined (or the invocation is lost)
    pub undefined: u64,
    /// disagreements (at most [`MAX_REPORTED`] kept, `mismatch_count` counts all)
    pub mismatches: Vec<Mismatch>,
    /// number of disagreements
    pub mismatch_count: u64,
    /// the executor's run with the device's placement, if it got that far
    pub execution: Option<Execution>,
}

/// Mismatches kept per program.
pub const MAX_REPORTED: usize = 20;

impl Comparison {
    fn push(&mut self, m: Mismatch) {
        self.mismatch_count += 1;
        if self.mismatches.len() < MAX_REPORTED {
            self.mismatches.push(m);
        }
    }

    /// Did the device agree everywhere?
    pub fn ok(&self) -> bool {
        self.mismatch_count == 0
    }
}

fn words_str(w: &[u32]) -> String {
    if w[1..].iter().all(|x| *x == 0) {
        format!("{}", w[0])
    } else {
        format!("(0x{:x},0x{:x},0x{:x},0x{:x})", w[0], w[1], w[2], w[3])
    }
}

/// A workgroup-wide finding (no invocation).
fn workgroup_mismatch(why: &str, expected: String, got: String) -> Mismatch {
    Mismatch {
        invocation: None,
        placement: None,
        record: None,
        tag: 0,
        expected,
        got,
        why: why.to_string(),
    }
}

/// Compares one workgroup's device output with the executor.
///
/// `records` is this workgroup's slice of the buffer (`invocations × layout.stride_words()`
/// words), `counters` its counter words after the run. `size` is the subgroup size the device
/// reported for the pipeline; each invocation's header must agree with it.
///
/// The phases: the buffer's size; where each invocation ran (the headers); the executor's run with
/// that placement; each invocation's records; the counters and the atomic adds' ranges.
pub fn compare(
    program: &Program,
    mode: Mode,
    shape: WorkgroupShape,
    size: SubgroupSize,
    layout: RecordLayout,
    records: &[u32],
    counters: &[u32],
) -> Comparison {
    let mut c = Comparison::default();
    let map = match placement(shape, size, layout, records, counters) {
        Ok(map) => map,
        Err(m) => {
            c.push(m);
            return c;
        }
    };
    let ex = match execute(program, &map, mode) {
        Ok(ex) => ex,
        Err(e) => {
            c.push(workgroup_mismatch("model", "a run".into(), e.to_string()));
            return c;
        }
    };
    let st = layout.stride_words();
    // Atomic add index -> the value the device says it returned.
    let mut returned: HashMap<u32, u32> = HashMap::new();
    for i in 0..shape.invocations() as usize {
        let slice = &records[i * st..(i + 1) * st];
        invocation(
            &mut c,
            &ex,
            layout,
            i,
            map.placement(i as u32),
            slice,
            &mut returned,
        );
    }
    self::counters(&mut c, &ex, counters, &returned);
    c.execution = Some(ex);
    c
}

/// Checks the buffer's size and reads where each invocation ran from its header.
fn placement(
    shape: WorkgroupShape,
    size: SubgroupSize,
    layout: RecordLayout,
    records: &[u32],
    counters: &[u32],
) -> Result<LaneMap, Mismatch> {
    let n = shape.invocations() as usize;
    let st = layout.stride_words();
    if records.len() < n * st || counters.len() < COUNTERS {
        return Err(workgroup_mismatch(
            "output buffer too small",
            format!("{} words", n * st),
            format!("{} words", records.len()),
        ));
    }
    // Where each invocation ran, as the device reports it: (subgroup, lane, size).
    let mut placements = Vec::with_capacity(n);
    for i in 0..n {
        let h = &records[i * st..i * st + 3];
        if h[2] != size.get() {
            return Err(Mismatch {
                invocation: Some(i as u32),
                placement: None,
                record: None,
                tag: 0,
                expected: format!("gl_SubgroupSize {size}"),
                got: format!("{}", h[2]),
                why: "header".into(),
            });
        }
        placements.push(Placement {
            subgroup: h[0],
            lane: h[1],
        });
    }
    LaneMap::from_placements(shape, size, &placements).map_err(|e| {
        workgroup_mismatch(
            "invalid placement",
            "each invocation at a distinct (subgroup, lane)".into(),
            e,
        )
    })
}

/// One invocation's records against the model's: the same tags in order, every defined value
/// bit for bit, atomic results consistent with what the add returned, nothing after the last.
fn invocation(
    c: &mut Comparison,
    ex: &Execution,
    layout: RecordLayout,
    i: usize,
    at: Placement,
    slice: &[u32],
    returned: &mut HashMap<u32, u32>,
) {
    let max_records = layout.max_records as usize;
    let model = &ex.records[i];
    let lost = ex.lost_at[i];
    let here = |k: Option<usize>, tag: u32, expected: String, got: String, why: &str| Mismatch {
        invocation: Some(i as u32),
        placement: Some((at.subgroup, at.lane)),
        record: k,
        tag,
        expected,
        got,
        why: why.to_string(),
    };
    let upto = lost.unwrap_or(model.len()).min(max_records);
    c.undefined += (model.len() - upto) as u64;
    for (k, m) in model.iter().enumerate().take(upto) {
        let (tag, w) = layout.read(slice, k);
        if tag != m.tag {
            let got = if tag == SENTINEL {
                "nothing written".to_string()
            } else {
                format!("tag #{tag}")
            };
            c.push(here(
                Some(k),
                m.tag,
                format!("tag #{}", m.tag),
                got,
                "the invocation took a different path",
            ));
            // The rest of this invocation's records are out of step; stop here.
            c.undefined += (upto - k - 1) as u64;
            return;
        }
        match m.value {
            Val::Defined(_) => {
                c.compared += 1;
                let want = m.value.words().unwrap_or_default();
                if want != w {
                    c.push(here(
                        Some(k),
                        m.tag,
                        m.value.to_string(),
                        words_str(&w),
                        "value",
                    ));
                }
            }
            Val::Atomic { atomic, plus } => {
                c.compared += 1;
                let v = w[0].wrapping_sub(plus);
                match returned.get(&atomic) {
                    None => {
                        returned.insert(atomic, v);
                    }
                    Some(&a) if a == v => {}
                    Some(&a) => c.push(here(
                        Some(k),
                        m.tag,
                        format!("A{atomic}+{plus} = {}", a.wrapping_add(plus)),
                        words_str(&w),
                        "inconsistent with what the atomic add returned",
                    )),
                }
            }
            Val::Undefined(_) | Val::OrderDependent => c.undefined += 1,
        }
    }
    // Nothing after the last expected record: the slot after it was never written.
    if lost.is_none() && model.len() <= max_records {
        let (tag, _) = layout.read(slice, model.len());
        if tag != SENTINEL {
            c.push(here(
                Some(model.len()),
                0,
                format!("{} records", model.len()),
                format!("another record (tag #{tag})"),
                "the invocation took a different path",
            ));
        }
    }
}

/// Counters: the total is order-independent; the values the adds returned must tile
/// `[0, total)` (adds of 0 return a value within `[0, total]`).
fn counters(c: &mut Comparison, ex: &Execution, counters: &[u32], returned: &HashMap<u32, u32>) {
    for (k, counter) in ex.counters.iter().enumerate() {
        let Val::Defined(total) = counter else {
            continue;
        };
        let total = total.component_bits(0) as u32;
        c.compared += 1;
        if counters[k] != total {
            c.push(workgroup_mismatch(
                &format!("final value of counter {k}"),
                total.to_string(),
                counters[k].to_string(),
            ));
            continue;
        }
        let mut ranges: Vec<(u32, u32, u32)> = Vec::new();
        for (idx, a) in ex.atomics.iter().enumerate() {
            if a.counter as usize != k {
                continue;
            }
            let (Some(&v), Some(amount)) = (returned.get(&(idx as u32)), a.amount.words()) else {
                continue;
            };
            if amount[0] > 0 {
                ranges.push((v, amount[0], idx as u32));
            } else if v > total {
                c.push(workgroup_mismatch(
                    &format!("atomic add A{idx} of 0 to counter {k}"),
                    format!("a value in [0, {total}]"),
                    v.to_string(),
                ));
            }
        }
        ranges.sort_unstable();
        let mut next = 0u64;
        for (v, amount, idx) in ranges {
            let end = v as u64 + amount as u64;
            if (v as u64) < next || end > total as u64 {
                c.push(workgroup_mismatch(
                    &format!("atomic add A{idx} of {amount} to counter {k}"),
                    format!("a range disjoint from the others within [0, {total})"),
                    format!("[{v}, {end})"),
                ));
            }
            next = next.max(end);
        }
    }
}
