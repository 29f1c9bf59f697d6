//! The GGUF container: a zero-copy reader and a deterministic writer (the hostile-input catalog
//! that exercises them is `corpus::catalogs::gguf_hostile`).
//!
//! Reading a file: the parsed [`Gguf`] borrows the bytes; [`GgufFile`] owns a read-only memory
//! map of the file and parses it:
//!
//! ```no_run
//! # fn main() -> ninfer_ternary::Result<()> {
//! use ninfer_ternary::gguf;
//! let file = gguf::GgufFile::open(std::path::Path::new("model.gguf"))?;
//! let g = file.parse(gguf::Mode::Strict)?;
//! # let _ = g; Ok(()) }
//! ```
//!
//! or hold the bytes yourself and [`parse`] them.
//!
//! Two modes:
//! * [`Mode::Spec`] follows `ggml/docs/gguf.md`: names ≤ 64 bytes, offsets aligned, tensors must not
//!   overlap, `general.architecture` optional.
//! * [`Mode::Strict`] follows mainline `gguf.cpp`: names < 64 bytes, each offset equals the running
//!   sum of padded sizes, `general.architecture` required; and refuses NUL twins (keys or tensor
//!   names equal up to a NUL byte, `gguf.name_nul_twin`, layer `recommended`: mainline accepts
//!   them but its C-string API hands them out as one name).
//!
//! Both modes refuse duplicate keys (the spec says keys are unique; one class), `n_dims` 0 and
//! alignments that are not a non-zero power of two (`gguf.md` says "a multiple of 8", mainline
//! says "power of two"; the mainline rule is what every loader enforces, so it is used in both
//! modes — 1, 2 and 4 are accepted, 24 is not).
//!
//! Further decisions where the sources leave room:
//! * `n_dims` 0 is refused in both modes (an earlier transcription says 1..=4; mainline only refuses > 4).
//! * `general.alignment` = 2^31 is a power of two and accepted, as mainline does; a file with
//!   tensors then fails cleanly because the data section starts past EOF
//!   (`gguf.tensor_out_of_bounds`).
//! * Overflow classes: element count > i64::MAX or a byte stride wrapping u64 →
//!   `gguf.tensor_element_overflow`; total bytes > i64::MAX, a running padded sum or an end
//!   offset wrapping → `gguf.tensor_size_overflow`.
//! * Bounds need `data_offset + offset + nbytes <= file length`; the last tensor's padding may be
//!   missing (mainline's loader does not read it either).
//! * Id 42 ([`Id42Policy::Auto`]): a candidate fits when `nbytes <= span <= align_up(nbytes)`,
//!   span = next greater offset (or the data end) minus this offset. Decided tensors must agree
//!   (one layout per file, else `gguf.id42_ambiguous`); tensors too small to tell follow them, or
//!   mainline g64 with a warning. A last tensor shorter than both candidates is left to the
//!   bounds check (it is a truncation, not an ambiguity).

mod cursor;
mod endian;
mod header;
mod id42;
mod kv_block;
mod layout;
mod name_hash;
mod nul_twin;
mod reader;
mod rule_layer;
mod tensor_infos;
/// Whole-file ternary transcoding and the id-42 retag, streamed.
#[cfg(feature = "internals")]
pub mod transcode;
#[cfg(not(feature = "internals"))]
pub(crate) mod transcode;
mod value;
mod writer;

pub use endian::{is_big_endian, swap_byte_order, swap_byte_order_with, ByteOrder};
pub use header::{MIN_KV_BYTES, MIN_TENSOR_INFO_BYTES};
pub use nul_twin::c_string_form;
pub use reader::{parse, parse_with, Gguf, Kv, TensorInfo};
pub use rule_layer::RuleLayer;
pub use value::{ArrayView, MetaValue, Scalar, StrIter, Value, ValueType};
pub use writer::{GgufStream, GgufWriter, WriterTensor};

use crate::error::{ErrorClass, Result};
use crate::spec::GgmlType;

/// Which rule set the reader applies (see the module docs); `inspect --mode` spells it
/// `spec` or `strict` (clap refuses any other spelling before the command runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Mode {
    /// `ggml/docs/gguf.md` rules.
    Spec,
    /// Mainline `gguf.cpp` + loader + recommended rules.
    Strict,
}

