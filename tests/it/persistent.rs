//! Reader protocol v3 persistent mode (conformance/PROTOCOL.md §4.6) and `check-reader`'s
//! refusal of a vacuous `--filter`.
//!
//! The faulty adapter (`conformance/adapters/stubs/persistent_faulty.py`, Python standard
//! library) wraps the reference's persistent mode and misbehaves on the cases `NINFER_FAULT`
//! names. Each fault must fail exactly its case, with the fault named, and every other case must
//! still pass (the runner restarts the adapter); the same stub without a fault passes everything
//! (the control that makes those failures attributable to the fault).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ninfer-ternary");
/// 39 cases, all accepted by the reference, run in manifest order (`--jobs 1`).
const SUBSET: &str = "codec/y_*";
const CRASH_CASE: &str = "codec/y_ptq1_0_random";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch folder removed when the returned guard drops (no leftovers in the temp dir).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ninfer-{name}-"))
        .tempdir()
        .expect("scratch dir")
}

/// Manifest ids starting with `prefix`, in manifest order (independent of the runner's glob).
fn ids_with_prefix(prefix: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("conformance/MANIFEST.json")).expect("manifest");
    let m: Value = serde_json::from_str(&text).expect("manifest json");
    m["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .filter(|id| id.starts_with(prefix))
        .collect()
}

/// A capabilities file: strict classes, all layers, `persistent` as given.
fn caps(dir: &std::path::Path, persistent: bool) -> PathBuf {
    let p = dir.join("capabilities.json");
    let v =
        serde_json::json!({"reader": "test", "error_classes": "strict", "persistent": persistent});
    std::fs::write(&p, v.to_string()).expect("write caps");
    p
}

/// `[flag, value]` unless `extra` already sets `flag`.
fn default_arg<'a>(extra: &[&str], flag: &'a str, value: &'a str) -> Vec<&'a str> {
    if extra.contains(&flag) {
        vec![]
    } else {
        vec![flag, value]
    }
}

struct Run {
    ok: bool,
    output: Output,
    /// id -> (status, detail)
    results: BTreeMap<String, (String, String)>,
}

/// `check-reader` on `SUBSET` with `--jobs 1 --timeout 5`, unless `extra` gives its own
/// `--filter` / `--timeout`.
fn check_reader(name: &str, adapter: &str, fault: &str, persistent: bool, extra: &[&str]) -> Run {
    let dir_guard = scratch(name);
    let dir = dir_guard.path();
    let json = dir.join("report.json");
    let output = Command::new(BIN)
        .current_dir(root())
        .env("NINFER_BIN", BIN)
        .env("NINFER_FAULT", fault)
        .args(["check-reader", "--adapter", adapter, "--jobs", "1"])
        .args(default_arg(extra, "--filter", SUBSET))
        .args(default_arg(extra, "--timeout", "5"))
        .arg("--capabilities")
        .arg(caps(&dir, persistent))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .expect("run check-reader");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{name}: no report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    }))
    .expect("report json");
    let results = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            (s("id"), (s("status"), s("detail")))
        })
        .collect();
    Run {
        ok: output.status.success(),
        output,
        results,
    }
}

fn faulty() -> String {
    format!(
        "python3 {}",
        root()
            .join("conformance/adapters/stubs/persistent_faulty.py")
            .display()
    )
}

/// Asserts that exactly `failing` failed (each detail containing `why`) and the rest passed.
fn assert_exactly(run: &Run, failing: &[String], why: &str) {
    let all = ids_with_prefix("codec/y_");
    assert_eq!(run.results.len(), all.len(), "every selected case ran");
    for id in &all {
        let (status, detail) = &run.results[id];
        if failing.contains(id) {
            assert_eq!(status, "fail", "{id} must fail");
            assert!(
                detail.contains(why),
                "{id}: detail {detail:?} lacks {why:?}"
            );
        } else {
            assert_eq!(status, "pass", "{id} must pass, got {status}: {detail}");
        }
    }
    assert_eq!(
        run.ok,
        failing.is_empty(),
        "exit status follows the failures"
    );
}

#[test]
fn control_the_faulty_stub_without_a_fault_passes_every_case() {
    let run = check_reader("control", &faulty(), "", true, &[]);
    assert_exactly(&run, &[], "");
    let err = String::from_utf8_lossy(&run.output.stderr);
    assert!(err.contains("persistent adapters"), "ran persistent: {err}");
}

#[test]
fn a_crash_fails_that_case_alone_and_the_adapter_is_restarted() {
    let run = check_reader(
        "crash",
        &faulty(),
        &format!("crash@{CRASH_CASE}"),
        true,
        &[],
    );
    assert_exactly(&run, &[CRASH_CASE.to_string()], "crash");
    let detail = &run.results[CRASH_CASE].1;
    assert!(
        detail.contains("signal 11"),
        "the signal is reported: {detail}"
    );
    // Cases after the crash pass only on a restarted adapter.
    let all = ids_with_prefix("codec/y_");
    let after = all.iter().position(|i| i == CRASH_CASE).expect("in subset") + 1;
    assert!(after < all.len(), "the crash case is not the last one");
}

#[test]
fn an_exit_mid_run_is_a_crash_of_that_case() {
    let run = check_reader("exit", &faulty(), &format!("exit@{CRASH_CASE}"), true, &[]);
    assert_exactly(&run, &[CRASH_CASE.to_string()], "exit 0");
}

