//! Naming rounding faults a reading of the inputs cannot express: bf16 conversions that
//! truncate (drop the low 16 bits) instead of rounding to nearest even, and sums accumulated in
//! f16 or bf16. Truncation is a reading like the others (the outputs, or the sums of truncated
//! activations, meet the bound). An accumulator's rounding depends on the kernel's summation
//! order, so it is named from the size of the errors instead: the kernel's RMS error is compared
//! with the RMS error of f16 and bf16 accumulation of the same terms in two common orders
//! (sequential, and 32 lane-strided partial sums folded as a warp does); the type of the nearest
//! of the four, within a factor of 8 and twice as near as the other type in that order, is
//! named. f32 outputs written straight from the accumulator are values of its type, which
//! names it where the orders blur the sizes. Errors in under a quarter of the outputs, or
//! above 1/32 of the outputs' size, are not an accumulator's (a flushed scale, an aliased
//! cache, a stale sum): nothing is named. f32 errors are ~2^13 below f16 accumulation's, and a wrong reading
//! of the weights is far above bf16 accumulation's, so neither is named.

use super::abi::KernelClass;
use super::cases::KernelCase;
use super::diagnose::matches;
use super::expected::{expected, ggml_blocks, Expected};
use super::judge::{f32_down, f32_up, gamma};
use super::precision::{Dtype, Precision};

/// `v` truncated to bf16 (the low 16 bits dropped), as an f32.
pub fn bf16_truncate(v: f32) -> f32 {
    if v.is_nan() {
        return v;
    }
    f32::from_bits(v.to_bits() & 0xffff_0000)
}

/// The truncation readings the output meets: `output.bf16_truncated` (bf16 outputs, each the
/// truncation of an f32 within the bound, where one round-to-nearest-even was declared) and
/// `x.bf16_truncated` (f32 activations truncated to bf16 before use).
pub fn truncation(c: &KernelCase, p: Precision, out: &[u8]) -> Vec<&'static str> {
    let mut hits = Vec::new();
    if c.class.exact() {
        return hits;
    }
    if p.y == Dtype::Bf16 {
        if let Ok(e) = expected(c, p) {
            if truncated_outputs_meet(&e, out) {
                hits.push("output.bf16_truncated");
            }
        }
    }
    if p.x == Dtype::F32 && !c.x.is_empty() {
        let mut alt = c.clone();
        alt.x = c.x.iter().map(|&v| bf16_truncate(v)).collect();
        if alt.x != c.x && expected(&alt, p).is_ok_and(|e| matches(c, &e, out)) {
            hits.push("x.bf16_truncated");
        }
    }
    hits
}

/// Every bf16 output lies between the truncations of its bound's two ends (truncation is
/// monotonic), some output is not the correctly rounded value, and each that is not lies on
/// its zero side.
fn truncated_outputs_meet(e: &Expected, out: &[u8]) -> bool {
    let got = Dtype::Bf16.decode(out);
    if got.len() != e.values.len() {
        return false;
    }
    let gm = gamma(e.terms + 2);
    let mut differs = false;
    for (i, (&g, &want)) in got.iter().zip(&e.values).enumerate() {
        if want.is_nan() {
            if g.is_finite() {
                return false;
            }
            continue;
        }
        if want.is_infinite() {
            if g as f64 != want {
                return false;
            }
            continue;
        }
        let slack = e.slack.get(i).copied().unwrap_or(0.0);
        let base = gm * (e.magnitude[i] + slack) + slack;
        let lo = bf16_truncate(f32_down(want - base)) as f64;
        let hi = bf16_truncate(f32_up(want + base)) as f64;
        if !(lo..=hi).contains(&(g as f64)) {
            return false;
        }
        // Truncation only ever moves toward zero: an output off the correctly rounded value
        // on the far side (as an accumulator's random errors are) is not a truncation.
        let rne = Dtype::Bf16.round(want as f32);
        if g != rne {
            if g.abs() > rne.abs() || (g != 0.0 && g.signum() != rne.signum()) {
                return false;
            }
            differs = true;
        }
    }
    differs
}

