//! The verifier on the nano artifacts (both ternary formats): healthy runs pass every gate, every
//! mutation of spec/gates.json fails exactly the gates the spec names (the table is read from the
//! spec, not listed here), and every report is snapshotted (text and JSON).

use super::fixtures::conforms;
use super::fixtures::{packed_with_seed, Packed};
use crate::ninfer::Artifact;
use crate::pack::{pack_bytes, PackOptions};
use crate::spec::{gates, profile, Produce};
use crate::synth::{model, template};
use crate::verify::{self, dumps, mutate, report, Options, Report, Verdict};
use std::path::{Path, PathBuf};

struct Fixture {
    tag: &'static str,
    gguf: Vec<u8>,
    template: Vec<u8>,
    artifact: Vec<u8>,
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(ty: model::TernaryType) -> Fixture {
        let Packed {
            gguf,
            template,
            artifact,
        } = packed_with_seed(ty, 0);
        let dir = tempfile::tempdir().unwrap();
        let a = Artifact::parse(&artifact).unwrap();
        dumps::write_reference(&a, &dir.path().join("healthy"), None, 0, Default::default())
            .unwrap();
        let tag = match ty {
            model::TernaryType::Pq2_0 => "pq2_0",
            model::TernaryType::Ptq1_0 => "ptq1_0",
        };
        Fixture {
            tag,
            gguf,
            template,
            artifact,
            dir,
        }
    }

    fn dumps(&self, name: &str) -> (PathBuf, PathBuf) {
        let d = self.dir.path().join(name);
        (d.join("embedding"), d.join("oracles"))
    }

    fn run(&self, name: &str, artifact: &[u8], opts: Options<'_>) -> Report {
        verify::verify(
            &format!("bonsai-nano-{}{name}.ninfer", self.tag),
            artifact,
            &format!("bonsai-nano-{}.gguf", self.tag),
            &self.gguf,
            opts,
        )
        .unwrap()
    }

    fn full<'a>(&'a self, emb: &'a Path, orc: &'a Path) -> Options<'a> {
        Options {
            template: Some(&self.template),
            sweep: true,
            dump: Some(emb),
            oracle_dump: Some(orc),
            oracle_object: None,
            profile: None,
            dump_format: None,
            minimal: false,
        }
    }
}

fn snap(name: &str, r: &Report) {
    // Every snapshotted report, with the header `--json` adds, matches the published schema.
    let mut v = report::json(r);
    v["schema"] = "ninfer-ternary/verify-report/1".into();
    v["tool_version"] = env!("CARGO_PKG_VERSION").into();
    if let Err(e) = conforms(&v, &report_schema(), "$") {
        panic!("{name}: {e}");
    }
    insta::assert_snapshot!(format!("{name}__text"), report::text(r));
    insta::assert_snapshot!(
        format!("{name}__json"),
        serde_json::to_string_pretty(&report::json(r)).unwrap()
    );
}

fn fixtures() -> Vec<Fixture> {
    vec![
        Fixture::new(model::TernaryType::Pq2_0),
        Fixture::new(model::TernaryType::Ptq1_0),
    ]
}

#[test]
fn healthy_nano_artifacts_pass_every_gate_with_nothing_skipped() {
    for fx in fixtures() {
        let (e, o) = fx.dumps("healthy");
        let r = fx.run("", &fx.artifact, fx.full(&e, &o));
        assert!(r.ok(), "{}", report::text(&r));
        assert_eq!(r.count(Verdict::Pass), 10, "{}", report::text(&r));
        assert_eq!(r.count(Verdict::Skip), 0);
        snap(&format!("healthy_{}", fx.tag), &r);
    }
}

#[test]
fn without_dumps_the_two_dump_gates_skip_naming_what_opens_them() {
    for fx in fixtures() {
        let r = fx.run(
            "",
            &fx.artifact,
            Options {
                template: Some(&fx.template),
                sweep: true,
                ..Default::default()
            },
        );
        assert!(r.ok());
        let skipped: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.status == Verdict::Skip)
            .collect();
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].step == "embedding" && skipped[0].detail.contains("--dump"));
        assert!(skipped[1].step == "engine_oracles" && skipped[1].detail.contains("--oracle-dump"));
        snap(&format!("nodumps_{}", fx.tag), &r);
        // Nothing but the GGUF: provenance, sweep and the dump gates skip; nothing fails.
        let r = fx.run("", &fx.artifact, Options::default());
        assert!(r.ok());
        assert_eq!(r.count(Verdict::Skip), 4);
    }
}

