//! `check-reader` as a reader author meets it (issue #27): a failure that locates the bug
//! (tensor, first differing row and element with both values, spec anchor, "looks like"), the
//! feature vocabulary, capabilities validation, the adapter pre-flight, corpus discovery, the
//! filter, the persistent-mode hint and `--json`.
//!
//! The wrong reader is `conformance/adapters/stubs/pq2_reversed.py` (Python standard library):
//! PQ2_0 codes read in reversed 2-bit order, or with `--bug unknown` a bug no known decoder
//! reproduces. The reference adapter is the correct-reader control.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ninfer-ternary");
const STUB: &str = "conformance/adapters/stubs/pq2_reversed.py";
const CODEC_CASE: &str = "codec/y_pq2_0_random";
const GGUF_CASE: &str = "gguf/y_type_pq2_0";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("check-reader-{name}-"))
        .tempdir()
        .expect("scratch dir")
}

fn write_caps(dir: &Path, v: Value) -> PathBuf {
    let p = dir.join("capabilities.json");
    std::fs::write(&p, v.to_string()).expect("write caps");
    p
}

fn check_reader(args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(root())
        .env("NINFER_BIN", BIN)
        .arg("check-reader")
        .args(["--jobs", "1", "--timeout", "20"])
        .args(args)
        .output()
        .expect("run check-reader")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `check-reader --json -` on the two PQ2_0 cases: case id -> (status, detail).
fn details(adapter: &str, caps: Option<&Path>) -> Vec<(String, String, String)> {
    let mut args = vec![
        "--adapter",
        adapter,
        "--filter",
        CODEC_CASE,
        "--filter",
        GGUF_CASE,
        "--json",
        "-",
    ];
    let c;
    if let Some(p) = caps {
        c = p.display().to_string();
        args.extend(["--capabilities", c.as_str()]);
    }
    let out = check_reader(&args);
    let (stdout, stderr) = text(&out);
    let v: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(v["schema"], "ninfer-ternary/check-reader-report/1");
    v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn detail_of<'a>(rows: &'a [(String, String, String)], id: &str) -> &'a str {
    let r = rows.iter().find(|r| r.0 == id).expect("case in report");
    &r.2
}

#[test]
fn a_reversed_2bit_reader_gets_tensor_row_element_values_anchor_and_looks_like() {
    let dir = scratch("reversed");
    let caps = write_caps(
        dir.path(),
        serde_json::json!({"reader": "t", "localize": true}),
    );
    let rows = details(STUB, Some(&caps));
    assert!(rows.iter().all(|r| r.1 == "fail"), "{rows:?}");
    let g = detail_of(&rows, GGUF_CASE);
    // The tensor by name (not tensors[0] alone), row, element, both values with their bits.
    assert!(g.contains("(tensor \"w\").values_sha256"), "{g}");
    assert!(g.contains("tensor 'w' (type 142, ne [256, 3])"), "{g}");
    assert!(g.contains("first differing row 0, element 1:"), "{g}");
    assert!(g.contains("reader -0.9975586 (0xbf7f6000)"), "{g}");
    assert!(g.contains("expected 0.0 (0x00000000)"), "{g}");
    assert!(
        g.contains("spec: spec/ggml-types.md#ggml-type-ids, spec/codecs.md#pq2-0"),
        "{g}"
    );
    assert!(g.contains("looks like: reversed 2-bit order"), "{g}");
    let c = detail_of(&rows, CODEC_CASE);
    assert!(c.contains("vector (pq2_0, 4 rows x 1024): first differing row 0, element 0: reader 0.54003906 (0x3f0a4000), expected 0.0 (0x00000000)"), "{c}");
    assert!(c.contains("spec: spec/codecs.md#pq2-0"), "{c}");
    assert!(c.contains("looks like: reversed 2-bit order"), "{c}");
}

