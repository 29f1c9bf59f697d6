//! Base-3 packing shared by PTQ1_0 (Prism) and TQ1_0 (mainline).
//!
//! A byte holds 5 trits (or 4 in the `qh` tail) as a fixed-point fraction of 3^5 = 243:
//! the encoder stores `ceil(v * 256 / 243)` and digit `n` is read back by multiplying the
//! byte by 3^n (wrapping in u8, which drops the digits already read) and taking the top
//! "third" with `(q * 3) >> 8`. Every byte decodes; only 243 (qs) / 81 (qh) bytes are
//! ever produced by the encoder ("canonical").

/// 3^n for n = 0..=5, as u8 (3^5 = 243 still fits).
pub const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];

/// Digit `n` (0..5) of byte `b`: `((b * 3^n) mod 256) * 3 >> 8`, always 0, 1 or 2.
#[inline(always)]
pub const fn digit(b: u8, n: usize) -> u8 {
    let q = b.wrapping_mul(POW3[n]);
    ((q as u16 * 3) >> 8) as u8
}

/// The 5 digits of a `qs` byte, most significant trit first.
pub const fn digits5(b: u8) -> [u8; 5] {
    [
        digit(b, 0),
        digit(b, 1),
        digit(b, 2),
        digit(b, 3),
        digit(b, 4),
    ]
}

/// The 4 digits of a `qh` byte, most significant trit first.
pub const fn digits4(b: u8) -> [u8; 4] {
    [digit(b, 0), digit(b, 1), digit(b, 2), digit(b, 3)]
}

/// `ceil(v * 256 / 243)`, the fixed-point rescale of ggml's encoder (`v` <= 242).
#[inline(always)]
const fn rescale(v: u32) -> u8 {
    // ggml writes `(v * 256 + 242) / 243`, i.e. a ceiling division. u32 so that out-of-range
    // trits cannot overflow; for valid trits this is ggml's u16 math.
    (v * 256).div_ceil(243) as u8
}

/// Encodes 5 trits (each 0..=2, MSB first) as one `qs` byte. Larger trits are a caller
/// error and give an unspecified byte (never a panic).
#[inline(always)]
pub const fn encode5(t: [u8; 5]) -> u8 {
    let v = t[0] as u32 * 81 + t[1] as u32 * 27 + t[2] as u32 * 9 + t[3] as u32 * 3 + t[4] as u32;
    rescale(v)
}

/// Encodes 4 trits (MSB first) as one `qh` byte: the value is shifted up one trit (×3)
/// so the 4 trits sit where digits 0..4 of a 5-trit byte would.
#[inline(always)]
pub const fn encode4(t: [u8; 4]) -> u8 {
    let v = (t[0] as u32 * 27 + t[1] as u32 * 9 + t[2] as u32 * 3 + t[3] as u32) * 3;
    rescale(v)
}

/// True iff re-encoding the byte's 5 digits gives the byte back (the encoder can produce it).
pub const fn is_canonical_qs(b: u8) -> bool {
    encode5(digits5(b)) == b
}

/// True iff re-encoding the byte's 4 digits gives the byte back.
pub const fn is_canonical_qh(b: u8) -> bool {
    encode4(digits4(b)) == b
}

/// Per-byte facts for stats: number of zero trits (digit 1) among the 5 (qs) or 4 (qh)
/// digits, and canonicity. Built at compile time from the same formulas as above.
pub(crate) struct ByteFacts {
    pub qs_zeros: [u8; 256],
    pub qh_zeros: [u8; 256],
    pub qs_noncanonical: [u8; 256],
    pub qh_noncanonical: [u8; 256],
}

const fn build_facts() -> ByteFacts {
    let mut f = ByteFacts {
        qs_zeros: [0; 256],
        qh_zeros: [0; 256],
        qs_noncanonical: [0; 256],
        qh_noncanonical: [0; 256],
    };
    let mut b = 0;
    while b < 256 {
        let mut n = 0;
        while n < 5 {
            if digit(b as u8, n) == 1 {
                f.qs_zeros[b] += 1;
                if n < 4 {
                    f.qh_zeros[b] += 1;
                }
            }
            n += 1;
        }
        f.qs_noncanonical[b] = !is_canonical_qs(b as u8) as u8;
        f.qh_noncanonical[b] = !is_canonical_qh(b as u8) as u8;
        b += 1;
    }
    f
}

