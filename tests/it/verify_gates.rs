//! `verify` and its companions on the command line: exit codes, one-screen output, `--json`,
//! thread-count independence, inputs that are not what they claim, `mutate --kind`. The
//! verifier's library-level tests (gates, mutations, snapshots) are crate unit tests
//! (`src/tests/verify_gates.rs`); the files here are written by the binary's own commands.

use crate::common::conforms;
use ninfer_ternary::spec::gates;
use std::path::{Path, PathBuf};

fn report_schema() -> serde_json::Value {
    crate::common::schema("verify-report")
}

#[test]
fn cli_exit_codes_are_0_pass_1_fail_2_usage() {
    let f = cli_files();
    let d = f.dir.path();
    let (art, src) = (&f.art, &f.src);
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
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("PASS: "));
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
        "-".as_ref(),
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
    // A misspelled dump format is refused by the argument parser, naming the valid ones; the
    // correct spelling is the control.
    let dumps = d.join("dumps");
    let typo = run(&[
        "dump-reference".as_ref(),
        art.as_os_str(),
        "-o".as_ref(),
        dumps.as_os_str(),
        "--format".as_ref(),
        "engin".as_ref(),
    ]);
    assert_eq!(typo.status.code(), Some(2));
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(err.contains("native") && err.contains("harness"), "{err}");
    assert!(!dumps.exists(), "nothing is written on a usage error");
    let fine = run(&[
        "dump-reference".as_ref(),
        art.as_os_str(),
        "-o".as_ref(),
        dumps.as_os_str(),
        "--format".as_ref(),
        "engine".as_ref(),
    ]);
    assert_eq!(
        fine.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fine.stderr)
    );
    assert!(dumps.join("embedding.T8.bin").is_file());
}

/// The report does not depend on the thread count (`NINFER_TERNARY_THREADS` = 1, 2, 7: one
/// thread, this machine's, more threads than cores), for a passing and a failing artifact.
#[test]
fn reports_are_identical_for_1_2_and_7_threads() {
    let f = cli_files();
    let (art, src, tpl, bad) = (&f.art, &f.src, &f.tpl, &f.bad);
    let bin = env!("CARGO_BIN_EXE_ninfer-ternary");
    let run = |a: &Path, threads: &str| {
        let o = std::process::Command::new(bin)
            .env("NINFER_TERNARY_THREADS", threads)
            .args([
                "verify".as_ref(),
                a.as_os_str(),
                "--gguf".as_ref(),
                src.as_os_str(),
            ])
            .args(["--template".as_ref(), tpl.as_os_str(), "--sweep".as_ref()])
            .output()
            .unwrap();
        (o.status.code(), o.stdout)
    };
    for (a, code) in [(&art, 0), (&bad, 1)] {
        let one = run(a, "1");
        assert_eq!(one.0, Some(code), "{}", String::from_utf8_lossy(&one.1));
        for t in ["2", "7"] {
            assert_eq!(run(a, t), one, "{} with {t} threads", a.display());
        }
    }
}

/// The files of a CLI run of `verify`: the nano PQ2_0 artifact (seed 0), its GGUF, template and
/// reference dumps, a rotate-rows mutant and the PTQ1_0 GGUF (the other format), each written
/// by the binary's own commands (`synth`, `synth-template`, `pack`, `dump-reference`, `mutate`).
struct CliFiles {
    art: PathBuf,
    src: PathBuf,
    tpl: PathBuf,
    emb: PathBuf,
    orc: PathBuf,
    bad: PathBuf,
    other: PathBuf,
    dir: tempfile::TempDir,
}

