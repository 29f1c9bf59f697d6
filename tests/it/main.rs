//! The integration tests, one binary with one module per area (one link instead of eleven).
//! Shared fixtures live in [`common`]. The conformance corpus driver stays its own binary
//! (`tests/conformance.rs`): it has its own `main` (libtest-mimic, one trial per corpus case).
//!
//! Run one area: `cargo test --test it cli::` (module paths prefix the test names).
//!
//! These tests see the library as a user does (`internals` off, `internals_off`): tests of
//! crate-private plumbing are crate unit tests (`src/tests/`, `cargo test --lib tests::pack::`),
//! and those that need `internals` (fuzz replays, mutators, seed coverage) live with
//! `testkit/` (`scripts/test.sh` runs everything).

mod common;

mod check_reader_localize;
mod cli;
mod diff;
mod differential;
mod encoders;
mod exit_codes;
mod fn_length;
mod gguf_reader_writer;
mod gguf_rule_layers;
mod gguf_transcode_limits;
mod host_types;
mod hostile_corpus;
mod hostile_io;
mod hostile_kernel;
mod hostile_limits;
mod hostile_run;
mod hostile_text;
mod hostile_time;
mod internals_off;
mod kernel_examples;
mod kernels;
mod kernels_template_shared;
mod layers;
mod layout;
mod msrv;
mod mutation_score;
mod ninfer_memory;
mod ninfer_messages;
mod pack_inputs;
mod persistent;
mod planted_bugs;
mod planted_readers;
mod protocol_mismatch;
mod schemas;
mod spec_docs;
mod verdict_honesty;
mod verify_gates;
