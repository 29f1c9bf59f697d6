//! PQ2_0 (Prism id 142, and legacy Prism id 42 at group 128: 34 B / 128) and mainline
//! Q2_0 (id 42, group 64: 18 B / 64): one codec parametrised by the group size `G`.
//!
//! Block: `[0..2) d (f16) | [2..2+G/4) qs`. Element j → byte `qs[j/4]`, bits `2*(j%4)`
//! (LSB first). Value `(code − 1) · d`: codes 0,1,2,3 → −1, 0, +1, **+2**.
//!
//! The block functions take the group size `G` and the block byte count `B = 2 + G/4`
//! as const generics (stable Rust cannot compute `2 + G/4` in a type); a compile-time
//! assertion ties them together.

use super::{f16_to_f32, f32_to_f16, ggml_amax, read_u16};

/// Bytes of a PQ2_0 / legacy g128 block.
pub const PQ2_0_BYTES: usize = block_bytes(128);
/// Bytes of a mainline Q2_0 (g64) block.
pub const Q2_0_G64_BYTES: usize = block_bytes(64);

/// Bytes of a block of `group` elements: the f16 scale plus 2 bits per element.
pub const fn block_bytes(group: usize) -> usize {
    2 + group / 4
}

#[inline(always)]
const fn check<const G: usize, const B: usize>() {
    const { assert!(G % 4 == 0 && B == 2 + G / 4, "B must be 2 + G/4") }
}

/// The code (0..=3) of element `j` of a block.
#[inline(always)]
pub fn code<const G: usize, const B: usize>(block: &[u8; B], j: usize) -> u8 {
    check::<G, B>();
    (block[2 + j / 4] >> (2 * (j % 4))) & 3
}

/// The f16 scale bits of a block (scale first).
pub fn scale_bits<const B: usize>(block: &[u8; B]) -> u16 {
    u16::from_le_bytes([block[0], block[1]])
}

/// All `G` codes of a block in element order.
pub fn codes<const G: usize, const B: usize>(block: &[u8; B]) -> [u8; G] {
    check::<G, B>();
    std::array::from_fn(|j| code::<G, B>(block, j))
}

/// Packs `G` codes (0..=3; higher bits are ignored) and the f16 scale bits into a block.
pub fn encode_block<const G: usize, const B: usize>(codes: &[u8; G], d_bits: u16) -> [u8; B] {
    check::<G, B>();
    let mut out = [0u8; B];
    out[..2].copy_from_slice(&d_bits.to_le_bytes());
    for (j, &c) in codes.iter().enumerate() {
        out[2 + j / 4] |= (c & 3) << (2 * (j % 4));
    }
    out
}

/// ggml's reference quantizer: `d = amax` (f32), `id = 1/d` (0 when amax is 0), stored
/// `f16(amax)` (RNE), `q = clamp(roundf(x·id) + 1, 0, 3)`.
pub fn quantize_block<const G: usize, const B: usize>(x: &[f32; G]) -> [u8; B] {
    check::<G, B>();
    let amax = ggml_amax(x);
    // The inverse comes from the f32 amax, not from the rounded f16.
    let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
    let codes: [u8; G] = std::array::from_fn(|j| ((x[j] * id).round() + 1.0).clamp(0.0, 3.0) as u8);
    encode_block(&codes, f32_to_f16(amax))
}

/// Scalar reference decode of one block.
pub fn decode_block_ref<const G: usize, const B: usize>(block: &[u8; B], out: &mut [f32; G]) {
    check::<G, B>();
    let d = f16_to_f32(scale_bits(block));
    for (j, o) in out.iter_mut().enumerate() {
        *o = (code::<G, B>(block, j) as f32 - 1.0) * d;
    }
}

/// Reference decode of whole blocks; lengths are checked by [`super::Codec::decode_reference`].
pub(crate) fn decode_rows_ref<const G: usize>(bytes: &[u8], out: &mut [f32]) {
    let bb = block_bytes(G);
    for (blk, o) in bytes.chunks_exact(bb).zip(out.chunks_exact_mut(G)) {
        let d = f16_to_f32(read_u16(blk, 0));
        for (j, v) in o.iter_mut().enumerate() {
            let c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
            *v = (c as f32 - 1.0) * d;
        }
    }
}

/// Multipliers `code − 1` for the 4 codes of every byte value, LSB pair first.
pub(crate) static MULT: [[f32; 4]; 256] = {
    const M: [f32; 4] = [-1.0, 0.0, 1.0, 2.0];
    let mut t = [[0.0f32; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            t[b][k] = M[(b >> (2 * k)) & 3];
            k += 1;
        }
        b += 1;
    }
    t
};