/// The mutation table comes from spec/gates.json: each kind must fail exactly its gates.
#[test]
fn every_mutation_fails_exactly_the_gates_the_spec_names() {
    let mut wrong = Vec::new();
    for fx in fixtures() {
        let a = Artifact::parse(&fx.artifact).unwrap();
        for m in &gates().mutations {
            let (bytes, dump_name) = if m.target == "artifact" {
                let b = mutate::mutate_bytes(&fx.artifact, m.kind.as_str()).unwrap();
                Artifact::parse(&b).expect("a mutated artifact is a valid container");
                (b, "healthy".to_string())
            } else {
                mutate::mutate_dumps(&a, m.kind.as_str(), &fx.dir.path().join(m.kind.as_str()), 0)
                    .unwrap();
                (fx.artifact.clone(), m.kind.to_string())
            };
            let (e, o) = fx.dumps(&dump_name);
            let suffix = if m.target == "artifact" {
                format!(".{}", m.kind)
            } else {
                String::new()
            };
            let r = fx.run(&suffix, &bytes, fx.full(&e, &o));
            let mut got = r.failed_steps();
            let mut want: Vec<String> = m.must_fail.iter().map(|s| s.to_string()).collect();
            got.sort();
            want.sort();
            if got != want {
                wrong.push(format!(
                    "{} {}: failed {got:?}, spec says {want:?}\n{}",
                    fx.tag,
                    m.kind,
                    report::text(&r)
                ));
            }
            assert_eq!(r.count(Verdict::Skip), 0, "{} {}", fx.tag, m.kind);
            snap(&format!("mutation_{}_{}", fx.tag, m.kind), &r);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_gguf_of_the_other_format_is_refused_before_any_gate() {
    let p = profile("bonsai-nano").unwrap();
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let other = model::model_bytes(&p, model::TernaryType::Ptq1_0, 0).unwrap();
    let e = verify::verify(
        "a.ninfer",
        &fx.artifact,
        "b.gguf",
        &other,
        Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("format mismatch") && e.contains("matched=0"),
        "{e}"
    );
}

#[test]
fn a_single_token_embedding_dump_fails_and_oracle_object_filters_cases() {
    let fx = Fixture::new(model::TernaryType::Ptq1_0);
    let a = Artifact::parse(&fx.artifact).unwrap();
    let d = fx.dir.path().join("t1");
    dumps::write_reference(&a, &d, Some(vec![5]), 0, Default::default()).unwrap();
    let (e, o) = fx.dumps("t1");
    let mut opts = fx.full(&e, &o);
    opts.oracle_object = Some("text/layers/0/gdn/output");
    let r = fx.run("", &fx.artifact, opts);
    assert_eq!(r.failed_steps(), vec!["embedding".to_string()]);
    let orc = r
        .findings
        .iter()
        .find(|f| f.step == "engine_oracles")
        .unwrap();
    assert_eq!(orc.numbers["cases"], 2, "{}", report::text(&r));
}

/// The assembly audits and row-order sections restate mapping.json rules; they must agree.
#[test]
fn audits_and_sections_agree_with_the_mapping_rules() {
    let m = crate::spec::mapping();
    let g = gates();
    let all = g
        .assembly
        .audits
        .iter()
        .chain(&g.row_order.gdn_sections)
        .chain(&g.row_order.attention_sections);
    for s in all {
        let rule = m
            .rules
            .iter()
            .find(|r| r.target == s.object)
            .unwrap_or_else(|| panic!("{}: no rule targets {}", s.name, s.object));
        let Produce::TernaryRows { parts } = &rule.produce else {
            panic!("{} is not a ternary rule", s.object)
        };
        let part = parts
            .iter()
            .find(|p| p.src == s.source && p.order == s.order)
            .unwrap_or_else(|| panic!("{}: no part {} {}", s.name, s.source, s.order));
        let start = part
            .rows
            .as_ref()
            .map_or(crate::spec::Dim::Num(0), |r| r[0].clone());
        assert_eq!(start, s.source_start, "{}", s.name);
    }
}

/// A reduced model (layers 0 and 3 of the profile's shape) packs, unpacks byte-identically and
/// verifies with every gate over exactly the layers it holds; mutants of it still fail.
#[test]
fn a_reduced_model_packs_unpacks_and_verifies() {
    let p = profile("bonsai-nano").unwrap();
    let ty = model::TernaryType::Pq2_0;
    let gguf = model::write_model_layers(&p, ty, 0, Some(&[3, 0]), Vec::new(), |_| {}).unwrap();
    let full = model::model_bytes(&p, ty, 0).unwrap();
    assert!(gguf.len() < full.len());
    let tpl = template::template_bytes(&p).unwrap();
    let art = pack_bytes(&gguf, &tpl, &PackOptions::default()).unwrap();
    let a = Artifact::parse(&art).unwrap();
    assert_eq!(verify::artifact_layers(&a), vec![0, 3]);
    let g = crate::gguf::parse(&gguf, crate::gguf::Mode::Strict).unwrap();
    let proof = crate::pack::unpack::prove(&g, &a).unwrap();
    assert!(!proof.is_empty() && proof.iter().all(|r| r.identical));
    // Every held layer's objects are the full model's objects byte for byte.
    let fa_bytes = pack_bytes(&full, &tpl, &PackOptions::default()).unwrap();
    let fa = Artifact::parse(&fa_bytes).unwrap();
    for o in &a.directory.objects {
        let fo = fa.object(&o.name).unwrap();
        assert!(a.object_bytes(o) == fa.object_bytes(fo), "{}", o.name);
    }
    let dir = tempfile::tempdir().unwrap();
    dumps::write_reference(&a, &dir.path().join("d"), None, 0, Default::default()).unwrap();
    let (e, o) = (dir.path().join("d/embedding"), dir.path().join("d/oracles"));
    let opts = Options {
        template: Some(&tpl),
        sweep: true,
        dump: Some(&e),
        oracle_dump: Some(&o),
        oracle_object: None,
        profile: Some("bonsai-nano"),
        dump_format: None,
        minimal: false,
    };
    let r = verify::verify("reduced", &art, "reduced.gguf", &gguf, opts).unwrap();
    assert!(r.ok(), "{}", report::text(&r));
    assert_eq!(r.count(Verdict::Pass), 10, "{}", report::text(&r));
    let sweep = r
        .findings
        .iter()
        .find(|f| f.step == "row_order_sweep")
        .unwrap();
    assert!(sweep.detail.starts_with("2/2 layers"), "{}", sweep.detail);
    for (kind, gate) in [
        ("dense-one-ulp", "dense_values"),
        ("swap-two-rows", "row_order"),
    ] {
        let m = mutate::mutate_bytes(&art, kind).unwrap();
        let r = verify::verify("m", &m, "reduced.gguf", &gguf, opts).unwrap();
        assert!(
            r.failed_steps().contains(&gate.to_string()),
            "{kind}: {}",
            report::text(&r)
        );
    }
    // The full GGUF against the reduced artifact: the missing layers fail inspect.
    let r = verify::verify("reduced", &art, "full.gguf", &full, opts).unwrap();
    assert!(r.failed_steps().contains(&"inspect".to_string()));
}

/// The engine's embedding dump file (bf16, token-major under [hidden, T] extents) is read
/// directly: a correct dump (T = 8) passes, the transposed one (k*T + t) fails as row-major,
/// and a truncated file is a usage error naming the expected size.
#[test]
fn engine_format_embedding_dumps_pass_and_the_transposed_one_fails() {
    let fx = Fixture::new(model::TernaryType::Ptq1_0);
    let a = Artifact::parse(&fx.artifact).unwrap();
    let good = fx.dir.path().join("embedding.T8.bin");
    let bad = fx.dir.path().join("transposed.T8.bin");
    dumps::write_engine_embedding(&a, &good, None, false).unwrap();
    dumps::write_engine_embedding(&a, &bad, None, true).unwrap();
    let run = |dump: &Path, format: Option<verify::DumpFormat>| {
        let opts = Options {
            template: Some(&fx.template),
            dump: Some(dump),
            dump_format: format,
            ..Default::default()
        };
        verify::verify("a", &fx.artifact, "g", &fx.gguf, opts)
    };
    for format in [None, Some(verify::DumpFormat::Engine)] {
        let r = run(&good, format).unwrap();
        let e = r.findings.iter().find(|f| f.step == "embedding").unwrap();
        assert_eq!(e.status, Verdict::Pass, "{}", report::text(&r));
        assert!(e.detail.contains("engine bf16 dump"), "{}", e.detail);
        let r = run(&bad, format).unwrap();
        let e = r.findings.iter().find(|f| f.step == "embedding").unwrap();
        assert_eq!(e.status, Verdict::Fail, "{}", report::text(&r));
        assert!(e.detail.contains("row-major"), "{}", e.detail);
    }
    // A native directory named as engine, and a truncated engine file, are refused clearly.
    let (native, _) = fx.dumps("healthy");
    let r = run(&native, Some(verify::DumpFormat::Engine)).unwrap();
    assert_eq!(r.failed_steps(), vec!["embedding".to_string()]);
    let cut = fx.dir.path().join("cut.bin");
    let b = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &b[..b.len() - 2]).unwrap();
    let r = run(&cut, None).unwrap();
    let e = r.findings.iter().find(|f| f.step == "embedding").unwrap();
    assert!(e.detail.contains("expected"), "{}", e.detail);
}

/// The engine tooling's harness directories (spec/dumps.json `harness`): the six rotation-harness
/// cases plus the gemm oracle, written by `dump-reference --format harness`, pass `engine_oracles`
/// (auto-detected and named); signs applied after the rotation fail it, and so does a gemm.y.f32
/// computed with signs after the rotation.
#[test]
fn engine_harness_directories_pass_and_signs_after_rotation_fails() {
    use verify::harness::{write_gemm, write_rotation, HarnessFault};
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let a = Artifact::parse(&fx.artifact).unwrap();
    let p = verify::profile_for_artifact(&a).unwrap();
    let layers = verify::artifact_layers(&a);
    let obj = verify::resolve_name(
        &p,
        &layers,
        &crate::spec::dumps().harness.gemm.gemm_object,
        None,
    )
    .unwrap();
    let write = |name: &str, fault: HarnessFault, gemm_fault: HarnessFault| {
        let d = fx.dir.path().join(name);
        write_rotation(&d, fault).unwrap();
        write_gemm(&a, &d, &obj, gemm_fault).unwrap();
        d
    };
    let good = write("h_good", HarnessFault::None, HarnessFault::None);
    let run = |dir: &Path, format: Option<verify::DumpFormat>| {
        let opts = Options {
            template: Some(&fx.template),
            oracle_dump: Some(dir),
            dump_format: format,
            ..Default::default()
        };
        verify::verify("a", &fx.artifact, "g", &fx.gguf, opts).unwrap()
    };
    for format in [None, Some(verify::DumpFormat::Harness)] {
        let r = run(&good, format);
        let e = r
            .findings
            .iter()
            .find(|f| f.step == "engine_oracles")
            .unwrap();
        assert_eq!(e.status, Verdict::Pass, "{}", report::text(&r));
        assert!(e.detail.starts_with("7/7 engine harness"), "{}", e.detail);
    }
    let rot_bad = write(
        "h_rot_bad",
        HarnessFault::SignsAfterRotation,
        HarnessFault::None,
    );
    let gemm_bad = write(
        "h_gemm_bad",
        HarnessFault::None,
        HarnessFault::SignsAfterRotation,
    );
    let transposed = write("h_transposed", HarnessFault::Transposed, HarnessFault::None);
    for (d, want) in [(&rot_bad, "1/7"), (&gemm_bad, "6/7"), (&transposed, "4/7")] {
        let r = run(d, None);
        let e = r
            .findings
            .iter()
            .find(|f| f.step == "engine_oracles")
            .unwrap();
        assert_eq!(e.status, Verdict::Fail, "{}", report::text(&r));
        assert!(e.detail.starts_with(want), "{}: {}", d.display(), e.detail);
    }
    // A native oracle directory read as harness has no harness files: a failure, not a panic.
    let (_, native) = fx.dumps("healthy");
    let r = run(&native, Some(verify::DumpFormat::Harness));
    assert_eq!(r.failed_steps(), vec!["engine_oracles".to_string()]);
}

/// A manifest's `tokens` of 2^62 + 2 made `4 * tokens` wrap to 8 bytes in release builds, so a
/// 2-token dump passed the length checks and the gate indexed past the ids (a panic). The sizes
/// are now checked: the gate fails naming the overflow, and the same files with the honest
/// count still parse (the negative control: the check is not a blanket refusal).
#[test]
fn a_token_count_that_wraps_the_length_check_is_refused_not_a_panic() {
    use std::collections::BTreeMap;
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let a = Artifact::parse(&fx.artifact).unwrap();
    let d = fx.dir.path().join("wrap");
    dumps::write_reference(&a, &d, Some(vec![5, 9]), 0, Default::default()).unwrap();
    let (e, o) = fx.dumps("wrap");
    let manifest = e.join("manifest.json");
    let honest = std::fs::read_to_string(&manifest).unwrap();
    assert!(honest.contains("\"tokens\": 2,"), "{honest}");
    let wrapped = honest.replace("\"tokens\": 2,", "\"tokens\": 4611686018427387906,");
    std::fs::write(&manifest, &wrapped).unwrap();
    let r = fx.run("", &fx.artifact, fx.full(&e, &o));
    let emb = r.findings.iter().find(|f| f.step == "embedding").unwrap();
    assert_eq!(emb.status, Verdict::Fail, "{}", report::text(&r));
    assert!(emb.detail.contains("overflow"), "{}", emb.detail);
    assert!(emb.detail.contains("dump.format"), "{}", emb.detail);

    // The parser itself, from memory (what the dumps_parse fuzz target drives).
    let files: BTreeMap<String, Vec<u8>> = std::fs::read_dir(&e)
        .unwrap()
        .map(|f| {
            let f = f.unwrap();
            (
                f.file_name().into_string().unwrap(),
                std::fs::read(f.path()).unwrap(),
            )
        })
        .collect();
    let k = Artifact::parse(&fx.artifact)
        .unwrap()
        .directory
        .find("text/token_embedding")
        .unwrap()
        .shape()[1] as usize;
    let err = dumps::parse_embedding(&files, "text/token_embedding", k).unwrap_err();
    assert_eq!(err.class(), crate::ErrorClass::DumpFormat, "{err}");
    let mut good = files.clone();
    good.insert("manifest.json".into(), honest.into_bytes());
    let parsed = dumps::parse_embedding(&good, "text/token_embedding", k).unwrap();
    assert_eq!(
        (parsed.tokens, parsed.ids.len(), parsed.h.len()),
        (2, 2, 2 * k)
    );

    // The oracle case arrays: a case whose k * tokens wraps is refused the same way.
    let om = dumps::parse_oracle_manifest(o.as_path()).unwrap();
    let mut case = om
        .cases
        .iter()
        .find(|c| c.x_file.is_some())
        .unwrap()
        .clone();
    assert!(dumps::parse_oracle_arrays(o.as_path(), &case).is_ok());
    case.tokens = usize::MAX / 2 + 2;
    let err = dumps::parse_oracle_arrays(o.as_path(), &case).unwrap_err();
    assert_eq!(err.class(), crate::ErrorClass::DumpFormat, "{err}");
}

/// Sets the BOOL value of `key` in a GGUF's metadata (the byte after the key and its type).
fn set_gguf_bool(gguf: &[u8], key: &str, value: bool) -> Vec<u8> {
    let at = gguf
        .windows(key.len())
        .position(|w| w == key.as_bytes())
        .expect("key present");
    let ty = at + key.len();
    assert_eq!(
        u32::from_le_bytes(gguf[ty..ty + 4].try_into().unwrap()),
        7,
        "BOOL"
    );
    let mut out = gguf.to_vec();
    out[ty + 4] = u8::from(value);
    out
}

/// `prism.hadamard.gdn_v_grouped = false` is ruled out by spec/hadamard.json. Such a file's
/// artifact (built here directly from the healthy artifact, whose bytes do not depend on the
/// flag, because `pack` refuses the file) must fail `signs` under the fullest verify
/// (`--template --sweep`, both dumps), naming the key; the healthy file is the negative
/// control and passes.
#[test]
fn an_artifact_from_a_source_with_ungrouped_v_heads_fails_signs() {
    let key = "prism.hadamard.gdn_v_grouped";
    for fx in fixtures() {
        let (e, o) = fx.dumps("healthy");
        let healthy = fx.run("", &fx.artifact, fx.full(&e, &o));
        assert!(healthy.ok(), "{}", report::text(&healthy));
        let ungrouped = set_gguf_bool(&fx.gguf, key, false);
        // Control on the edit itself: setting it back to true restores the healthy file.
        assert_eq!(set_gguf_bool(&ungrouped, key, true), fx.gguf);
        let r = verify::verify(
            "ungrouped.ninfer",
            &fx.artifact,
            "ungrouped.gguf",
            &ungrouped,
            fx.full(&e, &o),
        )
        .unwrap();
        assert_eq!(
            r.failed_steps(),
            vec!["signs".to_string()],
            "{}",
            report::text(&r)
        );
        let signs = r.findings.iter().find(|f| f.step == "signs").unwrap();
        assert!(signs.detail.contains(key), "{}", signs.detail);
        assert!(signs.detail.contains("fixes true"), "{}", signs.detail);
    }
}

/// Every `prism.hadamard` key the spec fixes is checked, not only the grouping flag: each
/// single-key departure below is reported under its own key, and a conforming file reports none.
#[test]
fn each_hadamard_key_the_spec_fixes_is_checked() {
    use crate::gguf::{self, Mode};
    use crate::verify::hadamard_meta::problems;
    let p = profile("bonsai-nano").unwrap();
    let healthy = model::model_bytes(&p, model::TernaryType::Pq2_0, 0).unwrap();
    let g = gguf::parse(&healthy, Mode::Strict).unwrap();
    assert_eq!(problems(&g, &p), Vec::<String>::new());
    // Same-length string edits keep the file's framing intact.
    for (from, to, key) in [
        (
            "input-last-dimension",
            "input-next-dimension",
            "prism.hadamard.axis",
        ),
        ("explicit", "implicit", "prism.hadamard.sign_mode"),
        (
            "normalized-sylvester-walsh-hadamard",
            "normalized-sylvester-walsh-identity",
            "prism.hadamard.transform",
        ),
    ] {
        assert_eq!(from.len(), to.len());
        let at = healthy
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .unwrap();
        let mut bad = healthy.clone();
        bad[at..at + to.len()].copy_from_slice(to.as_bytes());
        let g = gguf::parse(&bad, Mode::Strict).unwrap();
        let found = problems(&g, &p);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with(key), "{found:?}");
    }
}

/// A spec row range that names a dimension the profile lacks is the table's fault
/// (`spec.invalid`), not the tensor's (`gguf.tensor_shape`, kept for a tensor too small).
#[test]
fn a_bad_spec_row_range_is_spec_invalid_and_a_short_tensor_is_tensor_shape() {
    use crate::spec::{Dim, RowPart};
    use crate::ErrorClass;
    let p = profile("bonsai-nano").unwrap();
    let part = |a: Dim, b: Dim| RowPart {
        src: "blk.0.attn_qkv.weight".into(),
        rows: Some([a, b]),
        order: crate::spec::RowOrder::Verbatim,
    };
    let unknown = part(Dim::Num(0), Dim::Name("no_such_dimension".into()));
    let e = crate::pack::rows::part_rows(&p, &unknown, 100).unwrap_err();
    assert_eq!(e.class(), ErrorClass::SpecInvalid, "{e}");
    let backwards = part(Dim::Num(5), Dim::Num(2));
    let e = crate::pack::rows::part_rows(&p, &backwards, 100).unwrap_err();
    assert_eq!(e.class(), ErrorClass::SpecInvalid, "{e}");
    let e = crate::pack::rows::part_rows(&p, &part(Dim::Num(0), Dim::Num(8)), 4).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorShape, "{e}");
    assert_eq!(
        crate::pack::rows::part_rows(&p, &part(Dim::Num(0), Dim::Num(4)), 4).unwrap(),
        vec![0, 1, 2, 3]
    );
}

