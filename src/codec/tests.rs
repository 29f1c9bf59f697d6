//! Cross-codec tests: the spec tables, the published vectors, fast == reference, lengths,
//! validation and statistics.

use super::*;
use proptest::prelude::*;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The codecs with a block scale and codes (everything but the plain types).
const BLOCK_CODECS: [Codec; 8] = [
    Codec::Q8_0,
    Codec::Pq2_0,
    Codec::Q2_0G64,
    Codec::Ptq1_0,
    Codec::Tq1_0,
    Codec::Tq2_0,
    Codec::Q1_0,
    Codec::Q2_0sPlanar,
];

#[test]
fn names_round_trip() {
    for c in Codec::ALL {
        assert_eq!(Codec::from_name(c.name()), Some(c));
    }
    assert_eq!(
        Codec::from_name("PQ2_0"),
        None,
        "names are the lower-case spec names"
    );
}

#[test]
fn sizes_match_every_ggml_types_entry_including_variants() {
    let s = crate::spec::get();
    let mut seen = std::collections::HashSet::new();
    for t in s.ggml.types.iter().chain(&s.ggml.variants) {
        let Some(name) = &t.codec else { continue };
        let c = Codec::from_name(name)
            .unwrap_or_else(|| panic!("{}: codec {name:?} unknown to src/codec", t.name));
        assert_eq!(Codec::for_ggml_type(t), Some(c));
        assert_eq!(for_ggml_type(t), Some(c));
        assert_eq!(
            c.block_elems(),
            t.block_elems as usize,
            "{} (id {}) block_elems",
            t.name,
            t.id
        );
        assert_eq!(
            c.block_bytes(),
            t.block_bytes as usize,
            "{} (id {}) block_bytes",
            t.name,
            t.id
        );
        seen.insert(c);
    }
    for c in Codec::ALL {
        assert!(
            seen.contains(&c),
            "{} is named by no ggml_types.json entry",
            c.name()
        );
    }
    // The forks the brief calls out.
    let legacy = s.ggml.variants.iter().find(|v| v.id == 42).unwrap();
    assert_eq!(Codec::for_ggml_type(legacy), Some(Codec::Pq2_0));
    for id in [53, 47] {
        let v = s.ggml.variants.iter().find(|v| v.id == id).unwrap();
        assert_eq!(Codec::for_ggml_type(v), Some(Codec::Q2_0sPlanar));
    }
    assert_eq!(
        Codec::for_ggml_type(s.ggml_type(42).unwrap()),
        Some(Codec::Q2_0G64)
    );
}

#[test]
fn unsupported_types_are_a_clean_error() {
    let q4 = crate::spec::get().ggml_type(2).unwrap();
    assert_eq!(Codec::for_ggml_type(q4), None);
    let e = Codec::for_ggml_type_checked(q4).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecUnsupported);
    assert!(e.detail().contains("Q4_0"), "{e}");
}

#[test]
fn codecs_json_layouts_agree() {
    for entry in &crate::spec::get().codecs.codecs {
        let name = entry.codec.as_str();
        let c = Codec::from_name(name)
            .unwrap_or_else(|| panic!("codecs.json names unknown codec {name}"));
        assert_eq!(entry.block_elems as usize, c.block_elems(), "{name}");
        assert_eq!(entry.block_bytes as usize, c.block_bytes(), "{name}");
        let lo = entry.scale[0] as usize;
        assert_eq!(Some(lo), c.scale_offset(), "{name} scale offset");
        assert_eq!(entry.scale[1] as usize, lo + 2, "{name} scale is one f16");
        // The code byte ranges and the scale tile the block exactly once.
        let mut covered = vec![0u8; c.block_bytes()];
        for [a, b] in [Some(entry.scale), entry.codes, entry.qs, entry.qh]
            .into_iter()
            .flatten()
        {
            for x in &mut covered[a as usize..b as usize] {
                *x += 1;
            }
        }
        assert!(
            covered.iter().all(|&n| n == 1),
            "{name}: byte ranges tile the block"
        );
        if let Some(st) = &entry.stages {
            // Stages are contiguous in elements and bytes, cover the block and fit digits:
            // a stage of b bytes holding e elements stores e / b digits per byte.
            let (mut e0, mut b0) = (0, 0);
            for sg in st {
                assert_eq!((sg.elems[0], sg.bytes[0]), (e0, b0), "{name} stage order");
                let (e, b) = (sg.elems[1] - e0, sg.bytes[1] - b0);
                assert!(b > 0 && e % b == 0 && e / b <= 5, "{name} stage {sg:?}");
                (e0, b0) = (sg.elems[1], sg.bytes[1]);
            }
            assert_eq!(e0, entry.block_elems, "{name} stages cover the elements");
            assert_eq!(
                b0,
                entry.block_bytes - 2,
                "{name} stages cover the code bytes"
            );
        }
    }
    assert_eq!(ptq1::QS_BYTES + ptq1::QH_BYTES, ptq1::SCALE_OFFSET);
    assert_eq!(tq1::QS_BYTES + tq1::QH_BYTES, tq1::SCALE_OFFSET);
}

