//! The real-reader matrix (PROTOCOL.md §7, INTEROP.md): one row per reader and version, one
//! column per family and per rule layer, each cell the pass / known-failure / fail / unsupported
//! counts of a `check-reader --json` run; rendered as Markdown, spliced into INTEROP.md between
//! markers, or as a standalone HTML page.

use serde_json::Value;
use std::collections::BTreeMap;

/// One reader's run: its column name, the `check-reader --json` report and, when given, its
/// `capabilities.json` (for the version and error-class columns).
pub struct ReaderRun {
    /// Column name of the reader in the matrix.
    pub name: String,
    /// Its `check-reader --json` report.
    pub report: Value,
    /// Its `capabilities.json`, when given.
    pub capabilities: Option<Value>,
}

/// Counts of one cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// Cases passed.
    pub pass: usize,
    /// Known failures (listed in the reader's capabilities).
    pub known: usize,
    /// Failed or stale cases.
    pub fail: usize,
    /// Cases skipped as unsupported.
    pub unsupported: usize,
}

impl Cell {
    fn add(&mut self, status: &str) {
        match status {
            "pass" => self.pass += 1,
            "known-failure" => self.known += 1,
            "skip" => self.unsupported += 1,
            "" => {}
            _ => self.fail += 1, // fail, stale, known-failure-changed
        }
    }

    /// All cases counted in the cell.
    pub fn total(&self) -> usize {
        self.pass + self.known + self.fail + self.unsupported
    }

    fn text(&self) -> String {
        if self.total() == 0 {
            return "–".into();
        }
        let mut parts = vec![format!("{} pass", self.pass)];
        if self.known > 0 {
            parts.push(format!("{} known failure", self.known));
        }
        if self.fail > 0 {
            parts.push(format!("**{} FAIL**", self.fail));
        }
        if self.unsupported > 0 {
            parts.push(format!("{} unsupported", self.unsupported));
        }
        parts.join(" · ")
    }
}

/// The manifest facts the matrix needs, read leniently from the raw MANIFEST.json so that cases
/// with or without a `rule_layer` member both render.
pub struct CaseInfo {
    /// The case's family.
    pub family: String,
    /// The rule layer of an `n_` case, when the manifest names one.
    pub rule_layer: Option<String>,
}

/// Case id → [`CaseInfo`] for every case of a raw MANIFEST.json value.
pub fn case_infos(manifest: &Value) -> BTreeMap<String, CaseInfo> {
    let mut m = BTreeMap::new();
    for c in manifest["cases"].as_array().into_iter().flatten() {
        let id = c["id"].as_str().unwrap_or("").to_string();
        let family = c["layer"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| id.split('/').next().unwrap_or("").to_string());
        let rule_layer = c["rule_layer"].as_str().map(String::from);
        m.insert(id, CaseInfo { family, rule_layer });
    }
    m
}

/// The rule layers in display order (the known ones first, then any other found).
fn layer_columns(cases: &BTreeMap<String, CaseInfo>) -> Vec<String> {
    let known = ["mainline", "loader", "recommended", "spec"];
    let mut cols: Vec<String> = known
        .iter()
        .filter(|k| cases.values().any(|c| c.rule_layer.as_deref() == Some(**k)))
        .map(|k| k.to_string())
        .collect();
    let mut other: Vec<String> = cases
        .values()
        .filter_map(|c| c.rule_layer.clone())
        .filter(|l| !known.contains(&l.as_str()))
        .collect();
    other.sort();
    other.dedup();
    cols.extend(other);
    cols
}

fn families(cases: &BTreeMap<String, CaseInfo>) -> Vec<String> {
    let mut f: Vec<String> = cases.values().map(|c| c.family.clone()).collect();
    f.sort();
    f.dedup();
    f
}

