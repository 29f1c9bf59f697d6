//! PTQ1_0 (Prism id 143): 28 B / 128 weights, `qs[24] | qh[2] | d` — scale LAST.
//!
//! Trits t ∈ {0,1,2} ↔ −1, 0, +1, value `(t − 1) · d`, base-3 packed (see [`super::base3`])
//! in three stages: e < 80 → `qs[e % 16]` digit `e / 16`; 80 ≤ e < 120 →
//! `qs[16 + (e−80) % 8]` digit `(e−80) / 8`; 120 ≤ e < 128 → `qh[(e−120) % 2]` digit `(e−120) / 2`.

super::base3::staged_codec!(16, 8, 2);

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
