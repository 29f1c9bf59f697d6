//! Typed views of `spec/gates.json` (the verifier's gates, thresholds, negative controls,
//! audits and mutation kinds) and `spec/dumps.json` (dump file formats).

use super::Dim;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `spec/gates.json`: the verifier's gates as data (`spec/verifier.md#gates`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    /// What the table is, and the layer placeholders (`_doc`).
    #[serde(rename = "_doc")]
    pub doc: String,
    /// The gate steps, in report order.
    pub steps: Vec<StepSpec>,
    /// Numeric thresholds of the gates (`spec/verifier.md#thresholds`).
    pub thresholds: Thresholds,
    /// The payload_order gate (`spec/verifier.md#gate-payload-order`).
    pub payload_order: PayloadOrderSpec,
    /// The row_order gate (`spec/verifier.md#gate-row-order`).
    pub row_order: RowOrderSpec,
    /// The assembly gate (`spec/verifier.md#gate-assembly`).
    pub assembly: AssemblySpec,
    /// The signs gate (`spec/verifier.md#gate-signs`).
    pub signs: SignsSpec,
    /// The embedding gate (`spec/verifier.md#gate-embedding`).
    pub embedding: EmbeddingSpec,
    /// The engine_oracles gate (`spec/verifier.md#gate-engine-oracles`).
    pub engine_oracles: OraclesSpec,
    /// The mutation kinds and the gates each must fail (`spec/verifier.md#negative-controls`).
    pub mutations: Vec<MutationSpec>,
    /// What `must_fail` assumes (`_mutations_note`).
    #[serde(rename = "_mutations_note")]
    pub mutations_note: String,
}

/// One gate step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// The step's key.
    pub step: super::GateStep,
    /// What the gate checks, in words.
    pub title: String,
    /// The input it needs (a flag or metadata); `None`: always runs.
    pub needs: Option<String>,
    /// What opens the gate when it SKIPs.
    pub skip_names: Option<String>,
}

/// The gates' numeric thresholds (`spec/verifier.md#thresholds`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Expected share of code 1 in the PQ2_0 base-plane sample.
    pub pq2_zero_share_target: f64,
    /// The floor of the |share - target| tolerance (its full-scale value).
    pub pq2_zero_share_tolerance: f64,
    /// Binomial sigmas the tolerance grows to on small samples.
    pub pq2_zero_share_sigmas: f64,
    /// Why the tolerance is what it is (`_zero_share_why`).
    #[serde(rename = "_zero_share_why")]
    pub zero_share_why: String,
    /// Open interval the scale-plane f16 median must lie in.
    pub scale_median_open_interval: (f64, f64),
    /// Largest relative L2 error of the embedding gate.
    pub embedding_rel_l2_max: f64,
    /// Most dump tokens the embedding gate checks.
    pub embedding_max_tokens: usize,
    /// Fewest distinct tokens an embedding dump must hold.
    pub embedding_min_tokens: usize,
    /// Why (`_embedding_why`).
    #[serde(rename = "_embedding_why")]
    pub embedding_why: String,
    /// Largest relative L2 error of a documented rotation case.
    pub oracle_documented_rel_l2_max: f64,
    /// Smallest relative L2 error every wrong variant must reach.
    pub oracle_wrong_rel_l2_min: f64,
    /// Why (`_oracle_why`).
    #[serde(rename = "_oracle_why")]
    pub oracle_why: String,
}

/// The payload_order gate (`spec/verifier.md#gate-payload-order`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayloadOrderSpec {
    /// The object checked (layer placeholders unresolved).
    pub object: String,
    /// Why that object (`_object_why`).
    #[serde(rename = "_object_why")]
    pub object_why: String,
    /// Which bits form the PQ2_0 zero-share sample, in words.
    pub zero_share_sample: String,
    /// Wrong scale positions that must not look plausible.
    pub negative_controls: Vec<PayloadControl>,
}

/// A negative control of payload_order: scales read at a wrong offset.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayloadControl {
    /// Control name.
    pub name: String,
    /// Formats it applies to.
    pub formats: Vec<String>,
    /// Where the wrong reader looks for the scales, in words.
    pub read_at: String,
}