fn statuses(report: &Value) -> BTreeMap<String, String> {
    report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or("").to_string(),
                r["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Cells of one reader: per family, per rule layer (`n_` cases carrying one), and overall.
pub fn reader_cells(
    cases: &BTreeMap<String, CaseInfo>,
    report: &Value,
) -> (BTreeMap<String, Cell>, BTreeMap<String, Cell>, Cell) {
    let st = statuses(report);
    let (mut fam, mut lay, mut all) = (BTreeMap::new(), BTreeMap::new(), Cell::default());
    for (id, info) in cases {
        let s = st.get(id).map(String::as_str).unwrap_or("");
        fam.entry(info.family.clone())
            .or_insert_with(Cell::default)
            .add(s);
        if let Some(l) = &info.rule_layer {
            lay.entry(l.clone()).or_insert_with(Cell::default).add(s);
        }
        all.add(s);
    }
    (fam, lay, all)
}

/// At most `max` characters, cut at a word boundary with an ellipsis.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    let cut = head.rfind(' ').unwrap_or(head.len());
    format!("{}…", head[..cut].trim_end_matches([',', ' ']))
}

fn cap_str(caps: &Option<Value>, key: &str) -> String {
    caps.as_ref()
        .and_then(|c| c[key].as_str())
        .unwrap_or("")
        .to_string()
}

/// The reader × (family, rule layer) table as Markdown.
pub fn render_readers(manifest: &Value, runs: &[ReaderRun]) -> String {
    let cases = case_infos(manifest);
    let fams = families(&cases);
    let layers = layer_columns(&cases);
    let mut s = String::from("| reader | version | error classes | rule layers held |");
    for f in &fams {
        s.push_str(&format!(" {f} |"));
    }
    for l in &layers {
        s.push_str(&format!(" n_ rule layer: {l} |"));
    }
    s.push_str(" all |\n|---|---|---|---|");
    for _ in 0..fams.len() + layers.len() + 1 {
        s.push_str("---|");
    }
    s.push('\n');
    for r in runs {
        let (fam, lay, all) = reader_cells(&cases, &r.report);
        // `version`, else the head of `description` (older capabilities files name it there).
        let version = match cap_str(&r.capabilities, "version") {
            v if v.is_empty() => cap_str(&r.capabilities, "description")
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
            v => v,
        };
        let classes = match cap_str(&r.capabilities, "error_classes").as_str() {
            "" => "lenient".to_string(),
            c => c.to_string(),
        };
        let version = short(&version, 48);
        // `rule_layers` absent: every layer (PROTOCOL §5.3).
        let layers_held = match r.capabilities.as_ref().map(|c| &c["rule_layers"]) {
            Some(Value::Array(a)) if a.len() == 4 => "all".to_string(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", "),
            _ => "all".to_string(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} |",
            r.name,
            if version.is_empty() { "–" } else { &version },
            classes,
            layers_held
        ));
        for f in &fams {
            s.push_str(&format!(
                " {} |",
                fam.get(f).copied().unwrap_or_default().text()
            ));
        }
        for l in &layers {
            s.push_str(&format!(
                " {} |",
                lay.get(l).copied().unwrap_or_default().text()
            ));
        }
        s.push_str(&format!(" {} |\n", all.text()));
    }
    if layers.is_empty() {
        s.push_str("\n(No case of this corpus carries a `rule_layer`; the rule-layer columns appear once the manifest has them.)\n");
    }
    s
}

/// Replaces the text between `<!-- BEGIN name -->` and `<!-- END name -->` in `doc` with `body`;
/// `None` when the markers are missing or out of order.
pub fn splice(doc: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- BEGIN {name} -->");
    let end = format!("<!-- END {name} -->");
    let b = doc.find(&begin)?;
    let e = doc[b..].find(&end)? + b;
    Some(format!(
        "{}{begin}\n{}{}{}",
        &doc[..b],
        body.trim_end_matches('\n'),
        "\n",
        &doc[e..]
    ))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Inline Markdown of a table cell to HTML: escapes, then `**x**` → `<b>x</b>`, `` `x` `` → code.
fn inline(s: &str) -> String {
    let e = html_escape(s.trim());
    let mut out = String::new();
    let (mut bold, mut code) = (false, false);
    let mut rest = e.as_str();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("**") {
            out.push_str(if bold { "</b>" } else { "<b>" });
            bold = !bold;
            rest = r;
        } else if let Some(r) = rest.strip_prefix('`') {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = r;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if bold {
        out.push_str("</b>");
    }
    if code {
        out.push_str("</code>");
    }
    out
}

fn cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').collect()
}

/// A Markdown table (header, separator, rows) as an HTML `<table>`; other lines as paragraphs.
fn md_to_html(md: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim_start().starts_with('|') {
            out.push_str("<table>\n<thead><tr>");
            for c in cells(l) {
                out.push_str(&format!("<th>{}</th>", inline(c)));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            i += 2; // header and separator
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                out.push_str("<tr>");
                for c in cells(lines[i]) {
                    let class = if c.contains("FAIL") {
                        " class=\"fail\""
                    } else if c.contains("known failure") {
                        " class=\"known\""
                    } else {
                        ""
                    };
                    out.push_str(&format!("<td{class}>{}</td>", inline(c)));
                }
                out.push_str("</tr>\n");
                i += 1;
            }
            out.push_str("</tbody>\n</table>\n");
        } else {
            if !l.trim().is_empty() {
                out.push_str(&format!("<p>{}</p>\n", inline(l)));
            }
            i += 1;
        }
    }
    out
}

