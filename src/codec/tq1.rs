//! Mainline TQ1_0 (id 34): 54 B / 256 weights, `qs[48] | qh[4] | d` — scale last.
//!
//! The base-3 machinery of PTQ1_0 at twice the width: e < 160 → `qs[e % 32]` digit `e / 32`;
//! 160 ≤ e < 240 → `qs[32 + (e−160) % 16]` digit `(e−160) / 16`; 240 ≤ e < 256 →
//! `qh[(e−240) % 4]` digit `(e−240) / 4`. Value `(t − 1) · d`.

super::base3::staged_codec!(32, 16, 4);

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
