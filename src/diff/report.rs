//! The diff report (`--json`: spec/schemas/diff-report.schema.json) and how it is built from
//! two parsed `.ninfer` directories or two GGUF headers.

use super::locate::{self, ChunkMap, ObjectLayout};
use crate::error::Result;
use crate::gguf::Gguf;
use crate::ninfer::{Artifact, Object};
use serde::Serialize;

/// The verdict on one object present in both files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Same bytes.
    #[serde(rename = "identical")]
    Identical,
    /// Different bytes that decode to the same values (padding, a -0 / +0 scale, a layout
    /// offset): harmless to a reader that decodes.
    #[serde(rename = "same values, different bytes")]
    SameValues,
    /// Different values (or bytes that are not decoded: resources, template formats).
    #[serde(rename = "differs")]
    Differs,
}

/// One differing header or identity field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// The field (`identity.model_id`, `payload_offset`, `kv general.name`).
    pub field: String,
    /// Its value in A (`absent` when A lacks it).
    pub a: String,
    /// Its value in B.
    pub b: String,
}

/// Where the first differing byte of an object is, and what it holds on both sides.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Location {
    /// Byte offset in the object (payload-relative: add the object's offset).
    pub byte: u64,
    /// `base`, `high`, `scale` or `padding` (row-split planes), `blocks` (ggml), `words`
    /// (contiguous), `bytes` (not decoded).
    pub plane: String,
    /// The row (tensor row: a GGUF tensor's `ne[1]` index, a row-split object's row).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// The group (block of 128 elements) within the row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<u64>,
    /// The first element of the row whose decoded value differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
    /// The decoded value in A at `element`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a_value: Option<f64>,
    /// The decoded value in B at `element`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_value: Option<f64>,
    /// Units in the last place between them (of the stored word for BF16/F16/FP32, of f32
    /// for decoded quantized values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ulp: Option<u64>,
}

/// One object (tensor or resource) present in both files whose bytes or description differ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObjectDiff {
    /// Object (or GGUF tensor) name.
    pub name: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Format / type and shape in A, then in B, when they differ (else one description).
    pub description: String,
    /// Bytes of the object in A and in B.
    pub bytes: [u64; 2],
    /// Bytes that differ (compared over the shorter length; a length change counts the rest).
    pub differing_bytes: u64,
    /// Rows whose bytes differ (row-structured objects).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_rows: Option<u64>,
    /// Decoded values that differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_values: Option<u64>,
    /// The largest ULP distance of a differing value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ulp: Option<u64>,
    /// The first differing byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Location>,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DiffReport {
    /// `ninfer` or `gguf`.
    pub kind: String,
    /// File A (as named on the command line).
    pub a: String,
    /// File B.
    pub b: String,
    /// File sizes.
    pub a_bytes: u64,
    /// File size of B.
    pub b_bytes: u64,
    /// Whether the two files are byte for byte the same.
    pub files_byte_identical: bool,
    /// Identity and header fields that differ.
    pub header: Vec<FieldDiff>,
    /// Objects only in B.
    pub added: Vec<String>,
    /// Objects only in A.
    pub removed: Vec<String>,
    /// Objects in both whose relative order differs (in A's order).
    pub reordered: Vec<String>,
    /// Objects in both with the same bytes.
    pub identical_objects: u64,
    /// Objects in both whose bytes differ, in A's order.
    pub objects: Vec<ObjectDiff>,
    /// `identical` when nothing above differs, else `differs`.
    pub verdict: String,
}

impl DiffReport {
    /// Whether the two files hold the same artifact (exit 0).
    pub fn identical(&self) -> bool {
        self.verdict == "identical"
    }

    /// Sets the overall verdict from the lists.
    pub fn finish(&mut self) {
        let same = self.files_byte_identical
            || (self.header.is_empty()
                && self.added.is_empty()
                && self.removed.is_empty()
                && self.reordered.is_empty()
                && self.objects.is_empty());
        self.verdict = if same { "identical" } else { "differs" }.into();
    }

    /// The report for a terminal: one line per finding.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} {} ({} B) vs {} ({} B): {}",
            self.kind, self.a, self.a_bytes, self.b, self.b_bytes, self.verdict
        )];
        for h in &self.header {
            out.push(format!("header {}: {} -> {}", h.field, h.a, h.b));
        }
        for (what, v) in [
            ("removed (only in A)", &self.removed),
            ("added (only in B)", &self.added),
            ("reordered", &self.reordered),
        ] {
            if !v.is_empty() {
                out.push(format!("{what}: {} object(s): {}", v.len(), v.join(", ")));
            }
        }
        for o in &self.objects {
            out.push(object_line(o));
        }
        out.push(format!(
            "{} object(s) identical, {} differ",
            self.identical_objects,
            self.objects.len()
        ));
        out
    }
}

