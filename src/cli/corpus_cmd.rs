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
        /// The corpus folder to write (or to compare with, --check).
        #[arg(short, long, default_value = "conformance")]
        output: PathBuf,
        /// Compare with the files under OUTPUT instead of writing; exit 1 on any difference.
        #[arg(long)]
        check: bool,
    },
    /// Render the interop matrices (Markdown; HTML with --html) from check-reader --json outputs:
    /// readers × (families, rule layers), then feature groups × readers.
    Matrix {
        /// The corpus folder (holding MANIFEST.json) the reports were run on.
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
        /// Replace an existing --output or --html file.
        #[arg(long)]
        force: bool,
    },
    /// Differential fuzzing: mutate corpus GGUF files, run the reference and a reader adapter on
    /// each, minimize every disagreement and write it as a candidate case (OUT/candidates.json,
    /// OUT/cases/). Deterministic given --seed.
    DiffFuzz {
        /// The corpus folder whose GGUF files seed the mutants.
        #[arg(long, default_value = "conformance")]
        corpus: PathBuf,
        /// Adapter command (as for check-reader).
        #[arg(long)]
        adapter: String,
        /// The reader's capabilities.json (seed cases with an unsupported feature are skipped).
        #[arg(long)]
        capabilities: Option<PathBuf>,
        /// Seed of the mutation stream (same seed, same mutants).
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
        /// Seconds per adapter run (more than 0, at most 86400).
        #[arg(long, default_value_t = 10.0, value_parser = super::parse_timeout)]
        timeout: f64,
        /// Address-space cap per adapter process (MiB; 0 = none).
        #[arg(long, default_value_t = 4096)]
        memory_mb: u64,
        /// Folder for candidates.json and cases/: created, or empty, or one this command wrote
        /// before (it carries the tool's marker; then --force); a foreign folder is refused.
        #[arg(short, long)]
        out: PathBuf,
        /// Write into an existing output folder of this tool, replacing its candidates.
        #[arg(long)]
        force: bool,
        /// Exit 1 when any disagreement is found (negative controls).
        #[arg(long)]
        fail_on_disagreement: bool,
    },
}

