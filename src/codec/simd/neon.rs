//! aarch64 NEON kernels, 4 lanes of u32 per vector, values as `(t − 1) · d` (exact `t − 1`
//! conversion then the reference's product). Same digit recurrence as the x86 kernels.
//!
//! Only type-checked on the x86-64 CI machine (`cargo check --target aarch64-unknown-linux-gnu`);
//! the forced-path tests run them wherever the suite runs on aarch64.
//!
//! Safety: entered only after [`Path::is_available`] confirmed NEON; every pointer access stays
//! inside `blocks` whole blocks of `bytes` / `out`, with `blocks` computed from both lengths.

use super::Path;
use crate::codec::{base3, f16_to_f32, pq2};
use std::arch::aarch64::*;

const TQ2_BYTES: usize = crate::codec::tq2::BLOCK_BYTES;

/// Whole blocks that fit both `bytes` (of `bb` bytes) and `out` (of `be` elements).
fn whole_blocks(bytes: &[u8], out: &[f32], bb: usize, be: usize) -> usize {
    (bytes.len() / bb).min(out.len() / be)
}

/// Runs the staged base-3 kernel; false when NEON is not available.
pub(super) fn staged<const W1: usize, const W2: usize, const WH: usize>(
    bytes: &[u8],
    out: &mut [f32],
) -> bool {
    if !Path::Neon.is_available() {
        return false;
    }
    let n = whole_blocks(bytes, out, W1 + W2 + WH + 2, 5 * (W1 + W2) + 4 * WH);
    // SAFETY: NEON detected above; `n` blocks fit both slices.
    unsafe { staged_neon::<W1, W2, WH>(bytes.as_ptr(), out.as_mut_ptr(), n) };
    true
}

/// Runs the PQ2_0-family kernel (group `G`); false when NEON is not available.
pub(super) fn pq2<const G: usize>(bytes: &[u8], out: &mut [f32]) -> bool {
    if !Path::Neon.is_available() {
        return false;
    }
    let n = whole_blocks(bytes, out, pq2::block_bytes(G), G);
    // SAFETY: as in `staged`.
    unsafe { pq2_neon::<G>(bytes.as_ptr(), out.as_mut_ptr(), n) };
    true
}

/// Runs the TQ2_0 kernel; false when NEON is not available.
pub(super) fn tq2(bytes: &[u8], out: &mut [f32]) -> bool {
    if !Path::Neon.is_available() {
        return false;
    }
    let n = whole_blocks(bytes, out, TQ2_BYTES, 256);
    // SAFETY: as in `staged`.
    unsafe { tq2_neon(bytes.as_ptr(), out.as_mut_ptr(), n) };
    true
}

/// The f16 scale at `p` (little-endian) as f32, through the one shared conversion.
#[inline(always)]
unsafe fn scale_at(p: *const u8) -> f32 {
    f16_to_f32(u16::from_le_bytes([*p, *p.add(1)]))
}

/// `(t − 1) · d` on 4 lanes.
#[inline(always)]
unsafe fn value(t: uint32x4_t, d: float32x4_t) -> float32x4_t {
    vmulq_f32(
        vcvtq_f32_s32(vsubq_s32(vreinterpretq_s32_u32(t), vdupq_n_s32(1))),
        d,
    )
}

/// 8 bytes at `p` as two u32x4 (bytes 0..4, 4..8).
#[inline(always)]
unsafe fn load8(p: *const u8) -> [uint32x4_t; 2] {
    let w = vmovl_u8(vld1_u8(p));
    [vmovl_u16(vget_low_u16(w)), vmovl_u16(vget_high_u16(w))]
}

/// One stage of `W` bytes (a multiple of 8) × `N` digits.
#[inline(always)]
unsafe fn stage<const W: usize, const N: usize>(src: *const u8, d: float32x4_t, out: *mut f32) {
    let mask = vdupq_n_u32(0xff);
    let mut g = 0;
    while g + 8 <= W {
        for (h, mut q) in load8(src.add(g)).into_iter().enumerate() {
            for k in 0..N {
                let r = vaddq_u32(q, vshlq_n_u32::<1>(q));
                vst1q_f32(out.add(k * W + g + 4 * h), value(vshrq_n_u32::<8>(r), d));
                q = vandq_u32(r, mask);
            }
        }
        g += 8;
    }
}

#[target_feature(enable = "neon")]
unsafe fn staged_neon<const W1: usize, const W2: usize, const WH: usize>(
    src: *const u8,
    dst: *mut f32,
    blocks: usize,
) {
    const { assert!(W1.is_multiple_of(8) && W2.is_multiple_of(8)) };
    let bb = W1 + W2 + WH + 2;
    let be = 5 * (W1 + W2) + 4 * WH;
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * be);
        let ds = scale_at(blk.add(W1 + W2 + WH));
        let d = vdupq_n_f32(ds);
        stage::<W1, 5>(blk, d, out);
        stage::<W2, 5>(blk.add(W1), d, out.add(5 * W1));
        let o = out.add(5 * (W1 + W2));
        for f in 0..4 * WH {
            let t = base3::digit(*blk.add(W1 + W2 + f % WH), f / WH);
            *o.add(f) = (t as f32 - 1.0) * ds;
        }
    }
}

#[target_feature(enable = "neon")]
unsafe fn pq2_neon<const G: usize>(src: *const u8, dst: *mut f32, blocks: usize) {
    let bb = pq2::block_bytes(G);
    for b in 0..blocks {
        let blk = src.add(b * bb);
        let out = dst.add(b * G);
        let d = vdupq_n_f32(scale_at(blk));
        for k in 0..G / 4 {
            let m = vld1q_f32(pq2::MULT[*blk.add(2 + k) as usize].as_ptr());
            vst1q_f32(out.add(4 * k), vmulq_f32(m, d));
        }
    }
}

#[target_feature(enable = "neon")]
unsafe fn tq2_neon(src: *const u8, dst: *mut f32, blocks: usize) {
    let three = vdupq_n_u32(3);
    for b in 0..blocks {
        let blk = src.add(b * TQ2_BYTES);
        let out = dst.add(b * 256);
        let d = vdupq_n_f32(scale_at(blk.add(64)));
        for h in 0..2 {
            for g in 0..4 {
                for (i, mut x) in load8(blk.add(h * 32 + g * 8)).into_iter().enumerate() {
                    for l in 0..4 {
                        let c = vandq_u32(x, three);
                        vst1q_f32(out.add(h * 128 + l * 32 + g * 8 + 4 * i), value(c, d));
                        x = vshrq_n_u32::<2>(x);
                    }
                }
            }
        }
    }
}
