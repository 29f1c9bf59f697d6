//! The engine tooling's manifest-less kernel dump directories (`spec/dumps.json` `harness`):
//!
//! - rotation harness: `<case>.in.f32`, `<case>.signs.f32`, `<case>.out.f32` for the six cases
//!   of `harness.rotation_cases`; rotation output only (no weights), so the check needs no
//!   artifact: the kernel read `bf16(in)`, forward `out = H · (s ⊙ (P · x))`, inverse (in place)
//!   `out = s ⊙ (H · z)`, normalized 1024-blocks, output rounded to bf16. The input and sign
//!   files must also equal the harness's own LCG stream (they identify the case).
//! - gemm oracle: `gemm.y.f32` = bf16 of `W' · (H · (s ⊙ bf16(x)))`, no P, T = 1, x from the
//!   LCG at `x_seed`, W' the artifact object (`--oracle-object`, default `gemm_object`), s the
//!   artifact's signs of width k.
//!
//! Every case is also compared with wrong variants (signs after the rotation, P missing,
//! unnormalized H, transposed token layout, no rotation); one that matches fails the gate.

use super::dump_dir::DirFiles;
use super::dumps::{fwht, matmul_sets, read_f32s, rel_l2, Rotation};
use super::oracles::OracleTally;
use super::{read_dump_file, Ctx, Finding};
use crate::error::Result;
use crate::perm::{perm_row, HeadTiling};
use crate::spec::{dumps, HarnessCase};
use std::path::Path;

/// The rotation-harness block size (the engine kernel's `kBlockSize`).
pub const BLOCK: usize = 1024;

/// True when `dir` looks like an engine harness directory (no manifest.json, harness files).
pub fn is_harness_dir(dir: &Path) -> bool {
    let spec = &dumps().harness;
    if dir.join(&dumps().kernel_oracles.manifest).exists() {
        return false;
    }
    dir.join(&spec.gemm.y_file).is_file()
        || spec
            .rotation_cases
            .iter()
            .any(|c| dir.join(format!("{}.out.f32", c.name)).is_file())
}

/// (wrong variant, rel L2) pairs of one case.
type Wrongs = Vec<(&'static str, f64)>;

/// The harness LCG's activation stream: `((state >> 8) & 0xffff) / 32768 - 1`.
pub fn lcg_values(seed: u32, count: usize) -> Vec<f32> {
    let l = &dumps().harness.lcg;
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(l.multiplier).wrapping_add(l.increment);
            ((state >> 8) & 0xffff) as f32 / 32768.0 - 1.0
        })
        .collect()
}

/// The harness LCG's sign stream (seed already xor-ed): -1 where bit 16 of the state is set.
pub fn lcg_signs(seed: u32, count: usize) -> Vec<f32> {
    let l = &dumps().harness.lcg;
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(l.multiplier).wrapping_add(l.increment);
            if (state >> 16) & 1 == 1 {
                -1.0
            } else {
                1.0
            }
        })
        .collect()
}

fn bf16_round(x: f64) -> f64 {
    half::bf16::from_f32(x as f32).to_f32() as f64
}

/// A way of computing a rotation case: the documented one or a wrong one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarnessVariant {
    /// The documented math: forward H · (s ⊙ (P · x)), inverse s ⊙ (H · z).
    Documented,
    /// Signs and rotation in the wrong order (gates.json `signs_after_rotation`).
    SignsAfterRotation,
    /// No feature permutation P (gates.json `p_missing`).
    PMissing,
    /// H without the 1/sqrt(B) factor (gates.json `unnormalized_h`).
    UnnormalizedH,
    /// Token layout read as [k, T] row-major (element (k, t) at k*T + t).
    Transposed,
}

impl HarnessVariant {
    /// The variant's report name.
    pub fn name(self) -> &'static str {
        match self {
            HarnessVariant::Documented => "documented",
            HarnessVariant::SignsAfterRotation => "signs_after_rotation",
            HarnessVariant::PMissing => "p_missing",
            HarnessVariant::UnnormalizedH => "unnormalized_h",
            HarnessVariant::Transposed => "transposed",
        }
    }

    /// The wrong variants that differ from the documented math for `c`.
    pub fn wrong_for(c: &HarnessCase) -> Vec<HarnessVariant> {
        let mut v = vec![
            HarnessVariant::SignsAfterRotation,
            HarnessVariant::UnnormalizedH,
        ];
        if !c.inverse && c.perm[2] > 1 {
            v.push(HarnessVariant::PMissing);
        }
        if c.tokens >= 2 {
            v.push(HarnessVariant::Transposed);
        }
        v
    }
}

