//! Decode throughput of the block codecs, plus the memory-bandwidth yardsticks.
//!
//! Run: `cargo bench --features internals --bench codec` (it reaches `codec::{parallel, simd}`;
//! settings are short on purpose); `scripts/bench-report.py` turns the results into the
//! RESULTS.md tables. Bench ids (group/function/size):
//!
//! - `decode/{codec}/{path}/{l1,l2,dram}`: every ternary codec on every SIMD path this CPU runs
//!   (forced with `simd::decode_with_stores`, ordinary stores); `decode/{codec}/{path}+stream/dram`
//!   the same with non-temporal stores (the write-allocate comparison that sets
//!   `simd::StorePolicy`: which kind wins at dram differs between machines);
//!   `decode/{codec}/reference/l2` the scalar reference; `decode/{codec}/parallel/{l3,dram}`
//!   the whole slab over every core (`decode_parallel`, threads = 0, stores as `Stores::Auto`
//!   picks them on this machine); `decode/{codec}/dispatch/*`
//!   the codecs without per-path kernels (F32, F16, BF16, I32, Q8_0, Q1_0, Q2_0S planar).
//!   Throughput = weights; bound: 12 G weights/s per thread in l2 (issue #14), and at dram the
//!   traffic `weights/s x (4 + input bytes per weight)` against the copy traffic below.
//! - `memcpy/copy_from_slice/{size}`: a copy of as many bytes as the decode writes; traffic =
//!   2 x bytes. `memcpy/parallel_copy/{l3,dram}`: the same copy split over every core, the
//!   bound of `decode/*/parallel/*`.
//! - `split_crossover/{pq2_0,ptq1_0}/{1t,2t}/{1Mi..8Mi}`: one thread against two on the same
//!   slab, the split forced; where two first win sets `MIN_ELEMS_PER_THREAD`.
//! - `parallel_overhead/spawn_join`: one scoped spawn + join of an empty thread (the fixed cost
//!   of every split).
//! - `quantize/{codec}/l2`: the reference quantizers, throughput = weights.
//! - `planes/{assemble,disassemble}/{format}`: throughput = bytes of the ggml stream; bound =
//!   memcpy at that size.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ninfer_ternary::codec::parallel::{decode_parallel, decode_parallel_with};
use ninfer_ternary::codec::{simd, Codec};
use std::hint::black_box;
use std::time::Duration;

mod common;
use common::{group, random_bytes};

/// A slab of `elems` weights in codec `c` with finite, realistic scales (f16 ~0.01) where the
/// codec has a block scale (plain types: the random bytes as they are).
fn slab(c: Codec, elems: usize) -> Vec<u8> {
    let mut b = random_bytes(
        elems / c.block_elems() * c.block_bytes(),
        0x9e37_79b9_7f4a_7c15,
    );
    if let Some(so) = c.scale_offset() {
        for blk in b.chunks_exact_mut(c.block_bytes()) {
            blk[so..so + 2].copy_from_slice(&0x211eu16.to_le_bytes());
        }
    }
    b
}

/// "l1": 4 Ki weights (16 KiB out, L1-resident), "l2": 128 Ki weights (512 KiB out, fits the
/// 1 MiB L2), "l3": 2 Mi weights (8 MiB out, fits the 32 MiB L3 but no core's L2), "dram":
/// 4096 × 5120 = 20 Mi weights (80 MiB out, far bigger than the L3).
const SIZES: [(&str, usize); 4] = [
    ("l1", 1 << 12),
    ("l2", 1 << 17),
    ("l3", 1 << 21),
    ("dram", 4096 * 5120),
];

/// Sizes with an every-core row: l3 (the split's speed-up where DRAM does not cap it) and dram.
fn has_parallel_row(label: &str) -> bool {
    label == "l3" || label == "dram"
}

/// The codecs with per-path SIMD kernels.
const TERNARY: [Codec; 5] = [
    Codec::Pq2_0,
    Codec::Q2_0G64,
    Codec::Ptq1_0,
    Codec::Tq1_0,
    Codec::Tq2_0,
];

