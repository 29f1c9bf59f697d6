//! The acceptance rules of `spec/kernels.json`, per precision mode: bit-exact for dequantize /
//! get_rows (the round-to-nearest-even encoding of the exact value in the output type), an
//! f64-derived rounding-error bound plus an NMSE limit for the sums; NaN matches any NaN.
//! Also the guard-band check and the coordinates of an output element.

use super::abi::KernelClass;
use super::cases::KernelCase;
use super::expected::Expected;
use super::precision::Dtype;
#[cfg(any(test, feature = "internals"))]
use crate::error::{Error, ErrorClass, Result};

/// The first output that breaks the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct BadElement {
    /// Flat output index.
    pub index: usize,
    /// The kernel's value (widened).
    pub got: f64,
    /// The kernel's bits in the output type.
    pub bits: u32,
    /// The exact value.
    pub want: f64,
    /// The absolute error the rule allows there (0 for exact classes).
    pub tolerance: f64,
}

/// The judgement of one kernel output against one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Whether the output meets the class's rule (exact, or within the bound).
    pub pass: bool,
    /// First element that breaks the rule.
    pub first_bad: Option<BadElement>,
    /// Elements that break the rule.
    pub bad: usize,
    /// Bounded classes: max |err| / bound over the outputs (<= 1 passes).
    pub max_err_ratio: f64,
    /// Bounded classes: normalized mean squared error.
    pub nmse: f64,
    /// Bounded classes: the NMSE limit of this case under its precision.
    pub nmse_max: f64,
    /// Outputs that still hold the runner's fill (never written).
    pub unwritten: usize,
    /// Bounded classes: the NMSE is above its limit (every element may still be in bounds).
    pub nmse_exceeded: bool,
    /// f16/bf16 outputs: the largest distance in output ULPs from the correctly rounded
    /// reference, and how many ULPs the bound allowed on that side at that element (with no
    /// distance anywhere: the smallest allowance of any output).
    pub ulps: Option<(u32, u32)>,
}

/// A 16-bit float's bits as a signed position on the number line (`-0` and `+0` both 0), so the
/// difference of two positions is their distance in ULPs.
fn ord16(b: u32) -> i64 {
    let m = (b & 0x7fff) as i64;
    if b & 0x8000 != 0 {
        -m
    } else {
        m
    }
}

impl Comparison {
    /// One line for reports: the first bad element, located, and the error figures.
    pub fn summary(&self, case: &KernelCase, out: Dtype) -> String {
        let exact = case.class.exact();
        let mut s = match &self.first_bad {
            None => String::new(),
            Some(b) => format!(
                "first differing element {} ({}): got {:e} (bits {:#0w$x}), reference {:e}{}; ",
                b.index,
                locate(case, b.index),
                b.got,
                b.bits,
                b.want,
                if exact {
                    String::new()
                } else {
                    format!(" (allowed error {:.3e})", b.tolerance)
                },
                w = if out == Dtype::F32 { 10 } else { 6 },
            ),
        };
        if self.unwritten > 0 {
            s.push_str(&format!(
                "{} outputs never written (still the runner's fill 0x7fa5a5a5); ",
                self.unwritten
            ));
        }
        if exact {
            s.push_str(&format!("{} of the outputs differ bitwise", self.bad));
        } else if let Some((d, allowed)) = self.ulps {
            s.push_str(&format!(
                "{} outside the bound; max distance from the correctly rounded reference {d} ULP (the bound allows {allowed} there), NMSE {:.3e} (limit {:.1e}{})",
                self.bad,
                self.nmse,
                self.nmse_max,
                if self.nmse_exceeded { ", EXCEEDED" } else { "" }
            ));
        } else {
            s.push_str(&format!(
                "{} outside the bound; max|err|/bound {:.3e}, NMSE {:.3e} (limit {:.1e}{})",
                self.bad,
                self.max_err_ratio,
                self.nmse,
                self.nmse_max,
                if self.nmse_exceeded { ", EXCEEDED" } else { "" }
            ));
        }
        s
    }
}

/// Whether output `i` still holds the runner's fill: the f32 pattern 0x7fa5a5a5, i.e. the
/// little-endian bytes a5 a5 a5 7f repeated over the buffer. For 2-byte types only the odd
/// elements (0x7fa5, a NaN) can be told from a value a kernel writes.
pub fn unwritten(y: Dtype, out: &[u8], i: usize) -> bool {
    const FILL: [u8; 4] = [0xa5, 0xa5, 0xa5, 0x7f];
    let eb = y.elem_bytes();
    match out.get(i * eb..(i + 1) * eb) {
        Some(b) if eb == 4 => b == FILL,
        Some(b) if eb == 2 => i % 2 == 1 && b == [0xa5, 0x7f],
        _ => false,
    }
}

