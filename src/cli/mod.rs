//! The `ninfer-ternary` command line. Each subcommand lives in its own module; all of them
//! return `anyhow::Result`. Every error is printed as `error: [class] ...` and its exit code
//! comes from the class ([`classify`], [`exit_code`]; 1 is reserved for "checked and failed").

use crate::codec::TernaryType;
use crate::error::ErrorClass;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod bench_cmd;
pub(crate) mod check_kernel;
mod corpus_cmd;
mod decode;
mod demo;
mod inspect;
mod inspect_gguf;
pub(crate) mod json_out;
mod pack_cmd;
mod spec_cmd;
/// Standard-output failures: quiet on a closed pipe, `io.stdout` otherwise.
pub mod stdout;
mod synth_cmd;
mod transcode;
mod verify_cmd;

#[derive(Parser)]
#[command(
    name = "ninfer-ternary",
    version,
    about = "Conformance suite for PrismML ternary GGUF models and the .ninfer v2 container"
)]
/// The parsed command line: one subcommand.
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Show a GGUF or .ninfer file: header, metadata, tensors/objects, geometry, fork warnings.
    Inspect {
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// GGUF reading mode: spec (the GGUF document) or strict (mainline llama.cpp rules).
        #[arg(long, value_enum, default_value_t = crate::gguf::Mode::Strict)]
        mode: crate::gguf::Mode,
    },
    /// Decode a GGUF tensor or a .ninfer object to an f32 .npy in logical row order.
    Decode {
        file: PathBuf,
        /// Tensor or object name.
        name: String,
        /// Row range A:B (either side may be empty).
        #[arg(long)]
        rows: Option<String>,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        force: bool,
        /// GGUF type 42: auto (from the file; an undecidable tensor is read as g64 and said so), g64 (mainline Q2_0), g128 (legacy Prism).
        #[arg(long, value_enum, ignore_case = true, default_value_t = decode::Id42Layout::Auto)]
        id42: decode::Id42Layout,
    },
    /// Lossless GGUF fixes: PTQ1_0 <-> PQ2_0 (--to) or legacy id 42 -> 142 (--retag-42).
    Transcode {
        input: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        /// Target ternary type: pq2_0 or ptq1_0 (or a table alias: pq2, q2_0_g128, 142, ...).
        #[arg(long, value_enum, ignore_case = true)]
        to: Option<TernaryType>,
        /// Retag legacy Prism id 42 (34 B/128 blocks) to 142, header only.
        #[arg(long = "retag-42")]
        retag_42: bool,
        #[arg(long)]
        force: bool,
    },
    /// Write a synthetic Bonsai-shaped qwen35 GGUF for a model profile.
    Synth {
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        /// pq2_0 or ptq1_0 (or a table alias: pq2, q2_0_g128, 142, ...).
        #[arg(long, value_enum, ignore_case = true, default_value_t = TernaryType::Pq2_0)]
        format: TernaryType,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Only these layers (comma-separated): a reduced test model of the profile's shape.
        #[arg(long)]
        layers: Option<String>,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        force: bool,
    },
    /// Write the GGUF that scripts/oracle_gguf_py.py decodes with gguf-py (TQ1_0, TQ2_0, Q8_0, F16, BF16, F32).
    OracleGguf {
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        force: bool,
    },
    /// Pack a ternary GGUF into a folded-ternary .ninfer, mapped onto a groupwise-int template.
    Pack(pack_cmd::PackArgs),
    /// Losslessness proof: rebuild every ternary GGUF tensor from the artifact and compare.
    Unpack {
        artifact: PathBuf,
        /// The source GGUF the artifact was packed from.
        #[arg(long)]
        gguf: PathBuf,
        /// Also write the rebuilt ternary tensors (with the source metadata) as a GGUF.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[arg(long)]
        force: bool,
    },
    /// The main job on built-in data: synthesize nano models (PQ2_0, PTQ1_0) and a template,
    /// pack both, prove the round trip. No downloads.
    Demo {
        #[arg(long, default_value = "out/demo")]
        dir: PathBuf,
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Single-thread decode throughput on a deterministic slab GGUF (for the gguf-py comparison).
    BenchDecode {
        #[arg(long, default_value_t = 4096)]
        rows: u64,
        #[arg(long, default_value_t = 5120)]
        cols: u64,
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Write the slabs as a GGUF for a peer reader to time on the same bytes.
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Print the spec tables (spec/*.json) as Markdown; --write/--check the generated regions of spec/*.md.
    Spec {
        /// One table (e.g. geometry, formats); all when absent.
        table: Option<String>,
        /// Re-render every generated region of spec/*.md from the tables, in place.
        #[arg(long, conflicts_with = "check")]
        write: bool,
        /// Fail (exit 1) when a generated region of spec/*.md differs from the tables.
        #[arg(long)]
        check: bool,
        /// The spec directory (default: spec).
        #[arg(long, default_value = "spec")]
        dir: PathBuf,
    },
    /// The conformance corpus: generate (or --check) conformance/, render the interop matrix.
    Corpus {
        #[command(subcommand)]
        action: corpus_cmd::CorpusAction,
    },
    /// Run every corpus case through a reader adapter (one process per case, or one persistent
    /// process per job when its capabilities say "persistent": true; PROTOCOL.md).
    CheckReader {
        /// Adapter command; the case file is appended as its last argument, the request JSON is on stdin.
        #[arg(long)]
        adapter: String,
        #[arg(long, default_value = "conformance")]
        corpus: PathBuf,
        /// Case ids expected to fail (one per line); a listed case that passes fails the run.
        #[arg(long)]
        known_failures: Option<PathBuf>,
        /// JSON: {"reader", "error_classes": "strict"|"lenient", "unsupported": [feature globs]}.
        #[arg(long)]
        capabilities: Option<PathBuf>,
        /// Only case ids matching this glob.
        #[arg(long)]
        filter: Option<String>,
        /// Write the per-case results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Seconds per case.
        #[arg(long, default_value_t = 20.0)]
        timeout: f64,
        /// Address-space cap per adapter process (MiB; 0 = none).
        #[arg(long, default_value_t = 4096)]
        memory_mb: u64,
        /// Parallel adapter processes (default: available CPUs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Print only failures and the summary.
        #[arg(long)]
        quiet: bool,
        /// One process per case even if the capabilities declare "persistent": true.
        #[arg(long)]
        per_case: bool,
    },
    /// The reference reader adapter: answer one corpus case (request JSON on stdin), or with
    /// --persistent serve request lines on stdin until EOF (PROTOCOL.md §4.6).
    ReaderAdapter {
        #[arg(required_unless_present = "persistent")]
        file: Option<PathBuf>,
        /// Persistent mode: a handshake line, then one answer line per request line.
        #[arg(long, conflicts_with = "file")]
        persistent: bool,
        /// Read the request from this file instead of stdin.
        #[arg(long)]
        request: Option<PathBuf>,
    },
    /// Verify a packed artifact against its source GGUF: the ten gates of spec/verifier.md#gates.
    /// Exit 0 pass, 1 fail, 2 usage/IO error.
    Verify {
        artifact: PathBuf,
        /// The source GGUF the artifact was packed from (required; never defaulted).
        #[arg(long)]
        gguf: PathBuf,
        /// The groupwise-int template (opens the provenance gate).
        #[arg(long)]
        template: Option<PathBuf>,
        /// Run the row-order sections over every layer of the profile.
        #[arg(long)]
        sweep: bool,
        /// The model profile by name (reduced GGUFs whose hparams do not identify it).
        #[arg(long)]
        profile: Option<String>,
        /// Embedding activation dump: a native directory or the engine's dump file (opens the embedding gate).
        #[arg(long)]
        dump: Option<PathBuf>,
        /// engine (the engine's bf16 embedding dump file) or native (manifest directory); default by file/directory.
        #[arg(long = "dump-format", value_enum)]
        dump_format: Option<crate::verify::DumpFormat>,
        /// Kernel-oracle dump directory (opens the engine_oracles gate).
        #[arg(long = "oracle-dump")]
        oracle_dump: Option<PathBuf>,
        /// Check only the oracle cases of this artifact object.
        #[arg(long = "oracle-object")]
        oracle_object: Option<String>,
        /// Machine-readable report.
        #[arg(long)]
        json: bool,
    },
    /// Write a broken artifact (or broken dumps) of one kind from spec/gates.json `mutations`.
    Mutate {
        artifact: PathBuf,
        #[arg(long)]
        kind: String,
        /// Output artifact (or, for dump-* kinds, output dump directory).
        #[arg(short, long)]
        output: PathBuf,
        /// Seed of the dump inputs (dump-* kinds).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long)]
        force: bool,
    },
    /// Write reference embedding and kernel-oracle dumps computed from an artifact (f64, stored f32).
    DumpReference {
        artifact: PathBuf,
        /// Output directory (gets embedding/ and oracles/).
        #[arg(short, long)]
        output: PathBuf,
        /// Comma-separated token ids for the embedding dump (default: 8 spread over the vocabulary).
        #[arg(long)]
        tokens: Option<String>,
        /// Seed of the oracle inputs x.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// native (embedding/ + oracles/ directories) or engine (the engine's bf16 embedding dump file DIR/embedding.T<N>.bin).
        #[arg(long, value_enum, default_value_t = crate::verify::DumpFormat::Native)]
        format: crate::verify::DumpFormat,
        #[arg(long)]
        force: bool,
        /// host: f64 math on the CPU; cuda: the reference CUDA kernels on the GPU (feature `cuda`).
        #[arg(long, default_value = "host")]
        device: String,
    },
    /// Run a CUDA kernel over the kernel cases of its class (spec/kernels.json, conformance/KERNELS.md).
    /// Exit 0 all pass, 1 failures (or no compile / no entry / wrong signature), 2 usage or environment.
    CheckKernel(check_kernel::Args),
    /// Write the synthetic groupwise-int template for a model profile.
    SynthTemplate {
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> ExitCode {
    stdout::install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refuse_arguments(e),
    };
    let result = match cli.command {
        Command::Inspect { file, json, mode } => inspect::run(&file, json, mode),
        Command::Decode {
            file,
            name,
            rows,
            output,
            force,
            id42,
        } => decode::run(&file, &name, rows.as_deref(), &output, force, id42),
        Command::Transcode {
            input,
            output,
            to,
            retag_42,
            force,
        } => transcode::run(&input, &output, to, retag_42, force),
        Command::Synth {
            profile,
            format,
            seed,
            layers,
            output,
            force,
        } => synth_cmd::model(&profile, format, seed, layers.as_deref(), &output, force),
        Command::OracleGguf {
            seed,
            output,
            force,
        } => synth_cmd::oracle(seed, &output, force),
        Command::Pack(args) => pack_cmd::pack(args),
        Command::Unpack {
            artifact,
            gguf,
            output,
            force,
        } => pack_cmd::unpack(&artifact, &gguf, output.as_deref(), force),
        Command::Demo { dir, profile, seed } => demo::demo(&dir, &profile, seed),
        Command::BenchDecode {
            rows,
            cols,
            repeat,
            write,
        } => bench_cmd::run(rows, cols, repeat, write.as_deref()),
        Command::Spec {
            table,
            write,
            check,
            dir,
        } => {
            if write || check {
                spec_cmd::docs(&dir, write)
            } else {
                spec_cmd::run(table.as_deref())
            }
        }
        Command::Corpus { action } => corpus_cmd::corpus(action),
        Command::CheckReader {
            adapter,
            corpus,
            known_failures,
            capabilities,
            filter,
            json,
            timeout,
            memory_mb,
            jobs,
            quiet,
            per_case,
        } => corpus_cmd::check_reader(
            &corpus,
            &adapter,
            known_failures.as_deref(),
            capabilities.as_deref(),
            filter.as_deref(),
            json.as_deref(),
            timeout,
            memory_mb,
            jobs,
            quiet,
            per_case,
        ),
        Command::ReaderAdapter {
            file,
            request,
            persistent,
        } => corpus_cmd::reader_adapter(file.as_deref(), request.as_deref(), persistent),
        Command::CheckKernel(args) => check_kernel::run(args),
        Command::SynthTemplate {
            profile,
            output,
            force,
        } => synth_cmd::template(&profile, &output, force),
        Command::Verify {
            artifact,
            gguf,
            template,
            sweep,
            profile,
            dump,
            dump_format,
            oracle_dump,
            oracle_object,
            json,
        } => verify_cmd::verify(
            &artifact,
            &gguf,
            template.as_deref(),
            sweep,
            profile.as_deref(),
            dump.as_deref(),
            dump_format,
            oracle_dump.as_deref(),
            oracle_object.as_deref(),
            json,
        ),
        Command::Mutate {
            artifact,
            kind,
            output,
            seed,
            force,
        } => verify_cmd::mutate(&artifact, &kind, &output, seed, force),
        Command::DumpReference {
            artifact,
            output,
            tokens,
            seed,
            format,
            force,
            device,
        } => match device.as_str() {
            "host" => verify_cmd::dump_reference(
                &artifact,
                &output,
                tokens.as_deref(),
                seed,
                format,
                force,
            ),
            // The device rewrite recomputes the native dump files; engine/harness files are
            // written by the host path only.
            "cuda" if format != crate::verify::DumpFormat::Native => Err(anyhow::anyhow!(
                "--device cuda writes the native dump format only (got --format {format})"
            )),
            "cuda" => check_kernel::dump_reference_device(
                &artifact,
                &output,
                tokens.as_deref(),
                seed,
                force,
            ),
            d => Err(anyhow::anyhow!("--device {d}: one of host, cuda")),
        },
    };
    let result = result.and_then(|code| {
        // Rust flushes stdout at exit and ignores a failure there; flush here to report it.
        use std::io::Write;
        match std::io::stdout().flush() {
            Err(e) if !stdout::is_epipe(&e) => Err(stdout::error(&e).into()),
            _ => Ok(code),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            let (class, message) = classify(&e);
            eprintln!("error: {}", crate::text::escape(&message));
            exit_code(class)
        }
    }
}

/// Reports a command line clap could not parse (unknown flag, missing argument, a value outside
/// a `ValueEnum` such as `--format q4`) as `error: [cli.usage] ...`, exit 2, like every other
/// usage error; `--help` and `--version` print as clap prints them.
fn refuse_arguments(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text
        .trim_end()
        .strip_prefix("error: ")
        .unwrap_or(text.trim_end());
    let lines: Vec<String> = text
        .lines()
        .map(|l| crate::text::escape(l).into_owned())
        .collect();
    eprintln!("error: [{}] {}", ErrorClass::CliUsage, lines.join("\n"));
    exit_code(ErrorClass::CliUsage)
}

/// The class of a command's error: the crate error's own class anywhere in the chain;
/// otherwise an I/O error (every input is read through [`crate::fsio`], which classes its
/// errors, so an unclassed one is a write) or a command-line problem. Returns the class and
/// the message that starts with `[class]`.
pub fn classify(e: &anyhow::Error) -> (ErrorClass, String) {
    let full = format!("{e:#}");
    // A crate error turned into text (`anyhow!("{e}")`) still starts with its `[class]`.
    let leading = full
        .strip_prefix('[')
        .and_then(|r| r.split_once("] "))
        .and_then(|(id, _)| ErrorClass::from_id(id));
    let class = e
        .chain()
        .find_map(|c| c.downcast_ref::<crate::error::Error>().map(|x| x.class))
        .or(leading)
        .or_else(|| {
            e.chain()
                .any(|c| c.is::<std::io::Error>())
                .then_some(ErrorClass::IoWrite)
        })
        .unwrap_or(ErrorClass::CliUsage);
    let tag = format!("[{class}] ");
    let message = if full.starts_with(&tag) {
        full
    } else {
        // Context added around a classed error: name the class once, up front.
        format!("{tag}{}", full.replacen(&tag, "", 1))
    };
    (class, message)
}

/// The exit code of an error of `class`. Every class is a usage, input, output or
/// environment error and exits 2 (README "Exit codes"); 1 is reserved for "a check ran and
/// failed", which commands return as a value, not as an error.
pub fn exit_code(class: ErrorClass) -> ExitCode {
    let _ = class;
    ExitCode::from(2)
}

/// Claims a single-file output before any work: an existing file needs `force`, a FIFO,
/// device or directory is never replaced, and none of the command's `inputs` (by device and
/// inode) may be the output ([`crate::fsio::claim_output`]).
pub(crate) fn check_output(
    path: &std::path::Path,
    force: bool,
    inputs: &[&std::path::Path],
) -> anyhow::Result<()> {
    crate::fsio::claim_output(path, crate::fsio::OutputKind::File, force, inputs)?;
    Ok(())
}

/// [`check_output`] for commands whose output is a directory of files.
pub(crate) fn check_output_dir(
    path: &std::path::Path,
    force: bool,
    inputs: &[&std::path::Path],
) -> anyhow::Result<()> {
    crate::fsio::claim_output(path, crate::fsio::OutputKind::Directory, force, inputs)?;
    Ok(())
}

/// Looks up a model profile by name with a helpful error.
pub(crate) fn profile(name: &str) -> anyhow::Result<crate::spec::ModelProfile> {
    crate::spec::profile(name).ok_or_else(|| {
        let names: Vec<&str> = crate::spec::PROFILES.iter().map(|(n, _)| *n).collect();
        anyhow::anyhow!("unknown profile '{name}' (known: {})", names.join(", "))
    })
}

/// A byte progress bar on a terminal; hidden when stderr is not a TTY.
pub(crate) fn progress_bar(total: u64, what: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(what.to_string());
    bar
}

#[cfg(test)]
mod classify_tests {
    use super::*;
    use crate::error::Error;
    use anyhow::Context;

    #[test]
    fn every_error_gets_a_class_and_names_it_once_up_front() {
        let plain = anyhow::anyhow!("--rows 5:2 is reversed");
        assert_eq!(
            classify(&plain),
            (
                ErrorClass::CliUsage,
                "[cli.usage] --rows 5:2 is reversed".into()
            )
        );
        let inner = Error::new(ErrorClass::GgufMagic, "header.magic", "not GGUF");
        let wrapped = Err::<(), _>(inner.clone())
            .context("dump file x")
            .unwrap_err();
        let (class, msg) = classify(&wrapped);
        assert_eq!(class, ErrorClass::GgufMagic);
        assert_eq!(msg, "[gguf.magic] dump file x: header.magic: not GGUF");
        let text = anyhow::anyhow!("{inner}");
        assert_eq!(classify(&text).0, ErrorClass::GgufMagic);
        let io = anyhow::Error::from(std::io::Error::other("disk full"));
        assert_eq!(classify(&io).0, ErrorClass::IoWrite);
        // Negative control: an unregistered bracketed word is not taken for a class.
        assert_eq!(
            classify(&anyhow::anyhow!("[not.a.class] x")).0,
            ErrorClass::CliUsage
        );
    }
}
