//! One name for a ternary GGUF format. [`TernaryType::Pq2_0`] is the `spec/ggml_types.json`
//! `types` entry whose codec is [`Codec::Pq2_0`] (PQ2_0, id 142, also known as `Q2_0_G128`);
//! [`TernaryType::Ptq1_0`] the one whose codec is [`Codec::Ptq1_0`] (PTQ1_0, id 143). Ids and
//! names come from the table, never from literals, so the synthesizer, `transcode` and the
//! tables cannot drift apart.

use super::Codec;
use crate::spec::{GgmlType, NumericFormat};
use std::sync::OnceLock;

/// A ternary GGUF format that this suite writes and transcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TernaryType {
    /// PQ2_0 (2-bit codes, 34 B per 128 weights).
    Pq2_0,
    /// PTQ1_0 (base-3, 28 B per 128 weights).
    Ptq1_0,
}

impl TernaryType {
    /// Every ternary format.
    pub const ALL: [TernaryType; 2] = [TernaryType::Pq2_0, TernaryType::Ptq1_0];

    /// The codec that decodes this format.
    pub const fn codec(self) -> Codec {
        match self {
            TernaryType::Pq2_0 => Codec::Pq2_0,
            TernaryType::Ptq1_0 => Codec::Ptq1_0,
        }
    }

    /// The `types` entry of `spec/ggml_types.json` decoded by [`Self::codec`] (legacy variants
    /// sharing the codec are not `types` entries). The embedded table has exactly one; a unit
    /// test keeps it so.
    pub fn ggml(self) -> &'static GgmlType {
        let name = self.codec().name();
        // cannot fire: `spec/ggml_types.json` is compiled in and the unit test of this module
        // checks that each TernaryType's codec names exactly one `types` entry.
        #[allow(clippy::panic)]
        let t = crate::spec::get()
            .ggml
            .types
            .iter()
            .find(|t| t.codec.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("spec/ggml_types.json has no type with codec {name}"));
        t
    }

    /// The GGUF type id (142 / 143 in the table).
    pub fn type_id(self) -> u32 {
        self.ggml().id
    }

    /// The table name (`PQ2_0`, `PTQ1_0`).
    pub fn name(self) -> &'static str {
        &self.ggml().name
    }

    /// Bytes per 128-element block.
    pub fn block_bytes(self) -> usize {
        self.codec().block_bytes()
    }

    /// The format of a tensor whose resolved type is `t` (only the `types` entries themselves:
    /// a legacy id-42 tensor is retagged, not transcoded).
    pub fn of_ggml(t: &GgmlType) -> Option<TernaryType> {
        TernaryType::ALL
            .into_iter()
            .find(|ty| ty.ggml().id == t.id && ty.ggml().name == t.name)
    }

    /// The `.ninfer` numeric format (the `spec/formats.json` row, `PQ2_0_G128` /
    /// `PTQ1_0_G128`) whose planes hold this type's blocks.
    pub fn format(self) -> &'static NumericFormat {
        let name = self.name();
        // cannot fire: spec/formats.json is compiled in and the unit test
        // `every_type_has_one_ninfer_format_and_back` looks every TernaryType's format up.
        #[allow(clippy::panic)]
        let f = crate::spec::get()
            .ternary_format_for_ggml(name)
            .unwrap_or_else(|| panic!("spec/formats.json has no ternary format of {name}"));
        f
    }

    /// The ternary type a `.ninfer` numeric format holds (`None` for every other format).
    pub fn of_format(f: &NumericFormat) -> Option<TernaryType> {
        let t = f.ternary.as_ref()?;
        TernaryType::ALL
            .into_iter()
            .find(|ty| ty.name() == t.ggml_type)
    }

    /// [`Self::of_format`] by registry name (`PQ2_0_G128`), as a directory's `format` spells
    /// it; `None` for a name the registry lacks or a non-ternary format.
    pub fn of_format_name(name: &str) -> Option<TernaryType> {
        crate::spec::get().format(name).and_then(Self::of_format)
    }

    /// The other ternary format (the target of a transcode).
    pub fn other(self) -> TernaryType {
        match self {
            TernaryType::Pq2_0 => TernaryType::Ptq1_0,
            TernaryType::Ptq1_0 => TernaryType::Pq2_0,
        }
    }

    /// The command-line spellings, all from the table: the lower-case table name (`pq2_0`,
    /// the one `--help` shows), the name without its `_0` suffix (`pq2`), the `aka` names
    /// (`q2_0_g128`) and the id (`142`). Matched case-insensitively.
    pub fn cli_spellings(self) -> &'static [String] {
        static SPELLINGS: OnceLock<[Vec<String>; 2]> = OnceLock::new();
        let all = SPELLINGS.get_or_init(|| {
            TernaryType::ALL.map(|ty| {
                let g = ty.ggml();
                let name = g.name.to_ascii_lowercase();
                let mut v = vec![name.clone(), name.trim_end_matches("_0").to_string()];
                v.extend(g.aka.iter().map(|a| a.to_ascii_lowercase()));
                v.push(g.id.to_string());
                v
            })
        });
        &all[self as usize]
    }

    /// Parses a command-line name, case-insensitively: one of [`Self::cli_spellings`].
    pub fn parse(s: &str) -> Option<TernaryType> {
        TernaryType::ALL
            .into_iter()
            .find(|ty| ty.cli_spellings().iter().any(|n| s.eq_ignore_ascii_case(n)))
    }
}

