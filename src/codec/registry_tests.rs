//! Decoders of the non-ternary registry formats against payloads built here by separate,
//! literal encoders: the test picks the integer codes and scales first, lays them into the
//! planes bit by bit from the layout text, and expects `code x scale` computed in f64.

#![allow(clippy::needless_range_loop)]

use super::{fp8_row, grouped_int, nvfp4};
use crate::error::ErrorClass;
use crate::geometry::row_split_geometry;

/// Tiny deterministic generator (test data only).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// Builds a row-split payload from chosen signed codes `q[r][c]` (c < k) and per-group scale
/// words, writing every bit separately.
fn encode_grouped(name: &str, n: u64, k: u64, q: &[Vec<i32>], scales: &[Vec<u16>]) -> Vec<u8> {
    let f = crate::spec::get().format(name).unwrap();
    let g = row_split_geometry(f, n, k).unwrap();
    let bits = grouped_int::code_bits(name).unwrap() as i32;
    let group = f.group_size.unwrap() as usize;
    let mut p = vec![0u8; g.payload_bytes as usize];
    for r in 0..n as usize {
        for gi in 0..g.groups_per_row as usize {
            let gidx = r * g.groups_per_row as usize + gi;
            let sw = scales[r][gi];
            let so = g.scale_offset as usize + 2 * gidx;
            p[so] = sw as u8;
            p[so + 1] = (sw >> 8) as u8;
            for lane in 0..group {
                let c = gi * group + lane;
                let code = if c < k as usize { q[r][c] } else { 0 };
                let u = code.rem_euclid(1 << bits) as u32;
                for bit in 0..bits as usize {
                    if (u >> bit) & 1 == 0 {
                        continue;
                    }
                    if bits == 8 {
                        p[g.base_offset as usize + gidx * 32 + lane] |= 1 << bit;
                    } else if bit < 4 {
                        let byte = g.base_offset as usize + gidx * 32 + lane / 2;
                        p[byte] |= 1 << (bit + 4 * (lane % 2));
                    } else {
                        let per = (bits - 4) as usize;
                        let t = lane * per + (bit - 4);
                        let byte = g.high_offset as usize + gidx * g.high_bytes_per_group as usize;
                        p[byte + t / 8] |= 1 << (t % 8);
                    }
                }
            }
        }
    }
    p
}

fn check_grouped(name: &str, n: u64, k: u64, seed: u64) {
    let f = crate::spec::get().format(name).unwrap();
    let g = row_split_geometry(f, n, k).unwrap();
    let bits = grouped_int::code_bits(name).unwrap();
    let (lo, hi) = if bits == 8 {
        (-127, 127)
    } else {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    };
    let mut rng = Lcg(seed);
    let span = (hi - lo + 1) as u32;
    let q: Vec<Vec<i32>> = (0..n)
        .map(|_| (0..k).map(|_| lo + (rng.next() % span) as i32).collect())
        .collect();
    // scales: small powers of two times odd mantissas, all exactly representable in binary16
    let scales: Vec<Vec<u16>> = (0..n)
        .map(|_| {
            (0..g.groups_per_row)
                .map(|_| half::f16::from_f64((1 + 2 * (rng.next() % 64)) as f64 / 1024.0).to_bits())
                .collect()
        })
        .collect();
    let p = encode_grouped(name, n, k, &q, &scales);
    let got = grouped_int::decode_rows(f, &g, &p, 0..n).unwrap();
    assert_eq!(got.len(), (n * k) as usize);
    let group = f.group_size.unwrap();
    for r in 0..n as usize {
        for c in 0..k as usize {
            let s = half::f16::from_bits(scales[r][c / group as usize]).to_f64();
            let want = s * q[r][c] as f64;
            assert_eq!(got[r * k as usize + c] as f64, want, "{name} [{r},{c}]");
        }
    }
    // row slice equals the same rows of the whole decode
    if n > 1 {
        let part = grouped_int::decode_rows(f, &g, &p, 1..n).unwrap();
        assert_eq!(part, got[k as usize..].to_vec());
    }
    // negative control: the other nibble order / bit order changes the values
    let mut swapped = p.clone();
    for b in &mut swapped[..g.base_bytes as usize] {
        *b = if bits == 8 {
            b.reverse_bits()
        } else {
            b.rotate_left(4)
        };
    }
    assert_ne!(
        grouped_int::decode_rows(f, &g, &swapped, 0..n).unwrap(),
        got
    );
    if g.high_bytes > 0 {
        let mut flipped = p.clone();
        let h = g.high_offset as usize;
        for b in &mut flipped[h..h + g.high_bytes as usize] {
            *b = b.reverse_bits();
        }
        assert_ne!(
            grouped_int::decode_rows(f, &g, &flipped, 0..n).unwrap(),
            got
        );
    }
    // hostile: a short payload is codec.length, not a panic
    let e = grouped_int::decode_rows(f, &g, &p[..p.len() - 1], 0..n).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecLength);
}

