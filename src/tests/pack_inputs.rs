//! The packer's inputs as packer maintainers have them (issue #34): a template carrying
//! `dflash2/*` (and namespaces nobody named), the `--skip` filters, the public reduced test
//! model (layers 0 and 3, no vocabulary, six metadata keys), `--minimal`, and `unpack` /
//! `verify` on the reduced artifacts.

use super::fixtures::nano_fixture;
use super::fixtures::{artifact_parts, nano, rewrite_gguf as rewrite};
use crate::gguf::{self, MetaValue, Mode, ValueType};
use crate::mapping::TemplateExtras;
use crate::ninfer::{Artifact, PlannedObject};
use crate::pack::{pack_bytes, plan_pack, unpack, PackOptions};
use crate::spec::LayoutId;
use crate::synth::model::{write_model_layers, TernaryType};
use crate::synth::template::template_bytes_with;
use crate::verdict::Verdict;
use crate::ErrorClass;

fn dflash2_template() -> Vec<u8> {
    template_bytes_with(&nano(), &TemplateExtras { dflash2: true }).unwrap()
}

/// `pack --minimal` of `src` onto `tpl`.
fn pack_minimal(src: &[u8], tpl: &[u8]) -> Vec<u8> {
    let opts = PackOptions {
        minimal: true,
        ..Default::default()
    };
    pack_bytes(src, tpl, &opts).unwrap()
}

fn names(artifact: &[u8]) -> Vec<String> {
    Artifact::parse(artifact)
        .unwrap()
        .directory
        .objects
        .iter()
        .map(|o| o.name.clone())
        .collect()
}

fn summary_of(g: &[u8], tpl: &[u8], opts: &PackOptions) -> crate::pack::summary::PackSummary {
    let g = gguf::parse(g, Mode::Strict).unwrap();
    let t = Artifact::parse(tpl).unwrap();
    plan_pack(&g, &t, opts).unwrap().summary
}

/// `artifact` re-planned after `edit` changed its object list and payloads (index-aligned), so
/// the container itself stays valid: the one setup of every edited artifact below.
fn edited(
    artifact: &[u8],
    edit: impl FnOnce(&mut Vec<PlannedObject>, &mut Vec<Vec<u8>>),
) -> Vec<u8> {
    let (dir, mut payloads) = artifact_parts(artifact);
    let mut objs: Vec<PlannedObject> = dir
        .objects
        .iter()
        .map(|o| PlannedObject {
            name: o.name.clone(),
            body: o.body.clone(),
            resource_bytes: o.bytes,
        })
        .collect();
    edit(&mut objs, &mut payloads);
    let d = crate::ninfer::plan(dir.identity.clone(), objs).unwrap();
    crate::ninfer::writer::to_bytes(&d, &payloads).unwrap()
}

/// `tpl` with `object` (bytes 0x5a of its size) inserted at `at`.
fn with_object(tpl: &[u8], at: usize, object: PlannedObject, bytes: usize) -> Vec<u8> {
    edited(tpl, |objs, payloads| {
        objs.insert(at, object);
        payloads.insert(at, vec![0x5a; bytes]);
    })
}

/// `artifact` without the object `name`.
fn without(artifact: &[u8], name: &str) -> Vec<u8> {
    edited(artifact, |objs, payloads| {
        let i = objs.iter().position(|o| o.name == name).unwrap();
        objs.remove(i);
        payloads.remove(i);
    })
}

