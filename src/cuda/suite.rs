//! The shipped kernels as a suite: every reference and correct-but-unusual kernel must pass
//! every case, every wrong variant must be caught with the verdict (and diagnosis)
//! spec/kernel_variants.json expects. One compilation per source file and arch; each kernel a job.
//! `check-kernel --builtin` and the tests run it; `markdown_table` is conformance/KERNELS.md's table.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::abi::KernelClass;
use super::cases::KernelCase;
use super::check::{self, HostSetup};
use super::host::HostBinary;
use super::kernel_abi::KernelAbi;
use super::{sources, Builtin, CaseResult, Role, Status};
use crate::error::{Error, ErrorClass};

/// The judgement of one shipped kernel.
#[derive(Clone, Debug)]
pub struct BuiltinVerdict {
    /// The kernel.
    pub kernel: Builtin,
    /// Whether it behaved as its role says.
    pub ok: bool,
    /// What it did, in words.
    pub what: String,
    /// The verdict of its first failing case (`pass` when none failed).
    pub verdict: String,
    /// The first failing case.
    pub first_case: Option<String>,
    /// The diagnoses of its failing cases (deduplicated, in order).
    pub looks_like: Vec<String>,
    /// Cases run.
    pub cases: usize,
    /// The largest NMSE over its passing cases (bounded classes; 0 otherwise): the measured
    /// error of honest kernels that the f32 NMSE limit is set against.
    pub max_nmse: f64,
}

impl BuiltinVerdict {
    /// A kernel that could not be run at all (compile, entry, signature, launch errors): not
    /// as its role says, whatever the role.
    pub fn error(k: &Builtin, e: &Error) -> BuiltinVerdict {
        BuiltinVerdict {
            kernel: k.clone(),
            ok: false,
            what: format!("ERROR {e}"),
            verdict: e.class().id().into(),
            first_case: None,
            looks_like: Vec::new(),
            cases: 0,
            max_nmse: 0.0,
        }
    }
}

/// Judges one shipped kernel's results against its role.
pub fn judge_builtin(k: &Builtin, rs: &[CaseResult], random: bool) -> BuiltinVerdict {
    let failed: Vec<&CaseResult> = rs.iter().filter(|r| r.failed()).collect();
    let skipped = rs
        .iter()
        .filter(|r| matches!(r.status, Status::Skipped(_)))
        .count();
    let mut looks: Vec<String> = Vec::new();
    for r in &failed {
        for l in &r.looks_like {
            if !looks.iter().any(|x| x == l) {
                looks.push(l.to_string());
            }
        }
    }
    let first = failed.first();
    let max_nmse = rs
        .iter()
        .filter(|r| r.status == Status::Pass)
        .filter_map(|r| r.comparison.as_ref().map(|v| v.nmse))
        .fold(0f64, f64::max);
    let verdict = first
        .map(|r| r.verdict_name().to_string())
        .unwrap_or_else(|| "pass".into());
    let (ok, what) = match &k.role {
        Role::Reference | Role::Unusual { .. } => (
            failed.is_empty() && skipped == 0 && !rs.is_empty(),
            match first {
                None if skipped > 0 => {
                    format!("{skipped} of {} cases SKIPPED (not judged)", rs.len())
                }
                None => format!("passes all {} cases", rs.len()),
                Some(r) => format!(
                    "{} of {} cases fail; first {}: {}",
                    failed.len(),
                    rs.len(),
                    r.case,
                    r.detail
                ),
            },
        ),
        Role::Wrong {
            expect, looks_like, ..
        } => {
            let caught = !failed.is_empty();
            let class_ok = random || verdict == *expect;
            let look_ok = random
                || looks_like
                    .as_ref()
                    .is_none_or(|l| looks.iter().any(|x| x == l));
            let mut w = match first {
                None => format!("NOT CAUGHT: passes all {} cases", rs.len()),
                Some(r) => format!(
                    "caught as {verdict} by {} of {} cases (first {}){}",
                    failed.len(),
                    rs.len(),
                    r.case,
                    if looks.is_empty() {
                        String::new()
                    } else {
                        format!("; looks like {}", looks.join(", "))
                    }
                ),
            };
            if caught && !class_ok {
                w.push_str(&format!(" -- expected {expect}"));
            }
            if caught && !look_ok {
                w.push_str(&format!(
                    " -- expected the diagnosis {}",
                    looks_like.clone().unwrap_or_default()
                ));
            }
            (caught && class_ok && look_ok, w)
        }
    };
    BuiltinVerdict {
        kernel: k.clone(),
        ok,
        what,
        verdict,
        first_case: first.map(|r| r.case.clone()),
        looks_like: looks,
        cases: rs.len(),
        max_nmse,
    }
}

