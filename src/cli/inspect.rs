//! `inspect FILE`: detects GGUF or .ninfer by magic and prints what is inside.

use crate::error::{Error, ErrorClass};
use crate::geometry::Plane;
use crate::ninfer::{Artifact, Object, ObjectBody, ObjectView};
use crate::text::{escape, escape_truncated, json_safe};

/// Longest name or identity (in characters) the text view shows whole.
const SHOWN_CHARS: usize = 200;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use super::json_out::JsonTarget;

/// The schema name of the `inspect --json` report (`spec/schemas/inspect-report.schema.json`).
pub const SCHEMA: &str = "inspect-report";

/// Runs `inspect` on `path`; `mode` is the GGUF reading mode (`strict` or `spec`); with
/// `json` the report goes there instead of the text view.
pub fn run(
    path: &Path,
    json: Option<&JsonTarget>,
    mode: crate::gguf::Mode,
) -> crate::Result<ExitCode> {
    let map = crate::fsio::map_file(path)?;
    if map.starts_with(b"NINFER") || map.starts_with(b"NINPRT") {
        return ninfer(path, &map, json);
    }
    // Anything else is read as GGUF, whose reader names a bad magic precisely.
    super::inspect_gguf::run(path, &map, json, mode)
}

/// Writes a streamed report to its target: standard output as [`print_json`], a file
/// atomically (nothing is left behind if serializing fails half-way).
pub fn emit_json(target: &JsonTarget, doc: &impl Serialize) -> crate::Result<()> {
    match target {
        JsonTarget::Stdout => print_json(doc),
        JsonTarget::File(p) => Ok(crate::fsio::write_atomic(
            p,
            |w| {
                write_json(w, doc).map_err(|e| {
                    crate::Error::new(
                        crate::ErrorClass::IoWrite,
                        p.display().to_string(),
                        format!("{e:#}"),
                    )
                })
            },
            |_| Ok(()),
        )?),
    }
}

/// The two members every report starts with (see [`super::json_out`]).
fn report_header<M: SerializeMap>(m: &mut M) -> std::result::Result<(), M::Error> {
    m.serialize_entry("schema", &super::json_out::schema_id(SCHEMA))?;
    m.serialize_entry("tool_version", env!("CARGO_PKG_VERSION"))
}

/// The `--json` description of a container: identity, layout and every object (tensor format,
/// layout, shape, row-split geometry; resource encoding), as one value (see [`NinferJson`]
/// for the streamed form `inspect` prints).
#[cfg(test)]
pub fn ninfer_json(path: &Path, bytes: &[u8]) -> crate::Result<serde_json::Value> {
    let a = Artifact::parse(bytes)?;
    super::json_out::to_value(SCHEMA, &NinferJson { path, bytes, a: &a })
}

/// One `objects` record of a container's `--json` view.
fn object_json(a: &Artifact<'_>, o: &Object) -> crate::Result<serde_json::Value> {
    let mut j = json!({"name": o.name, "kind": o.kind(), "offset": o.offset, "file_offset": a.payload_offset + o.offset, "bytes": o.bytes});
    if let Some((f, l)) = o.format_layout() {
        j["format"] = json!(f);
        j["layout"] = json!(l);
        j["shape"] = json!(o.shape());
    }
    if let ObjectBody::Resource { encoding } = &o.body {
        j["encoding"] = json!(encoding);
    }
    if let ObjectView::RowSplit(v) = a.view_object(o)? {
        j["geometry"] = super::json_out::to_value("geometry", v.geom)?;
    }
    Ok(j)
}

/// The `--json` document of a parsed container, serialized object by object (so a directory
/// of millions of objects never exists as one JSON value in memory).
pub struct NinferJson<'a> {
    /// The file's path as given.
    pub path: &'a Path,
    /// The whole file.
    pub bytes: &'a [u8],
    /// The file parsed.
    pub a: &'a Artifact<'a>,
}

/// The `objects` array of a [`NinferJson`], one record at a time.
struct Objects<'a>(&'a Artifact<'a>);

impl Serialize for Objects<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let objects = &self.0.directory.objects;
        let mut seq = s.serialize_seq(Some(objects.len()))?;
        for o in objects {
            let j = object_json(self.0, o).map_err(serde::ser::Error::custom)?;
            seq.serialize_element(&j)?;
        }
        seq.end()
    }
}

impl Serialize for NinferJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let a = self.a;
        let id = &a.directory.identity;
        let mut m = s.serialize_map(Some(10))?;
        report_header(&mut m)?;
        m.serialize_entry("file", &self.path.display().to_string())?;
        m.serialize_entry("container", "ninfer v2")?;
        m.serialize_entry("bytes", &self.bytes.len())?;
        m.serialize_entry("json_bytes", &a.json_bytes)?;
        m.serialize_entry("payload_offset", &a.payload_offset)?;
        m.serialize_entry("payload_bytes", &a.payload_bytes())?;
        m.serialize_entry(
            "identity",
            &json!({"model_id": id.model_id, "weights_id": id.weights_id}),
        )?;
        m.serialize_entry("objects", &Objects(a))?;
        m.end()
    }
}

/// Lines of serialized JSON gathered before one write (whole lines, so no character is split).
const JSON_BATCH: usize = 64 * 1024;

