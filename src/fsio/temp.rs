//! Temporary files of atomic writes: their names, their removal on SIGINT/SIGTERM/SIGHUP
//! (through `crate::shutdown`) and on SIGBUS (a handler of its own: a fault signal cannot wait
//! for the signal thread), and the removal of ones a killed earlier run left behind.
//!
//! Name scheme: `.<output name>.tmp-<pid>` beside the output. When that would exceed
//! NAME_MAX (255 bytes on Linux file systems), the output name is cut and a hash of the whole
//! name appended, so any legal output name has a legal temporary name.

use sha2::{Digest, Sha256};
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Longest file name component (bytes) on Linux file systems.
pub const NAME_MAX: usize = 255;

/// The part of a temporary name before the pid: `.<name>.tmp-` or its shortened form.
fn stem_for(name: &OsStr) -> Vec<u8> {
    let name = name.as_bytes();
    // Room for "." + ".tmp-" + the widest pid (u32: 10 digits).
    let budget = NAME_MAX - 1 - 5 - 10;
    let mut stem = vec![b'.'];
    if name.len() <= budget {
        stem.extend_from_slice(name);
    } else {
        let hash = Sha256::digest(name);
        let tag: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
        // "~" + 16 hex digits identify the full name; the cut prefix keeps it recognizable.
        stem.extend_from_slice(&name[..budget - 17]);
        stem.push(b'~');
        stem.extend_from_slice(tag.as_bytes());
    }
    stem.extend_from_slice(b".tmp-");
    stem
}

/// The temporary path this process uses for an atomic write of `path`.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default();
    let mut bytes = stem_for(name);
    bytes.extend_from_slice(std::process::id().to_string().as_bytes());
    path.with_file_name(OsString::from_vec(bytes))
}

/// Whether a process with this id exists (EPERM means it exists but is not ours).
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence and permission; nothing is delivered.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes temporary files of earlier runs writing `path` whose process is gone. Only names
/// of this module's scheme for this very output are considered, only regular files, and never
/// one whose pid is alive. Returns the removed paths.
pub fn remove_stale_temps(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().unwrap_or_default();
    let stem = stem_for(name);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.as_bytes().strip_prefix(stem.as_slice()) else {
            continue;
        };
        if pid.is_empty() || pid.len() > 10 || !pid.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Some(pid) = std::str::from_utf8(pid)
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || pid_alive(pid) {
            continue;
        }
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// Slots of the live temporary paths; the signal handler reads them without locking.
const SLOTS: usize = 64;
static LIVE: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// A temporary file registered for removal on SIGINT/SIGTERM while the guard lives.
pub struct LiveTemp {
    slot: Option<usize>,
}

impl LiveTemp {
    /// Registers `path` (installing the signal handlers on first use). With every slot taken
    /// the file is not registered; a later run still removes it as stale.
    pub fn register(path: &Path) -> LiveTemp {
        install_handlers();
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return LiveTemp { slot: None };
        };
        let ptr = c.into_raw();
        for (i, s) in LIVE.iter().enumerate() {
            if s.compare_exchange(
                std::ptr::null_mut(),
                ptr,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
            {
                return LiveTemp { slot: Some(i) };
            }
        }
        // SAFETY: `ptr` came from `into_raw` above and was never shared.
        drop(unsafe { CString::from_raw(ptr) });
        LiveTemp { slot: None }
    }
}

impl Drop for LiveTemp {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The string is leaked, not freed: a handler running on another thread may have
            // loaded the pointer just before this swap. A path per finished write is bounded.
            LIVE[i].store(std::ptr::null_mut(), Ordering::Release);
        }
    }
}

/// Unlinks every registered temporary file (async-signal-safe: atomic loads and `unlink`).
pub fn remove_live_temps() {
    for s in LIVE.iter() {
        let p = s.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: `p` is a NUL-terminated string that is never freed.
            unsafe { libc::unlink(p) };
        }
    }
}

/// The stderr line of the SIGBUS handler (a mapped input shrank under the reader).
const BUS_MESSAGE: &[u8] =
    b"error: [io.read] an input file changed while being read: a memory-mapped \
input became shorter than when it was opened (another process truncated or rewrote it); \
the temporary output files were removed and nothing was written\n";

/// SIGBUS: a read of a mapped input past its new end. Returning would fault again, so the
/// handler removes the live temporary files, says what happened and exits 2 (an input
/// error). Async-signal-safe: atomic loads, `unlink`, `write`, `_exit`.
extern "C" fn on_bus(_sig: libc::c_int) {
    remove_live_temps();
    // SAFETY: write(2) and _exit(2) are async-signal-safe; the buffer is a static.
    unsafe {
        libc::write(2, BUS_MESSAGE.as_ptr().cast(), BUS_MESSAGE.len());
        libc::_exit(2);
    }
}

/// Process-wide guards of output writing, installed once at the start of the binary: the
/// shutdown thread (`crate::shutdown::install`, which also ignores SIGXFSZ, so a file-size
/// limit makes the write fail with EFBIG, reported as `io.write` naming the output, temporary
/// removed) and the SIGBUS handler [`on_bus`] (a mapped input truncated by another process).
pub fn install_process_guards() {
    crate::shutdown::install();
    // SAFETY: one sigaction call; on_bus is async-signal-safe.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_bus as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut act.sa_mask);
        act.sa_flags = 0;
        libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut());
    }
}

/// Temporary files go first when a stop signal arrives (`crate::shutdown`).
fn install_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Registered for the life of the process: the slots outlive every write.
        std::mem::forget(crate::shutdown::on_signal(
            crate::shutdown::Stage::Temps,
            remove_live_temps,
        ));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_name_fits_name_max_for_every_legal_name_length() {
        let dir = tempfile::tempdir().unwrap();
        for len in [1, 200, 238, 239, 240, 252, 255] {
            let name = "n".repeat(len);
            let t = temp_path_for(&dir.path().join(&name));
            let t_name = t.file_name().unwrap().len();
            assert!(t_name <= NAME_MAX, "{len}: temp name {t_name} bytes");
            std::fs::write(&t, b"x").unwrap();
        }
        // Two long names that share the cut prefix get different temporary names.
        let a = temp_path_for(Path::new(&format!("{}a", "n".repeat(254))));
        let b = temp_path_for(Path::new(&format!("{}b", "n".repeat(254))));
        assert_ne!(a, b);
    }

    #[test]
    fn only_dead_pids_of_this_outputs_scheme_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("model.gguf");
        // pid_max on Linux is at most 2^22, so this pid cannot be alive.
        let dead = dir.path().join(".model.gguf.tmp-4294967295");
        let alive = dir.path().join(format!(
            ".model.gguf.tmp-{}",
            std::os::unix::process::parent_id()
        ));
        let other_output = dir.path().join(".other.gguf.tmp-4294967295");
        let not_a_pid = dir.path().join(".model.gguf.tmp-12x");
        for p in [&dead, &alive, &other_output, &not_a_pid] {
            std::fs::write(p, b"x").unwrap();
        }
        let removed = remove_stale_temps(&out);
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(alive.exists() && other_output.exists() && not_a_pid.exists());
    }

    #[test]
    fn registered_paths_are_released_on_drop() {
        let g = LiveTemp::register(Path::new("/nonexistent/x"));
        let i = g.slot.unwrap();
        assert!(!LIVE[i].load(Ordering::Acquire).is_null());
        drop(g);
        assert!(LIVE[i].load(Ordering::Acquire).is_null());
    }
}