/// The row fingerprint sees every single-bit change at every position of inputs that end in
/// each lane and in a partial word, distinguishes a zero-padded input from a shorter one, and
/// sees two words of different lanes swapped.
#[test]
fn fp64_sees_every_bit_flip_padding_and_word_swaps() {
    use verify::rows::fp64;
    let base: Vec<u8> = (0..80u32).map(|i| (i * 37 + 11) as u8).collect();
    for len in 0..=80 {
        let b = &base[..len];
        let h = fp64(b);
        for at in 0..len {
            for bit in [0, 7] {
                let mut c = b.to_vec();
                c[at] ^= 1 << bit;
                assert_ne!(fp64(&c), h, "len {len} byte {at} bit {bit}");
            }
        }
        let mut padded = b.to_vec();
        padded.push(0);
        assert_ne!(fp64(&padded), h, "len {len} vs zero-padded");
    }
    for (i, j) in [(0, 1), (0, 4), (1, 2), (3, 8), (8, 9)] {
        let mut c = base.clone();
        for k in 0..8 {
            c.swap(8 * i + k, 8 * j + k);
        }
        assert_ne!(fp64(&c), fp64(&base), "words {i} and {j} swapped");
    }
}

/// `par_ranges` returns exactly the sequential result, for ranges below, at and above the
/// per-thread minimum and with a non-zero start.
#[test]
fn par_ranges_equals_the_sequential_map() {
    use verify::rows::par_ranges;
    for (lo, hi) in [
        (0, 0),
        (5, 6),
        (0, 511),
        (0, 1024),
        (3, 1027),
        (7, 5000),
        (0, 12345),
    ] {
        let f = |r: std::ops::Range<u64>| r.map(|i| i * i + 1).collect::<Vec<u64>>();
        assert_eq!(par_ranges(lo..hi, f), f(lo..hi), "{lo}..{hi}");
    }
}

