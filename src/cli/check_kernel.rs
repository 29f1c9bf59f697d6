//! `check-kernel`: runs a third-party (or a shipped) CUDA kernel over the kernel cases of its
//! class at one tier and reports pass/fail per case, like `check-reader`.
//! Exit 0: every case passed. 1: a case failed, or the kernel does not compile / lacks the
//! entry / has the wrong signature. 2: usage or environment error, or a kernel the tier cannot
//! emulate (`kernel.unsupported`) — SKIPPED, never passed.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cuda::check::{self, HostSetup};
use crate::cuda::kernel_abi::{AbiSidecar, KernelAbi};
use crate::cuda::suite::{judge_builtin, markdown_table, run_builtins_host, BuiltinVerdict};
use crate::cuda::{self, sources, Builtin, CaseResult, KernelClass, Precision, Role, Status, Tier};
use crate::error::{Error, ErrorClass};

/// The command's options.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Kernel source (.cu); `#include "x"` is resolved next to the including file, then in the
    /// -I folders, then (bare names only) among the built-in headers.
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// extern "C" __global__ entry point (or `entry` of the --abi file).
    #[arg(long)]
    pub entry: Option<String>,
    /// dequantize, get_rows, mul_mat_vec, mul_mat_vec_planes, mul_mat, hadamard_rotate, mul_mat_planes.
    #[arg(long)]
    pub class: Option<String>,
    /// Case format (needed when the class has several).
    #[arg(long)]
    pub format: Option<String>,
    /// ABI sidecar JSON: the kernel's own launch (grid/block/shared as expressions of the case
    /// dims), parameter list (bindings + C types) and precision (spec/kernels.json `sidecar`).
    #[arg(long)]
    pub abi: Option<PathBuf>,
    /// Precision mode: f32 (default), f16-in, bf16-in, q8_1-in, i8g32-in, i8g32h-in, f16-out, bf16-out, or
    /// combinations joined by '+' (e.g. bf16-in+bf16-out). Overrides the --abi file's.
    #[arg(long)]
    pub precision: Option<String>,
    /// Include folder for `#include "..."` (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Preprocessor definition NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "DEF")]
    pub define: Vec<String>,
    /// Extra NVRTC option for the compile and device tiers (repeatable, e.g. -default-device).
    #[arg(long = "nvrtc-option", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_option: Vec<String>,
    /// Architecture: NVRTC's for --tier compile (default: every arch of spec/kernels.json); the
    /// value of __CUDA_ARCH__ for --tier host (default: every arch when the source branches on
    /// __CUDA_ARCH__, else the first).
    #[arg(long)]
    pub arch: Option<String>,
    /// host (C++ compiler + CPU shim), compile (NVRTC), device (GPU).
    #[arg(long, default_value = "host")]
    pub tier: String,
    /// Write the report as JSON to this path ('-': standard output); schema
    /// spec/schemas/check-kernel-report.schema.json.
    #[arg(long, value_name = "PATH|-")]
    pub json: Option<PathBuf>,
    /// Replace an existing --json or --markdown file.
    #[arg(long)]
    pub force: bool,
    /// Per-case timeout in seconds (host tier; 1 to 86400).
    #[arg(long, value_parser = super::parse_timeout_whole)]
    pub timeout: Option<u64>,
    /// Wall-clock limit of one host-tier compile, in seconds (default 120).
    #[arg(long, value_name = "SECONDS")]
    pub compile_timeout: Option<u64>,
    /// Address-space cap of the host compiler in MiB (default 4096; 0: none).
    #[arg(long, value_name = "MIB")]
    pub compile_memory_mb: Option<u64>,
    /// Address-space cap of the host-tier kernel process in MiB (default 4096; 0: none).
    #[arg(long, value_name = "MIB")]
    pub memory_mb: Option<u64>,
    /// Check every shipped kernel instead: references and correct-but-unusual kernels pass,
    /// wrong variants are caught with their expected verdict.
    #[arg(long)]
    pub builtin: bool,
    /// Only these builtin kernels (entry names, repeatable).
    #[arg(long = "only", value_name = "ENTRY")]
    pub only: Vec<String>,
    /// Run N random cases per format (shapes and data drawn as test-backend-ops does) instead
    /// of the fixed cases, except the real-model-scale ones (k >= 5120, vocabulary tables),
    /// which still run; a failure names the case to replay with the same --seed.
    #[arg(long, value_name = "N")]
    pub random: Option<usize>,
    /// Seed of --random and of the random thread schedule.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only cases whose name contains this text (repeatable: any of them).
    #[arg(long = "case", value_name = "TEXT")]
    pub case: Vec<String>,
    /// Only hadamard_rotate cases of this block size B.
    #[arg(long)]
    pub block: Option<u64>,
    /// With --builtin: write the verdict table (Markdown) to this path.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

