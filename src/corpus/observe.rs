//! The reference observations: what a conforming reader reports for an accepted case
//! (`conformance/PROTOCOL.md` §4 defines each schema; this module is its reference).
//!
//! Every observation is plain JSON built from digests, so an independent reader in any
//! language can reproduce it without sharing code with this crate.

use serde_json::{json, Map, Value};

use crate::codec::Codec;
use crate::corpus::catalogs::gguf_hostile::{self, Decode};
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{self, Id42Policy, Mode, Options, ValueType};
use crate::ninfer::{Artifact, ObjectBody};
use crate::perm::{self, HeadTiling};

pub use crate::digest::sha256_hex;

/// The canonical little-endian bytes of f32 values: every NaN becomes `0x7fc00000` and
/// `-0.0` becomes `+0.0` (value-wise comparison, PROTOCOL.md §4.1); other bits unchanged.
pub fn canonical_f32_bytes(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 4);
    for &v in values {
        let bits = if v.is_nan() {
            0x7fc0_0000u32
        } else if v == 0.0 {
            0
        } else {
            v.to_bits()
        };
        out.extend_from_slice(&bits.to_le_bytes());
    }
    out
}

/// sha256 of the canonical f32 LE bytes.
pub fn values_sha256(values: &[f32]) -> String {
    sha256_hex(&canonical_f32_bytes(values))
}

/// The codec observation: `{values, sha256, rows_sha256}` of `rows` x `cols` decoded values.
pub fn observe_codec(codec_name: &str, bytes: &[u8], rows: u64, cols: u64) -> Result<Value> {
    let codec = Codec::from_name(codec_name).ok_or_else(|| {
        Error::new(
            ErrorClass::CodecUnsupported,
            "params.codec",
            format!("unknown codec '{codec_name}'"),
        )
    })?;
    let n = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::new(ErrorClass::CodecLength, "params", "rows * cols overflows"))?;
    let need = codec.bytes_for(n as usize)?;
    if need != bytes.len() {
        return Err(Error::new(
            ErrorClass::CodecLength,
            codec_name,
            format!(
                "{rows} x {cols} values need {need} bytes; the file has {}",
                bytes.len()
            ),
        ));
    }
    let values = codec.decode_to_vec(bytes)?;
    let rows_sha: Vec<String> = if cols == 0 {
        Vec::new()
    } else {
        values.chunks(cols as usize).map(values_sha256).collect()
    };
    Ok(json!({
        "values": values.len(),
        "sha256": values_sha256(&values),
        "rows_sha256": rows_sha,
    }))
}

/// A consumer step of a decode-phase GGUF case, from the request's `params.consumer`.
pub fn consumer_from_json(v: &Value) -> Result<Decode> {
    let bad = |what: &str| {
        Error::new(
            ErrorClass::ProtocolParams,
            "params.consumer",
            what.to_string(),
        )
    };
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let vt = |name: &str| -> Result<ValueType> {
        ValueType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .ok_or_else(|| bad("unknown value type"))
    };
    let s = |k: &str| v.get(k).and_then(Value::as_str).ok_or_else(|| bad(k));
    Ok(match s("op")? {
        "array_as" => Decode::ArrayAs {
            key: leak(s("key")?),
            elem: vt(s("elem")?)?,
        },
        "scalar_as" => Decode::ScalarAs {
            key: leak(s("key")?),
            ty: vt(s("type")?)?,
        },
        "tensor" => Decode::Tensor {
            name: leak(s("name")?),
        },
        "tensor_shape" => {
            let ne: Vec<u64> = v
                .get("ne")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("ne"))?
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            Decode::TensorShape {
                name: leak(s("name")?),
                dims: Box::leak(ne.into_boxed_slice()),
                ggml: leak(s("type")?),
            }
        }
        _ => return Err(bad("unknown op")),
    })
}

