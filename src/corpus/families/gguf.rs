//! The GGUF family (PROTOCOL.md §3.2): the spec/gguf.md#gguf-hostile-inputs hostile catalog as `n_` cases, its
//! accepted controls, every metadata value type and array form, v2/v3, custom alignments,
//! every ggml type the suite decodes (fork ids 142, 143, legacy 42-g128, mainline 42-g64,
//! BeeLlama 53/47) and a few sized-but-not-decoded types.

use crate::codec::Codec;
use crate::corpus::catalogs::gguf_hostile;
use crate::corpus::observe::consumer_to_json;
use crate::corpus::{Bytes, Case};
use crate::gguf::{self, GgufWriter, MetaValue, Mode, RuleLayer, ValueType};

/// The rule layer of catalog case `name` (without `n_`), from `spec/gguf.json` `rule_layers`.
pub fn rule_layer_of(name: &str) -> Option<RuleLayer> {
    crate::spec::get()
        .gguf
        .rule_layers
        .cases
        .iter()
        .find(|c| c.case == name)
        .and_then(|c| RuleLayer::from_name(&c.layer))
}

/// Tags an `n_` case with its rule layer (a case missing from the table is left untagged and
/// the generator refuses it).
fn with_rule_layer(c: Case, name: &str) -> Case {
    match rule_layer_of(name) {
        Some(l) => c.rule_layer(l),
        None => c,
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Spec => "spec",
        Mode::Strict => "strict",
    }
}

fn gguf_case(name: String, bytes: Vec<u8>, mode: Mode) -> Case {
    let mut c = Case::new("gguf", name, "gguf", "gguf", bytes).param("mode", mode_name(mode));
    if mode == Mode::Spec {
        c = c.feature("gguf:mode-spec");
    }
    c
}

/// Every case of the `gguf` family, in a fixed order (the corpus is byte-identical across runs).
pub fn cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    for h in gguf_hostile::hostile_cases() {
        let mut c = gguf_case(format!("n_{}", h.name), h.bytes.clone(), h.mode);
        c = with_rule_layer(c, h.name)
            .reject(h.class)
            .feature("gguf:hostile")
            .spec("spec/gguf.md#gguf-hostile-inputs")
            .recipe(h.source);
        if h.name.starts_with("id42") {
            c = c.feature("ggml_type:42");
        }
        if h.name.starts_with("id42_mixed") {
            c = c.feature("ggml_type:42-g128");
        }
        if let Some(d) = &h.decode {
            c = c
                .param("consumer", consumer_to_json(d))
                .feature("gguf:consumer")
                .phase("decode")
                .derived("gguf/y_valid_small", h.source);
        }
        v.push(c);
    }
    for k in gguf_hostile::accepted_controls() {
        let mut c = gguf_case(format!("y_{}", k.name), k.bytes.clone(), k.mode)
            .feature("gguf:control")
            .recipe(k.source);
        if let Some(d) = &k.decode {
            c = c
                .param("consumer", consumer_to_json(d))
                .feature("gguf:consumer");
        }
        if k.name.starts_with("id42") {
            c = c
                .feature("ggml_type:42")
                .spec("spec/ggml-types.md#id-42 (id 42)");
        }
        if k.name.starts_with("id42_legacy") {
            c = c.feature("ggml_type:42-g128");
        } else if k.name.starts_with("id42_mainline") {
            c = c.feature("ggml_type:42-g64");
        }
        v.push(c);
    }
    v.extend(value_type_cases()?);
    v.extend(layout_cases()?);
    v.extend(type_cases()?);
    v.extend(big_endian_cases()?);
    Ok(v)
}

