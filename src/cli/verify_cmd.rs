//! `verify`, `mutate` and `dump-reference`.

use crate::ninfer::Artifact;
use crate::verify::{self, report, Options};
use anyhow::{anyhow, Context};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

#[allow(clippy::too_many_arguments)]
pub fn verify(
    artifact: &Path,
    gguf: &Path,
    template: Option<&Path>,
    sweep: bool,
    profile: Option<&str>,
    dump: Option<&Path>,
    dump_format: Option<&str>,
    oracle_dump: Option<&Path>,
    oracle_object: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let am = crate::fsio::map_file(artifact)?;
    let gm = crate::fsio::map_file(gguf)?;
    let tm = template.map(crate::fsio::map_file).transpose()?;
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
        template: tm.as_deref(),
        sweep,
        dump,
        oracle_dump,
        oracle_object,
        profile,
        dump_format,
    };
    let r = verify::verify(
        &verify::file_name(artifact),
        &am,
        &verify::file_name(gguf),
        &gm,
        opts,
    )?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report::json(&r))?);
    } else {
        print!("{}", report::text(&r));
    }
    eprintln!(
        "verify stats: wall {:.3} s, payload bytes read {}, heap peak {}",
        t0.elapsed().as_secs_f64(),
        verify::rows::BYTES_READ.load(std::sync::atomic::Ordering::Relaxed),
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

pub fn mutate(
    artifact: &Path,
    kind: &str,
    output: &Path,
    seed: u64,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let m = verify::mutate::spec(kind)?;
    if m.target == "dumps" {
        super::check_output_dir(output, force, &[artifact])?;
    } else {
        super::check_output(output, force, &[artifact])?;
    }
    if m.target == "dumps" {
        let am = crate::fsio::map_file(artifact)?;
        let a = Artifact::parse(&am)?;
        verify::mutate::mutate_dumps(&a, kind, output, seed)?;
        println!(
            "wrote broken dumps ({kind}: {}) to {}/embedding and {}/oracles; verify must fail: {}",
            m.doc,
            output.display(),
            output.display(),
            m.must_fail.join(", ")
        );
    } else {
        verify::mutate::mutate_file(artifact, kind, output)?;
        println!(
            "wrote {} ({kind}: {}); verify must fail: {}",
            output.display(),
            m.doc,
            m.must_fail.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn dump_reference(
    artifact: &Path,
    output: &Path,
    tokens: Option<&str>,
    seed: u64,
    format: &str,
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
    let am = crate::fsio::map_file(artifact)?;
    let a = Artifact::parse(&am).map_err(|e| anyhow!("{e}"))?;
    match format {
        "native" => {}
        "engine" => {
            std::fs::create_dir_all(output)?;
            let (ids, _, _) = verify::dumps::reference_embedding(&a, tokens.clone())?;
            let path = output.join(format!("embedding.T{}.bin", ids.len()));
            verify::dumps::write_engine_embedding(&a, &path, tokens, false)?;
            println!(
                "wrote the engine-format embedding dump (i32 T, hidden, count, ids, bf16 token-major) to {0}\n  verify {1} --gguf SRC --dump {0}",
                path.display(),
                artifact.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        "harness" => {
            use verify::harness::{write_gemm, write_rotation, HarnessFault};
            write_rotation(output, HarnessFault::None)?;
            let p = verify::profile_for_artifact(&a)?;
            let layers = verify::artifact_layers(&a);
            let object = verify::resolve_name(
                &p,
                &layers,
                &crate::spec::dumps().harness.gemm.gemm_object,
                None,
            )?;
            write_gemm(&a, output, &object, HarnessFault::None)?;
            println!(
                "wrote the engine harness directory (6 rotation cases <case>.in/.signs/.out.f32, gemm oracle of {object}: gemm.payload.bin, gemm.signs.f32, gemm.x.f32, gemm.y.f32; bf16 of the f64 reference) to {0}\n  verify {1} --gguf SRC --oracle-dump {0}",
                output.display(),
                artifact.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        other => anyhow::bail!("--format '{other}': expected native, engine or harness"),
    }
    verify::dumps::write_reference(&a, output, tokens, seed, Default::default())?;
    println!(
        "wrote reference dumps (f64 math, stored f32) to {0}/embedding and {0}/oracles\n  verify {1} --gguf SRC --dump {0}/embedding --oracle-dump {0}/oracles",
        output.display(),
        artifact.display()
    );
    Ok(ExitCode::SUCCESS)
}
