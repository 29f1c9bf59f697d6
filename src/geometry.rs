//! Row-split geometry (`row-split-k128-v1`): where the base, high and scale planes of an
//! `[n, k]` grouped tensor live, as 16 numbers. Every number comes from the format's entry in
//! `spec/formats.json` and the container constants; nothing here knows about PQ2_0 or 5120.
//!
//! ```
//! use ninfer_ternary::{geometry::row_split_geometry, spec};
//!
//! // Where the planes of a [3, 256] PQ2_0 tensor live in its .ninfer object.
//! let f = spec::get().format("PQ2_0_G128").unwrap();
//! let g = row_split_geometry(f, 3, 256).unwrap();
//! assert_eq!((g.k_pad, g.groups_per_row), (256, 2));
//! assert_eq!(g.payload_bytes, g.scale_offset + g.scale_bytes);
//! ```

use crate::error::{align_up, checked_add, checked_mul, Error, ErrorClass, Result};
use crate::spec::{FormatKind, NumericFormat};
use serde::Serialize;

/// The 16 fields, in the order of `spec/geometry.json` `fields`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RowSplitGeometry {
    /// Rows of the tensor.
    pub n: u64,
    /// Logical elements per row.
    pub k: u64,
    /// `k` rounded up to the container's K alignment (a multiple of the group size).
    pub k_pad: u64,
    /// Groups per row (`k_pad / group size`).
    pub groups_per_row: u64,
    /// Base-plane bytes of one group.
    pub base_bytes_per_group: u64,
    /// High-plane bytes of one group (0 for formats without one).
    pub high_bytes_per_group: u64,
    /// Base-plane bytes of one row.
    pub base_row_bytes: u64,
    /// High-plane bytes of one row.
    pub high_row_bytes: u64,
    /// Scale-plane bytes of one row.
    pub scale_row_bytes: u64,
    /// Offset of the base plane in the object payload.
    pub base_offset: u64,
    /// Size of the base plane.
    pub base_bytes: u64,
    /// Offset of the high plane (after the base plane, at the plane alignment).
    pub high_offset: u64,
    /// Size of the high plane.
    pub high_bytes: u64,
    /// Offset of the scale plane (after the high plane, at the plane alignment).
    pub scale_offset: u64,
    /// Size of the scale plane.
    pub scale_bytes: u64,
    /// Total object payload size, the three planes with their alignment padding.
    pub payload_bytes: u64,
}

/// One of the three planes of a row-split tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Plane {
    /// The low bits of every element.
    Base,
    /// The high bits of every element (empty for one-bit-plane formats).
    High,
    /// The per-group scales.
    Scale,
}

impl Plane {
    /// The planes in payload order.
    pub const ALL: [Plane; 3] = [Plane::Base, Plane::High, Plane::Scale];

    /// The plane's name as the spec and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Plane::Base => "base",
            Plane::High => "high",
            Plane::Scale => "scale",
        }
    }
}

