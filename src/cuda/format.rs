//! The weight format of a kernel case or a kernel, parsed once from its spelling at the
//! boundaries (spec tables, `--format`, an `--abi` sidecar, a `.kcase` bundle's meta) and
//! matched, never string-compared, inside `cuda`. [`KernelFormat::name`] gives the spelling
//! back for case names, seeds and reports, so every output keeps its bytes.

use crate::codec::{Codec, TernaryType};
use crate::error::{Error, ErrorClass, Result};

/// A format the kernel cases know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelFormat {
    /// ggml blocks of a block codec (`pq2_0`, `ptq1_0`, `q2_0_g64`, `tq1_0`, `tq2_0`,
    /// `q2_0s_planar`), spelled by the codec's name.
    Blocks(Codec),
    /// `q2_0_g128_legacy`: PQ2_0 blocks under the legacy type name (same codec as
    /// `Blocks(Codec::Pq2_0)`, kept apart because its cases and kernels are named by it).
    Q2G128Legacy,
    /// A `.ninfer` row-split object of a ternary type's planes (`PQ2_0_G128`, `PTQ1_0_G128`).
    Planes(TernaryType),
    /// Plain f32 vectors (`hadamard_rotate`).
    F32,
}

/// The block codecs a kernel case may hold.
const BLOCK_CODECS: [Codec; 6] = [
    Codec::Pq2_0,
    Codec::Q2_0G64,
    Codec::Ptq1_0,
    Codec::Tq1_0,
    Codec::Tq2_0,
    Codec::Q2_0sPlanar,
];

impl KernelFormat {
    /// PQ2_0 blocks.
    #[cfg(any(test, feature = "internals"))]
    pub const PQ2_0: KernelFormat = KernelFormat::Blocks(Codec::Pq2_0);
    /// PTQ1_0 blocks.
    pub const PTQ1_0: KernelFormat = KernelFormat::Blocks(Codec::Ptq1_0);

    /// The spelling (`pq2_0`, `q2_0_g128_legacy`, `PQ2_0_G128`, `f32`).
    pub fn name(self) -> &'static str {
        match self {
            KernelFormat::Blocks(c) => c.name(),
            KernelFormat::Q2G128Legacy => "q2_0_g128_legacy",
            KernelFormat::Planes(t) => &t.format().name,
            KernelFormat::F32 => "f32",
        }
    }

    /// The format spelled `s`; `None` for a name no kernel case uses.
    pub fn of_name(s: &str) -> Option<KernelFormat> {
        if let Some(ty) = TernaryType::of_format_name(s) {
            return Some(KernelFormat::Planes(ty));
        }
        match s {
            "q2_0_g128_legacy" => Some(KernelFormat::Q2G128Legacy),
            "f32" => Some(KernelFormat::F32),
            _ => BLOCK_CODECS
                .into_iter()
                .find(|c| c.name() == s)
                .map(KernelFormat::Blocks),
        }
    }

    /// [`Self::of_name`], or an error of `class` naming `field`.
    pub fn parse(s: &str, class: ErrorClass, field: &str) -> Result<KernelFormat> {
        Self::of_name(s)
            .ok_or_else(|| Error::new(class, field, format!("no kernel cases use format {s:?}")))
    }

    /// Every spelling of `names` parsed ([`Self::parse`]).
    pub fn parse_all(
        names: &[String],
        class: ErrorClass,
        field: &str,
    ) -> Result<Vec<KernelFormat>> {
        names.iter().map(|s| Self::parse(s, class, field)).collect()
    }

    /// The codec that decodes its blocks (a planes format: its type's codec); `None` for f32.
    pub fn block_codec(self) -> Option<Codec> {
        match self {
            KernelFormat::Blocks(c) => Some(c),
            KernelFormat::Q2G128Legacy => Some(Codec::Pq2_0),
            KernelFormat::Planes(t) => Some(t.codec()),
            KernelFormat::F32 => None,
        }
    }

    /// [`Self::block_codec`], or a `cli.usage` error on `format` for f32.
    pub fn codec(self) -> Result<Codec> {
        self.block_codec().ok_or_else(|| {
            Error::new(
                ErrorClass::CliUsage,
                "format",
                format!("no kernel cases use format {:?}", self.name()),
            )
        })
    }
}

/// The formats `spec/kernels.json` lists for `class`, parsed.
pub fn class_formats(class: super::KernelClass) -> Result<Vec<KernelFormat>> {
    KernelFormat::parse_all(
        &class.spec().formats,
        ErrorClass::SpecInvalid,
        &format!("spec/kernels.json {}.formats", class.name()),
    )
}

/// Ordered by spelling (each format has exactly one), so keyed maps order as they did on names.
impl Ord for KernelFormat {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for KernelFormat {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for KernelFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every format a kernel class lists in spec/kernels.json parses and spells back.
    #[test]
    fn spec_formats_round_trip() {
        for class in crate::cuda::KernelClass::ALL {
            for f in &class.spec().formats {
                let k = KernelFormat::of_name(f).unwrap_or_else(|| panic!("{f}"));
                assert_eq!(k.name(), f);
            }
        }
        // Unusual but valid: the legacy alias is its own format with PQ2_0's codec.
        let legacy = KernelFormat::of_name("q2_0_g128_legacy").unwrap();
        assert_ne!(legacy, KernelFormat::Blocks(Codec::Pq2_0));
        assert_eq!(legacy.codec().unwrap(), Codec::Pq2_0);
        assert_eq!(
            KernelFormat::of_name("PTQ1_0_G128"),
            Some(KernelFormat::Planes(TernaryType::Ptq1_0))
        );
    }

    /// Names no kernel case uses are refused with the field named: other codecs, other case.
    #[test]
    fn unknown_names_are_refused() {
        for bad in ["q8_0", "PQ2_0", "F32", "pq2_0 ", "", "BF16"] {
            assert_eq!(KernelFormat::of_name(bad), None, "{bad:?}");
        }
        let e = KernelFormat::parse("q8_0", ErrorClass::KernelAbi, "formats").unwrap_err();
        assert_eq!(e.class(), ErrorClass::KernelAbi);
        assert!(e.to_string().contains("formats"), "{e}");
        assert!(KernelFormat::F32.codec().is_err());
    }
}
