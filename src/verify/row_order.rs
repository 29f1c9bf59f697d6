//! Gate 3: row_order — gdn/value_z of the first GDN layer and the attn_q interleave of the
//! first attention layer, row by row (byte-exact fingerprints of the reassembled ggml rows).
//! Each section states "documented rule holds row-by-row", "rows DUPLICATED in the artifact",
//! "source rows MISSING from the artifact". `--sweep` repeats the sections over every layer of
//! the profile; an absent object fails the sweep.

use super::assembly::{audit, resolve, section_failure, section_fps, Counts, FpCache, Resolved};
use super::findings::Failure;
use super::{Ctx, Finding};
use crate::error::Result;
use crate::spec::gates;

fn py(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// One section's outcome line and pass flag.
pub struct SectionOutcome {
    /// The report line.
    pub line: String,
    /// Whether the section holds the rule.
    pub ok: bool,
    /// Its counts, when the section was compared.
    pub counts: Option<Counts>,
    /// The located failure of a failed section (its first wrong row, when one is out of order).
    pub failure: Option<Failure>,
}

fn statement(name: &str, c: &Counts) -> String {
    let st = &gates().row_order.statements;
    format!(
        "{name}: matched {}/{}; {}: {}; {}: {}; {}: {}",
        c.rows - c.order_mismatches.min(c.rows),
        c.rows,
        st[0],
        py(c.order_mismatches == 0),
        st[1],
        c.repeated,
        st[2],
        c.missing
    )
}

/// The outcome of one resolved section of layer `l`, and its artifact rows' fingerprints
/// (for the attn_q union), or `None` when the section could not be read.
fn section_outcome(
    ctx: &Ctx<'_>,
    l: u64,
    r: &Resolved,
    cache: &mut FpCache,
) -> (SectionOutcome, Option<Vec<u64>>) {
    match section_fps(ctx, r, cache) {
        Ok(fps) => {
            let c = audit(&fps.artifact, &fps.expected, &fps.selection);
            let failure = (!c.clean()).then(|| {
                section_failure(
                    ctx,
                    "row_order.section",
                    &format!("L{l} {}", r.name),
                    r,
                    &fps,
                    &c,
                )
            });
            let outcome = SectionOutcome {
                line: statement(&r.name, &c),
                ok: c.clean(),
                counts: Some(c),
                failure,
            };
            (outcome, Some(fps.artifact))
        }
        Err(e) => {
            let outcome = SectionOutcome {
                line: format!("{}: {e:#}", r.name),
                ok: false,
                counts: None,
                failure: Some(Failure {
                    check: "row_order.section_read".into(),
                    object: Some(r.object.clone()),
                    ..Failure::new(format!("L{l} {}: {e}", r.name))
                }),
            };
            (outcome, None)
        }
    }
}

/// The attn_q union check of attention layer `l`: the query and gate sections' artifact rows
/// (`union_art`, or `None` when a section failed to read) hold every source row once.
fn union_outcome(
    ctx: &Ctx<'_>,
    l: u64,
    cache: &mut FpCache,
    union_art: Option<&[u64]>,
) -> Result<SectionOutcome> {
    let u = &gates().row_order.attention_union;
    let name = ctx.name(&u.name, Some(l))?;
    let src_name = ctx.name(&u.source, Some(l))?;
    let n = ctx.dim(&u.rows)?;
    let Some(union_art) = union_art else {
        return Ok(SectionOutcome {
            line: format!("{name}: not checked (a section failed to read)"),
            ok: false,
            counts: None,
            failure: Some(Failure {
                check: "row_order.attn_q_union".into(),
                object: Some(src_name.clone()),
                ..Failure::new(format!(
                    "L{l} {name}: not checked (a section failed to read)"
                ))
            }),
        });
    };
    let src = cache.tensor(ctx, &src_name)?.clone();
    let ok_len = src.len() as u64 == n;
    // Expected = the query rows followed by the gate rows, position for position.
    let c = audit(union_art, union_art, &src);
    let ok = ok_len && c.repeated == 0 && c.missing == 0;
    Ok(SectionOutcome {
        line: format!(
            "{name}: {} source rows; {}: {}; {}: {}",
            src.len(),
            gates().row_order.statements[1],
            c.repeated,
            gates().row_order.statements[2],
            c.missing
        ),
        ok,
        counts: Some(c),
        failure: (!ok).then(|| Failure {
            check: "row_order.attn_q_union".into(),
            object: Some(src_name.clone()),
            ..Failure::new(format!(
                "L{l} {name}: {} source rows (want {n}), {} duplicated, {} missing",
                src.len(),
                c.repeated,
                c.missing
            ))
        }),
    })
}

/// The sections of layer `l` (GDN or attention), including the attn_q union check.
pub fn layer_sections(ctx: &Ctx<'_>, l: u64, cache: &mut FpCache) -> Result<Vec<SectionOutcome>> {
    let spec = &gates().row_order;
    let attention = ctx.profile.is_attention_layer(l);
    let secs = if attention {
        &spec.attention_sections
    } else {
        &spec.gdn_sections
    };
    let mut out = Vec::new();
    let mut union_art = Vec::new();
    let mut union_ok = true;
    for s in secs {
        let r = resolve(ctx, s, Some(l))?;
        let (outcome, artifact) = section_outcome(ctx, l, &r, cache);
        match artifact {
            Some(a) => union_art.extend(a),
            None => union_ok = false,
        }
        out.push(outcome);
    }
    if attention {
        let union = union_ok.then_some(union_art.as_slice());
        out.push(union_outcome(ctx, l, cache, union)?);
    }
    Ok(out)
}

/// Runs `row_order` (first GDN and first attention layer).
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let spec = &gates().row_order;
    let mut f = Finding::new("row_order");
    let mut cache = FpCache::default();
    let mut total = 0;
    let mut passed = 0;
    let (mut dup, mut miss) = (0u64, 0u64);
    let mut skipped = Vec::new();
    for which in [&spec.gdn_layer, &spec.attention_layer] {
        let Some(l) = ctx.named_layer(which)? else {
            let why = ctx.why_no_layer(which);
            f.line(format!("{{{which}}} sections: SKIPPED, {why}"));
            skipped.push(why);
            continue;
        };
        for s in layer_sections(ctx, l, &mut cache)? {
            total += 1;
            if s.ok {
                passed += 1;
            }
            if let Some(c) = s.counts {
                dup += c.repeated;
                miss += c.missing;
            }
            f.line(format!("L{l} {}", s.line));
            if let Some(x) = s.failure {
                f.failure(x);
            }
        }
    }
    f.num("sections", total)
        .num("sections_passed", passed)
        .num("duplicated", dup)
        .num("missing", miss);
    for (key, which) in [
        ("gdn_layer", &spec.gdn_layer),
        ("attention_layer", &spec.attention_layer),
    ] {
        if let Some(l) = ctx.named_layer(which)? {
            f.num(key, l);
        }
    }
    if total == 0 {
        // Nothing to judge is never a pass.
        return Ok(Finding::skip(
            "row_order",
            format!("not run: {}", skipped.join("; ")),
        ));
    }
    f.set_ok(passed == total);
    f.detail = format!(
        "{passed}/{total} sections hold the documented rule row by row{}",
        if skipped.is_empty() {
            String::new()
        } else {
            format!(" (skipped: {})", skipped.join("; "))
        }
    );
    Ok(f)
}

