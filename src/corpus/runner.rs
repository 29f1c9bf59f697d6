//! `check-reader`: runs every corpus case through a third-party reader adapter under a timeout
//! and an address-space cap (PROTOCOL.md §5): one process per case by default, or one
//! persistent process per job when the adapter declares `"persistent": true` (§4.6).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::manifest::{CaseEntry, Manifest};
use super::persistent::Session;
use super::protocol::{judge_with, request_json, Answer, ClassCheck, Judging, Verdict};
use crate::gguf::RuleLayer;

/// `--capabilities FILE`: what a reader declares it does not support, and how it names errors.
#[derive(Clone, Debug, Default)]
pub struct Capabilities {
    /// The reader's name (`reader` in capabilities.json).
    pub reader: String,
    /// Glob patterns over case features (`kind:ninfer`, `ggml_type:142`, `codec:q1_0`).
    pub unsupported: Vec<String>,
    /// `error_classes`: strict or lenient class checking (absent = lenient).
    pub classes: Option<ClassCheck>,
    /// `rule_layers`: the layers the reader implements; `None` (absent) means all four.
    pub rule_layers: Option<Vec<RuleLayer>>,
    /// `order_insensitive: true`: GGUF observations are compared without file order.
    pub order_insensitive: bool,
    /// `persistent: true`: the adapter serves many requests as JSON lines (PROTOCOL.md §4.6).
    pub persistent: bool,
}

impl Capabilities {
    /// Reads and validates a capabilities.json file.
    pub fn load(path: &Path) -> anyhow::Result<Capabilities> {
        let v: Value = serde_json::from_str(&crate::fsio::read_input_string(path)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let unsupported = v
            .get("unsupported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| {
                        x.get("feature")
                            .or(Some(x))
                            .and_then(Value::as_str)
                            .map(String::from)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let classes = match v.get("error_classes").and_then(Value::as_str) {
            Some("strict") => Some(ClassCheck::Strict),
            Some("lenient") | None => Some(ClassCheck::Lenient),
            Some(other) => anyhow::bail!(
                "{}: error_classes must be strict or lenient, not {other}",
                path.display()
            ),
        };
        let rule_layers = match v.get("rule_layers") {
            None => None,
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for x in a {
                    let name = x.as_str().unwrap_or("");
                    let l = RuleLayer::from_name(name).ok_or_else(|| {
                        anyhow::anyhow!(
                            "{}: rule_layers: '{name}' is not one of mainline, loader, recommended, spec",
                            path.display()
                        )
                    })?;
                    out.push(l);
                }
                Some(out)
            }
            Some(_) => anyhow::bail!(
                "{}: rule_layers must be an array of layer names",
                path.display()
            ),
        };
        let order_insensitive = match v.get("order_insensitive") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => anyhow::bail!("{}: order_insensitive must be a boolean", path.display()),
        };
        let persistent = match v.get("persistent") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => anyhow::bail!("{}: persistent must be a boolean", path.display()),
        };
        Ok(Capabilities {
            rule_layers,
            order_insensitive,
            persistent,
            reader: v
                .get("reader")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            unsupported,
            classes,
        })
    }

    /// The first declared-unsupported feature of `case`, if any.
    pub fn unsupported_feature(&self, case: &CaseEntry) -> Option<String> {
        for f in &case.features {
            if self.unsupported.iter().any(|p| glob_match(p, f)) {
                return Some(f.clone());
            }
        }
        None
    }

    /// How this reader's answers are judged.
    pub fn judging(&self) -> Judging {
        let mut j = Judging::new(self.classes.unwrap_or(ClassCheck::Lenient));
        if let Some(l) = &self.rule_layers {
            j.rule_layers = l.clone();
        }
        j.order_insensitive = self.order_insensitive;
        j
    }

    fn declares(&self, feature: &str) -> bool {
        self.unsupported.iter().any(|p| glob_match(p, feature))
    }
}

