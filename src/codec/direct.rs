//! The plain little-endian types: F32, F16, BF16 and I32 (one element per "block").

/// ggml's `GGML_FP32_TO_BF16`: round to nearest even; NaN is kept NaN by forcing the quiet bit.
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if u & 0x7fff_ffff > 0x7f80_0000 {
        return ((u >> 16) | 64) as u16;
    }
    ((u + (0x7fff + ((u >> 16) & 1))) >> 16) as u16
}

/// bf16 bits to f32: the top half of the f32 (exact).
#[inline(always)]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

pub(crate) fn decode_f32_ref(bytes: &[u8], out: &mut [f32]) {
    for (c, o) in bytes.chunks_exact(4).zip(out.iter_mut()) {
        *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
}

/// Same loop as the reference (already a plain copy after optimisation).
pub(crate) fn decode_f32(bytes: &[u8], out: &mut [f32]) {
    decode_f32_ref(bytes, out)
}

pub(crate) fn decode_f16_ref(bytes: &[u8], out: &mut [f32]) {
    for (c, o) in bytes.chunks_exact(2).zip(out.iter_mut()) {
        *o = super::f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
    }
}

/// Converts through `half`'s slice conversion (F16C when the CPU has it).
pub(crate) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    use half::slice::HalfFloatSliceExt;
    let mut buf = [half::f16::ZERO; 256];
    for (c, o) in bytes.chunks(512).zip(out.chunks_mut(256)) {
        let n = o.len();
        for (h, p) in buf[..n].iter_mut().zip(c.chunks_exact(2)) {
            *h = half::f16::from_bits(u16::from_le_bytes([p[0], p[1]]));
        }
        buf[..n].convert_to_f32_slice(o);
    }
}

pub(crate) fn decode_bf16_ref(bytes: &[u8], out: &mut [f32]) {
    for (c, o) in bytes.chunks_exact(2).zip(out.iter_mut()) {
        *o = bf16_to_f32(u16::from_le_bytes([c[0], c[1]]));
    }
}

pub(crate) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    decode_bf16_ref(bytes, out)
}

/// I32 → f32 by `as f32` (round to nearest even above 2^24): used for integer tensors
/// that the suite compares as floats.
pub(crate) fn decode_i32(bytes: &[u8], out: &mut [f32]) {
    for (c, o) in bytes.chunks_exact(4).zip(out.iter_mut()) {
        *o = i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_hand_checked() {
        // 1.0 = 0x3f800000 → 0x3f80. 1 + 2^-8 = 0x3f808000: exactly half-way, even → 0x3f80.
        // 1 + 3·2^-8 = 0x3f818000: half-way, odd 0x3f81 rounds up → 0x3f82.
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        // A signalling NaN 0x7f800001 keeps NaN: 0x7f80 | 64 = 0x7fc0.
        assert_eq!(f32_to_bf16(f32::from_bits(0x7f80_0001)), 0x7fc0);
    }

    #[test]
    fn i32_cast() {
        // 2^24 + 1 = 16777217 is not an f32; `as` rounds to even → 16777216.
        let b = 16_777_217i32.to_le_bytes();
        let mut o = [0f32];
        decode_i32(&b, &mut o);
        assert_eq!(o[0], 16_777_216.0);
    }
}
