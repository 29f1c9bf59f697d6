//! Row access for the verifier: a row of a row-split object is three plane spans; reassembled
//! into its ggml blocks (plane slices from `spec/formats.json`) it must equal the GGUF row.
//! Rows are compared by a 64-bit fingerprint of those ggml bytes, one row at a time from the
//! memory maps — no object is ever copied whole.

use crate::codec::Codec;
use crate::error::Result;
use crate::geometry::Plane;
use crate::gguf::{Gguf, TensorInfo};
use crate::ninfer::RowSplitView;
use crate::spec::NumericFormat;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of artifact and GGUF payload the verifier read, process-wide; [`super::verify`]
/// returns its run's share in [`super::Stats`].
pub(crate) static BYTES_READ: AtomicU64 = AtomicU64::new(0);

fn count(n: usize) {
    BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
}

const FP_M: u64 = 0xbf58_476d_1ce4_e5b9;

/// One step of a fingerprint lane: bijective in the state for a fixed word and in the word for
/// a fixed state, so two inputs that differ in one word always leave different lane states.
#[inline(always)]
fn fp_step(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(FP_M);
    h ^ (h >> 29)
}

/// A 64-bit fingerprint (word-wise multiply-xorshift; not cryptographic, collisions between
/// distinct random rows are ~2^-64). Four independent lanes take the words of each 32-byte
/// chunk in turn (so the multiply chains overlap and the hash runs at memory speed); the tail
/// goes through lane 0 and the lanes are folded with the same step, then finalized. A
/// difference in a single word always changes the result.
pub fn fp64(b: &[u8]) -> u64 {
    let mut h = [
        0x9e37_79b9_7f4a_7c15 ^ (b.len() as u64).wrapping_mul(FP_M),
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
    ];
    let (chunks, rest) = b.as_chunks::<32>();
    for c in chunks {
        // Lane i takes word i of the chunk.
        for (lane, w) in h.iter_mut().zip(c.as_chunks::<8>().0) {
            *lane = fp_step(*lane, u64::from_le_bytes(*w));
        }
    }
    let (words, tail) = rest.as_chunks::<8>();
    for w in words {
        h[0] = fp_step(h[0], u64::from_le_bytes(*w));
    }
    if !tail.is_empty() {
        let mut t = [0u8; 8];
        t[..tail.len()].copy_from_slice(tail);
        h[0] = fp_step(h[0], u64::from_le_bytes(t) ^ 0xff);
    }
    let mut acc = h[0];
    for &l in &h[1..] {
        acc = fp_step(acc, l);
    }
    acc = (acc ^ (acc >> 32)).wrapping_mul(0x94d0_49bb_1331_11eb);
    acc ^ (acc >> 31)
}

use crate::fsio::bulk::{self, Lane};
use crate::fsio::will_need;
use std::ops::ControlFlow;

/// Threads the verifier splits row work over (`crate::pool::threads`).
pub fn threads() -> usize {
    crate::pool::threads()
}

/// Below this many rows per thread a range stays on the calling thread.
const MIN_ROWS_PER_THREAD: u64 = 512;

/// `f` over contiguous sub-ranges of `range` on up to [`threads`] threads taken from the
/// verifier's shared budget (`crate::pool`), the results concatenated in range order (so
/// the output is the same as `f(range)`).
pub fn par_ranges<T: Send>(
    range: std::ops::Range<u64>,
    f: impl Fn(std::ops::Range<u64>) -> Vec<T> + Sync,
) -> Vec<T> {
    crate::pool::ranges_with(
        crate::pool::global(),
        std::thread::Builder::new,
        range,
        threads(),
        MIN_ROWS_PER_THREAD,
        f,
    )
}

/// Copies `bpr` groups of `W` bytes from a plane span into their slot of each ggml block
/// (a fixed width, so the copy is a few moves instead of a `memcpy` call per group).
#[inline(always)]
fn scatter_fixed<const W: usize>(dst: &mut [u8], src: &[u8], bb: usize, lo: usize, bpr: usize) {
    for (g, s) in src.as_chunks::<W>().0.iter().take(bpr).enumerate() {
        dst[g * bb + lo..g * bb + lo + W].copy_from_slice(s);
    }
}

/// Reassembles one row's plane spans into ggml blocks (`dst` holds `bpr` blocks).
fn scatter(dst: &mut [u8], src: &[u8], bb: usize, lo: usize, hi: usize, bpr: usize) {
    match hi - lo {
        2 => scatter_fixed::<2>(dst, src, bb, lo, bpr),
        24 => scatter_fixed::<24>(dst, src, bb, lo, bpr),
        32 => scatter_fixed::<32>(dst, src, bb, lo, bpr),
        w => {
            for g in 0..bpr {
                dst[g * bb + lo..g * bb + hi].copy_from_slice(&src[g * w..(g + 1) * w]);
            }
        }
    }
}

