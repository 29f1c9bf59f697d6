//! The one deterministic generator of the crate (SplitMix64): same seed, same stream, on every
//! machine. Synth, the corpus families, the kernel cases and the verifier's reference dumps all
//! draw from it, so their streams (and the corpus bytes) stay pinned to one implementation.

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

/// SplitMix64's state increment per draw (the golden-ratio constant).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's two output multipliers.
const MIX1: u64 = 0xbf58_476d_1ce4_e5b9;
const MIX2: u64 = 0x94d0_49bb_1331_11eb;

/// SplitMix64's output function of a state.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX2);
    z ^ (z >> 31)
}

/// Draws `state + (k+1)·γ` mixed into `out[k]`: each lane independent, so it vectorizes.
#[inline(always)]
fn fill_from(state: u64, out: &mut [u64]) {
    let mut s = state;
    for o in out.iter_mut() {
        s = s.wrapping_add(GAMMA);
        *o = mix(s);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn fill_avx512(state: u64, out: &mut [u64]) {
    fill_from(state, out)
}

/// Lane `l` of `out[k]` is draw `stride·l + k` after `state`: `L` stretches of one stream side by
/// side, one lane each, so per-lane work on them vectorizes without a transpose. The portable
/// definition of the intrinsic kernels below (the tests compare them).
/// The case-payload view of `Rng` (one byte per draw, 24-bit units).
pub struct Bytes(Rng);

impl Bytes {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Bytes {
        Bytes(Rng::new(seed))
    }
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// `n` payload bytes.
    pub fn fill(&mut self, n: usize) -> Vec<u8> {
        self.0.low_bytes(n)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        self.0.unit_f32()
    }
}

#[cfg(test)]
fn fill_lanes_from<const L: usize>(state: u64, stride: u64, out: &mut [[u64; L]]) {
    let mut s: [u64; L] = std::array::from_fn(|l| {
        state.wrapping_add((stride.wrapping_mul(l as u64)).wrapping_mul(GAMMA))
    });
    // Row by row, the lanes innermost (one vector per row; no scatter across rows).
    for o in out.iter_mut() {
        let mut row = [0u64; L];
        for l in 0..L {
            s[l] = s[l].wrapping_add(GAMMA);
            row[l] = mix(s[l]);
        }
        *o = row;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_avx2(state: u64, out: &mut [u64]) {
    fill_from(state, out)
}

/// [`Rng::fill_lanes`] for 8 lanes in AVX-512 intrinsics (the portable loop, compiled for
/// AVX-512, is vectorized across rows by the compiler and stored with scatters; this is one
/// register per row and one store).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
pub(crate) fn fill_lanes8_avx512(rng: &mut Rng, stride: u64, out: &mut [[u64; 8]]) {
    use std::arch::x86_64::*;
    let c = |x: u64| _mm512_set1_epi64(x as i64);
    let lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let mut s = _mm512_add_epi64(
        c(rng.0),
        _mm512_mullo_epi64(lane, c(stride.wrapping_mul(GAMMA))),
    );
    let (g, m1, m2) = (c(GAMMA), c(MIX1), c(MIX2));
    for o in out.iter_mut() {
        s = _mm512_add_epi64(s, g);
        let mut z = _mm512_xor_si512(s, _mm512_srli_epi64::<30>(s));
        z = _mm512_mullo_epi64(z, m1);
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
        z = _mm512_mullo_epi64(z, m2);
        z = _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z));
        // SAFETY: `o` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), z) };
    }
    rng.advance(stride.wrapping_mul(8));
}

/// `a · k` (mod 2^64) per 64-bit lane in AVX2, which has no 64-bit multiply: the three 32×32
/// partial products that reach the low 64 bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul64_avx2(
    a: std::arch::x86_64::__m256i,
    k_lo: std::arch::x86_64::__m256i,
    k_hi: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let lo = _mm256_mul_epu32(a, k_lo);
    let cross = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), k_lo),
        _mm256_mul_epu32(a, k_hi),
    );
    _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
}