#[test]
fn a_hang_is_a_timeout_of_that_case_only() {
    let run = check_reader(
        "hang",
        &faulty(),
        &format!("hang@{CRASH_CASE}"),
        true,
        &["--timeout", "2"],
    );
    assert_exactly(&run, &[CRASH_CASE.to_string()], "timeout after 2.0s");
}

#[test]
fn an_answer_with_another_id_is_a_protocol_error_of_that_case() {
    let run = check_reader(
        "wrong_id",
        &faulty(),
        &format!("wrong_id@{CRASH_CASE}"),
        true,
        &[],
    );
    assert_exactly(
        &run,
        &[CRASH_CASE.to_string()],
        "protocol error: answer for id",
    );
}

#[test]
fn a_garbage_line_is_a_protocol_error_of_that_case() {
    let run = check_reader(
        "garbage",
        &faulty(),
        &format!("garbage@{CRASH_CASE}"),
        true,
        &[],
    );
    assert_exactly(&run, &[CRASH_CASE.to_string()], "garbage answer line");
}

#[test]
fn wrong_answers_from_a_live_adapter_are_counted_exactly() {
    let run = check_reader(
        "wrong_answer",
        &faulty(),
        "wrong_answer@codec/y_*_random",
        true,
        &[],
    );
    let wrong: Vec<String> = ids_with_prefix("codec/y_")
        .into_iter()
        .filter(|id| id.ends_with("_random"))
        .collect();
    assert!(wrong.len() >= 5, "the fault hits several cases: {wrong:?}");
    assert_exactly(&run, &wrong, "rejected a case that must be accepted");
    let out = String::from_utf8_lossy(&run.output.stdout);
    let passed = ids_with_prefix("codec/y_").len() - wrong.len();
    assert!(
        out.contains(&format!(
            "{passed} passed, {} failed, 0 skipped",
            wrong.len()
        )),
        "summary counts: {out}"
    );
}

#[test]
fn a_per_case_adapter_declared_persistent_fails_the_handshake() {
    // A v2 adapter given "--persistent" waits for the end of stdin before it answers: no
    // handshake line. Each worker tries once, so this costs one timeout, not one per case.
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let run = check_reader("handshake", &stub.display().to_string(), "", true, &[]);
    assert!(!run.ok);
    for (id, (status, detail)) in &run.results {
        assert_eq!(status, "fail", "{id}");
        assert!(detail.contains("handshake"), "{id}: {detail}");
    }
}

#[test]
fn per_case_isolation_stays_the_default_for_adapters_that_do_not_declare_persistent() {
    // accept_all passes nothing here only because its observation is empty: the runner must
    // have used one process per case (no handshake failure).
    let stub = root().join("conformance/adapters/stubs/accept_all.sh");
    let run = check_reader("default", &stub.display().to_string(), "", false, &[]);
    for (id, (_, detail)) in &run.results {
        assert!(!detail.contains("handshake"), "{id}: {detail}");
    }
    let err = String::from_utf8_lossy(&run.output.stderr);
    assert!(err.contains("one process per case"), "{err}");
}

#[test]
fn persistent_and_per_case_results_are_equal_for_the_reference() {
    let adapter = format!("{BIN} reader-adapter");
    let subset = ["--filter", "gguf/*"];
    let a = check_reader("eq_persistent", &adapter, "", true, &subset);
    let b = check_reader(
        "eq_per_case",
        &adapter,
        "",
        true,
        &[&subset[..], &["--per-case"]].concat(),
    );
    assert!(String::from_utf8_lossy(&b.output.stderr).contains("one process per case"));
    assert!(a.results.len() > 100, "the whole gguf family ran");
    let status = |r: &Run| -> BTreeMap<String, String> {
        r.results
            .iter()
            .map(|(k, (s, _))| (k.clone(), s.clone()))
            .collect()
    };
    assert_eq!(status(&a), status(&b));
    assert!(a.ok && b.ok);
}

#[test]
fn a_filter_that_matches_no_case_fails_with_a_class() {
    let out = Command::new(BIN)
        .current_dir(root())
        .args([
            "check-reader",
            "--adapter",
            "/bin/false",
            "--filter",
            "no-such-family/*",
        ])
        .output()
        .expect("run check-reader");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("[corpus.filter] --filter"), "{err}");
    assert!(err.contains("matches none of the"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("RESULT: PASSED"));
}

#[test]
fn the_reference_persistent_loop_echoes_ids_and_refuses_non_requests() {
    use ninfer_ternary::corpus::protocol;
    let file = root().join("conformance/codec/y_f32_random.bin");
    let req = serde_json::json!({"protocol": 3, "id": "codec/y_f32_random", "kind": "codec",
        "file": file.display().to_string(), "params": {"codec": "f32", "rows": 0}, "inputs": {}});
    let input = format!("{req}\nnot json\n");
    let mut out = Vec::new();
    assert_eq!(protocol::serve_persistent(input.as_bytes(), &mut out), 0);
    let lines: Vec<Value> = String::from_utf8(out)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 3, "handshake + two answers");
    assert_eq!(lines[0]["persistent"], true);
    assert_eq!(lines[0]["protocol"], 3);
    assert_eq!(lines[1]["id"], "codec/y_f32_random");
    // params.cols is missing: a protocol-params reject, not a CLI usage error.
    assert_eq!(lines[1]["result"], "reject");
    assert_eq!(lines[1]["class"], "protocol.params");
    assert_eq!(lines[2]["result"], "reject");
    assert_eq!(lines[2]["class"], "protocol.params");
    assert!(lines[2]["message"]
        .as_str()
        .unwrap_or("")
        .contains("request line 2"));
}
