//! The planted-bug benchmark's bookkeeping (src/planted.rs, fuzz/planted.sh): one list of
//! bugs, one `planted!` site per bug, never compiled into a normal build, and a witness per
//! bug (the find of a benchmark run) that the real parsers handle cleanly. That the witnesses
//! do crash the planted build is checked by `fuzz/planted.sh --verify` (CI's short run).

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::repo_root;
use ninfer_ternary_testkit::targets;

/// (bug name, targets) from the BUGS table of src/planted.rs.
fn bug_table() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(repo_root().join("src/planted.rs")).unwrap();
    let mut out = Vec::new();
    let mut name = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("name: \"") {
            name = Some(rest.trim_end_matches("\",").to_string());
        } else if let Some(rest) = l.strip_prefix("targets: &[") {
            let targets = rest
                .trim_end_matches("],")
                .split(',')
                .map(|t| t.trim().trim_matches('"').to_string())
                .filter(|t| !t.is_empty())
                .collect();
            out.push((name.take().expect("name before targets"), targets));
        }
    }
    out
}

/// Bug name → the `file:line`s of its `planted!` sites in src/.
fn sites() -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut stack = vec![repo_root().join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if let Some(rest) = line.trim().strip_prefix("planted!(\"") {
                        let name = rest.split('"').next().unwrap().to_string();
                        out.entry(name)
                            .or_default()
                            .push(format!("{}:{}", p.display(), i + 1));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_planted_bug_has_exactly_one_site_and_every_site_is_listed() {
    let table = bug_table();
    assert!(table.len() >= 8, "only {} planted bugs", table.len());
    let sites = sites();
    for (bug, targets) in &table {
        let at = sites.get(bug).cloned().unwrap_or_default();
        assert_eq!(
            at.len(),
            1,
            "bug {bug} has {} planted! sites: {at:?}",
            at.len()
        );
        for t in targets {
            assert!(
                targets::target(t).is_some(),
                "bug {bug} names an unknown fuzz target {t}"
            );
        }
    }
    for (name, at) in &sites {
        assert!(
            table.iter().any(|(b, _)| b == name),
            "planted!(\"{name}\") at {at:?} is not in src/planted.rs BUGS"
        );
    }
}

#[test]
fn every_witness_is_handled_cleanly_by_the_real_parsers() {
    let dir = repo_root().join("fuzz/planted/witness");
    let mut checked = 0;
    for (bug, targets) in bug_table() {
        let path = dir.join(&bug);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (every planted bug keeps its witness)",
                path.display()
            )
        });
        let first = targets[0].as_str();
        let replay = targets::target(first).unwrap().replay;
        let r = std::panic::catch_unwind(|| replay(&bytes));
        assert!(
            r.is_ok(),
            "{}: the real {first} checks fail on the witness of {bug}",
            Path::new(&path).display()
        );
        checked += 1;
    }
    assert!(checked >= 8);
}