/// The audit's multiset counts (sorted runs) equal a hash-map recount written here, on random
/// multisets with many duplicates, and the documented control shapes come out as documented.
#[test]
fn audit_counts_equal_an_independent_hash_map_recount() {
    use std::collections::HashMap;
    use verify::assembly::audit;
    fn recount(art: &[u64], sel: &[u64]) -> (u64, u64, u64) {
        let mut a: HashMap<u64, u64> = HashMap::new();
        let mut s: HashMap<u64, u64> = HashMap::new();
        art.iter().for_each(|x| *a.entry(*x).or_default() += 1);
        sel.iter().for_each(|x| *s.entry(*x).or_default() += 1);
        let (mut rep, mut miss, mut dup) = (0, 0, 0);
        for (k, &c) in &a {
            let n = s.get(k).copied().unwrap_or(0);
            if c > n {
                rep += c - n;
                if c > 1 {
                    dup += c;
                }
            }
        }
        for (k, &n) in &s {
            miss += n.saturating_sub(a.get(k).copied().unwrap_or(0));
        }
        (rep, miss, dup)
    }
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    for round in 0..200 {
        let (n, m, domain) = (next(60), next(60), 1 + next(25));
        let art: Vec<u64> = (0..n).map(|_| next(domain)).collect();
        let sel: Vec<u64> = (0..m).map(|_| next(domain)).collect();
        let c = audit(&art, &sel, &sel);
        assert_eq!(
            (c.repeated, c.missing, c.duplicate_rows),
            recount(&art, &sel),
            "round {round}"
        );
    }
    let e: Vec<u64> = (100..110).collect();
    let mut dd = e.clone();
    dd[1] = dd[0];
    let c = audit(&dd, &e, &e);
    assert_eq!(
        (c.order_mismatches, c.repeated, c.missing, c.duplicate_rows),
        (1, 1, 1, 2)
    );
    let rot: Vec<u64> = (0..10).map(|i| e[(i + 1) % 10]).collect();
    let c = audit(&rot, &e, &e);
    assert_eq!((c.order_mismatches, c.repeated, c.missing), (10, 0, 0));
    assert!(audit(&e, &e, &e).clean());
}

