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