/// The kernel's P as a gather: post-P column j reads source column `perm_row` (tile = repeats,
/// group = key heads, head_dim), or the identity when repeats <= 1.
fn gather(c: &HarnessCase) -> Result<Option<Vec<usize>>> {
    let [hd, nk, rep] = c.perm;
    if c.inverse || rep <= 1 {
        return Ok(None);
    }
    if hd == 0 || hd * nk * rep != c.k {
        fail!(
            DumpFormat,
            format!("case {}", c.name),
            "case {}: perm {:?} does not tile k = {}",
            c.name,
            c.perm,
            c.k
        );
    }
    let t = HeadTiling {
        tile: rep,
        group: nk,
    };
    Ok(Some((0..c.k).map(|j| perm_row(t, hd, j)).collect()))
}

/// The f64 rotation of a whole case input (token-major k*T, already bf16-rounded) under `v`.
pub fn rotation_reference(
    c: &HarnessCase,
    x: &[f64],
    signs: &[f64],
    v: HarnessVariant,
) -> Result<Vec<f64>> {
    let (k, t) = (c.k, c.tokens);
    if x.len() != k * t || signs.len() != k {
        fail!(
            DumpFormat,
            format!("case {}", c.name),
            "case {}: sizes do not match k = {k}, T = {t}",
            c.name
        );
    }
    let g = if v == HarnessVariant::PMissing {
        None
    } else {
        gather(c)?
    };
    let at = |col: usize, tok: usize| {
        if v == HarnessVariant::Transposed {
            col * t + tok
        } else {
            tok * k + col
        }
    };
    let unnorm = v == HarnessVariant::UnnormalizedH;
    let mut out = vec![0.0; k * t];
    for tok in 0..t {
        let mut r: Vec<f64> = (0..k)
            .map(|j| x[at(g.as_ref().map_or(j, |g| g[j]), tok)])
            .collect();
        let signs_first = c.inverse == (v == HarnessVariant::SignsAfterRotation);
        if signs_first {
            r.iter_mut().zip(signs).for_each(|(a, s)| *a *= s);
            fwht(&mut r, BLOCK, unnorm)?;
        } else {
            fwht(&mut r, BLOCK, unnorm)?;
            r.iter_mut().zip(signs).for_each(|(a, s)| *a *= s);
        }
        for (j, val) in r.into_iter().enumerate() {
            out[at(j, tok)] = val;
        }
    }
    Ok(out)
}

/// The harness inputs of case `c`: (x, signs) as the harness writes them.
pub fn case_inputs(c: &HarnessCase) -> (Vec<f32>, Vec<f32>) {
    let xor = dumps().harness.lcg.signs_seed_xor;
    (
        lcg_values(c.seed, c.k * c.tokens),
        lcg_signs(c.seed ^ xor, c.k),
    )
}

/// What `dump-reference --format harness` can break on purpose (negative controls).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HarnessFault {
    /// No fault: the documented reference.
    #[default]
    None,
    /// Outputs (rotation cases and gemm y) computed with signs and rotation in the wrong order.
    SignsAfterRotation,
    /// Rotation cases with T >= 2 computed with the token layout taken as row-major `[k, T]`.
    // Only the `dump-reference` negative controls of tests and the `internals` API set these.
    #[cfg_attr(not(any(test, feature = "internals")), allow(dead_code))]
    Transposed,
}

fn f32_file(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes each of `files` into `dir` (created if absent), one atomic file at a time.
fn write_files(dir: &Path, files: &DirFiles) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::Error::io(crate::ErrorClass::IoWrite, dir, e))?;
    for (name, bytes) in files {
        crate::fsio::write_bytes_atomic(&dir.join(name), bytes)?;
    }
    Ok(())
}

