//! Dump formats (`spec/dumps.json`), the f64 reference math of the folded rotation, and the
//! writer of reference dumps (`dump-reference`, and the broken-dump mutations).
//!
//! Reference math, from the artifact bytes only: rows decoded from the planes (ggml blocks
//! reassembled by the spec's plane slices), the sign vector of the input width located by the
//! running sum of `text/hadamard_widths`, a normalized block Hadamard (block = the profile's
//! `hadamard_block`), P (ssm_out) as in spec/hadamard.md#hadamard-runtime-math. Forward `y = W' · (H · (s ⊙ (P · x)))`,
//! inverse (embedding) `h = s ⊙ (H · z)`.

use super::rows::ArtifactRows;
use super::rules;
use crate::ninfer::Artifact;
use crate::spec::{dumps, ModelProfile};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingManifest {
    pub kind: String,
    pub format_version: u32,
    pub dtype: String,
    pub layout: String,
    pub object: String,
    pub tokens: usize,
    pub k: usize,
    pub tokens_file: String,
    pub h_file: String,
}

#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OracleManifest {
    pub kind: String,
    pub format_version: u32,
    pub dtype: String,
    pub layout: String,
    pub cases: Vec<OracleCase>,
}

#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OracleCase {
    pub name: String,
    pub rotation: String,
    pub object: String,
    pub tokens: usize,
    pub k: usize,
    pub n: usize,
    pub x_file: Option<String>,
    pub token_ids_file: Option<String>,
    pub y_file: String,
}

/// The rotation variants: the documented one and the wrong ones of spec/verifier.md#gate-engine-oracles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Documented,
    /// Forward: signs after H; inverse: signs before H (the other order).
    SignsAfterRotation,
    UnnormalizedH,
    MisalignedSignRow,
    PermutationReversed,
    PMissing,
}

impl Variant {
    pub fn from_name(s: &str) -> Option<Variant> {
        Some(match s {
            "documented" => Variant::Documented,
            "signs_after_rotation" => Variant::SignsAfterRotation,
            "unnormalized_h" => Variant::UnnormalizedH,
            "misaligned_sign_row" => Variant::MisalignedSignRow,
            "permutation_reversed" => Variant::PermutationReversed,
            "p_missing" => Variant::PMissing,
            _ => return None,
        })
    }
}

/// The sign table of an artifact and the Hadamard block.
pub struct Rotation {
    pub signs: Vec<f32>,
    pub widths: Vec<i32>,
    pub block: usize,
}

impl Rotation {
    pub fn from_artifact(a: &Artifact<'_>, p: &ModelProfile) -> Result<Rotation> {
        let (signs, widths) = super::signs::artifact_signs(a)?;
        Ok(Rotation {
            signs,
            widths,
            block: p.hadamard_block as usize,
        })
    }

    /// The sign vector of input width `w`: offset = running sum of the widths before it.
    pub fn signs_for(&self, w: usize, misaligned: bool) -> Result<Vec<f64>> {
        let i = self
            .widths
            .iter()
            .position(|&x| x as i64 == w as i64)
            .ok_or_else(|| anyhow!("text/hadamard_widths {:?} has no width {w}", self.widths))?;
        let off: i64 = self.widths[..i].iter().map(|&x| x as i64).sum();
        let total = self.signs.len();
        if off < 0 || off as usize + w > total {
            bail!("sign vector of width {w} at {off} runs past the {total}-value table");
        }
        let shift = usize::from(misaligned);
        Ok((0..w)
            .map(|j| self.signs[(off as usize + j + shift) % total] as f64)
            .collect())
    }
}

/// In-place block Hadamard (Sylvester order), normalized by 1/sqrt(B) unless `unnormalized`.
pub fn fwht(x: &mut [f64], block: usize, unnormalized: bool) -> Result<()> {
    if block == 0 || !block.is_power_of_two() || x.len() % block != 0 {
        bail!(
            "width {} is not a multiple of the power-of-two Hadamard block {block}",
            x.len()
        );
    }
    let norm = if unnormalized {
        1.0
    } else {
        1.0 / (block as f64).sqrt()
    };
    for c in x.chunks_exact_mut(block) {
        let mut h = 1;
        while h < block {
            for i in (0..block).step_by(2 * h) {
                for j in i..i + h {
                    let (a, b) = (c[j], c[j + h]);
                    c[j] = a + b;
                    c[j + h] = a - b;
                }
            }
            h *= 2;
        }
        for v in c.iter_mut() {
            *v *= norm;
        }
    }
    Ok(())
}

