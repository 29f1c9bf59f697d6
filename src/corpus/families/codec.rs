//! The codec family: raw block streams per format (PROTOCOL.md §3.1, spec/codecs.md#block-codecs).
//!
//! Per quantized format: every byte value in every position class (code bytes, qh bytes,
//! the scale's low byte), all trit digits and the non-canonical base-3 bytes, code 3 of the
//! PQ2_0 family, the test vectors of spec/codecs.md#test-vectors, random blocks, and `i_` cases for zero,
//! negative, subnormal, infinite and NaN scales (compared value-wise).

use crate::codec::{base3, f32_to_f16, Codec};
use crate::corpus::{Bytes, Case};

/// A block format's byte map: position classes, the scale bytes, the spec section.
struct Fmt {
    codec: Codec,
    /// ggml type id this codec decodes (for features/notes).
    ggml: &'static str,
    /// Code-byte classes: (name, lo, hi).
    classes: &'static [(&'static str, usize, usize)],
    /// The f16 scale's byte offset.
    scale_at: usize,
    spec: &'static str,
}

const FMTS: &[Fmt] = &[
    Fmt {
        codec: Codec::Pq2_0,
        ggml: "PQ2_0 (142), legacy Q2_0-g128 (42)",
        classes: &[("qs", 2, 34)],
        scale_at: 0,
        spec: "spec/codecs.md#pq2-0",
    },
    Fmt {
        codec: Codec::Q2_0G64,
        ggml: "mainline Q2_0 (42)",
        classes: &[("qs", 2, 18)],
        scale_at: 0,
        spec: "spec/codecs.md#q2-0-g64",
    },
    Fmt {
        codec: Codec::Ptq1_0,
        ggml: "PTQ1_0 (143)",
        classes: &[("qs", 0, 24), ("qh", 24, 26)],
        scale_at: 26,
        spec: "spec/codecs.md#ptq1-0",
    },
    Fmt {
        codec: Codec::Tq1_0,
        ggml: "TQ1_0 (34)",
        classes: &[("qs", 0, 48), ("qh", 48, 52)],
        scale_at: 52,
        spec: "spec/codecs.md#tq1-0",
    },
    Fmt {
        codec: Codec::Tq2_0,
        ggml: "TQ2_0 (35)",
        classes: &[("qs", 0, 64)],
        scale_at: 64,
        spec: "spec/codecs.md#tq2-0",
    },
    Fmt {
        codec: Codec::Q1_0,
        ggml: "Q1_0 (41)",
        classes: &[("qs", 2, 18)],
        scale_at: 0,
        spec: "spec/codecs.md#q1-0",
    },
    Fmt {
        codec: Codec::Q8_0,
        ggml: "Q8_0 (8)",
        classes: &[("qs", 2, 34)],
        scale_at: 0,
        spec: "spec/codecs.md#q8-0",
    },
    Fmt {
        codec: Codec::Q2_0sPlanar,
        ggml: "BeeLlama Q2_0 (53) / Q2_0S (47)",
        classes: &[("qs", 2, 10)],
        scale_at: 0,
        spec: "spec/codecs.md#q2-0s",
    },
];

fn case(f: &Fmt, name: String, bytes: Vec<u8>, rows: u64) -> Case {
    let c = f.codec;
    let blocks = bytes.len() / c.block_bytes();
    let elems = (blocks * c.block_elems()) as u64;
    Case::new("codec", name, "codec", "bin", bytes)
        .param("codec", c.name())
        .param("rows", rows)
        .param("cols", elems / rows)
        .feature(format!("codec:{}", c.name()))
        .spec(f.spec)
        .note(format!("decodes as {}", f.ggml))
}

/// A plausible block: random code bytes, scale 1.0 + small jitter.
fn base_block(f: &Fmt, r: &mut Bytes) -> Vec<u8> {
    let mut b = r.fill(f.codec.block_bytes());
    let d = f32_to_f16(0.01 + 0.5 * r.unit());
    b[f.scale_at..f.scale_at + 2].copy_from_slice(&d.to_le_bytes());
    b
}

fn set_scale(f: &Fmt, block: &mut [u8], bits: u16) {
    block[f.scale_at..f.scale_at + 2].copy_from_slice(&bits.to_le_bytes());
}

