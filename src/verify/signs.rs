//! Gate 5: signs — text/hadamard_signs (FP32) and text/hadamard_widths (I32) equal the source
//! GGUF's prism.hadamard.sign_values / sign_widths exactly.

use super::findings::Failure;
use super::{Ctx, Finding};
use crate::error::Result;
use crate::spec::{gates, SignsSpec};

/// The artifact's sign table and widths (as stored).
pub fn artifact_signs(a: &crate::ninfer::Artifact<'_>) -> Result<(Vec<f32>, Vec<i32>)> {
    let s = &gates().signs;
    let (sf, _, sb) = a.contiguous(&s.artifact_signs)?;
    let (wf, _, wb) = a.contiguous(&s.artifact_widths)?;
    if sf.name != "FP32" || wf.name != "I32" {
        fail!(
            NinferDirFormat,
            format!("{} / {}", s.artifact_signs, s.artifact_widths),
            "sign objects are {} / {}, expected FP32 / I32",
            sf.name,
            wf.name
        );
    }
    let signs = sb
        .as_chunks::<4>()
        .0
        .iter()
        .map(|c| f32::from_le_bytes(*c))
        .collect();
    let widths = wb
        .as_chunks::<4>()
        .0
        .iter()
        .map(|c| i32::from_le_bytes(*c))
        .collect();
    Ok((signs, widths))
}

/// The GGUF's sign values as f64 from any numeric element type (released files and public
/// writers differ: INT32, FLOAT32, INT8 — spec/hadamard.json); the verifier's own reading.
fn gguf_sign_values(g: &crate::gguf::Gguf<'_>, key: &str) -> Result<Vec<f64>> {
    use crate::gguf::{Scalar, ValueType as T};
    let arr = g.get_array(key)?;
    fn all<S: Scalar>(a: &crate::gguf::ArrayView<'_>, f: impl Fn(S) -> f64) -> Result<Vec<f64>> {
        Ok(a.as_vec::<S>()?.into_iter().map(f).collect())
    }
    match arr.elem {
        T::I8 => all::<i8>(&arr, f64::from),
        T::U8 => all::<u8>(&arr, f64::from),
        T::I16 => all::<i16>(&arr, f64::from),
        T::U16 => all::<u16>(&arr, f64::from),
        T::I32 => all::<i32>(&arr, f64::from),
        T::U32 => all::<u32>(&arr, f64::from),
        T::I64 => all::<i64>(&arr, |x| x as f64),
        T::U64 => all::<u64>(&arr, |x| x as f64),
        T::F32 => all::<f32>(&arr, f64::from),
        T::F64 => all::<f64>(&arr, |x| x),
        other => Err(err!(
            GgufMetadataType,
            key,
            "elements are {other}, not numeric"
        )),
    }
}

/// Refuses a GGUF whose sign table declares a count other than the sum of its widths `gw`,
/// before any value is copied: a sparse file declaring 10^9 signs is refused here, not
/// allocated.
fn check_declared_count(ctx: &Ctx<'_>, s: &SignsSpec, gw: &[i32]) -> Result<()> {
    let widths_total = gw
        .iter()
        .try_fold(0u64, |t, &w| t.checked_add(u64::try_from(w).ok()?));
    let declared = ctx.gguf.get_array(&s.gguf_signs)?.count;
    if widths_total != Some(declared) {
        return Err(crate::Error::new(
            crate::ErrorClass::HadamardShape,
            s.gguf_signs.clone(),
            format!(
                "declares {declared} values but the {} entries of {} sum to {}",
                gw.len(),
                s.gguf_widths,
                widths_total.map_or(
                    "more than 2^64 (or hold a negative width)".to_string(),
                    |t| t.to_string()
                )
            ),
        ));
    }
    Ok(())
}

/// The artifact's sign values and widths against the GGUF's.
struct Comparison {
    /// The artifact's sign values and widths.
    av: Vec<f32>,
    aw: Vec<i32>,
    /// The GGUF's sign values and widths.
    gv: Vec<f64>,
    gw: Vec<i32>,
    /// Values that differ, counting each one only one side has.
    mismatches: usize,
    len_ok: bool,
    widths_ok: bool,
}

impl Comparison {
    fn new(av: Vec<f32>, aw: Vec<i32>, gv: Vec<f64>, gw: Vec<i32>) -> Self {
        let mismatches = av
            .iter()
            .zip(&gv)
            .filter(|(a, g)| **a as f64 != **g)
            .count()
            + av.len().abs_diff(gv.len());
        Self {
            len_ok: av.len() == gv.len(),
            widths_ok: aw == gw,
            mismatches,
            av,
            aw,
            gv,
            gw,
        }
    }

