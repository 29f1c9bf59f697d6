//! The packer's inputs as packer maintainers have them (issue #34): a template carrying
//! `dflash2/*` (and namespaces nobody named), the `--skip` filters, the public reduced test
//! model (layers 0 and 3, no vocabulary, six metadata keys), `--minimal`, and `unpack` /
//! `verify` on the reduced artifacts.

use crate::common::{artifact_parts, nano, rewrite_gguf as rewrite};
use ninfer_ternary::gguf::{self, MetaValue, Mode, ValueType};
use ninfer_ternary::mapping::TemplateExtras;
use ninfer_ternary::ninfer::{Artifact, PlannedObject};
use ninfer_ternary::pack::{pack_bytes, plan_pack, unpack, PackOptions};
use ninfer_ternary::spec::LayoutId;
use ninfer_ternary::synth::model::{write_model_layers, TernaryType};
use ninfer_ternary::synth::template::template_bytes_with;
use ninfer_ternary::verdict::Verdict;
use ninfer_ternary::ErrorClass;
use ninfer_ternary_testkit::nano as nano_fixture;

fn dflash2_template() -> Vec<u8> {
    template_bytes_with(&nano(), &TemplateExtras { dflash2: true }).unwrap()
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

fn summary_of(
    g: &[u8],
    tpl: &[u8],
    opts: &PackOptions,
) -> ninfer_ternary::pack::summary::PackSummary {
    let g = gguf::parse(g, Mode::Strict).unwrap();
    let t = Artifact::parse(tpl).unwrap();
    plan_pack(&g, &t, opts).unwrap().summary
}

/// `tpl` with `object` (zero bytes of its size) inserted at `at`.
fn with_object(tpl: &[u8], at: usize, object: PlannedObject, bytes: usize) -> Vec<u8> {
    let (dir, mut payloads) = artifact_parts(tpl);
    let mut objs: Vec<PlannedObject> = dir
        .objects
        .iter()
        .map(|o| PlannedObject {
            name: o.name.clone(),
            body: o.body.clone(),
            resource_bytes: o.bytes,
        })
        .collect();
    objs.insert(at, object);
    payloads.insert(at, vec![0x5a; bytes]);
    let d = ninfer_ternary::ninfer::plan(dir.identity.clone(), objs).unwrap();
    ninfer_ternary::ninfer::writer::to_bytes(&d, &payloads).unwrap()
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
    assert_eq!(
        ninfer_ternary::mapping::profile::held_layers(&p),
        vec![0, 3]
    );
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
    let opts = PackOptions {
        minimal: true,
        ..Default::default()
    };
    let out = pack_bytes(&six, &tpl, &opts).unwrap();
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

fn verify_reduced(artifact: &[u8], gguf: &[u8], tpl: &[u8]) -> ninfer_ternary::verify::Report {
    ninfer_ternary::verify::verify(
        "reduced.ninfer",
        artifact,
        "reduced.gguf",
        gguf,
        ninfer_ternary::verify::Options {
            template: Some(tpl),
            sweep: true,
            ..Default::default()
        },
    )
    .unwrap()
}

fn finding<'r>(
    r: &'r ninfer_ternary::verify::Report,
    step: &str,
) -> &'r ninfer_ternary::verify::Finding {
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
    let (dir, mut payloads) = artifact_parts(&out);
    let drop = |name: &str, payloads: &mut Vec<Vec<u8>>| {
        let mut objs: Vec<PlannedObject> = dir
            .objects
            .iter()
            .map(|o| PlannedObject {
                name: o.name.clone(),
                body: o.body.clone(),
                resource_bytes: o.bytes,
            })
            .collect();
        let i = objs.iter().position(|o| o.name == name).unwrap();
        objs.remove(i);
        let mut p = payloads.clone();
        p.remove(i);
        let d = ninfer_ternary::ninfer::plan(dir.identity.clone(), objs).unwrap();
        ninfer_ternary::ninfer::writer::to_bytes(&d, &p).unwrap()
    };
    let no_down = drop("text/layers/3/mlp/down", &mut payloads);
    let r = verify_reduced(&no_down, &six, &tpl);
    assert!(
        finding(&r, "inspect").status == Verdict::Fail,
        "a produced object of a held layer left out"
    );
    let no_norm = drop("text/final_norm", &mut payloads);
    let r = verify_reduced(&no_norm, &six, &tpl);
    assert!(
        finding(&r, "inspect").status == Verdict::Fail,
        "a global the source holds (output_norm) left out"
    );
    let one_mtp = drop("mtp/final_norm", &mut payloads);
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

/// The command line: `synth-template --with dflash2`, `pack --skip ... --minimal` with its run
/// summary, and the usage errors of both options.
#[test]
fn cli_with_dflash2_skip_and_minimal_print_the_summary() {
    use crate::common::cli;
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let o = cli().args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    assert_eq!(
        run(&["synth", "--layers", "0,3", "-o", &p("r.gguf")]).0,
        Some(0)
    );
    let (code, out) = run(&["synth-template", "--with", "dflash2", "-o", &p("t.ninfer")]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&[
        "pack",
        "--gguf",
        &p("r.gguf"),
        "--template",
        &p("t.ninfer"),
        "-o",
        &p("a.ninfer"),
        "--skip",
        "vision,mtp",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("borrowed from the template: dflash2 14, frontend 6, text 2"),
        "{out}"
    );
    assert!(out.contains("skipped (filters): mtp 12, vision 9"), "{out}");
    assert!(out.contains("left out:"), "{out}");
    let (code, out) = run(&[
        "pack",
        "--gguf",
        &p("r.gguf"),
        "--template",
        &p("t.ninfer"),
        "-o",
        &p("m.ninfer"),
        "--minimal",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("minimal artifact: frontend, sign table and layer 3"),
        "{out}"
    );
    let (code, out) = run(&["unpack", &p("m.ninfer"), "--gguf", &p("r.gguf")]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("not in the artifact") && out.contains("text/layers/0/"),
        "{out}"
    );
    for args in [
        vec!["synth-template", "--with", "dflash3", "-o", "x.ninfer"],
        vec![
            "pack",
            "--gguf",
            "r.gguf",
            "--template",
            "t.ninfer",
            "-o",
            "y.ninfer",
            "--skip",
            "vision,",
        ],
    ] {
        let (code, out) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert!(out.contains("[cli.usage]"), "{args:?}: {out}");
    }
}
