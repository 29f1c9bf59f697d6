//! Byte comparison over the thread budget, and the value-level account of one object whose
//! bytes differ: its first differing byte mapped to plane / row / group / element, the decoded
//! values there, and counts of differing bytes, rows and values.

use super::report::{Location, ObjectDiff, Verdict};
use crate::codec::{Codec, TernaryType};
use crate::error::Result;
use crate::geometry::{Plane, RowSplitGeometry};
use crate::gguf::TensorInfo;
use crate::ninfer::{Artifact, Object};
use crate::planes::{disassemble_rows, BlockLayout};

/// Bytes per work item of [`bytes_equal`]: large enough that a thread streams, small enough
/// that every core gets work on a multi-GB file.
const CHUNK: u64 = 8 << 20;

/// Whether `a` and `b` are equal, compared in chunks spread over the thread budget.
pub fn bytes_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if (a.len() as u64) < 2 * CHUNK {
        return a == b;
    }
    chunk_verdicts(a, b).into_iter().all(|same| same)
}

/// Which 8 MiB chunks of the common prefix of two files are equal: one parallel
/// pass that answers "identical?" for the whole file and, when it is not, which byte ranges
/// need no second look ([`ChunkMap::equal`]).
pub struct ChunkMap {
    same: Vec<bool>,
}

impl ChunkMap {
    /// Compares the common prefix of `a` and `b`.
    pub fn of(a: &[u8], b: &[u8]) -> ChunkMap {
        let n = a.len().min(b.len());
        ChunkMap {
            same: chunk_verdicts(&a[..n], &b[..n]),
        }
    }

    /// Whether every chunk is equal.
    pub fn all_equal(&self) -> bool {
        self.same.iter().all(|s| *s)
    }

    /// True when file range `start..start + len` (the same in both files) lies in equal
    /// chunks only; false means "unknown", not "different".
    pub fn equal(&self, start: u64, len: u64) -> bool {
        if len == 0 {
            return true;
        }
        let (lo, hi) = (start / CHUNK, (start + len - 1) / CHUNK);
        hi < self.same.len() as u64 && (lo..=hi).all(|c| self.same[c as usize])
    }
}

/// Per-chunk equality of two equally long slices, over the thread budget.
fn chunk_verdicts(a: &[u8], b: &[u8]) -> Vec<bool> {
    let chunks = (a.len() as u64).div_ceil(CHUNK);
    crate::pool::ranges_with(
        crate::pool::global(),
        std::thread::Builder::new,
        0..chunks,
        crate::pool::threads(),
        1,
        |r| {
            (r.start..r.end)
                .map(|c| {
                    let lo = (c * CHUNK) as usize;
                    let hi = (((c + 1) * CHUNK) as usize).min(a.len());
                    a[lo..hi] == b[lo..hi]
                })
                .collect()
        },
    )
}

/// The stored word of a contiguous value, for ULP distances in its own width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// IEEE binary32.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE binary16.
    F16,
    /// Not a float word (quantized blocks, integers): ULPs of the decoded f32.
    Decoded,
}

/// How an object's bytes are structured, for locating a difference.
#[derive(Clone, Debug)]
pub enum ObjectLayout {
    /// A row-split ternary object (base / high / scale planes).
    Planes {
        /// Its plane geometry.
        geom: RowSplitGeometry,
        /// Its ggml block layout.
        layout: BlockLayout,
        /// The ggml codec its rows decode with.
        codec: Codec,
    },
    /// Rows of equal length (a GGUF tensor, a contiguous object).
    Rows {
        /// Bytes per row.
        row_bytes: usize,
        /// Bytes per group (a ggml block, or one word).
        group_bytes: usize,
        /// The decoder.
        codec: Codec,
        /// The word, for ULPs.
        word: Word,
        /// `blocks` (ggml) or `words` (contiguous).
        plane: &'static str,
    },
    /// Not decoded (resources, template formats): bytes only.
    Opaque,
}

