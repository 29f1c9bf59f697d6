//! Fuzzing dictionaries, generated from the spec tables and the synthesized models, so they
//! follow the specification: GGUF magic, metadata keys, value and ggml type ids, alignments;
//! `.ninfer` magic, directory member names, format, layout, kind and encoding names; dump
//! bundle file and manifest member names; codec special values; packer edit records aimed at
//! every KV value and tensor-info field of the micro model.
//!
//! `fuzz/dict/<target>.dict` holds [`file`] for every target (libFuzzer's `-dict=` format);
//! the root crate's tests fail when a committed dictionary differs from it.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use ninfer_ternary::codec::TernaryType;
use ninfer_ternary::gguf::{self, Mode};
use ninfer_ternary::spec;

fn micro_gguf() -> &'static [u8] {
    static M: OnceLock<Vec<u8>> = OnceLock::new();
    M.get_or_init(|| crate::nano::model_of("bonsai-micro", TernaryType::Pq2_0, 0))
}

/// Every metadata key of the synthesized micro model, plus the keys the reader itself reads.
pub fn gguf_keys() -> Vec<String> {
    static K: OnceLock<Vec<String>> = OnceLock::new();
    K.get_or_init(|| {
        let mut keys: BTreeSet<String> = ["general.alignment", "general.architecture"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Ok(g) = gguf::parse(micro_gguf(), Mode::Strict) {
            keys.extend(g.kvs.iter().map(|kv| kv.key.to_string()));
        }
        keys.into_iter().collect()
    })
    .clone()
}

/// ggml type ids: every type of spec/ggml_types.json, removed ids, fork variants, and ids
/// just outside the table.
pub fn ggml_type_ids() -> Vec<u32> {
    let g = &spec::get().ggml;
    let mut ids: BTreeSet<u32> = g.types.iter().map(|t| t.id).collect();
    ids.extend(g.removed_ids.iter().copied());
    let max = ids.iter().copied().max().unwrap_or(0);
    ids.extend([max + 1, 255, 0x8000_0000, u32::MAX]);
    ids.into_iter().collect()
}

/// Directory words: member names, kinds, encodings, format and layout names.
pub fn ninfer_words() -> &'static Vec<String> {
    static W: OnceLock<Vec<String>> = OnceLock::new();
    W.get_or_init(|| {
        let s = spec::get();
        let r = &s.container.directory;
        let mut w: BTreeSet<String> = BTreeSet::new();
        for list in [
            &r.root_members,
            &r.identity_members,
            &r.tensor_members,
            &r.resource_members,
            &r.kinds,
            &r.resource_encodings,
        ] {
            w.extend(list.iter().cloned());
        }
        w.extend(s.formats.formats.iter().map(|f| f.name.clone()));
        w.extend(
            s.formats
                .layouts
                .iter()
                .map(|l| l.name.as_str().to_string()),
        );
        w.into_iter().collect()
    })
}

/// One dictionary entry: `"..."` with every byte outside printable ASCII (and `"`, `\`)
/// written as `\xNN`.
fn entry(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in bytes {
        if (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\' {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02X}"));
        }
    }
    s.push('"');
    s
}

fn gguf_entries() -> Vec<Vec<u8>> {
    let mut out = vec![b"GGUF".to_vec(), b"FUGG".to_vec()];
    for k in gguf_keys() {
        out.push(k.as_bytes().to_vec());
        let mut framed = (k.len() as u64).to_le_bytes().to_vec();
        framed.extend_from_slice(k.as_bytes());
        out.push(framed);
    }
    for id in ggml_type_ids() {
        out.push(id.to_le_bytes().to_vec());
    }
    for v in 0u32..=13 {
        out.push(v.to_le_bytes().to_vec());
    }
    for &a in super::boundary::ALIGNMENTS {
        out.push((a as u32).to_le_bytes().to_vec());
    }
    for &n in super::boundary::LYING_COUNTS {
        out.push(n.to_le_bytes().to_vec());
    }
    out
}

fn ninfer_entries() -> Vec<Vec<u8>> {
    let s = spec::get();
    let mut out = Vec::new();
    let magic: Vec<u8> = (0..s.container.magic_hex.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&s.container.magic_hex[i..i + 2], 16).ok())
        .collect();
    out.push(magic);
    for w in ninfer_words() {
        out.push(format!("\"{w}\"").into_bytes());
        out.push(format!("\"{w}\":").into_bytes());
    }
    for &n in super::boundary::INTEGERS {
        out.push(n.to_string().into_bytes());
    }
    for t in [
        "-1", "1.5", "1e309", "null", "true", "[]", "{}", "\\u0000", "\\ud800",
    ] {
        out.push(t.as_bytes().to_vec());
    }
    out
}

fn dumps_entries() -> Vec<Vec<u8>> {
    let mut words: BTreeSet<Vec<u8>> = BTreeSet::new();
    for seed in crate::seeds::for_target("dumps_parse").values() {
        for (name, bytes) in ninfer_ternary::verify::dump_bundle::decode(seed) {
            words.insert(name.as_bytes().to_vec());
            if let Ok(serde_json::Value::Object(m)) = serde_json::from_slice(&bytes) {
                for (k, v) in m {
                    words.insert(format!("\"{k}\"").into_bytes());
                    if let serde_json::Value::String(s) = v {
                        words.insert(format!("\"{s}\"").into_bytes());
                    }
                }
            }
        }
    }
    words.into_iter().collect()
}

fn codec_entries() -> Vec<Vec<u8>> {
    // f16 scales: ±0, smallest subnormal, largest finite, ±inf, NaN; trit/code bytes.
    let mut out: Vec<Vec<u8>> = [
        0x0000u16, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x7e00,
    ]
    .iter()
    .map(|h| h.to_le_bytes().to_vec())
    .collect();
    for b in [0x00u8, 0x55, 0xaa, 0xff, 0xf3, 0xf2, 0xf4] {
        out.push(vec![b; 4]);
    }
    out
}

/// Edit records (`u32` LE offset, xor byte) aimed at the first byte of every KV value and
/// every tensor-info field of the micro model the `pack_nano` target edits.
fn pack_entries() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let Ok(g) = gguf::parse(micro_gguf(), Mode::Strict) else {
        return out;
    };
    let mut at: BTreeSet<u64> = BTreeSet::new();
    for kv in &g.kvs {
        at.insert(kv.value_offset + 4);
    }
    for t in &g.tensors {
        at.insert(t.info_offset);
    }
    for o in at {
        for x in [0x01u8, 0x80] {
            let mut e = (o as u32).to_le_bytes().to_vec();
            e.push(x);
            out.push(e);
        }
    }
    out
}

/// The dictionary file of `target` (libFuzzer `-dict=` format), deterministic.
pub fn file(target: &str) -> String {
    let entries = match target {
        "gguf_parse" | "gguf_structured" => gguf_entries(),
        "ninfer_parse" | "ninfer_roundtrip" => ninfer_entries(),
        "dumps_parse" => dumps_entries(),
        "codec_fast_vs_ref" => codec_entries(),
        "pack_nano" => pack_entries(),
        _ => Vec::new(),
    };
    let mut seen = BTreeSet::new();
    let mut s = format!(
        "# libFuzzer dictionary for the {target} fuzz target, generated by\n# testkit/src/mutate/dict.rs from the spec tables; regenerate with\n# (cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --test fuzz fuzz_regressions::regenerate_seeds -- --ignored)\n"
    );
    for (i, e) in entries.iter().enumerate() {
        if seen.insert(e.clone()) {
            s.push_str(&format!("w{i}={}\n", entry(e)));
        }
    }
    s
}
