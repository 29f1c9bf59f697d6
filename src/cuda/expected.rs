//! What a kernel must produce on a case under a precision mode: the f64 reference computed from
//! the inputs exactly as the kernel receives them (weights decoded by the crate's reference
//! decoders, activations already rounded / quantized to the declared input type), the sum of
//! magnitudes of every output's terms (the scale of the rounding-error bound), and any extra
//! slack a mode allows (q8_1: the f16 rounding of each block's stored `s`).

use super::abi::KernelClass;
use super::cases::{plane_geometry, KernelCase};
use super::precision::{quantize_i8_groups, quantize_q8_1, Dtype, Precision, Q8_1_QK};
use crate::codec::f16_to_f32;
use crate::error::{Error, ErrorClass, Result};
use crate::planes;

/// The expected output of one case under one precision.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The precision it was computed for.
    pub precision: Precision,
    /// Per output: the exact value (f64; exact classes: the decoded f32, widened).
    pub values: Vec<f64>,
    /// Per output: sum of |term| of its sum (bounded classes).
    pub magnitude: Vec<f64>,
    /// Per output: extra absolute slack the mode allows (q8_1 `s` rounding), else 0.
    pub slack: Vec<f64>,
    /// q8_1 inputs: per output, the exact value of a kernel that takes the `-1` of each code
    /// from the stored f16 `s` (`values - Σ_b d_w (s_b - d_b Σq_b)`); empty otherwise. The NMSE is
    /// measured against whichever of the two references the output is closer to, so the `s`
    /// allowance never widens the NMSE limit itself.
    pub values_with_s: Vec<f64>,
    /// Terms per output sum.
    pub terms: u64,
    /// The activation buffer as the kernel receives it (in `precision.x`).
    pub x_bytes: Vec<u8>,
}

/// Decodes ggml block bytes of a case's format to f32 (the reference decoder, or a deliberately
/// wrong reading used to name a failure).
pub type WeightDecoder<'a> = &'a dyn Fn(&[u8], &mut [f32]) -> Result<()>;

/// The case's weights as ggml blocks (planes objects disassembled).
pub fn ggml_blocks(c: &KernelCase) -> Result<Vec<u8>> {
    if c.class.is_planes() {
        let (layout, geom) = plane_geometry(c.format, c.dims.n, c.dims.k)?;
        planes::disassemble(&layout, &geom, &c.weights)
    } else {
        Ok(c.weights.clone())
    }
}

/// Per weight element, the f16 scale of the block holding it (for the q8_1 slack).
fn element_scales(c: &KernelCase, blocks: &[u8]) -> Result<Vec<f32>> {
    let codec = c.format.codec()?;
    let (bb, be) = (codec.block_bytes(), codec.block_elems());
    let so = codec.scale_offset().unwrap_or(0);
    let mut v = Vec::with_capacity(blocks.len() / bb * be);
    for blk in blocks.chunks_exact(bb) {
        let d = f16_to_f32(u16::from_le_bytes([blk[so], blk[so + 1]]));
        v.extend(std::iter::repeat_n(d, be));
    }
    Ok(v)
}

fn case_err(c: &KernelCase, detail: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelCase, c.name.clone(), detail)
}

/// The activations as the kernel sees them, their buffer bytes, and per q8_1 block the `s` error.
fn activations(c: &KernelCase, x: Dtype) -> Result<(Vec<f32>, Vec<u8>, Vec<f64>)> {
    match x {
        Dtype::F32 | Dtype::F16 | Dtype::Bf16 => {
            let seen: Vec<f32> = c.x.iter().map(|&v| x.round(v)).collect();
            Ok((seen.clone(), x.encode(&seen), Vec::new()))
        }
        Dtype::Q8_1 => {
            if c.x.len() % Q8_1_QK != 0 || c.class == KernelClass::HadamardRotate {
                return Err(case_err(
                    c,
                    "q8_1 activations need a mat-vec class and k a multiple of 32",
                ));
            }
            let (b, seen, s_err) = quantize_q8_1(&c.x);
            Ok((seen, b, s_err))
        }
        Dtype::I8G32F32 | Dtype::I8G32F16 => {
            if c.x.len() % Q8_1_QK != 0 || c.class == KernelClass::HadamardRotate {
                return Err(case_err(
                    c,
                    "int8-group activations need a mat-vec class and k a multiple of 32",
                ));
            }
            let (b, seen) = quantize_i8_groups(&c.x, x == Dtype::I8G32F16);
            Ok((seen, b, Vec::new()))
        }
    }
}

