//! CUDA kernel conformance (spec/kernels.json): reference kernels and wrong variants
//! (`kernels/*.cu`), the kernel cases and their f64 reference, and three tiers that run a
//! kernel over them:
//! - host: the host C++ compiler + a CUDA-on-CPU shim, each case in a child process (always
//!   available where a C++ compiler is; this is what `cargo test` runs);
//! - compile: NVRTC for the spec's archs (feature `cuda`, NVRTC library from scripts/setup-cuda.sh);
//! - device: a real GPU through cudarc (feature `cuda`, driver and device present).
//!
//! A tier that cannot run reports SKIPPED with the reason, never a pass.

pub mod abi;
pub mod cases;
pub mod host;
pub mod judge;
pub mod sources;

#[cfg(feature = "cuda")]
pub mod device;
#[cfg(feature = "cuda")]
pub mod dumps;
#[cfg(feature = "cuda")]
pub mod nvrtc;

use std::time::Duration;

pub use abi::{KernelClass, Launch};
pub use cases::KernelCase;
pub use judge::{judge, Verdict};

use crate::error::{Error, ErrorClass, Result};

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The host C++ compiler and a CUDA-on-CPU shim.
    Host,
    /// NVRTC compilation for the spec's architectures.
    Compile,
    /// A real GPU.
    Device,
}

impl Tier {
    /// The tier's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Host => "host",
            Tier::Compile => "compile",
            Tier::Device => "device",
        }
    }
    /// Parses `--tier`.
    pub fn parse(s: &str) -> Result<Tier> {
        Ok(match s {
            "host" => Tier::Host,
            "compile" => Tier::Compile,
            "device" => Tier::Device,
            _ => {
                return Err(Error::new(
                    ErrorClass::CliUsage,
                    "--tier",
                    format!("{s:?}: one of host, compile, device"),
                ))
            }
        })
    }
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The output meets the rule.
    Pass,
    /// The output breaks the rule.
    Fail,
    /// The kernel could not be judged on this case (timeout, crash, out-of-bounds write).
    Error(ErrorClass),
}

/// One kernel's outcome on one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case name.
    pub case: String,
    /// The outcome.
    pub status: Status,
    /// What happened, in words.
    pub detail: String,
    /// The judgement, when an output was produced.
    pub verdict: Option<Verdict>,
}

impl CaseResult {
    /// Whether the case did not pass.
    pub fn failed(&self) -> bool {
        self.status != Status::Pass
    }
}

/// A kernel shipped with the crate (reference or wrong variant), from spec/kernels.json.
#[derive(Clone, Debug)]
pub struct Builtin {
    /// The kernel's entry point.
    pub entry: String,
    /// The kernel's class.
    pub class: KernelClass,
    /// The weight formats it handles.
    pub formats: Vec<String>,
    /// The CUDA source text.
    pub source: String,
    /// Wrong variants: the cases it must fail (and it must pass every other case it runs).
    pub must_fail: Option<Vec<String>>,
}

/// Every shipped kernel: references first, then wrong variants.
pub fn builtins() -> Vec<Builtin> {
    let k = &crate::spec::get().kernels;
    let cls = |c: &str| KernelClass::from_name(c).expect("class named in spec/kernels.json");
    k.reference_kernels
        .iter()
        .map(|r| Builtin {
            entry: r.entry.clone(),
            class: cls(&r.class),
            formats: r.formats.clone(),
            source: r.source.clone(),
            must_fail: None,
        })
        .chain(k.wrong_variants.iter().map(|w| Builtin {
            entry: w.entry.clone(),
            class: cls(&w.class),
            formats: vec![w.format.clone()],
            source: w.source.clone(),
            must_fail: Some(w.must_fail.clone()),
        }))
        .collect()
}

/// The cases of `class` whose format is one of `formats`.
pub fn cases_for(class: KernelClass, formats: &[String]) -> Vec<KernelCase> {
    cases::all()
        .into_iter()
        .filter(|c| c.class == class && formats.contains(&c.format))
        .collect()
}

/// The formats a kernel runs over when none is named: the class's only format, or an error.
pub fn default_formats(class: KernelClass, format: Option<&str>) -> Result<Vec<String>> {
    let fs = &class.spec().formats;
    match format {
        Some(f) if fs.iter().any(|x| x == f) => Ok(vec![f.to_string()]),
        Some(f) => Err(Error::new(
            ErrorClass::CliUsage,
            "--format",
            format!(
                "class {} has no format {f:?}; one of {}",
                class.name(),
                fs.join(", ")
            ),
        )),
        None if fs.len() == 1 => Ok(fs.clone()),
        None => Err(Error::new(
            ErrorClass::CliUsage,
            "--format",
            format!(
                "class {} needs --format (one of {})",
                class.name(),
                fs.join(", ")
            ),
        )),
    }
}

/// Judges one runner result (guards included) against a case.
pub fn judge_output(case: &KernelCase, raw: Result<Vec<f32>>, out_elems: usize) -> CaseResult {
    let res = raw
        .and_then(|buf| judge::strip_guards(&case.name, &buf, out_elems).map(|o| judge(case, o)));
    match res {
        Ok(v) => CaseResult {
            case: case.name.clone(),
            status: if v.pass { Status::Pass } else { Status::Fail },
            detail: if v.pass && case.class.exact() {
                format!("{} outputs bit-exact", case.reference.len())
            } else if v.pass {
                format!(
                    "max|err|/bound {:.3e}, NMSE {:.3e}",
                    v.max_err_ratio, v.nmse
                )
            } else {
                v.summary(case.class.exact())
            },
            verdict: Some(v),
        },
        Err(e) => CaseResult {
            case: case.name.clone(),
            status: Status::Error(e.class),
            detail: e.to_string(),
            verdict: None,
        },
    }
}

/// The host tier's per-case timeout (spec/kernels.json `host.timeout_s`).
pub fn host_timeout() -> Duration {
    Duration::from_secs(crate::spec::get().kernels.host.timeout_s)
}

/// Compiles `source` on the host and runs it over `cases`. A compile, entry or signature
/// problem is the `Err`; per-case problems are results.
pub fn run_host(
    source: &str,
    entry: &str,
    class: KernelClass,
    cases: &[KernelCase],
    timeout: Duration,
) -> Result<Vec<CaseResult>> {
    let k = host::HostKernel::compile(source, entry, class)?;
    let mut out = Vec::new();
    for c in cases {
        let l = c.launch()?;
        out.push(judge_output(c, k.run(&c.name, &l, timeout), l.out_elems));
    }
    Ok(out)
}

/// Runs a kernel on the GPU over `cases`; `kernel.tier_unavailable` when there is none.
pub fn run_device(
    source: &str,
    entry: &str,
    class: KernelClass,
    cases: &[KernelCase],
) -> Result<Vec<CaseResult>> {
    #[cfg(feature = "cuda")]
    {
        device::run(source, entry, class, cases)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (source, entry, class, cases);
        Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            "device",
            "this binary was built without the `cuda` feature (cargo build --features cuda)",
        ))
    }
}

/// Compiles with NVRTC for every arch of the spec and checks the entry's PTX signature.
pub fn compile_nvrtc(
    source: &str,
    entry: &str,
    class: KernelClass,
    archs: &[String],
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        for a in archs {
            nvrtc::compile_checked(source, entry, class, a)?;
        }
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (source, entry, class, archs);
        Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            "compile",
            "this binary was built without the `cuda` feature (cargo build --features cuda)",
        ))
    }
}
