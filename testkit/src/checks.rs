//! The checking functions behind the fuzz targets.
//!
//! No libfuzzer or `arbitrary` dependency: the fuzz crate re-exports this module as
//! `ninfer_ternary_fuzz::checks`, and `testkit/tests/fuzz/fuzz_regressions.rs` calls it
//! through [`crate::targets`], so every seed and regression input is replayed through exactly
//! the code the fuzzers run.
//!
//! Every check either returns normally or panics (an assertion failure is a finding).

use ninfer_ternary::error::Error;
use ninfer_ternary::geometry::Plane;
use ninfer_ternary::gguf::{
    self, Gguf, GgufWriter, Id42Policy, Mode, Options, Scalar, Value, ValueType, WriterTensor,
};
use ninfer_ternary::ninfer::{self, Artifact, ObjectBody, ObjectView, PlannedObject, RowSplitView};
use ninfer_ternary::spec;
use std::collections::HashSet;

/// Reader configurations every GGUF input is parsed with.
pub const GGUF_OPTIONS: [Options; 4] = [
    Options {
        mode: Mode::Spec,
        id42: Id42Policy::Auto,
    },
    Options {
        mode: Mode::Strict,
        id42: Id42Policy::Auto,
    },
    Options {
        mode: Mode::Strict,
        id42: Id42Policy::Mainline,
    },
    Options {
        mode: Mode::Spec,
        id42: Id42Policy::LegacyPrism,
    },
];

/// The canonical re-write is skipped when it would be larger than this (hostile alignments
/// such as 2^31 make a tiny file describe a huge padded one).
const MAX_REWRITE_BYTES: u64 = 16 << 20;

/// Any error a reader returns: located inside the input, of the reader's class family, and
/// printable.
pub fn check_error(e: &Error, len: usize, family: &str) {
    if let Some(off) = e.offset() {
        assert!(
            off <= len as u64,
            "error offset {off} is past the end of the {len}-byte input: {e}"
        );
    }
    assert!(
        e.class().id().starts_with(family),
        "a {family} reader returned an error of class {}: {e}",
        e.class()
    );
    assert!(!e.detail().is_empty(), "error without detail: {e:?}");
    assert!(!e.to_string().is_empty());
}

// ------------------------------------------------------------------------------------------
// GGUF
// ------------------------------------------------------------------------------------------

/// `gguf_parse`: parse in every mode/id-42 policy; walk and check every accepted file; a file
/// accepted in strict mode must be accepted in spec mode with the same layout; the canonical
/// re-write of an accepted file must parse to the same content and be a fixed point.
pub fn check_gguf(data: &[u8]) {
    let mut strict_auto = None;
    let mut spec_auto = None;
    for opts in GGUF_OPTIONS {
        match gguf::parse_with(data, opts) {
            Ok(g) => {
                check_gguf_ok(data, &g, opts);
                if opts.id42 == Id42Policy::Auto {
                    let summary = layout_summary(&g);
                    match opts.mode {
                        Mode::Strict => strict_auto = Some(summary),
                        Mode::Spec => spec_auto = Some(summary),
                    }
                    check_gguf_rewrite(&g, opts.mode);
                }
            }
            Err(e) => check_error(&e, data.len(), "gguf."),
        }
    }
    // `parse` is `parse_with(.., Auto)`.
    assert_eq!(
        gguf::parse(data, Mode::Strict)
            .map(|g| layout_summary(&g))
            .ok(),
        strict_auto
    );
    if let Some(s) = strict_auto {
        let spec = spec_auto.expect("a file accepted in strict mode must be accepted in spec mode");
        assert_eq!(s, spec, "strict and spec mode disagree on the layout");
    }
}

type LayoutSummary = (u64, u64, Vec<(String, u64, u64, String)>);

fn layout_summary(g: &Gguf<'_>) -> LayoutSummary {
    (
        g.alignment,
        g.data_offset,
        g.tensors
            .iter()
            .map(|t| {
                (
                    t.name.to_owned(),
                    t.abs_offset,
                    t.nbytes,
                    t.ggml.name.clone(),
                )
            })
            .collect(),
    )
}

