//! Spec-rule coverage of the fuzz corpora (testkit/src/coverage.rs): which rules of
//! spec/errors.json each target's inputs reach. `report` (ignored; `fuzz/coverage.sh` runs it)
//! prints it for the corpora a campaign grew plus the committed seeds; the tests below pin
//! what the committed seeds alone must reach, so a seed regeneration that loses a rule fails.

use ninfer_ternary_testkit::{coverage, seeds, targets};

/// Every input of `target`: committed seeds, plus `fuzz/corpus/<target>/` when `with_corpus`.
fn inputs(target: &str, with_corpus: bool) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = seeds::for_target(target).into_values().collect();
    if with_corpus {
        let dir = crate::common::repo_root().join("fuzz/corpus").join(target);
        if let Ok(rd) = std::fs::read_dir(dir) {
            out.extend(rd.flatten().filter_map(|f| std::fs::read(f.path()).ok()));
        }
    }
    out
}

#[test]
#[ignore = "prints the coverage of fuzz/corpus + seeds; run by fuzz/coverage.sh"]
fn report() {
    for t in targets::TARGETS {
        let ins = inputs(t.name, true);
        let r = coverage::report(t.name, ins.iter().map(|v| v.as_slice()));
        println!("{r}");
    }
}

#[test]
fn committed_seeds_reach_every_gguf_and_ninfer_parse_rule() {
    for target in ["gguf_parse", "ninfer_parse"] {
        let ins = inputs(target, false);
        let r = coverage::report(target, ins.iter().map(|v| v.as_slice()));
        eprintln!("{r}");
        let phase = |id: &str| {
            ninfer_ternary::spec::get()
                .errors
                .classes
                .iter()
                .find(|c| c.id == id)
                .map(|c| c.phase.clone())
                .unwrap_or_default()
        };
        let missing: Vec<(String, String)> = r
            .never
            .iter()
            .map(|c| (c.clone(), phase(c)))
            .filter(|(_, p)| p == "parse")
            .collect();
        assert!(
            missing.is_empty(),
            "{target}: parse rules no committed seed reaches: {missing:?}"
        );
    }
}