/// `*` (any run) and `?` (one character) glob matching.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0usize, 0usize, None, 0usize);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// `--known-failures FILE`: one case id per line; `#` starts a comment.
pub fn load_known_failures(path: &Path) -> anyhow::Result<BTreeSet<String>> {
    let text = crate::fsio::read_input_string(path)?;
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// What `check-reader` runs and how.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The corpus root (absolute).
    pub corpus: PathBuf,
    /// Adapter command; the case file (or `--persistent`) is appended.
    pub adapter: String,
    /// Case ids expected to fail.
    pub known_failures: BTreeSet<String>,
    /// The reader's declared capabilities.
    pub capabilities: Capabilities,
    /// Only case ids matching this glob.
    pub filter: Option<String>,
    /// Time limit per case.
    pub timeout: Duration,
    /// Address-space cap per adapter process (MiB; 0 = none).
    pub memory_mb: u64,
    /// Adapters run at a time.
    pub jobs: usize,
    /// Print only failures and the summary.
    pub quiet: bool,
    /// One process per case even when the capabilities declare `persistent` (`--per-case`).
    pub per_case: bool,
}

impl RunOptions {
    /// Whether cases go to persistent sessions: declared by the reader and not overridden.
    pub fn persistent(&self) -> bool {
        self.capabilities.persistent && !self.per_case
    }
}

/// The outcome of one case after known failures are applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The case passed.
    Pass,
    /// The case failed.
    Fail,
    /// Declared unsupported; not run.
    Skip,
    /// Failed, and listed in the known failures.
    KnownFailure,
    /// Listed in the known failures but passed: the list is stale; fails the run.
    Stale,
}

impl Status {
    /// The status as written in `--json` reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::KnownFailure => "known-failure",
            Status::Stale => "stale",
        }
    }
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// Its status.
    pub status: Status,
    /// Why it failed (empty when it passed).
    pub detail: String,
    /// Wall time of the case, in milliseconds.
    pub ms: u64,
}

/// Counts per status.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed (not known failures).
    pub failed: usize,
    /// Cases declared unsupported.
    pub skipped: usize,
    /// Known failures that failed as listed.
    pub known: usize,
    /// Known failures that passed (stale entries).
    pub stale: usize,
}

/// The results of a `check-reader` run.
pub struct Report {
    /// Per case, in manifest order.
    pub results: Vec<CaseResult>,
    /// Counts per status.
    pub summary: Summary,
    /// Known-failure ids that name no case of the manifest.
    pub unknown_known: Vec<String>,
}

impl Report {
    /// Whether the run passes: no failures, no stale or unknown known-failure entries.
    pub fn ok(&self) -> bool {
        self.summary.failed == 0 && self.summary.stale == 0 && self.unknown_known.is_empty()
    }

