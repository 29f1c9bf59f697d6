//! Persistent adapter sessions (PROTOCOL.md §4.6): one long-lived adapter process answers many
//! requests as JSON lines on one stdin/stdout, the way protobuf's conformance testee serves its
//! runner. Whatever goes wrong inside one exchange — a crash, a timeout, an answer with another
//! id, a line that is not an answer — is charged to the case being asked, and the session is
//! discarded so the next case starts on a fresh process.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::manifest::CaseEntry;
use super::process::{isolate_child, AdapterCommand};
use super::protocol::{request_json, Answer, PERSISTENT_ARG, PROTOCOL_VERSION};

/// The longest answer line read (as for a per-case adapter's stdout).
const MAX_LINE: u64 = 16 << 20;
/// Lines of the adapter's stderr kept for failure messages.
const STDERR_LINES: usize = 8;

/// One line of the adapter's stdout, or why there is none.
enum Line {
    Text(String),
    TooLong,
    Eof,
}

/// A running persistent adapter: its process group, its request pipe and its answer lines.
pub struct Session {
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Killed and reaped: the pid may belong to someone else now.
    dead: bool,
}

/// Reads newline-terminated lines of at most `MAX_LINE` bytes into `tx` until EOF.
fn pump_lines(out: impl Read, tx: mpsc::Sender<Line>) {
    let mut r = BufReader::new(out);
    loop {
        let mut buf = Vec::new();
        match (&mut r).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Line::Eof);
                return;
            }
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_LINE => {
                let _ = tx.send(Line::TooLong);
                return;
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf).trim_end().to_string();
                if tx.send(Line::Text(text)).is_err() {
                    return;
                }
            }
        }
    }
}

/// Keeps the last `STDERR_LINES` non-empty stderr lines (each cut to 200 characters).
fn pump_stderr(err: impl Read, keep: Arc<Mutex<VecDeque<String>>>) {
    let mut r = BufReader::new(err);
    loop {
        let mut buf = Vec::new();
        match (&mut r).take(64 << 10).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line: String = String::from_utf8_lossy(&buf)
                    .trim()
                    .chars()
                    .take(200)
                    .collect();
                if !line.is_empty() {
                    let mut k = keep.lock().unwrap_or_else(|p| p.into_inner());
                    if k.len() == STDERR_LINES {
                        k.pop_front();
                    }
                    k.push_back(line);
                }
            }
        }
    }
}

