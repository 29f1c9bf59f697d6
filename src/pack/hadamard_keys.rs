//! `prism.hadamard.*` checked against `spec/hadamard.json` and the model profile before
//! anything is packed: every key present with its table type, the fixed values (version,
//! transform, axis, gdn_v_grouped), the allowed sign modes, block size and widths equal to the
//! profile's, sign values ±1 and as many as the widths sum to, and the weight-name lists naming
//! the GGUF's own tensors (or, in a reduced GGUF, tensors of the profile's model it does not
//! hold). Every refusal is `pack.hadamard` with the key and its KV's offset.
//!
//! A key the GGUF lacks is checked only if the output needs it: the sign table
//! (`sign_widths`, `sign_values`) becomes the two sign objects, so lacking either is refused,
//! every such key named in one error; the others shape no output byte and are listed in the
//! run summary as absent (tools/pack.py reads nothing else either).

use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Gguf, Kv, Value, ValueType};
use crate::spec::{self, HadamardKey, KeyValue, ModelProfile, ProfileField};
use std::collections::BTreeSet;

/// The two arrays the artifact carries, read once the metadata passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HadamardSigns {
    /// `prism.hadamard.sign_widths`, in file order.
    pub widths: Vec<i32>,
    /// `prism.hadamard.sign_values` as ±1, concatenated in width order.
    pub values: Vec<i32>,
}

/// The element-type word of `spec/hadamard.json` for "any numeric type" (sign values).
const ANY_NUMERIC: &str = "numeric";

/// The keys whose values become output bytes (the two sign objects).
pub const NEEDED_KEYS: [&str; 2] = ["prism.hadamard.sign_widths", "prism.hadamard.sign_values"];

/// The checked sign arrays and the table keys the GGUF does not carry (not needed).
pub struct HadamardFacts {
    /// The sign arrays.
    pub signs: HadamardSigns,
    /// Keys of spec/hadamard.json the GGUF lacks and the output does not need.
    pub absent: Vec<String>,
}

fn refuse(kv: &Kv<'_>, detail: String) -> Error {
    Error::at(ErrorClass::PackHadamard, kv.value_offset, kv.key, detail)
}

/// The array value of `kv` (its type was checked against the table before this is asked).
fn array_of<'a>(kv: &Kv<'a>) -> Result<crate::gguf::ArrayView<'a>> {
    kv.value.as_array().ok_or_else(|| {
        refuse(
            kv,
            format!("is a {} value, not an array", kv.value.value_type()),
        )
    })
}

/// Checks every `prism.hadamard.*` key the GGUF carries and returns the sign arrays.
pub fn check_hadamard(gguf: &Gguf<'_>, profile: &ModelProfile) -> Result<HadamardFacts> {
    let table = &spec::get().hadamard.metadata;
    let (mut missing, mut absent) = (Vec::new(), Vec::new());
    for spec_key in table {
        let Some(kv) = gguf.kv(&spec_key.key) else {
            if NEEDED_KEYS.contains(&spec_key.key.as_str()) {
                missing.push(spec_key.key.clone());
            } else {
                absent.push(spec_key.key.clone());
            }
            continue;
        };
        check_type(kv, spec_key)?;
        check_fixed_value(kv, spec_key, profile)?;
    }
    if !missing.is_empty() {
        return Err(Error::new(
            ErrorClass::PackHadamard,
            missing.join(", "),
            format!(
                "absent, and the output needs {} (the sign objects are made of them; a \
                 groupwise-int template carries no sign table to take them from): is this a \
                 rotated PrismML GGUF?",
                if missing.len() == 1 { "it" } else { "them" }
            ),
        ));
    }
    // Every needed key was found above; one the table lacks is a defect of spec/hadamard.json.
    let kv = |suffix: &str| {
        let key = format!("prism.hadamard.{suffix}");
        gguf.kv(&key).ok_or_else(|| {
            Error::new(
                ErrorClass::InternalInvariant,
                key,
                "read by the packer but not a key of spec/hadamard.json",
            )
        })
    };
    let widths = sign_widths(kv("sign_widths")?, profile)?;
    let values = sign_values(kv("sign_values")?, &widths)?;
    let model: BTreeSet<String> = crate::mapping::gguf_tensors(profile)
        .into_iter()
        .map(|t| t.name)
        .collect();
    let inverse = match gguf.kv("prism.hadamard.inverse_weight_names") {
        Some(kv) => inverse_names(kv, gguf, &model)?,
        None => Vec::new(),
    };
    if let Some(kv) = gguf.kv("prism.hadamard.weight_names") {
        check_weight_names(kv, gguf, &inverse, &model)?;
    }
    Ok(HadamardFacts {
        signs: HadamardSigns { widths, values },
        absent,
    })
}

