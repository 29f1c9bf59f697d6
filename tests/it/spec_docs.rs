//! The specification documents in `spec/*.md`: generated regions match the tables, every
//! citation in the repository resolves inside it, and the reader guide's worked C adapter passes
//! `check-reader` on its declared subset (with a negative control that must fail). The
//! renderer's own checks (`spec_docs` is crate-private) are crate unit tests
//! (`src/tests/spec_docs.rs`).

use crate::common::{cli_path as bin, repo_root as root};
use ninfer_ternary::spec::citations;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files that may mention the team's out-of-tree research notes (design history). Keep it small.
const ALLOW_EXTERNAL: &[&str] = &[];

/// Tracked files (git), or every file outside `target/` and `.git/` when git is unavailable.
fn tracked_files(root: &Path) -> Vec<String> {
    if let Ok(out) = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
    {
        if out.status.success() && !out.stdout.is_empty() {
            return String::from_utf8_lossy(&out.stdout)
                .split('\0')
                .filter(|s| !s.is_empty() && root.join(s).is_file())
                .map(str::to_string)
                .collect();
        }
    }
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
            if rel == "target" || rel == ".git" || rel.starts_with(".venv") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut v = Vec::new();
    walk(root, root, &mut v);
    v.sort();
    v
}

/// Copies `spec/` into a temporary directory.
fn spec_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("spec");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(root().join("spec")).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    tmp
}

