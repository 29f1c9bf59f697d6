//! Failure localisation for `check-reader` (issue #27): when a reader accepts a case but its
//! values digest differs, name the tensor (or codec vector), the first differing row and
//! element with both values, the case's spec anchor, and — when one of the classic wrong
//! decoders below reproduces the reader's digest — the bug it "looks like".
//!
//! Inputs, in order of preference: the reader's own values (an adapter that declares
//! `"localize": true` answers a second request with `observation.localize`, PROTOCOL.md §4.7),
//! the reader's per-row digests (`rows_sha256` of codec observations), and the values of a
//! known wrong decoder that reproduces the reader's digest. Every wrong decoder is a function
//! over the case's bytes (no subprocess).

use serde_json::Value;
use std::path::Path;

use super::manifest::CaseEntry;
use super::observe::values_sha256;
use crate::codec::Codec;
use crate::gguf::{self, Id42Policy, Mode, Options};

/// One classic decoder bug, reimplemented over a block stream.
pub struct BugClass {
    /// Short id (`reversed-2bit-order`).
    // Read by the tests and the `internals` API (the CLI prints `looks_like`).
    #[cfg_attr(not(any(test, feature = "internals")), allow(dead_code))]
    pub id: &'static str,
    /// The "looks like" text.
    pub looks_like: &'static str,
    /// The same in a few words for the one-screen line, as the generic hints read
    /// (`SYMPTOM: WHERE TO LOOK`, e.g. `qh/d swapped: planes`).
    pub short: &'static str,
    /// The codecs the bug applies to.
    pub codecs: &'static [Codec],
    /// The decoding rule it breaks: an anchor of `spec/codecs.md#codec-rules`.
    pub rule: &'static str,
    wrong: fn(Codec, &[u8]) -> Option<Vec<f32>>,
}

/// Block size (`spec/codecs.md#rule-block-size`); the five rules are `#codec-rules`.
pub const RULE_BLOCK_SIZE: &str = "spec/codecs.md#rule-block-size";
/// Scale type and place (`spec/codecs.md#rule-scale-type`).
pub const RULE_SCALE_TYPE: &str = "spec/codecs.md#rule-scale-type";
/// Code map (`spec/codecs.md#rule-code-map`).
pub const RULE_CODE_MAP: &str = "spec/codecs.md#rule-code-map";
/// Element and digit order (`spec/codecs.md#rule-digit-order`).
pub const RULE_DIGIT_ORDER: &str = "spec/codecs.md#rule-digit-order";
/// Tail blocks (`spec/codecs.md#rule-tail`).
pub const RULE_TAIL: &str = "spec/codecs.md#rule-tail";

/// The known wrong decoders (the bug classes of `conformance/adapters/stubs/`).
pub const BUGS: &[BugClass] = &[
    BugClass {
        id: "reversed-2bit-order",
        looks_like: "reversed 2-bit order (element j read from bits 6-2*(j%4) of its code byte, \
                     not bits 2*(j%4) LSB first)",
        short: "reversed 2-bit order: digit order",
        codecs: &[Codec::Pq2_0, Codec::Q2_0G64, Codec::Tq2_0],
        rule: RULE_DIGIT_ORDER,
        wrong: reversed_2bit,
    },
    BugClass {
        id: "planar-2bit-layout",
        looks_like: "planar 2-bit layout (byte j of a 32-element group read as elements j, j+8, \
                     j+16, j+24: another fork's Q2_0S order)",
        short: "planar 2-bit layout: digit order",
        codecs: &[Codec::Pq2_0, Codec::Q2_0G64],
        rule: RULE_DIGIT_ORDER,
        wrong: planar_2bit,
    },
    BugClass {
        id: "scale-wrong-end",
        looks_like: "scale read from the wrong end of the block",
        short: "scale at wrong end: scale",
        codecs: &[
            Codec::Pq2_0,
            Codec::Q2_0G64,
            Codec::Ptq1_0,
            Codec::Tq1_0,
            Codec::Tq2_0,
            Codec::Q1_0,
            Codec::Q8_0,
        ],
        rule: RULE_SCALE_TYPE,
        wrong: scale_wrong_end,
    },
    BugClass {
        id: "high-plane-dropped",
        looks_like: "high trit plane (qh) ignored (read as zero bytes)",
        short: "qh ignored: planes",
        codecs: &[Codec::Ptq1_0, Codec::Tq1_0],
        rule: RULE_DIGIT_ORDER,
        wrong: drop_high,
    },
    BugClass {
        id: "one-trit-flipped",
        looks_like: "one trit decoded wrongly (-1 <-> +1 at element 5 of every block)",
        short: "one trit flipped: code map",
        codecs: &[Codec::Ptq1_0, Codec::Tq1_0],
        rule: RULE_CODE_MAP,
        wrong: flip_trit_5,
    },
    BugClass {
        id: "ptq1-sequential-order",
        looks_like: "PTQ1_0 trits read sequentially (byte e/5, digit e%5) instead of the staged \
                     digit order (spec/codecs.md#ptq1-0-digit-order)",
        short: "trits sequential: digit order",
        codecs: &[Codec::Ptq1_0],
        rule: RULE_DIGIT_ORDER,
        wrong: ptq1_sequential,
    },
    BugClass {
        id: "ptq1-sequential-order-qh4",
        looks_like: "PTQ1_0 trits read sequentially (byte e/5, digit e%5; the qh bytes 4 digits \
                     each) instead of the staged digit order (spec/codecs.md#ptq1-0-digit-order)",
        short: "trits sequential, qh 4: digit order",
        codecs: &[Codec::Ptq1_0],
        rule: RULE_DIGIT_ORDER,
        wrong: ptq1_sequential_qh4,
    },
    BugClass {
        id: "planes-high-scale-swapped",
        looks_like: "planes high and scale swapped (each read at the other's offset; in a PTQ1_0 \
                     block the qh bytes 24..26 and the scale d 26..28 exchanged)",
        short: "qh/d swapped: planes",
        codecs: &[Codec::Ptq1_0],
        rule: RULE_BLOCK_PLANE,
        wrong: swap_high_scale,
    },
];

