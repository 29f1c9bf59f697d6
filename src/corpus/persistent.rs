//! Persistent adapter sessions (PROTOCOL.md §4.6): one long-lived adapter process answers many
//! requests as JSON lines on one stdin/stdout, the way protobuf's conformance testee serves its
//! runner. Whatever goes wrong inside one exchange — a crash, a timeout, an answer with another
//! id, a line that is not an answer — is charged to the case being asked, and the session is
//! discarded so the next case starts on a fresh process.

use serde_json::Value;
use std::time::{Duration, Instant};

use super::manifest::CaseEntry;
use super::process::{leftovers_reason, AdapterCommand};
use super::protocol::{request_json, Answer, PERSISTENT_ARG, PROTOCOL_VERSION};
use crate::contain::{End, Line, Running, Stop};

/// The longest answer line read (as for a per-case adapter's stdout).
const MAX_LINE: usize = 16 << 20;

/// A running persistent adapter under `crate::contain`: its request pipe and its answer lines
/// are written and read with the per-case deadline, so an adapter that stops reading or
/// answering costs one timeout, never a hang.
pub struct Session {
    run: Running,
    /// Killed and reaped.
    dead: bool,
}

impl Session {
    /// Starts `<adapter> --persistent` under the runner's containment and reads its handshake
    /// (`{"protocol": 3, "persistent": true}`) within `opts.timeout`.
    pub fn start(opts: &AdapterCommand) -> Result<Session, String> {
        let job = opts
            .job(PERSISTENT_ARG, true)
            .env("NINFER_PROTOCOL_MODE", "persistent")
            .stdin_pipe()
            .stdout_cap(MAX_LINE + 2)
            .stderr_cap(64 << 10);
        let run = Running::spawn(&job).map_err(|e| format!("could not start the adapter: {e}"))?;
        let mut s = Session { run, dead: false };
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
        match s.next_line(Instant::now() + opts.timeout, opts.timeout) {
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

    /// The next stdout line before `deadline`; on `Err` the session is already killed and the
    /// text says what happened (crash with its status and stderr, timeout, overlong line).
    fn next_line(&mut self, deadline: Instant, timeout: Duration) -> Result<String, String> {
        match self.run.read_line(MAX_LINE, deadline) {
            Line::Text(t) => Ok(String::from_utf8_lossy(&t).trim_end().to_string()),
            Line::TooLong => {
                self.kill();
                Err(format!("an answer line longer than {MAX_LINE} bytes"))
            }
            Line::Eof => Err(self.crashed()),
            Line::TimedOut => {
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
    /// The deadline covers writing the request and reading the answer.
    pub fn ask_request(
        &mut self,
        case: &CaseEntry,
        request: Value,
        opts: &AdapterCommand,
    ) -> Result<Answer, String> {
        let mut line = request.to_string();
        line.push('\n');
        let deadline = Instant::now() + opts.timeout;
        match self.run.write_all(line.as_bytes(), deadline) {
            Ok(()) => {}
            Err(Stop::Closed) => return Err(self.crashed()),
            Err(Stop::TimedOut) => {
                self.kill();
                return Err(format!(
                    "timeout after {:.1}s: the adapter did not read its request (adapter \
                     killed; restarted for the next case)",
                    opts.timeout.as_secs_f64()
                ));
            }
        }
        let text = self.next_line(deadline, opts.timeout)?;
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
        self.run.close_stdin();
        let status = self.run.wait(Instant::now() + Duration::from_secs(2));
        self.kill();
        let how = match status {
            Some(End::Signaled(s)) => format!("killed by signal {s}"),
            Some(End::Exited(c)) if c >= 128 => format!("exit {c} (signal {})", c - 128),
            Some(End::Exited(c)) => format!("exit {c}"),
            Some(End::TimedOut) | Some(End::SpawnFailed(_)) => "exit status unknown".into(),
            None => "closed its stdout without exiting".into(),
        };
        let left = match self.run.leftovers() {
            0 => String::new(),
            n => format!("; it {}", leftovers_reason(n)),
        };
        format!(
            "crash: persistent adapter {how} while answering this case (restarted for the next case){left} {}",
            self.stderr_tail()
        )
    }

    /// The last non-empty stderr line, cut to 200 characters.
    fn stderr_tail(&mut self) -> String {
        let err = String::from_utf8_lossy(self.run.stderr_bytes()).into_owned();
        err.lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect())
            .unwrap_or_default()
    }

    /// Kills the adapter, everything it started, and reaps them.
    fn kill(&mut self) {
        if self.dead {
            return;
        }
        self.dead = true;
        self.run.kill_all();
    }

    /// Ends the session after the last case: closes stdin, waits briefly for the adapter to
    /// exit, kills what is left. Returns the processes it left behind (killed).
    pub fn finish(mut self) -> u32 {
        self.run.close_stdin();
        let _ = self.run.wait(Instant::now() + Duration::from_secs(2));
        self.kill();
        self.run.leftovers()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}
