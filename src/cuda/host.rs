//! The host tier: a kernel source compiled by the host C++ compiler against the CUDA-on-CPU
//! shim (`kernels/host_shim.h`) into a small driver program, then run once per case in a
//! child process with a timeout (a hang or a crash is a classified error, never our panic).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::abi::{ArgKind, KernelClass, Launch};
use super::sources::HOST_SHIM;
use crate::error::{Error, ErrorClass, Result};

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

/// Marker the generated static_assert prints, so a signature mismatch is told apart.
const SIG_MARK: &str = "NINFER_SIGNATURE_MISMATCH";

/// The driver: shim, the user's (include-resolved) source, then a generated `main` that
/// checks the entry's type against the class ABI, reads a launch file and writes the output
/// with its guard bands.
fn driver_source(source: &str, entry: &str, class: KernelClass) -> String {
    let kinds = class.arg_kinds();
    let types: Vec<String> = class.spec().args.iter().map(|a| a.ty.clone()).collect();
    let (mut inp, mut sc) = (0, 0);
    let call: Vec<String> = kinds
        .iter()
        .zip(&types)
        .map(|(k, ty)| match k {
            ArgKind::Input => {
                inp += 1;
                format!("({ty})nt_in[{}]", inp - 1)
            }
            ArgKind::Output => "nt_out".to_string(),
            ArgKind::I32 | ArgKind::I64 => {
                sc += 1;
                format!("({ty})nt_sc[{}]", sc - 1)
            }
        })
        .collect();
    format!(
        r#"{HOST_SHIM}
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#line 1 "kernel-source"
{source}
#line 1 "ninfer-driver"
typedef void (*nt_signature)({sig});
static_assert(std::is_same<decltype(&{entry}), nt_signature>::value,
              "{SIG_MARK}: {entry} must be void {entry}({sig_named})");
static unsigned long long nt_u64(FILE* f) {{ unsigned long long v = 0; if (fread(&v, 8, 1, f) != 1) {{ fprintf(stderr, "launch file truncated\n"); exit(4); }} return v; }}
int main(int argc, char** argv) {{
    if (argc != 3) return 2;
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    nt_uint3 grid, block;
    grid.x = (unsigned)nt_u64(f); grid.y = (unsigned)nt_u64(f); grid.z = (unsigned)nt_u64(f);
    block.x = (unsigned)nt_u64(f); block.y = (unsigned)nt_u64(f); block.z = (unsigned)nt_u64(f);
    unsigned long long out_elems = nt_u64(f), guard = nt_u64(f), sentinel = nt_u64(f);
    unsigned long long ns = nt_u64(f);
    long long nt_sc[16] = {{0}};
    for (unsigned long long i = 0; i < ns && i < 16; ++i) nt_sc[i] = (long long)nt_u64(f);
    unsigned long long ni = nt_u64(f);
    void* nt_in[16] = {{0}};
    for (unsigned long long i = 0; i < ni && i < 16; ++i) {{
        unsigned long long len = nt_u64(f);
        nt_in[i] = malloc(len + 8);
        if (len && fread(nt_in[i], 1, len, f) != len) return 4;
        unsigned long long pad = (8 - len % 8) % 8; char junk[8];
        if (pad && fread(junk, 1, pad, f) != pad) return 4;
    }}
    fclose(f);
    size_t total = (size_t)(out_elems + 2 * guard);
    unsigned* buf = (unsigned*)malloc(total * 4 + 4);
    for (size_t i = 0; i < total; ++i) buf[i] = (unsigned)sentinel;
    float* nt_out = (float*)(buf + guard);
    nt_launch(grid, block, [&] {{ {entry}({call}); }});
    FILE* o = fopen(argv[2], "wb");
    if (!o || fwrite(buf, 4, total, o) != total) return 5;
    fclose(o);
    return 0;
}}
"#,
        sig = types.join(", "),
        sig_named = class.c_signature(),
        call = call.join(", "),
    )
}

/// A compiled host-tier kernel.
pub struct HostKernel {
    dir: TempDir,
    exe: PathBuf,
    /// The kernel's entry point.
    pub entry: String,
    /// The kernel's class (its ABI).
    pub class: KernelClass,
}

/// Sorts compiler diagnostics into the error classes.
fn classify(stderr: &str, entry: &str) -> ErrorClass {
    if stderr.contains(SIG_MARK) {
        ErrorClass::KernelSignature
    } else if stderr.lines().any(|l| {
        l.starts_with("ninfer-driver")
            && l.contains("error")
            && (l.contains(&format!("'{entry}'"))
                || l.contains(&format!("\u{2018}{entry}\u{2019}")))
    }) {
        ErrorClass::KernelEntryMissing
    } else {
        ErrorClass::KernelCompile
    }
}

