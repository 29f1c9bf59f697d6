//! `corpus diff-fuzz`: differential fuzzing of a real reader against the reference. Corpus GGUF
//! files are mutated (the byte model of `src/tests/gguf_hostile.rs`: byte sets, little-endian word
//! overwrites with boundary values, truncation), the reference (`protocol::respond`, in process)
//! and the reader's adapter (a subprocess speaking PROTOCOL.md) each answer, and every
//! disagreement in accept/reject — or, when both accept, in the observation — is minimized (the
//! mutation set shrunk one mutation at a time while the disagreement keeps its kind) and written
//! as a candidate corpus case: the file plus an entry of `candidates.json`. Deterministic given
//! the seed: one SplitMix64 stream per iteration, cases in manifest order, no clocks in the output.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::manifest::{CaseEntry, Manifest};
use super::observe::sha256_hex;
use super::process::AdapterCommand;
use super::protocol::{self, Answer};
use super::runner::glob_match;
use crate::contain::End;
use crate::rng::Rng;

/// Values a mutated length, count, offset or dimension is set to: the framing boundaries.
const WORDS: [u64; 14] = [
    0,
    1,
    2,
    3,
    31,
    32,
    33,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x4000_0000_0000_0000,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

/// One mutation of a file's bytes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mutation {
    /// Byte at `at` set to `value`.
    Byte {
        /// Byte offset.
        at: usize,
        /// The new byte.
        value: u8,
    },
    /// `width` (4 or 8) little-endian bytes at `at` set to `value` (truncated to the width).
    Word {
        /// Byte offset.
        at: usize,
        /// 4 or 8.
        width: usize,
        /// The new value.
        value: u64,
    },
    /// The file cut to `len` bytes.
    Truncate {
        /// The new length.
        len: usize,
    },
}

impl Mutation {
    /// Applies the mutation to `b`.
    pub fn apply(&self, b: &mut Vec<u8>) {
        match *self {
            Mutation::Byte { at, value } => {
                if let Some(x) = b.get_mut(at) {
                    *x = value;
                }
            }
            Mutation::Word { at, width, value } => {
                let bytes = value.to_le_bytes();
                for (i, v) in bytes.iter().take(width.min(8)).enumerate() {
                    if let Some(x) = b.get_mut(at.saturating_add(i)) {
                        *x = *v;
                    }
                }
            }
            Mutation::Truncate { len } => b.truncate(len),
        }
    }

    /// The mutation as a JSON object for `candidates.json`.
    pub fn to_json(&self) -> Value {
        match *self {
            Mutation::Byte { at, value } => json!({"op": "byte", "at": at, "value": value}),
            Mutation::Word { at, width, value } => {
                json!({"op": "word", "at": at, "width": width, "value": value.to_string()})
            }
            Mutation::Truncate { len } => json!({"op": "truncate", "len": len}),
        }
    }

    /// A random mutation of a file of `len` bytes (the header and directory get most of them:
    /// positions are drawn from the first 512 bytes three times out of four).
    pub fn random(rng: &mut Rng, len: usize) -> Mutation {
        let len = len.max(1);
        let pos = |rng: &mut Rng| {
            let span = if rng.next_u64() % 4 == 0 {
                len
            } else {
                len.min(512)
            };
            (rng.next_u64() % span as u64) as usize
        };
        match rng.next_u64() % 8 {
            0..=2 => Mutation::Byte {
                at: pos(rng),
                value: rng.next_u64() as u8,
            },
            3..=6 => Mutation::Word {
                at: pos(rng),
                width: if rng.next_u64() % 2 == 0 { 4 } else { 8 },
                value: WORDS[(rng.next_u64() % WORDS.len() as u64) as usize],
            },
            _ => Mutation::Truncate { len: pos(rng) },
        }
    }
}

/// Applies the mutations in order.
pub fn mutate(original: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = original.to_vec();
    for m in muts {
        m.apply(&mut b);
    }
    b
}

