//! Precision modes a kernel declares (spec/kernels.json `precision`): the element type of its
//! activations (`x`) and of its output (`y`). The reference is always computed, in f64, from the
//! activations *as the kernel receives them* (already rounded to f16 / bf16, or quantized to
//! q8_1 blocks), so an input mode does not loosen the bound; an output mode adds exactly one
//! rounding of the result to the output type.

use crate::codec::direct::{bf16_to_f32, f32_to_bf16};
use crate::codec::{f16_to_f32, f32_to_f16};
use crate::error::{Error, ErrorClass, Result};

/// The element type of an activation or output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    /// IEEE binary32.
    F32,
    /// IEEE binary16 (`__half`).
    F16,
    /// bfloat16 (`__nv_bfloat16`).
    Bf16,
    /// ggml `block_q8_1` activations: 32 values as `{half d; half s; int8 qs[32]}` (36 bytes),
    /// `d = amax / 127`, `qs = roundf(x * (1/d))`, `s = d * sum(qs)` (inputs only; ggml's `quantize_row_q8_1_ref`).
    Q8_1,
    /// int8 activations per group of 32 with an f32 scale, as engines' dp4a paths take them:
    /// per group `{float d; int8 qs[32]}` (36 bytes), `d = amax / 127`, `qs = roundf(x / d)`
    /// (inputs only; the kernel sees `d * qs`).
    I8G32F32,
    /// The same with an f16 scale: per group `{half d; int8 qs[32]}` (34 bytes, ggml's
    /// `block_q8_0`); the kernel sees `f16(d) * qs`.
    I8G32F16,
}

/// Values per q8_1 block.
pub const Q8_1_QK: usize = 32;
/// Bytes per q8_1 block.
pub const Q8_1_BYTES: usize = 36;

impl Dtype {
    /// The name used in precision strings.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::Q8_1 => "q8_1",
            Dtype::I8G32F32 => "i8g32",
            Dtype::I8G32F16 => "i8g32h",
        }
    }

    /// The C element type of a buffer of this type (q8_1: raw blocks).
    pub fn c_type(self) -> &'static str {
        match self {
            Dtype::F32 => "float",
            Dtype::F16 => "__half",
            Dtype::Bf16 => "__nv_bfloat16",
            Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => "void",
        }
    }

    /// Unit roundoff of a rounding to this type (0 for f32: no extra rounding).
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => 0.0,
            Dtype::F16 => (2f64).powi(-11),
            Dtype::Bf16 => (2f64).powi(-8),
        }
    }

    /// Bytes per element (q8_1: per block of 32).
    pub fn elem_bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::Q8_1 | Dtype::I8G32F32 => Q8_1_BYTES,
            Dtype::I8G32F16 => Q8_1_BYTES - 2,
        }
    }

    /// Rounds an f32 to this type (round to nearest even) and back.
    pub fn round(self, v: f32) -> f32 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => v,
            Dtype::F16 => f16_to_f32(f32_to_f16(v)),
            Dtype::Bf16 => bf16_to_f32(f32_to_bf16(v)),
        }
    }

    /// Half the spacing of the type's subnormals: the most one rounding moves a value that
    /// lands there (0 for f32, whose own rounding the f32 bound already covers).
    pub fn half_subnormal_spacing(self) -> f64 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => 0.0,
            Dtype::F16 => (2f64).powi(-25),
            Dtype::Bf16 => (2f64).powi(-134),
        }
    }

    /// The largest finite value; a rounded result above it (by more than half an ulp) is Inf.
    #[cfg(feature = "internals")]
    pub fn overflow_threshold(self) -> f64 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => f32::MAX as f64,
            Dtype::F16 => 65520.0,
            Dtype::Bf16 => 3.3961775292304e38,
        }
    }

    /// Encodes f32 values as this type's buffer bytes (q8_1: whole blocks per `row` values).
    pub fn encode(self, v: &[f32]) -> Vec<u8> {
        match self {
            Dtype::F32 => v.iter().flat_map(|f| f.to_le_bytes()).collect(),
            Dtype::F16 => v
                .iter()
                .flat_map(|f| f32_to_f16(*f).to_le_bytes())
                .collect(),
            Dtype::Bf16 => v
                .iter()
                .flat_map(|f| f32_to_bf16(*f).to_le_bytes())
                .collect(),
            Dtype::Q8_1 => quantize_q8_1(v).0,
            Dtype::I8G32F32 => quantize_i8_groups(v, false).0,
            Dtype::I8G32F16 => quantize_i8_groups(v, true).0,
        }
    }

    /// Decodes an output buffer of this type to f32 (exact).
    pub fn decode(self, b: &[u8]) -> Vec<f32> {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => b
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            Dtype::F16 => b
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            Dtype::Bf16 => b
                .chunks_exact(2)
                .map(|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        }
    }

    /// The bits of an output element of this type at index `i`, widened (for bit-exact checks).
    pub fn bits_at(self, b: &[u8], i: usize) -> u32 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => {
                u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
            }
            Dtype::F16 | Dtype::Bf16 => u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as u32,
        }
    }

    /// The bits this type's round-to-nearest-even encoding of `v` has.
    pub fn bits_of(self, v: f32) -> u32 {
        match self {
            Dtype::F32 | Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16 => v.to_bits(),
            Dtype::F16 => f32_to_f16(v) as u32,
            Dtype::Bf16 => f32_to_bf16(v) as u32,
        }
    }
}

