//! The reference reader's mutation score (#35 item 2) cannot go stale: `scripts/reader_mutants.py
//! --record conformance/mutation-score.json --splice conformance/INTEROP.md` (a full run, about
//! 10 minutes on two loaded cores, too slow for every `cargo test`) writes the measurement; this test checks that it
//! was taken on today's `reader.py` and corpus, that every survivor is argued equivalent in
//! `scripts/reader_mutants_equivalent.txt`, and that INTEROP.md's score block is exactly the
//! block the measurement renders.

use crate::common::sha256_hex;
use serde_json::Value;

use crate::common::repo_root;

const REMEASURE: &str = "re-measure: .venv/bin/python scripts/reader_mutants.py --record \
     conformance/mutation-score.json --splice conformance/INTEROP.md";

/// The inputs the check reads, so a test can hand it tampered ones.
struct Inputs {
    record: Value,
    reader: String,
    manifest: Value,
    equivalent: String,
    interop: String,
}

fn inputs() -> Inputs {
    let root = repo_root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    Inputs {
        record: serde_json::from_str(&read("conformance/mutation-score.json")).unwrap(),
        reader: read("conformance/adapters/py_ninfer/reader.py"),
        manifest: serde_json::from_str(&read("conformance/MANIFEST.json")).unwrap(),
        equivalent: read("scripts/reader_mutants_equivalent.txt"),
        interop: read("conformance/INTEROP.md"),
    }
}

/// sha256 of every case's "id sha256" line, sorted (the script's `corpus_digest`).
fn corpus_digest(manifest: &Value) -> String {
    let mut lines: Vec<String> = manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}\n",
                c["id"].as_str().unwrap(),
                c["sha256"].as_str().unwrap()
            )
        })
        .collect();
    lines.sort();
    sha256_hex(lines.concat().as_bytes())
}

/// The INTEROP.md block of a record (the script's `render_block`, written independently).
fn render_block(rec: &Value) -> String {
    let n = |k: &str| rec[k].as_u64().unwrap();
    let s = |v: &Value, k: &str| v[k].as_str().unwrap().to_string();
    let (run, killed) = (n("run"), n("killed"));
    let eq = rec["equivalent"].as_array().unwrap();
    let surv = rec["survivors"].as_array().unwrap();
    let unexplained = run - killed - eq.len() as u64;
    let judged = (run - eq.len() as u64).max(1);
    let mut md = vec![
        format!(
            "Mutants: {run} of {} sites (`reader.py` sha256 `{}`, corpus digest `{}`): {killed} \
             killed, {} equivalent, {unexplained} unexplained; **mutation score {killed}/{} = \
             {:.1} %** of the non-equivalent mutants ({:.1} % of all). Measured in {} s.",
            n("sites"),
            &s(rec, "reader_sha256")[..16],
            &s(rec, "corpus_sha256")[..16],
            eq.len(),
            run - eq.len() as u64,
            100.0 * killed as f64 / judged as f64,
            100.0 * killed as f64 / run.max(1) as f64,
            n("seconds"),
        ),
        String::new(),
        "| equivalent | line | function | mutation | why |".into(),
        "|---:|---:|---|---|---|".into(),
    ];
    for (i, r) in eq.iter().enumerate() {
        md.push(format!(
            "| {} | {} | `{}` | `{}` | {} |",
            i + 1,
            r["line"],
            s(r, "function"),
            s(r, "mutation"),
            s(r, "why")
        ));
    }
    if !surv.is_empty() {
        md.push(String::new());
        md.push("| unexplained survivor | line | function | mutation |".into());
        md.push("|---:|---:|---|---|".into());
        for (i, r) in surv.iter().enumerate() {
            md.push(format!(
                "| {} | {} | `{}` | `{}` |",
                i + 1,
                r["line"],
                s(r, "function"),
                s(r, "mutation")
            ));
        }
    }
    md.join("\n")
}

