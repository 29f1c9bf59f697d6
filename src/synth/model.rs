//! `synth`: a qwen35 GGUF shaped like Ternary-Bonsai (any profile) with the complete tensor list,
//! `qwen35.*` hyper-parameters and `prism.hadamard.*` metadata. Ternary payloads follow the
//! real-data fingerprints the verifier checks: zero trits 42/128 = 32.81 % per block, spread so
//! that every 4th element (the PQ2_0 first-code sample) also has a 32.81 % zero share, and f16
//! scales log-normal with median 0.0168. PQ2_0 and PTQ1_0 files from one seed hold the same trits
//! and scales. Tensors are generated row-chunk by row-chunk, so memory stays bounded.

use crate::codec::{self, direct, pq2, ptq1};
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{GgufWriter, MetaValue, ValueType};
use crate::rng::Rng;
use crate::spec::{self, mapping, ModelProfile, TensorClass};
use std::io::{Read, Write};
use std::path::Path;

/// The ternary GGUF type a synthetic model uses: the one table-derived name
/// ([`crate::codec::TernaryType`]).
pub use crate::codec::TernaryType;

/// Zero trits per 128-element block (42/128 = 0.328125, within 0.0004 of the real 0.3278).
pub const ZEROS_PER_BLOCK: usize = 42;
/// Median of the f16 block scales of the real model (spec/verifier.md#gate-payload-order).
pub const SCALE_MEDIAN: f64 = 0.0168;

pub use crate::mapping::{gguf_tensors as tensor_list, SynthTensor};

