//! Reader/writer behaviour: round trips, versions, alignment, id-42 disambiguation, trap T-3.

use ninfer_ternary::gguf::{self, GgufWriter, Id42Policy, MetaValue, Mode, Options, ValueType};
use ninfer_ternary::ErrorClass;

fn payload(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed))
        .collect()
}

fn all_values() -> Vec<(&'static str, MetaValue)> {
    vec![
        ("t.u8", MetaValue::U8(200)),
        ("t.i8", MetaValue::I8(-7)),
        ("t.u16", MetaValue::U16(65000)),
        ("t.i16", MetaValue::I16(-30000)),
        ("t.u32", MetaValue::U32(4_000_000_000)),
        ("t.i32", MetaValue::I32(-2_000_000_000)),
        ("t.f32", MetaValue::F32(1.5)),
        ("t.bool", MetaValue::Bool(true)),
        ("t.string", MetaValue::str("héllo")),
        ("t.array_i32", MetaValue::array(&[1i32, -2, 3])),
        ("t.u64", MetaValue::U64(u64::MAX)),
        ("t.i64", MetaValue::I64(i64::MIN)),
        ("t.f64", MetaValue::F64(-2.25)),
        ("t.array_u8", MetaValue::array(&[1u8, 2, 255])),
        ("t.array_bool", MetaValue::array(&[true, false])),
        ("t.array_f64", MetaValue::array(&[0.5f64])),
        ("t.array_str", MetaValue::array_str(&["a", "", "ccc"])),
        ("t.array_empty", MetaValue::Array(ValueType::U16, vec![])),
    ]
}

fn sample_writer() -> GgufWriter {
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "test");
    for (k, v) in all_values() {
        w.kv(k, v);
    }
    w.tensor("a", &[8, 2], 0).unwrap();
    w.tensor("b", &[3], 1).unwrap();
    w.tensor("c", &[64], 8).unwrap();
    w
}

fn sample_data() -> Vec<Vec<u8>> {
    vec![payload(64, 1), payload(6, 2), payload(68, 3)]
}

#[test]
fn all_13_value_types_round_trip() {
    let w = sample_writer();
    let data = sample_data();
    let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let bytes = w.to_bytes(&refs).unwrap();
    let g = gguf::parse(&bytes, Mode::Strict).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (k, v) in all_values() {
        let got = g.get(k).unwrap_or_else(|| panic!("{k} missing"));
        seen.insert(got.value_type().id());
        assert_eq!(got.to_owned_value(), v, "{k}");
    }
    assert_eq!(seen.len(), 13, "every value type appears");
    assert_eq!(g.get_u32("t.u32").unwrap(), 4_000_000_000);
    assert_eq!(
        g.get_array_as::<i32>("t.array_i32").unwrap(),
        vec![1, -2, 3]
    );
    assert_eq!(g.get_strs("t.array_str").unwrap(), vec!["a", "", "ccc"]);
    assert_eq!(
        g.get_array("t.array_bool").unwrap().as_bools().unwrap(),
        vec![true, false]
    );
    assert_eq!(g.get_uint("t.u16").unwrap(), 65000);
    assert_eq!(g.architecture(), Some("test"));
    // Typed access errors.
    assert_eq!(
        g.get_u32("t.i32").unwrap_err().class(),
        ErrorClass::GgufMetadataType
    );
    assert_eq!(
        g.get_u32("t.nope").unwrap_err().class(),
        ErrorClass::GgufMetadataMissing
    );
    assert_eq!(
        g.get_array("t.array_u8")
            .unwrap()
            .as_i32s()
            .unwrap_err()
            .class(),
        ErrorClass::GgufMetadataType
    );
    assert_eq!(
        g.get_array("t.array_u8")
            .unwrap()
            .as_strs()
            .unwrap_err()
            .class(),
        ErrorClass::GgufMetadataType
    );
}

