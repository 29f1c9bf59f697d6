//! Raw bytes → parse → plan/to_bytes → parse; see `checks::check_ninfer_roundtrip`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::checks::check_ninfer_roundtrip(data);
});
