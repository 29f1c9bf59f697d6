//! The compile tier: NVRTC (loaded dynamically by cudarc; from scripts/setup-cuda.sh) compiles
//! a kernel source for a real arch without any GPU or driver, and the entry's PTX parameter
//! list is checked against the class ABI.

use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};

#[cfg(test)]
use super::abi::KernelClass;
use crate::error::{Error, ErrorClass, Result};

/// Whether libnvrtc can be opened (cudarc would panic on first use otherwise).
pub fn available() -> Result<()> {
    // SAFETY: only tries to dlopen the library by its known names.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::new(
            ErrorClass::KernelTierUnavailable,
            "nvrtc",
            "libnvrtc.so.13 not found: run scripts/setup-cuda.sh and put the folder it prints on LD_LIBRARY_PATH",
        ))
    }
}

/// `arch` as NVRTC wants it (a `'static` string: cudarc's option type).
fn static_arch(arch: &str) -> Result<&'static str> {
    crate::spec::get()
        .kernels
        .compile
        .archs
        .iter()
        .find(|a| a.as_str() == arch)
        .map(|a| a.as_str())
        .ok_or_else(|| {
            Error::new(
                ErrorClass::CliUsage,
                "--arch",
                format!("{arch}: not one of the spec's archs"),
            )
        })
}

/// Compiles to PTX for `arch` (None: NVRTC's default virtual arch, JIT-compiled by the driver).
pub fn compile(source: &str, arch: Option<&str>) -> Result<Ptx> {
    compile_with(source, arch, &[])
}

/// As [`compile`], with extra NVRTC options (e.g. `-default-device` for a source that also
/// holds unannotated host code, `-DNAME=V`).
pub fn compile_with(source: &str, arch: Option<&str>, extra: &[String]) -> Result<Ptx> {
    available()?;
    let arch = arch.map(static_arch).transpose()?;
    // NVRTC ships no CUDA headers; <cuda_fp16.h> / <cuda_bf16.h> come from the folder
    // scripts/setup-cuda.sh --include prints (the nvidia-cuda-runtime wheel of the same version).
    let mut options = extra.to_vec();
    if let Some(dir) = std::env::var_os("NINFER_CUDA_INCLUDE") {
        options.push(format!("--include-path={}", dir.to_string_lossy()));
    }
    let opts = CompileOptions {
        arch,
        options,
        ..Default::default()
    };
    compile_ptx_with_opts(source, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => Error::new(
            ErrorClass::KernelCompile,
            arch.unwrap_or("default arch"),
            format!(
                "NVRTC rejects the source:\n{}",
                log.to_string_lossy()
                    .lines()
                    .filter(|l| l.contains("error"))
                    .take(6)
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        ),
        other => Error::new(ErrorClass::KernelCompile, "nvrtc", other.to_string()),
    })
}

/// The PTX parameter types of `.entry name(...)`, or None when there is no such entry.
pub fn entry_params(ptx: &str, entry: &str) -> Option<Vec<String>> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let body = &ptx[start..];
    let end = body.find(')')?;
    Some(
        body[..end]
            .lines()
            .filter_map(|l| {
                let mut t = l.split_whitespace();
                (t.next() == Some(".param")).then(|| t.next().unwrap_or("").to_string())
            })
            .collect(),
    )
}

/// Compiles for `arch` and checks the entry exists with the parameter types of `sig`.
pub fn compile_checked(
    source: &str,
    entry: &str,
    sig: &[String],
    arch: &str,
    extra: &[String],
) -> Result<Ptx> {
    let ptx = compile_with(source, Some(arch), extra)?;
    check_entry(&ptx.to_src(), entry, sig)?;
    Ok(ptx)
}

/// The PTX parameter type of a C parameter type: pointers and 64-bit integers `.u64`, 32-bit
/// integers `.u32`, float `.f32`.
pub fn ptx_type(c: &str) -> &'static str {
    let c = c.trim();
    if c.ends_with('*')
        || matches!(
            c,
            "long long"
                | "unsigned long long"
                | "int64_t"
                | "uint64_t"
                | "size_t"
                | "long"
                | "const long long"
                | "const int64_t"
        )
    {
        ".u64"
    } else if c == "float" {
        ".f32"
    } else {
        ".u32"
    }
}

/// Checks that `entry` exists in `ptx` with the parameter list `sig` (C types).
pub fn check_entry(ptx: &str, entry: &str, sig: &[String]) -> Result<()> {
    let params = entry_params(ptx, entry).ok_or_else(|| {
        Error::new(
            ErrorClass::KernelEntryMissing,
            entry,
            "no `.entry` of this name in the PTX (is it extern \"C\" __global__?)",
        )
    })?;
    let want: Vec<&str> = sig.iter().map(|c| ptx_type(c)).collect();
    if params != want {
        return Err(Error::new(
            ErrorClass::KernelSignature,
            entry,
            format!(
                "PTX parameters {params:?}, the ABI needs {want:?} ({}); PTX carries sizes, the host tier checks the C types",
                sig.join(", ")
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_parameter_lists_are_read() {
        let ptx = ".visible .entry k(\n\t.param .u64 .ptr .align 1 k_param_0,\n\t.param .u64 k_param_1,\n\t.param .u32 k_param_2\n)\n{";
        assert_eq!(
            entry_params(ptx, "k").unwrap(),
            vec![".u64", ".u64", ".u32"]
        );
        let sig = |c: KernelClass| -> Vec<String> {
            c.spec().args.iter().map(|a| a.ty.clone()).collect()
        };
        assert!(check_entry(ptx, "k", &sig(KernelClass::Dequantize)).is_ok());
        assert_eq!(
            check_entry(ptx, "j", &sig(KernelClass::Dequantize))
                .unwrap_err()
                .class(),
            ErrorClass::KernelEntryMissing
        );
        assert_eq!(
            check_entry(ptx, "k", &sig(KernelClass::GetRows))
                .unwrap_err()
                .class(),
            ErrorClass::KernelSignature
        );
    }
}
