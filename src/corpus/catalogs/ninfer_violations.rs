//! A catalog of `.ninfer` files that each break exactly one container or directory rule,
//! derived deterministically from one valid artifact. Tests, the conformance corpus and the
//! fuzz seeds all use it.

use crate::error::ErrorClass;
use crate::ninfer::writer::{header_bytes, plan, to_bytes, PlannedObject};
use crate::ninfer::{Directory, Identity, ObjectBody};
use crate::spec::LayoutId;

/// One broken (or, for controls, valid) container.
pub struct Violation {
    /// Unique case name (corpus file and fuzz seed names derive from it).
    pub name: &'static str,
    /// The complete `.ninfer` file.
    pub bytes: Vec<u8>,
    /// `None` for the valid controls.
    pub class: Option<ErrorClass>,
    /// The rule the case breaks, in words (`control: …` for the valid controls).
    pub rule: &'static str,
}

/// The valid base artifact (see [`try_base_artifact`]); test code only.
#[cfg(test)]
#[allow(clippy::expect_used)]
pub fn base_artifact() -> (Directory, Vec<Vec<u8>>) {
    try_base_artifact().expect("base plan is valid")
}

/// The valid base artifact: a resource and one tensor of every layout.
pub fn try_base_artifact() -> crate::Result<(Directory, Vec<Vec<u8>>)> {
    let objects = vec![
        PlannedObject::resource("frontend/tokenizer.json", 13),
        PlannedObject::tensor("w/bf16", vec![4, 8], "BF16", LayoutId::ContiguousLeV1),
        PlannedObject::tensor("w/scalar", vec![], "FP32", LayoutId::ContiguousLeV1),
        PlannedObject::tensor(
            "w/pq2",
            vec![3, 128],
            "PQ2_0_G128",
            LayoutId::RowSplitK128V1,
        ),
        PlannedObject::tensor(
            "w/ptq1",
            vec![2, 256],
            "PTQ1_0_G128",
            LayoutId::RowSplitK128V1,
        ),
        PlannedObject::tensor("w/q4", vec![2, 130], "Q4G64_F16S", LayoutId::RowSplitK128V1),
        PlannedObject::tensor(
            "w/nvfp4",
            vec![128, 64],
            "NVFP4",
            LayoutId::BlockscaleK16M128x4V1,
        ),
        PlannedObject::tensor(
            "w/fp8",
            vec![2, 4],
            "FP8_E4M3FN_ROW_BF16S",
            LayoutId::RowScaleV1,
        ),
    ];
    let dir = plan(
        Identity {
            model_id: "corpus-model".into(),
            weights_id: "folded-ternary".into(),
        },
        objects,
    )
    .map_err(|e| crate::corpus::families::bug("base artifact plan", e))?;
    let payloads = dir
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            (0..o.bytes)
                .map(|j| (j as u8).wrapping_mul(31).wrapping_add(i as u8))
                .collect()
        })
        .collect();
    Ok((dir, payloads))
}

/// Replaces the directory text of a valid file, keeping the payload bytes.
fn with_json(valid: &[u8], json: &str) -> Vec<u8> {
    // `valid` is this catalog's own to_bytes output (16-byte header at least); a shorter one
    // would give wrong bytes, which generate()'s reference check of every case refuses.
    let old_len = valid
        .get(8..16)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| u64::from_le_bytes(*b));
    let payload_at = (16 + old_len).div_ceil(4096) * 4096;
    let mut out = valid[..8].to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    out.resize(((16 + json.len() as u64).div_ceil(4096) * 4096) as usize, 0);
    out.extend_from_slice(&valid[payload_at as usize..]);
    out
}

fn with_prefix(valid: &[u8], magic: &[u8; 8]) -> Vec<u8> {
    let mut v = valid.to_vec();
    v[..8].copy_from_slice(magic);
    v
}

