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
    refused_within(args, class, Duration::from_secs(20))
}

/// [`refused`] for a refusal that comes after real work (a whole corpus generated in memory
/// first): the limit still catches a hang, not a slow, loaded machine.
fn refused_within(args: &[&str], class: ErrorClass, limit: Duration) -> String {
    let (st, err) =
        run_limited(args, limit).unwrap_or_else(|| panic!("{args:?} did not finish (blocked?)"));
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
        // Not `-o` the FIFO's own folder: that folder holds the input (io.input_in_output).
        vec!["dump-reference", f, "-o", o, "--force"],
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
    synth_mid_write_with(dir, libc::SIG_DFL)
}

/// `synth_mid_write` with SIGINT and SIGTERM set to `disposition` in the child before it starts
/// (what it inherits: a background job of a non-interactive shell, `cmd &`, starts with SIGINT
/// ignored, so a test run that way must not inherit that into a child it means to interrupt).
fn synth_mid_write_with(dir: &Path, disposition: libc::sighandler_t) -> Child {
    use std::os::unix::process::CommandExt;
    let out = dir.join("big.gguf");
    let mut cmd = bin();
    cmd.args(["synth", "--profile", "bonsai-2-27b", "-o", s(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGINT, disposition);
            libc::signal(libc::SIGTERM, disposition);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
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
        let (st, _) = wait_for(child, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("signal {sig}: still running 30 s after it (killed)"));
        assert_eq!(st.signal(), Some(sig), "re-raised with the default action");
        assert_eq!(temps_in(d.path()), Vec::<PathBuf>::new(), "signal {sig}");
        assert!(!d.path().join("big.gguf").exists());
    }
}

#[test]
fn inherited_ignored_sigint_and_sigterm_stay_ignored() {
    // Unusual but right: started with SIGINT and SIGTERM ignored (as `nohup cmd &` or a
    // background job of a script starts it), the tool keeps them ignored, as a shell would,
    // and keeps writing; SIGKILL then ends it and leaves its temporary file (the next run
    // removes it, see below). Negative control of the test above: there, with the default
    // dispositions, each signal ends it and removes the temporary file.
    let d = tempfile::tempdir().unwrap();
    let mut child = synth_mid_write_with(d.path(), libc::SIG_IGN);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        unsafe { libc::kill(child.id() as i32, sig) };
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "an ignored signal ended it"
    );
    assert_eq!(
        temps_in(d.path()).len(),
        1,
        "an ignored signal removed its temp"
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    wait_for(child, Duration::from_secs(30)).expect("dies on SIGKILL");
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

// ---- Issue #32: never destroy what we did not write (output half) ----

/// Every regular file and symlink under `root` with its bytes (a symlink as its target), for
/// byte-for-byte "it survived" checks.
fn snapshot(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            if t.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                m.insert(p, target.into_os_string().into_encoded_bytes());
            } else if t.is_dir() {
                stack.push(p);
            } else {
                m.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    m
}

/// Runs the binary with extra environment; returns (status, stdout, stderr).
fn run_env(args: &[&str], env: &[(&str, &Path)]) -> (ExitStatus, String, String) {
    let mut c = bin();
    c.args(args).stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status,
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// #32 item 1 (and item 6: the verify family's scratch folders): `corpus generate` writes only
/// into a new or empty folder or a corpus it wrote; it never removes or replaces a file it did
/// not write, never writes through a symlinked folder, and its scratch (in `$TMPDIR`) is private
/// and gone afterwards — a symlink planted at the old predictable scratch name is not followed.
#[test]
fn corpus_generate_never_removes_or_replaces_files_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    // The filer's reproduction: a folder of the user's own models.
    let models = d.path().join("models");
    std::fs::create_dir_all(models.join("gguf")).unwrap();
    std::fs::create_dir_all(models.join("codec")).unwrap();
    std::fs::write(models.join("gguf/user-model.gguf"), b"the user's model").unwrap();
    std::fs::write(models.join("codec/bench.csv"), b"a,b\n1,2\n").unwrap();
    let before = snapshot(&models);
    let t0 = Instant::now();
    let err = refused(
        &["corpus", "generate", "-o", s(&models)],
        ErrorClass::IoForeignOutput,
    );
    assert!(err.contains(s(&models)), "{err}");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "refused before the generation"
    );
    assert_eq!(
        snapshot(&models),
        before,
        "every foreign file survives byte for byte"
    );

    // A corpus it wrote: regenerating leaves planted files and links alone (and says so).
    let tmp = d.path().join("tmpdir");
    std::fs::create_dir(&tmp).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"victim").unwrap();
    // The old scheme's name for this process's first scratch folder (pid unknown in advance:
    // plant a spread of them).
    for n in 0..4 {
        std::os::unix::fs::symlink(&victim, tmp.join(format!("ninfer-ternary-dumps-{n}-0")))
            .unwrap();
    }
    let c = d.path().join("c");
    let (st, _, err) = run_env(
        &["corpus", "generate", "-o", s(&c)],
        &[("TMPDIR", tmp.as_path())],
    );
    assert!(st.success(), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert_eq!(
        left.len(),
        4,
        "only the planted links remain in TMPDIR: {left:?}"
    );
    std::fs::write(c.join("gguf/user-model.gguf"), b"mine").unwrap();
    std::os::unix::fs::symlink(&victim, c.join("codec/link.bin")).unwrap();
    let planted = (c.join("gguf/user-model.gguf"), c.join("codec/link.bin"));
    let (st, out, err) = run_env(&["corpus", "generate", "-o", s(&c)], &[]);
    assert!(st.success(), "{err}");
    assert!(out.contains("LEFT    gguf/user-model.gguf"), "{out}");
    assert_eq!(std::fs::read(&planted.0).unwrap(), b"mine");
    assert_eq!(std::fs::read_link(&planted.1).unwrap(), victim);
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    // A family folder swapped for a symlink is refused before anything is written.
    let elsewhere = d.path().join("elsewhere");
    std::fs::rename(c.join("pack"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, c.join("pack")).unwrap();
    // One file missing there, so a write through the link would be needed.
    let first = snapshot(&elsewhere).into_keys().next().unwrap();
    std::fs::remove_file(first).unwrap();
    let mark = snapshot(&elsewhere);
    refused_within(
        &["corpus", "generate", "-o", s(&c)],
        ErrorClass::IoNotRegular,
        Duration::from_secs(180),
    );
    assert_eq!(snapshot(&elsewhere), mark);
    // (The negative control of the refusals is the fresh `c` above, written without error.)
    // A missing parent folder is refused up front too.
    refused(
        &["corpus", "generate", "-o", s(&d.path().join("missing/sub"))],
        ErrorClass::IoWrite,
    );
}

/// #32 item 3: `dump-reference` and `mutate --kind dump-*` never replace a directory that holds
/// their input, nor one this tool did not write, `--force` or not.
#[test]
fn dump_outputs_never_hold_their_input_or_replace_foreign_folders() {
    let (_, _, _, a) = nano();
    let d = tempfile::tempdir().unwrap();
    let holder = d.path().join("D");
    std::fs::create_dir(&holder).unwrap();
    let art = holder.join("a.ninfer");
    std::fs::copy(a, &art).unwrap();
    let before = snapshot(&holder);
    for args in [
        vec!["dump-reference", s(&art), "-o", s(&holder), "--force"],
        vec!["dump-reference", s(&art), "-o", s(&holder)],
        vec![
            "mutate",
            s(&art),
            "--kind",
            "dump-row-major",
            "-o",
            s(&holder),
            "--force",
        ],
    ] {
        let err = refused(&args, ErrorClass::IoInputInOutput);
        assert!(err.contains("a.ninfer"), "{err}");
        assert_eq!(snapshot(&holder), before, "{args:?}");
    }
    // A folder of someone else's files.
    let foreign = d.path().join("F");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), b"mine").unwrap();
    let before = snapshot(&foreign);
    refused(
        &["dump-reference", s(a), "-o", s(&foreign), "--force"],
        ErrorClass::IoForeignOutput,
    );
    assert_eq!(snapshot(&foreign), before);
    // Negative control: its own dumps are replaced with --force (and need it).
    let dumps = d.path().join("dumps");
    ok(&["dump-reference", s(a), "-o", s(&dumps)]);
    refused(
        &["dump-reference", s(a), "-o", s(&dumps)],
        ErrorClass::IoOutputExists,
    );
    ok(&["dump-reference", s(a), "-o", s(&dumps), "--force"]);
    ok(&[
        "mutate",
        s(a),
        "--kind",
        "dump-row-major",
        "-o",
        s(&dumps),
        "--force",
    ]);
}

