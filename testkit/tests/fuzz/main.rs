//! The root crate's tests that need its plumbing public (the `internals` feature) and this
//! crate's fuzz checks: the fuzz targets' regression replays, mutators, seed coverage and
//! target table, and the planted-bug benchmark's wiring. They live here, not in the root's
//! `tests/it/`, so that the root's `cargo test` builds the library as a user gets it (issue
//! #36). Run: `scripts/test.sh` (the README's test command), or alone with
//! `cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test`.

mod common;

mod fuzz_coverage;
mod fuzz_mutators;
mod fuzz_regressions;
mod fuzz_targets;
mod planted_bugs;