/// The public template's extra namespace is borrowed byte for byte and counted; every `--skip`
/// removes exactly its namespace from the object list and nothing else.
#[test]
fn dflash2_is_borrowed_and_each_skip_removes_exactly_its_namespace() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = dflash2_template();
    let t = Artifact::parse(&tpl).unwrap();
    let d2: Vec<&str> = t
        .directory
        .objects
        .iter()
        .filter(|o| o.name.starts_with("dflash2/"))
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(d2.len() as u64, nano().template.dflash2_objects);
    assert!(d2.contains(&"dflash2/norm"));
    let full = pack_bytes(&src, &tpl, &PackOptions::default()).unwrap();
    let a = Artifact::parse(&full).unwrap();
    for name in &d2 {
        let (ao, to) = (a.object(name).unwrap(), t.object(name).unwrap());
        assert_eq!(a.object_bytes(ao), t.object_bytes(to), "{name}");
    }
    // The plain template's artifact is the dflash2 one without dflash2/* (same text bytes).
    let plain = pack_bytes(&src, &nano_fixture::template(), &PackOptions::default()).unwrap();
    let without: Vec<String> = names(&full)
        .into_iter()
        .filter(|n| !n.starts_with("dflash2/"))
        .collect();
    assert_eq!(without, names(&plain));
    let s = summary_of(&src, &tpl, &PackOptions::default());
    assert_eq!(s.borrowed["dflash2"].0, d2.len() as u64, "{s:?}");
    assert!(s.unknown_namespaces.is_empty(), "{s:?}");
    for ns in ["vision", "mtp", "dflash2", "frontend"] {
        let opts = PackOptions {
            skip: vec![ns.into()],
            ..Default::default()
        };
        let got = names(&pack_bytes(&src, &tpl, &opts).unwrap());
        let want: Vec<String> = names(&full)
            .into_iter()
            .filter(|n| !n.starts_with(&format!("{ns}/")))
            .collect();
        assert_eq!(got, want, "--skip {ns}");
        assert!(
            got.len() < names(&full).len(),
            "--skip {ns} removed nothing"
        );
        let s = summary_of(&src, &tpl, &opts);
        assert!(
            !s.borrowed.contains_key(ns) && s.skipped[ns] > 0,
            "{ns}: {s:?}"
        );
    }
    // All three at once, as tools/pack.py's three filters.
    let opts = PackOptions {
        skip: vec!["vision".into(), "mtp".into(), "dflash2".into()],
        ..Default::default()
    };
    let got = names(&pack_bytes(&src, &tpl, &opts).unwrap());
    assert!(got
        .iter()
        .all(|n| n.starts_with("frontend/") || n.starts_with("text/")));
}

/// `--skip` of a produced namespace, or of a name neither the spec nor the template knows, is
/// refused (a misspelt filter would otherwise filter nothing).
#[test]
fn skip_of_text_or_of_an_unknown_name_is_refused() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    for (skip, needle) in [
        ("text", "produced from the GGUF"),
        ("vison", "neither a borrowed namespace"),
    ] {
        let opts = PackOptions {
            skip: vec![skip.into()],
            ..Default::default()
        };
        let e = pack_bytes(&src, &tpl, &opts).unwrap_err();
        assert_eq!((e.class(), e.field()), (ErrorClass::PackTemplate, "--skip"));
        assert!(e.to_string().contains(needle), "{skip}: {e}");
    }
    // A known namespace this template lacks filters nothing and is accepted (pack.py's too).
    let opts = PackOptions {
        skip: vec!["dflash2".into()],
        ..Default::default()
    };
    assert!(
        pack_bytes(&src, &tpl, &opts).unwrap()
            == pack_bytes(&src, &tpl, &PackOptions::default()).unwrap()
    );
}

/// A namespace nobody named is borrowed and reported, never refused; an unmapped object inside
/// the produced namespace (`text/`) stays an error, global or per layer.
#[test]
fn unknown_namespaces_are_borrowed_and_unmapped_text_objects_refused() {
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let tpl = nano_fixture::template();
    let audio = with_object(
        &tpl,
        3,
        PlannedObject::tensor(
            "audio/encoder/norm",
            vec![4],
            "BF16",
            LayoutId::ContiguousLeV1,
        ),
        8,
    );
    let out = pack_bytes(&src, &audio, &PackOptions::default()).unwrap();
    let a = Artifact::parse(&out).unwrap();
    assert_eq!(
        a.object_bytes(a.object("audio/encoder/norm").unwrap()),
        &[0x5a; 8]
    );
    let s = summary_of(&src, &audio, &PackOptions::default());
    assert_eq!(s.unknown_namespaces, vec!["audio".to_string()]);
    assert_eq!(s.borrowed["audio"], (1, 8));
    assert!(s
        .lines()
        .iter()
        .any(|l| l.contains("does not name") && l.contains("audio")));
    // And it can be skipped by name, as the template has it.
    let opts = PackOptions {
        skip: vec!["audio".into()],
        ..Default::default()
    };
    assert!(!names(&pack_bytes(&src, &audio, &opts).unwrap())
        .contains(&"audio/encoder/norm".to_string()));
    for name in [
        "text/rope_table",
        "text/layers/2/gdn/extra_gate",
        "text/vision_proj",
    ] {
        let bad = with_object(
            &tpl,
            10,
            PlannedObject::tensor(name, vec![4], "BF16", LayoutId::ContiguousLeV1),
            8,
        );
        let e = pack_bytes(&src, &bad, &PackOptions::default()).unwrap_err();
        assert_eq!(
            (e.class(), e.field()),
            (ErrorClass::PackTemplate, name),
            "{e}"
        );
        assert!(e.to_string().contains("unmapped"), "{e}");
    }
}