/// ggml's `quantize_row_q8_1` rule on whole 32-value blocks: returns the block bytes and the
/// values as the kernel sees them (`d_f32 * q`, d widened from its f16), plus per block the
/// difference `s_stored - d*sum(q)` (the rounding of the f16 `s`, which a kernel may use for
/// the `-1` offset of a ternary code).
pub fn quantize_q8_1(v: &[f32]) -> (Vec<u8>, Vec<f32>, Vec<f64>) {
    let mut bytes = Vec::with_capacity(v.len() / Q8_1_QK * Q8_1_BYTES);
    let mut seen = Vec::with_capacity(v.len());
    let mut s_err = Vec::new();
    for blk in v.chunks(Q8_1_QK) {
        let amax = blk
            .iter()
            .fold(0f32, |a, x| if a > x.abs() { a } else { x.abs() });
        let d = amax / 127.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        let q: Vec<i8> = blk
            .iter()
            .map(|x| (x * id).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let sum: i32 = q.iter().map(|&x| x as i32).sum();
        let dh = f32_to_f16(d);
        let sh = f32_to_f16(sum as f32 * d);
        bytes.extend_from_slice(&dh.to_le_bytes());
        bytes.extend_from_slice(&sh.to_le_bytes());
        bytes.extend(q.iter().map(|&x| x as u8));
        bytes.resize(bytes.len() + (Q8_1_QK - q.len()), 0);
        let dw = f16_to_f32(dh);
        seen.extend(q.iter().map(|&x| dw * x as f32));
        s_err.push(f16_to_f32(sh) as f64 - dw as f64 * sum as f64);
    }
    (bytes, seen, s_err)
}

/// int8 groups of 32 (`i8g32-in`, `i8g32h-in`): per group the scale (f32, or f16 when `half`)
/// then 32 int8 codes, `d = amax / 127`, `qs = roundf(x / d)` clamped to +-127; returns the
/// bytes and the values as the kernel sees them (`d * qs`, d as stored).
pub fn quantize_i8_groups(v: &[f32], half: bool) -> (Vec<u8>, Vec<f32>) {
    let mut bytes = Vec::new();
    let mut seen = Vec::with_capacity(v.len());
    for blk in v.chunks(Q8_1_QK) {
        let amax = blk.iter().fold(0f32, |a, x| a.max(x.abs()));
        let d = amax / 127.0;
        let stored = if half { f16_to_f32(f32_to_f16(d)) } else { d };
        if half {
            bytes.extend_from_slice(&f32_to_f16(d).to_le_bytes());
        } else {
            bytes.extend_from_slice(&d.to_le_bytes());
        }
        let q: Vec<i8> = blk
            .iter()
            .map(|x| {
                if d == 0.0 {
                    0
                } else {
                    (x / d).round().clamp(-127.0, 127.0) as i8
                }
            })
            .collect();
        bytes.extend(q.iter().map(|&x| x as u8));
        bytes.resize(bytes.len() + (Q8_1_QK - q.len()), 0);
        seen.extend(q.iter().map(|&x| stored * x as f32));
    }
    (bytes, seen)
}

impl Dtype {
    /// Activations quantized to integer blocks (q8_1, int8 groups): no f16/bf16 reading of
    /// them applies, and their values are as the blocks hold them.
    pub fn quantized(self) -> bool {
        matches!(self, Dtype::Q8_1 | Dtype::I8G32F32 | Dtype::I8G32F16)
    }
}

/// What a kernel reads and writes: its activation type and its output type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Precision {
    /// The activation buffer's type.
    pub x: Dtype,
    /// The output buffer's type.
    pub y: Dtype,
}