/// Trits (0..=2) of a vector's description in spec/codecs.json.
fn vector_trits(desc: Option<&str>) -> [u8; 128] {
    match desc {
        None | Some("all 0") => [1; 128],
        Some("t[e] = (e % 3) - 1") => std::array::from_fn(|e| (e % 3) as u8),
        Some(other) => {
            panic!("spec/codecs.json vector trits {other:?}: teach this test the description")
        }
    }
}

#[test]
fn every_spec_vector_is_reproduced() {
    let vectors = &crate::spec::get().codecs.vectors;
    assert!(!vectors.is_empty());
    for v in vectors {
        let codec = Codec::from_name(&v.codec).unwrap();
        let t = vector_trits(v.trits.as_deref());
        let d_bits = u16::from_str_radix(&v.d_f16, 16).unwrap();
        let want = unhex(&v.hex);
        let encoded: Vec<u8> = match codec {
            Codec::Ptq1_0 => ptq1::encode_block(&t, d_bits).to_vec(),
            Codec::Pq2_0 => pq2::encode_block::<128, 34>(&t, d_bits).to_vec(),
            other => panic!(
                "vector {} for {other:?}: no encoder wired into this test",
                v.name
            ),
        };
        assert_eq!(encoded, want, "vector {}: encode", v.name);
        // Decode back to (t − 1)·d.
        let d = f16_to_f32(d_bits);
        let x: Vec<f32> = t.iter().map(|&t| (t as f32 - 1.0) * d).collect();
        assert_eq!(
            codec.decode_to_vec(&want).unwrap(),
            x,
            "vector {}: decode",
            v.name
        );
        assert_eq!(codec.decode_to_vec(&want).unwrap(), {
            let mut r = vec![0f32; 128];
            codec.decode_reference(&want, &mut r).unwrap();
            r
        });
        // The reference quantizer produces the same bytes from those values.
        assert_eq!(
            codec.quantize_to_vec(&x).unwrap(),
            want,
            "vector {}: quantize",
            v.name
        );
    }
}

#[test]
fn byte_facts_from_the_spec() {
    let f = &crate::spec::get().codecs.byte_facts;
    let byte = |k: &str| unhex(k)[0];
    assert_eq!(base3::encode5([0; 5]), byte(&f.qs_all_minus1));
    assert_eq!(base3::encode5([1; 5]), byte(&f.qs_all_zero));
    assert_eq!(base3::encode5([2; 5]), byte(&f.qs_all_plus1));
    assert_eq!(base3::encode4([0; 4]), byte(&f.qh_all_minus1));
    assert_eq!(base3::encode4([1; 4]), byte(&f.qh_all_zero));
    assert_eq!(base3::encode4([2; 4]), byte(&f.qh_all_plus1));
    assert_eq!(base3::digits5(byte(&f.qs_all_plus1)), [2; 5]);
    assert_eq!(base3::digits4(byte(&f.qh_all_zero)), [1; 4]);
    let nq = (0..=255u8).filter(|&b| !ptq1::is_canonical_qs(b)).count() as u64;
    let nh = (0..=255u8).filter(|&b| !ptq1::is_canonical_qh(b)).count() as u64;
    assert_eq!(nq, f.noncanonical_qs_count);
    assert_eq!(nh, f.noncanonical_qh_count);
    // Hand-derived: canonical qs bytes are ceil(256·v/243); the 13 gaps are where that
    // ceiling skips a value (first gaps: 1, since v=1 → ceil(1.053) = 2; and 20, since
    // v=18 → 19 and v=19 → ceil(20.02) = 21).
    let nonq: Vec<u8> = (0..=255u8).filter(|&b| !ptq1::is_canonical_qs(b)).collect();
    assert_eq!(
        nonq,
        [1, 20, 40, 60, 79, 99, 119, 138, 158, 178, 197, 217, 237]
    );
}

