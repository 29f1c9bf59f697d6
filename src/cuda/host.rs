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
//!
//! The sanitizer checks (conformance/KERNELS.md, "What the host tier's sanitizer checks"):
//! static storage (`__device__` globals, `static`s) is put back to its start-up image before
//! every run; the random schedule keeps up to 4 blocks in flight, switching at sync points;
//! when every schedule agreed, a forward rerun with NaN shared-memory poison finds reads of
//! shared memory the kernel never wrote (initcheck); a warp collective whose named lanes wait
//! at another collective is reported (synccheck); when every schedule agreed and the kernel
//! used an atomic or a fence, a weak-visibility run (blocks in order, a block's plain global
//! stores visible to others only from its `__threadfence()` on) finds a block reading another's
//! results before they were published. A [`LaunchArg::Sparse`] input (a table past 2^31 bytes
//! of which only the gathered rows exist) is mapped without memory behind it, with a guard
//! window where a row offset wrapped to a signed 32-bit value lands.

mod cache;
mod rewrite;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::abi::{Launch, LaunchArg};
use super::sources::{HOST_SHIM, HOST_TYPES};
use crate::contain;
use crate::error::{Error, ErrorClass, Result};

/// The runner's `main`, placed after the kernel source.
const HOST_MAIN: &str = include_str!("kernels/host_main.h");

/// The compiler the host tier uses: `$NINFER_CXX`, else `c++`.
pub fn compiler() -> String {
    std::env::var("NINFER_CXX").unwrap_or_else(|_| "c++".into())
}

/// Whether the host compiler runs at all (`kernel.tier_unavailable` explains why not).
pub fn available() -> Result<String> {
    // Asked before every compile: one contained `--version` per compiler and process is enough.
    static SEEN: std::sync::Mutex<BTreeMap<String, Result<String>>> =
        std::sync::Mutex::new(BTreeMap::new());
    let cxx = compiler();
    if let Some(r) = SEEN.lock().unwrap_or_else(|p| p.into_inner()).get(&cxx) {
        return r.clone();
    }
    let r = probe_version(&cxx);
    SEEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(cxx, r.clone());
    r
}

fn probe_version(cxx: &str) -> Result<String> {
    let cxx = cxx.to_string();
    let o = contain::run(
        &contain::Job::new(&cxx)
            .arg("--version")
            .stdout_cap(64 << 10)
            .stderr_cap(0)
            .limits(probe_limits()),
    );
    match o.end {
        contain::End::Exited(0) => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()),
        contain::End::SpawnFailed(e) => Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            cxx,
            format!("host C++ compiler not runnable ({e}); install g++ or set NINFER_CXX"),
        )),
        end => Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            cxx,
            format!("`--version` ended with {end:?}"),
        )),
    }
}

/// Limits of the compiler's quick probes (`--version`, the UBSan probe, its search folders).
fn probe_limits() -> contain::Limits {
    contain::Limits {
        memory_mb: 4096,
        file_size_mb: 256,
        ..contain::Limits::with_timeout(Duration::from_secs(60))
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
    /// Folders for `#include <...>`, passed as `-I` (no system folder: `kernel.include`).
    pub include_dirs: Vec<PathBuf>,
    /// The value of `__CUDA_ARCH__` (e.g. 800).
    pub cuda_arch: u32,
    /// Wall-clock limit of one compile (`kernel.compile_limit` past it).
    pub compile_timeout: Duration,
    /// Address-space cap of the compiler in MiB (0: none).
    pub compile_memory_mb: u64,
    /// Address-space cap of the kernel process in MiB (0: none).
    pub memory_mb: u64,
}

/// Default `--compile-timeout`.
pub const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default `--compile-memory-mb`.
pub const DEFAULT_COMPILE_MEMORY_MB: u64 = 4096;
/// Default `--memory-mb` (the kernel process).
pub const DEFAULT_MEMORY_MB: u64 = 4096;
/// Most bytes the kernel process may write to a file (its standard error).
const KERNEL_FILE_MB: u64 = 64;

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            defines: Vec::new(),
            include_dirs: Vec::new(),
            cuda_arch: 800,
            compile_timeout: DEFAULT_COMPILE_TIMEOUT,
            compile_memory_mb: DEFAULT_COMPILE_MEMORY_MB,
            memory_mb: DEFAULT_MEMORY_MB,
        }
    }
}

/// A compiled host-tier runner for one or more entries of one source.
#[derive(Debug)]
pub struct HostBinary {
    exe: PathBuf,
    /// SHA-256 of `exe` when it was built or checked; re-checked before every start.
    sha: [u8; 32],
    entries: Vec<EntrySig>,
    #[cfg(any(test, feature = "internals"))]
    ubsan: bool,
    memory_mb: u64,
}

