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

use crate::common::host_ready;
use ninfer_ternary::cuda::check::{self, HostSetup};
use ninfer_ternary::cuda::format::KernelFormat;
use ninfer_ternary::cuda::suite::{markdown_table, run_builtins_host};
use ninfer_ternary::cuda::{self, KernelAbi, KernelClass, Precision, Role, Status};
use ninfer_ternary::error::ErrorClass;

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
) -> Result<Vec<cuda::CaseResult>, ninfer_ternary::Error> {
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

fn cli(args: &[&str]) -> (i32, String) {
    let out = crate::common::cli().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn check_kernel_cli_locates_and_names_a_failure_and_keeps_its_exit_codes() {
    if !host_ready() {
        return;
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels");
    let wrong = format!("{dir}/wrong/ptq1_sequential.cu");
    // The sequential-trit wrong variant: every command below starts with these arguments.
    let check_wrong = [
        "check-kernel",
        "--source",
        &wrong,
        "--entry",
        "wrong_dequantize_ptq1_0_sequential",
        "--class",
        "dequantize",
        "--format",
        "ptq1_0",
        // wrong/ includes "../common.cuh": includes reach only the kernel's folder and -I.
        "-I",
        dir,
    ];
    let (code, out) = cli(&check_wrong);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("first failing case: y_dequantize_ptq1_0 -- first differing element")
            && out.contains("(block 0, element")
            && out.contains("looks like: base-3 digits read sequentially"),
        "{out}"
    );
    let reference = format!("{dir}/dequantize.cu");
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("ck.json");
    let check_ref = [
        "check-kernel",
        "--source",
        &reference,
        "--entry",
        "ref_dequantize_ptq1_0",
        "--class",
        "dequantize",
    ];
    let (code, out) = cli(&[
        &check_ref[..],
        &["--format", "ptq1_0", "--json", json.to_str().unwrap()],
    ]
    .concat());
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["status"], "passed");
    assert!(
        v["results"].as_array().unwrap().len() >= 5,
        "corpus + generated cases"
    );
    let _ = std::fs::remove_file(&json);
    // Usage: a class with several formats needs --format; a bad precision or sidecar is usage.
    assert_eq!(cli(&check_ref).0, 2);
    assert_eq!(
        cli(&[
            &check_ref[..],
            &["--format", "ptq1_0", "--precision", "bf16-in"]
        ]
        .concat())
        .0,
        2
    );
    // Sidecar formats are parsed once: one no kernel case uses is kernel.abi naming the field;
    // a known one given only there (no --format) runs as --format would.
    let sidecar = |formats: &str| {
        let p = json_dir.path().join(format!("abi_{}.json", formats.len()));
        std::fs::write(&p, format!(r#"{{"formats": [{formats}]}}"#)).unwrap();
        let no_format: Vec<&str> = check_wrong
            .iter()
            .copied()
            .filter(|a| !["--format", "ptq1_0"].contains(a))
            .collect();
        cli(&[&no_format[..], &["--abi", p.to_str().unwrap()]].concat())
    };
    let (code, out) = sidecar(r#""q8_0""#);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("[kernel.abi] formats: no kernel cases use format \"q8_0\""),
        "{out}"
    );
    let (code, out) = sidecar(r#""ptq1_0""#);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("first failing case: y_dequantize_ptq1_0"),
        "{out}"
    );
    // Random mode: a failure names the case to replay.
    let (code, out) = cli(&[&check_wrong[..], &["--random", "5", "--seed", "9"]].concat());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("replay: check-kernel ... --random 5 --seed 9 --case r9_"),
        "{out}"
    );
    // The device tier never passes where it cannot run.
    let abi = KernelAbi::default_for(KernelClass::Dequantize, Precision::F32).unwrap();
    if cuda::run_device("", "x", &abi, &[])
        .is_err_and(|e| e.class() == ErrorClass::KernelTierUnavailable)
    {
        let (code, out) =
            cli(&[&check_ref[..], &["--format", "ptq1_0", "--tier", "device"]].concat());
        assert_eq!(code, 2, "{out}");
        assert!(
            out.contains("SKIPPED") && !out.contains("RESULT: PASSED"),
            "{out}"
        );
    }
}

/// A random failure's printed replay command reproduces it alone: the case's shapes, data,
/// thread schedule and poison derive from (seed, case name), not from its position in the run.
/// The race's report names the random schedule's seed, so a positional seed would show here.
#[test]
fn a_random_failure_replays_alone_with_the_same_first_failing_element() {
    if !host_ready() {
        return;
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels");
    let src = format!("{dir}/wrong/concurrency.cu");
    let base = [
        "check-kernel",
        "--source",
        &src,
        "--entry",
        "wrong_mul_mat_vec_pq2_0_no_barrier_after_store",
        "--class",
        "mul_mat_vec",
        "--format",
        "pq2_0",
        "-I",
        dir,
        "--random",
        "6",
        "--seed",
        "5",
    ];
    let (code, all) = cli(&base);
    assert_eq!(code, 1, "{all}");
    let fails: Vec<&str> = all.lines().filter(|l| l.starts_with("FAIL ")).collect();
    // Failures past the first position of the run, each replayed alone.
    let later: Vec<&str> = fails
        .iter()
        .copied()
        .filter(|l| l.contains(" r5_") && !l.contains(" r5_0_"))
        .collect();
    assert!(!later.is_empty(), "{all}");
    for line in later {
        let case = line
            .split_whitespace()
            .find(|w| w.starts_with("r5_"))
            .unwrap()
            .trim_end_matches(':');
        let (code, alone) = cli(&[&base[..], &["--case", case]].concat());
        assert_eq!(code, 1, "{alone}");
        let replayed = alone.lines().find(|l| l.starts_with("FAIL ")).unwrap();
        assert_eq!(replayed, line, "replaying {case} alone");
        assert!(
            alone.contains(&format!(
                "replay: check-kernel ... --random 6 --seed 5 --case {case}"
            )),
            "{alone}"
        );
    }
    // The default run includes a random batch and says so; a failure there prints a replay
    // command without --random that reproduces it alone.
    let (code, out) = cli(&base[..11]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("plus 4 random per format, seed 1 (r1_*)"),
        "{out}"
    );
    let batch_fail = out
        .lines()
        .find(|l| l.starts_with("FAIL ") && l.contains(" r1_"))
        .expect("the default random batch catches the race");
    let case = batch_fail
        .split_whitespace()
        .find(|w| w.starts_with("r1_"))
        .unwrap()
        .trim_end_matches(':');
    let (code, alone) = cli(&[&base[..11], &["--seed", "1", "--case", case]].concat());
    assert_eq!(code, 1, "{alone}");
    assert_eq!(
        alone.lines().find(|l| l.starts_with("FAIL ")),
        Some(batch_fail)
    );
    assert!(
        alone.contains(&format!("replay: check-kernel ... --seed 1 --case {case}")),
        "{alone}"
    );
}

/// A sidecar binds engine scalars as integer expressions of the class vocabulary or literals
/// (`groups_per_row = k / 128`, `tokens = 1`) and accepts `std::` fixed-width spellings; a wrong
/// expression fails the kernel and a name outside the vocabulary is refused (kernel.abi).
#[test]
fn sidecar_args_take_integer_expressions_literals_and_std_types() {
    if !host_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("engine.cu");
    std::fs::write(
        &src,
        r#"#include <cstdint>
#include <cuda_fp16.h>
extern "C" __global__ void engine_mmv(const std::uint8_t* w, const float* x, float* y, std::int32_t groups_per_row, int tokens, int nrows) {
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= nrows || tokens != 1) return;
    const std::uint8_t* row = w + (long long)r * groups_per_row * 34;
    float acc = 0.f;
    for (int j = threadIdx.x; j < groups_per_row * 128; j += 32) {
        const std::uint8_t* b = row + (j / 128) * 34;
        float d = __half2float(__ushort_as_half((unsigned short)(b[0] | (b[1] << 8))));
        int e = j % 128;
        acc += (float)(((b[2 + e / 4] >> (2 * (e % 4))) & 3) - 1) * d * x[j];
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off, 32);
    if (threadIdx.x == 0) y[r] = acc;
}
"#,
    )
    .unwrap();
    let sidecar = |groups: &str, tokens: &str| {
        let p = dir
            .path()
            .join(format!("abi_{}.json", groups.len() + tokens.len()));
        std::fs::write(
            &p,
            format!(
                r#"{{"entry": "engine_mmv", "class": "mul_mat_vec", "formats": ["pq2_0"],
 "launch": {{"grid": ["ceil(n / 4)", 1, 1], "block": [32, 4, 1], "shared": 0}},
 "args": [{{"bind": "w", "type": "const std::uint8_t*"}}, {{"bind": "x", "type": "const float*"}}, {{"bind": "y", "type": "float*"}},
          {{"bind": "{groups}", "type": "std::int32_t"}}, {{"bind": "{tokens}", "type": "int"}}, {{"bind": "n", "type": "int"}}]}}"#
            ),
        )
        .unwrap();
        let (code, out) = cli(&[
            "check-kernel",
            "--source",
            src.to_str().unwrap(),
            "--abi",
            p.to_str().unwrap(),
        ]);
        (code, out)
    };
    let (code, out) = sidecar("k / 128", "1");
    assert_eq!(code, 0, "{out}");
    // Negative controls: half the groups, another token count, a name outside the vocabulary.
    let (code, out) = sidecar("k / 128 - 1", "1");
    assert_eq!(code, 1, "{out}");
    let (code, out) = sidecar("k / 128", "2");
    assert_eq!(code, 1, "{out}");
    let (code, out) = sidecar("groups / 2", "1");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("kernel.abi") && out.contains("\"groups / 2\""),
        "{out}"
    );
}

