//! Broken artifacts and dumps for testing tools (and this verifier): each mutation in
//! spec/gates.json `mutations` makes ONE defect in an otherwise valid container (it re-opens);
//! the spec names the gates it must fail. Objects are streamed from the input map; only the
//! mutated object is rebuilt in memory (one object, never the file).

use super::dumps::{write_reference, DumpFaults};
use super::rows::{ArtifactRows, Blocks};
use super::{artifact_layers, profile_for_artifact, resolve_name, rules};
use crate::error::Result;
use crate::geometry::Plane;
use crate::ninfer::{plan, Artifact, Directory, PlannedObject};
use crate::spec::{gates, mapping, MutationKind, MutationSpec, MutationTarget};
use std::io::Write;
use std::path::Path;

/// Where each output object's bytes come from.
pub enum Source {
    /// The input object with this index.
    Copy(usize),
    /// New bytes.
    Bytes(Vec<u8>),
}

/// The spec row of mutation `kind`, or an error listing the known kinds.
pub fn spec(kind: &str) -> Result<&'static MutationSpec> {
    gates().mutation(kind).ok_or_else(|| {
        let known: Vec<&str> = kinds().collect();
        let hint = closest(kind, &known)
            .map(|k| format!("did you mean '{k}'? "))
            .unwrap_or_default();
        err!(
            VerifyMutation,
            "--kind",
            "unknown mutation kind '{kind}'; {hint}known: {}",
            known.join(", ")
        )
    })
}

/// Every mutation kind of spec/gates.json `mutations`, as `--kind` spells it.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    MutationKind::ALL.iter().map(|k| k.as_str())
}

/// The known name nearest to `got` by edit distance, when it is near (at most a third of
/// its length away): the "did you mean" of an unknown name.
pub fn closest<'k>(got: &str, known: &[&'k str]) -> Option<&'k str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    };
    known
        .iter()
        .map(|k| (distance(got, k), *k))
        .min()
        .filter(|(d, k)| *d <= k.chars().count().max(3) / 3)
        .map(|(_, k)| k)
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

/// What one artifact mutation changes.
enum Edit {
    /// The object's bytes replaced.
    Replace(String, Vec<u8>),
    /// The object removed.
    Drop(String),
    /// The container identity changed.
    Identity(crate::ninfer::Identity),
}

