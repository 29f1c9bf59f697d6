//! Rule layers (PROTOCOL.md §2.1, §5.3) and the corpus fixes that came with them: every GGUF
//! `n_` case names its layer from `spec/gguf.json`, undeclared layers are judged like `i_`,
//! `ne` is compared modulo trailing 1s, order-insensitive readers are held to the unordered
//! digest, and the legacy id-42 cases are unambiguous (a g64 reading fails them).

use ninfer_ternary::corpus::manifest::{CaseEntry, Manifest, Outcome};
use ninfer_ternary::corpus::protocol::{self, judge_with, Answer, ClassCheck, Judgement, Judging};
use ninfer_ternary::corpus::runner::Capabilities;
use ninfer_ternary::gguf::{self, Id42Policy, Mode, Options, RuleLayer};
use serde_json::{json, Value};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

fn manifest() -> Manifest {
    Manifest::load(&root().join("MANIFEST.json")).unwrap()
}

fn case(m: &Manifest, id: &str) -> CaseEntry {
    m.cases.iter().find(|c| c.id == id).cloned().unwrap()
}

fn accept(obs: Value) -> Answer {
    Answer::Accept { observation: obs }
}

fn reject() -> Answer {
    Answer::Reject {
        class: None,
        message: "no".into(),
    }
}

fn only(layers: &[RuleLayer]) -> Judging {
    let mut j = Judging::new(ClassCheck::Lenient);
    j.rule_layers = layers.to_vec();
    j
}

#[test]
fn every_n_case_names_a_rule_layer_and_the_table_has_no_stale_rows() {
    let m = manifest();
    let table = &ninfer_ternary::spec::get().gguf.rule_layers.cases;
    for c in &m.cases {
        match (c.expect.outcome, c.rule_layer.as_deref()) {
            (Outcome::Reject, Some(l)) => assert!(RuleLayer::from_name(l).is_some(), "{}", c.id),
            (Outcome::Reject, None) => panic!("{} has no rule_layer", c.id),
            (_, Some(_)) => panic!("{}: rule_layer on a non-n_ case", c.id),
            (_, None) => {}
        }
        if c.layer == "gguf" && c.expect.outcome == Outcome::Reject {
            let name = c.id.trim_start_matches("gguf/n_");
            let row = table.iter().find(|r| r.case == name);
            let row = row.unwrap_or_else(|| panic!("{} is not in rule_layers", c.id));
            assert_eq!(
                Some(row.layer.as_str()),
                c.rule_layer.as_deref(),
                "{}",
                c.id
            );
            // Spec-mode cases are the spec layer, and only they are.
            let spec_mode = c.params.get("mode").and_then(Value::as_str) == Some("spec");
            assert_eq!(spec_mode, row.layer == "spec", "{}", c.id);
            assert!(
                row.where_.contains(':'),
                "{}: 'where' needs file:line",
                c.id
            );
            // A rule gguf.cpp enforces is 'mainline'; one it does not is another layer.
            assert_eq!(
                row.mainline == "refuses",
                row.layer == "mainline" || row.layer == "spec",
                "{}",
                c.id
            );
        }
    }
    for r in table {
        let id = format!("gguf/n_{}", r.case);
        assert!(
            m.cases.iter().any(|c| c.id == id),
            "rule_layers row {id} names no case"
        );
    }
}

#[test]
fn the_seven_reviewed_cases_are_not_mainline_rules() {
    let m = manifest();
    for (name, layer) in [
        ("string_invalid_utf8", "recommended"),
        ("bool_2", "recommended"),
        ("bool_array_2", "recommended"),
        ("n_dims_0", "recommended"),
        ("dim_zero", "recommended"),
        ("architecture_missing", "loader"),
        ("architecture_not_string", "loader"),
    ] {
        let c = case(&m, &format!("gguf/n_{name}"));
        assert_eq!(c.rule_layer.as_deref(), Some(layer), "{name}");
    }
}

#[test]
fn an_n_case_of_an_undeclared_layer_is_judged_like_an_i_case() {
    let m = manifest();
    let bool2 = case(&m, "gguf/n_bool_2"); // recommended
    let magic = case(&m, "gguf/n_bad_magic"); // mainline
    let obs = json!({"version": 3});
    let mainline_only = only(&[RuleLayer::Mainline]);
    assert_eq!(
        judge_with(&bool2, &accept(obs.clone()), &mainline_only),
        Judgement::Pass
    );
    assert_eq!(
        judge_with(&bool2, &reject(), &mainline_only),
        Judgement::Pass
    );
    // Negative controls: a declared layer must reject.
    assert!(matches!(
        judge_with(&magic, &accept(obs.clone()), &mainline_only),
        Judgement::Fail(_)
    ));
    let all = Judging::new(ClassCheck::Lenient);
    assert!(matches!(
        judge_with(&bool2, &accept(obs), &all),
        Judgement::Fail(_)
    ));
    assert_eq!(
        judge_with(&magic, &reject(), &mainline_only),
        Judgement::Pass
    );
}

fn gguf_case_with(obs: Value) -> CaseEntry {
    let mut c = case(&manifest(), "gguf/y_valid_small");
    c.expect.observation = Some(obs);
    c
}

