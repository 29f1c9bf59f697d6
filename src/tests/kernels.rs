//! Kernel conformance, host tier: every reference and correct-but-unusual kernel passes every
//! case of its class and formats; every wrong variant (spec/kernel_variants.json) is caught with
//! its expected verdict and diagnosis; the verdict table in conformance/KERNELS.md is the one the
//! run produces; bad kernels (compile error, missing entry, wrong signature, hang, deadlock,
//! out-of-bounds read and write, misaligned load, race, unsupported feature) get their error
//! class. Needs a host C++ compiler; without one this test FAILS unless
//! NINFER_SKIP_HOST_KERNELS=1 says to skip it.

use std::collections::BTreeSet;
use std::io::Write;
use std::time::{Duration, Instant};

use super::fixtures::host_ready;
use crate::cuda::check::{self, HostSetup};
use crate::cuda::format::KernelFormat;
use crate::cuda::suite::{markdown_table, run_builtins_host};
use crate::cuda::{self, KernelAbi, KernelClass, Precision, Role, Status};
use crate::error::ErrorClass;

/// Prints past libtest's output capture, so the counts show in a plain `cargo test`.
fn report(line: String) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn kernels_md() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/conformance/KERNELS.md"
    ))
    .unwrap()
}

const TABLE_BEGIN: &str = "<!-- BEGIN GENERATED: kernel_verdicts (check-kernel --builtin --tier host --markdown FILE) -->\n";
const TABLE_END: &str = "<!-- END GENERATED: kernel_verdicts -->";

#[test]
fn every_shipped_kernel_behaves_as_its_table_says_and_kernels_md_shows_that_run() {
    if !host_ready() {
        return;
    }
    let t0 = Instant::now();
    let vs = run_builtins_host(&[], None, 1, cuda::host_timeout()).unwrap();
    let bad: Vec<String> = vs
        .iter()
        .filter(|v| !v.ok)
        .map(|v| format!("{}: {}", v.kernel.entry, v.what))
        .collect();
    let (refs, unusual, wrong) = (
        vs.iter()
            .filter(|v| matches!(v.kernel.role, Role::Reference))
            .count(),
        vs.iter()
            .filter(|v| matches!(v.kernel.role, Role::Unusual { .. }))
            .count(),
        vs.iter().filter(|v| v.kernel.is_wrong()).count(),
    );
    report(format!(
        "host tier: {refs} reference + {unusual} correct-but-unusual kernels pass, {wrong} wrong variants caught as expected ({} case runs); {:.1} s",
        vs.iter().map(|v| v.cases).sum::<usize>(),
        t0.elapsed().as_secs_f64()
    ));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Coverage: every class and spec format has a reference kernel and a wrong variant; every
    // bug kind and every verdict class the checker can give is exercised by some wrong variant.
    for c in KernelClass::ALL {
        for f in &cuda::format::class_formats(c).unwrap() {
            let has = |wrong: bool| {
                vs.iter().any(|v| {
                    v.kernel.class == c
                        && v.kernel.formats.contains(f)
                        && v.kernel.is_wrong() == wrong
                        && v.cases > 0
                })
            };
            assert!(has(false), "{} / {f}: no reference kernel ran", c.name());
            assert!(has(true), "{} / {f}: no wrong variant", c.name());
        }
    }
    let verdicts: BTreeSet<&str> = vs
        .iter()
        .filter(|v| v.kernel.is_wrong())
        .map(|v| v.verdict.as_str())
        .collect();
    for want in [
        "mismatch",
        "kernel.out_of_bounds_read",
        "kernel.out_of_bounds",
        "kernel.misaligned",
        "kernel.nondeterministic",
    ] {
        assert!(
            verdicts.contains(want),
            "no wrong variant is caught as {want}: {verdicts:?}"
        );
    }
    let kinds: BTreeSet<String> = vs
        .iter()
        .filter_map(|v| match &v.kernel.role {
            Role::Wrong { kind, .. } => Some(kind.clone()),
            _ => None,
        })
        .collect();
    for want in [
        "value-map",
        "layout",
        "shape",
        "memory",
        "concurrency",
        "precision",
        "arch",
    ] {
        assert!(kinds.contains(want), "no wrong variant of kind {want}");
    }
    // The table in KERNELS.md is this run's.
    let md = kernels_md();
    let start = md
        .find(TABLE_BEGIN)
        .expect("KERNELS.md has the generated verdict table")
        + TABLE_BEGIN.len();
    let end = start + md[start..].find(TABLE_END).expect("end marker");
    let table = markdown_table(&vs);
    assert!(
        md[start..end] == table,
        "conformance/KERNELS.md's verdict table is stale: regenerate it with `ninfer-ternary check-kernel --builtin --tier host --markdown FILE` and paste FILE between the markers"
    );
}