/// Invariants of any accepted file.
pub fn check_gguf_ok(bytes: &[u8], g: &Gguf<'_>, opts: Options) {
    let s = spec::get();
    let len = bytes.len() as u64;
    assert_eq!(g.bytes().len(), bytes.len());
    assert_eq!(g.mode, opts.mode);
    assert!(s.gguf.versions_readable.contains(&g.version));
    assert!(g.alignment.is_power_of_two(), "alignment {}", g.alignment);
    assert!(g.tensor_info_offset >= 24);
    assert!(g.tensor_info_offset <= g.tensor_info_end && g.tensor_info_end <= len);
    assert_eq!(g.data_offset % g.alignment, 0, "data_offset not aligned");
    assert!(g.data_offset >= g.tensor_info_end && g.data_offset - g.tensor_info_end < g.alignment);
    if !g.tensors.is_empty() {
        assert!(
            g.data_offset <= len,
            "tensors but the data section starts past EOF"
        );
    }
    match g.get(&s.gguf.alignment_key) {
        Some(Value::U32(a)) => assert_eq!(*a as u64, g.alignment),
        Some(v) => panic!("accepted a general.alignment of type {}", v.value_type()),
        None => assert_eq!(g.alignment, s.gguf.default_alignment as u64),
    }
    if opts.mode == Mode::Strict && s.gguf.strict.architecture_required {
        assert!(
            g.architecture().is_some(),
            "strict accepted a file without an architecture"
        );
    }

    // --- KVs: records tile the KV block exactly, every accessor agrees with the value ---
    let mut keys = HashSet::new();
    let mut cursor = 24u64;
    for kv in &g.kvs {
        assert!(!kv.key.is_empty(), "accepted an empty key");
        assert!(keys.insert(kv.key), "accepted a duplicate key {:?}", kv.key);
        assert_eq!(kv.offset, cursor, "KV records are not contiguous");
        assert_eq!(kv.value_offset, kv.offset + 8 + kv.key.len() as u64);
        assert_eq!(
            g.kv(kv.key).map(|k| k.offset),
            Some(kv.offset),
            "kv() lookup"
        );
        let payload = value_payload(&kv.value);
        let start = (kv.value_offset + 4) as usize;
        assert_eq!(
            &bytes[kv.value_offset as usize..start],
            &kv.value.value_type().id().to_le_bytes(),
            "type id of {:?}",
            kv.key
        );
        assert_eq!(
            bytes.get(start..start + payload.len()),
            Some(payload.as_slice()),
            "re-encoded value of {:?} differs from the file bytes",
            kv.key
        );
        cursor = (start + payload.len()) as u64;
        walk_value(g, kv.key, &kv.value, bytes);
    }
    assert_eq!(cursor, g.tensor_info_offset, "KV block end");
    assert_eq!(keys.len(), g.kvs.len());

    // --- tensors ---
    let max_name = if opts.mode == Mode::Strict {
        s.gguf.strict.max_tensor_name_bytes
    } else {
        64
    };
    let mut names = HashSet::new();
    let mut running = 0u64;
    for (i, t) in g.tensors.iter().enumerate() {
        assert_eq!(t.index, i);
        assert!(
            t.name.len() as u64 <= max_name,
            "name of {} bytes",
            t.name.len()
        );
        assert!(names.insert(t.name), "accepted a duplicate tensor name");
        assert_eq!(g.tensor(t.name).map(|x| x.index), Some(i));
        assert!(g.require_tensor(t.name).is_ok());
        assert!(
            (1..=s.gguf.max_dims).contains(&t.n_dims),
            "n_dims {}",
            t.n_dims
        );
        assert_eq!(t.dims().len(), t.n_dims as usize);
        assert!(t.dims().iter().all(|&d| d > 0 && d <= i64::MAX as u64));
        assert!(t.ne[t.n_dims as usize..].iter().all(|&d| d == 1));
        assert_eq!(t.ggml.id, t.type_id, "resolved type has another id");
        let (n, nb) = gguf::tensor_size(t.dims(), t.ggml).expect("accepted dims must size");
        assert_eq!((n, nb), (t.n_elements, t.nbytes));
        assert_eq!(t.offset % g.alignment, 0, "tensor offset not aligned");
        assert_eq!(t.abs_offset, g.data_offset + t.offset);
        let end = t.abs_offset.checked_add(t.nbytes).expect("end overflows");
        assert!(
            end <= len,
            "tensor '{}' [{}, {end}) past EOF {len}",
            t.name,
            t.abs_offset
        );
        let d = g.tensor_data(t);
        assert_eq!(d.len() as u64, t.nbytes);
        assert_eq!(d, &bytes[t.abs_offset as usize..end as usize]);
        assert!(t.expect(t.dims(), Some(&t.ggml.name)).is_ok());
        if opts.mode == Mode::Strict && s.gguf.strict.offsets_equal_running_padded_sum {
            assert_eq!(
                t.offset, running,
                "strict accepted an out-of-sequence offset"
            );
        }
        running += t.nbytes.div_ceil(g.alignment) * g.alignment;
    }
    if opts.mode == Mode::Spec {
        let mut spans: Vec<(u64, u64)> = g.tensors.iter().map(|t| (t.offset, t.nbytes)).collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0,
                "spec mode accepted overlapping tensors"
            );
        }
    }
    assert!(g.require_tensor("\u{0}fuzz: no such tensor").is_err());
    // With the per-file id-42 rule, all id-42 tensors of one file share one layout (a forced
    // policy applies to ambiguous shapes only).
    if opts.id42 != Id42Policy::Auto {
        return;
    }
    let id42: HashSet<&str> = g
        .tensors
        .iter()
        .filter(|t| t.type_id == 42)
        .map(|t| t.ggml.name.as_str())
        .collect();
    assert!(id42.len() <= 1, "id-42 tensors resolved to several layouts");
}

