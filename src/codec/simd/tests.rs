//! Every SIMD path forced on this machine against the scalar reference, and negative controls:
//! deliberately wrong decoders that the same comparison must catch.

use super::*;
use crate::codec::{base3, f16_to_f32, ptq1, tq1, tq2};
use proptest::prelude::*;

const KERNEL_CODECS: [Codec; 5] = [
    Codec::Pq2_0,
    Codec::Q2_0G64,
    Codec::Ptq1_0,
    Codec::Tq1_0,
    Codec::Tq2_0,
];

/// f16 scales that break careless rewrites: ±1, ±0, ±inf, quiet and signalling NaNs with
/// payloads, the smallest subnormal, the largest finite, and an ordinary small scale.
const SCALES: [u16; 12] = [
    0x3c00, 0xbc00, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe55, 0x0001, 0x7bff, 0x211e,
];

/// 256 blocks per scale in which every code byte position takes every value 0..=255 once
/// (byte p of block k is `(k + 97·p) mod 256`), for each of [`SCALES`].
fn every_byte_everywhere(c: Codec) -> Vec<u8> {
    let (bb, so) = (c.block_bytes(), c.scale_offset().unwrap());
    let mut out = Vec::with_capacity(SCALES.len() * 256 * bb);
    for d in SCALES {
        for k in 0..256usize {
            let mut blk: Vec<u8> = (0..bb).map(|p| (k + 97 * p) as u8).collect();
            blk[so..so + 2].copy_from_slice(&d.to_le_bytes());
            out.extend_from_slice(&blk);
        }
    }
    out
}

/// The first element where `decoder` differs from the scalar reference in bits:
/// `(element, reference bits, decoder bits)`, or None when identical.
fn first_mismatch(
    c: Codec,
    bytes: &[u8],
    decoder: impl Fn(&[u8], &mut [f32]),
) -> Option<(usize, u32, u32)> {
    let n = c.blocks_in(bytes.len()).unwrap() * c.block_elems();
    let mut want = vec![0f32; n];
    c.decode_reference(bytes, &mut want).unwrap();
    // Poisoned output, so a decoder that skips elements cannot pass by leaving zeros.
    let mut got = vec![f32::from_bits(0x7fc0_dead); n];
    decoder(bytes, &mut got);
    want.iter()
        .zip(&got)
        .position(|(a, b)| a.to_bits() != b.to_bits())
        .map(|e| (e, want[e].to_bits(), got[e].to_bits()))
}

fn forced(c: Codec, p: Path) -> impl Fn(&[u8], &mut [f32]) {
    move |b, o| decode_with(c, p, b, o).unwrap()
}

#[test]
fn every_available_path_equals_reference_on_every_byte_in_every_position() {
    for c in KERNEL_CODECS {
        let bytes = every_byte_everywhere(c);
        for p in available() {
            assert_eq!(
                first_mismatch(c, &bytes, forced(c, p)),
                None,
                "{} on {}",
                c.name(),
                p.name()
            );
        }
    }
}

/// The paths this CPU advertises are the paths the tests force: on this suite's x86-64 CI
/// machine (Zen 4) that is scalar, sse2, avx2 and avx512; a machine without AVX-512 just
/// forces fewer, and says which on stderr.
#[test]
fn forced_paths_follow_the_cpu_features() {
    let paths = available();
    eprintln!(
        "forcing SIMD paths: {:?}",
        paths.iter().map(|p| p.name()).collect::<Vec<_>>()
    );
    assert_eq!(paths[0], Path::Scalar);
    #[cfg(target_arch = "x86_64")]
    {
        assert!(paths.contains(&Path::Sse2));
        assert_eq!(
            paths.contains(&Path::Avx2),
            std::arch::is_x86_feature_detected!("avx2")
        );
        assert_eq!(
            paths.contains(&Path::Avx512),
            std::arch::is_x86_feature_detected!("avx512f")
        );
        assert!(!paths.contains(&Path::Neon));
    }
    assert!(paths.contains(&active()));
}