/// The plane names and which block bytes each plane holds (`spec/geometry.md#block-plane`).
pub const RULE_BLOCK_PLANE: &str = "spec/geometry.md#block-plane";

/// Digit `n` of a base-3 byte by the PTQ1_0 digit formula (`spec/codecs.md#ptq1-0-digit-formula`).
fn trit(b: u8, n: usize) -> i32 {
    let pow3 = [1u8, 3, 9, 27, 81];
    let m = b.wrapping_mul(pow3.get(n).copied().unwrap_or(1));
    ((u16::from(m) * 3) >> 8) as i32
}

fn ptq1_sequential_with(bytes: &[u8], at: fn(usize) -> (usize, usize)) -> Option<Vec<f32>> {
    let c = Codec::Ptq1_0;
    let bb = c.block_bytes();
    if bytes.len() % bb != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / bb * 128);
    for blk in bytes.chunks(bb) {
        let d = crate::codec::f16_to_f32(u16::from_le_bytes([*blk.get(26)?, *blk.get(27)?]));
        for e in 0..128 {
            let (byte, digit) = at(e);
            out.push((trit(*blk.get(byte)?, digit) - 1) as f32 * d);
        }
    }
    Some(out)
}

fn ptq1_sequential(_: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    ptq1_sequential_with(bytes, |e| (e / 5, e % 5))
}

fn ptq1_sequential_qh4(_: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    ptq1_sequential_with(bytes, |e| {
        if e < 120 {
            (e / 5, e % 5)
        } else {
            (24 + (e - 120) / 4, (e - 120) % 4)
        }
    })
}

/// The code-byte range and scale range of a block, per codec (`spec/codecs.md` layouts).
fn code_bytes(c: Codec) -> Option<std::ops::Range<usize>> {
    match c {
        Codec::Pq2_0 => Some(2..34),
        Codec::Q2_0G64 => Some(2..18),
        Codec::Tq2_0 => Some(0..64),
        _ => None,
    }
}

fn scale_at(c: Codec) -> Option<(usize, usize)> {
    // (where the scale is, where the wrong reader takes it from)
    let b = c.block_bytes();
    match c {
        Codec::Pq2_0 | Codec::Q2_0G64 | Codec::Q1_0 | Codec::Q8_0 => Some((0, b - 2)),
        Codec::Ptq1_0 | Codec::Tq1_0 | Codec::Tq2_0 => Some((b - 2, 0)),
        _ => None,
    }
}

fn per_block(c: Codec, bytes: &[u8], f: impl Fn(&mut [u8])) -> Option<Vec<f32>> {
    let bb = c.block_bytes();
    if bb == 0 || bytes.len() % bb != 0 {
        return None;
    }
    let mut out = bytes.to_vec();
    for block in out.chunks_mut(bb) {
        f(block);
    }
    c.decode_to_vec(&out).ok()
}

fn reversed_2bit(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    let r = code_bytes(c)?;
    per_block(c, bytes, |b| {
        for x in b[r.clone()].iter_mut() {
            let v = *x;
            *x = (v >> 6) | ((v >> 2) & 0x0c) | ((v << 2) & 0x30) | (v << 6);
        }
    })
}

fn planar_2bit(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    let r = code_bytes(c)?;
    if !matches!(c, Codec::Pq2_0 | Codec::Q2_0G64) {
        return None;
    }
    per_block(c, bytes, |b| {
        let old = b[r.clone()].to_vec();
        let codes = &mut b[r.clone()];
        codes.fill(0);
        for e in 0..old.len() * 4 {
            let src = old.get((e / 32) * 8 + e % 8).copied().unwrap_or(0);
            let code = (src >> (2 * ((e % 32) / 8))) & 3;
            if let Some(d) = codes.get_mut(e / 4) {
                *d |= code << (2 * (e % 4));
            }
        }
    })
}

fn scale_wrong_end(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    let (at, from) = scale_at(c)?;
    per_block(c, bytes, |b| {
        b.copy_within(from..from + 2, at);
    })
}

fn drop_high(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    let r = match c {
        Codec::Ptq1_0 => 24..26,
        Codec::Tq1_0 => 48..52,
        _ => return None,
    };
    per_block(c, bytes, |b| b[r.clone()].fill(0))
}

/// The high and scale planes exchanged: a PTQ1_0 object's two 2-byte-per-group planes, so a
/// reader that takes one plane's offset for the other's reads whole planes of the right size.
fn swap_high_scale(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    if c != Codec::Ptq1_0 {
        return None;
    }
    per_block(c, bytes, |b| {
        let (qh, d) = ([b[24], b[25]], [b[26], b[27]]);
        b[24..26].copy_from_slice(&d);
        b[26..28].copy_from_slice(&qh);
    })
}

fn flip_trit_5(c: Codec, bytes: &[u8]) -> Option<Vec<f32>> {
    if !matches!(c, Codec::Ptq1_0 | Codec::Tq1_0) {
        return None;
    }
    let mut v = c.decode_to_vec(bytes).ok()?;
    for block in v.chunks_mut(c.block_elems()) {
        if let Some(x) = block.get_mut(5) {
            *x = -*x;
        }
    }
    Some(v)
}

/// The `spec/codecs.md` anchor of a codec.
pub fn codec_anchor(c: Codec) -> String {
    let a = match c {
        Codec::Q2_0sPlanar => "q2-0s".to_string(),
        Codec::F32 | Codec::F16 | Codec::Bf16 | Codec::I32 => "plain-types".to_string(),
        other => other.name().replace('_', "-"),
    };
    format!("spec/codecs.md#{a}")
}

/// What was decoded wrongly: a codec vector or a GGUF tensor.
pub struct Target {
    /// `tensor 'w' (type 142, ne [256, 3])` or `vector (pq2_0, 4 rows x 1024)`.
    pub label: String,
    /// The tensor name (`None` for a codec vector).
    pub tensor: Option<String>,
    /// Its codec.
    pub codec: Codec,
    /// Its block bytes.
    pub bytes: Vec<u8>,
    /// Elements per row.
    pub cols: usize,
    /// Elements per stored row (`.ninfer` ternary objects pad rows to whole blocks; else `cols`).
    pub stored_cols: usize,
    /// The reader's values digest.
    pub got_sha256: Option<String>,
    /// The reader's per-row digests, if it sent them.
    pub got_rows: Option<Vec<String>>,
    /// GGUF: whether the reader's raw tensor bytes (`data_sha256`) match the expected ones
    /// (`None` when either digest is absent or for other kinds).
    pub raw_same: Option<bool>,
}

