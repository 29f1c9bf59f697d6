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
use std::io::Write;
use std::path::Path;

/// The ternary GGUF type a synthetic model uses: the one table-derived name
/// ([`crate::codec::TernaryType`]).
pub use crate::codec::TernaryType;

/// Zero trits per 128-element block (42/128 = 0.328125, within 0.0004 of the real 0.3278).
#[cfg(any(test, feature = "internals"))]
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
#[cfg(any(test, feature = "internals"))]
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
#[cfg(any(test, feature = "internals"))]
pub fn block_scale(rng: &mut Rng) -> u16 {
    codec::f32_to_f16((SCALE_MEDIAN * (0.35 * normal(rng)).exp()) as f32)
}

/// Encodes one block of trits with scale bits in the given type.
#[cfg(any(test, feature = "internals"))]
pub fn encode_block(ty: TernaryType, trits: &[u8; 128], d: u16, out: &mut Vec<u8>) {
    match ty {
        TernaryType::Pq2_0 => {
            out.extend_from_slice(&pq2::encode_block::<128, { pq2::PQ2_0_BYTES }>(trits, d))
        }
        TernaryType::Ptq1_0 => out.extend_from_slice(&ptq1::encode_block(trits, d)),
    }
}

/// Draws one block takes from its tensor's stream: two for the scale (Box–Muller), then 32 per
/// position class (one per zero placed, one per sign of the rest) — fixed, so block `b` starts
/// at draw `130·b` and any range of blocks can be generated on its own.
pub const DRAWS_PER_BLOCK: u64 = 130;

/// Blocks per parallel job (about 1 MiB of PQ2_0 output).
const JOB_BLOCKS: u64 = 1 << 15;