pub(crate) static FACTS: ByteFacts = build_facts();

/// Where element `e` of a staged block lives: `(byte index into qs ‖ qh, digit)`.
/// Stage 1 spreads 5·w1 elements over w1 bytes (element e → byte e % w1, digit e / w1),
/// stage 2 likewise over the next w2 bytes, then the qh tail 4·wh elements over wh bytes.
#[inline(always)]
pub const fn staged_position(e: usize, w1: usize, w2: usize, wh: usize) -> (usize, usize) {
    if e < 5 * w1 {
        (e % w1, e / w1)
    } else if e < 5 * (w1 + w2) {
        let f = e - 5 * w1;
        (w1 + f % w2, f / w2)
    } else {
        let f = e - 5 * (w1 + w2);
        (w1 + w2 + f % wh, f / wh)
    }
}

/// Packs trits (0..=2, element order) into the staged qs ‖ qh bytes `q`
/// (`w1 + w2 + wh` bytes), the inverse of [`staged_position`].
pub(crate) fn encode_staged(t: &[u8], w1: usize, w2: usize, wh: usize, q: &mut [u8]) {
    for m in 0..w1 {
        q[m] = encode5(std::array::from_fn(|n| t[n * w1 + m]));
    }
    let s2 = 5 * w1;
    for m in 0..w2 {
        q[w1 + m] = encode5(std::array::from_fn(|n| t[s2 + n * w2 + m]));
    }
    let sh = 5 * (w1 + w2);
    for m in 0..wh {
        q[w1 + w2 + m] = encode4(std::array::from_fn(|n| t[sh + n * wh + m]));
    }
}

/// Trits of a staged block in element order (reference: one element at a time).
pub(crate) fn staged_trits(q: &[u8], w1: usize, w2: usize, wh: usize, out: &mut [u8]) {
    for (e, o) in out.iter_mut().enumerate() {
        let (byte, n) = staged_position(e, w1, w2, wh);
        *o = digit(q[byte], n);
    }
}

/// Scalar reference decode of a staged block's trits as `(t - 1) * d`.
pub(crate) fn decode_staged_ref(
    q: &[u8],
    d: f32,
    w1: usize,
    w2: usize,
    wh: usize,
    out: &mut [f32],
) {
    for (e, o) in out.iter_mut().enumerate() {
        let (byte, n) = staged_position(e, w1, w2, wh);
        *o = (digit(q[byte], n) as f32 - 1.0) * d;
    }
}

/// Fast decode of one stage: `N` digits of `W` bytes, element `n*W + m` from byte `m`.
/// Written as fixed-size loops so the compiler vectorises the u8 multiply and shift.
#[inline(always)]
pub(crate) fn decode_stage<const W: usize, const N: usize>(
    bytes: &[u8; W],
    d: f32,
    out: &mut [f32],
) {
    let out = &mut out[..W * N];
    for n in 0..N {
        let p = POW3[n];
        let o = &mut out[n * W..(n + 1) * W];
        for m in 0..W {
            let q = bytes[m].wrapping_mul(p);
            // t - 1 is exactly -1, 0 or 1, so this equals the reference `(t as f32 - 1.0) * d`.
            let t = ((q as u16 * 3) >> 8) as i32 - 1;
            o[m] = t as f32 * d;
        }
    }
}