/// Runs `row_order_sweep` over every layer (SKIP without `--sweep`).
pub fn sweep(ctx: &Ctx<'_>) -> Result<Finding> {
    if !ctx.opts.sweep {
        return Ok(super::skip_naming("row_order_sweep"));
    }
    let mut f = Finding::new("row_order_sweep");
    let mut cache = FpCache::default();
    let n = ctx.layers.len() as u64;
    let (mut layers_ok, mut sections, mut sections_ok) = (0u64, 0u64, 0u64);
    let mut shown = 0;
    for &l in &ctx.layers {
        cache.clear();
        let outs = layer_sections(ctx, l, &mut cache)?;
        let ok = outs.iter().all(|s| s.ok);
        sections += outs.len() as u64;
        sections_ok += outs.iter().filter(|s| s.ok).count() as u64;
        if ok {
            layers_ok += 1;
        } else {
            for s in outs.into_iter().filter(|s| !s.ok) {
                if shown < 12 {
                    f.line(format!("L{l} {}", s.line));
                    shown += 1;
                }
                if let Some(mut x) = s.failure {
                    x.check = x.check.replacen("row_order.", "row_order_sweep.", 1);
                    f.failure(x);
                }
            }
        }
    }
    f.num("layers", n)
        .num("layers_passed", layers_ok)
        .num("sections", sections)
        .num("sections_passed", sections_ok);
    f.set_ok(layers_ok == n);
    f.detail = format!("{layers_ok}/{n} layers hold the documented row rules");
    Ok(f)
}
