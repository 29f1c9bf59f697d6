//! Scratch folders: the tool's private working space (dumps unbundled for the verifier,
//! harness files, kernel builds). Created like `mkdtemp(3)` — a random name, created
//! exclusively, mode 0700 — in `$TMPDIR`, so no other user can predict the name and plant a
//! symlink or file there first; removed when the [`Scratch`] is dropped (every return and
//! error path, and a panic's unwind).
//!
//! Signals: [`on_shutdown`] registers the folder's removal with the shutdown thread
//! (`crate::shutdown`, stage `Scratch`, after the temporary files), so SIGINT, SIGTERM and
//! SIGHUP remove it too. SIGKILL and SIGBUS leave it in `$TMPDIR`
//! (`ninfer-ternary-<tag>-XXXXXX`).

use crate::error::{Error, ErrorClass, Result};
use std::path::Path;

/// A private scratch folder, removed (with everything in it) on drop.
pub struct Scratch {
    // Declared first: the signal cleanup is unregistered before the folder goes.
    _shutdown: ShutdownHook,
    dir: tempfile::TempDir,
}

impl Scratch {
    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Creates a scratch folder `$TMPDIR/ninfer-ternary-<tag>-<random>` (mode 0700).
pub fn scratch_dir(tag: &str) -> Result<Scratch> {
    use std::os::unix::fs::PermissionsExt;
    // tempfile creates the folder with mkdir(2) (exclusive) and a random name; the mode is
    // ours to set (its default follows the umask).
    let dir = tempfile::Builder::new()
        .prefix(&format!("ninfer-ternary-{tag}-"))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|e| {
            Error::new(
                ErrorClass::IoWrite,
                format!("scratch folder in {}", std::env::temp_dir().display()),
                e.to_string(),
            )
        })?;
    Ok(Scratch {
        _shutdown: on_shutdown(dir.path()),
        dir,
    })
}

/// The registration of a scratch folder's removal on SIGINT/SIGTERM/SIGHUP (dropping it
/// unregisters).
type ShutdownHook = crate::shutdown::Registration;

/// The one hook point for signals: the shutdown thread removes `path` recursively.
fn on_shutdown(path: &Path) -> ShutdownHook {
    let path = path.to_path_buf();
    crate::shutdown::on_signal(crate::shutdown::Stage::Scratch, move || {
        let _ = std::fs::remove_dir_all(&path);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn scratch_is_private_unpredictable_and_removed_on_drop() {
        let a = scratch_dir("t").unwrap();
        let b = scratch_dir("t").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("ninfer-ternary-t-"), "{name}");
        let p = a.path().to_path_buf();
        std::fs::write(p.join("x"), b"x").unwrap();
        drop(a);
        assert!(!p.exists());
        // Negative control: a live scratch folder stays.
        assert!(b.path().is_dir());
    }
}
