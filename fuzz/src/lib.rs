//! Fuzzing support for `ninfer-ternary`: the structured GGUF generator ([`structured`]), the
//! libFuzzer glue of the structure-aware mutators ([`custom_mutate`]), plus the checks, seeds,
//! mutators and target table of the `ninfer-ternary-testkit` crate (`testkit/`), re-exported
//! here for the targets in `fuzz_targets/`. The root crate's tests replay every seed and
//! finding through the same testkit functions.

pub use ninfer_ternary_testkit::mutate::Container;
pub use ninfer_ternary_testkit::{checks, deep, mutate, seeds, targets};
pub mod structured;

use std::sync::OnceLock;

/// Whether the structure-aware mutators run: always, unless `NINFER_FUZZ_MUTATOR=bytes`
/// (libFuzzer's byte mutator alone, the "before" column of fuzz/RESULTS.md).
fn structure_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("NINFER_FUZZ_MUTATOR").as_deref() != Ok("bytes"))
}

/// The body of a target's `fuzz_mutator!`: every other call (by libFuzzer's seed) is a
/// structure-aware mutation of `container` when the input parses as one; the rest, and every
/// input that does not parse, go to libFuzzer's own byte mutator (with the dictionary).
pub fn custom_mutate(
    container: Container,
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
) -> usize {
    if structure_enabled() && seed % 2 == 0 {
        if let Some(out) = mutate::mutate(container, &data[..size], max_size, seed) {
            data[..out.len()].copy_from_slice(&out);
            return out.len();
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
}
