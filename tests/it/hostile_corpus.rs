//! Issue #32 items 8 and 9: the corpus is data (confined paths, checked digests, before and
//! after a `check-reader` run). Item 10 (big-endian GGUF validated before it is transformed)
//! and the library's integrity check are crate unit tests (`src/tests/hostile_corpus.rs`).

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

const SECRET: &[u8] = b"hunter2: the outside secret";

/// A fresh copy of the corpus (MANIFEST.json and every file it names) at `<tmp>/corpus`, and
/// a secret file beside it, outside the root: `<tmp>/secret`.
struct Copy {
    _dir: tempfile::TempDir,
    root: PathBuf,
    secret: PathBuf,
}

fn corpus_copy() -> Copy {
    let dir = tempfile::tempdir().unwrap();
    let src = crate::common::repo_root().join("conformance");
    let root = dir.path().join("corpus");
    let m: Value =
        serde_json::from_slice(&std::fs::read(src.join("MANIFEST.json")).unwrap()).unwrap();
    for c in m["cases"].as_array().unwrap() {
        let rel = c["file"].as_str().unwrap();
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), root.join(rel)).unwrap();
    }
    std::fs::copy(src.join("MANIFEST.json"), root.join("MANIFEST.json")).unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    Copy {
        _dir: dir,
        root,
        secret,
    }
}

impl Copy {
    /// Rewrites the manifest's `file` of case `id`.
    fn set_file(&self, id: &str, file: &str) {
        let p = self.root.join("MANIFEST.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        for c in m["cases"].as_array_mut().unwrap() {
            if c["id"] == id {
                c["file"] = file.into();
            }
        }
        std::fs::write(&p, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    }

    /// `check-reader --json -` with the reference adapter (per case, one job) over `args`.
    fn check(&self, adapter: &str, args: &[&str]) -> Output {
        Command::new(crate::common::cli_path())
            .args(["check-reader", "--adapter", adapter, "--corpus"])
            .arg(&self.root)
            .args(["--jobs", "1", "--json", "-"])
            .args(args)
            .output()
            .unwrap()
    }
}

fn reference() -> String {
    format!("{} reader-adapter", crate::common::cli_path())
}

/// Exit 2 with `corpus.integrity` naming `file`, as the error line and the JSON error report,
/// and no reader verdict (no summary, no report of results).
fn assert_integrity(o: &Output, file: &str, why: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}\n{out}");
    let line = format!("error: [corpus.integrity] {file}");
    assert!(err.contains(&line), "want '{line}' in:\n{err}");
    assert!(err.contains(why), "want '{why}' in:\n{err}");
    assert!(
        !err.contains("RESULT:") && !out.contains("RESULT:"),
        "{err}\n{out}"
    );
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["error"]["class"], "corpus.integrity", "{v}");
    assert!(v.get("results").is_none(), "{v}");
    format!("{out}\n{err}")
}

/// Nothing of the outside file — its bytes, a prefix, their hex or its digest — is printed.
fn assert_no_secret(all: &str) {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let digest = crate::common::sha256_hex(SECRET);
    for needle in [
        String::from_utf8_lossy(SECRET).into_owned(),
        "hunter".into(),
        hex(&SECRET[..4]),
        digest.clone(),
        digest[..12].to_string(),
        crate::common::sha256_hex(&SECRET[..2]),
    ] {
        assert!(!all.contains(&needle), "'{needle}' leaked:\n{all}");
    }
}