    /// The largest absolute difference of two values both sides have.
    fn max_diff(&self) -> f64 {
        self.av
            .iter()
            .zip(&self.gv)
            .map(|(a, g)| (*a as f64 - *g).abs())
            .fold(0.0, f64::max)
    }

    /// The located failures, in report order: the first differing value, the value count,
    /// the widths.
    fn failures(&self, f: &mut Finding, s: &SignsSpec) {
        let (av, aw, gv, gw) = (&self.av, &self.aw, &self.gv, &self.gw);
        let mismatches = self.mismatches;
        if let Some(i) = av.iter().zip(gv).position(|(a, g)| *a as f64 != *g) {
            f.failure(Failure {
                check: "signs.value".into(),
                object: Some(s.artifact_signs.clone()),
                element: Some(i as u64),
                expected: Some(crate::verify::findings::round6(gv[i])),
                observed: Some(crate::verify::findings::round6(av[i] as f64)),
                ..Failure::new(format!(
                    "{}[{i}] = {}, the GGUF's {} holds {} ({mismatches} value mismatch(es))",
                    s.artifact_signs, av[i], s.gguf_signs, gv[i]
                ))
            });
        }
        if !self.len_ok {
            f.failure(Failure {
                check: "signs.count".into(),
                object: Some(s.artifact_signs.clone()),
                expected: Some(gv.len().into()),
                observed: Some(av.len().into()),
                ..Failure::new(format!(
                    "{} holds {} values, the GGUF's {} {}",
                    s.artifact_signs,
                    av.len(),
                    s.gguf_signs,
                    gv.len()
                ))
            });
        }
        if !self.widths_ok {
            f.failure(Failure {
                check: "signs.widths".into(),
                object: Some(s.artifact_widths.clone()),
                expected: Some(serde_json::json!(gw)),
                observed: Some(serde_json::json!(aw)),
                ..Failure::new(format!(
                    "{} {aw:?}, the GGUF's {} {gw:?}",
                    s.artifact_widths, s.gguf_widths
                ))
            });
        }
    }

    /// The gate's detail: broken source metadata when the objects themselves agree, else the
    /// match or what differs.
    fn detail(&self, metadata: &[String]) -> String {
        let equal = self.len_ok && self.mismatches == 0 && self.widths_ok;
        if let Some(first) = metadata.first().filter(|_| equal) {
            format!(
                "the source's prism.hadamard metadata breaks spec/hadamard.json ({} key(s)): {first}",
                metadata.len()
            )
        } else if equal && metadata.is_empty() {
            format!(
                "{} sign values and {} widths equal the GGUF's exactly",
                self.gv.len(),
                self.gw.len()
            )
        } else {
            format!(
                "sign objects differ from prism.hadamard.*: {} value mismatch(es), widths {}",
                self.mismatches,
                if self.widths_ok { "equal" } else { "DIFFER" }
            )
        }
    }
}

/// Runs the gate (SKIP when the GGUF carries no sign table).
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let s = &gates().signs;
    if ctx.gguf.get(&s.gguf_signs).is_none() && ctx.gguf.get(&s.gguf_widths).is_none() {
        return Ok(super::skip_naming("signs"));
    }
    let gw = ctx.gguf.get_array_as::<i32>(&s.gguf_widths)?;
    check_declared_count(ctx, s, &gw)?;
    let gv = gguf_sign_values(ctx.gguf, &s.gguf_signs)?;
    let mut f = Finding::new("signs");
    let (av, aw) = artifact_signs(ctx.artifact)?;
    let cmp = Comparison::new(av, aw, gv, gw);
    f.num("values", cmp.gv.len())
        .num("value_mismatches", cmp.mismatches)
        .num("max_abs_diff", cmp.max_diff())
        .num("widths_equal", cmp.widths_ok);
    f.line(format!("widths: artifact {:?}, GGUF {:?}", cmp.aw, cmp.gw));
    // Lines only on failure: a conforming file's report is unchanged.
    let metadata = super::hadamard_meta::problems(ctx.gguf, &ctx.profile);
    for p in &metadata {
        f.line(format!("prism.hadamard metadata: {p}"));
    }
    let absent = super::hadamard_meta::absent(ctx.gguf);
    if !absent.is_empty() {
        f.line(format!(
            "prism.hadamard metadata not in the source, not checked (no artifact byte depends on it): {}",
            absent.join(", ")
        ));
    }
    cmp.failures(&mut f, s);
    for p in &metadata {
        f.failure(Failure {
            check: "signs.hadamard_metadata".into(),
            ..Failure::new(format!("prism.hadamard metadata: {p}"))
        });
    }
    let ok = cmp.len_ok && cmp.mismatches == 0 && cmp.widths_ok && metadata.is_empty();
    f.set_ok(ok);
    f.detail = cmp.detail(&metadata);
    Ok(f)
}
