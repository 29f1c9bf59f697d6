//! File plumbing shared by every writer and reader: opening inputs (regular files only),
//! memory maps, claiming outputs and atomic replacement.

use crate::error::{Error, ErrorClass, Result};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub mod bulk;
mod direct_io;
mod input;
mod output;
mod temp;

pub use input::{open_input, read_input, read_input_string, require_file_or_dir};
pub use output::{OutputFile, WriteMode};
pub use temp::{remove_live_temps, remove_stale_temps, temp_path_for, NAME_MAX};

/// Maps `path` read-only. An empty file maps to an empty slice (memmap2 refuses length 0).
/// Anything but a regular file is refused before it is opened ([`open_input`]). The map is
/// registered for [`bulk`] walks, which read its cold stretches direct.
pub fn map_file(path: &Path) -> Result<Mapped> {
    let file = open_input(path)?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?
        .len();
    if len == 0 {
        return Ok(Mapped {
            _bulk: None,
            map: None,
        });
    }
    // SAFETY: the map is read-only; a concurrent truncation by another process is outside
    // what any mmap reader can defend against and is documented in the README.
    let map =
        unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    Ok(Mapped {
        _bulk: bulk::register(&map, file),
        map: Some(map),
    })
}

/// A read-only file mapping.
pub struct Mapped {
    // Declared first, so it is dropped (unregistered) before the map goes.
    _bulk: Option<bulk::Registration>,
    map: Option<memmap2::Mmap>,
}

impl Mapped {
    /// Declares the map's reads scattered (`MADV_RANDOM`): a page fault on a cold stretch then
    /// reads that page only, not the disk's whole read-ahead window (8 MiB on the CI VM) around
    /// it. Readers of such a map announce each range they read whole with [`will_need`], which
    /// reads it ahead in bulk. Advice only: it changes no data, and a refusal is ignored.
    pub fn advise_random(&self) {
        if let Some(m) = &self.map {
            let _ = m.advise(memmap2::Advice::Random);
        }
    }
}

/// Bytes one `MADV_WILLNEED` call asks for. Linux reads at most the device's read-ahead size
/// (`max(io_pages, ra_pages)`, 8 MiB on the CI VM) per call and silently drops the rest, so a
/// range is advised in chunks no larger than any common read-ahead window.
const WILL_NEED_CHUNK: usize = 2 << 20;

/// Asks the kernel to read `bytes` (a slice of a file map) now, so that a cold-cache run reads
/// the range in large requests instead of faulting pages in one by one. Returns once the reads
/// are queued (the call blocks while the device queue is full, so it paces itself to the disk);
/// pages already cached are skipped. Advice only: it changes no data, and a failure (or memory
/// that is not a file map) is ignored.
pub fn will_need(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let start = bytes.as_ptr() as usize;
    let end = start + bytes.len();
    let mut lo = start - start % page;
    while lo < end {
        let len = (end - lo).min(WILL_NEED_CHUNK);
        // SAFETY: MADV_WILLNEED only schedules reads of pages of this process's own mapping
        // (the chunk lies inside `bytes`, rounded out to pages, which are mapped while `bytes`
        // is borrowed); it never changes the memory's contents or protection.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, len, libc::MADV_WILLNEED);
        }
        lo += len;
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

/// What kind of node an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A single file, replaced by rename.
    File,
    /// A directory the command writes files into.
    Directory,
}

/// Checks, before any work, that a command may write `path`: an existing output needs
/// `force` ([`ErrorClass::IoOutputExists`]); it must be a regular file (or, for
/// [`OutputKind::Directory`], a directory) — a FIFO, device or socket is never replaced
/// ([`ErrorClass::IoNotRegular`]); and it must not be the same file (device + inode, so
/// hard links, symlinks and other spellings count) as any of `inputs`
/// ([`ErrorClass::IoSameFile`]), which `--force` would otherwise destroy.
pub fn claim_output(path: &Path, kind: OutputKind, force: bool, inputs: &[&Path]) -> Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // A dangling symlink or an absent path: nothing to compare, nothing replaced but
        // the link itself.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(ErrorClass::IoWrite, path, e)),
    };
    let right_kind = match kind {
        OutputKind::File => meta.is_file(),
        OutputKind::Directory => meta.is_dir(),
    };
    if !right_kind {
        let want = match kind {
            OutputKind::File => "output",
            OutputKind::Directory => "output directory",
        };
        let mut e = input::not_regular(path, &meta, want);
        if kind == OutputKind::Directory {
            e.detail = format!(
                "is {}; the output must be a directory",
                input::kind_of(&meta)
            );
        }
        return Err(e);
    }
    for input in inputs {
        if let Ok(im) = std::fs::metadata(input) {
            if (im.dev(), im.ino()) == (meta.dev(), meta.ino()) {
                return Err(Error::new(
                    ErrorClass::IoSameFile,
                    path.display().to_string(),
                    format!(
                        "is the same file as the input {} (device {}, inode {}); \
                         writing it would destroy the input",
                        input.display(),
                        meta.dev(),
                        meta.ino()
                    ),
                ));
            }
        }
    }
    if !force {
        return Err(Error::new(
            ErrorClass::IoOutputExists,
            path.display().to_string(),
            "exists; pass --force to replace it",
        ));
    }
    Ok(())
}

