//! Hostile file-system situations around the command line: non-regular inputs (FIFO,
//! directory, device), non-regular and self-overwriting outputs, signals during a write,
//! long output names, closed and full standard output, and the class on every CLI error.
//! Each guarantee has a negative control showing the check can fail.

use crate::common::{dir_with_fifo, forced_output};
use ninfer_ternary::error::ErrorClass;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Waits for `child` at most `limit`; `None` (after killing it) when it is still running.
fn wait_for(mut child: Child, limit: Duration) -> Option<(ExitStatus, String)> {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                e.read_to_string(&mut err).unwrap();
            }
            return Some((st, err));
        }
        if t0.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs the binary with a deadline; stdout discarded.
fn run_limited(args: &[&str], limit: Duration) -> Option<(ExitStatus, String)> {
    let child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(child, limit)
}

/// The registered class of the `error: [id] ...` line, if any.
fn class_of(stderr: &str) -> Option<ErrorClass> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("error: ["))
        .filter_map(|l| l.split_once(']'))
        .find_map(|(id, _)| ErrorClass::from_id(id))
}

/// Asserts exit 2 with `class` named on stderr, within 20 s.
fn refused(args: &[&str], class: ErrorClass) -> String {
    let (st, err) = run_limited(args, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("{args:?} did not finish (blocked?)"));
    assert_eq!(st.code(), Some(2), "{args:?}: {st:?} {err}");
    assert_eq!(class_of(&err), Some(class), "{args:?}: {err}");
    err
}

fn ok(args: &[&str]) {
    let (st, err) = run_limited(args, Duration::from_secs(120)).expect("finishes");
    assert!(st.success(), "{args:?}: {err}");
}

/// nano GGUF, template and artifact, built once per test binary.
fn nano() -> &'static (PathBuf, PathBuf, PathBuf, PathBuf) {
    static NANO: OnceLock<(PathBuf, PathBuf, PathBuf, PathBuf)> = OnceLock::new();
    NANO.get_or_init(|| {
        let d = crate::common::process_fixture_dir("hostile-io");
        let (g, t, a) = (d.join("n.gguf"), d.join("t.ninfer"), d.join("a.ninfer"));
        ok(&["synth", "-o", s(&g)]);
        ok(&["synth-template", "-o", s(&t)]);
        ok(&["pack", "--gguf", s(&g), "--template", s(&t), "-o", s(&a)]);
        (d, g, t, a)
    })
}

#[test]
fn non_regular_inputs_are_refused_before_they_are_opened() {
    let (_, g, t, a) = nano();
    let (d, fifo) = dir_with_fifo();
    let out = d.path().join("out");
    let (f, g, t, a, o) = (s(&fifo), s(g), s(t), s(a), s(&out));
    let outdir = s(d.path());
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance");
    let check_reader = ["check-reader", "--adapter", "true", "--corpus", corpus];
    let fifo_cases: Vec<Vec<&str>> = vec![
        vec!["inspect", f],
        vec!["inspect", "--json", "-", f],
        vec!["decode", f, "x", "-o", o],
        vec!["transcode", f, "--to", "pq2_0", "-o", o],
        vec!["transcode", f, "--retag-42", "-o", o],
        vec!["pack", "--gguf", f, "--check"],
        vec!["pack", "--gguf", f, "--template", t, "-o", o],
        vec!["pack", "--gguf", g, "--template", f, "-o", o],
        vec!["unpack", f, "--gguf", g],
        vec!["unpack", a, "--gguf", f],
        vec!["verify", f, "--gguf", g],
        vec!["verify", a, "--gguf", f],
        vec!["verify", a, "--gguf", g, "--template", f],
        vec!["verify", a, "--gguf", g, "--dump", f],
        vec!["mutate", f, "--kind", "perm48-on-rows", "-o", o],
        vec!["dump-reference", f, "-o", outdir, "--force"],
        vec![
            "check-kernel",
            "--source",
            f,
            "--entry",
            "k",
            "--class",
            "dequantize",
            "--format",
            "pq2_0",
        ],
        [&check_reader[..], &["--known-failures", f]].concat(),
        [&check_reader[..], &["--capabilities", f]].concat(),
    ];
    for args in &fifo_cases {
        let err = refused(args, ErrorClass::IoNotRegular);
        assert!(err.contains("FIFO"), "{args:?}: {err}");
    }
    // A directory and a character device say what they are.
    for (input, kind) in [(outdir, "a directory"), ("/dev/zero", "a character device")] {
        for args in [
            vec!["inspect", input],
            vec!["decode", input, "x", "-o", o],
            vec!["pack", "--gguf", input, "--check"],
            vec!["verify", a, "--gguf", input],
        ] {
            let err = refused(&args, ErrorClass::IoNotRegular);
            assert!(err.contains(kind), "{args:?}: {err}");
        }
    }
    // Negative control: the deadline does catch a reader that blocks on this FIFO.
    let cat = Command::new("cat")
        .arg(&fifo)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_for(cat, Duration::from_millis(500)).is_none(),
        "cat of a FIFO blocks"
    );
    // Negative control: a symlink to a regular input is still accepted.
    let link = d.path().join("link.gguf");
    std::os::unix::fs::symlink(g, &link).unwrap();
    ok(&["inspect", s(&link)]);
}

