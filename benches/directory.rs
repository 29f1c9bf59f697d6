//! Directory parsing cost from 10^3 to 10^6 objects: `.ninfer` open time must grow linearly
//! with the number of objects (issue #11; tests/hostile_time.rs asserts the ratio, this
//! measures it). Each size reports objects per second: flat throughput means linear time.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ninfer_ternary::ninfer::directory::parse_directory;
use ninfer_ternary::ninfer::reader::Artifact;
use ninfer_ternary::ninfer::writer::{plan, to_bytes, PlannedObject};
use ninfer_ternary::ninfer::Identity;

/// A valid container of `n` one-byte resources, and its directory text.
fn container(n: usize) -> (Vec<u8>, String) {
    let objects = (0..n)
        .map(|i| PlannedObject::resource(format!("layer.{i}/resource"), 1))
        .collect();
    let id = Identity {
        model_id: "bench-model".into(),
        weights_id: "bench-weights".into(),
    };
    let dir = plan(id, objects).expect("valid plan");
    let bytes = to_bytes(&dir, &vec![vec![1u8]; n]).expect("writes");
    (bytes, dir.to_json())
}

fn directory(c: &mut Criterion) {
    let mut g = c.benchmark_group("directory");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let (bytes, json) = container(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("parse_directory", n), &json, |b, j| {
            b.iter(|| parse_directory(j).expect("parses"))
        });
        g.bench_with_input(BenchmarkId::new("open_and_view_all", n), &bytes, |b, f| {
            b.iter(|| {
                let a = Artifact::parse(f).expect("opens");
                for o in &a.directory.objects {
                    a.view_object(o).expect("views");
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, directory);
criterion_main!(benches);