impl Default for Precision {
    fn default() -> Self {
        Precision::F32
    }
}

impl Precision {
    /// f32 in, f32 out.
    pub const F32: Precision = Precision {
        x: Dtype::F32,
        y: Dtype::F32,
    };

    /// Parses `f32`, `f16-out`, `bf16-in`, `q8_1-in`, ... joined by `+`.
    pub fn parse(s: &str) -> Result<Precision> {
        let mut p = Precision::F32;
        let bad = |part: &str| {
            Error::new(
                ErrorClass::CliUsage,
                "precision",
                format!(
                    "{part:?} is not a precision mode: one of f32, f16-in, bf16-in, q8_1-in, i8g32-in, i8g32h-in, f16-out, bf16-out, or several joined by '+' (e.g. bf16-in+bf16-out)"
                ),
            )
        };
        for part in s.split('+') {
            match part.trim() {
                "f32" => {}
                "f16-in" => p.x = Dtype::F16,
                "bf16-in" => p.x = Dtype::Bf16,
                "q8_1-in" => p.x = Dtype::Q8_1,
                "i8g32-in" => p.x = Dtype::I8G32F32,
                "i8g32h-in" => p.x = Dtype::I8G32F16,
                "f16-out" => p.y = Dtype::F16,
                "bf16-out" => p.y = Dtype::Bf16,
                other => return Err(bad(other)),
            }
        }
        Ok(p)
    }

    /// The canonical name (`f32`, `bf16-in+bf16-out`, ...).
    pub fn name(&self) -> String {
        let mut parts = Vec::new();
        if self.x != Dtype::F32 {
            parts.push(format!("{}-in", self.x.name()));
        }
        if self.y != Dtype::F32 {
            parts.push(format!("{}-out", self.y.name()));
        }
        if parts.is_empty() {
            "f32".into()
        } else {
            parts.join("+")
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_typos_are_refused() {
        for s in [
            "f32",
            "f16-out",
            "bf16-out",
            "f16-in",
            "bf16-in",
            "q8_1-in",
            "bf16-in+bf16-out",
            "q8_1-in+f16-out",
        ] {
            assert_eq!(Precision::parse(s).unwrap().name(), s);
        }
        assert!(Precision::parse("bf16").is_err());
        assert!(Precision::parse("f32+fp16-out").is_err());
    }

    #[test]
    fn q8_1_blocks_follow_the_ggml_rule() {
        let v: Vec<f32> = (0..64).map(|i| (i as f32 - 20.0) * 0.37).collect();
        let (b, seen, s_err) = quantize_q8_1(&v);
        assert_eq!(b.len(), 2 * Q8_1_BYTES);
        // Block 0: amax = 20 * 0.37; the value of largest magnitude quantizes to -127.
        assert_eq!(b[4] as i8, -127);
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        assert_eq!(seen[0], d * -127.0);
        // s is d * sum(q) rounded to f16: the recorded error is that rounding and nothing else.
        let sum: i32 = b[4..36].iter().map(|&q| q as i8 as i32).sum();
        let s = f16_to_f32(u16::from_le_bytes([b[2], b[3]])) as f64;
        assert_eq!(s_err[0], s - d as f64 * sum as f64);
        assert!(s_err[0].abs() <= (d as f64 * sum as f64).abs() * 2f64.powi(-11) + 1e-30);
    }
}
