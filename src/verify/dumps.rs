//! Dump formats (`spec/dumps.json`): the manifests, their parsers (from a directory or from
//! memory, see [`DumpFiles`](crate::verify::dumps::DumpFiles)), and the f64 reference math of the folded rotation. The writer of
//! reference dumps is `verify::reference` (re-exported here).
//!
//! Reference math, from the artifact bytes only: rows decoded from the planes (ggml blocks
//! reassembled by the spec's plane slices), the sign vector of the input width located by the
//! running sum of `text/hadamard_widths`, a normalized block Hadamard (block = the profile's
//! `hadamard_block`), P (ssm_out) as in spec/hadamard.md#hadamard-runtime-math. Forward `y = W' · (H · (s ⊙ (P · x)))`,
//! inverse (embedding) `h = s ⊙ (H · z)`.

use super::rows::ArtifactRows;
use super::rules;
use crate::error::{Error, ErrorClass, Result};
use crate::hadamard::{fwht_scaled, Scale};
use crate::ninfer::Artifact;
use crate::spec::{dumps, ModelProfile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use super::reference::{
    default_tokens, reference_embedding, write_engine_embedding, write_reference, DumpFaults,
};

/// `embedding/manifest.json` of a native embedding dump (spec/dumps.json `embedding`).
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingManifest {
    /// Always `embedding`.
    pub kind: String,
    /// spec/dumps.json `format_version`.
    pub format_version: u32,
    /// spec/dumps.json `dtype` of the array files.
    pub dtype: String,
    /// spec/dumps.json `layout` (token-major).
    pub layout: String,
    /// The artifact object the activations come from.
    pub object: String,
    /// T, the number of tokens.
    pub tokens: usize,
    /// The hidden width K of each activation row.
    pub k: usize,
    /// File of T i32 token ids.
    pub tokens_file: String,
    /// File of T*K f32 activations, token-major.
    pub h_file: String,
}

/// `oracles/manifest.json` of a native kernel-oracle dump (spec/dumps.json `kernel_oracles`).
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OracleManifest {
    /// Always `kernel_oracles`.
    pub kind: String,
    /// spec/dumps.json `format_version`.
    pub format_version: u32,
    /// spec/dumps.json `dtype` of the array files.
    pub dtype: String,
    /// spec/dumps.json `layout` (token-major).
    pub layout: String,
    /// One entry per rotation case.
    pub cases: Vec<OracleCase>,
}

/// One rotation case of a kernel-oracle dump.
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OracleCase {
    /// The required case's name (spec/dumps.json `required_cases`).
    pub name: String,
    /// `plain`, `perm` or `inverse`.
    pub rotation: String,
    /// The artifact object W'.
    pub object: String,
    /// T, the number of tokens.
    pub tokens: usize,
    /// Input width.
    pub k: usize,
    /// Output width.
    pub n: usize,
    /// Forward cases: file of T*K f32 inputs.
    pub x_file: Option<String>,
    /// Inverse cases: file of T i32 token ids.
    pub token_ids_file: Option<String>,
    /// File of T*N f32 outputs.
    pub y_file: String,
}

/// Where a dump's files come from: a directory on disk, or memory (the fuzz target, tests).
/// Every parser of a dump reads through it, so the fuzzed code is the code `verify` runs.
pub trait DumpFiles {
    /// The bytes of the file `name` (a plain file name, no directories).
    fn read(&self, name: &str) -> Result<Vec<u8>>;
}

impl DumpFiles for Path {
    fn read(&self, name: &str) -> Result<Vec<u8>> {
        super::read_dump_file(self, name)
    }
}

impl DumpFiles for std::path::PathBuf {
    fn read(&self, name: &str) -> Result<Vec<u8>> {
        super::read_dump_file(self, name)
    }
}

impl DumpFiles for BTreeMap<String, Vec<u8>> {
    fn read(&self, name: &str) -> Result<Vec<u8>> {
        self.get(name)
            .cloned()
            .ok_or_else(|| err!(DumpFormat, name, "dump file {name} is absent"))
    }
}

/// `a * b` for sizes read from a dump, refused (class `dump.format`) when it overflows: a
/// manifest's `tokens` is attacker-controlled and a wrapped product would pass a length check.
pub fn checked_elems(a: usize, b: usize, what: &str) -> Result<usize, Error> {
    a.checked_mul(b).ok_or_else(|| {
        Error::new(
            ErrorClass::DumpFormat,
            what,
            format!("{a} * {b} elements overflows this machine's address range"),
        )
    })
}

/// A native embedding dump, read and checked against the manifest (h token-major).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingArrays {
    /// T, the number of tokens.
    pub tokens: usize,
    /// The token ids, as stored (i32 widened).
    pub ids: Vec<i64>,
    /// T*K activations, `h[t*K + k]`.
    pub h: Vec<f64>,
}

