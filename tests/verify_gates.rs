//! The verifier on the nano artifacts (both ternary formats): healthy runs pass every gate, every
//! mutation of spec/gates.json fails exactly the gates the spec names (the table is read from the
//! spec, not listed here), and every report is snapshotted (text and JSON).

use ninfer_ternary::ninfer::Artifact;
use ninfer_ternary::pack::{pack_bytes, PackOptions};
use ninfer_ternary::spec::{gates, profile, Produce};
use ninfer_ternary::synth::{model, template};
use ninfer_ternary::verify::{self, dumps, mutate, report, Options, Report, Status};
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
        let p = profile("bonsai-nano").unwrap();
        let gguf = model::model_bytes(&p, ty, 0).unwrap();
        let template = template::template_bytes(&p).unwrap();
        let artifact = pack_bytes(&gguf, &template, &PackOptions::default()).unwrap();
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
        }
    }
}

fn snap(name: &str, r: &Report) {
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
        assert_eq!(r.count(Status::Pass), 10, "{}", report::text(&r));
        assert_eq!(r.count(Status::Skip), 0);
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
            .filter(|f| f.status == Status::Skip)
            .collect();
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].step == "embedding" && skipped[0].detail.contains("--dump"));
        assert!(skipped[1].step == "engine_oracles" && skipped[1].detail.contains("--oracle-dump"));
        snap(&format!("nodumps_{}", fx.tag), &r);
        // Nothing but the GGUF: provenance, sweep and the dump gates skip; nothing fails.
        let r = fx.run("", &fx.artifact, Options::default());
        assert!(r.ok());
        assert_eq!(r.count(Status::Skip), 4);
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
                let b = mutate::mutate_bytes(&fx.artifact, &m.kind).unwrap();
                Artifact::parse(&b).expect("a mutated artifact is a valid container");
                (b, "healthy".to_string())
            } else {
                mutate::mutate_dumps(&a, &m.kind, &fx.dir.path().join(&m.kind), 0).unwrap();
                (fx.artifact.clone(), m.kind.clone())
            };
            let (e, o) = fx.dumps(&dump_name);
            let suffix = if m.target == "artifact" {
                format!(".{}", m.kind)
            } else {
                String::new()
            };
            let r = fx.run(&suffix, &bytes, fx.full(&e, &o));
            let mut got = r.failed_steps();
            let mut want = m.must_fail.clone();
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
            assert_eq!(r.count(Status::Skip), 0, "{} {}", fx.tag, m.kind);
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
    let m = ninfer_ternary::spec::mapping();
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
            .map_or(ninfer_ternary::spec::Dim::Num(0), |r| r[0].clone());
        assert_eq!(start, s.source_start, "{}", s.name);
    }
}

#[test]
fn cli_exit_codes_are_0_pass_1_fail_2_usage() {
    let fx = Fixture::new(model::TernaryType::Pq2_0);
    let d = fx.dir.path();
    let (art, src) = (d.join("a.ninfer"), d.join("a.gguf"));
    std::fs::write(&art, &fx.artifact).unwrap();
    std::fs::write(&src, &fx.gguf).unwrap();
    let bin = env!("CARGO_BIN_EXE_ninfer-ternary");
    let run =
        |args: &[&std::ffi::OsStr]| std::process::Command::new(bin).args(args).output().unwrap();
    let ok = run(&[
        "verify".as_ref(),
        art.as_os_str(),
        "--gguf".as_ref(),
        src.as_os_str(),
    ]);
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("RESULT: PASSED"));
    let bad = d.join("bad.ninfer");
    let m = run(&[
        "mutate".as_ref(),
        art.as_os_str(),
        "--kind".as_ref(),
        "rotate-rows".as_ref(),
        "-o".as_ref(),
        bad.as_os_str(),
    ]);
    assert_eq!(
        m.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&m.stderr)
    );
    let f = run(&[
        "verify".as_ref(),
        bad.as_os_str(),
        "--gguf".as_ref(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(f.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&f.stdout).unwrap();
    assert_eq!(j["ok"], false);
    let missing = run(&[
        "verify".as_ref(),
        d.join("nope").as_os_str(),
        "--gguf".as_ref(),
        src.as_os_str(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
}
