//! Mainline TQ2_0 (id 35): 66 B / 256 weights, `qs[64] | d` — scale last.
//!
//! Element e → byte `(e/128)*32 + e%32`, bits `2*((e%128)/32)`; value `(code − 1) · d`
//! (code 3 decodes to +2d, as in ggml).

use super::{f16_to_f32, f32_to_f16, ggml_amax, lroundf};

/// Elements per block.
pub const BLOCK_ELEMS: usize = 256;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 66;
/// Byte offset of the f16 scale `d` (scale last).
pub const SCALE_OFFSET: usize = 64;

/// One block's bytes.
pub type Block = [u8; BLOCK_BYTES];

/// `(byte, bit shift)` of element `e`.
pub const fn position(e: usize) -> (usize, u32) {
    ((e / 128) * 32 + e % 32, 2 * ((e % 128) / 32) as u32)
}

/// The f16 scale bits of a block (scale last).
pub fn scale_bits(block: &Block) -> u16 {
    u16::from_le_bytes([block[SCALE_OFFSET], block[SCALE_OFFSET + 1]])
}

/// The 256 codes (0..=3) in element order.
pub fn codes(block: &Block) -> [u8; BLOCK_ELEMS] {
    std::array::from_fn(|e| {
        let (b, s) = position(e);
        (block[b] >> s) & 3
    })
}

/// Packs codes (low 2 bits used) and the f16 scale bits.
pub fn encode_block(codes: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    for (e, &c) in codes.iter().enumerate() {
        let (b, s) = position(e);
        out[b] |= (c & 3) << s;
    }
    out[SCALE_OFFSET..].copy_from_slice(&d_bits.to_le_bytes());
    out
}

/// ggml's `quantize_row_tq2_0_ref`: `d = amax`, `id = 1/amax`, code `lroundf(x·id) + 1`
/// (clamped to 0..=2, a no-op for finite input).
pub fn quantize_block(x: &[f32; BLOCK_ELEMS]) -> Block {
    let amax = ggml_amax(x);
    let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
    let c: [u8; BLOCK_ELEMS] = std::array::from_fn(|e| (lroundf(x[e] * id).clamp(-1, 1) + 1) as u8);
    encode_block(&c, f32_to_f16(amax))
}

/// Scalar reference decode of one block (straight from the formula).
pub fn decode_block_ref(block: &Block, out: &mut [f32; BLOCK_ELEMS]) {
    let d = f16_to_f32(scale_bits(block));
    for (e, o) in out.iter_mut().enumerate() {
        let (b, s) = position(e);
        *o = (((block[b] >> s) & 3) as f32 - 1.0) * d;
    }
}

pub(crate) fn decode_rows_ref(bytes: &[u8], out: &mut [f32]) {
    super::each_block(bytes, out, decode_block_ref);
}

/// Fast decode on `path`, falling back to the portable loop when the path has no kernel.
pub(crate) fn decode_rows_on(path: super::simd::Path, bytes: &[u8], out: &mut [f32]) {
    if !super::simd::tq2(path, bytes, out) {
        decode_rows_scalar(bytes, out)
    }
}

/// Portable fast decode: per half, per bit pair, 32 contiguous outputs from 32 contiguous bytes.
pub(crate) fn decode_rows_scalar(bytes: &[u8], out: &mut [f32]) {
    let (blocks, _) = bytes.as_chunks::<BLOCK_BYTES>();
    let (outs, _) = out.as_chunks_mut::<BLOCK_ELEMS>();
    for (blk, o) in blocks.iter().zip(outs) {
        let d = f16_to_f32(scale_bits(blk));
        // The two 32-byte halves of qs (the block's last two bytes are d).
        let (halves, _) = blk.as_chunks::<32>();
        for (h, qs) in halves.iter().take(2).enumerate() {
            for l in 0..4 {
                let o = &mut o[h * 128 + l * 32..h * 128 + l * 32 + 32];
                for m in 0..32 {
                    // Exact small integer times d: identical to the reference product.
                    o[m] = (((qs[m] >> (2 * l)) & 3) as i32 - 1) as f32 * d;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_hand_checked() {
        // e = 0 → byte 0 bits 0; e = 32 → byte 0 bits 2; e = 127 → byte 31 bits 6;
        // e = 128 → byte 32 bits 0; e = 255 → byte 63 bits 6.
        assert_eq!(position(0), (0, 0));
        assert_eq!(position(32), (0, 2));
        assert_eq!(position(127), (31, 6));
        assert_eq!(position(128), (32, 0));
        assert_eq!(position(255), (63, 6));
        // Byte 0 = 0b11_10_01_00, d = 2.0 (f16 0x4000): elements 0, 32, 64, 96 = −2, 0, 2, 4.
        let mut blk = [0x55u8; BLOCK_BYTES];
        blk[0] = 0xe4;
        blk[64] = 0x00;
        blk[65] = 0x40;
        let mut out = [0f32; 256];
        decode_block_ref(&blk, &mut out);
        assert_eq!([out[0], out[32], out[64], out[96]], [-2.0, 0.0, 2.0, 4.0]);
    }
}