/// `--format` / `--to` values: clap refuses any spelling [`TernaryType::parse`] refuses before
/// a command runs (the CLI reports it as `cli.usage`).
impl clap::ValueEnum for TernaryType {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        // Every ternary type has its table name first (see `cli_spellings`); an empty list
        // would only hide the value from `--help`.
        let [name, aliases @ ..] = self.cli_spellings() else {
            return None;
        };
        Some(
            clap::builder::PossibleValue::new(name.as_str())
                .aliases(aliases.iter().map(|a| a.as_str())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_one_table_entry_with_matching_sizes() {
        let spec = crate::spec::get();
        for ty in TernaryType::ALL {
            let n = spec
                .ggml
                .types
                .iter()
                .filter(|t| t.codec.as_deref() == Some(ty.codec().name()))
                .count();
            assert_eq!(n, 1, "{ty:?}");
            let g = ty.ggml();
            assert_eq!(g.block_bytes as usize, ty.block_bytes());
            assert_eq!(g.block_elems as usize, ty.codec().block_elems());
            assert_eq!(TernaryType::of_ggml(g), Some(ty));
            assert_eq!(ty.other().other(), ty);
        }
        assert_eq!(TernaryType::Pq2_0.type_id(), 142);
        assert_eq!(TernaryType::Ptq1_0.type_id(), 143);
    }

    #[test]
    fn parse_accepts_the_table_names_and_refuses_others() {
        for s in ["pq2_0", "PQ2_0", "pq2", "142", "q2_0_g128"] {
            assert_eq!(TernaryType::parse(s), Some(TernaryType::Pq2_0), "{s}");
        }
        for s in ["ptq1_0", "ptq1", "143"] {
            assert_eq!(TernaryType::parse(s), Some(TernaryType::Ptq1_0), "{s}");
        }
        for s in ["", "q2_0", "42", "pq2_1", "tq1_0"] {
            assert_eq!(TernaryType::parse(s), None, "{s}");
        }
        // clap's matcher agrees with parse on every spelling (ignore_case, as the CLI sets it).
        use clap::ValueEnum;
        for s in [
            "pq2_0",
            "PQ2_0",
            "pq2",
            "142",
            "q2_0_g128",
            "ptq1_0",
            "Ptq1",
            "143",
            "q2_0",
            "42",
            "",
        ] {
            assert_eq!(
                TernaryType::from_str(s, true).ok(),
                TernaryType::parse(s),
                "{s}"
            );
        }
        // The legacy id-42 variant shares PQ2_0's codec but is not PQ2_0.
        let legacy = crate::spec::get()
            .ggml_type_named("Q2_0_PRISM_LEGACY")
            .unwrap();
        assert_eq!(TernaryType::of_ggml(legacy), None);
    }

    #[test]
    fn every_type_has_one_ninfer_format_and_back() {
        for ty in TernaryType::ALL {
            let f = ty.format();
            assert_eq!(TernaryType::of_format(f), Some(ty));
            assert_eq!(TernaryType::of_format_name(&f.name), Some(ty));
        }
        assert_eq!(TernaryType::Pq2_0.format().name, "PQ2_0_G128");
        assert_eq!(TernaryType::Ptq1_0.format().name, "PTQ1_0_G128");
        // Non-ternary formats and unknown names are no ternary type.
        assert_eq!(TernaryType::of_format_name("BF16"), None);
        assert_eq!(TernaryType::of_format_name("Q4G64_F16S"), None);
        assert_eq!(TernaryType::of_format_name("PQ2_0"), None);
    }
}