    /// The `--json` report.
    pub fn to_json(&self, opts: &RunOptions, manifest: &Manifest) -> Value {
        json!({
            "adapter": opts.adapter,
            "reader": opts.capabilities.reader,
            "protocol_version": manifest.protocol_version,
            "spec_version": manifest.spec_version,
            "summary": {
                "passed": self.summary.passed,
                "failed": self.summary.failed,
                "skipped": self.summary.skipped,
                "known_failures": self.summary.known,
                "stale_known_failures": self.summary.stale,
            },
            "unknown_known_failures": self.unknown_known,
            "results": self.results.iter().map(|r| json!({
                "id": r.id, "status": r.status.name(), "detail": r.detail, "ms": r.ms,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Raw result of running one adapter process.
enum Proc {
    Done {
        code: Option<i32>,
        signal: Option<i32>,
        stdout: String,
        stderr: String,
    },
    Timeout,
    SpawnError(String),
}

fn run_process(opts: &RunOptions, case: &CaseEntry) -> Proc {
    let file = opts.corpus.join(&case.file);
    let request = request_json(case, &opts.corpus).to_string();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(format!("{} \"$1\"", opts.adapter))
        .arg("adapter")
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NINFER_CASE_ID", &case.id)
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1")
        .env("MKL_NUM_THREADS", "1");
    isolate_child(&mut cmd, opts.memory_mb);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Proc::SpawnError(e.to_string()),
    };
    let pid = child.id() as i32;
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.by_ref().take(16 << 20).read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.by_ref().take(1 << 20).read_to_end(&mut b);
        b
    });
    let status = wait_then_kill_group(&mut child, pid, opts.timeout);
    let status = match status {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Proc::Timeout;
        }
    };
    let _ = writer.join();
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    Proc::Done {
        code: status.code(),
        signal: status.signal(),
        stdout,
        stderr,
    }
}

fn tail(s: &str) -> String {
    let l: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    l.last()
        .map(|x| x.chars().take(160).collect())
        .unwrap_or_default()
}

/// Runs one case: the raw verdict before known failures are applied.
fn run_case(opts: &RunOptions, case: &CaseEntry) -> (bool, String) {
    match run_process(opts, case) {
        Proc::SpawnError(e) => (false, format!("could not start the adapter: {e}")),
        Proc::Timeout => (
            false,
            format!("timeout after {:.1}s", opts.timeout.as_secs_f64()),
        ),
        Proc::Done {
            signal: Some(s),
            stderr,
            ..
        } => (
            false,
            format!("crash: killed by signal {s} {}", tail(&stderr)),
        ),
        Proc::Done {
            code,
            stdout,
            stderr,
            ..
        } => {
            let code = code.unwrap_or(-1);
            if code >= 128 {
                return (
                    false,
                    format!(
                        "crash: exit {code} (signal {}) {}",
                        code - 128,
                        tail(&stderr)
                    ),
                );
            }
            let answer = match Answer::parse(&stdout) {
                Ok(a) => a,
                Err(why) => {
                    return (
                        false,
                        format!("garbage answer (exit {code}): {why} {}", tail(&stderr)),
                    );
                }
            };
            if code != answer.exit_code() {
                return (
                    false,
                    format!(
                        "crash or protocol error: exit {code} with a {} answer {}",
                        answer.to_json()["result"],
                        tail(&stderr)
                    ),
                );
            }
            judge_answer(opts, case, &answer)
        }
    }
}

/// Judges a well-formed answer (either isolation mode).
fn judge_answer(opts: &RunOptions, case: &CaseEntry, answer: &Answer) -> (bool, String) {
    match judge_with(case, answer, &opts.capabilities.judging()) {
        Verdict::Pass => (true, String::new()),
        Verdict::Fail(why) => (false, why),
        Verdict::Unsupported(feature) => {
            if opts.capabilities.declares(&feature) {
                (false, format!("answered unsupported ({feature}), declared, but the case does not carry that feature"))
            } else {
                (false, format!("undeclared unsupported: {feature}"))
            }
        }
    }
}

/// Runs one case on the worker's persistent session, starting one when there is none; a
/// failed exchange fails this case alone and drops the session (the next case restarts it).
fn run_case_persistent(
    opts: &RunOptions,
    case: &CaseEntry,
    session: &mut Option<Session>,
    handshake_failed: &mut Option<String>,
) -> (bool, String) {
    // An adapter that cannot complete a handshake is not tried again by this worker: a
    // per-case adapter declared persistent would otherwise cost one timeout per case.
    if let Some(why) = handshake_failed {
        return (false, format!("{why} (on an earlier case; not retried)"));
    }
    if session.is_none() {
        match Session::start(opts) {
            Ok(s) => *session = Some(s),
            Err(why) => {
                *handshake_failed = Some(why.clone());
                return (false, why);
            }
        }
    }
    let s = session.as_mut().expect("started above");
    match s.ask(case, opts) {
        Ok(answer) => judge_answer(opts, case, &answer),
        Err(why) => {
            *session = None;
            (false, why)
        }
    }
}

/// The cases `filter` (a glob over case ids; `None` = all) selects, in manifest order.
pub fn select<'m>(manifest: &'m Manifest, filter: Option<&str>) -> Vec<&'m CaseEntry> {
    manifest
        .cases
        .iter()
        .filter(|c| filter.is_none_or(|f| glob_match(f, &c.id)))
        .collect()
}

/// Runs the selected cases (in parallel, `opts.jobs` adapters at a time); results in manifest order.
pub fn run(manifest: &Manifest, opts: &RunOptions) -> Report {
    let selected = select(manifest, opts.filter.as_deref());
    let slots: Vec<Mutex<Option<CaseResult>>> = selected.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let printed = Mutex::new(0usize);
    let jobs = opts.jobs.max(1);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                // This worker's persistent adapter (PROTOCOL.md §4.6), started on first use.
                let mut session: Option<Session> = None;
                let mut handshake_failed: Option<String> = None;
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= selected.len() {
                        break;
                    }
                    let case = selected[i];
                    let t0 = Instant::now();
                    let known = opts.known_failures.contains(&case.id);
                    let (status, detail) =
                        if let Some(f) = opts.capabilities.unsupported_feature(case) {
                            (Status::Skip, format!("declared unsupported: {f}"))
                        } else {
                            let (ok, why) = if opts.persistent() {
                                run_case_persistent(opts, case, &mut session, &mut handshake_failed)
                            } else {
                                run_case(opts, case)
                            };
                            match (ok, known) {
                                (true, false) => (Status::Pass, why),
                                (false, false) => (Status::Fail, why),
                                (false, true) => (Status::KnownFailure, why),
                                (true, true) => (
                                    Status::Stale,
                                    "listed as a known failure but passes: remove it from the list"
                                        .into(),
                                ),
                            }
                        };
                    *slots[i].lock().unwrap() = Some(CaseResult {
                        id: case.id.clone(),
                        status,
                        detail,
                        ms: t0.elapsed().as_millis() as u64,
                    });
                    // Print in order as results become available.
                    let mut p = printed.lock().unwrap();
                    while *p < slots.len() {
                        let g = slots[*p].lock().unwrap();
                        let Some(r) = g.as_ref() else { break };
                        let show = !opts.quiet || matches!(r.status, Status::Fail | Status::Stale);
                        if show {
                            let tag = match r.status {
                                Status::Pass => "PASS ",
                                Status::Fail => "FAIL ",
                                Status::Skip => "SKIP ",
                                Status::KnownFailure => "XFAIL",
                                Status::Stale => "STALE",
                            };
                            // The id comes from a manifest file, the detail from the adapter.
                            let id = crate::text::escape(&r.id);
                            if r.detail.is_empty() {
                                println!("{tag} {id}");
                            } else {
                                println!("{tag} {id}  -- {}", crate::text::escape(&r.detail));
                            }
                        }
                        drop(g);
                        *p += 1;
                    }
                }
                if let Some(s) = session {
                    s.finish();
                }
            });
        }
    });
    let results: Vec<CaseResult> = slots
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every case ran"))
        .collect();
    let mut summary = Summary::default();
    for r in &results {
        match r.status {
            Status::Pass => summary.passed += 1,
            Status::Fail => summary.failed += 1,
            Status::Skip => summary.skipped += 1,
            Status::KnownFailure => summary.known += 1,
            Status::Stale => summary.stale += 1,
        }
    }
    let ids: BTreeSet<&str> = manifest.cases.iter().map(|c| c.id.as_str()).collect();
    let unknown_known = opts
        .known_failures
        .iter()
        .filter(|k| !ids.contains(k.as_str()))
        .cloned()
        .collect();
    Report {
        results,
        summary,
        unknown_known,
    }
}

