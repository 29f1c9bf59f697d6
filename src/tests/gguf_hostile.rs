//! The hostile-input catalog: each case fails with exactly its class, every GGUF class is
//! exercised, controls parse, and random mutations never panic.

use crate::corpus::catalogs::gguf_hostile::{accepted_controls, hostile_cases};
use crate::gguf::{self, Id42Policy, Mode, Options};
use crate::ErrorClass;
use proptest::prelude::*;
use std::collections::BTreeSet;

#[test]
fn every_hostile_case_fails_with_exactly_its_class() {
    let mut failures = Vec::new();
    for case in hostile_cases() {
        match case.run() {
            Ok(()) => failures.push(format!("{}: accepted, expected {}", case.name, case.class)),
            Err(e) => {
                if e.class() != case.class {
                    failures.push(format!("{}: got {e}, expected {}", case.name, case.class));
                }
                if let Some(off) = e.offset() {
                    if off > case.bytes.len() as u64 {
                        failures.push(format!(
                            "{}: error offset {off} past the {}-byte file",
                            case.name,
                            case.bytes.len()
                        ));
                    }
                }
                assert!(!e.detail().is_empty(), "{}: empty detail", case.name);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn decode_phase_cases_parse_first() {
    for case in hostile_cases().into_iter().filter(|c| c.decode.is_some()) {
        gguf::parse(&case.bytes, case.mode)
            .unwrap_or_else(|e| panic!("{}: parse must succeed: {e}", case.name));
    }
}

#[test]
fn every_gguf_class_is_exercised() {
    let used: BTreeSet<ErrorClass> = hostile_cases().iter().map(|c| c.class).collect();
    let missing: Vec<&str> = ErrorClass::ALL
        .iter()
        .filter(|c| c.id().starts_with("gguf."))
        .filter(|c| !used.contains(c))
        .map(|c| c.id())
        .collect();
    assert!(
        missing.is_empty(),
        "classes without a hostile case: {missing:?}"
    );
}

#[test]
fn catalog_is_deterministic_with_unique_names() {
    let a = hostile_cases();
    let b = hostile_cases();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(
            (x.name, &x.bytes, x.mode, x.class),
            (y.name, &y.bytes, y.mode, y.class)
        );
    }
    let mut names: Vec<&str> = a
        .iter()
        .map(|c| c.name)
        .chain(accepted_controls().iter().map(|c| c.name))
        .collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "case names must be unique");
}

#[test]
fn section_9_items_are_all_present() {
    let names: BTreeSet<&str> = hostile_cases().iter().map(|c| c.name).collect();
    for want in [
        "bad_magic",
        "version_0",
        "version_1",
        "version_4",
        "big_endian_v3",
        "kv_count_near_2_64_over_sizeof",
        "tensor_count_near_2_64_over_sizeof",
        "string_length_past_eof",
        "string_length_over_1gib",
        "key_empty",
        "key_duplicate",
        "nested_array",
        "array_count_past_eof",
        "bool_2",
        "value_type_13",
        "alignment_0",
        "alignment_3",
        "alignment_i32",
        "alignment_2pow31_data_past_eof",
        "tensor_name_64_bytes",
        "tensor_name_duplicate",
        "n_dims_0",
        "n_dims_5",
        "n_dims_u32_max",
        "dim_zero",
        "dim_negative",
        "ne_int64max_2_1_1",
        "f32_ne0_size_max_over_4",
        "f32_ne0_2pow62",
        "ne0_not_block_multiple",
        "type_minus_1",
        "type_4_removed",
        "type_31_removed",
        "type_36_removed",
        "type_43_unknown",
        "type_144_unknown",
        "offset_not_aligned",
        "offset_not_running_sum",
        "size_past_eof",
        "offset_past_eof_spec_mode",
        "sum_of_sizes_wraps",
        "data_truncated_by_one_byte",
        "array_element_type_confusion",
    ] {
        assert!(names.contains(want), "missing §9 case {want}");
    }
    let controls: BTreeSet<&str> = accepted_controls().iter().map(|c| c.name).collect();
    assert!(controls.contains("alignment_absent_defaults_to_32"));
}

#[test]
fn accepted_controls_parse() {
    for c in accepted_controls() {
        c.run().unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
}

#[test]
fn messages_name_the_cause() {
    let by = |n: &str| {
        hostile_cases()
            .into_iter()
            .find(|c| c.name == n)
            .unwrap()
            .run()
            .unwrap_err()
    };
    assert!(by("big_endian_v3").detail().contains("big-endian GGUF"));
    assert!(by("offset_not_running_sum")
        .detail()
        .contains("tensor 'b' has offset 64, expected 32"));
    let e = by("id42_neither_g64_nor_g128");
    assert!(
        e.detail().contains("1152") && e.detail().contains("1088"),
        "{e}"
    );
    assert!(by("string_length_over_1gib").detail().contains("limit"));
}

fn valid() -> Vec<u8> {
    accepted_controls()
        .into_iter()
        .find(|c| c.name == "valid_small")
        .unwrap()
        .bytes
}

/// Parses and then touches everything a consumer might, to surface panics.
fn exercise(bytes: &[u8], opts: Options) {
    match gguf::parse_with(bytes, opts) {
        Ok(g) => {
            for kv in &g.kvs {
                if let Some(a) = kv.value.as_array() {
                    let _ = a.as_u8s();
                    let _ = a.as_i32s();
                    let _ = a.as_f64s();
                    let _ = a.as_strs();
                    let _ = a.to_owned_value();
                }
                let _ = g.get_u32(kv.key);
                let _ = g.get_str(kv.key);
            }
            for t in &g.tensors {
                assert_eq!(g.tensor_data(t).len() as u64, t.nbytes);
                assert!(t.abs_offset + t.nbytes <= bytes.len() as u64);
            }
        }
        Err(e) => {
            if let Some(off) = e.offset() {
                assert!(
                    off <= bytes.len() as u64,
                    "offset {off} > len {}: {e}",
                    bytes.len()
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn byte_mutations_never_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        words in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..3),
        cut in proptest::option::of(any::<usize>()),
        strict in any::<bool>(),
    ) {
        let mut b = valid();
        for (i, x) in flips {
            let n = b.len();
            b[i % n] = x;
        }
        for (i, w) in words {
            let n = b.len() - 8;
            let i = i % n;
            b[i..i + 8].copy_from_slice(&w.to_le_bytes());
        }
        if let Some(c) = cut {
            let n = b.len();
            b.truncate(c % (n + 1));
        }
        let mode = if strict { Mode::Strict } else { Mode::Spec };
        for id42 in [Id42Policy::Auto, Id42Policy::Mainline] {
            exercise(&b, Options { mode, id42 });
        }
    }

    #[test]
    fn every_truncation_of_a_hostile_or_control_case_is_clean(idx in any::<usize>(), cut in any::<usize>()) {
        let mut all: Vec<Vec<u8>> = hostile_cases().into_iter().map(|c| c.bytes).collect();
        all.extend(accepted_controls().into_iter().map(|c| c.bytes));
        let b = &all[idx % all.len()];
        let b = &b[..cut % (b.len() + 1)];
        exercise(b, Options { mode: Mode::Strict, id42: Id42Policy::Auto });
        exercise(b, Options { mode: Mode::Spec, id42: Id42Policy::Auto });
    }
}

#[test]
fn every_prefix_of_the_valid_file_is_clean() {
    let b = valid();
    for n in 0..b.len() {
        let e =
            gguf::parse(&b[..n], Mode::Strict).expect_err("a strict prefix cannot be a whole file");
        assert!(e.offset().unwrap_or(0) <= n as u64);
    }
    gguf::parse(&b, Mode::Strict).unwrap();
}
