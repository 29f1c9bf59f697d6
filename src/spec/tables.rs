//! Schemas of the spec tables. Members starting with `_` are provenance notes.

use serde::Deserialize;

/// `spec/container.json`: the `.ninfer` v2 framing constants, refused magics, directory
/// and writer rules (`spec/ninfer-container.md#ninfer-container`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Container {
    /// Provenance note (`_source`): where the rules were taken from.
    #[serde(rename = "_source")]
    pub source: String,
    /// The 8-byte v2 magic (`NINFER\0\2`) as hex.
    pub magic_hex: String,
    /// Bytes before the directory: magic + `json_bytes` (16).
    pub prefix_bytes: u64,
    /// Byte offset of the u64 LE `json_bytes` field (8).
    pub json_length_offset: u64,
    /// The payload starts at `align_up(prefix_bytes + json_bytes, payload_alignment)` (4096).
    pub payload_alignment: u64,
    /// Alignment of each plane inside a row-split payload (256).
    pub plane_alignment: u64,
    /// K is padded to a multiple of this before it is split into groups (128;
    /// `spec/geometry.md#row-split-geometry`).
    pub k_alignment: u64,
    /// Magics of other container versions, each refused with its own error class
    /// (`spec/ninfer-container.md#ninfer-refused-magics`).
    pub refused_magics: Vec<RefusedMagic>,
    /// The JSON directory's schema and value rules (`spec/ninfer-container.md#ninfer-directory`).
    pub directory: DirectoryRules,
    /// What the writer emits (`spec/ninfer-container.md#ninfer-writer`).
    pub writer: WriterRules,
}

/// A recognised magic of another container version and why it is refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedMagic {
    /// The 8-byte magic as hex.
    pub magic_hex: String,
    /// What the file is (e.g. `ninfer v1`).
    pub name: String,
    /// The `spec/errors.json` class id the reader refuses it with.
    pub error_class: String,
    /// Why it is refused, in words.
    pub why: String,
}

/// Schema of the `.ninfer` JSON directory (`spec/ninfer-container.md#ninfer-directory`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectoryRules {
    /// How the directory text is encoded (compact UTF-8 JSON).
    pub encoding: String,
    /// The exact member set of the root object.
    pub root_members: Vec<String>,
    /// The exact member set of `identity`.
    pub identity_members: Vec<String>,
    /// The exact member set of a `tensor` object.
    pub tensor_members: Vec<String>,
    /// The exact member set of a `resource` object.
    pub resource_members: Vec<String>,
    /// The allowed values of an object's `kind`.
    pub kinds: Vec<String>,
    /// The allowed values of a resource's `encoding`.
    pub resource_encodings: Vec<String>,
    /// Offset alignment of a resource (tensors use their layout's alignment).
    pub resource_alignment: u64,
    /// The value rules in words, one per entry.
    pub value_rules: Vec<String>,
}

/// What the `.ninfer` writer emits (`spec/ninfer-container.md#ninfer-writer`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriterRules {
    /// `identity.weights_id` of a packed ternary artifact.
    pub ternary_weights_id: String,
    /// `identity.weights_id` of the groupwise-int template.
    pub template_weights_id: String,
    /// The byte that fills alignment gaps.
    pub padding_byte: u8,
    /// Whether the directory lists objects in increasing offset order.
    pub objects_in_offset_order: bool,
}

/// `spec/formats.json`: the numeric-format registry, storage layouts and encoded-size
/// examples (`spec/ninfer-container.md#ninfer-formats`, `#ninfer-layouts`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Formats {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// Note on the registry's size (`_note`).
    #[serde(rename = "_note")]
    pub note: String,
    /// Every numeric format a `.ninfer` tensor may name.
    pub formats: Vec<NumericFormat>,
    /// Every storage layout a `.ninfer` tensor may name.
    pub layouts: Vec<Layout>,
    /// Worked `(layout, format, shape) -> bytes` values the size function is tested against.
    pub encoded_size_examples: Vec<EncodedSizeExample>,
}

/// The layout family a format belongs to.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    /// One word per element (`word_bytes`): BF16, FP32, I32.
    Direct,
    /// Groups of `group_size` elements in base/high/scale planes (row-split layout).
    Grouped,
    /// NVFP4: 4-bit codes, per-block scales and an FP32 divisor.
    Blockscale,
    /// FP8 codes with one scale per row.
    RowScaled,
}

