//! Non-ternary objects: norms (−1 or raw), head vectors (log(−a), tiled→grouped), head rows
//! (BF16 rows tiled→grouped) and the conv1d channel permutation + transpose. Each returns the
//! object's little-endian bytes in its ninfer format.

use super::source::floats;
use crate::codec::direct::f32_to_bf16;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Gguf, TensorInfo};
use crate::perm::perm_row;
use crate::spec::ModelProfile;

fn bf16_bytes(v: impl Iterator<Item = f32>) -> Vec<u8> {
    v.flat_map(|x| f32_to_bf16(x).to_le_bytes()).collect()
}

/// `*norm.weight` → BF16 of (x − 1) (HF form) or of x (ssm_norm).
pub fn norm(g: &Gguf<'_>, t: &TensorInfo<'_>, minus_one: bool) -> Result<Vec<u8>> {
    let v = floats(g, t)?;
    Ok(bf16_bytes(v.into_iter().map(|x| {
        if minus_one {
            x - 1.0
        } else {
            x
        }
    })))
}

/// A head vector: optional log(−a), then tiled→grouped; FP32 bytes.
pub fn head_vector(
    p: &ModelProfile,
    g: &Gguf<'_>,
    t: &TensorInfo<'_>,
    func: &str,
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
        "identity" => v,
        "log_neg" => v
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                if a < 0.0 {
                    Ok((-a).ln())
                } else {
                    Err(Error::new(
                        ErrorClass::GgufTensorShape,
                        format!("{}[{i}]", t.name),
                        format!("ssm_a must be negative for a_log = log(-a); got {a}"),
                    ))
                }
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(Error::new(
                ErrorClass::PackTemplate,
                t.name,
                format!("unknown head-vector function '{other}'"),
            ))
        }
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
