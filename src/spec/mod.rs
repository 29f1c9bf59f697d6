//! Typed views of the `spec/*.json` tables — the single source of truth.
//!
//! The tables are compiled in with `include_str!` and parsed once with
//! `deny_unknown_fields`, so a typo in a table is a test failure, not a silent default.
//! Code reads formats, geometry constants, type ids and error classes from here.
//!
//! ```
//! use ninfer_ternary::spec;
//!
//! // The tables are data: PQ2_0 is ggml type 142, decoded by the pq2_0 codec.
//! let s = spec::get();
//! let t = s.ggml.types.iter().find(|t| t.id == 142).unwrap();
//! assert_eq!(t.name, "PQ2_0");
//! assert!(s.format("PQ2_0_G128").is_some());
//! ```

use serde::Deserialize;
use std::sync::OnceLock;

pub mod citations;
mod gates;
mod kernels;
mod model;
mod table_vocab;
mod tables;
mod tiling;
mod verify_vocab;
pub use gates::*;
pub use kernels::*;
pub use model::*;
pub use table_vocab::{LayoutId, TensorClass};
pub use tables::*;
pub use tiling::HeadTiling;
pub use verify_vocab::{GateStep, MutationKind, MutationTarget};

/// All tables, parsed.
#[derive(Debug)]
pub struct Spec {
    /// `container.json`.
    pub container: Container,
    /// `formats.json`.
    pub formats: Formats,
    /// `geometry.json`.
    pub geometry: GeometryTable,
    /// `ggml_types.json`.
    pub ggml: GgmlTypes,
    /// `gguf.json`.
    pub gguf: GgufTable,
    /// `codecs.json`.
    pub codecs: CodecTable,
    /// `permutations.json`.
    pub permutations: Permutations,
    /// `hadamard.json`.
    pub hadamard: HadamardTable,
    /// `errors.json`.
    pub errors: ErrorTable,
    /// `kernels.json`.
    pub kernels: KernelsTable,
    /// `kernel_variants.json`.
    pub kernel_variants: KernelVariantsTable,
}

/// The raw JSON text of each table, by file name (for the `spec` command and tests).
pub const SOURCES: &[(&str, &str)] = &[
    ("container.json", include_str!("../../spec/container.json")),
    ("formats.json", include_str!("../../spec/formats.json")),
    ("geometry.json", include_str!("../../spec/geometry.json")),
    (
        "ggml_types.json",
        include_str!("../../spec/ggml_types.json"),
    ),
    ("gguf.json", include_str!("../../spec/gguf.json")),
    ("codecs.json", include_str!("../../spec/codecs.json")),
    (
        "permutations.json",
        include_str!("../../spec/permutations.json"),
    ),
    ("hadamard.json", include_str!("../../spec/hadamard.json")),
    ("errors.json", include_str!("../../spec/errors.json")),
    ("kernels.json", include_str!("../../spec/kernels.json")),
    (
        "kernel_variants.json",
        include_str!("../../spec/kernel_variants.json"),
    ),
];

/// The compiled-in text of table `name` (empty for a name [`SOURCES`] lacks, which
/// [`parse_text`] then refuses naming the table).
fn source(name: &str) -> &'static str {
    SOURCES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, s)| *s)
}

fn parse<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    parse_text(name, source(name))
}

/// The one loader of every spec table: strict schema (`deny_unknown_fields` on the types),
/// and a panic naming the table on mismatch (tables are compiled in, so this is a build defect).
pub(crate) fn parse_text<T: for<'de> Deserialize<'de>>(name: &str, text: &str) -> T {
    match try_parse_text(name, text) {
        Ok(v) => v,
        // cannot fire: the tables are compiled in (`include_str!`) and the unit tests parse
        // every one of them (`spec::tests`), so a malformed table never leaves `cargo test`.
        #[allow(clippy::panic)]
        Err(e) => panic!("{e}"),
    }
}

/// Parses a table's text against its schema; `spec.invalid` with the table, line and column
/// when it does not match (an unknown field, or a vocabulary word no enum variant names).
pub fn try_parse_text<T: for<'de> Deserialize<'de>>(name: &str, text: &str) -> crate::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        crate::Error::new(
            crate::ErrorClass::SpecInvalid,
            format!("spec/{name} line {} column {}", e.line(), e.column()),
            format!("does not match its schema: {e}"),
        )
    })
}

impl Spec {
    /// Parses every table (use [`get`] for the shared instance).
    pub fn load() -> Spec {
        Spec {
            container: parse("container.json"),
            formats: parse("formats.json"),
            geometry: parse("geometry.json"),
            ggml: parse("ggml_types.json"),
            gguf: parse("gguf.json"),
            codecs: parse("codecs.json"),
            permutations: parse("permutations.json"),
            hadamard: parse("hadamard.json"),
            errors: parse("errors.json"),
            kernels: parse("kernels.json"),
            kernel_variants: parse("kernel_variants.json"),
        }
    }

    /// A numeric format of the ninfer registry by name.
    pub fn format(&self, name: &str) -> Option<&NumericFormat> {
        self.formats.formats.iter().find(|f| f.name == name)
    }

    /// The registry entry of a tensor layout (every [`LayoutId`] has one: a test checks it).
    pub fn layout(&self, id: LayoutId) -> &Layout {
        // cannot fire: spec/formats.json is compiled in and a spec test looks every LayoutId up.
        #[allow(clippy::expect_used)]
        let l = self
            .formats
            .layouts
            .iter()
            .find(|l| l.name == id)
            .expect("every LayoutId is in spec/formats.json");
        l
    }