/// One numeric format of the registry; the optional members belong to its kind.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct NumericFormat {
    /// Format name as written in a directory's `format` (e.g. `PTQ1_0_G128`).
    pub name: String,
    /// Layout family the format belongs to.
    pub kind: FormatKind,
    /// Direct: bytes per element.
    #[serde(default)]
    pub word_bytes: Option<u64>,
    /// Grouped: elements per group.
    #[serde(default)]
    pub group_size: Option<u64>,
    /// Grouped: bytes of the base plane per group.
    #[serde(default)]
    pub base_bytes_per_group: Option<u64>,
    /// Grouped: bytes of the high plane per group (0: no high plane).
    #[serde(default)]
    pub high_bytes_per_group: Option<u64>,
    /// Grouped: bytes of the scale plane per group.
    #[serde(default)]
    pub scale_bytes_per_group: Option<u64>,
    /// Blockscale: elements per scale block.
    #[serde(default)]
    pub block_elems: Option<u64>,
    /// Blockscale: N must be a multiple of this.
    #[serde(default)]
    pub row_multiple: Option<u64>,
    /// Blockscale: K must be a multiple of this.
    #[serde(default)]
    pub k_multiple: Option<u64>,
    /// Blockscale: bytes of the trailing FP32 divisor.
    #[serde(default)]
    pub divisor_bytes: Option<u64>,
    /// Row-scaled: bytes per element code.
    #[serde(default)]
    pub code_bytes: Option<u64>,
    /// Row-scaled: bytes of each row's scale.
    #[serde(default)]
    pub scale_bytes_per_row: Option<u64>,
    /// Present for the two ternary formats: which GGUF type's blocks the planes hold.
    #[serde(default)]
    pub ternary: Option<TernaryInfo>,
}

/// How a ternary `.ninfer` format relates to its GGUF block type.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct TernaryInfo {
    /// Name of the GGUF type in `ggml_types.json` whose blocks this format's planes hold.
    pub ggml_type: String,
    /// The engine's numeric code for this format (`engine code` in
    /// `spec/ninfer-container.md#ninfer-formats`).
    pub engine_type_code: u32,
    /// The block codec in `src/codec` (a `spec/codecs.json` codec name).
    pub codec: String,
    /// Which bytes of one ggml block go to each plane (`spec/geometry.md#block-plane`).
    pub block_plane_slices: PlaneSlices,
}

/// Byte ranges `[lo, hi)` of one ggml block that go to each plane (plane order, not byte order).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PlaneSlices {
    /// Bytes of the block that form the group's base-plane bytes.
    pub base: (u64, u64),
    /// Bytes that form the high-plane bytes (`None`: the format has no high plane).
    pub high: Option<(u64, u64)>,
    /// Bytes that form the scale-plane bytes (the f16 `d`).
    pub scale: (u64, u64),
}

impl PlaneSlices {
    /// base, high, scale — `None` for an absent plane.
    pub fn planes(&self) -> [Option<(u64, u64)>; 3] {
        [Some(self.base), self.high, Some(self.scale)]
    }
}

/// One storage layout (`spec/ninfer-container.md#ninfer-layouts`).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Layout name as written in a directory's `layout` (e.g. `row-split-k128-v1`).
    pub name: super::LayoutId,
    /// The layout family (`contiguous`, `row_split`, `blockscale`, `row_scale`).
    pub family: String,
    /// The format kinds this layout can store.
    pub accepts_kinds: Vec<FormatKind>,
    /// Required alignment of a tensor offset in this layout.
    pub alignment: u64,
    /// Highest tensor rank of a direct-kind tensor (`None`: the layout's kinds are rank 2).
    #[serde(default)]
    pub max_rank: Option<usize>,
    /// The encoded-size rule in words.
    pub encoded_size: String,
}

/// A worked encoded-size value.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EncodedSizeExample {
    /// Layout name.
    pub layout: super::LayoutId,
    /// Format name.
    pub format: String,
    /// Tensor shape (`[]` is a scalar).
    pub shape: Vec<u64>,
    /// The expected encoded size in bytes.
    pub bytes: u64,
}