/// The rotated input `u` of a forward case for one token, under `variant`.
pub fn forward_input(
    p: &ModelProfile,
    rot: &Rotation,
    rotation: &str,
    x: &[f64],
    variant: Variant,
) -> Result<Vec<f64>> {
    let k = x.len();
    let s = rot.signs_for(k, variant == Variant::MisalignedSignRow)?;
    let perm = match (rotation, variant) {
        ("perm", Variant::PermutationReversed) => Some(rules::ssm_out_reversed(p, k as u64)),
        ("perm", Variant::PMissing) => None,
        ("perm", _) => Some(rules::ssm_out_gather(p, k as u64)),
        _ => None,
    };
    let mut v: Vec<f64> = match perm {
        Some(g) => g.iter().map(|&i| x[i]).collect(),
        None => x.to_vec(),
    };
    let unnorm = variant == Variant::UnnormalizedH;
    if variant == Variant::SignsAfterRotation {
        fwht(&mut v, rot.block, unnorm)?;
        v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
    } else {
        v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
        fwht(&mut v, rot.block, unnorm)?;
    }
    Ok(v)
}

/// The inverse rotation of an embedding row `z`, under `variant`.
pub fn inverse(rot: &Rotation, z: &[f64], variant: Variant) -> Result<Vec<f64>> {
    let s = rot.signs_for(z.len(), variant == Variant::MisalignedSignRow)?;
    let unnorm = variant == Variant::UnnormalizedH;
    let mut v = z.to_vec();
    if variant == Variant::SignsAfterRotation {
        v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
        fwht(&mut v, rot.block, unnorm)?;
    } else {
        fwht(&mut v, rot.block, unnorm)?;
        v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
    }
    Ok(v)
}

/// `Y[v][t] = W' · U[v][t]` for several input sets in one pass over the rows; returns, per set,
/// an N*T token-major output.
pub fn matmul_sets(rows: &mut ArtifactRows<'_>, sets: &[Vec<Vec<f64>>]) -> Result<Vec<Vec<f64>>> {
    let n = rows.n() as usize;
    let mut out: Vec<Vec<f64>> = sets.iter().map(|s| vec![0.0; n * s.len()]).collect();
    for r in 0..n {
        let w = rows.decode(r as u64)?;
        for (si, set) in sets.iter().enumerate() {
            for (t, u) in set.iter().enumerate() {
                out[si][t * n + r] = w.iter().zip(u).map(|(a, b)| a * b).sum();
            }
        }
    }
    Ok(out)
}

/// ||a - b|| / ||b||.
pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    if den == 0.0 {
        return if num == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (num / den).sqrt()
}

pub fn read_f32s(bytes: &[u8], what: &str, want: usize) -> Result<Vec<f64>> {
    if bytes.len() != 4 * want {
        bail!(
            "{what}: {} bytes, expected {want} f32 ({} bytes)",
            bytes.len(),
            4 * want
        );
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4")) as f64)
        .collect())
}

pub fn read_i32s(bytes: &[u8], what: &str, want: usize) -> Result<Vec<i64>> {
    if bytes.len() != 4 * want {
        bail!("{what}: {} bytes, expected {want} i32", bytes.len());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")) as i64)
        .collect())
}

/// Checks the common manifest fields against spec/dumps.json.
pub fn check_header(
    kind_want: &str,
    kind: &str,
    version: u32,
    dtype: &str,
    layout: &str,
) -> Result<()> {
    let d = dumps();
    if kind != kind_want {
        bail!("manifest kind '{kind}', expected '{kind_want}'");
    }
    if version != d.format_version || dtype != d.dtype || layout != d.layout {
        bail!(
            "manifest says version {version} dtype {dtype} layout {layout}; this verifier reads version {} dtype {} layout {}",
            d.format_version, d.dtype, d.layout
        );
    }
    Ok(())
}

pub fn read_manifest<T: for<'de> Deserialize<'de>>(dir: &Path, name: &str) -> Result<T> {
    let text = crate::fsio::read_input_string(&dir.join(name))
        .with_context(|| format!("{name} in the dump directory"))?;
    serde_json::from_str(&text).with_context(|| format!("{name} does not match spec/dumps.json"))
}

/// Broken-dump switches for the dump mutations (all false = a correct reference dump).
#[derive(Clone, Copy, Debug, Default)]
pub struct DumpFaults {
    pub embedding_row_major: bool,
    pub oracle_signs_after_rotation: bool,
    pub unnormalized: bool,
}

