//! The suite's encoders against the format owner's reference quantizers, run: mainline ggml's
//! `quantize_row_{q8_0,q1_0,q2_0,tq1_0,tq2_0}_ref` from the pinned sdist, through
//! conformance/adapters/mainline/quantize_ref.c (built by scripts/encoders-vs-mainline.sh, which
//! runs this test with NINFER_QUANTIZE_REF set). spec/codecs.md#quantizer-edge-inputs: identical
//! bytes on finite blocks whose amax is 0 or >= 2^-126 (ordinary values, ties, zeros, −0, f16
//! subnormal maxima); identical decode (scale 0x0000, every value ±0) when amax is an f32
//! subnormal. Without the harness (a plain `cargo test` before scripts/setup-mainline.sh) the
//! test says SKIPPED and passes; with NINFER_QUANTIZE_REF set it must find the harness.

use crate::common::repo_root;
use ninfer_ternary::codec::Codec;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn harness() -> Option<PathBuf> {
    match std::env::var_os("NINFER_QUANTIZE_REF") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "NINFER_QUANTIZE_REF={} is not a file",
                p.display()
            );
            Some(p)
        }
        None => {
            Some(repo_root().join("target/mainline/probe/quantize-ref")).filter(|p| p.is_file())
        }
    }
}

fn owner(h: &PathBuf, ty: &str, x: &[f32]) -> Vec<u8> {
    let mut c = Command::new(h)
        .arg(ty)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    c.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "quantize-ref {ty}");
    o.stdout
}

/// splitmix64 in [-1, 1).
fn unit(s: &mut u64) -> f32 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// Named input sets of whole blocks of `n` elements; the last is the f32-subnormal set.
fn inputs(c: Codec, n: usize) -> Vec<(&'static str, Vec<f32>)> {
    let mut s = 7u64;
    let mut ordinary = Vec::new();
    for b in 0..12 {
        let scale = 10f32.powi(b % 7 - 3);
        ordinary.extend((0..n).map(|_| unit(&mut s) * scale));
    }
    // Ties: x·id lands exactly on k + 1/2 (id = 1 for Q8_0 with amax 127, else amax = 2).
    let ties: Vec<f32> = (0..2 * n)
        .map(|j| {
            if c == Codec::Q8_0 {
                [127.0, 0.5, -0.5, 1.5, -2.5, 126.5, -126.5, 3.0][j % 8]
            } else {
                [2.0, 1.0, -1.0, 0.5, -0.5, 1.5, -3.0, 0.0][j % 8]
            }
        })
        .collect();
    let zeros = vec![0.0f32; n];
    let neg_zeros = vec![-0.0f32; n];
    let mixed: Vec<f32> = (0..n)
        .map(|j| if j % 2 == 0 { -0.0 } else { 0.0 })
        .collect();
    let mut f16_sub = Vec::new();
    for amax in [3e-5f32, 1e-7, 6e-8, 2.9e-8] {
        f16_sub.extend((0..n).map(|j| if j == 1 { -amax } else { amax * unit(&mut s) }));
    }
    let mut f32_sub = Vec::new();
    for amax in [1e-39f32, f32::MIN_POSITIVE / 2.0, f32::from_bits(1)] {
        f32_sub.extend((0..n).map(|j| {
            if j == 3 {
                amax
            } else {
                [0.0, -0.0, amax / 2.0][j % 3]
            }
        }));
    }
    vec![
        ("ordinary", ordinary),
        ("ties", ties),
        ("zeros", zeros),
        ("-0", neg_zeros),
        ("±0", mixed),
        ("f16-subnormal amax", f16_sub),
        ("f32-subnormal amax", f32_sub),
    ]
}

fn first_difference(c: Codec, a: &[u8], b: &[u8]) -> Option<usize> {
    a.chunks(c.block_bytes())
        .zip(b.chunks(c.block_bytes()))
        .position(|(x, y)| x != y)
}

#[test]
fn bytes_equal_the_mainline_reference_quantizers() {
    let Some(h) = harness() else {
        eprintln!(
            "SKIPPED: no target/mainline/probe/quantize-ref (run scripts/encoders-vs-mainline.sh)"
        );
        return;
    };
    let mut failures = Vec::new();
    for (c, ty) in [
        (Codec::Q8_0, "q8_0"),
        (Codec::Q1_0, "q1_0"),
        (Codec::Q2_0G64, "q2_0"),
        (Codec::Tq1_0, "tq1_0"),
        (Codec::Tq2_0, "tq2_0"),
    ] {
        let n = c.block_elems();
        for (set, x) in inputs(c, n) {
            let ours = c.quantize_to_vec(&x).unwrap();
            let theirs = owner(&h, ty, &x);
            assert_eq!(ours.len(), theirs.len(), "{ty} {set}: length");
            if set != "f32-subnormal amax" {
                if let Some(b) = first_difference(c, &ours, &theirs) {
                    failures.push(format!("{ty} {set}: block {b} differs"));
                }
                continue;
            }
            // Identical decode: same scale bytes, every value ±0 in both.
            let at = c.scale_offset().unwrap();
            let (bb, dv) = (c.block_bytes(), |b: &[u8]| c.decode_to_vec(b).unwrap());
            let scales = |b: &[u8]| b.chunks(bb).map(|k| [k[at], k[at + 1]]).collect::<Vec<_>>();
            if scales(&ours) != scales(&theirs) {
                failures.push(format!("{ty} {set}: scales differ"));
            }
            if !dv(&ours)
                .iter()
                .chain(dv(&theirs).iter())
                .all(|&v| v == 0.0)
            {
                failures.push(format!("{ty} {set}: a value is not ±0"));
            }
            let differing = ours
                .chunks(bb)
                .zip(theirs.chunks(bb))
                .filter(|(a, b)| a != b)
                .count();
            eprintln!(
                "{ty} {set}: identical decode; code bytes differ in {differing} of {} blocks",
                ours.len() / bb
            );
        }
        // Negative control: the comparison sees a one-bit change of the owner's bytes.
        let x = &inputs(c, n)[0].1;
        let mut theirs = owner(&h, ty, x);
        let last = theirs.len() - 1;
        theirs[last] ^= 1;
        assert!(first_difference(c, &c.quantize_to_vec(x).unwrap(), &theirs).is_some());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
