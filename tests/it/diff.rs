//! `diff` locates what every artifact mutation of spec/gates.json changed: the object, the
//! plane and the row, checked against the first differing byte found here by a plain byte
//! scan and mapped with the geometry's plane offsets; identity, membership, GGUF tensors and
//! metadata; `same values, different bytes`; the CLI's exit codes and its JSON schema.

use crate::common::mutate_bytes;
use crate::common::{cli, conforms, edit_tensor, packed, rewrite_gguf, schema};
use ninfer_ternary::codec::TernaryType;
use ninfer_ternary::diff::{diff_bytes, DiffReport, ObjectDiff, Verdict};
use ninfer_ternary::geometry::Plane;
use ninfer_ternary::gguf::MetaValue;
use ninfer_ternary::ninfer::Artifact;
use ninfer_ternary::spec::{self, MutationKind, MutationTarget};

fn diff(a: &[u8], b: &[u8]) -> DiffReport {
    diff_bytes("a", a, "b", b).unwrap()
}

fn only_object(r: &DiffReport) -> &ObjectDiff {
    assert_eq!(r.objects.len(), 1, "{:#?}", r.objects);
    &r.objects[0]
}

/// The first differing byte of `name` between the two artifacts, its plane and row, found by
/// a byte scan and the plane offsets (not by the diff code).
fn expected_location(a: &[u8], b: &[u8], name: &str) -> (u64, &'static str, u64) {
    let (x, y) = (Artifact::parse(a).unwrap(), Artifact::parse(b).unwrap());
    let (ox, oy) = (x.object(name).unwrap(), y.object(name).unwrap());
    let (bx, by) = (x.object_bytes(ox), y.object_bytes(oy));
    let at = bx.iter().zip(by).position(|(p, q)| p != q).unwrap() as u64;
    let g = x.row_split(name).unwrap().geom;
    for (p, label) in [
        (Plane::Base, "base"),
        (Plane::High, "high"),
        (Plane::Scale, "scale"),
    ] {
        let (off, len) = (g.plane_offset(p), g.plane_bytes(p));
        if at >= off && at < off + len {
            return (at, label, (at - off) / g.row_bytes(p));
        }
    }
    panic!("{name}: byte {at} is in no plane");
}

/// One test per artifact mutation kind (a new kind fails the match until it is covered).
#[test]
fn diff_names_the_object_plane_and_row_every_mutation_touched() {
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let good = packed(ty).artifact;
        let mut covered = 0;
        for m in &spec::gates().mutations {
            if m.target != MutationTarget::Artifact {
                continue;
            }
            covered += 1;
            let bad = mutate_bytes(&good, m.kind.as_str()).unwrap();
            let r = diff(&good, &bad);
            assert!(!r.identical(), "{:?}", m.kind);
            let what = format!("{ty:?} {}", m.kind.as_str());
            check_kind(m.kind, &good, &bad, &r, &what);
        }
        assert_eq!(covered, 12, "artifact mutations of spec/gates.json");
    }
}

