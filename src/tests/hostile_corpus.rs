//! Issue #32 item 10 and the corpus integrity check, at the library level: big-endian GGUF is
//! validated before it is transformed (the corpus observer refuses with the little-endian
//! reader's class and offset), and the integrity check of a corpus copy. The `check-reader`
//! runs over a corpus copy stay in `tests/it/hostile_corpus.rs`.

use crate::corpus::families::gguf::big_endian_twin;
use crate::corpus::observe::observe_gguf;
use crate::gguf::{self, ByteOrder, Mode};
use crate::ErrorClass;
use std::time::Instant;

const ARCH: (&str, &str) = ("general.architecture", "be");

/// A big-endian GGUF v3 written field by field (the writer only writes little-endian):
/// string KVs, then tensor infos `(name, dims, type id, offset)`, then `data_len` zero bytes
/// at the default alignment of 32.
fn be_gguf(kvs: &[(&str, &str)], tensors: &[(&str, &[u64], u32, u64)], data_len: usize) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_be_bytes());
    b.extend_from_slice(&(tensors.len() as u64).to_be_bytes());
    b.extend_from_slice(&(kvs.len() as u64).to_be_bytes());
    for (k, v) in kvs {
        b.extend_from_slice(&(k.len() as u64).to_be_bytes());
        b.extend_from_slice(k.as_bytes());
        b.extend_from_slice(&8u32.to_be_bytes());
        b.extend_from_slice(&(v.len() as u64).to_be_bytes());
        b.extend_from_slice(v.as_bytes());
    }
    for (name, dims, ty, offset) in tensors {
        b.extend_from_slice(&(name.len() as u64).to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&(dims.len() as u32).to_be_bytes());
        for d in *dims {
            b.extend_from_slice(&d.to_be_bytes());
        }
        b.extend_from_slice(&ty.to_be_bytes());
        b.extend_from_slice(&offset.to_be_bytes());
    }
    b.resize(b.len().div_ceil(32) * 32 + data_len, 0);
    b
}

/// Thousands of tensors all claiming the same 32 MiB: before #32 the swapper walked every
/// range (tensors × range, > 120 s); now the reader refuses the layout before any data moves.
#[test]
fn big_endian_overlap_bomb_is_refused_fast_with_the_readers_class() {
    let n = 2000;
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let dims: &[u64] = &[8 << 20];
    let tensors: Vec<(&str, &[u64], u32, u64)> = names
        .iter()
        .map(|s| (s.as_str(), dims, 0u32, 0u64))
        .collect();
    let bomb = be_gguf(&[ARCH], &tensors, 32 << 20);
    assert!(gguf::is_big_endian(&bomb));
    for (mode, class) in [
        (Mode::Spec, ErrorClass::GgufTensorOverlap),
        (Mode::Strict, ErrorClass::GgufTensorOffsetSequence),
    ] {
        let t0 = Instant::now();
        let e = observe_gguf(&bomb, mode, None).unwrap_err();
        let took = t0.elapsed();
        assert_eq!(e.class(), class, "{mode:?}: {e}");
        assert!(took.as_secs_f64() < 1.0, "{mode:?}: {took:?}");
        eprintln!(
            "overlap bomb ({n} tensors, {} MiB), {mode:?}: {took:?}",
            bomb.len() >> 20
        );
    }
    // The plain swapper (spec-mode rules) refuses it the same way.
    let e = gguf::swap_byte_order(&bomb, ByteOrder::Big).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufTensorOverlap, "{e}");
}

/// A big-endian file refused for a reason that is not its byte order keeps that reason's class
/// (before #32 every one became `gguf.big_endian` "only little-endian files are supported").
#[test]
fn a_big_endian_refusal_keeps_its_real_class() {
    let f32s: &[u64] = &[8];
    let cases: Vec<(&str, Vec<u8>, ErrorClass)> = vec![
        (
            "duplicate key",
            be_gguf(&[ARCH, ("k", "a"), ("k", "b")], &[("t", f32s, 0, 0)], 32),
            ErrorClass::GgufKeyDuplicate,
        ),
        (
            "unknown ggml type",
            be_gguf(&[ARCH], &[("t", f32s, 9999, 0)], 32),
            ErrorClass::GgufTensorType,
        ),
        (
            "duplicate tensor name",
            be_gguf(&[ARCH], &[("t", f32s, 0, 0), ("t", f32s, 0, 32)], 64),
            ErrorClass::GgufTensorNameDuplicate,
        ),
        (
            "tensor past the end",
            be_gguf(&[ARCH], &[("t", f32s, 0, 0)], 16),
            ErrorClass::GgufTensorOutOfBounds,
        ),
        (
            "architecture missing (strict)",
            be_gguf(&[], &[("t", f32s, 0, 0)], 32),
            ErrorClass::GgufArchitectureMissing,
        ),
        (
            // A type with no big-endian form that is also out of bounds: the layout fault is
            // found first, by the reader, before the swapper looks at the type.
            "PQ2_0 past the end",
            be_gguf(&[ARCH], &[("t", &[128], 142, 0)], 10),
            ErrorClass::GgufTensorOutOfBounds,
        ),
    ];
    for (what, bytes, class) in cases {
        assert!(gguf::is_big_endian(&bytes), "{what}");
        let e = observe_gguf(&bytes, Mode::Strict, None).unwrap_err();
        assert_eq!(e.class(), class, "{what}: {e}");
    }
}

