//! The layout of `tests/`: integration tests are modules of this one binary (`tests/it/`), and
//! the only other binary is the libtest-mimic corpus driver. A new `tests/*.rs` file would
//! silently become an extra binary (another link on every build); this test names it instead.

use crate::common::repo_root;

/// Top-level entries of `tests/` that are not part of the layout.
fn strays(entries: &[String]) -> Vec<&String> {
    const ALLOWED: &[&str] = &["it", "conformance.rs"];
    entries
        .iter()
        .filter(|e| !ALLOWED.contains(&e.as_str()))
        .collect()
}

#[test]
fn tests_holds_only_the_it_binary_and_the_conformance_driver() {
    let entries: Vec<String> = std::fs::read_dir(repo_root().join("tests"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(entries.iter().any(|e| e == "it"), "{entries:?}");
    let strays = strays(&entries);
    assert!(
        strays.is_empty(),
        "move {strays:?} into tests/it/ as a module (and list it in tests/it/main.rs)"
    );
}

/// The `.rs` files of `tests/it/` that `main.rs` does not declare with `mod <name>;`.
fn undeclared<'a>(main_rs: &str, files: &'a [String]) -> Vec<&'a String> {
    files
        .iter()
        .filter(|f| match f.strip_suffix(".rs") {
            Some("main") | None => false,
            Some(module) => !main_rs
                .lines()
                .any(|l| l.trim() == format!("mod {module};")),
        })
        .collect()
}

#[test]
fn every_module_file_in_it_is_declared_in_main() {
    let dir = repo_root().join("tests/it");
    let main_rs = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.len() > 10, "{files:?}");
    let missing = undeclared(&main_rs, &files);
    assert!(
        missing.is_empty(),
        "not compiled (no `mod` in main.rs): {missing:?}"
    );
}

#[test]
fn an_undeclared_module_file_is_reported() {
    // Negative control: `b.rs` has no `mod b;` (a comment mentioning it does not count).
    let files = ["main.rs", "a.rs", "b.rs", "snapshots"].map(String::from);
    assert_eq!(undeclared("mod a;\n// mod b;\n", &files), [&files[2]]);
}

#[test]
fn a_stray_test_file_is_reported() {
    // Negative control: a new top-level test file and a stray directory are both named.
    let entries = ["it", "conformance.rs", "new_area.rs", "data"].map(String::from);
    assert_eq!(strays(&entries), [&entries[2], &entries[3]]);
}
