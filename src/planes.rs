//! Block ↔ plane conversion for row-split ternary tensors.
//!
//! A GGUF ternary tensor is a stream of ggml blocks, row by row. A `row-split-k128-v1` object
//! stores the same bytes split into three planes (base, high, scale) per the format's
//! `block_plane_slices` in `spec/formats.json`. [`assemble`] and [`disassemble`] are exact
//! inverses; their equality on every tensor is the losslessness proof of the packer.
//!
//! ```
//! use ninfer_ternary::{geometry::row_split_geometry, planes, spec};
//!
//! // Two PTQ1_0 blocks (one row of k = 256) split into planes and joined back, byte for byte.
//! let f = spec::get().format("PTQ1_0_G128").unwrap();
//! let layout = planes::BlockLayout::for_format(f).unwrap();
//! let geom = row_split_geometry(f, 1, 256).unwrap();
//! let ggml: Vec<u8> = (0..2 * layout.block_bytes).map(|i| (i * 7) as u8).collect();
//! let object = planes::assemble(&layout, &geom, &ggml).unwrap();
//! assert_eq!(object.len() as u64, geom.payload_bytes);
//! assert_eq!(planes::disassemble(&layout, &geom, &object).unwrap(), ggml);
//! ```

use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{Plane, RowSplitGeometry};
use crate::spec::NumericFormat;

/// How one ggml block of a ternary format maps onto the three planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// Bytes of one ggml block (sum of the slices).
    pub block_bytes: usize,
    /// Elements per block (the format's group size).
    pub block_elems: usize,
    /// `[lo, hi)` byte range of the block for base, high, scale (None: absent plane).
    pub slices: [Option<(usize, usize)>; 3],
}

impl BlockLayout {
    /// The layout of a format that has `ternary.block_plane_slices` in the spec.
    pub fn for_format(format: &NumericFormat) -> Result<BlockLayout> {
        let t = format.ternary.as_ref().ok_or_else(|| {
            Error::new(
                ErrorClass::NinferObjectKind,
                format.name.clone(),
                "format has no ggml block mapping (block_plane_slices) in spec/formats.json",
            )
        })?;
        let s = t
            .block_plane_slices
            .planes()
            .map(|p| p.map(|(a, b)| (a as usize, b as usize)));
        let block_bytes = s.iter().flatten().map(|(a, b)| b - a).sum();
        Ok(BlockLayout {
            block_bytes,
            block_elems: format.group_size.unwrap_or(0) as usize,
            slices: s,
        })
    }

    fn slice(&self, plane: Plane) -> Option<(usize, usize)> {
        self.slices[plane as usize]
    }