/// The ggml block layout of a ternary format, from its plane slices.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    /// Bytes of one ggml block.
    pub block_bytes: usize,
    /// Weights of one ggml block.
    pub block_elems: usize,
    /// base, high, scale: `[lo, hi)` inside a block.
    pub slices: [Option<(usize, usize)>; 3],
    /// The decoder of a reassembled block row.
    pub codec: Codec,
}

impl Blocks {
    /// The layout of ternary format `f`.
    pub fn for_format(f: &NumericFormat) -> Result<Blocks> {
        let t = f.ternary.as_ref().ok_or_else(|| {
            err!(
                VerifyInput,
                &f.name,
                "{} is not a ternary format (no block_plane_slices)",
                f.name
            )
        })?;
        let slices = t
            .block_plane_slices
            .planes()
            .map(|p| p.map(|(a, b)| (a as usize, b as usize)));
        let codec = Codec::from_name(&t.codec)
            .ok_or_else(|| err!(SpecInvalid, &f.name, "unknown codec {}", t.codec))?;
        Ok(Blocks {
            block_bytes: slices.iter().flatten().map(|(a, b)| b - a).sum(),
            block_elems: f.group_size.unwrap_or(0) as usize,
            slices,
            codec,
        })
    }
}

/// Reads rows of one row-split artifact object as ggml bytes.
pub struct ArtifactRows<'a> {
    /// The object's planes.
    pub view: RowSplitView<'a>,
    /// Its block layout.
    pub blocks: Blocks,
    /// ggml blocks per row (k / group).
    pub bpr: usize,
    buf: Vec<u8>,
}

impl<'a> ArtifactRows<'a> {
    /// Rows of `view`, refused unless K is a whole number of blocks.
    pub fn new(view: RowSplitView<'a>, blocks: Blocks) -> Result<ArtifactRows<'a>> {
        if blocks.block_elems == 0 || view.geom.k % blocks.block_elems as u64 != 0 {
            fail!(
                NinferDirShape,
                &view.name,
                "k = {} is not a multiple of the block size {}",
                view.geom.k,
                blocks.block_elems
            );
        }
        let bpr = (view.geom.k / blocks.block_elems as u64) as usize;
        Ok(ArtifactRows {
            view,
            blocks,
            bpr,
            buf: vec![0; bpr * blocks.block_bytes],
        })
    }

    /// Row count.
    pub fn n(&self) -> u64 {
        self.view.geom.n
    }

    /// Row `r` reassembled into ggml blocks (valid until the next call).
    pub fn ggml_row(&mut self, r: u64) -> &[u8] {
        assemble_row(&self.view, &self.blocks, self.bpr, r, &mut self.buf);
        &self.buf
    }

    /// A fingerprint of row `r` (of its reassembled ggml blocks).
    pub fn fp(&mut self, r: u64) -> u64 {
        fp64(self.ggml_row(r))
    }

    /// The plane spans of rows `range`, one lane per plane the format has (a row's span in a
    /// plane is `row_bytes` at `r * row_bytes`, so a run of rows is one contiguous stretch).
    fn plane_lanes(&self, range: &std::ops::Range<u64>) -> Vec<(usize, Lane<'a>)> {
        Plane::ALL
            .iter()
            .enumerate()
            .filter(|(pi, _)| self.blocks.slices[*pi].is_some())
            .map(|(pi, &p)| {
                let w = self.view.geom.row_bytes(p) as usize;
                let plane = self.view.plane(p);
                let bytes = &plane[range.start as usize * w..range.end as usize * w];
                (pi, Lane { bytes, unit: w })
            })
            .collect()
    }

    /// Fingerprints of rows `range` (as [`ArtifactRows::fp`] of each), computed on every core;
    /// off disk, as the plane reads arrive (`crate::fsio::bulk`).
    pub fn fps(&self, range: std::ops::Range<u64>) -> Vec<u64> {
        let lanes = self.plane_lanes(&range);
        let just_lanes: Vec<Lane<'_>> = lanes.iter().map(|(_, l)| *l).collect();
        if bulk::cold(&just_lanes) {
            return self.fps_streamed(&lanes, &just_lanes);
        }
        will_need(self.view.bytes);
        let (view, blocks, bpr) = (&self.view, &self.blocks, self.bpr);
        par_ranges(range, |sub| {
            let mut buf = vec![0u8; bpr * blocks.block_bytes];
            sub.map(|r| {
                assemble_row(view, blocks, bpr, r, &mut buf);
                fp64(&buf)
            })
            .collect()
        })
    }

    fn fps_streamed(&self, lanes: &[(usize, Lane<'a>)], just_lanes: &[Lane<'_>]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; self.bpr * self.blocks.block_bytes];
        bulk::for_each_block::<()>(just_lanes, |units, slices| {
            for i in 0..units.len() {
                let spans = lanes
                    .iter()
                    .zip(slices)
                    .map(|((pi, l), s)| (*pi, &s[i * l.unit..(i + 1) * l.unit]));
                assemble_spans(&self.blocks, self.bpr, spans, &mut buf);
                out.push(fp64(&buf));
            }
            ControlFlow::Continue(())
        });
        out
    }

    /// Row `r` decoded to f64 (`k` values).
    pub fn decode(&mut self, r: u64) -> Result<Vec<f64>> {
        let k = self.view.geom.k as usize;
        let codec = self.blocks.codec;
        let mut out = vec![0f32; k];
        codec
            .decode(self.ggml_row(r), &mut out)
            .map_err(|e| super::within(e, &format!("{} row {r}", self.view.name)))?;
        Ok(out.into_iter().map(f64::from).collect())
    }
}

/// Row `r` of `view` reassembled into `buf` (`bpr` ggml blocks), counted in [`BYTES_READ`].
fn assemble_row(view: &RowSplitView<'_>, blocks: &Blocks, bpr: usize, r: u64, buf: &mut [u8]) {
    let spans = Plane::ALL
        .iter()
        .enumerate()
        .map(|(pi, plane)| (pi, view.row(*plane, r)));
    assemble_spans(blocks, bpr, spans, buf);
}

/// One row's plane spans `(plane index, span)` reassembled into `buf`, counted in
/// [`BYTES_READ`]; planes the format lacks are skipped.
fn assemble_spans<'s>(
    blocks: &Blocks,
    bpr: usize,
    spans: impl Iterator<Item = (usize, &'s [u8])>,
    buf: &mut [u8],
) {
    let bb = blocks.block_bytes;
    for (pi, span) in spans {
        let Some((lo, hi)) = blocks.slices[pi] else {
            continue;
        };
        count(bpr * (hi - lo));
        scatter(buf, span, bb, lo, hi, bpr);
    }
}

/// Rows of a ternary GGUF tensor (zero-copy slices of the map).
pub struct GgufRows<'a> {
    /// The tensor name.
    pub name: String,
    /// Its data.
    pub data: &'a [u8],
    /// Bytes per row.
    pub row_bytes: usize,
    /// Row count.
    pub n: u64,
    /// Weights per row.
    pub k: u64,
}