/// What a reader did with one file.
#[derive(Clone, Debug, PartialEq)]
pub enum ReaderResult {
    /// A well-formed answer.
    Answer(Answer),
    /// Crash, signal, timeout, garbage on stdout, or an exit code that does not match.
    Abnormal(String),
}

/// The kind of a disagreement between reference and reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The reference rejects, the reader accepts.
    ReaderAccepts,
    /// The reference accepts, the reader rejects.
    ReaderRejects,
    /// Both accept; the observations differ.
    Observation,
    /// The reader crashed, hung or printed garbage.
    ReaderAbnormal,
    /// The reference panicked (a defect in this crate).
    ReferencePanic,
    /// The reference gave no answer within the deadline (a defect in this crate).
    ReferenceTimeout,
}

impl Kind {
    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ReaderAccepts => "reader-accepts",
            Kind::ReaderRejects => "reader-rejects",
            Kind::Observation => "observation",
            Kind::ReaderAbnormal => "reader-abnormal",
            Kind::ReferencePanic => "reference-panic",
            Kind::ReferenceTimeout => "reference-timeout",
        }
    }
}

/// Options of one differential run.
pub struct DiffOptions {
    /// The corpus root (absolute).
    pub corpus: PathBuf,
    /// Adapter command, as for `check-reader`.
    pub adapter: String,
    /// Feature globs the reader declares unsupported (seed cases carrying one are not used;
    /// tensors of an unsupported `ggml_type:N` are not compared by digest).
    pub unsupported: Vec<String>,
    /// Seed of the mutation generator.
    pub seed: u64,
    /// Mutants to try.
    pub iterations: usize,
    /// Mutations per mutant (1..=N).
    pub max_mutations: usize,
    /// Time limit per reader run.
    pub timeout: Duration,
    /// Address-space cap per reader process (MiB; 0 = none).
    pub memory_mb: u64,
    /// Compare accept/reject only (readers that cannot report file order, e.g. candle).
    pub outcome_only: bool,
    /// Only seed cases whose id matches this glob.
    pub filter: Option<String>,
}

/// One minimized disagreement.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The iteration that found it.
    pub iteration: usize,
    /// The corpus case the mutant was made from.
    pub seed_case: String,
    /// How the two readers disagree.
    pub kind: Kind,
    /// The (minimized) mutations.
    pub mutations: Vec<Mutation>,
    /// The mutant's bytes.
    pub bytes: Vec<u8>,
    /// What the reference answered.
    pub reference: String,
    /// What the reader answered.
    pub reader: String,
}

/// The result of a run.
pub struct DiffReport {
    /// Mutants tried.
    pub iterations: usize,
    /// Seed cases used.
    pub seeds: usize,
    /// Reader processes started.
    pub reader_runs: usize,
    /// Disagreements found.
    pub disagreements: usize,
    /// Unique after minimization (by kind and minimized bytes), in iteration order.
    pub findings: Vec<Finding>,
    /// Why the campaign ended before its last iteration (a reference that did not answer).
    pub stopped: Option<String>,
}

fn describe(o: &ReaderResult) -> String {
    match o {
        ReaderResult::Answer(Answer::Accept { .. }) => "accept".into(),
        ReaderResult::Answer(Answer::Reject { class, message }) => {
            let m: String = message.chars().take(160).collect();
            format!("reject {}: {m}", class.as_deref().unwrap_or("-"))
        }
        ReaderResult::Answer(Answer::Unsupported { feature }) => format!("unsupported {feature}"),
        ReaderResult::Abnormal(why) => format!("abnormal: {why}"),
    }
}

