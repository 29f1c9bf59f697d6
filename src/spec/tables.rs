//! Schemas of the spec tables. Members starting with `_` are provenance notes.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Container {
    #[serde(rename = "_source")]
    pub source: String,
    pub magic_hex: String,
    pub prefix_bytes: u64,
    pub json_length_offset: u64,
    pub payload_alignment: u64,
    pub plane_alignment: u64,
    pub k_alignment: u64,
    pub refused_magics: Vec<RefusedMagic>,
    pub directory: DirectoryRules,
    pub writer: WriterRules,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedMagic {
    pub magic_hex: String,
    pub name: String,
    pub error_class: String,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectoryRules {
    pub encoding: String,
    pub root_members: Vec<String>,
    pub identity_members: Vec<String>,
    pub tensor_members: Vec<String>,
    pub resource_members: Vec<String>,
    pub kinds: Vec<String>,
    pub resource_encodings: Vec<String>,
    pub resource_alignment: u64,
    pub value_rules: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriterRules {
    pub ternary_weights_id: String,
    pub template_weights_id: String,
    pub padding_byte: u8,
    pub objects_in_offset_order: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Formats {
    #[serde(rename = "_source")]
    pub source: String,
    #[serde(rename = "_note")]
    pub note: String,
    pub formats: Vec<NumericFormat>,
    pub layouts: Vec<Layout>,
    pub encoded_size_examples: Vec<EncodedSizeExample>,
}

/// The layout family a format belongs to.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    Direct,
    Grouped,
    Blockscale,
    RowScaled,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct NumericFormat {
    pub name: String,
    pub kind: FormatKind,
    #[serde(default)]
    pub word_bytes: Option<u64>,
    #[serde(default)]
    pub group_size: Option<u64>,
    #[serde(default)]
    pub base_bytes_per_group: Option<u64>,
    #[serde(default)]
    pub high_bytes_per_group: Option<u64>,
    #[serde(default)]
    pub scale_bytes_per_group: Option<u64>,
    #[serde(default)]
    pub block_elems: Option<u64>,
    #[serde(default)]
    pub row_multiple: Option<u64>,
    #[serde(default)]
    pub k_multiple: Option<u64>,
    #[serde(default)]
    pub divisor_bytes: Option<u64>,
    #[serde(default)]
    pub code_bytes: Option<u64>,
    #[serde(default)]
    pub scale_bytes_per_row: Option<u64>,
    #[serde(default)]
    pub ternary: Option<TernaryInfo>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct TernaryInfo {
    /// Name of the GGUF type in `ggml_types.json` whose blocks this format's planes hold.
    pub ggml_type: String,
    pub engine_type_code: u32,
    pub codec: String,
    pub block_plane_slices: PlaneSlices,
}

/// Byte ranges `[lo, hi)` of one ggml block that go to each plane (plane order, not byte order).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PlaneSlices {
    pub base: (u64, u64),
    pub high: Option<(u64, u64)>,
    pub scale: (u64, u64),
}

impl PlaneSlices {
    /// base, high, scale — `None` for an absent plane.
    pub fn planes(&self) -> [Option<(u64, u64)>; 3] {
        [Some(self.base), self.high, Some(self.scale)]
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    pub name: super::LayoutId,
    pub family: String,
    pub accepts_kinds: Vec<FormatKind>,
    pub alignment: u64,
    #[serde(default)]
    pub max_rank: Option<usize>,
    pub encoded_size: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EncodedSizeExample {
    pub layout: super::LayoutId,
    pub format: String,
    pub shape: Vec<u64>,
    pub bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryTable {
    #[serde(rename = "_source")]
    pub source: String,
    pub fields: Vec<String>,
    pub rules: Vec<String>,
    pub examples: Vec<GeometryExample>,
    pub disagreements: Vec<String>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct GeometryExample {
    pub format: String,
    pub shape: [u64; 2],
    #[serde(default)]
    pub payload_bytes: Option<u64>,
    #[serde(default)]
    pub high_offset: Option<u64>,
    #[serde(default)]
    pub scale_offset: Option<u64>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgmlTypes {
    #[serde(rename = "_source")]
    pub source: String,
    #[serde(rename = "_note")]
    pub note: String,
    pub types: Vec<GgmlType>,
    pub removed_ids: Vec<u32>,
    pub variants: Vec<GgmlType>,
    pub unconfirmed: Vec<UnconfirmedType>,
    pub id42_disambiguation: Id42Rule,
    pub prism_ftypes: std::collections::BTreeMap<String, u32>,
}

/// A type known to exist whose id could not be confirmed (kept out of `types`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnconfirmedType {
    pub name: String,
    pub block_elems: u32,
    pub note: String,
}

/// How id 42 is resolved per file (`spec/ggml-types.md#id-42`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Id42Rule {
    pub rule: String,
    pub mismatch_ratios: std::collections::BTreeMap<String, String>,
    /// Names (in `types` / `variants`) that share id 42.
    pub candidates: Vec<String>,
    pub disagreement: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct GgmlType {
    pub id: u32,
    pub name: String,
    pub block_elems: u32,
    pub block_bytes: u32,
    /// The decoder in `src/codec` (`None`: sizes known, values not decoded).
    pub codec: Option<String>,
    #[serde(default)]
    pub origin: Option<String>,
    #[serde(default)]
    pub aka: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub retag_to: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufTable {
    #[serde(rename = "_source")]
    pub source: String,
    pub magic_hex: String,
    pub header_bytes: u64,
    pub versions_readable: Vec<u32>,
    pub versions_rejected: Vec<u32>,
    pub big_endian_version_marker: u32,
    pub value_types: Vec<GgufValueTypeInfo>,
    pub default_alignment: u32,
    pub alignment_key: String,
    pub architecture_key: String,
    pub max_dims: u32,
    pub strict: GgufStrictRules,
    pub limits: GgufLimits,
    pub notes: Vec<String>,
    pub rule_layers: GgufRuleLayers,
}

/// Which rule layer each hostile case belongs to, with the mainline evidence
/// (`crate::gguf::RuleLayer`; PROTOCOL.md §2.1).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufRuleLayers {
    #[serde(rename = "_source")]
    pub source: String,
    pub mainline_pin: MainlinePin,
    pub layers: std::collections::BTreeMap<String, String>,
    pub reference_strict_mode: Vec<String>,
    pub cases: Vec<GgufRuleCase>,
}

/// The pinned mainline sources the `mainline` layer was observed with.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainlinePin {
    /// Registry and package, e.g. `pypi:llama-cpp-python`.
    pub package: String,
    pub version: String,
    /// The ggml version vendored in that package.
    pub ggml: String,
    /// The project script that downloads and builds it.
    pub setup: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufRuleCase {
    /// Corpus case name without the `n_` prefix.
    pub case: String,
    /// `mainline`, `loader`, `recommended` or `spec`.
    pub layer: String,
    /// What mainline `gguf_init_from_file(no_alloc=true)` does: `refuses` or `accepts`.
    pub mainline: String,
    /// Source path and line(s) in the pinned mainline sources.
    #[serde(rename = "where")]
    pub where_: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufValueTypeInfo {
    pub id: u32,
    pub name: String,
    pub size: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufStrictRules {
    pub max_tensor_name_bytes: u64,
    pub offsets_equal_running_padded_sum: bool,
    pub no_duplicate_keys: bool,
    pub alignment_must_be_u32_power_of_two: bool,
    pub architecture_required: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufLimits {
    pub max_string_bytes: u64,
    #[serde(rename = "_why")]
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecTable {
    #[serde(rename = "_source")]
    pub source: String,
    pub codecs: Vec<CodecLayout>,
    pub quantizer: Quantizer,
    pub vectors: Vec<CodecVector>,
    pub byte_facts: ByteFacts,
}

/// One block layout of `spec/codecs.json` (byte ranges are `[start, end)`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecLayout {
    pub codec: String,
    pub block_elems: u64,
    pub block_bytes: u64,
    pub scale: [u64; 2],
    #[serde(default)]
    pub codes: Option<[u64; 2]>,
    #[serde(default)]
    pub qs: Option<[u64; 2]>,
    #[serde(default)]
    pub qh: Option<[u64; 2]>,
    /// The base-3 stages (TQ1_0 / PTQ1_0): element range -> byte range.
    #[serde(default)]
    pub stages: Option<Vec<CodecStage>>,
    #[serde(default)]
    pub digit: Option<String>,
    /// Absent for staged codecs (the stages say it) and for Q8_0 (sequential).
    #[serde(default)]
    pub element_order: Option<String>,
    pub value: String,
}

/// One base-3 stage: elements `[elems.0, elems.1)` live in bytes `[bytes.0, bytes.1)`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecStage {
    pub elems: [u64; 2],
    pub bytes: [u64; 2],
}

/// The reference quantizer, as prose rules.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quantizer {
    pub scale: String,
    pub rounding: String,
    pub pq2_0_code: String,
    pub ptq1_0_trit: String,
    pub base3_byte: String,
    pub base3_qh_byte: String,
}

/// Single-byte facts of the base-3 packing (hex bytes) and the non-canonical counts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteFacts {
    pub qs_all_minus1: String,
    pub qs_all_zero: String,
    pub qs_all_plus1: String,
    pub qh_all_minus1: String,
    pub qh_all_zero: String,
    pub qh_all_plus1: String,
    pub noncanonical_qs_count: u64,
    pub noncanonical_qh_count: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecVector {
    pub name: String,
    pub codec: String,
    #[serde(default)]
    pub trits: Option<String>,
    pub d_f16: String,
    pub hex: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HadamardTable {
    #[serde(rename = "_source")]
    pub source: String,
    pub transform: String,
    pub definition: String,
    pub forward: String,
    pub inverse: String,
    pub ssm_out_permutation: SsmOutPermutation,
    pub metadata: Vec<HadamardKey>,
    pub artifact_objects: SignObjects,
}

/// The feature permutation P applied before the signs for `ssm_out`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsmOutPermutation {
    pub head_dim: u64,
    pub k_heads: u64,
    pub rep: u64,
    pub formula: String,
}

/// The two sign objects the artifact carries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignObjects {
    pub signs: SignObjectSpec,
    pub widths: SignObjectSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignObjectSpec {
    pub name: String,
    pub format: String,
    pub layout: super::LayoutId,
    pub from: String,
}

/// An expected metadata value.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(untagged)]
pub enum KeyValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyValue::Bool(b) => write!(f, "{b}"),
            KeyValue::Int(i) => write!(f, "{i}"),
            KeyValue::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// `spec/permutations.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permutations {
    #[serde(rename = "_source")]
    pub source: String,
    pub perm48: Perm48Spec,
    pub perm_row: PermRowSpec,
    pub attn_q_deinterleave: AttnQSpec,
    pub tiled_to_grouped: TiledToGroupedSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Perm48Spec {
    /// `gather` (target index <- source index).
    pub kind: String,
    pub heads: u64,
    pub tile: u64,
    pub group: u64,
    pub formula: String,
    pub meaning: String,
    pub checks: Vec<PermCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermCheck {
    pub i: u64,
    pub perm: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermRowSpec {
    pub kind: String,
    pub head_dim: u64,
    pub formula: String,
    pub trap: String,
    pub trap_counts: TrapCounts,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrapCounts {
    pub rows: u64,
    pub repeated: u64,
    pub missing: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttnQSpec {
    pub block_rows: u64,
    pub heads: u64,
    pub row_multiple: u64,
    pub formula: String,
    /// The refusal message, `<name>` and `<n>` substituted.
    pub error: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TiledToGroupedSpec {
    pub formula: String,
    pub same_as: String,
    pub scatter_trap: String,
}

/// One `prism.hadamard.*` key of `spec/hadamard.json`: its GGUF type and the value it must have.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HadamardKey {
    /// The full GGUF key.
    pub key: String,
    /// The GGUF value type name (`U32`, `STRING`, `ARRAY`, `BOOL`).
    #[serde(rename = "type")]
    pub value_type: String,
    /// The element type name of an `ARRAY`.
    #[serde(default)]
    pub elem_type: Option<String>,
    /// A fixed expected value.
    #[serde(default)]
    pub expected: Option<KeyValue>,
    /// The allowed string values.
    #[serde(default)]
    pub one_of: Option<Vec<String>>,
    /// The profile field the value must equal (it differs between real and reduced profiles).
    #[serde(default)]
    pub profile_field: Option<ProfileField>,
    /// The rule in words (and the evidence for it).
    #[serde(default)]
    pub rule: Option<String>,
}

/// A model-profile field a metadata value is compared with.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProfileField {
    /// `hadamard_block`: the Hadamard block size.
    HadamardBlock,
    /// `sign_widths`: the folded input widths, in order.
    SignWidths,
}

impl ProfileField {
    /// The field's name in `spec/models/*.json`.
    pub fn name(self) -> &'static str {
        match self {
            ProfileField::HadamardBlock => "hadamard_block",
            ProfileField::SignWidths => "sign_widths",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorTable {
    #[serde(rename = "_doc")]
    pub doc: String,
    pub classes: Vec<ErrorClassInfo>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorClassInfo {
    pub id: String,
    pub phase: String,
    pub summary: String,
}
