//! The mapping's row rules as explicit index arithmetic, written here from spec/permutations.md#row-permutations and the
//! profile — deliberately NOT calling the packer's row map (`pack::rows`) or `perm.rs`, so a bug
//! there cannot hide from the verifier. Every function is a gather: position `i` of the artifact
//! range reads source row `f(i)` (relative to the part's first source row).

use crate::spec::{ModelProfile, RowOrder};

/// `perm48(h) = (h % tile) * group + h / tile` on the head axis (tile 3, group 16 for Bonsai).
pub fn perm48(p: &ModelProfile, h: u64) -> u64 {
    (h % p.v_tile) * p.k_heads + h / p.v_tile
}

/// The inverse of [`perm48`] (the scatter written as a gather): `perm48(inv48(h)) == h`.
pub fn inv48(p: &ModelProfile, h: u64) -> u64 {
    (h % p.k_heads) * p.v_tile + h / p.k_heads
}

/// `perm_row(i) = perm48(i / head_v_dim) * head_v_dim + i % head_v_dim`.
pub fn perm_row(p: &ModelProfile, i: u64) -> u64 {
    let hd = p.head_v_dim;
    perm48(p, i / hd) * hd + i % hd
}

/// Source offset of position `i` for a named order, with the rows the part spans in the source.
/// Returns `Err` when the rule does not apply to `n` rows (the de-interleaver's and the head
/// permutation's shape requirements).
pub fn source_offset(p: &ModelProfile, order: RowOrder, n: u64, i: u64) -> Result<u64, String> {
    match order {
        RowOrder::Verbatim => Ok(i),
        RowOrder::PermHeads => {
            if n != p.v_heads * p.head_v_dim {
                return Err(format!(
                    "{n} rows is not {} value heads x {}",
                    p.v_heads, p.head_v_dim
                ));
            }
            Ok(perm_row(p, i))
        }
        RowOrder::AttnQQuery | RowOrder::AttnQGate => {
            let hd = p.head_dim;
            if n % hd != 0 {
                return Err(format!("{n} rows is not a multiple of {hd}"));
            }
            let parity = u64::from(order == RowOrder::AttnQGate);
            Ok((2 * (i / hd) + parity) * hd + i % hd)
        }
    }
}

/// How many source rows (from the part's first) an order reads for `n` artifact rows.
pub fn source_span(order: RowOrder, n: u64) -> u64 {
    match order {
        RowOrder::AttnQQuery | RowOrder::AttnQGate => 2 * n,
        _ => n,
    }
}

/// Whether source offset `j` (within the span) belongs to the part's selection — the multiset the
/// artifact range must equal.
pub fn selected(p: &ModelProfile, order: RowOrder, j: u64) -> bool {
    match order {
        RowOrder::AttnQQuery => (j / p.head_dim) % 2 == 0,
        RowOrder::AttnQGate => (j / p.head_dim) % 2 == 1,
        _ => true,
    }
}

/// The attn_q de-interleaver's requirement (`<name>: <n> rows is not a multiple of 2*head_dim`).
pub fn check_attn_q_rows(p: &ModelProfile, name: &str, n: u64) -> Result<(), String> {
    let pair = 2 * p.head_dim;
    if n % pair != 0 {
        return Err(format!("{name}: {n} rows is not a multiple of {pair}"));
    }
    Ok(())
}

/// Rows repeated / missing when perm48's formula is applied to `n` row indices directly
/// (trap T-4): `n - |{perm48(i)}|`.
pub fn perm48_on_rows_missing(p: &ModelProfile, n: u64) -> u64 {
    let mut seen = vec![false; n as usize];
    for i in 0..n {
        let s = perm48(p, i);
        if s < n {
            seen[s as usize] = true;
        }
    }
    seen.iter().filter(|&&b| !b).count() as u64
}

/// The ssm_out feature permutation P (gather over features, spec/hadamard.md#hadamard-runtime-math): grouped feature
/// `hd*(rep*k + r) + i` <- tiled feature `hd*(nk*r + k) + i`; i.e. head g <- perm48(g).
pub fn ssm_out_gather(p: &ModelProfile, width: u64) -> Vec<usize> {
    let hd = p.head_v_dim;
    (0..width)
        .map(|f| {
            let g = f / hd;
            let (k, r) = (g / p.v_tile, g % p.v_tile);
            (hd * (p.k_heads * r + k) + f % hd) as usize
        })
        .collect()
}

/// The reversed permutation (scatter used as a gather) — a wrong variant.
pub fn ssm_out_reversed(p: &ModelProfile, width: u64) -> Vec<usize> {
    let hd = p.head_v_dim;
    (0..width)
        .map(|f| (inv48(p, f / hd) * hd + f % hd) as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::profile;

    #[test]
    fn index_arithmetic_matches_formats_md() {
        let p = profile("bonsai-2-27b").unwrap();
        assert_eq!(perm48(&p, 1), 16);
        assert_eq!(perm48(&p, 3), 1);
        for h in 0..48 {
            assert_eq!(perm48(&p, inv48(&p, h)), h);
        }
        assert_eq!(perm48_on_rows_missing(&p, 6144), 4064);
        // attn_q: query head h row r = (2h)*256 + r; gate = (2h+1)*256 + r.
        assert_eq!(
            source_offset(&p, RowOrder::AttnQQuery, 6144, 257).unwrap(),
            2 * 256 + 1
        );
        assert_eq!(
            source_offset(&p, RowOrder::AttnQGate, 6144, 0).unwrap(),
            256
        );
        assert_eq!(
            source_offset(&p, RowOrder::PermHeads, 6144, 128).unwrap(),
            16 * 128
        );
        // P agrees with perm_row on the feature axis.
        let g = ssm_out_gather(&p, 6144);
        for f in [0u64, 1, 128, 129, 6143] {
            assert_eq!(g[f as usize] as u64, perm_row(&p, f));
        }
        assert!(check_attn_q_rows(&p, "attn_q", 12288).is_ok());
        assert_eq!(
            check_attn_q_rows(&p, "attn_q", 12000).unwrap_err(),
            "attn_q: 12000 rows is not a multiple of 512"
        );
    }
}