/// The KV has the table's GGUF type (and element type for arrays).
fn check_type(kv: &Kv<'_>, spec_key: &HadamardKey) -> Result<()> {
    let found = kv.value.value_type();
    if found.name() != spec_key.value_type {
        return Err(refuse(
            kv,
            format!(
                "is {found}; spec/hadamard.json requires {}",
                spec_key.value_type
            ),
        ));
    }
    let (Some(want_elem), Value::Array(arr)) = (&spec_key.elem_type, kv.value) else {
        return Ok(());
    };
    let numeric = !matches!(
        arr.elem,
        ValueType::Bool | ValueType::String | ValueType::Array
    );
    let fits = if want_elem == ANY_NUMERIC {
        numeric
    } else {
        arr.elem.name() == want_elem
    };
    if !fits {
        return Err(refuse(
            kv,
            format!(
                "array elements are {}; spec/hadamard.json requires {want_elem}",
                arr.elem
            ),
        ));
    }
    Ok(())
}

/// `expected`, `one_of` and the `hadamard_block` profile field.
fn check_fixed_value(kv: &Kv<'_>, spec_key: &HadamardKey, profile: &ModelProfile) -> Result<()> {
    if let Some(want) = &spec_key.expected {
        let same = match (want, kv.value) {
            (KeyValue::Bool(b), Value::Bool(v)) => *b == v,
            (KeyValue::Str(s), Value::String(v)) => s == v,
            (KeyValue::Int(i), v) => v
                .as_u64_lossless()
                .is_some_and(|v| i64::try_from(v).is_ok_and(|v| v == *i)),
            _ => false,
        };
        if !same {
            return Err(refuse(
                kv,
                format!(
                    "is {}; spec/hadamard.json fixes it at {want}",
                    shown(&kv.value)
                ),
            ));
        }
    }
    if let Some(allowed) = &spec_key.one_of {
        if !kv
            .value
            .as_str()
            .is_some_and(|v| allowed.iter().any(|a| a == v))
        {
            return Err(refuse(
                kv,
                format!(
                    "is {}; spec/hadamard.json allows {}",
                    shown(&kv.value),
                    allowed.join(" or ")
                ),
            ));
        }
    }
    if spec_key.profile_field == Some(ProfileField::HadamardBlock)
        && kv.value.as_u64_lossless() != Some(profile.hadamard_block)
    {
        return Err(refuse(
            kv,
            format!(
                "is {}; profile {} has hadamard_block {}",
                shown(&kv.value),
                profile.name,
                profile.hadamard_block
            ),
        ));
    }
    Ok(())
}

/// A metadata value in a message: numbers and strings as such, anything else by type.
fn shown(v: &Value<'_>) -> String {
    match v {
        Value::String(s) => format!("'{}'", s.escape_debug()),
        Value::Bool(b) => b.to_string(),
        other => other
            .as_u64_lossless()
            .map(|x| x.to_string())
            .unwrap_or_else(|| format!("a {} value", other.value_type())),
    }
}

