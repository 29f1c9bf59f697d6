//! The device tier: NVRTC PTX loaded and launched on a real GPU through cudarc, with the same
//! cases, launch geometry, guard bands and acceptance as the host tier. Every entry point is
//! guarded: no driver library, no NVRTC or no device is `kernel.tier_unavailable` (SKIPPED),
//! never a panic and never a pass.

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};

use super::abi::{ArgKind, KernelClass};
use super::cases::KernelCase;
use super::{judge_output, CaseResult};
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

/// Compiles `source` with NVRTC and runs one launch of `entry` on device 0; returns the output
/// with its guard bands checked and stripped (used by `dump-reference --device cuda`).
pub fn launch_once(
    source: &str,
    entry: &str,
    class: KernelClass,
    l: &super::abi::Launch,
) -> Result<Vec<f32>> {
    let (stream, func) = load(source, entry, class)?;
    let buf = launch(&stream, &func, class, entry, l)?;
    Ok(super::judge::strip_guards(entry, &buf, l.out_elems)?.to_vec())
}

/// One launch: uploads the inputs, a guarded output, pushes the arguments in ABI order.
fn launch(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    func: &cudarc::driver::CudaFunction,
    class: KernelClass,
    what: &str,
    l: &super::abi::Launch,
) -> Result<Vec<f32>> {
    let g = &crate::spec::get().kernels.guard;
    let kinds = class.arg_kinds();
    let inputs = l
        .inputs
        .iter()
        .map(|b| stream.clone_htod(if b.is_empty() { &[0u8][..] } else { b }))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| drv(what, e))?;
    let total = l.out_elems + 2 * g.elems;
    let mut buf = stream
        .clone_htod(&vec![g.sentinel(); total])
        .map_err(|e| drv(what, e))?;
    let i32s: Vec<i32> = l.scalars.iter().map(|&v| v as i32).collect();
    let i64s: Vec<i64> = l.scalars.clone();
    {
        let mut out = buf.slice_mut(g.elems..g.elems + l.out_elems);
        // The ABI has exactly one output (tested); the Option makes that visible to borrowck.
        let mut out_slot = Some(&mut out);
        let mut b = stream.launch_builder(func);
        let (mut ii, mut si) = (0, 0);
        for k in &kinds {
            match k {
                ArgKind::Input => {
                    b.arg(&inputs[ii]);
                    ii += 1;
                }
                ArgKind::Output => {
                    if let Some(o) = out_slot.take() {
                        b.arg(o);
                    }
                }
                ArgKind::I32 => {
                    b.arg(&i32s[si]);
                    si += 1;
                }
                ArgKind::I64 => {
                    b.arg(&i64s[si]);
                    si += 1;
                }
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (l.grid[0], l.grid[1], l.grid[2]),
            block_dim: (l.block[0], l.block[1], l.block[2]),
            shared_mem_bytes: 0,
        };
        // SAFETY: the argument list follows the class ABI (checked against the PTX by the
        // caller); every buffer is sized by the launch rule.
        unsafe { b.launch(cfg) }.map_err(|e| drv(what, e))?;
    }
    stream.synchronize().map_err(|e| drv(what, e))?;
    let bits: Vec<u32> = stream.clone_dtoh(&buf).map_err(|e| drv(what, e))?;
    Ok(bits.into_iter().map(f32::from_bits).collect())
}

/// Compiles `source`, loads `entry` and runs every case on device 0.
/// Compiles `source` with NVRTC, checks the entry's ABI and loads it on GPU 0.
fn load(
    source: &str,
    entry: &str,
    class: KernelClass,
) -> Result<(
    std::sync::Arc<cudarc::driver::CudaStream>,
    cudarc::driver::CudaFunction,
)> {
    available()?;
    let ptx = super::nvrtc::compile(source, None)?;
    super::nvrtc::check_entry(&ptx.to_src(), entry, class)?;
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

/// Runs `entry` of `source` on the GPU over `cases` and judges each output.
pub fn run(
    source: &str,
    entry: &str,
    class: KernelClass,
    cases: &[KernelCase],
) -> Result<Vec<CaseResult>> {
    let (stream, func) = load(source, entry, class)?;
    let mut results = Vec::new();
    for c in cases {
        let l = c.launch()?;
        let raw = launch(&stream, &func, class, &c.name, &l);
        results.push(judge_output(c, raw, l.out_elems));
    }
    Ok(results)
}