/// The little-endian twin of a big-endian case: every value type as a scalar and an array, a
/// custom alignment, and tensors of each type whose big-endian form is defined (F32, F16, I32
/// element-wise; Q8_0 per block scale).
pub fn big_endian_twin(version: u32) -> crate::Result<Vec<u8>> {
    let spec = crate::spec::get();
    let mut w = GgufWriter::new();
    w.version(version);
    arch(&mut w);
    let _ = w.alignment(64);
    for t in ValueType::ALL {
        if t != ValueType::Array {
            let n = t.name().to_lowercase();
            w.kv(&format!("corpus.be.{n}"), sample(t, 2));
            w.kv(
                &format!("corpus.be.array_{n}"),
                MetaValue::Array(t, (0..3).map(|k| sample(t, k)).collect()),
            );
        }
    }
    let mut r = Bytes::new(0xb1_9e4d);
    let mut data = Vec::new();
    for (name, ty, dims) in [
        ("f32", "F32", [8u64, 2]),
        ("f16", "F16", [16, 3]),
        ("i32", "I32", [4, 1]),
        ("q8_0", "Q8_0", [64, 2]),
    ] {
        let t = spec
            .ggml_type_named(ty)
            .ok_or_else(|| super::bug("ggml type", ty))?;
        w.tensor_as(name, &dims, t)
            .map_err(|e| super::bug("small tensor", e))?;
        let elems = (dims[0] * dims[1]) as usize;
        let x: Vec<f32> = (0..elems).map(|_| (r.unit() - 0.5) * 4.0).collect();
        let codec =
            Codec::for_ggml_type(t).ok_or_else(|| super::bug("decodable type", t.name.clone()))?;
        data.push(
            codec
                .quantize_to_vec(&x)
                .unwrap_or_else(|_| r.fill(codec.bytes_for(elems).unwrap_or(0))),
        );
    }
    let parts: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    w.to_bytes(&parts).map_err(|e| super::bug("writer", e))
}

fn big_endian_cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    for ver in [3u32, 2] {
        let le = big_endian_twin(ver)?;
        let be = gguf::swap_byte_order(&le, gguf::ByteOrder::Little)
            .map_err(|e| super::bug("own file", e))?;
        v.push(
            gguf_case(format!("y_big_endian_v{ver}"), be, Mode::Strict)
                .feature("gguf:big-endian")
                .feature(format!("gguf:v{ver}"))
                .feature("gguf:array")
                .feature("gguf:alignment")
                .feature("ggml_type:0")
                .feature("ggml_type:1")
                .feature("ggml_type:26")
                .feature("ggml_type:8")
                .feature("codec:f16")
                .feature("codec:q8_0")
                .spec("spec/gguf.md#gguf-big-endian")
                .recipe(format!(
                    "a real big-endian GGUF v{ver}: every header field, key length, value (scalars and array elements), tensor-info field and tensor element (F32, F16, I32; the Q8_0 block scales) byte-swapped from a little-endian twin (families::gguf::big_endian_twin); the observation equals the twin's except data_sha256, the digest of the big-endian bytes"
                )),
        );
    }
    Ok(v)
}

fn arch(w: &mut GgufWriter) {
    w.kv("general.architecture", "corpus");
}

fn sample(t: ValueType, k: usize) -> MetaValue {
    match t {
        ValueType::U8 => MetaValue::U8(200u8.wrapping_add(k as u8)),
        ValueType::I8 => MetaValue::I8(-100 + k as i8),
        ValueType::U16 => MetaValue::U16(60_000 + k as u16),
        ValueType::I16 => MetaValue::I16(-30_000 + k as i16),
        ValueType::U32 => MetaValue::U32(4_000_000_000 + k as u32),
        ValueType::I32 => MetaValue::I32(-2_000_000_000 + k as i32),
        ValueType::F32 => MetaValue::F32(-1.5e-3 * (k as f32 + 1.0)),
        ValueType::Bool => MetaValue::Bool(k % 2 == 1),
        ValueType::String => MetaValue::str(["", "ä€😀", "plain", "tab\tnl\n"][k % 4]),
        ValueType::U64 => MetaValue::U64(u64::MAX - k as u64),
        ValueType::I64 => MetaValue::I64(i64::MIN + k as i64),
        ValueType::F64 => MetaValue::F64(std::f64::consts::PI * (k as f64 + 1.0)),
        ValueType::Array => MetaValue::Array(ValueType::U8, vec![]),
    }
}

