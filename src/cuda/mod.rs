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
pub mod check;
pub mod confine;
pub mod diagnose;
mod diagnose_probe;
mod diagnose_rounding;
pub mod driver;
pub mod expected;
pub mod format;
pub mod generate;
pub mod host;
pub mod judge;
pub mod kernel_abi;
pub mod launch_expr;
pub mod precision;
pub mod sources;
pub mod suite;

#[cfg(feature = "cuda")]
pub mod device;
#[cfg(feature = "cuda")]
pub mod dumps;
#[cfg(feature = "cuda")]
pub mod nvrtc;

use std::time::Duration;

pub use abi::KernelClass;
pub use cases::KernelCase;
pub use driver::{run, Options};
pub use judge::Comparison;
pub use precision::Precision;
// The rest of the public surface, used by tests and the `internals` API only.
#[cfg(any(test, feature = "internals"))]
pub use kernel_abi::KernelAbi;
#[cfg(feature = "internals")]
pub use {abi::Launch, driver::Report, judge::judge, precision::Dtype};

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
    /// The kernel could not be judged correct on this case (timeout, crash, out-of-bounds
    /// access, race, deadlock): a failure with its class.
    Error(ErrorClass),
    /// The tier cannot run this kernel (`kernel.unsupported`): neither a pass nor a failure.
    Skipped(ErrorClass),
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
    /// The output compared with the reference, when an output was produced.
    pub comparison: Option<Comparison>,
    /// The known wrong readings the output matches, when it fails (two when two faults
    /// together explain it; empty when nothing known does).
    pub looks_like: Vec<&'static str>,
}

impl Status {
    /// The suite's pass/fail word for this outcome: an error is a failure with its class, a
    /// tier that cannot run the kernel is a skip.
    pub fn verdict(&self) -> crate::verdict::Verdict {
        use crate::verdict::Verdict;
        match self {
            Status::Pass => Verdict::Pass,
            Status::Fail | Status::Error(_) => Verdict::Fail,
            Status::Skipped(_) => Verdict::Skip,
        }
    }
}

impl CaseResult {
    /// Whether the case failed (a skip is not a failure).
    pub fn failed(&self) -> bool {
        self.status.verdict() == crate::verdict::Verdict::Fail
    }
    /// The verdict's short name: `pass`, `mismatch`, `skipped` or the error class id.
    pub fn verdict_name(&self) -> &'static str {
        match &self.status {
            Status::Pass => "pass",
            Status::Fail => "mismatch",
            Status::Error(c) => c.id(),
            Status::Skipped(_) => "skipped",
        }
    }
}

/// What a shipped kernel is for.
#[derive(Clone, Debug)]
pub enum Role {
    /// A reference kernel: must pass every case.
    Reference,
    /// A correct kernel written unusually: must pass every case.
    Unusual {
        /// What is unusual about it.
        what: String,
    },
    /// A wrong kernel: its first failure must have the expected verdict (and diagnosis).
    Wrong {
        /// `mismatch` or an error class id.
        expect: String,
        /// The reading the diagnosis must name.
        looks_like: Option<String>,
        /// The bug kind.
        kind: String,
        /// The bug, in words.
        mimics: String,
        /// The case property that exposes it.
        #[cfg(feature = "internals")]
        caught_by: String,
    },
}

/// A kernel shipped with the crate (reference, unusual-correct or wrong variant).
#[derive(Clone, Debug)]
pub struct Builtin {
    /// The kernel's entry point.
    pub entry: String,
    /// The kernel's class.
    pub class: KernelClass,
    /// The weight formats it runs over.
    pub formats: Vec<format::KernelFormat>,
    /// Its source file under `src/cuda/kernels/`.
    pub source: String,
    /// Its ABI (the class ABI unless the table gives a sidecar).
    pub abi: kernel_abi::KernelAbi,
    /// What it is for.
    pub role: Role,
}

impl Builtin {
    /// Whether it must fail.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_wrong(&self) -> bool {
        matches!(self.role, Role::Wrong { .. })
    }
}

fn abi_of(
    class: KernelClass,
    v: &Option<serde_json::Value>,
    entry: &str,
) -> Result<kernel_abi::KernelAbi> {
    match v {
        None => kernel_abi::KernelAbi::default_for(class, precision::Precision::F32),
        Some(v) => {
            let sc: kernel_abi::AbiSidecar = serde_json::from_value(v.clone()).map_err(|e| {
                Error::new(
                    ErrorClass::SpecInvalid,
                    format!("spec/kernel_variants.json {entry}.abi"),
                    e.to_string(),
                )
            })?;
            kernel_abi::KernelAbi::from_sidecar(class, &sc, None)
        }
    }
}

