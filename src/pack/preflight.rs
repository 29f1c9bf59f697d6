//! `pack --check`: the pre-flight on a GGUF before packing. Geometry for every (format, n, k),
//! the assemble/disassemble byte round trip and decode equality (ggml blocks vs planes) on
//! sampled tensors, and scale plausibility (no negative or non-finite f16, 0 < median < 1).

use super::{check_source, PackOptions};
use crate::codec::TernaryType;
use crate::codec::{f16_to_f32, Codec};
use crate::error::Result;
use crate::geometry::row_split_geometry;
use crate::gguf::{Gguf, TensorInfo};
use crate::planes::{assemble, disassemble_rows, BlockLayout};

/// One finding of the pre-flight.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    /// What was checked.
    pub what: String,
    /// Whether it passed.
    pub ok: bool,
    /// The measured facts behind the verdict.
    pub detail: String,
}

/// Runs the pre-flight: first [`check_source`], the very checks `pack` runs on the GGUF (a
/// refusal there is returned as the error `pack` would give), then geometry for every shape
/// and, on `sample` tensors (evenly spaced), the round-trip and decode checks.
pub fn preflight(g: &Gguf<'_>, opts: &PackOptions, sample: usize) -> Result<Vec<Check>> {
    let facts = check_source(g, opts)?;
    let mut out = vec![Check {
        what: "source (profile, hparams, layers, prism.hadamard, tensors)".into(),
        ok: true,
        detail: format!(
            "profile {}, {} of {} layers, {}, {} sign widths",
            facts.profile.name,
            facts.held.len(),
            facts.profile.n_layers,
            facts.format.name,
            facts.signs.widths.len()
        ),
    }];
    let ternary: Vec<&TensorInfo<'_>> = g
        .tensors
        .iter()
        .filter(|t| t.ternary_type().is_some())
        .collect();
    out.extend(geometry_checks(&ternary));
    let step = (ternary.len() / sample.max(1)).max(1);
    for t in ternary.iter().step_by(step).take(sample) {
        out.extend(sample_checks(g, t)?);
    }
    Ok(out)
}

/// One geometry check per distinct (format, n, k).
fn geometry_checks(ternary: &[&TensorInfo<'_>]) -> Vec<Check> {
    let mut out = Vec::new();
    let mut shapes = std::collections::BTreeSet::new();
    for t in ternary {
        // The caller passes only ternary tensors; any other has no geometry to check.
        let Some(f) = t.ternary_type().map(TernaryType::format) else {
            continue;
        };
        let (n, k) = (t.n_elements / t.ne[0], t.ne[0]);
        if shapes.insert((f.name.clone(), n, k)) {
            let r = row_split_geometry(f, n, k);
            out.push(Check {
                what: format!("geometry {} [{n}, {k}]", f.name),
                ok: r.is_ok(),
                detail: match r {
                    Ok(g) => format!(
                        "payload {} B, scale plane @{}",
                        g.payload_bytes, g.scale_offset
                    ),
                    Err(e) => e.to_string(),
                },
            });
        }
    }
    out
}

/// Round trip, decode equality and scale plausibility of one sampled tensor.
fn sample_checks(g: &Gguf<'_>, t: &TensorInfo<'_>) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    {
        let f = t.ternary_type().map(TernaryType::format).ok_or_else(|| {
            crate::Error::new(
                crate::ErrorClass::InternalInvariant,
                t.name,
                format!(
                    "sampled as ternary but {} is not a ternary format",
                    t.ggml.name
                ),
            )
        })?;
        let layout = BlockLayout::for_format(f)?;
        let (n, k) = (t.n_elements / t.ne[0], t.ne[0]);
        let geom = row_split_geometry(f, n, k)?;
        let data = g.tensor_data(t);
        let planes = assemble(&layout, &geom, data)?;
        // Compare and decode in row chunks so a 248320-row embedding stays within bounded memory.
        let row_bytes = data.len() / geom.n as usize;
        let chunk = (4 << 20) / row_bytes.max(1) + 1;
        let codec = Codec::for_ggml_type_checked(t.ggml)?;
        let (mut same_bytes, mut same_values, mut values) = (true, true, 0usize);
        let mut r = 0u64;
        while r < geom.n {
            let end = (r + chunk as u64).min(geom.n);
            let back = disassemble_rows(&layout, &geom, &planes, r..end)?;
            let orig = &data[r as usize * row_bytes..end as usize * row_bytes];
            same_bytes &= back == orig;
            let a = codec.decode_to_vec(orig)?;
            let b = codec.decode_to_vec(&back)?;
            same_values &= a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
            values += a.len();
            r = end;
        }
        out.push(Check {
            what: format!("round trip {}", t.name),
            ok: same_bytes,
            detail: format!(
                "{} bytes -> {} plane bytes -> ggml rows",
                data.len(),
                planes.len()
            ),
        });
        out.push(Check {
            what: format!("decode equality {}", t.name),
            ok: same_values,
            detail: format!("{values} values"),
        });
        // Scale plane plausibility, read at the geometry's scale offset.
        let scales: Vec<f32> = planes[geom.scale_offset as usize..]
            .chunks_exact(2)
            .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
            .collect();
        let neg = scales
            .iter()
            .filter(|s| s.is_sign_negative() && **s != 0.0)
            .count();
        let nonfinite = scales.iter().filter(|s| !s.is_finite()).count();
        let mut sorted: Vec<f32> = scales.iter().copied().filter(|s| s.is_finite()).collect();
        sorted.sort_by(f32::total_cmp);
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f32::NAN);
        out.push(Check {
            what: format!("scales {}", t.name),
            ok: neg == 0 && nonfinite == 0 && median > 0.0 && median < 1.0,
            detail: format!("neg={neg} nonfinite={nonfinite} median={median}"),
        });
    }
    Ok(out)
}