/// Writes `doc` pretty-printed to `out` through [`json_safe`], a batch of whole lines at a
/// time, then a newline: the same text as `json_safe(&to_string_pretty(doc))` followed by
/// `\n`, in memory bounded by the longest line rather than by the document.
pub fn write_json<W: Write>(out: &mut W, doc: &impl Serialize) -> crate::Result<()> {
    let mut w = SafeLines {
        out,
        buf: Vec::new(),
    };
    serde_json::to_writer_pretty(&mut w, doc).map_err(|e| match e.is_io() {
        // The writer failed (a full disk); anything else is a value that cannot be JSON.
        true => Error::new(ErrorClass::IoWrite, "json output", e.to_string()),
        false => Error::new(
            ErrorClass::InternalInvariant,
            SCHEMA,
            format!("report not serializable: {e}"),
        ),
    })?;
    w.emit(true)
        .and_then(|_| w.out.write_all(b"\n"))
        .map_err(|e| Error::new(ErrorClass::IoWrite, "json output", e.to_string()))
}

/// Prints `doc` on stdout as [`write_json`] does; a failed write follows the stdout convention
/// of `print!` ([`super::stdout`]).
pub fn print_json(doc: &impl Serialize) -> crate::Result<()> {
    write_json(&mut PrintOut, doc)
}

/// Standard output through `print!`, so that a closed pipe or a full disk is handled as every
/// other command's output is.
struct PrintOut;

impl Write for PrintOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        // Only ever given whole lines of valid UTF-8 by `SafeLines`.
        print!("{}", String::from_utf8_lossy(b));
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Gathers serializer output and passes it on through [`json_safe`] in whole lines.
struct SafeLines<'w, W: Write> {
    out: &'w mut W,
    buf: Vec<u8>,
}

impl<W: Write> SafeLines<'_, W> {
    /// Writes out every complete line gathered (with `all`, everything gathered).
    fn emit(&mut self, all: bool) -> std::io::Result<()> {
        let end = match (all, self.buf.iter().rposition(|&b| b == b'\n')) {
            (true, _) => self.buf.len(),
            (false, Some(i)) => i + 1,
            (false, None) => return Ok(()),
        };
        let text = std::str::from_utf8(&self.buf[..end])
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.out.write_all(json_safe(text).as_bytes())?;
        self.buf.drain(..end);
        Ok(())
    }
}

impl<W: Write> Write for SafeLines<'_, W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= JSON_BATCH {
            self.emit(false)?;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn ninfer(path: &Path, bytes: &[u8], json: Option<&JsonTarget>) -> crate::Result<ExitCode> {
    if let Some(target) = json {
        let a = Artifact::parse(bytes)?;
        // Every object's view first, so that a bad one fails before any output (as when the
        // document was built whole).
        for o in &a.directory.objects {
            a.view_object(o)?;
        }
        emit_json(target, &NinferJson { path, bytes, a: &a })?;
        return Ok(ExitCode::SUCCESS);
    }
    let a = Artifact::parse(bytes)?;
    println!(
        "{}: .ninfer v2, {} bytes",
        escape(&path.display().to_string()),
        bytes.len()
    );
    println!(
        "  identity: model_id={} weights_id={}",
        escape_truncated(&a.directory.identity.model_id, SHOWN_CHARS),
        escape_truncated(&a.directory.identity.weights_id, SHOWN_CHARS)
    );
    println!(
        "  directory: {} bytes; payload at {} ({} bytes); {} objects",
        a.json_bytes,
        a.payload_offset,
        a.payload_bytes(),
        a.directory.objects.len()
    );
    for o in &a.directory.objects {
        match o.format_layout() {
            Some((f, l)) => println!(
                "  {:<48} {:<20} {:<24} {:<16} off={:<12} bytes={}",
                escape_truncated(&o.name, SHOWN_CHARS),
                escape(f),
                escape(l),
                format!("{:?}", o.shape()),
                o.offset,
                o.bytes
            ),
            None => println!(
                "  {:<48} {:<20} {:<24} {:<16} off={:<12} bytes={}",
                escape_truncated(&o.name, SHOWN_CHARS),
                "resource",
                match &o.body {
                    ObjectBody::Resource { encoding } => escape(encoding),
                    _ => "".into(),
                },
                "",
                o.offset,
                o.bytes
            ),
        }
        if let ObjectView::RowSplit(v) = a.view_object(o)? {
            let g = v.geom;
            println!(
                "      planes: base @{} ({} B, {} B/row) high @{} ({} B) scale @{} ({} B); k_pad={} groups/row={}",
                g.base_offset, g.base_bytes, g.row_bytes(Plane::Base), g.high_offset, g.high_bytes, g.scale_offset, g.scale_bytes, g.k_pad, g.groups_per_row
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ninfer::{plan, Identity, PlannedObject};

    #[test]
    fn json_names_every_resource_encoding() {
        let id = Identity {
            model_id: "m".into(),
            weights_id: "w".into(),
        };
        let enc = crate::spec::get().container.directory.resource_encodings[0].clone();
        let dir = plan(
            id,
            vec![PlannedObject {
                name: "r".into(),
                body: ObjectBody::Resource {
                    encoding: enc.clone(),
                },
                resource_bytes: 3,
            }],
        )
        .unwrap();
        let mut out = Vec::new();
        crate::ninfer::writer::write_to(&mut out, &dir, |_, _, w| {
            w.write_all(b"abc").map_err(crate::fsio::write_err("t"))
        })
        .unwrap();
        let j = ninfer_json(Path::new("x.ninfer"), &out).unwrap();
        assert_eq!(j["objects"][0]["encoding"], json!(enc));
        assert_eq!(j["objects"][0]["kind"], json!("resource"));
    }
}
