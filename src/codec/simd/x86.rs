//! x86-64 kernels: SSE2 (4 lanes, `cvt + mul`), AVX2 (8 lanes) and AVX-512F (16 lanes), the
//! last two mapping a code 0..=3 to its value with one lane permute through the block's
//! `table_f16c`.
//!
//! Base-3 digits in 32-bit lanes follow the module doc of [`crate::codec::base3`]: with
//! `q₀ = b`, `r = 3·q` gives digit `r >> 8` and the next `q = r & 0xff` (the byte times the
//! next power of 3, wrapped), so one add, two shifts and an and per digit per lane.
//!
//! Safety: every kernel is only entered after [`Path::is_available`] confirmed the CPU
//! features, and every pointer access stays inside `blocks` whole blocks of `bytes` / `out`,
//! where `blocks` is computed from both slice lengths. The AVX-512 `LineWriter`'s first and last
//! stores name the whole lines around the output's ends; their lanes outside the output are
//! masked off, and a masked-off lane is neither read nor written (nor can it fault).

use super::Path;
use crate::codec::{f16_to_f32, pq2};
use std::arch::x86_64::*;

/// Whole blocks that fit both `bytes` (of `bb` bytes) and `out` (of `be` elements).
#[inline(always)]
fn whole_blocks(bytes: &[u8], out: &[f32], bb: usize, be: usize) -> usize {
    (bytes.len() / bb).min(out.len() / be)
}

