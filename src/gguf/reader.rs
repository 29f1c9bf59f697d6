//! Zero-copy GGUF reader: every count, length and offset is checked against the bytes that
//! exist before anything is allocated or sliced.

use super::value::{fixed_value, ArrayView, Scalar, Value, ValueType};
use super::{tensor_size, Id42Policy, Mode, Options};
use crate::error::{align_up, Error, ErrorClass as C, Result};
use crate::spec::GgmlType;
use std::collections::HashMap;

/// Smallest possible KV record: u64 key length + u32 type + a 1-byte value. Used to bound
/// `kv_count` by the bytes that remain before anything is sized by it (CVE-2024-23605).
pub const MIN_KV_BYTES: u64 = 8 + 4 + 1;
/// Smallest possible tensor-info record: name length, n_dims, one dim, type, offset.
pub const MIN_TENSOR_INFO_BYTES: u64 = 8 + 4 + 8 + 4 + 8;

/// One metadata key/value pair, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Kv<'a> {
    pub key: &'a str,
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
    pub name: &'a str,
    pub n_dims: u32,
    /// ne[0] innermost; entries past `n_dims` are 1.
    pub ne: [u64; 4],
    /// The type id as stored in the file.
    pub type_id: u32,
    /// The resolved type: the `types` entry, or for id 42 possibly the legacy Prism `variants` entry.
    pub ggml: &'static GgmlType,
    /// Offset relative to the data section.
    pub offset: u64,
    /// Absolute offset in the file.
    pub abs_offset: u64,
    pub nbytes: u64,
    pub n_elements: u64,
    /// Absolute offset of the tensor-info record.
    pub info_offset: u64,
}

impl TensorInfo<'_> {
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
    pub version: u32,
    pub mode: Mode,
    pub alignment: u64,
    /// Absolute offset of the data section: `align_up(end of tensor infos, alignment)`.
    pub data_offset: u64,
    /// Absolute offset where the tensor-info list starts (= end of the KV block).
    pub tensor_info_offset: u64,
    /// Absolute offset where the tensor-info list ends.
    pub tensor_info_end: u64,
    pub kvs: Vec<Kv<'a>>,
    pub tensors: Vec<TensorInfo<'a>>,
    /// Non-fatal findings, e.g. legacy id-42 tensors that should be retagged.
    pub warnings: Vec<String>,
    bytes: &'a [u8],
    kv_index: HashMap<&'a str, usize>,
    tensor_index: HashMap<&'a str, usize>,
}

