//! Fixtures shared by the integration-test modules: paths into the repository, the CLI binary,
//! and the nano model packed onto its template. Defined once here so the modules agree on them.

use ninfer_ternary::codec::TernaryType;
use ninfer_ternary::gguf::{self, GgufWriter, MetaValue, Mode};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the root crate's manifest directory).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Path of the `ninfer-ternary` binary Cargo built for these tests.
pub fn cli_path() -> &'static str {
    env!("CARGO_BIN_EXE_ninfer-ternary")
}

/// A `Command` for the `ninfer-ternary` binary.
pub fn cli() -> Command {
    Command::new(cli_path())
}

/// A synthetic nano model, its template and the artifact packed from both.
pub struct Packed {
    pub gguf: Vec<u8>,
    pub template: Vec<u8>,
    pub artifact: Vec<u8>,
}

/// The nano model of format `ty` synthesized from `seed`, packed with default options: written
/// by the binary's own `synth`, `synth-template` and `pack` (the synthesizer and the packer are
/// not public API; the crate's unit tests build the same bytes in-process).
pub fn packed_with_seed(ty: TernaryType, seed: u64) -> Packed {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let format = match ty {
        TernaryType::Pq2_0 => "pq2_0",
        TernaryType::Ptq1_0 => "ptq1_0",
    };
    let seed = seed.to_string();
    for args in [
        vec![
            "synth",
            "--format",
            format,
            "--seed",
            &seed,
            "-o",
            &p("m.gguf"),
        ],
        vec!["synth-template", "-o", &p("t.ninfer")],
        vec![
            "pack",
            "--gguf",
            &p("m.gguf"),
            "--template",
            &p("t.ninfer"),
            "-o",
            &p("a.ninfer"),
        ],
    ] {
        let o = cli().args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let read = |n: &str| std::fs::read(d.path().join(n)).unwrap();
    Packed {
        gguf: read("m.gguf"),
        template: read("t.ninfer"),
        artifact: read("a.ninfer"),
    }
}

/// [`packed_with_seed`] with seed 5, the packer tests' model.
pub fn packed(ty: TernaryType) -> Packed {
    packed_with_seed(ty, 5)
}

// Builders of edited inputs shared by the pack, hostile-I/O and kernel modules.
#[path = "support/gguf_edit.rs"]
mod gguf_edit;
pub use gguf_edit::{edit_tensor, rewrite_gguf};

/// The directory and the object payloads (in directory order) of the artifact `bytes`, to edit
/// and write again with `ninfer::writer::to_bytes`.
pub fn artifact_parts(bytes: &[u8]) -> (ninfer_ternary::ninfer::Directory, Vec<Vec<u8>>) {
    let a = ninfer_ternary::ninfer::Artifact::parse(bytes).unwrap();
    let payloads = a
        .directory
        .objects
        .iter()
        .map(|o| a.object_bytes(o).to_vec())
        .collect();
    (a.directory, payloads)
}

/// The command line `cmd` followed by `-o out --force`.
pub fn forced_output<'a>(cmd: &[&'a str], out: &'a str) -> Vec<&'a str> {
    [cmd, &["-o", out, "--force"]].concat()
}

/// A fresh temporary directory holding a FIFO named `fifo` (a non-regular file that blocks
/// whoever opens it for reading): the directory and the FIFO's path.
pub fn dir_with_fifo() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    (d, fifo)
}

/// What a child run under [`run_capped`] did.
#[derive(Debug)]
pub struct Capped {
    /// Its exit status (`None` when it was killed for running past the timeout).
    pub status: Option<std::process::ExitStatus>,
    /// Its standard output (at most the first MiB, lossily decoded).
    pub stdout: String,
    /// Its standard error (at most the first MiB, lossily decoded).
    pub stderr: String,
}

/// The one address-space harness of the tests: runs `cmd` with RLIMIT_AS = `cap` bytes, stdin
/// empty, stdout and stderr to files (never a pipe nobody drains), killed after `timeout`.
pub fn run_capped(mut cmd: Command, cap: u64, timeout: std::time::Duration) -> Capped {
    use std::io::{Read, Seek};
    use std::os::unix::process::CommandExt;
    let out = tempfile::tempfile().expect("stdout file");
    let err = tempfile::tempfile().expect("stderr file");
    cmd.stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("stdout file"))
        .stderr(err.try_clone().expect("stderr file"));
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: cap as libc::rlim_t,
                rlim_max: cap as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn");
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if t0.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |mut f: std::fs::File| {
        let mut s = Vec::new();
        let _ = f.seek(std::io::SeekFrom::Start(0));
        let _ = (&mut f).take(1 << 20).read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    };
    Capped {
        status,
        stdout: read(out),
        stderr: read(err),
    }
}

#[path = "support/schema_check.rs"]
mod schema_check;
pub use schema_check::{conforms, schema};

