//! conformance/PROTOCOL.md adapter for candle-core's GGUF reader (`quantized::gguf_file`),
//! crates.io `candle-core = "=0.11.1"`. Only glue lives here: `Content::read` frames the file,
//! `TensorInfo::read` loads each tensor, `QTensor::dequantize` decodes. Every `Err` candle
//! returns is a reject (candle has no error taxonomy: lenient classes); a panic inside candle is
//! deliberately not caught — it is a finding, and the runner records the abnormal exit.
//!
//! candle keeps metadata and tensor infos in `HashMap`s, so file order is lost: keys and tensors
//! are reported sorted by name and the metadata digest is `metadata_unordered_sha256` (the KV
//! records sorted by key bytes, PROTOCOL §4.2); the reader declares `order_insensitive`.

use candle_core::quantized::gguf_file::{Content, Value, VersionedMagic};
use candle_core::quantized::{ggml_file, GgmlDType};
use candle_core::Device;
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};
use std::io::Read;

enum Answer {
    Accept(Json),
    Reject(Option<&'static str>, String),
    Unsupported(String),
}

fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn values_sha256(v: &[f32]) -> String {
    let mut h = Sha256::new();
    for x in v {
        let bits = if x.is_nan() {
            0x7fc0_0000
        } else if *x == 0.0 {
            0
        } else {
            x.to_bits()
        };
        h.update(bits.to_le_bytes());
    }
    hex(h.finalize())
}

fn dtype_id(t: GgmlDType) -> u32 {
    match t {
        GgmlDType::F32 => 0,
        GgmlDType::F16 => 1,
        GgmlDType::Q4_0 => 2,
        GgmlDType::Q4_1 => 3,
        GgmlDType::Q5_0 => 6,
        GgmlDType::Q5_1 => 7,
        GgmlDType::Q8_0 => 8,
        GgmlDType::Q8_1 => 9,
        GgmlDType::Q2K => 10,
        GgmlDType::Q3K => 11,
        GgmlDType::Q4K => 12,
        GgmlDType::Q5K => 13,
        GgmlDType::Q6K => 14,
        GgmlDType::Q8K => 15,
        GgmlDType::BF16 => 30,
    }
}

fn dtype_name(t: GgmlDType) -> &'static str {
    match t {
        GgmlDType::F32 => "F32",
        GgmlDType::F16 => "F16",
        GgmlDType::BF16 => "BF16",
        GgmlDType::Q4_0 => "Q4_0",
        GgmlDType::Q4_1 => "Q4_1",
        GgmlDType::Q5_0 => "Q5_0",
        GgmlDType::Q5_1 => "Q5_1",
        GgmlDType::Q8_0 => "Q8_0",
        GgmlDType::Q8_1 => "Q8_1",
        GgmlDType::Q2K => "Q2_K",
        GgmlDType::Q3K => "Q3_K",
        GgmlDType::Q4K => "Q4_K",
        GgmlDType::Q5K => "Q5_K",
        GgmlDType::Q6K => "Q6_K",
        GgmlDType::Q8K => "Q8_K",
    }
}

fn type_id(v: &Value) -> u32 {
    match v {
        Value::U8(_) => 0,
        Value::I8(_) => 1,
        Value::U16(_) => 2,
        Value::I16(_) => 3,
        Value::U32(_) => 4,
        Value::I32(_) => 5,
        Value::F32(_) => 6,
        Value::Bool(_) => 7,
        Value::String(_) => 8,
        Value::Array(_) => 9,
        Value::U64(_) => 10,
        Value::I64(_) => 11,
        Value::F64(_) => 12,
    }
}

const TYPE_NAMES: [&str; 13] = [
    "U8", "I8", "U16", "I16", "U32", "I32", "F32", "BOOL", "STRING", "ARRAY", "U64", "I64", "F64",
];

