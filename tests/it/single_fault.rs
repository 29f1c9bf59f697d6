//! The single-fault property of the must-reject corpus (issue #35): for every `n_` case, the
//! reference reader with only the case's own rule disabled (`error::rule_switch`) accepts the
//! file, so the file breaks that rule and no other. Where the parse cannot go on past the
//! violation (nothing after a truncation, no value for a missing member), the case is listed in
//! [`STOPS`] with the class it must then stop at and why; a listed case that accepts is stale.

use ninfer_ternary::corpus::manifest::{CaseEntry, Manifest};
use ninfer_ternary::corpus::protocol::{answer_request, request_json, Answer};
use ninfer_ternary::error::rule_switch::with_disabled;
use ninfer_ternary::ErrorClass;

use crate::common::repo_root;

/// Cases whose rule, once disabled, leaves nothing to parse: (case id, the class the reader
/// must then stop at, why the parse cannot go on).
const STOPS: &[(&str, &str, &str)] = &[];

/// What the reference answers on `case` with the checks of `disabled` switched off.
fn answer_without(case: &CaseEntry, disabled: &[ErrorClass]) -> Answer {
    let root = repo_root().join("conformance");
    let req = request_json(case, &root);
    with_disabled(disabled, || answer_request(&root.join(&case.file), &req))
}

/// One line per `n_` case that breaks the single-fault property (empty: the property holds).
fn violations(cases: &[CaseEntry], stops: &[(&str, &str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for case in cases.iter().filter(|c| c.id.contains("/n_")) {
        let Some(id) = case.expect.class.as_deref() else {
            out.push(format!("{}: no expected class", case.id));
            continue;
        };
        let Some(class) = ErrorClass::from_id(id) else {
            out.push(format!("{}: unknown class {id}", case.id));
            continue;
        };
        let stop = stops.iter().find(|s| s.0 == case.id);
        match (answer_without(case, &[class]), stop) {
            (Answer::Accept { .. }, None) => {}
            (Answer::Accept { .. }, Some(_)) => {
                out.push(format!("{}: listed in STOPS but accepts without {id}", case.id))
            }
            (Answer::Reject { class: got, .. }, Some((_, want, _)))
                if got.as_deref() == Some(*want) => {}
            (Answer::Reject { class: got, message }, _) => out.push(format!(
                "{}: without {id} the reference rejects as {} ({message})",
                case.id,
                got.as_deref().unwrap_or("?")
            )),
            (Answer::Unsupported { feature }, _) => {
                out.push(format!("{}: unsupported {feature}", case.id))
            }
        }
    }
    out
}

fn corpus() -> Vec<CaseEntry> {
    Manifest::load(&repo_root().join("conformance/MANIFEST.json"))
        .unwrap()
        .cases
}

#[test]
fn every_must_reject_case_fails_for_its_own_rule_only() {
    let cases = corpus();
    let n = cases.iter().filter(|c| c.id.contains("/n_")).count();
    assert!(n > 100, "only {n} must-reject cases");
    let bad = violations(&cases, STOPS);
    assert!(bad.is_empty(), "{} of {n} cases:\n{}", bad.len(), bad.join("\n"));
}