/// The largest case file localisation reads (a hostile corpus may hold any size; a larger
/// case is reported without a location).
pub const MAX_CASE_BYTES: u64 = 64 << 20;
/// The most elements localisation decodes for one target (16 Mi f32 = 64 MiB per copy; at
/// most three copies live at once: expected, one wrong decoder's, the reader's).
pub const MAX_ELEMENTS: usize = 1 << 24;

/// Whether decoding `t` stays within [`MAX_ELEMENTS`].
fn within_cap(t: &Target) -> bool {
    t.codec
        .blocks_in(t.bytes.len())
        .ok()
        .and_then(|n| n.checked_mul(t.codec.block_elems()))
        .is_some_and(|n| n <= MAX_ELEMENTS)
}

/// The per-row values digests a reader sent beside a vector, tensor or object (`rows_sha256`,
/// PROTOCOL.md §4.1 and §4.7): any reader that sends them gets the first differing row named,
/// without the element-level opt-in.
fn row_digests(observed: &Value) -> Option<Vec<String>> {
    observed
        .get("rows_sha256")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
}

/// Finds the first tensor/vector of `case` whose values digest the reader got wrong.
pub fn find_target(case: &CaseEntry, corpus: &Path, got: &Value) -> Option<Target> {
    let path = corpus.join(&case.file);
    // Sized before it is read: localisation is a courtesy, never worth gigabytes.
    if std::fs::metadata(&path).ok()?.len() > MAX_CASE_BYTES {
        return None;
    }
    let bytes = crate::fsio::read_input(&path).ok()?;
    let want = case.expect.observation.as_ref()?;
    match case.kind.as_str() {
        "codec" => {
            let name = case.params.get("codec").and_then(Value::as_str)?;
            let codec = Codec::from_name(name)?;
            let rows = case.params.get("rows").and_then(Value::as_u64)?;
            let cols = case.params.get("cols").and_then(Value::as_u64)?;
            if got.get("sha256") == want.get("sha256") {
                return None;
            }
            Some(Target {
                label: format!("vector ({name}, {rows} rows x {cols})"),
                tensor: None,
                codec,
                bytes,
                cols: usize::try_from(cols).ok()?,
                stored_cols: usize::try_from(cols).ok()?,
                got_sha256: got.get("sha256").and_then(Value::as_str).map(String::from),
                got_rows: row_digests(got),
                raw_same: None,
            })
        }
        "gguf" => {
            let mode = match case.params.get("mode").and_then(Value::as_str) {
                Some("spec") => Mode::Spec,
                _ => Mode::Strict,
            };
            if gguf::is_big_endian(&bytes) {
                return None;
            }
            let g = gguf::parse_with(
                &bytes,
                Options {
                    mode,
                    id42: Id42Policy::Auto,
                },
            )
            .ok()?;
            let got_tensors = got.get("tensors").and_then(Value::as_array)?;
            for t in &g.tensors {
                let Some(codec) = Codec::for_ggml_type(t.ggml) else {
                    continue;
                };
                let want_t = want
                    .get("tensors")
                    .and_then(Value::as_array)?
                    .iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(t.name))?;
                let got_t = got_tensors
                    .iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(t.name));
                let got_sha = got_t
                    .and_then(|x| x.get("values_sha256"))
                    .and_then(Value::as_str);
                if got_sha.is_none()
                    || got_sha == want_t.get("values_sha256").and_then(Value::as_str)
                {
                    continue;
                }
                let dims = t.dims();
                let cols = dims.first().copied().unwrap_or(0);
                return Some(Target {
                    label: format!("tensor '{}' (type {}, ne {:?})", t.name, t.type_id, dims),
                    tensor: Some(t.name.to_string()),
                    codec,
                    bytes: g.tensor_data(t).to_vec(),
                    cols: usize::try_from(cols).ok()?,
                    stored_cols: usize::try_from(cols).ok()?,
                    got_sha256: got_sha.map(String::from),
                    got_rows: got_t.and_then(row_digests),
                    raw_same: match (
                        got_t.and_then(|x| x.get("data_sha256")),
                        want_t.get("data_sha256"),
                    ) {
                        (Some(a), Some(b)) => Some(a == b),
                        _ => None,
                    },
                });
            }
            None
        }
        "ninfer" => {
            let got_objects = got.get("objects").and_then(Value::as_array)?;
            for want_o in want.get("objects").and_then(Value::as_array)? {
                let Some(want_sha) = want_o.get("values_sha256").and_then(Value::as_str) else {
                    continue;
                };
                let name = want_o.get("name").and_then(Value::as_str)?;
                let got_o = got_objects
                    .iter()
                    .find(|x| x.get("name").and_then(Value::as_str) == Some(name));
                let got_sha = got_o
                    .and_then(|x| x.get("values_sha256"))
                    .and_then(Value::as_str);
                if got_sha.is_none() || got_sha == Some(want_sha) {
                    continue;
                }
                let Ok(Some(t)) = super::observe::ninfer_ternary(&bytes, name) else {
                    continue;
                };
                let format = want_o.get("format").and_then(Value::as_str).unwrap_or("");
                return Some(Target {
                    // A `.ninfer` tensor is an object (PROTOCOL.md §4.2, `objects[i] (object "w")`).
                    label: format!("object '{name}' ({format}, shape [{}, {}])", t.n, t.k),
                    tensor: Some(name.to_string()),
                    codec: t.codec,
                    bytes: t.blocks,
                    cols: t.k,
                    stored_cols: t.k_pad,
                    got_sha256: got_sha.map(String::from),
                    got_rows: got_o.and_then(row_digests),
                    raw_same: None,
                });
            }
            None
        }
        _ => None,
    }
}

