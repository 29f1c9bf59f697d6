//! `check-reader`: runs every corpus case through a third-party reader adapter under a timeout
//! and an address-space cap (PROTOCOL.md §5): one process per case by default, or one
//! persistent process per job when the adapter declares `"persistent": true` (§4.6).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::known::KnownFailures;
use super::manifest::{CaseEntry, Manifest};
use super::persistent::Session;
use super::process::AdapterCommand;
use super::protocol::{judge_with, request_json, Answer, ClassCheck, Judgement, Judging};
use crate::contain::End;
use crate::gguf::RuleLayer;

/// The keys a capabilities.json may have (`check-reader --help` documents each).
pub const CAPABILITY_KEYS: &[&str] = &[
    "reader",
    "version",
    "description",
    "error_classes",
    "unsupported",
    "rule_layers",
    "order_insensitive",
    "persistent",
    "localize",
];

/// `--capabilities FILE`: what a reader declares it does not support, and how it names errors.
#[derive(Clone, Debug, Default)]
pub struct Capabilities {
    /// The reader's name (`reader` in capabilities.json).
    pub reader: String,
    /// Glob patterns over case features (`kind:ninfer`, `ggml_type:142`, `codec:q1_0`), with
    /// every encoding name expanded to all its tags (`features::expand`).
    pub unsupported: Vec<String>,
    /// Per entry of `unsupported`: the name as declared and the reason written beside it.
    pub declared: Vec<(String, Option<String>)>,
    /// `error_classes`: strict or lenient class checking (absent = lenient).
    pub classes: Option<ClassCheck>,
    /// `rule_layers`: the layers the reader implements; `None` (absent) means all four.
    pub rule_layers: Option<Vec<RuleLayer>>,
    /// `order_insensitive: true`: GGUF observations are compared without file order.
    pub order_insensitive: bool,
    /// `persistent: true`: the adapter serves many requests as JSON lines (PROTOCOL.md §4.6).
    pub persistent: bool,
    /// `localize: true`: the adapter answers a `localize` request with its values (§4.7).
    pub localize: bool,
}

