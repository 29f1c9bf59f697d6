//! Kernel cases generated from the spec for every class x format, beyond the corpus cases:
//! random code bytes (every 2-bit code including 3, every base-3 byte including the
//! non-canonical ones), special f16 scales (+-0, negative, subnormal, the largest finite, +-Inf,
//! NaN), and varied shapes (mul_mat t = 1..9, several k and n, get_rows several k, hadamard
//! B = 64..1024, row-split objects with and without alignment gaps and at non-zero base
//! offsets, by one vector or by T token-major ones). Plus the randomized mode (`--random N --seed S`), which draws shapes and data the
//! way llama.cpp's test-backend-ops does and names each case after its seed so it replays.

use super::abi::KernelClass;
use super::cases::{plane_geometry, KernelCase};
use super::format::KernelFormat;
use crate::codec::{f32_to_f16, Codec};
use crate::error::Result;
use crate::planes;
use crate::rng::Rng;

/// f16 scales that break careless decoders: zero of both signs, the smallest and largest
/// subnormal, the smallest normal, the largest finite of both signs.
pub const SPECIAL_FINITE_SCALES: [u16; 7] =
    [0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff];
/// Non-finite f16 scales: +-Inf and NaNs (quiet, with a payload, negative).
pub const NONFINITE_SCALES: [u16; 5] = [0x7c00, 0xfc00, 0x7e00, 0x7d55, 0xfe00];

/// Which scales a block may get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scales {
    /// Normal scales of both signs, |d| in [0.01, 0.06].
    Signed,
    /// Mostly normal, with every finite special (zeros, subnormals, the largest finite).
    Finite,
    /// Every special, non-finite included (one per block, cycling).
    All,
}

fn unit(r: &mut Rng) -> f32 {
    (r.next_u64() >> 40) as f32 / (1u64 << 24) as f32
}

fn normal_scale(r: &mut Rng) -> u16 {
    let v = 0.01 + unit(r) * 0.05;
    f32_to_f16(if r.next_u64() & 1 == 1 { -v } else { v })
}

/// `blocks` blocks of random bytes (all codes) with scales drawn by `policy`.
pub fn random_blocks(codec: Codec, blocks: usize, policy: Scales, r: &mut Rng) -> Vec<u8> {
    let bb = codec.block_bytes();
    let so = codec.scale_offset().unwrap_or(0);
    let mut out = vec![0u8; blocks * bb];
    for (i, blk) in out.chunks_exact_mut(bb).enumerate() {
        for b in blk.iter_mut() {
            *b = r.next_u64() as u8;
        }
        let finite: Vec<u16> = SPECIAL_FINITE_SCALES.to_vec();
        let all: Vec<u16> = SPECIAL_FINITE_SCALES
            .iter()
            .chain(&NONFINITE_SCALES)
            .copied()
            .collect();
        let d = match policy {
            Scales::Signed => normal_scale(r),
            Scales::Finite if i % 3 == 2 => finite[(i / 3) % finite.len()],
            Scales::Finite => normal_scale(r),
            Scales::All => all[i % all.len()],
        };
        blk[so..so + 2].copy_from_slice(&d.to_le_bytes());
    }
    out
}

fn activations(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| unit(r) * 2.0 - 1.0).collect()
}

fn empty(name: String, class: KernelClass, format: KernelFormat, recipe: String) -> KernelCase {
    super::cases::base(&name, class, format, Default::default(), &recipe)
}

/// One case of a class from its shape and data policy.
pub struct Shape {
    /// Rows (n), or blocks for dequantize.
    pub n: u64,
    /// Reduction length / row length, or the vector length for hadamard.
    pub k: u64,
    /// Tokens.
    pub t: u64,
    /// Hadamard block, or get_rows id count.
    pub extra: u64,
    /// Planes: bytes before the object.
    pub prefix: usize,
}

