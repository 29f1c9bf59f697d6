//! A deterministic catalog of hostile GGUF inputs (spec/gguf.md#gguf-hostile-inputs) with the exact error class each
//! must produce, plus accepted controls. It seeds the conformance corpus and the fuzzers, so it is
//! plain data: same bytes on every call.

use crate::error::{ErrorClass as C, Result};
use crate::gguf::{parse, GgufWriter, MetaValue, Mode, ValueType, WriterTensor};

/// A byte builder with no validation at all, for fields the writer would never emit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawBytes(pub Vec<u8>);

impl RawBytes {
    /// `GGUF`, version, tensor_count, kv_count.
    pub fn header(version: u32, tensor_count: u64, kv_count: u64) -> RawBytes {
        RawBytes::default()
            .bytes(b"GGUF")
            .u32(version)
            .u64(tensor_count)
            .u64(kv_count)
    }
    /// Appends `b` verbatim.
    pub fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
    /// Appends one byte.
    pub fn u8(self, x: u8) -> Self {
        self.bytes(&[x])
    }
    /// Appends a little-endian u32.
    pub fn u32(self, x: u32) -> Self {
        self.bytes(&x.to_le_bytes())
    }
    /// Appends a little-endian u64.
    pub fn u64(self, x: u64) -> Self {
        self.bytes(&x.to_le_bytes())
    }
    /// A GGUF string (u64 length + bytes).
    pub fn string(self, s: &str) -> Self {
        self.u64(s.len() as u64).bytes(s.as_bytes())
    }
    /// A KV record: key, type id, payload.
    pub fn kv(self, key: &str, v: &MetaValue) -> Self {
        let mut p = Vec::new();
        v.write_payload(&mut p);
        self.string(key).u32(v.type_id()).bytes(&p)
    }
    /// A tensor-info record with any n_dims/dims/type/offset.
    pub fn tensor_info(self, name: &str, dims: &[u64], type_id: u32, offset: u64) -> Self {
        let mut s = self.string(name).u32(dims.len() as u32);
        for &d in dims {
            s = s.u64(d);
        }
        s.u32(type_id).u64(offset)
    }
    /// Zero-pads to a multiple of `alignment`.
    pub fn pad_to(mut self, alignment: usize) -> Self {
        let a = alignment.max(1);
        let n = self.0.len().div_ceil(a) * a;
        self.0.resize(n, 0);
        self
    }
    /// Bytes built so far.
    #[cfg(feature = "internals")]
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether nothing was built yet.
    #[cfg(feature = "internals")]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The built bytes.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }
}

/// What a consumer does after a successful parse (decode-phase cases).
#[derive(Clone, Debug, PartialEq)]
pub enum Decode {
    /// Read array `key` with elements of exactly `elem`.
    ArrayAs {
        /// The metadata key.
        key: &'static str,
        /// The element type the consumer asks for.
        elem: ValueType,
    },
    /// Read scalar `key` of exactly `ty`.
    ScalarAs {
        /// The metadata key.
        key: &'static str,
        /// The type the consumer asks for.
        ty: ValueType,
    },
    /// Require tensor `name`.
    Tensor {
        /// The tensor name.
        name: &'static str,
    },
    /// Require tensor `name` with these dims and resolved ggml type name.
    TensorShape {
        /// The tensor name.
        name: &'static str,
        /// The dims it must have.
        dims: &'static [u64],
        /// The ggml type name its type id must resolve to.
        ggml: &'static str,
    },
}

/// A hostile input and the one error class it must produce.
#[derive(Clone, Debug)]
pub struct HostileCase {
    /// Unique case name (the corpus file name and fuzz seed name derive from it).
    pub name: &'static str,
    /// The complete file.
    pub bytes: Vec<u8>,
    /// The reader mode the case is parsed in.
    pub mode: Mode,
    /// The error class the reader must refuse it with.
    pub class: C,
    /// Where the case comes from (CVE, test-gguf.cpp case, spec/ document section).
    pub source: &'static str,
    /// `Some` for decode-phase cases: parsing succeeds and this consumer step fails.
    pub decode: Option<Decode>,
}