impl Mode {
    /// The command-line spelling (`spec`, `strict`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Spec => "spec",
            Mode::Strict => "strict",
        }
    }
}

/// How to read ggml type 42, which means mainline Q2_0 (g64, 18 B) or legacy Prism Q2_0 (g128, 34 B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Id42Policy {
    /// Decide per file from the tensors' byte spans (`spec/ggml_types.json` `id42_disambiguation`).
    #[default]
    Auto,
    /// Always mainline g64 (what mainline llama.cpp does; useful to reproduce its errors).
    Mainline,
    /// Always legacy Prism g128.
    LegacyPrism,
}

/// Reader options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The rule set.
    pub mode: Mode,
    /// How type id 42 is read.
    pub id42: Id42Policy,
}

impl From<Mode> for Options {
    fn from(mode: Mode) -> Options {
        Options {
            mode,
            id42: Id42Policy::Auto,
        }
    }
}

/// `(n_elements, nbytes)` of a tensor with dims `ne` (innermost first) of type `t`, all checked:
/// element count > i64::MAX or a byte stride (row, plane, ...) overflowing u64 →
/// `gguf.tensor_element_overflow`; `ne[0]` not a block multiple → `gguf.tensor_block_multiple`;
/// total bytes > i64::MAX (e.g. F32 `ne[0] = SIZE_MAX/4`, where GGML_PAD would wrap to 0) →
/// `gguf.tensor_size_overflow`.
pub fn tensor_size(
    ne: &[u64],
    t: &GgmlType,
) -> std::result::Result<(u64, u64), (ErrorClass, String)> {
    planted!("gguf_dims3_mul_wraps", {
        if ne.len() == 3 {
            let mut product: u64 = 1;
            for &d in ne {
                product *= d;
            }
            std::hint::black_box(product);
        }
    });
    let mut n: u64 = 1;
    for &d in ne {
        n = n.checked_mul(d).filter(|&x| x <= i64::MAX as u64).ok_or((
            ErrorClass::GgufTensorElementOverflow,
            format!("element count of dims {ne:?} overflows 63 bits"),
        ))?;
    }
    let be = t.block_elems.max(1) as u64;
    let ne0 = ne.first().copied().unwrap_or(1);
    if ne0 % be != 0 && crate::error::enforced(ErrorClass::GgufTensorBlockMultiple) {
        return Err((
            ErrorClass::GgufTensorBlockMultiple,
            format!("ne[0] = {ne0} is not a multiple of the block size {be}"),
        ));
    }
    // Strides nb[1..n_dims]: row bytes, then times each outer dim except the last.
    let mut stride = (ne0 / be).checked_mul(t.block_bytes as u64).ok_or((
        ErrorClass::GgufTensorElementOverflow,
        format!("row stride of ne[0] = {ne0} overflows u64"),
    ))?;
    for (k, &d) in ne.iter().enumerate().skip(1) {
        let last = k + 1 == ne.len();
        stride = match stride.checked_mul(d) {
            Some(s) => s,
            None if last => {
                return Err((
                    ErrorClass::GgufTensorSizeOverflow,
                    format!("byte size of dims {ne:?} overflows u64"),
                ))
            }
            None => {
                return Err((
                    ErrorClass::GgufTensorElementOverflow,
                    format!("byte stride nb[{}] of dims {ne:?} overflows u64", k + 1),
                ))
            }
        };
    }
    if stride > i64::MAX as u64 {
        return Err((
            ErrorClass::GgufTensorSizeOverflow,
            format!("byte size {stride} of dims {ne:?} exceeds i64::MAX (padding it to the alignment would wrap)"),
        ));
    }
    Ok((n, stride))
}

/// An owned memory map plus parse, for callers that do not want to hold the map themselves.
pub struct GgufFile {
    map: crate::fsio::Mapped,
}

impl GgufFile {
    /// Maps `path` (read-only).
    pub fn open(path: &std::path::Path) -> Result<GgufFile> {
        Ok(GgufFile {
            map: crate::fsio::map_file(path)?,
        })
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Parses the map under `mode`.
    pub fn parse(&self, mode: Mode) -> Result<Gguf<'_>> {
        parse(&self.map, mode)
    }

    /// Parses the map with `opts`.
    pub fn parse_with(&self, opts: Options) -> Result<Gguf<'_>> {
        parse_with(&self.map, opts)
    }
}