fn check_kind(kind: MutationKind, good: &[u8], bad: &[u8], r: &DiffReport, what: &str) {
    use MutationKind as K;
    let value_z = "text/layers/0/gdn/value_z";
    match kind {
        K::SwapTwoRows
        | K::RotateRows
        | K::Perm48OnRows
        | K::DuplicateAndDropRow
        | K::ScalesAtOffset0 => {
            let name = if kind == K::ScalesAtOffset0 {
                "text/layers/0/gdn/output"
            } else {
                value_z
            };
            let o = only_object(r);
            assert_eq!(o.name, name, "{what}");
            assert_eq!(o.verdict, Verdict::Differs, "{what}");
            let (byte, plane, row) = expected_location(good, bad, name);
            let f = o.first.as_ref().unwrap();
            assert_eq!(
                (f.byte, f.plane.as_str(), f.row),
                (byte, plane, Some(row)),
                "{what}"
            );
            assert!(
                o.differing_values.unwrap() > 0 && f.element.is_some(),
                "{what}"
            );
            let rows = o.differing_rows.unwrap();
            match kind {
                // Rows 0 and 1 exchanged: exactly two rows, the first in row 0.
                K::SwapTwoRows => assert_eq!((row, rows), (0, 2), "{what}"),
                // Row 1 overwritten by row 0: one row.
                K::DuplicateAndDropRow => assert_eq!((row, rows), (1, 1), "{what}"),
                // Every row moved: all rows (768 in nano's value_z).
                K::RotateRows => assert_eq!((row, rows), (0, 768), "{what}"),
                _ => assert!(rows > 1, "{what}"),
            }
        }
        K::WrongTemplateIdentity | K::WrongWeightsId => {
            let field = if kind == K::WrongWeightsId {
                "identity.weights_id"
            } else {
                "identity.model_id"
            };
            assert!(
                r.header.iter().any(|h| h.field == field),
                "{what}: {:?}",
                r.header
            );
            assert!(r.objects.is_empty() && r.removed.is_empty(), "{what}");
        }
        K::MissingBorrowedObject => {
            assert_eq!(r.removed, vec!["mtp/final_norm"], "{what}");
            assert!(r.objects.is_empty(), "{what}");
        }
        K::MissingLayerObject => {
            assert_eq!(r.removed, vec!["text/layers/6/gdn/value_z"], "{what}");
        }
        K::FlippedSign | K::WrongHadamardWidths | K::DenseOneUlp => {
            let name = match kind {
                K::FlippedSign => "text/hadamard_signs",
                K::WrongHadamardWidths => "text/hadamard_widths",
                _ => "text/layers/0/gdn/a_log",
            };
            let o = only_object(r);
            assert_eq!(o.name, name, "{what}");
            let f = o.first.as_ref().unwrap();
            assert_eq!(
                (f.plane.as_str(), f.row, f.element),
                ("words", Some(0), Some(0)),
                "{what}"
            );
            let (x, y) = (f.a_value.unwrap(), f.b_value.unwrap());
            match kind {
                K::FlippedSign => assert_eq!((x, y.abs(), o.differing_values), (-y, 1.0, Some(1))),
                // Widths [128, 384, 512] stored as prefix sums [0, 128, 512].
                K::WrongHadamardWidths => {
                    assert_eq!((x, y, o.differing_values), (128.0, 0.0, Some(2)))
                }
                _ => assert_eq!(
                    (f.ulp, o.max_ulp, o.differing_values),
                    (Some(1), Some(1), Some(1))
                ),
            }
        }
        K::DumpRowMajor | K::DumpSignsAfterRotation | K::DumpUnnormalized => {
            panic!("{what}: a dumps mutation reached the artifact test")
        }
    }
}

#[test]
fn identical_and_same_values_different_bytes() {
    let good = packed(TernaryType::Pq2_0).artifact;
    let r = diff(&good, &good);
    assert!(r.identical() && r.files_byte_identical && r.objects.is_empty());
    // final_norm element 0 as +0 in A and -0 in B: other bytes, the same value.
    let a = Artifact::parse(&good).unwrap();
    let o = a.object("text/final_norm").unwrap();
    let at = (a.payload_offset + o.offset) as usize;
    let (mut x, mut y) = (good.clone(), good.clone());
    x[at..at + 2].copy_from_slice(&[0x00, 0x00]);
    y[at..at + 2].copy_from_slice(&[0x00, 0x80]);
    let r = diff(&x, &y);
    let d = only_object(&r);
    assert_eq!(
        (d.verdict, d.differing_bytes, d.differing_values),
        (Verdict::SameValues, 1, Some(0))
    );
    assert!(
        !r.identical(),
        "bytes differ: the files are not the same artifact"
    );
    // Control: a real value change in the same element is `differs`, 1 bf16 ulp away.
    let mut z = x.clone();
    z[at] = 0x01;
    let d = diff(&x, &z);
    let d = only_object(&d);
    assert_eq!(
        (d.verdict, d.first.as_ref().unwrap().ulp),
        (Verdict::Differs, Some(1))
    );
}