/// Runs the reader's adapter on `file` with `request` on stdin, as check-reader does (under
/// `crate::contain`: deadline, limits, every descendant killed), and classifies what comes back.
pub fn run_reader(adapter: &str, file: &Path, request: &Value, opts: &DiffOptions) -> ReaderResult {
    let cmd = AdapterCommand {
        corpus: opts.corpus.clone(),
        adapter: adapter.to_string(),
        timeout: opts.timeout,
        memory_mb: opts.memory_mb,
    };
    let o = crate::contain::run(
        &cmd.job(file, false)
            .stdin_bytes(request.to_string().into_bytes())
            .stdout_cap(16 << 20)
            .stderr_cap(0),
    );
    let code = match o.end {
        End::SpawnFailed(e) => return ReaderResult::Abnormal(format!("spawn: {e}")),
        End::TimedOut => return ReaderResult::Abnormal("timeout".into()),
        End::Signaled(sig) => return ReaderResult::Abnormal(format!("signal {sig}")),
        End::Exited(c) => c,
    };
    if o.leftovers > 0 {
        return ReaderResult::Abnormal(super::process::leftovers_reason(o.leftovers));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    match Answer::parse(&stdout) {
        Err(e) => ReaderResult::Abnormal(format!("exit {:?}, {e}", Some(code))),
        Ok(a) if code != a.exit_code() => ReaderResult::Abnormal(format!(
            "exit {:?} with answer {}",
            Some(code),
            describe(&ReaderResult::Answer(a))
        )),
        Ok(a) => ReaderResult::Answer(a),
    }
}

/// Why the in-process reference gave no answer: a panic or a deadline (both are defects in
/// this crate, never the reader's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReferenceFault {
    /// It panicked, with this message.
    Panic(String),
    /// It was still working after the deadline (the thread is abandoned; the campaign stops).
    Timeout(Duration),
}

impl std::fmt::Display for ReferenceFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReferenceFault::Panic(p) => write!(f, "panic: {p}"),
            ReferenceFault::Timeout(t) => {
                write!(f, "no answer within {:.1}s", t.as_secs_f64())
            }
        }
    }
}

/// The reference's answer, in process, on a thread of its own with the run's deadline: a
/// panic is caught, a reference still running at the deadline is reported and left behind
/// (a thread cannot be killed; the caller stops the campaign, and the process exit ends it).
pub fn run_reference_within(
    kind: &str,
    params: &Value,
    bytes: &[u8],
    deadline: Duration,
) -> Result<Answer, ReferenceFault> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (kind, params, bytes) = (kind.to_string(), params.clone(), bytes.to_vec());
    let spawned = std::thread::Builder::new()
        .name("diff-fuzz-reference".into())
        .spawn(move || {
            let _ = tx.send(run_reference(&kind, &params, &bytes));
        });
    if spawned.is_err() {
        return Err(ReferenceFault::Panic(
            "the reference thread could not be started".into(),
        ));
    }
    match rx.recv_timeout(deadline) {
        Ok(r) => r.map_err(ReferenceFault::Panic),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(ReferenceFault::Timeout(deadline)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(ReferenceFault::Panic(
            "the reference thread ended without an answer".into(),
        )),
    }
}

/// The reference's answer, in process; a panic is caught and reported (it must never happen).
pub fn run_reference(kind: &str, params: &Value, bytes: &[u8]) -> Result<Answer, String> {
    let no_inputs = |name: &str| -> crate::error::Result<Vec<u8>> {
        Err(crate::error::Error::new(
            crate::error::ErrorClass::ProtocolParams,
            "inputs",
            format!("diff-fuzz seeds take no extra inputs ({name})"),
        ))
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        protocol::respond(kind, params, bytes, &no_inputs)
    }))
    .map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// Drops the digests of tensors whose type the reader declares unsupported, and the order-free
/// metadata digest (an order-sensitive reader is held to `metadata_sha256`, PROTOCOL §4.2).
fn comparable(observation: &Value, unsupported: &[String]) -> Value {
    let mut o = observation.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("metadata_unordered_sha256");
    }
    if let Some(ts) = o.get_mut("tensors").and_then(Value::as_array_mut) {
        for t in ts {
            let ty = t["type"].as_u64().unwrap_or(u64::MAX);
            let feat = format!("ggml_type:{ty}");
            if unsupported.iter().any(|p| glob_match(p, &feat)) {
                if let Some(m) = t.as_object_mut() {
                    m.remove("values_sha256");
                    m.remove("data_sha256");
                }
            }
        }
    }
    o
}

