//! Block codecs: the byte layouts of the ggml types this suite decodes, written from
//! `spec/codecs.md#block-codecs` and checked against `spec/codecs.json` / `spec/ggml_types.json`.
//!
//! Every codec has a scalar reference decoder (element by element, straight from the
//! formula) and a fast row decoder; tests prove them bit-identical. Decoding follows the
//! formula for every byte pattern, including inf/NaN scales and non-canonical base-3
//! bytes; [`Codec::validate`] is the separate, ggml-like strictness check.
//!
//! ```
//! use ninfer_ternary::{codec::Codec, ErrorClass};
//!
//! // 128 weights quantized to one PTQ1_0 block (base-3 trits and an f16 scale), decoded back.
//! let x: Vec<f32> = (0..128).map(|i| [-0.5f32, 0.0, 0.5][i % 3]).collect();
//! let block = Codec::Ptq1_0.quantize_to_vec(&x).unwrap();
//! assert_eq!(block.len(), Codec::Ptq1_0.block_bytes());
//! assert_eq!(Codec::Ptq1_0.decode_to_vec(&block).unwrap(), x);
//! // A short payload is refused with its class, never read past.
//! let e = Codec::Ptq1_0.decode_to_vec(&block[..10]).unwrap_err();
//! assert_eq!(e.class(), ErrorClass::CodecLength);
//! ```

pub mod base3;
#[cfg(feature = "internals")]
pub mod direct;
#[cfg(not(feature = "internals"))]
pub(crate) mod direct;
pub mod fp8_row;
pub mod grouped_int;
pub mod nvfp4;
#[cfg(feature = "internals")]
pub mod parallel;
#[cfg(not(feature = "internals"))]
pub(crate) mod parallel;
pub mod pq2;
pub mod ptq1;
pub mod q1_0;
pub mod q2s_planar;
pub mod q8_0;
#[cfg(feature = "internals")]
pub mod simd;
#[cfg(not(feature = "internals"))]
pub(crate) mod simd;
pub mod ternary;
pub mod tq1;
pub mod tq2;
pub mod transcode;
pub use ternary::TernaryType;

use crate::error::{Error, ErrorClass, Result};

/// The shared preconditions of the registry-format decoders (grouped int, NVFP4, FP8 row):
/// the payload holds the `needs` bytes its shape (`what_needs`) requires, and `rows` lies in `0..n`.
pub(crate) fn check_payload_and_rows(
    layout: &str,
    payload_len: usize,
    needs: u64,
    what_needs: &str,
    n: u64,
    rows: &std::ops::Range<u64>,
) -> Result<()> {
    if (payload_len as u64) < needs {
        return Err(Error::new(
            ErrorClass::CodecLength,
            layout,
            format!("payload has {payload_len} bytes, {what_needs} needs {needs}"),
        ));
    }
    if rows.start > rows.end || rows.end > n {
        return Err(Error::new(
            ErrorClass::CliUsage,
            layout,
            format!("rows {}..{} outside 0..{n}", rows.start, rows.end),
        ));
    }
    Ok(())
}

/// A block format's decoder. Names match the `codec` column of `spec/ggml_types.json`.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// ggml F32 (id 0): little-endian f32, one element per block.
    F32,
    /// ggml F16 (id 1): IEEE half.
    F16,
    /// ggml BF16 (id 30): bfloat16.
    Bf16,
    /// Decodes to f32 with an `as f32` cast (exact up to |v| <= 2^24, rounded to nearest above).
    I32,
    /// Mainline Q8_0 (id 8): i8 quants, f16 scale first.
    Q8_0,
    /// PrismML PQ2_0 (id 142) and legacy Prism Q2_0-g128 (id 42 variant).
    Pq2_0,
    /// Mainline Q2_0 (id 42): the PQ2_0 codec at group 64.
    Q2_0G64,
    /// PrismML PTQ1_0 (id 143): base-3 trits in three stages, f16 scale last.
    Ptq1_0,
    /// Mainline TQ1_0 (id 34): base-3 trits, f16 scale last.
    Tq1_0,
    /// Mainline TQ2_0 (id 35): 2-bit codes, f16 scale last.
    Tq2_0,
    /// Mainline Q1_0 (id 41): one sign bit per element, f16 scale first.
    Q1_0,
    /// BeeLlama planar Q2_0 / Q2_0S (ids 53 / 47).
    Q2_0sPlanar,
}