fn fast_equals_reference(c: Codec, bytes: &[u8]) -> std::result::Result<(), TestCaseError> {
    let n = c.blocks_in(bytes.len()).unwrap() * c.block_elems();
    let mut a = vec![0f32; n];
    let mut b = vec![0f32; n];
    c.decode(bytes, &mut a).unwrap();
    c.decode_reference(bytes, &mut b).unwrap();
    prop_assert_eq!(bits(&a), bits(&b), "{:?}", c);
    // Every SIMD path this CPU runs, forced one by one (not just the dispatched one).
    for p in simd::available() {
        simd::decode_with(c, p, bytes, &mut a).unwrap();
        prop_assert_eq!(bits(&a), bits(&b), "{:?} on {}", c, p.name());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fast_decode_equals_reference_on_random_bytes(ci in 0usize..12, blocks in 0usize..5, seed in proptest::collection::vec(any::<u8>(), 0..=1100)) {
        let c = Codec::ALL[ci];
        let len = (blocks * c.block_bytes()).min(seed.len() / c.block_bytes() * c.block_bytes());
        fast_equals_reference(c, &seed[..len])?;
    }

    #[test]
    fn fast_decode_equals_reference_with_special_scales(ci in 0usize..8, body in proptest::collection::vec(any::<u8>(), 66),
                                                         d in prop_oneof![Just(0x7c00u16), Just(0xfc00), Just(0x7e00), Just(0x7c01), Just(0xfe01), Just(0x8000), Just(0x0001), any::<u16>()]) {
        let c = BLOCK_CODECS[ci];
        let mut blk = body[..c.block_bytes()].to_vec();
        let so = c.scale_offset().unwrap();
        blk[so..so + 2].copy_from_slice(&d.to_le_bytes());
        fast_equals_reference(c, &blk)?;
    }

    #[test]
    fn ternary_encode_decode_round_trips(t in proptest::collection::vec(0u8..3, 256), d in any::<u16>()) {
        let t128: [u8; 128] = t[..128].try_into().unwrap();
        let t64: [u8; 64] = t[..64].try_into().unwrap();
        let t256: [u8; 256] = t[..].try_into().unwrap();
        prop_assert_eq!(ptq1::trits(&ptq1::encode_block(&t128, d)), t128);
        prop_assert_eq!(tq1::trits(&tq1::encode_block(&t256, d)), t256);
        prop_assert_eq!(pq2::codes::<128, 34>(&pq2::encode_block(&t128, d)), t128);
        prop_assert_eq!(pq2::codes::<64, 18>(&pq2::encode_block(&t64, d)), t64);
        prop_assert_eq!(tq2::codes(&tq2::encode_block(&t256, d)), t256);
        prop_assert!(ptq1::is_canonical_block(&ptq1::encode_block(&t128, d)));
        // Decoded values are (t − 1)·d for every scale pattern.
        let df = f16_to_f32(d);
        let want: Vec<u32> = t128.iter().map(|&t| ((t as f32 - 1.0) * df).to_bits()).collect();
        prop_assert_eq!(bits(&Codec::Ptq1_0.decode_to_vec(&ptq1::encode_block(&t128, d)).unwrap()), want.clone());
        prop_assert_eq!(bits(&Codec::Pq2_0.decode_to_vec(&pq2::encode_block::<128, 34>(&t128, d)).unwrap()), want);
    }

    #[test]
    fn any_codes_round_trip(c in proptest::collection::vec(0u8..4, 256), d in any::<u16>()) {
        let c128: [u8; 128] = c[..128].try_into().unwrap();
        let c32: [u8; 32] = c[..32].try_into().unwrap();
        let c256: [u8; 256] = c[..].try_into().unwrap();
        prop_assert_eq!(pq2::codes::<128, 34>(&pq2::encode_block(&c128, d)), c128);
        prop_assert_eq!(tq2::codes(&tq2::encode_block(&c256, d)), c256);
        prop_assert_eq!(q2s_planar::codes(&q2s_planar::encode_block(&c32, d)), c32);
        let b128: [u8; 128] = c128.map(|v| v & 1);
        prop_assert_eq!(q1_0::bits(&q1_0::encode_block(&b128, d)), b128);
    }

    /// Quantizing values that are already (t − 1)·d gives exactly encode(t, d): the
    /// quantizers are idempotent on ternary data.
    #[test]
    fn quantizers_are_idempotent_on_ternary_data(t in proptest::collection::vec(0u8..3, 256), d in 0x0400u16..0x7c00) {
        let df = f16_to_f32(d);
        let x: Vec<f32> = t.iter().map(|&t| (t as f32 - 1.0) * df).collect();
        let t128: [u8; 128] = t[..128].try_into().unwrap();
        let t64: [u8; 64] = t[..64].try_into().unwrap();
        let t256: [u8; 256] = t[..].try_into().unwrap();
        // All-zero trits store d = 0.
        let dd = |ts: &[u8]| if ts.iter().any(|&v| v != 1) { d } else { 0 };
        prop_assert_eq!(Codec::Ptq1_0.quantize_to_vec(&x[..128]).unwrap(), ptq1::encode_block(&t128, dd(&t128)).to_vec());
        prop_assert_eq!(Codec::Pq2_0.quantize_to_vec(&x[..128]).unwrap(), pq2::encode_block::<128, 34>(&t128, dd(&t128)).to_vec());
        prop_assert_eq!(Codec::Q2_0G64.quantize_to_vec(&x[..64]).unwrap(), pq2::encode_block::<64, 18>(&t64, dd(&t64)).to_vec());
        prop_assert_eq!(Codec::Tq1_0.quantize_to_vec(&x).unwrap(), tq1::encode_block(&t256, dd(&t256)).to_vec());
        prop_assert_eq!(Codec::Tq2_0.quantize_to_vec(&x).unwrap(), tq2::encode_block(&t256, dd(&t256)).to_vec());
    }

    /// quantize ∘ decode ∘ quantize = quantize for ordinary finite data.
    #[test]
    fn requantizing_decoded_output_is_stable(x in proptest::collection::vec(-1000f32..1000.0, 256)) {
        prop_assume!(x.iter().any(|v| v.abs() > 1e-2));
        for c in [Codec::Ptq1_0, Codec::Pq2_0, Codec::Q2_0G64, Codec::Tq1_0, Codec::Tq2_0] {
            let n = c.block_elems().clamp(128, 256) / c.block_elems() * c.block_elems();
            let x = &x[..n];
            prop_assume!(x.chunks(c.block_elems()).all(|b| b.iter().any(|v| v.abs() > 1e-2)));
            let q = c.quantize_to_vec(x).unwrap();
            let y = c.decode_to_vec(&q).unwrap();
            prop_assert_eq!(c.quantize_to_vec(&y).unwrap(), q, "{:?}", c);
        }
    }
}

/// Every byte value at every code-byte position, against the reference.
#[test]
fn fast_decode_equals_reference_for_every_byte_in_every_position() {
    for c in BLOCK_CODECS {
        let bb = c.block_bytes();
        let so = c.scale_offset().unwrap();
        // A varied background block with d = −1.5 (f16 0xbe00).
        let mut base: Vec<u8> = (0..bb).map(|i| (i * 37 + 11) as u8).collect();
        base[so..so + 2].copy_from_slice(&0xbe00u16.to_le_bytes());
        for p in (0..bb).filter(|&p| p != so && p != so + 1) {
            for v in 0..=255u8 {
                let mut blk = base.clone();
                blk[p] = v;
                fast_equals_reference(c, &blk).unwrap();
            }
        }
    }
}

/// Every f16 scale pattern (inf and every NaN included) on a block using every code.
#[test]
fn fast_decode_equals_reference_for_every_scale_pattern() {
    for c in [
        Codec::Pq2_0,
        Codec::Ptq1_0,
        Codec::Tq1_0,
        Codec::Tq2_0,
        Codec::Q2_0G64,
    ] {
        let bb = c.block_bytes();
        let so = c.scale_offset().unwrap();
        let mut blk: Vec<u8> = (0..bb).map(|i| (i * 73 + 5) as u8).collect();
        let n = c.block_elems();
        let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
        for d in 0..=u16::MAX {
            blk[so..so + 2].copy_from_slice(&d.to_le_bytes());
            c.decode_reference(&blk, &mut b).unwrap();
            for p in simd::available() {
                simd::decode_with(c, p, &blk, &mut a).unwrap();
                assert_eq!(bits(&a), bits(&b), "{c:?} on {} d=0x{d:04x}", p.name());
            }
        }
    }
}

#[test]
fn bad_lengths_are_errors_not_panics() {
    for c in Codec::ALL {
        let bb = c.block_bytes();
        let be = c.block_elems();
        let mut out = vec![0f32; 2 * be];
        // Whole blocks but the wrong output size.
        let e = c.decode(&vec![0u8; bb], &mut out).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CodecLength, "{c:?}");
        assert!(e.detail().contains(&format!("{}", 2 * be)), "{e}");
        let e = c.decode_reference(&vec![0u8; bb], &mut out).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CodecLength);
        if bb > 1 {
            let e = c.decode(&vec![0u8; bb + 1], &mut out).unwrap_err();
            assert_eq!(e.class(), ErrorClass::CodecLength);
            assert!(e.detail().contains(&format!("{}", bb + 1)), "{e}");
            assert_eq!(
                c.validate(&vec![0u8; bb - 1]).unwrap_err().class(),
                ErrorClass::CodecLength
            );
            assert!(c.stats(&vec![0u8; bb + 1]).is_err());
        }
        if be > 1 {
            assert_eq!(
                c.quantize_to_vec(&vec![0f32; be + 1]).unwrap_err().class(),
                ErrorClass::CodecLength
            );
        }
        // Empty input is zero blocks.
        c.decode(&[], &mut []).unwrap();
        c.validate(&[]).unwrap();
    }
    let e = Codec::Pq2_0
        .quantize(&[0f32; 128], &mut [0u8; 33])
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecLength);
    assert_eq!(
        Codec::I32.quantize_to_vec(&[1.0]).unwrap_err().class(),
        ErrorClass::CodecUnsupported
    );
}