/// The disagreement between the two answers, if any (`None` also when the reader says
/// `unsupported`: not a disagreement about the format).
pub fn classify(
    reference: &Result<Answer, ReferenceFault>,
    reader: &ReaderResult,
    opts: &DiffOptions,
) -> Option<Kind> {
    let r = match reference {
        Err(ReferenceFault::Panic(_)) => return Some(Kind::ReferencePanic),
        Err(ReferenceFault::Timeout(_)) => return Some(Kind::ReferenceTimeout),
        Ok(a) => a,
    };
    let x = match reader {
        ReaderResult::Abnormal(_) => return Some(Kind::ReaderAbnormal),
        ReaderResult::Answer(a) => a,
    };
    match (r, x) {
        (_, Answer::Unsupported { .. }) | (Answer::Unsupported { .. }, _) => None,
        (Answer::Reject { .. }, Answer::Accept { .. }) => Some(Kind::ReaderAccepts),
        (Answer::Accept { .. }, Answer::Reject { .. }) => Some(Kind::ReaderRejects),
        (Answer::Reject { .. }, Answer::Reject { .. }) => None,
        (Answer::Accept { observation: a }, Answer::Accept { observation: b }) => {
            if opts.outcome_only {
                return None;
            }
            // Compared as the judge compares GGUF observations (PROTOCOL §4.2: `ne` modulo
            // trailing 1s).
            let want = protocol::normalize_gguf(&comparable(a, &opts.unsupported), false);
            let got = protocol::normalize_gguf(b, false);
            protocol::contains(&want, &got, "")
                .err()
                .map(|_| Kind::Observation)
        }
    }
}

/// Seed cases: GGUF files of the corpus the reader supports (manifest order).
pub fn seed_cases<'a>(manifest: &'a Manifest, opts: &DiffOptions) -> Vec<&'a CaseEntry> {
    manifest
        .cases
        .iter()
        .filter(|c| c.kind == "gguf")
        .filter(|c| opts.filter.as_deref().is_none_or(|f| glob_match(f, &c.id)))
        .filter(|c| {
            !c.features
                .iter()
                .any(|f| opts.unsupported.iter().any(|p| glob_match(p, f)))
        })
        .collect()
}

struct Trial<'a> {
    opts: &'a DiffOptions,
    case: &'a CaseEntry,
    original: &'a [u8],
    path: PathBuf,
    runs: usize,
}

impl Trial<'_> {
    fn request(&self) -> Value {
        json!({"protocol": protocol::PROTOCOL_VERSION, "id": format!("diff/{}", self.case.id),
               "kind": self.case.kind, "file": self.path.display().to_string(),
               "params": self.case.params, "inputs": {}})
    }

    /// Both answers on the mutated bytes.
    fn run(
        &mut self,
        muts: &[Mutation],
    ) -> (Vec<u8>, Result<Answer, ReferenceFault>, ReaderResult) {
        let bytes = mutate(self.original, muts);
        let reference = run_reference_within(
            &self.case.kind,
            &self.case.params,
            &bytes,
            self.opts.timeout,
        );
        let reader = match std::fs::write(&self.path, &bytes) {
            Ok(()) => {
                self.runs += 1;
                run_reader(&self.opts.adapter, &self.path, &self.request(), self.opts)
            }
            Err(e) => ReaderResult::Abnormal(format!("write {}: {e}", self.path.display())),
        };
        (bytes, reference, reader)
    }
}

