//! Running a kernel over cases on the host tier and judging every run: the canonical schedule
//! against the case's expectation under the kernel's precision, the other schedules against the
//! canonical one (a difference is a race unless it is rounding the rule allows), a failure named
//! by the known wrong reading it matches. A source that branches on `__CUDA_ARCH__` runs once per
//! architecture of spec/kernels.json `compile.archs`, and a failure says on which.

use std::path::PathBuf;
use std::time::Duration;

use super::cases::KernelCase;
use super::diagnose::{describe, diagnose_failure};
use super::expected::{expected, Expected};
use super::host::{EntrySig, HostBinary, HostOptions, Runs};
use super::judge::{judge, locate};
use super::kernel_abi::KernelAbi;
use super::{CaseResult, Status};
use crate::error::{Error, ErrorClass, Result};

/// How a host run is set up.
#[derive(Clone, Debug)]
pub struct HostSetup {
    /// `-D` definitions.
    pub defines: Vec<String>,
    /// `-I` folders.
    pub include_dirs: Vec<PathBuf>,
    /// `__CUDA_ARCH__` values to run; empty: [`host_archs`] of the source.
    pub archs: Vec<u32>,
    /// Per-case time limit.
    pub timeout: Duration,
    /// Seed of the random thread schedule.
    pub schedule_seed: u64,
    /// Wall-clock limit of one compile (`--compile-timeout`).
    pub compile_timeout: Duration,
    /// The compiler's address-space cap in MiB (`--compile-memory-mb`, 0: none).
    pub compile_memory_mb: u64,
    /// The kernel process's address-space cap in MiB (`--memory-mb`, 0: none).
    pub memory_mb: u64,
}

impl Default for HostSetup {
    fn default() -> Self {
        HostSetup {
            defines: Vec::new(),
            include_dirs: Vec::new(),
            archs: Vec::new(),
            timeout: super::host_timeout(),
            schedule_seed: 1,
            compile_timeout: super::host::DEFAULT_COMPILE_TIMEOUT,
            compile_memory_mb: super::host::DEFAULT_COMPILE_MEMORY_MB,
            memory_mb: super::host::DEFAULT_MEMORY_MB,
        }
    }
}

/// `sm_90` -> 900.
pub fn arch_value(a: &str) -> Option<u32> {
    let n: u32 = a.strip_prefix("sm_")?.parse().ok()?;
    Some(n * 10)
}

/// The `__CUDA_ARCH__` values the host tier runs a source under: every arch of
/// spec/kernels.json `compile.archs` when the source mentions `__CUDA_ARCH__` (each path it
/// may take is run), else the first.
pub fn host_archs(source: &str) -> Vec<u32> {
    let all: Vec<u32> = crate::spec::get()
        .kernels
        .compile
        .archs
        .iter()
        .filter_map(|a| arch_value(a))
        .collect();
    if source.contains("__CUDA_ARCH__") {
        all
    } else {
        all.into_iter().take(1).collect()
    }
}

/// Compiles `source` once for several entries (one binary per arch).
pub fn compile_host(
    source: &str,
    entries: &[(String, &KernelAbi)],
    setup: &HostSetup,
    arch: u32,
) -> Result<HostBinary> {
    let sigs: Vec<EntrySig> = entries
        .iter()
        .map(|(e, a)| EntrySig {
            entry: e.clone(),
            params: a.sig(),
        })
        .collect();
    HostBinary::compile(
        source,
        &sigs,
        &HostOptions {
            defines: setup.defines.clone(),
            include_dirs: setup.include_dirs.clone(),
            cuda_arch: arch,
            compile_timeout: setup.compile_timeout,
            compile_memory_mb: setup.compile_memory_mb,
            memory_mb: setup.memory_mb,
        },
    )
}

/// Runs `entry` of a compiled binary over `cases` and judges each. A launch that cannot be
/// built from the ABI (an expression that is not an integer, too many threads) is an `Err`.
pub fn run_compiled(
    bin: &HostBinary,
    entry: &str,
    abi: &KernelAbi,
    cases: &[KernelCase],
    setup: &HostSetup,
) -> Result<Vec<CaseResult>> {
    let mut exps = Vec::with_capacity(cases.len());
    let mut launches = Vec::with_capacity(cases.len());
    for c in cases {
        let e = expected(c, abi.precision)?;
        launches.push((c.name.clone(), abi.launch(c, &e)?));
        exps.push(e);
    }
    let runs = bin.run(entry, &launches, setup.timeout, setup.schedule_seed);
    Ok(cases
        .iter()
        .zip(&exps)
        .zip(runs)
        .map(|((c, e), r)| evaluate(c, e, r))
        .collect())
}