/// The public reduced test model's shape: layers 0 and 3, no vocabulary tensors, and only
/// general.architecture, general.alignment and prism.hadamard.{block_size, transform,
/// sign_widths (I32), sign_values (F32)}.
fn six_key_reduced(ty: TernaryType, seed: u64) -> Vec<u8> {
    let full = write_model_layers(&nano(), ty, seed, Some(&[0, 3]), Vec::new(), |_| {}).unwrap();
    rewrite(&full, |kvs, ts| {
        let keep = [
            "general.architecture",
            "prism.hadamard.block_size",
            "prism.hadamard.transform",
            "prism.hadamard.sign_widths",
            "prism.hadamard.sign_values",
        ];
        kvs.retain(|k| keep.contains(&k.0.as_str()));
        kvs.insert(1, ("general.alignment".into(), MetaValue::U32(32)));
        for kv in kvs
            .iter_mut()
            .filter(|k| k.0 == "prism.hadamard.sign_values")
        {
            if let MetaValue::Array(_, items) = &kv.1 {
                let f = items
                    .iter()
                    .map(|m| match m {
                        MetaValue::I32(x) => MetaValue::F32(*x as f32),
                        other => panic!("synth writes I32 signs, got {other:?}"),
                    })
                    .collect();
                kv.1 = MetaValue::Array(ValueType::F32, f);
            }
        }
        ts.retain(|t| t.0 != "token_embd.weight" && t.0 != "output.weight");
    })
}

#[test]
fn the_six_key_reduced_gguf_has_exactly_the_public_shape() {
    let g = six_key_reduced(TernaryType::Pq2_0, 2);
    let p = gguf::parse(&g, Mode::Strict).unwrap();
    let mut keys: Vec<&str> = p.kvs.iter().map(|k| k.key).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "general.alignment",
            "general.architecture",
            "prism.hadamard.block_size",
            "prism.hadamard.sign_values",
            "prism.hadamard.sign_widths",
            "prism.hadamard.transform"
        ]
    );
    assert!(p.tensor("token_embd.weight").is_none() && p.tensor("output.weight").is_none());
    assert_eq!(crate::mapping::profile::held_layers(&p), vec![0, 3]);
}