/// The rule anchor a generic hint points at (`None`: the data's place, not a decoding rule).
fn hint_rule(hint: &str) -> Option<&'static str> {
    if hint.starts_with("only the last block") {
        Some(RULE_TAIL)
    } else if hint.contains("stride") {
        Some(RULE_BLOCK_SIZE)
    } else if hint.contains("the block scale's type") {
        Some(RULE_SCALE_TYPE)
    } else if hint.contains("one code of the code map") {
        Some(RULE_CODE_MAP)
    } else if hint.starts_with("raw tensor bytes match") {
        Some("spec/codecs.md#codec-rules")
    } else if hint.starts_with("raw tensor bytes differ") {
        Some("spec/gguf.md#gguf-data-section")
    } else {
        None
    }
}

/// The signals that cost nothing when no known bug matches (issue #35): raw GGUF bytes equal
/// but values differ (the decoder), raw bytes differ (where the data is read from), or — with
/// the reader's values — only the last block of rows differs (tail handling).
fn generic_hint(t: &Target, reader: Option<&[f32]>, expected: &[f32]) -> Option<String> {
    if let Some(v) = reader {
        let cols = t.cols.max(1);
        let tail_from = cols.saturating_sub(t.codec.block_elems());
        let mut diff = v
            .iter()
            .zip(expected)
            .enumerate()
            .filter(|(_, (a, b))| canon(**a) != canon(**b))
            .map(|(i, _)| i % cols)
            .peekable();
        if diff.peek().is_some() && tail_from > 0 && diff.all(|c| c >= tail_from) {
            return Some(format!(
                "only the last block of a row differs (columns {tail_from}..{cols}): tail handling"
            ));
        }
        if let Some(h) = stride_hint(v, expected, cols, t.codec.block_elems().max(1)) {
            return Some(h);
        }
        if let Some(h) = one_code_hint(t, v, expected) {
            return Some(h);
        }
        if let Some(h) = scale_factor_hint(t, v, expected) {
            return Some(h);
        }
    }
    match t.raw_same {
        Some(true) => Some(
            "raw tensor bytes match, decoded values differ: the decoder (code map, digit order, \
             scale)"
                .into(),
        ),
        Some(false) => Some(
            "raw tensor bytes differ: where the data is read from (data offset, alignment, \
             tensor offset)"
                .into(),
        ),
        None => None,
    }
}

