//! Byte order: GGUF files written big-endian (every header field, key length, value, tensor
//! info and tensor element swapped — what gguf-py writes with `GGUFEndian.BIG`) are transcoded
//! to the little-endian file with the same layout, which [`super::parse`] then reads.
//! [`super::parse`] itself reads little-endian only and refuses a big-endian version field
//! (`gguf.big_endian`); the conformance observer accepts real big-endian files through this
//! module (feature `gguf:big-endian`, PROTOCOL.md §4.2).
//!
//! Validate, then transform. The metadata (header, KVs, tensor infos) is swapped first, in one
//! bounded pass that consumes bytes for every record, so no count is trusted; the little-endian
//! reader then validates that image with all its rules (counts, names, duplicates, types,
//! offsets, sizes, overlaps, bounds), and any refusal keeps the reader's class. Only then is
//! tensor data swapped, over the validated ranges, which are disjoint: each byte is swapped at
//! most once and the cost is linear in the file, whatever the tensor records claim. Data is
//! swapped per element for the plain types (F32, F16, BF16, I8..I64, F64) and per block scale
//! for Q8_0; other quantized types have no defined big-endian form here and are refused
//! (`gguf.big_endian`, naming the tensor and type).
//!
//! A file whose version alone reads big-endian while its counts fit the file only read
//! little-endian is mixed-endian and refused as `gguf.big_endian` (the corpus's
//! `n_big_endian_*` cases).

use super::{Mode, Options};
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
/// same file in the other byte order (the layout and every offset are unchanged). The file is
/// validated under spec-mode rules (the most lenient rule set that still guarantees disjoint
/// tensor ranges); [`swap_byte_order_with`] validates under the caller's rules.
pub fn swap_byte_order(bytes: &[u8], from: ByteOrder) -> Result<Vec<u8>> {
    swap_byte_order_with(bytes, from, Options::from(Mode::Spec))
}

/// [`swap_byte_order`] validating with the little-endian reader under `opts`: a file that
/// reader refuses is refused with the reader's class and detail before any tensor byte moves.
pub fn swap_byte_order_with(bytes: &[u8], from: ByteOrder, opts: Options) -> Result<Vec<u8>> {
    if from == ByteOrder::Little {
        // Already little-endian: validate as it is.
        super::parse_with(bytes, opts)?;
    } else {
        refuse_mixed_endian(bytes)?;
    }
    let mut w = Walk {
        b: bytes,
        out: bytes.to_vec(),
        pos: 0,
        from,
    };
    if let Err(walk) = w.metadata() {
        // The walk stops at the first field it cannot swap, with every earlier field (and an
        // integer field that failed its own check) already swapped: the reader, run on that
        // image, names the fault with its own class; the walk's error only if it does not.
        let image: &[u8] = match from {
            ByteOrder::Little => bytes,
            ByteOrder::Big => &w.out,
        };
        return Err(super::parse_with(image, opts).err().unwrap_or(walk));
    }
    let ranges = {
        let le: &[u8] = match from {
            ByteOrder::Little => bytes,
            ByteOrder::Big => &w.out,
        };
        let g = super::parse_with(le, opts)?;
        // Spec mode checked this already and strict mode's running-sum offsets imply it; kept
        // so the at-most-once swap below never rests on a rule-table flag.
        super::layout::check_no_overlap(&g.tensors)?;
        g.tensors
            .iter()
            .map(|t| DataRange {
                index: t.index,
                name: t.name.to_string(),
                ggml: t.ggml,
                start: t.abs_offset,
                nbytes: t.nbytes,
                info_offset: t.info_offset,
            })
            .collect::<Vec<_>>()
    };
    for r in &ranges {
        swap_data(&mut w.out, r)?;
    }
    Ok(w.out)
}

/// One validated tensor's data: where it is and how its elements are laid out.
struct DataRange {
    index: usize,
    name: String,
    ggml: &'static crate::spec::GgmlType,
    start: u64,
    nbytes: u64,
    info_offset: u64,
}

