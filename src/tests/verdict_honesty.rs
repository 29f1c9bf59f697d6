//! The corpus's honesty at the library level (issue #35): every committed known-failure list
//! loads with a reason per entry, and every case's format and type tags are derived from its
//! bytes (`corpus::known`, `corpus::content_tags`, crate-private). The `check-reader` verdicts
//! stay in `tests/it/verdict_honesty.rs`.

use super::fixtures::repo_root as root;
use crate::corpus::manifest::{Manifest, Outcome};

/// Every committed known-failures list pins a reason per entry (a bare id would be refused at
/// load; this also catches a list nobody loads in the test suite).
#[test]
fn committed_lists_pin_a_reason_per_entry() {
    let a = root().join("conformance/adapters");
    let mut lists = Vec::new();
    for d in std::fs::read_dir(&a).unwrap().flatten() {
        let k = d.path().join("known-failures.txt");
        if k.is_file() {
            lists.push(k);
        }
    }
    for f in std::fs::read_dir(a.join("stubs")).unwrap().flatten() {
        if f.path().extension().is_some_and(|e| e == "expected") {
            lists.push(f.path());
        }
    }
    assert!(lists.len() >= 15, "{lists:?}");
    let m = Manifest::load(&root().join("conformance/MANIFEST.json")).unwrap();
    for l in lists {
        let k = crate::corpus::known::KnownFailures::load(&l)
            .unwrap_or_else(|e| panic!("{}: {e}", l.display()));
        for (id, reason) in &k.entries {
            let c = m.cases.iter().find(|c| &c.id == id);
            let c = c.unwrap_or_else(|| panic!("{}: {id} is no case", l.display()));
            // A must-reject case a reader accepts is `accepted`; a must-accept one never is.
            if reason == "accepted" {
                assert_eq!(c.expect.outcome, Outcome::Reject, "{}: {id}", l.display());
            }
        }
    }
}

/// Every case's format and GGUF type tags agree with what its file holds (re-derived from the
/// committed bytes): an accepted case is tagged with exactly the formats / types it holds, an
/// `n_` case names none it does not hold.
#[test]
fn feature_tags_are_derived_from_the_bytes() {
    use crate::corpus::content_tags;
    let m = Manifest::load(&root().join("conformance/MANIFEST.json")).unwrap();
    let mut bad = Vec::new();
    let mut derived = 0;
    for c in &m.cases {
        let bytes = std::fs::read(root().join("conformance").join(&c.file)).unwrap();
        if content_tags::derive(&bytes).is_some() {
            derived += 1;
        }
        let accepted = c.expect.outcome != Outcome::Reject;
        bad.extend(content_tags::check(&c.id, accepted, &c.features, &bytes));
    }
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert!(derived > 100, "{derived}");
    // Negative controls: a tag dropped from an accepted case, a format an n_ case lacks.
    let all = m
        .cases
        .iter()
        .find(|c| c.id == "ninfer/y_valid_all_layouts")
        .unwrap();
    let bytes = std::fs::read(root().join("conformance").join(&all.file)).unwrap();
    let dropped: Vec<String> = all
        .features
        .iter()
        .filter(|f| f.as_str() != "format:NVFP4")
        .cloned()
        .collect();
    assert_eq!(
        content_tags::check(&all.id, true, &dropped, &bytes),
        vec!["ninfer/y_valid_all_layouts: holds format:NVFP4 but is not tagged with it"]
    );
    let mut extra = all.features.clone();
    extra.push("format:Q6G64_F16S".into());
    assert_eq!(content_tags::check(&all.id, false, &extra, &bytes).len(), 1);
    // Unusual but right: an n_ case tagged with only the one format its rule concerns.
    let n = m
        .cases
        .iter()
        .find(|c| c.id == "ninfer/n_shape_nvfp4_rows")
        .unwrap();
    let nb = std::fs::read(root().join("conformance").join(&n.file)).unwrap();
    let only: Vec<String> = vec!["kind:ninfer".into(), "format:NVFP4".into()];
    assert!(content_tags::check(&n.id, false, &only, &nb).is_empty());
    // GGUF: the BF16 tensor of a packed artifact is derived (its family declares only 142);
    // dropping it, or tagging a type the file does not hold, is caught.
    let case = |id: &str| {
        let c = m.cases.iter().find(|c| c.id == id).unwrap().clone();
        let b = std::fs::read(root().join("conformance").join(&c.file)).unwrap();
        (c, b)
    };
    let (nano, nb) = case("pack/y_nano_pq2_0");
    assert!(
        nano.features.iter().any(|f| f == "ggml_type:30"),
        "{:?}",
        nano.features
    );
    let dropped: Vec<String> = nano
        .features
        .iter()
        .filter(|f| f.as_str() != "ggml_type:30")
        .cloned()
        .collect();
    assert_eq!(
        content_tags::check(&nano.id, true, &dropped, &nb),
        vec!["pack/y_nano_pq2_0: holds ggml_type:30 but is not tagged with it"]
    );
    let mut extra = nano.features.clone();
    extra.push("ggml_type:143".into());
    assert_eq!(content_tags::check(&nano.id, false, &extra, &nb).len(), 1);
    // Unusual but right: F32 is never derived, so gguf/y_type_f32 may declare it and a case
    // holding F32 beside F16 (an alignment case) need not.
    let (f32c, fb) = case("gguf/y_type_f32");
    assert!(f32c.features.iter().any(|f| f == "ggml_type:0"));
    assert!(content_tags::check(&f32c.id, true, &f32c.features, &fb).is_empty());
    let (al, ab) = case("gguf/y_alignment_1");
    assert!(
        al.features.iter().any(|f| f == "ggml_type:1"),
        "{:?}",
        al.features
    );
    assert!(
        !al.features.iter().any(|f| f == "ggml_type:0"),
        "{:?}",
        al.features
    );
    assert!(content_tags::check(&al.id, true, &al.features, &ab).is_empty());
    // Legacy id 42: both the id and its resolved meaning are derived.
    let legacy = m
        .cases
        .iter()
        .find(|c| {
            c.expect.outcome != Outcome::Reject
                && c.features.iter().any(|f| f == "ggml_type:42-g128")
        })
        .expect("an accepted legacy id-42 case");
    assert!(legacy.features.iter().any(|f| f == "ggml_type:42"));
}