impl Capabilities {
    /// Reads and validates a capabilities.json file (errors of class `reader.capabilities`).
    pub fn load(path: &Path) -> crate::Result<Capabilities> {
        let text = crate::fsio::read_input_string(path)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            crate::Error::at(
                crate::ErrorClass::ReaderCapabilities,
                0,
                path.display().to_string(),
                format!("not JSON: {e}"),
            )
        })?;
        Capabilities::from_json(&v, &path.display().to_string())
    }

    /// Parses a capabilities object; `what` names it in errors.
    pub fn from_json(v: &Value, what: &str) -> crate::Result<Capabilities> {
        let bad = |key: &str, why: String| {
            crate::Error::new(
                crate::ErrorClass::ReaderCapabilities,
                format!("{what}: {key}"),
                why,
            )
        };
        let Some(obj) = v.as_object() else {
            return Err(bad("(top level)", "must be a JSON object".into()));
        };
        for k in obj.keys() {
            if !CAPABILITY_KEYS.contains(&k.as_str()) {
                let hint = super::features::closest(k, CAPABILITY_KEYS.iter().copied())
                    .map(|c| format!("; did you mean '{c}'?"))
                    .unwrap_or_default();
                return Err(bad(
                    k,
                    format!("unknown key (known: {}){hint}", CAPABILITY_KEYS.join(", ")),
                ));
            }
        }
        let mut unsupported = Vec::new();
        let mut declared = Vec::new();
        match v.get("unsupported") {
            None => {}
            Some(Value::Array(a)) => {
                for (i, x) in a.iter().enumerate() {
                    let (name, why) = match x {
                        Value::String(s) => (s.clone(), None),
                        Value::Object(o) => match o.get("feature").and_then(Value::as_str) {
                            Some(f) => (
                                f.to_string(),
                                o.get("why")
                                    .or_else(|| o.get("reason"))
                                    .and_then(Value::as_str)
                                    .map(String::from),
                            ),
                            None => {
                                return Err(bad(
                                    &format!("unsupported[{i}]"),
                                    "an object entry needs a string member 'feature'".into(),
                                ))
                            }
                        },
                        _ => {
                            return Err(bad(
                                &format!("unsupported[{i}]"),
                                "must be a feature name (string) or {\"feature\", \"why\"}".into(),
                            ))
                        }
                    };
                    if let Some(why) = super::features::glob_problem(&name) {
                        return Err(bad(&format!("unsupported[{i}]"), why));
                    }
                    for tag in super::features::expand(&name) {
                        unsupported.push(tag);
                        declared.push((name.clone(), why.clone()));
                    }
                }
            }
            Some(_) => return Err(bad("unsupported", "must be an array".into())),
        }
        let classes = match v.get("error_classes") {
            Some(Value::String(s)) if s == "strict" => Some(ClassCheck::Strict),
            Some(Value::String(s)) if s == "lenient" => Some(ClassCheck::Lenient),
            None => Some(ClassCheck::Lenient),
            Some(other) => {
                return Err(bad(
                    "error_classes",
                    format!("must be \"strict\" or \"lenient\", not {other}"),
                ))
            }
        };
        let rule_layers = match v.get("rule_layers") {
            None => None,
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for x in a {
                    let name = x.as_str().unwrap_or("");
                    let l = RuleLayer::from_name(name).ok_or_else(|| {
                        bad(
                            "rule_layers",
                            format!("'{name}' is not one of mainline, loader, recommended, spec"),
                        )
                    })?;
                    out.push(l);
                }
                Some(out)
            }
            Some(_) => return Err(bad("rule_layers", "must be an array of layer names".into())),
        };
        let flag = |key: &str| match v.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(key, "must be a boolean".into())),
        };
        let reader = match v.get("reader") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(bad("reader", "must be a string".into())),
        };
        Ok(Capabilities {
            rule_layers,
            order_insensitive: flag("order_insensitive")?,
            persistent: flag("persistent")?,
            localize: flag("localize")?,
            reader,
            unsupported,
            declared,
            classes,
        })
    }

    /// Refuses a declared name or glob that matches no feature of the corpus (a typo would
    /// silently declare nothing), with a did-you-mean (`reader.capabilities`).
    pub fn check_features(&self, manifest: &Manifest) -> crate::Result<()> {
        let mut seen = BTreeSet::new();
        for (name, _) in &self.declared {
            if !seen.insert(name.as_str()) {
                continue;
            }
            if !super::features::matches_any(manifest, name) {
                let names = super::features::all_names(manifest);
                let hint = super::features::closest(name, names.iter().map(String::as_str))
                    .map(|c| format!("; did you mean '{c}'?"))
                    .unwrap_or_default();
                return Err(crate::Error::new(
                    crate::ErrorClass::ReaderCapabilities,
                    "unsupported",
                    format!(
                        "'{name}' matches no feature of any case (check-reader --list-features \
                         prints the vocabulary){hint}"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The SKIP detail of `case`: the feature, the name it was declared as, and the reason
    /// written in the capabilities.
    pub fn skip_reason(&self, case: &CaseEntry) -> Option<String> {
        for f in &case.features {
            if let Some(i) = self.unsupported.iter().position(|p| glob_match(p, f)) {
                let (name, why) = self.declared.get(i).cloned().unwrap_or_default();
                let mut s = format!("declared unsupported: {f}");
                if name != *f {
                    s.push_str(&format!(" (declared as {name})"));
                }
                if let Some(w) = why {
                    s.push_str(&format!(": {w}"));
                }
                return Some(s);
            }
        }
        None
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

pub use super::features::glob_match;

/// `--filter` (repeatable): a case is selected when its id matches any of the globs; no
/// globs selects every case.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// The globs, as given.
    pub globs: Vec<String>,
}

impl Filter {
    /// The filter of `globs`.
    pub fn new(globs: &[String]) -> Filter {
        Filter {
            globs: globs.to_vec(),
        }
    }

    /// Whether `id` is selected.
    pub fn matches(&self, id: &str) -> bool {
        self.globs.is_empty() || self.globs.iter().any(|g| glob_match(g, id))
    }

    /// Refuses a glob that selects no case (the run would pass vacuously), with the closest
    /// case id as a hint (`corpus.filter`).
    pub fn check(&self, manifest: &Manifest) -> crate::Result<()> {
        for g in &self.globs {
            if let Some(why) = super::features::glob_problem(g) {
                return Err(crate::Error::new(
                    crate::ErrorClass::CorpusFilter,
                    "--filter",
                    format!("'{}…' is {why}", g.chars().take(40).collect::<String>()),
                ));
            }
            if !manifest.cases.iter().any(|c| glob_match(g, &c.id)) {
                let hint =
                    super::features::closest(g, manifest.cases.iter().map(|c| c.id.as_str()))
                        .map(|c| format!("; did you mean '{c}'?"))
                        .unwrap_or_default();
                return Err(crate::Error::new(
                    crate::ErrorClass::CorpusFilter,
                    "--filter",
                    format!(
                        "'{g}' matches none of the {} case ids; nothing would be checked{hint}",
                        manifest.cases.len()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `--known-failures FILE`: `ID  REASON  # comment` lines (`known::KnownFailures::parse`).
pub fn load_known_failures(path: &Path) -> crate::Result<KnownFailures> {
    KnownFailures::load(path)
}

/// What `check-reader` runs and how.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The corpus root (absolute).
    pub corpus: PathBuf,
    /// Adapter command; the case file (or `--persistent`) is appended.
    pub adapter: String,
    /// Case ids expected to fail, each with the reason it fails with.
    pub known_failures: KnownFailures,
    /// `--accept-changed`: a known failure that fails for another reason (XFAIL-CHANGED)
    /// does not fail the run.
    pub accept_changed: bool,
    /// The reader's declared capabilities.
    pub capabilities: Capabilities,
    /// Only case ids matching one of these globs.
    pub filter: Filter,
    /// Time limit per case.
    pub timeout: Duration,
    /// Address-space cap per adapter process (MiB; 0 = none).
    pub memory_mb: u64,
    /// Adapters run at a time.
    pub jobs: usize,
    /// Print only failures and the summary.
    pub quiet: bool,
    /// Whole result lines (digests, full localisation, reason keys) instead of one-screen ones.
    pub verbose: bool,
    /// One process per case even when the capabilities declare `persistent` (`--per-case`).
    pub per_case: bool,
    /// Per-case lines and the summary go to standard error (`--json -` owns standard output).
    pub human_to_stderr: bool,
}

impl RunOptions {
    /// What starting one adapter process needs.
    pub fn command(&self) -> AdapterCommand {
        AdapterCommand {
            corpus: self.corpus.clone(),
            adapter: self.adapter.clone(),
            timeout: self.timeout,
            memory_mb: self.memory_mb,
        }
    }

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
    /// Failed, and listed in the known failures with this reason.
    KnownFailure,
    /// Listed in the known failures but failed for another reason; fails the run unless
    /// `--accept-changed`.
    KnownChanged,
    /// Listed in the known failures but passed: the list is stale; fails the run.
    Stale,
}

impl Status {
    /// What this case means for the run in the suite's pass/fail vocabulary: a known failure
    /// that failed as listed does not fail the run; a stale entry does.
    pub fn verdict(self) -> crate::verdict::Verdict {
        use crate::verdict::Verdict;
        match self {
            Status::Pass | Status::KnownFailure => Verdict::Pass,
            Status::Fail | Status::Stale | Status::KnownChanged => Verdict::Fail,
            Status::Skip => Verdict::Skip,
        }
    }

    /// The tag of a human result line (five letters, or `XFAIL-CHANGED`).
    pub fn tag(self) -> &'static str {
        match self {
            Status::KnownChanged => "XFAIL-CHANGED",
            Status::Pass => "PASS ",
            Status::Fail => "FAIL ",
            Status::Skip => "SKIP ",
            Status::KnownFailure => "XFAIL",
            Status::Stale => "STALE",
        }
    }

    /// The status as written in `--json` reports.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::KnownFailure => "known-failure",
            Status::KnownChanged => "known-failure-changed",
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
    /// Where a values mismatch first differs (tensor, row, element, values, spec, looks-like).
    pub localization: Option<super::localize::Localization>,
    /// The reason key of a failure (`known::reason_of`), the one a known-failures entry pins.
    pub reason: Option<String>,
    /// The undeclared rule layer this must-reject case was judged leniently by (PROTOCOL.md §5.3).
    pub lenient: Option<String>,
}

/// The start of the detail of a must-reject case that a reader accepted where its undeclared
/// rule layer allowed it.
pub const LENIENT_ACCEPT: &str = "lenient: accepted";

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
    /// Known failures that failed for another reason than listed (XFAIL-CHANGED).
    pub changed: usize,
    /// Per undeclared rule layer: (must-reject cases judged leniently, of those accepted).
    pub lenient: BTreeMap<String, (usize, usize)>,
}

/// The results of a `check-reader` run.
pub struct Report {
    /// Per case, in manifest order.
    pub results: Vec<CaseResult>,
    /// Counts per status.
    pub summary: Summary,
    /// Known-failure ids that name no case of the manifest.
    pub unknown_known: Vec<String>,
    /// `--accept-changed`: XFAIL-CHANGED does not fail the run.
    pub accept_changed: bool,
}

impl Report {
    /// Whether the run passes: no failures, no stale or unknown known-failure entries, no
    /// known failure that fails for another reason (unless `--accept-changed`).
    pub fn ok(&self) -> bool {
        let failed = |r: &CaseResult| {
            r.status.verdict() == crate::verdict::Verdict::Fail
                && !(self.accept_changed && r.status == Status::KnownChanged)
        };
        !self.results.iter().any(failed) && self.unknown_known.is_empty()
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
                "changed_known_failures": self.summary.changed,
                "lenient": self.summary.lenient.iter().map(|(l, (judged, accepted))| {
                    (l.clone(), json!({ "judged": judged, "accepted": accepted }))
                }).collect::<serde_json::Map<_, _>>(),
            },
            "accept_changed": self.accept_changed,
            "unknown_known_failures": self.unknown_known,
            "results": self.results.iter().map(|r| {
                let mut v = json!({
                    "id": r.id, "status": r.status.name(), "detail": r.detail, "ms": r.ms,
                });
                if let (Some(l), Some(m)) = (&r.localization, v.as_object_mut()) {
                    m.insert("localization".into(), l.to_json());
                }
                if let (Some(reason), Some(m)) = (&r.reason, v.as_object_mut()) {
                    m.insert("reason".into(), json!(reason));
                    if let Some(k) = opts.known_failures.reason(&r.id) {
                        m.insert("known_reason".into(), json!(k));
                    }
                }
                if let (Some(l), Some(m)) = (&r.lenient, v.as_object_mut()) {
                    m.insert("lenient_layer".into(), json!(l));
                }
                v
            }).collect::<Vec<_>>(),
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
        /// Processes the adapter left running after it exited (killed by the supervisor).
        leftovers: u32,
    },
    Timeout,
    SpawnError(String),
}

fn run_process(opts: &RunOptions, case: &CaseEntry) -> Proc {
    run_process_request(opts, case, request_json(case, &opts.corpus).to_string())
}

/// One adapter process for `case` under `crate::contain` (deadline on every pipe, bounded
/// capture: 16 MiB of stdout, the last 1 MiB of stderr; every descendant killed).
fn run_process_request(opts: &RunOptions, case: &CaseEntry, request: String) -> Proc {
    let job = opts
        .command()
        .job(opts.corpus.join(&case.file), false)
        .env("NINFER_CASE_ID", &case.id)
        .stdin_bytes(request.into_bytes())
        .stdout_cap(16 << 20)
        .stderr_cap(1 << 20);
    let o = crate::contain::run(&job);
    let (code, signal) = match o.end {
        End::Exited(c) => (Some(c), None),
        End::Signaled(s) => (None, Some(s)),
        End::TimedOut => return Proc::Timeout,
        End::SpawnFailed(e) => return Proc::SpawnError(e),
    };
    Proc::Done {
        code,
        signal,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        leftovers: o.leftovers,
    }
}

fn tail(s: &str) -> String {
    let l: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    l.last()
        .map(|x| x.chars().take(160).collect())
        .unwrap_or_default()
}

/// Runs one case: the raw verdict before known failures are applied.
fn run_case(
    opts: &RunOptions,
    case: &CaseEntry,
    located: &mut Option<super::localize::Localization>,
) -> (bool, String) {
    match run_process(opts, case) {
        Proc::SpawnError(e) => (false, format!("could not start the adapter: {e}")),
        Proc::Timeout => (
            false,
            format!("timeout after {:.1}s", opts.timeout.as_secs_f64()),
        ),
        Proc::Done { leftovers, .. } if leftovers > 0 => {
            (false, super::process::leftovers_reason(leftovers))
        }
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
                let result = match &answer {
                    Answer::Accept { .. } => "accept",
                    Answer::Reject { .. } => "reject",
                    Answer::Unsupported { .. } => "unsupported",
                };
                return (
                    false,
                    format!(
                        "protocol error: exit {code} with a{} {result} answer (PROTOCOL.md §4.0: \
                         a reject exits 1, accept and unsupported exit 0) {}",
                        if result == "accept" || result == "unsupported" {
                            "n"
                        } else {
                            ""
                        },
                        tail(&stderr)
                    ),
                );
            }
            let (ok, why) = judge_answer(opts, case, &answer);
            if ok {
                return (ok, why);
            }
            let why = localized(
                opts,
                case,
                &answer,
                why,
                located,
                |req| match run_process_request(opts, case, req.to_string()) {
                    Proc::Done { stdout, .. } => Answer::parse(&stdout).ok(),
                    _ => None,
                },
            );
            (ok, why)
        }
    }
}

/// The request asking an adapter that declares `"localize": true` for its values
/// (PROTOCOL.md §4.7): the case's request plus `localize: {tensor}`.
pub fn localize_request(case: &CaseEntry, corpus: &Path, tensor: Option<&str>) -> Value {
    let mut req = request_json(case, corpus);
    if let Some(m) = req.as_object_mut() {
        m.insert("localize".into(), json!({ "tensor": tensor }));
    }
    req
}

/// Appends the localisation of a values mismatch (tensor, row, element, values, spec anchor,
/// looks-like) to a failure of an accepted case; `ask` sends the localize request (§4.7) to
/// adapters that declare it.
fn localized(
    opts: &RunOptions,
    case: &CaseEntry,
    answer: &Answer,
    why: String,
    located: &mut Option<super::localize::Localization>,
    ask: impl FnOnce(Value) -> Option<Answer>,
) -> String {
    let Answer::Accept { observation } = answer else {
        return why;
    };
    if !why.contains("sha256") {
        return why;
    }
    let Some(target) = super::localize::find_target(case, &opts.corpus, observation) else {
        return why;
    };
    let extra = if opts.capabilities.localize {
        match ask(localize_request(
            case,
            &opts.corpus,
            target.tensor.as_deref(),
        )) {
            Some(Answer::Accept { observation }) => observation.get("localize").cloned(),
            _ => None,
        }
    } else {
        None
    };
    match super::localize::localize(case, &opts.corpus, observation, extra.as_ref()) {
        Some(l) => {
            let line = format!("{why} | {}", l.text());
            *located = Some(l);
            line
        }
        None => why,
    }
}

/// Judges a well-formed answer (either isolation mode).
fn judge_answer(opts: &RunOptions, case: &CaseEntry, answer: &Answer) -> (bool, String) {
    let judging = opts.capabilities.judging();
    match judge_with(case, answer, &judging) {
        Judgement::Pass => match (judging.lenient_layer(case), answer) {
            (Some(layer), Answer::Accept { .. }) => (
                true,
                format!(
                    "{LENIENT_ACCEPT}; must be rejected with {} by rule layer {layer}, which \
                     capabilities.json does not declare",
                    case.expect.class.as_deref().unwrap_or("an error")
                ),
            ),
            _ => (true, String::new()),
        },
        Judgement::Fail(why) => (false, why),
        Judgement::Unsupported(feature) => {
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
    located: &mut Option<super::localize::Localization>,
) -> (bool, String) {
    // An adapter that cannot complete a handshake is not tried again by this worker: a
    // per-case adapter declared persistent would otherwise cost one timeout per case.
    if let Some(why) = handshake_failed {
        return (false, format!("{why} (on an earlier case; not retried)"));
    }
    if session.is_none() {
        match Session::start(&opts.command()) {
            Ok(s) => *session = Some(s),
            Err(why) => {
                *handshake_failed = Some(why.clone());
                return (false, why);
            }
        }
    }
    let Some(s) = session.as_mut() else {
        return (
            false,
            "internal: no persistent session after a successful start".into(),
        );
    };
    match s.ask(case, &opts.command()) {
        Ok(answer) => {
            let (ok, why) = judge_answer(opts, case, &answer);
            if ok {
                return (ok, why);
            }
            let mut dead = false;
            let why = localized(opts, case, &answer, why, located, |req| {
                let a = s.ask_request(case, req, &opts.command());
                dead = a.is_err();
                a.ok()
            });
            if dead {
                *session = None;
            }
            (ok, why)
        }
        Err(why) => {
            *session = None;
            (false, why)
        }
    }
}

/// Before the run: asks the adapter one trivial case (the smallest selected `y_` codec case
/// the reader supports, else the smallest selected case) and stops with one `reader.adapter`
/// error when the adapter command cannot be run at all — it cannot be started, the shell
/// exits 126/127 (not executable / not found), or it exits with another code than 0/1 and
/// prints nothing (an interpreter that cannot open its script) — instead of one identical
/// failure per case. A reader that runs but misbehaves (crash, garbage, wrong answers) is
/// judged case by case as before.
pub fn preflight(manifest: &Manifest, opts: &RunOptions) -> crate::Result<()> {
    let runnable: Vec<&CaseEntry> = manifest
        .cases
        .iter()
        .filter(|c| opts.filter.matches(&c.id))
        .filter(|c| opts.capabilities.unsupported_feature(c).is_none())
        .collect();
    let Some(case) = runnable
        .iter()
        .filter(|c| c.kind == "codec" && c.expect.outcome == super::manifest::Outcome::Accept)
        .min_by_key(|c| c.bytes)
        .or_else(|| runnable.iter().min_by_key(|c| c.bytes))
    else {
        return Ok(());
    };
    let failure = if opts.persistent() {
        match Session::start(&opts.command()) {
            Err(why)
                if why.starts_with("could not start")
                    || why.contains("exit status: 127")
                    || why.contains("exit status: 126")
                    || why.contains("exit 127")
                    || why.contains("exit 126") =>
            {
                Some(why)
            }
            Err(_) => None,
            Ok(s) => {
                let _ = s.finish();
                None
            }
        }
    } else {
        match run_process(opts, case) {
            Proc::SpawnError(e) => Some(format!("could not start the adapter: {e}")),
            Proc::Done {
                code: Some(code),
                signal: None,
                stdout,
                stderr,
                ..
            } if code == 126
                || code == 127
                || (code > 1 && code < 128 && stdout.trim().is_empty()) =>
            {
                Some(format!(
                    "exit {code}{} with no answer: {}",
                    match code {
                        127 => " (command not found)",
                        126 => " (not executable)",
                        _ => "",
                    },
                    tail(&stderr)
                ))
            }
            _ => None,
        }
    };
    match failure {
        None => Ok(()),
        Some(why) => Err(crate::Error::new(
            crate::ErrorClass::ReaderAdapter,
            "--adapter",
            format!(
                "the adapter `{}` cannot be run (pre-flight case {}): {}; no case was run \
                 (check the command: it is run as /bin/sh -c '<ADAPTER> \"$1\"' adapter CASEFILE, \
                 PROTOCOL.md §4.0)",
                opts.adapter,
                case.id,
                why.trim()
            ),
        )),
    }
}

/// The hint printed after a slow per-case run of an adapter that does not declare
/// `persistent` (median over the cases run > 0.2 s).
pub fn persistent_hint(report: &Report, opts: &RunOptions) -> Option<String> {
    if opts.capabilities.persistent {
        return None;
    }
    let mut ms: Vec<u64> = report
        .results
        .iter()
        .filter(|r| r.status != Status::Skip)
        .map(|r| r.ms)
        .collect();
    if ms.len() < 3 {
        return None;
    }
    ms.sort_unstable();
    let median = *ms.get(ms.len() / 2)?;
    (median > 200).then(|| {
        format!(
            "hint: median {:.2} s per case with one process per case; an adapter that serves many \
             requests on one stdin/stdout and declares \"persistent\": true runs much faster \
             (PROTOCOL.md §4.6)",
            median as f64 / 1000.0
        )
    })
}

/// Runs the selected cases (in parallel, `opts.jobs` adapters at a time, on the crate's one
/// work queue, `pool::queue`); results in manifest order.
pub fn run(manifest: &Manifest, opts: &RunOptions) -> Report {
    let selected: Vec<&CaseEntry> = manifest
        .cases
        .iter()
        .filter(|c| opts.filter.matches(&c.id))
        .collect();
    let slots: Vec<Mutex<Option<CaseResult>>> = selected.iter().map(|_| Mutex::new(None)).collect();
    let printed = Mutex::new(0usize);
    let jobs = opts.jobs.max(1);
    // The adapters are processes, not this process's CPU work: a budget of their own.
    crate::pool::queue(
        &crate::pool::Budget::new(jobs),
        jobs,
        selected.len(),
        std::thread::Builder::new,
        // This worker's persistent adapter (PROTOCOL.md §4.6), started on first use, and
        // whether its handshake failed.
        || (None::<Session>, None::<String>),
        |(session, handshake_failed), i| {
            let r = run_one(opts, selected[i], session, handshake_failed);
            // A worker that panicked while holding a slot poisons it; the result written
            // here is still whole, so recover the guard and go on.
            *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            print_ready(opts, &slots, &printed);
        },
        |(session, _)| {
            if let Some(s) = session {
                let left = s.finish();
                if left > 0 {
                    eprintln!(
                        "warning: the persistent adapter {} after its last case",
                        super::process::leftovers_reason(left)
                    );
                }
            }
        },
    );
    let results: Vec<CaseResult> = slots
        .into_iter()
        .zip(&selected)
        .map(|(m, case)| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| CaseResult {
                    // Only a worker that died mid-case leaves a slot empty.
                    id: case.id.clone(),
                    status: Status::Fail,
                    detail: "internal: the worker running this case stopped before it finished"
                        .into(),
                    ms: 0,
                    localization: None,
                    reason: Some("internal".into()),
                    lenient: None,
                })
        })
        .collect();
    let ids: BTreeSet<&str> = manifest.cases.iter().map(|c| c.id.as_str()).collect();
    let unknown_known = opts
        .known_failures
        .ids()
        .filter(|k| !ids.contains(k.as_str()))
        .cloned()
        .collect();
    Report {
        summary: summarize(&results),
        results,
        unknown_known,
        accept_changed: opts.accept_changed,
    }
}

/// One case run and judged, with the known-failure list applied.
fn run_one(
    opts: &RunOptions,
    case: &CaseEntry,
    session: &mut Option<Session>,
    handshake_failed: &mut Option<String>,
) -> CaseResult {
    let t0 = Instant::now();
    let known = opts.known_failures.contains(&case.id);
    let lenient = opts.capabilities.judging().lenient_layer(case);
    let mut localization = None;
    let mut raw_detail = None;
    let (status, detail) = if let Some(why) = opts.capabilities.skip_reason(case) {
        (Status::Skip, why)
    } else {
        let (ok, why) = if opts.persistent() {
            run_case_persistent(opts, case, session, handshake_failed, &mut localization)
        } else {
            run_case(opts, case, &mut localization)
        };
        match (ok, known) {
            (true, false) => (Status::Pass, why),
            (false, false) => (Status::Fail, why),
            (false, true) => match super::known::compare(&opts.known_failures, &case.id, &why) {
                super::known::Match::Same => (Status::KnownFailure, why),
                super::known::Match::Changed(now) => {
                    let was = opts.known_failures.reason(&case.id);
                    let d = format!(
                        "listed as failing with `{}`, now fails with `{now}` \
                         (--accept-changed to accept): {why}",
                        was.unwrap_or("")
                    );
                    raw_detail = Some(why);
                    (Status::KnownChanged, d)
                }
            },
            (true, true) => (
                Status::Stale,
                "listed as a known failure but passes: remove it from the list".into(),
            ),
        }
    };
    // The reason key of the failure itself (before an XFAIL-CHANGED prefix).
    let reason = matches!(
        status,
        Status::Fail | Status::KnownFailure | Status::KnownChanged
    )
    .then(|| super::known::reason_of(raw_detail.as_deref().unwrap_or(&detail)));
    CaseResult {
        id: case.id.clone(),
        lenient: lenient.filter(|_| status != Status::Skip),
        status,
        detail,
        ms: t0.elapsed().as_millis() as u64,
        localization,
        reason,
    }
}

/// Prints the results that are ready, in manifest order (`printed` counts those printed).
fn print_ready(opts: &RunOptions, slots: &[Mutex<Option<CaseResult>>], printed: &Mutex<usize>) {
    let mut p = printed.lock().unwrap_or_else(|p| p.into_inner());
    while *p < slots.len() {
        let g = slots[*p].lock().unwrap_or_else(|p| p.into_inner());
        let Some(r) = g.as_ref() else { break };
        let show = !opts.quiet
            || matches!(
                r.status,
                Status::Fail | Status::Stale | Status::KnownChanged
            );
        if show {
            let line = if opts.verbose {
                result_line(r)
            } else {
                short_line(r)
            };
            if opts.human_to_stderr {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
        drop(g);
        *p += 1;
    }
}

/// Counts per status, and per lenient rule layer (cases judged, accepted leniently).
fn summarize(results: &[CaseResult]) -> Summary {
    let mut summary = Summary::default();
    for r in results {
        match r.status {
            Status::Pass => summary.passed += 1,
            Status::Fail => summary.failed += 1,
            Status::Skip => summary.skipped += 1,
            Status::KnownFailure => summary.known += 1,
            Status::Stale => summary.stale += 1,
            Status::KnownChanged => summary.changed += 1,
        }
        if let Some(l) = &r.lenient {
            let e = summary.lenient.entry(l.clone()).or_default();
            e.0 += 1;
            if r.detail.starts_with(LENIENT_ACCEPT) {
                e.1 += 1;
            }
        }
    }
    summary
}

/// The most a default (not `--verbose`) result line holds: one 80×24 screen shows a dozen.
pub const SHORT_LINE: usize = 160;

/// A case's human result line. Default: at most [`SHORT_LINE`] characters — tag, id, then for
/// a located values mismatch where / got / want / hint / anchor, else the detail with every
/// long hex digest cut to 8 digits. `--verbose` ([`result_line`]): the whole detail and the
/// reason key.
pub fn short_line(r: &CaseResult) -> String {
    let tag = r.status.tag();
    let id = crate::text::escape(&r.id);
    let body = match &r.localization {
        Some(l) if matches!(r.status, Status::Fail | Status::KnownChanged) => l.short(),
        _ => cut_digests(&r.detail),
    };
    let line = if body.is_empty() {
        format!("{tag} {id}")
    } else {
        format!("{tag} {id}  -- {}", crate::text::escape(&body))
    };
    match line.char_indices().nth(SHORT_LINE - 1) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// `text` with every run of 16 or more hex digits cut to its first 8 and `…`.
fn cut_digests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 16 {
            out.push_str(&run[..8]);
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A case's full human result line (`--verbose`): tag, id, detail (escaped to one line); a
/// failure's ends with the reason key a known-failures entry pins (`[reason: accepted]`).
pub fn result_line(r: &CaseResult) -> String {
    let tag = r.status.tag();
    // The id comes from a manifest file, the detail from the adapter.
    let id = crate::text::escape(&r.id);
    if r.detail.is_empty() {
        return format!("{tag} {id}");
    }
    let detail = crate::text::escape(&r.detail);
    let Some(reason) = &r.reason else {
        return format!("{tag} {id}  -- {detail}");
    };
    format!(
        "{tag} {id}  -- {detail}  [reason: {}]",
        crate::text::escape(reason)
    )
}

/// The summary lines printed after the per-case results.
pub fn summary_text(r: &Report) -> String {
    let s = &r.summary;
    let changed_fail = if r.accept_changed { 0 } else { s.changed };
    let mut out = format!(
        "{} passed, {} failed, {} skipped",
        s.passed,
        s.failed + s.stale + changed_fail,
        s.skipped
    );
    // Always printed (also with --quiet): what the known-failures list and the undeclared
    // rule layers let pass is part of the verdict.
    out.push_str(&format!(
        "\nknown failures: {} XFAIL (failed as listed), {} XFAIL-CHANGED (failed for another \
         reason{}), {} stale (listed but passed)",
        s.known,
        s.changed,
        if r.accept_changed {
            "; accepted by --accept-changed"
        } else {
            ""
        },
        s.stale
    ));
    out.push_str(&lenient_text(s));
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

/// The summary line on leniency: how many must-reject cases were judged by an undeclared
/// rule layer (either outcome passes), and how many of them the reader accepted.
fn lenient_text(s: &Summary) -> String {
    if s.lenient.is_empty() {
        return "\nlenient: 0 cases (every must-reject case run was of a declared rule layer)"
            .into();
    }
    let judged: usize = s.lenient.values().map(|v| v.0).sum();
    let accepted: usize = s.lenient.values().map(|v| v.1).sum();
    let per: Vec<String> = s
        .lenient
        .iter()
        .map(|(l, (j, a))| format!("{l} {j} ({a} accepted)"))
        .collect();
    format!(
        "\nlenient: {judged} must-reject cases judged leniently, {accepted} of them accepted, by \
         undeclared rule layer: {} (PROTOCOL.md §5.3)",
        per.join(", ")
    )
}