/// The value's payload (without its type id) as the writer encodes it.
fn value_payload(v: &Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    v.to_owned_value().write_payload(&mut out);
    out
}

fn scalar_agrees<T: Scalar + PartialEq + std::fmt::Debug>(g: &Gguf<'_>, key: &str, v: &Value<'_>) {
    let want = v.value_type() == T::TYPE;
    let got = g.get_as::<T>(key);
    assert_eq!(got.is_ok(), want, "get_as::<{}>({key:?})", T::TYPE.name());
    if let Err(e) = got {
        assert_eq!(e.class(), ninfer_ternary::ErrorClass::GgufMetadataType);
    }
    assert_eq!(v.as_scalar::<T>().is_some(), want);
}

fn array_agrees<T: Scalar>(a: &gguf::ArrayView<'_>) {
    let r = a.as_vec::<T>();
    assert_eq!(r.is_ok(), a.elem == T::TYPE);
    if let Ok(v) = r {
        assert_eq!(v.len() as u64, a.count);
    }
}

fn walk_value(g: &Gguf<'_>, key: &str, v: &Value<'_>, bytes: &[u8]) {
    scalar_agrees::<u8>(g, key, v);
    scalar_agrees::<i8>(g, key, v);
    scalar_agrees::<u16>(g, key, v);
    scalar_agrees::<i16>(g, key, v);
    scalar_agrees::<u32>(g, key, v);
    scalar_agrees::<i32>(g, key, v);
    scalar_agrees::<u64>(g, key, v);
    scalar_agrees::<i64>(g, key, v);
    scalar_agrees::<bool>(g, key, v);
    // Floats: compare success only (NaN != NaN).
    assert_eq!(g.get_f32(key).is_ok(), v.value_type() == ValueType::F32);
    assert_eq!(
        g.get_as::<f64>(key).is_ok(),
        v.value_type() == ValueType::F64
    );
    assert_eq!(g.get_uint(key).ok(), v.as_u64_lossless());
    assert_eq!(g.get_str(key).ok(), v.as_str());
    assert_eq!(g.get_array(key).is_ok(), v.value_type() == ValueType::Array);
    if let Value::Array(a) = v {
        assert_ne!(a.elem, ValueType::Array, "accepted a nested array");
        let start = a.offset as usize;
        assert_eq!(
            bytes.get(start..start + a.raw.len()),
            Some(a.raw),
            "array raw bytes"
        );
        match a.elem.fixed_size() {
            Some(size) => assert_eq!(a.raw.len() as u64, a.count * size as u64),
            None => assert!(a.raw.len() as u64 >= a.count * 8),
        }
        array_agrees::<u8>(a);
        array_agrees::<i8>(a);
        array_agrees::<u16>(a);
        array_agrees::<i16>(a);
        array_agrees::<u32>(a);
        array_agrees::<i32>(a);
        array_agrees::<f32>(a);
        array_agrees::<bool>(a);
        array_agrees::<u64>(a);
        array_agrees::<i64>(a);
        array_agrees::<f64>(a);
        assert_eq!(g.get_array_as::<u8>(key).is_ok(), a.elem == ValueType::U8);
        match a.strs() {
            Ok(it) => {
                assert_eq!(a.elem, ValueType::String);
                let mut n = 0u64;
                let mut used = 0usize;
                for s in it {
                    n += 1;
                    used += 8 + s.len();
                }
                assert_eq!(n, a.count, "string iteration stopped early");
                assert_eq!(used, a.raw.len(), "strings do not tile the array bytes");
                assert_eq!(g.get_strs(key).map(|v| v.len() as u64).ok(), Some(a.count));
            }
            Err(e) => {
                assert_ne!(a.elem, ValueType::String);
                assert_eq!(e.class(), ninfer_ternary::ErrorClass::GgufMetadataType);
                assert!(g.get_strs(key).is_err());
            }
        }
    }
}