/// Every ternary codec × size × SIMD path this CPU runs (forced with `simd::decode_with`),
/// the scalar reference at l2, and the whole slab over every core (`decode_parallel`) at l3 and
/// dram.
fn decode(cr: &mut Criterion) {
    let mut g = group(cr, "decode");
    for c in TERNARY {
        for (label, elems) in SIZES {
            let bytes = slab(c, elems);
            let mut out = vec![0f32; elems];
            g.throughput(Throughput::Elements(elems as u64));
            for p in simd::available() {
                g.bench_with_input(
                    BenchmarkId::new(format!("{}/{}", c.name(), p.name()), label),
                    &bytes,
                    |b, bytes| {
                        b.iter(|| {
                            simd::decode_with_stores(
                                c,
                                p,
                                simd::Stores::Cached,
                                black_box(bytes),
                                &mut out,
                            )
                            .unwrap()
                        })
                    },
                );
            }
            if label == "l2" {
                g.bench_with_input(
                    BenchmarkId::new(format!("{}/reference", c.name()), label),
                    &bytes,
                    |b, bytes| b.iter(|| c.decode_reference(black_box(bytes), &mut out).unwrap()),
                );
            }
            if label == "dram" {
                for p in simd::available() {
                    g.bench_with_input(
                        BenchmarkId::new(format!("{}/{}+stream", c.name(), p.name()), label),
                        &bytes,
                        |b, bytes| {
                            b.iter(|| {
                                simd::decode_with_stores(
                                    c,
                                    p,
                                    simd::Stores::Streaming,
                                    black_box(bytes),
                                    &mut out,
                                )
                                .unwrap()
                            })
                        },
                    );
                }
            }
            if has_parallel_row(label) {
                g.bench_with_input(
                    BenchmarkId::new(format!("{}/parallel", c.name()), label),
                    &bytes,
                    |b, bytes| {
                        b.iter(|| decode_parallel(c, black_box(bytes), &mut out, 0).unwrap())
                    },
                );
            }
        }
    }
    for c in Codec::ALL.into_iter().filter(|&c| !simd::has_kernels(c)) {
        for (label, elems) in SIZES {
            let bytes = slab(c, elems);
            let mut out = vec![0f32; elems];
            g.throughput(Throughput::Elements(elems as u64));
            g.bench_with_input(
                BenchmarkId::new(format!("{}/dispatch", c.name()), label),
                &bytes,
                |b, bytes| b.iter(|| c.decode(black_box(bytes), &mut out).unwrap()),
            );
        }
    }
    g.finish();
}

/// What one split costs before any work: a scoped spawn + join of an empty thread, as
/// `decode_parallel` and `parallel_copy` pay per call (about 100 µs on the CI VM, which is why
/// the l3 split loses there).
fn spawn_join(cr: &mut Criterion) {
    let mut g = group(cr, "parallel_overhead");
    g.bench_function("spawn_join", |b| {
        b.iter(|| std::thread::scope(|s| s.spawn(|| black_box(1)).join().unwrap()))
    });
    g.finish();
}

/// Where splitting a decode over two threads starts to pay: the same slab on one thread and on
/// two (forced with `decode_parallel_with`, threshold 1), at 1–8 Mi weights. `decode_parallel`
/// splits from `MIN_ELEMS_PER_THREAD` per thread, set from this comparison.
fn split_crossover(cr: &mut Criterion) {
    let mut g = group(cr, "split_crossover");
    for c in [Codec::Pq2_0, Codec::Ptq1_0] {
        for (label, elems) in [
            ("1Mi", 1usize << 20),
            ("2Mi", 1 << 21),
            ("4Mi", 1 << 22),
            ("8Mi", 1 << 23),
        ] {
            let bytes = slab(c, elems);
            let mut out = vec![0f32; elems];
            g.throughput(Throughput::Elements(elems as u64));
            for threads in [1, 2] {
                g.bench_function(
                    BenchmarkId::new(format!("{}/{threads}t", c.name()), label),
                    |b| {
                        b.iter(|| {
                            decode_parallel_with(c, black_box(&bytes), &mut out, threads, 1)
                                .unwrap()
                        })
                    },
                );
            }
        }
    }
    g.finish();
}

