//! Gate 5: signs — text/hadamard_signs (FP32) and text/hadamard_widths (I32) equal the source
//! GGUF's prism.hadamard.sign_values / sign_widths exactly.

use super::{Ctx, Finding};
use crate::spec::gates;
use anyhow::{anyhow, Result};

/// The artifact's sign table and widths (as stored).
pub fn artifact_signs(a: &crate::ninfer::Artifact<'_>) -> Result<(Vec<f32>, Vec<i32>)> {
    let s = &gates().signs;
    let (sf, _, sb) = a
        .contiguous(&s.artifact_signs)
        .map_err(|e| anyhow!("{e}"))?;
    let (wf, _, wb) = a
        .contiguous(&s.artifact_widths)
        .map_err(|e| anyhow!("{e}"))?;
    if sf.name != "FP32" || wf.name != "I32" {
        return Err(anyhow!(
            "sign objects are {} / {}, expected FP32 / I32",
            sf.name,
            wf.name
        ));
    }
    let signs = sb
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    let widths = wb
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")))
        .collect();
    Ok((signs, widths))
}

pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let s = &gates().signs;
    if ctx.g.get(&s.gguf_signs).is_none() && ctx.g.get(&s.gguf_widths).is_none() {
        return Ok(super::skip_naming("signs"));
    }
    let gv = ctx
        .g
        .get_array_as::<i32>(&s.gguf_signs)
        .map_err(|e| anyhow!("{e}"))?;
    let gw = ctx
        .g
        .get_array_as::<i32>(&s.gguf_widths)
        .map_err(|e| anyhow!("{e}"))?;
    let mut f = Finding::new("signs");
    let (av, aw) = artifact_signs(ctx.a)?;
    let len_ok = av.len() == gv.len();
    let mismatches = av
        .iter()
        .zip(&gv)
        .filter(|(a, g)| **a != **g as f32)
        .count()
        + av.len().abs_diff(gv.len());
    let max_diff = av
        .iter()
        .zip(&gv)
        .map(|(a, g)| (*a as f64 - *g as f64).abs())
        .fold(0.0, f64::max);
    let widths_ok = aw == gw;
    f.num("values", gv.len())
        .num("value_mismatches", mismatches)
        .num("max_abs_diff", max_diff)
        .num("widths_equal", widths_ok);
    f.line(format!("widths: artifact {aw:?}, GGUF {gw:?}"));
    let ok = len_ok && mismatches == 0 && widths_ok;
    f.set_ok(ok);
    f.detail = if ok {
        format!(
            "{} sign values and {} widths equal the GGUF's exactly",
            gv.len(),
            gw.len()
        )
    } else {
        format!(
            "sign objects differ from prism.hadamard.*: {mismatches} value mismatch(es), widths {}",
            if widths_ok { "equal" } else { "DIFFER" }
        )
    };
    Ok(f)
}