/// Fast decode on `path`, falling back to the portable loop when the path has no kernel.
pub(crate) fn decode_rows_on<const G: usize>(
    path: super::simd::Path,
    bytes: &[u8],
    out: &mut [f32],
) {
    if !super::simd::pq2::<G>(path, bytes, out) {
        decode_rows_scalar::<G>(bytes, out)
    }
}

/// Portable fast decode: one table row (4 multipliers) per byte times the block
/// scale. The multipliers are the exact values the reference computes, so the products
/// are bit-identical (NaN scales included).
pub(crate) fn decode_rows_scalar<const G: usize>(bytes: &[u8], out: &mut [f32]) {
    let bb = block_bytes(G);
    for (blk, o) in bytes.chunks_exact(bb).zip(out.chunks_exact_mut(G)) {
        let d = f16_to_f32(read_u16(blk, 0));
        let qs = &blk[2..2 + G / 4];
        for (c, &b) in o.chunks_exact_mut(4).zip(qs) {
            let m = &MULT[b as usize];
            c[0] = m[0] * d;
            c[1] = m[1] * d;
            c[2] = m[2] * d;
            c[3] = m[3] * d;
        }
    }
}

/// How many of the 4 codes in byte `b` equal `c`, per byte and code.
static CODE_COUNT: [[u8; 4]; 256] = {
    let mut t = [[0u8; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            t[b][(b >> (2 * k)) & 3] += 1;
            k += 1;
        }
        b += 1;
    }
    t
};

/// How many of the four 2-bit codes of byte `b` equal `c` (0..=3).
#[inline(always)]
pub fn count_code(b: u8, c: u8) -> u8 {
    CODE_COUNT[b as usize][(c & 3) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_three_decodes_to_plus_two_d() {
        // qs[0] = 0b11_10_01_00 = 0xe4: codes 0,1,2,3 → −1, 0, +1, +2 (times d = 0.5, f16 0x3800).
        let mut blk = [0x55u8; 34];
        blk[0] = 0x00;
        blk[1] = 0x38;
        blk[2] = 0xe4;
        let mut out = [0f32; 128];
        decode_block_ref::<128, 34>(&blk, &mut out);
        assert_eq!(&out[..4], &[-0.5, 0.0, 0.5, 1.0]);
        assert!(out[4..].iter().all(|&v| v == 0.0));
        let mut fast = [0f32; 128];
        decode_rows_on::<128>(crate::codec::simd::active(), &blk, &mut fast);
        assert_eq!(out.map(f32::to_bits), fast.map(f32::to_bits));
    }

    #[test]
    fn quantizer_matches_hand_worked_block() {
        // amax = 4 → d = f16(4.0) = 0x4400, id = 0.25.
        // x = 4 → round(1)+1 = 2; x = -4 → 0; x = 1.9 → round(0.475)=0 → 1;
        // x = 2 → round(0.5) = 1 (half away from zero) → 2; x = -2 → round(-0.5) = -1 → 0.
        let mut x = [0f32; 64];
        x[..4].copy_from_slice(&[4.0, -4.0, 1.9, 2.0]);
        x[4] = -2.0;
        let b: [u8; 18] = quantize_block::<64, 18>(&x);
        assert_eq!(&b[..2], &[0x00, 0x44]);
        // byte 0: codes 2,0,1,2 → 2 | 0<<2 | 1<<4 | 2<<6 = 2 + 16 + 128 = 0x92
        // byte 1: codes 0,1,1,1 → 0 | 4 | 16 | 64 = 0x54
        assert_eq!(b[2], 0x92);
        assert_eq!(b[3], 0x54);
        assert!(b[4..].iter().all(|&v| v == 0x55));
    }

    #[test]
    fn zero_block_has_zero_scale_and_code_one() {
        let b: [u8; 34] = quantize_block::<128, 34>(&[0.0; 128]);
        assert_eq!(&b[..2], &[0, 0]);
        assert!(b[2..].iter().all(|&v| v == 0x55));
    }

    #[test]
    fn code_count_table() {
        // 0xe4 holds one of each code; 0x55 four code-1s; 0xff four code-3s.
        assert_eq!(
            (0..4).map(|c| count_code(0xe4, c)).collect::<Vec<_>>(),
            [1, 1, 1, 1]
        );
        assert_eq!(count_code(0x55, 1), 4);
        assert_eq!(count_code(0xff, 3), 4);
    }
}
