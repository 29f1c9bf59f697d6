//! The packer against independently computed expectations: every mapping rule on the nano
//! model, where the expected source row of each artifact row is built by explicit loops in this
//! file (reshape/transpose semantics), not by the packer's own row maps. Plus the directory
//! snapshot, the unpack proof with its negative control, and every pack error.

use super::fixtures::nano_fixture;
use super::fixtures::{
    artifact_parts, edit_tensor, nano, packed, rewrite_gguf as rewrite, with_byte,
};
use crate::geometry::Plane;
use crate::gguf::{self, Gguf, MetaValue, Mode, ValueType};
use crate::ninfer::Artifact;
use crate::pack::{pack_bytes, unpack, PackOptions};
use crate::spec::{self, LayoutId, ModelProfile};
use crate::synth::model::TernaryType;
use crate::ErrorClass;
use sha2::{Digest, Sha256};

/// Row `r` of a GGUF ternary tensor (ggml blocks).
fn src_row<'a>(g: &Gguf<'a>, name: &str, r: usize) -> &'a [u8] {
    let t = g.tensor(name).unwrap();
    let rb = (t.nbytes / t.ne[1]) as usize;
    &g.tensor_data(t)[r * rb..(r + 1) * rb]
}

/// Expected (source tensor, source row) for every row of each ternary object, built by loops.
fn expected_rows(p: &ModelProfile, object: &str, l: u64) -> Vec<(String, usize)> {
    let b = |s: &str| format!("blk.{l}.{s}.weight");
    let all = |name: String, n: u64| (0..n as usize).map(move |r| (name.clone(), r));
    let qk = p.derived["qk_rows"] as usize;
    let (hv, hd) = (p.head_v_dim as usize, p.head_dim as usize);
    // Grouped order of the 48 value heads: for key head g, its 3 tiled copies t*16 + g.
    let grouped_heads: Vec<usize> = (0..16)
        .flat_map(|g| (0..3).map(move |t| t * 16 + g))
        .collect();
    let value_rows = |name: String, base: usize| -> Vec<(String, usize)> {
        grouped_heads
            .iter()
            .flat_map(|&h| (0..hv).map(move |r| base + h * hv + r))
            .map(|r| (name.clone(), r))
            .collect()
    };
    match object {
        "mlp/gate_up" => all(b("ffn_gate"), p.ffn)
            .chain(all(b("ffn_up"), p.ffn))
            .collect(),
        "mlp/down" => all(b("ffn_down"), p.hidden).collect(),
        "gdn/query_key" => (0..qk).map(|r| (b("attn_qkv"), r)).collect(),
        "gdn/value_z" => [value_rows(b("attn_qkv"), qk), value_rows(b("attn_gate"), 0)].concat(),
        "gdn/output" => all(b("ssm_out"), p.hidden).collect(),
        "attention/query_key" => (0..p.q_heads as usize)
            .flat_map(|h| (0..hd).map(move |r| 2 * h * hd + r))
            .map(|r| (b("attn_q"), r))
            .chain(all(b("attn_k"), p.derived["kv_rows"]))
            .collect(),
        "attention/gate_value" => (0..p.q_heads as usize)
            .flat_map(|h| (0..hd).map(move |r| (2 * h + 1) * hd + r))
            .map(|r| (b("attn_q"), r))
            .chain(all(b("attn_v"), p.derived["kv_rows"]))
            .collect(),
        "attention/output" => all(b("attn_output"), p.hidden).collect(),
        other => panic!("no expectation for {other}"),
    }
}

#[test]
fn every_ternary_rule_places_the_rows_the_spec_names() {
    let p = nano();
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let pk = packed(ty);
        let g = gguf::parse(&pk.gguf, Mode::Strict).unwrap();
        let a = Artifact::parse(&pk.artifact).unwrap();
        let mut checked = 0;
        let mut objects = vec![
            (
                "text/token_embedding".to_string(),
                all_rows(&p, "token_embd.weight"),
            ),
            (
                "text/output_head".to_string(),
                all_rows(&p, "output.weight"),
            ),
        ];
        for l in 0..p.n_layers {
            let kinds: &[&str] = if (l + 1) % 4 == 0 {
                &[
                    "attention/query_key",
                    "attention/gate_value",
                    "attention/output",
                    "mlp/gate_up",
                    "mlp/down",
                ]
            } else {
                &[
                    "gdn/query_key",
                    "gdn/value_z",
                    "gdn/output",
                    "mlp/gate_up",
                    "mlp/down",
                ]
            };
            for k in kinds {
                objects.push((format!("text/layers/{l}/{k}"), expected_rows(&p, k, l)));
            }
        }
        for (name, want) in &objects {
            let v = a.row_split(name).unwrap();
            assert_eq!(v.geom.n as usize, want.len(), "{name}");
            for (row, (src, sr)) in want.iter().enumerate() {
                let got = v.ggml_rows(row as u64..row as u64 + 1).unwrap();
                assert_eq!(
                    got.as_slice(),
                    src_row(&g, src, *sr),
                    "{:?} {name} row {row} should be {src} row {sr}",
                    ty
                );
                checked += 1;
            }
        }
        // 2 globals + 6 GDN layers x 5 + 2 attention layers x 5 = 42 ternary objects.
        assert_eq!(objects.len(), 42);
        assert!(checked > 10_000);
    }
}

fn all_rows(p: &ModelProfile, name: &str) -> Vec<(String, usize)> {
    (0..p.vocab as usize)
        .map(|r| (name.to_string(), r))
        .collect()
}

