//! Row and head permutations of the GGUF → ninfer mapping. Every function here is a
//! GATHER: `out[i] = in[f(i)]`. The numbers (48 heads tiled 3×16, 128-row heads, 256-row
//! attention blocks) come from the model profile; `spec/permutations.json` documents them.
//!
//! ```
//! use ninfer_ternary::perm::{perm_rows, repeated_and_missing, HeadTiling};
//!
//! // Bonsai's 48 value heads (3 tiles of 16) at head_dim 2: a bijection of the 96 rows.
//! let order = perm_rows(HeadTiling::BONSAI, 2, 96, "v").unwrap();
//! assert_eq!(repeated_and_missing(&order, 96), (0, 0));
//! assert_eq!(&order[..4], &[0, 1, 32, 33]); // target head 1 <- source head 16
//! // A row count that is not whole heads is refused with its class.
//! assert!(perm_rows(HeadTiling::BONSAI, 2, 95, "v").is_err());
//! ```

use crate::error::{Error, ErrorClass, Result};

/// The head tiling is spec vocabulary (profiles name it); re-exported for the gathers here.
pub use crate::spec::HeadTiling;

/// `perm_row(i) = perm48(i / head_dim) * head_dim + i % head_dim` over `heads * head_dim` rows.
pub fn perm_row(tiling: HeadTiling, head_dim: usize, i: usize) -> usize {
    tiling.gather(i / head_dim) * head_dim + i % head_dim
}

/// Source row for each target row of a head-granular permutation of `rows` rows.
pub fn perm_rows(
    tiling: HeadTiling,
    head_dim: usize,
    rows: usize,
    what: &str,
) -> Result<Vec<usize>> {
    if head_dim == 0 || rows != tiling.heads() * head_dim {
        return Err(Error::new(
            ErrorClass::PermShape,
            what,
            format!("{rows} rows is not {} heads x {head_dim}", tiling.heads()),
        ));
    }
    Ok((0..rows).map(|i| perm_row(tiling, head_dim, i)).collect())
}

/// The known-bad variant (trap T-4): perm48's formula applied to row indices directly.
/// Not a bijection for more than 48 rows; kept for negative controls.
pub fn perm48_on_rows_bug(tiling: HeadTiling, rows: usize) -> Vec<usize> {
    (0..rows).map(|i| tiling.gather(i) % rows).collect()
}

/// Rows of the attn_q interleave: even `block_rows` blocks are query heads, odd blocks are
/// output-gate heads. Returns (query source rows, gate source rows), each `n/2` long.
pub fn attn_q_deinterleave(
    n: usize,
    block_rows: usize,
    name: &str,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let pair = 2 * block_rows;
    if block_rows == 0 || n % pair != 0 {
        return Err(Error::new(
            ErrorClass::PermShape,
            name,
            format!("{name}: {n} rows is not a multiple of {pair}"),
        ));
    }
    let heads = n / pair;
    let pick = |parity: usize| -> Vec<usize> {
        (0..heads)
            .flat_map(|h| (0..block_rows).map(move |r| (2 * h + parity) * block_rows + r))
            .collect()
    };
    Ok((pick(0), pick(1)))
}

/// Applies a row gather to `rows` rows of `row_bytes` each.
pub fn gather_rows(src: &[u8], row_bytes: usize, order: &[usize]) -> Vec<u8> {
    let mut out = Vec::with_capacity(order.len() * row_bytes);
    for &s in order {
        out.extend_from_slice(&src[s * row_bytes..(s + 1) * row_bytes]);
    }
    out
}

