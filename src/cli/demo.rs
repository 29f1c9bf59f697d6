//! `demo`: the whole pipeline on a synthetic profile — template, both ternary formats
//! synthesized, packed, proven lossless by unpack, verified with reference dumps (all gates),
//! one mutation that must fail, and the kernel conformance step.

use super::pack_cmd::prove;
use crate::ninfer::Artifact;
use crate::pack::{self, PackOptions};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Runs the demo into `dir` for `profile` with `seed`; exit 0 only if every step passed.
pub fn demo(dir: &Path, profile: &str, seed: u64, force: bool) -> crate::Result<ExitCode> {
    use crate::synth::{model, template};
    let p = super::profile(profile)?;
    // The demo folder is an output like any other (fsio::claim_output): a new folder, or with
    // --force one this tool wrote (its marker) or an empty one; a folder holding other files
    // is never touched. Every file below is then written under that claim.
    super::check_output_dir(dir, force, &[])?;
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::Error::io(crate::ErrorClass::IoWrite, dir, e))?;
    crate::fsio::write_file(
        &dir.join(crate::fsio::MARKER),
        b"ninfer-ternary demo output\n",
        crate::fsio::Replace::Allow,
    )?;
    let t_all = Instant::now();
    let tpl = dir.join(format!("{profile}-template.ninfer"));
    let t0 = Instant::now();
    template::write_template(&p, &tpl)?;
    println!(
        "template   {:<44} {:>12} bytes  {:>7.3}s",
        tpl.display(),
        super::file_len(&tpl)?,
        t0.elapsed().as_secs_f64()
    );
    let mut ok = true;
    for ty in [model::TernaryType::Pq2_0, model::TernaryType::Ptq1_0] {
        let lower = ty.name().to_lowercase();
        let src = dir.join(format!("{profile}-{lower}.gguf"));
        let t0 = Instant::now();
        model::write_model_file(&p, ty, seed, &src, |_| {})?;
        println!(
            "synth      {:<44} {:>12} bytes  {:>7.3}s",
            src.display(),
            super::file_len(&src)?,
            t0.elapsed().as_secs_f64()
        );
        let out = dir.join(format!("{profile}-{lower}.ninfer"));
        let t0 = Instant::now();
        let d = pack::pack_file(&src, &tpl, &out, &PackOptions::default(), &mut |_| {})?;
        println!(
            "pack       {:<44} {:>12} bytes  {:>7.3}s  ({} objects, weights_id {})",
            out.display(),
            super::file_len(&out)?,
            t0.elapsed().as_secs_f64(),
            d.objects.len(),
            d.identity.weights_id
        );
        let t0 = Instant::now();
        let (n, same, bytes) = prove(&out, &src)?;
        println!("unpack     {same}/{n} ternary tensors byte-identical ({bytes} bytes)                  {:>7.3}s", t0.elapsed().as_secs_f64());
        ok &= same == n && n > 0;
        ok &= demo_verify(dir, &out, &src, &tpl)?;
    }
    // Kernel conformance: a reference kernel passes, a wrong variant fails (spec/kernels.json).
    ok &= super::check_kernel::demo_step()?;
    println!(
        "demo {} in {:.2}s",
        if ok { "PASSED" } else { "FAILED" },
        t_all.elapsed().as_secs_f64()
    );
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The demo's verifier step: reference dumps, all ten gates, and one mutation that must fail.
fn demo_verify(dir: &Path, artifact: &Path, src: &Path, tpl: &Path) -> crate::Result<bool> {
    use crate::verify::{self, Options};
    let t0 = Instant::now();
    let stem = artifact
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let dumps = dir.join(format!("{stem}-dumps"));
    let am = crate::fsio::map_file(artifact)?;
    let a = Artifact::parse(&am)?;
    // Replaces the dumps of an earlier run only as the folder's claim allows (fsio).
    verify::dumps::write_reference(&a, &dumps, None, 0, Default::default())?;
    let (gm, tm) = (crate::fsio::map_file(src)?, crate::fsio::map_file(tpl)?);
    let (emb, ora) = (dumps.join("embedding"), dumps.join("oracles"));
    let opts = || Options {
        template: Some(&tm),
        sweep: true,
        dump: Some(&emb),
        oracle_dump: Some(&ora),
        oracle_object: None,
        profile: None,
        dump_format: None,
        minimal: false,
    };
    let (an, gn) = (verify::file_name(artifact), verify::file_name(src));
    let r = verify::verify(&an, &am, &gn, &gm, opts())?;
    use crate::verify::Verdict;
    println!(
        "verify     {} passed, {} failed, {} skipped (all ten gates, reference dumps){:>14.3}s",
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Skip),
        t0.elapsed().as_secs_f64()
    );
    // Negative control: a permutation bug that keeps every byte count right must be caught.
    let bad = verify::mutate::mutate_bytes(&am, "perm48-on-rows")?;
    let m = verify::verify(&an, &bad, &gn, &gm, opts())?;
    println!(
        "verify     perm48-on-rows mutant: {} (failed: {})",
        if m.ok() {
            "PASSED -- the control survived"
        } else {
            "FAILED, as it must"
        },
        m.failed_steps().join(", ")
    );
    Ok(r.ok() && r.count(Verdict::Skip) == 0 && !m.ok())
}
