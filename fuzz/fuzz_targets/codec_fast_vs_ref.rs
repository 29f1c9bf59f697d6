//! A codec selector byte + block bytes → fast path vs scalar reference; see `deep::check_codec`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::deep::check_codec(data);
});
