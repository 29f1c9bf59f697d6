//! Zero-copy GGUF reader: the parsed types and `parse_with`, a pipeline of phases that each
//! decode and check one part of the file (the way wasmparser separates them): header
//! ([`super::header`]), key/values ([`super::kv_block`]), tensor infos
//! ([`super::tensor_infos`]), then the data layout (id-42 resolution in [`super::id42`],
//! placement and bounds in [`super::layout`]). Every count, length and offset is checked against
//! the bytes that exist before anything is allocated or sliced.

use super::cursor::Cur;
use super::header::read_header;
use super::id42::{id42_candidates, resolve_id42, Geometry};
use super::kv_block::{alignment_of, check_architecture, check_key_nul_twins, read_kvs};
use super::layout::{
    check_bounds, check_no_overlap, check_offsets_aligned, place_tensors, DataSection,
};
use super::name_hash::NameMap;
use super::tensor_infos::{check_name_nul_twins, read_tensor_infos, InfoRules};
use super::value::{ArrayView, Scalar, Value};
use super::{Id42Policy, Mode, Options};
use crate::error::{align_up, Error, ErrorClass as C, Result};
use crate::spec::GgmlType;

/// One metadata key/value pair, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Kv<'a> {
    /// The key (non-empty, unique in the file).
    pub key: &'a str,
    /// The value, borrowing the file bytes.
    pub value: Value<'a>,
    /// Absolute offset of the record (its key length field).
    pub offset: u64,
    /// Absolute offset of the value's type id.
    pub value_offset: u64,
}

/// One tensor-info record with its resolved type and checked layout.
#[derive(Clone, Debug)]
pub struct TensorInfo<'a> {
    /// Position in the tensor-info list.
    pub index: usize,
    /// The tensor name (unique in the file).
    pub name: &'a str,
    /// Number of stored dims (1..=4).
    pub n_dims: u32,
    /// `ne[0]` innermost; entries past `n_dims` are 1.
    pub ne: [u64; 4],
    /// The type id as stored in the file.
    pub type_id: u32,
    /// The resolved type: the `types` entry, or for id 42 possibly the legacy Prism `variants` entry.
    pub ggml: &'static GgmlType,
    /// Offset relative to the data section.
    pub offset: u64,
    /// Absolute offset in the file.
    pub abs_offset: u64,
    /// Data bytes (without padding) for the resolved type.
    pub nbytes: u64,
    /// Product of the dims.
    pub n_elements: u64,
    /// Absolute offset of the tensor-info record.
    pub info_offset: u64,
}

