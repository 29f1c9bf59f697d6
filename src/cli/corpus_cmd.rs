//! `corpus generate|matrix`, `check-reader` and `reader-adapter` (conformance/PROTOCOL.md).

use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::corpus::{self, differential, manifest::Manifest, matrix, runner};

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
    /// Render the interop matrices (Markdown; HTML with --html) from check-reader --json outputs:
    /// readers × (families, rule layers), then feature groups × readers.
    Matrix {
        #[arg(long, default_value = "conformance")]
        corpus: PathBuf,
        /// NAME=RESULTS.json, one per reader, in order.
        #[arg(long = "run", required = true)]
        runs: Vec<String>,
        /// NAME=capabilities.json: the reader's version and error classes for its row.
        #[arg(long = "caps")]
        caps: Vec<String>,
        /// Write the Markdown here (stdout when neither this, --html nor --splice is given).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Also write a standalone HTML page.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Replace the text between `<!-- BEGIN reader-matrix -->`/`END` and
        /// `<!-- BEGIN group-matrix -->`/`END` in this file (conformance/INTEROP.md).
        #[arg(long)]
        splice: Option<PathBuf>,
    },
    /// Differential fuzzing: mutate corpus GGUF files, run the reference and a reader adapter on
    /// each, minimize every disagreement and write it as a candidate case (OUT/candidates.json,
    /// OUT/cases/). Deterministic given --seed.
    DiffFuzz {
        #[arg(long, default_value = "conformance")]
        corpus: PathBuf,
        /// Adapter command (as for check-reader).
        #[arg(long)]
        adapter: String,
        /// The reader's capabilities.json (seed cases with an unsupported feature are skipped).
        #[arg(long)]
        capabilities: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Mutants to try.
        #[arg(long, default_value_t = 200)]
        iterations: usize,
        /// Mutations per mutant (1..=N).
        #[arg(long, default_value_t = 3)]
        max_mutations: usize,
        /// Compare accept/reject only (for readers that lose file order).
        #[arg(long)]
        outcome_only: bool,
        /// Only seed cases whose id matches this glob.
        #[arg(long)]
        filter: Option<String>,
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        #[arg(long, default_value_t = 4096)]
        memory_mb: u64,
        #[arg(short, long)]
        out: PathBuf,
        /// Exit 1 when any disagreement is found (negative controls).
        #[arg(long)]
        fail_on_disagreement: bool,
    },
}