/// Every schedule's output for one launch; `runs[0]` is the canonical (forward) run.
#[derive(Clone, Debug, PartialEq)]
pub struct Runs {
    /// Forward, reverse, then `random:<seed>`.
    pub runs: Vec<ScheduleRun>,
    /// Bytes of `__device__`/static storage the forward run changed (0 on a GPU, where it is
    /// not looked at). Every host run starts that storage from its initial image, so a
    /// difference between schedules then points at blocks sharing it.
    pub static_bytes_written: u64,
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
/// The runner's fill of Out before a launch (host_main.h), as the tests read it back.
#[cfg(test)]
const SENTINEL: u32 = 0x7fa5_a5a5;

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

/// The stand-in headers' folder in the (private) cache, each header checked to hold exactly
/// our text (rewritten when not).
fn fake_include_dir(cache: &Path) -> Result<PathBuf> {
    let d = cache.join("include");
    self::cache::private_dir(&d)?;
    for h in FAKE_HEADERS {
        self::cache::ensure_file(&d.join(h), b"// provided by the ninfer host shim\n")?;
    }
    Ok(d)
}

/// The private cache's file of per-kernel seconds of the last fixed-case builtin run.
const DURATIONS: &str = "durations-builtin-host";

/// Seconds per builtin kernel of the last fixed-case run on this machine (only to run the
/// longest first; empty when none was recorded or the file is not a private one of ours).
pub fn remembered_durations() -> BTreeMap<String, f64> {
    let Some(bytes) = self::cache::dir()
        .ok()
        .and_then(|d| self::cache::read_private(&d.join(DURATIONS), 1 << 20))
    else {
        return BTreeMap::new();
    };
    parse_durations(&bytes)
}

/// `seconds entry` lines; any other line (a damaged or foreign file) is skipped.
fn parse_durations(bytes: &[u8]) -> BTreeMap<String, f64> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| {
            let (secs, entry) = l.split_once(' ')?;
            let secs: f64 = secs
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
            Some((entry.to_string(), secs))
        })
        .collect()
}

/// Records [`remembered_durations`] for the next run (a cache that cannot be written only
/// loses the ordering).
pub fn remember_durations(seconds: &BTreeMap<String, f64>) {
    let text: String = seconds
        .iter()
        .map(|(entry, secs)| format!("{secs:.4} {entry}\n"))
        .collect();
    if let Ok(d) = self::cache::dir() {
        let _ = self::cache::write_private(&d.join(DURATIONS), text.as_bytes());
    }
}

/// Whether `-fsanitize=alignment` compiles and links here: probed once per compiler and
/// remembered in the private kernel cache (the probe compiles, links and runs a program: 0.4 s
/// at the start of every run otherwise), keyed by the compiler's name, `--version` line and the
/// binary it resolves to (path, size, modification time), so a changed compiler is probed again.
fn ubsan_available(cxx: &str) -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| remembered_probe(ubsan_memo_path(cxx).as_deref(), || probe_ubsan(cxx)))
}

/// A yes/no probe's answer from `memo` (a private cache file holding `0` or `1`), else from
/// `probe`, then recorded there. A file that is not ours and private, or holds anything else,
/// is not believed.
fn remembered_probe(memo: Option<&Path>, probe: impl FnOnce() -> bool) -> bool {
    if let Some(v) = memo.and_then(|p| self::cache::read_private(p, 2)) {
        match v.as_slice() {
            b"1" => return true,
            b"0" => return false,
            _ => {}
        }
    }
    let v = probe();
    if let Some(p) = memo {
        // A cache that cannot be written only costs the next run the probe again.
        let _ = self::cache::write_private(p, if v { b"1" } else { b"0" });
    }
    v
}

/// Where the UBSan probe's answer for `cxx` is remembered (`None`: the compiler cannot be
/// identified, so it is probed every run).
fn ubsan_memo_path(cxx: &str) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let version = available().ok()?;
    let exe = resolve_program(cxx)?;
    let m = std::fs::metadata(&exe).ok()?;
    let mut h = Sha256::new();
    for part in [
        cxx.as_bytes(),
        version.as_bytes(),
        exe.as_os_str().as_encoded_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.update(m.len().to_le_bytes());
    h.update(m.mtime().to_le_bytes());
    h.update(m.mtime_nsec().to_le_bytes());
    let key = crate::digest::hex(&h.finalize()[..16]);
    Some(self::cache::dir().ok()?.join(format!("ubsan-{key}")))
}

/// The file a program name runs: itself when it holds a `/`, else the first executable of that
/// name on `PATH`; symbolic links resolved.
fn resolve_program(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| runnable(p))
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(name))
            .find(|p| runnable(p))
    };
    std::fs::canonicalize(found?).ok()
}