#[test]
fn grouped_integer_formats_decode_chosen_codes() {
    for (name, n, k) in [
        ("Q4G64_F16S", 3, 200),
        ("Q5G64_F16S", 2, 130),
        ("Q6G64_F16S", 3, 257),
        ("W8G32_F16S", 2, 33),
        ("Q4G64_F16S", 1, 128),
    ] {
        check_grouped(name, n, k, 7 + n * k);
    }
}

#[test]
fn grouped_high_plane_literal_examples() {
    // storage-layouts text: Q6 lane 1 bits 4 and 5 sit in high byte 0 bits 2 and 3.
    let f = crate::spec::get().format("Q6G64_F16S").unwrap();
    let g = row_split_geometry(f, 1, 64).unwrap();
    let mut p = vec![0u8; g.payload_bytes as usize];
    p[g.high_offset as usize] = 0x08; // lane 1: u = 0b10_0000 = 32 -> q = -32
    p[g.scale_offset as usize + 1] = 0x3c; // binary16 1.0
    let v = grouped_int::decode_rows(f, &g, &p, 0..1).unwrap();
    assert_eq!(v[1], -32.0);
    assert!(v.iter().enumerate().all(|(i, &x)| i == 1 || x == 0.0));
    // Q5: high byte 0 bit 7 is lane 7's bit 4; with base nibble 0xf: u = 31 -> q = -1
    let f = crate::spec::get().format("Q5G64_F16S").unwrap();
    let g = row_split_geometry(f, 1, 64).unwrap();
    let mut p = vec![0u8; g.payload_bytes as usize];
    p[g.base_offset as usize + 3] = 0xf0; // lane 7 (odd) in the high nibble of byte 3
    p[g.high_offset as usize] = 0x80;
    p[g.scale_offset as usize + 1] = 0x40; // binary16 2.0
    let v = grouped_int::decode_rows(f, &g, &p, 0..1).unwrap();
    assert_eq!(v[7], -2.0);
}

#[test]
fn e4m3fn_and_e2m1_tables() {
    // E4M3FN: 0x38 = 1.0, 0x7e = 448 (max), 0x01 = 2^-9, 0x7f NaN, 0xb8 = -1.0.
    assert_eq!(fp8_row::e4m3fn_to_f32(0x38), 1.0);
    assert_eq!(fp8_row::e4m3fn_to_f32(0x7e), 448.0);
    assert_eq!(fp8_row::e4m3fn_to_f32(0x01), 2f32.powi(-9));
    assert_eq!(fp8_row::e4m3fn_to_f32(0x08), 2f32.powi(-6));
    assert!(fp8_row::e4m3fn_to_f32(0x7f).is_nan());
    assert!(fp8_row::e4m3fn_to_f32(0xff).is_nan());
    assert_eq!(fp8_row::e4m3fn_to_f32(0xb8), -1.0);
    assert_eq!(fp8_row::e4m3fn_to_f32(0x77), 240.0);
    let want = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    for c in 0..8u8 {
        assert_eq!(nvfp4::e2m1_to_f32(c), want[c as usize]);
        assert_eq!(nvfp4::e2m1_to_f32(c | 8), -want[c as usize]);
    }
}

#[test]
fn registry_size_examples_match_geometry() {
    assert_eq!(nvfp4::geometry(128, 64).unwrap().2, 4612);
    assert_eq!(fp8_row::geometry(2, 4).unwrap().1, 260);
    assert_eq!(fp8_row::geometry(128, 64).unwrap().1, 8448);
    assert!(nvfp4::geometry(64, 64).is_none());
    assert!(nvfp4::geometry(128, 32).is_none());
}