/// Accumulates `terms` (formed in f32) in `acc`, rounded after every addition, sequentially or
/// as 32 lane-strided partial sums folded pairwise.
fn accumulate(terms: &[f32], acc: Dtype, strided: bool) -> f32 {
    let r = |v: f32| acc.round(v);
    if !strided {
        return terms.iter().fold(0f32, |s, &t| r(s + t));
    }
    let mut lanes = [0f32; 32];
    for (j, &t) in terms.iter().enumerate() {
        lanes[j % 32] = r(lanes[j % 32] + t);
    }
    let mut w = 16;
    while w > 0 {
        for l in 0..w {
            lanes[l] = r(lanes[l] + lanes[l + w]);
        }
        w /= 2;
    }
    lanes[0]
}

/// `acc.f16` or `acc.bf16` when the output's errors have the size of that accumulation's
/// ([module docs](self)); mat-vec and mat-mul classes with f32/f16/bf16 activations.
pub fn accumulator(c: &KernelCase, p: Precision, out: &[u8]) -> Option<&'static str> {
    if !matches!(
        c.class,
        KernelClass::MulMatVec
            | KernelClass::MulMat
            | KernelClass::MulMatVecPlanes
            | KernelClass::MulMatPlanes
    ) || p.x.quantized()
    {
        return None;
    }
    let e = expected(c, p).ok()?;
    let codec = c.format.codec().ok()?;
    let blocks = ggml_blocks(c).ok()?;
    let mut w = vec![0f32; codec.blocks_in(blocks.len()).ok()? * codec.block_elems()];
    codec.decode_reference(&blocks, &mut w).ok()?;
    let x: Vec<f32> = c.x.iter().map(|&v| p.x.round(v)).collect();
    let (n, t) = (c.dims.n as usize, c.dims.t.max(1) as usize);
    let kw = w.len() / n.max(1);
    let got = p.y.decode(out);
    if got.len() != n * t || x.len() != t * kw {
        return None;
    }
    // Squared errors: the kernel's, then f16 and bf16 accumulation in both orders.
    let mut sq = [0f64; 5];
    let (mut used, mut differ, mut sq_want) = (0usize, 0usize, 0f64);
    let mut terms = vec![0f32; kw];
    for tok in 0..t {
        for r in 0..n {
            let i = tok * n + r;
            let (want, g) = (e.values[i], got[i] as f64);
            if !want.is_finite() || !g.is_finite() {
                continue;
            }
            for (j, tj) in terms.iter_mut().enumerate() {
                *tj = w[r * kw + j] * x[tok * kw + j];
            }
            let sims = [
                accumulate(&terms, Dtype::F16, false),
                accumulate(&terms, Dtype::F16, true),
                accumulate(&terms, Dtype::Bf16, false),
                accumulate(&terms, Dtype::Bf16, true),
            ]
            .map(|v| p.y.round(v) as f64);
            if sims.iter().any(|v| !v.is_finite()) {
                continue;
            }
            // Errors from the correctly rounded output: with a narrow output type the rounding
            // every honest kernel makes is not counted, only what the accumulator adds.
            let right = p.y.round(want as f32) as f64;
            used += 1;
            differ += (g != right) as usize;
            sq_want += want * want;
            sq[0] += (g - right).powi(2);
            for (k, v) in sims.iter().enumerate() {
                sq[k + 1] += (v - right).powi(2);
            }
        }
    }
    // An accumulator touches every sum and keeps its result close: errors in under a quarter
    // of the outputs (a flushed scale, a few bad rows) or above 1/32 of the outputs' size
    // (wrong values: an aliased cache, a stale accumulator) are something else.
    if used == 0 || sq[0] == 0.0 || 4 * differ < used || sq[0] > sq_want / 1024.0 {
        return None;
    }
    // Log distance of the kernel's RMS error from the nearer of a type's two orders'.
    let dist = |a: f64, b: f64| {
        let d = |v: f64| (sq[0].ln() - v.ln()).abs() / 2.0;
        d(a).min(d(b))
    };
    let (d16, dbf) = (dist(sq[1], sq[2]), dist(sq[3], sq[4]));
    // f32 outputs written straight from the accumulator are values of its type: a crisp
    // signature where the orders blur the error sizes (named within a factor of 64).
    if p.y == Dtype::F32 {
        let of = |ty: Dtype| {
            let nonzero = got.iter().filter(|v| v.is_finite() && **v != 0.0);
            nonzero.clone().count() >= 4 && nonzero.into_iter().all(|&v| ty.round(v) == v)
        };
        let far = 64f64.ln();
        if of(Dtype::Bf16) && dbf < far {
            return Some("acc.bf16");
        }
        if of(Dtype::F16) && d16 < far {
            return Some("acc.f16");
        }
    }
    // Otherwise by the error size alone: the nearest of the four, within a factor of 8, and
    // twice as near as the other type in the same order (a sequential sum in one type can
    // look like a strided one in the other; the order that fits best is taken as the kernel's).
    let d = |k: usize| (sq[0].ln() - sq[k].ln()).abs() / 2.0;
    let best = (1..5).min_by(|&a, &b| d(a).total_cmp(&d(b)))?;
    let twin = if best <= 2 { best + 2 } else { best - 2 };
    if d(best) < 8f64.ln() && d(best) + 2f64.ln() <= d(twin) {
        Some(if best <= 2 { "acc.f16" } else { "acc.bf16" })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::diagnose::diagnose;
    use crate::cuda::generate;
    use crate::cuda::judge::judge;

    fn mmv(i: usize) -> KernelCase {
        generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap()[i]
            .clone()
    }

    fn terms_of(c: &KernelCase, p: Precision, r: usize) -> Vec<f32> {
        let codec = c.format.codec().unwrap();
        let mut w = vec![0f32; c.weights.len() / codec.block_bytes() * codec.block_elems()];
        codec.decode_reference(&c.weights, &mut w).unwrap();
        let k = c.dims.k as usize;
        (0..k).map(|j| w[r * k + j] * p.x.round(c.x[j])).collect()
    }

    /// An output where every row is summed by `sum`, written as `p.y`.
    fn summed(c: &KernelCase, p: Precision, sum: &dyn Fn(&[f32]) -> f32) -> Vec<u8> {
        let v: Vec<f32> = (0..c.dims.n as usize)
            .map(|r| sum(&terms_of(c, p, r)))
            .collect();
        p.y.encode(&v)
    }

    const BF16_OUT: Precision = Precision {
        y: Dtype::Bf16,
        ..Precision::F32
    };

    /// bf16 outputs truncated instead of rounded are named as such; rounded ones pass; the
    /// outputs of an f16 or a bf16 accumulator, and of a wrong layout, are not named truncated.
    #[test]
    fn bf16_truncation_is_named_and_nothing_else_is() {
        let c = mmv(2);
        let e = expected(&c, BF16_OUT).unwrap();
        let trunc: Vec<f32> = e.values.iter().map(|&v| bf16_truncate(v as f32)).collect();
        let out = Dtype::Bf16.encode(&trunc);
        assert!(!judge(&c, &e, &out).pass, "truncation must fail bf16-out");
        assert_eq!(diagnose(&c, BF16_OUT, &out), vec!["output.bf16_truncated"]);
        let rne: Vec<f32> = e.values.iter().map(|&v| v as f32).collect();
        assert!(judge(&c, &e, &Dtype::Bf16.encode(&rne)).pass);
        for acc in [Dtype::F16, Dtype::Bf16] {
            let out = summed(&c, BF16_OUT, &|t| accumulate(t, acc, true));
            assert!(truncation(&c, BF16_OUT, &out).is_empty(), "{acc:?}");
        }
        // Activations truncated to bf16 in an f32 kernel: named x.bf16_truncated, not rounded.
        let mut alt = c.clone();
        alt.x = c.x.iter().map(|&v| bf16_truncate(v)).collect();
        let ex = expected(&alt, Precision::F32).unwrap();
        let out = Dtype::F32.encode(&ex.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
        assert_eq!(diagnose(&c, Precision::F32, &out), vec!["x.bf16_truncated"]);
        // And bf16-rounded activations are named rounded, not truncated.
        let xr = expected(
            &c,
            Precision {
                x: Dtype::Bf16,
                ..Precision::F32
            },
        )
        .unwrap();
        let out = Dtype::F32.encode(&xr.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
        assert_eq!(diagnose(&c, Precision::F32, &out), vec!["x.bf16_rounded"]);
    }

    /// An f16 or bf16 accumulator is named by the size of its errors whatever its order
    /// (sequential, lane-strided, or 8 partial sums, an order the estimate does not simulate),
    /// in f32 and bf16 outputs; the right output, a weight-layout bug and f32 accumulation in
    /// another order are not named accumulators.
    #[test]
    fn accumulators_are_named_by_their_error_size() {
        let eight = |acc: Dtype| {
            move |t: &[f32]| {
                let mut p = [0f32; 8];
                for (j, &v) in t.iter().enumerate() {
                    p[j % 8] = acc.round(p[j % 8] + acc.round(v));
                }
                p.iter().fold(0f32, |s, &v| acc.round(s + v))
            }
        };
        for i in [2usize, 5] {
            let c = mmv(i);
            for p in [Precision::F32, BF16_OUT] {
                for (acc, name) in [(Dtype::F16, "acc.f16"), (Dtype::Bf16, "acc.bf16")] {
                    for order in ["sequential", "strided", "8 partials"] {
                        let out = match order {
                            "sequential" => summed(&c, p, &|t| accumulate(t, acc, false)),
                            "strided" => summed(&c, p, &|t| accumulate(t, acc, true)),
                            _ => summed(&c, p, &eight(acc)),
                        };
                        let got = accumulator(&c, p, &out);
                        // f32 outputs show the accumulator's type; bf16 outputs hide it, so
                        // there only the error size speaks: a bf16 accumulator in the warp
                        // order is named; others may be left unnamed (an f16 accumulator's
                        // error mostly vanishes in the bf16 rounding), never misnamed.
                        // (A bf16 sum of over 1500 terms per partial stalls: its error passes
                        // 1/32 of the result, where values are wrong, not rounded.)
                        let stalls = acc == Dtype::Bf16 && order != "strided" && c.dims.k > 4096;
                        if (p == Precision::F32 && !stalls)
                            || (order == "strided" && acc == Dtype::Bf16)
                        {
                            assert_eq!(got, Some(name), "{} {p} {order}", c.name);
                        } else {
                            assert!(got.is_none() || got == Some(name), "{} {p} {order}", c.name);
                        }
                    }
                }
                let f32_rev = summed(&c, p, &|t| t.iter().rev().sum());
                assert_eq!(accumulator(&c, p, &f32_rev), None, "{} {p}", c.name);
            }
            // An x cache that aliases past 8192 floats (wrong values, not rounding), and one
            // row off by an f16 accumulator's error while the rest are right: neither is named.
            let k = c.dims.k as usize;
            let mut alias = c.clone();
            alias.x = (0..k).map(|j| c.x[j % 8192]).collect();
            let e = expected(&alias, Precision::F32).unwrap();
            let out = Dtype::F32.encode(&e.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
            if k > 8192 {
                assert_eq!(
                    accumulator(&c, Precision::F32, &out),
                    None,
                    "{} alias",
                    c.name
                );
            }
            let right = expected(&c, Precision::F32).unwrap();
            let mut one: Vec<f32> = right.values.iter().map(|&v| v as f32).collect();
            one[0] = accumulate(&terms_of(&c, Precision::F32, 0), Dtype::F16, true);
            let out = Dtype::F32.encode(&one);
            assert_eq!(
                accumulator(&c, Precision::F32, &out),
                None,
                "{} one row",
                c.name
            );
            // A wrong layout (the planar reading) is far above any accumulator's error.
            let mut alt = c.clone();
            alt.weights = c.weights.iter().map(|b| b.rotate_left(2)).collect();
            let e = expected(&alt, Precision::F32).unwrap();
            let out = Dtype::F32.encode(&e.values.iter().map(|&v| v as f32).collect::<Vec<_>>());
            assert_eq!(accumulator(&c, Precision::F32, &out), None, "{}", c.name);
        }
    }
}