/// Packs onto a template with dflash2/*: profile from the shapes (or --profile), the same
/// bytes as the reduced GGUF with every key, the vocabulary objects left out; unpack proves
/// every held ternary tensor.
#[test]
fn six_key_reduced_gguf_packs_onto_a_dflash2_template_and_round_trips() {
    let tpl = dflash2_template();
    for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
        let six = six_key_reduced(ty, 2);
        let out = pack_bytes(&six, &tpl, &PackOptions::default()).unwrap();
        let named = PackOptions {
            profile: Some("bonsai-nano".into()),
            ..Default::default()
        };
        assert!(pack_bytes(&six, &tpl, &named).unwrap() == out, "--profile");
        // Independent of the metadata: the reduced GGUF with every key (vocabulary dropped)
        // packs to the very same bytes.
        let all_keys = rewrite(
            &write_model_layers(&nano(), ty, 2, Some(&[0, 3]), Vec::new(), |_| {}).unwrap(),
            |_, ts| ts.retain(|t| t.0 != "token_embd.weight" && t.0 != "output.weight"),
        );
        assert!(pack_bytes(&all_keys, &tpl, &PackOptions::default()).unwrap() == out);
        let n = names(&out);
        assert!(n.iter().any(|x| x == "text/layers/0/gdn/value_z"));
        assert!(n.iter().any(|x| x == "text/layers/3/attention/query_key"));
        assert!(!n.iter().any(|x| x.starts_with("text/layers/1/")));
        assert!(!n
            .iter()
            .any(|x| x == "text/token_embedding" || x == "text/output_head"));
        assert!(
            n.iter().any(|x| x == "text/final_norm"),
            "output_norm is held"
        );
        assert!(n.iter().any(|x| x.starts_with("dflash2/")));
        let s = summary_of(&six, &tpl, &PackOptions::default());
        assert!(
            s.absent_keys
                .contains(&"qwen35.feed_forward_length".to_string()),
            "{s:?}"
        );
        assert!(
            s.absent_keys
                .contains(&"prism.hadamard.version".to_string()),
            "{s:?}"
        );
        let g = gguf::parse(&six, Mode::Strict).unwrap();
        let a = Artifact::parse(&out).unwrap();
        let r = unpack::prove(&g, &a).unwrap();
        let ternary = g
            .tensors
            .iter()
            .filter(|t| t.ternary_type().is_some())
            .count();
        assert_eq!(r.len(), ternary);
        assert!(r.iter().all(|x| x.identical), "{ty:?}");
        assert!(unpack::objects_not_held(&g, &a).unwrap().is_empty());
        // Negative control: one flipped payload byte is found.
        let mut broken = out.clone();
        let o = a.object("text/layers/3/mlp/down").unwrap();
        broken[a.payload_offset as usize + o.offset as usize + 9] ^= 0x10;
        let b = Artifact::parse(&broken).unwrap();
        let bad: Vec<String> = unpack::prove(&g, &b)
            .unwrap()
            .into_iter()
            .filter(|x| !x.identical)
            .map(|x| x.name)
            .collect();
        assert_eq!(bad, vec!["blk.3.ffn_down.weight"]);
    }
}

/// What the six keys cannot give: the sign table missing is one error naming both keys; a
/// profile of another shape is refused at the tensor that decides it.
#[test]
fn six_key_reduced_gguf_refusals_name_every_missing_key_at_once() {
    let tpl = dflash2_template();
    let six = six_key_reduced(TernaryType::Pq2_0, 2);
    let no_signs = rewrite(&six, |kvs, _| {
        kvs.retain(|k| !k.0.starts_with("prism.hadamard.sign_"))
    });
    let e = pack_bytes(&no_signs, &tpl, &PackOptions::default()).unwrap_err();
    assert_eq!(e.class(), ErrorClass::PackHadamard, "{e}");
    assert_eq!(
        e.field(),
        "prism.hadamard.sign_widths, prism.hadamard.sign_values"
    );
    let other = PackOptions {
        profile: Some("bonsai-2-27b".into()),
        ..Default::default()
    };
    let e = pack_bytes(&six, &tpl, &other).unwrap_err();
    assert_eq!(
        (e.class(), e.field()),
        (ErrorClass::PackProfile, "blk.0.attn_norm.weight"),
        "{e}"
    );
    // bonsai-micro has nano's hidden width: told apart by the other shapes (ffn).
    let micro = PackOptions {
        profile: Some("bonsai-micro".into()),
        ..Default::default()
    };
    let e = pack_bytes(&six, &tpl, &micro).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorShape, "{e}");
    // A reduced GGUF still needs every tensor of the layers it holds.
    let partial = rewrite(&six, |_, ts| ts.retain(|t| t.0 != "blk.3.attn_k.weight"));
    let e = pack_bytes(&partial, &tpl, &PackOptions::default()).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorMissing, "{e}");
    // A full-layer GGUF without its vocabulary is not a reduced model: still refused.
    let full_no_vocab = rewrite(&nano_fixture::model(TernaryType::Pq2_0, 5), |_, ts| {
        ts.retain(|t| t.0 != "output.weight")
    });
    let e = pack_bytes(&full_no_vocab, &tpl, &PackOptions::default()).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorMissing, "{e}");
}

