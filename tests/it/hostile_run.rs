//! Issue #31, the adapter side: readers and adapters under test cannot hang, outlive, starve or
//! subvert the harness (`src/contain`). Each test plays a hostile or buggy adapter, finishes
//! inside its deadline, names the right reason, and leaves no process behind (checked by the
//! marker each hostile process carries in its command line: a `sleep` of a unique length).
//! Each has a negative control: the reference adapter on the same cases passes. The
//! persistent session's and diff-fuzz reference's deadlines are crate unit tests
//! (`src/tests/hostile_run.rs`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ninfer-ternary");
/// One small case the reference accepts.
const CASE: &str = "codec/y_pq2_0_random";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ninfer-hostile-run-{name}-"))
        .tempdir()
        .unwrap()
}

/// Live processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<String> {
    crate::common::processes_with(marker)
}

/// True when no process carries `marker` within 5 s (supervisors need a moment after a kill).
fn none_left(marker: &str) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        if with_marker(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    for pid in with_marker(marker) {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        eprintln!(
            "left behind: {pid} {:?} {stat}",
            String::from_utf8_lossy(&cmd)
        );
    }
    false
}

/// A shell adapter script in `dir`: `body` runs with the case file as $1.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    format!("sh {}", p.display())
}

fn caps(dir: &Path, persistent: bool) -> PathBuf {
    let p = dir.join(format!("caps-{persistent}.json"));
    let v = serde_json::json!({"reader": "hostile", "persistent": persistent});
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

/// `check-reader` over `filter` with `extra` options; the JSON report's results by id.
fn check_reader(
    dir: &Path,
    adapter: &str,
    persistent: bool,
    filter: &str,
    extra: &[&str],
) -> (Output, Vec<(String, String, String)>) {
    let json = dir.join(format!("r-{}.json", rand_tag()));
    let out = Command::new(BIN)
        .current_dir(root())
        .env("NINFER_BIN", BIN)
        .args(["check-reader", "--adapter", adapter, "--filter", filter])
        .arg("--capabilities")
        .arg(caps(dir, persistent))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|r| {
            r["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    let s = |k: &str| x[k].as_str().unwrap_or("").to_string();
                    (s("id"), s("status"), s("detail"))
                })
                .collect()
        })
        .unwrap_or_default();
    (out, results)
}

fn rand_tag() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The reference adapter, as a shell line (the negative control of every test).
fn reference(dir: &Path) -> String {
    script(dir, "ref.sh", &format!("exec {BIN} reader-adapter \"$1\""))
}

