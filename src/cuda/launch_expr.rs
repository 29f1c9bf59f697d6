//! Launch expressions of a kernel ABI (`"grid": ["ceil(n / 8)", "t", 1]`): integers, the case's
//! scalar bindings (`n`, `k`, `t`, ...), `+ - * /`, parentheses, `ceil(..)` and `floor(..)`.
//! Evaluated exactly over rationals, so `ceil(n / 8)` means what it says; a result that is not
//! an integer outside `ceil`/`floor` is an error rather than a silent truncation.

use crate::error::{Error, ErrorClass, Result};

/// An exact rational `num / den` (`den > 0`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Q {
    num: i128,
    den: i128,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs().max(1)
    } else {
        gcd(b, a % b)
    }
}

impl Q {
    fn int(v: i128) -> Q {
        Q { num: v, den: 1 }
    }
    fn norm(num: i128, den: i128) -> Q {
        let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
        let g = gcd(num, den);
        Q {
            num: num / g,
            den: den / g,
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
    text: &'a str,
}

fn err(text: &str, why: impl Into<String>) -> Error {
    Error::new(
        ErrorClass::KernelAbi,
        "launch",
        format!("launch expression {text:?}: {}", why.into()),
    )
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }
    fn expr(&mut self, depth: usize) -> Result<Q> {
        if depth > 32 {
            return Err(err(self.text, "nested too deeply"));
        }
        let mut v = self.term(depth)?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.term(depth)?;
            let (a, b) = (v.num.checked_mul(r.den), r.num.checked_mul(v.den));
            let (Some(a), Some(b), Some(d)) = (a, b, v.den.checked_mul(r.den)) else {
                return Err(err(self.text, "overflow"));
            };
            let n = if c == b'+' {
                a.checked_add(b)
            } else {
                a.checked_sub(b)
            };
            v = Q::norm(n.ok_or_else(|| err(self.text, "overflow"))?, d);
        }
        Ok(v)
    }
    fn term(&mut self, depth: usize) -> Result<Q> {
        let mut v = self.atom(depth)?;
        while let Some(c @ (b'*' | b'/')) = self.peek() {
            self.pos += 1;
            let r = self.atom(depth)?;
            let (n, d) = if c == b'*' {
                (v.num.checked_mul(r.num), v.den.checked_mul(r.den))
            } else {
                if r.num == 0 {
                    return Err(err(self.text, "division by zero"));
                }
                (v.num.checked_mul(r.den), v.den.checked_mul(r.num))
            };
            let (Some(n), Some(d)) = (n, d) else {
                return Err(err(self.text, "overflow"));
            };
            v = Q::norm(n, d);
        }
        Ok(v)
    }
    fn atom(&mut self, depth: usize) -> Result<Q> {
        if depth > 32 {
            return Err(err(self.text, "nested too deeply"));
        }
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let v = self.expr(depth + 1)?;
                self.close()?;
                Ok(v)
            }
            Some(b'-') => {
                self.pos += 1;
                let v = self.atom(depth + 1)?;
                Ok(Q::norm(-v.num, v.den))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                t.parse::<i64>()
                    .map(|v| Q::int(v as i128))
                    .map_err(|_| err(self.text, format!("number {t} too large")))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self.pos < self.s.len()
                    && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                if matches!(name, "ceil" | "floor") && self.peek() == Some(b'(') {
                    self.pos += 1;
                    let v = self.expr(depth + 1)?;
                    self.close()?;
                    let f = v.num.div_euclid(v.den);
                    let c = if v.num.rem_euclid(v.den) == 0 {
                        f
                    } else {
                        f + 1
                    };
                    return Ok(Q::int(if name == "ceil" { c } else { f }));
                }
                (self.lookup)(name)
                    .map(|v| Q::int(v as i128))
                    .ok_or_else(|| err(self.text, format!("unknown name {name:?}")))
            }
            Some(c) => Err(err(
                self.text,
                format!("unexpected {:?} at column {}", c as char, self.pos + 1),
            )),
            None => Err(err(self.text, "ends early")),
        }
    }
    fn close(&mut self) -> Result<()> {
        if self.peek() == Some(b')') {
            self.pos += 1;
            Ok(())
        } else {
            Err(err(
                self.text,
                format!("missing ')' at column {}", self.pos + 1),
            ))
        }
    }
}

/// Evaluates `text` with the scalar values `lookup` gives; the result must be an integer.
pub fn eval(text: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        lookup,
        text,
    };
    let v = p.expr(0)?;
    if p.peek().is_some() {
        return Err(err(text, format!("trailing text at column {}", p.pos + 1)));
    }
    if v.den != 1 {
        return Err(err(
            text,
            format!(
                "{}/{} is not an integer (write ceil(..) or floor(..))",
                v.num, v.den
            ),
        ));
    }
    i64::try_from(v.num).map_err(|_| err(text, "out of range"))
}

/// A float scalar's expression (`1 / sqrt(block)`, `0.5 * k`, `1e-6`): the integer grammar in
/// f64 plus decimal and exponent literals (an `f` suffix allowed, as C writes them) and `sqrt`.
/// For `float` kernel parameters; the value is rounded to f32 once, at the end.
pub fn eval_float(text: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<f64> {
    let mut p = FloatParser {
        s: text.as_bytes(),
        pos: 0,
        lookup,
        text,
    };
    let v = p.expr(0)?;
    if p.peek().is_some() {
        return Err(err(text, format!("trailing text at column {}", p.pos + 1)));
    }
    if !v.is_finite() {
        return Err(err(text, format!("gives {v}, not a finite number")));
    }
    Ok(v)
}

struct FloatParser<'a> {
    s: &'a [u8],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
    text: &'a str,
}

