//! Typed views of `spec/models/*.json` (model profiles) and `spec/mapping.json` (the rules).

use serde::Deserialize;
use std::collections::BTreeMap;

/// A model profile: the dimensions every generator, the packer and the verifier use.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ModelProfile {
    #[serde(rename = "_doc")]
    /// What the profile stands for.
    pub doc: String,
    /// The profile name (file stem).
    pub name: String,
    /// `general.architecture`.
    pub arch: String,
    /// Every this-many-th layer is full attention.
    pub full_attention_interval: u64,
    /// GDN convolution taps.
    pub conv_kernel: u64,
    /// GDN key heads.
    pub k_heads: u64,
    /// GDN value heads.
    pub v_heads: u64,
    /// Value heads per key head.
    pub v_tile: u64,
    /// Attention query heads.
    pub q_heads: u64,
    /// Attention key/value heads.
    pub kv_heads: u64,
    /// RMSNorm epsilon.
    pub rms_eps: f32,
    /// RoPE base frequency.
    pub rope_freq_base: f32,
    /// M-RoPE sections.
    pub rope_sections: Vec<i32>,
    /// Layers of the full model.
    pub n_layers: u64,
    /// Hidden width.
    pub hidden: u64,
    /// MLP width.
    pub ffn: u64,
    /// Vocabulary rows.
    pub vocab: u64,
    /// Attention head width.
    pub head_dim: u64,
    /// GDN key head width.
    pub head_k_dim: u64,
    /// GDN value head width.
    pub head_v_dim: u64,
    /// Hadamard block size (`prism.hadamard.block_size`).
    pub hadamard_block: u64,
    /// Training context length.
    pub context_length: u64,
    /// Rotary dimensions.
    pub rope_dims: u64,
    /// The synthetic template's shape.
    pub template: TemplateProfile,
    /// Named derived dimensions (row counts).
    pub derived: BTreeMap<String, u64>,
    /// Folded input widths, in `sign_widths` order.
    pub sign_widths: Vec<u64>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
/// The synthetic groupwise-int template's extra objects.
pub struct TemplateProfile {
    /// The template's model id.
    pub model_id: String,
    /// Frontend resource objects.
    pub frontend_resources: u64,
    /// Vision objects.
    pub vision_objects: u64,
    /// MTP objects.
    pub mtp_objects: u64,
    /// Rows of the draft head.
    pub draft_head_rows: u64,
    /// Width of the vision objects.
    pub vision_width: u64,
    /// `dflash2/*` objects of the template made with `synth-template --with dflash2`.
    pub dflash2_objects: u64,
}

/// Which layers a rule or tensor applies to.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LayerSet {
    /// Once per model.
    Global,
    /// Every layer.
    All,
    /// GDN (linear attention) layers.
    Gdn,
    /// Full-attention layers.
    Attention,
}

impl ModelProfile {
    /// Full attention iff (l + 1) % interval == 0.
    pub fn is_attention_layer(&self, l: u64) -> bool {
        (l + 1) % self.full_attention_interval == 0
    }

    /// The layers of `set`, ascending.
    pub fn layers_in(&self, set: LayerSet) -> Vec<u64> {
        (0..self.n_layers)
            .filter(|&l| match set {
                LayerSet::Global => false,
                LayerSet::All => true,
                LayerSet::Gdn => !self.is_attention_layer(l),
                LayerSet::Attention => self.is_attention_layer(l),
            })
            .collect()
    }

    /// Resolves a dimension name (top-level number or `derived` entry) or a literal.
    pub fn dim(&self, d: &Dim) -> Option<u64> {
        match d {
            Dim::Num(n) => Some(*n),
            Dim::Name(s) => self.derived.get(s).copied().or_else(|| match s.as_str() {
                "hidden" => Some(self.hidden),
                "ffn" => Some(self.ffn),
                "vocab" => Some(self.vocab),
                "head_dim" => Some(self.head_dim),
                "head_k_dim" => Some(self.head_k_dim),
                "head_v_dim" => Some(self.head_v_dim),
                "conv_kernel" => Some(self.conv_kernel),
                "v_heads" => Some(self.v_heads),
                "k_heads" => Some(self.k_heads),
                "q_heads" => Some(self.q_heads),
                "kv_heads" => Some(self.kv_heads),
                "full_attention_interval" => Some(self.full_attention_interval),
                "sign_total" => Some(self.sign_widths.iter().sum()),
                "sign_width_count" => Some(self.sign_widths.len() as u64),
                _ => None,
            }),
        }
    }

