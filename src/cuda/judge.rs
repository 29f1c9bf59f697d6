//! The acceptance rules of `spec/kernels.json`: bit-exact for dequantize / get_rows, an
//! f64-derived error bound plus NMSE for the sums. Also the guard-band check.

use super::cases::KernelCase;
use crate::error::{Error, ErrorClass, Result};

/// The judgement of one kernel output against one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whether the output meets the class's rule (exact, or within the bound).
    pub pass: bool,
    /// First element that breaks the rule: (index, got, reference).
    pub first_bad: Option<(usize, f32, f64)>,
    /// Elements that break the rule.
    pub bad: usize,
    /// Bounded classes: max |err| / bound over the outputs (<= 1 passes).
    pub max_err_ratio: f64,
    /// Bounded classes: normalized mean squared error.
    pub nmse: f64,
}

impl Verdict {
    /// One line for reports: the first bad element and, for bounded classes, the error ratio and NMSE.
    pub fn summary(&self, exact: bool) -> String {
        let mut s = match &self.first_bad {
            None => String::new(),
            Some((i, got, want)) => format!(
                "first differing element {i}: got {got:e} (bits {:#010x}), reference {want:e}; ",
                got.to_bits()
            ),
        };
        if exact {
            s.push_str(&format!("{} of the outputs differ bitwise", self.bad));
        } else {
            s.push_str(&format!(
                "{} outside the bound; max|err|/bound {:.3e}, NMSE {:.3e}",
                self.bad, self.max_err_ratio, self.nmse
            ));
        }
        s
    }
}

/// `gamma(m) = m u / (1 - m u)` with u the f32 unit roundoff.
pub fn gamma(m: u64) -> f64 {
    let u = crate::spec::get().kernels.acceptance.bounded.unit_roundoff;
    let mu = m as f64 * u;
    mu / (1.0 - mu)
}

/// Checks the guard bands around the output and returns the output itself.
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

/// Judges `out` (guards already stripped) against the case's reference.
pub fn judge(case: &KernelCase, out: &[f32]) -> Verdict {
    let exact = case.class.exact();
    let mut v = Verdict {
        pass: true,
        first_bad: None,
        bad: 0,
        max_err_ratio: 0.0,
        nmse: 0.0,
    };
    let (mut num, mut den) = (0f64, 0f64);
    let gm = gamma(case.terms + 2);
    for (i, (&got, &want)) in out.iter().zip(&case.reference).enumerate() {
        let ok = if exact {
            got.to_bits() == (want as f32).to_bits()
        } else {
            let err = (got as f64 - want).abs();
            let bound = gm * case.magnitude[i];
            num += err * err;
            den += want * want;
            let ratio = if bound > 0.0 {
                err / bound
            } else if err == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            // NaN never passes.
            let ratio = if ratio.is_nan() { f64::INFINITY } else { ratio };
            v.max_err_ratio = v.max_err_ratio.max(ratio);
            ratio <= 1.0
        };
        if !ok {
            v.bad += 1;
            if v.first_bad.is_none() {
                v.first_bad = Some((i, got, want));
            }
        }
    }
    if out.len() != case.reference.len() {
        v.bad += 1;
    }
    if !exact {
        v.nmse = if den > 0.0 {
            num / den
        } else if num == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        if v.nmse.is_nan() || v.nmse > crate::spec::get().kernels.acceptance.bounded.nmse_max {
            v.bad = v.bad.max(1);
        }
    }
    v.pass = v.bad == 0;
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::cases;

    #[test]
    fn the_reference_itself_passes_and_a_one_ulp_change_is_caught_where_it_must_be() {
        for c in cases::all() {
            let out: Vec<f32> = c.reference.iter().map(|&v| v as f32).collect();
            assert!(judge(&c, &out).pass, "{}", c.name);
            let mut bumped = out.clone();
            let i = bumped.iter().position(|v| *v != 0.0).unwrap();
            bumped[i] = f32::from_bits(bumped[i].to_bits() + 1);
            // Exact classes reject one ulp; bounded ones accept it (it is within rounding).
            assert_eq!(judge(&c, &bumped).pass, !c.class.exact(), "{}", c.name);
            let mut scaled = out.clone();
            for v in &mut scaled {
                *v *= 1.01;
            }
            assert!(!judge(&c, &scaled).pass, "{}: a 1% error must fail", c.name);
            let mut nan = out;
            nan[0] = f32::NAN;
            assert!(!judge(&c, &nan).pass, "{}", c.name);
        }
    }

    #[test]
    fn guard_bands_catch_writes_on_either_side() {
        let g = &crate::spec::get().kernels.guard;
        let s = f32::from_bits(g.sentinel());
        let mut buf = vec![s; 10 + 2 * g.elems];
        assert!(strip_guards("c", &buf, 10).is_ok());
        buf[g.elems - 1] = 0.0;
        assert_eq!(
            strip_guards("c", &buf, 10).unwrap_err().class,
            ErrorClass::KernelOutOfBounds
        );
        buf[g.elems - 1] = s;
        buf[g.elems + 10] = 1.0;
        let e = strip_guards("c", &buf, 10).unwrap_err();
        assert!(e.detail.contains("after"), "{e}");
    }
}
