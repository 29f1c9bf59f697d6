//! Naming a failure: when a kernel's output breaks the rule, the same inputs are decoded under
//! the known wrong readings of its format and class (other bit order, planar vs sequential,
//! another block size, code offset c-2, code 3 as +1, the scale at the other end or taken
//! absolute, a hand-written f16 conversion that only knows normal numbers, PTQ1_0/TQ1_0 digits
//! read sequentially or through the byte's value, row-major activations, a Hadamard transform
//! without its normalization or with the signs after it, a row-split object read as interleaved
//! blocks or from the buffer's first byte, outputs rounded to f16/bf16) and judged by the same
//! rule; the first reading the output meets is named ("looks like: ...").

use super::abi::KernelClass;
use super::cases::{plane_geometry, KernelCase};
use super::diagnose_probe::Probe;
use super::expected::{expected, expected_with, Expected};
use super::judge::judge;
use super::kernel_abi::weights_buffer;
use super::precision::{Dtype, Precision};
use crate::codec::{f16_to_f32, Codec};
use crate::error::Result;

/// A wrong reading of one block: `(block bytes, element) -> value`.
type ElemFn = Box<dyn Fn(&[u8], usize) -> f32>;

fn f16at(b: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// The conversion of the worked example people copy: right for normal numbers and zero only
/// (a subnormal is read as a normal of exponent -15, Inf/NaN as 2^16 * (1 + m)).
fn f16_normal_only(h: u16) -> f32 {
    let h = h as u32;
    let bits = if h & 0x7fff != 0 {
        ((h & 0x8000) << 16) | ((((h >> 10) & 0x1f) + 112) << 23) | ((h & 0x3ff) << 13)
    } else {
        (h & 0x8000) << 16
    };
    f32::from_bits(bits)
}

fn trit(b: u8, n: u32) -> i32 {
    // Digits past the fifth do not exist; a reading that asks for one gets a value no kernel
    // output can match.
    if n > 4 {
        return 1000;
    }
    let m = (b as u32).wrapping_mul(3u32.pow(n)) as u8;
    ((m as u32 * 3) >> 8) as i32
}

/// The staged base-3 element position: (byte, digit).
fn staged(e: usize, w: (usize, usize, usize)) -> (usize, u32) {
    let (w1, w2, wh) = w;
    if e < 5 * w1 {
        (e % w1, (e / w1) as u32)
    } else if e < 5 * (w1 + w2) {
        let f = e - 5 * w1;
        (w1 + f % w2, (f / w2) as u32)
    } else {
        let f = e - 5 * (w1 + w2);
        (w1 + w2 + f % wh, (f / wh) as u32)
    }
}

/// A 2-bit code of element `j` of a block whose codes start at byte `at`, under a layout.
fn q2_code(layout: Q2Layout, b: &[u8], at: usize, qk: usize, j: usize) -> i32 {
    let q = qk / 4;
    let (byte, shift) = match layout {
        Q2Layout::Sequential => (j / 4, 2 * (j % 4)),
        Q2Layout::Reversed => (j / 4, 6 - 2 * (j % 4)),
        Q2Layout::Planar => (j % q, 2 * (j / q)),
        // BeeLlama's Q2_0S order: byte j of each 32-element group holds j, j+8, j+16, j+24.
        Q2Layout::Planar32 => ((j / 32) * 8 + j % 8, 2 * ((j % 32) / 8)),
    };
    ((b[at + byte] >> shift) & 3) as i32
}

/// Where a 2-bit reading finds element j's code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Q2Layout {
    Sequential,
    Reversed,
    Planar,
    Planar32,
}

/// The value (in units of the scale) a 2-bit code maps to: right (c - 1) and the wrong maps.
fn q2_value(map: &str, c: i32) -> i32 {
    match map {
        "q2.code_minus_2" => c - 2,
        "q2.code3_as_plus1" => c.min(2) - 1,
        "q2.code3_as_zero" if c == 3 => 0,
        _ => c - 1,
    }
}

/// A scale reading of the f16 bytes at `at`: right, absolute, normal-only, or taken as bf16.
fn scale_read(how: &str, b: &[u8], at: usize) -> f32 {
    let h = u16::from_le_bytes([b[at], b[at + 1]]);
    match how {
        "scale.abs" => f16_to_f32(h).abs(),
        "scale.f16_normal_only" => f16_normal_only(h),
        // The f16 bits taken as a bf16 (the top half of an f32).
        "scale.bf16" => f32::from_bits((h as u32) << 16),
        // Subnormal scales flushed to (signed) zero.
        "scale.subnormal_flushed" if h & 0x7c00 == 0 => f16_to_f32(h & 0x8000),
        _ => f16_to_f32(h),
    }
}

/// Digits of a base-3 byte through a table inverted from the encoder (`ceil(v * 256 / 3^m)`
/// for the `3^m` canonical values): a non-canonical byte is a hole in the table and reads as 0,
/// so all its digits are 0 (element value -d), where ggml's digit rule still defines digits.
fn trit_canonical_only(b: u8, digits: u32, n: u32) -> i32 {
    // byte -> canonical value + 1 (0: a hole), for 5-digit and 4-digit bytes.
    static TABLES: std::sync::OnceLock<[[u8; 256]; 2]> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(|| {
        let mut t = [[0u8; 256]; 2];
        for (slot, d) in [(0usize, 5u32), (1, 4)] {
            for v in 0..3u32.pow(d) {
                let byte = (v * 3u32.pow(5 - d) * 256).div_ceil(243) as usize;
                t[slot][byte & 255] = (v + 1) as u8;
            }
        }
        t
    });
    let entry = t[(digits == 4) as usize][b as usize] as u32;
    match entry.checked_sub(1) {
        Some(v) if n < digits => ((v / 3u32.pow(digits - 1 - n)) % 3) as i32,
        _ => 0,
    }
}

