//! Issue #31, kernel items: `check-kernel --tier host` contains what it compiles and runs.
//! Each test runs the CLI on a hostile kernel (or a hostile cache, include, case count) with a
//! deadline, checks the error class it ends with, that no process it started is left (every
//! hostile child carries a unique marker in its argv, looked for in /proc/*/cmdline), that
//! nothing outside its scratch folder changed, and runs a negative control: a correct but
//! unusual input of the same kind that must not be refused. Needs a host C++ compiler (as
//! tests/it/kernels.rs; NINFER_SKIP_HOST_KERNELS=1 skips explicitly).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{cli, host_ready, repo_root, run_capped, Capped};

/// A unique marker for this test's hostile children.
fn marker(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("NT_HOSTILE_{tag}_{}_{nanos}", std::process::id())
}

/// Live processes whose command line holds `m`.
fn alive_with(m: &str) -> Vec<String> {
    crate::common::processes_with(m)
}

/// A scratch folder (not a system folder: under the target dir's temp folder).
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("hk-{tag}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The CLI with a private kernel cache in `dir`, run with an address-space cap and a deadline.
fn check_kernel(dir: &Path, args: &[&str], cap: u64, deadline: Duration) -> (Capped, Duration) {
    let mut c = cli();
    c.env("NINFER_KERNEL_CACHE", dir.join("cache"))
        .arg("check-kernel")
        .args(args);
    let t0 = Instant::now();
    let r = run_capped(c, cap, deadline);
    (r, t0.elapsed())
}

const GIB: u64 = 1 << 30;

/// How a class shows in the output: `[id]`.
fn cls(id: &str) -> String {
    format!("[{id}]")
}

fn write(p: &Path, text: &str) -> PathBuf {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(p, text).unwrap();
    p.to_path_buf()
}

/// A dequantize-class kernel body (wrong output, correct ABI) with `pre` before it and `body`
/// inside it.
fn kernel(pre: &str, body: &str) -> String {
    format!(
        "{pre}\nextern \"C\" __global__ void k(const unsigned char* blocks, float* y, int n_blocks) {{\n{body}\n}}\n"
    )
}

const ONE: &[&str] = &[
    "--entry",
    "k",
    "--class",
    "dequantize",
    "--format",
    "pq2_0",
    "--case",
    "g_dequantize_pq2_0_one_block",
];

fn args<'a>(src: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--source", src];
    v.extend_from_slice(ONE);
    v.extend_from_slice(more);
    v
}

#[test]
fn a_forked_child_holding_the_output_pipe_cannot_defeat_the_timeout() {
    if !host_ready() {
        return;
    }
    let d = scratch("fork");
    let m = marker("fork");
    // The child keeps the runner's stdout (and everything else) open for 10 minutes, in its
    // own session, while the kernel spins.
    let src = write(
        &d.path().join("k/fork.cu"),
        &kernel(
            "#include <unistd.h>\n#include <stdlib.h>",
            &format!("static int f = 0; if (!f) {{ f = 1; if (fork() == 0) {{ setsid(); execl(\"/bin/sh\", \"sh\", \"-c\", \"sleep 600; :\", \"{m}\", (char*)0); _exit(0); }} }}\nfor (;;) {{}}"),
        ),
    );
    let s = src.to_str().unwrap();
    // First run compiles (and must itself end); the second is timed.
    let (r, t) = check_kernel(
        d.path(),
        &args(s, &["--timeout", "1"]),
        8 * GIB,
        Duration::from_secs(120),
    );
    assert!(
        r.status.is_some(),
        "did not return within 120 s ({t:?}):\n{}",
        r.stdout
    );
    let (r, t) = check_kernel(
        d.path(),
        &args(s, &["--timeout", "3"]),
        8 * GIB,
        Duration::from_secs(60),
    );
    assert!(r.status.is_some(), "did not return: {}", r.stdout);
    assert!(
        t < Duration::from_secs(10),
        "{t:?} with --timeout 3:\n{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&cls("kernel.timeout")),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(r.status.and_then(|s| s.code()), Some(1));
    assert!(
        alive_with(&m).is_empty(),
        "left behind: {:?}",
        alive_with(&m)
    );
    // Control: a kernel that forks a short-lived child and returns is judged as usual (a
    // wrong output), not as a timeout.
    let m2 = marker("forkok");
    let ok = write(
        &d.path().join("k/fork_ok.cu"),
        &kernel(
            "#include <unistd.h>\n#include <stdlib.h>",
            &format!("static int f = 0; if (!f) {{ f = 1; if (fork() == 0) {{ execl(\"/bin/sh\", \"sh\", \"-c\", \":\", \"{m2}\", (char*)0); _exit(0); }} }}"),
        ),
    );
    let (r, _) = check_kernel(
        d.path(),
        &args(ok.to_str().unwrap(), &["--timeout", "3"]),
        8 * GIB,
        Duration::from_secs(120),
    );
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stdout.contains("kernel.timeout"), "{}", r.stdout);
    assert!(alive_with(&m2).is_empty());
}

