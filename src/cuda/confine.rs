//! Where a kernel source's `#include "..."` may reach on disk: only under the kernel's own
//! folder and the `-I` folders given, never a system folder (`/`, `/etc`, `/proc`, `/home`
//! itself, the user's home folder or a folder above it, ...), and every file is checked to
//! be a regular file under the size limit *before* it is read, then read through one handle
//! with a bound. A refusal is `kernel.include`, raised before the compiler runs.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use super::sources::Lookup;
use crate::error::{Error, ErrorClass, Result};

/// Folders no include root may be (nor `/`): the system's and everyone's.
const SYSTEM_ROOTS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/var",
    "/var/tmp",
    "/usr/include",
    "/usr/local",
    "/usr/local/include",
];

/// Pseudo file systems: nothing under them is a source file.
const PSEUDO: &[&str] = &["/proc", "/sys", "/dev", "/run"];

/// Why `dir` (canonical) may not be an include root, if it may not.
pub fn forbidden_root(dir: &Path) -> Option<String> {
    if dir == Path::new("/") {
        return Some("is the root folder".into());
    }
    if SYSTEM_ROOTS.iter().any(|r| dir == Path::new(r)) {
        return Some("is a system folder".into());
    }
    if PSEUDO.iter().any(|r| dir.starts_with(r)) {
        return Some("is under a pseudo file system (/proc, /sys, /dev, /run)".into());
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = std::fs::canonicalize(&home).unwrap_or_else(|_| PathBuf::from(home));
        if home.starts_with(dir) {
            return Some(format!(
                "is your home folder or a folder above it ({})",
                home.display()
            ));
        }
    }
    None
}

/// The folders includes may come from: the kernel's folder and the `-I` folders.
#[derive(Clone, Debug, Default)]
pub struct IncludeRoots {
    roots: Vec<PathBuf>,
    /// The kernel's folder when it cannot be a root, and why (said when an include needs it).
    kernel_dir_refused: Option<(PathBuf, String)>,
}

fn include_err(field: impl Into<String>, why: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelInclude, field, why)
}

impl IncludeRoots {
    /// Roots for the kernel at `source` with `-I` folders `dirs`. A `-I` folder that does
    /// not exist, is not a folder or is a system folder is refused here.
    pub fn new(source: &Path, dirs: &[PathBuf]) -> Result<IncludeRoots> {
        let mut r = IncludeRoots::default();
        let parent = source
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(k) = std::fs::canonicalize(parent) {
            match forbidden_root(&k) {
                None => r.roots.push(k),
                Some(why) => r.kernel_dir_refused = Some((k, why)),
            }
        }
        for d in dirs {
            r.roots.push(check_include_dir(d)?);
        }
        Ok(r)
    }

    /// The canonical folders.
    #[cfg(feature = "internals")]
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Looks `path` (an include candidate, '/'-separated) up: `Missing` when no such file,
    /// `Outside` when it (after symlinks) lies under no root, else its text, read only when
    /// it is a regular file of at most `budget` bytes.
    pub fn lookup(&self, path: &str, budget: usize) -> Result<Lookup> {
        let p = Path::new(path);
        let canon = match std::fs::canonicalize(p) {
            Ok(c) => c,
            Err(_) => {
                // A missing file is only "missing" when its folder is one we may look in.
                let mut lexical = lexical(p);
                if let (Some(dir), Some(name)) = (lexical.parent(), lexical.file_name()) {
                    if let Ok(d) = std::fs::canonicalize(dir) {
                        lexical = d.join(name);
                    }
                }
                if self.roots.iter().any(|r| lexical.starts_with(r)) {
                    return Ok(Lookup::Missing);
                }
                return Ok(Lookup::Outside(self.outside_why(&lexical)));
            }
        };
        if !self.roots.iter().any(|r| canon.starts_with(r)) {
            return Ok(Lookup::Outside(self.outside_why(&canon)));
        }
        read_bounded(&canon, budget, ErrorClass::KernelInclude).map(Lookup::Text)
    }

