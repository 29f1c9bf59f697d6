//! The losslessness proof: rebuild every ternary GGUF tensor from the artifact's planes by
//! inverting the row maps (undo permutations and concatenations), and compare with the source.

use super::rows::target_rows;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::Gguf;
use crate::mapping::produced_objects;
use crate::ninfer::Artifact;
use crate::planes::{append_row_blocks, BlockLayout};
use crate::spec::Produce;
use std::collections::BTreeMap;

/// Result of rebuilding one tensor.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rebuilt {
    pub name: String,
    pub bytes: u64,
    pub identical: bool,
}

/// Rebuilds every ternary tensor of `g` from `a`; returns (tensor name → bytes) in GGUF order.
pub fn rebuild(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<(String, Vec<u8>)>> {
    let profile = super::source::detect_profile(g)?;
    // For every (source tensor, source row): (object, target row).
    let mut back: BTreeMap<String, Vec<Option<(String, u64)>>> = BTreeMap::new();
    for o in produced_objects(&profile) {
        let Some(Produce::TernaryRows { parts }) = o.rule.as_ref().map(|r| &r.produce) else {
            continue;
        };
        let src_rows: Vec<u64> = parts
            .iter()
            .map(|p| g.require_tensor(&p.src).map(|t| t.ne[1]))
            .collect::<Result<_>>()?;
        for (target_row, r) in target_rows(&profile, parts, &src_rows)?
            .into_iter()
            .enumerate()
        {
            let slot = back
                .entry(parts[r.part].src.clone())
                .or_insert_with(|| vec![None; src_rows[r.part] as usize]);
            if slot[r.row as usize]
                .replace((o.name.clone(), target_row as u64))
                .is_some()
            {
                return Err(Error::new(
                    ErrorClass::PackRoundtrip,
                    parts[r.part].src.clone(),
                    format!("row {} is placed twice by the mapping", r.row),
                ));
            }
        }
    }
    let mut out = Vec::new();
    for t in &g.tensors {
        let Some(rows) = back.get(t.name) else {
            continue;
        };
        let mut bytes = Vec::with_capacity(t.nbytes as usize);
        for (i, slot) in rows.iter().enumerate() {
            let (obj, tr) = slot.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorClass::PackRoundtrip,
                    t.name,
                    format!("row {i} is in no artifact object"),
                )
            })?;
            let v = a.row_split(obj)?;
            let layout = BlockLayout::for_format(v.format)?;
            append_row_blocks(&layout, &v.geom, v.bytes, *tr, &mut bytes)?;
        }
        out.push((t.name.to_string(), bytes));
    }
    Ok(out)
}

/// Rebuilds and compares every ternary tensor with the source bytes.
pub fn prove(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<Rebuilt>> {
    Ok(rebuild(g, a)?
        .into_iter()
        .map(|(name, bytes)| {
            let t = g.tensor(&name).expect("rebuilt from the GGUF's own names");
            Rebuilt {
                identical: bytes.as_slice() == g.tensor_data(t),
                bytes: bytes.len() as u64,
                name,
            }
        })
        .collect())
}
