//! Row maps of ternary objects: for every target row, the (source tensor, source row) the
//! mapping rule names. The packer gathers by it; unpack inverts it. Nothing here searches rows.

use crate::error::{Error, ErrorClass, Result};
use crate::perm::{attn_q_deinterleave, perm_rows};
use crate::spec::{ModelProfile, RowOrder, RowPart};

/// One target row's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowRef {
    /// Index into the parts list of the rule.
    pub part: usize,
    /// The row within that part's source tensor.
    pub row: u64,
}

/// Source rows of one part, in target order. `src_rows` is the source tensor's row count.
pub fn part_rows(p: &ModelProfile, part: &RowPart, src_rows: u64) -> Result<Vec<u64>> {
    let (a, b) = match &part.rows {
        Some([a, b]) => {
            let (a, b) = match (p.dim(a), p.dim(b)) {
                (Some(a), Some(b)) if a <= b => (a, b),
                (da, db) => {
                    // The table, not the tensor, is wrong: its range names an unknown dimension or runs backwards.
                    return Err(Error::new(
                        ErrorClass::SpecInvalid,
                        part.src.clone(),
                        format!(
                            "spec row range {a:?}..{b:?} resolves to {da:?}..{db:?} in profile {}",
                            p.name
                        ),
                    ));
                }
            };
            if b > src_rows {
                return Err(Error::new(
                    ErrorClass::GgufTensorShape,
                    part.src.clone(),
                    format!("rows {a}..{b} outside the tensor's {src_rows} rows"),
                ));
            }
            (a, b)
        }
        None => (0, src_rows),
    };
    let n = (b - a) as usize;
    let local: Vec<usize> = match part.order {
        RowOrder::Verbatim => (0..n).collect(),
        RowOrder::PermHeads => perm_rows(p.v_tiling(), p.head_v_dim as usize, n, &part.src)?,
        RowOrder::AttnQQuery => attn_q_deinterleave(n, p.head_dim as usize, &part.src)?.0,
        RowOrder::AttnQGate => attn_q_deinterleave(n, p.head_dim as usize, &part.src)?.1,
    };
    Ok(local.into_iter().map(|r| a + r as u64).collect())
}

/// The whole target row map of a rule's parts.
pub fn target_rows(p: &ModelProfile, parts: &[RowPart], src_rows: &[u64]) -> Result<Vec<RowRef>> {
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        out.extend(
            part_rows(p, part, src_rows[i])?
                .into_iter()
                .map(|row| RowRef { part: i, row }),
        );
    }
    Ok(out)
}
