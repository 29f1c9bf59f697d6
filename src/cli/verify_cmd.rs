//! `verify`, `mutate` and `dump-reference`: thin adapters from the command line to
//! [`crate::verify`]. Every error they return is a classed [`crate::Error`] (the exit code and
//! the `[class]` of the message come from it).

use crate::error::{Error, ErrorClass};
use crate::ninfer::Artifact;
use crate::verify::dump_dir::write_dir_atomic;
use crate::verify::{self, report, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use super::json_out::JsonTarget;

/// `verify`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct VerifyArgs {
    /// The packed artifact (.ninfer).
    pub artifact: PathBuf,
    /// The source GGUF the artifact was packed from (required; never defaulted).
    #[arg(long)]
    pub gguf: PathBuf,
    /// The groupwise-int template (opens the provenance gate).
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Run the row-order sections over every layer of the profile.
    #[arg(long)]
    pub sweep: bool,
    /// The model profile by name (reduced GGUFs whose hparams do not identify it).
    #[arg(long)]
    pub profile: Option<String>,
    /// The artifact is a `pack --minimal` one (frontend, sign table, the source's first
    /// full-attention layer): gates judge that and name what they skip.
    #[arg(long)]
    pub minimal: bool,
    /// Embedding activation dump: a native directory or the engine's dump file (opens the embedding gate).
    #[arg(long)]
    pub dump: Option<PathBuf>,
    /// engine (the engine's bf16 embedding dump file) or native (manifest directory); default by file/directory.
    #[arg(long = "dump-format", value_enum)]
    pub dump_format: Option<verify::DumpFormat>,
    /// Kernel-oracle dump directory (opens the engine_oracles gate).
    #[arg(long = "oracle-dump")]
    pub oracle_dump: Option<PathBuf>,
    /// Check only the oracle cases of this artifact object.
    #[arg(long = "oracle-object")]
    pub oracle_object: Option<String>,
    /// Machine-readable report (schema verify-report) to PATH, or `-` for standard output
    /// (the human summary then goes to standard error).
    #[arg(long, value_name = "PATH|-")]
    pub json: Option<PathBuf>,
    /// Replace an existing --json file.
    #[arg(long)]
    pub force: bool,
    /// Print every check of every gate after the summary.
    #[arg(short, long)]
    pub verbose: bool,
}

/// `mutate`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct MutateArgs {
    /// The healthy artifact to break.
    pub artifact: PathBuf,
    /// The mutation (spec/gates.json `mutations`).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(verify::mutate::kinds()))]
    pub kind: String,
    /// Output artifact (or, for dump-* kinds, output dump directory).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Seed of the dump inputs (dump-* kinds).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Replace an existing output.
    #[arg(long)]
    pub force: bool,
}

/// `dump-reference`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct DumpReferenceArgs {
    /// The artifact whose reference dumps are computed.
    pub artifact: PathBuf,
    /// Output directory (gets embedding/ and oracles/).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Comma-separated token ids for the embedding dump (default: 8 spread over the vocabulary).
    #[arg(long)]
    pub tokens: Option<String>,
    /// Seed of the oracle inputs x.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// native (embedding/ + oracles/ directories) or engine (the engine's bf16 embedding dump file `DIR/embedding.T<N>.bin`).
    #[arg(long, value_enum, default_value_t = verify::DumpFormat::Native)]
    pub format: verify::DumpFormat,
    /// Replace an existing output directory.
    #[arg(long)]
    pub force: bool,
    /// host: f64 math on the CPU; cuda: the reference CUDA kernels on the GPU (feature `cuda`).
    #[arg(long, default_value = "host")]
    pub device: String,
    /// The GGUF ARTIFACT was packed from: only named in the `verify` command printed at the end
    /// (without it that command shows the placeholder `<source.gguf>`).
    #[arg(long, value_name = "GGUF")]
    pub gguf: Option<PathBuf>,
}