#[test]
fn a_hand_edited_region_fails_spec_check() {
    let tmp = spec_copy();
    let dir = tmp.path().join("spec");
    let ok = Command::new(bin())
        .args(["spec", "--check", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    // Edit one cell inside a generated region: the PTQ1_0 block size in the ggml type table.
    let p = dir.join("ggml-types.md");
    let text = std::fs::read_to_string(&p).unwrap();
    let edited = text.replacen("| `PTQ1_0` | 128 | 28 |", "| `PTQ1_0` | 128 | 26 |", 1);
    assert_ne!(edited, text, "the edit must hit the generated table");
    std::fs::write(&p, &edited).unwrap();
    // That exactly this region is stale is the library's half: the same-named crate unit test.
    let bad = Command::new(bin())
        .args(["spec", "--check", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("region 'ggml_types'"));

    // Prose outside the regions is free to change; --write restores the region.
    let w = Command::new(bin())
        .args(["spec", "--write", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(w.status.success());
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
}

#[test]
fn every_citation_in_the_repository_resolves_inside_it() {
    let root = root();
    let files = tracked_files(&root);
    let rep = citations::check(&root, &files, ALLOW_EXTERNAL);
    let listing: Vec<String> = rep.findings.iter().map(|f| f.to_string()).collect();
    assert!(
        rep.findings.is_empty(),
        "{} citation problems:\n{}",
        listing.len(),
        listing.join("\n")
    );
    eprintln!(
        "{} files, {} citations ({} with an anchor), {} allow-listed external mentions",
        rep.files, rep.citations, rep.anchored, rep.allowed_external
    );
    assert!(rep.anchored > 100, "anchored citations: {}", rep.anchored);
}

#[test]
fn manifest_spec_refs_cite_spec_documents() {
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("conformance/MANIFEST.json")).unwrap(),
    )
    .unwrap();
    let mut n = 0;
    for c in m["cases"].as_array().unwrap() {
        for r in c["spec_refs"].as_array().into_iter().flatten() {
            let r = r.as_str().unwrap();
            assert!(r.starts_with("spec/"), "{}: spec_ref {r:?}", c["id"]);
            let cited = citations::citations(r);
            assert!(
                cited
                    .first()
                    .is_some_and(|x| x.anchor.is_some() || x.path.ends_with(".json")),
                "{}: spec_ref {r:?} names no anchor",
                c["id"]
            );
            n += 1;
        }
    }
    assert!(n > 300, "spec_refs: {n}");
}

#[test]
fn dangling_and_external_citations_are_caught() {
    let tmp = spec_copy();
    let r = tmp.path();
    // A document without one of its anchors, and files citing it, a missing file and the notes.
    let codecs = std::fs::read_to_string(r.join("spec/codecs.md")).unwrap();
    let cut = codecs.replace("<a id=\"ptq1-0-digit-order\"></a>", "");
    let cut = cut.replace("### Digit order", "### Digit sequence");
    std::fs::write(r.join("spec/codecs.md"), cut).unwrap();
    // Spelled in pieces so that this file itself holds no dangling or external citation.
    let ext = concat!("see FORMATS", ".md §2 and ../shared", "/docs/x\n");
    let missing = concat!("spec", "/nope.md");
    std::fs::write(
        r.join("a.rs"),
        format!(
            "// spec/codecs.md#ptq1-0-digit-formula ok\n// spec/codecs.md#ptq1-0-digit-order gone\n// {missing}#x\n// {ext}"
        ),
    )
    .unwrap();
    let files = vec!["a.rs".to_string(), "spec/codecs.md".to_string()];
    let rep = citations::check(r, &files, &[]);
    let kinds: Vec<String> = rep.findings.iter().map(|f| f.to_string()).collect();
    assert_eq!(rep.findings.len(), 3, "{kinds:#?}");
    assert!(
        matches!(&rep.findings[0], citations::Finding::MissingAnchor { anchor, line: 2, .. } if anchor == "ptq1-0-digit-order")
    );
    assert!(
        matches!(&rep.findings[1], citations::Finding::MissingFile { cited, .. } if cited == missing)
    );
    assert!(matches!(
        &rep.findings[2],
        citations::Finding::External { line: 4, .. }
    ));
    // The allow-list exempts a named file from the external check only.
    let rep = citations::check(r, &files, &["a.rs"]);
    assert_eq!(rep.findings.len(), 2);
    assert_eq!(rep.allowed_external, 1);
}

/// Compiles the worked adapter of conformance/README.md with the system C compiler.
fn build_c_example(out: &Path, defines: &[&str]) -> Option<PathBuf> {
    let src = root().join("conformance/adapters/c_example/reader.c");
    let exe = out.join(if defines.is_empty() {
        "reader"
    } else {
        "reader_wrong"
    });
    let status = Command::new("cc")
        .args(["-O2", "-std=c99", "-Wall", "-Werror"])
        .args(defines)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status();
    match status {
        Ok(s) if s.success() => Some(exe),
        Ok(s) => panic!("cc failed on {}: {s}", src.display()),
        Err(e) => {
            // No C compiler: say so loudly rather than pass silently.
            eprintln!("SKIPPED: no system C compiler ({e})");
            None
        }
    }
}

fn check_reader(exe: &Path, json: &Path) -> (Option<i32>, serde_json::Value) {
    let out = Command::new(bin())
        .arg("check-reader")
        .arg("--adapter")
        .arg(exe)
        .arg("--corpus")
        .arg(root().join("conformance"))
        .arg("--capabilities")
        .arg(root().join("conformance/adapters/c_example/capabilities.json"))
        .arg("--json")
        .arg(json)
        .arg("--quiet")
        .output()
        .unwrap();
    let v = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (out.status.code(), v)
}

fn statuses(v: &serde_json::Value, status: &str) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == status)
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_worked_c_adapter_passes_its_declared_subset() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(exe) = build_c_example(tmp.path(), &[]) else {
        return;
    };
    let (code, v) = check_reader(&exe, &tmp.path().join("good.json"));
    assert_eq!(code, Some(0), "{:#}", v["summary"]);
    // conformance/README.md quotes this run's summary: it must be what the tool prints.
    let doc = std::fs::read_to_string(root().join("conformance/README.md")).unwrap();
    let s = &v["summary"];
    let quoted = format!(
        "Expected: `{} passed, {} failed, {} skipped`",
        s["passed"], s["failed"], s["skipped"]
    );
    assert!(
        doc.contains(&quoted),
        "conformance/README.md must say {quoted}"
    );
    let passed = statuses(&v, "pass");
    assert!(statuses(&v, "fail").is_empty());
    // Every PTQ1_0 / PQ2_0 codec case ran and passed; everything else was declared unsupported.
    assert!(passed.len() >= 26, "passed {}", passed.len());
    assert!(passed
        .iter()
        .all(|id| id.starts_with("codec/") && (id.contains("ptq1_0") || id.contains("pq2_0"))));
    assert!(passed.contains(&"codec/y_ptq1_0_trits_all".to_string()));
    assert!(passed.contains(&"codec/y_pq2_0_code3".to_string()));

    // Negative control: the same adapter with PTQ1_0 trits read sequentially must fail the
    // staged-order cases and still pass PQ2_0.
    let wrong = build_c_example(tmp.path(), &["-DWRONG_ORDER"]).unwrap();
    let (code, v) = check_reader(&wrong, &tmp.path().join("wrong.json"));
    assert_eq!(code, Some(1));
    let failed = statuses(&v, "fail");
    for id in [
        "codec/y_ptq1_0_random",
        "codec/y_ptq1_0_trits_all",
        "codec/y_ptq1_0_vector_pattern",
        "codec/y_ptq1_0_noncanonical",
    ] {
        assert!(
            failed.contains(&id.to_string()),
            "{id} must fail: {failed:?}"
        );
    }
    assert!(failed.iter().all(|id| id.contains("ptq1_0")), "{failed:?}");
    assert!(statuses(&v, "pass").contains(&"codec/y_pq2_0_random".to_string()));
}

/// Paths the Markdown may name although they are not files here (file, path): candle-core's
/// quantized GGUF reader quoted in conformance/INTEROP.md. Anything else named `src/…rs`,
/// `tests/…rs` or `scripts/…` must exist in this repository.
const EXTERNAL_PATHS: &[(&str, &str)] = &[
    ("conformance/INTEROP.md", "src/quantized/gguf_file.rs"),
    ("conformance/INTEROP.md", "src/quantized/mod.rs"),
];

/// The repository paths `text` names, with their 1-based line: every `tests/…rs`, `src/…rs`
/// and `scripts/…` that does not continue another path (`ggml/src/x.rs`, `a-src/…`). Paths
/// spelled as patterns (`src/cuda/kernels/*.cu`, `{h,cpp}`) are not single files and are left
/// out; a trailing `.` or `::test` is not part of the path.
fn named_paths(text: &str) -> Vec<(usize, String)> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (i, _) in line.match_indices(['t', 's']) {
            let rest = &line[i..];
            let Some(root) = ["tests/", "src/", "scripts/"]
                .into_iter()
                .find(|r| rest.starts_with(r))
            else {
                continue;
            };
            if line[..i].chars().next_back().is_some_and(path_char) {
                continue;
            }
            let len = rest.find(|c: char| !path_char(c)).unwrap_or(rest.len());
            if rest[len..].starts_with(['*', '{', '<']) {
                continue;
            }
            let p = rest[..len].trim_end_matches('.');
            let file_like = if root == "scripts/" {
                p.len() > root.len()
            } else {
                p.ends_with(".rs")
            };
            if file_like {
                out.push((n + 1, p.to_string()));
            }
        }
    }
    out
}

