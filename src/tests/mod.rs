//! The crate's own test files: tests of plumbing that is crate-private in the default build
//! (the packer, the synthesizer, verifier internals, the kernel suite, corpus catalogs), moved
//! here from `tests/it/` so that `cargo test` builds the library without the `internals`
//! feature (issue #36). A test here sees `pub(crate)` items; the CLI binary's tests stay in
//! `tests/it/` (only integration tests get `CARGO_BIN_EXE_*`). One file per former module,
//! with the same test names; each file's `use` lines name the module it tests.

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
