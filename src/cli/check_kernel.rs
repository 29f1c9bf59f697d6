//! `check-kernel`: runs a third-party (or a shipped) CUDA kernel over the kernel cases of its
//! class at one tier and reports pass/fail per case, like `check-reader`.
//! Exit 0: every case passed. 1: a case failed, or the kernel does not compile / lacks the
//! entry / has the wrong signature. 2: usage or environment error, or a kernel the tier cannot
//! emulate (`kernel.unsupported`) — SKIPPED, never passed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cuda::{self, Tier};

/// The command's options.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Kernel source (.cu); `#include "x"` is resolved next to the including file, then in the
    /// -I folders, then (bare names only) among the built-in headers.
    #[arg(long)]
    pub source: Option<PathBuf>,
    /// extern "C" __global__ entry point (or `entry` of the --abi file).
    #[arg(long)]
    pub entry: Option<String>,
    /// dequantize, get_rows, mul_mat_vec, mul_mat_vec_planes, mul_mat, hadamard_rotate, mul_mat_planes.
    #[arg(long)]
    pub class: Option<String>,
    /// Case format (needed when the class has several).
    #[arg(long)]
    pub format: Option<String>,
    /// ABI sidecar JSON: the kernel's own launch (grid/block/shared as expressions of the case
    /// dims), parameter list (bindings + C types) and precision (spec/kernels.json `sidecar`).
    #[arg(long)]
    pub abi: Option<PathBuf>,
    /// Precision mode: f32 (default), f16-in, bf16-in, q8_1-in, i8g32-in, i8g32h-in, f16-out, bf16-out, or
    /// combinations joined by '+' (e.g. bf16-in+bf16-out). Overrides the --abi file's.
    #[arg(long)]
    pub precision: Option<String>,
    /// Include folder for `#include "..."` (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Preprocessor definition NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "DEF")]
    pub define: Vec<String>,
    /// Extra NVRTC option for the compile and device tiers (repeatable, e.g. -default-device).
    #[arg(long = "nvrtc-option", value_name = "OPT", allow_hyphen_values = true)]
    pub nvrtc_option: Vec<String>,
    /// Architecture: NVRTC's for --tier compile (default: every arch of spec/kernels.json); the
    /// value of __CUDA_ARCH__ for --tier host (default: every arch when the source branches on
    /// __CUDA_ARCH__, else the first).
    #[arg(long)]
    pub arch: Option<String>,
    /// host (C++ compiler + CPU shim), compile (NVRTC), device (GPU).
    #[arg(long, default_value = "host")]
    pub tier: String,
    /// Write the report as JSON to this path ('-': standard output); schema
    /// spec/schemas/check-kernel-report.schema.json.
    #[arg(long, value_name = "PATH|-")]
    pub json: Option<PathBuf>,
    /// Replace an existing --json or --markdown file.
    #[arg(long)]
    pub force: bool,
    /// Per-case timeout in seconds (host tier; 1 to 86400).
    #[arg(long, value_parser = super::parse_timeout_whole)]
    pub timeout: Option<u64>,
    /// Wall-clock limit of one host-tier compile, in seconds (default 120).
    #[arg(long, value_name = "SECONDS")]
    pub compile_timeout: Option<u64>,
    /// Address-space cap of the host compiler in MiB (default 4096; 0: none).
    #[arg(long, value_name = "MIB")]
    pub compile_memory_mb: Option<u64>,
    /// Address-space cap of the host-tier kernel process in MiB (default 4096; 0: none).
    #[arg(long, value_name = "MIB")]
    pub memory_mb: Option<u64>,
    /// Check every shipped kernel instead: references and correct-but-unusual kernels pass,
    /// wrong variants are caught with their expected verdict.
    #[arg(long)]
    pub builtin: bool,
    /// Only these builtin kernels (entry names, repeatable).
    #[arg(long = "only", value_name = "ENTRY")]
    pub only: Vec<String>,
    /// Run N random cases per format (shapes and data drawn as test-backend-ops does) instead
    /// of the fixed cases, except the real-model-scale ones (k >= 5120, vocabulary tables),
    /// which still run; a failure names the case to replay with the same --seed.
    #[arg(long, value_name = "N")]
    pub random: Option<usize>,
    /// Seed of --random and of the random thread schedule.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only cases whose name contains this text (repeatable: any of them).
    #[arg(long = "case", value_name = "TEXT")]
    pub case: Vec<String>,
    /// Only hadamard_rotate cases of this block size B.
    #[arg(long)]
    pub block: Option<u64>,
    /// With --builtin: write the verdict table (Markdown) to this path.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

