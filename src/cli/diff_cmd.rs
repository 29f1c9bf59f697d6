//! `diff A B`: where two `.ninfer` files (or two GGUFs) differ; exit 0 identical, 1 differ.

use super::json_out::JsonTarget;
use crate::text::escape;
use std::path::PathBuf;
use std::process::ExitCode;

/// The schema name of the `diff --json` report (`spec/schemas/diff-report.schema.json`).
pub const SCHEMA: &str = "diff-report";

// The arguments of `diff` (the subcommand's help text is the `Command::Diff` doc comment).
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// File A (the golden artifact).
    pub a: PathBuf,
    /// File B (the new output).
    pub b: PathBuf,
    /// Write the report as JSON to PATH, or to standard output with `-` (schema
    /// spec/schemas/diff-report.schema.json).
    #[arg(long, value_name = "PATH|-")]
    pub json: Option<PathBuf>,
    /// Replace an existing --json file.
    #[arg(long)]
    pub force: bool,
}

/// Runs `diff`.
pub fn run(args: DiffArgs) -> crate::Result<ExitCode> {
    let target = JsonTarget::claim(args.json.as_deref(), args.force, &[&args.a, &args.b])?;
    let t0 = std::time::Instant::now();
    let report = crate::diff::diff_files(&args.a, &args.b)?;
    let secs = t0.elapsed().as_secs_f64();
    let to_stderr = target.as_ref().is_some_and(JsonTarget::is_stdout);
    for line in report.lines() {
        if to_stderr {
            eprintln!("{}", escape(&line));
        } else {
            println!("{}", escape(&line));
        }
    }
    let mb = (report.a_bytes + report.b_bytes) as f64 / 1e6;
    eprintln!(
        "compared {mb:.0} MB in {secs:.2}s ({:.0} MB/s)",
        mb / secs.max(1e-9)
    );
    if let Some(t) = target {
        t.write(SCHEMA, super::json_out::to_value(SCHEMA, &report)?)?;
    }
    Ok(if report.identical() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
