//! Names from files never reach the terminal raw (issue #11, "Names from files ... are printed
//! raw"): every command runs on inputs whose tensor names, metadata keys and values, object
//! names and identities carry an ESC sequence, a newline and U+202E (RIGHT-TO-LEFT OVERRIDE),
//! and neither stdout nor stderr may hold a raw control or bidi character (the line breaks of
//! the output itself excepted) or the name's raw newline. Where a command shows the name, the
//! test also requires its escaped form, so the check cannot pass by printing nothing.
//!
//! Negative control: the same check on a program that prints the name raw must fail.

use crate::common::is_unsafe_char;
use ninfer_ternary::gguf::{self, GgufWriter, MetaValue, Mode};
use ninfer_ternary::ninfer::reader::Artifact;
use ninfer_ternary::ninfer::writer::{plan, to_bytes, PlannedObject};
use ninfer_ternary::ninfer::Identity;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The hostile name: clear-screen escape, a line break, then a right-to-left override.
const HOSTILE: &str = "evil\u{1b}[2J\nline\u{202e}gnp.exe";

/// Why `out` is unsafe for a terminal, or `None`: any unsafe character other than the
/// output's own line feeds, or the hostile name's raw line break (`[2J` followed by `\n`).
fn raw_hostile_text(out: &str) -> Option<String> {
    if let Some(c) = out.chars().find(|&c| c != '\n' && is_unsafe_char(c)) {
        return Some(format!("raw U+{:04X}", c as u32));
    }
    out.contains("[2J\n")
        .then(|| "the name's raw line break".to_string())
}

/// Whether `out` shows the hostile name escaped (text `\u{202e}` or JSON `\u202e`).
fn shows_escaped(out: &str) -> bool {
    out.contains("\\u{202e}") || out.contains("\\u202e")
}

/// The binary under test; `NINFER_TEXT_BIN` names another build (e.g. one from before the
/// escaping fixes, to see this test fail on it).
fn bin() -> String {
    std::env::var("NINFER_TEXT_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_ninfer-ternary").to_string())
}

