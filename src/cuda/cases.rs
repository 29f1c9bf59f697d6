//! Kernel cases: deterministic inputs, the f64 reference computed from them with the crate's
//! own decoders, geometry and Hadamard code (never from a kernel), the `.kcase` bundle that
//! stores a case in the corpus, and the launch of a case for a class.

use super::abi::KernelClass;
#[cfg(any(test, feature = "internals"))]
use super::abi::Launch;
use super::format::KernelFormat;
use crate::codec::{f32_to_f16, Codec, TernaryType};
use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{row_split_geometry, RowSplitGeometry};
use crate::planes::{self, BlockLayout};
use crate::rng::Bytes;

/// Shapes of a case (unused ones are 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dims {
    /// Output rows (weight rows).
    pub n: u64,
    /// Elements per weight row (the reduction length).
    pub k: u64,
    /// Tokens (activation columns).
    pub t: u64,
    /// Rows gathered by `get_rows`.
    pub n_ids: u64,
    /// Hadamard block size.
    pub block: u64,
    /// Hadamard blocks per vector.
    pub n_blocks: u64,
}

/// One kernel case with its inputs and its reference.
#[derive(Clone, Debug)]
pub struct KernelCase {
    /// Case name, unique within its class.
    pub name: String,
    /// The kernel class the case is for.
    pub class: KernelClass,
    /// The weight format.
    pub format: KernelFormat,
    /// The case's shapes.
    pub dims: Dims,
    /// ggml blocks, or a `.ninfer` row-split object for `mul_mat_vec_planes` / `mul_mat_planes`.
    pub weights: Vec<u8>,
    /// Row ids of a `get_rows` case.
    pub ids: Vec<i32>,
    /// Activations, token-major.
    pub x: Vec<f32>,
    /// Per-column signs of a Hadamard case.
    pub signs: Vec<f32>,
    /// The f64 reference output (exact classes: the decoded f32 values, widened).
    pub reference: Vec<f64>,
    /// Per output: sum of |term| of its sum (bounded classes; the error bound's scale).
    pub magnitude: Vec<f64>,
    /// Terms per output sum (k, or the Hadamard block).
    pub terms: u64,
    /// How the inputs were generated, in words.
    pub recipe: String,
    /// `mul_mat_vec_planes` / `mul_mat_planes`: bytes of unrelated data before the object in the buffer the kernel
    /// gets (its plane offsets include them), so a kernel that assumes the object starts at the
    /// buffer's first byte fails. 0 for corpus cases.
    pub obj_prefix: usize,
    /// A sparse `get_rows` table (a vocabulary table past 2^31 bytes): the ascending, distinct
    /// row ids whose bytes `weights` holds, concatenated in this order. The other rows of the
    /// `[n, k]` table are never materialised (the host tier maps them as absent pages, the
    /// expectation decodes only the gathered rows). Empty: `weights` is the whole table.
    pub sparse_rows: Vec<u64>,
}

/// The `.ninfer` block layout and row-split geometry of a planes format's `[n, k]` object.
pub(crate) fn plane_geometry(
    format: KernelFormat,
    n: u64,
    k: u64,
) -> Result<(BlockLayout, RowSplitGeometry)> {
    let KernelFormat::Planes(ty) = format else {
        return Err(Error::new(
            ErrorClass::KernelCase,
            "format",
            format!("{format} is not a .ninfer planes format"),
        ));
    };
    let f = ty.format();
    Ok((BlockLayout::for_format(f)?, row_split_geometry(f, n, k)?))
}

fn case_err(c: &KernelCase, detail: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelCase, c.name.clone(), detail)
}

impl KernelCase {
    /// Bytes of one weight row (`k` / block elements x block bytes) of a ggml-block format.
    pub fn row_bytes(&self) -> Result<usize> {
        let c = self.format.codec()?;
        Ok((self.dims.k / c.block_elems() as u64) as usize * c.block_bytes())
    }

    /// The bytes of weight row `r` of a ggml-block case, dense or sparse; `None` for a row past
    /// the table or one a sparse table does not hold.
    pub fn table_row(&self, r: u64) -> Option<&[u8]> {
        let rb = self.row_bytes().ok()?;
        let i = if self.sparse_rows.is_empty() {
            usize::try_from(r).ok().filter(|_| r < self.dims.n)?
        } else {
            self.sparse_rows.binary_search(&r).ok()?
        };
        self.weights
            .get(i.checked_mul(rb)?..i.checked_add(1)?.checked_mul(rb)?)
    }

