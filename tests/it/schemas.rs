//! Every JSON report the commands write matches its schema in `spec/schemas/` (the schema is
//! the contract a CI system parses against), and each schema rejects a report that breaks it
//! (negative controls). Verify's and check-reader's reports are checked in their own modules.

use crate::common::{cli, conforms, repo_root, schema};
use std::path::Path;

fn run_json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let o = cli().args(args).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code(), v)
}

fn nano(d: &Path) -> (String, String) {
    let g = d.join("n.gguf");
    let t = d.join("t.ninfer");
    let a = d.join("a.ninfer");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for args in [
        vec!["synth".to_string(), "-o".into(), s(&g)],
        vec!["synth-template".into(), "-o".into(), s(&t)],
        vec![
            "pack".into(),
            "--gguf".into(),
            s(&g),
            "--template".into(),
            s(&t),
            "-o".into(),
            s(&a),
        ],
    ] {
        assert!(cli().args(&args).status().unwrap().success(), "{args:?}");
    }
    (s(&g), s(&a))
}

#[test]
fn every_schema_is_one_the_checker_understands_and_names_itself() {
    for e in std::fs::read_dir(repo_root().join("spec/schemas"))
        .unwrap()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name
            .strip_suffix(".schema.json")
            .unwrap_or_else(|| panic!("{name}: not *.schema.json"));
        let s = schema(stem);
        assert_eq!(s["$id"], format!("ninfer-ternary/{stem}/1"), "{name}");
        assert_eq!(
            s["properties"]["schema"]["enum"][0],
            format!("ninfer-ternary/{stem}/1"),
            "{name}"
        );
        // The checker refuses keywords it does not implement, so a schema cannot silently
        // claim more than the tests check: an empty object passes only the keyword scan.
        conforms(&serde_json::json!(null), &serde_json::json!({}), "$").unwrap();
        for req in ["schema", "tool_version"] {
            assert!(
                s["required"].as_array().unwrap().iter().any(|r| r == req),
                "{name} requires {req}"
            );
        }
    }
}

#[test]
fn inspect_reports_match_their_schema_and_a_broken_one_does_not() {
    let d = tempfile::tempdir().unwrap();
    let (g, a) = nano(d.path());
    let s = schema("inspect-report");
    for f in [&g, &a] {
        let (code, v) = run_json(&["inspect", f, "--json", "-"]);
        assert_eq!(code, Some(0));
        conforms(&v, &s, "$").unwrap_or_else(|e| panic!("{f}: {e}"));
        let mut broken = v.clone();
        broken["container"] = "zip".into();
        assert!(conforms(&broken, &s, "$").is_err());
        let mut extra = v.clone();
        extra["surprise"] = 1.into();
        assert!(conforms(&extra, &s, "$").is_err());
    }
}

#[test]
fn a_command_that_stops_on_an_error_writes_the_error_report() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.gguf");
    std::fs::write(&bad, b"GGUX and more").unwrap();
    let s = schema("error-report");
    let (code, v) = run_json(&["inspect", bad.to_str().unwrap(), "--json", "-"]);
    assert_eq!(code, Some(2));
    conforms(&v, &s, "$").unwrap();
    assert_eq!(v["error"]["class"], "gguf.magic");
    assert_eq!(v["error"]["offset"], 0);
    assert_eq!(v["command"], "inspect");
    // To a file that did not exist: written; to one that existed: left alone.
    let fresh = d.path().join("fresh.json");
    let o = cli()
        .args([
            "inspect",
            bad.to_str().unwrap(),
            "--json",
            fresh.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fresh).unwrap()).unwrap();
    assert_eq!(v["error"]["class"], "gguf.magic");
    let kept = d.path().join("kept.json");
    std::fs::write(&kept, "mine").unwrap();
    let o = cli()
        .args([
            "inspect",
            bad.to_str().unwrap(),
            "--json",
            kept.to_str().unwrap(),
            "--force",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
    // Negative control: a report without its error class breaks the schema.
    let mut broken = v.clone();
    broken["error"].as_object_mut().unwrap().remove("class");
    assert!(conforms(&broken, &s, "$").is_err());
}

#[test]
fn check_kernel_reports_match_their_schema() {
    let s = schema("check-kernel-report");
    let src = repo_root().join("src/cuda/kernels/dequantize.cu");
    let runs: Vec<Vec<String>> = vec![
        [
            "check-kernel",
            "--builtin",
            "--tier",
            "host",
            "--only",
            "ref_dequantize_pq2_0",
            "--json",
            "-",
        ]
        .map(String::from)
        .to_vec(),
        vec![
            "check-kernel".into(),
            "--source".into(),
            src.to_string_lossy().into_owned(),
            "--class".into(),
            "dequantize".into(),
            "--format".into(),
            "pq2_0".into(),
            "--entry".into(),
            "ref_dequantize_pq2_0".into(),
            "--json".into(),
            "-".into(),
        ],
    ];
    for args in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, v) = run_json(&args);
        if v["status"] == "skipped" {
            eprintln!("SKIPPED: no host C++ compiler ({})", v["error"]);
            continue;
        }
        assert_eq!(code, Some(0), "{v}");
        conforms(&v, &s, "$").unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let mut broken = v.clone();
        broken["status"] = "fine".into();
        assert!(conforms(&broken, &s, "$").is_err());
    }
}
