//! GGUF half of `inspect`: header, metadata, tensors with types and sizes, ternary plane
//! geometry a packer would use, and fork warnings (id 42, Prism ids).

use crate::geometry::row_split_geometry;
use crate::gguf::{self, ArrayView, Gguf, Value};
use crate::spec;
use crate::text::{escape, escape_truncated};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// Longest string (in characters) `inspect` shows whole; longer ones are cut, so a 1 GiB key
/// or value costs a few hundred bytes of output and no copy.
pub const SHOWN_CHARS: usize = 200;

/// Elements of a numeric array shown by `inspect` (strings: [`SHOWN_STRINGS`]).
pub const SHOWN_ELEMENTS: usize = 8;

/// Elements of a string array shown by `inspect`.
pub const SHOWN_STRINGS: usize = 4;

/// `s` quoted as Rust debug text, cut to [`SHOWN_CHARS`] and with every control, bidi and
/// invisible format character escaped (see [`crate::text`]).
pub fn quoted(s: &str) -> String {
    let (head, cut) = match s.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => (&s[..at], true),
        None => (s, false),
    };
    let q = escape(&format!("{head:?}")).into_owned();
    if cut {
        format!("{q}…({} bytes)", s.len())
    } else {
        q
    }
}

/// A file's name or key cut to [`SHOWN_CHARS`] for `--json` (whose writer escapes it).
pub fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…({} bytes)", &s[..at], s.len()).into(),
        None => s.into(),
    }
}

/// A file's name or key, escaped and cut for display.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    escape_truncated(s, SHOWN_CHARS)
}