/// #32 item 4: an existing file is never replaced without `--force` — claimed before the run
/// (check-kernel --markdown, corpus matrix -o/--html, a --run file named as the output) or
/// appearing during it (a --json report the adapter creates mid-run).
#[test]
fn outputs_are_never_replaced_without_force_even_when_they_appear_mid_run() {
    let d = tempfile::tempdir().unwrap();
    let kept = d.path().join("kept.md");
    std::fs::write(&kept, b"kept").unwrap();
    let t0 = Instant::now();
    refused(
        &["check-kernel", "--builtin", "--markdown", s(&kept)],
        ErrorClass::IoOutputExists,
    );
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "claimed before the run"
    );
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance");
    let adapter = d.path().join("adapter.sh");
    let report = d.path().join("r.json");
    // The adapter plants the report path while the run is under way, then answers as the
    // reference reader.
    std::fs::write(
        &adapter,
        format!(
            "#!/bin/sh\necho planted > \"$PLANT\"\nexec '{}' reader-adapter \"$1\"\n",
            env!("CARGO_BIN_EXE_ninfer-ternary")
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &adapter,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let filter = ["--filter", "gguf/y_valid_small"];
    let base = ["check-reader", "--adapter", s(&adapter), "--corpus", corpus];
    let (st, _, err) = run_env(
        &[&base[..], &filter, &["--json", s(&report)]].concat(),
        &[("PLANT", report.as_path())],
    );
    assert_eq!(st.code(), Some(2), "{err}");
    assert_eq!(class_of(&err), Some(ErrorClass::IoOutputExists), "{err}");
    assert!(err.contains(s(&report)) && !err.contains(".tmp-"), "{err}");
    assert_eq!(std::fs::read(&report).unwrap(), b"planted\n");
    assert_eq!(temps_in(d.path()), Vec::<PathBuf>::new());
    // Negative control: with --force the report replaces the planted file.
    let (st, _, err) = run_env(
        &[&base[..], &filter, &["--json", s(&report), "--force"]].concat(),
        &[("PLANT", report.as_path())],
    );
    assert_eq!(st.code(), Some(0), "{err}");
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .contains("check-reader-report"));
    // corpus matrix: the run file as the output; existing -o / --html files.
    let run = format!("r={}", s(&report));
    let m = ["corpus", "matrix", "--corpus", corpus, "--run", &run];
    refused(
        &[&m[..], &["-o", s(&report), "--force"]].concat(),
        ErrorClass::IoSameFile,
    );
    for flag in ["-o", "--html"] {
        refused(
            &[&m[..], &[flag, s(&kept)]].concat(),
            ErrorClass::IoOutputExists,
        );
        assert_eq!(std::fs::read(&kept).unwrap(), b"kept");
    }
    ok(&[&m[..], &["-o", s(&kept), "--force"]].concat());
    assert!(std::fs::read_to_string(&kept).unwrap().contains("Readers"));
}

