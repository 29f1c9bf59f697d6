//! Gate 2: payload_order — ternary payloads are row-split planes, not interleaved ggml blocks.
//! The scale plane is read at the geometry's scale_offset and judged on (a) no negative f16,
//! (b) no NaN/inf, (c) 0 < median < 1, (d) PQ2_0: first-code zero share near 0.3278. The same
//! criteria must reject the negative controls (scale read at offset 0; PTQ1_0: inside the high
//! plane); a control that passes fails the gate.

use super::{Ctx, Finding};
use crate::codec::f16_to_f32;
use crate::error::Result;
use crate::geometry::Plane;
use crate::spec::gates;

/// Scale statistics of `count` f16 values read at `bytes[at..]`.
#[derive(Debug, Clone, Copy)]
pub struct ScaleStats {
    /// Scales read.
    pub values: u64,
    /// Negative scales (a real scale plane has none).
    pub negative: u64,
    /// NaN or infinite scales.
    pub nonfinite: u64,
    /// Median of the finite scales.
    pub median: f64,
    /// Largest finite scale.
    pub max: f64,
}

/// `count` f16 values read as scales at byte `at` of an object.
pub fn scale_stats(bytes: &[u8], at: u64, count: u64) -> Result<ScaleStats> {
    let end = at + 2 * count;
    if end > bytes.len() as u64 {
        fail!(
            NinferDirBytes,
            "scale plane",
            "scale read [{at}, {end}) runs past the object ({} bytes)",
            bytes.len()
        );
    }
    super::rows::BYTES_READ.fetch_add(2 * count, std::sync::atomic::Ordering::Relaxed);
    let mut finite = Vec::with_capacity(count as usize);
    let (mut neg, mut nonfinite) = (0, 0);
    for c in bytes[at as usize..end as usize].chunks_exact(2) {
        let v = f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
        if !v.is_finite() {
            nonfinite += 1;
        } else {
            if v < 0.0 {
                neg += 1;
            }
            finite.push(v);
        }
    }
    finite.sort_by(|a, b| a.total_cmp(b));
    let median = if finite.is_empty() {
        f64::NAN
    } else {
        finite[finite.len() / 2] as f64
    };
    Ok(ScaleStats {
        values: count,
        negative: neg,
        nonfinite,
        median,
        max: finite.last().map_or(f64::NAN, |&v| v as f64),
    })
}

/// Criteria (a)–(c).
pub fn scales_plausible(s: &ScaleStats) -> bool {
    let (lo, hi) = gates().thresholds.scale_median_open_interval;
    s.negative == 0 && s.nonfinite == 0 && s.median > lo && s.median < hi
}

/// PQ2_0 only: the share of code 1 in the first code of every 4th base-plane byte is near the
/// real model's (a plane of codes, not of interleaved blocks).
fn zero_share(f: &mut Finding, base: &[u8]) -> bool {
    let th = &gates().thresholds;
    let sample: Vec<u8> = base.iter().step_by(4).copied().collect();
    let zeros = sample.iter().filter(|&&b| b & 3 == 1).count() as f64;
    let share = zeros / sample.len().max(1) as f64;
    let p = th.pq2_zero_share_target;
    let tol = th
        .pq2_zero_share_tolerance
        .max(th.pq2_zero_share_sigmas * (p * (1.0 - p) / sample.len().max(1) as f64).sqrt());
    let zok = (share - p).abs() <= tol;
    f.num("zero_share", share).num("zero_share_tolerance", tol);
    f.line(format!(
        "first-code zero share {} over {} samples, |share - {p}| <= {} -> {}",
        super::findings::round6(share),
        sample.len(),
        super::findings::round6(tol),
        if zok { "ok" } else { "FAILS" }
    ));
    zok
}

/// Reads the scale plane where a wrong reader would; each read must be rejected. Returns how
/// many survived.
fn controls(
    ctx: &Ctx<'_>,
    f: &mut Finding,
    bytes: &[u8],
    geom: &crate::geometry::RowSplitGeometry,
    count: u64,
) -> Result<usize> {
    let spec = &gates().payload_order;
    let mut survived = 0;
    for c in spec
        .negative_controls
        .iter()
        .filter(|c| c.formats.contains(&ctx.format.name))
    {
        let at = match c.name.as_str() {
            "scale_at_offset_0" => 0,
            "scale_inside_high_plane" => geom.high_offset,
            other => fail!(
                SpecInvalid,
                "payload_order.negative_controls",
                "unknown payload_order control {other}"
            ),
        };
        let cs = scale_stats(bytes, at, count)?;
        let rejected = !scales_plausible(&cs);
        if !rejected {
            survived += 1;
        }
        f.line(format!(
            "negative control {} (read @ {at}): neg={} nonfinite={} median={} -> {}",
            c.name,
            cs.negative,
            cs.nonfinite,
            super::findings::round6(cs.median),
            if rejected {
                "rejected"
            } else {
                "SURVIVED (criterion cannot fail)"
            }
        ));
        f.num(&format!("{}_neg", c.name), cs.negative)
            .num(&format!("{}_nonfinite", c.name), cs.nonfinite)
            .num(&format!("{}_median", c.name), cs.median);
    }
    Ok(survived)
}

/// Runs the gate.
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let spec = &gates().payload_order;
    if let Some(why) = ctx.unresolvable(&spec.object) {
        // The spec's object is a GDN layer's (its geometry is the one the spec quotes); the
        // other gates still read every row of the artifact's objects through the same planes.
        return Ok(Finding::skip(
            "payload_order",
            format!("not run: its object {} {why}", spec.object),
        ));
    }
    let name = ctx.name(&spec.object, None)?;
    let rows = ctx.artifact_rows(&name)?;
    let v = &rows.view;
    let geom = v.geom;
    let count = geom.n * geom.groups_per_row;
    let mut f = Finding::new("payload_order");
    crate::fsio::will_need(v.bytes);
    let s = scale_stats(v.bytes, geom.scale_offset, count)?;
    let mut ok = scales_plausible(&s);
    f.num("object_n", geom.n)
        .num("object_k", geom.k)
        .num("scale_offset", geom.scale_offset)
        .num(
            "scale_bytes_per_group",
            geom.scale_row_bytes / geom.groups_per_row,
        )
        .num("median", s.median)
        .num("max", s.max)
        .num("neg", s.negative)
        .num("nonfinite", s.nonfinite);
    f.line(format!(
        "{name}: scale plane @ {} ({} f16): neg={} nonfinite={} median={} max={} -> {}",
        geom.scale_offset,
        s.values,
        s.negative,
        s.nonfinite,
        super::findings::round6(s.median),
        super::findings::round6(s.max),
        if scales_plausible(&s) {
            "plausible scales"
        } else {
            "NOT scales"
        }
    ));
    if ctx.format.name == "PQ2_0_G128" {
        ok &= zero_share(&mut f, v.plane(Plane::Base));
    }
    let survived = controls(ctx, &mut f, v.bytes, &geom, count)?;
    f.set_ok(ok && survived == 0);
    f.detail = if ok && survived == 0 {
        "scale plane holds plausible scales; negative controls rejected".into()
    } else if !ok {
        "scale plane does not hold scales (interleaved ggml blocks or wrong offset?)".into()
    } else {
        format!("{survived} negative control(s) survived")
    };
    Ok(f)
}