/// `spec/geometry.json`: the row-split geometry (`spec/geometry.md#row-split-geometry`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryTable {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// The geometry's field names, in order (`spec/geometry.md#geometry-fields`).
    pub fields: Vec<String>,
    /// The computation rules in words.
    pub rules: Vec<String>,
    /// Worked examples (`spec/geometry.md#geometry-examples`).
    pub examples: Vec<GeometryExample>,
    /// Recorded disagreements with earlier transcriptions.
    pub disagreements: Vec<String>,
}

/// One worked row-split geometry value.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct GeometryExample {
    /// Grouped format name.
    pub format: String,
    /// `[n, k]`.
    pub shape: [u64; 2],
    /// Expected total payload bytes.
    #[serde(default)]
    pub payload_bytes: Option<u64>,
    /// Expected byte offset of the high plane.
    #[serde(default)]
    pub high_offset: Option<u64>,
    /// Expected byte offset of the scale plane.
    #[serde(default)]
    pub scale_offset: Option<u64>,
    /// Why the example is there (e.g. a disagreement it settles).
    #[serde(default)]
    pub note: Option<String>,
}

/// `spec/ggml_types.json`: ggml type ids with the fork conflicts (`spec/ggml-types.md#ggml-types`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgmlTypes {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// Note on known size disagreements and the `codec` column (`_note`).
    #[serde(rename = "_note")]
    pub note: String,
    /// The mainline + Prism type table, one entry per id (`spec/ggml-types.md#ggml-type-ids`).
    pub types: Vec<GgmlType>,
    /// Ids ggml has removed; a tensor with one is refused.
    pub removed_ids: Vec<u32>,
    /// Fork types whose id collides with or replaces a `types` id
    /// (`spec/ggml-types.md#fork-conflicts`).
    pub variants: Vec<GgmlType>,
    /// Types known to exist whose id is unconfirmed (`spec/ggml-types.md#ggml-unconfirmed`).
    pub unconfirmed: Vec<UnconfirmedType>,
    /// How id 42 is resolved per file (`spec/ggml-types.md#id-42`).
    pub id42_disambiguation: Id42Rule,
    /// Prism's file-type constants, name -> value (`spec/ggml-types.md#prism-ftypes`).
    pub prism_ftypes: std::collections::BTreeMap<String, u32>,
}

/// A type known to exist whose id could not be confirmed (kept out of `types`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnconfirmedType {
    /// Type name.
    pub name: String,
    /// Elements per block.
    pub block_elems: u32,
    /// What is known about it.
    pub note: String,
}

/// How id 42 is resolved per file (`spec/ggml-types.md#id-42`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Id42Rule {
    /// The disambiguation rule in words (bytes per weight of the tensor's span).
    pub rule: String,
    /// What a wrong guess reads, as a fraction of the real span, by direction.
    pub mismatch_ratios: std::collections::BTreeMap<String, String>,
    /// Names (in `types` / `variants`) that share id 42.
    pub candidates: Vec<String>,
    /// Recorded disagreement with an earlier transcription.
    pub disagreement: String,
}

/// One ggml tensor type.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct GgmlType {
    /// The `ggml_type` id written in a GGUF tensor info.
    pub id: u32,
    /// Type name (e.g. `PTQ1_0`).
    pub name: String,
    /// Elements per block.
    pub block_elems: u32,
    /// Bytes per block.
    pub block_bytes: u32,
    /// The decoder in `src/codec` (`None`: sizes known, values not decoded).
    pub codec: Option<String>,
    /// The fork that defines it (absent: mainline ggml).
    #[serde(default)]
    pub origin: Option<String>,
    /// Other names the type is known by.
    #[serde(default)]
    pub aka: Vec<String>,
    /// Caveats (e.g. a size another source disagrees on).
    #[serde(default)]
    pub note: Option<String>,
    /// The id a header-only retag moves it to (legacy Prism 42 -> 142).
    #[serde(default)]
    pub retag_to: Option<u32>,
}

