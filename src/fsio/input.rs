//! Opening inputs: only regular files (or symlinks to one) are ever opened for reading.
//!
//! A FIFO blocks `open(2)` until a writer appears and a read until it writes, a directory
//! fails with an unhelpful errno, and a character device such as `/dev/zero` reports length 0
//! while yielding endless bytes. Every input is therefore `stat`ed first and refused with
//! [`ErrorClass::IoNotRegular`] before it is opened; the open itself is non-blocking and the
//! open file is `fstat`ed again, so a node swapped in between the two checks is refused too.

use crate::error::{Error, ErrorClass, Result};
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Words for a file type that is not a regular file, e.g. "a FIFO (named pipe)".
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The error for a path that names something other than a regular file.
pub fn not_regular(path: &Path, meta: &Metadata, role: &str) -> Error {
    Error::new(
        ErrorClass::IoNotRegular,
        path.display().to_string(),
        format!(
            "is {}; the {role} must be a regular file (or a symbolic link to one)",
            kind_of(meta)
        ),
    )
}

/// Opens `path` for reading after checking that it is a regular file, without ever blocking.
pub fn open_input(path: &Path) -> Result<File> {
    let before = std::fs::metadata(path).map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    if !before.is_file() {
        return Err(not_regular(path, &before, "input"));
    }
    // O_NONBLOCK: if a FIFO was swapped in after the stat, open returns instead of waiting
    // for a writer; it changes nothing for a regular file.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    let after = file
        .metadata()
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    if !after.is_file() {
        return Err(not_regular(path, &after, "input"));
    }
    Ok(file)
}

/// Checks that `path` is a regular file or a directory (an input that may be either, such as
/// a dump file or dump directory) without opening it.
pub fn require_file_or_dir(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    if meta.is_file() || meta.is_dir() {
        return Ok(());
    }
    let e = not_regular(path, &meta, "input").with_detail(format!(
        "is {}; expected a regular file or a directory",
        kind_of(&meta)
    ));
    Err(e)
}

/// Reads a whole regular file. The buffer is reserved fallibly, so a file larger than the
/// memory the process may have is a located `io.read` error instead of an abort.
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    let mut file = open_input(path)?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?
        .len();
    let mut buf = Vec::new();
    let want = usize::try_from(len).map_err(|_| too_large(path, len))?;
    buf.try_reserve_exact(want)
        .map_err(|_| too_large(path, len))?;
    // `take` keeps a file that grows while it is read from growing the buffer without bound.
    (&mut file)
        .take(len)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(ErrorClass::IoRead, path, e))?;
    Ok(buf)
}

/// Reads a whole regular file as UTF-8 text.
pub fn read_input_string(path: &Path) -> Result<String> {
    String::from_utf8(read_input(path)?).map_err(|e| {
        Error::at(
            ErrorClass::IoRead,
            e.utf8_error().valid_up_to() as u64,
            path.display().to_string(),
            "the text file is not valid UTF-8",
        )
    })
}

fn too_large(path: &Path, len: u64) -> Error {
    Error::new(
        ErrorClass::IoRead,
        path.display().to_string(),
        format!("cannot hold the file's {len} bytes in memory"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_file_and_symlink_to_one_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, b"abc").unwrap();
        let l = dir.path().join("l");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert_eq!(read_input(&p).unwrap(), b"abc");
        assert_eq!(read_input(&l).unwrap(), b"abc");
    }

    #[test]
    fn directory_fifo_and_device_are_refused_with_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_input(dir.path()).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        assert!(e.detail().contains("a directory"), "{e}");
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Would block forever if it were opened for reading.
        let e = read_input(&fifo).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        assert!(e.detail().contains("FIFO"), "{e}");
        let e = read_input(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        assert!(e.detail().contains("character device"), "{e}");
        // A symlink to a FIFO is judged by its target.
        let l = dir.path().join("l");
        std::os::unix::fs::symlink(&fifo, &l).unwrap();
        assert_eq!(
            open_input(&l).unwrap_err().class(),
            ErrorClass::IoNotRegular
        );
    }

    #[test]
    fn missing_file_is_io_read_and_bad_utf8_has_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_input(&dir.path().join("none")).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoRead);
        let p = dir.path().join("t");
        std::fs::write(&p, b"ok\xff").unwrap();
        let e = read_input_string(&p).unwrap_err();
        assert_eq!((e.class(), e.offset()), (ErrorClass::IoRead, Some(2)));
    }
}
