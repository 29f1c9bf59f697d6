//! Writes a whole dump directory atomically: every file goes into a temporary sibling
//! directory, each is synced, then the directory takes the target's name in one rename. A full
//! disk or a kill leaves the target as it was (absent, or the previous dumps), never a directory
//! with a 0-byte file; an error names the file that failed.
//!
//! The directory carries the tool's marker (`crate::fsio::MARKER`); an existing target is
//! replaced only when it has one or is empty, and only when its claim allows (`--force`;
//! `crate::fsio::replace_for`) — a directory that appeared during the run is left alone.

use crate::error::{Error, ErrorClass, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files of a dump directory: (path relative to the directory, bytes), in write order.
pub type DirFiles = Vec<(PathBuf, Vec<u8>)>;

/// Writes `files` under `dir` atomically, replacing an existing `dir` only if this tool wrote
/// it (or it is empty) and its claim allows.
pub fn write_dir_atomic(dir: &Path, files: &DirFiles) -> Result<()> {
    write_dir_atomic_with(dir, files, |f, bytes| f.write_all(bytes))
}

/// [`write_dir_atomic`] with the byte writer passed in, so a test can make a write fail the way
/// a full disk does.
pub fn write_dir_atomic_with(
    dir: &Path,
    files: &DirFiles,
    mut write: impl FnMut(&mut File, &[u8]) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = sibling(dir, "tmp")?;
    remove_any(&tmp)?;
    let filled = fill(&tmp, files, &mut write);
    let result = filled.and_then(|()| swap_into_place(&tmp, dir));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// `.NAME.tmp-PID` / `.NAME.old-PID` beside `dir`.
fn sibling(dir: &Path, what: &str) -> Result<PathBuf> {
    let name = dir.file_name().ok_or_else(|| {
        Error::new(
            ErrorClass::IoWrite,
            dir.display().to_string(),
            "the output directory has no file name",
        )
    })?;
    Ok(dir.with_file_name(format!(
        ".{}.{what}-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Removes a directory this tool wrote (marker) or an empty one; anything else at `p` is
/// refused, never removed.
fn remove_any(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() && crate::fsio::is_ours_or_empty(p) => {
            std::fs::remove_dir_all(p).map_err(|e| Error::io(ErrorClass::IoWrite, p, e))
        }
        Ok(_) => Err(crate::fsio::foreign(p)),
    }
}

fn err(p: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(ErrorClass::IoWrite, p, e)
}

fn fill(
    tmp: &Path,
    files: &DirFiles,
    write: &mut impl FnMut(&mut File, &[u8]) -> std::io::Result<()>,
) -> Result<()> {
    std::fs::create_dir(tmp).map_err(err(tmp))?;
    let marker = tmp.join(crate::fsio::MARKER);
    std::fs::write(
        &marker,
        concat!(
            "written by ninfer-ternary ",
            env!("CARGO_PKG_VERSION"),
            "\n"
        ),
    )
    .map_err(err(&marker))?;
    let mut dirs = vec![tmp.to_path_buf()];
    for (rel, bytes) in files {
        let path = tmp.join(rel);
        if let Some(parent) = path.parent().filter(|p| !dirs.iter().any(|d| d == p)) {
            std::fs::create_dir_all(parent).map_err(err(parent))?;
            dirs.push(parent.to_path_buf());
        }
        // create_new: a name listed twice, or anything in the way, is an error, not a rewrite.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(err(&path))?;
        write(&mut f, bytes).map_err(err(&path))?;
        f.sync_all().map_err(err(&path))?;
    }
    // Directory entries are durable only once the directories themselves are synced.
    for d in dirs.iter().rev() {
        File::open(d).and_then(|f| f.sync_all()).map_err(err(d))?;
    }
    Ok(())
}

/// Renames `tmp` to `dir`; an existing `dir` (ours or empty, claimed with `--force`) is moved
/// aside first and removed only after the new one is in place (and moved back if the rename
/// fails).
fn swap_into_place(tmp: &Path, dir: &Path) -> Result<()> {
    use crate::fsio::{rename_into_place, Replace};
    let replace = crate::fsio::replace_for(dir);
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return rename_into_place(tmp, dir, Replace::Never);
    };
    if replace == Replace::Never {
        return Err(crate::fsio::appeared(dir));
    }
    if !meta.is_dir() {
        return Err(Error::new(
            ErrorClass::IoNotRegular,
            dir.display().to_string(),
            "is not a directory; a dump output is a directory (a file or link there is never replaced)",
        ));
    }
    crate::fsio::check_ours(dir)?;
    let old = sibling(dir, "old")?;
    remove_any(&old)?;
    rename_into_place(dir, &old, Replace::Never)?;
    if let Err(e) = rename_into_place(tmp, dir, Replace::Never) {
        let _ = std::fs::rename(&old, dir);
        return Err(e);
    }
    remove_any(&old)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> DirFiles {
        vec![
            ("embedding/a.bin".into(), vec![1, 2, 3]),
            ("embedding/manifest.json".into(), b"{}".to_vec()),
            ("oracles/b.bin".into(), vec![4; 100]),
        ]
    }

    #[test]
    fn writes_every_file_and_replaces_an_old_directory_whole() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("dumps");
        write_dir_atomic(&d, &files()).unwrap();
        std::fs::create_dir_all(d.join("stale")).unwrap();
        std::fs::write(d.join("stale/x"), b"old").unwrap();
        write_dir_atomic(&d, &files()).unwrap();
        assert_eq!(std::fs::read(d.join("embedding/a.bin")).unwrap(), [1, 2, 3]);
        assert_eq!(std::fs::read(d.join("oracles/b.bin")).unwrap(), [4; 100]);
        assert!(
            !d.join("stale").exists(),
            "the old directory is replaced, not merged"
        );
        let names: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary or old sibling is left");
    }

    #[test]
    fn a_directory_the_tool_did_not_write_is_never_replaced() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("mine");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("notes.txt"), b"user data").unwrap();
        let e = write_dir_atomic(&d, &files()).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoForeignOutput);
        assert_eq!(std::fs::read(d.join("notes.txt")).unwrap(), b"user data");
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
        // A file at the name is not replaced either.
        let f = root.path().join("file");
        std::fs::write(&f, b"f").unwrap();
        assert!(write_dir_atomic(&f, &files()).is_err());
        assert_eq!(std::fs::read(&f).unwrap(), b"f");
        // Negative control: an empty directory is taken, and gets the marker.
        let empty = root.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        write_dir_atomic(&empty, &files()).unwrap();
        assert!(empty.join(crate::fsio::MARKER).is_file());
    }

    #[test]
    fn a_full_disk_leaves_the_old_dumps_and_names_the_file() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("dumps");
        write_dir_atomic(&d, &files()).unwrap();
        let mut n = 0;
        let e = write_dir_atomic_with(&d, &files(), |_, _| {
            n += 1;
            if n == 2 {
                Err(std::io::Error::from_raw_os_error(28)) // ENOSPC
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoWrite);
        assert!(e.field().ends_with("embedding/manifest.json"), "{e}");
        // The previous dumps are intact, byte for byte, and nothing else is left behind.
        assert_eq!(std::fs::read(d.join("embedding/a.bin")).unwrap(), [1, 2, 3]);
        assert_eq!(
            std::fs::read(d.join("embedding/manifest.json")).unwrap(),
            b"{}"
        );
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
        // Without a previous directory a failure leaves nothing at all.
        let fresh = root.path().join("fresh");
        let e = write_dir_atomic_with(&fresh, &files(), |_, _| {
            Err(std::io::Error::from_raw_os_error(28))
        });
        assert!(e.is_err());
        assert!(!fresh.exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }
}
