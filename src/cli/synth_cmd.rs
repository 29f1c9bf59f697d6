//! `synth-template` (and, with the GGUF generator, `synth`).

use std::path::Path;
use std::process::ExitCode;

/// `--with dflash2` as template extras (`cli.usage` for a name it does not know).
pub fn parse_extras(with: Option<&str>) -> crate::Result<crate::mapping::TemplateExtras> {
    let mut extras = crate::mapping::TemplateExtras::default();
    for name in with.into_iter().flat_map(|w| w.split(',')).map(str::trim) {
        match name {
            "dflash2" => extras.dflash2 = true,
            other => {
                return Err(crate::Error::new(
                    crate::ErrorClass::CliUsage,
                    "--with",
                    format!(
                        "'{}' is not an optional namespace (known: dflash2)",
                        other.escape_debug()
                    ),
                ))
            }
        }
    }
    Ok(extras)
}

/// `synth-template`: writes the groupwise-int template of a profile.
pub fn template(
    profile: &str,
    with: Option<&str>,
    output: &Path,
    force: bool,
) -> crate::Result<ExitCode> {
    let extras = parse_extras(with)?;
    super::check_output(output, force, &[])?;
    let p = super::profile(profile)?;
    let t0 = std::time::Instant::now();
    let dir = crate::synth::template::write_template_with(&p, &extras, output)?;
    let size = super::file_len(output)?;
    println!(
        "wrote {} ({} objects, {} bytes, model_id {}, weights_id {}) in {:.2}s",
        output.display(),
        dir.objects.len(),
        size,
        dir.identity.model_id,
        dir.identity.weights_id,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// `synth`: writes a synthetic GGUF of a profile (or of some of its layers).
pub fn model(
    profile: &str,
    ty: crate::codec::TernaryType,
    seed: u64,
    layers: Option<&str>,
    output: &Path,
    force: bool,
) -> crate::Result<ExitCode> {
    use crate::synth::model::{write_model_file_layers, writer_for_layers};
    super::check_output(output, force, &[])?;
    let p = super::profile(profile)?;
    let layers = super::pack_cmd::parse_layers(layers)?;
    let total = writer_for_layers(&p, ty, seed, layers.as_deref())?
        .0
        .file_len()?;
    let bar = super::progress_bar(total, "synth");
    let t0 = std::time::Instant::now();
    write_model_file_layers(&p, ty, seed, layers.as_deref(), output, |n| bar.inc(n))?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "wrote {} ({} {}, seed {seed}, {} bytes) in {:.2}s ({:.0} MB/s)",
        output.display(),
        p.name,
        ty.name(),
        total,
        secs,
        total as f64 / secs / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// `oracle-gguf`: writes the fixture the gguf-py oracle decodes.
pub fn oracle(seed: u64, output: &Path, force: bool) -> crate::Result<ExitCode> {
    super::check_output(output, force, &[])?;
    let bytes = crate::synth::oracle::oracle_gguf(seed)?;
    crate::fsio::write_bytes_atomic(output, &bytes)?;
    println!("wrote {} ({} bytes)", output.display(), bytes.len());
    Ok(ExitCode::SUCCESS)
}
