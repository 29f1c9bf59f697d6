//! File plumbing shared by every writer and reader: opening inputs (regular files only),
//! memory maps, and the one output discipline — claim before any work ([`claim_output`]),
//! write a temporary file beside the output, commit it by a rename that replaces nothing
//! without `--force` ([`write_atomic`], [`write_file`]), scratch folders ([`scratch_dir`]).

use crate::error::{Error, ErrorClass, Result};
use std::io::Write;
use std::path::Path;

pub mod bulk;
mod claim;
mod commit;
mod direct_io;
mod input;
mod output;
mod scratch;
mod temp;

pub use claim::{
    check_ours, check_parent, claim_output, foreign, is_ours_or_empty, replace_for, OutputKind,
    Replace, MARKER,
};
pub use commit::{appeared, rename_into_place};
pub use input::{not_regular, open_input, read_input, read_input_string, require_file_or_dir};
pub use output::{OutputFile, WriteMode};
pub use scratch::{scratch_dir, Scratch};
#[cfg(feature = "internals")]
pub use temp::NAME_MAX;
pub use temp::{install_process_guards, remove_live_temps, remove_stale_temps, temp_path_for};

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
    // SAFETY: the map is read-only. A concurrent truncation by another process makes a read
    // past the new end raise SIGBUS; no mmap reader can prevent that. The SIGBUS handler
    // ([`install_process_guards`]) removes the live temporary outputs and exits 2 with
    // "input changed while being read"; README "Limits" says so.
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

/// Writes `path` atomically: `fill` writes into a temporary file in the same directory,
/// which is flushed, synced and renamed to `path` only if `fill` (and `check`, given the
/// finished temporary path) succeed. An existing `path` is replaced only as its claim allows
/// ([`replace_for`]: `--force`); one that appeared during the run is never replaced without it.
/// On any error the temporary file is removed, `path` is untouched and the error names `path`
/// (not the temporary name); on SIGINT/SIGTERM/SIGHUP/SIGBUS the temporary file is removed
/// before the process dies, and temporary files of killed earlier runs for the same output are
/// removed first. A `path` that exists as anything but a regular file is never replaced.
pub fn write_atomic<F, C>(path: &Path, fill: F, check: C) -> Result<()>
where
    F: FnOnce(&mut OutputFile) -> Result<()>,
    C: FnOnce(&Path) -> Result<()>,
{
    write_atomic_with(path, replace_for(path), fill, check)
}

/// [`write_atomic`] with the replace policy given by the caller instead of by the claim.
pub fn write_atomic_with<F, C>(path: &Path, replace: Replace, fill: F, check: C) -> Result<()>
where
    F: FnOnce(&mut OutputFile) -> Result<()>,
    C: FnOnce(&Path) -> Result<()>,
{
    refuse_non_regular_target(path)?;
    remove_stale_temps(path);
    let tmp = temp_path_for(path);
    let _live = temp::LiveTemp::register(&tmp);
    // Errors name the user's path; the temporary name means nothing to them.
    let io = |e: std::io::Error| Error::io(ErrorClass::IoWrite, path, e);
    let result = (|| {
        let _ = std::fs::remove_file(&tmp);
        // create_new (O_EXCL): never opens through a symlink planted at the temporary name.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io)?;
        let file = std::sync::Arc::new(file);
        let mut w = OutputFile::new(file.clone(), WriteMode::from_env());
        fill(&mut w)?;
        w.finish().map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        check(&tmp)?;
        // Again just before the rename: the node may have been swapped while we wrote.
        refuse_non_regular_target(path)?;
        commit::rename_into_place(&tmp, path, replace)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes a whole byte buffer atomically (policy of [`write_atomic`]).
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, bytes, replace_for(path))
}

/// Writes a whole byte buffer atomically with an explicit policy: with [`Replace::Never`] an
/// existing `path` (claimed or not) makes it fail with `io.output_exists`, untouched.
pub fn write_file(path: &Path, bytes: &[u8], replace: Replace) -> Result<()> {
    write_atomic_with(
        path,
        replace,
        |w| {
            w.write_all(bytes)
                .map_err(|e| Error::io(ErrorClass::IoWrite, path, e))
        },
        |_| Ok(()),
    )
}

/// Rewrites `path` (a document edited in place: `spec --write`, `corpus matrix --splice`)
/// atomically: the new text goes to a temporary file beside the real file (a symlink is
/// followed to it, so the link survives), with the old file's permissions, and replaces it only
/// if the file still holds `original` — an edit made while the command ran is never lost; the
/// command then fails with `io.write` naming `path`.
pub fn rewrite_in_place(path: &Path, original: &[u8], new: &[u8]) -> Result<()> {
    let real = std::fs::canonicalize(path).map_err(|e| Error::io(ErrorClass::IoWrite, path, e))?;
    let perms = std::fs::metadata(&real)
        .map_err(|e| Error::io(ErrorClass::IoWrite, path, e))?
        .permissions();
    write_atomic_with(
        &real,
        Replace::Allow,
        |w| {
            w.write_all(new)
                .map_err(|e| Error::io(ErrorClass::IoWrite, path, e))
        },
        |tmp| {
            std::fs::set_permissions(tmp, perms)
                .map_err(|e| Error::io(ErrorClass::IoWrite, path, e))?;
            match std::fs::read(&real) {
                Ok(now) if now == original => Ok(()),
                _ => Err(Error::new(
                    ErrorClass::IoWrite,
                    path.display().to_string(),
                    "changed while the command ran; it is left as it is — run the command again",
                )),
            }
        },
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
    fn rewrite_in_place_keeps_links_modes_and_concurrent_edits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("doc.md");
        std::fs::write(&doc, b"old").unwrap();
        std::fs::set_permissions(&doc, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&doc, &link).unwrap();
        rewrite_in_place(&link, b"old", b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&doc).unwrap(), b"new");
        let mode = std::fs::metadata(&doc).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // Someone edited it after it was read: the edit survives, no temporary is left.
        let e = rewrite_in_place(&doc, b"what we read", b"ours").unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoWrite);
        assert_eq!(e.field(), doc.display().to_string());
        assert_eq!(std::fs::read(&doc).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn write_atomic_never_renames_over_a_device_or_directory() {
        let e = write_bytes_atomic(Path::new("/dev/null"), b"x").unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(
            write_bytes_atomic(&sub, b"x").unwrap_err().class(),
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