    /// Checks a sparse table: a `get_rows` case, rows ascending and distinct inside the table,
    /// `weights` exactly those rows, every gathered id one of them.
    fn check_sparse(&self) -> Result<()> {
        if self.class != KernelClass::GetRows {
            return Err(case_err(
                self,
                "only a get_rows case may have a sparse table",
            ));
        }
        if let Some(w) = self.sparse_rows.windows(2).find(|w| w[0] >= w[1]) {
            return Err(case_err(
                self,
                format!(
                    "sparse rows must ascend without repeats ({} then {})",
                    w[0], w[1]
                ),
            ));
        }
        if let Some(r) = self.sparse_rows.last().filter(|&&r| r >= self.dims.n) {
            return Err(case_err(
                self,
                format!("sparse row {r} outside the table's {} rows", self.dims.n),
            ));
        }
        let want = (self.sparse_rows.len() as u64).saturating_mul(self.row_bytes()? as u64);
        if self.weights.len() as u64 != want {
            return Err(case_err(
                self,
                format!(
                    "weights hold {} bytes, the {} sparse rows need {want}",
                    self.weights.len(),
                    self.sparse_rows.len()
                ),
            ));
        }
        if let Some(id) = self.ids.iter().find(|&&id| {
            u64::try_from(id).map_or(true, |r| self.sparse_rows.binary_search(&r).is_err())
        }) {
            return Err(case_err(
                self,
                format!("id {id} gathers a row the sparse table does not hold"),
            ));
        }
        Ok(())
    }

    /// Checks that the inputs have the sizes the dims and the class imply.
    fn check_shapes(&self) -> Result<()> {
        let d = self.dims;
        if !self.sparse_rows.is_empty() {
            self.check_sparse()?;
        }
        let want_w: Option<u64> = match self.class {
            KernelClass::HadamardRotate => None,
            KernelClass::MulMatVecPlanes | KernelClass::MulMatPlanes => {
                Some(plane_geometry(self.format, d.n, d.k)?.1.payload_bytes)
            }
            KernelClass::Dequantize => {
                let c = self.format.codec()?;
                Some(d.n_blocks * c.block_bytes() as u64)
            }
            _ => {
                let c = self.format.codec()?;
                let qk = c.block_elems() as u64;
                if d.n == 0 || d.k == 0 || d.k % qk != 0 {
                    return Err(case_err(
                        self,
                        format!(
                            "n {} and k {} must be positive, k a multiple of {qk}",
                            d.n, d.k
                        ),
                    ));
                }
                Some(d.n * (d.k / qk) * c.block_bytes() as u64)
            }
        };
        if let Some(w) = want_w.filter(|_| self.sparse_rows.is_empty()) {
            if self.weights.len() as u64 != w {
                return Err(case_err(
                    self,
                    format!(
                        "weights hold {} bytes, the dims need {w}",
                        self.weights.len()
                    ),
                ));
            }
        }
        if self.class == KernelClass::GetRows && self.ids.len() as u64 != d.n_ids {
            return Err(case_err(
                self,
                format!("{} ids, dims say {}", self.ids.len(), d.n_ids),
            ));
        }
        if matches!(self.class, KernelClass::MulMatVec | KernelClass::MulMat)
            && self.x.len() as u64 != d.k * d.t.max(1)
        {
            return Err(case_err(
                self,
                format!(
                    "x has {} floats, dims need {}",
                    self.x.len(),
                    d.k * d.t.max(1)
                ),
            ));
        }
        Ok(())
    }

    /// Computes `reference`, `magnitude` and `terms` from the inputs (f64 throughout), for f32
    /// activations and outputs.
    pub fn compute_reference(&mut self) -> Result<()> {
        self.check_shapes()?;
        let e = super::expected::expected(self, super::precision::Precision::F32)?;
        self.reference = e.values;
        self.magnitude = e.magnitude;
        self.terms = e.terms;
        Ok(())
    }

    /// How to launch this case under its class's fixed ABI in f32 (spec/kernels.json `launch`).
    #[cfg(any(test, feature = "internals"))]
    pub fn launch(&self) -> Result<Launch> {
        let p = super::precision::Precision::F32;
        let abi = super::kernel_abi::KernelAbi::default_for(self.class, p)?;
        abi.launch(self, &super::expected::expected(self, p)?)
    }
}

