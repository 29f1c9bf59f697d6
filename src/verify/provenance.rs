//! Gate 1a: provenance — the artifact against the template it claims to be packed on.

use super::findings::Failure;
use super::rows::BYTES_READ;
use super::{skip_naming, Ctx, Finding};
use crate::error::Result;
use crate::fsio::bulk::{self, Lane};
use crate::mapping::{is_borrowed, produced_objects_in};
use crate::ninfer::{Artifact, Identity};
use crate::pool;
use crate::spec::mapping;
use std::ops::ControlFlow;

/// What disagrees between the artifact's and the template's objects (names, report order).
#[derive(Default)]
struct Disagreement {
    borrowed: u64,
    missing: Vec<String>,
    differing: Vec<String>,
    extra: Vec<String>,
    lacking: Vec<String>,
    /// Borrowed namespaces the artifact leaves out whole (`pack --skip`), with their counts:
    /// a filter, not a disagreement. One object missing of a namespace kept is one.
    left_out: Vec<(String, usize)>,
    /// Borrowed objects a minimal artifact does not keep (outside the frontend), per
    /// namespace: not expected, so not missing.
    minimal_left_out: Vec<(String, usize)>,
}

impl Disagreement {
    fn none(&self) -> bool {
        self.missing.is_empty()
            && self.differing.is_empty()
            && self.extra.is_empty()
            && self.lacking.is_empty()
    }

    /// The four name lists in report order, each with its failure check and what it says.
    fn kinds(&self) -> [(&'static str, &'static str, &Vec<String>); 4] {
        [
            (
                "provenance.borrowed_missing",
                "borrowed object missing from the artifact",
                &self.missing,
            ),
            (
                "provenance.borrowed_differs",
                "borrowed object differs from the template",
                &self.differing,
            ),
            (
                "provenance.borrowed_extra",
                "borrowed object not in the template",
                &self.extra,
            ),
            (
                "provenance.produced_extra",
                "produced object not in the template",
                &self.lacking,
            ),
        ]
    }
}

/// Bytes compared per work item of [`bytes_equal`].
const CHUNK: usize = 1 << 20;

/// Whether `a` and `b` are the same bytes (compared exactly, in 1 MiB chunks split over the
/// verifier's thread budget); both are counted in [`BYTES_READ`].
fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    BYTES_READ.fetch_add(2 * a.len() as u64, std::sync::atomic::Ordering::Relaxed);
    let lanes = [Lane { bytes: a, unit: 1 }, Lane { bytes: b, unit: 1 }];
    if bulk::cold(&lanes) {
        // Off disk: compared block by block as the reads arrive (fsio::bulk), stopping at
        // the first difference.
        return bulk::for_each_block(&lanes, |_, s| {
            if s[0] == s[1] {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        })
        .is_none();
    }
    let chunks = a.len().div_ceil(CHUNK) as u64;
    let parts = pool::ranges_with(
        pool::global(),
        std::thread::Builder::new,
        0..chunks,
        pool::threads(),
        16,
        |r| {
            let (lo, hi) = (
                r.start as usize * CHUNK,
                (r.end as usize * CHUNK).min(a.len()),
            );
            vec![lo >= hi || a[lo..hi] == b[lo..hi]]
        },
    );
    parts.into_iter().all(|same| same)
}