#[test]
fn a_memory_hog_kernel_is_stopped_by_the_memory_cap() {
    if !host_ready() {
        return;
    }
    let d = scratch("hog");
    let hog = |total_mb: u64| {
        kernel(
            "#include <stdlib.h>\n#include <string.h>",
            &format!("static int once = 0; if (once++) return;\nfor (unsigned long long got = 0; got < {total_mb}ull << 20; got += 64ull << 20) {{ char* p = (char*)malloc(64ull << 20); if (!p) abort(); memset(p, 1, 64ull << 20); }}"),
        )
    };
    // 16 GiB touched under a 1 GiB cap: stopped (an abort: a crash), quickly.
    let src = write(&d.path().join("k/hog.cu"), &hog(16 << 10));
    let (r, t) = check_kernel(
        d.path(),
        &args(
            src.to_str().unwrap(),
            &["--memory-mb", "1024", "--timeout", "60"],
        ),
        64 * GIB,
        Duration::from_secs(180),
    );
    assert!(
        r.stdout.contains(&cls("kernel.crash")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    // Control: 128 MiB fits the cap (the runner itself reserves a few hundred MiB); the kernel runs to its (wrong) output.
    let src = write(&d.path().join("k/small.cu"), &hog(128));
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &["--memory-mb", "1024"]),
        64 * GIB,
        Duration::from_secs(180),
    );
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stdout.contains("kernel.crash"), "{}", r.stdout);
    // A cap under 64 MiB is a usage error.
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &["--memory-mb", "8"]),
        8 * GIB,
        Duration::from_secs(60),
    );
    assert!(r.stderr.contains("cli.usage"), "{}", r.stderr);
}