    /// A tensor layout by its spelling in a file, if the registry has it.
    pub fn layout_named(&self, name: &str) -> Option<&Layout> {
        LayoutId::from_name(name).map(|id| self.layout(id))
    }

    /// A mainline/Prism ggml type by id (the primary meaning of the id; see `ggml.variants` for forks).
    pub fn ggml_type(&self, id: u32) -> Option<&GgmlType> {
        self.ggml.types.iter().find(|t| t.id == id)
    }

    /// A ggml type or fork variant by name.
    pub fn ggml_type_named(&self, name: &str) -> Option<&GgmlType> {
        self.ggml
            .types
            .iter()
            .chain(self.ggml.variants.iter())
            .find(|t| t.name == name)
    }

    /// The ninfer ternary format whose GGUF type has this name (PQ2_0 -> PQ2_0_G128).
    pub fn ternary_format_for_ggml(&self, ggml_name: &str) -> Option<&NumericFormat> {
        self.formats
            .formats
            .iter()
            .find(|f| f.ternary.as_ref().is_some_and(|t| t.ggml_type == ggml_name))
    }
}

/// The shared, lazily parsed spec.
pub fn get() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(Spec::load)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses_with_its_schema() {
        let s = Spec::load();
        assert_eq!(s.container.prefix_bytes, 16);
        assert!(s.formats.formats.len() >= 11);
        assert!(!s.ggml.types.is_empty());
    }

    #[test]
    fn ternary_formats_match_the_ggml_type_table() {
        let s = get();
        for f in &s.formats.formats {
            let Some(t) = &f.ternary else { continue };
            let g = s
                .ggml_type_named(&t.ggml_type)
                .expect("ternary format names a ggml type");
            let group = f.group_size.unwrap();
            assert_eq!(g.block_elems as u64, group, "{}: group size", f.name);
            let per_group = f.base_bytes_per_group.unwrap()
                + f.high_bytes_per_group.unwrap()
                + f.scale_bytes_per_group.unwrap();
            assert_eq!(
                g.block_bytes as u64, per_group,
                "{}: block bytes = base + high + scale",
                f.name
            );
            // The plane slices tile the block exactly once.
            let mut covered = vec![0u8; g.block_bytes as usize];
            for (lo, hi) in t.block_plane_slices.planes().into_iter().flatten() {
                for b in &mut covered[lo as usize..hi as usize] {
                    *b += 1;
                }
            }
            assert!(
                covered.iter().all(|&c| c == 1),
                "{}: plane slices tile the block",
                f.name
            );
        }
    }

    #[test]
    fn error_classes_named_by_tables_exist() {
        for r in &get().container.refused_magics {
            assert!(
                crate::ErrorClass::from_id(&r.error_class).is_some(),
                "{}",
                r.error_class
            );
        }
    }

    /// Numbers that appear both in code and in the tables must agree (a table edit that the code
    /// does not follow, or the reverse, fails here).
    #[test]
    fn constants_in_code_agree_with_the_tables() {
        use crate::synth::model::TernaryType;
        let s = get();
        let id = |n: &str| s.ggml_type_named(n).unwrap().id;
        assert_eq!(TernaryType::Pq2_0.type_id(), id("PQ2_0"));
        assert_eq!(TernaryType::Ptq1_0.type_id(), id("PTQ1_0"));
        for n in &s.ggml.id42_disambiguation.candidates {
            assert_eq!(id(n), 42, "{n}");
        }
        // ninfer::layout falls back to rank 16 for direct formats; the table must say 16.
        for l in &s.formats.layouts {
            if l.accepts_kinds.contains(&FormatKind::Direct) {
                assert_eq!(l.max_rank, Some(16), "{}", l.name);
            }
        }
        let m = profile("bonsai-2-27b").unwrap();
        let p = &s.permutations;
        assert_eq!(p.perm48.heads, m.v_heads);
        assert_eq!(p.perm48.group, m.k_heads);
        assert_eq!(p.perm_row.head_dim, m.head_v_dim);
        assert_eq!(p.attn_q_deinterleave.block_rows, m.head_dim);
        assert_eq!(p.attn_q_deinterleave.heads, m.q_heads);
        assert_eq!(p.attn_q_deinterleave.row_multiple, 2 * m.head_dim);
        let h = &s.hadamard.ssm_out_permutation;
        assert_eq!(
            (h.head_dim, h.k_heads, h.rep),
            (m.head_v_dim, m.k_heads, m.v_heads / m.k_heads)
        );
        assert_eq!(
            s.hadamard.artifact_objects.signs.name,
            mapping().sign_objects[0].target
        );
        assert_eq!(
            s.hadamard.artifact_objects.widths.name,
            mapping().sign_objects[1].target
        );
        // The de-interleaver's refusal is the table's message.
        let e = crate::perm::attn_q_deinterleave(768, 256, "q")
            .unwrap_err()
            .to_string();
        let want = p
            .attn_q_deinterleave
            .error
            .replace("<name>", "q")
            .replace("<n>", "768");
        assert!(e.contains(&want), "{e} vs {want}");
    }

    #[test]
    fn ggml_ids_are_unique_and_removed_ids_absent() {
        let s = get();
        let mut ids: Vec<u32> = s.ggml.types.iter().map(|t| t.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        for r in &s.ggml.removed_ids {
            assert!(s.ggml_type(*r).is_none());
        }
    }
}
