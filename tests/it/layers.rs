//! The dependency graph between the library's top-level modules is a DAG with one written
//! order: the `Layers` line of `src/lib.rs`'s docs. Production code of a module may name
//! (`crate::x`, `use crate::{x, ..}`) only modules listed before it; test code (`#[cfg(test)]`
//! items and files) may reach anything. A new upward import fails here with the file and line.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::repo_root;

/// The layer order from `src/lib.rs`: the doc line `//! Layers (lowest first): `a` < `b`, `c` < ...`
/// (modules separated by `,` share a layer and may not name each other).
fn layers(lib_rs: &str) -> Vec<Vec<String>> {
    let line = lib_rs
        .lines()
        .find(|l| l.starts_with("//! Layers (lowest first):"))
        .expect("src/lib.rs documents its layer order");
    let mut order = Vec::new();
    // The line may continue on following `//!` lines up to a blank doc line.
    let start = lib_rs.find(line).unwrap();
    for l in lib_rs[start..].lines() {
        let Some(t) = l.strip_prefix("//!") else {
            break;
        };
        if t.trim().is_empty() {
            break;
        }
        for (k, part) in t.split('<').enumerate() {
            // A line break inside the list continues the last layer unless it starts with `<`.
            if k > 0 || order.is_empty() {
                order.push(Vec::new());
            }
            let names: Vec<&str> = part.split('`').collect();
            for (i, n) in names.iter().enumerate() {
                if i % 2 == 1 {
                    if let Some(last) = order.last_mut() {
                        last.push(n.to_string());
                    }
                }
            }
        }
    }
    order.retain(|l| !l.is_empty());
    order
}

/// Every module of the order, lowest layer first.
fn layer_order(lib_rs: &str) -> Vec<String> {
    layers(lib_rs).concat()
}

/// `text` without comments, string literals and `#[cfg(test)]` items (kept line by line, so
/// line numbers still match the file).
fn production_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            out.push('\n');
            continue;
        }
        // Drop string literals and trailing comments (good enough for import scanning).
        let mut cleaned = String::new();
        let mut in_str = false;
        let mut prev = ' ';
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && prev != '\'' {
                in_str = !in_str;
            } else if !in_str {
                cleaned.push(c);
            }
            prev = if prev == '\\' && c == '\\' { ' ' } else { c };
            i += 1;
        }
        out.push_str(&cleaned);
        out.push('\n');
    }
    // Remove `#[cfg(test)]` items: up to the matching `}` of the next `{`, or the next `;`.
    let mut result = out.clone();
    while let Some(at) = result.find("#[cfg(test)]") {
        let rest = &result[at..];
        let brace = rest.find('{');
        let semi = rest.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => at + s + 1,
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = result.len();
                for (k, ch) in result[at + b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = at + b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => at + s + 1,
            (None, None) => result.len(),
        };
        let blanked: String = result[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        result.replace_range(at..end, &blanked);
    }
    result
}

/// The top-level modules `code` names, with the 1-based line of each mention (a grouped
/// `use crate::{..}` may span lines).
fn crate_refs(code: &str) -> Vec<(String, usize)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut refs = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("crate::") {
        let at = from + found;
        from = at + "crate::".len();
        let ident_before = code[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if ident_before {
            continue;
        }
        let after = &code[from..];
        if let Some(group) = after.strip_prefix('{') {
            // `crate::{a::b, c}`: every name at depth 0 of the group.
            let mut depth = 0i32;
            let mut expect_name = true;
            let mut name = String::new();
            let mut name_at = 0;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    c if expect_name && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                        if name.is_empty() {
                            name_at = from + 1 + k;
                        }
                        name.push(c)
                    }
                    _ => {}
                }
                if !(c.is_alphanumeric() || c == '_') && !name.is_empty() {
                    refs.push((std::mem::take(&mut name), line_of(name_at)));
                    expect_name = false;
                }
                if c == ',' && depth == 0 {
                    expect_name = true;
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                refs.push((name, line_of(at)));
            }
        }
    }
    refs
}