/// A standalone HTML page: a title and Markdown sections (heading, body) rendered as tables.
pub fn render_html(title: &str, sections: &[(&str, String)]) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
<style>\nbody{{font-family:system-ui,sans-serif;margin:2em;color:#222}}\n\
table{{border-collapse:collapse;margin:1em 0;font-size:14px}}\n\
th,td{{border:1px solid #bbb;padding:4px 8px;text-align:left;vertical-align:top}}\n\
th{{background:#eee}}\ntd.known{{background:#fff6d5}}\ntd.fail{{background:#fbd5d5}}\n\
code{{font-size:13px}}\n</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = html_escape(title)
    );
    for (h, md) in sections {
        s.push_str(&format!("<h2>{}</h2>\n", html_escape(h)));
        s.push_str(&md_to_html(md));
    }
    s.push_str("</body>\n</html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> Value {
        json!({"cases": [
            {"id": "gguf/y_a", "layer": "gguf"},
            {"id": "gguf/n_b", "layer": "gguf", "rule_layer": "mainline"},
            {"id": "gguf/n_c", "layer": "gguf", "rule_layer": "spec"},
            {"id": "codec/y_d", "layer": "codec"},
        ]})
    }

    fn run() -> ReaderRun {
        ReaderRun {
            name: "r".into(),
            report: json!({"results": [
                {"id": "gguf/y_a", "status": "pass"},
                {"id": "gguf/n_b", "status": "known-failure"},
                {"id": "gguf/n_c", "status": "fail"},
                {"id": "codec/y_d", "status": "skip"},
            ]}),
            capabilities: Some(json!({"version": "r 1.2.3", "error_classes": "lenient"})),
        }
    }

    #[test]
    fn counts_per_family_layer_and_total() {
        let cases = case_infos(&manifest());
        let (fam, lay, all) = reader_cells(&cases, &run().report);
        assert_eq!(
            fam["gguf"],
            Cell {
                pass: 1,
                known: 1,
                fail: 1,
                unsupported: 0
            }
        );
        assert_eq!(fam["codec"].unsupported, 1);
        assert_eq!(lay["mainline"].known, 1);
        assert_eq!(lay["spec"].fail, 1);
        assert_eq!(all.total(), 4);
    }

    #[test]
    fn table_names_reader_version_and_layers() {
        let md = render_readers(&manifest(), &[run()]);
        assert!(md.contains("| r | r 1.2.3 | lenient | all |"), "{md}");
        assert!(md.contains("n_ rule layer: mainline"));
        assert!(md.contains("**1 FAIL**"));
        let html = render_html("m", &[("readers", md)]);
        assert!(html.contains("<td class=\"fail\">"));
        assert!(html.contains("<b>1 FAIL</b>"));
        assert!(html.starts_with("<!DOCTYPE html>"));
    }

    #[test]
    fn long_versions_are_cut_at_a_word() {
        assert_eq!(short("abc def", 48), "abc def");
        assert_eq!(short("one two three four", 10), "one two…");
    }

    #[test]
    fn splice_replaces_between_markers_only() {
        let doc = "a\n<!-- BEGIN m -->\nold\n<!-- END m -->\nz\n";
        let out = splice(doc, "m", "new\n").unwrap();
        assert_eq!(out, "a\n<!-- BEGIN m -->\nnew\n<!-- END m -->\nz\n");
        assert!(splice("no markers", "m", "x").is_none());
    }

    #[test]
    fn html_escapes_cell_text() {
        let h = md_to_html("| a |\n|---|\n| <x> & `c` |\n");
        assert!(h.contains("&lt;x&gt; &amp; <code>c</code>"), "{h}");
    }
}
