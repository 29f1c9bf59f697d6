//! Deterministic `.ninfer` v2 writer: plan (names, sizes, offsets) then stream objects in
//! offset order, zero padding, atomic replace after the new file re-opens and validates.

use super::directory::{validate_names_and_sizes, Directory, Identity, Object, ObjectBody};
use super::layout::encoded_size;
use super::reader::Artifact;
use crate::error::{align_up, checked_add, Error, ErrorClass, Result};
use crate::fsio;
use crate::spec;
use std::io::Write;
use std::path::Path;

/// An object to place: its body and, for resources, its byte length.
#[derive(Clone, Debug)]
pub struct PlannedObject {
    /// Object name.
    pub name: String,
    /// Tensor or resource members.
    pub body: ObjectBody,
    /// Required for resources; computed for tensors.
    pub resource_bytes: u64,
}

impl PlannedObject {
    /// A tensor of `shape` in `format` and `layout` (its size comes from the layout).
    pub fn tensor(
        name: impl Into<String>,
        shape: Vec<u64>,
        format: &str,
        layout: spec::LayoutId,
    ) -> Self {
        PlannedObject {
            name: name.into(),
            body: ObjectBody::Tensor {
                shape,
                format: format.into(),
                layout: layout.as_str().into(),
            },
            resource_bytes: 0,
        }
    }

    /// A raw-bytes resource of `bytes` bytes.
    pub fn resource(name: impl Into<String>, bytes: u64) -> Self {
        PlannedObject {
            name: name.into(),
            body: ObjectBody::Resource {
                encoding: "raw-bytes-v1".into(),
            },
            resource_bytes: bytes,
        }
    }
}

/// Assigns offsets in order (each object at the next multiple of its alignment) and checks
/// names and sizes. Duplicate names fail here, at planning time.
pub fn plan(identity: Identity, objects: Vec<PlannedObject>) -> Result<Directory> {
    let s = spec::get();
    let mut cursor = 0u64;
    let mut out = Vec::with_capacity(objects.len());
    for p in objects {
        let (bytes, align) = match &p.body {
            ObjectBody::Tensor {
                shape,
                format,
                layout,
            } => {
                let (f, l) = super::directory::resolve_format_layout(format, layout, &p.name)?;
                (encoded_size(l, f, shape, &p.name)?, l.alignment)
            }
            ObjectBody::Resource { .. } => {
                (p.resource_bytes, s.container.directory.resource_alignment)
            }
        };
        let offset = align_up(
            cursor,
            align,
            ErrorClass::NinferArithOverflow,
            "object offset",
        )?;
        cursor = checked_add(offset, bytes, ErrorClass::NinferArithOverflow, "object end")?;
        out.push(Object {
            name: p.name,
            body: p.body,
            offset,
            bytes,
        });
    }
    let dir = Directory {
        identity,
        objects: out,
    };
    validate_names_and_sizes(&dir)?;
    Ok(dir)
}

/// Prefix + directory + zero padding up to the payload offset.
pub fn header_bytes(dir: &Directory) -> Vec<u8> {
    let c = &spec::get().container;
    let json = dir.to_json();
    let mut out = Vec::with_capacity(4096 + json.len());
    out.extend(
        (0..c.magic_hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&c.magic_hex[i..i + 2], 16).unwrap_or(0)),
    );
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    let payload = (out.len() as u64).div_ceil(c.payload_alignment) * c.payload_alignment;
    out.resize(payload as usize, c.writer.padding_byte);
    out
}

/// Total file size of an artifact with this directory.
pub fn file_size(dir: &Directory) -> u64 {
    header_bytes(dir).len() as u64 + dir.objects.last().map_or(0, |o| o.offset + o.bytes)
}

/// Counts bytes written through it, to check each object is exactly its planned size.
struct Counting<'w, W: Write + ?Sized> {
    inner: &'w mut W,
    n: u64,
}

impl<W: Write + ?Sized> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Streams an artifact into `w`: `fill(i, object, writer)` must write exactly `object.bytes`.
pub fn write_to<W: Write + ?Sized>(
    w: &mut W,
    dir: &Directory,
    mut fill: impl FnMut(usize, &Object, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    let werr = fsio::write_err("artifact");
    w.write_all(&header_bytes(dir)).map_err(&werr)?;
    let mut cursor = 0u64;
    let zeros = [0u8; 4096];
    for (i, o) in dir.objects.iter().enumerate() {
        let mut gap = o.offset - cursor;
        while gap > 0 {
            let k = gap.min(zeros.len() as u64) as usize;
            w.write_all(&zeros[..k]).map_err(&werr)?;
            gap -= k as u64;
        }
        let mut cw = Counting { inner: w, n: 0 };
        fill(i, o, &mut cw)?;
        if cw.n != o.bytes {
            return Err(Error::new(
                ErrorClass::IoWrite,
                o.name.clone(),
                format!(
                    "producer wrote {} bytes; the directory says {}",
                    cw.n, o.bytes
                ),
            ));
        }
        cursor = o.offset + o.bytes;
    }
    Ok(())
}

/// Writes `path` atomically; the temporary file must re-open as a valid artifact whose
/// directory equals `dir` before it replaces `path`.
pub fn write_file(
    path: &Path,
    dir: &Directory,
    fill: impl FnMut(usize, &Object, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    fsio::write_atomic(
        path,
        |w| write_to(w, dir, fill),
        |tmp| {
            let map = fsio::map_file(tmp)?;
            let a = Artifact::parse(&map)?;
            if &a.directory != dir {
                return Err(Error::new(
                    ErrorClass::IoWrite,
                    tmp.display().to_string(),
                    "re-opened directory differs from the plan",
                ));
            }
            Ok(())
        },
    )
}

/// Builds a whole artifact in memory from per-object byte buffers (tests, corpus).
pub fn to_bytes(dir: &Directory, payloads: &[Vec<u8>]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_to(&mut out, dir, |i, _, w| {
        w.write_all(&payloads[i]).map_err(fsio::write_err("object"))
    })?;
    Ok(out)
}