pub fn corpus(action: CorpusAction) -> anyhow::Result<ExitCode> {
    match action {
        CorpusAction::Generate { output, check } => generate(&output, check),
        CorpusAction::Matrix {
            corpus,
            runs,
            caps,
            output,
            html,
            splice,
        } => matrix(
            &corpus,
            &runs,
            &caps,
            output.as_deref(),
            html.as_deref(),
            splice.as_deref(),
        ),
        CorpusAction::DiffFuzz {
            corpus,
            adapter,
            capabilities,
            seed,
            iterations,
            max_mutations,
            outcome_only,
            filter,
            timeout,
            memory_mb,
            out,
            fail_on_disagreement,
        } => {
            let manifest = Manifest::load(&corpus.join("MANIFEST.json"))?;
            let caps = match capabilities {
                Some(p) => runner::Capabilities::load(&p)?,
                None => Default::default(),
            };
            let opts = differential::DiffOptions {
                corpus: std::fs::canonicalize(&corpus)?,
                adapter,
                unsupported: caps.unsupported,
                seed,
                iterations,
                max_mutations,
                timeout: Duration::from_secs_f64(timeout),
                memory_mb,
                outcome_only,
                filter,
            };
            std::fs::create_dir_all(&out)?;
            let work = out.join("work");
            let report = differential::run(&manifest, &opts, &work)?;
            let _ = std::fs::remove_dir_all(&work);
            differential::write_candidates(&report, &opts, &out)?;
            println!("{}", differential::summary(&report));
            println!("candidates: {}", out.join("candidates.json").display());
            Ok(if fail_on_disagreement && report.disagreements > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
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
            println!("DIFFERS {}", crate::text::escape(f));
        }
        for f in &cmp.missing {
            println!("MISSING {}", crate::text::escape(f));
        }
        for f in &cmp.extra {
            println!("EXTRA   {}", crate::text::escape(f));
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
    per_case: bool,
) -> anyhow::Result<ExitCode> {
    let manifest = Manifest::load(&corpus.join("MANIFEST.json"))?;
    // A filter that selects nothing would pass vacuously: refuse it.
    if let Some(f) = filter {
        if runner::select(&manifest, Some(f)).is_empty() {
            return Err(crate::Error::new(
                crate::ErrorClass::CliUsage,
                "--filter",
                format!(
                    "'{f}' matches none of the {} case ids of {}; nothing would be checked",
                    manifest.cases.len(),
                    corpus.join("MANIFEST.json").display()
                ),
            )
            .into());
        }
    }
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
        per_case,
    };
    let t0 = std::time::Instant::now();
    let report = runner::run(&manifest, &opts);
    println!("{}", runner::summary_text(&report));
    eprintln!(
        "check-reader: {} cases in {:.1}s ({})",
        report.results.len(),
        t0.elapsed().as_secs_f64(),
        if opts.persistent() {
            "persistent adapters"
        } else {
            "one process per case"
        }
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

/// `reader-adapter FILE` (one case) or `reader-adapter --persistent` (request lines on stdin).
pub fn reader_adapter(
    file: Option<&Path>,
    request: Option<&Path>,
    persistent: bool,
) -> anyhow::Result<ExitCode> {
    let code = match (persistent, file) {
        (true, _) => corpus::protocol::serve_persistent(std::io::stdin().lock(), std::io::stdout()),
        (false, Some(file)) => corpus::protocol::run_adapter(file, request),
        (false, None) => anyhow::bail!("reader-adapter: give a case FILE or --persistent"),
    };
    Ok(ExitCode::from(code as u8))
}

fn name_eq_path(arg: &str, flag: &str) -> anyhow::Result<(String, PathBuf)> {
    let (name, path) = arg
        .split_once('=')
        .ok_or_else(|| anyhow::anyhow!("{flag} {arg}: expected NAME=FILE"))?;
    Ok((name.to_string(), PathBuf::from(path)))
}

fn read_json(path: &Path) -> anyhow::Result<serde_json::Value> {
    let text = crate::fsio::read_input_string(path)?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn matrix(
    corpus: &Path,
    runs: &[String],
    caps: &[String],
    output: Option<&Path>,
    html: Option<&Path>,
    splice: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let manifest_path = corpus.join("MANIFEST.json");
    let manifest = Manifest::load(&manifest_path)?;
    let raw_manifest = read_json(&manifest_path)?;
    let mut capabilities = std::collections::BTreeMap::new();
    for c in caps {
        let (name, path) = name_eq_path(c, "--caps")?;
        capabilities.insert(name, read_json(&path)?);
    }
    let mut cols = Vec::new();
    let mut readers = Vec::new();
    for r in runs {
        let (name, path) = name_eq_path(r, "--run")?;
        let v = read_json(&path)?;
        cols.push((name.clone(), v.clone()));
        readers.push(matrix::ReaderRun {
            capabilities: capabilities.get(&name).cloned(),
            name,
            report: v,
        });
    }
    let by_reader = matrix::render_readers(&raw_manifest, &readers);
    let by_group = runner::render_matrix(&manifest, &cols);
    if let Some(p) = splice {
        let doc = crate::fsio::read_input_string(p)?;
        let doc = matrix::splice(&doc, "reader-matrix", &by_reader)
            .and_then(|d| matrix::splice(&d, "group-matrix", &by_group))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: needs <!-- BEGIN reader-matrix -->, <!-- END reader-matrix -->, \
                     <!-- BEGIN group-matrix --> and <!-- END group-matrix --> markers",
                    p.display()
                )
            })?;
        std::fs::write(p, doc)?;
    }
    if let Some(p) = html {
        let page = matrix::render_html(
            "ninfer-ternary conformance: real-reader matrix",
            &[
                ("Readers × families and rule layers", by_reader.clone()),
                ("Feature groups × readers", by_group.clone()),
            ],
        );
        std::fs::write(p, page)?;
    }
    let md = format!(
        "## Readers × families and rule layers\n\n{by_reader}\n## Feature groups × readers\n\n{by_group}"
    );
    match output {
        Some(p) => std::fs::write(p, md)?,
        None if html.is_none() && splice.is_none() => print!("{md}"),
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}