/// A row range of an artifact object and the source rows a rule names for it.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RowSection {
    /// The section's rule in words.
    pub name: String,
    /// Artifact object (layer placeholder `{l}`).
    pub object: String,
    /// Assembly audits only: which layer `{l}` is (null = global).
    #[serde(default)]
    pub layer: Option<String>,
    /// Artifact rows `[start, end)`.
    pub rows: [Dim; 2],
    /// GGUF source tensor (layer placeholder `{l}`).
    pub source: String,
    /// First source row the section reads.
    pub source_start: Dim,
    /// How the section's rows are gathered from the source.
    pub order: super::RowOrder,
}

/// A source tensor whose rows several sections together must use exactly once.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnionSpec {
    /// The rule in words.
    pub name: String,
    /// GGUF source tensor.
    pub source: String,
    /// Its row count.
    pub rows: Dim,
}

/// The row_order gate (`spec/verifier.md#gate-row-order`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowOrderSpec {
    /// Placeholder naming the GDN layer checked (`first_gdn`).
    pub gdn_layer: String,
    /// Placeholder naming the attention layer checked (`first_attention`).
    pub attention_layer: String,
    /// Sections checked on the GDN layer.
    pub gdn_sections: Vec<RowSection>,
    /// Sections checked on the attention layer.
    pub attention_sections: Vec<RowSection>,
    /// The attn_q every-row-once rule.
    pub attention_union: UnionSpec,
    /// The report's statements: rule holds, rows duplicated, rows missing.
    pub statements: Vec<String>,
}

/// The assembly gate (`spec/verifier.md#gate-assembly`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssemblySpec {
    /// The positional audits.
    pub audits: Vec<RowSection>,
    /// The audit the negative controls are run on.
    pub control_audit: String,
    /// Why that audit (`_control_audit_why`).
    #[serde(rename = "_control_audit_why")]
    pub control_audit_why: String,
    /// How order mismatches, repeated and missing rows are counted, in words.
    pub counting: String,
    /// Row mutations with the counts each must produce.
    pub negative_controls: Vec<CountControl>,
}

/// An assembly negative control and its expected counts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountControl {
    /// Control name.
    pub name: String,
    /// Count name -> expected value (a number or a symbol: `n`, `perm48_missing`).
    pub expect: BTreeMap<String, Dim>,
}

/// The objects and keys the signs gate compares (`spec/verifier.md#gate-signs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignsSpec {
    /// Artifact object holding the sign values.
    pub artifact_signs: String,
    /// Artifact object holding the sign widths.
    pub artifact_widths: String,
    /// GGUF key holding the sign values.
    pub gguf_signs: String,
    /// GGUF key holding the sign widths.
    pub gguf_widths: String,
}

/// A named negative control with its description.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedDoc {
    /// Control name.
    pub name: String,
    /// What it does and why it must fail.
    pub doc: String,
}

/// The embedding gate (`spec/verifier.md#gate-embedding`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingSpec {
    /// The embedding object.
    pub object: String,
    /// Wrong readings of the dump that must not match.
    pub negative_controls: Vec<NamedDoc>,
}

/// A wrong rotation the engine_oracles gate computes; it must not match the dump.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrongVariant {
    /// Variant name.
    pub name: String,
    /// Rotation kinds it applies to (`plain`, `perm`, `wide`, `inverse`).
    pub applies: Vec<String>,
    /// The wrong formula, in words.
    pub doc: String,
}

/// The engine_oracles gate (`spec/verifier.md#gate-engine-oracles`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OraclesSpec {
    /// The wrong variants every case is also compared with.
    pub wrong_variants: Vec<WrongVariant>,
}

/// One mutation kind of `mutate` and the gates it must fail.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct MutationSpec {
    /// The kind (`--kind`).
    pub kind: super::MutationKind,
    /// `artifact` or `dumps`.
    pub target: super::MutationTarget,
    /// The object it changes (layer placeholders unresolved); `None`: not one object.
    pub object: Option<String>,
    /// What it changes, in words.
    pub doc: String,
    /// Exactly the gates that must fail on it.
    pub must_fail: Vec<super::GateStep>,
}

