//! Memory: `decode --rows` of a contiguous object reads only those rows, `inspect` shows the
//! head of huge metadata arrays and keys without copying them, and `prism.hadamard.sign_values`
//! is refused on its declared count before any element is copied.
//!
//! The inputs are sparse files (gigabytes long, a few KB on disk). The commands run under an
//! address-space cap of input size + 1 GiB (`ulimit -v`), so any copy of the large part aborts;
//! the negative control shows that the cap does bite a command that copies the whole object.

use ninfer_ternary::ninfer::writer::{header_bytes, plan, PlannedObject};
use ninfer_ternary::ninfer::Identity;
use ninfer_ternary::spec::LayoutId;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GIB: u64 = 1 << 30;

/// Runs the binary with `args` under an address-space cap of `cap` bytes.
fn capped(cap: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v $0 && exec \"$@\"")
        .arg((cap / 1024).to_string())
        .arg(env!("CARGO_BIN_EXE_ninfer-ternary"))
        .args(args)
        .output()
        .unwrap()
}

/// A container with one FP32 tensor of shape [rows, 4]; the payload is a hole except row 1.
fn sparse_contiguous(dir: &Path, rows: u64) -> PathBuf {
    let d = plan(
        Identity {
            model_id: "m".into(),
            weights_id: "w".into(),
        },
        vec![PlannedObject::tensor(
            "big",
            vec![rows, 4],
            "FP32",
            LayoutId::ContiguousLeV1,
        )],
    )
    .unwrap();
    let head = header_bytes(&d);
    let p = dir.join("big.ninfer");
    let f = std::fs::File::create(&p).unwrap();
    use std::io::{Seek, SeekFrom, Write};
    let mut w = std::io::BufWriter::new(&f);
    w.write_all(&head).unwrap();
    w.seek(SeekFrom::Start(head.len() as u64 + 16)).unwrap();
    for v in [1.5f32, -2.0, 3.25, 4.0] {
        w.write_all(&v.to_le_bytes()).unwrap();
    }
    drop(w);
    f.set_len(head.len() as u64 + rows * 16).unwrap();
    p
}