/// Re-writes an accepted file canonically (same KVs and tensors, offsets = running padded
/// sum), re-parses it and checks content equality and that writing is a fixed point.
pub fn check_gguf_rewrite(g: &Gguf<'_>, mode: Mode) {
    let Some(w) = canonical_writer(g) else {
        return;
    };
    let Ok(len) = w.file_len() else {
        return;
    };
    if len > MAX_REWRITE_BYTES {
        return;
    }
    let data: Vec<&[u8]> = g.tensors.iter().map(|t| g.tensor_data(t)).collect();
    let out = w
        .to_bytes(&data)
        .expect("canonical rewrite of an accepted file");
    assert_eq!(
        w.to_bytes(&data).ok().as_ref(),
        Some(&out),
        "writer is not deterministic"
    );
    // Fix the id-42 layout the original resolved to (spans change when offsets do).
    let legacy = g.tensors.iter().any(|t| t.ggml.retag_to.is_some());
    let opts = Options {
        mode,
        id42: if legacy {
            Id42Policy::LegacyPrism
        } else {
            Id42Policy::Mainline
        },
    };
    let h = match gguf::parse_with(&out, opts) {
        Ok(h) => h,
        Err(e) => panic!("canonical rewrite does not parse: {e}"),
    };
    check_gguf_ok(&out, &h, opts);
    assert_eq!(h.version, g.version);
    assert_eq!(h.alignment, g.alignment);
    assert_eq!(h.kvs.len(), g.kvs.len());
    for (a, b) in g.kvs.iter().zip(&h.kvs) {
        assert_eq!(a.key, b.key);
        assert_eq!(
            value_payload(&a.value),
            value_payload(&b.value),
            "{}",
            a.key
        );
    }
    assert_eq!(h.tensors.len(), g.tensors.len());
    for (a, b) in g.tensors.iter().zip(&h.tensors) {
        assert_eq!(
            (a.name, a.dims(), a.type_id, &a.ggml.name, a.nbytes),
            (b.name, b.dims(), b.type_id, &b.ggml.name, b.nbytes)
        );
        assert_eq!(
            g.tensor_data(a),
            h.tensor_data(b),
            "tensor '{}' data",
            a.name
        );
    }
    // Canonical output is a fixed point of parse → write.
    if let Some(w2) = canonical_writer(&h) {
        let data2: Vec<&[u8]> = h.tensors.iter().map(|t| h.tensor_data(t)).collect();
        assert_eq!(
            w2.to_bytes(&data2).ok(),
            Some(out),
            "rewrite is not a fixed point"
        );
    }
}

fn canonical_writer(g: &Gguf<'_>) -> Option<GgufWriter> {
    let s = spec::get();
    let mut w = GgufWriter::new();
    w.version(g.version);
    for kv in &g.kvs {
        if kv.key == s.gguf.alignment_key {
            let Value::U32(a) = kv.value else {
                return None;
            };
            w.alignment(a).ok()?;
        } else {
            w.kv(kv.key, kv.value.to_owned_value());
        }
    }
    for t in &g.tensors {
        w.tensor_raw(WriterTensor {
            name: t.name.to_owned(),
            dims: t.dims().to_vec(),
            type_id: t.type_id,
            nbytes: t.nbytes,
            offset: None,
        });
    }
    Some(w)
}

// ------------------------------------------------------------------------------------------
// .ninfer
// ------------------------------------------------------------------------------------------

/// `ninfer_parse`: parse; on success walk every object.
pub fn check_ninfer(data: &[u8]) {
    match Artifact::parse(data) {
        Ok(a) => check_artifact(data, &a),
        Err(e) => check_error(&e, data.len(), "ninfer."),
    }
}

