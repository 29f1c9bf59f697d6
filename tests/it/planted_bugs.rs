//! The planted-bug benchmark is never in a normal build: this binary (the root crate's default
//! build) lacks the feature and no feature of the manifest turns it on. Its bookkeeping and
//! witnesses are checked with testkit (`testkit/tests/fuzz/planted_bugs.rs`).

use crate::common::repo_root;

#[test]
fn planted_bugs_are_never_in_a_normal_build() {
    assert!(!cfg!(feature = "planted-bugs"));
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let default = manifest
        .lines()
        .find(|l| l.starts_with("default = "))
        .expect("a default feature list");
    assert!(!default.contains("planted"), "{default}");
    // No other feature of the root crate turns it on.
    for l in manifest.lines().filter(|l| l.contains("planted-bugs")) {
        assert!(
            l.starts_with("planted-bugs = []") || l.starts_with('#'),
            "Cargo.toml enables planted-bugs: {l}"
        );
    }
}
