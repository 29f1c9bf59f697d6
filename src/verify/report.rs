//! The renderings of a [`Report`]: the one-screen summary the CLI prints first (the verdict,
//! then one short line per gate), the full text (one line per step, sub-lines indented, the
//! summary and the verdict; `verify --verbose`) and JSON (`verify --json`, schema
//! `spec/schemas/verify-report.schema.json`).

use super::findings::{Failure, Finding, Report, Verdict};
use crate::text::escape;
use serde_json::{json, Map, Value};

/// The last line of a failing text report.
pub const FAILED_VERDICT: &str = "RESULT: FAILED -- do not load this artifact into the engine";
/// The last line of a passing text report.
pub const PASSED_VERDICT: &str = "RESULT: PASSED";

fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => escape(s).into_owned(),
        other => other.to_string(),
    }
}

/// The text report. Every piece of text is escaped here (`crate::text::escape`): gates put
/// names from the files (objects, tensors, keys, identities) into details and lines as they
/// are, and none of their control or bidi characters reaches the terminal raw.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "verify {} ({}, profile {}) against {}\n",
        escape(&r.artifact),
        escape(&r.format),
        escape(&r.profile),
        escape(&r.gguf)
    ));
    for p in &r.preamble {
        out.push_str(&format!("note: {}\n", escape(p)));
    }
    for f in &r.findings {
        let nums: Vec<String> = f
            .numbers
            .iter()
            .map(|(k, v)| format!("{}={}", escape(k), render_value(v)))
            .collect();
        out.push_str(&format!(
            "{} {:<16} {}",
            f.status.word(),
            escape(&f.step),
            escape(&f.detail)
        ));
        if !nums.is_empty() {
            out.push_str(&format!(" [{}]", nums.join(" ")));
        }
        out.push('\n');
        for l in &f.lines {
            out.push_str(&format!("      {}\n", escape(l)));
        }
    }
    out.push_str(&format!(
        "{} passed, {} failed, {} skipped\n",
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Skip)
    ));
    out.push_str(if r.ok() {
        PASSED_VERDICT
    } else {
        FAILED_VERDICT
    });
    out.push('\n');
    out
}

/// The JSON report body (same findings; `verify --json` adds `schema` and `tool_version`,
/// spec/schemas/verify-report.schema.json). Each result carries its measured `numbers` and,
/// for a failed gate, its `failures` (structured where the gate locates them, else one entry
/// holding the gate's detail).
pub fn json(r: &Report) -> Value {
    let results: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let mut m = Map::new();
            m.insert("step".into(), json!(f.step));
            m.insert("status".into(), json!(f.status));
            m.insert("detail".into(), json!(f.detail));
            m.insert("lines".into(), json!(f.lines));
            m.insert("numbers".into(), json!(f.numbers));
            m.insert("failures".into(), json!(failures(f)));
            Value::Object(m)
        })
        .collect();
    json!({
        "artifact": r.artifact,
        "gguf": r.gguf,
        "format": r.format,
        "profile": r.profile,
        "notes": r.preamble,
        "ok": r.ok(),
        "passed": r.count(Verdict::Pass),
        "failed": r.count(Verdict::Fail),
        "skipped": r.count(Verdict::Skip),
        "results": results,
    })
}

/// The failures of a finding as report entries (`gate` + the [`Failure`] fields): none unless
/// it failed; a failed gate that located nothing gives one entry with its detail.
pub fn failures(f: &Finding) -> Vec<Value> {
    if f.status != Verdict::Fail {
        return Vec::new();
    }
    let fallback;
    let list: &[Failure] = if f.failures.is_empty() {
        fallback = [Failure {
            check: f.step.clone(),
            ..Failure::new(f.detail.clone())
        }];
        &fallback
    } else {
        &f.failures
    };
    list.iter()
        .map(|x| {
            let mut v = json!({"gate": f.step});
            if let (Value::Object(m), Value::Object(rest)) = (&mut v, json!(x)) {
                m.extend(rest);
            }
            v
        })
        .collect()
}

/// The JSON report serialized for a terminal: pretty-printed, then passed through
/// `crate::text::json_safe` (the same document, no raw control or bidi character).
pub fn json_text(r: &Report) -> serde_json::Result<String> {
    Ok(crate::text::json_safe(&serde_json::to_string_pretty(&json(r))?).into_owned())
}

