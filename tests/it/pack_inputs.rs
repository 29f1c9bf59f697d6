//! The packer's inputs on the command line (issue #34): `synth-template --with dflash2`, `pack
//! --skip ... --minimal` and the reduced artifacts' `unpack` / `verify`. The library-level tests
//! of the same inputs are crate unit tests (`src/tests/pack_inputs.rs`).

/// The command line: `synth-template --with dflash2`, `pack --skip ... --minimal` with its run
/// summary, and the usage errors of both options.
#[test]
fn cli_with_dflash2_skip_and_minimal_print_the_summary() {
    use crate::common::cli;
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let o = cli().args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    assert_eq!(
        run(&["synth", "--layers", "0,3", "-o", &p("r.gguf")]).0,
        Some(0)
    );
    let (code, out) = run(&["synth-template", "--with", "dflash2", "-o", &p("t.ninfer")]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&[
        "pack",
        "--gguf",
        &p("r.gguf"),
        "--template",
        &p("t.ninfer"),
        "-o",
        &p("a.ninfer"),
        "--skip",
        "vision,mtp",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("borrowed from the template: dflash2 14, frontend 6, text 2"),
        "{out}"
    );
    assert!(out.contains("skipped (filters): mtp 12, vision 9"), "{out}");
    assert!(out.contains("left out:"), "{out}");
    let (code, out) = run(&[
        "pack",
        "--gguf",
        &p("r.gguf"),
        "--template",
        &p("t.ninfer"),
        "-o",
        &p("m.ninfer"),
        "--minimal",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("minimal artifact: frontend, sign table and layer 3"),
        "{out}"
    );
    let (code, out) = run(&["unpack", &p("m.ninfer"), "--gguf", &p("r.gguf")]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("not in the artifact") && out.contains("text/layers/0/"),
        "{out}"
    );
    let verify = |extra: &[&str]| {
        let mut args = vec![
            "verify",
            &p("m.ninfer"),
            "--gguf",
            &p("r.gguf"),
            "--template",
            &p("t.ninfer"),
            "--sweep",
            "--verbose",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&refs)
    };
    let (code, out) = verify(&["--minimal"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Gated-DeltaNet"), "{out}");
    let (code, out) = verify(&[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("verify it with --minimal"), "{out}");
    for args in [
        vec!["synth-template", "--with", "dflash3", "-o", "x.ninfer"],
        vec![
            "pack",
            "--gguf",
            "r.gguf",
            "--template",
            "t.ninfer",
            "-o",
            "y.ninfer",
            "--skip",
            "vision,",
        ],
    ] {
        let (code, out) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert!(out.contains("[cli.usage]"), "{args:?}: {out}");
    }
}