/// The consumer step as request JSON (inverse of [`consumer_from_json`]).
pub fn consumer_to_json(d: &Decode) -> Value {
    match d {
        Decode::ArrayAs { key, elem } => json!({"op": "array_as", "key": key, "elem": elem.name()}),
        Decode::ScalarAs { key, ty } => json!({"op": "scalar_as", "key": key, "type": ty.name()}),
        Decode::Tensor { name } => json!({"op": "tensor", "name": name}),
        Decode::TensorShape { name, dims, ggml } => {
            json!({"op": "tensor_shape", "name": name, "ne": dims, "type": ggml})
        }
    }
}

/// The GGUF observation (PROTOCOL.md §4.2) with the default id-42 policy.
#[cfg(any(test, feature = "internals"))]
pub fn observe_gguf(bytes: &[u8], mode: Mode, consumer: Option<&Decode>) -> Result<Value> {
    observe_gguf_with(bytes, mode, Id42Policy::Auto, consumer)
}

/// The GGUF observation under an explicit id-42 policy (`params.id42`, used by the
/// `id42_g64` stub to misread legacy files as mainline Q2_0).
pub fn observe_gguf_with(
    bytes: &[u8],
    mode: Mode,
    id42: Id42Policy,
    consumer: Option<&Decode>,
) -> Result<Value> {
    // A real big-endian file is read through its little-endian transcoding (same layout);
    // `data_sha256` stays the digest of the bytes in the file. The transcoding validates under
    // this request's rules first, so its refusal is the reader's own class and detail, kept as
    // it is (a mixed-endian file is refused there as `gguf.big_endian`).
    let raw = bytes;
    // (Rule switch, tests only: with `gguf.big_endian` off, the header reads the version
    // byte-swapped and the rest little-endian.)
    let swapped = if gguf::is_big_endian(bytes) && crate::error::enforced(ErrorClass::GgufBigEndian)
    {
        Some(gguf::swap_byte_order_with(
            bytes,
            gguf::ByteOrder::Big,
            Options { mode, id42 },
        )?)
    } else {
        None
    };
    let bytes = swapped.as_deref().unwrap_or(bytes);
    let g = gguf::parse_with(bytes, Options { mode, id42 })?;
    if consumer.is_some() {
        gguf_hostile::run_case(bytes, mode, consumer)?;
    }
    // Each KV serialized as in the file; the ordered digest concatenates them in file order,
    // the unordered one sorted by key bytes (keys are unique).
    let mut records: Vec<(&str, Vec<u8>)> = Vec::with_capacity(g.kvs.len());
    let mut keys = Vec::new();
    for kv in &g.kvs {
        let mut rec = Vec::new();
        rec.extend_from_slice(&(kv.key.len() as u64).to_le_bytes());
        rec.extend_from_slice(kv.key.as_bytes());
        let owned = kv.value.to_owned_value();
        rec.extend_from_slice(&owned.type_id().to_le_bytes());
        owned.write_payload(&mut rec);
        records.push((kv.key, rec));
        keys.push(Value::from(kv.key));
    }
    let meta: Vec<u8> = records
        .iter()
        .flat_map(|(_, r)| r.iter().copied())
        .collect();
    records.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let meta_unordered: Vec<u8> = records
        .iter()
        .flat_map(|(_, r)| r.iter().copied())
        .collect();
    let mut tensors = Vec::new();
    for t in &g.tensors {
        let data = g.tensor_data(t);
        let mut o = Map::new();
        o.insert("name".into(), t.name.into());
        o.insert("type".into(), t.type_id.into());
        o.insert("ne".into(), json!(t.dims()));
        let in_file = &raw[t.abs_offset as usize..(t.abs_offset + t.nbytes) as usize];
        o.insert("data_sha256".into(), sha256_hex(in_file).into());
        if let Some(c) = Codec::for_ggml_type(t.ggml) {
            let values = c.decode_to_vec(data)?;
            o.insert("values_sha256".into(), values_sha256(&values).into());
        }
        tensors.push(Value::Object(o));
    }
    Ok(json!({
        "version": g.version,
        "alignment": g.alignment,
        "kv_count": g.kvs.len(),
        "keys": keys,
        "metadata_sha256": sha256_hex(&meta),
        "metadata_unordered_sha256": sha256_hex(&meta_unordered),
        "tensors": tensors,
    }))
}