/// Parses a native embedding dump of `object` with hidden width `k`: manifest fields against
/// spec/dumps.json, then both array files with lengths checked against T and K.
pub fn parse_embedding(
    files: &(impl DumpFiles + ?Sized),
    object: &str,
    k: usize,
) -> Result<EmbeddingArrays> {
    let m: EmbeddingManifest = read_manifest(files, &dumps().embedding.manifest)?;
    check_header("embedding", &m.kind, m.format_version, &m.dtype, &m.layout)?;
    if m.object != object {
        fail!(
            DumpFormat,
            "manifest.json object",
            "dump is of {}, the gate checks {object}",
            m.object
        );
    }
    if m.k != k {
        fail!(
            DumpFormat,
            "manifest.json k",
            "dump k = {}, {object} has k = {k}",
            m.k
        );
    }
    let t = m.tokens;
    let ids = read_i32s(&files.read(&m.tokens_file)?, &m.tokens_file, t)?;
    let h_len = checked_elems(k, t, "manifest.json tokens * k")?;
    let h = read_f32s(&files.read(&m.h_file)?, &m.h_file, h_len)?;
    Ok(EmbeddingArrays { tokens: t, ids, h })
}

/// Parses a native kernel-oracle manifest and checks its header against spec/dumps.json.
pub fn parse_oracle_manifest(files: &(impl DumpFiles + ?Sized)) -> Result<OracleManifest> {
    let m: OracleManifest = read_manifest(files, &dumps().kernel_oracles.manifest)?;
    check_header(
        "kernel_oracles",
        &m.kind,
        m.format_version,
        &m.dtype,
        &m.layout,
    )?;
    Ok(m)
}

/// The stored arrays of one oracle case: forward cases carry `x`, inverse ones token `ids`.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleArrays {
    /// Forward: T*K inputs, token-major.
    pub x: Option<Vec<f64>>,
    /// Inverse: T token ids.
    pub ids: Option<Vec<i64>>,
    /// T*N outputs, token-major.
    pub y: Vec<f64>,
}

/// Reads the array files of case `c` with every length checked against its T, K and N.
pub fn parse_oracle_arrays(
    files: &(impl DumpFiles + ?Sized),
    c: &OracleCase,
) -> Result<OracleArrays> {
    let (x, ids) = if c.rotation == "inverse" {
        let Some(tf) = &c.token_ids_file else {
            fail!(
                DumpFormat,
                format!("case {} token_ids_file", c.name),
                "inverse case without token_ids_file"
            );
        };
        (None, Some(read_i32s(&files.read(tf)?, tf, c.tokens)?))
    } else {
        let Some(xf) = &c.x_file else {
            fail!(
                DumpFormat,
                format!("case {} x_file", c.name),
                "forward case without x_file"
            );
        };
        let len = checked_elems(c.k, c.tokens, "case k * tokens")?;
        (Some(read_f32s(&files.read(xf)?, xf, len)?), None)
    };
    let len = checked_elems(c.n, c.tokens, "case n * tokens")?;
    let y = read_f32s(&files.read(&c.y_file)?, &c.y_file, len)?;
    Ok(OracleArrays { x, ids, y })
}

/// The rotation variants: the documented one and the wrong ones of spec/verifier.md#gate-engine-oracles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The documented math of spec/hadamard.md.
    Documented,
    /// Forward: signs after H; inverse: signs before H (the other order).
    SignsAfterRotation,
    /// H without the 1/sqrt(B) factor.
    UnnormalizedH,
    /// The sign vector read one position late.
    MisalignedSignRow,
    /// The ssm_out permutation applied backwards.
    PermutationReversed,
    /// The ssm_out permutation left out.
    PMissing,
}

