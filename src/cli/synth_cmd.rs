//! `synth-template` (and, with the GGUF generator, `synth`).

use std::path::Path;
use std::process::ExitCode;

pub fn template(profile: &str, output: &Path, force: bool) -> anyhow::Result<ExitCode> {
    super::check_output(output, force)?;
    let p = super::profile(profile)?;
    let t0 = std::time::Instant::now();
    let dir = crate::synth::template::write_template(&p, output)?;
    let size = std::fs::metadata(output)?.len();
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
