//! Gate 1a: provenance — the artifact against the template it claims to be packed on.

use super::rows::fp64;
use super::{skip_naming, Ctx, Finding};
use crate::mapping::{is_borrowed, produced_objects_in};
use crate::ninfer::Artifact;
use crate::spec::mapping;
use anyhow::Result;

/// What disagrees between the artifact's and the template's objects (names, report order).
#[derive(Default)]
struct Disagreement {
    borrowed: u64,
    missing: Vec<String>,
    differing: Vec<String>,
    extra: Vec<String>,
    lacking: Vec<String>,
}

impl Disagreement {
    fn none(&self) -> bool {
        self.missing.is_empty()
            && self.differing.is_empty()
            && self.extra.is_empty()
            && self.lacking.is_empty()
    }
}

/// Compares every borrowed object by name (one hash lookup each: `Directory::find` is indexed).
fn compare_objects(ctx: &Ctx<'_>, t: &Artifact<'_>) -> Disagreement {
    let mut d = Disagreement::default();
    for o in t.directory.objects.iter().filter(|o| is_borrowed(&o.name)) {
        d.borrowed += 1;
        match ctx.artifact.directory.find(&o.name) {
            None => d.missing.push(o.name.clone()),
            Some(ao) => {
                let same = ao.body == o.body
                    && ao.bytes == o.bytes
                    && fp64(ctx.artifact.object_bytes(ao)) == fp64(t.object_bytes(o));
                if !same {
                    d.differing.push(o.name.clone());
                }
            }
        }
    }
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
    for (what, v) in [
        ("borrowed object missing from the artifact", &d.missing),
        ("borrowed object differs from the template", &d.differing),
        ("borrowed object not in the template", &d.extra),
        ("produced object not in the template", &d.lacking),
    ] {
        for n in v.iter().take(5) {
            f.line(format!("{what}: {n}"));
        }
    }
    let ok = tpl_kind_ok && model_ok && d.none();
    f.set_ok(ok);
    f.detail = if ok {
        format!(
            "identity matches the template; {borrowed}/{borrowed} borrowed objects byte-identical"
        )
    } else {
        "packed against a different template (identity or borrowed objects disagree)".into()
    };
    Ok(f)
}
