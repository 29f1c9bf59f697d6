//! Gate 6: embedding — an activation dump of the embedding lookup against
//! `h = s ⊙ (H · decode(token_embedding[id]))` in f64. Needs T >= 2 distinct tokens (a T = 1
//! dump cannot see a layout bug). Controls: the same dump read row-major, and the signs applied
//! before H, must both fail to match — a control that matches fails the gate.

use super::dumps::{self, inverse, rel_l2, Rotation, Variant};
use super::findings::Failure;
use super::{Ctx, DumpFormat, Finding};
use crate::error::Result;
use crate::spec::gates;
use std::path::Path;

/// Which dump format `--dump` holds: `--dump-format` when given, else a file is the engine's
/// embedding dump and a directory is this suite's native format (manifest.json + arrays).
pub fn dump_format(path: &Path, named: Option<DumpFormat>) -> Result<DumpFormat> {
    match named {
        Some(DumpFormat::Harness) => fail!(
            VerifyInput,
            "--dump-format",
            "--dump-format harness is a kernel-oracle format (rotation harness), not an embedding dump"
        ),
        Some(f) => Ok(f),
        None if path.is_file() => Ok(DumpFormat::Engine),
        None => Ok(DumpFormat::Native),
    }
}

/// The dump's tokens and activations, `h` token-major in both formats (`h[t*K + k]`).
fn read_dump(
    dir: &std::path::Path,
    format: DumpFormat,
    object: &str,
    k: usize,
) -> Result<dumps::EmbeddingArrays> {
    if format != DumpFormat::Engine {
        return dumps::parse_embedding(dir, object, k);
    }
    let d = super::engine_dump::parse(&crate::fsio::read_input(dir)?)?;
    if d.hidden != k {
        return Err(crate::error::Error::at(
            crate::error::ErrorClass::DumpFormat,
            4,
            "engine embedding dump header hidden",
            format!("engine dump hidden = {}, {object} has k = {k}", d.hidden),
        ));
    }
    Ok(dumps::EmbeddingArrays {
        tokens: d.tokens,
        ids: d.ids,
        h: d.h,
    })
}

/// Worst rel L2 over the checked tokens: of the documented math, of the row-major read
/// control, and of the signs-before-rotation control.
#[derive(Default)]
struct Worst {
    documented: f64,
    /// The token id of the worst documented match.
    worst_token: i64,
    row_major: f64,
    signs_before: f64,
}

/// Compares the first `used` tokens of the dump with the reference, one line per token.
fn score(
    f: &mut Finding,
    rows: &mut super::rows::ArtifactRows<'_>,
    rot: &Rotation,
    d: &dumps::EmbeddingArrays,
    k: usize,
    used: usize,
) -> Result<Worst> {
    let (t, h) = (d.tokens, &d.h);
    let mut worst = Worst::default();
    for ti in 0..used {
        let z = rows.decode(d.ids[ti] as u64)?;
        let want = inverse(rot, &z, Variant::Documented)?;
        let tm: Vec<f64> = h[ti * k..(ti + 1) * k].to_vec();
        let rm: Vec<f64> = (0..k).map(|kk| h[kk * t + ti]).collect();
        let sb = inverse(rot, &z, Variant::SignsAfterRotation)?;
        let r = rel_l2(&tm, &want);
        if r > worst.documented || ti == 0 {
            worst.worst_token = d.ids[ti];
        }
        worst.documented = worst.documented.max(r);
        worst.row_major = worst.row_major.max(rel_l2(&rm, &want));
        worst.signs_before = worst.signs_before.max(rel_l2(&tm, &sb));
        f.line(format!(
            "token {}: rel L2 {}",
            d.ids[ti],
            super::findings::round6(r)
        ));
    }
    Ok(worst)
}

/// Writes the two negative-control lines; returns whether each control was rejected (its
/// worst token is beyond `max`), as it must be.
fn control_lines(f: &mut Finding, w: &Worst, max: f64) -> (bool, bool) {
    let rm_caught = w.row_major > max;
    let sb_caught = w.signs_before > max;
    f.line(format!(
        "negative control row_major_read: worst rel L2 {} -> {}",
        super::findings::round6(w.row_major),
        if rm_caught {
            "rejected"
        } else {
            "MATCHES (the dump is row-major, or the check is blind)"
        }
    ));
    f.line(format!(
        "negative control signs_before_rotation: worst rel L2 {} -> {}",
        super::findings::round6(w.signs_before),
        if sb_caught { "rejected" } else { "MATCHES" }
    ));
    (rm_caught, sb_caught)
}

/// What the gate saw, for its one-line detail.
struct Outcome<'p> {
    ok: bool,
    ok_doc: bool,
    rm_caught: bool,
    worst: f64,
    max: f64,
    problems: &'p [String],
}