/// Swaps one tensor's elements (plain types) or block scales (Q8_0) in place.
fn swap_data(out: &mut [u8], r: &DataRange) -> Result<()> {
    // (block bytes, byte ranges within a block to reverse)
    let (block, fields): (usize, &[(usize, usize)]) = match r.ggml.name.as_str() {
        "F32" | "I32" => (4, &[(0, 4)]),
        "F16" | "BF16" | "I16" => (2, &[(0, 2)]),
        "F64" | "I64" => (8, &[(0, 8)]),
        "I8" => (1, &[]),
        "Q8_0" => (34, &[(0, 2)]),
        other => {
            return Err(Error::at(
                C::GgufBigEndian,
                r.info_offset,
                format!("tensor_infos[{}]('{}').type", r.index, r.name),
                format!(
                    "tensor '{}' has type {other}, which has no big-endian form this reader \
                     swaps (plain types and Q8_0 only)",
                    r.name
                ),
            ))
        }
    };
    if fields.is_empty() {
        return Ok(());
    }
    // The reader checked start + nbytes <= file length; `get_mut` keeps this total anyway.
    let range = usize::try_from(r.start)
        .ok()
        .zip(usize::try_from(r.nbytes).ok())
        .and_then(|(s, n)| Some(s..s.checked_add(n)?));
    let Some(data) = range.and_then(|rg| out.get_mut(rg)) else {
        return Err(Error::at(
            C::GgufTensorOutOfBounds,
            r.info_offset,
            format!("tensor_infos[{}]('{}')", r.index, r.name),
            format!(
                "tensor '{}' bytes [{}, +{}) are not inside the file",
                r.name, r.start, r.nbytes
            ),
        ));
    };
    for blk in data.chunks_exact_mut(block) {
        for &(a, n) in fields {
            blk[a..a + n].reverse();
        }
    }
    Ok(())
}

/// A big-endian version with counts that fit the file only when read little-endian is a
/// mixed-endian file (the version field alone swapped), not a big-endian one.
fn refuse_mixed_endian(bytes: &[u8]) -> Result<()> {
    let (Some(t), Some(k)) = (bytes.get(8..16), bytes.get(16..24)) else {
        return Ok(()); // too short for counts: the walk reports the truncation
    };
    let rem = (bytes.len() - 24) as u64;
    let be = |s: &[u8]| s.iter().fold(0u64, |v, &b| (v << 8) | b as u64);
    let le = |s: &[u8]| s.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64);
    let big_fits = super::header::check_counts_fit(be(t), be(k), rem).is_ok();
    if big_fits || super::header::check_counts_fit(le(t), le(k), rem).is_err() {
        return Ok(());
    }
    Err(Error::at(
        C::GgufBigEndian,
        4,
        "header.version",
        format!(
            "mixed-endian GGUF: the version reads big-endian but the counts fit the file only \
             read little-endian (tensor_count {}, kv_count {}; big-endian they would be {} and \
             {}); only whole-file big-endian files are read",
            le(t),
            le(k),
            be(t),
            be(k)
        ),
    ))
}

struct Walk<'a> {
    b: &'a [u8],
    out: Vec<u8>,
    pos: usize,
    from: ByteOrder,
}

impl<'a> Walk<'a> {
    /// Swaps the header, the KV block and the tensor infos in place (tensor data untouched).
    fn metadata(&mut self) -> Result<()> {
        self.skip(4, "header.magic")?;
        self.int(4, "header.version")?;
        let n_tensors = self.int(8, "header.tensor_count")?;
        let n_kv = self.int(8, "header.kv_count")?;
        // Every record below consumes bytes or fails, so neither count is trusted.
        for i in 0..n_kv {
            let field = format!("kv[{i}]");
            let klen = self.int(8, &field)?;
            self.skip(klen, &field)?;
            let ty = self.int(4, &field)?;
            self.value(ty as u32, &field)?;
        }
        for i in 0..n_tensors {
            let field = format!("tensor_infos[{i}]");
            let nlen = self.int(8, &field)?;
            self.skip(nlen, &field)?;
            let n_dims = self.int(4, &field)?;
            for _ in 0..n_dims {
                self.int(8, &field)?;
            }
            self.int(4, &field)?; // type
            self.int(8, &field)?; // offset
        }
        Ok(())
    }

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

    /// Swaps one value of GGUF type `ty`; returns it when it is an integer.
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
