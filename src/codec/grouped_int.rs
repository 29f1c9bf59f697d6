//! Values of the zero-point-free grouped integer formats Q4G64_F16S, Q5G64_F16S, Q6G64_F16S and
//! W8G32_F16S in the `row-split-k128-v1` layout (`spec/formats.json` `_note`,
//! `spec/ninfer-container.md#ninfer-layouts`).
//!
//! Per lane `i` of a group: the base plane holds the low 4 bits of the unsigned `b`-bit word
//! `u = q mod 2^b` (even lane in the low nibble, odd lane in the high nibble; W8: one byte per
//! lane); the high plane (Q5, Q6) holds bits 4.. of `u` as a lane-major bit stream, stream bit
//! `t` in bit `t % 8` of byte `t / 8`. The value is `binary32(f32(scale16) * f32(q))` with `q`
//! the two's-complement reading of `u`. Physical columns `k..k_pad` are not returned.

use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{Plane, RowSplitGeometry};
use crate::spec::NumericFormat;

/// Code width in bits of a grouped integer format, or `None` for other formats.
pub fn code_bits(format_name: &str) -> Option<u32> {
    match format_name {
        "Q4G64_F16S" => Some(4),
        "Q5G64_F16S" => Some(5),
        "Q6G64_F16S" => Some(6),
        "W8G32_F16S" => Some(8),
        _ => None,
    }
}

/// The unsigned `bits`-bit word of lane `lane` in one group's base and high bytes.
#[inline]
pub fn lane_word(bits: u32, base: &[u8], high: &[u8], lane: usize) -> u32 {
    if bits == 8 {
        return base[lane] as u32;
    }
    let b = base[lane / 2];
    let lo = if lane % 2 == 0 { b & 0x0f } else { b >> 4 } as u32;
    let hb = bits - 4;
    let mut hi = 0u32;
    for j in 0..hb as usize {
        let t = lane * hb as usize + j;
        hi |= (((high[t / 8] >> (t % 8)) & 1) as u32) << j;
    }
    lo | (hi << 4)
}

/// Two's-complement reading of a `bits`-bit word.
#[inline]
pub fn signed(bits: u32, u: u32) -> i32 {
    if u < (1 << (bits - 1)) {
        u as i32
    } else {
        u as i32 - (1i32 << bits)
    }
}

/// f32 values of rows `rows` (row-major, `k` per row) of a grouped integer tensor.
pub fn decode_rows(
    format: &NumericFormat,
    geom: &RowSplitGeometry,
    payload: &[u8],
    rows: std::ops::Range<u64>,
) -> Result<Vec<f32>> {
    let bits = code_bits(&format.name).ok_or_else(|| {
        Error::new(
            ErrorClass::CodecUnsupported,
            format.name.clone(),
            "not a grouped integer format",
        )
    })?;
    let group = format.group_size.unwrap_or(0) as usize;
    let want_base = if bits == 8 { group } else { group / 2 };
    let want_high = if bits == 8 {
        0
    } else {
        group * (bits as usize - 4) / 8
    };
    if group == 0
        || geom.base_bytes_per_group as usize != want_base
        || geom.high_bytes_per_group as usize != want_high
    {
        return Err(Error::new(
            ErrorClass::CodecUnsupported,
            format.name.clone(),
            "group geometry does not match the code width",
        ));
    }
    super::check_payload_and_rows(
        &format.name,
        payload.len(),
        geom.payload_bytes,
        "geometry",
        geom.n,
        &rows,
    )?;
    let bpg = geom.base_bytes_per_group as usize;
    let hpg = geom.high_bytes_per_group as usize;
    let k = geom.k as usize;
    let mut out = Vec::with_capacity((rows.end - rows.start) as usize * k);
    for r in rows {
        let span = |p: Plane| {
            let s = geom.row_span(p, r);
            &payload[s.start as usize..s.end as usize]
        };
        let (base, high, scale) = (span(Plane::Base), span(Plane::High), span(Plane::Scale));
        for c in 0..k {
            let (g, lane) = (c / group, c % group);
            let u = lane_word(
                bits,
                &base[g * bpg..(g + 1) * bpg],
                &high[g * hpg..(g + 1) * hpg],
                lane,
            );
            let s = u16::from_le_bytes([scale[2 * g], scale[2 * g + 1]]);
            out.push(super::f16_to_f32(s) * signed(bits, u) as f32);
        }
    }
    Ok(out)
}