fn value_type_cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    for t in ValueType::ALL {
        if t == ValueType::Array {
            continue;
        }
        let mut w = GgufWriter::new();
        arch(&mut w);
        w.kv(
            &format!("corpus.scalar.{}", t.name().to_lowercase()),
            sample(t, 0),
        );
        v.push(
            gguf_case(
                format!("y_kv_scalar_{}", t.name().to_lowercase()),
                w.header_bytes().map_err(|e| super::bug("gguf writer", e))?,
                Mode::Strict,
            )
            .feature(format!("gguf:value-{}", t.name()))
            .spec("spec/gguf.md#gguf-value-types (value types)")
            .recipe(format!("one {} value", t.name())),
        );
        let mut w = GgufWriter::new();
        arch(&mut w);
        let items: Vec<MetaValue> = (0..5).map(|k| sample(t, k)).collect();
        w.kv(
            &format!("corpus.array.{}", t.name().to_lowercase()),
            MetaValue::Array(t, items),
        );
        v.push(
            gguf_case(
                format!("y_kv_array_{}", t.name().to_lowercase()),
                w.header_bytes().map_err(|e| super::bug("gguf writer", e))?,
                Mode::Strict,
            )
            .feature(format!("gguf:value-{}", t.name()))
            .feature("gguf:array")
            .spec("spec/gguf.md#gguf-value-types (ARRAY: u32 elem type, u64 count, elements)")
            .recipe(format!("an array of five {} values", t.name())),
        );
    }
    let mut w = GgufWriter::new();
    arch(&mut w);
    w.kv(
        "corpus.array.empty_u32",
        MetaValue::Array(ValueType::U32, vec![]),
    );
    w.kv(
        "corpus.array.empty_string",
        MetaValue::Array(ValueType::String, vec![]),
    );
    v.push(
        gguf_case(
            "y_kv_array_empty".into(),
            w.header_bytes().map_err(|e| super::bug("gguf writer", e))?,
            Mode::Strict,
        )
        .feature("gguf:array")
        .spec("spec/gguf.md#gguf-container")
        .recipe("empty U32 and STRING arrays"),
    );
    // Every type in one file, as v2 and v3.
    for ver in [2u32, 3] {
        let mut w = GgufWriter::new();
        w.version(ver);
        arch(&mut w);
        for t in ValueType::ALL {
            if t != ValueType::Array {
                w.kv(
                    &format!("corpus.all.{}", t.name().to_lowercase()),
                    sample(t, 1),
                );
                w.kv(
                    &format!("corpus.all.array_{}", t.name().to_lowercase()),
                    MetaValue::Array(t, (0..3).map(|k| sample(t, k + 1)).collect()),
                );
            }
        }
        let _ = w.tensor("t.f32", &[8, 2], 0);
        let data: Vec<u8> = (0..64u8).collect();
        v.push(
            gguf_case(
                format!("y_v{ver}_all_value_types"),
                w.to_bytes(&[&data])
                    .map_err(|e| super::bug("gguf writer", e))?,
                Mode::Strict,
            )
            .feature(format!("gguf:v{ver}"))
            .feature("gguf:array")
            .spec("spec/gguf.md#gguf-header (v3; v2 also readable)")
            .recipe(format!(
                "version {ver}; every scalar type and an array of each; one F32 tensor"
            )),
        );
    }
    Ok(v)
}

fn layout_cases() -> crate::Result<Vec<Case>> {
    let mut v = Vec::new();
    let mut r = Bytes::new(0xa119);
    for align in [8u32, 16, 128, 4096] {
        let mut w = GgufWriter::new();
        arch(&mut w);
        let _ = w.alignment(align);
        let _ = w
            .tensor("a", &[3], 0)
            .and_then(|w| w.tensor("b", &[5, 2], 1))
            .and_then(|w| w.tensor("c", &[7], 0));
        let (a, b, c) = (r.fill(12), r.fill(20), r.fill(28));
        v.push(
            gguf_case(format!("y_alignment_{align}"), w.to_bytes(&[&a, &b, &c]).map_err(|e| super::bug("gguf writer", e))?, Mode::Strict)
                .feature("gguf:alignment")
                .spec("spec/gguf.md#gguf-alignment (general.alignment: non-zero power of two; data section and offsets aligned)")
                .recipe(format!("general.alignment = {align}; three tensors whose sizes are not multiples of it")),
        );
    }
    let mut w = GgufWriter::new();
    arch(&mut w);
    v.push(
        gguf_case(
            "y_no_tensors".into(),
            w.header_bytes().map_err(|e| super::bug("gguf writer", e))?,
            Mode::Strict,
        )
        .spec("spec/gguf.md#gguf-container")
        .recipe("architecture only, zero tensors"),
    );
    // A long metadata block: the data section starts after the tensor infos, not after the KVs (T-3).
    let mut w = GgufWriter::new();
    arch(&mut w);
    w.kv("corpus.padding", MetaValue::str(&"x".repeat(300)));
    let _ = w
        .tensor("first", &[16], 0)
        .and_then(|w| w.tensor("second.with.a.longer.name", &[16], 0));
    let (a, b) = (r.fill(64), r.fill(64));
    v.push(
        gguf_case("y_data_offset_after_tensor_infos".into(), w.to_bytes(&[&a, &b]).map_err(|e| super::bug("gguf writer", e))?, Mode::Strict)
            .feature("gguf:trap-T3")
            .spec("spec/gguf.md#gguf-data-section (data section = align_up(end of tensor infos)); spec/verifier.md#traps (T-3)")
            .recipe("two tensors with distinct random payloads; a reader that measures from the end of the KVs reads shifted bytes"),
    );
    Ok(v)
}

