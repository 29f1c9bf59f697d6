//! Gate 7: engine_oracles — kernel dumps (x, y) against `y = W' · (H · (s ⊙ (P · x)))`
//! reconstructed in f64 from the artifact bytes, over the rotation cases of spec/dumps.json
//! (plain k=hidden T1/T3, perm ssm_out T1/T2, wide ffn_down T1, inverse embedding T2). Every
//! wrong variant (spec/gates.json) must land far from the dump; one that matches fails the gate.

use super::dumps::{self, forward_input, inverse, matmul_sets, rel_l2, Rotation, Variant};
use super::{Ctx, Finding};
use crate::error::Result;
use crate::spec::gates;

/// Runs the gate (SKIP without `--oracle-dump`).
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let Some(dir) = ctx.opts.oracle_dump else {
        return Ok(super::skip_naming("engine_oracles"));
    };
    if ctx.opts.dump_format == Some(super::DumpFormat::Harness) {
        return super::harness::run(ctx, dir);
    }
    if ctx.opts.dump_format.is_none() && super::harness::is_harness_dir(dir) {
        return super::harness::run(ctx, dir);
    }
    let ds = crate::spec::dumps();
    let m = dumps::parse_oracle_manifest(dir)?;
    let rot = Rotation::from_artifact(ctx.artifact, &ctx.profile)?;
    let mut f = Finding::new("engine_oracles");
    let mut problems: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut tally = OracleTally::default();
    let only = ctx.opts.oracle_object;
    for rc in &ds.kernel_oracles.required_cases {
        let object = ctx.name(&rc.object, None)?;
        if only.is_some_and(|o| o != object) {
            continue;
        }
        let Some(c) = m.cases.iter().find(|c| c.name == rc.name) else {
            problems.push(format!("required case {} is absent from the dump", rc.name));
            continue;
        };
        checked += 1;
        let width = ctx.dim(&crate::spec::Dim::Name(rc.width.clone()))? as usize;
        if c.rotation != rc.rotation || c.object != object || c.tokens != rc.tokens || c.k != width
        {
            problems.push(format!(
                "case {}: dump has rotation {} object {} T={} k={}; spec wants {} {object} T={} k={width}",
                c.name, c.rotation, c.object, c.tokens, c.k, rc.rotation, rc.tokens
            ));
            continue;
        }
        match check_case(ctx, &rot, dir, c) {
            Ok((doc, wrongs)) => {
                let (doc_ok, w) = tally.judge(doc, &wrongs);
                f.line(format!(
                    "{} ({} {}, T={}): documented rel L2 {} -> {}; wrong variants: {}",
                    c.name,
                    c.rotation,
                    c.object,
                    c.tokens,
                    super::findings::round6(doc),
                    if doc_ok { "ok" } else { "DIFFERS" },
                    w
                ));
            }
            Err(e) => problems.push(format!("case {}: {e:#}", c.name)),
        }
    }
    if checked == 0 && problems.is_empty() {
        problems.push(match only {
            Some(o) => format!("no required case uses object {o}"),
            None => "no cases".into(),
        });
    }
    for p in &problems {
        f.line(p.clone());
    }
    tally.record(&mut f, checked);
    let passed = tally.passed;
    let ok = problems.is_empty() && passed == checked;
    f.set_ok(ok);
    f.detail = format!(
        "{passed}/{checked} rotation cases match the documented math with every wrong variant rejected{}",
        match only {
            Some(o) => format!(" (only {o})"),
            None => String::new(),
        }
    );
    Ok(f)
}

/// Running verdicts of rotation/gemm oracle cases, shared by the native dump reader and the
/// engine harness reader: the documented variant must be within the documented bound and every
/// wrong variant at least the wrong-variant minimum.
#[derive(Default)]
pub(super) struct OracleTally {
    /// Cases that passed.
    pub passed: usize,
    worst_doc: f64,
    best_wrong: Option<f64>,
}

impl OracleTally {
    /// Judges one case; returns whether the documented variant is within bounds and the wrong
    /// variants rendered as `name=relL2` (` MATCHES` marks one that is not rejected).
    pub fn judge<N: std::fmt::Display>(&mut self, doc: f64, wrongs: &[(N, f64)]) -> (bool, String) {
        let th = &gates().thresholds;
        let doc_ok = doc <= th.oracle_documented_rel_l2_max;
        let wrong_ok = wrongs.iter().all(|(_, r)| *r >= th.oracle_wrong_rel_l2_min);
        self.worst_doc = self.worst_doc.max(doc);
        for (_, r) in wrongs {
            self.best_wrong = Some(self.best_wrong.map_or(*r, |b| b.min(*r)));
        }
        if doc_ok && wrong_ok {
            self.passed += 1;
        }
        let w: Vec<String> = wrongs
            .iter()
            .map(|(n, r)| {
                let tag = if *r >= th.oracle_wrong_rel_l2_min {
                    ""
                } else {
                    " MATCHES"
                };
                format!("{n}={}{tag}", super::findings::round6(*r))
            })
            .collect();
        (doc_ok, w.join(" "))
    }

