//! Deterministic GGUF writer: version 3, KVs and tensors in insertion order, offsets = running
//! padded sum, zero padding. The same calls always give the same bytes.
//!
//! `general.alignment` is written only when [`GgufWriter::alignment`] is called (even with 32), at
//! that point of the KV order; otherwise readers use the default 32. A `general.alignment` KV
//! added with [`GgufWriter::kv`] does not change the layout — that is the escape hatch used to
//! write hostile alignments.
//!
//! Escape hatches for hostile files: [`MetaValue::Raw`] (any type id + bytes), duplicate keys
//! (never deduplicated), [`GgufWriter::tensor_raw`] (any name, dims, type id, size and offset)
//! and [`GgufWriter::version`].

use super::value::MetaValue;
use crate::error::{align_up, Error, ErrorClass as C, Result};
use crate::spec::GgmlType;
use std::io::{Read, Write};

/// A tensor as the writer lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterTensor {
    /// The tensor name, written as given.
    pub name: String,
    /// `ne[0]` innermost first; written as given (any length).
    pub dims: Vec<u64>,
    /// The type id written.
    pub type_id: u32,
    /// Data bytes (without padding).
    pub nbytes: u64,
    /// Explicit relative offset; `None` = running padded sum.
    pub offset: Option<u64>,
}

#[derive(Clone, Debug)]
/// Builds a GGUF file deterministically (see the module docs).
pub struct GgufWriter {
    version: u32,
    alignment: u64,
    kvs: Vec<(String, MetaValue)>,
    tensors: Vec<WriterTensor>,
}

impl Default for GgufWriter {
    fn default() -> Self {
        Self::new()
    }
}

fn werr(what: &str, detail: impl Into<String>) -> Error {
    Error::new(C::IoWrite, what, detail)
}

impl GgufWriter {
    /// An empty version-3 file with the default alignment.
    pub fn new() -> GgufWriter {
        GgufWriter {
            version: 3,
            alignment: crate::spec::get().gguf.default_alignment as u64,
            kvs: Vec::new(),
            tensors: Vec::new(),
        }
    }

    /// The header version field (3 by default; any value for hostile files).
    pub fn version(&mut self, v: u32) -> &mut Self {
        self.version = v;
        self
    }

    /// Sets the layout alignment and writes `general.alignment` (U32) at this point of the KV order.
    pub fn alignment(&mut self, a: u32) -> Result<&mut Self> {
        if a == 0 || !a.is_power_of_two() {
            return Err(Error::new(
                C::GgufAlignmentValue,
                "general.alignment",
                format!("alignment {a} is not a non-zero power of two"),
            ));
        }
        self.alignment = a as u64;
        self.kvs.push((
            crate::spec::get().gguf.alignment_key.clone(),
            MetaValue::U32(a),
        ));
        Ok(self)
    }

    /// Sets the layout alignment without writing a KV, for [`Self::stream_with_kv_block`]
    /// whose verbatim KV block already carries `general.alignment`.
    pub fn set_layout_alignment(&mut self, a: u64) -> Result<&mut Self> {
        if a == 0 || !a.is_power_of_two() || a > 1 << 31 {
            return Err(Error::new(
                C::GgufAlignmentValue,
                "general.alignment",
                format!("alignment {a} is not a power of two in 1..=2^31"),
            ));
        }
        self.alignment = a;
        Ok(self)
    }

    /// The layout alignment.
    pub fn layout_alignment(&self) -> u64 {
        self.alignment
    }

    /// Appends a KV (never deduplicated).
    pub fn kv(&mut self, key: &str, value: impl Into<MetaValue>) -> &mut Self {
        self.kvs.push((key.to_owned(), value.into()));
        self
    }

    /// Appends a tensor of ggml type `type_id` (the `types` meaning of the id, so 42 = g64).
    pub fn tensor(&mut self, name: &str, dims: &[u64], type_id: u32) -> Result<&mut Self> {
        let t = crate::spec::get().ggml_type(type_id).ok_or_else(|| {
            Error::new(
                C::GgufTensorType,
                name,
                format!("ggml type {type_id} is unknown"),
            )
        })?;
        self.tensor_as(name, dims, t)
    }