/// Invariants of any accepted artifact.
pub fn check_artifact(bytes: &[u8], a: &Artifact<'_>) {
    let c = &spec::get().container;
    let len = bytes.len() as u64;
    assert_eq!(&bytes[8..16], &a.json_bytes.to_le_bytes());
    assert_eq!(a.payload_offset % c.payload_alignment, 0);
    assert!(a.payload_offset >= c.prefix_bytes + a.json_bytes);
    assert!(a.payload_offset - (c.prefix_bytes + a.json_bytes) < c.payload_alignment);
    assert!(a.payload_offset <= len);
    assert_eq!(a.payload_bytes(), len - a.payload_offset);
    assert!(!a.directory.identity.model_id.is_empty());
    assert!(!a.directory.identity.weights_id.is_empty());
    let mut names = HashSet::new();
    let mut cursor = 0u64;
    for o in &a.directory.objects {
        assert!(!o.name.is_empty());
        assert!(
            names.insert(o.name.as_str()),
            "duplicate object name accepted"
        );
        assert!(o.offset >= cursor, "objects overlap or are out of order");
        assert_eq!(o.offset % o.alignment(), 0);
        let end = o.offset.checked_add(o.bytes).expect("object end overflows");
        assert!(end <= a.payload_bytes(), "object past the payload");
        cursor = end;
        let ob = a.object_bytes(o);
        assert_eq!(ob.len() as u64, o.bytes);
        let abs = (a.payload_offset + o.offset) as usize;
        assert_eq!(ob, &bytes[abs..abs + o.bytes as usize]);
        assert_eq!(a.object(&o.name).map(|x| x.offset).ok(), Some(o.offset));
        let view = match a.view(&o.name) {
            Ok(v) => v,
            Err(e) => panic!("validated object '{}' has no view: {e}", o.name),
        };
        match view {
            ObjectView::Resource { bytes } => {
                assert!(!o.is_tensor());
                assert!(o.bytes > 0);
                assert_eq!(bytes, ob);
                assert!(a.row_split(&o.name).is_err());
                assert!(a.contiguous(&o.name).is_err());
            }
            ObjectView::Contiguous {
                format,
                shape,
                bytes,
            } => {
                assert_eq!(shape, o.shape());
                let elems: u64 = shape.iter().product();
                assert_eq!(
                    Some(bytes.len() as u64),
                    format.word_bytes.map(|w| w * elems),
                    "contiguous size"
                );
                assert!(a.contiguous(&o.name).is_ok());
            }
            ObjectView::RowSplit(v) => {
                assert_eq!(v.bytes, ob);
                assert_eq!(v.name, o.name);
                assert_eq!(o.shape(), &[v.geom.n, v.geom.k]);
                check_row_split(&v);
                assert!(a.row_split(&o.name).is_ok());
            }
            ObjectView::Opaque { bytes, layout, .. } => {
                assert_eq!(bytes, ob);
                assert_eq!(Some(layout.as_str()), o.format_layout().map(|x| x.1));
            }
        }
    }
    let missing = "\u{0}fuzz: no such object";
    if a.directory.find(missing).is_none() {
        assert_eq!(
            a.view(missing).err().map(|e| e.class()),
            Some(ninfer_ternary::ErrorClass::NinferObjectMissing)
        );
    }
}

