//! `cargo test` builds the library as a user gets it: no dev-dependency turns on the
//! `internals` feature (issue #36), neither directly (a self dev-dependency with the feature)
//! nor through a path dev-dependency whose manifest enables it (as `testkit/` does, which is
//! why its tests run from `testkit/` with their own target folder). Plumbing tests are crate
//! unit tests (`src/tests/`), which see `pub(crate)` items without the feature.

use crate::common::repo_root;
use std::path::Path;

/// The package whose `internals` feature must stay off.
const PACKAGE: &str = "ninfer-ternary";

/// One dependency entry of a manifest: (the section it is in, its key, its inline value or the
/// body of its `[section.key]` table).
struct Dep {
    section: String,
    key: String,
    value: String,
}

/// The dependency entries of a Cargo manifest, by section (`dependencies`, `dev-dependencies`,
/// `build-dependencies`, also under `target.'cfg'.`), in both TOML forms: `key = value` lines
/// (a value may span lines until its braces and brackets close) and `[section.key]` tables.
fn deps(manifest: &str) -> Vec<Dep> {
    let mut out: Vec<Dep> = Vec::new();
    let mut section = String::new();
    let mut table_dep: Option<usize> = None;
    let mut open: Option<usize> = None;
    for raw in manifest.lines() {
        let line = raw.split(" #").next().unwrap_or("").trim();
        if let Some(i) = open {
            out[i].value.push(' ');
            out[i].value.push_str(line);
            if balanced(&out[i].value) {
                open = None;
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            let name = line
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_string();
            table_dep = None;
            section = name.clone();
            // `[dev-dependencies.foo]`: a dependency given as a table.
            for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some((sec, key)) = name.rsplit_once('.') {
                    if sec.ends_with(kind) && (sec == kind || sec.ends_with(&format!(".{kind}"))) {
                        out.push(Dep {
                            section: sec.to_string(),
                            key: key.trim_matches('"').to_string(),
                            value: String::new(),
                        });
                        table_dep = Some(out.len() - 1);
                    }
                }
            }
            continue;
        }
        if let Some(i) = table_dep {
            out[i].value.push(' ');
            out[i].value.push_str(line);
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if is_dep_section(&section) {
            out.push(Dep {
                section: section.clone(),
                key: k.trim().trim_matches('"').to_string(),
                value: v.trim().to_string(),
            });
            if !balanced(v) {
                open = Some(out.len() - 1);
            }
        }
    }
    out
}

fn is_dep_section(s: &str) -> bool {
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .any(|k| s == *k || s.ends_with(&format!(".{k}")))
}

fn balanced(v: &str) -> bool {
    v.matches('{').count() == v.matches('}').count()
        && v.matches('[').count() == v.matches(']').count()
}

/// The value of `field = "..."` in a dependency's value, if given.
fn string_field(value: &str, field: &str) -> Option<String> {
    let at = value.find(&format!("{field} ="))?;
    let rest = &value[at..];
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    Some(rest[start..end].to_string())
}

/// Whether the dependency `d` is on this package with the `internals` feature.
fn enables_internals(d: &Dep) -> bool {
    let package = string_field(&d.value, "package").unwrap_or_else(|| d.key.clone());
    let features = d
        .value
        .find("features =")
        .map(|at| {
            let rest = &d.value[at..];
            let end = rest.find(']').unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .unwrap_or_default();
    package == PACKAGE && features.contains("\"internals\"")
}

/// Why the dev-dependencies of the manifest `text` (in folder `dir`) turn `internals` on, one
/// line per way: a dev-dependency on this package with the feature, or a path dev-dependency
/// whose own manifest (normal dependencies, followed through further path dependencies)
/// depends on this package with it.
fn internals_enablers(text: &str, dir: &Path) -> Vec<String> {
    let mut why = Vec::new();
    for d in deps(text) {
        if !d.section.ends_with("dev-dependencies") {
            continue;
        }
        if enables_internals(&d) {
            why.push(format!("[{}] {} enables internals", d.section, d.key));
        }
        if let Some(p) = string_field(&d.value, "path") {
            let mut seen = Vec::new();
            if let Some(chain) = through_path(&dir.join(&p), &mut seen) {
                why.push(format!("[{}] {} -> {chain}", d.section, d.key));
            }
        }
    }
    why
}

/// The chain of path dependencies from the crate in `dir` to one that enables `internals` on
/// this package, if any (the crate itself, being this package, does not count).
fn through_path(dir: &Path, seen: &mut Vec<std::path::PathBuf>) -> Option<String> {
    let dir = dir.canonicalize().ok()?;
    if seen.contains(&dir) || dir == repo_root().canonicalize().ok()? {
        return None;
    }
    seen.push(dir.clone());
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    for d in deps(&text) {
        if d.section.ends_with("dev-dependencies") {
            continue; // a path crate's own dev-dependencies are not built by our tests
        }
        if enables_internals(&d) {
            return Some(format!("{} ({})", d.key, dir.display()));
        }
        if let Some(p) = string_field(&d.value, "path") {
            if let Some(rest) = through_path(&dir.join(&p), seen) {
                return Some(format!("{} -> {rest}", d.key));
            }
        }
    }
    None
}

#[test]
fn no_dev_dependency_enables_internals() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // Not blind: the manifest's dev-dependencies are found.
    let dev = deps(&text)
        .into_iter()
        .filter(|d| d.section == "dev-dependencies")
        .count();
    assert!(dev >= 3, "only {dev} dev-dependencies found in Cargo.toml");
    let why = internals_enablers(&text, &root);
    assert!(
        why.is_empty(),
        "cargo test would build the library with `internals`: {why:#?}"
    );
}

/// The library this binary links is the default build: the features cargo resolved for the
/// package are the ones its test targets are compiled with.
#[test]
fn this_test_binary_is_built_without_internals() {
    assert!(
        !cfg!(feature = "internals"),
        "the `it` binary was built with `internals` (a dev-dependency or --features turned it on)"
    );
}

/// Negative controls: the self dev-dependency with the feature (the old manifest), the same as
/// a `[dev-dependencies.ninfer-ternary]` table, and the testkit path dev-dependency (its
/// manifest enables the feature) are each caught.
#[test]
fn a_dev_dependency_enabling_internals_is_caught() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for added in [
        "[dev-dependencies]\nninfer-ternary = { path = \".\", features = [\"internals\"] }\n",
        "[dev-dependencies.ninfer-ternary]\npath = \".\"\nfeatures = [\n  \"internals\",\n]\n",
        "[dev-dependencies]\nninfer-ternary-testkit = { path = \"testkit\" }\n",
        "[target.'cfg(unix)'.dev-dependencies]\nself-alias = { package = \"ninfer-ternary\", path = \".\", features = [\"cuda\", \"internals\"] }\n",
    ] {
        let edited = format!("{text}\n{added}");
        let why = internals_enablers(&edited, &root);
        assert!(!why.is_empty(), "not caught: {added}");
    }
}

/// Correct but unusual entries are not flagged: this package as a dev-dependency without the
/// feature, another crate that has a feature named `internals`, and `internals` named in a
/// comment or in a non-dependency section.
#[test]
fn dev_dependencies_that_leave_internals_off_pass() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for added in [
        "[dev-dependencies]\nninfer-ternary = { path = \".\", features = [\"cuda\"] }\n",
        "[dev-dependencies]\nother = { version = \"1\", features = [\"internals\"] }\n",
        "[dev-dependencies]\n# ninfer-ternary = { path = \".\", features = [\"internals\"] }\n",
        "[package.metadata.x]\nninfer-ternary = { features = [\"internals\"] }\n",
    ] {
        let edited = format!("{text}\n{added}");
        let why = internals_enablers(&edited, &root);
        assert!(why.is_empty(), "flagged: {added}: {why:?}");
    }
}
