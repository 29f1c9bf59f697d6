//! A cheap necessary condition for a wrong reading to match a failing output. The judge's rule
//! is per element (an output is within its bound or not, whatever the others hold) plus a
//! global NMSE limit, so a reading whose expectation misses the bound at one output can never
//! match. The probe is a few rows (dequantize: blocks) of the case: the one holding the first
//! output that fails the right reference (if one does: an NMSE-only failure has none), and up
//! to three more spread over the case (any row is a necessary condition; several turn away the
//! readings that agree with the kernel on one special row, e.g. a row of zero or NaN scale). Each reading is first decoded and judged on
//! those rows alone (O(k) instead of O(n k t)), and only readings that meet them are judged on
//! the whole case. The named readings are exactly those of the full search; only the work
//! differs.
//!
//! A reading of another block geometry (`block.32`: 32-element blocks) decodes a row's elements
//! from other bytes of the whole stream than the row's own: the probe hands it exactly those
//! bytes (when the row length is a whole number of its blocks), so it is probed too.

use std::borrow::Cow;

use super::abi::KernelClass;
use super::cases::{base, KernelCase};
use super::expected::{expected_with, ggml_blocks, Expected, WeightDecoder};
use super::judge::judge;
use super::precision::Precision;

/// Rows of a failing case, as a case of their own, with the kernel's outputs for them.
pub(super) struct Probe<'a> {
    case: KernelCase,
    out: Vec<u8>,
    /// The block stream a whole-case reading decodes (mat-vec and dequantize classes; planes
    /// objects disassembled), the probed segments' indices in it and their length in
    /// elements: where a reading of another block geometry finds each segment's elements.
    stream: Option<(Cow<'a, [u8]>, Vec<usize>, usize)>,
}

/// The first bad segment, then the first, middle and last ones, without repeats.
fn spread(first_bad: usize, count: usize) -> Vec<usize> {
    let mut v = vec![first_bad];
    for s in [0, count / 2, count.saturating_sub(1)] {
        if s < count && !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

impl<'a> Probe<'a> {
    /// The probe of a failing output judged against `e` (the case's expectation under the
    /// kernel's precision): `None` where the class has no row to cut out (Hadamard).
    pub(super) fn of(c: &'a KernelCase, e: &Expected, out: &[u8]) -> Option<Probe<'a>> {
        // An NMSE-only failure has no bad element: its rows are still a necessary condition
        // (every element of a match is within its bound).
        let i = judge(c, e, out).first_bad.map_or(0, |b| b.index);
        let w = e.precision.y.elem_bytes();
        let elems = |from: usize, n: usize| out.get(from * w..(from + n) * w);
        let codec = c.format.codec().ok()?;
        let (be, bb) = (codec.block_elems(), codec.block_bytes());
        let mut s = base(&c.name, c.class, c.format, c.dims, "");
        let mut sub_out = Vec::new();
        let stream = match c.class {
            KernelClass::Dequantize => {
                let segs = spread(i / be, c.weights.len() / bb);
                for &b in &segs {
                    s.weights.extend(c.weights.get(b * bb..(b + 1) * bb)?);
                    sub_out.extend(elems(b * be, be)?);
                }
                s.dims.n_blocks = segs.len() as u64;
                Some((Cow::Borrowed(c.weights.as_slice()), segs, be))
            }
            KernelClass::GetRows => {
                // Each gathered row is decoded alone in the whole case too: any geometry is
                // probed by the rows themselves.
                let k = c.dims.k as usize;
                for (j, &r) in spread(i / k.max(1), c.ids.len()).iter().enumerate() {
                    s.weights
                        .extend(c.table_row(u64::try_from(*c.ids.get(r)?).ok()?)?);
                    s.ids.push(j as i32);
                    sub_out.extend(elems(r * k, k)?);
                }
                s.dims.n = s.ids.len() as u64;
                s.dims.n_ids = s.dims.n;
                None
            }
            KernelClass::MulMatVec
            | KernelClass::MulMat
            | KernelClass::MulMatVecPlanes
            | KernelClass::MulMatPlanes => {
                // Planes objects are read as their ggml blocks, as the expectation reads them.
                let blocks = if c.class.is_planes() {
                    Cow::Owned(ggml_blocks(c).ok()?)
                } else {
                    Cow::Borrowed(c.weights.as_slice())
                };
                let (n, t) = (c.dims.n as usize, c.dims.t.max(1) as usize);
                let row_bytes = blocks.len() / n.max(1);
                let segs = spread(i % n.max(1), n);
                for &r in &segs {
                    s.weights
                        .extend(blocks.get(r * row_bytes..(r + 1) * row_bytes)?);
                }
                for tok in 0..t {
                    for &r in &segs {
                        sub_out.extend(elems(tok * n + r, 1)?);
                    }
                }
                s.class = match c.class {
                    KernelClass::MulMatVecPlanes => KernelClass::MulMatVec,
                    KernelClass::MulMatPlanes => KernelClass::MulMat,
                    other => other,
                };
                s.dims.n = segs.len() as u64;
                s.x = c.x.clone();
                let row_elems = row_bytes / bb * be;
                Some((blocks, segs, row_elems))
            }
            KernelClass::HadamardRotate => return None,
        };
        Some(Probe {
            case: s,
            out: sub_out,
            stream,
        })
    }

    /// Whether a reading that decodes `qk` elements from each `bb` bytes may match: its
    /// expectation meets every output of the probe rows (an output it misses is missed in the
    /// whole case too). A reading of another block geometry whose blocks do not tile a row is
    /// always admitted, judged on the whole case. `decode` must read a short block stream the
    /// way [`decode_stream`](super::diagnose) does: missing blocks as zeros.
    pub(super) fn admits(&self, p: Precision, qk: usize, bb: usize, decode: WeightDecoder) -> bool {
        let same_blocks = self
            .case
            .format
            .codec()
            .is_ok_and(|c| (c.block_elems(), c.block_bytes()) == (qk, bb));
        let meets = |d: WeightDecoder| {
            expected_with(&self.case, p, d).is_ok_and(|e| judge(&self.case, &e, &self.out).bad == 0)
        };
        let Some((stream, segs, seg_elems)) = self.stream.as_ref().filter(|_| !same_blocks) else {
            return meets(decode);
        };
        if qk == 0 || seg_elems % qk != 0 {
            return true;
        }
        // Each probed segment's elements, decoded from where the whole-stream reading takes
        // them; blocks past the data read as zeros there and here alike (a segment's bytes
        // start on a block boundary of the reading).
        let per = seg_elems / qk * bb;
        let by_segment = |_: &[u8], o: &mut [f32]| -> crate::error::Result<()> {
            for (s, o) in segs.iter().zip(o.chunks_mut(*seg_elems)) {
                let from = (s * per).min(stream.len());
                let to = ((s + 1) * per).min(stream.len());
                decode(&stream[from..to], o)?;
            }
            Ok(())
        };
        meets(&by_segment)
    }
}