fn f32s(g: &Gguf<'_>, name: &str) -> Vec<f32> {
    let t = g.tensor(name).unwrap();
    let d = g.tensor_data(t);
    match t.ggml.name.as_str() {
        "F32" => d
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "BF16" => d
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        other => panic!("{other}"),
    }
}

fn bf16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn every_dense_rule_matches_an_independent_computation() {
    let p = nano();
    let pk = packed(TernaryType::Pq2_0);
    let g = gguf::parse(&pk.gguf, Mode::Strict).unwrap();
    let a = Artifact::parse(&pk.artifact).unwrap();
    let bf = |x: f32| half::bf16::from_f32(x).to_bits();
    let grouped_heads: Vec<usize> = (0..16)
        .flat_map(|g| (0..3).map(move |t| t * 16 + g))
        .collect();
    let obj = |n: &str| a.contiguous(n).unwrap().2;
    // Norms: gguf - 1, except ssm_norm (raw).
    let want: Vec<u16> = f32s(&g, "output_norm.weight")
        .iter()
        .map(|x| bf(x - 1.0))
        .collect();
    assert_eq!(bf16s(obj("text/final_norm")), want);
    let want: Vec<u16> = f32s(&g, "blk.3.attn_q_norm.weight")
        .iter()
        .map(|x| bf(x - 1.0))
        .collect();
    assert_eq!(bf16s(obj("text/layers/3/attention/query_norm")), want);
    let want: Vec<u16> = f32s(&g, "blk.0.ssm_norm.weight")
        .iter()
        .map(|x| bf(*x))
        .collect();
    assert_eq!(
        bf16s(obj("text/layers/0/gdn/norm")),
        want,
        "ssm_norm is copied raw (T-6)"
    );
    // a_log = grouped(log(-a)); dt_bias = grouped(bias).
    let ssm_a = f32s(&g, "blk.1.ssm_a");
    let want: Vec<u8> = grouped_heads
        .iter()
        .flat_map(|&h| (-ssm_a[h]).ln().to_le_bytes())
        .collect();
    assert_eq!(obj("text/layers/1/gdn/a_log"), want.as_slice());
    let dt = f32s(&g, "blk.1.ssm_dt.bias");
    let want: Vec<u8> = grouped_heads
        .iter()
        .flat_map(|&h| dt[h].to_le_bytes())
        .collect();
    assert_eq!(obj("text/layers/1/gdn/dt_bias"), want.as_slice());
    // a/b projections: BF16 rows moved verbatim in grouped head order.
    let t = g.tensor("blk.2.ssm_alpha.weight").unwrap();
    let rb = 2 * p.hidden as usize;
    let want: Vec<u8> = grouped_heads
        .iter()
        .flat_map(|&h| g.tensor_data(t)[h * rb..(h + 1) * rb].to_vec())
        .collect();
    assert_eq!(obj("text/layers/2/gdn/a_projection"), want.as_slice());
    // conv1d: physical (C, 4); channels [0, qk) kept, V channels head-permuted, then transposed.
    let conv = f32s(&g, "blk.0.ssm_conv1d.weight");
    let qk = p.derived["qk_rows"] as usize;
    let hv = p.head_v_dim as usize;
    let channels: Vec<usize> = (0..qk)
        .chain(
            grouped_heads
                .iter()
                .flat_map(|&h| (0..hv).map(move |r| qk + h * hv + r)),
        )
        .collect();
    let want: Vec<u16> = (0..4)
        .flat_map(|tap| channels.iter().map(move |&c| (c, tap)))
        .map(|(c, tap)| bf(conv[c * 4 + tap]))
        .collect();
    assert_eq!(bf16s(obj("text/layers/0/gdn/convolution")), want);
    // Sign objects: FP32 of the i32 values; widths are the widths themselves.
    let signs = g.get_array_as::<i32>("prism.hadamard.sign_values").unwrap();
    let want: Vec<u8> = signs
        .iter()
        .flat_map(|&s| (s as f32).to_le_bytes())
        .collect();
    assert_eq!(obj("text/hadamard_signs"), want.as_slice());
    let want: Vec<u8> = [128i32, 384, 512]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(obj("text/hadamard_widths"), want.as_slice());
}

#[test]
fn borrowed_objects_are_byte_identical_and_identity_is_rewritten() {
    let tpl = nano_fixture::template();
    let t = Artifact::parse(&tpl).unwrap();
    let pk = packed(TernaryType::Ptq1_0);
    let a = Artifact::parse(&pk.artifact).unwrap();
    assert_eq!(a.directory.identity.model_id, t.directory.identity.model_id);
    assert_eq!(a.directory.identity.weights_id, "folded-ternary");
    let mut borrowed = 0;
    for o in &t.directory.objects {
        if crate::mapping::is_borrowed(&o.name) {
            let ao = a.object(&o.name).unwrap();
            assert_eq!(a.object_bytes(ao), t.object_bytes(o), "{}", o.name);
            assert_eq!(ao.body, o.body);
            borrowed += 1;
        } else {
            // T-16: produced objects never reuse the template's format.
            let ao = a.object(&o.name).unwrap();
            assert_ne!(ao.format_layout().unwrap().0, "Q4G64_F16S");
        }
    }
    assert_eq!(borrowed, 6 + 9 + 12 + 2);
    assert_eq!(a.directory.objects.len(), t.directory.objects.len() + 2);
    assert_eq!(
        a.directory.objects[a.directory.objects.len() - 2].name,
        "text/hadamard_signs"
    );
}

