//! `EXPECT` evaluated on a buffer's bytes, as AmberScript defines it (google/amber
//! `docs/amber_script.md`, "Expectations", and its verifier):
//!
//! - `IDX` is a byte offset; the values are compared component by component from there, element
//!   after element, skipping padding. Each value is converted to the buffer's component type first
//!   (integers wrap, floats round to the type), then compared in that type.
//! - `EQ` on a float type allows a relative error of 0.000001 % of the expected value (Amber's
//!   `kEpsilon`, a percentage); `NE` is its negation; `LT` … `GE` compare exactly.
//! - `TOLERANCE t` (only with `EQ`): |actual − expected| ≤ t, or ≤ t % of |expected| when written
//!   `t%`. With several tolerances, component k of each element uses the k-th ("if less tolerance
//!   values are provided than are needed … the default tolerance will be applied"); a single one
//!   applies to every component.
//! - `EQ_BUFFER`: every component of the two buffers holds the same bits.
//! - `RMSE_BUFFER … TOLERANCE t`: the root mean square of the component differences is ≤ t.
//!
//! A NaN never equals anything here (Amber's verifier lets a NaN pass `EQ`, a comparison accident
//! we do not copy). A component whose bytes the model annotated (undefined, order-dependent,
//! inexact) is not compared: the EXPECT is *undefined* with the model's chain, unless a defined
//! component already fails it.

use super::backend::Annotation;
use super::parse::{check_expect_range, ScriptError};
use super::script::{Buffer, Comparator, Expect, ExpectKind, Script};
use super::types::{Literal, Scalar, Value};
use crate::kernel::Tolerance;
use std::fmt;

/// The verdict of one EXPECT on one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Every compared component holds.
    Pass,
    /// The model could not pin down a component the EXPECT needs.
    Undefined,
    /// A defined component breaks it.
    Fail,
}

impl Status {
    /// `pass`, `undefined`, `fail`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Undefined => "undefined",
            Status::Fail => "fail",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Amber's default for float `EQ`: 0.000001 percent of the expected value.
pub(crate) const DEFAULT_TOLERANCE: Tolerance = Tolerance::percent(0.000001);

/// How many differing (or undefined) components a message names before it counts the rest.
pub(crate) const SHOWN: usize = 4;

/// Whether `actual` (a component of type `scalar`) satisfies `cmp expected` with tolerance `tol`.
///
/// ```
/// use lockstep::amber::{holds, Comparator, Literal, Scalar, Value};
/// use lockstep::kernel::Tolerance;
/// assert!(holds(Scalar::U32, Value::Int(0xffff_ffff), Literal::Int(-1), Comparator::Eq, None));
/// assert!(holds(Scalar::F32, Value::Float(0.1f32 as f64), Literal::Float(0.1), Comparator::Eq, None));
/// let five_percent = Tolerance::percent(5.0);
/// assert!(holds(Scalar::F32, Value::Float(104.0), Literal::Int(100), Comparator::Eq, Some(five_percent)));
/// assert!(!holds(Scalar::F32, Value::Float(f64::NAN), Literal::Int(0), Comparator::Eq, None));
/// ```
pub fn holds(
    scalar: Scalar,
    actual: Value,
    expected: Literal,
    cmp: Comparator,
    tol: Option<Tolerance>,
) -> bool {
    let Ok(e) = scalar.round_trip(expected) else {
        return false;
    };
    match (actual, e) {
        (Value::Int(a), Value::Int(e)) => match (cmp, tol) {
            (Comparator::Eq, Some(t)) => t.within(a as f64, e as f64),
            (Comparator::Eq, None) => a == e,
            (Comparator::Ne, _) => a != e,
            (Comparator::Lt, _) => a < e,
            (Comparator::Le, _) => a <= e,
            (Comparator::Gt, _) => a > e,
            (Comparator::Ge, _) => a >= e,
        },
        (Value::Float(a), Value::Float(e)) => {
            if a.is_nan() {
                return cmp == Comparator::Ne;
            }
            match cmp {
                Comparator::Eq => tol.unwrap_or(DEFAULT_TOLERANCE).within(a, e),
                Comparator::Ne => !DEFAULT_TOLERANCE.within(a, e),
                Comparator::Lt => a < e,
                Comparator::Le => a <= e,
                Comparator::Gt => a > e,
                Comparator::Ge => a >= e,
            }
        }
        _ => false,
    }
}

/// Annotations of one buffer, merged into sorted disjoint ranges for a sweep in address order.
struct AnnotationIndex<'a> {
    anns: &'a [Annotation],
    /// (start, end, index of an annotation in the range)
    merged: Vec<(usize, usize, usize)>,
    cursor: usize,
}