fn trim_diag(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| l.contains("error")).take(6).collect();
    if lines.is_empty() {
        s.lines().take(6).collect::<Vec<_>>().join("\n")
    } else {
        lines.join("\n")
    }
}

impl HostKernel {
    /// Compiles `source` (includes already resolved) with entry `entry` under `class`'s ABI.
    pub fn compile(source: &str, entry: &str, class: KernelClass) -> Result<HostKernel> {
        available()?;
        let dir = TempDir::new("host")?;
        let cpp = dir.path().join("driver.cpp");
        std::fs::write(&cpp, driver_source(source, entry, class))
            .map_err(|e| Error::io(ErrorClass::IoWrite, &cpp, e))?;
        let exe = dir.path().join("kernel");
        let host = &crate::spec::get().kernels.host;
        let out = Command::new(compiler())
            .args(&host.flags)
            .arg("-o")
            .arg(&exe)
            .arg(&cpp)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                Error::new(ErrorClass::KernelTierUnavailable, compiler(), e.to_string())
            })?;
        if !out.status.success() {
            let diag = String::from_utf8_lossy(&out.stderr).to_string();
            let class_ = classify(&diag, entry);
            let what = match class_ {
                ErrorClass::KernelSignature => format!(
                    "entry {entry} does not have the {} ABI ({})",
                    class.name(),
                    class.c_signature()
                ),
                ErrorClass::KernelEntryMissing => {
                    format!("the source defines no entry point named {entry}")
                }
                _ => "the kernel source does not compile with the host C++ compiler".to_string(),
            };
            return Err(Error::new(
                class_,
                entry,
                format!("{what}:\n{}", trim_diag(&diag)),
            ));
        }
        Ok(HostKernel {
            dir,
            exe,
            entry: entry.into(),
            class,
        })
    }

    /// Runs one launch in a child process; returns the output buffer with its guard bands.
    pub fn run(&self, case: &str, launch: &Launch, timeout: Duration) -> Result<Vec<f32>> {
        let g = &crate::spec::get().kernels.guard;
        let lf = self.dir.path().join(format!("{case}.launch"));
        let of = self.dir.path().join(format!("{case}.out"));
        let mut b = Vec::new();
        let mut put = |v: u64| b.extend_from_slice(&v.to_le_bytes());
        for v in launch.grid.iter().chain(&launch.block) {
            put(*v as u64);
        }
        put(launch.out_elems as u64);
        put(g.elems as u64);
        put(g.sentinel() as u64);
        put(launch.scalars.len() as u64);
        for s in &launch.scalars {
            put(*s as u64);
        }
        put(launch.inputs.len() as u64);
        for inp in &launch.inputs {
            b.extend_from_slice(&(inp.len() as u64).to_le_bytes());
            b.extend_from_slice(inp);
            b.resize(b.len().div_ceil(8) * 8, 0);
        }
        std::fs::File::create(&lf)
            .and_then(|mut f| f.write_all(&b))
            .map_err(|e| Error::io(ErrorClass::IoWrite, &lf, e))?;
        let mut child = Command::new(&self.exe)
            .arg(&lf)
            .arg(&of)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                Error::new(
                    ErrorClass::KernelCrash,
                    case,
                    format!("cannot start the kernel process: {e}"),
                )
            })?;
        let t0 = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if t0.elapsed() > timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Error::new(
                        ErrorClass::KernelTimeout,
                        case,
                        format!("{} did not finish within {:.0} s (hang, a barrier not reached by every thread, or an endless loop)", self.entry, timeout.as_secs_f64()),
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(Error::new(ErrorClass::KernelCrash, case, e.to_string())),
            }
        };
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            let how = match status.signal() {
                Some(sig) => {
                    format!("killed by signal {sig} (e.g. 11 = an access far outside its buffers)")
                }
                None => format!("exited with {status}"),
            };
            return Err(Error::new(
                ErrorClass::KernelCrash,
                case,
                format!("{} {how} {}", self.entry, err.trim()),
            ));
        }
        let bytes = std::fs::read(&of).map_err(|e| Error::io(ErrorClass::IoRead, &of, e))?;
        let _ = std::fs::remove_file(&lf);
        let _ = std::fs::remove_file(&of);
        Ok(bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
}
