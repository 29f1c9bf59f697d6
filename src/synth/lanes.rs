//! The ternary encoder of [`super::model`] run on eight blocks at once, one block per 64-bit
//! lane: the same draws, the same swaps, the same bytes, but each step is one vector operation
//! for eight blocks (AVX-512: one register; AVX2: two). The per-lane code is plain Rust that the
//! compiler vectorizes inside `#[target_feature]` functions; the block tail (fewer than eight
//! blocks) and CPUs without AVX2 use the one-block path of `model.rs`.
//!
//! Two things in the one-block path do not vectorize as written, and get an exact substitute:
//! - `d % (32 − i)` on a full 64-bit draw (no 64-bit multiply-high in SIMD): see [`mod_small`].
//! - the variable-distance field swap needs a per-lane shift, which AVX2 and AVX-512 have.

use super::model::{self, TernaryType, DRAWS_PER_BLOCK};
use crate::codec::pq2;
use crate::rng::Rng;

/// Blocks per lane group.
pub(crate) const LANES: usize = 8;

const DRAWS: usize = DRAWS_PER_BLOCK as usize;

/// An instruction-set path of the block encoder (tests force each one the CPU has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// One block at a time (`model.rs`), for CPUs without AVX2 and as the definition's twin.
    Scalar,
    /// Eight lanes compiled for AVX2 (two 256-bit registers per lane group).
    Avx2,
    /// Eight lanes compiled for AVX-512 (one register).
    Avx512,
}

impl Path {
    /// Every path, narrowest first.
    pub(crate) const ALL: [Path; 3] = [Path::Scalar, Path::Avx2, Path::Avx512];

