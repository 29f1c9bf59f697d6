//! File plumbing shared by every writer and reader: memory maps and atomic replacement.

use crate::error::{Error, ErrorClass, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Maps `path` read-only. An empty file maps to an empty slice (memmap2 refuses length 0).
pub fn map_file(path: &Path) -> Result<Mapped> {
    let file = File::open(path).map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?
        .len();
    if len == 0 {
        return Ok(Mapped(None));
    }
    // SAFETY: the map is read-only; a concurrent truncation by another process is outside
    // what any mmap reader can defend against and is documented in the README.
    let map =
        unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    Ok(Mapped(Some(map)))
}

/// A read-only file mapping.
pub struct Mapped(Option<memmap2::Mmap>);

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.as_deref().unwrap_or(&[])
    }
}

/// Writes `path` atomically: `fill` writes into a temporary file in the same directory,
/// which is flushed, synced and renamed over `path` only if `fill` (and `check`, given the
/// finished temporary path) succeed. On any error the temporary file is removed and `path`
/// is untouched.
pub fn write_atomic<F, C>(path: &Path, fill: F, check: C) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
    C: FnOnce(&Path) -> Result<()>,
{
    let tmp = temp_path_for(path);
    let result = (|| {
        let file = File::create(&tmp).map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        w.flush()
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        let file = w
            .into_inner()
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        drop(file);
        check(&tmp)?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(ErrorClass::IoWrite, path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes a whole byte buffer atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(
        path,
        |w| {
            w.write_all(bytes)
                .map_err(|e| Error::io(ErrorClass::IoWrite, path, e))
        },
        |_| Ok(()),
    )
}

fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Maps an I/O error on a writer to a located write error.
pub fn write_err(path_or_what: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::new(ErrorClass::IoWrite, path_or_what, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_fill_leaves_target_untouched_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        let r = write_atomic(
            &p,
            |w| {
                w.write_all(b"new").unwrap();
                Err(Error::new(ErrorClass::IoWrite, "x", "boom"))
            },
            |_| Ok(()),
        );
        assert!(r.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn failed_check_leaves_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        let r = write_atomic(
            &p,
            |w| w.write_all(b"new").map_err(write_err("w")),
            |_| Err(Error::new(ErrorClass::IoWrite, "x", "does not re-open")),
        );
        assert!(r.is_err());
        assert!(!p.exists());
        write_bytes_atomic(&p, b"ok").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"ok");
    }
}