// ---------------------------------------------------------------------------------------
// The `.kcase` bundle: "NTKCASE1", u32 section count, then per section a 16-byte ASCII name
// (NUL-padded), u32 dtype (1 u8, 2 i32, 3 f32, 4 f64, 5 i64, 6 utf-8), u32 zero, u64 byte
// length, the bytes, zero padding to a multiple of 8. Little-endian throughout.
// Sections: meta, dims, weights, rows (a sparse table's row ids), ids, x, signs, reference_f64.

const MAGIC: &[u8; 8] = b"NTKCASE1";

fn section(out: &mut Vec<u8>, name: &str, dtype: u32, bytes: &[u8]) {
    let mut n = [0u8; 16];
    n[..name.len()].copy_from_slice(name.as_bytes());
    out.extend_from_slice(&n);
    out.extend_from_slice(&dtype.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
    out.resize(out.len().div_ceil(8) * 8, 0);
}

impl KernelCase {
    /// The bundle bytes: inputs plus the f64 reference.
    pub fn to_bundle(&self) -> Vec<u8> {
        let d = self.dims;
        let mut secs: Vec<(&str, u32, Vec<u8>)> = vec![
            (
                "meta",
                6,
                format!("{} {} {}", self.name, self.class.name(), self.format).into_bytes(),
            ),
            (
                "dims",
                5,
                [d.n, d.k, d.t, d.n_ids, d.block, d.n_blocks]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            ),
        ];
        if !self.weights.is_empty() {
            secs.push(("weights", 1, self.weights.clone()));
        }
        if !self.sparse_rows.is_empty() {
            secs.push((
                "rows",
                5,
                self.sparse_rows
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            ));
        }
        if !self.ids.is_empty() {
            secs.push((
                "ids",
                2,
                self.ids.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ));
        }
        if !self.x.is_empty() {
            secs.push((
                "x",
                3,
                self.x.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ));
        }
        if !self.signs.is_empty() {
            secs.push((
                "signs",
                3,
                self.signs.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ));
        }
        secs.push((
            "reference_f64",
            4,
            self.reference
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ));
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(secs.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        for (n, t, b) in &secs {
            section(&mut out, n, *t, b);
        }
        out
    }

    /// Parses a bundle, recomputes the reference from its inputs and requires the stored one
    /// to equal it bit for bit (`kernel.case` otherwise).
    pub fn from_bundle(bytes: &[u8]) -> Result<KernelCase> {
        let bad =
            |at: usize, what: String| Error::at(ErrorClass::KernelCase, at as u64, "kcase", what);
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad(0, "not a kernel case bundle (magic NTKCASE1)".into()));
        }
        let Some(count) = crate::le::u32_at(bytes, 8) else {
            return Err(bad(8, "section count truncated".into()));
        };
        let count = count as usize;
        let mut pos = 16;
        let mut secs: Vec<(String, &[u8])> = Vec::new();
        for i in 0..count.min(64) {
            if bytes.len() < pos + 32 {
                return Err(bad(pos, format!("section {i} header truncated")));
            }
            let name = String::from_utf8_lossy(&bytes[pos..pos + 16])
                .trim_end_matches('\0')
                .to_string();
            let Some(len) = crate::le::u64_at(bytes, pos + 24) else {
                return Err(bad(pos + 24, format!("section {name}: length truncated")));
            };
            let start = pos + 32;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| start.checked_add(l))
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| {
                    bad(
                        pos + 24,
                        format!("section {name}: {len} bytes run past the end"),
                    )
                })?;
            secs.push((name, &bytes[start..end]));
            pos = end.div_ceil(8) * 8;
        }
        let get = |n: &str| {
            secs.iter()
                .find(|(s, _)| s == n)
                .map(|(_, b)| *b)
                .unwrap_or(&[])
        };
        let meta = String::from_utf8_lossy(get("meta")).to_string();
        let mut it = meta.split(' ');
        let (name, class, format) = (it.next(), it.next(), it.next());
        let (Some(name), Some(class), Some(format)) = (name, class, format) else {
            return Err(bad(16, "meta section must be 'name class format'".into()));
        };
        let class = KernelClass::from_name(class)
            .ok_or_else(|| bad(16, format!("unknown class {class}")))?;
        let (dims, _) = get("dims").as_chunks::<8>();
        let [n, k, t, n_ids, block, n_blocks] = dims else {
            return Err(bad(16, "dims section must hold 6 u64".into()));
        };
        let [n, k, t, n_ids, block, n_blocks] =
            [n, k, t, n_ids, block, n_blocks].map(crate::le::u64_of);
        let f32v = |b: &[u8]| {
            b.as_chunks::<4>()
                .0
                .iter()
                .map(|c| f32::from_le_bytes(*c))
                .collect::<Vec<f32>>()
        };
        let mut c = KernelCase {
            name: name.to_string(),
            class,
            format: KernelFormat::of_name(format)
                .ok_or_else(|| bad(16, format!("unknown format {format:?}")))?,
            dims: Dims {
                n,
                k,
                t,
                n_ids,
                block,
                n_blocks,
            },
            weights: get("weights").to_vec(),
            ids: get("ids")
                .as_chunks::<4>()
                .0
                .iter()
                .map(|c| i32::from_le_bytes(*c))
                .collect(),
            x: f32v(get("x")),
            signs: f32v(get("signs")),
            reference: Vec::new(),
            magnitude: Vec::new(),
            terms: 0,
            recipe: String::new(),
            obj_prefix: 0,
            sparse_rows: get("rows")
                .as_chunks::<8>()
                .0
                .iter()
                .map(crate::le::u64_of)
                .collect(),
        };
        // Shapes bound the work before any decoding (hostile bundles stay cheap).
        if [
            c.dims.n,
            c.dims.k,
            c.dims.t,
            c.dims.n_ids,
            c.dims.block,
            c.dims.n_blocks,
        ]
        .iter()
        .any(|&v| v > 1 << 24)
            || held_rows(&c)
                .saturating_mul(c.dims.k)
                .saturating_mul(c.dims.t.max(1))
                > 1 << 26
        {
            return Err(bad(16, "dims too large for a kernel case".into()));
        }
        c.compute_reference()?;
        let stored: Vec<f64> = get("reference_f64")
            .as_chunks::<8>()
            .0
            .iter()
            .map(|b| f64::from_le_bytes(*b))
            .collect();
        if stored.len() != c.reference.len()
            || stored
                .iter()
                .zip(&c.reference)
                .any(|(a, b)| a.to_bits() != b.to_bits())
        {
            return Err(Error::new(
                ErrorClass::KernelCase,
                c.name.clone(),
                "the stored f64 reference differs from the one recomputed from the case's inputs",
            ));
        }
        Ok(c)
    }
}