#[test]
fn non_regular_outputs_are_never_replaced_even_with_force() {
    let (_, g, t, a) = nano();
    let (d, fifo) = dir_with_fifo();
    let (g, t, a) = (s(g), s(t), s(a));
    for target in [s(&fifo), "/dev/null", s(d.path())] {
        for args in [
            vec![
                "decode",
                g,
                "blk.0.attn_qkv.weight",
                "-o",
                target,
                "--force",
            ],
            vec!["transcode", g, "--to", "ptq1_0", "-o", target, "--force"],
            vec!["synth", "-o", target, "--force"],
            vec!["synth-template", "-o", target, "--force"],
            vec!["oracle-gguf", "-o", target, "--force"],
            vec![
                "pack",
                "--gguf",
                g,
                "--template",
                t,
                "-o",
                target,
                "--force",
            ],
            vec!["unpack", a, "--gguf", g, "-o", target, "--force"],
            vec![
                "mutate",
                a,
                "--kind",
                "perm48-on-rows",
                "-o",
                target,
                "--force",
            ],
        ] {
            refused(&args, ErrorClass::IoNotRegular);
        }
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // Directory outputs: a FIFO is not a directory.
    refused(
        &["dump-reference", a, "-o", s(&fifo), "--force"],
        ErrorClass::IoNotRegular,
    );
    // Negative control: a regular existing output with --force is replaced.
    let reg = d.path().join("reg.npy");
    std::fs::write(&reg, b"old").unwrap();
    ok(&[
        "decode",
        g,
        "blk.0.attn_qkv.weight",
        "-o",
        s(&reg),
        "--force",
    ]);
    assert_ne!(std::fs::read(&reg).unwrap(), b"old");
}

#[test]
fn an_input_named_as_the_output_is_refused_by_file_identity() {
    let (_, g0, t0, a0) = nano();
    let d = tempfile::tempdir().unwrap();
    // Private copies: the refusal must leave them byte-identical.
    let (g, t, a) = (
        d.path().join("g.gguf"),
        d.path().join("t.ninfer"),
        d.path().join("a.ninfer"),
    );
    for (from, to) in [(g0, &g), (t0, &t), (a0, &a)] {
        std::fs::copy(from, to).unwrap();
    }
    let hard = d.path().join("hard.gguf");
    std::fs::hard_link(&g, &hard).unwrap();
    let soft = d.path().join("soft.ninfer");
    std::os::unix::fs::symlink(&a, &soft).unwrap();
    let sub = d.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let dotted = sub.join("..").join("t.ninfer");
    let before: Vec<Vec<u8>> = [&g, &t, &a]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let (gs, ts, as_) = (s(&g), s(&t), s(&a));
    let pack = ["pack", "--gguf", gs, "--template", ts];
    let decode_g = ["decode", gs, "blk.0.attn_qkv.weight"];
    let mutate = ["mutate", as_, "--kind", "perm48-on-rows"];
    let cases: Vec<Vec<&str>> = vec![
        forced_output(&pack, s(&hard)),
        forced_output(&pack, s(&dotted)),
        forced_output(&decode_g, s(&hard)),
        forced_output(&["decode", as_, "text/final_norm"], s(&soft)),
        forced_output(&["unpack", as_, "--gguf", gs], s(&hard)),
        forced_output(&["unpack", as_, "--gguf", gs], s(&soft)),
        forced_output(&mutate, s(&soft)),
        forced_output(&["transcode", gs, "--to", "ptq1_0"], s(&hard)),
    ];
    for args in &cases {
        refused(args, ErrorClass::IoSameFile);
    }
    let after: Vec<Vec<u8>> = [&g, &t, &a]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(before == after, "an input was modified");
    // Negative control: a copy with the same bytes but its own inode is a legal output.
    let copy = d.path().join("copy.ninfer");
    std::fs::copy(&a, &copy).unwrap();
    assert_ne!(
        std::fs::metadata(&copy).unwrap().ino(),
        std::fs::metadata(&a).unwrap().ino()
    );
    ok(&forced_output(&mutate, s(&copy)));
}

fn temps_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".tmp-"))
        .collect()
}

