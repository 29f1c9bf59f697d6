//! Running code we did not write (reader adapters, the host compiler, kernel runners) so
//! that it cannot hang, outlive, starve or subvert the harness.
//!
//! Every foreign command is started as `harness → supervisor → command`:
//! - the **supervisor** ([`supervisor`]) is a forked copy of the harness, a child subreaper
//!   that kills and reaps every process below it when the harness closes its lifeline pipe or
//!   dies (SIGKILL included), and kills leftovers the command leaves when it exits;
//! - the **command** runs in its own process group with `PR_SET_PDEATHSIG` (SIGKILL),
//!   resource limits ([`Limits`]: address space, CPU seconds, file size, processes; no core
//!   dumps) and default signal actions;
//! - the **harness** talks to it only through non-blocking pipes polled with deadlines, keeps
//!   bounded captures, and never joins anything a descendant can hold open.
//!
//! Not contained (README "Running untrusted readers and kernels"): the command runs with the
//! user's rights, can read the user's files and reach the network; no cgroup is used, so a
//! memory cap is per process (`RLIMIT_AS`), not per tree. Linux only (`prctl`, `/proc`).

mod supervisor;

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use supervisor::{RawLimits, REC};

/// Resource limits of one foreign command (0 = no limit for the numeric ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock deadline of the whole run (one-shot), or of one exchange (persistent).
    pub timeout: Duration,
    /// Address-space cap per process (`RLIMIT_AS`), MiB.
    pub memory_mb: u64,
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Largest file a process may write (`RLIMIT_FSIZE`), MiB.
    pub file_size_mb: u64,
    /// Processes (threads count) the user may have while the command runs (`RLIMIT_NPROC`,
    /// counted per user by the kernel: see [`Limits::default_processes`]).
    pub processes: u64,
}

impl Limits {
    /// Default address-space cap of an adapter (MiB).
    pub const DEFAULT_MEMORY_MB: u64 = 8192;
    /// Default file-size cap (MiB).
    pub const DEFAULT_FILE_SIZE_MB: u64 = 1024;
    /// Default head room of processes above what the user already runs.
    pub const DEFAULT_EXTRA_PROCESSES: u64 = 512;

    /// The defaults for a deadline: 8 GiB address space, CPU seconds 4 × the deadline + 10
    /// (several threads may work at once), 1 GiB files, 512 processes of head room.
    pub fn with_timeout(timeout: Duration) -> Limits {
        Limits {
            timeout,
            memory_mb: Self::DEFAULT_MEMORY_MB,
            cpu_seconds: cpu_for(timeout),
            file_size_mb: Self::DEFAULT_FILE_SIZE_MB,
            processes: Self::default_processes(),
        }
    }

    /// `RLIMIT_NPROC` counts every process (and thread) of the real user, whoever started
    /// it, so the cap is what the user runs now plus [`Limits::DEFAULT_EXTRA_PROCESSES`]:
    /// counted again when the last count is over a second old (a busy machine's count moves;
    /// a stale one could refuse an honest adapter's fork). Not enforced for root by the kernel.
    pub fn default_processes() -> u64 {
        static LAST: std::sync::Mutex<Option<(Instant, u64)>> = std::sync::Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        match *last {
            Some((at, n)) if at.elapsed() < Duration::from_secs(1) => n,
            _ => {
                let n = user_tasks() + Self::DEFAULT_EXTRA_PROCESSES;
                *last = Some((Instant::now(), n));
                n
            }
        }
    }

    fn raw(&self) -> RawLimits {
        RawLimits {
            address_space: self.memory_mb.saturating_mul(1 << 20),
            cpu_seconds: self.cpu_seconds,
            file_size: self.file_size_mb.saturating_mul(1 << 20),
            processes: self.processes,
        }
    }
}

/// CPU seconds for a wall-clock deadline (see [`Limits::with_timeout`]).
pub fn cpu_for(timeout: Duration) -> u64 {
    timeout
        .as_secs()
        .saturating_add(1)
        .saturating_mul(4)
        .saturating_add(10)
}

/// Tasks (threads included) the real user runs now, from `/proc/<pid>/status`.
fn user_tasks() -> u64 {
    let uid = rustix::process::getuid().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut n = 0u64;
    for e in dir.flatten() {
        let name = e.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let mut mine = false;
        let mut threads = 1;
        for l in status.lines() {
            if let Some(v) = l.strip_prefix("Uid:") {
                mine = v.split_whitespace().next() == Some(&uid.to_string());
            } else if let Some(v) = l.strip_prefix("Threads:") {
                threads = v.trim().parse().unwrap_or(1);
            }
        }
        if mine {
            n += threads;
        }
    }
    n
}

