//! The `.ninfer` v2 JSON directory: parsing with exact member sets and JSON types, validation
//! of names, formats, layouts, sizes and ranges, and compact serialization for the writer.

use super::json::{locate, Json, Step, DUPLICATE_MEMBER, OUT_OF_MEMORY};
use super::layout::encoded_size;
use crate::error::{Error, ErrorClass, Result};
use crate::spec::{self, DirectoryRules, Layout, NumericFormat};
use crate::text::escape;
use std::collections::HashMap;

/// The directory's `identity` member: which model and which weights the container holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `identity.model_id`, non-empty.
    pub model_id: String,
    /// `identity.weights_id`, non-empty.
    pub weights_id: String,
}

/// What an object is: a typed tensor or an opaque resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectBody {
    /// `kind: "tensor"`.
    Tensor {
        /// Dimensions, outermost first.
        shape: Vec<u64>,
        /// Numeric format name from the registry (spec/formats.json).
        format: String,
        /// Tensor layout name from the registry.
        layout: String,
    },
    /// `kind: "resource"`.
    Resource {
        /// Resource encoding name (spec/container.json).
        encoding: String,
    },
}

/// One entry of the directory's `objects` array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Unique, non-empty object name.
    pub name: String,
    /// Tensor or resource members.
    pub body: ObjectBody,
    /// Payload-relative offset.
    pub offset: u64,
    /// Stored length in bytes (for tensors, exactly the layout's encoded size).
    pub bytes: u64,
}

impl Object {
    /// Whether this is a tensor (not a resource).
    pub fn is_tensor(&self) -> bool {
        matches!(self.body, ObjectBody::Tensor { .. })
    }

    /// The `kind` member: `tensor` or `resource`.
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

    /// The ternary type of a tensor whose format is one of the registry's ternary formats
    /// (`None` for other tensors, resources and names the registry lacks).
    pub fn ternary_type(&self) -> Option<crate::codec::TernaryType> {
        self.format_layout()
            .and_then(|(f, _)| crate::codec::TernaryType::of_format_name(f))
    }

    /// The registry layout of a tensor (`None` for resources and unknown names).
    pub fn layout_id(&self) -> Option<crate::spec::LayoutId> {
        self.format_layout()
            .and_then(|(_, l)| crate::spec::LayoutId::from_name(l))
    }

    /// A tensor's shape (empty for resources).
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
                spec::get().layout_named(layout).map_or(1, |l| l.alignment)
            }
            ObjectBody::Resource { .. } => spec::get().container.directory.resource_alignment,
        }
    }
}

/// A parsed `.ninfer` v2 JSON directory.
#[derive(Clone)]
pub struct Directory {
    /// Model and weights identity.
    pub identity: Identity,
    /// Objects in offset order.
    pub objects: Vec<Object>,
    /// Name -> first position, built at the first [`Directory::find`] (so that looking up
    /// every object by name is linear, not quadratic, in the object count).
    index: NameIndex,
}

/// The lazily built name index of a [`Directory`], with the object count it was built for.
#[derive(Default)]
struct NameIndex(std::sync::OnceLock<(usize, HashMap<Box<str>, usize>)>);

/// A clone starts without an index: clones are what gets edited (the violation catalogs clone
/// a valid directory, then rename or reorder its objects), so an index built on the original
/// must not follow them.
impl Clone for NameIndex {
    fn clone(&self) -> NameIndex {
        NameIndex::default()
    }
}

impl PartialEq for Directory {
    fn eq(&self, other: &Directory) -> bool {
        self.identity == other.identity && self.objects == other.objects
    }
}

impl Eq for Directory {}

impl std::fmt::Debug for Directory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Directory")
            .field("identity", &self.identity)
            .field("objects", &self.objects)
            .finish()
    }
}

/// Byte offset of the directory in the file.
pub const DIRECTORY_OFFSET: u64 = 16;