#[test]
fn nano_pack_directory_and_payload_digest_are_pinned() {
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let pk = packed(ty);
        assert_eq!(pk.artifact, packed(ty).artifact, "deterministic");
        let a = Artifact::parse(&pk.artifact).unwrap();
        let mut text = format!(
            "identity: {} / {}\npayload_offset: {}\npayload sha256: {}\n",
            a.directory.identity.model_id,
            a.directory.identity.weights_id,
            a.payload_offset,
            Sha256::digest(&pk.artifact[a.payload_offset as usize..])
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        for o in &a.directory.objects {
            let (f, l) = o.format_layout().unwrap_or(("resource", "raw-bytes-v1"));
            text.push_str(&format!(
                "{} {} {} {:?} {} {}\n",
                o.name,
                f,
                l,
                o.shape(),
                o.offset,
                o.bytes
            ));
        }
        insta::assert_snapshot!(format!("nano_pack_{}", ty.name()), text);
    }
}

#[test]
fn unpack_proves_losslessness_and_catches_a_single_changed_byte() {
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let pk = packed(ty);
        let g = gguf::parse(&pk.gguf, Mode::Strict).unwrap();
        let a = Artifact::parse(&pk.artifact).unwrap();
        let r = unpack::prove(&g, &a).unwrap();
        assert_eq!(r.len(), 52);
        assert!(r.iter().all(|x| x.identical));
        // Negative control: one byte of one plane changed → exactly that tensor differs.
        let v = a.row_split("text/layers/0/gdn/value_z").unwrap();
        let at = a.payload_offset as usize
            + a.object("text/layers/0/gdn/value_z").unwrap().offset as usize
            + v.geom.scale_offset as usize
            + 5;
        let mut broken = pk.artifact.clone();
        broken[at] ^= 0x40;
        let b = Artifact::parse(&broken).unwrap();
        let r = unpack::prove(&g, &b).unwrap();
        let bad: Vec<&str> = r
            .iter()
            .filter(|x| !x.identical)
            .map(|x| x.name.as_str())
            .collect();
        assert_eq!(bad, vec!["blk.0.attn_qkv.weight"], "{ty:?}");
    }
}

fn pack_err(gguf: &[u8], template: &[u8]) -> crate::Error {
    pack_bytes(gguf, template, &PackOptions::default()).unwrap_err()
}

#[test]
fn every_pack_error_is_reached_with_its_class() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    let set_kv = |key: &'static str, v: MetaValue| {
        rewrite(&src, move |kvs, _| {
            for kv in kvs.iter_mut().filter(|kv| kv.0 == key) {
                kv.1 = v.clone();
            }
        })
    };
    type Case<'a> = (&'a str, Vec<u8>, Vec<u8>, ErrorClass, &'a str);
    let cases: Vec<Case> = vec![
        (
            "template v1",
            src.clone(),
            with_byte(&tpl, 7, 1),
            ErrorClass::NinferMagicV1,
            "v1",
        ),
        (
            "template v3",
            src.clone(),
            with_byte(&tpl, 7, 3),
            ErrorClass::NinferMagicV3,
            "v3",
        ),
        (
            "template of nvfp4 kind",
            src.clone(),
            retag_template(&tpl, "nvfp4"),
            ErrorClass::PackTemplate,
            "nvfp4",
        ),
        (
            "template that is a packed artifact",
            src.clone(),
            retag_template(&tpl, "folded-ternary"),
            ErrorClass::PackTemplate,
            "folded-ternary",
        ),
        (
            "missing tensor",
            rewrite(&src, |_, ts| ts.retain(|t| t.0 != "blk.2.attn_gate.weight")),
            tpl.clone(),
            ErrorClass::GgufTensorMissing,
            "blk.2.attn_gate.weight",
        ),
        (
            "mis-shaped tensor",
            edit_tensor(&src, "blk.1.ffn_down.weight", |t| {
                t.1 = vec![256, 256];
            }),
            tpl.clone(),
            ErrorClass::GgufTensorShape,
            "blk.1.ffn_down.weight",
        ),
        (
            "mixed ternary formats",
            edit_tensor(&src, "blk.4.ffn_up.weight", |t| {
                t.2 = 143;
                t.3 = crate::codec::transcode::pq2_to_ptq1(&t.3).unwrap();
            }),
            tpl.clone(),
            ErrorClass::PackMixedTernary,
            "blk.4.ffn_up.weight",
        ),
        (
            "no prism.hadamard metadata",
            rewrite(&src, |kvs, _| {
                kvs.retain(|k| !k.0.starts_with("prism.hadamard"))
            }),
            tpl.clone(),
            ErrorClass::PackHadamard,
            // One error names every key the output needs (the absent version is not needed).
            "prism.hadamard.sign_widths, prism.hadamard.sign_values: absent, and the output needs them",
        ),
        (
            "widths not the profile's",
            set_kv(
                "prism.hadamard.sign_widths",
                MetaValue::Array(
                    ValueType::I32,
                    vec![MetaValue::I32(128), MetaValue::I32(384)],
                ),
            ),
            tpl.clone(),
            ErrorClass::PackHadamard,
            "sign_widths [128, 384, 512]",
        ),
        (
            "sign value not ±1",
            rewrite(&src, |kvs, _| {
                let kv = kvs
                    .iter_mut()
                    .find(|k| k.0 == "prism.hadamard.sign_values")
                    .unwrap();
                if let MetaValue::Array(_, items) = &mut kv.1 {
                    items[7] = MetaValue::I32(2);
                }
            }),
            tpl.clone(),
            ErrorClass::PackHadamard,
            "sign_values[7]",
        ),
        (
            "unknown profile",
            set_kv("qwen35.block_count", MetaValue::U32(9)),
            tpl.clone(),
            ErrorClass::PackProfile,
            "block_count=9 ",
        ),
        (
            "ne[0] not a multiple of 128",
            edit_tensor(&src, "blk.0.ffn_gate.weight", |t| {
                t.1 = vec![64, 1024];
            }),
            tpl.clone(),
            ErrorClass::GgufTensorBlockMultiple,
            "blk.0.ffn_gate.weight",
        ),
    ];
    for (what, g, t, class, needle) in cases {
        let e = pack_err(&g, &t);
        assert_eq!(e.class(), class, "{what}: {e}");
        assert!(
            e.to_string().contains(needle),
            "{what}: '{e}' lacks '{needle}'"
        );
    }
}