    /// True iff this CPU can run the path.
    pub(crate) fn is_available(self) -> bool {
        match self {
            Path::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("bmi2")
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && Path::Avx2.is_available()
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The widest available path.
    pub(crate) fn best() -> Path {
        Path::ALL
            .iter()
            .rev()
            .copied()
            .find(|p| p.is_available())
            .unwrap_or(Path::Scalar)
    }
}

/// Appends blocks `first..first + n` of the stream `stream` in `ty` on `path` (which must be
/// available): the same bytes as `model::encode_blocks`.
pub(crate) fn encode_blocks_on(
    path: Path,
    ty: TernaryType,
    stream: &Rng,
    first: u64,
    n: u64,
    out: &mut Vec<u8>,
) {
    assert!(path.is_available(), "{path:?} is not available");
    match path {
        Path::Scalar => model::encode_blocks(ty, stream, first, n, out),
        // SAFETY: the CPU has the features the functions are compiled for (asserted above).
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => unsafe { encode_avx2(ty, stream, first, n, out) },
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => unsafe { encode_avx512(ty, stream, first, n, out) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("no SIMD path off x86-64"),
    }
}

/// The draws of one lane group: `fill(rng, stride, rows)` is [`Rng::fill_lanes`].
type FillLanes = fn(&mut Rng, u64, &mut [[u64; LANES]]);

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
fn encode_avx2(ty: TernaryType, stream: &Rng, first: u64, n: u64, out: &mut Vec<u8>) {
    // A closure in a `#[target_feature]` function has its features: a safe call.
    let fill: FillLanes = |r, s, o| crate::rng::fill_lanes8_avx2(r, s, o);
    encode_lanes(ty, stream, first, n, out, fill)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,bmi2")]
fn encode_avx512(ty: TernaryType, stream: &Rng, first: u64, n: u64, out: &mut Vec<u8>) {
    // A closure in a `#[target_feature]` function has its features: a safe call.
    let fill: FillLanes = |r, s, o| crate::rng::fill_lanes8_avx512(r, s, o);
    encode_lanes(ty, stream, first, n, out, fill)
}

/// Whole lane groups from `first`, then the tail block by block. The draws come from `fill`
/// (an intrinsic kernel: the portable lane loop is vectorized badly, across rows).
#[inline(always)]
fn encode_lanes(
    ty: TernaryType,
    stream: &Rng,
    first: u64,
    n: u64,
    out: &mut Vec<u8>,
    fill: FillLanes,
) {
    let mut rng = stream.clone();
    rng.advance(first * DRAWS_PER_BLOCK);
    let mut d = [[0u64; LANES]; DRAWS];
    out.reserve(n as usize * ty.block_bytes());
    let groups = n / LANES as u64;
    for g in 0..groups {
        fill(&mut rng, DRAWS_PER_BLOCK, &mut d);
        let b0 = first + g * LANES as u64;
        encode_group(ty, &d, b0, out);
    }
    let done = groups * LANES as u64;
    model::encode_blocks(ty, stream, first + done, n - done, out);
}

/// Blocks `b0..b0 + 8` from their draws (`d[k][l]`: draw k of block `b0 + l`). Plain loops,
/// no closures: a closure passed to a std helper is compiled outside the caller's
/// `#[target_feature]` and would not vectorize.
#[inline(always)]
fn encode_group(ty: TernaryType, d: &[[u64; LANES]; DRAWS], b0: u64, out: &mut Vec<u8>) {
    let mut scales = [0u16; LANES];
    for (l, s) in scales.iter_mut().enumerate() {
        *s = model::scale_from_draws(d[0][l], d[1][l]);
    }
    let q = group_fields(d, b0);
    match ty {
        TernaryType::Pq2_0 => pack_pq2(&q, &scales, out),
        TernaryType::Ptq1_0 => {
            for (l, &s) in scales.iter().enumerate() {
                let fields = [q[0][l], q[1][l], q[2][l], q[3][l]];
                out.extend_from_slice(&super::ptq1_fields::encode(&fields, s));
            }
        }
    }
}

/// `model::class_fields` of the four classes of eight blocks. Class `c` of block `b` has 11
/// zeros iff `c + b` is even, so the lanes alternate. The four classes step together: four
/// independent swap chains to overlap. Loops over rows or classes are unrolled by macros: left
/// as loops around the 8-lane loops, the compiler vectorizes across rows (with gathers).
#[inline(always)]
fn group_fields(d: &[[u64; LANES]; DRAWS], b0: u64) -> [[u64; LANES]; 4] {
    let mut v = [[0u64; LANES]; 4];
    let mut keep = [[0u64; LANES]; 4];
    macro_rules! init {
        ($($c:literal)*) => {$(
            (v[$c], keep[$c]) = class_init(&d[2 + 32 * $c..2 + 32 * ($c + 1)], ($c + b0) % 2 == 0);
        )*};
    }
    init!(0 1 2 3);
    let all = [3u64; LANES];
    macro_rules! step {
        ($($i:literal)*) => {$(
            let k = |c: usize| if $i == 10 { &keep[c] } else { &all };
            swap::<$i>(&mut v[0], &d[2 + $i], k(0));
            swap::<$i>(&mut v[1], &d[2 + 32 + $i], k(1));
            swap::<$i>(&mut v[2], &d[2 + 64 + $i], k(2));
            swap::<$i>(&mut v[3], &d[2 + 96 + $i], k(3));
        )*};
    }
    step!(10 9 8 7 6 5 4 3 2 1 0);
    v
}

/// The fields of one class before its swaps (ones for the zeros, then the sign trits of all
/// 32 draws' low bits) and the mask of its position-10 swap: lanes alternate 11 zeros (`keep`
/// 3) and 10 (`keep` 0: draw 10 is a sign draw there, and only its sign bit is read).
/// `even_first`: lane 0 has 11 zeros.
#[inline(always)]
fn class_init(rows: &[[u64; LANES]], even_first: bool) -> ([u64; LANES], [u64; LANES]) {
    let mut signs = [0u64; LANES];
    macro_rules! sign {
        ($($k:literal)*) => {$(
            for l in 0..LANES {
                signs[l] |= (rows[$k][l] & 1) << $k;
            }
        )*};
    }
    sign!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
    let mut v = [0u64; LANES];
    let mut keep = [0u64; LANES];
    for l in 0..LANES {
        let eleven = (l % 2 == 0) == even_first;
        let low = if eleven {
            (1u64 << 22) - 1
        } else {
            (1u64 << 20) - 1
        };
        v[l] = (model::part1by1(signs[l]) << 1 & !low) | (0x5555_5555_5555_5555 & low);
        keep[l] = if eleven { 3 } else { 0 };
    }
    (v, keep)
}

/// One Fisher–Yates step on every lane: field `I` and field `I + d % (32 − I)` trade places
/// (where `keep` is 3; nothing where it is 0). `I` is a constant, so are `mod_small`'s.
#[inline(always)]
fn swap<const I: usize>(v: &mut [u64; LANES], d: &[u64; LANES], keep: &[u64; LANES]) {
    let m = 32 - I as u64;
    for l in 0..LANES {
        let j = I as u64 + mod_small(d[l], m);
        let (si, sj) = (2 * I as u32, 2 * j as u32);
        let x = ((v[l] >> si) ^ v[l].wrapping_shr(sj)) & keep[l];
        v[l] ^= (x << si) | x.wrapping_shl(sj);
    }
}

/// 2^52 as an f64: adding it to a non-negative integer-valued `x < 2^52` puts `x` in the low
/// mantissa bits (and rounds a fraction to the nearest integer).
const TWO52: f64 = 4_503_599_627_370_496.0;

/// `d % m` for `2 <= m <= 32`, exactly, in operations that vectorize (u64 division does not).
///
/// 1. `y = hi·(2^32 mod m) + lo` (`hi`, `lo` the 32-bit halves of `d`) is `≡ d (mod m)` and
///    below `2^32·32`, so it is an exact f64 (`y_f`, built from bits: `y < 2^52`).
/// 2. `q = round(y_f·(1/m))`: `1/m` and the product are each within a relative 2^-53, so the
///    product is within `y/m·2^-52 < 2^-15` of `y/m`, and `q` is `⌊y/m⌋` or `⌊y/m⌋ + 1`
///    (rounding picks one of the two integers around a value that far from either, or the
///    integer `y/m` itself).
/// 3. `r = y_f − q·m` is exact (integers below 2^53) and is `y mod m` or that minus `m`;
///    adding `m` to a negative `r` gives `y mod m = d mod m`.
///
/// `mod_small_matches_the_integer_remainder` checks it on edge values for every `m` used.
#[inline(always)]
pub(crate) fn mod_small(d: u64, m: u64) -> u64 {
    let c = (1u64 << 32) % m;
    let y = (d >> 32).wrapping_mul(c).wrapping_add(d & 0xffff_ffff);
    let yf = f64::from_bits(y | TWO52.to_bits()) - TWO52;
    let mf = m as f64;
    let q = (yf * (1.0 / mf) + TWO52) - TWO52;
    let mut r = yf - q * mf;
    if r < 0.0 {
        r += mf;
    }
    (r + TWO52).to_bits() & 0xff
}

/// PQ2_0 blocks from the fields of eight blocks (the packing of `model::encode_fields`, one
/// lane per block).
#[inline(always)]
fn pack_pq2(q: &[[u64; LANES]; 4], scales: &[u16; LANES], out: &mut Vec<u8>) {
    let mut words = [[0u64; LANES]; 4];
    for (h, wh) in words.iter_mut().enumerate() {
        for l in 0..LANES {
            let mut w = 0;
            for (c, qc) in q.iter().enumerate() {
                w |= model::spread8(qc[l] >> (16 * h)) << (2 * c);
            }
            wh[l] = w;
        }
    }
    let at = out.len();
    out.resize(at + LANES * pq2::PQ2_0_BYTES, 0);
    for (l, blk) in out[at..].chunks_exact_mut(pq2::PQ2_0_BYTES).enumerate() {
        blk[..2].copy_from_slice(&scales[l].to_le_bytes());
        for (h, w) in blk[2..].chunks_exact_mut(8).enumerate() {
            w.copy_from_slice(&words[h][l].to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of `d` around every multiple-of-`m` and power-of-two edge that step 1 and 3 of
    /// [`mod_small`] see, plus a pseudo-random spread.
    fn edge_draws(m: u64) -> Vec<u64> {
        let mut v = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        for k in [1u64 << 32, 1 << 33, u64::MAX / m, u64::MAX / m * m] {
            for e in 0..=2 * m {
                v.push(k.wrapping_add(e).wrapping_sub(m));
            }
        }
        for hi in [0u64, 1, m - 1, m, 0xffff_ffff, 0xffff_fffe] {
            for lo in [0u64, 1, m - 1, m, m + 1, 0xffff_ffff, 0xffff_ffff / m * m] {
                v.push(hi << 32 | lo);
            }
        }
        let mut r = Rng::new(m);
        v.extend((0..20_000).map(|_| r.next_u64()));
        v
    }

    #[test]
    fn mod_small_matches_the_integer_remainder() {
        for m in 2..=32u64 {
            for d in edge_draws(m) {
                assert_eq!(mod_small(d, m), d % m, "{d} % {m}");
            }
        }
        // Negative control: without the 2^32 mod m term of step 1 the remainder is wrong.
        let wrong = |d: u64, m: u64| mod_small(d & 0xffff_ffff, m);
        assert!(edge_draws(22).iter().any(|&d| wrong(d, 22) != d % 22));
    }

    #[test]
    fn every_path_equals_the_sequential_definition() {
        for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
            let stream = Rng::for_name(9, "blk.3.attn_q.weight");
            let mut rng = stream.clone();
            let mut want = Vec::new();
            for b in 0..700 {
                let d = model::block_scale(&mut rng);
                model::encode_block(ty, &model::block_trits(&mut rng, b), d, &mut want);
            }
            let bb = ty.block_bytes();
            let mut ran = 0;
            for path in Path::ALL.into_iter().filter(|p| p.is_available()) {
                ran += 1;
                for (first, n) in [(0u64, 700u64), (1, 17), (3, 8), (333, 367), (699, 1)] {
                    let mut got = Vec::new();
                    encode_blocks_on(path, ty, &stream, first, n, &mut got);
                    let at = first as usize * bb;
                    assert!(
                        got == want[at..at + n as usize * bb],
                        "{path:?} {ty:?} {first}+{n}"
                    );
                }
            }
            assert!(ran >= 1);
        }
    }

    #[test]
    fn a_wrong_lane_variant_is_caught() {
        // Negative control of the comparison above: the same group code with lane parity
        // flipped (every lane gets the other class's zero count) gives different bytes.
        let stream = Rng::for_name(9, "blk.3.attn_q.weight");
        let mut right = Vec::new();
        let mut flipped = Vec::new();
        let mut d = [[0u64; LANES]; DRAWS];
        stream.clone().fill_lanes(DRAWS_PER_BLOCK, &mut d);
        encode_group(TernaryType::Pq2_0, &d, 0, &mut right);
        encode_group(TernaryType::Pq2_0, &d, 1, &mut flipped);
        let mut want = Vec::new();
        model::encode_blocks(TernaryType::Pq2_0, &stream, 0, 8, &mut want);
        assert_eq!(right, want);
        assert_ne!(flipped, want);
    }
}
