//! Gate: dense_values — every dense produced object (norm shifts, a_log, dt_bias, the head rows,
//! the conv1d transpose) recomputed from the source GGUF and compared bit for bit.
//!
//! The arithmetic is the verifier's own: values in f64, the head gather from `rules.rs`, and the
//! final rounding by [`round_to_bits`](crate::verify::dense::round_to_bits) (integer scaling + round-half-even), not the packer's
//! `pack::dense` nor `codec::direct::f32_to_bf16`, so a rounding bug in either cannot hide.

use super::findings::Failure;
use super::{rules, Ctx, Finding};
use crate::codec::Codec;
use crate::error::Result;
use crate::mapping::at_layer;
use crate::spec::{mapping, HeadVectorFn, LayerSet, Produce};

/// 2^k exactly, built from its bits (k within the normal f64 exponent range, which every
/// caller's k is: -149..=1023).
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `v` rounded to nearest-even with `bits` significand bits and the f32/bf16 exponent range
/// (min normal 2^-126, max finite (2 - 2^(1-bits)) · 2^127); overflow gives ±inf.
pub fn round_to_bits(v: f64, bits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    // Unbiased exponent of |v| (v comes from f32 inputs, never an f64 subnormal).
    let e = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let quantum = pow2(e.max(-126) - (bits - 1));
    let q = v / quantum; // exact: a power-of-two scaling
                         // floor(q) without a libm call: |q| < 2^bits (<= 2^24), so the truncation is exact.
    let t = q as i64 as f64;
    let fl = if t > q { t - 1.0 } else { t };
    let frac = q - fl; // exact: q has at most 53 significant bits
                       // fl is an exact i64, so its low bit is its parity.
    let up = frac > 0.5 || (frac == 0.5 && (fl as i64) & 1 != 0);
    // copysign: an underflow to zero keeps the sign of v (-0.0 for a tiny negative value).
    let r = ((if up { fl + 1.0 } else { fl }) * quantum).copysign(v);
    let max = (2.0 - pow2(1 - bits)) * pow2(127);
    if r.abs() > max {
        f64::INFINITY.copysign(v)
    } else {
        r
    }
}

/// bf16 bits of the correctly rounded `v` (exact: the rounded value is a bf16).
fn bf16_of(v: f64) -> u16 {
    if v.is_nan() {
        return 0x7fc0;
    }
    ((round_to_bits(v, 8) as f32).to_bits() >> 16) as u16
}

fn f32_of(v: f64) -> u32 {
    if v.is_nan() {
        return f32::NAN.to_bits();
    }
    (round_to_bits(v, 24) as f32).to_bits()
}

/// Expected little-endian bytes of one dense object, or why it cannot be computed.
pub fn expected(ctx: &Ctx<'_>, produce: &Produce, l: Option<u64>) -> Result<(String, Vec<u8>)> {
    let p = &ctx.profile;
    let src_name = |s: &str| ctx.name(s, l);
    let load = |s: &str| -> Result<(Vec<f64>, Vec<u64>)> {
        let name = src_name(s)?;
        let t = ctx
            .gguf
            .tensor(&name)
            .ok_or_else(|| err!(GgufTensorMissing, &name, "absent from the GGUF"))?;
        let c = Codec::for_ggml_type_checked(t.ggml).map_err(|e| super::within(e, &name))?;
        let data = ctx.gguf.tensor_data(t);
        crate::fsio::will_need(data);
        let v = c.decode_to_vec(data).map_err(|e| super::within(e, &name))?;
        Ok((v.into_iter().map(f64::from).collect(), t.ne.to_vec()))
    };
    let bf16 = |v: &mut dyn Iterator<Item = f64>| -> Vec<u8> {
        v.flat_map(|x| bf16_of(x).to_le_bytes()).collect()
    };
    let heads = p.v_heads as usize;
    Ok(match produce {
        Produce::Norm { src, minus_one } => {
            let (v, _) = load(src)?;
            let shift = if *minus_one { 1.0 } else { 0.0 };
            ("norm".into(), bf16(&mut v.iter().map(|x| x - shift)))
        }
        Produce::HeadVector { src, func } => {
            let (v, _) = load(src)?;
            if v.len() != heads {
                let n = src_name(src)?;
                fail!(GgufTensorShape, &n, "{} values, not {heads} heads", v.len());
            }
            let mut out = Vec::with_capacity(4 * heads);
            for i in 0..heads {
                let a = v[rules::perm48(p, i as u64) as usize];
                let y = match func {
                    HeadVectorFn::Identity => a,
                    HeadVectorFn::LogNeg if a < 0.0 => (-a).ln(),
                    HeadVectorFn::LogNeg => {
                        let n = src_name(src)?;
                        fail!(VerifyInput, format!("{n}[{i}]"), "{a} is not negative")
                    }
                };
                out.extend_from_slice(&f32_of(y).to_le_bytes());
            }
            (format!("head_vector:{func}"), out)
        }
        Produce::HeadRows { src } => {
            let (v, ne) = load(src)?;
            let row = ne[0] as usize;
            if ne[1] as usize != heads {
                let n = src_name(src)?;
                fail!(GgufTensorShape, &n, "{} rows, not {heads} heads", ne[1]);
            }
            let mut it = (0..heads).flat_map(|i| {
                let s = rules::perm48(p, i as u64) as usize;
                v[s * row..(s + 1) * row].iter().copied()
            });
            ("head_rows".into(), bf16(&mut it))
        }
        Produce::Conv1d { src } => {
            let (v, ne) = load(src)?;
            let vals = conv1d_values(ctx, &src_name(src)?, &v, &ne)?;
            ("conv1d".into(), bf16(&mut vals.into_iter()))
        }
        Produce::TernaryRows { .. } => {
            fail!(InternalInvariant, "produce", "ternary rows are not dense")
        }
    })
}

