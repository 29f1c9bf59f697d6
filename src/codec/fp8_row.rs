//! FP8_E4M3FN_ROW_BF16S in `row-scale-v1` (`spec/formats.json` `_note`,
//! `spec/ninfer-container.md#ninfer-layouts`): a row-major plane of one E4M3FN byte per weight
//! (`[n, k]` at `n * k_dim + k`), zero padding to `align_up(n * k, 256)`, then one little-endian
//! BF16 multiplier per row. The value is `binary32(e4m3fn(c) * bf16(s_row))`.

use crate::error::{Error, ErrorClass, Result};
use crate::spec::LayoutId;

/// E4M3FN (bias 7; e = 0 subnormal `m * 2^-9`; `e = 15, m = 7` NaN; no infinity) to f32, exact.
pub fn e4m3fn_to_f32(c: u8) -> f32 {
    let sign = if c & 0x80 != 0 { -1.0f32 } else { 1.0 };
    let e = ((c >> 3) & 0x0f) as i32;
    let m = (c & 0x07) as f32;
    if e == 15 && c & 0x07 == 7 {
        return f32::NAN;
    }
    let mag = if e == 0 {
        m * (2.0f32).powi(-9)
    } else {
        (8.0 + m) * (2.0f32).powi(e - 10)
    };
    sign * mag
}

/// Byte offset of the scale plane and the payload size for `[n, k]`.
pub fn geometry(n: u64, k: u64) -> Option<(u64, u64)> {
    let codes = n.checked_mul(k)?;
    let off = codes.checked_add(255)? / 256 * 256;
    Some((off, off.checked_add(n.checked_mul(2)?)?))
}

/// f32 values of rows `rows` of an `[n, k]` FP8_E4M3FN_ROW_BF16S payload.
pub fn decode_rows(n: u64, k: u64, payload: &[u8], rows: std::ops::Range<u64>) -> Result<Vec<f32>> {
    let (scale_off, size) = geometry(n, k).ok_or_else(|| {
        Error::new(
            ErrorClass::NinferArithOverflow,
            LayoutId::RowScaleV1.as_str(),
            "shape overflows",
        )
    })?;
    super::check_payload_and_rows(
        LayoutId::RowScaleV1.as_str(),
        payload.len(),
        size,
        &format!("[{n}, {k}]"),
        n,
        &rows,
    )?;
    let k = k as usize;
    let mut out = Vec::with_capacity((rows.end - rows.start) as usize * k);
    for r in rows {
        let so = scale_off as usize + 2 * r as usize;
        let s =
            crate::codec::direct::bf16_to_f32(u16::from_le_bytes([payload[so], payload[so + 1]]));
        let row = &payload[r as usize * k..(r as usize + 1) * k];
        out.extend(row.iter().map(|&c| e4m3fn_to_f32(c) * s));
    }
    Ok(out)
}
