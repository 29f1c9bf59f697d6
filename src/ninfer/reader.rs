//! Zero-copy `.ninfer` v2 reader over a byte slice (usually a memory map).

use super::directory::{parse_directory, validate_text, Directory, Object, ObjectBody};
use crate::error::{align_up, checked_add, Error, ErrorClass, Result};
use crate::geometry::{row_split_geometry, Plane, RowSplitGeometry};
use crate::planes::{disassemble_rows, BlockLayout};
use crate::spec::{self, FormatKind, NumericFormat};

/// An opened, validated artifact.
pub struct Artifact<'a> {
    /// The whole file.
    pub bytes: &'a [u8],
    /// Length of the JSON directory (the prefix's second field).
    pub json_bytes: u64,
    /// Absolute file offset of the payload (`align_up(16 + json_bytes, 4096)`).
    pub payload_offset: u64,
    /// The parsed, validated directory.
    pub directory: Directory,
}

/// A typed view of one object's bytes.
#[derive(Debug)]
pub enum ObjectView<'a> {
    /// `contiguous-le-v1`: C-order little-endian words.
    Contiguous {
        /// The registry format.
        format: &'static NumericFormat,
        /// Dimensions, outermost first.
        shape: Vec<u64>,
        /// The object's bytes.
        bytes: &'a [u8],
    },
    /// `row-split-k128-v1`: three planes with per-row spans.
    RowSplit(RowSplitView<'a>),
    /// A layout whose geometry is checked but whose values this suite does not decode.
    Opaque {
        /// The registry format.
        format: &'static NumericFormat,
        /// The layout.
        layout: spec::LayoutId,
        /// The object's bytes.
        bytes: &'a [u8],
    },
    /// A resource: raw bytes.
    Resource {
        /// The object's bytes.
        bytes: &'a [u8],
    },
}

/// A row-split object: planes, per-row spans and ggml-block reconstruction.
#[derive(Debug)]
pub struct RowSplitView<'a> {
    /// Object name.
    pub name: String,
    /// The registry format.
    pub format: &'static NumericFormat,
    /// Plane offsets and per-row spans.
    pub geom: RowSplitGeometry,
    /// The object's bytes.
    pub bytes: &'a [u8],
}

impl<'a> RowSplitView<'a> {
    /// The bytes of plane `p`.
    pub fn plane(&self, p: Plane) -> &'a [u8] {
        let o = self.geom.plane_offset(p) as usize;
        &self.bytes[o..o + self.geom.plane_bytes(p) as usize]
    }

    /// Row `r`'s bytes in plane `p`.
    pub fn row(&self, p: Plane, r: u64) -> &'a [u8] {
        let s = self.geom.row_span(p, r);
        &self.bytes[s.start as usize..s.end as usize]
    }

    /// The block layout, for ternary formats.
    pub fn block_layout(&self) -> Result<BlockLayout> {
        BlockLayout::for_format(self.format)
    }

    /// The ggml block stream of rows `rows` (for decoding or comparison with a GGUF tensor).
    pub fn ggml_rows(&self, rows: std::ops::Range<u64>) -> Result<Vec<u8>> {
        disassemble_rows(&self.block_layout()?, &self.geom, self.bytes, rows)
    }
}

fn magic_of(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0))
        .collect()
}

/// Whether `bytes` starts as a `.ninfer` v2 file: its 8-byte magic, nothing after it. The
/// error says what the file is instead (`ninfer.truncated` below 8 bytes, a refused magic's own
/// class such as `ninfer.magic_v1`, `ninfer.magic` for anything else), so a caller can tell
/// "not this container at all" from "this container, damaged" without reading the error.
pub fn check_magic(bytes: &[u8]) -> Result<()> {
    check_magic_in(bytes, &spec::get().container)
}

/// The 8-byte magic: `ninfer.truncated` below 8 bytes, the refused magics' own classes (e.g.
/// the v1 container), `ninfer.magic` for anything else.
fn check_magic_in(bytes: &[u8], c: &crate::spec::Container) -> Result<()> {
    if bytes.len() < 8 {
        return Err(Error::at(
            ErrorClass::NinferTruncated,
            0,
            "magic",
            format!(
                "file is {} bytes; a .ninfer file starts with an 8-byte magic",
                bytes.len()
            ),
        ));
    }
    let magic = &bytes[..8];
    if magic != magic_of(&c.magic_hex).as_slice() {
        for r in &c.refused_magics {
            if magic == magic_of(&r.magic_hex).as_slice() {
                let class = ErrorClass::from_id(&r.error_class).unwrap_or(ErrorClass::NinferMagic);
                if !crate::error::enforced(class) {
                    return Ok(()); // rule switch (tests only): read on as v2
                }
                return Err(Error::at(
                    class,
                    0,
                    "magic",
                    format!("{}: {}", r.name, r.why),
                ));
            }
        }
        if !crate::error::enforced(ErrorClass::NinferMagic) {
            return Ok(()); // rule switch (tests only): read on as v2
        }
        return Err(Error::at(
            ErrorClass::NinferMagic,
            0,
            "magic",
            format!("{magic:02x?} is not NINFER\\0\\2"),
        ));
    }
    Ok(())
}