impl<'a> AnnotationIndex<'a> {
    fn new(anns: &'a [Annotation]) -> Self {
        let mut order: Vec<usize> = (0..anns.len())
            .filter(|&i| anns[i].bytes.start < anns[i].bytes.end)
            .collect();
        order.sort_by_key(|&i| anns[i].bytes.start);
        let mut merged: Vec<(usize, usize, usize)> = Vec::new();
        for i in order {
            let r = &anns[i].bytes;
            match merged.last_mut() {
                Some(last) if r.start <= last.1 => last.1 = last.1.max(r.end),
                _ => merged.push((r.start, r.end, i)),
            }
        }
        AnnotationIndex {
            anns,
            merged,
            cursor: 0,
        }
    }

    /// The annotation covering part of `start..end`, if any. Calls must come with
    /// non-decreasing `start`.
    fn hit(&mut self, start: usize, end: usize) -> Option<&'a Annotation> {
        while self.cursor < self.merged.len() && self.merged[self.cursor].1 <= start {
            self.cursor += 1;
        }
        let &(s, _, first) = self.merged.get(self.cursor)?;
        if s >= end {
            return None;
        }
        // The exact annotation touching these bytes (rare path: only for reported components).
        Some(
            self.anns
                .iter()
                .find(|a| a.bytes.start < end && a.bytes.end > start)
                .unwrap_or(&self.anns[first]),
        )
    }
}

/// Collects failing and undefined components for a message.
#[derive(Default)]
struct Findings {
    failed: usize,
    undefined: usize,
    fail_msgs: Vec<String>,
    undef_msgs: Vec<String>,
}

impl Findings {
    fn fail(&mut self, msg: impl FnOnce() -> String) {
        self.failed += 1;
        if self.fail_msgs.len() < SHOWN {
            self.fail_msgs.push(msg());
        }
    }

    fn undefined(&mut self, what: impl FnOnce() -> String, a: &Annotation) {
        self.undefined += 1;
        if self.undef_msgs.len() < SHOWN {
            self.undef_msgs
                .push(format!("{} is {}: {}", what(), a.kind.name(), a.why));
        }
    }

    fn verdict(self, compared: usize) -> (Status, Option<String>) {
        let tail = |msgs: Vec<String>, n: usize, what: &str| {
            let mut s = msgs.join("; ");
            if n > msgs.len() {
                s += &format!("; {n} of {compared} components {what}");
            }
            s
        };
        if self.failed > 0 {
            (
                Status::Fail,
                Some(tail(self.fail_msgs, self.failed, "differ")),
            )
        } else if self.undefined > 0 {
            (
                Status::Undefined,
                Some(tail(self.undef_msgs, self.undefined, "not pinned down")),
            )
        } else {
            (Status::Pass, None)
        }
    }
}