/// The block scale of every logical element of `t` (`None`: the codec has no 2-byte f16 scale
/// at a known place, or the bytes are not whole blocks).
fn element_scales(t: &Target, n: usize) -> Option<Vec<f32>> {
    let (at, _) = scale_at(t.codec)?;
    let (bb, be) = (t.codec.block_bytes(), t.codec.block_elems());
    let cols = t.cols.max(1);
    let stored = t.stored_cols.max(cols);
    (0..n)
        .map(|i| {
            let block = ((i / cols) * stored + i % cols) / be;
            let b = t.bytes.get(block * bb + at..block * bb + at + 2)?;
            Some(half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
        })
        .collect()
}

/// Errors confined to one code: every differing element — and every element — whose expected
/// value is the same multiple `m` of its block scale differs, and nothing else does (a code
/// map that gets one code wrong, e.g. code 3 of a 2-bit codec).
fn one_code_hint(t: &Target, v: &[f32], expected: &[f32]) -> Option<String> {
    let scales = element_scales(t, expected.len())?;
    let multiple = |i: usize| {
        let d = scales[i];
        (d.is_finite() && d != 0.0).then(|| expected[i] / d)
    };
    let first = (0..expected.len()).find(|&i| canon(v[i]) != canon(expected[i]))?;
    let m = multiple(first)?;
    let mut same = 0usize;
    let mut other_right = false;
    for i in 0..expected.len().min(v.len()) {
        let differs = canon(v[i]) != canon(expected[i]);
        match multiple(i) {
            Some(x) if x == m => {
                if !differs {
                    return None;
                }
                same += 1;
            }
            _ if differs => return None,
            _ => other_right = true,
        }
    }
    (other_right && same > 0).then(|| {
        format!(
            "only the elements whose expected value is {m}*d differ (all {same} of them): \
             one code of the code map"
        )
    })
}

/// Values right up to one factor per block (zeros stay zero, every nonzero value of a block
/// scaled alike, some factor not 1): the block scale is read wrongly (its type or its place).
fn scale_factor_hint(t: &Target, v: &[f32], expected: &[f32]) -> Option<String> {
    let cols = t.cols.max(1);
    let stored = t.stored_cols.max(cols);
    let be = t.codec.block_elems().max(1);
    let mut factor: std::collections::BTreeMap<usize, f32> = Default::default();
    let mut any_off = false;
    for (i, (a, e)) in v.iter().zip(expected).enumerate() {
        if *e == 0.0 {
            if *a != 0.0 {
                return None;
            }
            continue;
        }
        let r = a / e;
        if !r.is_finite() {
            return None;
        }
        let block = ((i / cols) * stored + i % cols) / be;
        let f = *factor.entry(block).or_insert(r);
        if (f - r).abs() > f.abs() * 1e-6 {
            return None;
        }
        any_off |= r != 1.0;
    }
    any_off.then(|| {
        "every value of a block is off by one factor (zeros stay zero): the block scale's type \
         or place"
            .to_string()
    })
}

/// Whether per-position error counts `c` describe a stride read wrong: the first position is
/// right everywhere, then from the first wrong one every later position is wrong too, and the
/// errors do not shrink toward the end (the later half holds at least as many as the earlier).
fn grows_from(c: &[usize]) -> Option<usize> {
    let first = c.iter().position(|&x| x > 0)?;
    let wrong = &c[first..];
    let (a, b) = wrong.split_at(wrong.len() / 2);
    let ok = first > 0
        && wrong.len() >= 2
        && wrong.iter().all(|&x| x > 0)
        && a.iter().sum::<usize>() <= b.iter().sum::<usize>();
    ok.then_some(first)
}

/// Errors that begin after the first block of every row and reach every later block (a block
/// or column stride), or begin after the first row and reach every later row (the row stride).
fn stride_hint(v: &[f32], expected: &[f32], cols: usize, block: usize) -> Option<String> {
    let rows = expected.len() / cols;
    let mut by_block = vec![0usize; cols.div_ceil(block)];
    let mut by_row = vec![0usize; rows];
    for (i, (a, b)) in v.iter().zip(expected).enumerate() {
        if canon(*a) != canon(*b) && i / cols < rows {
            by_block[(i % cols) / block] += 1;
            by_row[i / cols] += 1;
        }
    }
    if let Some(k) = grows_from(&by_block) {
        return Some(format!(
            "errors begin at column {} (block {k}) of each row and reach every later block: \
             a block or column stride read wrong",
            k * block
        ));
    }
    grows_from(&by_row).map(|r| {
        format!(
            "errors begin at row {r} and reach every later row while row 0 is right: the row \
             stride (bytes per row) read wrong"
        )
    })
}

/// The logical values of a target: each stored row's first `cols`.
fn trim(t: &Target, decoded: Vec<f32>) -> Vec<f32> {
    if t.stored_cols == t.cols || t.stored_cols == 0 {
        return decoded;
    }
    decoded
        .chunks(t.stored_cols)
        .flat_map(|row| row.iter().take(t.cols).copied())
        .collect()
}

/// The reader's values as sent in `observation.localize.f32_bits` (PROTOCOL.md §4.7).
pub fn reader_values(localize: &Value) -> Option<Vec<f32>> {
    localize
        .get("f32_bits")
        .and_then(Value::as_array)?
        .iter()
        .map(|x| {
            x.as_u64()
                .and_then(|b| u32::try_from(b).ok())
                .map(f32::from_bits)
        })
        .collect()
}

fn canon(v: f32) -> u32 {
    if v.is_nan() {
        0x7fc0_0000
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

fn show(v: f32) -> String {
    format!("{v:?} (0x{:08x})", v.to_bits())
}

/// The localisation of one failure, in parts (each also rendered into the detail line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Localization {
    /// The tensor name (GGUF) or `None` for a codec vector.
    pub tensor: Option<String>,
    /// `tensor 'w' (...)` / `vector (...)`.
    pub target: String,
    /// First differing row.
    pub row: Option<usize>,
    /// First differing element within that row.
    pub element: Option<usize>,
    /// The reader's value there.
    pub got: Option<f32>,
    /// The expected value there.
    pub expected: Option<f32>,
    /// The spec anchors of the case (and of its codec).
    pub spec: Vec<String>,
    /// The known bug that reproduces the reader's digest.
    pub looks_like: Option<String>,
    /// A generic signal when no known bug matches (raw bytes equal or not, only the tail).
    pub hint: Option<String>,
}

impl Localization {
    /// The `localization` object of a check-reader JSON result (schema check-reader-report):
    /// absent parts are omitted; values are numbers (omitted when not finite) with their f32
    /// bits beside them, so a NaN or a signed zero survives.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("target".into(), self.target.clone().into());
        if let Some(t) = &self.tensor {
            m.insert("tensor".into(), t.clone().into());
        }
        if let Some(r) = self.row {
            m.insert("row".into(), r.into());
        }
        if let Some(e) = self.element {
            m.insert("element".into(), e.into());
        }
        for (key, v) in [("reader", self.got), ("expected", self.expected)] {
            if let Some(v) = v {
                if let Some(n) = serde_json::Number::from_f64(f64::from(v)) {
                    m.insert(key.into(), Value::Number(n));
                }
                m.insert(
                    format!("{key}_bits"),
                    format!("0x{:08x}", v.to_bits()).into(),
                );
            }
        }
        m.insert("spec".into(), self.spec.clone().into());
        if let Some(l) = &self.looks_like {
            m.insert("looks_like".into(), l.clone().into());
        }
        if let Some(h) = &self.hint {
            m.insert("hint".into(), h.clone().into());
        }
        Value::Object(m)
    }

    /// One line: `tensor 'w' (...): row 0, element 1: reader -1.0 (0x...), expected 1.0 (0x...); spec: ...; looks like: ...`.
    pub fn text(&self) -> String {
        let mut s = self.target.clone();
        match (self.row, self.element, self.got, self.expected) {
            (Some(r), Some(e), Some(g), Some(x)) => s.push_str(&format!(
                ": first differing row {r}, element {e}: reader {}, expected {}",
                show(g),
                show(x)
            )),
            (Some(r), _, _, _) => s.push_str(&format!(
                ": first differing row {r} (declare \"localize\": true in the capabilities \
                 for the element and values, PROTOCOL.md §4.7)"
            )),
            _ => {}
        }
        if !self.spec.is_empty() {
            s.push_str(&format!("; spec: {}", self.spec.join(", ")));
        }
        if let Some(l) = &self.looks_like {
            s.push_str(&format!("; looks like: {l}"));
        }
        if let Some(h) = &self.hint {
            s.push_str(&format!("; hint: {h}"));
        }
        s
    }
}

impl Localization {
    /// The one-screen form: where (tensor or vector, row, element), got/want, the first words
    /// of the "looks like" hint and the most specific spec anchor (the last one listed).
    pub fn short(&self) -> String {
        // The noun of the full target label: `tensor` (GGUF) or `object` (`.ninfer`).
        let noun = if self.target.starts_with("object ") {
            "object"
        } else {
            "tensor"
        };
        let what = match &self.tensor {
            Some(t) => format!("{noun} '{t}'"),
            None => "vector".to_string(),
        };
        let mut s = match (self.row, self.element, self.got, self.expected) {
            (Some(r), Some(e), Some(g), Some(x)) => {
                format!("{what} row {r} el {e}: got {g:?}, want {x:?}")
            }
            (Some(r), ..) => format!("{what} row {r} differs"),
            _ => format!("{what} differs"),
        };
        if let Some(l) = &self.looks_like {
            let short = BUGS
                .iter()
                .find(|b| b.looks_like == l)
                .map_or_else(|| l.split(" (").next().unwrap_or(l), |b| b.short);
            s.push_str(&format!("; {short}"));
        } else if let Some(h) = &self.hint {
            // The generic signals in a few words (the full sentence is in the JSON and --verbose).
            let short = if h.starts_with("raw tensor bytes match") {
                "raw bytes match: decoder"
            } else if h.starts_with("raw tensor bytes differ") {
                "raw bytes differ: offset/alignment"
            } else if h.starts_with("only the last block") {
                "last block only: tail"
            } else if h.contains("the row stride") {
                "later rows drift: row stride"
            } else if h.contains("block or column stride") {
                "later blocks drift: stride"
            } else if h.contains("the block scale's type") {
                "off by one factor per block: scale"
            } else if h.contains("one code of the code map") {
                "one code wrong: code map"
            } else {
                h.split(" (").next().unwrap_or(h)
            };
            s.push_str(&format!("; {short}"));
        }
        if let Some(a) = self.spec.last() {
            s.push_str(&format!("; {a}"));
        }
        s
    }
}

/// Localises a values-digest failure of `case`: `got` is the reader's observation, `localize`
/// its optional `observation.localize` answer. `None` when no decoded values differ.
pub fn localize(
    case: &CaseEntry,
    corpus: &Path,
    got: &Value,
    localize: Option<&Value>,
) -> Option<Localization> {
    let t = find_target(case, corpus, got)?;
    if !within_cap(&t) {
        return None;
    }
    let expected = trim(&t, t.codec.decode_to_vec(&t.bytes).ok()?);
    let mut spec: Vec<String> = case.spec_refs.clone();
    let anchor = codec_anchor(t.codec);
    if !spec.iter().any(|s| s.starts_with(&anchor)) {
        spec.push(anchor);
    }
    // The known bug that reproduces the reader's digest (or its row digests).
    let mut looks_like = None;
    let mut bug_values = None;
    for bug in BUGS.iter().filter(|b| b.codecs.contains(&t.codec)) {
        let Some(v) = (bug.wrong)(t.codec, &t.bytes).map(|v| trim(&t, v)) else {
            continue;
        };
        if t.got_sha256.as_deref() == Some(values_sha256(&v).as_str()) {
            looks_like = Some(bug.looks_like.to_string());
            bug_values = Some(v);
            spec.push(bug.rule.to_string());
            break;
        }
    }
    let reader = localize
        .filter(|l| {
            l.get("tensor").and_then(Value::as_str) == t.tensor.as_deref() || t.tensor.is_none()
        })
        .and_then(reader_values)
        .filter(|v| v.len() == expected.len())
        .or(bug_values);
    let mut loc = Localization {
        tensor: t.tensor.clone(),
        target: t.label.clone(),
        spec,
        looks_like,
        ..Default::default()
    };
    let cols = t.cols.max(1);
    if loc.looks_like.is_none() {
        loc.hint = generic_hint(&t, reader.as_deref(), &expected);
        // The rule the hint points at comes last: the one-screen line shows the last anchor.
        if let Some(a) = loc.hint.as_deref().and_then(hint_rule) {
            loc.spec.push(a.to_string());
        }
    }
    if let Some(v) = reader {
        if let Some(i) = v
            .iter()
            .zip(&expected)
            .position(|(a, b)| canon(*a) != canon(*b))
        {
            loc.row = Some(i / cols);
            loc.element = Some(i % cols);
            loc.got = v.get(i).copied();
            loc.expected = expected.get(i).copied();
        }
    } else if let Some(rows) = &t.got_rows {
        loc.row = expected
            .chunks(cols)
            .zip(rows)
            .position(|(want, got)| values_sha256(want) != *got);
    }
    Some(loc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_2bit_is_an_involution_that_changes_values() {
        let mut block = vec![0u8; 34];
        block[0..2].copy_from_slice(&0x3c00u16.to_le_bytes());
        block[2] = 0b00_01_10_00;
        let right = Codec::Pq2_0.decode_to_vec(&block).unwrap();
        let wrong = reversed_2bit(Codec::Pq2_0, &block).unwrap();
        assert_ne!(right, wrong);
        assert_eq!(wrong[0], right[3]);
        assert_eq!(wrong[1], right[2]);
    }

    fn corpus() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance")
    }

    /// A GGUF tensor whose values digest is wrong and no known bug matches: equal raw bytes
    /// point at the decoder, different raw bytes at the data offset; a matched known bug
    /// gets no generic hint (its "looks like" says more).
    #[test]
    fn uncatalogued_gguf_bugs_get_a_raw_bytes_hint() {
        let m = crate::corpus::manifest::Manifest::load(&corpus().join("MANIFEST.json")).unwrap();
        let case = m
            .cases
            .iter()
            .find(|c| c.id == "gguf/y_type_pq2_0")
            .unwrap();
        let want = case.expect.observation.clone().unwrap();
        let mut got = want.clone();
        got["tensors"][0]["values_sha256"] = "00".repeat(32).into();
        let l = localize(case, &corpus(), &got, None).unwrap();
        assert!(l.looks_like.is_none());
        assert!(
            l.hint
                .as_deref()
                .unwrap()
                .starts_with("raw tensor bytes match"),
            "{l:?}"
        );
        assert!(
            l.short().contains("; raw bytes match: decoder;"),
            "{}",
            l.short()
        );
        got["tensors"][0]["data_sha256"] = "11".repeat(32).into();
        let l = localize(case, &corpus(), &got, None).unwrap();
        assert!(
            l.hint
                .as_deref()
                .unwrap()
                .starts_with("raw tensor bytes differ"),
            "{l:?}"
        );
        // Without the raw digest nothing is claimed.
        got["tensors"][0]
            .as_object_mut()
            .unwrap()
            .remove("data_sha256");
        assert!(localize(case, &corpus(), &got, None)
            .unwrap()
            .hint
            .is_none());
    }

    /// With the reader's values, a difference confined to each row's last block is named as
    /// tail handling; one elsewhere is not.
    #[test]
    fn a_difference_only_in_the_last_block_is_a_tail_hint() {
        let t = Target {
            label: "v".into(),
            tensor: None,
            codec: Codec::Pq2_0,
            bytes: Vec::new(),
            cols: 256,
            stored_cols: 256,
            got_sha256: None,
            got_rows: None,
            raw_same: None,
        };
        let expected = vec![1.0f32; 512];
        let mut tail = expected.clone();
        tail[255] = 0.0;
        tail[511] = 0.0;
        let h = generic_hint(&t, Some(&tail), &expected).unwrap();
        assert!(
            h.contains("tail handling") && h.contains("columns 128..256"),
            "{h}"
        );
        let mut head = tail.clone();
        head[3] = 0.0;
        assert!(generic_hint(&t, Some(&head), &expected).is_none());
    }

    /// Every known bug and every generic hint cites a rule anchor that exists in spec/codecs.md
    /// (or spec/gguf.md); an unknown hint cites none.
    #[test]
    fn hints_cite_rule_anchors_that_exist() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let exists = |a: &str| {
            let (file, id) = a.split_once('#').unwrap();
            std::fs::read_to_string(root.join(file))
                .unwrap()
                .contains(&format!("<a id=\"{id}\"></a>"))
        };
        for b in BUGS {
            assert!(exists(b.rule), "{}: {}", b.id, b.rule);
        }
        let hints = [
            "only the last block of a row differs (columns 128..256): tail handling",
            "errors begin at row 1 and reach every later row while row 0 is right: the row stride",
            "raw tensor bytes match, decoded values differ: the decoder",
            "raw tensor bytes differ: where the data is read from",
        ];
        let rules: Vec<&str> = hints.iter().map(|h| hint_rule(h).unwrap()).collect();
        assert_eq!(rules[0], RULE_TAIL);
        assert_eq!(rules[1], RULE_BLOCK_SIZE);
        for r in &rules {
            assert!(exists(r), "{r}");
        }
        assert!(!exists(&["spec/codecs.md", "rule-no-such-rule"].join("#")));
        assert_eq!(hint_rule("something else"), None);
    }

    /// A reader whose blocks drift (block 0 right, every later block wrong) or whose rows drift
    /// (row 0 right, every later row wrong) gets a stride hint; errors everywhere (a decoder bug)
    /// or in one middle block only do not.
    #[test]
    fn errors_growing_with_column_or_row_are_a_stride_hint() {
        let t = Target {
            label: "v".into(),
            tensor: None,
            codec: Codec::Pq2_0,
            bytes: Vec::new(),
            cols: 512,
            stored_cols: 512,
            got_sha256: None,
            got_rows: None,
            raw_same: None,
        };
        let expected: Vec<f32> = (0..1536).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        // Block stride: element j of each row read from j + (j / 128) (drifts by block).
        let drift: Vec<f32> = (0..1536)
            .map(|i| {
                let (r, j) = (i / 512, i % 512);
                expected[r * 512 + (j + j / 128) % 512]
            })
            .collect();
        let h = generic_hint(&t, Some(&drift), &expected).unwrap();
        assert!(
            h.contains("column 128 (block 1)") && h.contains("stride"),
            "{h}"
        );
        // Row stride: row r read from r * 513 elements on.
        let rows: Vec<f32> = (0..1536)
            .map(|i| expected[((i / 512) * 513 + i % 512) % 1536])
            .collect();
        let h = generic_hint(&t, Some(&rows), &expected).unwrap();
        assert!(
            h.contains("begin at row 1") && h.contains("row stride"),
            "{h}"
        );
        // Negative controls: every element negated (a code-map bug), one middle block wrong.
        let negated: Vec<f32> = expected.iter().map(|x| -x - 0.5).collect();
        assert!(generic_hint(&t, Some(&negated), &expected).is_none());
        let mut middle = expected.clone();
        for row in 0..3 {
            middle[row * 512 + 200] = 9.0;
        }
        assert!(generic_hint(&t, Some(&middle), &expected).is_none());
    }

    /// A `.ninfer` ternary object: the target is found by name, rows are trimmed to `k`, and a
    /// digest of the reversed-order decode is recognised (plumbing; the stub test in
    /// tests/it/check_reader_localize.rs is the independent check for codec and GGUF cases).
    #[test]
    fn a_ninfer_ternary_object_is_localised_by_name() {
        let m = crate::corpus::manifest::Manifest::load(&corpus().join("MANIFEST.json")).unwrap();
        let case = m
            .cases
            .iter()
            .find(|c| c.id == "ninfer/y_rowsplit_pq2_0_g128_3x128")
            .unwrap();
        let bytes = std::fs::read(corpus().join(&case.file)).unwrap();
        let t = crate::corpus::observe::ninfer_ternary(&bytes, "w")
            .unwrap()
            .unwrap();
        let wrong = t.logical(&reversed_2bit(t.codec, &t.blocks).unwrap());
        let mut got = case.expect.observation.clone().unwrap();
        got["objects"][0]["values_sha256"] = values_sha256(&wrong).into();
        let l = localize(case, &corpus(), &got, None).unwrap();
        assert_eq!(l.tensor.as_deref(), Some("w"));
        assert!(
            l.target
                .starts_with("object 'w' (PQ2_0_G128, shape [3, 128])"),
            "{}",
            l.target
        );
        assert!(l.row.is_some() && l.element.is_some() && l.got != l.expected);
        assert!(l
            .looks_like
            .as_deref()
            .unwrap()
            .starts_with("reversed 2-bit order"));
        assert!(l.spec.contains(&"spec/codecs.md#pq2-0".to_string()));
        // The one-screen form names it an object and the bug in a few words.
        let short = l.short();
        assert!(short.starts_with("object 'w' row "), "{short}");
        assert!(
            short.contains("; reversed 2-bit order: digit order;"),
            "{short}"
        );
        // Control: a digest no known bug gives: located by name, no values, no looks-like.
        got["objects"][0]["values_sha256"] = "00".repeat(32).into();
        let l = localize(case, &corpus(), &got, None).unwrap();
        assert_eq!(l.tensor.as_deref(), Some("w"));
        assert!(l.looks_like.is_none() && l.element.is_none());
        // Control: the right digest is no failure to localise.
        let right = case.expect.observation.clone().unwrap();
        assert!(localize(case, &corpus(), &right, None).is_none());
    }

    #[test]
    fn localisation_decodes_nothing_past_its_cap() {
        let target = |elems: usize| Target {
            label: String::new(),
            tensor: None,
            codec: Codec::Pq2_0,
            bytes: vec![0; Codec::Pq2_0.bytes_for(elems).unwrap()],
            cols: 128,
            stored_cols: 128,
            got_sha256: None,
            got_rows: None,
            raw_same: None,
        };
        assert!(within_cap(&target(MAX_ELEMENTS)));
        // One block more is refused before anything is decoded.
        assert!(!within_cap(&target(MAX_ELEMENTS + 128)));
        // So are bytes that are not whole blocks (the decode would fail anyway).
        let mut t = target(128);
        t.bytes.push(0);
        assert!(!within_cap(&t));
    }

    #[test]
    fn every_bug_changes_some_block() {
        let mut bytes = Vec::new();
        for i in 0..4096u32 {
            bytes.push((i.wrapping_mul(2654435761) >> 13) as u8);
        }
        for bug in BUGS {
            for &c in bug.codecs {
                let n = bytes.len() / c.block_bytes() * c.block_bytes();
                let mut b = bytes[..n].to_vec();
                if let Some((at, _)) = scale_at(c) {
                    for blk in b.chunks_mut(c.block_bytes()) {
                        blk[at..at + 2].copy_from_slice(&0x3c00u16.to_le_bytes());
                    }
                }
                let right = c.decode_to_vec(&b).unwrap();
                let wrong = (bug.wrong)(c, &b).unwrap();
                assert_ne!(
                    values_sha256(&right),
                    values_sha256(&wrong),
                    "{} on {}",
                    bug.id,
                    c.name()
                );
            }
        }
    }

    /// PQ2_0 blocks (scale 1.0 in block 0, 0.5 in block 1, ...) holding every code 0..3.
    fn pq2_target(blocks: usize) -> (Target, Vec<f32>) {
        let mut bytes = Vec::new();
        for b in 0..blocks {
            let d = half::f16::from_f32(1.0 / (b + 1) as f32).to_bits();
            bytes.extend_from_slice(&d.to_le_bytes());
            bytes.extend((0..32u32).map(|j| (j.wrapping_mul(2654435761) >> 7) as u8 | 0x03));
        }
        let t = Target {
            label: "v".into(),
            tensor: None,
            codec: Codec::Pq2_0,
            bytes,
            cols: 128 * blocks,
            stored_cols: 128 * blocks,
            got_sha256: None,
            got_rows: None,
            raw_same: None,
        };
        let expected = Codec::Pq2_0.decode_to_vec(&t.bytes).unwrap();
        (t, expected)
    }

    /// Code 3 decoded as +d (every +2d element halved) is one code wrong; a second wrong element
    /// of another code, or one code-3 element left right, is not; all codes right but one value
    /// halved elsewhere is not either.
    #[test]
    fn errors_confined_to_one_code_are_a_code_map_hint() {
        let (t, expected) = pq2_target(2);
        let code3 = |i: usize| expected[i] == 2.0 / (i / 128 + 1) as f32;
        assert!(expected.iter().enumerate().any(|(i, _)| code3(i)));
        let wrong: Vec<f32> = (0..expected.len())
            .map(|i| {
                if code3(i) {
                    expected[i] / 2.0
                } else {
                    expected[i]
                }
            })
            .collect();
        let h = generic_hint(&t, Some(&wrong), &expected).unwrap();
        assert!(
            h.contains("expected value is 2*d") && h.contains("one code"),
            "{h}"
        );
        assert_eq!(hint_rule(&h), Some(RULE_CODE_MAP));
        // Negative controls.
        let other = expected.iter().position(|&x| x == 0.0).unwrap();
        let mut two = wrong.clone();
        two[other] = 5.0;
        assert!(one_code_hint(&t, &two, &expected).is_none());
        let mut partial = wrong.clone();
        let first3 = (0..expected.len()).find(|&i| code3(i)).unwrap();
        partial[first3] = expected[first3];
        assert!(one_code_hint(&t, &partial, &expected).is_none());
    }

    /// A scale read wrongly (each block's values scaled by its own factor) is a scale hint; the
    /// right values, a factor that is not the same across one block, or a zero made nonzero are not.
    #[test]
    fn values_off_by_one_factor_per_block_are_a_scale_hint() {
        let (t, expected) = pq2_target(3);
        let scaled: Vec<f32> = expected
            .iter()
            .enumerate()
            .map(|(i, x)| x * (3 + i / 128) as f32 / 1024.0)
            .collect();
        let h = generic_hint(&t, Some(&scaled), &expected).unwrap();
        assert!(h.contains("block scale"), "{h}");
        assert_eq!(hint_rule(&h), Some(RULE_SCALE_TYPE));
        assert!(scale_factor_hint(&t, &expected, &expected).is_none());
        let mut uneven = scaled.clone();
        let nz = expected.iter().position(|&x| x != 0.0).unwrap();
        uneven[nz] *= 2.0;
        assert!(scale_factor_hint(&t, &uneven, &expected).is_none());
        let mut zero = scaled.clone();
        let z = expected.iter().position(|&x| x == 0.0).unwrap();
        zero[z] = 1.0;
        assert!(scale_factor_hint(&t, &zero, &expected).is_none());
    }

    /// The plane swap is told apart from the other PTQ1_0 bugs on the same bytes: its decode
    /// differs from theirs, and swapping twice is the right decode (an involution).
    #[test]
    fn the_plane_swap_is_its_own_bug() {
        let c = Codec::Ptq1_0;
        let mut bytes: Vec<u8> = (0..28 * 8u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
            .collect();
        for blk in bytes.chunks_mut(28) {
            blk[26..28].copy_from_slice(&half::f16::from_f32(0.5).to_bits().to_le_bytes());
        }
        let swap = BUGS
            .iter()
            .find(|b| b.id == "planes-high-scale-swapped")
            .unwrap();
        assert!(swap.looks_like.starts_with("planes high and scale swapped"));
        let once = swap_high_scale(c, &bytes).unwrap();
        for other in BUGS
            .iter()
            .filter(|b| b.id != swap.id && b.codecs.contains(&c))
        {
            let v = (other.wrong)(c, &bytes).unwrap();
            assert_ne!(values_sha256(&v), values_sha256(&once), "{}", other.id);
        }
        let mut swapped = bytes.clone();
        for blk in swapped.chunks_mut(28) {
            let qh = [blk[24], blk[25]];
            blk.copy_within(26..28, 24);
            blk[26..28].copy_from_slice(&qh);
        }
        assert_eq!(
            values_sha256(&swap_high_scale(c, &swapped).unwrap()),
            values_sha256(&c.decode_to_vec(&bytes).unwrap())
        );
    }
}
