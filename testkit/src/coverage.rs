//! Spec-rule coverage of a fuzz corpus: which error classes of spec/errors.json (one per
//! rule) the inputs of a target reach, and which rules of the target's domain none of them
//! reaches, so seeds and mutators can be aimed at the rest. `fuzz/coverage.sh` prints it for
//! the corpora a campaign grew (fuzz/corpus/) plus the committed seeds.
//!
//! libFuzzer's own line coverage (`-print_coverage`) needs a sanitizer runtime's symbolizer,
//! which the stable, sanitizer-free build (`-s none`) does not link; the `cov:`/`ft:` counts
//! of `fuzz/run.sh` give the edge totals.

use std::collections::BTreeMap;

use ninfer_ternary::gguf::{self, Mode};
use ninfer_ternary::ninfer::Artifact;

/// The error-class prefixes of the rules a target's input path can break.
pub fn domain_prefixes(target: &str) -> &'static [&'static str] {
    match target {
        "gguf_parse" | "gguf_structured" => &["gguf."],
        "ninfer_parse" | "ninfer_roundtrip" => &["ninfer."],
        "dumps_parse" => &["dump."],
        "codec_fast_vs_ref" => &["codec."],
        "pack_nano" => &["pack.", "gguf."],
        _ => &[],
    }
}

/// Every rule (class id) of the target's domain, from spec/errors.json.
pub fn domain(target: &str) -> Vec<String> {
    let prefixes = domain_prefixes(target);
    ninfer_ternary::spec::get()
        .errors
        .classes
        .iter()
        .map(|c| c.id.clone())
        .filter(|id| prefixes.iter().any(|p| id.starts_with(p)))
        .collect()
}

/// The classes the target's parsers refuse `input` with (none when it is accepted).
pub fn rules_reached(target: &str, input: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    match target {
        "gguf_parse" | "gguf_structured" => {
            for mode in [Mode::Spec, Mode::Strict] {
                if let Err(e) = gguf::parse(input, mode) {
                    out.push(e.class().id().to_string());
                }
            }
        }
        "ninfer_parse" | "ninfer_roundtrip" => match Artifact::parse(input) {
            Err(e) => out.push(e.class().id().to_string()),
            Ok(a) => {
                for o in &a.directory.objects {
                    if let Err(e) = a.view_object(o) {
                        out.push(e.class().id().to_string());
                    }
                }
            }
        },
        "dumps_parse" => {
            use ninfer_ternary::verify::{dump_bundle, dumps, engine_dump};
            let files = dump_bundle::decode(input);
            if let Ok(m) = dumps::parse_oracle_manifest(&files) {
                for c in &m.cases {
                    if let Err(e) = dumps::parse_oracle_arrays(&files, c) {
                        out.push(e.class().id().to_string());
                    }
                }
            } else if let Err(e) = dumps::parse_oracle_manifest(&files) {
                out.push(e.class().id().to_string());
            }
            if let Some(b) = files.get("embedding.bin") {
                if let Err(e) = engine_dump::parse(b) {
                    out.push(e.class().id().to_string());
                }
            }
        }
        "pack_nano" => {
            if let Some(e) = crate::deep::pack_error(input) {
                out.push(e.class().id().to_string());
            }
        }
        "codec_fast_vs_ref" => {
            if let Some(e) = crate::deep::codec_error(input) {
                out.push(e.class().id().to_string());
            }
        }
        _ => {}
    }
    out.sort();
    out.dedup();
    out
}

/// Coverage of one target over `inputs`: accepted count, class → inputs reaching it, and the
/// domain's rules none reached.
pub struct Report {
    /// The target.
    pub target: String,
    /// Inputs replayed.
    pub inputs: usize,
    /// Inputs every parser accepted.
    pub accepted: usize,
    /// Rule (class id) → how many inputs were refused by it.
    pub reached: BTreeMap<String, usize>,
    /// Rules of the domain no input reached.
    pub never: Vec<String>,
}

/// The report of `target` over `inputs`.
pub fn report<'a>(target: &str, inputs: impl IntoIterator<Item = &'a [u8]>) -> Report {
    let mut r = Report {
        target: target.into(),
        inputs: 0,
        accepted: 0,
        reached: BTreeMap::new(),
        never: Vec::new(),
    };
    for input in inputs {
        r.inputs += 1;
        let classes = rules_reached(target, input);
        if classes.is_empty() {
            r.accepted += 1;
        }
        for c in classes {
            *r.reached.entry(c).or_default() += 1;
        }
    }
    r.never = domain(target)
        .into_iter()
        .filter(|c| !r.reached.contains_key(c))
        .collect();
    r
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.reached.len() + self.never.len();
        writeln!(
            f,
            "{}: {} inputs, {} accepted, {}/{} domain rules reached",
            self.target,
            self.inputs,
            self.accepted,
            total - self.never.len(),
            total
        )?;
        let reached: Vec<String> = self
            .reached
            .iter()
            .map(|(c, n)| format!("{c} ({n})"))
            .collect();
        writeln!(f, "  reached: {}", reached.join(", "))?;
        writeln!(f, "  never reached: {}", self.never.join(", "))
    }
}
