//! The `ninfer-ternary` command line. Each subcommand lives in its own module; all of them
//! return `anyhow::Result` and map errors to exit code 2 (1 is reserved for "checked and failed").

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod inspect;
mod inspect_gguf;
mod spec_cmd;
mod synth_cmd;

#[derive(Parser)]
#[command(
    name = "ninfer-ternary",
    version,
    about = "Conformance suite for PrismML ternary GGUF models and the .ninfer v2 container"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a GGUF or .ninfer file: header, metadata, tensors/objects, geometry, fork warnings.
    Inspect {
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// GGUF reading mode: spec (the GGUF document) or strict (mainline llama.cpp rules).
        #[arg(long, default_value = "strict")]
        mode: String,
    },
    /// Print the spec tables (spec/*.json) as Markdown.
    Spec {
        /// One table (e.g. geometry, formats); all when absent.
        table: Option<String>,
    },
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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { file, json, mode } => inspect::run(&file, json, &mode),
        Command::Spec { table } => spec_cmd::run(table.as_deref()),
        Command::SynthTemplate {
            profile,
            output,
            force,
        } => synth_cmd::template(&profile, &output, force),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Refuses to replace an existing file unless `force`.
pub(crate) fn check_output(path: &std::path::Path, force: bool) -> anyhow::Result<()> {
    if path.exists() && !force {
        anyhow::bail!("{} exists; pass --force to replace it", path.display());
    }
    Ok(())
}

/// Looks up a model profile by name with a helpful error.
pub(crate) fn profile(name: &str) -> anyhow::Result<crate::spec::ModelProfile> {
    crate::spec::profile(name).ok_or_else(|| {
        let names: Vec<&str> = crate::spec::PROFILES.iter().map(|(n, _)| *n).collect();
        anyhow::anyhow!("unknown profile '{name}' (known: {})", names.join(", "))
    })
}