/// Writes `path` atomically: `fill` writes into a temporary file in the same directory,
/// which is flushed, synced and renamed over `path` only if `fill` (and `check`, given the
/// finished temporary path) succeed. On any error the temporary file is removed and `path`
/// is untouched; on SIGINT/SIGTERM/SIGHUP the temporary file is removed before the process
/// dies, and temporary files of killed earlier runs for the same output are removed first.
/// A `path` that exists as anything but a regular file is never replaced.
pub fn write_atomic<F, C>(path: &Path, fill: F, check: C) -> Result<()>
where
    F: FnOnce(&mut OutputFile) -> Result<()>,
    C: FnOnce(&Path) -> Result<()>,
{
    refuse_non_regular_target(path)?;
    remove_stale_temps(path);
    let tmp = temp_path_for(path);
    let _live = temp::LiveTemp::register(&tmp);
    let result = (|| {
        let _ = std::fs::remove_file(&tmp);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        let file = std::sync::Arc::new(file);
        let mut w = OutputFile::new(file.clone(), WriteMode::from_env());
        fill(&mut w)?;
        w.finish()
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        file.sync_all()
            .map_err(|e| Error::io(ErrorClass::IoWrite, &tmp, e))?;
        drop(file);
        check(&tmp)?;
        // Again just before the rename: the node may have been swapped while we wrote.
        refuse_non_regular_target(path)?;
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

/// Refuses to rename over an existing FIFO, device, socket or directory.
fn refuse_non_regular_target(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(input::not_regular(path, &m, "output")),
        _ => Ok(()),
    }
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

    #[test]
    fn claim_output_refuses_inputs_by_identity_and_non_regular_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.gguf");
        std::fs::write(&input, b"in").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        let dotted = dir.path().join(".").join("in.gguf");
        for spelling in [&input, &hard, &soft, &dotted] {
            let e = claim_output(spelling, OutputKind::File, true, &[&input]).unwrap_err();
            assert_eq!(e.class, ErrorClass::IoSameFile, "{}", spelling.display());
        }
        // Negative control: a different existing file with --force is allowed, without is not.
        let other = dir.path().join("other");
        std::fs::write(&other, b"o").unwrap();
        claim_output(&other, OutputKind::File, true, &[&input]).unwrap();
        let e = claim_output(&other, OutputKind::File, false, &[&input]).unwrap_err();
        assert_eq!(e.class, ErrorClass::IoOutputExists);
        claim_output(&dir.path().join("new"), OutputKind::File, false, &[&input]).unwrap();
        // Non-regular outputs, even with --force.
        let e = claim_output(Path::new("/dev/null"), OutputKind::File, true, &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::IoNotRegular);
        let e = claim_output(dir.path(), OutputKind::File, true, &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::IoNotRegular);
        claim_output(dir.path(), OutputKind::Directory, true, &[]).unwrap();
        let e = claim_output(&other, OutputKind::Directory, true, &[]).unwrap_err();
        assert_eq!(e.class, ErrorClass::IoNotRegular);
    }

    #[test]
    fn write_atomic_never_renames_over_a_device_or_directory() {
        let e = write_bytes_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert_eq!(e.class, ErrorClass::IoNotRegular);
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(
            write_bytes_atomic(&sub, b"x").unwrap_err().class,
            ErrorClass::IoNotRegular
        );
        assert!(sub.is_dir());
    }

    #[test]
    fn a_252_byte_output_name_is_written_and_stale_temps_go() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x".repeat(252));
        let stale = temp_path_for(&p).with_file_name({
            let t = temp_path_for(&p);
            let n = t.file_name().unwrap().to_string_lossy().into_owned();
            let cut = n.rfind('-').unwrap();
            format!("{}-4294967295", &n[..cut])
        });
        std::fs::write(&stale, b"left by a killed run").unwrap();
        write_bytes_atomic(&p, b"ok").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"ok");
        assert!(!stale.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