/// The directory and per-object sources of a mutated artifact.
pub fn plan_mutation(a: &Artifact<'_>, kind: &str) -> Result<(Directory, Vec<Source>)> {
    let m = spec(kind)?;
    if m.target != MutationTarget::Artifact {
        fail!(
            VerifyMutation,
            "--kind",
            "{kind} mutates dumps; use it with an output directory"
        );
    }
    let p = profile_for_artifact(a)?;
    let object = m
        .object
        .as_ref()
        .map(|o| {
            // A reduced or minimal artifact may lack the layer kind the spec names.
            resolve_name(&p, &artifact_layers(a), o, None)
                .map_err(|e| super::within(e, &format!("--kind {kind} edits {o}")))
        })
        .transpose()?
        .ok_or_else(|| err!(SpecInvalid, "mutations", "{kind}: spec names no object"));
    let edit = edit_for(a, &p, m.kind, object)?;
    let mut identity = a.directory.identity.clone();
    let (mut drop, mut replace) = (None, None);
    match edit {
        Edit::Replace(name, bytes) => replace = Some((name, bytes)),
        Edit::Drop(name) => drop = Some(name),
        Edit::Identity(id) => identity = id,
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

/// The edit of `kind`; `object` is the spec's object resolved (an error when it names none).
fn edit_for(
    a: &Artifact<'_>,
    p: &crate::spec::ModelProfile,
    kind: MutationKind,
    object: Result<String>,
) -> Result<Edit> {
    use MutationKind as K;
    let mut identity = a.directory.identity.clone();
    Ok(match kind {
        K::SwapTwoRows | K::RotateRows | K::DuplicateAndDropRow | K::Perm48OnRows => {
            let name = object?;
            let n = a.object(&name)?.shape()[0];
            let order = row_order(p, kind, &name, n)?;
            Edit::Replace(name.clone(), reorder_rows(a, &name, &order)?)
        }
        K::ScalesAtOffset0 => {
            let name = object?;
            Edit::Replace(name.clone(), interleaved_blocks(a, &name)?)
        }
        K::WrongTemplateIdentity => {
            identity.model_id = format!("not-{}", identity.model_id);
            Edit::Identity(identity)
        }
        K::WrongWeightsId => {
            identity.weights_id = mapping().weights_id.template.clone();
            Edit::Identity(identity)
        }
        K::MissingBorrowedObject | K::MissingLayerObject => {
            let name = object?;
            a.object(&name)?;
            Edit::Drop(name)
        }
        K::FlippedSign => {
            let name = object?;
            let mut b = a.object_bytes(a.object(&name)?).to_vec();
            let Some(first) = b.first_chunk_mut::<4>() else {
                fail!(VerifyMutation, &name, "holds no FP32 value");
            };
            let v = f32::from_le_bytes(*first);
            *first = (-v).to_le_bytes();
            Edit::Replace(name, b)
        }
        K::DenseOneUlp => {
            let name = object?;
            let mut b = a.object_bytes(a.object(&name)?).to_vec();
            let Some(first) = b.first_chunk_mut::<4>() else {
                fail!(VerifyMutation, &name, "holds no FP32 value");
            };
            let v = u32::from_le_bytes(*first);
            // Away from zero by one ulp (bits + 1 keeps the sign; never reaches NaN for a finite log).
            *first = v.wrapping_add(1).to_le_bytes();
            Edit::Replace(name, b)
        }
        K::WrongHadamardWidths => {
            let name = object?;
            let b = a.object_bytes(a.object(&name)?);
            // The widths stored as exclusive prefix sums (wrapping: a hostile table may overflow).
            let mut acc = 0i32;
            let mut out = Vec::new();
            for c in b.as_chunks::<4>().0 {
                out.extend_from_slice(&acc.to_le_bytes());
                acc = acc.wrapping_add(i32::from_le_bytes(*c));
            }
            Edit::Replace(name, out)
        }
        K::DumpRowMajor | K::DumpSignsAfterRotation | K::DumpUnnormalized => {
            fail!(
                VerifyMutation,
                "--kind",
                "{kind} mutates dumps, not the artifact"
            )
        }
    })
}

/// Output row i = input row order[i] for the row mutations of an `n`-row object.
fn row_order(
    p: &crate::spec::ModelProfile,
    kind: MutationKind,
    name: &str,
    n: u64,
) -> Result<Vec<u64>> {
    Ok(match kind {
        MutationKind::SwapTwoRows => (0..n).map(|i| if i < 2 { 1 - i } else { i }).collect(),
        MutationKind::RotateRows => (0..n).map(|i| (i + 1) % n).collect(),
        MutationKind::DuplicateAndDropRow => (0..n).map(|i| if i == 1 { 0 } else { i }).collect(),
        _ => {
            // Healthy row j holds source perm_row(j); the buggy packer put source
            // perm48(i) at row i. Source s sits at healthy row inv_perm_row(s).
            let half = p.v_heads * p.head_v_dim;
            if n != 2 * half {
                fail!(VerifyMutation, name, "has {n} rows, not 2 x {half}");
            }
            let hd = p.head_v_dim;
            (0..n)
                .map(|i| {
                    let (base, j) = (i / half * half, i % half);
                    let s = rules::perm48(p, j);
                    base + rules::inv48(p, s / hd) * hd + s % hd
                })
                .collect()
        }
    })
}

/// The object's rows rewritten as interleaved ggml blocks, zero-padded to its size (the
/// payload an interleaved-block packer would write).
fn interleaved_blocks(a: &Artifact<'_>, name: &str) -> Result<Vec<u8>> {
    let v = a.row_split(name)?;
    let len = v.bytes.len();
    let format = super::artifact_format(a).ok_or_else(super::no_ternary)?;
    let mut rows = ArtifactRows::new(v, Blocks::for_format(format)?)?;
    let mut out = Vec::with_capacity(len);
    for r in 0..rows.n() {
        out.extend_from_slice(rows.ggml_row(r));
    }
    if out.len() > len {
        fail!(
            VerifyMutation,
            name,
            "the block stream ({} bytes) does not fit the object ({len})",
            out.len()
        );
    }
    out.resize(len, 0);
    Ok(out)
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
    Artifact::parse(&out).map_err(|e| super::within(e, "mutated artifact (does not re-open)"))?;
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
    let no_fault = DumpFaults::default();
    let faults = match m.kind {
        MutationKind::DumpRowMajor => DumpFaults {
            embedding_row_major: true,
            ..no_fault
        },
        MutationKind::DumpSignsAfterRotation => DumpFaults {
            oracle_signs_after_rotation: true,
            ..no_fault
        },
        MutationKind::DumpUnnormalized => DumpFaults {
            unnormalized: true,
            ..no_fault
        },
        _ => fail!(
            VerifyMutation,
            "--kind",
            "{kind} mutates the artifact, not dumps"
        ),
    };
    write_reference(a, dir, None, seed, faults)
}
