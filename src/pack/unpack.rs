//! The losslessness proof: rebuild every ternary GGUF tensor from the artifact's planes by
//! inverting the row maps (undo permutations and concatenations), and compare with the source.
//!
//! [`prove`] compares row by row without materializing a tensor: each source row is reassembled
//! from its artifact row into a small buffer and compared with the GGUF's row, the rows of a
//! tensor split over every core. [`rebuild`] / [`rebuild_each`] materialize the tensors (for
//! `unpack -o`).

use super::rows::target_rows;
use crate::error::{Error, ErrorClass, Result};
use crate::geometry::Plane;
use crate::gguf::{Gguf, TensorInfo};
use crate::mapping::producible_objects;
use crate::ninfer::{Artifact, RowSplitView};
use crate::planes::{append_row_blocks, ggml_blocks_per_row, BlockLayout};
use crate::spec::Produce;
use std::collections::BTreeMap;
use std::ops::Range;

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

/// Where each source row of each ternary tensor lives in the artifact.
struct RowHomes {
    /// The artifact objects that hold ternary rows.
    objects: Vec<String>,
    /// Per source tensor, per source row: (index into `objects`, target row).
    back: BTreeMap<String, Vec<Option<(usize, u64)>>>,
}

/// The ternary objects `g` can produce, split into those `a` holds and those it lacks (a
/// reduced artifact: `--layers`, `--minimal`).
fn ternary_objects(
    g: &Gguf<'_>,
    a: &Artifact<'_>,
) -> Result<(
    crate::spec::ModelProfile,
    Vec<crate::mapping::TargetObject>,
    Vec<String>,
)> {
    let (profile, held) = crate::mapping::profile::resolve_profile(g, None)?;
    let (mut present, mut absent) = (Vec::new(), Vec::new());
    for o in producible_objects(&profile, &held, &|n| g.tensor(n).is_some()) {
        if !matches!(
            o.rule.as_ref().map(|r| &r.produce),
            Some(Produce::TernaryRows { .. })
        ) {
            continue;
        }
        if a.directory.find(&o.name).is_some() {
            present.push(o);
        } else {
            absent.push(o.name);
        }
    }
    Ok((profile, present, absent))
}

