//! Byte order: GGUF files written big-endian (every header field, key length, value, tensor
//! info and tensor element swapped — what gguf-py writes with `GGUFEndian.BIG`) are transcoded
//! to the little-endian file with the same layout, which [`super::parse`] then reads.
//! [`super::parse`] itself reads little-endian only and refuses a big-endian version field
//! (`gguf.big_endian`); the conformance observer accepts real big-endian files through this
//! module (feature `gguf:big-endian`, PROTOCOL.md §4.2).
//!
//! The walk is bounded by the file: every record consumes bytes or fails with
//! `gguf.truncated`, so no count is trusted. Tensor data is swapped per element for the plain
//! types (F32, F16, BF16, I8..I64, F64) and per block scale for Q8_0; other quantized types have
//! no defined big-endian form here and are refused.

use crate::error::{Error, ErrorClass as C, Result};

/// The byte order a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little-endian (every file this suite reads).
    Little,
    /// Big-endian (the byte-swapped variant).
    Big,
}

/// Whether `bytes` starts like a big-endian GGUF: magic, then a version that is readable only
/// byte-swapped.
pub fn is_big_endian(bytes: &[u8]) -> bool {
    let g = &crate::spec::get().gguf;
    if bytes.len() < 8 || &bytes[..4] != b"GGUF" {
        return false;
    }
    let v = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    v.swap_bytes() & 0xffff == 0 && g.versions_readable.contains(&v)
}

/// Swaps every multi-byte field of a GGUF file written in byte order `from`; the result is the
/// same file in the other byte order (the layout and every offset are unchanged).
pub fn swap_byte_order(bytes: &[u8], from: ByteOrder) -> Result<Vec<u8>> {
    let mut w = Walk {
        b: bytes,
        out: bytes.to_vec(),
        pos: 0,
        from,
    };
    w.skip(4, "header.magic")?;
    w.int(4, "header.version")?;
    let n_tensors = w.int(8, "header.tensor_count")?;
    let n_kv = w.int(8, "header.kv_count")?;
    let alignment = swap_kvs(&mut w, n_kv)?;
    let mut tensors = Vec::new();
    for i in 0..n_tensors {
        let field = format!("tensor_infos[{i}]");
        let nlen = w.int(8, &field)?;
        w.skip(nlen, &field)?;
        let n_dims = w.int(4, &field)?;
        let mut ne = Vec::new();
        for _ in 0..n_dims {
            ne.push(w.int(8, &field)?);
        }
        let ty = w.int(4, &field)? as u32;
        let offset = w.int(8, &field)?;
        tensors.push((ne, ty, offset));
    }
    if alignment == 0 || !alignment.is_power_of_two() {
        // The reader refuses it with its own class; nothing below depends on it then.
        return Ok(w.out);
    }
    // pos <= file length and alignment <= u32::MAX: cannot wrap; checked anyway.
    let Some(data_offset) = (w.pos as u64).div_ceil(alignment).checked_mul(alignment) else {
        return Ok(w.out); // the reader reports it
    };
    let spec = crate::spec::get();
    for (i, (ne, ty, offset)) in tensors.iter().enumerate() {
        let t = spec.ggml_type(*ty).ok_or_else(|| {
            Error::new(
                C::GgufTensorType,
                format!("tensor_infos[{i}].type"),
                format!("ggml type {ty} is unknown"),
            )
        })?;
        // (block bytes, byte ranges within a block to reverse)
        let (block, fields): (usize, &[(usize, usize)]) = match t.name.as_str() {
            "F32" | "I32" => (4, &[(0, 4)]),
            "F16" | "BF16" | "I16" => (2, &[(0, 2)]),
            "F64" | "I64" => (8, &[(0, 8)]),
            "I8" => (1, &[]),
            "Q8_0" => (34, &[(0, 2)]),
            other => {
                return Err(Error::new(
                    C::GgufBigEndian,
                    format!("tensor_infos[{i}].type"),
                    format!("tensor data of type {other} has no big-endian form this reader swaps (plain types and Q8_0 only)"),
                ))
            }
        };
        let (_, nbytes) = super::tensor_size(ne, t)
            .map_err(|(class, detail)| Error::new(class, format!("tensor_infos[{i}]"), detail))?;
        let start = data_offset.checked_add(*offset);
        let end = start.and_then(|s| s.checked_add(nbytes));
        let (Some(start), Some(end)) = (start, end) else {
            return Ok(w.out); // the reader reports the overflow
        };
        if end > bytes.len() as u64 {
            return Ok(w.out); // the reader reports the bounds error
        }
        let data = &mut w.out[start as usize..end as usize];
        for blk in data.chunks_exact_mut(block) {
            for &(a, n) in fields {
                blk[a..a + n].reverse();
            }
        }
    }
    Ok(w.out)
}