/// Plane and row spans inside the object; for ternary formats, the ggml block stream
/// re-assembles to exactly the plane bytes.
pub fn check_row_split(v: &RowSplitView<'_>) {
    let g = v.geom;
    let len = v.bytes.len() as u64;
    assert_eq!(g.payload_bytes, len);
    assert_eq!(g.base_offset, 0);
    assert!(g.base_offset + g.base_bytes <= g.high_offset);
    assert!(g.high_offset + g.high_bytes <= g.scale_offset);
    assert_eq!(g.scale_offset + g.scale_bytes, g.payload_bytes);
    assert!(g.k_pad >= g.k && g.k_pad % 128 == 0);
    for p in Plane::ALL {
        assert_eq!(v.plane(p).len() as u64, g.plane_bytes(p));
        assert_eq!(g.plane_bytes(p), g.n * g.row_bytes(p));
    }
    for r in 0..g.n {
        for p in Plane::ALL {
            let s = g.row_span(p, r);
            assert!(s.start >= g.plane_offset(p));
            assert!(
                s.end <= g.plane_offset(p) + g.plane_bytes(p),
                "row span past its plane"
            );
            assert_eq!(v.row(p, r).len() as u64, g.row_bytes(p));
        }
    }
    if v.format.ternary.is_none() {
        assert!(v.block_layout().is_err());
        return;
    }
    let layout = v
        .block_layout()
        .expect("ternary formats have a block layout");
    let be = layout.block_elems as u64;
    match v.ggml_rows(0..g.n) {
        Ok(ggml) => {
            assert!(be > 0 && g.k % be == 0);
            let row = (g.k / be) as usize * layout.block_bytes;
            assert_eq!(ggml.len(), g.n as usize * row);
            let last = g.n - 1;
            assert_eq!(
                v.ggml_rows(last..g.n).expect("last row"),
                &ggml[last as usize * row..]
            );
            assert!(v.ggml_rows(0..g.n + 1).is_err());
            let planes = ninfer_ternary::planes::assemble(&layout, &g, &ggml)
                .expect("assemble the disassembled rows");
            for p in Plane::ALL {
                let o = g.plane_offset(p) as usize;
                let n = g.plane_bytes(p) as usize;
                assert_eq!(&planes[o..o + n], v.plane(p), "{} plane differs", p.name());
            }
        }
        Err(e) => {
            assert!(be == 0 || g.k % be != 0, "ggml_rows failed: {e}");
        }
    }
}

/// `ninfer_roundtrip`: parse → plan/to_bytes from the parsed directory and object bytes →
/// parse; the directory JSON and object bytes must survive, and the output is canonical.
pub fn check_ninfer_roundtrip(data: &[u8]) {
    let a = match Artifact::parse(data) {
        Ok(a) => a,
        Err(e) => return check_error(&e, data.len(), "ninfer."),
    };
    check_artifact(data, &a);
    let planned = |d: &ninfer::Directory| -> Vec<PlannedObject> {
        d.objects
            .iter()
            .map(|o| PlannedObject {
                name: o.name.clone(),
                body: o.body.clone(),
                resource_bytes: match o.body {
                    ObjectBody::Resource { .. } => o.bytes,
                    ObjectBody::Tensor { .. } => 0,
                },
            })
            .collect()
    };
    let dir = match ninfer::plan(a.directory.identity.clone(), planned(&a.directory)) {
        Ok(d) => d,
        Err(e) => panic!("an accepted directory does not re-plan: {e}"),
    };
    assert_eq!(dir.identity, a.directory.identity);
    assert_eq!(dir.objects.len(), a.directory.objects.len());
    for (p, o) in dir.objects.iter().zip(&a.directory.objects) {
        assert_eq!((&p.name, &p.body, p.bytes), (&o.name, &o.body, o.bytes));
        assert!(p.offset <= o.offset, "planned offsets are not the tightest");
    }
    let payloads: Vec<Vec<u8>> = a
        .directory
        .objects
        .iter()
        .map(|o| a.object_bytes(o).to_vec())
        .collect();
    let out = ninfer::writer::to_bytes(&dir, &payloads).expect("in-memory write");
    assert_eq!(
        ninfer::writer::to_bytes(&dir, &payloads).ok().as_ref(),
        Some(&out),
        "writer is not deterministic"
    );
    assert_eq!(out.len() as u64, ninfer::writer::file_size(&dir));
    let b = match Artifact::parse(&out) {
        Ok(b) => b,
        Err(e) => panic!("re-encoded artifact does not parse: {e}"),
    };
    check_artifact(&out, &b);
    let json = dir.to_json();
    assert_eq!(b.directory, dir);
    assert_eq!(b.directory.to_json(), json);
    assert_eq!(&out[16..16 + json.len()], json.as_bytes());
    assert_eq!(b.json_bytes, json.len() as u64);
    for (i, o) in b.directory.objects.iter().enumerate() {
        assert_eq!(
            b.object_bytes(o),
            payloads[i].as_slice(),
            "object '{}'",
            o.name
        );
    }
    // Canonical: parsing and re-planning the output changes nothing.
    let dir2 = ninfer::plan(b.directory.identity.clone(), planned(&b.directory))
        .expect("re-plan of canonical output");
    assert_eq!(dir2, dir);
    assert_eq!(
        ninfer::writer::to_bytes(&dir2, &payloads).ok(),
        Some(out),
        "second write differs"
    );
}