#[test]
fn validate_reports_the_scale_offset_of_the_block() {
    for c in BLOCK_CODECS {
        let bb = c.block_bytes();
        let so = c.scale_offset().unwrap();
        let mut bytes = vec![0u8; 3 * bb];
        c.validate(&bytes).unwrap();
        for (d, kind) in [
            (0x7c00u16, "inf"),
            (0xfc00, "inf"),
            (0x7e00, "NaN"),
            (0xfc01, "NaN"),
        ] {
            bytes[2 * bb + so..2 * bb + so + 2].copy_from_slice(&d.to_le_bytes());
            let e = c.validate(&bytes).unwrap_err();
            assert_eq!(e.class(), ErrorClass::CodecScaleNonfinite);
            assert_eq!(e.offset(), Some((2 * bb + so) as u64), "{c:?}");
            assert_eq!(e.field(), "block[2].d");
            assert!(e.detail().contains(kind), "{e}");
            assert_eq!(
                c.validate_at(&bytes, 1000).unwrap_err().offset(),
                Some((1000 + 2 * bb + so) as u64)
            );
            // Decoding is not validation: it follows the formula.
            let v = c.decode_to_vec(&bytes).unwrap();
            assert!(
                v[2 * c.block_elems()..].iter().any(|x| !x.is_finite()),
                "{c:?}"
            );
        }
        // The largest finite f16 passes.
        bytes[2 * bb + so..2 * bb + so + 2].copy_from_slice(&0x7bffu16.to_le_bytes());
        c.validate(&bytes).unwrap();
    }
    // Plain types: the values themselves.
    let e = Codec::F16.validate(&[0, 0, 0x00, 0x7c]).unwrap_err();
    assert_eq!(
        (e.class(), e.offset()),
        (ErrorClass::CodecScaleNonfinite, Some(2))
    );
    let e = Codec::Bf16.validate(&[0, 0, 0xc0, 0x7f]).unwrap_err();
    assert_eq!(e.offset(), Some(2));
    let e = Codec::F32
        .validate(&[0, 0, 0, 0, 0, 0, 0xc0, 0x7f])
        .unwrap_err();
    assert_eq!(e.offset(), Some(4));
    Codec::I32.validate(&[0xff; 8]).unwrap();
}