/// `--minimal`: frontend, one full-attention layer and the sign table, as tools/pack.py layer3.
#[test]
fn minimal_artifact_is_frontend_one_attention_layer_and_signs() {
    let tpl = dflash2_template();
    let six = six_key_reduced(TernaryType::Ptq1_0, 4);
    let out = pack_minimal(&six, &tpl);
    let n = names(&out);
    let t = Artifact::parse(&tpl).unwrap();
    let want: Vec<String> = t
        .directory
        .objects
        .iter()
        .map(|o| o.name.clone())
        .filter(|x| x.starts_with("frontend/") || x.starts_with("text/layers/3/"))
        .chain(["text/hadamard_signs".into(), "text/hadamard_widths".into()])
        .collect();
    assert_eq!(n, want);
    let g = gguf::parse(&six, Mode::Strict).unwrap();
    let a = Artifact::parse(&out).unwrap();
    let r = unpack::prove(&g, &a).unwrap();
    assert!(
        !r.is_empty()
            && r.iter()
                .all(|x| x.identical && x.name.starts_with("blk.3."))
    );
    let not_held = unpack::objects_not_held(&g, &a).unwrap();
    assert!(not_held.iter().all(|x| x.starts_with("text/layers/0/")) && !not_held.is_empty());
    // --layers picks the layer; a layer selection without attention layer is refused.
    let only0 = PackOptions {
        minimal: true,
        layers: Some(vec![0]),
        ..Default::default()
    };
    let e = pack_bytes(&six, &tpl, &only0).unwrap_err();
    assert_eq!(
        (e.class(), e.field()),
        (ErrorClass::PackProfile, "--minimal")
    );
}

/// `verify --template --sweep [--minimal]` of `artifact` against its source.
fn verify_as(artifact: &[u8], gguf: &[u8], tpl: &[u8], minimal: bool) -> crate::verify::Report {
    crate::verify::verify(
        "artifact.ninfer",
        artifact,
        "source.gguf",
        gguf,
        crate::verify::Options {
            template: Some(tpl),
            sweep: true,
            minimal,
            ..Default::default()
        },
    )
    .unwrap()
}

fn verify_reduced(artifact: &[u8], gguf: &[u8], tpl: &[u8]) -> crate::verify::Report {
    verify_as(artifact, gguf, tpl, false)
}

fn verify_minimal(artifact: &[u8], gguf: &[u8], tpl: &[u8]) -> crate::verify::Report {
    verify_as(artifact, gguf, tpl, true)
}

fn finding<'r>(r: &'r crate::verify::Report, step: &str) -> &'r crate::verify::Finding {
    r.findings.iter().find(|f| f.step == step).unwrap()
}

/// `verify` passes the six-key reduced artifact (packed with --skip vision onto the dflash2
/// template), each gate naming what the reduced model does not hold; the same artifact with a
/// produced object, a kept borrowed object or a row out of place fails.
#[test]
fn verify_passes_the_reduced_artifact_naming_what_it_skips() {
    let tpl = dflash2_template();
    let six = six_key_reduced(TernaryType::Pq2_0, 2);
    let opts = PackOptions {
        skip: vec!["vision".into()],
        ..Default::default()
    };
    let out = pack_bytes(&six, &tpl, &opts).unwrap();
    let r = verify_reduced(&out, &six, &tpl);
    assert!(r.ok(), "{:#?}", r.findings);
    let lines = |step: &str| finding(&r, step).lines.join("\n");
    assert!(lines("inspect").contains("text/token_embedding, text/output_head"));
    assert!(finding(&r, "assembly")
        .detail
        .contains("2 skipped: not in the reduced source"));
    assert!(lines("assembly").contains("token_embedding: SKIPPED"));
    assert!(lines("signs").contains("prism.hadamard.version"));
    assert!(finding(&r, "provenance")
        .detail
        .contains("left out whole: vision (9)"));
    assert!(lines("provenance").contains("dflash2") || !lines("provenance").contains("missing"));
    // Negative controls on the same reduced artifact.
    let no_down = without(&out, "text/layers/3/mlp/down");
    let r = verify_reduced(&no_down, &six, &tpl);
    assert!(
        finding(&r, "inspect").status == Verdict::Fail,
        "a produced object of a held layer left out"
    );
    let no_norm = without(&out, "text/final_norm");
    let r = verify_reduced(&no_norm, &six, &tpl);
    assert!(
        finding(&r, "inspect").status == Verdict::Fail,
        "a global the source holds (output_norm) left out"
    );
    let one_mtp = without(&out, "mtp/final_norm");
    let r = verify_reduced(&one_mtp, &six, &tpl);
    assert!(
        finding(&r, "provenance").status == Verdict::Fail,
        "one borrowed object of a kept namespace"
    );
    // Rows 0 and 1 of layer 0's value_z exchanged in the code plane.
    let a = Artifact::parse(&out).unwrap();
    let v = a.row_split("text/layers/0/gdn/value_z").unwrap();
    let at = a.payload_offset as usize
        + a.object("text/layers/0/gdn/value_z").unwrap().offset as usize
        + v.geom.base_offset as usize;
    let rb = v.geom.base_row_bytes as usize;
    let mut swapped = out.clone();
    let (r0, r1) = (
        out[at..at + rb].to_vec(),
        out[at + rb..at + 2 * rb].to_vec(),
    );
    assert_ne!(r0, r1);
    swapped[at..at + rb].copy_from_slice(&r1);
    swapped[at + rb..at + 2 * rb].copy_from_slice(&r0);
    let r = verify_reduced(&swapped, &six, &tpl);
    assert!(finding(&r, "row_order").status == Verdict::Fail && !r.ok());
}