impl ObjectLayout {
    /// The layout of a `.ninfer` object.
    pub fn of_ninfer(a: &Artifact<'_>, o: &Object) -> ObjectLayout {
        let Some((format, layout)) = o.format_layout() else {
            return ObjectLayout::Opaque;
        };
        if layout == "row-split-k128-v1" {
            let ty = TernaryType::of_format_name(format);
            let view = a.row_split(&o.name).ok();
            if let (Some(ty), Some(v)) = (ty, view) {
                if let (Ok(bl), Ok(codec)) =
                    (v.block_layout(), Codec::for_ggml_type_checked(ty.ggml()))
                {
                    return ObjectLayout::Planes {
                        geom: v.geom,
                        layout: bl,
                        codec,
                    };
                }
            }
            return ObjectLayout::Opaque;
        }
        let (codec, word, w) = match format {
            "FP32" => (Codec::F32, Word::F32, 4),
            "BF16" => (Codec::Bf16, Word::Bf16, 2),
            "I32" => (Codec::I32, Word::Decoded, 4),
            _ => return ObjectLayout::Opaque,
        };
        let last = o.shape().last().copied().unwrap_or(1).max(1) as usize;
        ObjectLayout::Rows {
            row_bytes: last * w,
            group_bytes: w,
            codec,
            word,
            plane: "words",
        }
    }

    /// The layout of a GGUF tensor (rows of `ne[0]` elements).
    pub fn of_gguf(t: &TensorInfo<'_>) -> ObjectLayout {
        let Some(codec) = Codec::for_ggml_type(t.ggml) else {
            return ObjectLayout::Opaque;
        };
        let rows = (t.n_elements / t.ne[0].max(1)).max(1);
        let word = match t.ggml.name.as_str() {
            "F32" => Word::F32,
            "F16" => Word::F16,
            "BF16" => Word::Bf16,
            _ => Word::Decoded,
        };
        ObjectLayout::Rows {
            row_bytes: (t.nbytes / rows) as usize,
            group_bytes: t.ggml.block_bytes as usize,
            codec,
            word,
            plane: if word == Word::Decoded {
                "blocks"
            } else {
                "words"
            },
        }
    }
}

/// A float's bits mapped to an order-preserving unsigned integer (`bits` of `width` bits).
fn ordered(bits: u32, width: u32) -> i64 {
    let sign = 1u32 << (width - 1);
    if bits & sign != 0 {
        -i64::from(bits & (sign - 1))
    } else {
        i64::from(bits)
    }
}

/// ULPs between two values in `word` (raw words `ra`, `rb` where the word is a float).
fn ulps(word: Word, x: f32, y: f32, raw: Option<(u32, u32)>) -> Option<u64> {
    if x.is_nan() || y.is_nan() {
        return None;
    }
    let (a, b, width) = match (word, raw) {
        (Word::Bf16 | Word::F16, Some((a, b))) => (a, b, 16),
        _ => (x.to_bits(), y.to_bits(), 32),
    };
    Some(ordered(a, width).abs_diff(ordered(b, width)))
}

fn same_value(x: f32, y: f32) -> bool {
    x == y || (x.is_nan() && y.is_nan())
}

/// Counts of differing rows and values, and the largest ULP.
#[derive(Default)]
struct Tally {
    rows: u64,
    values: u64,
    max_ulp: Option<u64>,
}

impl Tally {
    fn add_row(
        &mut self,
        word: Word,
        xa: &[f32],
        xb: &[f32],
        raw: &dyn Fn(usize) -> Option<(u32, u32)>,
    ) {
        self.rows += 1;
        for (i, (x, y)) in xa.iter().zip(xb).enumerate() {
            if !same_value(*x, *y) {
                self.values += 1;
                if let Some(u) = ulps(word, *x, *y, raw(i)) {
                    self.max_ulp = Some(self.max_ulp.map_or(u, |m| m.max(u)));
                }
            }
        }
    }
}

/// The first element of two decoded rows whose values differ, as (element, a, b).
fn first_value(xa: &[f32], xb: &[f32]) -> Option<(usize, f32, f32)> {
    xa.iter()
        .zip(xb)
        .position(|(x, y)| !same_value(*x, *y))
        .map(|i| (i, xa[i], xb[i]))
}