const SPECIAL_SCALES: &[(&str, &[u16], &str)] = &[
    ("zero", &[0x0000, 0x8000], "+0 and -0"),
    (
        "negative",
        &[0xbc00, 0xb800, 0xc000, 0x8001],
        "-1, -0.5, -2, the smallest negative subnormal",
    ),
    (
        "subnormal",
        &[0x0001, 0x03ff, 0x0200, 0x0010],
        "f16 subnormals",
    ),
    ("inf", &[0x7c00, 0xfc00], "+inf and -inf"),
    (
        "nan",
        &[0x7e00, 0x7c01, 0xfe00, 0x7fff],
        "quiet, signalling and negative NaNs",
    ),
];

/// Every case of the `codec` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    for (fi, f) in FMTS.iter().enumerate() {
        let c = f.codec;
        let bb = c.block_bytes();
        let n = c.name();
        let mut r = Bytes::new(0xc0dec + fi as u64);
        // Every byte value in every code-byte position: block v has byte (v + 37 j) at position j.
        for &(cls, lo, hi) in f.classes {
            let mut bytes = Vec::with_capacity(256 * bb);
            for val in 0..256usize {
                let mut b = base_block(f, &mut r);
                for (k, x) in b[lo..hi].iter_mut().enumerate() {
                    *x = (val + 37 * k) as u8;
                }
                bytes.extend_from_slice(&b);
            }
            v.push(
                case(f, format!("y_{n}_bytes_{cls}"), bytes, 4)
                    .feature("codec:byte-sweep")
                    .recipe(format!(
                        "256 blocks; block v has byte (v + 37*j) mod 256 at {cls} position j; scales random in [0.01, 0.51)"
                    )),
            );
        }
        // The scale's low byte, all 256 values, with a finite high byte.
        let mut bytes = Vec::new();
        for val in 0..256u16 {
            let mut b = base_block(f, &mut r);
            set_scale(f, &mut b, 0x3c00 | val);
            bytes.extend_from_slice(&b);
        }
        v.push(
            case(f, format!("y_{n}_bytes_scale_lo"), bytes, 4)
                .feature("codec:byte-sweep")
                .recipe("256 blocks; scale = 0x3c00 | v (all finite, positive)"),
        );
        // The scale's high byte, all 256 values: negatives, subnormals, inf and NaN included.
        let mut bytes = Vec::new();
        for val in 0..256u16 {
            let mut b = base_block(f, &mut r);
            set_scale(f, &mut b, val << 8);
            bytes.extend_from_slice(&b);
        }
        v.push(
            case(f, format!("i_{n}_bytes_scale_hi"), bytes, 4)
                .feature("codec:byte-sweep")
                .feature("codec:scale-nonfinite")
                .recipe("256 blocks; scale = v << 8 (covers -0, negatives, subnormals, inf, NaN)")
                .note("value-wise: NaN == NaN, -0 == +0; a reader may refuse non-finite scales (ggml validation)"),
        );
        // Random blocks over several rows.
        let mut bytes = Vec::new();
        for _ in 0..32 {
            bytes.extend_from_slice(&base_block(f, &mut r));
        }
        let random_id = format!("codec/y_{n}_random");
        v.push(
            case(f, format!("y_{n}_random"), bytes.clone(), 4)
                .recipe("32 random blocks, positive finite scales"),
        );
        // Special scales, derived from the random blocks.
        for (what, bits, desc) in SPECIAL_SCALES {
            let mut m = bytes.clone();
            for (k, b) in m.chunks_mut(bb).enumerate() {
                set_scale(f, b, bits[k % bits.len()]);
            }
            v.push(
                case(f, format!("i_{n}_scale_{what}"), m, 4)
                    .feature(format!("codec:scale-{what}"))
                    .derived(random_id.clone(), format!("scale of block k := {:04x?}[k mod {}] ({desc})", bits, bits.len()))
                    .note("value-wise comparison (NaN == NaN, -0 == +0); a reader may refuse non-finite scales"),
            );
        }
    }
    v.extend(special_vectors()?);
    v.extend(direct_cases());
    Ok(v)
}

fn fmt(c: Codec) -> crate::Result<&'static Fmt> {
    FMTS.iter()
        .find(|f| f.codec == c)
        .ok_or_else(|| super::bug("codec formats", format!("{} is not in FMTS", c.name())))
}

