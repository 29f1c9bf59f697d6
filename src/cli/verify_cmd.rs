//! `verify`, `mutate` and `dump-reference`.

use crate::ninfer::Artifact;
use crate::verify::dump_dir::write_dir_atomic;
use crate::verify::{self, report, Options};
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// `verify`: every gate over ARTIFACT against its source GGUF; exit 0 pass, 1 a gate failed.
#[allow(clippy::too_many_arguments)]
pub fn verify(
    artifact: &Path,
    gguf: &Path,
    template: Option<&Path>,
    sweep: bool,
    profile: Option<&str>,
    dump: Option<&Path>,
    dump_format: Option<verify::DumpFormat>,
    oracle_dump: Option<&Path>,
    oracle_object: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let artifact_map = crate::fsio::map_file(artifact)?;
    let gguf_map = crate::fsio::map_file(gguf)?;
    let template_map = template.map(crate::fsio::map_file).transpose()?;
    // The gates read scattered objects of three large files; each announces what it reads
    // whole (fsio::will_need), so a cold run reads what it needs and not the read-ahead around
    // every small read (docs/verify-measurements.md, cold run).
    for m in [&artifact_map, &gguf_map].into_iter().chain(&template_map) {
        m.advise_random();
        // The headers (GGUF key/values and tensor infos, .ninfer directory) lie at the start.
        crate::fsio::will_need(&m[..m.len().min(1 << 20)]);
    }
    if let Some(d) = dump {
        if !d.exists() {
            anyhow::bail!(
                "{} does not exist (an embedding dump file or directory)",
                d.display()
            );
        }
        crate::fsio::require_file_or_dir(d)?;
    }
    if let Some(d) = oracle_dump {
        if !d.is_dir() {
            anyhow::bail!("{} is not a dump directory", d.display());
        }
    }
    let opts = Options {
        template: template_map.as_deref(),
        sweep,
        dump,
        oracle_dump,
        oracle_object,
        profile,
        dump_format,
    };
    let r = verify::verify(
        &verify::file_name(artifact),
        &artifact_map,
        &verify::file_name(gguf),
        &gguf_map,
        opts,
    )?;
    if json {
        println!("{}", report::json_text(&r)?);
    } else {
        print!("{}", report::text(&r));
    }
    eprintln!(
        "verify stats: wall {:.3} s, payload bytes read {} ({} of them direct from disk), heap peak {}",
        t0.elapsed().as_secs_f64(),
        verify::rows::BYTES_READ.load(std::sync::atomic::Ordering::Relaxed),
        crate::fsio::bulk::DIRECT_BYTES.load(std::sync::atomic::Ordering::Relaxed),
        verify::heap::peak().map_or("n/a (allocator not registered)".into(), |p| format!(
            "{:.1} MiB",
            p as f64 / (1 << 20) as f64
        ))
    );
    if let Ok(times) = verify::GATE_SECONDS.lock() {
        let parts: Vec<String> = times.iter().map(|(s, t)| format!("{s} {t:.3}")).collect();
        eprintln!("verify gate seconds: {}", parts.join(", "));
    }
    Ok(if r.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `mutate`: writes one broken artifact (or broken dumps) of spec/gates.json `mutations`.
pub fn mutate(
    artifact: &Path,
    kind: &str,
    output: &Path,
    seed: u64,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let m = verify::mutate::spec(kind)?;
    if m.target == crate::spec::MutationTarget::Dumps {
        super::check_output_dir(output, force, &[artifact])?;
    } else {
        super::check_output(output, force, &[artifact])?;
    }
    if m.target == crate::spec::MutationTarget::Dumps {
        let artifact_map = crate::fsio::map_file(artifact)?;
        let a = Artifact::parse(&artifact_map)?;
        verify::mutate::mutate_dumps(&a, kind, output, seed)?;
        println!(
            "wrote broken dumps ({kind}: {}) to {}/embedding and {}/oracles; verify must fail: {}",
            m.doc,
            output.display(),
            output.display(),
            steps(&m.must_fail)
        );
    } else {
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

/// `dump-reference`: reference dumps of ARTIFACT in the native, engine or harness format,
/// written as one directory atomically.
pub fn dump_reference(
    artifact: &Path,
    output: &Path,
    tokens: Option<&str>,
    seed: u64,
    format: verify::DumpFormat,
    force: bool,
) -> anyhow::Result<ExitCode> {
    super::check_output_dir(output, force, &[artifact])?;
    let tokens = tokens
        .map(|s| {
            s.split(',')
                .map(|x| {
                    x.trim()
                        .parse::<u64>()
                        .with_context(|| format!("--tokens: '{x}' is not a token id"))
                })
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .transpose()?;
    let artifact_map = crate::fsio::map_file(artifact)?;
    let a = Artifact::parse(&artifact_map)?;
    let said = match format {
        verify::DumpFormat::Native => {
            let files = verify::reference::reference_files(&a, tokens, seed, Default::default())?;
            write_dir_atomic(output, &files)?;
            format!(
                "wrote reference dumps (f64 math, stored f32) to {0}/embedding and {0}/oracles\n  verify {1} --gguf SRC --dump {0}/embedding --oracle-dump {0}/oracles",
                output.display(),
                artifact.display()
            )
        }
        verify::DumpFormat::Engine => {
            let (ids, hidden, h) = verify::dumps::reference_embedding(&a, tokens)?;
            let bytes = verify::engine_dump::write(&ids, hidden, &h, false);
            // Re-read what is about to be written: a dump this verifier cannot parse is a bug.
            verify::engine_dump::parse(&bytes)?;
            let name = format!("embedding.T{}.bin", ids.len());
            write_dir_atomic(output, &vec![(name.clone().into(), bytes)])?;
            format!(
                "wrote the engine-format embedding dump (i32 T, hidden, count, ids, bf16 token-major) to {0}\n  verify {1} --gguf SRC --dump {0}",
                output.join(name).display(),
                artifact.display()
            )
        }
        verify::DumpFormat::Harness => {
            use verify::harness::{gemm_files, rotation_files, HarnessFault};
            let p = verify::profile_for_artifact(&a)?;
            let layers = verify::artifact_layers(&a);
            let object = verify::resolve_name(
                &p,
                &layers,
                &crate::spec::dumps().harness.gemm.gemm_object,
                None,
            )?;
            let mut files = rotation_files(HarnessFault::None)?;
            files.extend(gemm_files(&a, &object, HarnessFault::None)?);
            write_dir_atomic(output, &files)?;
            format!(
                "wrote the engine harness directory (6 rotation cases <case>.in/.signs/.out.f32, gemm oracle of {object}: gemm.payload.bin, gemm.signs.f32, gemm.x.f32, gemm.y.f32; bf16 of the f64 reference) to {0}\n  verify {1} --gguf SRC --oracle-dump {0}",
                output.display(),
                artifact.display()
            )
        }
    };
    println!("{said}");
    Ok(ExitCode::SUCCESS)
}