/// Compiles, links and runs a program with `-fsanitize=alignment`.
fn probe_ubsan(cxx: &str) -> bool {
    let Ok(dir) = crate::fsio::scratch_dir("ubsan-probe") else {
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
    let quiet = |j: contain::Job| {
        contain::run(&j.stdout_cap(0).stderr_cap(0).limits(probe_limits())).end
            == contain::End::Exited(0)
    };
    quiet(
        contain::Job::new(cxx)
            .args([
                "-fsanitize=alignment",
                "-fno-sanitize-recover=alignment",
                "-o",
            ])
            .arg(&exe)
            .arg(&src)
            .env("TMPDIR", dir.path())
            .current_dir(dir.path()),
    ) && quiet(contain::Job::new(&exe))
}

/// The compiler's own search folders for `#include <...>` (canonical), probed once per
/// compiler: files under them are the system's headers, which a kernel may include.
fn system_include_dirs(cxx: &str, flags: &[String]) -> Vec<PathBuf> {
    static DIRS: std::sync::Mutex<Vec<(String, Vec<PathBuf>)>> = std::sync::Mutex::new(Vec::new());
    let mut g = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = g.iter().find(|(c, _)| c == cxx) {
        return d.clone();
    }
    let std_flags: Vec<&String> = flags.iter().filter(|f| f.starts_with("-std=")).collect();
    let o = contain::run(
        &contain::Job::new(cxx)
            .args(std_flags)
            .args(["-x", "c++", "-E", "-v", "/dev/null"])
            .env("LC_ALL", "C")
            .stdout_cap(0)
            .stderr_cap(256 << 10)
            .limits(probe_limits()),
    );
    let text = String::from_utf8_lossy(&o.stderr);
    let mut dirs = Vec::new();
    let mut on = false;
    for l in text.lines() {
        if l.starts_with("#include <...> search starts here") {
            on = true;
        } else if l.starts_with("End of search list") {
            break;
        } else if on {
            let d = l.trim().trim_end_matches(" (framework directory)");
            if let Ok(c) = std::fs::canonicalize(d) {
                // Never a root that would let anything through.
                if c != Path::new("/") {
                    dirs.push(c);
                }
            }
        }
    }
    g.push((cxx.to_string(), dirs.clone()));
    dirs
}

/// The files a `-MD` dependency file lists (Make syntax: `\\` continuations, `\\ ` spaces).
fn dep_paths(text: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    let mut out = Vec::new();
    for rule in joined.lines() {
        // `target: deps...`; the target is our own output path (no ': ' in it).
        let Some(p) = rule.find(": ") else { continue };
        let deps = &rule[p + 2..];
        let mut cur = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some(' ') | Some('#') | Some('\\')) => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                '$' if chars.peek() == Some(&'$') => {
                    chars.next();
                    cur.push('$');
                }
                ' ' | '\t' => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every file the compiler read (its `-MD` list) lies under `allowed` (after symlinks); else
/// `kernel.include`, and nothing the compiler printed is shown.
fn check_deps(deps: &Path, cwd: &Path, allowed: &[PathBuf]) -> Result<()> {
    let text = super::confine::read_bounded(deps, 16 << 20, ErrorClass::KernelInclude)?;
    for p in dep_paths(&text) {
        let path = cwd.join(&p);
        let ok = std::fs::canonicalize(&path)
            .map(|c| allowed.iter().any(|a| c.starts_with(a)) && c.is_file())
            .unwrap_or(false);
        if !ok {
            return Err(Error::new(
                ErrorClass::KernelInclude,
                p.clone(),
                format!(
                    "the compiler read {p}, which is outside the allowed folders (the compiler's system headers, the -I folders): a computed #include, a `..` or a symbolic link reached it; nothing the compiler printed is shown"
                ),
            ));
        }
    }
    Ok(())
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
    limits: &contain::Limits,
) -> Option<PathBuf> {
    let text = prelude();
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    h.update(flags.join("\u{1}").as_bytes());
    h.update(version.as_bytes());
    h.update(cxx.as_bytes());
    let dir = cache.join(format!("pch-{}", crate::digest::hex(&h.finalize()[..12])));
    let gch = dir.join("nt_prelude.h.gch");
    // One builder per process: threads compiling in parallel would each build the same
    // header (hundreds of MB of compiler memory at once) instead of waiting for the first.
    // A header this process built or checked (against the hash sidecar we wrote when we
    // built it) is not hashed again.
    static BUILD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut done = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if done.contains(&dir) {
        return Some(dir);
    }
    self::cache::private_dir(&dir).ok()?;
    let hdr = dir.join("nt_prelude.h");
    self::cache::ensure_file(&hdr, text.as_bytes()).ok()?;
    if self::cache::verified(&gch).is_some() {
        done.push(dir.clone());
        return Some(dir);
    }
    let tmp = dir.join(format!("nt_prelude.{}.tmp.gch", std::process::id()));
    let o = contain::run(
        &contain::Job::new(cxx)
            .args(flags)
            .args(["-x", "c++-header"])
            .arg(&hdr)
            .arg("-o")
            .arg(&tmp)
            .env("LC_ALL", "C")
            .env("TMPDIR", &dir)
            .current_dir(&dir)
            .stdout_cap(0)
            .stderr_cap(0)
            .limits(*limits),
    );
    if o.end != contain::End::Exited(0)
        || std::fs::rename(&tmp, &gch).is_err()
        || self::cache::seal(&gch).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(&gch);
        return None;
    }
    done.push(dir.clone());
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

/// Whether a compiler output line is an error message we may show: `file:line:col: error:`
/// (the compiler's own message about the translation unit; source lines are never quoted,
/// the compile runs with `-fno-diagnostics-show-caret`), a driver-level `tool: error:`, or a
/// linker's undefined reference. Assembler messages (they can quote a file an `asm(".include")`
/// read), quoted source lines and everything else are dropped.
fn shown_diag_line(l: &str) -> bool {
    if l.contains("undefined reference to") {
        return true;
    }
    let Some(p) = l.find(": error: ").or_else(|| l.find(": fatal error: ")) else {
        return false;
    };
    let head = &l[..p];
    if head.starts_with(char::is_whitespace) || head.is_empty() {
        return false;
    }
    let mut parts = head.rsplitn(3, ':');
    let col = parts.next().unwrap_or("");
    let line = parts.next().unwrap_or("");
    let numbered = !col.is_empty()
        && col.bytes().all(|c| c.is_ascii_digit())
        && !line.is_empty()
        && line.bytes().all(|c| c.is_ascii_digit());
    // A driver-level message: `c++: error: ...`, `cc1plus: error: ...`, `<command-line>: error:`.
    let tool = !head.contains('/') && !head.contains(':');
    numbered || tool
}

fn trim_diag(s: &str) -> String {
    let all = s.lines().count();
    let pick: Vec<&str> = s.lines().filter(|l| shown_diag_line(l)).take(8).collect();
    let mut lines: Vec<String> = pick
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
        .collect();
    if lines.is_empty() {
        lines.push(format!(
            "(the compiler printed {all} lines, none an error message that may be shown: source lines and assembler messages are never quoted)"
        ));
    }
    lines.join("\n")
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
        // `-I` folders: real folders, no system folder (also for library callers).
        let include_dirs = opts
            .include_dirs
            .iter()
            .map(|d| super::confine::check_include_dir(d))
            .collect::<Result<Vec<_>>>()?;
        let cxx = compiler();
        let ubsan = ubsan_available(&cxx);
        let text = driver_source(&rewrite::rewrite_source(source), entries);
        let mut flags = compile_flags(opts, ubsan, &include_dirs, is_clang(&version));
        let mut h = Sha256::new();
        h.update(text.as_bytes());
        h.update(prelude().as_bytes());
        h.update(flags.join("\u{1}").as_bytes());
        h.update(version.as_bytes());
        h.update(cxx.as_bytes());
        let key = crate::digest::hex(&h.finalize()[..16]);
        let cache = self::cache::dir()?;
        let exe = cache.join(format!("k-{key}"));
        let bin = |sha| HostBinary {
            exe: exe.clone(),
            sha,
            entries: entries.to_vec(),
            #[cfg(any(test, feature = "internals"))]
            ubsan,
            memory_mb: opts.memory_mb,
        };
        // A runner from an earlier run is used only when it hashes to what we recorded.
        if let Some(sha) = self::cache::verified(&exe) {
            return Ok(bin(sha));
        }
        let limits = contain::Limits {
            memory_mb: opts.compile_memory_mb,
            file_size_mb: 1024,
            ..contain::Limits::with_timeout(opts.compile_timeout)
        };
        let inc = fake_include_dir(&cache)?;
        flags.push(format!("-I{}", inc.display()));
        let dir = crate::fsio::scratch_dir("host")?;
        let cpp = dir.path().join("driver.cpp");
        let pch = precompiled_prelude(&cxx, &cache, &flags, &version, &limits);
        let body = match &pch {
            Some(_) => text.replacen(PRELUDE_MARK, "#include \"nt_prelude.h\"", 1),
            None => text.replacen(PRELUDE_MARK, &prelude(), 1),
        };
        if let Some(p) = &pch {
            flags.push(format!("-I{}", p.display()));
        }
        std::fs::write(&cpp, &body).map_err(|e| Error::io(ErrorClass::IoWrite, &cpp, e))?;
        let deps = dir.path().join("driver.d");
        let tmp_exe = cache.join(format!("k-{key}.{}.tmp", std::process::id()));
        let out = contain::run(
            &contain::Job::new(&cxx)
                .args(&flags)
                .arg("-MD")
                .arg("-MF")
                .arg(&deps)
                .arg("-o")
                .arg(&tmp_exe)
                .arg(&cpp)
                .env("LC_ALL", "C")
                .env("TMPDIR", dir.path())
                .current_dir(dir.path())
                .stdout_cap(64 << 10)
                .stderr_cap(256 << 10)
                .limits(limits),
        );
        let fail = |e: Error| {
            let _ = std::fs::remove_file(&tmp_exe);
            Err(e)
        };
        let diag = String::from_utf8_lossy(&out.stderr);
        if let Some(e) = compile_limit_hit(&out, &diag, &cxx, opts) {
            return fail(e);
        }
        // What the compiler read must lie where a kernel may include from; checked before
        // anything it printed is looked at.
        let mut allowed = system_include_dirs(&cxx, &flags);
        allowed.extend(include_dirs.iter().cloned());
        allowed.push(inc.clone());
        allowed.extend(pch.iter().cloned());
        if let Ok(d) = std::fs::canonicalize(dir.path()) {
            allowed.push(d);
        }
        let allowed: Vec<PathBuf> = allowed
            .into_iter()
            .filter_map(|a| std::fs::canonicalize(a).ok())
            .collect();
        if deps.exists() {
            if let Err(e) = check_deps(&deps, dir.path(), &allowed) {
                return fail(e);
            }
        } else if out.end == contain::End::Exited(0) {
            return fail(Error::new(
                ErrorClass::KernelInclude,
                cxx.clone(),
                "the compiler wrote no list of the files it read (-MD), so the runner is not used",
            ));
        }
        if out.end != contain::End::Exited(0) {
            return fail(Self::compile_error(&diag, source, entries));
        }
        if let Err(e) = std::fs::rename(&tmp_exe, &exe) {
            return fail(Error::io(ErrorClass::IoWrite, &exe, e));
        }
        self::cache::owner_only(&exe, 0o700)?;
        let sha = self::cache::seal(&exe)?;
        Ok(bin(sha))
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
    #[cfg(any(test, feature = "internals"))]
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
        // Each case's schedule and poison derive from (seed, case name), not its position in
        // the run, so `--case NAME` alone replays a failure exactly.
        let seeds: Vec<u64> = launches
            .iter()
            .map(|(case, _)| crate::rng::Rng::new(schedule_seed ^ name_hash(case)).next_u64())
            .collect();
        // Launches the runner can take; the others are answered now.
        let mut todo = Vec::new();
        for (i, (case, l)) in launches.iter().enumerate() {
            match validate(sig, case, l) {
                Ok(()) => todo.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let dir = match crate::fsio::scratch_dir("run") {
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

    /// Starts the runner on launch file `lf` from case `start`: contained, standard error to
    /// `errf`; why not, in words.
    fn start_runner(
        &self,
        dir: &crate::fsio::Scratch,
        lf: &Path,
        start: usize,
        errf: &Path,
        timeout: Duration,
    ) -> std::result::Result<contain::Running, String> {
        // Contained (a supervisor that kills every descendant, its own process group, an
        // address-space cap, a cap on file writes), standard error to `errf`. Nothing here
        // waits on a pipe a descendant could hold open: the loop below polls the child, and
        // the end kills every descendant (the pipe then closes) before the reader is joined.
        let _ = std::fs::remove_file(errf);
        let job = contain::Job::new(&self.exe)
            .arg(lf)
            .arg(start.to_string())
            .env(
                "UBSAN_OPTIONS",
                format!(
                    "exitcode={UBSAN_EXIT}:print_stacktrace=0:halt_on_error=1:report_error_type=1"
                ),
            )
            .current_dir(dir.path())
            .stderr_file(errf)
            .limits(contain::Limits {
                memory_mb: self.memory_mb,
                // One runner takes many cases; the watchdog bounds each.
                cpu_seconds: 0,
                file_size_mb: KERNEL_FILE_MB,
                ..contain::Limits::with_timeout(timeout)
            });
        contain::Running::spawn(&job).map_err(|e| format!("cannot start the kernel process: {e}"))
    }

    /// How the runner's end settles the run: the case it was in fails with the fault, timeout
    /// or exit that ended it; a runner that ended before its last case says why in `outcome`.
    #[allow(clippy::too_many_arguments)]
    fn classify_end<'l>(
        &self,
        outcome: &mut ChildOutcome,
        e: Progress,
        status: Option<contain::End>,
        errf: &Path,
        entry: &str,
        timeout: Duration,
        name_of: &dyn Fn(usize) -> String,
        launch_of: &dyn Fn(usize) -> &'l Launch,
        todo_len: usize,
    ) {
        if let Some(k) = e.current {
            let stderr = read_tail(errf, 64 * 1024);
            let l = launch_of(k);
            let empty = Vec::new();
            let m = e.maps.get(&k).unwrap_or(&empty);
            let err = match e.by {
            Some(Rec::Timeout) => Error::new(
                ErrorClass::KernelTimeout,
                name_of(k),
                format!(
                    "{entry} did not finish within {:.1} s (an endless loop, or a spin-wait no other thread ends)",
                    timeout.as_secs_f64()
                ),
            ),
            Some(Rec::Signal { sig, addr, write, thread, block, stack_overflow }) => {
                fault_error(entry, &name_of(k), l, m, sig, addr, write, thread, block, stack_overflow)
            }
            _ => exit_error(entry, &name_of(k), l, m, status, &stderr, self.memory_mb),
        };
            outcome.results.push((k, Err(err)));
            outcome.next = k + 1;
        } else if outcome.next < todo_len && status != Some(contain::End::Exited(0)) {
            outcome.why = format!(
                "exited with {} before case {}: {}",
                status.as_ref().map(end_text).unwrap_or_default(),
                name_of(outcome.next),
                read_tail(errf, 2000).trim()
            );
        } else if outcome.next < todo_len {
            outcome.why = "the runner ended early".into();
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run_child(
        &self,
        dir: &crate::fsio::Scratch,
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
        // The runner is started only when it still hashes to what was recorded when it was
        // built or checked (the cache is private, and this is checked anyway).
        if let Err(e) = self::cache::check_before_exec(&self.exe, &self.sha) {
            outcome.why = e.to_string();
            return outcome;
        }
        let mut child = match self.start_runner(dir, lf, start, &errf, timeout) {
            Ok(c) => c,
            Err(why) => {
                outcome.why = why;
                return outcome;
            }
        };
        let Some(stdout) = child.take_stdout() else {
            outcome.why = "the kernel process has no stdout pipe (it is spawned piped)".into();
            return outcome;
        };
        let max_run = launches
            .iter()
            .flat_map(|(_, l)| l.args.iter())
            .map(|a| match a {
                LaunchArg::Out { bytes, .. } => *bytes,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        let (tx, rx) = mpsc::channel::<Rec>();
        let reader = std::thread::spawn(move || read_records(stdout, tx, max_run));
        let mut p = Progress::default();
        let watchdog = timeout + Duration::from_secs(3);
        let mut last = Instant::now();
        let name_of = |k: usize| launches[todo[k]].0.clone();
        let launch_of = |k: usize| &launches[todo[k]].1;
        let sched_name = |k: usize, r: usize| match r {
            0 => "forward".to_string(),
            1 => "reverse".to_string(),
            _ => format!("random:{}", seeds[todo[k]]),
        };
        let mut exited_at: Option<Instant> = None;
        let mut checked = Instant::now();
        loop {
            let left = watchdog.saturating_sub(last.elapsed());
            // Polled, so a descendant holding the pipe open cannot keep this waiting: once
            // the runner has exited, the rest of its tree is killed (the pipe then ends).
            // Looked at every 20 ms, not per record (thousands per run).
            if exited_at.is_none()
                && checked.elapsed() >= Duration::from_millis(20)
                && child.try_wait().is_some()
            {
                exited_at = Some(Instant::now());
                child.kill_all();
            }
            if checked.elapsed() >= Duration::from_millis(20) {
                checked = Instant::now();
            }
            match rx.recv_timeout(left.clamp(Duration::from_millis(1), Duration::from_millis(50))) {
                Ok(Rec::Eof) => break,
                Ok(rec) => {
                    last = Instant::now();
                    p.take(rec, &mut outcome, entry, &name_of, &launch_of, &sched_name);
                }
                Err(mpsc::RecvTimeoutError::Timeout) if last.elapsed() < watchdog => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // The child's own alarm did not fire (or it is stuck in the kernel with
                    // signals blocked): the watchdog ends it and everything it started.
                    child.kill_all();
                    let k = p.current.unwrap_or(outcome.next);
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
                    p.current = None;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        // The runner closed its output: give it a moment to exit by itself (its status tells
        // a crash from a clean end), then end whatever is left of its tree.
        if exited_at.is_none() {
            // Returns the moment its supervisor exits (its report pipe closes), at most 2 s.
            let _ = child.wait(Instant::now() + Duration::from_secs(2));
        }
        let end = child.try_wait();
        child.kill_all();
        let status = end.or_else(|| child.try_wait());
        let _ = reader.join();
        self.classify_end(
            &mut outcome,
            p,
            status,
            &errf,
            entry,
            timeout,
            &name_of,
            &launch_of,
            todo.len(),
        );
        let _ = std::fs::remove_file(&errf);
        outcome
    }
}

/// The error a runner finding names (initcheck, weak visibility, guard band, poison,
/// deadlock); `None` for any other record.
fn diagnosis<'l>(
    entry: &str,
    name_of: &dyn Fn(usize) -> String,
    launch_of: &dyn Fn(usize) -> &'l Launch,
    sched_name: &dyn Fn(usize, usize) -> String,
    rec: Rec,
) -> Option<Error> {
    Some(match rec {
        Rec::Uninit { case, ndiff, first } => {
            uninit_error(entry, &name_of(case), launch_of(case), ndiff, first)
        }
        Rec::Weak { case, ndiff, first } => {
            weak_error(entry, &name_of(case), launch_of(case), ndiff, first)
        }
        Rec::Guard {
            case,
            arg,
            run,
            nbefore,
            fbefore,
            nafter,
            fafter,
        } => guard_error(
            entry,
            &name_of(case),
            launch_of(case),
            arg,
            &sched_name(case, run),
            nbefore,
            fbefore,
            nafter,
            fafter,
        ),
        Rec::Poison(k, arg, where_) => poison_error(entry, &name_of(k), launch_of(k), arg, &where_),
        Rec::Deadlock(k, text) => {
            let what = if text.starts_with("synccheck:") {
                "fails the sync check"
            } else {
                "deadlocks"
            };
            Error::new(
                ErrorClass::KernelDeadlock,
                name_of(k),
                format!("{entry} {what}: {text}"),
            )
        }
        _ => return None,
    })
}

/// What the runner has reported: the case it is in, that case's schedule runs, first finding
/// and static bytes written, the buffer placements of its cases, and the record that ended it.
#[derive(Default)]
struct Progress {
    current: Option<usize>,
    runs: Vec<ScheduleRun>,
    case_err: Option<Error>,
    statics: u64,
    maps: BTreeMap<usize, Vec<BufMap>>,
    by: Option<Rec>,
}

impl Progress {
    /// Takes one record of the runner; a finished case goes to `outcome`.
    fn take<'l>(
        &mut self,
        rec: Rec,
        outcome: &mut ChildOutcome,
        entry: &str,
        name_of: &dyn Fn(usize) -> String,
        launch_of: &dyn Fn(usize) -> &'l Launch,
        sched_name: &dyn Fn(usize, usize) -> String,
    ) {
        match rec {
            Rec::Begin(k) => {
                self.current = Some(k);
                self.runs.clear();
                self.case_err = None;
                self.statics = 0;
            }
            Rec::Statics(n) => self.statics = n,
            Rec::Map(k, m) => {
                // A later placement of the same buffer replaces the earlier one.
                let v = self.maps.entry(k).or_default();
                v.retain(|o| o.arg != m.arg);
                v.push(m);
            }
            Rec::Run(k, r, bytes) => self.runs.push(ScheduleRun {
                schedule: sched_name(k, r),
                out: bytes,
            }),
            // The first finding of a case is its error; a deadlock replaces it.
            r @ (Rec::Uninit { .. } | Rec::Weak { .. } | Rec::Guard { .. } | Rec::Poison(..)) => {
                if self.case_err.is_none() {
                    self.case_err = diagnosis(entry, name_of, launch_of, sched_name, r);
                }
            }
            r @ Rec::Deadlock(..) => {
                self.case_err = diagnosis(entry, name_of, launch_of, sched_name, r);
            }
            Rec::Done(k) => {
                let r = match self.case_err.take() {
                    Some(e) => Err(e),
                    None if self.runs.is_empty() => Err(Error::new(
                        ErrorClass::KernelCrash,
                        name_of(k),
                        "the runner reported no output for this case",
                    )),
                    None => Ok(Runs {
                        runs: std::mem::take(&mut self.runs),
                        static_bytes_written: self.statics,
                    }),
                };
                outcome.results.push((k, r));
                outcome.next = k + 1;
                self.current = None;
            }
            r @ (Rec::Signal { .. } | Rec::Timeout) => {
                self.by = Some(r);
            }
            Rec::Eof => {}
        }
    }
}

struct ChildOutcome {
    results: Vec<(usize, Result<Runs>)>,
    /// The first case the next child should start at.
    next: usize,
    why: String,
}

/// The host compiler's flags for a kernel: the spec's, the shim's, the arch, UBSan's alignment
/// check where the compiler has it, the -D definitions and the checked -I folders.
/// Whether the host compiler is clang, from the first line of its `--version`.
fn is_clang(version: &str) -> bool {
    version.contains("clang version")
}

fn compile_flags(
    opts: &HostOptions,
    ubsan: bool,
    include_dirs: &[PathBuf],
    clang: bool,
) -> Vec<String> {
    let mut flags: Vec<String> = crate::spec::get().kernels.host.flags.clone();
    // Diagnostics never quote source lines (the compiler would read them back from whatever
    // file a `#line` names): GCC's spelling, or clang's (which refuses GCC's).
    let no_quote = if clang {
        "-fno-caret-diagnostics"
    } else {
        "-fno-diagnostics-show-caret"
    };
    flags.extend(
        [
            "-fno-threadsafe-statics",
            "-fno-strict-aliasing",
            no_quote,
            "-fdiagnostics-color=never",
        ]
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
    for d in include_dirs {
        flags.push(format!("-I{}", d.display()));
    }
    flags
}

/// The error of a host compile that hit a limit (time, memory, a signal) or could not start;
/// `None` when it ran to its end.
fn compile_limit_hit(
    out: &contain::Outcome,
    diag: &str,
    cxx: &str,
    opts: &HostOptions,
) -> Option<Error> {
    let limit_hit = |what: String| {
        Error::new(
            ErrorClass::KernelCompileLimit,
            cxx.to_string(),
            format!("the host compiler {what}; the kernel is not run (a compile bomb: a constexpr or template loop, a huge or endless include)"),
        )
    };
    match &out.end {
        contain::End::TimedOut => {
            return Some(limit_hit(format!(
                "did not finish within {} s (--compile-timeout)",
                opts.compile_timeout.as_secs_f64()
            )))
        }
        contain::End::SpawnFailed(e) => {
            return Some(Error::new(
                ErrorClass::KernelTierUnavailable,
                cxx.to_string(),
                e.clone(),
            ))
        }
        contain::End::Signaled(sig) => {
            return Some(limit_hit(format!(
                "was killed by signal {sig} (limits: {} MiB of memory, --compile-memory-mb)",
                opts.compile_memory_mb
            )))
        }
        contain::End::Exited(_) => {}
    }
    let out_of_memory = [
        "out of memory",
        "virtual memory exhausted",
        "Cannot allocate memory",
        "Killed signal terminated program",
        "std::bad_alloc",
    ];
    if out.end != contain::End::Exited(0) && out_of_memory.iter().any(|m| diag.contains(m)) {
        return Some(limit_hit(format!(
            "ran out of its {} MiB of memory (--compile-memory-mb)",
            opts.compile_memory_mb
        )));
    }
    None
}

/// FNV-1a of a case name (its schedule seed's share).
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
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
            LaunchArg::In { .. }
                | LaunchArg::Sparse { .. }
                | LaunchArg::Out { .. }
                | LaunchArg::Scratch { .. }
        );
        if ptr != is_buf {
            return bad(format!("argument {a:?} passed to a parameter of type {t}"));
        }
        if let LaunchArg::Sparse { name, len, runs } = a {
            let mut end = 0usize;
            for (off, b) in runs {
                if *off < end || off.saturating_add(b.len()) > *len {
                    return bad(format!(
                        "sparse input `{name}`: a run at byte {off} ({} bytes) overlaps the previous one or passes its length {len}",
                        b.len()
                    ));
                }
                end = off + b.len();
            }
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
                LaunchArg::Sparse { len, runs, .. } => {
                    put(&mut b, 6);
                    put(&mut b, *len as u64);
                    put(&mut b, runs.len() as u64);
                    for (off, bytes) in runs {
                        put(&mut b, *off as u64);
                        put(&mut b, bytes.len() as u64);
                        b.extend_from_slice(bytes);
                        b.resize(b.len().div_ceil(8) * 8, 0);
                    }
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
    /// Bytes of static storage the forward run changed (of the case `Begin` opened).
    Statics(u64),
    /// initcheck: output bytes that changed with the shared-memory poison alone.
    Uninit {
        case: usize,
        ndiff: u64,
        first: u64,
    },
    /// Weak visibility: output bytes that changed when plain global writes became visible
    /// to other blocks only at `__threadfence`.
    Weak {
        case: usize,
        ndiff: u64,
        first: u64,
    },
    /// A fault signal in the case `Begin` opened.
    Signal {
        sig: i32,
        addr: u64,
        write: u8,
        thread: i64,
        block: [u32; 3],
        stack_overflow: bool,
    },
    /// The runner's own alarm ended the case `Begin` opened.
    Timeout,
    Done(usize),
    Eof,
}

/// The longest protocol line kept (a longer one, e.g. a kernel's own printing, is cut).
const MAX_LINE: u64 = 64 << 10;

/// Reads the runner's records. Bounded: a line is cut at [`MAX_LINE`], an output run longer
/// than the largest Out buffer of the launches (`max_run`) ends the stream.
fn read_records(out: std::process::ChildStdout, tx: mpsc::Sender<Rec>, max_run: usize) {
    let mut r = BufReader::with_capacity(1 << 16, out);
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match (&mut r).take(MAX_LINE).read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if raw.last() != Some(&b'\n') {
            // Cut: skip the rest of the line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match (&mut r).take(MAX_LINE).read_until(b'\n', &mut sink) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sink.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
        }
        let line = String::from_utf8_lossy(&raw);
        let l = line.trim_end_matches('\n');
        let mut w = l.split(' ');
        let tag = w.next().unwrap_or("");
        let mut num = || w.next().and_then(|t| t.parse::<u64>().ok()).unwrap_or(0);
        let rec = match tag {
            "B" => Rec::Begin(num() as usize),
            "D" => Rec::Done(num() as usize),
            // The case index the runner repeats here is the one `B` opened.
            "T" => Rec::Timeout,
            "R" => {
                let case = num() as usize;
                let run = num() as usize;
                let n = num() as usize;
                if n > max_run {
                    break;
                }
                let mut bytes = vec![0u8; n];
                if r.read_exact(&mut bytes).is_err() {
                    break;
                }
                Rec::Run(case, run, bytes)
            }
            "W" => {
                let _case = num();
                Rec::Statics(num())
            }
            "U" => {
                let case = num() as usize;
                Rec::Uninit {
                    case,
                    ndiff: num(),
                    first: num(),
                }
            }
            "V" => {
                let case = num() as usize;
                Rec::Weak {
                    case,
                    ndiff: num(),
                    first: num(),
                }
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
            | LaunchArg::Sparse { name, .. }
            | LaunchArg::Out { name, .. }
            | LaunchArg::Scratch { name, .. },
        ) => name.clone(),
        _ => format!("#{arg}"),
    }
}

fn arg_role(l: &Launch, arg: usize) -> &'static str {
    match l.args.get(arg) {
        Some(LaunchArg::In { .. } | LaunchArg::Sparse { .. }) => "input",
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

/// What changed in a sanitizer rerun: `ndiff` bytes of the output (the first at byte
/// `first`), or, when no output byte differs, `no_bytes` (the run stopped meeting barriers).
fn rerun_difference(l: &Launch, ndiff: u64, first: u64, no_bytes: &str) -> String {
    let out = l
        .args
        .iter()
        .find_map(|a| match a {
            LaunchArg::Out { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .unwrap_or("y");
    if ndiff == 0 {
        no_bytes.to_string()
    } else {
        format!(
            "{ndiff} bytes of `{out}` differ, the first at byte {first} (element {} of 4-byte values)",
            first / 4
        )
    }
}

/// initcheck's report: the forward schedule's output changed when only the initial contents
/// of shared memory changed.
fn uninit_error(entry: &str, case: &str, l: &Launch, ndiff: u64, first: u64) -> Error {
    let what = rerun_difference(
        l,
        ndiff,
        first,
        "its threads no longer meet at their barriers (control flow on uninitialised data)",
    );
    Error::new(
        ErrorClass::KernelNondeterministic,
        case,
        format!(
            "{entry} reads shared memory it never wrote (initcheck): under one and the same forward schedule, the run changes when only the initial contents of shared memory change (0xc3 bytes, then 0xff: NaN as f32/f16/bf16, -1 as integers): {what} -- an uninitialised __shared__ read (0 x uninitialised included), not a race: every schedule agreed"
        ),
    )
}

/// The weak-visibility report: the output changed when a block's plain global writes
/// reached other blocks only at its `__threadfence()` (or the kernel's end).
fn weak_error(entry: &str, case: &str, l: &Launch, ndiff: u64, first: u64) -> Error {
    let what = rerun_difference(
        l,
        ndiff,
        first,
        "its threads no longer meet at their barriers",
    );
    Error::new(
        ErrorClass::KernelNondeterministic,
        case,
        format!(
            "{entry} reads global memory another block wrote before that block made it visible (missing __threadfence()): under the weak-visibility schedule (blocks in order; a block's plain global writes reach other blocks only at its __threadfence() or the kernel's end, atomics at once) {what} -- a block that hands results to another through an atomic (a split-K counter whose last block sums the partials) needs __threadfence() between its writes and that atomic; every other schedule agreed"
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
            if let Some(LaunchArg::Sparse { len, runs, .. }) = m.arg.and_then(|a| l.args.get(a)) {
                return sparse_fault(entry, case, &name, *len, runs, m.base, addr, &who);
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

/// A read of a sparse table outside its real rows: in the window where a row offset wrapped
/// to a signed 32-bit value lands, or in a page none of the gathered rows holds.
#[allow(clippy::too_many_arguments)]
fn sparse_fault(
    entry: &str,
    case: &str,
    name: &str,
    len: usize,
    runs: &[(usize, Vec<u8>)],
    base: u64,
    addr: u64,
    who: &str,
) -> Error {
    let real: Vec<String> = runs
        .iter()
        .take(8)
        .map(|(o, b)| format!("{o}..{}", o + b.len()))
        .collect();
    // Runs of one length are table rows: a byte is named by its row too.
    let row_len = runs.first().map_or(0, |(_, b)| b.len());
    let row_of = |byte: i128| {
        if row_len > 0 && runs.iter().all(|(_, b)| b.len() == row_len) {
            format!(" (row {} of {row_len}-byte rows)", byte / row_len as i128)
        } else {
            String::new()
        }
    };
    let detail = if addr < base {
        let wrapped = addr as i128 - base as i128 + (1i128 << 32);
        if (0..len as i128).contains(&wrapped) {
            format!(
                "{entry} read input `{name}` {} bytes before its start: byte {wrapped} of `{name}`{} (len {len}) wrapped to a signed 32-bit offset -- a row offset computed in 32-bit int overflows past 2^31 bytes (compute it in 64 bits), {who}",
                base - addr,
                row_of(wrapped)
            )
        } else {
            format!(
                "{entry} read input `{name}` {} bytes before its start (len {len}): a guard, {who}",
                base - addr
            )
        }
    } else {
        format!(
            "{entry} read input `{name}` at byte {}{} (len {len}), where none of the rows the case gathers lies (a wrong row: real bytes only at {}), {who}",
            addr - base,
            row_of((addr - base) as i128),
            real.join(", ")
        )
    };
    Error::new(ErrorClass::KernelOutOfBoundsRead, case, detail)
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
    status: Option<contain::End>,
    stderr: &str,
    memory_mb: u64,
) -> Error {
    if status == Some(contain::End::Exited(UBSAN_EXIT)) || stderr.contains("misaligned address") {
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
        Some(contain::End::Signaled(6)) => "aborted (assert, __trap or abort)".to_string(),
        Some(e) => end_text(&e),
        None => "ended".to_string(),
    };
    let oom = ["bad_alloc", "out of memory", "Cannot allocate memory"]
        .iter()
        .any(|m| stderr.contains(m));
    Error::new(
        ErrorClass::KernelCrash,
        case,
        format!(
            "{entry} {how} while running this case{}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            },
            if oom {
                format!(
                    " (the kernel process may use {memory_mb} MiB of address space: --memory-mb)"
                )
            } else {
                String::new()
            }
        ),
    )
}

fn end_text(e: &contain::End) -> String {
    match e {
        contain::End::Exited(c) => format!("exited with code {c}"),
        contain::End::Signaled(s) => format!("was killed by signal {s}"),
        contain::End::TimedOut => "ran out of time".into(),
        contain::End::SpawnFailed(w) => format!("did not start ({w})"),
    }
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