/// Base-3 digits, non-canonical bytes, code 3, the test vectors of spec/codecs.md#test-vectors.
fn special_vectors() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    let canon5 = |x: usize| (x * 256).div_ceil(243) as u8;
    let canon4 = |x: usize| (x * 3 * 256).div_ceil(243) as u8;
    for c in [Codec::Ptq1_0, Codec::Tq1_0] {
        let f = fmt(c)?;
        let (qs, qh) = (f.classes[0], f.classes[1]);
        let mut bytes = Vec::new();
        for val in 0..243usize {
            let mut b = vec![0u8; c.block_bytes()];
            for (k, x) in b[qs.1..qs.2].iter_mut().enumerate() {
                *x = canon5((val + k) % 243);
            }
            for (k, x) in b[qh.1..qh.2].iter_mut().enumerate() {
                *x = canon4((val + k) % 81);
            }
            set_scale(f, &mut b, 0x3c00);
            bytes.extend_from_slice(&b);
        }
        v.push(
            case(f, format!("y_{}_trits_all", c.name()), bytes, 3)
                .feature("codec:base3-digits")
                .recipe("243 blocks; qs byte j of block v encodes the 5 trits of (v+j) mod 243, qh byte j the 4 trits of (v+j) mod 81 (canonical encoder bytes); d = 1.0"),
        );
        // Only non-canonical bytes.
        let nq: Vec<u8> = (0..=255u8)
            .filter(|&b| !base3::is_canonical_qs(b))
            .collect();
        let nh: Vec<u8> = (0..=255u8)
            .filter(|&b| !base3::is_canonical_qh(b))
            .collect();
        let blocks = nh.len().div_ceil(qh.2 - qh.1);
        let mut bytes = Vec::new();
        for k in 0..blocks.max(2) {
            let mut b = vec![0u8; c.block_bytes()];
            for j in qs.1..qs.2 {
                b[j] = nq[(k * (qs.2 - qs.1) + j) % nq.len()];
            }
            for j in qh.1..qh.2 {
                b[j] = nh[(k * (qh.2 - qh.1) + j - qh.1) % nh.len()];
            }
            set_scale(f, &mut b, 0x3c00);
            bytes.extend_from_slice(&b);
        }
        let rows = if (bytes.len() / c.block_bytes()) % 2 == 0 {
            2
        } else {
            1
        };
        v.push(
            case(f, format!("y_{}_noncanonical", c.name()), bytes, rows)
                .feature("codec:base3-noncanonical")
                .recipe(format!("qs bytes cycle through the {} non-canonical qs values, qh through the {} non-canonical qh values; d = 1.0", nq.len(), nh.len()))
                .note("the encoder never produces these bytes; decode must still follow the digit formula (spec/codecs.md#ptq1-0-digit-formula)"),
        );
    }
    // Code 3 (+2d) in the PQ2_0 family.
    for c in [Codec::Pq2_0, Codec::Q2_0G64] {
        let f = fmt(c)?;
        let mut bytes = Vec::new();
        for (k, fill) in [0xffu8, 0xfc, 0x3f, 0xc3].iter().enumerate() {
            let mut b = vec![*fill; c.block_bytes()];
            set_scale(f, &mut b, [0x3c00u16, 0x2e66, 0x3800, 0x4000][k]);
            bytes.extend_from_slice(&b);
        }
        v.push(
            case(f, format!("y_{}_code3", c.name()), bytes, 2)
                .feature("codec:code3")
                .recipe("4 blocks whose code bytes are 0xff, 0xfc, 0x3f, 0xc3 (code 3 = +2d in every or some positions)"),
        );
    }
    // test vectors of spec/codecs.md#test-vectors.
    let hex = |s: &str| -> crate::Result<Vec<u8>> {
        s.as_bytes()
            .chunks(2)
            .map(|d| {
                std::str::from_utf8(d)
                    .ok()
                    .and_then(|d| u8::from_str_radix(d, 16).ok())
                    .ok_or_else(|| super::bug("codec test vectors", format!("bad hex {s}")))
            })
            .collect()
    };
    let mut zero_ptq1 = vec![0x80u8; 24];
    zero_ptq1.extend_from_slice(&[0x7f, 0x7f, 0, 0]);
    let mut zero_pq2 = vec![0u8, 0];
    zero_pq2.extend_from_slice(&[0x55; 32]);
    let pat_ptq1 = hex("3194bb3194bb3194bb3194bb3194bb31cf456ccf456ccf45436c003c")?;
    let mut pat_pq2 = hex("003c")?;
    while pat_pq2.len() < 34 {
        pat_pq2.extend_from_slice(&[0x24, 0x49, 0x92]);
    }
    pat_pq2.truncate(34);
    for (c, name, bytes, what) in [
        (
            Codec::Ptq1_0,
            "y_ptq1_0_vector_zero",
            zero_ptq1,
            "all-zero input (d = 0)",
        ),
        (
            Codec::Pq2_0,
            "y_pq2_0_vector_zero",
            zero_pq2,
            "all-zero input (d = 0)",
        ),
        (
            Codec::Ptq1_0,
            "y_ptq1_0_vector_pattern",
            pat_ptq1,
            "t[e] = (e % 3) - 1, d = 1.0",
        ),
        (
            Codec::Pq2_0,
            "y_pq2_0_vector_pattern",
            pat_pq2,
            "t[e] = (e % 3) - 1, d = 1.0",
        ),
    ] {
        v.push(
            case(fmt(c)?, name.to_string(), bytes, 1)
                .feature("codec:test-vector")
                .spec("spec/codecs.md#test-vectors")
                .recipe(what),
        );
    }
    Ok(v)
}