/// `spec/gguf.json`: the GGUF container rules (`spec/gguf.md#gguf-container`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufTable {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// The 4-byte magic `GGUF` as hex.
    pub magic_hex: String,
    /// Bytes of the fixed header: magic, version, tensor count, KV count (24).
    pub header_bytes: u64,
    /// Versions the reader accepts.
    pub versions_readable: Vec<u32>,
    /// Versions listed as not readable (older GGUF).
    pub versions_rejected: Vec<u32>,
    /// Version field of a byte-swapped (big-endian) v3 file
    /// (`spec/gguf.md#gguf-big-endian`).
    pub big_endian_version_marker: u32,
    /// The metadata value types (`spec/gguf.md#gguf-value-types`).
    pub value_types: Vec<GgufValueTypeInfo>,
    /// Data alignment when `general.alignment` is absent (32).
    pub default_alignment: u32,
    /// The key that overrides the alignment.
    pub alignment_key: String,
    /// The key naming the model architecture.
    pub architecture_key: String,
    /// Highest `n_dims` of a tensor (4).
    pub max_dims: u32,
    /// The rules strict mode adds over spec mode (`spec/gguf.md#gguf-modes`).
    pub strict: GgufStrictRules,
    /// Size limits (`spec/gguf.md#gguf-limits`).
    pub limits: GgufLimits,
    /// Notes on the rules and their disagreements, in words.
    pub notes: Vec<String>,
    /// Which rule layer each hostile case belongs to (`spec/gguf.md#gguf-rule-layers`).
    pub rule_layers: GgufRuleLayers,
}

/// Which rule layer each hostile case belongs to, with the mainline evidence
/// (`crate::gguf::RuleLayer`; PROTOCOL.md §2.1).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufRuleLayers {
    /// How the rows were obtained (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// The mainline build the `mainline` column was observed with.
    pub mainline_pin: MainlinePin,
    /// Layer name -> what it means.
    pub layers: std::collections::BTreeMap<String, String>,
    /// The layers the reference reader's strict mode enforces.
    pub reference_strict_mode: Vec<String>,
    /// One row per hostile corpus case.
    pub cases: Vec<GgufRuleCase>,
}

/// The pinned mainline sources the `mainline` layer was observed with.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MainlinePin {
    /// Registry and package, e.g. `pypi:llama-cpp-python`.
    pub package: String,
    /// Package version.
    pub version: String,
    /// The ggml version vendored in that package.
    pub ggml: String,
    /// The project script that downloads and builds it.
    pub setup: String,
}

/// One hostile case's rule layer and the mainline evidence for it.
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
    /// Remarks on the row.
    #[serde(default)]
    pub note: Option<String>,
}

/// One GGUF metadata value type.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufValueTypeInfo {
    /// The `gguf_type` id.
    pub id: u32,
    /// Type name (e.g. `U32`, `STRING`).
    pub name: String,
    /// Bytes of one value (`None`: variable, STRING and ARRAY).
    pub size: Option<u64>,
}

/// What strict mode enforces beyond spec mode (`spec/gguf.md#gguf-modes`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufStrictRules {
    /// Longest tensor name in bytes (63, mainline; spec mode allows 64).
    pub max_tensor_name_bytes: u64,
    /// Each tensor offset must equal the running sum of the padded sizes before it.
    pub offsets_equal_running_padded_sum: bool,
    /// A metadata key may appear once.
    pub no_duplicate_keys: bool,
    /// `general.alignment` must be a U32 power of two.
    pub alignment_must_be_u32_power_of_two: bool,
    /// `general.architecture` must be present.
    pub architecture_required: bool,
}

/// Size limits of the GGUF reader (`spec/gguf.md#gguf-limits`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GgufLimits {
    /// Longest string the reader accepts (1 GiB, as mainline).
    pub max_string_bytes: u64,
    /// Why (`_why`).
    #[serde(rename = "_why")]
    pub why: String,
}

/// `spec/codecs.json`: block codec layouts, the reference quantizer and test vectors
/// (`spec/codecs.md#block-codecs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecTable {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// One layout per codec (`spec/codecs.md#codec-layouts`).
    pub codecs: Vec<CodecLayout>,
    /// The reference quantizer's rules.
    pub quantizer: Quantizer,
    /// Test vectors: blocks with known bytes (`spec/codecs.md#test-vectors`).
    pub vectors: Vec<CodecVector>,
    /// Single-byte facts of the base-3 packing.
    pub byte_facts: ByteFacts,
}