/// `sign_widths` equal to the profile's (each a multiple of its block size).
fn sign_widths(kv: &Kv<'_>, profile: &ModelProfile) -> Result<Vec<i32>> {
    let arr = array_of(kv)?;
    let widths = arr
        .as_vec::<i32>()
        .map_err(|e| refuse(kv, e.detail().to_string()))?;
    let want: Vec<i64> = profile.sign_widths.iter().map(|&w| w as i64).collect();
    let got: Vec<i64> = widths.iter().map(|&w| w as i64).collect();
    if got != want {
        return Err(refuse(
            kv,
            format!(
                "widths {got:?}; profile {} has sign_widths {want:?} (hidden, v_rows, ffn)",
                profile.name
            ),
        ));
    }
    Ok(widths)
}

/// `sign_values`: the count is compared with the widths before a single element is read
/// (a header may declare 10^9 of them), then every value must be exactly ±1.
fn sign_values(kv: &Kv<'_>, widths: &[i32]) -> Result<Vec<i32>> {
    let arr = array_of(kv)?;
    let total: u64 = widths.iter().map(|&w| w as u64).sum();
    if arr.count != total {
        return Err(refuse(
            kv,
            format!(
                "{} values but sign_widths {widths:?} sum to {total}",
                arr.count
            ),
        ));
    }
    planted!("pack_sign_values_by_sign", {
        if let Ok(v) = arr.as_i32s() {
            return Ok(v.iter().map(|&x| if x < 0 { -1 } else { 1 }).collect());
        }
        if let Ok(v) = arr.as_f32s() {
            return Ok(v.iter().map(|&x| if x < 0.0 { -1 } else { 1 }).collect());
        }
    });
    super::source::sign_values_of(kv.key, arr)
}

/// `inverse_weight_names` equal to spec/mapping.json `hadamard_inverse`, each a tensor here or
/// (a reduced GGUF) a tensor of the profile's model.
fn inverse_names<'a>(
    kv: &Kv<'a>,
    gguf: &Gguf<'_>,
    model: &BTreeSet<String>,
) -> Result<Vec<&'a str>> {
    let names = array_of(kv)?
        .as_strs()
        .map_err(|e| refuse(kv, e.detail().to_string()))?;
    let want = &spec::mapping().hadamard_inverse;
    if names.len() != want.len() || names.iter().zip(want).any(|(a, b)| a != b) {
        return Err(refuse(
            kv,
            format!("names {names:?}; spec/mapping.json hadamard_inverse is {want:?}"),
        ));
    }
    if let Some(absent) = names
        .iter()
        .find(|n| gguf.tensor(n).is_none() && !model.contains(**n))
    {
        return Err(refuse(
            kv,
            format!(
                "names '{}', which is not a tensor of this GGUF",
                absent.escape_debug()
            ),
        ));
    }
    Ok(names)
}

/// `weight_names`: each a ternary tensor of the GGUF (or, a reduced GGUF, of the profile's
/// model), once, none inverse-rotated.
fn check_weight_names(
    kv: &Kv<'_>,
    gguf: &Gguf<'_>,
    inverse: &[&str],
    model: &BTreeSet<String>,
) -> Result<()> {
    let names = array_of(kv)?
        .strs()
        .map_err(|e| refuse(kv, e.detail().to_string()))?;
    let mut seen = BTreeSet::new();
    for (i, name) in names.enumerate() {
        let why = match gguf.tensor(name) {
            None if !model.contains(name) => Some("is not a tensor of this GGUF"),
            None if inverse.contains(&name) => {
                Some("is inverse-rotated (inverse_weight_names), not folded")
            }
            None if !seen.insert(name) => Some("is listed twice"),
            None => None,
            Some(t) if t.ternary_type().is_none() => Some("is not a ternary tensor"),
            Some(_) if inverse.contains(&name) => {
                Some("is inverse-rotated (inverse_weight_names), not folded")
            }
            Some(_) if !seen.insert(name) => Some("is listed twice"),
            Some(_) => None,
        };
        if let Some(why) = why {
            return Err(Error::at(
                ErrorClass::PackHadamard,
                kv.value_offset,
                format!("{}[{i}]", kv.key),
                format!("'{}' {why}", name.escape_debug()),
            ));
        }
    }
    Ok(())
}
