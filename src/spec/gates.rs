//! Typed views of `spec/gates.json` (the verifier's gates, thresholds, negative controls,
//! audits and mutation kinds) and `spec/dumps.json` (dump file formats).

use super::Dim;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    #[serde(rename = "_doc")]
    pub doc: String,
    pub steps: Vec<StepSpec>,
    pub thresholds: Thresholds,
    pub payload_order: PayloadOrderSpec,
    pub row_order: RowOrderSpec,
    pub assembly: AssemblySpec,
    pub signs: SignsSpec,
    pub embedding: EmbeddingSpec,
    pub engine_oracles: OraclesSpec,
    pub mutations: Vec<MutationSpec>,
    #[serde(rename = "_mutations_note")]
    pub mutations_note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub step: super::GateStep,
    pub title: String,
    pub needs: Option<String>,
    /// What opens the gate when it SKIPs.
    pub skip_names: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    pub pq2_zero_share_target: f64,
    pub pq2_zero_share_tolerance: f64,
    pub pq2_zero_share_sigmas: f64,
    #[serde(rename = "_zero_share_why")]
    pub zero_share_why: String,
    pub scale_median_open_interval: (f64, f64),
    pub embedding_rel_l2_max: f64,
    pub embedding_max_tokens: usize,
    pub embedding_min_tokens: usize,
    #[serde(rename = "_embedding_why")]
    pub embedding_why: String,
    pub oracle_documented_rel_l2_max: f64,
    pub oracle_wrong_rel_l2_min: f64,
    #[serde(rename = "_oracle_why")]
    pub oracle_why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayloadOrderSpec {
    pub object: String,
    #[serde(rename = "_object_why")]
    pub object_why: String,
    pub zero_share_sample: String,
    pub negative_controls: Vec<PayloadControl>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayloadControl {
    pub name: String,
    pub formats: Vec<String>,
    pub read_at: String,
}

/// A row range of an artifact object and the source rows a rule names for it.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RowSection {
    pub name: String,
    pub object: String,
    /// Assembly audits only: which layer `{l}` is (null = global).
    #[serde(default)]
    pub layer: Option<String>,
    pub rows: [Dim; 2],
    pub source: String,
    pub source_start: Dim,
    /// How the section's rows are gathered from the source.
    pub order: super::RowOrder,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnionSpec {
    pub name: String,
    pub source: String,
    pub rows: Dim,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowOrderSpec {
    pub gdn_layer: String,
    pub attention_layer: String,
    pub gdn_sections: Vec<RowSection>,
    pub attention_sections: Vec<RowSection>,
    pub attention_union: UnionSpec,
    pub statements: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssemblySpec {
    pub audits: Vec<RowSection>,
    pub control_audit: String,
    #[serde(rename = "_control_audit_why")]
    pub control_audit_why: String,
    pub counting: String,
    pub negative_controls: Vec<CountControl>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountControl {
    pub name: String,
    /// Count name -> expected value (a number or a symbol: `n`, `perm48_missing`).
    pub expect: BTreeMap<String, Dim>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignsSpec {
    pub artifact_signs: String,
    pub artifact_widths: String,
    pub gguf_signs: String,
    pub gguf_widths: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedDoc {
    pub name: String,
    pub doc: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingSpec {
    pub object: String,
    pub negative_controls: Vec<NamedDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrongVariant {
    pub name: String,
    pub applies: Vec<String>,
    pub doc: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OraclesSpec {
    pub wrong_variants: Vec<WrongVariant>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct MutationSpec {
    pub kind: super::MutationKind,
    /// `artifact` or `dumps`.
    pub target: super::MutationTarget,
    pub object: Option<String>,
    pub doc: String,
    pub must_fail: Vec<super::GateStep>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumps {
    #[serde(rename = "_doc")]
    pub doc: String,
    pub format_version: u32,
    pub dtype: String,
    pub layout: String,
    pub embedding: EmbeddingDumpSpec,
    pub kernel_oracles: OracleDumpSpec,
    pub harness: HarnessDumpSpec,
}

/// The engine tooling's manifest-less rotation-harness and gemm-oracle directories.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessDumpSpec {
    #[serde(rename = "_evidence")]
    pub evidence: String,
    pub lcg: HarnessLcg,
    pub rotation_cases: Vec<HarnessCase>,
    pub gemm: HarnessGemm,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessLcg {
    pub multiplier: u32,
    pub increment: u32,
    pub value: String,
    pub sign: String,
    pub signs_seed_xor: u32,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct HarnessCase {
    pub name: String,
    pub k: usize,
    pub tokens: usize,
    /// (head_dim, key heads, repeats) of the kernel's P; repeats <= 1 = no permutation.
    pub perm: [usize; 3],
    pub inverse: bool,
    pub seed: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessGemm {
    pub y_file: String,
    pub x_file: String,
    pub signs_file: String,
    pub payload_file: String,
    pub x_seed: u32,
    pub tokens: usize,
    pub gemm_object: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingDumpSpec {
    pub manifest: String,
    pub manifest_fields: BTreeMap<String, String>,
    pub default_files: BTreeMap<String, String>,
    pub default_tokens: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleDumpSpec {
    pub manifest: String,
    pub manifest_fields: BTreeMap<String, String>,
    pub case_fields: BTreeMap<String, String>,
    pub required_cases: Vec<RequiredCase>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RequiredCase {
    pub name: String,
    pub rotation: String,
    pub width: String,
    pub tokens: usize,
    pub object: String,
}

/// `spec/gates.json`, parsed once.
pub fn gates() -> &'static Gates {
    static G: std::sync::OnceLock<Gates> = std::sync::OnceLock::new();
    G.get_or_init(|| super::parse_text("gates.json", include_str!("../../spec/gates.json")))
}

/// `spec/dumps.json`, parsed once.
pub fn dumps() -> &'static Dumps {
    static D: std::sync::OnceLock<Dumps> = std::sync::OnceLock::new();
    D.get_or_init(|| super::parse_text("dumps.json", include_str!("../../spec/dumps.json")))
}

impl Gates {
    pub fn step(&self, key: &str) -> &StepSpec {
        self.steps
            .iter()
            .find(|s| s.step.as_str() == key)
            .unwrap_or_else(|| panic!("spec/gates.json has no step '{key}'"))
    }
    pub fn mutation(&self, kind: &str) -> Option<&MutationSpec> {
        self.mutations.iter().find(|m| m.kind.as_str() == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_and_dumps_parse_and_name_known_steps() {
        let g = gates();
        let keys: Vec<&str> = g.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(
            keys,
            [
                "provenance",
                "inspect",
                "payload_order",
                "row_order",
                "row_order_sweep",
                "assembly",
                "signs",
                "dense_values",
                "embedding",
                "engine_oracles"
            ]
        );
        assert_eq!(g.assembly.audits.len(), 17);
        assert_eq!(g.assembly.negative_controls.len(), 4);
        for m in &g.mutations {
            assert!(!m.must_fail.is_empty(), "{}", m.kind);
            for s in &m.must_fail {
                assert!(keys.contains(&s.as_str()), "{}: {s}", m.kind);
            }
        }
        assert!(g
            .assembly
            .audits
            .iter()
            .any(|a| a.name == g.assembly.control_audit));
        let d = dumps();
        assert_eq!(d.kernel_oracles.required_cases.len(), 6);
    }
}
