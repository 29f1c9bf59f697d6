//! `inspect FILE`: detects GGUF or .ninfer by magic and prints what is inside.

use crate::geometry::Plane;
use crate::ninfer::{Artifact, ObjectBody, ObjectView};
use crate::text::{escape, escape_truncated, json_safe};

/// Longest name or identity (in characters) the text view shows whole.
const SHOWN_CHARS: usize = 200;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// Runs `inspect` on `path`; `mode` is the GGUF reading mode (`strict` or `spec`).
pub fn run(path: &Path, as_json: bool, mode: crate::gguf::Mode) -> anyhow::Result<ExitCode> {
    let map = crate::fsio::map_file(path)?;
    if map.starts_with(b"NINFER") || map.starts_with(b"NINPRT") {
        return ninfer(path, &map, as_json);
    }
    // Anything else is read as GGUF, whose reader names a bad magic precisely.
    super::inspect_gguf::run(path, &map, as_json, mode)
}

/// The `--json` description of a container: identity, layout and every object (tensor format,
/// layout, shape, row-split geometry; resource encoding).
pub fn ninfer_json(path: &Path, bytes: &[u8]) -> anyhow::Result<serde_json::Value> {
    let a = Artifact::parse(bytes)?;
    let mut objects = Vec::new();
    for o in &a.directory.objects {
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
            j["geometry"] = serde_json::to_value(v.geom)?;
        }
        objects.push(j);
    }
    Ok(json!({
        "file": path.display().to_string(), "container": "ninfer v2", "bytes": bytes.len(),
        "json_bytes": a.json_bytes, "payload_offset": a.payload_offset, "payload_bytes": a.payload_bytes(),
        "identity": {"model_id": a.directory.identity.model_id, "weights_id": a.directory.identity.weights_id},
        "objects": objects,
    }))
}

fn ninfer(path: &Path, bytes: &[u8], as_json: bool) -> anyhow::Result<ExitCode> {
    if as_json {
        let summary = ninfer_json(path, bytes)?;
        println!("{}", json_safe(&serde_json::to_string_pretty(&summary)?));
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