/// An input that must be accepted.
#[derive(Clone, Debug)]
pub struct ControlCase {
    /// Unique control name.
    pub name: &'static str,
    /// The complete file.
    pub bytes: Vec<u8>,
    /// The reader mode that must accept it.
    pub mode: Mode,
    /// Where the control comes from (spec/ section or upstream test).
    pub source: &'static str,
    /// `Some`: the consumer step that must also succeed after parsing.
    pub decode: Option<Decode>,
}

/// Parses `bytes` and runs the consumer step, returning the first error.
pub fn run_case(bytes: &[u8], mode: Mode, decode: Option<&Decode>) -> Result<()> {
    let g = parse(bytes, mode)?;
    let step = match decode {
        None => Ok(()),
        Some(Decode::ArrayAs { key, elem }) => {
            let a = g.get_array(key)?;
            let r = match elem {
                ValueType::U8 => a.as_u8s().map(drop),
                ValueType::I8 => a.as_i8s().map(drop),
                ValueType::U16 => a.as_u16s().map(drop),
                ValueType::I16 => a.as_i16s().map(drop),
                ValueType::U32 => a.as_u32s().map(drop),
                ValueType::I32 => a.as_i32s().map(drop),
                ValueType::F32 => a.as_f32s().map(drop),
                ValueType::Bool => a.as_bools().map(drop),
                ValueType::U64 => a.as_u64s().map(drop),
                ValueType::I64 => a.as_i64s().map(drop),
                ValueType::F64 => a.as_f64s().map(drop),
                ValueType::String | ValueType::Array => a.as_strs().map(drop),
            };
            r.map_err(|e| e.with_field(*key))
        }
        Some(Decode::ScalarAs { key, ty }) => match ty {
            ValueType::U8 => g.get_as::<u8>(key).map(drop),
            ValueType::I8 => g.get_as::<i8>(key).map(drop),
            ValueType::U16 => g.get_as::<u16>(key).map(drop),
            ValueType::I16 => g.get_as::<i16>(key).map(drop),
            ValueType::U32 => g.get_as::<u32>(key).map(drop),
            ValueType::I32 => g.get_as::<i32>(key).map(drop),
            ValueType::F32 => g.get_as::<f32>(key).map(drop),
            ValueType::Bool => g.get_as::<bool>(key).map(drop),
            ValueType::U64 => g.get_as::<u64>(key).map(drop),
            ValueType::I64 => g.get_as::<i64>(key).map(drop),
            ValueType::F64 => g.get_as::<f64>(key).map(drop),
            ValueType::String => g.get_str(key).map(drop),
            ValueType::Array => g.get_array(key).map(drop),
        },
        Some(Decode::Tensor { name }) => g.require_tensor(name).map(drop),
        Some(Decode::TensorShape { name, dims, ggml }) => {
            g.require_tensor(name)?.expect(dims, Some(ggml))
        }
    };
    // Rule switch (tests only): the consumer is the last stage, so a disabled rule's refusal
    // there is waived.
    step.or_else(|e| match crate::error::enforced(e.class()) {
        true => Err(e),
        false => Ok(()),
    })
}

impl HostileCase {
    /// Runs the case; `Err` with the case's class is the expected outcome.
    #[cfg(any(test, feature = "internals"))]
    pub fn run(&self) -> Result<()> {
        run_case(&self.bytes, self.mode, self.decode.as_ref())
    }
}

impl ControlCase {
    /// Runs the control; it must return `Ok`.
    #[cfg(any(test, feature = "internals"))]
    pub fn run(&self) -> Result<()> {
        run_case(&self.bytes, self.mode, self.decode.as_ref())
    }
}

const ARCH: &str = "hostile";

/// A writer with `general.architecture` set (so strict mode does not stop early).
fn base() -> GgufWriter {
    let mut w = GgufWriter::new();
    w.kv("general.architecture", ARCH);
    w
}

/// Deterministic payload bytes.
fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(31).wrapping_add(7)) as u8)
        .collect()
}

/// Header bytes of `w` followed by `data_len` pattern bytes (no validation of sizes).
fn with_data(w: &GgufWriter, data_len: usize) -> Vec<u8> {
    // The writer only fails on overflowing layouts, which the catalog builds by RawBytes instead.
    let mut b = w.header_bytes().unwrap_or_default();
    b.extend_from_slice(&pattern(data_len));
    b
}

fn raw_tensor(name: &str, dims: &[u64], type_id: u32, nbytes: u64, offset: u64) -> WriterTensor {
    WriterTensor {
        name: name.into(),
        dims: dims.to_vec(),
        type_id,
        nbytes,
        offset: Some(offset),
    }
}