/// Every shipped kernel: references, unusual-correct kernels, then wrong variants.
pub fn builtins() -> Result<Vec<Builtin>> {
    let k = &crate::spec::get().kernels;
    let kv = &crate::spec::get().kernel_variants;
    let cls = |c: &str| {
        KernelClass::from_name(c)
            .ok_or_else(|| Error::new(ErrorClass::SpecInvalid, c, "not a kernel class"))
    };
    let mut v = Vec::new();
    for r in &k.reference_kernels {
        let class = cls(&r.class)?;
        v.push(Builtin {
            entry: r.entry.clone(),
            class,
            formats: format::KernelFormat::parse_all(
                &r.formats,
                ErrorClass::SpecInvalid,
                &format!("spec/kernels.json {}.formats", r.entry),
            )?,
            source: r.source.clone(),
            abi: abi_of(class, &None, &r.entry)?,
            role: Role::Reference,
        });
    }
    for u in &kv.unusual_correct {
        let class = cls(&u.class)?;
        v.push(Builtin {
            entry: u.entry.clone(),
            class,
            formats: format::KernelFormat::parse_all(
                &u.formats,
                ErrorClass::SpecInvalid,
                &format!("spec/kernel_variants.json {}.formats", u.entry),
            )?,
            source: u.source.clone(),
            abi: abi_of(class, &u.abi, &u.entry)?,
            role: Role::Unusual {
                what: u.what.clone(),
            },
        });
    }
    for w in &kv.wrong_variants {
        let class = cls(&w.class)?;
        v.push(Builtin {
            entry: w.entry.clone(),
            class,
            formats: format::KernelFormat::parse_all(
                &w.formats,
                ErrorClass::SpecInvalid,
                &format!("spec/kernel_variants.json {}.formats", w.entry),
            )?,
            source: w.source.clone(),
            abi: abi_of(class, &w.abi, &w.entry)?,
            role: Role::Wrong {
                expect: w.expect.clone(),
                looks_like: w.looks_like.clone(),
                kind: w.kind.clone(),
                mimics: w.mimics.clone(),
                #[cfg(feature = "internals")]
                caught_by: w.caught_by.clone(),
            },
        });
    }
    Ok(v)
}

/// The corpus cases plus the generated matrix of `class` over `formats`.
pub fn cases_for(class: KernelClass, formats: &[format::KernelFormat]) -> Result<Vec<KernelCase>> {
    let mut v: Vec<KernelCase> = cases::try_all()?
        .into_iter()
        .filter(|c| c.class == class && formats.contains(&c.format))
        .collect();
    for &f in formats {
        v.extend(generate::matrix(class, f)?);
    }
    Ok(v)
}

/// Random cases per format that every run without `--random` adds to the fixed ones (seeded by
/// `--seed`, named `r<seed>_<i>_...` like `--random` cases, so `--seed S --case NAME` replays one).
pub const DEFAULT_RANDOM: usize = 4;

/// The default cases of `class` over `formats`: the fixed ones ([`cases_for`]) plus a batch of
/// [`DEFAULT_RANDOM`] random cases per format from `seed`.
pub fn cases_default(
    class: KernelClass,
    formats: &[format::KernelFormat],
    seed: u64,
) -> Result<Vec<KernelCase>> {
    let mut v = cases_for(class, formats)?;
    v.extend(random_cases(class, formats, DEFAULT_RANDOM, seed)?);
    Ok(v)
}

/// The cases of a run, built as they are run: fixed cases (a bounded set) up front, random
/// ones [`CasePlan::CHUNK`] at a time after `--case` picked them by name, so memory does not
/// grow with `--random N` and a filter that matches nothing builds nothing.
#[derive(Clone, Debug)]
pub enum CasePlan {
    /// Built cases.
    Fixed(Vec<KernelCase>),
    /// Random cases `(format, i)` of `class` from `seed`, kept only when their block size is
    /// `block` (when given), after the fixed real-model-scale cases
    /// ([`generate::model_scale`]) that random shapes never reach.
    Random {
        /// The fixed model-scale cases (run first, filtered like the random ones).
        model: Vec<KernelCase>,
        /// The class.
        class: KernelClass,
        /// Formats, indexed by `picks`.
        formats: Vec<format::KernelFormat>,
        /// `--seed`.
        seed: u64,
        /// (format index, case index) in run order.
        picks: Vec<(u32, u32)>,
        /// `--block`.
        block: Option<u64>,
    },
}

impl CasePlan {
    /// Random cases built and run at a time.
    pub const CHUNK: usize = 128;

    /// `n` random cases per format plus the model-scale fixed cases, whose names contain one of
    /// `filters` (all when empty).
    pub fn random(
        class: KernelClass,
        formats: &[format::KernelFormat],
        n: usize,
        seed: u64,
        filters: &[String],
        block: Option<u64>,
    ) -> Result<CasePlan> {
        let named = |name: &str| filters.is_empty() || filters.iter().any(|t| name.contains(t));
        let mut model = Vec::new();
        for &f in formats {
            model.extend(
                generate::model_scale(class, f)?
                    .into_iter()
                    .filter(|c| named(&c.name) && block.is_none_or(|b| c.dims.block == b)),
            );
        }
        let mut picks = Vec::new();
        for (fi, &f) in formats.iter().enumerate() {
            for i in 0..n {
                if named(&generate::random_name(class, f, i, seed)) {
                    picks.push((fi as u32, i as u32));
                }
            }
        }
        Ok(CasePlan::Random {
            model,
            class,
            formats: formats.to_vec(),
            seed,
            picks,
            block,
        })
    }

