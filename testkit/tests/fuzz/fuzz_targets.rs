//! One list of fuzz targets: the `[[bin]]` sections of `fuzz/Cargo.toml`. Everything else that
//! names targets must agree with it — the testkit's check table, `fuzz/fuzz_targets/*.rs`, the
//! seed directories, the regression directories, `fuzz/run.sh --list` and the `-max_len` table —
//! and these tests fail, naming the difference, when one of them does not.

use crate::common::repo_root;
use ninfer_ternary_testkit::seeds;
use ninfer_ternary_testkit::targets::{manifest_bins, TARGETS};
use std::collections::BTreeSet;
use std::path::Path;

type Names = BTreeSet<String>;

/// Each list that differs from `reference`, with what it lacks and what it adds.
fn disagreements(reference: (&str, &Names), others: &[(&str, Names)]) -> Vec<String> {
    let (ref_name, want) = reference;
    others
        .iter()
        .filter(|(_, have)| have != want)
        .map(|(name, have)| {
            format!(
                "{name} disagrees with {ref_name}: missing {:?}, extra {:?}",
                want.difference(have).collect::<Vec<_>>(),
                have.difference(want).collect::<Vec<_>>()
            )
        })
        .collect()
}

/// Names of the entries of `dir` that satisfy `keep`, mapped through `name`.
fn entries(dir: &Path, keep: impl Fn(&Path) -> bool, name: impl Fn(&Path) -> String) -> Names {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| keep(p))
        .map(|p| name(&p))
        .collect()
}

fn file_stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn fuzz_manifest() -> String {
    std::fs::read_to_string(repo_root().join("fuzz/Cargo.toml")).unwrap()
}

/// The keys of the manifest's `[package.metadata.fuzz-max-len]` table.
fn max_len_keys(manifest: &str) -> Names {
    let mut in_table = false;
    let mut out = Names::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[package.metadata.fuzz-max-len]";
        } else if in_table {
            if let Some((key, _)) = line.split_once('=') {
                out.insert(key.trim().to_string());
            }
        }
    }
    out
}

#[test]
fn every_list_of_fuzz_targets_agrees_with_the_fuzz_manifest() {
    let fuzz = repo_root().join("fuzz");
    let manifest = fuzz_manifest();
    let bins: Names = manifest_bins(&manifest).into_iter().collect();
    assert!(bins.len() >= 6, "only {bins:?} in fuzz/Cargo.toml");
    let wrappers = entries(
        &fuzz.join("fuzz_targets"),
        |p| p.extension().is_some_and(|e| e == "rs"),
        file_stem,
    );
    let seed_dirs = entries(&fuzz.join("seeds"), |p| p.is_dir(), file_stem);
    let generated: Names = seeds::all().keys().map(|t| t.to_string()).collect();
    let checks: Names = TARGETS.iter().map(|t| t.name.to_string()).collect();
    let listed = std::process::Command::new("bash")
        .arg(fuzz.join("run.sh"))
        .arg("--list")
        .output()
        .expect("bash runs fuzz/run.sh --list");
    assert!(listed.status.success(), "fuzz/run.sh --list failed");
    let run_sh: Names = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let problems = disagreements(
        ("fuzz/Cargo.toml [[bin]]", &bins),
        &[
            ("testkit/src/targets.rs TARGETS", checks),
            ("fuzz/fuzz_targets/*.rs", wrappers),
            ("fuzz/seeds/*", seed_dirs),
            ("testkit seeds::all()", generated),
            ("fuzz/run.sh --list", run_sh),
        ],
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Findings and -max_len entries may exist for some targets only, never for unknown ones.
    let regressions = entries(&fuzz.join("regressions"), |p| p.is_dir(), file_stem);
    let unknown: Vec<_> = regressions.difference(&bins).collect();
    assert!(
        unknown.is_empty(),
        "fuzz/regressions/{unknown:?} is no target"
    );
    let max_len = max_len_keys(&manifest);
    let unknown: Vec<_> = max_len.difference(&bins).collect();
    assert!(
        unknown.is_empty(),
        "fuzz-max-len names unknown targets {unknown:?}"
    );
}

#[test]
fn a_missing_or_extra_target_is_reported() {
    // Negative control for the comparison above: it must name both kinds of difference.
    let want: Names = ["a", "b"].map(String::from).into();
    let same = want.clone();
    let short: Names = ["a", "c"].map(String::from).into();
    let problems = disagreements(("ref", &want), &[("same", same), ("other", short)]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("other"), "{problems:?}");
    assert!(problems[0].contains("missing [\"b\"]"), "{problems:?}");
    assert!(problems[0].contains("extra [\"c\"]"), "{problems:?}");
}

#[test]
fn manifest_bins_reads_only_bin_sections() {
    let manifest = r#"
[package]
name = "not-a-target"

[[bin]]
name = "first"
path = "fuzz_targets/first.rs"

[dependencies]
name = "also-not"

[[bin]]
path = "fuzz_targets/second.rs"
name    =   "second"
"#;
    assert_eq!(manifest_bins(manifest), ["first", "second"]);
    assert_eq!(
        max_len_keys("[package.metadata.fuzz-max-len]\nx = 1\n[[bin]]\nname = \"y\"\n"),
        ["x".to_string()].into()
    );
}