/// The items of a staged base-3 block codec (TQ1_0, PTQ1_0): the same machinery at different
/// stage widths `(W1, W2, WH)` in bytes — W1 and W2 bytes of 5 trits, WH bytes of 4 trits,
/// then the f16 scale. Expands to the block constants, `position`, `scale_bits`, `trits`,
/// `encode_block`, `quantize_block`, `is_canonical_block`, the scalar reference and the fast path.
macro_rules! staged_codec {
    ($w1:expr, $w2:expr, $wh:expr) => {
        use $crate::codec::base3::{self, decode_stage};
        use $crate::codec::{f16_to_f32, f32_to_f16, ggml_amax, lroundf};

        pub use $crate::codec::base3::{is_canonical_qh, is_canonical_qs};

        /// Elements per block: 5 trits per `qs` byte, 4 per `qh` byte.
        pub const BLOCK_ELEMS: usize = 5 * W1 + 5 * W2 + 4 * WH;
        /// Bytes per block: `qs`, `qh`, then the f16 scale.
        pub const BLOCK_BYTES: usize = W1 + W2 + WH + 2;
        /// qs bytes `[0, QS_BYTES)`, qh bytes `[QS_BYTES, SCALE_OFFSET)`, f16 d in the last two bytes.
        pub const QS_BYTES: usize = W1 + W2;
        /// Bytes of the `qh` stage (4 trits each).
        pub const QH_BYTES: usize = WH;
        /// Byte offset of the f16 scale `d` (scale last).
        pub const SCALE_OFFSET: usize = W1 + W2 + WH;
        /// Stage widths in bytes: W1 bytes × 5 trits, W2 × 5, then qh WH × 4.
        const W1: usize = $w1;
        const W2: usize = $w2;
        const WH: usize = $wh;

        /// One block's bytes.
        pub type Block = [u8; BLOCK_BYTES];

        /// `(byte index in the block, digit)` of element `e` (0..BLOCK_ELEMS).
        pub const fn position(e: usize) -> (usize, usize) {
            base3::staged_position(e, W1, W2, WH)
        }

        /// The f16 scale bits (the last two bytes).
        pub fn scale_bits(block: &Block) -> u16 {
            u16::from_le_bytes([block[SCALE_OFFSET], block[SCALE_OFFSET + 1]])
        }

        /// The BLOCK_ELEMS trits (0, 1, 2) of a block in element order, read by the digit formula
        /// (so non-canonical bytes give whatever trits the formula says).
        pub fn trits(block: &Block) -> [u8; BLOCK_ELEMS] {
            let mut t = [0u8; BLOCK_ELEMS];
            base3::staged_trits(&block[..SCALE_OFFSET], W1, W2, WH, &mut t);
            t
        }

        /// Packs BLOCK_ELEMS trits (0..=2) and the f16 scale bits (ggml's encoder; always canonical bytes).
        pub fn encode_block(trits: &[u8; BLOCK_ELEMS], d_bits: u16) -> Block {
            let mut out = [0u8; BLOCK_BYTES];
            base3::encode_staged(trits, W1, W2, WH, &mut out[..SCALE_OFFSET]);
            out[SCALE_OFFSET..].copy_from_slice(&d_bits.to_le_bytes());
            out
        }

        /// The reference quantizer (ggml's `quantize_row_tq1_0_ref`; PTQ1_0 uses the same rule): `d = amax`, `id = 1/amax` (0 if amax is 0), stored
        /// f16 RNE, trit = `lroundf(x·id) + 1` (clamped to 0..=2, a no-op for finite input).
        pub fn quantize_block(x: &[f32; BLOCK_ELEMS]) -> Block {
            let amax = ggml_amax(x);
            let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
            let t: [u8; BLOCK_ELEMS] =
                std::array::from_fn(|e| (lroundf(x[e] * id).clamp(-1, 1) + 1) as u8);
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
            $crate::codec::each_block(bytes, out, decode_block_ref);
        }

        /// Fast decode on `path`, falling back to the portable loop when the path has no kernel.
        pub(crate) fn decode_rows_on(
            path: $crate::codec::simd::Path,
            bytes: &[u8],
            out: &mut [f32],
        ) {
            if !$crate::codec::simd::staged::<W1, W2, WH>(path, bytes, out) {
                decode_rows_scalar(bytes, out)
            }
        }

        /// Portable fast decode: each stage is a fixed-width loop the compiler vectorises.
        pub(crate) fn decode_rows_scalar(bytes: &[u8], out: &mut [f32]) {
            let (blocks, _) = bytes.as_chunks::<BLOCK_BYTES>();
            let (outs, _) = out.as_chunks_mut::<BLOCK_ELEMS>();
            for (blk, o) in blocks.iter().zip(outs) {
                let d = f16_to_f32(scale_bits(blk));
                // Cannot fail: BLOCK_BYTES = W1 + W2 + WH + 2, so every split below is in
                // range and the compiler folds the checks away.
                let Some((q1, rest)) = blk.split_first_chunk::<W1>() else {
                    continue;
                };
                let Some((q2, rest)) = rest.split_first_chunk::<W2>() else {
                    continue;
                };
                let Some(qh) = rest.first_chunk::<WH>() else {
                    continue;
                };
                let (s1, rest) = o.split_at_mut(5 * W1);
                let (s2, s3) = rest.split_at_mut(5 * W2);
                decode_stage::<W1, 5>(q1, d, s1);
                decode_stage::<W2, 5>(q2, d, s2);
                decode_stage::<WH, 4>(qh, d, s3);
            }
        }
    };
}
pub(crate) use staged_codec;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_hand_computed_bytes() {
        // 0x80 = 128: q = 128, 384, 1152, 3456, 10368 mod 256 = 128 each time
        // (128·3^n ≡ 128 mod 256 since 3^n is odd); 128·3 = 384, 384 >> 8 = 1 → all zero trits.
        assert_eq!(digits5(0x80), [1, 1, 1, 1, 1]);
        // 0xff = 255: 255·3^n mod 256 = 256 - 3^n mod 256: 255, 253, 247, 229, 175;
        // ·3 = 765, 759, 741, 687, 525; >> 8 = 2, 2, 2, 2, 2.
        assert_eq!(digits5(0xff), [2, 2, 2, 2, 2]);
        // 20: q = 20, 60, 180, 540 mod 256 = 28, 1620 mod 256 = 84;
        // ·3 = 60, 180, 540, 84, 252; >> 8 = 0, 0, 2, 0, 0.
        assert_eq!(digits5(20), [0, 0, 2, 0, 0]);
    }

    #[test]
    fn encode_hand_computed() {
        // trits 0,0,2,0,0: v = 2·9 = 18; (18·256 + 242) / 243 = 4850 / 243 = 19 (19·243 = 4617).
        assert_eq!(encode5([0, 0, 2, 0, 0]), 19);
        // qh all +1: v = (2·27 + 2·9 + 2·3 + 2)·3 = 80·3 = 240; (240·256 + 242)/243 = 61682/243 = 253.
        assert_eq!(encode4([2, 2, 2, 2]), 0xfd);
    }

    #[test]
    fn every_5_trit_and_4_trit_word_round_trips() {
        for v in 0..243u32 {
            let t = [
                (v / 81) as u8,
                (v / 27 % 3) as u8,
                (v / 9 % 3) as u8,
                (v / 3 % 3) as u8,
                (v % 3) as u8,
            ];
            assert_eq!(digits5(encode5(t)), t, "v = {v}");
        }
        for v in 0..81u32 {
            let t = [
                (v / 27) as u8,
                (v / 9 % 3) as u8,
                (v / 3 % 3) as u8,
                (v % 3) as u8,
            ];
            assert_eq!(digits4(encode4(t)), t, "v = {v}");
        }
    }

    #[test]
    fn facts_table_agrees_with_formulas() {
        for b in 0..=255u8 {
            let z5 = digits5(b).iter().filter(|&&t| t == 1).count() as u8;
            let z4 = digits4(b).iter().filter(|&&t| t == 1).count() as u8;
            assert_eq!(FACTS.qs_zeros[b as usize], z5);
            assert_eq!(FACTS.qh_zeros[b as usize], z4);
            assert_eq!(FACTS.qs_noncanonical[b as usize] == 1, !is_canonical_qs(b));
            assert_eq!(FACTS.qh_noncanonical[b as usize] == 1, !is_canonical_qh(b));
        }
    }

    #[test]
    fn staged_positions_cover_each_digit_slot_once() {
        for (w1, w2, wh, bytes) in [(16, 8, 2, 26), (32, 16, 4, 52)] {
            let n = 5 * (w1 + w2) + 4 * wh;
            let mut seen = vec![[false; 5]; bytes];
            for e in 0..n {
                let (b, d) = staged_position(e, w1, w2, wh);
                assert!(!seen[b][d]);
                seen[b][d] = true;
            }
            for (b, s) in seen.iter().enumerate() {
                let used = s.iter().filter(|&&x| x).count();
                assert_eq!(used, if b < w1 + w2 { 5 } else { 4 });
            }
        }
    }
}