/// A short text rendering of a metadata value (arrays summarised, long strings cut); never
/// copies more of the value than it shows.
pub fn value_text(v: &Value<'_>) -> String {
    match v {
        Value::String(s) => quoted(s),
        Value::Array(a) => array_text(a),
        Value::U8(x) => x.to_string(),
        Value::I8(x) => x.to_string(),
        Value::U16(x) => x.to_string(),
        Value::I16(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::I32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::F32(x) => x.to_string(),
        Value::F64(x) => x.to_string(),
        Value::Bool(x) => x.to_string(),
    }
}

/// The head of an array, read from a view of its first elements only: a 2 G-element array
/// costs the same as an 8-element one.
fn array_text(a: &ArrayView<'_>) -> String {
    fn first<T: ToString>(v: crate::Result<Vec<T>>) -> Vec<String> {
        v.map(|v| v.iter().map(|x| x.to_string()).collect())
            .unwrap_or_default()
    }
    use crate::gguf::ValueType as T;
    let shown = a.count.min(SHOWN_ELEMENTS as u64);
    let size = a.elem.fixed_size().unwrap_or(0);
    let head_bytes = (shown as usize).saturating_mul(size).min(a.raw.len());
    let h = ArrayView {
        elem: a.elem,
        count: (head_bytes / size.max(1)) as u64,
        raw: &a.raw[..head_bytes],
        offset: a.offset,
    };
    let head: Vec<String> = match a.elem {
        T::String => a
            .strs()
            .map(|it| it.take(SHOWN_STRINGS).map(quoted).collect())
            .unwrap_or_default(),
        T::U8 => first(h.as_u8s()),
        T::I8 => first(h.as_i8s()),
        T::U16 => first(h.as_u16s()),
        T::I16 => first(h.as_i16s()),
        T::U32 => first(h.as_u32s()),
        T::I32 => first(h.as_i32s()),
        T::F32 => first(h.as_f32s()),
        T::Bool => first(h.as_bools()),
        T::U64 => first(h.as_u64s()),
        T::I64 => first(h.as_i64s()),
        T::F64 => first(h.as_f64s()),
        T::Array => Vec::new(),
    };
    let more = if a.count > head.len() as u64 {
        ", …"
    } else {
        ""
    };
    format!(
        "[{}; {}] [{}{more}]",
        a.elem.name(),
        a.count,
        head.join(", ")
    )
}

/// Prints the GGUF `bytes` (read from `path`) as text or, with `as_json`, as one JSON document.
pub fn run(
    path: &Path,
    bytes: &[u8],
    json: Option<&super::json_out::JsonTarget>,
    mode: gguf::Mode,
) -> crate::Result<ExitCode> {
    let g = gguf::parse(bytes, mode)?;
    let notes = fork_notes(&g);
    if let Some(target) = json {
        let doc = GgufJson {
            path,
            g: &g,
            mode,
            notes: &notes,
        };
        super::inspect::emit_json(target, &doc)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: GGUF v{} ({} mode), {} bytes",
        escape(&path.display().to_string()),
        g.version,
        mode.as_str(),
        bytes.len()
    );
    println!(
        "  alignment {}; tensor infos at {}; data section at {} (end of tensor infos, aligned)",
        g.alignment, g.tensor_info_offset, g.data_offset
    );
    for w in g.warnings.iter().chain(notes.iter()) {
        println!("  warning: {}", escape(w));
    }
    println!("  metadata ({} keys):", g.kvs.len());
    for kv in &g.kvs {
        println!(
            "    {:<44} {:<7} {}",
            shown(kv.key),
            kv.value.value_type().name(),
            value_text(&kv.value)
        );
    }
    println!("  tensors ({}):", g.tensors.len());
    for t in &g.tensors {
        println!(
            "    {:<40} {:<8} id={:<4} ne={:<18} off={:<12} bytes={}",
            shown(t.name),
            t.ggml.name,
            t.type_id,
            format!("{:?}", t.dims()),
            t.offset,
            t.nbytes
        );
        if let Some(f) = spec::get().ternary_format_for_ggml(&t.ggml.name) {
            let (n, k) = (t.n_elements / t.ne[0], t.ne[0]);
            if let Ok(geo) = row_split_geometry(f, n, k) {
                println!("      -> {} [{n}, {k}]: base {} B, high @{} {} B, scale @{} {} B, payload {} B", f.name, geo.base_bytes, geo.high_offset, geo.high_bytes, geo.scale_offset, geo.scale_bytes, geo.payload_bytes);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Fork-id notes: legacy Prism id 42 and which ternary types a file uses.
pub fn fork_notes(g: &Gguf<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let legacy = g
        .tensors
        .iter()
        .filter(|t| t.type_id == 42 && t.ggml.block_elems == 128)
        .count();
    if legacy > 0 {
        out.push(format!("{legacy} tensors use id 42 with 34 B/128 blocks: the legacy Prism layout (byte-identical to PQ2_0); retag to 142 with `ninfer-ternary transcode --retag-42`"));
    }
    let mut types: Vec<&str> = g
        .tensors
        .iter()
        .filter(|t| matches!(t.type_id, 142 | 143))
        .map(|t| t.ggml.name.as_str())
        .collect();
    types.sort();
    types.dedup();
    if types.len() > 1 {
        out.push(format!(
            "mixed ternary types in one file: {}",
            types.join(", ")
        ));
    }
    out
}

/// Numeric array elements `inspect --json` writes whole; a longer array holds its first
/// [`JSON_ELEMENTS`] with `"truncated": true` and its `count`.
pub const JSON_ELEMENTS: usize = 1024;

/// Strings of a string array `inspect --json` writes (each cut like a string value).
pub const JSON_STRINGS: usize = 64;

/// A float as JSON: a number when finite, else the string `"NaN"`, `"Infinity"` or
/// `"-Infinity"` (JSON has no non-finite numbers).
fn float_json(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("NaN")
    } else if x > 0.0 {
        json!("Infinity")
    } else {
        json!("-Infinity")
    }
}

/// A string value as JSON: whole up to [`SHOWN_CHARS`] characters, else its head and
/// `{"truncated": true, "bytes": n}` beside it (returned as the value and the extra members).
fn string_json(s: &str) -> (serde_json::Value, Option<u64>) {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => (json!(&s[..at]), Some(s.len() as u64)),
        None => (json!(s), None),
    }
}

/// The elements of an array as typed JSON (head only, see [`JSON_ELEMENTS`]); `None` when the
/// elements cannot be read (the reader refused them; the record then says so).
fn array_values(a: &ArrayView<'_>) -> Option<Vec<serde_json::Value>> {
    use crate::gguf::ValueType as T;
    fn all<X: Into<serde_json::Value>>(v: crate::Result<Vec<X>>) -> Option<Vec<serde_json::Value>> {
        v.ok().map(|v| v.into_iter().map(Into::into).collect())
    }
    if a.elem == T::String {
        return a
            .strs()
            .ok()
            .map(|it| it.take(JSON_STRINGS).map(|x| string_json(x).0).collect());
    }
    let size = a.elem.fixed_size()?;
    let shown = a.count.min(JSON_ELEMENTS as u64) as usize;
    let head_bytes = shown.saturating_mul(size).min(a.raw.len());
    let h = ArrayView {
        elem: a.elem,
        count: (head_bytes / size.max(1)) as u64,
        raw: &a.raw[..head_bytes],
        offset: a.offset,
    };
    match a.elem {
        T::U8 => all(h.as_u8s()),
        T::I8 => all(h.as_i8s()),
        T::U16 => all(h.as_u16s()),
        T::I16 => all(h.as_i16s()),
        T::U32 => all(h.as_u32s()),
        T::I32 => all(h.as_i32s()),
        T::U64 => all(h.as_u64s()),
        T::I64 => all(h.as_i64s()),
        T::Bool => all(h.as_bools()),
        T::F32 => h
            .as_f32s()
            .ok()
            .map(|v| v.into_iter().map(|x| float_json(f64::from(x))).collect()),
        T::F64 => h
            .as_f64s()
            .ok()
            .map(|v| v.into_iter().map(float_json).collect()),
        T::String | T::Array => None,
    }
}

/// One `metadata` record of the `--json` view, with a typed value (like gguf-py's
/// `gguf_dump --json`): numbers as numbers, booleans, strings as strings; arrays as
/// `{"element_type", "count", "value": [...], "truncated"}`; a cut string has `"truncated": true`
/// and its byte length in `"bytes"`.
fn kv_json(kv: &gguf::Kv<'_>) -> serde_json::Value {
    let mut j =
        json!({"key": cut(kv.key), "type": kv.value.value_type().name(), "offset": kv.offset});
    let value = match &kv.value {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => float_json(f64::from(*x)),
        Value::F64(x) => float_json(*x),
        Value::Bool(x) => json!(x),
        Value::String(s) => {
            let (v, cut_bytes) = string_json(s);
            if let Some(n) = cut_bytes {
                j["truncated"] = json!(true);
                j["bytes"] = json!(n);
            }
            v
        }
        Value::Array(a) => {
            j["element_type"] = json!(a.elem.name());
            j["count"] = json!(a.count);
            match array_values(a) {
                Some(v) => {
                    let cut_strings = a.elem == crate::gguf::ValueType::String
                        && a.strs().is_ok_and(|it| {
                            it.take(JSON_STRINGS).any(|x| string_json(x).1.is_some())
                        });
                    j["truncated"] = json!((v.len() as u64) < a.count || cut_strings);
                    json!(v)
                }
                None => {
                    j["truncated"] = json!(true);
                    json!([])
                }
            }
        }
    };
    j["value"] = value;
    j
}

/// One `tensors` record of the `--json` view (with the row-split geometry of ternary types).
fn tensor_json(t: &gguf::TensorInfo<'_>) -> serde_json::Value {
    let mut j = json!({"name": cut(t.name), "ne": t.dims(), "type_id": t.type_id, "type": t.ggml.name, "offset": t.offset, "file_offset": t.abs_offset, "bytes": t.nbytes});
    if let Some(f) = spec::get().ternary_format_for_ggml(&t.ggml.name) {
        if let Ok(geo) = row_split_geometry(f, t.n_elements / t.ne[0], t.ne[0]) {
            j["ninfer_format"] = json!(f.name);
            j["row_split_geometry"] = serde_json::to_value(geo).unwrap_or_default();
        }
    }
    j
}

/// The `--json` document of a GGUF, serialized as it is written: the metadata and tensor
/// lists are produced record by record, so millions of KVs cost one record's JSON at a time,
/// never the whole document in memory. The text is the same as serializing the document
/// built as one `serde_json::Value`: the members come in the same order, the header fields
/// are integers and strings (which serialize alike either way), and each record is the
/// same `Value` as before.
pub struct GgufJson<'a> {
    /// The file's path as given.
    pub path: &'a Path,
    /// The parsed file.
    pub g: &'a Gguf<'a>,
    /// The reading mode it was parsed in.
    pub mode: gguf::Mode,
    /// [`fork_notes`] of the file.
    pub notes: &'a [String],
}

/// A JSON array serialized from a fresh iterator of `F` (one element at a time).
struct Records<F>(F);

impl<I: Iterator<Item = serde_json::Value>, F: Fn() -> I> Serialize for Records<F> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

impl Serialize for GgufJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let g = self.g;
        let mut m = s.serialize_map(Some(13))?;
        m.serialize_entry(
            "schema",
            &super::json_out::schema_id(super::inspect::SCHEMA),
        )?;
        m.serialize_entry("tool_version", env!("CARGO_PKG_VERSION"))?;
        m.serialize_entry("file", &self.path.display().to_string())?;
        m.serialize_entry("container", "gguf")?;
        m.serialize_entry("version", &g.version)?;
        m.serialize_entry("mode", self.mode.as_str())?;
        m.serialize_entry("alignment", &g.alignment)?;
        m.serialize_entry("tensor_info_offset", &g.tensor_info_offset)?;
        m.serialize_entry("data_offset", &g.data_offset)?;
        m.serialize_entry("warnings", &g.warnings)?;
        m.serialize_entry("fork_notes", self.notes)?;
        m.serialize_entry("metadata", &Records(|| g.kvs.iter().map(kv_json)))?;
        m.serialize_entry("tensors", &Records(|| g.tensors.iter().map(tensor_json)))?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::GgufWriter;

    /// The document as `inspect --json` built it before it was streamed: one `Value`.
    fn whole(path: &Path, g: &Gguf<'_>, mode: gguf::Mode) -> String {
        let tensors: Vec<_> = g.tensors.iter().map(tensor_json).collect();
        let kvs: Vec<_> = g.kvs.iter().map(kv_json).collect();
        let out = json!({"schema": "ninfer-ternary/inspect-report/1", "tool_version": env!("CARGO_PKG_VERSION"), "file": path.display().to_string(), "container": "gguf", "version": g.version, "mode": mode.as_str(),
            "alignment": g.alignment, "tensor_info_offset": g.tensor_info_offset, "data_offset": g.data_offset,
            "warnings": g.warnings, "fork_notes": fork_notes(g), "metadata": kvs, "tensors": tensors});
        format!(
            "{}\n",
            crate::text::json_safe(&serde_json::to_string_pretty(&out).unwrap())
        )
    }

    #[test]
    fn streamed_json_is_the_whole_document_byte_for_byte_across_batches() {
        let mut w = GgufWriter::new();
        w.kv("general.architecture", "llama");
        // Hostile names (bidi, controls, a key past the cut) in every batch of output.
        for i in 0..3000 {
            w.kv(&format!("k{i}\u{202e}\u{1b}[2J\u{feff}"), "v\u{2066}\u{7}");
        }
        w.kv(&"x".repeat(300), 7u32);
        w.tensor("t\u{202e}\u{200f}", &[32, 2], 0).unwrap();
        let bytes = w.to_bytes(&[&[0u8; 256]]).unwrap();
        let mode = gguf::Mode::Strict;
        let g = gguf::parse(&bytes, mode).unwrap();
        let path = Path::new("dir/\u{202e}x.gguf");
        let notes = fork_notes(&g);
        let doc = GgufJson {
            path,
            g: &g,
            mode,
            notes: &notes,
        };
        let mut out = Vec::new();
        super::super::inspect::write_json(&mut out, &doc).unwrap();
        let want = whole(path, &g, mode);
        assert!(
            want.len() > 4 * 64 * 1024,
            "{} bytes: one batch",
            want.len()
        );
        assert!(want.contains("\\u202e") && !want.contains('\u{202e}'));
        assert_eq!(String::from_utf8(out).unwrap(), want);

        // Negative control: the same records without the json_safe pass differ.
        let raw = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
        assert_ne!(raw, want);
    }
}
