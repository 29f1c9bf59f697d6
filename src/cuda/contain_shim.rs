//! TEMPORARY stand-in for the lead's `crate::contain` module (same names, same meaning), so
//! the host tier can be written against that API before it lands on main. Delete this file
//! and switch the `use` lines in host.rs to `crate::contain` when merging main.
//!
//! Kept small: a child runs in its own process group with rlimits set before exec; the end
//! of a run kills the group and every descendant found under the child in /proc, and reaps
//! the child. Bounded capture; a deadline on the whole run.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Resource limits of a job (0: no limit, except `timeout`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock limit of the whole run.
    pub timeout: Duration,
    /// RLIMIT_AS in MiB.
    pub memory_mb: u64,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: u64,
    /// RLIMIT_FSIZE in MiB.
    pub file_size_mb: u64,
    /// RLIMIT_NPROC.
    pub processes: u64,
}

/// A program to run and how.
#[derive(Clone, Debug, Default)]
pub struct Job {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    stdout_cap: usize,
    stderr_cap: usize,
    limits: Limits,
}

impl Job {
    /// A job running `program`.
    pub fn new(program: impl AsRef<OsStr>) -> Job {
        Job {
            program: program.as_ref().to_os_string(),
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 20,
            ..Default::default()
        }
    }
    /// One argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_os_string());
        self
    }
    /// Several arguments.
    pub fn args<I, S>(mut self, a: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(a.into_iter().map(|s| s.as_ref().to_os_string()));
        self
    }
    /// An environment variable (the rest of the environment is inherited).
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_os_string(), v.as_ref().to_os_string()));
        self
    }
    /// Working directory.
    pub fn current_dir(mut self, p: impl Into<PathBuf>) -> Self {
        self.cwd = Some(p.into());
        self
    }
    /// Bytes written to standard input (else it is /dev/null).
    pub fn stdin_bytes(mut self, b: Vec<u8>) -> Self {
        self.stdin = Some(b);
        self
    }
    /// Most bytes of standard output kept.
    pub fn stdout_cap(mut self, n: usize) -> Self {
        self.stdout_cap = n;
        self
    }
    /// Most bytes of standard error kept (0: standard error is /dev/null).
    pub fn stderr_cap(mut self, n: usize) -> Self {
        self.stderr_cap = n;
        self
    }
    /// Resource limits.
    pub fn limits(mut self, l: Limits) -> Self {
        self.limits = l;
        self
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        c.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        c.stdout(Stdio::piped());
        c.stderr(if self.stderr_cap == 0 {
            Stdio::null()
        } else {
            Stdio::piped()
        });
        c.process_group(0);
        let l = self.limits.clone();
        let set = move |res: libc::__rlimit_resource_t, v: u64| -> std::io::Result<()> {
            if v == 0 {
                return Ok(());
            }
            let r = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            // SAFETY: setrlimit is async-signal-safe and `r` lives on this stack.
            if unsafe { libc::setrlimit(res, &r) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        };
        // SAFETY: the closure only calls setrlimit (async-signal-safe) and allocates nothing.
        unsafe {
            c.pre_exec(move || {
                set(libc::RLIMIT_AS, l.memory_mb.saturating_mul(1 << 20))?;
                set(libc::RLIMIT_CPU, l.cpu_seconds)?;
                set(libc::RLIMIT_FSIZE, l.file_size_mb.saturating_mul(1 << 20))?;
                set(libc::RLIMIT_NPROC, l.processes)?;
                set(libc::RLIMIT_CORE, 0).ok();
                Ok(())
            });
        }
        c
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Exit status.
    Exited(i32),
    /// Killed by this signal.
    Signaled(i32),
    /// Ran past `Limits::timeout` and was killed.
    TimedOut,
    /// Did not start.
    SpawnFailed(String),
}

/// What a run gave.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub end: End,
    /// Standard output, at most `stdout_cap` bytes.
    pub stdout: Vec<u8>,
    /// Standard error, at most `stderr_cap` bytes.
    pub stderr: Vec<u8>,
    /// Descendants still alive at the end (killed).
    pub leftovers: usize,
    /// Wall-clock time.
    pub elapsed: Duration,
}

fn drain(r: impl Read + Send + 'static, cap: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut r = r;
        let mut keep = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(keep.len());
                    keep.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        keep
    })
}

/// Runs `job` to its end (or its deadline) and kills whatever it left behind.
pub fn run(job: &Job) -> Outcome {
    let t0 = Instant::now();
    let mut r = match Running::spawn(job) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                end: End::SpawnFailed(e.to_string()),
                stdout: Vec::new(),
                stderr: Vec::new(),
                leftovers: 0,
                elapsed: t0.elapsed(),
            }
        }
    };
    let out = r.take_stdout().map(|o| drain(o, job.stdout_cap));
    let err = r.child.stderr.take().map(|e| drain(e, job.stderr_cap));
    if let (Some(mut w), Some(bytes)) = (r.child.stdin.take(), job.stdin.clone()) {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = w.write_all(&bytes);
        });
    }
    let deadline = if job.limits.timeout.is_zero() {
        None
    } else {
        Some(t0 + job.limits.timeout)
    };
    let end = loop {
        if let Some(e) = r.try_wait() {
            break e;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break End::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let leftovers = r.kill_all();
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    Outcome {
        end,
        stdout,
        stderr,
        leftovers,
        elapsed: t0.elapsed(),
    }
}

/// A started job; dropping it kills it and every descendant.
pub struct Running {
    child: Child,
    ended: Option<End>,
    swept: bool,
}

fn ppid_of(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every live descendant of `root` (by parent links in /proc).
fn descendants(root: u32) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let pids: Vec<(u32, u32)> = rd
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, ppid_of(p)?)))
        .collect();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(pids.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out.remove(0);
    out
}

impl Running {
    /// Starts `job` (its standard output piped; take it with [`Running::take_stdout`]).
    pub fn spawn(job: &Job) -> std::io::Result<Running> {
        let child = job.command().spawn()?;
        Ok(Running {
            child,
            ended: None,
            swept: false,
        })
    }
    /// The child's standard output.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }
    /// The end, once the child has exited (its descendants may live on until `kill_all`).
    pub fn try_wait(&mut self) -> Option<End> {
        if let Some(e) = &self.ended {
            return Some(e.clone());
        }
        let s = self.child.try_wait().ok()??;
        let e = match (s.code(), s.signal()) {
            (Some(c), _) => End::Exited(c),
            (None, Some(g)) => End::Signaled(g),
            _ => End::Exited(-1),
        };
        self.ended = Some(e.clone());
        Some(e)
    }
    /// Kills the process group and every descendant, reaps the child; how many others were
    /// alive.
    pub fn kill_all(&mut self) -> usize {
        if self.swept {
            return 0;
        }
        self.swept = true;
        let pid = self.child.id();
        let mut n = 0;
        for _ in 0..3 {
            let d = descendants(pid);
            if self.ended.is_none() {
                let _ = self.child.kill();
            }
            // SAFETY: kill has no memory preconditions; the group is the child's own.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
            for p in &d {
                // SAFETY: as above.
                unsafe {
                    libc::kill(*p as i32, libc::SIGKILL);
                }
            }
            n = n.max(d.len());
            if d.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if self.ended.is_none() {
            let _ = self.child.wait();
            self.ended = Some(End::Signaled(9));
        }
        n
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill_all();
    }
}
