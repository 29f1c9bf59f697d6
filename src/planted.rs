//! Planted parser bugs for the fuzzing benchmark (`fuzz/planted.sh`, fuzz/RESULTS.md).
//!
//! Compiled only with the `planted-bugs` feature, which no normal build, test or release
//! enables: the fuzz crate turns it on for its separate benchmark build
//! (`fuzz/target-planted/`). Even then every bug is dormant until the environment variable
//! `NINFER_PLANTED_BUG` names it, so one build serves every bug and a run with the variable
//! unset behaves exactly like the real parsers. Each bug is a realistic slip of the kind the
//! fuzzing literature plants (an overflow, an off-by-one at a length boundary, a hang on a
//! large count, a bounds check missed deep after a successful parse), placed at the real
//! code path with [`planted!`]; the benchmark measures how long each fuzz target takes to
//! reach it, so a regression of the mutators, dictionaries or seeds shows up as a bug no
//! longer found.

use std::sync::OnceLock;

/// One planted bug: its name (the value of `NINFER_PLANTED_BUG`), the container it lives in,
/// the fuzz targets that can reach it and what it is.
pub struct Bug {
    /// The name `NINFER_PLANTED_BUG` selects it by.
    pub name: &'static str,
    /// The fuzz targets whose input path reaches the bug, best first.
    pub targets: &'static [&'static str],
    /// The class of slip, in the benchmark's words.
    pub class: &'static str,
    /// What the bug does and what input reaches it.
    pub what: &'static str,
}

/// Every planted bug, in the order of fuzz/RESULTS.md.
pub const BUGS: &[Bug] = &[
    Bug {
        name: "gguf_dims3_mul_wraps",
        targets: &["gguf_parse", "gguf_structured"],
        class: "integer overflow",
        what: "a 3-D tensor's element count is multiplied without a check (a wrapping product panics under overflow checks)",
    },
    Bug {
        name: "gguf_eof_tensor_align128",
        targets: &["gguf_parse", "gguf_structured"],
        class: "off-by-one (inclusive end)",
        what: "with general.alignment = 128, a tensor whose data ends exactly at end of file reads one byte past it",
    },
    Bug {
        name: "gguf_string_array_1000_hang",
        // gguf_structured writes at most 64 array entries (fuzz/src/structured.rs MAX_ARRAY).
        targets: &["gguf_parse"],
        class: "hang on a large count",
        what: "a string array of more than 1,000 entries takes a chunked slow path that never advances (libFuzzer timeout)",
    },
    Bug {
        name: "gguf_key_256_buffer",
        // gguf_structured writes keys of at most 48 bytes (MAX_STR).
        targets: &["gguf_parse"],
        class: "off-by-one at a length boundary",
        what: "a KV key of exactly 256 bytes is copied with its terminator into a 256-byte buffer",
    },
    Bug {
        name: "ninfer_name_255_buffer",
        targets: &["ninfer_parse", "ninfer_roundtrip"],
        class: "off-by-one at a length boundary",
        what: "an object name of exactly 255 bytes is copied with its terminator into a 255-byte buffer",
    },
    Bug {
        name: "ninfer_resource_bytes_round_wraps",
        targets: &["ninfer_parse", "ninfer_roundtrip"],
        class: "integer overflow",
        what: "a resource's bytes are rounded up to 8-byte words with an unchecked add (bytes within 7 of 2^64 panic under overflow checks)",
    },
    Bug {
        name: "ninfer_rows_end_unchecked",
        targets: &["ninfer_parse", "ninfer_roundtrip"],
        class: "bounds check missed after a successful parse",
        what: "ggml_rows(0..n+1) of a PTQ1_0 row-split tensor with at least 5 rows skips the row-range check and reads a plane past its end",
    },
    Bug {
        name: "dump_array_one_short",
        targets: &["dumps_parse"],
        class: "off-by-one length check",
        what: "a dump array file one f32 shorter than its manifest's size is accepted (the caller then indexes past it)",
    },
    Bug {
        name: "pack_sign_values_by_sign",
        targets: &["pack_nano"],
        class: "lenient input check in the packer",
        what: "the packer reads prism.hadamard.sign_values by sign instead of refusing values other than +-1, so it packs a sign table the verifier refuses",
    },
];

/// Whether the bug `name` is the one `NINFER_PLANTED_BUG` selects (read once per process).
pub fn active(name: &str) -> bool {
    static SELECTED: OnceLock<Option<String>> = OnceLock::new();
    SELECTED
        .get_or_init(|| std::env::var("NINFER_PLANTED_BUG").ok())
        .as_deref()
        == Some(name)
}