#[test]
fn nonfinite_scales_decode_by_formula() {
    // PQ2_0, d = +inf (0x7c00), qs 0xe4 0x55...: codes 0,1,2,3 → −inf, 0·inf = NaN, +inf, +inf.
    let mut blk = vec![0x55u8; 34];
    blk[..3].copy_from_slice(&[0x00, 0x7c, 0xe4]);
    let v = Codec::Pq2_0.decode_to_vec(&blk).unwrap();
    assert_eq!(v[0], f32::NEG_INFINITY);
    assert!(v[1].is_nan());
    assert_eq!(v[2], f32::INFINITY);
    assert_eq!(v[3], f32::INFINITY);
}

#[test]
fn stats_hand_counted() {
    // PQ2_0 block 0: d = −1.0 (0xbc00), all 0x55 → 128 zeros.
    // Block 1: d = +inf (0x7c00), qs[0] = 0xff (four code 3), rest 0x55 → 124 zeros.
    let mut b = vec![0x55u8; 68];
    b[..2].copy_from_slice(&0xbc00u16.to_le_bytes());
    b[34..36].copy_from_slice(&0x7c00u16.to_le_bytes());
    b[36] = 0xff;
    let s = Codec::Pq2_0.stats(&b).unwrap();
    assert_eq!(
        s,
        CodeStats {
            blocks: 2,
            values: 256,
            zeros: 252,
            code3: 4,
            noncanonical_bytes: 0,
            nonfinite_scales: 1,
            negative_scales: 1
        }
    );
    // PTQ1_0: qs all 0x80 (5 zero trits each) except qs[0] = 20 (digits 0,0,2,0,0: no zeros,
    // non-canonical); qh[0] = 0x7f (4 zeros), qh[1] = 0x80 (digits 1,1,1,1 but the qh encoder
    // gives 0x7f for those → non-canonical, 4 zeros). d = NaN (0x7e00).
    // zeros = 23·5 + 4 + 4 = 123.
    let mut p = vec![0x80u8; 28];
    p[0] = 20;
    p[24] = 0x7f;
    p[26..].copy_from_slice(&0x7e00u16.to_le_bytes());
    let s = Codec::Ptq1_0.stats(&p).unwrap();
    assert_eq!(
        s,
        CodeStats {
            blocks: 1,
            values: 128,
            zeros: 123,
            code3: 0,
            noncanonical_bytes: 2,
            nonfinite_scales: 1,
            negative_scales: 0
        }
    );
    // Q2_0S planar: code 2 (0xaa) is zero.
    let mut q = vec![0xaau8; 10];
    q[..2].copy_from_slice(&0x3c00u16.to_le_bytes());
    assert_eq!(Codec::Q2_0sPlanar.stats(&q).unwrap().zeros, 32);
    assert_eq!(
        Codec::F32.stats(&[0; 4]).unwrap_err().class(),
        ErrorClass::CodecUnsupported
    );
    let mut acc = CodeStats::default();
    acc.add(&s);
    acc.add(&s);
    assert_eq!(acc.zeros, 246);
}