#[test]
fn the_json_report_carries_the_localization_as_fields_and_conforms_to_its_schema() {
    let dir = scratch("reversed-json");
    let caps = write_caps(
        dir.path(),
        serde_json::json!({"reader": "t", "localize": true}),
    );
    let c = caps.display().to_string();
    let out = check_reader(&[
        "--adapter",
        STUB,
        "--filter",
        GGUF_CASE,
        "--capabilities",
        &c,
        "--json",
        "-",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    crate::common::conforms(&v, &crate::common::schema("check-reader-report"), "$")
        .unwrap_or_else(|e| panic!("{e}"));
    let l = &v["results"][0]["localization"];
    assert_eq!(l["tensor"], "w", "{l}");
    assert_eq!(
        (l["row"].as_u64(), l["element"].as_u64()),
        (Some(0), Some(1)),
        "{l}"
    );
    assert_eq!(l["reader_bits"], "0xbf7f6000", "{l}");
    assert_eq!(l["expected_bits"], "0x00000000", "{l}");
    assert_eq!(l["expected"].as_f64(), Some(0.0), "{l}");
    assert!(
        l["looks_like"]
            .as_str()
            .unwrap()
            .starts_with("reversed 2-bit order"),
        "{l}"
    );
    assert!(
        l["spec"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "spec/codecs.md#pq2-0"),
        "{l}"
    );
    // Negative control: the schema refuses a localization without its target.
    let mut broken = v.clone();
    broken["results"][0]["localization"]
        .as_object_mut()
        .unwrap()
        .remove("target");
    assert!(
        crate::common::conforms(&broken, &crate::common::schema("check-reader-report"), "$")
            .is_err()
    );
    // A correct reader's results carry no localization.
    let adapter = format!("{BIN} reader-adapter");
    let out = check_reader(&["--adapter", &adapter, "--filter", GGUF_CASE, "--json", "-"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(v["results"][0].get("localization").is_none(), "{v}");
}

#[test]
fn without_the_localize_opt_in_the_values_come_from_the_matching_known_bug() {
    let rows = details(STUB, None);
    let g = detail_of(&rows, GGUF_CASE);
    assert!(
        g.contains("first differing row 0, element 1: reader -0.9975586"),
        "{g}"
    );
    assert!(g.contains("looks like: reversed 2-bit order"), "{g}");
}

#[test]
fn a_correct_reader_gets_no_localized_failure() {
    let adapter = format!("{BIN} reader-adapter");
    let rows = details(&adapter, None);
    assert_eq!(rows.len(), 2);
    for (id, status, detail) in &rows {
        assert_eq!(status, "pass", "{id}: {detail}");
        assert!(!detail.contains("looks like"), "{detail}");
        assert!(!detail.contains("first differing"), "{detail}");
    }
}

#[test]
fn an_unknown_bug_is_located_but_looks_like_nothing_known() {
    let dir = scratch("unknown");
    let caps = write_caps(
        dir.path(),
        serde_json::json!({"reader": "t", "localize": true}),
    );
    let adapter = format!("{STUB} --bug unknown");
    let rows = details(&adapter, Some(&caps));
    let g = detail_of(&rows, GGUF_CASE);
    assert!(g.contains("first differing row 0, element 7:"), "{g}");
    assert!(g.contains("spec/codecs.md#pq2-0"), "{g}");
    assert!(!g.contains("looks like"), "{g}");
    // Without the opt-in: the row from the reader's row digests, and how to get more.
    let rows = details(&adapter, None);
    let c = detail_of(&rows, CODEC_CASE);
    assert!(
        c.contains("first differing row 0 (declare \"localize\": true"),
        "{c}"
    );
    assert!(!c.contains("looks like"), "{c}");
}

#[test]
fn list_features_prints_one_canonical_name_per_encoding_with_aliases_and_cases() {
    let out = check_reader(&["--list-features"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("encoding:ptq1_0 "))
        .expect("encoding:ptq1_0 listed");
    assert!(
        line.contains("codec:ptq1_0,ggml_type:143,format:PTQ1_0_G128"),
        "{line}"
    );
    // Aliases are not listed as names of their own.
    assert!(
        !stdout.lines().any(|l| l.starts_with("codec:ptq1_0 ")),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("kind:gguf ")),
        "{stdout}"
    );
}

#[test]
fn one_encoding_name_skips_every_case_of_the_encoding_with_the_reason() {
    let dir = scratch("encoding");
    for name in ["encoding:ptq1_0", "ggml_type:143"] {
        let caps = write_caps(
            dir.path(),
            serde_json::json!({"unsupported": [{"feature": name, "why": "no PTQ1_0 yet"}]}),
        );
        let c = caps.display().to_string();
        let adapter = format!("{BIN} reader-adapter");
        let out = check_reader(&[
            "--adapter",
            &adapter,
            "--capabilities",
            &c,
            "--filter",
            "codec/y_ptq1_0_random",
            "--filter",
            "gguf/y_type_ptq1_0",
        ]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(
            stdout.contains("SKIP  codec/y_ptq1_0_random  -- declared unsupported: codec:ptq1_0"),
            "{stdout}"
        );
        assert!(
            stdout.contains("SKIP  gguf/y_type_ptq1_0  -- declared unsupported: ggml_type:143"),
            "{stdout}"
        );
        assert!(stdout.contains(": no PTQ1_0 yet"), "{stdout}");
        assert!(stdout.contains("0 passed, 0 failed, 2 skipped"), "{stdout}");
    }
}

#[test]
fn unknown_capability_keys_and_features_are_refused_with_a_did_you_mean() {
    let dir = scratch("caps");
    let adapter = format!("{BIN} reader-adapter");
    let run = |v: Value| {
        let c = write_caps(dir.path(), v).display().to_string();
        let out = check_reader(&[
            "--adapter",
            &adapter,
            "--capabilities",
            &c,
            "--filter",
            CODEC_CASE,
        ]);
        let (o, e) = text(&out);
        (out.status.code(), o, e)
    };
    let (code, _, err) = run(serde_json::json!({"unsuported": ["kind:ninfer"]}));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("[reader.capabilities]"), "{err}");
    assert!(err.contains("did you mean 'unsupported'?"), "{err}");
    let (code, _, err) = run(serde_json::json!({"unsupported": ["codec:ptq1"]}));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("[reader.capabilities]") && err.contains("'codec:ptq1' matches no feature"),
        "{err}"
    );
    assert!(err.contains("did you mean 'codec:ptq1_0'?"), "{err}");
    let (code, _, err) = run(serde_json::json!({"unsupported": ["ggml_type:9*"]}));
    assert_eq!(code, Some(2), "{err}");
    // Control: the same keys spelled right, and a glob that matches, run.
    let (code, out, err) =
        run(serde_json::json!({"unsupported": ["kind:ninfer", "ggml_type:14*"]}));
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn help_documents_every_capabilities_key() {
    let out = Command::new(BIN)
        .args(["check-reader", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&out.stdout);
    for k in ninfer_ternary::corpus::runner::CAPABILITY_KEYS {
        assert!(
            help.contains(&format!("`{k}`")),
            "{k} missing from --help:\n{help}"
        );
    }
}

#[test]
fn filter_takes_character_classes_and_repeats_as_a_union() {
    let adapter = format!("{BIN} reader-adapter");
    let out = check_reader(&[
        "--adapter",
        &adapter,
        "--filter",
        "codec/y_pq2_0_r[a-c]ndom",
        "--filter",
        "codec/y_f[!1]?_random",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("PASS  codec/y_pq2_0_random"), "{stdout}");
    assert!(stdout.contains("PASS  codec/y_f32_random"), "{stdout}");
    assert!(!stdout.contains("codec/y_f16_random"), "{stdout}");
    assert!(stdout.contains("2 passed, 0 failed, 0 skipped"), "{stdout}");
    // A class that matches nothing is refused, like any empty filter.
    let out = check_reader(&["--adapter", &adapter, "--filter", "codec/y_pq2_0_r[!a]ndom"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("[corpus.filter]"), "{stderr}");
}

#[test]
fn a_wrong_adapter_path_is_one_preflight_error_not_one_failure_per_case() {
    let out = check_reader(&["--adapter", "/no/such/adapter"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("[reader.adapter]"), "{stderr}");
    assert!(stderr.contains("command not found"), "{stderr}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    // Control: an adapter that runs but answers garbage is still judged case by case.
    let out = check_reader(&[
        "--adapter",
        "conformance/adapters/stubs/garbage.sh",
        "--filter",
        "codec/y_f32_random",
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains("FAIL  codec/y_f32_random  -- garbage answer"),
        "{stdout}"
    );
}

#[test]
fn the_corpus_is_found_from_outside_the_repository_root() {
    let dir = scratch("cwd");
    let adapter = format!("{BIN} reader-adapter");
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .args([
            "check-reader",
            "--adapter",
            &adapter,
            "--filter",
            CODEC_CASE,
        ])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("PASS  codec/y_pq2_0_random"), "{stdout}");
    // A --corpus without a manifest is refused with the corpus class.
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .args(["check-reader", "--adapter", &adapter, "--corpus", "."])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("[corpus.manifest] --corpus"), "{stderr}");
}

#[test]
fn a_slow_per_case_adapter_gets_the_persistent_hint_a_fast_one_does_not() {
    let dir = scratch("slow");
    let slow = dir.path().join("slow.sh");
    std::fs::write(
        &slow,
        format!("#!/bin/sh\nsleep 0.3\nexec {BIN} reader-adapter \"$@\"\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = slow.display().to_string();
    let out = check_reader(&[
        "--adapter",
        &s,
        "--filter",
        "codec/y_f*_random",
        "--filter",
        CODEC_CASE,
    ]);
    let (_, stderr) = text(&out);
    assert!(stderr.contains("hint: median"), "{stderr}");
    assert!(stderr.contains("PROTOCOL.md §4.6"), "{stderr}");
    let fast = format!("{BIN} reader-adapter");
    let out = check_reader(&[
        "--adapter",
        &fast,
        "--filter",
        "codec/y_f*_random",
        "--filter",
        CODEC_CASE,
    ]);
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("hint: median"), "{stderr}");
}

#[test]
fn exit_0_with_a_reject_is_named_a_protocol_error() {
    let dir = scratch("exit0");
    let a = dir.path().join("a.sh");
    std::fs::write(&a, "#!/bin/sh\ncat >/dev/null\necho '{\"result\":\"reject\",\"class\":null,\"message\":\"m\"}'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = a.display().to_string();
    let out = check_reader(&["--adapter", &s, "--filter", "codec/y_f32_random"]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("protocol error: exit 0 with a reject answer"),
        "{stdout}"
    );
    assert!(!stdout.contains("crash"), "{stdout}");
}

#[test]
fn json_refuses_to_overwrite_without_force() {
    let dir = scratch("json");
    let p = dir.path().join("r.json");
    std::fs::write(&p, "keep").unwrap();
    let adapter = format!("{BIN} reader-adapter");
    let ps = p.display().to_string();
    let out = check_reader(&["--adapter", &adapter, "--filter", CODEC_CASE, "--json", &ps]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep");
    let out = check_reader(&[
        "--adapter",
        &adapter,
        "--filter",
        CODEC_CASE,
        "--json",
        &ps,
        "--force",
    ]);
    assert!(out.status.success());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(v["schema"], "ninfer-ternary/check-reader-report/1");
    assert_eq!(v["summary"]["passed"], 1);
}

#[test]
fn the_c_example_with_the_sequential_order_bug_is_recognised() {
    let dir = scratch("c-wrong");
    let exe = dir.path().join("c_reader_wrong");
    let cc = Command::new("cc")
        .args(["-O2", "-std=c99", "-DWRONG_ORDER", "-o"])
        .arg(&exe)
        .arg(root().join("conformance/adapters/c_example/reader.c"))
        .status()
        .expect("cc");
    assert!(cc.success());
    let e = exe.display().to_string();
    let out = check_reader(&[
        "--adapter",
        &e,
        "--capabilities",
        "conformance/adapters/c_example/capabilities.json",
        "--filter",
        "codec/y_ptq1_0_random",
        "--filter",
        CODEC_CASE,
    ]);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("FAIL  codec/y_ptq1_0_random"), "{stdout}");
    assert!(
        stdout.contains("; trits sequential, qh 4: digit order;"),
        "{stdout}"
    );
    // Control: its PQ2_0 decoder is right, so that case passes with no localisation.
    assert!(stdout.contains("PASS  codec/y_pq2_0_random\n"), "{stdout}");
}