/// Files excluded as test code: `#[cfg(test)] mod x;` declarations name them.
fn test_only_files(src: &Path, files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().collect();
        for w in lines.windows(2) {
            if w[0].trim() == "#[cfg(test)]" {
                let t = w[1].trim();
                let decl = t
                    .strip_prefix("mod ")
                    .or_else(|| t.strip_prefix("pub(crate) mod "));
                if let Some(name) = decl.and_then(|d| d.strip_suffix(';')) {
                    let dir = Path::new(path).parent().unwrap();
                    let stem = Path::new(path).file_stem().unwrap().to_string_lossy();
                    let base = if stem == "mod" || stem == "lib" {
                        dir.to_path_buf()
                    } else {
                        dir.join(&*stem)
                    };
                    for cand in [
                        base.join(format!("{name}.rs")),
                        base.join(name).join("mod.rs"),
                    ] {
                        let rel = cand.to_string_lossy().into_owned();
                        if files.contains_key(&rel) {
                            out.push(rel);
                        }
                    }
                    // A test-only folder: every file under it.
                    let folder = base.join(name).to_string_lossy().into_owned() + "/";
                    out.extend(files.keys().filter(|k| k.starts_with(&folder)).cloned());
                }
            }
        }
    }
    let _ = src;
    out
}

/// Upward imports: `file:line: module a (layer i) names module b (layer j > i)`.
fn violations(order: &[Vec<String>], files: &BTreeMap<String, String>) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let skip = test_only_files(Path::new("src"), files);
    let mut out = Vec::new();
    for (path, text) in files {
        if skip.contains(path) {
            continue;
        }
        let rel = path.strip_prefix("src/").unwrap_or(path);
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs");
        // `peak_alloc` is compiled into the binary only (`#[path]` from src/bin).
        if top == "lib" || top == "bin" || top == "peak_alloc" {
            continue;
        }
        let Some(&own) = rank.get(top) else {
            out.push(format!(
                "{path}: module `{top}` is not in the layer order of src/lib.rs"
            ));
            continue;
        };
        for (name, line) in crate_refs(&production_code(text)) {
            if name == top || name == "Error" || name == "ErrorClass" || name == "Result" {
                continue;
            }
            match rank.get(name.as_str()) {
                Some(&r) if r > own => out.push(format!(
                    "{path}:{line}: `{top}` (layer {own}) names `crate::{name}` (layer {r}, above it)"
                )),
                Some(&r) if r == own => out.push(format!(
                    "{path}:{line}: `{top}` names `crate::{name}`, which shares its layer {own} (siblings are independent)"
                )),
                Some(_) => {}
                None => {
                    if name.chars().next().is_some_and(|c| c.is_lowercase()) {
                        out.push(format!(
                            "{path}:{line}: `crate::{name}` is not in the layer order of src/lib.rs"
                        ))
                    }
                }
            }
        }
    }
    out
}

fn source_files() -> BTreeMap<String, String> {
    let root = repo_root();
    let mut files = BTreeMap::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    files
}

#[test]
fn every_import_points_down_the_layer_order() {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).unwrap();
    let order = layers(&lib);
    assert!(
        order.concat().len() >= 20,
        "layer order parsed from src/lib.rs: {order:?}"
    );
    let v = violations(&order, &source_files());
    assert!(
        v.is_empty(),
        "imports against the layer order:\n{}",
        v.join("\n")
    );
}

/// The modules `lib_rs` declares that need a layer: every `mod` / `pub mod` / `internal_mod!`
/// except a `#[cfg(test)]` one (test code, which may reach anything: `src/tests/`).
fn layered_modules(lib_rs: &str) -> Vec<String> {
    let mut prev = "";
    let mut out = Vec::new();
    for line in lib_rs.lines() {
        let l = line.trim();
        let test_only = prev == "#[cfg(test)]";
        prev = l;
        let Some(rest) = l
            .strip_prefix("pub mod ")
            .or_else(|| l.strip_prefix("mod "))
            .or_else(|| l.strip_prefix("pub(crate) mod "))
            .or_else(|| l.strip_prefix("internal_mod!("))
        else {
            continue;
        };
        let name = rest.trim_end_matches(';').trim_end_matches(')');
        // The macro's own `pub mod $name;` is not a module.
        if !test_only && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            out.push(name.to_string());
        }
    }
    out
}

/// A `#[cfg(test)]` module needs no layer; the same module without the attribute does (the
/// control), and so does one after an unrelated attribute.
#[test]
fn only_test_modules_are_exempt_from_the_layer_order() {
    assert!(layered_modules("#[cfg(test)]\nmod tests;\n").is_empty());
    assert_eq!(layered_modules("mod tests;\n"), vec!["tests".to_string()]);
    assert_eq!(
        layered_modules("#[cfg(feature = \"x\")]\npub mod extra;\n"),
        vec!["extra".to_string()]
    );
}

#[test]
fn every_module_of_lib_rs_has_a_layer_and_once() {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).unwrap();
    let order = layer_order(&lib);
    let mods = layered_modules(&lib);
    let mut sorted = order.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        order.len(),
        "a module twice in the order: {order:?}"
    );
    for m in &mods {
        assert!(
            order.contains(m),
            "src/lib.rs declares `{m}` but gives it no layer"
        );
    }
    for m in &order {
        assert!(
            mods.contains(m),
            "the layer order names `{m}`, which src/lib.rs does not declare"
        );
    }
}