/// A foreign command to run: program, arguments, environment, input and limits.
#[derive(Clone, Debug)]
pub struct Job {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    stdin_piped: bool,
    stdout_cap: usize,
    stderr_cap: usize,
    stderr_file: Option<PathBuf>,
    limits: Limits,
}

impl Job {
    /// A job for `program` with the default limits of a 60 s deadline, stdin from /dev/null,
    /// 16 MiB of stdout and the last 64 KiB of stderr kept.
    pub fn new(program: impl AsRef<OsStr>) -> Job {
        Job {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stdin: None,
            stdin_piped: false,
            stdout_cap: 16 << 20,
            stderr_cap: 64 << 10,
            stderr_file: None,
            limits: Limits::with_timeout(Duration::from_secs(60)),
        }
    }
    /// A shell command line (`/bin/sh -c LINE`, `$0` = `name`, then `args` as `$1…`).
    pub fn shell(line: &str, name: &str) -> Job {
        Job::new("/bin/sh").arg("-c").arg(line).arg(name)
    }
    /// One more argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Job {
        self.args.push(a.as_ref().to_owned());
        self
    }
    /// More arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, it: I) -> Job {
        self.args
            .extend(it.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }
    /// One environment variable (added to the inherited environment).
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Job {
        self.env
            .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        self
    }
    /// The working directory.
    pub fn current_dir(mut self, d: impl Into<PathBuf>) -> Job {
        self.cwd = Some(d.into());
        self
    }
    /// Bytes written to the command's stdin (then closed) by [`run`].
    pub fn stdin_bytes(mut self, b: Vec<u8>) -> Job {
        self.stdin = Some(b);
        self
    }
    /// A stdin pipe kept open for [`Running::write_all`] (persistent sessions).
    pub fn stdin_pipe(mut self) -> Job {
        self.stdin_piped = true;
        self
    }
    /// Most stdout bytes kept (the rest is read and dropped, and counted as truncated).
    pub fn stdout_cap(mut self, n: usize) -> Job {
        self.stdout_cap = n;
        self
    }
    /// Most stderr bytes kept (the last ones).
    pub fn stderr_cap(mut self, n: usize) -> Job {
        self.stderr_cap = n;
        self
    }
    /// Stderr to a file (created; e.g. a kernel runner's diagnostics) instead of a pipe.
    pub fn stderr_file(mut self, p: impl Into<PathBuf>) -> Job {
        self.stderr_file = Some(p.into());
        self
    }
    /// The limits.
    pub fn limits(mut self, l: Limits) -> Job {
        self.limits = l;
        self
    }
    /// The limits set.
    pub fn get_limits(&self) -> &Limits {
        &self.limits
    }
}

/// How a contained command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Exited with this code.
    Exited(i32),
    /// Killed by this signal (not by the harness).
    Signaled(i32),
    /// Killed by the harness at the deadline.
    TimedOut,
    /// Could not be started.
    SpawnFailed(String),
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub end: End,
    /// Stdout (at most the cap).
    pub stdout: Vec<u8>,
    /// The last stderr bytes (at most the cap).
    pub stderr: Vec<u8>,
    /// Stdout went past its cap (the excess was dropped).
    // Read by tests and callers of the `internals` API only; kept so one run type serves both.
    #[cfg_attr(not(any(test, feature = "internals")), allow(dead_code))]
    pub stdout_truncated: bool,
    /// Processes the command left running after it exited (killed by the supervisor).
    pub leftovers: u32,
    /// Wall time.
    // Read by tests and callers of the `internals` API only; kept so one run type serves both.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub elapsed: Duration,
}

/// Runs `job` to completion under its deadline: stdin written and closed, stdout and stderr
/// captured (bounded), every process it started killed and reaped before this returns.
pub fn run(job: &Job) -> Outcome {
    let t0 = Instant::now();
    let deadline = t0 + job.limits.timeout;
    let mut r = match Running::spawn(&Job {
        stdin_piped: job.stdin.is_some(),
        ..job.clone()
    }) {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                end: End::SpawnFailed(e.to_string()),
                stdout: Vec::new(),
                stderr: Vec::new(),
                stdout_truncated: false,
                leftovers: 0,
                elapsed: t0.elapsed(),
            }
        }
    };
    let mut timed_out = false;
    if let Some(input) = &job.stdin {
        // An adapter may exit without reading its request: a closed pipe is not an error.
        if let Err(Stop::TimedOut) = r.write_all(input, deadline) {
            timed_out = true;
        }
    }
    r.close_stdin();
    if !timed_out && !r.read_to_end(deadline) {
        timed_out = true;
    }
    let end = if timed_out {
        r.kill_all();
        End::TimedOut
    } else {
        match r.wait(deadline) {
            Some(e) => e,
            None => {
                r.kill_all();
                End::TimedOut
            }
        }
    };
    Outcome {
        end,
        stdout: std::mem::take(&mut r.out),
        stderr: std::mem::take(&mut r.err),
        stdout_truncated: r.out_truncated,
        leftovers: r.leftovers,
        elapsed: t0.elapsed(),
    }
}

