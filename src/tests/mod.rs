//! The crate's own test files: tests of plumbing that is crate-private in the default build
//! (the packer, the synthesizer, verifier internals, the kernel suite, corpus catalogs), moved
//! here from `tests/it/` so that `cargo test` builds the library without the `internals`
//! feature (issue #36). A test here sees `pub(crate)` items; the CLI binary's tests stay in
//! `tests/it/` (only integration tests get `CARGO_BIN_EXE_*`). One file per former module,
//! with the same test names; each file's `use` lines name the module it tests.
//!
//! Why one folder rather than each module's own `#[cfg(test)] mod tests`: the files moved
//! whole (names, assertions and negative controls unchanged), several test more than one
//! module (verify_gates builds its fixtures with the packer and the synthesizer), and the
//! 80-line limit of `src/{gguf,ninfer,pack,verify}` (tests/it/layout.rs) is for the parsers,
//! the packer and the verifier, not for their tests (the 150-line limit holds here too).

mod fixtures;

mod doc_numbers;
mod gguf_big_endian;
mod gguf_hostile;
mod hostile_corpus;
mod hostile_run;
mod kernels;
mod kernels_planes;
mod pack;
mod pack_inputs;
mod single_fault;
mod spec_docs;
mod verdict_honesty;
mod verify_gates;
