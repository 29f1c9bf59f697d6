//! Gate 4: assembly — 17 positional audits (spec/gates.json) and 4 negative controls fed to the
//! same audit function. For every artifact row the audit compares its fingerprint with the
//! fingerprint of the source row the rule names for that position (explicit index arithmetic,
//! `rules.rs`), and compares multisets for repeated / missing rows. Rows are never located by
//! searching.

use super::findings::Failure;
use super::rules;
use super::{Ctx, Finding};
use crate::error::{Error, ErrorClass, Result};
use crate::spec::{gates, Dim, RowOrder, RowSection};
use std::collections::HashMap;

/// The counts one audit reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rows the audit compares.
    pub rows: u64,
    /// Rows whose fingerprint differs from the rule's at that position.
    pub order_mismatches: u64,
    /// Multiset surplus: artifact copies beyond the source's count of that row.
    pub repeated: u64,
    /// Multiset deficit: source rows with fewer copies in the artifact.
    pub missing: u64,
    /// Artifact rows whose fingerprint is over-represented (every copy counted).
    pub duplicate_rows: u64,
}

impl Counts {
    /// No order mismatch, no surplus and no deficit.
    pub fn clean(&self) -> bool {
        self.order_mismatches == 0 && self.repeated == 0 && self.missing == 0
    }
    /// A count by its spec name (`rows`, `order_mismatches`, ...).
    pub fn get(&self, key: &str) -> Option<u64> {
        Some(match key {
            "rows" => self.rows,
            "order_mismatches" => self.order_mismatches,
            "repeated" => self.repeated,
            "missing" => self.missing,
            "duplicate_rows" => self.duplicate_rows,
            _ => return None,
        })
    }
    /// The counts as one report fragment.
    pub fn describe(&self) -> String {
        format!(
            "rows={} order_mismatches={} repeated={} missing={}",
            self.rows, self.order_mismatches, self.repeated, self.missing
        )
    }
}

