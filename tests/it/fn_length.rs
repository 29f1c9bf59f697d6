//! No function longer than [`MAX_LINES`] lines (issue #36): from the line of its `fn` to the
//! line of its closing brace, in every Rust file of the crate, its tests, benches, testkit and
//! fuzz targets. Exempt: the files in [`EXEMPT_DIRS`] and the functions in [`EXEMPT_FNS`], each
//! with its reason. A new long function fails here with its file, line and length.

use crate::common::repo_root;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 150;

/// Folders not held to the limit, with the reason (none: src/cuda is held since issue #36).
const EXEMPT_DIRS: &[(&str, &str)] = &[];

/// Single functions held to no limit: (file, function name, reason). Data tables only.
const EXEMPT_FNS: &[(&str, &str, &str)] = &[
    (
        "src/cuda/generate.rs",
        "matrix",
        "data table: one generated kernel case per entry (tag, shape, scale policy, seed) of each class",
    ),
    (
        "src/corpus/catalogs/gguf_hostile.rs",
        "hostile_cases",
        "data table: one entry per hostile GGUF case",
    ),
    (
        "src/corpus/catalogs/ninfer_violations.rs",
        "cases",
        "data table: one entry per .ninfer rule broken",
    ),
    (
        "src/corpus/families/boundaries.rs",
        "cases",
        "data table: one entry per boundary case",
    ),
    (
        "src/corpus/families/gguf.rs",
        "type_cases",
        "data table: one file per decodable ggml type, then the sized-only types",
    ),
    (
        "src/corpus/families/ninfer.rs",
        "layout_cases",
        "data table: one entry per layout case",
    ),
    (
        "src/corpus/families/verify.rs",
        "cases",
        "data table: one entry per verify-family case",
    ),
    (
        "tests/it/cli.rs",
        "argument_mistakes_of_every_command_are_classed",
        "data table: one row per argument mistake of every command",
    ),
    (
        "tests/it/hostile_text.rs",
        "cases",
        "data table: one row per command run on the hostile inputs",
    ),
];

/// `text` with comments and string/char literals blanked to spaces (newlines kept), so that
/// braces and `fn` can be counted on what is left.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // A lone `b` before a quote makes a byte literal (b'x', b"x", br"x").
    let byte_prefix = |i: usize| i > 0 && b[i - 1] == b'b' && (i < 2 || !ident(b[i - 2]));
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && ident(b[i - 1]);
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'r' && (!prev_ident || byte_prefix(i)) && {
            let h = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            b.get(i + 1 + h) == Some(&b'"')
        } {
            // Raw string r#"..."#.
            let h = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', h));
            let body = i + 2 + h;
            let end = (body..b.len())
                .find(|&j| b[j..].starts_with(&close))
                .map_or(b.len(), |j| j + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' && (!prev_ident || byte_prefix(i)) {
            // A char literal ('x', '\n', '\u{1F600}', 'é'); otherwise a lifetime or label.
            let end = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len()).find(|&j| b[j] == b'\'').map(|j| j + 1)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Every function with a body: (name, first line, length in lines).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let line_at = |pos: usize| code[..pos].iter().filter(|&&c| c == b'\n').count() + 1;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].windows(3).position(|w| w == b"fn ") {
        let at = i + p;
        i = at + 3;
        if at > 0 && ident(code[at - 1]) {
            continue;
        }
        let name: String = code[i..]
            .iter()
            .skip_while(|c| c.is_ascii_whitespace())
            .take_while(|&&c| ident(c) || c == b'$')
            .map(|&c| c as char)
            .collect();
        if name.is_empty() {
            continue; // `fn(` pointer types have no space; `fn ` then `(` is not an item
        }
        // The body opens at the first `{` outside parentheses and brackets; a `;` first means
        // a declaration without body.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &c) in code[i..].iter().enumerate() {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'{' if depth == 0 => {
                    open = Some(i + k);
                    break;
                }
                b';' if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        let mut close = code.len() - 1;
        for (k, &c) in code[open..].iter().enumerate() {
            match c {
                b'{' => braces += 1,
                b'}' => {
                    braces -= 1;
                    if braces == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = line_at(at);
        out.push((name, first, line_at(close) - first + 1));
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let root = repo_root();
    let mut files = Vec::new();
    for d in [
        "src",
        "tests",
        "benches",
        "testkit/src",
        "fuzz/src",
        "fuzz/fuzz_targets",
    ] {
        rust_files(&root.join(d), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut long = Vec::new();
    let mut exempt_used = vec![false; EXEMPT_FNS.len()];
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if EXEMPT_DIRS
            .iter()
            .any(|(d, _)| rel.starts_with(&format!("{d}/")))
        {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (name, line, len) in functions(&text) {
            if len <= MAX_LINES {
                continue;
            }
            match EXEMPT_FNS
                .iter()
                .position(|(ef, en, _)| *ef == rel && *en == name)
            {
                Some(k) => exempt_used[k] = true,
                None => long.push(format!("{rel}:{line}: fn {name} is {len} lines")),
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines (split them, or exempt a data table with its reason in EXEMPT_FNS):\n{}",
        long.join("\n")
    );
    // An exemption that no longer matches a long function is stale.
    for (k, used) in exempt_used.iter().enumerate() {
        assert!(used, "stale exemption: {:?}", EXEMPT_FNS[k]);
    }
}

#[test]
fn the_counter_sees_functions_as_written_and_ignores_lookalikes() {
    // Negative control: a 151-line body is over the limit, 150 lines is not.
    let body = |n: usize| format!("fn long() {{\n{}}}\n", "    let _x = 1;\n".repeat(n - 2));
    assert_eq!(functions(&body(151)), vec![("long".into(), 1, 151)]);
    assert_eq!(functions(&body(150))[0].2, 150);
    // Braces and `fn ` in strings, raw strings, chars and comments do not count; lifetimes,
    // declarations without body, `fn(` pointer types and nested functions are handled.
    let src = r####"
/// fn doc() { never
trait T { fn decl(&self); }
fn outer<'a>(x: &'a str, f: fn(u8) -> u8) -> &'a str {
    let _s = "fn fake() {";
    let _r = r#"}" fn raw() {"#;
    let _c = ('{', '\'', '}', b'"', b'{');
    /* fn block() { /* nested } */ */
    fn inner() {}
    x
}
"####;
    assert_eq!(
        functions(src),
        vec![("outer".into(), 4, 8), ("inner".into(), 9, 1)]
    );
}