/// #32 item 5: a `--json` path in a missing or unwritable folder is refused before the run,
/// fast, with `io.write`, naming the user's path (never the temporary file).
#[test]
fn a_bad_json_folder_is_refused_before_the_run_by_the_users_path() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance");
    for p in ["/nonexistent/dir/r.json", "/proc/r.json"] {
        for args in [
            vec!["check-kernel", "--builtin", "--json", p],
            vec![
                "check-reader",
                "--adapter",
                "true",
                "--corpus",
                corpus,
                "--json",
                p,
            ],
        ] {
            let t0 = Instant::now();
            let err = refused(&args, ErrorClass::IoWrite);
            assert!(t0.elapsed() < Duration::from_secs(5), "{args:?} ran first");
            assert!(err.contains(p) && !err.contains(".tmp-"), "{err}");
        }
    }
    // Negative control: a writable folder is accepted and the run goes ahead.
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("r.json");
    let args = [
        "check-reader",
        "--adapter",
        "true",
        "--corpus",
        corpus,
        "--filter",
        "gguf/y_valid_small",
        "--json",
        s(&r),
    ];
    let (st, _) = run_limited(&args, Duration::from_secs(60)).unwrap();
    assert_eq!(st.code(), Some(1));
    assert!(r.exists());
}

