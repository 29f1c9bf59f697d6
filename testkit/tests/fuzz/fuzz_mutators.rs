//! The structure-aware mutators of the fuzz targets (`testkit/src/mutate/`), measured without
//! libFuzzer: each is a pure function of (input, seed), so a fixed mutation loop from the
//! committed seeds replays exactly.
//!
//! * A lenient model reads and re-writes every committed seed it can frame byte for byte (the
//!   mutations start from the real files, not from an approximation of them).
//! * From the seeds, a bounded loop of structure mutations reaches the inputs byte-level
//!   fuzzing did not reach in 8–13 M executions (fuzz/RESULTS.md): an accepted GGUF string
//!   array of more than 1,000 entries, an accepted `.ninfer` object name of exactly 255 bytes,
//!   and the other preconditions of the planted-bug benchmark, each counted and asserted.
//! * The loop's refusals cover the spec rules listed in `RULES_REACHED` (each one mutation
//!   away); a rule that stops being reached fails here with the list of what was.

use std::collections::{BTreeMap, BTreeSet};

use ninfer_ternary::gguf::{self, Mode, Value};
use ninfer_ternary::ninfer::Artifact;
use ninfer_ternary_testkit::mutate::{self, gguf::Model as GgufModel, ninfer::Model, Container};
use ninfer_ternary_testkit::seeds;

/// Upper bound of one loop; the goals are usually met well before it.
const MAX_ROUNDS: usize = 40_000;
/// Every loop runs at least this many rounds, so the rule counts do not depend on how soon
/// the goals were met.
const MIN_ROUNDS: usize = 4_000;

/// A pool of inputs evolved by structure mutations. Outputs the real reader accepts join it,
/// and every fourth other output (the pool is capped, replacing a random member): a crude
/// stand-in for libFuzzer keeping the inputs that reach new code.
struct Evolve {
    pool: Vec<Vec<u8>>,
    container: Container,
    round: usize,
}

impl Evolve {
    fn new(container: Container, target: &str) -> Evolve {
        let pool: Vec<Vec<u8>> = seeds::for_target(target)
            .into_values()
            .filter(|b| match container {
                Container::Gguf => GgufModel::parse(b).is_some(),
                Container::Ninfer => Model::parse(b).is_some(),
                Container::Bundle => {
                    ninfer_ternary_testkit::mutate::bundle::Model::parse(b).is_some()
                }
            })
            .collect();
        assert!(pool.len() > 10, "{target}: only {} seeds frame", pool.len());
        Evolve {
            pool,
            container,
            round: 0,
        }
    }