/// Multiset comparison of a gather order against the identity set `0..n`:
/// (rows repeated beyond their first use, source rows never used).
pub fn repeated_and_missing(order: &[usize], n: usize) -> (usize, usize) {
    let mut seen = vec![0u32; n];
    for &s in order {
        if s < n {
            seen[s] += 1;
        }
    }
    let repeated = seen
        .iter()
        .filter(|&&c| c > 1)
        .map(|&c| c as usize - 1)
        .sum::<usize>()
        + order.iter().filter(|&&s| s >= n).count();
    let missing = seen.iter().filter(|&&c| c == 0).count();
    (repeated, missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn perm48_matches_the_spec_checks_and_explicit_lists() {
        let t = HeadTiling::BONSAI;
        let spec = &crate::spec::get().permutations.perm48;
        assert_eq!((t.tile as u64, t.group as u64), (spec.tile, spec.group));
        assert_eq!(spec.heads, spec.tile * spec.group);
        for c in &spec.checks {
            assert_eq!(t.gather(c.i as usize), c.perm as usize);
        }
        // Independent construction: reshape(3,16).transpose → grouped order lists, for each
        // key head g, the tiled heads g, 16+g, 32+g.
        let mut expected = Vec::new();
        for g in 0..16 {
            for t in 0..3 {
                expected.push(t * 16 + g);
            }
        }
        assert_eq!(t.head_order(), expected);
    }

    #[test]
    fn the_row_trap_loses_exactly_4064_rows_on_6144() {
        let t = HeadTiling::BONSAI;
        let bad = perm48_on_rows_bug(t, 6144);
        assert_eq!(bad[1], 16);
        assert_eq!(bad[48], 16, "perm48(1) == perm48(48)");
        let spec = &crate::spec::get().permutations.perm_row.trap_counts;
        assert_eq!(spec.rows, 6144);
        let (rep, miss) = repeated_and_missing(&bad, 6144);
        assert_eq!(rep as u64, spec.repeated);
        assert_eq!(miss as u64, spec.missing);
        let good = perm_rows(t, 128, 6144, "value").unwrap();
        assert_eq!(repeated_and_missing(&good, 6144), (0, 0));
    }

    #[test]
    fn attn_q_deinterleave_by_explicit_rows() {
        let (q, g) = attn_q_deinterleave(1024, 256, "attn_q").unwrap();
        let q_expected: Vec<usize> = (0..256).chain(512..768).collect();
        let g_expected: Vec<usize> = (256..512).chain(768..1024).collect();
        assert_eq!(q, q_expected);
        assert_eq!(g, g_expected);
        let e = attn_q_deinterleave(768, 256, "blk.3.attn_q.weight").unwrap_err();
        assert_eq!(
            e.detail(),
            "blk.3.attn_q.weight: 768 rows is not a multiple of 512"
        );
    }

    #[test]
    fn gather_vs_scatter_direction_differs() {
        // The scatter formula 3*(i%16)+i/16 used as a gather is the inverse, not the same map.
        let t = HeadTiling::BONSAI;
        let scatter: Vec<usize> = (0..48).map(|i| 3 * (i % 16) + i / 16).collect();
        assert_ne!(scatter, t.head_order());
        for i in 0..48 {
            assert_eq!(scatter[t.gather(i)], i);
        }
    }

    proptest! {
        #[test]
        fn head_perms_are_bijections_with_inverses(tile in 1usize..6, group in 1usize..20, hd in 1usize..9) {
            let t = HeadTiling { tile, group };
            let order = perm_rows(t, hd, t.heads() * hd, "x").unwrap();
            prop_assert_eq!(repeated_and_missing(&order, order.len()), (0, 0));
            for j in 0..t.heads() {
                prop_assert_eq!(t.gather(t.inverse(j)), j);
                prop_assert_eq!(t.inverse(t.gather(j)), j);
            }
        }

        #[test]
        fn deinterleave_partitions_rows(heads in 1usize..30, block in 1usize..40) {
            let n = heads * 2 * block;
            let (q, g) = attn_q_deinterleave(n, block, "q").unwrap();
            let all: Vec<usize> = q.iter().chain(g.iter()).copied().collect();
            prop_assert_eq!(repeated_and_missing(&all, n), (0, 0));
        }
    }
}
