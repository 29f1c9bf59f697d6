//! GGUF half of `inspect` (filled in with the GGUF reader).

use std::path::Path;
use std::process::ExitCode;

pub fn run(_path: &Path, _bytes: &[u8], _as_json: bool, _mode: &str) -> anyhow::Result<ExitCode> {
    anyhow::bail!("GGUF inspection is not built yet")
}