#[test]
fn the_untouched_corpus_copy_passes_with_the_reference_adapter() {
    let c = corpus_copy();
    let caps = c.root.join("../caps.json");
    std::fs::write(&caps, r#"{"persistent": true}"#).unwrap();
    let o = c.check(&reference(), &["--capabilities", caps.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["failed"], 0);
    assert!(
        v["summary"]["passed"].as_u64().unwrap() > 300,
        "{}",
        v["summary"]
    );
}

#[test]
fn a_case_whose_bytes_were_replaced_is_an_integrity_error_not_a_reader_failure() {
    let c = corpus_copy();
    // Same size, one byte changed: only the digest can tell.
    let p = c.root.join("gguf/n_bool_2.gguf");
    let mut b = std::fs::read(&p).unwrap();
    b[40] ^= 0xff;
    std::fs::write(&p, &b).unwrap();
    let o = c.check(&reference(), &["--filter", "gguf/n_bool_2"]);
    let all = assert_integrity(&o, "gguf/n_bool_2.gguf", "sha256 is");
    assert!(!all.contains("FAIL "), "{all}");
}

#[test]
fn a_case_copied_over_by_another_file_is_an_integrity_error() {
    // The issue's scenario: y_alignment_64 copied over n_bool_2 (another size).
    let c = corpus_copy();
    std::fs::copy(
        c.root.join("gguf/y_alignment_64.gguf"),
        c.root.join("gguf/n_bool_2.gguf"),
    )
    .unwrap();
    let o = c.check(&reference(), &["--filter", "gguf/*bool*"]);
    let all = assert_integrity(&o, "gguf/n_bool_2.gguf", "the manifest records 93");
    assert!(!all.contains("FAIL "), "{all}");
}

#[test]
fn an_input_a_case_reads_is_checked_too() {
    let c = corpus_copy();
    let p = c.root.join("pack/y_nano_template.ninfer");
    let mut b = std::fs::read(&p).unwrap();
    let last = b.len() - 1;
    b[last] ^= 1;
    std::fs::write(&p, &b).unwrap();
    let o = c.check(&reference(), &["--filter", "pack/y_pack_pq2_0"]);
    assert_integrity(&o, "pack/y_nano_template.ninfer", "sha256 is");
}

#[test]
fn paths_leaving_the_corpus_are_refused_and_nothing_outside_is_read() {
    for (how, file) in [
        ("absolute", None),
        ("parent", Some("../secret")),
        ("deep parent", Some("gguf/../../secret")),
    ] {
        let c = corpus_copy();
        let file = file
            .map(String::from)
            .unwrap_or_else(|| c.secret.display().to_string());
        c.set_file("gguf/n_bool_2", &file);
        let o = c.check(&reference(), &["--filter", "gguf/n_bool_2"]);
        let why = if how == "absolute" {
            "absolute"
        } else {
            "'..'"
        };
        let all = assert_integrity(&o, &file, why);
        assert_no_secret(&all);
    }
}

#[test]
fn a_symlink_leaving_the_corpus_is_refused_and_its_target_not_read() {
    let c = corpus_copy();
    let p = c.root.join("gguf/n_bool_2.gguf");
    std::fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink(&c.secret, &p).unwrap();
    let o = c.check(&reference(), &["--filter", "gguf/n_bool_2"]);
    let all = assert_integrity(&o, "gguf/n_bool_2.gguf", "outside the corpus root");
    assert_no_secret(&all);
    // Nor its size (the issue printed the size of /etc/hostname).
    assert!(!all.contains(&format!(" {} bytes", SECRET.len())), "{all}");
}

/// Decided: a symlink whose target resolves inside the root is followed (what a deduplicating
/// copy makes); the target's bytes are what is checked against the manifest.
#[test]
fn a_symlink_inside_the_corpus_to_a_file_inside_it_is_allowed() {
    let c = corpus_copy();
    let store = c.root.join(".store");
    std::fs::create_dir(&store).unwrap();
    let p = c.root.join("gguf/n_bool_2.gguf");
    std::fs::rename(&p, store.join("n_bool_2.gguf")).unwrap();
    std::os::unix::fs::symlink("../.store/n_bool_2.gguf", &p).unwrap();
    let o = c.check(&reference(), &["--filter", "gguf/n_bool_2"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // ... and a tampered target behind it is still caught.
    std::fs::write(store.join("n_bool_2.gguf"), [0u8; 93]).unwrap();
    let o = c.check(&reference(), &["--filter", "gguf/n_bool_2"]);
    assert_integrity(&o, "gguf/n_bool_2.gguf", "sha256 is");
}

/// An adapter that overwrites a case file while the run goes on: the check after the run turns
/// the run into `corpus.integrity` naming the file; no report of reader results is written.
#[test]
fn a_case_file_changed_during_the_run_voids_the_run() {
    let c = corpus_copy();
    let script = c.root.join("../tamper.sh");
    std::fs::write(
        &script,
        format!(
            "cp '{}' '{}'\nexec {} \"$1\"\n",
            c.root.join("gguf/y_alignment_64.gguf").display(),
            c.root.join("gguf/n_bool_2.gguf").display(),
            reference()
        ),
    )
    .unwrap();
    let adapter = format!("sh {}", script.display());
    let o = c.check(&adapter, &["--filter", "gguf/*bool*"]);
    assert_integrity(&o, "gguf/n_bool_2.gguf", "changed while the adapters ran");
}