#[test]
fn a_constexpr_compile_bomb_is_stopped_by_the_compile_timeout() {
    if !host_ready() {
        return;
    }
    let d = scratch("bomb");
    let bomb = |n: &str| {
        let mut pre = String::from("constexpr unsigned long long spin(unsigned long long n) { unsigned long long s = 0; for (unsigned long long i = 0; i < n; ++i) s += i ^ (s >> 3); return s; }\n");
        for i in 0..10 {
            pre.push_str(&format!("static_assert(spin({n} + {i}) != 1, \"\");\n"));
        }
        kernel(&pre, "")
    };
    let src = write(&d.path().join("k/bomb.cu"), &bomb("(1ULL << 40)"));
    let (r, t) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &["--compile-timeout", "5"]),
        64 * GIB,
        Duration::from_secs(120),
    );
    assert!(
        r.stdout.contains(&cls("kernel.compile_limit")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(t < Duration::from_secs(40), "{t:?}");
    assert!(
        alive_with(src.to_str().unwrap()).is_empty(),
        "{:?}",
        alive_with(src.to_str().unwrap())
    );
    // Control: the same pattern with a small loop compiles under the same limit.
    let src = write(&d.path().join("k/small.cu"), &bomb("1000"));
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &["--compile-timeout", "60"]),
        64 * GIB,
        Duration::from_secs(180),
    );
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn an_include_of_dev_zero_is_refused_or_stopped_fast() {
    if !host_ready() {
        return;
    }
    let d = scratch("zero");
    // Named: refused before the compiler runs.
    let src = write(
        &d.path().join("k/z.cu"),
        &kernel("#include </dev/zero>", ""),
    );
    let (r, t) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &[]),
        8 * GIB,
        Duration::from_secs(60),
    );
    assert!(
        r.stderr.contains(&cls("kernel.include")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let src = write(
        &d.path().join("k/z2.cu"),
        &kernel("#include \"/dev/zero\"", ""),
    );
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &[]),
        8 * GIB,
        Duration::from_secs(60),
    );
    assert!(
        r.stderr.contains(&cls("kernel.include")),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // Computed (the harness cannot see the name): the compiler's memory cap or deadline.
    let src = write(
        &d.path().join("k/z3.cu"),
        &kernel("#define NT_Z </dev/zero>\n#include NT_Z", ""),
    );
    let (r, t) = check_kernel(
        d.path(),
        &args(
            src.to_str().unwrap(),
            &["--compile-memory-mb", "1024", "--compile-timeout", "30"],
        ),
        64 * GIB,
        Duration::from_secs(120),
    );
    assert!(
        r.stdout.contains(&cls("kernel.compile_limit"))
            || r.stdout.contains(&cls("kernel.include")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(t < Duration::from_secs(60), "{t:?}");
    // Control: a system header by name still works.
    let src = write(
        &d.path().join("k/ok.cu"),
        &kernel("#include <string.h>\n#include <cuda_fp16.h>", ""),
    );
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &[]),
        8 * GIB,
        Duration::from_secs(180),
    );
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn an_unsafe_cache_is_refused_and_a_tampered_runner_is_never_run() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !host_ready() {
        return;
    }
    let d = scratch("cache");
    let src = write(
        &d.path().join("k/k.cu"),
        &kernel("#include <cuda_fp16.h>", ""),
    );
    let s = src.to_str().unwrap();
    let marker_file = d.path().join("PLANTED_RAN");
    let run_with = |cache: &Path| {
        let mut c = cli();
        c.env("NINFER_KERNEL_CACHE", cache)
            .arg("check-kernel")
            .args(args(s, &[]));
        run_capped(c, 8 * GIB, Duration::from_secs(180))
    };
    // A world-writable cache with a planted header: refused, the header never compiled.
    let open = d.path().join("open");
    write(
        &open.join("include/cuda_fp16.h"),
        &format!(
            "static int planted = []{{ return system(\"touch {}\"); }}();\n",
            marker_file.display()
        ),
    );
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = run_with(&open);
    assert!(
        r.stderr.contains(&cls("kernel.cache")),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(r.status.and_then(|s| s.code()), Some(2));
    // A symlink to a private folder is refused too.
    let real = d.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = run_with(&link);
    assert!(
        r.stderr.contains(&cls("kernel.cache")),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // Owned by another user (as root: chowned to nobody): refused.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let other = d.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&other, Some(65534), Some(65534)).unwrap();
        let r = run_with(&other);
        assert!(
            r.stderr.contains(&cls("kernel.cache")),
            "{}\n{}",
            r.stdout,
            r.stderr
        );
    }
    // Control: a fresh cache is made private (0700) and used.
    let mine = d.path().join("mine");
    let r = run_with(&mine);
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let m = std::fs::metadata(&mine).unwrap();
    assert_eq!(m.mode() & 0o777, 0o700);
    // A cached runner replaced by a script: never run (rebuilt), the run still works.
    let runners: Vec<PathBuf> = std::fs::read_dir(&mine)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("k-") && !n.contains('.')
        })
        .collect();
    assert_eq!(runners.len(), 1, "{runners:?}");
    std::fs::write(
        &runners[0],
        format!("#!/bin/sh\ntouch {}\n", marker_file.display()),
    )
    .unwrap();
    std::fs::set_permissions(&runners[0], std::fs::Permissions::from_mode(0o700)).unwrap();
    let r = run_with(&mine);
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(!marker_file.exists(), "a planted header or runner ran");
}