#[test]
fn write_parse_rewrite_is_identical_and_deterministic() {
    let data = sample_data();
    let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let bytes = sample_writer().to_bytes(&refs).unwrap();
    assert_eq!(
        bytes,
        sample_writer().to_bytes(&refs).unwrap(),
        "same input, same bytes"
    );

    let g = gguf::parse(&bytes, Mode::Strict).unwrap();
    assert_eq!(g.version, 3);
    assert_eq!(g.alignment, 32);
    assert_eq!(g.data_offset % 32, 0);
    assert_eq!(bytes.len() as u64 % 32, 0, "last tensor padded too");
    let names: Vec<&str> = g.tensors.iter().map(|t| t.name).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(g.tensors[0].dims(), &[8, 2]);
    assert_eq!(g.tensors[2].ggml.name, "Q8_0");
    assert_eq!(g.tensors[2].nbytes, 68);
    assert_eq!(
        g.tensors.iter().map(|t| t.offset).collect::<Vec<_>>(),
        [0, 64, 96]
    );
    for (t, d) in g.tensors.iter().zip(&data) {
        assert_eq!(g.tensor_data(t), d.as_slice(), "{}", t.name);
        assert_eq!(g.tensor(t.name).unwrap().index, t.index);
    }

    // Re-emit from the parsed view: identical bytes.
    let mut w = GgufWriter::new();
    for kv in &g.kvs {
        w.kv(kv.key, kv.value.to_owned_value());
    }
    for t in &g.tensors {
        w.tensor_as(t.name, t.dims(), t.ggml).unwrap();
    }
    let again = w
        .write_to(Vec::new(), |i| Ok(g.tensor_data(&g.tensors[i])))
        .unwrap();
    assert_eq!(again, bytes);
}

#[test]
fn streaming_matches_in_memory() {
    let w = sample_writer();
    let data = sample_data();
    let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let whole = w.to_bytes(&refs).unwrap();
    assert_eq!(
        w.header_bytes().unwrap(),
        whole[..w.data_offset().unwrap() as usize]
    );
    assert_eq!(w.file_len().unwrap(), whole.len() as u64);
    let mut s = w.stream(Vec::new()).unwrap();
    s.write_tensor(&data[0]).unwrap();
    s.write_tensor_from(std::io::Cursor::new(&data[1])).unwrap();
    assert!(
        s.write_tensor(&data[0]).is_err(),
        "wrong length for tensor c"
    );
    s.write_tensor(&data[2]).unwrap();
    assert_eq!(s.finish().unwrap(), whole);
    let s = w.stream(Vec::new()).unwrap();
    assert!(s.finish().is_err(), "unfinished stream");
}

#[test]
fn alignment_written_only_when_set() {
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "x");
    let b = w.to_bytes(&[]).unwrap();
    assert!(gguf::parse(&b, Mode::Strict)
        .unwrap()
        .get("general.alignment")
        .is_none());
    assert!(GgufWriter::new().alignment(48).is_err());
}

#[test]
fn version_2_is_readable() {
    let mut w = sample_writer();
    w.version(2);
    let data = sample_data();
    let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let b = w.to_bytes(&refs).unwrap();
    let g = gguf::parse(&b, Mode::Strict).unwrap();
    assert_eq!(g.version, 2);
    assert_eq!(g.tensors.len(), 3);
}

#[test]
fn custom_alignments_64_and_1() {
    for a in [64u32, 1] {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "x");
        w.alignment(a).unwrap();
        w.tensor("h", &[3], 1)
            .unwrap()
            .tensor("f", &[5], 0)
            .unwrap();
        let d = [payload(6, 9), payload(20, 4)];
        let b = w.to_bytes(&[&d[0], &d[1]]).unwrap();
        let g = gguf::parse(&b, Mode::Strict).unwrap();
        assert_eq!(g.alignment, a as u64);
        assert_eq!(g.data_offset % a as u64, 0);
        let expect_f = if a == 1 { 6 } else { 64 };
        assert_eq!(g.tensors[1].offset, expect_f);
        assert_eq!(g.tensor_data(&g.tensors[0]), d[0].as_slice());
        assert_eq!(g.tensor_data(&g.tensors[1]), d[1].as_slice());
        if a == 1 {
            assert_eq!(
                g.data_offset, g.tensor_info_end,
                "no padding at alignment 1"
            );
        }
    }
}

fn legacy() -> &'static ninfer_ternary::spec::GgmlType {
    ninfer_ternary::spec::get()
        .ggml_type_named("Q2_0_PRISM_LEGACY")
        .unwrap()
}

