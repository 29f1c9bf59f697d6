//! The generated regions of the specification documents (`spec_docs`, crate-private): every
//! region matches the tables and a hand edit inside one is seen as stale. The `spec --check`
//! / `--write` command-line checks stay in `tests/it/spec_docs.rs`.

use super::fixtures::repo_root as root;
use crate::spec_docs as render;
use std::path::{Path, PathBuf};

fn spec_docs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v
}

#[test]
fn generated_regions_match_the_tables() {
    let docs = spec_docs(&root().join("spec"));
    assert!(docs.len() >= 13, "spec documents: {}", docs.len());
    let mut regions = 0;
    let mut seen = std::collections::BTreeSet::new();
    for d in &docs {
        let text = std::fs::read_to_string(d).unwrap();
        let rs = render::regions(&text).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        regions += rs.len();
        seen.extend(rs.into_iter().map(|r| r.name));
        let stale = render::stale_regions(&text).unwrap();
        assert!(
            stale.is_empty(),
            "{}: generated regions {stale:?} differ from spec/*.json; run `ninfer-ternary spec --write`",
            d.display()
        );
    }
    // Every region the renderer knows is used by some document.
    for r in render::REGIONS {
        assert!(
            seen.contains(*r),
            "region {r} is rendered but no document includes it"
        );
    }
    assert!(regions >= render::REGIONS.len());
}

/// A hand edit inside a generated region makes exactly that region stale (the `spec --check`
/// / `--write` half is the same-named test in tests/it/spec_docs.rs).
#[test]
fn a_hand_edited_region_fails_spec_check() {
    // Edit one cell inside a generated region: the PTQ1_0 block size in the ggml type table.
    let text = std::fs::read_to_string(root().join("spec/ggml-types.md")).unwrap();
    let edited = text.replacen("| `PTQ1_0` | 128 | 28 |", "| `PTQ1_0` | 128 | 26 |", 1);
    assert_ne!(edited, text, "the edit must hit the generated table");
    assert_eq!(
        render::stale_regions(&edited).unwrap(),
        vec!["ggml_types".to_string()]
    );
}