impl Session {
    /// Starts `<adapter> --persistent` under the runner's isolation and reads its handshake
    /// (`{"protocol": 3, "persistent": true}`) within `opts.timeout`.
    pub fn start(opts: &AdapterCommand) -> Result<Session, String> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("{} \"$1\"", opts.adapter))
            .arg("adapter")
            .arg(PERSISTENT_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("NINFER_PROTOCOL_MODE", "persistent")
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("OMP_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1");
        isolate_child(&mut cmd, opts.memory_mb);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("could not start the adapter: {e}"))?;
        let pid = child.id() as i32;
        let (tx, lines) = mpsc::channel();
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            // Both are Stdio::piped() above.
            let _ = child.kill();
            let _ = child.wait();
            return Err("could not start the adapter: its stdout/stderr pipes are missing".into());
        };
        std::thread::spawn(move || pump_lines(out, tx));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || pump_stderr(err, keep));
        let mut s = Session {
            stdin: child.stdin.take(),
            child,
            pid,
            lines,
            stderr,
            dead: false,
        };
        let check = |text: &str| -> Result<(), String> {
            let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
            if v.get("persistent") != Some(&Value::Bool(true)) {
                return Err("no \"persistent\": true".into());
            }
            match v.get("protocol").and_then(Value::as_u64) {
                Some(p) if p >= u64::from(PROTOCOL_VERSION) => Ok(()),
                other => Err(format!(
                    "protocol {other:?}, persistent mode needs {PROTOCOL_VERSION}"
                )),
            }
        };
        match s.next_line(opts.timeout) {
            Ok(text) => match check(&text) {
                Ok(()) => Ok(s),
                Err(why) => {
                    let head: String = text.chars().take(80).collect();
                    s.kill();
                    Err(format!(
                        "persistent adapter handshake refused: {why}: {head:?}"
                    ))
                }
            },
            Err(why) => Err(format!("persistent adapter handshake failed: {why}")),
        }
    }

    /// The next stdout line within `timeout`; on `Err` the session is already killed and the
    /// text says what happened (crash with its status and stderr, timeout, overlong line).
    fn next_line(&mut self, timeout: Duration) -> Result<String, String> {
        match self.lines.recv_timeout(timeout) {
            Ok(Line::Text(t)) => Ok(t),
            Ok(Line::TooLong) => {
                self.kill();
                Err(format!("an answer line longer than {MAX_LINE} bytes"))
            }
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => Err(self.crashed()),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(format!(
                    "timeout after {:.1}s (adapter killed; restarted for the next case)",
                    timeout.as_secs_f64()
                ))
            }
        }
    }

    /// Asks one case. `Ok` is a well-formed answer for this case's id; `Err` is a failure
    /// charged to this case, after which the session is dead (the caller starts a new one).
    pub fn ask(&mut self, case: &CaseEntry, opts: &AdapterCommand) -> Result<Answer, String> {
        self.ask_request(case, request_json(case, &opts.corpus), opts)
    }

    /// Asks `request` (a request for `case`, possibly with extra members such as `localize`).
    pub fn ask_request(
        &mut self,
        case: &CaseEntry,
        request: Value,
        opts: &AdapterCommand,
    ) -> Result<Answer, String> {
        let mut line = request.to_string();
        line.push('\n');
        let t0 = Instant::now();
        let sent = match self.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if sent.is_err() {
            return Err(self.crashed());
        }
        let left = opts.timeout.saturating_sub(t0.elapsed());
        let text = self.next_line(left)?;
        let v: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) => {
                let why = Answer::parse(&text).err().unwrap_or_default();
                self.kill();
                return Err(format!(
                    "protocol error: garbage answer line: {why} (adapter restarted)"
                ));
            }
        };
        match v.get("id").and_then(Value::as_str) {
            Some(id) if id == case.id => {}
            other => {
                self.kill();
                return Err(format!(
                    "protocol error: answer for id {} while {:?} was asked (adapter restarted)",
                    other.map_or("<none>".to_string(), |s| format!("{s:?}")),
                    case.id
                ));
            }
        }
        Answer::parse(&text).map_err(|why| {
            self.kill();
            format!("protocol error: {why} (adapter restarted)")
        })
    }

    /// Describes an adapter that closed its stdout: its exit status and its last stderr lines.
    fn crashed(&mut self) -> String {
        // Closing stdin first lets a well-behaved adapter exit; then give it a moment.
        self.stdin = None;
        let t0 = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if t0.elapsed() < Duration::from_secs(2) => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                _ => break None,
            }
        };
        self.kill();
        let how = match status {
            Some(s) if s.signal().is_some() => {
                format!("killed by signal {}", s.signal().unwrap_or(0))
            }
            Some(s) => match s.code() {
                Some(c) if c >= 128 => format!("exit {c} (signal {})", c - 128),
                Some(c) => format!("exit {c}"),
                None => "exit status unknown".into(),
            },
            None => "closed its stdout without exiting".into(),
        };
        format!(
            "crash: persistent adapter {how} while answering this case (restarted for the next case) {}",
            self.stderr_tail()
        )
    }

    fn stderr_tail(&self) -> String {
        let k = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        k.back().cloned().unwrap_or_default()
    }

    /// Kills the adapter's whole process group and reaps it.
    fn kill(&mut self) {
        self.stdin = None;
        if self.dead {
            return;
        }
        self.dead = true;
        // SAFETY: kill(2) on the adapter's own process group.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Ends the session after the last case: closes stdin, waits briefly, kills the group.
    pub fn finish(mut self) {
        self.stdin = None;
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}