/// `spec/dumps.json`: the activation and kernel dump formats (`spec/dumps.md#dumps`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumps {
    /// The formats and their evidence, in words (`_doc`).
    #[serde(rename = "_doc")]
    pub doc: String,
    /// The manifests' `format_version`.
    pub format_version: u32,
    /// Element type of the arrays (`f32`).
    pub dtype: String,
    /// Activation layout (`token-major`; `spec/dumps.md#activation-layout`).
    pub layout: String,
    /// The embedding dump.
    pub embedding: EmbeddingDumpSpec,
    /// The kernel oracle dumps.
    pub kernel_oracles: OracleDumpSpec,
    /// The engine tooling's harness directories (`spec/dumps.md#harness-dumps`).
    pub harness: HarnessDumpSpec,
}

/// The engine tooling's manifest-less rotation-harness and gemm-oracle directories.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessDumpSpec {
    /// Where the conventions were read, and what is unconfirmed (`_evidence`).
    #[serde(rename = "_evidence")]
    pub evidence: String,
    /// The harness's input generator.
    pub lcg: HarnessLcg,
    /// The rotation harness's cases.
    pub rotation_cases: Vec<HarnessCase>,
    /// The gemm oracle directory.
    pub gemm: HarnessGemm,
}

/// The harness LCG: `state = state * multiplier + increment` (u32).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessLcg {
    /// LCG multiplier.
    pub multiplier: u32,
    /// LCG increment.
    pub increment: u32,
    /// How an input value is made from the state, in words.
    pub value: String,
    /// How a sign is made from the state, in words.
    pub sign: String,
    /// The signs stream starts from `seed ^ signs_seed_xor`.
    pub signs_seed_xor: u32,
}

/// One rotation-harness case.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct HarnessCase {
    /// Case name (the file prefix).
    pub name: String,
    /// Input width K.
    pub k: usize,
    /// Tokens T.
    pub tokens: usize,
    /// (head_dim, key heads, repeats) of the kernel's P; repeats <= 1 = no permutation.
    pub perm: [usize; 3],
    /// Whether it is the inverse rotation.
    pub inverse: bool,
    /// LCG seed of the input.
    pub seed: u32,
}

/// The gemm oracle directory's files and inputs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessGemm {
    /// File of the kernel's output y.
    pub y_file: String,
    /// File of the input x.
    pub x_file: String,
    /// File of the signs.
    pub signs_file: String,
    /// File of the object's payload.
    pub payload_file: String,
    /// LCG seed of x.
    pub x_seed: u32,
    /// Tokens T.
    pub tokens: usize,
    /// Default object the payload is taken from (`--oracle-object`).
    pub gemm_object: String,
}

/// The embedding dump directory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingDumpSpec {
    /// Manifest file name.
    pub manifest: String,
    /// Manifest member -> what it holds.
    pub manifest_fields: BTreeMap<String, String>,
    /// File member -> the name `dump-reference` writes.
    pub default_files: BTreeMap<String, String>,
    /// Tokens `dump-reference` writes.
    pub default_tokens: usize,
}

/// The kernel oracle dump directory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleDumpSpec {
    /// Manifest file name.
    pub manifest: String,
    /// Manifest member -> what it holds.
    pub manifest_fields: BTreeMap<String, String>,
    /// Case member -> what it holds.
    pub case_fields: BTreeMap<String, String>,
    /// The cases a dump must hold.
    pub required_cases: Vec<RequiredCase>,
}

/// One kernel oracle case a dump must hold.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RequiredCase {
    /// Case name.
    pub name: String,
    /// Rotation kind (`plain`, `perm`, `wide`, `inverse`).
    pub rotation: String,
    /// Profile dimension name of its input width K.
    pub width: String,
    /// Tokens T.
    pub tokens: usize,
    /// Artifact object (layer placeholders unresolved).
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
    /// The step with key `key`, if the table has one.
    pub fn step(&self, key: &str) -> Option<&StepSpec> {
        self.steps.iter().find(|s| s.step.as_str() == key)
    }
    /// The mutation of kind `kind`, if the table has one.
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
