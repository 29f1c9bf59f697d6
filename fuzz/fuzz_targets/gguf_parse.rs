//! Raw bytes → `gguf::parse` in every mode; see `checks::check_gguf`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::checks::check_gguf(data);
});