    /// Adds the gate's numbers to its finding.
    pub fn record(&self, f: &mut Finding, checked: usize) {
        let th = &gates().thresholds;
        f.num("cases", checked)
            .num("cases_passed", self.passed)
            .num("worst_documented_rel_l2", self.worst_doc)
            .num(
                "best_wrong_rel_l2",
                self.best_wrong.unwrap_or(f64::INFINITY),
            )
            .num("documented_max", th.oracle_documented_rel_l2_max)
            .num("wrong_min", th.oracle_wrong_rel_l2_min);
    }
}

/// The variants a case is reconstructed under: the documented one first, then every wrong
/// variant of spec/gates.json that applies to its rotation.
fn case_variants(c: &dumps::OracleCase) -> Result<Vec<(String, Variant)>> {
    std::iter::once(Ok(("documented".to_string(), Variant::Documented)))
        .chain(
            gates()
                .engine_oracles
                .wrong_variants
                .iter()
                .filter(|w| w.applies.contains(&c.rotation))
                .map(|w| {
                    let v = Variant::from_name(&w.name).ok_or_else(|| {
                        err!(
                            SpecInvalid,
                            "engine_oracles.wrong_variants",
                            "unknown wrong variant '{}'",
                            w.name
                        )
                    })?;
                    Ok((w.name.clone(), v))
                }),
        )
        .collect()
}

/// Refuses a case whose dump shape is not the object's `[n, k]` or, for an inverse case, whose
/// n is not the hidden width `k`.
fn check_case_shape(c: &dumps::OracleCase, n: usize, k: usize) -> Result<()> {
    if c.rotation == "inverse" && c.n != k {
        fail!(
            DumpFormat,
            format!("case {} n", c.name),
            "inverse case n = {}, hidden = {k}",
            c.n
        );
    }
    if c.rotation != "inverse" && (c.n != n || c.k != k) {
        fail!(
            DumpFormat,
            format!("case {} n, k", c.name),
            "dump n={} k={}, {} is [{n}, {k}]",
            c.n,
            c.k,
            c.object
        );
    }
    Ok(())
}

/// (documented rel L2, [(wrong variant, rel L2)]) of one case.
fn check_case(
    ctx: &Ctx<'_>,
    rot: &Rotation,
    dir: &std::path::Path,
    c: &dumps::OracleCase,
) -> Result<(f64, Vec<(String, f64)>)> {
    let mut rows = ctx.artifact_rows(&c.object)?;
    let (n, k, t) = (rows.n() as usize, rows.view.geom.k as usize, c.tokens);
    let variants = case_variants(c)?;
    check_case_shape(c, n, k)?;
    let arrays = dumps::parse_oracle_arrays(dir, c)?;
    let ys: Vec<Vec<f64>> = match (&arrays.ids, &arrays.x) {
        (Some(ids), _) => {
            let mut out = vec![vec![0.0; k * t]; variants.len()];
            for (ti, &id) in ids.iter().enumerate() {
                if id < 0 || id as usize >= n {
                    fail!(
                        DumpFormat,
                        format!("case {} token_ids[{ti}]", c.name),
                        "token id {id} outside [0, {n})"
                    );
                }
                let z = rows.decode(id as u64)?;
                for (vi, (_, v)) in variants.iter().enumerate() {
                    out[vi][ti * k..(ti + 1) * k].copy_from_slice(&inverse(rot, &z, *v)?);
                }
            }
            out
        }
        (None, Some(x)) => {
            let sets: Vec<Vec<Vec<f64>>> = variants
                .iter()
                .map(|(_, v)| {
                    x.chunks_exact(k)
                        .map(|xt| forward_input(&ctx.profile, rot, &c.rotation, xt, *v))
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<_>>()?;
            matmul_sets(&mut rows, &sets)?
        }
        (None, None) => fail!(
            DumpFormat,
            format!("case {}", c.name),
            "case {} carries neither x nor token ids",
            c.name
        ),
    };
    let y = arrays.y;
    let doc = rel_l2(&y, &ys[0]);
    let wrongs = variants
        .iter()
        .zip(&ys)
        .skip(1)
        .map(|((name, _), yv)| (name.clone(), rel_l2(yv, &y)))
        .collect();
    Ok((doc, wrongs))
}