impl FloatParser<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        self.s.get(self.pos).copied()
    }
    fn expr(&mut self, depth: usize) -> Result<f64> {
        let mut v = self.term(depth)?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.term(depth)?;
            v = if c == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn term(&mut self, depth: usize) -> Result<f64> {
        let mut v = self.atom(depth)?;
        while let Some(c @ (b'*' | b'/')) = self.peek() {
            self.pos += 1;
            let r = self.atom(depth)?;
            v = if c == b'*' { v * r } else { v / r };
        }
        Ok(v)
    }
    fn word(&mut self, ok: fn(u8) -> bool) -> &str {
        let start = self.pos;
        while self.pos < self.s.len() && ok(self.s[self.pos]) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("")
    }
    fn atom(&mut self, depth: usize) -> Result<f64> {
        if depth > 32 {
            return Err(err(self.text, "nested too deeply"));
        }
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let v = self.expr(depth + 1)?;
                self.close()?;
                Ok(v)
            }
            Some(b'-') => {
                self.pos += 1;
                Ok(-self.atom(depth + 1)?)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let text = self.text;
                let mut t = self
                    .word(|b| b.is_ascii_alphanumeric() || b == b'.')
                    .to_string();
                // An exponent's sign belongs to the number (1e-6).
                if t.ends_with(['e', 'E']) && matches!(self.s.get(self.pos), Some(b'-' | b'+')) {
                    t.push(self.s[self.pos] as char);
                    self.pos += 1;
                    t.push_str(self.word(|b| b.is_ascii_alphanumeric()));
                }
                let t = t.strip_suffix(['f', 'F']).unwrap_or(&t).to_string();
                t.parse::<f64>()
                    .map_err(|_| err(text, format!("{t:?} is not a number")))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self
                    .word(|b| b.is_ascii_alphanumeric() || b == b'_')
                    .to_string();
                let func = matches!(name.as_str(), "sqrt" | "ceil" | "floor");
                if func && self.peek() == Some(b'(') {
                    self.pos += 1;
                    let v = self.expr(depth + 1)?;
                    self.close()?;
                    return Ok(match name.as_str() {
                        "sqrt" => v.sqrt(),
                        "ceil" => v.ceil(),
                        _ => v.floor(),
                    });
                }
                (self.lookup)(&name)
                    .map(|v| v as f64)
                    .ok_or_else(|| err(self.text, format!("unknown name {name:?}")))
            }
            Some(c) => Err(err(
                self.text,
                format!("unexpected {:?} at column {}", c as char, self.pos + 1),
            )),
            None => Err(err(self.text, "ends early")),
        }
    }
    fn close(&mut self) -> Result<()> {
        if self.peek() == Some(b')') {
            self.pos += 1;
            Ok(())
        } else {
            Err(err(
                self.text,
                format!("missing ')' at column {}", self.pos + 1),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_expressions_evaluate_and_refuse_what_is_not_a_number() {
        let v = eval_float("1 / sqrt(k)", &dims).unwrap();
        assert_eq!(v, 1.0 / 32.0);
        assert_eq!(eval_float("0.5f * n", &dims).unwrap(), 18.5);
        assert_eq!(eval_float("1e-3 + 2.5E+1", &dims).unwrap(), 25.001);
        assert_eq!(eval_float("-(t) / 2", &dims).unwrap(), -1.5);
        assert_eq!(eval_float("ceil(n / 8.0)", &dims).unwrap(), 5.0);
        for bad in [
            "1 / 0", "sqrt(-1)", "1..2", "q", "1 +", "2 3", "1e", "sqrtk",
        ] {
            let e = eval_float(bad, &dims).unwrap_err();
            assert_eq!(e.class(), ErrorClass::KernelAbi, "{bad}");
        }
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(eval_float(&deep, &dims).is_err());
    }

    fn dims(name: &str) -> Option<i64> {
        match name {
            "n" => Some(37),
            "k" => Some(1024),
            "t" => Some(3),
            _ => None,
        }
    }

    #[test]
    fn evaluates_exactly_and_refuses_what_is_not_an_integer() {
        assert_eq!(eval("ceil(n / 8)", &dims).unwrap(), 5);
        assert_eq!(eval("floor(n / 8)", &dims).unwrap(), 4);
        assert_eq!(eval("k / 128 * 34", &dims).unwrap(), 272);
        assert_eq!(eval("(n + 7) / 8 * 8 - n", &dims).unwrap(), 7); // exact: 44/8*8 - 37
        assert_eq!(
            eval("n / 8 + 1", &dims).unwrap_err().class(),
            ErrorClass::KernelAbi
        );
        assert_eq!(eval("ceil((n + 7) / 8)", &dims).unwrap(), 6);
        assert_eq!(eval(" 2*(t+1) ", &dims).unwrap(), 8);
        assert_eq!(eval("-3 + k", &dims).unwrap(), 1021);
        for bad in [
            "n / 8",
            "q",
            "ceil(n / 0)",
            "(n",
            "n n",
            "",
            "99999999999999999999",
        ] {
            assert!(eval(bad, &dims).is_err(), "{bad}");
        }
        // Deep nesting is an error, not a stack overflow.
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(eval(&deep, &dims).is_err());
    }
}