/// Where directory errors point: the directory text, when the caller has it, so that each
/// error carries the absolute file offset of the offending value (found by [`locate`] only
/// once an error exists; the success path never pays for it). Without the text (a directory
/// built in memory by the writer) errors point at the directory's start.
#[derive(Clone, Copy)]
struct Src<'t> {
    text: Option<&'t str>,
}

impl Src<'_> {
    fn err(
        &self,
        class: ErrorClass,
        path: &[Step],
        field: impl Into<String>,
        detail: impl Into<String>,
    ) -> Error {
        Error::at(class, self.offset_of(path), field, detail)
    }

    fn offset_of(&self, path: &[Step]) -> u64 {
        let at = self.text.and_then(|t| locate(t, path)).unwrap_or(0);
        DIRECTORY_OFFSET + at as u64
    }
}

fn key(k: &str) -> Step {
    Step::Key(k.to_owned())
}

/// The path of member `m` of object `i` (or of the object itself when `m` is empty).
fn obj_path(i: usize, m: &str) -> Vec<Step> {
    let mut p = vec![key("objects"), Step::Index(i)];
    if !m.is_empty() {
        p.push(key(m));
    }
    p
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
    } else if msg.starts_with(OUT_OF_MEMORY) {
        ErrorClass::IoMemory
    } else {
        ErrorClass::NinferJsonSyntax
    };
    Error::at(class, DIRECTORY_OFFSET + off as u64, "directory", msg)
}

/// The members `want` of object `v` in that order; refuses unknown and missing members.
fn members<'a>(
    src: Src<'_>,
    v: &'a Json<'a>,
    want: &[String],
    field: &str,
    path: &[Step],
) -> Result<Vec<&'a Json<'a>>> {
    let Json::Object(m) = v else {
        return Err(src.err(
            ErrorClass::NinferDirType,
            path,
            field,
            format!("expected an object, found {}", v.type_name()),
        ));
    };
    for (k, _) in m {
        if !want.iter().any(|w| w == k) && crate::error::enforced(ErrorClass::NinferDirMembers) {
            let at = [path, &[key(k)]].concat();
            let k = escape(k);
            return Err(src.err(
                ErrorClass::NinferDirMembers,
                &at,
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
                    src.err(
                        ErrorClass::NinferDirMembers,
                        path,
                        format!("{field}.{w}"),
                        format!("missing member '{w}'"),
                    )
                })
        })
        .collect()
}

fn string(src: Src<'_>, v: &Json, field: &str, path: &[Step]) -> Result<String> {
    match v {
        Json::Str(s) => {
            let mut o = String::new();
            o.try_reserve_exact(s.len()).map_err(|_| {
                src.err(
                    ErrorClass::IoMemory,
                    path,
                    field,
                    format!("out of memory for a string of {} bytes", s.len()),
                )
            })?;
            o.push_str(s);
            Ok(o)
        }
        other => Err(src.err(
            ErrorClass::NinferDirType,
            path,
            field,
            format!("expected a string, found {}", other.type_name()),
        )),
    }
}

fn uint(src: Src<'_>, v: &Json, field: &str, path: &[Step]) -> Result<u64> {
    match v {
        Json::UInt(n) => Ok(*n),
        Json::Int(n) => Err(src.err(
            ErrorClass::NinferDirType,
            path,
            field,
            format!("expected a non-negative integer, found {n}"),
        )),
        other => Err(src.err(
            ErrorClass::NinferDirType,
            path,
            field,
            format!("expected an integer, found {}", other.type_name()),
        )),
    }
}

