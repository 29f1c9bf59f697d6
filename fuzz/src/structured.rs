//! `gguf_structured`: an `arbitrary`-derived description of a GGUF file, rendered with
//! `GgufWriter` (using its `tensor_raw` / `MetaValue::Raw` escape hatches for hostile fields),
//! so the fuzzer reaches the deep parts of the reader (tensor infos, offsets, id-42
//! resolution) instead of dying on the magic.
//!
//! ## What "well-formed" means (the generator's guarantee)
//! A description is well-formed when all of these hold:
//! * version is 3 or 2; alignment is the default or a power of two 1..=4096 set with
//!   `GgufWriter::alignment`; `general.architecture` is a string;
//! * every KV key is unique (also up to a NUL byte: `gguf.name_nul_twin`), non-empty and not `general.alignment`/`general.architecture`,
//!   and every value is a proper scalar, string or array (no `Raw`, no mixed array);
//! * every tensor has a unique (also up to a NUL byte) non-empty name shorter than 64 bytes, a known `types` id,
//!   dims from [`ShapeChoice::Blocks`] (ne[0] a multiple of the block size, small), and the
//!   writer's own offset (running padded sum);
//! * the file is not truncated; trailing bytes only when no tensor has id 42 (they would
//!   change the id-42 span rule).
//!
//! For a well-formed description strict parsing must succeed, and every KV and every tensor's
//! data must come back exactly. Every description also goes through `checks::check_gguf`.

use crate::checks;
use arbitrary::Arbitrary;
use ninfer_ternary::gguf::{self, GgufWriter, MetaValue, Mode, ValueType, WriterTensor};
use ninfer_ternary::spec;
use std::collections::HashSet;

const MAX_KVS: usize = 8;
const MAX_TENSORS: usize = 8;
const MAX_STR: usize = 48;
const MAX_ARRAY: usize = 64;
const MAX_HOSTILE_DATA: u64 = 64 << 10;

