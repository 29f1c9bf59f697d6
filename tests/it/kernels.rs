//! The `check-kernel` command line: failures located and named, exit codes, replays of a random
//! case, sidecar argument expressions, activation modes, model-scale random cases and the
//! device tier's skip. The library-level kernel tests are crate unit tests
//! (`src/tests/kernels.rs`).

use crate::common::host_ready;

/// Whether the device tier can run here, asked without the tool: a build with the `cuda`
/// feature (the feature is set for the integration tests too) and a CUDA driver library that
/// loads. Where either is missing the tool must say SKIPPED, never pass.
fn device_tier_can_run() -> bool {
    if !cfg!(feature = "cuda") {
        return false;
    }
    // SAFETY: dlopen/dlclose of a system library by name; no symbol of it is called.
    unsafe {
        let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if h.is_null() {
            return false;
        }
        libc::dlclose(h);
    }
    true
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
    if !device_tier_can_run() {
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

/// `--random N` carries the real-model-scale fixed cases, so the two wrong kernels whose bug
/// needs a model shape (x cached in 8192 floats, u16 row ids) are caught by a random run too,
/// by a model-scale case; the random cases alone (`--case r<seed>_` keeps only them, the old
/// random mode) pass both, which is why the model cases are carried.
#[test]
fn random_runs_carry_the_model_scale_cases_and_catch_the_model_shape_bugs() {
    // The library half (the built-in run and its case count) is the same-named crate unit test
    // (src/tests/kernels.rs); this half runs the command line.
    if !host_ready() {
        return;
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

#[test]
fn dump_reference_on_a_device_that_is_not_there_is_skipped_and_writes_nothing() {
    if device_tier_can_run() {
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
