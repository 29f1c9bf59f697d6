//! ninfer-ternary: a specification-driven test and conformance suite for PrismML's ternary
//! GGUF models (PQ2_0 = 142, PTQ1_0 = 143) and their `.ninfer` v2 container.
//!
//! Layout: `spec` (the tables), `gguf` and `ninfer` (containers), `codec` (block formats),
//! `geometry` / `planes` / `perm` / `hadamard` (the math of the conversion), `npy` (output),
//! `cli` (the commands behind the binary).

pub mod cli;
pub mod codec;
pub mod corpus;
pub mod cuda;
pub mod error;
pub mod fsio;
pub mod geometry;
pub mod gguf;
pub mod hadamard;
pub mod mapping;
pub mod ninfer;
pub mod npy;
pub mod pack;
pub mod perm;
pub mod planes;
pub mod spec;
pub mod synth;
pub mod text;
pub mod verify;

pub use error::{Error, ErrorClass, Result};