/// The axes a two-fault reading combines, per codec: element values (in units of the scale)
/// under each layout / value-map reading, and scale readings; index 0 of each is the right
/// one. A single fault is one non-default entry, two faults are two ([`composed`]).
struct Axes {
    qk: usize,
    bb: usize,
    values: Vec<(&'static str, ElemValue)>,
    scales: Vec<&'static str>,
    scale_at: usize,
}

/// An element's value in units of the block scale (`(block, element) -> value`).
type ElemValue = Box<dyn Fn(&[u8], usize) -> i32>;

fn axes(codec: Codec) -> Option<Axes> {
    let (qk, bb) = (codec.block_elems(), codec.block_bytes());
    let scales = vec!["", "scale.abs", "scale.f16_normal_only", "scale.bf16"];
    let mut values: Vec<(&'static str, ElemValue)> = Vec::new();
    match codec {
        Codec::Pq2_0 | Codec::Q2_0G64 => {
            for (lname, l) in [
                ("", Q2Layout::Sequential),
                ("q2.reversed_bits", Q2Layout::Reversed),
                ("q2.planar", Q2Layout::Planar),
                ("q2.planar32", Q2Layout::Planar32),
            ] {
                for m in [
                    "",
                    "q2.code_minus_2",
                    "q2.code3_as_plus1",
                    "q2.code3_as_zero",
                ] {
                    // One name per value reading; a layout and a map together are two faults,
                    // named by [`composed`] from the pair, so only single ones are listed.
                    if !lname.is_empty() && !m.is_empty() {
                        continue;
                    }
                    let name = if lname.is_empty() { m } else { lname };
                    values.push((
                        name,
                        Box::new(move |b, j| q2_value(m, q2_code(l, b, 2, qk, j))),
                    ));
                }
            }
            Some(Axes {
                qk,
                bb,
                values,
                scales,
                scale_at: 0,
            })
        }
        Codec::Ptq1_0 | Codec::Tq1_0 => {
            let w = if codec == Codec::Ptq1_0 {
                (16, 8, 2)
            } else {
                (32, 16, 4)
            };
            let qs = w.0 + w.1;
            values.push((
                "",
                Box::new(move |b, e| {
                    let (byte, digit) = staged(e, w);
                    trit(b[byte], digit) - 1
                }),
            ));
            values.push((
                "trit.canonical_only",
                Box::new(move |b, e| {
                    let (byte, digit) = staged(e, w);
                    let digits = if byte >= qs { 4 } else { 5 };
                    trit_canonical_only(b[byte], digits, digit) - 1
                }),
            ));
            values.push((
                "ptq1.sequential_digits",
                Box::new(move |b, e| {
                    let t = if e < 5 * qs {
                        trit(b[e / 5], (e % 5) as u32)
                    } else {
                        let f = e - 5 * qs;
                        trit(b[qs + f / 4], (f % 4) as u32)
                    };
                    t - 1
                }),
            ));
            Some(Axes {
                qk,
                bb,
                values,
                scales,
                scale_at: bb - 2,
            })
        }
        _ => None,
    }
}

/// Readings with two faults at once (a value reading and a scale reading, or a layout and a
/// value map of a 2-bit codec): `([first, second], block elems, block bytes, reading)`.
fn composed(codec: Codec) -> Vec<([&'static str; 2], usize, usize, ElemFn)> {
    let mut v: Vec<([&'static str; 2], usize, usize, ElemFn)> = Vec::new();
    let Some(ax) = axes(codec) else { return v };
    let (qk, bb, at) = (ax.qk, ax.bb, ax.scale_at);
    let values: Vec<(&'static str, std::rc::Rc<ElemValue>)> = ax
        .values
        .into_iter()
        .map(|(n, f)| (n, std::rc::Rc::new(f)))
        .collect();
    for (vname, f) in values.iter().filter(|(n, _)| !n.is_empty()) {
        for &sname in ax.scales.iter().filter(|n| !n.is_empty()) {
            let f = f.clone();
            v.push((
                [vname, sname],
                qk,
                bb,
                Box::new(move |b, j| f(b, j) as f32 * scale_read(sname, b, at)),
            ));
        }
    }
    if matches!(codec, Codec::Pq2_0 | Codec::Q2_0G64) {
        for (lname, l) in [
            ("q2.reversed_bits", Q2Layout::Reversed),
            ("q2.planar", Q2Layout::Planar),
            ("q2.planar32", Q2Layout::Planar32),
        ] {
            for m in ["q2.code_minus_2", "q2.code3_as_plus1", "q2.code3_as_zero"] {
                v.push((
                    [lname, m],
                    qk,
                    bb,
                    Box::new(move |b, j| {
                        q2_value(m, q2_code(l, b, 2, qk, j)) as f32 * scale_read("", b, 0)
                    }),
                ));
            }
        }
    }
    v
}

/// Named element readings: (name, block elems, block bytes, reading).
type Variants = Vec<(&'static str, usize, usize, ElemFn)>;

/// The known wrong element readings of a block codec: (name, block elems, block bytes, reading).
fn element_variants(codec: Codec) -> Variants {
    let (qk, bb) = (codec.block_elems(), codec.block_bytes());
    let mut v: Variants = Vec::new();
    match codec {
        Codec::Pq2_0 | Codec::Q2_0G64 => q2_variants(qk, bb, &mut v),
        Codec::Ptq1_0 | Codec::Tq1_0 => base3_variants(codec, qk, bb, &mut v),
        Codec::Tq2_0 => tq2_variants(qk, bb, &mut v),
        _ => {}
    }
    v
}

/// The PQ2_0-family readings (sequential 2-bit codes, scale first).
fn q2_variants(qk: usize, bb: usize, v: &mut Variants) {
    let q = qk / 4;
    let code = move |b: &[u8], j: usize| ((b[2 + j / 4] >> (2 * (j % 4))) & 3) as i32;
    v.push((
        "q2.reversed_bits",
        qk,
        bb,
        Box::new(move |b, j| {
            ((((b[2 + j / 4] >> (6 - 2 * (j % 4))) & 3) as f32) - 1.0) * f16at(b, 0)
        }),
    ));
    v.push((
        "q2.planar",
        qk,
        bb,
        Box::new(move |b, j| ((((b[2 + j % q] >> (2 * (j / q))) & 3) as f32) - 1.0) * f16at(b, 0)),
    ));
    v.push((
        "q2.code_minus_2",
        qk,
        bb,
        Box::new(move |b, j| (code(b, j) - 2) as f32 * f16at(b, 0)),
    ));
    v.push((
        "q2.code3_as_plus1",
        qk,
        bb,
        Box::new(move |b, j| (code(b, j).min(2) - 1) as f32 * f16at(b, 0)),
    ));
    v.push((
        "q2.planar32",
        qk,
        bb,
        Box::new(move |b, j| (q2_code(Q2Layout::Planar32, b, 2, qk, j) - 1) as f32 * f16at(b, 0)),
    ));
    v.push((
        "q2.code3_as_zero",
        qk,
        bb,
        Box::new(move |b, j| q2_value("q2.code3_as_zero", code(b, j)) as f32 * f16at(b, 0)),
    ));
    v.push((
        "scale.bf16",
        qk,
        bb,
        Box::new(move |b, j| (code(b, j) - 1) as f32 * scale_read("scale.bf16", b, 0)),
    ));
    v.push((
        "scale.subnormal_flushed",
        qk,
        bb,
        Box::new(move |b, j| (code(b, j) - 1) as f32 * scale_read("scale.subnormal_flushed", b, 0)),
    ));
    v.push((
        "scale.other_end",
        qk,
        bb,
        Box::new(move |b, j| ((((b[j / 4] >> (2 * (j % 4))) & 3) as f32) - 1.0) * f16at(b, bb - 2)),
    ));
    v.push((
        "scale.abs",
        qk,
        bb,
        Box::new(move |b, j| (code(b, j) - 1) as f32 * f16at(b, 0).abs()),
    ));
    v.push((
        "scale.f16_normal_only",
        qk,
        bb,
        Box::new(move |b, j| {
            (code(b, j) - 1) as f32 * f16_normal_only(u16::from_le_bytes([b[0], b[1]]))
        }),
    ));
    for n in [32usize, 64, 128, 256] {
        if n != qk {
            let name = match n {
                32 => "block.32",
                64 => "block.64",
                128 => "block.128",
                _ => "block.256",
            };
            v.push((
                name,
                n,
                2 + n / 4,
                Box::new(move |b, j| {
                    ((((b[2 + j / 4] >> (2 * (j % 4))) & 3) as f32) - 1.0) * f16at(b, 0)
                }),
            ));
        }
    }
}

/// The staged base-3 readings (PTQ1_0, TQ1_0; scale last).
fn base3_variants(codec: Codec, qk: usize, bb: usize, v: &mut Variants) {
    let w = if codec == Codec::Ptq1_0 {
        (16, 8, 2)
    } else {
        (32, 16, 4)
    };
    let other = if codec == Codec::Ptq1_0 {
        (32, 16, 4)
    } else {
        (16, 8, 2)
    };
    let so = bb - 2;
    let qs_bytes = w.0 + w.1;
    let val = move |b: &[u8], e: usize| {
        let (byte, digit) = staged(e, w);
        trit(b[byte], digit)
    };
    v.push((
        "ptq1.sequential_digits",
        qk,
        bb,
        Box::new(move |b, e| {
            let t = if e < 5 * qs_bytes {
                trit(b[e / 5], (e % 5) as u32)
            } else {
                let f = e - 5 * qs_bytes;
                trit(b[qs_bytes + f / 4], (f % 4) as u32)
            };
            (t - 1) as f32 * f16at(b, so)
        }),
    ));
    v.push((
        "trit.lsd_first",
        qk,
        bb,
        Box::new(move |b, e| {
            let (byte, digit) = staged(e, w);
            let digits = if byte >= qs_bytes { 4 } else { 5 };
            (trit(b[byte], digits - 1 - digit.min(digits - 1)) - 1) as f32 * f16at(b, so)
        }),
    ));
    v.push((
        "staged.other_widths",
        qk,
        bb,
        Box::new(move |b, e| {
            let (byte, digit) = staged(e, other);
            if byte >= bb - 2 {
                return f32::NAN;
            }
            (trit(b[byte], digit) - 1) as f32 * f16at(b, so)
        }),
    ));
    v.push((
        "scale.other_end",
        qk,
        bb,
        Box::new(move |b, e| {
            let (byte, digit) = staged(e, w);
            (trit(b[(byte + 2) % bb], digit) - 1) as f32 * f16at(b, 0)
        }),
    ));
    v.push((
        "scale.abs",
        qk,
        bb,
        Box::new(move |b, e| (val(b, e) - 1) as f32 * f16at(b, so).abs()),
    ));
    v.push((
        "scale.f16_normal_only",
        qk,
        bb,
        Box::new(move |b, e| {
            (val(b, e) - 1) as f32 * f16_normal_only(u16::from_le_bytes([b[so], b[so + 1]]))
        }),
    ));
    v.push((
        "scale.bf16",
        qk,
        bb,
        Box::new(move |b, e| (val(b, e) - 1) as f32 * scale_read("scale.bf16", b, so)),
    ));
    v.push((
        "scale.subnormal_flushed",
        qk,
        bb,
        Box::new(move |b, e| (val(b, e) - 1) as f32 * scale_read("scale.subnormal_flushed", b, so)),
    ));
    v.push((
        "trit.canonical_only",
        qk,
        bb,
        Box::new(move |b, e| {
            let (byte, digit) = staged(e, w);
            let digits = if byte >= qs_bytes { 4 } else { 5 };
            (trit_canonical_only(b[byte], digits, digit) - 1) as f32 * f16at(b, so)
        }),
    ));
}

/// The TQ2_0 readings (planar 2-bit codes, scale last).
fn tq2_variants(qk: usize, bb: usize, v: &mut Variants) {
    let code =
        |b: &[u8], e: usize| ((b[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) as i32;
    v.push((
        "tq2.sequential",
        qk,
        bb,
        Box::new(move |b, e| ((((b[e / 4] >> (2 * (e % 4))) & 3) as f32) - 1.0) * f16at(b, 64)),
    ));
    v.push((
        "q2.reversed_bits",
        qk,
        bb,
        Box::new(move |b, e| {
            ((((b[(e / 128) * 32 + e % 32] >> (6 - 2 * ((e % 128) / 32))) & 3) as f32) - 1.0)
                * f16at(b, 64)
        }),
    ));
    v.push((
        "q2.code_minus_2",
        qk,
        bb,
        Box::new(move |b, e| (code(b, e) - 2) as f32 * f16at(b, 64)),
    ));
    v.push((
        "q2.code3_as_plus1",
        qk,
        bb,
        Box::new(move |b, e| (code(b, e).min(2) - 1) as f32 * f16at(b, 64)),
    ));
    v.push((
        "q2.code3_as_zero",
        qk,
        bb,
        Box::new(move |b, e| q2_value("q2.code3_as_zero", code(b, e)) as f32 * f16at(b, 64)),
    ));
    v.push((
        "scale.other_end",
        qk,
        bb,
        Box::new(move |b, e| {
            ((((b[2 + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) as f32) - 1.0)
                * f16at(b, 0)
        }),
    ));
    v.push((
        "scale.abs",
        qk,
        bb,
        Box::new(move |b, e| (code(b, e) - 1) as f32 * f16at(b, 64).abs()),
    ));
}

/// Decodes a whole stream of `bb`-byte blocks of `qk` elements with `f` into `out`; elements
/// of a block that would run past the data read as 0 (a bounds-checked reader's answer; a
/// reader that really reads past the end is caught by the guarded inputs first).
fn decode_stream(bytes: &[u8], out: &mut [f32], qk: usize, bb: usize, f: &ElemFn) {
    for (i, o) in out.iter_mut().enumerate() {
        let (blk, e) = (i / qk, i % qk);
        *o = match bytes.get(blk * bb..blk * bb + bb) {
            Some(b) => f(b, e),
            None => 0.0,
        };
    }
}

/// What the spec calls each reading, in words.
pub fn describe(name: &str) -> &'static str {
    match name {
        "q2.reversed_bits" => "reversed 2-bit order (element j at bits 6-2(j%4))",
        "q2.planar" => "planar 2-bit layout (byte j%32 holds elements j, j+32, j+64, j+96)",
        "q2.code_minus_2" => "code offset c-2 instead of c-1",
        "q2.code3_as_plus1" => "code 3 clamped to +1 (ggml decodes it as +2d)",
        "q2.code3_as_zero" => "code 3 read as 0 (a ternary table {-1, 0, +1, 0}; ggml decodes it as +2d)",
        "q2.planar32" => "planar 2-bit layout per 32-element group (byte j of each group holds elements j, j+8, j+16, j+24: BeeLlama's Q2_0S order)",
        "scale.bf16" => "the f16 block scale read as a bf16 (its bits as the top half of an f32)",
        "scale.subnormal_flushed" => "subnormal f16 scales flushed to zero",
        "trit.canonical_only" => "base-3 digits through a table inverted from the encoder (non-canonical bytes read as 0, where ggml's digit rule defines digits)",
        "output.bf16_truncated" => "bf16 outputs truncated (the low 16 bits dropped) instead of rounded to nearest even",
        "x.bf16_truncated" => "activations truncated to bf16 (the low 16 bits dropped) instead of rounded to nearest even",
        "acc.f16" => "sums accumulated in f16 (the errors have the size of f16 accumulation over the row, far above f32's)",
        "acc.bf16" => "sums accumulated in bf16 (the errors have the size of bf16 accumulation over the row, far above f32's)",
        "scale.other_end" => "the block scale read at the other end of the block",
        "scale.abs" => "the absolute value of the scale",
        "scale.f16_normal_only" => "an f16 conversion that only knows normal numbers (wrong for subnormal, Inf, NaN scales)",
        "block.32" => "32-element blocks (the old geometry, 20/17 size ratio)",
        "block.64" => "64-element blocks (mainline Q2_0-g64 geometry)",
        "block.128" => "128-element blocks",
        "block.256" => "256-element blocks",
        "ptq1.sequential_digits" => "base-3 digits read sequentially (byte e/5, digit e%5) instead of staged",
        "trit.lsd_first" => "base-3 digits least significant first",
        "staged.other_widths" => "the other staged format's widths (PTQ1_0 16/8/2 vs TQ1_0 32/16/4)",
        "tq2.sequential" => "sequential 2-bit order (PQ2_0's) on TQ2_0 blocks",
        "tokens.row_major" => "activations read row-major [k][t] instead of token-major [t][k]",
        "output.row_major" => "outputs written row-major [n][t] instead of token-major [t][n]",
        "hadamard.unnormalized" => "H without the 1/sqrt(B) normalization",
        "hadamard.norm_1_over_b" => "H normalized by 1/B instead of 1/sqrt(B)",
        "hadamard.signs_after" => "signs applied after the rotation: s (H x) instead of H (s x)",
        "planes.interleaved_blocks" => "the row-split object read as interleaved ggml blocks (scale at offset 0)",
        "planes.offsets_without_base" => "plane offsets taken from the buffer's first byte (base offset ignored)",
        "output.f16_rounded" => "f16 rounding somewhere on the way (the outputs meet the f16-out rule, not their declared one): declare f16-out if the kernel writes f16, else find the half-precision step",
        "output.bf16_rounded" => "bf16 rounding somewhere on the way (the outputs meet the bf16-out rule, not their declared one): declare bf16-out if the kernel writes bf16, else find the bf16 step",
        "x.f16_rounded" => "activations rounded to f16 before use (declare f16-in if the kernel takes f16 activations)",
        "x.bf16_rounded" => "activations rounded to bf16 before use (declare bf16-in if the kernel takes bf16 activations)",
        _ => "",
    }
}

/// Whether the output meets a reading's expectation. A reading whose every value is NaN says
/// nothing (the judge accepts any non-finite output there), so it never counts.
pub(super) fn matches(c: &KernelCase, e: &Expected, out: &[u8]) -> bool {
    e.values.iter().any(|v| v.is_finite()) && judge(c, e, out).pass
}

/// What a failing output looks like: the first known wrong reading it meets; else the first
/// pair of faults together (a value reading with a scale reading, a 2-bit layout with a value
/// map), both named; else the rounding faults found from the errors themselves (a
/// low-precision accumulator). Empty when nothing known fits.
#[cfg(any(test, feature = "internals"))]
pub fn diagnose(c: &KernelCase, p: Precision, out: &[u8]) -> Vec<&'static str> {
    match expected(c, p) {
        Ok(e) => diagnose_failure(c, &e, out),
        Err(_) => Vec::new(),
    }
}

/// [`diagnose`] of an output already judged against `e`, the case's expectation under the
/// kernel's precision (the probe row is found from it instead of computing it again).
pub fn diagnose_failure(c: &KernelCase, e: &Expected, out: &[u8]) -> Vec<&'static str> {
    let p = e.precision;
    // One probe row for both searches.
    let probe = Probe::of(c, e, out);
    // Only the first single reading is named: the search stops there.
    if let Some(first) = diagnose_all_with(c, p, out, &probe, true)
        .ok()
        .and_then(|v| v.into_iter().next())
    {
        return vec![first];
    }
    if let Some(pair) = diagnose_pair_with(c, p, out, &probe) {
        return pair.to_vec();
    }
    super::diagnose_rounding::accumulator(c, p, out)
        .into_iter()
        .collect()
}

/// The first two-fault weight reading the output meets ([`composed`]).
#[cfg(feature = "internals")]
pub fn diagnose_pair(c: &KernelCase, p: Precision, out: &[u8]) -> Option<[&'static str; 2]> {
    diagnose_pair_with(c, p, out, &probe_of(c, p, out))
}

fn diagnose_pair_with(
    c: &KernelCase,
    p: Precision,
    out: &[u8],
    probe: &Option<Probe<'_>>,
) -> Option<[&'static str; 2]> {
    if c.class == KernelClass::HadamardRotate {
        return None;
    }
    let codec = c.format.codec().ok()?;
    composed(codec).into_iter().find_map(|(names, qk, bb, f)| {
        let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
            decode_stream(b, o, qk, bb, &f);
            Ok(())
        };
        if probe.as_ref().is_some_and(|pr| !pr.admits(p, qk, bb, &dec)) {
            return None;
        }
        expected_with(c, p, &dec)
            .ok()
            .filter(|e| matches(c, e, out))
            .map(|_| names)
    })
}

/// The probe of a failing output, its expectation computed here (test entry points).
#[cfg(any(test, feature = "internals"))]
fn probe_of<'a>(c: &'a KernelCase, p: Precision, out: &[u8]) -> Option<Probe<'a>> {
    Probe::of(c, &expected(c, p).ok()?, out)
}

/// Every known wrong reading the output meets (tests use this to prove each reading is
/// reachable).
#[cfg(any(test, feature = "internals"))]
pub fn diagnose_all(c: &KernelCase, p: Precision, out: &[u8]) -> Result<Vec<&'static str>> {
    diagnose_all_with(c, p, out, &probe_of(c, p, out), false)
}

fn diagnose_all_with(
    c: &KernelCase,
    p: Precision,
    out: &[u8],
    probe: &Option<Probe<'_>>,
    first_only: bool,
) -> Result<Vec<&'static str>> {
    let mut hits = Vec::new();
    // The catalogue's order is the naming order: a first-only search stops at its first hit.
    macro_rules! stop_if_found {
        () => {
            if first_only && !hits.is_empty() {
                return Ok(hits);
            }
        };
    }
    // Weight readings.
    if c.class != KernelClass::HadamardRotate {
        let codec = c.format.codec()?;
        for (name, qk, bb, f) in element_variants(codec) {
            let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                decode_stream(b, o, qk, bb, &f);
                Ok(())
            };
            if probe.as_ref().is_some_and(|pr| !pr.admits(p, qk, bb, &dec)) {
                continue;
            }
            if let Ok(e) = expected_with(c, p, &dec) {
                if matches(c, &e, out) {
                    hits.push(name);
                    stop_if_found!();
                }
            }
        }
    }
    // Class readings.
    match c.class {
        KernelClass::MulMat | KernelClass::MulMatPlanes if c.dims.t > 1 => {
            // k: the token stride of x (k_pad for planes).
            let (t, n) = (c.dims.t as usize, c.dims.n as usize);
            let k = c.x.len() / t;
            let mut alt = c.clone();
            alt.x = (0..t * k).map(|i| c.x[(i % k) * t + i / k]).collect();
            if expected(&alt, p).is_ok_and(|e| {
                let mut e = e;
                e.x_bytes.clear();
                matches(c, &e, out)
            }) {
                hits.push("tokens.row_major");
            }
            if let Ok(e) = expected(c, p) {
                let w = p.y.elem_bytes();
                let mut tr = vec![0u8; out.len()];
                for tok in 0..t {
                    for r in 0..n {
                        let (src, dst) = ((r * t + tok) * w, (tok * n + r) * w);
                        if src + w <= out.len() && dst + w <= tr.len() {
                            tr[dst..dst + w].copy_from_slice(&out[src..src + w]);
                        }
                    }
                }
                if matches(c, &e, &tr) {
                    hits.push("output.row_major");
                }
            }
        }
        KernelClass::HadamardRotate => {
            if let Ok(e) = expected(c, p) {
                let b = c.dims.block as f64;
                for (name, f) in [
                    ("hadamard.unnormalized", b.sqrt()),
                    ("hadamard.norm_1_over_b", 1.0 / b.sqrt()),
                ] {
                    let mut alt = e.clone();
                    alt.values.iter_mut().for_each(|v| *v *= f);
                    alt.magnitude.iter_mut().for_each(|v| *v *= f);
                    if matches(c, &alt, out) {
                        hits.push(name);
                    }
                }
                // s (H x): rotate the unsigned activations, then sign each output column.
                let mut alt = c.clone();
                alt.signs = vec![1.0; c.signs.len()];
                if let Ok(mut e2) = expected(&alt, p) {
                    let k = c.dims.k.max(1) as usize;
                    for (i, v) in e2.values.iter_mut().enumerate() {
                        *v *= c.signs[i % k] as f64;
                    }
                    if matches(c, &e2, out) {
                        hits.push("hadamard.signs_after");
                    }
                }
            }
        }
        _ => {}
    }
    stop_if_found!();
    if c.class.is_planes() {
        planes_readings(c, p, out, &mut hits);
        stop_if_found!();
    }
    hits.extend(super::diagnose_rounding::truncation(c, p, out));
    stop_if_found!();
    precision_readings(c, p, out, &mut hits);
    Ok(hits)
}

/// Readings of a row-split object as something else: interleaved ggml blocks, or plane offsets
/// without the object's place in the buffer.
fn planes_readings(c: &KernelCase, p: Precision, out: &[u8], hits: &mut Vec<&'static str>) {
    let (Ok(codec), Ok((_, geom))) = (
        c.format.codec(),
        plane_geometry(c.format, c.dims.n, c.dims.k),
    ) else {
        return;
    };
    let buf = weights_buffer(c);
    let need = (c.dims.n * (c.dims.k / codec.block_elems() as u64)) as usize * codec.block_bytes();
    let mut alt = c.clone();
    alt.class = if c.class == KernelClass::MulMatPlanes {
        KernelClass::MulMat
    } else {
        KernelClass::MulMatVec
    };
    alt.weights = buf[..need.min(buf.len())].to_vec();
    if alt.weights.len() == need && expected(&alt, p).is_ok_and(|e| matches(c, &e, out)) {
        hits.push("planes.interleaved_blocks");
    }
    if c.obj_prefix > 0 && buf.len() >= geom.payload_bytes as usize {
        let mut alt = c.clone();
        alt.weights = buf[..geom.payload_bytes as usize].to_vec();
        if expected(&alt, p).is_ok_and(|e| matches(c, &e, out)) {
            hits.push("planes.offsets_without_base");
        }
    }
}

/// The right values rounded where the declared mode does not round (outputs or activations
/// to f16/bf16): each one the output meets is added to `hits`.
fn precision_readings(c: &KernelCase, p: Precision, out: &[u8], hits: &mut Vec<&'static str>) {
    // Precision readings: the right values, rounded where the declared mode does not round.
    if !c.class.exact() {
        for (name, q) in [
            ("output.f16_rounded", Precision { y: Dtype::F16, ..p }),
            (
                "output.bf16_rounded",
                Precision {
                    y: Dtype::Bf16,
                    ..p
                },
            ),
            ("x.f16_rounded", Precision { x: Dtype::F16, ..p }),
            (
                "x.bf16_rounded",
                Precision {
                    x: Dtype::Bf16,
                    ..p
                },
            ),
        ] {
            if q == p || (p.x.quantized() && name.starts_with("x.")) {
                continue;
            }
            if let Ok(mut e) = expected(c, q) {
                // Judge the kernel's own buffer (its declared output type) against that reading.
                e.precision.y = if name.starts_with("output.") {
                    q.y
                } else {
                    p.y
                };
                let widened: Vec<f32> = p.y.decode(out);
                // Rounding to f16/bf16 is only claimed when the outputs already are such values
                // (re-encoding would otherwise manufacture the match for any small error).
                if name.starts_with("output.")
                    && widened
                        .iter()
                        .any(|v| v.is_finite() && q.y.round(*v).to_bits() != v.to_bits())
                {
                    continue;
                }
                let re = e.precision.y.encode(&widened);
                if (name.starts_with("output.") && matches(c, &e, &re))
                    || (name.starts_with("x.") && matches(c, &e, out))
                {
                    hits.push(name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::generate;

    /// Every weight reading is named when an output is exactly that reading's expectation, on a
    /// case with random bytes and special scales (and no other reading claims it first unless it
    /// is the same function on those bytes).
    #[test]
    fn each_wrong_reading_is_recognized_from_its_own_output() {
        for class in [
            KernelClass::Dequantize,
            KernelClass::MulMatVec,
            KernelClass::MulMat,
        ] {
            for f in crate::cuda::format::class_formats(class).unwrap() {
                let codec = f.codec().unwrap();
                let c = &generate::matrix(class, f).unwrap()[1];
                for (name, qk, bb, fun) in element_variants(codec) {
                    let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                        decode_stream(b, o, qk, bb, &fun);
                        Ok(())
                    };
                    let e = expected_with(c, Precision::F32, &dec).unwrap();
                    // A reading that is NaN everywhere (here: other stage widths read the scale
                    // bytes as digits of every row sum) names nothing: any non-finite output
                    // would meet it.
                    if !e.values.iter().any(|v| v.is_finite()) {
                        assert!(class != KernelClass::Dequantize, "{f} {name}");
                        continue;
                    }
                    let out =
                        Dtype::F32.encode(&e.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
                    let hits = diagnose_all(c, Precision::F32, &out).unwrap();
                    assert!(
                        hits.contains(&name),
                        "{} {f} {name}: {hits:?}",
                        class.name()
                    );
                    // The right answer is none of them (exact classes: in a sum, a reading that
                    // differs only at subnormal scales may sit inside the rounding bound, which is
                    // fine, since a diagnosis is only asked for on a failure).
                    if !class.exact() {
                        continue;
                    }
                    let e = expected(c, Precision::F32).unwrap();
                    let right =
                        Dtype::F32.encode(&e.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
                    assert!(
                        !diagnose_all(c, Precision::F32, &right)
                            .unwrap()
                            .contains(&name),
                        "{} {f}: the right output looks like {name}",
                        class.name()
                    );
                }
            }
        }
    }

    fn encode(values: &[f64]) -> Vec<u8> {
        Dtype::F32.encode(&values.iter().map(|&v| v as f32).collect::<Vec<_>>())
    }

    /// The hints the issue asks for fire on their own family and on no other: on a dequantize
    /// case with random bytes and special scales, the output of every known reading is named by
    /// each new hint only when it is that hint's own output (or the two readings give the very
    /// same values on those bytes, which the test requires to be rare: never for the new ones).
    #[test]
    fn new_hints_fire_on_their_family_and_not_on_the_others() {
        let new = [
            "q2.planar32",
            "q2.code3_as_zero",
            "scale.bf16",
            "trit.canonical_only",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for f in crate::cuda::format::class_formats(KernelClass::Dequantize).unwrap() {
            let codec = f.codec().unwrap();
            let c = &generate::matrix(KernelClass::Dequantize, f).unwrap()[0];
            for (name, qk, bb, fun) in element_variants(codec) {
                let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                    decode_stream(b, o, qk, bb, &fun);
                    Ok(())
                };
                let e = expected_with(c, Precision::F32, &dec).unwrap();
                let hits = diagnose_all(c, Precision::F32, &encode(&e.values)).unwrap();
                assert!(hits.contains(&name), "{f} {name}: {hits:?}");
                for h in hits.iter().filter(|h| new.contains(h)) {
                    assert_eq!(*h, name, "{f}: the output of {name} is named {h}");
                }
                if new.contains(&name) {
                    seen.insert(name);
                    assert_eq!(
                        diagnose(c, Precision::F32, &encode(&e.values)),
                        vec![name],
                        "{f}"
                    );
                }
            }
        }
        assert_eq!(
            seen.len(),
            new.len(),
            "every new hint has a format: {seen:?}"
        );
    }

    /// Two faults at once get both names: a kernel with the planar-32 layout AND the scale read
    /// as bf16 (or code 3 read as 0) is named by the pair, in mat-vec sums too; each fault alone
    /// is named alone, and the right output is named nothing.
    #[test]
    fn hints_compose_when_two_faults_meet() {
        // Special scales for dequantize; normal ones for mat-vec (where a subnormal scale's
        // reading differs from the right one by less than the rounding bound).
        for (class, i) in [(KernelClass::Dequantize, 1), (KernelClass::MulMatVec, 2)] {
            let c = &generate::matrix(class, crate::cuda::format::KernelFormat::PQ2_0).unwrap()[i];
            let mut pairs = 0;
            for (names, qk, bb, fun) in composed(Codec::Pq2_0) {
                if !matches!(
                    names,
                    ["q2.planar32", "scale.bf16"]
                        | ["q2.planar32", "q2.code3_as_zero"]
                        | ["q2.reversed_bits", "scale.abs"]
                ) {
                    continue;
                }
                let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                    decode_stream(b, o, qk, bb, &fun);
                    Ok(())
                };
                let e = expected_with(c, Precision::F32, &dec).unwrap();
                let got = diagnose(c, Precision::F32, &encode(&e.values));
                assert_eq!(got, names.to_vec(), "{}", class.name());
                pairs += 1;
            }
            assert_eq!(pairs, 3);
            let right = expected(c, Precision::F32).unwrap();
            let named = diagnose(c, Precision::F32, &encode(&right.values));
            // (On normal scales the normal-only and the flushing f16 readings are the right
            // one: they may be named.)
            assert!(
                named
                    .iter()
                    .all(|n| matches!(*n, "scale.f16_normal_only" | "scale.subnormal_flushed"))
                    && (class != KernelClass::Dequantize || named.is_empty()),
                "{}: {named:?}",
                class.name()
            );
        }
    }

    /// The flushed-subnormal hint on the mat-vec case that catches
    /// `wrong_mul_mat_vec_ptq1_0_f16_ftz` (Finite scales: some blocks have subnormal scales):
    /// the flushing reading's sums are named by it alone, and no other known reading's sums that
    /// fail are named by it (a reading that passes this case is never diagnosed).
    #[test]
    fn the_flushed_subnormal_hint_names_flushing_in_mat_vec_sums_and_no_other_reading() {
        let c = generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PTQ1_0,
        )
        .unwrap()
        .into_iter()
        .find(|c| c.name.ends_with("_n37_k1024"))
        .unwrap();
        let right = expected(&c, Precision::F32).unwrap();
        let (mut fired, mut others) = (0, 0);
        for (name, qk, bb, fun) in element_variants(Codec::Ptq1_0) {
            let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                decode_stream(b, o, qk, bb, &fun);
                Ok(())
            };
            let out = encode(&expected_with(&c, Precision::F32, &dec).unwrap().values);
            if judge(&c, &right, &out).pass {
                continue;
            }
            let got = diagnose(&c, Precision::F32, &out);
            if name == "scale.subnormal_flushed" {
                assert_eq!(got, vec![name]);
                fired += 1;
            } else {
                assert!(!got.contains(&"scale.subnormal_flushed"), "{name}: {got:?}");
                others += 1;
            }
        }
        assert_eq!(fired, 1);
        assert!(others >= 5, "{others} other readings fail this case");
    }

    /// The probe rows never turn away a reading that matches the whole case (they only save
    /// work) and turn away most that do not: for outputs of weight readings (every reading of
    /// another block geometry among them) on cases of six classes, each other reading's
    /// admission by the probe is implied by its full match; readings of another block geometry
    /// are probed too (turned away where they do not fit), not waved through.
    #[test]
    fn the_probe_row_admits_every_matching_reading_and_turns_away_most_others() {
        use crate::cuda::format::KernelFormat;
        let (mut turned_away, mut matched, mut other_geometry_turned_away) = (0, 0, 0);
        for (class, f, i) in [
            (KernelClass::Dequantize, KernelFormat::PQ2_0, 1),
            (KernelClass::GetRows, KernelFormat::PTQ1_0, 1),
            (KernelClass::MulMatVec, KernelFormat::PQ2_0, 1),
            (KernelClass::MulMat, KernelFormat::PTQ1_0, 3),
            (
                KernelClass::MulMatVecPlanes,
                KernelFormat::Planes(crate::codec::TernaryType::Pq2_0),
                1,
            ),
            (
                KernelClass::MulMatPlanes,
                KernelFormat::Planes(crate::codec::TernaryType::Ptq1_0),
                1,
            ),
        ] {
            let c = &generate::matrix(class, f).unwrap()[i];
            let codec = f.codec().unwrap();
            let geometry = (codec.block_elems(), codec.block_bytes());
            let readings = element_variants(codec);
            let outputs = readings
                .iter()
                .enumerate()
                .filter(|(j, r)| *j < 8 || (r.1, r.2) != geometry);
            for (_, (name, qk, bb, fun)) in outputs {
                let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                    decode_stream(b, o, *qk, *bb, fun);
                    Ok(())
                };
                let out = encode(&expected_with(c, Precision::F32, &dec).unwrap().values);
                let Some(probe) = Probe::of(c, &expected(c, Precision::F32).unwrap(), &out) else {
                    continue; // the right reading on these bytes: nothing fails
                };
                for (other, qk2, bb2, fun2) in &readings {
                    let dec2 = |b: &[u8], o: &mut [f32]| -> Result<()> {
                        decode_stream(b, o, *qk2, *bb2, fun2);
                        Ok(())
                    };
                    let full =
                        expected_with(c, Precision::F32, &dec2).is_ok_and(|e| matches(c, &e, &out));
                    let admitted = probe.admits(Precision::F32, *qk2, *bb2, &dec2);
                    assert!(
                        admitted || !full,
                        "{}: {name}'s output, {other} turned away",
                        c.name
                    );
                    turned_away += !admitted as usize;
                    other_geometry_turned_away += (!admitted && (*qk2, *bb2) != geometry) as usize;
                    matched += full as usize;
                }
            }
        }
        assert!(matched >= 8, "{matched} full matches");
        // (A probe of one row of the case's own bytes admitted every one of them: 0.)
        assert!(
            other_geometry_turned_away >= 15,
            "{other_geometry_turned_away} other-geometry readings turned away"
        );
        assert!(turned_away >= 300, "{turned_away} readings turned away");
    }
}
