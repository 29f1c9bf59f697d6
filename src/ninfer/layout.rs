//! `encoded_size(layout, format, shape)` for every layout of `spec/formats.json`.

use crate::error::{align_up, checked_add, checked_mul, enforced, Error, ErrorClass, Result};
use crate::geometry::row_split_geometry;
use crate::spec::{FormatKind, Layout, NumericFormat};

const OVF: ErrorClass = ErrorClass::NinferArithOverflow;

/// Checks that `layout` accepts `format` (by the format's kind).
pub fn check_layout_accepts(layout: &Layout, format: &NumericFormat, field: &str) -> Result<()> {
    if !layout.accepts_kinds.contains(&format.kind) && enforced(ErrorClass::NinferDirLayout) {
        return Err(Error::new(
            ErrorClass::NinferDirLayout,
            field,
            format!(
                "layout {} does not accept format {} ({:?})",
                layout.name, format.name, format.kind
            ),
        ));
    }
    Ok(())
}

fn rank2(shape: &[u64], layout: &Layout, field: &str) -> Result<(u64, u64)> {
    match shape {
        [n, k] if *n > 0 && *k > 0 => Ok((*n, *k)),
        _ => Err(Error::new(
            ErrorClass::NinferDirShape,
            field,
            format!(
                "{} requires a positive rank-two shape, got {shape:?}",
                layout.name
            ),
        )),
    }
}

/// The exact byte size an object of this (layout, format, shape) must have.
pub fn encoded_size(
    layout: &Layout,
    format: &NumericFormat,
    shape: &[u64],
    field: &str,
) -> Result<u64> {
    check_layout_accepts(layout, format, field)?;
    match format.kind {
        FormatKind::Direct => direct_size(layout, format, shape, field),
        FormatKind::Grouped => {
            let (n, k) = rank2(shape, layout, field)?;
            Ok(row_split_geometry(format, n, k)
                .map_err(|e| e.with_field(field))?
                .payload_bytes)
        }
        FormatKind::Blockscale => blockscale_size(layout, format, shape, field),
        FormatKind::RowScaled => row_scaled_size(layout, format, shape, field),
    }
}

/// A constant of `format` the size formula needs, or `ninfer.dir_format` when the table lacks it.
fn need(v: Option<u64>, what: &str, format: &NumericFormat, field: &str) -> Result<u64> {
    v.ok_or_else(|| {
        Error::new(
            ErrorClass::NinferDirFormat,
            field,
            format!("{} lacks {what} in spec", format.name),
        )
    })
}

/// `contiguous-le-v1`: rank 0..=max_rank, positive dimensions, `prod(shape) * word_bytes`.
fn direct_size(layout: &Layout, format: &NumericFormat, shape: &[u64], field: &str) -> Result<u64> {
    let max_rank = layout.max_rank.unwrap_or(16);
    if shape.len() > max_rank && enforced(ErrorClass::NinferDirShape) {
        return Err(Error::new(
            ErrorClass::NinferDirShape,
            field,
            format!(
                "{} supports rank 0 through {max_rank}, got rank {}",
                layout.name,
                shape.len()
            ),
        ));
    }
    let mut elems = 1u64;
    for (i, &d) in shape.iter().enumerate() {
        if d == 0 && enforced(ErrorClass::NinferDirShape) {
            return Err(Error::new(
                ErrorClass::NinferDirShape,
                format!("{field}.shape[{i}]"),
                "tensor shape dimensions must be positive",
            ));
        }
        elems = checked_mul(elems, d, OVF, "tensor element count")?;
    }
    checked_mul(
        elems,
        need(format.word_bytes, "word_bytes", format, field)?,
        OVF,
        "tensor encoded size",
    )
}