/// `artifact` with byte `at` of object `name`'s payload flipped.
fn flipped(artifact: &[u8], name: &str, at: usize) -> Vec<u8> {
    let a = Artifact::parse(artifact).unwrap();
    let o = a.object(name).unwrap();
    let mut out = artifact.to_vec();
    out[a.payload_offset as usize + o.offset as usize + at] ^= 0x10;
    out
}

/// `verify --minimal` passes a `pack --minimal` artifact, from the six-key reduced GGUF and
/// from a full one (whose globals the minimal artifact leaves out): each gate that cannot run
/// on one full-attention layer says SKIPPED and why, every other gate runs and passes.
#[test]
fn verify_passes_a_minimal_artifact_naming_every_skip() {
    let tpl = dflash2_template();
    for (what, src) in [
        ("six-key PQ2_0", six_key_reduced(TernaryType::Pq2_0, 2)),
        ("six-key PTQ1_0", six_key_reduced(TernaryType::Ptq1_0, 4)),
        ("full PQ2_0", nano_fixture::model(TernaryType::Pq2_0, 5)),
    ] {
        let out = pack_minimal(&src, &tpl);
        let r = verify_minimal(&out, &src, &tpl);
        assert!(r.ok(), "{what}: {:#?}", r.findings);
        let st = |step: &str| finding(&r, step).status;
        let lines = |step: &str| finding(&r, step).lines.join("\n");
        for step in ["provenance", "inspect", "row_order", "row_order_sweep"] {
            assert_eq!(st(step), Verdict::Pass, "{what}: {step}");
        }
        for step in ["assembly", "signs", "dense_values"] {
            assert_eq!(st(step), Verdict::Pass, "{what}: {step}");
        }
        // payload_order's object is a GDN layer's: skipped, saying so.
        let po = finding(&r, "payload_order");
        assert_eq!(po.status, Verdict::Skip, "{what}");
        assert!(
            po.detail.contains("Gated-DeltaNet") && po.detail.contains("layer 3 only"),
            "{what}: {}",
            po.detail
        );
        assert!(
            lines("inspect").contains("minimal artifact: layer 3"),
            "{what}"
        );
        assert!(lines("inspect").contains("text/final_norm"), "{what}");
        let ro = lines("row_order");
        assert!(
            ro.contains("{first_gdn} sections: SKIPPED") && ro.contains("L3 "),
            "{what}: {ro}"
        );
        assert!(
            finding(&r, "row_order").detail.contains("skipped"),
            "{what}"
        );
        let asm = finding(&r, "assembly");
        assert!(
            asm.detail
                .contains("not in the minimal artifact of layer 3")
                && asm.detail.contains("3/3 negative controls caught"),
            "{what}: {}",
            asm.detail
        );
        let al = lines("assembly");
        assert!(al.contains("gdn/value_z[0:v_rows]: SKIPPED"), "{what}");
        assert!(
            al.contains("negative control perm48_on_rows: SKIPPED"),
            "{what}"
        );
        assert!(al.contains("token_embedding: SKIPPED"), "{what}");
        assert!(
            al.contains("L3 attention/output: rows="),
            "{what}: the audits that can run, ran"
        );
        let dl = lines("dense_values");
        assert!(
            dl.contains("SKIPPED") && dl.contains("a_log") && dl.contains("text/final_norm"),
            "{what}: {dl}"
        );
        assert!(dl.contains("one-ulp nudge rejected"), "{what}: {dl}");
        assert!(lines("provenance").contains("a minimal artifact keeps frontend/ only"));
        // The same artifact judged as a full one fails, pointing at --minimal.
        let plain = verify_reduced(&out, &src, &tpl);
        assert_eq!(finding(&plain, "inspect").status, Verdict::Fail, "{what}");
        assert!(
            finding(&plain, "inspect")
                .lines
                .join("\n")
                .contains("verify it with --minimal"),
            "{what}"
        );
    }
}