/// Builds a case named `name` for `class` / `format` with `shape`, drawing data from `seed`.
pub fn build(
    name: String,
    class: KernelClass,
    format: KernelFormat,
    s: &Shape,
    scales: Scales,
    seed: u64,
) -> Result<KernelCase> {
    let mut r = Rng::new(seed);
    let policy = format!("{scales:?}").to_lowercase();
    let mut c;
    match class {
        KernelClass::Dequantize => {
            let codec = format.codec()?;
            c = empty(
                name,
                class,
                format,
                format!("{} {format} blocks of random bytes, {policy} scales", s.n),
            );
            c.dims.n_blocks = s.n;
            c.weights = random_blocks(codec, s.n as usize, scales, &mut r);
        }
        KernelClass::GetRows => {
            let codec = format.codec()?;
            let bpr = (s.k / codec.block_elems() as u64) as usize;
            c = empty(name, class, format, format!("{} rows of a [{}, {}] {format} matrix of random bytes, {policy} scales (first, last, repeated ids)", s.extra, s.n, s.k));
            c.dims.n = s.n;
            c.dims.k = s.k;
            c.dims.n_ids = s.extra;
            c.weights = random_blocks(codec, s.n as usize * bpr, scales, &mut r);
            // More ids than rows: every row once (last first), then repeats; otherwise the last
            // and first rows, then random ones.
            let ids: Vec<i32> = if s.extra > s.n {
                (0..s.extra).map(|j| ((j + s.n - 1) % s.n) as i32).collect()
            } else if s.n > 1 << 16 {
                // Ids that a 16-bit index wraps: the last row, one just past 65,535, one whose
                // low 16 bits are those of a small row, and row 0.
                let mut ids: Vec<i32> = vec![(s.n - 1) as i32, 65_536, 65_536 + 7, 0];
                while (ids.len() as u64) < s.extra {
                    ids.push((r.next_u64() % s.n) as i32);
                }
                ids.truncate(s.extra as usize);
                ids
            } else {
                let mut ids: Vec<i32> = vec![(s.n - 1) as i32, 0];
                while (ids.len() as u64) < s.extra {
                    ids.push((r.next_u64() % s.n) as i32);
                }
                ids.truncate(s.extra as usize);
                ids
            };
            c.ids = ids;
        }
        KernelClass::MulMatVec | KernelClass::MulMat => {
            let codec = format.codec()?;
            let bpr = (s.k / codec.block_elems() as u64) as usize;
            let t = if class == KernelClass::MulMat { s.t } else { 1 };
            c = empty(name, class, format, format!("[{}, {}] {format} weights of random bytes, {policy} scales, x {t} token(s) of f32 in [-1, 1) token-major", s.n, s.k));
            c.dims.n = s.n;
            c.dims.k = s.k;
            c.dims.t = t;
            c.weights = random_blocks(codec, s.n as usize * bpr, scales, &mut r);
            c.x = activations(&mut r, (s.k * t) as usize);
        }
        KernelClass::MulMatVecPlanes | KernelClass::MulMatPlanes => {
            let codec = format.codec()?;
            let (layout, geom) = plane_geometry(format, s.n, s.k)?;
            let bpr = (s.k / codec.block_elems() as u64) as usize;
            let ggml = random_blocks(codec, s.n as usize * bpr, scales, &mut r);
            let t = if class == KernelClass::MulMatPlanes {
                s.t
            } else {
                1
            };
            c = empty(name, class, format, format!("a [{}, {}] {format} row-split object of random blocks (planes at {}, {}, {} of {} bytes), {policy} scales, placed {} bytes into the buffer (offsets include them), x {t} token(s) of k_pad f32 in [-1, 1) token-major", s.n, s.k, geom.base_offset, geom.high_offset, geom.scale_offset, geom.payload_bytes, s.prefix));
            c.dims.n = s.n;
            c.dims.k = s.k;
            c.dims.t = t;
            c.weights = planes::assemble(&layout, &geom, &ggml)?;
            c.x = activations(&mut r, (geom.k_pad * t) as usize);
            c.obj_prefix = s.prefix;
        }
        KernelClass::HadamardRotate => {
            c = empty(
                name,
                class,
                format,
                format!(
                    "[{}, {}] f32 activations in [-1, 1), B = {}, random +-1 signs",
                    s.t, s.k, s.extra
                ),
            );
            c.dims.k = s.k;
            c.dims.t = s.t;
            c.dims.block = s.extra;
            c.signs = (0..s.k)
                .map(|_| if r.next_u64() & 1 == 1 { 1.0 } else { -1.0 })
                .collect();
            c.x = activations(&mut r, (s.k * s.t) as usize);
        }
    }
    c.compute_reference()?;
    Ok(c)
}