/// Rows whose bytes a case holds: all `n`, or a sparse table's listed rows (a 248,320-row table
/// past 2^31 bytes holds a handful).
fn held_rows(c: &KernelCase) -> u64 {
    if c.sparse_rows.is_empty() {
        c.dims.n
    } else {
        c.sparse_rows.len() as u64
    }
}

// ---------------------------------------------------------------------------------------
// Case generation (deterministic: splitmix64 streams seeded per case).

fn activations(r: &mut Bytes, n: usize) -> Vec<f32> {
    (0..n).map(|_| r.unit() * 2.0 - 1.0).collect()
}

/// Ternary blocks from the reference quantizer (the codec family's generator).
fn quantized(codec: Codec, elems: usize, seed: u64) -> Result<Vec<u8>> {
    let mut r = Bytes::new(seed);
    let x: Vec<f32> = (0..elems).map(|_| (r.unit() * 2.0 - 1.0) * 0.05).collect();
    codec.quantize_to_vec(&x)
}

/// Random block bytes with a finite scale in every block (all codes, non-canonical bytes).
fn random_blocks(codec: Codec, blocks: usize, seed: u64) -> Result<Vec<u8>> {
    let mut r = Bytes::new(seed);
    let mut b = r.fill(blocks * codec.block_bytes());
    let so = codec.scale_offset().ok_or_else(|| {
        Error::new(
            ErrorClass::InternalInvariant,
            codec.name(),
            "random kernel-case blocks need a block codec with a scale",
        )
    })?;
    for blk in b.chunks_exact_mut(codec.block_bytes()) {
        let d = f32_to_f16(0.01 + r.unit() * 0.05).to_le_bytes();
        blk[so..so + 2].copy_from_slice(&d);
    }
    Ok(b)
}