impl TensorInfo<'_> {
    /// The ternary format of this tensor's resolved type (`None` for every other type,
    /// including the legacy id-42 variant, which is retagged rather than transcoded).
    pub fn ternary_type(&self) -> Option<crate::codec::TernaryType> {
        crate::codec::TernaryType::of_ggml(self.ggml)
    }

    /// The dims actually stored (`ne[..n_dims]`).
    pub fn dims(&self) -> &[u64] {
        &self.ne[..self.n_dims as usize]
    }

    /// `gguf.tensor_shape` unless the dims equal `dims` and (when given) the resolved type is `ggml_name`.
    pub fn expect(&self, dims: &[u64], ggml_name: Option<&str>) -> Result<()> {
        if self.dims() != dims {
            return Err(Error::at(
                C::GgufTensorShape,
                self.info_offset,
                self.name,
                format!(
                    "tensor '{}' has dims {:?}, expected {:?}",
                    self.name,
                    self.dims(),
                    dims
                ),
            ));
        }
        if let Some(want) = ggml_name {
            if self.ggml.name != want {
                return Err(Error::at(
                    C::GgufTensorShape,
                    self.info_offset,
                    self.name,
                    format!(
                        "tensor '{}' has type {} (id {}), expected {want}",
                        self.name, self.ggml.name, self.type_id
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A parsed GGUF file borrowing its bytes.
#[derive(Debug)]
pub struct Gguf<'a> {
    /// The header version (2 or 3).
    pub version: u32,
    /// The rule set the file was parsed under.
    pub mode: Mode,
    /// The data alignment (`general.alignment` or the default 32).
    pub alignment: u64,
    /// Absolute offset of the data section: `align_up(end of tensor infos, alignment)`.
    pub data_offset: u64,
    /// Absolute offset where the tensor-info list starts (= end of the KV block).
    pub tensor_info_offset: u64,
    /// Absolute offset where the tensor-info list ends.
    pub tensor_info_end: u64,
    /// The metadata, in file order.
    pub kvs: Vec<Kv<'a>>,
    /// The tensor infos, in file order.
    pub tensors: Vec<TensorInfo<'a>>,
    /// Non-fatal findings, e.g. legacy id-42 tensors that should be retagged.
    pub warnings: Vec<String>,
    bytes: &'a [u8],
    kv_index: NameMap<'a>,
    tensor_index: NameMap<'a>,
}

impl<'a> Gguf<'a> {
    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.kv_index.get(key).map(|&i| &self.kvs[i].value)
    }

    /// The record of `key`, if present.
    pub fn kv(&self, key: &str) -> Option<&Kv<'a>> {
        self.kv_index.get(key).map(|&i| &self.kvs[i])
    }

    fn require(&self, key: &str) -> Result<&Kv<'a>> {
        self.kv(key).ok_or_else(|| {
            Error::new(
                C::GgufMetadataMissing,
                key,
                format!("required metadata key '{key}' is absent"),
            )
        })
    }

    fn type_err(kv: &Kv<'_>, want: &str) -> Error {
        Error::at(
            C::GgufMetadataType,
            kv.value_offset,
            kv.key,
            format!(
                "'{}' is {}, the consumer requires {want}",
                kv.key,
                kv.value.value_type()
            ),
        )
    }

    /// A required scalar of exactly type `T` (`gguf.metadata_missing` / `gguf.metadata_type`).
    pub fn get_as<T: Scalar>(&self, key: &str) -> Result<T> {
        let kv = self.require(key)?;
        T::from_value(&kv.value).ok_or_else(|| Self::type_err(kv, T::TYPE.name()))
    }

    /// A required U32.
    pub fn get_u32(&self, key: &str) -> Result<u32> {
        self.get_as(key)
    }
    /// A required I32.
    pub fn get_i32(&self, key: &str) -> Result<i32> {
        self.get_as(key)
    }
    /// A required U64.
    pub fn get_u64(&self, key: &str) -> Result<u64> {
        self.get_as(key)
    }
    /// A required F32.
    pub fn get_f32(&self, key: &str) -> Result<f32> {
        self.get_as(key)
    }
    /// A required BOOL.
    pub fn get_bool(&self, key: &str) -> Result<bool> {
        self.get_as(key)
    }

    /// Any non-negative integer type widened to u64.
    pub fn get_uint(&self, key: &str) -> Result<u64> {
        let kv = self.require(key)?;
        kv.value
            .as_u64_lossless()
            .ok_or_else(|| Self::type_err(kv, "a non-negative integer"))
    }

    /// A required STRING.
    pub fn get_str(&self, key: &str) -> Result<&'a str> {
        let kv = self.require(key)?;
        kv.value
            .as_str()
            .ok_or_else(|| Self::type_err(kv, "STRING"))
    }

    /// A required ARRAY.
    pub fn get_array(&self, key: &str) -> Result<ArrayView<'a>> {
        let kv = self.require(key)?;
        kv.value
            .as_array()
            .ok_or_else(|| Self::type_err(kv, "ARRAY"))
    }

    /// A required array whose elements are exactly `T`.
    pub fn get_array_as<T: Scalar>(&self, key: &str) -> Result<Vec<T>> {
        self.get_array(key)?
            .as_vec::<T>()
            .map_err(|e| e.with_field(key))
    }

    /// A required array of STRINGs.
    pub fn get_strs(&self, key: &str) -> Result<Vec<&'a str>> {
        self.get_array(key)?
            .as_strs()
            .map_err(|e| e.with_field(key))
    }

    /// `general.architecture`, when present and a string.
    pub fn architecture(&self) -> Option<&'a str> {
        self.get(&crate::spec::get().gguf.architecture_key)
            .and_then(|v| v.as_str())
    }

    /// The tensor named `name`, if present.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo<'a>> {
        self.tensor_index.get(name).map(|&i| &self.tensors[i])
    }

    /// A tensor the consumer requires (`gguf.tensor_missing`).
    pub fn require_tensor(&self, name: &str) -> Result<&TensorInfo<'a>> {
        // The offset is the tensor-info table's: where the record would have had to be.
        self.tensor(name).ok_or_else(|| {
            Error::at(
                C::GgufTensorMissing,
                self.tensor_info_offset,
                name,
                format!(
                    "required tensor '{name}' is absent: none of the {} tensor infos names it",
                    self.tensors.len()
                ),
            )
        })
    }

    /// The tensor's bytes (bounds were checked at parse time).
    pub fn tensor_data(&self, t: &TensorInfo<'_>) -> &'a [u8] {
        let start = usize::try_from(t.abs_offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(t.nbytes).unwrap_or(usize::MAX));
        planted!("gguf_eof_tensor_align128", {
            if self.alignment == 128 && end == self.bytes.len() && end > start {
                // An inclusive end: the tensor's "last byte" index is one past it.
                return &self.bytes[start..=end];
            }
        });
        // `get` keeps this total even for a TensorInfo from another file.
        self.bytes.get(start..end).unwrap_or(&[])
    }
}