/// Why a write or read stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The deadline passed.
    TimedOut,
    /// The other side closed the pipe (the command exited or closed it).
    Closed,
}

/// One line of a command's stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A line without its newline.
    Text(Vec<u8>),
    /// Longer than the limit asked for.
    TooLong,
    /// Stdout closed.
    Eof,
    /// The deadline passed first.
    TimedOut,
}

/// A contained command in progress (its supervisor is the `Child`).
pub struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    lifeline: Option<OwnedFd>,
    report: OwnedFd,
    report_buf: Vec<u8>,
    command_pid: Option<i32>,
    out: Vec<u8>,
    out_cap: usize,
    out_truncated: bool,
    /// Bytes of `out` already handed out as lines.
    out_taken: usize,
    err: Vec<u8>,
    err_cap: usize,
    end: Option<End>,
    leftovers: u32,
    reaped: bool,
}

fn nonblocking(fd: impl AsFd) -> io::Result<()> {
    rustix::io::ioctl_fionbio(fd, true).map_err(io::Error::from)
}

impl Running {
    /// Starts `job` under a supervisor (see the module docs).
    pub fn spawn(job: &Job) -> io::Result<Running> {
        let (life_r, life_w) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(io::Error::from)?;
        let (rep_r, rep_w) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(io::Error::from)?;
        let mut cmd = Command::new(&job.program);
        cmd.args(&job.args)
            .envs(job.env.iter().map(|(k, v)| (k, v)))
            .stdin(if job.stdin_piped {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped());
        match &job.stderr_file {
            Some(p) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)?;
                cmd.stderr(Stdio::from(f));
            }
            None => {
                cmd.stderr(Stdio::piped());
            }
        }
        if let Some(d) = &job.cwd {
            cmd.current_dir(d);
        }
        cmd.process_group(0);
        let (lr, rw, limits) = (life_r.as_raw_fd(), rep_w.as_raw_fd(), job.limits.raw());
        // SAFETY: the closure only makes async-signal-safe system calls on stack data
        // (supervisor.rs); it allocates nothing.
        unsafe {
            cmd.pre_exec(move || supervisor::fork_supervisor(lr, rw, limits));
        }
        let mut child = cmd.spawn()?;
        drop(life_r);
        drop(rep_w);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        for fd in [
            stdout.as_ref().map(|s| s.as_fd()),
            stderr.as_ref().map(|s| s.as_fd()),
        ]
        .into_iter()
        .flatten()
        .chain(stdin.as_ref().map(|s| s.as_fd()))
        .chain(std::iter::once(rep_r.as_fd()))
        {
            nonblocking(fd)?;
        }
        Ok(Running {
            child,
            stdin,
            stdout,
            stderr,
            lifeline: Some(life_w),
            report: rep_r,
            report_buf: Vec::new(),
            command_pid: None,
            out: Vec::new(),
            out_cap: job.stdout_cap,
            out_truncated: false,
            out_taken: 0,
            err: Vec::new(),
            err_cap: job.stderr_cap,
            end: None,
            leftovers: 0,
            reaped: false,
        })
    }

    /// The supervisor's pid (the leader of the process group the harness kills last).
    #[cfg(feature = "internals")]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The raw stdout pipe, for a caller that reads it itself (on its own thread): the pipe
    /// closes at the latest when [`Running::kill_all`] has run. Set back to blocking.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        let s = self.stdout.take()?;
        let _ = rustix::io::ioctl_fionbio(&s, false);
        Some(s)
    }

    /// Closes the command's stdin (EOF for it).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits up to `until` for something to read or write; reads whatever is there.
    fn pump(&mut self, until: Instant, want_write: bool) -> io::Result<bool> {
        use rustix::event::{poll, PollFd, PollFlags};
        let left = until.saturating_duration_since(Instant::now());
        let ts = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: left.subsec_nanos() as i64,
        };
        let mut writable = false;
        {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            let mut slots = [usize::MAX; 4];
            if let Some(o) = &self.stdout {
                slots[0] = fds.len();
                fds.push(PollFd::new(o, PollFlags::IN));
            }
            if let Some(e) = &self.stderr {
                slots[1] = fds.len();
                fds.push(PollFd::new(e, PollFlags::IN));
            }
            if want_write {
                if let Some(i) = &self.stdin {
                    slots[2] = fds.len();
                    fds.push(PollFd::new(i, PollFlags::OUT));
                }
            }
            if fds.is_empty() {
                std::thread::sleep(left.min(Duration::from_millis(5)));
                return Ok(false);
            }
            match poll(&mut fds, Some(&ts)) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => return Ok(false),
                Err(e) => return Err(e.into()),
            }
            if slots[2] != usize::MAX && !fds[slots[2]].revents().is_empty() {
                writable = true;
            }
        }
        self.drain_stdout();
        self.drain_stderr();
        Ok(writable)
    }

    fn drain_stdout(&mut self) {
        let Some(o) = self.stdout.as_mut() else {
            return;
        };
        let mut buf = [0u8; 65536];
        loop {
            match o.read(&mut buf) {
                Ok(0) => {
                    self.stdout = None;
                    return;
                }
                Ok(n) => {
                    let room = self.out_cap.saturating_sub(self.out.len() - self.out_taken);
                    if n > room {
                        self.out_truncated = true;
                    }
                    self.out.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.stdout = None;
                    return;
                }
            }
        }
    }

    fn drain_stderr(&mut self) {
        let Some(e) = self.stderr.as_mut() else {
            return;
        };
        let mut buf = [0u8; 65536];
        loop {
            match e.read(&mut buf) {
                Ok(0) => {
                    self.stderr = None;
                    return;
                }
                Ok(n) => {
                    self.err.extend_from_slice(&buf[..n]);
                    if self.err.len() > self.err_cap {
                        let cut = self.err.len() - self.err_cap;
                        self.err.drain(..cut);
                    }
                }
                Err(x) if x.kind() == io::ErrorKind::WouldBlock => return,
                Err(x) if x.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.stderr = None;
                    return;
                }
            }
        }
    }

    /// Writes all of `data` to the command's stdin before `deadline`, reading its output
    /// meanwhile (so a command that writes before it reads cannot deadlock us).
    pub fn write_all(&mut self, data: &[u8], deadline: Instant) -> Result<(), Stop> {
        let mut done = 0;
        while done < data.len() {
            if Instant::now() >= deadline {
                return Err(Stop::TimedOut);
            }
            let writable = self.pump(deadline, true).map_err(|_| Stop::Closed)?;
            if !writable {
                continue;
            }
            let Some(w) = self.stdin.as_mut() else {
                return Err(Stop::Closed);
            };
            match w.write(&data[done..]) {
                Ok(0) => return Err(Stop::Closed),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.stdin = None;
                    return Err(Stop::Closed);
                }
            }
        }
        Ok(())
    }

    /// Reads stdout and stderr until both close; `false` if `deadline` came first.
    pub fn read_to_end(&mut self, deadline: Instant) -> bool {
        while self.stdout.is_some() || self.stderr.is_some() {
            if Instant::now() >= deadline {
                return false;
            }
            if self.pump(deadline, false).is_err() {
                return false;
            }
        }
        true
    }

    /// The next stdout line (at most `max` bytes) before `deadline`.
    pub fn read_line(&mut self, max: usize, deadline: Instant) -> Line {
        loop {
            let pending = &self.out[self.out_taken..];
            if let Some(p) = pending.iter().position(|&b| b == b'\n') {
                if p > max {
                    return Line::TooLong;
                }
                let line = pending[..p].to_vec();
                self.out_taken += p + 1;
                if self.out_taken > (1 << 20) && self.out_taken * 2 > self.out.len() {
                    self.out.drain(..self.out_taken);
                    self.out_taken = 0;
                }
                return Line::Text(line);
            }
            if pending.len() > max || self.out_truncated {
                return Line::TooLong;
            }
            if self.stdout.is_none() {
                return Line::Eof;
            }
            if Instant::now() >= deadline {
                return Line::TimedOut;
            }
            if self.pump(deadline, false).is_err() {
                return Line::Eof;
            }
        }
    }

    /// Stdout bytes captured and not yet returned as lines.
    #[cfg(feature = "internals")]
    pub fn stdout_bytes(&self) -> &[u8] {
        &self.out[self.out_taken..]
    }

    /// The last stderr bytes captured.
    pub fn stderr_bytes(&mut self) -> &[u8] {
        self.drain_stderr();
        &self.err
    }

    fn read_report(&mut self) {
        let mut buf = [0u8; 64];
        loop {
            match rustix::io::read(&self.report, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => self.report_buf.extend_from_slice(&buf[..n]),
            }
        }
        for rec in self.report_buf.chunks_exact(REC) {
            let value = i32::from_le_bytes([rec[1], rec[2], rec[3], rec[4]]);
            let left = u32::from_le_bytes([rec[5], rec[6], rec[7], rec[8]]);
            match rec[0] {
                b'P' => self.command_pid = Some(value),
                b'E' => {
                    self.end = Some(End::Exited(value));
                    self.leftovers = left;
                }
                b'S' => {
                    self.end = Some(End::Signaled(value));
                    self.leftovers = left;
                }
                b'K' => {
                    self.end.get_or_insert(End::TimedOut);
                    self.leftovers = left;
                }
                _ => {}
            }
        }
        let whole = self.report_buf.len() / REC * REC;
        self.report_buf.drain(..whole);
    }

    /// Whether the command has ended (its supervisor has exited), without waiting.
    pub fn try_wait(&mut self) -> Option<End> {
        if !self.reaped {
            match self.child.try_wait() {
                Ok(Some(st)) => self.reaped_with(st),
                Ok(None) => return None,
                Err(_) => {
                    self.reaped = true;
                    self.end.get_or_insert(End::Exited(-1));
                }
            }
        }
        self.end.clone()
    }

    fn reaped_with(&mut self, st: std::process::ExitStatus) {
        self.reaped = true;
        self.read_report();
        if self.end.is_none() {
            use std::os::unix::process::ExitStatusExt;
            // The supervisor itself died (killed from outside): say how.
            self.end = Some(match st.signal() {
                Some(s) => End::Signaled(s),
                None => End::Exited(st.code().unwrap_or(-1)),
            });
        }
    }

    /// Waits until `until` for the supervisor's end of the report pipe to close (it has
    /// exited then); reads what it wrote meanwhile.
    fn report_closed(&mut self, until: Instant) -> bool {
        use rustix::event::{poll, PollFd, PollFlags};
        let left = until.saturating_duration_since(Instant::now());
        let ts = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: left.subsec_nanos() as i64,
        };
        let mut fds = [PollFd::new(&self.report, PollFlags::IN)];
        if poll(&mut fds, Some(&ts)).unwrap_or(0) == 0 {
            return false;
        }
        let mut buf = [0u8; 64];
        loop {
            match rustix::io::read(&self.report, &mut buf) {
                Ok(0) => return true,
                Ok(n) => self.report_buf.extend_from_slice(&buf[..n]),
                Err(_) => return false,
            }
        }
    }

    /// Waits for the command to end before `deadline` (reading its output meanwhile).
    pub fn wait(&mut self, deadline: Instant) -> Option<End> {
        loop {
            if let Some(e) = self.try_wait() {
                return Some(e);
            }
            if Instant::now() >= deadline {
                return None;
            }
            if self.stdout.is_some() || self.stderr.is_some() {
                let _ = self.pump(
                    deadline.min(Instant::now() + Duration::from_millis(2)),
                    false,
                );
            } else if self.report_closed(deadline) {
                // Its last act was closing the pipe: the supervisor is exiting now.
                match self.child.wait() {
                    Ok(st) => self.reaped_with(st),
                    Err(_) => {
                        self.reaped = true;
                        self.end.get_or_insert(End::Exited(-1));
                    }
                }
            }
        }
    }

    /// Kills the command and every process below it and reaps them; returns how many
    /// processes other than the command itself were still there.
    pub fn kill_all(&mut self) -> u32 {
        self.stdin = None;
        if !self.reaped {
            // Cutting the lifeline makes the supervisor kill its tree, report and exit.
            self.lifeline = None;
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(2) {
                if self.try_wait().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            if !self.reaped {
                // A supervisor that does not answer: kill it and the command's group.
                if let Some(pid) = self.command_pid.and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.reaped = true;
                self.read_report();
                self.end.get_or_insert(End::TimedOut);
            }
        }
        self.drain_stdout();
        self.drain_stderr();
        self.leftovers
    }

    /// Processes the command left behind (known once it has ended).
    pub fn leftovers(&self) -> u32 {
        self.leftovers
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests;