#[derive(Arbitrary, Debug, Clone)]
pub struct GgufDesc {
    pub version: VersionChoice,
    pub alignment: AlignChoice,
    pub arch: ArchChoice,
    pub kvs: Vec<KvDesc>,
    pub tensors: Vec<TensorDesc>,
    pub tail: TailChoice,
    pub seed: u8,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum VersionChoice {
    V3,
    V2,
    Raw(u32),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum AlignChoice {
    Default,
    /// `1 << (x % 13)` via `GgufWriter::alignment` (changes the layout).
    Pow2(u8),
    /// 2^31 written as a plain KV (the writer keeps 32; the reader uses 2^31).
    Huge,
    /// Any U32 written as a plain KV (0, 3, ...).
    Value(u32),
    /// Another value type (e.g. INT32-typed alignment).
    WrongType(ScalarDesc),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ArchChoice {
    Present(SmallStr),
    Absent,
    WrongType(ScalarDesc),
}

#[derive(Arbitrary, Debug, Clone)]
pub struct KvDesc {
    pub key: KeyChoice,
    pub value: ValueDesc,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum KeyChoice {
    /// A fresh unique key `fz.<i>`.
    Fresh,
    Empty,
    /// The key of an earlier KV (a duplicate).
    DuplicateOf(u8),
    Named(SmallStr),
}

/// A string of at most `MAX_STR` bytes.
#[derive(Arbitrary, Debug, Clone)]
pub struct SmallStr(pub String);

impl SmallStr {
    pub fn get(&self) -> &str {
        let s = &self.0;
        let mut end = s.len().min(MAX_STR);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        &s[..end]
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ScalarDesc {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(SmallStr),
}

impl ScalarDesc {
    pub fn meta(&self) -> MetaValue {
        match self {
            ScalarDesc::U8(x) => MetaValue::U8(*x),
            ScalarDesc::I8(x) => MetaValue::I8(*x),
            ScalarDesc::U16(x) => MetaValue::U16(*x),
            ScalarDesc::I16(x) => MetaValue::I16(*x),
            ScalarDesc::U32(x) => MetaValue::U32(*x),
            ScalarDesc::I32(x) => MetaValue::I32(*x),
            ScalarDesc::F32(x) => MetaValue::F32(*x),
            ScalarDesc::Bool(x) => MetaValue::Bool(*x),
            ScalarDesc::U64(x) => MetaValue::U64(*x),
            ScalarDesc::I64(x) => MetaValue::I64(*x),
            ScalarDesc::F64(x) => MetaValue::F64(*x),
            ScalarDesc::Str(s) => MetaValue::str(s.get()),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ArrayDesc {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<SmallStr>),
}

fn arr<T: Copy + gguf::Scalar + Into<MetaValue>>(v: &[T]) -> MetaValue {
    MetaValue::array(&v[..v.len().min(MAX_ARRAY)])
}

impl ArrayDesc {
    pub fn meta(&self) -> MetaValue {
        match self {
            ArrayDesc::U8(v) => arr(v),
            ArrayDesc::I8(v) => arr(v),
            ArrayDesc::U16(v) => arr(v),
            ArrayDesc::I16(v) => arr(v),
            ArrayDesc::U32(v) => arr(v),
            ArrayDesc::I32(v) => arr(v),
            ArrayDesc::F32(v) => arr(v),
            ArrayDesc::Bool(v) => arr(v),
            ArrayDesc::U64(v) => arr(v),
            ArrayDesc::I64(v) => arr(v),
            ArrayDesc::F64(v) => arr(v),
            ArrayDesc::Str(v) => {
                let items: Vec<&str> = v.iter().take(MAX_ARRAY).map(|s| s.get()).collect();
                MetaValue::array_str(&items)
            }
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ValueDesc {
    Scalar(ScalarDesc),
    Array(ArrayDesc),
    /// BOOL with a byte other than 0/1 (when > 1).
    BadBool(u8),
    /// An array of arrays.
    NestedArray,
    /// Any type id (e.g. 13) followed by a few verbatim bytes.
    UnknownType(u32, Vec<u8>),
    /// A STRING whose length prefix is `len` but only a few bytes follow.
    StringLen(u64),
    /// An ARRAY header with any element type and count, then 8 bytes.
    ArrayHeader(u32, u64),
    /// Items written under another declared element type (type confusion).
    Mixed(u8, Vec<ScalarDesc>),
}

impl ValueDesc {
    fn well_formed(&self) -> bool {
        matches!(self, ValueDesc::Scalar(_) | ValueDesc::Array(_))
    }

    pub fn meta(&self) -> MetaValue {
        let raw = |type_id: u32, bytes: Vec<u8>| MetaValue::Raw { type_id, bytes };
        match self {
            ValueDesc::Scalar(s) => s.meta(),
            ValueDesc::Array(a) => a.meta(),
            ValueDesc::BadBool(b) => raw(7, vec![*b]),
            ValueDesc::NestedArray => {
                let mut b = 9u32.to_le_bytes().to_vec();
                b.extend_from_slice(&1u64.to_le_bytes());
                b.extend_from_slice(&0u32.to_le_bytes());
                b.extend_from_slice(&0u64.to_le_bytes());
                raw(9, b)
            }
            ValueDesc::UnknownType(t, bytes) => raw(*t, bytes.iter().take(16).copied().collect()),
            ValueDesc::StringLen(n) => {
                let mut b = n.to_le_bytes().to_vec();
                b.extend_from_slice(b"abc");
                raw(8, b)
            }
            ValueDesc::ArrayHeader(elem, count) => {
                let mut b = elem.to_le_bytes().to_vec();
                b.extend_from_slice(&count.to_le_bytes());
                b.extend_from_slice(&[1u8; 8]);
                raw(9, b)
            }
            ValueDesc::Mixed(elem, items) => MetaValue::Array(
                ValueType::from_id(*elem as u32 % 13).unwrap_or(ValueType::U8),
                items.iter().take(MAX_ARRAY).map(|s| s.meta()).collect(),
            ),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct TensorDesc {
    pub name: NameChoice,
    pub shape: ShapeChoice,
    pub ty: TypeChoice,
    pub offset: OffsetChoice,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum NameChoice {
    /// A fresh unique name `t<i>`.
    Fresh,
    Named(SmallStr),
    DuplicateOf(u8),
    /// A name of `60 + x % 8` bytes (around the 63/64-byte limits).
    Long(u8),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum ShapeChoice {
    /// ne[0] = block_elems * (1 + blocks % 4); then up to 3 dims of 1..=2.
    Blocks { blocks: u8, rest: Vec<bool> },
    /// Any dims (0..=6 of them).
    Raw(Vec<u64>),
    /// One of the overflow shapes of spec/gguf.md#gguf-hostile-inputs.
    Overflow(u8),
}

const OVERFLOW_SHAPES: &[&[u64]] = &[
    &[i64::MAX as u64, 2, 1, 1],
    &[u64::MAX / 4],
    &[(u64::MAX / 4) & !255],
    &[1 << 62],
    &[1 << 62, 4],
    &[1 << 32, 1 << 32],
    &[1 << 31, 1 << 31, 4],
    &[0],
    &[u64::MAX],
    &[256, 0, 1],
    &[1 << 40, 1 << 20, 1 << 3],
    &[128, i64::MAX as u64 / 2],
];

#[derive(Arbitrary, Debug, Clone)]
pub enum TypeChoice {
    /// Index into the spec's `types` table.
    Known(u8),
    /// Id 42 laid out as legacy Prism g128.
    Legacy42,
    Raw(u32),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum OffsetChoice {
    /// The writer's running padded sum.
    Auto,
    /// Running sum plus `delta` (clamped at 0).
    Delta(i32),
    Raw(u64),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum TailChoice {
    Exact,
    /// Cut `n % (len + 1)` bytes off the end.
    Truncate(u16),
    /// Append `n` bytes.
    Extra(u8),
}

/// A rendered description.
pub struct Rendered {
    pub bytes: Vec<u8>,
    pub well_formed: bool,
    /// For well-formed renders: the writer and each tensor's data.
    pub writer: GgufWriter,
    pub data: Vec<Vec<u8>>,
    /// Every KV in file order, as written.
    pub kvs: Vec<(String, MetaValue)>,
}

fn pattern(seed: u8, i: usize, n: u64) -> Vec<u8> {
    (0..n)
        .map(|j| {
            (j as u8)
                .wrapping_mul(29)
                .wrapping_add(seed)
                .wrapping_add(i as u8 * 7)
        })
        .collect()
}

fn add_kv(w: &mut GgufWriter, kvs: &mut Vec<(String, MetaValue)>, key: &str, v: MetaValue) {
    w.kv(key, v.clone());
    kvs.push((key.to_owned(), v));
}

/// Renders the description to bytes (see the module docs for the well-formedness rule).
pub fn render(d: &GgufDesc) -> Option<Rendered> {
    let mut w = GgufWriter::new();
    let mut kvs: Vec<(String, MetaValue)> = Vec::new();
    let meta_wf = render_metadata(d, &mut w, &mut kvs)?;
    let (tensors_wf, any42) = render_tensors(d, &mut w)?;
    let mut wf = meta_wf && tensors_wf;
    let (mut bytes, data) = if wf {
        let data: Vec<Vec<u8>> = w
            .tensors()
            .iter()
            .enumerate()
            .map(|(i, t)| pattern(d.seed, i, t.nbytes))
            .collect();
        let refs: Vec<&[u8]> = data.iter().map(|v| v.as_slice()).collect();
        let bytes = w
            .to_bytes(&refs)
            .expect("a well-formed description must write");
        (bytes, data)
    } else {
        let mut bytes = w.header_bytes().ok()?;
        let want = w
            .file_len()
            .ok()
            .map_or(64, |l| l.saturating_sub(bytes.len() as u64));
        bytes.extend(pattern(d.seed, 0, want.min(MAX_HOSTILE_DATA)));
        (bytes, Vec::new())
    };
    match d.tail {
        TailChoice::Exact => {}
        TailChoice::Truncate(n) => {
            let cut = n as usize % (bytes.len() + 1);
            wf &= cut == 0;
            bytes.truncate(bytes.len() - cut);
        }
        TailChoice::Extra(n) => {
            wf &= n == 0 || !any42;
            bytes.extend(std::iter::repeat(0xA5).take(n as usize));
        }
    }
    Some(Rendered {
        bytes,
        well_formed: wf,
        writer: w,
        data,
        kvs,
    })
}

/// The version, architecture, alignment and generated KVs of `d` into `w` (each KV also in
/// `kvs`); whether they are well-formed.
fn render_metadata(
    d: &GgufDesc,
    w: &mut GgufWriter,
    kvs: &mut Vec<(String, MetaValue)>,
) -> Option<bool> {
    let s = spec::get();
    let mut wf = true;
    match d.version {
        VersionChoice::V3 => {}
        VersionChoice::V2 => {
            w.version(2);
        }
        VersionChoice::Raw(v) => {
            w.version(v);
            wf &= s.gguf.versions_readable.contains(&v);
        }
    }
    let mut keys: Vec<String> = Vec::new();
    match &d.arch {
        ArchChoice::Present(a) => {
            add_kv(w, kvs, &s.gguf.architecture_key, MetaValue::str(a.get()));
            keys.push(s.gguf.architecture_key.clone());
        }
        ArchChoice::Absent => wf = false,
        ArchChoice::WrongType(v) => {
            wf &= matches!(v, ScalarDesc::Str(_));
            add_kv(w, kvs, &s.gguf.architecture_key, v.meta());
            keys.push(s.gguf.architecture_key.clone());
        }
    }
    let align_key = s.gguf.alignment_key.as_str();
    match &d.alignment {
        AlignChoice::Default => {}
        AlignChoice::Pow2(x) => {
            let a = 1u32 << (x % 13);
            w.alignment(a).ok()?;
            kvs.push((align_key.to_owned(), MetaValue::U32(a)));
            keys.push(align_key.to_owned());
        }
        AlignChoice::Huge => {
            add_kv(w, kvs, align_key, MetaValue::U32(1 << 31));
            keys.push(align_key.to_owned());
            wf = false;
        }
        AlignChoice::Value(v) => {
            add_kv(w, kvs, align_key, MetaValue::U32(*v));
            keys.push(align_key.to_owned());
            wf = false;
        }
        AlignChoice::WrongType(v) => {
            add_kv(w, kvs, align_key, v.meta());
            keys.push(align_key.to_owned());
            wf = false;
        }
    }
    let mut seen: HashSet<String> = keys.iter().cloned().collect();
    // Keys equal up to a NUL byte are refused in strict mode (gguf.name_nul_twin).
    let mut seen_c: HashSet<String> = keys
        .iter()
        .map(|k| gguf::c_string_form(k).to_owned())
        .collect();
    for (i, kv) in d.kvs.iter().take(MAX_KVS).enumerate() {
        let key = match &kv.key {
            KeyChoice::Fresh => format!("fz.{i}"),
            KeyChoice::Empty => String::new(),
            KeyChoice::DuplicateOf(j) if !keys.is_empty() => keys[*j as usize % keys.len()].clone(),
            KeyChoice::DuplicateOf(_) => s.gguf.architecture_key.clone(),
            KeyChoice::Named(n) => n.get().to_owned(),
        };
        // general.alignment / general.architecture carry type rules of their own: a generated
        // value under those names is a hostile field, not part of a well-formed file.
        let reserved = key == align_key || key == s.gguf.architecture_key;
        wf &= !key.is_empty()
            && !reserved
            && seen.insert(key.clone())
            && seen_c.insert(gguf::c_string_form(&key).to_owned())
            && kv.value.well_formed();
        add_kv(w, kvs, &key, kv.value.meta());
        keys.push(key);
    }
    Some(wf)
}

/// The tensor infos of `d` into `w` (offsets perturbed as described); whether they are
/// well-formed, and whether any has type id 42.
fn render_tensors(d: &GgufDesc, w: &mut GgufWriter) -> Option<(bool, bool)> {
    let s = spec::get();
    let mut wf = true;
    // Tensors: first with writer offsets, to learn the running sums for perturbations.
    let types = &s.ggml.types;
    let legacy = s
        .ggml
        .variants
        .iter()
        .find(|t| t.id == 42 && t.retag_to.is_some());
    let mut names: Vec<String> = Vec::new();
    let mut tensors: Vec<(WriterTensor, OffsetChoice)> = Vec::new();
    let mut any42 = false;
    for (i, t) in d.tensors.iter().take(MAX_TENSORS).enumerate() {
        let name = match &t.name {
            NameChoice::Fresh => format!("t{i}"),
            NameChoice::Named(n) => n.get().to_owned(),
            NameChoice::DuplicateOf(j) if !names.is_empty() => {
                names[*j as usize % names.len()].clone()
            }
            NameChoice::DuplicateOf(_) => String::new(),
            NameChoice::Long(x) => "n".repeat(60 + (*x as usize % 8)),
        };
        let ggml = match t.ty {
            TypeChoice::Known(k) if !types.is_empty() => Some(&types[k as usize % types.len()]),
            TypeChoice::Known(_) => None,
            TypeChoice::Legacy42 => {
                wf = false;
                legacy
            }
            TypeChoice::Raw(id) => {
                wf = false;
                s.ggml_type(id)
            }
        };
        let type_id = match t.ty {
            TypeChoice::Raw(id) => id,
            _ => ggml.map_or(0, |g| g.id),
        };
        any42 |= type_id == 42;
        let dims: Vec<u64> = match &t.shape {
            ShapeChoice::Blocks { blocks, rest } => {
                let be = ggml.map_or(1, |g| g.block_elems.max(1) as u64);
                let mut v = vec![be * (1 + *blocks as u64 % 4)];
                v.extend(rest.iter().take(3).map(|&b| 1 + b as u64));
                v
            }
            ShapeChoice::Raw(v) => {
                wf = false;
                v.iter().take(6).copied().collect()
            }
            ShapeChoice::Overflow(k) => {
                wf = false;
                OVERFLOW_SHAPES[*k as usize % OVERFLOW_SHAPES.len()].to_vec()
            }
        };
        let nbytes = match ggml {
            Some(g) => gguf::tensor_size(&dims, g).map_or(32, |x| x.1),
            None => 32,
        };
        wf &= !name.is_empty()
            && (name.len() as u64) < s.gguf.strict.max_tensor_name_bytes
            && !names
                .iter()
                .any(|n| gguf::c_string_form(n) == gguf::c_string_form(&name))
            && matches!(t.offset, OffsetChoice::Auto);
        names.push(name.clone());
        tensors.push((
            WriterTensor {
                name,
                dims,
                type_id,
                nbytes,
                offset: None,
            },
            t.offset.clone(),
        ));
    }
    let mut base = w.clone();
    for (t, _) in &tensors {
        base.tensor_raw(t.clone());
    }
    let running = base.offsets().ok()?;
    for ((t, off), run) in tensors.iter().zip(&running) {
        let offset = match off {
            OffsetChoice::Auto => None,
            OffsetChoice::Delta(d) => Some((*run as i128 + *d as i128).max(0) as u64),
            OffsetChoice::Raw(v) => Some(*v),
        };
        w.tensor_raw(WriterTensor {
            offset,
            ..t.clone()
        });
    }
    Some((wf, any42))
}

/// The `gguf_structured` check: render, run every raw-bytes check, and for a well-formed
/// description require a strict parse that returns every KV and tensor exactly.
pub fn check_desc(d: &GgufDesc) {
    let Some(r) = render(d) else {
        return;
    };
    checks::check_gguf(&r.bytes);
    if !r.well_formed {
        return;
    }
    let g = match gguf::parse(&r.bytes, Mode::Strict) {
        Ok(g) => g,
        Err(e) => panic!("well-formed description refused in strict mode: {e}\n{d:?}"),
    };
    let w = &r.writer;
    assert_eq!(g.alignment, w.layout_alignment());
    assert_eq!(Some(g.data_offset), w.data_offset().ok());
    assert_eq!(g.tensors.len(), w.tensors().len());
    for ((t, wt), data) in g.tensors.iter().zip(w.tensors()).zip(&r.data) {
        assert_eq!(t.name, wt.name);
        assert_eq!(t.dims(), wt.dims.as_slice());
        assert_eq!(t.type_id, wt.type_id);
        assert_eq!(t.nbytes, wt.nbytes);
        assert_eq!(
            g.tensor_data(t),
            data.as_slice(),
            "tensor '{}' data",
            t.name
        );
        if t.type_id != 42 {
            assert_eq!(
                spec::get().ggml_type(t.type_id).map(|x| &x.name),
                Some(&t.ggml.name)
            );
        } else {
            assert!(
                t.ggml.retag_to.is_none(),
                "a mainline id-42 tensor read as legacy"
            );
        }
    }
    // KVs: same keys in order, same encoded values.
    assert_eq!(g.kvs.len(), r.kvs.len());
    for (kv, (key, v)) in g.kvs.iter().zip(&r.kvs) {
        assert_eq!(kv.key, key);
        let (mut got, mut want) = (Vec::new(), Vec::new());
        kv.value.to_owned_value().write_payload(&mut got);
        v.write_payload(&mut want);
        assert_eq!(got, want, "value of {key:?}");
        assert_eq!(kv.value.value_type().id(), v.type_id());
    }
}