/// The conv1d tensor's values in stored order `(kernel, C)`: element (tap, ch) reads source
/// channel ch (q, k) or the head-permuted V channel, tap `tap`; the source `name` is physically
/// `(C, kernel)`.
fn conv1d_values(ctx: &Ctx<'_>, name: &str, v: &[f64], ne: &[u64]) -> Result<Vec<f64>> {
    let p = &ctx.profile;
    let (kernel, c) = (ne[0] as usize, ne[1] as usize);
    let qk = ctx.dim(&crate::spec::Dim::Name("qk_rows".into()))? as usize;
    if v.len() != kernel * c || qk > c {
        fail!(
            GgufTensorShape,
            name,
            "ne=[{kernel}, {c}] does not fit qk_rows {qk}"
        );
    }
    let channel = |ch: usize| {
        if ch < qk {
            ch
        } else {
            qk + rules::perm_row(p, (ch - qk) as u64) as usize
        }
    };
    Ok((0..kernel)
        .flat_map(|tap| (0..c).map(move |ch| (tap, ch)))
        .map(|(tap, ch)| v[channel(ch) * kernel + tap])
        .collect())
}

/// Whether little-endian FP32 (4 bytes) or BF16 (2 bytes) bits are a NaN.
fn is_nan(b: &[u8]) -> bool {
    match b.len() {
        4 => f32::from_bits(le_bits(b) as u32).is_nan(),
        _ => {
            let h = le_bits(b) as u16;
            h & 0x7f80 == 0x7f80 && h & 0x7f != 0
        }
    }
}

