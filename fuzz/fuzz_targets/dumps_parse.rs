//! A dump bundle (`verify::dump_bundle`: named files in one byte string) → every dump parser
//! `verify` runs (native embedding and kernel-oracle manifests with their arrays, the engine
//! embedding dump), with array lengths checked against the manifests. Seeds:
//! `fuzz/seeds/dumps_parse/`, written from dump-reference output.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary::verify::dump_bundle::parse_all(data);
});

// Field-level mutations of the bundle half of the time (testkit/src/mutate/bundle.rs).
libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    ninfer_ternary_fuzz::custom_mutate(
        ninfer_ternary_fuzz::Container::Bundle,
        data,
        size,
        max_size,
        seed,
    )
});
