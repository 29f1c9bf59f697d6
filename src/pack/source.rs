//! The packer's view of the source GGUF: which profile it is, its ternary type, the
//! `prism.hadamard.*` metadata, and float access to small tensors.

use crate::codec::Codec;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Gguf, TensorInfo};
use crate::spec::{self, ModelProfile};

/// The layer indices a GGUF holds (any tensor named `blk.N.*`), ascending.
pub fn held_layers(g: &Gguf<'_>) -> Vec<u64> {
    let mut out: Vec<u64> = g
        .tensors
        .iter()
        .filter_map(|t| t.name.strip_prefix("blk.")?.split('.').next()?.parse().ok())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The profile and the layers of a full or reduced GGUF. `named` (`--profile`) picks the profile
/// explicitly; otherwise the unique profile matching hidden, vocab and the layer indices is used.
/// A reduced GGUF may carry the full model's block_count, its own layer count, or none.
/// Refused (`pack.profile`): an unknown name, hidden/vocab not the profile's, a layer index
/// beyond the profile, a block_count that is neither, no layer at all, or no/ambiguous match.
pub fn resolve_profile(g: &Gguf<'_>, named: Option<&str>) -> Result<(ModelProfile, Vec<u64>)> {
    let arch = g.architecture().unwrap_or("qwen35");
    let blocks = g.get_uint(&format!("{arch}.block_count")).ok();
    let hidden = g.get_uint(&format!("{arch}.embedding_length")).ok();
    let vocab = g.tensor("token_embd.weight").map(|t| t.ne[1]);
    let held = held_layers(g);
    let err = |field: &str, d: String| Error::new(ErrorClass::PackProfile, field, d);
    let check = |p: &ModelProfile| -> std::result::Result<(), (String, String)> {
        if hidden.is_some_and(|h| h != p.hidden) {
            return Err((
                format!("{arch}.embedding_length"),
                format!(
                    "embedding_length={hidden:?}, profile {} has hidden={}",
                    p.name, p.hidden
                ),
            ));
        }
        if vocab != Some(p.vocab) {
            return Err((
                "token_embd.weight".into(),
                format!("vocab={vocab:?}, profile {} has vocab={}", p.name, p.vocab),
            ));
        }
        if let Some(&l) = held.iter().find(|&&l| l >= p.n_layers) {
            return Err((
                format!("blk.{l}"),
                format!(
                    "layer {l} is beyond profile {}'s {} layers",
                    p.name, p.n_layers
                ),
            ));
        }
        if let Some(b) = blocks {
            if b != p.n_layers && b != held.len() as u64 {
                return Err((format!("{arch}.block_count"), format!("block_count={b} is neither profile {}'s {} layers nor the {} layer(s) the file holds", p.name, p.n_layers, held.len())));
            }
        }
        if held.is_empty() {
            return Err((
                "tensors".into(),
                "the GGUF holds no blk.N.* tensor (no layer)".into(),
            ));
        }
        Ok(())
    };
    if let Some(name) = named {
        let p = spec::profile(name).ok_or_else(|| {
            let known: Vec<&str> = spec::PROFILES.iter().map(|(n, _)| *n).collect();
            err(
                "--profile",
                format!("unknown profile '{name}' (known: {})", known.join(", ")),
            )
        })?;
        check(&p).map_err(|(f, d)| err(&f, d))?;
        return Ok((p, held));
    }
    let mut fits = Vec::new();
    for (name, _) in spec::PROFILES {
        let p = spec::profile(name).expect("compiled-in profile");
        if check(&p).is_ok() {
            fits.push(p);
        }
    }
    match fits.len() {
        1 => Ok((fits.remove(0), held)),
        0 => Err(err(
            "qwen35.block_count / embedding_length / token_embd.weight",
            format!("no profile in spec/models has block_count={blocks:?} hidden={hidden:?} vocab={vocab:?} with layers {held:?}; add one, or name it with --profile"),
        )),
        _ => Err(err(
            "--profile",
            format!("several profiles fit ({}); name one with --profile", fits.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")),
        )),
    }
}

/// The profile whose dimensions the GGUF has (by qwen35 hparams and the embedding shape).
pub fn detect_profile(g: &Gguf<'_>) -> Result<ModelProfile> {
    let arch = g.architecture().unwrap_or("qwen35");
    let blocks = g.get_uint(&format!("{arch}.block_count")).ok();
    let hidden = g.get_uint(&format!("{arch}.embedding_length")).ok();
    let vocab = g.tensor("token_embd.weight").map(|t| t.ne[1]);
    for (name, _) in spec::PROFILES {
        let p = spec::profile(name).expect("compiled-in profile");
        if Some(p.n_layers) == blocks && Some(p.hidden) == hidden && Some(p.vocab) == vocab {
            return Ok(p);
        }
    }
    Err(Error::new(
        ErrorClass::PackProfile,
        "qwen35.block_count / embedding_length / token_embd.weight",
        format!("no profile in spec/models has block_count={blocks:?} hidden={hidden:?} vocab={vocab:?}; add one"),
    ))
}

/// The single ternary ggml type of the file (142 or 143), or a mixed/absent error.
pub fn ternary_type(g: &Gguf<'_>) -> Result<&'static crate::spec::NumericFormat> {
    let mut found: Option<&str> = None;
    for t in &g.tensors {
        let Some(f) = spec::get().ternary_format_for_ggml(&t.ggml.name) else {
            continue;
        };
        match found {
            None => found = Some(&f.name),
            Some(prev) if prev != f.name => {
                return Err(Error::at(
                    ErrorClass::PackMixedTernary,
                    t.info_offset,
                    t.name,
                    format!("{} is {} but earlier ternary tensors are {prev}: one artifact holds one ternary format", t.name, t.ggml.name),
                ))
            }
            _ => {}
        }
    }
    let name = found.ok_or_else(|| {
        Error::new(
            ErrorClass::PackMixedTernary,
            "tensors",
            "no PQ2_0 (142) or PTQ1_0 (143) tensor in the GGUF",
        )
    })?;
    Ok(spec::get().format(name).expect("spec format"))
}

/// Decodes a small non-ternary tensor to f32 (F32, F16, BF16).
pub fn floats(g: &Gguf<'_>, t: &TensorInfo<'_>) -> Result<Vec<f32>> {
    let c = Codec::for_ggml_type_checked(t.ggml)?;
    c.decode_to_vec(g.tensor_data(t))
}

/// `prism.hadamard.sign_values` as i32, whatever numeric element type the file declares (writers
/// emit INT32 from Python ints, FLOAT32 from float tensors; spec/hadamard.json). Every element
/// must be exactly ±1; anything else (2, 0.5, NaN) is refused with its index.
pub fn sign_values(g: &Gguf<'_>, key: &str) -> Result<Vec<i32>> {
    use crate::gguf::ValueType as T;
    let bad = |field: String, d: String| Error::new(ErrorClass::PackHadamard, field, d);
    let arr = g.get_array(key).map_err(|e| bad(key.into(), e.detail))?;
    let as_f64: Vec<f64> = match arr.elem {
        T::I8 => arr
            .as_vec::<i8>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U8 => arr
            .as_vec::<u8>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::I16 => arr
            .as_vec::<i16>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U16 => arr
            .as_vec::<u16>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::I32 => arr
            .as_vec::<i32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::U32 => arr
            .as_vec::<u32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        // 64-bit ints: any value that is not ±1 is refused below, so the lossy cast is harmless
        // as long as it cannot turn a large value into ±1 (it cannot: |x| >= 2 stays >= 2).
        T::I64 => arr
            .as_vec::<i64>()
            .map(|v| v.into_iter().map(|x| x as f64).collect()),
        T::U64 => arr
            .as_vec::<u64>()
            .map(|v| v.into_iter().map(|x| x as f64).collect()),
        T::F32 => arr
            .as_vec::<f32>()
            .map(|v| v.into_iter().map(f64::from).collect()),
        T::F64 => arr.as_vec::<f64>(),
        other => {
            return Err(bad(
                key.into(),
                format!("elements are {other}; sign values must be numeric (±1)"),
            ))
        }
    }
    .map_err(|e| bad(key.into(), e.detail))?;
    as_f64
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v == 1.0 || v == -1.0 {
                Ok(v as i32)
            } else {
                Err(bad(format!("{key}[{i}]"), format!("value {v} is not ±1")))
            }
        })
        .collect()
}

/// `prism.hadamard.*` read and checked: (widths, sign values).
pub fn hadamard_signs(g: &Gguf<'_>) -> Result<(Vec<i32>, Vec<i32>)> {
    let key = |k: &str| format!("prism.hadamard.{k}");
    let bad = |field: String, d: String| Error::new(ErrorClass::PackHadamard, field, d);
    let widths = g
        .get_array_as::<i32>(&key("sign_widths"))
        .map_err(|e| bad(key("sign_widths"), e.detail))?;
    if widths.is_empty() || widths.iter().any(|&w| w <= 0) {
        return Err(bad(
            key("sign_widths"),
            format!("widths must be positive, got {widths:?}"),
        ));
    }
    let total: i64 = widths.iter().map(|&w| w as i64).sum();
    // The declared count is compared before any element is copied: a 10^9-entry array in a
    // small sparse file is refused here, not allocated.
    let declared = g
        .get_array(&key("sign_values"))
        .map_err(|e| bad(key("sign_values"), e.detail))?
        .count;
    if total as u64 != declared {
        return Err(bad(
            key("sign_values"),
            format!("{declared} values but sign_widths {widths:?} sum to {total}"),
        ));
    }
    let values = sign_values(g, &key("sign_values"))?;
    if total != values.len() as i64 {
        return Err(bad(
            key("sign_values"),
            format!(
                "{} values but sign_widths {widths:?} sum to {total}",
                values.len()
            ),
        ));
    }
    if let Some(i) = values.iter().position(|&v| v != 1 && v != -1) {
        return Err(bad(
            format!("{}[{i}]", key("sign_values")),
            format!("value {} is not ±1", values[i]),
        ));
    }
    Ok((widths, values))
}
