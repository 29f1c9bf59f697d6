//! The losslessness proof: rebuild every ternary GGUF tensor from the artifact's planes by
//! inverting the row maps (undo permutations and concatenations), and compare with the source.

use super::rows::target_rows;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::Gguf;
use crate::mapping::produced_objects_in;
use crate::ninfer::Artifact;
use crate::planes::{append_row_blocks, BlockLayout};
use crate::spec::Produce;
use std::collections::BTreeMap;

/// Result of rebuilding one tensor.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rebuilt {
    /// The GGUF tensor name.
    pub name: String,
    /// Bytes rebuilt.
    pub bytes: u64,
    /// Whether the rebuilt bytes equal the GGUF's.
    pub identical: bool,
}

/// Rebuilds every ternary tensor of `g` from `a`; returns (tensor name → bytes) in GGUF order.
/// Holds every rebuilt tensor at once: use [`rebuild_each`] for large models.
pub fn rebuild(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    rebuild_each(g, a, |name, bytes| {
        out.push((name.to_string(), bytes));
        Ok(())
    })?;
    Ok(out)
}

/// Rebuilds the ternary tensors one at a time in GGUF order, handing each to `sink` (memory
/// bounded by the largest tensor).
pub fn rebuild_each(
    g: &Gguf<'_>,
    a: &Artifact<'_>,
    mut sink: impl FnMut(&str, Vec<u8>) -> Result<()>,
) -> Result<()> {
    // A reduced GGUF rebuilds exactly the layers it holds.
    let (profile, held) = crate::mapping::profile::resolve_profile(g, None)?;
    // For every (source tensor, source row): (object, target row).
    let mut back: BTreeMap<String, Vec<Option<(String, u64)>>> = BTreeMap::new();
    for o in produced_objects_in(&profile, &held) {
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
    for t in &g.tensors {
        let Some(rows) = back.get(t.name) else {
            continue;
        };
        let mut bytes = Vec::with_capacity(t.nbytes as usize);
        // Consecutive source rows mostly live in one object: keep its view.
        let mut cur: Option<(&str, crate::ninfer::RowSplitView<'_>, BlockLayout)> = None;
        for (i, slot) in rows.iter().enumerate() {
            let (obj, tr) = slot.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorClass::PackRoundtrip,
                    t.name,
                    format!("row {i} is in no artifact object"),
                )
            })?;
            if cur.as_ref().is_none_or(|c| c.0 != obj.as_str()) {
                let v = a.row_split(obj)?;
                let layout = BlockLayout::for_format(v.format)?;
                cur = Some((obj.as_str(), v, layout));
            }
            let (_, v, layout) = cur.as_ref().expect("set above");
            append_row_blocks(layout, &v.geom, v.bytes, *tr, &mut bytes)?;
        }
        sink(t.name, bytes)?;
    }
    Ok(())
}

/// Rebuilds and compares every ternary tensor with the source bytes.
pub fn prove(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<Rebuilt>> {
    let mut out = Vec::new();
    rebuild_each(g, a, |name, bytes| {
        let t = g.tensor(name).expect("rebuilt from the GGUF's own names");
        out.push(Rebuilt {
            identical: bytes.as_slice() == g.tensor_data(t),
            bytes: bytes.len() as u64,
            name: name.to_string(),
        });
        Ok(())
    })?;
    Ok(out)
}
