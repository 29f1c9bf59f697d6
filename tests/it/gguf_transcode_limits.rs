//! Memory bounds of `transcode` (issue #11): run the binary on large sparse or hostile GGUFs
//! under an address-space cap of (input size + 1 GiB) and require a clean refusal (an exit
//! code other than 101 and an error class on stderr) or success — never an abort, a signal or a
//! panic. Before streaming, `transcode` materialized each metadata array at 32 B per element and
//! `--retag-42` copied the whole input into memory; both aborted here.
//!
//! The negative control re-runs this test binary as a child that allocates past its cap, and
//! checks that the harness reports that as a crash.

use ninfer_ternary::gguf::{GgufWriter, ValueType};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

const GIB: u64 = 1 << 30;

/// What a capped child did.
#[derive(Debug, PartialEq)]
enum Outcome {
    Success,
    /// Exit code and the error class named on stderr.
    Refused(i32, String),
    /// A signal, a panic (101) or an exit without a class.
    Crashed(String),
}

fn classify(o: &super::common::Capped) -> Outcome {
    let stderr = &o.stderr;
    let Some(status) = o.status else {
        return Outcome::Crashed(format!("timed out: {stderr}"));
    };
    if let Some(sig) = status.signal() {
        return Outcome::Crashed(format!("signal {sig}: {stderr}"));
    }
    match status.code() {
        Some(0) => Outcome::Success,
        Some(101) => Outcome::Crashed(format!("panic: {stderr}")),
        Some(c) => {
            let class = stderr
                .split('[')
                .nth(1)
                .and_then(|r| r.split_once(']'))
                .map(|(c, _)| c.to_string())
                .filter(|c| c.contains('.') && !c.contains(' '));
            match class {
                Some(class) => Outcome::Refused(c, class),
                None => Outcome::Crashed(format!("exit {c} without a class: {stderr}")),
            }
        }
        None => Outcome::Crashed("no exit status".into()),
    }
}

/// Runs `cmd` with RLIMIT_AS = `cap` bytes (the shared harness, 10 minutes at most).
fn run_capped(cmd: Command, cap: u64) -> super::common::Capped {
    super::common::run_capped(cmd, cap, std::time::Duration::from_secs(600))
}

/// `transcode ARGS` on `input` under a cap of its size + 1 GiB.
fn transcode_capped(input: &Path, output: &Path, args: &[&str]) -> Outcome {
    let cap = std::fs::metadata(input).unwrap().len() + GIB;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"));
    cmd.arg("transcode")
        .arg(input)
        .arg("-o")
        .arg(output)
        .args(args);
    classify(&run_capped(cmd, cap))
}

/// A GGUF whose only payload is a BOOL array of `count` elements: header and KV records
/// written here, the `count` zero bytes (0 is a valid BOOL) as a sparse extension.
fn bool_array_file(path: &Path, count: u64) {
    // Written byte by byte here (GGUF v3, spec/gguf.md): magic, version, 0 tensors, 2 KVs.
    let string = |b: &mut Vec<u8>, s: &str| {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    };
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    string(&mut b, "general.architecture");
    b.extend(ValueType::String.id().to_le_bytes());
    string(&mut b, "hostile");
    string(&mut b, "hostile.bools");
    b.extend(ValueType::Array.id().to_le_bytes());
    b.extend(ValueType::Bool.id().to_le_bytes());
    b.extend(count.to_le_bytes());
    std::fs::write(path, &b).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(b.len() as u64 + count).unwrap();
}