#[test]
fn gguf_pairs_name_the_tensor_block_row_and_the_metadata() {
    let g = packed(TernaryType::Ptq1_0).gguf;
    assert!(diff(&g, &g).identical());
    let name = "blk.2.ffn_down.weight";
    // Row 3, block 1 (28-byte PTQ1_0 blocks, ffn=512: 4 blocks per row): flip a code byte.
    let edited = edit_tensor(&g, name, |t| {
        let row_bytes = t.3.len() / t.1[1] as usize;
        t.3[3 * row_bytes + 28 + 5] ^= 0x3;
    });
    let r = diff(&g, &edited);
    let o = only_object(&r);
    let f = o.first.as_ref().unwrap();
    assert_eq!(
        (o.name.as_str(), f.plane.as_str(), f.row, f.group),
        (name, "blocks", Some(3), Some(1))
    );
    assert_eq!(o.differing_rows, Some(1));
    assert!(f.element.is_some_and(|e| (128..256).contains(&e)), "{f:?}");
    let kv = rewrite_gguf(&g, |kvs, _| {
        kvs.retain(|k| k.0 != "general.name");
        kvs.push(("general.extra".into(), MetaValue::U32(7)));
    });
    let r = diff(&g, &kv);
    let fields: Vec<&str> = r.header.iter().map(|h| h.field.as_str()).collect();
    assert!(
        fields.contains(&"kv general.name") && fields.contains(&"kv general.extra"),
        "{fields:?}"
    );
    let dropped = rewrite_gguf(&g, |_, ts| ts.retain(|t| t.0 != name));
    assert_eq!(diff(&g, &dropped).removed, vec![name]);
    // A GGUF against a .ninfer is refused.
    let e = diff_bytes("g", &g, "a", &packed(TernaryType::Ptq1_0).artifact).unwrap_err();
    assert_eq!(e.class(), ninfer_ternary::ErrorClass::CliUsage, "{e}");
}

#[test]
fn cli_exit_codes_and_json_report_match_the_schema() {
    let d = tempfile::tempdir().unwrap();
    let good = packed(TernaryType::Pq2_0).artifact;
    let bad = mutate_bytes(&good, "swap-two-rows").unwrap();
    let (a, b) = (d.path().join("a.ninfer"), d.path().join("b.ninfer"));
    std::fs::write(&a, &good).unwrap();
    std::fs::write(&b, &bad).unwrap();
    let s = schema("diff-report");
    for (other, code) in [(&a, 0), (&b, 1)] {
        let o = cli()
            .args([
                "diff",
                a.to_str().unwrap(),
                other.to_str().unwrap(),
                "--json",
                "-",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        conforms(&v, &s, "$").unwrap();
        assert_eq!(
            v["verdict"],
            if code == 0 { "identical" } else { "differs" }
        );
        if code == 1 {
            assert_eq!(v["objects"][0]["first"]["plane"], "base");
            let mut broken = v.clone();
            broken["objects"][0]["verdict"] = "fine".into();
            assert!(conforms(&broken, &s, "$").is_err());
        }
    }
    let g = d.path().join("g.gguf");
    std::fs::write(&g, packed(TernaryType::Pq2_0).gguf).unwrap();
    let o = cli()
        .args(["diff", a.to_str().unwrap(), g.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("cli.usage"));
}

/// Two objects exchanged in the directory: reported as reordered (and moved), their contents
/// identical; an object only in B is added.
#[test]
fn reordered_and_added_objects_are_named() {
    use crate::common::artifact_parts;
    use ninfer_ternary::ninfer::PlannedObject;
    let good = packed(TernaryType::Ptq1_0).artifact;
    let (dir, payloads) = artifact_parts(&good);
    let rebuild = |order: &[usize], extra: bool| {
        let mut objs: Vec<PlannedObject> = order
            .iter()
            .map(|&i| {
                let o = &dir.objects[i];
                PlannedObject {
                    name: o.name.clone(),
                    body: o.body.clone(),
                    resource_bytes: o.bytes,
                }
            })
            .collect();
        let mut p: Vec<Vec<u8>> = order.iter().map(|&i| payloads[i].clone()).collect();
        if extra {
            objs.push(PlannedObject::resource("frontend/extra.json", 3));
            p.push(b"{}\n".to_vec());
        }
        let d = ninfer_ternary::ninfer::plan(dir.identity.clone(), objs).unwrap();
        ninfer_ternary::ninfer::writer::to_bytes(&d, &p).unwrap()
    };
    let mut order: Vec<usize> = (0..dir.objects.len()).collect();
    order.swap(2, 3);
    let r = diff(&good, &rebuild(&order, true));
    let (n2, n3) = (dir.objects[2].name.clone(), dir.objects[3].name.clone());
    assert_eq!(r.reordered, vec![n2, n3]);
    assert_eq!(r.added, vec!["frontend/extra.json"]);
    assert!(
        r.removed.is_empty() && r.objects.is_empty(),
        "{:?}",
        r.objects
    );
    assert!(
        r.header.iter().any(|h| h.field == "object offsets"),
        "{:?}",
        r.header
    );
    assert!(!r.identical());
    // Control: the same order and no extra object rebuilds the identical artifact.
    let same: Vec<usize> = (0..dir.objects.len()).collect();
    assert!(diff(&good, &rebuild(&same, false)).identical());
}