/// Per-tensor code counts for the verifier and `inspect`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeStats {
    /// Blocks counted.
    pub blocks: u64,
    /// Elements counted.
    pub values: u64,
    /// Zero values: trit 1 (base-3), code 1 (PQ2_0 family, TQ2_0), code 2 (planar). Q1_0 has none.
    pub zeros: u64,
    /// Code 3 in the PQ2_0 family and TQ2_0 (decodes to +2d, not a trit).
    pub code3: u64,
    /// qs/qh bytes the base-3 encoder never produces (PTQ1_0, TQ1_0).
    pub noncanonical_bytes: u64,
    /// Blocks whose f16 scale is inf or NaN.
    pub nonfinite_scales: u64,
    /// Blocks whose f16 scale is < 0 (−0 and NaN not counted).
    pub negative_scales: u64,
}

impl CodeStats {
    /// Adds another run's counts (for accumulating over a tensor's rows).
    pub fn add(&mut self, o: &CodeStats) {
        self.blocks += o.blocks;
        self.values += o.values;
        self.zeros += o.zeros;
        self.code3 += o.code3;
        self.noncanonical_bytes += o.noncanonical_bytes;
        self.nonfinite_scales += o.nonfinite_scales;
        self.negative_scales += o.negative_scales;
    }
}

impl Codec {
    /// Every codec, in declaration order.
    pub const ALL: [Codec; 12] = [
        Codec::F32,
        Codec::F16,
        Codec::Bf16,
        Codec::I32,
        Codec::Q8_0,
        Codec::Pq2_0,
        Codec::Q2_0G64,
        Codec::Ptq1_0,
        Codec::Tq1_0,
        Codec::Tq2_0,
        Codec::Q1_0,
        Codec::Q2_0sPlanar,
    ];