/// The named paths of `text` (a Markdown file at `md`, relative to `root`) that exist neither
/// from the repository root nor from the file's own directory.
fn missing_paths(root: &Path, md: &str, text: &str) -> Vec<String> {
    let dir = Path::new(md).parent().unwrap_or(Path::new(""));
    named_paths(text)
        .into_iter()
        .filter(|(_, p)| !EXTERNAL_PATHS.contains(&(md, p.as_str())))
        .filter(|(_, p)| !root.join(p).exists() && !root.join(dir).join(p).exists())
        .map(|(line, p)| format!("{md}:{line}: {p}"))
        .collect()
}

#[test]
fn every_source_path_named_in_the_markdown_exists() {
    let root = root();
    let mut named = 0;
    let mut missing = Vec::new();
    for md in tracked_files(&root).iter().filter(|f| f.ends_with(".md")) {
        let text = std::fs::read_to_string(root.join(md)).unwrap();
        named += named_paths(&text).len();
        missing.extend(missing_paths(&root, md, &text));
    }
    // Not blind: the README alone names dozens of source files.
    assert!(named > 50, "only {named} paths found");
    assert!(
        missing.is_empty(),
        "paths named in Markdown that do not exist (moved? tests live in tests/it/<module>.rs):\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_stale_source_path_in_markdown_is_caught() {
    // Negative control: the old flat test path and a removed script are named; a path inside
    // another project (`ggml/src/…`), a pattern and a path relative to the file's directory are
    // not flagged, and neither are the existing ones.
    let root = root();
    let text = concat!(
        "Backed by `tests/hostile_io.rs` and scripts/no-such.sh.\n",
        "Now in `tests/it/hostile_io.rs` (`tests/it/hostile_io.rs::ok`), scripts/conformance.sh.\n",
        "Upstream: ggml/src/gguf.cpp, llama.cpp src/llama-model.cpp, `src/cuda/kernels/*.cu`.\n",
        "The fuzz crate's src/structured.rs.\n",
    );
    assert_eq!(
        named_paths(text),
        [
            (1, "tests/hostile_io.rs".to_string()),
            (1, "scripts/no-such.sh".to_string()),
            (2, "tests/it/hostile_io.rs".to_string()),
            (2, "tests/it/hostile_io.rs".to_string()),
            (2, "scripts/conformance.sh".to_string()),
            (4, "src/structured.rs".to_string()),
        ]
    );
    assert_eq!(
        missing_paths(&root, "fuzz/README.md", text),
        [
            "fuzz/README.md:1: tests/hostile_io.rs",
            "fuzz/README.md:1: scripts/no-such.sh"
        ]
    );
    // The same text at the root: src/structured.rs is not a root path.
    assert_eq!(missing_paths(&root, "NOTES.md", text).len(), 3);
}

/// Entries of a known-failures / expected file: case ids (without their pinned reasons),
/// comments and blank lines dropped.
fn listed(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| l.split('#').next().unwrap().split_whitespace().next())
        .map(String::from)
        .collect()
}