/// The summary lines printed after the per-case results.
pub fn summary_text(r: &Report) -> String {
    let s = &r.summary;
    let mut out = format!(
        "{} passed, {} failed, {} skipped",
        s.passed,
        s.failed + s.stale,
        s.skipped
    );
    if s.known > 0 || s.stale > 0 {
        out.push_str(&format!(
            "\n({} known failures as listed; {} stale known-failure entries)",
            s.known, s.stale
        ));
    }
    for k in &r.unknown_known {
        out.push_str(&format!(
            "\nknown-failures names a case that does not exist: {}",
            crate::text::escape(k)
        ));
    }
    out.push_str(if r.ok() {
        "\nRESULT: PASSED"
    } else {
        "\nRESULT: FAILED"
    });
    out
}

/// A row group of the interop matrix for a case.
pub fn matrix_group(c: &CaseEntry) -> String {
    let has = |p: &str| c.features.iter().any(|f| glob_match(p, f));
    let feat = |prefix: &str| {
        c.features
            .iter()
            .find(|f| f.starts_with(prefix))
            .map(|f| f[prefix.len()..].to_string())
    };
    match c.layer.as_str() {
        "codec" => format!("codec: {}", feat("codec:").unwrap_or_default()),
        "gguf" => {
            if has("gguf:hostile") {
                "gguf: hostile (spec/gguf.md#gguf-hostile-inputs)".into()
            } else if let Some(t) = feat("ggml_type:") {
                let name = crate::spec::get()
                    .ggml
                    .types
                    .iter()
                    .find(|x| x.id.to_string() == t)
                    .map(|x| x.name.clone())
                    .unwrap_or_default();
                match t.as_str() {
                    "42" | "142" | "143" | "53" | "47" => format!("gguf: fork type {t}"),
                    _ => format!("gguf: type {name}"),
                }
            } else if has("gguf:value-*") || has("gguf:array") {
                "gguf: metadata values".into()
            } else {
                "gguf: layout, versions, controls".into()
            }
        }
        "ninfer" => {
            if has("ninfer:violation") {
                "ninfer: rule violations".into()
            } else if has("ninfer:ternary") {
                "ninfer: ternary row-split".into()
            } else {
                "ninfer: other layouts, resources, controls".into()
            }
        }
        "pack" => format!("pack: {}", c.kind),
        other => other.to_string(),
    }
}