/// Swaps the KV block in place; returns the layout alignment it declares (the default when
/// `general.alignment` is absent or not a U32).
fn swap_kvs(w: &mut Walk<'_>, n_kv: u64) -> Result<u64> {
    let mut alignment = crate::spec::get().gguf.default_alignment as u64;
    for i in 0..n_kv {
        let field = format!("kv[{i}]");
        let klen = w.int(8, &field)?;
        let key = w.skip(klen, &field)?;
        let ty = w.int(4, &field)?;
        let v = w.value(ty as u32, &field)?;
        if key == b"general.alignment" && ty == 4 {
            alignment = v;
        }
    }
    Ok(alignment)
}

struct Walk<'a> {
    b: &'a [u8],
    out: Vec<u8>,
    pos: usize,
    from: ByteOrder,
}

impl<'a> Walk<'a> {
    fn skip(&mut self, n: u64, field: &str) -> Result<&'a [u8]> {
        let rem = self.b.len() - self.pos;
        match usize::try_from(n) {
            Ok(n) if n <= rem => {
                let s = &self.b[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(Error::at(
                C::GgufTruncated,
                self.pos as u64,
                field,
                format!(
                    "needs {n} bytes, the file has {rem} left (reading it as {:?}-endian)",
                    self.from
                ),
            )),
        }
    }

    /// Reads an unsigned integer of `n` bytes in the source order and swaps it in the output.
    fn int(&mut self, n: usize, field: &str) -> Result<u64> {
        let at = self.pos;
        let raw = self.skip(n as u64, field)?;
        let mut v = 0u64;
        for k in 0..n {
            let byte = match self.from {
                ByteOrder::Little => raw[n - 1 - k],
                ByteOrder::Big => raw[k],
            };
            v = (v << 8) | byte as u64;
        }
        self.out[at..at + n].reverse();
        Ok(v)
    }

    /// Swaps one value of GGUF type `ty`; returns it when it is an integer (for the alignment).
    fn value(&mut self, ty: u32, field: &str) -> Result<u64> {
        match ty {
            0 | 1 | 7 => self.int(1, field),
            2 | 3 => self.int(2, field),
            4..=6 => self.int(4, field),
            10..=12 => self.int(8, field),
            8 => {
                let n = self.int(8, field)?;
                self.skip(n, field)?;
                Ok(0)
            }
            9 => {
                let et = self.int(4, field)? as u32;
                let count = self.int(8, field)?;
                let size = match et {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    10..=12 => 8,
                    8 => 0,
                    _ => {
                        return Err(Error::at(
                            C::GgufValueType,
                            self.pos as u64,
                            field,
                            format!("array element type {et} cannot be byte-swapped"),
                        ))
                    }
                };
                let rem = (self.b.len() - self.pos) as u64;
                let min = if size == 0 { 8 } else { size };
                if count > rem / min {
                    return Err(Error::at(
                        C::GgufArrayLength,
                        self.pos as u64,
                        field,
                        format!("{count} elements need more than the {rem} bytes left"),
                    ));
                }
                for _ in 0..count {
                    self.value(et, field)?;
                }
                Ok(0)
            }
            _ => Err(Error::at(
                C::GgufValueType,
                self.pos as u64,
                field,
                format!("value type {ty} cannot be byte-swapped"),
            )),
        }
    }
}