/// Every count the docs quote about the corpus and the readers' recorded failures, checked
/// against the manifest and the lists: README's case total, family table and stub table;
/// INTEROP.md's "N known failures (`adapters/R/known-failures.txt`; by rule layer: ...)" for
/// each real reader. (The matrices themselves are gated by scripts/reader-matrix.sh.) Returns
/// the mismatches so the negative control below can run it on an edited copy.
fn doc_count_mismatches(readme: &str, interop: &str) -> Vec<String> {
    let r = root();
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(r.join("conformance/MANIFEST.json")).unwrap(),
    )
    .unwrap();
    let cases = m["cases"].as_array().unwrap();
    let layer_of = |id: &str| {
        cases
            .iter()
            .find(|c| c["id"] == id)
            .and_then(|c| c["rule_layer"].as_str())
            .unwrap_or("-")
            .to_string()
    };
    let mut bad = Vec::new();
    fn want(bad: &mut Vec<String>, what: String, got: Option<u64>, expected: u64) {
        if got != Some(expected) {
            bad.push(format!(
                "{what}: docs say {got:?}, the corpus/lists say {expected}"
            ));
        }
    }
    let num_before = |text: &str, tail: &str| -> Option<u64> {
        let at = text.find(tail)?;
        let head = text[..at].trim_end();
        let digits: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.chars().rev().collect::<String>().parse().ok()
    };
    want(
        &mut bad,
        "README case total".into(),
        num_before(readme, " cases) with\n`MANIFEST.json`"),
        cases.len() as u64,
    );
    for (fam, c) in m["families"].as_object().unwrap() {
        let row = format!(
            "| {fam} | {} | {} | {} | {} |",
            c["cases"], c["y"], c["n"], c["i"]
        );
        if !readme.contains(&row) {
            bad.push(format!("README family table lacks '{row}'"));
        }
    }
    let total = cases.len();
    let y = cases
        .iter()
        .filter(|c| c["expect"]["outcome"] == "accept")
        .count();
    for (label, stub, n) in [
        ("accept-all", "accept_all", total),
        ("crash (SIGSEGV)", "crash", total),
        ("garbage output", "garbage", total),
        ("reject-all", "reject_all", y),
    ] {
        let listed_n = listed(&r.join(format!("conformance/adapters/stubs/{stub}.expected"))).len();
        want(
            &mut bad,
            format!("stubs/{stub}.expected vs the manifest"),
            Some(listed_n as u64),
            n as u64,
        );
        if !readme.contains(&format!("| {label} | {n} ")) {
            bad.push(format!("README stub row '{label}' does not say {n}"));
        }
    }
    let flat = interop.split_whitespace().collect::<Vec<_>>().join(" ");
    for reader in ["hf_gguf", "gguf_inspect", "candle", "gguf_py"] {
        let ids = listed(&r.join(format!("conformance/adapters/{reader}/known-failures.txt")));
        let cite = format!(" known failures (`adapters/{reader}/known-failures.txt`");
        want(
            &mut bad,
            format!("INTEROP.md: {reader} known failures"),
            num_before(&flat, &cite),
            ids.len() as u64,
        );
        if let Some(at) = flat.find(&cite) {
            let rest = &flat[at + cite.len()..];
            if let Some(by) = rest.strip_prefix("; by rule layer: ") {
                for layer in ["mainline", "loader", "recommended", "spec"] {
                    let n = ids.iter().filter(|i| layer_of(i) == layer).count() as u64;
                    let end = by.find(')').unwrap_or(by.len());
                    want(
                        &mut bad,
                        format!("INTEROP.md: {reader} known failures of layer {layer}"),
                        num_before(&by[..end], &format!(" {layer}")),
                        n,
                    );
                }
            }
        }
    }
    bad
}

#[test]
fn docs_quote_the_corpus_and_known_failure_counts() {
    let r = root();
    let readme = std::fs::read_to_string(r.join("README.md")).unwrap();
    let interop = std::fs::read_to_string(r.join("conformance/INTEROP.md")).unwrap();
    let bad = doc_count_mismatches(&readme, &interop);
    assert!(
        bad.is_empty(),
        "stale counts in the docs:\n{}",
        bad.join("\n")
    );
    // Negative control: one stale number in each document is caught.
    let total = readme
        .split(" cases) with")
        .next()
        .and_then(|h| h.rsplit(", ").next())
        .unwrap()
        .to_string();
    let stale_readme = readme.replacen(&format!(", {total} cases) with"), ", 1 cases) with", 1);
    let flat = interop.split_whitespace().collect::<Vec<_>>().join(" ");
    let stale_interop = flat.replacen(
        " known failures (`adapters/candle/",
        "0 known failures (`adapters/candle/",
        1,
    );
    assert_ne!(
        stale_interop, flat,
        "the negative control edits the candle count"
    );
    let bad = doc_count_mismatches(&stale_readme, &stale_interop);
    assert!(
        bad.iter().any(|b| b.contains("README case total"))
            && bad.iter().any(|b| b.contains("candle known failures")),
        "{bad:?}"
    );
}