/// A small valid strict file: architecture, a few KVs, two F32 tensors.
pub(crate) fn valid_small() -> Vec<u8> {
    let mut w = base();
    w.kv("hostile.count", 7u32)
        .kv("hostile.ids", MetaValue::array(&[1u8, 2, 3]));
    w.kv("hostile.names", MetaValue::array_str(&["a", "bc"]));
    let _ = w
        .tensor("a", &[8], 0)
        .and_then(|w| w.tensor("b", &[4, 2], 0));
    with_data(&w, 64)
}

/// A file whose single KV is `key: value` (after the architecture) and no tensors.
fn one_kv(key: &str, v: MetaValue) -> Vec<u8> {
    RawBytes::header(3, 0, 2)
        .kv("general.architecture", &MetaValue::str(ARCH))
        .kv(key, &v)
        .into_vec()
}

/// A header + architecture + one tensor info, then `data_len` bytes at the data section.
fn one_tensor(name: &str, dims: &[u64], type_id: u32, offset: u64, data_len: usize) -> Vec<u8> {
    let mut b = RawBytes::header(3, 1, 1)
        .kv("general.architecture", &MetaValue::str(ARCH))
        .tensor_info(name, dims, type_id, offset)
        .pad_to(32)
        .into_vec();
    b.extend_from_slice(&pattern(data_len));
    b
}

fn set_version(mut b: Vec<u8>, v: u32) -> Vec<u8> {
    b[4..8].copy_from_slice(&v.to_le_bytes());
    b
}