/// A well-formed big-endian PQ2_0 file: the only refusal is the swapper's own, and its detail
/// (the tensor and the type) reaches the caller instead of a generic "little-endian only".
#[test]
fn a_well_formed_big_endian_pq2_0_file_is_refused_with_the_swappers_reason() {
    let bytes = be_gguf(&[ARCH], &[("w", &[128], 142, 0)], 34);
    let e = observe_gguf(&bytes, Mode::Strict, None).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufBigEndian, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("PQ2_0") && msg.contains("'w'"), "{msg}");
    assert!(!msg.contains("only little-endian"), "{msg}");
}

/// Every prefix of the big-endian twin is refused exactly as the same prefix of its
/// little-endian twin (class and offset): the big-endian path applies the reader's rules.
#[test]
fn every_big_endian_prefix_fails_like_its_little_endian_twin() {
    let le = big_endian_twin(3).unwrap();
    let be = gguf::swap_byte_order(&le, ByteOrder::Little).unwrap();
    let mut refused = 0;
    for n in 8..be.len() {
        // Prefixes that only drop the last tensor's padding are accepted by both.
        match (
            observe_gguf(&le[..n], Mode::Strict, None),
            observe_gguf(&be[..n], Mode::Strict, None),
        ) {
            (Err(a), Err(b)) => {
                assert_eq!(
                    (a.class(), a.offset()),
                    (b.class(), b.offset()),
                    "prefix {n}: {a} / {b}"
                );
                refused += 1;
            }
            (Ok(_), Ok(_)) => {}
            (a, b) => panic!(
                "prefix {n}: little-endian {:?}, big-endian {:?}",
                a.err(),
                b.err()
            ),
        }
    }
    assert!(refused > be.len() / 2, "{refused}");
}

/// The corpus's mixed-endian cases (the version field alone swapped) stay `gguf.big_endian`:
/// their counts fit the file only read little-endian.
#[test]
fn mixed_endian_files_are_still_refused_as_big_endian() {
    let root = super::fixtures::repo_root().join("conformance/gguf");
    for f in ["n_big_endian_v3.gguf", "n_big_endian_v2.gguf"] {
        let bytes = std::fs::read(root.join(f)).unwrap();
        let e = observe_gguf(&bytes, Mode::Strict, None).unwrap_err();
        assert_eq!(e.class(), ErrorClass::GgufBigEndian, "{f}: {e}");
        assert!(e.to_string().contains("mixed-endian"), "{f}: {e}");
    }
}

/// Hashing every file of the full corpus (~36 MB, ~400 cases) costs well under a second.
#[test]
fn the_integrity_check_of_the_whole_corpus_is_fast() {
    use crate::corpus::{integrity::Stage, manifest::Manifest};
    let root = super::fixtures::repo_root().join("conformance");
    let m = Manifest::load(&root.join("MANIFEST.json")).unwrap();
    let all = m.selected(|_| true);
    let t0 = Instant::now();
    m.verify_integrity(&root, &all, Stage::Before).unwrap();
    let took = t0.elapsed();
    let mb = m.cases.iter().map(|c| c.bytes).sum::<u64>() as f64 / 1e6;
    eprintln!(
        "integrity check: {} cases, {mb:.1} MB in {took:?}",
        all.len()
    );
    assert!(took.as_secs_f64() < 1.0, "{took:?}");
}

/// After a run only files whose metadata moved are hashed again: a same-size rewrite with
/// other bytes is caught (its ctime moved), a rewrite with the same bytes passes (the control:
/// it is re-hashed and matches), and so does the untouched corpus.
#[test]
fn the_check_after_a_run_catches_a_rewrite_by_its_metadata() {
    use crate::corpus::{integrity::Stage, manifest::Manifest};
    let c = corpus_copy();
    let m = Manifest::load(&c.root.join("MANIFEST.json")).unwrap();
    let all = m.selected(|_| true);
    let before = m.verify_integrity(&c.root, &all, Stage::Before).unwrap();
    m.verify_unchanged(&c.root, &all, &before).unwrap();
    let f = c.root.join("gguf/n_bool_2.gguf");
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes).unwrap();
    m.verify_unchanged(&c.root, &all, &before).unwrap();
    let mut other = bytes.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    // Same size, and the mtime put back: only the ctime tells.
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    std::fs::write(&f, &other).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let e = m.verify_unchanged(&c.root, &all, &before).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CorpusIntegrity);
    assert!(e.to_string().contains("gguf/n_bool_2.gguf"), "{e}");
}

/// A fresh copy of the corpus (MANIFEST.json and every file it names) at `<tmp>/corpus`.
struct Copy {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

fn corpus_copy() -> Copy {
    let dir = tempfile::tempdir().unwrap();
    let src = super::fixtures::repo_root().join("conformance");
    let root = dir.path().join("corpus");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("MANIFEST.json")).unwrap()).unwrap();
    for c in m["cases"].as_array().unwrap() {
        let rel = c["file"].as_str().unwrap();
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), root.join(rel)).unwrap();
    }
    std::fs::copy(src.join("MANIFEST.json"), root.join("MANIFEST.json")).unwrap();
    Copy { _dir: dir, root }
}
