//! Fixtures of the crate's own test files (`src/tests/`): the nano model packed onto its
//! template and the edited-input builders, as `tests/it/common.rs` has them for the
//! integration tests, but built in-process through the crate-private packer and synthesizer
//! (the integration tests build theirs through the CLI binary).

use crate::codec::TernaryType;
use crate::gguf::{self, GgufWriter, MetaValue, Mode};
use crate::pack::{pack_bytes, PackOptions};
use crate::spec::{self, ModelProfile};
use crate::synth::template::template_bytes;
use std::path::PathBuf;

/// The repository root (the crate's manifest directory).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
    let gguf = nano_fixture::model(ty, seed);
    let template = nano_fixture::template();
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

/// The nano model and template one way (the testkit crate's `nano` module, which links the
/// crate with `internals` and so cannot be used from inside it).
pub mod nano_fixture {
    use super::nano;
    use crate::codec::TernaryType;

    /// The synthetic nano model in format `ty` from `seed`.
    pub fn model(ty: TernaryType, seed: u64) -> Vec<u8> {
        crate::synth::model::model_bytes(&nano(), ty, seed).unwrap()
    }

    /// The nano template.
    pub fn template() -> Vec<u8> {
        super::template_bytes(&nano()).unwrap()
    }
}

// Builders of edited inputs shared by the pack, hostile-I/O and kernel modules.
#[path = "../../tests/it/support/gguf_edit.rs"]
mod gguf_edit;
pub use gguf_edit::{edit_tensor, rewrite_gguf};

/// The directory and the object payloads (in directory order) of the artifact `bytes`, to edit
/// and write again with `ninfer::writer::to_bytes`.
pub fn artifact_parts(bytes: &[u8]) -> (crate::ninfer::Directory, Vec<Vec<u8>>) {
    let a = crate::ninfer::Artifact::parse(bytes).unwrap();
    let payloads = a
        .directory
        .objects
        .iter()
        .map(|o| a.object_bytes(o).to_vec())
        .collect();
    (a.directory, payloads)
}

/// A copy of `bytes` with the byte at `at` set to `value` (a one-byte hostile edit).
pub fn with_byte(bytes: &[u8], at: usize, value: u8) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] = value;
    b
}

#[path = "../../tests/it/support/schema_check.rs"]
mod schema_check;
pub use schema_check::{conforms, schema};

/// Whether the host kernel tier can run here (a C++ compiler): a missing compiler fails the
/// test unless `NINFER_SKIP_HOST_KERNELS=1` says to skip, which is printed, never silent.
pub fn host_ready() -> bool {
    match crate::cuda::host::available() {
        Ok(_) => true,
        Err(e) if std::env::var("NINFER_SKIP_HOST_KERNELS").as_deref() == Ok("1") => {
            eprintln!("SKIPPED host kernel tier (NINFER_SKIP_HOST_KERNELS=1): {e}");
            false
        }
        Err(e) => panic!(
            "host kernel tier needs a C++ compiler: {e} (set NINFER_SKIP_HOST_KERNELS=1 to skip explicitly)"
        ),
    }
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