#[test]
fn ne_is_compared_modulo_trailing_ones() {
    let c =
        gguf_case_with(json!({"tensors": [{"name": "a", "ne": [8]}, {"name": "b", "ne": [4, 2]}]}));
    let j = Judging::new(ClassCheck::Strict);
    let ok =
        json!({"tensors": [{"name": "a", "ne": [8, 1, 1, 1]}, {"name": "b", "ne": [4, 2, 1, 1]}]});
    assert_eq!(judge_with(&c, &accept(ok), &j), Judgement::Pass);
    for bad in [
        json!({"tensors": [{"name": "a", "ne": [8, 2]}, {"name": "b", "ne": [4, 2]}]}),
        json!({"tensors": [{"name": "a", "ne": [1, 8]}, {"name": "b", "ne": [4, 2]}]}),
        json!({"tensors": [{"name": "a", "ne": [8]}, {"name": "b", "ne": [4]}]}),
    ] {
        assert!(matches!(
            judge_with(&c, &accept(bad), &j),
            Judgement::Fail(_)
        ));
    }
}

#[test]
fn order_insensitive_readers_are_held_to_the_unordered_digest() {
    let m = manifest();
    let c = case(&m, "gguf/y_alignment_8");
    let want = c.expect.observation.clone().unwrap();
    let mut shuffled = want.clone();
    shuffled["keys"].as_array_mut().unwrap().reverse();
    shuffled["tensors"].as_array_mut().unwrap().reverse();
    shuffled.as_object_mut().unwrap().remove("metadata_sha256");
    let mut j = Judging::new(ClassCheck::Strict);
    assert!(matches!(
        judge_with(&c, &accept(shuffled.clone()), &j),
        Judgement::Fail(_)
    ));
    j.order_insensitive = true;
    assert_eq!(
        judge_with(&c, &accept(shuffled.clone()), &j),
        Judgement::Pass
    );
    // The unordered digest is still checked.
    let mut wrong = shuffled;
    wrong["metadata_unordered_sha256"] = json!("00");
    assert!(matches!(
        judge_with(&c, &accept(wrong), &j),
        Judgement::Fail(_)
    ));
    // An ordered reader need not report the unordered digest.
    let mut ordered = want;
    ordered
        .as_object_mut()
        .unwrap()
        .remove("metadata_unordered_sha256");
    assert_eq!(
        judge_with(&c, &accept(ordered), &Judging::new(ClassCheck::Strict)),
        Judgement::Pass
    );
}

#[test]
fn capabilities_rule_layers_default_to_all_and_reject_unknown_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let p = dir.join("caps.json");
    std::fs::write(&p, r#"{"reader": "x"}"#).unwrap();
    let c = Capabilities::load(&p).unwrap();
    assert_eq!(c.judging().rule_layers, RuleLayer::ALL.to_vec());
    assert!(!c.judging().order_insensitive);
    std::fs::write(
        &p,
        r#"{"reader": "x", "rule_layers": ["mainline"], "order_insensitive": true}"#,
    )
    .unwrap();
    let c = Capabilities::load(&p).unwrap();
    assert_eq!(c.judging().rule_layers, vec![RuleLayer::Mainline]);
    assert!(c.judging().order_insensitive);
    std::fs::write(&p, r#"{"reader": "x", "rule_layers": ["gguf.cpp"]}"#).unwrap();
    let e = Capabilities::load(&p).unwrap_err().to_string();
    assert!(e.contains("not one of mainline"), "{e}");
}

#[test]
fn legacy_id42_cases_fit_only_g128_and_a_g64_reading_fails() {
    let m = manifest();
    for id in [
        "gguf/y_type_q2_0_prism_legacy",
        "gguf/y_id42_legacy_g128_two_tensors",
        "gguf/y_id42_legacy_prism_g128",
    ] {
        let c = case(&m, id);
        assert!(c.features.iter().any(|f| f == "ggml_type:42-g128"), "{id}");
        assert!(
            c.features.iter().any(|f| f == "codec:pq2_0") || id.ends_with("prism_g128"),
            "{id}"
        );
        let bytes = std::fs::read(root().join(&c.file)).unwrap();
        let g = gguf::parse(&bytes, Mode::Strict).unwrap();
        for t in &g.tensors {
            assert_eq!(t.ggml.name, "Q2_0_PRISM_LEGACY", "{id}: tensor {}", t.name);
        }
        let g64 = gguf::parse_with(
            &bytes,
            Options {
                mode: Mode::Strict,
                id42: Id42Policy::Mainline,
            },
        );
        assert!(g64.is_err(), "{id}: a g64 reading must not fit");
        // The stub's request parameter reaches the same policy.
        let mut params = c.params.clone();
        params["id42"] = json!("g64");
        let a = protocol::respond("gguf", &params, &bytes, &|_| unreachable!());
        assert!(matches!(a, Answer::Reject { .. }), "{id}: {a:?}");
    }
}

#[test]
fn mainline_g64_cases_are_tagged_so_legacy_only_readers_can_skip_them() {
    let m = manifest();
    for id in ["gguf/y_type_q2_0", "gguf/y_id42_mainline_g64"] {
        let c = case(&m, id);
        assert!(c.features.iter().any(|f| f == "ggml_type:42-g64"), "{id}");
        assert!(!c.features.iter().any(|f| f == "ggml_type:42-g128"), "{id}");
    }
}
