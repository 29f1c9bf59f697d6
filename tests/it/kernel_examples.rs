//! The sidecar-only worked examples of conformance/KERNELS.md ("Engine kernels from a sidecar
//! alone"): every command shown is run, the sidecars shown are the files, every PASS line shown
//! is one the run prints, and each example has a negative control (the same kernel with one
//! sidecar field wrong fails). Needs a host C++ compiler, like tests/it/kernels.rs.

use crate::common::{cli, host_ready, repo_root};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo_root().join(rel)).unwrap()
}

/// The section of KERNELS.md with the sidecar-only examples.
fn section() -> String {
    let md = read("conformance/KERNELS.md");
    let start = md
        .find("## Engine kernels from a sidecar alone")
        .expect("the section");
    let end = md[start + 3..]
        .find("\n## ")
        .map_or(md.len(), |e| start + 3 + e);
    md[start..end].to_string()
}

/// Runs `check-kernel ARGS` from the repository root: (exit code, stdout + stderr).
fn run(args: &[&str]) -> (i32, String) {
    let out = cli()
        .current_dir(repo_root())
        .arg("check-kernel")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The command line the doc shows (`$ ninfer-ternary check-kernel ...`), split like a shell
/// would for these commands (single quotes only).
fn shown_commands(doc: &str) -> Vec<Vec<String>> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("$ ninfer-ternary check-kernel "))
        .map(|l| {
            let mut args = Vec::new();
            let mut rest = l.trim();
            while !rest.is_empty() {
                if let Some(q) = rest.strip_prefix('\'') {
                    let e = q.find('\'').unwrap();
                    args.push(q[..e].to_string());
                    rest = q[e + 1..].trim_start();
                } else {
                    let e = rest.find(' ').unwrap_or(rest.len());
                    args.push(rest[..e].to_string());
                    rest = rest[e..].trim_start();
                }
            }
            args
        })
        .collect()
}

#[test]
fn the_shown_commands_are_read_as_a_shell_would() {
    let c = shown_commands("x\n$ ninfer-ternary check-kernel --entry 'f<1, float>' --block 2\n");
    assert_eq!(c, [["--entry", "f<1, float>", "--block", "2"]]);
}

#[test]
fn every_sidecar_only_example_runs_as_kernels_md_shows() {
    if !host_ready() {
        return;
    }
    let doc = section();
    // The sidecars shown are the files.
    for f in [
        "conformance/adapters/mainline_fwht/fwht_cuda.abi.json",
        "conformance/kernel_examples/ninfer_gemv_ptq1_0.abi.json",
    ] {
        assert!(
            doc.contains(read(f).trim_end()),
            "{f} is not shown as it is"
        );
    }
    let cmds = shown_commands(&doc);
    assert_eq!(cmds.len(), 3, "{cmds:?}");
    for args in &cmds {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = run(&a);
        assert_eq!(code, 0, "{a:?}: {out}");
        let pass: Vec<&str> = out.lines().filter(|l| l.starts_with("PASS ")).collect();
        assert!(!pass.is_empty(), "{out}");
        for l in pass {
            assert!(doc.contains(l), "KERNELS.md does not show {l:?}");
        }
        assert!(out.contains("RESULT: PASSED") && doc.contains("RESULT: PASSED"));
    }
    // The other gemv sidecar passes too.
    let (code, out) = run(&[
        "--source",
        "conformance/kernel_examples/ninfer_gemv_standin.cu",
        "--abi",
        "conformance/kernel_examples/ninfer_gemv_pq2_0.abi.json",
    ]);
    assert_eq!(code, 0, "{out}");
}

/// Negative controls: each example with one sidecar field wrong fails.
#[test]
fn each_sidecar_only_example_fails_with_one_field_wrong() {
    if !host_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let edited = |src: &str, from: &str, to: &str| {
        let text = read(src);
        assert!(text.contains(from), "{src}: {from}");
        let p = dir
            .path()
            .join(std::path::Path::new(src).file_name().unwrap());
        std::fs::write(&p, text.replace(from, to)).unwrap();
        p.to_str().unwrap().to_string()
    };
    // The fwht stand-in without the signs pre-step: the output is H (x), not H (s ⊙ x).
    let nopre = edited(
        "conformance/adapters/mainline_fwht/fwht_cuda.abi.json",
        " \"pre\": \"signs\",",
        "",
    );
    let (code, out) = run(&[
        "--source",
        "conformance/kernel_examples/fwht_standin.cu",
        "--abi",
        &nopre,
        "--entry",
        "fwht_standin<256, float>",
        "--block",
        "256",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("first differing element"), "{out}");
    // The gemv with groups per row from k / 64: rows read at twice their length.
    let half = edited(
        "conformance/kernel_examples/ninfer_gemv_ptq1_0.abi.json",
        "\"k / 128\"",
        "\"k / 64\"",
    );
    let (code, out) = run(&[
        "--source",
        "conformance/kernel_examples/ninfer_gemv_standin.cu",
        "--abi",
        &half,
    ]);
    assert_eq!(code, 1, "{out}");
    // The dequantize_block stand-in with qr = 1: it writes adjacent pairs, not (j, j + 16).
    let qr1 = edited(
        "conformance/kernel_examples/beellama_q2_0s.abi.json",
        "<32, 2,",
        "<32, 1,",
    );
    let (code, out) = run(&[
        "--source",
        "conformance/kernel_examples/beellama_q2_0s_standin.cu",
        "--abi",
        &qr1,
    ]);
    assert_eq!(code, 1, "{out}");
}
