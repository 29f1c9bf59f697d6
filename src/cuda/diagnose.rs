//! Naming a failure: when a kernel's output breaks the rule, the same inputs are decoded under
//! the known wrong readings of its format and class (other bit order, planar vs sequential,
//! another block size, code offset c-2, code 3 as +1, the scale at the other end or taken
//! absolute, a hand-written f16 conversion that only knows normal numbers, PTQ1_0/TQ1_0 digits
//! read sequentially or through the byte's value, row-major activations, a Hadamard transform
//! without its normalization or with the signs after it, a row-split object read as interleaved
//! blocks or from the buffer's first byte, outputs rounded to f16/bf16) and judged by the same
//! rule; the first reading the output meets is named ("looks like: ...").

use super::abi::KernelClass;
use super::cases::{codec_of, plane_geometry, KernelCase};
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

/// The known wrong element readings of a block codec: (name, block elems, block bytes, reading).
fn element_variants(codec: Codec) -> Vec<(&'static str, usize, usize, ElemFn)> {
    let (qk, bb) = (codec.block_elems(), codec.block_bytes());
    let mut v: Vec<(&'static str, usize, usize, ElemFn)> = Vec::new();
    match codec {
        Codec::Pq2_0 | Codec::Q2_0G64 => {
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
                Box::new(move |b, j| {
                    ((((b[2 + j % q] >> (2 * (j / q))) & 3) as f32) - 1.0) * f16at(b, 0)
                }),
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
                "scale.other_end",
                qk,
                bb,
                Box::new(move |b, j| {
                    ((((b[j / 4] >> (2 * (j % 4))) & 3) as f32) - 1.0) * f16at(b, bb - 2)
                }),
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
        Codec::Ptq1_0 | Codec::Tq1_0 => {
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
        }
        Codec::Tq2_0 => {
            let code = |b: &[u8], e: usize| {
                ((b[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) as i32
            };
            v.push((
                "tq2.sequential",
                qk,
                bb,
                Box::new(move |b, e| {
                    ((((b[e / 4] >> (2 * (e % 4))) & 3) as f32) - 1.0) * f16at(b, 64)
                }),
            ));
            v.push((
                "q2.reversed_bits",
                qk,
                bb,
                Box::new(move |b, e| {
                    ((((b[(e / 128) * 32 + e % 32] >> (6 - 2 * ((e % 128) / 32))) & 3) as f32)
                        - 1.0)
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
                "scale.other_end",
                qk,
                bb,
                Box::new(move |b, e| {
                    ((((b[2 + (e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) as f32)
                        - 1.0)
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
        _ => {}
    }
    v
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

fn matches(c: &KernelCase, e: &Expected, out: &[u8]) -> bool {
    judge(c, e, out).pass
}

/// The first known wrong reading whose expectation the output meets, if any.
pub fn diagnose(c: &KernelCase, p: Precision, out: &[u8]) -> Option<&'static str> {
    diagnose_all(c, p, out)
        .ok()
        .and_then(|v| v.into_iter().next())
}

/// Every known wrong reading the output meets (tests use this to prove each reading is
/// reachable).
pub fn diagnose_all(c: &KernelCase, p: Precision, out: &[u8]) -> Result<Vec<&'static str>> {
    let mut hits = Vec::new();
    // Weight readings.
    if c.class != KernelClass::HadamardRotate {
        let codec = codec_of(&c.format)?;
        for (name, qk, bb, f) in element_variants(codec) {
            let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                decode_stream(b, o, qk, bb, &f);
                Ok(())
            };
            if let Ok(e) = expected_with(c, p, &dec) {
                if matches(c, &e, out) {
                    hits.push(name);
                }
            }
        }
    }
    // Class readings.
    match c.class {
        KernelClass::MulMat if c.dims.t > 1 => {
            let (t, k, n) = (c.dims.t as usize, c.dims.k as usize, c.dims.n as usize);
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
        KernelClass::MulMatVecPlanes => {
            if let (Ok(codec), Ok((layout, geom))) = (
                codec_of(&c.format),
                plane_geometry(&c.format, c.dims.n, c.dims.k),
            ) {
                let buf = weights_buffer(c);
                let need = (c.dims.n * (c.dims.k / codec.block_elems() as u64)) as usize
                    * codec.block_bytes();
                let mut alt = c.clone();
                alt.class = KernelClass::MulMatVec;
                alt.weights = buf[..need.min(buf.len())].to_vec();
                if alt.weights.len() == need && expected(&alt, p).is_ok_and(|e| matches(c, &e, out))
                {
                    hits.push("planes.interleaved_blocks");
                }
                if c.obj_prefix > 0 && buf.len() >= geom.payload_bytes as usize {
                    let mut alt = c.clone();
                    alt.weights = buf[..geom.payload_bytes as usize].to_vec();
                    let _ = &layout;
                    if expected(&alt, p).is_ok_and(|e| matches(c, &e, out)) {
                        hits.push("planes.offsets_without_base");
                    }
                }
            }
        }
        _ => {}
    }
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
            if q == p || (p.x == Dtype::Q8_1 && name.starts_with("x.")) {
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
    Ok(hits)
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
            for f in &class.spec().formats {
                let codec = codec_of(f).unwrap();
                let c = &generate::matrix(class, f).unwrap()[1];
                for (name, qk, bb, fun) in element_variants(codec) {
                    let dec = |b: &[u8], o: &mut [f32]| -> Result<()> {
                        decode_stream(b, o, qk, bb, &fun);
                        Ok(())
                    };
                    let e = expected_with(c, Precision::F32, &dec).unwrap();
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
}
