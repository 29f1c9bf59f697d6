//! Non-ternary objects: norms (−1 or raw), head vectors (log(−a), tiled→grouped), head rows
//! (BF16 rows tiled→grouped) and the conv1d channel permutation + transpose. Each returns the
//! object's little-endian bytes in its ninfer format.
//!
//! Every transform is computed in f64 (exact for the shift of an f32) and rounded ONCE to the
//! stored format: rounding an f32 intermediate again would double-round (issue: 29 a_log bytes of
//! the 27B model were 1 ulp off with `ln` in f32).

use super::source::floats;
use crate::codec::direct::f32_to_bf16;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Gguf, TensorInfo};
use crate::perm::perm_row;
use crate::spec::{HeadVectorFn, ModelProfile};

fn bf16_bytes(v: impl Iterator<Item = f32>) -> Vec<u8> {
    v.flat_map(|x| f32_to_bf16(x).to_le_bytes()).collect()
}

/// f64 → bf16, correctly rounded (nearest, ties to even). Round-to-odd to f32 first keeps the
/// sticky information (f32 has 16 more significand bits than bf16), so the second, RNE rounding
/// gives the same result as one rounding of the exact value.
pub fn f64_to_bf16(x: f64) -> u16 {
    if x.is_nan() {
        return f32_to_bf16(f32::NAN);
    }
    let mut f = x as f32;
    if f as f64 != x {
        if (f as f64).abs() > x.abs() {
            // Step toward zero: the truncated value (same sign; f is never 0 here).
            f = f32::from_bits(f.to_bits() - 1);
        }
        f = f32::from_bits(f.to_bits() | 1);
    }
    f32_to_bf16(f)
}

fn bf16_bytes_f64(v: impl Iterator<Item = f64>) -> Vec<u8> {
    v.flat_map(|x| f64_to_bf16(x).to_le_bytes()).collect()
}

/// `*norm.weight` → BF16 of (x − 1) (HF form) or of x (ssm_norm).
pub fn norm(g: &Gguf<'_>, t: &TensorInfo<'_>, minus_one: bool) -> Result<Vec<u8>> {
    let v = floats(g, t)?;
    let shift = if minus_one { 1.0 } else { 0.0 };
    Ok(bf16_bytes_f64(v.into_iter().map(|x| x as f64 - shift)))
}

/// A head vector: optional log(−a), then tiled→grouped; FP32 bytes.
pub fn head_vector(
    p: &ModelProfile,
    g: &Gguf<'_>,
    t: &TensorInfo<'_>,
    func: HeadVectorFn,
) -> Result<Vec<u8>> {
    let v = floats(g, t)?;
    let tiling = p.v_tiling();
    if v.len() != tiling.heads() {
        return Err(Error::new(
            ErrorClass::GgufTensorShape,
            t.name,
            format!("{} values, expected {} heads", v.len(), tiling.heads()),
        ));
    }
    let mapped: Vec<f32> = match func {
        HeadVectorFn::Identity => v,
        HeadVectorFn::LogNeg => v
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                if a < 0.0 {
                    Ok((-(a as f64)).ln() as f32)
                } else {
                    Err(Error::new(
                        ErrorClass::GgufTensorShape,
                        format!("{}[{i}]", t.name),
                        format!("ssm_a must be negative for a_log = log(-a); got {a}"),
                    ))
                }
            })
            .collect::<Result<_>>()?,
    };
    Ok((0..tiling.heads())
        .flat_map(|i| mapped[tiling.gather(i)].to_le_bytes())
        .collect())
}

/// Rows on the head axis (ne = [hidden, heads]), tiled→grouped, as BF16 (verbatim if BF16).
pub fn head_rows(p: &ModelProfile, g: &Gguf<'_>, t: &TensorInfo<'_>) -> Result<Vec<u8>> {
    let tiling = p.v_tiling();
    if t.ne[1] as usize != tiling.heads() {
        return Err(Error::new(
            ErrorClass::GgufTensorShape,
            t.name,
            format!("{} rows, expected {} heads", t.ne[1], tiling.heads()),
        ));
    }
    let row_elems = t.ne[0] as usize;
    let bf16: Vec<u8> = if t.ggml.name == "BF16" {
        g.tensor_data(t).to_vec()
    } else {
        bf16_bytes(floats(g, t)?.into_iter())
    };
    let rb = row_elems * 2;
    Ok((0..tiling.heads())
        .flat_map(|i| {
            bf16[tiling.gather(i) * rb..(tiling.gather(i) + 1) * rb]
                .iter()
                .copied()
        })
        .collect())
}

/// ssm_conv1d ne=[kernel, C] is physically (C, kernel). Keep channels [0, qk), permute the V
/// channels by head (perm_row over v heads × head_v_dim), transpose to (kernel, C), BF16.
pub fn conv1d(p: &ModelProfile, g: &Gguf<'_>, t: &TensorInfo<'_>) -> Result<Vec<u8>> {
    let (kernel, c) = (t.ne[0] as usize, t.ne[1] as usize);
    let qk = p.derived["qk_rows"] as usize;
    if c != p.derived["qkv_rows"] as usize || kernel != p.conv_kernel as usize {
        return Err(Error::new(
            ErrorClass::GgufTensorShape,
            t.name,
            format!(
                "ne=[{kernel}, {c}], expected [{}, {}]",
                p.conv_kernel, p.derived["qkv_rows"]
            ),
        ));
    }
    let v = floats(g, t)?;
    let src_channel = |ch: usize| {
        if ch < qk {
            ch
        } else {
            qk + perm_row(p.v_tiling(), p.head_v_dim as usize, ch - qk)
        }
    };
    let mut out = Vec::with_capacity(kernel * c);
    for tap in 0..kernel {
        for ch in 0..c {
            out.push(v[src_channel(ch) * kernel + tap]);
        }
    }
    Ok(bf16_bytes(out.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_to_bf16_rounds_once() {
        // 1 + 2^-8 + 2^-30 lies just above the bf16 midpoint 1 + 2^-8: it must round up. Going
        // through f32 with nearest rounding lands exactly on the midpoint and ties down to 1.0.
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
        assert_eq!(
            f32_to_bf16(x as f32),
            0x3f80,
            "the double-rounding trap exists"
        );
        assert_eq!(f64_to_bf16(x), 0x3f81);
        assert_eq!(f64_to_bf16(-x), 0xbf81);
        // Exact midpoints still tie to even; representable values are unchanged.
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(f64_to_bf16(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
        assert_eq!(f64_to_bf16(-0.5), 0xbf00);
        assert_eq!(f64_to_bf16(0.0), 0);
        assert_eq!(f64_to_bf16(1e300), 0x7f80);
        assert_eq!(f64_to_bf16(1e-300), 0);
        assert_eq!(f64_to_bf16(f64::NAN), 0x7fc0);
    }
}
