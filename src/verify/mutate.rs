//! Broken artifacts and dumps for testing tools (and this verifier): each mutation in
//! spec/gates.json `mutations` makes ONE defect in an otherwise valid container (it re-opens);
//! the spec names the gates it must fail. Objects are streamed from the input map; only the
//! mutated object is rebuilt in memory (one object, never the file).

use super::dumps::{write_reference, DumpFaults};
use super::rows::{ArtifactRows, Blocks};
use super::{artifact_layers, profile_for_artifact, resolve_name, rules};
use crate::geometry::Plane;
use crate::ninfer::{plan, Artifact, Directory, PlannedObject};
use crate::spec::{gates, mapping, MutationSpec};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::path::Path;

/// Where each output object's bytes come from.
pub enum Source {
    /// The input object with this index.
    Copy(usize),
    Bytes(Vec<u8>),
}

pub fn spec(kind: &str) -> Result<&'static MutationSpec> {
    gates().mutation(kind).ok_or_else(|| {
        let known: Vec<&str> = gates().mutations.iter().map(|m| m.kind.as_str()).collect();
        anyhow!(
            "unknown mutation kind '{kind}' (known: {})",
            known.join(", ")
        )
    })
}

/// Rows of `name` rearranged: output row i = input row order[i], in every plane.
fn reorder_rows(a: &Artifact<'_>, name: &str, order: &[u64]) -> Result<Vec<u8>> {
    let v = a.row_split(name)?;
    let mut out = v.bytes.to_vec();
    for p in Plane::ALL {
        if v.geom.row_bytes(p) == 0 {
            continue;
        }
        for (i, &src) in order.iter().enumerate() {
            let d = v.geom.row_span(p, i as u64);
            out[d.start as usize..d.end as usize].copy_from_slice(v.row(p, src));
        }
    }
    Ok(out)
}

/// The directory and per-object sources of a mutated artifact.
pub fn plan_mutation(a: &Artifact<'_>, kind: &str) -> Result<(Directory, Vec<Source>)> {
    let m = spec(kind)?;
    if m.target != "artifact" {
        bail!("{kind} mutates dumps; use it with an output directory");
    }
    let p = profile_for_artifact(a)?;
    let object = m
        .object
        .as_ref()
        .map(|o| resolve_name(&p, &artifact_layers(a), o, None))
        .transpose()?;
    let mut identity = a.directory.identity.clone();
    let mut drop: Option<String> = None;
    let mut replace: Option<(String, Vec<u8>)> = None;
    let obj = || {
        object
            .clone()
            .ok_or_else(|| anyhow!("{kind}: spec names no object"))
    };
    match kind {
        "swap-two-rows" | "rotate-rows" | "duplicate-and-drop-row" | "perm48-on-rows" => {
            let name = obj()?;
            let n = a.object(&name)?.shape()[0];
            let order: Vec<u64> = match kind {
                "swap-two-rows" => (0..n).map(|i| if i < 2 { 1 - i } else { i }).collect(),
                "rotate-rows" => (0..n).map(|i| (i + 1) % n).collect(),
                "duplicate-and-drop-row" => (0..n).map(|i| if i == 1 { 0 } else { i }).collect(),
                _ => {
                    // Healthy row j holds source perm_row(j); the buggy packer put source
                    // perm48(i) at row i. Source s sits at healthy row inv_perm_row(s).
                    let half = p.v_heads * p.head_v_dim;
                    if n != 2 * half {
                        bail!("{name} has {n} rows, not 2 x {half}");
                    }
                    let hd = p.head_v_dim;
                    (0..n)
                        .map(|i| {
                            let (base, j) = (i / half * half, i % half);
                            let s = rules::perm48(&p, j);
                            base + rules::inv48(&p, s / hd) * hd + s % hd
                        })
                        .collect()
                }
            };
            replace = Some((name.clone(), reorder_rows(a, &name, &order)?));
        }
        "scales-at-offset-0" => {
            let name = obj()?;
            let v = a.row_split(&name)?;
            let len = v.bytes.len();
            let mut rows = ArtifactRows::new(
                v,
                Blocks::for_format(
                    super::artifact_format(a).ok_or_else(|| anyhow!("no ternary object"))?,
                )?,
            )?;
            let mut out = Vec::with_capacity(len);
            for r in 0..rows.n() {
                out.extend_from_slice(rows.ggml_row(r));
            }
            if out.len() > len {
                bail!(
                    "{name}: the block stream ({} bytes) does not fit the object ({len})",
                    out.len()
                );
            }
            out.resize(len, 0);
            replace = Some((name, out));
        }
        "wrong-template-identity" => identity.model_id = format!("not-{}", identity.model_id),
        "wrong-weights-id" => identity.weights_id = mapping().weights_id.template.clone(),
        "missing-borrowed-object" | "missing-layer-object" => {
            let name = obj()?;
            a.object(&name)?;
            drop = Some(name);
        }
        "flipped-sign" => {
            let name = obj()?;
            let mut b = a.object_bytes(a.object(&name)?).to_vec();
            let v = f32::from_le_bytes(b[0..4].try_into().expect("4"));
            b[0..4].copy_from_slice(&(-v).to_le_bytes());
            replace = Some((name, b));
        }
        "dense-one-ulp" => {
            let name = obj()?;
            let mut b = a.object_bytes(a.object(&name)?).to_vec();
            if b.len() < 4 {
                bail!("{name} holds no FP32 value");
            }
            let v = u32::from_le_bytes(b[0..4].try_into().expect("4"));
            // Away from zero by one ulp (bits + 1 keeps the sign; never reaches NaN for a finite log).
            b[0..4].copy_from_slice(&v.wrapping_add(1).to_le_bytes());
            replace = Some((name, b));
        }
        "wrong-hadamard-widths" => {
            let name = obj()?;
            let b = a.object_bytes(a.object(&name)?);
            let mut acc = 0i32;
            let mut out = Vec::new();
            for c in b.chunks_exact(4) {
                out.extend_from_slice(&acc.to_le_bytes());
                acc += i32::from_le_bytes(c.try_into().expect("4"));
            }
            replace = Some((name, out));
        }
        other => bail!("no implementation for mutation {other}"),
    }
    let mut objects = Vec::new();
    let mut sources = Vec::new();
    for (i, o) in a.directory.objects.iter().enumerate() {
        if drop.as_deref() == Some(o.name.as_str()) {
            continue;
        }
        objects.push(PlannedObject {
            name: o.name.clone(),
            body: o.body.clone(),
            resource_bytes: o.bytes,
        });
        sources.push(match &replace {
            Some((n, b)) if *n == o.name => Source::Bytes(b.clone()),
            _ => Source::Copy(i),
        });
    }
    let dir = plan(identity, objects)?;
    Ok((dir, sources))
}