/// The `--gguf` argument of the `verify` command `dump-reference` prints: the path given,
/// shell-quoted when needed, or a placeholder that cannot be mistaken for a file name.
fn gguf_arg(gguf: Option<&Path>) -> String {
    match gguf {
        None => "<source.gguf>".into(),
        Some(p) => {
            let s = p.display().to_string();
            let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:=,@".contains(c);
            if !s.is_empty() && s.chars().all(plain) {
                s
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        }
    }
}

/// `verify`: every gate over ARTIFACT against its source GGUF; exit 0 pass, 1 a gate failed,
/// 2 an input that cannot be judged (not a GGUF, not a .ninfer, a mismatched pair, I/O).
pub(crate) fn verify(a: VerifyArgs) -> crate::Result<ExitCode> {
    let t0 = Instant::now();
    let mut inputs: Vec<&Path> = vec![&a.artifact, &a.gguf];
    inputs.extend(a.template.as_deref());
    inputs.extend(a.dump.as_deref());
    let json = JsonTarget::claim(a.json.as_deref(), a.force, &inputs)?;
    let artifact_map = crate::fsio::map_file(&a.artifact)?;
    let gguf_map = crate::fsio::map_file(&a.gguf)?;
    let template_map = a
        .template
        .as_deref()
        .map(crate::fsio::map_file)
        .transpose()?;
    // The gates read scattered objects of three large files; each announces what it reads
    // whole (fsio::will_need), so a cold run reads what it needs and not the read-ahead around
    // every small read (docs/verify-measurements.md, cold run).
    for m in [&artifact_map, &gguf_map].into_iter().chain(&template_map) {
        m.advise_random();
        // The headers (GGUF key/values and tensor infos, .ninfer directory) lie at the start.
        crate::fsio::will_need(&m[..m.len().min(1 << 20)]);
    }
    if let Some(d) = &a.dump {
        crate::fsio::require_file_or_dir(d).map_err(|e| verify::within(e, "--dump"))?;
    }
    if let Some(d) = &a.oracle_dump {
        crate::fsio::require_file_or_dir(d).map_err(|e| verify::within(e, "--oracle-dump"))?;
        if !d.is_dir() {
            return Err(Error::new(
                ErrorClass::VerifyInput,
                "--oracle-dump",
                format!("{} is a file, not a dump directory", d.display()),
            ));
        }
    }
    let opts = Options {
        template: template_map.as_deref(),
        sweep: a.sweep,
        dump: a.dump.as_deref(),
        oracle_dump: a.oracle_dump.as_deref(),
        oracle_object: a.oracle_object.as_deref(),
        profile: a.profile.as_deref(),
        dump_format: a.dump_format,
        minimal: a.minimal,
    };
    let r = verify::verify(
        &verify::file_name(&a.artifact),
        &artifact_map,
        &verify::file_name(&a.gguf),
        &gguf_map,
        opts,
    )?;
    let human = report::summary(&r, a.verbose);
    match &json {
        // The report owns standard output; the summary goes to standard error.
        Some(t) if t.is_stdout() => eprint!("{human}"),
        _ => print!("{human}"),
    }
    if let Some(t) = &json {
        write_report(t, &r)?;
    }
    eprintln!(
        "verify stats: wall {:.3} s, payload bytes read {} ({} of them direct from disk), heap peak {}",
        t0.elapsed().as_secs_f64(),
        r.stats.payload_bytes_read,
        r.stats.direct_bytes_read,
        verify::heap::peak().map_or("n/a (allocator not registered)".into(), |p| format!(
            "{:.1} MiB",
            p as f64 / (1 << 20) as f64
        ))
    );
    let parts: Vec<String> = (r.stats.gate_seconds.iter())
        .map(|(s, t)| format!("{s} {t:.3}"))
        .collect();
    eprintln!("verify gate seconds: {}", parts.join(", "));
    Ok(if r.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes the `verify-report` document (schema + tool_version header, then [`report::json`]).
/// On standard output it passes through [`crate::text::json_safe`] (the same document, no raw
/// control or bidi character from a file name reaches a terminal); a file is written by the
/// one `--json` convention ([`JsonTarget::write`], atomic).
fn write_report(t: &JsonTarget, r: &verify::Report) -> Result<(), Error> {
    let JsonTarget::Stdout = t else {
        return t.write("verify-report", report::json(r));
    };
    let v = super::json_out::with_header("verify-report", report::json(r))?;
    let text = serde_json::to_string_pretty(&v).map_err(|e| {
        Error::new(
            ErrorClass::InternalInvariant,
            "verify-report",
            e.to_string(),
        )
    })?;
    let mut text = crate::text::json_safe(&text).into_owned();
    text.push('\n');
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| super::stdout::error(&e))
}

/// `mutate`: writes one broken artifact (or broken dumps) of spec/gates.json `mutations`.
pub(crate) fn mutate(a: MutateArgs) -> crate::Result<ExitCode> {
    let (artifact, kind, output) = (a.artifact.as_path(), a.kind.as_str(), a.output.as_path());
    let m = verify::mutate::spec(kind)?;
    if m.target == crate::spec::MutationTarget::Dumps {
        super::check_output_dir(output, a.force, &[artifact])?;
        let artifact_map = crate::fsio::map_file(artifact)?;
        let art = Artifact::parse(&artifact_map)?;
        verify::mutate::mutate_dumps(&art, kind, output, a.seed)?;
        println!(
            "wrote broken dumps ({kind}: {}) to {}/embedding and {}/oracles; verify must fail: {}",
            m.doc,
            output.display(),
            output.display(),
            steps(&m.must_fail)
        );
    } else {
        super::check_output(output, a.force, &[artifact])?;
        verify::mutate::mutate_file(artifact, kind, output)?;
        println!(
            "wrote {} ({kind}: {}); verify must fail: {}",
            output.display(),
            m.doc,
            steps(&m.must_fail)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Gate steps as the CLI prints them: `a, b, c`.
fn steps(list: &[crate::spec::GateStep]) -> String {
    let names: Vec<&str> = list.iter().map(|s| s.as_str()).collect();
    names.join(", ")
}

/// `--tokens 1,2,3` as token ids (`cli.usage` naming the bad entry).
fn parse_tokens(s: &str) -> Result<Vec<u64>, Error> {
    s.split(',')
        .map(|x| {
            x.trim().parse::<u64>().map_err(|e| {
                Error::new(
                    ErrorClass::CliUsage,
                    "--tokens",
                    format!("'{x}' is not a token id ({e})"),
                )
            })
        })
        .collect()
}

/// `dump-reference`: reference dumps of ARTIFACT in the native, engine or harness format,
/// written as one directory atomically (`--device cuda`: the native format from the GPU).
pub(crate) fn dump_reference(a: DumpReferenceArgs) -> crate::Result<ExitCode> {
    match a.device.as_str() {
        "host" => {}
        // The device rewrite recomputes the native dump files; engine/harness files are
        // written by the host path only.
        "cuda" if a.format != verify::DumpFormat::Native => {
            return Err(Error::new(
                ErrorClass::CliUsage,
                "--device",
                format!(
                    "--device cuda writes the native dump format only (got --format {})",
                    a.format
                ),
            ))
        }
        "cuda" => {
            return super::check_kernel::dump_reference_device(
                &a.artifact,
                &a.output,
                a.tokens.as_deref(),
                a.seed,
                a.force,
            )
        }
        d => {
            return Err(Error::new(
                ErrorClass::CliUsage,
                "--device",
                format!("--device {d}: one of host, cuda"),
            ))
        }
    }
    let (artifact, output) = (a.artifact.as_path(), a.output.as_path());
    super::check_output_dir(output, a.force, &[artifact])?;
    let tokens = a.tokens.as_deref().map(parse_tokens).transpose()?;
    let artifact_map = crate::fsio::map_file(artifact)?;
    let art = Artifact::parse(&artifact_map)?;
    let said = match a.format {
        verify::DumpFormat::Native => {
            let files =
                verify::reference::reference_files(&art, tokens, a.seed, Default::default())?;
            write_dir_atomic(output, &files)?;
            format!(
                "wrote reference dumps (f64 math, stored f32) to {0}/embedding and {0}/oracles\n  verify {1} --gguf {2} --dump {0}/embedding --oracle-dump {0}/oracles",
                output.display(),
                artifact.display(),
                gguf_arg(a.gguf.as_deref())
            )
        }
        verify::DumpFormat::Engine => {
            let (ids, hidden, h) = verify::dumps::reference_embedding(&art, tokens)?;
            let bytes = verify::engine_dump::write(&ids, hidden, &h, false);
            // Re-read what is about to be written: a dump this verifier cannot parse is a bug.
            verify::engine_dump::parse(&bytes).map_err(|e| {
                Error::new(
                    ErrorClass::InternalInvariant,
                    "engine dump",
                    format!("the written dump does not re-read: {e}"),
                )
            })?;
            let name = format!("embedding.T{}.bin", ids.len());
            write_dir_atomic(output, &vec![(name.clone().into(), bytes)])?;
            format!(
                "wrote the engine-format embedding dump (i32 T, hidden, count, ids, bf16 token-major) to {0}\n  verify {1} --gguf {2} --dump {0}",
                output.join(name).display(),
                artifact.display(),
                gguf_arg(a.gguf.as_deref())
            )
        }
        verify::DumpFormat::Harness => {
            use verify::harness::{gemm_files, rotation_files, HarnessFault};
            let p = verify::profile_for_artifact(&art)?;
            let layers = verify::artifact_layers(&art);
            let object = verify::resolve_name(
                &p,
                &layers,
                &crate::spec::dumps().harness.gemm.gemm_object,
                None,
            )?;
            let mut files = rotation_files(HarnessFault::None)?;
            files.extend(gemm_files(&art, &object, HarnessFault::None)?);
            write_dir_atomic(output, &files)?;
            format!(
                "wrote the engine harness directory (6 rotation cases <case>.in/.signs/.out.f32, gemm oracle of {object}: gemm.payload.bin, gemm.signs.f32, gemm.x.f32, gemm.y.f32; bf16 of the f64 reference) to {0}\n  verify {1} --gguf {2} --oracle-dump {0}",
                output.display(),
                artifact.display(),
                gguf_arg(a.gguf.as_deref())
            )
        }
    };
    println!("{said}");
    Ok(ExitCode::SUCCESS)
}