/// #32 item 7: a file-size limit (SIGXFSZ ignored) is an `io.write` error naming the output,
/// with the temporary file removed; SIGBUS (what a truncated mapped input raises) removes the
/// temporary file and exits 2 saying the input changed.
#[test]
fn a_size_limit_and_sigbus_leave_no_temp_and_a_classed_error() {
    use std::os::unix::process::CommandExt;
    let (_, g, t, _) = nano();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("a.ninfer");
    let mut c = bin();
    c.args(["pack", "--gguf", s(g), "--template", s(t), "-o", s(&out)])
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's file-size limit.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 64 << 10,
                rlim_max: 64 << 10,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), None, "not killed by SIGXFSZ: {err}");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(class_of(&err), Some(ErrorClass::IoWrite), "{err}");
    assert!(err.contains(s(&out)) && !err.contains(".tmp-"), "{err}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "no temp, no output"
    );
    // Negative control: without the limit the same pack succeeds.
    ok(&["pack", "--gguf", s(g), "--template", s(t), "-o", s(&out)]);
    // SIGBUS mid-write: temp removed, exit 2, io.read, the reason in words.
    let d = tempfile::tempdir().unwrap();
    let child = synth_mid_write(d.path());
    unsafe { libc::kill(child.id() as i32, libc::SIGBUS) };
    let (st, err) = wait_for(child, Duration::from_secs(30)).expect("exits on SIGBUS");
    assert_eq!(st.code(), Some(2), "{st:?} {err}");
    assert_eq!(class_of(&err), Some(ErrorClass::IoRead), "{err}");
    assert!(err.contains("changed while being read"), "{err}");
    assert_eq!(temps_in(d.path()), Vec::<PathBuf>::new());
    assert!(!d.path().join("big.gguf").exists());
}

/// #35 item 5: `dump-reference` ends with the `verify` command to run next; it names the GGUF
/// given with `--gguf` (quoted when the path needs it) or a placeholder, never a bare `SRC`.
#[test]
fn dump_reference_prints_the_verify_command_with_the_given_gguf() {
    let (_, g, _, a) = nano();
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], out: &str| -> String {
        let o = d.path().join(out);
        let r = crate::common::cli()
            .args(["dump-reference", s(a), "-o", s(&o)])
            .args(extra)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        String::from_utf8(r.stdout).unwrap()
    };
    let given = run(&["--gguf", s(g)], "d1");
    assert!(
        given.contains(&format!("--gguf {} --dump", s(g))),
        "{given}"
    );
    let spaced = d.path().join("my model.gguf");
    let quoted = run(&["--gguf", s(&spaced), "--format", "engine"], "d2");
    assert!(
        quoted.contains(&format!("--gguf '{}' --dump", s(&spaced))),
        "{quoted}"
    );
    // Negative control: without --gguf the placeholder, which no shell takes for a file.
    let bare = run(&[], "d3");
    assert!(bare.contains("--gguf <source.gguf> --dump"), "{bare}");
    for out in [&given, &quoted, &bare] {
        assert!(!out.contains("SRC"), "{out}");
    }
}