/// Parses and type-checks the directory text (no size/range validation). Errors carry the
/// absolute file offset of the offending value (the directory starts at byte 16).
pub fn parse_directory(text: &str) -> Result<Directory> {
    let root: Json = serde_json::from_str(text).map_err(|e| json_error(text, e))?;
    let src = Src { text: Some(text) };
    let rules = &spec::get().container.directory;
    let r = members(src, &root, &rules.root_members, "directory", &[])?;
    let identity = parse_identity(src, r[0], rules)?;
    let Json::Array(items) = r[1] else {
        return Err(src.err(
            ErrorClass::NinferDirType,
            &[key("objects")],
            "objects",
            format!("expected an array, found {}", r[1].type_name()),
        ));
    };
    let mut objects = Vec::new();
    objects.try_reserve_exact(items.len()).map_err(|_| {
        src.err(
            ErrorClass::IoMemory,
            &[key("objects")],
            "objects",
            format!(
                "out of memory for {} objects ({} B each on the heap)",
                items.len(),
                std::mem::size_of::<Object>()
            ),
        )
    })?;
    for (i, item) in items.iter().enumerate() {
        objects.push(parse_object(src, i, item, rules)?);
    }
    Ok(Directory::new(identity, objects))
}

/// The `identity` member: exactly `model_id` and `weights_id`, both strings.
fn parse_identity(src: Src<'_>, v: &Json, rules: &DirectoryRules) -> Result<Identity> {
    let id_path = [key("identity")];
    let id = members(src, v, &rules.identity_members, "identity", &id_path)?;
    Ok(Identity {
        model_id: string(
            src,
            id[0],
            "identity.model_id",
            &[key("identity"), key("model_id")],
        )?,
        weights_id: string(
            src,
            id[1],
            "identity.weights_id",
            &[key("identity"), key("weights_id")],
        )?,
    })
}

/// `objects[i]`: an object whose `kind` (a string) selects the tensor or resource members.
fn parse_object(src: Src<'_>, i: usize, item: &Json, rules: &DirectoryRules) -> Result<Object> {
    let f = format!("objects[{i}]");
    let at = |m: &str| obj_path(i, m);
    let kind = match item {
        Json::Object(m) => m.iter().find(|(k, _)| k == "kind").map(|(_, v)| v),
        other => {
            return Err(src.err(
                ErrorClass::NinferDirType,
                &at(""),
                f,
                format!("expected an object, found {}", other.type_name()),
            ))
        }
    };
    let kind = match kind {
        Some(k) => string(src, k, &format!("{f}.kind"), &at("kind"))?,
        None => {
            return Err(src.err(
                ErrorClass::NinferDirMembers,
                &at(""),
                format!("{f}.kind"),
                "missing member 'kind'",
            ))
        }
    };
    match kind.as_str() {
        "tensor" => parse_tensor(src, i, item, rules),
        "resource" => {
            let m = members(src, item, &rules.resource_members, &f, &at(""))?;
            Ok(Object {
                name: string(src, m[0], &format!("{f}.name"), &at("name"))?,
                body: ObjectBody::Resource {
                    encoding: string(src, m[2], &format!("{f}.encoding"), &at("encoding"))?,
                },
                offset: uint(src, m[3], &format!("{f}.offset"), &at("offset"))?,
                bytes: uint(src, m[4], &format!("{f}.bytes"), &at("bytes"))?,
            })
        }
        other => Err(src.err(
            ErrorClass::NinferDirKind,
            &at("kind"),
            format!("{f}.kind"),
            format!(
                "unknown kind '{}' (expected tensor or resource)",
                escape(other)
            ),
        )),
    }
}