/// One block layout of `spec/codecs.json` (byte ranges are `[start, end)`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecLayout {
    /// Codec name (as in `GgmlType::codec`).
    pub codec: String,
    /// Elements per block.
    pub block_elems: u64,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Byte range of the f16 scale `d`.
    pub scale: [u64; 2],
    /// Byte range of the packed codes (non-staged codecs).
    #[serde(default)]
    pub codes: Option<[u64; 2]>,
    /// Byte range of the base-3 `qs` bytes (staged codecs).
    #[serde(default)]
    pub qs: Option<[u64; 2]>,
    /// Byte range of the base-3 `qh` bytes (staged codecs).
    #[serde(default)]
    pub qh: Option<[u64; 2]>,
    /// The base-3 stages (TQ1_0 / PTQ1_0): element range -> byte range.
    #[serde(default)]
    pub stages: Option<Vec<CodecStage>>,
    /// How one trit is extracted from a base-3 byte (`spec/codecs.md#ptq1-0-digit-formula`).
    #[serde(default)]
    pub digit: Option<String>,
    /// Absent for staged codecs (the stages say it) and for Q8_0 (sequential).
    #[serde(default)]
    pub element_order: Option<String>,
    /// How a code or trit becomes a value, in words.
    pub value: String,
}

/// One base-3 stage: elements `[elems.0, elems.1)` live in bytes `[bytes.0, bytes.1)`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecStage {
    /// Element range `[start, end)`.
    pub elems: [u64; 2],
    /// Byte range `[start, end)`.
    pub bytes: [u64; 2],
}

/// The reference quantizer, as prose rules.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quantizer {
    /// How the block scale `d` is computed and stored.
    pub scale: String,
    /// The rounding rule.
    pub rounding: String,
    /// The PQ2_0 2-bit code of an element.
    pub pq2_0_code: String,
    /// The PTQ1_0 trit (0..=2) of an element.
    pub ptq1_0_trit: String,
    /// How five trits pack into a `qs` byte.
    pub base3_byte: String,
    /// How four trits pack into a `qh` byte.
    pub base3_qh_byte: String,
}

/// Single-byte facts of the base-3 packing (hex bytes) and the non-canonical counts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteFacts {
    /// `qs` byte of five -1 trits.
    pub qs_all_minus1: String,
    /// `qs` byte of five 0 trits.
    pub qs_all_zero: String,
    /// `qs` byte of five +1 trits.
    pub qs_all_plus1: String,
    /// `qh` byte of four -1 trits.
    pub qh_all_minus1: String,
    /// `qh` byte of four 0 trits.
    pub qh_all_zero: String,
    /// `qh` byte of four +1 trits.
    pub qh_all_plus1: String,
    /// How many of the 256 byte values no five-trit group encodes to.
    pub noncanonical_qs_count: u64,
    /// How many of the 256 byte values no four-trit group encodes to.
    pub noncanonical_qh_count: u64,
}

/// One codec test vector: a whole block's bytes for a known input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodecVector {
    /// Vector name.
    pub name: String,
    /// Codec name.
    pub codec: String,
    /// The trit pattern in words (ternary codecs).
    #[serde(default)]
    pub trits: Option<String>,
    /// The scale `d` as the hex of its f16 bit pattern.
    pub d_f16: String,
    /// The block's bytes as hex.
    pub hex: String,
}

/// `spec/hadamard.json`: the Hadamard rotation, its `prism.hadamard.*` metadata and the
/// artifact's sign objects (`spec/hadamard.md#hadamard`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HadamardTable {
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// The transform's name (the expected `prism.hadamard.transform`).
    pub transform: String,
    /// The matrix definition in words.
    pub definition: String,
    /// How a rotated weight is applied, in words.
    pub forward: String,
    /// The inverse rotation (token embedding only), in words.
    pub inverse: String,
    /// The feature permutation applied before the signs for `ssm_out`.
    pub ssm_out_permutation: SsmOutPermutation,
    /// The `prism.hadamard.*` keys (`spec/hadamard.md#prism-hadamard-keys`).
    pub metadata: Vec<HadamardKey>,
    /// The sign objects of the artifact (`spec/hadamard.md#hadamard-sign-objects`).
    pub artifact_objects: SignObjects,
}

