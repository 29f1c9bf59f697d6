//! Gate 1b: inspect — the container re-opened (magic, directory, ranges: `Artifact::parse`), the
//! identity, and every object the mapping produces present with the mapped format/layout/shape.

use super::findings::Failure;
use super::{Ctx, Finding};
use crate::error::Result;
use crate::mapping::{is_borrowed, produced_objects_in};
use crate::spec::{mapping, LayoutId, Produce};

/// One expected object: (name, shape, format, layout).
type Expected = (String, Vec<u64>, String, LayoutId);

/// Every object the mapping produces for the source's layers plus the sign objects, as
/// (name, shape, format, layout).
fn expected_objects(ctx: &Ctx<'_>) -> Result<Vec<Expected>> {
    let mut want: Vec<Expected> = Vec::new();
    for o in produced_objects_in(&ctx.profile, &ctx.layers) {
        if ctx.is_out_of_scope(&o.name) {
            continue;
        }
        let Some(rule) = o.rule.as_ref() else {
            fail!(
                InternalInvariant,
                &o.name,
                "a produced object without its mapping rule"
            );
        };
        let (fmt, layout) = match &rule.produce {
            Produce::TernaryRows { .. } => (ctx.format.name.clone(), LayoutId::RowSplitK128V1),
            Produce::HeadVector { .. } => ("FP32".to_string(), LayoutId::ContiguousLeV1),
            _ => ("BF16".to_string(), LayoutId::ContiguousLeV1),
        };
        want.push((o.name, o.shape, fmt, layout));
    }
    for s in &mapping().sign_objects {
        want.push((
            s.target.clone(),
            ctx.profile.dims(&s.shape),
            s.format.clone(),
            LayoutId::ContiguousLeV1,
        ));
    }
    Ok(want)
}

/// The identity's problems: an empty model_id or weights_id, a weights_id that is not the
/// folded ternary one (trap T-13), or no objects at all.
fn identity_problems(a: &crate::ninfer::Artifact<'_>) -> Vec<String> {
    let m = mapping();
    let id = &a.directory.identity;
    let mut problems: Vec<String> = Vec::new();
    if id.model_id.is_empty() || id.weights_id.is_empty() {
        problems.push("identity has an empty model_id or weights_id".into());
    }
    if id.weights_id != m.weights_id.output {
        problems.push(format!(
            "weights_id is '{}', a folded ternary artifact says '{}' (trap T-13)",
            id.weights_id, m.weights_id.output
        ));
    }
    if a.directory.objects.is_empty() {
        problems.push("no objects".into());
    }
    problems
}

/// Counts of the expected objects' check.
#[derive(Default)]
struct ObjectCounts {
    expected: u64,
    absent: u64,
    wrong: u64,
    ternary: u64,
}

/// Checks that every expected object is present with its mapped format, layout and shape;
/// each that is not adds a problem and a located failure.
fn check_objects(
    ctx: &Ctx<'_>,
    f: &mut Finding,
    problems: &mut Vec<String>,
) -> Result<ObjectCounts> {
    let a = ctx.artifact;
    let mut n = ObjectCounts::default();
    for (name, shape, fmt, layout) in &expected_objects(ctx)? {
        n.expected += 1;
        let Some(o) = a.directory.find(name) else {
            n.absent += 1;
            problems.push(format!("{name} is absent"));
            f.failure(Failure {
                check: "inspect.object_absent".into(),
                object: Some(name.clone()),
                ..Failure::new(format!("{name} is absent"))
            });
            continue;
        };
        let fl = o.format_layout();
        if fl != Some((fmt.as_str(), layout.as_str())) || o.shape() != shape.as_slice() {
            n.wrong += 1;
            let (got, want) = (
                format!("{:?} {:?}", fl, o.shape()),
                format!("{fmt} {layout} {shape:?}"),
            );
            problems.push(format!("{name}: {got}, mapping says {want}"));
            f.failure(Failure {
                check: "inspect.object_mapping".into(),
                object: Some(name.clone()),
                expected: Some(want.into()),
                observed: Some(got.clone().into()),
                ..Failure::new(format!(
                    "{name}: {got}, mapping says {fmt} {layout} {shape:?}"
                ))
            });
        } else if *layout == LayoutId::RowSplitK128V1 {
            n.ternary += 1;
        }
    }
    Ok(n)
}