/// The members of tensor `objects[i]`, typed (format and layout stay names: they are checked
/// against the registry by [`validate`]).
fn parse_tensor(src: Src<'_>, i: usize, item: &Json, rules: &DirectoryRules) -> Result<Object> {
    let f = format!("objects[{i}]");
    let at = |m: &str| obj_path(i, m);
    let m = members(src, item, &rules.tensor_members, &f, &at(""))?;
    let Json::Array(dims) = m[2] else {
        return Err(src.err(
            ErrorClass::NinferDirType,
            &at("shape"),
            format!("{f}.shape"),
            format!("expected an array, found {}", m[2].type_name()),
        ));
    };
    let mut shape = Vec::new();
    shape.try_reserve_exact(dims.len()).map_err(|_| {
        src.err(
            ErrorClass::IoMemory,
            &at("shape"),
            format!("{f}.shape"),
            format!("out of memory for {} dimensions", dims.len()),
        )
    })?;
    for (j, d) in dims.iter().enumerate() {
        let p = [at("shape"), vec![Step::Index(j)]].concat();
        shape.push(uint(src, d, &format!("{f}.shape[{j}]"), &p)?);
    }
    Ok(Object {
        name: string(src, m[0], &format!("{f}.name"), &at("name"))?,
        body: ObjectBody::Tensor {
            shape,
            format: string(src, m[3], &format!("{f}.format"), &at("format"))?,
            layout: string(src, m[4], &format!("{f}.layout"), &at("layout"))?,
        },
        offset: uint(src, m[5], &format!("{f}.offset"), &at("offset"))?,
        bytes: uint(src, m[6], &format!("{f}.bytes"), &at("bytes"))?,
    })
}

/// The registry entries of a tensor's format and layout.
pub fn resolve_format_layout(
    format: &str,
    layout: &str,
    field: &str,
) -> Result<(&'static NumericFormat, &'static Layout)> {
    let s = spec::get();
    let f = s.format(format).ok_or_else(|| {
        Error::at(
            ErrorClass::NinferDirFormat,
            DIRECTORY_OFFSET,
            field,
            format!("unknown numeric format: '{}'", escape(format)),
        )
    })?;
    let l = s.layout_named(layout).ok_or_else(|| {
        Error::at(
            ErrorClass::NinferDirLayout,
            DIRECTORY_OFFSET,
            field,
            format!("unknown tensor layout: '{}'", escape(layout)),
        )
    })?;
    Ok((f, l))
}

/// Validates names, identity, formats, sizes (`bytes == encoded_size`) and ranges against a
/// payload of `payload_bytes`. Errors point at the directory's start; [`validate_text`] points
/// them at the offending value.
pub fn validate(dir: &Directory, payload_bytes: u64) -> Result<()> {
    validate_in(Src { text: None }, dir, payload_bytes)
}

/// [`validate`] of a directory parsed from `text` (the directory bytes after the 16-byte
/// prefix): errors carry the absolute file offset of the offending value.
pub fn validate_text(dir: &Directory, text: &str, payload_bytes: u64) -> Result<()> {
    validate_in(Src { text: Some(text) }, dir, payload_bytes)
}