/// Runs the campaign. Mutants are written to a private scratch folder (mkdtemp: random name,
/// mode 0700, under the system temp folder) that is removed at the end and on a stop signal;
/// nothing else is written or removed.
pub fn run(manifest: &Manifest, opts: &DiffOptions) -> crate::Result<DiffReport> {
    let seeds = seed_cases(manifest, opts);
    if seeds.is_empty() {
        return Err(crate::Error::new(
            crate::ErrorClass::CorpusFilter,
            "--filter/--capabilities",
            "no GGUF seed case is selected and supported by this reader",
        ));
    }
    let scratch = tempfile::Builder::new()
        .prefix("ninfer-diff-fuzz-")
        .tempdir()
        .map_err(crate::fsio::write_err("diff-fuzz scratch folder"))?;
    let work = scratch.path().to_path_buf();
    let cleanup = work.clone();
    let _on_signal = crate::shutdown::on_signal(crate::shutdown::Stage::Scratch, move || {
        let _ = std::fs::remove_dir_all(&cleanup);
    });
    let mut report = DiffReport {
        iterations: opts.iterations,
        seeds: seeds.len(),
        reader_runs: 0,
        disagreements: 0,
        findings: Vec::new(),
        stopped: None,
    };
    let mut seen = BTreeSet::new();
    for it in 0..opts.iterations {
        let mut rng = Rng::for_name(opts.seed, &format!("diff-fuzz/{it}"));
        let case = seeds[(rng.next_u64() % seeds.len() as u64) as usize];
        let original = crate::fsio::read_input(&opts.corpus.join(&case.file))?;
        let n = 1 + (rng.next_u64() % opts.max_mutations.max(1) as u64) as usize;
        let muts: Vec<Mutation> = (0..n)
            .map(|_| Mutation::random(&mut rng, original.len()))
            .collect();
        let mut t = Trial {
            opts,
            case,
            original: &original,
            path: work.join("mutant.gguf"),
            runs: 0,
        };
        let (_, reference, reader) = t.run(&muts);
        let Some(kind) = classify(&reference, &reader, opts) else {
            report.reader_runs += t.runs;
            continue;
        };
        report.disagreements += 1;
        if kind == Kind::ReferenceTimeout {
            // Its thread is still running: re-running it to minimize would pile up more.
            let fault = reference.err().map(|f| f.to_string()).unwrap_or_default();
            let bytes = mutate(&original, &muts);
            report.findings.push(Finding {
                iteration: it,
                seed_case: case.id.clone(),
                kind,
                mutations: muts,
                bytes,
                reference: fault.clone(),
                reader: describe(&reader),
            });
            report.reader_runs += t.runs;
            report.stopped = Some(format!(
                "the reference ({}) on a mutant of {}: {fault}; the campaign stopped (a defect in this crate, not the reader's)",
                case.kind, case.id
            ));
            break;
        }
        // Minimize: drop each mutation in turn while the disagreement keeps its kind.
        let mut kept = muts;
        let mut i = kept.len();
        while i > 0 && kept.len() > 1 {
            i -= 1;
            let mut fewer = kept.clone();
            fewer.remove(i);
            let (_, r2, x2) = t.run(&fewer);
            if classify(&r2, &x2, opts) == Some(kind) {
                kept = fewer;
            }
        }
        let (bytes, reference, reader) = t.run(&kept);
        report.reader_runs += t.runs;
        if classify(&reference, &reader, opts) != Some(kind) {
            continue; // not reproducible (a flaky reader); counted, not recorded
        }
        if !seen.insert((kind, sha256_hex(&bytes))) {
            continue;
        }
        report.findings.push(Finding {
            iteration: it,
            seed_case: case.id.clone(),
            kind,
            mutations: kept,
            bytes,
            reference: match &reference {
                Ok(a) => describe(&ReaderResult::Answer(a.clone())),
                Err(p) => p.to_string(),
            },
            reader: describe(&reader),
        });
    }
    Ok(report)
}

