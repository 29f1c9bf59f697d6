//! `transcode`: the lossless fixes users need. PTQ1_0 ↔ PQ2_0 (same trits, same f16 scales;
//! a PQ2_0 block holding code 3 cannot become PTQ1_0 and is refused) and the header-only retag
//! of legacy Prism id 42 (g128) to 142.

use crate::codec::transcode::{pq2_to_ptq1, ptq1_to_pq2};
use crate::gguf::{self, GgufWriter, Mode};
use anyhow::{bail, Context};
use std::path::Path;
use std::process::ExitCode;

/// Rewrites every PQ2_0/PTQ1_0 tensor as `to_id`, keeping metadata and other tensors.
pub fn transcode_bytes(src: &[u8], to_id: u32) -> anyhow::Result<(Vec<u8>, usize)> {
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
    let mut data: Vec<Vec<u8>> = Vec::with_capacity(g.tensors.len());
    let mut changed = 0;
    for t in &g.tensors {
        let bytes = g.tensor_data(t);
        let (id, out) = match (t.type_id, to_id) {
            (143, 142) => (142, ptq1_to_pq2(bytes).with_context(|| t.name.to_string())?),
            (142, 143) => (143, pq2_to_ptq1(bytes).with_context(|| t.name.to_string())?),
            (id, _) => (id, bytes.to_vec()),
        };
        changed += usize::from(id != t.type_id);
        w.tensor(t.name, t.dims(), id)?;
        data.push(out);
    }
    let refs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    Ok((w.to_bytes(&refs)?, changed))
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
    super::check_output(output, force)?;
    if input.canonicalize().ok() == output.canonicalize().ok() && output.exists() {
        bail!("refusing to overwrite the input; write to another file");
    }
    let map = crate::fsio::map_file(input)?;
    let (bytes, n, what) = match (to, retag) {
        (Some(_), true) => bail!("use either --to or --retag-42"),
        (None, false) => bail!("nothing to do: pass --to pq2_0|ptq1_0 or --retag-42"),
        (None, true) => {
            let (b, n) = retag_42(&map)?;
            (b, n, "retagged 42 -> 142")
        }
        (Some(t), false) => {
            let ty = crate::synth::model::TernaryType::parse(t)
                .with_context(|| format!("--to {t}: expected pq2_0 or ptq1_0"))?;
            let (b, n) = transcode_bytes(&map, ty.type_id())?;
            (
                b,
                n,
                if ty.type_id() == 142 {
                    "transcoded to PQ2_0"
                } else {
                    "transcoded to PTQ1_0"
                },
            )
        }
    };
    gguf::parse(&bytes, Mode::Spec).context("transcoded file does not re-open")?;
    crate::fsio::write_bytes_atomic(output, &bytes)?;
    println!(
        "{what}: {n} tensors; wrote {} ({} bytes)",
        output.display(),
        bytes.len()
    );
    Ok(ExitCode::SUCCESS)
}