fn f32_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect()
}

fn i32_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect()
}

/// Distinct default tokens spread over the vocabulary.
pub fn default_tokens(vocab: u64, t: usize) -> Vec<u64> {
    let t = t.max(2) as u64;
    let mut v: Vec<u64> = (0..t)
        .map(|i| (1 + i * (vocab - 2) / (t - 1)).min(vocab - 1))
        .collect();
    v.dedup();
    v
}

/// The reference embedding activations of `tokens` (default: spread over the vocabulary):
/// (tokens, hidden, h token-major), h = s ⊙ (H · z) in f64.
pub fn reference_embedding(
    a: &Artifact<'_>,
    tokens: Option<Vec<u64>>,
) -> Result<(Vec<u64>, usize, Vec<f64>)> {
    let p = super::profile_for_artifact(a)?;
    let format = super::artifact_format(a).ok_or_else(|| anyhow!("no ternary object"))?;
    let blocks = super::rows::Blocks::for_format(format)?;
    let rot = Rotation::from_artifact(a, &p)?;
    let tokens =
        tokens.unwrap_or_else(|| default_tokens(p.vocab, dumps().embedding.default_tokens));
    if let Some(&bad) = tokens.iter().find(|&&t| t >= p.vocab) {
        bail!("token {bad} is outside the vocabulary ({})", p.vocab);
    }
    let mut rows = ArtifactRows::new(
        a.row_split("text/token_embedding")
            .map_err(|e| anyhow!("{e}"))?,
        blocks,
    )?;
    let k = rows.view.geom.k as usize;
    let mut h = Vec::with_capacity(k * tokens.len());
    for &id in &tokens {
        h.extend(inverse(&rot, &rows.decode(id)?, Variant::Documented)?);
    }
    Ok((tokens, k, h))
}

/// Writes the engine-format embedding dump (spec/dumps.json `engine_embedding`) to `path`
/// atomically; `transposed` writes the layout bug (k*T + t) for negative controls.
pub fn write_engine_embedding(
    a: &Artifact<'_>,
    path: &Path,
    tokens: Option<Vec<u64>>,
    transposed: bool,
) -> Result<()> {
    let (ids, k, h) = reference_embedding(a, tokens)?;
    let bytes = super::engine_dump::write(&ids, k, &h, transposed);
    crate::fsio::write_atomic(
        path,
        |w| std::io::Write::write_all(w, &bytes).map_err(crate::fsio::write_err("engine dump")),
        |tmp| {
            let b = std::fs::read(tmp)
                .map_err(|e| crate::Error::io(crate::ErrorClass::IoWrite, tmp, e))?;
            super::engine_dump::parse(&b).map(|_| ()).map_err(|e| {
                crate::Error::new(crate::ErrorClass::IoWrite, "engine dump", e.to_string())
            })
        },
    )
    .map_err(|e| anyhow!("{e}"))
}