impl<'a> Artifact<'a> {
    /// Parses the prefix and directory and validates everything against the payload.
    pub fn parse(bytes: &'a [u8]) -> Result<Artifact<'a>> {
        let c = &spec::get().container;
        check_magic_in(bytes, c)?;
        if (bytes.len() as u64) < c.prefix_bytes {
            return Err(Error::at(
                ErrorClass::NinferTruncated,
                8,
                "json_bytes",
                "file ends inside the 16-byte prefix",
            ));
        }
        let Some(json_bytes) = crate::le::u64_at(bytes, 8) else {
            return Err(Error::at(
                ErrorClass::NinferTruncated,
                8,
                "json_bytes",
                "file ends inside the 16-byte prefix",
            ));
        };
        let ovf = ErrorClass::NinferArithOverflow;
        let json_end = checked_add(c.prefix_bytes, json_bytes, ovf, "json_bytes")
            .map_err(|e| e.with_offset(8))?;
        if json_end > bytes.len() as u64 {
            return Err(Error::at(ErrorClass::NinferTruncated, 8, "json_bytes", format!("directory of {json_bytes} bytes ends at {json_end}, past the end of the file ({} bytes)", bytes.len())));
        }
        let payload_offset = align_up(json_end, c.payload_alignment, ovf, "payload_offset")
            .map_err(|e| e.with_offset(8))?;
        if payload_offset > bytes.len() as u64 {
            return Err(Error::at(
                ErrorClass::NinferTruncated,
                json_end,
                "payload_offset",
                format!(
                    "file must reach the payload offset {payload_offset}; it has {} bytes",
                    bytes.len()
                ),
            ));
        }
        let text = std::str::from_utf8(&bytes[16..json_end as usize]).map_err(|e| {
            Error::at(
                ErrorClass::NinferJsonSyntax,
                16 + e.valid_up_to() as u64,
                "directory",
                "directory is not valid UTF-8",
            )
        })?;
        let directory = parse_directory(text)?;
        validate_text(&directory, text, bytes.len() as u64 - payload_offset)?;
        Ok(Artifact {
            bytes,
            json_bytes,
            payload_offset,
            directory,
        })
    }

    /// Payload length: file length minus the payload offset.
    pub fn payload_bytes(&self) -> u64 {
        self.bytes.len() as u64 - self.payload_offset
    }

    /// An object by name, or `ninfer.object_missing`.
    pub fn object(&self, name: &str) -> Result<&Object> {
        self.directory.find(name).ok_or_else(|| {
            Error::new(
                ErrorClass::NinferObjectMissing,
                name,
                "no object of this name in the artifact",
            )
        })
    }

    /// The raw bytes of an object.
    pub fn object_bytes(&self, o: &Object) -> &'a [u8] {
        let start = (self.payload_offset + o.offset) as usize;
        &self.bytes[start..start + o.bytes as usize]
    }

    /// A typed view of the object `name` (one by-name search; to visit every object use
    /// [`Artifact::view_object`] on `directory.objects`, which stays linear).
    pub fn view(&self, name: &str) -> Result<ObjectView<'a>> {
        self.view_object(self.object(name)?)
    }

    /// A typed view of `o`, an object of this artifact's directory.
    pub fn view_object(&self, o: &Object) -> Result<ObjectView<'a>> {
        let bytes = self.object_bytes(o);
        Ok(match &o.body {
            ObjectBody::Resource { .. } => ObjectView::Resource { bytes },
            ObjectBody::Tensor {
                shape,
                format,
                layout,
            } => {
                let f = spec::get().format(format).ok_or_else(|| {
                    Error::new(
                        ErrorClass::InternalInvariant,
                        o.name.clone(),
                        format!("format {format} passed validation but is not in the registry"),
                    )
                })?;
                match f.kind {
                    FormatKind::Direct => ObjectView::Contiguous {
                        format: f,
                        shape: shape.clone(),
                        bytes,
                    },
                    FormatKind::Grouped => ObjectView::RowSplit(RowSplitView {
                        name: o.name.clone(),
                        format: f,
                        geom: row_split_geometry(f, shape[0], shape[1])?,
                        bytes,
                    }),
                    _ => ObjectView::Opaque {
                        format: f,
                        layout: spec::LayoutId::from_name(layout).ok_or_else(|| {
                            Error::new(
                                ErrorClass::InternalInvariant,
                                o.name.clone(),
                                format!("layout {layout} passed validation but is unknown"),
                            )
                        })?,
                        bytes,
                    },
                }
            }
        })
    }

    /// The row-split view of `name`, or `ninfer.object_kind`.
    pub fn row_split(&self, name: &str) -> Result<RowSplitView<'a>> {
        match self.view(name)? {
            ObjectView::RowSplit(v) => Ok(v),
            _ => Err(Error::new(
                ErrorClass::NinferObjectKind,
                name,
                "expected a row-split-k128-v1 tensor",
            )),
        }
    }

    /// A contiguous tensor's (format, shape, bytes), or `ninfer.object_kind`.
    pub fn contiguous(&self, name: &str) -> Result<(&'static NumericFormat, Vec<u64>, &'a [u8])> {
        match self.view(name)? {
            ObjectView::Contiguous {
                format,
                shape,
                bytes,
            } => Ok((format, shape, bytes)),
            _ => Err(Error::new(
                ErrorClass::NinferObjectKind,
                name,
                "expected a contiguous-le-v1 tensor",
            )),
        }
    }
}