impl Variant {
    /// The variant named `s` in spec/gates.json `wrong_variants` (or `documented`).
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
    /// `text/hadamard_signs`, all widths concatenated.
    pub signs: Vec<f32>,
    /// `text/hadamard_widths`, in table order.
    pub widths: Vec<i32>,
    /// The profile's Hadamard block B.
    pub block: usize,
}

impl Rotation {
    /// The sign table of `artifact` and the block of `profile`.
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
            .ok_or_else(|| {
                err!(
                    VerifyInput,
                    "text/hadamard_widths",
                    "{:?} has no width {w}",
                    self.widths
                )
            })?;
        let off: i64 = self.widths[..i].iter().map(|&x| x as i64).sum();
        let total = self.signs.len();
        let end = usize::try_from(off).ok().and_then(|o| o.checked_add(w));
        let Some(off) = end.filter(|&e| e <= total).map(|e| e - w) else {
            fail!(
                VerifyInput,
                "text/hadamard_signs",
                "sign vector of width {w} at {off} runs past the {total}-value table"
            );
        };
        let shift = usize::from(misaligned);
        Ok((0..w)
            .map(|j| self.signs[(off + j + shift) % total] as f64)
            .collect())
    }
}

/// In-place block Hadamard, normalized unless `unnormalized` (the crate's one FWHT,
/// [`crate::hadamard::fwht_scaled`]).
pub fn fwht(x: &mut [f64], block: usize, unnormalized: bool) -> Result<()> {
    let scale = if unnormalized {
        Scale::Unnormalized
    } else {
        Scale::Normalized
    };
    fwht_scaled(x, block, scale)
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

/// `want` little-endian f32 values from a dump file, refused unless its length is exactly
/// `4 * want` (computed checked: a `want` from a manifest may be anything).
pub fn read_f32s(bytes: &[u8], what: &str, want: usize) -> Result<Vec<f64>> {
    let need = checked_elems(want, 4, what)?;
    planted!("dump_array_one_short", {
        if want > 1 && bytes.len() + 4 == need {
            let (words, _) = bytes.as_chunks::<4>();
            return Ok(words
                .iter()
                .map(|c| f32::from_le_bytes(*c) as f64)
                .collect());
        }
    });
    if bytes.len() != need {
        return Err(Error::at(
            ErrorClass::DumpFormat,
            bytes.len().min(need) as u64,
            what,
            format!(
                "{what}: {} bytes, expected {want} f32 ({need} bytes)",
                bytes.len()
            ),
        ));
    }
    let (words, _) = bytes.as_chunks::<4>();
    Ok(words
        .iter()
        .map(|c| f32::from_le_bytes(*c) as f64)
        .collect())
}

/// `want` little-endian i32 values from a dump file, length checked like [`read_f32s`].
pub fn read_i32s(bytes: &[u8], what: &str, want: usize) -> Result<Vec<i64>> {
    let need = checked_elems(want, 4, what)?;
    if bytes.len() != need {
        return Err(Error::at(
            ErrorClass::DumpFormat,
            bytes.len().min(need) as u64,
            what,
            format!("{what}: {} bytes, expected {want} i32", bytes.len()),
        ));
    }
    let (words, _) = bytes.as_chunks::<4>();
    Ok(words
        .iter()
        .map(|c| i32::from_le_bytes(*c) as i64)
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
        fail!(
            DumpFormat,
            "manifest.json kind",
            "manifest kind '{kind}', expected '{kind_want}'"
        );
    }
    if version != d.format_version || dtype != d.dtype || layout != d.layout {
        fail!(
            DumpFormat,
            "manifest.json",
            "manifest says version {version} dtype {dtype} layout {layout}; this verifier reads version {} dtype {} layout {}",
            d.format_version, d.dtype, d.layout
        );
    }
    Ok(())
}

/// Reads and deserializes the manifest `name` (unknown fields refused).
pub fn read_manifest<T: for<'de> Deserialize<'de>>(
    files: &(impl DumpFiles + ?Sized),
    name: &str,
) -> Result<T> {
    let bytes = files
        .read(name)
        .map_err(|e| super::within(e, &format!("{name} in the dump directory")))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        err!(
            DumpFormat,
            name,
            "does not match spec/dumps.json (line {}, column {}): {e}",
            e.line(),
            e.column()
        )
    })
}
