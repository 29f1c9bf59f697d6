//! TODO(pack) — NOT BUILT. Stub for when the nano packer (GGUF → `.ninfer`) lands.
//!
//! Plan: an `arbitrary` tiny ternary GGUF (a handful of PQ2_0/PTQ1_0 tensors with small
//! [n, k] shapes, k a multiple of 128) is packed into a `.ninfer` artifact in memory; assert
//! the artifact parses, every row-split object's `ggml_rows(0..n)` equals the GGUF tensor bytes
//! exactly (losslessness), and packing twice gives identical bytes. Hostile GGUFs must fail
//! with a `gguf.*` error, never a panic.
fn main() {}