/// q: id 42 [4096], then f: F32 [8].
fn id42_file(g128: bool) -> Vec<u8> {
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "x");
    if g128 {
        w.tensor_as("q", &[4096], legacy()).unwrap();
    } else {
        w.tensor("q", &[4096], 42).unwrap();
    }
    w.tensor("f", &[8], 0).unwrap();
    let q = payload(if g128 { 1088 } else { 1152 }, 5);
    w.to_bytes(&[&q, &payload(32, 6)]).unwrap()
}

#[test]
fn id42_resolves_both_ways() {
    let b = id42_file(false);
    let g = gguf::parse(&b, Mode::Strict).unwrap();
    assert_eq!(g.tensors[0].ggml.name, "Q2_0");
    assert_eq!((g.tensors[0].type_id, g.tensors[0].nbytes), (42, 1152));
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);

    let b = id42_file(true);
    let g = gguf::parse(&b, Mode::Strict).unwrap();
    assert_eq!(g.tensors[0].ggml.name, "Q2_0_PRISM_LEGACY");
    assert_eq!((g.tensors[0].type_id, g.tensors[0].nbytes), (42, 1088));
    assert_eq!(g.tensors[0].ggml.retag_to, Some(142));
    assert!(
        g.warnings
            .iter()
            .any(|w| w.contains("legacy Prism") && w.contains("retag to 142")),
        "{:?}",
        g.warnings
    );
    assert_eq!(g.tensor_data(&g.tensors[1]), payload(32, 6).as_slice());
}

#[test]
fn id42_guessed_wrong_names_the_confusion() {
    // A mainline-only reader on a legacy file: offsets are 17/18 of what it expects.
    let e = gguf::parse_with(
        &id42_file(true),
        Options {
            mode: Mode::Strict,
            id42: Id42Policy::Mainline,
        },
    )
    .unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorOffsetSequence);
    assert!(
        e.detail()
            .contains("tensor 'f' has offset 1088, expected 1152"),
        "{e}"
    );
    assert!(
        e.detail().contains("17/18") && e.detail().contains("g64/g128 confusion"),
        "{e}"
    );
    // And the other way round.
    let e = gguf::parse_with(
        &id42_file(false),
        Options {
            mode: Mode::Strict,
            id42: Id42Policy::LegacyPrism,
        },
    )
    .unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorOffsetSequence);
    assert!(
        e.detail().contains("18/17") && e.detail().contains("g64/g128 confusion"),
        "{e}"
    );
}

#[test]
fn id42_ambiguous_and_undecidable() {
    // A span that neither layout fills.
    // The catalog's case as the committed corpus holds it (the catalog is not public API).
    let case = crate::common::hostile_gguf_cases()
        .into_iter()
        .find(|c| c.name == "id42_neither_g64_nor_g128")
        .unwrap();
    let e = gguf::parse(&case.bytes, Mode::Strict).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufId42Ambiguous);
    assert!(
        e.detail().contains("needs 1152") && e.detail().contains("needs 1088"),
        "{e}"
    );
    // 128 weights: 36 vs 34 bytes both pad to 64 — undecidable, assumed mainline with a warning.
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "x");
    w.tensor("q", &[128], 42).unwrap();
    let b = w.to_bytes(&[&payload(36, 1)]).unwrap();
    let g = gguf::parse(&b, Mode::Strict).unwrap();
    assert_eq!(g.tensors[0].ggml.name, "Q2_0");
    assert!(
        g.warnings.iter().any(|w| w.contains("too small")),
        "{:?}",
        g.warnings
    );
}