/// F32, F16, BF16 and I32 (one element per "block").
fn direct_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let mk = |c: Codec, name: &str, bytes: Vec<u8>, rows: u64, spec: &str| {
        let elems = (bytes.len() / c.block_bytes()) as u64;
        Case::new("codec", name.to_string(), "codec", "bin", bytes)
            .param("codec", c.name())
            .param("rows", rows)
            .param("cols", elems / rows)
            .feature(format!("codec:{}", c.name()))
            .spec(spec.to_string())
    };
    let mut r = Bytes::new(0xd1ec7);
    let f32s: Vec<u8> = (0..256)
        .flat_map(|_| ((r.unit() - 0.5) * 1000.0).to_le_bytes())
        .collect();
    v.push(
        mk(
            Codec::F32,
            "y_f32_random",
            f32s,
            4,
            "spec/codecs.md#plain-types",
        )
        .recipe("256 finite f32 values"),
    );
    let specials: Vec<u8> = [
        0x7f80_0000u32,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0xffc1_2345,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
    ]
    .iter()
    .flat_map(|b| b.to_le_bytes())
    .collect();
    v.push(
        mk(
            Codec::F32,
            "i_f32_specials",
            specials,
            2,
            "spec/codecs.md#plain-types",
        )
        .feature("codec:nonfinite")
        .recipe("inf, -inf, NaNs with payloads, -0, subnormals")
        .note("value-wise: every NaN equal, -0 == +0"),
    );
    let all16: Vec<u8> = (0..=u16::MAX).flat_map(|b| b.to_le_bytes()).collect();
    v.push(
        mk(
            Codec::F16,
            "i_f16_all_values",
            all16.clone(),
            256,
            "spec/codecs.md#plain-types",
        )
        .feature("codec:nonfinite")
        .recipe("all 65536 f16 bit patterns in order")
        .note("value-wise: every NaN equal, -0 == +0; includes inf and NaN"),
    );
    v.push(
        mk(
            Codec::Bf16,
            "i_bf16_all_values",
            all16,
            256,
            "spec/codecs.md#plain-types",
        )
        .feature("codec:nonfinite")
        .recipe("all 65536 bf16 bit patterns in order")
        .note("value-wise: every NaN equal, -0 == +0; includes inf and NaN"),
    );
    let finite16: Vec<u8> = (0..512)
        .map(|_| f32_to_f16((r.unit() - 0.5) * 100.0))
        .flat_map(|b| b.to_le_bytes())
        .collect();
    v.push(
        mk(
            Codec::F16,
            "y_f16_random",
            finite16,
            4,
            "spec/codecs.md#plain-types",
        )
        .recipe("512 finite f16 values"),
    );
    let i32s: Vec<u8> = [
        0i32,
        1,
        -1,
        i32::MAX,
        i32::MIN,
        16_777_217,
        -16_777_217,
        123_456_789,
    ]
    .iter()
    .flat_map(|x| x.to_le_bytes())
    .chain((0..24).flat_map(|_| (r.next_u64() as i32).to_le_bytes()))
    .collect();
    v.push(
        mk(
            Codec::I32,
            "y_i32_values",
            i32s,
            4,
            "spec/codecs.md#plain-types",
        )
        .recipe("edges (0, ±1, MIN, MAX, 2^24+1) and random i32 values")
        .note("i32 -> f32 by round-to-nearest-even, as numpy astype(float32) and Rust `as f32` do"),
    );
    v
}
