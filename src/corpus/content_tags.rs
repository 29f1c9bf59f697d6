//! Feature tags derived from what a case file holds, not from what its family says (issue #35):
//! the `format:<F>` of every `.ninfer` tensor. (GGUF `ggml_type:<N>` tags are still the
//! family's: deriving them would also tag the F32 tensors every GGUF case holds, which moves
//! cases between the interop matrix's type groups; see the follow-up.)
//! A reader that declares a format unsupported then skips exactly the cases whose accepted
//! observation needs it (an accepted file's observation covers every object it holds).
//!
//! Only cases a reader may accept (`y_`, `i_`) are tagged from content: an `n_` case is refused
//! at its one violation, usually long before any object is decoded, so it keeps the tags its
//! family declares (each of which must name a format the file holds: [`check`]).

use std::collections::BTreeSet;

/// The tag prefix derived from content on accepted cases (and only from content).
pub const DERIVED_PREFIX: &str = "format:";

/// Whether `tag` is one this module derives.
pub fn is_derived(tag: &str) -> bool {
    tag.starts_with(DERIVED_PREFIX)
}

/// The content tags of a case file; `None` when it is no `.ninfer` container (GGUF files,
/// codec vectors, npy inputs) or one whose directory is not even JSON.
pub fn derive(bytes: &[u8]) -> Option<BTreeSet<String>> {
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
        assert!(!is_derived("ggml_type:142"));
        assert!(!is_derived("kind:ninfer"));
        assert!(derive(b"not a container").is_none());
    }
}