impl<'a> GgufRows<'a> {
    /// Rows of tensor `t`, checked to be in `format`.
    pub fn new(
        g: &Gguf<'a>,
        t: &TensorInfo<'a>,
        f: &NumericFormat,
        b: &Blocks,
    ) -> Result<GgufRows<'a>> {
        let Some(tf) = f.ternary.as_ref() else {
            fail!(
                VerifyInput,
                t.name,
                "{} is not a ternary format (no block_plane_slices)",
                f.name
            );
        };
        let want = &tf.ggml_type;
        if &t.ggml.name != want {
            fail!(
                GgufTensorType,
                t.name,
                "is {}, expected {want}",
                t.ggml.name
            );
        }
        if t.n_dims != 2 || t.ne[0] % b.block_elems as u64 != 0 {
            fail!(
                GgufTensorShape,
                t.name,
                "ne={:?} is not a 2-D tensor of whole {}-element blocks",
                t.dims(),
                b.block_elems
            );
        }
        let row_bytes = (t.ne[0] as usize / b.block_elems) * b.block_bytes;
        let data = g.tensor_data(t);
        if data.len() != row_bytes * t.ne[1] as usize {
            fail!(
                GgufTensorShape,
                t.name,
                "{} bytes for {} rows of {row_bytes}",
                data.len(),
                t.ne[1]
            );
        }
        Ok(GgufRows {
            name: t.name.to_string(),
            data,
            row_bytes,
            n: t.ne[1],
            k: t.ne[0],
        })
    }

    /// The bytes of row `r`.
    pub fn row(&self, r: u64) -> &'a [u8] {
        let r = r as usize;
        count(self.row_bytes);
        &self.data[r * self.row_bytes..(r + 1) * self.row_bytes]
    }

    /// A fingerprint of row `r`.
    pub fn fp(&self, r: u64) -> u64 {
        fp64(self.row(r))
    }

    /// Fingerprints of every row (as [`GgufRows::fp`] of each), computed on every core; off
    /// disk, as the reads arrive (`crate::fsio::bulk`).
    pub fn fps(&self) -> Vec<u64> {
        let lane = [Lane {
            bytes: self.data,
            unit: self.row_bytes,
        }];
        if bulk::cold(&lane) {
            let mut out = Vec::with_capacity(self.n as usize);
            bulk::for_each_block::<()>(&lane, |_, s| {
                for row in s[0].chunks_exact(self.row_bytes) {
                    count(self.row_bytes);
                    out.push(fp64(row));
                }
                ControlFlow::Continue(())
            });
            return out;
        }
        will_need(self.data);
        par_ranges(0..self.n, |sub| sub.map(|r| self.fp(r)).collect())
    }
}