    /// Resolves every dimension; panics on a name the profile lacks (table defect, caught by tests).
    pub fn dims(&self, ds: &[Dim]) -> Vec<u64> {
        ds.iter()
            .map(|d| {
                // cannot fire: the profiles and the mapping are compiled in, and the spec test
                // `mapping_parses_and_every_rule_names_known_dims_and_sources` resolves every
                // shape of every rule against them.
                #[allow(clippy::panic)]
                let v = self
                    .dim(d)
                    .unwrap_or_else(|| panic!("profile {} lacks dimension {d:?}", self.name));
                v
            })
            .collect()
    }

    /// The head tiling of the value-head axis (3 x 16 for Bonsai).
    pub fn v_tiling(&self) -> super::HeadTiling {
        super::HeadTiling {
            tile: self.v_tile as usize,
            group: self.k_heads as usize,
        }
    }
}

/// A dimension: a name from the profile or a literal number.
#[derive(Debug, Deserialize, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum Dim {
    /// A literal number.
    Num(u64),
    /// A profile dimension name.
    Name(String),
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Num(n) => write!(f, "{n}"),
            Dim::Name(s) => f.write_str(s),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
/// `spec/mapping.json`: the GGUF -> ninfer mapping rules.
pub struct Mapping {
    #[serde(rename = "_source")]
    /// Where the rules come from.
    pub source: String,
    #[serde(rename = "_doc")]
    /// How to read the table.
    pub doc: String,
    /// GGUF type id -> ninfer ternary format.
    pub ternary_types: BTreeMap<String, String>,
    /// Template and output weights ids.
    pub weights_id: WeightsIds,
    /// Section order of the template's objects.
    pub template_order: Vec<String>,
    /// Why that order is unconfirmed.
    pub template_order_note: String,
    /// Name prefixes of the namespaces rules produce (`text/`); everything outside is borrowed.
    pub produced_namespaces: Vec<String>,
    /// The borrowed namespaces known by name, each with why it is borrowed.
    pub borrowed_namespaces: Vec<BorrowedPrefix>,
    /// How unknown namespaces are treated.
    pub borrowed_namespaces_note: String,
    /// Prefixes inside a produced namespace that are borrowed all the same (`text/draft_head`).
    pub borrowed_in_produced: Vec<BorrowedPrefix>,
    /// Object order within a layer.
    pub layer_object_order: Vec<String>,
    /// One rule per produced object.
    pub rules: Vec<Rule>,
    /// The two sign objects appended.
    pub sign_objects: Vec<SignObject>,
    /// Every tensor the GGUF must hold.
    pub gguf_tensors: Vec<GgufTensorSpec>,
    /// Tensors inverse-rotated (`prism.hadamard.inverse_weight_names`).
    pub hadamard_inverse: Vec<String>,
    /// Why `profile_hparams` holds what it holds.
    pub profile_hparams_doc: String,
    /// GGUF hyper-parameters (`{arch}.<key>`) the profile fixes.
    pub profile_hparams: Vec<ProfileHparam>,
    /// Object and tensor counts of the 27B model.
    pub counts_27b: BTreeMap<String, u64>,
}

/// A name prefix the packer borrows from the template, with the reason.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct BorrowedPrefix {
    /// The object-name prefix (`vision/`).
    pub prefix: String,
    /// Why it is borrowed rather than produced.
    pub why: String,
}

/// One GGUF hyper-parameter a profile fixes: `{arch}.<key>` of GGUF type `type` equals `dim`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ProfileHparam {
    /// The key after the `{arch}.` prefix.
    pub key: String,
    /// The GGUF value type name the key must have.
    #[serde(rename = "type")]
    pub value_type: String,
    /// The profile dimension it equals.
    pub dim: Dim,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
/// The weights ids the packer reads and writes.
pub struct WeightsIds {
    /// The template's weights id.
    pub template: String,
    /// The packed artifact's weights id.
    pub output: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
/// How one target object is produced.
pub struct Rule {
    /// The object name (`{l}` for the layer).
    pub target: String,
    /// Which layers it exists in.
    pub layers: LayerSet,
    /// Its shape.
    pub shape: Vec<Dim>,
    /// The template's format for it.
    pub template_format: String,
    /// What produces it.
    pub produce: Produce,
    /// The rule's name.
    pub rule: String,
    /// The evidence for the rule.
    pub evidence: String,
    /// What goes wrong if the rule is wrong.
    pub risk: String,
}

/// How a target object is produced from the GGUF.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Produce {
    /// Rows of ternary tensors, concatenated in order; bytes move verbatim.
    TernaryRows {
        /// The parts, in concatenation order.
        parts: Vec<RowPart>,
    },
    /// BF16 of (gguf - 1) when `minus_one`, else BF16 of the raw values.
    Norm {
        /// Source tensor.
        src: String,
        /// Whether 1 is subtracted before BF16.
        minus_one: bool,
    },
    /// FP32 head vector, tiled→grouped; `fn` = "log_neg" (log(-a)) or "identity".
    HeadVector {
        /// Source tensor.
        src: String,
        #[serde(rename = "fn")]
        /// The per-element function.
        func: HeadVectorFn,
    },
    /// BF16 rows on the head axis, tiled→grouped (bytes move verbatim).
    HeadRows {
        /// Source tensor.
        src: String,
    },
    /// ssm_conv1d: read (C, kernel), permute V channels by head, transpose to (kernel, C), BF16.
    Conv1d {
        /// Source tensor.
        src: String,
    },
}