/// Writes `DIR/embedding` and `DIR/oracles` reference dumps computed from the artifact.
pub fn write_reference(
    a: &Artifact<'_>,
    dir: &Path,
    tokens: Option<Vec<u64>>,
    seed: u64,
    faults: DumpFaults,
) -> Result<()> {
    let p = super::profile_for_artifact(a)?;
    let format = super::artifact_format(a).ok_or_else(|| anyhow!("no ternary object"))?;
    let blocks = super::rows::Blocks::for_format(format)?;
    let rot = Rotation::from_artifact(a, &p)?;
    let spec = dumps();
    let tokens = tokens.unwrap_or_else(|| default_tokens(p.vocab, spec.embedding.default_tokens));
    if let Some(&bad) = tokens.iter().find(|&&t| t >= p.vocab) {
        bail!("token {bad} is outside the vocabulary ({})", p.vocab);
    }
    let open = |name: &str| -> Result<ArtifactRows<'_>> {
        ArtifactRows::new(a.row_split(name).map_err(|e| anyhow!("{e}"))?, blocks)
    };
    let fwd_variant = if faults.oracle_signs_after_rotation {
        Variant::SignsAfterRotation
    } else if faults.unnormalized {
        Variant::UnnormalizedH
    } else {
        Variant::Documented
    };
    // Embedding dump.
    let edir = dir.join("embedding");
    std::fs::create_dir_all(&edir)?;
    let obj = "text/token_embedding";
    let mut rows = open(obj)?;
    let k = rows.view.geom.k as usize;
    let tt = tokens.len();
    let emb_variant = if faults.unnormalized {
        Variant::UnnormalizedH
    } else {
        Variant::Documented
    };
    let mut h = vec![0.0; k * tt];
    for (t, &id) in tokens.iter().enumerate() {
        let hv = inverse(&rot, &rows.decode(id)?, emb_variant)?;
        for (kk, v) in hv.iter().enumerate() {
            if faults.embedding_row_major {
                h[kk * tt + t] = *v;
            } else {
                h[t * k + kk] = *v;
            }
        }
    }
    let files = &spec.embedding.default_files;
    let m = EmbeddingManifest {
        kind: "embedding".into(),
        format_version: spec.format_version,
        dtype: spec.dtype.clone(),
        layout: spec.layout.clone(),
        object: obj.into(),
        tokens: tt,
        k,
        tokens_file: files["tokens_file"].clone(),
        h_file: files["h_file"].clone(),
    };
    std::fs::write(edir.join(&m.tokens_file), i32_bytes(&tokens))?;
    std::fs::write(edir.join(&m.h_file), f32_bytes(&h))?;
    std::fs::write(
        edir.join(&spec.embedding.manifest),
        serde_json::to_string_pretty(&m)? + "\n",
    )?;
    // Kernel-oracle dumps.
    let odir = dir.join("oracles");
    std::fs::create_dir_all(&odir)?;
    let mut cases = Vec::new();
    for rc in &spec.kernel_oracles.required_cases {
        let object = super::resolve_name(&p, &super::artifact_layers(a), &rc.object, None)?;
        let mut rows = open(&object)?;
        let (n, k) = (rows.n() as usize, rows.view.geom.k as usize);
        let t = rc.tokens;
        let y_file = format!("{}.y.f32", rc.name);
        if rc.rotation == "inverse" {
            let ids: Vec<u64> = tokens.iter().copied().cycle().take(t).collect();
            let mut y = vec![0.0; k * t];
            for (ti, &id) in ids.iter().enumerate() {
                let hv = inverse(&rot, &rows.decode(id)?, fwd_variant_inverse(faults))?;
                y[ti * k..(ti + 1) * k].copy_from_slice(&hv);
            }
            let tf = format!("{}.tokens.i32", rc.name);
            std::fs::write(odir.join(&tf), i32_bytes(&ids))?;
            std::fs::write(odir.join(&y_file), f32_bytes(&y))?;
            cases.push(OracleCase {
                name: rc.name.clone(),
                rotation: rc.rotation.clone(),
                object,
                tokens: t,
                k,
                n: k,
                x_file: None,
                token_ids_file: Some(tf),
                y_file,
            });
            continue;
        }
        let mut rng = crate::rng::Rng::for_name(seed, &rc.name);
        // x stored as f32; the reference uses exactly the stored values.
        let x: Vec<f64> = (0..k * t)
            .map(|_| (rng.unit() * 2.0 - 1.0) as f32 as f64)
            .collect();
        let us: Vec<Vec<f64>> = (0..t)
            .map(|ti| {
                forward_input(
                    &p,
                    &rot,
                    &rc.rotation,
                    &x[ti * k..(ti + 1) * k],
                    fwd_variant,
                )
            })
            .collect::<Result<_>>()?;
        let y = matmul_sets(&mut rows, &[us])?.remove(0);
        let xf = format!("{}.x.f32", rc.name);
        std::fs::write(odir.join(&xf), f32_bytes(&x))?;
        std::fs::write(odir.join(&y_file), f32_bytes(&y))?;
        cases.push(OracleCase {
            name: rc.name.clone(),
            rotation: rc.rotation.clone(),
            object,
            tokens: t,
            k,
            n,
            x_file: Some(xf),
            token_ids_file: None,
            y_file,
        });
    }
    let m = OracleManifest {
        kind: "kernel_oracles".into(),
        format_version: spec.format_version,
        dtype: spec.dtype.clone(),
        layout: spec.layout.clone(),
        cases,
    };
    std::fs::write(
        odir.join(&spec.kernel_oracles.manifest),
        serde_json::to_string_pretty(&m)? + "\n",
    )?;
    Ok(())
}

fn fwd_variant_inverse(f: DumpFaults) -> Variant {
    if f.oracle_signs_after_rotation {
        Variant::SignsAfterRotation
    } else if f.unnormalized {
        Variant::UnnormalizedH
    } else {
        Variant::Documented
    }
}