/// The unsigned little-endian integer of up to 8 bytes (the bits of one stored element).
fn le_bits(b: &[u8]) -> u64 {
    b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

/// Element width of a dense object's stored format.
fn elem_bytes(kind: &str) -> usize {
    if kind.starts_with("head_vector") {
        4
    } else {
        2
    }
}

/// The layers a rule applies to among the source's (`None` = a global object).
fn rule_layers(ctx: &Ctx<'_>, set: LayerSet) -> Vec<Option<u64>> {
    let p = &ctx.profile;
    match set {
        LayerSet::Global => vec![None],
        set => ctx
            .layers
            .iter()
            .copied()
            .filter(|&l| match set {
                LayerSet::Gdn => !p.is_attention_layer(l),
                LayerSet::Attention => p.is_attention_layer(l),
                _ => true,
            })
            .map(Some)
            .collect(),
    }
}

/// (values that differ, first differing element, largest distance in ulps) of two equally
/// long little-endian arrays of `w`-byte floats. NaN payloads are not specified: any NaN
/// matches any NaN.
fn compare_values(got: &[u8], want: &[u8], w: usize) -> (usize, Option<usize>, u64) {
    let (mut bad, mut first, mut max_ulps) = (0usize, None, 0u64);
    for (i, (g, e)) in got.chunks_exact(w).zip(want.chunks_exact(w)).enumerate() {
        if g != e && !(is_nan(g) && is_nan(e)) {
            bad += 1;
            first.get_or_insert(i);
            max_ulps = max_ulps.max(le_bits(g).abs_diff(le_bits(e)));
        }
    }
    (bad, first, max_ulps)
}

/// Running counts of the gate. Controls: a norm expected WITHOUT its −1 shift, and the first
/// expected value moved by one ulp, must both differ from the artifact.
#[derive(Default)]
struct Tally {
    objects: usize,
    values: usize,
    mismatched_objects: usize,
    mismatches: usize,
    absent: usize,
    max_ulps: u64,
    shift_control: Option<bool>,
    ulp_control: Option<bool>,
}

impl Tally {
    /// Compares one produced object with its recomputation.
    fn object(
        &mut self,
        ctx: &Ctx<'_>,
        f: &mut Finding,
        produce: &Produce,
        target: &str,
        l: Option<u64>,
    ) -> Result<()> {
        let Some(o) = ctx.artifact.directory.find(target) else {
            self.absent += 1;
            f.line(format!("{target}: ABSENT from the artifact"));
            return Ok(());
        };
        let got = ctx.artifact.object_bytes(o);
        crate::fsio::will_need(got);
        let (kind, want) = expected(ctx, produce, l)?;
        self.objects += 1;
        let w = elem_bytes(&kind);
        self.values += want.len() / w;
        if got.len() != want.len() {
            self.byte_length_mismatch(f, target, &kind, got.len(), want.len(), w);
            return Ok(());
        }
        self.compare(f, target, &kind, got, &want, w);
        self.controls(ctx, produce, l, got, &want)
    }

    /// Counts and reports an object whose byte length is not the recomputation's (every one
    /// of its expected `w`-byte values counts as a mismatch).
    fn byte_length_mismatch(
        &mut self,
        f: &mut Finding,
        target: &str,
        kind: &str,
        got_len: usize,
        want_len: usize,
        w: usize,
    ) {
        self.mismatched_objects += 1;
        self.mismatches += want_len / w;
        f.line(format!(
            "{target}: {got_len} bytes, expected {want_len} ({kind})"
        ));
        f.failure(Failure {
            check: "dense_values.byte_length".into(),
            object: Some(target.into()),
            expected: Some(want_len.into()),
            observed: Some(got_len.into()),
            ..Failure::new(format!("{target}: {got_len} bytes, expected {want_len}"))
        });
    }

    /// Compares an object's `w`-byte values with the recomputation's (equally long): counts
    /// the differing ones and reports the first, with its stored bits.
    fn compare(
        &mut self,
        f: &mut Finding,
        target: &str,
        kind: &str,
        got: &[u8],
        want: &[u8],
        w: usize,
    ) {
        let (bad, first, ulps) = compare_values(got, want, w);
        self.max_ulps = self.max_ulps.max(ulps);
        if bad == 0 {
            return;
        }
        self.mismatched_objects += 1;
        self.mismatches += bad;
        let at = first.unwrap_or(0);
        f.line(format!(
            "{target}: {bad} value(s) differ ({kind}), first at element {at}"
        ));
        let bits_at = |b: &[u8]| {
            b.get(at * w..(at + 1) * w)
                .map(|e| format!("0x{:0width$x}", le_bits(e), width = 2 * w))
        };
        f.failure(Failure {
            check: "dense_values.value".into(),
            object: Some(target.into()),
            element: Some(at as u64),
            expected: bits_at(want).map(Into::into),
            observed: bits_at(got).map(Into::into),
            ..Failure::new(format!(
                "{target}: {bad} value(s) differ ({kind}), first at element {at} (stored bits)"
            ))
        });
    }

    /// Runs each negative control once, on the first object it applies to: the first expected
    /// value nudged by one ulp, and a shifted norm recomputed without its −1 shift, must both
    /// differ from the stored bytes.
    fn controls(
        &mut self,
        ctx: &Ctx<'_>,
        produce: &Produce,
        l: Option<u64>,
        got: &[u8],
        want: &[u8],
    ) -> Result<()> {
        if self.ulp_control.is_none() && !want.is_empty() {
            let mut nudged = want.to_vec();
            nudged[0] ^= 1; // one ulp of the first element's low byte
            self.ulp_control = Some(nudged.as_slice() != got);
        }
        if let Produce::Norm {
            src,
            minus_one: true,
        } = produce
        {
            if self.shift_control.is_none() {
                let unshifted = Produce::Norm {
                    src: src.clone(),
                    minus_one: false,
                };
                let (_, raw) = expected(ctx, &unshifted, l)?;
                self.shift_control = Some(raw.as_slice() != got);
            }
        }
        Ok(())
    }
}

/// Asks for every range the gate reads at once (each dense object it compares and the GGUF
/// tensor it comes from), so that a cold run queues some 900 small reads together instead of
/// waiting for each in turn (1.5 s of a 5.2 s cold 27B verify before this). Advice only: the
/// comparison reads the same bytes either way.
fn read_ahead(ctx: &Ctx<'_>) {
    for rule in &mapping().rules {
        let src = match &rule.produce {
            Produce::TernaryRows { .. } => continue,
            Produce::Norm { src, .. }
            | Produce::HeadVector { src, .. }
            | Produce::HeadRows { src }
            | Produce::Conv1d { src } => src,
        };
        for l in rule_layers(ctx, rule.layers) {
            if let Some(t) = ctx.name(src, l).ok().and_then(|n| ctx.gguf.tensor(&n)) {
                crate::fsio::will_need(ctx.gguf.tensor_data(t));
            }
            let target = ctx.name(&rule.target, l).ok();
            if let Some(o) = target.and_then(|n| ctx.artifact.directory.find(&n)) {
                crate::fsio::will_need(ctx.artifact.object_bytes(o));
            }
        }
    }
}

/// Runs the gate over every dense produced object of the mapping.
pub fn run(ctx: &Ctx<'_>) -> Result<Finding> {
    let mut f = Finding::new("dense_values");
    let mut t = Tally::default();
    let mut out_of_scope: Vec<String> = Vec::new();
    read_ahead(ctx);
    for rule in &mapping().rules {
        if matches!(rule.produce, Produce::TernaryRows { .. }) {
            continue;
        }
        let layers = rule_layers(ctx, rule.layers);
        if layers.is_empty() {
            // A per-layer rule of a kind of layer this artifact holds none of (a minimal
            // artifact has no GDN layer: no a_log, dt_bias, convolution).
            out_of_scope.push(at_layer(&rule.target, None));
        }
        for l in layers {
            let target = ctx.name(&rule.target, l)?;
            if ctx.is_out_of_scope(&target) {
                out_of_scope.push(target);
                continue;
            }
            t.object(ctx, &mut f, &rule.produce, &target, l)?;
        }
    }
    if !out_of_scope.is_empty() {
        f.line(format!(
            "SKIPPED, not in this {}: {}",
            match ctx.minimal {
                Some(_) => "minimal artifact",
                None => "reduced source",
            },
            out_of_scope.join(", ")
        ));
        f.num("skipped", out_of_scope.len());
    }
    let controls_ok = t.ulp_control == Some(true) && t.shift_control == Some(true);
    let Tally {
        objects,
        values,
        mismatched_objects,
        mismatches,
        absent,
        max_ulps,
        ..
    } = t;
    f.num("objects", objects)
        .num("values", values)
        .num("mismatched_objects", mismatched_objects)
        .num("value_mismatches", mismatches)
        .num("max_ulps", max_ulps as usize)
        .num("absent", absent);
    f.line(format!(
        "negative controls: one-ulp nudge {}, norm without its -1 shift {}",
        verdict(t.ulp_control),
        verdict(t.shift_control)
    ));
    let ok = mismatches == 0 && absent == 0 && objects > 0 && controls_ok;
    f.set_ok(ok);
    f.detail = if ok {
        format!("{objects}/{objects} dense objects ({values} values) equal the correctly rounded recomputation bit for bit")
    } else if !controls_ok {
        "a negative control was not rejected: the comparison cannot see a wrong value".into()
    } else {
        format!(
            "{mismatches} value(s) in {mismatched_objects} object(s) differ from the correctly rounded recomputation (max {max_ulps} ulp); {absent} absent"
        )
    };
    Ok(f)
}

fn verdict(c: Option<bool>) -> &'static str {
    match c {
        Some(true) => "rejected",
        Some(false) => "SURVIVED",
        None => "NOT RUN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_hand_cases() {
        // bf16: 1 + 2^-8 + 2^-30 rounds up; the exact midpoint ties to even.
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
        assert_eq!(bf16_of(x), 0x3f81);
        assert_eq!(bf16_of(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(bf16_of(-(1.0 + 3.0 * 2f64.powi(-8))), 0xbf82);
        // f32: 1 + 2^-24 ties to 1; a hair above goes up.
        assert_eq!(f32_of(1.0 + 2f64.powi(-24)), 1f32.to_bits());
        assert_eq!(
            f32_of(1.0 + 2f64.powi(-24) + 2f64.powi(-40)),
            1f32.to_bits() + 1
        );
        // Subnormal range and overflow.
        assert_eq!(f32_of(2f64.powi(-149)), 1);
        assert_eq!(f32_of(2f64.powi(-151)), 0);
        assert_eq!(bf16_of(2f64.powi(-133)), 1);
        assert_eq!(bf16_of(1e39), 0x7f80);
        assert_eq!(f32_of(3.5e38), f32::INFINITY.to_bits());
        // Agrees with the hardware f64 -> f32 conversion (nearest-even) everywhere it is defined.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = f64::from_bits((s >> 2) | 0x3000_0000_0000_0000)
                * if s & 1 == 1 { -1.0 } else { 1.0 };
            assert_eq!(f32_of(v), (v as f32).to_bits(), "{v:e}");
        }
    }
}