/// The expected output under `p`, decoding the weights with `decode`.
pub fn expected_with(c: &KernelCase, p: Precision, decode: WeightDecoder) -> Result<Expected> {
    let d = c.dims;
    if p.y.quantized() {
        return Err(case_err(
            c,
            "q8_1 is an activation type, not an output type",
        ));
    }
    let (x_seen, x_bytes, s_err) = if c.x.is_empty() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        activations(c, p.x)?
    };
    let mut e = Expected {
        precision: p,
        values: Vec::new(),
        magnitude: Vec::new(),
        slack: Vec::new(),
        values_with_s: Vec::new(),
        terms: 0,
        x_bytes,
    };
    let decode_all = |blocks: &[u8]| -> Result<Vec<f32>> {
        let codec = c.format.codec()?;
        let n = codec.blocks_in(blocks.len())? * codec.block_elems();
        let mut out = vec![0f32; n];
        decode(blocks, &mut out)?;
        Ok(out)
    };
    match c.class {
        KernelClass::Dequantize => {
            let w = decode_all(&c.weights)?;
            e.values = w.iter().map(|&v| v as f64).collect();
        }
        KernelClass::GetRows => {
            // Only the gathered rows are decoded (a vocabulary-sized table has 151,936; a
            // sparse one holds no others).
            for &id in &c.ids {
                let r = u64::try_from(id)
                    .ok()
                    .filter(|&r| r < d.n)
                    .ok_or_else(|| case_err(c, format!("row id {id} outside 0..{}", d.n)))?;
                let bytes = c
                    .table_row(r)
                    .ok_or_else(|| case_err(c, format!("row {r} is not in the case's weights")))?;
                e.values
                    .extend(decode_all(bytes)?.into_iter().map(|v| v as f64));
            }
        }
        KernelClass::MulMatVec
        | KernelClass::MulMatVecPlanes
        | KernelClass::MulMat
        | KernelClass::MulMatPlanes => {
            let blocks = ggml_blocks(c)?;
            let w = decode_all(&blocks)?;
            let scales = if p.x == Dtype::Q8_1 {
                element_scales(c, &blocks)?
            } else {
                Vec::new()
            };
            let (n, t) = (d.n as usize, d.t.max(1) as usize);
            let kw = w.len() / n.max(1);
            if x_seen.len() != t * kw {
                return Err(case_err(
                    c,
                    format!("x has {} floats, expected {}", x_seen.len(), t * kw),
                ));
            }
            e.values = vec![0f64; t * n];
            e.magnitude = vec![0f64; t * n];
            e.slack = vec![0f64; t * n];
            for tok in 0..t {
                let x = &x_seen[tok * kw..(tok + 1) * kw];
                for r in 0..n {
                    let row = &w[r * kw..(r + 1) * kw];
                    let (mut s, mut m) = (0f64, 0f64);
                    for (a, b) in row.iter().zip(x) {
                        let prod = *a as f64 * *b as f64;
                        s += prod;
                        m += prod.abs();
                    }
                    let i = tok * n + r;
                    e.values[i] = s;
                    e.magnitude[i] = m;
                    if !scales.is_empty() {
                        // A kernel may take sum((c-1) q) d_x as d_x sum(c q) - s with the stored
                        // f16 s: per q8_1 block that is off by |d_w| |s - d_x sum(q)|.
                        let qb0 = tok * kw / Q8_1_QK;
                        let (mut abs, mut signed) = (0f64, 0f64);
                        for b in 0..kw / Q8_1_QK {
                            let dw = scales[r * kw + b * Q8_1_QK] as f64;
                            abs += dw.abs() * s_err[qb0 + b].abs();
                            signed += dw * s_err[qb0 + b];
                        }
                        e.slack[i] = abs;
                        if e.values_with_s.is_empty() {
                            e.values_with_s = vec![0f64; t * n];
                        }
                        e.values_with_s[i] = s - signed;
                    }
                }
            }
            e.terms = kw as u64;
        }
        KernelClass::HadamardRotate => {
            let (k, t, b) = (d.k as usize, d.t as usize, d.block as usize);
            if x_seen.len() != k * t || c.signs.len() != k || b == 0 || k % b != 0 {
                return Err(case_err(
                    c,
                    "x must be [t, k], signs [k], k a multiple of block",
                ));
            }
            let signs: Vec<f64> = c.signs.iter().map(|&s| s as f64).collect();
            let norm = 1.0 / (b as f64).sqrt();
            for tok in 0..t {
                let x: Vec<f64> = x_seen[tok * k..(tok + 1) * k]
                    .iter()
                    .map(|&v| v as f64)
                    .collect();
                e.values
                    .extend(crate::hadamard::forward_input(&x, &signs, None, b)?);
                for blk in x.chunks(b) {
                    let m: f64 = blk.iter().map(|v| v.abs()).sum::<f64>() * norm;
                    e.magnitude.extend(std::iter::repeat_n(m, b));
                }
            }
            e.slack = vec![0f64; e.values.len()];
            e.terms = b as u64;
        }
    }
    Ok(e)
}

/// The expected output under `p` with the reference decoder.
pub fn expected(c: &KernelCase, p: Precision) -> Result<Expected> {
    let codec = match c.class {
        KernelClass::HadamardRotate => None,
        _ => Some(c.format.codec()?),
    };
    expected_with(c, p, &|b, o| match codec {
        Some(cd) => cd.decode_reference(b, o),
        None => Ok(()),
    })
}