/// A value as GGUF serializes it (PROTOCOL §4.2), from what candle parsed.
fn serialize(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::U8(x) => out.push(*x),
        Value::I8(x) => out.extend(x.to_le_bytes()),
        Value::U16(x) => out.extend(x.to_le_bytes()),
        Value::I16(x) => out.extend(x.to_le_bytes()),
        Value::U32(x) => out.extend(x.to_le_bytes()),
        Value::I32(x) => out.extend(x.to_le_bytes()),
        Value::F32(x) => out.extend(x.to_le_bytes()),
        Value::Bool(x) => out.push(u8::from(*x)),
        Value::String(s) => {
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s.as_bytes());
        }
        Value::Array(a) => {
            // An empty array has lost its element type in candle's model.
            let t = a.first().map(type_id).unwrap_or(0);
            out.extend(t.to_le_bytes());
            out.extend((a.len() as u64).to_le_bytes());
            for e in a {
                serialize(e, out);
            }
        }
        Value::U64(x) => out.extend(x.to_le_bytes()),
        Value::I64(x) => out.extend(x.to_le_bytes()),
        Value::F64(x) => out.extend(x.to_le_bytes()),
    }
}

fn consumer(c: &Json, content: &Content) -> Option<Answer> {
    let op = c["op"].as_str().unwrap_or("");
    match op {
        "array_as" | "scalar_as" => {
            let key = c["key"].as_str().unwrap_or("");
            let Some(v) = content.metadata.get(key) else {
                return Some(Answer::Reject(
                    Some("gguf.metadata_missing"),
                    format!("key {key} missing"),
                ));
            };
            let ok = if op == "array_as" {
                let want = c["elem"].as_str().unwrap_or("");
                match v {
                    Value::Array(a) => a
                        .first()
                        .map(|e| TYPE_NAMES[type_id(e) as usize] == want)
                        .unwrap_or(true),
                    _ => false,
                }
            } else {
                TYPE_NAMES[type_id(v) as usize] == c["type"].as_str().unwrap_or("")
            };
            (!ok).then(|| Answer::Reject(Some("gguf.metadata_type"), format!("{key}: wrong type")))
        }
        "tensor" | "tensor_shape" => {
            let name = c["name"].as_str().unwrap_or("");
            let Some(t) = content.tensor_infos.get(name) else {
                return Some(Answer::Reject(
                    Some("gguf.tensor_missing"),
                    format!("tensor {name} missing"),
                ));
            };
            if op == "tensor_shape" {
                let mut ne: Vec<u64> = t.shape.dims().iter().map(|&d| d as u64).collect();
                ne.reverse();
                let want: Vec<u64> = c["ne"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Json::as_u64).collect())
                    .unwrap_or_default();
                if ne != want || dtype_name(t.ggml_dtype) != c["type"].as_str().unwrap_or("") {
                    return Some(Answer::Reject(
                        Some("gguf.tensor_shape"),
                        format!("tensor {name} is {ne:?} {:?}", t.ggml_dtype),
                    ));
                }
            }
            None
        }
        _ => None,
    }
}