fn fill(a: &Artifact<'_>, sources: &[Source], i: usize, w: &mut dyn Write) -> crate::Result<()> {
    let we = crate::fsio::write_err("mutated artifact");
    match &sources[i] {
        Source::Copy(j) => {
            for c in a.object_bytes(&a.directory.objects[*j]).chunks(8 << 20) {
                w.write_all(c).map_err(&we)?;
            }
        }
        Source::Bytes(b) => w.write_all(b).map_err(&we)?,
    }
    Ok(())
}

/// A mutated artifact in memory (small artifacts, tests).
pub fn mutate_bytes(input: &[u8], kind: &str) -> Result<Vec<u8>> {
    let a = Artifact::parse(input)?;
    let (dir, sources) = plan_mutation(&a, kind)?;
    let mut out = Vec::new();
    crate::ninfer::writer::write_to(&mut out, &dir, |i, _, w| fill(&a, &sources, i, w))?;
    Artifact::parse(&out).context("mutated artifact does not re-open")?;
    Ok(out)
}

/// A mutated artifact streamed to `output` (atomic; re-opened before it replaces the path).
pub fn mutate_file(input: &Path, kind: &str, output: &Path) -> Result<()> {
    let map = crate::fsio::map_file(input)?;
    let a = Artifact::parse(&map)?;
    let (dir, sources) = plan_mutation(&a, kind)?;
    crate::ninfer::writer::write_file(output, &dir, |i, _, w| fill(&a, &sources, i, w))?;
    Ok(())
}

/// Broken reference dumps (kinds with target "dumps") written under `dir`.
pub fn mutate_dumps(a: &Artifact<'_>, kind: &str, dir: &Path, seed: u64) -> Result<()> {
    let m = spec(kind)?;
    if m.target != "dumps" {
        bail!("{kind} mutates the artifact, not dumps");
    }
    let faults = match kind {
        "dump-row-major" => DumpFaults {
            embedding_row_major: true,
            ..Default::default()
        },
        "dump-signs-after-rotation" => DumpFaults {
            oracle_signs_after_rotation: true,
            ..Default::default()
        },
        "dump-unnormalized" => DumpFaults {
            unnormalized: true,
            ..Default::default()
        },
        other => bail!("no implementation for dump mutation {other}"),
    };
    write_reference(a, dir, None, seed, faults)
}