/// A sidecar binds a float parameter to a float expression of the class scalars (an engine's
/// `float scale = 1 / sqrt(B)`); an equal value written otherwise (`sqrt(block) / block`, a
/// literal where every case has the same B) passes, a wrong one (`1 / block`) fails and is named
/// as that normalization, and a float expression bound to an int is refused (kernel.abi).
#[test]
fn sidecar_args_take_float_expressions_for_float_parameters() {
    if !host_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("engine_fwht.cu");
    std::fs::write(
        &src,
        r#"extern "C" __global__ void engine_fwht(const float* x, const float* signs, float* y, int k, float scale, int B) {
    __shared__ float buf[1024];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * B;
    for (int i = threadIdx.x; i < B; i += blockDim.x) buf[i] = signs[blockIdx.x * B + i] * x[base + i];
    __syncthreads();
    for (int h = 1; h < B; h *= 2) {
        for (int p = threadIdx.x; p < B / 2; p += blockDim.x) {
            int i = (p / h) * 2 * h + p % h;
            float a = buf[i], b = buf[i + h];
            buf[i] = a + b;
            buf[i + h] = a - b;
        }
        __syncthreads();
    }
    for (int i = threadIdx.x; i < B; i += blockDim.x) y[base + i] = buf[i] * scale;
}
"#,
    )
    .unwrap();
    let run = |scale: &str, ty: &str, block: Option<&str>| {
        let p = dir
            .path()
            .join(format!("abi_{}.json", scale.len() * 7 + ty.len()));
        std::fs::write(
            &p,
            format!(
                r#"{{"entry": "engine_fwht", "class": "hadamard_rotate",
 "launch": {{"grid": ["k / block", "t", 1], "block": [256, 1, 1]}},
 "args": ["x", "signs", "y", "k", {{"bind": "{scale}", "type": "{ty}"}}, "block"]}}"#
            ),
        )
        .unwrap();
        let mut a = vec![
            "check-kernel",
            "--source",
            src.to_str().unwrap(),
            "--abi",
            p.to_str().unwrap(),
        ];
        if let Some(b) = block {
            a.extend(["--block", b]);
        }
        cli(&a)
    };
    let (code, out) = run("1 / sqrt(block)", "float", None);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run("sqrt(block) / block", "const float", None);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run("0.03125f", "float", Some("1024"));
    assert_eq!(code, 0, "{out}");
    let (code, out) = run("1 / block", "float", None);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("[hadamard.norm_1_over_b]"), "{out}");
    let (code, out) = run("0.03125f", "float", None);
    assert_eq!(code, 1, "a literal right for B = 1024 only: {out}");
    let (code, out) = run("1 / sqrt(block)", "int", None);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("kernel.abi") && out.contains("declare the parameter float"),
        "{out}"
    );
}