impl Args {
    /// The suite's options: the arguments as parsed, the tier checked.
    fn options(&self) -> crate::Result<cuda::Options> {
        Ok(cuda::Options {
            source: self.source.clone(),
            entry: self.entry.clone(),
            class: self.class.clone(),
            format: self.format.clone(),
            abi: self.abi.clone(),
            precision: self.precision.clone(),
            include: self.include.clone(),
            define: self.define.clone(),
            nvrtc_option: self.nvrtc_option.clone(),
            arch: self.arch.clone(),
            tier: Tier::parse(&self.tier)?,
            timeout: self.timeout,
            compile_timeout: self.compile_timeout,
            compile_memory_mb: self.compile_memory_mb,
            memory_mb: self.memory_mb,
            builtin: self.builtin,
            only: self.only.clone(),
            random: self.random,
            seed: self.seed,
            case: self.case.clone(),
            block: self.block,
            markdown: self.markdown.is_some(),
        })
    }
}

/// Parses the arguments, claims the output files, hands the run to [`cuda::run`] (the one
/// call into the suite) with a sink that prints each line as it comes, then writes the report.
pub fn run(a: Args) -> crate::Result<ExitCode> {
    let options = a.options()?;
    // The report file is claimed before any work (an existing one needs --force; never an input).
    let inputs: Vec<&Path> = a
        .source
        .iter()
        .chain(a.abi.iter())
        .map(|p| p.as_path())
        .collect();
    super::json_out::JsonTarget::claim(a.json.as_deref(), a.force, &inputs)?;
    // --markdown is claimed the same way (--force replaces an existing table).
    if let Some(md) = &a.markdown {
        crate::fsio::claim_output(md, crate::fsio::OutputKind::File, a.force, &inputs)?;
    }
    // With `--json -` the report owns standard output; the human lines go to standard error.
    let json_to_stdout = a.json.as_deref() == Some(Path::new("-"));
    let report = cuda::run(&options, &mut |line| {
        if json_to_stdout {
            eprintln!("{line}")
        } else {
            println!("{line}")
        }
    })?;
    if let (Some(md), Some(table)) = (&a.markdown, &report.markdown) {
        crate::fsio::write_bytes_atomic(md, table.as_bytes())?;
    }
    if let (Some(p), Some(v)) = (a.json.as_deref(), report.json) {
        // Claimed above; written atomically, with the report header.
        super::json_out::JsonTarget::parse(p).write("check-kernel-report", v)?;
    }
    Ok(ExitCode::from(report.code))
}

/// The demo's kernel step (host tier; the device tier too where a GPU is present): the
/// reference PTQ1_0 dequantize kernel passes, the sequential-trit wrong variant fails.
pub fn demo_step() -> crate::Result<bool> {
    cuda::driver::demo_step(&mut |line| println!("{line}"))
}

/// `dump-reference --device cuda`: the same dumps, every output computed by the reference
/// kernels on the GPU. Without a usable GPU nothing is written and the command says SKIPPED
/// (exit 2): host dumps are never passed off as device ones.
pub fn dump_reference_device(
    artifact: &Path,
    output: &Path,
    tokens: Option<&str>,
    seed: u64,
    force: bool,
) -> crate::Result<ExitCode> {
    #[cfg(feature = "cuda")]
    {
        if let Err(e) = cuda::device::available() {
            println!(
                "SKIPPED: dump-reference --device cuda cannot run here: {}",
                cuda::driver::esc(&e)
            );
            return Ok(ExitCode::from(2));
        }
        // The host writer lays out manifests and inputs; the device then rewrites the outputs.
        let code = super::verify_cmd::dump_reference(super::verify_cmd::DumpReferenceArgs {
            artifact: artifact.to_path_buf(),
            output: output.to_path_buf(),
            tokens: tokens.map(str::to_string),
            seed,
            format: crate::verify::DumpFormat::Native,
            force,
            device: "host".into(),
            gguf: None,
        })?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
        let artifact_map = crate::fsio::map_file(artifact)?;
        let a = crate::ninfer::Artifact::parse(&artifact_map)?;
        let n = cuda::dumps::rewrite_on_device(&a, output)?;
        println!("device: {n} dump files recomputed by the reference CUDA kernels on GPU 0 (hadamard_rotate, dequantize, mul_mat_vec_planes)");
        Ok(ExitCode::SUCCESS)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (artifact, output, tokens, seed, force);
        println!("SKIPPED: dump-reference --device cuda needs a binary built with --features cuda and a GPU");
        Ok(ExitCode::from(2))
    }
}
