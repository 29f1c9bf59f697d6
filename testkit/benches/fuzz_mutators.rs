//! What the structure-aware mutators (testkit/src/mutate/) cost next to the target they feed:
//! per fuzz target, one pass of structure mutations over the committed seeds against one pass
//! of the target's own checks over the same seeds. libFuzzer runs one mutation per execution
//! and the glue sends half of them to the structure mutator, so with a mutation time M and a
//! check time C per input the execution rate is 1 / (C + M/2) against 1 / C without them
//! (fuzz/RESULTS.md records both and the end-to-end execs/s).

use criterion::{criterion_group, criterion_main, Criterion};
use ninfer_ternary_testkit::mutate::{self, Container};
use ninfer_ternary_testkit::{seeds, targets};

fn mutators(c: &mut Criterion) {
    let mut g = c.benchmark_group("fuzz_mutators");
    g.sample_size(10);
    for (container, target, max_size) in [
        (Container::Gguf, "gguf_parse", 73728usize),
        (Container::Ninfer, "ninfer_parse", 73728),
        (Container::Bundle, "dumps_parse", 65536),
    ] {
        let inputs: Vec<Vec<u8>> = seeds::for_target(target).into_values().collect();
        let check = targets::target(target).expect("a target").replay;
        g.bench_function(format!("{target}/check_all_seeds"), |b| {
            b.iter(|| inputs.iter().for_each(|x| check(x)))
        });
        g.bench_function(format!("{target}/mutate_all_seeds"), |b| {
            let mut seed = 0u32;
            b.iter(|| {
                for x in &inputs {
                    seed = seed.wrapping_add(1);
                    std::hint::black_box(mutate::mutate(container, x, max_size, seed));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, mutators);
criterion_main!(benches);