fn shape(n: u64, k: u64, t: u64, extra: u64, prefix: usize) -> Shape {
    Shape {
        n,
        k,
        t,
        extra,
        prefix,
    }
}

/// Rows of the vocabulary-sized get_rows table (Qwen3's vocabulary).
pub const VOCAB_ROWS: u64 = 151_936;

/// Rows of the sparse get_rows table (the largest vocabulary among the target models).
pub const SPARSE_VOCAB_ROWS: u64 = 248_320;

/// The row width of the sparse table: the smallest multiple of 1024 elements whose
/// [`SPARSE_VOCAB_ROWS`]-row table passes 2^31 bytes (PQ2_0: 32,768, 8,704-byte rows, 2.16 GB;
/// PTQ1_0: 39,936, 8,736-byte rows, 2.17 GB). A ternary embedding of a real hidden size (5120)
/// is 0.3 GB, so a row offset past 2^31 needs this width; the bug it shows (a 32-bit row offset)
/// is the same at any width, as for an f16 lm_head.
pub fn sparse_row_width(codec: Codec) -> u64 {
    let (qk, bb) = (codec.block_elems() as u64, codec.block_bytes() as u64);
    let mut k = 1024;
    while SPARSE_VOCAB_ROWS * (k / qk) * bb <= 1 << 31 {
        k += 1024;
    }
    k
}

/// A get_rows case over a [`SPARSE_VOCAB_ROWS`]-row table past 2^31 bytes of which only the
/// gathered rows exist ([`KernelCase::sparse_rows`]): the last row, the row that straddles byte
/// 2^31, the first row past it, a row past 65,535 and row 0. A row offset computed in 32 bits
/// wraps for the rows past 2^31; the table is never materialised (the host tier maps it).
pub fn sparse_vocab_case(name: String, format: KernelFormat, seed: u64) -> Result<KernelCase> {
    let codec = format.codec()?;
    let (n, k) = (SPARSE_VOCAB_ROWS, sparse_row_width(codec));
    let rb = (k / codec.block_elems() as u64) * codec.block_bytes() as u64;
    let straddle = (1u64 << 31) / rb;
    let ids = [n - 1, straddle, straddle + 1, 65_543, 0];
    let mut c = empty(name, KernelClass::GetRows, format, format!("5 rows (the last, the ones at and past byte 2^31 = row {straddle} of {rb} bytes, 65,543, 0) of a sparse [{n}, {k}] {format} table of {} bytes: only those rows are real (random bytes, signed scales)", n * rb));
    c.dims.n = n;
    c.dims.k = k;
    c.dims.n_ids = ids.len() as u64;
    c.ids = ids.iter().map(|&r| r as i32).collect();
    let mut rows = ids.to_vec();
    rows.sort_unstable();
    rows.dedup();
    let mut r = Rng::new(seed);
    let bpr = (k / codec.block_elems() as u64) as usize;
    for _ in &rows {
        c.weights
            .extend(random_blocks(codec, bpr, Scales::Signed, &mut r));
    }
    c.sparse_rows = rows;
    c.compute_reference()?;
    Ok(c)
}