/// The gate's detail: the match, or the first reason it failed.
fn detail(o: &Outcome<'_>, format: DumpFormat, used: usize, t: usize) -> String {
    if o.ok {
        let what = if format == DumpFormat::Engine {
            "engine bf16 dump, token-major"
        } else {
            "token-major"
        };
        format!("h = s ⊙ (H · z) matches over {used} tokens ({what}, T = {t})")
    } else if !o.rm_caught && !o.ok_doc {
        "the dump is row-major (element (k,t) at k*T+t); the format is token-major (t*K+k)".into()
    } else if !o.ok_doc {
        format!(
            "embedding reconstruction differs: worst rel L2 {} > {}",
            super::findings::round6(o.worst),
            o.max
        )
    } else if !o.problems.is_empty() {
        o.problems[0].clone()
    } else {
        "a negative control matched: the dump cannot tell the documented math from a wrong one"
            .into()
    }
}

/// The dump's distinct-token count and its token problems (too few tokens, or too few distinct
/// ones, to tell token-major from row-major); a token id outside the object's `rows` rows is
/// an error.
fn check_tokens(d: &dumps::EmbeddingArrays, rows: u64) -> Result<(usize, Vec<String>)> {
    let th = &gates().thresholds;
    let (t, ids) = (d.tokens, &d.ids);
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    let mut problems = Vec::new();
    if t < th.embedding_min_tokens || distinct.len() < th.embedding_min_tokens {
        problems.push(format!(
            "T = {t} with {} distinct token(s): need T >= {} distinct tokens (with T = 1 token-major and row-major coincide)",
            distinct.len(),
            th.embedding_min_tokens
        ));
    }
    if let Some(bad) = ids.iter().find(|&&i| i < 0 || i as u64 >= rows) {
        fail!(
            DumpFormat,
            "token ids",
            "token id {bad} outside [0, {rows})"
        );
    }
    Ok((distinct.len(), problems))
}

/// The failures of a dump that does not match the documented math (worst token beyond
/// `max`): first the layout one when the row-major control matches instead, then the worst
/// token's.
fn mismatch_failures(f: &mut Finding, object: &str, w: &Worst, max: f64, rm_caught: bool) {
    if !rm_caught {
        f.failure(Failure {
            check: "embedding.layout".into(),
            object: Some(object.to_string()),
            expected: Some("token-major (t*K+k)".into()),
            observed: Some("row-major (k*T+t)".into()),
            ..Failure::new(
                "the dump is row-major (element (k,t) at k*T+t); the format is token-major (t*K+k)",
            )
        });
    }
    f.failure(Failure {
        check: "embedding.token".into(),
        object: Some(object.to_string()),
        row: u64::try_from(w.worst_token).ok(),
        expected: Some(serde_json::json!({ "rel_l2_max": max })),
        observed: Some(serde_json::json!({ "rel_l2": super::findings::round6(w.documented) })),
        ..Failure::new(format!(
            "token {} (row {} of {object}): rel L2 {} > {max}",
            w.worst_token,
            w.worst_token,
            super::findings::round6(w.documented)
        ))
    });
}

/// Runs the gate (SKIP without `--dump`).
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let Some(dir) = ctx.opts.dump else {
        return Ok(super::skip_naming("embedding"));
    };
    let object = ctx.name(&gates().embedding.object, None)?;
    if let Some(why) = ctx.why_out_of_scope(&object) {
        return Ok(Finding::skip("embedding", format!("not run: {why}")));
    }
    let th = &gates().thresholds;
    let format = dump_format(dir, ctx.opts.dump_format)?;
    let mut f = Finding::new("embedding");
    let mut rows = ctx.artifact_rows(&object)?;
    let k = rows.view.geom.k as usize;
    let dump = read_dump(dir, format, &object, k)?;
    let t = dump.tokens;
    let (distinct, problems) = check_tokens(&dump, rows.n())?;
    let rot = Rotation::from_artifact(ctx.artifact, &ctx.profile)?;
    let used = t.min(th.embedding_max_tokens);
    let w = score(&mut f, &mut rows, &rot, &dump, k, used)?;
    // A control "matches" when every checked token agrees within the threshold (its worst
    // token is within it).
    let max = th.embedding_rel_l2_max;
    let ok_doc = w.documented <= max;
    let (rm_caught, sb_caught) = control_lines(&mut f, &w, max);
    f.num("tokens", t)
        .num("tokens_checked", used)
        .num("distinct_tokens", distinct)
        .num("worst_rel_l2", w.documented)
        .num("threshold", max)
        .num("row_major_read_rel_l2", w.row_major);
    for p in &problems {
        f.line(p.clone());
    }
    let ok = ok_doc && rm_caught && sb_caught && problems.is_empty();
    if !ok_doc {
        mismatch_failures(&mut f, &object, &w, max, rm_caught);
    }
    for (caught, name) in [
        (rm_caught, "row_major_read"),
        (sb_caught, "signs_before_rotation"),
    ] {
        if !caught {
            f.failure(Failure {
                check: format!("embedding.negative_control.{name}"),
                ..Failure::new(format!(
                    "negative control {name} matches the dump (not rejected)"
                ))
            });
        }
    }
    for p in &problems {
        f.failure(Failure {
            check: "embedding.tokens".into(),
            ..Failure::new(p.clone())
        });
    }
    f.set_ok(ok);
    let outcome = Outcome {
        ok,
        ok_doc,
        rm_caught,
        worst: w.documented,
        max,
        problems: &problems,
    };
    f.detail = detail(&outcome, format, used, t);
    Ok(f)
}