impl<'a> Gguf<'a> {
    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.kv_index.get(key).map(|&i| &self.kvs[i].value)
    }

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

    pub fn get_u32(&self, key: &str) -> Result<u32> {
        self.get_as(key)
    }
    pub fn get_i32(&self, key: &str) -> Result<i32> {
        self.get_as(key)
    }
    pub fn get_u64(&self, key: &str) -> Result<u64> {
        self.get_as(key)
    }
    pub fn get_f32(&self, key: &str) -> Result<f32> {
        self.get_as(key)
    }
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

    pub fn get_str(&self, key: &str) -> Result<&'a str> {
        let kv = self.require(key)?;
        kv.value
            .as_str()
            .ok_or_else(|| Self::type_err(kv, "STRING"))
    }

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

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo<'a>> {
        self.tensor_index.get(name).map(|&i| &self.tensors[i])
    }

    /// A tensor the consumer requires (`gguf.tensor_missing`).
    pub fn require_tensor(&self, name: &str) -> Result<&TensorInfo<'a>> {
        self.tensor(name).ok_or_else(|| {
            Error::new(
                C::GgufTensorMissing,
                name,
                format!("required tensor '{name}' is absent"),
            )
        })
    }

    /// The tensor's bytes (bounds were checked at parse time).
    pub fn tensor_data(&self, t: &TensorInfo<'_>) -> &'a [u8] {
        let start = usize::try_from(t.abs_offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(t.nbytes).unwrap_or(usize::MAX));
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

struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }

    fn take(&mut self, n: u64, field: &dyn Fn() -> String) -> Result<&'a [u8]> {
        let rem = self.remaining();
        match usize::try_from(n) {
            Ok(n) if n <= rem => {
                let s = &self.b[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(Error::at(
                C::GgufTruncated,
                self.pos as u64,
                field(),
                format!("needs {n} bytes, the file has {rem} left"),
            )),
        }
    }

    fn u32(&mut self, field: &dyn Fn() -> String) -> Result<u32> {
        Ok(u32::read_le(self.take(4, field)?))
    }

    fn u64(&mut self, field: &dyn Fn() -> String) -> Result<u64> {
        Ok(u64::read_le(self.take(8, field)?))
    }

    fn string(&mut self, field: &dyn Fn() -> String) -> Result<&'a str> {
        let start = self.pos as u64;
        let len = self.u64(field)?;
        let max = crate::spec::get().gguf.limits.max_string_bytes;
        if len > max {
            return Err(Error::at(
                C::GgufStringLength,
                start,
                field(),
                format!("string length {len} exceeds the {max}-byte limit"),
            ));
        }
        let rem = self.remaining();
        if len > rem as u64 {
            return Err(Error::at(
                C::GgufStringLength,
                start,
                field(),
                format!("string length {len} exceeds the {rem} bytes left in the file"),
            ));
        }
        let raw = self.take(len, field)?;
        std::str::from_utf8(raw).map_err(|e| {
            Error::at(
                C::GgufStringUtf8,
                start + 8 + e.valid_up_to() as u64,
                field(),
                format!("string is not valid UTF-8 after {} bytes", e.valid_up_to()),
            )
        })
    }

    fn value(&mut self, t: ValueType, field: &dyn Fn() -> String) -> Result<Value<'a>> {
        let start = self.pos as u64;
        match t {
            ValueType::String => Ok(Value::String(self.string(field)?)),
            ValueType::Array => self.array(field).map(Value::Array),
            ValueType::Bool => {
                let b = self.take(1, field)?[0];
                if b > 1 {
                    return Err(Error::at(
                        C::GgufBoolValue,
                        start,
                        field(),
                        format!("BOOL byte is {b}, only 0 and 1 are valid"),
                    ));
                }
                Ok(Value::Bool(b == 1))
            }
            _ => {
                let size = t.fixed_size().unwrap_or(1) as u64;
                Ok(fixed_value(t, self.take(size, field)?))
            }
        }
    }

    fn array(&mut self, field: &dyn Fn() -> String) -> Result<ArrayView<'a>> {
        let tpos = self.pos as u64;
        let elem_id = self.u32(field)?;
        let elem = match ValueType::from_id(elem_id) {
            None => {
                return Err(Error::at(
                    C::GgufValueType,
                    tpos,
                    field(),
                    format!("array element type {elem_id} is not a GGUF value type (0..=12)"),
                ));
            }
            Some(ValueType::Array) => {
                return Err(Error::at(
                    C::GgufNestedArray,
                    tpos,
                    field(),
                    "array of arrays: nested arrays are not allowed",
                ));
            }
            Some(t) => t,
        };
        let cpos = self.pos as u64;
        let count = self.u64(field)?;
        let start = self.pos;
        let rem = self.remaining() as u64;
        match elem.fixed_size() {
            Some(size) => {
                let need = count.checked_mul(size as u64).filter(|&n| n <= rem);
                let Some(need) = need else {
                    return Err(Error::at(
                        C::GgufArrayLength,
                        cpos,
                        field(),
                        format!("{count} elements of {elem} need more than the {rem} bytes left"),
                    ));
                };
                let raw = self.take(need, field)?;
                if elem == ValueType::Bool {
                    if let Some(i) = raw.iter().position(|&b| b > 1) {
                        return Err(Error::at(
                            C::GgufBoolValue,
                            start as u64 + i as u64,
                            field(),
                            format!("BOOL element {i} is {}, only 0 and 1 are valid", raw[i]),
                        ));
                    }
                }
                Ok(ArrayView {
                    elem,
                    count,
                    raw,
                    offset: start as u64,
                })
            }
            None => {
                // Every string needs at least its 8-byte length, which bounds the walk.
                if count > rem / 8 {
                    return Err(Error::at(
                        C::GgufArrayLength,
                        cpos,
                        field(),
                        format!(
                            "{count} strings need at least {} bytes, only {rem} are left",
                            count.saturating_mul(8)
                        ),
                    ));
                }
                for i in 0..count {
                    self.string(&|| format!("{}[{i}]", field()))?;
                }
                Ok(ArrayView {
                    elem,
                    count,
                    raw: &self.b[start..self.pos],
                    offset: start as u64,
                })
            }
        }
    }
}