/// The six rotation-harness case files (f64 reference rounded to bf16, stored f32), named
/// relative to the harness directory.
pub fn rotation_files(fault: HarnessFault) -> Result<DirFiles> {
    let v = match fault {
        HarnessFault::None => HarnessVariant::Documented,
        HarnessFault::SignsAfterRotation => HarnessVariant::SignsAfterRotation,
        HarnessFault::Transposed => HarnessVariant::Transposed,
    };
    let mut files = DirFiles::new();
    for c in &dumps().harness.rotation_cases {
        let (x, s) = case_inputs(c);
        let xb: Vec<f64> = x.iter().map(|&a| bf16_round(a as f64)).collect();
        let sd: Vec<f64> = s.iter().map(|&a| a as f64).collect();
        // A transposed fault only exists with two tokens or more; elsewhere write the truth.
        let vv = if HarnessVariant::wrong_for(c).contains(&v) {
            v
        } else {
            HarnessVariant::Documented
        };
        let y = rotation_reference(c, &xb, &sd, vv)?;
        files.push((format!("{}.in.f32", c.name).into(), f32_file(x)));
        files.push((format!("{}.signs.f32", c.name).into(), f32_file(s)));
        files.push((
            format!("{}.out.f32", c.name).into(),
            f32_file(y.iter().map(|&a| bf16_round(a) as f32)),
        ));
    }
    Ok(files)
}

/// Writes the six rotation-harness cases into `dir` (beside whatever it holds).
pub fn write_rotation(dir: &Path, fault: HarnessFault) -> Result<()> {
    write_files(dir, &rotation_files(fault)?)
}

/// Gate `engine_oracles` over a harness directory.
pub fn run(ctx: &Ctx<'_>, dir: &Path) -> Result<Finding> {
    let spec = &dumps().harness;
    let mut f = Finding::new("engine_oracles");
    let mut problems: Vec<String> = Vec::new();
    let mut checked = 0usize;
    let mut tally = OracleTally::default();
    let mut judge = |f: &mut Finding, name: String, doc: f64, wrongs: Vec<(&str, f64)>| {
        checked += 1;
        let (doc_ok, w) = tally.judge(doc, &wrongs);
        f.line(format!(
            "{name}: documented rel L2 {} -> {}; wrong variants: {w}",
            super::findings::round6(doc),
            if doc_ok { "ok" } else { "DIFFERS" },
        ));
    };
    let any_rotation = spec
        .rotation_cases
        .iter()
        .any(|c| dir.join(format!("{}.out.f32", c.name)).exists());
    if any_rotation {
        for c in &spec.rotation_cases {
            match rotation_case(dir, c) {
                Ok((doc, wrongs)) => judge(
                    &mut f,
                    format!("harness {} (k={}, T={})", c.name, c.k, c.tokens),
                    doc,
                    wrongs,
                ),
                Err(e) => problems.push(format!("harness case {}: {e:#}", c.name)),
            }
        }
    }
    if dir.join(&spec.gemm.y_file).exists() {
        match gemm_case(ctx, dir) {
            Ok((name, doc, wrongs)) => judge(&mut f, name, doc, wrongs),
            Err(e) => problems.push(format!("gemm oracle: {e:#}")),
        }
    }
    if !any_rotation && !dir.join(&spec.gemm.y_file).exists() {
        problems.push("no harness case files (<case>.out.f32) and no gemm.y.f32".into());
    }
    for p in &problems {
        f.line(p.clone());
    }
    tally.record(&mut f, checked);
    let passed = tally.passed;
    f.set_ok(problems.is_empty() && passed == checked);
    f.detail = format!(
        "{passed}/{checked} engine harness cases match the documented math with every wrong variant rejected"
    );
    Ok(f)
}

fn rotation_case(dir: &Path, c: &HarnessCase) -> Result<(f64, Wrongs)> {
    let (k, t) = (c.k, c.tokens);
    let inp = format!("{}.in.f32", c.name);
    let sf = format!("{}.signs.f32", c.name);
    let of = format!("{}.out.f32", c.name);
    let x = read_f32s(&read_dump_file(dir, &inp)?, &inp, k * t)?;
    let s = read_f32s(&read_dump_file(dir, &sf)?, &sf, k)?;
    let y = read_f32s(&read_dump_file(dir, &of)?, &of, k * t)?;
    let (wx, ws) = case_inputs(c);
    if x.iter().zip(&wx).any(|(a, b)| *a != *b as f64) {
        fail!(
            DumpFormat,
            &inp,
            "not the harness LCG input of seed {:#x}",
            c.seed
        );
    }
    if s.iter().zip(&ws).any(|(a, b)| *a != *b as f64) {
        fail!(DumpFormat, &sf, "not the harness LCG sign stream");
    }
    let xb: Vec<f64> = x.iter().map(|&a| bf16_round(a)).collect();
    let doc = rel_l2(
        &y,
        &rotation_reference(c, &xb, &s, HarnessVariant::Documented)?,
    );
    let mut wrongs = Vec::new();
    for v in HarnessVariant::wrong_for(c) {
        wrongs.push((v.name(), rel_l2(&rotation_reference(c, &xb, &s, v)?, &y)));
    }
    Ok((doc, wrongs))
}

