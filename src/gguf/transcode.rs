//! Whole-file lossless fixes, streamed from the (mapped) input so memory stays bounded by a
//! small buffer and the tensor-info list, never by the metadata or the tensor data:
//! * [`transcode`]: every PQ2_0/PTQ1_0 tensor rewritten as the other format (same trits, same
//!   f16 scale bits), the KV block copied verbatim, other tensors copied;
//! * [`retag_legacy`](crate::gguf::transcode::retag_legacy): the header-only retag of tensors resolved to a layout the table marks
//!   `retag_to` (legacy Prism id 42 → 142), the rest of the file copied verbatim.

use super::{Gguf, GgufWriter, TensorInfo};
use crate::codec::transcode::{pq2_to_ptq1_into_at, ptq1_to_pq2_into};
use crate::codec::TernaryType;
use crate::error::{Error, ErrorClass as C, Result};
use std::io::Write;

/// Blocks converted per step: 4096 blocks are ≤ 136 KiB of output.
const CHUNK_BLOCKS: usize = 4096;

/// Length of the fixed header (magic, version, tensor_count, kv_count).
const HEADER_BYTES: usize = 24;

/// What a tensor becomes: its target format when it is the other ternary format.
fn target_of(t: &TensorInfo<'_>, to: TernaryType) -> Option<TernaryType> {
    TernaryType::of_ggml(t.ggml)
        .filter(|&from| from != to)
        .map(|_| to)
}

fn werr(what: &str, e: std::io::Error) -> Error {
    Error::new(C::IoWrite, what, e.to_string())
}

/// Rewrites every tensor of the other ternary format as `to` into `out`, keeping the KV block
/// byte for byte and the other tensors as they are. Returns the number of tensors changed.
pub fn transcode<W: Write>(g: &Gguf<'_>, to: TernaryType, out: W) -> Result<(W, usize)> {
    let mut w = GgufWriter::new();
    w.set_layout_alignment(g.alignment)?;
    for t in &g.tensors {
        match target_of(t, to) {
            Some(ty) => w.tensor_as(t.name, t.dims(), ty.ggml())?,
            None => w.tensor_as(t.name, t.dims(), t.ggml)?,
        };
    }
    let kv_block = usize::try_from(g.tensor_info_offset)
        .ok()
        .and_then(|end| g.bytes().get(HEADER_BYTES..end))
        .ok_or_else(|| Error::new(C::GgufTruncated, "kv block", "KV block outside the file"))?;
    let mut s = w.stream_with_kv_block(out, g.kvs.len() as u64, kv_block)?;
    let mut changed = 0;
    for t in &g.tensors {
        let bytes = g.tensor_data(t);
        match target_of(t, to) {
            Some(ty) => {
                s.write_tensor_with(|o| convert(t, bytes, ty, o))?;
                changed += 1;
            }
            None => s.write_tensor(bytes)?,
        }
    }
    Ok((s.finish()?, changed))
}

/// Converts a whole run of blocks of `to.other()` into `to`, `CHUNK_BLOCKS` at a time; returns
/// the bytes written. Errors name the tensor, the block and the absolute byte offset.
fn convert<W: Write>(
    t: &TensorInfo<'_>,
    bytes: &[u8],
    to: TernaryType,
    out: &mut W,
) -> Result<u64> {
    let in_tensor = |e: Error| {
        e.map_offset(|o| o.and_then(|o| o.checked_add(t.abs_offset)))
            .map_field(|f| format!("tensor '{}' {f}", t.name))
    };
    let (from_bb, to_bb) = (to.other().block_bytes(), to.block_bytes());
    // The whole length first: a partial block is `codec.length` before anything is written.
    to.other()
        .codec()
        .blocks_in(bytes.len())
        .map_err(in_tensor)?;
    let mut buf = vec![0u8; CHUNK_BLOCKS * to_bb];
    let mut wrote = 0u64;
    for (k, src) in bytes.chunks(CHUNK_BLOCKS * from_bb).enumerate() {
        let dst = &mut buf[..src.len() / from_bb * to_bb];
        match to {
            TernaryType::Pq2_0 => ptq1_to_pq2_into(src, dst),
            TernaryType::Ptq1_0 => pq2_to_ptq1_into_at(src, dst, k * CHUNK_BLOCKS),
        }
        .map_err(in_tensor)?;
        out.write_all(dst).map_err(|e| werr(t.name, e))?;
        wrote += dst.len() as u64;
    }
    Ok(wrote)
}

/// Byte offset of tensor `t`'s type field inside its tensor-info record: u64 name length,
/// name, u32 n_dims, u64 dims[n_dims], then the u32 type.
fn type_field_offset(t: &TensorInfo<'_>) -> Option<u64> {
    t.info_offset
        .checked_add(8 + t.name.len() as u64 + 4)?
        .checked_add(8 * t.n_dims as u64)
}

