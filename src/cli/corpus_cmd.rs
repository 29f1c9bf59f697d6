//! `corpus generate|matrix`, `check-reader` and `reader-adapter` (conformance/PROTOCOL.md).

use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::corpus::{self, manifest::Manifest, runner};

#[derive(Subcommand)]
pub enum CorpusAction {
    /// Write the deterministic corpus and MANIFEST.json (or, with --check, byte-compare).
    Generate {
        #[arg(short, long, default_value = "conformance")]
        output: PathBuf,
        /// Compare with the files under OUTPUT instead of writing; exit 1 on any difference.
        #[arg(long)]
        check: bool,
    },
    /// Render the interop matrix (Markdown) from check-reader --json outputs.
    Matrix {
        #[arg(long, default_value = "conformance")]
        corpus: PathBuf,
        /// NAME=RESULTS.json, one per reader column, in order.
        #[arg(long = "run", required = true)]
        runs: Vec<String>,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

pub fn corpus(action: CorpusAction) -> anyhow::Result<ExitCode> {
    match action {
        CorpusAction::Generate { output, check } => generate(&output, check),
        CorpusAction::Matrix {
            corpus,
            runs,
            output,
        } => matrix(&corpus, &runs, output.as_deref()),
    }
}

fn generate(out: &Path, check: bool) -> anyhow::Result<ExitCode> {
    let t0 = std::time::Instant::now();
    let c = corpus::generate()?;
    let counts: Vec<String> = c
        .manifest
        .families
        .iter()
        .map(|(f, n)| format!("{f} {} (y {} / n {} / i {})", n.cases, n.y, n.n, n.i))
        .collect();
    if check {
        let cmp = c.compare(out)?;
        for f in &cmp.differ {
            println!("DIFFERS {f}");
        }
        for f in &cmp.missing {
            println!("MISSING {f}");
        }
        for f in &cmp.extra {
            println!("EXTRA   {f}");
        }
        if cmp.identical() {
            println!(
                "corpus under {} is byte-identical to a fresh generation ({} files, {} cases)",
                out.display(),
                c.files.len() + 1,
                c.manifest.cases.len()
            );
            return Ok(ExitCode::SUCCESS);
        }
        println!("corpus under {} differs from a fresh generation: run `ninfer-ternary corpus generate -o {}`", out.display(), out.display());
        return Ok(ExitCode::from(1));
    }
    c.write(out)?;
    println!(
        "wrote {} cases, {} files, {} bytes to {} in {:.2}s\n  {}",
        c.manifest.cases.len(),
        c.files.len() + 1,
        c.total_bytes(),
        out.display(),
        t0.elapsed().as_secs_f64(),
        counts.join("\n  ")
    );
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
pub fn check_reader(
    corpus: &Path,
    adapter: &str,
    known_failures: Option<&Path>,
    capabilities: Option<&Path>,
    filter: Option<&str>,
    json: Option<&Path>,
    timeout_s: f64,
    memory_mb: u64,
    jobs: Option<usize>,
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let manifest = Manifest::load(&corpus.join("MANIFEST.json"))?;
    let corpus_abs = std::fs::canonicalize(corpus)?;
    let opts = runner::RunOptions {
        corpus: corpus_abs,
        adapter: adapter.to_string(),
        known_failures: match known_failures {
            Some(p) => runner::load_known_failures(p)?,
            None => Default::default(),
        },
        capabilities: match capabilities {
            Some(p) => runner::Capabilities::load(p)?,
            None => Default::default(),
        },
        filter: filter.map(String::from),
        timeout: Duration::from_secs_f64(timeout_s),
        memory_mb,
        jobs: jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
        quiet,
    };
    let t0 = std::time::Instant::now();
    let report = runner::run(&manifest, &opts);
    println!("{}", runner::summary_text(&report));
    eprintln!(
        "check-reader: {} cases in {:.1}s",
        report.results.len(),
        t0.elapsed().as_secs_f64()
    );
    if let Some(p) = json {
        let mut text = serde_json::to_string_pretty(&report.to_json(&opts, &manifest))?;
        text.push('\n');
        std::fs::write(p, text)?;
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn reader_adapter(file: &Path, request: Option<&Path>) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(
        corpus::protocol::run_adapter(file, request) as u8
    ))
}

fn matrix(corpus: &Path, runs: &[String], output: Option<&Path>) -> anyhow::Result<ExitCode> {
    let manifest = Manifest::load(&corpus.join("MANIFEST.json"))?;
    let mut cols = Vec::new();
    for r in runs {
        let (name, path) = r
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--run {r}: expected NAME=RESULTS.json"))?;
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        cols.push((name.to_string(), v));
    }
    let md = runner::render_matrix(&manifest, &cols);
    match output {
        Some(p) => std::fs::write(p, md)?,
        None => print!("{md}"),
    }
    Ok(ExitCode::SUCCESS)
}