/// Compares every borrowed object by name (one hash lookup each: `Directory::find` is indexed)
/// and byte for byte with the template's.
fn compare_objects(ctx: &Ctx<'_>, t: &Artifact<'_>) -> Disagreement {
    let mut d = Disagreement::default();
    for o in t.directory.objects.iter().filter(|o| is_borrowed(&o.name)) {
        d.borrowed += 1;
        match ctx.artifact.directory.find(&o.name) {
            None => d.missing.push(o.name.clone()),
            Some(ao) => {
                let (a, b) = (ctx.artifact.object_bytes(ao), t.object_bytes(o));
                let same = ao.body == o.body && ao.bytes == o.bytes && bytes_equal(a, b);
                if !same {
                    d.differing.push(o.name.clone());
                }
            }
        }
    }
    if ctx.minimal.is_some() {
        // A minimal artifact keeps the frontend only (the rule `pack --minimal` follows).
        d.minimal_left_out = count_per_namespace(
            d.missing
                .iter()
                .filter(|n| !crate::mapping::minimal_keeps_borrowed(n)),
        );
        d.missing
            .retain(|n| crate::mapping::minimal_keeps_borrowed(n));
    }
    d.left_out = whole_namespaces_left_out(t, &mut d.missing);
    d.extra = ctx
        .artifact
        .directory
        .objects
        .iter()
        .filter(|o| is_borrowed(&o.name) && t.directory.find(&o.name).is_none())
        .map(|o| o.name.clone())
        .collect();
    d.lacking = produced_objects_in(&ctx.profile, &ctx.layers)
        .into_iter()
        .filter(|o| t.directory.find(&o.name).is_none())
        .map(|o| o.name)
        .collect();
    d
}

/// (namespace, count) of `names`, by namespace.
fn count_per_namespace<'n>(names: impl Iterator<Item = &'n String>) -> Vec<(String, usize)> {
    let mut by: std::collections::BTreeMap<String, usize> = Default::default();
    for n in names {
        *by.entry(crate::mapping::namespace(n).to_string())
            .or_default() += 1;
    }
    by.into_iter().collect()
}

/// Takes out of `missing` every borrowed namespace (outside the produced ones) whose template
/// objects are all missing from the artifact, and returns those namespaces with their counts.
fn whole_namespaces_left_out(t: &Artifact<'_>, missing: &mut Vec<String>) -> Vec<(String, usize)> {
    use crate::mapping::{is_produced_namespace, namespace};
    let mut in_template: std::collections::BTreeMap<&str, usize> = Default::default();
    for o in t.directory.objects.iter().filter(|o| is_borrowed(&o.name)) {
        *in_template.entry(namespace(&o.name)).or_default() += 1;
    }
    let mut gone: std::collections::BTreeMap<String, usize> = Default::default();
    for n in missing.iter() {
        *gone.entry(namespace(n).to_string()).or_default() += 1;
    }
    let whole: Vec<(String, usize)> = gone
        .into_iter()
        .filter(|(ns, c)| !is_produced_namespace(ns) && in_template.get(ns.as_str()) == Some(c))
        .collect();
    missing.retain(|n| !whole.iter().any(|(ns, _)| ns == namespace(n)));
    whole
}

/// The failures of an identity that is not the template's: a different model_id, or a
/// template whose weights_id is not a groupwise-int one.
fn identity_failures(f: &mut Finding, ai: &Identity, ti: &Identity) {
    let m = mapping();
    if ai.model_id != ti.model_id {
        f.failure(Failure {
            check: "provenance.model_id".into(),
            object: Some("identity.model_id".into()),
            expected: Some(ti.model_id.clone().into()),
            observed: Some(ai.model_id.clone().into()),
            ..Failure::new(format!(
                "identity.model_id '{}' is not the template's '{}'",
                ai.model_id, ti.model_id
            ))
        });
    }
    if ti.weights_id != m.weights_id.template {
        f.failure(Failure {
            check: "provenance.template_kind".into(),
            object: Some("template identity.weights_id".into()),
            expected: Some(m.weights_id.template.clone().into()),
            observed: Some(ti.weights_id.clone().into()),
            ..Failure::new(format!(
                "the template's weights_id '{}' is not '{}' (not a groupwise-int template)",
                ti.weights_id, m.weights_id.template
            ))
        });
    }
}