/// A case with its identity and shapes and no data yet.
pub(crate) fn base(
    name: &str,
    class: KernelClass,
    format: KernelFormat,
    dims: Dims,
    recipe: &str,
) -> KernelCase {
    KernelCase {
        name: name.into(),
        class,
        format,
        dims,
        weights: Vec::new(),
        ids: Vec::new(),
        x: Vec::new(),
        signs: Vec::new(),
        reference: Vec::new(),
        magnitude: Vec::new(),
        terms: 0,
        recipe: recipe.into(),
        obj_prefix: 0,
        sparse_rows: Vec::new(),
    }
}

/// Every kernel case, in corpus order.
pub fn all() -> Vec<KernelCase> {
    // cannot fire: the cases are fixed, seeded inputs (no input reaches this), and every
    // corpus generation and the unit tests of this module build them all.
    #[allow(clippy::expect_used)]
    let v = try_all().expect("the fixed kernel cases build");
    v
}

/// The dequantize cases of [`try_all`]: every format, reference-quantized blocks and random
/// (non-canonical) bytes.
fn dequantize_cases() -> Result<Vec<KernelCase>> {
    let mut v = Vec::new();
    let dq = |name: &str, format: KernelFormat, blocks: u64, weights: Vec<u8>, recipe: &str| {
        let mut c = base(
            name,
            KernelClass::Dequantize,
            format,
            Dims {
                n_blocks: blocks,
                ..Dims::default()
            },
            recipe,
        );
        c.weights = weights;
        c
    };
    v.push(dq(
        "y_dequantize_pq2_0",
        KernelFormat::Blocks(Codec::Pq2_0),
        8,
        quantized(Codec::Pq2_0, 1024, 101)?,
        "8 PQ2_0 blocks from the reference quantizer (codes 0..2)",
    ));
    v.push(dq(
        "i_dequantize_pq2_0_code3",
        KernelFormat::Blocks(Codec::Pq2_0),
        8,
        random_blocks(Codec::Pq2_0, 8, 102)?,
        "8 PQ2_0 blocks of random code bytes (code 3 included, decodes to +2d) with finite scales",
    ));
    v.push(dq(
        "y_dequantize_q2_0_g128_legacy",
        KernelFormat::Q2G128Legacy,
        8,
        quantized(Codec::Pq2_0, 1024, 103)?,
        "8 legacy Prism Q2_0-g128 (id 42, byte-identical to PQ2_0) blocks",
    ));
    v.push(dq(
        "y_dequantize_q2_0_g64",
        KernelFormat::Blocks(Codec::Q2_0G64),
        8,
        quantized(Codec::Q2_0G64, 512, 104)?,
        "8 mainline Q2_0 (group 64) blocks",
    ));
    v.push(dq(
        "y_dequantize_ptq1_0",
        KernelFormat::Blocks(Codec::Ptq1_0),
        8,
        quantized(Codec::Ptq1_0, 1024, 105)?,
        "8 PTQ1_0 blocks from the reference quantizer",
    ));
    v.push(dq("i_dequantize_ptq1_0_noncanonical", KernelFormat::Blocks(Codec::Ptq1_0), 8, random_blocks(Codec::Ptq1_0, 8, 106)?, "8 PTQ1_0 blocks of random qs/qh bytes (non-canonical bytes decode by the digit formula) with finite scales"));
    v.push(dq(
        "y_dequantize_tq1_0",
        KernelFormat::Blocks(Codec::Tq1_0),
        4,
        quantized(Codec::Tq1_0, 1024, 107)?,
        "4 TQ1_0 blocks",
    ));
    v.push(dq(
        "y_dequantize_tq2_0",
        KernelFormat::Blocks(Codec::Tq2_0),
        4,
        quantized(Codec::Tq2_0, 1024, 108)?,
        "4 TQ2_0 blocks",
    ));
    Ok(v)
}

