//! The writer of reference dumps (`dump-reference`, and the broken-dump mutations): the
//! embedding and kernel-oracle dumps of spec/dumps.json computed in f64 from the artifact bytes,
//! stored f32, and written as one directory atomically (`verify::dump_dir`).

use super::dump_dir::{write_dir_atomic, DirFiles};
use super::dumps::{
    forward_input, inverse, matmul_sets, EmbeddingManifest, OracleCase, OracleManifest, Rotation,
    Variant,
};
use super::rows::{ArtifactRows, Blocks};
use crate::error::Result;
use crate::ninfer::Artifact;
use crate::spec::{dumps, ModelProfile, RequiredCase};
use std::path::{Path, PathBuf};

/// Broken-dump switches for the dump mutations (all false = a correct reference dump).
#[derive(Clone, Copy, Debug, Default)]
pub struct DumpFaults {
    /// The embedding dump stored row-major (element (k, t) at k*T + t).
    pub embedding_row_major: bool,
    /// The oracle outputs computed with the signs applied after H.
    pub oracle_signs_after_rotation: bool,
    /// Both dumps computed with an unnormalized H.
    pub unnormalized: bool,
}

impl DumpFaults {
    /// The variant the oracle cases are computed with.
    fn oracle_variant(self) -> Variant {
        if self.oracle_signs_after_rotation {
            Variant::SignsAfterRotation
        } else if self.unnormalized {
            Variant::UnnormalizedH
        } else {
            Variant::Documented
        }
    }

    /// The variant the embedding dump is computed with.
    fn embedding_variant(self) -> Variant {
        if self.unnormalized {
            Variant::UnnormalizedH
        } else {
            Variant::Documented
        }
    }
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

/// What every reference computation needs from the artifact.
struct Reference<'a> {
    artifact: &'a Artifact<'a>,
    profile: ModelProfile,
    blocks: Blocks,
    rotation: Rotation,
    tokens: Vec<u64>,
}

impl<'a> Reference<'a> {
    /// Profile, block layout and sign table of `artifact`; `tokens` checked against the
    /// vocabulary (default: spread over it).
    fn new(artifact: &'a Artifact<'a>, tokens: Option<Vec<u64>>) -> Result<Reference<'a>> {
        let profile = super::profile_for_artifact(artifact)?;
        let format = super::artifact_format(artifact).ok_or_else(super::no_ternary)?;
        let blocks = Blocks::for_format(format)?;
        let rotation = Rotation::from_artifact(artifact, &profile)?;
        let tokens = tokens
            .unwrap_or_else(|| default_tokens(profile.vocab, dumps().embedding.default_tokens));
        if let Some(&bad) = tokens.iter().find(|&&t| t >= profile.vocab) {
            fail!(
                CliUsage,
                "--tokens",
                "token {bad} is outside the vocabulary ({})",
                profile.vocab
            );
        }
        Ok(Reference {
            artifact,
            profile,
            blocks,
            rotation,
            tokens,
        })
    }

    fn rows(&self, name: &str) -> Result<ArtifactRows<'a>> {
        ArtifactRows::new(self.artifact.row_split(name)?, self.blocks)
    }

    /// `h = s ⊙ (H · z)` of each of `ids`, token-major (`out[t*K + k]`).
    fn inverse_rows(
        &self,
        object: &str,
        ids: &[u64],
        variant: Variant,
    ) -> Result<(usize, Vec<f64>)> {
        let mut rows = self.rows(object)?;
        let k = rows.view.geom.k as usize;
        let mut h = Vec::with_capacity(k * ids.len());
        for &id in ids {
            h.extend(inverse(&self.rotation, &rows.decode(id)?, variant)?);
        }
        Ok((k, h))
    }

    /// `embedding/`: manifest, token ids and activations.
    fn embedding_files(&self, faults: DumpFaults, files: &mut DirFiles) -> Result<()> {
        let spec = dumps();
        let object = "text/token_embedding";
        let (k, token_major) =
            self.inverse_rows(object, &self.tokens, faults.embedding_variant())?;
        let t = self.tokens.len();
        let h = if faults.embedding_row_major {
            (0..k * t)
                .map(|i| token_major[(i % t) * k + i / t])
                .collect()
        } else {
            token_major
        };
        let names = &spec.embedding.default_files;
        let m = EmbeddingManifest {
            kind: "embedding".into(),
            format_version: spec.format_version,
            dtype: spec.dtype.clone(),
            layout: spec.layout.clone(),
            object: object.into(),
            tokens: t,
            k,
            tokens_file: names["tokens_file"].clone(),
            h_file: names["h_file"].clone(),
        };
        let at = |name: &str| PathBuf::from("embedding").join(name);
        files.push((at(&m.tokens_file), i32_bytes(&self.tokens)));
        files.push((at(&m.h_file), f32_bytes(&h)));
        let manifest = serde_json::to_string_pretty(&m)
            .map_err(|e| err!(InternalInvariant, "manifest.json", "not serializable: {e}"))?
            + "\n";
        files.push((at(&spec.embedding.manifest), manifest.into_bytes()));
        Ok(())
    }

    /// An inverse (embedding) oracle case: token ids cycled from the dump's tokens.
    fn inverse_case(
        &self,
        rc: &RequiredCase,
        object: String,
        variant: Variant,
        files: &mut DirFiles,
    ) -> Result<OracleCase> {
        let ids: Vec<u64> = self
            .tokens
            .iter()
            .copied()
            .cycle()
            .take(rc.tokens)
            .collect();
        let (k, y) = self.inverse_rows(&object, &ids, variant)?;
        let tf = format!("{}.tokens.i32", rc.name);
        let y_file = format!("{}.y.f32", rc.name);
        files.push((PathBuf::from("oracles").join(&tf), i32_bytes(&ids)));
        files.push((PathBuf::from("oracles").join(&y_file), f32_bytes(&y)));
        Ok(OracleCase {
            name: rc.name.clone(),
            rotation: rc.rotation.clone(),
            object,
            tokens: rc.tokens,
            k,
            n: k,
            x_file: None,
            token_ids_file: Some(tf),
            y_file,
        })
    }

    /// A forward oracle case: seeded x in [-1, 1) (stored f32; the reference uses exactly the
    /// stored values), `y = W' · u`.
    fn forward_case(
        &self,
        rc: &RequiredCase,
        object: String,
        variant: Variant,
        seed: u64,
        files: &mut DirFiles,
    ) -> Result<OracleCase> {
        let mut rows = self.rows(&object)?;
        let (n, k, t) = (rows.n() as usize, rows.view.geom.k as usize, rc.tokens);
        let mut rng = crate::rng::Rng::for_name(seed, &rc.name);
        let x: Vec<f64> = (0..k * t)
            .map(|_| (rng.unit() * 2.0 - 1.0) as f32 as f64)
            .collect();
        let us = x
            .chunks_exact(k)
            .map(|xt| forward_input(&self.profile, &self.rotation, &rc.rotation, xt, variant))
            .collect::<Result<Vec<_>>>()?;
        let y = matmul_sets(&mut rows, &[us])?.remove(0);
        let xf = format!("{}.x.f32", rc.name);
        let y_file = format!("{}.y.f32", rc.name);
        files.push((PathBuf::from("oracles").join(&xf), f32_bytes(&x)));
        files.push((PathBuf::from("oracles").join(&y_file), f32_bytes(&y)));
        Ok(OracleCase {
            name: rc.name.clone(),
            rotation: rc.rotation.clone(),
            object,
            tokens: t,
            k,
            n,
            x_file: Some(xf),
            token_ids_file: None,
            y_file,
        })
    }

    /// `oracles/`: every required case of spec/dumps.json, then the manifest.
    fn oracle_files(&self, faults: DumpFaults, seed: u64, files: &mut DirFiles) -> Result<()> {
        let spec = dumps();
        let layers = super::artifact_layers(self.artifact);
        let variant = faults.oracle_variant();
        let mut cases = Vec::new();
        for rc in &spec.kernel_oracles.required_cases {
            let object = super::resolve_name(&self.profile, &layers, &rc.object, None)?;
            cases.push(if rc.rotation == "inverse" {
                self.inverse_case(rc, object, variant, files)?
            } else {
                self.forward_case(rc, object, variant, seed, files)?
            });
        }
        let m = OracleManifest {
            kind: "kernel_oracles".into(),
            format_version: spec.format_version,
            dtype: spec.dtype.clone(),
            layout: spec.layout.clone(),
            cases,
        };
        let manifest = serde_json::to_string_pretty(&m)
            .map_err(|e| err!(InternalInvariant, "manifest.json", "not serializable: {e}"))?
            + "\n";
        files.push((
            PathBuf::from("oracles").join(&spec.kernel_oracles.manifest),
            manifest.into_bytes(),
        ));
        Ok(())
    }
}