#[test]
fn an_unavailable_path_is_refused_not_run() {
    let c = Codec::Ptq1_0;
    let mut out = vec![0f32; c.block_elems()];
    for p in Path::ALL.into_iter().filter(|p| !p.is_available()) {
        let e = decode_with(c, p, &[0u8; 28], &mut out).unwrap_err();
        assert_eq!(e.class(), ErrorClass::CodecUnsupported);
        assert!(e.to_string().contains(p.name()), "{e}");
    }
    // Lengths are checked on the forced path too.
    let e = decode_with(c, Path::Scalar, &[0u8; 27], &mut out).unwrap_err();
    assert_eq!(e.class(), ErrorClass::CodecLength);
}

#[test]
fn env_cap_picks_the_widest_path_at_or_below_it() {
    let all = [Path::Scalar, Path::Sse2, Path::Avx2, Path::Avx512];
    assert_eq!(choose(&all, None), (Path::Avx512, None));
    assert_eq!(choose(&all, Some("avx2")).0, Path::Avx2);
    assert_eq!(choose(&all, Some(" sse2\n")).0, Path::Sse2);
    assert_eq!(choose(&all, Some("scalar")).0, Path::Scalar);
    // A cap above what the CPU has gives the best it has.
    assert_eq!(choose(&all[..2], Some("avx512")).0, Path::Sse2);
    // An unknown name is ignored, with a warning naming it.
    let (p, w) = choose(&all, Some("avx1024"));
    assert_eq!(p, Path::Avx512);
    assert!(w.unwrap().contains("avx1024"));
    for p in Path::ALL {
        assert_eq!(Path::from_name(p.name()), Some(p));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random bytes (any scale bits) at 0..9 blocks, every codec with kernels, every path.
    #[test]
    fn every_available_path_equals_reference_on_random_bytes(ci in 0usize..5, blocks in 0usize..9,
                                                            seed in proptest::collection::vec(any::<u8>(), 9 * 66)) {
        let c = KERNEL_CODECS[ci];
        let bytes = &seed[..blocks * c.block_bytes()];
        for p in available() {
            prop_assert_eq!(first_mismatch(c, bytes, forced(c, p)), None, "{} on {}", c.name(), p.name());
        }
    }

    /// The same at a drawn offset from a 64-byte line (part of the input, so a failure that
    /// depends on the output's alignment replays), with guards on both sides.
    #[test]
    fn every_available_path_equals_reference_at_every_line_offset(ci in 0usize..5, blocks in 0usize..4,
                                                                 off in 0usize..16,
                                                                 seed in proptest::collection::vec(any::<u8>(), 4 * 66)) {
        let c = KERNEL_CODECS[ci];
        let bytes = &seed[..blocks * c.block_bytes()];
        for p in available() {
            prop_assert_eq!(mismatch_at_line_offset(c, bytes, off, forced(c, p)), None, "{} on {}", c.name(), p.name());
        }
    }
}

// ---------------------------------------------------------------- negative controls

/// A plausible SIMD rewrite: `t·d − d` instead of `(t − 1)·d`. Equal for ordinary values but
/// it turns `−0.0` (zero trit, negative scale) into `+0.0` and `0·inf` into `inf − inf`.
fn mutant_sub_after_mul(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(ptq1::BLOCK_BYTES)
        .zip(out.chunks_exact_mut(128))
    {
        let blk: &ptq1::Block = blk.try_into().unwrap();
        let d = f16_to_f32(ptq1::scale_bits(blk));
        for (v, t) in o.iter_mut().zip(ptq1::trits(blk)) {
            *v = t as f32 * d - d;
        }
    }
}

/// A plausible lane bug: the byte × 3ⁿ product is not wrapped to 8 bits before the `·3 >> 8`.
fn mutant_no_wrap(bytes: &[u8], out: &mut [f32]) {
    for (blk, o) in bytes
        .chunks_exact(tq1::BLOCK_BYTES)
        .zip(out.chunks_exact_mut(256))
    {
        let d = f16_to_f32(u16::from_le_bytes([blk[52], blk[53]]));
        for (e, v) in o.iter_mut().enumerate() {
            let (b, n) = tq1::position(e);
            let q = blk[b] as u32 * base3::POW3[n] as u32;
            *v = (((q * 3) >> 8) as f32 - 1.0) * d;
        }
    }
}

/// A plausible layout bug: TQ2_0's two 32-byte halves swapped.
fn mutant_tq2_halves(bytes: &[u8], out: &mut [f32]) {
    let mut b = bytes.to_vec();
    for blk in b.chunks_exact_mut(tq2::BLOCK_BYTES) {
        let (lo, hi) = blk[..64].split_at_mut(32);
        lo.swap_with_slice(hi);
    }
    Codec::Tq2_0.decode(&b, out).unwrap();
}

/// A plausible table bug: code 3 clamped to +1·d, as if PQ2_0 were purely ternary.
fn mutant_pq2_code3_clamped(bytes: &[u8], out: &mut [f32]) {
    Codec::Pq2_0.decode(bytes, out).unwrap();
    for (blk, o) in bytes.chunks_exact(34).zip(out.chunks_exact_mut(128)) {
        let d = f16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
        for (j, v) in o.iter_mut().enumerate() {
            if (blk[2 + j / 4] >> (2 * (j % 4))) & 3 == 3 {
                *v = d;
            }
        }
    }
}

/// A whole-slab decoder under test.
type Decoder = fn(&[u8], &mut [f32]);

#[test]
fn the_comparison_catches_every_mutant() {
    let cases: [(Codec, Decoder, &str); 4] = [
        (Codec::Ptq1_0, mutant_sub_after_mul, "t·d − d"),
        (Codec::Tq1_0, mutant_no_wrap, "no u8 wrap"),
        (Codec::Tq2_0, mutant_tq2_halves, "halves swapped"),
        (Codec::Pq2_0, mutant_pq2_code3_clamped, "code 3 clamped"),
    ];
    for (c, m, what) in cases {
        let found = first_mismatch(c, &every_byte_everywhere(c), m);
        assert!(
            found.is_some(),
            "mutant {what} of {} went unnoticed",
            c.name()
        );
    }
    // The sign-of-zero mutant is subtle: it agrees with the reference on every block with a
    // positive finite scale, so only the negative / special scales in the inputs expose it.
    let positive: Vec<u8> = every_byte_everywhere(Codec::Ptq1_0)
        .chunks_exact(ptq1::BLOCK_BYTES)
        .filter(|b| u16::from_le_bytes([b[26], b[27]]) == 0x3c00)
        .flatten()
        .copied()
        .collect();
    assert_eq!(
        first_mismatch(Codec::Ptq1_0, &positive, mutant_sub_after_mul),
        None
    );
}

// ---------------------------------------------------------------- non-temporal stores

/// Bytes for any codec: [`every_byte_everywhere`] for the codecs with a block scale, seeded
/// xorshift bytes (4099 blocks, so the plain types cross staging steps too) for the others.
fn stream_input(c: Codec) -> Vec<u8> {
    if c.scale_offset().is_some() {
        return every_byte_everywhere(c);
    }
    let mut s = 0x853c_49e6_748f_ea9bu64;
    (0..4099 * c.block_bytes())
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// `decoder` writing into a poisoned buffer at element offsets 0..16 past a 64-byte boundary
/// (every alignment of the output to a cache line, so the AVX-512 line writer's masked first
/// and last lines are covered), checked against the reference inside and untouched guards of
/// 16 elements on each side: the first `(offset, element, want bits, got bits)` that differs.
fn first_mismatch_aligned(
    c: Codec,
    bytes: &[u8],
    decoder: impl Fn(&[u8], &mut [f32]),
) -> Option<(usize, usize, u32, u32)> {
    (0..16).find_map(|off| mismatch_at_line_offset(c, bytes, off, &decoder))
}

/// A buffer of `guard` values with room for `n` output elements `off` (0..16) elements past a
/// 64-byte boundary: the buffer, the window checked (16 guard elements before the boundary,
/// at least 16 after the output) and the output's range, both as indices into the buffer.
pub(super) fn guarded_at_line_offset(
    n: usize,
    off: usize,
    guard: f32,
) -> (Vec<f32>, std::ops::Range<usize>, std::ops::Range<usize>) {
    let raw = vec![guard; n + 64];
    // The first 64-byte boundary after 16 guard elements.
    let base = 16 + (raw[16..].as_ptr() as usize / 4).wrapping_neg() % 16;
    assert_eq!(raw[base..].as_ptr() as usize % 64, 0);
    (raw, base - 16..base + n + 32, base + off..base + off + n)
}

/// [`first_mismatch_aligned`] at one offset `off` (0..16 elements past a 64-byte boundary).
fn mismatch_at_line_offset(
    c: Codec,
    bytes: &[u8],
    off: usize,
    decoder: impl Fn(&[u8], &mut [f32]),
) -> Option<(usize, usize, u32, u32)> {
    let n = c.blocks_in(bytes.len()).unwrap() * c.block_elems();
    let mut want = vec![0f32; n];
    c.decode_reference(bytes, &mut want).unwrap();
    let poison = f32::from_bits(0x7fc0_dead);
    let (mut buf, window, out) = guarded_at_line_offset(n, off, poison);
    decoder(bytes, &mut buf[out.clone()]);
    let expect = |i: usize| {
        if out.contains(&i) {
            want[i - out.start].to_bits()
        } else {
            poison.to_bits()
        }
    };
    window
        .clone()
        .find(|&i| buf[i].to_bits() != expect(i))
        .map(|i| (off, i - window.start, expect(i), buf[i].to_bits()))
}

#[test]
fn streaming_stores_equal_the_reference_on_every_path_codec_and_alignment() {
    for c in Codec::ALL {
        let bytes = stream_input(c);
        for p in available() {
            for stores in [Stores::Streaming, Stores::Cached, Stores::Auto] {
                let found = first_mismatch_aligned(c, &bytes, |b, o| {
                    decode_with_stores(c, p, stores, b, o).unwrap()
                });
                assert_eq!(
                    found,
                    None,
                    "{} on {} {}",
                    c.name(),
                    p.name(),
                    stores.name()
                );
            }
        }
    }
}

#[test]
fn auto_streams_only_large_outputs_and_only_under_a_streaming_policy() {
    use super::{StorePolicy, STREAM_FROM_BYTES};
    let large = STREAM_FROM_BYTES / 4;
    for policy in [StorePolicy::Cached, StorePolicy::StreamLarge] {
        // Forced kinds are what they say at every size.
        for n in [0, 1, large - 1, large, usize::MAX] {
            assert_eq!(Stores::Cached.resolve_with(policy, n), Stores::Cached);
            assert_eq!(Stores::Streaming.resolve_with(policy, n), Stores::Streaming);
        }
        // Auto never streams an output that a reader could still find in cache.
        assert_eq!(Stores::Auto.resolve_with(policy, large - 1), Stores::Cached);
    }
    assert_eq!(
        Stores::Auto.resolve_with(StorePolicy::StreamLarge, large),
        Stores::Streaming
    );
    // The byte count saturates instead of wrapping to a small size.
    assert_eq!(
        Stores::Auto.resolve_with(StorePolicy::StreamLarge, usize::MAX),
        Stores::Streaming
    );
    // Negative control: the cached policy never streams, however large the output.
    assert_eq!(
        Stores::Auto.resolve_with(StorePolicy::Cached, usize::MAX),
        Stores::Cached
    );
}

#[test]
fn the_store_policy_follows_the_cpu_unless_the_environment_names_one() {
    use super::StorePolicy::{self, Cached, StreamLarge};
    let cases = [
        ("GenuineIntel", None, StreamLarge),
        ("GenuineIntel", Some("auto"), StreamLarge),
        ("GenuineIntel", Some(" cached "), Cached),
        ("AuthenticAMD", None, Cached),
        ("AuthenticAMD", Some("stream"), StreamLarge),
        ("", None, Cached),
    ];
    for (vendor, env, want) in cases {
        assert_eq!(
            StorePolicy::choose(vendor, env),
            (want, None),
            "{vendor:?} {env:?}"
        );
    }
    let (policy, warning) = StorePolicy::choose("AuthenticAMD", Some("fast"));
    assert_eq!(policy, Cached);
    assert!(warning.unwrap().contains("\"fast\""));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(super::cpu_vendor().len(), 12);
}

/// Bytes of a large output in the test below: past half the L3 of the CI machine.
const LARGE_OUTPUT_BYTES: usize = 16 << 20;

/// A large output: the dispatched decode, the forced streamed decode and the all-cores decode
/// at several thread counts equal the cached decode on the same path.
#[test]
fn large_dispatched_streamed_and_parallel_decodes_equal_the_cached_decode() {
    let c = Codec::Ptq1_0;
    let blocks = (LARGE_OUTPUT_BYTES / 4).div_ceil(c.block_elems()) + 3;
    let one = stream_input(c);
    let bytes: Vec<u8> = one
        .iter()
        .cycle()
        .take(blocks * c.block_bytes())
        .copied()
        .collect();
    let n = blocks * c.block_elems();
    let mut want = vec![0f32; n];
    decode_with_stores(c, active(), Stores::Cached, &bytes, &mut want).unwrap();
    let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
    let mut got = vec![f32::from_bits(0x7fc0_dead); n];
    c.decode(&bytes, &mut got).unwrap();
    assert!(got.iter().map(|v| v.to_bits()).eq(want.iter().copied()));
    let mut got = vec![f32::from_bits(0x7fc0_dead); n];
    decode_with_stores(c, active(), Stores::Streaming, &bytes, &mut got).unwrap();
    assert!(got.iter().map(|v| v.to_bits()).eq(want.iter().copied()));
    // Every store kind on every core, forced, so the streamed split runs on any CPU.
    for stores in [Stores::Streaming, Stores::Cached] {
        for threads in [2, 3] {
            let mut got = vec![f32::from_bits(0x7fc0_dead); n];
            crate::codec::parallel::decode_parallel_stored(c, &bytes, &mut got, threads, 1, stores)
                .unwrap();
            assert!(
                got.iter().map(|v| v.to_bits()).eq(want.iter().copied()),
                "{threads} threads, {}",
                stores.name()
            );
        }
    }
    for threads in [2, 3] {
        let mut got = vec![f32::from_bits(0x7fc0_dead); n];
        crate::codec::parallel::decode_parallel(c, &bytes, &mut got, threads).unwrap();
        assert!(
            got.iter().map(|v| v.to_bits()).eq(want.iter().copied()),
            "{threads} threads"
        );
    }
}

/// A plausible streaming bug: the copy stops after the last whole 4-lane group (the tail of a
/// misaligned or odd-length output is never written).
#[cfg(target_arch = "x86_64")]
fn mutant_stream_without_tail(c: Codec) -> impl Fn(&[u8], &mut [f32]) {
    use std::arch::x86_64::{_mm_loadu_ps, _mm_sfence, _mm_stream_ps};
    move |b, o| {
        let mut st = vec![0f32; o.len()];
        c.decode(b, &mut st).unwrap();
        let mis = (o.as_ptr() as usize) % 16;
        let head = if mis == 0 {
            0
        } else {
            ((16 - mis) / 4).min(o.len())
        };
        let body = (o.len() - head) / 4 * 4;
        o[..head].copy_from_slice(&st[..head]);
        // SAFETY: as in x86::stream_copy (aligned body inside both slices).
        unsafe {
            for i in (head..head + body).step_by(4) {
                _mm_stream_ps(o.as_mut_ptr().add(i), _mm_loadu_ps(st.as_ptr().add(i)));
            }
            _mm_sfence();
        }
    }
}

/// A plausible staging bug: each staging step's output is copied one step late (the stage is
/// flushed before the kernel refills it), so the first 2048 values are whatever the stage held.
fn mutant_stage_one_step_late(c: Codec) -> impl Fn(&[u8], &mut [f32]) {
    move |b, o| {
        let per = (STAGE_ELEMS / c.block_elems()).max(1);
        let mut stage = vec![0f32; per * c.block_elems()];
        for (src, dst) in b
            .chunks(per * c.block_bytes())
            .zip(o.chunks_mut(per * c.block_elems()))
        {
            dst.copy_from_slice(&stage[..dst.len()]);
            c.decode(src, &mut stage[..dst.len()]).unwrap();
        }
    }
}

#[test]
fn the_aligned_comparison_catches_the_streaming_mutants() {
    for c in [Codec::Ptq1_0, Codec::Pq2_0, Codec::F32] {
        let bytes = stream_input(c);
        #[cfg(target_arch = "x86_64")]
        assert!(
            first_mismatch_aligned(c, &bytes, mutant_stream_without_tail(c)).is_some(),
            "tail-less stream copy of {} went unnoticed",
            c.name()
        );
        assert!(
            first_mismatch_aligned(c, &bytes, mutant_stage_one_step_late(c)).is_some(),
            "late stage of {} went unnoticed",
            c.name()
        );
    }
}