/// `ArtifactRows::fps` (every core, fixed-width reassembly) equals the row-at-a-time
/// fingerprint and the fingerprint of the packer-independent reassembly `ggml_rows`.
#[test]
fn artifact_row_fingerprints_equal_row_by_row() {
    use verify::rows::{fp64, ArtifactRows, Blocks};
    for ty in [model::TernaryType::Pq2_0, model::TernaryType::Ptq1_0] {
        let pk = packed_with_seed(ty, 3);
        let a = Artifact::parse(&pk.artifact).unwrap();
        for name in ["text/token_embedding", "text/layers/0/gdn/value_z"] {
            let v = a.row_split(name).unwrap();
            let blocks = Blocks::for_format(v.format).unwrap();
            let n = v.geom.n;
            let ggml = v.ggml_rows(0..n).unwrap();
            let mut rows = ArtifactRows::new(a.row_split(name).unwrap(), blocks).unwrap();
            let fps = rows.fps(0..n);
            let rb = ggml.len() / n as usize;
            for r in 0..n {
                assert_eq!(fps[r as usize], rows.fp(r), "{name} row {r}");
                let want = fp64(&ggml[r as usize * rb..(r as usize + 1) * rb]);
                assert_eq!(fps[r as usize], want, "{name} row {r}");
            }
        }
    }
}

