//! An `arbitrary` GGUF description rendered with `GgufWriter`; see `structured::check_desc`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_ternary_fuzz::structured::GgufDesc;

fuzz_target!(|desc: GgufDesc| {
    ninfer_ternary_fuzz::structured::check_desc(&desc);
});