/// Runs every shipped kernel (or `only`) on the host tier: one compilation per source file and
/// arch, shared by its kernels; each kernel a job of its own on `pool::queue` (up to four
/// workers), the longest first as the last fixed-case run measured them (a source of many
/// kernels no longer runs them one after another at the end). Returns the verdicts in table
/// order, or the first compile-level error.
pub fn run_builtins_host(
    only: &[String],
    random: Option<usize>,
    seed: u64,
    timeout: Duration,
) -> crate::Result<Vec<BuiltinVerdict>> {
    let kernels: Vec<Builtin> = super::builtins()?
        .into_iter()
        .filter(|k| only.is_empty() || only.contains(&k.entry))
        .collect();
    let mut by_source: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, k) in kernels.iter().enumerate() {
        by_source.entry(k.source.clone()).or_default().push(i);
    }
    let builds: BTreeMap<&str, SourceBuild> = by_source
        .iter()
        .map(|(src, idx)| (src.as_str(), SourceBuild::new(idx)))
        .collect();
    // Durations only order the work (results keep table order): remembered for fixed cases.
    let mut seconds = if random.is_none() {
        super::host::remembered_durations()
    } else {
        BTreeMap::new()
    };
    // Unknown durations (a first run) tie: then each source's first kernel comes before any
    // source's second, so two workers compile two sources instead of one waiting for the other.
    let rank: BTreeMap<usize, usize> = by_source
        .values()
        .flat_map(|idx| idx.iter().enumerate().map(|(r, &i)| (i, r)))
        .collect();
    let mut jobs: Vec<usize> = by_source.values().flatten().copied().collect();
    jobs.sort_by(|&a, &b| {
        let d = |i: usize| {
            seconds
                .get(&kernels[i].entry)
                .copied()
                .unwrap_or(f64::INFINITY)
        };
        d(b).total_cmp(&d(a)).then(rank[&a].cmp(&rank[&b]))
    });
    // The compilers and kernels are child processes, not this process's CPU work: a budget of
    // their own, on the crate's one work queue.
    let workers = crate::pool::available_threads().clamp(1, 4);
    let setup = HostSetup {
        timeout,
        schedule_seed: seed,
        ..Default::default()
    };
    let shared = SharedCases::new(&kernels);
    let mut got: Vec<(usize, crate::Result<Vec<CaseResult>>, f64)> = crate::pool::queue(
        &crate::pool::Budget::new(workers),
        workers,
        jobs.len(),
        std::thread::Builder::new,
        || (),
        |_, j| {
            let i = jobs[j];
            let k = &kernels[i];
            let t0 = std::time::Instant::now();
            let r = match builds.get(k.source.as_str()) {
                Some(b) => run_kernel(
                    k,
                    b.get(&k.source, &kernels, &setup),
                    random,
                    seed,
                    &setup,
                    &shared,
                ),
                None => Err(Error::new(
                    ErrorClass::InternalInvariant,
                    &k.entry,
                    "kernel without a source build",
                )),
            };
            (i, r, t0.elapsed().as_secs_f64())
        },
        |_| {},
    );
    got.sort_by_key(|(i, _, _)| *i);
    if random.is_none() {
        for (i, _, secs) in &got {
            seconds.insert(kernels[*i].entry.clone(), *secs);
        }
        super::host::remember_durations(&seconds);
    }
    let mut out = Vec::new();
    for (i, r, _) in got {
        let k = &kernels[i];
        match r {
            Ok(rs) => out.push(judge_builtin(k, &rs, random.is_some())),
            Err(e) if e.class() == ErrorClass::KernelTierUnavailable => return Err(e),
            Err(e) => out.push(BuiltinVerdict::error(k, &e)),
        }
    }
    Ok(out)
}

/// One source file's runners, one per arch it branches on, built by the first of its kernels
/// that needs them (the others wait) with every entry of the source, as one compile.
struct SourceBuild {
    entries: Vec<usize>,
    built: std::sync::OnceLock<crate::Result<Vec<(u32, HostBinary)>>>,
}

impl SourceBuild {
    fn new(entries: &[usize]) -> SourceBuild {
        SourceBuild {
            entries: entries.to_vec(),
            built: std::sync::OnceLock::new(),
        }
    }

    fn get(
        &self,
        src: &str,
        kernels: &[Builtin],
        setup: &HostSetup,
    ) -> &crate::Result<Vec<(u32, HostBinary)>> {
        self.built.get_or_init(|| {
            let text = sources::builtin_resolved(src)?;
            let entries: Vec<(String, &KernelAbi)> = self
                .entries
                .iter()
                .map(|&i| (kernels[i].entry.clone(), &kernels[i].abi))
                .collect();
            check::host_archs(&text)
                .into_iter()
                .map(|arch| Ok((arch, check::compile_host(&text, &entries, setup, arch)?)))
                .collect()
        })
    }
}