/// A folder for a fixture that lives as long as the test process (held in a static, and
/// statics are never dropped, so a `TempDir` there would be left behind): under cargo's
/// scratch folder for integration tests (`CARGO_TARGET_TMPDIR`, inside `target/`), one per
/// fixture and process. Folders of processes that have ended are removed first, so nothing
/// accumulates and nothing is left in the system temp folder.
pub fn process_fixture_dir(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let prefix = format!("{name}-");
    // Which processes are alive is only known where /proc is; elsewhere nothing is swept.
    if Path::new("/proc/self").exists() {
        for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = n.strip_prefix(&prefix).and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Live processes (zombies left out) whose command line holds `marker`, as `pid: cmdline`:
/// the leftover check of the hostile-run tests (each hostile child carries a unique marker).
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z');
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !zombie && cmd.contains(marker) {
            out.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    out
}

/// Whether the host kernel tier can run here (a C++ compiler): a missing compiler fails the
/// test unless `NINFER_SKIP_HOST_KERNELS=1` says to skip, which is printed, never silent.
pub fn host_ready() -> bool {
    // The compiler the host tier runs (`NINFER_CXX`, else `c++`), asked directly.
    let cxx = std::env::var("NINFER_CXX").unwrap_or_else(|_| "c++".into());
    let probe = Command::new(&cxx)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let e = match probe {
        Ok(s) if s.success() => return true,
        Ok(s) => format!("{cxx} --version: {s}"),
        Err(e) => format!("{cxx}: {e}"),
    };
    if std::env::var("NINFER_SKIP_HOST_KERNELS").as_deref() == Ok("1") {
        eprintln!("SKIPPED host kernel tier (NINFER_SKIP_HOST_KERNELS=1): {e}");
        return false;
    }
    panic!("host kernel tier needs a C++ compiler: {e} (set NINFER_SKIP_HOST_KERNELS=1 to skip explicitly)")
}

/// Lower-case hex sha256 (as the corpus manifest and reports write it), computed here with
/// `sha2`: the crate's digest helper is not public API.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The hostile GGUF cases of the committed corpus (`conformance/MANIFEST.json`, family
/// `gguf:hostile`), as a reader author gets them: (name without the `n_` prefix, bytes, mode
/// `strict`/`spec`, expected class, whether it is a decode-phase case). The corpus test
/// regenerates these files from the catalog byte for byte, so they are the catalog's cases.
pub fn hostile_gguf_cases() -> Vec<HostileCase> {
    let root = repo_root().join("conformance");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("MANIFEST.json")).unwrap())
            .unwrap();
    let mut out = Vec::new();
    for c in m["cases"].as_array().unwrap() {
        let hostile = c["features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "gguf:hostile"));
        if !hostile || c["expect"]["outcome"] != "reject" {
            continue;
        }
        let file = c["file"].as_str().unwrap();
        let stem = file.rsplit('/').next().unwrap().trim_end_matches(".gguf");
        out.push(HostileCase {
            name: stem.strip_prefix("n_").unwrap_or(stem).to_string(),
            bytes: std::fs::read(root.join(file)).unwrap(),
            strict: c["params"]["mode"] == "strict",
            class: c["expect"]["class"].as_str().unwrap().to_string(),
            decode_phase: c["expect"]["phase"] == "decode",
        });
    }
    assert!(!out.is_empty(), "no hostile GGUF case in the manifest");
    out
}

/// One hostile GGUF case of the committed corpus (see [`hostile_gguf_cases`]).
pub struct HostileCase {
    pub name: String,
    pub bytes: Vec<u8>,
    pub strict: bool,
    pub class: String,
    pub decode_phase: bool,
}

/// `artifact` broken by the mutation `kind` (spec/gates.json `mutations`), written by the
/// binary's `mutate` command (the mutator is not public API); the error is its stderr.
pub fn mutate_bytes(artifact: &[u8], kind: &str) -> Result<Vec<u8>, String> {
    let d = tempfile::tempdir().unwrap();
    let (a, out) = (d.path().join("a.ninfer"), d.path().join("m.ninfer"));
    std::fs::write(&a, artifact).unwrap();
    let o = cli()
        .arg("mutate")
        .arg(&a)
        .args(["--kind", kind, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    Ok(std::fs::read(&out).unwrap())
}

/// Whether `c` must not reach a terminal raw: the rule of `src/text.rs`'s module docs, stated
/// here again as the tests' own oracle (C0/C1 controls and DEL, U+2028/U+2029, the bidi
/// embeddings, overrides, isolates and marks, zero-width and other invisible format
/// characters), so the library's escaping is judged by the rule, not by itself.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// The reference reader's observation of `bytes` as a corpus case of `kind` (no parameters):
/// `corpus::protocol::respond`, the public face of the corpus observer (the code behind
/// `ninfer-ternary reader-adapter`); a refusal is its message.
pub fn observe(kind: &str, bytes: &[u8]) -> Result<serde_json::Value, String> {
    use ninfer_ternary::corpus::protocol::{respond, Answer};
    let no_inputs = |name: &str| -> ninfer_ternary::Result<Vec<u8>> {
        panic!("a {kind} case reads no other input ({name})")
    };
    match respond(kind, &serde_json::json!({}), bytes, &no_inputs) {
        Answer::Accept { observation } => Ok(observation),
        other => Err(format!("{other:?}")),
    }
}