/// Provenance compares borrowed objects byte for byte: one flipped byte in the last byte of a
/// borrowed object of the template fails it (the healthy template is the control).
#[test]
fn a_template_with_one_borrowed_byte_changed_fails_provenance() {
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    fn opts(t: &[u8]) -> Options<'_> {
        Options {
            template: Some(t),
            ..Default::default()
        }
    }
    let status = |r: &Report| {
        r.findings
            .iter()
            .find(|f| f.step == "provenance")
            .unwrap()
            .status
    };
    assert_eq!(
        status(&fx.run("", &fx.artifact, opts(&fx.template))),
        Verdict::Pass
    );
    let t = Artifact::parse(&fx.template).unwrap();
    let o = t
        .directory
        .objects
        .iter()
        .find(|o| crate::mapping::is_borrowed(&o.name) && o.bytes > 0)
        .expect("a borrowed object");
    let at = (t.payload_offset + o.offset + o.bytes - 1) as usize;
    let mut edited = fx.template.clone();
    edited[at] ^= 0x01;
    assert_eq!(
        status(&fx.run("", &fx.artifact, opts(&edited))),
        Verdict::Fail
    );
}

fn report_schema() -> serde_json::Value {
    super::fixtures::schema("verify-report")
}

/// The schema's gate list is spec/gates.json `steps`.
#[test]
fn the_report_schema_names_the_gates_of_the_spec() {
    let schema = report_schema();
    let steps: Vec<&str> = schema["properties"]["results"]["items"]["properties"]["step"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let spec: Vec<&str> = gates().steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(steps, spec);
}

#[test]
fn a_report_returns_its_runs_statistics_outside_the_json() {
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let (emb, orc) = fx.dumps("healthy");
    let r = fx.run("", &fx.artifact, fx.full(&emb, &orc));
    // One timing per gate, in spec order, each a real duration.
    let steps: Vec<&str> = gates().steps.iter().map(|s| s.step.as_str()).collect();
    let timed: Vec<&str> = (r.stats.gate_seconds.iter())
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(timed, steps);
    assert!(r
        .stats
        .gate_seconds
        .iter()
        .all(|(_, t)| t.is_finite() && *t >= 0.0));
    // The gates read at least the artifact's ternary payload once (row comparisons).
    assert!(r.stats.payload_bytes_read > 0, "{:?}", r.stats);
    // Statistics vary run to run, so the deterministic JSON report never shows them.
    let j = report::json(&r).to_string();
    assert!(
        !j.contains("gate_seconds") && !j.contains("payload_bytes_read"),
        "{j}"
    );
    // Negative control: an artifact that does not open runs no gate, so it reports no cost.
    let mut broken = fx.artifact.clone();
    let n = broken.len();
    broken.truncate(n / 2);
    let r = fx.run("-cut", &broken, Options::default());
    assert_eq!(r.count(Verdict::Fail), 1, "{}", report::summary(&r, false));
    assert_eq!(r.stats, verify::Stats::default());
}

#[test]
fn only_a_file_that_is_not_a_ninfer_is_an_input_error() {
    use crate::ErrorClass;
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let v1 = (crate::spec::get().container.refused_magics.iter())
        .find(|r| r.error_class == "ninfer.magic_v1")
        .expect("spec/container.json refuses the v1 magic");
    let mut v1_file: Vec<u8> = (0..v1.magic_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&v1.magic_hex[i..i + 2], 16).unwrap())
        .collect();
    v1_file.extend_from_slice(&fx.artifact[8..]);
    // Not a .ninfer at all: the verifier stops with the reader's class, no report.
    let not_ninfer = [
        (fx.gguf.clone(), ErrorClass::NinferMagic),
        (b"NINF".to_vec(), ErrorClass::NinferTruncated),
        (v1_file, ErrorClass::NinferMagicV1),
    ];
    for (bytes, class) in not_ninfer {
        let e =
            verify::verify("x.ninfer", &bytes, "g.gguf", &fx.gguf, Options::default()).unwrap_err();
        assert_eq!(e.class(), class, "{e}");
        assert!(e.field().starts_with("x.ninfer"), "{e}");
    }
    // A .ninfer damaged after its magic (a truncated prefix, also `ninfer.truncated`, and a
    // directory that is not JSON) is an artifact the gates judge: a report whose inspect fails.
    let mut bad_json = fx.artifact.clone();
    bad_json[16] = b'!';
    for bytes in [fx.artifact[..12].to_vec(), bad_json] {
        let r = verify::verify("x.ninfer", &bytes, "g.gguf", &fx.gguf, Options::default()).unwrap();
        let inspect = r.findings.iter().find(|f| f.step == "inspect").unwrap();
        assert_eq!(inspect.status, Verdict::Fail, "{}", report::text(&r));
    }
}