/// Runs the staged base-3 kernel of `path`; false when `path` is not an x86 path this CPU runs.
pub(super) fn staged<const W1: usize, const W2: usize, const WH: usize>(
    path: Path,
    bytes: &[u8],
    out: &mut [f32],
) -> bool {
    if !path.is_available() {
        return false;
    }
    let bb = W1 + W2 + WH + 2;
    let be = 5 * (W1 + W2) + 4 * WH;
    let n = whole_blocks(bytes, out, bb, be);
    // SAFETY: the features were detected above; `n` blocks fit both slices.
    unsafe {
        match path {
            Path::Sse2 => staged_sse2::<W1, W2, WH>(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx2 => staged_avx2::<W1, W2, WH>(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx512 => staged_lines_avx512::<W1, W2, WH>(bytes.as_ptr(), out.as_mut_ptr(), n),
            _ => return false,
        }
    }
    true
}

/// Runs the PQ2_0-family kernel (group `G`) of `path`; false when `path` is not available.
pub(super) fn pq2<const G: usize>(path: Path, bytes: &[u8], out: &mut [f32]) -> bool {
    if !path.is_available() {
        return false;
    }
    let n = whole_blocks(bytes, out, pq2::block_bytes(G), G);
    // SAFETY: as in `staged`.
    unsafe {
        match path {
            Path::Sse2 => pq2_sse2::<G>(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx2 => pq2_avx2::<G>(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx512 => pq2_avx512::<G>(bytes.as_ptr(), out.as_mut_ptr(), n),
            _ => return false,
        }
    }
    true
}

/// Runs the TQ2_0 kernel of `path`; false when `path` is not available.
pub(super) fn tq2(path: Path, bytes: &[u8], out: &mut [f32]) -> bool {
    if !path.is_available() {
        return false;
    }
    let n = whole_blocks(bytes, out, TQ2_BYTES, 256);
    // SAFETY: as in `staged`.
    unsafe {
        match path {
            Path::Sse2 => tq2_sse2(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx2 => tq2_avx2(bytes.as_ptr(), out.as_mut_ptr(), n),
            Path::Avx512 => tq2_avx512(bytes.as_ptr(), out.as_mut_ptr(), n),
            _ => return false,
        }
    }
    true
}

const TQ2_BYTES: usize = crate::codec::tq2::BLOCK_BYTES;

/// Copies `src` to `dst` (equal lengths) with non-temporal stores of the width of `path`:
/// ordinary stores up to the first 16-byte boundary of `dst` (64-byte on [`Path::Avx512`]) and
/// after the last whole vector, `movntps` between (on AVX-512 one whole write-combining line
/// per instruction). The caller issues [`store_fence`] before the values are read by anyone
/// else.
pub(super) fn stream_copy(path: Path, src: &[f32], dst: &mut [f32]) {
    assert_eq!(src.len(), dst.len(), "stream_copy lengths");
    let wide = path == Path::Avx512 && path.is_available();
    let lanes = if wide { 16 } else { 4 };
    let n = dst.len();
    let mis = (dst.as_ptr() as usize) % (4 * lanes);
    let head = if mis == 0 {
        0
    } else {
        ((4 * lanes - mis) / 4).min(n)
    };
    let body = (n - head) / lanes * lanes;
    dst[..head].copy_from_slice(&src[..head]);
    // SAFETY: SSE is baseline on x86-64 and AVX-512F was detected for `wide`; `dst + head` is
    // aligned to the vector (an f32 slice is 4-byte aligned and `head` lanes reach the
    // boundary), and every access at `head + lanes·j < head + body <= n` stays inside both
    // slices.
    unsafe {
        let (s, d) = (src.as_ptr().add(head), dst.as_mut_ptr().add(head));
        if wide {
            stream_lines_avx512(s, d, body);
        } else {
            let mut i = 0;
            while i < body {
                _mm_stream_ps(d.add(i), _mm_loadu_ps(s.add(i)));
                i += 4;
            }
        }
    }
    dst[head + body..].copy_from_slice(&src[head + body..]);
}

/// `n` (a multiple of 16) values from `s` to the 64-byte aligned `d`, one non-temporal line
/// store each.
#[target_feature(enable = "avx512f")]
unsafe fn stream_lines_avx512(s: *const f32, d: *mut f32, n: usize) {
    let mut i = 0;
    while i < n {
        _mm512_stream_ps(d.add(i), _mm512_loadu_ps(s.add(i)));
        i += 16;
    }
}

/// `sfence`: orders the non-temporal stores before every later store (and the thread's exit).
pub(super) fn store_fence() {
    // SAFETY: SSE is baseline on x86-64.
    unsafe { _mm_sfence() }
}

/// The f16 scale at `p` (little-endian) as f32, through the one shared conversion.
#[inline(always)]
unsafe fn scale_at(p: *const u8) -> f32 {
    f16_to_f32(u16::from_le_bytes([*p, *p.add(1)]))
}

/// The block's value table `[(k − 1)·d]` in 4 lanes, d converted from the f16 at `p` by F16C
/// (`vcvtph2ps`, the conversion `half` itself picks on such CPUs: exact, NaN payload kept with
/// the quiet bit set) and multiplied lane-wise: the reference's products, without a call.
#[inline]
#[target_feature(enable = "avx2,f16c")]
unsafe fn table_f16c(p: *const u8) -> __m128 {
    let h = _mm_cvtsi32_si128((p as *const u16).read_unaligned() as i32);
    let d = _mm_cvtph_ps(h);
    _mm_mul_ps(_mm_setr_ps(-1.0, 0.0, 1.0, 2.0), _mm_shuffle_ps::<0>(d, d))
}

/// Lane constants of the qh tail (WH bytes × 4 digits, element f → byte f % WH, digit f / WH):
/// the bit shift that brings byte `f % WH` down, and 3^(f / WH).
const fn tail_lanes<const WH: usize>() -> ([i32; 16], [i32; 16]) {
    let mut shift = [0i32; 16];
    let mut pow = [0i32; 16];
    let mut f = 0;
    while f < 16 {
        shift[f] = 8 * (f % WH) as i32;
        pow[f] = [1, 3, 9, 27, 81, 243, 729, 2187][f / WH];
        f += 1;
    }
    (shift, pow)
}

/// Reads `WH` (≤ 4) bytes at `p` as a little-endian u32 (missing high bytes zero).
#[inline(always)]
unsafe fn read_tail<const WH: usize>(p: *const u8) -> i32 {
    let mut w = 0u32;
    for i in 0..WH {
        w |= (*p.add(i) as u32) << (8 * i);
    }
    w as i32
}

// ---------------------------------------------------------------- AVX-512F

/// A sequential run of 16-lane output vectors stored as whole, aligned 64-byte lines.
///
/// Why: an output slice is only 4-byte aligned (a large `Vec<f32>` from glibc starts 16 bytes
/// past a page), and a 64-byte store that straddles two lines costs about a third of the
/// decode's rate once the output lives in L2 (bench `decode/*/avx512/l2`, 2026-12-02 evening:
/// 8.3-10.8 G w/s at 16 mod 64 against 14.1-14.9 aligned). With the output `m` lanes past a
/// line, each line is assembled from the last `m` lanes of the previous vector and the first
/// `16 − m` of the current one (one two-source lane permute), and stored aligned; the first
/// and the last line are masked stores that touch only the output's own lanes.
struct LineWriter {
    /// The line the next store writes: the aligned base below the output start before the
    /// first put when `m > 0`, and after the last put the line holding the output's last `m`
    /// values, or just past its end when `m == 0` (only the output's own lanes are written).
    line: *mut f32,
    /// Lanes between the line start and the output start (0..16).
    m: usize,
    /// `permutex2var(prev, idx, cur)` lane sources: `prev[16 − m + j]` for `j < m`, else
    /// `cur[j − m]`.
    idx: __m512i,
    /// The previous vector put (its last `m` lanes begin the next line).
    prev: __m512,
    /// No vector put yet.
    first: bool,
}

impl LineWriter {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn new(dst: *mut f32) -> Self {
        let m = (dst as usize % 64) / 4;
        let mut idx = [0i32; 16];
        for (j, v) in idx.iter_mut().enumerate() {
            *v = if j < m {
                (16 - m + j) as i32
            } else {
                (16 + j - m) as i32
            };
        }
        LineWriter {
            // wrapping: the aligned base may lie before the output, and only masked lanes of
            // it are written (the first store below).
            line: dst.wrapping_sub(m),
            m,
            idx: _mm512_loadu_si512(idx.as_ptr() as *const _),
            prev: _mm512_setzero_ps(),
            first: true,
        }
    }

    /// Stores `v` as the next 16 output values. Safety: AVX-512F is available (it is only
    /// inlined into AVX-512 kernels), and the output has room for 16 more values.
    #[inline(always)]
    unsafe fn put(&mut self, v: __m512) {
        if self.m == 0 {
            _mm512_storeu_ps(self.line, v);
        } else {
            let line = _mm512_permutex2var_ps(self.prev, self.idx, v);
            if self.first {
                // Lanes m.. of the line are the output's first 16 − m values.
                _mm512_mask_storeu_ps(self.line, u16::MAX << self.m, line);
                self.first = false;
            } else {
                _mm512_store_ps(self.line, line);
            }
            self.prev = v;
        }
        self.line = self.line.wrapping_add(16);
    }

    /// Stores what is left of the last vector: lanes `0..m` of the line after it.
    #[inline(always)]
    unsafe fn finish(self) {
        if self.m != 0 && !self.first {
            let line = _mm512_permutex2var_ps(self.prev, self.idx, self.prev);
            _mm512_mask_storeu_ps(self.line, !(u16::MAX << self.m), line);
        }
    }
}

/// True when every part of a staged block is whole 16-lane vectors in memory order that
/// [`stage_lines`] and the tails produce: stage 1 of 16 or 32 bytes, then the packed tail, or
/// a stage 2 of 16 or 32 bytes and a 16-value qh tail. Both staged codecs fit (TQ1_0 32/16/4,
/// PTQ1_0 16/8/2); `staged_lines_avx512` refuses to compile for a layout that does not.
#[allow(non_snake_case)]
const fn LINES_FIT<const W1: usize, const W2: usize, const WH: usize>() -> bool {
    const fn whole(w: usize) -> bool {
        w == 16 || w == 32
    }
    whole(W1) && (PACKED_TAIL_FITS::<W1, W2, WH>() || (whole(W2) && WH == 4))
}

/// One stage of `W` (16 or 32) bytes × `N` digits, put in memory order: digit `k` of every
/// byte of the stage before digit `k + 1`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn stage_lines<const W: usize, const N: usize>(
    src: *const u8,
    table: __m512,
    w: &mut LineWriter,
) {
    // Two groups at most (the `q` array). W is 16 or 32 wherever this runs (`LINES_FIT`,
    // asserted by the caller); PTQ1_0's unreachable W2 = 8 stage still compiles.
    const { assert!(W <= 32) };
    let mask = _mm512_set1_epi32(0xff);
    let mut q = [_mm512_setzero_si512(); 2];
    for (g, q) in q.iter_mut().enumerate().take(W / 16) {
        *q = _mm512_cvtepu8_epi32(_mm_loadu_si128(src.add(16 * g) as *const __m128i));
    }
    for _ in 0..N {
        for q in q.iter_mut().take(W / 16) {
            let r = _mm512_add_epi32(*q, _mm512_slli_epi32::<1>(*q));
            w.put(_mm512_permutexvar_ps(_mm512_srli_epi32::<8>(r), table));
            *q = _mm512_and_si512(r, mask);
        }
    }
}

/// The staged kernel on 16 lanes (layouts where [`LINES_FIT`]), stored as aligned lines.
#[target_feature(enable = "avx512f,avx2,f16c")]
unsafe fn staged_lines_avx512<const W1: usize, const W2: usize, const WH: usize>(
    src: *const u8,
    dst: *mut f32,
    blocks: usize,
) {
    const { assert!(LINES_FIT::<W1, W2, WH>()) };
    let bb = W1 + W2 + WH + 2;
    let (shift, pow) = const { tail_lanes::<WH>() };
    let shift16 = _mm512_loadu_si512(shift.as_ptr() as *const _);
    let pow16 = _mm512_loadu_si512(pow.as_ptr() as *const _);
    let mask = _mm512_set1_epi32(0xff);
    let mut w = LineWriter::new(dst);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let t16 = _mm512_broadcast_f32x4(table_f16c(blk.add(W1 + W2 + WH)));
        stage_lines::<W1, 5>(blk, t16, &mut w);
        if PACKED_TAIL_FITS::<W1, W2, WH>() {
            let (idx, pow) = const { packed_tail_lanes::<W1, W2, WH>() };
            let x =
                _mm512_cvtepu8_epi32(_mm_loadu_si128(blk.add(W1 + W2 + WH - 16) as *const __m128i));
            for v in 0..(5 * W2 + 4 * WH) / 16 {
                let i = _mm512_loadu_si512(idx.as_ptr().add(16 * v) as *const _);
                let p = _mm512_loadu_si512(pow.as_ptr().add(16 * v) as *const _);
                let q =
                    _mm512_and_si512(_mm512_mullo_epi32(_mm512_permutexvar_epi32(i, x), p), mask);
                let r = _mm512_add_epi32(q, _mm512_slli_epi32::<1>(q));
                w.put(_mm512_permutexvar_ps(_mm512_srli_epi32::<8>(r), t16));
            }
            continue;
        }
        stage_lines::<W2, 5>(blk.add(W1), t16, &mut w);
        // qh tail (WH == 4): 16 outputs, lane f from byte f % 4 times 3^(f / 4).
        let x = _mm512_set1_epi32(read_tail::<WH>(blk.add(W1 + W2)));
        let x = _mm512_and_si512(_mm512_srlv_epi32(x, shift16), mask);
        let q = _mm512_and_si512(_mm512_mullo_epi32(x, pow16), mask);
        let r = _mm512_add_epi32(q, _mm512_slli_epi32::<1>(q));
        w.put(_mm512_permutexvar_ps(_mm512_srli_epi32::<8>(r), t16));
    }
    w.finish();
}

/// True when stage 2 and the qh tail (PTQ1_0: 8 + 2 bytes, 40 + 8 = 48 contiguous outputs)
/// fit one 16-byte load ending at the scale and fill whole 16-lane vectors.
#[allow(non_snake_case)]
const fn PACKED_TAIL_FITS<const W1: usize, const W2: usize, const WH: usize>() -> bool {
    W2 + WH <= 16
        && W1 + W2 + WH >= 16
        && (5 * W2 + 4 * WH).is_multiple_of(16)
        && 5 * W2 + 4 * WH <= 48
}

/// Lane patterns of the packed tail: for output f of stage 2 ‖ qh, the byte's index in the
/// 16 bytes loaded at `W1 + W2 + WH − 16`, and 3^digit.
const fn packed_tail_lanes<const W1: usize, const W2: usize, const WH: usize>(
) -> ([i32; 48], [i32; 48]) {
    // Unused (all zero) for layouts where the packed tail does not fit; never underflows.
    let base = (W1 + W2 + WH).saturating_sub(16);
    let mut idx = [0i32; 48];
    let mut pow = [0i32; 48];
    let mut f = 0;
    while f < 5 * W2 + 4 * WH && f < 48 {
        let (byte, digit) = if f < 5 * W2 {
            (W1 + f % W2, f / W2)
        } else {
            (W1 + W2 + (f - 5 * W2) % WH, (f - 5 * W2) / WH)
        };
        idx[f] = byte.saturating_sub(base) as i32;
        pow[f] = [1, 3, 9, 27, 81][digit];
        f += 1;
    }
    (idx, pow)
}

#[target_feature(enable = "avx512f,avx2,f16c")]
unsafe fn pq2_avx512<const G: usize>(src: *const u8, dst: *mut f32, blocks: usize) {
    const { assert!(G.is_multiple_of(16)) };
    let bb = pq2::block_bytes(G);
    let shifts = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let three = _mm512_set1_epi32(3);
    // G is a multiple of 16 (asserted above), so each block is whole vectors in memory order.
    let mut out = LineWriter::new(dst);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let t16 = _mm512_broadcast_f32x4(table_f16c(blk));
        for k in 0..G / 16 {
            // 4 qs bytes = 16 codes, code j at bits 2j of the little-endian word.
            let w = _mm512_set1_epi32((blk.add(2 + 4 * k) as *const i32).read_unaligned());
            let c = _mm512_and_si512(_mm512_srlv_epi32(w, shifts), three);
            out.put(_mm512_permutexvar_ps(c, t16));
        }
    }
    out.finish();
}

#[target_feature(enable = "avx512f,avx2,f16c")]
unsafe fn tq2_avx512(src: *const u8, dst: *mut f32, blocks: usize) {
    let three = _mm512_set1_epi32(3);
    // Memory order: output h·128 + l·32 + g·16 + i is code l of byte h·32 + g·16 + i.
    let mut out = LineWriter::new(dst);
    for b in 0..blocks {
        let blk = src.add(b * TQ2_BYTES);
        let t16 = _mm512_broadcast_f32x4(table_f16c(blk.add(64)));
        for h in 0..2 {
            let mut x = [0, 1].map(|g| {
                _mm512_cvtepu8_epi32(_mm_loadu_si128(blk.add(h * 32 + g * 16) as *const __m128i))
            });
            for _l in 0..4 {
                for x in x.iter_mut() {
                    out.put(_mm512_permutexvar_ps(_mm512_and_si512(*x, three), t16));
                    *x = _mm512_srli_epi32::<2>(*x);
                }
            }
        }
    }
    out.finish();
}

// ---------------------------------------------------------------- AVX2

/// `N` base-3 digits of 8 byte values (in 32-bit lanes), digit `k` stored at `out + k·stride`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn digits_ymm<const N: usize>(x: __m256i, table: __m256, out: *mut f32, stride: usize) {
    let mask = _mm256_set1_epi32(0xff);
    let mut q = x;
    for k in 0..N {
        let r = _mm256_add_epi32(q, _mm256_slli_epi32::<1>(q));
        let t = _mm256_srli_epi32::<8>(r);
        _mm256_storeu_ps(out.add(k * stride), _mm256_permutevar8x32_ps(table, t));
        q = _mm256_and_si256(r, mask);
    }
}

/// One stage of `W` bytes × `N` digits (W a multiple of 8) on 8 lanes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn stage_avx2<const W: usize, const N: usize>(src: *const u8, t8: __m256, out: *mut f32) {
    let mut g = 0;
    while g + 8 <= W {
        let x = _mm256_cvtepu8_epi32(_mm_loadl_epi64(src.add(g) as *const __m128i));
        digits_ymm::<N>(x, t8, out.add(g), W);
        g += 8;
    }
}