fn first_case(class: KernelClass, format: KernelFormat) -> Vec<cuda::KernelCase> {
    cuda::cases_for(class, &[format]).unwrap()[..1].to_vec()
}

fn run(
    src: &str,
    class: KernelClass,
    cases: &[cuda::KernelCase],
    timeout_s: u64,
) -> Result<Vec<cuda::CaseResult>, crate::Error> {
    cuda::run_host(src, "k", class, cases, Duration::from_secs(timeout_s))
}

#[test]
fn bad_kernels_get_their_error_class() {
    if !host_ready() {
        return;
    }
    let d = KernelClass::Dequantize;
    let cases = first_case(d, KernelFormat::PQ2_0);
    let ok_sig = "extern \"C\" __global__ void k(const unsigned char* b, float* y, int n)";
    let refused = |src: &str, entry: &str| {
        cuda::run_host(src, entry, d, &cases, Duration::from_secs(30)).unwrap_err()
    };
    assert_eq!(
        refused(&format!("{ok_sig} {{ y[0] = undefined_thing; }}"), "k").class(),
        ErrorClass::KernelCompile
    );
    assert_eq!(
        refused(&format!("{ok_sig} {{ }}"), "nope").class(),
        ErrorClass::KernelEntryMissing
    );
    let e = refused(
        "extern \"C\" __global__ void k(const unsigned char* b, float* y, long long n) {}",
        "k",
    );
    assert_eq!(e.class(), ErrorClass::KernelSignature, "{e}");
    assert!(e.detail().contains("int"), "{e}");
    // Features the host tier does not emulate are kernel.unsupported (SKIPPED), not failures.
    let e = refused(
        &format!("{ok_sig} {{ asm volatile(\"membar.gl;\"); y[0] = 0; }}"),
        "k",
    );
    assert_eq!(e.class(), ErrorClass::KernelUnsupported, "{e}");
    // Per-case errors: (source body, timeout, class).
    let body = |b: &str| format!("{ok_sig} {{ {b} }}");
    for (src, t, class) in [
        // A thread that never reaches the barrier the others wait at.
        (body("if (threadIdx.x == 0) { for (;;) {} } __syncthreads();"), 3, ErrorClass::KernelTimeout),
        // Threads waiting at two different barriers: no thread can go on.
        // (barriers are told apart by their source line, so they are on lines of their own).
        (body("if (threadIdx.x < 64) {\n __syncthreads();\n } else {\n __syncthreads();\n __syncthreads();\n }"), 30, ErrorClass::KernelDeadlock),
        // Writes past / before its output.
        (body("y[(long long)n * 128 + threadIdx.x] = 1.0f;"), 30, ErrorClass::KernelOutOfBounds),
        (body("y[-1] = 1.0f;"), 30, ErrorClass::KernelOutOfBounds),
        // Writes into its input.
        (body("((unsigned char*)b)[threadIdx.x] = 0; y[threadIdx.x] = 0;"), 30, ErrorClass::KernelOutOfBounds),
        // Reads one block past the input's end (a prefetch of the next block).
        // (volatile: the load stays, as the GPU's ld.global would, though its value is unused).
        (body("int i = blockIdx.x; volatile const unsigned char* vb = b; unsigned char next = vb[(i + 1) * 34]; (void)next; for (int j = threadIdx.x; j < 128; j += blockDim.x) y[i * 128 + j] = nt_q2_elem(b + i * 34, j);"), 30, ErrorClass::KernelOutOfBoundsRead),
        // A 16-byte vector load at a 34-byte block offset.
        (body("int i = blockIdx.x; uint4 v = *(const uint4*)(b + i * 34 + 2); for (int j = threadIdx.x; j < 128; j += blockDim.x) y[i * 128 + j] = nt_q2_elem(b + i * 34, j) + (float)(v.x & 0);"), 30, ErrorClass::KernelMisaligned),
        // A race: every thread writes element 0 of its block's output from a different value.
        (body("int i = blockIdx.x; for (int j = threadIdx.x; j < 128; j += blockDim.x) y[i * 128 + j] = nt_q2_elem(b + i * 34, j); __shared__ float s; s = (float)threadIdx.x; if (threadIdx.x == 5) y[i * 128] = s;"), 30, ErrorClass::KernelNondeterministic),
        // A wild write far outside every buffer.
        (body("*(volatile float*)16 = 1.0f;"), 30, ErrorClass::KernelCrash),
    ] {
        let src = cuda::sources::resolve(&format!("#include \"common.cuh\"\n{src}"), "test.cu", &|_, _| Ok(cuda::sources::Lookup::Missing), &[]).unwrap();
        let r = run(&src, d, &cases, t).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(r[0].status, Status::Error(class), "{src}\n{}", r[0].detail);
    }
    // Writes nothing: the pre-filled sentinel (NaN) fails the exact comparison.
    let r = run(&body(""), d, &cases, 30).unwrap();
    assert_eq!(r[0].status, Status::Fail, "{}", r[0].detail);
}

