//! PTQ1_0 blocks straight from a block's four class fields (`q[c]` field `p` = trit of element
//! `4p + c`), byte-parallel in u64 words instead of one trit at a time: the same bytes as
//! `ptq1::encode_block` (spec/codecs.md, PTQ1_0 staged base-3 layout).
//!
//! Each qs byte is 5 trits in base 3 (`Σ t·3^(4−n)`, at most 242, so the digit sums of eight
//! bytes fit one u64 without carries), then `⌈v·256/243⌉` (a table).

use crate::codec::ptq1;

/// `⌈v·256/243⌉` for `v <= 242` (ggml's fixed-point rescale of a 5-trit value).
const RESCALE: [u8; 243] = {
    let mut t = [0u8; 243];
    let mut v = 0;
    while v < 243 {
        t[v] = (v * 256).div_ceil(243) as u8;
        v += 1;
    }
    t
};

/// Eight consecutive elements `4·p0 .. 4·p0 + 8`, one trit per byte (element order): byte
/// `4k + c` is field `p0 + k` of class `c`.
#[inline(always)]
fn elems8(q: &[u64; 4], p0: u32) -> u64 {
    let mut x = 0;
    for (c, &qc) in q.iter().enumerate() {
        let f = qc >> (2 * p0);
        x |= ((f & 3) | (f >> 2 & 3) << 32) << (8 * c);
    }
    x
}

/// Byte-wise `Σ digits[n]·3^(len−1−n)` (each byte a trit; no byte exceeds 242).
#[inline(always)]
fn base3_bytes(digits: &[u64]) -> u64 {
    digits.iter().fold(0, |v, &d| v * 3 + d)
}

/// The rescaled bytes of eight 5-trit values (one per byte of `v`) into `out`.
#[inline(always)]
fn put_rescaled(v: u64, out: &mut [u8]) {
    for (o, b) in out.iter_mut().zip(v.to_le_bytes()) {
        *o = RESCALE[b as usize];
    }
}

/// One PTQ1_0 block of the fields `q` and scale bits `d`.
#[inline(always)]
pub(super) fn encode(q: &[u64; 4], d: u16) -> [u8; ptq1::BLOCK_BYTES] {
    let mut out = [0u8; ptq1::BLOCK_BYTES];
    // Stage 1: byte m (< 16), digit n is element 16n + m: elements 16n.. in two halves.
    for half in 0..2u32 {
        let mut digits = [0u64; 5];
        for (n, dg) in digits.iter_mut().enumerate() {
            *dg = elems8(q, 4 * n as u32 + 2 * half);
        }
        let at = 8 * half as usize;
        put_rescaled(base3_bytes(&digits), &mut out[at..at + 8]);
    }
    // Stage 2: byte 16 + m (m < 8), digit n is element 80 + 8n + m.
    let mut digits = [0u64; 5];
    for (n, dg) in digits.iter_mut().enumerate() {
        *dg = elems8(q, 20 + 2 * n as u32);
    }
    put_rescaled(base3_bytes(&digits), &mut out[16..24]);
    // qh: byte 24 + m (m < 2), digit n (< 4) is element 120 + 2n + m; shifted up one trit.
    let t = elems8(q, 30).to_le_bytes();
    for m in 0..2 {
        let v = [0, 2, 4, 6]
            .iter()
            .fold(0u32, |v, &k| v * 3 + t[k + m] as u32);
        out[24 + m] = RESCALE[3 * v as usize];
    }
    out[ptq1::SCALE_OFFSET..].copy_from_slice(&d.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Fields of random trits (0..=2) and the element-order trits they stand for.
    fn random_fields(r: &mut Rng) -> ([u64; 4], [u8; 128]) {
        let mut t = [0u8; 128];
        let mut q = [0u64; 4];
        for (e, te) in t.iter_mut().enumerate() {
            *te = (r.next_u64() % 3) as u8;
            q[e % 4] |= (*te as u64) << (2 * (e / 4));
        }
        (q, t)
    }

    #[test]
    fn encode_equals_the_codec_encoder() {
        let mut r = Rng::new(21);
        for k in 0..20_000 {
            let (q, t) = random_fields(&mut r);
            let d = r.next_u64() as u16;
            assert_eq!(encode(&q, d), ptq1::encode_block(&t, d), "block {k}");
        }
        // Every trit value at every element, one at a time on a field of ones.
        for e in 0..128 {
            for v in [0u8, 2] {
                let mut t = [1u8; 128];
                t[e] = v;
                let mut q = [0x5555_5555_5555_5555u64; 4];
                q[e % 4] ^= (1 ^ v as u64) << (2 * (e / 4));
                assert_eq!(
                    encode(&q, 0x3c00),
                    ptq1::encode_block(&t, 0x3c00),
                    "{e} {v}"
                );
            }
        }
    }

    #[test]
    fn a_wrong_digit_order_is_caught() {
        // Negative control: stage 1 with digits in reverse (LSB first) differs from the codec.
        let mut r = Rng::new(22);
        let (q, t) = random_fields(&mut r);
        let mut digits: [u64; 5] = std::array::from_fn(|n| elems8(&q, 4 * n as u32));
        digits.reverse();
        let mut wrong = [0u8; 8];
        put_rescaled(base3_bytes(&digits), &mut wrong);
        assert_ne!(wrong[..], ptq1::encode_block(&t, 0)[..8]);
        assert_eq!(encode(&q, 0)[..8], ptq1::encode_block(&t, 0)[..8]);
    }
}