/// Negative controls on a minimal artifact: a flipped byte in the one layer, in the frontend
/// or in the sign table, a dropped object of each kind, and a non-minimal artifact judged with
/// --minimal (objects the gates would not judge) all fail.
#[test]
fn verify_minimal_fails_a_broken_minimal_artifact() {
    let tpl = dflash2_template();
    let six = six_key_reduced(TernaryType::Pq2_0, 2);
    let out = pack_minimal(&six, &tpl);
    assert!(verify_minimal(&out, &six, &tpl).ok());
    let fails = |bytes: &[u8], step: &str, what: &str| {
        let r = verify_minimal(bytes, &six, &tpl);
        assert!(!r.ok(), "{what}");
        assert_eq!(finding(&r, step).status, Verdict::Fail, "{what}: {step}");
    };
    let a = Artifact::parse(&out).unwrap();
    let frontend = a
        .directory
        .objects
        .iter()
        .find(|o| o.name.starts_with("frontend/") && o.bytes > 0)
        .unwrap()
        .name
        .clone();
    fails(
        &flipped(&out, "text/layers/3/attention/query_key", 40),
        "row_order",
        "flipped byte in the attention layer's codes",
    );
    fails(
        &flipped(&out, "text/layers/3/mlp/down", 40),
        "assembly",
        "flipped byte in the mlp",
    );
    fails(
        &flipped(&out, &frontend, 0),
        "provenance",
        "flipped frontend byte",
    );
    fails(
        &flipped(&out, "text/hadamard_signs", 0),
        "signs",
        "flipped sign byte",
    );
    fails(
        &flipped(&out, "text/layers/3/input_norm", 0),
        "dense_values",
        "flipped norm byte",
    );
    fails(
        &without(&out, "text/layers/3/mlp/down"),
        "inspect",
        "dropped ternary object of the layer",
    );
    fails(
        &without(&out, "text/layers/3/input_norm"),
        "inspect",
        "dropped dense object of the layer",
    );
    fails(
        &without(&out, &frontend),
        "provenance",
        "dropped frontend object",
    );
    fails(
        &without(&out, "text/hadamard_widths"),
        "inspect",
        "dropped sign-table object",
    );
    // A reduced (not minimal) artifact judged as a minimal one: layer 0's objects and the
    // final norm would go unjudged, so inspect names them.
    let reduced = pack_bytes(&six, &tpl, &PackOptions::default()).unwrap();
    let r = verify_minimal(&reduced, &six, &tpl);
    let ins = finding(&r, "inspect");
    assert_eq!(ins.status, Verdict::Fail);
    assert!(ins.lines.join("\n").contains("text/layers/0/"), "{ins:?}");
    assert!(ins
        .failures
        .iter()
        .any(|f| f.check == "inspect.beyond_minimal"));
    // A source with no full-attention layer cannot have a minimal artifact: a classed error.
    let only0 = rewrite(&six, |_, ts| ts.retain(|t| !t.0.starts_with("blk.3.")));
    let e = crate::verify::verify(
        "m",
        &out,
        "g",
        &only0,
        crate::verify::Options {
            minimal: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        (e.class(), e.field()),
        (ErrorClass::VerifyInput, "--minimal"),
        "{e}"
    );
}

/// A full artifact still runs every gate: no gate and no line says SKIPPED (only the two dump
/// gates skip, as before, naming their inputs).
#[test]
fn verify_of_a_full_artifact_skips_nothing_new() {
    let tpl = dflash2_template();
    let src = nano_fixture::model(TernaryType::Pq2_0, 5);
    let out = pack_bytes(&src, &tpl, &PackOptions::default()).unwrap();
    let r = verify_reduced(&out, &src, &tpl);
    assert!(r.ok(), "{:#?}", r.findings);
    for f in &r.findings {
        let dump_gate = f.step == "embedding" || f.step == "engine_oracles";
        let want = if dump_gate {
            Verdict::Skip
        } else {
            Verdict::Pass
        };
        assert_eq!(f.status, want, "{}: {}", f.step, f.detail);
        assert!(
            !f.lines.iter().any(|l| l.contains("SKIPPED")) && !f.detail.contains("skipped"),
            "{}: {:?}",
            f.step,
            f.lines
        );
    }
    assert!(finding(&r, "assembly")
        .detail
        .contains("4/4 negative controls caught"));
    assert!(finding(&r, "payload_order").lines[0].starts_with("text/layers/0/gdn/output"));
}

/// `mutate` (and everything that finds an artifact's profile) works on artifacts without
/// `text/token_embedding`: the profile comes from the layer objects' shapes. A kind whose
/// object needs a layer kind the artifact lacks is a classed error naming the kind and the
/// placeholder; an artifact whose layer objects fit no profile names the missing object.
#[test]
fn mutate_finds_the_profile_of_artifacts_without_token_embedding() {
    use crate::verify::mutate::plan_mutation;
    use crate::verify::profile_for_artifact;
    let tpl = dflash2_template();
    let six = six_key_reduced(TernaryType::Pq2_0, 2);
    let reduced = pack_bytes(&six, &tpl, &PackOptions::default()).unwrap();
    let minimal = pack_minimal(&six, &tpl);
    for bytes in [&reduced, &minimal] {
        let a = Artifact::parse(bytes).unwrap();
        assert!(a.directory.find("text/token_embedding").is_none());
        assert_eq!(profile_for_artifact(&a).unwrap().name, "bonsai-nano");
    }
    // The reduced artifact holds layer 0: every artifact kind plans.
    let a = Artifact::parse(&reduced).unwrap();
    for kind in ["swap-two-rows", "flipped-sign", "dense-one-ulp"] {
        plan_mutation(&a, kind).unwrap();
    }
    // The minimal one: kinds on the sign table plan, GDN kinds are refused by name.
    let m = Artifact::parse(&minimal).unwrap();
    plan_mutation(&m, "flipped-sign").unwrap();
    let e = plan_mutation(&m, "swap-two-rows").err().unwrap();
    assert_eq!(e.class(), ErrorClass::VerifyInput, "{e}");
    assert!(
        e.field().contains("--kind swap-two-rows") && e.field().contains("{first_gdn}"),
        "{e}"
    );
    // A mutated minimal artifact fails verify --minimal in the gate the spec names.
    let (dir, sources) = plan_mutation(&m, "flipped-sign").unwrap();
    let bytes: Vec<Vec<u8>> = sources
        .iter()
        .map(|s| match s {
            crate::verify::mutate::Source::Copy(i) => {
                m.object_bytes(&m.directory.objects[*i]).to_vec()
            }
            crate::verify::mutate::Source::Bytes(b) => b.clone(),
        })
        .collect();
    let broken = crate::ninfer::writer::to_bytes(&dir, &bytes).unwrap();
    let r = verify_minimal(&broken, &six, &tpl);
    assert_eq!(finding(&r, "signs").status, Verdict::Fail);
    // Negative control: layer objects no profile has (layer 3000).
    let wrong = edited(&minimal, |objs, _| {
        for o in objs
            .iter_mut()
            .filter(|o| o.name.starts_with("text/layers/"))
        {
            o.name = o.name.replace("text/layers/3/", "text/layers/3000/");
        }
    });
    let e = profile_for_artifact(&Artifact::parse(&wrong).unwrap()).unwrap_err();
    assert_eq!(
        (e.class(), e.field()),
        (ErrorClass::NinferObjectMissing, "text/token_embedding"),
        "{e}"
    );
}