/// Every §9 item (and one case per other reachable class).
pub fn hostile_cases() -> Vec<HostileCase> {
    let mut v = Vec::new();
    let mut add = |name, bytes, mode, class, source| {
        v.push(HostileCase {
            name,
            bytes,
            mode,
            class,
            source,
            decode: None,
        })
    };
    let s = Mode::Strict;
    let valid = valid_small();

    // --- header ---
    let mut bad = valid.clone();
    bad[3] = b'X';
    add(
        "bad_magic",
        bad,
        s,
        C::GgufMagic,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_MAGIC",
    );
    add(
        "truncated_header",
        valid[..12].to_vec(),
        s,
        C::GgufTruncated,
        "spec/gguf.md#gguf-hostile-inputs (file ends inside the header)",
    );
    add(
        "empty_file",
        Vec::new(),
        s,
        C::GgufTruncated,
        "spec/gguf.md#gguf-hostile-inputs (zero-length input)",
    );
    add(
        "version_0",
        set_version(valid.clone(), 0),
        s,
        C::GgufVersion,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_VERSION_0",
    );
    add(
        "version_1",
        set_version(valid.clone(), 1),
        s,
        C::GgufVersion,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_VERSION_1",
    );
    add(
        "version_4",
        set_version(valid.clone(), 4),
        s,
        C::GgufVersion,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_VERSION_FUTURE",
    );
    add(
        "big_endian_v3",
        set_version(valid.clone(), 0x0300_0000),
        s,
        C::GgufBigEndian,
        "version field byte-swapped, every other field little-endian: a mixed-endian file (real big-endian files are the y_big_endian_* cases)",
    );
    add(
        "big_endian_v2",
        set_version(valid.clone(), 0x0200_0000),
        s,
        C::GgufBigEndian,
        "version field byte-swapped, every other field little-endian: a mixed-endian file (real big-endian files are the y_big_endian_* cases)",
    );
    let cnt = |t: u64, k: u64| {
        RawBytes::header(3, t, k)
            .kv("general.architecture", &MetaValue::str(ARCH))
            .into_vec()
    };
    // sizeof(gguf_tensor_info) is ~336 B on 64-bit mainline; sizeof(gguf_kv) ~ 88 B.
    add(
        "tensor_count_near_2_64_over_sizeof",
        cnt(u64::MAX / 336 + 1, 1),
        s,
        C::GgufCountOverflow,
        "CVE-2024-23605; test-gguf.cpp HANDCRAFTED_HEADER_BAD_N_TENSORS",
    );
    add(
        "tensor_count_u64_max",
        cnt(u64::MAX, 1),
        s,
        C::GgufCountOverflow,
        "CVE-2024-23605",
    );
    add(
        "kv_count_near_2_64_over_sizeof",
        cnt(0, u64::MAX / 88 + 1),
        s,
        C::GgufCountOverflow,
        "CVE-2024-23605; test-gguf.cpp HANDCRAFTED_HEADER_BAD_N_KV",
    );
    add(
        "kv_count_u64_max",
        cnt(0, u64::MAX),
        s,
        C::GgufCountOverflow,
        "CVE-2024-23605",
    );
    add(
        "kv_count_one_more_than_present",
        cnt(0, 2),
        s,
        C::GgufTruncated,
        "spec/gguf.md#gguf-hostile-inputs (count within the bound, record missing)",
    );

    // --- strings and KVs ---
    let b = RawBytes::header(3, 0, 1)
        .u64(1000)
        .bytes(b"general.arch")
        .into_vec();
    add(
        "string_length_past_eof",
        b,
        s,
        C::GgufStringLength,
        "test-gguf.cpp HANDCRAFTED_KV_BAD_KEY_SIZE",
    );
    let b = RawBytes::header(3, 0, 1)
        .string("general.architecture")
        .u32(8)
        .u64((1 << 30) + 1)
        .bytes(b"x")
        .into_vec();
    add(
        "string_length_over_1gib",
        b,
        s,
        C::GgufStringLength,
        "spec/gguf.md#gguf-hostile-inputs (string > 1 GiB, not allocated)",
    );
    // Single fault: `general.architecture` is present, so a reader that checks the
    // architecture but never UTF-8 accepts this file (issue #35: it used to lack the key too).
    add(
        "string_invalid_utf8",
        RawBytes::header(3, 0, 2)
            .kv("general.architecture", &MetaValue::str(ARCH))
            .u64(2)
            .bytes(&[0xC3, 0x28])
            .u32(0)
            .u8(0)
            .into_vec(),
        s,
        C::GgufStringUtf8,
        "spec/gguf.md#gguf-strings (strings are UTF-8)",
    );
    add(
        "key_empty",
        one_kv("", MetaValue::U32(1)),
        s,
        C::GgufKeyEmpty,
        "gguf.cpp (empty keys rejected)",
    );
    let dup = RawBytes::header(3, 0, 3)
        .kv("general.architecture", &MetaValue::str(ARCH))
        .kv("hostile.k", &MetaValue::U32(1))
        .kv("hostile.k", &MetaValue::U32(2))
        .into_vec();
    add(
        "key_duplicate",
        dup.clone(),
        s,
        C::GgufKeyDuplicate,
        "test-gguf.cpp HANDCRAFTED_KV_DUPLICATE_KEY",
    );
    add(
        "key_duplicate_spec_mode",
        dup,
        Mode::Spec,
        C::GgufKeyDuplicate,
        "gguf.md (keys are unique)",
    );
    let nested = MetaValue::Raw {
        type_id: 9,
        bytes: RawBytes::default()
            .u32(9)
            .u64(1)
            .u32(4)
            .u64(1)
            .u32(5)
            .into_vec(),
    };
    add(
        "nested_array",
        one_kv("hostile.nested", nested),
        s,
        C::GgufNestedArray,
        "gguf.cpp (nested arrays rejected)",
    );
    let arr = |elem: u32, count: u64, tail: &[u8]| MetaValue::Raw {
        type_id: 9,
        bytes: RawBytes::default()
            .u32(elem)
            .u64(count)
            .bytes(tail)
            .into_vec(),
    };
    add(
        "array_count_past_eof",
        one_kv("hostile.a", arr(4, 1 << 40, &[0; 8])),
        s,
        C::GgufArrayLength,
        "test-gguf.cpp HANDCRAFTED_KV_BAD_VALUE_SIZE",
    );
    add(
        "array_count_times_size_wraps",
        one_kv("hostile.a", arr(10, (1 << 61) + 1, &[0; 8])),
        s,
        C::GgufArrayLength,
        "spec/gguf.md#gguf-hostile-inputs (count * elem size overflows)",
    );
    add(
        "string_array_count_past_eof",
        one_kv("hostile.a", arr(8, 1 << 40, &[0; 16])),
        s,
        C::GgufArrayLength,
        "spec/gguf.md#gguf-hostile-inputs (array of strings)",
    );
    // Counts under mainline's 2^30-element limit whose elements are not in the file: these
    // reach gguf.cpp's own past-EOF checks (the three cases above stop at the limit first).
    add(
        "u32_array_count_under_limit_data_short",
        one_kv("hostile.a", arr(4, 1000, &[0; 8])),
        s,
        C::GgufArrayLength,
        "spec/gguf.md#gguf-hostile-inputs (count x element size past EOF, count under 2^30)",
    );
    add(
        "u8_array_count_2pow30_data_short",
        one_kv("hostile.a", arr(0, 1 << 30, &[0; 8])),
        s,
        C::GgufArrayLength,
        "spec/gguf.md#gguf-hostile-inputs (count exactly at mainline's 2^30 limit, data past EOF)",
    );
    add(
        "string_array_count_under_limit_data_short",
        one_kv("hostile.a", arr(8, 1000, &[0; 16])),
        s,
        C::GgufArrayLength,
        "spec/gguf.md#gguf-hostile-inputs (array of strings, count x 8 past EOF, count under 2^30)",
    );
    add(
        "bool_2",
        one_kv(
            "hostile.b",
            MetaValue::Raw {
                type_id: 7,
                bytes: vec![2],
            },
        ),
        s,
        C::GgufBoolValue,
        "spec/gguf.md#gguf-hostile-inputs (bool = 2)",
    );
    add(
        "bool_array_2",
        one_kv("hostile.b", arr(7, 3, &[0, 1, 2])),
        s,
        C::GgufBoolValue,
        "spec/gguf.md#gguf-hostile-inputs (bool = 2)",
    );
    add(
        "value_type_13",
        one_kv(
            "hostile.t",
            MetaValue::Raw {
                type_id: 13,
                bytes: vec![0; 8],
            },
        ),
        s,
        C::GgufValueType,
        "test-gguf.cpp HANDCRAFTED_KV_BAD_TYPE",
    );
    add(
        "array_elem_type_13",
        one_kv("hostile.t", arr(13, 1, &[0; 8])),
        s,
        C::GgufValueType,
        "spec/gguf.md#gguf-hostile-inputs (value type 13)",
    );

    // --- alignment / architecture ---
    let al = |v: MetaValue| {
        let mut w = base();
        w.kv("general.alignment", v);
        let _ = w.tensor("a", &[8], 0);
        with_data(&w, 32)
    };
    add(
        "alignment_0",
        al(MetaValue::U32(0)),
        s,
        C::GgufAlignmentValue,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_ALIGNMENT",
    );
    add(
        "alignment_3",
        al(MetaValue::U32(3)),
        s,
        C::GgufAlignmentValue,
        "test-gguf.cpp HANDCRAFTED_HEADER_BAD_ALIGNMENT",
    );
    add(
        "alignment_i32",
        al(MetaValue::I32(32)),
        s,
        C::GgufAlignmentType,
        "gguf.md (general.alignment is uint32)",
    );
    add(
        "alignment_24_spec_mode",
        al(MetaValue::U32(24)),
        Mode::Spec,
        C::GgufAlignmentValue,
        "gguf.cpp power-of-two rule (24 is a multiple of 8 but not a power of two)",
    );
    // 2^31 is a power of two and mainline accepts it; the data section then starts at 2^31, past EOF.
    add(
        "alignment_2pow31_data_past_eof",
        al(MetaValue::U32(1 << 31)),
        s,
        C::GgufTensorOutOfBounds,
        "spec/gguf.md#gguf-hostile-inputs (alignment 2^31)",
    );
    add(
        "architecture_missing",
        RawBytes::header(3, 0, 1)
            .kv("general.name", &MetaValue::str("x"))
            .into_vec(),
        s,
        C::GgufArchitectureMissing,
        "gguf.cpp / llama.cpp (general.architecture required)",
    );
    add(
        "architecture_not_string",
        RawBytes::header(3, 0, 1)
            .kv("general.architecture", &MetaValue::U32(1))
            .into_vec(),
        s,
        C::GgufMetadataType,
        "llama.cpp (general.architecture is a string)",
    );

    // --- tensor infos ---
    let n64 = "t".repeat(64);
    add(
        "tensor_name_64_bytes",
        one_tensor(&n64, &[8], 0, 0, 32),
        s,
        C::GgufTensorNameLength,
        "gguf.cpp GGML_MAX_NAME (name >= 64)",
    );
    add(
        "tensor_name_65_bytes_spec_mode",
        one_tensor(&"t".repeat(65), &[8], 0, 0, 32),
        Mode::Spec,
        C::GgufTensorNameLength,
        "gguf.md (name at most 64 bytes)",
    );
    let mut w = base();
    w.tensor_raw(raw_tensor("a", &[8], 0, 32, 0))
        .tensor_raw(raw_tensor("a", &[8], 0, 32, 32));
    add(
        "tensor_name_duplicate",
        with_data(&w, 64),
        s,
        C::GgufTensorNameDuplicate,
        "test-gguf.cpp HANDCRAFTED_TENSORS_DUPLICATE_NAME",
    );
    add(
        "n_dims_0",
        one_tensor("a", &[], 0, 0, 32),
        s,
        C::GgufTensorNDims,
        "CVE-2024-21802",
    );
    add(
        "n_dims_5",
        one_tensor("a", &[8, 1, 1, 1, 1], 0, 0, 32),
        s,
        C::GgufTensorNDims,
        "CVE-2024-21802; test-gguf.cpp HANDCRAFTED_TENSORS_BAD_N_DIMS",
    );
    let b = RawBytes::header(3, 1, 1)
        .kv("general.architecture", &MetaValue::str(ARCH))
        .string("a")
        .u32(u32::MAX)
        .u64(8)
        .u32(0)
        .u64(0)
        .into_vec();
    add("n_dims_u32_max", b, s, C::GgufTensorNDims, "CVE-2024-21802");
    add(
        "dim_zero",
        one_tensor("a", &[8, 0], 0, 0, 32),
        s,
        C::GgufTensorDim,
        "test-gguf.cpp HANDCRAFTED_TENSORS_BAD_SHAPE",
    );
    add(
        "dim_negative",
        one_tensor("a", &[8, u64::MAX], 0, 0, 32),
        s,
        C::GgufTensorDim,
        "test-gguf.cpp HANDCRAFTED_TENSORS_BAD_SHAPE (ne < 0)",
    );
    add(
        "ne_int64max_2_1_1",
        one_tensor("a", &[i64::MAX as u64, 2, 1, 1], 0, 0, 32),
        s,
        C::GgufTensorElementOverflow,
        "test-gguf.cpp HANDCRAFTED_TENSORS_NE_TOO_BIG",
    );
    add(
        "f32_ne0_size_max_over_4",
        one_tensor("a", &[u64::MAX / 4], 0, 0, 32),
        s,
        C::GgufTensorSizeOverflow,
        "spec/gguf.md#gguf-hostile-inputs (GGML_PAD of the byte size wraps to 0)",
    );
    add(
        "f32_ne0_2pow62",
        one_tensor("a", &[1 << 62], 0, 0, 32),
        s,
        C::GgufTensorElementOverflow,
        "spec/gguf.md#gguf-hostile-inputs (row stride 2^62*4 overflows)",
    );
    add(
        "ne0_not_block_multiple",
        one_tensor("a", &[33], 8, 0, 64),
        s,
        C::GgufTensorBlockMultiple,
        "test-gguf.cpp HANDCRAFTED_TENSORS_BAD_BLOCK_SIZE",
    );
    for (name, id) in [
        ("type_minus_1", u32::MAX),
        ("type_4_removed", 4),
        ("type_31_removed", 31),
        ("type_36_removed", 36),
        ("type_43_unknown", 43),
        ("type_144_unknown", 144),
    ] {
        add(
            name,
            one_tensor("a", &[32], id, 0, 64),
            s,
            C::GgufTensorType,
            "test-gguf.cpp HANDCRAFTED_TENSORS_BAD_TYPE; spec/ggml-types.md#ggml-type-ids removed ids",
        );
    }
    add(
        "offset_not_aligned",
        one_tensor("a", &[8], 0, 16, 64),
        s,
        C::GgufTensorOffsetAlignment,
        "test-gguf.cpp HANDCRAFTED_TENSORS_BAD_ALIGNMENT",
    );
    let mut w = base();
    w.tensor_raw(raw_tensor("a", &[8], 0, 32, 0))
        .tensor_raw(raw_tensor("b", &[8], 0, 32, 64));
    add(
        "offset_not_running_sum",
        with_data(&w, 96),
        s,
        C::GgufTensorOffsetSequence,
        "gguf.cpp (tensor 'x' has offset N, expected M)",
    );
    let mut w = base();
    w.tensor_raw(raw_tensor("a", &[16], 0, 64, 0))
        .tensor_raw(raw_tensor("b", &[8], 0, 32, 32));
    add(
        "tensor_overlap_spec_mode",
        with_data(&w, 96),
        Mode::Spec,
        C::GgufTensorOverlap,
        "gguf.md (tensors must not overlap)",
    );
    add(
        "offset_past_eof_spec_mode",
        one_tensor("a", &[8], 0, 1 << 40, 32),
        Mode::Spec,
        C::GgufTensorOutOfBounds,
        "CVE-2026-7482 class",
    );
    add(
        "size_past_eof",
        one_tensor("a", &[1 << 20], 0, 0, 64),
        s,
        C::GgufTensorOutOfBounds,
        "CVE-2026-7482 class",
    );
    // Four I8 tensors of 2^62 bytes at the running sum: the fourth sum wraps to 0.
    let q = 1u64 << 62;
    let mut w = base();
    for (i, name) in ["a", "b", "c", "d"].into_iter().enumerate() {
        w.tensor_raw(raw_tensor(name, &[q], 24, q, q * i as u64));
    }
    add(
        "sum_of_sizes_wraps",
        with_data(&w, 64),
        s,
        C::GgufTensorSizeOverflow,
        "CVE-2025-53630",
    );
    add(
        "offset_plus_size_wraps_spec_mode",
        one_tensor("a", &[16], 0, u64::MAX - 31, 64),
        Mode::Spec,
        C::GgufTensorSizeOverflow,
        "CVE-2026-27940 / CVE-2025-53630 class",
    );
    let mut b = one_tensor("a", &[8], 0, 0, 32);
    b.pop();
    add(
        "data_truncated_by_one_byte",
        b,
        s,
        C::GgufTensorOutOfBounds,
        "test-gguf.cpp HANDCRAFTED_DATA_NOT_ENOUGH_DATA",
    );

    // --- id 42 ---
    let mut w = base();
    w.tensor_raw(raw_tensor("q", &[4096], 42, 1120, 0))
        .tensor_raw(raw_tensor("f", &[8], 0, 32, 1120));
    add(
        "id42_neither_g64_nor_g128",
        with_data(&w, 1152),
        s,
        C::GgufId42Ambiguous,
        "spec/ggml-types.md#id-42 (id 42 ambiguity)",
    );
    let spec = crate::spec::get();
    let mut w = base();
    if let (Ok(w1), Some(legacy)) = (
        w.tensor("g64", &[4096], 42),
        spec.ggml_type_named("Q2_0_PRISM_LEGACY"),
    ) {
        let _ = w1.tensor_as("g128", &[4096], legacy);
    }
    add(
        "id42_mixed_g64_and_g128",
        with_data(&w, 1152 + 1088),
        s,
        C::GgufId42Ambiguous,
        "spec/ggml-types.md#id-42 (one layout per file)",
    );

    // --- decode phase ---
    let mut dec = |name, class, source, decode| {
        v.push(HostileCase {
            name,
            bytes: valid.clone(),
            mode: s,
            class,
            source,
            decode: Some(decode),
        })
    };
    dec(
        "array_element_type_confusion",
        C::GgufMetadataType,
        "spec/gguf.md#gguf-hostile-inputs (declared U8, consumer expects 4-byte)",
        Decode::ArrayAs {
            key: "hostile.ids",
            elem: ValueType::I32,
        },
    );
    dec(
        "scalar_type_confusion",
        C::GgufMetadataType,
        "spec/gguf.md#gguf-hostile-inputs (typed getter on the wrong type)",
        Decode::ScalarAs {
            key: "hostile.count",
            ty: ValueType::I32,
        },
    );
    dec(
        "required_key_missing",
        C::GgufMetadataMissing,
        "consumer requires a key",
        Decode::ScalarAs {
            key: "hostile.block_count",
            ty: ValueType::U32,
        },
    );
    dec(
        "required_tensor_missing",
        C::GgufTensorMissing,
        "consumer requires a tensor",
        Decode::Tensor {
            name: "output.weight",
        },
    );
    dec(
        "tensor_shape_mismatch",
        C::GgufTensorShape,
        "consumer requires a shape",
        Decode::TensorShape {
            name: "a",
            dims: &[16],
            ggml: "F32",
        },
    );
    v.extend(nul_twin_cases());
    v
}