fn observe_gguf(path: &str, params: &Json) -> Answer {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Answer::Reject(None, format!("open: {e}")),
    };
    let content = match Content::read(&mut f) {
        Ok(c) => c,
        Err(e) => return Answer::Reject(None, format!("Content::read: {e}")),
    };
    if let Some(a) = params.get("consumer").and_then(|c| consumer(c, &content)) {
        return a;
    }
    let version = match content.magic {
        VersionedMagic::GgufV1 => 1,
        VersionedMagic::GgufV2 => 2,
        VersionedMagic::GgufV3 => 3,
    };
    // candle's own rule (gguf_file.rs, Content::read): general.alignment if an integer, else 32.
    let alignment = match content.metadata.get("general.alignment") {
        Some(Value::U8(v)) => *v as u64,
        Some(Value::U16(v)) => *v as u64,
        Some(Value::U32(v)) => *v as u64,
        Some(Value::I8(v)) if *v >= 0 => *v as u64,
        Some(Value::I16(v)) if *v >= 0 => *v as u64,
        Some(Value::I32(v)) if *v >= 0 => *v as u64,
        _ => 32,
    };
    let mut keys: Vec<&String> = content.metadata.keys().collect();
    keys.sort();
    let mut meta = Vec::new();
    for k in &keys {
        let v = &content.metadata[*k];
        meta.extend((k.len() as u64).to_le_bytes());
        meta.extend(k.as_bytes());
        meta.extend(type_id(v).to_le_bytes());
        serialize(v, &mut meta);
    }
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors = Vec::new();
    for name in names {
        let info = &content.tensor_infos[name];
        let q = match info.read(&mut f, content.tensor_data_offset, &Device::Cpu) {
            Ok(q) => q,
            Err(e) => return Answer::Reject(None, format!("tensor {name}: {e}")),
        };
        let data = match q.data() {
            Ok(d) => d,
            Err(e) => return Answer::Reject(None, format!("tensor {name} data: {e}")),
        };
        let mut ne: Vec<u64> = info.shape.dims().iter().map(|&d| d as u64).collect();
        ne.reverse();
        let values = q
            .dequantize(&Device::Cpu)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>());
        let values = match values {
            Ok(v) => v,
            Err(e) => return Answer::Reject(None, format!("tensor {name} dequantize: {e}")),
        };
        tensors.push(json!({
            "name": name, "type": dtype_id(info.ggml_dtype), "ne": ne,
            "data_sha256": hex(Sha256::digest(&data)), "values_sha256": values_sha256(&values),
        }));
    }
    Answer::Accept(json!({
        "version": version, "alignment": alignment, "kv_count": keys.len(), "keys": keys,
        "metadata_unordered_sha256": hex(Sha256::digest(&meta)), "tensors": tensors,
    }))
}

fn observe_codec(path: &str, p: &Json) -> Answer {
    let codec = p["codec"].as_str().unwrap_or("");
    let dtype = match codec {
        "f32" => GgmlDType::F32,
        "f16" => GgmlDType::F16,
        "bf16" => GgmlDType::BF16,
        "q8_0" => GgmlDType::Q8_0,
        other => return Answer::Unsupported(format!("codec:{other}")),
    };
    let (rows, cols) = (
        p["rows"].as_u64().unwrap_or(0),
        p["cols"].as_u64().unwrap_or(0),
    );
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) => return Answer::Reject(None, format!("read: {e}")),
    };
    let (be, bb) = (dtype.block_size() as u64, dtype.type_size() as u64);
    let n = rows.saturating_mul(cols);
    if be == 0 || n % be != 0 || (n / be).saturating_mul(bb) != data.len() as u64 {
        return Answer::Reject(None, "length does not match rows x cols".into());
    }
    let q = match ggml_file::qtensor_from_ggml(dtype, &data, vec![n as usize], &Device::Cpu) {
        Ok(q) => q,
        Err(e) => return Answer::Reject(None, format!("qtensor_from_ggml: {e}")),
    };
    let v = match q.dequantize(&Device::Cpu).and_then(|t| t.to_vec1::<f32>()) {
        Ok(v) => v,
        Err(e) => return Answer::Reject(None, format!("dequantize: {e}")),
    };
    let rows_sha: Vec<String> = if cols == 0 {
        Vec::new()
    } else {
        v.chunks(cols as usize).map(values_sha256).collect()
    };
    Answer::Accept(json!({"values": v.len(), "sha256": values_sha256(&v), "rows_sha256": rows_sha}))
}

fn main() {
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let req: Json = serde_json::from_str(&input).unwrap_or(Json::Null);
    let path = std::env::args()
        .nth(1)
        .or_else(|| req["file"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let params = req.get("params").cloned().unwrap_or(Json::Null);
    let answer = match req["kind"].as_str().unwrap_or("") {
        "gguf" => observe_gguf(&path, &params),
        "codec" => observe_codec(&path, &params),
        other => Answer::Unsupported(format!("kind:{other}")),
    };
    let (out, code) = match answer {
        Answer::Accept(o) => (json!({"result": "accept", "observation": o}), 0),
        Answer::Reject(class, msg) => (
            json!({"result": "reject", "class": class, "message": msg}),
            1,
        ),
        Answer::Unsupported(f) => (json!({"result": "unsupported", "feature": f}), 0),
    };
    println!("{out}");
    std::process::exit(code);
}
