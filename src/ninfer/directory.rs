//! The `.ninfer` v2 JSON directory: parsing with exact member sets and JSON types, validation
//! of names, formats, layouts, sizes and ranges, and compact serialization for the writer.

use super::json::{Json, DUPLICATE_MEMBER};
use super::layout::encoded_size;
use crate::error::{Error, ErrorClass, Result};
use crate::spec::{self, Layout, NumericFormat};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub model_id: String,
    pub weights_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectBody {
    Tensor {
        shape: Vec<u64>,
        format: String,
        layout: String,
    },
    Resource {
        encoding: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub body: ObjectBody,
    /// Payload-relative offset.
    pub offset: u64,
    pub bytes: u64,
}

impl Object {
    pub fn is_tensor(&self) -> bool {
        matches!(self.body, ObjectBody::Tensor { .. })
    }

    pub fn kind(&self) -> &'static str {
        if self.is_tensor() {
            "tensor"
        } else {
            "resource"
        }
    }

    /// (format, layout) of a tensor.
    pub fn format_layout(&self) -> Option<(&str, &str)> {
        match &self.body {
            ObjectBody::Tensor { format, layout, .. } => Some((format, layout)),
            ObjectBody::Resource { .. } => None,
        }
    }

    pub fn shape(&self) -> &[u64] {
        match &self.body {
            ObjectBody::Tensor { shape, .. } => shape,
            ObjectBody::Resource { .. } => &[],
        }
    }

    /// Required offset alignment (per layout for tensors, 1 for resources).
    pub fn alignment(&self) -> u64 {
        match &self.body {
            ObjectBody::Tensor { layout, .. } => {
                spec::get().layout(layout).map_or(1, |l| l.alignment)
            }
            ObjectBody::Resource { .. } => spec::get().container.directory.resource_alignment,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directory {
    pub identity: Identity,
    pub objects: Vec<Object>,
}

/// Byte offset of the directory in the file.
pub const DIRECTORY_OFFSET: u64 = 16;

fn err(class: ErrorClass, field: impl Into<String>, detail: impl Into<String>) -> Error {
    Error::at(class, DIRECTORY_OFFSET, field, detail)
}

/// Converts serde_json's 1-based line/column to a file offset.
fn json_error(text: &str, e: serde_json::Error) -> Error {
    let mut off = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == e.line() {
            off += e.column().saturating_sub(1).min(line.len());
            break;
        }
        off += line.len();
    }
    let msg = e.to_string();
    let class = if msg.starts_with(DUPLICATE_MEMBER) {
        ErrorClass::NinferDirMembers
    } else {
        ErrorClass::NinferJsonSyntax
    };
    Error::at(class, DIRECTORY_OFFSET + off as u64, "directory", msg)
}

fn members<'a>(v: &'a Json, want: &[String], field: &str) -> Result<Vec<&'a Json>> {
    let Json::Object(m) = v else {
        return Err(err(
            ErrorClass::NinferDirType,
            field,
            format!("expected an object, found {}", v.type_name()),
        ));
    };
    for (k, _) in m {
        if !want.iter().any(|w| w == k) {
            return Err(err(
                ErrorClass::NinferDirMembers,
                format!("{field}.{k}"),
                format!("unexpected member '{k}' (allowed: {})", want.join(", ")),
            ));
        }
    }
    want.iter()
        .map(|w| {
            m.iter()
                .find(|(k, _)| k == w)
                .map(|(_, v)| v)
                .ok_or_else(|| {
                    err(
                        ErrorClass::NinferDirMembers,
                        format!("{field}.{w}"),
                        format!("missing member '{w}'"),
                    )
                })
        })
        .collect()
}

fn string(v: &Json, field: &str) -> Result<String> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        other => Err(err(
            ErrorClass::NinferDirType,
            field,
            format!("expected a string, found {}", other.type_name()),
        )),
    }
}

fn uint(v: &Json, field: &str) -> Result<u64> {
    match v {
        Json::UInt(n) => Ok(*n),
        Json::Int(n) => Err(err(
            ErrorClass::NinferDirType,
            field,
            format!("expected a non-negative integer, found {n}"),
        )),
        other => Err(err(
            ErrorClass::NinferDirType,
            field,
            format!("expected an integer, found {}", other.type_name()),
        )),
    }
}

