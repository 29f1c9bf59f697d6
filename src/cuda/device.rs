//! The device tier: NVRTC PTX loaded and launched on a real GPU through cudarc, with the same
//! cases, launch geometry, guard bands and acceptance as the host tier. Every entry point is
//! guarded: no driver library, no NVRTC or no device is `kernel.tier_unavailable` (SKIPPED),
//! never a panic and never a pass.

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};

use super::abi::{KernelClass, Launch, LaunchArg};
use super::cases::KernelCase;
use super::host::{Runs, ScheduleRun};
use super::kernel_abi::KernelAbi;
use super::CaseResult;
use crate::error::{Error, ErrorClass, Result};

fn unavailable(why: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelTierUnavailable, "device", why)
}

fn drv(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorClass::KernelCrash, what, format!("CUDA driver: {e}"))
}

/// The number of devices, or why the device tier cannot run here.
pub fn available() -> Result<usize> {
    // SAFETY: these only try to dlopen the libraries; cudarc panics if used without them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(unavailable(
            "no CUDA driver library (libcuda.so): no GPU driver installed",
        ));
    }
    super::nvrtc::available()?;
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(_) => Err(unavailable("the CUDA driver reports no device")),
        Err(e) => Err(unavailable(format!(
            "the CUDA driver reports no usable device: {e}"
        ))),
    }
}