/// The account of one object whose bytes (or description) differ.
pub fn object_diff(name: &str, layout: &ObjectLayout, a: &[u8], b: &[u8]) -> Result<ObjectDiff> {
    let n = a.len().min(b.len());
    let first_byte = a[..n]
        .iter()
        .zip(&b[..n])
        .position(|(x, y)| x != y)
        .unwrap_or(n);
    let differing_bytes = a[..n].iter().zip(&b[..n]).filter(|(x, y)| x != y).count() as u64
        + a.len().abs_diff(b.len()) as u64;
    let mut d = ObjectDiff {
        name: name.to_string(),
        verdict: Verdict::Differs,
        description: String::new(),
        bytes: [a.len() as u64, b.len() as u64],
        differing_bytes,
        differing_rows: None,
        differing_values: None,
        max_ulp: None,
        first: Some(Location {
            byte: first_byte as u64,
            plane: "bytes".into(),
            ..Default::default()
        }),
    };
    if a.len() != b.len() || differing_bytes == 0 {
        return Ok(d);
    }
    match layout {
        ObjectLayout::Planes {
            geom,
            layout,
            codec,
        } => planes(&mut d, geom, layout, *codec, a, b)?,
        ObjectLayout::Rows {
            row_bytes,
            group_bytes,
            codec,
            word,
            plane,
        } => rows(&mut d, *row_bytes, *group_bytes, *codec, *word, plane, a, b)?,
        ObjectLayout::Opaque => {}
    }
    Ok(d)
}

/// The plane holding object byte `at`, with the byte's row and group (`padding` outside).
fn plane_of(g: &RowSplitGeometry, at: u64) -> (&'static str, Option<(u64, u64)>) {
    for (p, name) in [
        (Plane::Base, "base"),
        (Plane::High, "high"),
        (Plane::Scale, "scale"),
    ] {
        let (off, len, rb) = (g.plane_offset(p), g.plane_bytes(p), g.row_bytes(p));
        if len > 0 && at >= off && at < off + len && rb > 0 {
            let (row, within) = ((at - off) / rb, (at - off) % rb);
            let per_group = rb / g.groups_per_row.max(1);
            return (name, Some((row, within / per_group.max(1))));
        }
    }
    ("padding", None)
}

fn planes(
    d: &mut ObjectDiff,
    g: &RowSplitGeometry,
    layout: &BlockLayout,
    codec: Codec,
    a: &[u8],
    b: &[u8],
) -> Result<()> {
    let decode = |bytes: &[u8], r: u64| -> Result<Vec<f32>> {
        codec.decode_to_vec(&disassemble_rows(layout, g, bytes, r..r + 1)?)
    };
    let mut tally = Tally::default();
    for r in 0..g.n {
        let differs = Plane::ALL.iter().any(|&p| {
            let s = g.row_span(p, r);
            a[s.start as usize..s.end as usize] != b[s.start as usize..s.end as usize]
        });
        if differs {
            let (xa, xb) = (decode(a, r)?, decode(b, r)?);
            tally.add_row(Word::Decoded, &xa, &xb, &|_| None);
        }
    }
    if let Some(loc) = d.first.as_mut() {
        let (plane, at) = plane_of(g, loc.byte);
        loc.plane = plane.into();
        if let Some((row, group)) = at {
            loc.row = Some(row);
            loc.group = Some(group);
            let (xa, xb) = (decode(a, row)?, decode(b, row)?);
            if let Some((e, x, y)) = first_value(&xa, &xb) {
                loc.element = Some(e as u64);
                loc.a_value = Some(f64::from(x));
                loc.b_value = Some(f64::from(y));
                loc.ulp = ulps(Word::Decoded, x, y, None);
            }
        }
    }
    finish(d, tally);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn rows(
    d: &mut ObjectDiff,
    row_bytes: usize,
    group_bytes: usize,
    codec: Codec,
    word: Word,
    plane: &str,
    a: &[u8],
    b: &[u8],
) -> Result<()> {
    let row_bytes = row_bytes.max(1);
    let w = match word {
        Word::F32 => 4,
        Word::Bf16 | Word::F16 => 2,
        Word::Decoded => 0,
    };
    let raw_at = |bytes: &[u8], lo: usize, i: usize| -> u32 {
        let at = lo + i * w;
        match w {
            4 => u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]),
            _ => u32::from(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
        }
    };
    let mut tally = Tally::default();
    let mut first_row_values = None;
    let first = d.first.as_ref().map_or(0, |l| l.byte as usize);
    for (r, (ra, rb)) in a.chunks(row_bytes).zip(b.chunks(row_bytes)).enumerate() {
        if ra == rb {
            continue;
        }
        let (xa, xb) = (codec.decode_to_vec(ra)?, codec.decode_to_vec(rb)?);
        let raw = |i: usize| (w > 0).then(|| (raw_at(ra, 0, i), raw_at(rb, 0, i)));
        tally.add_row(word, &xa, &xb, &raw);
        if r == first / row_bytes {
            first_row_values = first_value(&xa, &xb).map(|(e, x, y)| (e, x, y, raw(e)));
        }
    }
    if let Some(loc) = d.first.as_mut() {
        loc.plane = plane.into();
        loc.row = Some((first / row_bytes) as u64);
        if word == Word::Decoded {
            loc.group = Some(((first % row_bytes) / group_bytes.max(1)) as u64);
        }
        if let Some((e, x, y, raw)) = first_row_values {
            loc.element = Some(e as u64);
            loc.a_value = Some(f64::from(x));
            loc.b_value = Some(f64::from(y));
            loc.ulp = ulps(word, x, y, raw);
        }
    }
    finish(d, tally);
    Ok(())
}

