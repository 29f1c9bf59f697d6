//! BeeLlama planar Q2_0 / Q2_0S (ids 53 / 47, a KV-cache type): 10 B / 32 weights,
//! `d | qs[8]` — scale first. Element j → byte `j % 8`, bits `2*(j/8)`; value `(c − 2) · d`
//! (codes 0..3 → −2, −1, 0, +1). Decode only: no quantizer is reproduced here.

use super::{f16_to_f32, read_u16};

/// Elements per block.
pub const BLOCK_ELEMS: usize = 32;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 10;

/// One block's bytes.
pub type Block = [u8; BLOCK_BYTES];

/// `(byte, bit shift)` of element `j`.
pub const fn position(j: usize) -> (usize, u32) {
    (2 + j % 8, 2 * (j / 8) as u32)
}

/// The 32 codes (0..=3) in element order.
pub fn codes(block: &Block) -> [u8; BLOCK_ELEMS] {
    std::array::from_fn(|j| {
        let (b, s) = position(j);
        (block[b] >> s) & 3
    })
}

/// Packs codes (low 2 bits used) and the f16 scale bits.
pub fn encode_block(codes: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    out[..2].copy_from_slice(&d_bits.to_le_bytes());
    for (j, &c) in codes.iter().enumerate() {
        let (b, s) = position(j);
        out[b] |= (c & 3) << s;
    }
    out
}

/// Scalar reference decode of one block (straight from the formula).
pub fn decode_block_ref(block: &Block, out: &mut [f32; BLOCK_ELEMS]) {
    let d = f16_to_f32(read_u16(block, 0));
    for (j, o) in out.iter_mut().enumerate() {
        let (b, s) = position(j);
        *o = (((block[b] >> s) & 3) as f32 - 2.0) * d;
    }
}

pub(crate) fn decode_rows_ref(bytes: &[u8], out: &mut [f32]) {
    super::each_block(bytes, out, decode_block_ref);
}

/// Plane by plane: 8 contiguous outputs per bit pair.
pub(crate) fn decode_rows(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK_ELEMS))
    {
        let d = f16_to_f32(read_u16(blk, 0));
        for p in 0..4 {
            for m in 0..8 {
                o[p * 8 + m] = (((blk[2 + m] >> (2 * p)) & 3) as i32 - 2) as f32 * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_block() {
        // qs[0] = 0b00_01_10_11 = 0x1b: elements 0, 8, 16, 24 have codes 3, 2, 1, 0
        // → (c − 2)·d with d = 1.0 (0x3c00): +1, 0, −1, −2. Other bytes 0xaa = code 2 → 0.
        let mut blk = [0xaau8; BLOCK_BYTES];
        blk[0] = 0x00;
        blk[1] = 0x3c;
        blk[2] = 0x1b;
        let mut out = [0f32; 32];
        decode_block_ref(&blk, &mut out);
        assert_eq!([out[0], out[8], out[16], out[24]], [1.0, 0.0, -1.0, -2.0]);
        assert_eq!(out.iter().filter(|&&v| v == 0.0).count(), 29);
        assert_eq!(encode_block(&codes(&blk), 0x3c00), blk);
    }
}