/// [`all`], with a failure to build a case (a defect of this tool) as `internal.invariant`.
pub fn try_all() -> Result<Vec<KernelCase>> {
    use KernelClass::*;
    let mut v = dequantize_cases()?;
    for (i, codec) in TernaryType::ALL
        .map(TernaryType::codec)
        .into_iter()
        .enumerate()
    {
        let fmt = codec.name();
        let (n, k) = (16u64, 256u64);
        let ids = vec![0, 15, 3, 3, 7, 15];
        let mut c = base(
            &format!("y_get_rows_{fmt}"),
            GetRows,
            KernelFormat::Blocks(codec),
            Dims {
                n,
                k,
                n_ids: ids.len() as u64,
                ..Dims::default()
            },
            "rows [0, 15, 3, 3, 7, 15] of a [16, 256] matrix (first, last and repeated rows)",
        );
        c.weights = quantized(codec, (n * k) as usize, 110 + i as u64)?;
        c.ids = ids;
        v.push(c);
    }
    for (i, codec) in TernaryType::ALL
        .map(TernaryType::codec)
        .into_iter()
        .enumerate()
    {
        let fmt = codec.name();
        let (n, k) = (37u64, 1024u64);
        let mut c = base(
            &format!("y_mul_mat_vec_{fmt}"),
            MulMatVec,
            KernelFormat::Blocks(codec),
            Dims {
                n,
                k,
                t: 1,
                ..Dims::default()
            },
            "[37, 1024] weights x one f32 vector (37 rows: the last CUDA block is partial)",
        );
        c.weights = quantized(codec, (n * k) as usize, 120 + i as u64)?;
        c.x = activations(&mut Bytes::new(130 + i as u64), k as usize);
        v.push(c);
    }
    for (i, ty) in TernaryType::ALL.into_iter().enumerate() {
        let (n, k) = (13u64, 640u64);
        let (format, codec) = (KernelFormat::Planes(ty), ty.codec());
        let fmt = format.name();
        let (layout, geom) = plane_geometry(format, n, k)?;
        let ggml = quantized(codec, (n * k) as usize, 140 + i as u64)?;
        let mut c = base(&format!("y_mul_mat_vec_planes_{}", fmt.to_lowercase()), MulMatVecPlanes, format, Dims { n, k, t: 1, ..Dims::default() },
            "a [13, 640] .ninfer row-split object (planes::assemble of reference-quantized blocks; 13 rows put 256-byte alignment gaps between the planes) x one f32 vector");
        c.weights = planes::assemble(&layout, &geom, &ggml)?;
        c.x = activations(&mut Bytes::new(150 + i as u64), geom.k_pad as usize);
        v.push(c);
    }
    for (i, codec) in TernaryType::ALL
        .map(TernaryType::codec)
        .into_iter()
        .enumerate()
    {
        let fmt = codec.name();
        for t in [1u64, 3] {
            let (n, k) = (40u64, 384u64);
            let mut c = base(&format!("y_mul_mat_{fmt}_t{t}"), MulMat, KernelFormat::Blocks(codec), Dims { n, k, t, ..Dims::default() },
                "[40, 384] weights x T token-major f32 activations (40 rows: a partial 32-row tile)");
            c.weights = quantized(codec, (n * k) as usize, 160 + i as u64)?;
            c.x = activations(&mut Bytes::new(170 + 10 * i as u64 + t), (k * t) as usize);
            v.push(c);
        }
    }
    let profile = crate::spec::profile("bonsai-2-27b").ok_or_else(|| {
        Error::new(
            ErrorClass::InternalInvariant,
            "bonsai-2-27b",
            "the kernel cases' Hadamard profile is not compiled in",
        )
    })?;
    let block = profile.hadamard_block;
    for (width, t) in [(profile.sign_widths[0], 2u64), (profile.sign_widths[1], 1)] {
        let mut c = base(&format!("y_hadamard_rotate_k{width}_t{t}"), HadamardRotate, KernelFormat::F32, Dims { k: width, t, block, ..Dims::default() },
            "token-major activations rotated by H_B(s ⊙ x), B = prism.hadamard.block_size, signs of this sign-table width (±1, seeded)");
        let mut r = Bytes::new(180 + width);
        c.signs = (0..width)
            .map(|_| if r.next_u64() & 1 == 1 { 1.0 } else { -1.0 })
            .collect();
        c.x = activations(&mut r, (width * t) as usize);
        v.push(c);
    }
    for c in &mut v {
        c.compute_reference()?;
    }
    Ok(v)
}