#[test]
fn transcode_streams_a_huge_metadata_array() {
    let d = tempfile::tempdir().unwrap();
    let (i, o) = (d.path().join("bools.gguf"), d.path().join("out.gguf"));
    // 2^28 BOOLs: 256 MiB on disk, 8 GiB at 32 B per element (the old materialization).
    bool_array_file(&i, 1 << 28);
    let g = ninfer_ternary::gguf::GgufFile::open(&i).unwrap();
    let parsed = g.parse(ninfer_ternary::gguf::Mode::Spec).unwrap();
    assert_eq!(parsed.get_array("hostile.bools").unwrap().count, 1 << 28);
    drop(g);
    assert_eq!(
        transcode_capped(&i, &o, &["--to", "pq2_0"]),
        Outcome::Success
    );
    // The KV block is copied byte for byte; the writer pads the (empty) data section to the
    // alignment.
    let (a, b) = (std::fs::read(&i).unwrap(), std::fs::read(&o).unwrap());
    assert!(b.starts_with(&a), "the output starts with the input");
    assert!(b[a.len()..].iter().all(|&x| x == 0) && b.len() % 32 == 0 && b.len() - a.len() < 32);
}

#[test]
fn a_declared_count_past_the_file_is_refused_with_its_class() {
    let d = tempfile::tempdir().unwrap();
    let (i, o) = (d.path().join("short.gguf"), d.path().join("out.gguf"));
    bool_array_file(&i, 1 << 31);
    // Cut the array short: the count promises 2^31 bytes, 1 MiB exist.
    let len = std::fs::metadata(&i).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&i).unwrap();
    f.set_len(len - (1 << 31) + (1 << 20)).unwrap();
    assert_eq!(
        transcode_capped(&i, &o, &["--to", "pq2_0"]),
        Outcome::Refused(2, "gguf.array_length".into())
    );
    assert!(!o.exists());
}

#[test]
fn retag_streams_a_multi_gib_file() {
    let legacy = ninfer_ternary::spec::get()
        .ggml_type_named("Q2_0_PRISM_LEGACY")
        .unwrap();
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "hostile");
    // 4096 blocks per row × 11,565 rows × 34 B ≈ 1.5 GiB of (sparse, all-zero) data.
    w.tensor_as("blk.0.ffn_up.weight", &[128 * 4096, 11_565], legacy)
        .unwrap();
    let head = w.header_bytes().unwrap();
    let total = w.file_len().unwrap();
    // More than 1 GiB: a copy of the input next to its map exceeds the cap.
    assert!(total > 14 * GIB / 10);
    let d = tempfile::tempdir().unwrap();
    let (i, o) = (d.path().join("legacy.gguf"), d.path().join("retagged.gguf"));
    std::fs::write(&i, &head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&i)
        .unwrap()
        .set_len(total)
        .unwrap();
    assert_eq!(transcode_capped(&i, &o, &["--retag-42"]), Outcome::Success);
    let out = ninfer_ternary::gguf::GgufFile::open(&o).unwrap();
    let g = out.parse(ninfer_ternary::gguf::Mode::Strict).unwrap();
    assert_eq!(g.tensors[0].type_id, 142);
    assert_eq!(std::fs::metadata(&o).unwrap().len(), total);
}

/// The child half of the negative control: allocates and touches 4 GiB.
#[test]
fn negative_control_child() {
    if std::env::var_os("NINFER_LIMITS_CHILD").is_none() {
        return;
    }
    let v = vec![1u8; 4 << 30];
    println!("{}", v[v.len() - 1]);
}

#[test]
fn negative_control_the_harness_sees_an_allocation_abort() {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "gguf_transcode_limits::negative_control_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("NINFER_LIMITS_CHILD", "1");
    match classify(&run_capped(cmd, GIB)) {
        Outcome::Crashed(why) => assert!(why.contains("signal"), "{why}"),
        other => panic!("an allocation past the cap must read as a crash, got {other:?}"),
    }
    // And a clean exit with a class is not mistaken for a crash.
    let mut ok = Command::new(env!("CARGO_BIN_EXE_ninfer-ternary"));
    ok.args([
        "transcode",
        "/nonexistent.gguf",
        "-o",
        "/nonexistent.out",
        "--to",
        "pq2_0",
    ]);
    assert!(matches!(
        classify(&run_capped(ok, 4 * GIB)),
        Outcome::Refused(2, _)
    ));
}
