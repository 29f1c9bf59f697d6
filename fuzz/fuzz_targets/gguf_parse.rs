//! Raw bytes → `gguf::parse` in every mode; see `checks::check_gguf`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::checks::check_gguf(data);
});

// Field-level mutations of the container half of the time (testkit/src/mutate/).
libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    ninfer_ternary_fuzz::custom_mutate(
        ninfer_ternary_fuzz::Container::Gguf,
        data,
        size,
        max_size,
        seed,
    )
});
