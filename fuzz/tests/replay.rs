//! Replays seeds and regressions of every target, including `gguf_structured` through its
//! `arbitrary` decoder (which the root crate's replay test cannot do), plus a short
//! deterministic random run of the structured generator.
//!
//! `cargo test --manifest-path fuzz/Cargo.toml`

use arbitrary::{Arbitrary, Unstructured};
use ninfer_ternary_fuzz::{checks, structured};
use std::path::{Path, PathBuf};

fn replay(target: &str, bytes: &[u8]) {
    match target {
        "gguf_parse" => checks::check_gguf(bytes),
        "ninfer_parse" => checks::check_ninfer(bytes),
        "ninfer_roundtrip" => checks::check_ninfer_roundtrip(bytes),
        "codec_fast_vs_ref" => ninfer_ternary_fuzz::deep::check_codec(bytes),
        "pack_nano" => ninfer_ternary_fuzz::deep::check_pack(bytes),
        "dumps_parse" => {
            ninfer_ternary::verify::dump_bundle::parse_all(bytes);
        }
        // What libfuzzer-sys does with a typed input.
        "gguf_structured" => {
            if let Ok(d) = structured::GgufDesc::arbitrary_take_rest(Unstructured::new(bytes)) {
                structured::check_desc(&d);
            }
        }
        other => panic!("no checks for {other}"),
    }
}

fn files(kind: &str) -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(kind);
    let mut out = Vec::new();
    for d in std::fs::read_dir(root).into_iter().flatten().flatten() {
        if !d.path().is_dir() {
            continue;
        }
        let t = d.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().is_file() {
                out.push((t.clone(), f.path()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn seeds_and_regressions_pass() {
    let mut n = 0;
    for kind in ["seeds", "regressions"] {
        for (t, p) in files(kind) {
            let bytes = std::fs::read(&p).unwrap();
            let r = std::panic::catch_unwind(|| replay(&t, &bytes));
            assert!(r.is_ok(), "{} failed its {t} checks", p.display());
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn structured_random_smoke() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut well_formed = 0;
    for i in 0..3000 {
        let len = 16 + (i % 400);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        if let Ok(d) = structured::GgufDesc::arbitrary_take_rest(Unstructured::new(&bytes)) {
            if structured::render(&d).is_some_and(|r| r.well_formed) {
                well_formed += 1;
            }
            let r = std::panic::catch_unwind(|| structured::check_desc(&d));
            assert!(r.is_ok(), "random description {i} failed: {d:?}");
        }
    }
    eprintln!("{well_formed} well-formed descriptions");
}