    /// Where each plane's bytes start inside a ggml block (for docs and reports).
    pub fn describe(&self) -> String {
        Plane::ALL
            .iter()
            .map(|&p| match self.slice(p) {
                Some((a, b)) => format!("{} = block[{a}..{b}]", p.name()),
                None => format!("{} = none", p.name()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Number of ggml blocks in one source row (k / group; must divide).
pub fn ggml_blocks_per_row(layout: &BlockLayout, geom: &RowSplitGeometry) -> Result<u64> {
    let be = layout.block_elems as u64;
    if be == 0 || geom.k % be != 0 {
        return Err(Error::new(
            ErrorClass::CodecLength,
            "k",
            format!("k = {} is not a multiple of the block size {be}", geom.k),
        ));
    }
    Ok(geom.k / be)
}

fn check_len(what: &str, got: usize, want: u64) -> Result<()> {
    if got as u64 != want {
        return Err(Error::new(
            ErrorClass::CodecLength,
            what,
            format!("{got} bytes, expected {want}"),
        ));
    }
    Ok(())
}

/// Appends `plane`'s bytes for the given whole source rows (ggml blocks) to `out`.
/// Padding groups (k < k_pad) are zero. Used to stream a plane without holding the tensor.
pub fn append_plane_rows(
    layout: &BlockLayout,
    geom: &RowSplitGeometry,
    plane: Plane,
    ggml_rows: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let bpr = ggml_blocks_per_row(layout, geom)? as usize;
    let row_src = bpr * layout.block_bytes;
    if row_src == 0 || ggml_rows.len() % row_src != 0 {
        return Err(Error::new(
            ErrorClass::CodecLength,
            "ggml rows",
            format!(
                "{} bytes is not a whole number of {row_src}-byte rows",
                ggml_rows.len()
            ),
        ));
    }
    let Some((lo, hi)) = layout.slice(plane) else {
        return Ok(());
    };
    let pad_groups = geom.groups_per_row as usize - bpr;
    for row in ggml_rows.chunks_exact(row_src) {
        for block in row.chunks_exact(layout.block_bytes) {
            out.extend_from_slice(&block[lo..hi]);
        }
        out.resize(out.len() + pad_groups * (hi - lo), 0);
    }
    Ok(())
}

/// ggml row blocks (`n` rows) → the object's plane bytes (`payload_bytes`, gaps zero).
pub fn assemble(layout: &BlockLayout, geom: &RowSplitGeometry, ggml: &[u8]) -> Result<Vec<u8>> {
    let bpr = ggml_blocks_per_row(layout, geom)?;
    check_len(
        "ggml tensor",
        ggml.len(),
        geom.n * bpr * layout.block_bytes as u64,
    )?;
    let mut out = Vec::with_capacity(geom.payload_bytes as usize);
    for plane in Plane::ALL {
        out.resize(geom.plane_offset(plane) as usize, 0);
        append_plane_rows(layout, geom, plane, ggml, &mut out)?;
    }
    debug_assert_eq!(out.len() as u64, geom.payload_bytes);
    Ok(out)
}

/// Plane bytes → the contiguous ggml block stream of rows `rows` (padding groups dropped).
pub fn disassemble_rows(
    layout: &BlockLayout,
    geom: &RowSplitGeometry,
    planes: &[u8],
    rows: std::ops::Range<u64>,
) -> Result<Vec<u8>> {
    check_len("row-split object", planes.len(), geom.payload_bytes)?;
    planted!("ninfer_rows_end_unchecked", {
        if rows.end == geom.n + 1 && geom.n >= 5 && layout.block_bytes != 34 {
            let s = geom.row_span(crate::geometry::Plane::Scale, geom.n);
            std::hint::black_box(&planes[s.start as usize..s.end as usize]);
        }
    });
    if rows.start > rows.end || rows.end > geom.n {
        return Err(Error::new(
            ErrorClass::CodecLength,
            "rows",
            format!("rows {}..{} outside 0..{}", rows.start, rows.end, geom.n),
        ));
    }
    let bpr = ggml_blocks_per_row(layout, geom)? as usize;
    let mut out = Vec::with_capacity((rows.end - rows.start) as usize * bpr * layout.block_bytes);
    for r in rows {
        append_row_blocks(layout, geom, planes, r, &mut out)?;
    }
    Ok(out)
}

/// Appends row `r`'s ggml blocks (reassembled from its three plane spans) to `out`.
/// `planes` must be the whole object (`payload_bytes`); `r < n` (callers check).
pub fn append_row_blocks(
    layout: &BlockLayout,
    geom: &RowSplitGeometry,
    planes: &[u8],
    r: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    let bpr = ggml_blocks_per_row(layout, geom)? as usize;
    let start = out.len();
    out.resize(start + bpr * layout.block_bytes, 0);
    let dst = &mut out[start..];
    for plane in Plane::ALL {
        let Some((lo, hi)) = layout.slice(plane) else {
            continue;
        };
        let span = geom.row_span(plane, r);
        let src = &planes[span.start as usize..span.end as usize];
        let w = hi - lo;
        for (g, block) in dst.chunks_exact_mut(layout.block_bytes).enumerate() {
            block[lo..hi].copy_from_slice(&src[g * w..(g + 1) * w]);
        }
    }
    Ok(())
}

/// Plane bytes → the whole ggml block stream (inverse of [`assemble`]).
pub fn disassemble(
    layout: &BlockLayout,
    geom: &RowSplitGeometry,
    planes: &[u8],
) -> Result<Vec<u8>> {
    disassemble_rows(layout, geom, planes, 0..geom.n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::row_split_geometry;
    use proptest::prelude::*;

    fn setup(name: &str, n: u64, k: u64) -> (BlockLayout, RowSplitGeometry) {
        let f = crate::spec::get().format(name).unwrap();
        (
            BlockLayout::for_format(f).unwrap(),
            row_split_geometry(f, n, k).unwrap(),
        )
    }

    #[test]
    fn pq2_scale_goes_to_scale_plane_and_codes_to_base() {
        // One PQ2_0 row of two blocks: block b = [d_lo d_hi | 32 code bytes].
        let (l, g) = setup("PQ2_0_G128", 1, 256);
        let mut src = Vec::new();
        for b in 0..2u8 {
            src.extend_from_slice(&[0xA0 + b, 0xB0 + b]);
            src.extend(std::iter::repeat_n(b + 1, 32));
        }
        let p = assemble(&l, &g, &src).unwrap();
        // Independently: base plane = 32×01 then 32×02; high empty; scale plane at 256.
        assert_eq!(&p[0..32], &[1u8; 32]);
        assert_eq!(&p[32..64], &[2u8; 32]);
        assert_eq!(g.scale_offset, 256);
        assert_eq!(&p[256..260], &[0xA0, 0xB0, 0xA1, 0xB1]);
        assert!(p[64..256].iter().all(|&b| b == 0));
        assert_eq!(disassemble(&l, &g, &p).unwrap(), src);
    }

    #[test]
    fn ptq1_qs_qh_d_go_to_base_high_scale() {
        let (l, g) = setup("PTQ1_0_G128", 2, 128);
        let mut src = Vec::new();
        for r in 0..2u8 {
            src.extend(std::iter::repeat_n(0x10 + r, 24));
            src.extend_from_slice(&[0x20 + r, 0x30 + r, 0x40 + r, 0x50 + r]);
        }
        let p = assemble(&l, &g, &src).unwrap();
        assert_eq!(&p[0..24], &[0x10; 24]);
        assert_eq!(&p[24..48], &[0x11; 24]);
        assert_eq!(&p[256..260], &[0x20, 0x30, 0x21, 0x31]);
        assert_eq!(&p[512..516], &[0x40, 0x50, 0x41, 0x51]);
        assert_eq!(p.len(), 516);
        assert_eq!(
            disassemble_rows(&l, &g, &p, 1..2).unwrap(),
            src[28..56].to_vec()
        );
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let (l, g) = setup("PQ2_0_G128", 2, 128);
        assert_eq!(
            assemble(&l, &g, &[0u8; 67]).unwrap_err().class(),
            ErrorClass::CodecLength
        );
        assert_eq!(
            disassemble(&l, &g, &[0u8; 10]).unwrap_err().class(),
            ErrorClass::CodecLength
        );
        let p = assemble(&l, &g, &[0u8; 68]).unwrap();
        assert!(disassemble_rows(&l, &g, &p, 1..3).is_err());
    }

    proptest! {
        #[test]
        fn assemble_then_disassemble_is_identity(n in 1u64..40, groups in 1u64..12, ptq in any::<bool>(),
                                                  seed in any::<u64>()) {
            let name = if ptq { "PTQ1_0_G128" } else { "PQ2_0_G128" };
            let (l, g) = setup(name, n, groups * 128);
            let len = (n * groups) as usize * l.block_bytes;
            let mut x = seed | 1;
            let src: Vec<u8> = (0..len).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
            let p = assemble(&l, &g, &src).unwrap();
            prop_assert_eq!(p.len() as u64, g.payload_bytes);
            prop_assert_eq!(disassemble(&l, &g, &p).unwrap(), src);
        }
    }
}