    /// Whether no case is planned (a `--block` filter of random cases is only known later).
    pub fn is_empty(&self) -> bool {
        match self {
            CasePlan::Fixed(v) => v.is_empty(),
            CasePlan::Random { model, picks, .. } => model.is_empty() && picks.is_empty(),
        }
    }

    /// Runs `f` over the cases, chunk by chunk; the results in order. A random plan whose
    /// `--block` filter kept no case is `corpus.filter`.
    pub fn run(
        &self,
        f: &mut dyn FnMut(&[KernelCase]) -> Result<Vec<CaseResult>>,
    ) -> Result<Vec<CaseResult>> {
        let (model, class, formats, seed, picks, block) = match self {
            CasePlan::Fixed(v) => return f(v),
            CasePlan::Random {
                model,
                class,
                formats,
                seed,
                picks,
                block,
            } => (model, *class, formats, *seed, picks, *block),
        };
        let mut out = Vec::new();
        if !model.is_empty() {
            out.extend(f(model)?);
        }
        for chunk in picks.chunks(Self::CHUNK) {
            let mut cs = Vec::with_capacity(chunk.len());
            for &(fi, i) in chunk {
                // cannot miss: `picks` index `formats`, both built together in `random`.
                let Some(&fmt) = formats.get(fi as usize) else {
                    continue;
                };
                let c = generate::random_one(class, fmt, i as usize, seed)?;
                if block.is_none_or(|b| c.dims.block == b) {
                    cs.push(c);
                }
            }
            if !cs.is_empty() {
                out.extend(f(&cs)?);
            }
        }
        if out.is_empty() {
            return Err(crate::error::Error::new(
                ErrorClass::CorpusFilter,
                "--block",
                format!("no random case has block size {}", block.unwrap_or(0)),
            ));
        }
        Ok(out)
    }
}

/// `n` random cases of `class` per format (`--random N --seed S`).
pub fn random_cases(
    class: KernelClass,
    formats: &[format::KernelFormat],
    n: usize,
    seed: u64,
) -> Result<Vec<KernelCase>> {
    let mut v = Vec::new();
    for &f in formats {
        v.extend(generate::random(class, f, n, seed)?);
    }
    Ok(v)
}

/// The formats a kernel runs over when none is named: the class's only format, or an error.
pub fn default_formats(
    class: KernelClass,
    format: Option<&str>,
) -> Result<Vec<format::KernelFormat>> {
    let fs = &class.spec().formats;
    let usage = |detail: String| Error::new(ErrorClass::CliUsage, "--format", detail);
    match format {
        Some(f) if fs.iter().any(|x| x == f) => Ok(vec![format::KernelFormat::parse(
            f,
            ErrorClass::CliUsage,
            "--format",
        )?]),
        Some(f) => Err(usage(format!(
            "class {} has no format {f:?}; one of {}",
            class.name(),
            fs.join(", ")
        ))),
        None if fs.len() == 1 => format::class_formats(class),
        None => Err(usage(format!(
            "class {} needs --format (one of {})",
            class.name(),
            fs.join(", ")
        ))),
    }
}

/// The host tier's per-case timeout (spec/kernels.json `host.timeout_s`).
pub fn host_timeout() -> Duration {
    Duration::from_secs(crate::spec::get().kernels.host.timeout_s)
}

/// Compiles `source` on the host and runs it over `cases` under the class ABI in f32 (the
/// fixed-ABI path of the demo and the tests). A compile, entry, signature or unsupported-feature
/// problem is the `Err`; per-case problems are results.
pub fn run_host(
    source: &str,
    entry: &str,
    class: KernelClass,
    cases: &[KernelCase],
    timeout: Duration,
) -> Result<Vec<CaseResult>> {
    let abi = kernel_abi::KernelAbi::default_for(class, precision::Precision::F32)?;
    let setup = check::HostSetup {
        timeout,
        ..Default::default()
    };
    check::run_host(source, entry, &abi, cases, &setup)
}

/// Runs a kernel on the GPU over `cases`; `kernel.tier_unavailable` when there is none.
pub fn run_device(
    source: &str,
    entry: &str,
    abi: &kernel_abi::KernelAbi,
    cases: &[KernelCase],
) -> Result<Vec<CaseResult>> {
    #[cfg(feature = "cuda")]
    {
        device::run(source, entry, abi, cases)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (source, entry, abi, cases);
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
    sig: &[String],
    archs: &[String],
    options: &[String],
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        for a in archs {
            nvrtc::compile_checked(source, entry, sig, a, options)?;
        }
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (source, entry, sig, archs, options);
        Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            "compile",
            "this binary was built without the `cuda` feature (cargo build --features cuda)",
        ))
    }
}