/// The audit: `artifact[i]` vs `expected[i]` position by position; `artifact` vs `selection`
/// (the source rows the part selects) as multisets.
pub fn audit(artifact: &[u64], expected: &[u64], selection: &[u64]) -> Counts {
    let order_mismatches = artifact
        .iter()
        .zip(expected)
        .filter(|(a, e)| a != e)
        .count() as u64
        + artifact.len().abs_diff(expected.len()) as u64;
    // Multisets as sorted runs (one merge walk; no hashing of attacker-chosen fingerprints).
    let mut art = artifact.to_vec();
    art.sort_unstable();
    let mut src = selection.to_vec();
    src.sort_unstable();
    let run = |v: &[u64], at: usize, key: u64| v[at..].iter().take_while(|&&x| x == key).count();
    let (mut repeated, mut missing, mut dup) = (0u64, 0u64, 0u64);
    let (mut i, mut j) = (0usize, 0usize);
    while i < art.len() || j < src.len() {
        let key = match (art.get(i), src.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let (c, s) = (run(&art, i, key), run(&src, j, key));
        if c > s {
            repeated += (c - s) as u64;
            if c > 1 {
                dup += c as u64;
            }
        } else if s > c {
            missing += (s - c) as u64;
        }
        i += c;
        j += s;
    }
    Counts {
        rows: artifact.len() as u64,
        order_mismatches,
        repeated,
        missing,
        duplicate_rows: dup,
    }
}

/// Whole-tensor GGUF fingerprints, computed once per tensor per run.
#[derive(Default)]
pub struct FpCache(HashMap<String, Vec<u64>>);

impl FpCache {
    /// Fingerprints of every row of GGUF tensor `name` (computed on first use).
    pub fn tensor(&mut self, ctx: &Ctx<'_>, name: &str) -> Result<&Vec<u64>> {
        if !self.0.contains_key(name) {
            let g = ctx.gguf_rows(name)?;
            let fps = g.fps();
            self.0.insert(name.to_string(), fps);
        }
        Ok(&self.0[name])
    }
    /// Forgets every tensor (bounds memory between layers).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// A section with names and numbers resolved for one layer.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The section's report name.
    pub name: String,
    /// The artifact object.
    pub object: String,
    /// First artifact row.
    pub start: u64,
    /// One past the last artifact row.
    pub end: u64,
    /// The source GGUF tensor.
    pub source: String,
    /// First source row the section reads.
    pub source_start: u64,
    /// How the section's rows are gathered from the source.
    pub order: RowOrder,
}

/// Resolves a spec section for layer `l`.
pub fn resolve(ctx: &Ctx<'_>, s: &RowSection, l: Option<u64>) -> Result<Resolved> {
    Ok(Resolved {
        name: ctx.name(&s.name, l)?,
        object: ctx.name(&s.object, l)?,
        start: ctx.dim(&s.rows[0])?,
        end: ctx.dim(&s.rows[1])?,
        source: ctx.name(&s.source, l)?,
        source_start: ctx.dim(&s.source_start)?,
        order: s.order,
    })
}

/// Fingerprints of one section: artifact rows, the rule's expected rows, the selection.
pub struct SectionFps {
    /// The artifact's rows, in artifact order.
    pub artifact: Vec<u64>,
    /// The rows the rule puts there.
    pub expected: Vec<u64>,
    /// The source rows the rule selects (as a multiset).
    pub selection: Vec<u64>,
    /// Fingerprints of the whole source span (source order), for controls.
    pub span: Vec<u64>,
}

/// Fingerprints of one resolved section.
pub fn section_fps(ctx: &Ctx<'_>, r: &Resolved, cache: &mut FpCache) -> Result<SectionFps> {
    let rows = ctx.artifact_rows(&r.object)?;
    if r.end > rows.n() || r.start >= r.end {
        fail!(
            NinferDirShape,
            &r.object,
            "rows [{}, {}) outside the object's {} rows",
            r.start,
            r.end,
            rows.n()
        );
    }
    let n = r.end - r.start;
    let src = cache.tensor(ctx, &r.source)?;
    let span_len = rules::source_span(r.order, n);
    if matches!(r.order, RowOrder::AttnQQuery | RowOrder::AttnQGate) {
        rules::check_attn_q_rows(&ctx.profile, &r.source, src.len() as u64)
            .map_err(|e| Error::new(ErrorClass::GgufTensorShape, &r.source, e))?;
    }
    if r.source_start + span_len > src.len() as u64 {
        fail!(
            GgufTensorShape,
            &r.source,
            "the rule reads source rows [{}, {}) but the tensor has {}",
            r.source_start,
            r.source_start + span_len,
            src.len()
        );
    }
    let span: Vec<u64> =
        src[r.source_start as usize..(r.source_start + span_len) as usize].to_vec();
    let mut expected = Vec::with_capacity(n as usize);
    for i in 0..n {
        let j = rules::source_offset(&ctx.profile, r.order, n, i)
            .map_err(|e| Error::new(ErrorClass::SpecInvalid, &r.name, e))?;
        expected.push(span[j as usize]);
    }
    let selection = span
        .iter()
        .enumerate()
        .filter(|(j, _)| rules::selected(&ctx.profile, r.order, *j as u64))
        .map(|(_, f)| *f)
        .collect();
    let artifact = rows.fps(r.start..r.end);
    Ok(SectionFps {
        artifact,
        expected,
        selection,
        span,
    })
}

/// The first artifact row of a section that does not hold the row the rule puts there:
/// (artifact row, the rule's source row, the source row it holds if any).
fn first_wrong_row(
    ctx: &Ctx<'_>,
    r: &Resolved,
    fps: &SectionFps,
) -> Option<(u64, u64, Option<u64>)> {
    let i = fps
        .artifact
        .iter()
        .zip(&fps.expected)
        .position(|(a, e)| a != e)?;
    let n = fps.expected.len() as u64;
    let want = rules::source_offset(&ctx.profile, r.order, n, i as u64).ok()?;
    let held = fps
        .span
        .iter()
        .position(|f| *f == fps.artifact[i])
        .map(|j| r.source_start + j as u64);
    Some((r.start + i as u64, r.source_start + want, held))
}

/// The located failure of a section (`label`, e.g. `L0 value_z[0:v_rows]`) that failed its
/// audit: its first wrong row, the source row the rule puts there and the one it holds.
pub fn section_failure(
    ctx: &Ctx<'_>,
    check: &str,
    label: &str,
    r: &Resolved,
    fps: &SectionFps,
    c: &Counts,
) -> Failure {
    let counts = format!(
        "{} out of order, {} duplicated, {} missing",
        c.order_mismatches, c.repeated, c.missing
    );
    match first_wrong_row(ctx, r, fps) {
        Some((row, want, held)) => Failure {
            check: check.into(),
            object: Some(r.object.clone()),
            row: Some(row),
            expected: Some(format!("{}[{want}]", r.source).into()),
            observed: Some(match held {
                Some(h) => format!("{}[{h}]", r.source).into(),
                None => "a row of no source position".into(),
            }),
            ..Failure::new(format!(
                "{} row {row} holds {}, the rule's is {want} ({}; {label}; {counts}){}",
                r.object,
                held.map_or("no source row".to_string(), |h| format!("source row {h}")),
                r.source,
                // A row that is no source row was damaged: where its bytes first differ.
                held.map_or_else(
                    || first_differing_byte(ctx, r, row, want).unwrap_or_default(),
                    |_| String::new()
                )
            ))
        },
        None => Failure {
            check: check.into(),
            object: Some(r.object.clone()),
            ..Failure::new(format!("{label}: {counts}"))
        },
    }
}

/// Where artifact row `row` of `r.object` first differs from source row `want` of
/// `r.source`, byte for byte: `; first differing byte: plane high, object byte 25861 (row 0,
/// plane byte 5)` (the plane names and offsets of `spec/geometry.md#block-plane`).
fn first_differing_byte(ctx: &Ctx<'_>, r: &Resolved, row: u64, want: u64) -> Option<String> {
    let src = ctx.gguf_rows(&r.source).ok()?;
    let w = src.row_bytes;
    let from = usize::try_from(want).ok()?.checked_mul(w)?;
    let source_row = src.data.get(from..from.checked_add(w)?)?;
    let mut rows = ctx.artifact_rows(&r.object).ok()?;
    let bb = rows.blocks.block_bytes;
    let i = rows
        .ggml_row(row)
        .iter()
        .zip(source_row)
        .position(|(a, b)| a != b)?;
    let (block, at) = (i / bb.max(1), i % bb.max(1));
    let (pi, (lo, hi)) = rows.blocks.slices.iter().enumerate().find_map(|(pi, s)| {
        s.filter(|(lo, hi)| (*lo..*hi).contains(&at))
            .map(|s| (pi, s))
    })?;
    let plane = crate::geometry::Plane::ALL[pi];
    let g = &rows.view.geom;
    let in_row = (block * (hi - lo) + at - lo) as u64;
    let in_plane = row * g.row_bytes(plane) + in_row;
    Some(format!(
        "; first differing byte: plane {}, object byte {} (row {row}, plane byte {in_plane})",
        plane.name(),
        g.plane_offset(plane) + in_plane
    ))
}

fn expect_value(ctx: &Ctx<'_>, d: &Dim, n: u64) -> Result<u64> {
    Ok(match d {
        Dim::Num(v) => *v,
        Dim::Name(s) if s == "n" => n,
        Dim::Name(s) if s == "perm48_missing" => rules::perm48_on_rows_missing(&ctx.profile, n),
        Dim::Name(s) => fail!(
            SpecInvalid,
            "assembly.negative_controls",
            "unknown control count symbol '{s}'"
        ),
    })
}

/// The four controls, built from the rule's expected fingerprints (so they do not depend on the
/// artifact's health) and fed to [`audit`]. Returns (name, counts, caught-as-documented, expectation text).
pub fn negative_controls(
    ctx: &Ctx<'_>,
    fps: &SectionFps,
) -> Result<Vec<(String, Counts, bool, String)>> {
    let n = fps.expected.len();
    if n < 2 {
        fail!(
            VerifyInput,
            "assembly.negative_controls",
            "control audit has {n} rows; the controls need at least 2"
        );
    }
    let mut out = Vec::new();
    for c in &gates().assembly.negative_controls {
        let order: Vec<u64> = match c.name.as_str() {
            "swap_two_rows" => {
                let mut v = fps.expected.clone();
                v.swap(0, 1);
                v
            }
            "rotate_by_one" => (0..n).map(|i| fps.expected[(i + 1) % n]).collect(),
            "perm48_on_rows" => (0..n as u64)
                .map(|i| {
                    let s = rules::perm48(&ctx.profile, i);
                    fps.span.get(s as usize).copied().unwrap_or(u64::MAX)
                })
                .collect(),
            "duplicate_and_drop" => {
                let mut v = fps.expected.clone();
                v[1] = v[0];
                v
            }
            other => fail!(
                SpecInvalid,
                "assembly.negative_controls",
                "unknown assembly control '{other}'"
            ),
        };
        let counts = audit(&order, &fps.expected, &fps.selection);
        let mut ok = !counts.clean();
        let mut want = Vec::new();
        for (k, d) in &c.expect {
            let e = expect_value(ctx, d, n as u64)?;
            want.push(format!("{k}={e}"));
            ok &= counts.get(k) == Some(e);
        }
        out.push((c.name.clone(), counts, ok, want.join(" ")));
    }
    Ok(out)
}

/// Audits one resolved section: writes its line (and its located failure when it is not
/// clean); returns its fingerprints and whether it was clean, or `None` when it could not be
/// read (reported as an `assembly.audit_read` failure).
fn audit_section(
    ctx: &Ctx<'_>,
    f: &mut Finding,
    r: &Resolved,
    cache: &mut FpCache,
) -> Option<(SectionFps, bool)> {
    match section_fps(ctx, r, cache) {
        Ok(fps) => {
            let c = audit(&fps.artifact, &fps.expected, &fps.selection);
            f.line(format!(
                "{}: {} -> {}",
                r.name,
                c.describe(),
                if c.clean() { "ok" } else { "FAILS" }
            ));
            if !c.clean() {
                f.failure(section_failure(ctx, "assembly.audit", &r.name, r, &fps, &c));
            }
            Some((fps, c.clean()))
        }
        Err(e) => {
            f.line(format!("{}: {e:#} -> FAILS", r.name));
            f.failure(Failure {
                check: "assembly.audit_read".into(),
                object: Some(r.object.clone()),
                ..Failure::new(format!("{}: {e}", r.name))
            });
            None
        }
    }
}

/// The negative controls built on the GDN head permutation: they mean something only on the
/// control audit itself (a `value_z` section), not on a stand-in.
const GDN_ONLY_CONTROLS: [&str; 1] = ["perm48_on_rows"];

/// Runs the negative controls on the control audit's fingerprints (`control_name` is its
/// report name), one line each and a failure for each not caught as documented; returns how
/// many were caught.
fn run_controls(
    ctx: &Ctx<'_>,
    f: &mut Finding,
    control_name: &str,
    fps: &SectionFps,
    stand_in: bool,
) -> Result<usize> {
    let mut caught = 0;
    for (name, c, ok, want) in negative_controls(ctx, fps)? {
        if stand_in && GDN_ONLY_CONTROLS.contains(&name.as_str()) {
            f.line(format!(
                "negative control {name}: SKIPPED, it permutes the GDN value heads of the control audit {}, which is out of scope",
                gates().assembly.control_audit
            ));
            continue;
        }
        if ok {
            caught += 1;
        }
        f.line(format!(
            "negative control {name} on {control_name}: {} duplicate_rows={} (documented {want}) -> {}",
            c.describe(),
            c.duplicate_rows,
            if ok { "caught" } else { "NOT caught as documented" }
        ));
        if !ok {
            f.failure(Failure {
                check: "assembly.negative_control".into(),
                object: Some(control_name.to_string()),
                expected: Some(want.clone().into()),
                observed: Some(c.describe().into()),
                ..Failure::new(format!(
                    "negative control {name} on {control_name} not caught as documented"
                ))
            });
        }
    }
    Ok(caught)
}

/// Runs the gate.
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let spec = &gates().assembly;
    let mut f = Finding::new("assembly");
    let mut cache = FpCache::default();
    let mut passed = 0;
    let mut skipped = 0;
    let mut control: Option<(String, SectionFps)> = None;
    // The first clean audit: the controls' stand-in when the control audit is out of scope.
    let mut stand_in: Option<(String, SectionFps)> = None;
    let mut control_out_of_scope = false;
    for a in &spec.audits {
        let l = match &a.layer {
            Some(w) => match ctx.named_layer(w)? {
                Some(l) => Some(l),
                None => {
                    skipped += 1;
                    control_out_of_scope |= a.name == spec.control_audit;
                    f.line(format!("{}: SKIPPED, {}", a.name, ctx.why_no_layer(w)));
                    continue;
                }
            },
            None => None,
        };
        let r = resolve(ctx, a, l)?;
        if let Some(why) = ctx.why_out_of_scope(&r.object) {
            skipped += 1;
            control_out_of_scope |= a.name == spec.control_audit;
            f.line(format!("{}: SKIPPED, {why} (source {})", r.name, r.source));
            continue;
        }
        if let Some((fps, clean)) = audit_section(ctx, &mut f, &r, &mut cache) {
            if clean {
                passed += 1;
            }
            if a.name == spec.control_audit {
                control = Some((r.name.clone(), fps));
            } else if clean && stand_in.is_none() && r.order == RowOrder::Verbatim {
                stand_in = Some((r.name.clone(), fps));
            }
        }
    }
    let total = spec.audits.len() - skipped;
    let nc_spec = spec.negative_controls.len();
    let (caught, nc) = match (&control, &stand_in) {
        (Some((name, fps)), _) => (run_controls(ctx, &mut f, name, fps, false)?, nc_spec),
        (None, Some((name, fps))) if control_out_of_scope => {
            // The control audit is out of scope (no GDN layer): the controls that do not
            // depend on the GDN head order run on the first clean verbatim audit instead.
            let caught = run_controls(ctx, &mut f, name, fps, true)?;
            (caught, nc_spec - GDN_ONLY_CONTROLS.len())
        }
        _ => {
            f.line(format!(
                "negative controls not run: the control audit {} failed to read",
                spec.control_audit
            ));
            (0, nc_spec)
        }
    };
    f.num("audits", total)
        .num("audits_passed", passed)
        .num("controls", nc)
        .num("controls_caught", caught);
    if skipped > 0 {
        f.num("audits_skipped", skipped);
    }
    let ok = passed == total && caught == nc;
    f.set_ok(ok);
    f.detail = format!(
        "{passed}/{total} positional audits clean{}; {caught}/{nc} negative controls caught{}",
        if skipped > 0 {
            format!(" ({skipped} skipped: {})", scope_words(ctx))
        } else {
            String::new()
        },
        if ok { "" } else { " -- FAILED" }
    );
    Ok(f)
}

/// What the skipped audits are not in, for the gate's one-line detail.
fn scope_words(ctx: &Ctx<'_>) -> String {
    match ctx.minimal {
        Some(l) => format!("not in the minimal artifact of layer {l}"),
        None => "not in the reduced source".into(),
    }
}