/// Parses and type-checks the directory text (no size/range validation).
pub fn parse_directory(text: &str) -> Result<Directory> {
    let root: Json = serde_json::from_str(text).map_err(|e| json_error(text, e))?;
    let rules = &spec::get().container.directory;
    let r = members(&root, &rules.root_members, "directory")?;
    let id = members(r[0], &rules.identity_members, "identity")?;
    let identity = Identity {
        model_id: string(id[0], "identity.model_id")?,
        weights_id: string(id[1], "identity.weights_id")?,
    };
    let Json::Array(items) = r[1] else {
        return Err(err(
            ErrorClass::NinferDirType,
            "objects",
            format!("expected an array, found {}", r[1].type_name()),
        ));
    };
    let mut objects = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let f = format!("objects[{i}]");
        let kind = match item {
            Json::Object(m) => m.iter().find(|(k, _)| k == "kind").map(|(_, v)| v),
            other => {
                return Err(err(
                    ErrorClass::NinferDirType,
                    f,
                    format!("expected an object, found {}", other.type_name()),
                ))
            }
        };
        let kind = match kind {
            Some(k) => string(k, &format!("{f}.kind"))?,
            None => {
                return Err(err(
                    ErrorClass::NinferDirMembers,
                    format!("{f}.kind"),
                    "missing member 'kind'",
                ))
            }
        };
        let obj = match kind.as_str() {
            "tensor" => {
                let m = members(item, &rules.tensor_members, &f)?;
                let Json::Array(dims) = m[2] else {
                    return Err(err(
                        ErrorClass::NinferDirType,
                        format!("{f}.shape"),
                        format!("expected an array, found {}", m[2].type_name()),
                    ));
                };
                let shape = dims
                    .iter()
                    .enumerate()
                    .map(|(j, d)| uint(d, &format!("{f}.shape[{j}]")))
                    .collect::<Result<Vec<_>>>()?;
                Object {
                    name: string(m[0], &format!("{f}.name"))?,
                    body: ObjectBody::Tensor {
                        shape,
                        format: string(m[3], &format!("{f}.format"))?,
                        layout: string(m[4], &format!("{f}.layout"))?,
                    },
                    offset: uint(m[5], &format!("{f}.offset"))?,
                    bytes: uint(m[6], &format!("{f}.bytes"))?,
                }
            }
            "resource" => {
                let m = members(item, &rules.resource_members, &f)?;
                Object {
                    name: string(m[0], &format!("{f}.name"))?,
                    body: ObjectBody::Resource {
                        encoding: string(m[2], &format!("{f}.encoding"))?,
                    },
                    offset: uint(m[3], &format!("{f}.offset"))?,
                    bytes: uint(m[4], &format!("{f}.bytes"))?,
                }
            }
            other => {
                return Err(err(
                    ErrorClass::NinferDirKind,
                    format!("{f}.kind"),
                    format!("unknown kind '{other}' (expected tensor or resource)"),
                ));
            }
        };
        objects.push(obj);
    }
    Ok(Directory { identity, objects })
}

/// The registry entries of a tensor's format and layout.
pub fn resolve_format_layout(
    format: &str,
    layout: &str,
    field: &str,
) -> Result<(&'static NumericFormat, &'static Layout)> {
    let s = spec::get();
    let f = s.format(format).ok_or_else(|| {
        err(
            ErrorClass::NinferDirFormat,
            field,
            format!("unknown numeric format: '{format}'"),
        )
    })?;
    let l = s.layout(layout).ok_or_else(|| {
        err(
            ErrorClass::NinferDirLayout,
            field,
            format!("unknown tensor layout: '{layout}'"),
        )
    })?;
    Ok((f, l))
}

