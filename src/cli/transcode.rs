//! `transcode`: the lossless fixes users need. PTQ1_0 ↔ PQ2_0 (same trits, same f16 scales;
//! a PQ2_0 block holding code 3 cannot become PTQ1_0 and is refused) and the header-only retag
//! of legacy Prism id 42 (g128) to 142.

use crate::codec::transcode::{pq2_to_ptq1, ptq1_to_pq2};
use crate::gguf::{self, GgufWriter, Mode};
use anyhow::{bail, Context};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Rewrites every PQ2_0/PTQ1_0 tensor as `to_id` into `out`, keeping metadata and the other
/// tensors; one tensor is held in memory at a time. Returns the number of tensors changed.
pub fn transcode_to<W: std::io::Write>(
    src: &[u8],
    to_id: u32,
    out: W,
) -> anyhow::Result<(W, usize)> {
    let g = gguf::parse(src, Mode::Spec)?;
    let mut w = GgufWriter::new();
    if g.get("general.alignment").is_some() {
        w.alignment(g.alignment as u32)?;
    }
    for kv in &g.kvs {
        if kv.key != "general.alignment" {
            w.kv(kv.key, kv.value.to_owned_value());
        }
    }
    let new_id = |t: &gguf::TensorInfo<'_>| match (t.type_id, to_id) {
        (143, 142) => 142,
        (142, 143) => 143,
        (id, _) => id,
    };
    for t in &g.tensors {
        w.tensor(t.name, t.dims(), new_id(t))?;
    }
    let mut s = w.stream(out)?;
    let mut changed = 0;
    for t in &g.tensors {
        let bytes = g.tensor_data(t);
        match (t.type_id, new_id(t)) {
            (143, 142) => {
                s.write_tensor(&ptq1_to_pq2(bytes).with_context(|| t.name.to_string())?)?
            }
            (142, 143) => {
                s.write_tensor(&pq2_to_ptq1(bytes).with_context(|| t.name.to_string())?)?
            }
            _ => s.write_tensor(bytes)?,
        }
        changed += usize::from(new_id(t) != t.type_id);
    }
    Ok((s.finish()?, changed))
}

/// Patches type id 42 → 142 in place for tensors the reader resolved as the legacy g128 layout.
pub fn retag_42(src: &[u8]) -> anyhow::Result<(Vec<u8>, usize)> {
    let g = gguf::parse(src, Mode::Spec)?;
    let mut out = src.to_vec();
    let mut n = 0;
    for t in &g.tensors {
        if t.type_id == 42 && t.ggml.block_elems == 128 {
            // Tensor info: u64 name length, name, u32 n_dims, u64 dims[n_dims], u32 type, u64 offset.
            let at = t.info_offset as usize + 8 + t.name.len() + 4 + 8 * t.n_dims as usize;
            if out[at..at + 4] != 42u32.to_le_bytes() {
                bail!("{}: type field not found at byte {at}", t.name);
            }
            out[at..at + 4].copy_from_slice(&142u32.to_le_bytes());
            n += 1;
        }
    }
    Ok((out, n))
}

pub fn run(
    input: &Path,
    output: &Path,
    to: Option<&str>,
    retag: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    super::check_output(output, force, &[input])?;
    let map = crate::fsio::map_file(input)?;
    let reopen = |tmp: &Path| -> crate::Result<()> {
        let m = crate::fsio::map_file(tmp)?;
        gguf::parse(&m, Mode::Spec).map(|_| ())
    };
    let mut n = 0;
    let what = match (to, retag) {
        (Some(_), true) => bail!("use either --to or --retag-42"),
        (None, false) => bail!("nothing to do: pass --to pq2_0|ptq1_0 or --retag-42"),
        (None, true) => {
            let (b, k) = retag_42(&map)?;
            n = k;
            crate::fsio::write_atomic(
                output,
                |w| w.write_all(&b).map_err(crate::fsio::write_err("output")),
                reopen,
            )?;
            "retagged 42 -> 142"
        }
        (Some(t), false) => {
            let ty = crate::synth::model::TernaryType::parse(t)
                .with_context(|| format!("--to {t}: expected pq2_0 or ptq1_0"))?;
            // Streams tensor by tensor; the output replaces `output` only after it re-opens.
            let mut failure = None;
            let r = crate::fsio::write_atomic(
                output,
                |w| match transcode_to(&map, ty.type_id(), w) {
                    Ok((_, k)) => {
                        n = k;
                        Ok(())
                    }
                    Err(e) => {
                        failure = Some(e);
                        Err(crate::Error::new(
                            crate::ErrorClass::IoWrite,
                            "transcode",
                            "aborted",
                        ))
                    }
                },
                reopen,
            );
            if let Some(e) = failure {
                return Err(e);
            }
            r?;
            if ty.type_id() == 142 {
                "transcoded to PQ2_0"
            } else {
                "transcoded to PTQ1_0"
            }
        }
    };
    let size = std::fs::metadata(output)?.len();
    println!(
        "{what}: {n} tensors; wrote {} ({size} bytes)",
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}