#[test]
fn nvfp4_decodes_chosen_codes_and_swizzled_scales() {
    let (n, k) = (256u64, 128u64);
    let (soff, doff, size) = nvfp4::geometry(n, k).unwrap();
    let mut rng = Lcg(99);
    let codes: Vec<u8> = (0..n * k).map(|_| (rng.next() % 16) as u8).collect();
    // E4M3FN scale words with exponent field 1..14 (normal, finite)
    let sc: Vec<u8> = (0..n * k / 16)
        .map(|_| (((1 + rng.next() % 14) << 3) | (rng.next() % 8)) as u8)
        .collect();
    let div = 3.0f32;
    let mut p = vec![0u8; size as usize];
    for (i, &c) in codes.iter().enumerate() {
        p[i / 2] |= c << (4 * (i % 2));
    }
    let groups = k / 16;
    for row in 0..n {
        for g in 0..groups {
            // the layout text's swizzle, spelled out with its named terms
            let (row_tile, row_inner, scale_tile, scale_lane) =
                (row / 128, row % 128, g / 4, g % 4);
            let off = (row_tile * (k / 64) + scale_tile) * 512
                + (row_inner % 32) * 16
                + (row_inner / 32) * 4
                + scale_lane;
            p[(soff + off) as usize] = sc[(row * groups + g) as usize];
        }
    }
    p[doff as usize..].copy_from_slice(&div.to_le_bytes());
    let got = nvfp4::decode_rows(n, k, &p, 0..n).unwrap();
    let e2m1 = |c: u8| {
        let m = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0][(c & 7) as usize];
        if c & 8 != 0 {
            -m
        } else {
            m
        }
    };
    let e4 = |s: u8| {
        let (e, m) = (((s >> 3) & 15) as i32, (s & 7) as f64);
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    };
    for row in 0..n {
        for c in 0..k {
            let i = (row * k + c) as usize;
            let want =
                (e2m1(codes[i]) * e4(sc[(row * groups + c / 16) as usize]) / div as f64) as f32;
            assert_eq!(got[i].to_bits(), want.to_bits(), "[{row},{c}]");
        }
    }
    // negative control: reading the scales in natural [n, k/16] order gives other values
    let mut natural = p.clone();
    for row in 0..n {
        for g in 0..groups {
            natural[(soff + row * groups + g) as usize] = sc[(row * groups + g) as usize];
        }
    }
    assert_ne!(nvfp4::decode_rows(n, k, &natural, 0..n).unwrap(), got);
    let e = nvfp4::decode_rows(n, k, &p[..p.len() - 1], 0..n).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecLength);
    assert!(nvfp4::decode_rows(100, 64, &p, 0..1).is_err());
}

#[test]
fn fp8_row_decodes_chosen_codes_and_row_scales() {
    let (n, k) = (3u64, 70u64);
    let (soff, size) = fp8_row::geometry(n, k).unwrap();
    let mut rng = Lcg(5);
    let codes: Vec<u8> = (0..n * k)
        .map(|_| loop {
            let c = (rng.next() % 256) as u8;
            if c & 0x7f != 0x7f {
                break c;
            }
        })
        .collect();
    let scales = [0.5f32, -3.0, 0.0078125];
    let mut p = vec![0u8; size as usize];
    p[..codes.len()].copy_from_slice(&codes);
    for (r, s) in scales.iter().enumerate() {
        let w = (s.to_bits() >> 16) as u16; // exact: these f32 values have 8-bit significands
        p[soff as usize + 2 * r..soff as usize + 2 * r + 2].copy_from_slice(&w.to_le_bytes());
    }
    let got = fp8_row::decode_rows(n, k, &p, 0..n).unwrap();
    for r in 0..n as usize {
        for c in 0..k as usize {
            let b = codes[r * k as usize + c];
            let (sg, e, m) = (
                if b & 0x80 != 0 { -1.0 } else { 1.0 },
                ((b >> 3) & 15) as i32,
                (b & 7) as f64,
            );
            let v = if e == 0 {
                m * 2f64.powi(-9)
            } else {
                (1.0 + m / 8.0) * 2f64.powi(e - 7)
            };
            let want = (sg * v * scales[r] as f64) as f32;
            assert_eq!(
                got[r * k as usize + c].to_bits(),
                want.to_bits(),
                "[{r},{c}]"
            );
        }
    }
    // negative control: a column-major reading of the code plane changes the values
    let mut t = p.clone();
    for r in 0..n as usize {
        for c in 0..k as usize {
            t[c * n as usize + r] = codes[r * k as usize + c];
        }
    }
    assert_ne!(fp8_row::decode_rows(n, k, &t, 0..n).unwrap(), got);
    let e = fp8_row::decode_rows(n, k, &p[..p.len() - 1], 0..n).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecLength);
}