/// [`block_scale`] from its two draws.
pub(super) fn scale_from_draws(d0: u64, d1: u64) -> u16 {
    let unit = |x: u64| (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let u1 = 1.0 - unit(d0);
    let u2 = unit(d1);
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    codec::f32_to_f16((SCALE_MEDIAN * (0.35 * z).exp()) as f32)
}

/// Spreads bit `k` of the low 32 bits of `x` to bit `2k` (the "part 1 by 1" of Morton codes).
/// Takes a u64 so the lane encoder ([`super::lanes`]) keeps every step in the lane width.
#[inline(always)]
pub(super) fn part1by1(mut x: u64) -> u64 {
    x &= 0xffff_ffff;
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

/// One position class of [`block_trits`] from its 32 draws, as 2-bit fields: field `p` is the
/// trit of element `4p + c`.
///
/// [`block_trits`] swaps position indices (a partial Fisher–Yates over `pos`) and then stores
/// trit `val[i]` at `pos[i]`; the same result is `val` with the same swaps applied in reverse
/// order (`pos` is the product of the transpositions, and its inverse is the product reversed).
/// Here `val` lives in one register, 32 fields of 2 bits, and the divisors are constants.
#[inline(always)]
fn class_fields(d: &[u64; 32], eleven: bool) -> u64 {
    let mut signs = 0u32;
    for (k, x) in d.iter().enumerate() {
        signs |= ((x & 1) as u32) << k;
    }
    let zeros = if eleven { 11 } else { 10 };
    let low = (1u64 << (2 * zeros)) - 1;
    let mut v = (part1by1(u64::from(signs)) << 1 & !low) | (0x5555_5555_5555_5555 & low);
    macro_rules! swap {
        ($($i:literal)*) => {$(
            let j = $i + d[$i] % (32 - $i);
            let x = ((v >> (2 * $i)) ^ (v >> (2 * j))) & 3;
            v ^= (x << (2 * $i)) | (x << (2 * j));
        )*};
    }
    if eleven {
        swap!(10);
    }
    swap!(9 8 7 6 5 4 3 2 1 0);
    v
}

/// 8 fields of 2 bits (the low 16 bits of `x`) spread to one field per byte, little-endian.
#[inline(always)]
pub(super) fn spread8(x: u64) -> u64 {
    let x = x & 0xffff;
    let x = (x | x << 24) & 0x0000_00ff_0000_00ff;
    let x = (x | x << 12) & 0x000f_000f_000f_000f;
    (x | x << 6) & 0x0303_0303_0303_0303
}

/// Encodes block `b` (its 130 draws `d`) in `ty`: the same bytes as [`block_scale`],
/// [`block_trits`] and [`encode_block`] in sequence.
#[inline(always)]
fn encode_from_draws(ty: TernaryType, d: &[u64], b: u64, out: &mut Vec<u8>) {
    let scale = scale_from_draws(d[0], d[1]);
    let mut q = [0u64; 4];
    // Draws 2.. are the four classes' 32 draws each.
    let (classes, _) = d[2..].as_chunks::<32>();
    for (c, (qc, draws)) in q.iter_mut().zip(classes).enumerate() {
        *qc = class_fields(draws, (c as u64 + b) % 2 == 0);
    }
    encode_fields(ty, &q, scale, out);
}

/// Encodes one block from its four classes' fields (field `p` of `q[c]` is the trit of element
/// `4p + c`) and its scale bits.
#[inline(always)]
pub(super) fn encode_fields(ty: TernaryType, q: &[u64; 4], scale: u16, out: &mut Vec<u8>) {
    match ty {
        TernaryType::Pq2_0 => {
            // Element 4p + c is bits 2c of byte 2 + p (spec/codecs.md, PQ2_0).
            let mut blk = [0u8; pq2::PQ2_0_BYTES];
            blk[..2].copy_from_slice(&scale.to_le_bytes());
            for (h, w) in blk[2..].chunks_exact_mut(8).enumerate() {
                let f = |c: usize| spread8(q[c] >> (16 * h));
                let word = f(0) | f(1) << 2 | f(2) << 4 | f(3) << 6;
                w.copy_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(&blk);
        }
        TernaryType::Ptq1_0 => {
            let t: [u8; 128] = std::array::from_fn(|e| (q[e % 4] >> (2 * (e / 4))) as u8 & 3);
            out.extend_from_slice(&ptq1::encode_block(&t, scale));
        }
    }
}

/// Appends blocks `first..first + n` of the ternary tensor whose stream starts at `stream`
/// (compiled a second time with BMI2, whose one-instruction variable shifts halve the cost of
/// the field swaps; the same code, so the same bytes).
pub(super) fn encode_blocks(ty: TernaryType, stream: &Rng, first: u64, n: u64, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has the feature the function is compiled for.
        return unsafe { encode_blocks_bmi2(ty, stream, first, n, out) };
    }
    encode_blocks_body(ty, stream, first, n, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn encode_blocks_bmi2(ty: TernaryType, stream: &Rng, first: u64, n: u64, out: &mut Vec<u8>) {
    encode_blocks_body(ty, stream, first, n, out)
}

#[inline(always)]
fn encode_blocks_body(ty: TernaryType, stream: &Rng, first: u64, n: u64, out: &mut Vec<u8>) {
    const BATCH: usize = 16;
    let per = DRAWS_PER_BLOCK as usize;
    let mut rng = stream.clone();
    rng.advance(first * DRAWS_PER_BLOCK);
    let mut draws = [0u64; BATCH * DRAWS_PER_BLOCK as usize];
    out.reserve(n as usize * ty.block_bytes());
    let mut b = first;
    while b < first + n {
        let k = (first + n - b).min(BATCH as u64) as usize;
        rng.fill_u64(&mut draws[..k * per]);
        for (j, d) in draws[..k * per].chunks_exact(per).enumerate() {
            encode_from_draws(ty, d, b + j as u64, out);
        }
        b += k as u64;
    }
}

/// One parallel job: a range of a ternary tensor's blocks, or a whole dense tensor.
struct Job {
    tensor: usize,
    first: u64,
    blocks: u64,
}

/// The jobs of a model in file order (every tensor has at least one; a ternary tensor is split
/// into jobs of at most `job_blocks` blocks).
fn jobs_of(tensors: &[SynthTensor], job_blocks: u64) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (i, t) in tensors.iter().enumerate() {
        if t.kind == TensorClass::Ternary {
            let blocks = t.ne.iter().product::<u64>() / 128;
            let mut first = 0;
            loop {
                let n = (blocks - first).min(job_blocks);
                jobs.push(Job {
                    tensor: i,
                    first,
                    blocks: n,
                });
                first += n;
                if first == blocks {
                    break;
                }
            }
        } else {
            jobs.push(Job {
                tensor: i,
                first: 0,
                blocks: 0,
            });
        }
    }
    jobs
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

fn type_id_for(t: &SynthTensor, ty: TernaryType) -> crate::Result<u32> {
    match t.kind {
        TensorClass::Ternary => Ok(ty.type_id()),
        dense => spec::get()
            .ggml_type_named(dense.as_str())
            .map(|g| g.id)
            .ok_or_else(|| {
                crate::Error::new(
                    crate::ErrorClass::InternalInvariant,
                    t.name.clone(),
                    format!(
                        "spec/mapping.json gives type {} that spec/ggml_types.json lacks",
                        dense.as_str()
                    ),
                )
            }),
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
#[cfg(any(test, feature = "internals"))]
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
        w.tensor(&t.name, &t.ne, type_id_for(t, ty)?)?;
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

/// Streams a full (`None`) or reduced model into `out`, generated on every core
/// ([`crate::codec::parallel::default_threads`]); the bytes do not depend on the thread count.
pub fn write_model_layers<W: Write>(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
    out: W,
    progress: impl FnMut(u64),
) -> Result<W> {
    let threads = crate::codec::parallel::default_threads();
    write_model_threads(p, ty, seed, layers, out, threads, progress)
}

/// [`write_model_layers`] on `threads` generator threads (`<= 1`: all on the calling thread).
pub fn write_model_threads<W: Write>(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
    out: W,
    threads: usize,
    progress: impl FnMut(u64),
) -> Result<W> {
    let plan = Plan {
        threads,
        job_blocks: JOB_BLOCKS,
        skew: 0,
    };
    write_model_plan(p, ty, seed, layers, out, plan, progress)
}

/// How a model is generated: the tests vary the job size (to split small tensors over several
/// jobs) and, as a negative control, shift every ternary stream by `skew` draws.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// Generator threads.
    pub threads: usize,
    /// Blocks per parallel job.
    pub job_blocks: u64,
    /// Draws skipped at the start of every ternary tensor's stream (0 in the product).
    pub skew: u64,
}

/// [`write_model_threads`] under an explicit [`Plan`].
pub(crate) fn write_model_plan<W: Write>(
    p: &ModelProfile,
    ty: TernaryType,
    seed: u64,
    layers: Option<&[u64]>,
    out: W,
    plan: Plan,
    mut progress: impl FnMut(u64),
) -> Result<W> {
    let (w, tensors) = writer_for_layers(p, ty, seed, layers)?;
    let streams: Vec<Rng> = tensors
        .iter()
        .map(|t| {
            let mut r = Rng::for_name(seed, &t.name);
            r.advance(plan.skew);
            r
        })
        .collect();
    let jobs = jobs_of(&tensors, plan.job_blocks.max(1));
    let mut s = w.stream(out)?;
    super::par::ordered(
        jobs.len(),
        plan.threads,
        |i, buf| {
            let j = &jobs[i];
            let t = &tensors[j.tensor];
            if t.kind == TensorClass::Ternary {
                let path = super::lanes::Path::best();
                super::lanes::encode_blocks_on(
                    path,
                    ty,
                    &streams[j.tensor],
                    j.first,
                    j.blocks,
                    buf,
                );
            } else {
                buf.extend_from_slice(&dense_bytes(t, seed));
            }
            Ok(())
        },
        |i, bytes| {
            if jobs[i].first == 0 {
                s.begin_tensor()?;
            }
            s.write_part(bytes)?;
            progress(bytes.len() as u64);
            Ok(())
        },
    )?;
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
    fn the_parallel_encoder_equals_the_sequential_definition() {
        // block_scale + block_trits + encode_block (the sequential definition) against
        // encode_blocks started at arbitrary blocks of the stream, both formats.
        for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
            let stream = Rng::for_name(5, "blk.0.ffn_up.weight");
            let mut rng = stream.clone();
            let mut want = Vec::new();
            for b in 0..600 {
                let d = block_scale(&mut rng);
                encode_block(ty, &block_trits(&mut rng, b), d, &mut want);
            }
            let bb = ty.block_bytes();
            for (first, n) in [(0u64, 600u64), (1, 17), (333, 267), (599, 1)] {
                let mut got = Vec::new();
                encode_blocks(ty, &stream, first, n, &mut got);
                let at = first as usize * bb;
                assert!(got == want[at..at + n as usize * bb], "{ty:?} {first}+{n}");
            }
            // Negative control: starting one block late differs.
            let mut late = Vec::new();
            encode_blocks(ty, &stream, 1, 1, &mut late);
            assert_ne!(late, want[..bb]);
        }
    }

    #[test]
    fn the_bytes_do_not_depend_on_threads_or_job_size() {
        let p = spec::profile("bonsai-nano").unwrap();
        for ty in [TernaryType::Pq2_0, TernaryType::Ptq1_0] {
            let want = model_bytes(&p, ty, 3).unwrap();
            let (_, tensors) = writer_for(&p, ty, 3).unwrap();
            let most = tensors
                .iter()
                .filter(|t| t.kind == TensorClass::Ternary)
                .map(|t| t.ne.iter().product::<u64>() / 128)
                .max()
                .unwrap();
            // Jobs of 7 blocks split every ternary tensor of more than 7 blocks, the largest
            // into many jobs (with a short last one); the default size is covered too.
            assert!(most > 3 * 7, "largest ternary tensor has {most} blocks");
            for job_blocks in [7, JOB_BLOCKS] {
                assert!(
                    jobs_of(&tensors, job_blocks).len() > tensors.len() || job_blocks == JOB_BLOCKS
                );
                for threads in [1, 2, 7] {
                    let plan = Plan {
                        threads,
                        job_blocks,
                        skew: 0,
                    };
                    let got = write_model_plan(&p, ty, 3, None, Vec::new(), plan, |_| {}).unwrap();
                    assert!(
                        got == want,
                        "{ty:?} {threads} threads, jobs of {job_blocks}"
                    );
                }
            }
            // Negative control: a skewed stream is caught by the same comparison.
            let plan = Plan {
                threads: 2,
                job_blocks: 7,
                skew: 1,
            };
            let got = write_model_plan(&p, ty, 3, None, Vec::new(), plan, |_| {}).unwrap();
            assert!(got.len() == want.len() && got != want);
        }
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
