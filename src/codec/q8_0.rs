//! Mainline Q8_0 (id 8): 34 B / 32 weights, `d | qs[32]` (i8); value `q · d`.

use super::{f16_to_f32, f32_to_f16, ggml_amax, read_u16};

/// Elements per block.
pub const BLOCK_ELEMS: usize = 32;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 34;

/// One block's bytes.
pub type Block = [u8; BLOCK_BYTES];

/// Packs 32 signed quants and the f16 scale bits.
pub fn encode_block(qs: &[i8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    out[..2].copy_from_slice(&d_bits.to_le_bytes());
    for (o, &q) in out[2..].iter_mut().zip(qs) {
        *o = q as u8;
    }
    out
}

/// ggml's `quantize_row_q8_0_ref`: `d = amax / 127`, `id = 1/d` (0 if d is 0),
/// stored f16(d), `q = roundf(x·id)` (half away from zero; |q| <= 127 for finite input).
pub fn quantize_block(x: &[f32; BLOCK_ELEMS]) -> Block {
    let amax = ggml_amax(x);
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let qs: [i8; BLOCK_ELEMS] = std::array::from_fn(|j| (x[j] * id).round() as i8);
    encode_block(&qs, f32_to_f16(d))
}

/// Scalar reference decode of one block (straight from the formula).
pub fn decode_block_ref(block: &Block, out: &mut [f32; BLOCK_ELEMS]) {
    let d = f16_to_f32(read_u16(block, 0));
    for (o, &q) in out.iter_mut().zip(&block[2..]) {
        *o = q as i8 as f32 * d;
    }
}

pub(crate) fn decode_rows_ref(bytes: &[u8], out: &mut [f32]) {
    super::each_block(bytes, out, decode_block_ref);
}

/// The reference loop already vectorises; kept as a separate entry for the dispatch table.
pub(crate) fn decode_rows(bytes: &[u8], out: &mut [f32]) {
    decode_rows_ref(bytes, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_block() {
        // amax = 127 → d = 1.0 (0x3c00), id = 1: x = 127 → 127, −2.5 → −3 (away from zero), 0.4 → 0.
        let mut x = [0f32; 32];
        x[0] = 127.0;
        x[1] = -2.5;
        x[2] = 0.4;
        let b = quantize_block(&x);
        assert_eq!(&b[..5], &[0x00, 0x3c, 127, (-3i8) as u8, 0]);
        let mut y = [0f32; 32];
        decode_block_ref(&b, &mut y);
        assert_eq!(&y[..3], &[127.0, -3.0, 0.0]);
    }
}