/// The widest line of the [`summary`].
pub const SUMMARY_WIDTH: usize = 100;

/// The first line of every report: the verdict and the counts.
pub fn verdict_line(r: &Report) -> String {
    let counts = format!(
        "{} passed, {} failed, {} skipped",
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Skip)
    );
    if r.ok() {
        format!("PASS: {counts}")
    } else {
        format!("FAIL: {counts} -- do not load this artifact into the engine")
    }
}

/// `s` escaped and cut to `width` characters (a cut line ends in `...`).
fn cut(s: &str, width: usize) -> (String, bool) {
    let s = escape(s);
    if s.chars().count() <= width {
        return (s.into_owned(), false);
    }
    let mut out: String = s.chars().take(width.saturating_sub(3)).collect();
    out.push_str("...");
    (out, true)
}

/// The one-screen summary: the verdict first, the header, any notes, then one line per gate
/// (its status, name and — for a failed gate — its first failure, else its detail), every line
/// at most [`SUMMARY_WIDTH`] characters. With `verbose` no line is cut and the full [`text`]
/// follows; without it a line points to `--verbose` and the last line is the full text's
/// closing verdict.
pub fn summary(r: &Report, verbose: bool) -> String {
    let mut lines = vec![verdict_line(r)];
    let mut was_cut = false;
    let width = if verbose { usize::MAX } else { SUMMARY_WIDTH };
    let mut push = |lines: &mut Vec<String>, s: String| {
        let (l, c) = cut(&s, width);
        was_cut |= c;
        lines.push(l);
    };
    push(
        &mut lines,
        format!(
            "verify {} ({}, profile {}) against {}",
            r.artifact, r.format, r.profile, r.gguf
        ),
    );
    for p in &r.preamble {
        push(&mut lines, format!("note: {p}"));
    }
    for f in &r.findings {
        let what = match (f.status, f.failures.first()) {
            (Verdict::Fail, Some(x)) => x.message.as_str(),
            _ => f.detail.as_str(),
        };
        push(
            &mut lines,
            format!("  {} {:<16} {what}", f.status.word(), f.step),
        );
    }
    let mut out = lines.join("\n");
    out.push('\n');
    if verbose {
        out.push_str("details:\n");
        out.push_str(&text(r));
    } else {
        out.push_str(if was_cut {
            "(lines cut at 100 characters; --verbose prints every check in full)\n"
        } else {
            "(--verbose prints every check of every gate)\n"
        });
        // The closing line scripts look for (`^RESULT: PASSED`), as the full text ends.
        out.push_str(if r.ok() {
            PASSED_VERDICT
        } else {
            FAILED_VERDICT
        });
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::findings::Finding;

    fn report(detail: &str) -> Report {
        Report {
            artifact: "a".repeat(300),
            gguf: "g.gguf".into(),
            format: "PQ2_0_G128".into(),
            profile: "bonsai-nano".into(),
            preamble: Vec::new(),
            findings: vec![Finding::fail("row_order", detail), Finding::new("inspect")],
            stats: Default::default(),
        }
    }

    #[test]
    fn the_summary_leads_with_the_verdict_and_cuts_long_lines() {
        let long = "x".repeat(300);
        let s = summary(&report(&long), false);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "FAIL: 1 passed, 1 failed, 0 skipped -- do not load this artifact into the engine"
        );
        for l in &lines {
            assert!(l.chars().count() <= SUMMARY_WIDTH, "{l}");
        }
        assert!(s.contains("--verbose prints every check in full"), "{s}");
        assert!(!s.contains(&long));
        // With --verbose the full text (uncut) follows, and no summary line is cut either.
        let v = summary(&report(&long), true);
        assert!(v.starts_with(lines[0]) && v.contains(&long), "{v}");
        let gate = v.lines().find(|l| l.contains("FAIL row_order")).unwrap();
        assert!(gate.ends_with(&long) && !gate.ends_with("..."), "{gate}");
        let header = v.lines().nth(1).unwrap();
        assert!(header.contains(&"a".repeat(300)), "{header}");
        // Short lines are not cut (the control of the cut marker).
        let mut r = report("one short reason");
        r.artifact = "a.ninfer".into();
        let short = summary(&r, false);
        assert!(
            short.contains("FAIL row_order        one short reason"),
            "{short}"
        );
        assert!(!short.contains("cut at 100"), "{short}");
    }
}