pub fn corpus(action: CorpusAction) -> crate::Result<ExitCode> {
    match action {
        CorpusAction::Generate { output, check } => generate(&output, check),
        CorpusAction::Matrix {
            corpus,
            runs,
            caps,
            output,
            html,
            splice,
            force,
        } => matrix(
            &corpus,
            &runs,
            &caps,
            MatrixOut {
                output: output.as_deref(),
                html: html.as_deref(),
                splice: splice.as_deref(),
                force,
            },
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
            force,
            fail_on_disagreement,
        } => {
            // Claimed before any work: never a foreign folder, never one holding the corpus.
            crate::fsio::claim_output(
                &out,
                crate::fsio::OutputKind::Directory,
                force,
                &[corpus.as_path()],
            )?;
            let manifest = Manifest::load(&corpus.join("MANIFEST.json"))?;
            let caps = match capabilities {
                Some(p) => runner::Capabilities::load(&p)?,
                None => Default::default(),
            };
            let opts = differential::DiffOptions {
                corpus: canonical(&corpus)?,
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
            // The seeds are data: confined to the corpus and as the manifest records them.
            let seeds = differential::seed_cases(&manifest, &opts);
            let before = manifest.verify_integrity(
                &opts.corpus,
                &seeds,
                corpus::integrity::Stage::Before,
            )?;
            // Mutants go to a private scratch folder of the library's, never under --out.
            let report = differential::run(&manifest, &opts)?;
            manifest.verify_unchanged(&opts.corpus, &seeds, &before)?;
            std::fs::create_dir_all(&out)
                .map_err(crate::fsio::write_err(&out.display().to_string()))?;
            crate::fsio::write_file(
                &out.join(crate::fsio::MARKER),
                b"corpus diff-fuzz output\n",
                crate::fsio::Replace::Allow,
            )?;
            differential::write_candidates(
                &report,
                &opts,
                &out,
                crate::fsio::Replace::from_force(force),
            )?;
            println!("{}", differential::summary(&report));
            println!("candidates: {}", out.join("candidates.json").display());
            Ok(
                if report.stopped.is_some() || (fail_on_disagreement && report.disagreements > 0) {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                },
            )
        }
    }
}

fn generate(out: &Path, check: bool) -> crate::Result<ExitCode> {
    let t0 = std::time::Instant::now();
    if !check {
        // Before the generation (seconds): a missing or read-only folder, a file or a foreign
        // folder at OUTPUT fails now. The full per-file claim is in Corpus::write.
        crate::fsio::check_parent(out)?;
        corpus::check_output_folder(out)?;
    }
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
    let left = c.write(out)?;
    for f in &left {
        println!(
            "LEFT    {} (not written by this tool; not removed)",
            crate::text::escape(f)
        );
    }
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

/// The absolute, symlink-free path of `p` (adapters get absolute case paths).
fn canonical(p: &Path) -> crate::Result<PathBuf> {
    std::fs::canonicalize(p).map_err(|e| {
        crate::Error::new(
            crate::ErrorClass::IoRead,
            p.display().to_string(),
            e.to_string(),
        )
    })
}

/// `check-reader` options (PROTOCOL.md §5).
#[derive(clap::Args, Debug)]
pub(crate) struct CheckReaderArgs {
    /// Adapter command; the case file is appended as its last argument, the request JSON is on stdin.
    #[arg(long, required_unless_present = "list_features")]
    pub adapter: Option<String>,
    /// The corpus folder (holding MANIFEST.json). Default: the first `conformance/` with a
    /// MANIFEST.json found walking up from the current folder, then from the executable's folder.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Known failures: `CASE-ID  REASON  # comment` per line, REASON the key printed after
    /// `reason:` on the case's FAIL line (`accepted`, `timeout`, `mismatch:PATH`, ...). A listed
    /// case that passes (STALE) or fails for another reason (XFAIL-CHANGED) fails the run.
    #[arg(long)]
    pub known_failures: Option<PathBuf>,
    /// A known failure that fails for another reason than listed (XFAIL-CHANGED) does not fail
    /// the run (it is still printed and counted).
    #[arg(long)]
    pub accept_changed: bool,
    /// The reader's capabilities.json; its keys:
    /// `reader` (name, string);
    /// `error_classes` ("strict": reject classes must be the spec/errors.json ids; "lenient", the default: any reject counts);
    /// `unsupported` (array of feature names or globs, or objects {"feature", "why"}: cases carrying one are skipped, the why shown on the SKIP line; see --list-features);
    /// `rule_layers` (array of mainline, loader, recommended, spec: the layers the reader implements; n_ cases of other layers may be accepted);
    /// `order_insensitive` (bool: GGUF keys/tensors compared sorted, metadata_unordered_sha256);
    /// `persistent` (bool: one process serves many requests, PROTOCOL.md §4.6);
    /// `localize` (bool: the adapter answers a `localize` request with its values, PROTOCOL.md §4.7);
    /// `version`, `description` (strings, shown in the interop matrix).
    /// Any other key, and a feature name or glob that matches no case, is refused.
    #[arg(long, verbatim_doc_comment)]
    pub capabilities: Option<PathBuf>,
    /// Only case ids matching this glob (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`); repeat the flag to
    /// select the union.
    #[arg(long)]
    pub filter: Vec<String>,
    /// Write the per-case results as JSON (schema check-reader-report) to PATH, or `-` for stdout.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace an existing --json file.
    #[arg(long)]
    pub force: bool,
    /// Seconds per case (more than 0, at most 86400).
    #[arg(long, default_value_t = 20.0, value_parser = super::parse_timeout)]
    pub timeout: f64,
    /// Address-space cap per adapter process (MiB; 0 = none).
    #[arg(long, default_value_t = 4096)]
    pub memory_mb: u64,
    /// Parallel adapter processes (default: available CPUs; 1 to 256, never more than the
    /// selected cases).
    #[arg(long, value_parser = super::parse_jobs)]
    pub jobs: Option<usize>,
    /// Print only failures and the summary.
    #[arg(long)]
    pub quiet: bool,
    /// Print whole result lines: digests, the full localisation and the `[reason: KEY]` a
    /// known-failures entry pins (default: at most 160 characters a line; --json has it all).
    #[arg(long)]
    pub verbose: bool,
    /// One process per case even if the capabilities declare "persistent": true.
    #[arg(long)]
    pub per_case: bool,
    /// Print the feature vocabulary (canonical name, aliases, cases covered) and exit.
    #[arg(long)]
    pub list_features: bool,
}

/// Finds the corpus: `--corpus` if given, else the first `conformance/MANIFEST.json` walking up
/// from the current folder, then from the executable's folder.
pub(crate) fn find_corpus(given: Option<&Path>) -> crate::Result<PathBuf> {
    use crate::{Error, ErrorClass};
    if let Some(c) = given {
        if c.join("MANIFEST.json").is_file() {
            return Ok(c.to_path_buf());
        }
        return Err(Error::new(
            ErrorClass::CorpusManifest,
            "--corpus",
            format!(
                "{} has no MANIFEST.json (generate one with `ninfer-ternary corpus generate -o {}`)",
                c.display(),
                c.display()
            ),
        ));
    }
    let mut starts = Vec::new();
    if let Ok(d) = std::env::current_dir() {
        starts.push(d);
    }
    if let Some(d) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        starts.push(d);
    }
    for s in &starts {
        for dir in s.ancestors() {
            let c = dir.join("conformance");
            if c.join("MANIFEST.json").is_file() {
                return Ok(c);
            }
        }
    }
    Err(Error::new(
        ErrorClass::CorpusManifest,
        "--corpus",
        format!(
            "no conformance/MANIFEST.json in {} or any folder above them; pass --corpus DIR",
            starts
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    ))
}

pub(crate) fn check_reader(args: CheckReaderArgs) -> crate::Result<ExitCode> {
    use crate::{Error, ErrorClass};
    let corpus = find_corpus(args.corpus.as_deref())?;
    let manifest_path = corpus.join("MANIFEST.json");
    let manifest = Manifest::load(&manifest_path)?;
    if args.list_features {
        print!("{}", corpus::features::vocabulary_text(&manifest));
        return Ok(ExitCode::SUCCESS);
    }
    let Some(adapter) = args.adapter.clone() else {
        return Err(Error::new(ErrorClass::CliUsage, "--adapter", "required"));
    };
    let mut inputs: Vec<&Path> = vec![&manifest_path];
    if let Some(p) = &args.capabilities {
        inputs.push(p);
    }
    if let Some(p) = &args.known_failures {
        inputs.push(p);
    }
    let json = crate::cli::json_out::JsonTarget::claim(args.json.as_deref(), args.force, &inputs)?;
    let to_stderr = json.as_ref().is_some_and(|j| j.is_stdout());
    // The filter is evaluated once; one that selects nothing would pass vacuously: refuse it.
    let filter = runner::Filter::new(&args.filter);
    filter.check(&manifest)?;
    let capabilities = match &args.capabilities {
        Some(p) => runner::Capabilities::load(p)?,
        None => Default::default(),
    };
    capabilities.check_features(&manifest)?;
    let corpus_abs = canonical(&corpus)?;
    let jobs = jobs_for(args.jobs, &manifest, &filter);
    let opts = runner::RunOptions {
        corpus: corpus_abs,
        adapter,
        known_failures: match &args.known_failures {
            Some(p) => runner::load_known_failures(p)?,
            None => Default::default(),
        },
        accept_changed: args.accept_changed,
        capabilities,
        filter,
        timeout: Duration::from_secs_f64(args.timeout),
        memory_mb: args.memory_mb,
        jobs,
        quiet: args.quiet,
        verbose: args.verbose,
        per_case: args.per_case,
        human_to_stderr: to_stderr,
    };
    // The corpus is data (#32): confined and as the manifest records it, before and after.
    let selected = manifest.selected(|id| opts.filter.matches(id));
    let before =
        manifest.verify_integrity(&opts.corpus, &selected, corpus::integrity::Stage::Before)?;
    runner::preflight(&manifest, &opts)?;
    let t0 = std::time::Instant::now();
    let report = runner::run(&manifest, &opts);
    manifest.verify_unchanged(&opts.corpus, &selected, &before)?;
    let summary = runner::summary_text(&report);
    if to_stderr {
        eprintln!("{summary}");
    } else {
        println!("{summary}");
    }
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
    if let Some(hint) = runner::persistent_hint(&report, &opts) {
        eprintln!("{hint}");
    }
    if let Some(j) = json {
        j.write("check-reader-report", report.to_json(&opts, &manifest))?;
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Parallel adapters: `--jobs` or the CPUs, never more than [`super::MAX_JOBS`] nor than the
/// cases the filter selects (a thread per idle adapter would be spawned for nothing).
fn jobs_for(given: Option<usize>, manifest: &Manifest, filter: &runner::Filter) -> usize {
    let selected = manifest
        .cases
        .iter()
        .filter(|c| filter.matches(&c.id))
        .count();
    given
        .unwrap_or_else(crate::pool::available_threads)
        .min(super::MAX_JOBS)
        .min(selected)
        .max(1)
}

/// `reader-adapter FILE` (one case) or `reader-adapter --persistent` (request lines on stdin).
pub fn reader_adapter(
    file: Option<&Path>,
    request: Option<&Path>,
    persistent: bool,
) -> crate::Result<ExitCode> {
    let code = match (persistent, file) {
        (true, _) => corpus::protocol::serve_persistent(std::io::stdin().lock(), std::io::stdout()),
        (false, Some(file)) => corpus::protocol::run_adapter(file, request),
        (false, None) => {
            return Err(crate::Error::new(
                crate::ErrorClass::CliUsage,
                "reader-adapter",
                "give a case FILE or --persistent",
            ))
        }
    };
    Ok(ExitCode::from(code as u8))
}

fn name_eq_path(arg: &str, flag: &str) -> crate::Result<(String, PathBuf)> {
    let (name, path) = arg.split_once('=').ok_or_else(|| {
        crate::Error::new(
            crate::ErrorClass::CliUsage,
            flag,
            format!("{arg}: expected NAME=FILE"),
        )
    })?;
    Ok((name.to_string(), PathBuf::from(path)))
}

fn read_json(path: &Path) -> crate::Result<serde_json::Value> {
    let text = crate::fsio::read_input_string(path)?;
    serde_json::from_str(&text).map_err(|e| {
        crate::Error::new(
            crate::ErrorClass::CorpusManifest,
            path.display().to_string(),
            format!("not JSON (line {} column {}): {e}", e.line(), e.column()),
        )
    })
}

/// Where `corpus matrix` writes.
struct MatrixOut<'a> {
    output: Option<&'a Path>,
    html: Option<&'a Path>,
    splice: Option<&'a Path>,
    force: bool,
}

fn matrix(
    corpus: &Path,
    runs: &[String],
    caps: &[String],
    out: MatrixOut<'_>,
) -> crate::Result<ExitCode> {
    let MatrixOut {
        output,
        html,
        splice,
        force,
    } = out;
    let manifest_path = corpus.join("MANIFEST.json");
    // Claim the outputs before reading anything: never an input (a --run file, a --caps file,
    // the manifest, the --splice document), an existing file only with --force.
    let mut inputs: Vec<PathBuf> = vec![manifest_path.clone()];
    for r in runs.iter().chain(caps) {
        if let Some((_, p)) = r.split_once('=') {
            inputs.push(PathBuf::from(p));
        }
    }
    inputs.extend(splice.map(Path::to_path_buf));
    let input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    for p in output.iter().chain(html.iter()) {
        crate::fsio::claim_output(p, crate::fsio::OutputKind::File, force, &input_refs)?;
    }
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
        let original = crate::fsio::read_input_string(p)?;
        let doc = matrix::splice(&original, "reader-matrix", &by_reader)
            .and_then(|d| matrix::splice(&d, "group-matrix", &by_group))
            .ok_or_else(|| {
                crate::Error::new(
                    crate::ErrorClass::CliUsage,
                    p.display().to_string(),
                    "needs <!-- BEGIN reader-matrix -->, <!-- END reader-matrix -->, \
                     <!-- BEGIN group-matrix --> and <!-- END group-matrix --> markers",
                )
            })?;
        crate::fsio::rewrite_in_place(p, original.as_bytes(), doc.as_bytes())?;
    }
    if let Some(p) = html {
        let page = matrix::render_html(
            "ninfer-ternary conformance: real-reader matrix",
            &[
                ("Readers × families and rule layers", by_reader.clone()),
                ("Feature groups × readers", by_group.clone()),
            ],
        );
        crate::fsio::write_bytes_atomic(p, page.as_bytes())?;
    }
    let md = format!(
        "## Readers × families and rule layers\n\n{by_reader}\n## Feature groups × readers\n\n{by_group}"
    );
    match output {
        Some(p) => crate::fsio::write_bytes_atomic(p, md.as_bytes())?,
        None if html.is_none() && splice.is_none() => print!("{md}"),
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}