/// A flipped byte of a `.ninfer` ternary object is located to object, plane and byte offset
/// (in the object and in the plane), for a byte of each plane; the expected offsets come from
/// the PTQ1_0 plane sizes of spec/geometry.md computed here (24, 2 and 2 bytes per group,
/// planes 256-aligned). Negative controls: the healthy artifact and two rows swapped (the row
/// is a source row, its bytes are not damaged) name no byte.
#[test]
fn a_flipped_byte_is_located_to_object_plane_and_offset() {
    let fx = Fixture::new(model::TernaryType::Ptq1_0);
    let a = Artifact::parse(&fx.artifact).unwrap();
    let name = "text/layers/0/gdn/query_key";
    let o = a.directory.find(name).expect("object");
    let start = (a.payload_offset + o.offset) as usize;
    let (n, k) = {
        let v = a.row_split(name).unwrap();
        (v.geom.n, v.geom.k)
    };
    let up = |x: u64| x.div_ceil(256) * 256;
    let groups = k.div_ceil(128);
    let high_at = up(n * groups * 24);
    let planes = [
        ("base", 0, groups * 24),
        ("high", high_at, groups * 2),
        ("scale", high_at + up(n * groups * 2), groups * 2),
    ];
    let messages = |bytes: &[u8]| {
        let opts = Options {
            sweep: true,
            ..Options::default()
        };
        serde_json::to_string(&report::json(&fx.run("-flip", bytes, opts))).unwrap()
    };
    for (plane, at, row_bytes) in planes {
        let in_plane = row_bytes + 1; // row 1, byte 1 of the plane's row
        let mut bad = fx.artifact.clone();
        bad[start + (at + in_plane) as usize] ^= 0x04;
        let m = messages(&bad);
        let want = format!(
            "first differing byte: plane {plane}, object byte {} (row 1, plane byte {in_plane})",
            at + in_plane
        );
        assert!(m.contains(&want), "{plane}: want '{want}' in {m}");
    }
    assert!(!messages(&fx.artifact).contains("first differing byte"));
    let mut swapped = fx.artifact.clone();
    for (_, at, w) in planes {
        let (r0, r1) = (
            (start as u64 + at) as usize,
            (start as u64 + at + w) as usize,
        );
        let row0 = swapped[r0..r0 + w as usize].to_vec();
        swapped.copy_within(r1..r1 + w as usize, r0);
        swapped[r1..r1 + w as usize].copy_from_slice(&row0);
    }
    let m = messages(&swapped);
    assert!(m.contains("row 0 holds source row"), "{m}");
    assert!(!m.contains("first differing byte"), "{m}");
}