/// Every rule broken once, plus valid controls.
pub fn cases() -> crate::Result<Vec<Violation>> {
    use crate::corpus::families::bug;
    let (dir, payloads) = try_base_artifact()?;
    let valid = to_bytes(&dir, &payloads).map_err(|e| bug("in-memory write", e))?;
    let json = dir.to_json();
    let edit = |from: &str, to: &str| -> Vec<u8> {
        assert!(json.contains(from), "catalog edit anchor missing: {from}");
        with_json(&valid, &json.replacen(from, to, 1))
    };
    let redir = |f: &dyn Fn(&mut Directory)| -> Vec<u8> {
        let mut d = dir.clone();
        f(&mut d);
        let mut out = header_bytes(&d);
        let payload_at = header_bytes(&dir).len();
        out.extend_from_slice(&valid[payload_at..]);
        out
    };
    use ErrorClass as C;
    let mut v = vec![
        Violation {
            name: "valid_all_layouts",
            bytes: valid.clone(),
            class: None,
            rule: "control: every layout and a resource",
        },
        Violation {
            name: "valid_trailing_bytes",
            bytes: [valid.clone(), vec![7; 100]].concat(),
            class: None,
            rule: "control: trailing bytes carry no meaning",
        },
        Violation {
            name: "magic_bad",
            bytes: with_prefix(&valid, b"NINFEX\0\x02"),
            class: Some(C::NinferMagic),
            rule: "magic NINFER\\0\\2",
        },
        Violation {
            name: "magic_v1",
            bytes: with_prefix(&valid, b"NINFER\0\x01"),
            class: Some(C::NinferMagicV1),
            rule: "v1 refused",
        },
        Violation {
            name: "magic_v3",
            bytes: with_prefix(&valid, b"NINFER\0\x03"),
            class: Some(C::NinferMagicV3),
            rule: "v3 refused",
        },
        Violation {
            name: "magic_part",
            bytes: with_prefix(&valid, b"NINPRT\0\x03"),
            class: Some(C::NinferMagicPart),
            rule: "part file refused",
        },
        Violation {
            name: "truncated_magic",
            bytes: valid[..5].to_vec(),
            class: Some(C::NinferTruncated),
            rule: "file holds the magic",
        },
        Violation {
            name: "truncated_prefix",
            bytes: valid[..12].to_vec(),
            class: Some(C::NinferTruncated),
            rule: "file holds the 16-byte prefix",
        },
        Violation {
            name: "json_bytes_past_eof",
            bytes: {
                let mut b = valid.clone();
                b[8..16].copy_from_slice(&(valid.len() as u64).to_le_bytes());
                b
            },
            class: Some(C::NinferTruncated),
            rule: "directory within the file",
        },
        Violation {
            name: "json_bytes_overflow",
            bytes: {
                let mut b = valid.clone();
                b[8..16].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
                b
            },
            class: Some(C::NinferArithOverflow),
            rule: "16 + json_bytes checked",
        },
        Violation {
            name: "payload_offset_past_eof",
            bytes: valid[..16 + json.len() + 1].to_vec(),
            class: Some(C::NinferTruncated),
            rule: "file must reach payload_offset",
        },
        Violation {
            name: "json_syntax",
            bytes: edit("]}", "]"),
            class: Some(C::NinferJsonSyntax),
            rule: "directory is JSON",
        },
        Violation {
            name: "json_not_utf8",
            bytes: edit("corpus-model", "corpus-\u{00ff}model")
                .iter()
                .map(|&b| if b == 0xc3 { 0xff } else { b })
                .collect(),
            class: Some(C::NinferJsonSyntax),
            rule: "directory is UTF-8",
        },
        Violation {
            name: "json_deep_nesting",
            bytes: with_json(&valid, &format!("{}{}", "[".repeat(200), "]".repeat(200))),
            class: Some(C::NinferJsonSyntax),
            rule: "nesting bounded (no stack exhaustion)",
        },
        Violation {
            name: "root_extra_member",
            bytes: edit("{\"identity\"", "{\"extra\":1,\"identity\""),
            class: Some(C::NinferDirMembers),
            rule: "root members exact",
        },
        Violation {
            name: "root_missing_objects",
            bytes: with_json(
                &valid,
                "{\"identity\":{\"model_id\":\"m\",\"weights_id\":\"w\"}}",
            ),
            class: Some(C::NinferDirMembers),
            rule: "root members exact",
        },
        Violation {
            name: "root_not_object",
            bytes: with_json(&valid, "[]"),
            class: Some(C::NinferDirType),
            rule: "root is an object",
        },
        Violation {
            name: "identity_extra_member",
            bytes: edit("\"weights_id\"", "\"revision\":\"1\",\"weights_id\""),
            class: Some(C::NinferDirMembers),
            rule: "identity members exact",
        },
        Violation {
            name: "identity_missing_weights_id",
            bytes: edit(",\"weights_id\":\"folded-ternary\"", ""),
            class: Some(C::NinferDirMembers),
            rule: "identity members exact",
        },
        Violation {
            name: "identity_empty_model_id",
            bytes: edit("\"corpus-model\"", "\"\""),
            class: Some(C::NinferDirIdentity),
            rule: "identity non-empty",
        },
        Violation {
            name: "identity_weights_id_number",
            bytes: edit("\"folded-ternary\"", "7"),
            class: Some(C::NinferDirType),
            rule: "identity values are strings",
        },
        Violation {
            name: "objects_not_array",
            bytes: with_json(
                &valid,
                "{\"identity\":{\"model_id\":\"m\",\"weights_id\":\"w\"},\"objects\":{}}",
            ),
            class: Some(C::NinferDirType),
            rule: "objects is an array",
        },
        Violation {
            name: "duplicate_member",
            bytes: edit(
                "\"name\":\"w/bf16\"",
                "\"name\":\"w/bf16\",\"name\":\"w/bf16\"",
            ),
            class: Some(C::NinferDirMembers),
            rule: "no duplicate members",
        },
        Violation {
            name: "tensor_extra_member",
            bytes: edit(
                "\"name\":\"w/bf16\"",
                "\"name\":\"w/bf16\",\"dtype\":\"bf16\"",
            ),
            class: Some(C::NinferDirMembers),
            rule: "tensor members exact",
        },
        Violation {
            name: "tensor_missing_layout",
            bytes: edit(",\"layout\":\"contiguous-le-v1\"", ""),
            class: Some(C::NinferDirMembers),
            rule: "tensor members exact",
        },
        Violation {
            name: "resource_extra_shape",
            bytes: edit(
                "\"encoding\":\"raw-bytes-v1\"",
                "\"encoding\":\"raw-bytes-v1\",\"shape\":[13]",
            ),
            class: Some(C::NinferDirMembers),
            rule: "resource members exact",
        },
        Violation {
            name: "object_missing_kind",
            bytes: edit("\"kind\":\"resource\",", ""),
            class: Some(C::NinferDirMembers),
            rule: "kind present",
        },
        Violation {
            name: "offset_null",
            bytes: edit("\"offset\":0", "\"offset\":null"),
            class: Some(C::NinferDirType),
            rule: "no null",
        },
        Violation {
            name: "bytes_bool",
            bytes: edit("\"bytes\":13", "\"bytes\":true"),
            class: Some(C::NinferDirType),
            rule: "no bool-as-int",
        },
        Violation {
            name: "offset_float",
            bytes: edit("\"offset\":0", "\"offset\":0.0"),
            class: Some(C::NinferDirType),
            rule: "no float-as-int",
        },
        Violation {
            name: "offset_negative",
            bytes: edit("\"offset\":0", "\"offset\":-1"),
            class: Some(C::NinferDirType),
            rule: "offsets non-negative",
        },
        Violation {
            name: "shape_float",
            bytes: edit("\"shape\":[4,8]", "\"shape\":[4,8.0]"),
            class: Some(C::NinferDirType),
            rule: "shape of integers",
        },
        Violation {
            name: "shape_not_array",
            bytes: edit("\"shape\":[4,8]", "\"shape\":32"),
            class: Some(C::NinferDirType),
            rule: "shape is an array",
        },
        Violation {
            name: "kind_unknown",
            bytes: edit("\"kind\":\"resource\"", "\"kind\":\"blob\""),
            class: Some(C::NinferDirKind),
            rule: "kind tensor|resource",
        },
        Violation {
            name: "name_empty",
            bytes: redir(&|d| d.objects[1].name.clear()),
            class: Some(C::NinferDirName),
            rule: "names non-empty",
        },
        Violation {
            name: "name_duplicate",
            bytes: redir(&|d| d.objects[2].name = "w/bf16".into()),
            class: Some(C::NinferDirDuplicateName),
            rule: "names unique",
        },
        Violation {
            name: "name_case_differs_is_valid",
            bytes: redir(&|d| d.objects[2].name = "W/BF16".into()),
            class: None,
            rule: "control: names are case-sensitive",
        },
        Violation {
            name: "format_unknown",
            bytes: edit("\"format\":\"PQ2_0_G128\"", "\"format\":\"t2_g128_fp16\""),
            class: Some(C::NinferDirFormat),
            rule: "format in the registry (T-17 cross-fork name)",
        },
        Violation {
            name: "layout_unknown",
            bytes: edit(
                "\"layout\":\"row-scale-v1\"",
                "\"layout\":\"ggml-blocks-v1\"",
            ),
            class: Some(C::NinferDirLayout),
            rule: "layout known",
        },
        Violation {
            name: "layout_refuses_format",
            bytes: edit(
                "\"format\":\"BF16\",\"layout\":\"contiguous-le-v1\"",
                "\"format\":\"BF16\",\"layout\":\"row-split-k128-v1\"",
            ),
            class: Some(C::NinferDirLayout),
            rule: "layout accepts format",
        },
        Violation {
            name: "shape_zero_dim",
            // bytes 0 with the shape: a zero-element tensor breaks no size rule, only this one
            // (src/tests/single_fault.rs).
            bytes: redir(&|d| {
                if let ObjectBody::Tensor { shape, .. } = &mut d.objects[1].body {
                    shape[1] = 0;
                }
                d.objects[1].bytes = 0;
            }),
            class: Some(C::NinferDirShape),
            rule: "positive dims",
        },
        Violation {
            name: "shape_rank1_row_split",
            bytes: edit("\"shape\":[3,128]", "\"shape\":[384]"),
            class: Some(C::NinferDirShape),
            rule: "row-split is rank 2",
        },
        Violation {
            name: "shape_rank17",
            bytes: edit(
                "\"shape\":[4,8]",
                // Same element count as [4,8], so the stored bytes still fit (single fault).
                &format!("\"shape\":[4,8,{}]", ["1"; 15].join(",")),
            ),
            class: Some(C::NinferDirShape),
            rule: "contiguous rank <= 16",
        },
        Violation {
            name: "shape_nvfp4_rows",
            // [64,128] has the bytes of [128,64] (codes, scales and divisor alike), so N % 128
            // is the only rule it breaks (src/tests/single_fault.rs).
            bytes: edit("\"shape\":[128,64]", "\"shape\":[64,128]"),
            class: Some(C::NinferDirShape),
            rule: "NVFP4 N % 128",
        },
        Violation {
            name: "encoding_unknown",
            bytes: edit("raw-bytes-v1", "gzip-v1"),
            class: Some(C::NinferDirEncoding),
            rule: "encoding raw-bytes-v1",
        },
        Violation {
            name: "resource_empty",
            bytes: redir(&|d| d.objects[0].bytes = 0),
            class: Some(C::NinferDirResourceEmpty),
            rule: "resource bytes > 0",
        },
        Violation {
            name: "bytes_mismatch",
            bytes: redir(&|d| d.objects[3].bytes += 1),
            class: Some(C::NinferDirBytes),
            rule: "bytes == encoded_size",
        },
        Violation {
            name: "range_overlap",
            bytes: redir(&|d| d.objects[2].offset = d.objects[1].offset),
            class: Some(C::NinferRangeOrder),
            rule: "offset >= cursor",
        },
        Violation {
            name: "range_out_of_order",
            bytes: redir(&|d| d.objects.swap(1, 3)),
            class: Some(C::NinferRangeOrder),
            rule: "objects in offset order",
        },
        Violation {
            name: "range_unaligned",
            bytes: redir(&|d| d.objects[3].offset += 1),
            class: Some(C::NinferRangeAlignment),
            rule: "tensor offset % 256",
        },
        Violation {
            name: "range_past_payload",
            bytes: valid[..valid.len() - 1].to_vec(),
            class: Some(C::NinferRangeBounds),
            rule: "offset + bytes <= payload",
        },
        Violation {
            name: "range_offset_overflow",
            bytes: redir(&|d| {
                let l = d.objects.len() - 1;
                d.objects[l].offset = u64::MAX - 255;
            }),
            class: Some(C::NinferArithOverflow),
            rule: "offset + bytes checked",
        },
    ];
    // A resource may sit at any byte (alignment 1).
    v.push(Violation {
        name: "resource_unaligned_is_valid",
        bytes: {
            let d = plan(
                dir.identity.clone(),
                vec![
                    PlannedObject::tensor("a", vec![3], "BF16", LayoutId::ContiguousLeV1),
                    PlannedObject::resource("r", 5),
                ],
            )
            .map_err(|e| bug("plan", e))?;
            let placed = d
                .objects
                .get(1)
                .is_some_and(|o| matches!(o.body, ObjectBody::Resource { .. }) && o.offset == 6);
            if !placed {
                return Err(bug(
                    "resource_unaligned_is_valid",
                    "the resource is not placed at byte 6 (alignment 1)",
                ));
            }
            to_bytes(&d, &[vec![1; 6], vec![2; 5]]).map_err(|e| bug("write", e))?
        },
        class: None,
        rule: "control: resources have alignment 1",
    });
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ninfer::Artifact;

    #[test]
    fn each_violation_is_rejected_with_its_own_class_and_controls_pass() {
        let cases = cases().unwrap();
        let mut names = std::collections::BTreeSet::new();
        for c in &cases {
            assert!(names.insert(c.name), "duplicate case {}", c.name);
            let r = Artifact::parse(&c.bytes);
            match (c.class, r) {
                (None, Ok(_)) => {}
                (None, Err(e)) => panic!("{}: control rejected: {e}", c.name),
                (Some(want), Ok(_)) => panic!("{}: accepted, expected {want}", c.name),
                (Some(want), Err(e)) => {
                    assert_eq!(e.class(), want, "{}: {e}", c.name);
                    assert!(
                        e.offset().unwrap_or(0) <= c.bytes.len() as u64,
                        "{}: offset outside the file",
                        c.name
                    );
                    assert!(!e.detail().is_empty());
                }
            }
        }
        // Every ninfer parse/validate class is exercised by some case.
        for class in ErrorClass::ALL
            .iter()
            .filter(|c| c.id().starts_with("ninfer.") && !c.id().starts_with("ninfer.object_"))
        {
            assert!(
                cases.iter().any(|c| c.class == Some(*class)),
                "no violation exercises {class}"
            );
        }
    }

    #[test]
    fn writer_is_deterministic_and_reader_round_trips() {
        let (dir, payloads) = base_artifact();
        let a = to_bytes(&dir, &payloads).unwrap();
        assert_eq!(a, to_bytes(&dir, &payloads).unwrap());
        let art = Artifact::parse(&a).unwrap();
        assert_eq!(art.directory, dir);
        assert_eq!(art.payload_offset % 4096, 0);
        assert_eq!(
            &a[16..16 + art.json_bytes as usize],
            dir.to_json().as_bytes()
        );
        for (o, p) in dir.objects.iter().zip(&payloads) {
            assert_eq!(art.object_bytes(o), p.as_slice());
        }
        // Re-encoding the parsed directory gives the same bytes (canonical writer).
        assert_eq!(art.directory.to_json(), dir.to_json());
    }

    #[test]
    fn planning_rejects_duplicate_names() {
        let e = plan(
            Identity {
                model_id: "m".into(),
                weights_id: "w".into(),
            },
            vec![
                PlannedObject::resource("x", 1),
                PlannedObject::resource("x", 2),
            ],
        )
        .unwrap_err();
        assert_eq!(e.class(), ErrorClass::NinferDirDuplicateName);
        assert!(e.detail().contains("duplicate object name: x"));
    }

    #[test]
    fn typed_views_give_planes_and_row_spans() {
        use crate::geometry::Plane;
        let (dir, payloads) = base_artifact();
        let a = to_bytes(&dir, &payloads).unwrap();
        let art = Artifact::parse(&a).unwrap();
        let v = art.row_split("w/ptq1").unwrap();
        assert_eq!(v.geom.payload_bytes, v.bytes.len() as u64);
        assert_eq!(v.row(Plane::Base, 1).len(), 48);
        assert_eq!(v.row(Plane::High, 1), &v.bytes[256 + 4..256 + 8]);
        assert_eq!(v.row(Plane::Scale, 0), &v.bytes[512..516]);
        assert_eq!(v.ggml_rows(0..2).unwrap().len(), 2 * 2 * 28);
        let (f, shape, bytes) = art.contiguous("w/bf16").unwrap();
        assert_eq!(
            (f.name.as_str(), shape, bytes.len()),
            ("BF16", vec![4, 8], 64)
        );
        assert_eq!(
            art.row_split("w/bf16").unwrap_err().class(),
            ErrorClass::NinferObjectKind
        );
        assert_eq!(
            art.view("nope").err().unwrap().class(),
            ErrorClass::NinferObjectMissing
        );
    }

    #[test]
    fn atomic_file_write_re_opens_and_leaves_no_temp() {
        let (dir, payloads) = base_artifact();
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.ninfer");
        crate::ninfer::writer::write_file(&p, &dir, |i, _, w| {
            w.write_all(&payloads[i])
                .map_err(crate::fsio::write_err("x"))
        })
        .unwrap();
        assert_eq!(
            std::fs::read(&p).unwrap(),
            to_bytes(&dir, &payloads).unwrap()
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // A producer that writes the wrong length fails and leaves nothing behind.
        let p2 = tmp.path().join("b.ninfer");
        let e = crate::ninfer::writer::write_file(&p2, &dir, |_, _, w| {
            w.write_all(&[0]).map_err(crate::fsio::write_err("x"))
        })
        .unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoWrite);
        assert!(!p2.exists());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    proptest::proptest! {
        #[test]
        fn byte_mutations_never_panic_and_errors_point_inside_the_file(
            edits in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 1..8),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let (dir, payloads) = base_artifact();
            let mut bytes = to_bytes(&dir, &payloads).unwrap();
            // Mutations focus on the prefix and directory, where the parser's decisions are.
            let hot = (16 + dir.to_json().len()).min(bytes.len());
            for (at, x) in edits {
                let i = at % hot;
                bytes[i] ^= x | 1;
            }
            let keep = bytes.len() - cut % 64;
            for b in [&bytes[..], &bytes[..keep]] {
                if let Err(e) = Artifact::parse(b) {
                    proptest::prop_assert!(e.offset().unwrap_or(0) <= b.len() as u64, "{e}");
                    proptest::prop_assert!(!e.detail().is_empty());
                }
            }
        }
    }
}
