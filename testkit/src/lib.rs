//! Test-only support for `ninfer-ternary`, kept out of the library's public API: the checks
//! every fuzz target runs ([`checks`], [`deep`]), the deterministic seed corpus ([`seeds`]) and
//! the table of fuzz targets ([`targets`]), and the one nano synth → template → pack fixture
//! ([`nano`]).
//!
//! Two users: the cargo-fuzz crate in `fuzz/` (its targets call these checks) and this crate's
//! own tests (`tests/fuzz/`: `fuzz_regressions.rs` replays every seed and finding through the
//! same checks), so a replay runs exactly the code the fuzzers run. It depends on the library
//! with `internals`, so the root crate does not depend on it (its `cargo test` builds the
//! library without the feature); `scripts/test.sh` runs both.

pub mod boundary_seeds;
pub mod checks;
pub mod coverage;
pub mod deep;
pub mod mutate;
pub mod nano;
pub mod seeds;
pub mod targets;
