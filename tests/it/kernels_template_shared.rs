//! Static `__shared__` arrays inside function templates and inline functions on the host tier
//! (conformance/KERNELS.md, "Static shared memory in templates"): the correct kernels of
//! `src/cuda/kernels/unusual/template_shared.cu` pass (they were reported as races when such an
//! array was one copy for every block), and the wrong twins of `wrong/template_shared.cu` fail
//! with their own reason: the missing tail zero-fill as a read of shared memory never written
//! (it passed or read as a race before), the missing barrier as a race between schedules.
//! Through the CLI, as a user runs them.

use crate::common::{cli, host_ready};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cuda/kernels");

/// `check-kernel` of one entry of `file` (under src/cuda/kernels) as a mul_mat_vec pq2_0 kernel.
fn check(file: &str, entry: &str) -> (i32, String) {
    let src = format!("{DIR}/{file}");
    let out = cli()
        .args(["check-kernel", "--source", &src, "--entry", entry])
        .args(["--class", "mul_mat_vec", "--format", "pq2_0", "-I", DIR])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn template_static_shared_arrays_are_per_block_and_their_wrong_twins_fail_for_their_reason() {
    if !host_ready() {
        return;
    }
    for entry in [
        "unusual_mul_mat_vec_pq2_0_template_shared",
        "unusual_mul_mat_vec_pq2_0_static_template_inline",
    ] {
        let (code, out) = check("unusual/template_shared.cu", entry);
        assert_eq!(code, 0, "{entry} must pass:\n{out}");
        assert!(
            out.contains("RESULT: PASSED") && !out.contains("FAIL "),
            "{out}"
        );
    }

    let (code, out) = check(
        "wrong/template_shared.cu",
        "wrong_mul_mat_vec_pq2_0_template_no_tail_fill",
    );
    assert_eq!(code, 1, "{out}");
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(!fails.is_empty(), "{out}");
    for l in &fails {
        assert!(
            l.contains("[kernel.nondeterministic]")
                && l.contains("reads shared memory it never wrote (initcheck)")
                && !l.contains("differs between thread schedules"),
            "every failing case names the unwritten shared read, not a race: {l}"
        );
    }
    // One block alone (n = 1) is caught too: no other block shares or fills the array.
    assert!(
        fails.iter().any(|l| l.contains("g_mul_mat_vec_pq2_0_n1:")),
        "{out}"
    );

    let (code, out) = check(
        "wrong/template_shared.cu",
        "wrong_mul_mat_vec_pq2_0_template_no_barrier",
    );
    assert_eq!(code, 1, "{out}");
    let fails: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(!fails.is_empty(), "{out}");
    for l in &fails {
        assert!(
            l.contains("[kernel.nondeterministic]")
                && l.contains("differs between thread schedules")
                && !l.contains("never wrote")
                // The array is shared memory now, not `__device__`/static storage.
                && !l.contains("__device__/static storage"),
            "a race between the schedules, inside one block's shared memory: {l}"
        );
    }
}