    fn next(&mut self, max_size: usize) -> Option<Vec<u8>> {
        self.round += 1;
        let r = self.round as u64;
        let i = (r.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as usize % self.pool.len();
        let out = mutate::mutate(self.container, &self.pool[i], max_size, self.round as u32)?;
        let accepted = match self.container {
            Container::Gguf => gguf::parse(&out, Mode::Spec).is_ok(),
            Container::Ninfer => Artifact::parse(&out).is_ok(),
            Container::Bundle => true,
        };
        if !accepted && r % 4 != 0 {
            return Some(out);
        }
        if self.pool.len() < 512 {
            self.pool.push(out.clone());
        } else {
            let j = (r.wrapping_mul(0xD1B5_4A32_D192_ED03) >> 33) as usize % self.pool.len();
            self.pool[j] = out.clone();
        }
        Some(out)
    }
}

#[test]
fn the_models_rewrite_every_valid_seed_byte_for_byte() {
    let mut n = 0;
    for (name, bytes) in seeds::for_target("gguf_parse") {
        if name.starts_with("control-") && gguf::parse(&bytes, Mode::Strict).is_ok() {
            let m = GgufModel::parse(&bytes).expect("a valid GGUF frames");
            assert!(
                m.to_bytes() == bytes,
                "gguf seed {name} does not round-trip"
            );
            n += 1;
        }
    }
    for (name, bytes) in seeds::for_target("dumps_parse") {
        let m = ninfer_ternary_testkit::mutate::bundle::Model::parse(&bytes)
            .expect("a dump bundle frames");
        assert!(
            m.to_bytes() == bytes,
            "dumps seed {name} does not round-trip"
        );
        n += 1;
    }
    for (name, bytes) in seeds::for_target("ninfer_parse") {
        if Artifact::parse(&bytes).is_ok() {
            let m = Model::parse(&bytes).expect("a valid artifact frames");
            assert!(
                m.to_bytes() == bytes,
                "ninfer seed {name} does not round-trip"
            );
            n += 1;
        }
    }
    assert!(n >= 10, "only {n} valid seeds checked");
}

#[test]
fn mutations_are_deterministic_and_bounded() {
    for (container, target) in [
        (Container::Gguf, "gguf_parse"),
        (Container::Ninfer, "ninfer_parse"),
        (Container::Bundle, "dumps_parse"),
    ] {
        for (_, bytes) in seeds::for_target(target).into_iter().take(20) {
            for seed in 0..50u32 {
                let a = mutate::mutate(container, &bytes, 9000, seed);
                let b = mutate::mutate(container, &bytes, 9000, seed);
                assert_eq!(a, b, "{target}: seed {seed} is not deterministic");
                if let Some(out) = a {
                    assert!(out.len() <= 9000, "{target}: output over max_size");
                }
            }
        }
    }
}

fn assert_goals(goals: &[&str], reached: &BTreeMap<&str, usize>, rounds: usize) {
    for g in goals {
        assert!(
            reached.contains_key(g),
            "not reached in {rounds} rounds: {g}; reached {reached:?}"
        );
    }
}

fn assert_rules(rules: &[&str], classes: &BTreeMap<String, usize>) {
    let missing: BTreeSet<&str> = rules
        .iter()
        .copied()
        .filter(|r| !classes.contains_key(*r))
        .collect();
    assert!(
        missing.is_empty(),
        "rules never reached: {missing:?}; reached {classes:?}"
    );
}

/// Counts of the error classes the real reader gave, per class id.
fn note(classes: &mut BTreeMap<String, usize>, class: &str) {
    *classes.entry(class.to_string()).or_default() += 1;
}

#[test]
fn gguf_mutations_reach_large_arrays_eof_tensors_and_wrapping_dims() {
    let mut e = Evolve::new(Container::Gguf, "gguf_parse");
    let mut reached: BTreeMap<&str, usize> = BTreeMap::new();
    let mut classes = BTreeMap::new();
    let goals = [
        "accepted string array > 1000 entries",
        "accepted alignment 128 with a tensor ending at end of file",
        "3-D tensor whose element count wraps u64",
        "accepted 256-byte key",
    ];
    while e.round < MIN_ROUNDS || (e.round < MAX_ROUNDS && reached.len() < goals.len()) {
        let Some(out) = e.next(16384) else { continue };
        let model = GgufModel::parse(&out);
        if let Some(m) = &model {
            let wraps = m.tensors.iter().any(|t| {
                t.dims.len() == 3
                    && t.dims
                        .iter()
                        .try_fold(1u64, |a, &d| a.checked_mul(d))
                        .is_none()
            });
            if wraps {
                reached.entry(goals[2]).or_insert(e.round);
            }
        }
        match gguf::parse(&out, Mode::Spec) {
            Err(err) => note(&mut classes, err.class().id()),
            Ok(g) => {
                let big_array = g.kvs.iter().any(|kv| {
                    matches!(&kv.value, Value::Array(a) if a.count > 1000 && a.elem == gguf::ValueType::String)
                });
                if big_array {
                    reached.entry(goals[0]).or_insert(e.round);
                }
                let eof = g
                    .tensors
                    .iter()
                    .any(|t| t.nbytes > 0 && t.abs_offset + t.nbytes == out.len() as u64);
                if g.alignment == 128 && eof {
                    reached.entry(goals[1]).or_insert(e.round);
                }
                if g.kvs.iter().any(|kv| kv.key.len() == 256) {
                    reached.entry(goals[3]).or_insert(e.round);
                }
            }
        }
    }
    assert_goals(&goals, &reached, e.round);
    let rules = [
        "gguf.string_length",
        "gguf.array_length",
        "gguf.value_type",
        "gguf.key_duplicate",
        "gguf.alignment_value",
        "gguf.tensor_dim",
        "gguf.tensor_n_dims",
        "gguf.tensor_type",
        "gguf.tensor_name_length",
        "gguf.tensor_name_duplicate",
        "gguf.tensor_element_overflow",
        "gguf.tensor_offset_alignment",
        "gguf.tensor_out_of_bounds",
        "gguf.version",
    ];
    assert_rules(&rules, &classes);
    eprintln!("gguf goals (round first reached): {reached:?}\nrefusals: {classes:?}");
}

#[test]
fn ninfer_mutations_reach_255_byte_names_huge_resources_and_tall_ptq1_tensors() {
    let mut e = Evolve::new(Container::Ninfer, "ninfer_parse");
    let mut reached: BTreeMap<&str, usize> = BTreeMap::new();
    let mut classes = BTreeMap::new();
    let goals = [
        "accepted object name of exactly 255 bytes",
        "resource bytes within 7 of 2^64",
        "accepted PTQ1_0 row-split tensor with at least 5 rows",
    ];
    while e.round < MIN_ROUNDS || (e.round < MAX_ROUNDS && reached.len() < goals.len()) {
        let Some(out) = e.next(32768) else { continue };
        if let Some(m) = Model::parse(&out) {
            let huge = m.dir["objects"].as_array().is_some_and(|objs| {
                objs.iter().any(|o| {
                    o["kind"] == "resource" && o["bytes"].as_u64().is_some_and(|b| b > u64::MAX - 7)
                })
            });
            if huge {
                reached.entry(goals[1]).or_insert(e.round);
            }
        }
        match Artifact::parse(&out) {
            Err(err) => note(&mut classes, err.class().id()),
            Ok(a) => {
                for o in &a.directory.objects {
                    if o.name.len() == 255 {
                        reached.entry(goals[0]).or_insert(e.round);
                    }
                    let tall = o.shape().first().is_some_and(|&n| n >= 5);
                    let ptq1 = o.format_layout() == Some(("PTQ1_0_G128", "row-split-k128-v1"));
                    if tall && ptq1 {
                        reached.entry(goals[2]).or_insert(e.round);
                    }
                }
            }
        }
    }
    assert_goals(&goals, &reached, e.round);
    let rules = [
        "ninfer.json_syntax",
        "ninfer.dir_name",
        "ninfer.dir_duplicate_name",
        "ninfer.dir_shape",
        "ninfer.dir_format",
        "ninfer.dir_layout",
        "ninfer.range_bounds",
        "ninfer.range_alignment",
        "ninfer.truncated",
    ];
    assert_rules(&rules, &classes);
    eprintln!("ninfer goals (round first reached): {reached:?}\nrefusals: {classes:?}");
}
