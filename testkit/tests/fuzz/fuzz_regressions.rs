//! Replays every fuzz seed (`fuzz/seeds/<target>/*`) and every minimized fuzz finding
//! (`fuzz/regressions/<target>/*`) through the same checking functions the fuzz targets run.
//!
//! The checks, seeds and target table come from the `ninfer-ternary-testkit` crate
//! (`testkit/`), which the fuzz crate uses too, so the root crate needs no libfuzzer. The
//! `gguf_structured` target decodes its input with `arbitrary`, which the testkit does not
//! have: its files are replayed here as raw GGUF bytes (`check_gguf`), and through the
//! structured decoder by `cargo test --manifest-path fuzz/Cargo.toml`.
//!
//! Regenerate the seeds after changing a catalog:
//! `(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --test fuzz fuzz_regressions::regenerate_seeds -- --ignored)`.

use ninfer_ternary::corpus::catalogs::gguf_hostile;
use ninfer_ternary_testkit::mutate::dict;
use ninfer_ternary_testkit::{seeds, targets};

use std::path::PathBuf;

fn fuzz_dir() -> PathBuf {
    crate::common::repo_root().join("fuzz")
}

/// Runs `target`'s check on `bytes`.
fn replay(target: &str, bytes: &[u8]) {
    match targets::target(target) {
        Some(t) => (t.replay)(bytes),
        None => panic!("no checks for fuzz target directory {target}"),
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
            "fuzz/seeds/{target} is stale; run `(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --test fuzz fuzz_regressions::regenerate_seeds -- --ignored)`"
        );
    }
}

#[test]
fn committed_dictionaries_are_up_to_date() {
    for t in targets::TARGETS {
        let path = fuzz_dir().join("dict").join(format!("{}.dict", t.name));
        let have =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            have == dict::file(t.name),
            "{} is stale; run `(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --test fuzz fuzz_regressions::regenerate_seeds -- --ignored)`",
            path.display()
        );
        let entries = have.lines().filter(|l| !l.starts_with('#')).count();
        assert!(entries >= 10, "{}: only {entries} entries", path.display());
    }
}

#[test]
fn dictionaries_hold_the_spec_words() {
    // Spot checks that the generator reads the tables: a GGUF key the reader itself reads, a
    // ternary type id (PQ2_0 = 142 as u32 LE), a directory member, a layout name.
    let g = dict::file("gguf_parse");
    assert!(g.contains("\"general.alignment\"") && g.contains("\"\\x8E\\x00\\x00\\x00\""));
    let n = dict::file("ninfer_parse");
    assert!(n.contains("\\x22weights_id\\x22") && n.contains("row-split-k128-v1"));
}

#[test]
fn gguf_seeds_cover_every_hostile_case() {
    let seeds = seeds::for_target("gguf_parse");
    for c in gguf_hostile::hostile_cases() {
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
    let dicts = fuzz_dir().join("dict");
    std::fs::create_dir_all(&dicts).unwrap();
    for t in targets::TARGETS {
        std::fs::write(dicts.join(format!("{}.dict", t.name)), dict::file(t.name)).unwrap();
    }
}