/// (label, documented rel L2, wrong variants) of the gemm oracle.
fn gemm_case(ctx: &Ctx<'_>, dir: &Path) -> Result<(String, f64, Wrongs)> {
    let g = &dumps().harness.gemm;
    let object = match ctx.opts.oracle_object {
        Some(o) => o.to_string(),
        None => ctx.name(&g.gemm_object, None)?,
    };
    let mut rows = ctx.artifact_rows(&object)?;
    let (n, k) = (rows.n() as usize, rows.view.geom.k as usize);
    let rot = Rotation::from_artifact(ctx.artifact, &ctx.profile)?;
    let x = lcg_values(g.x_seed, k);
    if dir.join(&g.x_file).exists() {
        let got = read_f32s(&read_dump_file(dir, &g.x_file)?, &g.x_file, k)?;
        if got.iter().zip(&x).any(|(a, b)| *a != *b as f64) {
            fail!(
                DumpFormat,
                &g.x_file,
                "not the oracle's LCG x (seed {})",
                g.x_seed
            );
        }
    }
    let y = read_f32s(&read_dump_file(dir, &g.y_file)?, &g.y_file, n)?;
    let sets = gemm_inputs(&rot, &x)?;
    let ys = matmul_sets(
        &mut rows,
        &sets
            .iter()
            .map(|(_, u)| vec![u.clone()])
            .collect::<Vec<_>>(),
    )?;
    let doc = rel_l2(&y, &ys[0]);
    let wrongs = sets
        .iter()
        .zip(&ys)
        .skip(1)
        .map(|((name, _), yv)| (*name, rel_l2(yv, &y)))
        .collect();
    Ok((
        format!("gemm oracle {object} ([{n}, {k}], T=1)"),
        doc,
        wrongs,
    ))
}

/// The rotated inputs of the gemm oracle: documented first, then the wrong variants.
pub fn gemm_inputs(rot: &Rotation, x: &[f32]) -> Result<Vec<(&'static str, Vec<f64>)>> {
    let k = x.len();
    let s = rot.signs_for(k, false)?;
    let xb: Vec<f64> = x.iter().map(|&a| bf16_round(a as f64)).collect();
    let rotate = |signs_first: bool, with_signs: bool, unnorm: bool| -> Result<Vec<f64>> {
        let mut v = xb.clone();
        if signs_first && with_signs {
            v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
        }
        fwht(&mut v, rot.block, unnorm)?;
        if !signs_first && with_signs {
            v.iter_mut().zip(&s).for_each(|(a, b)| *a *= b);
        }
        // the kernel stores the rotated activation as bf16 before the GEMM
        Ok(v.into_iter().map(bf16_round).collect())
    };
    Ok(vec![
        ("documented", rotate(true, true, false)?),
        ("no_rotation", xb.clone()),
        ("no_signs", rotate(true, false, false)?),
        ("unnormalized_h", rotate(true, true, true)?),
        ("signs_after_rotation", rotate(false, true, false)?),
    ])
}