    /// The codec named in `spec/ggml_types.json` (`"pq2_0"`, `"q2_0s_planar"`, ...).
    pub fn from_name(name: &str) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The codec's name in `spec/ggml_types.json` / `spec/codecs.json` (`"pq2_0"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Codec::F32 => "f32",
            Codec::F16 => "f16",
            Codec::Bf16 => "bf16",
            Codec::I32 => "i32",
            Codec::Q8_0 => "q8_0",
            Codec::Pq2_0 => "pq2_0",
            Codec::Q2_0G64 => "q2_0_g64",
            Codec::Ptq1_0 => "ptq1_0",
            Codec::Tq1_0 => "tq1_0",
            Codec::Tq2_0 => "tq2_0",
            Codec::Q1_0 => "q1_0",
            Codec::Q2_0sPlanar => "q2_0s_planar",
        }
    }

    /// Elements per block.
    pub const fn block_elems(self) -> usize {
        match self {
            Codec::F32 | Codec::F16 | Codec::Bf16 | Codec::I32 => 1,
            Codec::Q8_0 => q8_0::BLOCK_ELEMS,
            Codec::Pq2_0 => 128,
            Codec::Q2_0G64 => 64,
            Codec::Ptq1_0 => ptq1::BLOCK_ELEMS,
            Codec::Tq1_0 => tq1::BLOCK_ELEMS,
            Codec::Tq2_0 => tq2::BLOCK_ELEMS,
            Codec::Q1_0 => q1_0::BLOCK_ELEMS,
            Codec::Q2_0sPlanar => q2s_planar::BLOCK_ELEMS,
        }
    }

    /// Bytes per block.
    pub const fn block_bytes(self) -> usize {
        match self {
            Codec::F32 | Codec::I32 => 4,
            Codec::F16 | Codec::Bf16 => 2,
            Codec::Q8_0 => q8_0::BLOCK_BYTES,
            Codec::Pq2_0 => pq2::PQ2_0_BYTES,
            Codec::Q2_0G64 => pq2::Q2_0_G64_BYTES,
            Codec::Ptq1_0 => ptq1::BLOCK_BYTES,
            Codec::Tq1_0 => tq1::BLOCK_BYTES,
            Codec::Tq2_0 => tq2::BLOCK_BYTES,
            Codec::Q1_0 => q1_0::BLOCK_BYTES,
            Codec::Q2_0sPlanar => q2s_planar::BLOCK_BYTES,
        }
    }

    /// Byte offset of the f16 block scale inside a block (`None` for the plain types).
    pub const fn scale_offset(self) -> Option<usize> {
        match self {
            Codec::F32 | Codec::F16 | Codec::Bf16 | Codec::I32 => None,
            Codec::Ptq1_0 => Some(ptq1::SCALE_OFFSET),
            Codec::Tq1_0 => Some(tq1::SCALE_OFFSET),
            Codec::Tq2_0 => Some(tq2::SCALE_OFFSET),
            // Scale first.
            Codec::Q8_0 | Codec::Pq2_0 | Codec::Q2_0G64 | Codec::Q1_0 | Codec::Q2_0sPlanar => {
                Some(0)
            }
        }
    }

    /// The codec of a ggml type or fork variant (`None` when the suite does not decode it).
    pub fn for_ggml_type(t: &crate::spec::GgmlType) -> Option<Codec> {
        t.codec.as_deref().and_then(Codec::from_name)
    }

    /// Like [`Codec::for_ggml_type`], but a `codec.unsupported` error naming the type.
    pub fn for_ggml_type_checked(t: &crate::spec::GgmlType) -> Result<Codec> {
        Codec::for_ggml_type(t).ok_or_else(|| {
            Error::new(
                ErrorClass::CodecUnsupported,
                t.name.clone(),
                format!(
                    "ggml type {} ({}) has known sizes ({} B / {} elements) but this suite does not decode its values",
                    t.id, t.name, t.block_bytes, t.block_elems
                ),
            )
        })
    }

    /// Number of whole blocks in `len` bytes, or a `codec.length` error.
    pub fn blocks_in(self, len: usize) -> Result<usize> {
        let bb = self.block_bytes();
        if len % bb != 0 {
            return Err(Error::new(
                ErrorClass::CodecLength,
                self.name(),
                format!(
                    "{len} bytes is not a whole number of {bb}-byte blocks ({} whole blocks and {} bytes left over)",
                    len / bb,
                    len % bb
                ),
            ));
        }
        Ok(len / bb)
    }

    /// Bytes needed for `elems` elements, or a `codec.length` error when `elems` is not a
    /// whole number of blocks (or overflows).
    pub fn bytes_for(self, elems: usize) -> Result<usize> {
        let be = self.block_elems();
        if elems % be != 0 {
            return Err(Error::new(
                ErrorClass::CodecLength,
                self.name(),
                format!("{elems} elements is not a whole number of {be}-element blocks"),
            ));
        }
        (elems / be).checked_mul(self.block_bytes()).ok_or_else(|| {
            Error::new(
                ErrorClass::CodecLength,
                self.name(),
                format!("{elems} elements overflow usize bytes"),
            )
        })
    }

    /// Checks the decode contract: whole blocks in, exactly `blocks * block_elems` out.
    pub(crate) fn check_decode(self, bytes: &[u8], out_len: usize) -> Result<usize> {
        let blocks = self.blocks_in(bytes.len())?;
        let want = blocks * self.block_elems();
        if out_len != want {
            return Err(Error::new(
                ErrorClass::CodecLength,
                self.name(),
                format!(
                    "output holds {out_len} f32 but {} bytes = {blocks} blocks decode to {want} elements",
                    bytes.len()
                ),
            ));
        }
        Ok(blocks)
    }

    /// Decodes whole blocks to f32 with the fast path. `bytes.len()` must be a multiple of
    /// [`Codec::block_bytes`] and `out.len()` the matching element count. Large outputs may be written with streaming stores, by output size and machine.
    pub fn decode(self, bytes: &[u8], out: &mut [f32]) -> Result<()> {
        self.check_decode(bytes, out.len())?;
        simd::decode_blocks_stored(self, simd::active(), simd::Stores::Auto, bytes, out);
        Ok(())
    }

    /// The fast decode of whole blocks on `path` (callers have checked the lengths): the
    /// per-path kernels where the codec has them, the one fast loop otherwise.
    pub(crate) fn decode_blocks_on(self, path: simd::Path, bytes: &[u8], out: &mut [f32]) {
        match self {
            Codec::F32 => direct::decode_f32(bytes, out),
            Codec::F16 => direct::decode_f16(bytes, out),
            Codec::Bf16 => direct::decode_bf16(bytes, out),
            Codec::I32 => direct::decode_i32(bytes, out),
            Codec::Q8_0 => q8_0::decode_rows(bytes, out),
            Codec::Pq2_0 => pq2::decode_rows_on::<128>(path, bytes, out),
            Codec::Q2_0G64 => pq2::decode_rows_on::<64>(path, bytes, out),
            Codec::Ptq1_0 => ptq1::decode_rows_on(path, bytes, out),
            Codec::Tq1_0 => tq1::decode_rows_on(path, bytes, out),
            Codec::Tq2_0 => tq2::decode_rows_on(path, bytes, out),
            Codec::Q1_0 => q1_0::decode_rows(bytes, out),
            Codec::Q2_0sPlanar => q2s_planar::decode_rows(bytes, out),
        }
    }

    /// Decodes whole blocks with the scalar reference (element-by-element formula).
    pub fn decode_reference(self, bytes: &[u8], out: &mut [f32]) -> Result<()> {
        self.check_decode(bytes, out.len())?;
        match self {
            Codec::F32 => direct::decode_f32_ref(bytes, out),
            Codec::F16 => direct::decode_f16_ref(bytes, out),
            Codec::Bf16 => direct::decode_bf16_ref(bytes, out),
            Codec::I32 => direct::decode_i32(bytes, out),
            Codec::Q8_0 => q8_0::decode_rows_ref(bytes, out),
            Codec::Pq2_0 => pq2::decode_rows_ref::<128>(bytes, out),
            Codec::Q2_0G64 => pq2::decode_rows_ref::<64>(bytes, out),
            Codec::Ptq1_0 => ptq1::decode_rows_ref(bytes, out),
            Codec::Tq1_0 => tq1::decode_rows_ref(bytes, out),
            Codec::Tq2_0 => tq2::decode_rows_ref(bytes, out),
            Codec::Q1_0 => q1_0::decode_rows_ref(bytes, out),
            Codec::Q2_0sPlanar => q2s_planar::decode_rows_ref(bytes, out),
        }
        Ok(())
    }

    /// Decodes into a new vector.
    pub fn decode_to_vec(self, bytes: &[u8]) -> Result<Vec<f32>> {
        let n = self.blocks_in(bytes.len())? * self.block_elems();
        let mut out = alloc_f32(n)?;
        self.decode(bytes, &mut out)?;
        Ok(out)
    }

    /// ggml-style validation: a block scale (or, for F32/F16/BF16, a value) that is inf or
    /// NaN is a `codec.scale_nonfinite` error at its byte offset within `bytes`.
    /// I32 has nothing to validate. Checks the length first.
    pub fn validate(self, bytes: &[u8]) -> Result<()> {
        self.validate_at(bytes, 0)
    }

    /// [`Codec::validate`] with offsets reported relative to `base` (the run's file offset).
    pub fn validate_at(self, bytes: &[u8], base: u64) -> Result<()> {
        let blocks = self.blocks_in(bytes.len())?;
        let bb = self.block_bytes();
        let nonfinite = |i: usize, off: usize, what: &str, shown: String| {
            Error::at(
                ErrorClass::CodecScaleNonfinite,
                base + (i * bb + off) as u64,
                format!("block[{i}].{what}"),
                format!(
                    "{} {shown}: ggml's row validation rejects inf/NaN here",
                    self.name()
                ),
            )
        };
        match self {
            Codec::I32 => Ok(()),
            Codec::F32 => {
                for (i, c) in bytes.chunks_exact(4).enumerate() {
                    let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    if !v.is_finite() {
                        return Err(nonfinite(
                            i,
                            0,
                            "value",
                            format!("value {v} (0x{:08x})", v.to_bits()),
                        ));
                    }
                }
                Ok(())
            }
            Codec::F16 | Codec::Bf16 => {
                // Both keep the f16/bf16 exponent field all-ones for inf/NaN.
                let exp_mask = if self == Codec::F16 { 0x7c00 } else { 0x7f80 };
                for (i, c) in bytes.chunks_exact(2).enumerate() {
                    let h = u16::from_le_bytes([c[0], c[1]]);
                    if h & exp_mask == exp_mask {
                        return Err(nonfinite(
                            i,
                            0,
                            "value",
                            format!("value 0x{h:04x} is inf/NaN"),
                        ));
                    }
                }
                Ok(())
            }
            _ => {
                let so = self.scale_offset().unwrap_or(0);
                for i in 0..blocks {
                    let h = read_u16(bytes, i * bb + so);
                    if h & 0x7c00 == 0x7c00 {
                        let kind = if h & 0x03ff == 0 { "inf" } else { "NaN" };
                        return Err(nonfinite(
                            i,
                            so,
                            "d",
                            format!("f16 scale 0x{h:04x} is {kind}"),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Code counts of a run of whole blocks (ternary and 2-bit codecs, and Q1_0);
    /// `codec.unsupported` for the plain float/int types and Q8_0.
    pub fn stats(self, bytes: &[u8]) -> Result<CodeStats> {
        let blocks = self.blocks_in(bytes.len())?;
        let mut s = CodeStats {
            blocks: blocks as u64,
            values: (blocks * self.block_elems()) as u64,
            ..Default::default()
        };
        match self {
            Codec::Pq2_0 | Codec::Q2_0G64 | Codec::Tq2_0 | Codec::Q2_0sPlanar => {
                let (lo, hi) = match self {
                    Codec::Tq2_0 => (0, 64),
                    _ => (2, self.block_bytes()),
                };
                for blk in bytes.chunks_exact(self.block_bytes()) {
                    for &b in &blk[lo..hi] {
                        if self == Codec::Q2_0sPlanar {
                            s.zeros += pq2::count_code(b, 2) as u64;
                        } else {
                            s.zeros += pq2::count_code(b, 1) as u64;
                            s.code3 += pq2::count_code(b, 3) as u64;
                        }
                    }
                }
            }
            Codec::Ptq1_0 | Codec::Tq1_0 => {
                let (nqs, nqh) = if self == Codec::Ptq1_0 {
                    (24, 2)
                } else {
                    (48, 4)
                };
                let f = &base3::FACTS;
                for blk in bytes.chunks_exact(self.block_bytes()) {
                    for &b in &blk[..nqs] {
                        s.zeros += f.qs_zeros[b as usize] as u64;
                        s.noncanonical_bytes += f.qs_noncanonical[b as usize] as u64;
                    }
                    for &b in &blk[nqs..nqs + nqh] {
                        s.zeros += f.qh_zeros[b as usize] as u64;
                        s.noncanonical_bytes += f.qh_noncanonical[b as usize] as u64;
                    }
                }
            }
            Codec::Q1_0 => {}
            _ => {
                return Err(Error::new(
                    ErrorClass::CodecUnsupported,
                    self.name(),
                    "code statistics exist only for the ternary, 2-bit and 1-bit codecs",
                ))
            }
        }
        let so = self.scale_offset().unwrap_or(0);
        for i in 0..blocks {
            let d = f16_to_f32(read_u16(bytes, i * self.block_bytes() + so));
            s.nonfinite_scales += !d.is_finite() as u64;
            s.negative_scales += (d < 0.0) as u64;
        }
        Ok(s)
    }

    /// ggml's reference quantizer for this codec, block by block (`x.len()` a whole number
    /// of blocks, `out.len()` the matching byte count). F32/F16/BF16 are plain conversions
    /// (round to nearest even). I32 and planar Q2_0S have no quantizer here: `codec.unsupported`.
    /// A block codec refuses a NaN or infinite input (`codec.scale_nonfinite`); a block whose
    /// largest magnitude is an f32 subnormal stores scale `0x0000` and decodes to ±0, as the
    /// owner's does, its codes unspecified (spec/codecs.md#quantizer-edge-inputs).
    pub fn quantize(self, x: &[f32], out: &mut [u8]) -> Result<()> {
        let want = self.bytes_for(x.len())?;
        if out.len() != want {
            return Err(Error::new(
                ErrorClass::CodecLength,
                self.name(),
                format!(
                    "output holds {} bytes but {} elements encode to {want}",
                    out.len(),
                    x.len()
                ),
            ));
        }
        let plain = matches!(self, Codec::F32 | Codec::F16 | Codec::Bf16);
        if let Some(k) = x.iter().position(|v| !v.is_finite()).filter(|_| !plain) {
            // ggml's quantize_row_*_ref feeds such values (or the inf/NaN scale they make)
            // through lroundf/roundf to an integer, which C leaves undefined: there are no
            // owner's bytes to match (spec/codecs.md#quantizer-edge-inputs).
            return Err(Error::new(
                ErrorClass::CodecScaleNonfinite,
                self.name(),
                format!(
                    "input element {k} is {}: a block quantizer needs finite inputs (the reference \
                     quantizer is undefined there)",
                    x[k]
                ),
            ));
        }
        let bb = self.block_bytes();
        let be = self.block_elems();
        let blocks = out.chunks_exact_mut(bb).zip(x.chunks_exact(be));
        match self {
            Codec::F32 => blocks.for_each(|(o, v)| o.copy_from_slice(&v[0].to_le_bytes())),
            Codec::F16 => {
                blocks.for_each(|(o, v)| o.copy_from_slice(&f32_to_f16(v[0]).to_le_bytes()))
            }
            Codec::Bf16 => blocks
                .for_each(|(o, v)| o.copy_from_slice(&direct::f32_to_bf16(v[0]).to_le_bytes())),
            Codec::Q8_0 => each_quant(x, out, q8_0::quantize_block),
            Codec::Pq2_0 => each_quant(x, out, pq2::quantize_block::<128, 34>),
            Codec::Q2_0G64 => each_quant(x, out, pq2::quantize_block::<64, 18>),
            Codec::Ptq1_0 => each_quant(x, out, ptq1::quantize_block),
            Codec::Tq1_0 => each_quant(x, out, tq1::quantize_block),
            Codec::Tq2_0 => each_quant(x, out, tq2::quantize_block),
            Codec::Q1_0 => each_quant(x, out, q1_0::quantize_block),
            Codec::I32 | Codec::Q2_0sPlanar => {
                return Err(Error::new(
                    ErrorClass::CodecUnsupported,
                    self.name(),
                    "no reference quantizer for this codec in the suite",
                ))
            }
        }
        Ok(())
    }

    /// Quantizes into a new vector.
    pub fn quantize_to_vec(self, x: &[f32]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.bytes_for(x.len())?];
        self.quantize(x, &mut out)?;
        Ok(out)
    }
}

/// `n` zeroed f32s, reserved fallibly: a small (sparse) input can declare more f32s than the
/// process may hold; that is a clean `io.memory` refusal, not an allocation abort.
pub(crate) fn alloc_f32(n: usize) -> Result<Vec<f32>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| memory_error(n))?;
    out.resize(n, 0f32);
    Ok(out)
}

/// The `io.memory` error for `n` decoded values that cannot be allocated.
pub(crate) fn memory_error(n: usize) -> Error {
    Error::new(
        ErrorClass::IoMemory,
        "output",
        format!(
            "{n} decoded values ({} bytes) cannot be allocated",
            n as u128 * 4
        ),
    )
}

/// The free-function form of [`Codec::for_ggml_type`].
pub fn for_ggml_type(t: &crate::spec::GgmlType) -> Option<Codec> {
    Codec::for_ggml_type(t)
}

/// Little-endian u16 at `at` (callers have checked the length).
#[inline(always)]
pub(crate) fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// IEEE binary16 bits to f32 (exact; NaN stays NaN). The one conversion every path uses,
/// so reference and fast decoders agree bit for bit.
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// f32 to binary16 bits, round to nearest even (ggml's `GGML_FP32_TO_FP16`).
#[inline(always)]
pub fn f32_to_f16(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// ggml's `amax` loop: `amax = MAX(amax, fabsf(v))` with `MAX(a,b) = a > b ? a : b`
/// (kept literally, so NaN inputs behave as in C rather than as `f32::max`).
#[inline]
/// Runs a per-block reference decoder over whole blocks (lengths are checked by the callers).
pub(crate) fn each_block<const B: usize, const E: usize>(
    bytes: &[u8],
    out: &mut [f32],
    f: fn(&[u8; B], &mut [f32; E]),
) {
    let (blocks, _) = bytes.as_chunks::<B>();
    let (outs, _) = out.as_chunks_mut::<E>();
    for (blk, o) in blocks.iter().zip(outs) {
        f(blk, o);
    }
}

/// Runs a per-block reference quantizer over whole blocks (lengths are checked by the callers;
/// a trailing partial block on either side is not touched).
fn each_quant<const E: usize, const B: usize>(
    x: &[f32],
    out: &mut [u8],
    f: fn(&[f32; E]) -> [u8; B],
) {
    let (vs, _) = x.as_chunks::<E>();
    let (os, _) = out.as_chunks_mut::<B>();
    for (o, v) in os.iter_mut().zip(vs) {
        *o = f(v);
    }
}

pub(crate) fn ggml_amax(x: &[f32]) -> f32 {
    let mut amax = 0.0f32;
    for &v in x {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    amax
}

/// `lroundf` / `roundf`: half away from zero (Rust's `f32::round`), then to i32
/// (NaN → 0, saturating; C leaves those undefined).
#[inline(always)]
pub(crate) fn lroundf(x: f32) -> i32 {
    x.round() as i32
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod registry_tests;