/// A tensor-info record before its layout is resolved: one size per candidate type.
struct Pending<'a> {
    name: &'a str,
    n_dims: u32,
    ne: [u64; 4],
    type_id: u32,
    /// (type, n_elements, nbytes); more than one only for the ambiguous id 42.
    cands: Vec<(&'static GgmlType, u64, u64)>,
    offset: u64,
    info_offset: u64,
}

/// Types that share the ambiguous id, from `spec/ggml_types.json` `id42_disambiguation.candidates`.
pub(crate) fn id42_candidates() -> Vec<&'static GgmlType> {
    let spec = crate::spec::get();
    let cands: Vec<&'static GgmlType> = spec
        .ggml
        .id42_disambiguation
        .candidates
        .iter()
        .filter_map(|n| spec.ggml_type_named(n))
        .collect();
    // All candidates must share one id for the rule to apply.
    if cands.len() >= 2 && cands.iter().all(|c| c.id == cands[0].id) {
        cands
    } else {
        Vec::new()
    }
}

fn unknown_type_detail(id: u32) -> String {
    let spec = crate::spec::get();
    if spec.ggml.removed_ids.contains(&id) {
        format!("ggml type {id} was removed from ggml")
    } else if let Some(v) = spec.ggml.variants.iter().find(|v| v.id == id) {
        format!(
            "ggml type {id} is not a tensor type of mainline or Prism (fork meaning: {})",
            v.name
        )
    } else {
        format!("ggml type {id} (as i32: {}) is unknown", id as i32)
    }
}