/// One line per namespace left out whole (a `pack --skip` filter, or a minimal artifact).
fn left_out_lines(f: &mut Finding, d: &Disagreement) {
    for (ns, count) in &d.left_out {
        f.line(format!(
            "namespace {ns}/ left out whole ({count} template objects; a pack --skip filter)"
        ));
    }
    for (ns, count) in &d.minimal_left_out {
        f.line(format!(
            "{ns}/: {count} borrowed template objects not expected (a minimal artifact keeps {}/ only)",
            crate::mapping::MINIMAL_BORROWED_NAMESPACE
        ));
    }
}

/// The gate's one-line detail.
fn summary(ok: bool, minimal: bool, d: &Disagreement) -> String {
    let borrowed = d.borrowed;
    let kept = borrowed
        - d.left_out
            .iter()
            .chain(&d.minimal_left_out)
            .map(|(_, c)| *c as u64)
            .sum::<u64>();
    if ok && minimal {
        format!(
            "identity matches the template; {kept}/{kept} borrowed objects kept byte-identical (a minimal artifact keeps {}/ only)",
            crate::mapping::MINIMAL_BORROWED_NAMESPACE
        )
    } else if ok && d.left_out.is_empty() {
        format!(
            "identity matches the template; {borrowed}/{borrowed} borrowed objects byte-identical"
        )
    } else if ok {
        format!(
            "identity matches the template; {kept}/{kept} borrowed objects kept byte-identical; left out whole: {}",
            d.left_out.iter().map(|(n, c)| format!("{n} ({c})")).collect::<Vec<_>>().join(", ")
        )
    } else {
        "packed against a different template (identity or borrowed objects disagree)".into()
    }
}

/// Runs the gate (SKIP without `--template`).
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let Some(t) = ctx.template else {
        return Ok(skip_naming("provenance"));
    };
    let mut f = Finding::new("provenance");
    let m = mapping();
    let (ai, ti) = (&ctx.artifact.directory.identity, &t.directory.identity);
    let tpl_kind_ok = ti.weights_id == m.weights_id.template;
    let model_ok = ai.model_id == ti.model_id;
    let d = compare_objects(ctx, t);
    let borrowed = d.borrowed;
    f.num("borrowed", borrowed)
        .num("borrowed_missing", d.missing.len())
        .num("borrowed_differing", d.differing.len())
        .num("borrowed_not_in_template", d.extra.len())
        .num("produced_not_in_template", d.lacking.len());
    f.line(format!(
        "identity.model_id: artifact '{}' vs template '{}': {}",
        ai.model_id,
        ti.model_id,
        if model_ok { "equal" } else { "DIFFERENT" }
    ));
    f.line(format!(
        "template weights_id '{}' ({})",
        ti.weights_id,
        if tpl_kind_ok {
            "a groupwise-int template"
        } else {
            "NOT a groupwise-int template"
        }
    ));
    left_out_lines(&mut f, &d);
    for (_, what, v) in d.kinds() {
        for n in v.iter().take(5) {
            f.line(format!("{what}: {n}"));
        }
    }
    identity_failures(&mut f, ai, ti);
    for (check, what, v) in d.kinds() {
        for n in v {
            f.failure(Failure {
                check: check.into(),
                object: Some(n.clone()),
                ..Failure::new(format!("{what}: {n}"))
            });
        }
    }
    let ok = tpl_kind_ok && model_ok && d.none();
    f.set_ok(ok);
    f.detail = summary(ok, ctx.minimal.is_some(), &d);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::bytes_equal;

    #[test]
    fn bytes_equal_is_exact_in_every_chunk() {
        let a: Vec<u8> = (0..(40usize << 20) + 7)
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        assert!(bytes_equal(&a, &a.clone()));
        assert!(bytes_equal(&[], &[]));
        // Negative controls: one byte flipped anywhere (first, a chunk edge, the tail) or a
        // length difference must make the objects differ.
        for at in [0, (1 << 20) - 1, 1 << 20, 17 << 20, a.len() - 1] {
            let mut b = a.clone();
            b[at] ^= 0x40;
            assert!(!bytes_equal(&a, &b), "flip at {at}");
        }
        assert!(!bytes_equal(&a, &a[..a.len() - 1]));
    }
}