/// Writes the candidate cases: `cases/<nnn>_<kind>_<seed name>.gguf` and `candidates.json`.
/// `replace`: whether files of an earlier run may be replaced (`--force`); a file that is
/// there otherwise, or appears during the run, is never overwritten (`io.output_exists`).
pub fn write_candidates(
    report: &DiffReport,
    opts: &DiffOptions,
    out: &Path,
    replace: crate::fsio::Replace,
) -> crate::Result<Value> {
    let dir = out.join("cases");
    std::fs::create_dir_all(&dir).map_err(crate::fsio::write_err(&dir.display().to_string()))?;
    let mut list = Vec::new();
    for (n, f) in report.findings.iter().enumerate() {
        let seed_name = f.seed_case.rsplit('/').next().unwrap_or("case");
        let name = format!("{n:03}_{}_{seed_name}.gguf", f.kind.name());
        crate::fsio::write_file(&dir.join(&name), &f.bytes, replace)?;
        list.push(json!({
            "file": format!("cases/{name}"),
            "sha256": sha256_hex(&f.bytes),
            "bytes": f.bytes.len(),
            "kind": f.kind.name(),
            "derived_from": f.seed_case,
            "iteration": f.iteration,
            "mutations": f.mutations.iter().map(Mutation::to_json).collect::<Vec<_>>(),
            "reference": f.reference,
            "reader": f.reader,
        }));
    }
    let doc = json!({
        "adapter": opts.adapter,
        "seed": opts.seed,
        "iterations": report.iterations,
        "max_mutations": opts.max_mutations,
        "outcome_only": opts.outcome_only,
        "seed_cases": report.seeds,
        "reader_runs": report.reader_runs,
        "disagreements": report.disagreements,
        "unique": report.findings.len(),
        "candidates": list,
    });
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| {
        crate::Error::new(
            crate::ErrorClass::InternalInvariant,
            "candidates.json",
            e.to_string(),
        )
    })?;
    text.push('\n');
    crate::fsio::write_file(&out.join("candidates.json"), text.as_bytes(), replace)?;
    Ok(doc)
}

/// A one-line-per-kind summary.
pub fn summary(report: &DiffReport) -> String {
    let mut s = format!(
        "diff-fuzz: {} mutants of {} seed cases, {} reader runs, {} disagreements, {} unique after minimization",
        report.iterations,
        report.seeds,
        report.reader_runs,
        report.disagreements,
        report.findings.len()
    );
    for k in [
        Kind::ReaderAccepts,
        Kind::ReaderRejects,
        Kind::Observation,
        Kind::ReaderAbnormal,
        Kind::ReferencePanic,
        Kind::ReferenceTimeout,
    ] {
        let n = report.findings.iter().filter(|f| f.kind == k).count();
        if n > 0 {
            s.push_str(&format!("\n  {:<16} {n}", k.name()));
        }
    }
    if let Some(why) = &report.stopped {
        s.push_str(&format!("\n  stopped early: {why}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_apply_in_bounds_only() {
        let mut b = vec![0u8; 6];
        Mutation::Word {
            at: 4,
            width: 8,
            value: u64::MAX,
        }
        .apply(&mut b);
        assert_eq!(b, [0, 0, 0, 0, 0xff, 0xff]);
        Mutation::Byte { at: 99, value: 1 }.apply(&mut b);
        assert_eq!(b.len(), 6);
        Mutation::Truncate { len: 2 }.apply(&mut b);
        assert_eq!(b, [0, 0]);
    }

    #[test]
    fn random_mutations_are_deterministic() {
        let draw = || {
            let mut r = Rng::for_name(7, "diff-fuzz/3");
            (0..16)
                .map(|_| Mutation::random(&mut r, 1000))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }

    #[test]
    fn reference_never_panics_on_garbage() {
        let p = json!({"mode": "strict"});
        for b in [
            &b""[..],
            b"GGUF",
            b"GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff",
        ] {
            assert!(run_reference("gguf", &p, b).is_ok());
        }
    }
}