/// The feature permutation P applied before the signs for `ssm_out`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsmOutPermutation {
    /// Features per head.
    pub head_dim: u64,
    /// Number of key heads.
    pub k_heads: u64,
    /// Value heads per key head.
    pub rep: u64,
    /// The permutation in words.
    pub formula: String,
}

/// The two sign objects the artifact carries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignObjects {
    /// The sign values object (`text/hadamard_signs`).
    pub signs: SignObjectSpec,
    /// The sign widths object (`text/hadamard_widths`).
    pub widths: SignObjectSpec,
}

/// One sign object of the artifact.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignObjectSpec {
    /// Object name.
    pub name: String,
    /// Numeric format.
    pub format: String,
    /// Storage layout.
    pub layout: super::LayoutId,
    /// Which metadata it is built from, and how.
    pub from: String,
}

/// An expected metadata value.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(untagged)]
pub enum KeyValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
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
    /// Provenance note (`_source`).
    #[serde(rename = "_source")]
    pub source: String,
    /// The 48-head permutation (`spec/permutations.md#perm48`).
    pub perm48: Perm48Spec,
    /// perm48 expanded to rows (`spec/permutations.md#perm-row`).
    pub perm_row: PermRowSpec,
    /// The attn_q query/gate de-interleave (`spec/permutations.md#attn-q-interleave`).
    pub attn_q_deinterleave: AttnQSpec,
    /// The tiled -> grouped reshape (`spec/permutations.md#tiled-to-grouped`).
    pub tiled_to_grouped: TiledToGroupedSpec,
}

/// The head permutation perm48 (`spec/permutations.md#perm48`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Perm48Spec {
    /// `gather` (target index <- source index).
    pub kind: String,
    /// Number of heads (48).
    pub heads: u64,
    /// Tile count (3).
    pub tile: u64,
    /// Group count (16).
    pub group: u64,
    /// The formula.
    pub formula: String,
    /// What it does, in words.
    pub meaning: String,
    /// Worked `(i, perm48(i))` values.
    pub checks: Vec<PermCheck>,
}

/// One worked permutation value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermCheck {
    /// Target index.
    pub i: u64,
    /// Source index it gathers from.
    pub perm: u64,
}

/// perm48 expanded to rows (`spec/permutations.md#perm-row`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermRowSpec {
    /// `gather` (target index <- source index).
    pub kind: String,
    /// Rows per head.
    pub head_dim: u64,
    /// The formula.
    pub formula: String,
    /// The known wrong application (perm48 on rows), in words.
    pub trap: String,
    /// What the trap does to a row count.
    pub trap_counts: TrapCounts,
}

/// What perm48-on-rows does to a row range.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrapCounts {
    /// Rows permuted.
    pub rows: u64,
    /// Rows that appear more than once.
    pub repeated: u64,
    /// Rows that go missing.
    pub missing: u64,
}

/// The attn_q de-interleave (`spec/permutations.md#attn-q-interleave`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttnQSpec {
    /// Rows per query (or gate) block.
    pub block_rows: u64,
    /// Number of query heads.
    pub heads: u64,
    /// The row count must be a multiple of this (2 * block_rows).
    pub row_multiple: u64,
    /// The formula.
    pub formula: String,
    /// The refusal message, `<name>` and `<n>` substituted.
    pub error: String,
}

/// The tiled -> grouped reshape (`spec/permutations.md#tiled-to-grouped`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TiledToGroupedSpec {
    /// The formula.
    pub formula: String,
    /// What it is equivalent to.
    pub same_as: String,
    /// The inverse that is easy to use by mistake, in words.
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

/// `spec/errors.json`: the error classes (`spec/errors.md#error-classes`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorTable {
    /// What the table is (`_doc`).
    #[serde(rename = "_doc")]
    pub doc: String,
    /// One entry per class (= one `ErrorClass` variant).
    pub classes: Vec<ErrorClassInfo>,
}

/// One error class.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorClassInfo {
    /// Class id (e.g. `gguf.tensor_n_dims`).
    pub id: String,
    /// The phase it belongs to (e.g. `parse`).
    pub phase: String,
    /// What the class means.
    pub summary: String,
}