/// Negative controls: the checker sees plain, grouped and nested upward imports, and leaves
/// test code, comments and strings alone.
#[test]
fn an_upward_import_is_caught_and_test_code_is_not() {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).unwrap();
    let order = layers(&lib);
    let case = |path: &str, text: &str| {
        let mut f = BTreeMap::new();
        f.insert(path.to_string(), text.to_string());
        violations(&order, &f)
    };
    // The control: the verifier importing the packer (siblings: the verifier must not
    // share code with what it checks).
    let v = case("src/verify/extra.rs", "use crate::pack;\nfn f() {}\n");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("src/verify/extra.rs:1") && v[0].contains("siblings"),
        "{v:?}"
    );
    // A reader that imports the verifier, and the packer importing the corpus.
    let v = case("src/gguf/extra.rs", "use crate::verify;\nfn f() {}\n");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("src/gguf/extra.rs:1") && v[0].contains("crate::verify"),
        "{v:?}"
    );
    assert_eq!(
        case("src/pack/x.rs", "use crate::corpus::Manifest;\n").len(),
        1
    );
    assert_eq!(
        case(
            "src/gguf/x.rs",
            "use crate::{error::Error, pack::Packer};\n"
        )
        .len(),
        1
    );
    assert_eq!(
        case(
            "src/gguf/x.rs",
            "use crate::{\n    error::{Error, Result},\n    verify::run,\n};\n"
        )
        .len(),
        1
    );
    assert_eq!(
        case("src/gguf/x.rs", "fn f() { crate::verify::run(); }\n").len(),
        1
    );
    // Downward, test-only, commented and quoted mentions are fine.
    assert!(case(
        "src/verify/x.rs",
        "use crate::{gguf::Gguf, mapping::profile};\n"
    )
    .is_empty());
    assert!(case(
        "src/gguf/x.rs",
        "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::pack::Packer;\n}\n"
    )
    .is_empty());
    assert!(case(
        "src/gguf/x.rs",
        "// see crate::pack\n/// [`crate::verify::run`]\nconst S: &str = \"crate::pack\";\n"
    )
    .is_empty());
    // A module the order does not know is itself a failure.
    assert_eq!(case("src/newmod.rs", "fn f() {}\n").len(), 1);
}

/// The calls into `cuda` (`cuda::a::b(`, `crate::cuda::a(`) in the body of the first `fn NAME`
/// of a Rust source, in order: paths into `cuda` that are not followed by `(` (types, struct
/// literals) are not calls.
fn cuda_calls_in(src: &str, name: &str) -> Vec<String> {
    let Some(at) = src.find(&format!("fn {name}(")) else {
        return Vec::new();
    };
    let open = at + src[at..].find('{').unwrap_or(0);
    let mut depth = 0usize;
    let mut close = src.len();
    for (k, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = open + k;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = &src[open..close];
    let mut calls = Vec::new();
    for (p, _) in body.match_indices("cuda::") {
        if p > 0 && {
            let b = body.as_bytes()[p - 1];
            b.is_ascii_alphanumeric() || b == b'_'
        } {
            continue;
        }
        let path: String = body[p..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if body[p + path.len()..].starts_with('(') {
            calls.push(path);
        }
    }
    calls
}

#[test]
fn check_kernel_crosses_into_cuda_with_one_call() {
    // Issue #36: the kernel suite's driver lives in `cuda`; the command parses its arguments,
    // makes one call (`cuda::run`) and writes what the report holds.
    let src = std::fs::read_to_string(repo_root().join("src/cli/check_kernel.rs")).unwrap();
    assert_eq!(cuda_calls_in(&src, "run"), vec!["cuda::run".to_string()]);
    assert!(
        cuda_calls_in(&src, "options").is_empty(),
        "parsing calls no suite code"
    );
    // Negative control: a command that drives the suite itself crosses more than once.
    let driving = "fn run(a: Args) { let cs = cuda::cases_default(c, &f, 1)?; \
                   for c in cs { cuda::run_device(&s, &e, &abi, &[c])?; } }";
    assert_eq!(
        cuda_calls_in(driving, "run"),
        vec!["cuda::cases_default", "cuda::run_device"]
    );
    // Correct but unusual: types, struct literals and a nested closure's braces are no calls.
    let one = "fn run(a: Args) { let o: cuda::Options = cuda::Options { tier: cuda::Tier::Host }; \
               crate::cuda::run(&o, &mut |l| { println!(\"{l}\") }) }";
    assert_eq!(cuda_calls_in(one, "run"), vec!["cuda::run"]);
}