#[test]
fn includes_outside_the_kernel_folder_are_refused_and_never_shown() {
    if !host_ready() {
        return;
    }
    let d = scratch("incl");
    let secret_word = marker("SECRET");
    // Text that makes a compiler complain about (and so quote) its tokens.
    let secret = write(
        &d.path().join("private/passwd"),
        &format!("root:x:0:0 {secret_word} = {secret_word}_too;\n"),
    );
    let before = std::fs::read(&secret).unwrap();
    let sp = secret.display().to_string();
    let k = d.path().join("k");
    let check = |name: &str, text: &str, more: &[&str], want: &str| {
        let src = write(&k.join(name), text);
        let json = d.path().join(format!("{name}.json"));
        let mut a = args(src.to_str().unwrap(), more);
        let js = json.display().to_string();
        a.extend_from_slice(&["--json", js.as_str()]);
        let (r, t) = check_kernel(d.path(), &a, 8 * GIB, Duration::from_secs(180));
        let report = std::fs::read_to_string(&json).unwrap_or_default();
        for (what, text) in [
            ("stdout", &r.stdout),
            ("stderr", &r.stderr),
            ("--json", &report),
        ] {
            assert!(
                !text.contains(&secret_word),
                "{name}: the secret is in {what}:\n{text}"
            );
        }
        // Refused while the source is read: `error: [class]` on stderr (exit 2); refused or
        // failed at the compile: a FAILED report (stdout and --json).
        let all = format!("{}\n{}\n{report}", r.stdout, r.stderr);
        assert!(all.contains(want), "{name} ({t:?}): want {want}\n{all}");
    };
    check(
        "abs.cu",
        &kernel(&format!("#include \"{sp}\""), ""),
        &[],
        &cls("kernel.include"),
    );
    check(
        "up.cu",
        &kernel("#include \"../private/passwd\"", ""),
        &[],
        &cls("kernel.include"),
    );
    let rel_from_root = sp.trim_start_matches('/').to_string();
    check(
        "root.cu",
        &kernel(&format!("#include \"{rel_from_root}\""), ""),
        &["-I", "/"],
        &cls("kernel.include"),
    );
    check(
        "etc.cu",
        &kernel("#include \"passwd\"", ""),
        &["-I", "/etc"],
        &cls("kernel.include"),
    );
    // Computed, behind a `#line`, or through the assembler: the compiler may read it, but
    // nothing it read outside the allowed folders, and no quoted line, is shown.
    check(
        "computed.cu",
        &kernel(&format!("#define NT_S \"{sp}\"\n#include NT_S"), ""),
        &[],
        &cls("kernel.include"),
    );
    check(
        "line.cu",
        &kernel(&format!("#line 1 \"{sp}\"\nint x = not_declared_here;"), ""),
        &[],
        &cls("kernel.compile"),
    );
    check(
        "asm.cu",
        &kernel(&format!("asm(\".include \\\"{sp}\\\"\");"), ""),
        &[],
        &cls("kernel.unsupported"),
    );
    // `asm` spelled by token pasting gets past the source scan: the assembler reads the file
    // and complains about its text, and its messages are never shown.
    check(
        "asm2.cu",
        &kernel(
            &format!("#define NT_PASTE(a, b) a##b\nNT_PASTE(as, m)(\".include \\\"{sp}\\\"\");"),
            "",
        ),
        &[],
        &cls("kernel.compile"),
    );
    // An include inside a raw string literal or a comment is text, not a directive: never
    // read (the kernel compiles and runs).
    check(
        "raw.cu",
        &kernel(&format!("static const char* nt_s = R\"x(\n#include \"{sp}\"\n)x\";\n/*\n#include \"{sp}\"\n*/"), "(void)nt_s;"),
        &[],
        "FAIL g_dequantize",
    );
    // Controls: an include in the kernel's folder, a -I folder, and `..` into a -I folder.
    write(
        &k.join("inc/helper.cuh"),
        "#pragma once\n#define NT_HELPER 1\n",
    );
    write(
        &d.path().join("other/o.cuh"),
        "#pragma once\n#define NT_OTHER 1\n",
    );
    check(
        "own.cu",
        &kernel(
            "#include \"inc/helper.cuh\"\n#include \"o.cuh\"\n#include \"../other/o.cuh\"",
            "(void)NT_HELPER; (void)NT_OTHER;",
        ),
        &[
            "-I",
            d.path().join("other").to_str().unwrap(),
            "-I",
            d.path().to_str().unwrap(),
        ],
        "FAIL g_dequantize",
    );
    assert_eq!(std::fs::read(&secret).unwrap(), before);
}

