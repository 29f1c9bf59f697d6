//! Minimal `.npy` (format 1.0) writer/reader for little-endian f32 arrays.

use crate::error::{Error, ErrorClass, Result};
use std::io::Write;

/// The `.npy` header for a C-order `<f4` array of `shape`.
pub fn header(shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_txt = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_txt}, }}");
    // Magic (6) + version (2) + length (2) + dict + '\n' padded to a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Writes `values` with `shape` to `w`.
pub fn write_f32(w: &mut impl Write, shape: &[u64], values: &[f32]) -> Result<()> {
    let err = |e: std::io::Error| Error::new(ErrorClass::IoWrite, "npy", e.to_string());
    w.write_all(&header(shape)).map_err(err)?;
    let mut buf = Vec::with_capacity(values.len() * 4);
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    w.write_all(&buf).map_err(err)
}

/// Reads a `<f4` C-order `.npy` written by [`write_f32`] (tests and tools): (shape, values).
#[cfg(any(test, feature = "internals"))]
pub fn read_f32(bytes: &[u8]) -> Result<(Vec<u64>, Vec<f32>)> {
    let bad = |d: &str| Error::new(ErrorClass::CodecLength, "npy", d.to_string());
    let mut r = crate::le::LeReader::new(bytes, ErrorClass::CodecLength);
    if r.take(8, "npy.magic")? != b"\x93NUMPY\x01\x00" {
        return Err(bad("not an .npy 1.0 file"));
    }
    let hl = usize::from(r.u16("npy.header_len")?);
    let dict =
        std::str::from_utf8(r.take(hl, "npy.header")?).map_err(|_| bad("header is not UTF-8"))?;
    if !dict.contains("'descr': '<f4'") || !dict.contains("'fortran_order': False") {
        return Err(bad("only C-order <f4 arrays are supported"));
    }
    let s = dict
        .split("'shape': (")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let shape: Vec<u64> = s
        .split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().parse().unwrap_or(0))
        .collect();
    let data = r.take(r.remaining(), "npy.data")?;
    if data.len() % 4 != 0 || data.len() as u64 / 4 != shape.iter().product::<u64>() {
        return Err(bad("data length does not match shape"));
    }
    Ok((shape, crate::le::f32s_of(data)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_64_byte_aligned_and_round_trips() {
        for shape in [vec![3u64], vec![2, 5], vec![1, 2, 3]] {
            let h = header(&shape);
            assert_eq!(h.len() % 64, 0);
            let n: u64 = shape.iter().product();
            let vals: Vec<f32> = (0..n).map(|i| i as f32 - 1.5).collect();
            let mut buf = Vec::new();
            write_f32(&mut buf, &shape, &vals).unwrap();
            assert_eq!(read_f32(&buf).unwrap(), (shape, vals));
        }
    }
}