/// One kernel over its cases under every arch its source was built for.
fn run_kernel(
    k: &Builtin,
    built: &crate::Result<Vec<(u32, HostBinary)>>,
    random: Option<usize>,
    seed: u64,
    setup: &HostSetup,
    shared: &SharedCases,
) -> crate::Result<Vec<CaseResult>> {
    let r = (|| {
        let bins = built.as_ref().map_err(Clone::clone)?;
        let mut merged: Option<Vec<CaseResult>> = None;
        for (arch, bin) in bins {
            // Random cases are built a chunk at a time (memory does not grow with --random N).
            let rs = match random {
                Some(n) => super::CasePlan::random(k.class, &k.formats, n, seed, &[], None)
                    .and_then(|p| {
                        p.run(&mut |cs| check::run_compiled(bin, &k.entry, &k.abi, cs, setup))
                    })?,
                None => shared
                    .get(k.class, &k.formats, seed)
                    .and_then(|cs| check::run_compiled(bin, &k.entry, &k.abi, &cs, setup))?,
            };
            merged = Some(check::merge_arch(merged, rs, *arch, bins.len()));
        }
        merged.ok_or_else(|| {
            Error::new(
                ErrorClass::KernelTierUnavailable,
                "host",
                "no architecture to run",
            )
        })
    })();
    shared.done(k);
    r
}

type CaseKey = (KernelClass, Vec<super::format::KernelFormat>);
/// Kernels not done yet with a key's cases, and the cases once built.
type CaseSlot = (usize, Option<Arc<Vec<KernelCase>>>);

/// The fixed cases of each (class, formats), built once per builtin run and shared by every
/// kernel of the class and every arch (they were built, references included, once per kernel
/// and arch: 5% of a warm run), dropped when the last kernel that needs them is done (a larger
/// harness makes every runner's fork copy more page tables).
struct SharedCases {
    slots: Mutex<BTreeMap<CaseKey, CaseSlot>>,
}

impl SharedCases {
    fn new(kernels: &[Builtin]) -> SharedCases {
        let mut slots: BTreeMap<CaseKey, CaseSlot> = BTreeMap::new();
        for k in kernels {
            slots.entry((k.class, k.formats.clone())).or_default().0 += 1;
        }
        SharedCases {
            slots: Mutex::new(slots),
        }
    }

    fn get(
        &self,
        class: KernelClass,
        formats: &[super::format::KernelFormat],
        seed: u64,
    ) -> crate::Result<Arc<Vec<KernelCase>>> {
        let mut g = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = g.entry((class, formats.to_vec())).or_default();
        if let Some(v) = &slot.1 {
            return Ok(v.clone());
        }
        let v = Arc::new(super::cases_default(class, formats, seed)?);
        slot.1 = Some(v.clone());
        Ok(v)
    }

    /// A kernel is done with its cases (every arch run).
    fn done(&self, k: &Builtin) {
        let mut g = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = g.get_mut(&(k.class, k.formats.clone())) {
            slot.0 = slot.0.saturating_sub(1);
            if slot.0 == 0 {
                slot.1 = None;
            }
        }
    }
}

/// The verdict table of the shipped kernels (conformance/KERNELS.md).
pub fn markdown_table(vs: &[BuiltinVerdict]) -> String {
    let mut o = String::from("| kernel | role | class / formats | bug or what is unusual | expected | verdict | first case that catches it | looks like |\n|---|---|---|---|---|---|---|---|\n");
    for v in vs {
        let k = &v.kernel;
        let (role, what, expect) = match &k.role {
            Role::Reference => ("reference", String::new(), "pass".to_string()),
            Role::Unusual { what } => ("correct, unusual", what.clone(), "pass".to_string()),
            Role::Wrong {
                expect,
                mimics,
                kind,
                ..
            } => ("wrong", format!("{kind}: {mimics}"), expect.clone()),
        };
        o.push_str(&format!(
            "| `{}` | {role} | `{}` / {} | {} | `{expect}` | {}`{}` | {} | {} |\n",
            k.entry,
            k.class.name(),
            k.formats
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            what.replace('|', "\\|"),
            if v.ok { "" } else { "**WRONG** " },
            v.verdict,
            v.first_case
                .as_deref()
                .map(|c| format!("`{c}`"))
                .unwrap_or_else(|| format!("all {} pass", v.cases)),
            v.looks_like
                .iter()
                .map(|l| format!("`{l}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    o
}