#[test]
fn direct_types_decode_little_endian() {
    assert_eq!(
        Codec::F32.decode_to_vec(&1.5f32.to_le_bytes()).unwrap(),
        [1.5]
    );
    // f16 0xc000 = −2.0; bf16 0x3fc0 = 1.5; i32 −7.
    assert_eq!(Codec::F16.decode_to_vec(&[0x00, 0xc0]).unwrap(), [-2.0]);
    assert_eq!(Codec::Bf16.decode_to_vec(&[0xc0, 0x3f]).unwrap(), [1.5]);
    assert_eq!(
        Codec::I32.decode_to_vec(&(-7i32).to_le_bytes()).unwrap(),
        [-7.0]
    );
    // F16 fast path (half's slice conversion) over more than one internal chunk.
    let raw: Vec<u8> = (0..2000u32)
        .flat_map(|i| ((i.wrapping_mul(2654435761u32) >> 16) as u16).to_le_bytes())
        .collect();
    fast_equals_reference(Codec::F16, &raw).unwrap();
    assert_eq!(Codec::F16.quantize_to_vec(&[-2.0]).unwrap(), [0x00, 0xc0]);
    assert_eq!(Codec::Bf16.quantize_to_vec(&[1.5]).unwrap(), [0xc0, 0x3f]);
}

