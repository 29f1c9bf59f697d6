//! Phase 4a of the reader: which layout the ambiguous type id 42 has in this file (mainline
//! Q2_0 g64 or legacy Prism Q2_0 g128), per `spec/ggml_types.json` `id42_disambiguation`:
//! the byte span up to the next tensor (or the data end) decides, and one file has one layout.

use super::tensor_infos::Pending;
use super::Id42Policy;
use crate::error::{enforced, Error, ErrorClass as C, Result};
use crate::spec::GgmlType;

/// Types that share the ambiguous id, from `spec/ggml_types.json` `id42_disambiguation.candidates`.
pub(crate) fn id42_candidates() -> Vec<&'static GgmlType> {
    let spec = crate::spec::get();
    let cands: Vec<&'static GgmlType> = spec
        .ggml
        .id42_disambiguation
        .candidates
        .iter()
        .filter_map(|n| spec.ggml_type_named(n))
        .collect();
    // All candidates must share one id for the rule to apply.
    if cands.len() >= 2 && cands.iter().all(|c| c.id == cands[0].id) {
        cands
    } else {
        Vec::new()
    }
}

/// Whether `span` bytes can hold a tensor of `nbytes`: at least the data, at most data + padding.
pub(super) fn fits(nbytes: u64, span: u64, alignment: u64) -> bool {
    let padded = nbytes
        .checked_add(alignment - 1)
        .map(|x| x / alignment * alignment)
        .unwrap_or(u64::MAX);
    nbytes <= span && span <= padded
}

/// The file geometry the resolution looks at.
pub(super) struct Geometry {
    pub(super) alignment: u64,
    pub(super) data_len: u64,
}

