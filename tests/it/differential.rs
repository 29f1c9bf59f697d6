//! `corpus diff-fuzz` finds a known disagreement (the accept-everything stub), finds none
//! against the reference itself (negative control), and is deterministic given its seed.

use crate::common::repo_root as root;
use std::path::{Path, PathBuf};
use std::process::Command;

fn diff_fuzz(adapter: &str, seed: u64, out: &Path, extra: &[&str]) -> (bool, serde_json::Value) {
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
        .arg(out)
        .args(extra)
        .status()
        .expect("run diff-fuzz");
    let text = std::fs::read_to_string(out.join("candidates.json")).expect("candidates.json");
    (st.success(), serde_json::from_str(&text).expect("json"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ninfer-diff-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn finds_the_accept_all_stubs_disagreements_and_minimizes_them() {
    let out = scratch("accept_all");
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let (_, doc) = diff_fuzz(stub.to_str().unwrap(), 3, &out, &["--outcome-only"]);
    let cands = doc["candidates"].as_array().unwrap();
    assert!(doc["disagreements"].as_u64().unwrap() > 0, "{doc}");
    assert!(!cands.is_empty());
    for c in cands {
        assert_eq!(c["kind"], "reader-accepts", "{c}");
        assert!(c["reference"].as_str().unwrap().starts_with("reject"));
        let file = out.join(c["file"].as_str().unwrap());
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes.len() as u64, c["bytes"].as_u64().unwrap());
        assert!(!c["mutations"].as_array().unwrap().is_empty());
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn reference_against_itself_disagrees_nowhere() {
    let out = scratch("ref");
    let adapter = format!("{} reader-adapter", env!("CARGO_BIN_EXE_ninfer-ternary"));
    let (ok, doc) = diff_fuzz(&adapter, 3, &out, &["--fail-on-disagreement"]);
    assert!(ok, "{doc}");
    assert_eq!(doc["disagreements"], 0);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn same_seed_same_candidates() {
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let (a, b) = (scratch("det_a"), scratch("det_b"));
    let (_, da) = diff_fuzz(stub.to_str().unwrap(), 11, &a, &["--outcome-only"]);
    let (_, db) = diff_fuzz(stub.to_str().unwrap(), 11, &b, &["--outcome-only"]);
    assert_eq!(da["candidates"], db["candidates"]);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}
