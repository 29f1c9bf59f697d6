//! TODO(codec) — NOT BUILT. Stub for when `src/codec` lands on this branch.
//!
//! Plan: for each ternary ggml type (PQ2_0 = 142, PTQ1_0 = 143, legacy Q2_0-g128 = 42, and the
//! mainline TQ1_0/TQ2_0/Q1_0), take arbitrary block bytes (a whole number of blocks), decode
//! them with the fast (vectorised) decoder and the reference decoder, and assert:
//! * identical results bit for bit (f32 bit patterns, NaN included), or the same `ErrorClass`
//!   (`codec.length`, `codec.scale_nonfinite`);
//! * encode(decode(x)) == x for inputs whose codes are canonical.
//! Enable by adding a `[[bin]]` entry in fuzz/Cargo.toml, a seed generator in
//! fuzz/src/seeds.rs and a row in run.sh's target list.
//!
//! Deliberately no code here: the codec API is being written in parallel.
fn main() {}
