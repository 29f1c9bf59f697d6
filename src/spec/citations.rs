//! Citation checking: every reference to the specification must point inside the repository.
//!
//! A citation is any `spec/<path>.md[#anchor]` or `spec/<path>.json` in a tracked text file.
//! [`check`] reports citations whose file or anchor is missing ("dangling") and any reference
//! to documents outside the repository ("external": the team's out-of-tree notes), except in
//! files on an explicit allow-list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Text that marks a reference to a document outside the repository. Spelled in pieces so this
/// file does not cite what it forbids.
pub const EXTERNAL_MARKERS: &[&str] = &[concat!("FORMATS", ".md"), concat!("shared", "/")];

/// Anchors a Markdown document defines: explicit `<a id="…">` / `id="…"` and GitHub heading slugs.
pub fn anchors(md: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("id=\"") {
            let after = &rest[i + 4..];
            if let Some(j) = after.find('"') {
                out.insert(after[..j].to_string());
                rest = &after[j..];
            } else {
                break;
            }
        }
        if !in_fence && line.starts_with('#') {
            let text = line.trim_start_matches('#');
            if text.starts_with(' ') {
                out.insert(slug(text.trim()));
            }
        }
    }
    out
}

/// The GitHub heading slug: lower case, spaces to `-`, punctuation other than `-`/`_` dropped.
pub fn slug(heading: &str) -> String {
    let mut s = String::new();
    for c in heading.chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            s.extend(c.to_lowercase());
        } else if c == ' ' {
            s.push('-');
        }
    }
    s
}

/// One citation found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// 1-based line of the citation in its file.
    pub line: usize,
    /// Repository-relative path, e.g. `spec/codecs.md`.
    pub path: String,
    /// The `#anchor` part, if the citation has one.
    pub anchor: Option<String>,
}

fn is_path_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'/' || c == b'.'
}

fn is_anchor_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The `spec/…md` / `spec/…json` citations of a text.
pub fn citations(text: &str) -> Vec<Citation> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let base = line.as_ptr() as usize - b.as_ptr() as usize;
        let lb = &b[base..base + line.len()];
        let mut at = 0;
        while let Some(i) = line[at..].find("spec/") {
            let start = at + i;
            at = start + 5;
            if start > 0 && (lb[start - 1].is_ascii_alphanumeric() || lb[start - 1] == b'_') {
                continue; // e.g. `myspec/`
            }
            let mut end = start + 5;
            while end < lb.len() && is_path_char(lb[end]) {
                end += 1;
            }
            // A sentence may end right after the file name.
            let mut path = &line[start..end];
            while path.ends_with('.') {
                path = &path[..path.len() - 1];
            }
            if !(path.ends_with(".md") || path.ends_with(".json")) {
                continue;
            }
            let mut anchor = None;
            let pend = start + path.len();
            if pend < lb.len() && lb[pend] == b'#' {
                let mut e = pend + 1;
                while e < lb.len() && is_anchor_char(lb[e]) {
                    e += 1;
                }
                if e > pend + 1 {
                    anchor = Some(line[pend + 1..e].to_string());
                }
            }
            out.push(Citation {
                line: line_no + 1,
                path: path.to_string(),
                anchor,
            });
        }
    }
    out
}

/// A problem found by [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The cited file does not exist.
    MissingFile {
        /// The file holding the citation.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// The cited path.
        cited: String,
    },
    /// The cited file exists, the anchor does not.
    MissingAnchor {
        /// The file holding the citation.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// The cited path.
        cited: String,
        /// The cited anchor.
        anchor: String,
    },
    /// A reference to a document outside the repository.
    External {
        /// The file holding the citation.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// The offending text.
        text: String,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::MissingFile { file, line, cited } => {
                write!(f, "{file}:{line}: cites {cited}, which does not exist")
            }
            Finding::MissingAnchor {
                file,
                line,
                cited,
                anchor,
            } => {
                write!(
                    f,
                    "{file}:{line}: cites {cited}#{anchor}; {cited} has no such anchor"
                )
            }
            Finding::External { file, line, text } => {
                write!(
                    f,
                    "{file}:{line}: cites a document outside the repository: {text}"
                )
            }
        }
    }
}

/// Totals of a [`check`] run.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Files scanned.
    pub files: usize,
    /// Citations found in them.
    pub citations: usize,
    /// Citations of a `.md` file with an `#anchor`, each checked against its headings.
    pub anchored: usize,
    /// Lines mentioning out-of-tree material in files on the allow-list.
    pub allowed_external: usize,
    /// Citations that do not resolve.
    pub findings: Vec<Finding>,
}

/// Checks `files` (repository-relative) under `root`. Files that are not UTF-8 text are skipped.
/// `allow_external` names files that may mention out-of-tree documents (design-history notes).
pub fn check(root: &Path, files: &[String], allow_external: &[&str]) -> Report {
    let mut rep = Report::default();
    let mut anchor_cache: BTreeMap<String, Option<BTreeSet<String>>> = BTreeMap::new();
    for f in files {
        let Ok(bytes) = std::fs::read(root.join(f)) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        rep.files += 1;
        for c in citations(&text) {
            rep.citations += 1;
            let target = anchor_cache.entry(c.path.clone()).or_insert_with(|| {
                let p = root.join(&c.path);
                if !p.is_file() {
                    None
                } else if c.path.ends_with(".md") {
                    Some(anchors(&std::fs::read_to_string(p).unwrap_or_default()))
                } else {
                    Some(BTreeSet::new())
                }
            });
            match (target, &c.anchor) {
                (None, _) => rep.findings.push(Finding::MissingFile {
                    file: f.clone(),
                    line: c.line,
                    cited: c.path.clone(),
                }),
                (Some(set), Some(a)) if c.path.ends_with(".md") => {
                    rep.anchored += 1;
                    if !set.contains(a) {
                        rep.findings.push(Finding::MissingAnchor {
                            file: f.clone(),
                            line: c.line,
                            cited: c.path.clone(),
                            anchor: a.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        for (i, line) in text.lines().enumerate() {
            if let Some(m) = EXTERNAL_MARKERS.iter().find(|m| line.contains(**m)) {
                if allow_external.contains(&f.as_str()) {
                    rep.allowed_external += 1;
                } else {
                    let at = line.find(m).unwrap_or(0);
                    let lo = line[..at]
                        .char_indices()
                        .rev()
                        .nth(30)
                        .map_or(0, |(j, _)| j);
                    let text: String = line[lo..].chars().take(80).collect();
                    rep.findings.push(Finding::External {
                        file: f.clone(),
                        line: i + 1,
                        text,
                    });
                }
            }
        }
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("1. GGUF container"), "1-gguf-container");
        assert_eq!(
            slug("PTQ1_0 (id 143): digit order"),
            "ptq1_0-id-143-digit-order"
        );
    }

    #[test]
    fn finds_citations_and_anchors() {
        let t = "see spec/codecs.md#ptq1-0-digit-order and spec/gates.json.\nnot myspec/x.md";
        let c = citations(t);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].path, "spec/codecs.md");
        assert_eq!(c[0].anchor.as_deref(), Some("ptq1-0-digit-order"));
        assert_eq!(c[1].path, "spec/gates.json");
        let a = anchors("# Title\n<a id=\"x-y\"></a>\n```\n# not a heading\n```\n");
        assert!(a.contains("title") && a.contains("x-y") && !a.contains("not-a-heading"));
    }
}
