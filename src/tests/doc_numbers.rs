//! Numbers the README and the conformance documents quote about the corpus are the corpus's
//! own: each claim is recomputed here from `conformance/MANIFEST.json` (or the catalog it is
//! generated from), and every "N cases" phrase in those documents must be one of the checked
//! claims or an explained exception, so a new unchecked count fails too.
//! (The c_example run's "N passed, 0 failed, M skipped" is checked against the real run in
//! `spec_docs::the_worked_c_adapter_passes_its_declared_subset`.)

use super::fixtures::repo_root;

const DOCS: &[&str] = &[
    "README.md",
    "conformance/README.md",
    "conformance/PROTOCOL.md",
    "benches/RESULTS.md",
];

fn manifest() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("conformance/MANIFEST.json")).unwrap(),
    )
    .unwrap()
}

/// Every `<number> cases`/`<number>-case` phrase with its document and line text.
fn case_counts(doc: &str, text: &str) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit()
                && (i == 0
                    || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-' || b[i - 1] == b'.'))
            {
                let start = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b',') {
                    i += 1;
                }
                let n: u64 = line[start..i].replace(',', "").parse().unwrap_or(0);
                let rest = &line[i..];
                let rest = rest.strip_prefix(" corpus").unwrap_or(rest);
                if rest.starts_with(" cases")
                    || rest.starts_with("-case")
                    || rest.starts_with(" case ")
                {
                    out.push((doc.to_string(), n, line.to_string()));
                }
            } else {
                i += 1;
            }
        }
    }
    out
}

/// The claims: (a fragment that identifies the sentence, the number the corpus says).
fn claims() -> Vec<(&'static str, u64)> {
    let m = manifest();
    let cases = m["cases"].as_array().unwrap();
    let hostile = crate::corpus::catalogs::gguf_hostile::hostile_cases().len() as u64;
    let values = cases
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("ninfer/y_values_"))
        .count() as u64;
    vec![
        ("generated, deterministic corpus", cases.len() as u64),
        ("carry an independently", values),
        ("`gguf::hostile_cases`:", hostile),
        ("`RESULT: PASSED` (", cases.len() as u64),
        ("`pending` is empty", cases.len() as u64),
        ("(whole corpus: ", cases.len() as u64),
        ("files, ", cases.len() as u64),
    ]
}

/// Phrases with a number of cases that are not counts of this corpus, and why.
const NOT_CORPUS_COUNTS: &[(&str, &str)] = &[
    (
        "id-42 cases",
        "the legacy id-42 cases are named by feature, not counted",
    ),
    (
        "five id-42 cases",
        "a reader's expected failures, fixed by the protocol",
    ),
    ("0 cases", "an example of a summary line"),
    ("0 case", "an example of a summary line"),
    (
        "cases then",
        "a dated measurement: the count at the commit named beside it, not today's count",
    ),
];

/// The claims of `docs` that disagree with the corpus, and the unexplained counts.
fn problems(docs: &[(String, String)]) -> Vec<String> {
    let claims = claims();
    let mut out = Vec::new();
    for (doc, text) in docs {
        for (_, n, line) in case_counts(doc, text) {
            if let Some((frag, want)) = claims.iter().find(|(f, _)| line.contains(f)) {
                if n != *want && !NOT_CORPUS_COUNTS.iter().any(|(p, _)| line.contains(p)) {
                    out.push(format!(
                        "{doc}: says {n} ({frag}); the corpus has {want}: {line}"
                    ));
                }
            } else if !NOT_CORPUS_COUNTS.iter().any(|(p, _)| line.contains(p)) {
                out.push(format!("{doc}: '{n} cases' is not a checked claim (add it to claims() or NOT_CORPUS_COUNTS): {line}"));
            }
        }
    }
    out
}