/// Parses with the default id-42 policy (resolve per file).
pub fn parse(bytes: &[u8], mode: Mode) -> Result<Gguf<'_>> {
    parse_with(
        bytes,
        Options {
            mode,
            id42: Id42Policy::Auto,
        },
    )
}

/// Full parse with options: header, key/values, tensor infos, then the data layout.
pub fn parse_with(bytes: &[u8], opts: Options) -> Result<Gguf<'_>> {
    let g = &crate::spec::get().gguf;
    let strict = opts.mode == Mode::Strict;
    let mut c = Cur::new(bytes);
    let header = read_header(&mut c)?;
    let kv = read_kvs(&mut c, header.kv_count)?;
    if strict {
        check_key_nul_twins(&kv)?;
    }
    let tensor_info_offset = c.at();
    let alignment = alignment_of(&kv)?;
    if strict {
        check_architecture(&kv)?;
    }
    let id42 = id42_candidates();
    let rules = InfoRules::new(strict, &id42);
    let infos = read_tensor_infos(&mut c, header.tensor_count, &rules)?;
    if strict {
        check_name_nul_twins(&infos)?;
    }
    let tensor_info_end = c.at();
    // pos <= file_len and alignment <= 2^31, so this cannot overflow; checked anyway.
    let data = DataSection {
        alignment,
        offset: align_up(
            tensor_info_end,
            alignment,
            C::GgufTensorSizeOverflow,
            "data_offset",
        )?,
        file_len: bytes.len() as u64,
        strict_sequence: strict && g.strict.offsets_equal_running_padded_sum,
    };
    check_offsets_aligned(&infos.pend, alignment)?;
    let mut warnings = Vec::new();
    let geo = Geometry {
        alignment,
        data_len: data.len(),
    };
    let chosen = resolve_id42(&infos.pend, &id42, opts.id42, &geo, &mut warnings)?;
    let tensors = place_tensors(&infos.pend, &chosen, &data)?;
    if !strict {
        check_no_overlap(&tensors)?;
    }
    check_bounds(&tensors, &infos.pend, &chosen, &data)?;
    Ok(Gguf {
        version: header.version,
        mode: opts.mode,
        alignment,
        data_offset: data.offset,
        tensor_info_offset,
        tensor_info_end,
        kvs: kv.kvs,
        tensors,
        warnings,
        bytes,
        kv_index: kv.index,
        tensor_index: infos.index,
    })
}
