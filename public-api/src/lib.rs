//! Nothing to export: this crate exists for its tests (`tests/reader_author.rs`), which use
//! `ninfer-ternary` with default features only, as a downstream reader author would.
//!
//! The plumbing is out of reach here (negative control: `internals` really is off in this
//! build; if it were on, this would compile and the doc test would fail):
//!
//! ```compile_fail
//! let _ = ninfer_ternary::fsio::claim_output;
//! ```
//!
//! while the surface a reader author uses is in reach (so the block above fails for the
//! reason it says, not for a typo):
//!
//! ```
//! let _ = ninfer_ternary::gguf::parse;
//! let _ = ninfer_ternary::codec::Codec::decode_to_vec;
//! ```