/// The ternary objects the GGUF could produce that the artifact does not hold (their source
/// tensors are not rebuilt: a reduced artifact is proven on what it holds).
pub fn objects_not_held(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<String>> {
    Ok(ternary_objects(g, a)?.2)
}

/// Inverts the mapping's row maps for the objects the GGUF can produce and the artifact holds
/// (a reduced GGUF or artifact rebuilds exactly those tensors); a source row placed twice is a
/// `pack.roundtrip` error.
fn row_homes(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<RowHomes> {
    let (profile, objects, _) = ternary_objects(g, a)?;
    let mut homes = RowHomes {
        objects: Vec::new(),
        back: BTreeMap::new(),
    };
    for o in objects {
        let Some(Produce::TernaryRows { parts }) = o.rule.as_ref().map(|r| &r.produce) else {
            continue;
        };
        let src_rows: Vec<u64> = parts
            .iter()
            .map(|p| g.require_tensor(&p.src).map(|t| t.ne[1]))
            .collect::<Result<_>>()?;
        let oi = homes.objects.len();
        homes.objects.push(o.name.clone());
        for (target_row, r) in target_rows(&profile, parts, &src_rows)?
            .into_iter()
            .enumerate()
        {
            let slot = homes
                .back
                .entry(parts[r.part].src.clone())
                .or_insert_with(|| vec![None; src_rows[r.part] as usize]);
            if slot[r.row as usize]
                .replace((oi, target_row as u64))
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
    Ok(homes)
}

/// Reassembles source rows from their artifact rows, keeping the current object's view
/// (consecutive source rows mostly live in one object).
struct RowSource<'h, 'a> {
    homes: &'h RowHomes,
    artifact: &'h Artifact<'a>,
    tensor: &'h str,
    /// The current object: index, view, block layout, ggml blocks per row.
    cur: Option<(usize, RowSplitView<'a>, BlockLayout, usize)>,
}

impl<'h, 'a> RowSource<'h, 'a> {
    fn new(homes: &'h RowHomes, artifact: &'h Artifact<'a>, tensor: &'h str) -> Self {
        RowSource {
            homes,
            artifact,
            tensor,
            cur: None,
        }
    }

    /// The artifact row of source row `i` (at `slot`), with its object made current.
    fn locate(&mut self, i: usize, slot: &Option<(usize, u64)>) -> Result<u64> {
        let (oi, tr) = slot.as_ref().ok_or_else(|| {
            Error::new(
                ErrorClass::PackRoundtrip,
                self.tensor,
                format!("row {i} is in no artifact object"),
            )
        })?;
        if self.cur.as_ref().is_none_or(|c| c.0 != *oi) {
            let v = self.artifact.row_split(&self.homes.objects[*oi])?;
            let layout = BlockLayout::for_format(v.format)?;
            let bpr = ggml_blocks_per_row(&layout, &v.geom)? as usize;
            self.cur = Some((*oi, v, layout, bpr));
        }
        Ok(*tr)
    }

    /// Appends source row `i` (at `slot`) as ggml blocks to `out`.
    fn append(&mut self, i: usize, slot: &Option<(usize, u64)>, out: &mut Vec<u8>) -> Result<()> {
        let tr = self.locate(i, slot)?;
        let Some((_, v, layout, _)) = self.cur.as_ref() else {
            return Err(not_located(i));
        };
        append_row_blocks(layout, &v.geom, v.bytes, tr, out)
    }

    /// Whether source row `i` rebuilds to exactly `want`, compared in place (slice by slice,
    /// nothing copied): `Some((equal, rebuilt length))`, or `None` when `want` is not one
    /// rebuilt row long or the row's plane spans are not whole groups of the layout's slices
    /// (the caller rebuilds the row instead).
    fn compare(
        &mut self,
        i: usize,
        slot: &Option<(usize, u64)>,
        want: Option<&[u8]>,
    ) -> Result<Option<(bool, usize)>> {
        let tr = self.locate(i, slot)?;
        let Some((_, v, layout, bpr)) = self.cur.as_ref() else {
            return Err(not_located(i));
        };
        let (bb, bpr) = (layout.block_bytes, *bpr);
        let Some(want) = want.filter(|w| w.len() == bpr * bb) else {
            return Ok(None);
        };
        let mut equal = true;
        for (plane, slice) in Plane::ALL.into_iter().zip(layout.slices) {
            let Some((lo, hi)) = slice else {
                continue;
            };
            let span = v.geom.row_span(plane, tr);
            let Some(src) = v.bytes.get(span.start as usize..span.end as usize) else {
                return Ok(None);
            };
            if src.len() != bpr * (hi - lo) {
                return Ok(None);
            }
            equal = equal && slices_equal(want, src, bb, lo, hi, bpr);
        }
        Ok(Some((equal, want.len())))
    }
}

/// Whether every block's `[lo, hi)` of `want` equals its group of the plane span `src`.
fn slices_equal(want: &[u8], src: &[u8], bb: usize, lo: usize, hi: usize, bpr: usize) -> bool {
    match hi - lo {
        2 => slices_equal_fixed::<2>(want, src, bb, lo, bpr),
        24 => slices_equal_fixed::<24>(want, src, bb, lo, bpr),
        32 => slices_equal_fixed::<32>(want, src, bb, lo, bpr),
        w => (0..bpr).all(|g| want[g * bb + lo..g * bb + hi] == src[g * w..(g + 1) * w]),
    }
}

/// [`slices_equal`] for a width known at compile time (a few loads per group, no call).
#[inline(always)]
fn slices_equal_fixed<const W: usize>(
    want: &[u8],
    src: &[u8],
    bb: usize,
    lo: usize,
    bpr: usize,
) -> bool {
    let (groups, _) = src.as_chunks::<W>();
    groups.len() >= bpr
        && want.len() >= bpr * bb
        && want
            .chunks_exact(bb)
            .zip(groups)
            .take(bpr)
            .all(|(w, b)| w.get(lo..).and_then(|w| w.first_chunk::<W>()) == Some(b))
}

/// The error for a row that [`RowSource::locate`] did not leave current (a defect here).
fn not_located(i: usize) -> Error {
    Error::new(
        ErrorClass::InternalInvariant,
        format!("row {i}"),
        "the rebuilt row's object is not the current one after locating it",
    )
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
    let homes = row_homes(g, a)?;
    for t in &g.tensors {
        let Some(rows) = homes.back.get(t.name) else {
            continue;
        };
        let mut bytes = Vec::with_capacity(t.nbytes as usize);
        let mut src = RowSource::new(&homes, a, t.name);
        for (i, slot) in rows.iter().enumerate() {
            src.append(i, slot, &mut bytes)?;
        }
        sink(t.name, bytes)?;
    }
    Ok(())
}

/// What comparing some rows of a tensor found.
#[derive(Default)]
struct RowsCompared {
    /// Bytes rebuilt.
    bytes: u64,
    /// Every rebuilt row had the GGUF's row length and bytes.
    equal: bool,
    /// Some rebuilt row had another length (the row-wise comparison does not apply).
    length_differs: bool,
}

/// Compares source rows `range` of tensor `t` (GGUF row length `rb`) with their rebuilt bytes.
/// Every row is rebuilt (no early exit), so an unplaced row is reported as [`rebuild_each`]
/// would.
fn compare_rows(
    homes: &RowHomes,
    a: &Artifact<'_>,
    t: &TensorInfo<'_>,
    data: &[u8],
    rb: usize,
    range: Range<usize>,
) -> Result<RowsCompared> {
    let rows = &homes.back[t.name];
    let mut src = RowSource::new(homes, a, t.name);
    let mut buf = Vec::with_capacity(rb);
    let mut c = RowsCompared {
        equal: true,
        ..Default::default()
    };
    for i in range {
        let want = i
            .checked_mul(rb)
            .and_then(|at| data.get(at..at.checked_add(rb)?));
        if let Some((equal, len)) = src.compare(i, &rows[i], want)? {
            c.bytes += len as u64;
            c.equal &= equal;
            continue;
        }
        buf.clear();
        src.append(i, &rows[i], &mut buf)?;
        c.bytes += buf.len() as u64;
        if buf.len() != rb {
            c.length_differs = true;
            c.equal = false;
        } else if Some(buf.as_slice()) != want {
            c.equal = false;
        }
    }
    Ok(c)
}

/// Below this many rows per thread a tensor is compared on the calling thread.
const MIN_ROWS_PER_THREAD: usize = 256;

/// Rebuilds and compares one tensor, its rows split over every core.
fn prove_tensor(
    homes: &RowHomes,
    a: &Artifact<'_>,
    g: &Gguf<'_>,
    t: &TensorInfo<'_>,
) -> Result<Rebuilt> {
    let n = homes.back[t.name].len();
    let data = g.tensor_data(t);
    let rb = if n > 0 && data.len() % n == 0 {
        data.len() / n
    } else {
        usize::MAX
    };
    // Threads come from the verifier's shared budget (at most `$NINFER_TERNARY_THREADS` or
    // every core in all); a spawn the OS refuses runs its rows on this thread instead.
    use crate::pool;
    let want = pool::threads().min(n / MIN_ROWS_PER_THREAD).max(1);
    let parts: Vec<Result<RowsCompared>> =
        pool::workers(pool::global(), want, std::thread::Builder::new, |i, w| {
            let step = n.div_ceil(w).max(1);
            let lo = (i * step).min(n);
            compare_rows(homes, a, t, data, rb, lo..(lo + step).min(n))
        });
    let mut total = RowsCompared {
        equal: true,
        ..Default::default()
    };
    for p in parts {
        let p = p?;
        total.bytes += p.bytes;
        total.equal &= p.equal;
        total.length_differs |= p.length_differs;
    }
    let identical = if total.length_differs || rb == usize::MAX {
        // Rows of another length: compare the whole rebuilt stream, as the definition says.
        let mut bytes = Vec::new();
        let mut src = RowSource::new(homes, a, t.name);
        for (i, slot) in homes.back[t.name].iter().enumerate() {
            src.append(i, slot, &mut bytes)?;
        }
        bytes.as_slice() == data
    } else {
        total.equal && total.bytes == data.len() as u64
    };
    Ok(Rebuilt {
        name: t.name.to_string(),
        bytes: total.bytes,
        identical,
    })
}

/// Rebuilds and compares every ternary tensor with the source bytes (GGUF order). A tensor is
/// identical when its rebuilt byte stream equals the GGUF's; nothing is materialized unless a
/// rebuilt row has another length than the GGUF's rows.
pub fn prove(g: &Gguf<'_>, a: &Artifact<'_>) -> Result<Vec<Rebuilt>> {
    let homes = row_homes(g, a)?;
    g.tensors
        .iter()
        .filter(|t| homes.back.contains_key(t.name))
        .map(|t| prove_tensor(&homes, a, g, t))
        .collect()
}