/// The largest f32 not above `v`.
pub(super) fn f32_down(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64) > v {
        f.next_down()
    } else {
        f
    }
}

/// The smallest f32 not below `v`.
pub(super) fn f32_up(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64) < v {
        f.next_up()
    } else {
        f
    }
}

/// `gamma(m) = m u / (1 - m u)` with u the f32 unit roundoff.
pub fn gamma(m: u64) -> f64 {
    let u = crate::spec::get().kernels.acceptance.bounded.unit_roundoff;
    let mu = m as f64 * u;
    mu / (1.0 - mu)
}

/// Where output `i` of a case sits: (token, row, block, element) as the class has them.
pub fn locate(c: &KernelCase, i: usize) -> String {
    let qk = c
        .format
        .codec()
        .map(|x| x.block_elems())
        .unwrap_or(1)
        .max(1);
    let d = c.dims;
    match c.class {
        KernelClass::Dequantize => format!("block {}, element {}", i / qk, i % qk),
        KernelClass::GetRows => {
            let k = d.k.max(1) as usize;
            let (slot, j) = (i / k, i % k);
            let row = c.ids.get(slot).copied().unwrap_or(-1);
            format!(
                "ids[{slot}] = row {row}, block {}, element {}",
                j / qk,
                j % qk
            )
        }
        KernelClass::MulMatVec | KernelClass::MulMatVecPlanes => format!("row {i}"),
        KernelClass::MulMat | KernelClass::MulMatPlanes => {
            let n = d.n.max(1) as usize;
            format!("token {}, row {}", i / n, i % n)
        }
        KernelClass::HadamardRotate => {
            let (k, b) = (d.k.max(1) as usize, d.block.max(1) as usize);
            format!(
                "token {}, Hadamard block {}, element {}",
                i / k,
                (i % k) / b,
                (i % k) % b
            )
        }
    }
}

/// Checks the guard bands around the output and returns the output itself.
#[cfg(any(test, feature = "internals"))]
pub fn strip_guards<'a>(case: &str, buf: &'a [f32], out_elems: usize) -> Result<&'a [f32]> {
    let g = &crate::spec::get().kernels.guard;
    let sentinel = g.sentinel();
    if buf.len() != out_elems + 2 * g.elems {
        return Err(Error::new(
            ErrorClass::KernelCrash,
            case,
            format!(
                "kernel runner returned {} floats, expected {}",
                buf.len(),
                out_elems + 2 * g.elems
            ),
        ));
    }
    let (lo, rest) = buf.split_at(g.elems);
    let (out, hi) = rest.split_at(out_elems);
    for (side, band) in [("before", lo), ("after", hi)] {
        if let Some(i) = band.iter().position(|v| v.to_bits() != sentinel) {
            let at = if side == "before" { g.elems - i } else { i };
            return Err(Error::new(
                ErrorClass::KernelOutOfBounds,
                case,
                format!(
                    "the kernel wrote {at} element(s) {side} its {out_elems}-element output (guard band of {} f32 changed)",
                    g.elems
                ),
            ));
        }
    }
    Ok(out)
}

/// The f32 NMSE limit (spec/kernels.json `acceptance.bounded.nmse_max`).
pub fn f32_nmse_max() -> f64 {
    crate::spec::get().kernels.acceptance.bounded.nmse_max
}

/// Keeps in `worst` the worse of it and this narrow output's (ULP distance from the reference,
/// ULPs the bound allows on that side), ranked by distance / allowed.
fn keep_worse_ulps(
    worst: &mut Option<(u32, u32)>,
    y: Dtype,
    want: f64,
    bits: u32,
    lo: f64,
    hi: f64,
) {
    let r = ord16(y.bits_of(want as f32));
    let d = ord16(bits) - r;
    let side = if d >= 0 {
        ord16(y.bits_of(hi as f32)) - r
    } else {
        r - ord16(y.bits_of(lo as f32))
    };
    let cand = (d.unsigned_abs() as u32, side.max(0) as u32);
    let key = |(d, a): (u32, u32)| if d == 0 { 0.0 } else { d as f64 / a as f64 };
    // Ties: the larger distance, then the tighter allowance (the smallest margin).
    let worse = |w: (u32, u32)| {
        key(cand) > key(w)
            || (key(cand) == key(w) && (cand.0 > w.0 || (cand.0 == w.0 && cand.1 < w.1)))
    };
    if worst.is_none_or(worse) {
        *worst = Some(cand);
    }
}