#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
/// One source of a ternary rule.
pub struct RowPart {
    /// The source tensor.
    pub src: String,
    /// `[start, end)` of source rows; absent = all rows.
    #[serde(default)]
    pub rows: Option<[Dim; 2]>,
    /// How the part's rows are gathered.
    pub order: RowOrder,
}

/// The gather a ternary rule part applies to its source rows (spec/mapping.json `order`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RowOrder {
    /// Rows in source order.
    Verbatim,
    /// perm_row over the value heads (tiled v_tile x k_heads -> grouped), head_v_dim rows each.
    PermHeads,
    /// The even head_dim-row blocks of attn_q (the query halves).
    AttnQQuery,
    /// The odd head_dim-row blocks of attn_q (the gate halves).
    AttnQGate,
}

impl std::fmt::Display for RowOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RowOrder::Verbatim => "verbatim",
            RowOrder::PermHeads => "perm_heads",
            RowOrder::AttnQQuery => "attn_q_query",
            RowOrder::AttnQGate => "attn_q_gate",
        })
    }
}

/// The function a head-vector rule applies per element (spec/mapping.json `fn`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HeadVectorFn {
    /// `log(-a)`; the source must be negative.
    LogNeg,
    /// The value itself.
    Identity,
}

impl std::fmt::Display for HeadVectorFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeadVectorFn::LogNeg => "log_neg",
            HeadVectorFn::Identity => "identity",
        })
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
/// A sign object of the artifact.
pub struct SignObject {
    /// The object name.
    pub target: String,
    /// Its format.
    pub format: String,
    /// Its shape.
    pub shape: Vec<Dim>,
    /// The GGUF key it comes from.
    pub from: String,
    /// How values are converted.
    pub convert: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
/// A tensor the GGUF must hold.
pub struct GgufTensorSpec {
    /// Its name (`{l}` for the layer).
    pub name: String,
    /// Which layers have it.
    pub layers: LayerSet,
    /// Its ggml ne.
    pub ne: Vec<Dim>,
    /// "ternary" or a ggml type name (F32, BF16).
    #[serde(rename = "type")]
    pub ty: super::TensorClass,
    #[serde(default)]
    /// How synth fills it (dense tensors).
    pub init: Option<String>,
    #[serde(default)]
    /// A remark on its layout.
    pub note: Option<String>,
}

/// Profiles compiled in, by name.
pub const PROFILES: &[(&str, &str)] = &[
    (
        "bonsai-2-27b",
        include_str!("../../spec/models/bonsai-2-27b.json"),
    ),
    (
        "bonsai-micro",
        include_str!("../../spec/models/bonsai-micro.json"),
    ),
    (
        "bonsai-nano",
        include_str!("../../spec/models/bonsai-nano.json"),
    ),
];

/// A profile by name.
pub fn profile(name: &str) -> Option<ModelProfile> {
    PROFILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, s)| super::parse_text(&format!("models/{n}.json"), s))
}