/// The template with another weights_id (same objects).
fn retag_template(tpl: &[u8], weights_id: &str) -> Vec<u8> {
    let (mut d, payloads) = artifact_parts(tpl);
    d.identity.weights_id = weights_id.into();
    crate::ninfer::writer::to_bytes(&d, &payloads).unwrap()
}

#[test]
fn a_template_missing_a_mapped_object_or_with_an_unmapped_one_is_refused() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let a_tpl = nano_fixture::template();
    let (dir, payloads) = artifact_parts(&a_tpl);
    type Edit<'e> = &'e dyn Fn(&mut Vec<crate::ninfer::PlannedObject>, &mut Vec<Vec<u8>>);
    let rebuild = |f: Edit| -> Vec<u8> {
        let mut objs: Vec<_> = dir
            .objects
            .iter()
            .map(|o| crate::ninfer::PlannedObject {
                name: o.name.clone(),
                body: o.body.clone(),
                resource_bytes: o.bytes,
            })
            .collect();
        let mut pl = payloads.clone();
        f(&mut objs, &mut pl);
        let d = crate::ninfer::plan(dir.identity.clone(), objs).unwrap();
        crate::ninfer::writer::to_bytes(&d, &pl).unwrap()
    };
    let missing = rebuild(&|o, p| {
        let i = o
            .iter()
            .position(|x| x.name == "text/layers/5/gdn/value_z")
            .unwrap();
        o.remove(i);
        p.remove(i);
    });
    let e = pack_err(&src, &missing);
    assert_eq!(e.class(), ErrorClass::PackTemplate);
    assert!(e.to_string().contains("template lacks"), "{e}");
    let unmapped = rebuild(&|o, p| {
        o.insert(
            20,
            crate::ninfer::PlannedObject::tensor(
                "text/layers/0/gdn/query_key_value_z",
                vec![4],
                "BF16",
                LayoutId::ContiguousLeV1,
            ),
        );
        p.insert(20, vec![0; 8]);
    });
    let e = pack_err(&src, &unmapped);
    assert_eq!(e.class(), ErrorClass::PackTemplate);
    assert!(e.to_string().contains("unmapped gdn object"), "{e}");
}

#[test]
fn layers_option_leaves_other_layers_out() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let out = pack_bytes(
        &src,
        &nano_fixture::template(),
        &PackOptions {
            layers: Some(vec![0, 3]),
            ..Default::default()
        },
    )
    .unwrap();
    let a = Artifact::parse(&out).unwrap();
    assert!(a.object("text/layers/0/gdn/value_z").is_ok());
    assert!(a.object("text/layers/3/attention/query_key").is_ok());
    assert!(a.object("text/layers/1/gdn/value_z").is_err());
    assert!(a.object("text/token_embedding").is_ok());
}

/// prism.hadamard.sign_values in every numeric element type seen in the wild (INT32 from Python
/// ints, FLOAT32 from float tensors, INT8, F64) packs to the byte-identical artifact; a value that
/// is not ±1 or a non-numeric array is refused with its class and field.
#[test]
fn sign_values_of_any_numeric_type_pack_identically() {
    let src = nano_fixture::model(TernaryType::Ptq1_0, 3);
    let tpl = nano_fixture::template();
    let reference = pack_bytes(&src, &tpl, &PackOptions::default()).unwrap();
    let retype = |ty: ValueType, conv: fn(i32) -> MetaValue| {
        rewrite(&src, move |kvs, _| {
            let kv = kvs
                .iter_mut()
                .find(|k| k.0 == "prism.hadamard.sign_values")
                .unwrap();
            if let MetaValue::Array(_, items) = &kv.1 {
                let v: Vec<MetaValue> = items
                    .iter()
                    .map(|m| match m {
                        MetaValue::I32(x) => conv(*x),
                        other => panic!("synth writes I32 signs, got {other:?}"),
                    })
                    .collect();
                kv.1 = MetaValue::Array(ty, v);
            }
        })
    };
    let variants: Vec<(&str, Vec<u8>)> = vec![
        ("F32", retype(ValueType::F32, |x| MetaValue::F32(x as f32))),
        ("F64", retype(ValueType::F64, |x| MetaValue::F64(x as f64))),
        ("I8", retype(ValueType::I8, |x| MetaValue::I8(x as i8))),
        ("I64", retype(ValueType::I64, |x| MetaValue::I64(x as i64))),
    ];
    for (what, g) in &variants {
        let got = pack_bytes(g, &tpl, &PackOptions::default()).unwrap();
        assert!(
            got == reference,
            "{what}: artifact differs from the I32 one"
        );
    }
    let half = rewrite(&variants[0].1, |kvs, _| {
        let kv = kvs
            .iter_mut()
            .find(|k| k.0 == "prism.hadamard.sign_values")
            .unwrap();
        if let MetaValue::Array(_, items) = &mut kv.1 {
            items[5] = MetaValue::F32(0.5);
        }
    });
    let e = pack_err(&half, &tpl);
    assert_eq!(e.class(), ErrorClass::PackHadamard, "{e}");
    assert!(e.to_string().contains("sign_values[5]"), "{e}");
    let strings = retype(ValueType::String, |x| MetaValue::String(x.to_string()));
    let e = pack_err(&strings, &tpl);
    assert_eq!(e.class(), ErrorClass::PackHadamard, "{e}");
    assert!(e.to_string().contains("numeric"), "{e}");
}