/// Renders the interop matrix from run reports (`--json` outputs) as Markdown.
pub fn render_matrix(manifest: &Manifest, runs: &[(String, Value)]) -> String {
    let groups: BTreeMap<String, Vec<&CaseEntry>> =
        manifest.cases.iter().fold(BTreeMap::new(), |mut m, c| {
            m.entry(matrix_group(c)).or_insert_with(Vec::new).push(c);
            m
        });
    let status: Vec<BTreeMap<String, String>> = runs
        .iter()
        .map(|(_, v)| {
            v["results"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|r| {
                            (
                                r["id"].as_str().unwrap_or("").to_string(),
                                r["status"].as_str().unwrap_or("").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let mut s = String::new();
    s.push_str("| family / feature | cases |");
    for (name, _) in runs {
        s.push_str(&format!(" {name} |"));
    }
    s.push_str("\n|---|---:|");
    for _ in runs {
        s.push_str("---|");
    }
    s.push('\n');
    let cell = |st: &BTreeMap<String, String>, cases: &[&CaseEntry]| {
        let (mut p, mut f, mut u) = (0, 0, 0);
        for c in cases {
            match st.get(&c.id).map(String::as_str) {
                Some("pass") => p += 1,
                Some("skip") => u += 1,
                Some(_) => f += 1,
                None => {}
            }
        }
        let mut parts = Vec::new();
        if p > 0 {
            parts.push(format!("{p} pass"));
        }
        if f > 0 {
            parts.push(format!("**{f} fail**"));
        }
        if u > 0 {
            parts.push(format!("{u} unsupported"));
        }
        if parts.is_empty() {
            "–".to_string()
        } else {
            parts.join(", ")
        }
    };
    for (g, cases) in &groups {
        s.push_str(&format!("| {g} | {} |", cases.len()));
        for st in &status {
            s.push_str(&format!(" {} |", cell(st, cases)));
        }
        s.push('\n');
    }
    let all: Vec<&CaseEntry> = manifest.cases.iter().collect();
    s.push_str(&format!("| **all** | **{}** |", all.len()));
    for st in &status {
        s.push_str(&format!(" **{}** |", cell(st, &all).replace("**", "")));
    }
    s.push('\n');
    s
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
