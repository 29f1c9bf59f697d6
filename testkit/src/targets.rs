//! The fuzz targets and the check each one runs on its raw input.
//!
//! The list of targets is `fuzz/Cargo.toml`'s `[[bin]]` sections (cargo-fuzz needs them there);
//! `fuzz/run.sh` reads it from there, and [`TARGETS`] pairs each name with its check. The
//! root crate's `fuzz_regressions` tests fail when the two lists, `fuzz/fuzz_targets/*.rs`,
//! `fuzz/seeds/*` and `fuzz/regressions/*` disagree.

use crate::{checks, deep};

/// One fuzz target: its `[[bin]]` name and the check its libFuzzer wrapper runs.
pub struct Target {
    /// The `[[bin]]` name in `fuzz/Cargo.toml` and the directory name under `fuzz/seeds/`.
    pub name: &'static str,
    /// Replays one input file; panics on a violated invariant (a finding).
    pub replay: fn(&[u8]),
}

/// Every fuzz target, in the order `fuzz/Cargo.toml` lists them.
///
/// `gguf_structured` decodes its input with `arbitrary`, which this crate does not depend on:
/// its files are replayed here as raw GGUF bytes; `fuzz/tests/replay.rs` also replays them
/// through the structured decoder.
pub const TARGETS: &[Target] = &[
    Target {
        name: "gguf_parse",
        replay: checks::check_gguf,
    },
    Target {
        name: "ninfer_parse",
        replay: checks::check_ninfer,
    },
    Target {
        name: "ninfer_roundtrip",
        replay: checks::check_ninfer_roundtrip,
    },
    Target {
        name: "gguf_structured",
        replay: checks::check_gguf,
    },
    Target {
        name: "codec_fast_vs_ref",
        replay: deep::check_codec,
    },
    Target {
        name: "pack_nano",
        replay: deep::check_pack,
    },
    Target {
        name: "dumps_parse",
        replay: dumps_parse,
    },
];

/// `dumps_parse`: every dump-bundle and gates-input parser on one input (never panics).
fn dumps_parse(bytes: &[u8]) {
    ninfer_ternary::verify::dump_bundle::parse_all(bytes);
}

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The `name`s of the `[[bin]]` sections of a Cargo manifest, in file order.
///
/// A line-level reader of the manifest's own shape (`[[bin]]` headers, `name = "…"` lines),
/// enough for `fuzz/Cargo.toml`; `fuzz/run.sh` reads the file the same way.
pub fn manifest_bins(cargo_toml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_bin = false;
    for line in cargo_toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
            continue;
        }
        if !in_bin {
            continue;
        }
        if let Some(value) = line.strip_prefix("name").map(str::trim_start) {
            if let Some(quoted) = value.strip_prefix('=').map(str::trim) {
                out.push(quoted.trim_matches('"').to_string());
            }
        }
    }
    out
}