/// The reference embedding activations of `tokens` (default: spread over the vocabulary):
/// (tokens, hidden, h token-major), h = s ⊙ (H · z) in f64.
pub fn reference_embedding(
    a: &Artifact<'_>,
    tokens: Option<Vec<u64>>,
) -> Result<(Vec<u64>, usize, Vec<f64>)> {
    let r = Reference::new(a, tokens)?;
    let (k, h) = r.inverse_rows("text/token_embedding", &r.tokens, Variant::Documented)?;
    Ok((r.tokens, k, h))
}

/// Writes the engine-format embedding dump (spec/dumps.json `engine_embedding`) to `path`
/// atomically; `transposed` writes the layout bug (k*T + t) for negative controls.
pub fn write_engine_embedding(
    a: &Artifact<'_>,
    path: &Path,
    tokens: Option<Vec<u64>>,
    transposed: bool,
) -> Result<()> {
    use crate::error::{Error, ErrorClass};
    let (ids, k, h) = reference_embedding(a, tokens)?;
    let bytes = super::engine_dump::write(&ids, k, &h, transposed);
    crate::fsio::write_atomic(
        path,
        |w| std::io::Write::write_all(w, &bytes).map_err(crate::fsio::write_err("engine dump")),
        |tmp| {
            let b = std::fs::read(tmp).map_err(|e| Error::io(ErrorClass::IoWrite, tmp, e))?;
            super::engine_dump::parse(&b)
                .map(|_| ())
                .map_err(|e| Error::new(ErrorClass::IoWrite, "engine dump", e.to_string()))
        },
    )?;
    Ok(())
}

/// The files of `DIR/embedding` and `DIR/oracles` computed from the artifact (paths relative
/// to DIR).
pub fn reference_files(
    a: &Artifact<'_>,
    tokens: Option<Vec<u64>>,
    seed: u64,
    faults: DumpFaults,
) -> Result<DirFiles> {
    let r = Reference::new(a, tokens)?;
    let mut files = DirFiles::new();
    r.embedding_files(faults, &mut files)?;
    r.oracle_files(faults, seed, &mut files)?;
    Ok(files)
}

/// Writes `DIR/embedding` and `DIR/oracles` reference dumps computed from the artifact; `DIR`
/// is replaced as a whole, atomically.
pub fn write_reference(
    a: &Artifact<'_>,
    dir: &Path,
    tokens: Option<Vec<u64>>,
    seed: u64,
    faults: DumpFaults,
) -> Result<()> {
    let files = reference_files(a, tokens, seed, faults)?;
    write_dir_atomic(dir, &files)?;
    Ok(())
}
