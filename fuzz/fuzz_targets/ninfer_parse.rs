//! Raw bytes → `ninfer::Artifact::parse` and every object view; see `checks::check_ninfer`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::checks::check_ninfer(data);
});

// Field-level mutations of the container half of the time (testkit/src/mutate/).
libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    ninfer_ternary_fuzz::custom_mutate(
        ninfer_ternary_fuzz::Container::Ninfer,
        data,
        size,
        max_size,
        seed,
    )
});
