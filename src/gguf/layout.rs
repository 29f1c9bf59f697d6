//! Phase 4b of the reader: the data layout. Offsets aligned, each tensor placed (strict mode:
//! offset = running sum of padded sizes; every sum checked), no overlaps (spec mode), and every
//! tensor inside the file.

use super::id42::id42_confusion_note;
use super::reader::TensorInfo;
use super::tensor_infos::Pending;
use crate::error::{align_up, enforced, Error, ErrorClass as C, Result};

/// Where the data section is and how it is aligned.
pub(super) struct DataSection {
    pub(super) alignment: u64,
    /// Absolute offset of the data section.
    pub(super) offset: u64,
    pub(super) file_len: u64,
    pub(super) strict_sequence: bool,
}

impl DataSection {
    /// Bytes from the data section's start to the end of the file.
    pub(super) fn len(&self) -> u64 {
        self.file_len.saturating_sub(self.offset)
    }
}

pub(super) fn check_offsets_aligned(pend: &[Pending<'_>], alignment: u64) -> Result<()> {
    for (i, p) in pend.iter().enumerate() {
        if p.offset % alignment != 0 && enforced(C::GgufTensorOffsetAlignment) {
            return Err(Error::at(
                C::GgufTensorOffsetAlignment,
                p.info_offset,
                format!("tensor_infos[{i}]('{}').offset", p.name),
                format!(
                    "tensor '{}' offset {} is not a multiple of the alignment {alignment}",
                    p.name, p.offset
                ),
            ));
        }
    }
    Ok(())
}

/// Resolves each record with its chosen candidate into a [`TensorInfo`] with a checked absolute
/// offset; strict mode also requires offset = running sum of padded sizes.
pub(super) fn place_tensors<'a>(
    pend: &[Pending<'a>],
    chosen: &[usize],
    data: &DataSection,
) -> Result<Vec<TensorInfo<'a>>> {
    let mut running: u64 = 0;
    let mut tensors: Vec<TensorInfo<'a>> = Vec::new();
    tensors.try_reserve_exact(pend.len()).map_err(|_| {
        Error::at(
            C::IoMemory,
            pend.first().map_or(0, |p| p.info_offset),
            "tensor_infos",
            format!(
                "out of memory for {} resolved tensor infos ({} B each on the heap)",
                pend.len(),
                std::mem::size_of::<TensorInfo<'a>>()
            ),
        )
    })?;
    for (i, p) in pend.iter().enumerate() {
        let (ggml, n_elements, nbytes) = p.cands[chosen[i]];
        let field = format!("tensor_infos[{i}]('{}').offset", p.name);
        if data.strict_sequence && p.offset != running && enforced(C::GgufTensorOffsetSequence) {
            return Err(sequence_error(
                pend,
                chosen,
                i,
                running,
                data.alignment,
                field,
            ));
        }
        let padded = align_up(nbytes, data.alignment, C::GgufTensorSizeOverflow, &field)
            .map_err(|e| e.with_offset(p.info_offset))?;
        running = running.checked_add(padded).ok_or_else(|| {
            Error::at(
                C::GgufTensorSizeOverflow,
                p.info_offset,
                field.clone(),
                format!("running sum of padded tensor sizes wraps past 2^64 at tensor '{}' (CVE-2025-53630)", p.name),
            )
        })?;
        let abs_offset = absolute_offset(p, nbytes, data.offset, &field)?;
        tensors.push(TensorInfo {
            index: i,
            name: p.name,
            n_dims: p.n_dims,
            ne: p.ne,
            type_id: p.type_id,
            ggml,
            offset: p.offset,
            abs_offset,
            nbytes,
            n_elements,
            info_offset: p.info_offset,
        });
    }
    Ok(tensors)
}

fn sequence_error(
    pend: &[Pending<'_>],
    chosen: &[usize],
    i: usize,
    running: u64,
    alignment: u64,
    field: String,
) -> Error {
    let p = &pend[i];
    let mut detail = format!(
        "tensor '{}' has offset {}, expected {running}",
        p.name, p.offset
    );
    if i > 0 {
        let prev = &pend[i - 1];
        let span = p.offset.wrapping_sub(prev.offset);
        if let Some(note) = id42_confusion_note(prev, chosen[i - 1], span, alignment) {
            detail.push_str(&note);
        }
    }
    Error::at(C::GgufTensorOffsetSequence, p.info_offset, field, detail)
}

/// `data_offset + offset`, requiring `+ nbytes` not to wrap either (the bounds check adds it).
fn absolute_offset(p: &Pending<'_>, nbytes: u64, data_offset: u64, field: &str) -> Result<u64> {
    data_offset
        .checked_add(p.offset)
        .filter(|a| a.checked_add(nbytes).is_some())
        .ok_or_else(|| {
            Error::at(
                C::GgufTensorSizeOverflow,
                p.info_offset,
                field,
                format!(
                    "data_offset {data_offset} + offset {} + {nbytes} bytes wraps past 2^64",
                    p.offset
                ),
            )
        })
}

/// Spec mode: no two tensors' byte ranges overlap.
pub(super) fn check_no_overlap(tensors: &[TensorInfo<'_>]) -> Result<()> {
    if tensors.len() < 2 {
        return Ok(());
    }
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by_key(|&i| (tensors[i].offset, i));
    for w in order.windows(2) {
        let (a, b) = (&tensors[w[0]], &tensors[w[1]]);
        // offset + nbytes cannot wrap: abs_offset + nbytes was checked in `place_tensors`.
        if a.offset + a.nbytes > b.offset && enforced(C::GgufTensorOverlap) {
            return Err(Error::at(
                C::GgufTensorOverlap,
                b.info_offset,
                format!("tensor_infos[{}]('{}').offset", b.index, b.name),
                format!(
                    "tensor '{}' [{}, {}) overlaps tensor '{}' [{}, {})",
                    b.name,
                    b.offset,
                    b.offset + b.nbytes,
                    a.name,
                    a.offset,
                    a.offset + a.nbytes
                ),
            ));
        }
    }
    Ok(())
}

/// Every tensor's bytes lie inside the file (the last tensor's padding may be missing).
pub(super) fn check_bounds(
    tensors: &[TensorInfo<'_>],
    pend: &[Pending<'_>],
    chosen: &[usize],
    data: &DataSection,
) -> Result<()> {
    let file_len = data.file_len;
    for (i, t) in tensors.iter().enumerate() {
        // abs_offset + nbytes was checked in `place_tensors`.
        let end = t.abs_offset + t.nbytes;
        if end <= file_len {
            continue;
        }
        let mut detail = format!(
            "tensor '{}' needs bytes [{}, {end}) but the file is {file_len} bytes (data section starts at {})",
            t.name, t.abs_offset, data.offset
        );
        let span = data.len().saturating_sub(t.offset);
        if let Some(note) = id42_confusion_note(&pend[i], chosen[i], span, data.alignment) {
            detail.push_str(&note);
        }
        return Err(Error::at(
            C::GgufTensorOutOfBounds,
            t.info_offset,
            format!("tensor_infos[{i}]('{}')", t.name),
            detail,
        ));
    }
    Ok(())
}