/// Reduced GGUFs: block_count may be the full model's, the held count, or absent; --profile names
/// the profile; what is inconsistent is refused with pack.profile and the field.
#[test]
fn reduced_gguf_profile_resolution_and_refusals() {
    use crate::synth::model::write_model_layers;
    let p = nano();
    let tpl = nano_fixture::template();
    let red =
        write_model_layers(&p, TernaryType::Pq2_0, 2, Some(&[0, 3]), Vec::new(), |_| {}).unwrap();
    let reference = pack_bytes(&red, &tpl, &PackOptions::default()).unwrap();
    let set_blocks = |v: Option<u32>| {
        rewrite(&red, move |kvs, _| match v {
            Some(n) => kvs
                .iter_mut()
                .filter(|k| k.0 == "qwen35.block_count")
                .for_each(|k| k.1 = MetaValue::U32(n)),
            None => kvs.retain(|k| k.0 != "qwen35.block_count"),
        })
    };
    let named = PackOptions {
        profile: Some("bonsai-nano".into()),
        ..Default::default()
    };
    for (what, g) in [
        ("absent", set_blocks(None)),
        ("held count", set_blocks(Some(2))),
    ] {
        let a = pack_bytes(&g, &tpl, &PackOptions::default()).unwrap();
        assert!(a == reference, "block_count {what}");
        assert!(
            pack_bytes(&g, &tpl, &named).unwrap() == reference,
            "{what} --profile"
        );
    }
    let cases: Vec<(&str, Vec<u8>, PackOptions, &str)> = vec![
        (
            "block_count neither",
            set_blocks(Some(5)),
            PackOptions::default(),
            "block_count=5 ",
        ),
        (
            "unknown --profile",
            red.clone(),
            PackOptions {
                profile: Some("nope".into()),
                ..Default::default()
            },
            "unknown profile 'nope'",
        ),
        (
            "--profile of another shape",
            red.clone(),
            PackOptions {
                profile: Some("bonsai-2-27b".into()),
                ..Default::default()
            },
            "embedding_length",
        ),
        (
            "--layers not held",
            red.clone(),
            PackOptions {
                layers: Some(vec![1]),
                ..Default::default()
            },
            "layer 1 is not in the GGUF",
        ),
        (
            "no layer at all",
            rewrite(&red, |_, ts| ts.retain(|t| !t.0.starts_with("blk."))),
            named.clone(),
            "no blk.N",
        ),
    ];
    for (what, g, o, needle) in cases {
        let e = pack_bytes(&g, &tpl, &o).unwrap_err();
        assert_eq!(e.class(), ErrorClass::PackProfile, "{what}: {e}");
        assert!(e.to_string().contains(needle), "{what}: {e}");
    }
    // A layer beyond the profile is refused by synth and by the packer.
    assert!(
        write_model_layers(&p, TernaryType::Pq2_0, 2, Some(&[99]), Vec::new(), |_| {}).is_err()
    );
    let beyond = rewrite(&red, |_, ts| {
        for t in ts.iter_mut().filter(|t| t.0.starts_with("blk.3.")) {
            t.0 = t.0.replacen("blk.3.", "blk.99.", 1);
        }
    });
    let e = pack_bytes(&beyond, &tpl, &named).unwrap_err();
    assert_eq!(e.class(), ErrorClass::PackProfile, "{e}");
    assert!(e.to_string().contains("layer 99 is beyond"), "{e}");
    // --layers filters what the reduced GGUF holds.
    let only3 = PackOptions {
        layers: Some(vec![3]),
        ..Default::default()
    };
    let a = pack_bytes(&red, &tpl, &only3).unwrap();
    let a = Artifact::parse(&a).unwrap();
    assert!(a.object("text/layers/3/mlp/down").is_ok());
    assert!(a.object("text/layers/0/mlp/down").is_err());
}

/// The KV `key` of a GGUF, for the byte offset an error must name (read by the reader, which
/// the hostile-GGUF suite checks offset by offset).
fn value_offset(gguf: &[u8], key: &str) -> u64 {
    gguf::parse(gguf, Mode::Strict)
        .unwrap()
        .kv(key)
        .unwrap_or_else(|| panic!("{key} absent"))
        .value_offset
}