/// Everything wrong with the recorded measurement (empty: current, complete and quoted).
fn problems(x: &Inputs) -> Vec<String> {
    let rec = &x.record;
    let mut out = Vec::new();
    if rec["reader_sha256"].as_str() != Some(sha256_hex(x.reader.as_bytes()).as_str()) {
        out.push(format!(
            "reader.py changed since the measurement; {REMEASURE}"
        ));
    }
    if rec["corpus_sha256"].as_str() != Some(corpus_digest(&x.manifest).as_str()) {
        out.push(format!(
            "the corpus changed since the measurement; {REMEASURE}"
        ));
    }
    let (sites, run, killed) = (
        rec["sites"].as_u64().unwrap(),
        rec["run"].as_u64().unwrap(),
        rec["killed"].as_u64().unwrap(),
    );
    let eq = rec["equivalent"].as_array().unwrap();
    if run != sites {
        out.push(format!("only {run} of {sites} mutants were run"));
    }
    if let Some(s) = rec["survivors"].as_array().filter(|s| !s.is_empty()) {
        out.push(format!("{} unexplained survivors: {s:?}", s.len()));
    }
    if killed + eq.len() as u64 != run {
        out.push(format!(
            "{killed} killed + {} equivalent != {run} run",
            eq.len()
        ));
    }
    // Each equivalent mutant is argued in the checked-in list, at the source line it mutates.
    let lines: Vec<&str> = x.reader.lines().collect();
    for r in eq {
        let line = r["line"].as_u64().unwrap() as usize;
        let src = lines.get(line.wrapping_sub(1)).map_or("", |l| l.trim());
        let entry = format!(
            "{} | {} | {src} | {}",
            r["function"].as_str().unwrap(),
            r["mutation"].as_str().unwrap(),
            r["why"].as_str().unwrap()
        );
        if !x.equivalent.lines().any(|l| l.trim() == entry) {
            out.push(format!(
                "not argued in reader_mutants_equivalent.txt: {entry}"
            ));
        }
    }
    let (b, e) = (
        "<!-- BEGIN mutation-score -->\n",
        "\n<!-- END mutation-score -->",
    );
    match x.interop.split_once(b).and_then(|(_, r)| r.split_once(e)) {
        None => out.push("INTEROP.md has no mutation-score block".into()),
        Some((block, _)) if block != render_block(rec) => out.push(format!(
            "INTEROP.md's mutation-score block is not what the measurement renders; {REMEASURE}"
        )),
        Some(_) => {}
    }
    out
}

#[test]
fn the_recorded_mutation_score_is_current_complete_and_quoted_in_interop() {
    let bad = problems(&inputs());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Negative controls: each kind of staleness or gap is caught on its own.
#[test]
fn a_stale_or_incomplete_measurement_is_caught() {
    let count = |f: &dyn Fn(&mut Inputs)| {
        let mut x = inputs();
        f(&mut x);
        problems(&x)
    };
    assert_eq!(count(&|_| {}), Vec::<String>::new());
    // A changed reader, a changed corpus case.
    assert_eq!(count(&|x| x.reader.push_str("\n# edited\n")).len(), 1);
    assert_eq!(
        count(&|x| x.manifest["cases"][0]["sha256"] = "00".into()).len(),
        1
    );
    // A survivor nobody argued: counted and shown, and the quoted block no longer matches.
    let surv = count(&|x| {
        x.record["survivors"] =
            serde_json::json!([{"line": 1, "function": "f", "mutation": "< -> <="}])
    });
    assert!(surv.iter().any(|p| p.contains("1 unexplained")), "{surv:?}");
    assert!(surv.iter().any(|p| p.contains("block")), "{surv:?}");
    // An equivalence argument removed from the list.
    assert_eq!(
        count(&|x| x.equivalent = x
            .equivalent
            .replacen("| nb is read only", "| nb is unused", 1))
        .len(),
        1
    );
    // INTEROP.md edited by hand.
    assert_eq!(
        count(&|x| x.interop = x.interop.replacen("killed,", "killed (edited),", 1)).len(),
        1
    );
}
