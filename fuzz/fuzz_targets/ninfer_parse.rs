//! Raw bytes → `ninfer::Artifact::parse` and every object view; see `checks::check_ninfer`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::checks::check_ninfer(data);
});
