//! The two renderings of a [`Report`]: text (one line per step, sub-lines indented, the
//! summary and the verdict) and JSON (`{"artifact","ok","results":[{"step","status","detail",…numbers}]}`).

use super::findings::{Report, Status};
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

/// The text report. Every piece of text is escaped here ([`crate::text::escape`]): gates put
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
        r.count(Status::Pass),
        r.count(Status::Fail),
        r.count(Status::Skip)
    ));
    out.push_str(if r.ok() {
        PASSED_VERDICT
    } else {
        FAILED_VERDICT
    });
    out.push('\n');
    out
}

/// The JSON report (same findings). Print it through [`json_text`], which also escapes the
/// bidi and format characters serde_json leaves raw.
pub fn json(r: &Report) -> Value {
    let results: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let mut m = Map::new();
            m.insert("step".into(), json!(f.step));
            m.insert("status".into(), json!(f.status));
            m.insert("detail".into(), json!(f.detail));
            if !f.lines.is_empty() {
                m.insert("lines".into(), json!(f.lines));
            }
            for (k, v) in &f.numbers {
                debug_assert!(!["step", "status", "detail", "lines"].contains(&k.as_str()));
                m.insert(k.clone(), v.clone());
            }
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
        "passed": r.count(Status::Pass),
        "failed": r.count(Status::Fail),
        "skipped": r.count(Status::Skip),
        "results": results,
    })
}

/// The JSON report serialized for a terminal: pretty-printed, then passed through
/// [`crate::text::json_safe`] (the same document, no raw control or bidi character).
pub fn json_text(r: &Report) -> serde_json::Result<String> {
    Ok(crate::text::json_safe(&serde_json::to_string_pretty(&json(r))?).into_owned())
}