/// [`Rng::fill_lanes`] for 8 lanes in AVX2 intrinsics (two registers per row).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn fill_lanes8_avx2(rng: &mut Rng, stride: u64, out: &mut [[u64; 8]]) {
    use std::arch::x86_64::*;
    let c = |x: u64| _mm256_set1_epi64x(x as i64);
    let step = stride.wrapping_mul(GAMMA);
    let start = |l: u64| rng.0.wrapping_add(step.wrapping_mul(l)) as i64;
    let mut s = [
        _mm256_set_epi64x(start(3), start(2), start(1), start(0)),
        _mm256_set_epi64x(start(7), start(6), start(5), start(4)),
    ];
    let g = c(GAMMA);
    let (m1l, m1h, m2l, m2h) = (c(MIX1), c(MIX1 >> 32), c(MIX2), c(MIX2 >> 32));
    for o in out.iter_mut() {
        for (h, sh) in s.iter_mut().enumerate() {
            *sh = _mm256_add_epi64(*sh, g);
            let mut z = _mm256_xor_si256(*sh, _mm256_srli_epi64::<30>(*sh));
            z = mul64_avx2(z, m1l, m1h);
            z = _mm256_xor_si256(z, _mm256_srli_epi64::<27>(z));
            z = mul64_avx2(z, m2l, m2h);
            z = _mm256_xor_si256(z, _mm256_srli_epi64::<31>(z));
            // SAFETY: lanes 4h..4h+4 of `o` are 32 writable bytes; the store is unaligned.
            unsafe { _mm256_storeu_si256(o[4 * h..].as_mut_ptr().cast(), z) };
        }
    }
    rng.advance(stride.wrapping_mul(8));
}

impl Rng {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A stream keyed by a name, so each tensor's contents do not depend on generation order.
    pub fn for_name(seed: u64, name: &str) -> Rng {
        // FNV-1a over the name, mixed with the seed.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }

    /// Skips `n` draws: SplitMix64's state after `n` draws is `state + n·γ` (mod 2^64), so a
    /// worker can start anywhere in a stream and produce exactly the sequential draws.
    pub fn advance(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n.wrapping_mul(GAMMA));
    }