/// The generated matrix for one class and format (deterministic).
pub fn matrix(class: KernelClass, format: KernelFormat) -> Result<Vec<KernelCase>> {
    use KernelClass::*;
    let f = format.name().to_lowercase();
    let cname = class.name();
    let mut v = Vec::new();
    let seed0 = 0x6e74_0000u64
        + (class as u64) * 0x1000
        + format.name().bytes().map(|b| b as u64).sum::<u64>();
    let mut add = |tag: &str, s: Shape, sc: Scales, i: u64| -> Result<()> {
        v.push(build(
            format!("g_{cname}_{f}_{tag}"),
            class,
            format,
            &s,
            sc,
            seed0 + i,
        )?);
        Ok(())
    };
    match class {
        Dequantize => {
            add("random_codes", shape(24, 0, 0, 0, 0), Scales::Signed, 1)?;
            add("special_scales", shape(24, 0, 0, 0, 0), Scales::All, 2)?;
            add("one_block", shape(1, 0, 0, 0, 0), Scales::Finite, 3)?;
            // More blocks than a capped grid-stride launch covers in one sweep.
            add("300_blocks", shape(300, 0, 0, 0, 0), Scales::Signed, 4)?;
            // An odd block count > 1 (a loop over pairs of blocks that rounds down drops one).
            add("7_blocks", shape(7, 0, 0, 0, 0), Scales::Finite, 5)?;
        }
        GetRows => {
            let qk = format.codec()?.block_elems() as u64;
            // 13 one-block rows: one per special scale, every row gathered.
            add(&format!("k{qk}"), shape(13, qk, 0, 15, 0), Scales::All, 1)?;
            add(
                &format!("k{}", 5 * qk),
                shape(9, 5 * qk, 0, 7, 0),
                Scales::Finite,
                2,
            )?;
            add(
                &format!("k{}", 8 * qk),
                shape(3, 8 * qk, 0, 4, 0),
                Scales::Signed,
                3,
            )?;
            // A model row (k = 5120, the Bonsai hidden size).
            add("k5120", shape(3, 5120, 0, 3, 0), Scales::Signed, 4)?;
            // A vocabulary-sized table (Qwen3's 151,936 rows): ids past 65,535 (a u16 id or an
            // int16 index wraps) gathered from one-block rows.
            add(
                "vocab151936",
                shape(VOCAB_ROWS, qk, 0, 5, 0),
                Scales::Signed,
                5,
            )?;
            // A table past 2^31 bytes (248,320 rows), sparse: rows past byte 2^31 gathered.
            v.push(sparse_vocab_case(
                format!("g_{cname}_{f}_vocab248320_past_2_31"),
                format,
                seed0 + 6,
            )?);
        }
        MulMatVec => {
            let qk = format.codec()?.block_elems() as u64;
            add("n1", shape(1, qk, 1, 0, 0), Scales::Signed, 1)?;
            add("n37_k1024", shape(37, 1024, 1, 0, 0), Scales::Finite, 2)?;
            add("n70_k384", shape(70, 384, 1, 0, 0), Scales::Signed, 3)?;
            add("special_scales", shape(12, 2 * qk, 1, 0, 0), Scales::All, 4)?;
            // A model-sized row (k = 5120 > any fixed activation cache of 2048 floats) and more
            // rows than a capped grid of 32 blocks x 4 rows covers.
            add("n130_k5120", shape(130, 5120, 1, 0, 0), Scales::Signed, 5)?;
            // Real FFN widths: k = 12288 and 17408 (ffn_down), past an 8192-float cache; row
            // counts that are not a multiple of the 4-row block.
            add("n6_k12288", shape(6, 12288, 1, 0, 0), Scales::Signed, 6)?;
            add("n5_k17408", shape(5, 17408, 1, 0, 0), Scales::Finite, 7)?;
            // Many one-block rows: some sums cancel, where an undeclared rounding of the
            // activations outgrows both the bound and a narrow output's rounding.
            add(
                &format!("n256_k{qk}"),
                shape(256, qk, 1, 0, 0),
                Scales::Signed,
                8,
            )?;
        }
        MulMatVecPlanes => {
            add("n13_k640_gaps", shape(13, 640, 1, 0, 0), Scales::Signed, 1)?;
            add("n8_k1024_at48", shape(8, 1024, 1, 0, 48), Scales::Finite, 2)?;
            add(
                "n33_k384_at4112",
                shape(33, 384, 1, 0, 4112),
                Scales::Signed,
                3,
            )?;
            add(
                "special_scales_at256",
                shape(12, 256, 1, 0, 256),
                Scales::All,
                4,
            )?;
            add(
                "n130_k5120_at64",
                shape(130, 5120, 1, 0, 64),
                Scales::Signed,
                5,
            )?;
        }
        MulMatPlanes => {
            // T = 1 (what mul_mat_vec_planes cases show), then token counts where a token
            // stride, a per-token x offset or the token-major output shows.
            add(
                "n13_k640_t1_gaps",
                shape(13, 640, 1, 0, 0),
                Scales::Signed,
                1,
            )?;
            add(
                "n13_k640_t2_gaps",
                shape(13, 640, 2, 0, 0),
                Scales::Signed,
                2,
            )?;
            add(
                "n8_k1024_t3_at48",
                shape(8, 1024, 3, 0, 48),
                Scales::Finite,
                3,
            )?;
            add(
                "n33_k384_t7_at4112",
                shape(33, 384, 7, 0, 4112),
                Scales::Signed,
                4,
            )?;
            add(
                "special_scales_t2_at256",
                shape(12, 256, 2, 0, 256),
                Scales::All,
                5,
            )?;
            // A prefill batch past a small register tile of tokens.
            add("n6_k256_t17", shape(6, 256, 17, 0, 0), Scales::Signed, 6)?;
            // Real FFN widths (ffn_down k = 17408, k = 12288), few rows, odd token counts.
            add(
                "n5_k12288_t3_at64",
                shape(5, 12288, 3, 0, 64),
                Scales::Signed,
                7,
            )?;
            add("n3_k17408_t5", shape(3, 17408, 5, 0, 0), Scales::Finite, 8)?;
        }
        MulMat => {
            for t in 1..=9u64 {
                add(&format!("t{t}"), shape(40, 384, t, 0, 0), Scales::Signed, t)?;
            }
            add(
                "n33_k256_t5_finite",
                shape(33, 256, 5, 0, 0),
                Scales::Finite,
                20,
            )?;
            // Prefill batches past any small register tile of tokens.
            for t in [13u64, 17, 33] {
                add(
                    &format!("n40_k256_t{t}"),
                    shape(40, 256, t, 0, 0),
                    Scales::Signed,
                    30 + t,
                )?;
            }
            add(
                "special_scales_t2",
                shape(12, 256, 2, 0, 0),
                Scales::All,
                21,
            )?;
            // Real FFN widths with odd token and row counts.
            add("n5_k12288_t3", shape(5, 12288, 3, 0, 0), Scales::Signed, 22)?;
            add("n3_k17408_t5", shape(3, 17408, 5, 0, 0), Scales::Finite, 23)?;
        }
        HadamardRotate => {
            for (i, b) in [64u64, 128, 256, 512, 1024].into_iter().enumerate() {
                add(
                    &format!("b{b}"),
                    shape(0, 3 * b, 2, b, 0),
                    Scales::Signed,
                    i as u64,
                )?;
            }
            // More tokens than a per-block token cap of 4, and the real FFN width 12288 (more
            // than a 4096-entry sign cache).
            add("b64_t9", shape(0, 192, 9, 64, 0), Scales::Signed, 10)?;
            add(
                "b1024_k12288",
                shape(0, 12288, 1, 1024, 0),
                Scales::Signed,
                11,
            )?;
        }
    }
    Ok(v)
}