fn object_line(o: &ObjectDiff) -> String {
    let verdict = serde_json::to_value(o.verdict)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut s = format!("object {}: {verdict} ({})", o.name, o.description);
    if let Some(l) = &o.first {
        s.push_str(&format!(
            "; first differing byte {} in plane {}",
            l.byte, l.plane
        ));
        if let Some(r) = l.row {
            s.push_str(&format!(" row {r}"));
        }
        if let Some(g) = l.group {
            s.push_str(&format!(" group {g}"));
        }
        if let (Some(e), Some(x), Some(y)) = (l.element, l.a_value, l.b_value) {
            s.push_str(&format!(" element {e}: {x} vs {y}"));
            if let Some(u) = l.ulp {
                s.push_str(&format!(" ({u} ulp)"));
            }
        }
    }
    s.push_str(&format!("; {} byte(s) differ", o.differing_bytes));
    if let Some(r) = o.differing_rows {
        s.push_str(&format!(", {r} row(s)"));
    }
    if let Some(v) = o.differing_values {
        s.push_str(&format!(", {v} value(s)"));
    }
    if let Some(u) = o.max_ulp {
        s.push_str(&format!(", max {u} ulp"));
    }
    s
}

/// Names in A and B: removed, added, and the common names whose relative order differs.
fn membership(report: &mut DiffReport, a: &[&str], b: &[&str]) {
    use std::collections::HashMap;
    let ia: HashMap<&str, usize> = a.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let ib: HashMap<&str, usize> = b.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    report.removed = a
        .iter()
        .filter(|n| !ib.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    report.added = b
        .iter()
        .filter(|n| !ia.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    let common_a: Vec<&str> = a.iter().copied().filter(|n| ib.contains_key(n)).collect();
    let common_b: Vec<&str> = b.iter().copied().filter(|n| ia.contains_key(n)).collect();
    report.reordered = common_a
        .iter()
        .zip(&common_b)
        .filter(|(x, y)| x != y)
        .map(|(x, _)| x.to_string())
        .collect();
}

fn field(out: &mut Vec<FieldDiff>, name: &str, a: String, b: String) {
    if a != b {
        out.push(FieldDiff {
            field: name.into(),
            a,
            b,
        });
    }
}

/// The `.ninfer` comparison; `chunks` says which file ranges are already known equal.
pub fn ninfer(a: &Artifact<'_>, b: &Artifact<'_>, chunks: &ChunkMap) -> Result<DiffReport> {
    let mut r = DiffReport::default();
    let (da, db) = (&a.directory, &b.directory);
    field(
        &mut r.header,
        "identity.model_id",
        da.identity.model_id.clone(),
        db.identity.model_id.clone(),
    );
    field(
        &mut r.header,
        "identity.weights_id",
        da.identity.weights_id.clone(),
        db.identity.weights_id.clone(),
    );
    field(
        &mut r.header,
        "payload_offset",
        a.payload_offset.to_string(),
        b.payload_offset.to_string(),
    );
    let na: Vec<&str> = da.objects.iter().map(|o| o.name.as_str()).collect();
    let nb: Vec<&str> = db.objects.iter().map(|o| o.name.as_str()).collect();
    membership(&mut r, &na, &nb);
    let moved = da
        .objects
        .iter()
        .filter(|o| db.find(&o.name).is_some_and(|p| p.offset != o.offset))
        .count();
    if moved > 0 {
        field(
            &mut r.header,
            "object offsets",
            format!("{moved} object(s) at other offsets"),
            "(contents compared below)".into(),
        );
    }
    for oa in &da.objects {
        let Some(ob) = db.find(&oa.name) else {
            continue;
        };
        let (xa, xb) = (a.object_bytes(oa), b.object_bytes(ob));
        let (fa, fb) = (a.payload_offset + oa.offset, b.payload_offset + ob.offset);
        let known = fa == fb && oa.bytes == ob.bytes && chunks.equal(fa, oa.bytes);
        if oa.body == ob.body && (known || locate::bytes_equal(xa, xb)) {
            r.identical_objects += 1;
            continue;
        }
        let layout = if oa.body == ob.body {
            ObjectLayout::of_ninfer(a, oa)
        } else {
            ObjectLayout::Opaque
        };
        let mut d = locate::object_diff(&oa.name, &layout, xa, xb)?;
        d.description = describe_pair(oa, ob);
        r.objects.push(d);
    }
    Ok(r)
}

fn describe(o: &Object) -> String {
    match o.format_layout() {
        Some((f, l)) => format!("{f} {l} {:?}", o.shape()),
        None => "resource".into(),
    }
}

fn describe_pair(a: &Object, b: &Object) -> String {
    let (x, y) = (describe(a), describe(b));
    if x == y {
        x
    } else {
        format!("{x} -> {y}")
    }
}

/// The GGUF comparison: version, alignment, metadata keys (added, removed, changed) and the
/// tensors as objects; `chunks` says which file ranges are already known equal.
pub fn gguf(a: &Gguf<'_>, b: &Gguf<'_>, chunks: &ChunkMap) -> Result<DiffReport> {
    let mut r = DiffReport::default();
    field(
        &mut r.header,
        "version",
        a.version.to_string(),
        b.version.to_string(),
    );
    field(
        &mut r.header,
        "alignment",
        a.alignment.to_string(),
        b.alignment.to_string(),
    );
    field(
        &mut r.header,
        "data_offset",
        a.data_offset.to_string(),
        b.data_offset.to_string(),
    );
    for kv in &a.kvs {
        let va = show(&kv.value);
        match b.kv(kv.key) {
            None => field(
                &mut r.header,
                &format!("kv {}", kv.key),
                shorten(va),
                "absent".into(),
            ),
            Some(o) => {
                let vb = show(&o.value);
                if va != vb {
                    field(
                        &mut r.header,
                        &format!("kv {}", kv.key),
                        shorten(va),
                        shorten(vb),
                    );
                }
            }
        }
    }
    for kv in b.kvs.iter().filter(|k| a.kv(k.key).is_none()) {
        let vb = show(&kv.value);
        field(
            &mut r.header,
            &format!("kv {}", kv.key),
            "absent".into(),
            shorten(vb),
        );
    }
    let na: Vec<&str> = a.tensors.iter().map(|t| t.name).collect();
    let nb: Vec<&str> = b.tensors.iter().map(|t| t.name).collect();
    membership(&mut r, &na, &nb);
    for ta in &a.tensors {
        let Some(tb) = b.tensor(ta.name) else {
            continue;
        };
        let (xa, xb) = (a.tensor_data(ta), b.tensor_data(tb));
        let same_desc = ta.type_id == tb.type_id && ta.dims() == tb.dims();
        let known = ta.abs_offset == tb.abs_offset
            && ta.nbytes == tb.nbytes
            && chunks.equal(ta.abs_offset, ta.nbytes);
        if same_desc && (known || locate::bytes_equal(xa, xb)) {
            r.identical_objects += 1;
            continue;
        }
        let layout = if same_desc {
            ObjectLayout::of_gguf(ta)
        } else {
            ObjectLayout::Opaque
        };
        let mut d = locate::object_diff(ta.name, &layout, xa, xb)?;
        let (x, y) = (
            format!("{} {:?}", ta.ggml.name, ta.dims()),
            format!("{} {:?}", tb.ggml.name, tb.dims()),
        );
        d.description = if x == y { x } else { format!("{x} -> {y}") };
        r.objects.push(d);
    }
    Ok(r)
}

/// A metadata value as text: numbers and strings as such, an array by element type, count and
/// content digest (so two arrays compare by content without printing them).
fn show(v: &crate::gguf::Value<'_>) -> String {
    use crate::gguf::Value as V;
    match v {
        V::String(s) => format!("'{}'", s.escape_debug()),
        V::Bool(b) => b.to_string(),
        V::F32(x) => x.to_string(),
        V::F64(x) => x.to_string(),
        V::I8(x) => x.to_string(),
        V::I16(x) => x.to_string(),
        V::I32(x) => x.to_string(),
        V::I64(x) => x.to_string(),
        V::Array(a) => format!(
            "{}[{}] sha256 {}",
            a.elem,
            a.count,
            &crate::digest::sha256_hex(a.raw)[..16]
        ),
        other => other
            .as_u64_lossless()
            .map_or_else(|| other.value_type().to_string(), |x| x.to_string()),
    }
}

/// A metadata value in a header line, cut to a readable length (sign tables are long).
fn shorten(s: String) -> String {
    const MAX: usize = 120;
    if s.chars().count() <= MAX {
        return s;
    }
    let cut: String = s.chars().take(MAX).collect();
    format!("{cut}... ({} chars)", s.chars().count())
}