fn read_docs() -> Vec<(String, String)> {
    DOCS.iter()
        .map(|d| {
            (
                d.to_string(),
                std::fs::read_to_string(repo_root().join(d)).unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_corpus_count_in_the_docs_is_the_corpus_count() {
    let docs = read_docs();
    let p = problems(&docs);
    assert!(p.is_empty(), "{}", p.join("\n"));
    // Each claim is actually present (a reworded sentence must move its check along).
    let all: String = docs.iter().map(|(_, t)| t.as_str()).collect();
    for (frag, _) in claims() {
        assert!(all.contains(frag), "no sentence contains '{frag}' any more");
    }
}

/// Negative controls: a wrong count, an unexplained count, both caught.
#[test]
fn a_stale_or_unchecked_count_fails() {
    let total = claims()[0].1;
    let wrong = format!(
        "a generated, deterministic corpus (1 MB, {} cases) with",
        total + 1
    );
    let p = problems(&[("README.md".into(), wrong)]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains(&format!("the corpus has {total}")), "{p:?}");
    let p = problems(&[("README.md".into(), "we ran 12 cases yesterday".into())]);
    assert_eq!(p.len(), 1, "{p:?}");
    let right = format!("a generated, deterministic corpus (1 MB, {total} cases) with");
    assert!(problems(&[("README.md".into(), right)]).is_empty());
}

#[test]
fn the_hostile_catalog_counts_in_the_readme_are_the_catalogs() {
    use crate::corpus::catalogs::gguf_hostile::{accepted_controls, hostile_cases};
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let want = format!(
        "(`gguf::hostile_cases`: {} cases + {} accepted controls)",
        hostile_cases().len(),
        accepted_controls().len()
    );
    assert!(readme.contains(&want), "README.md must say {want}");
}

/// The per-family counts a text quotes as `(today: name N, …, name N — …)`.
fn quoted_family_counts(text: &str) -> Vec<(String, u64)> {
    let start = text
        .find("(today: ")
        .expect("PROTOCOL.md quotes the family counts")
        + 8;
    let quoted = &text[start..start + text[start..].find(" —").unwrap()];
    quoted
        .split(',')
        .map(|p| {
            let mut w = p.split_whitespace();
            let name = w.next().unwrap().to_string();
            (name, w.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// `MANIFEST.json` `families` as (family, case count), in the manifest's (sorted) order.
fn manifest_family_counts() -> Vec<(String, u64)> {
    let m = manifest();
    m["families"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["cases"].as_u64().unwrap()))
        .collect()
}

/// PROTOCOL.md quotes the per-family counts of `MANIFEST.json` `families`: each must match.
#[test]
fn the_family_counts_in_the_protocol_are_the_manifest_counts() {
    let text = std::fs::read_to_string(repo_root().join("conformance/PROTOCOL.md")).unwrap();
    assert_eq!(
        quoted_family_counts(&text),
        manifest_family_counts(),
        "PROTOCOL.md family counts vs MANIFEST.json families"
    );
    // Negative control: one family's count off by one is seen.
    let (name, n) = manifest_family_counts()[0].clone();
    let stale = text.replacen(&format!("{name} {n}"), &format!("{name} {}", n + 1), 1);
    assert_ne!(quoted_family_counts(&stale), manifest_family_counts());
}

/// The corpus size as generated: every case file and input plus MANIFEST.json, in MB (10^6 B)
/// rounded to 0.1.
fn corpus_mb() -> String {
    let m = manifest();
    let root = repo_root().join("conformance");
    let mut files = std::collections::BTreeSet::new();
    for c in m["cases"].as_array().unwrap() {
        files.insert(c["file"].as_str().unwrap().to_string());
        for i in c["inputs"].as_array().into_iter().flatten() {
            files.insert(i.as_str().unwrap().to_string());
        }
    }
    files.insert("MANIFEST.json".into());
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(root.join(f)).unwrap().len())
        .sum();
    format!("{:.1}", bytes as f64 / 1e6)
}

/// Every "corpus (N MB" / "corpus is N MB" in `text` with its number.
fn corpus_sizes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for pat in ["corpus (", "corpus is "] {
        for (i, _) in text.match_indices(pat) {
            let rest = &text[i + pat.len()..];
            let num: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            if !num.is_empty() && rest[num.len()..].starts_with(" MB") {
                out.push(num);
            }
        }
    }
    out
}

/// The README's corpus sizes are the corpus's (issue #35: it said both 24.5 and 24.4 MB).
#[test]
fn the_corpus_size_in_the_readme_is_measured() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let want = corpus_mb();
    let said = corpus_sizes(&readme);
    assert!(said.len() >= 2, "{said:?}");
    assert!(
        said.iter().all(|s| *s == want),
        "README says {said:?}; the corpus is {want} MB"
    );
    // Negative control: one stale figure is seen.
    let stale = readme.replacen(&format!("corpus is {want} MB"), "corpus is 1.0 MB", 1);
    assert!(corpus_sizes(&stale).iter().any(|s| *s != want));
}

/// `(reference, correct-but-unusual, wrong)` kernel counts of `spec/kernels.json` and
/// `spec/kernel_variants.json`, the lists `check-kernel --builtin` runs.
fn spec_kernel_counts() -> (usize, usize, usize) {
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(repo_root().join(p)).unwrap()).unwrap()
    };
    let (k, kv) = (read("spec/kernels.json"), read("spec/kernel_variants.json"));
    let len = |v: &serde_json::Value, key: &str| v[key].as_array().map_or(0, Vec::len);
    (
        len(&k, "reference_kernels"),
        len(&kv, "unusual_correct"),
        len(&kv, "wrong_variants"),
    )
}

/// The numbers a text quotes as "ships R reference kernels, U correct-but-unusual kernels
/// (...) ... and W wrong variants", or `None` if it has no such sentence.
fn quoted_kernel_counts(text: &str) -> Option<(usize, usize, usize)> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let after = |s: &str, key: &str| -> Option<usize> {
        let end = s.find(key)?;
        s[..end].split_whitespace().last()?.parse().ok()
    };
    let start = flat.find("ships ")?;
    let s = &flat[start..];
    let r = after(s, " reference kernels")?;
    let u = after(s, " correct-but-unusual kernels")?;
    let w = after(s, " wrong variants")?;
    Some((r, u, w))
}

#[test]
fn the_kernel_counts_in_the_readme_are_the_spec_counts() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let quoted = quoted_kernel_counts(&readme).expect("README.md quotes the shipped kernel counts");
    assert_eq!(
        quoted,
        spec_kernel_counts(),
        "README.md's (reference, unusual, wrong) kernel counts vs spec/kernels.json + kernel_variants.json"
    );
}

#[test]
fn a_stale_kernel_count_is_read_as_what_it_says() {
    // Negative control: the parser reads the numbers the sentence states, so a stale sentence
    // yields numbers that differ from the spec's (never a default that could match).
    let (r, u, w) = spec_kernel_counts();
    let stale = format!(
        "The crate ships {r} reference kernels, {} correct-but-unusual kernels (grid-stride,\nKahan) that must pass, and {w} wrong variants (value map)",
        u + 1
    );
    assert_eq!(quoted_kernel_counts(&stale), Some((r, u + 1, w)));
    assert_ne!(quoted_kernel_counts(&stale), Some(spec_kernel_counts()));
    assert_eq!(quoted_kernel_counts("no such sentence"), None);
}