/// `blockscale-k16-m128x4-v1`: codes, the 256-aligned scale plane, then the FP32 divisor.
fn blockscale_size(
    layout: &Layout,
    format: &NumericFormat,
    shape: &[u64],
    field: &str,
) -> Result<u64> {
    let (n, k) = rank2(shape, layout, field)?;
    let (rm, km) = (
        need(format.row_multiple, "row_multiple", format, field)?,
        need(format.k_multiple, "k_multiple", format, field)?,
    );
    if (n % rm != 0 || k % km != 0) && enforced(ErrorClass::NinferDirShape) {
        return Err(Error::new(
            ErrorClass::NinferDirShape,
            field,
            format!(
                "{} requires N divisible by {rm} and K divisible by {km}, got [{n}, {k}]",
                layout.name
            ),
        ));
    }
    let elems = checked_mul(n, k, OVF, "NVFP4 element count")?;
    let scale_offset = align_up(elems / 2, 256, OVF, "NVFP4 scale plane offset")?;
    let scales = elems / need(format.block_elems, "block_elems", format, field)?;
    let end = checked_add(scale_offset, scales, OVF, "NVFP4 weight divisor offset")?;
    checked_add(
        end,
        need(format.divisor_bytes, "divisor_bytes", format, field)?,
        OVF,
        "NVFP4 tensor encoded size",
    )
}

/// `row-scale-v1`: codes, then one scale per row at the 256-aligned scale offset.
fn row_scaled_size(
    layout: &Layout,
    format: &NumericFormat,
    shape: &[u64],
    field: &str,
) -> Result<u64> {
    let (n, k) = rank2(shape, layout, field)?;
    let codes = checked_mul(
        checked_mul(n, k, OVF, "FP8 element count")?,
        need(format.code_bytes, "code_bytes", format, field)?,
        OVF,
        "FP8 code bytes",
    )?;
    let scale_offset = align_up(codes, 256, OVF, "FP8 scale plane offset")?;
    let scales = checked_mul(
        n,
        need(
            format.scale_bytes_per_row,
            "scale_bytes_per_row",
            format,
            field,
        )?,
        OVF,
        "FP8 scale plane bytes",
    )?;
    checked_add(scale_offset, scales, OVF, "FP8 tensor encoded size")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::LayoutId;

    #[test]
    fn every_encoded_size_example_in_the_spec_is_reproduced() {
        let s = crate::spec::get();
        for ex in &s.formats.encoded_size_examples {
            let l = s.layout(ex.layout);
            let f = s.format(&ex.format).unwrap();
            assert_eq!(
                encoded_size(l, f, &ex.shape, "x").unwrap(),
                ex.bytes,
                "{ex:?}"
            );
        }
    }

    #[test]
    fn every_layout_accepts_some_format_and_refuses_the_others() {
        let s = crate::spec::get();
        for l in &s.formats.layouts {
            let accepted = s
                .formats
                .formats
                .iter()
                .filter(|f| l.accepts_kinds.contains(&f.kind))
                .count();
            assert!(accepted > 0, "{} accepts nothing", l.name);
            for f in &s.formats.formats {
                if !l.accepts_kinds.contains(&f.kind) {
                    let e = encoded_size(l, f, &[128, 128], "x").unwrap_err();
                    assert_eq!(e.class(), ErrorClass::NinferDirLayout);
                }
            }
        }
    }

    #[test]
    fn shape_rules_per_layout() {
        let s = crate::spec::get();
        let c = s.layout(LayoutId::ContiguousLeV1);
        let bf16 = s.format("BF16").unwrap();
        assert_eq!(encoded_size(c, bf16, &[], "x").unwrap(), 2);
        assert_eq!(
            encoded_size(c, bf16, &[1; 17], "x").unwrap_err().class(),
            ErrorClass::NinferDirShape
        );
        assert_eq!(
            encoded_size(c, bf16, &[2, 0], "x").unwrap_err().class(),
            ErrorClass::NinferDirShape
        );
        assert_eq!(
            encoded_size(c, bf16, &[u64::MAX, 2], "x")
                .unwrap_err()
                .class(),
            ErrorClass::NinferArithOverflow
        );
        let b = s.layout(LayoutId::BlockscaleK16M128x4V1);
        let nv = s.format("NVFP4").unwrap();
        assert_eq!(
            encoded_size(b, nv, &[127, 64], "x").unwrap_err().class(),
            ErrorClass::NinferDirShape
        );
        let r = s.layout(LayoutId::RowSplitK128V1);
        let pq = s.format("PQ2_0_G128").unwrap();
        assert_eq!(
            encoded_size(r, pq, &[5120], "x").unwrap_err().class(),
            ErrorClass::NinferDirShape
        );
    }
}