/// Full parse with options.
pub fn parse_with(bytes: &[u8], opts: Options) -> Result<Gguf<'_>> {
    let spec = crate::spec::get();
    let g = &spec.gguf;
    let strict = opts.mode == Mode::Strict;
    let file_len = bytes.len() as u64;
    let mut c = Cur { b: bytes, pos: 0 };

    // --- header ---
    let magic = c.take(4, &|| "header.magic".into())?;
    let want_magic: Vec<u8> = (0..g.magic_hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(g.magic_hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    if magic != want_magic.as_slice() {
        return Err(Error::at(
            C::GgufMagic,
            0,
            "header.magic",
            format!("first bytes are {magic:02x?}, expected {want_magic:02x?} ('GGUF')"),
        ));
    }
    let version = c.u32(&|| "header.version".into())?;
    if !g.versions_readable.contains(&version) {
        if version == g.big_endian_version_marker
            || g.versions_readable.contains(&version.swap_bytes())
        {
            return Err(Error::at(
                C::GgufBigEndian,
                4,
                "header.version",
                format!("big-endian GGUF: version reads as {version:#010x} (= {} byte-swapped); only little-endian files are supported", version.swap_bytes()),
            ));
        }
        return Err(Error::at(
            C::GgufVersion,
            4,
            "header.version",
            format!(
                "version {version} is not readable (readable: {:?})",
                g.versions_readable
            ),
        ));
    }
    let tensor_count = c.u64(&|| "header.tensor_count".into())?;
    let kv_count = c.u64(&|| "header.kv_count".into())?;
    let rem = c.remaining() as u64;
    if tensor_count > rem / MIN_TENSOR_INFO_BYTES {
        return Err(Error::at(
            C::GgufCountOverflow,
            8,
            "header.tensor_count",
            format!("tensor_count {tensor_count} cannot fit: each tensor info needs >= {MIN_TENSOR_INFO_BYTES} bytes and {rem} are left"),
        ));
    }
    let min_infos = tensor_count * MIN_TENSOR_INFO_BYTES;
    if kv_count > (rem - min_infos) / MIN_KV_BYTES {
        return Err(Error::at(
            C::GgufCountOverflow,
            16,
            "header.kv_count",
            format!("kv_count {kv_count} cannot fit: each KV needs >= {MIN_KV_BYTES} bytes and {} are left after the tensor infos' minimum", rem - min_infos),
        ));
    }

    // --- KVs ---
    // Counts are bounded by the file size above; capacity is still capped so a small count of
    // large records does not reserve per-record memory up front.
    let mut kvs: Vec<Kv<'_>> = Vec::with_capacity(kv_count.min(1024) as usize);
    let mut kv_index: HashMap<&str, usize> = HashMap::new();
    for i in 0..kv_count {
        let rec = c.pos as u64;
        let key = c.string(&|| format!("kv[{i}].key"))?;
        if key.is_empty() {
            return Err(Error::at(
                C::GgufKeyEmpty,
                rec,
                format!("kv[{i}].key"),
                "metadata key is the empty string",
            ));
        }
        if let Some(&j) = kv_index.get(key) {
            return Err(Error::at(
                C::GgufKeyDuplicate,
                rec,
                format!("kv[{i}].key"),
                format!("key '{key}' already appeared as kv[{j}]; keys must be unique"),
            ));
        }
        let field = || format!("kv[{i}]('{key}').value");
        let tpos = c.pos as u64;
        let type_id = c.u32(&field)?;
        let Some(t) = ValueType::from_id(type_id) else {
            return Err(Error::at(
                C::GgufValueType,
                tpos,
                field(),
                format!("value type {type_id} is not a GGUF value type (0..=12)"),
            ));
        };
        let value = c.value(t, &field)?;
        kv_index.insert(key, kvs.len());
        kvs.push(Kv {
            key,
            value,
            offset: rec,
            value_offset: tpos,
        });
    }
    let tensor_info_offset = c.pos as u64;

    // --- general.alignment / general.architecture ---
    let alignment = match kv_index.get(g.alignment_key.as_str()).map(|&i| &kvs[i]) {
        None => g.default_alignment as u64,
        Some(kv) => match kv.value {
            Value::U32(a) if a != 0 && a.is_power_of_two() => a as u64,
            Value::U32(a) => {
                return Err(Error::at(
                    C::GgufAlignmentValue,
                    kv.value_offset,
                    kv.key,
                    format!("alignment {a} is not a non-zero power of two"),
                ));
            }
            ref v => {
                return Err(Error::at(
                    C::GgufAlignmentType,
                    kv.value_offset,
                    kv.key,
                    format!("general.alignment is {}, must be U32", v.value_type()),
                ));
            }
        },
    };
    if strict && g.strict.architecture_required {
        match kv_index.get(g.architecture_key.as_str()).map(|&i| &kvs[i]) {
            None => {
                return Err(Error::at(
                    C::GgufArchitectureMissing,
                    16,
                    g.architecture_key.as_str(),
                    "general.architecture is required (strict mode)",
                ));
            }
            Some(kv) if kv.value.as_str().is_none() => {
                return Err(Error::at(
                    C::GgufMetadataType,
                    kv.value_offset,
                    kv.key,
                    format!(
                        "general.architecture is {}, must be STRING",
                        kv.value.value_type()
                    ),
                ));
            }
            Some(_) => {}
        }
    }

    // --- tensor infos ---
    let id42 = id42_candidates();
    let max_name = if strict {
        g.strict.max_tensor_name_bytes
    } else {
        64
    };
    let mut pend: Vec<Pending<'_>> = Vec::with_capacity(tensor_count.min(1024) as usize);
    let mut tensor_index: HashMap<&str, usize> = HashMap::new();
    for i in 0..tensor_count {
        let rec = c.pos as u64;
        let name = c.string(&|| format!("tensor_infos[{i}].name"))?;
        let f = |what: &str| format!("tensor_infos[{i}]('{name}').{what}");
        if name.len() as u64 > max_name {
            return Err(Error::at(
                C::GgufTensorNameLength,
                rec,
                f("name"),
                format!(
                    "tensor name is {} bytes, the limit is {max_name} ({} mode)",
                    name.len(),
                    if strict { "strict" } else { "spec" }
                ),
            ));
        }
        if let Some(&j) = tensor_index.get(name) {
            return Err(Error::at(
                C::GgufTensorNameDuplicate,
                rec,
                f("name"),
                format!("tensor name '{name}' already used by tensor_infos[{j}]"),
            ));
        }
        let npos = c.pos as u64;
        let n_dims = c.u32(&|| f("n_dims"))?;
        if n_dims == 0 || n_dims > g.max_dims {
            return Err(Error::at(
                C::GgufTensorNDims,
                npos,
                f("n_dims"),
                format!("n_dims is {n_dims}, must be 1..={}", g.max_dims),
            ));
        }
        let mut ne = [1u64; 4];
        for (j, d) in ne.iter_mut().enumerate().take(n_dims as usize) {
            let dpos = c.pos as u64;
            *d = c.u64(&|| f(&format!("dims[{j}]")))?;
            if *d == 0 || *d > i64::MAX as u64 {
                let why = if *d == 0 {
                    "is 0".to_string()
                } else {
                    format!("is negative as i64 ({})", *d as i64)
                };
                return Err(Error::at(
                    C::GgufTensorDim,
                    dpos,
                    f(&format!("dims[{j}]")),
                    format!("dimension {j} {why}; dims must be > 0"),
                ));
            }
        }
        let tpos = c.pos as u64;
        let type_id = c.u32(&|| f("type"))?;
        let types: Vec<&'static GgmlType> = if !id42.is_empty() && type_id == id42[0].id {
            id42.clone()
        } else {
            match spec.ggml_type(type_id) {
                Some(t) => vec![t],
                None => {
                    return Err(Error::at(
                        C::GgufTensorType,
                        tpos,
                        f("type"),
                        unknown_type_detail(type_id),
                    ))
                }
            }
        };
        let mut cands = Vec::with_capacity(types.len());
        let mut first_err = None;
        for t in types {
            match tensor_size(&ne[..n_dims as usize], t) {
                Ok((n, b)) => cands.push((t, n, b)),
                Err((class, detail)) => {
                    first_err.get_or_insert_with(|| {
                        Error::at(class, rec, f("dims"), format!("{detail} (type {})", t.name))
                    });
                }
            }
        }
        if cands.is_empty() {
            // Unreachable without an error: `types` is never empty.
            return Err(first_err
                .unwrap_or_else(|| Error::at(C::GgufTensorType, tpos, f("type"), "no type")));
        }
        let offset = c.u64(&|| f("offset"))?;
        tensor_index.insert(name, pend.len());
        pend.push(Pending {
            name,
            n_dims,
            ne,
            type_id,
            cands,
            offset,
            info_offset: rec,
        });
    }
    let tensor_info_end = c.pos as u64;
    // pos <= file_len and alignment <= 2^31, so this cannot overflow; checked anyway.
    let data_offset = align_up(
        tensor_info_end,
        alignment,
        C::GgufTensorSizeOverflow,
        "data_offset",
    )?;
    let data_len = file_len.saturating_sub(data_offset);

    // --- offsets aligned ---
    for (i, p) in pend.iter().enumerate() {
        if p.offset % alignment != 0 {
            return Err(Error::at(
                C::GgufTensorOffsetAlignment,
                p.info_offset,
                format!("tensor_infos[{i}]('{}').offset", p.name),
                format!(
                    "tensor '{}' offset {} is not a multiple of the alignment {alignment}",
                    p.name, p.offset
                ),
            ));
        }
    }

    // --- id-42 resolution ---
    let mut warnings = Vec::new();
    let chosen = resolve_id42(&pend, &id42, opts.id42, alignment, data_len, &mut warnings)?;

    // --- running padded sum, overflow, strict sequence ---
    let mut running: u64 = 0;
    let mut tensors: Vec<TensorInfo<'_>> = Vec::with_capacity(pend.len());
    for (i, p) in pend.iter().enumerate() {
        let (ggml, n_elements, nbytes) = p.cands[chosen[i]];
        let field = format!("tensor_infos[{i}]('{}').offset", p.name);
        if strict && g.strict.offsets_equal_running_padded_sum && p.offset != running {
            let mut detail = format!(
                "tensor '{}' has offset {}, expected {running}",
                p.name, p.offset
            );
            if i > 0 {
                if let Some(note) = id42_confusion_note(
                    &pend[i - 1],
                    chosen[i - 1],
                    p.offset.wrapping_sub(pend[i - 1].offset),
                    alignment,
                ) {
                    detail.push_str(&note);
                }
            }
            return Err(Error::at(
                C::GgufTensorOffsetSequence,
                p.info_offset,
                field,
                detail,
            ));
        }
        let padded =
            align_up(nbytes, alignment, C::GgufTensorSizeOverflow, &field).map_err(|e| Error {
                offset: Some(p.info_offset),
                ..e
            })?;
        running = running.checked_add(padded).ok_or_else(|| {
            Error::at(
                C::GgufTensorSizeOverflow,
                p.info_offset,
                field.clone(),
                format!("running sum of padded tensor sizes wraps past 2^64 at tensor '{}' (CVE-2025-53630)", p.name),
            )
        })?;
        let abs_offset = data_offset
            .checked_add(p.offset)
            .filter(|a| a.checked_add(nbytes).is_some())
            .ok_or_else(|| {
                Error::at(
                    C::GgufTensorSizeOverflow,
                    p.info_offset,
                    field.clone(),
                    format!(
                        "data_offset {data_offset} + offset {} + {nbytes} bytes wraps past 2^64",
                        p.offset
                    ),
                )
            })?;
        tensors.push(TensorInfo {
            index: i,
            name: p.name,
            n_dims: p.n_dims,
            ne: p.ne,
            type_id: p.type_id,
            ggml,
            offset: p.offset,
            abs_offset,
            nbytes,
            n_elements,
            info_offset: p.info_offset,
        });
    }

    // --- spec mode: no overlaps ---
    if !strict && tensors.len() > 1 {
        let mut order: Vec<usize> = (0..tensors.len()).collect();
        order.sort_by_key(|&i| (tensors[i].offset, i));
        for w in order.windows(2) {
            let (a, b) = (&tensors[w[0]], &tensors[w[1]]);
            // offset + nbytes was checked above.
            if a.offset + a.nbytes > b.offset {
                return Err(Error::at(
                    C::GgufTensorOverlap,
                    b.info_offset,
                    format!("tensor_infos[{}]('{}').offset", b.index, b.name),
                    format!(
                        "tensor '{}' [{}, {}) overlaps tensor '{}' [{}, {})",
                        b.name,
                        b.offset,
                        b.offset + b.nbytes,
                        a.name,
                        a.offset,
                        a.offset + a.nbytes
                    ),
                ));
            }
        }
    }

    // --- bounds ---
    for (i, t) in tensors.iter().enumerate() {
        let end = t.abs_offset + t.nbytes; // checked above
        if end > file_len {
            let mut detail = format!(
                "tensor '{}' needs bytes [{}, {end}) but the file is {file_len} bytes (data section starts at {data_offset})",
                t.name, t.abs_offset
            );
            let span = data_len.saturating_sub(t.offset);
            if let Some(note) = id42_confusion_note(&pend[i], chosen[i], span, alignment) {
                detail.push_str(&note);
            }
            return Err(Error::at(
                C::GgufTensorOutOfBounds,
                t.info_offset,
                format!("tensor_infos[{i}]('{}')", t.name),
                detail,
            ));
        }
    }

    Ok(Gguf {
        version,
        mode: opts.mode,
        alignment,
        data_offset,
        tensor_info_offset,
        tensor_info_end,
        kvs,
        tensors,
        warnings,
        bytes,
        kv_index,
        tensor_index,
    })
}