fn npy_values(p: &Path) -> Vec<f32> {
    let b = std::fs::read(p).unwrap();
    let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn decode_rows_of_a_huge_contiguous_object_reads_only_those_rows() {
    let dir = tempfile::tempdir().unwrap();
    let rows = (4 * GIB) / 16; // a 4 GiB tensor
    let p = sparse_contiguous(dir.path(), rows);
    let size = std::fs::metadata(&p).unwrap().len();
    let out = dir.path().join("rows.npy");
    let r = capped(
        size + GIB,
        &[
            "decode",
            p.to_str().unwrap(),
            "big",
            "--rows",
            "1:3",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(npy_values(&out), [1.5, -2.0, 3.25, 4.0, 0.0, 0.0, 0.0, 0.0]);

    // Negative control: decoding the whole 4 GiB object needs 4 GiB of values plus the .npy
    // buffer, and the same cap refuses it: the cap is what makes the test above meaningful.
    let all = dir.path().join("all.npy");
    let r = capped(
        size + GIB,
        &[
            "decode",
            p.to_str().unwrap(),
            "big",
            "-o",
            all.to_str().unwrap(),
        ],
    );
    assert!(!r.status.success(), "whole decode fit under the cap");
}

#[test]
fn rows_ranges_are_reported_as_reversed_or_out_of_bounds_with_the_cli_class() {
    let dir = tempfile::tempdir().unwrap();
    let p = sparse_contiguous(dir.path(), 8);
    let out = dir.path().join("o.npy");
    let run = |rows: &str| {
        let r = capped(
            8 * GIB,
            &[
                "decode",
                p.to_str().unwrap(),
                "big",
                "--rows",
                rows,
                "-o",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(r.status.code(), Some(2));
        String::from_utf8(r.stderr).unwrap()
    };
    let reversed = run("5:2");
    assert!(reversed.contains("[cli.usage] --rows"), "{reversed}");
    assert!(reversed.contains("reversed"), "{reversed}");
    assert!(!reversed.contains("out of bounds"), "{reversed}");
    let beyond = run("2:9");
    assert!(beyond.contains("[cli.usage] --rows"), "{beyond}");
    assert!(
        beyond.contains("out of bounds") && beyond.contains("0:8"),
        "{beyond}"
    );
    assert!(!beyond.contains("reversed"), "{beyond}");
    assert!(run("x:2").contains("not a row number"));
    assert!(run("3").contains("not A:B"));
}

/// GGUF v3 bytes: header with `kvs` (key, typed value bytes), no tensors, then `tail` zero bytes
/// appended by `set_len` (a hole). Returns the path.
fn sparse_gguf(p: &Path, kvs: &[(Vec<u8>, Vec<u8>)], hole: u64) {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend((kvs.len() as u64).to_le_bytes());
    for (k, v) in kvs {
        b.extend((k.len() as u64).to_le_bytes());
        b.extend(k);
        b.extend(v);
    }
    std::fs::write(p, &b).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    let end = (b.len() as u64 + hole).div_ceil(32) * 32;
    f.set_len(end).unwrap();
}

fn string_value(s: &str) -> Vec<u8> {
    let mut v = 8u32.to_le_bytes().to_vec();
    v.extend((s.len() as u64).to_le_bytes());
    v.extend(s.as_bytes());
    v
}

/// An array header (type 9) of `count` elements of GGUF type `elem`; elements follow.
fn array_header(elem: u32, count: u64) -> Vec<u8> {
    let mut v = 9u32.to_le_bytes().to_vec();
    v.extend(elem.to_le_bytes());
    v.extend(count.to_le_bytes());
    v
}

#[test]
fn inspect_shows_the_head_of_a_huge_array_without_copying_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("arr.gguf");
    let n = 2 * GIB; // U8 elements: the array is the last value, its bytes the hole
    sparse_gguf(
        &p,
        &[
            (b"general.architecture".to_vec(), string_value("llama")),
            (b"big.array".to_vec(), array_header(0, n)),
        ],
        n,
    );
    let size = std::fs::metadata(&p).unwrap().len();
    for json in [false, true] {
        let mut args = vec!["inspect", "--mode", "spec", p.to_str().unwrap()];
        if json {
            args.extend(["--json", "-"]);
        }
        let r = capped(size + GIB, &args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let s = String::from_utf8(r.stdout).unwrap();
        if json {
            // Typed: the head as numbers, the count, and the cut said explicitly.
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            let kv = &v["metadata"][1];
            assert_eq!(kv["element_type"], "U8", "{kv}");
            assert_eq!(kv["count"], n, "{kv}");
            assert_eq!(kv["truncated"], true, "{kv}");
            let head = kv["value"].as_array().unwrap();
            assert_eq!(head.len(), 1024, "JSON_ELEMENTS of the head");
            assert!(head.iter().all(|x| x == 0), "{kv}");
        } else {
            assert!(
                s.contains(&format!("[U8; {n}] [0, 0, 0, 0, 0, 0, 0, 0, …]")),
                "{s}"
            );
        }
    }
}

#[test]
fn inspect_cuts_a_one_gib_key() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("key.gguf");
    // The key is the last thing in the header and lies in the hole: 1 GiB of 'NUL' bytes,
    // valid UTF-8, followed by nothing (the file ends inside the value, so the reader refuses
    // it in spec mode only after reading the key) - a type tag is written before the hole.
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.extend(GIB.to_le_bytes());
    std::fs::write(&p, &b).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(b.len() as u64 + GIB).unwrap();
    let mut tail = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    use std::io::Write;
    tail.write_all(&[4u8, 0, 0, 0, 7, 0, 0, 0]).unwrap(); // UINT32 7
    tail.write_all(&[0u8; 24]).unwrap();
    drop(tail);
    let size = std::fs::metadata(&p).unwrap().len();
    let r = capped(
        size + GIB,
        &["inspect", "--mode", "spec", p.to_str().unwrap()],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s = String::from_utf8(r.stdout).unwrap();
    assert!(s.len() < 10_000, "printed {} bytes", s.len());
    assert!(s.contains(&format!("…({GIB} bytes)")), "{s}");
}