/// Judges an output buffer (`exp.precision.y` elements, guards stripped) against `exp`.
pub fn judge(case: &KernelCase, exp: &Expected, out: &[u8]) -> Comparison {
    let y = exp.precision.y;
    let n_out = out.len() / y.elem_bytes();
    let got = y.decode(out);
    let mut v = Comparison {
        pass: true,
        first_bad: None,
        bad: 0,
        max_err_ratio: 0.0,
        nmse: 0.0,
        nmse_max: 0.0,
        unwritten: 0,
        nmse_exceeded: false,
        ulps: None,
    };
    let exact = case.class.exact();
    let gm = gamma(exp.terms + 2);
    let u_out = y.unit_roundoff();
    let (mut num, mut num_s, mut den, mut round2) = (0f64, 0f64, 0f64, 0f64);
    let narrow = !exact && y != Dtype::F32;
    // The worst (ULP distance, allowed ULPs) of a narrow output, ranked by distance / allowed.
    let mut worst: Option<(u32, u32)> = None;
    for (i, (&g, &want)) in got.iter().zip(&exp.values).enumerate() {
        let bits = y.bits_at(out, i);
        let never = unwritten(y, out, i);
        v.unwritten += never as usize;
        let (ok, tol) = if never {
            // Still the runner's fill: whatever the reference (the fill is a NaN, and a NaN
            // reference would otherwise accept it), the kernel did not produce this output.
            (false, 0.0)
        } else if want.is_nan() && !exact {
            // A NaN sum comes from 0 * Inf (a code-1 weight of a block whose scale is Inf) or
            // +Inf + -Inf; a kernel that factors the block scale out of the block's sum (as
            // engines do) meets Inf * (its finite sum) instead. Any non-finite output is
            // accepted there, a finite one never.
            (!g.is_finite(), 0.0)
        } else if want.is_nan() {
            (g.is_nan(), 0.0)
        } else if exact {
            // +0 and -0 are the same weight: no product or sum a consumer forms tells them
            // apart, and a zero-scale fast path or `c*d - d` legitimately gives the other sign.
            (
                bits == y.bits_of(want as f32) || (want == 0.0 && g == 0.0),
                0.0,
            )
        } else if want.is_infinite() {
            (g as f64 == want, 0.0)
        } else {
            let slack = exp.slack.get(i).copied().unwrap_or(0.0);
            // The q8_1 slack is itself formed in f32 by the kernel: its rounding is covered too.
            let base = gm * (exp.magnitude[i] + slack) + slack;
            // NMSE allowance of this output: one rounding to the output type, at most u_y |y|
            // for normal values and half the subnormal spacing below. Not the q8_1 slack: a
            // kernel that uses the stored `s` is measured against that reference instead.
            round2 += (u_out * want.abs() + y.half_subnormal_spacing()).powi(2);
            // f32 outputs: within the bound. A narrow output type: one round-to-nearest-even
            // of an f32 value within the bound, i.e. between the roundings of the bound's two
            // ends (rounding is monotonic) -- tight, so a kernel that rounds anything else
            // on the way (an undeclared f16 input, a half accumulator) leaves the interval.
            let (lo, hi) = if y == Dtype::F32 {
                (want - base, want + base)
            } else {
                (
                    y.round(f32_down(want - base)) as f64,
                    y.round(f32_up(want + base)) as f64,
                )
            };
            let tol = (want - lo).max(hi - want);
            let err = (g as f64 - want).abs();
            let ok = if g.is_infinite() {
                // Overflow of a narrow output type: only where the bound's end rounds to it.
                (g > 0.0 && hi == f64::INFINITY) || (g < 0.0 && lo == f64::NEG_INFINITY)
            } else {
                num += err * err;
                den += want * want;
                if let Some(ws) = exp.values_with_s.get(i) {
                    num_s += (g as f64 - ws).powi(2);
                }
                if narrow {
                    keep_worse_ulps(&mut worst, y, want, bits, lo, hi);
                }
                let ratio = if tol > 0.0 {
                    err / tol
                } else if err == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                };
                let ratio = if ratio.is_nan() { f64::INFINITY } else { ratio };
                v.max_err_ratio = v.max_err_ratio.max(ratio);
                (lo..=hi).contains(&(g as f64))
            };
            (ok, tol)
        };
        if !ok {
            v.bad += 1;
            if v.first_bad.is_none() {
                v.first_bad = Some(BadElement {
                    index: i,
                    got: g as f64,
                    bits,
                    want,
                    tolerance: tol,
                });
            }
        }
    }
    if n_out != exp.values.len() {
        v.bad += 1;
    }
    if !exact {
        if !exp.values_with_s.is_empty() {
            num = num.min(num_s);
        }
        v.nmse = if den > 0.0 {
            num / den
        } else if num == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        v.nmse_max = f32_nmse_max() + if den > 0.0 { round2 / den } else { 0.0 };
        if narrow {
            v.ulps = Some(worst.unwrap_or((0, 0)));
            // In ULPs of the output type: 0 when every output is the correctly rounded value.
            v.max_err_ratio = match v.ulps {
                Some((0, _)) | None => 0.0,
                Some((d, a)) => d as f64 / a as f64,
            };
        }
        v.nmse_exceeded = v.nmse.is_nan() || v.nmse > v.nmse_max;
    }
    v.pass = v.bad == 0 && !v.nmse_exceeded;
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::cases;
    use crate::cuda::expected::expected;
    use crate::cuda::precision::Precision;

    fn encode(y: Dtype, v: &[f64]) -> Vec<u8> {
        let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        y.encode(&f)
    }

    #[test]
    fn the_reference_passes_in_every_mode_and_a_mode_looser_fails() {
        let cs = cases::all();
        for c in &cs {
            for p in ["f32", "f16-out", "bf16-out", "bf16-in", "f16-in+f16-out"] {
                let p = Precision::parse(p).unwrap();
                if c.class.exact() && p.x != Dtype::F32 {
                    continue;
                }
                let e = expected(c, p).unwrap();
                let out = encode(p.y, &e.values);
                let v = judge(c, &e, &out);
                assert!(v.pass, "{} {p}: {}", c.name, v.summary(c, p.y));
            }
            // One ulp: exact classes reject it, bounded ones accept it.
            let e = expected(c, Precision::F32).unwrap();
            let mut f: Vec<f32> = e.values.iter().map(|&x| x as f32).collect();
            let i = f.iter().position(|v| *v != 0.0).unwrap();
            f[i] = f32::from_bits(f[i].to_bits() + 1);
            assert_eq!(
                judge(c, &e, &Dtype::F32.encode(&f)).pass,
                !c.class.exact(),
                "{}",
                c.name
            );
            // A 1% error fails; NaN fails.
            let f: Vec<f32> = e.values.iter().map(|&x| (x * 1.01) as f32).collect();
            assert!(!judge(c, &e, &Dtype::F32.encode(&f)).pass, "{}", c.name);
            let mut f: Vec<f32> = e.values.iter().map(|&x| x as f32).collect();
            f[0] = f32::NAN;
            assert!(!judge(c, &e, &Dtype::F32.encode(&f)).pass, "{}", c.name);
            if c.class.exact() {
                continue;
            }
            // Input modes are as tight as f32: outputs computed from the unrounded f32
            // activations fail bf16-in, and from unquantized ones fail q8_1-in (the reference
            // uses what the kernel receives, so a kernel that re-reads or re-quantizes its
            // activations differently is caught).
            for judged in ["bf16-in", "q8_1-in", "i8g32-in", "i8g32h-in"] {
                let p = Precision::parse(judged).unwrap();
                if c.class == KernelClass::HadamardRotate && p.x.quantized() {
                    continue;
                }
                let e = expected(c, p).unwrap();
                let f32_out = expected(c, Precision::F32).unwrap();
                let f: Vec<f32> = f32_out.values.iter().map(|&x| x as f32).collect();
                let v = judge(c, &e, &p.y.encode(&f));
                assert!(
                    !v.pass,
                    "{} judged {judged} with outputs from f32 activations passed: NMSE {:e}",
                    c.name, v.nmse
                );
            }
            // Negative controls per mode: an output rounded to the next looser type fails the
            // tighter mode (f16 rounding under f32, bf16 rounding under f16-out).
            for (judged, rounded) in [("f32", Dtype::F16), ("f16-out", Dtype::Bf16)] {
                let p = Precision::parse(judged).unwrap();
                let e = expected(c, p).unwrap();
                let f: Vec<f32> = e.values.iter().map(|&x| rounded.round(x as f32)).collect();
                let v = judge(c, &e, &p.y.encode(&f));
                assert!(
                    !v.pass,
                    "{} judged {judged} with {rounded:?}-rounded outputs passed: NMSE {:e}",
                    c.name, v.nmse
                );
            }
        }
    }

    /// The q8_1 `s` allowance widens the per-element bound only: f16-rounded outputs (no value
    /// near 65504) fail q8_1-in by their NMSE, although they are under the limit the allowance
    /// used to add; a kernel that does use the stored `s` passes, measured against that reference.
    #[test]
    fn q8_1_allowance_is_per_element_only() {
        let c = crate::cuda::generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap()
        .into_iter()
        .find(|c| c.name.ends_with("n70_k384"))
        .unwrap();
        let p = Precision::parse("q8_1-in").unwrap();
        let e = expected(&c, p).unwrap();
        let rounded: Vec<f32> = e
            .values
            .iter()
            .map(|&x| Dtype::F16.round(x as f32))
            .collect();
        let v = judge(&c, &e, &Dtype::F32.encode(&rounded));
        assert!(!v.pass && v.nmse_exceeded, "{}", v.summary(&c, Dtype::F32));
        let den: f64 = e.values.iter().map(|x| x * x).sum();
        let widened = f32_nmse_max() + e.slack.iter().map(|s| s * s).sum::<f64>() / den;
        assert!(
            v.nmse < widened,
            "the old limit {widened:e} admitted NMSE {:e}",
            v.nmse
        );
        let with_s: Vec<f32> = e.values_with_s.iter().map(|&x| x as f32).collect();
        assert_eq!(with_s.len(), e.values.len());
        assert_ne!(
            with_s,
            e.values.iter().map(|&x| x as f32).collect::<Vec<_>>()
        );
        let v = judge(&c, &e, &Dtype::F32.encode(&with_s));
        assert!(v.pass, "{}", v.summary(&c, Dtype::F32));
    }

    /// A narrow output is reported in its own ULPs from the correctly rounded reference: the
    /// correctly rounded outputs are 0 ULP away (not "max|err|/bound 1.000"), one ULP off is 1.
    #[test]
    fn narrow_outputs_are_reported_in_output_ulps() {
        let c = crate::cuda::generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap()
        .into_iter()
        .find(|c| c.name.ends_with("n37_k1024"))
        .unwrap();
        for (mode, y) in [("bf16-out", Dtype::Bf16), ("f16-out", Dtype::F16)] {
            let e = expected(&c, Precision::parse(mode).unwrap()).unwrap();
            let f: Vec<f32> = e.values.iter().map(|&x| y.round(x as f32)).collect();
            let v = judge(&c, &e, &y.encode(&f));
            assert!(
                v.pass && v.max_err_ratio == 0.0,
                "{mode}: {}",
                v.summary(&c, y)
            );
            assert_eq!(v.ulps.map(|u| u.0), Some(0), "{mode}");
            assert!(
                v.summary(&c, y).contains("reference 0 ULP"),
                "{}",
                v.summary(&c, y)
            );
            // One element moved one ULP away from zero.
            let i = f.iter().position(|x| x.is_finite() && *x != 0.0).unwrap();
            let bits = y.bits_of(f[i]);
            let mut enc = y.encode(&f);
            enc[2 * i..2 * i + 2].copy_from_slice(&((bits + 1) as u16).to_le_bytes());
            let v = judge(&c, &e, &enc);
            assert_eq!(v.ulps.map(|u| u.0), Some(1), "{mode}: {}", v.summary(&c, y));
        }
    }

    #[test]
    fn nan_matches_any_nan_and_infinities_must_match() {
        let c = crate::cuda::generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap()
        .into_iter()
        .find(|c| c.reference.iter().any(|v| v.is_nan()))
        .unwrap();
        let e = expected(&c, Precision::F32).unwrap();
        let mut f: Vec<f32> = e.values.iter().map(|&x| x as f32).collect();
        let i = f.iter().position(|v| v.is_nan()).unwrap();
        f[i] = f32::from_bits(0xffc0_0001); // another NaN
        assert!(judge(&c, &e, &Dtype::F32.encode(&f)).pass);
        f[i] = 0.0;
        assert!(!judge(&c, &e, &Dtype::F32.encode(&f)).pass);
    }

    #[test]
    fn guard_bands_catch_writes_on_either_side() {
        let g = &crate::spec::get().kernels.guard;
        let s = f32::from_bits(g.sentinel());
        let mut buf = vec![s; 10 + 2 * g.elems];
        assert!(strip_guards("c", &buf, 10).is_ok());
        buf[g.elems - 1] = 0.0;
        assert_eq!(
            strip_guards("c", &buf, 10).unwrap_err().class(),
            ErrorClass::KernelOutOfBounds
        );
        buf[g.elems - 1] = s;
        buf[g.elems + 10] = 1.0;
        let e = strip_guards("c", &buf, 10).unwrap_err();
        assert!(e.detail().contains("after"), "{e}");
    }
}