/// Copies the file to `out` with the type id of every tensor whose resolved layout has a
/// `retag_to` replaced by that id (header only; data unchanged). Returns the number retagged.
pub fn retag_legacy<W: Write>(g: &Gguf<'_>, mut out: W) -> Result<(W, usize)> {
    let src = g.bytes();
    let mut patches: Vec<(usize, u32, &str)> = Vec::new();
    for t in &g.tensors {
        let Some(new_id) = t.ggml.retag_to else {
            continue;
        };
        let at = type_field_offset(t)
            .and_then(|a| usize::try_from(a).ok())
            .filter(|&a| src.get(a..a + 4) == Some(&t.type_id.to_le_bytes()[..]))
            .ok_or_else(|| {
                Error::at(
                    C::GgufTensorType,
                    t.info_offset,
                    t.name,
                    format!(
                        "type field of tensor '{}' not found where its record puts it",
                        t.name
                    ),
                )
            })?;
        patches.push((at, new_id, t.name));
    }
    // Tensor infos are in file order, so the patches ascend.
    let mut pos = 0usize;
    for &(at, id, name) in &patches {
        out.write_all(&src[pos..at]).map_err(|e| werr(name, e))?;
        out.write_all(&id.to_le_bytes())
            .map_err(|e| werr(name, e))?;
        pos = at + 4;
    }
    out.write_all(&src[pos..]).map_err(|e| werr("output", e))?;
    Ok((out, patches.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::{parse, Mode};

    /// A GGUF with `general.alignment` after another key (so a verbatim KV block is visible),
    /// one F32 tensor and one `ty` tensor of `blocks` blocks filled by `fill`.
    fn file(ty: TernaryType, blocks: u64, fill: impl Fn(usize) -> u8) -> Vec<u8> {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "hostile");
        w.alignment(64).unwrap();
        w.kv("hostile.tail", MetaValue::U32(7));
        w.tensor("f", &[4], 0).unwrap();
        w.tensor_as("t", &[128 * blocks], ty.ggml()).unwrap();
        let data: Vec<u8> = (0..blocks as usize * ty.block_bytes()).map(fill).collect();
        w.to_bytes(&[&[1u8; 16], &data]).unwrap()
    }
    use crate::gguf::MetaValue;

    #[test]
    fn round_trip_across_chunks_is_the_identity_and_keeps_the_kv_block() {
        let blocks = CHUNK_BLOCKS as u64 * 2 + 3;
        // Canonical PTQ1_0 blocks: trits from a pattern, scale bits from the index.
        let mut src = Vec::new();
        for b in 0..blocks as usize {
            let trits: [u8; 128] = std::array::from_fn(|i| ((i * 7 + b) % 3) as u8);
            src.extend_from_slice(&crate::codec::ptq1::encode_block(&trits, b as u16));
        }
        let bytes = file(TernaryType::Ptq1_0, blocks, |i| src[i]);
        let g = parse(&bytes, Mode::Strict).unwrap();
        let (pq, n) = transcode(&g, TernaryType::Pq2_0, Vec::new()).unwrap();
        assert_eq!(n, 1);
        let gp = parse(&pq, Mode::Strict).unwrap();
        assert_eq!(
            gp.tensor("t").unwrap().type_id,
            TernaryType::Pq2_0.type_id()
        );
        let kv = |g: &Gguf<'_>| g.bytes()[24..g.tensor_info_offset as usize].to_vec();
        assert_eq!(kv(&gp), kv(&g), "KV block verbatim");
        let (back, _) = transcode(&gp, TernaryType::Ptq1_0, Vec::new()).unwrap();
        assert_eq!(back, bytes);
    }

    #[test]
    fn code_3_past_the_first_chunk_names_its_block_and_file_offset() {
        let blocks = CHUNK_BLOCKS as u64 + 10;
        let bad_block = CHUNK_BLOCKS + 4;
        // 0x55: every code 1 (a zero trit); one byte of qs holds code 3 at element 4 * 5 + 1.
        let at = bad_block * 34 + 2 + 5;
        let bytes = file(TernaryType::Pq2_0, blocks, |i| {
            if i == at {
                0x5d
            } else {
                0x55
            }
        });
        let g = parse(&bytes, Mode::Strict).unwrap();
        let e = transcode(&g, TernaryType::Ptq1_0, Vec::new()).unwrap_err();
        assert_eq!(e.class(), C::CodecUnsupported);
        assert_eq!(e.field(), format!("tensor 't' block[{bad_block}].qs[5]"));
        let t = g.tensor("t").unwrap();
        assert_eq!(e.offset(), Some(t.abs_offset + at as u64));
        assert_eq!(g.bytes()[e.offset().unwrap() as usize], 0x5d);
    }

    #[test]
    fn retag_changes_only_the_type_field_of_legacy_tensors() {
        let spec = crate::spec::get();
        let legacy = spec.ggml_type_named("Q2_0_PRISM_LEGACY").unwrap();
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "hostile");
        w.tensor("f", &[8], 0).unwrap();
        w.tensor_as("q", &[128 * 64], legacy).unwrap();
        let bytes = w.to_bytes(&[&[0u8; 32], &[0x55u8; 64 * 34]]).unwrap();
        let g = parse(&bytes, Mode::Strict).unwrap();
        let (out, n) = retag_legacy(&g, Vec::new()).unwrap();
        assert_eq!(n, 1);
        let diff: Vec<usize> = (0..out.len()).filter(|&k| out[k] != bytes[k]).collect();
        assert_eq!(diff.len(), 1, "42 -> 142 differs in one byte");
        let q = parse(&out, Mode::Strict).unwrap();
        assert_eq!(q.tensor("q").unwrap().type_id, legacy.retag_to.unwrap());
        // Nothing to retag: a verbatim copy.
        let (same, n) = retag_legacy(&q, Vec::new()).unwrap();
        assert_eq!((same, n), (out, 0));
    }
}