/// The mapping rules.
pub fn mapping() -> &'static Mapping {
    static M: std::sync::OnceLock<Mapping> = std::sync::OnceLock::new();
    M.get_or_init(|| super::parse_text("mapping.json", include_str!("../../spec/mapping.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_and_derived_dims_are_consistent() {
        for (name, _) in PROFILES {
            let p = profile(name).unwrap();
            let d = |k: &str| p.derived[k];
            assert_eq!(d("qk_rows"), 2 * p.k_heads * p.head_k_dim);
            assert_eq!(d("v_rows"), p.v_heads * p.head_v_dim);
            assert_eq!(d("qkv_rows"), d("qk_rows") + d("v_rows"));
            assert_eq!(d("q_rows"), p.q_heads * p.head_dim);
            assert_eq!(d("attn_q_rows"), 2 * d("q_rows"));
            assert_eq!(d("kv_rows"), p.kv_heads * p.head_dim);
            assert_eq!(d("attn_pair_rows"), d("q_rows") + d("kv_rows"));
            assert_eq!(d("gate_up_rows"), 2 * p.ffn);
            assert_eq!(d("value_z_rows"), 2 * d("v_rows"));
            assert_eq!(p.v_heads, p.v_tile * p.k_heads);
            assert_eq!(p.sign_widths, vec![p.hidden, d("v_rows"), p.ffn]);
            for w in &p.sign_widths {
                assert_eq!(w % 128, 0, "{name}: width {w}");
                assert_eq!(
                    w % p.hadamard_block,
                    0,
                    "{name}: width {w} vs Hadamard block"
                );
            }
            let mut ws = p.sign_widths.clone();
            ws.dedup();
            assert_eq!(
                ws.len(),
                p.sign_widths.len(),
                "{name}: widths must be distinct (one sign vector per width)"
            );
            // GDN layers on both sides of every attention layer.
            for l in p.layers_in(LayerSet::Attention) {
                assert!(l > 0 && !p.is_attention_layer(l - 1), "{name}: layer {l}");
            }
        }
    }

    #[test]
    fn bonsai_27b_has_the_documented_dimensions_and_counts() {
        let p = profile("bonsai-2-27b").unwrap();
        assert_eq!(
            (p.n_layers, p.hidden, p.ffn, p.vocab),
            (64, 5120, 17408, 248320)
        );
        assert_eq!(p.layers_in(LayerSet::Attention).len(), 16);
        assert_eq!(p.layers_in(LayerSet::Gdn).len(), 48);
        assert_eq!(p.sign_widths.iter().sum::<u64>(), 28672);
        let m = mapping();
        let per = |set: LayerSet| {
            m.gguf_tensors
                .iter()
                .filter(|t| t.layers == set || t.layers == LayerSet::All && set != LayerSet::Global)
                .count() as u64
        };
        let tensors =
            48 * per(LayerSet::Gdn) + 16 * per(LayerSet::Attention) + per(LayerSet::Global);
        assert_eq!(tensors, m.counts_27b["gguf_tensors"]);
        assert_eq!((per(LayerSet::Gdn), per(LayerSet::Attention)), (14, 11));
    }

    /// A typo in a vocabulary word of mapping.json (a row order, a head-vector function) fails
    /// when the table loads, with `spec.invalid` naming the table; the table as shipped loads.
    #[test]
    fn a_vocabulary_typo_fails_when_the_mapping_loads() {
        let text = include_str!("../../spec/mapping.json");
        crate::spec::try_parse_text::<Mapping>("mapping.json", text).expect("control loads");
        for (good, typo) in [
            ("\"order\": \"perm_heads\"", "\"order\": \"perm_head\""),
            ("\"fn\": \"log_neg\"", "\"fn\": \"logneg\""),
            ("\"layers\": \"gdn\"", "\"layers\": \"gdm\""),
        ] {
            assert!(text.contains(good), "{good}");
            let bad = text.replacen(good, typo, 1);
            let e = crate::spec::try_parse_text::<Mapping>("mapping.json", &bad).unwrap_err();
            assert_eq!(e.class(), crate::ErrorClass::SpecInvalid, "{typo}: {e}");
            assert!(e.field().starts_with("spec/mapping.json line"), "{e}");
            assert!(e.detail().contains("unknown variant"), "{typo}: {e}");
        }
    }

    #[test]
    fn every_profile_hparam_names_a_dimension_of_every_profile() {
        for (name, _) in PROFILES {
            let p = profile(name).unwrap();
            for h in &mapping().profile_hparams {
                assert!(p.dim(&h.dim).is_some(), "{name}: {}", h.dim);
            }
        }
    }

    #[test]
    fn mapping_parses_and_every_rule_names_known_dims_and_sources() {
        let m = mapping();
        let p = profile("bonsai-nano").unwrap();
        for r in &m.rules {
            p.dims(&r.shape);
            assert!(
                crate::spec::get().format(&r.template_format).is_some(),
                "{}",
                r.target
            );
            let srcs: Vec<String> = match &r.produce {
                Produce::TernaryRows { parts } => parts.iter().map(|p| p.src.clone()).collect(),
                Produce::Norm { src, .. }
                | Produce::HeadVector { src, .. }
                | Produce::HeadRows { src }
                | Produce::Conv1d { src } => vec![src.clone()],
            };
            for s in srcs {
                assert!(
                    m.gguf_tensors.iter().any(|t| t.name == s),
                    "{}: unknown source {s}",
                    r.target
                );
            }
        }
    }
}