/// Sets (or, with `None`, removes) one KV.
fn with_kv(src: &[u8], key: &str, value: Option<MetaValue>) -> Vec<u8> {
    let key = key.to_string();
    rewrite(src, move |kvs, _| match &value {
        Some(v) => {
            let kv = kvs.iter_mut().find(|k| k.0 == key).expect("key present");
            kv.1 = v.clone();
        }
        None => kvs.retain(|k| k.0 != key),
    })
}

fn strs(items: &[&str]) -> MetaValue {
    MetaValue::Array(
        ValueType::String,
        items.iter().map(|s| MetaValue::str(s)).collect(),
    )
}

/// Packs and pre-flights `g`; both must refuse it with the same error (one code path).
fn refused_by_pack_and_check(g: &[u8], tpl: &[u8], opts: &PackOptions) -> crate::Error {
    let e = pack_bytes(g, tpl, opts).unwrap_err();
    let parsed = gguf::parse(g, Mode::Strict).unwrap();
    let pre = crate::pack::preflight::preflight(&parsed, opts, 2).unwrap_err();
    assert_eq!(e, pre, "pack --check and pack disagree");
    e
}

/// Every prism.hadamard value spec/hadamard.json rules out is refused by pack and by pack --check
/// with pack.hadamard, the key and the byte offset of that key's value; the unmodified file and
/// the other allowed sign_mode pack (controls).
#[test]
fn prism_hadamard_values_the_spec_rules_out_are_refused_with_key_and_offset() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    let opts = PackOptions::default();
    pack_bytes(&src, &tpl, &opts).expect("control: the synthetic model packs");
    let identity_mode = with_kv(
        &src,
        "prism.hadamard.sign_mode",
        Some(MetaValue::str("identity")),
    );
    pack_bytes(&identity_mode, &tpl, &opts).expect("control: sign_mode identity is allowed");
    let h = |k: &str| format!("prism.hadamard.{k}");
    let absent_tensor = {
        let g = gguf::parse(&src, Mode::Strict).unwrap();
        let mut names = g.get_strs(&h("weight_names")).unwrap();
        names[3] = "blk.0.no_such.weight";
        strs(&names)
    };
    let cases: Vec<(&str, &str, Option<MetaValue>, &str)> = vec![
        (
            "version 99",
            "version",
            Some(MetaValue::U32(99)),
            "fixes it at 1",
        ),
        (
            "transform identity",
            "transform",
            Some(MetaValue::str("identity")),
            "normalized-sylvester-walsh-hadamard",
        ),
        (
            "sign_mode implicit",
            "sign_mode",
            Some(MetaValue::str("implicit")),
            "explicit or identity",
        ),
        (
            "gdn_v_grouped false",
            "gdn_v_grouped",
            Some(MetaValue::Bool(false)),
            "fixes it at true",
        ),
        (
            "block_size 0",
            "block_size",
            Some(MetaValue::U32(0)),
            "hadamard_block 128",
        ),
        (
            "block_size 2^31",
            "block_size",
            Some(MetaValue::U32(1 << 31)),
            "is 2147483648",
        ),
        (
            "block_size a string",
            "block_size",
            Some(MetaValue::str("128")),
            "is STRING",
        ),
        (
            "weight_names of I32",
            "weight_names",
            Some(MetaValue::Array(ValueType::I32, vec![MetaValue::I32(1)])),
            "requires STRING",
        ),
        (
            "weight_names a string",
            "weight_names",
            Some(MetaValue::str("token_embd.weight")),
            "requires ARRAY",
        ),
        (
            "weight_names naming an absent tensor",
            "weight_names",
            Some(absent_tensor),
            "blk.0.no_such.weight' is not a tensor",
        ),
        (
            "weight_names naming a dense tensor",
            "weight_names",
            Some(strs(&["output_norm.weight"])),
            "not a ternary tensor",
        ),
        (
            "weight_names naming the inverse tensor",
            "weight_names",
            Some(strs(&["token_embd.weight"])),
            "inverse-rotated",
        ),
        (
            "weight_names listing one twice",
            "weight_names",
            Some(strs(&["output.weight", "output.weight"])),
            "listed twice",
        ),
        (
            "inverse_weight_names another tensor",
            "inverse_weight_names",
            Some(strs(&["output.weight"])),
            "hadamard_inverse",
        ),
        (
            "widths [100, 412, 512]",
            "sign_widths",
            Some(MetaValue::Array(
                ValueType::I32,
                [100, 412, 512].iter().map(|&w| MetaValue::I32(w)).collect(),
            )),
            "widths [100, 412, 512]",
        ),
        (
            "sign_widths of U32",
            "sign_widths",
            Some(MetaValue::Array(
                ValueType::U32,
                [128, 384, 512].iter().map(|&w| MetaValue::U32(w)).collect(),
            )),
            "requires I32",
        ),
    ];
    for (what, key, value, needle) in cases {
        let key = h(key);
        let g = with_kv(&src, &key, value);
        let e = refused_by_pack_and_check(&g, &tpl, &opts);
        assert_eq!(e.class(), ErrorClass::PackHadamard, "{what}: {e}");
        assert!(e.field().starts_with(&key), "{what}: field of {e}");
        assert_eq!(e.offset(), Some(value_offset(&g, &key)), "{what}: {e}");
        assert!(
            e.to_string().contains(needle),
            "{what}: '{e}' lacks '{needle}'"
        );
    }
}

