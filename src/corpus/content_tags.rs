//! Feature tags derived from what a case file holds, not from what its family says (issue #35):
//! the `format:<F>` of every `.ninfer` tensor and the `ggml_type:<id>` of every GGUF tensor
//! (with `ggml_type:42-g128` / `ggml_type:42-g64` beside `ggml_type:42`, as resolved per file).
//! A reader that declares a format or type unsupported then skips exactly the cases whose
//! accepted observation needs it (an accepted file's observation covers every object and tensor
//! it holds).
//!
//! F32 (`ggml_type:0`) is deliberately not derived: it is the type every GGUF reader has (token
//! embeddings and norms are F32 in every model), nearly every GGUF case holds an F32 tensor,
//! and tagging them all would move layout and metadata cases into the interop matrix's
//! `type F32` group while letting no real reader skip anything it lacks. A family may still
//! declare `ggml_type:0` on the one case about F32 (`gguf/y_type_f32`). Every other type is
//! one a reader may lack (F16, BF16, the quantized, ternary and legacy types), so it is derived.
//!
//! Only cases a reader may accept (`y_`, `i_`) are tagged from content: an `n_` case is refused
//! at its one violation, usually long before any object is decoded, so it keeps the tags its
//! family declares (each of which must name a format or type the file holds: [`check`]).

use std::collections::BTreeSet;

/// The tag prefix derived from the `.ninfer` objects of accepted cases (and only from content).
pub const DERIVED_PREFIX: &str = "format:";

/// The tag prefix derived from the GGUF tensors of accepted cases (all but [`UNDERIVED_TYPE`]).
pub const DERIVED_TYPE_PREFIX: &str = "ggml_type:";

/// The one GGUF type tag never derived: F32, which every reader has (module docs).
pub const UNDERIVED_TYPE: &str = "ggml_type:0";

/// Whether `tag` is one this module derives.
pub fn is_derived(tag: &str) -> bool {
    tag.starts_with(DERIVED_PREFIX)
        || (tag.starts_with(DERIVED_TYPE_PREFIX) && tag != UNDERIVED_TYPE)
}

/// The content tags of a case file; `None` when it is neither a `.ninfer` container nor a GGUF
/// file (codec vectors, npy inputs), a `.ninfer` one whose directory is not even JSON, or a GGUF
/// one the reference cannot parse (an `n_` case: its tags are then not checked).
pub fn derive(bytes: &[u8]) -> Option<BTreeSet<String>> {
    if bytes.starts_with(b"GGUF") {
        return gguf_types(bytes);
    }
    if !bytes.starts_with(b"NINFER") {
        return None;
    }
    match crate::ninfer::reader::Artifact::parse(bytes) {
        Ok(a) => Some(
            a.directory
                .objects
                .iter()
                .filter_map(|o| o.format_layout())
                .map(|(f, _)| format!("format:{f}"))
                .collect(),
        ),
        Err(_) => raw_formats(bytes),
    }
}

/// The `ggml_type:` tags of a GGUF file's tensors (under the spec's rules, id 42 resolved per
/// file), less F32; `None` when the reference refuses the file.
fn gguf_types(bytes: &[u8]) -> Option<BTreeSet<String>> {
    use crate::gguf;
    // A big-endian file is read through its little-endian transcoding, as the reference does.
    let swapped = if gguf::is_big_endian(bytes) {
        Some(gguf::swap_byte_order(bytes, gguf::ByteOrder::Big).ok()?)
    } else {
        None
    };
    let g = gguf::parse(swapped.as_deref().unwrap_or(bytes), gguf::Mode::Spec).ok()?;
    let mut out = BTreeSet::new();
    for t in &g.tensors {
        let tag = format!("{DERIVED_TYPE_PREFIX}{}", t.type_id);
        if tag == UNDERIVED_TYPE {
            continue;
        }
        if t.type_id == 42 {
            // Two meanings (PROTOCOL.md §5.3): the resolved block size names which one.
            out.insert(format!("{tag}-g{}", t.ggml.block_elems));
        }
        out.insert(tag);
    }
    Some(out)
}

/// The `format` members of a `.ninfer` directory the reference refuses (an `n_` case): the
/// JSON after the 16-byte prefix (magic, u64 LE length), read without the format's rules;
/// `None` when even that is not JSON.
fn raw_formats(bytes: &[u8]) -> Option<BTreeSet<String>> {
    let len = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    let end = 16usize.checked_add(usize::try_from(len).ok()?)?;
    let v: serde_json::Value = serde_json::from_slice(bytes.get(16..end)?).ok()?;
    Some(
        v.get("objects")?
            .as_array()?
            .iter()
            .filter_map(|o| o.get("format")?.as_str())
            .map(|f| format!("format:{f}"))
            .collect(),
    )
}

/// The features of an accepted case: its declared tags, less derived-kind tags the file does
/// not hold, plus the derived tags it lacks (declared order kept, additions appended sorted).
pub fn retag(declared: &[String], bytes: &[u8]) -> Vec<String> {
    let Some(derived) = derive(bytes) else {
        return declared.to_vec();
    };
    let mut out: Vec<String> = declared
        .iter()
        .filter(|t| !is_derived(t) || derived.contains(*t))
        .cloned()
        .collect();
    for t in derived {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The disagreements between a case's features and its content: for an accepted case the
/// derived tags must equal the content's exactly; for an `n_` case every derived-kind tag it
/// carries must name something the file holds (when the file can be read at all).
#[cfg(any(test, feature = "internals"))]
pub fn check(id: &str, accepted: bool, features: &[String], bytes: &[u8]) -> Vec<String> {
    let Some(derived) = derive(bytes) else {
        return Vec::new();
    };
    let have: BTreeSet<String> = features.iter().filter(|t| is_derived(t)).cloned().collect();
    let mut out = Vec::new();
    for t in have.difference(&derived) {
        out.push(format!("{id}: tagged {t}, which the file does not hold"));
    }
    if accepted {
        for t in derived.difference(&have) {
            out.push(format!("{id}: holds {t} but is not tagged with it"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_format_tags_are_derived() {
        assert!(is_derived("format:NVFP4"));
        assert!(is_derived("ggml_type:142"));
        assert!(is_derived("ggml_type:42-g64"));
        assert!(!is_derived("ggml_type:0"));
        assert!(!is_derived("kind:ninfer"));
        assert!(derive(b"GGUF\x03\0\0\0 truncated").is_none());
        assert!(derive(b"not a container").is_none());
    }
}
