//! A `check-reader` verdict that cannot mislead (issue #35): known failures pinned to their
//! reason (a listed case failing for another reason is XFAIL-CHANGED and fails the run unless
//! `--accept-changed`; the summary always counts XFAIL, XFAIL-CHANGED and stale entries), and
//! leniency made visible (the summary counts the must-reject cases judged by an undeclared
//! rule layer; declaring GGUF layers never waives `.ninfer` rejections).
//!
//! Readers: the shell stub `accept_all.sh` (accepts everything with an empty observation), the
//! Python stub `pq2_reversed.py` (a real PQ2_0 value mismatch) and the reference adapter.

use ninfer_ternary::corpus::manifest::{Manifest, Outcome};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ninfer-ternary");
const ACCEPT_ALL: &str = "conformance/adapters/stubs/accept_all.sh";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("verdict-honesty-")
        .tempdir()
        .expect("scratch dir")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write fixture");
    p.display().to_string()
}

fn check_reader(args: &[&str]) -> (Option<i32>, String, String) {
    let o: Output = Command::new(BIN)
        .current_dir(root())
        .env("NINFER_BIN", BIN)
        .arg("check-reader")
        .args(["--jobs", "2", "--timeout", "20"])
        .args(args)
        .output()
        .expect("run check-reader");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn known_line(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("known failures: "))
        .unwrap_or_else(|| panic!("no known-failures summary line:\n{stdout}"))
}

