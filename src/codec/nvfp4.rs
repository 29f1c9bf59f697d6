//! NVFP4 in `blockscale-k16-m128x4-v1` (`spec/formats.json` `_note`,
//! `spec/ninfer-container.md#ninfer-layouts`): a row-major E2M1 code plane (`n * k / 2` bytes,
//! the smaller k in the low nibble), zero padding to a 256-byte boundary, the swizzled E4M3FN
//! scale plane (`n * k / 16` bytes, one per 16 along k) and the little-endian FP32 divisor.
//! Scale `(row, g)` with `g = k / 16` sits at
//! `(row / 128 * (k_dim / 64) + g / 4) * 512 + (row % 128 % 32) * 16 + (row % 128 / 32) * 4 + g % 4`.
//! The value is `e2m1(c) * e4m3fn(s) / d` (the product is exact in binary32; one rounding).

use crate::error::{Error, ErrorClass, Result};
use crate::spec::LayoutId;

/// E2M1 (bit 3 sign; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6) to f32.
pub fn e2m1_to_f32(c: u8) -> f32 {
    const MAG: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let m = MAG[(c & 7) as usize];
    if c & 8 != 0 {
        -m
    } else {
        m
    }
}

/// Byte offset of scale `(row, g)` within the scale plane of an `[n, k]` tensor.
#[inline]
pub fn scale_offset(k: u64, row: u64, g: u64) -> u64 {
    let (tile, inner) = (row / 128, row % 128);
    (tile * (k / 64) + g / 4) * 512 + (inner % 32) * 16 + (inner / 32) * 4 + g % 4
}

/// (scale plane offset, divisor offset, payload bytes) for `[n, k]`, or `None` when the shape is
/// not `n % 128 == 0, k % 64 == 0`, positive, or overflows.
pub fn geometry(n: u64, k: u64) -> Option<(u64, u64, u64)> {
    if n == 0 || k == 0 || n % 128 != 0 || k % 64 != 0 {
        return None;
    }
    let elems = n.checked_mul(k)?;
    let soff = (elems / 2).checked_add(255)? / 256 * 256;
    let doff = soff.checked_add(elems / 16)?;
    Some((soff, doff, doff.checked_add(4)?))
}

/// f32 values of rows `rows` of an `[n, k]` NVFP4 payload.
pub fn decode_rows(n: u64, k: u64, payload: &[u8], rows: std::ops::Range<u64>) -> Result<Vec<f32>> {
    let (soff, doff, size) = geometry(n, k).ok_or_else(|| {
        Error::new(
            ErrorClass::CodecLength,
            LayoutId::BlockscaleK16M128x4V1.as_str(),
            format!("[{n}, {k}] is not n % 128 == 0, k % 64 == 0"),
        )
    })?;
    super::check_payload_and_rows(
        LayoutId::BlockscaleK16M128x4V1.as_str(),
        payload.len(),
        size,
        &format!("[{n}, {k}]"),
        n,
        &rows,
    )?;
    let d = doff as usize;
    let div = f32::from_le_bytes([payload[d], payload[d + 1], payload[d + 2], payload[d + 3]]);
    let mut out = Vec::with_capacity((rows.end - rows.start) as usize * k as usize);
    for r in rows {
        for c in 0..k {
            let byte = payload[((r * k + c) / 2) as usize];
            let code = if c % 2 == 0 { byte & 0x0f } else { byte >> 4 };
            let s = payload[(soff + scale_offset(k, r, c / 16)) as usize];
            out.push(e2m1_to_f32(code) * super::fp8_row::e4m3fn_to_f32(s) / div);
        }
    }
    Ok(out)
}
