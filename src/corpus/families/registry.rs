//! `.ninfer` cases of the non-ternary registry formats with KNOWN values (listed under the
//! `ninfer` family): Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S (row-split-k128-v1), NVFP4
//! (blockscale-k16-m128x4-v1) and FP8_E4M3FN_ROW_BF16S (row-scale-v1).
//!
//! The generator picks the integer codes and scale words first, lays them into the planes with
//! its own loops straight from the layout text (spec/formats.json `_note`,
//! spec/ninfer-container.md#ninfer-layouts), and computes every value as code x scale in f64.
//! Its `values_sha256` is attached as an independent expectation: corpus generation fails if
//! the reference decoder disagrees.

use crate::corpus::observe::values_sha256;
use crate::corpus::{Bytes, Case};
use crate::ninfer::{plan, writer::to_bytes, Identity, PlannedObject};
use crate::spec::LayoutId;
use serde_json::json;

fn case(
    name: &str,
    format: &str,
    layout: LayoutId,
    shape: [u64; 2],
    payload: Vec<u8>,
    values: &[f32],
    recipe: String,
) -> crate::Result<Case> {
    let dir = plan(
        Identity {
            model_id: "corpus-registry".into(),
            weights_id: "known-values".into(),
        },
        vec![PlannedObject::tensor("q", shape.to_vec(), format, layout)],
    )
    .map_err(|e| super::bug("plan", e))?;
    let bytes = to_bytes(&dir, &[payload]).map_err(|e| super::bug("write", e))?;
    Ok(Case::new("ninfer", name, "ninfer", "ninfer", bytes)
        .feature("ninfer:layout")
        .feature("ninfer:registry_values")
        .feature(format!("format:{format}"))
        .spec("spec/ninfer-container.md#ninfer-layouts")
        .spec("spec/formats.json (_note: value formulas and plane layout)")
        .recipe(recipe)
        .check(json!({"objects": [{"name": "q", "values_sha256": values_sha256(values)}]})))
}

fn align256(x: usize) -> usize {
    x.div_ceil(256) * 256
}

/// A grouped integer tensor: codes uniform over the format's interval, binary16 scales
/// (2j+1)/1024, zero codes in padding lanes and zero scale words in wholly physical groups.
fn grouped(
    format: &str,
    bits: u32,
    group: usize,
    n: usize,
    k: usize,
    r: &mut Bytes,
) -> crate::Result<Case> {
    let k_pad = k.div_ceil(128) * 128;
    let gpr = k_pad / group;
    let logical_groups = k.div_ceil(group);
    let (bpg, hpg) = if bits == 8 {
        (group, 0)
    } else {
        (group / 2, group * (bits as usize - 4) / 8)
    };
    let (lo, hi): (i64, i64) = if bits == 8 {
        (-127, 127)
    } else {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    };
    let base_bytes = n * gpr * bpg;
    let high_off = align256(base_bytes);
    let scale_off = high_off + align256(n * gpr * hpg);
    let mut p = vec![0u8; scale_off + n * gpr * 2];
    let mut values = Vec::with_capacity(n * k);
    for row in 0..n {
        let mut row_codes = vec![0i64; k_pad];
        for c in row_codes.iter_mut().take(k) {
            *c = lo + (r.next_u64() % (hi - lo + 1) as u64) as i64;
        }
        for g in 0..gpr {
            let gi = row * gpr + g;
            let word: u16 = if g < logical_groups {
                half::f16::from_f64((2 * (r.next_u64() % 64) + 1) as f64 / 1024.0).to_bits()
            } else {
                0
            };
            p[scale_off + 2 * gi..scale_off + 2 * gi + 2].copy_from_slice(&word.to_le_bytes());
            let scale = half::f16::from_bits(word).to_f64();
            for lane in 0..group {
                let col = g * group + lane;
                let q = row_codes[col];
                let u = (q & ((1 << bits) - 1)) as u8;
                if bits == 8 {
                    p[gi * bpg + lane] = u;
                } else {
                    // base: low nibble of u, even lane low, odd lane high
                    p[gi * bpg + lane / 2] |= (u & 0x0f) << (4 * (lane % 2));
                    // high: bits 4.. of u, lane-major stream, stream bit t in byte t/8 bit t%8
                    let per = bits as usize - 4;
                    for j in 0..per {
                        let t = lane * per + j;
                        p[high_off + gi * hpg + t / 8] |= ((u >> (4 + j)) & 1) << (t % 8);
                    }
                }
                if col < k {
                    values.push((scale * q as f64) as f32);
                }
            }
        }
    }
    // row-major logical order: the loops above visit rows, then groups, then lanes
    let name = format!("y_values_{}_{n}x{k}", format.to_lowercase());
    case(&name, format, LayoutId::RowSplitK128V1, [n as u64, k as u64], p, &values,
        format!("{format} [{n}, {k}]: codes uniform over [{lo}, {hi}], binary16 scales (2j+1)/1024 per group of {group}, planes laid out bit by bit by the generator; values_sha256 of code x scale"))
}

