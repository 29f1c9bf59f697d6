//! The supervisor: a forked copy of the harness (never exec'd) that sits between the harness
//! and the foreign command and outlives neither.
//!
//! Why a process of its own: the harness can die by SIGKILL, which no handler sees, and a
//! foreign command can leave its process group (`setsid`) or daemonize (double fork). The
//! supervisor is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every orphan of the command
//! is re-parented to it, and it watches a *lifeline* pipe whose only write end the harness
//! holds: when the harness closes it (a timeout, the end of a run) or dies for any reason, the
//! kernel closes it, the supervisor kills every process below it, reaps them and exits.
//!
//! Everything here runs between `fork` and `_exit` in a copy of a multi-threaded process: no
//! allocation, no locks, only system calls on stack buffers (async-signal-safe), which is why
//! this file uses raw `libc` calls where `rustix` would allocate or has no wrapper.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, RawFd};

/// Milliseconds the command's descendants get to exit on their own after the command itself
/// has exited, before they are killed as leftovers.
const GRACE_MS: u64 = 50;

/// Report records (one `write` each, 9 bytes: tag, i32, u32): `P` the command's pid; `E` it
/// exited with a code, `S` it was killed by a signal (value), `K` the harness cut the lifeline
/// (value unused); the u32 is the number of leftover processes the supervisor killed.
pub(super) const REC: usize = 9;

/// Limits applied to the command (in the grandchild, before exec), as plain numbers so that
/// nothing is allocated after the fork. 0 = no limit.
#[derive(Clone, Copy, Debug)]
pub(super) struct RawLimits {
    pub address_space: u64,
    pub cpu_seconds: u64,
    pub file_size: u64,
    pub processes: u64,
}

fn now_ms() -> u64 {
    let mut ts = MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: clock_gettime writes the timespec; async-signal-safe.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr());
        let ts = ts.assume_init();
        (ts.tv_sec as u64) * 1000 + (ts.tv_nsec as u64) / 1_000_000
    }
}

/// Sets soft and hard limit (a raw `prlimit64`, nothing allocated); a refusal leaves it as it was.
fn set_limit(resource: rustix::process::Resource, value: u64) {
    if value == 0 {
        return;
    }
    let lim = rustix::process::Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    let _ = rustix::process::setrlimit(resource, lim);
}

/// Called from `pre_exec` in the forked child (already the leader of a fresh process group,
/// with the pipes as its stdio). Forks the command: returns `Ok` in the command's process, which
/// then execs; the supervisor itself never returns.
pub(super) fn fork_supervisor(lifeline: RawFd, report: RawFd, limits: RawLimits) -> io::Result<()> {
    // SAFETY: prctl/fork/setpgid/signal/setrlimit are async-signal-safe system calls.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        let pid = libc::fork();
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // The command: its own group (so one kill reaches everything it did not move
            // away), killed if the supervisor dies, limited, with default signal actions.
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            for sig in [
                libc::SIGXFSZ,
                libc::SIGPIPE,
                libc::SIGINT,
                libc::SIGTERM,
                libc::SIGHUP,
                libc::SIGQUIT,
            ] {
                libc::signal(sig, libc::SIG_DFL);
            }
            use rustix::process::Resource;
            set_limit(Resource::As, limits.address_space);
            set_limit(Resource::Cpu, limits.cpu_seconds);
            set_limit(Resource::Fsize, limits.file_size);
            set_limit(Resource::Nproc, limits.processes);
            let no_core = rustix::process::Rlimit {
                current: Some(0),
                maximum: Some(0),
            };
            let _ = rustix::process::setrlimit(Resource::Core, no_core);
            return Ok(());
        }
        supervise(pid, lifeline, report)
    }
}

/// Closes every descriptor but the two the supervisor keeps (stdio is /dev/null by then), so
/// that no pipe of the harness or of a sibling job stays open because of us.
unsafe fn close_others(keep_a: RawFd, keep_b: RawFd) {
    let (lo, hi) = if keep_a < keep_b {
        (keep_a, keep_b)
    } else {
        (keep_b, keep_a)
    };
    let ranges = [(3, lo - 1), (lo + 1, hi - 1), (hi + 1, i32::MAX)];
    for (a, b) in ranges {
        if a > b {
            continue;
        }
        let r = libc::syscall(
            libc::SYS_close_range,
            a as libc::c_uint,
            b as libc::c_uint,
            0,
        );
        if r != 0 {
            // No close_range (Linux < 5.9): close one by one up to the descriptor limit.
            let mut lim = MaybeUninit::<libc::rlimit>::uninit();
            let top = if libc::getrlimit(libc::RLIMIT_NOFILE, lim.as_mut_ptr()) == 0 {
                (lim.assume_init().rlim_cur as i64).min(1 << 20) as i32
            } else {
                4096
            };
            for fd in a..=b.min(top) {
                libc::close(fd);
            }
        }
    }
}

unsafe fn write_record(fd: RawFd, tag: u8, value: i32, leftovers: u32) {
    let mut rec = [0u8; REC];
    rec[0] = tag;
    rec[1..5].copy_from_slice(&value.to_le_bytes());
    rec[5..9].copy_from_slice(&leftovers.to_le_bytes());
    libc::write(fd, rec.as_ptr().cast(), REC);
}