fn validate_in(src: Src<'_>, dir: &Directory, payload_bytes: u64) -> Result<()> {
    names_and_sizes(src, dir)?;
    let mut cursor = 0u64;
    for (i, o) in dir.objects.iter().enumerate() {
        let f = format!("objects[{i}] '{}'", escape(&o.name));
        if o.offset < cursor && crate::error::enforced(ErrorClass::NinferRangeOrder) {
            return Err(src.err(ErrorClass::NinferRangeOrder, &obj_path(i, "offset"), f, format!("offset {} starts before the previous object ends at {cursor} (overlap or out of order)", o.offset)));
        }
        let a = o.alignment();
        if o.offset % a != 0 && crate::error::enforced(ErrorClass::NinferRangeAlignment) {
            return Err(src.err(
                ErrorClass::NinferRangeAlignment,
                &obj_path(i, "offset"),
                f,
                format!("offset {} is not a multiple of {a}", o.offset),
            ));
        }
        let end = o.offset.checked_add(o.bytes).ok_or_else(|| {
            src.err(
                ErrorClass::NinferArithOverflow,
                &obj_path(i, "offset"),
                f.clone(),
                "offset + bytes overflows u64",
            )
        })?;
        if end > payload_bytes {
            return Err(src.err(
                ErrorClass::NinferRangeBounds,
                &obj_path(i, "bytes"),
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
    names_and_sizes(Src { text: None }, dir)
}

fn names_and_sizes(src: Src<'_>, dir: &Directory) -> Result<()> {
    check_identity(src, &dir.identity)?;
    // First index of every name: one hash lookup per object keeps 10^6 objects linear.
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(dir.objects.len());
    for (i, o) in dir.objects.iter().enumerate() {
        let f = format!("objects[{i}]");
        planted!("ninfer_name_255_buffer", {
            let mut buf = [0u8; 255];
            if o.name.len() <= 255 {
                buf[..o.name.len()].copy_from_slice(o.name.as_bytes());
                buf[std::hint::black_box(o.name.len())] = 0;
            }
            std::hint::black_box(buf);
        });
        if o.name.is_empty() && crate::error::enforced(ErrorClass::NinferDirName) {
            return Err(src.err(
                ErrorClass::NinferDirName,
                &obj_path(i, "name"),
                format!("{f}.name"),
                "object names must be non-empty",
            ));
        }
        let dup = first.insert(&o.name, i);
        if let Some(j) = dup.filter(|_| crate::error::enforced(ErrorClass::NinferDirDuplicateName))
        {
            return Err(src.err(
                ErrorClass::NinferDirDuplicateName,
                &obj_path(i, "name"),
                format!("{f}.name"),
                format!(
                    "duplicate object name: {} (first used by objects[{j}])",
                    escape(&o.name)
                ),
            ));
        }
        match &o.body {
            ObjectBody::Tensor {
                shape,
                format,
                layout,
            } => check_tensor_size(src, i, o, (shape, format, layout))?,
            ObjectBody::Resource { encoding } => {
                planted!("ninfer_resource_bytes_round_wraps", {
                    // The size in 8-byte words, rounded up with an unchecked add.
                    std::hint::black_box((std::hint::black_box(o.bytes) + 7) / 8);
                });
                check_resource(src, i, o, encoding)?
            }
        }
    }
    Ok(())
}

/// Both identity strings are non-empty.
fn check_identity(src: Src<'_>, identity: &Identity) -> Result<()> {
    if !crate::error::enforced(ErrorClass::NinferDirIdentity) {
        return Ok(()); // rule switch (tests only)
    }
    if identity.model_id.is_empty() {
        return Err(src.err(
            ErrorClass::NinferDirIdentity,
            &[key("identity"), key("model_id")],
            "identity.model_id",
            "must be a non-empty string",
        ));
    }
    if identity.weights_id.is_empty() {
        return Err(src.err(
            ErrorClass::NinferDirIdentity,
            &[key("identity"), key("weights_id")],
            "identity.weights_id",
            "must be a non-empty string",
        ));
    }
    Ok(())
}

/// Tensor `objects[i]`: registry format and layout, and `bytes == encoded_size`.
fn check_tensor_size(
    src: Src<'_>,
    i: usize,
    o: &Object,
    (shape, format, layout): (&[u64], &str, &str),
) -> Result<()> {
    let field = format!("objects[{i}] '{}'", escape(&o.name));
    let relocate = |e: Error| {
        let member = match e.class() {
            ErrorClass::NinferDirFormat => "format",
            ErrorClass::NinferDirLayout => "layout",
            _ => "shape",
        };
        e.with_offset(src.offset_of(&obj_path(i, member)))
    };
    let (fm, l) = resolve_format_layout(format, layout, &field).map_err(relocate)?;
    let want = encoded_size(l, fm, shape, &field).map_err(relocate)?;
    if want != o.bytes && crate::error::enforced(ErrorClass::NinferDirBytes) {
        return Err(src.err(
            ErrorClass::NinferDirBytes,
            &obj_path(i, "bytes"),
            field,
            format!(
                "tensor {} stores {} bytes; layout requires {want}",
                escape(&o.name),
                o.bytes
            ),
        ));
    }
    Ok(())
}

/// Resource `objects[i]`: a registered encoding and at least one byte.
fn check_resource(src: Src<'_>, i: usize, o: &Object, encoding: &str) -> Result<()> {
    let f = format!("objects[{i}]");
    if !spec::get()
        .container
        .directory
        .resource_encodings
        .iter()
        .any(|e| e == encoding)
        && crate::error::enforced(ErrorClass::NinferDirEncoding)
    {
        return Err(src.err(
            ErrorClass::NinferDirEncoding,
            &obj_path(i, "encoding"),
            format!("{f}.encoding"),
            format!("unknown resource encoding '{}'", escape(encoding)),
        ));
    }
    if o.bytes == 0 && crate::error::enforced(ErrorClass::NinferDirResourceEmpty) {
        return Err(src.err(
            ErrorClass::NinferDirResourceEmpty,
            &obj_path(i, "bytes"),
            format!("{f} '{}'", escape(&o.name)),
            "resources must have bytes > 0",
        ));
    }
    Ok(())
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

impl Directory {
    /// A directory of `objects` (in offset order) under `identity`.
    pub fn new(identity: Identity, objects: Vec<Object>) -> Directory {
        Directory {
            identity,
            objects,
            index: NameIndex::default(),
        }
    }

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

    /// Every object by name, built in one pass: for callers that look up many names (one
    /// [`Directory::find`] per object would be quadratic in the object count).
    pub fn by_name(&self) -> HashMap<&str, &Object> {
        self.objects.iter().map(|o| (o.name.as_str(), o)).collect()
    }

    /// The object named `name` (the first, should a hand-built directory repeat it): a hash
    /// lookup in an index built once, at the first call. The index is trusted only while the
    /// object count is the one it was built for, and a hit only when the object there still
    /// has that name; otherwise this falls back to a scan. Edit `objects` (renames included)
    /// before the first lookup, as the violation catalogs do, never after.
    pub fn find(&self, name: &str) -> Option<&Object> {
        let (built_for, index) = self.index.0.get_or_init(|| {
            let mut m = HashMap::with_capacity(self.objects.len());
            for (i, o) in self.objects.iter().enumerate() {
                m.entry(o.name.as_str().into()).or_insert(i);
            }
            (self.objects.len(), m)
        });
        if *built_for == self.objects.len() {
            match index.get(name) {
                None => return None,
                Some(&i) => {
                    if let Some(o) = self.objects.get(i).filter(|o| o.name == name) {
                        return Some(o);
                    }
                }
            }
        }
        self.objects.iter().find(|o| o.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_agrees_with_find_for_every_object_and_misses_absent_names() {
        let (dir, _) = crate::corpus::catalogs::ninfer_violations::base_artifact();
        let index = dir.by_name();
        assert_eq!(index.len(), dir.objects.len());
        for o in &dir.objects {
            assert_eq!(index.get(o.name.as_str()).copied(), dir.find(&o.name));
        }
        assert!(!index.contains_key("absent") && dir.find("absent").is_none());
    }

    #[test]
    fn a_clone_edited_after_a_lookup_does_not_inherit_the_index() {
        let (dir, _) = crate::corpus::catalogs::ninfer_violations::base_artifact();
        let first = dir.objects[0].name.clone();
        assert!(dir.find(&first).is_some()); // builds the original's index
        let mut edited = dir.clone();
        edited.objects[0].name = "renamed".into();
        assert_eq!(
            edited.find("renamed").map(|o| &o.name),
            Some(&"renamed".to_string())
        );
        assert!(edited.find(&first).is_none());
        // Control: the original's index still answers for the original names.
        assert_eq!(dir.find(&first).map(|o| &o.name), Some(&first));
        assert!(dir.find("renamed").is_none());
    }

    #[test]
    fn a_duplicate_member_error_points_into_the_directory_at_the_repeated_key() {
        let text = r#"{"identity":{"model_id":"m","model_id":"n","weights_id":"w"},"objects":[]}"#;
        let e = parse_directory(text).unwrap_err();
        assert_eq!(e.class(), ErrorClass::NinferDirMembers);
        let second = text.rfind(r#""model_id""#).unwrap() as u64;
        let off = e.offset().unwrap() - DIRECTORY_OFFSET;
        // serde_json reports the position just after the repeated key (or its colon).
        assert!(off > second && off <= second + 12, "{e}");
    }
}
