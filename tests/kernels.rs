//! Kernel conformance, host tier: every reference kernel passes every case of its class and
//! formats; every wrong variant (negative control) fails exactly the cases spec/kernels.json
//! names; bad kernels (compile error, missing entry, wrong signature, hang, out-of-bounds
//! write) get their error class. Needs a host C++ compiler; without one this test FAILS unless
//! NINFER_SKIP_HOST_KERNELS=1 says to skip it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ninfer_ternary::cuda::{self, sources, KernelClass, Status};
use ninfer_ternary::error::ErrorClass;

fn host_ready() -> bool {
    match cuda::host::available() {
        Ok(_) => true,
        Err(e) if std::env::var("NINFER_SKIP_HOST_KERNELS").as_deref() == Ok("1") => {
            eprintln!("SKIPPED host kernel tier (NINFER_SKIP_HOST_KERNELS=1): {e}");
            false
        }
        Err(e) => panic!("host kernel tier needs a C++ compiler: {e} (set NINFER_SKIP_HOST_KERNELS=1 to skip explicitly)"),
    }
}

#[test]
fn every_reference_passes_and_every_wrong_variant_fails_exactly_its_cases() {
    if !host_ready() {
        return;
    }
    let t0 = Instant::now();
    let builtins = cuda::builtins();
    // Compile + run kernels two at a time (the machine has few cores; each kernel is independent).
    let results: Vec<_> = std::thread::scope(|s| {
        let chunks: Vec<_> = builtins.chunks(builtins.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|b| {
                            let src = sources::builtin_resolved(&b.source).unwrap();
                            let cases = cuda::cases_for(b.class, &b.formats);
                            let r = cuda::run_host(
                                &src,
                                &b.entry,
                                b.class,
                                &cases,
                                cuda::host_timeout(),
                            )
                            .unwrap_or_else(|e| panic!("{}: {e}", b.entry));
                            (b.clone(), r)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let (mut ref_cases, mut wrong_fail, mut wrong_pass, mut refs, mut wrongs) = (0, 0, 0, 0, 0);
    let mut problems = Vec::new();
    for (b, rs) in &results {
        assert!(!rs.is_empty(), "{} runs no case", b.entry);
        let failed: BTreeSet<&str> = rs
            .iter()
            .filter(|r| r.failed())
            .map(|r| r.case.as_str())
            .collect();
        match &b.must_fail {
            None => {
                refs += 1;
                ref_cases += rs.len();
                for r in rs.iter().filter(|r| r.failed()) {
                    problems.push(format!(
                        "reference {} FAILS {}: {}",
                        b.entry, r.case, r.detail
                    ));
                }
            }
            Some(must) => {
                wrongs += 1;
                let must: BTreeSet<&str> = must.iter().map(String::as_str).collect();
                if failed != must {
                    problems.push(format!(
                        "wrong variant {} fails {failed:?}, spec says {must:?}",
                        b.entry
                    ));
                }
                for r in rs {
                    if r.failed() {
                        assert_eq!(
                            r.status,
                            Status::Fail,
                            "{} on {}: {}",
                            b.entry,
                            r.case,
                            r.detail
                        );
                        wrong_fail += 1;
                    } else {
                        wrong_pass += 1;
                    }
                }
                for m in &must {
                    assert!(
                        rs.iter().any(|r| r.case == *m),
                        "{}: must_fail names unknown case {m}",
                        b.entry
                    );
                }
            }
        }
    }
    println!(
        "host tier: {refs} reference kernels passed {ref_cases}/{ref_cases} case runs; {wrongs} wrong variants failed {wrong_fail} case runs (exactly their named cases) and passed {wrong_pass} others; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every class and every spec format is covered by at least one reference kernel and one case.
    for c in KernelClass::ALL {
        for f in &c.spec().formats {
            assert!(
                results.iter().any(|(b, rs)| b.must_fail.is_none()
                    && b.class == c
                    && b.formats.contains(f)
                    && !rs.is_empty()),
                "{} / {f}: no reference kernel ran",
                c.name()
            );
        }
    }
}

fn bad_kernel(
    src: &str,
    entry: &str,
    class: KernelClass,
    timeout: Duration,
) -> Result<Vec<cuda::CaseResult>, ninfer_ternary::Error> {
    let cases = cuda::cases_for(class, &cuda::default_formats(class, Some("pq2_0")).unwrap());
    cuda::run_host(src, entry, class, &cases[..1], timeout)
}

#[test]
fn bad_kernels_get_their_error_class() {
    if !host_ready() {
        return;
    }
    let d = KernelClass::Dequantize;
    let ok_sig = "extern \"C\" __global__ void k(const unsigned char* b, float* y, int n)";
    // Does not compile.
    let e = bad_kernel(
        &format!("{ok_sig} {{ y[0] = undefined_thing; }}"),
        "k",
        d,
        Duration::from_secs(30),
    )
    .unwrap_err();
    assert_eq!(e.class, ErrorClass::KernelCompile, "{e}");
    // Entry missing.
    let e = bad_kernel(
        &format!("{ok_sig} {{ }}"),
        "nope",
        d,
        Duration::from_secs(30),
    )
    .unwrap_err();
    assert_eq!(e.class, ErrorClass::KernelEntryMissing, "{e}");
    // Wrong signature (n_blocks as long long).
    let e = bad_kernel(
        "extern \"C\" __global__ void k(const unsigned char* b, float* y, long long n) {}",
        "k",
        d,
        Duration::from_secs(30),
    )
    .unwrap_err();
    assert_eq!(e.class, ErrorClass::KernelSignature, "{e}");
    assert!(
        e.detail
            .contains("const unsigned char* blocks, float* y, int n_blocks"),
        "{e}"
    );
    // Hangs: a thread that never reaches the barrier the others wait at.
    let hang = format!("{ok_sig} {{ if (threadIdx.x == 0) {{ for (;;) {{}} }} __syncthreads(); }}");
    let r = bad_kernel(&hang, "k", d, Duration::from_secs(2)).unwrap();
    assert_eq!(
        r[0].status,
        Status::Error(ErrorClass::KernelTimeout),
        "{}",
        r[0].detail
    );
    // Writes past its output.
    let oob = format!("{ok_sig} {{ y[(long long)n * 128 + threadIdx.x] = 1.0f; }}");
    let r = bad_kernel(&oob, "k", d, Duration::from_secs(30)).unwrap();
    assert_eq!(
        r[0].status,
        Status::Error(ErrorClass::KernelOutOfBounds),
        "{}",
        r[0].detail
    );
    // Writes before its output.
    let oob = format!("{ok_sig} {{ y[-1] = 1.0f; }}");
    let r = bad_kernel(&oob, "k", d, Duration::from_secs(30)).unwrap();
    assert_eq!(
        r[0].status,
        Status::Error(ErrorClass::KernelOutOfBounds),
        "{}",
        r[0].detail
    );
    // Crashes (a wild write far outside every buffer).
    let crash = format!("{ok_sig} {{ *(volatile float*)16 = 1.0f; }}");
    let r = bad_kernel(&crash, "k", d, Duration::from_secs(30)).unwrap();
    assert_eq!(
        r[0].status,
        Status::Error(ErrorClass::KernelCrash),
        "{}",
        r[0].detail
    );
    // Writes nothing: the pre-filled sentinel (NaN) fails the exact comparison.
    let r = bad_kernel(&format!("{ok_sig} {{ }}"), "k", d, Duration::from_secs(30)).unwrap();
    assert_eq!(r[0].status, Status::Fail, "{}", r[0].detail);
}
