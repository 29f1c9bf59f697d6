//! The kernel suite's driver: `check-kernel` hands its parsed options to [`run`] — the one
//! call that crosses from the command line into `cuda` for a kernel (or for every shipped
//! kernel with `builtin`) — and gets back a [`Report`] to write. Selection of the kernels and
//! cases, the tiers, the random batch, running, collecting the verdicts and the report's
//! lines, JSON and Markdown are all here; the command only claims the output files, prints the
//! lines as they come and writes what the report holds.

use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::check::{self, HostSetup};
use super::kernel_abi::{AbiSidecar, KernelAbi};
use super::suite::{judge_builtin, markdown_table, run_builtins_host, BuiltinVerdict};
use super::{sources, Builtin, CaseResult, KernelClass, Precision, Role, Status, Tier};
use crate::error::{Error, ErrorClass};

/// What to check, as parsed from the command line (`check-kernel --help` explains each).
#[derive(Clone, Debug)]
pub struct Options {
    /// Kernel source (.cu).
    pub source: Option<PathBuf>,
    /// extern "C" __global__ entry point.
    pub entry: Option<String>,
    /// Kernel class name.
    pub class: Option<String>,
    /// Case format.
    pub format: Option<String>,
    /// ABI sidecar JSON.
    pub abi: Option<PathBuf>,
    /// Precision mode.
    pub precision: Option<String>,
    /// Include folders.
    pub include: Vec<PathBuf>,
    /// Preprocessor definitions.
    pub define: Vec<String>,
    /// Extra NVRTC options.
    pub nvrtc_option: Vec<String>,
    /// Architecture.
    pub arch: Option<String>,
    /// The tier.
    pub tier: Tier,
    /// Per-case timeout in seconds (host tier).
    pub timeout: Option<u64>,
    /// Wall-clock limit of one host-tier compile, in seconds.
    pub compile_timeout: Option<u64>,
    /// Address-space cap of the host compiler in MiB.
    pub compile_memory_mb: Option<u64>,
    /// Address-space cap of the host-tier kernel process in MiB.
    pub memory_mb: Option<u64>,
    /// Every shipped kernel instead of `source`.
    pub builtin: bool,
    /// Only these builtin kernels.
    pub only: Vec<String>,
    /// Random cases per format instead of the fixed cases.
    pub random: Option<usize>,
    /// Seed of the random cases and of the random thread schedule.
    pub seed: u64,
    /// Only cases whose name contains one of these.
    pub case: Vec<String>,
    /// Only hadamard_rotate cases of this block size.
    pub block: Option<u64>,
    /// With `builtin`: produce the verdict table (Markdown).
    pub markdown: bool,
}

/// What a run produced, for the command to write: the lines were already handed to the line
/// sink as they came.
#[derive(Clone, Debug)]
pub struct Report {
    /// The exit code: 0 passed, 1 failed, 2 skipped.
    pub code: u8,
    /// The JSON report (spec/schemas/check-kernel-report.schema.json), when the run makes one.
    pub json: Option<Value>,
    /// The verdict table (`builtin` with `markdown`).
    pub markdown: Option<String>,
}

impl Report {
    fn new(code: u8, json: Value) -> Report {
        Report {
            code,
            json: Some(json),
            markdown: None,
        }
    }
}

/// Hands one line to the sink.
macro_rules! say {
    ($out:expr, $($t:tt)*) => {
        ($out)(&format!($($t)*))
    };
}

