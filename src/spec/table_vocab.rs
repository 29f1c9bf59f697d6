//! Vocabulary of the container and mapping tables as types: the `.ninfer` tensor layout ids of
//! `spec/formats.json` and the tensor classes of `spec/mapping.json` (`gguf_tensors[].type`).
//! Deserialized from the tables, so a misspelled id fails when the table loads, and code names
//! a layout by variant, never by a string literal. A layout id read from a `.ninfer` file is
//! input, not a table: the reader looks it up with [`LayoutId::from_name`] and refuses an
//! unknown one with its own class and offset.

use super::verify_vocab::vocabulary;
use serde::{Deserialize, Serialize};
use std::fmt;

vocabulary! {
    /// A `.ninfer` tensor layout of the registry (spec/ninfer-container.md#ninfer-layouts).
    LayoutId {
        /// Little-endian words, row-major (direct formats).
        ContiguousLeV1 => "contiguous-le-v1",
        /// Row-split base/high/scale planes over k padded to 128 (grouped formats).
        RowSplitK128V1 => "row-split-k128-v1",
        /// NVFP4 codes, swizzled E4M3FN block scales and the FP32 divisor.
        BlockscaleK16M128x4V1 => "blockscale-k16-m128x4-v1",
        /// FP8 codes and one BF16 scale per row.
        RowScaleV1 => "row-scale-v1",
    }
}

vocabulary! {
    /// What a GGUF tensor of the mapping holds: the profile's ternary type, or a dense ggml type.
    TensorClass {
        /// The model's ternary type (PQ2_0 or PTQ1_0, chosen per file).
        Ternary => "ternary",
        /// ggml F32.
        F32 => "F32",
        /// ggml BF16.
        Bf16 => "BF16",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_id_is_in_the_table_and_only_those() {
        let ids: Vec<LayoutId> = super::super::get()
            .formats
            .layouts
            .iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(ids, LayoutId::ALL);
        for l in LayoutId::ALL {
            assert_eq!(LayoutId::from_name(l.as_str()), Some(*l));
            assert_eq!(super::super::get().layout(*l).name, *l);
        }
    }

    #[test]
    fn a_misspelled_layout_or_class_fails_at_table_load() {
        let typo = r#"{"name": "row-split-k128-v2", "family": "row_split", "accepts_kinds": ["grouped"],
                       "alignment": 256, "encoded_size": ""}"#;
        let e = serde_json::from_str::<super::super::Layout>(typo).unwrap_err();
        assert!(e.to_string().contains("row-split-k128-v2"), "{e}");
        // Control: the same entry with the right id loads.
        let good = typo.replace("-v2", "-v1");
        assert!(serde_json::from_str::<super::super::Layout>(&good).is_ok());
        assert!(serde_json::from_str::<TensorClass>("\"Ternary\"").is_err());
        assert!(serde_json::from_str::<TensorClass>("\"f32\"").is_err());
        for c in TensorClass::ALL {
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(serde_json::from_str::<TensorClass>(&json).unwrap(), *c);
        }
        assert_eq!(LayoutId::from_name("ggml-blocks-v1"), None);
    }

    #[test]
    fn a_misspelled_id_in_the_real_tables_is_spec_invalid() {
        use super::super::{try_parse_text, Formats, HadamardTable, Mapping};
        use crate::ErrorClass;
        let src = |name: &str| match name {
            "mapping.json" => include_str!("../../spec/mapping.json"),
            _ => super::super::source(name),
        };
        let edit = |name: &str, from: &str, to: &str| {
            let t = src(name);
            assert!(t.contains(from), "{name} lacks {from}");
            t.replacen(from, to, 1)
        };
        // Controls: the tables as compiled in load.
        assert!(try_parse_text::<Formats>("formats.json", src("formats.json")).is_ok());
        assert!(try_parse_text::<HadamardTable>("hadamard.json", src("hadamard.json")).is_ok());
        assert!(try_parse_text::<Mapping>("mapping.json", src("mapping.json")).is_ok());
        let bad = [
            try_parse_text::<Formats>(
                "formats.json",
                &edit(
                    "formats.json",
                    "\"row-split-k128-v1\"",
                    "\"row-split-k128-v2\"",
                ),
            )
            .map(drop),
            try_parse_text::<HadamardTable>(
                "hadamard.json",
                &edit("hadamard.json", "\"contiguous-le-v1\"", "\"contiguous-le\""),
            )
            .map(drop),
            try_parse_text::<Mapping>(
                "mapping.json",
                &edit(
                    "mapping.json",
                    "\"type\": \"ternary\"",
                    "\"type\": \"Ternary\"",
                ),
            )
            .map(drop),
        ];
        for r in bad {
            let e = r.unwrap_err();
            assert_eq!(e.class(), ErrorClass::SpecInvalid, "{e}");
        }
    }
}