/// The int8-per-group activation modes (engines' dp4a paths): `i8g32-in` hands the kernel x as
/// groups of 32 `{float d; int8 qs[32]}`, `i8g32h-in` as `{half d; int8 qs[32]}` (ggml's
/// q8_0). An engine mat-vec summing each group in integers (`dw * dx * sum(c * q)`) passes
/// under the layout it reads; the same kernel reading the f16-scale layout fails under the
/// f32-scale mode (and the reverse), and an f32 kernel's outputs from unquantized x fail too.
#[test]
fn int8_group_activation_modes_judge_dp4a_style_kernels() {
    if !host_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("mmv_i8.cu");
    std::fs::write(
        &src,
        r#"#include <cuda_fp16.h>
extern "C" __global__ void mmv_i8(const unsigned char* w, const void* xv, float* y, int n, int k) {
    const unsigned char* xb = (const unsigned char*)xv;
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= n) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 34;
    float acc = 0.f;
    for (int g = threadIdx.x; g < k / 32; g += 32) {
        const unsigned char* b = row + (g / 4) * 34;
        float dw = __half2float(__ushort_as_half((unsigned short)(b[0] | (b[1] << 8))));
#if HALF_SCALE
        const unsigned char* xg = xb + (long long)g * 34;
        float dx = __half2float(__ushort_as_half((unsigned short)(xg[0] | (xg[1] << 8))));
        const signed char* q = (const signed char*)(xg + 2);
#else
        const unsigned char* xg = xb + (long long)g * 36;
        float dx = *(const float*)xg;
        const signed char* q = (const signed char*)(xg + 4);
#endif
        int isum = 0;
        for (int e = 0; e < 32; ++e) {
            int j = (g % 4) * 32 + e;
            isum += (((b[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * q[e];
        }
        acc += dw * dx * (float)isum;
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off, 32);
    if (threadIdx.x == 0) y[r] = acc;
}
"#,
    )
    .unwrap();
    let abi = dir.path().join("mmv_i8.json");
    std::fs::write(
        &abi,
        r#"{"entry": "mmv_i8", "class": "mul_mat_vec", "formats": ["pq2_0"],
 "launch": {"grid": ["ceil(n / 4)", 1, 1], "block": [32, 4, 1]},
 "args": ["w", "x", "y", "n", "k"]}"#,
    )
    .unwrap();
    let run = |half: bool, precision: &str| {
        let def = format!("HALF_SCALE={}", half as u8);
        let (code, out) = cli(&[
            "check-kernel",
            "--source",
            src.to_str().unwrap(),
            "--abi",
            abi.to_str().unwrap(),
            "-D",
            &def,
            "--precision",
            precision,
        ]);
        (code, out)
    };
    let (code, out) = run(false, "i8g32-in");
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(true, "i8g32h-in");
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(true, "i8g32-in");
    assert_eq!(code, 1, "f16-scale layout under the f32-scale mode: {out}");
    let (code, out) = run(false, "i8g32h-in");
    assert_eq!(code, 1, "f32-scale layout under the f16-scale mode: {out}");
    // Modes combine: i8g32-in+bf16-out wants a bf16 y this kernel does not declare.
    let (code, out) = run(false, "i8g32-in+bf16-out");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("kernel.signature") && out.contains("__nv_bfloat16*"),
        "{out}"
    );
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

/// `--random N` carries the real-model-scale fixed cases, so the two wrong kernels whose bug
/// needs a model shape (x cached in 8192 floats, u16 row ids) are caught by a random run too,
/// by a model-scale case; the random cases alone (`--case r<seed>_` keeps only them, the old
/// random mode) pass both, which is why the model cases are carried.
#[test]
fn random_runs_carry_the_model_scale_cases_and_catch_the_model_shape_bugs() {
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
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels");
    let src = format!("{dir}/wrong/model_scale.cu");
    for (entry, class) in [
        ("wrong_mul_mat_vec_pq2_0_x_cache8192", "mul_mat_vec"),
        ("wrong_get_rows_pq2_0_ids_u16", "get_rows"),
    ] {
        let base = [
            "check-kernel",
            "--source",
            &src,
            "--entry",
            entry,
            "--class",
            class,
            "--format",
            "pq2_0",
            "-I",
            dir,
            "--random",
            "8",
            "--seed",
            "2",
        ];
        let (code, out) = cli(&base);
        assert_eq!(code, 1, "{entry}: {out}");
        assert!(
            out.contains("plus the fixed real-model-scale cases"),
            "{out}"
        );
        let (code, out) = cli(&[&base[..], &["--case", "r2_"]].concat());
        assert_eq!(
            code, 0,
            "{entry}: the random cases alone catch it now: {out}"
        );
    }
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

#[test]
fn dump_reference_on_a_device_that_is_not_there_is_skipped_and_writes_nothing() {
    let abi = KernelAbi::default_for(KernelClass::Dequantize, Precision::F32).unwrap();
    if !cuda::run_device("", "x", &abi, &[])
        .is_err_and(|e| e.class() == ErrorClass::KernelTierUnavailable)
    {
        return; // a GPU is present
    }
    let out = std::env::temp_dir().join(format!("dump-dev-{}", std::process::id()));
    let (code, text) = cli(&[
        "dump-reference",
        "no-such.ninfer",
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cuda",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("SKIPPED"), "{text}");
    assert!(
        !out.exists(),
        "nothing may be written when the device tier cannot run"
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