fn e4m3_f64(s: u8) -> f64 {
    let (e, m) = (((s >> 3) & 15) as i32, (s & 7) as f64);
    let v = if e == 0 {
        m * 2f64.powi(-9)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    };
    if s & 0x80 != 0 {
        -v
    } else {
        v
    }
}

fn nvfp4(n: usize, k: usize, r: &mut Bytes) -> crate::Result<Case> {
    let codes: Vec<u8> = (0..n * k).map(|_| (r.next_u64() % 16) as u8).collect();
    let groups = k / 16;
    let scales: Vec<u8> = (0..n * groups)
        .map(|_| (((1 + r.next_u64() % 14) << 3) | (r.next_u64() % 8)) as u8)
        .collect();
    let div = 3.0f32;
    let soff = align256(n * k / 2);
    let doff = soff + n * k / 16;
    let mut p = vec![0u8; doff + 4];
    for (i, &c) in codes.iter().enumerate() {
        p[i / 2] |= c << (4 * (i % 2));
    }
    for row in 0..n {
        for g in 0..groups {
            let (row_tile, row_inner, scale_tile, scale_lane) =
                (row / 128, row % 128, g / 4, g % 4);
            let off = (row_tile * (k / 64) + scale_tile) * 512
                + (row_inner % 32) * 16
                + (row_inner / 32) * 4
                + scale_lane;
            p[soff + off] = scales[row * groups + g];
        }
    }
    p[doff..].copy_from_slice(&div.to_le_bytes());
    const MAG: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let values: Vec<f32> = (0..n * k)
        .map(|i| {
            let c = codes[i];
            let m = if c & 8 != 0 {
                -MAG[(c & 7) as usize]
            } else {
                MAG[(c & 7) as usize]
            };
            (m * e4m3_f64(scales[(i / k) * groups + (i % k) / 16]) / div as f64) as f32
        })
        .collect();
    case(&format!("y_values_nvfp4_{n}x{k}"), "NVFP4", LayoutId::BlockscaleK16M128x4V1, [n as u64, k as u64], p, &values,
        format!("NVFP4 [{n}, {k}]: random E2M1 codes (low nibble = smaller k), normal E4M3FN scales placed by the m128x4 swizzle, divisor 3.0; values_sha256 of e2m1 x e4m3fn / 3"))
}

fn fp8_row(n: usize, k: usize, r: &mut Bytes) -> crate::Result<Case> {
    let codes: Vec<u8> = (0..n * k)
        .map(|_| loop {
            let c = r.next_u64() as u8;
            if c & 0x7f != 0x7f {
                break c;
            }
        })
        .collect();
    let row_scales = [0.5f32, -3.0, 0.0078125, 96.0];
    let soff = align256(n * k);
    let mut p = vec![0u8; soff + 2 * n];
    p[..n * k].copy_from_slice(&codes);
    for row in 0..n {
        let w = (row_scales[row % 4].to_bits() >> 16) as u16; // exact: 8-bit significands
        p[soff + 2 * row..soff + 2 * row + 2].copy_from_slice(&w.to_le_bytes());
    }
    let values: Vec<f32> = (0..n * k)
        .map(|i| (e4m3_f64(codes[i]) * row_scales[(i / k) % 4] as f64) as f32)
        .collect();
    case(&format!("y_values_fp8_e4m3fn_row_bf16s_{n}x{k}"), "FP8_E4M3FN_ROW_BF16S", LayoutId::RowScaleV1, [n as u64, k as u64], p, &values,
        format!("FP8_E4M3FN_ROW_BF16S [{n}, {k}]: random non-NaN E4M3FN codes row-major, BF16 row multipliers 0.5, -3, 2^-7, 96; values_sha256 of e4m3fn x scale"))
}

/// Every case of the `registry` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let mut r = Bytes::new(0x4e6_7157);
    Ok(vec![
        grouped("Q4G64_F16S", 4, 64, 3, 200, &mut r)?,
        grouped("Q5G64_F16S", 5, 64, 2, 130, &mut r)?,
        grouped("Q6G64_F16S", 6, 64, 3, 257, &mut r)?,
        grouped("W8G32_F16S", 8, 32, 2, 33, &mut r)?,
        grouped("Q4G64_F16S", 4, 64, 2, 128, &mut r)?,
        nvfp4(256, 128, &mut r)?,
        fp8_row(4, 70, &mut r)?,
    ])
}
