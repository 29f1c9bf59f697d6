//! `dump-reference --device cuda`: the engine-oracle and embedding dumps with every output
//! computed by the reference CUDA kernels on the GPU instead of the f64 host math. The host
//! writer lays out the manifests and inputs (x, token ids) first; then each y / h file is
//! replaced by what the kernels produce (Hadamard rotation by `hadamard_rotate`, decoding by
//! `dequantize`, the product by `mul_mat_vec_planes` over the artifact's planes). The
//! verifier's `engine_oracles` and `embedding` gates then judge these dumps.
//! Only index shuffling (the ssm_out gather) and exact sign flips run on the host.

use crate::codec::TernaryType;
use crate::error::{Error, ErrorClass, Result};
use std::path::Path;

use super::abi::{ceil_div, KernelClass, Launch, LaunchArg};
use super::{device, sources};
use crate::ninfer::reader::Artifact;
use crate::verify::dumps::{
    read_f32s, read_i32s, read_manifest, EmbeddingManifest, OracleManifest, Rotation,
};
use crate::verify::rows::{ArtifactRows, Blocks};

fn f32b(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn inp(bytes: Vec<u8>) -> LaunchArg {
    LaunchArg::In {
        name: "in".into(),
        bytes,
    }
}

fn out(elems: usize) -> LaunchArg {
    LaunchArg::Out {
        name: "y".into(),
        bytes: elems * 4,
    }
}

fn run(src: &str, entry: &str, class: KernelClass, l: Launch) -> Result<Vec<f32>> {
    let text = sources::builtin_resolved(src)?;
    device::launch_once(&text, entry, class, &l)
}

/// `y = H_B(s ⊙ x)` on the GPU, x token-major [t][k].
fn rotate(x: &[f32], signs: &[f32], k: usize, t: usize, block: usize) -> Result<Vec<f32>> {
    if block == 0 || block > 1024 || k % block != 0 {
        return Err(Error::new(
            ErrorClass::CliUsage,
            "--device cuda",
            format!(
                "width {k} and Hadamard block {block}: the hadamard_rotate kernel needs a block \
                 <= 1024 dividing the width"
            ),
        ));
    }
    let l = Launch {
        grid: [(k / block) as u32, t as u32, 1],
        block: [256, 1, 1],
        dyn_shared: 0,
        args: vec![
            inp(f32b(x)),
            inp(f32b(signs)),
            out(k * t),
            LaunchArg::I32(k as i32),
            LaunchArg::I32(t as i32),
            LaunchArg::I32(block as i32),
        ],
    };
    run(
        "hadamard_rotate.cu",
        "ref_hadamard_rotate",
        KernelClass::HadamardRotate,
        l,
    )
}

/// Rows of a ternary object decoded on the GPU (ggml blocks reassembled from the planes).
fn decode_rows(rows: &mut ArtifactRows<'_>, ids: &[u64], ty: TernaryType) -> Result<Vec<f32>> {
    let k = rows.view.geom.k as usize;
    let mut blocks = Vec::new();
    for &id in ids {
        blocks.extend_from_slice(rows.ggml_row(id));
    }
    let (entry, qk) = match ty {
        TernaryType::Pq2_0 => ("ref_dequantize_pq2_0", 128),
        TernaryType::Ptq1_0 => ("ref_dequantize_ptq1_0", 128),
    };
    let bpr = rows.view.geom.k_pad as usize / qk;
    let l = Launch {
        grid: [(bpr * ids.len()) as u32, 1, 1],
        block: [128, 1, 1],
        dyn_shared: 0,
        args: vec![
            inp(blocks),
            out(bpr * qk * ids.len()),
            LaunchArg::I32((bpr * ids.len()) as i32),
        ],
    };
    let z = run("dequantize.cu", entry, KernelClass::Dequantize, l)?;
    // Drop the k padding of each row.
    Ok(z.chunks(bpr * qk).flat_map(|r| r[..k].to_vec()).collect())
}

/// `s ⊙ (H z)` for token rows z (the embedding's inverse rotation): H on the GPU, s exact.
fn inverse(rot: &Rotation, z: &[f32], k: usize, t: usize) -> Result<Vec<f32>> {
    let ones = vec![1f32; k];
    let hz = rotate(z, &ones, k, t, rot.block)?;
    let s = rot.signs_for(k, false)?;
    Ok(hz
        .chunks(k)
        .flat_map(|r| {
            r.iter()
                .zip(&s)
                .map(|(a, b)| a * *b as f32)
                .collect::<Vec<_>>()
        })
        .collect())
}

/// `y[t] = W · u[t]` over the object's planes on the GPU.
fn matvec(rows: &ArtifactRows<'_>, u: &[f32], t: usize) -> Result<Vec<f32>> {
    let v = &rows.view;
    let g = v.geom;
    let entry = match TernaryType::of_format(v.format) {
        Some(TernaryType::Pq2_0) => "ref_mul_mat_vec_planes_pq2_0_g128",
        Some(TernaryType::Ptq1_0) => "ref_mul_mat_vec_planes_ptq1_0_g128",
        None => {
            return Err(Error::new(
                ErrorClass::CliUsage,
                "--device cuda",
                format!("no reference planes kernel for format {}", v.format.name),
            ))
        }
    };
    let (n, k, kp) = (g.n as usize, g.k as usize, g.k_pad as usize);
    let mut y = Vec::with_capacity(n * t);
    for ti in 0..t {
        let mut x = u[ti * k..(ti + 1) * k].to_vec();
        x.resize(kp, 0.0);
        let l = Launch {
            grid: [ceil_div(g.n, 4), 1, 1],
            block: [32, 4, 1],
            dyn_shared: 0,
            args: vec![
                inp(v.bytes.to_vec()),
                LaunchArg::I64(g.base_offset as i64),
                LaunchArg::I64(g.high_offset as i64),
                LaunchArg::I64(g.scale_offset as i64),
                inp(f32b(&x)),
                out(n),
                LaunchArg::I32(g.n as i32),
                LaunchArg::I32(g.k_pad as i32),
            ],
        };
        y.extend(run(
            "mul_mat_vec_planes.cu",
            entry,
            KernelClass::MulMatVecPlanes,
            l,
        )?);
    }
    Ok(y)
}

/// Replaces the y / h files of host-written dumps under `dir` by GPU kernel outputs.
/// Returns the number of files recomputed.
pub fn rewrite_on_device(a: &Artifact<'_>, dir: &Path) -> Result<usize> {
    device::available()?;
    let p = crate::verify::profile_for_artifact(a)?;
    let format = crate::verify::artifact_format(a).ok_or_else(|| {
        Error::new(
            ErrorClass::VerifyInput,
            "artifact",
            "holds no ternary object (the device dumps decode one)",
        )
    })?;
    let ty = TernaryType::of_format(format).ok_or_else(|| {
        Error::new(
            ErrorClass::CliUsage,
            "--device cuda",
            format!("no reference dequantize kernel for format {}", format.name),
        )
    })?;
    let blocks = Blocks::for_format(format)?;
    let rot = Rotation::from_artifact(a, &p)?;
    let spec = crate::spec::dumps();
    let open =
        |name: &str| -> Result<ArtifactRows<'_>> { ArtifactRows::new(a.row_split(name)?, blocks) };
    let mut done = 0;
    // Embedding: h = s ⊙ (H · decode(token_embedding[id])).
    let edir = dir.join("embedding");
    let em: EmbeddingManifest = read_manifest(&edir, &spec.embedding.manifest)?;
    let ids: Vec<u64> = read_i32s(
        &crate::fsio::read_input(&edir.join(&em.tokens_file))?,
        "tokens",
        em.tokens,
    )?
    .into_iter()
    .map(|v| v as u64)
    .collect();
    let mut rows = open(&em.object)?;
    let z = decode_rows(&mut rows, &ids, ty)?;
    let h = inverse(&rot, &z, em.k, ids.len())?;
    crate::fsio::write_bytes_atomic(&edir.join(&em.h_file), &f32b(&h))?;
    done += 1;
    // Kernel oracles.
    let odir = dir.join("oracles");
    let om: OracleManifest = read_manifest(&odir, &spec.kernel_oracles.manifest)?;
    for c in &om.cases {
        let mut rows = open(&c.object)?;
        let y = if c.rotation == "inverse" {
            let tf = c.token_ids_file.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorClass::DumpFormat,
                    format!("{} token_ids_file", c.name),
                    "an inverse-rotation case names no token ids file",
                )
            })?;
            let ids: Vec<u64> = read_i32s(&crate::fsio::read_input(&odir.join(tf))?, tf, c.tokens)?
                .into_iter()
                .map(|v| v as u64)
                .collect();
            let z = decode_rows(&mut rows, &ids, ty)?;
            inverse(&rot, &z, c.k, c.tokens)?
        } else {
            let xf = c.x_file.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorClass::DumpFormat,
                    format!("{} x_file", c.name),
                    "a forward case names no activation file",
                )
            })?;
            let x = read_f32s(
                &crate::fsio::read_input(&odir.join(xf))?,
                xf,
                c.k * c.tokens,
            )?;
            // P (the ssm_out gather) is an index shuffle; signs and H run in the kernel.
            let perm = (c.rotation == "perm")
                .then(|| crate::verify::rules::ssm_out_gather(&p, c.k as u64));
            let mut xp = Vec::with_capacity(x.len());
            for ti in 0..c.tokens {
                let row = &x[ti * c.k..(ti + 1) * c.k];
                match &perm {
                    Some(g) => xp.extend(g.iter().map(|&i| row[i] as f32)),
                    None => xp.extend(row.iter().map(|&v| v as f32)),
                }
            }
            let s: Vec<f32> = rot
                .signs_for(c.k, false)?
                .into_iter()
                .map(|v| v as f32)
                .collect();
            let u = rotate(&xp, &s, c.k, c.tokens, rot.block)?;
            matvec(&rows, &u, c.tokens)?
        };
        crate::fsio::write_bytes_atomic(&odir.join(&c.y_file), &f32b(&y))?;
        done += 1;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_dump_file_is_a_dump_format_error_naming_the_file() {
        let got = read_f32s(&[0u8; 6], "x.bin", 2).unwrap_err();
        assert_eq!(got.class(), ErrorClass::DumpFormat);
        assert_eq!(got.field(), "x.bin");
        assert!(got.detail().contains("6 bytes, expected 2 f32"), "{got}");
    }

    #[test]
    fn a_missing_token_file_or_kernel_is_a_classed_error_not_a_panic() {
        let e = rotate(&[0.0; 6], &[1.0; 6], 6, 1, 4).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CliUsage);
        assert!(e.detail().contains("block 4"), "{e}");
    }
}