/// spec/codecs.md#quantizer-edge-inputs, claim 2: a block whose largest magnitude is an f32
/// subnormal stores scale 0x0000 (f16 of a value < 2^-24 rounds to +0, like ggml's
/// GGML_FP32_TO_FP16) and decodes to ±0 everywhere: identical decode to the owner's quantizer
/// (whose codes come from lroundf(±inf or NaN), undefined in C), no identical-bytes claim.
#[test]
fn f32_subnormal_block_maximum_stores_scale_zero_and_decodes_to_zero() {
    for c in BLOCK_CODECS
        .into_iter()
        .filter(|&c| c != Codec::Q2_0sPlanar)
    {
        let n = c.block_elems();
        let pats: [&dyn Fn(usize) -> f32; 3] = [
            &|j| if j % 3 == 0 { 1e-39 } else { 0.0 },
            &|j| [-5e-40, 0.0, -0.0, f32::from_bits(1)][j % 4],
            &|j| {
                if j == 7 {
                    -f32::MIN_POSITIVE / 2.0
                } else {
                    f32::from_bits(j as u32 + 1)
                }
            },
        ];
        for (p, pat) in pats.iter().enumerate() {
            let x: Vec<f32> = (0..n).map(|j| pat(j)).collect();
            assert!(x.iter().all(|v| v.abs() < f32::MIN_POSITIVE));
            let b = c.quantize_to_vec(&x).unwrap();
            let at = c.scale_offset().unwrap();
            assert_eq!(read_u16(&b, at), 0, "{c:?} pattern {p}: scale");
            let v = c.decode_to_vec(&b).unwrap();
            assert!(
                v.iter().all(|&y| y == 0.0),
                "{c:?} pattern {p}: {:?}",
                &v[..8]
            );
        }
    }
}

/// spec/codecs.md#quantizer-edge-inputs, claim 3: a NaN or infinite input is refused by every
/// block quantizer (`codec.scale_nonfinite`), wherever it sits in the block; the plain
/// conversions keep it.
#[test]
fn block_quantizers_refuse_non_finite_inputs() {
    for c in BLOCK_CODECS
        .into_iter()
        .filter(|&c| c != Codec::Q2_0sPlanar)
    {
        let n = c.block_elems();
        for bad in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, n / 2, 2 * n - 1] {
                let mut x = vec![0.25f32; 2 * n];
                x[at] = bad;
                let e = c.quantize_to_vec(&x).unwrap_err();
                assert_eq!(
                    e.class(),
                    ErrorClass::CodecScaleNonfinite,
                    "{c:?} {bad} at {at}"
                );
            }
        }
        // Negative control: the same block with finite values quantizes.
        assert!(c.quantize_to_vec(&vec![0.25f32; 2 * n]).is_ok());
    }
    for c in [Codec::F32, Codec::F16, Codec::Bf16] {
        let b = c.quantize_to_vec(&[f32::INFINITY, 1.0]).unwrap();
        assert!(c.decode_to_vec(&b).unwrap()[0].is_infinite(), "{c:?}");
    }
}
