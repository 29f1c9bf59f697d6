//! The run summary of one pack: what was borrowed from the template per namespace (an
//! unknown namespace flagged as such), what `--skip` / `--minimal` left out, how many template
//! objects the GGUF does not hold, and the metadata keys it lacks that no output byte needs.

use std::collections::BTreeMap;

/// Counts of one pack, filled while planning.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PackSummary {
    /// Borrowed objects per namespace: (objects, bytes).
    pub borrowed: BTreeMap<String, (u64, u64)>,
    /// Borrowed namespaces that spec/mapping.json does not name (borrowed all the same).
    pub unknown_namespaces: Vec<String>,
    /// Template objects left out per namespace by `--skip` or `--minimal`.
    pub skipped: BTreeMap<String, u64>,
    /// Objects produced from the GGUF.
    pub produced: u64,
    /// Template objects of layers (or globals) the GGUF does not hold.
    pub not_held: u64,
    /// Produced objects the GGUF could make, left out by `--layers` or `--minimal`.
    pub not_selected: u64,
    /// The one layer of `--minimal`.
    pub minimal_layer: Option<u64>,
    /// Metadata keys the GGUF lacks that no output byte depends on.
    pub absent_keys: Vec<String>,
}

impl PackSummary {
    /// Counts one borrowed object of namespace `ns`.
    pub fn count_borrowed(&mut self, ns: &str, bytes: u64) {
        let e = self.borrowed.entry(ns.to_string()).or_default();
        e.0 += 1;
        e.1 += bytes;
        let known = crate::spec::mapping()
            .borrowed_namespaces
            .iter()
            .chain(&crate::spec::mapping().borrowed_in_produced)
            .any(|b| namespace_of_prefix(&b.prefix) == ns);
        if !known && !self.unknown_namespaces.iter().any(|u| u == ns) {
            self.unknown_namespaces.push(ns.to_string());
        }
    }

    /// Counts one object of namespace `ns` left out by a filter.
    pub fn count_skipped(&mut self, ns: &str) {
        *self.skipped.entry(ns.to_string()).or_default() += 1;
    }

    /// The summary as lines for a terminal (names escaped by the caller's printer).
    pub fn lines(&self) -> Vec<String> {
        let list = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let borrowed: BTreeMap<String, u64> = self
            .borrowed
            .iter()
            .map(|(k, v)| (k.clone(), v.0))
            .collect();
        let mut out = vec![format!(
            "produced {} objects; borrowed from the template: {}",
            self.produced,
            if borrowed.is_empty() {
                "none".into()
            } else {
                list(&borrowed)
            }
        )];
        if !self.unknown_namespaces.is_empty() {
            out.push(format!(
                "borrowed namespaces spec/mapping.json does not name (copied verbatim): {}",
                self.unknown_namespaces.join(", ")
            ));
        }
        if !self.skipped.is_empty() {
            out.push(format!("skipped (filters): {}", list(&self.skipped)));
        }
        if let Some(l) = self.minimal_layer {
            out.push(format!(
                "minimal artifact: frontend, sign table and layer {l}"
            ));
        }
        if self.not_held + self.not_selected > 0 {
            out.push(format!(
                "left out: {} template objects the GGUF does not hold, {} not selected (--layers, --minimal)",
                self.not_held, self.not_selected
            ));
        }
        if !self.absent_keys.is_empty() {
            out.push(format!(
                "metadata absent, not needed (geometry from the profile, template and tensor shapes): {}",
                self.absent_keys.join(", ")
            ));
        }
        out
    }
}

/// `vision/` → `vision`, `text/draft_head` → `text`.
fn namespace_of_prefix(prefix: &str) -> &str {
    prefix.split('/').next().unwrap_or(prefix)
}