fn cli_files() -> CliFiles {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let p = |name: &str| d.join(name);
    let files = CliFiles {
        art: p("nano.ninfer"),
        src: p("nano.gguf"),
        tpl: p("template.ninfer"),
        emb: p("healthy/embedding"),
        orc: p("healthy/oracles"),
        bad: p("rotated.ninfer"),
        other: p("other.gguf"),
        dir,
    };
    let f = &files;
    let healthy = d.join("healthy");
    let steps: [Vec<&std::ffi::OsStr>; 6] = [
        vec![
            os("synth"),
            os("--format"),
            os("pq2_0"),
            os("--seed"),
            os("0"),
            os("-o"),
            f.src.as_os_str(),
        ],
        vec![os("synth-template"), os("-o"), f.tpl.as_os_str()],
        vec![
            os("pack"),
            os("--gguf"),
            f.src.as_os_str(),
            os("--template"),
            f.tpl.as_os_str(),
            os("-o"),
            f.art.as_os_str(),
        ],
        vec![
            os("dump-reference"),
            f.art.as_os_str(),
            os("-o"),
            healthy.as_os_str(),
        ],
        vec![
            os("mutate"),
            f.art.as_os_str(),
            os("--kind"),
            os("rotate-rows"),
            os("-o"),
            f.bad.as_os_str(),
        ],
        vec![
            os("synth"),
            os("--format"),
            os("ptq1_0"),
            os("--seed"),
            os("0"),
            os("-o"),
            f.other.as_os_str(),
        ],
    ];
    for args in steps {
        let (code, out, err) = run_cli(&args);
        assert_eq!(code, Some(0), "{args:?}: {out}{err}");
    }
    files
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run_cli(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The `[class]` of the `error:` line on stderr.
fn error_class(stderr: &str) -> Option<&str> {
    let l = stderr.lines().find(|l| l.starts_with("error: ["))?;
    l.strip_prefix("error: [")?.split(']').next()
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// An input that is not what it claims is a classed error, exit 2, with no report (no header
/// naming a format or profile); the healthy pair is the control (exit 0).
#[test]
fn inputs_that_are_not_what_they_claim_exit_2_with_their_class() {
    let f = cli_files();
    let text = f.dir.path().join("notgguf.txt");
    std::fs::write(&text, "just some text, long enough to hold a magic\n").unwrap();
    let cases: [(&Path, &Path, &str); 3] = [
        (&text, &f.src, "ninfer.magic"),
        (&f.art, &text, "gguf.magic"),
        (&f.art, &f.other, "verify.input"),
    ];
    for (a, g, class) in cases {
        let (code, out, err) = run_cli(&[os("verify"), a.as_os_str(), os("--gguf"), g.as_os_str()]);
        assert_eq!(code, Some(2), "{a:?} {g:?}: {err}");
        assert_eq!(error_class(&err), Some(class), "{err}");
        assert!(
            !out.contains("profile") && !out.contains("PQ2_0"),
            "a header before the inputs are known: {out}"
        );
    }
    let (code, out, err) = run_cli(&[
        os("verify"),
        f.art.as_os_str(),
        os("--gguf"),
        f.src.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
}

/// The verdict is the first line; the default output fits one screen (<= 40 lines, none over
/// 120 characters) with every gate open, healthy and failing; `--verbose` adds every check.
#[test]
fn verify_prints_the_verdict_first_on_one_screen_and_details_with_verbose() {
    let f = cli_files();
    let full = |a: &Path, verbose: bool| {
        let mut args = vec![
            os("verify"),
            a.as_os_str(),
            os("--gguf"),
            f.src.as_os_str(),
            os("--template"),
            f.tpl.as_os_str(),
            os("--sweep"),
            os("--dump"),
            f.emb.as_os_str(),
            os("--oracle-dump"),
            f.orc.as_os_str(),
        ];
        if verbose {
            args.push(os("--verbose"));
        }
        run_cli(&args)
    };
    for (a, code, verdict) in [
        (&f.art, 0, "PASS: 10 passed, 0 failed, 0 skipped"),
        (&f.bad, 1, "FAIL: "),
    ] {
        let (c, out, err) = full(a, false);
        assert_eq!(c, Some(code), "{out}{err}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with(verdict), "{out}");
        assert!(lines.len() <= 40, "{} lines:\n{out}", lines.len());
        for l in &lines {
            assert!(l.chars().count() <= 120, "{} chars: {l}", l.chars().count());
        }
        // One line per gate, in spec order.
        for s in &gates().steps {
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains(&format!(" {} ", s.step.as_str()))
                        || l.ends_with(s.step.as_str())),
                "{} missing:\n{out}",
                s.step.as_str()
            );
        }
        // The details are --verbose's: absent by default, present (unchanged) with it.
        let detail = "negative control swap_two_rows on L0 gdn/value_z[0:v_rows]";
        assert!(!out.contains(detail), "{out}");
        let (cv, verbose, _) = full(a, true);
        assert_eq!(cv, Some(code));
        assert!(verbose.lines().next().unwrap().starts_with(verdict));
        assert!(verbose.contains(detail), "{verbose}");
        assert!(verbose.lines().count() > 40, "{verbose}");
    }
    // A failing gate's line names its first failure (the located row of rotate-rows).
    let (_, out, _) = full(&f.bad, false);
    let row_order = out.lines().find(|l| l.contains("FAIL row_order ")).unwrap();
    assert!(row_order.contains("row 0 holds"), "{row_order}");
}

/// `--json -` owns stdout (the summary goes to stderr) and writes the schema'd report with
/// structured failures; `--json FILE` refuses an existing file without `--force`.
#[test]
fn verify_json_goes_to_stdout_or_a_claimed_file_and_matches_its_schema() {
    let f = cli_files();
    let schema = report_schema();
    let (code, out, err) = run_cli(&[
        os("verify"),
        f.bad.as_os_str(),
        os("--gguf"),
        f.src.as_os_str(),
        os("--template"),
        f.tpl.as_os_str(),
        os("--json"),
        os("-"),
    ]);
    assert_eq!(code, Some(1), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["schema"], "ninfer-ternary/verify-report/1");
    assert_eq!(j["tool_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(j["ok"], false);
    conforms(&j, &schema, "$").unwrap();
    assert!(err.starts_with("FAIL: "), "{err}");
    // The located failure of rotate-rows: gate, check, object, row, expected and observed.
    let row_order = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["step"] == "row_order")
        .unwrap();
    let first = &row_order["failures"][0];
    assert_eq!(first["gate"], "row_order");
    assert_eq!(first["check"], "row_order.section");
    assert_eq!(first["row"], 0);
    assert!(
        first["object"].as_str().unwrap().ends_with("value_z"),
        "{first}"
    );
    assert!(first["expected"].is_string() && first["observed"].is_string());
    assert_ne!(first["expected"], first["observed"]);
    // Negative control of the checker: a report member the schema does not name is refused.
    let mut extra = j.clone();
    extra["unexpected"] = 1.into();
    assert!(conforms(&extra, &schema, "$").is_err());

    // To a file: written; an existing one is refused without --force, replaced with it.
    let rep = f.dir.path().join("report.json");
    let to_file = |force: bool| {
        let mut a = vec![
            os("verify"),
            f.art.as_os_str(),
            os("--gguf"),
            f.src.as_os_str(),
            os("--json"),
            rep.as_os_str(),
        ];
        if force {
            a.push(os("--force"));
        }
        run_cli(&a)
    };
    let (code, out, err) = to_file(false);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("PASS: "), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    conforms(&j, &schema, "$").unwrap();
    assert_eq!(j["ok"], true);
    let (code, _, err) = to_file(false);
    assert_eq!(code, Some(2));
    assert_eq!(error_class(&err), Some("io.output_exists"), "{err}");
    let (code, _, err) = to_file(true);
    assert_eq!(code, Some(0), "{err}");
}

/// `mutate --kind` takes only the spec's kinds: a misspelling is refused by the argument
/// parser with the near one suggested (exit 2, cli.usage); the library says the same.
#[test]
fn mutate_kind_lists_its_values_and_suggests_the_near_one() {
    let f = cli_files();
    let out = f.dir.path().join("m.ninfer");
    let (code, _, err) = run_cli(&[
        os("mutate"),
        f.art.as_os_str(),
        os("--kind"),
        os("swap-tow-rows"),
        os("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(error_class(&err), Some("cli.usage"), "{err}");
    assert!(err.contains("swap-two-rows"), "{err}");
    assert!(!out.exists());
    // The library's side (`mutate::spec`) is the same-named crate unit test (src/tests/verify_gates.rs).
    let (code, _, err) = run_cli(&[
        os("mutate"),
        f.art.as_os_str(),
        os("--kind"),
        os("swap-two-rows"),
        os("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{err}");
}

/// A malformed engine dump given to `verify --dump` fails the embedding gate naming
/// `dump.format` and the byte offset; the library error carries both as data.
#[test]
fn a_malformed_engine_dump_is_a_dump_format_error_with_its_offset() {
    let f = cli_files();
    let dump = f.dir.path().join("embedding.T8.bin");
    let bytes = [8u8, 0, 0, 0, 64];
    std::fs::write(&dump, bytes).unwrap();
    // The library error (`engine_dump::parse`) is the same-named crate unit test.
    let (code, out, err) = run_cli(&[
        os("verify"),
        f.art.as_os_str(),
        os("--gguf"),
        f.src.as_os_str(),
        os("--dump"),
        dump.as_os_str(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("FAIL embedding "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("[dump.format]") && line.contains("at byte 4"),
        "{line}"
    );
}
