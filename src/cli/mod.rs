//! The `ninfer-ternary` command line. Each subcommand lives in its own module; all of them
//! return `crate::Result`. Every error is printed as `error: [class] ...` and its exit code
//! comes from the class (`classify`, `exit_code`; 1 is reserved for "checked and failed").

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
mod diff_cmd;
mod help;
mod inspect;
mod inspect_gguf;
pub(crate) mod json_out;
mod pack_cmd;
mod spec_cmd;
/// Standard-output failures: quiet on a closed pipe, `io.stdout` otherwise.
pub(crate) mod stdout;
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
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Show a GGUF or .ninfer file: header, metadata, tensors/objects, geometry, fork warnings.
    Inspect {
        /// The GGUF or .ninfer file to show.
        file: PathBuf,
        /// Write the report as JSON to PATH, or to standard output with `-` (typed values;
        /// schema spec/schemas/inspect-report.schema.json).
        #[arg(long, value_name = "PATH|-")]
        json: Option<PathBuf>,
        /// Replace an existing --json file.
        #[arg(long)]
        force: bool,
        /// GGUF reading mode: spec (the GGUF document) or strict (mainline llama.cpp rules).
        #[arg(long, value_enum, default_value_t = crate::gguf::Mode::Strict)]
        mode: crate::gguf::Mode,
    },
    /// Decode a GGUF tensor or a .ninfer object to an f32 .npy in logical row order.
    Decode {
        /// The GGUF or .ninfer file holding the tensor or object.
        file: PathBuf,
        /// Tensor or object name.
        name: String,
        /// Row range A:B (either side may be empty).
        #[arg(long)]
        rows: Option<String>,
        /// The .npy file to write (f32, logical row order).
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
        /// GGUF type 42: auto (from the file; an undecidable tensor is read as g64 and said so), g64 (mainline Q2_0), g128 (legacy Prism).
        #[arg(long, value_enum, ignore_case = true, default_value_t = decode::Id42Layout::Auto)]
        id42: decode::Id42Layout,
    },
    /// Lossless GGUF fixes: PTQ1_0 <-> PQ2_0 (--to) or legacy id 42 -> 142 (--retag-42).
    Transcode {
        /// The source GGUF.
        input: PathBuf,
        /// The GGUF to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Target ternary type: pq2_0 or ptq1_0 (or a table alias: pq2, q2_0_g128, 142, ...).
        #[arg(long, value_enum, ignore_case = true)]
        to: Option<TernaryType>,
        /// Retag legacy Prism id 42 (34 B/128 blocks) to 142, header only.
        #[arg(long = "retag-42")]
        retag_42: bool,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// Write a synthetic Bonsai-shaped qwen35 GGUF for a model profile.
    Synth {
        /// The model profile (spec/geometry.json profiles, e.g. bonsai-nano).
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        /// pq2_0 or ptq1_0 (or a table alias: pq2, q2_0_g128, 142, ...).
        #[arg(long, value_enum, ignore_case = true, default_value_t = TernaryType::Pq2_0)]
        format: TernaryType,
        /// Seed of the deterministic weights (same seed, same bytes).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Only these layers (comma-separated): a reduced test model of the profile's shape.
        #[arg(long)]
        layers: Option<String>,
        /// The GGUF to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// Write the GGUF that scripts/oracle_gguf_py.py decodes with gguf-py (TQ1_0, TQ2_0, Q8_0, F16, BF16, F32).
    OracleGguf {
        /// Seed of the deterministic values (same seed, same bytes).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The GGUF to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// Pack a ternary GGUF into a folded-ternary .ninfer, mapped onto a groupwise-int template.
    Pack(pack_cmd::PackArgs),
    /// Where two .ninfer files (or two GGUFs) differ: header, objects added/removed/reordered,
    /// per object the first differing byte as plane/row/group/element with both decoded values
    /// and their ULP distance, and a verdict. Exit 0 identical, 1 differ.
    Diff(diff_cmd::DiffArgs),
    /// Losslessness proof: rebuild every ternary GGUF tensor from the artifact and compare.
    Unpack {
        /// The packed .ninfer artifact.
        artifact: PathBuf,
        /// The source GGUF the artifact was packed from.
        #[arg(long)]
        gguf: PathBuf,
        /// Also write the rebuilt ternary tensors (with the source metadata) as a GGUF.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// The main job on built-in data: synthesize nano models (PQ2_0, PTQ1_0) and a template,
    /// pack both, prove the round trip. No downloads.
    Demo {
        /// The folder the demo writes its models, template and artifacts to.
        #[arg(long, default_value = "out/demo")]
        dir: PathBuf,
        /// The model profile (spec/geometry.json profiles).
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        /// Seed of the synthetic weights.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Replace an existing demo folder (one this tool wrote, or an empty one; a folder
        /// holding other files is never touched).
        #[arg(long)]
        force: bool,
    },
    /// Single-thread decode throughput on a deterministic slab GGUF (for the gguf-py comparison).
    BenchDecode {
        /// Rows of each slab.
        #[arg(long, default_value_t = 4096)]
        rows: u64,
        /// Columns of each slab: a positive multiple of 256, the largest block of the four
        /// formats (TQ1_0 and TQ2_0).
        #[arg(long, default_value_t = 5120, value_parser = bench_cmd::parse_cols)]
        cols: u64,
        /// Timed repetitions (the best is reported).
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
    CheckReader(corpus_cmd::CheckReaderArgs),
    /// The reference reader adapter: answer one corpus case (request JSON on stdin), or with
    /// --persistent serve request lines on stdin until EOF (PROTOCOL.md §4.6).
    ReaderAdapter {
        /// The corpus case file to answer for.
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
    /// Prints the verdict first, then one line per gate (--verbose: every check).
    /// Exit 0 pass, 1 fail, 2 usage/input/IO error.
    Verify(verify_cmd::VerifyArgs),
    /// Write a broken artifact (or broken dumps) of one kind from spec/gates.json `mutations`.
    Mutate(verify_cmd::MutateArgs),
    /// Write reference embedding and kernel-oracle dumps computed from an artifact (f64, stored f32).
    DumpReference(verify_cmd::DumpReferenceArgs),
    /// Run a CUDA kernel over the kernel cases of its class (spec/kernels.json, conformance/KERNELS.md).
    /// Exit 0 all pass, 1 failures (or no compile / no entry / wrong signature), 2 usage or environment.
    CheckKernel(check_kernel::Args),
    /// Write the synthetic groupwise-int template for a model profile.
    SynthTemplate {
        /// The model profile (spec/geometry.json profiles).
        #[arg(long, default_value = "bonsai-nano")]
        profile: String,
        /// Optional namespaces to add (comma-separated): `dflash2` (the speculative-decoding
        /// companion the public template carries).
        #[arg(long)]
        with: Option<String>,
        /// The template .ninfer to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
}

/// The command line as clap sees it (subcommands, arguments, help text), for tests and docs.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    help::decorate(Cli::command())
}

/// Every argument of `cmd` and its subcommands that shows no description in `--help`, as
/// `SUBCOMMAND PATH --long` (clap's own `--help` / `--version` left out).
pub fn undocumented_args(cmd: &clap::Command) -> Vec<String> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" || id == "version" || a.is_hide_set() {
                continue;
            }
            let described = a
                .get_help()
                .or(a.get_long_help())
                .is_some_and(|h| !h.to_string().trim().is_empty());
            if !described {
                let name = a
                    .get_long()
                    .map(|l| format!("--{l}"))
                    .unwrap_or_else(|| id.to_uppercase());
                out.push(format!("{path} {name}").trim().to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(cmd, "", &mut out);
    out
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> ExitCode {
    stdout::install_panic_hook();
    crate::fsio::install_process_guards();
    use clap::{CommandFactory, FromArgMatches};
    let parsed = help::decorate(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return refuse_arguments(e),
    };
    let report_on_error = cli.command.error_report_target();
    let result = match cli.command {
        Command::Inspect {
            file,
            json,
            force,
            mode,
        } => json_out::JsonTarget::claim(json.as_deref(), force, &[&file])
            .and_then(|target| inspect::run(&file, target.as_ref(), mode)),
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
        Command::Diff(args) => diff_cmd::run(args),
        Command::Unpack {
            artifact,
            gguf,
            output,
            force,
        } => pack_cmd::unpack(&artifact, &gguf, output.as_deref(), force),
        Command::Demo {
            dir,
            profile,
            seed,
            force,
        } => demo::demo(&dir, &profile, seed, force),
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
        Command::CheckReader(args) => corpus_cmd::check_reader(args),
        Command::ReaderAdapter {
            file,
            request,
            persistent,
        } => corpus_cmd::reader_adapter(file.as_deref(), request.as_deref(), persistent),
        Command::CheckKernel(args) => check_kernel::run(args),
        Command::SynthTemplate {
            profile,
            with,
            output,
            force,
        } => synth_cmd::template(&profile, with.as_deref(), &output, force),
        Command::Verify(args) => verify_cmd::verify(args),
        Command::Mutate(args) => verify_cmd::mutate(args),
        Command::DumpReference(args) => verify_cmd::dump_reference(args),
    };
    let result = result.and_then(|code| {
        // Rust flushes stdout at exit and ignores a failure there; flush here to report it.
        use std::io::Write;
        match std::io::stdout().flush() {
            Err(e) if !stdout::is_epipe(&e) => Err(stdout::error(&e)),
            _ => Ok(code),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            let (class, message) = classify(&e);
            eprintln!("error: {}", crate::text::escape(&message));
            if let Some(t) = report_on_error {
                t.write(class, Some(&e), &message);
            }
            exit_code(class)
        }
    }
}

impl Command {
    /// Where this command's `--json` report goes, recorded before it runs (for the error
    /// report of [`json_out::ErrorReportTarget`]).
    fn error_report_target(&self) -> Option<json_out::ErrorReportTarget> {
        use json_out::ErrorReportTarget as T;
        match self {
            Command::Inspect { json, .. } => T::record("inspect", json.as_deref()),
            Command::Verify(a) => T::record("verify", a.json.as_deref()),
            Command::Diff(a) => T::record("diff", a.json.as_deref()),
            Command::CheckKernel(a) => T::record("check-kernel", a.json.as_deref()),
            Command::CheckReader(a) => T::record("check-reader", a.json.as_deref()),
            _ => None,
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
    // A command line that asked for a JSON report still gets one (a CI step with a misspelled
    // flag gets a parseable error). Only the raw words are known here: the subcommand and the
    // word after `--json` (or `--json=`), if the subcommand writes reports.
    let words: Vec<String> = std::env::args().skip(1).collect();
    let command = words
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str);
    let json = words.iter().enumerate().find_map(|(i, w)| {
        w.strip_prefix("--json=")
            .map(str::to_string)
            .or_else(|| (w == "--json").then(|| words.get(i + 1).cloned()).flatten())
    });
    let named = command.and_then(|c| {
        ["inspect", "verify", "check-reader", "check-kernel"]
            .into_iter()
            .find(|k| *k == c)
    });
    if let (Some(c), Some(j)) = (named, json) {
        if let Some(t) = json_out::ErrorReportTarget::record(c, Some(std::path::Path::new(&j))) {
            t.write(
                ErrorClass::CliUsage,
                None,
                &format!("[{}] {}", ErrorClass::CliUsage, lines.join("\n")),
            );
        }
    }
    exit_code(ErrorClass::CliUsage)
}

/// The class of a command's error and the message printed for it (which starts with
/// `[class]`). Commands return [`crate::Result`], so every error carries the class its site
/// chose: a usage mistake `cli.usage`, a file problem an `io.*` class, and only a bug of this
/// tool `internal.invariant` (`tests/it/cli.rs` walks the commands' argument mistakes).
pub(crate) fn classify(e: &crate::Error) -> (ErrorClass, String) {
    (e.class(), e.to_string())
}

/// The exit code of an error of `class`. Every class is a usage, input, output or
/// environment error and exits 2 (README "Exit codes"); 1 is reserved for "a check ran and
/// failed", which commands return as a value, not as an error.
pub(crate) fn exit_code(class: ErrorClass) -> ExitCode {
    ExitCode::from(class.exit_code())
}

/// Claims a single-file output before any work: an existing file needs `force`, a FIFO,
/// device or directory is never replaced, and none of the command's `inputs` (by device and
/// inode) may be the output ([`crate::fsio::claim_output`]).
pub(crate) fn check_output(
    path: &std::path::Path,
    force: bool,
    inputs: &[&std::path::Path],
) -> crate::Result<()> {
    crate::fsio::claim_output(path, crate::fsio::OutputKind::File, force, inputs)?;
    Ok(())
}

/// [`check_output`] for commands whose output is a directory of files.
pub(crate) fn check_output_dir(
    path: &std::path::Path,
    force: bool,
    inputs: &[&std::path::Path],
) -> crate::Result<()> {
    crate::fsio::claim_output(path, crate::fsio::OutputKind::Directory, force, inputs)?;
    Ok(())
}

/// The longest `--timeout` any command takes: one day.
pub(crate) const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// The most parallel adapter processes (`--jobs`); a run also never starts more than it has
/// cases.
pub(crate) const MAX_JOBS: usize = 256;

/// `--timeout SECONDS` (clap value parser, so a bad value is `cli.usage` before any work):
/// a finite number of seconds, more than 0 and at most one day. `Duration::from_secs_f64`
/// panics on a negative, NaN or huge value, and 0 would fail every case.
pub(crate) fn parse_timeout(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > MAX_TIMEOUT_SECONDS {
        return Err(format!(
            "'{s}': a timeout is a finite number of seconds, more than 0 and at most \
             {MAX_TIMEOUT_SECONDS} (one day)"
        ));
    }
    Ok(v)
}

/// `--timeout SECONDS` in whole seconds (check-kernel): 1 to one day.
pub(crate) fn parse_timeout_whole(s: &str) -> Result<u64, String> {
    let v = parse_timeout(s)?;
    if v.fract() != 0.0 || v < 1.0 {
        return Err(format!("'{s}': whole seconds, 1 to {MAX_TIMEOUT_SECONDS}"));
    }
    Ok(v as u64)
}

/// `--jobs N`: 1 to [`MAX_JOBS`] (0 would run nothing; a million threads for one case help no
/// one).
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    let v: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of processes"))?;
    if v == 0 || v > MAX_JOBS {
        return Err(format!(
            "'{s}': between 1 and {MAX_JOBS} parallel processes"
        ));
    }
    Ok(v)
}

/// A command-line error (`cli.usage`) about `field` (a flag or argument).
pub(crate) fn usage(field: &str, detail: impl Into<String>) -> crate::Error {
    crate::Error::new(ErrorClass::CliUsage, field, detail)
}

/// Looks up a model profile by name with a helpful error.
pub(crate) fn profile(name: &str) -> crate::Result<crate::spec::ModelProfile> {
    crate::spec::profile(name).ok_or_else(|| {
        let names: Vec<&str> = crate::spec::PROFILES.iter().map(|(n, _)| *n).collect();
        usage(
            "--profile",
            format!("unknown profile '{name}' (known: {})", names.join(", ")),
        )
    })
}

/// The length of a file this command has just written (for its summary line); a failure to
/// stat it is `io.read` on that path.
pub(crate) fn file_len(path: &std::path::Path) -> crate::Result<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| crate::Error::io(ErrorClass::IoRead, path, e))
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

    #[test]
    fn the_message_names_the_class_the_site_chose() {
        let e = Error::new(ErrorClass::GgufMagic, "header.magic", "not GGUF");
        assert_eq!(
            classify(&e),
            (
                ErrorClass::GgufMagic,
                "[gguf.magic] header.magic: not GGUF".into()
            )
        );
        let (class, msg) = classify(&usage("--rows", "5:2 is reversed"));
        assert_eq!(class, ErrorClass::CliUsage);
        assert_eq!(msg, "[cli.usage] --rows: 5:2 is reversed");
    }

    /// Negative control for the walk in `tests/it/cli.rs`: a real invariant of a command (a
    /// report value that cannot be JSON: a map with non-string keys) still reports
    /// `internal.invariant`, exit 2.
    #[test]
    fn a_real_invariant_still_reports_internal_invariant() {
        let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let e = json_out::to_value("x-report", bad).unwrap_err();
        let (class, msg) = classify(&e);
        assert_eq!(class, ErrorClass::InternalInvariant);
        assert!(msg.starts_with("[internal.invariant] x-report: "), "{msg}");
        assert_eq!(class.exit_code(), 2);
        // Correct but unusual: a map with string keys is a value like any other.
        let fine: std::collections::BTreeMap<String, u8> = [("k".to_string(), 1)].into();
        assert_eq!(json_out::to_value("x-report", fine).unwrap()["k"], 1);
    }
}