    /// Appends a tensor laid out as `t` (e.g. the legacy Prism id-42 variant), tagged `t.id`.
    pub fn tensor_as(&mut self, name: &str, dims: &[u64], t: &GgmlType) -> Result<&mut Self> {
        let (_, nbytes) = super::tensor_size(dims, t)
            .map_err(|(class, detail)| Error::new(class, name, detail))?;
        self.tensors.push(WriterTensor {
            name: name.to_owned(),
            dims: dims.to_vec(),
            type_id: t.id,
            nbytes,
            offset: None,
        });
        Ok(self)
    }

    /// Appends a tensor exactly as given (hostile files).
    pub fn tensor_raw(&mut self, t: WriterTensor) -> &mut Self {
        self.tensors.push(t);
        self
    }

    /// The tensors added so far.
    pub fn tensors(&self) -> &[WriterTensor] {
        &self.tensors
    }

    /// Relative offsets: explicit ones as given, others the running padded sum.
    pub fn offsets(&self) -> Result<Vec<u64>> {
        // `None` once the sum has wrapped: only an implicit offset after that point is an error,
        // so hostile layouts with explicit offsets can still be written.
        let mut running = Some(0u64);
        let mut out = Vec::with_capacity(self.tensors.len());
        for t in &self.tensors {
            let off = match (t.offset, running) {
                (Some(o), _) => o,
                (None, Some(r)) => r,
                (None, None) => {
                    return Err(Error::new(
                        C::GgufTensorSizeOverflow,
                        t.name.as_str(),
                        "running padded sum overflows u64",
                    ));
                }
            };
            out.push(off);
            let padded = t
                .nbytes
                .checked_add(self.alignment - 1)
                .map(|x| x / self.alignment * self.alignment);
            running = padded.and_then(|p| off.checked_add(p));
        }
        Ok(out)
    }

    /// Header, KVs and tensor infos, without the padding before the data section.
    fn header_unpadded(&self, offsets: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(b"GGUF");
        b.extend_from_slice(&self.version.to_le_bytes());
        b.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        b.extend_from_slice(&(self.kvs.len() as u64).to_le_bytes());
        for (k, v) in &self.kvs {
            MetaValue::String(k.clone()).write_payload(&mut b);
            b.extend_from_slice(&v.type_id().to_le_bytes());
            v.write_payload(&mut b);
        }
        for (t, off) in self.tensors.iter().zip(offsets) {
            MetaValue::String(t.name.clone()).write_payload(&mut b);
            b.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
            for d in &t.dims {
                b.extend_from_slice(&d.to_le_bytes());
            }
            b.extend_from_slice(&t.type_id.to_le_bytes());
            b.extend_from_slice(&off.to_le_bytes());
        }
        b
    }

    /// Everything before the data section, zero-padded to [`Self::data_offset`].
    pub fn header_bytes(&self) -> Result<Vec<u8>> {
        let offsets = self.offsets()?;
        let mut b = self.header_unpadded(&offsets);
        let data = align_up(b.len() as u64, self.alignment, C::IoWrite, "data_offset")?;
        b.resize(data as usize, 0);
        Ok(b)
    }

    /// Absolute offset of the data section.
    pub fn data_offset(&self) -> Result<u64> {
        // Measured without materializing the padding: with alignment 2^31 the padded header
        // is 2 GiB (found by fuzz/regressions/gguf_parse/oom-writer-data-offset-alignment-2p31).
        let offsets = self.offsets()?;
        let unpadded = self.header_unpadded(&offsets).len() as u64;
        align_up(unpadded, self.alignment, C::IoWrite, "data_offset")
    }

    /// Total file length: data offset + the furthest padded tensor end.
    pub fn file_len(&self) -> Result<u64> {
        let offsets = self.offsets()?;
        let mut end = 0u64;
        for (t, off) in self.tensors.iter().zip(&offsets) {
            let padded = align_up(t.nbytes, self.alignment, C::IoWrite, &t.name)?;
            end = end.max(
                off.checked_add(padded)
                    .ok_or_else(|| werr(&t.name, "tensor end overflows"))?,
            );
        }
        self.data_offset()?
            .checked_add(end)
            .ok_or_else(|| werr("file", "file length overflows"))
    }