/// The supervision loop: reap, watch the lifeline, kill leftovers. Never returns.
unsafe fn supervise(main: libc::pid_t, lifeline: RawFd, report: RawFd) -> ! {
    for sig in [
        libc::SIGPIPE,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
    ] {
        // Only the lifeline stops the supervisor (a terminal's ^C reaches the harness).
        libc::signal(sig, libc::SIG_IGN);
    }
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    if null >= 0 {
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        if null > 2 {
            libc::close(null);
        }
    }
    close_others(lifeline, report);
    write_record(report, b'P', main, 0);
    // A pidfd of the command wakes the poll below the moment it exits (Linux 5.3+); without
    // one the loop looks every 10 ms.
    let pidfd = libc::syscall(libc::SYS_pidfd_open, main, 0) as libc::c_int;
    let mut main_status: Option<libc::c_int> = None;
    let mut main_done_at = 0u64;
    loop {
        let none_left = loop {
            let mut st: libc::c_int = 0;
            let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
            if r > 0 {
                if r == main {
                    main_status = Some(st);
                    main_done_at = now_ms();
                }
                continue;
            }
            break r < 0;
        };
        if let Some(st) = main_status {
            let leftovers = if none_left {
                Some(0)
            } else if now_ms().saturating_sub(main_done_at) >= GRACE_MS {
                Some(kill_tree())
            } else {
                None
            };
            if let Some(n) = leftovers {
                if libc::WIFSIGNALED(st) {
                    write_record(report, b'S', libc::WTERMSIG(st), n);
                } else {
                    write_record(report, b'E', libc::WEXITSTATUS(st), n);
                }
                libc::_exit(0);
            }
        }
        let mut pfd = [
            libc::pollfd {
                fd: lifeline,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let (n, wait) = match (main_status.is_some(), pidfd >= 0) {
            (true, _) => (1, 2),
            // Orphans that exit on their own are reaped at least every 100 ms.
            (false, true) => (2, 100),
            (false, false) => (1, 10),
        };
        if libc::poll(pfd.as_mut_ptr(), n, wait) > 0 && pfd[0].revents != 0 {
            // The harness closed the lifeline or died: everything below us goes.
            let n = kill_tree();
            let n = if main_status.is_none() {
                n.saturating_sub(1)
            } else {
                n
            };
            write_record(report, b'K', 0, n);
            libc::_exit(0);
        }
    }
}

/// The process id of `/proc/<name>/stat`'s parent field, if `name` is a live process.
unsafe fn parent_of(proc_fd: BorrowedFd<'_>, name: &[u8]) -> Option<libc::pid_t> {
    let mut path = [0u8; 48];
    let tail = b"/stat\0";
    if name.len() + tail.len() > path.len() {
        return None;
    }
    path[..name.len()].copy_from_slice(name);
    path[name.len()..name.len() + tail.len()].copy_from_slice(tail);
    let fd = libc::openat(
        std::os::fd::AsRawFd::as_raw_fd(&proc_fd),
        path.as_ptr().cast(),
        libc::O_RDONLY | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 512];
    let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
    libc::close(fd);
    if n <= 0 {
        return None;
    }
    let stat = &buf[..n as usize];
    // "pid (comm) S ppid ...": comm may hold anything, so parse after the last ')'.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat[close + 1..]
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    fields.next()?;
    let ppid = fields.next()?;
    let mut v: libc::pid_t = 0;
    for &d in ppid {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((d - b'0') as libc::pid_t)?;
    }
    Some(v)
}

/// Kills every process below the supervisor and reaps them: each round kills its children
/// (and their process groups); their own children are then re-parented here (subreaper) and
/// go in the next round. Returns how many processes were killed.
unsafe fn kill_tree() -> u32 {
    let me = libc::getpid();
    let my_group = libc::getpgrp();
    let mut killed = 0u32;
    // Pids already counted (a killed process stays in /proc until it is reaped).
    let mut seen = [0 as libc::pid_t; 512];
    let mut dirbuf = [MaybeUninit::<u8>::uninit(); 4096];
    for _round in 0..10_000 {
        let proc_fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        let mut found = false;
        if proc_fd >= 0 {
            let fd = BorrowedFd::borrow_raw(proc_fd);
            let mut dir = rustix::fs::RawDir::new(fd, &mut dirbuf);
            while let Some(Ok(entry)) = dir.next() {
                let name = entry.file_name().to_bytes();
                if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
                    continue;
                }
                if parent_of(fd, name) != Some(me) {
                    continue;
                }
                let mut pid: libc::pid_t = 0;
                for &d in name {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((d - b'0') as libc::pid_t);
                }
                found = true;
                let group = libc::getpgid(pid);
                if group > 0 && group != my_group {
                    libc::kill(-group, libc::SIGKILL);
                }
                if libc::kill(pid, libc::SIGKILL) == 0 && !seen.contains(&pid) {
                    if let Some(slot) = seen.iter_mut().find(|p| **p == 0) {
                        *slot = pid;
                    }
                    killed = killed.saturating_add(1);
                }
            }
            libc::close(proc_fd);
        }
        let none_left = loop {
            let mut st: libc::c_int = 0;
            let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
            if r <= 0 {
                break r < 0;
            }
        };
        if none_left || (!found && proc_fd < 0) {
            break;
        }
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 500_000,
        };
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
    killed
}
