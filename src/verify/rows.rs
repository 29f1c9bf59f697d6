//! Row access for the verifier: a row of a row-split object is three plane spans; reassembled
//! into its ggml blocks (plane slices from `spec/formats.json`) it must equal the GGUF row.
//! Rows are compared by a 64-bit fingerprint of those ggml bytes, one row at a time from the
//! memory maps — no object is ever copied whole.

use crate::codec::Codec;
use crate::geometry::Plane;
use crate::gguf::{Gguf, TensorInfo};
use crate::ninfer::RowSplitView;
use crate::spec::NumericFormat;
use anyhow::{anyhow, bail, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of artifact and GGUF payload the verifier read (for the stats line).
pub static BYTES_READ: AtomicU64 = AtomicU64::new(0);

fn count(n: usize) {
    BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
}

/// A 64-bit fingerprint (word-wise multiply-xorshift; not cryptographic, collisions between
/// distinct random rows are ~2^-64).
pub fn fp64(b: &[u8]) -> u64 {
    const M: u64 = 0xbf58_476d_1ce4_e5b9;
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ (b.len() as u64).wrapping_mul(M);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(M);
        h ^= h >> 29;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut t = [0u8; 8];
        t[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(t) ^ 0xff).wrapping_mul(M);
        h ^= h >> 29;
    }
    h = (h ^ (h >> 32)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
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
        let t = f
            .ternary
            .as_ref()
            .ok_or_else(|| anyhow!("{} is not a ternary format (no block_plane_slices)", f.name))?;
        let slices = t
            .block_plane_slices
            .planes()
            .map(|p| p.map(|(a, b)| (a as usize, b as usize)));
        let codec = Codec::from_name(&t.codec)
            .ok_or_else(|| anyhow!("{}: unknown codec {}", f.name, t.codec))?;
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
            bail!(
                "{}: k = {} is not a multiple of the block size {}",
                view.name,
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
        let bb = self.blocks.block_bytes;
        for (pi, plane) in Plane::ALL.iter().enumerate() {
            let Some((lo, hi)) = self.blocks.slices[pi] else {
                continue;
            };
            let span = self.view.row(*plane, r);
            let gb = hi - lo;
            count(self.bpr * gb);
            for g in 0..self.bpr {
                self.buf[g * bb + lo..g * bb + hi].copy_from_slice(&span[g * gb..(g + 1) * gb]);
            }
        }
        &self.buf
    }

    /// A fingerprint of row `r` (of its reassembled ggml blocks).
    pub fn fp(&mut self, r: u64) -> u64 {
        fp64(self.ggml_row(r))
    }

    /// Row `r` decoded to f64 (`k` values).
    pub fn decode(&mut self, r: u64) -> Result<Vec<f64>> {
        let k = self.view.geom.k as usize;
        let codec = self.blocks.codec;
        let mut out = vec![0f32; k];
        codec
            .decode(self.ggml_row(r), &mut out)
            .map_err(|e| anyhow!("{} row {r}: {e}", self.view.name))?;
        Ok(out.into_iter().map(f64::from).collect())
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
        let want = &f.ternary.as_ref().expect("ternary format").ggml_type;
        if &t.ggml.name != want {
            bail!("{} is {}, expected {want}", t.name, t.ggml.name);
        }
        if t.n_dims != 2 || t.ne[0] % b.block_elems as u64 != 0 {
            bail!(
                "{}: ne={:?} is not a 2-D tensor of whole {}-element blocks",
                t.name,
                t.dims(),
                b.block_elems
            );
        }
        let row_bytes = (t.ne[0] as usize / b.block_elems) * b.block_bytes;
        let data = g.tensor_data(t);
        if data.len() != row_bytes * t.ne[1] as usize {
            bail!(
                "{}: {} bytes for {} rows of {row_bytes}",
                t.name,
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
}
