//! `pack`, `pack --check`, `unpack` and `demo`.

use crate::gguf::{self, Mode};
use crate::ninfer::Artifact;
use crate::pack::{self, PackOptions};
use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// `--layers 0,3` as layer numbers.
pub fn parse_layers(layers: Option<&str>) -> anyhow::Result<Option<Vec<u64>>> {
    layers
        .map(|s| {
            s.split(',')
                .map(|x| {
                    x.trim()
                        .parse::<u64>()
                        .with_context(|| format!("--layers: '{x}' is not a layer number"))
                })
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .transpose()
}

pub fn pack(
    gguf: &Path,
    template: Option<&Path>,
    output: Option<&Path>,
    layers: Option<&str>,
    profile: Option<&str>,
    check: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    if check {
        return preflight(gguf);
    }
    let template =
        template.context("--template is required (the groupwise-int template to map onto)")?;
    let output = output.context("-o/--output is required")?;
    super::check_output(output, force, &[gguf, template])?;
    let layers = parse_layers(layers)?;
    let opts = PackOptions {
        layers,
        profile: profile.map(str::to_string),
    };
    let total = {
        let gm = crate::fsio::map_file(gguf)?;
        let tm = crate::fsio::map_file(template)?;
        let g = gguf::parse(&gm, Mode::Strict)?;
        let t = Artifact::parse(&tm)?;
        let plan = pack::plan_pack(&g, &t, &opts)?;
        crate::ninfer::writer::file_size(&plan.directory)
    };
    let bar = super::progress_bar(total, "pack");
    let t0 = Instant::now();
    let dir = pack::pack_file(gguf, template, output, &opts, &mut |n| bar.inc(n))?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let ternary = dir
        .objects
        .iter()
        .filter(|o| o.format_layout().is_some_and(|(f, _)| f.ends_with("_G128")))
        .count();
    println!(
        "packed {} -> {}: {} objects ({} ternary), {} bytes, weights_id {} in {:.2}s ({:.0} MB/s)",
        gguf.display(),
        output.display(),
        dir.objects.len(),
        ternary,
        total,
        dir.identity.weights_id,
        secs,
        total as f64 / secs / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

fn preflight(gguf: &Path) -> anyhow::Result<ExitCode> {
    let gm = crate::fsio::map_file(gguf)?;
    let g = gguf::parse(&gm, Mode::Strict)?;
    let checks = pack::preflight::preflight(&g, 8)?;
    let failed = checks.iter().filter(|c| !c.ok).count();
    for c in &checks {
        println!(
            "{} {:<48} {}",
            if c.ok { "PASS" } else { "FAIL" },
            c.what,
            c.detail
        );
    }
    println!("pre-flight: {} checks, {} failed", checks.len(), failed);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Rebuilds the ternary tensors; returns (tensors, identical, bytes).
pub fn prove(artifact: &Path, gguf: &Path) -> anyhow::Result<(usize, usize, u64)> {
    let am = crate::fsio::map_file(artifact)?;
    let gm = crate::fsio::map_file(gguf)?;
    let a = Artifact::parse(&am)?;
    let g = gguf::parse(&gm, Mode::Strict)?;
    let r = pack::unpack::prove(&g, &a)?;
    for x in r.iter().filter(|x| !x.identical) {
        eprintln!("  DIFFERS: {} ({} bytes)", x.name, x.bytes);
    }
    Ok((
        r.len(),
        r.iter().filter(|x| x.identical).count(),
        r.iter().map(|x| x.bytes).sum(),
    ))
}

pub fn unpack(
    artifact: &Path,
    gguf: &Path,
    output: Option<&Path>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(o) = output {
        super::check_output(o, force, &[artifact, gguf])?;
    }
    let t0 = Instant::now();
    let (n, same, bytes) = prove(artifact, gguf)?;
    println!("unpack proof: {same}/{n} ternary tensors byte-identical to {} ({bytes} bytes rebuilt) in {:.2}s", gguf.display(), t0.elapsed().as_secs_f64());
    if let Some(o) = output {
        let am = crate::fsio::map_file(artifact)?;
        let gm = crate::fsio::map_file(gguf)?;
        let a = Artifact::parse(&am)?;
        let g = gguf::parse(&gm, Mode::Strict)?;
        let rebuilt = pack::unpack::rebuild(&g, &a)?;
        let mut w = gguf::GgufWriter::new();
        for kv in &g.kvs {
            w.kv(kv.key, kv.value.to_owned_value());
        }
        for (name, _) in &rebuilt {
            let t = g.tensor(name).expect("rebuilt from the GGUF's names");
            w.tensor(name, t.dims(), t.type_id)?;
        }
        let data: Vec<&[u8]> = rebuilt.iter().map(|(_, b)| b.as_slice()).collect();
        crate::fsio::write_bytes_atomic(o, &w.to_bytes(&data)?)?;
        println!(
            "wrote {} (metadata of the source + {} ternary tensors rebuilt from the artifact)",
            o.display(),
            rebuilt.len()
        );
    }
    Ok(if same == n {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn demo(dir: &Path, profile: &str, seed: u64) -> anyhow::Result<ExitCode> {
    use crate::synth::{model, template};
    let p = super::profile(profile)?;
    std::fs::create_dir_all(dir)?;
    let t_all = Instant::now();
    let tpl = dir.join(format!("{profile}-template.ninfer"));
    let t0 = Instant::now();
    template::write_template(&p, &tpl)?;
    println!(
        "template   {:<44} {:>12} bytes  {:>7.3}s",
        tpl.display(),
        std::fs::metadata(&tpl)?.len(),
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
            std::fs::metadata(&src)?.len(),
            t0.elapsed().as_secs_f64()
        );
        let out = dir.join(format!("{profile}-{lower}.ninfer"));
        let t0 = Instant::now();
        let d = pack::pack_file(&src, &tpl, &out, &PackOptions::default(), &mut |_| {})?;
        println!(
            "pack       {:<44} {:>12} bytes  {:>7.3}s  ({} objects, weights_id {})",
            out.display(),
            std::fs::metadata(&out)?.len(),
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
fn demo_verify(dir: &Path, artifact: &Path, src: &Path, tpl: &Path) -> anyhow::Result<bool> {
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
    if dumps.exists() {
        std::fs::remove_dir_all(&dumps)?;
    }
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
    };
    let (an, gn) = (verify::file_name(artifact), verify::file_name(src));
    let r = verify::verify(&an, &am, &gn, &gm, opts())?;
    use crate::verify::findings::Status;
    println!(
        "verify     {} passed, {} failed, {} skipped (all ten gates, reference dumps){:>14.3}s",
        r.count(Status::Pass),
        r.count(Status::Fail),
        r.count(Status::Skip),
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
    Ok(r.ok() && r.count(Status::Skip) == 0 && !m.ok())
}
