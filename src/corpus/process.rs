//! Running an adapter process (PROTOCOL.md §5.1): isolation (own process group, address-space
//! cap, no core dumps), the timeout that kills the whole group, and what a persistent session
//! needs to start one. Shared by the per-case runner, persistent sessions and the differential
//! fuzzer, so that none of them imports another.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// How to start and bound an adapter: the part of `runner::RunOptions` a process needs.
#[derive(Clone, Debug)]
pub struct AdapterCommand {
    /// The corpus root (absolute): case files and inputs are passed under it.
    pub corpus: PathBuf,
    /// Adapter command; the case file (or `--persistent`) is appended.
    pub adapter: String,
    /// Time limit per case.
    pub timeout: Duration,
    /// Address-space cap per adapter process (MiB; 0 = none).
    pub memory_mb: u64,
}

/// Puts an adapter child in its own process group (so a timeout kills everything it started),
/// caps its address space at `memory_mb` MiB (0 = no cap) and disables core dumps.
pub(crate) fn isolate_child(cmd: &mut Command, memory_mb: u64) {
    let mem = memory_mb.saturating_mul(1 << 20);
    // SAFETY: only async-signal-safe calls (setpgid, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if mem > 0 {
                let lim = libc::rlimit {
                    rlim_cur: mem as libc::rlim_t,
                    rlim_max: mem as libc::rlim_t,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
            }
            let core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &core);
            Ok(())
        });
    }
}

/// Polls `child` until it exits or `timeout` passes, then kills its whole process group
/// (grandchildren included) in every case; `None` means it timed out or could not be waited on.
pub(crate) fn wait_then_kill_group(
    child: &mut std::process::Child,
    pid: i32,
    timeout: Duration,
) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= timeout => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    // SAFETY: kill(2) on the adapter's own process group.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    status
}