#[target_feature(enable = "avx2,f16c")]
unsafe fn staged_avx2<const W1: usize, const W2: usize, const WH: usize>(
    src: *const u8,
    dst: *mut f32,
    blocks: usize,
) {
    const { assert!(W1.is_multiple_of(8) && W2.is_multiple_of(8) && (WH == 2 || WH == 4)) };
    let bb = W1 + W2 + WH + 2;
    let be = 5 * (W1 + W2) + 4 * WH;
    let (shift, pow) = const { tail_lanes::<WH>() };
    let mask = _mm256_set1_epi32(0xff);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * be);
        let t4 = table_f16c(blk.add(W1 + W2 + WH));
        let t8 = _mm256_set_m128(t4, t4);
        stage_avx2::<W1, 5>(blk, t8, out);
        stage_avx2::<W2, 5>(blk.add(W1), t8, out.add(5 * W1));
        let w = _mm256_set1_epi32(read_tail::<WH>(blk.add(W1 + W2)));
        let o = out.add(5 * (W1 + W2));
        for h in 0..WH / 2 {
            let sh = _mm256_loadu_si256(shift.as_ptr().add(8 * h) as *const __m256i);
            let pw = _mm256_loadu_si256(pow.as_ptr().add(8 * h) as *const __m256i);
            let x = _mm256_and_si256(_mm256_srlv_epi32(w, sh), mask);
            let q = _mm256_and_si256(_mm256_mullo_epi32(x, pw), mask);
            let r = _mm256_add_epi32(q, _mm256_slli_epi32::<1>(q));
            _mm256_storeu_ps(
                o.add(8 * h),
                _mm256_permutevar8x32_ps(t8, _mm256_srli_epi32::<8>(r)),
            );
        }
    }
}