    /// The whole file in memory (tests, small files). `data[i]` must be tensor i's bytes.
    pub fn to_bytes(&self, data: &[&[u8]]) -> Result<Vec<u8>> {
        // Explicit (hostile) offsets can describe exabyte files; refuse rather than zero-fill.
        let len = self.file_len()?;
        if len > 1 << 32 {
            return Err(werr(
                "file",
                format!("{len} bytes is too large to build in memory; use stream()"),
            ));
        }
        let mut out = Vec::with_capacity(len as usize);
        self.write_to(&mut out, |i| Ok(data.get(i).copied().unwrap_or(&[])))?;
        Ok(out)
    }

    /// Writes the file to `out`, asking `data(i)` for each tensor's bytes in order (one at a
    /// time, so memory stays bounded by the largest tensor).
    pub fn write_to<W: Write, D: AsRef<[u8]>>(
        &self,
        out: W,
        mut data: impl FnMut(usize) -> Result<D>,
    ) -> Result<W> {
        let mut s = self.stream(out)?;
        for i in 0..self.tensors.len() {
            let d = data(i)?;
            s.write_tensor(d.as_ref())?;
        }
        s.finish()
    }

    /// Starts a streaming write: the header is written now, then one tensor at a time.
    pub fn stream<W: Write>(&self, mut out: W) -> Result<GgufStream<'_, W>> {
        let offsets = self.offsets()?;
        let header = self.header_bytes()?;
        out.write_all(&header)
            .map_err(|e| werr("header", e.to_string()))?;
        Ok(GgufStream {
            w: self,
            out,
            offsets,
            next: 0,
            pos: 0,
            open: None,
        })
    }
}

impl GgufWriter {
    /// Starts a streaming write whose KV block is `kv_block` verbatim (`kv_count` records, as a
    /// reader validated them) instead of this writer's KVs, which must be empty: rewrites a
    /// file's tensors without materializing its metadata (`transcode`). Nothing is copied into
    /// memory but the tensor infos.
    pub fn stream_with_kv_block<W: Write>(
        &self,
        mut out: W,
        kv_count: u64,
        kv_block: &[u8],
    ) -> Result<GgufStream<'_, W>> {
        if !self.kvs.is_empty() {
            return Err(werr(
                "header",
                "a verbatim KV block replaces the writer's KVs; it has some",
            ));
        }
        let offsets = self.offsets()?;
        let own = self.header_unpadded(&offsets);
        // `own` is the 24-byte header (kv_count 0) followed by the tensor infos.
        let (head, infos) = own.split_at(24);
        let unpadded = (own.len() as u64)
            .checked_add(kv_block.len() as u64)
            .ok_or_else(|| werr("header", "header length overflows"))?;
        let data = align_up(unpadded, self.alignment, C::IoWrite, "data_offset")?;
        let io = |e: std::io::Error| werr("header", e.to_string());
        out.write_all(&head[..16]).map_err(io)?;
        out.write_all(&kv_count.to_le_bytes()).map_err(io)?;
        out.write_all(kv_block).map_err(io)?;
        out.write_all(infos).map_err(io)?;
        zeros(&mut out, data - unpadded)?;
        Ok(GgufStream {
            w: self,
            out,
            offsets,
            next: 0,
            pos: 0,
            open: None,
        })
    }
}

/// A streaming write in progress (see [`GgufWriter::stream`]).
pub struct GgufStream<'w, W: Write> {
    w: &'w GgufWriter,
    out: W,
    offsets: Vec<u64>,
    next: usize,
    /// Bytes written into the data section so far.
    pos: u64,
    /// `(size, bytes still to come)` of a tensor being written in parts.
    open: Option<(u64, u64)>,
}