/// Trap T-3: the data section starts at align_up(end of tensor infos), not the end of the KVs.
#[test]
fn data_section_starts_after_the_tensor_infos() {
    // Tune a string so the KV block ends on a 32-byte boundary, and use 32-byte names so each
    // tensor info is 64 bytes: then a reader measuring from the KV end is off by exactly the
    // tensor-info size.
    for pad in 0..32 {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "x")
            .kv("t.pad", "p".repeat(pad).as_str());
        let names = ["a".repeat(32), "b".repeat(32)];
        w.tensor(&names[0], &[16], 0)
            .unwrap()
            .tensor(&names[1], &[8], 0)
            .unwrap();
        let d = [payload(64, 1), payload(32, 2)];
        let b = w.to_bytes(&[&d[0], &d[1]]).unwrap();
        let g = gguf::parse(&b, Mode::Strict).unwrap();
        if !g.tensor_info_offset.is_multiple_of(32) {
            continue;
        }
        let info_size = g.tensor_info_end - g.tensor_info_offset;
        assert_eq!(info_size, 2 * 64);
        assert_eq!(g.data_offset, g.tensor_info_end.div_ceil(32) * 32);
        let wrong_start = g.tensor_info_offset.div_ceil(32) * 32;
        assert_eq!(
            g.data_offset - wrong_start,
            info_size,
            "off by exactly the tensor-info size"
        );
        for (t, want) in g.tensors.iter().zip(&d) {
            assert_eq!(
                g.tensor_data(t),
                want.as_slice(),
                "correct reader finds the payload"
            );
            let s = (wrong_start + t.offset) as usize;
            assert_ne!(
                &b[s..s + want.len()],
                want.as_slice(),
                "wrong reader reads other bytes"
            );
        }
        return;
    }
    panic!("no padding made the KV block end aligned");
}

#[test]
fn gguf_file_owner_parses_a_mapped_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.gguf");
    let b = id42_file(true);
    std::fs::write(&p, &b).unwrap();
    let f = gguf::GgufFile::open(&p).unwrap();
    let g = f.parse(Mode::Spec).unwrap();
    assert_eq!(g.tensors.len(), 2);
    assert_eq!(g.bytes(), b.as_slice());
}

#[test]
fn tensor_size_rules() {
    let spec = ninfer_ternary::spec::get();
    let f32t = spec.ggml_type(0).unwrap();
    assert_eq!(gguf::tensor_size(&[4, 3], f32t), Ok((12, 48)));
    let pq2 = spec.ggml_type(142).unwrap();
    assert_eq!(gguf::tensor_size(&[256, 2], pq2), Ok((512, 136)));
    assert_eq!(
        gguf::tensor_size(&[100], pq2).unwrap_err().0,
        ErrorClass::GgufTensorBlockMultiple
    );
    assert_eq!(
        gguf::tensor_size(&[u64::MAX / 4], f32t).unwrap_err().0,
        ErrorClass::GgufTensorSizeOverflow
    );
    assert_eq!(
        gguf::tensor_size(&[1 << 62], f32t).unwrap_err().0,
        ErrorClass::GgufTensorElementOverflow
    );
}

mod roundtrip_prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn random_files_round_trip(
            ints in proptest::collection::vec(any::<i64>(), 0..6),
            strs in proptest::collection::vec("[a-z\u{e9}]{0,12}", 0..4),
            shapes in proptest::collection::vec(proptest::collection::vec(1u64..6, 1..=4), 0..5),
            align_pow in 0u32..8,
        ) {
            let mut w = GgufWriter::new();
            w.kv("general.architecture", "p");
            w.alignment(1 << align_pow).unwrap();
            for (i, x) in ints.iter().enumerate() {
                w.kv(&format!("p.i{i}"), *x);
            }
            w.kv("p.strs", MetaValue::array_str(&strs));
            let mut data = Vec::new();
            for (i, dims) in shapes.iter().enumerate() {
                w.tensor(&format!("t{i}"), dims, 0).unwrap();
                data.push(payload(dims.iter().product::<u64>() as usize * 4, i as u8));
            }
            let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
            let b = w.to_bytes(&refs).unwrap();
            let g = gguf::parse(&b, Mode::Strict).unwrap();
            prop_assert_eq!(g.alignment, 1u64 << align_pow);
            for (i, x) in ints.iter().enumerate() {
                prop_assert_eq!(g.get_as::<i64>(&format!("p.i{i}")).unwrap(), *x);
            }
            let got: Vec<&str> = g.get_strs("p.strs").unwrap();
            prop_assert_eq!(got, strs.iter().map(|s| s.as_str()).collect::<Vec<_>>());
            prop_assert_eq!(g.tensors.len(), shapes.len());
            for (t, (dims, d)) in g.tensors.iter().zip(shapes.iter().zip(&data)) {
                prop_assert_eq!(t.dims(), dims.as_slice());
                prop_assert_eq!(g.tensor_data(t), d.as_slice());
            }
        }
    }
}