/// The machine bound for each decode size: `copy_from_slice` of as many bytes as the decode
/// writes (4 B per weight), in the same run. Traffic = 2 × bytes (read + write).
fn memcpy(cr: &mut Criterion) {
    let mut g = group(cr, "memcpy");
    for (label, elems) in SIZES {
        let n = 4 * elems;
        let src = random_bytes(n, 1);
        let mut dst = vec![0u8; n];
        g.throughput(Throughput::Bytes(n as u64));
        g.bench_function(BenchmarkId::new("copy_from_slice", label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
        if has_parallel_row(label) {
            // The all-cores bound: the same copy in one contiguous piece per core, spawned per
            // call like decode_parallel (the calling thread copies the first piece).
            let threads = ninfer_ternary::codec::parallel::default_threads();
            let per = n.div_ceil(threads);
            g.bench_function(BenchmarkId::new("parallel_copy", label), |b| {
                b.iter(|| {
                    std::thread::scope(|s| {
                        let mut pieces = dst.chunks_mut(per).zip(black_box(&src).chunks(per));
                        let first = pieces.next();
                        for (d, sr) in pieces {
                            s.spawn(move || d.copy_from_slice(sr));
                        }
                        if let Some((d, sr)) = first {
                            d.copy_from_slice(sr);
                        }
                    })
                })
            });
        }
    }
    g.finish();
}

/// The reference quantizers (f32 → blocks) on an l2-sized slab of smooth pseudo-random values.
fn quantize(cr: &mut Criterion) {
    let mut g = group(cr, "quantize");
    let elems = 1 << 17;
    let x: Vec<f32> = random_bytes(elems, 3)
        .iter()
        .map(|&b| (b as f32 - 127.5) / 64.0)
        .collect();
    let quantizable = Codec::ALL
        .into_iter()
        .filter(|c| !matches!(c, Codec::I32 | Codec::Q2_0sPlanar));
    for c in quantizable {
        let mut out = vec![0u8; c.bytes_for(elems).unwrap()];
        g.throughput(Throughput::Elements(elems as u64));
        g.bench_function(BenchmarkId::new(c.name(), "l2"), |b| {
            b.iter(|| c.quantize(black_box(&x), &mut out).unwrap())
        });
    }
    g.finish();
}

/// ggml row blocks → planes and back, for a real Bonsai shape (attention output, 5120 × 6144),
/// in both ternary formats. Throughput in bytes of the ggml stream.
fn planes(cr: &mut Criterion) {
    use ninfer_ternary::geometry::row_split_geometry;
    use ninfer_ternary::planes::{assemble, disassemble, BlockLayout};
    let mut g = cr.benchmark_group("planes");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for name in ["PQ2_0_G128", "PTQ1_0_G128"] {
        let f = ninfer_ternary::spec::get().format(name).unwrap();
        let layout = BlockLayout::for_format(f).unwrap();
        let geom = row_split_geometry(f, 5120, 6144).unwrap();
        let src = random_bytes(5120 * 48 * layout.block_bytes, 7);
        let planes = assemble(&layout, &geom, &src).unwrap();
        g.throughput(Throughput::Bytes(src.len() as u64));
        g.bench_function(BenchmarkId::new("assemble", name), |b| {
            b.iter(|| assemble(&layout, &geom, black_box(&src)).unwrap())
        });
        g.bench_function(BenchmarkId::new("disassemble", name), |b| {
            b.iter(|| disassemble(&layout, &geom, black_box(&planes)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    decode,
    memcpy,
    spawn_join,
    split_crossover,
    quantize,
    planes
);
criterion_main!(benches);