/// An absent prism.hadamard key no output byte depends on packs to the very same artifact
/// (tools/pack.py reads only the sign table); an absent needed key is refused, alone in its
/// error.
#[test]
fn absent_prism_hadamard_keys_change_nothing_or_are_refused_alone() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    let opts = PackOptions::default();
    let h = |k: &str| format!("prism.hadamard.{k}");
    let reference = pack_bytes(&src, &tpl, &opts).unwrap();
    for key in [
        "axis",
        "version",
        "weight_names",
        "inverse_weight_names",
        "sign_mode",
    ] {
        let got = pack_bytes(&with_kv(&src, &h(key), None), &tpl, &opts).unwrap();
        assert!(got == reference, "{key} absent: the artifact changed");
    }
    let e = refused_by_pack_and_check(&with_kv(&src, &h("sign_values"), None), &tpl, &opts);
    assert_eq!(
        (e.class(), e.field()),
        (ErrorClass::PackHadamard, "prism.hadamard.sign_values")
    );
}

/// Every hyper-parameter the profile fixes (spec/mapping.json profile_hparams) is compared:
/// a different value, another integer type or an absent key is refused with pack.profile, the
/// key, expected and found, and the offset; no Rust Debug text reaches the message.
#[test]
fn profile_fixed_hparams_are_compared_with_the_profile() {
    let p = nano();
    let src = nano_fixture::model(TernaryType::Ptq1_0, 5);
    let tpl = nano_fixture::template();
    let opts = PackOptions::default();
    let fixed = &spec::mapping().profile_hparams;
    assert!(fixed.len() >= 10, "the table lists the fixed keys");
    let reference = pack_bytes(&src, &tpl, &opts).unwrap();
    for hp in fixed {
        let key = format!("qwen35.{}", hp.key);
        let want = p.dim(&hp.dim).unwrap();
        let cases = [
            ("zero", MetaValue::U32(0), "found 0".to_string()),
            (
                "u32::MAX",
                MetaValue::U32(u32::MAX),
                format!("found {}", u32::MAX),
            ),
            (
                "U64 of the right value",
                MetaValue::U64(want),
                "found a U64 value".into(),
            ),
        ];
        for (what, v, needle) in cases {
            let g = with_kv(&src, &key, Some(v));
            let e = refused_by_pack_and_check(&g, &tpl, &opts);
            // embedding_length also picks the profile, so a wrong value may already fail there.
            assert_eq!(e.class(), ErrorClass::PackProfile, "{key} {what}: {e}");
            let text = e.to_string();
            assert!(
                !text.contains("Some("),
                "{key} {what}: Debug text in '{text}'"
            );
            if hp.key != "embedding_length" || what == "U64 of the right value" {
                assert_eq!(e.field(), key, "{key} {what}: {e}");
                assert_eq!(
                    e.offset(),
                    Some(value_offset(&g, &key)),
                    "{key} {what}: {e}"
                );
                assert!(
                    text.contains(&needle),
                    "{key} {what}: '{text}' lacks '{needle}'"
                );
                assert!(
                    text.contains(&format!("expected {want}")),
                    "{key} {what}: {text}"
                );
            }
        }
        // Absent, the key is not compared: no output byte depends on it (the profile and the
        // tensor shapes carry the geometry), so the artifact is the very same.
        let absent = with_kv(&src, &key, None);
        assert!(
            pack_bytes(&absent, &tpl, &opts).unwrap() == reference,
            "{key} absent: the artifact changed"
        );
    }
}

/// `--layers` naming a layer the GGUF lacks (99, 2^32), a duplicate or nothing is refused;
/// a GGUF with no tensor fails pack and pack --check with a class (never "0 checks, 0 failed").
#[test]
fn layers_and_empty_gguf_are_refused_by_pack_and_check() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    for (layers, needle) in [
        (vec![99], "layer 99 is not in the GGUF"),
        (vec![1 << 32], "layer 4294967296 is not in the GGUF"),
        (vec![2, 0, 2], "layer 2 is named twice"),
        (vec![], "no layer named"),
    ] {
        let opts = PackOptions {
            layers: Some(layers.clone()),
            ..Default::default()
        };
        let e = refused_by_pack_and_check(&src, &tpl, &opts);
        assert_eq!(
            (e.class(), e.field()),
            (ErrorClass::PackProfile, "--layers"),
            "{layers:?}"
        );
        assert!(e.to_string().contains(needle), "{layers:?}: {e}");
    }
    let empty = rewrite(&src, |_, ts| ts.clear());
    let e = refused_by_pack_and_check(&empty, &tpl, &PackOptions::default());
    assert_eq!(e.class(), ErrorClass::PackProfile, "{e}");
    assert!(e.to_string().contains("no tensor"), "{e}");
    // Control: the healthy file pre-flights with at least the source check and no failure.
    let g = gguf::parse(&src, Mode::Strict).unwrap();
    let checks = crate::pack::preflight::preflight(&g, &PackOptions::default(), 2).unwrap();
    assert!(
        checks.len() > 1 && checks.iter().all(|c| c.ok),
        "{checks:?}"
    );
}

