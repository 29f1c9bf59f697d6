//! `corpus diff-fuzz` finds a known disagreement (the accept-everything stub), finds none
//! against the reference itself (negative control), and is deterministic given its seed.

use crate::common::repo_root as root;
use std::path::Path;
use std::process::Command;

/// Runs diff-fuzz into `dir/out` (a folder it creates: an existing one needs --force).
fn diff_fuzz(adapter: &str, seed: u64, dir: &Path, extra: &[&str]) -> (bool, serde_json::Value) {
    let out = dir.join("out");
    let st = Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"))
        .current_dir(root())
        .args([
            "corpus",
            "diff-fuzz",
            "--adapter",
            adapter,
            "--iterations",
            "24",
        ])
        .args(["--seed", &seed.to_string(), "--out"])
        .arg(&out)
        .args(extra)
        .status()
        .expect("run diff-fuzz");
    let text = std::fs::read_to_string(out.join("candidates.json")).expect("candidates.json");
    (st.success(), serde_json::from_str(&text).expect("json"))
}

/// A scratch folder removed when the returned guard drops (no leftovers in the temp dir).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ninfer-{name}-"))
        .tempdir()
        .expect("scratch dir")
}

#[test]
fn finds_the_accept_all_stubs_disagreements_and_minimizes_them() {
    let out_guard = scratch("accept_all");
    let out = out_guard.path();
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let (_, doc) = diff_fuzz(stub.to_str().unwrap(), 3, &out, &["--outcome-only"]);
    let cands = doc["candidates"].as_array().unwrap();
    assert!(doc["disagreements"].as_u64().unwrap() > 0, "{doc}");
    assert!(!cands.is_empty());
    for c in cands {
        assert_eq!(c["kind"], "reader-accepts", "{c}");
        assert!(c["reference"].as_str().unwrap().starts_with("reject"));
        let file = out.join("out").join(c["file"].as_str().unwrap());
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes.len() as u64, c["bytes"].as_u64().unwrap());
        assert!(!c["mutations"].as_array().unwrap().is_empty());
    }
}

#[test]
fn reference_against_itself_disagrees_nowhere() {
    let out_guard = scratch("ref");
    let out = out_guard.path();
    let adapter = format!("{} reader-adapter", env!("CARGO_BIN_EXE_ninfer-ternary"));
    let (ok, doc) = diff_fuzz(&adapter, 3, &out, &["--fail-on-disagreement"]);
    assert!(ok, "{doc}");
    assert_eq!(doc["disagreements"], 0);
}

#[test]
fn same_seed_same_candidates() {
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let (a_guard, b_guard) = (scratch("det_a"), scratch("det_b"));
    let (a, b) = (a_guard.path(), b_guard.path());
    let (_, da) = diff_fuzz(stub.to_str().unwrap(), 11, &a, &["--outcome-only"]);
    let (_, db) = diff_fuzz(stub.to_str().unwrap(), 11, &b, &["--outcome-only"]);
    assert_eq!(da["candidates"], db["candidates"]);
}