/// Inputs that must parse (and pass their consumer step).
pub fn accepted_controls() -> Vec<ControlCase> {
    let mut v = Vec::new();
    let mut add = |name, bytes, mode, source| {
        v.push(ControlCase {
            name,
            bytes,
            mode,
            source,
            decode: None,
        })
    };
    let s = Mode::Strict;
    let valid = valid_small();
    add("valid_small", valid.clone(), s, "writer output");
    add(
        "valid_small_spec_mode",
        valid.clone(),
        Mode::Spec,
        "writer output",
    );
    add(
        "version_2",
        set_version(valid.clone(), 2),
        s,
        "spec/gguf.md#gguf-header (v2 readable)",
    );
    add(
        "alignment_absent_defaults_to_32",
        one_tensor("a", &[8], 0, 0, 32),
        s,
        "gguf.md (default alignment 32)",
    );
    let mut w = base();
    let _ = w
        .alignment(64)
        .and_then(|w| w.tensor("a", &[8], 0))
        .and_then(|w| w.tensor("b", &[8], 0));
    add(
        "alignment_64",
        with_data(&w, 96),
        s,
        "gguf.md (custom alignment)",
    );
    let mut w = base();
    let _ = w
        .alignment(1)
        .and_then(|w| w.tensor("a", &[3], 1))
        .and_then(|w| w.tensor("b", &[8], 0));
    add(
        "alignment_1",
        with_data(&w, 6 + 32),
        s,
        "gguf.cpp (any power of two)",
    );
    add(
        "tensor_name_64_bytes_spec_mode",
        one_tensor(&"t".repeat(64), &[8], 0, 0, 32),
        Mode::Spec,
        "gguf.md (name at most 64 bytes)",
    );
    let mut w = base();
    w.tensor_raw(raw_tensor("a", &[8], 0, 32, 0))
        .tensor_raw(raw_tensor("b", &[8], 0, 32, 64));
    add(
        "offset_gap_spec_mode",
        with_data(&w, 96),
        Mode::Spec,
        "gguf.md (offsets need only be aligned)",
    );
    add(
        "architecture_absent_spec_mode",
        RawBytes::header(3, 0, 1)
            .kv("general.name", &MetaValue::str("x"))
            .into_vec(),
        Mode::Spec,
        "gguf.md (architecture optional to the container)",
    );
    let mut w = base();
    let _ = w.tensor("q", &[4096], 42);
    add(
        "id42_mainline_g64",
        with_data(&w, 1152),
        s,
        "spec/ggml-types.md#id-42 (mainline Q2_0 g64)",
    );
    let mut w = base();
    if let Some(legacy) = crate::spec::get().ggml_type_named("Q2_0_PRISM_LEGACY") {
        let _ = w.tensor_as("q", &[4096], legacy);
    }
    add(
        "id42_legacy_prism_g128",
        with_data(&w, 1088),
        s,
        "spec/ggml-types.md#id-42 (legacy Prism Q2_0 g128)",
    );
    v
}