#[target_feature(enable = "avx2,f16c")]
unsafe fn pq2_avx2<const G: usize>(src: *const u8, dst: *mut f32, blocks: usize) {
    let bb = pq2::block_bytes(G);
    let shifts = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    let three = _mm256_set1_epi32(3);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * G);
        let t4 = table_f16c(blk);
        let t8 = _mm256_set_m128(t4, t4);
        for k in 0..G / 8 {
            let w = _mm256_set1_epi32((blk.add(2 + 2 * k) as *const u16).read_unaligned() as i32);
            let c = _mm256_and_si256(_mm256_srlv_epi32(w, shifts), three);
            _mm256_storeu_ps(out.add(8 * k), _mm256_permutevar8x32_ps(t8, c));
        }
    }
}

#[target_feature(enable = "avx2,f16c")]
unsafe fn tq2_avx2(src: *const u8, dst: *mut f32, blocks: usize) {
    let three = _mm256_set1_epi32(3);
    for b in 0..blocks {
        let blk = src.add(b * TQ2_BYTES);
        let out = dst.add(b * 256);
        let t4 = table_f16c(blk.add(64));
        let t8 = _mm256_set_m128(t4, t4);
        for h in 0..2 {
            for g in 0..4 {
                let mut x = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                    blk.add(h * 32 + g * 8) as *const __m128i
                ));
                for l in 0..4 {
                    let c = _mm256_and_si256(x, three);
                    _mm256_storeu_ps(
                        out.add(h * 128 + l * 32 + g * 8),
                        _mm256_permutevar8x32_ps(t8, c),
                    );
                    x = _mm256_srli_epi32::<2>(x);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- SSE2

/// 4 bytes at `p` zero-extended to 32-bit lanes (SSE2 has no `pmovzx`: two unpacks with zero).
#[inline(always)]
unsafe fn load4_u8_epi32(p: *const u8) -> __m128i {
    let z = _mm_setzero_si128();
    let b = _mm_cvtsi32_si128((p as *const i32).read_unaligned());
    _mm_unpacklo_epi16(_mm_unpacklo_epi8(b, z), z)
}

/// `(t − 1) · d` on 4 lanes: `t − 1` converts exactly, so this is the reference's product.
#[inline(always)]
unsafe fn value_sse2(t: __m128i, d: __m128) -> __m128 {
    _mm_mul_ps(_mm_cvtepi32_ps(_mm_sub_epi32(t, _mm_set1_epi32(1))), d)
}

/// One stage of `W` bytes × `N` digits (W a multiple of 4) on 4 lanes.
#[inline(always)]
unsafe fn stage_sse2<const W: usize, const N: usize>(src: *const u8, d: __m128, out: *mut f32) {
    let mask = _mm_set1_epi32(0xff);
    let mut g = 0;
    while g + 4 <= W {
        let mut q = load4_u8_epi32(src.add(g));
        for k in 0..N {
            let r = _mm_add_epi32(q, _mm_slli_epi32::<1>(q));
            _mm_storeu_ps(out.add(k * W + g), value_sse2(_mm_srli_epi32::<8>(r), d));
            q = _mm_and_si128(r, mask);
        }
        g += 4;
    }
}

#[target_feature(enable = "sse2")]
unsafe fn staged_sse2<const W1: usize, const W2: usize, const WH: usize>(
    src: *const u8,
    dst: *mut f32,
    blocks: usize,
) {
    const { assert!(W1.is_multiple_of(4) && W2.is_multiple_of(4) && WH <= 4) };
    let bb = W1 + W2 + WH + 2;
    let be = 5 * (W1 + W2) + 4 * WH;
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * be);
        let ds = scale_at(blk.add(W1 + W2 + WH));
        let d = _mm_set1_ps(ds);
        stage_sse2::<W1, 5>(blk, d, out);
        stage_sse2::<W2, 5>(blk.add(W1), d, out.add(5 * W1));
        // The 8- or 16-value tail element by element (4 lanes would need a shuffle per digit).
        let o = out.add(5 * (W1 + W2));
        for f in 0..4 * WH {
            let t = crate::codec::base3::digit(*blk.add(W1 + W2 + f % WH), f / WH);
            *o.add(f) = (t as f32 - 1.0) * ds;
        }
    }
}

#[target_feature(enable = "sse2")]
unsafe fn pq2_sse2<const G: usize>(src: *const u8, dst: *mut f32, blocks: usize) {
    let bb = pq2::block_bytes(G);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * G);
        let d = _mm_set1_ps(scale_at(blk));
        for k in 0..G / 4 {
            // The 4 multipliers `code − 1` of the byte, times d: the reference's product.
            let m = _mm_loadu_ps(pq2::MULT[*blk.add(2 + k) as usize].as_ptr());
            _mm_storeu_ps(out.add(4 * k), _mm_mul_ps(m, d));
        }
    }
}