/// Whether `span` bytes can hold a tensor of `nbytes`: at least the data, at most data + padding.
fn fits(nbytes: u64, span: u64, alignment: u64) -> bool {
    let padded = nbytes
        .checked_add(alignment - 1)
        .map(|x| x / alignment * alignment)
        .unwrap_or(u64::MAX);
    nbytes <= span && span <= padded
}

/// Picks a candidate index per tensor (0 for unambiguous types), per the spec's
/// `id42_disambiguation` rule: the span up to the next tensor (or the data end) decides.
fn resolve_id42(
    pend: &[Pending<'_>],
    id42: &[&'static GgmlType],
    policy: Id42Policy,
    alignment: u64,
    data_len: u64,
    warnings: &mut Vec<String>,
) -> Result<Vec<usize>> {
    let mut chosen = vec![0usize; pend.len()];
    let ambiguous: Vec<usize> = (0..pend.len())
        .filter(|&i| pend[i].cands.len() > 1)
        .collect();
    if ambiguous.is_empty() {
        return Ok(chosen);
    }
    let idx_of = |p: &Pending<'_>, name: &str| p.cands.iter().position(|c| c.0.name == name);
    match policy {
        Id42Policy::Mainline | Id42Policy::LegacyPrism => {
            let want = if policy == Id42Policy::Mainline {
                0
            } else {
                id42.len() - 1
            };
            for &i in &ambiguous {
                chosen[i] = idx_of(&pend[i], &id42[want].name).unwrap_or(0);
            }
            return Ok(chosen);
        }
        Id42Policy::Auto => {}
    }
    let mut offsets: Vec<u64> = pend.iter().map(|p| p.offset).collect();
    offsets.sort_unstable();
    // Per tensor: Some(candidate) when exactly one fits, None when undecidable.
    let mut decided: Vec<Option<usize>> = vec![None; pend.len()];
    for &i in &ambiguous {
        let p = &pend[i];
        let next = offsets.iter().copied().find(|&o| o > p.offset);
        let (span, last) = match next {
            Some(n) => (n - p.offset, false),
            None => (data_len.saturating_sub(p.offset), true),
        };
        let fitting: Vec<usize> = (0..p.cands.len())
            .filter(|&k| fits(p.cands[k].2, span, alignment))
            .collect();
        match fitting.len() {
            1 => decided[i] = Some(fitting[0]),
            0 => {
                let min = p.cands.iter().map(|c| c.2).min().unwrap_or(0);
                // A short last tensor is a truncation; the bounds check reports it.
                if last && span < min {
                    continue;
                }
                let sizes: Vec<String> = id42
                    .iter()
                    .map(|t| match p.cands.iter().find(|c| c.0.name == t.name) {
                        Some(c) => format!(
                            "{} ({}-element blocks of {} B) needs {} bytes",
                            t.name, t.block_elems, t.block_bytes, c.2
                        ),
                        None => format!("{} does not divide ne[0]={}", t.name, p.ne[0]),
                    })
                    .collect();
                return Err(Error::at(
                    C::GgufId42Ambiguous,
                    p.info_offset,
                    format!("tensor_infos[{i}]('{}')", p.name),
                    format!(
                        "type {} tensor '{}' ({} elements) spans {span} bytes up to {}; neither candidate fits: {}",
                        p.type_id,
                        p.name,
                        p.cands[0].1,
                        if last { "the data end" } else { "the next tensor" },
                        sizes.join("; ")
                    ),
                ));
            }
            _ => {}
        }
    }
    // One layout per file: decided tensors must agree; undecided ones follow them. A tensor of
    // the ambiguous id whose shape admits one candidate only (ne[0] = 64 can only be g64) is
    // decided too (fuzz/regressions/gguf_structured/id42-mixed-single-candidate).
    let mut kinds = (0..pend.len())
        .filter(|&i| pend[i].type_id == id42[0].id)
        .filter_map(|i| {
            match pend[i].cands.len() {
                1 => Some(0),
                _ => decided[i],
            }
            .map(|k| (i, pend[i].cands[k].0.name.as_str()))
        });
    let first = kinds.next();
    if let Some((i0, name0)) = first {
        if let Some((i1, name1)) = kinds.find(|&(_, n)| n != name0) {
            let p = &pend[i1];
            return Err(Error::at(
                C::GgufId42Ambiguous,
                p.info_offset,
                format!("tensor_infos[{i1}]('{}')", p.name),
                format!(
                    "type-{} tensors disagree: '{}' is laid out as {name0}, '{}' as {name1}",
                    p.type_id, pend[i0].name, p.name
                ),
            ));
        }
    }
    let file_kind = first.map(|(_, n)| n.to_string());
    let mut undecided = 0usize;
    for &i in &ambiguous {
        chosen[i] = match decided[i] {
            Some(k) => k,
            None => {
                undecided += 1;
                file_kind
                    .as_deref()
                    .and_then(|n| idx_of(&pend[i], n))
                    .unwrap_or(0)
            }
        };
    }
    if file_kind.is_none() && undecided > 0 {
        warnings.push(format!(
            "{undecided} type-{} tensor(s) are too small to tell {} from {}; assumed {}",
            id42[0].id,
            id42[0].name,
            id42[id42.len() - 1].name,
            id42[0].name
        ));
    }
    let legacy: Vec<&str> = ambiguous
        .iter()
        .filter(|&&i| pend[i].cands[chosen[i]].0.retag_to.is_some())
        .map(|&i| pend[i].name)
        .collect();
    if let Some(first) = legacy.first() {
        let t = pend[ambiguous[0]]
            .cands
            .iter()
            .map(|c| c.0)
            .find(|t| t.retag_to.is_some());
        if let Some(t) = t {
            warnings.push(format!(
                "id {} with {} B/{} blocks is the legacy Prism layout — retag to {} ({} tensor(s), first '{first}')",
                t.id,
                t.block_bytes,
                t.block_elems,
                t.retag_to.unwrap_or(0),
                legacy.len()
            ));
        }
    }
    Ok(chosen)
}

/// When an ambiguous-id tensor's actual span fits the other candidate, explains the offset
/// error as the id-42 g64/g128 confusion (per-weight ratio 17/18 or 18/17).
fn id42_confusion_note(
    p: &Pending<'_>,
    chosen: usize,
    span: u64,
    alignment: u64,
) -> Option<String> {
    if p.cands.len() < 2 {
        return None;
    }
    let (ct, _, cb) = p.cands[chosen];
    let (ot, _, ob) = *p
        .cands
        .iter()
        .enumerate()
        .find(|&(k, c)| k != chosen && fits(c.2, span, alignment))?
        .1;
    let (n, d) = reduce(ob, cb);
    Some(format!(
        "; type-{} tensor '{}' was read as {} ({} B) but its {span} bytes fit {} ({} B): size ratio {n}/{d} — the id-42 g64/g128 confusion",
        p.type_id, p.name, ct.name, cb, ot.name, ob
    ))
}

fn reduce(a: u64, b: u64) -> (u64, u64) {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    // x == 0 only when both are 0.
    match (a.checked_div(x), b.checked_div(x)) {
        (Some(n), Some(d)) => (n, d),
        _ => (a, b),
    }
}
