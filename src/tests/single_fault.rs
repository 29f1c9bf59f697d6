//! The single-fault property of the must-reject corpus (issue #35): for every `n_` case, the
//! reference reader with only the case's own rule disabled (`error::rule_switch`) accepts the
//! file, so the file breaks that rule and no other. Where the parse cannot go on past the
//! violation (nothing after a truncation, no value for a missing member), the case is listed in
//! [`STOPS`] with the class it must then stop at and why; a listed case that accepts is stale.

use crate::corpus::manifest::{CaseEntry, Manifest};
use crate::corpus::protocol::{answer_request, request_json, Answer};
use crate::error::rule_switch::with_disabled;
use crate::ErrorClass;

use std::path::Path;

use super::fixtures::repo_root;

/// Cases whose rule, once disabled, leaves nothing to parse: (case id, the class the reader
/// must then stop at, why the parse cannot go on). Every other `n_` case must be accepted with
/// its rule off.
const STOPS: &[(&str, &str, &str)] = &[
    // Nothing after the end of the file to read on with.
    ("gguf/n_truncated_header", "gguf.truncated", "the header's counts are not in the file"),
    ("gguf/n_empty_file", "gguf.truncated", "no bytes at all"),
    ("gguf/n_kv_count_one_more_than_present", "gguf.truncated", "the last KV is not in the file"),
    ("gguf/n_string_length_past_eof", "gguf.string_length", "the string's bytes are not in the file"),
    ("gguf/n_string_length_over_1gib", "gguf.string_length", "the 1 GiB cap; a corpus file cannot hold the string, whose length then runs past the end (the same rule)"),
    ("gguf/n_array_count_past_eof", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_array_count_times_size_wraps", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_string_array_count_past_eof", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_u32_array_count_under_limit_data_short", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_u8_array_count_2pow30_data_short", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_string_array_count_under_limit_data_short", "gguf.array_length", "the elements are not in the file"),
    ("gguf/n_alignment_2pow31_data_past_eof", "gguf.tensor_out_of_bounds", "the data section starts past the end"),
    ("gguf/n_offset_past_eof_spec_mode", "gguf.tensor_out_of_bounds", "the tensor's bytes are not in the file"),
    ("gguf/n_size_past_eof", "gguf.tensor_out_of_bounds", "the tensor's bytes are not in the file"),
    ("gguf/n_data_truncated_by_one_byte", "gguf.tensor_out_of_bounds", "the tensor's last byte is not in the file"),
    ("ninfer/n_truncated_magic", "ninfer.truncated", "no 8-byte magic"),
    ("ninfer/n_truncated_prefix", "ninfer.truncated", "no 16-byte prefix"),
    ("ninfer/n_json_bytes_past_eof", "ninfer.truncated", "the directory is not in the file"),
    ("ninfer/n_payload_offset_past_eof", "ninfer.truncated", "the payload is not in the file"),
    ("boundaries/n_magic_prefix_7_bytes", "ninfer.truncated", "no 8-byte magic"),
    ("boundaries/n_json_end_exactly_u64_max", "ninfer.truncated", "the directory is not in the file"),
    ("ninfer/n_range_past_payload", "ninfer.range_bounds", "the object's last byte is not in the payload"),
    ("boundaries/n_range_end_exactly_u64_max", "ninfer.range_bounds", "the object's bytes are not in the payload"),
    // A count, size or offset that cannot be represented: the check is what bounds allocation
    // and slicing, nothing can be placed past it.
    ("gguf/n_tensor_count_near_2_64_over_sizeof", "gguf.count_overflow", "the count bounds every allocation sized by it"),
    ("gguf/n_tensor_count_u64_max", "gguf.count_overflow", "the count bounds every allocation sized by it"),
    ("gguf/n_kv_count_near_2_64_over_sizeof", "gguf.count_overflow", "the count bounds every allocation sized by it"),
    ("gguf/n_kv_count_u64_max", "gguf.count_overflow", "the count bounds every allocation sized by it"),
    ("gguf/n_ne_int64max_2_1_1", "gguf.tensor_element_overflow", "no element count to size the tensor"),
    ("gguf/n_f32_ne0_2pow62", "gguf.tensor_element_overflow", "no row stride to size the tensor"),
    ("gguf/n_dim_negative", "gguf.tensor_element_overflow", "the same field, one check later: a negative i64 dim read as u64 makes the element count overflow"),
    ("gguf/n_f32_ne0_size_max_over_4", "gguf.tensor_size_overflow", "no byte size to place the tensor"),
    ("gguf/n_sum_of_sizes_wraps", "gguf.tensor_size_overflow", "no running offset to place the next tensor"),
    ("gguf/n_offset_plus_size_wraps_spec_mode", "gguf.tensor_size_overflow", "no absolute range to place the tensor"),
    ("ninfer/n_json_bytes_overflow", "ninfer.arith_overflow", "no directory end"),
    ("boundaries/n_json_bytes_overflow_exactly_16_bytes", "ninfer.arith_overflow", "no directory end"),
    // A boundary of the length checks: the file is the 8-byte magic alone, so past the magic
    // the prefix is missing too (the reference and py_ninfer both read the magic first).
    ("boundaries/n_magic_bad_exactly_8_bytes", "ninfer.truncated", "the file is the magic alone: no prefix after it"),
    ("ninfer/n_range_offset_overflow", "ninfer.arith_overflow", "no object end"),
    // A field with no meaning to read on with.
    ("gguf/n_nested_array", "gguf.nested_array", "an array of arrays has no element size"),
    ("gguf/n_value_type_13", "gguf.value_type", "a type id outside 0..=12 has no size to skip"),
    ("gguf/n_array_elem_type_13", "gguf.value_type", "a type id outside 0..=12 has no size to skip"),
    ("gguf/n_alignment_0", "gguf.alignment_value", "alignment 0 places nothing"),
    ("gguf/n_n_dims_5", "gguf.tensor_n_dims", "ne has four slots"),
    ("gguf/n_n_dims_u32_max", "gguf.tensor_n_dims", "ne has four slots"),
    ("gguf/n_type_minus_1", "gguf.tensor_type", "an unknown type has no block size"),
    ("gguf/n_type_4_removed", "gguf.tensor_type", "a removed type has no block size"),
    ("gguf/n_type_31_removed", "gguf.tensor_type", "a removed type has no block size"),
    ("gguf/n_type_36_removed", "gguf.tensor_type", "a removed type has no block size"),
    ("gguf/n_type_43_unknown", "gguf.tensor_type", "an unknown type has no block size"),
    ("gguf/n_type_144_unknown", "gguf.tensor_type", "an unknown type has no block size"),
    ("gguf/n_type_q2_0_beellama", "gguf.tensor_type", "a fork's type has no block size here"),
    ("gguf/n_type_q2_0s_beellama", "gguf.tensor_type", "a fork's type has no block size here"),
    ("gguf/n_id42_neither_g64_nor_g128", "gguf.id42_ambiguous", "neither layout gives the tensor a size"),
    ("gguf/n_offset_not_aligned", "gguf.tensor_offset_sequence", "strict mode: every running sum of padded sizes is aligned, so a misaligned offset always breaks the sequence rule too (checked second, as mainline does)"),
    ("ninfer/n_json_syntax", "ninfer.json_syntax", "no directory to read"),
    ("ninfer/n_json_not_utf8", "ninfer.json_syntax", "no directory to read"),
    ("ninfer/n_json_deep_nesting", "ninfer.json_syntax", "the parser's depth limit: no directory to read"),
    ("boundaries/n_directory_depth_128", "ninfer.json_syntax", "the parser's depth limit: no directory to read"),
    ("boundaries/n_directory_depth_128_after_close", "ninfer.json_syntax", "the parser's depth limit: no directory to read"),
    ("boundaries/n_directory_depth_129_after_close", "ninfer.json_syntax", "the parser's depth limit: no directory to read"),
    ("boundaries/n_directory_depth_129_after_string", "ninfer.json_syntax", "the parser's depth limit: no directory to read"),
    ("ninfer/n_duplicate_member", "ninfer.dir_members", "the JSON parser refuses the object: no directory to read"),
    ("ninfer/n_root_missing_objects", "ninfer.dir_members", "no value for a required member"),
    ("ninfer/n_identity_missing_weights_id", "ninfer.dir_members", "no value for a required member"),
    ("ninfer/n_tensor_missing_layout", "ninfer.dir_members", "no value for a required member"),
    ("ninfer/n_object_missing_kind", "ninfer.dir_members", "no value for a required member"),
    ("boundaries/n_directory_depth_127", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_root_not_object", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_identity_weights_id_number", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_objects_not_array", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_offset_null", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_bytes_bool", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_offset_float", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_offset_negative", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_shape_float", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_shape_not_array", "ninfer.dir_type", "no value of the type the member needs"),
    ("ninfer/n_kind_unknown", "ninfer.dir_kind", "an unknown kind has no members to read"),
    ("ninfer/n_format_unknown", "ninfer.dir_format", "an unknown format has no size"),
    ("ninfer/n_layout_unknown", "ninfer.dir_layout", "an unknown layout has no size"),
    ("ninfer/n_shape_rank1_row_split", "ninfer.dir_shape", "row-split geometry needs (rows, columns)"),
    ("boundaries/n_rowsplit_zero_rows", "ninfer.dir_shape", "row-split geometry needs positive rows and columns"),
    ("boundaries/n_rowsplit_zero_cols", "ninfer.dir_shape", "row-split geometry needs positive rows and columns"),
    ("pack/n_pack_template_is_ternary_artifact", "pack.template", "the packer maps only a groupwise-int template"),
    ("pack/n_rows_attn_q_not_multiple_of_512", "perm.shape", "the permutation is not defined for this row count"),
    ("pack/n_rows_perm_row_wrong_rows", "perm.shape", "the permutation is not defined for this row count"),
    // The same fault met again by the next stage.
    ("ninfer/n_bytes_mismatch", "codec.length", "the next stage, decoding the object, meets the same extra byte"),
    ("ninfer/n_shape_nvfp4_rows", "codec.length", "the next stage, decoding the NVFP4 object, checks the same N % 128 rule"),
];

/// What the reference answers on `case` (files under `root`) with the checks of `disabled`
/// switched off.
fn answer_without(root: &Path, case: &CaseEntry, disabled: &[ErrorClass]) -> Answer {
    let req = request_json(case, root);
    with_disabled(disabled, || answer_request(&root.join(&case.file), &req))
}

/// One line per `n_` case that breaks the single-fault property, and per stale [`STOPS`]
/// entry (empty: the property holds).
fn violations(root: &Path, cases: &[CaseEntry], stops: &[(&str, &str, &str)]) -> Vec<String> {
    let mut out: Vec<String> = stops
        .iter()
        .filter(|s| !cases.iter().any(|c| c.id == s.0))
        .map(|s| format!("{}: listed in STOPS but not in the corpus", s.0))
        .collect();
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
        match (answer_without(root, case, &[class]), stop) {
            (Answer::Accept { .. }, None) => {}
            (Answer::Accept { .. }, Some(_)) => out.push(format!(
                "{}: listed in STOPS but accepts without {id}",
                case.id
            )),
            (Answer::Reject { class: got, .. }, Some((_, want, _)))
                if got.as_deref() == Some(*want) => {}
            (
                Answer::Reject {
                    class: got,
                    message,
                },
                _,
            ) => out.push(format!(
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
    let bad = violations(&repo_root().join("conformance"), &cases, STOPS);
    assert!(
        bad.is_empty(),
        "{} of {n} cases:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The one-case corpus of `id`, with `edit` applied to its entry.
fn one_case(id: &str, edit: impl FnOnce(&mut CaseEntry)) -> Vec<CaseEntry> {
    let mut case = corpus().into_iter().find(|c| c.id == id).unwrap();
    edit(&mut case);
    vec![case]
}

/// Negative control: a case labelled with a rule it does not break fails the property (with
/// `gguf.version` off, the bad magic still rejects), and so does a STOPS entry that names the
/// wrong class.
#[test]
fn a_mislabelled_case_fails_the_property() {
    let root = repo_root().join("conformance");
    let control = one_case("gguf/n_bad_magic", |_| {});
    assert_eq!(violations(&root, &control, &[]), Vec::<String>::new());
    let mislabelled = one_case("gguf/n_bad_magic", |c| {
        c.expect.class = Some("gguf.version".into())
    });
    let bad = violations(&root, &mislabelled, &[]);
    assert!(
        bad.len() == 1 && bad[0].contains("rejects as gguf.magic"),
        "{bad:?}"
    );
    // A truncated file stops at its own rule (listed) but not at a class it does not break.
    let trunc = one_case("gguf/n_empty_file", |_| {});
    let listed = [("gguf/n_empty_file", "gguf.truncated", "no bytes")];
    assert_eq!(violations(&root, &trunc, &listed), Vec::<String>::new());
    let wrong = [("gguf/n_empty_file", "gguf.magic", "no bytes")];
    assert_eq!(violations(&root, &trunc, &wrong).len(), 1);
    // A listed case that accepts with its rule off is stale; so is an entry for no case.
    let stale = [("gguf/n_bad_magic", "gguf.magic", "stale")];
    assert_eq!(violations(&root, &control, &stale).len(), 1);
    let ghost = [("gguf/n_no_such_case", "gguf.magic", "ghost")];
    assert_eq!(violations(&root, &control, &ghost).len(), 1);
}

/// Negative control: a file with two faults (bad magic and version 4) labelled with the first
/// is caught, because with the magic rule off the version rule still refuses it.
#[test]
fn a_two_fault_file_fails_the_property() {
    let root = repo_root().join("conformance");
    let dir = tempfile::tempdir().unwrap();
    let case = one_case("gguf/n_bad_magic", |c| c.file = "two_faults.gguf".into());
    let mut bytes = std::fs::read(root.join("gguf/n_bad_magic.gguf")).unwrap();
    bytes[4..8].copy_from_slice(&4u32.to_le_bytes());
    std::fs::write(dir.path().join("two_faults.gguf"), &bytes).unwrap();
    let bad = violations(dir.path(), &case, &[]);
    assert!(
        bad.len() == 1 && bad[0].contains("rejects as gguf.version"),
        "{bad:?}"
    );
    // The same file with the version repaired is single-fault again.
    bytes[4..8].copy_from_slice(&3u32.to_le_bytes());
    std::fs::write(dir.path().join("two_faults.gguf"), &bytes).unwrap();
    assert_eq!(violations(dir.path(), &case, &[]), Vec::<String>::new());
}