#[test]
fn item1_a_detached_grandchild_holding_stdout_fails_its_case_fast_and_is_killed() {
    let d = scratch("detached");
    let marker = "31.1001";
    // Answers correctly, but leaves `setsid sleep` holding its stdout.
    let adapter = script(
        d.path(),
        "detached.sh",
        &format!("setsid sleep {marker} &\nexec {BIN} reader-adapter \"$1\""),
    );
    let t0 = Instant::now();
    let (out, res) = check_reader(d.path(), &adapter, false, CASE, &["--timeout", "2"]);
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "took {took:?} (was 30-41 s)"
    );
    assert_eq!(res.len(), 1, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(res[0].1, "fail");
    assert!(res[0].2.contains("left 1 process"), "{:?}", res[0].2);
    assert!(none_left(marker));
    // `sleep infinity` in the same place: the same, not forever.
    let adapter = script(
        d.path(),
        "forever.sh",
        &format!("setsid sleep 9{marker}9 &\nexec {BIN} reader-adapter \"$1\""),
    );
    let t0 = Instant::now();
    let (_, res) = check_reader(d.path(), &adapter, false, CASE, &["--timeout", "2"]);
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(res[0].1, "fail");
    assert!(none_left(&format!("9{marker}9")));
    // Control: the reference passes the case and leaves nothing.
    let (out, res) = check_reader(d.path(), &reference(d.path()), false, CASE, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(res[0].1, "pass");
}

#[test]
fn item1_in_persistent_mode_a_grandchild_does_not_outlive_the_run() {
    let d = scratch("persistent-grandchild");
    let marker = "31.1002";
    let adapter = script(
        d.path(),
        "p.sh",
        &format!(
            "setsid sleep {marker} >/dev/null 2>&1 </dev/null &\nexec {BIN} reader-adapter \"$1\""
        ),
    );
    let (out, res) = check_reader(
        d.path(),
        &adapter,
        true,
        "codec/y_pq2_0_*",
        &["--timeout", "5"],
    );
    assert!(!res.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // The answers are right; what matters is that the detached sleep is gone after the run.
    assert!(none_left(marker), "the grandchild outlived the run");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("left 1 process"),
        "the run says so: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Kills the child when the test fails before it could (no stray check-reader after a panic).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `check-reader --jobs 2` over slow adapters, waits until an adapter runs (the
/// pre-flight case, then two jobs), sends `sig` to check-reader, and checks that no adapter
/// survives it.
fn stop_with(sig: i32, marker: &str) {
    let d = scratch(&format!("signal-{sig}"));
    // Fast for the pre-flight case, then slow: two jobs are sleeping when the signal comes.
    let flag = d.path().join("preflight-done");
    let adapter = script(
        d.path(),
        "slow.sh",
        &format!(
            "if [ -e {f} ]; then sleep {marker}; else : > {f}; fi\nexec {BIN} reader-adapter \"$1\"",
            f = flag.display()
        ),
    );
    let mut cmd = Command::new(BIN);
    // Default actions in check-reader whatever this test inherited (`nohup` ignores HUP, a
    // background job of a non-interactive shell ignores INT): the signals must reach it.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let child = cmd
        .current_dir(root())
        .args(["check-reader", "--adapter", &adapter, "--jobs", "2"])
        .args(["--filter", "codec/y_*", "--timeout", "60"])
        .arg("--capabilities")
        .arg(caps(d.path(), false))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let t0 = Instant::now();
    while with_marker(marker).len() < 2 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        with_marker(marker).len(),
        2,
        "two adapters never ran side by side"
    );
    unsafe {
        libc::kill(child.0.id() as i32, sig);
    }
    let st = child.0.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(sig), "{st:?}");
    assert!(
        none_left(marker),
        "signal {sig}: adapters outlived check-reader"
    );
}

#[test]
fn item3_int_term_hup_and_kill_to_check_reader_leave_no_adapter_alive() {
    stop_with(libc::SIGINT, "31.3002");
    stop_with(libc::SIGTERM, "31.3015");
    stop_with(libc::SIGHUP, "31.3001");
    stop_with(libc::SIGKILL, "31.3009");
}

#[test]
fn item7_a_backtracking_glob_cannot_stall_a_run_and_an_overlong_one_is_refused() {
    let d = scratch("glob");
    // 29 characters that took > 60 s per match before; in `unsupported` and as --filter.
    let evil = format!("{}X", "*?".repeat(14));
    let p = d.path().join("caps-evil.json");
    std::fs::write(
        &p,
        serde_json::json!({"reader": "g", "unsupported": [evil.clone(), "codec:q8_0"]}).to_string(),
    )
    .unwrap();
    let t0 = Instant::now();
    let out = Command::new(BIN)
        .current_dir(root())
        .args(["check-reader", "--adapter", &reference(d.path())])
        .args(["--filter", CASE, "--filter", &evil, "--capabilities"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    // The evil glob matches no case id: a vacuous filter, refused by class, not a hang.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[corpus.filter]"), "{err}");
    // An overlong glob is refused before any matching.
    let long = "a*".repeat(200);
    let out = Command::new(BIN)
        .current_dir(root())
        .args([
            "check-reader",
            "--adapter",
            &reference(d.path()),
            "--filter",
            &long,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[corpus.filter]") && err.contains("at most 256"),
        "{err}"
    );
    // Control: a normal glob in the same places runs the case.
    let (out, res) = check_reader(
        d.path(),
        &reference(d.path()),
        false,
        "codec/y_pq2_0_r*",
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(res.len(), 1);
}

/// `corpus diff-fuzz` into `out` (3 iterations), with `extra` options.
fn diff_fuzz(dir: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(root())
        .args(["corpus", "diff-fuzz", "--adapter", &reference(dir)])
        .args([
            "--iterations",
            "3",
            "--filter",
            "gguf/y_*",
            "--timeout",
            "20",
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn item32_2_diff_fuzz_never_touches_a_work_folder_or_a_symlink_under_out() {
    let d = scratch("diff-fuzz-out");
    // A folder of the user's with a work/ folder and a planted symlink: refused whole.
    let out = d.path().join("project");
    std::fs::create_dir_all(out.join("work")).unwrap();
    std::fs::write(out.join("work/keep.txt"), b"mine").unwrap();
    let outside = d.path().join("outside.bin");
    std::fs::write(&outside, b"not yours").unwrap();
    std::os::unix::fs::symlink(&outside, out.join("work/mutant.gguf")).unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let run = diff_fuzz(d.path(), &out, extra);
        let err = String::from_utf8_lossy(&run.stderr);
        // Without --force an existing folder is refused as existing; with it, as foreign.
        let want = if extra.is_empty() {
            "[io.output_exists]"
        } else {
            "[io.foreign_output]"
        };
        assert!(err.contains(want), "{extra:?}: {err}");
        assert_eq!(std::fs::read(out.join("work/keep.txt")).unwrap(), b"mine");
        assert_eq!(std::fs::read(&outside).unwrap(), b"not yours");
        assert!(std::fs::symlink_metadata(out.join("work/mutant.gguf"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!out.join("candidates.json").exists());
    }
    // Control: a new folder is written (mutants never under it), a rerun needs --force.
    let fresh = d.path().join("fresh");
    let run = diff_fuzz(d.path(), &fresh, &[]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(fresh.join("candidates.json").is_file());
    assert!(!fresh.join("work").exists());
    let again = diff_fuzz(d.path(), &fresh, &[]);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("[io.output_exists]"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let forced = diff_fuzz(d.path(), &fresh, &["--force"]);
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
}
