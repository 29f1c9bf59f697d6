//! The host tier: a kernel source compiled by the host C++ compiler against the CUDA-on-CPU
//! shim (`kernels/host_types.h`, `kernels/host_shim.h`) and a runner `main`
//! (`kernels/host_main.h`), then run in a child process.
//!
//! Every CUDA thread is a cooperative fiber; a block's fibers meet at barriers and warp
//! collectives, and each launch runs under several schedules (forward, reverse, seeded random)
//! with fresh output buffers, so a racy kernel gives different outputs ([`Runs`]). Inputs sit
//! right before PROT_NONE guard pages and are read-only; outputs have guard bands; a fault is
//! classified by address; reads of the poison slack show up in a second run with other poison;
//! misaligned vector loads are caught by UBSan where the compiler has it. One child runs many
//! launches; a crash in one is reported against it and the next child starts after it.

mod rewrite;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::abi::{KernelClass, Launch, LaunchArg};
use super::sources::{HOST_SHIM, HOST_TYPES};
use crate::error::{Error, ErrorClass, Result};

/// The runner's `main`, placed after the kernel source.
const HOST_MAIN: &str = include_str!("kernels/host_main.h");

/// The compiler the host tier uses: `$NINFER_CXX`, else `c++`.
pub fn compiler() -> String {
    std::env::var("NINFER_CXX").unwrap_or_else(|_| "c++".into())
}

/// Whether the host compiler runs at all (`kernel.tier_unavailable` explains why not).
pub fn available() -> Result<String> {
    let cxx = compiler();
    match Command::new(&cxx)
        .arg("--version")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()),
        Ok(o) => Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            cxx,
            format!("`--version` exited with {}", o.status),
        )),
        Err(e) => Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            cxx,
            format!("host C++ compiler not runnable ({e}); install g++ or set NINFER_CXX"),
        )),
    }
}

/// A temporary folder removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh folder under the system temp dir, named after `tag` and this process.
    pub fn new(tag: &str) -> Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "ninfer-{tag}-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).map_err(|e| Error::io(ErrorClass::IoWrite, &p, e))?;
        Ok(TempDir(p))
    }
    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An entry point to compile: its name and its C parameter types as written
/// (`"const unsigned char*"`, `"int"`, `"long long"`, `"float"`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySig {
    /// The entry's name (`extern "C"` or otherwise callable by that name).
    pub entry: String,
    /// Parameter types in order.
    pub params: Vec<String>,
}

/// Compiler options of the host tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostOptions {
    /// `NAME` or `NAME=VALUE`, passed as `-D`.
    pub defines: Vec<String>,
    /// Folders for `#include <...>`, passed as `-I`.
    pub include_dirs: Vec<PathBuf>,
    /// The value of `__CUDA_ARCH__` (e.g. 800).
    pub cuda_arch: u32,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            defines: Vec::new(),
            include_dirs: Vec::new(),
            cuda_arch: 800,
        }
    }
}

/// A compiled host-tier runner for one or more entries of one source.
#[derive(Debug)]
pub struct HostBinary {
    exe: PathBuf,
    entries: Vec<EntrySig>,
    ubsan: bool,
}

/// Every schedule's output for one launch; `runs[0]` is the canonical (forward) run.
#[derive(Clone, Debug, PartialEq)]
pub struct Runs {
    /// Forward, reverse, then `random:<seed>`.
    pub runs: Vec<ScheduleRun>,
}

/// One schedule's output.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRun {
    /// `forward`, `reverse` or `random:<seed>`.
    pub schedule: String,
    /// The Out buffer's bytes (guard bands checked and removed).
    pub out: Vec<u8>,
}

/// Marker the generated static_assert prints, so a signature mismatch is told apart.
const SIG_MARK: &str = "NINFER_SIGNATURE_MISMATCH";
/// The child's exit code when UBSan stopped it (a misaligned access).
const UBSAN_EXIT: i32 = 86;
/// Bytes of guard band around Out/Scratch (as 256 f32 of the guard pattern).
const BAND: usize = 1024;
/// The guard pattern of Out.
const SENTINEL: u32 = 0x7fa5_a5a5;

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("NINFER_KERNEL_CACHE") {
        return PathBuf::from(d);
    }
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("ninfer-kernel-cache-{uid}"))
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Empty stand-ins for the CUDA headers kernels include with angle brackets; the shim and
/// host_types.h provide what they declare.
const FAKE_HEADERS: &[&str] = &[
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "cuda.h",
    "device_launch_parameters.h",
    "cuda_fp8.h",
    "device_functions.h",
    "sm_60_atomic_functions.h",
    "mma.h",
];

fn fake_include_dir(cache: &Path) -> Result<PathBuf> {
    let d = cache.join("include");
    std::fs::create_dir_all(&d).map_err(|e| Error::io(ErrorClass::IoWrite, &d, e))?;
    for h in FAKE_HEADERS {
        let p = d.join(h);
        if !p.exists() {
            let tmp = d.join(format!("{h}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, "// provided by the ninfer host shim\n")
                .and_then(|_| std::fs::rename(&tmp, &p))
                .map_err(|e| Error::io(ErrorClass::IoWrite, &p, e))?;
        }
    }
    Ok(d)
}

/// Whether `-fsanitize=alignment` compiles and links here (probed once per process).
fn ubsan_available(cxx: &str) -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let Ok(dir) = TempDir::new("ubsan-probe") else {
            return false;
        };
        let src = dir.path().join("p.cpp");
        if std::fs::write(
            &src,
            "int main(int c, char**) { int a[2] = {c, c}; return a[c - 1] - c; }\n",
        )
        .is_err()
        {
            return false;
        }
        let exe = dir.path().join("p");
        let ok = Command::new(cxx)
            .args([
                "-fsanitize=alignment",
                "-fno-sanitize-recover=alignment",
                "-o",
            ])
            .arg(&exe)
            .arg(&src)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok && Command::new(&exe)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    })
}