/// Logical values of a tensor in a non-ternary, non-direct registry format (grouped integer,
/// NVFP4, FP8 row-scaled), or `None` for other objects.
fn registry_values(art: &Artifact<'_>, o: &crate::ninfer::Object) -> Result<Option<Vec<f32>>> {
    let Some((format, _)) = o.format_layout() else {
        return Ok(None);
    };
    let shape = o.shape();
    let raw = art.object_bytes(o);
    let v = match format {
        "Q4G64_F16S" | "Q5G64_F16S" | "Q6G64_F16S" | "W8G32_F16S" => {
            let v = art.row_split(&o.name)?;
            crate::codec::grouped_int::decode_rows(v.format, &v.geom, v.bytes, 0..v.geom.n)?
        }
        "NVFP4" => crate::codec::nvfp4::decode_rows(shape[0], shape[1], raw, 0..shape[0])?,
        "FP8_E4M3FN_ROW_BF16S" => {
            crate::codec::fp8_row::decode_rows(shape[0], shape[1], raw, 0..shape[0])?
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

/// A ternary `.ninfer` object as ggml blocks: `n` rows of `k_pad` elements (the planes
/// reassembled), of which the first `k` of each row are the tensor's values.
pub struct TernaryObject {
    /// The object's codec.
    pub codec: Codec,
    /// The reassembled ggml blocks, row-major.
    pub blocks: Vec<u8>,
    /// Rows.
    pub n: usize,
    /// Logical elements per row.
    pub k: usize,
    /// Stored elements per row (a multiple of the block size).
    pub k_pad: usize,
}

impl TernaryObject {
    /// The logical values (each row's first `k`) of `decoded` (all `n * k_pad` values).
    pub fn logical(&self, decoded: &[f32]) -> Vec<f32> {
        decoded
            .chunks(self.k_pad.max(1))
            .take(self.n)
            .flat_map(|row| row.iter().take(self.k).copied())
            .collect()
    }
}

/// The ternary object `name` of `art`, of codec `codec_name`, reassembled into ggml blocks.
pub fn ternary_object(art: &Artifact<'_>, name: &str, codec_name: &str) -> Result<TernaryObject> {
    let v = art.row_split(name)?;
    let (n, k, k_pad) = (v.geom.n, v.geom.k, v.geom.k_pad);
    let blocks = v.ggml_rows(0..n)?;
    let codec = Codec::from_name(codec_name)
        .ok_or_else(|| Error::new(ErrorClass::CodecUnsupported, name, "no codec"))?;
    let size = |x: u64| {
        usize::try_from(x)
            .map_err(|_| Error::new(ErrorClass::NinferArithOverflow, name, "shape too large"))
    };
    Ok(TernaryObject {
        codec,
        blocks,
        n: size(n)?,
        k: size(k)?,
        k_pad: size(k_pad)?,
    })
}

/// The ternary `.ninfer` object `name` of `bytes` (`None` when it is not a ternary tensor).
pub fn ninfer_ternary(bytes: &[u8], name: &str) -> Result<Option<TernaryObject>> {
    let art = Artifact::parse(bytes)?;
    let Some(o) = art.directory.objects.iter().find(|o| o.name == name) else {
        return Ok(None);
    };
    let codec = o
        .format_layout()
        .and_then(|(f, _)| crate::spec::get().format(f))
        .and_then(|f| f.ternary.as_ref().map(|t| t.codec.clone()));
    match codec {
        Some(c) => ternary_object(&art, name, &c).map(Some),
        None => Ok(None),
    }
}

/// The `.ninfer` observation (PROTOCOL.md §4.3).
pub fn observe_ninfer(bytes: &[u8]) -> Result<Value> {
    let art = Artifact::parse(bytes)?;
    let mut objects = Vec::new();
    for o in &art.directory.objects {
        let raw = art.object_bytes(o);
        let mut m = Map::new();
        m.insert("name".into(), o.name.clone().into());
        m.insert("kind".into(), o.kind().into());
        match &o.body {
            ObjectBody::Tensor {
                shape,
                format,
                layout,
            } => {
                m.insert("shape".into(), json!(shape));
                m.insert("format".into(), format.clone().into());
                m.insert("layout".into(), layout.clone().into());
            }
            ObjectBody::Resource { encoding } => {
                m.insert("encoding".into(), encoding.clone().into());
            }
        }
        m.insert("offset".into(), o.offset.into());
        m.insert("bytes".into(), o.bytes.into());
        m.insert("sha256".into(), sha256_hex(raw).into());
        let ternary = o
            .format_layout()
            .and_then(|(f, _)| crate::spec::get().format(f))
            .and_then(|f| f.ternary.as_ref().map(|t| t.codec.clone()));
        if let Some(codec_name) = ternary {
            let t = ternary_object(&art, &o.name, &codec_name)?;
            let logical = t.logical(&t.codec.decode_to_vec(&t.blocks)?);
            m.insert("values_sha256".into(), values_sha256(&logical).into());
        } else if let Some(values) = registry_values(&art, o)? {
            m.insert("values_sha256".into(), values_sha256(&values).into());
        }
        objects.push(Value::Object(m));
    }
    Ok(json!({
        "json_bytes": art.json_bytes,
        "payload_offset": art.payload_offset,
        "identity": {
            "model_id": art.directory.identity.model_id,
            "weights_id": art.directory.identity.weights_id,
        },
        "objects": objects,
    }))
}

/// The mapping-rule observation (PROTOCOL.md §4.4): rows of the input gathered by `rule`.
pub fn observe_rows(bytes: &[u8], params: &Value) -> Result<Value> {
    let get = |k: &str| params.get(k).and_then(Value::as_u64);
    let bad = |what: &str| Error::new(ErrorClass::ProtocolParams, "params", what.to_string());
    let rule = params
        .get("rule")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("rule"))?;
    let rows = get("rows").ok_or_else(|| bad("rows"))? as usize;
    let row_bytes = get("row_bytes").ok_or_else(|| bad("row_bytes"))? as usize;
    if rows.checked_mul(row_bytes) != Some(bytes.len()) {
        return Err(Error::new(
            ErrorClass::PermShape,
            "file",
            format!(
                "{rows} rows x {row_bytes} bytes != file length {}",
                bytes.len()
            ),
        ));
    }
    let tiling = HeadTiling {
        tile: get("tile").unwrap_or(3) as usize,
        group: get("group").unwrap_or(16) as usize,
    };
    let order: Vec<usize> = match rule {
        "tiled_to_grouped" => {
            if rows != tiling.heads() {
                return Err(Error::new(
                    ErrorClass::PermShape,
                    "rows",
                    format!("{rows} rows is not {} heads", tiling.heads()),
                ));
            }
            tiling.head_order()
        }
        "perm_row" => perm::perm_rows(
            tiling,
            get("head_dim").unwrap_or(128) as usize,
            rows,
            "rows",
        )?,
        "attn_q_query" | "attn_q_gate" => {
            let (q, g) =
                perm::attn_q_deinterleave(rows, get("block_rows").unwrap_or(256) as usize, "rows")?;
            if rule == "attn_q_query" {
                q
            } else {
                g
            }
        }
        _ => return Err(bad("unknown rule")),
    };
    let out = perm::gather_rows(bytes, row_bytes, &order);
    Ok(json!({"rows": order.len(), "sha256": sha256_hex(&out)}))
}

/// The pack observation (PROTOCOL.md §4.5): the artifact a packer must produce.
pub fn observe_pack(gguf: &[u8], template: &[u8]) -> Result<Value> {
    let out = crate::pack::pack_bytes(gguf, template, &crate::pack::PackOptions::default())?;
    let art = Artifact::parse(&out)?;
    Ok(json!({
        "bytes": out.len(),
        "sha256": sha256_hex(&out),
        "objects": art.directory.objects.len(),
    }))
}
