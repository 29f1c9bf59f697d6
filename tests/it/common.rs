//! Fixtures shared by the integration-test modules: paths into the repository, the CLI binary,
//! and the nano model packed onto its template. Defined once here so the modules agree on them.

use ninfer_ternary::pack::{pack_bytes, PackOptions};
use ninfer_ternary::spec::{self, ModelProfile};
use ninfer_ternary::synth::model::{model_bytes, TernaryType};
use ninfer_ternary::synth::template::template_bytes;
use std::path::PathBuf;
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

/// The `bonsai-nano` profile: the smallest model of the spec tables.
pub fn nano() -> ModelProfile {
    spec::profile("bonsai-nano").unwrap()
}

/// A synthetic nano model, its template and the artifact packed from both.
pub struct Packed {
    pub gguf: Vec<u8>,
    pub template: Vec<u8>,
    pub artifact: Vec<u8>,
}

/// The nano model of format `ty` synthesized from `seed`, packed with default options.
pub fn packed_with_seed(ty: TernaryType, seed: u64) -> Packed {
    let p = nano();
    let gguf = model_bytes(&p, ty, seed).unwrap();
    let template = template_bytes(&p).unwrap();
    let artifact = pack_bytes(&gguf, &template, &PackOptions::default()).unwrap();
    Packed {
        gguf,
        template,
        artifact,
    }
}

/// [`packed_with_seed`] with seed 5, the packer tests' model.
pub fn packed(ty: TernaryType) -> Packed {
    packed_with_seed(ty, 5)
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