/// Compiles `source` with NVRTC and runs one launch of `entry` on device 0; returns the f32
/// output with its guard bands checked and stripped (used by `dump-reference --device cuda`).
pub fn launch_once(source: &str, entry: &str, class: KernelClass, l: &Launch) -> Result<Vec<f32>> {
    let sig: Vec<String> = class.spec().args.iter().map(|a| a.ty.clone()).collect();
    let (stream, func) = load(source, entry, &sig)?;
    let out = launch(&stream, &func, entry, l)?;
    Ok(out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// One launch: uploads the inputs, a guarded output (and guarded scratch), pushes the
/// arguments in parameter order; returns the output bytes after checking its guards.
fn launch(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    func: &cudarc::driver::CudaFunction,
    what: &str,
    l: &Launch,
) -> Result<Vec<u8>> {
    const GUARD: usize = 1024;
    const PAT: u8 = 0xa5;
    // The f32 guard pattern 0x7fa5a5a5, little-endian, repeated byte by byte.
    const OUT_PAT: [u8; 4] = [0xa5, 0xa5, 0xa5, 0x7f];
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    let mut i32s = Vec::new();
    let mut i64s = Vec::new();
    let mut f32s = Vec::new();
    for a in &l.args {
        match a {
            LaunchArg::In { bytes, .. } => ins.push((
                stream
                    .clone_htod(if bytes.is_empty() { &[0u8][..] } else { bytes })
                    .map_err(|e| drv(what, e))?,
                0,
            )),
            LaunchArg::Sparse { name, len, runs } => {
                ins.push(sparse_table(stream, what, name, *len, runs)?)
            }
            LaunchArg::Out { bytes, .. } => {
                let host: Vec<u8> = (0..bytes + 2 * GUARD).map(|i| OUT_PAT[i % 4]).collect();
                outs.push((
                    true,
                    *bytes,
                    stream.clone_htod(&host).map_err(|e| drv(what, e))?,
                ));
            }
            LaunchArg::Scratch { bytes, .. } => {
                let mut host = vec![PAT; bytes + 2 * GUARD];
                host[GUARD..GUARD + bytes].fill(0);
                outs.push((
                    false,
                    *bytes,
                    stream.clone_htod(&host).map_err(|e| drv(what, e))?,
                ));
            }
            LaunchArg::I32(v) => i32s.push(*v),
            LaunchArg::I64(v) => i64s.push(*v),
            LaunchArg::F32(v) => f32s.push(*v),
        }
    }
    {
        // Inputs as the kernel sees them: a sparse table from past its wrap pad.
        let in_views: Vec<_> = ins.iter().map(|(b, at)| b.slice(*at..)).collect();
        let mut views: Vec<_> = outs
            .iter_mut()
            .map(|(_, n, buf)| buf.slice_mut(GUARD..GUARD + *n))
            .collect();
        let mut views_it = views.iter_mut();
        let (mut ii, mut i3, mut i6, mut f3) = (0, 0, 0, 0);
        let mut b = stream.launch_builder(func);
        for a in &l.args {
            match a {
                LaunchArg::In { .. } | LaunchArg::Sparse { .. } => {
                    b.arg(&in_views[ii]);
                    ii += 1;
                }
                LaunchArg::Out { .. } | LaunchArg::Scratch { .. } => {
                    if let Some(v) = views_it.next() {
                        b.arg(v);
                    }
                }
                LaunchArg::I32(_) => {
                    b.arg(&i32s[i3]);
                    i3 += 1;
                }
                LaunchArg::I64(_) => {
                    b.arg(&i64s[i6]);
                    i6 += 1;
                }
                LaunchArg::F32(_) => {
                    b.arg(&f32s[f3]);
                    f3 += 1;
                }
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (l.grid[0], l.grid[1], l.grid[2]),
            block_dim: (l.block[0], l.block[1], l.block[2]),
            shared_mem_bytes: l.dyn_shared,
        };
        // SAFETY: the argument list follows the ABI (checked against the PTX by the caller);
        // every buffer is sized by the launch rule.
        unsafe { b.launch(cfg) }.map_err(|e| drv(what, e))?;
    }
    stream.synchronize().map_err(|e| drv(what, e))?;
    let mut result = Vec::new();
    for (is_out, n, buf) in &outs {
        let host: Vec<u8> = stream.clone_dtoh(buf).map_err(|e| drv(what, e))?;
        let (lo, rest) = host.split_at(GUARD);
        let (body, hi) = rest.split_at(*n);
        let fresh = |i: usize| if *is_out { OUT_PAT[i % 4] } else { PAT };
        for (side, band, base) in [("before", lo, 0usize), ("after", hi, GUARD + n)] {
            if let Some(i) = band
                .iter()
                .enumerate()
                .position(|(j, b)| *b != fresh(base + j))
            {
                return Err(Error::new(
                    ErrorClass::KernelOutOfBounds,
                    what,
                    format!("the kernel wrote {side} its {} ({n} bytes): guard byte {i} of {GUARD} changed", if *is_out { "output" } else { "scratch buffer" }),
                ));
            }
        }
        if *is_out {
            result = body.to_vec();
        }
    }
    Ok(result)
}

/// A sparse input on the GPU: the whole table allocated once in device memory (zeros), its real
/// rows copied in; no host buffer of its length exists. A table past 2^31 bytes gets 2^31 zero
/// bytes before it, where every row offset wrapped to a signed 32-bit value lands: such a
/// kernel reads zeros there (a mismatch) instead of an illegal address, which would poison the
/// context every later launch shares. Unlike the host tier, a row the case does not hold also
/// reads as zeros. A device that cannot hold the table skips the case, saying why. Returns the
/// buffer and the table's offset in it.
fn sparse_table(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    what: &str,
    name: &str,
    len: usize,
    runs: &[(usize, Vec<u8>)],
) -> Result<(cudarc::driver::CudaSlice<u8>, usize)> {
    let pad = if len > 1 << 31 { 1usize << 31 } else { 0 };
    let mut buf = stream.alloc_zeros::<u8>(pad + len.max(1)).map_err(|e| {
        Error::new(
            ErrorClass::KernelUnsupported,
            what,
            format!("sparse input `{name}` ({len} bytes) does not fit in device memory: {e}"),
        )
    })?;
    for (off, bytes) in runs {
        let mut view = buf
            .try_slice_mut(pad + off..(pad + off).saturating_add(bytes.len()))
            .ok_or_else(|| {
                Error::new(
                    ErrorClass::KernelCase,
                    what,
                    format!("sparse input `{name}`: a run at byte {off} passes its length {len}"),
                )
            })?;
        stream
            .memcpy_htod(&bytes[..], &mut view)
            .map_err(|e| drv(what, e))?;
    }
    Ok((buf, pad))
}

/// Compiles `source` with NVRTC, checks the entry's parameter list and loads it on GPU 0.
fn load(
    source: &str,
    entry: &str,
    sig: &[String],
) -> Result<(
    std::sync::Arc<cudarc::driver::CudaStream>,
    cudarc::driver::CudaFunction,
)> {
    available()?;
    let ptx = super::nvrtc::compile(source, None)?;
    super::nvrtc::check_entry(&ptx.to_src(), entry, sig)?;
    let ctx = CudaContext::new(0).map_err(|e| drv("context", e))?;
    let stream = ctx.default_stream();
    let module = ctx.load_module(ptx).map_err(|e| drv("load_module", e))?;
    let func = module.load_function(entry).map_err(|e| {
        Error::new(
            ErrorClass::KernelEntryMissing,
            entry,
            format!("CUDA driver: {e}"),
        )
    })?;
    Ok((stream, func))
}

/// Runs `entry` of `source` on the GPU over `cases` under `abi` and judges each output (one
/// schedule: the hardware's).
pub fn run(
    source: &str,
    entry: &str,
    abi: &KernelAbi,
    cases: &[KernelCase],
) -> Result<Vec<CaseResult>> {
    let (stream, func) = load(source, entry, &abi.sig())?;
    let mut results = Vec::new();
    for c in cases {
        let e = super::expected::expected(c, abi.precision)?;
        let l = abi.launch(c, &e)?;
        let raw = launch(&stream, &func, &c.name, &l).map(|out| Runs {
            runs: vec![ScheduleRun {
                schedule: "device".into(),
                out,
            }],
            static_bytes_written: 0,
        });
        results.push(super::check::evaluate(c, &e, raw));
    }
    Ok(results)
}