/// How a kernel parameter's slot is read in the generated call.
fn slot_expr(ty: &str, i: usize) -> String {
    let t = ty.trim();
    if t.contains('*') {
        format!("({t})nt_argv[{i}].p")
    } else if t == "float" || t == "const float" {
        format!("nt_argv[{i}].f")
    } else if t == "double" || t == "const double" {
        format!("nt_argv[{i}].d")
    } else {
        format!("({t})nt_argv[{i}].i")
    }
}

/// Where the driver includes the prelude (host_types.h + host_shim.h): replaced by the
/// prelude's text, or by an `#include` of it when a precompiled header exists.
const PRELUDE_MARK: &str = "// @@NINFER_PRELUDE@@";

fn prelude() -> String {
    format!("{HOST_TYPES}\n#line 1 \"host_shim.h\"\n{HOST_SHIM}\n")
}

/// A precompiled prelude for these flags (parsing it is about half of a compile), built once
/// into the cache; `None` when the compiler cannot build one (the prelude is then inlined).
fn precompiled_prelude(
    cxx: &str,
    cache: &Path,
    flags: &[String],
    version: &str,
) -> Option<PathBuf> {
    let text = prelude();
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    h.update(flags.join("\u{1}").as_bytes());
    h.update(version.as_bytes());
    h.update(cxx.as_bytes());
    let dir = cache.join(format!("pch-{}", hex(&h.finalize()[..12])));
    let gch = dir.join("nt_prelude.h.gch");
    if gch.exists() {
        return Some(dir);
    }
    // One builder per process: threads compiling in parallel would each build the same
    // header (hundreds of MB of compiler memory at once) instead of waiting for the first.
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if gch.exists() {
        return Some(dir);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let hdr = dir.join("nt_prelude.h");
    if !hdr.exists() {
        let tmp = dir.join(format!("nt_prelude.h.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &text).ok()?;
        std::fs::rename(&tmp, &hdr).ok()?;
    }
    let tmp = dir.join(format!("nt_prelude.{}.tmp.gch", std::process::id()));
    let ok = Command::new(cxx)
        .args(flags)
        .args(["-x", "c++-header"])
        .arg(&hdr)
        .arg("-o")
        .arg(&tmp)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok || std::fs::rename(&tmp, &gch).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    Some(dir)
}

/// The driver: types, shim, the rewritten source, the entry table and the runner main.
fn driver_source(source: &str, entries: &[EntrySig]) -> String {
    let mut gen = String::from(
        "\n#line 1 \"ninfer-driver\"\n\
         template <class A, class B> struct nt_same { static const bool v = false; };\n\
         template <class A> struct nt_same<A, A> { static const bool v = true; };\n",
    );
    for (k, e) in entries.iter().enumerate() {
        let sig = e.params.join(", ");
        let call: Vec<String> = e
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| slot_expr(t, i))
            .collect();
        gen.push_str(&format!(
            "typedef void (*nt_sig_{k})({sig});\n\
             static_assert(nt_same<decltype(&{name}), nt_sig_{k}>::v, \"{SIG_MARK}[{k}]\");\n\
             static void nt_call_{k}() {{ {name}({call}); }}\n",
            name = e.entry,
            call = call.join(", ")
        ));
    }
    let table: Vec<String> = (0..entries.len()).map(|k| format!("nt_call_{k}")).collect();
    gen.push_str(&format!(
        "static void (*const nt_entries[])() = {{ {} }};\n",
        table.join(", ")
    ));
    format!(
        "{PRELUDE_MARK}\n#line 1 \"kernel-source\"\n{source}\n{gen}#line 1 \"host_main.h\"\n{HOST_MAIN}"
    )
}

fn trim_diag(s: &str) -> String {
    let pick: Vec<&str> = s.lines().filter(|l| l.contains("error")).take(8).collect();
    let lines = if pick.is_empty() {
        s.lines().take(8).collect::<Vec<_>>()
    } else {
        pick
    };
    lines
        .iter()
        .map(|l| {
            if l.len() > 300 {
                let mut e = 300;
                while !l.is_char_boundary(e) {
                    e -= 1;
                }
                format!("{}...", &l[..e])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parameter list a source declares for `entry`, for messages (best effort).
fn declared_params(source: &str, entry: &str) -> Option<String> {
    let code = rewrite::blank_non_code(source);
    let code = String::from_utf8_lossy(&code);
    let mut from = 0;
    while let Some(p) = code[from..].find(entry) {
        let at = from + p;
        from = at + entry.len();
        let before_ok =
            at == 0 || !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let rest = code[from..].trim_start();
        if before_ok && rest.starts_with('(') && code[..at].trim_end().ends_with("void") {
            let close = rest.find(')')?;
            return Some(
                rest[1..close]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    None
}

impl HostBinary {
    /// One binary for several entries of one source (compiling is the slow part).
    /// Errors: `kernel.compile` (diagnostics attached, trimmed), `kernel.entry_missing`,
    /// `kernel.signature`, `kernel.unsupported`, `kernel.tier_unavailable`.
    pub fn compile(source: &str, entries: &[EntrySig], opts: &HostOptions) -> Result<HostBinary> {
        let version = available()?;
        if let Some(what) = rewrite::unsupported_feature(source) {
            return Err(Error::new(ErrorClass::KernelUnsupported, "source", what));
        }
        let cxx = compiler();
        let ubsan = ubsan_available(&cxx);
        let text = driver_source(&rewrite::rewrite_source(source), entries);
        let mut flags: Vec<String> = crate::spec::get().kernels.host.flags.clone();
        flags.extend(
            ["-fno-threadsafe-statics", "-fno-strict-aliasing"]
                .iter()
                .map(|s| s.to_string()),
        );
        flags.push(format!("-D__CUDA_ARCH__={}", opts.cuda_arch));
        if ubsan {
            flags.push("-fsanitize=alignment".into());
            flags.push("-fno-sanitize-recover=alignment".into());
        }
        for d in &opts.defines {
            flags.push(format!("-D{d}"));
        }
        for d in &opts.include_dirs {
            flags.push(format!("-I{}", d.display()));
        }
        let mut h = Sha256::new();
        h.update(text.as_bytes());
        h.update(prelude().as_bytes());
        h.update(flags.join("\u{1}").as_bytes());
        h.update(version.as_bytes());
        h.update(cxx.as_bytes());
        let key = hex(&h.finalize()[..16]);
        let cache = cache_dir();
        std::fs::create_dir_all(&cache).map_err(|e| Error::io(ErrorClass::IoWrite, &cache, e))?;
        let exe = cache.join(format!("k-{key}"));
        let bin = HostBinary {
            exe: exe.clone(),
            entries: entries.to_vec(),
            ubsan,
        };
        if exe.exists() {
            return Ok(bin);
        }
        let inc = fake_include_dir(&cache)?;
        flags.push(format!("-I{}", inc.display()));
        let dir = TempDir::new("host")?;
        let cpp = dir.path().join("driver.cpp");
        let pch = precompiled_prelude(&cxx, &cache, &flags, &version);
        let body = match &pch {
            Some(_) => text.replacen(PRELUDE_MARK, "#include \"nt_prelude.h\"", 1),
            None => text.replacen(PRELUDE_MARK, &prelude(), 1),
        };
        if let Some(p) = &pch {
            flags.push(format!("-I{}", p.display()));
        }
        std::fs::write(&cpp, &body).map_err(|e| Error::io(ErrorClass::IoWrite, &cpp, e))?;
        let tmp_exe = cache.join(format!("k-{key}.{}.tmp", std::process::id()));
        let out = Command::new(&cxx)
            .args(&flags)
            .arg("-o")
            .arg(&tmp_exe)
            .arg(&cpp)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                Error::new(
                    ErrorClass::KernelTierUnavailable,
                    cxx.clone(),
                    e.to_string(),
                )
            })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp_exe);
            return Err(Self::compile_error(
                &String::from_utf8_lossy(&out.stderr),
                source,
                entries,
            ));
        }
        std::fs::rename(&tmp_exe, &exe).map_err(|e| Error::io(ErrorClass::IoWrite, &exe, e))?;
        Ok(bin)
    }

    fn compile_error(diag: &str, source: &str, entries: &[EntrySig]) -> Error {
        if let Some(p) = diag.find(SIG_MARK) {
            let k: usize = diag[p + SIG_MARK.len()..]
                .trim_start_matches('[')
                .split(']')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            if let Some(e) = entries.get(k) {
                let declared = declared_params(source, &e.entry)
                    .map(|d| format!("declared ({d})"))
                    .unwrap_or_else(|| "declared otherwise".into());
                return Error::new(
                    ErrorClass::KernelSignature,
                    e.entry.clone(),
                    format!(
                        "entry {} must be void {}({}); {declared}",
                        e.entry,
                        e.entry,
                        e.params.join(", ")
                    ),
                );
            }
        }
        for e in entries {
            let q = format!("'{}'", e.entry);
            if diag
                .lines()
                .any(|l| l.starts_with("ninfer-driver") && l.contains("error") && l.contains(&q))
            {
                return Error::new(
                    ErrorClass::KernelEntryMissing,
                    e.entry.clone(),
                    format!(
                        "the source defines no entry point named {}:\n{}",
                        e.entry,
                        trim_diag(diag)
                    ),
                );
            }
        }
        if let Some(name) = rewrite::missing_builtin(diag) {
            return Error::new(
                ErrorClass::KernelUnsupported,
                name.clone(),
                format!(
                    "the CUDA built-in `{name}` is not provided by the host shim (use the compile or device tier):\n{}",
                    trim_diag(diag)
                ),
            );
        }
        let who = entries.first().map(|e| e.entry.clone()).unwrap_or_default();
        Error::new(
            ErrorClass::KernelCompile,
            who,
            format!(
                "the kernel source does not compile with the host C++ compiler:\n{}",
                trim_diag(diag)
            ),
        )
    }

    /// Whether misaligned accesses are caught (UBSan's alignment check linked in).
    pub fn checks_alignment(&self) -> bool {
        self.ubsan
    }

    /// Runs `entry` over many launches in as few child processes as possible; one result per
    /// launch, in order.
    pub fn run(
        &self,
        entry: &str,
        launches: &[(String, Launch)],
        timeout_per_case: Duration,
        schedule_seed: u64,
    ) -> Vec<Result<Runs>> {
        let mut results: Vec<Option<Result<Runs>>> = (0..launches.len()).map(|_| None).collect();
        let Some(ei) = self.entries.iter().position(|e| e.entry == entry) else {
            let e = Error::new(
                ErrorClass::KernelEntryMissing,
                entry,
                format!("{entry} was not among the entries this binary was compiled for"),
            );
            return launches.iter().map(|_| Err(e.clone())).collect();
        };
        let sig = &self.entries[ei];
        let seeds: Vec<u64> = (0..launches.len())
            .map(|i| splitmix(schedule_seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .collect();
        // Launches the runner can take; the others are answered now.
        let mut todo = Vec::new();
        for (i, (case, l)) in launches.iter().enumerate() {
            match validate(sig, case, l) {
                Ok(()) => todo.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let dir = match TempDir::new("run") {
            Ok(d) => d,
            Err(e) => return launches.iter().map(|_| Err(e.clone())).collect(),
        };
        let lf = dir.path().join("launch.bin");
        let file = launch_file(ei, launches, &todo, &seeds, timeout_per_case);
        if let Err(e) = std::fs::write(&lf, file) {
            let e = Error::io(ErrorClass::IoWrite, &lf, e);
            return launches.iter().map(|_| Err(e.clone())).collect();
        }
        // Case numbers in the file are positions in `todo`.
        let mut start = 0usize;
        let mut restarts = 0;
        while start < todo.len() {
            let got = self.run_child(
                &dir,
                &lf,
                start,
                entry,
                launches,
                &todo,
                &seeds,
                timeout_per_case,
            );
            let next = got.next;
            for (k, r) in got.results {
                results[todo[k]] = Some(r);
            }
            restarts += 1;
            if next <= start || restarts > todo.len() + 2 {
                // No progress at all: say so for what is left.
                for &i in &todo[start..] {
                    if results[i].is_none() {
                        results[i] = Some(Err(Error::new(
                            ErrorClass::KernelCrash,
                            launches[i].0.clone(),
                            format!(
                                "the runner for {entry} stopped before this case: {}",
                                got.why
                            ),
                        )));
                    }
                }
                break;
            }
            start = next;
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.unwrap_or_else(|| {
                    Err(Error::new(
                        ErrorClass::KernelCrash,
                        launches[i].0.clone(),
                        "the runner produced no result for this case",
                    ))
                })
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn run_child(
        &self,
        dir: &TempDir,
        lf: &Path,
        start: usize,
        entry: &str,
        launches: &[(String, Launch)],
        todo: &[usize],
        seeds: &[u64],
        timeout: Duration,
    ) -> ChildOutcome {
        let errf = dir.path().join(format!("stderr-{start}.txt"));
        let mut outcome = ChildOutcome {
            results: Vec::new(),
            next: start,
            why: String::new(),
        };
        let stderr_file = match std::fs::File::create(&errf) {
            Ok(f) => f,
            Err(e) => {
                outcome.why = e.to_string();
                return outcome;
            }
        };
        let child = Command::new(&self.exe)
            .arg(lf)
            .arg(start.to_string())
            .env(
                "UBSAN_OPTIONS",
                format!(
                    "exitcode={UBSAN_EXIT}:print_stacktrace=0:halt_on_error=1:report_error_type=1"
                ),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr_file))
            .spawn();
        let mut child = match child {
            Ok(c) => KillOnDrop(c),
            Err(e) => {
                outcome.why = format!("cannot start the kernel process: {e}");
                return outcome;
            }
        };
        let Some(stdout) = child.0.stdout.take() else {
            outcome.why = "the kernel process has no stdout pipe (it is spawned piped)".into();
            return outcome;
        };
        let (tx, rx) = mpsc::channel::<Rec>();
        let reader = std::thread::spawn(move || read_records(stdout, tx));
        let mut maps: BTreeMap<usize, Vec<BufMap>> = BTreeMap::new();
        let mut runs: Vec<ScheduleRun> = Vec::new();
        let mut current: Option<usize> = None;
        let mut case_err: Option<Error> = None;
        let watchdog = timeout + Duration::from_secs(3);
        let mut last = Instant::now();
        let name_of = |k: usize| launches[todo[k]].0.clone();
        let launch_of = |k: usize| &launches[todo[k]].1;
        let sched_name = |k: usize, r: usize| match r {
            0 => "forward".to_string(),
            1 => "reverse".to_string(),
            _ => format!("random:{}", seeds[todo[k]]),
        };
        let mut ended_by: Option<Rec> = None;
        loop {
            let left = watchdog.saturating_sub(last.elapsed());
            match rx.recv_timeout(left.max(Duration::from_millis(1))) {
                Ok(rec) => {
                    last = Instant::now();
                    match rec {
                        Rec::Begin(k) => {
                            current = Some(k);
                            runs.clear();
                            case_err = None;
                        }
                        Rec::Map(k, m) => {
                            // A later placement of the same buffer replaces the earlier one.
                            let v = maps.entry(k).or_default();
                            v.retain(|o| o.arg != m.arg);
                            v.push(m);
                        }
                        Rec::Run(k, r, bytes) => runs.push(ScheduleRun {
                            schedule: sched_name(k, r),
                            out: bytes,
                        }),
                        Rec::Guard {
                            case,
                            arg,
                            run,
                            nbefore,
                            fbefore,
                            nafter,
                            fafter,
                        } => {
                            if case_err.is_none() {
                                case_err = Some(guard_error(
                                    entry,
                                    &name_of(case),
                                    launch_of(case),
                                    arg,
                                    &sched_name(case, run),
                                    nbefore,
                                    fbefore,
                                    nafter,
                                    fafter,
                                ));
                            }
                        }
                        Rec::Poison(k, arg, where_) => {
                            if case_err.is_none() {
                                case_err = Some(poison_error(
                                    entry,
                                    &name_of(k),
                                    launch_of(k),
                                    arg,
                                    &where_,
                                ));
                            }
                        }
                        Rec::Deadlock(k, text) => {
                            case_err = Some(Error::new(
                                ErrorClass::KernelDeadlock,
                                name_of(k),
                                format!("{entry} deadlocks: {text}"),
                            ));
                        }
                        Rec::Done(k) => {
                            let r = match case_err.take() {
                                Some(e) => Err(e),
                                None if runs.is_empty() => Err(Error::new(
                                    ErrorClass::KernelCrash,
                                    name_of(k),
                                    "the runner reported no output for this case",
                                )),
                                None => Ok(Runs {
                                    runs: std::mem::take(&mut runs),
                                }),
                            };
                            outcome.results.push((k, r));
                            outcome.next = k + 1;
                            current = None;
                        }
                        r @ (Rec::Signal { .. } | Rec::Timeout(_)) => {
                            ended_by = Some(r);
                        }
                        Rec::Eof => break,
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // The child's own alarm did not fire (or it is stuck in the kernel with
                    // signals blocked): the watchdog ends it.
                    let _ = child.0.kill();
                    let k = current.unwrap_or(outcome.next);
                    if k < todo.len() {
                        outcome.results.push((
                            k,
                            Err(Error::new(
                                ErrorClass::KernelTimeout,
                                name_of(k),
                                format!(
                                    "{entry} did not finish within {:.1} s (the runner's watchdog ended it)",
                                    watchdog.as_secs_f64()
                                ),
                            )),
                        ));
                        outcome.next = k + 1;
                    }
                    current = None;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.0.wait().ok();
        let _ = reader.join();
        if let Some(k) = current {
            let stderr = read_tail(&errf, 64 * 1024);
            let l = launch_of(k);
            let empty = Vec::new();
            let m = maps.get(&k).unwrap_or(&empty);
            let err = match ended_by {
                Some(Rec::Timeout(_)) => Error::new(
                    ErrorClass::KernelTimeout,
                    name_of(k),
                    format!(
                        "{entry} did not finish within {:.1} s (an endless loop, or a spin-wait no other thread ends)",
                        timeout.as_secs_f64()
                    ),
                ),
                Some(Rec::Signal { sig, addr, write, thread, block, stack_overflow, .. }) => {
                    fault_error(entry, &name_of(k), l, m, sig, addr, write, thread, block, stack_overflow)
                }
                _ => exit_error(entry, &name_of(k), l, m, status, &stderr),
            };
            outcome.results.push((k, Err(err)));
            outcome.next = k + 1;
        } else if outcome.next < todo.len() && status.map(|s| !s.success()).unwrap_or(true) {
            outcome.why = format!(
                "exited with {} before case {}: {}",
                status.map(|s| s.to_string()).unwrap_or_default(),
                name_of(outcome.next),
                read_tail(&errf, 2000).trim()
            );
        } else if outcome.next < todo.len() {
            outcome.why = "the runner ended early".into();
        }
        let _ = std::fs::remove_file(&errf);
        outcome
    }
}

struct ChildOutcome {
    results: Vec<(usize, Result<Runs>)>,
    /// The first case the next child should start at.
    next: usize,
    why: String,
}

/// Kills and reaps the child if the parent leaves early (no child outlives a call).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn validate(sig: &EntrySig, case: &str, l: &Launch) -> Result<()> {
    let bad = |why: String| Err(Error::new(ErrorClass::KernelSignature, case, why));
    let threads = l.block.iter().map(|&b| b as u64).product::<u64>();
    if threads == 0 || threads > 1024 {
        return bad(format!(
            "block {:?} has {threads} threads (1..=1024 allowed)",
            l.block
        ));
    }
    if l.args.len() != sig.params.len() {
        return bad(format!(
            "the launch passes {} arguments, {} takes {} ({})",
            l.args.len(),
            sig.entry,
            sig.params.len(),
            sig.params.join(", ")
        ));
    }
    if l.args
        .iter()
        .filter(|a| matches!(a, LaunchArg::Out { .. }))
        .count()
        != 1
    {
        return bad("a launch needs exactly one Out buffer".into());
    }
    for (a, t) in l.args.iter().zip(&sig.params) {
        let ptr = t.contains('*');
        let is_buf = matches!(
            a,
            LaunchArg::In { .. } | LaunchArg::Out { .. } | LaunchArg::Scratch { .. }
        );
        if ptr != is_buf {
            return bad(format!("argument {a:?} passed to a parameter of type {t}"));
        }
    }
    Ok(())
}

/// The launch file: `NTLAUNCH`, case count, then per case the entry index, timeout (ms),
/// schedule seed, flags, grid, block, dynamic shared bytes and the arguments.
fn launch_file(
    ei: usize,
    launches: &[(String, Launch)],
    todo: &[usize],
    seeds: &[u64],
    timeout: Duration,
) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"NTLAUNCH");
    let put = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
    put(&mut b, todo.len() as u64);
    for &i in todo {
        let l = &launches[i].1;
        put(&mut b, ei as u64);
        put(&mut b, timeout.as_millis().max(1) as u64);
        put(&mut b, seeds[i]);
        put(&mut b, 0);
        for v in l.grid.iter().chain(&l.block) {
            put(&mut b, *v as u64);
        }
        put(&mut b, l.dyn_shared as u64);
        put(&mut b, l.args.len() as u64);
        for a in &l.args {
            match a {
                LaunchArg::In { bytes, .. } => {
                    put(&mut b, 0);
                    put(&mut b, bytes.len() as u64);
                    b.extend_from_slice(bytes);
                    b.resize(b.len().div_ceil(8) * 8, 0);
                }
                LaunchArg::Out { bytes, .. } => {
                    put(&mut b, 1);
                    put(&mut b, *bytes as u64);
                }
                LaunchArg::Scratch { bytes, .. } => {
                    put(&mut b, 2);
                    put(&mut b, *bytes as u64);
                }
                LaunchArg::I32(v) => {
                    put(&mut b, 3);
                    put(&mut b, *v as u32 as u64);
                }
                LaunchArg::I64(v) => {
                    put(&mut b, 4);
                    put(&mut b, *v as u64);
                }
                LaunchArg::F32(v) => {
                    put(&mut b, 5);
                    put(&mut b, v.to_bits() as u64);
                }
            }
        }
    }
    b
}

/// A buffer's placement in the child.
#[derive(Clone, Debug)]
struct BufMap {
    /// Argument index; `None` for the dynamic shared memory.
    arg: Option<usize>,
    kind: u8,
    base: u64,
    len: u64,
    lo: u64,
    hi: u64,
}

enum Rec {
    Begin(usize),
    Map(usize, BufMap),
    Run(usize, usize, Vec<u8>),
    Guard {
        case: usize,
        arg: usize,
        run: usize,
        nbefore: u64,
        fbefore: u64,
        nafter: u64,
        fafter: u64,
    },
    Poison(usize, i64, String),
    Deadlock(usize, String),
    Signal {
        #[allow(dead_code)]
        case: usize,
        sig: i32,
        addr: u64,
        write: u8,
        thread: i64,
        block: [u32; 3],
        stack_overflow: bool,
    },
    Timeout(#[allow(dead_code)] usize),
    Done(usize),
    Eof,
}

fn read_records(out: std::process::ChildStdout, tx: mpsc::Sender<Rec>) {
    let mut r = BufReader::with_capacity(1 << 16, out);
    let mut line = String::new();
    loop {
        line.clear();
        match r.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let l = line.trim_end_matches('\n');
        let mut w = l.split(' ');
        let tag = w.next().unwrap_or("");
        let mut num = || w.next().and_then(|t| t.parse::<u64>().ok()).unwrap_or(0);
        let rec = match tag {
            "B" => Rec::Begin(num() as usize),
            "D" => Rec::Done(num() as usize),
            "T" => Rec::Timeout(num() as usize),
            "R" => {
                let case = num() as usize;
                let run = num() as usize;
                let n = num() as usize;
                let mut bytes = vec![0u8; n];
                if r.read_exact(&mut bytes).is_err() {
                    break;
                }
                Rec::Run(case, run, bytes)
            }
            "G" => {
                let case = num() as usize;
                let arg = num() as usize;
                let run = num() as usize;
                Rec::Guard {
                    case,
                    arg,
                    run,
                    nbefore: num(),
                    fbefore: num(),
                    nafter: num(),
                    fafter: num(),
                }
            }
            _ => {
                let parts: Vec<&str> = l.split(' ').collect();
                let p = |i: usize| parts.get(i).copied().unwrap_or("");
                let hx = |s: &str| u64::from_str_radix(s, 16).unwrap_or(0);
                match tag {
                    "M" => {
                        let case = p(1).parse().unwrap_or(0);
                        let arg = p(2).parse::<u64>().unwrap_or(0);
                        Rec::Map(
                            case,
                            BufMap {
                                arg: if arg == u32::MAX as u64 {
                                    None
                                } else {
                                    Some(arg as usize)
                                },
                                kind: p(3).bytes().next().unwrap_or(b'?'),
                                base: hx(p(4)),
                                len: p(5).parse().unwrap_or(0),
                                lo: hx(p(6)),
                                hi: hx(p(7)),
                            },
                        )
                    }
                    "P" => Rec::Poison(
                        p(1).parse().unwrap_or(0),
                        p(2).parse().unwrap_or(-1),
                        p(3).to_string(),
                    ),
                    "X" => {
                        let case = p(1).parse().unwrap_or(0);
                        let text = l.splitn(3, ' ').nth(2).unwrap_or("").to_string();
                        Rec::Deadlock(case, text)
                    }
                    "S" => Rec::Signal {
                        case: p(1).parse().unwrap_or(0),
                        sig: p(2).parse().unwrap_or(0),
                        addr: hx(p(3)),
                        write: p(4).parse().unwrap_or(2),
                        thread: p(5).parse().unwrap_or(-1),
                        block: [
                            p(6).parse().unwrap_or(0),
                            p(7).parse().unwrap_or(0),
                            p(8).parse().unwrap_or(0),
                        ],
                        stack_overflow: p(9) == "1",
                    },
                    _ => continue,
                }
            }
        };
        if tx.send(rec).is_err() {
            return;
        }
    }
    let _ = tx.send(Rec::Eof);
}

fn read_tail(p: &Path, max: u64) -> String {
    let Ok(mut f) = std::fs::File::open(p) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max {
        use std::io::Seek;
        let _ = f.seek(std::io::SeekFrom::Start(len - max));
    }
    let mut v = Vec::new();
    let _ = f.read_to_end(&mut v);
    String::from_utf8_lossy(&v).to_string()
}

fn arg_name(l: &Launch, arg: usize) -> String {
    match l.args.get(arg) {
        Some(
            LaunchArg::In { name, .. }
            | LaunchArg::Out { name, .. }
            | LaunchArg::Scratch { name, .. },
        ) => name.clone(),
        _ => format!("#{arg}"),
    }
}

fn arg_role(l: &Launch, arg: usize) -> &'static str {
    match l.args.get(arg) {
        Some(LaunchArg::In { .. }) => "input",
        Some(LaunchArg::Out { .. }) => "output",
        Some(LaunchArg::Scratch { .. }) => "scratch",
        _ => "argument",
    }
}

fn thread_text(l: &Launch, thread: i64, block: [u32; 3]) -> String {
    if thread < 0 {
        return "outside any thread".into();
    }
    let t = thread as u32;
    let (bx, by) = (l.block[0].max(1), l.block[1].max(1));
    format!(
        "thread ({},{},{}) of block ({},{},{})",
        t % bx,
        (t / bx) % by,
        t / (bx * by),
        block[0],
        block[1],
        block[2]
    )
}

#[allow(clippy::too_many_arguments)]
fn guard_error(
    entry: &str,
    case: &str,
    l: &Launch,
    arg: usize,
    sched: &str,
    nbefore: u64,
    fbefore: u64,
    nafter: u64,
    fafter: u64,
) -> Error {
    let name = arg_name(l, arg);
    let role = arg_role(l, arg);
    let len = match l.args.get(arg) {
        Some(LaunchArg::Out { bytes, .. } | LaunchArg::Scratch { bytes, .. }) => *bytes,
        _ => 0,
    };
    let mut parts = Vec::new();
    if nafter > 0 {
        parts.push(format!("{nafter} bytes after {role} `{name}` (the first at byte +{fafter} past its end, len {len})"));
    }
    if nbefore > 0 {
        parts.push(format!(
            "{nbefore} bytes before {role} `{name}` (as far as {fbefore} bytes before its start)"
        ));
    }
    Error::new(
        ErrorClass::KernelOutOfBounds,
        case,
        format!(
            "{entry} wrote {} (guard band changed, {sched} schedule)",
            parts.join(" and ")
        ),
    )
}

fn poison_error(entry: &str, case: &str, l: &Launch, arg: i64, where_: &str) -> Error {
    let detail = if arg < 0 {
        format!("{entry}'s output depends on the poison bytes around its inputs (their alignment slack): it reads outside an input")
    } else {
        let name = arg_name(l, arg as usize);
        let len = match l.args.get(arg as usize) {
            Some(LaunchArg::In { bytes, .. }) => bytes.len(),
            _ => 0,
        };
        if where_ == "after" {
            format!("{entry}'s output depends on the bytes after input `{name}` (its 16-byte alignment slack past byte {len}): it reads past the end of `{name}`")
        } else {
            format!("{entry}'s output depends on the bytes before input `{name}` (the poison before its start): it reads before the start of `{name}`")
        }
    };
    Error::new(ErrorClass::KernelOutOfBoundsRead, case, detail)
}

fn signame(sig: i32) -> &'static str {
    match sig {
        11 => "SIGSEGV",
        7 => "SIGBUS",
        8 => "SIGFPE",
        4 => "SIGILL",
        6 => "SIGABRT",
        _ => "signal",
    }
}

#[allow(clippy::too_many_arguments)]
fn fault_error(
    entry: &str,
    case: &str,
    l: &Launch,
    maps: &[BufMap],
    sig: i32,
    addr: u64,
    write: u8,
    thread: i64,
    block: [u32; 3],
    stack_overflow: bool,
) -> Error {
    let who = thread_text(l, thread, block);
    let page = 4096u64.max(page_size());
    if stack_overflow {
        return Error::new(
            ErrorClass::KernelCrash,
            case,
            format!("{entry}: stack overflow in {who} (the host tier gives each thread 256 KiB)"),
        );
    }
    if sig == 11 || sig == 7 {
        for m in maps {
            if addr < m.lo || addr >= m.hi {
                continue;
            }
            let name = match m.arg {
                Some(a) => arg_name(l, a),
                None => "dynamic shared memory".into(),
            };
            let role = match m.kind {
                b'I' => "input",
                b'O' => "output",
                b'S' => "scratch",
                _ => "buffer",
            };
            let end = m.base + m.len;
            let verb = if write == 1 {
                "wrote"
            } else if write == 0 {
                "read"
            } else {
                "accessed"
            };
            let class = if write == 0 {
                ErrorClass::KernelOutOfBoundsRead
            } else {
                ErrorClass::KernelOutOfBounds
            };
            let in_guard = addr < m.lo + page || addr >= m.hi - page;
            if m.kind == b'I' && !in_guard && write != 0 {
                let off = addr as i64 - m.base as i64;
                return Error::new(
                    ErrorClass::KernelOutOfBounds,
                    case,
                    format!("{entry} wrote into input `{name}` at byte {off} (len {}; inputs are read-only), {who}", m.len),
                );
            }
            let at = if addr >= end {
                format!("at byte +{} past its end (len {})", addr - end, m.len)
            } else if addr < m.base {
                format!("{} bytes before its start (len {})", m.base - addr, m.len)
            } else {
                format!("at byte {} (len {})", addr - m.base, m.len)
            };
            let class = if m.kind == b'I' && write != 1 {
                ErrorClass::KernelOutOfBoundsRead
            } else {
                class
            };
            let role_text = if m.arg.is_none() {
                String::new()
            } else {
                format!("{role} ")
            };
            return Error::new(
                class,
                case,
                format!("{entry} {verb} {role_text}`{name}` {at}: a guard page, {who}"),
            );
        }
    }
    Error::new(
        ErrorClass::KernelCrash,
        case,
        format!(
            "{entry} crashed with {} ({sig}) at address 0x{addr:x}, outside every buffer of the launch, {who}",
            signame(sig)
        ),
    )
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

fn exit_error(
    entry: &str,
    case: &str,
    l: &Launch,
    maps: &[BufMap],
    status: Option<std::process::ExitStatus>,
    stderr: &str,
) -> Error {
    use std::os::unix::process::ExitStatusExt;
    if status.and_then(|s| s.code()) == Some(UBSAN_EXIT) || stderr.contains("misaligned address") {
        if let Some(line) = stderr.lines().find(|l| l.contains("misaligned address")) {
            return misaligned_error(entry, case, l, maps, line);
        }
    }
    let tail: String = {
        let t = stderr.trim();
        let lines: Vec<&str> = t.lines().rev().take(6).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    let how = match status {
        Some(s) if s.signal() == Some(6) => "aborted (assert, __trap or abort)".to_string(),
        Some(s) if s.signal().is_some() => {
            format!("was killed by signal {}", s.signal().unwrap_or(0))
        }
        Some(s) => format!("exited with {s}"),
        None => "ended".to_string(),
    };
    Error::new(
        ErrorClass::KernelCrash,
        case,
        format!(
            "{entry} {how} while running this case{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        ),
    )
}

/// `... runtime error: load of misaligned address 0x... for type 'const float4', which requires 16 byte alignment`
fn misaligned_error(entry: &str, case: &str, l: &Launch, maps: &[BufMap], line: &str) -> Error {
    let loc = line.split(": runtime error").next().unwrap_or("").trim();
    let what = line
        .split("runtime error: ")
        .nth(1)
        .unwrap_or(line)
        .split(" misaligned")
        .next()
        .unwrap_or("access");
    let addr = line
        .split("misaligned address 0x")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    let ty = line
        .split("for type '")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap_or("?");
    let req = line
        .split("which requires ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or("?");
    let place = addr
        .and_then(|a| {
            maps.iter().find(|m| a >= m.lo && a < m.hi).map(|m| {
                let name = match m.arg {
                    Some(k) => format!("{} `{}`", arg_role(l, k), arg_name(l, k)),
                    None => "dynamic shared memory".into(),
                };
                format!("byte {} of {name}", a as i64 - m.base as i64)
            })
        })
        .unwrap_or_else(|| format!("address 0x{:x}", addr.unwrap_or(0)));
    Error::new(
        ErrorClass::KernelMisaligned,
        case,
        format!("{entry}: {what} misaligned {place} as type '{ty}', which needs {req}-byte alignment ({loc})"),
    )
}

// ---------------------------------------------------------------- the previous API

/// A compiled host-tier kernel (the previous API: one class ABI, one launch per call).
pub struct HostKernel {
    bin: HostBinary,
    /// The kernel's entry point.
    pub entry: String,
    /// The kernel's class (its ABI).
    pub class: KernelClass,
}

impl HostKernel {
    /// Compiles `source` (includes already resolved) with entry `entry` under `class`'s ABI.
    pub fn compile(source: &str, entry: &str, class: KernelClass) -> Result<HostKernel> {
        let sig = EntrySig {
            entry: entry.to_string(),
            params: class.spec().args.iter().map(|a| a.ty.clone()).collect(),
        };
        let bin =
            HostBinary::compile(source, &[sig], &HostOptions::default()).map_err(|mut e| {
                if e.class == ErrorClass::KernelSignature {
                    e.detail = format!(
                        "entry {entry} does not have the {} ABI ({}): {}",
                        class.name(),
                        class.c_signature(),
                        e.detail
                    );
                }
                e
            })?;
        Ok(HostKernel {
            bin,
            entry: entry.into(),
            class,
        })
    }

    /// Runs one launch; returns the forward run's output with 256 guard floats on each side.
    pub fn run(&self, case: &str, launch: &Launch, timeout: Duration) -> Result<Vec<f32>> {
        let r = self
            .bin
            .run(
                &self.entry,
                &[(case.to_string(), launch.clone())],
                timeout,
                0,
            )
            .pop()
            .ok_or_else(|| {
                Error::new(
                    ErrorClass::InternalInvariant,
                    case,
                    "the kernel host returned no result for a one-launch schedule",
                )
            })??;
        let out = &r.runs[0].out;
        let guard = BAND / 4;
        let mut v = Vec::with_capacity(out.len() / 4 + 2 * guard);
        v.extend(std::iter::repeat_n(f32::from_bits(SENTINEL), guard));
        v.extend(
            out.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        v.extend(std::iter::repeat_n(f32::from_bits(SENTINEL), guard));
        Ok(v)
    }
}
