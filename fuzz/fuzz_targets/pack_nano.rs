//! Byte edits of the micro GGUF → pack → unpack proof + verify; see `deep::check_pack`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary_fuzz::deep::check_pack(data);
});
