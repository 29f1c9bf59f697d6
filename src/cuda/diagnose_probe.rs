//! A cheap necessary condition for a wrong reading to match a failing output. The judge's rule
//! is per element (an output is within its bound or not, whatever the others hold) plus a
//! global NMSE limit, so a reading whose expectation misses the bound at one output can never
//! match. The probe is the one row (dequantize: block) holding the first output that fails the
//! right reference: each reading is first decoded and judged on that row alone (O(k) instead
//! of O(n k t)), and only readings that meet it there are judged on the whole case. The named
//! readings are exactly those of the full search; only the work differs.

use super::abi::KernelClass;
use super::cases::{base, KernelCase};
use super::expected::{expected, expected_with, WeightDecoder};
use super::judge::judge;
use super::precision::Precision;

/// One row of a failing case, as a case of its own, with the kernel's outputs for it.
pub(super) struct Probe {
    case: KernelCase,
    out: Vec<u8>,
}

impl Probe {
    /// The probe of a failing output: `None` where the class has no row to cut out (planes,
    /// Hadamard) or no single output breaks the bound (an NMSE-only failure).
    pub(super) fn of(c: &KernelCase, p: Precision, out: &[u8]) -> Option<Probe> {
        if matches!(
            c.class,
            KernelClass::MulMatVecPlanes | KernelClass::MulMatPlanes | KernelClass::HadamardRotate
        ) {
            return None;
        }
        let i = judge(c, &expected(c, p).ok()?, out).first_bad?.index;
        let w = p.y.elem_bytes();
        let mut s = base(&c.name, c.class, c.format, c.dims, "");
        let elems = |from: usize, n: usize| out.get(from * w..(from + n) * w).map(<[u8]>::to_vec);
        let sub_out = match c.class {
            KernelClass::Dequantize => {
                let codec = c.format.codec().ok()?;
                let (be, bb) = (codec.block_elems(), codec.block_bytes());
                let b = i / be;
                s.weights = c.weights.get(b * bb..(b + 1) * bb)?.to_vec();
                s.dims.n_blocks = 1;
                elems(b * be, be)?
            }
            KernelClass::GetRows => {
                let k = c.dims.k as usize;
                let r = i / k.max(1);
                s.weights = c.table_row(u64::try_from(*c.ids.get(r)?).ok()?)?.to_vec();
                s.dims.n = 1;
                s.dims.n_ids = 1;
                s.ids = vec![0];
                elems(r * k, k)?
            }
            KernelClass::MulMatVec | KernelClass::MulMat => {
                let (n, t) = (c.dims.n as usize, c.dims.t.max(1) as usize);
                let r = i % n.max(1);
                s.weights = c.table_row(r as u64)?.to_vec();
                s.dims.n = 1;
                s.x = c.x.clone();
                let mut o = Vec::with_capacity(t * w);
                for tok in 0..t {
                    o.extend(elems(tok * n + r, 1)?);
                }
                o
            }
            KernelClass::MulMatVecPlanes
            | KernelClass::MulMatPlanes
            | KernelClass::HadamardRotate => return None,
        };
        Some(Probe {
            case: s,
            out: sub_out,
        })
    }

    /// Whether a reading that decodes `qk` elements from each `bb` bytes may match: its
    /// expectation meets every output of the probe row (an output it misses is missed in the
    /// whole case too). A reading of another block geometry (`block.32`: 32-element blocks)
    /// maps an output to other bytes in the row alone than in the whole buffer: always
    /// admitted, judged on the whole case.
    pub(super) fn admits(&self, p: Precision, qk: usize, bb: usize, decode: WeightDecoder) -> bool {
        let same_blocks = self
            .case
            .format
            .codec()
            .is_ok_and(|c| (c.block_elems(), c.block_bytes()) == (qk, bb));
        !same_blocks
            || expected_with(&self.case, p, decode)
                .is_ok_and(|e| judge(&self.case, &e, &self.out).bad == 0)
    }
}