/// Picks a candidate index per tensor (0 for unambiguous types).
pub(super) fn resolve_id42(
    pend: &[Pending<'_>],
    id42: &[&'static GgmlType],
    policy: Id42Policy,
    geo: &Geometry,
    warnings: &mut Vec<String>,
) -> Result<Vec<usize>> {
    let mut chosen = vec![0usize; pend.len()];
    let ambiguous: Vec<usize> = (0..pend.len())
        .filter(|&i| pend[i].cands.len() > 1)
        .collect();
    if ambiguous.is_empty() {
        return Ok(chosen);
    }
    let fixed = match policy {
        Id42Policy::Mainline => Some(0),
        Id42Policy::LegacyPrism => Some(id42.len() - 1),
        Id42Policy::Auto => None,
    };
    if let Some(want) = fixed {
        for &i in &ambiguous {
            chosen[i] = cand_named(&pend[i], &id42[want].name).unwrap_or(0);
        }
        return Ok(chosen);
    }
    let decided = decide_by_span(pend, &ambiguous, id42, geo)?;
    let file_kind = one_layout_per_file(pend, id42, &decided)?;
    let mut undecided = 0usize;
    for &i in &ambiguous {
        chosen[i] = match decided[i] {
            Some(k) => k,
            None => {
                undecided += 1;
                file_kind.and_then(|n| cand_named(&pend[i], n)).unwrap_or(0)
            }
        };
    }
    if file_kind.is_none() && undecided > 0 {
        warnings.push(format!(
            "{undecided} type-{} tensor(s) are too small to tell {} from {}; assumed {}",
            id42[0].id,
            id42[0].name,
            id42[id42.len() - 1].name,
            id42[0].name
        ));
    }
    warnings.extend(legacy_warning(pend, &ambiguous, &chosen));
    Ok(chosen)
}

fn cand_named(p: &Pending<'_>, name: &str) -> Option<usize> {
    p.cands.iter().position(|c| c.0.name == name)
}

/// Per ambiguous tensor: Some(candidate) when exactly one fits its span, None when undecidable;
/// `gguf.id42_ambiguous` when none fits (except a short last tensor: a truncation, left to the
/// bounds check).
fn decide_by_span(
    pend: &[Pending<'_>],
    ambiguous: &[usize],
    id42: &[&'static GgmlType],
    geo: &Geometry,
) -> Result<Vec<Option<usize>>> {
    let mut offsets: Vec<u64> = pend.iter().map(|p| p.offset).collect();
    offsets.sort_unstable();
    let mut decided: Vec<Option<usize>> = vec![None; pend.len()];
    for &i in ambiguous {
        let p = &pend[i];
        let next = offsets.iter().copied().find(|&o| o > p.offset);
        let (span, last) = match next {
            Some(n) => (n - p.offset, false),
            None => (geo.data_len.saturating_sub(p.offset), true),
        };
        let fitting: Vec<usize> = (0..p.cands.len())
            .filter(|&k| fits(p.cands[k].2, span, geo.alignment))
            .collect();
        match fitting.len() {
            1 => decided[i] = Some(fitting[0]),
            0 => {
                let min = p.cands.iter().map(|c| c.2).min().unwrap_or(0);
                if !(last && span < min) {
                    return Err(none_fits(p, i, id42, span, last));
                }
            }
            _ => {}
        }
    }
    Ok(decided)
}

fn none_fits(p: &Pending<'_>, i: usize, id42: &[&GgmlType], span: u64, last: bool) -> Error {
    let sizes: Vec<String> = id42
        .iter()
        .map(|t| match p.cands.iter().find(|c| c.0.name == t.name) {
            Some(c) => format!(
                "{} ({}-element blocks of {} B) needs {} bytes",
                t.name, t.block_elems, t.block_bytes, c.2
            ),
            None => format!("{} does not divide ne[0]={}", t.name, p.ne[0]),
        })
        .collect();
    Error::at(
        C::GgufId42Ambiguous,
        p.info_offset,
        format!("tensor_infos[{i}]('{}')", p.name),
        format!(
            "type {} tensor '{}' ({} elements) spans {span} bytes up to {}; neither candidate fits: {}",
            p.type_id,
            p.name,
            p.cands[0].1,
            if last { "the data end" } else { "the next tensor" },
            sizes.join("; ")
        ),
    )
}

/// One layout per file: decided tensors must agree; returns the file's layout name if any
/// tensor decided it. A tensor of the ambiguous id whose shape admits one candidate only
/// (ne[0] = 64 can only be g64) is decided too
/// (fuzz/regressions/gguf_structured/id42-mixed-single-candidate).
fn one_layout_per_file<'p>(
    pend: &'p [Pending<'_>],
    id42: &[&'static GgmlType],
    decided: &[Option<usize>],
) -> Result<Option<&'p str>> {
    let mut kinds = (0..pend.len())
        .filter(|&i| pend[i].type_id == id42[0].id)
        .filter_map(|i| {
            match pend[i].cands.len() {
                1 => Some(0),
                _ => decided[i],
            }
            .map(|k| (i, pend[i].cands[k].0.name.as_str()))
        });
    let Some((i0, name0)) = kinds.next() else {
        return Ok(None);
    };
    if let Some((i1, name1)) = kinds
        .find(|&(_, n)| n != name0)
        .filter(|_| enforced(C::GgufId42Ambiguous))
    {
        let p = &pend[i1];
        return Err(Error::at(
            C::GgufId42Ambiguous,
            p.info_offset,
            format!("tensor_infos[{i1}]('{}')", p.name),
            format!(
                "type-{} tensors disagree: '{}' is laid out as {name0}, '{}' as {name1}",
                p.type_id, pend[i0].name, p.name
            ),
        ));
    }
    Ok(Some(name0))
}

/// The "retag to …" warning when tensors resolved to a layout the table marks `retag_to`.
fn legacy_warning(pend: &[Pending<'_>], ambiguous: &[usize], chosen: &[usize]) -> Option<String> {
    let legacy: Vec<&str> = ambiguous
        .iter()
        .filter(|&&i| pend[i].cands[chosen[i]].0.retag_to.is_some())
        .map(|&i| pend[i].name)
        .collect();
    let first = legacy.first()?;
    let t = pend[ambiguous[0]]
        .cands
        .iter()
        .map(|c| c.0)
        .find(|t| t.retag_to.is_some())?;
    Some(format!(
        "id {} with {} B/{} blocks is the legacy Prism layout — retag to {} ({} tensor(s), first '{first}')",
        t.id,
        t.block_bytes,
        t.block_elems,
        t.retag_to.unwrap_or(0),
        legacy.len()
    ))
}

/// When an ambiguous-id tensor's actual span fits the other candidate, explains the offset
/// error as the id-42 g64/g128 confusion (per-weight ratio 17/18 or 18/17).
pub(super) fn id42_confusion_note(
    p: &Pending<'_>,
    chosen: usize,
    span: u64,
    alignment: u64,
) -> Option<String> {
    if p.cands.len() < 2 {
        return None;
    }
    let (ct, _, cb) = p.cands[chosen];
    let (ot, _, ob) = *p
        .cands
        .iter()
        .enumerate()
        .find(|&(k, c)| k != chosen && fits(c.2, span, alignment))?
        .1;
    let (n, d) = reduce(ob, cb);
    Some(format!(
        "; type-{} tensor '{}' was read as {} ({} B) but its {span} bytes fit {} ({} B): size ratio {n}/{d} — the id-42 g64/g128 confusion",
        p.type_id, p.name, ct.name, cb, ot.name, ob
    ))
}

fn reduce(a: u64, b: u64) -> (u64, u64) {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    // x == 0 only when both are 0.
    match (a.checked_div(x), b.checked_div(x)) {
        (Some(n), Some(d)) => (n, d),
        _ => (a, b),
    }
}
