//! Mainline Q1_0 (id 41): 18 B / 128 weights, `d | qs[16]` — scale first.
//!
//! Element j is bit `j % 8` (LSB first) of byte `j / 8`; value `bit ? +d : −d`
//! (a negation, as in ggml, so a NaN scale keeps or flips its sign bit accordingly).

use super::{f16_to_f32, f32_to_f16, read_u16};

/// Elements per block.
pub const BLOCK_ELEMS: usize = 128;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 18;

/// One block's bytes.
pub type Block = [u8; BLOCK_BYTES];

/// The 128 sign bits (1 = +d) in element order.
pub fn bits(block: &Block) -> [u8; BLOCK_ELEMS] {
    std::array::from_fn(|j| (block[2 + j / 8] >> (j % 8)) & 1)
}

/// Packs bits (low bit used) and the f16 scale bits.
pub fn encode_block(bits: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    out[..2].copy_from_slice(&d_bits.to_le_bytes());
    for (j, &b) in bits.iter().enumerate() {
        out[2 + j / 8] |= (b & 1) << (j % 8);
    }
    out
}

/// ggml's `quantize_row_q1_0_ref`: `d = Σ|x| / 128` (summed in element order, f32),
/// bit = `x >= 0`.
pub fn quantize_block(x: &[f32; BLOCK_ELEMS]) -> Block {
    let mut sum_abs = 0.0f32;
    for &v in x {
        sum_abs += v.abs();
    }
    let d = sum_abs / BLOCK_ELEMS as f32;
    let bits: [u8; BLOCK_ELEMS] = std::array::from_fn(|j| (x[j] >= 0.0) as u8);
    encode_block(&bits, f32_to_f16(d))
}

/// Scalar reference decode of one block (straight from the formula).
pub fn decode_block_ref(block: &Block, out: &mut [f32; BLOCK_ELEMS]) {
    let d = f16_to_f32(read_u16(block, 0));
    for (j, o) in out.iter_mut().enumerate() {
        *o = if (block[2 + j / 8] >> (j % 8)) & 1 == 1 {
            d
        } else {
            -d
        };
    }
}

pub(crate) fn decode_rows_ref(bytes: &[u8], out: &mut [f32]) {
    super::each_block(bytes, out, decode_block_ref);
}

/// Not a hot path in this suite: the same loop per byte, 8 outputs at a time.
pub(crate) fn decode_rows(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK_ELEMS))
    {
        let d = f16_to_f32(read_u16(blk, 0));
        let nd = -d;
        for (c, &b) in o.chunks_exact_mut(8).zip(&blk[2..]) {
            for (k, v) in c.iter_mut().enumerate() {
                *v = if (b >> k) & 1 == 1 { d } else { nd };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_block() {
        // x: 1.0, −3.0, 0.0, then 125 × 0.0 → Σ|x| = 4, d = 4/128 = 0.03125 = 2^-5 (f16 0x2800).
        // bits: 1 (1 ≥ 0), 0, 1 (0 ≥ 0), 1, ... → byte 0 = 0b1111_1101 = 0xfd, rest 0xff.
        let mut x = [0f32; 128];
        x[0] = 1.0;
        x[1] = -3.0;
        let b = quantize_block(&x);
        assert_eq!(&b[..3], &[0x00, 0x28, 0xfd]);
        assert!(b[3..].iter().all(|&v| v == 0xff));
        let mut y = [0f32; 128];
        decode_block_ref(&b, &mut y);
        assert_eq!(&y[..3], &[0.03125, -0.03125, 0.03125]);
    }
}