    fn outside_why(&self, p: &Path) -> String {
        let mut s = format!(
            "{} is outside the kernel's folder and the -I folders ({})",
            p.display(),
            if self.roots.is_empty() {
                "none".to_string()
            } else {
                self.roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        if let Some((k, why)) = &self.kernel_dir_refused {
            s.push_str(&format!(
                "; the kernel's folder {} {why}, so nothing is included from it (move the kernel into a project folder)",
                k.display()
            ));
        }
        s
    }
}

/// `..` and `.` removed without touching the disk (absolute paths; a relative one is taken
/// from the current folder).
fn lexical(p: &Path) -> PathBuf {
    let base = if p.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let mut out = base;
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A `-I` folder: it exists, is a folder, is no system folder; returned canonical.
pub fn check_include_dir(d: &Path) -> Result<PathBuf> {
    let field = format!("-I {}", d.display());
    let canon = std::fs::canonicalize(d)
        .map_err(|e| include_err(&field, format!("the include folder cannot be used: {e}")))?;
    if !canon.is_dir() {
        return Err(include_err(&field, "is not a folder"));
    }
    if let Some(why) = forbidden_root(&canon) {
        return Err(include_err(
            &field,
            format!(
                "{} {why}: an include folder must be a project folder, so a kernel cannot include (and have the compiler quote) files such as /etc/passwd or ~/.ssh keys",
                canon.display()
            ),
        ));
    }
    Ok(canon)
}

/// Reads `p` as UTF-8 text only when it is a regular file of at most `limit` bytes (checked
/// on the opened handle before reading; the read itself is bounded too). Opening does not
/// block on a FIFO.
pub fn read_bounded(p: &Path, limit: usize, class: ErrorClass) -> Result<String> {
    let field = p.display().to_string();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| Error::io(class, p, e))?;
    let m = f.metadata().map_err(|e| Error::io(class, p, e))?;
    if !m.is_file() {
        // The kernel source itself (class io.read) is an input like any other: io.not_regular;
        // an include keeps its own class.
        return Err(if class == ErrorClass::IoRead {
            crate::fsio::not_regular(p, &m, "kernel source")
        } else {
            Error::new(
                class,
                field,
                "is not a regular file (a device, FIFO or folder is never read as source)",
            )
        });
    }
    if m.len() > limit as u64 {
        return Err(Error::new(
            class,
            field,
            format!(
                "is {} bytes; a kernel source with its includes may hold at most {} MiB (nothing was read)",
                m.len(),
                super::sources::MAX_RESOLVED >> 20
            ),
        ));
    }
    let mut v = Vec::with_capacity(m.len() as usize);
    f.take(limit as u64 + 1)
        .read_to_end(&mut v)
        .map_err(|e| Error::io(class, p, e))?;
    if v.len() > limit {
        return Err(Error::new(
            class,
            field,
            format!("grew past {} MiB while being read", limit >> 20),
        ));
    }
    String::from_utf8(v).map_err(|e| {
        Error::at(
            class,
            e.utf8_error().valid_up_to() as u64,
            field,
            "the source is not valid UTF-8 text",
        )
    })
}

/// Reads the kernel at `path` and inlines its quoted includes, confined to its folder and
/// `include_dirs` (see the module text).
pub fn read_source(path: &Path, include_dirs: &[PathBuf]) -> Result<String> {
    let text = read_bounded(path, super::sources::MAX_RESOLVED, ErrorClass::IoRead)?;
    let roots = IncludeRoots::new(path, include_dirs)?;
    let dirs: Vec<String> = include_dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    super::sources::resolve(
        &text,
        &path.display().to_string(),
        &|p, budget| roots.lookup(p, budget),
        &dirs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_folders_and_home_are_no_include_roots_project_folders_are() {
        for d in [
            "/",
            "/etc",
            "/proc",
            "/proc/self",
            "/dev",
            "/sys",
            "/home",
            "/root",
            "/tmp",
        ] {
            assert!(forbidden_root(Path::new(d)).is_some(), "{d}");
        }
        let scratch = std::env::temp_dir().join(format!("nt-confine-{}", std::process::id()));
        std::fs::create_dir_all(scratch.join("inc")).unwrap();
        let canon = std::fs::canonicalize(scratch.join("inc")).unwrap();
        assert!(forbidden_root(&canon).is_none(), "{canon:?}");
        assert!(check_include_dir(&scratch.join("inc")).is_ok());
        let e = check_include_dir(Path::new("/")).unwrap_err();
        assert_eq!(e.class(), ErrorClass::KernelInclude);
        let e = check_include_dir(Path::new("/etc")).unwrap_err();
        assert_eq!(e.class(), ErrorClass::KernelInclude);
        // A device is refused before it is read; a small regular file is read.
        let e =
            read_bounded(Path::new("/dev/zero"), 1 << 20, ErrorClass::KernelInclude).unwrap_err();
        assert!(e.detail().contains("not a regular file"), "{e}");
        let f = scratch.join("inc/x.cuh");
        std::fs::write(&f, "X").unwrap();
        assert_eq!(read_bounded(&f, 1, ErrorClass::KernelInclude).unwrap(), "X");
        let e = read_bounded(&f, 0, ErrorClass::KernelInclude).unwrap_err();
        assert!(e.detail().contains("at most"), "{e}");
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