/// Evaluates one EXPECT on the current buffers (`bytes[i]`, `annotations[i]` for
/// `script.buffers[i]`). An EXPECT that reads outside its buffer is a script error.
pub fn evaluate(
    e: &Expect,
    script: &Script,
    bytes: &[Vec<u8>],
    annotations: &[Vec<Annotation>],
) -> Result<(Status, Option<String>), ScriptError> {
    let buf = &script.buffers[e.buffer];
    let data = &bytes[e.buffer];
    let el = buf.element_layout();
    let n = el.scalar.size();
    let comps = el.offsets.len();
    let script_error = |message: String| ScriptError {
        line: e.line,
        command: "EXPECT".into(),
        message,
    };
    if data.len() != buf.size() {
        return Err(script_error(format!(
            "{} holds {} bytes, not the {} its declaration gives",
            buf.name,
            data.len(),
            buf.size()
        )));
    }
    match &e.kind {
        ExpectKind::Values {
            offset,
            tolerances,
            comparator,
            values,
        } => {
            check_expect_range(buf, *offset, values.len()).map_err(script_error)?;
            let mut idx = AnnotationIndex::new(&annotations[e.buffer]);
            let mut f = Findings::default();
            let first = offset / el.stride;
            for (i, &lit) in values.iter().enumerate() {
                let (elem, k) = (first + i / comps, i % comps);
                let at = elem * el.stride + el.offsets[k];
                let tol = match tolerances.len() {
                    0 => None,
                    1 => Some(tolerances[0]),
                    _ => Some(tolerances.get(k).copied().unwrap_or(DEFAULT_TOLERANCE)),
                };
                let actual = el.scalar.decode(&data[at..at + n]);
                let ok = holds(el.scalar, actual, lit, *comparator, tol);
                if let Some(a) = idx.hit(at, at + n) {
                    f.undefined(|| buf.component_name(elem, k), a);
                } else if !ok {
                    f.fail(|| {
                        let expected = el
                            .scalar
                            .round_trip(lit)
                            .map_or(lit.to_string(), |v| v.to_string());
                        let tol = tol.map_or(String::new(), |t| format!(" within {t}"));
                        format!(
                            "{} = {actual}, expected {} {expected}{tol}",
                            buf.component_name(elem, k),
                            comparator.symbol()
                        )
                    });
                }
            }
            Ok(f.verdict(values.len()))
        }
        ExpectKind::Probe {
            rect,
            rgba,
            tolerances,
        } => {
            probe(buf, data, &annotations[e.buffer], *rect, rgba, tolerances).map_err(script_error)
        }
        ExpectKind::EqBuffer { other } => {
            let (ob, odata) = (&script.buffers[*other], &bytes[*other]);
            check_same_shape(buf, data, ob, odata).map_err(script_error)?;
            let mut ia = AnnotationIndex::new(&annotations[e.buffer]);
            let mut ib = AnnotationIndex::new(&annotations[*other]);
            let mut f = Findings::default();
            for elem in 0..buf.elements {
                for (k, &off) in el.offsets.iter().enumerate() {
                    let at = elem * el.stride + off;
                    let (x, y) = (&data[at..at + n], &odata[at..at + n]);
                    let ha = ia.hit(at, at + n);
                    let hb = ib.hit(at, at + n);
                    if let Some(a) = ha {
                        f.undefined(|| buf.component_name(elem, k), a);
                    } else if let Some(b) = hb {
                        f.undefined(|| ob.component_name(elem, k), b);
                    } else if x != y {
                        f.fail(|| {
                            format!(
                                "{} = {}, {} = {}",
                                buf.component_name(elem, k),
                                el.scalar.decode(x),
                                ob.component_name(elem, k),
                                el.scalar.decode(y)
                            )
                        });
                    }
                }
            }
            Ok(f.verdict(buf.elements * comps))
        }
        ExpectKind::RmseBuffer { other, tolerance } => {
            let (ob, odata) = (&script.buffers[*other], &bytes[*other]);
            check_same_shape(buf, data, ob, odata).map_err(script_error)?;
            let mut ia = AnnotationIndex::new(&annotations[e.buffer]);
            let mut ib = AnnotationIndex::new(&annotations[*other]);
            let mut f = Findings::default();
            let mut sum = 0.0f64;
            let count = buf.elements * comps;
            for elem in 0..buf.elements {
                for (k, &off) in el.offsets.iter().enumerate() {
                    let at = elem * el.stride + off;
                    if let Some(a) = ia.hit(at, at + n) {
                        f.undefined(|| buf.component_name(elem, k), a);
                        continue;
                    }
                    if let Some(b) = ib.hit(at, at + n) {
                        f.undefined(|| ob.component_name(elem, k), b);
                        continue;
                    }
                    let d = as_f64(el.scalar.decode(&data[at..at + n]))
                        - as_f64(el.scalar.decode(&odata[at..at + n]));
                    sum += d * d;
                }
            }
            if f.undefined > 0 {
                return Ok(f.verdict(count));
            }
            // (no elements: sum 0, error 0)
            let rmse = (sum / count.max(1) as f64).sqrt();
            // A NaN makes the RMSE NaN, which is not <= any tolerance.
            if rmse <= *tolerance {
                Ok((Status::Pass, None))
            } else {
                Ok((
                    Status::Fail,
                    Some(format!(
                        "root mean square error of {} vs {} is {rmse}, above the tolerance {tolerance}",
                        buf.name, ob.name
                    )),
                ))
            }
        }
    }
}

