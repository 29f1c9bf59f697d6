//! The engine tooling's embedding dump file, read and written directly (no conversion step):
//!
//! ```text
//! i32 T, i32 hidden, i32 count, count x i32 token ids, then T*hidden bf16 activations
//! ```
//!
//! all little-endian. The header's extents read [hidden, T], but the buffer is TOKEN-MAJOR:
//! element (k, t) is at t*hidden + k (the public checker reshapes it (hidden, T) in Fortran
//! order; reading it C-order is the silent transpose its comment warns about). Evidence and
//! what is unconfirmed: spec/dumps.json `engine_embedding`.

use crate::error::{Error, ErrorClass, Result};
use crate::le::LeReader;

/// A parsed engine embedding dump. `h` is in file order (token-major).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineEmbedding {
    /// T, the number of tokens.
    pub tokens: usize,
    /// The hidden width.
    pub hidden: usize,
    /// The token ids.
    pub ids: Vec<i64>,
    /// T*hidden activations, token-major.
    pub h: Vec<f64>,
}

/// Largest T * hidden accepted (4 GiB of bf16): bounds the allocation before reading.
const MAX_ELEMS: u64 = 1 << 31;

/// A malformed dump (class `dump.format`) at byte `off`, field `field`.
fn bad(off: u64, field: &str, detail: String) -> Error {
    Error::at(ErrorClass::DumpFormat, off, field, detail)
}

/// Parses an engine dump; every size is bounded before anything is allocated.
pub fn parse(b: &[u8]) -> Result<EngineEmbedding> {
    let mut r = LeReader::new(b, ErrorClass::DumpFormat);
    let t = r.i32("engine embedding dump header T")?;
    let hidden = r.i32("engine embedding dump header hidden")?;
    let count = r.i32("engine embedding dump header count")?;
    if t < 1 {
        return Err(bad(
            0,
            "engine embedding dump header T",
            format!("T={t}: must be >= 1"),
        ));
    }
    if hidden < 1 {
        return Err(bad(
            4,
            "engine embedding dump header hidden",
            format!("hidden={hidden}: must be >= 1"),
        ));
    }
    if count != t {
        return Err(bad(
            8,
            "engine embedding dump header count",
            format!("count={count} differs from T={t} (one id per token)"),
        ));
    }
    let (t, hidden, count) = (t as u64, hidden as u64, count as u64);
    let elems = t * hidden;
    if elems > MAX_ELEMS {
        return Err(bad(
            0,
            "engine embedding dump header T*hidden",
            format!("T*hidden = {elems} exceeds {MAX_ELEMS}"),
        ));
    }
    let act = 12 + 4 * count;
    let want = act + 2 * elems;
    if b.len() as u64 != want {
        return Err(bad(
            (b.len() as u64).min(want),
            "engine embedding dump length",
            format!(
                "{} bytes, expected {want} (12-byte header + {count} ids + {elems} bf16 from byte {act})",
                b.len()
            ),
        ));
    }
    let ids = (0..count)
        .map(|_| r.i32("engine embedding dump token id").map(i64::from))
        .collect::<Result<Vec<_>>>()?;
    let acts = r.take(2 * elems as usize, "engine embedding dump activations")?;
    let (halves, _) = acts.as_chunks::<2>();
    let h = halves
        .iter()
        .map(|c| f32::from_bits((u16::from_le_bytes(*c) as u32) << 16) as f64)
        .collect();
    Ok(EngineEmbedding {
        tokens: t as usize,
        hidden: hidden as usize,
        ids,
        h,
    })
}

/// Writes a dump from token-major values (`h[t*hidden + k]`); `transposed` stores element
/// (k, t) at k*T + t instead (the layout bug a correct reader must reject).
pub fn write(ids: &[u64], hidden: usize, h: &[f64], transposed: bool) -> Vec<u8> {
    let t = ids.len();
    let mut out = Vec::with_capacity(12 + 4 * t + 2 * h.len());
    for v in [t as i32, hidden as i32, t as i32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for &id in ids {
        out.extend_from_slice(&(id as i32).to_le_bytes());
    }
    for i in 0..t * hidden {
        let (tt, k) = if transposed {
            (i % t, i / t)
        } else {
            (i / hidden, i % hidden)
        };
        let x = h[tt * hidden + k] as f32;
        out.extend_from_slice(&crate::codec::direct::f32_to_bf16(x).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_layout_and_refusals() {
        // 2 tokens x 3 hidden, values chosen exact in bf16; token-major on disk.
        let h = [1.0, 2.0, 3.0, -1.0, -2.0, -3.0];
        let b = write(&[7, 9], 3, &h, false);
        assert_eq!(b.len(), 12 + 8 + 12);
        // Element (k=1, t=0) sits at index 0*3 + 1: bf16 of 2.0 = 0x4000.
        assert_eq!(&b[20 + 2..20 + 4], &0x4000u16.to_le_bytes());
        let d = parse(&b).unwrap();
        assert_eq!((d.tokens, d.hidden, d.ids.clone()), (2, 3, vec![7, 9]));
        assert_eq!(d.h, h.to_vec());
        // Transposed: (k, t) at k*T + t, so index 1 holds (k=0, t=1) = -1.
        let tr = parse(&write(&[7, 9], 3, &h, true)).unwrap();
        assert_eq!(tr.h[1], -1.0);
        // Truncated, count != T, T = 0, huge extents: clear errors, no allocation.
        assert!(parse(&b[..b.len() - 1])
            .unwrap_err()
            .to_string()
            .contains("expected 32"));
        let mut c = b.clone();
        c[8] = 3;
        assert!(parse(&c).unwrap_err().to_string().contains("count=3"));
        let mut z = b.clone();
        z[0..4].copy_from_slice(&0i32.to_le_bytes());
        assert!(parse(&z).is_err());
        let mut big = b.clone();
        big[0..4].copy_from_slice(&i32::MAX.to_le_bytes());
        big[4..8].copy_from_slice(&i32::MAX.to_le_bytes());
        big[8..12].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(parse(&big).unwrap_err().to_string().contains("exceeds"));
        assert!(parse(&b[..5]).unwrap_err().to_string().contains("byte 4"));
    }

    #[test]
    fn malformed_dumps_are_dump_format_errors_with_the_byte_offset() {
        let b = write(&[7, 9], 3, &[1.0, 2.0, 3.0, -1.0, -2.0, -3.0], false);
        let located = |bytes: &[u8]| {
            let e = parse(bytes).unwrap_err();
            assert_eq!(e.class(), ErrorClass::DumpFormat, "{e}");
            (e.offset(), e.field().to_string())
        };
        // Header cut inside `hidden`: the read of byte 4 fails, located there.
        assert_eq!(
            located(&b[..5]),
            (Some(4), "engine embedding dump header hidden".into())
        );
        let mut c = b.clone();
        c[8] = 3;
        assert_eq!(located(&c).0, Some(8));
        let mut h = b.clone();
        h[4..8].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(located(&h).0, Some(4));
        // One byte short: located at the end of what is there.
        assert_eq!(located(&b[..b.len() - 1]).0, Some(b.len() as u64 - 1));
        // The healthy dump parses (the control).
        assert!(parse(&b).is_ok());
    }
}