/// Whether a fixed case has a real model's scale: a model row width (k >= 5120, the Bonsai
/// hidden size; FFN widths 12288 and 17408) or a vocabulary-sized table (more rows than a
/// 16-bit id reaches). Random shapes stay below these (they must stay cheap in the hundreds), so
/// `--random N` runs these fixed cases too: a bug that only a model shape shows (an 8192-float x
/// cache, u16 row ids) is caught in every mode.
pub fn is_model_scale(c: &KernelCase) -> bool {
    c.dims.k >= 5120 || c.dims.n > 1 << 16
}

/// The fixed cases of [`matrix`] at a real model's scale ([`is_model_scale`]), which every
/// `--random` run includes.
pub fn model_scale(class: KernelClass, format: KernelFormat) -> Result<Vec<KernelCase>> {
    Ok(matrix(class, format)?
        .into_iter()
        .filter(is_model_scale)
        .collect())
}

/// `n` random cases of `class` / `format` from `seed`, named `r<seed>_<i>_...` so a failure
/// names what to replay.
pub fn random(
    class: KernelClass,
    format: KernelFormat,
    n: usize,
    seed: u64,
) -> Result<Vec<KernelCase>> {
    (0..n).map(|i| random_one(class, format, i, seed)).collect()
}

/// The name of random case `i` (known without drawing it, so `--case` selects before any
/// case is built).
pub fn random_name(class: KernelClass, format: KernelFormat, i: usize, seed: u64) -> String {
    format!(
        "r{seed}_{i}_{}_{}",
        class.name(),
        format.name().to_lowercase()
    )
}