/// The gemm-oracle files for `object` (payload, signs, x, bf16 reference y), named relative to
/// the harness directory.
pub fn gemm_files(
    artifact: &crate::ninfer::Artifact<'_>,
    object: &str,
    fault: HarnessFault,
) -> Result<DirFiles> {
    let p = super::profile_for_artifact(artifact)?;
    let format = super::artifact_format(artifact).ok_or_else(super::no_ternary)?;
    let blocks = super::rows::Blocks::for_format(format)?;
    let view = artifact.row_split(object)?;
    let payload = view.bytes;
    let mut rows = super::rows::ArtifactRows::new(view, blocks)?;
    let k = rows.view.geom.k as usize;
    let rot = Rotation::from_artifact(artifact, &p)?;
    let g = &dumps().harness.gemm;
    let x = lcg_values(g.x_seed, k);
    let sets = gemm_inputs(&rot, &x)?;
    let pick = match fault {
        HarnessFault::SignsAfterRotation => 4,
        _ => 0,
    };
    let ys = matmul_sets(&mut rows, &[vec![sets[pick].1.clone()]])?;
    let signs = rot.signs_for(k, false)?.into_iter().map(|a| a as f32);
    Ok(vec![
        (g.payload_file.clone().into(), payload.to_vec()),
        (g.signs_file.clone().into(), f32_file(signs)),
        (g.x_file.clone().into(), f32_file(x)),
        (
            g.y_file.clone().into(),
            f32_file(ys[0].iter().map(|&a| bf16_round(a) as f32)),
        ),
    ])
}

/// Writes the gemm-oracle files for `object` into `dir` (beside whatever it holds).
pub fn write_gemm(
    artifact: &crate::ninfer::Artifact<'_>,
    dir: &Path,
    object: &str,
    fault: HarnessFault,
) -> Result<()> {
    write_files(dir, &gemm_files(artifact, object, fault)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::gates;

    #[test]
    fn kernel_permutation_formula_equals_perm_row() {
        // ternary_rotation_kernels.cuh: hd = j % perm_hd, q = j / perm_hd,
        // source = hd + perm_hd * (q / rep) + perm_hd * perm_nk * (q % rep)
        let c = dumps()
            .harness
            .rotation_cases
            .iter()
            .find(|c| c.name == "perm_t1")
            .unwrap();
        let g = gather(c).unwrap().unwrap();
        let [hd, nk, rep] = c.perm;
        for (j, &s) in g.iter().enumerate() {
            let q = j / hd;
            assert_eq!(s, j % hd + hd * (q / rep) + hd * nk * (q % rep));
        }
    }

    #[test]
    fn lcg_first_values() {
        // state1 = 0x1234 * 1664525 + 1013904223 (mod 2^32), by hand in u64
        let s1 = ((0x1234u64 * 1664525 + 1013904223) % (1u64 << 32)) as u32;
        let want = ((s1 >> 8) & 0xffff) as f32 / 32768.0 - 1.0;
        assert_eq!(lcg_values(0x1234, 1)[0], want);
        let s1 = (((0x1234u64 ^ 0x51) * 1664525 + 1013904223) % (1u64 << 32)) as u32;
        assert_eq!(
            lcg_signs(0x1234 ^ 0x51, 1)[0],
            if (s1 >> 16) & 1 == 1 { -1.0 } else { 1.0 }
        );
    }

    #[test]
    fn rotation_harness_round_trip_and_negative_controls() {
        let base = std::env::temp_dir().join(format!("nt-harness-{}", std::process::id()));
        let ok = base.join("ok");
        write_rotation(&ok, HarnessFault::None).unwrap();
        for c in &dumps().harness.rotation_cases {
            let (doc, wrongs) = rotation_case(&ok, c).unwrap();
            assert!(
                doc <= gates().thresholds.oracle_documented_rel_l2_max,
                "{} {doc}",
                c.name
            );
            for (n, r) in wrongs {
                assert!(
                    r >= gates().thresholds.oracle_wrong_rel_l2_min,
                    "{} {n} {r}",
                    c.name
                );
            }
        }
        for fault in [HarnessFault::SignsAfterRotation, HarnessFault::Transposed] {
            let d = base.join(format!("{fault:?}"));
            write_rotation(&d, fault).unwrap();
            let mut failed = 0;
            for c in &dumps().harness.rotation_cases {
                let (doc, _) = rotation_case(&d, c).unwrap();
                if doc > gates().thresholds.oracle_documented_rel_l2_max {
                    failed += 1;
                }
            }
            let want = if fault == HarnessFault::Transposed {
                3
            } else {
                6
            };
            assert_eq!(failed, want, "{fault:?}");
        }
        // a truncated output file is an error, not a panic
        let c = &dumps().harness.rotation_cases[0];
        let p = ok.join(format!("{}.out.f32", c.name));
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() - 4]).unwrap();
        assert!(rotation_case(&ok, c).is_err());
        let _ = std::fs::remove_dir_all(&base);
    }
}