impl<W: Write> GgufStream<'_, W> {
    /// Checks the next tensor's position and zero-fills up to it.
    fn begin(&mut self, len: u64) -> Result<&WriterTensor> {
        let i = self.next;
        if let Some((_, left)) = self.open {
            return Err(werr(
                "tensor data",
                format!("tensor {i} still lacks {left} bytes of its parts"),
            ));
        }
        let t = self.w.tensors.get(i).ok_or_else(|| {
            werr(
                "tensor data",
                format!("all {i} tensors are already written"),
            )
        })?;
        if len != t.nbytes {
            return Err(werr(
                &t.name,
                format!(
                    "tensor '{}' has {len} data bytes, its info says {}",
                    t.name, t.nbytes
                ),
            ));
        }
        let off = self.offsets[i];
        if off < self.pos {
            return Err(werr(&t.name, format!("tensor '{}' offset {off} is behind the stream position {}; explicit offsets must ascend to stream", t.name, self.pos)));
        }
        zeros(&mut self.out, off - self.pos)?;
        self.pos = off;
        Ok(t)
    }

    fn end(&mut self, nbytes: u64) -> Result<()> {
        let padded = align_up(nbytes, self.w.alignment, C::IoWrite, "padding")?;
        zeros(&mut self.out, padded - nbytes)?;
        self.pos += padded;
        self.next += 1;
        Ok(())
    }

    /// Writes the next tensor's bytes and its padding.
    pub fn write_tensor(&mut self, data: &[u8]) -> Result<()> {
        self.begin(data.len() as u64)?;
        self.out
            .write_all(data)
            .map_err(|e| werr("tensor data", e.to_string()))?;
        self.end(data.len() as u64)
    }

    /// Copies exactly `nbytes` of the next tensor from `src` (bounded memory for huge tensors).
    pub fn write_tensor_from(&mut self, src: impl Read) -> Result<()> {
        let n = self.w.tensors.get(self.next).map(|t| t.nbytes).unwrap_or(0);
        let name = self.begin(n)?.name.clone();
        let copied = std::io::copy(&mut src.take(n), &mut self.out)
            .map_err(|e| werr(&name, e.to_string()))?;
        if copied != n {
            return Err(werr(
                &name,
                format!("source ended after {copied} of {n} bytes"),
            ));
        }
        self.end(n)
    }

    /// Writes the next tensor through `fill`, which writes its bytes to the output in any
    /// number of pieces and returns how many it wrote (must equal the tensor's size): converts
    /// a tensor without holding it whole. `fill`'s errors pass through with their class.
    pub fn write_tensor_with(&mut self, fill: impl FnOnce(&mut W) -> Result<u64>) -> Result<()> {
        let n = self.w.tensors.get(self.next).map(|t| t.nbytes).unwrap_or(0);
        let name = self.begin(n)?.name.clone();
        let wrote = fill(&mut self.out)?;
        if wrote != n {
            return Err(werr(
                &name,
                format!("wrote {wrote} bytes of tensor '{name}', its info says {n}"),
            ));
        }
        self.end(n)
    }

    /// Starts the next tensor, whose bytes then come in any number of [`Self::write_part`]
    /// calls (a tensor generated in chunks); its padding follows the last part.
    pub fn begin_tensor(&mut self) -> Result<()> {
        let n = self.w.tensors.get(self.next).map(|t| t.nbytes).unwrap_or(0);
        self.begin(n)?;
        if n == 0 {
            return self.end(0);
        }
        self.open = Some((n, n));
        Ok(())
    }

    /// Writes the next piece of the tensor begun by [`Self::begin_tensor`]; the piece that
    /// completes it also writes its padding. Empty pieces are no-ops; a piece past the
    /// tensor's size is an error.
    pub fn write_part(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let i = self.next;
        let Some((size, left)) = self.open else {
            return Err(werr("tensor data", format!("tensor {i} was not begun")));
        };
        if data.len() as u64 > left {
            return Err(werr(
                "tensor data",
                format!(
                    "a {}-byte part exceeds tensor {i}'s {left} remaining bytes",
                    data.len()
                ),
            ));
        }
        self.out
            .write_all(data)
            .map_err(|e| werr("tensor data", e.to_string()))?;
        let left = left - data.len() as u64;
        if left > 0 {
            self.open = Some((size, left));
            return Ok(());
        }
        self.open = None;
        self.end(size)
    }

    /// Index of the next tensor to write.
    pub fn next_index(&self) -> usize {
        self.next
    }

    /// Finishes; every tensor must have been written.
    pub fn finish(mut self) -> Result<W> {
        if let Some((_, left)) = self.open {
            return Err(werr(
                "tensor data",
                format!("tensor {} still lacks {left} bytes of its parts", self.next),
            ));
        }
        if self.next != self.w.tensors.len() {
            return Err(werr(
                "tensor data",
                format!("{} of {} tensors written", self.next, self.w.tensors.len()),
            ));
        }
        self.out.flush().map_err(|e| werr("flush", e.to_string()))?;
        Ok(self.out)
    }
}

