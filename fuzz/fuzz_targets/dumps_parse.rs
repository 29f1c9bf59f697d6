//! A dump bundle (`verify::dump_bundle`: named files in one byte string) → every dump parser
//! `verify` runs (native embedding and kernel-oracle manifests with their arrays, the engine
//! embedding dump), with array lengths checked against the manifests. Seeds:
//! `fuzz/seeds/dumps_parse/`, written from dump-reference output.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ninfer_ternary::verify::dump_bundle::parse_all(data);
});