/// `prove` compares rows in place; its verdicts and byte counts must equal those of the
/// materializing rebuild compared whole with the source, on healthy artifacts and on one-byte
/// changes in every plane of several objects (the in-place path and `rebuild` share no code
/// below the row map).
#[test]
fn unpack_prove_in_place_agrees_with_the_materialized_rebuild() {
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let pk = packed(ty);
        let g = gguf::parse(&pk.gguf, Mode::Strict).unwrap();
        let healthy = Artifact::parse(&pk.artifact).unwrap();
        let mut edits: Vec<Option<usize>> = vec![None];
        for name in [
            "text/token_embedding",
            "text/layers/0/gdn/value_z",
            "text/layers/3/attention/query_key",
        ] {
            let v = healthy.row_split(name).unwrap();
            let base =
                healthy.payload_offset as usize + healthy.object(name).unwrap().offset as usize;
            let n = v.geom.n;
            let mut at = vec![0, v.geom.row_span(Plane::Base, n - 1).end - 1];
            if v.geom.plane_bytes(Plane::High) > 0 {
                at.push(v.geom.row_span(Plane::High, n / 2).start + 1);
            }
            at.push(v.geom.scale_offset + 3);
            at.push(v.geom.row_span(Plane::Scale, n - 1).end - 1);
            edits.extend(at.into_iter().map(|x| Some(base + x as usize)));
        }
        let mut caught = 0;
        for e in edits {
            let mut bytes = pk.artifact.clone();
            if let Some(at) = e {
                bytes[at] ^= 0x01;
            }
            let a = Artifact::parse(&bytes).unwrap();
            let proved = unpack::prove(&g, &a).unwrap();
            let rebuilt = unpack::rebuild(&g, &a).unwrap();
            assert_eq!(proved.len(), rebuilt.len(), "{ty:?} {e:?}");
            for (p, (name, b)) in proved.iter().zip(&rebuilt) {
                let t = g.tensor(name).unwrap();
                assert_eq!(&p.name, name);
                assert_eq!(p.bytes, b.len() as u64, "{ty:?} {name}");
                assert_eq!(
                    p.identical,
                    b.as_slice() == g.tensor_data(t),
                    "{ty:?} {name} {e:?}"
                );
            }
            let differing = proved.iter().filter(|x| !x.identical).count();
            assert_eq!(differing, usize::from(e.is_some()), "{ty:?} {e:?}");
            caught += differing;
        }
        let planes = if ty == TernaryType::Ptq1_0 { 5 } else { 4 };
        assert_eq!(caught, 3 * planes, "{ty:?}: every one-byte change is seen");
    }
}

/// `pack.profile` and `gguf.tensor_missing` errors point at the place in the file that decided
/// them (issue #11, "errors carry no offset"): a mismatching hyper-parameter at its KV's value, a
/// layer beyond the profile at that layer's first tensor-info record, a file without tensors at
/// its (empty) tensor-info table, a required tensor that no record names at that table. Offsets
/// are read back by the reader, independently of the packer; `--profile` (a command-line value,
/// nothing in the file) carries none (control).
#[test]
fn profile_and_missing_tensor_errors_name_the_byte_that_decided_them() {
    let p = nano();
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    let named = PackOptions {
        profile: Some(p.name.clone()),
        ..Default::default()
    };
    let hidden_key = format!("{}.embedding_length", p.arch);
    let bad_hidden = with_kv(&src, &hidden_key, Some(MetaValue::U32(p.hidden as u32 + 1)));
    let e = refused_by_pack_and_check(&bad_hidden, &tpl, &named);
    assert_eq!(e.class(), ErrorClass::PackProfile, "{e}");
    assert_eq!(
        e.offset(),
        Some(value_offset(&bad_hidden, &hidden_key)),
        "{e}"
    );
    // Without --profile no profile fits at all: the error points at the declared block count.
    let block_key = format!("{}.block_count", p.arch);
    let e = refused_by_pack_and_check(&bad_hidden, &tpl, &PackOptions::default());
    assert_eq!(
        e.offset(),
        Some(value_offset(&bad_hidden, &block_key)),
        "{e}"
    );

    let beyond = rewrite(&src, |_, ts| {
        for t in ts.iter_mut().filter(|t| t.0.starts_with("blk.3.")) {
            t.0 = t.0.replacen("blk.3.", "blk.99.", 1);
        }
    });
    let e = pack_bytes(&beyond, &tpl, &named).unwrap_err();
    let g = gguf::parse(&beyond, Mode::Strict).unwrap();
    let first99 = g
        .tensors
        .iter()
        .find(|t| t.name.starts_with("blk.99."))
        .unwrap();
    assert_eq!(
        (e.class(), e.offset()),
        (ErrorClass::PackProfile, Some(first99.info_offset)),
        "{e}"
    );

    let empty = rewrite(&src, |_, ts| ts.clear());
    let e = refused_by_pack_and_check(&empty, &tpl, &PackOptions::default());
    let g = gguf::parse(&empty, Mode::Strict).unwrap();
    assert_eq!(e.offset(), Some(g.tensor_info_offset), "{e}");

    let g = gguf::parse(&src, Mode::Strict).unwrap();
    let e = g.require_tensor("no.such.tensor").unwrap_err();
    assert_eq!(
        (e.class(), e.offset()),
        (ErrorClass::GgufTensorMissing, Some(g.tensor_info_offset))
    );
    assert!(
        e.to_string()
            .contains(&format!("at byte {}", g.tensor_info_offset)),
        "{e}"
    );

    // Control: an unknown --profile names nothing in the file, so it has no offset.
    let unknown = PackOptions {
        profile: Some("no-such-profile".into()),
        ..Default::default()
    };
    let e = pack_bytes(&src, &tpl, &unknown).unwrap_err();
    assert_eq!(
        (e.class(), e.offset()),
        (ErrorClass::PackProfile, None),
        "{e}"
    );
}