impl RowSplitGeometry {
    /// The 16 values in spec field order (for tables and the spec agreement test).
    pub fn fields(&self) -> [(&'static str, u64); 16] {
        [
            ("n", self.n),
            ("k", self.k),
            ("k_pad", self.k_pad),
            ("groups_per_row", self.groups_per_row),
            ("base_bytes_per_group", self.base_bytes_per_group),
            ("high_bytes_per_group", self.high_bytes_per_group),
            ("base_row_bytes", self.base_row_bytes),
            ("high_row_bytes", self.high_row_bytes),
            ("scale_row_bytes", self.scale_row_bytes),
            ("base_offset", self.base_offset),
            ("base_bytes", self.base_bytes),
            ("high_offset", self.high_offset),
            ("high_bytes", self.high_bytes),
            ("scale_offset", self.scale_offset),
            ("scale_bytes", self.scale_bytes),
            ("payload_bytes", self.payload_bytes),
        ]
    }

    /// Bytes per row and per group in `plane`.
    pub fn row_bytes(&self, plane: Plane) -> u64 {
        match plane {
            Plane::Base => self.base_row_bytes,
            Plane::High => self.high_row_bytes,
            Plane::Scale => self.scale_row_bytes,
        }
    }

    /// Start of `plane` relative to the object.
    pub fn plane_offset(&self, plane: Plane) -> u64 {
        match plane {
            Plane::Base => self.base_offset,
            Plane::High => self.high_offset,
            Plane::Scale => self.scale_offset,
        }
    }

    /// Byte length of `plane`.
    pub fn plane_bytes(&self, plane: Plane) -> u64 {
        match plane {
            Plane::Base => self.base_bytes,
            Plane::High => self.high_bytes,
            Plane::Scale => self.scale_bytes,
        }
    }

    /// Object-relative byte range of row `r` in `plane` (a row is three such spans).
    pub fn row_span(&self, plane: Plane, r: u64) -> std::ops::Range<u64> {
        let rb = self.row_bytes(plane);
        let start = self.plane_offset(plane) + r * rb;
        start..start + rb
    }

    /// Bytes per group in `plane` (scale: 2).
    pub fn group_bytes(&self, plane: Plane) -> u64 {
        match plane {
            Plane::Base => self.base_bytes_per_group,
            Plane::High => self.high_bytes_per_group,
            Plane::Scale => self.scale_row_bytes / self.groups_per_row,
        }
    }
}

/// `row_split_geometry(format, [n, k])` with checked arithmetic.
pub fn row_split_geometry(format: &NumericFormat, n: u64, k: u64) -> Result<RowSplitGeometry> {
    let c = &crate::spec::get().container;
    row_split_geometry_with(format, n, k, c.k_alignment, c.plane_alignment)
}

/// As [`row_split_geometry`], with explicit container constants (tests vary them).
pub fn row_split_geometry_with(
    format: &NumericFormat,
    n: u64,
    k: u64,
    k_alignment: u64,
    plane_alignment: u64,
) -> Result<RowSplitGeometry> {
    const OVF: ErrorClass = ErrorClass::NinferArithOverflow;
    let field = format!("{}[{n}, {k}]", format.name);
    if format.kind != FormatKind::Grouped {
        return Err(Error::new(
            ErrorClass::NinferDirLayout,
            field,
            "row-split-k128-v1 requires a grouped quantized format",
        ));
    }
    if n == 0 || k == 0 {
        return Err(Error::new(
            ErrorClass::NinferDirShape,
            field,
            "row-split-k128-v1 requires a positive rank-two shape",
        ));
    }
    let (Some(group), Some(base_g), Some(high_g), Some(scale_g)) = (
        format.group_size,
        format.base_bytes_per_group,
        format.high_bytes_per_group,
        format.scale_bytes_per_group,
    ) else {
        return Err(Error::new(
            ErrorClass::NinferDirFormat,
            field,
            "grouped format lacks group geometry in spec/formats.json",
        ));
    };
    if group == 0 || k_alignment % group != 0 {
        return Err(Error::new(
            ErrorClass::NinferDirFormat,
            field,
            format!("group size {group} must divide the K alignment {k_alignment}"),
        ));
    }
    let k_pad = align_up(k, k_alignment, OVF, "padded K")?;
    let groups_per_row = k_pad / group;
    let base_row_bytes = checked_mul(groups_per_row, base_g, OVF, "base row bytes")?;
    let high_row_bytes = checked_mul(groups_per_row, high_g, OVF, "high row bytes")?;
    let scale_row_bytes = checked_mul(groups_per_row, scale_g, OVF, "scale row bytes")?;
    let base_bytes = checked_mul(n, base_row_bytes, OVF, "base plane bytes")?;
    let high_offset = align_up(base_bytes, plane_alignment, OVF, "high plane offset")?;
    let high_bytes = checked_mul(n, high_row_bytes, OVF, "high plane bytes")?;
    let scale_offset = checked_add(
        high_offset,
        align_up(high_bytes, plane_alignment, OVF, "scale plane alignment")?,
        OVF,
        "scale plane offset",
    )?;
    let scale_bytes = checked_mul(n, scale_row_bytes, OVF, "scale plane bytes")?;
    let payload_bytes = checked_add(scale_offset, scale_bytes, OVF, "tensor encoded size")?;
    Ok(RowSplitGeometry {
        n,
        k,
        k_pad,
        groups_per_row,
        base_bytes_per_group: base_g,
        high_bytes_per_group: high_g,
        base_row_bytes,
        high_row_bytes,
        scale_row_bytes,
        base_offset: 0,
        base_bytes,
        high_offset,
        high_bytes,
        scale_offset,
        scale_bytes,
        payload_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fmt(name: &str) -> NumericFormat {
        crate::spec::get().format(name).unwrap().clone()
    }

    #[test]
    fn every_worked_example_in_the_spec_is_reproduced() {
        let spec = crate::spec::get();
        assert!(spec.geometry.examples.len() >= 19);
        for ex in &spec.geometry.examples {
            let g = row_split_geometry(&fmt(&ex.format), ex.shape[0], ex.shape[1]).unwrap();
            if let Some(p) = ex.payload_bytes {
                assert_eq!(g.payload_bytes, p, "{} {:?}", ex.format, ex.shape);
            }
            if let Some(h) = ex.high_offset {
                assert_eq!(g.high_offset, h, "{} {:?} high_offset", ex.format, ex.shape);
            }
            if let Some(s) = ex.scale_offset {
                assert_eq!(
                    g.scale_offset, s,
                    "{} {:?} scale_offset",
                    ex.format, ex.shape
                );
            }
        }
        let names: Vec<&str> = g_fields();
        assert_eq!(
            names,
            spec.geometry
                .fields
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
    }

    fn g_fields() -> Vec<&'static str> {
        let g = row_split_geometry(&fmt("PQ2_0_G128"), 1, 128).unwrap();
        g.fields().iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn scale_plane_start_is_rows_groups_block_bytes_for_real_shapes() {
        // spec/geometry.md#geometry-examples: PQ2_0 scale plane at rows*groups*32, PTQ1_0 at rows*groups*26
        // (base + high, no padding because real Bonsai shapes are 256-aligned).
        let p = row_split_geometry(&fmt("PQ2_0_G128"), 5120, 6144).unwrap();
        assert_eq!(p.scale_offset, 5120 * 48 * 32);
        assert_eq!(
            p.high_offset, p.scale_offset,
            "PQ2_0 has an empty high plane"
        );
        let t = row_split_geometry(&fmt("PTQ1_0_G128"), 5120, 6144).unwrap();
        assert_eq!(t.scale_offset, 5120 * 48 * 26);
    }

    #[test]
    fn editing_a_format_in_the_table_changes_geometry_without_code_edits() {
        // A hypothetical family member with other group/base/high numbers: only data changes.
        let mut f = fmt("PTQ1_0_G128");
        f.group_size = Some(64);
        f.base_bytes_per_group = Some(12);
        f.high_bytes_per_group = Some(1);
        let g = row_split_geometry(&f, 3, 256).unwrap();
        assert_eq!(g.groups_per_row, 4);
        assert_eq!(g.base_row_bytes, 48);
        assert_eq!(g.high_row_bytes, 4);
        assert_eq!(g.high_offset, 256);
        assert_eq!(g.scale_offset, 512);
        assert_eq!(g.payload_bytes, 512 + 3 * 8);
    }

    #[test]
    fn refuses_non_grouped_formats_zero_dims_and_overflow() {
        assert_eq!(
            row_split_geometry(&fmt("BF16"), 2, 2).unwrap_err().class(),
            ErrorClass::NinferDirLayout
        );
        assert_eq!(
            row_split_geometry(&fmt("PQ2_0_G128"), 0, 128)
                .unwrap_err()
                .class(),
            ErrorClass::NinferDirShape
        );
        assert_eq!(
            row_split_geometry(&fmt("PQ2_0_G128"), u64::MAX / 2, 1 << 20)
                .unwrap_err()
                .class(),
            ErrorClass::NinferArithOverflow
        );
        assert_eq!(
            row_split_geometry(&fmt("PQ2_0_G128"), 1, u64::MAX)
                .unwrap_err()
                .class(),
            ErrorClass::NinferArithOverflow
        );
    }

    proptest! {
        #[test]
        fn planes_are_aligned_disjoint_ordered_and_sized(n in 1u64..5000, k in 1u64..20000,
                                                          which in 0usize..6) {
            let names = ["PQ2_0_G128", "PTQ1_0_G128", "Q4G64_F16S", "Q5G64_F16S", "Q6G64_F16S", "W8G32_F16S"];
            let f = fmt(names[which]);
            let g = row_split_geometry(&f, n, k).unwrap();
            prop_assert!(g.k_pad >= k && g.k_pad % 128 == 0 && g.k_pad - k < 128);
            prop_assert_eq!(g.groups_per_row * f.group_size.unwrap(), g.k_pad);
            prop_assert_eq!(g.high_offset % 256, 0);
            prop_assert_eq!(g.scale_offset % 256, 0);
            prop_assert!(g.base_offset + g.base_bytes <= g.high_offset);
            prop_assert!(g.high_offset + g.high_bytes <= g.scale_offset);
            prop_assert!(g.high_offset - g.base_bytes < 256);
            prop_assert_eq!(g.payload_bytes, g.scale_offset + g.scale_bytes);
            prop_assert_eq!(g.scale_bytes, n * g.groups_per_row * 2);
            // Rows tile each plane without gaps.
            for plane in Plane::ALL {
                let last = g.row_span(plane, n - 1);
                prop_assert_eq!(last.end, g.plane_offset(plane) + g.plane_bytes(plane));
            }
        }
    }
}