fn ok(args: &[&str]) {
    let o = Command::new(bin()).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The nano GGUF with one more metadata key and one more (F32) tensor, both named
/// [`HOSTILE`], the key's string value [`HOSTILE`] too.
fn hostile_gguf(nano: &Path, out: &Path) {
    let bytes = std::fs::read(nano).unwrap();
    let g = gguf::parse(&bytes, Mode::Strict).unwrap();
    let mut w = GgufWriter::new();
    for kv in &g.kvs {
        w.kv(kv.key, kv.value.to_owned_value());
    }
    w.kv(HOSTILE, MetaValue::str(HOSTILE));
    let mut data: Vec<&[u8]> = Vec::new();
    for t in &g.tensors {
        w.tensor(t.name, t.dims(), t.type_id).unwrap();
        data.push(g.tensor_data(t));
    }
    w.tensor(HOSTILE, &[4], 0).unwrap(); // F32
    let zeros = [0u8; 16];
    data.push(&zeros);
    std::fs::write(out, w.to_bytes(&data).unwrap()).unwrap();
}

/// `template` re-written with `identity.model_id` = [`HOSTILE`] (objects unchanged).
fn hostile_template(template: &Path, out: &Path) {
    let bytes = std::fs::read(template).unwrap();
    let a = Artifact::parse(&bytes).unwrap();
    let objects = a
        .directory
        .objects
        .iter()
        .map(|o| PlannedObject {
            name: o.name.clone(),
            body: o.body.clone(),
            resource_bytes: o.bytes,
        })
        .collect();
    let identity = Identity {
        model_id: HOSTILE.into(),
        weights_id: a.directory.identity.weights_id.clone(),
    };
    let dir = plan(identity, objects).unwrap();
    let payloads: Vec<Vec<u8>> = a
        .directory
        .objects
        .iter()
        .map(|o| a.object_bytes(o).to_vec())
        .collect();
    std::fs::write(out, to_bytes(&dir, &payloads).unwrap()).unwrap();
}

/// A container whose directory is `json` followed by one payload byte.
fn container(json: &str, out: &Path) {
    let valid = to_bytes(
        &plan(
            Identity {
                model_id: "m".into(),
                weights_id: "w".into(),
            },
            vec![],
        )
        .unwrap(),
        &[],
    )
    .unwrap();
    let mut b = valid[..8].to_vec();
    b.extend_from_slice(&(json.len() as u64).to_le_bytes());
    b.extend_from_slice(json.as_bytes());
    b.resize(b.len().div_ceil(4096) * 4096, 0);
    b.push(7);
    std::fs::write(out, b).unwrap();
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn p(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let f = Fixture { _dir: dir, root };
    let (g, t, a) = (f.p("nano.gguf"), f.p("tpl.ninfer"), f.p("nano.ninfer"));
    ok(&["synth", "-o", s(&g)]);
    ok(&["synth-template", "-o", s(&t)]);
    ok(&["pack", "--gguf", s(&g), "--template", s(&t), "-o", s(&a)]);
    hostile_gguf(&g, &f.p("evil.gguf"));
    hostile_template(&t, &f.p("evil-tpl.ninfer"));
    // Identity only (a valid, empty container), and an object named HOSTILE.
    container(
        &format!(
            r#"{{"identity":{{"model_id":{h},"weights_id":{h}}},"objects":[]}}"#,
            h = q(HOSTILE)
        ),
        &f.p("evil-id.ninfer"),
    );
    container(
        &format!(
            r#"{{"identity":{{"model_id":"m","weights_id":"w"}},"objects":[{{"name":{h},"kind":"resource","encoding":"raw-bytes-v1","offset":0,"bytes":1}}]}}"#,
            h = q(HOSTILE)
        ),
        &f.p("evil-name.ninfer"),
    );
    // check-reader: an adapter answering with the name, a known-failures list naming it.
    let adapter = f.p("adapter.sh");
    std::fs::write(
        &adapter,
        "#!/bin/sh\nprintf 'evil\\033[2J\\nline\\342\\200\\256x'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&adapter, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The list is one `ID  REASON` per line, so its name carries no line break.
    let one_line = HOSTILE.replace('\n', "-");
    std::fs::write(f.p("known.txt"), format!("gguf/{one_line}  accepted\n")).unwrap();
    f
}

/// One case: (label, arguments with `{file}` placeholders, whether the output must show the name, the
/// exit code the command must end with, and a marker its output must hold): the exit code and
/// the marker prove the command reached the code that handles the name, so a case cannot pass
/// by dying early and printing nothing.
type Case = (&'static str, Vec<&'static str>, bool, i32, &'static str);

/// Every command on the hostile inputs.
fn cases() -> Vec<Case> {
    vec![
        (
            "inspect gguf",
            vec!["inspect", "{evil.gguf}"],
            true,
            0,
            "metadata (",
        ),
        (
            "inspect gguf --json",
            vec!["inspect", "--json", "-", "{evil.gguf}"],
            true,
            0,
            "\"metadata\"",
        ),
        (
            "inspect gguf spec mode",
            vec!["inspect", "--mode", "spec", "{evil.gguf}"],
            true,
            0,
            "(spec mode)",
        ),
        (
            "inspect ninfer",
            vec!["inspect", "{evil-id.ninfer}"],
            true,
            0,
            "identity:",
        ),
        (
            "inspect ninfer --json",
            vec!["inspect", "--json", "-", "{evil-id.ninfer}"],
            true,
            0,
            "\"identity\"",
        ),
        (
            "inspect ninfer object name",
            vec!["inspect", "{evil-name.ninfer}"],
            true,
            0,
            "resource",
        ),
        (
            "inspect ninfer object name --json",
            vec!["inspect", "--json", "-", "{evil-name.ninfer}"],
            true,
            0,
            "\"objects\"",
        ),
        (
            "decode gguf tensor",
            vec!["decode", "{evil.gguf}", HOSTILE, "-o", "{out}"],
            false,
            0,
            "wrote ",
        ),
        (
            "decode absent gguf tensor",
            vec!["decode", "{nano.gguf}", HOSTILE, "-o", "{out}"],
            true,
            2,
            "[gguf.tensor_missing]",
        ),
        (
            "decode ninfer object",
            vec!["decode", "{evil-name.ninfer}", HOSTILE, "-o", "{out}"],
            true,
            2,
            "not a tensor",
        ),
        (
            "decode absent ninfer object",
            vec!["decode", "{nano.ninfer}", HOSTILE, "-o", "{out}"],
            true,
            2,
            "[ninfer.object_missing]",
        ),
        (
            "pack --check",
            vec!["pack", "--gguf", "{evil.gguf}", "--check"],
            false,
            0,
            "PASS source",
        ),
        (
            "pack gguf",
            vec![
                "pack",
                "--gguf",
                "{evil.gguf}",
                "--template",
                "{tpl.ninfer}",
                "-o",
                "{out}",
            ],
            false,
            0,
            "packed ",
        ),
        (
            "pack template",
            vec![
                "pack",
                "--gguf",
                "{nano.gguf}",
                "--template",
                "{evil-tpl.ninfer}",
                "-o",
                "{packed-evil.ninfer}",
            ],
            false,
            0,
            "packed ",
        ),
        (
            "inspect packed on the template",
            vec!["inspect", "{packed-evil.ninfer}"],
            true,
            0,
            "identity:",
        ),
        (
            "unpack",
            vec!["unpack", "{nano.ninfer}", "--gguf", "{evil.gguf}"],
            false,
            0,
            "unpack proof:",
        ),
        (
            "unpack -o",
            vec![
                "unpack",
                "{nano.ninfer}",
                "--gguf",
                "{evil.gguf}",
                "-o",
                "{out}",
            ],
            false,
            0,
            "wrote ",
        ),
        (
            "verify gguf",
            vec!["verify", "{nano.ninfer}", "--gguf", "{evil.gguf}"],
            false,
            0,
            "PASS inspect",
        ),
        (
            "verify gguf --json",
            vec![
                "verify",
                "{nano.ninfer}",
                "--gguf",
                "{evil.gguf}",
                "--json",
                "-",
            ],
            false,
            0,
            "\"ok\": true",
        ),
        (
            "verify template",
            vec![
                "verify",
                "{nano.ninfer}",
                "--gguf",
                "{nano.gguf}",
                "--template",
                "{evil-tpl.ninfer}",
                "--verbose",
            ],
            true,
            1,
            "FAIL provenance",
        ),
        (
            "verify template --json",
            vec![
                "verify",
                "{nano.ninfer}",
                "--gguf",
                "{nano.gguf}",
                "--template",
                "{evil-tpl.ninfer}",
                "--json",
                "-",
            ],
            true,
            1,
            "\"status\": \"FAIL\"",
        ),
        (
            "verify artifact identity",
            vec![
                "verify",
                "{packed-evil.ninfer}",
                "--gguf",
                "{nano.gguf}",
                "--verbose",
            ],
            true,
            0,
            "identity: model_id=",
        ),
        (
            "transcode",
            vec!["transcode", "{evil.gguf}", "--to", "pq2_0", "-o", "{out}"],
            false,
            0,
            "transcoded to PQ2_0",
        ),
        (
            "check-reader",
            vec![
                "check-reader",
                "--corpus",
                "{CORPUS}",
                "--adapter",
                "{adapter.sh}",
                "--filter",
                "gguf/y_valid_small*",
                "--jobs",
                "1",
                "--known-failures",
                "{known.txt}",
            ],
            true,
            1,
            "RESULT: FAILED",
        ),
    ]
}

/// Runs `args` (placeholders resolved) and returns its exit code and stdout + stderr.
fn run(f: &Fixture, i: usize, args: &[&str]) -> (Option<i32>, String) {
    let args: Vec<String> = args
        .iter()
        .map(
            |a| match a.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
                Some("out") => s(&f.p(&format!("out{i}"))).to_string(),
                Some("CORPUS") => s(&super::common::repo_root().join("conformance")).to_string(),
                Some(name) => s(&f.p(name)).to_string(),
                None => a.to_string(),
            },
        )
        .collect();
    let o = Command::new(bin()).args(&args).output().unwrap();
    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    (o.status.code(), text)
}

#[test]
fn no_command_prints_a_files_control_or_bidi_characters_raw() {
    let f = fixture();
    let bad = check_cases(&f, cases());
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// A case list's failures: wrong exit code, marker absent, raw hostile text, or a name that
/// must be shown but is not.
fn check_cases(f: &Fixture, cases: Vec<Case>) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, (label, args, must_show, exit, marker)) in cases.into_iter().enumerate() {
        let (code, out) = run(f, i, &args);
        if code != Some(exit) {
            bad.push(format!(
                "{label}: exit {code:?}, expected {exit}:\n{}",
                out.escape_debug()
            ));
        } else if !out.contains(marker) {
            bad.push(format!(
                "{label}: {marker:?} not in the output (the path was not reached):\n{}",
                out.escape_debug()
            ));
        } else if let Some(why) = raw_hostile_text(&out) {
            bad.push(format!("{label}: {why}:\n{}", out.escape_debug()));
        } else if must_show && !shows_escaped(&out) {
            bad.push(format!(
                "{label}: the name is not shown (escaped):\n{}",
                out.escape_debug()
            ));
        }
    }
    bad
}

/// Negative control of the exit-code and marker checks: a command that dies before reaching
/// the name (an absent input), one that ends with another code, and one whose output lacks the
/// marker are each reported, and a correct case is not.
#[test]
fn negative_control_a_case_that_dies_early_is_caught() {
    let f = fixture();
    let died: Case = (
        "absent input",
        vec!["inspect", "{absent.gguf}"],
        false,
        0,
        "metadata (",
    );
    let wrong_code: Case = (
        "wrong code",
        vec!["inspect", "{evil.gguf}"],
        false,
        1,
        "metadata (",
    );
    let no_marker: Case = (
        "no marker",
        vec!["inspect", "{evil.gguf}"],
        false,
        0,
        "RESULT: PASSED",
    );
    for case in [died, wrong_code, no_marker] {
        let label = case.0;
        assert_eq!(check_cases(&f, vec![case]).len(), 1, "{label} not caught");
    }
    let right: Case = (
        "right",
        vec!["inspect", "{evil.gguf}"],
        true,
        0,
        "metadata (",
    );
    assert!(check_cases(&f, vec![right]).is_empty());
}

/// Negative control: a program that prints the name raw (on stdout or stderr) is caught, and
/// the escaped rendering passes.
#[test]
fn negative_control_raw_names_are_caught() {
    assert!(raw_hostile_text(HOSTILE).is_some());
    for script in ["printf '%s\\n' \"$0\"", "printf '%s\\n' \"$0\" >&2"] {
        let o = Command::new("/bin/sh")
            .args(["-c", script, HOSTILE])
            .output()
            .unwrap();
        let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&o.stderr));
        assert!(raw_hostile_text(&text).is_some(), "{text:?}");
    }
    // Each hostile character alone is caught.
    for c in ['\u{1b}', '\u{202e}', '\u{9b}', '\u{2066}'] {
        assert!(raw_hostile_text(&format!("a{c}b\n")).is_some(), "{c:?}");
    }
    // The name as the tool escapes it (`\n`, otherwise `\u{XXXX}`; src/text.rs), written out.
    let escaped = "evil\\u{001b}[2J\\nline\\u{202e}gnp.exe\n".to_string();
    assert_eq!(raw_hostile_text(&escaped), None);
    assert!(shows_escaped(&escaped));
}
