//! `check-kernel`: runs a third-party (or a shipped) CUDA kernel over the kernel cases of its
//! class at one tier and reports pass/fail per case, like `check-reader`.
//! Exit 0: every case passed. 1: a case failed, or the kernel does not compile / lacks the
//! entry / has the wrong signature. 2: usage or environment error (a tier that cannot run here
//! is SKIPPED, never passed).

use anyhow::Context;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cuda::{self, sources, KernelClass, Status, Tier};
use crate::error::{Error, ErrorClass};

pub struct Args {
    pub source: Option<PathBuf>,
    pub entry: Option<String>,
    pub class: Option<String>,
    pub format: Option<String>,
    pub arch: Option<String>,
    pub tier: String,
    pub json: Option<PathBuf>,
    pub timeout: Option<u64>,
    pub builtin: bool,
}

/// Reads the source and inlines its `#include "..."` (next to it, then the built-in headers).
/// Escaped text of anything printed here that can carry a file's text (a kernel source's
/// compiler diagnostics, case details): no control or bidi character reaches the terminal.
fn esc(x: &dyn std::fmt::Display) -> String {
    crate::text::escape(&x.to_string()).into_owned()
}

fn read_source(path: &Path) -> crate::Result<String> {
    let text = crate::fsio::read_input_string(path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    sources::resolve(&text, &name, &|rel| {
        crate::fsio::read_input_string(&dir.join(rel)).ok()
    })
}

fn write_json(path: Option<&Path>, v: &Value) -> anyhow::Result<()> {
    if let Some(p) = path {
        let mut s = serde_json::to_string_pretty(v)?;
        s.push('\n');
        crate::fsio::write_bytes_atomic(p, s.as_bytes())
            .with_context(|| p.display().to_string())?;
    }
    Ok(())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let tier = Tier::parse(&a.tier)?;
    if a.builtin {
        return builtin(tier, a.arch.as_deref(), a.json.as_deref(), a.timeout);
    }
    let usage = |w: &str| {
        Error::new(
            ErrorClass::CliUsage,
            w,
            format!("{w} is required (or --builtin)"),
        )
    };
    let src_path = a.source.ok_or_else(|| usage("--source"))?;
    let entry = a.entry.ok_or_else(|| usage("--entry"))?;
    let class = KernelClass::parse(&a.class.ok_or_else(|| usage("--class"))?)?;
    let formats = cuda::default_formats(class, a.format.as_deref())?;
    let source = read_source(&src_path)?;
    let cases = cuda::cases_for(class, &formats);
    let head = format!(
        "check-kernel {entry} ({}, {}) from {} -- tier {}",
        class.name(),
        formats.join(","),
        src_path.display(),
        tier.name()
    );
    println!("{}", esc(&head));
    let mut report = json!({
        "source": src_path.display().to_string(), "entry": entry, "class": class.name(),
        "formats": formats, "tier": tier.name(),
    });
    let t0 = Instant::now();
    let outcome = match tier {
        Tier::Host => cuda::host::available().and_then(|cxx| {
            println!("host compiler: {} ({cxx})", cuda::host::compiler());
            let timeout = a
                .timeout
                .map(Duration::from_secs)
                .unwrap_or_else(cuda::host_timeout);
            cuda::run_host(&source, &entry, class, &cases, timeout)
        }),
        Tier::Device => cuda::run_device(&source, &entry, class, &cases),
        Tier::Compile => {
            let archs: Vec<String> = match &a.arch {
                Some(x) => vec![x.clone()],
                None => crate::spec::get().kernels.compile.archs.clone(),
            };
            cuda::compile_nvrtc(&source, &entry, class, &archs).map(|_| {
                println!(
                    "PASS compiled with NVRTC for {} and the PTX entry matches the {} ABI",
                    archs.join(", "),
                    class.name()
                );
                Vec::new()
            })
        }
    };
    let results = match outcome {
        Err(e) if e.class == ErrorClass::KernelTierUnavailable => {
            println!("SKIPPED: tier {} cannot run here: {}", tier.name(), esc(&e));
            println!("RESULT: SKIPPED (not a pass)");
            report["status"] = "skipped".into();
            report["error"] = json!({"class": e.class.id(), "message": e.to_string()});
            write_json(a.json.as_deref(), &report)?;
            return Ok(ExitCode::from(2));
        }
        Err(e)
            if matches!(
                e.class,
                ErrorClass::CliUsage | ErrorClass::IoRead | ErrorClass::IoWrite
            ) =>
        {
            return Err(e.into())
        }
        Err(e) => {
            println!("ERROR {}", esc(&e));
            println!("RESULT: FAILED");
            report["status"] = "failed".into();
            report["error"] = json!({"class": e.class.id(), "message": e.to_string()});
            write_json(a.json.as_deref(), &report)?;
            return Ok(ExitCode::from(1));
        }
        Ok(r) => r,
    };
    let (mut pass, mut fail) = (0, 0);
    let mut rows = Vec::new();
    for r in &results {
        let tag = match &r.status {
            Status::Pass => {
                pass += 1;
                "PASS".to_string()
            }
            Status::Fail => {
                fail += 1;
                "FAIL".to_string()
            }
            Status::Error(c) => {
                fail += 1;
                format!("FAIL [{c}]")
            }
        };
        println!("{tag} {}: {}", esc(&r.case), esc(&r.detail));
        rows.push(json!({
            "case": r.case, "status": if r.failed() { "fail" } else { "pass" }, "detail": r.detail,
            "error_class": match &r.status { Status::Error(c) => Value::from(c.id()), _ => Value::Null },
            "max_err_ratio": r.verdict.as_ref().map(|v| v.max_err_ratio), "nmse": r.verdict.as_ref().map(|v| v.nmse),
        }));
    }
    if let Some(first) = results.iter().find(|r| r.failed()) {
        println!(
            "first failing case: {} -- {}",
            esc(&first.case),
            esc(&first.detail)
        );
    }
    println!(
        "{pass} passed, {fail} failed, 0 skipped ({:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    let ok = fail == 0;
    println!("RESULT: {}", if ok { "PASSED" } else { "FAILED" });
    report["status"] = if ok { "passed" } else { "failed" }.into();
    report["results"] = rows.into();
    write_json(a.json.as_deref(), &report)?;
    Ok(ExitCode::from(if ok { 0 } else { 1 }))
}

/// `--builtin`: every shipped kernel at one tier. Host/device: references must pass every
/// case, wrong variants must fail exactly their named cases. Compile: every source for every
/// arch, every entry's PTX signature checked.
fn builtin(
    tier: Tier,
    arch: Option<&str>,
    json_out: Option<&Path>,
    timeout: Option<u64>,
) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let kernels = cuda::builtins();
    if tier == Tier::Compile {
        let archs: Vec<String> = match arch {
            Some(x) => vec![x.to_string()],
            None => crate::spec::get().kernels.compile.archs.clone(),
        };
        let mut srcs: Vec<&str> = kernels.iter().map(|k| k.source.as_str()).collect();
        srcs.sort();
        srcs.dedup();
        let (mut compiled, mut checked) = (0, 0);
        for a in &archs {
            for s in &srcs {
                let text = sources::builtin_resolved(s)?;
                let ptx = match compile_one(&text, a) {
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
                        println!("ERROR {s} for {a}: {}", esc(&e));
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
                    if let Err(e) = check_ptx(&ptx, &k.entry, k.class) {
                        println!("ERROR {} in {s} for {a}: {}", k.entry, esc(&e));
                        println!("RESULT: FAILED");
                        return Ok(ExitCode::from(1));
                    }
                    checked += 1;
                }
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "NVRTC compiled {} kernel sources x {} archs ({}) = {compiled} compilations; {checked} entry points ({} kernels: {} reference, {} wrong variants) matched their ABI; {secs:.1} s",
            srcs.len(),
            archs.len(),
            archs.join(", "),
            kernels.len(),
            kernels.iter().filter(|k| k.must_fail.is_none()).count(),
            kernels.iter().filter(|k| k.must_fail.is_some()).count(),
        );
        println!("RESULT: PASSED");
        write_json(
            json_out,
            &json!({"tier": "compile", "status": "passed", "compilations": compiled, "entries_checked": checked, "archs": archs, "seconds": secs}),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut bad = 0;
    let mut rows = Vec::new();
    for k in &kernels {
        let src = sources::builtin_resolved(&k.source)?;
        let cases = cuda::cases_for(k.class, &k.formats);
        let res = match tier {
            Tier::Host => cuda::run_host(
                &src,
                &k.entry,
                k.class,
                &cases,
                timeout
                    .map(Duration::from_secs)
                    .unwrap_or_else(cuda::host_timeout),
            ),
            _ => cuda::run_device(&src, &k.entry, k.class, &cases),
        };
        let rs = match res {
            Err(e) if e.class == ErrorClass::KernelTierUnavailable => {
                println!("SKIPPED: tier {} cannot run here: {}", tier.name(), esc(&e));
                println!("RESULT: SKIPPED (not a pass)");
                write_json(
                    json_out,
                    &json!({"tier": tier.name(), "status": "skipped", "error": e.to_string()}),
                )?;
                return Ok(ExitCode::from(2));
            }
            Err(e) => {
                println!("ERROR {}: {}", k.entry, esc(&e));
                bad += 1;
                continue;
            }
            Ok(r) => r,
        };
        let failed: Vec<&str> = rs
            .iter()
            .filter(|r| r.failed())
            .map(|r| r.case.as_str())
            .collect();
        let (ok, what) = match &k.must_fail {
            None => (
                failed.is_empty(),
                format!(
                    "reference: {}/{} cases pass",
                    rs.len() - failed.len(),
                    rs.len()
                ),
            ),
            Some(m) => {
                let mut want: Vec<&str> = m.iter().map(String::as_str).collect();
                want.sort();
                let mut got = failed.clone();
                got.sort();
                (
                    got == want,
                    format!("wrong variant: fails {got:?} (must fail {want:?})"),
                )
            }
        };
        if !ok {
            bad += 1;
        }
        println!(
            "{} {}: {}",
            if ok { "OK  " } else { "BAD " },
            k.entry,
            esc(&what)
        );
        rows.push(json!({"entry": k.entry, "ok": ok, "failed_cases": failed}));
    }
    println!(
        "{} kernels, {bad} not as the spec says ({:.1} s)",
        kernels.len(),
        t0.elapsed().as_secs_f64()
    );
    println!("RESULT: {}", if bad == 0 { "PASSED" } else { "FAILED" });
    write_json(
        json_out,
        &json!({"tier": tier.name(), "status": if bad == 0 { "passed" } else { "failed" }, "kernels": rows}),
    )?;
    Ok(ExitCode::from(if bad == 0 { 0 } else { 1 }))
}

#[cfg(feature = "cuda")]
fn compile_one(text: &str, arch: &str) -> crate::Result<String> {
    cuda::nvrtc::compile(text, Some(arch)).map(|p| p.to_src())
}

#[cfg(not(feature = "cuda"))]
fn compile_one(_text: &str, _arch: &str) -> crate::Result<String> {
    Err(Error::new(
        ErrorClass::KernelTierUnavailable,
        "compile",
        "this binary was built without the `cuda` feature (cargo build --features cuda)",
    ))
}

#[cfg(feature = "cuda")]
fn check_ptx(ptx: &str, entry: &str, class: KernelClass) -> crate::Result<()> {
    cuda::nvrtc::check_entry(ptx, entry, class)
}

#[cfg(not(feature = "cuda"))]
fn check_ptx(_ptx: &str, _entry: &str, _class: KernelClass) -> crate::Result<()> {
    Ok(())
}

/// The demo's kernel step (host tier; the device tier too where a GPU is present): the
/// reference PTQ1_0 dequantize kernel passes, the sequential-trit wrong variant fails.
pub fn demo_step() -> anyhow::Result<bool> {
    let t0 = Instant::now();
    let mut ok = true;
    let class = KernelClass::Dequantize;
    let cases = cuda::cases_for(class, &["ptq1_0".to_string()]);
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
    for tier in tiers {
        for (src, entry) in pairs {
            let text = sources::builtin_resolved(src)?;
            let r = match tier {
                Tier::Host => cuda::host::available()
                    .and_then(|_| cuda::run_host(&text, entry, class, cases, cuda::host_timeout())),
                _ => cuda::run_device(&text, entry, class, cases),
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
                Err(e) => return Err(e.into()),
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
) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "cuda")]
    {
        if let Err(e) = cuda::device::available() {
            println!(
                "SKIPPED: dump-reference --device cuda cannot run here: {}",
                esc(&e)
            );
            return Ok(ExitCode::from(2));
        }
        let code = super::verify_cmd::dump_reference(
            artifact,
            output,
            tokens,
            seed,
            crate::verify::DumpFormat::Native,
            force,
        )?;
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
