//! The source GGUF's `prism.hadamard.*` metadata against what spec/hadamard.json fixes (type,
//! expected value, allowed values, named tensors). The artifact carries only the sign table; the
//! rest of its rotation (version, transform, axis, grouping of the GDN V heads) is the metadata
//! of the file it was packed from, so an artifact from a file the spec rules out is not a valid
//! artifact even when its signs copy exactly. Part of the `signs` gate.
//!
//! A key the file does not carry is not a departure: no artifact byte depends on it (the
//! public reduced test model carries only block_size, transform and the sign table); such keys
//! are listed by `absent`. A name list may name tensors of the profile's model that a
//! reduced file does not hold.

use crate::gguf::{Gguf, Value, ValueType};
use crate::spec::{self, HadamardKey, KeyValue, ModelProfile};

/// Every way `g`'s `prism.hadamard.*` keys depart from spec/hadamard.json, one line each
/// naming the key (empty = conforms).
pub fn problems(g: &Gguf<'_>, profile: &ModelProfile) -> Vec<String> {
    spec::get()
        .hadamard
        .metadata
        .iter()
        .filter_map(|k| problem(g, profile, k).map(|p| format!("{}: {p}", k.key)))
        .collect()
}

/// The keys of spec/hadamard.json `g` does not carry, in table order.
pub fn absent(g: &Gguf<'_>) -> Vec<String> {
    spec::get()
        .hadamard
        .metadata
        .iter()
        .filter(|k| g.get(&k.key).is_none())
        .map(|k| k.key.clone())
        .collect()
}

fn problem(g: &Gguf<'_>, profile: &ModelProfile, k: &HadamardKey) -> Option<String> {
    let v = g.get(&k.key)?;
    let ty = v.value_type();
    if ty.name() != k.value_type {
        return Some(format!(
            "type {ty}, spec/hadamard.json says {}",
            k.value_type
        ));
    }
    if let (Some(a), Some(elem)) = (v.as_array(), &k.elem_type) {
        // sign_values accepts any numeric element type (its rule); the signs gate reads it.
        let any_numeric = k.key.ends_with(".sign_values");
        if !any_numeric && a.elem.name() != elem {
            return Some(format!(
                "elements are {}, spec/hadamard.json says {elem}",
                a.elem
            ));
        }
        if a.elem == ValueType::String {
            return absent_tensor(g, v, profile);
        }
    }
    if k.key.ends_with(".block_size") {
        // The table's 1024 is the full-size model's block; reduced profiles fold with their
        // own block, and the verifier's reference math uses the profile's.
        let want = profile.hadamard_block;
        return (v.as_u64_lossless() != Some(want)).then(|| {
            format!(
                "{}, profile {} folds with block {want}",
                shown(v),
                profile.name
            )
        });
    }
    if let Some(want) = &k.expected {
        if !equals(v, want) {
            return Some(format!("{}, spec/hadamard.json fixes {want}", shown(v)));
        }
    }
    if let Some(allowed) = &k.one_of {
        let s = v.as_str().unwrap_or_default();
        if !allowed.iter().any(|a| a == s) {
            return Some(format!("{s:?}, spec/hadamard.json allows {allowed:?}"));
        }
    }
    None
}

fn equals(v: &Value<'_>, want: &KeyValue) -> bool {
    match (want, v) {
        (KeyValue::Bool(w), Value::Bool(b)) => w == b,
        (KeyValue::Str(w), Value::String(s)) => w == s,
        (KeyValue::Int(w), _) => u64::try_from(*w).ok() == v.as_u64_lossless(),
        _ => false,
    }
}

fn shown(v: &Value<'_>) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Bool(b) => b.to_string(),
        _ => v
            .as_u64_lossless()
            .map_or_else(|| format!("{v:?}"), |n| n.to_string()),
    }
}

/// A tensor-name list naming a tensor neither the file nor the profile's model holds.
fn absent_tensor(g: &Gguf<'_>, v: &Value<'_>, profile: &ModelProfile) -> Option<String> {
    let model: std::collections::BTreeSet<String> = crate::mapping::gguf_tensors(profile)
        .into_iter()
        .map(|t| t.name)
        .collect();
    let names = match v.as_array()?.as_strs() {
        Ok(n) => n,
        Err(e) => return Some(format!("unreadable: {e}")),
    };
    let missing: Vec<&str> = names
        .into_iter()
        .filter(|n| g.tensor(n).is_none() && !model.contains(*n))
        .take(3)
        .collect();
    (!missing.is_empty()).then(|| format!("names tensors the file does not hold: {missing:?}"))
}
