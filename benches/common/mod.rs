//! What every bench shares: the deterministic input generator and the group settings.
//! (Each bench includes this module with `mod common;`; not every bench uses every item.)
#![allow(dead_code)]

use std::time::Duration;

/// Deterministic pseudo-random bytes (xorshift) so every run measures the same data.
pub fn random_bytes(n: usize, mut s: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// A benchmark group with the suite's settings: 10 samples, 0.3 s warm-up, 1 s measured.
pub fn group<'a>(
    cr: &'a mut criterion::Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = cr.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g
}