/// `EXPECT image IDX x y SIZE w h EQ_RGB(A) …`: every texel of the rectangle against the colour,
/// in 0 to 255 units, within the tolerances (or half a unit); an error message where the probe
/// does not fit the image.
fn probe(
    buf: &Buffer,
    data: &[u8],
    annotations: &[Annotation],
    rect: [u32; 4],
    rgba: &[f64],
    tolerances: &[Tolerance],
) -> Result<(Status, Option<String>), String> {
    let Some(img) = buf.image else {
        return Err(format!(
            "{} is a BUFFER: IDX x y SIZE w h probes an IMAGE",
            buf.name
        ));
    };
    let ext = img.extent;
    let [x0, y0, w, h] = rect;
    if ext.samples > 1 {
        return Err(format!(
            "{} is multisampled: a probe reads single-sample images",
            buf.name
        ));
    }
    if x0 as u64 + w as u64 > ext.width as u64 || y0 as u64 + h as u64 > ext.height as u64 {
        return Err(format!(
            "the probed rectangle {x0},{y0} {w}x{h} is not inside the {}x{} image {}",
            ext.width, ext.height, buf.name
        ));
    }
    let f = img.format;
    let tb = f.texel_bytes() as usize;
    let mut idx = AnnotationIndex::new(annotations);
    let mut fs = Findings::default();
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            let t = (y as usize * ext.width as usize + x as usize) * tb;
            let raw = crate::spirv::image::unpack(&f, &data[t..t + tb]);
            for (k, &want) in rgba.iter().enumerate() {
                let (lo, hi) = match f.packed {
                    Some(_) => (t, t + tb),
                    None => {
                        let cb = f.comp.bits() as usize / 8;
                        (
                            t + k.min(f.comps as usize - 1) * cb,
                            t + (k + 1).min(f.comps as usize) * cb,
                        )
                    }
                };
                let name = || format!("{}({x}, {y}).{}", buf.name, ["r", "g", "b", "a"][k]);
                if let Some(a) = idx.hit(lo, hi) {
                    fs.undefined(name, a);
                    continue;
                }
                let got = probe_value(&f, k, raw[k]);
                let tol = match tolerances.len() {
                    0 => None,
                    1 => Some(tolerances[0]),
                    _ => tolerances.get(k).copied(),
                };
                let ok = match tol {
                    Some(t) => t.within(got, want),
                    None => (got - want).abs() <= 0.5,
                };
                if !ok {
                    fs.fail(|| format!("{} = {got}, expected {want}", name()));
                }
            }
        }
    }
    Ok(fs.verdict(w as usize * h as usize * rgba.len()))
}

/// Component `k` of a texel in the 0 to 255 units of a probe: normalized and float components
/// scaled by 255, integer components as they are (Vulkan "Conversion to RGBA" fills missing G and B
/// with 0 and A with 1).
fn probe_value(f: &crate::spirv::image::TexelFormat, k: usize, raw: u64) -> f64 {
    use crate::spirv::image::Comp;
    if k >= f.comps as usize {
        return if k == 3 {
            if f.comp.is_float() {
                255.0
            } else {
                1.0
            }
        } else {
            0.0
        };
    }
    let b = f.comp_bits(k) as u32;
    match f.comp {
        Comp::Unorm(_) => raw as f64 / ((1u64 << b) - 1) as f64 * 255.0,
        Comp::Snorm(_) => {
            let sh = 64 - b;
            let v = ((raw << sh) as i64 >> sh) as f64;
            (v / ((1i64 << (b - 1)) - 1) as f64).max(-1.0) * 255.0
        }
        Comp::Float(16) => half::f16::from_bits(raw as u16).to_f64() * 255.0,
        Comp::Float(_) => f32::from_bits(raw as u32) as f64 * 255.0,
        Comp::Ufloat(_) => crate::spirv::image::ufloat_value(raw, b as u8) * 255.0,
        Comp::Uint(_) => raw as f64,
        Comp::Sint(_) => {
            let sh = 64 - b;
            ((raw << sh) as i64 >> sh) as f64
        }
    }
}

fn as_f64(v: Value) -> f64 {
    match v {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
    }
}

fn check_same_shape(a: &Buffer, ad: &[u8], b: &Buffer, bd: &[u8]) -> Result<(), String> {
    if a.data_type != b.data_type || a.layout != b.layout || ad.len() != bd.len() {
        return Err(format!(
            "{} ({} {}, {} bytes) and {} ({} {}, {} bytes) cannot be compared",
            a.name,
            a.data_type,
            a.layout,
            ad.len(),
            b.name,
            b.data_type,
            b.layout,
            bd.len()
        ));
    }
    Ok(())
}
