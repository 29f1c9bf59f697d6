//! ninfer-ternary: a specification-driven test and conformance suite for PrismML's ternary
//! GGUF models (PQ2_0 = 142, PTQ1_0 = 143) and their `.ninfer` v2 container.
//!
//! Modules, each with what it owns:
//! - [`spec`]: typed views of the `spec/*.json` tables (the single source of truth) and the
//!   citation checker;
//! - `spec_docs`: the generated regions of `spec/*.md` and the other documents, rendered from
//!   the tables (above `geometry`, whose worked examples it prints);
//! - [`error`]: the one error type, one [`ErrorClass`] per rule (`spec/errors.json`);
//! - `fsio`: opening inputs (regular files only), memory maps, claiming outputs and atomic
//!   replacement (temporary files removed on a signal);
//! - `text`: escaping of text taken from input files before it is printed;
//! - `le`: the one bounds-checked little-endian reader (dumps, bundles, `.npy`, payloads);
//! - `digest`: lower-case hex sha256 of content (corpus, kernel cases, reports);
//! - `rng`: the one deterministic generator (SplitMix64) every generated stream draws from;
//! - [`gguf`]: the zero-copy GGUF reader (spec and strict modes), the deterministic writer and
//!   the streamed transcode / id-42 retag;
//! - [`ninfer`]: the `.ninfer` v2 container (directory, encoded sizes, reader, planned writer);
//! - [`codec`]: the block formats (scalar reference + fast and SIMD decoders, encoders,
//!   quantizers, PTQ1_0 ↔ PQ2_0 transcoding);
//! - [`geometry`]: row-split plane geometry of a grouped tensor;
//! - [`planes`]: ggml blocks ↔ row-split planes;
//! - `shutdown`: cleanups run on SIGINT/SIGTERM/SIGHUP (temporary files, scratch folders);
//! - `contain`: running foreign code (adapters, compilers, kernels) under a supervisor with
//!   deadlines, limits and every descendant killed;
//! - `pool`: one thread budget for nested fan-out (verify's gates and row ranges, the unpack
//!   proof), `NINFER_TERNARY_THREADS`, a sequential fallback when a spawn is refused, and the
//!   one work queue (`pool::queue`: verify's gates, the corpus runner's cases);
//! - [`perm`]: the row and head permutations of the GGUF → ninfer mapping;
//! - [`hadamard`]: the normalized Walsh–Hadamard transform of folded weights;
//! - [`mapping`]: `spec/mapping.json` expanded for a model profile, and profile detection;
//! - `pack`: the packer (GGUF + template → `.ninfer`), its pre-flight and its unpack proof;
//! - `synth`: synthetic Bonsai-shaped GGUF models, templates and the gguf-py oracle fixture;
//! - [`verify`]: the verifier's gates, reports, dumps and mutations;
//! - [`diff`]: where two `.ninfer` files (or two GGUFs) differ: objects, planes, rows and
//!   decoded values;
//! - [`corpus`]: the conformance corpus (families, the hostile/violation catalogs it is built
//!   from, manifest, reader protocol, `check-reader` runner, real-reader matrix, differential
//!   fuzzing);
//! - `cuda`: kernel conformance (reference kernels, cases, host/NVRTC/device tiers);
//! - `npy`: the `.npy` (format 1.0, f32) files `decode -o` writes;
//! - [`cli`]: the commands behind the `ninfer-ternary` binary.
//!
//! Layers (lowest first): `planted` < `text` < `error` < `verdict` < `le` < `digest` < `rng` < `shutdown` < `fsio` < `contain` < `pool` < `npy`
//! < `spec` < `geometry` < `spec_docs` < `perm` < `hadamard` < `planes` < `codec` < `gguf` < `ninfer`
//! < `mapping` < `synth` < `pack`, `verify`, `diff` < `cuda` < `corpus` < `cli`
//!
//! Production code of a module names only modules of lower layers; `pack` and `verify` share a
//! layer and never name each other (the verifier shares no code with what it checks).
//! `tests/it/layers.rs` checks every `crate::` path; test code may reach anything.
//!
//! The binary's counting allocator (`src/peak_alloc.rs`) is compiled into the binary only.
//!
//! Test-only support (fuzz checks, seeds, fixtures) is not here: it lives in the
//! `ninfer-ternary-testkit` crate (`testkit/`) and `tests/it/common.rs`. Tests of plumbing are
//! crate unit tests (`src/tests/`, `#[cfg(test)]`), so `cargo test` builds the library without
//! `internals`.

#![warn(missing_docs)]

/// A module that is part of the library's API only with the `internals` feature (the benches
/// that reach plumbing, the testkit crate and the fuzz crate enable it, as image-png does for
/// its benchmarks; `cargo test` does not, `tests/it/internals_off.rs`); otherwise it
/// is crate-private, so the documented surface is the readers, codecs, geometry, the verifier
/// and the corpus, not the plumbing behind them.
macro_rules! internal_mod {
    // Declared through this macro, a module is out of `cargo fmt`'s reach (it does not expand
    // macros): `scripts/fmt-internal-modules.sh` (run by .ci/run) formats these modules; the
    // folders' own submodules are declared as plain cfg pairs for the same reason.
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[cfg(feature = "internals")]
        pub mod $name;
        $(#[$meta])*
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    };
}

/// `planted!("name", { buggy code })`: a planted bug of the fuzzing benchmark (`planted`). The
/// block runs only in a build with the `planted-bugs` feature and `NINFER_PLANTED_BUG=name`; in
/// every other build it expands to nothing.
macro_rules! planted {
    ($name:literal, $body:block) => {
        #[cfg(feature = "planted-bugs")]
        {
            if crate::planted::active($name) $body
        }
    };
}

/// Planted parser bugs for the fuzzing benchmark; only in `planted-bugs` builds.
#[cfg(feature = "planted-bugs")]
pub mod planted;

// The public surface: what a reader author, a packer maintainer or a tool builds on.
pub mod codec;
pub mod corpus;
pub mod diff;
pub mod error;
pub mod geometry;
pub mod gguf;
pub mod hadamard;
pub mod mapping;
pub mod ninfer;
pub mod perm;
pub mod planes;
pub mod spec;
pub mod verdict;
pub mod verify;

/// The command line behind the `ninfer-ternary` binary; its entry point is [`cli::main`]
/// (the rest of the module is the binary's own and not an API).
#[doc(hidden)]
pub mod cli;

// Plumbing: public only with the `internals` feature.
internal_mod!(contain);
internal_mod!(cuda);
internal_mod!(digest);
internal_mod!(fsio);
internal_mod!(le);
internal_mod!(npy);
internal_mod!(pack);
internal_mod!(pool);
internal_mod!(rng);
internal_mod!(shutdown);
internal_mod!(spec_docs);
internal_mod!(synth);
internal_mod!(text);

pub use error::{Error, ErrorClass, Result};

// Tests of crate-private plumbing (formerly integration tests that needed `internals`).
#[cfg(test)]
mod tests;