#[test]
fn many_random_cases_are_built_lazily() {
    if !host_ready() {
        return;
    }
    let d = scratch("random");
    let mm = repo_root().join("src/cuda/kernels/mul_mat.cu");
    let src = mm.to_str().unwrap();
    let base = [
        "--source",
        src,
        "--entry",
        "ref_mul_mat_pq2_0",
        "--class",
        "mul_mat",
        "--format",
        "pq2_0",
        "--random",
        "100000",
    ];
    // Before: 5.2 GB, every case built up front. Now: names first, nothing built.
    let mut a = base.to_vec();
    a.extend_from_slice(&["--case", "nomatch"]);
    let (r, t) = check_kernel(d.path(), &a, GIB, Duration::from_secs(60));
    assert!(
        r.stderr.contains(&cls("corpus.filter")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(t < Duration::from_secs(20), "{t:?}");
    // Control: the last of the 100000 is built and run (and passes) under the same cap.
    let mut a = base.to_vec();
    a.extend_from_slice(&["--case", "r1_99999_"]);
    let (r, t) = check_kernel(d.path(), &a, 2 * GIB, Duration::from_secs(300));
    assert!(
        r.stdout.contains("1 passed, 0 failed"),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn a_huge_include_is_refused_before_it_is_read() {
    if !host_ready() {
        return;
    }
    let d = scratch("huge");
    // 1.5 GiB (sparse): before, read whole (3.15 GB RSS) before the 32 MiB limit applied; now
    // its size is checked on the open handle first, under a 1 GiB address-space cap.
    let huge = d.path().join("k/huge.cuh");
    write(&huge, "");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(1536 << 20)
        .unwrap();
    let src = write(
        &d.path().join("k/k.cu"),
        &kernel("#include \"huge.cuh\"", ""),
    );
    let (r, t) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &[]),
        GIB,
        Duration::from_secs(60),
    );
    assert!(
        r.stderr.contains(&cls("kernel.include")),
        "{t:?}\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stderr.contains("nothing was read"), "{}", r.stderr);
    assert!(t < Duration::from_secs(10), "{t:?}");
    // Control: a 1 MiB header (comments) in the kernel's folder is read and compiled.
    let mut text = String::from("#pragma once\n");
    while text.len() < 1 << 20 {
        text.push_str("// filler line of a large but ordinary header, kept as a comment\n");
    }
    text.push_str("#define NT_BIG 1\n");
    write(&d.path().join("k/big.cuh"), &text);
    let src = write(
        &d.path().join("k/ok.cu"),
        &kernel("#include \"big.cuh\"", "(void)NT_BIG;"),
    );
    let (r, _) = check_kernel(
        d.path(),
        &args(src.to_str().unwrap(), &[]),
        8 * GIB,
        Duration::from_secs(180),
    );
    assert!(
        r.stdout.contains("FAIL g_dequantize"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}