/// `mutate --kind` takes only the spec's kinds; the library says the same as the argument
/// parser (the command-line half is the same-named test in tests/it/verify_gates.rs).
#[test]
fn mutate_kind_lists_its_values_and_suggests_the_near_one() {
    let e = mutate::spec("swap-tow-rows").unwrap_err();
    assert_eq!(e.class(), crate::ErrorClass::VerifyMutation);
    assert!(e.detail().contains("did you mean 'swap-two-rows'"), "{e}");
    // Far from every kind: no suggestion, the list only.
    let e = mutate::spec("zzz").unwrap_err();
    assert!(!e.detail().contains("did you mean"), "{e}");
    assert!(mutate::spec("swap-two-rows").is_ok());
}

/// A malformed engine dump is a `dump.format` error carrying its byte offset as data (the
/// `verify --dump` half is the same-named test in tests/it/verify_gates.rs).
#[test]
fn a_malformed_engine_dump_is_a_dump_format_error_with_its_offset() {
    let bytes = [8u8, 0, 0, 0, 64];
    let e = crate::verify::engine_dump::parse(&bytes).unwrap_err();
    assert_eq!(e.class(), crate::ErrorClass::DumpFormat, "{e}");
    assert_eq!(e.offset(), Some(4), "{e}");
}
