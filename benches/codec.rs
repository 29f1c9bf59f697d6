//! Decode throughput of the block codecs, plus a memory-bandwidth yardstick.
//!
//! Run: `cargo bench --bench codec` (settings are short on purpose; see benches/RESULTS.md).
//! Three slab sizes per codec: "l2" (128 Ki weights, output 512 KiB — fits a 1 MiB L2),
//! "l3" (1 Mi weights, output 4 MiB — fits the 32 MiB L3) and "dram" (4096 × 5120 = 20 Mi
//! weights, output 80 MiB — far bigger than cache).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ninfer_ternary::codec::Codec;
use std::hint::black_box;
use std::time::Duration;

/// Deterministic pseudo-random bytes (xorshift) so every run decodes the same data.
fn random_bytes(n: usize, mut s: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// A slab of `elems` weights in codec `c` with finite, realistic scales (f16 ~0.01).
fn slab(c: Codec, elems: usize) -> Vec<u8> {
    let mut b = random_bytes(
        elems / c.block_elems() * c.block_bytes(),
        0x9e37_79b9_7f4a_7c15,
    );
    let so = c.scale_offset().unwrap();
    for blk in b.chunks_exact_mut(c.block_bytes()) {
        blk[so..so + 2].copy_from_slice(&0x211eu16.to_le_bytes());
    }
    b
}

const SIZES: [(&str, usize); 3] = [("l2", 1 << 17), ("l3", 1 << 20), ("dram", 4096 * 5120)];

fn decode(cr: &mut Criterion) {
    let mut g = cr.benchmark_group("decode");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for c in [Codec::Pq2_0, Codec::Ptq1_0, Codec::Tq1_0, Codec::Tq2_0] {
        for (label, elems) in SIZES {
            let bytes = slab(c, elems);
            let mut out = vec![0f32; elems];
            g.throughput(Throughput::Elements(elems as u64));
            g.bench_with_input(
                BenchmarkId::new(format!("{}/fast", c.name()), label),
                &bytes,
                |b, bytes| b.iter(|| c.decode(black_box(bytes), &mut out).unwrap()),
            );
            g.bench_with_input(
                BenchmarkId::new(format!("{}/reference", c.name()), label),
                &bytes,
                |b, bytes| b.iter(|| c.decode_reference(black_box(bytes), &mut out).unwrap()),
            );
        }
    }
    g.finish();
}

/// 256 MiB `copy_from_slice`: the machine's practical read+write bandwidth.
fn memcpy(cr: &mut Criterion) {
    const N: usize = 256 << 20;
    let src = random_bytes(N, 1);
    let mut dst = vec![0u8; N];
    let mut g = cr.benchmark_group("memcpy");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Bytes(N as u64));
    g.bench_function("copy_from_slice_256MiB", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
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

criterion_group!(benches, decode, memcpy, planes);
criterion_main!(benches);
