//! The last step of every output: a finished temporary file or directory takes the output's
//! name in one rename. Without `--force` the rename must not replace anything
//! (`renameat2(RENAME_NOREPLACE)`), so a file that appeared at the path while the command ran
//! survives, and the command fails with `io.output_exists` naming the user's path.
//! A rename replaces the directory entry itself: it never writes through a symlink.

use crate::error::{Error, ErrorClass, Result};
use rustix::fs::{renameat_with, RenameFlags, CWD};
use rustix::io::Errno;
use std::path::Path;

use super::claim::Replace;

/// The error for an output that exists at commit time though it was absent (or `--force` was
/// not given) when claimed.
pub fn appeared(path: &Path) -> Error {
    Error::new(
        ErrorClass::IoOutputExists,
        path.display().to_string(),
        "exists now (it appeared while the command ran, or was not claimed with --force); \
         it is left as it is and nothing was written — pass --force to replace it",
    )
}

/// Renames `tmp` (a file or a directory) to `path`; with [`Replace::Never`] an existing
/// `path` of any kind (a dangling symlink included) is left alone and the rename fails.
pub fn rename_into_place(tmp: &Path, path: &Path, replace: Replace) -> Result<()> {
    let io = |e: std::io::Error| Error::io(ErrorClass::IoWrite, path, e);
    if replace == Replace::Allow {
        return std::fs::rename(tmp, path).map_err(io);
    }
    match renameat_with(CWD, tmp, CWD, path, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(Errno::EXIST) | Err(Errno::NOTEMPTY) => Err(appeared(path)),
        // A file system without RENAME_NOREPLACE (some network and FUSE mounts).
        Err(Errno::INVAL) | Err(Errno::NOSYS) | Err(Errno::OPNOTSUPP) => link_into_place(tmp, path),
        Err(e) => Err(io(e.into())),
    }
}

/// The no-replace fallback: `link(2)` fails with EEXIST on any existing entry; the temporary
/// name is unlinked after. A directory (or a file system without hard links) gets a checked
/// plain rename, which leaves a tiny window but still refuses what existed before.
fn link_into_place(tmp: &Path, path: &Path) -> Result<()> {
    let io = |e: std::io::Error| Error::io(ErrorClass::IoWrite, path, e);
    let is_dir = std::fs::symlink_metadata(tmp).is_ok_and(|m| m.is_dir());
    if !is_dir {
        match std::fs::hard_link(tmp, path) {
            Ok(()) => {
                let _ = std::fs::remove_file(tmp);
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(appeared(path)),
            Err(_) => {}
        }
    }
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(appeared(path));
    }
    std::fs::rename(tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_replace_leaves_a_file_that_appeared_and_force_replaces_it() {
        let d = tempfile::tempdir().unwrap();
        let (tmp, out) = (d.path().join(".out.tmp"), d.path().join("out"));
        std::fs::write(&tmp, b"new").unwrap();
        // The output appears between claim and commit.
        std::fs::write(&out, b"someone else's").unwrap();
        let e = rename_into_place(&tmp, &out, Replace::Never).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoOutputExists);
        assert_eq!(e.field(), out.display().to_string());
        assert_eq!(std::fs::read(&out).unwrap(), b"someone else's");
        // A planted dangling symlink is an existing entry too, and its target is not created.
        let target = d.path().join("target");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(rename_into_place(&tmp, &link, Replace::Never).is_err());
        assert!(!target.exists());
        // The fallback says the same.
        assert_eq!(
            link_into_place(&tmp, &out).unwrap_err().class(),
            ErrorClass::IoOutputExists
        );
        // Negative controls: an absent path is written; Allow replaces (the entry, not a link's
        // target).
        let fresh = d.path().join("fresh");
        rename_into_place(&tmp, &fresh, Replace::Never).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"new");
        std::fs::write(&tmp, b"forced").unwrap();
        rename_into_place(&tmp, &link, Replace::Allow).unwrap();
        assert_eq!(std::fs::read(&link).unwrap(), b"forced");
        assert!(!target.exists());
        std::fs::write(&tmp, b"linked").unwrap();
        link_into_place(&tmp, &d.path().join("via-link")).unwrap();
        assert!(!tmp.exists());
    }

    #[test]
    fn a_directory_is_committed_without_replacing_one_that_appeared() {
        let d = tempfile::tempdir().unwrap();
        let (tmp, out) = (d.path().join(".out.tmp"), d.path().join("out"));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("user"), b"u").unwrap();
        let e = rename_into_place(&tmp, &out, Replace::Never).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoOutputExists);
        assert_eq!(std::fs::read(out.join("user")).unwrap(), b"u");
        rename_into_place(&tmp, &d.path().join("new"), Replace::Never).unwrap();
    }
}