/// NUL twins (layer `recommended`, strict mode): names equal up to a NUL byte, which mainline's
/// C-string API hands out as one name (`conformance/INTEROP.md`, gguf.cpp:662, :1074-1076).
fn nul_twin_cases() -> Vec<HostileCase> {
    let case = |name, bytes, source| HostileCase {
        name,
        bytes,
        mode: Mode::Strict,
        class: C::GgufNameNulTwin,
        source,
        decode: None,
    };
    let mut w = base();
    w.tensor_raw(raw_tensor("a", &[8], 0, 32, 0))
        .tensor_raw(raw_tensor("a\0", &[8], 0, 32, 32));
    let keys = RawBytes::header(3, 0, 3)
        .kv("general.architecture", &MetaValue::str(ARCH))
        .kv("hostile.k\0y", &MetaValue::U32(1))
        .kv("hostile.k\0z", &MetaValue::U32(2))
        .into_vec();
    vec![
        case(
            "tensor_name_nul_twin",
            with_data(&w, 64),
            "conformance/INTEROP.md (gguf.cpp:662 ggml_set_name(name.c_str()))",
        ),
        case(
            "key_nul_twin",
            keys,
            "conformance/INTEROP.md (gguf.cpp:1074-1076 gguf_get_key returns c_str())",
        ),
    ]
}
