//! Issue #31, the adapter side, at the library level: the persistent-adapter session and the
//! in-process reference of diff-fuzz cannot hang. The `check-reader` runs over hostile adapters
//! stay in `tests/it/hostile_run.rs` (they need the binary).

use crate::corpus::manifest::Manifest;
use crate::corpus::persistent::Session;
use crate::corpus::process::AdapterCommand;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One small case the reference accepts.
const CASE: &str = "codec/y_pq2_0_random";

fn root() -> PathBuf {
    super::fixtures::repo_root()
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ninfer-hostile-run-{name}-"))
        .tempdir()
        .unwrap()
}

/// A shell adapter script in `dir`: `body` runs with the case file as $1.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    format!("sh {}", p.display())
}

/// True when no process carries `marker` within 5 s (supervisors need a moment after a kill).
fn none_left(marker: &str) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        if super::fixtures::processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    for p in super::fixtures::processes_with(marker) {
        eprintln!("left behind: {p}");
    }
    false
}

#[test]
fn item2_a_persistent_adapter_that_never_reads_stdin_times_out_instead_of_hanging() {
    let d = scratch("never-reads");
    let marker = "31.2001";
    // Handshake, then never read a byte.
    let adapter = script(
        d.path(),
        "deaf.sh",
        &format!("echo '{{\"protocol\": 3, \"persistent\": true}}'\nexec sleep {marker}"),
    );
    let m = Manifest::load(&root().join("conformance/MANIFEST.json")).unwrap();
    let case = m.cases.iter().find(|c| c.id == CASE).unwrap();
    let opts = AdapterCommand {
        corpus: root().join("conformance"),
        adapter: adapter.clone(),
        timeout: Duration::from_secs(2),
        memory_mb: 0,
    };
    // A request larger than any pipe buffer (the same blocking write the corpus reaches after
    // ~64 KiB of small requests).
    let mut req = crate::corpus::protocol::request_json(case, &opts.corpus);
    req["padding"] = Value::String("x".repeat(4 << 20));
    let mut s = Session::start(&opts).unwrap();
    let t0 = Instant::now();
    let r = s.ask_request(case, req.clone(), &opts);
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    let why = r.unwrap_err();
    assert!(why.contains("did not read its request"), "{why}");
    drop(s);
    assert!(none_left(marker));
    // Control: an adapter that reads each request line (all 4 MiB of it) and answers it. (In
    // tests/it this was the binary's `reader-adapter --persistent`; a crate unit test has no
    // binary, so the control is a reading script: what it shows is the same, a request that is
    // read gets its answer through the same session code.)
    let reads = script(
        d.path(),
        "reads.sh",
        &format!(
            "echo '{{\"protocol\": 3, \"persistent\": true}}'\nexec sed -u 's|.*|{{\"id\": \"{CASE}\", \"result\": \"unsupported\", \"feature\": \"kind:codec\"}}|'"
        ),
    );
    let good = AdapterCommand {
        adapter: reads,
        timeout: Duration::from_secs(30),
        ..opts
    };
    let mut s = Session::start(&good).unwrap();
    assert!(s.ask_request(case, req, &good).is_ok());
    s.finish();
}

#[test]
fn item5_the_in_process_reference_of_diff_fuzz_has_a_deadline() {
    use crate::corpus::differential::{run_reference_within, ReferenceFault};
    // A large codec vector: decoding and hashing 16 Mi elements takes far longer than 1 ms.
    let cols = 4096u64;
    let rows = 4096u64;
    let bytes = vec![0x55u8; (rows * cols / 128 * 34) as usize];
    let params = serde_json::json!({"codec": "pq2_0", "rows": rows, "cols": cols});
    let t0 = Instant::now();
    let r = run_reference_within("codec", &params, &bytes, Duration::from_millis(1));
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(
        r.unwrap_err(),
        ReferenceFault::Timeout(Duration::from_millis(1))
    );
    // Control: with time to finish it answers.
    let r = run_reference_within("codec", &params, &bytes, Duration::from_secs(60));
    assert!(r.is_ok(), "{r:?}");
}
