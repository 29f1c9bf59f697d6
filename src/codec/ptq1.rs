//! PTQ1_0 (Prism id 143): 28 B / 128 weights, `qs[24] | qh[2] | d` — scale LAST.
//!
//! Trits t ∈ {0,1,2} ↔ −1, 0, +1, value `(t − 1) · d`, base-3 packed (see [`super::base3`])
//! in three stages: e < 80 → `qs[e % 16]` digit `e / 16`; 80 ≤ e < 120 →
//! `qs[16 + (e−80) % 8]` digit `(e−80) / 8`; 120 ≤ e < 128 → `qh[(e−120) % 2]` digit `(e−120) / 2`.

use super::base3::{self, decode_stage};
use super::{f16_to_f32, f32_to_f16, ggml_amax, lroundf};

pub use super::base3::{is_canonical_qh, is_canonical_qs};

pub const BLOCK_ELEMS: usize = 128;
pub const BLOCK_BYTES: usize = 28;
/// qs bytes [0, 24), qh bytes [24, 26), f16 d at [26, 28).
pub const QS_BYTES: usize = 24;
pub const QH_BYTES: usize = 2;
pub const SCALE_OFFSET: usize = 26;
/// Stage widths in bytes: 16 bytes × 5 trits, 8 × 5, then qh 2 × 4.
const W1: usize = 16;
const W2: usize = 8;
const WH: usize = 2;

pub type Block = [u8; BLOCK_BYTES];

/// `(byte index in the block, digit)` of element `e` (0..128).
pub const fn position(e: usize) -> (usize, usize) {
    base3::staged_position(e, W1, W2, WH)
}

/// The f16 scale bits (the last two bytes).
pub fn scale_bits(block: &Block) -> u16 {
    u16::from_le_bytes([block[SCALE_OFFSET], block[SCALE_OFFSET + 1]])
}

/// The 128 trits (0, 1, 2) of a block in element order, read by the digit formula
/// (so non-canonical bytes give whatever trits the formula says).
pub fn trits(block: &Block) -> [u8; BLOCK_ELEMS] {
    let mut t = [0u8; BLOCK_ELEMS];
    base3::staged_trits(&block[..SCALE_OFFSET], W1, W2, WH, &mut t);
    t
}

/// Packs 128 trits (0..=2) and the f16 scale bits (ggml's encoder; always canonical bytes).
pub fn encode_block(trits: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
    let mut out = [0u8; BLOCK_BYTES];
    base3::encode_staged(trits, W1, W2, WH, &mut out[..SCALE_OFFSET]);
    out[SCALE_OFFSET..].copy_from_slice(&d_bits.to_le_bytes());
    out
}

/// Reference quantizer: scale as PQ2_0 (`d = amax`, `id = 1/amax`, stored f16 RNE),
/// trit = `clamp(lroundf(x·id), −1, 1) + 1`.
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
        // Element 0 is digit 0 (MSB) of qs[0]; element 16 digit 1 of qs[0]; element 79 is
        // digit 4 of qs[15]; 80 → qs[16] digit 0; 119 → qs[23] digit 4; 120 → qh[0] digit 0;
        // 127 → qh[1] digit 3 (byte 25).
        assert_eq!(position(0), (0, 0));
        assert_eq!(position(16), (0, 1));
        assert_eq!(position(79), (15, 4));
        assert_eq!(position(80), (16, 0));
        assert_eq!(position(119), (23, 4));
        assert_eq!(position(120), (24, 0));
        assert_eq!(position(127), (25, 3));
    }

    #[test]
    fn noncanonical_byte_decodes_by_formula() {
        // Byte 20 (0x14) in qs[0], all other bytes 0x80 (zero trits), d = 1.0 (f16 0x3c00).
        // Digits of 20, computed by hand: n=0: 20·1 = 20, 20·3 = 60, >>8 = 0
        //   n=1: 20·3 = 60, 180 >> 8 = 0;  n=2: 20·9 = 180, 540 >> 8 = 2
        //   n=3: 20·27 = 540 ≡ 28 (mod 256), 84 >> 8 = 0;  n=4: 20·81 = 1620 ≡ 84, 252 >> 8 = 0.
        // Trits 0,0,2,0,0 → values −1, −1, +1, −1, −1 at elements 0, 16, 32, 48, 64.
        // Re-encoding: v = 2·9 = 18, (18·256 + 242) / 243 = 4850 / 243 = 19 ≠ 20 → non-canonical.
        let mut blk = [0x80u8; BLOCK_BYTES];
        blk[24] = 0x7f;
        blk[25] = 0x7f;
        blk[26] = 0x00;
        blk[27] = 0x3c;
        blk[0] = 20;
        let mut out = [0f32; BLOCK_ELEMS];
        decode_block_ref(&blk, &mut out);
        for (e, &v) in out.iter().enumerate() {
            let want = match e {
                0 | 16 | 48 | 64 => -1.0,
                32 => 1.0,
                _ => 0.0,
            };
            assert_eq!(v, want, "element {e}");
        }
        assert!(!is_canonical_qs(20));
        assert!(is_canonical_qs(19));
        assert!(!is_canonical_block(&blk));
    }

    #[test]
    fn quantizer_is_idempotent_on_ternary_data() {
        // Values already in {−d, 0, +d} quantize back to the same trits and scale.
        let d = 0.75f32; // exact in f16 (0x3a00)
        let x: [f32; 128] = std::array::from_fn(|e| ((e * 7 % 3) as f32 - 1.0) * d);
        let b = quantize_block(&x);
        assert_eq!(scale_bits(&b), 0x3a00);
        let mut y = [0f32; 128];
        decode_block_ref(&b, &mut y);
        assert_eq!(x, y);
        assert_eq!(quantize_block(&y), b);
    }
}