/// The reference adapter's observation of a kernel case (PROTOCOL kind `kernel`): the case is
/// parsed, its f64 reference recomputed from its inputs with the crate's decoders and checked
/// against the stored one; a reader answers with the digest of the reference it computes.
pub fn observe(bytes: &[u8]) -> Result<serde_json::Value> {
    let c = KernelCase::from_bundle(bytes)?;
    let refb: Vec<u8> = c.reference.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut o = serde_json::json!({
        "class": c.class.name(),
        "format": c.format.name(),
        "outputs": c.reference.len(),
        "reference_f64_sha256": crate::digest::sha256_hex(&refb),
    });
    if c.class.exact() {
        let f: Vec<u8> = c
            .reference
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect();
        o["exact_f32_sha256"] = crate::digest::sha256_hex(&f).into();
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_round_trip_and_detect_a_changed_reference() {
        for c in all() {
            let b = c.to_bundle();
            let back = KernelCase::from_bundle(&b).unwrap();
            assert_eq!(back.reference.len(), c.reference.len(), "{}", c.name);
            assert_eq!(
                back.launch().unwrap().out_bytes(),
                c.reference.len() * 4,
                "{}",
                c.name
            );
        }
        let c = &all()[0];
        let mut b = c.to_bundle();
        let n = b.len();
        b[n - 1] ^= 0x40; // last byte of the stored reference
        assert_eq!(
            KernelCase::from_bundle(&b).unwrap_err().class(),
            ErrorClass::KernelCase
        );
        assert!(KernelCase::from_bundle(b"NTKCASE1").is_err());
    }

    #[test]
    fn a_dims_section_of_other_than_six_u64_is_a_located_case_error() {
        let c = &all()[0];
        let bundle = |dims: &[u8]| {
            let mut out = Vec::new();
            out.extend_from_slice(MAGIC);
            out.extend_from_slice(&2u32.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            let meta = format!("{} {} {}", c.name, c.class.name(), c.format);
            section(&mut out, "meta", 0, meta.as_bytes());
            section(&mut out, "dims", 0, dims);
            out
        };
        let d = c.dims;
        let six: Vec<u8> = [d.n, d.k, d.t, d.n_ids, d.block, d.n_blocks]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        // Six u64 get past the dims rule (the case then lacks its data: another error).
        let e = KernelCase::from_bundle(&bundle(&six)).unwrap_err();
        assert!(!e.detail().contains("dims section"), "{e}");
        let e = KernelCase::from_bundle(&bundle(&six[..40])).unwrap_err();
        assert_eq!((e.class(), e.offset()), (ErrorClass::KernelCase, Some(16)));
        assert!(e.detail().contains("dims section must hold 6 u64"), "{e}");
    }

    /// The meta's format is parsed once: a name no kernel case uses is a located case error;
    /// the legacy alias (PQ2_0's codec, its own name) comes back as itself.
    #[test]
    fn a_bundle_meta_format_is_parsed_and_checked() {
        let c = &all()[0];
        let b = c.to_bundle();
        let meta = format!("{} {} {}", c.name, c.class.name(), c.format);
        let at = b
            .windows(meta.len())
            .position(|w| w == meta.as_bytes())
            .unwrap();
        let mut m = b.clone();
        // Same length as `pq2_0`, so the section lengths still hold.
        let f = at + meta.len() - c.format.name().len();
        m[f..at + meta.len()].copy_from_slice(b"tq3_0");
        let e = KernelCase::from_bundle(&m).unwrap_err();
        assert_eq!((e.class(), e.offset()), (ErrorClass::KernelCase, Some(16)));
        assert!(e.detail().contains("unknown format \"tq3_0\""), "{e}");
        let legacy = all()
            .into_iter()
            .find(|c| c.format == KernelFormat::Q2G128Legacy)
            .unwrap();
        let back = KernelCase::from_bundle(&legacy.to_bundle()).unwrap();
        assert_eq!(back.format, KernelFormat::Q2G128Legacy);
        assert_eq!(back.format.codec().unwrap(), Codec::Pq2_0);
    }

    #[test]
    fn every_fixed_case_builds_through_the_fallible_path() {
        assert_eq!(try_all().unwrap().len(), all().len());
    }

    #[test]
    fn hostile_bundles_are_errors_not_panics() {
        // Every small case, every byte of the header and dims region, and a stride through the
        // rest: flipped, zeroed and maxed. Truncations too.
        for c in all().into_iter().filter(|c| c.to_bundle().len() < 40_000) {
            let b = c.to_bundle();
            let positions: Vec<usize> = (0..200.min(b.len()))
                .chain((200..b.len()).step_by(97))
                .collect();
            for &i in &positions {
                for v in [0u8, 0xff, b[i] ^ 0x80] {
                    let mut m = b.clone();
                    m[i] = v;
                    let _ = KernelCase::from_bundle(&m);
                }
            }
            for cut in [0, 7, 16, 40, b.len() / 2, b.len() - 1] {
                assert!(
                    KernelCase::from_bundle(&b[..cut]).is_err(),
                    "{} cut at {cut}",
                    c.name
                );
            }
        }
    }

    #[test]
    fn launch_arity_matches_the_spec_signature() {
        for c in all() {
            use super::super::abi::{ArgKind, LaunchArg};
            let l = c.launch().unwrap();
            let kinds = c.class.arg_kinds();
            assert_eq!(l.args.len(), kinds.len(), "{}", c.name);
            for (a, k) in l.args.iter().zip(&kinds) {
                let ok = matches!(
                    (a, k),
                    (LaunchArg::In { .. }, ArgKind::Input)
                        | (LaunchArg::Out { .. }, ArgKind::Output)
                        | (LaunchArg::I32(_), ArgKind::I32)
                        | (LaunchArg::I64(_), ArgKind::I64)
                );
                assert!(ok, "{}: {a:?} vs {k:?}", c.name);
            }
        }
    }

    #[test]
    fn code3_case_has_code_3_and_the_quantized_one_does_not() {
        let cs = all();
        let has3 = |name: &str| {
            let c = cs.iter().find(|c| c.name == name).unwrap();
            c.weights.chunks_exact(34).any(|b| {
                b[2..]
                    .iter()
                    .any(|q| (0..4).any(|s| (q >> (2 * s)) & 3 == 3))
            })
        };
        assert!(has3("i_dequantize_pq2_0_code3"));
        assert!(!has3("y_dequantize_pq2_0"));
    }

    /// A sparse table's bundle stores the held rows and their ids (not the 2 GB table) and
    /// round-trips; a sparse table that is inconsistent is a case error naming what: an id it
    /// does not hold, rows out of order, rows past the table, weights of another length, a
    /// class other than get_rows. The dense twin of the same rows (a small table) passes.
    #[test]
    fn a_sparse_table_round_trips_and_inconsistent_ones_are_case_errors() {
        let c = super::super::generate::matrix(KernelClass::GetRows, KernelFormat::PQ2_0)
            .unwrap()
            .into_iter()
            .find(|c| !c.sparse_rows.is_empty())
            .unwrap();
        let b = c.to_bundle();
        assert!(b.len() < 2 << 20, "{} bytes", b.len());
        let back = KernelCase::from_bundle(&b).unwrap();
        assert_eq!(back.sparse_rows, c.sparse_rows);
        assert_eq!(back.reference, c.reference);
        let err = |m: &dyn Fn(&mut KernelCase), want: &str| {
            let mut x = c.clone();
            m(&mut x);
            let e = x.compute_reference().unwrap_err();
            assert_eq!(e.class(), ErrorClass::KernelCase, "{e}");
            assert!(e.detail().contains(want), "{want}: {e}");
        };
        err(
            &|x| x.ids[3] = 65_536,
            "id 65536 gathers a row the sparse table does not hold",
        );
        err(&|x| x.sparse_rows.swap(0, 1), "must ascend");
        err(
            &|x| *x.sparse_rows.last_mut().unwrap() = 248_320,
            "outside the table",
        );
        err(&|x| x.weights.truncate(100), "the 5 sparse rows need");
        err(
            &|x| x.class = KernelClass::Dequantize,
            "only a get_rows case",
        );
        // The same rows as a dense 5-row table with renumbered ids: the same reference.
        let mut dense = c.clone();
        dense.dims.n = c.sparse_rows.len() as u64;
        dense.ids = c
            .ids
            .iter()
            .map(|&i| c.sparse_rows.binary_search(&(i as u64)).unwrap() as i32)
            .collect();
        dense.sparse_rows.clear();
        dense.compute_reference().unwrap();
        assert_eq!(dense.reference, c.reference);
    }
}
