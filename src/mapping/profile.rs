//! Which model profile (`spec/models/*.json`) a GGUF is, and whether its hyper-parameters are
//! that profile's. Used by the packer, unpack and the verifier alike, so it lives here and not
//! in any of them.

use crate::codec::TernaryType;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Gguf, Kv};
use crate::spec::{self, ModelProfile};

/// The layer indices a GGUF holds (any tensor named `blk.N.*`), ascending.
pub fn held_layers(gguf: &Gguf<'_>) -> Vec<u64> {
    let mut out: Vec<u64> = gguf
        .tensors
        .iter()
        .filter_map(|t| t.name.strip_prefix("blk.")?.split('.').next()?.parse().ok())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// An optional number in a message: the value, or `absent`.
fn shown(v: Option<u64>) -> String {
    v.map_or_else(|| "absent".to_string(), |x| x.to_string())
}

/// The facts of a GGUF that pick its profile.
struct Identity {
    arch: String,
    blocks: Option<u64>,
    /// The hidden width and where it was read: the `embedding_length` key, or (a GGUF with
    /// only the metadata tools/pack.py reads) the width of a norm tensor.
    hidden: Option<(u64, String)>,
    vocab: Option<u64>,
    held: Vec<u64>,
}

impl Identity {
    fn of(gguf: &Gguf<'_>) -> Identity {
        let arch = gguf.architecture().unwrap_or("qwen35").to_string();
        let held = held_layers(gguf);
        let key = format!("{arch}.embedding_length");
        let hidden = match gguf.get_uint(&key) {
            Ok(h) => Some((h, key)),
            Err(_) => hidden_from_shapes(gguf, &held),
        };
        Identity {
            blocks: gguf.get_uint(&format!("{arch}.block_count")).ok(),
            hidden,
            vocab: gguf.tensor("token_embd.weight").map(|t| t.ne[1]),
            held,
            arch,
        }
    }

    /// Whether `p` fits: `Err((field, why))` names the first mismatch.
    fn fits(&self, p: &ModelProfile) -> std::result::Result<(), (String, String)> {
        let arch = &self.arch;
        if let Some((h, field)) = self.hidden.as_ref().filter(|(h, _)| *h != p.hidden) {
            let what = if field.ends_with(".embedding_length") {
                "embedding_length"
            } else {
                "hidden width (ne[0])"
            };
            return Err((
                field.clone(),
                format!("{what}={h}, profile {} has hidden={}", p.name, p.hidden),
            ));
        }
        // A reduced GGUF may hold no vocabulary tensor; one it holds must be the profile's.
        if self.vocab.is_some_and(|v| v != p.vocab) {
            return Err((
                "token_embd.weight".into(),
                format!(
                    "vocab={}, profile {} has vocab={}",
                    shown(self.vocab),
                    p.name,
                    p.vocab
                ),
            ));
        }
        if let Some(&l) = self.held.iter().find(|&&l| l >= p.n_layers) {
            return Err((
                format!("blk.{l}"),
                format!(
                    "layer {l} is beyond profile {}'s {} layers",
                    p.name, p.n_layers
                ),
            ));
        }
        if let Some(b) = self.blocks {
            if b != p.n_layers && b != self.held.len() as u64 {
                return Err((
                    format!("{arch}.block_count"),
                    format!(
                        "block_count={b} is neither profile {}'s {} layers nor the {} layer(s) the file holds",
                        p.name,
                        p.n_layers,
                        self.held.len()
                    ),
                ));
            }
        }
        if self.held.is_empty() {
            return Err((
                "tensors".into(),
                "the GGUF holds no blk.N.* tensor (no layer)".into(),
            ));
        }
        Ok(())
    }
}

/// The hidden width of a GGUF without `embedding_length`: ne[0] of the first held layer's
/// `attn_norm` (every layer has one), else of `output_norm`.
fn hidden_from_shapes(gguf: &Gguf<'_>, held: &[u64]) -> Option<(u64, String)> {
    let names = held
        .first()
        .map(|l| format!("blk.{l}.attn_norm.weight"))
        .into_iter()
        .chain(["output_norm.weight".to_string()]);
    for name in names {
        if let Some(t) = gguf.tensor(&name) {
            return Some((t.ne[0], name));
        }
    }
    None
}

/// Whether every tensor of `gguf` that profile `p` names (for the held layers and the globals)
/// has the profile's shape: `Err((tensor, why))` names the first that does not.
fn shapes_fit(
    gguf: &Gguf<'_>,
    p: &ModelProfile,
    held: &[u64],
) -> std::result::Result<(), (String, String)> {
    for want in super::gguf_tensors_in(p, held) {
        if let Some(t) = gguf.tensor(&want.name) {
            if t.dims() != want.ne.as_slice() {
                return Err((
                    want.name.clone(),
                    format!(
                        "{} has ne={:?}; profile {} has ne={:?}",
                        want.name,
                        t.dims(),
                        p.name,
                        want.ne
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn profile_err(field: &str, detail: String) -> Error {
    Error::new(ErrorClass::PackProfile, field, detail)
}

/// A `pack.profile` error about `field` of `gguf`, at the byte where the file holds it: a
/// metadata key's value, a tensor's info record, the first info record of layer `blk.N`, or the
/// start of the tensor-info table for `tensors`. A field the file does not hold (an absent key,
/// `--profile`) gets no offset rather than an invented one.
fn profile_err_in(gguf: &Gguf<'_>, field: &str, detail: String) -> Error {
    let layer = |prefix: &str| {
        let prefix = format!("{prefix}.");
        gguf.tensors
            .iter()
            .find(|t| t.name.starts_with(&prefix))
            .map(|t| t.info_offset)
    };
    let at = gguf
        .kv(field)
        .map(|kv| kv.value_offset)
        .or_else(|| gguf.tensor(field).map(|t| t.info_offset))
        .or_else(|| field.starts_with("blk.").then(|| layer(field)).flatten())
        .or_else(|| (field == "tensors").then_some(gguf.tensor_info_offset));
    match at {
        Some(off) => Error::at(ErrorClass::PackProfile, off, field, detail),
        None => profile_err(field, detail),
    }
}

/// The profile and the layers of a full or reduced GGUF. `named` (`--profile`) picks the profile
/// explicitly; otherwise the unique profile matching hidden, vocab and the layer indices is used,
/// and when several do (a reduced GGUF without vocabulary or `embedding_length`), the one whose
/// tensor shapes the GGUF's tensors have. Hidden comes from `embedding_length` or, absent, from
/// a norm tensor's width; vocab from `token_embd.weight` when the GGUF holds it.
/// A reduced GGUF may carry the full model's block_count, its own layer count, or none. Then
/// every hyper-parameter the profile fixes that the GGUF carries is compared ([`check_hparams`]).
/// Refused (`pack.profile`): an unknown name, hidden/vocab not the profile's, a layer index
/// beyond the profile, a block_count that is neither, no layer at all, no/ambiguous match, or
/// a fixed hyper-parameter absent, mistyped or different.
pub fn resolve_profile(gguf: &Gguf<'_>, named: Option<&str>) -> Result<(ModelProfile, Vec<u64>)> {
    let id = Identity::of(gguf);
    let profile = match named {
        Some(name) => {
            let p = spec::profile(name).ok_or_else(|| {
                let known: Vec<&str> = spec::PROFILES.iter().map(|(n, _)| *n).collect();
                profile_err(
                    "--profile",
                    format!("unknown profile '{name}' (known: {})", known.join(", ")),
                )
            })?;
            id.fits(&p).map_err(|(f, d)| profile_err_in(gguf, &f, d))?;
            p
        }
        None => unique_fit(gguf, &id)?,
    };
    check_hparams(gguf, &profile)?;
    Ok((profile, id.held))
}

fn unique_fit(gguf: &Gguf<'_>, id: &Identity) -> Result<ModelProfile> {
    // Every PROFILES name resolves (`spec::profile` looks the same list up).
    let mut fits: Vec<ModelProfile> = spec::PROFILES
        .iter()
        .filter_map(|(name, _)| spec::profile(name))
        .filter(|p| id.fits(p).is_ok())
        .collect();
    if fits.len() > 1 {
        fits.retain(|p| shapes_fit(gguf, p, &id.held).is_ok());
    }
    match fits.len() {
        1 => Ok(fits.remove(0)),
        // No single place holds the mismatch: point at the block count the file declares.
        0 => Err(profile_err_in(
            gguf,
            &format!("{}.block_count", id.arch),
            format!(
                "no profile in spec/models has block_count={} hidden={} vocab={} with layers {:?}; add one, or name it with --profile",
                shown(id.blocks),
                shown(id.hidden.as_ref().map(|h| h.0)),
                shown(id.vocab),
                id.held
            ),
        )),
        _ => Err(profile_err(
            "--profile",
            format!(
                "several profiles fit ({}); name one with --profile",
                fits.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// Every `{arch}.<key>` of `spec/mapping.json` `profile_hparams` the GGUF carries is of its
/// type and equal to the profile's dimension; else `pack.profile` with the key, expected, found
/// and the KV's byte offset. An absent key is not refused: no output byte depends on it (the
/// profile and the template carry the geometry, as for tools/pack.py, which reads none of
/// them); [`absent_hparams`] lists them for the run summary.
pub fn check_hparams(gguf: &Gguf<'_>, profile: &ModelProfile) -> Result<()> {
    let arch = gguf.architecture().unwrap_or(&profile.arch);
    for hp in &spec::mapping().profile_hparams {
        let key = format!("{arch}.{}", hp.key);
        let Some(expected) = profile.dim(&hp.dim) else {
            return Err(Error::new(
                ErrorClass::InternalInvariant,
                format!("spec/mapping.json profile_hparams {}", hp.key),
                format!(
                    "names dimension {} that profile {} lacks (a spec test keeps every \
                     profile_hparam a dimension of every profile)",
                    hp.dim, profile.name
                ),
            ));
        };
        if let Some(kv) = gguf.kv(&key) {
            check_hparam(kv, &hp.value_type, expected, profile)?;
        }
    }
    Ok(())
}

/// The `profile_hparams` keys the GGUF does not carry (`{arch}.<key>`), in table order.
pub fn absent_hparams(gguf: &Gguf<'_>, profile: &ModelProfile) -> Vec<String> {
    let arch = gguf.architecture().unwrap_or(&profile.arch);
    spec::mapping()
        .profile_hparams
        .iter()
        .map(|hp| format!("{arch}.{}", hp.key))
        .filter(|k| gguf.kv(k).is_none())
        .collect()
}

fn check_hparam(kv: &Kv<'_>, want_type: &str, expected: u64, profile: &ModelProfile) -> Result<()> {
    let found_type = kv.value.value_type();
    let mismatch = |found: String| {
        Error::at(
            ErrorClass::PackProfile,
            kv.value_offset,
            kv.key,
            format!(
                "expected {expected} ({want_type}, fixed by profile {}), found {found}",
                profile.name
            ),
        )
    };
    if found_type.name() != want_type {
        return Err(mismatch(format!("a {found_type} value")));
    }
    match kv.value.as_u64_lossless() {
        Some(v) if v == expected => Ok(()),
        Some(v) => Err(mismatch(v.to_string())),
        None => Err(mismatch(format!("a {found_type} value"))),
    }
}

/// The single ternary format of the file's tensors (PQ2_0 = 142 or PTQ1_0 = 143), or a
/// mixed/absent error.
pub fn ternary_format(g: &Gguf<'_>) -> Result<&'static crate::spec::NumericFormat> {
    ternary_type(g).map(TernaryType::format)
}

/// The one ternary type of `g`'s ternary tensors (`pack.mixed_ternary` when there are two, or
/// none); [`ternary_format`] is its `.ninfer` format.
pub fn ternary_type(g: &Gguf<'_>) -> Result<TernaryType> {
    let mut found: Option<TernaryType> = None;
    for t in &g.tensors {
        let Some(ty) = t.ternary_type() else {
            continue;
        };
        match found {
            None => found = Some(ty),
            Some(prev) if prev != ty => {
                return Err(Error::at(
                    ErrorClass::PackMixedTernary,
                    t.info_offset,
                    t.name,
                    format!(
                        "{} is {} but earlier ternary tensors are {}: one artifact holds one \
                         ternary format",
                        t.name,
                        t.ggml.name,
                        prev.format().name
                    ),
                ))
            }
            _ => {}
        }
    }
    found.ok_or_else(|| {
        Error::new(
            ErrorClass::PackMixedTernary,
            "tensors",
            "no PQ2_0 (142) or PTQ1_0 (143) tensor in the GGUF",
        )
    })
}