/// Starts a large `synth` into `dir` and returns it once its temp file holds > 4 MiB.
// The child is returned to the caller, which signals and waits for it.
#[allow(clippy::zombie_processes)]
fn synth_mid_write(dir: &Path) -> Child {
    let out = dir.join("big.gguf");
    let mut child = bin()
        .args(["synth", "--profile", "bonsai-2-27b", "-o", s(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let big = temps_in(dir).iter().any(|p| {
            std::fs::metadata(p)
                .map(|m| m.len() > 4 << 20)
                .unwrap_or(false)
        });
        if big {
            return child;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("synth never started writing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_and_sigint_mid_write_remove_the_temp_file() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let d = tempfile::tempdir().unwrap();
        let child = synth_mid_write(d.path());
        unsafe { libc::kill(child.id() as i32, sig) };
        let (st, _) = wait_for(child, Duration::from_secs(30)).expect("dies on the signal");
        assert_eq!(st.signal(), Some(sig), "re-raised with the default action");
        assert_eq!(temps_in(d.path()), Vec::<PathBuf>::new(), "signal {sig}");
        assert!(!d.path().join("big.gguf").exists());
    }
}

#[test]
fn sigkill_leaves_a_temp_that_the_next_run_removes() {
    let d = tempfile::tempdir().unwrap();
    let child = synth_mid_write(d.path());
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    wait_for(child, Duration::from_secs(30)).expect("dies");
    // Negative control: SIGKILL cannot be handled, so the temp file is left...
    let stale = temps_in(d.path());
    assert_eq!(stale.len(), 1, "{stale:?}");
    // ...and a foreign file of a similar name is not ours to remove.
    let foreign = d.path().join(".big.gguf.tmp-notapid");
    std::fs::write(&foreign, b"x").unwrap();
    // The next run writing the same output removes it (its pid is dead).
    let out = d.path().join("big.gguf");
    ok(&["synth", "-o", s(&out)]);
    assert!(!stale[0].exists());
    assert!(foreign.exists());
    assert!(out.exists());
}

#[test]
fn a_252_byte_output_name_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join(format!("{}.gguf", "m".repeat(247)));
    assert_eq!(out.file_name().unwrap().len(), 252);
    ok(&["synth", "-o", s(&out)]);
    assert!(out.metadata().unwrap().len() > 0);
    assert_eq!(temps_in(d.path()), Vec::<PathBuf>::new());
    // Negative control: a 256-byte name is beyond NAME_MAX and fails as a write error.
    let too_long = d.path().join("m".repeat(256));
    refused(&["synth", "-o", s(&too_long)], ErrorClass::IoWrite);
}

#[test]
fn a_closed_stdout_pipe_ends_the_command_quietly() {
    let (_, g, _, _) = nano();
    let run_closed = |args: &[&str]| {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // spawn returns after exec, before the command prints: every write meets EPIPE.
        drop(child.stdout.take());
        wait_for(child, Duration::from_secs(30)).expect("finishes")
    };
    for args in [
        vec!["inspect", s(g)],
        vec!["inspect", "--json", "-", s(g)],
        vec!["spec", "errors"],
    ] {
        let (st, err) = run_closed(&args);
        assert_eq!(st.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
    // Negative control: a real error is still reported when stdout is closed.
    let (st, err) = run_closed(&["inspect", "/nonexistent.gguf"]);
    assert_eq!(st.code(), Some(2));
    assert_eq!(class_of(&err), Some(ErrorClass::IoRead), "{err}");
}

#[test]
fn a_full_stdout_is_an_io_stdout_error() {
    let (_, g, _, _) = nano();
    for args in [vec!["inspect", s(g)], vec!["spec", "errors"]] {
        let child = bin()
            .args(&args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (st, err) = wait_for(child, Duration::from_secs(30)).unwrap();
        assert_eq!(st.code(), Some(2), "{args:?}: {err}");
        assert_eq!(class_of(&err), Some(ErrorClass::IoStdout), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Negative control: the same commands succeed on a writable stdout.
    ok(&["inspect", s(g)]);
}

#[test]
fn every_cli_error_names_a_registered_class() {
    let (_, g, t, a) = nano();
    let (g, t, a) = (s(g), s(t), s(a));
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("o");
    let o = s(&o);
    let cases: Vec<(Vec<&str>, ErrorClass)> = vec![
        (vec!["synth-template", "-o", t], ErrorClass::IoOutputExists),
        (
            vec!["pack", "--gguf", g, "--template", t, "-o", a],
            ErrorClass::IoOutputExists,
        ),
        (
            vec!["synth", "--profile", "no-such", "-o", o],
            ErrorClass::CliUsage,
        ),
        (
            vec!["synth", "--format", "q4", "-o", o],
            ErrorClass::CliUsage,
        ),
        (
            vec![
                "decode",
                g,
                "blk.0.attn_qkv.weight",
                "--rows",
                "x:y",
                "-o",
                o,
            ],
            ErrorClass::CliUsage,
        ),
        (vec!["transcode", g, "-o", o], ErrorClass::CliUsage),
        (vec!["inspect", "/nonexistent"], ErrorClass::IoRead),
        (vec!["pack", "--gguf", t, "--check"], ErrorClass::GgufMagic),
    ];
    for (args, class) in &cases {
        refused(args, *class);
    }
}

/// Values outside a `ValueEnum` (`--format`, `--to`, `--mode`, `--dump-format`) are refused by
/// clap before the command runs, and reported as `cli.usage` naming the value and the flag.
#[test]
fn a_value_outside_the_cli_vocabulary_is_a_usage_error() {
    let (_, g, _, a) = nano();
    let (g, a) = (s(g), s(a));
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("o");
    let o = s(&o);
    for (args, bad, flag) in [
        (vec!["synth", "--format", "q4", "-o", o], "'q4'", "--format"),
        (
            vec!["synth", "--format", "pq2_1", "-o", o],
            "'pq2_1'",
            "--format",
        ),
        (
            vec!["transcode", g, "--to", "tq1_0", "-o", o],
            "'tq1_0'",
            "--to",
        ),
        (
            vec!["inspect", "--mode", "lenient", g],
            "'lenient'",
            "--mode",
        ),
        (
            vec!["verify", a, "--gguf", g, "--dump-format", "raw"],
            "'raw'",
            "--dump-format",
        ),
        (
            vec!["inspect", "--no-such-flag", g],
            "'--no-such-flag'",
            "unexpected argument",
        ),
    ] {
        let err = refused(&args, ErrorClass::CliUsage);
        assert!(err.starts_with("error: [cli.usage] "), "{args:?}: {err}");
        assert!(err.contains(bad) && err.contains(flag), "{args:?}: {err}");
        assert!(std::fs::metadata(o).is_err(), "{args:?} wrote {o}");
    }
    // Negative control: the vocabulary itself, including a table alias of a ternary type, is
    // accepted (the commands run and succeed).
    ok(&["inspect", "--mode", "spec", g]);
    ok(&["synth", "--format", "PTQ1", "-o", o]);
    assert!(std::fs::metadata(o).is_ok());
}