fn normal(rng: &mut Rng) -> f64 {
    // Box–Muller; u1 in (0, 1].
    let u1 = 1.0 - rng.unit();
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Trits (0, 1, 2 = −1, 0, +1) of block number `b` of a tensor's stream.
pub fn block_trits(rng: &mut Rng, b: u64) -> [u8; 128] {
    let mut t = [0u8; 128];
    for c in 0..4usize {
        // Two of the four position classes get 11 zeros, two get 10; class 0 alternates.
        let zeros = if (c as u64 + b) % 2 == 0 { 11 } else { 10 };
        let mut pos: [usize; 32] = std::array::from_fn(|i| 4 * i + c);
        for i in 0..zeros {
            let j = i + (rng.next_u64() % (32 - i) as u64) as usize;
            pos.swap(i, j);
        }
        for (i, &e) in pos.iter().enumerate() {
            t[e] = if i < zeros {
                1
            } else if rng.next_u64() & 1 == 0 {
                0
            } else {
                2
            };
        }
    }
    t
}

/// A positive f16 scale, log-normal around [`SCALE_MEDIAN`].
pub fn block_scale(rng: &mut Rng) -> u16 {
    codec::f32_to_f16((SCALE_MEDIAN * (0.35 * normal(rng)).exp()) as f32)
}

/// Encodes one block of trits with scale bits in the given type.
pub fn encode_block(ty: TernaryType, trits: &[u8; 128], d: u16, out: &mut Vec<u8>) {
    match ty {
        TernaryType::Pq2_0 => {
            out.extend_from_slice(&pq2::encode_block::<128, { pq2::PQ2_0_BYTES }>(trits, d))
        }
        TernaryType::Ptq1_0 => out.extend_from_slice(&ptq1::encode_block(trits, d)),
    }
}

/// Streams a ternary tensor's blocks (bounded memory: one chunk of blocks at a time).
struct TernaryStream {
    ty: TernaryType,
    rng: Rng,
    next_block: u64,
    blocks: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for TernaryStream {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.buf.len() {
            if self.next_block == self.blocks {
                return Ok(0);
            }
            self.buf.clear();
            self.pos = 0;
            let end = (self.next_block + 8192).min(self.blocks);
            for b in self.next_block..end {
                let d = block_scale(&mut self.rng);
                let t = block_trits(&mut self.rng, b);
                encode_block(self.ty, &t, d, &mut self.buf);
            }
            self.next_block = end;
        }
        let k = out.len().min(self.buf.len() - self.pos);
        out[..k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

fn float_values(t: &SynthTensor, seed: u64) -> Vec<f32> {
    let n: u64 = t.ne.iter().product();
    let mut rng = Rng::for_name(seed, &t.name);
    (0..n)
        .map(|_| {
            let z = normal(&mut rng);
            (match t.init.as_str() {
                "norm" => 1.0 + 0.05 * z,
                "negative" => -(0.5 * z).exp(),
                _ => 0.02 * z,
            }) as f32
        })
        .collect()
}

fn dense_bytes(t: &SynthTensor, seed: u64) -> Vec<u8> {
    let v = float_values(t, seed);
    match t.kind {
        TensorClass::Bf16 => v
            .iter()
            .flat_map(|x| direct::f32_to_bf16(*x).to_le_bytes())
            .collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn type_id_for(t: &SynthTensor, ty: TernaryType) -> u32 {
    match t.kind {
        TensorClass::Ternary => ty.type_id(),
        dense => spec::get()
            .ggml_type_named(dense.as_str())
            .map(|g| g.id)
            .expect("mapping names known ggml types"),
    }
}

/// The metadata of the synthetic model, in write order.
fn metadata(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    tensors: &[SynthTensor],
) -> Vec<(String, MetaValue)> {
    let a = &p.arch;
    let d = |k: &str| p.derived[k];
    let u = |x: u64| MetaValue::U32(x as u32);
    let mut kv: Vec<(String, MetaValue)> = vec![
        ("general.architecture".into(), MetaValue::str(a)),
        (
            "general.name".into(),
            MetaValue::str(&format!(
                "synthetic {} ({}, seed {seed})",
                p.name,
                ty.name()
            )),
        ),
        ("general.quantization_version".into(), MetaValue::U32(2)),
        (format!("{a}.block_count"), u(p.n_layers)),
        (format!("{a}.context_length"), u(p.context_length)),
        (format!("{a}.embedding_length"), u(p.hidden)),
        (format!("{a}.feed_forward_length"), u(p.ffn)),
        (format!("{a}.attention.head_count"), u(p.q_heads)),
        (format!("{a}.attention.head_count_kv"), u(p.kv_heads)),
        (format!("{a}.attention.key_length"), u(p.head_dim)),
        (format!("{a}.attention.value_length"), u(p.head_dim)),
        (
            format!("{a}.attention.layer_norm_rms_epsilon"),
            MetaValue::F32(p.rms_eps),
        ),
        (format!("{a}.rope.dimension_count"), u(p.rope_dims)),
        (
            format!("{a}.rope.dimension_sections"),
            MetaValue::Array(
                ValueType::I32,
                p.rope_sections.iter().map(|&x| MetaValue::I32(x)).collect(),
            ),
        ),
        (
            format!("{a}.rope.freq_base"),
            MetaValue::F32(p.rope_freq_base),
        ),
        (format!("{a}.ssm.conv_kernel"), u(p.conv_kernel)),
        (format!("{a}.ssm.inner_size"), u(d("v_rows"))),
        (format!("{a}.ssm.state_size"), u(p.head_k_dim)),
        (format!("{a}.ssm.time_step_rank"), u(p.v_heads)),
        (format!("{a}.ssm.group_count"), u(p.k_heads)),
        (
            format!("{a}.full_attention_interval"),
            u(p.full_attention_interval),
        ),
    ];
    let inverse: Vec<String> = mapping().hadamard_inverse.clone();
    let folded: Vec<MetaValue> = tensors
        .iter()
        .filter(|t| t.kind == TensorClass::Ternary && !inverse.contains(&t.name))
        .map(|t| MetaValue::str(&t.name))
        .collect();
    let mut rng = Rng::for_name(seed, "prism.hadamard.sign_values");
    let total: u64 = p.sign_widths.iter().sum();
    let signs: Vec<MetaValue> = (0..total)
        .map(|_| MetaValue::I32(if rng.next_u64() & 1 == 0 { 1 } else { -1 }))
        .collect();
    let h = "prism.hadamard";
    kv.extend([
        (format!("{h}.version"), MetaValue::U32(1)),
        (format!("{h}.block_size"), u(p.hadamard_block)),
        (
            format!("{h}.transform"),
            MetaValue::str("normalized-sylvester-walsh-hadamard"),
        ),
        (format!("{h}.axis"), MetaValue::str("input-last-dimension")),
        (format!("{h}.sign_mode"), MetaValue::str("explicit")),
        (
            format!("{h}.weight_names"),
            MetaValue::Array(ValueType::String, folded),
        ),
        (
            format!("{h}.sign_widths"),
            MetaValue::Array(
                ValueType::I32,
                p.sign_widths
                    .iter()
                    .map(|&w| MetaValue::I32(w as i32))
                    .collect(),
            ),
        ),
        (
            format!("{h}.sign_values"),
            MetaValue::Array(ValueType::I32, signs),
        ),
        (
            format!("{h}.inverse_weight_names"),
            MetaValue::Array(
                ValueType::String,
                inverse.iter().map(|s| MetaValue::str(s)).collect(),
            ),
        ),
        (format!("{h}.gdn_v_grouped"), MetaValue::Bool(true)),
    ]);
    kv
}

/// The writer (header laid out) for a synthetic model.
pub fn writer_for(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
) -> Result<(GgufWriter, Vec<SynthTensor>)> {
    writer_for_layers(p, ty, seed, None)
}

/// [`writer_for`] of a reduced model holding only `layers` (a test model: the same metadata,
/// block_count included, and each tensor byte-identical to the full model's, since every tensor
/// is seeded by its name).
pub fn writer_for_layers(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
) -> Result<(GgufWriter, Vec<SynthTensor>)> {
    let tensors = match layers {
        None => tensor_list(p),
        Some(ls) => {
            let mut ls = ls.to_vec();
            ls.sort_unstable();
            ls.dedup();
            if let Some(l) = ls.iter().find(|&&l| l >= p.n_layers) {
                return Err(Error::new(
                    ErrorClass::PackProfile,
                    "--layers",
                    format!(
                        "layer {l} is beyond profile {}'s {} layers",
                        p.name, p.n_layers
                    ),
                ));
            }
            crate::mapping::gguf_tensors_in(p, &ls)
        }
    };
    let mut w = GgufWriter::new();
    for (k, v) in metadata(p, ty, seed, &tensors) {
        w.kv(&k, v);
    }
    for t in &tensors {
        if t.kind == TensorClass::Ternary && t.ne[0] % 128 != 0 {
            return Err(Error::new(
                ErrorClass::GgufTensorBlockMultiple,
                t.name.clone(),
                format!("ne[0] = {} is not a multiple of 128", t.ne[0]),
            ));
        }
        w.tensor(&t.name, &t.ne, type_id_for(t, ty))?;
    }
    Ok((w, tensors))
}

/// Streams the whole model into `out`.
pub fn write_model<W: Write>(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    out: W,
    progress: impl FnMut(u64),
) -> Result<W> {
    write_model_layers(p, ty, seed, None, out, progress)
}

/// Streams a full (`None`) or reduced model into `out`.
pub fn write_model_layers<W: Write>(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
    out: W,
    mut progress: impl FnMut(u64),
) -> Result<W> {
    let (w, tensors) = writer_for_layers(p, ty, seed, layers)?;
    let mut s = w.stream(out)?;
    for t in &tensors {
        if t.kind == TensorClass::Ternary {
            let blocks = t.ne.iter().product::<u64>() / 128;
            let src = TernaryStream {
                ty,
                rng: Rng::for_name(seed, &t.name),
                next_block: 0,
                blocks,
                buf: Vec::new(),
                pos: 0,
            };
            s.write_tensor_from(src)?;
            progress(blocks * ty.block_bytes() as u64);
        } else {
            let b = dense_bytes(t, seed);
            s.write_tensor(&b)?;
            progress(b.len() as u64);
        }
    }
    s.finish()
}

/// Writes the model atomically to `path` (after it re-opens as a strict GGUF).
pub fn write_model_file(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    path: &Path,
    progress: impl FnMut(u64),
) -> Result<()> {
    write_model_file_layers(p, ty, seed, None, path, progress)
}

/// [`write_model_file`] of a full (`None`) or reduced model.
pub fn write_model_file_layers(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
    path: &Path,
    progress: impl FnMut(u64),
) -> Result<()> {
    crate::fsio::write_atomic(
        path,
        |w| write_model_layers(p, ty, seed, layers, w, progress).map(|_| ()),
        |tmp| {
            let map = crate::fsio::map_file(tmp)?;
            crate::gguf::parse(&map, crate::gguf::Mode::Strict).map(|_| ())
        },
    )
}

/// The model in memory (small profiles).
pub fn model_bytes(p: &ModelProfile, ty: TernaryType, seed: u64) -> Result<Vec<u8>> {
    write_model(p, ty, seed, Vec::new(), |_| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::{parse, Mode};

    #[test]
    fn nano_models_parse_strictly_are_deterministic_and_share_trits() {
        let p = spec::profile("bonsai-nano").unwrap();
        let a = model_bytes(&p, TernaryType::Pq2_0, 1).unwrap();
        assert_eq!(a, model_bytes(&p, TernaryType::Pq2_0, 1).unwrap());
        assert_ne!(a, model_bytes(&p, TernaryType::Pq2_0, 2).unwrap());
        assert!(a.len() < 2 << 20, "nano PQ2_0 is {} bytes", a.len());
        let b = model_bytes(&p, TernaryType::Ptq1_0, 1).unwrap();
        let ga = parse(&a, Mode::Strict).unwrap();
        let gb = parse(&b, Mode::Strict).unwrap();
        assert_eq!(ga.tensors.len(), gb.tensors.len());
        // Same trits and scales: decoded values agree exactly, tensor by tensor.
        for (ta, tb) in ga.tensors.iter().zip(&gb.tensors) {
            let ca = codec::Codec::for_ggml_type(ta.ggml).unwrap();
            let cb = codec::Codec::for_ggml_type(tb.ggml).unwrap();
            let va = ca.decode_to_vec(ga.tensor_data(ta)).unwrap();
            let vb = cb.decode_to_vec(gb.tensor_data(tb)).unwrap();
            assert!(
                va.iter().zip(&vb).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{}",
                ta.name
            );
        }
        assert_eq!(
            ga.get_array_as::<i32>("prism.hadamard.sign_values")
                .unwrap()
                .len() as u64,
            p.sign_widths.iter().sum::<u64>()
        );
    }

    #[test]
    fn full_scale_tensor_list_matches_the_documented_counts() {
        let p = spec::profile("bonsai-2-27b").unwrap();
        let t = tensor_list(&p);
        assert_eq!(t.len(), 851);
        assert_eq!(
            t.iter().filter(|t| t.kind == TensorClass::Ternary).count(),
            402
        );
        let (w, _) = writer_for(&p, TernaryType::Pq2_0, 0).unwrap();
        // spec/mapping.md#source-model: PQ2_0 file ≈ 7.21 GB.
        let len = w.file_len().unwrap();
        assert!((7.0e9..7.5e9).contains(&(len as f64)), "{len}");
    }

    #[test]
    fn trits_hit_the_fingerprints() {
        let mut rng = Rng::new(3);
        let (mut zeros, mut first, mut n_first) = (0usize, 0usize, 0usize);
        for b in 0..1000 {
            let t = block_trits(&mut rng, b);
            zeros += t.iter().filter(|&&x| x == 1).count();
            first += t.iter().step_by(4).filter(|&&x| x == 1).count();
            n_first += 32;
            assert_eq!(t.iter().filter(|&&x| x == 1).count(), ZEROS_PER_BLOCK);
        }
        assert_eq!(zeros, 42_000);
        assert!((first as f64 / n_first as f64 - 0.328125).abs() < 1e-9);
        let mut s: Vec<f32> = (0..2001)
            .map(|_| codec::f16_to_f32(block_scale(&mut rng)))
            .collect();
        s.sort_by(f32::total_cmp);
        assert!((s[1000] - 0.0168).abs() < 0.001 && s[0] > 0.0);
    }
}
