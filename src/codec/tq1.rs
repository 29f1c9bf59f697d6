//! Mainline TQ1_0 (id 34): 54 B / 256 weights, `qs[48] | qh[4] | d` — scale last.
//!
//! The base-3 machinery of PTQ1_0 at twice the width: e < 160 → `qs[e % 32]` digit `e / 32`;
//! 160 ≤ e < 240 → `qs[32 + (e−160) % 16]` digit `(e−160) / 16`; 240 ≤ e < 256 →
//! `qh[(e−240) % 4]` digit `(e−240) / 4`. Value `(t − 1) · d`.

use super::base3::{self, decode_stage};
use super::{f16_to_f32, f32_to_f16, ggml_amax, lroundf};

pub use super::base3::{is_canonical_qh, is_canonical_qs};

pub const BLOCK_ELEMS: usize = 256;
pub const BLOCK_BYTES: usize = 54;
/// qs bytes [0, 48), qh bytes [48, 52), f16 d at [52, 54).
pub const QS_BYTES: usize = 48;
pub const QH_BYTES: usize = 4;
pub const SCALE_OFFSET: usize = 52;
/// Stage widths in bytes: 32 bytes × 5 trits, 16 × 5, then qh 4 × 4.
const W1: usize = 32;
const W2: usize = 16;
const WH: usize = 4;

pub type Block = [u8; BLOCK_BYTES];

/// `(byte index in the block, digit)` of element `e` (0..256).
pub const fn position(e: usize) -> (usize, usize) {
    base3::staged_position(e, W1, W2, WH)
}

/// The f16 scale bits (the last two bytes).
pub fn scale_bits(block: &Block) -> u16 {
    u16::from_le_bytes([block[SCALE_OFFSET], block[SCALE_OFFSET + 1]])
}

/// The 256 trits (0, 1, 2) of a block in element order, read by the digit formula
/// (so non-canonical bytes give whatever trits the formula says).
pub fn trits(block: &Block) -> [u8; BLOCK_ELEMS] {
    let mut t = [0u8; BLOCK_ELEMS];
    base3::staged_trits(&block[..SCALE_OFFSET], W1, W2, WH, &mut t);
    t
}

/// Packs 256 trits (0..=2) and the f16 scale bits (ggml's encoder; always canonical bytes).
pub fn encode_block(trits: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    base3::encode_staged(trits, W1, W2, WH, &mut out[..SCALE_OFFSET]);
    out[SCALE_OFFSET..].copy_from_slice(&d_bits.to_le_bytes());
    out
}

/// ggml's `quantize_row_tq1_0_ref`: `d = amax`, `id = 1/amax` (0 if amax is 0), stored
/// f16 RNE, trit = `lroundf(x·id) + 1` (clamped to 0..=2, a no-op for finite input).
pub fn quantize_block(x: &[f32; BLOCK_ELEMS]) -> Block {
    let amax = ggml_amax(x);
    let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
    let t: [u8; BLOCK_ELEMS] = std::array::from_fn(|e| (lroundf(x[e] * id).clamp(-1, 1) + 1) as u8);
    encode_block(&t, f32_to_f16(amax))
}

/// True iff every qs and qh byte of the block is one the encoder produces.
pub fn is_canonical_block(block: &Block) -> bool {
    block[..QS_BYTES].iter().all(|&b| is_canonical_qs(b))
        && block[QS_BYTES..SCALE_OFFSET]
            .iter()
            .all(|&b| is_canonical_qh(b))
}

/// Scalar reference decode of one block.
pub fn decode_block_ref(block: &Block, out: &mut [f32; BLOCK_ELEMS]) {
    let d = f16_to_f32(scale_bits(block));
    base3::decode_staged_ref(&block[..SCALE_OFFSET], d, W1, W2, WH, out);
}

pub(crate) fn decode_rows_ref(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK_ELEMS))
    {
        // chunks_exact guarantees both lengths.
        decode_block_ref(blk.try_into().unwrap(), o.try_into().unwrap());
    }
}

/// Fast decode: each stage is a fixed-width loop the compiler vectorises.
pub(crate) fn decode_rows(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK_ELEMS))
    {
        let blk: &Block = blk.try_into().unwrap();
        let d = f16_to_f32(scale_bits(blk));
        let (s1, rest) = o.split_at_mut(5 * W1);
        let (s2, s3) = rest.split_at_mut(5 * W2);
        decode_stage::<W1, 5>(blk[..W1].try_into().unwrap(), d, s1);
        decode_stage::<W2, 5>(blk[W1..W1 + W2].try_into().unwrap(), d, s2);
        decode_stage::<WH, 4>(blk[QS_BYTES..SCALE_OFFSET].try_into().unwrap(), d, s3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_order_hand_checked() {
        // 0 → qs[0] d0; 32 → qs[0] d1; 159 → qs[31] d4; 160 → qs[32] d0; 239 → qs[47] d4;
        // 240 → qh[0] (byte 48) d0; 243 → qh[3] d0; 244 → qh[0] d1; 255 → qh[3] (byte 51) d3.
        assert_eq!(position(0), (0, 0));
        assert_eq!(position(32), (0, 1));
        assert_eq!(position(159), (31, 4));
        assert_eq!(position(160), (32, 0));
        assert_eq!(position(239), (47, 4));
        assert_eq!(position(240), (48, 0));
        assert_eq!(position(243), (51, 0));
        assert_eq!(position(244), (48, 1));
        assert_eq!(position(255), (51, 3));
    }

    #[test]
    fn zero_block() {
        let b = quantize_block(&[0.0; 256]);
        assert!(b[..48].iter().all(|&v| v == 0x80));
        assert!(b[48..52].iter().all(|&v| v == 0x7f));
        assert_eq!(&b[52..], &[0, 0]);
    }
}