/// Validates names, identity, formats, sizes (`bytes == encoded_size`) and ranges against a
/// payload of `payload_bytes`.
pub fn validate(dir: &Directory, payload_bytes: u64) -> Result<()> {
    validate_names_and_sizes(dir)?;
    let mut cursor = 0u64;
    for (i, o) in dir.objects.iter().enumerate() {
        let f = format!("objects[{i}] '{}'", o.name);
        if o.offset < cursor {
            return Err(err(ErrorClass::NinferRangeOrder, f, format!("offset {} starts before the previous object ends at {cursor} (overlap or out of order)", o.offset)));
        }
        let a = o.alignment();
        if o.offset % a != 0 {
            return Err(err(
                ErrorClass::NinferRangeAlignment,
                f,
                format!("offset {} is not a multiple of {a}", o.offset),
            ));
        }
        let end = o.offset.checked_add(o.bytes).ok_or_else(|| {
            err(
                ErrorClass::NinferArithOverflow,
                f.clone(),
                "offset + bytes overflows u64",
            )
        })?;
        if end > payload_bytes {
            return Err(err(
                ErrorClass::NinferRangeBounds,
                f,
                format!(
                    "offset {} + bytes {} = {end} exceeds the payload ({payload_bytes} bytes)",
                    o.offset, o.bytes
                ),
            ));
        }
        cursor = end;
    }
    Ok(())
}

/// The checks that do not need the payload: identity, names, kinds, formats, sizes.
pub fn validate_names_and_sizes(dir: &Directory) -> Result<()> {
    if dir.identity.model_id.is_empty() {
        return Err(err(
            ErrorClass::NinferDirIdentity,
            "identity.model_id",
            "must be a non-empty string",
        ));
    }
    if dir.identity.weights_id.is_empty() {
        return Err(err(
            ErrorClass::NinferDirIdentity,
            "identity.weights_id",
            "must be a non-empty string",
        ));
    }
    let mut names: Vec<&str> = Vec::with_capacity(dir.objects.len());
    for (i, o) in dir.objects.iter().enumerate() {
        let f = format!("objects[{i}]");
        if o.name.is_empty() {
            return Err(err(
                ErrorClass::NinferDirName,
                format!("{f}.name"),
                "object names must be non-empty",
            ));
        }
        names.push(&o.name);
        match &o.body {
            ObjectBody::Tensor {
                shape,
                format,
                layout,
            } => {
                let field = format!("{f} '{}'", o.name);
                let (fm, l) = resolve_format_layout(format, layout, &field)?;
                let want = encoded_size(l, fm, shape, &field).map_err(|mut e| {
                    e.offset = Some(DIRECTORY_OFFSET);
                    e
                })?;
                if want != o.bytes {
                    return Err(err(
                        ErrorClass::NinferDirBytes,
                        field,
                        format!(
                            "tensor {} stores {} bytes; layout requires {want}",
                            o.name, o.bytes
                        ),
                    ));
                }
            }
            ObjectBody::Resource { encoding } => {
                if !spec::get()
                    .container
                    .directory
                    .resource_encodings
                    .contains(encoding)
                {
                    return Err(err(
                        ErrorClass::NinferDirEncoding,
                        format!("{f}.encoding"),
                        format!("unknown resource encoding '{encoding}'"),
                    ));
                }
                if o.bytes == 0 {
                    return Err(err(
                        ErrorClass::NinferDirResourceEmpty,
                        format!("{f} '{}'", o.name),
                        "resources must have bytes > 0",
                    ));
                }
            }
        }
    }
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(err(
            ErrorClass::NinferDirDuplicateName,
            "objects",
            format!("duplicate object name: {}", w[0]),
        ));
    }
    Ok(())
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

impl Directory {
    /// Compact JSON with members in spec order (what the writer emits).
    pub fn to_json(&self) -> String {
        let mut out = format!(
            "{{\"identity\":{{\"model_id\":{},\"weights_id\":{}}},\"objects\":[",
            quote(&self.identity.model_id),
            quote(&self.identity.weights_id)
        );
        for (i, o) in self.objects.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match &o.body {
                ObjectBody::Tensor {
                    shape,
                    format,
                    layout,
                } => {
                    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                    out.push_str(&format!(
                        "{{\"name\":{},\"kind\":\"tensor\",\"shape\":[{}],\"format\":{},\"layout\":{},\"offset\":{},\"bytes\":{}}}",
                        quote(&o.name), dims.join(","), quote(format), quote(layout), o.offset, o.bytes
                    ));
                }
                ObjectBody::Resource { encoding } => {
                    out.push_str(&format!(
                        "{{\"name\":{},\"kind\":\"resource\",\"encoding\":{},\"offset\":{},\"bytes\":{}}}",
                        quote(&o.name), quote(encoding), o.offset, o.bytes
                    ));
                }
            }
        }
        out.push_str("]}");
        out
    }

    pub fn find(&self, name: &str) -> Option<&Object> {
        self.objects.iter().find(|o| o.name == name)
    }
}