#[test]
fn an_xfail_that_fails_for_its_listed_reason_passes_and_is_counted_even_with_quiet() {
    let d = scratch();
    let list = write(
        &d.path(),
        "k.txt",
        "gguf/n_key_empty  accepted  # the stub accepts all\n",
    );
    let (code, out, err) = check_reader(&[
        "--adapter",
        ACCEPT_ALL,
        "--filter",
        "gguf/n_key_empty",
        "--known-failures",
        &list,
        "--quiet",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        !out.contains("XFAIL gguf"),
        "--quiet hides XFAIL lines: {out}"
    );
    assert_eq!(
        known_line(&out),
        "known failures: 1 XFAIL (failed as listed), 0 XFAIL-CHANGED (failed for another reason), \
         0 stale (listed but passed)"
    );
}

#[test]
fn an_xfail_whose_reason_changed_fails_the_run_unless_accepted() {
    let d = scratch();
    // Negative control: the entry pins `timeout`, the reader now fails by accepting.
    let list = write(&d.path(), "k.txt", "gguf/n_key_empty  timeout\n");
    let json = d.path().join("r.json");
    let json_s = json.display().to_string();
    let args = [
        "--adapter",
        ACCEPT_ALL,
        "--filter",
        "gguf/n_key_empty",
        "--known-failures",
        &list,
        "--quiet",
        "--json",
        &json_s,
        "--force",
    ];
    let (code, out, err) = check_reader(&args);
    assert_eq!(code, Some(1), "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("XFAIL-CHANGED gguf/n_key_empty"))
        .unwrap_or_else(|| panic!("--quiet must still show XFAIL-CHANGED: {out}"));
    assert!(
        line.contains("listed as failing with `timeout`, now fails with `accepted`"),
        "{line}"
    );
    assert!(known_line(&out).contains("1 XFAIL-CHANGED"), "{out}");
    assert!(out.contains("RESULT: FAILED"), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["results"][0];
    assert_eq!(r["status"], "known-failure-changed");
    assert_eq!(r["reason"], "accepted");
    assert_eq!(r["known_reason"], "timeout");
    assert_eq!(v["summary"]["changed_known_failures"], 1);
    crate::common::conforms(&v, &crate::common::schema("check-reader-report"), "$").unwrap();
    // --accept-changed: still shown and counted, no longer fails the run.
    let with: Vec<&str> = args.iter().copied().chain(["--accept-changed"]).collect();
    let (code, out, err) = check_reader(&with);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("XFAIL-CHANGED gguf/n_key_empty"), "{out}");
    assert!(known_line(&out).contains("1 XFAIL-CHANGED"), "{out}");
    assert!(
        known_line(&out).contains("accepted by --accept-changed"),
        "{out}"
    );
}

#[test]
fn a_value_mismatch_is_pinned_to_its_field_and_another_field_is_a_change() {
    let d = scratch();
    let adapter = "python3 conformance/adapters/stubs/pq2_reversed.py";
    let case = "codec/y_pq2_0_random";
    let json = d.path().join("r.json").display().to_string();
    // First run, unlisted: the --verbose FAIL line names the reason key to pin.
    let (code, out, _) = check_reader(&[
        "--adapter",
        adapter,
        "--filter",
        case,
        "--json",
        &json,
        "--verbose",
    ]);
    assert_eq!(code, Some(1), "{out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reason = v["results"][0]["reason"].as_str().unwrap().to_string();
    // The codec observation digest of the decoded values (PROTOCOL.md §4.1).
    assert!(
        reason.starts_with("mismatch:") && reason.contains("sha256"),
        "{reason}"
    );
    assert!(out.contains(&format!("[reason: {reason}]")), "{out}");
    // Pinned to that reason: XFAIL. Pinned to the same field missing: XFAIL-CHANGED.
    let same = write(&d.path(), "same.txt", &format!("{case}  {reason}\n"));
    let (code, out, _) = check_reader(&[
        "--adapter",
        adapter,
        "--filter",
        case,
        "--known-failures",
        &same,
    ]);
    assert_eq!(code, Some(0), "{out}");
    let missing = reason.replacen("mismatch:", "missing:", 1);
    let other = write(&d.path(), "other.txt", &format!("{case}  {missing}\n"));
    let (code, out, _) = check_reader(&[
        "--adapter",
        adapter,
        "--filter",
        case,
        "--known-failures",
        &other,
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("XFAIL-CHANGED"), "{out}");
}

#[test]
fn stale_entries_and_entries_without_a_reason() {
    let d = scratch();
    let adapter = format!("{BIN} reader-adapter");
    let list = write(&d.path(), "k.txt", "codec/y_f32_random  accepted\n");
    let (code, out, _) = check_reader(&[
        "--adapter",
        &adapter,
        "--filter",
        "codec/y_f32_random",
        "--known-failures",
        &list,
        "--quiet",
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        known_line(&out).ends_with("1 stale (listed but passed)"),
        "{out}"
    );
    // An id alone pins nothing: refused before any case runs.
    let bare = write(&d.path(), "bare.txt", "codec/y_f32_random  # why\n");
    let (code, out, err) = check_reader(&["--adapter", &adapter, "--known-failures", &bare]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("[reader.capabilities]") && err.contains("records no reason"),
        "{err}"
    );
    assert!(err.contains("bare.txt:1"), "{err}");
}

/// The GGUF n_ cases per rule layer, counted from the manifest.
fn gguf_reject_cases_by_layer(m: &Manifest, layer: &str) -> usize {
    m.cases
        .iter()
        .filter(|c| c.kind == "gguf" && c.expect.outcome == Outcome::Reject)
        .filter(|c| c.rule_layer.as_deref() == Some(layer))
        .count()
}

#[test]
fn a_mainline_only_reader_sees_its_lenient_count_and_is_still_held_to_ninfer_rules() {
    let m = Manifest::load(&root().join("conformance/MANIFEST.json")).unwrap();
    let d = scratch();
    let caps = write(
        &d.path(),
        "caps.json",
        r#"{"reader":"mainline_only","rule_layers":["mainline"]}"#,
    );
    let all = write(
        &d.path(),
        "all.json",
        r#"{"reader":"all","rule_layers":["mainline","loader","recommended","spec"]}"#,
    );
    let filters = ["--filter", "gguf/n_*", "--filter", "ninfer/n_*"];
    let mut args = vec!["--adapter", ACCEPT_ALL, "--quiet", "--capabilities", &caps];
    args.extend(filters);
    let (code, out, err) = check_reader(&args);
    assert_eq!(code, Some(1), "{out}{err}");
    let (lo, re, sp) = (
        gguf_reject_cases_by_layer(&m, "loader"),
        gguf_reject_cases_by_layer(&m, "recommended"),
        gguf_reject_cases_by_layer(&m, "spec"),
    );
    let n = lo + re + sp;
    assert!(n > 20, "{n}");
    let want = format!(
        "lenient: {n} must-reject cases judged leniently, {n} of them accepted, by undeclared rule \
         layer: loader {lo} ({lo} accepted), recommended {re} ({re} accepted), spec {sp} ({sp} \
         accepted) (PROTOCOL.md §5.3)"
    );
    assert!(out.lines().any(|l| l == want), "want {want}\n{out}");
    // `.ninfer` rules are their own layer: every ninfer n_ case accepted is a failure.
    let ninfer_n = m
        .cases
        .iter()
        .filter(|c| c.id.starts_with("ninfer/n_"))
        .count();
    let ninfer_fails = out
        .lines()
        .filter(|l| l.starts_with("FAIL  ninfer/n_") && l.contains("(rule layer ninfer.spec)"))
        .count();
    assert!(ninfer_n > 30, "{ninfer_n}");
    assert_eq!(ninfer_fails, ninfer_n, "{out}");
    // Control: a reader declaring every GGUF layer is judged leniently on nothing.
    let mut args = vec!["--adapter", ACCEPT_ALL, "--quiet", "--capabilities", &all];
    args.extend(filters);
    let (_, out, _) = check_reader(&args);
    assert!(
        out.lines().any(|l| l.starts_with("lenient: 0 cases")),
        "{out}"
    );
}

/// Declaring a format unsupported skips the accepted cases that hold it (the 10 of issue #35
/// included), and nothing else changes for a case that does not hold it.
#[test]
fn declaring_a_format_unsupported_skips_every_case_that_holds_it() {
    let m = Manifest::load(&root().join("conformance/MANIFEST.json")).unwrap();
    let d = scratch();
    let caps = write(
        &d.path(),
        "caps.json",
        r#"{"reader":"no_nvfp4","unsupported":["format:NVFP4"]}"#,
    );
    let adapter = format!("{BIN} reader-adapter");
    let json = d.path().join("r.json").display().to_string();
    let (code, out, err) = check_reader(&[
        "--adapter",
        &adapter,
        "--capabilities",
        &caps,
        "--filter",
        "ninfer/y_*",
        "--filter",
        "pack/y_nano_*_artifact",
        "--quiet",
        "--json",
        &json,
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut holders = 0;
    for r in v["results"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        let c = m.cases.iter().find(|c| c.id == id).unwrap();
        // An accepted case's manifest tags are exactly its bytes' content tags (checked against
        // the committed bytes by the crate unit test `feature_tags_are_derived_from_the_bytes`).
        let holds = c.features.iter().any(|f| f == "format:NVFP4");
        let skipped = r["status"] == "skip";
        assert_eq!(skipped, holds, "{id}: {}", r["status"]);
        holders += usize::from(holds);
    }
    // Not vacuous: the two layout cases and the three all-layouts controls hold NVFP4.
    assert!(holders >= 5, "{holders}");
}

/// The bytes of a GGUF v3 header with no tensors and `kv_count` key/values, then `rest`.
fn gguf_v3(kv_count: u64, rest: &[u8]) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(kv_count.to_le_bytes());
    b.extend(rest);
    b
}

/// `gguf/n_string_invalid_utf8` has one fault: with its invalid key bytes repaired, the
/// reference accepts it (strict mode, the suite's own loader rules included). Negative control:
/// the old case (no `general.architecture`) repaired the same way is still refused, for the
/// architecture — a reader checking only that passed it without ever checking UTF-8.
#[test]
fn the_invalid_utf8_case_fails_for_utf8_alone() {
    use ninfer_ternary::gguf::{parse, Mode};
    use ninfer_ternary::ErrorClass;
    let bytes = std::fs::read(root().join("conformance/gguf/n_string_invalid_utf8.gguf")).unwrap();
    let repair = |b: &[u8]| -> Vec<u8> {
        let at = b
            .windows(2)
            .position(|w| w == [0xC3, 0x28])
            .expect("the invalid sequence");
        let mut r = b.to_vec();
        r[at..at + 2].copy_from_slice(b"ab");
        r
    };
    assert_eq!(
        parse(&bytes, Mode::Strict).unwrap_err().class(),
        ErrorClass::GgufStringUtf8
    );
    parse(&repair(&bytes), Mode::Strict).expect("repaired: accepted");
    let mut old_kv = 2u64.to_le_bytes().to_vec();
    old_kv.extend([0xC3, 0x28]);
    old_kv.extend(0u32.to_le_bytes());
    old_kv.push(0);
    let old = gguf_v3(1, &old_kv);
    assert_eq!(
        parse(&old, Mode::Strict).unwrap_err().class(),
        ErrorClass::GgufStringUtf8
    );
    assert_eq!(
        parse(&repair(&old), Mode::Strict).unwrap_err().class(),
        ErrorClass::GgufArchitectureMissing
    );
}

/// One screen: by default every result line is at most 160 characters and a located values
/// mismatch says where, got / want, the hint and the anchor; `--verbose` keeps the digests
/// and the reason key (the negative control: the same failures are longer there).
#[test]
fn default_result_lines_fit_one_screen_and_verbose_keeps_everything() {
    let adapter = "python3 conformance/adapters/stubs/pq2_reversed.py";
    let args = [
        "--adapter",
        adapter,
        "--capabilities",
        "conformance/adapters/stubs/pq2_reversed.capabilities.json",
        "--filter",
        "codec/y_pq2_0_random",
        "--filter",
        "gguf/y_type_pq2_0",
        "--quiet",
    ];
    let (code, out, _) = check_reader(&args);
    assert_eq!(code, Some(1), "{out}");
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 2, "{out}");
    for l in &fails {
        assert!(l.chars().count() <= 160, "{} chars: {l}", l.chars().count());
        assert!(
            l.contains(" row 0 el ") && l.contains("got ") && l.contains("want "),
            "{l}"
        );
        assert!(l.contains("; reversed 2-bit order: digit order;"), "{l}");
        // The rule the bug breaks, not only the codec's section (#35: rule-level anchors).
        assert!(l.contains("spec/codecs.md#rule-digit-order"), "{l}");
    }
    assert!(
        fails.iter().any(|l| l.contains("tensor 'w' row 0 el 1")),
        "{out}"
    );
    let verbose: Vec<&str> = args.iter().copied().chain(["--verbose"]).collect();
    let (_, vout, _) = check_reader(&verbose);
    let vfails: Vec<&str> = vout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(vfails.len(), 2, "{vout}");
    for l in &vfails {
        assert!(l.chars().count() > 160, "{l}");
        assert!(l.contains("[reason: mismatch:"), "{l}");
        let hex64 = l
            .split('"')
            .any(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(hex64, "{l}");
    }
}