#[target_feature(enable = "sse2")]
unsafe fn tq2_sse2(src: *const u8, dst: *mut f32, blocks: usize) {
    let three = _mm_set1_epi32(3);
    for b in 0..blocks {
        let blk = src.add(b * TQ2_BYTES);
        let out = dst.add(b * 256);
        let d = _mm_set1_ps(scale_at(blk.add(64)));
        for h in 0..2 {
            for g in 0..8 {
                let mut x = load4_u8_epi32(blk.add(h * 32 + g * 4));
                for l in 0..4 {
                    let c = _mm_and_si128(x, three);
                    _mm_storeu_ps(out.add(h * 128 + l * 32 + g * 4), value_sse2(c, d));
                    x = _mm_srli_epi32::<2>(x);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puts `puts` vectors of counting values (1, 2, 3, …) through a [`LineWriter`] at `dst`.
    #[target_feature(enable = "avx512f")]
    unsafe fn put_counting(dst: *mut f32, puts: usize) {
        let mut w = LineWriter::new(dst);
        for k in 0..puts {
            let base = (16 * k + 1) as f32;
            let lanes = _mm512_setr_ps(
                0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0,
                15.0,
            );
            w.put(_mm512_add_ps(lanes, _mm512_set1_ps(base)));
        }
        w.finish();
    }

    /// The line writer alone, at every offset from a line and for runs shorter than a line,
    /// one line and many: exactly the run's values in order, and 16 guard elements on each
    /// side untouched (a mask one lane too wide or too narrow, a wrong permute index or a
    /// missing last line each fail it).
    #[test]
    fn the_line_writer_writes_exactly_its_run_at_every_line_offset() {
        if !Path::Avx512.is_available() {
            eprintln!("skipped: this CPU has no AVX-512F");
            return;
        }
        let guard = -7.0f32;
        for puts in [0, 1, 2, 17] {
            for off in 0..16 {
                let (mut buf, window, out) =
                    super::super::tests::guarded_at_line_offset(16 * puts, off, guard);
                // SAFETY: AVX-512F was detected; `buf[out]` is the output, 16 values a put.
                unsafe { put_counting(buf[out.clone()].as_mut_ptr(), puts) };
                for i in window {
                    let want = if out.contains(&i) {
                        (i - out.start + 1) as f32
                    } else {
                        guard
                    };
                    assert_eq!(buf[i], want, "{puts} puts at offset {off}: element {i}");
                }
            }
        }
    }
}
