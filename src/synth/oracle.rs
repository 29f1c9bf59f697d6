//! The GGUF cross-checked against the independent oracle (PyPI gguf==0.19.0): every type both
//! sides decode (TQ1_0, TQ2_0, Q8_0, F16, BF16, F32), as quantizer output, as blocks of random
//! bytes (non-canonical base-3 bytes, every scale pattern incl. inf/NaN/subnormal) and as blocks
//! made only of the 13 non-canonical qs bytes.

use crate::codec::{base3, Codec};
use crate::error::Result;
use crate::gguf::{GgufWriter, MetaValue};
use crate::rng::Rng;

/// (name, ggml type id, ne, bytes) of one oracle tensor.
pub type OracleTensor = (String, u32, Vec<u64>, Vec<u8>);

/// Every oracle tensor.
pub fn oracle_tensors(seed: u64) -> Result<Vec<OracleTensor>> {
    let mut out = Vec::new();
    let mut rng = Rng::for_name(seed, "oracle");
    let normals = |rng: &mut Rng, n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| ((rng.unit() - 0.5) * 4.0 * (rng.unit() + 0.01)) as f32)
            .collect()
    };
    for (codec, id) in [(Codec::Tq1_0, 34u32), (Codec::Tq2_0, 35), (Codec::Q8_0, 8)] {
        let be = codec.block_elems();
        let rows = 8usize;
        let k = be * 4;
        // Quantizer output of smooth data.
        let x = normals(&mut rng, rows * k);
        out.push((
            format!("{}.quantized", codec.name()),
            id,
            vec![k as u64, rows as u64],
            codec.quantize_to_vec(&x)?,
        ));
        // Random bytes: every byte value in every position over enough blocks, any scale bits.
        let mut b = vec![0u8; codec.bytes_for(rows * k * 8)?];
        rng.fill(&mut b);
        out.push((
            format!("{}.random_bytes", codec.name()),
            id,
            vec![k as u64, (rows * 8) as u64],
            b,
        ));
    }
    // Non-canonical base-3 bytes only (TQ1_0 qs and qh), with a finite scale.
    let nonc_qs: Vec<u8> = (0..=255u8)
        .filter(|&b| !base3::is_canonical_qs(b))
        .collect();
    let nonc_qh: Vec<u8> = (0..=255u8)
        .filter(|&b| !base3::is_canonical_qh(b))
        .collect();
    let mut blocks = Vec::new();
    for i in 0..64usize {
        for j in 0..48 {
            blocks.push(nonc_qs[(i + j) % nonc_qs.len()]);
        }
        for j in 0..4 {
            blocks.push(nonc_qh[(7 * i + j) % nonc_qh.len()]);
        }
        blocks.extend_from_slice(&crate::codec::f32_to_f16(0.25 + i as f32 / 64.0).to_le_bytes());
    }
    out.push(("TQ1_0.noncanonical".into(), 34, vec![256, 64], blocks));
    // Direct types: every bit pattern class.
    let mut f16 = vec![0u8; 2 * 65536];
    for (i, c) in f16.chunks_exact_mut(2).enumerate() {
        c.copy_from_slice(&(i as u16).to_le_bytes());
    }
    out.push(("F16.all_patterns".into(), 1, vec![256, 256], f16));
    let mut bf16 = vec![0u8; 2 * 4096];
    rng.fill(&mut bf16);
    out.push(("BF16.random".into(), 30, vec![64, 64], bf16));
    let f32s: Vec<u8> = normals(&mut rng, 1024)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    out.push(("F32.values".into(), 0, vec![1024], f32s));
    Ok(out)
}

/// The oracle GGUF bytes.
pub fn oracle_gguf(seed: u64) -> Result<Vec<u8>> {
    let tensors = oracle_tensors(seed)?;
    let mut w = GgufWriter::new();
    w.kv("general.architecture", MetaValue::str("oracle"));
    w.kv(
        "general.name",
        MetaValue::str("ninfer-ternary gguf-py oracle fixture"),
    );
    for (name, id, ne, _) in &tensors {
        w.tensor(name, ne, *id)?;
    }
    let data: Vec<&[u8]> = tensors.iter().map(|t| t.3.as_slice()).collect();
    w.to_bytes(&data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn oracle_file_parses_strictly_and_is_deterministic() {
        let a = super::oracle_gguf(1).unwrap();
        assert_eq!(a, super::oracle_gguf(1).unwrap());
        let g = crate::gguf::parse(&a, crate::gguf::Mode::Strict).unwrap();
        assert_eq!(g.tensors.len(), 10);
    }
}
