//! Replays every fuzz seed (`fuzz/seeds/<target>/*`) and every minimized fuzz finding
//! (`fuzz/regressions/<target>/*`) through the same checking functions the fuzz targets run.
//!
//! `fuzz/src/checks.rs` and `fuzz/src/seeds.rs` are plain modules without libfuzzer or
//! `arbitrary`, included here by path, so the root crate needs no extra dependency. The
//! `gguf_structured` target decodes its input with `arbitrary`, which the root crate does not
//! have: its files are replayed here as raw GGUF bytes (`check_gguf`), and through the
//! structured decoder by `cargo test --manifest-path fuzz/Cargo.toml`.
//!
//! Regenerate the seeds after changing a catalog:
//! `cargo test --test fuzz_regressions -- --ignored regenerate_seeds`.

#[path = "../fuzz/src/checks.rs"]
mod checks;
#[path = "../fuzz/src/deep.rs"]
mod deep;
#[path = "../fuzz/src/seeds.rs"]
mod seeds;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// Runs `target`'s check on `bytes`.
fn replay(target: &str, bytes: &[u8]) {
    match target {
        "gguf_parse" | "gguf_structured" => checks::check_gguf(bytes),
        "ninfer_parse" => checks::check_ninfer(bytes),
        "ninfer_roundtrip" => checks::check_ninfer_roundtrip(bytes),
        "codec_fast_vs_ref" => deep::check_codec(bytes),
        "pack_nano" => deep::check_pack(bytes),
        "dumps_parse" => {
            ninfer_ternary::verify::dump_bundle::parse_all(bytes);
        }
        other => panic!("no checks for fuzz target directory {other}"),
    }
}

/// (target, path) of every file under `fuzz/<kind>/<target>/`.
fn files(kind: &str) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(fuzz_dir().join(kind)) else {
        return out;
    };
    for d in dirs.flatten() {
        if !d.path().is_dir() {
            continue;
        }
        let target = d.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().is_file() && !f.file_name().to_string_lossy().starts_with('.') {
                out.push((target.clone(), f.path()));
            }
        }
    }
    out.sort();
    out
}

fn replay_all(kind: &str) -> usize {
    let all = files(kind);
    for (target, path) in &all {
        let bytes = std::fs::read(path).unwrap();
        let r = std::panic::catch_unwind(|| replay(target, &bytes));
        assert!(r.is_ok(), "{} failed its {target} checks", path.display());
    }
    all.len()
}

#[test]
fn every_seed_passes_its_target_checks() {
    let n = replay_all("seeds");
    assert!(n > 0, "no seeds found under fuzz/seeds");
}

#[test]
fn control_seeds_are_accepted() {
    use ninfer_ternary::gguf::{self, Mode};
    let mut n = 0;
    for (target, path) in files("seeds") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("control-") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let ok = match target.as_str() {
            "gguf_parse" => {
                gguf::parse(&bytes, Mode::Spec).is_ok() || gguf::parse(&bytes, Mode::Strict).is_ok()
            }
            _ => ninfer_ternary::ninfer::Artifact::parse(&bytes).is_ok(),
        };
        assert!(ok, "{} is refused", path.display());
        n += 1;
    }
    assert!(n >= 10, "only {n} control seeds");
}

#[test]
fn every_regression_passes_its_target_checks() {
    replay_all("regressions");
}

#[test]
fn committed_seeds_are_up_to_date() {
    for (target, want) in seeds::all() {
        let dir = fuzz_dir().join("seeds").join(target);
        let mut have = std::collections::BTreeMap::new();
        for f in std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            have.insert(
                f.file_name().to_string_lossy().into_owned(),
                std::fs::read(f.path()).unwrap(),
            );
        }
        assert!(
            have == want,
            "fuzz/seeds/{target} is stale; run `cargo test --test fuzz_regressions -- --ignored regenerate_seeds`"
        );
    }
}

#[test]
fn gguf_seeds_cover_every_hostile_case() {
    let seeds = seeds::for_target("gguf_parse");
    for c in ninfer_ternary::gguf::hostile_cases() {
        assert!(
            seeds.values().any(|b| *b == c.bytes),
            "hostile case {} is not a gguf_parse seed",
            c.name
        );
    }
}

#[test]
#[ignore = "writes fuzz/seeds; run explicitly after changing a catalog"]
fn regenerate_seeds() {
    for (target, files) in seeds::all() {
        let dir = fuzz_dir().join("seeds").join(target);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}
