//! The host tier's compile cache: a private folder (this user's, mode 0700, not a symlink, no
//! group or world write) holding compiled runners `k-<key>` with a `k-<key>.sha256` sidecar,
//! the stand-in CUDA headers and precompiled preludes. Nothing in it is used unless it checks
//! out: a folder another user owns or may write is refused (`kernel.cache`), a runner is run
//! only when its bytes hash to what the sidecar (written by us when we built it) says, and
//! re-hashed before every start; a header or prelude that differs from ours is rewritten.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorClass, Result};

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn cache_err(p: &Path, why: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelCache, p.display().to_string(), why)
}

/// The cache folder: `$NINFER_KERNEL_CACHE`, else `$TMPDIR/ninfer-kernel-cache-<uid>`; made
/// (mode 0700) when missing, checked private either way.
pub fn dir() -> Result<PathBuf> {
    let d = match std::env::var_os("NINFER_KERNEL_CACHE") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::temp_dir().join(format!("ninfer-kernel-cache-{}", euid())),
    };
    private_dir(&d)?;
    Ok(d)
}

/// Makes `d` (mode 0700; its parents as usual) or checks the one there: a real folder (not a
/// symlink), owned by this user, writable by no one else.
pub fn private_dir(d: &Path) -> Result<()> {
    match std::fs::symlink_metadata(d) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io(ErrorClass::IoWrite, parent, e))?;
            }
            match std::fs::DirBuilder::new().mode(0o700).create(d) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(ErrorClass::IoWrite, d, e)),
            }
        }
        Err(e) => return Err(Error::io(ErrorClass::IoRead, d, e)),
    }
    check_private(d, true)
}

/// `p` is this user's and nobody else may write it (`dir`: and it is a real folder).
fn check_private(p: &Path, dir: bool) -> Result<()> {
    let m = std::fs::symlink_metadata(p).map_err(|e| Error::io(ErrorClass::IoRead, p, e))?;
    let remedy = "remove it, or set NINFER_KERNEL_CACHE to a folder of your own";
    if m.file_type().is_symlink() {
        return Err(cache_err(
            p,
            format!("is a symbolic link; the kernel cache must be a real folder ({remedy})"),
        ));
    }
    if dir && !m.is_dir() {
        return Err(cache_err(p, format!("is not a folder ({remedy})")));
    }
    if !dir && !m.is_file() {
        return Err(cache_err(p, format!("is not a regular file ({remedy})")));
    }
    if m.uid() != euid() {
        return Err(cache_err(
            p,
            format!(
                "is owned by uid {}, not by this user (uid {}): another user could plant headers or runners in it ({remedy})",
                m.uid(),
                euid()
            ),
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(cache_err(
            p,
            format!(
                "has mode {:o}: writable by group or others, so its headers and runners cannot be trusted ({remedy})",
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// SHA-256 of a regular file of ours (refused otherwise), read through one handle.
pub fn hash_file(p: &Path) -> Result<[u8; 32]> {
    check_private(p, false)?;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| Error::io(ErrorClass::IoRead, p, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| Error::io(ErrorClass::IoRead, p, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(&h.finalize());
    Ok(out)
}

fn sidecar(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(".sha256");
    PathBuf::from(s)
}

/// The hash of `p` when it is ours and matches the sidecar we wrote; else `None` (and the
/// entry is removed, so it is rebuilt).
pub fn verified(p: &Path) -> Option<[u8; 32]> {
    let side = sidecar(p);
    let ok = (|| {
        check_private(&side, false).ok()?;
        let mut text = String::new();
        std::fs::File::open(&side)
            .ok()?
            .take(128)
            .read_to_string(&mut text)
            .ok()?;
        let h = hash_file(p).ok()?;
        (text.trim() == crate::digest::hex(&h)).then_some(h)
    })();
    if ok.is_none() {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(&side);
    }
    ok
}

/// Records `p`'s hash in its sidecar (after `p` is in place); returns the hash.
pub fn seal(p: &Path) -> Result<[u8; 32]> {
    let h = hash_file(p)?;
    write_private(&sidecar(p), crate::digest::hex(&h).as_bytes())?;
    Ok(h)
}

/// Refuses to run `p` unless it still hashes to `want`.
pub fn check_before_exec(p: &Path, want: &[u8; 32]) -> Result<()> {
    match hash_file(p) {
        Ok(h) if &h == want => Ok(()),
        Ok(_) => Err(cache_err(
            p,
            "the compiled runner changed after it was built and checked; it is not run (rerun to rebuild it)",
        )),
        Err(e) => Err(cache_err(
            p,
            format!("the compiled runner cannot be checked before it runs: {e}"),
        )),
    }
}

/// Writes `bytes` to `p` atomically (a fresh mode-0600 file renamed over it).
pub fn write_private(p: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let tmp = PathBuf::from(format!(
        "{}.{}-{}.tmp",
        p.display(),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, p));
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(ErrorClass::IoWrite, p, e));
    }
    Ok(())
}

/// Up to `max` bytes of a regular file of ours that nobody else may write; `None` otherwise
/// (missing, a symbolic link, another owner's, group- or world-writable, unreadable).
pub fn read_private(p: &Path, max: u64) -> Option<Vec<u8>> {
    check_private(p, false).ok()?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
        .ok()?;
    let mut v = Vec::new();
    f.take(max).read_to_end(&mut v).ok()?;
    Some(v)
}

/// `p` holds exactly `want` (a regular file of ours), rewriting it when not.
pub fn ensure_file(p: &Path, want: &[u8]) -> Result<()> {
    let same = check_private(p, false).is_ok()
        && std::fs::File::open(p)
            .and_then(|f| {
                let mut v = Vec::new();
                f.take(want.len() as u64 + 1).read_to_end(&mut v)?;
                Ok(v)
            })
            .map(|v| v == want)
            .unwrap_or(false);
    if same {
        return Ok(());
    }
    write_private(p, want)
}

/// Makes a file we wrote executable only by us.
pub fn owner_only(p: &Path, mode: u32) -> Result<()> {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(ErrorClass::IoWrite, p, e))
}