fn zeros(out: &mut impl Write, mut n: u64) -> Result<()> {
    const Z: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(Z.len() as u64) as usize;
        out.write_all(&Z[..k])
            .map_err(|e| werr("padding", e.to_string()))?;
        n -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer of two F32 tensors: `a` of 4 elements (16 bytes), `b` of 2 (8 bytes).
    fn two_tensors() -> GgufWriter {
        let mut w = GgufWriter::new();
        w.tensor("a", &[4], 0).unwrap();
        w.tensor("b", &[2], 0).unwrap();
        w
    }

    #[test]
    fn parts_make_the_same_file_as_whole_tensors() {
        let w = two_tensors();
        let (a, b) = ([7u8; 16], [9u8; 8]);
        let want = w.to_bytes(&[&a, &b]).unwrap();
        let mut s = w.stream(Vec::new()).unwrap();
        s.begin_tensor().unwrap();
        for part in a.chunks(5) {
            s.write_part(part).unwrap();
            s.write_part(&[]).unwrap();
        }
        s.begin_tensor().unwrap();
        s.write_part(&b).unwrap();
        assert_eq!(s.finish().unwrap(), want);
    }

    #[test]
    fn a_part_past_the_tensor_size_is_an_io_write_error() {
        let w = two_tensors();
        let mut s = w.stream(Vec::new()).unwrap();
        s.begin_tensor().unwrap();
        s.write_part(&[0; 10]).unwrap();
        let e = s.write_part(&[0; 7]).unwrap_err();
        assert_eq!(e.class(), C::IoWrite);
        assert!(
            e.to_string()
                .contains("7-byte part exceeds tensor 0's 6 remaining"),
            "{e}"
        );
        // The exact remainder is accepted (control: the limit is the size, not below it).
        s.write_part(&[0; 6]).unwrap();
    }

    #[test]
    fn a_part_before_begin_tensor_is_an_io_write_error() {
        let w = two_tensors();
        let mut s = w.stream(Vec::new()).unwrap();
        let e = s.write_part(&[1]).unwrap_err();
        assert_eq!(e.class(), C::IoWrite);
        assert!(e.to_string().contains("tensor 0 was not begun"), "{e}");
        // And after a tensor completed, the next must be begun again.
        s.begin_tensor().unwrap();
        s.write_part(&[0; 16]).unwrap();
        let e = s.write_part(&[1]).unwrap_err();
        assert!(e.to_string().contains("tensor 1 was not begun"), "{e}");
    }

    #[test]
    fn an_unfinished_tensor_fails_finish_and_the_next_begin() {
        let w = two_tensors();
        let mut s = w.stream(Vec::new()).unwrap();
        s.begin_tensor().unwrap();
        s.write_part(&[0; 15]).unwrap();
        let e = s.begin_tensor().unwrap_err();
        assert!(
            e.to_string().contains("tensor 0 still lacks 1 bytes"),
            "{e}"
        );
        let e = s.finish().unwrap_err();
        assert_eq!(e.class(), C::IoWrite);
        assert!(
            e.to_string().contains("tensor 0 still lacks 1 bytes"),
            "{e}"
        );
        // A stream with every tensor complete but one never begun fails too.
        let mut s = w.stream(Vec::new()).unwrap();
        s.write_tensor(&[0; 16]).unwrap();
        let e = s.finish().unwrap_err();
        assert!(e.to_string().contains("1 of 2 tensors written"), "{e}");
    }
}
