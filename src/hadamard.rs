//! The normalized Sylvester–Walsh–Hadamard transform used by PrismML's folded weights:
//! `H[r][c] = (-1)^popcount(r & c) / sqrt(B)`, applied block-diagonally (block size B from
//! `prism.hadamard.block_size`) along the input dimension. `H` is symmetric and orthonormal,
//! so it is its own inverse.
//!
//! ```
//! use ninfer_ternary::hadamard::fwht_blocks;
//!
//! // H/sqrt(4) on one block of 4: exact in binary, and its own inverse.
//! let x = vec![1.0, 2.0, 3.0, 4.0];
//! let mut y = x.clone();
//! fwht_blocks(&mut y, 4).unwrap();
//! assert_eq!(y, [5.0, -1.0, -2.0, 0.0]);
//! fwht_blocks(&mut y, 4).unwrap();
//! assert_eq!(y, x);
//! ```

use crate::error::{Error, ErrorClass, Result};

/// Whether the transform divides by `sqrt(B)` (the documented `H`) or not (the
/// "unnormalized H" wrong variant the verifier must tell apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// `H[r][c] = (-1)^popcount(r & c) / sqrt(B)`: orthonormal, its own inverse.
    Normalized,
    /// The same sums without the `1/sqrt(B)` factor.
    Unnormalized,
}

/// In-place fast transform of every `block`-sized chunk of `x` (normalized).
pub fn fwht_blocks(x: &mut [f64], block: usize) -> Result<()> {
    fwht_scaled(x, block, Scale::Normalized)
}

/// In-place fast transform of every `block`-sized chunk of `x` (Sylvester order). The one
/// FWHT of the crate: the verifier's reference math and the kernel cases both call it; the
/// packer never does (it copies signs, it does not rotate), so the verifier's independence
/// from the packer holds.
pub fn fwht_scaled(x: &mut [f64], block: usize, scale: Scale) -> Result<()> {
    if block == 0 || !block.is_power_of_two() || x.len() % block != 0 {
        return Err(Error::new(
            ErrorClass::HadamardShape,
            "hadamard",
            format!(
                "length {} is not a multiple of a power-of-two block {block}",
                x.len()
            ),
        ));
    }
    let norm = match scale {
        Scale::Normalized => 1.0 / (block as f64).sqrt(),
        Scale::Unnormalized => 1.0,
    };
    for chunk in x.chunks_exact_mut(block) {
        let mut h = 1;
        while h < block {
            for i in (0..block).step_by(2 * h) {
                for j in i..i + h {
                    let (a, b) = (chunk[j], chunk[j + h]);
                    chunk[j] = a + b;
                    chunk[j + h] = a - b;
                }
            }
            h *= 2;
        }
        for v in chunk.iter_mut() {
            *v *= norm;
        }
    }
    Ok(())
}

/// Forward input rotation of a folded weight: `H · (s ⊙ (P · x))`, `perm` a gather on features.
pub fn forward_input(
    x: &[f64],
    signs: &[f64],
    perm: Option<&[usize]>,
    block: usize,
) -> Result<Vec<f64>> {
    check_len(x.len(), signs.len())?;
    let mut v: Vec<f64> = match perm {
        Some(p) => p.iter().map(|&s| x[s]).collect(),
        None => x.to_vec(),
    };
    for (a, s) in v.iter_mut().zip(signs) {
        *a *= s;
    }
    fwht_blocks(&mut v, block)?;
    Ok(v)
}

/// Inverse rotation for the embedding: `h = s ⊙ (H · z)`.
pub fn inverse_embedding(z: &[f64], signs: &[f64], block: usize) -> Result<Vec<f64>> {
    check_len(z.len(), signs.len())?;
    let mut v = z.to_vec();
    fwht_blocks(&mut v, block)?;
    for (a, s) in v.iter_mut().zip(signs) {
        *a *= s;
    }
    Ok(v)
}

fn check_len(x: usize, s: usize) -> Result<()> {
    if x != s {
        return Err(Error::new(
            ErrorClass::HadamardShape,
            "hadamard signs",
            format!("{s} signs for {x} features"),
        ));
    }
    Ok(())
}

/// The dense matrix element, for tests and the oracle's independent path.
pub fn element(r: usize, c: usize, block: usize) -> f64 {
    let sign = if (r & c).count_ones() % 2 == 0 {
        1.0
    } else {
        -1.0
    };
    sign / (block as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_transform_equals_dense_definition() {
        for block in [1usize, 2, 8, 64] {
            let x: Vec<f64> = (0..block * 2)
                .map(|i| ((i * 37 % 11) as f64) - 5.0)
                .collect();
            let mut fast = x.clone();
            fwht_blocks(&mut fast, block).unwrap();
            for b in 0..2 {
                for r in 0..block {
                    let dense: f64 = (0..block)
                        .map(|c| element(r, c, block) * x[b * block + c])
                        .sum();
                    assert!((fast[b * block + r] - dense).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn normalized_h_is_an_involution_and_inverse_undoes_forward() {
        let x: Vec<f64> = (0..2048).map(|i| (i as f64 * 0.37).sin()).collect();
        let signs: Vec<f64> = (0..2048)
            .map(|i| if (i * 7) % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let y = forward_input(&x, &signs, None, 1024).unwrap();
        let back = inverse_embedding(&y, &signs, 1024).unwrap();
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn unnormalized_or_wrong_block_is_refused_or_differs() {
        assert!(fwht_blocks(&mut [0.0; 12], 8).is_err());
        assert!(fwht_blocks(&mut [0.0; 12], 6).is_err());
        let mut a = vec![1.0, 0.0, 0.0, 0.0];
        fwht_blocks(&mut a, 4).unwrap();
        assert_eq!(a, vec![0.5, 0.5, 0.5, 0.5]);
        let mut u = vec![1.0, 0.0, 0.0, 0.0];
        fwht_scaled(&mut u, 4, Scale::Unnormalized).unwrap();
        assert_eq!(u, vec![1.0, 1.0, 1.0, 1.0]);
        let e = fwht_blocks(&mut [0.0; 12], 8).unwrap_err();
        assert_eq!(e.class(), ErrorClass::HadamardShape);
    }

    #[test]
    fn the_packer_never_imports_the_transform() {
        // The verifier recomputes rotations with this module; if the packer used it too, a bug
        // here could hide in both. Scan the packer's sources for any use of it.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pack");
        let mut stack = vec![root];
        let mut scanned = 0;
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    scanned += 1;
                    let text = std::fs::read_to_string(&p).unwrap();
                    assert!(
                        !text.contains("hadamard::"),
                        "{} uses the FWHT",
                        p.display()
                    );
                }
            }
        }
        assert!(scanned > 0, "no packer sources found under src/pack");
    }
}