/// Row length of the legacy id-42 cases: 16 g128 blocks = 544 B, a multiple of the default
/// alignment, so a row's span is exactly its g128 size and the g64 size (576 B) cannot fit —
/// only a legacy-aware reader decodes these files (PROTOCOL.md §4.2, id 42).
pub fn legacy42_ne0() -> u64 {
    2048
}

/// One file per decodable ggml type (and a few sized-only types).
fn type_cases() -> crate::Result<Vec<Case>> {
    let spec = crate::spec::get();
    let mut v = Vec::new();
    let mut r = Bytes::new(0x7e9e5);
    let decodable = [
        "F32",
        "F16",
        "BF16",
        "I32",
        "Q8_0",
        "TQ1_0",
        "TQ2_0",
        "Q1_0",
        "Q2_0",
        "Q2_0_PRISM_LEGACY",
        "PQ2_0",
        "PTQ1_0",
        "Q2_0_BEELLAMA",
        "Q2_0S_BEELLAMA",
    ];
    for name in decodable {
        let t = spec
            .ggml_type_named(name)
            .ok_or_else(|| super::bug("ggml type", name))?;
        let codec =
            Codec::for_ggml_type(t).ok_or_else(|| super::bug("decodable type", t.name.clone()))?;
        let be = t.block_elems as u64;
        // Legacy 42 (g128, 34 B) needs byte spans only g128 fits: 16 blocks per row are
        // 544 B (a multiple of 32, no padding) where g64 would need 576 B (see `legacy42_ne0`).
        let ne0 = if be == 1 {
            64
        } else if t.retag_to.is_some() {
            legacy42_ne0()
        } else {
            be * 2
        };
        let dims = [ne0, 3];
        let elems = (ne0 * 3) as usize;
        // Legacy 42 draws from its own generator so that its longer rows leave the other
        // cases' bytes unchanged.
        let mut legacy_r = Bytes::new(0x0001_e9ac_0042);
        let g = if t.retag_to.is_some() {
            &mut legacy_r
        } else {
            &mut r
        };
        let x: Vec<f32> = (0..elems).map(|_| (g.unit() - 0.5) * 2.0).collect();
        let data = match codec.quantize_to_vec(&x) {
            Ok(d) => d,
            Err(_) => {
                // I32 and planar Q2_0S have no quantizer: random bytes with sane scales.
                let mut d = r.fill(
                    codec
                        .bytes_for(elems)
                        .map_err(|e| super::bug("gguf writer", e))?,
                );
                if codec == Codec::Q2_0sPlanar {
                    for b in d.chunks_mut(codec.block_bytes()) {
                        b[..2].copy_from_slice(
                            &crate::codec::f32_to_f16(0.02 + r.unit() * 0.1).to_le_bytes(),
                        );
                    }
                }
                d
            }
        };
        let mut w = GgufWriter::new();
        arch(&mut w);
        w.tensor_as("w", &dims, t)
            .map_err(|e| super::bug("gguf writer", e))?;
        let bytes = w
            .to_bytes(&[&data])
            .map_err(|e| super::bug("gguf writer", e))?;
        let lname = name.to_lowercase();
        // BeeLlama's planar ids are KV-cache types: a GGUF tensor tagged 53/47 is refused.
        let kv_cache_only = codec == Codec::Q2_0sPlanar;
        let mut c = gguf_case(
            format!("{}_type_{lname}", if kv_cache_only { "n" } else { "y" }),
            bytes,
            Mode::Strict,
        );
        if t.id == 42 {
            c = c.feature(if t.retag_to.is_some() {
                "ggml_type:42-g128"
            } else {
                "ggml_type:42-g64"
            });
        }
        if kv_cache_only {
            c = with_rule_layer(c, &format!("type_{lname}"))
                .reject(crate::error::ErrorClass::GgufTensorType)
                .note("53/47 are BeeLlama KV-cache types (planar Q2_0S), not tensor types of mainline or Prism; the codec itself is in the codec family");
        }
        v.push(
            c.feature(format!("ggml_type:{}", t.id))
                .feature(format!("codec:{}", codec.name()))
                .spec("spec/ggml-types.md#ggml-type-ids")
                .recipe(format!(
                    "one {name} tensor (id {}), ne = {dims:?}, quantized from random values",
                    t.id
                )),
        );
    }
    // Legacy 42 with several tensors; a file retagged 42 -> 142 decodes the same. Every span
    // fits g128 only (rows of 544 B, no padding; g64 would need 576 B per row).
    let legacy = spec
        .ggml_type_named("Q2_0_PRISM_LEGACY")
        .ok_or_else(|| super::bug("ggml type", "Q2_0_PRISM_LEGACY"))?;
    let pq2 = spec
        .ggml_type_named("PQ2_0")
        .ok_or_else(|| super::bug("ggml type", "PQ2_0"))?;
    let ne0 = legacy42_ne0();
    let mut legacy_r = Bytes::new(0x0001_e9ac_0142);
    let x: Vec<f32> = (0..ne0 * 3)
        .map(|_| (legacy_r.unit() - 0.5) * 2.0)
        .collect();
    let data = Codec::Pq2_0
        .quantize_to_vec(&x)
        .map_err(|e| super::bug("gguf writer", e))?;
    let (d1, d2) = data.split_at(data.len() / 3);
    for (t, name) in [
        (legacy, "y_id42_legacy_g128_two_tensors"),
        (pq2, "y_id142_same_blocks_as_legacy"),
    ] {
        let mut w = GgufWriter::new();
        arch(&mut w);
        w.tensor_as("a", &[ne0, 1], t)
            .map_err(|e| super::bug("gguf writer", e))?
            .tensor_as("b", &[ne0, 2], t)
            .map_err(|e| super::bug("gguf writer", e))?;
        let mut c = gguf_case(
            name.into(),
            w.to_bytes(&[d1, d2])
                .map_err(|e| super::bug("gguf writer", e))?,
            Mode::Strict,
        )
        .feature(format!("ggml_type:{}", t.id));
        if t.id == 42 {
            c = c.feature("ggml_type:42-g128");
        }
        v.push(
            c.feature("codec:pq2_0")
                .spec("spec/ggml-types.md#id-42 (legacy 42 is byte-identical to 142; re-tagging is header-only)")
                .recipe(format!("the same PQ2_0 blocks tagged 42 (legacy g128) or 142: tensors a [{ne0}, 1] and b [{ne0}, 2], 544 B per row, so every span fits g128 (34 B / 128) and not g64 (18 B / 64 would need 576 B per row)")),
        );
    }
    // Sizes known, values not decoded by this suite: readers must still lay the file out.
    for name in ["Q4_0", "Q4_K", "Q6_K", "IQ2_XXS", "MXFP4"] {
        let t = spec
            .ggml_type_named(name)
            .ok_or_else(|| super::bug("ggml type", name))?;
        let dims = [t.block_elems as u64 * 2, 2];
        let n = 4 * t.block_bytes as usize;
        let mut w = GgufWriter::new();
        arch(&mut w);
        w.tensor_as("sized", &dims, t)
            .map_err(|e| super::bug("gguf writer", e))?
            .tensor("after", &[4], 0)
            .map_err(|e| super::bug("gguf writer", e))?;
        let tail = r.fill(16);
        v.push(
            gguf_case(format!("y_sized_{}", name.to_lowercase()), w.to_bytes(&[&r.fill(n), &tail]).map_err(|e| super::bug("gguf writer", e))?, Mode::Strict)
                .feature(format!("ggml_type:{}", t.id))
                .feature("gguf:sized-only")
                .spec("spec/ggml-types.md#ggml-type-ids (block elems / bytes)")
                .recipe(format!("a {name} tensor of random bytes followed by an F32 tensor (its offset depends on {name}'s size)")),
        );
    }
    Ok(v)
}