/// `--random N --seed S` over reference kernels passes and over wrong variants fails (a small
/// N here; .ci/run runs the fixed matrix plus the default random batch over every shipped kernel).
#[test]
fn random_cases_pass_the_references_and_catch_the_wrong_variants() {
    if !host_ready() {
        return;
    }
    let only: Vec<String> = [
        "ref_mul_mat_pq2_0",
        "ref_hadamard_rotate",
        "ref_mul_mat_vec_planes_ptq1_0_g128",
        "wrong_mul_mat_ptq1_0_tokens_mod4",
        "wrong_hadamard_rotate_fixed_1024",
        "wrong_dequantize_pq2_0_abs_scale",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let vs = run_builtins_host(&only, Some(12), 3, cuda::host_timeout()).unwrap();
    assert_eq!(vs.len(), only.len());
    for v in &vs {
        assert!(v.ok, "{}: {}", v.kernel.entry, v.what);
        assert_eq!(v.cases, 12 + model_cases(&v.kernel));
    }
}

/// The real-model-scale fixed cases a `--random` run of `k` adds.
fn model_cases(k: &cuda::Builtin) -> usize {
    k.formats
        .iter()
        .map(|f| cuda::generate::model_scale(k.class, *f).unwrap().len())
        .sum()
}

/// The two worked examples of conformance/KERNELS.md (an engine-style dequantizer behind a
/// thin ABI wrapper; an engine mat-vec with bf16 activations and outputs, warp shuffles and its
/// own launch, judged unchanged through a sidecar) really pass, and the doc shows their output.
#[test]
fn kernels_md_worked_examples_pass_on_the_host_tier() {
    if !host_ready() {
        return;
    }
    let md = kernels_md();
    let blocks: Vec<&str> = md
        .split("```cuda\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert!(blocks.len() >= 2, "two cuda examples");
    let class = KernelClass::Dequantize;
    let cases = cuda::cases_for(class, &[KernelFormat::PTQ1_0]).unwrap();
    let rs = cuda::run_host(
        blocks[0],
        "wrapped_dequantize_ptq1_0",
        class,
        &cases[..2],
        cuda::host_timeout(),
    )
    .unwrap();
    for r in &rs {
        assert_eq!(r.status, Status::Pass, "{}: {}", r.case, r.detail);
        assert!(
            md.contains(&format!("PASS {}: {}", r.case, r.detail)),
            "KERNELS.md shows another result for {}",
            r.case
        );
    }
    // The full matrix: the hand-written f16 conversion of the example fails the special scales,
    // and the doc says so.
    let all = cuda::run_host(
        blocks[0],
        "wrapped_dequantize_ptq1_0",
        class,
        &cases,
        cuda::host_timeout(),
    )
    .unwrap();
    let failing: Vec<&str> = all
        .iter()
        .filter(|r| r.failed())
        .map(|r| r.case.as_str())
        .collect();
    assert!(
        !failing.is_empty() && md.contains(&format!("FAIL {}", failing[0])),
        "{failing:?}"
    );
    // The bf16 + warp-shuffle example with its sidecar (the JSON block after it).
    let json_start = md.find("```json\n").expect("sidecar block") + 8;
    let sidecar: cuda::kernel_abi::AbiSidecar =
        serde_json::from_str(&md[json_start..json_start + md[json_start..].find("```").unwrap()])
            .unwrap();
    let abi = KernelAbi::from_sidecar(KernelClass::MulMatVec, &sidecar, None).unwrap();
    assert_eq!(abi.precision, Precision::parse("bf16-in+bf16-out").unwrap());
    let cases = cuda::cases_for(KernelClass::MulMatVec, &[KernelFormat::PQ2_0]).unwrap();
    let rs = check::run_host(
        blocks[1],
        sidecar.entry.as_deref().unwrap(),
        &abi,
        &cases,
        &HostSetup::default(),
    )
    .unwrap();
    for r in &rs {
        assert_eq!(r.status, Status::Pass, "{}: {}", r.case, r.detail);
    }
    // Negative control: the same kernel judged under f32 outputs fails (its outputs are bf16).
    let strict = KernelAbi::from_sidecar(
        KernelClass::MulMatVec,
        &sidecar,
        Some(Precision::parse("bf16-in").unwrap()),
    );
    assert!(
        strict.is_err(),
        "y is __nv_bfloat16*: an f32-output mode must be refused as a usage error"
    );
}

/// The device tier: runs where cudarc finds a driver and a device (feature `cuda`); reports
/// "not run" otherwise. Never counted as a pass when it did not run.
#[test]
fn device_tier_where_a_gpu_exists() {
    let abi = KernelAbi::default_for(KernelClass::Dequantize, Precision::F32).unwrap();
    if let Err(e) = cuda::run_device("", "x", &abi, &[]) {
        if e.class() == ErrorClass::KernelTierUnavailable {
            report(format!("device tier: NOT RUN ({e})"));
            return;
        }
    }
    let mut problems = Vec::new();
    for b in cuda::builtins().unwrap() {
        let src = cuda::sources::builtin_resolved(&b.source).unwrap();
        let cases = cuda::cases_for(b.class, &b.formats).unwrap();
        match cuda::run_device(&src, &b.entry, &b.abi, &cases) {
            Ok(rs) => {
                let v = cuda::suite::judge_builtin(&b, &rs, false);
                if !v.ok {
                    problems.push(format!("{}: {}", b.entry, v.what));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", b.entry)),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The compile tier's bad-input classes (feature `cuda`; NVRTC from scripts/setup-cuda.sh on
/// LD_LIBRARY_PATH). Without NVRTC it says NOT RUN; `.ci/run` runs the tier for real.
#[cfg(feature = "cuda")]
#[test]
fn compile_tier_bad_kernels_get_their_error_class() {
    if let Err(e) = cuda::nvrtc::available() {
        report(format!("compile tier: NOT RUN ({e})"));
        return;
    }
    let sig: Vec<String> = KernelClass::Dequantize
        .spec()
        .args
        .iter()
        .map(|a| a.ty.clone())
        .collect();
    let arch = vec!["sm_90".to_string()];
    let ok =
        "extern \"C\" __global__ void k(const unsigned char* b, float* y, int n) { y[0] = b[0]; }";
    assert!(cuda::compile_nvrtc(ok, "k", &sig, &arch, &[]).is_ok());
    let e = cuda::compile_nvrtc(ok, "nope", &sig, &arch, &[]).unwrap_err();
    assert_eq!(e.class(), ErrorClass::KernelEntryMissing, "{e}");
    let e = cuda::compile_nvrtc(&ok.replace("int n", "long long n"), "k", &sig, &arch, &[])
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::KernelSignature, "{e}");
    let e = cuda::compile_nvrtc(
        &ok.replace("b[0]", "undefined_thing"),
        "k",
        &sig,
        &arch,
        &[],
    )
    .unwrap_err();
    assert_eq!(e.class(), ErrorClass::KernelCompile, "{e}");
    report(
        "compile tier: NVRTC bad-input classes checked (compile, entry_missing, signature)".into(),
    );
}

/// `--random N` carries the real-model-scale fixed cases, so the two wrong kernels whose bug
/// needs a model shape (x cached in 8192 floats, u16 row ids) are caught by a random run too,
/// by a model-scale case; the random cases alone (`--case r<seed>_` keeps only them, the old
/// random mode) pass both, which is why the model cases are carried.
#[test]
fn random_runs_carry_the_model_scale_cases_and_catch_the_model_shape_bugs() {
    // The command-line half is the same-named test in tests/it/kernels.rs.
    if !host_ready() {
        return;
    }
    let only: Vec<String> = [
        "wrong_mul_mat_vec_pq2_0_x_cache8192",
        "wrong_get_rows_pq2_0_ids_u16",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let vs = run_builtins_host(&only, Some(8), 2, cuda::host_timeout()).unwrap();
    for v in &vs {
        assert!(v.ok, "{}: {}", v.kernel.entry, v.what);
        assert_eq!(v.cases, 8 + model_cases(&v.kernel), "{}", v.kernel.entry);
        let first = v.first_case.as_deref().unwrap_or("");
        assert!(first.starts_with("g_"), "{}: {first}", v.kernel.entry);
    }
}
