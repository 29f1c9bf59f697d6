//! The reader protocol's observation comparison hands its first mismatch over as data
//! (`protocol::Mismatch`: a typed path and what differs); the judge names the object from that
//! path instead of searching the rendered message for text.

use ninfer_ternary::corpus::protocol::{contains, mismatch, Difference, Mismatch, Step};
use serde_json::json;

#[test]
fn a_tensor_mismatch_is_located_by_a_typed_path_and_named() {
    let want = json!({"tensors": [{"name": "a", "ne": [2, 3]}, {"name": "w", "ne": [2, 3]}]});
    let got = json!({"tensors": [{"name": "a", "ne": [2, 3]}, {"name": "w", "ne": [2, 4]}]});
    let m = mismatch(&want, &got).unwrap();
    assert_eq!(
        m,
        Mismatch {
            at: vec![
                Step::Member("tensors".into()),
                Step::Index(1),
                Step::Member("ne".into()),
                Step::Index(1)
            ],
            what: Difference::Value {
                got: "4".into(),
                want: "3".into()
            },
        }
    );
    assert_eq!(
        m.render("observation", Some(&want)),
        r#"observation.tensors[1] (tensor "w").ne[1]: 4, expected 3"#
    );
    // Without the expected observation (the corpus self-check), the path alone, as before.
    assert_eq!(
        contains(&want, &got, "observation").unwrap_err(),
        "observation.tensors[1].ne[1]: 4, expected 3"
    );
    // Equal, and a superset (extra members are allowed): no mismatch.
    assert_eq!(mismatch(&want, &want), None);
    let mut more = want.clone();
    more["extra"] = json!(1);
    assert_eq!(mismatch(&want, &more), None);
}

#[test]
fn text_that_looks_like_a_path_is_not_rewritten() {
    // The expected value of another member spells an object path; only the typed path may
    // name an object, so nothing is inserted into the value's text.
    let want = json!({"note": "observation.tensors[0]", "tensors": [{"name": "w"}]});
    let got = json!({"note": "x", "tensors": [{"name": "w"}]});
    let m = mismatch(&want, &got).unwrap();
    assert_eq!(
        m.render("observation", Some(&want)),
        r#"observation.note: "x", expected "observation.tensors[0]""#
    );
}

#[test]
fn missing_members_lengths_and_long_values() {
    let want = json!({"objects": [{"name": "o", "bytes": 1}]});
    let m = mismatch(&want, &json!({"objects": [{"name": "o"}]})).unwrap();
    assert_eq!(m.what, Difference::Missing);
    assert_eq!(
        m.render("observation", Some(&want)),
        r#"observation.objects[0] (object "o").bytes missing"#
    );
    let m = mismatch(&want, &json!({"objects": []})).unwrap();
    assert_eq!(m.what, Difference::Length { got: 0, want: 1 });
    assert_eq!(
        m.render("observation", Some(&want)),
        "observation.objects: 0 elements, expected 1"
    );
    // A long value of multi-byte characters is cut after 70 characters, never inside one.
    let long = "é".repeat(100);
    let m = mismatch(&json!(long), &json!("x")).unwrap();
    let Difference::Value { want: shown, .. } = &m.what else {
        panic!("{m:?}")
    };
    assert_eq!(shown.chars().count(), 71, "{shown}");
    assert!(shown.ends_with('…'));
}