/// Random case `i` of `class` / `format` from `seed` (the same case [`random`] gives at `i`).
pub fn random_one(
    class: KernelClass,
    format: KernelFormat,
    i: usize,
    seed: u64,
) -> Result<KernelCase> {
    use KernelClass::*;
    let cs = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add((i as u64) << 20)
        .wrapping_add(class as u64 * 7919 + format.name().len() as u64);
    let mut r = Rng::new(cs);
    let mut pick = |lo: u64, hi: u64| lo + r.next_u64() % (hi - lo + 1);
    let qk = match class {
        HadamardRotate => 1,
        _ => format.codec()?.block_elems() as u64,
    };
    let scales = match pick(0, 9) {
        0..=5 => Scales::Signed,
        6..=8 => Scales::Finite,
        _ => Scales::All,
    };
    let s = match class {
        Dequantize => shape(pick(1, 300), 0, 0, 0, 0),
        GetRows => {
            let n = pick(1, 24);
            shape(n, qk * pick(1, 40), 0, pick(1, 12), 0)
        }
        MulMatVec => shape(pick(1, 140), qk * pick(1, 40), 1, 0, 0),
        MulMatVecPlanes => {
            let prefix = match pick(0, 2) {
                0 => 0,
                1 => 16 * pick(1, 64) as usize,
                _ => 4096 + 16 * pick(0, 255) as usize,
            };
            shape(pick(1, 140), 128 * pick(1, 40), 1, 0, prefix)
        }
        MulMat => shape(pick(1, 70), qk * pick(1, 6), pick(1, 40), 0, 0),
        MulMatPlanes => {
            let prefix = match pick(0, 2) {
                0 => 0,
                1 => 16 * pick(1, 64) as usize,
                _ => 4096 + 16 * pick(0, 255) as usize,
            };
            shape(pick(1, 70), 128 * pick(1, 12), pick(1, 24), 0, prefix)
        }
        HadamardRotate => {
            let b = 1u64 << pick(6, 10);
            shape(0, b * pick(1, 12), pick(1, 9), b, 0)
        }
    };
    build(
        random_name(class, format, i, seed),
        class,
        format,
        &s,
        scales,
        cs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(c: &KernelCase) -> [bool; 4] {
        let mut seen = [false; 4];
        for b in &c.weights {
            for s in 0..4 {
                seen[((b >> (2 * s)) & 3) as usize] = true;
            }
        }
        seen
    }

    #[test]
    fn every_class_and_format_gets_code_3_specials_and_varied_shapes() {
        for class in KernelClass::ALL {
            for f in crate::cuda::format::class_formats(class).unwrap() {
                let cases = matrix(class, f).unwrap();
                assert!(cases.len() >= 3, "{} {f}", class.name());
                if class != KernelClass::HadamardRotate {
                    assert!(
                        cases.iter().any(|c| codes(c)[3]),
                        "{} {f}: code 3",
                        class.name()
                    );
                    // Some scale is non-finite, some is subnormal.
                    let any_nan = cases.iter().any(|c| c.reference.iter().any(|v| v.is_nan()));
                    assert!(any_nan, "{} {f}: a NaN/Inf scale", class.name());
                }
            }
        }
        let mm = matrix(
            KernelClass::MulMat,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap();
        let ts: Vec<u64> = mm.iter().map(|c| c.dims.t).collect();
        assert!((1..=9).all(|t| ts.contains(&t)));
        assert!([13, 17, 33].iter().all(|t| ts.contains(t)));
        let had = matrix(
            KernelClass::HadamardRotate,
            crate::cuda::format::KernelFormat::F32,
        )
        .unwrap();
        let bs: Vec<u64> = had.iter().map(|c| c.dims.block).collect();
        assert!([64, 128, 256, 512, 1024].iter().all(|b| bs.contains(b)));
        assert!(had.iter().any(|c| c.dims.t > 4) && had.iter().any(|c| c.dims.k >= 12288));
        let mmv = matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PTQ1_0,
        )
        .unwrap();
        assert!(mmv.iter().any(|c| c.dims.k > 2048 && c.dims.n > 128));
        let pl = matrix(
            KernelClass::MulMatVecPlanes,
            crate::cuda::format::KernelFormat::Planes(crate::codec::TernaryType::Ptq1_0),
        )
        .unwrap();
        assert!(pl.iter().any(|c| c.obj_prefix > 4096));
        // mul_mat_planes: T = 1, an odd T, a prefill T, and the FFN widths with few rows.
        let mp = matrix(
            KernelClass::MulMatPlanes,
            crate::cuda::format::KernelFormat::Planes(crate::codec::TernaryType::Pq2_0),
        )
        .unwrap();
        let ts: Vec<u64> = mp.iter().map(|c| c.dims.t).collect();
        assert!([1, 3, 7, 17].iter().all(|t| ts.contains(t)), "{ts:?}");
        assert!(mp.iter().any(|c| c.dims.k == 17408 && c.dims.n <= 8));
        assert!(mp.iter().all(|c| c.x.len() as u64 == c.dims.t * c.dims.k));
    }

    #[test]
    fn generation_is_deterministic_and_random_cases_replay() {
        let a = random(
            KernelClass::MulMat,
            crate::cuda::format::KernelFormat::PTQ1_0,
            5,
            7,
        )
        .unwrap();
        let b = random(
            KernelClass::MulMat,
            crate::cuda::format::KernelFormat::PTQ1_0,
            5,
            7,
        )
        .unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.weights, y.weights);
            assert_eq!(x.x, y.x);
            assert_eq!(x.name, y.name);
        }
        let c = random(
            KernelClass::MulMat,
            crate::cuda::format::KernelFormat::PTQ1_0,
            5,
            8,
        )
        .unwrap();
        assert_ne!(a[0].weights, c[0].weights);
    }

    /// Random shapes stay below a model's (so `--random N` must carry the model-scale fixed
    /// cases): no random case reaches an FFN width (hadamard aside) or a 65,536-row table, while every
    /// class but dequantize (no k) has model-scale fixed cases, and for mat-vec, mat-mul and
    /// get_rows those include the FFN width 12288 or the vocabulary table.
    #[test]
    fn model_scale_cases_are_the_fixed_ones_random_shapes_never_reach() {
        for class in KernelClass::ALL {
            for f in crate::cuda::format::class_formats(class).unwrap() {
                let m = model_scale(class, f).unwrap();
                assert!(m.iter().all(is_model_scale));
                let all = matrix(class, f).unwrap();
                assert!(
                    m.len() < all.len(),
                    "{} {f}: the whole matrix",
                    class.name()
                );
                if class != KernelClass::Dequantize {
                    assert!(!m.is_empty(), "{} {f}: no model-scale case", class.name());
                }
                if matches!(
                    class,
                    KernelClass::MulMatVec | KernelClass::MulMat | KernelClass::MulMatPlanes
                ) {
                    assert!(m.iter().any(|c| c.dims.k == 12288), "{} {f}", class.name());
                }
                if class == KernelClass::GetRows {
                    assert!(m.iter().any(|c| c.ids.iter().any(|&i| i > 65_535)));
                }
                for i in 0..40 {
                    let r = random_one(class, f, i, 11).unwrap();
                    let wide = class != KernelClass::HadamardRotate && r.dims.k >= 12288;
                    assert!(!wide && r.dims.n <= 1 << 16, "{}", r.name);
                }
            }
        }
    }

    /// The sparse table case of each get_rows format: past 2^31 bytes, with ids past 65,535 and
    /// rows whose byte offset passes 2^31 (and one straddling it), yet only the gathered rows
    /// held (a few KiB per row, never the table); deterministic; its launch passes the table as
    /// a sparse input of the full length with one run per held row.
    #[test]
    fn the_sparse_vocabulary_table_passes_2_31_bytes_holding_only_its_gathered_rows() {
        for f in crate::cuda::format::class_formats(KernelClass::GetRows).unwrap() {
            let m = matrix(KernelClass::GetRows, f).unwrap();
            let c = m.iter().find(|c| !c.sparse_rows.is_empty()).unwrap();
            let rb = c.row_bytes().unwrap() as u64;
            assert_eq!(c.dims.n, SPARSE_VOCAB_ROWS);
            assert!(c.dims.n * rb > 1 << 31, "{f}: {} bytes", c.dims.n * rb);
            assert!(c.ids.iter().any(|&i| i > 65_535));
            assert!(c.ids.iter().any(|&i| i as u64 * rb > 1 << 31));
            assert!(c
                .ids
                .iter()
                .any(|&i| (i as u64 * rb) < 1 << 31 && (i as u64 + 1) * rb > 1 << 31));
            assert_eq!(c.weights.len() as u64, c.sparse_rows.len() as u64 * rb);
            assert_eq!(c.reference.len() as u64, c.dims.n_ids * c.dims.k);
            // A smaller width would not pass 2^31 bytes.
            let codec = f.codec().unwrap();
            let k = sparse_row_width(codec) - 1024;
            assert!(
                SPARSE_VOCAB_ROWS * (k / codec.block_elems() as u64) * codec.block_bytes() as u64
                    <= 1 << 31
            );
            // Deterministic: the same bytes and reference again.
            let again = matrix(KernelClass::GetRows, f).unwrap();
            let d = again.iter().find(|x| x.name == c.name).unwrap();
            assert_eq!(
                (&d.weights, &d.ids, &d.reference),
                (&c.weights, &c.ids, &c.reference)
            );
            assert!(is_model_scale(c));
            let l = c.launch().unwrap();
            let Some(crate::cuda::abi::LaunchArg::Sparse { len, runs, .. }) = l.args.first() else {
                panic!(
                    "{f}: the table is not a sparse input: {:?}",
                    l.args.first().map(|_| ())
                );
            };
            assert_eq!(*len as u64, c.dims.n * rb);
            let offs: Vec<u64> = runs.iter().map(|(o, _)| *o as u64).collect();
            let want: Vec<u64> = c.sparse_rows.iter().map(|r| r * rb).collect();
            assert_eq!(offs, want);
            assert!(runs.iter().all(|(_, b)| b.len() as u64 == rb));
        }
    }
}