fn finish(d: &mut ObjectDiff, t: Tally) {
    d.differing_rows = Some(t.rows);
    d.differing_values = Some(t.values);
    d.max_ulp = t.max_ulp;
    if t.values == 0 {
        d.verdict = Verdict::SameValues;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_are_counted_in_the_stored_word() {
        assert_eq!(
            ulps(Word::F32, 1.0, f32::from_bits(1.0f32.to_bits() + 3), None),
            Some(3)
        );
        // Across zero: +0 and the smallest negative subnormal are one apart.
        assert_eq!(ulps(Word::F32, 0.0, -f32::from_bits(1), None), Some(1));
        assert_eq!(ulps(Word::F32, 0.0, -0.0, None), Some(0));
        // bf16 1.0 = 0x3f80; the next is 0x3f81: one bf16 ulp, not 65536 f32 ulps.
        assert_eq!(
            ulps(Word::Bf16, 1.0, 1.0078125, Some((0x3f80, 0x3f81))),
            Some(1)
        );
        assert_eq!(ulps(Word::F32, f32::NAN, 1.0, None), None);
    }

    #[test]
    fn bytes_equal_spans_chunks_and_catches_one_byte() {
        let a: Vec<u8> = (0..(3 * CHUNK as usize + 5))
            .map(|i| (i % 251) as u8)
            .collect();
        assert!(bytes_equal(&a, &a.clone()));
        for at in [0, CHUNK as usize, a.len() - 1] {
            let mut b = a.clone();
            b[at] ^= 1;
            assert!(!bytes_equal(&a, &b), "{at}");
        }
        assert!(!bytes_equal(&a, &a[1..]));
    }

    #[test]
    fn chunk_map_knows_only_ranges_in_equal_chunks() {
        let a: Vec<u8> = (0..(3 * CHUNK as usize)).map(|i| (i % 253) as u8).collect();
        let mut b = a.clone();
        b[CHUNK as usize + 7] ^= 1;
        let m = ChunkMap::of(&a, &b);
        assert!(!m.all_equal());
        assert!(m.equal(0, CHUNK) && m.equal(2 * CHUNK, CHUNK));
        // Any range touching the middle chunk is not known equal (it may differ).
        assert!(!m.equal(CHUNK - 1, 2) && !m.equal(CHUNK + 100, 1));
        // Beyond the compared prefix nothing is known.
        assert!(!m.equal(3 * CHUNK - 1, 2));
        assert!(m.equal(5, 0));
    }

    #[test]
    fn padding_bytes_differ_with_the_same_values() {
        // Words layout: a differing byte beyond every value changes no value only if it is
        // padding; in a contiguous object there is none, so a changed word always differs.
        let a = 1.5f32.to_le_bytes().repeat(4);
        let mut b = a.clone();
        b[5] ^= 0x01;
        let l = ObjectLayout::Rows {
            row_bytes: 8,
            group_bytes: 4,
            codec: Codec::F32,
            word: Word::F32,
            plane: "words",
        };
        let d = object_diff("x", &l, &a, &b).unwrap();
        assert_eq!(d.verdict, Verdict::Differs);
        let f = d.first.unwrap();
        assert_eq!((f.byte, f.row, f.element), (5, Some(0), Some(1)));
        assert_eq!(f.ulp, Some(256));
        // -0.0 and +0.0: different bytes, the same value.
        let z = 0.0f32.to_le_bytes().to_vec();
        let nz = (-0.0f32).to_le_bytes().to_vec();
        let d = object_diff("z", &l, &z, &nz).unwrap();
        assert_eq!(d.verdict, Verdict::SameValues);
    }
}