/// Judges one case's runs.
pub fn evaluate(c: &KernelCase, e: &Expected, r: Result<Runs>) -> CaseResult {
    let y = e.precision.y;
    let runs = match r {
        Err(err) => {
            let status = if err.class() == ErrorClass::KernelUnsupported {
                Status::Skipped(err.class())
            } else {
                Status::Error(err.class())
            };
            // The line already names the case and the class: say the rest once.
            let detail = if err.field().is_empty() || err.field() == c.name {
                err.detail().to_string()
            } else {
                format!("{}: {}", err.field(), err.detail())
            };
            return CaseResult {
                case: c.name.clone(),
                status,
                detail,
                comparison: None,
                looks_like: Vec::new(),
            };
        }
        Ok(r) => r,
    };
    let Some(canon) = runs.runs.first() else {
        return CaseResult {
            case: c.name.clone(),
            status: Status::Error(ErrorClass::KernelCrash),
            detail: "the runner returned no run".into(),
            comparison: None,
            looks_like: Vec::new(),
        };
    };
    let v0 = judge(c, e, &canon.out);
    let differing: Vec<_> = runs.runs[1..]
        .iter()
        .filter(|r| r.out != canon.out)
        .collect();
    if let Some(d) = differing.first() {
        let others: Vec<_> = differing.iter().map(|r| judge(c, e, &r.out)).collect();
        let n = canon.out.len() / y.elem_bytes();
        let i = (0..n)
            .find(|&i| y.bits_at(&canon.out, i) != y.bits_at(&d.out, i))
            .unwrap_or(0);
        let (a, b) = (y.decode(&canon.out)[i], y.decode(&d.out)[i]);
        let all_pass = v0.pass && others.iter().all(|v| v.pass);
        let what = format!(
            "the output differs between thread schedules {} and {}: first at element {i} ({}): {a:e} vs {b:e}",
            canon.schedule,
            d.schedule,
            locate(c, i)
        );
        if all_pass && !c.class.exact() {
            return CaseResult {
                case: c.name.clone(),
                status: Status::Pass,
                detail: format!(
                    "max|err|/bound {:.3e}, NMSE {:.3e}; note: {what} -- rounding only (order-dependent summation, e.g. float atomics), every schedule within the bound",
                    v0.max_err_ratio, v0.nmse
                ),
                comparison: Some(v0),
                looks_like: Vec::new(),
            };
        }
        return CaseResult {
            case: c.name.clone(),
            status: Status::Error(ErrorClass::KernelNondeterministic),
            detail: format!(
                "{what}; {} -- a data race: a missing __syncthreads / __syncwarp, threads writing one location, or a block reading another block's output (CUDA leaves blocks unordered){}",
                if c.class.exact() {
                    "an exact class must give the same bits under every schedule".to_string()
                } else {
                    let failing: Vec<&str> = std::iter::once((&v0, canon.schedule.as_str()))
                        .chain(others.iter().zip(differing.iter().map(|r| r.schedule.as_str())))
                        .filter(|(v, _)| !v.pass)
                        .map(|(_, s)| s)
                        .collect();
                    format!("schedules outside the rule: {}", failing.join(", "))
                },
                statics_note(runs.static_bytes_written)
            ),
            comparison: Some(v0),
            looks_like: Vec::new(),
        };
    }
    if v0.pass {
        let detail = if c.class.exact() {
            format!("{} outputs bit-exact", e.values.len())
        } else if let Some((d, allowed)) = v0.ulps {
            // A narrow output: its distance in output ULPs from the correctly rounded reference.
            format!(
                "max {d} ULP from the correctly rounded reference (the bound allows {allowed} there), NMSE {:.3e}",
                v0.nmse
            )
        } else {
            format!(
                "max|err|/bound {:.3e}, NMSE {:.3e}",
                v0.max_err_ratio, v0.nmse
            )
        };
        return CaseResult {
            case: c.name.clone(),
            status: Status::Pass,
            detail,
            comparison: Some(v0),
            looks_like: Vec::new(),
        };
    }
    let looks = diagnose_failure(c, e, &canon.out);
    let mut detail = v0.summary(c, y);
    if !looks.is_empty() {
        let named: Vec<String> = looks
            .iter()
            .map(|l| format!("{} [{l}]", describe(l)))
            .collect();
        detail.push_str(&format!("; looks like: {}", named.join(" + ")));
    }
    CaseResult {
        case: c.name.clone(),
        status: Status::Fail,
        detail,
        comparison: Some(v0),
        looks_like: looks,
    }
}

/// What a nondeterministic verdict adds when the kernel wrote `__device__`/static storage.
fn statics_note(bytes: u64) -> String {
    if bytes == 0 {
        return String::new();
    }
    format!("; the kernel changes {bytes} bytes of __device__/static storage, which every host run starts from its initial value (as a fresh module load): a block that reads what another block, or an earlier launch, left there")
}

/// Runs one kernel over `cases` on the host tier, under every arch the source branches on.
/// Compile, entry, signature and unsupported-feature problems are the `Err`.
pub fn run_host(
    source: &str,
    entry: &str,
    abi: &KernelAbi,
    cases: &[KernelCase],
    setup: &HostSetup,
) -> Result<Vec<CaseResult>> {
    let archs = if setup.archs.is_empty() {
        host_archs(source)
    } else {
        setup.archs.clone()
    };
    let mut merged: Option<Vec<CaseResult>> = None;
    for &arch in &archs {
        let bin = compile_host(source, &[(entry.to_string(), abi)], setup, arch)?;
        let rs = run_compiled(&bin, entry, abi, cases, setup)?;
        merged = Some(merge_arch(merged, rs, arch, archs.len()));
    }
    merged.ok_or_else(|| {
        Error::new(
            ErrorClass::KernelTierUnavailable,
            "host",
            "no architecture to run",
        )
    })
}

/// Keeps, per case, the first failure over the archs run so far (named by its arch).
pub fn merge_arch(
    prev: Option<Vec<CaseResult>>,
    now: Vec<CaseResult>,
    arch: u32,
    n_archs: usize,
) -> Vec<CaseResult> {
    let tag = |mut r: CaseResult| {
        if n_archs > 1 && r.failed() {
            r.detail = format!(
                "under __CUDA_ARCH__ {arch} (sm_{}): {}",
                arch / 10,
                r.detail
            );
        }
        r
    };
    match prev {
        None => now.into_iter().map(tag).collect(),
        Some(p) => p
            .into_iter()
            .zip(now)
            .map(|(a, b)| if a.failed() || !b.failed() { a } else { tag(b) })
            .collect(),
    }
}