/// `--minimal`: produced objects the artifact holds that a minimal artifact does not (other
/// layers, globals). They would go unjudged, so each is a problem. Returns their count.
fn beyond_minimal(ctx: &Ctx<'_>, f: &mut Finding, problems: &mut Vec<String>) -> usize {
    let Some(l) = ctx.minimal else { return 0 };
    let mut n = 0;
    for o in &ctx.artifact.directory.objects {
        if is_borrowed(&o.name) || !ctx.is_out_of_scope(&o.name) {
            continue;
        }
        n += 1;
        let p = format!(
            "{} is present, but a minimal artifact holds layer {l} and the sign table only (verify it without --minimal)",
            o.name
        );
        f.failure(Failure {
            check: "inspect.beyond_minimal".into(),
            object: Some(o.name.clone()),
            ..Failure::new(p.clone())
        });
        problems.push(p);
    }
    n
}

/// Without `--minimal`: when the objects fall short and the artifact holds exactly the layer
/// `pack --minimal` would pick, a line saying so (the report still fails).
fn minimal_hint(ctx: &Ctx<'_>, problems: &[String]) -> Option<String> {
    if ctx.minimal.is_some() || problems.is_empty() {
        return None;
    }
    let l = crate::mapping::minimal_layer(&ctx.profile, &ctx.layers)?;
    (super::artifact_layers(ctx.artifact) == [l]).then(|| {
        format!("the artifact holds layer {l} only, as a pack --minimal artifact does: verify it with --minimal")
    })
}

/// Runs the gate.
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let mut f = Finding::new("inspect");
    let a = ctx.artifact;
    let id = &a.directory.identity;
    let mut problems = identity_problems(a);
    // The identity problems, located (the object problems below add their own).
    for p in &problems {
        f.failure(Failure {
            check: "inspect.identity".into(),
            object: Some("identity".into()),
            ..Failure::new(p.clone())
        });
    }
    let n = check_objects(ctx, &mut f, &mut problems)?;
    let unexpected = beyond_minimal(ctx, &mut f, &mut problems);
    f.num("objects", a.directory.objects.len())
        .num("payload_offset", a.payload_offset)
        .num("payload_bytes", a.payload_bytes())
        .num("expected_objects", n.expected)
        .num("absent", n.absent)
        .num("mismatched", n.wrong)
        .num("ternary_objects", n.ternary);
    if ctx.minimal.is_some() {
        f.num("beyond_minimal", unexpected);
    }
    f.line(format!(
        "identity: model_id={} weights_id={}",
        id.model_id, id.weights_id
    ));
    if !ctx.out_of_scope.is_empty() {
        f.line(format!(
            "not expected (the reduced source holds no tensor they are made of): {}",
            ctx.out_of_scope.join(", ")
        ));
    }
    if let Some(l) = ctx.minimal {
        let globals: Vec<String> = produced_objects_in(&ctx.profile, &ctx.layers)
            .into_iter()
            .filter(|o| o.layer.is_none() && !ctx.out_of_scope.contains(&o.name))
            .map(|o| o.name)
            .collect();
        f.line(format!(
            "minimal artifact: layer {l} and the sign table expected; not expected (a minimal artifact holds no global object): {}",
            globals.join(", ")
        ));
    }
    if let Some(hint) = minimal_hint(ctx, &problems) {
        f.line(hint);
    }
    for p in problems.iter().take(8) {
        f.line(p.clone());
    }
    if problems.len() > 8 {
        f.line(format!("... {} more", problems.len() - 8));
    }
    f.set_ok(problems.is_empty());
    f.detail = if problems.is_empty() {
        format!(
            "re-opens; {} objects; all {} produced + sign objects present as mapped",
            a.directory.objects.len(),
            n.expected
        )
    } else {
        format!("{} problem(s); first: {}", problems.len(), problems[0])
    };
    Ok(f)
}