/// Escaped text of anything printed here that can carry a file's text (a kernel source's
/// compiler diagnostics, case details): no control or bidi character reaches the terminal,
/// but line breaks stay line breaks.
pub(crate) fn esc(x: &dyn std::fmt::Display) -> String {
    x.to_string()
        .lines()
        .map(|l| crate::text::escape(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An error with its detail's line breaks kept (compiler diagnostics span lines).
fn show(e: &Error) -> String {
    let mut s = format!("[{}] ", e.class());
    if !e.field().is_empty() {
        s.push_str(&esc(&e.field()));
        s.push_str(": ");
    }
    s.push_str(&esc(&e.detail()));
    s
}

fn usage(field: &str, what: impl Into<String>) -> Error {
    Error::new(ErrorClass::CliUsage, field, what)
}

/// The most random cases per format one run draws (built and run a chunk at a time).
const MAX_RANDOM: usize = 100_000;

/// Runs the check `o` describes, handing each line of the text report to `out` as it comes.
/// Usage, input and cache errors are returned; a kernel that fails to compile or run is a
/// failed report, a tier that cannot run here a skipped one.
pub fn run(o: &Options, out: &mut dyn FnMut(&str)) -> crate::Result<Report> {
    if o.builtin {
        if !o.case.is_empty() || o.block.is_some() {
            return Err(usage(
                "--case/--block",
                "--builtin runs every case of every shipped kernel; --case and --block select cases of a --source run",
            ));
        }
        return builtin(o, out);
    }
    let k = Kernel::prepare(o)?;
    k.head(o, out);
    let mut report = json!({
        "source": k.src_path.display().to_string(), "entry": k.entry, "class": k.class.name(),
        "formats": k.formats.iter().map(|f| f.name()).collect::<Vec<_>>(), "tier": o.tier.name(), "precision": k.abi.precision.name(),
        "random": o.random, "seed": o.seed,
    });
    let t0 = Instant::now();
    let outcome = k.outcome(o, out);
    let results = match outcome {
        Err(e)
            if matches!(
                e.class(),
                ErrorClass::KernelTierUnavailable | ErrorClass::KernelUnsupported
            ) =>
        {
            say!(
                out,
                "SKIPPED: tier {} cannot run this kernel here: {}",
                o.tier.name(),
                show(&e)
            );
            say!(out, "RESULT: SKIPPED (not a pass)");
            report["status"] = "skipped".into();
            report["error"] = json!({"class": e.class().id(), "message": e.to_string()});
            return Ok(Report::new(2, report));
        }
        Err(e)
            if matches!(
                e.class(),
                ErrorClass::CliUsage
                    | ErrorClass::IoRead
                    | ErrorClass::IoWrite
                    | ErrorClass::KernelCache
            ) =>
        {
            return Err(e)
        }
        Err(e) => {
            say!(out, "ERROR {}", show(&e));
            say!(out, "RESULT: FAILED");
            report["status"] = "failed".into();
            report["error"] = json!({"class": e.class().id(), "message": e.to_string()});
            return Ok(Report::new(1, report));
        }
        Ok(r) => r,
    };
    let code = summarize(o, &results, t0, out);
    report["status"] = ["passed", "failed", "skipped"][code as usize].into();
    report["results"] = results.iter().map(row).collect::<Vec<_>>().into();
    Ok(Report::new(code, report))
}

/// A `--source` kernel with everything its run needs, read and checked.
struct Kernel {
    src_path: PathBuf,
    entry: String,
    class: KernelClass,
    abi: KernelAbi,
    formats: Vec<super::format::KernelFormat>,
    source: String,
    cases: super::CasePlan,
}

impl Kernel {
    fn prepare(o: &Options) -> crate::Result<Kernel> {
        let sidecar: AbiSidecar = match &o.abi {
            None => AbiSidecar::default(),
            Some(p) => {
                let text = crate::fsio::read_input_string(p)?;
                serde_json::from_str(&text).map_err(|e| {
                    Error::new(
                        ErrorClass::KernelAbi,
                        p.display().to_string(),
                        format!("not an ABI sidecar (spec/kernels.json `sidecar`): {e}"),
                    )
                })?
            }
        };
        let src_path = o
            .source
            .clone()
            .ok_or_else(|| usage("--source", "--source is required (or --builtin)"))?;
        let entry = o.entry.clone().or(sidecar.entry.clone()).ok_or_else(|| {
            usage(
                "--entry",
                "--entry is required (or `entry` in the --abi file)",
            )
        })?;
        let class_name = o.class.clone().or(sidecar.class.clone()).ok_or_else(|| {
            usage(
                "--class",
                "--class is required (or `class` in the --abi file)",
            )
        })?;
        let class = KernelClass::parse(&class_name)?;
        let precision = o.precision.as_deref().map(Precision::parse).transpose()?;
        let abi = KernelAbi::from_sidecar(class, &sidecar, precision)?;
        let formats = match (&o.format, &sidecar.formats) {
            (None, Some(f)) => super::format::KernelFormat::parse_all(
                f,
                crate::error::ErrorClass::KernelAbi,
                "formats",
            )?,
            (f, _) => super::default_formats(class, f.as_deref())?,
        };
        // Includes confined to the kernel's folder and the -I folders, each file checked before
        // it is read (kernel.include).
        let source = super::confine::read_source(&src_path, &o.include)?;
        let cases = select_cases(class, &formats, o)?;
        Ok(Kernel {
            src_path,
            entry,
            class,
            abi,
            formats,
            source,
            cases,
        })
    }

    /// The report's first lines: what runs, and which cases.
    fn head(&self, o: &Options, out: &mut dyn FnMut(&str)) {
        let head = format!(
            "check-kernel {} ({}, {}, precision {}) from {} -- tier {}",
            self.entry,
            self.class.name(),
            self.formats
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(","),
            self.abi.precision,
            self.src_path.display(),
            o.tier.name()
        );
        say!(out, "{}", esc(&head));
        match o.random {
            Some(n) => say!(
                out,
                "cases: {n} random per format, seed {}, plus the fixed real-model-scale cases (k >= 5120, vocabulary tables) that random shapes never reach",
                o.seed
            ),
            None => say!(
                out,
                "cases: fixed (corpus + generated matrix) plus {} random per format, seed {} (r{}_*)",
                super::DEFAULT_RANDOM,
                o.seed,
                o.seed
            ),
        }
    }

    /// Runs the kernel over its cases at the tier.
    fn outcome(&self, o: &Options, out: &mut dyn FnMut(&str)) -> crate::Result<Vec<CaseResult>> {
        let (source, entry, abi) = (&self.source, &self.entry, &self.abi);
        match o.tier {
            Tier::Host => super::host::available().and_then(|cxx| {
                let setup = host_setup(o)?;
                let archs = if setup.archs.is_empty() {
                    check::host_archs(source)
                } else {
                    setup.archs.clone()
                };
                say!(
                    out,
                    "host compiler: {} ({cxx}); __CUDA_ARCH__ {}",
                    super::host::compiler(),
                    archs
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                self.cases
                    .run(&mut |cs| check::run_host(source, entry, abi, cs, &setup))
            }),
            Tier::Device => self
                .cases
                .run(&mut |cs| super::run_device(source, entry, abi, cs)),
            Tier::Compile => {
                let archs: Vec<String> = match &o.arch {
                    Some(x) => vec![x.clone()],
                    None => crate::spec::get().kernels.compile.archs.clone(),
                };
                let mut opts = o.nvrtc_option.clone();
                opts.extend(o.define.iter().map(|d| format!("-D{d}")));
                super::compile_nvrtc(source, entry, &abi.sig(), &archs, &opts).map(|_| {
                    say!(
                        out,
                        "PASS compiled with NVRTC for {} and the PTX entry matches the ABI ({})",
                        archs.join(", "),
                        abi.sig().join(", ")
                    );
                    Vec::new()
                })
            }
        }
    }
}

/// The per-case lines, the first failure with its replay line and the totals; returns the
/// exit code.
fn summarize(o: &Options, results: &[CaseResult], t0: Instant, out: &mut dyn FnMut(&str)) -> u8 {
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    for r in results {
        match r.status {
            Status::Pass => pass += 1,
            Status::Skipped(_) => skip += 1,
            _ => fail += 1,
        }
        say!(out, "{} {}: {}", tag(r), esc(&r.case), esc(&r.detail));
    }
    if let Some(first) = results.iter().find(|r| r.failed()) {
        say!(
            out,
            "first failing case: {} -- {}",
            esc(&first.case),
            esc(&first.detail)
        );
        match o.random {
            Some(n) => say!(
                out,
                "replay: check-kernel ... --random {n} --seed {} --case {}",
                o.seed,
                first.case
            ),
            // A case of the default random batch (fixed cases replay with --case alone).
            None if is_random_name(&first.case, o.seed) => say!(
                out,
                "replay: check-kernel ... --seed {} --case {}",
                o.seed,
                first.case
            ),
            None => {}
        }
    }
    say!(
        out,
        "{pass} passed, {fail} failed, {skip} skipped ({:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    let code = if fail > 0 {
        1
    } else if skip > 0 {
        2
    } else {
        0
    };
    say!(
        out,
        "RESULT: {}",
        ["PASSED", "FAILED", "SKIPPED (not a pass)"][code as usize]
    );
    code
}

/// The case plan of a run: fixed (corpus + generated matrix) or random (built lazily, after
/// `--case` picked them by name), then the filters.
fn select_cases(
    class: KernelClass,
    formats: &[super::format::KernelFormat],
    a: &Options,
) -> crate::Result<super::CasePlan> {
    check_random(a.random)?;
    if a.block.is_some() && class != KernelClass::HadamardRotate {
        return Err(usage(
            "--block",
            "only hadamard_rotate cases have a block size",
        ));
    }
    let plan = match a.random {
        Some(n) => super::CasePlan::random(class, formats, n, a.seed, &a.case, a.block)?,
        None => {
            let mut cs = super::cases_default(class, formats, a.seed)?;
            if !a.case.is_empty() {
                cs.retain(|c| a.case.iter().any(|t| c.name.contains(t.as_str())));
            }
            if let Some(b) = a.block {
                cs.retain(|c| c.dims.block == b);
            }
            super::CasePlan::Fixed(cs)
        }
    };
    if plan.is_empty() {
        return Err(Error::new(
            ErrorClass::CorpusFilter,
            "--case",
            format!(
                "no case matches {:?} (names: check-kernel --markdown or conformance/KERNELS.md)",
                a.case
            ),
        ));
    }
    Ok(plan)
}

/// `--random N` is 1 to [`MAX_RANDOM`].
fn check_random(random: Option<usize>) -> crate::Result<()> {
    if let Some(n) = random {
        if n == 0 || n > MAX_RANDOM {
            return Err(usage(
                "--random",
                format!("{n}: between 1 and {MAX_RANDOM} cases per format"),
            ));
        }
    }
    Ok(())
}

fn host_setup(a: &Options) -> crate::Result<HostSetup> {
    let archs = match (&a.arch, a.tier) {
        (Some(x), Tier::Host) => vec![check::arch_value(x)
            .ok_or_else(|| usage("--arch", format!("{x:?}: expected sm_XX")))?],
        _ => Vec::new(),
    };
    Ok(HostSetup {
        defines: a.define.clone(),
        include_dirs: a.include.clone(),
        archs,
        timeout: a
            .timeout
            .map(Duration::from_secs)
            .unwrap_or_else(super::host_timeout),
        schedule_seed: a.seed,
        compile_timeout: match a.compile_timeout {
            Some(0) => return Err(usage("--compile-timeout", "0: at least 1 second")),
            Some(t) => Duration::from_secs(t),
            None => super::host::DEFAULT_COMPILE_TIMEOUT,
        },
        compile_memory_mb: mib("--compile-memory-mb", a.compile_memory_mb)?
            .unwrap_or(super::host::DEFAULT_COMPILE_MEMORY_MB),
        memory_mb: mib("--memory-mb", a.memory_mb)?.unwrap_or(super::host::DEFAULT_MEMORY_MB),
    })
}

/// A memory cap option: 0 (none) or at least 64 MiB (less cannot even start a compiler).
fn mib(flag: &str, v: Option<u64>) -> crate::Result<Option<u64>> {
    match v {
        Some(n) if n != 0 && n < 64 => {
            Err(usage(flag, format!("{n}: 0 (no cap) or at least 64 MiB")))
        }
        v => Ok(v),
    }
}

/// Whether `case` is a random case of `seed` (`r<seed>_<i>_...`).
fn is_random_name(case: &str, seed: u64) -> bool {
    case.strip_prefix(&format!("r{seed}_"))
        .and_then(|rest| rest.split('_').next())
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
}

fn tag(r: &CaseResult) -> String {
    match &r.status {
        Status::Pass | Status::Fail => r.status.verdict().word().into(),
        Status::Error(c) | Status::Skipped(c) => format!("{} [{c}]", r.status.verdict().word()),
    }
}

fn row(r: &CaseResult) -> Value {
    json!({
        "case": r.case, "status": r.verdict_name(), "detail": r.detail,
        "error_class": match &r.status { Status::Error(c) | Status::Skipped(c) => Value::from(c.id()), _ => Value::Null },
        "max_err_ratio": r.comparison.as_ref().map(|v| v.max_err_ratio), "nmse": r.comparison.as_ref().map(|v| v.nmse),
        "looks_like": r.looks_like,
    })
}

/// `--builtin`: every shipped kernel at one tier. Host/device: references and unusual-correct
/// kernels pass every case, wrong variants are caught with their expected verdict. Compile:
/// every source for every arch, every entry's PTX signature checked.
fn builtin(a: &Options, out: &mut dyn FnMut(&str)) -> crate::Result<Report> {
    let t0 = Instant::now();
    let kernels: Vec<Builtin> = super::builtins()?
        .into_iter()
        .filter(|k| a.only.is_empty() || a.only.contains(&k.entry))
        .collect();
    if kernels.is_empty() {
        return Err(Error::new(
            ErrorClass::CorpusFilter,
            "--only",
            format!(
                "{:?} names no shipped kernel (entries: spec/kernel_variants.json)",
                a.only
            ),
        ));
    }
    if a.tier == Tier::Compile {
        return builtin_compile(&kernels, a, t0, out);
    }
    let timeout = a
        .timeout
        .map(Duration::from_secs)
        .unwrap_or_else(super::host_timeout);
    check_random(a.random)?;
    let verdicts = match a.tier {
        Tier::Host => run_builtins_host(&a.only, a.random, a.seed, timeout),
        _ => device_builtins(&kernels, a),
    };
    let verdicts = match verdicts {
        Err(e) if e.class() == ErrorClass::KernelTierUnavailable => {
            say!(
                out,
                "SKIPPED: tier {} cannot run here: {}",
                a.tier.name(),
                esc(&e)
            );
            say!(out, "RESULT: SKIPPED (not a pass)");
            return Ok(Report::new(
                2,
                json!({"tier": a.tier.name(), "status": "skipped", "error": e.to_string()}),
            ));
        }
        r => r?,
    };
    let bad = builtin_lines(&verdicts, a, t0, out);
    Ok(Report {
        code: if bad == 0 { 0 } else { 1 },
        json: Some(
            json!({"tier": a.tier.name(), "status": if bad == 0 { "passed" } else { "failed" },
            "kernels": verdicts.iter().map(|v| json!({"entry": v.kernel.entry, "ok": v.ok, "verdict": v.verdict, "first_case": v.first_case, "looks_like": v.looks_like, "what": v.what})).collect::<Vec<_>>()}),
        ),
        markdown: a.markdown.then(|| markdown_table(&verdicts)),
    })
}

/// One line per shipped kernel and the totals; returns how many did not behave as the spec says.
fn builtin_lines(
    verdicts: &[BuiltinVerdict],
    a: &Options,
    t0: Instant,
    out: &mut dyn FnMut(&str),
) -> usize {
    let bad = verdicts.iter().filter(|v| !v.ok).count();
    for v in verdicts {
        let nmse = if v.max_nmse > 0.0 {
            format!(" (max NMSE of passing cases {:.1e})", v.max_nmse)
        } else {
            String::new()
        };
        say!(
            out,
            "{} {}: {}{nmse}",
            if v.ok { "OK  " } else { "BAD " },
            v.kernel.entry,
            esc(&v.what)
        );
    }
    let count = |f: fn(&Role) -> bool| verdicts.iter().filter(|v| f(&v.kernel.role)).count();
    say!(
        out,
        "{} kernels ({} reference, {} correct-but-unusual, {} wrong variants){}: {bad} not as the spec says ({:.1} s)",
        verdicts.len(),
        count(|r| matches!(r, Role::Reference)),
        count(|r| matches!(r, Role::Unusual { .. })),
        count(|r| matches!(r, Role::Wrong { .. })),
        match a.random {
            Some(n) => format!(", {n} random cases per format plus the real-model-scale fixed cases, seed {}", a.seed),
            None => format!(", fixed cases plus {} random cases per format, seed {}", super::DEFAULT_RANDOM, a.seed),
        },
        t0.elapsed().as_secs_f64()
    );
    say!(out, "{} passed, {bad} failed", verdicts.len() - bad);
    say!(
        out,
        "RESULT: {}",
        if bad == 0 { "PASSED" } else { "FAILED" }
    );
    bad
}

/// `--builtin --tier compile`: every shipped source compiled by NVRTC for every arch, every
/// entry's PTX signature checked against its ABI.
fn builtin_compile(
    kernels: &[Builtin],
    a: &Options,
    t0: Instant,
    out: &mut dyn FnMut(&str),
) -> crate::Result<Report> {
    let archs: Vec<String> = match &a.arch {
        Some(x) => vec![x.to_string()],
        None => crate::spec::get().kernels.compile.archs.clone(),
    };
    let mut srcs: Vec<&str> = kernels.iter().map(|k| k.source.as_str()).collect();
    srcs.sort();
    srcs.dedup();
    let (mut compiled, mut checked) = (0, 0);
    for arch in &archs {
        for s in &srcs {
            let text = sources::builtin_resolved(s)?;
            let ptx = match compile_one(&text, arch, &a.nvrtc_option) {
                Ok(p) => p,
                Err(e) if e.class() == ErrorClass::KernelTierUnavailable => {
                    say!(out, "SKIPPED: {}", esc(&e));
                    say!(out, "RESULT: SKIPPED (not a pass)");
                    return Ok(Report::new(
                        2,
                        json!({"tier": "compile", "status": "skipped", "error": e.to_string()}),
                    ));
                }
                Err(e) => {
                    say!(out, "ERROR {s} for {arch}: {}", show(&e));
                    say!(out, "RESULT: FAILED");
                    return Ok(Report::new(
                        1,
                        json!({"tier": "compile", "status": "failed", "error": e.to_string()}),
                    ));
                }
            };
            compiled += 1;
            for k in kernels.iter().filter(|k| k.source == *s) {
                if let Err(e) = check_ptx(&ptx, &k.entry, &k.abi.sig()) {
                    say!(out, "ERROR {} in {s} for {arch}: {}", k.entry, esc(&e));
                    say!(out, "RESULT: FAILED");
                    // As before the move: a signature mismatch writes no JSON report.
                    return Ok(Report {
                        code: 1,
                        json: None,
                        markdown: None,
                    });
                }
                checked += 1;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    say!(
        out,
        "NVRTC compiled {} kernel sources x {} archs ({}) = {compiled} compilations; {checked} entry points ({} kernels) matched their ABI; {secs:.1} s",
        srcs.len(),
        archs.len(),
        archs.join(", "),
        kernels.len(),
    );
    say!(out, "RESULT: PASSED");
    Ok(Report::new(
        0,
        json!({"tier": "compile", "status": "passed", "compilations": compiled, "entries_checked": checked, "archs": archs, "seconds": secs}),
    ))
}

fn device_builtins(kernels: &[Builtin], a: &Options) -> crate::Result<Vec<BuiltinVerdict>> {
    let mut out = Vec::new();
    for k in kernels {
        let src = sources::builtin_resolved(&k.source)?;
        let cases = match a.random {
            Some(n) => super::random_cases(k.class, &k.formats, n, a.seed)?,
            None => super::cases_default(k.class, &k.formats, a.seed)?,
        };
        match super::run_device(&src, &k.entry, &k.abi, &cases) {
            Ok(rs) => out.push(judge_builtin(k, &rs, a.random.is_some())),
            Err(e) if e.class() == ErrorClass::KernelTierUnavailable => return Err(e),
            Err(e) => out.push(BuiltinVerdict::error(k, &e)),
        }
    }
    Ok(out)
}

#[cfg(feature = "cuda")]
fn compile_one(text: &str, arch: &str, opts: &[String]) -> crate::Result<String> {
    super::nvrtc::compile_with(text, Some(arch), opts).map(|p| p.to_src())
}

#[cfg(not(feature = "cuda"))]
fn compile_one(_text: &str, _arch: &str, _opts: &[String]) -> crate::Result<String> {
    Err(Error::new(
        ErrorClass::KernelTierUnavailable,
        "compile",
        "this binary was built without the `cuda` feature (cargo build --features cuda)",
    ))
}

#[cfg(feature = "cuda")]
fn check_ptx(ptx: &str, entry: &str, sig: &[String]) -> crate::Result<()> {
    super::nvrtc::check_entry(ptx, entry, sig)
}

#[cfg(not(feature = "cuda"))]
fn check_ptx(_ptx: &str, _entry: &str, _sig: &[String]) -> crate::Result<()> {
    Ok(())
}

/// The demo's kernel step (host tier; the device tier too where a GPU is present): the
/// reference PTQ1_0 dequantize kernel passes, the sequential-trit wrong variant fails.
pub fn demo_step(out: &mut dyn FnMut(&str)) -> crate::Result<bool> {
    let t0 = Instant::now();
    let mut ok = true;
    let class = KernelClass::Dequantize;
    let cases = super::cases_for(class, &[super::format::KernelFormat::PTQ1_0])?;
    let cases = &cases[..1];
    let pairs = [
        ("dequantize.cu", "ref_dequantize_ptq1_0"),
        (
            "wrong/ptq1_sequential.cu",
            "wrong_dequantize_ptq1_0_sequential",
        ),
    ];
    let mut tiers = vec![Tier::Host];
    if cfg!(feature = "cuda") {
        tiers.push(Tier::Device);
    }
    let abi = KernelAbi::default_for(class, Precision::F32)?;
    for tier in tiers {
        for (src, entry) in pairs {
            let text = sources::builtin_resolved(src)?;
            let r = match tier {
                Tier::Host => super::host::available().and_then(|_| {
                    super::run_host(&text, entry, class, cases, super::host_timeout())
                }),
                _ => super::run_device(&text, entry, &abi, cases),
            };
            match r {
                Ok(rs) => {
                    for x in rs {
                        let wrong = entry.starts_with("wrong_");
                        ok &= x.failed() == wrong;
                        say!(
                            out,
                            "kernel     [{}] {entry} on {}: {}{} -- {}",
                            tier.name(),
                            x.case,
                            if x.failed() { "FAIL" } else { "PASS" },
                            if wrong {
                                " (negative control, must fail)"
                            } else {
                                ""
                            },
                            x.detail
                        );
                    }
                }
                Err(e) if e.class() == ErrorClass::KernelTierUnavailable => {
                    say!(
                        out,
                        "kernel     [{}] SKIPPED (not run): {}",
                        tier.name(),
                        esc(&e)
                    );
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    say!(
        out,
        "kernel     reference passes, wrong variant fails {:>41.3}s",
        t0.elapsed().as_secs_f64()
    );
    Ok(ok)
}
