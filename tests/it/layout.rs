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

/// The longest a function in the parsers, the packer and the verifier may be (README
/// "Standards": keep them under ~80 lines so each one can be read and reviewed whole).
const MAX_FN_LINES: usize = 80;

/// The directories the limit holds for.
const LIMITED_DIRS: &[&str] = &["src/gguf", "src/ninfer", "src/pack", "src/verify"];

/// Functions over the limit that another change is splitting: (file, function). Each must still
/// be over the limit (a stale entry fails the test too), so the list only shrinks.
const OVER_LIMIT_FOR_NOW: &[(&str, &str)] = &[];

/// A function found in rustfmt-formatted source: its name, first line (1-based) and length in
/// lines from the `fn` line through its closing brace.
#[derive(Debug, PartialEq)]
struct FnSpan {
    name: String,
    line: usize,
    lines: usize,
}

/// The name of the function a line declares (`pub(crate) const unsafe fn name<...>(`), if any.
fn declared_fn(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    if let Some(r) = rest.strip_prefix("extern \"C\" ") {
        rest = r;
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// Every function with a body in `text`, measured the way rustfmt lays it out: the body ends
/// at the first later line that is the `fn` line's indentation followed by `}`. A signature
/// that ends in `;` (a trait method without a body) is not a function here; a one-line body
/// is one line.
fn functions(text: &str) -> Vec<FnSpan> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = declared_fn(l) else { continue };
        let indent = &l[..l.len() - l.trim_start().len()];
        // The end of the signature: the first line ending in `{` (a body) or `;` (none).
        let Some(sig_end) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';') || t.ends_with('}')
        }) else {
            continue;
        };
        let sig = lines[sig_end].trim_end();
        let end = if sig.ends_with(';') {
            continue;
        } else if sig.ends_with('}') {
            sig_end
        } else {
            let close = format!("{indent}}}");
            match (sig_end + 1..lines.len()).find(|&j| lines[j].trim_end() == close) {
                Some(j) => j,
                None => continue,
            }
        };
        out.push(FnSpan {
            name: name.to_string(),
            line: i + 1,
            lines: end - i + 1,
        });
    }
    out
}

/// The `.rs` files below `dir`, recursively, as paths relative to the repository root.
fn rust_files(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![repo_root().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(repo_root()).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_function_in_the_parsers_packer_or_verifier_exceeds_80_lines() {
    let mut seen = 0;
    let mut over = Vec::new();
    let mut still_over = Vec::new();
    for dir in LIMITED_DIRS {
        for file in rust_files(dir) {
            let text = std::fs::read_to_string(repo_root().join(&file)).unwrap();
            for f in functions(&text) {
                seen += 1;
                if f.lines <= MAX_FN_LINES {
                    continue;
                }
                if OVER_LIMIT_FOR_NOW.contains(&(file.as_str(), f.name.as_str())) {
                    still_over.push((file.clone(), f.name.clone()));
                } else {
                    over.push(format!(
                        "{file}:{} fn {} ({} lines)",
                        f.line, f.name, f.lines
                    ));
                }
            }
        }
    }
    // Not blind: the four directories hold hundreds of functions.
    assert!(seen > 300, "only {seen} functions found");
    assert!(
        over.is_empty(),
        "split these functions (at most {MAX_FN_LINES} lines each): {over:#?}"
    );
    for (file, name) in OVER_LIMIT_FOR_NOW {
        assert!(
            still_over.contains(&(file.to_string(), name.to_string())),
            "{file} fn {name} is within {MAX_FN_LINES} lines now: remove it from OVER_LIMIT_FOR_NOW"
        );
    }
}

#[test]
fn the_function_length_check_flags_an_81_line_function() {
    // Negative control: a synthetic function of 81 lines (fn line, 79 body lines, closing
    // brace) is flagged; one of exactly 80 lines is not.
    let synthetic = |name: &str, body: usize| {
        let mut s = format!("    pub(crate) fn {name}(\n        x: u32,\n    ) -> u32 {{\n");
        for i in 0..body {
            s += &format!("        let _y{i} = x;\n");
        }
        s + "        x\n    }\n"
    };
    // 3 signature lines + body + 1 tail expression + 1 closing brace.
    let long = synthetic("long", 81 - 5);
    let short = synthetic("short", 80 - 5);
    let text = format!(
        "impl A {{\n{long}\n{short}\n    fn decl(&self);\n    fn one(&self) -> u8 {{ 1 }}\n}}\n"
    );
    let found = functions(&text);
    let len = |n: &str| found.iter().find(|f| f.name == n).map(|f| f.lines);
    assert_eq!(len("long"), Some(81), "{found:?}");
    assert_eq!(len("short"), Some(80), "{found:?}");
    assert_eq!(len("one"), Some(1), "{found:?}");
    assert_eq!(len("decl"), None, "a declaration has no body: {found:?}");
    let flagged: Vec<&str> = found
        .iter()
        .filter(|f| f.lines > MAX_FN_LINES)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(flagged, ["long"]);
    assert_eq!(
        declared_fn("    pub const unsafe fn raw<T>(x: T) {"),
        Some("raw")
    );
    assert_eq!(declared_fn("    // fn commented_out() {"), None);
    assert_eq!(declared_fn("    let fnord = 1;"), None);
}
