//! Fuzzing support for `ninfer-ternary`: the checks every target runs ([`checks`], shared
//! verbatim with the root crate's `tests/fuzz_regressions.rs`), the structured GGUF generator
//! ([`structured`]), the deep checks of the codec and packer targets ([`deep`], also shared) and
//! the deterministic seed corpus ([`seeds`], also shared).

pub mod checks;
pub mod deep;
pub mod seeds;
pub mod structured;