    /// The next `out.len()` draws, the same values as that many [`Self::next_u64`] calls
    /// (vectorized with AVX-512 or AVX2 where the CPU has them).
    pub fn fill_u64(&mut self, out: &mut [u64]) {
        let s = self.0;
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                // SAFETY: the CPU has every feature the function is compiled for.
                unsafe { fill_avx512(s, out) };
            } else if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: as above.
                unsafe { fill_avx2(s, out) };
            } else {
                fill_from(s, out);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        fill_from(s, out);
        self.advance(out.len() as u64);
    }

    /// `L` stretches of `stride` draws side by side: lane `l` of `out[k]` is draw
    /// `stride·l + k` of the stream (so with `out.len() == stride` they are the next
    /// `L·stride` draws, lane by lane); then skips all `L·stride` draws. The definition of
    /// [`fill_lanes8_avx512`] and [`fill_lanes8_avx2`] (tests only).
    #[cfg(test)]
    pub(crate) fn fill_lanes<const L: usize>(&mut self, stride: u64, out: &mut [[u64; L]]) {
        fill_lanes_from(self.0, stride, out);
        self.advance(stride.wrapping_mul(L as u64));
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, 1) with 24 bits (the corpus families' scalar draw).
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `n` bytes, one draw each (its low byte): the corpus families' payload stream.
    pub fn low_bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// Fills `out` with pseudo-random bytes, eight per draw (little-endian), plus one draw
    /// for a partial last word: byte `i` of a fill is byte `i % 8` of draw `i / 8`.
    pub fn fill(&mut self, out: &mut [u8]) {
        let mut words = [0u64; 512];
        let mut chunks = out.chunks_exact_mut(8 * words.len());
        for c in &mut chunks {
            self.fill_u64(&mut words);
            for (o, w) in c.chunks_exact_mut(8).zip(&words) {
                o.copy_from_slice(&w.to_le_bytes());
            }
        }
        let rest = chunks.into_remainder();
        let n = rest.len().div_ceil(8);
        self.fill_u64(&mut words[..n]);
        for (o, w) in rest.chunks_mut(8).zip(&words) {
            o.copy_from_slice(&w.to_le_bytes()[..o.len()]);
        }
        if rest.len() % 8 == 0 {
            // The sequential form always took one draw for the (possibly empty) remainder.
            self.advance(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_name_keyed() {
        let mut a = Rng::for_name(7, "x");
        let mut b = Rng::for_name(7, "x");
        assert_eq!(a.next_u64(), b.next_u64());
        assert_ne!(
            Rng::for_name(7, "x").next_u64(),
            Rng::for_name(7, "y").next_u64()
        );
        // Pinned first value of SplitMix64 from seed 0 (reference value of the published algorithm).
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    /// The sequential definitions the fast paths must equal.
    fn seq_fill(r: &mut Rng, out: &mut [u8]) {
        let mut chunks = out.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&r.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let v = r.next_u64().to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&v[..n]);
    }

    #[test]
    fn advance_and_fill_u64_equal_the_sequential_draws() {
        let mut seq = Rng::new(42);
        let want: Vec<u64> = (0..5000).map(|_| seq.next_u64()).collect();
        for start in [0usize, 1, 7, 130, 4096] {
            for len in [0usize, 1, 3, 8, 9, 130, 777] {
                let mut r = Rng::new(42);
                r.advance(start as u64);
                let mut got = vec![0u64; len];
                r.fill_u64(&mut got);
                assert_eq!(got, want[start..start + len], "start {start} len {len}");
                assert_eq!(r.next_u64(), want[start + len], "state after fill");
            }
        }
        // Negative control: advancing by one draw too many misses the stream.
        let mut r = Rng::new(42);
        r.advance(8);
        assert_ne!(r.next_u64(), want[7]);
    }

    #[test]
    fn fill_lanes_equals_the_sequential_draws() {
        let mut seq = Rng::new(11);
        let want: Vec<u64> = (0..4000).map(|_| seq.next_u64()).collect();
        for (stride, rows) in [(130u64, 130usize), (7, 7), (9, 3)] {
            let mut r = Rng::new(11);
            r.advance(5);
            let mut out = vec![[0u64; 8]; rows];
            r.fill_lanes(stride, &mut out);
            for (k, row) in out.iter().enumerate() {
                for (l, &x) in row.iter().enumerate() {
                    assert_eq!(x, want[5 + stride as usize * l + k], "{stride} {k} {l}");
                }
            }
            assert_eq!(r.next_u64(), want[5 + 8 * stride as usize], "state after");
        }
        // The intrinsic versions, on every one this CPU has.
        #[cfg(target_arch = "x86_64")]
        for (stride, rows) in [(130u64, 130usize), (9, 3)] {
            let mut want = vec![[0u64; 8]; rows];
            let mut r = Rng::new(11);
            r.fill_lanes(stride, &mut want);
            let after = r.next_u64();
            type FillLanes = fn(&mut Rng, u64, &mut [[u64; 8]]);
            let mut fns: Vec<FillLanes> = Vec::new();
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                fns.push(|r, s, o| unsafe { fill_lanes8_avx2(r, s, o) });
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                // SAFETY: the CPU has AVX-512F and DQ.
                fns.push(|r, s, o| unsafe { fill_lanes8_avx512(r, s, o) });
            }
            for f in fns {
                let mut got = vec![[0u64; 8]; rows];
                let mut r = Rng::new(11);
                f(&mut r, stride, &mut got);
                assert_eq!(got, want, "stride {stride}");
                assert_eq!(r.next_u64(), after);
            }
        }
        // Negative control: lane 1 of stride 130 is not the draw right after lane 0's.
        let mut out = [[0u64; 8]; 2];
        Rng::new(11).fill_lanes(130, &mut out);
        assert_ne!(out[0][1], want[1]);
    }

    #[test]
    fn fill_equals_the_sequential_byte_stream() {
        for len in [0usize, 1, 7, 8, 9, 4095, 4096, 4097, 12_345] {
            let (mut a, mut b) = (Rng::new(9), Rng::new(9));
            let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
            a.fill(&mut x);
            seq_fill(&mut b, &mut y);
            assert_eq!(x, y, "len {len}");
            assert_eq!(a.next_u64(), b.next_u64(), "state after fill of {len}");
        }
    }
}
