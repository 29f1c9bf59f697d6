//! Paths shared by the modules of this test binary.

use std::path::PathBuf;

/// The root crate's repository folder (this crate's manifest lives in `testkit/`).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}
