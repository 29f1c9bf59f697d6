//! `pack`, `pack --check`, `unpack` and `demo`.

use crate::gguf::{self, Mode};
use crate::ninfer::Artifact;
use crate::pack::{self, PackOptions};
use crate::text::escape;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// `--layers 0,3` as layer numbers (`cli.usage` for anything else; which of them the GGUF
/// holds, and duplicates, are the packer's check).
pub fn parse_layers(layers: Option<&str>) -> crate::Result<Option<Vec<u64>>> {
    layers
        .map(|list| {
            list.split(',')
                .map(|x| {
                    x.trim().parse::<u64>().map_err(|e| {
                        crate::Error::new(
                            crate::ErrorClass::CliUsage,
                            "--layers",
                            format!("'{}' is not a layer number ({e})", x.escape_debug()),
                        )
                    })
                })
                .collect::<crate::Result<Vec<_>>>()
        })
        .transpose()
}

// The arguments of `pack` (the subcommand's help text is the `Command::Pack` doc comment).
#[derive(clap::Args, Debug)]
pub struct PackArgs {
    /// The source GGUF (PQ2_0 or PTQ1_0).
    #[arg(long)]
    pub gguf: PathBuf,
    /// The groupwise-int v2 template.
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// The .ninfer artifact to write (not needed with --check).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Produce only these layers (comma-separated, a filter over the layers the GGUF holds).
    #[arg(long)]
    pub layers: Option<String>,
    /// The model profile by name (reduced GGUFs whose hparams do not identify it).
    #[arg(long)]
    pub profile: Option<String>,
    /// Leave these borrowed namespaces out (comma-separated: vision, mtp, dflash2, or any other
    /// namespace the template borrows), as tools/pack.py's --skip-* filters do.
    #[arg(long)]
    pub skip: Option<String>,
    /// The minimal artifact: frontend, sign table and one full-attention layer (the first
    /// selected), as tools/pack.py's layer3 mode writes.
    #[arg(long)]
    pub minimal: bool,
    /// Pre-flight only: geometry, byte round trip, decode equality, scale plausibility.
    #[arg(long)]
    pub check: bool,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// `pack`: maps, parses and plans the GGUF and template once (the plan sizes the progress
/// bar), then writes.
pub fn pack(args: PackArgs) -> crate::Result<ExitCode> {
    let PackArgs {
        gguf,
        template,
        output,
        layers,
        profile,
        skip,
        minimal,
        check,
        force,
    } = args;
    let opts = PackOptions {
        layers: parse_layers(layers.as_deref())?,
        profile,
        skip: parse_skip(skip.as_deref())?,
        minimal,
    };
    if check {
        return preflight(&gguf, &opts);
    }
    let template = template.ok_or_else(|| {
        super::usage(
            "--template",
            "required unless --check (the groupwise-int template to map onto)",
        )
    })?;
    let output = output.ok_or_else(|| super::usage("-o/--output", "required unless --check"))?;
    super::check_output(&output, force, &[&gguf, &template])?;
    let inputs = pack::PackInputs::map(&gguf, &template)?;
    let packer = pack::Packer::open(&inputs, &opts)?;
    let summary = packer.summary().clone();
    let total = packer.size();
    let bar = super::progress_bar(total, "pack");
    let t0 = Instant::now();
    let dir = packer.write(&output, &mut |n| bar.inc(n))?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let ternary = dir
        .objects
        .iter()
        .filter(|o| o.ternary_type().is_some())
        .count();
    println!(
        "packed {} -> {}: {} objects ({} ternary), {} bytes, weights_id {} in {:.2}s ({:.0} MB/s)",
        escape(&gguf.display().to_string()),
        escape(&output.display().to_string()),
        dir.objects.len(),
        ternary,
        total,
        escape(&dir.identity.weights_id),
        secs,
        total as f64 / secs / 1e6
    );
    for line in summary.lines() {
        println!("  {}", escape(&line));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--skip vision,mtp` as namespace names (a trailing slash is dropped; `cli.usage` for an
/// empty name). Which names the template borrows is the packer's check.
pub fn parse_skip(skip: Option<&str>) -> crate::Result<Vec<String>> {
    let Some(list) = skip else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(|x| {
            let name = x.trim().trim_end_matches('/');
            if name.is_empty() || name.contains('/') {
                return Err(crate::Error::new(
                    crate::ErrorClass::CliUsage,
                    "--skip",
                    format!(
                        "'{}' is not a namespace name (vision, mtp, dflash2, ...)",
                        x.escape_debug()
                    ),
                ));
            }
            Ok(name.to_string())
        })
        .collect()
}

fn preflight(gguf: &Path, opts: &PackOptions) -> crate::Result<ExitCode> {
    let gm = crate::fsio::map_file(gguf)?;
    let g = gguf::parse(&gm, Mode::Strict)?;
    let checks = pack::preflight::preflight(&g, opts, 8)?;
    let failed = checks.iter().filter(|c| !c.ok).count();
    for c in &checks {
        println!(
            "{} {:<48} {}",
            if c.ok { "PASS" } else { "FAIL" },
            escape(&c.what),
            escape(&c.detail)
        );
    }
    println!("pre-flight: {} checks, {} failed", checks.len(), failed);
    // The last line is the verdict, worded as check-reader and check-kernel word it.
    println!("RESULT: {}", if failed == 0 { "PASSED" } else { "FAILED" });
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Rebuilds the ternary tensors; returns (tensors, identical, bytes).
pub fn prove(artifact: &Path, gguf: &Path) -> crate::Result<(usize, usize, u64)> {
    let am = crate::fsio::map_file(artifact)?;
    let gm = crate::fsio::map_file(gguf)?;
    let a = Artifact::parse(&am)?;
    let g = gguf::parse(&gm, Mode::Strict)?;
    let r = pack::unpack::prove(&g, &a)?;
    let not_held = pack::unpack::objects_not_held(&g, &a)?;
    if !not_held.is_empty() {
        println!(
            "unpack: {} ternary objects the GGUF can produce are not in the artifact (a reduced artifact), their tensors not proven: {}",
            not_held.len(),
            escape(&not_held.join(", "))
        );
    }
    for x in r.iter().filter(|x| !x.identical) {
        eprintln!("  DIFFERS: {} ({} bytes)", escape(&x.name), x.bytes);
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
) -> crate::Result<ExitCode> {
    if let Some(o) = output {
        super::check_output(o, force, &[artifact, gguf])?;
    }
    let t0 = Instant::now();
    let (n, same, bytes) = prove(artifact, gguf)?;
    println!(
        "unpack proof: {same}/{n} ternary tensors byte-identical to {} ({bytes} bytes rebuilt) in {:.2}s",
        escape(&gguf.display().to_string()),
        t0.elapsed().as_secs_f64()
    );
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
            let t = g.tensor(name).ok_or_else(|| {
                crate::Error::new(
                    crate::ErrorClass::InternalInvariant,
                    name.clone(),
                    "a rebuilt tensor the GGUF does not name",
                )
            })?;
            w.tensor(name, t.dims(), t.type_id)?;
        }
        let data: Vec<&[u8]> = rebuilt.iter().map(|(_, b)| b.as_slice()).collect();
        crate::fsio::write_bytes_atomic(o, &w.to_bytes(&data)?)?;
        println!(
            "wrote {} (metadata of the source + {} ternary tensors rebuilt from the artifact)",
            escape(&o.display().to_string()),
            rebuilt.len()
        );
    }
    Ok(if same == n {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