/// Escaped text of anything printed here that can carry a file's text (a kernel source's
/// compiler diagnostics, case details): no control or bidi character reaches the terminal,
/// but line breaks stay line breaks.
fn esc(x: &dyn std::fmt::Display) -> String {
    x.to_string()
        .lines()
        .map(|l| crate::text::escape(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An error with its detail's line breaks kept (compiler diagnostics span lines).
fn show(e: &Error) -> String {
    let mut s = format!("[{}] ", e.class);
    if !e.field.is_empty() {
        s.push_str(&esc(&e.field));
        s.push_str(": ");
    }
    s.push_str(&esc(&e.detail));
    s
}

fn read_source(path: &Path, include_dirs: &[PathBuf]) -> crate::Result<String> {
    // Includes confined to the kernel's folder and the -I folders, each file checked before
    // it is read (kernel.include).
    cuda::confine::read_source(path, include_dirs)
}

fn write_json(path: Option<&Path>, v: &Value) -> crate::Result<()> {
    if let Some(p) = path {
        // Claimed in `run` before any work; written atomically, with the report header.
        super::json_out::JsonTarget::parse(p).write("check-kernel-report", v.clone())?;
    }
    Ok(())
}

fn usage(field: &str, what: impl Into<String>) -> Error {
    Error::new(ErrorClass::CliUsage, field, what)
}

/// The most random cases per format one run draws (built and run a chunk at a time).
const MAX_RANDOM: usize = 100_000;

/// The case plan of a run: fixed (corpus + generated matrix) or random (built lazily, after
/// `--case` picked them by name), then the filters.
fn select_cases(class: KernelClass, formats: &[String], a: &Args) -> crate::Result<cuda::CasePlan> {
    if let Some(n) = a.random {
        if n == 0 || n > MAX_RANDOM {
            return Err(usage(
                "--random",
                format!("{n}: between 1 and {MAX_RANDOM} cases per format"),
            ));
        }
    }
    if a.block.is_some() && class != KernelClass::HadamardRotate {
        return Err(usage(
            "--block",
            "only hadamard_rotate cases have a block size",
        ));
    }
    let plan = match a.random {
        Some(n) => cuda::CasePlan::random(class, formats, n, a.seed, &a.case, a.block)?,
        None => {
            let mut cs = cuda::cases_default(class, formats, a.seed)?;
            if !a.case.is_empty() {
                cs.retain(|c| a.case.iter().any(|t| c.name.contains(t.as_str())));
            }
            if let Some(b) = a.block {
                cs.retain(|c| c.dims.block == b);
            }
            cuda::CasePlan::Fixed(cs)
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

fn host_setup(a: &Args) -> crate::Result<HostSetup> {
    let archs = match (&a.arch, a.tier.as_str()) {
        (Some(x), "host") => vec![check::arch_value(x)
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
            .unwrap_or_else(cuda::host_timeout),
        schedule_seed: a.seed,
        compile_timeout: match a.compile_timeout {
            Some(0) => return Err(usage("--compile-timeout", "0: at least 1 second")),
            Some(t) => Duration::from_secs(t),
            None => cuda::host::DEFAULT_COMPILE_TIMEOUT,
        },
        compile_memory_mb: mib("--compile-memory-mb", a.compile_memory_mb)?
            .unwrap_or(cuda::host::DEFAULT_COMPILE_MEMORY_MB),
        memory_mb: mib("--memory-mb", a.memory_mb)?.unwrap_or(cuda::host::DEFAULT_MEMORY_MB),
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

pub fn run(a: Args) -> crate::Result<ExitCode> {
    // With `--json -` the report owns standard output; the human lines go to standard error.
    let json_to_stdout = a.json.as_deref() == Some(Path::new("-"));
    macro_rules! say {
        ($($t:tt)*) => {
            if json_to_stdout { eprintln!($($t)*) } else { println!($($t)*) }
        };
    }
    let tier = Tier::parse(&a.tier)?;
    // The report file is claimed before any work (an existing one needs --force; never an input).
    let inputs: Vec<&Path> = a
        .source
        .iter()
        .chain(a.abi.iter())
        .map(|p| p.as_path())
        .collect();
    super::json_out::JsonTarget::claim(a.json.as_deref(), a.force, &inputs)?;
    // --markdown is claimed the same way (--force replaces an existing table).
    if let Some(md) = &a.markdown {
        crate::fsio::claim_output(md, crate::fsio::OutputKind::File, a.force, &inputs)?;
    }
    if a.builtin {
        if !a.case.is_empty() || a.block.is_some() {
            return Err(usage(
                "--case/--block",
                "--builtin runs every case of every shipped kernel; --case and --block select cases of a --source run",
            ));
        }
        return builtin(tier, &a);
    }
    let sidecar: AbiSidecar = match &a.abi {
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
    let src_path = a
        .source
        .clone()
        .ok_or_else(|| usage("--source", "--source is required (or --builtin)"))?;
    let entry = a.entry.clone().or(sidecar.entry.clone()).ok_or_else(|| {
        usage(
            "--entry",
            "--entry is required (or `entry` in the --abi file)",
        )
    })?;
    let class_name = a.class.clone().or(sidecar.class.clone()).ok_or_else(|| {
        usage(
            "--class",
            "--class is required (or `class` in the --abi file)",
        )
    })?;
    let class = KernelClass::parse(&class_name)?;
    let precision = a.precision.as_deref().map(Precision::parse).transpose()?;
    let abi = KernelAbi::from_sidecar(class, &sidecar, precision)?;
    let formats = match (&a.format, &sidecar.formats) {
        (None, Some(f)) => f.clone(),
        (f, _) => cuda::default_formats(class, f.as_deref())?,
    };
    let source = read_source(&src_path, &a.include)?;
    let cases = select_cases(class, &formats, &a)?;
    let head = format!(
        "check-kernel {entry} ({}, {}, precision {}) from {} -- tier {}",
        class.name(),
        formats.join(","),
        abi.precision,
        src_path.display(),
        tier.name()
    );
    say!("{}", esc(&head));
    match a.random {
        Some(n) => say!(
            "cases: {n} random per format, seed {}, plus the fixed real-model-scale cases (k >= 5120, vocabulary tables) that random shapes never reach",
            a.seed
        ),
        None => say!(
            "cases: fixed (corpus + generated matrix) plus {} random per format, seed {} (r{}_*)",
            cuda::DEFAULT_RANDOM,
            a.seed,
            a.seed
        ),
    }
    let mut report = json!({
        "source": src_path.display().to_string(), "entry": entry, "class": class.name(),
        "formats": formats, "tier": tier.name(), "precision": abi.precision.name(),
        "random": a.random, "seed": a.seed,
    });
    let t0 = Instant::now();
    let outcome = match tier {
        Tier::Host => cuda::host::available().and_then(|cxx| {
            let setup = host_setup(&a)?;
            let archs = if setup.archs.is_empty() {
                check::host_archs(&source)
            } else {
                setup.archs.clone()
            };
            say!(
                "host compiler: {} ({cxx}); __CUDA_ARCH__ {}",
                cuda::host::compiler(),
                archs
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            cases.run(&mut |cs| check::run_host(&source, &entry, &abi, cs, &setup))
        }),
        Tier::Device => cases.run(&mut |cs| cuda::run_device(&source, &entry, &abi, cs)),
        Tier::Compile => {
            let archs: Vec<String> = match &a.arch {
                Some(x) => vec![x.clone()],
                None => crate::spec::get().kernels.compile.archs.clone(),
            };
            let mut opts = a.nvrtc_option.clone();
            opts.extend(a.define.iter().map(|d| format!("-D{d}")));
            cuda::compile_nvrtc(&source, &entry, &abi.sig(), &archs, &opts).map(|_| {
                say!(
                    "PASS compiled with NVRTC for {} and the PTX entry matches the ABI ({})",
                    archs.join(", "),
                    abi.sig().join(", ")
                );
                Vec::new()
            })
        }
    };
    let results = match outcome {
        Err(e)
            if matches!(
                e.class,
                ErrorClass::KernelTierUnavailable | ErrorClass::KernelUnsupported
            ) =>
        {
            say!(
                "SKIPPED: tier {} cannot run this kernel here: {}",
                tier.name(),
                show(&e)
            );
            say!("RESULT: SKIPPED (not a pass)");
            report["status"] = "skipped".into();
            report["error"] = json!({"class": e.class.id(), "message": e.to_string()});
            write_json(a.json.as_deref(), &report)?;
            return Ok(ExitCode::from(2));
        }
        Err(e)
            if matches!(
                e.class,
                ErrorClass::CliUsage
                    | ErrorClass::IoRead
                    | ErrorClass::IoWrite
                    | ErrorClass::KernelCache
            ) =>
        {
            return Err(e)
        }
        Err(e) => {
            say!("ERROR {}", show(&e));
            say!("RESULT: FAILED");
            report["status"] = "failed".into();
            report["error"] = json!({"class": e.class.id(), "message": e.to_string()});
            write_json(a.json.as_deref(), &report)?;
            return Ok(ExitCode::from(1));
        }
        Ok(r) => r,
    };
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    for r in &results {
        match r.status {
            Status::Pass => pass += 1,
            Status::Skipped(_) => skip += 1,
            _ => fail += 1,
        }
        say!("{} {}: {}", tag(r), esc(&r.case), esc(&r.detail));
    }
    if let Some(first) = results.iter().find(|r| r.failed()) {
        say!(
            "first failing case: {} -- {}",
            esc(&first.case),
            esc(&first.detail)
        );
        match a.random {
            Some(n) => say!(
                "replay: check-kernel ... --random {n} --seed {} --case {}",
                a.seed,
                first.case
            ),
            // A case of the default random batch (fixed cases replay with --case alone).
            None if is_random_name(&first.case, a.seed) => say!(
                "replay: check-kernel ... --seed {} --case {}",
                a.seed,
                first.case
            ),
            None => {}
        }
    }
    say!(
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
        "RESULT: {}",
        ["PASSED", "FAILED", "SKIPPED (not a pass)"][code as usize]
    );
    report["status"] = ["passed", "failed", "skipped"][code as usize].into();
    report["results"] = results.iter().map(row).collect::<Vec<_>>().into();
    write_json(a.json.as_deref(), &report)?;
    Ok(ExitCode::from(code))
}

/// `--builtin`: every shipped kernel at one tier. Host/device: references and unusual-correct
/// kernels pass every case, wrong variants are caught with their expected verdict. Compile:
/// every source for every arch, every entry's PTX signature checked.
fn builtin(tier: Tier, a: &Args) -> crate::Result<ExitCode> {
    // With `--json -` the report owns standard output; the human lines go to standard error.
    let json_to_stdout = a.json.as_deref() == Some(Path::new("-"));
    macro_rules! println {
        ($($t:tt)*) => {
            if json_to_stdout { eprintln!($($t)*) } else { std::println!($($t)*) }
        };
    }
    let t0 = Instant::now();
    let json_out = a.json.as_deref();
    let kernels: Vec<Builtin> = cuda::builtins()?
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
    if tier == Tier::Compile {
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
                    Err(e) if e.class == ErrorClass::KernelTierUnavailable => {
                        println!("SKIPPED: {}", esc(&e));
                        println!("RESULT: SKIPPED (not a pass)");
                        write_json(
                            json_out,
                            &json!({"tier": "compile", "status": "skipped", "error": e.to_string()}),
                        )?;
                        return Ok(ExitCode::from(2));
                    }
                    Err(e) => {
                        println!("ERROR {s} for {arch}: {}", show(&e));
                        println!("RESULT: FAILED");
                        write_json(
                            json_out,
                            &json!({"tier": "compile", "status": "failed", "error": e.to_string()}),
                        )?;
                        return Ok(ExitCode::from(1));
                    }
                };
                compiled += 1;
                for k in kernels.iter().filter(|k| k.source == *s) {
                    if let Err(e) = check_ptx(&ptx, &k.entry, &k.abi.sig()) {
                        println!("ERROR {} in {s} for {arch}: {}", k.entry, esc(&e));
                        println!("RESULT: FAILED");
                        return Ok(ExitCode::from(1));
                    }
                    checked += 1;
                }
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "NVRTC compiled {} kernel sources x {} archs ({}) = {compiled} compilations; {checked} entry points ({} kernels) matched their ABI; {secs:.1} s",
            srcs.len(),
            archs.len(),
            archs.join(", "),
            kernels.len(),
        );
        println!("RESULT: PASSED");
        write_json(
            json_out,
            &json!({"tier": "compile", "status": "passed", "compilations": compiled, "entries_checked": checked, "archs": archs, "seconds": secs}),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let timeout = a
        .timeout
        .map(Duration::from_secs)
        .unwrap_or_else(cuda::host_timeout);
    if let Some(n) = a.random {
        if n == 0 || n > MAX_RANDOM {
            return Err(usage(
                "--random",
                format!("{n}: between 1 and {MAX_RANDOM} cases per format"),
            ));
        }
    }
    let verdicts = match tier {
        Tier::Host => run_builtins_host(&a.only, a.random, a.seed, timeout),
        _ => device_builtins(&kernels, a),
    };
    let verdicts = match verdicts {
        Err(e) if e.class == ErrorClass::KernelTierUnavailable => {
            println!("SKIPPED: tier {} cannot run here: {}", tier.name(), esc(&e));
            println!("RESULT: SKIPPED (not a pass)");
            write_json(
                json_out,
                &json!({"tier": tier.name(), "status": "skipped", "error": e.to_string()}),
            )?;
            return Ok(ExitCode::from(2));
        }
        r => r?,
    };
    let bad = verdicts.iter().filter(|v| !v.ok).count();
    for v in &verdicts {
        let nmse = if v.max_nmse > 0.0 {
            format!(" (max NMSE of passing cases {:.1e})", v.max_nmse)
        } else {
            String::new()
        };
        println!(
            "{} {}: {}{nmse}",
            if v.ok { "OK  " } else { "BAD " },
            v.kernel.entry,
            esc(&v.what)
        );
    }
    let count = |f: fn(&Role) -> bool| verdicts.iter().filter(|v| f(&v.kernel.role)).count();
    println!(
        "{} kernels ({} reference, {} correct-but-unusual, {} wrong variants){}: {bad} not as the spec says ({:.1} s)",
        verdicts.len(),
        count(|r| matches!(r, Role::Reference)),
        count(|r| matches!(r, Role::Unusual { .. })),
        count(|r| matches!(r, Role::Wrong { .. })),
        match a.random {
            Some(n) => format!(", {n} random cases per format plus the real-model-scale fixed cases, seed {}", a.seed),
            None => format!(", fixed cases plus {} random cases per format, seed {}", cuda::DEFAULT_RANDOM, a.seed),
        },
        t0.elapsed().as_secs_f64()
    );
    println!("{} passed, {bad} failed", verdicts.len() - bad);
    println!("RESULT: {}", if bad == 0 { "PASSED" } else { "FAILED" });
    if let Some(md) = &a.markdown {
        crate::fsio::write_bytes_atomic(md, markdown_table(&verdicts).as_bytes())?;
    }
    write_json(
        json_out,
        &json!({"tier": tier.name(), "status": if bad == 0 { "passed" } else { "failed" },
            "kernels": verdicts.iter().map(|v| json!({"entry": v.kernel.entry, "ok": v.ok, "verdict": v.verdict, "first_case": v.first_case, "looks_like": v.looks_like, "what": v.what})).collect::<Vec<_>>()}),
    )?;
    Ok(ExitCode::from(if bad == 0 { 0 } else { 1 }))
}

fn device_builtins(kernels: &[Builtin], a: &Args) -> crate::Result<Vec<BuiltinVerdict>> {
    let mut out = Vec::new();
    for k in kernels {
        let src = sources::builtin_resolved(&k.source)?;
        let cases = match a.random {
            Some(n) => cuda::random_cases(k.class, &k.formats, n, a.seed)?,
            None => cuda::cases_default(k.class, &k.formats, a.seed)?,
        };
        match cuda::run_device(&src, &k.entry, &k.abi, &cases) {
            Ok(rs) => out.push(judge_builtin(k, &rs, a.random.is_some())),
            Err(e) if e.class == ErrorClass::KernelTierUnavailable => return Err(e),
            Err(e) => out.push(BuiltinVerdict::error(k, &e)),
        }
    }
    Ok(out)
}

#[cfg(feature = "cuda")]
fn compile_one(text: &str, arch: &str, opts: &[String]) -> crate::Result<String> {
    cuda::nvrtc::compile_with(text, Some(arch), opts).map(|p| p.to_src())
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
    cuda::nvrtc::check_entry(ptx, entry, sig)
}

#[cfg(not(feature = "cuda"))]
fn check_ptx(_ptx: &str, _entry: &str, _sig: &[String]) -> crate::Result<()> {
    Ok(())
}

/// The demo's kernel step (host tier; the device tier too where a GPU is present): the
/// reference PTQ1_0 dequantize kernel passes, the sequential-trit wrong variant fails.
pub fn demo_step() -> crate::Result<bool> {
    let t0 = Instant::now();
    let mut ok = true;
    let class = KernelClass::Dequantize;
    let cases = cuda::cases_for(class, &["ptq1_0".to_string()])?;
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
                Tier::Host => cuda::host::available()
                    .and_then(|_| cuda::run_host(&text, entry, class, cases, cuda::host_timeout())),
                _ => cuda::run_device(&text, entry, &abi, cases),
            };
            match r {
                Ok(rs) => {
                    for x in rs {
                        let wrong = entry.starts_with("wrong_");
                        ok &= x.failed() == wrong;
                        println!(
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
                Err(e) if e.class == ErrorClass::KernelTierUnavailable => {
                    println!(
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
    println!(
        "kernel     reference passes, wrong variant fails {:>41.3}s",
        t0.elapsed().as_secs_f64()
    );
    Ok(ok)
}

/// `dump-reference --device cuda`: the same dumps, every output computed by the reference
/// kernels on the GPU. Without a usable GPU nothing is written and the command says SKIPPED
/// (exit 2): host dumps are never passed off as device ones.
pub fn dump_reference_device(
    artifact: &Path,
    output: &Path,
    tokens: Option<&str>,
    seed: u64,
    force: bool,
) -> crate::Result<ExitCode> {
    #[cfg(feature = "cuda")]
    {
        if let Err(e) = cuda::device::available() {
            println!(
                "SKIPPED: dump-reference --device cuda cannot run here: {}",
                esc(&e)
            );
            return Ok(ExitCode::from(2));
        }
        // The host writer lays out manifests and inputs; the device then rewrites the outputs.
        let code = super::verify_cmd::dump_reference(super::verify_cmd::DumpReferenceArgs {
            artifact: artifact.to_path_buf(),
            output: output.to_path_buf(),
            tokens: tokens.map(str::to_string),
            seed,
            format: crate::verify::DumpFormat::Native,
            force,
            device: "host".into(),
            gguf: None,
        })?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
        let artifact_map = crate::fsio::map_file(artifact)?;
        let a = crate::ninfer::Artifact::parse(&artifact_map)?;
        let n = cuda::dumps::rewrite_on_device(&a, output)?;
        println!("device: {n} dump files recomputed by the reference CUDA kernels on GPU 0 (hadamard_rotate, dequantize, mul_mat_vec_planes)");
        Ok(ExitCode::SUCCESS)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (artifact, output, tokens, seed, force);
        println!("SKIPPED: dump-reference --device cuda needs a binary built with --features cuda and a GPU");
        Ok(ExitCode::from(2))
    }
}
