//! `mul_mat_planes` (#33): a `.ninfer` row-split object times T token-major activations. The
//! reference and the tokens-in-the-inner-loop kernel pass every case; each wrong kernel, right on
//! token 0, fails with its first failing element in token 1 or later (or, writing y token-minor,
//! named `output.row_major`), and passes every T = 1 case
//! (the mul_mat_vec_planes shapes rebuilt as one-token mul_mat_planes cases), so only the T > 1
//! cases catch it. Needs a host C++ compiler, like tests/it/kernels.rs.

use super::fixtures::host_ready;
use crate::cuda::check::{self, HostSetup};
use crate::cuda::format::KernelFormat;
use crate::cuda::generate::{self, Scales, Shape};
use crate::cuda::{self, KernelCase, KernelClass, Role, Status};

/// The fixed mul_mat_vec_planes shapes (alignment gaps, objects placed past unrelated bytes,
/// special scales, a 5120-wide row) as one-token mul_mat_planes cases.
fn one_token_cases(format: KernelFormat) -> Vec<KernelCase> {
    generate::matrix(KernelClass::MulMatVecPlanes, format)
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let s = Shape {
                n: c.dims.n,
                k: c.dims.k,
                t: 1,
                extra: 0,
                prefix: c.obj_prefix,
            };
            let sc = if i == 3 { Scales::All } else { Scales::Signed };
            let name = c.name.replace("mul_mat_vec_planes", "mul_mat_planes_t1");
            generate::build(
                name,
                KernelClass::MulMatPlanes,
                format,
                &s,
                sc,
                900 + i as u64,
            )
            .unwrap()
        })
        .collect()
}

/// The token of a failure's first failing element ("... (token 1, row 0) ...").
fn first_token(detail: &str) -> Option<u64> {
    let at = detail.find("(token ")? + "(token ".len();
    let digits: String = detail[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

#[test]
fn the_first_failing_token_is_read_from_the_detail() {
    assert_eq!(
        first_token("first differing element 13 (token 1, row 0): got"),
        Some(1)
    );
    assert_eq!(first_token("first differing element 13 (row 0): got"), None);
}

#[test]
fn mul_mat_planes_wrong_kernels_fail_on_a_later_token_and_pass_every_one_token_case() {
    if !host_ready() {
        return;
    }
    let kernels: Vec<cuda::Builtin> = cuda::builtins()
        .unwrap()
        .into_iter()
        .filter(|k| k.class == KernelClass::MulMatPlanes)
        .collect();
    let wrong = kernels.iter().filter(|k| k.is_wrong()).count();
    let correct = kernels.len() - wrong;
    assert!(
        wrong >= 4 && correct >= 4,
        "{wrong} wrong, {correct} correct"
    );
    let setup = HostSetup {
        timeout: cuda::host_timeout(),
        ..Default::default()
    };
    for k in &kernels {
        let src = cuda::sources::builtin_resolved(&k.source).unwrap();
        let mut cases = Vec::new();
        for &f in &k.formats {
            cases.extend(one_token_cases(f));
            cases.extend(cuda::cases_for(KernelClass::MulMatPlanes, &[f]).unwrap());
        }
        let rs = check::run_host(&src, &k.entry, &k.abi, &cases, &setup).unwrap();
        assert_eq!(rs.len(), cases.len());
        let mut caught = 0;
        for (c, r) in cases.iter().zip(&rs) {
            let (t1, pass) = (c.dims.t == 1, r.status == Status::Pass);
            match &k.role {
                Role::Wrong { .. } if t1 => {
                    assert!(pass, "{} on {}: {}", k.entry, c.name, r.detail)
                }
                Role::Wrong { looks_like, .. } => {
                    if !pass {
                        caught += 1;
                        // The reason names the token; a kernel that reads a later token wrongly
                        // fails first there, one that writes token-minor is named as doing so
                        // (its first wrong element is (token 0, row 1), holding (token 1, row 0)).
                        let tok = first_token(&r.detail);
                        let named = match looks_like {
                            Some(l) => tok.is_some() && r.looks_like.contains(&l.as_str()),
                            None => tok.is_some_and(|t| t >= 1),
                        };
                        assert!(named, "{} on {}: {}", k.entry, c.name, r.detail);
                    }
                }
                _ => assert!(pass, "{} on {}: {}", k.entry, c.name, r.detail),
            }
        }
        if k.is_wrong() {
            // Every fixed case with T > 1 catches it (the stride bug included: k_pad / 4 is
            // never k_pad).
            let many = cases.iter().filter(|c| c.dims.t > 1).count();
            assert_eq!(caught, many, "{}", k.entry);
        }
    }
}
