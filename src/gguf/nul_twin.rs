//! The NUL-twin rule (layer `recommended`, strict mode): two keys, or two tensor names, that
//! differ only at or after a NUL byte. The bytes differ, so the duplicate checks pass, but
//! mainline `gguf.cpp` (ggml 0.25.3) hands names out as C strings — `ggml_set_name(…,
//! name.c_str())` (`ggml/src/gguf.cpp:662`) and `gguf_get_key` returning `c_str()`
//! (`:1074-1076`) — so a consumer of mainline sees two tensors named `a` for `a` and `a\0`.
//! Mainline itself accepts such files (run on the pinned build, `conformance/INTEROP.md`); this
//! suite recommends refusing them so every reader sees the same names.

use super::name_hash::NameMap;
use crate::error::{enforced, Error, ErrorClass as C, Result};

/// What mainline's API hands out for a key or tensor `name`: the bytes before the first NUL.
pub fn c_string_form(name: &str) -> &str {
    name.split('\0').next().unwrap_or(name)
}

/// The first `(earlier, later)` index pair of distinct `names` with equal C-string forms.
/// Names are already unique, so a pair needs a NUL in at least one of them; files without any
/// NUL (every ordinary file) cost one scan and no allocation.
fn first_twin(names: &[&str]) -> Option<(usize, usize)> {
    if !names.iter().any(|n| n.contains('\0')) {
        return None;
    }
    let mut seen = NameMap::with_capacity_and_hasher(names.len(), Default::default());
    for (i, n) in names.iter().enumerate() {
        if let Some(&j) = seen.get(c_string_form(n)) {
            return Some((j, i));
        }
        seen.insert(c_string_form(n), i);
    }
    None
}

/// What kind of name is checked, for the error's field and text.
#[derive(Clone, Copy)]
pub(super) enum NameKind {
    /// Metadata keys (`kv[i].key`).
    Key,
    /// Tensor names (`tensor_infos[i].name`).
    Tensor,
}

/// `gguf.name_nul_twin` for the first pair of NUL twins among `names` (file order; `offsets`
/// are the records' absolute offsets).
pub(super) fn check_nul_twins(names: &[&str], offsets: &[u64], kind: NameKind) -> Result<()> {
    let Some((j, i)) = first_twin(names).filter(|_| enforced(C::GgufNameNulTwin)) else {
        return Ok(());
    };
    let (list, what, field) = match kind {
        NameKind::Key => ("kv", "key", format!("kv[{i}].key")),
        NameKind::Tensor => (
            "tensor_infos",
            "tensor name",
            format!("tensor_infos[{i}].name"),
        ),
    };
    Err(Error::at(
        C::GgufNameNulTwin,
        offsets[i],
        field,
        format!(
            "{what} \"{}\" and {list}[{j}] \"{}\" are the same C string \"{}\" up to a NUL byte; \
             mainline gguf.cpp hands names out as C strings, so its consumers would see the two as one",
            names[i].escape_debug(),
            names[j].escape_debug(),
            c_string_form(names[i]).escape_debug()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twins_are_found_in_file_order() {
        assert_eq!(first_twin(&["a", "b", "a\0"]), Some((0, 2)));
        assert_eq!(first_twin(&["x.k\0y", "x.k\0z"]), Some((0, 1)));
        // NUL elsewhere, no collision.
        assert_eq!(first_twin(&["a\0", "b\0x", "c"]), None);
        assert_eq!(first_twin(&["a", "ab"]), None);
    }

    #[test]
    fn the_error_names_the_later_record() {
        let e = check_nul_twins(&["a", "a\0"], &[40, 90], NameKind::Tensor).unwrap_err();
        assert_eq!(e.class(), C::GgufNameNulTwin);
        assert_eq!(e.offset(), Some(90));
        assert_eq!(e.field(), "tensor_infos[1].name");
        assert!(e.detail().contains(r#""a\0""#), "{e}");
        assert!(check_nul_twins(&["a", "b"], &[1, 2], NameKind::Key).is_ok());
    }
}
